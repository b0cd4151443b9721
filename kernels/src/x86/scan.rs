//! Running sums in vectors: BYTEDELTA decode (byte sum per stream) and
//! DELTA decode without reference (running XOR of `w`-byte words, `w` of 1,
//! 2 or 4; 8-byte words are XORed one after the other, see
//! [`xor_words8`]).
//!
//! Both are prefix scans, `y[i] = x[i] op y[i-1]`, which the scalar code
//! can only do one word after the other. Per vector:
//!
//! 1. scan inside each 16-byte lane with `log2(16 / u)` steps of
//!    `x = x op (x << u*2^s bytes)` (`pslldq`, which shifts in zeros);
//! 2. combine with the carry, the last unit of everything before,
//!    broadcast to the whole vector: `y = x op carry`; with AVX2, lane 1
//!    combines with `carry op last(lane 0)` instead (a blend of the two).
//!
//! The carry of the next vector is `carry op last(x)`, where `last(x)` is
//! computed from `x` alone: the only dependency from one vector to the next
//! is that one `op`, so consecutive vectors overlap in the pipeline. (The
//! AVX2 code avoids shuffles with a zeroed half: LLVM lowers them to a
//! `vinserti128` into an arbitrary live register, at times the carry, which
//! chains the iterations.) The few bytes after the last whole vector are
//! finished by the scalar loop, starting from the carry.

use core::arch::x86_64::*;

/// One prefix scan flavour: the operation and the unit it works on.
trait Scan {
    /// Unit size in bytes (1, 2, 4 or 8).
    const UNIT: usize;
    /// `a op b` on every unit (`op` is byte-wise, so any unit size works).
    ///
    /// # Safety
    /// SSE2 is available.
    unsafe fn op128(a: __m128i, b: __m128i) -> __m128i;
    /// As [`Scan::op128`], on 256 bits.
    ///
    /// # Safety
    /// AVX2 is available.
    unsafe fn op256(a: __m256i, b: __m256i) -> __m256i;
    /// Scalar `a op b` on one byte.
    fn op_byte(a: u8, b: u8) -> u8;
}

/// Running byte sum (BYTEDELTA decode).
struct AddBytes;

impl Scan for AddBytes {
    const UNIT: usize = 1;
    #[inline(always)]
    unsafe fn op128(a: __m128i, b: __m128i) -> __m128i {
        // SAFETY: SSE2 (caller).
        unsafe { _mm_add_epi8(a, b) }
    }
    #[inline(always)]
    unsafe fn op256(a: __m256i, b: __m256i) -> __m256i {
        // SAFETY: AVX2 (caller).
        unsafe { _mm256_add_epi8(a, b) }
    }
    #[inline(always)]
    fn op_byte(a: u8, b: u8) -> u8 {
        a.wrapping_add(b)
    }
}

/// Running XOR of `W`-byte words (DELTA decode).
struct XorWords<const W: usize>;

impl<const W: usize> Scan for XorWords<W> {
    const UNIT: usize = W;
    #[inline(always)]
    unsafe fn op128(a: __m128i, b: __m128i) -> __m128i {
        // SAFETY: SSE2 (caller).
        unsafe { _mm_xor_si128(a, b) }
    }
    #[inline(always)]
    unsafe fn op256(a: __m256i, b: __m256i) -> __m256i {
        // SAFETY: AVX2 (caller).
        unsafe { _mm256_xor_si256(a, b) }
    }
    #[inline(always)]
    fn op_byte(a: u8, b: u8) -> u8 {
        a ^ b
    }
}

/// Scan inside one 16-byte lane (step 1), SSE2.
///
/// # Safety
/// SSE2 is available.
#[inline(always)]
unsafe fn lane_scan128<S: Scan>(mut x: __m128i) -> __m128i {
    // SAFETY: SSE2 (caller).
    unsafe {
        if S::UNIT <= 1 {
            x = S::op128(x, _mm_slli_si128::<1>(x));
        }
        if S::UNIT <= 2 {
            x = S::op128(x, _mm_slli_si128::<2>(x));
        }
        if S::UNIT <= 4 {
            x = S::op128(x, _mm_slli_si128::<4>(x));
        }
        S::op128(x, _mm_slli_si128::<8>(x))
    }
}

/// Scan inside each 16-byte lane (step 1), AVX2.
///
/// # Safety
/// AVX2 is available.
#[inline(always)]
unsafe fn lane_scan256<S: Scan>(mut x: __m256i) -> __m256i {
    // SAFETY: AVX2 (caller).
    unsafe {
        if S::UNIT <= 1 {
            x = S::op256(x, _mm256_slli_si256::<1>(x));
        }
        if S::UNIT <= 2 {
            x = S::op256(x, _mm256_slli_si256::<2>(x));
        }
        if S::UNIT <= 4 {
            x = S::op256(x, _mm256_slli_si256::<4>(x));
        }
        S::op256(x, _mm256_slli_si256::<8>(x))
    }
}

/// The last `unit`-byte unit of the lane repeated over the lane, SSE2.
///
/// # Safety
/// SSE2 is available.
#[inline(always)]
unsafe fn last_unit128(unit: usize, x: __m128i) -> __m128i {
    // SAFETY: SSE2 (caller).
    unsafe {
        match unit {
            1 => {
                let t = _mm_unpackhi_epi8(x, x);
                _mm_shuffle_epi32::<0xFF>(_mm_shufflehi_epi16::<0xFF>(t))
            }
            2 => _mm_shuffle_epi32::<0xFF>(_mm_shufflehi_epi16::<0xFF>(x)),
            4 => _mm_shuffle_epi32::<0xFF>(x),
            _ => _mm_unpackhi_epi64(x, x),
        }
    }
}

/// The last `unit`-byte unit of each lane repeated over that lane, AVX2.
///
/// # Safety
/// AVX2 is available.
#[inline(always)]
unsafe fn last_unit256(unit: usize, x: __m256i) -> __m256i {
    // SAFETY: AVX2 (caller).
    unsafe {
        match unit {
            1 => _mm256_shuffle_epi8(x, _mm256_set1_epi8(15)),
            2 => _mm256_shuffle_epi8(x, _mm256_set1_epi16(0x0F0E)),
            4 => _mm256_shuffle_epi32::<0xFF>(x),
            _ => _mm256_unpackhi_epi64(x, x),
        }
    }
}

/// Scalar continuation of a scan over `src` into `dst` from the carried
/// last unit `prev` (`src.len()` a multiple of `S::UNIT`).
#[inline(always)]
fn scan_tail<S: Scan>(src: &[u8], dst: &mut [u8], prev: &[u8; 16]) {
    let u = S::UNIT;
    let mut prev = *prev;
    for (o, i) in dst.chunks_exact_mut(u).zip(src.chunks_exact(u)) {
        for ((o, &i), &p) in o.iter_mut().zip(i).zip(&prev) {
            *o = S::op_byte(i, p);
        }
        prev[..u].copy_from_slice(o);
    }
}

/// Prefix scan of `src` into `dst` (equal lengths, a multiple of the unit),
/// starting from zero, 16 bytes at a time.
///
/// # Safety
/// SSE2 is available.
#[inline(always)]
unsafe fn scan128<S: Scan>(src: &[u8], dst: &mut [u8]) {
    assert_eq!(src.len(), dst.len());
    let len = src.len();
    let body = len - len % 16;
    let (sp, dp) = (src.as_ptr(), dst.as_mut_ptr());
    let mut prev = [0u8; 16];
    // SAFETY: SSE2 (caller); `i + 16 <= body <= len` for every load and
    // store, `prev` is 16 writable bytes.
    unsafe {
        let mut carry = _mm_setzero_si128();
        let mut i = 0;
        while i < body {
            let x = lane_scan128::<S>(_mm_loadu_si128(sp.add(i).cast()));
            _mm_storeu_si128(dp.add(i).cast(), S::op128(x, carry));
            carry = S::op128(carry, last_unit128(S::UNIT, x));
            i += 16;
        }
        _mm_storeu_si128(prev.as_mut_ptr().cast(), carry);
    }
    scan_tail::<S>(&src[body..], &mut dst[body..], &prev);
}

/// Prefix scan of `src` into `dst` (equal lengths, a multiple of the unit),
/// starting from zero, 32 bytes at a time.
///
/// # Safety
/// AVX2 is available.
#[inline(always)]
unsafe fn scan256<S: Scan>(src: &[u8], dst: &mut [u8]) {
    assert_eq!(src.len(), dst.len());
    let len = src.len();
    let body = len - len % 32;
    let (sp, dp) = (src.as_ptr(), dst.as_mut_ptr());
    let mut prev = [0u8; 16];
    // SAFETY: AVX2 (caller); `i + 32 <= body <= len` for every load and
    // store, `prev` is 16 writable bytes.
    unsafe {
        let mut carry = _mm256_setzero_si256();
        let mut i = 0;
        while i < body {
            let x = lane_scan256::<S>(_mm256_loadu_si256(sp.add(i).cast()));
            // The last unit of lane 0 and of lane 1, each over the vector.
            let last = last_unit256(S::UNIT, x);
            let last0 = _mm256_permute4x64_epi64::<0x55>(last);
            let last1 = _mm256_permute4x64_epi64::<0xFF>(last);
            // Lane 0 continues the carry, lane 1 the carry and lane 0.
            let c = _mm256_blend_epi32::<0xF0>(carry, S::op256(carry, last0));
            _mm256_storeu_si256(dp.add(i).cast(), S::op256(x, c));
            carry = S::op256(carry, S::op256(last0, last1));
            i += 32;
        }
        _mm_storeu_si128(prev.as_mut_ptr().cast(), _mm256_castsi256_si128(carry));
    }
    scan_tail::<S>(&src[body..], &mut dst[body..], &prev);
}

/// BYTEDELTA decode (same contract as `generic::bytedelta_decode`).
///
/// # Safety
/// SSE2 is available (`WIDE == false`) or AVX2 is (`WIDE == true`).
#[inline(always)]
pub(super) unsafe fn bytedelta_decode<const WIDE: bool>(ts: usize, src: &[u8], dst: &mut [u8]) {
    assert_eq!(src.len(), dst.len());
    let l = src.len() / ts;
    let body = l * ts;
    if l > 0 {
        for (d, s) in dst[..body]
            .chunks_exact_mut(l)
            .zip(src[..body].chunks_exact(l))
        {
            // SAFETY: the caller guarantees the ISA.
            unsafe {
                if WIDE {
                    scan256::<AddBytes>(s, d);
                } else {
                    scan128::<AddBytes>(s, d);
                }
            }
        }
    }
    dst[body..].copy_from_slice(&src[body..]);
}

/// DELTA decode (same contract as `generic::delta_decode`): the running XOR
/// of words for block 0 (no reference), the reference's XOR otherwise.
///
/// # Safety
/// SSE2 is available (`WIDE == false`) or AVX2 is (`WIDE == true`).
#[inline(always)]
pub(super) unsafe fn delta_decode<const WIDE: bool>(
    ts: usize,
    reference: Option<&[u8]>,
    src: &[u8],
    dst: &mut [u8],
) {
    if reference.is_some() {
        return crate::generic::delta_decode(ts, reference, src, dst);
    }
    assert_eq!(src.len(), dst.len());
    let w = crate::generic::delta_width(ts);
    let body = src.len() - src.len() % w;
    let (s, d) = (&src[..body], &mut dst[..body]);
    // SAFETY: the caller guarantees the ISA.
    unsafe {
        match (w, WIDE) {
            (1, true) => scan256::<XorWords<1>>(s, d),
            (2, true) => scan256::<XorWords<2>>(s, d),
            (4, true) => scan256::<XorWords<4>>(s, d),
            (1, false) => scan128::<XorWords<1>>(s, d),
            (2, false) => scan128::<XorWords<2>>(s, d),
            (4, false) => scan128::<XorWords<4>>(s, d),
            _ => xor_words8(s, d),
        }
    }
    dst[body..].copy_from_slice(&src[body..]);
}

/// Running XOR of 8-byte words, one word after the other (`d.len() ==
/// s.len()`, a multiple of 8). The vector scan needs three shuffles per 32
/// bytes for 8-byte words, and one XOR per word is the whole scalar chain:
/// 256 KiB took 9.2 us as [`scan256`] and 7.7 us here on the CI machine
/// (AMD EPYC, family 26; session 26), and the sweep's `delta+shuffle/ts8`
/// rows were its slowest decodes against C-Blosc2 3.3.5 (0.82-0.87).
#[inline(always)]
fn xor_words8(s: &[u8], d: &mut [u8]) {
    let mut prev = 0u64;
    for (x, y) in s.chunks_exact(8).zip(d.chunks_exact_mut(8)) {
        prev ^= u64::from_ne_bytes(x.try_into().unwrap());
        y.copy_from_slice(&prev.to_ne_bytes());
    }
}
