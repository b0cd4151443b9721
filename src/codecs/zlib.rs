//! ZLIB (RFC 1950 streams). Compression runs zlib-ng 2.3.3 (C-Blosc2
//! 3.3.5's own compressor, called as its `zng_compress2`, so the chunks are
//! C's bytes) when libz-ng-sys built it with clang
//! ([`oxiblosc_zng::DEFLATE_BUILT_BY_CLANG`]), else zlib-rs (pure Rust,
//! zlib-ng's algorithms: the same bytes on most data). Both take the Blosc
//! clevel as their level. A stream that decodes to at least
//! [`ZLIB_NG_MIN_RATIO`] times its size is inflated by zlib-ng (our
//! `oxiblosc-zng` wrapper), any other by C libdeflate.
//!
//! Why these back ends (perf/README.md, "Full grid", "zlib", "zlib-ng
//! compression built by clang 19" and session 25): libdeflate searches for
//! matches much harder than zlib-ng, so on very redundant data (shuffled
//! ramps, linspaces) it compressed 1.5-2.6x slower than C-Blosc2, and its
//! streams, even at C's ratio, decode up to 3-4x slower with any inflater
//! (zlib-ng's own included: a 32 KiB sine chunk at level 9, 48.8 against
//! 16.4 us). It compressed clevels 6-9 until session 25; zlib-ng there
//! gives the perf grid's compress rows at 0.93-1.09 of C and its decompress
//! rows at 1.11-1.13 (libdeflate's: 0.61-0.68). zlib-ng from clang 19
//! compresses 1.05-1.22x faster than zlib-rs (`perf/run capi --codec
//! zlib`, every row); from gcc 12 it runs at about half C's speed (its
//! `deflate_medium` stalls there), hence zlib-rs in such builds (at clevel
//! 6 0.81-0.97 of C, at 9 0.93-1.11).
//!
//! Why two inflaters (perf/README.md, "zlib-ng decodes the compressible
//! streams, session 14"): libdeflate decoded the shuffled, very
//! compressible 32 KiB chunks of `perf/diag/sweep.c` at 0.37-0.55 of
//! C-Blosc2's speed (their long matches at short distances), but streams of
//! noisy data (ratio 1.5) 1.1-1.3x faster than C. zlib-ng is C's own code;
//! reset rather than set up for each stream, it decodes the sweep's
//! compressible rows at C's speed.

use libdeflater::Decompressor;
use oxiblosc_zng::{DEFLATE_BUILT_BY_CLANG, Deflater, Inflater, ZngError};
use zlib_rs::{Deflate, DeflateFlush, Status};

use super::{Backend, DecDict, EncDict, Warm};
use crate::error::{Error, Result};

/// The compressor: the one decision [`Zlib::prepare`] and
/// [`Zlib::compress_stream`] share.
#[derive(Clone, Copy)]
enum Encoder {
    /// zlib-ng, C-Blosc2's own compressor (clang builds of it).
    ZlibNg,
    /// zlib-rs, zlib-ng's algorithms in Rust (gcc builds of zlib-ng).
    ZlibRs,
}

const ENCODER: Encoder = if DEFLATE_BUILT_BY_CLANG {
    Encoder::ZlibNg
} else {
    Encoder::ZlibRs
};

/// Streams that decode to at least this many times their own size go to
/// zlib-ng, the others to libdeflate. On the sweep's 135 ZLIB rows, 3 kept
/// every row that either inflater decodes faster (a limit of 6 sent
/// shuffled 4-byte ramps, ratio 4-5, back to libdeflate at 0.64-0.67).
const ZLIB_NG_MIN_RATIO: usize = 3;

/// Whether a `src_len`-byte stream that should decode to `dst_len` bytes
/// goes to zlib-ng (else libdeflate).
fn inflate_with_zlib_ng(src_len: usize, dst_len: usize) -> bool {
    dst_len / ZLIB_NG_MIN_RATIO >= src_len
}

/// zlib-ng's failures: a stream it refuses is corrupt input, anything else
/// (no memory for its state) the codec's own error.
fn zng_error(e: ZngError) -> Error {
    match e {
        ZngError::Corrupt | ZngError::Truncated | ZngError::OutputFull => {
            Error::Corrupt(format!("zlib stream: {e}"))
        }
        ZngError::NoMemory | ZngError::BadLevel | ZngError::TooLarge => codec_error(e),
    }
}

/// A failure of zlib-ng's own (no memory, a level or length it refuses):
/// never the input's fault when compressing.
fn codec_error(e: ZngError) -> Error {
    Error::Codec {
        codec: "zlib",
        message: format!("zlib-ng: {e}"),
    }
}

#[derive(Default)]
pub(crate) struct Zlib {
    /// zlib-rs's stream in gcc builds of zlib-ng, and its level, reset for
    /// every block.
    quick: Option<(u8, Deflate)>,
    /// zlib-ng's deflater in clang builds of zlib-ng (then it replaces
    /// `quick`).
    ng: Option<Deflater>,
    inflater: Option<Inflater>,
    decompressor: Option<Decompressor>,
    /// Classic zlib's stream (C libz through flate2) for Blosc1 chunks and
    /// its level, reset for every block.
    #[cfg(feature = "zlib-classic")]
    classic: Option<(u8, flate2::Compress)>,
}

impl Zlib {
    /// Make the compressor for `clevel` (or the decompressor, for `None`)
    /// now.
    fn prepare(&mut self, clevel: Option<u8>) -> Result<()> {
        match clevel {
            Some(l) => match ENCODER {
                Encoder::ZlibNg => drop(self.ng(l)?),
                Encoder::ZlibRs => drop(self.quick(l)),
            },
            None => {
                self.inflater()?;
                self.decompressor.get_or_insert_with(Decompressor::new);
            }
        }
        Ok(())
    }

    fn ng(&mut self, clevel: u8) -> Result<&mut Deflater> {
        let d = match self.ng.take() {
            Some(d) if d.level() == clevel => d,
            _ => Deflater::new(clevel).map_err(codec_error)?,
        };
        Ok(self.ng.insert(d))
    }

    fn quick(&mut self, clevel: u8) -> &mut Deflate {
        let d = match self.quick.take() {
            Some((l, d)) if l == clevel => d,
            _ => Deflate::new(i32::from(clevel), true, 15),
        };
        &mut self.quick.insert((clevel, d)).1
    }

    /// Compress one stream at `clevel` (zlib-ng from a clang build, else
    /// zlib-rs); `Ok(0)` when it does not fit in `dst`.
    pub(crate) fn compress_stream(
        &mut self,
        clevel: u8,
        src: &[u8],
        dst: &mut [u8],
    ) -> Result<usize> {
        match ENCODER {
            Encoder::ZlibNg => self.ng(clevel)?.compress(src, dst).map_err(codec_error),
            Encoder::ZlibRs => {
                let d = self.quick(clevel);
                d.reset();
                match d.compress(src, dst, DeflateFlush::Finish) {
                    // The whole stream, with its Adler-32 trailer, fitted.
                    Ok(Status::StreamEnd) => Ok(d.total_out() as usize),
                    // `dst` filled up first: does not fit.
                    Ok(Status::Ok | Status::BufError) => Ok(0),
                    Err(e) => Err(Error::Codec {
                        codec: "zlib",
                        message: format!("zlib-rs: {}", e.as_str()),
                    }),
                }
            }
        }
    }

    /// Compress as C-Blosc 1.x does, with classic zlib's `compress2` at
    /// `clevel` (window 15, memory level 8, default strategy): C-Blosc
    /// 1.21's bundled zlib 1.3.1 and the system's zlib write the same
    /// streams, so Blosc1 chunks get C-Blosc 1.x's bytes. `Ok(0)` when the
    /// stream does not fit in `dst`.
    #[cfg(feature = "zlib-classic")]
    pub(crate) fn compress_classic(
        &mut self,
        clevel: u8,
        src: &[u8],
        dst: &mut [u8],
    ) -> Result<usize> {
        let c = match self.classic.take() {
            Some((l, mut c)) if l == clevel => {
                c.reset();
                c
            }
            _ => flate2::Compress::new(flate2::Compression::new(u32::from(clevel)), true),
        };
        let c = &mut self.classic.insert((clevel, c)).1;
        match c.compress(src, dst, flate2::FlushCompress::Finish) {
            Ok(flate2::Status::StreamEnd) => Ok(c.total_out() as usize),
            Ok(_) => Ok(0),
            Err(e) => Err(Error::Codec {
                codec: "zlib",
                message: format!("zlib: {e}"),
            }),
        }
    }

    fn inflater(&mut self) -> Result<&mut Inflater> {
        if self.inflater.is_none() {
            self.inflater = Some(Inflater::new().map_err(zng_error)?);
        }
        Ok(self.inflater.as_mut().expect("set above"))
    }

    /// Inflate one stream (zlib-ng or libdeflate, by its ratio); returns
    /// the bytes written.
    pub(crate) fn decompress_stream(&mut self, src: &[u8], dst: &mut [u8]) -> Result<usize> {
        if !inflate_with_zlib_ng(src.len(), dst.len()) {
            let d = self.decompressor.get_or_insert_with(Decompressor::new);
            return d
                .zlib_decompress(src, dst)
                .map_err(|e| Error::Corrupt(format!("zlib stream: {e}")));
        }
        self.inflater()?.decompress(src, dst).map_err(zng_error)
    }
}

impl Backend for Zlib {
    /// Deflate writes at most 258 bytes per 2 bits, 1032:1.
    const EXPANSION: (usize, usize) = (1040, 1024);

    fn warm(&mut self, w: Warm) -> Result<()> {
        match w {
            Warm::Compress(clevel) => self.prepare(Some(clevel)),
            Warm::Decompress => self.prepare(None),
        }
    }

    fn compress(
        &mut self,
        clevel: u8,
        src: &[u8],
        dst: &mut [u8],
        _dict: Option<&EncDict>,
    ) -> Result<usize> {
        self.compress_stream(clevel, src, dst)
    }

    fn decompress(&mut self, src: &[u8], dst: &mut [u8], _dict: Option<&DecDict>) -> Result<usize> {
        self.decompress_stream(src, dst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(n: usize, noisy: bool) -> Vec<u8> {
        let mut s = 0x9E37_79B9_7F4A_7C15u64;
        (0..n)
            .map(|i| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                if noisy { s as u8 } else { (i / 100) as u8 }
            })
            .collect()
    }

    /// Each inflater refuses what it cannot decode: a truncated stream, a
    /// flipped check, too small an output; neither panics on bit flips.
    #[test]
    fn both_inflaters_report_bad_streams() {
        let mut z = Zlib::default();
        for noisy in [false, true] {
            let src = data(50_000, noisy);
            let mut c = vec![0; 60_000];
            let n = z.compress_stream(5, &src, &mut c).unwrap();
            let c = &c[..n];
            // The two data go to different inflaters.
            assert_eq!(inflate_with_zlib_ng(n, src.len()), !noisy);
            let mut out = vec![0; src.len()];
            assert_eq!(z.decompress_stream(c, &mut out).unwrap(), src.len());
            assert!(out == src);
            for cut in [0, 1, n / 2, n - 1] {
                assert!(
                    z.decompress_stream(&c[..cut], &mut out).is_err(),
                    "cut {cut}"
                );
            }
            let mut bad = c.to_vec();
            bad[n - 1] ^= 1;
            assert!(z.decompress_stream(&bad, &mut out).is_err());
            assert!(z.decompress_stream(c, &mut out[..src.len() - 1]).is_err());
            for i in (0..n).step_by(7) {
                let mut f = c.to_vec();
                f[i] ^= 0x24;
                let _ = z.decompress_stream(&f, &mut out);
            }
            // Still decodes after the errors.
            assert_eq!(z.decompress_stream(c, &mut out).unwrap(), src.len());
            assert!(out == src);
        }
    }

    /// Every clevel, on both back ends: the stream decodes to the input, a
    /// destination one byte short of the stream gives "does not fit" (0),
    /// and switching levels back and forth on one context changes nothing.
    #[test]
    fn both_back_ends_round_trip_and_report_overflow() {
        let mut z = Zlib::default();
        for pass in 0..2 {
            for clevel in 1..=9u8 {
                for noisy in [false, true] {
                    let src = data(50_000, noisy);
                    let mut dst = vec![0; 60_000];
                    let n = z.compress_stream(clevel, &src, &mut dst).unwrap();
                    assert!(n > 0, "clevel {clevel} pass {pass}");
                    let mut back = vec![0; src.len()];
                    z.decompress_stream(&dst[..n], &mut back).unwrap();
                    assert!(back == src, "clevel {clevel} noisy {noisy} pass {pass}");
                    let mut short = vec![0; n - 1];
                    assert_eq!(z.compress_stream(clevel, &src, &mut short).unwrap(), 0);
                    // The same stream again after the overflow.
                    let mut again = vec![0; 60_000];
                    let m = z.compress_stream(clevel, &src, &mut again).unwrap();
                    assert_eq!(&again[..m], &dst[..n], "clevel {clevel} not deterministic");
                    // Classic zlib (Blosc1 chunks) likewise.
                    #[cfg(feature = "zlib-classic")]
                    {
                        let n = z.compress_classic(clevel, &src, &mut dst).unwrap();
                        assert!(n > 0);
                        z.decompress_stream(&dst[..n], &mut back).unwrap();
                        assert!(back == src, "classic clevel {clevel}");
                        let mut short = vec![0; n - 1];
                        assert_eq!(z.compress_classic(clevel, &src, &mut short).unwrap(), 0);
                        let m = z.compress_classic(clevel, &src, &mut again).unwrap();
                        assert_eq!(&again[..m], &dst[..n], "classic clevel {clevel}");
                    }
                }
            }
        }
    }
}
