//! What the targets share: the output limit and the checks on a super-chunk.
#![allow(dead_code)]

use oxiblosc::DParams;
use oxiblosc::schunk::SChunk;

/// Decoded sizes above this are refused (run-length streams may stand for
/// 2 GiB legitimately; libFuzzer's RSS limit is 2 GiB).
pub const MAX_OUTPUT: usize = 64 << 20;

pub fn dparams(nthreads: usize) -> DParams {
    DParams::default().nthreads(nthreads).max_output(MAX_OUTPUT)
}

/// Every read of a super-chunk; results must be consistent.
pub fn read_all(sc: &mut SChunk) {
    sc.set_dparams(dparams(1));
    let _ = sc.dead_bytes();
    let _ = sc.hole_bytes();
    let _ = sc.cratio();
    let n = sc.nchunks().min(32);
    for i in 0..n {
        let _ = sc.chunk_info(i);
        let _ = sc.chunk_nbytes(i);
        if let Ok(v) = sc.decompress_chunk_vec(i) {
            assert!(v.len() as u64 <= sc.nbytes());
            if let Ok(nb) = sc.chunk_nbytes(i) {
                assert_eq!(nb, v.len(), "chunk {i}");
            }
        }
    }
    let names: Vec<String> = sc.vlmeta_names().iter().map(|s| s.to_string()).collect();
    for name in names {
        let _ = sc.vlmeta_get(&name);
    }
    let metas: Vec<String> = sc.metalayers().iter().map(|m| m.name.clone()).collect();
    for m in metas {
        let _ = sc.meta_get(&m);
    }
    let nb = sc.nbytes();
    let _ = sc.get_slice(0, nb.min(1 << 16));
    let _ = sc.get_slice(nb / 2, nb.min(nb / 2 + 4096));
}

/// A frame written by `to_cframe` must reopen.
pub fn must_reopen(sc: &mut SChunk, what: &str) {
    if let Ok(frame) = sc.to_cframe() {
        if let Err(e) = SChunk::from_cframe(frame) {
            panic!("{what}: the frame written does not reopen: {e}");
        }
    }
}
