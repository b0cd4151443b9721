//! NDArrays: the b2nd/caterva metalayer decoder, `.npy` headers, and a
//! contiguous frame opened as an NDArray then read whole (bounded by
//! `MAX_OUTPUT`), as `.npy`, and as a box picked by the input's last bytes
//! through `ndarray::get_slice` (which decodes only the blocks the box
//! touches): when the whole read works, the box must too, and equal the
//! whole read's items. Then the same box is written back with those items
//! (`set_slice`) on a writable copy: refused or not, the frame reopens, and
//! a write that works leaves the array as it was (unless the frame's own
//! compression parameters are lossy).
#![no_main]
use libfuzzer_sys::fuzz_target;
use oxiblosc::Filter;
use oxiblosc::ndarray::{self, NdArray, NdMeta};
use oxiblosc::schunk::{OpenOptions, SChunk};

#[path = "common.rs"]
mod common;

fuzz_target!(|data: &[u8]| {
    // The metalayer alone: what decodes must encode and decode the same.
    if let Ok(m) = NdMeta::decode(data) {
        if let Ok(b) = m.encode() {
            let again = NdMeta::decode(&b).expect("an encoded metalayer decodes");
            assert_eq!(again.shape, m.shape);
        }
    }
    let _ = ndarray::npy::read_header(data);
    let Ok(mut sc) = OpenOptions::new()
        .read_only(true)
        .from_cframe(data.to_vec())
    else {
        return;
    };
    sc.set_dparams(common::dparams(1));
    let Ok(mut a) = NdArray::open(sc) else { return };
    if a.nbytes() > common::MAX_OUTPUT as u64 {
        return;
    }
    if let Ok(v) = a.to_vec() {
        assert_eq!(v.len() as u64, a.nbytes(), "to_vec against nbytes");
        if let Some((start, stop, items)) = check_box(&mut a, &v, data) {
            rewrite_box(data, &v, &start, &stop, &items);
        }
        let mut npy = Vec::new();
        if a.write_npy(&mut npy).is_ok() {
            assert!(npy.len() as u64 >= a.nbytes(), ".npy shorter than its data");
        }
    }
});

/// A box of the array, its bounds taken from the input's last bytes, read by
/// `get_slice` into a buffer of the box's shape: equal to the same items of
/// `all` (the array read whole, C order). The box and its items.
fn check_box(a: &mut NdArray, all: &[u8], data: &[u8]) -> Option<(Vec<u64>, Vec<u64>, Vec<u8>)> {
    let meta = a.meta().clone();
    let n = meta.ndim();
    let is = a.layout().itemsize();
    if n == 0 || meta.shape.contains(&0) || is == 0 {
        return None;
    }
    let byte = |k: usize| u64::from(data[data.len() - 1 - k % data.len()]);
    let start: Vec<u64> = (0..n).map(|d| byte(2 * d) % meta.shape[d]).collect();
    let stop: Vec<u64> = (0..n)
        .map(|d| start[d] + 1 + byte(2 * d + 1) % (meta.shape[d] - start[d]))
        .collect();
    let bshape: Vec<u64> = (0..n).map(|d| stop[d] - start[d]).collect();
    let items: u64 = bshape.iter().product();
    let mut got = vec![0u8; items as usize * is];
    ndarray::get_slice(a.schunk(), &meta, &start, &stop, &mut got, &bshape)
        .expect("a box of an array that reads whole reads");
    // The box's rows (its last dimension) from the whole array.
    let row = bshape[n - 1] as usize * is;
    let mut idx = start.clone();
    for r in got.chunks_exact(row) {
        let flat = (0..n).fold(0u64, |f, d| f * meta.shape[d] + idx[d]) as usize * is;
        assert_eq!(r, &all[flat..flat + row], "box row at {idx:?}");
        // The next row: count up the dimensions before the last.
        for d in (0..n - 1).rev() {
            idx[d] += 1;
            if idx[d] < stop[d] {
                break;
            }
            idx[d] = start[d];
        }
    }
    Some((start, stop, got))
}

/// `items` written back into the box `start..stop` of a writable copy of
/// the frame in `data`, whose array reads as `all`.
fn rewrite_box(data: &[u8], all: &[u8], start: &[u64], stop: &[u64], items: &[u8]) {
    let Ok(mut sc) = OpenOptions::new().from_cframe(data.to_vec()) else {
        return;
    };
    sc.set_dparams(common::dparams(1));
    let lossless = sc
        .cparams()
        .filters
        .iter()
        .all(|f| !matches!(f, Some(Filter::TruncPrec(_) | Filter::User(_))));
    let Ok(a) = NdArray::open(sc) else { return };
    let meta = a.meta().clone();
    let mut sc = a.into_schunk();
    let bshape: Vec<u64> = start.iter().zip(stop).map(|(a, b)| b - a).collect();
    let ok = ndarray::set_slice(&mut sc, &meta, start, stop, items, &bshape).is_ok();
    common::must_reopen(&mut sc, "set_slice");
    if ok && lossless {
        let mut a = NdArray::open(sc).expect("an array that was written reopens");
        let again = a.to_vec().expect("an array that was written reads");
        assert!(
            again == all,
            "set_slice of a box's own items changed the array"
        );
        grow_and_shrink(a.into_schunk(), meta, all);
    }
}

/// The array (reading as `all`) grown by one chunk along its first
/// dimension, then shrunk back: grown, it reads as `all` and zeros; shrunk,
/// as `all`.
fn grow_and_shrink(mut sc: SChunk, mut meta: NdMeta, all: &[u8]) {
    let old = meta.shape.clone();
    let mut grown = old.clone();
    grown[0] += meta.chunkshape[0];
    // Resizing rewrites chunks: kept to small arrays, for speed.
    let bytes = all.len() as u64 / old[0] * grown[0];
    if bytes > 1 << 20 || ndarray::resize(&mut sc, &mut meta, &grown, None).is_err() {
        return;
    }
    common::must_reopen(&mut sc, "resize");
    let mut a = NdArray::open(sc).expect("a grown array reopens");
    let v = a.to_vec().expect("a grown array reads");
    assert!(v[..all.len()] == *all, "growing changed the old items");
    assert!(v[all.len()..].iter().all(|&b| b == 0), "new items not zero");
    let mut sc = a.into_schunk();
    ndarray::resize(&mut sc, &mut meta, &old, None).expect("a grown array shrinks back");
    let mut a = NdArray::open(sc).expect("a shrunk array reopens");
    assert!(
        a.to_vec().expect("a shrunk array reads") == all,
        "grow then shrink changed the array"
    );
}
