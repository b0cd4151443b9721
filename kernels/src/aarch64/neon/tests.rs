//! Unit tests of the NEON building blocks against scalar definitions, and of
//! the (bit)shuffle kernels against the generic ones on sizes chosen to reach
//! every path: fewer than one block, exactly one, overlapping last blocks,
//! every gather/scatter variant, and more than one 16-byte column block.
//!
//! The integration sweeps (`tests/simd_vs_generic.rs`) cover far more
//! lengths, but under Miri they stay below 128 elements, the smallest input
//! that reaches the bit shuffle tiles; these tests reach them there too.

use super::prims::*;
use super::shuffle::{gather, scatter};
use crate::{Isa, Kernels};

/// xorshift64* bytes.
fn bytes(len: usize, seed: u64) -> Vec<u8> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            s ^= s >> 12;
            s ^= s << 25;
            s ^= s >> 27;
            (s.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 56) as u8
        })
        .collect()
}

#[target_feature(enable = "neon")]
fn to_bytes(v: V) -> [u8; 16] {
    let mut a = [0u8; 16];
    st(&mut a, 0, v);
    a
}

#[target_feature(enable = "neon")]
fn check_transpose16() {
    let m = bytes(256, 1);
    let rows: [V; 16] = core::array::from_fn(|r| ld(&m, 16 * r));
    let t = transpose16(rows);
    for (c, col) in t.iter().enumerate() {
        let got = to_bytes(*col);
        for (r, b) in got.iter().enumerate() {
            assert_eq!(*b, m[16 * r + c], "row {c} byte {r}");
        }
    }
}

#[target_feature(enable = "neon")]
fn check_bit_transpose() {
    let m = bytes(128, 2);
    let w: [V; 8] = core::array::from_fn(|k| ld(&m, 16 * k));
    let t = bit_transpose(w);
    for (p, v) in t.iter().enumerate() {
        let got = to_bytes(*v);
        for (q, b) in got.iter().enumerate() {
            for k in 0..8 {
                let want = (m[16 * k + q] >> p) & 1;
                assert_eq!((b >> k) & 1, want, "vector {p} lane {q} bit {k}");
            }
        }
    }
    // Self-inverse.
    let back = bit_transpose(t);
    for (k, v) in back.iter().enumerate() {
        assert_eq!(to_bytes(*v), m[16 * k..16 * k + 16]);
    }
}

/// `gather::<K>` then `scatter::<K>` on 16 elements of `ts` bytes (`K` is
/// `ts` or 0), against the definition; the scatter may spill past the 16
/// elements only into the slack after them.
#[target_feature(enable = "neon")]
fn check_gather_scatter<const K: usize>(ts: usize) {
    let e = 3;
    let src = bytes((e + 16) * ts + 20, ts as u64);
    for (j0, ncols) in col_blocks(ts) {
        let cols = gather::<K>(ts, &src, e, j0);
        for (c, col) in cols[..ncols].iter().enumerate() {
            let got = to_bytes(*col);
            for (i, b) in got.iter().enumerate() {
                assert_eq!(
                    *b,
                    src[(e + i) * ts + j0 + c],
                    "ts {ts} byte {} of element {i}",
                    j0 + c
                );
            }
        }
        let mut dst = vec![0xA5u8; src.len()];
        scatter::<K>(ts, &mut dst, e, j0, &cols);
        assert!(
            dst[..e * ts].iter().all(|&b| b == 0xA5),
            "ts {ts}: wrote before the block"
        );
        for i in 0..16 {
            let o = (e + i) * ts + j0;
            assert_eq!(dst[o..o + ncols], src[o..o + ncols], "ts {ts} element {i}");
        }
    }
}

#[test]
fn transpose16_transposes() {
    // SAFETY: this module is only compiled when the build enables NEON.
    unsafe { check_transpose16() }
}

#[test]
fn bit_transpose_transposes() {
    // SAFETY: this module is only compiled when the build enables NEON.
    unsafe { check_bit_transpose() }
}

#[test]
fn gather_scatter_every_variant() {
    // SAFETY (all calls): this module is only compiled when the build
    // enables NEON.
    unsafe {
        check_gather_scatter::<2>(2);
        check_gather_scatter::<4>(4);
        check_gather_scatter::<8>(8);
        check_gather_scatter::<16>(16);
        for ts in [2, 3, 5, 8, 12, 15, 16, 17, 31, 40] {
            check_gather_scatter::<0>(ts);
        }
    }
}

/// Element counts: below, at and around one block of 16 and one bit-shuffle
/// tile of 128, and several tiles with an overlapping last one. Under Miri
/// only one count per path: fewer than 16, an overlapping last block, one
/// tile plus 7 elements left over, two overlapping tiles.
fn counts() -> &'static [usize] {
    if cfg!(miri) {
        &[15, 17, 135, 136]
    } else {
        &[
            0, 1, 15, 16, 17, 31, 32, 33, 127, 128, 129, 135, 136, 137, 255, 256, 264, 300, 1000,
        ]
    }
}

fn typesizes() -> Vec<usize> {
    if cfg!(miri) {
        vec![1, 2, 3, 4, 8, 16, 17]
    } else {
        let mut v: Vec<usize> = (1..=34).collect();
        v.extend([47, 48, 64, 255]);
        v
    }
}

#[test]
fn shuffles_match_generic_on_every_path() {
    let neon = Kernels::get(Isa::Neon).expect("NEON is baseline on AArch64");
    let g = Kernels::get(Isa::Generic).unwrap();
    type Method = fn(&Kernels, usize, &[u8], &mut [u8]) -> Result<(), crate::Error>;
    let ops: [(&str, Method, Method); 2] = [
        ("shuffle", Kernels::shuffle, Kernels::unshuffle),
        ("bitshuffle", Kernels::bitshuffle, Kernels::bitunshuffle),
    ];
    for ts in typesizes() {
        for &n in counts() {
            let mut tails = vec![0];
            tails.extend((1..ts).filter(|&t| t == 1 || t == ts - 1));
            for tail in tails {
                let len = n * ts + tail;
                let src = bytes(len, (ts * 1000 + len) as u64);
                for (name, fwd, inv) in ops {
                    let mut want = vec![0xA5; len];
                    let mut got = vec![0x5A; len];
                    fwd(g, ts, &src, &mut want).unwrap();
                    fwd(neon, ts, &src, &mut got).unwrap();
                    assert!(got == want, "{name} ts {ts} len {len}");
                    let mut back = vec![0x5A; len];
                    inv(neon, ts, &got, &mut back).unwrap();
                    assert!(back == src, "un{name} ts {ts} len {len}");
                }
            }
        }
    }
}

#[test]
fn filters_match_generic() {
    let neon = Kernels::get(Isa::Neon).expect("NEON is baseline on AArch64");
    let g = Kernels::get(Isa::Generic).unwrap();
    let lens: &[usize] = if cfg!(miri) {
        &[0, 7, 16, 47, 100]
    } else {
        &[0, 1, 7, 15, 16, 17, 31, 32, 33, 47, 64, 100, 255, 1000]
    };
    for ts in [1, 2, 3, 4, 5, 8, 12, 16, 24] {
        for &len in lens {
            let src = bytes(len, (ts * 7 + len) as u64);
            let reference = bytes(len, len as u64 + 99);
            let run = |k: &Kernels, what: usize, input: &[u8]| {
                let mut out = vec![0xA5; len];
                let r = Some(&reference[..]);
                match what {
                    0 => k.delta_encode(ts, None, input, &mut out),
                    1 => k.delta_decode(ts, None, input, &mut out),
                    2 => k.delta_encode(ts, r, input, &mut out),
                    3 => k.delta_decode(ts, r, input, &mut out),
                    4 => k.bytedelta_encode(ts, input, &mut out),
                    5 => k.bytedelta_decode(ts, input, &mut out),
                    _ => k.trunc_prec(ts, -3, input, &mut out),
                }
                .unwrap();
                out
            };
            let whats = if ts == 4 || ts == 8 { 0..7 } else { 0..6 };
            for what in whats {
                let got = run(neon, what, &src);
                assert!(got == run(g, what, &src), "op {what} ts {ts} len {len}");
                if what < 6 {
                    // 0/1, 2/3, 4/5 are inverse pairs.
                    assert!(
                        run(neon, what ^ 1, &got) == src,
                        "op {what} ts {ts} len {len}: no round trip"
                    );
                }
            }
        }
    }
}
