//! DELTA, TRUNC_PREC and BYTEDELTA.
//!
//! All three are element-wise or running operations on 16-byte vectors:
//!
//! - DELTA with a reference, and TRUNC_PREC: one `eor`/`and` per vector;
//! - DELTA forward without reference: the vector XORed with the (unaligned)
//!   vector one word before it;
//! - DELTA backward without reference: a running XOR of words. In each
//!   vector a log-step prefix XOR (the vector XORed with itself shifted up
//!   by 1, 2, 4, 8 bytes via `ext` with zero, starting at one word), then the
//!   last word of the previous vector broadcast over it;
//! - BYTEDELTA forward: per stream, the vector minus the one a byte before;
//!   backward: the same log-step prefix sum with `add`, plus the last byte of
//!   the previous vector.
//!
//! What does not fill a vector is done in scalar code (or by the scalar
//! reference on the remaining suffix, which is the same computation there).

use core::arch::aarch64::*;

use super::prims::*;
use crate::generic;

/// DELTA forward; same contract and output as [`generic::delta_encode`].
#[target_feature(enable = "neon")]
pub(crate) fn delta_encode(ts: usize, reference: Option<&[u8]>, src: &[u8], dst: &mut [u8]) {
    let w = generic::delta_width(ts);
    let body = src.len() - src.len() % w;
    match reference {
        Some(r) => xor_with_reference(ts, r, src, dst),
        None => {
            let head = w.min(body);
            dst[..head].copy_from_slice(&src[..head]);
            let mut i = head;
            while i >= w && body - i >= 16 {
                st(dst, i, veorq_u8(ld(src, i), ld(src, i - w)));
                i += 16;
            }
            for k in i..body {
                dst[k] = src[k] ^ src[k - w];
            }
            dst[body..].copy_from_slice(&src[body..]);
        }
    }
}

/// DELTA backward; same contract and output as [`generic::delta_decode`].
#[target_feature(enable = "neon")]
pub(crate) fn delta_decode(ts: usize, reference: Option<&[u8]>, src: &[u8], dst: &mut [u8]) {
    let w = generic::delta_width(ts);
    let body = src.len() - src.len() % w;
    match reference {
        Some(r) => xor_with_reference(ts, r, src, dst),
        None => {
            match w {
                1 => prefix_xor::<1>(&src[..body], &mut dst[..body]),
                2 => prefix_xor::<2>(&src[..body], &mut dst[..body]),
                4 => prefix_xor::<4>(&src[..body], &mut dst[..body]),
                _ => prefix_xor::<8>(&src[..body], &mut dst[..body]),
            }
            dst[body..].copy_from_slice(&src[body..]);
        }
    }
}

/// Both directions of DELTA with a reference block: `dst = src ^ reference`
/// over the whole words, the byte tail copied.
#[target_feature(enable = "neon")]
fn xor_with_reference(ts: usize, r: &[u8], src: &[u8], dst: &mut [u8]) {
    let len = src.len();
    let mut i = 0;
    while len - i >= 16 {
        st(dst, i, veorq_u8(ld(src, i), ld(r, i)));
        i += 16;
    }
    // `i` is a multiple of 16, hence of the word width: the rest is the same
    // operation on a shorter buffer.
    generic::delta_encode(ts, Some(&r[i..]), &src[i..], &mut dst[i..]);
}

/// Running XOR of `W`-byte words over `src` (a whole number of words):
/// `dst[k] = src[k] ^ dst[k - W]`.
#[inline]
#[target_feature(enable = "neon")]
fn prefix_xor<const W: usize>(src: &[u8], dst: &mut [u8]) {
    let len = src.len();
    let mut carry = zero();
    let mut i = 0;
    while len - i >= 16 {
        let mut v = ld(src, i);
        if W <= 1 {
            v = veorq_u8(v, vextq_u8::<15>(zero(), v));
        }
        if W <= 2 {
            v = veorq_u8(v, vextq_u8::<14>(zero(), v));
        }
        if W <= 4 {
            v = veorq_u8(v, vextq_u8::<12>(zero(), v));
        }
        v = veorq_u8(v, vextq_u8::<8>(zero(), v));
        v = veorq_u8(v, carry);
        st(dst, i, v);
        carry = match W {
            1 => vdupq_laneq_u8::<15>(v),
            2 => vreinterpretq_u8_u16(vdupq_laneq_u16::<7>(vreinterpretq_u16_u8(v))),
            4 => vreinterpretq_u8_u32(vdupq_laneq_u32::<3>(vreinterpretq_u32_u8(v))),
            _ => vreinterpretq_u8_u64(vdupq_laneq_u64::<1>(vreinterpretq_u64_u8(v))),
        };
        i += 16;
    }
    for k in i..len {
        dst[k] = if k >= W { src[k] ^ dst[k - W] } else { src[k] };
    }
}

/// TRUNC_PREC; same contract and output as [`generic::trunc_prec`].
#[target_feature(enable = "neon")]
pub(crate) fn trunc_prec(ts: usize, zeroed: u32, src: &[u8], dst: &mut [u8]) {
    let body = src.len() - src.len() % ts;
    let mask = if ts == 4 {
        vreinterpretq_u8_u32(vdupq_n_u32(!((1u32 << zeroed) - 1)))
    } else {
        vreinterpretq_u8_u64(vdupq_n_u64(!((1u64 << zeroed) - 1)))
    };
    let mut i = 0;
    while body - i >= 16 {
        st(dst, i, vandq_u8(ld(src, i), mask));
        i += 16;
    }
    // `i` is a multiple of 16, hence of the typesize (4 or 8).
    generic::trunc_prec(ts, zeroed, &src[i..], &mut dst[i..]);
}

/// BYTEDELTA forward; same contract and output as [`generic::bytedelta_encode`].
#[target_feature(enable = "neon")]
pub(crate) fn bytedelta_encode(ts: usize, src: &[u8], dst: &mut [u8]) {
    let l = src.len() / ts;
    let body = l * ts;
    if l > 0 {
        for (d, s) in dst[..body]
            .chunks_exact_mut(l)
            .zip(src[..body].chunks_exact(l))
        {
            d[0] = s[0];
            let mut i = 1;
            while l - i >= 16 {
                st(d, i, vsubq_u8(ld(s, i), ld(s, i - 1)));
                i += 16;
            }
            for k in i..l {
                d[k] = s[k].wrapping_sub(s[k - 1]);
            }
        }
    }
    dst[body..].copy_from_slice(&src[body..]);
}

/// BYTEDELTA backward; same contract and output as [`generic::bytedelta_decode`].
#[target_feature(enable = "neon")]
pub(crate) fn bytedelta_decode(ts: usize, src: &[u8], dst: &mut [u8]) {
    let l = src.len() / ts;
    let body = l * ts;
    if l > 0 {
        for (d, s) in dst[..body]
            .chunks_exact_mut(l)
            .zip(src[..body].chunks_exact(l))
        {
            prefix_sum(s, d);
        }
    }
    dst[body..].copy_from_slice(&src[body..]);
}

/// Running byte sum (mod 256): `dst[k] = src[0] + ... + src[k]`.
#[inline]
#[target_feature(enable = "neon")]
fn prefix_sum(src: &[u8], dst: &mut [u8]) {
    let len = src.len();
    let mut carry = zero();
    let mut i = 0;
    while len - i >= 16 {
        let mut v = ld(src, i);
        v = vaddq_u8(v, vextq_u8::<15>(zero(), v));
        v = vaddq_u8(v, vextq_u8::<14>(zero(), v));
        v = vaddq_u8(v, vextq_u8::<12>(zero(), v));
        v = vaddq_u8(v, vextq_u8::<8>(zero(), v));
        v = vaddq_u8(v, carry);
        st(dst, i, v);
        carry = vdupq_laneq_u8::<15>(v);
        i += 16;
    }
    let mut acc = if i > 0 { dst[i - 1] } else { 0 };
    for k in i..len {
        acc = acc.wrapping_add(src[k]);
        dst[k] = acc;
    }
}
