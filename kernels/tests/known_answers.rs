//! Known answers: the raw outputs of C-Blosc2's `blosc2_shuffle` and
//! `blosc2_bitshuffle` (typesize 4) over 1,000,000 little-endian int32
//! 0, 1, 2, ... (C-Blosc2's `compat/shuffle-2.20.0.cdata` and
//! `compat/bitshuffle-2.20.0.cdata`, 4,000,000 bytes each). The files are
//! not shipped; their sha256 (from the interop manifest) is the answer.

use oxiblosc_kernels::Kernels;
use sha2::{Digest, Sha256};

const INPUT_SHA256: &str = "02e21fa3c89fa7d7b61826918a8bd35d3127827b4ef3f3ee47ade5e64e3c2a80";
const SHUFFLE_SHA256: &str = "40e1351bba9155c3d765d66b5b4d25cb104aa2ad4b844b0a5d20af40cab2b920";
const BITSHUFFLE_SHA256: &str = "a1bba6ced356ddca157010f340b8b5a39a5cd43a77b7c99cd1cb8896e853169d";

fn sha256_hex(data: &[u8]) -> String {
    Sha256::digest(data)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn arange_i32() -> Vec<u8> {
    let n = if cfg!(miri) { 1000 } else { 1_000_000i32 };
    (0..n).flat_map(|v| v.to_le_bytes()).collect()
}

#[test]
#[cfg_attr(miri, ignore = "4 MB inputs are too slow under Miri")]
fn shuffle_and_bitshuffle_reproduce_c_blosc2_outputs() {
    let input = arange_i32();
    assert_eq!(
        sha256_hex(&input),
        INPUT_SHA256,
        "test input is not the compat input"
    );
    for k in Kernels::available() {
        let mut out = vec![0u8; input.len()];
        k.shuffle(4, &input, &mut out).unwrap();
        assert_eq!(sha256_hex(&out), SHUFFLE_SHA256, "{} shuffle", k.isa());
        let mut back = vec![0u8; input.len()];
        k.unshuffle(4, &out, &mut back).unwrap();
        assert!(back == input, "{} unshuffle", k.isa());

        k.bitshuffle(4, &input, &mut out).unwrap();
        assert_eq!(
            sha256_hex(&out),
            BITSHUFFLE_SHA256,
            "{} bitshuffle",
            k.isa()
        );
        k.bitunshuffle(4, &out, &mut back).unwrap();
        assert!(back == input, "{} bitunshuffle", k.isa());
    }
}
