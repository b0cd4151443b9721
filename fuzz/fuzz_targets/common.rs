//! What the targets share: the output limit and the checks on a super-chunk.
#![allow(dead_code)]

use oxiblosc::schunk::SChunk;
use oxiblosc::{CParams, DParams, Filter};

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

/// Chunks the edit and reopen checks compare are decoded only up to this
/// size each (the corpus holds frames of megabyte chunks: decoding eight of
/// them several times per edit under ASan slowed `cframe_edit` a
/// hundredfold).
const CHECKED_CHUNK: usize = 64 << 10;

/// Chunk `i` decoded, when it decodes and holds at most [`CHECKED_CHUNK`]
/// bytes.
fn small_chunk(sc: &mut SChunk, i: usize) -> Option<Vec<u8>> {
    match sc.chunk_nbytes(i) {
        Ok(n) if n <= CHECKED_CHUNK => sc.decompress_chunk_vec(i).ok(),
        _ => None,
    }
}

/// A frame written by `to_cframe` must reopen, with the super-chunk's
/// chunk count and sizes (since session 17), its metalayers and
/// vlmetalayers, and (since session 18) its first chunks decoding to the
/// same bytes (a chunk the super-chunk decodes must decode alike). Since
/// session 39 the frame `write_cframe` streams (a piece or a chunk file at
/// a time) must be the same bytes, of `cframe_len`'s length.
pub fn must_reopen(sc: &mut SChunk, what: &str) {
    let Ok(frame) = sc.to_cframe() else { return };
    let mut streamed = Vec::new();
    match sc.write_cframe(&mut streamed) {
        Ok(n) => assert_eq!(n, frame.len() as u64, "{what}: write_cframe's length"),
        Err(e) => panic!("{what}: to_cframe works, write_cframe fails: {e}"),
    }
    assert!(
        streamed == frame,
        "{what}: write_cframe and to_cframe differ"
    );
    drop(streamed);
    match sc.cframe_len() {
        Ok(n) => assert_eq!(n, frame.len() as u64, "{what}: cframe_len"),
        Err(e) => panic!("{what}: to_cframe works, cframe_len fails: {e}"),
    }
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
        if let Some(v) = small_chunk(sc, i) {
            match again.decompress_chunk_vec(i) {
                Ok(w) => assert!(w == v, "{what}: chunk {i} of the frame written differs"),
                Err(e) => panic!("{what}: chunk {i} of the frame written: {e}"),
            }
        }
    }
}

/// How many leading chunks [`edit`] compares before and after.
const KEPT: usize = 8;

/// What chunk `i` of the edited super-chunk must decode to.
enum Want {
    /// Old chunk `j`'s bytes.
    Old(usize),
    /// The edit's own buffer (unless the frame's filters are lossy).
    Buf,
    /// Not checked chunk by chunk.
    Any,
}

/// Edit `k` of the input, chosen by `op`; whether it worked. Since session
/// 18 it also checks what the edit did (on the first [`KEPT`] chunks): an
/// edit that fails changes nothing; one that works changes the chunks it
/// says and only them (an append adds the buffer, an insert shifts the
/// chunks after it, a reorder reverses them, `set_slice` changes its bytes
/// and no others, a vlmetalayer change or `compact` no chunk).
pub fn edit(sc: &mut SChunk, k: usize, op: u8) -> bool {
    let n = sc.nchunks();
    let at = usize::from(op >> 3) % (n + 1);
    let size = 1 + usize::from(op) * 7;
    let buf: Vec<u8> = (0..size).map(|i| (i * 31 + k) as u8).collect();
    let chunk = oxiblosc::compress(&buf, &CParams::default().typesize(1));
    let before: Vec<Option<Vec<u8>>> = (0..n.min(KEPT)).map(|i| small_chunk(sc, i)).collect();
    let nb = sc.nbytes();
    let flat = |sc: &mut SChunk| sc.get_slice(0, nb.min(1 << 16)).ok();
    let flat_before = if op & 7 == 6 { flat(sc) } else { None };
    let slice = &buf[..buf.len().min(nb as usize)];
    let ok = match op & 7 {
        0 => sc.append_buffer(&buf).map(|_| ()),
        1 => chunk.and_then(|c| sc.insert_chunk(at, &c)),
        2 => chunk.and_then(|c| sc.update_chunk(at, &c)),
        3 => sc.delete_chunk(at),
        // (The order is the harness's memory: not for millions of chunks.)
        4 if n > 1 << 16 => Err(oxiblosc::Error::InvalidParam("order too long".into())),
        4 => {
            let order: Vec<usize> = (0..n).rev().collect();
            sc.reorder_chunks(&order)
        }
        5 => sc.vlmeta_set("fz", &buf),
        6 => sc.set_slice(0, slice),
        _ => sc.compact(),
    }
    .is_ok();
    let lossy = sc
        .compress_params()
        .filters
        .iter()
        .any(|f| matches!(f, Some(Filter::TruncPrec(_))));
    type WantFn = Box<dyn Fn(usize) -> Want>;
    let (want_n, want): (usize, WantFn) = match op & 7 {
        _ if !ok => (n, Box::new(Want::Old)),
        0 => (
            n + 1,
            Box::new(move |i| if i < n { Want::Old(i) } else { Want::Buf }),
        ),
        1 => (
            n + 1,
            Box::new(move |i| match i.cmp(&at) {
                std::cmp::Ordering::Less => Want::Old(i),
                std::cmp::Ordering::Equal => Want::Buf,
                std::cmp::Ordering::Greater => Want::Old(i - 1),
            }),
        ),
        2 => (
            n,
            Box::new(move |i| if i == at { Want::Buf } else { Want::Old(i) }),
        ),
        3 => (
            n - 1,
            Box::new(move |i| Want::Old(if i < at { i } else { i + 1 })),
        ),
        4 => (n, Box::new(move |i| Want::Old(n - 1 - i))),
        6 => (n, Box::new(|_| Want::Any)),
        _ => (n, Box::new(Want::Old)),
    };
    let what = format!(
        "edit {k} (op {op}, {})",
        if ok { "worked" } else { "failed" }
    );
    assert_eq!(sc.nchunks(), want_n, "{what}: chunk count");
    for i in 0..want_n.min(KEPT) {
        let expect = match want(i) {
            Want::Old(j) => before.get(j).and_then(|b| b.as_deref()),
            Want::Buf if !lossy => Some(&buf[..]),
            _ => None,
        };
        if let Some(expect) = expect {
            match sc.decompress_chunk_vec(i) {
                Ok(v) => assert!(v == expect, "{what}: chunk {i} has other bytes"),
                Err(e) => panic!("{what}: chunk {i} no longer decodes: {e}"),
            }
        }
    }
    if ok
        && op & 7 == 6
        && !lossy
        && let Some(old) = flat_before
    {
        let mut want = old;
        let m = slice.len().min(want.len());
        want[..m].copy_from_slice(&slice[..m]);
        assert!(
            flat(sc).as_ref() == Some(&want),
            "{what}: set_slice changed other bytes"
        );
    }
    ok
}
