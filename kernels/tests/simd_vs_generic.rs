//! Every SIMD implementation available on this machine gives exactly the
//! scalar reference's output (forward and inverse), and round-trips, for
//! type sizes 1..=32, 48, 64, 255 and every length from 0 to well past the
//! widest unrolled loop, including partial elements and partial groups of 8.

mod common;
use common::*;

fn compare(op: Op) {
    let simd = simd_kernels();
    if simd.is_empty() {
        eprintln!("no SIMD kernels on this machine: nothing to compare");
        return;
    }
    let g = generic();
    for ts in typesizes() {
        if !op.applies(ts) {
            continue;
        }
        for len in lengths(ts, DENSE, ELEMS) {
            let src = mixed(len, (ts * 7919 + len) as u64);
            let reference = bytes(len, len as u64 ^ 0x55);
            let want = op.run(g, ts, &src, &reference);
            for k in &simd {
                let got = op.run(k, ts, &src, &reference);
                assert!(
                    got == want,
                    "{} {op:?} ts {ts} len {len}: first difference at byte {:?}",
                    k.isa(),
                    got.iter().zip(&want).position(|(a, b)| a != b)
                );
                if let Some(inv) = op.inverse() {
                    let back = inv.run(k, ts, &got, &reference);
                    assert!(
                        back == src,
                        "{} {op:?} ts {ts} len {len}: no round trip",
                        k.isa()
                    );
                }
            }
        }
    }
}

#[test]
fn shuffle() {
    compare(Op::Shuffle);
}
#[test]
fn unshuffle() {
    compare(Op::Unshuffle);
}
#[test]
fn bitshuffle() {
    compare(Op::Bitshuffle);
}
#[test]
fn bitunshuffle() {
    compare(Op::Bitunshuffle);
}
#[test]
fn bitshuffle_blosc1() {
    compare(Op::BitshuffleBlosc1);
    compare(Op::BitunshuffleBlosc1);
}
#[test]
fn delta() {
    for with_ref in [false, true] {
        compare(Op::DeltaEncode { with_ref });
        compare(Op::DeltaDecode { with_ref });
    }
}
#[test]
fn trunc_prec() {
    for p in [1, 7, 22, 23, -1, -10, -22, 51, 52, -51] {
        compare(Op::TruncPrec(p));
    }
}
#[test]
fn bytedelta() {
    compare(Op::BytedeltaEncode);
    compare(Op::BytedeltaDecode);
}
