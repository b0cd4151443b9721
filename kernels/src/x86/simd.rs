//! The vector abstraction the x86 kernels are written over.
//!
//! A [`Simd`] value is `LANES` independent 16-byte lanes: `__m128i` (SSE2,
//! one lane) or `__m256i` (AVX2, two lanes). Every arithmetic operation
//! acts on each lane separately, exactly like the SSE2 instruction of the
//! same name, so one algorithm serves both widths; only loads and stores see
//! the lanes, which lets the caller decide where in memory each lane's data
//! lives (`load_lanes`, `store_lane`).
//!
//! All methods are `unsafe`: they may only run on a CPU that has the
//! instruction set of the implementing type (SSE2 for `__m128i`, AVX2 for
//! `__m256i`), and the pointer methods additionally need their bytes to be
//! valid. They are `#[inline(always)]` without `#[target_feature]`: they
//! are meant to be inlined into the `#[target_feature]` entry points of
//! `sse2.rs` / `avx2.rs`, whose caller checked the feature.
//!
//! # Byte transposes
//!
//! [`Simd::shuf`] and [`Simd::unshuf`] are the register part of a byte
//! (un)shuffle of 16 elements of `T` bytes per lane (`T` in 2, 4, 8, 16).
//! Seen per lane, with byte index bits `P0..P3` and register index bits
//! `R0..R(t-1)` (`T = 2^t`), `shuf` takes the layout `e*T + j` (register
//! `k` holds bytes `16k..16k+16` of the 16 elements) to `j*16 + e`
//! (register `j` holds byte `j` of each element, in element order). The
//! default implementations use two SSE2 building blocks:
//!
//! - [`zip_round`]: `punpcklbw`/`punpckhbw` of registers `k` and `k + N/2`
//!   into `2k` and `2k + 1`; rotates the bit string `(P0..P3, R0..)` right
//!   by one (the top register bit becomes `P0`, `P3` becomes `R0`);
//! - [`unzip_round`]: the even and odd bytes of registers `2k` and `2k + 1`
//!   packed (`packuswb`) into `k` and `k + N/2`; rotates it left by one.
//!
//! A shuffle is a left rotation by `t` (or right by 4), an unshuffle a right
//! rotation by `t`. AVX2 overrides the shuffles of 2, 4 and 8 bytes with
//! `pshufb` + bit swaps (see `avx2_ops`); its unshuffles are the zip rounds.
//! (An 8-byte unshuffle as the swaps of the shuffle in reverse plus one
//! `pshufb` is 56 vector operations per 8 registers where three zip rounds
//! are 24, plus 8 lane recombinations at the store either way: it measured
//! 0.72-0.83x of the zip rounds' speed on AMD Zen 4, where blends, shifts and
//! byte shuffles share the same two vector pipes.)

use core::arch::x86_64::*;

/// One or two 16-byte lanes; see the module documentation.
pub(super) trait Simd: Copy {
    /// Bytes in a vector: `16 * LANES`.
    const BYTES: usize;
    /// Independent 16-byte lanes in a vector.
    const LANES: usize;

    /// All zero.
    unsafe fn zero() -> Self;
    /// Every byte `x`.
    unsafe fn splat8(x: u8) -> Self;
    /// Every 16-bit word `x`.
    unsafe fn splat16(x: u16) -> Self;
    /// `BYTES` bytes from `p`.
    unsafe fn load(p: *const u8) -> Self;
    /// `BYTES` bytes to `p`.
    unsafe fn store(p: *mut u8, v: Self);
    /// `BYTES` bytes to `p`, a multiple of `BYTES`, as a non-temporal
    /// store: it goes to memory without a read-for-ownership and without
    /// filling the caches. [`sfence`] orders such stores before later ones.
    #[inline(always)]
    unsafe fn store_stream(p: *mut u8, v: Self) {
        // Miri cannot run `movntdq` (inline assembly in core::arch): there
        // the store is an ordinary one, after checking its alignment.
        if cfg!(miri) {
            assert!(
                p.addr().is_multiple_of(Self::BYTES),
                "misaligned streaming store"
            );
            // SAFETY: the ISA and `BYTES` writable bytes at `p` (caller).
            return unsafe { Self::store(p, v) };
        }
        // SAFETY: the ISA and `BYTES` writable, aligned bytes at `p`
        // (caller).
        unsafe { Self::stream(p, v) }
    }
    /// The instruction behind [`Simd::store_stream`] (same contract).
    unsafe fn stream(p: *mut u8, v: Self);
    /// Lane `l` from the 16 bytes at `p + l * stride`.
    unsafe fn load_lanes(p: *const u8, stride: usize) -> Self;
    /// Lane `lane` of `v` to the 16 bytes at `p`.
    unsafe fn store_lane(p: *mut u8, lane: usize, v: Self);
    /// Per lane: bytes 0..8 of `a` and `b` interleaved (`punpcklbw`).
    unsafe fn unpacklo8(a: Self, b: Self) -> Self;
    /// Per lane: bytes 8..16 of `a` and `b` interleaved (`punpckhbw`).
    unsafe fn unpackhi8(a: Self, b: Self) -> Self;
    /// Per lane: words of `a` then of `b`, saturated to bytes (`packuswb`).
    unsafe fn packus16(a: Self, b: Self) -> Self;
    /// Bitwise and.
    unsafe fn and(a: Self, b: Self) -> Self;
    /// Bitwise xor.
    unsafe fn xor(a: Self, b: Self) -> Self;
    /// Logical right shift of each 16-bit word by `S`.
    unsafe fn srli16<const S: i32>(a: Self) -> Self;
    /// Logical right shift of each 64-bit word by `S`.
    unsafe fn srli64<const S: i32>(a: Self) -> Self;
    /// Left shift of each 64-bit word by `S`.
    unsafe fn slli64<const S: i32>(a: Self) -> Self;

    /// Lane `l` to the 16 bytes at `p + l * stride`, lane 0 first.
    #[inline(always)]
    unsafe fn store_lanes(p: *mut u8, stride: usize, v: Self) {
        for l in 0..Self::LANES {
            // SAFETY: the caller guarantees the ISA and the 16 bytes at
            // `p + l * stride` for every lane.
            unsafe { Self::store_lane(p.add(l * stride), l, v) }
        }
    }

    /// Lane `l` of `a` to `p + l * stride` and lane `l` of `b` right after
    /// it (16 bytes further), lane 0 first.
    #[inline(always)]
    unsafe fn store_lane_pairs(p: *mut u8, stride: usize, a: Self, b: Self) {
        for l in 0..Self::LANES {
            // SAFETY: the caller guarantees the ISA and the 32 bytes at
            // `p + l * stride` for every lane.
            unsafe {
                Self::store_lane(p.add(l * stride), l, a);
                Self::store_lane(p.add(l * stride + 16), l, b);
            }
        }
    }

    /// Register part of a byte shuffle of 16 `T`-byte elements per lane
    /// (`T` in 2, 4, 8, 16): register `k` holds bytes `16k..16k+16` of the
    /// elements before, register `j` holds byte `j` of every element after.
    #[inline(always)]
    unsafe fn shuf<const T: usize>(r: &mut [Self; T]) {
        // SAFETY: the caller guarantees the ISA.
        unsafe {
            if T <= 4 {
                for _ in 0..T.trailing_zeros() {
                    unzip_round(r);
                }
            } else {
                for _ in 0..4 {
                    zip_round(r);
                }
            }
        }
    }

    /// Inverse of [`Simd::shuf`].
    #[inline(always)]
    unsafe fn unshuf<const T: usize>(r: &mut [Self; T]) {
        // SAFETY: the caller guarantees the ISA.
        unsafe {
            for _ in 0..T.trailing_zeros() {
                zip_round(r);
            }
        }
    }
}

/// Registers `k` and `k + N/2` interleaved into `2k` (low halves) and
/// `2k + 1` (high halves): per lane, the address bit string
/// `(P0..P3, R0..)` rotates right by one.
///
/// # Safety
/// The CPU supports `V`'s instruction set.
#[inline(always)]
pub(super) unsafe fn zip_round<V: Simd, const N: usize>(r: &mut [V; N]) {
    let h = N / 2;
    let s = *r;
    for k in 0..h {
        // SAFETY: the caller guarantees the ISA.
        unsafe {
            r[2 * k] = V::unpacklo8(s[k], s[k + h]);
            r[2 * k + 1] = V::unpackhi8(s[k], s[k + h]);
        }
    }
}

/// Even bytes of registers `2k`, `2k + 1` packed into `k`, odd bytes into
/// `k + N/2`: per lane, the address bit string rotates left by one.
///
/// # Safety
/// The CPU supports `V`'s instruction set.
#[inline(always)]
pub(super) unsafe fn unzip_round<V: Simd, const N: usize>(r: &mut [V; N]) {
    let h = N / 2;
    let s = *r;
    // SAFETY: the caller guarantees the ISA.
    unsafe {
        let lo = V::splat16(0x00FF);
        for k in 0..h {
            let (a, b) = (s[2 * k], s[2 * k + 1]);
            r[k] = V::packus16(V::and(a, lo), V::and(b, lo));
            r[k + h] = V::packus16(V::srli16::<8>(a), V::srli16::<8>(b));
        }
    }
}

/// 8x8 bit transposes across eight registers: bit `b` of byte `q` of
/// register `k` goes to bit `k` of byte `q` of register `b` (self-inverse).
/// Three rounds of delta swaps, each exchanging one register index bit with
/// the bit index bit of the same weight.
///
/// # Safety
/// The CPU supports `V`'s instruction set.
#[inline(always)]
pub(super) unsafe fn bitplanes8<V: Simd>(r: &mut [V; 8]) {
    // SAFETY: the caller guarantees the ISA.
    unsafe {
        let m1 = V::splat8(0x55);
        for k in [0, 2, 4, 6] {
            delta_swap::<V, 1>(r, k, k + 1, m1);
        }
        let m2 = V::splat8(0x33);
        for k in [0, 1, 4, 5] {
            delta_swap::<V, 2>(r, k, k + 2, m2);
        }
        let m4 = V::splat8(0x0F);
        for k in [0, 1, 2, 3] {
            delta_swap::<V, 4>(r, k, k + 4, m4);
        }
    }
}

/// Exchanges the bits at positions `y + S` of `r[a]` with those at `y` of
/// `r[b]`, for the bit positions `y` selected by `m` (within each byte).
///
/// # Safety
/// The CPU supports `V`'s instruction set.
#[inline(always)]
unsafe fn delta_swap<V: Simd, const S: i32>(r: &mut [V; 8], a: usize, b: usize, m: V) {
    // SAFETY: the caller guarantees the ISA.
    unsafe {
        let t = V::and(V::xor(V::srli64::<S>(r[a]), r[b]), m);
        r[b] = V::xor(r[b], t);
        r[a] = V::xor(r[a], V::slli64::<S>(t));
    }
}

impl Simd for __m128i {
    const BYTES: usize = 16;
    const LANES: usize = 1;

    #[inline(always)]
    unsafe fn zero() -> Self {
        // SAFETY: SSE2 (trait contract).
        unsafe { _mm_setzero_si128() }
    }
    #[inline(always)]
    unsafe fn splat8(x: u8) -> Self {
        // SAFETY: SSE2 (trait contract).
        unsafe { _mm_set1_epi8(x as i8) }
    }
    #[inline(always)]
    unsafe fn splat16(x: u16) -> Self {
        // SAFETY: SSE2 (trait contract).
        unsafe { _mm_set1_epi16(x as i16) }
    }
    #[inline(always)]
    unsafe fn load(p: *const u8) -> Self {
        // SAFETY: SSE2 and 16 readable bytes at `p` (trait contract).
        unsafe { _mm_loadu_si128(p.cast()) }
    }
    #[inline(always)]
    unsafe fn store(p: *mut u8, v: Self) {
        // SAFETY: SSE2 and 16 writable bytes at `p` (trait contract).
        unsafe { _mm_storeu_si128(p.cast(), v) }
    }
    #[inline(always)]
    unsafe fn stream(p: *mut u8, v: Self) {
        // SAFETY: SSE2 and 16 writable bytes at `p`, 16-byte aligned (trait
        // contract).
        unsafe { _mm_stream_si128(p.cast(), v) }
    }
    #[inline(always)]
    unsafe fn load_lanes(p: *const u8, _stride: usize) -> Self {
        // SAFETY: SSE2 and 16 readable bytes at `p` (trait contract).
        unsafe { _mm_loadu_si128(p.cast()) }
    }
    #[inline(always)]
    unsafe fn store_lane(p: *mut u8, _lane: usize, v: Self) {
        // SAFETY: SSE2 and 16 writable bytes at `p` (trait contract).
        unsafe { _mm_storeu_si128(p.cast(), v) }
    }
    #[inline(always)]
    unsafe fn unpacklo8(a: Self, b: Self) -> Self {
        // SAFETY: SSE2 (trait contract).
        unsafe { _mm_unpacklo_epi8(a, b) }
    }
    #[inline(always)]
    unsafe fn unpackhi8(a: Self, b: Self) -> Self {
        // SAFETY: SSE2 (trait contract).
        unsafe { _mm_unpackhi_epi8(a, b) }
    }
    #[inline(always)]
    unsafe fn packus16(a: Self, b: Self) -> Self {
        // SAFETY: SSE2 (trait contract).
        unsafe { _mm_packus_epi16(a, b) }
    }
    #[inline(always)]
    unsafe fn and(a: Self, b: Self) -> Self {
        // SAFETY: SSE2 (trait contract).
        unsafe { _mm_and_si128(a, b) }
    }
    #[inline(always)]
    unsafe fn xor(a: Self, b: Self) -> Self {
        // SAFETY: SSE2 (trait contract).
        unsafe { _mm_xor_si128(a, b) }
    }
    #[inline(always)]
    unsafe fn srli16<const S: i32>(a: Self) -> Self {
        // SAFETY: SSE2 (trait contract).
        unsafe { _mm_srli_epi16::<S>(a) }
    }
    #[inline(always)]
    unsafe fn srli64<const S: i32>(a: Self) -> Self {
        // SAFETY: SSE2 (trait contract).
        unsafe { _mm_srli_epi64::<S>(a) }
    }
    #[inline(always)]
    unsafe fn slli64<const S: i32>(a: Self) -> Self {
        // SAFETY: SSE2 (trait contract).
        unsafe { _mm_slli_epi64::<S>(a) }
    }
}

impl Simd for __m256i {
    const BYTES: usize = 32;
    const LANES: usize = 2;

    #[inline(always)]
    unsafe fn zero() -> Self {
        // SAFETY: AVX2 (trait contract).
        unsafe { _mm256_setzero_si256() }
    }
    #[inline(always)]
    unsafe fn splat8(x: u8) -> Self {
        // SAFETY: AVX2 (trait contract).
        unsafe { _mm256_set1_epi8(x as i8) }
    }
    #[inline(always)]
    unsafe fn splat16(x: u16) -> Self {
        // SAFETY: AVX2 (trait contract).
        unsafe { _mm256_set1_epi16(x as i16) }
    }
    #[inline(always)]
    unsafe fn load(p: *const u8) -> Self {
        // SAFETY: AVX2 and 32 readable bytes at `p` (trait contract).
        unsafe { _mm256_loadu_si256(p.cast()) }
    }
    #[inline(always)]
    unsafe fn store(p: *mut u8, v: Self) {
        // SAFETY: AVX2 and 32 writable bytes at `p` (trait contract).
        unsafe { _mm256_storeu_si256(p.cast(), v) }
    }
    #[inline(always)]
    unsafe fn stream(p: *mut u8, v: Self) {
        // SAFETY: AVX2 and 32 writable bytes at `p`, 32-byte aligned (trait
        // contract).
        unsafe { _mm256_stream_si256(p.cast(), v) }
    }
    #[inline(always)]
    unsafe fn load_lanes(p: *const u8, stride: usize) -> Self {
        // SAFETY: AVX2 and 16 readable bytes at `p` and at `p + stride`
        // (trait contract).
        unsafe { _mm256_loadu2_m128i(p.add(stride).cast(), p.cast()) }
    }
    #[inline(always)]
    unsafe fn store_lane(p: *mut u8, lane: usize, v: Self) {
        // SAFETY: AVX2 and 16 writable bytes at `p` (trait contract).
        unsafe {
            let x = if lane == 0 {
                _mm256_castsi256_si128(v)
            } else {
                _mm256_extracti128_si256::<1>(v)
            };
            _mm_storeu_si128(p.cast(), x)
        }
    }
    /// Recombines the lanes (`vperm2i128`) to store 32 bytes at a time.
    #[inline(always)]
    unsafe fn store_lane_pairs(p: *mut u8, stride: usize, a: Self, b: Self) {
        // SAFETY: AVX2 and 32 writable bytes at `p` and `p + stride` (trait
        // contract).
        unsafe {
            _mm256_storeu_si256(p.cast(), _mm256_permute2x128_si256::<0x20>(a, b));
            _mm256_storeu_si256(
                p.add(stride).cast(),
                _mm256_permute2x128_si256::<0x31>(a, b),
            );
        }
    }
    #[inline(always)]
    unsafe fn unpacklo8(a: Self, b: Self) -> Self {
        // SAFETY: AVX2 (trait contract).
        unsafe { _mm256_unpacklo_epi8(a, b) }
    }
    #[inline(always)]
    unsafe fn unpackhi8(a: Self, b: Self) -> Self {
        // SAFETY: AVX2 (trait contract).
        unsafe { _mm256_unpackhi_epi8(a, b) }
    }
    #[inline(always)]
    unsafe fn packus16(a: Self, b: Self) -> Self {
        // SAFETY: AVX2 (trait contract).
        unsafe { _mm256_packus_epi16(a, b) }
    }
    #[inline(always)]
    unsafe fn and(a: Self, b: Self) -> Self {
        // SAFETY: AVX2 (trait contract).
        unsafe { _mm256_and_si256(a, b) }
    }
    #[inline(always)]
    unsafe fn xor(a: Self, b: Self) -> Self {
        // SAFETY: AVX2 (trait contract).
        unsafe { _mm256_xor_si256(a, b) }
    }
    #[inline(always)]
    unsafe fn srli16<const S: i32>(a: Self) -> Self {
        // SAFETY: AVX2 (trait contract).
        unsafe { _mm256_srli_epi16::<S>(a) }
    }
    #[inline(always)]
    unsafe fn srli64<const S: i32>(a: Self) -> Self {
        // SAFETY: AVX2 (trait contract).
        unsafe { _mm256_srli_epi64::<S>(a) }
    }
    #[inline(always)]
    unsafe fn slli64<const S: i32>(a: Self) -> Self {
        // SAFETY: AVX2 (trait contract).
        unsafe { _mm256_slli_epi64::<S>(a) }
    }

    #[inline(always)]
    unsafe fn shuf<const T: usize>(r: &mut [Self; T]) {
        // SAFETY: AVX2 (trait contract).
        unsafe { avx2_ops::shuf(r) }
    }
}

/// AVX2 byte transposes built on `pshufb` and bit swaps.
///
/// A *swap* of byte index bit `Pi` with register index bit `Rx` pairs the
/// registers `k` and `k + 2^x` (`k` with bit `x` clear): the low result
/// takes the units of both with `Pi = 0`, the high one those with `Pi = 1`.
/// For `P3` (8-byte units) that is `punpcklqdq`/`punpckhqdq`; for `P2` and
/// `P1` a 32- or 16-bit shift of one operand and a `vpblendd`/`vpblendw`,
/// which leave the shuffle ports alone. `pshufb` permutes the `P` bits of
/// one register in a single instruction.
mod avx2_ops {
    use core::arch::x86_64::*;

    use super::zip_round;

    /// `pshufb` control grouping each lane's bytes by position in a `T`-byte
    /// element: byte `p` of the result is byte `p / (16/T) + T * (p % (16/T))`.
    #[inline(always)]
    unsafe fn group_mask<const T: usize>() -> __m256i {
        let m: [u8; 16] = match T {
            2 => [0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15],
            4 => [0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15],
            _ => [0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15],
        };
        // SAFETY: AVX2 (caller); the load reads the 16 bytes of `m`.
        unsafe { _mm256_broadcastsi128_si256(_mm_loadu_si128(m.as_ptr().cast())) }
    }

    /// Swap of `P3` with the register bit of stride `X`.
    #[inline(always)]
    unsafe fn swap64<const N: usize, const X: usize>(r: &mut [__m256i; N]) {
        for k in 0..N {
            if k & X != 0 {
                continue;
            }
            // SAFETY: AVX2 (caller).
            unsafe {
                let (a, b) = (r[k], r[k + X]);
                r[k] = _mm256_unpacklo_epi64(a, b);
                r[k + X] = _mm256_unpackhi_epi64(a, b);
            }
        }
    }

    /// Swap of `P2` with the register bit of stride `X`.
    #[inline(always)]
    unsafe fn swap32<const N: usize, const X: usize>(r: &mut [__m256i; N]) {
        for k in 0..N {
            if k & X != 0 {
                continue;
            }
            // SAFETY: AVX2 (caller).
            unsafe {
                let (a, b) = (r[k], r[k + X]);
                r[k] = _mm256_blend_epi32::<0xAA>(a, _mm256_slli_epi64::<32>(b));
                r[k + X] = _mm256_blend_epi32::<0xAA>(_mm256_srli_epi64::<32>(a), b);
            }
        }
    }

    /// Swap of `P1` with the register bit of stride `X`.
    #[inline(always)]
    unsafe fn swap16<const N: usize, const X: usize>(r: &mut [__m256i; N]) {
        for k in 0..N {
            if k & X != 0 {
                continue;
            }
            // SAFETY: AVX2 (caller).
            unsafe {
                let (a, b) = (r[k], r[k + X]);
                r[k] = _mm256_blend_epi16::<0xAA>(a, _mm256_slli_epi32::<16>(b));
                r[k + X] = _mm256_blend_epi16::<0xAA>(_mm256_srli_epi32::<16>(a), b);
            }
        }
    }

    /// `pshufb` of every register with `m`.
    #[inline(always)]
    unsafe fn pshufb_all<const N: usize>(r: &mut [__m256i; N], m: __m256i) {
        for v in r.iter_mut() {
            // SAFETY: AVX2 (caller).
            *v = unsafe { _mm256_shuffle_epi8(*v, m) };
        }
    }

    /// See `Simd::shuf`. `T` = 2, 4, 8: group each lane's bytes by byte
    /// position (`pshufb`: `P` becomes `(e.., j..)`), then swap the `t` top
    /// `P` bits with the register bits. `T` = 16: [`tr16`].
    ///
    /// # Safety
    /// AVX2 is available.
    #[inline(always)]
    pub(super) unsafe fn shuf<const T: usize>(r: &mut [__m256i; T]) {
        // SAFETY: AVX2 (caller).
        unsafe {
            match T {
                2 => {
                    pshufb_all(r, group_mask::<2>());
                    swap64::<T, 1>(r);
                }
                4 => {
                    pshufb_all(r, group_mask::<4>());
                    swap32::<T, 1>(r);
                    swap64::<T, 2>(r);
                }
                8 => {
                    pshufb_all(r, group_mask::<8>());
                    swap16::<T, 1>(r);
                    swap32::<T, 2>(r);
                    swap64::<T, 4>(r);
                }
                _ => tr16(r),
            }
        }
    }

    /// 16x16 byte transpose of each lane: byte `p` of register `k` goes to
    /// byte `k` of register `p`. One zip round, then swaps of `P1`, `P2`,
    /// `P3` with register bits: 32 `punpck*` and 16 `vpblendw` instead of
    /// the 64 `punpck*` of four zip rounds (shuffles are the bottleneck).
    /// The registers are taken and put back in the orders that make the
    /// bit permutations come out as a plain transpose:
    ///
    /// - with input register `k'` holding element `2 * (k' % 8) + k' / 8`,
    ///   its index bits are `(e1, e2, e3, e0)` and the bit string
    ///   `(j0 j1 j2 j3 | e1 e2 e3 e0)` becomes `(e0 j0 j1 j2 | j3 e1 e2 e3)`
    ///   after the zip round, and `(e0 e1 e2 e3 | j3 j0 j1 j2)` after the
    ///   swaps;
    /// - so output register `q` holds stream `(q >> 1) | ((q & 1) << 3)`.
    ///
    /// # Safety
    /// AVX2 is available.
    #[inline(always)]
    unsafe fn tr16<const T: usize>(r: &mut [__m256i; T]) {
        // SAFETY: AVX2 (caller).
        unsafe {
            let mut x = [_mm256_setzero_si256(); 16];
            for (k, x) in x.iter_mut().enumerate() {
                *x = r[2 * (k % 8) + k / 8];
            }
            zip_round(&mut x);
            swap16::<16, 2>(&mut x);
            swap32::<16, 4>(&mut x);
            swap64::<16, 8>(&mut x);
            for (q, x) in x.iter().enumerate() {
                r[(q >> 1) | ((q & 1) << 3)] = *x;
            }
        }
    }
}

/// Asks for the cache lines of `p + from .. p + to` ahead of the stores
/// that will fill them (a read prefetch, `prefetcht0`: every x86-64 CPU has
/// it, and it reads nothing a program can see). A kernel whose output goes
/// to memory not in the caches (a chunk decoded into a large buffer) stalled
/// on the lines it writes a piece at a time: `perf/README.md`, session 42.
///
/// # Safety
/// None beyond SSE (part of the x86-64 baseline): the addresses are only
/// hints, never dereferenced, so they may lie anywhere.
#[inline(always)]
pub(super) unsafe fn prefetch_lines(p: *const u8, from: usize, to: usize) {
    // Miri has nothing to fetch.
    if cfg!(miri) {
        return;
    }
    let mut o = from;
    while o < to {
        // SAFETY: SSE (part of the x86-64 baseline); a prefetch accesses no
        // memory, so the address need not be in bounds (it is made with
        // `wrapping_add`, without claiming it is).
        unsafe { _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(o).cast()) };
        o += 64;
    }
}

/// Orders the non-temporal stores before it ([`Simd::store_stream`]) before
/// every later store, so that they are visible as ordinary stores are.
///
/// # Safety
/// The CPU supports SSE2 (every x86-64 CPU does).
#[inline(always)]
pub(super) unsafe fn sfence() {
    // Miri runs the streaming stores as ordinary ones (see `store_stream`).
    if !cfg!(miri) {
        // SAFETY: SSE (part of the x86-64 baseline).
        unsafe { _mm_sfence() }
    }
}
