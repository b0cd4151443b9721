//! AVX2 kernels.
//!
//! - byte shuffle and unshuffle: `pshufb` gathers (`gather.rs`) for
//!   typesizes 3, 5, 6 and 7; for the others the kernels of `tiles.rs` on
//!   `__m256i` (two 16-byte lanes, 32 elements per tile), with the `pshufb`
//!   + bit swap transposes of `simd.rs`;
//! - bit shuffle and unshuffle: `tiles.rs` on `__m256i`;
//! - BYTEDELTA decode and DELTA decode: vector prefix scans (`scan.rs`);
//! - DELTA encode, TRUNC_PREC, BYTEDELTA encode: the scalar reference
//!   compiled with AVX2 enabled (the compiler vectorises these maps).
//!
//! The table entries split off the trailing bytes and pick a kernel by
//! typesize; each kernel is its own `#[target_feature(enable = "avx2")]`
//! function (see `simd_kernel!`).

use core::arch::x86_64::{__m128i, __m256i};

use super::{gather, retarget, scan, simd_kernel, split_elements, split_rows, tiles};
use crate::dispatch::{Isa, Kernels};
use crate::generic;

/// The AVX2 table, if this CPU supports AVX2.
pub(crate) fn kernels() -> Option<&'static Kernels> {
    if std::arch::is_x86_feature_detected!("avx2") {
        Some(&KERNELS)
    } else {
        None
    }
}

static KERNELS: Kernels = Kernels {
    isa: Isa::Avx2,
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
    let (s, d, n) = split_elements(ts, src, dst);
    match ts {
        1 => d.copy_from_slice(s),
        _ if n < 32 => shuffle_narrow(ts, s, d, n),
        2 => shuffle_2(s, d, n),
        3 => shuffle_3(s, d, n),
        4 => shuffle_4(s, d, n),
        5 => shuffle_5(s, d, n),
        6 => shuffle_6(s, d, n),
        7 => shuffle_7(s, d, n),
        8 => shuffle_8(s, d, n),
        _ => shuffle_cols(ts, s, d, n),
    }
}

/// Byte unshuffle (same contract as `generic::unshuffle`).
fn unshuffle(ts: usize, src: &[u8], dst: &mut [u8]) {
    let (s, d, n) = split_elements(ts, src, dst);
    match ts {
        1 => d.copy_from_slice(s),
        _ if n < 32 => unshuffle_narrow(ts, s, d, n),
        2 => unshuffle_2(s, d, n),
        3 => unshuffle_3(s, d, n),
        4 => unshuffle_4(s, d, n),
        5 => unshuffle_5(s, d, n),
        6 => unshuffle_6(s, d, n),
        7 => unshuffle_7(s, d, n),
        8 => unshuffle_8(s, d, n),
        16 => unshuffle_16(s, d, n),
        _ => unshuffle_cols(ts, s, d, n),
    }
}

/// Bit shuffle (same contract as `generic::bitshuffle`).
fn bitshuffle(ts: usize, src: &[u8], dst: &mut [u8]) {
    let (s, d, rowlen) = split_rows(ts, src, dst);
    if rowlen < 32 {
        bitshuffle_rows_narrow(ts, s, d, rowlen);
    } else {
        bitshuffle_rows(ts, s, d, rowlen);
    }
}

/// Bit unshuffle (same contract as `generic::bitunshuffle`).
fn bitunshuffle(ts: usize, src: &[u8], dst: &mut [u8]) {
    let (s, d, rowlen) = split_rows(ts, src, dst);
    if rowlen < 32 {
        bitunshuffle_rows_narrow(ts, s, d, rowlen);
    } else {
        bitunshuffle_rows(ts, s, d, rowlen);
    }
}

// The number after the typesize is how many tiles go together (64 bytes
// per stream when it is 2 for `__m256i`, 4 for `__m128i`), as measured
// fastest. The unshuffles of 4 and 8 bytes run on `__m256i` (zip rounds,
// then `vperm2i128` pairs the lanes for 32-byte stores): per 256 bytes of
// 8-byte elements that is 24 unpacks, 8 lane permutes and 8 stores, where
// 16-byte vectors need 48 unpacks and 16 stores; on AMD Zen 4 the 16-byte
// version ran at 0.72-0.83x of the 32-byte one (and of C-Blosc2's AVX2
// unshuffle), the 4-byte one at 0.94-0.96x (`perf/run kernels`, perf/README.md).
simd_kernel!("avx2", shuffle_2 = tiles::shuffle_pow2::<__m256i, 2, 2>, (s: &[u8], d: &mut [u8], n: usize));
simd_kernel!("avx2", shuffle_4 = tiles::shuffle_pow2::<__m256i, 4, 2>, (s: &[u8], d: &mut [u8], n: usize));
simd_kernel!("avx2", shuffle_8 = tiles::shuffle_pow2::<__m256i, 8, 2>, (s: &[u8], d: &mut [u8], n: usize));
simd_kernel!("avx2", shuffle_cols = tiles::shuffle_cols::<__m256i>, (ts: usize, s: &[u8], d: &mut [u8], n: usize));
simd_kernel!("avx2", shuffle_3 = gather::shuffle::<3>, (s: &[u8], d: &mut [u8], n: usize));
simd_kernel!("avx2", shuffle_5 = gather::shuffle::<5>, (s: &[u8], d: &mut [u8], n: usize));
simd_kernel!("avx2", shuffle_6 = gather::shuffle::<6>, (s: &[u8], d: &mut [u8], n: usize));
simd_kernel!("avx2", shuffle_7 = gather::shuffle::<7>, (s: &[u8], d: &mut [u8], n: usize));
simd_kernel!("avx2", unshuffle_2 = tiles::unshuffle_pow2::<__m256i, 2, 1>, (s: &[u8], d: &mut [u8], n: usize));
simd_kernel!("avx2", unshuffle_4 = tiles::unshuffle_pow2::<__m256i, 4, 1>, (s: &[u8], d: &mut [u8], n: usize));
simd_kernel!("avx2", unshuffle_8 = tiles::unshuffle_pow2::<__m256i, 8, 1>, (s: &[u8], d: &mut [u8], n: usize));
simd_kernel!("avx2", unshuffle_16 = tiles::unshuffle_pow2::<__m256i, 16, 1>, (s: &[u8], d: &mut [u8], n: usize));
simd_kernel!("avx2", unshuffle_cols = tiles::unshuffle_cols::<__m256i>, (ts: usize, s: &[u8], d: &mut [u8], n: usize));
simd_kernel!("avx2", unshuffle_3 = gather::unshuffle::<3>, (s: &[u8], d: &mut [u8], n: usize));
simd_kernel!("avx2", unshuffle_5 = gather::unshuffle::<5>, (s: &[u8], d: &mut [u8], n: usize));
simd_kernel!("avx2", unshuffle_6 = gather::unshuffle::<6>, (s: &[u8], d: &mut [u8], n: usize));
simd_kernel!("avx2", unshuffle_7 = gather::unshuffle::<7>, (s: &[u8], d: &mut [u8], n: usize));
simd_kernel!("avx2", bitshuffle_rows = tiles::bitshuffle::<__m256i>, (ts: usize, s: &[u8], d: &mut [u8], rowlen: usize));
simd_kernel!("avx2", bitunshuffle_rows = tiles::bitunshuffle::<__m256i>, (ts: usize, s: &[u8], d: &mut [u8], rowlen: usize));
// Inputs too short for one 32-element tile (or 32-group block) run on
// 16-byte vectors rather than on the scalar code.
simd_kernel!("avx2", shuffle_narrow = tiles::shuffle_any::<__m128i>, (ts: usize, s: &[u8], d: &mut [u8], n: usize));
simd_kernel!("avx2", unshuffle_narrow = tiles::unshuffle_any::<__m128i>, (ts: usize, s: &[u8], d: &mut [u8], n: usize));
simd_kernel!("avx2", bitshuffle_rows_narrow = tiles::bitshuffle::<__m128i>, (ts: usize, s: &[u8], d: &mut [u8], rowlen: usize));
simd_kernel!("avx2", bitunshuffle_rows_narrow = tiles::bitunshuffle::<__m128i>, (ts: usize, s: &[u8], d: &mut [u8], rowlen: usize));
simd_kernel!("avx2", delta_decode = scan::delta_decode::<true>, (ts: usize, r: Option<&[u8]>, src: &[u8], dst: &mut [u8]));
simd_kernel!("avx2", bytedelta_decode = scan::bytedelta_decode::<true>, (ts: usize, src: &[u8], dst: &mut [u8]));
retarget!("avx2", delta_encode = generic::delta_encode, (ts: usize, r: Option<&[u8]>, src: &[u8], dst: &mut [u8]));
retarget!("avx2", trunc_prec = generic::trunc_prec, (ts: usize, zeroed: u32, src: &[u8], dst: &mut [u8]));
retarget!("avx2", bytedelta_encode = generic::bytedelta_encode, (ts: usize, src: &[u8], dst: &mut [u8]));
