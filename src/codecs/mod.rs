//! The codecs, one file each, behind one contract, the [`Backend`] trait:
//!
//! - `warm` makes now the state the first call would make;
//! - `compress(clevel, src, dst, dict)` writes at most `dst.len()` bytes and
//!   returns how many; `Ok(0)` means "does not fit or not worth it" (the
//!   chunk layer then stores the stream raw);
//! - `decompress(src, dst, dict)` returns the bytes written; the dispatcher
//!   turns anything but exactly `dst.len()` into an error;
//! - `EXPANSION` bounds what a stream can decode to.
//!
//! A [`CodecCtx`] holds one worker's codec state (zstd contexts, zlib
//! compressors, zlib-ng's inflater, LZ4 scratch, BloscLZ hash table) so that nothing is
//! allocated per block once it is warm, and dispatches to the back ends by
//! [`Codec`] (compression) or by stream format number (decompression: LZ4
//! and LZ4HC share format 1, Snappy has no [`Codec`]). Codecs know nothing
//! of chunk headers.

pub(crate) mod blosclz;
pub(crate) mod lz4;
pub(crate) mod snappy;
#[cfg(feature = "zlib")]
pub(crate) mod zlib;
#[cfg(feature = "zstd")]
pub(crate) mod zstd;

use crate::error::{Error, Result, corrupt};
use crate::params::{Codec, FORMAT_UDCODEC};

/// A dictionary ready for compression.
pub(crate) enum EncDict {
    /// LZ4 / LZ4HC: raw prefix bytes.
    Lz4(Vec<u8>),
    /// ZSTD: a digested dictionary.
    #[cfg(feature = "zstd")]
    Zstd(zstd::CDict),
}

/// A dictionary ready for decompression.
pub(crate) enum DecDict<'a> {
    /// LZ4: raw prefix bytes.
    Lz4(&'a [u8]),
    /// ZSTD: a digested dictionary.
    #[cfg(feature = "zstd")]
    Zstd(zstd::DDict),
}

impl<'a> DecDict<'a> {
    /// Prepare the dictionary stored in a chunk for its codec format:
    /// `None` for a codec that decodes without one. C-Blosc2's decoders use
    /// the dictionary only for ZSTD and LZ4 / LZ4HC and pass it over for the
    /// others, and C-Blosc2 3.3 does store one in VL-block chunks of other
    /// codecs (e.g. ZLIB with `use_dict`): those chunks must still decode.
    pub(crate) fn new(format: u8, raw: &'a [u8]) -> Result<Option<DecDict<'a>>> {
        match format {
            1 => Ok(Some(DecDict::Lz4(raw))),
            #[cfg(feature = "zstd")]
            4 => Ok(Some(DecDict::Zstd(zstd::DDict::new(raw)?))),
            #[cfg(not(feature = "zstd"))]
            4 => Err(Error::Unsupported(
                "dictionary of a ZSTD chunk (built without the zstd feature)".into(),
            )),
            _ => Ok(None),
        }
    }
}

/// What a [`Backend::warm`] call prepares for.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Warm {
    /// Compression at this clevel (only zlib's back ends depend on it).
    Compress(#[cfg_attr(not(feature = "zlib"), allow(dead_code))] u8),
    /// Decompression.
    Decompress,
}

/// The contract every codec file implements (see the module docs).
pub(crate) trait Backend {
    /// A stream of `csize` bytes decodes to at most
    /// `csize * EXPANSION.0 + EXPANSION.1` bytes.
    const EXPANSION: (usize, usize);

    /// Make now the state the first compression (at the given clevel) or
    /// decompression would make, so that it allocates nothing later.
    fn warm(&mut self, _for: Warm) -> Result<()> {
        Ok(())
    }

    /// Compress `src` into at most `dst.len()` bytes; `Ok(0)` when it does
    /// not fit.
    fn compress(
        &mut self,
        clevel: u8,
        src: &[u8],
        dst: &mut [u8],
        dict: Option<&EncDict>,
    ) -> Result<usize>;

    /// Decode `src` into `dst`; returns the bytes written.
    fn decompress(&mut self, src: &[u8], dst: &mut [u8], dict: Option<&DecDict>) -> Result<usize>;
}

/// The error for a codec this build does not have.
fn not_compiled(codec: Codec) -> Error {
    Error::Unsupported(format!("codec {codec} is not compiled into this build"))
}

/// The stream format number of a stream of `format` (`flags >> 5`), with
/// [`FORMAT_UDCODEC`] resolved through the codec id `udcodec`.
fn resolve_format(format: u8, udcodec: u8) -> Result<u8> {
    if format != FORMAT_UDCODEC {
        return Ok(format);
    }
    match Codec::from_id(udcodec) {
        Some(c) => Ok(c.format()),
        None => Err(Error::Unsupported(format!(
            "codec id {udcodec} (plugin or user codec) is not registered"
        ))),
    }
}

fn unknown_format(format: u8) -> Error {
    Error::Unsupported(format!(
        "codec format {format} is not compiled into this build or unknown"
    ))
}

/// What a constant stream's compressed form depends on: the codec call
/// (codec, level, BloscLZ's split hint), the length and the byte repeated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ConstKey {
    pub codec: Codec,
    pub clevel: u8,
    pub split: bool,
    pub len: usize,
    pub value: u8,
}

/// The last few entries of a memo of deterministic codec calls, oldest
/// dropped first. The codec contexts keep two: the compressed forms of
/// constant streams (key [`ConstKey`]; `None`: the codec gave no gain and
/// the stream was stored raw), and streams seen decoding to one repeated
/// byte (codec format, user codec id, output length, the stream; the byte).
/// Blosc1 chunks have no run streams, so a constant byte plane is a codec
/// stream in every block, usually the same one: a repeat is a copy or a fill.
pub(crate) struct Recent<E> {
    entries: Vec<E>,
}

impl<E> Default for Recent<E> {
    fn default() -> Self {
        Recent {
            entries: Vec::new(),
        }
    }
}

impl<E> Recent<E> {
    /// At most this many entries are kept.
    const CAP: usize = 8;

    /// The first entry `matches` accepts.
    pub(crate) fn find(&self, matches: impl Fn(&E) -> bool) -> Option<&E> {
        self.entries.iter().find(|e| matches(e))
    }

    /// Add `e`, dropping the oldest entry when full.
    pub(crate) fn push(&mut self, e: E) {
        if self.entries.len() == Self::CAP {
            self.entries.remove(0);
        }
        self.entries.push(e);
    }
}

/// A stream that decoded to one repeated byte (see [`Recent`]).
pub(crate) struct DecodedConst {
    pub format: u8,
    pub udcodec: u8,
    pub len: usize,
    pub stream: Vec<u8>,
    pub value: u8,
}

/// One worker's codec state: a thin dispatcher over the [`Backend`]s.
#[derive(Default)]
pub(crate) struct CodecCtx {
    /// Compressed forms of constant streams already made (Blosc1 chunks).
    pub(crate) consts: Recent<(ConstKey, Option<Vec<u8>>)>,
    /// Streams already decoded to a constant (Blosc1 chunks' byte planes).
    pub(crate) decoded_consts: Recent<DecodedConst>,
    lz4: lz4::Lz4,
    blosclz: blosclz::BloscLz,
    #[cfg(feature = "zlib")]
    zlib: zlib::Zlib,
    #[cfg(feature = "zstd")]
    zstd: zstd::Zstd,
}

impl CodecCtx {
    /// Make now the context state that the first [`CodecCtx::compress`]
    /// with `codec` at `clevel` would make: the BloscLZ hash table, the zstd
    /// context, the zlib deflater. A worker thread of a parallel run
    /// may get no block of a chunk; warmed, its first block later allocates
    /// nothing here (zstd may still size its workspace inside that call).
    pub(crate) fn warm_compress(&mut self, codec: Codec, clevel: u8) -> Result<()> {
        let w = Warm::Compress(clevel);
        match codec {
            Codec::BloscLz => self.blosclz.warm(w),
            Codec::Lz4 => self.lz4.warm(w),
            Codec::Lz4Hc => lz4::Lz4Hc.warm(w),
            #[cfg(feature = "zlib")]
            Codec::Zlib => self.zlib.warm(w),
            #[cfg(feature = "zstd")]
            Codec::Zstd => self.zstd.warm(w),
            #[allow(unreachable_patterns)]
            _ => Ok(()),
        }
    }

    /// As [`CodecCtx::warm_compress`], for [`CodecCtx::decompress`] of
    /// streams of codec `format` (zstd's decompressor, zlib-ng's inflater).
    pub(crate) fn warm_decompress(&mut self, format: u8) -> Result<()> {
        let w = Warm::Decompress;
        match format {
            0 => self.blosclz.warm(w),
            1 => self.lz4.warm(w),
            2 => snappy::Snappy.warm(w),
            #[cfg(feature = "zlib")]
            3 => self.zlib.warm(w),
            #[cfg(feature = "zstd")]
            4 => self.zstd.warm(w),
            _ => Ok(()),
        }
    }

    /// Compress one stream; `Ok(0)` when it does not fit in `dst`.
    pub(crate) fn compress(
        &mut self,
        codec: Codec,
        clevel: u8,
        src: &[u8],
        dst: &mut [u8],
        dict: Option<&EncDict>,
    ) -> Result<usize> {
        match codec {
            Codec::BloscLz => self.blosclz.compress(clevel, src, dst, dict),
            Codec::Lz4 => self.lz4.compress(clevel, src, dst, dict),
            Codec::Lz4Hc => lz4::Lz4Hc.compress(clevel, src, dst, dict),
            #[cfg(feature = "zlib")]
            Codec::Zlib => self.zlib.compress(clevel, src, dst, dict),
            #[cfg(feature = "zstd")]
            Codec::Zstd => self.zstd.compress(clevel, src, dst, dict),
            Codec::User(id) => {
                self.compress_user(&crate::plugins::CodecCall::new(id, clevel), src, dst)
            }
            #[allow(unreachable_patterns)]
            other => Err(not_compiled(other)),
        }
    }

    /// Compress one stream with the user codec `call.id`; `Ok(0)` when it
    /// does not fit in `dst`.
    pub(crate) fn compress_user(
        &mut self,
        call: &crate::plugins::CodecCall,
        src: &[u8],
        dst: &mut [u8],
    ) -> Result<usize> {
        let id = call.id;
        let c = crate::plugins::user_codec(id)
            .ok_or_else(|| Error::Unsupported(format!("user codec {id} is not registered")))?;
        let n = c.compress(src, dst, call)?;
        // More than dst, or no gain: "does not fit" (stored raw).
        Ok(if n > dst.len() { 0 } else { n })
    }

    /// Compress one stream with BloscLZ as C-Blosc 1.21 does (its BloscLZ
    /// 2.5.1 encoder, which is told whether the block is split); `Ok(0)`
    /// when it does not fit in `dst`.
    pub(crate) fn compress_blosclz_blosc1(
        &mut self,
        clevel: u8,
        src: &[u8],
        dst: &mut [u8],
        split: bool,
    ) -> Result<usize> {
        self.blosclz.compress_blosc1(clevel, src, dst, split)
    }

    /// Compress one stream with LZ4 as C-Blosc 1.x does: acceleration
    /// `10 - clevel`, as in C-Blosc2 (and without a dictionary).
    pub(crate) fn compress_lz4_blosc1(
        &mut self,
        clevel: u8,
        src: &[u8],
        dst: &mut [u8],
    ) -> Result<usize> {
        self.lz4.compress(clevel, src, dst, None)
    }

    /// Compress one stream of a Blosc1 chunk with zlib: with the
    /// `zlib-classic` feature as C-Blosc 1.x does (classic zlib's
    /// `compress2`, its bytes), else with the default back ends (about 4x
    /// faster, other bytes); without the `zlib` feature, unsupported.
    pub(crate) fn compress_zlib_blosc1(
        &mut self,
        clevel: u8,
        src: &[u8],
        dst: &mut [u8],
    ) -> Result<usize> {
        #[cfg(feature = "zlib-classic")]
        return self.zlib.compress_classic(clevel, src, dst);
        #[cfg(not(feature = "zlib-classic"))]
        self.compress(Codec::Zlib, clevel, src, dst, None)
    }

    /// Decompress one stream of codec `format` (`flags >> 5`, or the codec id
    /// for format 6) into exactly `dst.len()` bytes.
    /// A user codec (format 6) is called with `user`'s meta, type size and
    /// context (`CodecCall::new(udcodec, 0)` when `None`).
    pub(crate) fn decompress(
        &mut self,
        format: u8,
        udcodec: u8,
        src: &[u8],
        dst: &mut [u8],
        dict: Option<&DecDict>,
        user: Option<&crate::plugins::CodecCall>,
    ) -> Result<()> {
        if format == FORMAT_UDCODEC
            && let Some(c) = crate::plugins::user_codec(udcodec)
        {
            let n = match user {
                Some(call) => c.decompress(src, dst, call)?,
                None => c.decompress(src, dst, &crate::plugins::CodecCall::new(udcodec, 0))?,
            };
            if n != dst.len() {
                return Err(Error::Corrupt(format!(
                    "user codec {udcodec} decoded {n} of {} bytes",
                    dst.len()
                )));
            }
            return Ok(());
        }
        let n = match resolve_format(format, udcodec)? {
            0 => self.blosclz.decompress(src, dst, dict)?,
            1 => self.lz4.decompress(src, dst, dict)?,
            #[cfg(feature = "zlib")]
            3 => self.zlib.decompress(src, dst, dict)?,
            #[cfg(feature = "zstd")]
            4 => self.zstd.decompress(src, dst, dict)?,
            2 => snappy::Snappy.decompress(src, dst, dict)?,
            f => return Err(unknown_format(f)),
        };
        if n != dst.len() {
            return Err(corrupt(format!(
                "stream decoded to {n} bytes, {} expected",
                dst.len()
            )));
        }
        Ok(())
    }
}

/// The most bytes a stream of `csize` compressed bytes of codec `format`
/// (`flags >> 5`, or the codec id `udcodec` for format 6) can decode to:
/// each codec's largest expansion per input byte, plus a little
/// ([`Backend::EXPANSION`]). A block whose declared size is above this is
/// corrupt, and is rejected before any buffer is sized by it.
///
/// # Errors
/// [`Error::Unsupported`] for a codec this build cannot decode.
pub(crate) fn max_decoded_len(format: u8, udcodec: u8, csize: usize) -> Result<usize> {
    if format == FORMAT_UDCODEC && crate::plugins::user_codec(udcodec).is_some() {
        // A user codec's expansion is unknown (an arange codec stores any
        // length in 8 bytes): its streams may claim any size.
        return Ok(usize::MAX);
    }
    let (per_byte, extra) = match resolve_format(format, udcodec)? {
        0 => blosclz::BloscLz::EXPANSION,
        1 => lz4::Lz4::EXPANSION,
        2 => snappy::Snappy::EXPANSION,
        #[cfg(feature = "zlib")]
        3 => zlib::Zlib::EXPANSION,
        #[cfg(feature = "zstd")]
        4 => zstd::Zstd::EXPANSION,
        f => return Err(unknown_format(f)),
    };
    Ok(csize.saturating_mul(per_byte).saturating_add(extra))
}

/// The LZ4 dictionary in `dict`, if it is one.
pub(crate) fn lz4_dict(dict: Option<&EncDict>) -> Option<&[u8]> {
    match dict {
        Some(EncDict::Lz4(d)) => Some(d),
        _ => None,
    }
}

/// The LZ4 dictionary in `dict`, if it is one.
pub(crate) fn lz4_ddict<'a>(dict: Option<&'a DecDict<'_>>) -> Option<&'a [u8]> {
    match dict {
        Some(DecDict::Lz4(d)) => Some(d),
        _ => None,
    }
}
