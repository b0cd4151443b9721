//! What the targets share: the output limit and the checks on a super-chunk.
#![allow(dead_code)]

use oxiblosc::schunk::SChunk;
use oxiblosc::{CParams, DParams};

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
    // Slices: the _into form gives what get_slice gives; a part of chunk 0
    // (decoded by getitem) is that part of the whole chunk's decode.
    let nb = sc.nbytes();
    let whole0 = sc.decompress_chunk_vec(0).ok();
    let in0 = whole0.as_ref().map_or(0, |c| c.len() as u64);
    let ranges = [
        (0, nb.min(1 << 16)),
        (nb / 2, nb.min(nb / 2 + 4096)),
        (in0 / 3, (in0 / 3 + 7).min(in0)),
    ];
    for (a, b) in ranges {
        if let Ok(v) = sc.get_slice(a, b) {
            assert_eq!(v.len() as u64, b - a, "slice {a}..{b}");
            let mut buf = vec![0u8; v.len()];
            sc.get_slice_into(a, b, &mut buf)
                .expect("get_slice Ok, get_slice_into Err");
            assert_eq!(buf, v, "slice {a}..{b}");
            if let Some(c) = whole0.as_ref().filter(|_| b <= in0) {
                assert_eq!(v, c[a as usize..b as usize], "slice {a}..{b} of chunk 0");
            }
        }
    }
}

/// A frame written by `to_cframe` must reopen, with the super-chunk's
/// chunk count and sizes (since session 17), its metalayers and
/// vlmetalayers, and (since session 18) its first chunks decoding to the
/// same bytes (a chunk the super-chunk decodes must decode alike).
pub fn must_reopen(sc: &mut SChunk, what: &str) {
    let Ok(frame) = sc.to_cframe() else { return };
    let mut again = match SChunk::from_cframe(frame) {
        Err(e) => panic!("{what}: the frame written does not reopen: {e}"),
        Ok(again) => again,
    };
    assert_eq!(
        (again.nchunks(), again.nbytes(), again.cbytes()),
        (sc.nchunks(), sc.nbytes(), sc.cbytes()),
        "{what}: the frame written and the super-chunk"
    );
    assert!(
        again.metalayers() == sc.metalayers(),
        "{what}: metalayers of the frame written"
    );
    assert_eq!(
        again.vlmeta_names(),
        sc.vlmeta_names(),
        "{what}: vlmetalayers"
    );
    again.set_dparams(sc.dparams().clone());
    for i in 0..sc.nchunks().min(8) {
        if let Ok(v) = sc.decompress_chunk_vec(i) {
            match again.decompress_chunk_vec(i) {
                Ok(w) => assert!(w == v, "{what}: chunk {i} of the frame written differs"),
                Err(e) => panic!("{what}: chunk {i} of the frame written: {e}"),
            }
        }
    }
}

/// Edit `k` of the input, chosen by `op`; whether it worked.
pub fn edit(sc: &mut SChunk, k: usize, op: u8) -> bool {
    let n = sc.nchunks();
    let at = usize::from(op >> 3) % (n + 1);
    let size = 1 + usize::from(op) * 7;
    let buf: Vec<u8> = (0..size).map(|i| (i * 31 + k) as u8).collect();
    let chunk = oxiblosc::compress(&buf, &CParams::default().typesize(1));
    match op & 7 {
        0 => sc.append_buffer(&buf).map(|_| ()),
        1 => chunk.and_then(|c| sc.insert_chunk(at, &c)),
        2 => chunk.and_then(|c| sc.update_chunk(at, &c)),
        3 => sc.delete_chunk(at),
        4 => {
            let order: Vec<usize> = (0..n).rev().collect();
            sc.reorder_chunks(&order)
        }
        5 => sc.vlmeta_set("fz", &buf),
        6 => sc.set_slice(0, &buf[..buf.len().min(sc.nbytes() as usize)]),
        _ => sc.compact(),
    }
    .is_ok()
}
