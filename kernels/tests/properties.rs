//! Property tests: random type sizes and lengths up to a few MB, every
//! available implementation equal to the scalar reference and round-tripping.

mod common;
use common::*;
use proptest::prelude::*;

fn typesize() -> impl Strategy<Value = usize> {
    prop_oneof![
        4 => prop::sample::select(vec![1usize, 2, 4, 8, 16]),
        1 => 1usize..=255,
    ]
}

fn length() -> impl Strategy<Value = usize> {
    if cfg!(miri) {
        return (0usize..4096).boxed();
    }
    prop_oneof![3 => 0usize..70_000, 1 => 0usize..=(4 << 20)].boxed()
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: if cfg!(miri) { 4 } else { 48 },
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn every_path_equals_generic(ts in typesize(), len in length(), seed: u64, op_index in 0..OPS.len()) {
        let op = OPS[op_index];
        prop_assume!(op.applies(ts));
        let src = mixed(len, seed);
        let reference = bytes(len, !seed);
        let want = op.run(generic(), ts, &src, &reference);
        for k in oxiblosc_kernels::Kernels::available() {
            let got = op.run(k, ts, &src, &reference);
            prop_assert!(got == want, "{} {:?} ts {} len {}", k.isa(), op, ts, len);
            if let Some(inv) = op.inverse() {
                prop_assert!(inv.run(k, ts, &got, &reference) == src, "{} {:?} no round trip", k.isa(), op);
            }
        }
    }
}
