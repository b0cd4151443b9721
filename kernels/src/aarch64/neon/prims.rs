//! NEON building blocks shared by the kernels: bounds-checked loads and
//! stores, byte de-interleaving of 16 elements, the 16x16 byte transpose and
//! the 8x8 bit transpose across eight vectors.
//!
//! Every memory access goes through a helper that first takes a sub-slice of
//! exactly the size it touches (`&s[off..off + 16]` and the like). A wrong
//! offset therefore panics instead of reading or writing out of bounds, and
//! the `unsafe` intrinsic call only has to rely on the length of that
//! sub-slice. Register-only intrinsics are safe to call: every function of
//! these modules is `#[target_feature(enable = "neon")]`.

use core::arch::aarch64::*;

/// One 128-bit register of 16 bytes.
pub(super) type V = uint8x16_t;

/// 16 zero bytes.
#[inline]
#[target_feature(enable = "neon")]
pub(super) fn zero() -> V {
    vdupq_n_u8(0)
}

/// Loads `s[off..off + 16]`.
#[inline]
#[target_feature(enable = "neon")]
pub(super) fn ld(s: &[u8], off: usize) -> V {
    let s = &s[off..off + 16];
    // SAFETY: `s` is a slice of exactly 16 readable bytes (the slicing above
    // panics otherwise); `vld1q_u8` has no alignment requirement.
    unsafe { vld1q_u8(s.as_ptr()) }
}

/// Stores `v` to `d[off..off + 16]`.
#[inline]
#[target_feature(enable = "neon")]
pub(super) fn st(d: &mut [u8], off: usize, v: V) {
    let d = &mut d[off..off + 16];
    // SAFETY: `d` is an exclusively borrowed slice of exactly 16 writable
    // bytes; `vst1q_u8` has no alignment requirement.
    unsafe { vst1q_u8(d.as_mut_ptr(), v) }
}

/// Loads the 16 bytes at `s[off..]`, or as many as there are (`off <=
/// s.len()`), the missing ones read as 0.
#[inline]
#[target_feature(enable = "neon")]
pub(super) fn ld_part(s: &[u8], off: usize) -> V {
    if s.len() - off >= 16 {
        ld(s, off)
    } else {
        let mut buf = [0u8; 16];
        let rest = &s[off..];
        buf[..rest.len()].copy_from_slice(rest);
        ld(&buf, 0)
    }
}

/// Stores `v` to `d[off..]`, dropping the bytes that fall past the end of
/// `d` (`off <= d.len()`).
#[inline]
#[target_feature(enable = "neon")]
pub(super) fn st_part(d: &mut [u8], off: usize, v: V) {
    if d.len() - off >= 16 {
        st(d, off, v)
    } else {
        let mut buf = [0u8; 16];
        st(&mut buf, 0, v);
        let rest = &mut d[off..];
        let k = rest.len();
        rest.copy_from_slice(&buf[..k]);
    }
}

/// Loads 32 bytes at `s[off..]` de-interleaved by 2: vector `k` holds the
/// bytes at `off + 2 * i + k`, `i` in `0..16`.
///
/// Two plain loads and an unzip rather than `vld2q_u8`, which Miri cannot
/// run (and which is no faster on most cores).
#[inline]
#[target_feature(enable = "neon")]
pub(super) fn ld2(s: &[u8], off: usize) -> uint8x16x2_t {
    let (a, b) = (ld(s, off), ld(s, off + 16));
    uint8x16x2_t(vuzp1q_u8(a, b), vuzp2q_u8(a, b))
}

/// Loads 64 bytes at `s[off..]` de-interleaved by 4: vector `k` holds the
/// bytes at `off + 4 * i + k`, `i` in `0..16`.
#[inline]
#[target_feature(enable = "neon")]
pub(super) fn ld4(s: &[u8], off: usize) -> uint8x16x4_t {
    let s = &s[off..off + 64];
    // SAFETY: `s` is a slice of exactly 64 readable bytes, what `vld4q_u8`
    // reads; no alignment requirement.
    unsafe { vld4q_u8(s.as_ptr()) }
}

/// Inverse of [`ld2`]: interleaves the two vectors into `d[off..off + 32]`.
#[inline]
#[target_feature(enable = "neon")]
pub(super) fn st2(d: &mut [u8], off: usize, v: uint8x16x2_t) {
    let d = &mut d[off..off + 32];
    // SAFETY: `d` is an exclusively borrowed slice of exactly 32 writable
    // bytes, what `vst2q_u8` writes; no alignment requirement.
    unsafe { vst2q_u8(d.as_mut_ptr(), v) }
}

/// Inverse of [`ld4`]: interleaves the four vectors into `d[off..off + 64]`.
#[inline]
#[target_feature(enable = "neon")]
pub(super) fn st4(d: &mut [u8], off: usize, v: uint8x16x4_t) {
    let d = &mut d[off..off + 64];
    // SAFETY: `d` is an exclusively borrowed slice of exactly 64 writable
    // bytes, what `vst4q_u8` writes; no alignment requirement.
    unsafe { vst4q_u8(d.as_mut_ptr(), v) }
}

/// De-interleaves 16 elements of 8 bytes at `s[off..off + 128]`: vector `k`
/// of the result is byte `k` of elements 0..16.
///
/// `ld4` splits every element into its bytes `k` and `k + 4` (alternating
/// lanes of vector `k`); one unzip of two such loads separates them.
#[inline]
#[target_feature(enable = "neon")]
pub(super) fn gather8(s: &[u8], off: usize) -> [V; 8] {
    let a = ld4(s, off);
    let b = ld4(s, off + 64);
    [
        vuzp1q_u8(a.0, b.0),
        vuzp1q_u8(a.1, b.1),
        vuzp1q_u8(a.2, b.2),
        vuzp1q_u8(a.3, b.3),
        vuzp2q_u8(a.0, b.0),
        vuzp2q_u8(a.1, b.1),
        vuzp2q_u8(a.2, b.2),
        vuzp2q_u8(a.3, b.3),
    ]
}

/// Inverse of [`gather8`]: writes 16 elements of 8 bytes to `d[off..off + 128]`.
#[inline]
#[target_feature(enable = "neon")]
pub(super) fn scatter8(d: &mut [u8], off: usize, w: &[V; 8]) {
    let a = uint8x16x4_t(
        vzip1q_u8(w[0], w[4]),
        vzip1q_u8(w[1], w[5]),
        vzip1q_u8(w[2], w[6]),
        vzip1q_u8(w[3], w[7]),
    );
    let b = uint8x16x4_t(
        vzip2q_u8(w[0], w[4]),
        vzip2q_u8(w[1], w[5]),
        vzip2q_u8(w[2], w[6]),
        vzip2q_u8(w[3], w[7]),
    );
    st4(d, off, a);
    st4(d, off + 64, b);
}

/// De-interleaves 16 elements of 16 bytes at `s[off..off + 256]`: vector
/// `k` of the result is byte `k` of elements 0..16.
///
/// `ld4` of 4 elements leaves bytes `k`, `k + 4`, `k + 8`, `k + 12` of each
/// in vector `k`; a first unzip level separates `{k, k + 8}` from
/// `{k + 4, k + 12}`, a second one the remaining pairs.
#[inline]
#[target_feature(enable = "neon")]
pub(super) fn gather16(s: &[u8], off: usize) -> [V; 16] {
    let l0 = ld4(s, off);
    let l1 = ld4(s, off + 64);
    let l2 = ld4(s, off + 128);
    let l3 = ld4(s, off + 192);
    let mut out = [zero(); 16];
    let lanes = [
        (l0.0, l1.0, l2.0, l3.0),
        (l0.1, l1.1, l2.1, l3.1),
        (l0.2, l1.2, l2.2, l3.2),
        (l0.3, l1.3, l2.3, l3.3),
    ];
    for (k, &(a, b, c, d)) in lanes.iter().enumerate() {
        // Elements 0..8: bytes k and k + 8 alternating, and k + 4 / k + 12.
        let e1 = vuzp1q_u8(a, b);
        let o1 = vuzp2q_u8(a, b);
        // Elements 8..16.
        let e2 = vuzp1q_u8(c, d);
        let o2 = vuzp2q_u8(c, d);
        out[k] = vuzp1q_u8(e1, e2);
        out[k + 8] = vuzp2q_u8(e1, e2);
        out[k + 4] = vuzp1q_u8(o1, o2);
        out[k + 12] = vuzp2q_u8(o1, o2);
    }
    out
}

/// Inverse of [`gather16`]: writes 16 elements of 16 bytes to `d[off..off + 256]`.
#[inline]
#[target_feature(enable = "neon")]
pub(super) fn scatter16(d: &mut [u8], off: usize, w: &[V; 16]) {
    let mut l = [[zero(); 4]; 4];
    for k in 0..4 {
        let e1 = vzip1q_u8(w[k], w[k + 8]);
        let e2 = vzip2q_u8(w[k], w[k + 8]);
        let o1 = vzip1q_u8(w[k + 4], w[k + 12]);
        let o2 = vzip2q_u8(w[k + 4], w[k + 12]);
        l[0][k] = vzip1q_u8(e1, o1);
        l[1][k] = vzip2q_u8(e1, o1);
        l[2][k] = vzip1q_u8(e2, o2);
        l[3][k] = vzip2q_u8(e2, o2);
    }
    for (q, v) in l.iter().enumerate() {
        st4(d, off + 64 * q, uint8x16x4_t(v[0], v[1], v[2], v[3]));
    }
}

/// Transposes the 16x16 byte matrix whose rows are `r`: byte `c` of row `i`
/// becomes byte `i` of row `c`.
///
/// Four rounds of `trn1`/`trn2` on 1-, 2-, 4- and 8-byte units; the round on
/// `2^s`-byte units between rows `i` and `i + 2^s` swaps bit `s` of the row
/// index with bit `s` of the column index, and the four swaps together are
/// the transpose.
#[inline]
#[target_feature(enable = "neon")]
pub(super) fn transpose16(mut r: [V; 16]) -> [V; 16] {
    for i in (0..16).step_by(2) {
        let (a, b) = (r[i], r[i + 1]);
        r[i] = vtrn1q_u8(a, b);
        r[i + 1] = vtrn2q_u8(a, b);
    }
    for i in [0, 1, 4, 5, 8, 9, 12, 13] {
        let (a, b) = (vreinterpretq_u16_u8(r[i]), vreinterpretq_u16_u8(r[i + 2]));
        r[i] = vreinterpretq_u8_u16(vtrn1q_u16(a, b));
        r[i + 2] = vreinterpretq_u8_u16(vtrn2q_u16(a, b));
    }
    for i in [0, 1, 2, 3, 8, 9, 10, 11] {
        let (a, b) = (vreinterpretq_u32_u8(r[i]), vreinterpretq_u32_u8(r[i + 4]));
        r[i] = vreinterpretq_u8_u32(vtrn1q_u32(a, b));
        r[i + 4] = vreinterpretq_u8_u32(vtrn2q_u32(a, b));
    }
    for i in 0..8 {
        let (a, b) = (vreinterpretq_u64_u8(r[i]), vreinterpretq_u64_u8(r[i + 8]));
        r[i] = vreinterpretq_u8_u64(vtrn1q_u64(a, b));
        r[i + 8] = vreinterpretq_u8_u64(vtrn2q_u64(a, b));
    }
    r
}

/// In every byte lane, transposes the 8x8 bit matrix formed by the eight
/// vectors: bit `p` of lane `q` of vector `k` becomes bit `k` of lane `q` of
/// vector `p`. Self-inverse.
///
/// Three delta-swap rounds; the round of distance `s` (1, 2, 4) exchanges
/// bit `s` of the vector index with bit `s` of the bit position, between
/// vectors `k` and `k + s`.
#[inline]
#[target_feature(enable = "neon")]
pub(super) fn bit_transpose(mut w: [V; 8]) -> [V; 8] {
    // Bits whose position has bit 0 (resp. 1) clear stay in the lower vector.
    let m1 = vdupq_n_u8(0x55);
    let m2 = vdupq_n_u8(0x33);
    let m4 = vdupq_n_u8(0x0F);
    for k in [0, 2, 4, 6] {
        let (a, b) = (w[k], w[k + 1]);
        w[k] = vbslq_u8(m1, a, vshlq_n_u8::<1>(b));
        w[k + 1] = vbslq_u8(m1, vshrq_n_u8::<1>(a), b);
    }
    for k in [0, 1, 4, 5] {
        let (a, b) = (w[k], w[k + 2]);
        w[k] = vbslq_u8(m2, a, vshlq_n_u8::<2>(b));
        w[k + 2] = vbslq_u8(m2, vshrq_n_u8::<2>(a), b);
    }
    for k in 0..4 {
        let (a, b) = (w[k], w[k + 4]);
        // (`sli`/`sri` would do each in one instruction, but Miri cannot
        // run them.)
        w[k] = vbslq_u8(m4, a, vshlq_n_u8::<4>(b));
        w[k + 4] = vbslq_u8(m4, vshrq_n_u8::<4>(a), b);
    }
    w
}

/// Start indices of blocks of 16 covering `0..n` (`n >= 16`): `0, 16, ...`
/// and, when 16 does not divide `n`, a last block `n - 16` that overlaps the
/// one before it. Every kernel output byte depends on its inputs only, so
/// computing part of a block twice is harmless.
#[inline(always)]
pub(super) fn block_starts(n: usize) -> impl Iterator<Item = usize> {
    debug_assert!(n >= 16);
    (0..n / 16)
        .map(|b| 16 * b)
        .chain((!n.is_multiple_of(16)).then(|| n - 16))
}

/// Column blocks of a `ts`-byte element: `(first byte, number of bytes)`.
/// One block `(0, ts)` for `ts <= 16`, else 16-byte blocks, the last one
/// ending at `ts` (overlapping the one before it when 16 does not divide `ts`).
#[inline(always)]
pub(super) fn col_blocks(ts: usize) -> impl Iterator<Item = (usize, usize)> {
    (0..ts.div_ceil(16)).map(move |b| {
        if ts <= 16 {
            (0, ts)
        } else {
            ((16 * b).min(ts - 16), 16)
        }
    })
}
