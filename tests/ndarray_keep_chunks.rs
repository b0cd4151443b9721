//! Shape changes made of whole chunks, as C-Blosc2's `b2nd_resize` and
//! `b2nd_insert` make them (`ndarray::{resize_keep_chunks,
//! insert_keep_chunks}`, what the C ABI's `b2nd_resize`, `b2nd_insert`,
//! `b2nd_append` and `b2nd_delete` run): kept chunks stay byte for byte,
//! padding included, so a growth reads what the padding held; away from a
//! dimension's end only whole chunks come or go; a write covering a chunk's
//! items leaves its padding zero (`set_slice`, as C-Blosc2's
//! `b2nd_set_slice_cbuffer`).

mod support;

use oxiblosc::ndarray::{self, NdMeta};
use oxiblosc::schunk::SChunk;
use oxiblosc::{CParams, Error, SpecialValue};

fn params() -> CParams {
    CParams::default().typesize(1)
}

/// An array of `meta`'s shape made of `data`.
fn array(meta: &NdMeta, data: &[u8]) -> SChunk {
    ndarray::create(meta, params(), data).unwrap()
}

/// An array whose every chunk repeats `v`, padding included, as C-Blosc2's
/// `b2nd_full` writes it.
fn full(meta: &NdMeta, v: u8) -> SChunk {
    let layout = ndarray::Layout::new(meta, 1).unwrap();
    let mut sc = ndarray::builder(meta, params())
        .unwrap()
        .build_memory()
        .unwrap();
    let chunk = oxiblosc::special_chunk(
        sc.compress_params(),
        layout.chunk_nbytes(),
        SpecialValue::Value,
        &[v],
    )
    .unwrap();
    for _ in 0..layout.nchunks() {
        sc.append_chunk(&chunk).unwrap();
    }
    sc
}

fn items(sc: &mut SChunk, meta: &NdMeta) -> Vec<u8> {
    let n: u64 = meta.shape.iter().product();
    let mut out = vec![0xEE; n as usize];
    let zero = vec![0; meta.ndim()];
    ndarray::get_slice(sc, meta, &zero, &meta.shape, &mut out, &meta.shape).unwrap();
    out
}

fn chunks(sc: &mut SChunk) -> Vec<Vec<u8>> {
    (0..sc.nchunks())
        .map(|i| sc.get_chunk(i).unwrap().into_owned())
        .collect()
}

#[test]
fn growth_reads_the_padding_of_kept_chunks() {
    let mut meta = NdMeta::new(&[5], &[4], &[2], "|u1");
    let mut sc = full(&meta, 7);
    let before = chunks(&mut sc);
    ndarray::resize_keep_chunks(&mut sc, &mut meta, &[10], None).unwrap();
    assert_eq!(meta.shape, [10]);
    assert_eq!(items(&mut sc, &meta), [7, 7, 7, 7, 7, 7, 7, 7, 0, 0]);
    let after = chunks(&mut sc);
    assert_eq!(
        after[..2],
        before[..],
        "the kept chunks are the stored bytes"
    );
    // The added chunk is a zero chunk (a header, no data).
    assert_eq!(after.len(), 3);
    assert!(after[2].len() <= 32, "{} bytes", after[2].len());
    // The Rust API's resize makes every new item zero.
    let mut meta2 = NdMeta::new(&[5], &[4], &[2], "|u1");
    let mut sc2 = full(&meta2, 7);
    ndarray::resize(&mut sc2, &mut meta2, &[10], None).unwrap();
    assert_eq!(items(&mut sc2, &meta2), [7, 7, 7, 7, 7, 0, 0, 0, 0, 0]);
}

#[test]
fn a_shrink_keeps_the_items_it_cuts_as_padding() {
    let mut meta = NdMeta::new(&[10], &[4], &[2], "|u1");
    let mut sc = array(&meta, &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    let before = chunks(&mut sc);
    ndarray::resize_keep_chunks(&mut sc, &mut meta, &[5], None).unwrap();
    // The third chunk (items 8..) goes, the second stays whole.
    assert_eq!(chunks(&mut sc), before[..2]);
    assert_eq!(items(&mut sc, &meta), [1, 2, 3, 4, 5]);
    ndarray::resize_keep_chunks(&mut sc, &mut meta, &[12], None).unwrap();
    assert_eq!(items(&mut sc, &meta), [1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 0]);
}

#[test]
fn away_from_the_end_only_whole_chunks_come_or_go() {
    let mut meta = NdMeta::new(&[4, 6], &[2, 3], &[1, 3], "|u1");
    let data: Vec<u8> = (1..=24).collect();
    let mut sc = array(&meta, &data);
    // Two rows of zero chunks at row 2.
    ndarray::resize_keep_chunks(&mut sc, &mut meta, &[6, 6], Some(&[2, 0])).unwrap();
    let mut want = data[..12].to_vec();
    want.extend([0; 12]);
    want.extend(&data[12..]);
    assert_eq!(items(&mut sc, &meta), want);
    // Not at a chunk boundary, or not whole chunks: refused, nothing
    // changed (ndarray::resize rebuilds chunks and takes the second).
    let kept = chunks(&mut sc);
    for (shape, start) in [
        ([8, 6], [1, 0]),
        ([7, 6], [2, 0]),
        ([6, 8], [0, 3]),
        ([5, 6], [2, 0]),
    ] {
        let e = ndarray::resize_keep_chunks(&mut sc, &mut meta, &shape, Some(&start)).unwrap_err();
        assert!(
            matches!(e, Error::InvalidParam(_)),
            "{shape:?} at {start:?}: {e}"
        );
        assert_eq!(meta.shape, [6, 6]);
        assert_eq!(chunks(&mut sc), kept);
    }
    // A start past the end, a shrink past the end, a wrong rank.
    for (shape, start) in [
        (vec![6, 7], vec![0, 7]),
        (vec![2, 6], vec![4, 0]),
        (vec![6], vec![0]),
    ] {
        let e = ndarray::resize_keep_chunks(&mut sc, &mut meta, &shape, Some(&start)).unwrap_err();
        assert!(
            matches!(e, Error::InvalidParam(_)),
            "{shape:?} at {start:?}: {e}"
        );
    }
    // The two zero rows removed again.
    ndarray::resize_keep_chunks(&mut sc, &mut meta, &[4, 6], Some(&[2, 0])).unwrap();
    assert_eq!(items(&mut sc, &meta), data);
    // At the end any length goes, in both dimensions at once.
    ndarray::resize_keep_chunks(&mut sc, &mut meta, &[3, 8], None).unwrap();
    let mut want = Vec::new();
    for r in 0..3 {
        want.extend(&data[r * 6..r * 6 + 6]);
        want.extend([0, 0]);
    }
    assert_eq!(items(&mut sc, &meta), want);
}

#[test]
fn an_append_keeps_the_padding_past_its_new_end() {
    let mut meta = NdMeta::new(&[12], &[4], &[2], "|u1");
    let data: Vec<u8> = (1..=12).collect();
    let mut sc = array(&meta, &data);
    ndarray::resize_keep_chunks(&mut sc, &mut meta, &[9], None).unwrap();
    // Items 10..12 stay in the third chunk as padding; the append writes
    // item 9 into that chunk and keeps the rest of it.
    ndarray::insert_keep_chunks(&mut sc, &mut meta, &[99], 0, 9).unwrap();
    assert_eq!(items(&mut sc, &meta), [1, 2, 3, 4, 5, 6, 7, 8, 9, 99]);
    ndarray::resize_keep_chunks(&mut sc, &mut meta, &[12], None).unwrap();
    assert_eq!(
        items(&mut sc, &meta),
        [1, 2, 3, 4, 5, 6, 7, 8, 9, 99, 11, 12]
    );
    // An insert of a whole chunk at a chunk boundary.
    ndarray::insert_keep_chunks(&mut sc, &mut meta, &[40, 41, 42, 43], 0, 4).unwrap();
    assert_eq!(
        items(&mut sc, &meta),
        [1, 2, 3, 4, 40, 41, 42, 43, 5, 6, 7, 8, 9, 99, 11, 12]
    );
    // Part of a chunk away from the end: refused, as C-Blosc2 refuses it
    // (ndarray::insert takes it).
    let e = ndarray::insert_keep_chunks(&mut sc, &mut meta, &[1, 2], 0, 4).unwrap_err();
    assert!(matches!(e, Error::InvalidParam(_)), "{e}");
    assert_eq!(meta.shape, [16]);
}

#[test]
fn a_write_covering_a_chunk_zeroes_its_padding() {
    let meta = NdMeta::new(&[6], &[4], &[2], "|u1");
    // The second chunk holds items 4 and 5 and, as padding, 6s.
    for (lo, src, tail) in [
        // Its two items written: started from zeros.
        (4u64, vec![50u8, 60], vec![50u8, 60, 0, 0]),
        // One of them: decoded and patched, the padding kept.
        (5, vec![60], vec![6, 60, 6, 6]),
    ] {
        let mut m = meta.clone();
        let mut sc = full(&m, 6);
        ndarray::set_slice(&mut sc, &m, &[lo], &[6], &src, &[src.len() as u64]).unwrap();
        ndarray::resize_keep_chunks(&mut sc, &mut m, &[8], None).unwrap();
        let got = items(&mut sc, &m);
        assert_eq!(got[..4], [6, 6, 6, 6]);
        assert_eq!(got[4..], tail[..], "a write of {lo}..6");
    }
}

#[test]
fn a_changed_frame_reopens_with_its_chunks() {
    let path = support::tempdir("keep_chunks").join("a.b2nd");
    let mut meta = NdMeta::new(&[3, 5], &[2, 2], &[1, 2], "|u1");
    let data: Vec<u8> = (1..=15).collect();
    let mut sc = ndarray::builder(&meta, params())
        .unwrap()
        .fsync(false)
        .create_file(&path)
        .unwrap();
    ndarray::fill(&mut sc, &meta, &data).unwrap();
    ndarray::resize_keep_chunks(&mut sc, &mut meta, &[2, 5], None).unwrap();
    ndarray::insert_keep_chunks(&mut sc, &mut meta, &[7; 10], 0, 2).unwrap();
    ndarray::resize_keep_chunks(&mut sc, &mut meta, &[4, 6], None).unwrap();
    let want = items(&mut sc, &meta);
    let mine = chunks(&mut sc);
    drop(sc);
    let mut back = SChunk::open(&path).unwrap();
    let meta2 = ndarray::NdArray::open(SChunk::open(&path).unwrap())
        .unwrap()
        .meta()
        .clone();
    assert_eq!(meta2.shape, [4, 6]);
    assert_eq!(items(&mut back, &meta2), want);
    assert_eq!(chunks(&mut back), mine);
}
