//! Byte shuffle and unshuffle.
//!
//! Both work on blocks of 16 elements: [`gather`] turns 16 elements into one
//! vector per byte position (a "column": byte `j` of the 16 elements, i.e. 16
//! consecutive bytes of output stream `j`), [`scatter`] does the reverse.
//!
//! - typesize 2: two loads and an unzip (`vst2q` for the inverse);
//! - typesize 4: one `vld4q` de-interleaves the block (`vst4q` interleaves);
//! - typesize 8: two `vld4q` and one round of `uzp1`/`uzp2` (`zip1`/`zip2`
//!   and two `vst4q` for the inverse);
//! - typesize 16: four `vld4q` and two unzip rounds (zips for the inverse);
//! - any other typesize: the block is read as 16 rows of 16 bytes (one per
//!   element, starting at byte `j0` of it) and transposed as a 16x16 byte
//!   matrix, once per 16-byte column block of the element (the last block
//!   overlapping the previous one when 16 does not divide the typesize).
//!
//! With fewer than 16 whole elements the scalar reference runs instead; when
//! 16 does not divide the element count the last block overlaps the one
//! before it. The trailing `len % typesize` bytes are copied.

use core::arch::aarch64::{uint8x16x2_t, uint8x16x4_t};

use super::prims::*;
use crate::generic;

/// Byte `j0 + c` of elements `e..e + 16` of `src` (elements of `ts` bytes)
/// as vector `c`, for `c` in `0..ts.min(16)`; the other vectors are
/// unspecified. `K` is `ts` for the fixed sizes 2, 4, 8, 16 (`j0` is then
/// 0) and 0 for any other.
#[inline]
#[target_feature(enable = "neon")]
pub(super) fn gather<const K: usize>(ts: usize, src: &[u8], e: usize, j0: usize) -> [V; 16] {
    let mut out = [zero(); 16];
    match K {
        2 => {
            let v = ld2(src, 2 * e);
            out[0] = v.0;
            out[1] = v.1;
        }
        4 => {
            let v = ld4(src, 4 * e);
            out[..4].copy_from_slice(&[v.0, v.1, v.2, v.3]);
        }
        8 => out[..8].copy_from_slice(&gather8(src, 8 * e)),
        16 => out = gather16(src, 16 * e),
        _ => {
            let mut rows = [zero(); 16];
            for (r, row) in rows.iter_mut().enumerate() {
                *row = if ts >= 16 {
                    ld(src, (e + r) * ts + j0)
                } else {
                    // The 16 bytes from the start of the element run into
                    // the next ones (which are not used); near the end of
                    // `src` they are cut off.
                    ld_part(src, (e + r) * ts)
                };
            }
            out = transpose16(rows);
        }
    }
    out
}

/// Inverse of [`gather`]: writes bytes `j0..j0 + ts.min(16)` of elements
/// `e..e + 16` of `dst` from `cols`.
///
/// For a typesize below 16 other than 2, 4, 8 each element is written as 16
/// bytes, in increasing order: the bytes that spill into the following
/// elements are overwritten by those elements' own stores, or, after the
/// last element, must be rewritten by the caller (the kernels write the
/// following elements, then the byte tail, afterwards). Bytes past the end
/// of `dst` are never written.
#[inline]
#[target_feature(enable = "neon")]
pub(super) fn scatter<const K: usize>(
    ts: usize,
    dst: &mut [u8],
    e: usize,
    j0: usize,
    cols: &[V; 16],
) {
    match K {
        2 => st2(dst, 2 * e, uint8x16x2_t(cols[0], cols[1])),
        4 => st4(dst, 4 * e, uint8x16x4_t(cols[0], cols[1], cols[2], cols[3])),
        8 => {
            let mut w = [zero(); 8];
            w.copy_from_slice(&cols[..8]);
            scatter8(dst, 8 * e, &w);
        }
        16 => scatter16(dst, 16 * e, cols),
        _ => {
            let rows = transpose16(*cols);
            for (r, row) in rows.iter().enumerate() {
                if ts >= 16 {
                    st(dst, (e + r) * ts + j0, *row);
                } else {
                    st_part(dst, (e + r) * ts, *row);
                }
            }
        }
    }
}

/// Byte shuffle; same contract and output as [`generic::shuffle`].
#[target_feature(enable = "neon")]
pub(crate) fn shuffle(ts: usize, src: &[u8], dst: &mut [u8]) {
    let n = src.len() / ts;
    if ts == 1 || n < 16 {
        return generic::shuffle(ts, src, dst);
    }
    match ts {
        2 => shuffle_blocks::<2>(ts, src, dst, n),
        4 => shuffle_blocks::<4>(ts, src, dst, n),
        8 => shuffle_blocks::<8>(ts, src, dst, n),
        16 => shuffle_blocks::<16>(ts, src, dst, n),
        _ => shuffle_blocks::<0>(ts, src, dst, n),
    }
    let body = n * ts;
    dst[body..].copy_from_slice(&src[body..]);
}

/// Inverse of [`shuffle`]; same contract and output as [`generic::unshuffle`].
#[target_feature(enable = "neon")]
pub(crate) fn unshuffle(ts: usize, src: &[u8], dst: &mut [u8]) {
    let n = src.len() / ts;
    if ts == 1 || n < 16 {
        return generic::unshuffle(ts, src, dst);
    }
    match ts {
        2 => unshuffle_blocks::<2>(ts, src, dst, n),
        4 => unshuffle_blocks::<4>(ts, src, dst, n),
        8 => unshuffle_blocks::<8>(ts, src, dst, n),
        16 => unshuffle_blocks::<16>(ts, src, dst, n),
        _ => unshuffle_blocks::<0>(ts, src, dst, n),
    }
    // After the blocks: this also rewrites what `scatter` spilled past the
    // last element.
    let body = n * ts;
    dst[body..].copy_from_slice(&src[body..]);
}

/// The `n >= 16` whole elements of `src`, shuffled into `dst[..n * ts]`.
#[inline]
#[target_feature(enable = "neon")]
fn shuffle_blocks<const K: usize>(ts: usize, src: &[u8], dst: &mut [u8], n: usize) {
    for i0 in block_starts(n) {
        for (j0, ncols) in col_blocks(ts) {
            let cols = gather::<K>(ts, src, i0, j0);
            for (c, col) in cols[..ncols].iter().enumerate() {
                st(dst, (j0 + c) * n + i0, *col);
            }
        }
    }
}

/// The `n >= 16` whole elements, unshuffled from `src[..n * ts]` into `dst`.
/// May spill up to 15 bytes past element `n - 1` (see [`scatter`]).
#[inline]
#[target_feature(enable = "neon")]
fn unshuffle_blocks<const K: usize>(ts: usize, src: &[u8], dst: &mut [u8], n: usize) {
    for i0 in block_starts(n) {
        for (j0, ncols) in col_blocks(ts) {
            let mut cols = [zero(); 16];
            for (c, col) in cols[..ncols].iter_mut().enumerate() {
                *col = ld(src, (j0 + c) * n + i0);
            }
            scatter::<K>(ts, dst, i0, j0, &cols);
        }
    }
}
