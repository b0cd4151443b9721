//! Shared helpers for the kernel tests: a naive oracle written straight from
//! the format notes (CHUNK-NOTES §4), deterministic data, and the sweep of
//! type sizes and lengths every implementation is run over.
#![allow(dead_code)]

use oxiblosc_kernels::{Isa, Kernels};

/// Type sizes every kernel is tested with (a subset under Miri, which is
/// about a thousand times slower: the special-cased sizes and a few others).
pub fn typesizes() -> Vec<usize> {
    if cfg!(miri) {
        return vec![1, 2, 3, 4, 8, 16];
    }
    let mut v: Vec<usize> = (1..=32).collect();
    v.extend([48, 64, 255]);
    v
}

/// Byte lengths tested for one type size: every length up to `dense`, then
/// every whole element count up to `elems` with tails 0, 1 and typesize - 1.
///
/// Under Miri (about a thousand times slower): a few element counts that
/// cross every vector loop boundary (up to 128-element tiles) instead.
pub fn lengths(ts: usize, dense: usize, elems: usize) -> Vec<usize> {
    let mut v: Vec<usize> = (0..=dense).collect();
    let counts: Vec<usize> = if cfg!(miri) {
        vec![0, 9, 33, 65, 130]
    } else {
        // Every count up to `elems`, then counts around the widest blocks
        // (256-element bitshuffle blocks of the AVX2 kernels).
        let mut c: Vec<usize> = (0..=elems).collect();
        if elems > 0 && ts <= 32 {
            c.extend([255, 256, 257, 263, 511, 512, 513, 520, 600]);
        }
        c
    };
    for n in counts {
        let tails: &[usize] = if cfg!(miri) {
            &[0, ts - 1]
        } else {
            &[0, 1, ts - 1]
        };
        for &t in tails {
            if t < ts {
                v.push(n * ts + t);
            }
        }
    }
    v.sort_unstable();
    v.dedup();
    v
}

/// Sizes for the sweeps; small under Miri, which is ~1000x slower.
pub const DENSE: usize = if cfg!(miri) { 8 } else { 1100 };
pub const ELEMS: usize = if cfg!(miri) { 20 } else { 160 };

/// xorshift64* bytes: deterministic, fast, no dependency.
pub fn bytes(len: usize, seed: u64) -> Vec<u8> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut out = Vec::with_capacity(len + 8);
    while out.len() < len {
        s ^= s >> 12;
        s ^= s << 25;
        s ^= s >> 27;
        out.extend_from_slice(&s.wrapping_mul(0x2545_F491_4F6C_DD1D).to_le_bytes());
    }
    out.truncate(len);
    out
}

/// Data that looks like what Blosc sees: ramps, runs and noise mixed, so
/// that equal and unequal neighbouring bytes both occur.
pub fn mixed(len: usize, seed: u64) -> Vec<u8> {
    let noise = bytes(len, seed);
    noise
        .iter()
        .enumerate()
        .map(|(i, &r)| match (i / 97 + seed as usize) % 4 {
            0 => r,
            1 => (i / 7) as u8,
            2 => 0,
            _ => (i as u8).wrapping_mul(3) ^ (r & 1),
        })
        .collect()
}

/// The SIMD implementations available here (everything but generic).
pub fn simd_kernels() -> Vec<&'static Kernels> {
    Kernels::available()
        .filter(|k| k.isa() != Isa::Generic)
        .collect()
}

pub fn generic() -> &'static Kernels {
    Kernels::get(Isa::Generic).unwrap()
}

pub mod naive {
    //! Reference definitions, one bit or byte at a time.

    pub fn shuffle(ts: usize, src: &[u8]) -> Vec<u8> {
        let n = src.len() / ts;
        let mut out = src.to_vec();
        for i in 0..n {
            for j in 0..ts {
                out[j * n + i] = src[i * ts + j];
            }
        }
        out
    }

    pub fn unshuffle(ts: usize, src: &[u8]) -> Vec<u8> {
        let n = src.len() / ts;
        let mut out = src.to_vec();
        for i in 0..n {
            for j in 0..ts {
                out[i * ts + j] = src[j * n + i];
            }
        }
        out
    }

    /// Row `8j + b` holds bit `b` of byte `j` of elements 0..m, LSB first.
    pub fn bitshuffle(ts: usize, src: &[u8]) -> Vec<u8> {
        let n = src.len() / ts;
        let m = n - n % 8;
        let mut out = src.to_vec();
        out[..m * ts].fill(0);
        for e in 0..m {
            for j in 0..ts {
                for b in 0..8 {
                    let bit = (src[e * ts + j] >> b) & 1;
                    let pos = (8 * j + b) * m + e;
                    out[pos / 8] |= bit << (pos % 8);
                }
            }
        }
        out
    }

    pub fn bitunshuffle(ts: usize, src: &[u8]) -> Vec<u8> {
        let n = src.len() / ts;
        let m = n - n % 8;
        let mut out = src.to_vec();
        out[..m * ts].fill(0);
        for e in 0..m {
            for j in 0..ts {
                for b in 0..8 {
                    let pos = (8 * j + b) * m + e;
                    let bit = (src[pos / 8] >> (pos % 8)) & 1;
                    out[e * ts + j] |= bit << b;
                }
            }
        }
        out
    }

    pub fn delta_width(ts: usize) -> usize {
        match ts {
            1 | 2 | 4 | 8 => ts,
            t if t % 8 == 0 => 8,
            _ => 1,
        }
    }

    pub fn delta_encode(ts: usize, reference: Option<&[u8]>, src: &[u8]) -> Vec<u8> {
        let w = delta_width(ts);
        let words = src.len() / w;
        let mut out = src.to_vec();
        for i in 0..words {
            for k in 0..w {
                let p = i * w + k;
                out[p] = match reference {
                    Some(r) => src[p] ^ r[p],
                    None if i == 0 => src[p],
                    None => src[p] ^ src[p - w],
                };
            }
        }
        out
    }

    pub fn delta_decode(ts: usize, reference: Option<&[u8]>, src: &[u8]) -> Vec<u8> {
        let w = delta_width(ts);
        let words = src.len() / w;
        let mut out = src.to_vec();
        for i in 0..words {
            for k in 0..w {
                let p = i * w + k;
                out[p] = match reference {
                    Some(r) => src[p] ^ r[p],
                    None if i == 0 => src[p],
                    None => src[p] ^ out[p - w],
                };
            }
        }
        out
    }

    pub fn trunc_prec(ts: usize, zeroed: u32, src: &[u8]) -> Vec<u8> {
        let mut out = src.to_vec();
        for e in 0..src.len() / ts {
            for bit in 0..zeroed as usize {
                out[e * ts + bit / 8] &= !(1 << (bit % 8));
            }
        }
        out
    }

    pub fn bytedelta_encode(ts: usize, src: &[u8]) -> Vec<u8> {
        let l = src.len() / ts;
        let mut out = src.to_vec();
        for s in 0..ts {
            for i in 0..l {
                let prev = if i == 0 { 0 } else { src[s * l + i - 1] };
                out[s * l + i] = src[s * l + i].wrapping_sub(prev);
            }
        }
        out
    }

    pub fn bytedelta_decode(ts: usize, src: &[u8]) -> Vec<u8> {
        let l = src.len() / ts;
        let mut out = src.to_vec();
        for s in 0..ts {
            let mut acc = 0u8;
            for i in 0..l {
                acc = acc.wrapping_add(src[s * l + i]);
                out[s * l + i] = acc;
            }
        }
        out
    }
}

/// Every kernel call the tests make, so one loop can drive them all.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Shuffle,
    Unshuffle,
    Bitshuffle,
    Bitunshuffle,
    BitshuffleBlosc1,
    BitunshuffleBlosc1,
    DeltaEncode { with_ref: bool },
    DeltaDecode { with_ref: bool },
    TruncPrec(i8),
    BytedeltaEncode,
    BytedeltaDecode,
}

pub const OPS: [Op; 13] = [
    Op::Shuffle,
    Op::Unshuffle,
    Op::Bitshuffle,
    Op::Bitunshuffle,
    Op::BitshuffleBlosc1,
    Op::BitunshuffleBlosc1,
    Op::DeltaEncode { with_ref: false },
    Op::DeltaEncode { with_ref: true },
    Op::DeltaDecode { with_ref: false },
    Op::DeltaDecode { with_ref: true },
    Op::TruncPrec(7),
    Op::BytedeltaEncode,
    Op::BytedeltaDecode,
];

impl Op {
    /// Whether the op accepts this type size at all.
    pub fn applies(self, ts: usize) -> bool {
        match self {
            Op::TruncPrec(p) => oxiblosc_kernels::trunc_prec_zeroed_bits(ts, p).is_ok(),
            _ => true,
        }
    }

    /// Run the op on `k`. `reference` is used by the delta ops with a reference.
    pub fn run(self, k: &Kernels, ts: usize, src: &[u8], reference: &[u8]) -> Vec<u8> {
        let mut dst = vec![0xA5; src.len()];
        let r = match self {
            Op::Shuffle => k.shuffle(ts, src, &mut dst),
            Op::Unshuffle => k.unshuffle(ts, src, &mut dst),
            Op::Bitshuffle => k.bitshuffle(ts, src, &mut dst),
            Op::Bitunshuffle => k.bitunshuffle(ts, src, &mut dst),
            Op::BitshuffleBlosc1 => k.bitshuffle_blosc1(ts, src, &mut dst),
            Op::BitunshuffleBlosc1 => k.bitunshuffle_blosc1(ts, src, &mut dst),
            Op::DeltaEncode { with_ref } => {
                k.delta_encode(ts, with_ref.then_some(reference), src, &mut dst)
            }
            Op::DeltaDecode { with_ref } => {
                k.delta_decode(ts, with_ref.then_some(reference), src, &mut dst)
            }
            Op::TruncPrec(p) => k.trunc_prec(ts, p, src, &mut dst),
            Op::BytedeltaEncode => k.bytedelta_encode(ts, src, &mut dst),
            Op::BytedeltaDecode => k.bytedelta_decode(ts, src, &mut dst),
        };
        r.unwrap_or_else(|e| panic!("{:?} {self:?} ts {ts} len {}: {e}", k.isa(), src.len()));
        dst
    }

    /// The naive oracle's answer.
    pub fn naive(self, ts: usize, src: &[u8], reference: &[u8]) -> Vec<u8> {
        let blosc1_all = (src.len() / ts).is_multiple_of(8);
        match self {
            Op::Shuffle => naive::shuffle(ts, src),
            Op::Unshuffle => naive::unshuffle(ts, src),
            Op::Bitshuffle => naive::bitshuffle(ts, src),
            Op::Bitunshuffle => naive::bitunshuffle(ts, src),
            Op::BitshuffleBlosc1 if blosc1_all => naive::bitshuffle(ts, src),
            Op::BitunshuffleBlosc1 if blosc1_all => naive::bitunshuffle(ts, src),
            Op::BitshuffleBlosc1 | Op::BitunshuffleBlosc1 => src.to_vec(),
            Op::DeltaEncode { with_ref } => {
                naive::delta_encode(ts, with_ref.then_some(reference), src)
            }
            Op::DeltaDecode { with_ref } => {
                naive::delta_decode(ts, with_ref.then_some(reference), src)
            }
            Op::TruncPrec(p) => {
                let mant = if ts == 4 { 23 } else { 52 };
                let zeroed = if p >= 0 { mant - p as u32 } else { (-p) as u32 };
                naive::trunc_prec(ts, zeroed, src)
            }
            Op::BytedeltaEncode => naive::bytedelta_encode(ts, src),
            Op::BytedeltaDecode => naive::bytedelta_decode(ts, src),
        }
    }

    /// The op that undoes this one, if any (trunc_prec is lossy).
    pub fn inverse(self) -> Option<Op> {
        Some(match self {
            Op::Shuffle => Op::Unshuffle,
            Op::Unshuffle => Op::Shuffle,
            Op::Bitshuffle => Op::Bitunshuffle,
            Op::Bitunshuffle => Op::Bitshuffle,
            Op::BitshuffleBlosc1 => Op::BitunshuffleBlosc1,
            Op::BitunshuffleBlosc1 => Op::BitshuffleBlosc1,
            Op::DeltaEncode { with_ref } => Op::DeltaDecode { with_ref },
            Op::DeltaDecode { with_ref } => Op::DeltaEncode { with_ref },
            Op::TruncPrec(_) => return None,
            Op::BytedeltaEncode => Op::BytedeltaDecode,
            Op::BytedeltaDecode => Op::BytedeltaEncode,
        })
    }
}
