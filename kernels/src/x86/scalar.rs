//! Scalar pieces of the x86 kernels: the parts of a buffer that no whole
//! vector tile covers (short buffers, the last few elements of small element
//! sizes). Written straight from the layout definitions, like the reference
//! in [`crate::generic`], but over an index range so the vector code can hand
//! over exactly what it left.

use crate::generic::transpose8x8;

/// Byte shuffle of elements `i0..i1` of the `n` elements of `src`
/// (`src.len() == dst.len() == n * ts`): byte `j` of element `i` goes to
/// `dst[j * n + i]`.
pub(super) fn shuffle_range(ts: usize, src: &[u8], dst: &mut [u8], n: usize, i0: usize, i1: usize) {
    for i in i0..i1 {
        for (j, &b) in src[i * ts..(i + 1) * ts].iter().enumerate() {
            dst[j * n + i] = b;
        }
    }
}

/// Inverse of [`shuffle_range`] for elements `i0..i1`.
pub(super) fn unshuffle_range(
    ts: usize,
    src: &[u8],
    dst: &mut [u8],
    n: usize,
    i0: usize,
    i1: usize,
) {
    for i in i0..i1 {
        for (j, o) in dst[i * ts..(i + 1) * ts].iter_mut().enumerate() {
            *o = src[j * n + i];
        }
    }
}

/// Bit shuffle of the groups of 8 elements `q0..q1` (`src.len() ==
/// dst.len() == 8 * rowlen * ts`): bit `b` of byte `j` of element `8q + k`
/// becomes bit `k` of byte `q` of row `8j + b`.
pub(super) fn bitshuffle_range(
    ts: usize,
    src: &[u8],
    dst: &mut [u8],
    rowlen: usize,
    q0: usize,
    q1: usize,
) {
    for q in q0..q1 {
        let group = &src[q * 8 * ts..(q + 1) * 8 * ts];
        for j in 0..ts {
            let mut x = 0u64;
            for k in 0..8 {
                x |= u64::from(group[k * ts + j]) << (8 * k);
            }
            for (b, &byte) in transpose8x8(x).to_le_bytes().iter().enumerate() {
                dst[(8 * j + b) * rowlen + q] = byte;
            }
        }
    }
}

/// Inverse of [`bitshuffle_range`] for the groups `q0..q1`.
pub(super) fn bitunshuffle_range(
    ts: usize,
    src: &[u8],
    dst: &mut [u8],
    rowlen: usize,
    q0: usize,
    q1: usize,
) {
    for q in q0..q1 {
        let group = &mut dst[q * 8 * ts..(q + 1) * 8 * ts];
        for j in 0..ts {
            let mut x = 0u64;
            for b in 0..8 {
                x |= u64::from(src[(8 * j + b) * rowlen + q]) << (8 * b);
            }
            for (k, &byte) in transpose8x8(x).to_le_bytes().iter().enumerate() {
                group[k * ts + j] = byte;
            }
        }
    }
}
