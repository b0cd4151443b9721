//! The codecs, one file each, behind one contract:
//!
//! - `compress(clevel, src, dst, dict)` writes at most `dst.len()` bytes and
//!   returns how many; `Ok(0)` means "does not fit or not worth it" (the
//!   chunk layer then stores the stream raw);
//! - `decompress(src, dst, dict)` must produce exactly `dst.len()` bytes,
//!   anything else is an error.
//!
//! A [`CodecCtx`] holds one worker's codec state (zstd contexts, libdeflate
//! (de)compressors, LZ4 scratch, BloscLZ hash table) so that nothing is
//! allocated per block once it is warm. Codecs know nothing of chunk headers.

pub(crate) mod blosclz;
pub(crate) mod lz4;
pub(crate) mod snappy;
#[cfg(feature = "zlib")]
pub(crate) mod zlib;
#[cfg(feature = "zstd")]
pub(crate) mod zstd;

use crate::error::{Error, Result, corrupt};
use crate::params::Codec;

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
    /// Prepare the dictionary stored in a chunk for its codec format.
    pub(crate) fn new(format: u8, raw: &'a [u8]) -> Result<DecDict<'a>> {
        match format {
            1 => Ok(DecDict::Lz4(raw)),
            #[cfg(feature = "zstd")]
            4 => Ok(DecDict::Zstd(zstd::DDict::new(raw)?)),
            _ => Err(Error::Unsupported(format!(
                "dictionary for codec format {format}"
            ))),
        }
    }
}

/// One worker's codec state.
#[derive(Default)]
pub(crate) struct CodecCtx {
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
    /// context, libdeflate's compressor. A worker thread of a parallel run
    /// may get no block of a chunk; warmed, its first block later allocates
    /// nothing here (zstd may still size its workspace inside that call).
    pub(crate) fn warm_compress(&mut self, codec: Codec, clevel: u8) -> Result<()> {
        match codec {
            Codec::BloscLz => self.blosclz.warm(),
            #[cfg(feature = "zlib")]
            Codec::Zlib => self.zlib.warm(Some(clevel))?,
            #[cfg(feature = "zstd")]
            Codec::Zstd => self.zstd.warm(true)?,
            _ => {}
        }
        let _ = clevel;
        Ok(())
    }

    /// As [`CodecCtx::warm_compress`], for [`CodecCtx::decompress`] of
    /// streams of codec `format` (zstd's and libdeflate's decompressors).
    pub(crate) fn warm_decompress(&mut self, format: u8) -> Result<()> {
        #[cfg(feature = "zlib")]
        if format == Codec::Zlib.format() {
            self.zlib.warm(None)?;
        }
        #[cfg(feature = "zstd")]
        if format == Codec::Zstd.format() {
            self.zstd.warm(false)?;
        }
        let _ = format;
        Ok(())
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
            Codec::BloscLz => self.blosclz.compress(clevel, src, dst),
            // C-Blosc2 and C-Blosc 1.x both run LZ4 at acceleration
            // `10 - clevel` (`get_accel`).
            Codec::Lz4 => {
                let accel = 10 - i32::from(clevel.clamp(1, 9));
                self.lz4.compress_accel(src, dst, lz4_dict(dict), accel)
            }
            Codec::Lz4Hc => lz4::compress_hc(clevel, src, dst, lz4_dict(dict)),
            #[cfg(feature = "zlib")]
            Codec::Zlib => self.zlib.compress(clevel, src, dst),
            #[cfg(feature = "zstd")]
            Codec::Zstd => self.zstd.compress(
                clevel,
                src,
                dst,
                match dict {
                    Some(EncDict::Zstd(d)) => Some(d),
                    _ => None,
                },
            ),
            #[allow(unreachable_patterns)]
            other => Err(Error::Unsupported(format!(
                "codec {other} is not compiled into this build"
            ))),
        }
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
    /// `10 - clevel`, as in C-Blosc2.
    pub(crate) fn compress_lz4_blosc1(
        &mut self,
        clevel: u8,
        src: &[u8],
        dst: &mut [u8],
    ) -> Result<usize> {
        let accel = 10 - i32::from(clevel.clamp(1, 9));
        self.lz4.compress_accel(src, dst, None, accel)
    }

    /// Compress one stream with zlib as C-Blosc 1.x does (classic zlib's
    /// `compress2`); without the `zlib` feature, unsupported.
    pub(crate) fn compress_zlib_blosc1(
        &mut self,
        clevel: u8,
        src: &[u8],
        dst: &mut [u8],
    ) -> Result<usize> {
        #[cfg(feature = "zlib")]
        return self.zlib.compress_classic(clevel, src, dst);
        #[cfg(not(feature = "zlib"))]
        {
            let _ = (clevel, src, dst);
            Err(Error::Unsupported(
                "codec zlib is not compiled into this build".into(),
            ))
        }
    }

    /// Decompress one stream of codec `format` (`flags >> 5`, or the codec id
    /// for format 6) into exactly `dst.len()` bytes.
    pub(crate) fn decompress(
        &mut self,
        format: u8,
        udcodec: u8,
        src: &[u8],
        dst: &mut [u8],
        dict: Option<&DecDict>,
    ) -> Result<()> {
        let format = if format == crate::chunk::header::FORMAT_UDCODEC {
            match Codec::from_id(udcodec) {
                Some(c) => c.format(),
                None => {
                    return Err(Error::Unsupported(format!(
                        "codec id {udcodec} (plugin or user codec) is not registered"
                    )));
                }
            }
        } else {
            format
        };
        let n = match format {
            0 => blosclz::decompress(src, dst)?,
            1 => lz4::decompress(
                src,
                dst,
                match dict {
                    Some(DecDict::Lz4(d)) => Some(d),
                    _ => None,
                },
            )?,
            #[cfg(feature = "zlib")]
            3 => self.zlib.decompress(src, dst)?,
            #[cfg(feature = "zstd")]
            4 => self.zstd.decompress(
                src,
                dst,
                match dict {
                    Some(DecDict::Zstd(d)) => Some(d),
                    _ => None,
                },
            )?,
            2 => snappy::decompress(src, dst)?,
            f => {
                return Err(Error::Unsupported(format!(
                    "codec format {f} is not compiled into this build or unknown"
                )));
            }
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
/// each codec's largest expansion per input byte, plus a little. A block
/// whose declared size is above this is corrupt, and is rejected before any
/// buffer is sized by it.
///
/// - BloscLZ and LZ4 (and LZ4HC): a match length grows by 255 per extra
///   byte.
/// - Snappy: a 3-byte copy writes at most 64 bytes.
/// - zlib (deflate): at most 258 bytes per 2 bits, 1032:1.
/// - ZSTD: a block writes at most 128 KiB and takes at least 4 bytes (its
///   3-byte header and one byte).
///
/// # Errors
/// [`Error::Unsupported`] for a codec this build cannot decode.
pub(crate) fn max_decoded_len(format: u8, udcodec: u8, csize: usize) -> Result<usize> {
    let format = if format == crate::chunk::header::FORMAT_UDCODEC {
        match Codec::from_id(udcodec) {
            Some(c) => c.format(),
            None => {
                return Err(Error::Unsupported(format!(
                    "codec id {udcodec} (plugin or user codec) is not registered"
                )));
            }
        }
    } else {
        format
    };
    let (per_byte, extra) = match format {
        0 | 1 => (256, 64),
        2 => (32, 64),
        3 if cfg!(feature = "zlib") => (1040, 1024),
        4 if cfg!(feature = "zstd") => (32 * 1024, 128 * 1024),
        f => {
            return Err(Error::Unsupported(format!(
                "codec format {f} is not compiled into this build or unknown"
            )));
        }
    };
    Ok(csize.saturating_mul(per_byte).saturating_add(extra))
}

fn lz4_dict(dict: Option<&EncDict>) -> Option<&[u8]> {
    match dict {
        Some(EncDict::Lz4(d)) => Some(d),
        _ => None,
    }
}
