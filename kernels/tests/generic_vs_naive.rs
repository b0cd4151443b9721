//! The scalar reference agrees with the naive, bit-by-bit definitions, for
//! every kernel, every tested type size and a sweep of lengths.

mod common;
use common::*;

#[test]
#[cfg_attr(miri, ignore = "safe code only, and too slow under Miri")]
fn generic_matches_naive_definitions() {
    let g = generic();
    for ts in typesizes() {
        // The naive bit transpose is slow: a lighter sweep than the SIMD one.
        for len in lengths(ts, 300, 40) {
            let src = mixed(len, (ts * 1000 + len) as u64);
            let reference = bytes(len, len as u64 + 7);
            for op in OPS.into_iter().filter(|op| op.applies(ts)) {
                let got = op.run(g, ts, &src, &reference);
                let want = op.naive(ts, &src, &reference);
                assert!(
                    got == want,
                    "generic {op:?} ts {ts} len {len} differs from the definition"
                );
            }
        }
    }
}

#[test]
#[cfg_attr(miri, ignore = "safe code only")]
fn trunc_prec_every_precision() {
    let g = generic();
    for ts in [4usize, 8] {
        let mant: i32 = if ts == 4 { 23 } else { 52 };
        let src = mixed(8 * 1024 + 3, 99);
        for p in -(mant - 1)..=mant {
            if p == 0 {
                continue;
            }
            let op = Op::TruncPrec(p as i8);
            assert_eq!(
                op.run(g, ts, &src, &[]),
                op.naive(ts, &src, &[]),
                "ts {ts} prec {p}"
            );
        }
        for bad in [0, mant + 1, -mant, i8::MIN as i32, i8::MAX as i32] {
            let mut dst = vec![0; src.len()];
            assert!(
                g.trunc_prec(ts, bad as i8, &src, &mut dst).is_err(),
                "ts {ts} prec {bad}"
            );
        }
    }
}
