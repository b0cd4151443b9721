//! NDArrays: the b2nd/caterva metalayer decoder, `.npy` headers, and a
//! contiguous frame opened as an NDArray then read whole (bounded by
//! `MAX_OUTPUT`), as `.npy`, and as a box picked by the input's last bytes
//! through `ndarray::get_slice` (which decodes only the blocks the box
//! touches): when the whole read works, the box must too, and equal the
//! whole read's items. Then, on a writable copy, the box is written with
//! other items (`set_slice`): refused or not, the frame reopens; a write
//! that works changes the box's items and no others, one that fails changes
//! nothing (since session 18; unless the frame's own compression parameters
//! are lossy); then the old items are written back and the array reads as
//! before.
#![no_main]
use libfuzzer_sys::fuzz_target;
use oxiblosc::Filter;
use oxiblosc::ndarray::{self, NdArray, NdMeta};
use oxiblosc::schunk::{OpenOptions, SChunk};

#[path = "common.rs"]
mod common;

fuzz_target!(|data: &[u8]| {
    // The metalayer alone: what decodes must encode and decode the same.
    if let Ok(m) = NdMeta::decode(data)
        && let Ok(b) = m.encode()
    {
        let again = NdMeta::decode(&b).expect("an encoded metalayer decodes");
        assert_eq!(again.shape, m.shape);
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
        match a.write_npy(&mut npy) {
            Ok(()) => {
                assert!(npy.len() as u64 >= a.nbytes(), ".npy shorter than its data");
                // Since session 45: a plain dtype's header reads back (with
                // our reader, which takes no structured dtype) as the
                // array's dtype and shape, its data just after.
                if !a.meta().dtype.starts_with('[') {
                    let (h, at) = ndarray::npy::read_header(&npy)
                        .unwrap_or_else(|e| panic!("the .npy written does not read: {e}"));
                    assert_eq!(h.dtype, a.meta().dtype, ".npy dtype");
                    assert_eq!(h.shape, a.meta().shape, ".npy shape");
                    assert_eq!((npy.len() - at) as u64, a.nbytes(), ".npy data");
                }
            }
            // A dtype no .npy can say: refused before a byte is written.
            Err(oxiblosc::Error::Unsupported(_)) => assert!(npy.is_empty(), "a refused .npy wrote"),
            Err(_) => {}
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
    for_each_row(&meta.shape, &start, &stop, is, |k, flat, row| {
        assert_eq!(
            &got[k..k + row],
            &all[flat..flat + row],
            "box row at byte {flat}"
        );
    });
    Some((start, stop, got))
}

/// Each row (last dimension) of the box `start..stop` of an array of
/// `shape` and `is`-byte items: `f(offset in the box, offset in the
/// array, row length)`, in bytes.
fn for_each_row(
    shape: &[u64],
    start: &[u64],
    stop: &[u64],
    is: usize,
    mut f: impl FnMut(usize, usize, usize),
) {
    let n = shape.len();
    let row = (stop[n - 1] - start[n - 1]) as usize * is;
    let rows: u64 = (0..n - 1).map(|d| stop[d] - start[d]).product();
    let mut idx = start.to_vec();
    for r in 0..rows as usize {
        let flat = (0..n).fold(0u64, |f, d| f * shape[d] + idx[d]) as usize * is;
        f(r * row, flat, row);
        // The next row: count up the dimensions before the last.
        for d in (0..n - 1).rev() {
            idx[d] += 1;
            if idx[d] < stop[d] {
                break;
            }
            idx[d] = start[d];
        }
    }
}

/// Other items (`items` with every byte changed) written into the box
/// `start..stop` of a writable copy of the frame in `data`, whose array
/// reads as `all`: the array then reads as `all` with the box replaced, or,
/// when the write is refused, as `all`. Then the box's own `items` are
/// written back, and the array reads as `all` again.
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
    let is = a.layout().itemsize();
    let mut sc = a.into_schunk();
    let bshape: Vec<u64> = start.iter().zip(stop).map(|(a, b)| b - a).collect();
    let other: Vec<u8> = items
        .iter()
        .enumerate()
        .map(|(i, b)| b ^ (i as u8).wrapping_mul(151) ^ 0x5A)
        .collect();
    let ok = ndarray::set_slice(&mut sc, &meta, start, stop, &other, &bshape).is_ok();
    common::must_reopen(&mut sc, "set_slice");
    if !lossless {
        return;
    }
    let mut a = NdArray::open(sc).expect("an array that was written reopens");
    let mut want = all.to_vec();
    if ok {
        for_each_row(&meta.shape, start, stop, is, |k, flat, row| {
            want[flat..flat + row].copy_from_slice(&other[k..k + row]);
        });
    }
    let again = a.to_vec().expect("an array that was written reads");
    assert!(
        again == want,
        "set_slice (worked: {ok}) left other bytes than the box's new items"
    );
    if !ok {
        return;
    }
    let mut sc = a.into_schunk();
    ndarray::set_slice(&mut sc, &meta, start, stop, items, &bshape)
        .expect("a box written once is written again");
    let mut a = NdArray::open(sc).expect("an array that was written reopens");
    assert!(
        a.to_vec().expect("an array that was written reads") == all,
        "set_slice of the box's old items did not restore the array"
    );
    grow_and_shrink(a.into_schunk(), meta, all);
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
