//! AVX2 byte (un)shuffle for the small typesizes that are not powers of two
//! (3, 5, 6, 7), by `pshufb` gathers.
//!
//! A tile is 32 elements: `T` vectors whose lane `l` holds bytes
//! `16v..16v+16` of elements `16l..16l+16`. Byte `j` of element `e` sits at
//! `e*T + j`, i.e. in vector `(e*T + j) / 16`. Stream `j`'s 32 bytes are the
//! OR over the `T` vectors of a `pshufb` that picks, from vector `v`, the
//! bytes of stream `j` it holds (and zeroes the rest): `T²` shuffles per
//! tile, `T` per 32 output bytes, against 64 for the 16x16 transpose of the
//! column kernels, which would use only `T` of its 16 rows. The unshuffle
//! is the same with the roles of streams and vectors exchanged.
//!
//! The masks are built at compile time for each `T`. Tiles step by 32
//! elements, phased so that the 32-byte stores are aligned when possible,
//! with overlapping first and last tiles; fewer than 32 elements go to the
//! scalar code.

use core::arch::x86_64::*;

use super::scalar;
use super::tiles::{align_phase, for_tiles};

/// `pshufb` masks for [`shuffle`]: `[j][v]` takes the bytes of stream `j`
/// out of vector `v` (0x80: zero), the same for both lanes.
const fn shuffle_masks<const T: usize>() -> [[[u8; 32]; T]; T] {
    let mut m = [[[0x80u8; 32]; T]; T];
    let mut j = 0;
    while j < T {
        let mut e = 0;
        while e < 16 {
            let a = e * T + j;
            m[j][a / 16][e] = (a % 16) as u8;
            m[j][a / 16][e + 16] = (a % 16) as u8;
            e += 1;
        }
        j += 1;
    }
    m
}

/// `pshufb` masks for [`unshuffle`]: `[v][j]` places the bytes of stream
/// `j` that belong in output vector `v` (0x80: zero), both lanes.
const fn unshuffle_masks<const T: usize>() -> [[[u8; 32]; T]; T] {
    let mut m = [[[0x80u8; 32]; T]; T];
    let mut a = 0;
    while a < 16 * T {
        let (v, p) = (a / 16, a % 16);
        let (e, j) = (a / T, a % T);
        m[v][j][p] = e as u8;
        m[v][j][p + 16] = e as u8;
        a += 1;
    }
    m
}

/// 32 bytes of a mask table.
///
/// # Safety
/// AVX2 is available.
#[inline(always)]
unsafe fn mask(m: &[u8; 32]) -> __m256i {
    // SAFETY: AVX2 (caller); `m` is 32 readable bytes.
    unsafe { _mm256_loadu_si256(m.as_ptr().cast()) }
}

/// Shuffle of `n` elements of `T` bytes (`s.len() == d.len() == n * T`).
///
/// # Safety
/// AVX2 is available.
#[inline(always)]
pub(super) unsafe fn shuffle<const T: usize>(s: &[u8], d: &mut [u8], n: usize) {
    assert!(s.len() == n * T && d.len() == n * T);
    if n < 32 {
        return scalar::shuffle_range(T, s, d, n, 0, n);
    }
    let masks = const { &shuffle_masks::<T>() };
    let (sp, dp) = (s.as_ptr(), d.as_mut_ptr());
    let phase = align_phase(dp as usize, 1, 32, 32);
    for_tiles!(i in n, 32, phase => {
        // SAFETY: AVX2 from the caller. `i + 32 <= n`: vector `v < T` reads
        // the 16 bytes at `(i + 16l) * T + 16v`, which end at most at
        // `(i + 32) * T`; stream `j < T` is written at `j * n + i .. + 32`.
        unsafe {
            let mut x = [_mm256_setzero_si256(); T];
            for (v, x) in x.iter_mut().enumerate() {
                let p = sp.add(i * T + 16 * v);
                *x = _mm256_loadu2_m128i(p.add(16 * T).cast(), p.cast());
            }
            for (j, mj) in masks.iter().enumerate() {
                let mut o = _mm256_shuffle_epi8(x[0], mask(&mj[0]));
                for v in 1..T {
                    o = _mm256_or_si256(o, _mm256_shuffle_epi8(x[v], mask(&mj[v])));
                }
                _mm256_storeu_si256(dp.add(j * n + i).cast(), o);
            }
        }
    });
}

/// Unshuffle of `n` elements of `T` bytes (`s.len() == d.len() == n * T`).
///
/// # Safety
/// AVX2 is available.
#[inline(always)]
pub(super) unsafe fn unshuffle<const T: usize>(s: &[u8], d: &mut [u8], n: usize) {
    assert!(s.len() == n * T && d.len() == n * T);
    if n < 32 {
        return scalar::unshuffle_range(T, s, d, n, 0, n);
    }
    let masks = const { &unshuffle_masks::<T>() };
    let (sp, dp) = (s.as_ptr(), d.as_mut_ptr());
    let phase = align_phase(dp as usize, T, 32, 32);
    for_tiles!(i in n, 32, phase => {
        // SAFETY: AVX2 from the caller. `i + 32 <= n`: stream `j < T` is read
        // at `j * n + i .. + 32`; vector `v < T` writes the 16 bytes at
        // `(i + 16l) * T + 16v`, which end at most at `(i + 32) * T`.
        unsafe {
            let mut x = [_mm256_setzero_si256(); T];
            for (j, x) in x.iter_mut().enumerate() {
                *x = _mm256_loadu_si256(sp.add(j * n + i).cast());
            }
            for (v, mv) in masks.iter().enumerate() {
                let mut o = _mm256_shuffle_epi8(x[0], mask(&mv[0]));
                for j in 1..T {
                    o = _mm256_or_si256(o, _mm256_shuffle_epi8(x[j], mask(&mv[j])));
                }
                let p = dp.add(i * T + 16 * v);
                _mm256_storeu2_m128i(p.add(16 * T).cast(), p.cast(), o);
            }
        }
    });
}
