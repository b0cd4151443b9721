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
    iterators(sc);
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

/// The iterators and the `_into` reads give what the plain reads give, for
/// the first 32 chunks (since session 44; source coverage showed none of
/// them was reached): `iter_chunks`, `next_into` and `decompress_chunk_into`
/// what `decompress_chunk_vec` gives (the same bytes, or an error in
/// both), `iter_compressed` and `chunk_shared` what `get_chunk` gives, and
/// `read_items` of the first items what `get_slice` gives.
fn iterators(sc: &mut SChunk) {
    let n = sc.nchunks().min(32);
    let plain: Vec<Result<Vec<u8>, String>> = (0..n)
        .map(|i| sc.decompress_chunk_vec(i).map_err(|e| e.to_string()))
        .collect();
    let stored: Vec<Option<Vec<u8>>> = (0..n)
        .map(|i| sc.get_chunk(i).ok().map(|c| c.into_owned()))
        .collect();
    let agree = |what: &str, i: usize, got: Result<&[u8], String>| match (&plain[i], got) {
        (Ok(a), Ok(b)) => assert!(a == b, "{what}: chunk {i} has other bytes"),
        (Err(_), Err(_)) => {}
        (a, b) => panic!(
            "{what}: chunk {i}: {:?} and {:?}",
            a.as_ref().err(),
            b.err()
        ),
    };
    // The whole, when every chunk decodes and they hold `nbytes`: the
    // chunks one after another (since session 44).
    let whole = sc.nbytes();
    if n == sc.nchunks() && whole <= 1 << 16 {
        let parts: Option<Vec<&[u8]>> = plain.iter().map(|p| p.as_deref().ok()).collect();
        if let Some(all) = parts
            .map(|p| p.concat())
            .filter(|a| a.len() as u64 == whole)
            && let Ok(v) = sc.get_slice(0, whole)
        {
            assert!(
                v == all,
                "get_slice of the whole is not the chunks in order"
            );
        }
    }
    for (i, c) in sc.iter_chunks().take(n).enumerate() {
        agree("iter_chunks", i, c.as_deref().map_err(|e| e.to_string()));
    }
    let mut buf = Vec::new();
    let mut it = sc.iter_chunks();
    for i in 0..n {
        match it.next_into(&mut buf) {
            Some(r) => agree(
                "next_into",
                i,
                r.map(|m| &buf[..m]).map_err(|e| e.to_string()),
            ),
            None => panic!("next_into ended at {i} of {n}"),
        }
    }
    for i in 0..n {
        // A buffer of the size the frame gives the chunk (within the limit).
        let size = sc.chunk_nbytes(i).unwrap_or(0).min(MAX_OUTPUT);
        let mut out = vec![0u8; size];
        if let Ok(m) = sc.decompress_chunk_into(i, &mut out) {
            agree("decompress_chunk_into", i, Ok(&out[..m]));
        }
    }
    for (i, c) in sc.iter_compressed().take(n).enumerate() {
        assert_eq!(c.ok(), stored[i], "iter_compressed: chunk {i}");
    }
    for (i, want) in stored.iter().enumerate() {
        // (Refused for a stored chunk of a file or a directory.)
        let got = match sc.chunk_shared(i) {
            Err(oxiblosc::Error::Unsupported(_)) => continue,
            r => r.ok().map(|c| c.into_owned()),
        };
        assert_eq!(got.as_ref(), want.as_ref(), "chunk_shared: chunk {i}");
    }
    let nb = sc.nbytes().min(4096);
    let ts = sc.typesize().max(1) as u64;
    if let Ok(want) = sc.get_slice(0, nb - nb % ts) {
        let got: Option<Vec<u8>> = match ts {
            1 => {
                let mut v = vec![0u8; want.len()];
                sc.read_items(0, &mut v).ok().map(|_| v)
            }
            4 => {
                let mut v = vec![0u32; want.len() / 4];
                sc.read_items(0, &mut v)
                    .ok()
                    .map(|_| v.iter().flat_map(|x| x.to_ne_bytes()).collect())
            }
            _ => Some(want.clone()),
        };
        assert!(
            got.as_ref() == Some(&want),
            "read_items: other items than get_slice"
        );
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
    let metas_before = sc.metalayers().to_vec();
    let vlnames_before: Vec<String> = sc.vlmeta_names().iter().map(|s| s.to_string()).collect();
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
        // Op 5 also edits the metalayers (since session 44; until then
        // cframe_edit named them but never changed one): bits 6-7 01
        // rewrite the first layer's bytes in place (`meta_update`, at most
        // its length), 10 add a layer (`meta_add`, before any chunk), 11
        // delete the first vlmetalayer (`vlmeta_delete`).
        5 if op >> 6 == 1 => match metas_before.first() {
            Some(m) => sc.meta_update(&m.name, &buf[..buf.len().min(m.content.len())]),
            None => sc.meta_update("fz", &buf),
        },
        5 if op >> 6 == 2 => sc.meta_add("fz", &buf[..buf.len().min(64)]),
        5 if op >> 6 == 3 => match vlnames_before.first() {
            Some(name) => sc.vlmeta_delete(name),
            None => sc.vlmeta_delete("fz"),
        },
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
    // The metalayers: a failed edit leaves them; `meta_update` changes
    // its layer's first bytes, `meta_add` adds one at the end.
    let mut want_metas = metas_before;
    if ok && op & 7 == 5 && op >> 6 == 1 {
        let m = &mut want_metas[0];
        let n = buf.len().min(m.content.len());
        m.content[..n].copy_from_slice(&buf[..n]);
    } else if ok && op & 7 == 5 && op >> 6 == 2 {
        want_metas.push(oxiblosc::frame::Metalayer {
            name: "fz".into(),
            content: buf[..buf.len().min(64)].to_vec(),
        });
    }
    assert!(sc.metalayers() == want_metas, "{what}: metalayers");
    if op & 7 == 5 && op >> 6 == 3 {
        let mut want = vlnames_before;
        if ok {
            assert!(!want.is_empty(), "{what}: deleted a vlmetalayer not there");
            want.remove(0);
        }
        let now: Vec<String> = sc.vlmeta_names().iter().map(|s| s.to_string()).collect();
        assert_eq!(now, want, "{what}: vlmetalayer names");
    }
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

/// Two openings of one frame hold the same chunks: the same counts and
/// sizes, and each of the first 16 chunks reads the same or fails in both.
pub fn same_chunks(a: &mut SChunk, b: &mut SChunk, what: &str) {
    a.set_dparams(dparams(1));
    b.set_dparams(dparams(1));
    assert_eq!(a.nchunks(), b.nchunks(), "chunks {what}");
    assert_eq!(a.nbytes(), b.nbytes(), "bytes {what}");
    for i in 0..a.nchunks().min(16) {
        match (a.decompress_chunk_vec(i), b.decompress_chunk_vec(i)) {
            (Ok(x), Ok(y)) => assert!(x == y, "chunk {i} reads differently {what}"),
            (Err(_), Err(_)) => {}
            (x, y) => panic!("chunk {i} {what}: {:?} and {:?}", x.err(), y.err()),
        }
    }
}

/// `lax`, opened with deferred chunk checks, against `strict`, the same
/// bytes opened without (since session 44): every frame the strict open
/// takes opens the same; one it refuses may open (read-only) when only its
/// chunks are wrong, and then every read fails or works without a panic,
/// and no frame it writes fails to reopen.
pub fn deferred_as_strict(lax: oxiblosc::Result<SChunk>, strict: Option<&mut SChunk>) {
    match (lax, strict) {
        (Ok(mut l), Some(s)) => same_chunks(&mut l, s, "deferred and strict"),
        (Ok(mut l), None) => {
            read_all(&mut l);
            must_reopen(&mut l, "deferred");
        }
        (Err(_), None) => {}
        (Err(e), Some(_)) => panic!("the strict open takes it, the deferred one refuses: {e}"),
    }
}
