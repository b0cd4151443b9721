//! SSE2 kernels.
//!
//! - byte shuffle and unshuffle: the kernels of `tiles.rs` on `__m128i`
//!   (one 16-byte lane, 16 elements per tile), transposing with SSE2's
//!   `punpck*` and `packuswb` only (no `pshufb`: that is SSSE3); typesize 3
//!   uses the scalar reference, faster than 16x16 transposes that would
//!   keep 3 of their 16 rows;
//! - bit shuffle and unshuffle: `tiles.rs` on `__m128i`;
//! - BYTEDELTA decode and DELTA decode: vector prefix scans (`scan.rs`);
//! - DELTA encode, TRUNC_PREC, BYTEDELTA encode: the scalar reference
//!   compiled with SSE2 enabled.
//!
//! The table entries split off the trailing bytes and pick a kernel by
//! typesize; each kernel is its own `#[target_feature(enable = "sse2")]`
//! function (see `simd_kernel!`).

use core::arch::x86_64::__m128i;

use super::{retarget, scan, simd_kernel, split_elements, split_rows, tiles};
use crate::dispatch::{Isa, Kernels};
use crate::generic;

/// The SSE2 table, if this CPU supports SSE2.
pub(crate) fn kernels() -> Option<&'static Kernels> {
    if std::arch::is_x86_feature_detected!("sse2") {
        Some(&KERNELS)
    } else {
        None
    }
}

static KERNELS: Kernels = Kernels {
    isa: Isa::Sse2,
    shuffle,
    unshuffle,
    bitshuffle,
    bitunshuffle,
    delta_encode,
    delta_decode,
    trunc_prec,
    bytedelta_encode,
    bytedelta_decode,
};

/// Byte shuffle (same contract as `generic::shuffle`).
fn shuffle(ts: usize, src: &[u8], dst: &mut [u8]) {
    if ts == 3 {
        return generic::shuffle(ts, src, dst);
    }
    let (s, d, n) = split_elements(ts, src, dst);
    match ts {
        1 => d.copy_from_slice(s),
        2 => shuffle_2(s, d, n),
        4 => shuffle_4(s, d, n),
        8 => shuffle_8(s, d, n),
        _ => shuffle_cols(ts, s, d, n),
    }
}

/// Byte unshuffle (same contract as `generic::unshuffle`).
fn unshuffle(ts: usize, src: &[u8], dst: &mut [u8]) {
    if ts == 3 {
        return generic::unshuffle(ts, src, dst);
    }
    let (s, d, n) = split_elements(ts, src, dst);
    match ts {
        1 => d.copy_from_slice(s),
        2 => unshuffle_2(s, d, n),
        4 => unshuffle_4(s, d, n),
        8 => unshuffle_8(s, d, n),
        16 => unshuffle_16(s, d, n),
        _ => unshuffle_cols(ts, s, d, n),
    }
}

/// Bit shuffle (same contract as `generic::bitshuffle`).
fn bitshuffle(ts: usize, src: &[u8], dst: &mut [u8]) {
    let (s, d, rowlen) = split_rows(ts, src, dst);
    bitshuffle_rows(ts, s, d, rowlen);
}

/// Bit unshuffle (same contract as `generic::bitunshuffle`).
fn bitunshuffle(ts: usize, src: &[u8], dst: &mut [u8]) {
    let (s, d, rowlen) = split_rows(ts, src, dst);
    bitunshuffle_rows(ts, s, d, rowlen);
}

// The number after the typesize is how many 16-element tiles go together
// (64 bytes per stream when it is 4), as measured fastest.
simd_kernel!("sse2", shuffle_2 = tiles::shuffle_pow2::<__m128i, 2, 4>, (s: &[u8], d: &mut [u8], n: usize));
simd_kernel!("sse2", shuffle_4 = tiles::shuffle_pow2::<__m128i, 4, 2>, (s: &[u8], d: &mut [u8], n: usize));
simd_kernel!("sse2", shuffle_8 = tiles::shuffle_pow2::<__m128i, 8, 1>, (s: &[u8], d: &mut [u8], n: usize));
simd_kernel!("sse2", shuffle_cols = tiles::shuffle_cols::<__m128i>, (ts: usize, s: &[u8], d: &mut [u8], n: usize));
simd_kernel!("sse2", unshuffle_2 = tiles::unshuffle_pow2::<__m128i, 2, 4>, (s: &[u8], d: &mut [u8], n: usize));
simd_kernel!("sse2", unshuffle_4 = tiles::unshuffle_pow2::<__m128i, 4, 2>, (s: &[u8], d: &mut [u8], n: usize));
simd_kernel!("sse2", unshuffle_8 = tiles::unshuffle_pow2::<__m128i, 8, 1>, (s: &[u8], d: &mut [u8], n: usize));
simd_kernel!("sse2", unshuffle_16 = tiles::unshuffle_pow2::<__m128i, 16, 1>, (s: &[u8], d: &mut [u8], n: usize));
simd_kernel!("sse2", unshuffle_cols = tiles::unshuffle_cols::<__m128i>, (ts: usize, s: &[u8], d: &mut [u8], n: usize));
simd_kernel!("sse2", bitshuffle_rows = tiles::bitshuffle::<__m128i>, (ts: usize, s: &[u8], d: &mut [u8], rowlen: usize));
simd_kernel!("sse2", bitunshuffle_rows = tiles::bitunshuffle::<__m128i>, (ts: usize, s: &[u8], d: &mut [u8], rowlen: usize));
simd_kernel!("sse2", delta_decode = scan::delta_decode::<false>, (ts: usize, r: Option<&[u8]>, src: &[u8], dst: &mut [u8]));
simd_kernel!("sse2", bytedelta_decode = scan::bytedelta_decode::<false>, (ts: usize, src: &[u8], dst: &mut [u8]));
retarget!("sse2", delta_encode = generic::delta_encode, (ts: usize, r: Option<&[u8]>, src: &[u8], dst: &mut [u8]));
retarget!("sse2", trunc_prec = generic::trunc_prec, (ts: usize, zeroed: u32, src: &[u8], dst: &mut [u8]));
retarget!("sse2", bytedelta_encode = generic::bytedelta_encode, (ts: usize, src: &[u8], dst: &mut [u8]));
