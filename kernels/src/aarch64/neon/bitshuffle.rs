//! Bit shuffle and unshuffle.
//!
//! The transposed part (the first `m` elements, `m` the largest multiple of
//! 8) is cut into tiles of 128 elements, i.e. 16 bytes of every output row
//! (rows are `m / 8` bytes long); when 16 does not divide the row length the
//! last tile overlaps the one before it, and with fewer than 16 bytes per
//! row the scalar reference runs instead.
//!
//! The core, [`bit_rows`], takes 128 bytes `x` (one byte stream) and makes
//! the 8 row pieces: `gather8` puts `x[8q + k]` in lane `q` of vector `k`,
//! then [`bit_transpose`] exchanges vector index and bit position in every
//! lane, so that lane `q` of vector `b` holds bit `b` of `x[8q..8q + 8]`,
//! LSB first: exactly byte `q` of row `b`.
//!
//! - typesize 1: the tile itself is the stream, no copy;
//! - other typesizes: each tile is first byte-shuffled into a 2 KiB stack
//!   buffer, 16 byte positions at a time (the `gather` of the byte shuffle:
//!   unzips and `vld4q` for 2, 4, 8, 16, 16x16 transposes for the
//!   rest), giving one 128-byte stream per byte position `j`, whose rows
//!   are `8j..8j + 8`.
//!
//! The inverse runs the same steps backwards (`bit_transpose` is its own
//! inverse). The trailing bytes after the `m` elements are copied.

use super::prims::*;
use super::shuffle::{gather, scatter};
use crate::generic;

/// Elements per tile: 16 groups of 8.
const TILE: usize = 128;

/// Bit transpose of the 128 bytes `s[off..off + 128]`: vector `b` is bit
/// `b` of bytes `8q..8q + 8` in lane `q`, LSB first.
#[inline]
#[target_feature(enable = "neon")]
fn bit_rows(s: &[u8], off: usize) -> [V; 8] {
    bit_transpose(gather8(s, off))
}

/// Inverse of [`bit_rows`]: writes the 128 bytes to `d[off..off + 128]`.
#[inline]
#[target_feature(enable = "neon")]
fn unbit_rows(d: &mut [u8], off: usize, rows: [V; 8]) {
    scatter8(d, off, &bit_transpose(rows));
}

/// Bit shuffle; same contract and output as [`generic::bitshuffle`].
#[target_feature(enable = "neon")]
pub(crate) fn bitshuffle(ts: usize, src: &[u8], dst: &mut [u8]) {
    let m = generic::bit_elements(ts, src.len());
    let rowlen = m / 8;
    if rowlen < 16 {
        return generic::bitshuffle(ts, src, dst);
    }
    match ts {
        1 => {
            for q0 in block_starts(rowlen) {
                let rows = bit_rows(src, 8 * q0);
                for (b, row) in rows.iter().enumerate() {
                    st(dst, b * rowlen + q0, *row);
                }
            }
        }
        2 => bitshuffle_tiles::<2>(ts, src, dst, rowlen),
        4 => bitshuffle_tiles::<4>(ts, src, dst, rowlen),
        8 => bitshuffle_tiles::<8>(ts, src, dst, rowlen),
        16 => bitshuffle_tiles::<16>(ts, src, dst, rowlen),
        _ => bitshuffle_tiles::<0>(ts, src, dst, rowlen),
    }
    let body = m * ts;
    dst[body..].copy_from_slice(&src[body..]);
}

/// Inverse of [`bitshuffle`]; same contract and output as
/// [`generic::bitunshuffle`].
#[target_feature(enable = "neon")]
pub(crate) fn bitunshuffle(ts: usize, src: &[u8], dst: &mut [u8]) {
    let m = generic::bit_elements(ts, src.len());
    let rowlen = m / 8;
    if rowlen < 16 {
        return generic::bitunshuffle(ts, src, dst);
    }
    match ts {
        1 => {
            for q0 in block_starts(rowlen) {
                let mut rows = [zero(); 8];
                for (b, row) in rows.iter_mut().enumerate() {
                    *row = ld(src, b * rowlen + q0);
                }
                unbit_rows(dst, 8 * q0, rows);
            }
        }
        2 => bitunshuffle_tiles::<2>(ts, src, dst, rowlen),
        4 => bitunshuffle_tiles::<4>(ts, src, dst, rowlen),
        8 => bitunshuffle_tiles::<8>(ts, src, dst, rowlen),
        16 => bitunshuffle_tiles::<16>(ts, src, dst, rowlen),
        _ => bitunshuffle_tiles::<0>(ts, src, dst, rowlen),
    }
    // After the tiles: this also rewrites what `scatter` spilled past
    // element `m - 1`.
    let body = m * ts;
    dst[body..].copy_from_slice(&src[body..]);
}

/// The transposed part for `ts > 1` (`rowlen >= 16`), through a stack buffer
/// holding, for up to 16 byte positions, the 128-byte stream of a tile.
#[inline]
#[target_feature(enable = "neon")]
fn bitshuffle_tiles<const K: usize>(ts: usize, src: &[u8], dst: &mut [u8], rowlen: usize) {
    let mut tmp = [0u8; 16 * TILE];
    for q0 in block_starts(rowlen) {
        let e0 = 8 * q0;
        for (j0, ncols) in col_blocks(ts) {
            for r in 0..TILE / 16 {
                let cols = gather::<K>(ts, src, e0 + 16 * r, j0);
                for (c, col) in cols[..ncols].iter().enumerate() {
                    st(&mut tmp, c * TILE + 16 * r, *col);
                }
            }
            for c in 0..ncols {
                let rows = bit_rows(&tmp, c * TILE);
                for (b, row) in rows.iter().enumerate() {
                    st(dst, (8 * (j0 + c) + b) * rowlen + q0, *row);
                }
            }
        }
    }
}

/// Inverse of [`bitshuffle_tiles`]. May spill up to 15 bytes past element
/// `m - 1` (see [`scatter`]).
#[inline]
#[target_feature(enable = "neon")]
fn bitunshuffle_tiles<const K: usize>(ts: usize, src: &[u8], dst: &mut [u8], rowlen: usize) {
    let mut tmp = [0u8; 16 * TILE];
    for q0 in block_starts(rowlen) {
        let e0 = 8 * q0;
        for (j0, ncols) in col_blocks(ts) {
            for c in 0..ncols {
                let mut rows = [zero(); 8];
                for (b, row) in rows.iter_mut().enumerate() {
                    *row = ld(src, (8 * (j0 + c) + b) * rowlen + q0);
                }
                unbit_rows(&mut tmp, c * TILE, rows);
            }
            for r in 0..TILE / 16 {
                let mut cols = [zero(); 16];
                for (c, col) in cols[..ncols].iter_mut().enumerate() {
                    *col = ld(&tmp, c * TILE + 16 * r);
                }
                scatter::<K>(ts, dst, e0 + 16 * r, j0, &cols);
            }
        }
    }
}
