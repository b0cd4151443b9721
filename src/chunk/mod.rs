//! The Blosc/Blosc2 chunk: header, block-size tuner, encoder, decoder and
//! special chunks. Knows nothing of frames.

pub(crate) mod blocksize;
pub(crate) mod decode;
pub(crate) mod encode;
pub mod header;
mod vlblocks;

use crate::error::{Error, Result};
use crate::params::CParams;
pub use header::{ChunkHeader, SpecialValue, cbuffer_sizes};
pub use vlblocks::{VL_MAX_DICT_OVERHEAD, vl_compress, vl_compress_into, vl_max_len};

/// Check a chunk without decoding it, and return its header: the header
/// checks of [`ChunkHeader::parse`], plus, for regular and VL-block chunks,
/// that the block start table and every stream lie inside the chunk and
/// that each stream can decode to the size the header declares (no codec
/// expands its input beyond a known ratio; only run-length streams stand
/// for any size). Costs a few word reads per stream.
///
/// A chunk that passes may still fail to decode (its payload can be
/// corrupt), but a buffer of its declared size is then backed by what the
/// input could produce: a 64-byte chunk claiming 2 GiB of codec output is
/// refused here, before anything is allocated. [`crate::Decompressor`]
/// calls it before allocating its output.
///
/// # Errors
/// As [`crate::decompress`], for the structure only.
pub fn validate(src: &[u8]) -> Result<ChunkHeader> {
    decode::validate(src)
}

/// A special chunk of `nbytes` (header only, plus the value for
/// [`SpecialValue::Value`]), as C-Blosc2's `blosc2_chunk_zeros`, `_nans`,
/// `_uninit` and `_repeatval` make them. The block size is the tuner's for
/// `p`; the type size is `p.typesize` (or the value's length).
///
/// # Errors
/// [`Error::InvalidParam`] when `nbytes` is not a whole number of items (of
/// `p.typesize`, or of the value), for NaN chunks unless the type size is 4
/// or 8, and for an empty value.
pub fn special_chunk(
    p: &CParams,
    nbytes: usize,
    kind: SpecialValue,
    value: &[u8],
) -> Result<Vec<u8>> {
    let mut p = p.clone();
    let value_len = match kind {
        SpecialValue::Value => {
            if value.is_empty() || value.len() > crate::params::MAX_TYPESIZE {
                return Err(Error::InvalidParam(format!(
                    "repeated value must be 1..=255 bytes, got {}",
                    value.len()
                )));
            }
            p.typesize = value.len();
            value.len()
        }
        _ => 0,
    };
    let ts = p.typesize;
    let whole = nbytes.is_multiple_of(ts);
    match kind {
        SpecialValue::Nan if ts != 4 && ts != 8 => {
            return Err(Error::InvalidParam(format!(
                "NaN chunks need typesize 4 or 8, not {ts}"
            )));
        }
        SpecialValue::Nan | SpecialValue::Value | SpecialValue::Uninit if !whole => {
            return Err(Error::InvalidParam(format!(
                "nbytes {nbytes} is not a multiple of the item size {ts}"
            )));
        }
        _ => {}
    }
    let h = encode::special_header(&p, nbytes, kind.code(), value_len)?;
    let mut out = vec![0u8; h.cbytes];
    h.write(&mut out);
    out[header::EXTENDED_HEADER_LEN..].copy_from_slice(&value[..value_len]);
    Ok(out)
}

/// Copy `src` into `dst` (the same length) in pieces of at most
/// [`COPY_PIECE`] bytes, as C-Blosc2 copies a memcpyed chunk block by
/// block. glibc copies a piece under its `rep_movsb_stop_threshold` (1 MiB
/// on this machine's AMD EPYC) with `rep movsb` and a larger one with a
/// vector loop, 0.83x as fast here: a 1 MiB memcpyed chunk decoded in 18.5
/// against C's 15.4 us in one copy (perf/README.md, session 23).
pub(crate) fn copy_pieces(dst: &mut [u8], src: &[u8]) {
    for (d, s) in dst.chunks_mut(COPY_PIECE).zip(src.chunks(COPY_PIECE)) {
        d.copy_from_slice(s);
    }
}

/// The largest piece [`copy_pieces`] copies at once.
pub(crate) const COPY_PIECE: usize = 256 * 1024;

/// Whether every byte of `s` equals its first (true for an empty `s`).
///
/// The decoder asks it of every small stream it decodes (to remember the
/// constant ones), most of which are not constant: a byte plane of a ramp
/// is runs of thousands of bytes. The last byte is compared first (it
/// differs in such planes), then 64 bytes a step, whose eight XORs the
/// compiler turns into vector instructions. With one 8-byte word a step,
/// the 32 KiB third plane of a 256 KiB block of 8-byte integers (runs of
/// 21,845 bytes) cost 0.64 us of its 6.3 us decode (C-Blosc2 5.65; perf
/// record, session 26).
pub(crate) fn all_equal(s: &[u8]) -> bool {
    let (Some(&v), Some(&last)) = (s.first(), s.last()) else {
        return true;
    };
    if last != v {
        return false;
    }
    let word = u64::from_ne_bytes([v; 8]);
    let mut blocks = s.chunks_exact(64);
    for b in blocks.by_ref() {
        let diff = b.chunks_exact(8).fold(0, |acc, w| {
            acc | (u64::from_ne_bytes(w.try_into().unwrap()) ^ word)
        });
        if diff != 0 {
            return false;
        }
    }
    blocks.remainder().iter().all(|&b| b == v)
}

#[cfg(test)]
mod tests {
    use super::all_equal;

    /// `all_equal` against the plain definition: every length up to three
    /// 64-byte steps and a remainder, with one byte changed at each
    /// position (first, last, in a step, in the remainder).
    #[test]
    fn all_equal_finds_any_differing_byte() {
        assert!(all_equal(&[]));
        for len in 1..=200 {
            let same = vec![7u8; len];
            assert!(all_equal(&same), "len {len}");
            for at in 0..len {
                let mut s = same.clone();
                s[at] = 8;
                assert_eq!(
                    all_equal(&s),
                    s.iter().all(|&b| b == s[0]),
                    "len {len} at {at}"
                );
            }
        }
    }
}
