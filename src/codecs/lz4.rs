//! LZ4 and LZ4HC: raw LZ4 blocks (the same format for both).
//!
//! With the `lz4hc` feature (on by default) both go through C liblz4 (the
//! `lzzzz` crate, liblz4 1.10.0): LZ4 compresses with `LZ4_compress_fast`
//! at acceleration `10 - clevel`, as C-Blosc2 and C-Blosc 1.x do, so its
//! streams are their bytes; LZ4HC with `LZ4_compress_HC` at the clevel; and
//! both decode with `LZ4_decompress_safe[_usingDict]`, the bounds-checked
//! decoder C-Blosc2 uses. liblz4's compression state lives in `lzzzz`'s
//! thread-local slot, allocated once per thread.
//!
//! Without the feature (a pure-Rust build) LZ4 is lz4_flex with its checked
//! decoder: same format, not the same bytes (no acceleration knob), and its
//! decoder is several times slower than liblz4's. LZ4HC then cannot be
//! written.

use super::{Backend, DecDict, EncDict, lz4_ddict, lz4_dict};
use crate::error::{Error, Result};

/// LZ4 state. liblz4 keeps its own (thread-local) state; lz4_flex needs a
/// scratch buffer because it refuses to start unless the output can hold
/// its worst case, so it compresses there and we copy.
#[derive(Default)]
pub(crate) struct Lz4 {
    #[cfg(not(feature = "lz4hc"))]
    scratch: Vec<u8>,
}

#[cfg(feature = "lz4hc")]
impl Lz4 {
    /// `LZ4_compress_fast` at `acceleration` (C-Blosc 1.x uses
    /// `10 - clevel`; C-Blosc2 always 1).
    pub(crate) fn compress_accel(
        &mut self,
        src: &[u8],
        dst: &mut [u8],
        dict: Option<&[u8]>,
        acceleration: i32,
    ) -> Result<usize> {
        if src.is_empty() || dst.is_empty() {
            return Ok(0);
        }
        let r = match dict {
            Some(d) => lzzzz::lz4::Compressor::with_dict(d)
                .and_then(|mut c| c.next(src, dst, acceleration)),
            None => lzzzz::lz4::compress(src, dst, acceleration),
        };
        // liblz4 reports "does not fit" as a failure: that is our 0.
        Ok(r.unwrap_or(0))
    }
}

#[cfg(not(feature = "lz4hc"))]
impl Lz4 {
    /// lz4_flex has no acceleration knob: the same as [`Lz4::compress`].
    pub(crate) fn compress_accel(
        &mut self,
        src: &[u8],
        dst: &mut [u8],
        dict: Option<&[u8]>,
        _acceleration: i32,
    ) -> Result<usize> {
        self.compress_flex(src, dst, dict)
    }

    fn compress_flex(&mut self, src: &[u8], dst: &mut [u8], dict: Option<&[u8]>) -> Result<usize> {
        let worst = lz4_flex::block::get_maximum_output_size(src.len());
        if self.scratch.len() < worst {
            self.scratch.resize(worst, 0);
        }
        let r = match dict {
            Some(d) => lz4_flex::block::compress_into_with_dict(src, &mut self.scratch, d),
            None => lz4_flex::block::compress_into(src, &mut self.scratch),
        };
        let n = r.map_err(|e| Error::Codec {
            codec: "lz4",
            message: e.to_string(),
        })?;
        if n > dst.len() {
            return Ok(0);
        }
        dst[..n].copy_from_slice(&self.scratch[..n]);
        Ok(n)
    }
}

/// LZ4HC at level `clevel` through C liblz4.
#[cfg(feature = "lz4hc")]
pub(crate) fn compress_hc(
    clevel: u8,
    src: &[u8],
    dst: &mut [u8],
    dict: Option<&[u8]>,
) -> Result<usize> {
    if src.is_empty() || dst.is_empty() {
        return Ok(0);
    }
    let level = i32::from(clevel);
    let r = match dict {
        Some(d) => {
            lzzzz::lz4_hc::Compressor::with_dict(d, level).and_then(|mut c| c.next(src, dst))
        }
        None => lzzzz::lz4_hc::compress(src, dst, level),
    };
    // liblz4 reports "does not fit" as a failure: that is our 0.
    Ok(r.unwrap_or(0))
}

/// Without liblz4 there is no LZ4HC compressor.
#[cfg(not(feature = "lz4hc"))]
pub(crate) fn compress_hc(_: u8, _: &[u8], _: &mut [u8], _: Option<&[u8]>) -> Result<usize> {
    Err(Error::Unsupported(
        "lz4hc compression needs the `lz4hc` cargo feature".into(),
    ))
}

/// Decode one LZ4 block into `dst`; returns the bytes written (liblz4's
/// safe decoder never writes past `dst` nor reads past `src`).
#[cfg(feature = "lz4hc")]
pub(crate) fn decompress(src: &[u8], dst: &mut [u8], dict: Option<&[u8]>) -> Result<usize> {
    let r = match dict {
        Some(d) => lzzzz::lz4::decompress_with_dict(src, dst, d),
        None => lzzzz::lz4::decompress(src, dst),
    };
    r.map_err(|e| Error::Corrupt(format!("lz4 stream: {e}")))
}

/// Decode one LZ4 block into `dst` with lz4_flex's checked decoder.
#[cfg(not(feature = "lz4hc"))]
pub(crate) fn decompress(src: &[u8], dst: &mut [u8], dict: Option<&[u8]>) -> Result<usize> {
    let r = match dict {
        Some(d) => lz4_flex::block::decompress_into_with_dict(src, dst, d),
        None => lz4_flex::block::decompress_into(src, dst),
    };
    r.map_err(|e| Error::Corrupt(format!("lz4 stream: {e}")))
}
impl Backend for Lz4 {
    /// A match length grows by 255 per extra byte.
    const EXPANSION: (usize, usize) = (256, 64);

    /// C-Blosc2 and C-Blosc 1.x both run LZ4 at acceleration
    /// `10 - clevel` (`get_accel`); clevel 0 (10) reaches a codec only in
    /// VL-block chunks, whose blocks C-Blosc2 compresses at any level.
    fn compress(
        &mut self,
        clevel: u8,
        src: &[u8],
        dst: &mut [u8],
        dict: Option<&EncDict>,
    ) -> Result<usize> {
        let accel = 10 - i32::from(clevel.min(9));
        self.compress_accel(src, dst, lz4_dict(dict), accel)
    }

    fn decompress(&mut self, src: &[u8], dst: &mut [u8], dict: Option<&DecDict>) -> Result<usize> {
        decompress(src, dst, lz4_ddict(dict))
    }
}

/// LZ4HC: its own compressor, LZ4's decoder (it has no state of its own).
pub(crate) struct Lz4Hc;

impl Backend for Lz4Hc {
    const EXPANSION: (usize, usize) = Lz4::EXPANSION;

    fn compress(
        &mut self,
        clevel: u8,
        src: &[u8],
        dst: &mut [u8],
        dict: Option<&EncDict>,
    ) -> Result<usize> {
        compress_hc(clevel, src, dst, lz4_dict(dict))
    }

    fn decompress(&mut self, src: &[u8], dst: &mut [u8], dict: Option<&DecDict>) -> Result<usize> {
        decompress(src, dst, lz4_ddict(dict))
    }
}

/// Run liblz4 once on this thread so its thread-local compression state
/// is allocated now rather than during a later chunk.
pub(crate) fn warm_thread() {
    #[cfg(feature = "lz4hc")]
    {
        let src = [0u8, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7];
        let mut dst = [0u8; 64];
        let _ = lzzzz::lz4::compress(&src, &mut dst, 1);
        let _ = lzzzz::lz4_hc::compress(&src, &mut dst, 9);
    }
}
