//! LZ4 and LZ4HC: raw LZ4 blocks (the same format for both).
//!
//! LZ4 is compressed and decompressed by lz4_flex (pure Rust, with its
//! checked decoder). lz4_flex has no acceleration knob, so every clevel gets
//! its default (C-Blosc2 uses `acceleration = 10 - clevel`): same format,
//! not the same bytes. LZ4HC uses C liblz4 through lzzzz (feature `lz4hc`).

use crate::error::{Error, Result};

/// LZ4 state: the scratch lz4_flex needs (it refuses to start unless the
/// output can hold its worst case, so it compresses here and we copy).
#[derive(Default)]
pub(crate) struct Lz4 {
    scratch: Vec<u8>,
}

impl Lz4 {
    pub(crate) fn compress(
        &mut self,
        _clevel: u8,
        src: &[u8],
        dst: &mut [u8],
        dict: Option<&[u8]>,
    ) -> Result<usize> {
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

pub(crate) fn decompress(src: &[u8], dst: &mut [u8], dict: Option<&[u8]>) -> Result<usize> {
    let r = match dict {
        Some(d) => lz4_flex::block::decompress_into_with_dict(src, dst, d),
        None => lz4_flex::block::decompress_into(src, dst),
    };
    r.map_err(|e| Error::Corrupt(format!("lz4 stream: {e}")))
}
