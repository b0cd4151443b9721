//! Dimensions of length 1 removed or added (`NdMeta::squeeze`,
//! `squeeze_index`, `expand_dims`, `ndarray::with_dims`), boxes copied
//! between C-order buffers (`ndarray::copy_box`) and arrays concatenated
//! (`ndarray::concatenate`): each checked against a plain C-order model,
//! chunks copied as they are where the layouts allow it, bad input refused
//! and a failed concatenation leaving the array as it was.

mod support;
use support::Rng;

use oxiblosc::ndarray::{self, NdArray, NdMeta};
use oxiblosc::schunk::{Fill, SChunk};
use oxiblosc::{CParams, Codec};
use proptest::prelude::*;

fn items(n: usize, itemsize: usize, seed: u64) -> Vec<u8> {
    (0..n * itemsize)
        .map(|i| {
            (i as u64)
                .wrapping_mul(31)
                .wrapping_add(seed.wrapping_mul(7))
                .wrapping_add(i as u64 / 5) as u8
        })
        .collect()
}

fn make(meta: &NdMeta, data: &[u8]) -> SChunk {
    ndarray::create(meta, CParams::default().codec(Codec::Lz4), data).unwrap()
}

fn all(sc: SChunk) -> Vec<u8> {
    NdArray::open(sc).unwrap().to_vec().unwrap()
}

/// Every item of the array `sc` holds, read through `meta`.
fn all_of(sc: &mut SChunk, meta: &NdMeta) -> Vec<u8> {
    let n: u64 = meta.shape.iter().product::<u64>() * sc.typesize() as u64;
    let mut out = vec![0u8; n as usize];
    let lo = vec![0u64; meta.ndim()];
    ndarray::get_slice(sc, meta, &lo, &meta.shape, &mut out, &meta.shape).unwrap();
    out
}

fn dtype(itemsize: usize) -> String {
    NdMeta::default_dtype(itemsize)
}

#[test]
fn squeezed_and_expanded_metas_and_their_errors() {
    let m = NdMeta::new(&[1, 7, 1, 3], &[1, 5, 2, 3], &[1, 2, 1, 1], "<i4");
    let s = m.squeeze();
    assert_eq!(
        (s.shape, s.chunkshape, s.blockshape),
        (vec![7, 3], vec![5, 3], vec![2, 1])
    );
    let s = m.squeeze_index(&[false, false, true, false]).unwrap();
    assert_eq!(s.shape, [1, 7, 3]);
    assert_eq!(s.dtype, "<i4");
    // A dimension longer than 1, a flag list of another length.
    assert!(m.squeeze_index(&[false, true, false, false]).is_err());
    assert!(m.squeeze_index(&[true, false, true]).is_err());
    let e = m
        .expand_dims(&[true, false, false, true, false, false])
        .unwrap();
    assert_eq!(e.shape, [1, 1, 7, 1, 1, 3]);
    assert_eq!(e.chunkshape, [1, 1, 5, 1, 2, 3]);
    assert_eq!(e.blockshape, [1, 1, 2, 1, 1, 1]);
    // Unmarked places not matching the dimensions; more than 16 in all.
    assert!(m.expand_dims(&[true, false, false]).is_err());
    assert!(m.expand_dims(&[false; 5]).is_err());
    let mut many = vec![true; 17];
    many[..4].fill(false);
    assert!(m.expand_dims(&many).is_err());
    // A 0-dimensional array: squeezed as is, expanded to (1,).
    let z = NdMeta::new(&[], &[], &[], "<f8");
    assert_eq!(z.squeeze(), z);
    assert_eq!(z.expand_dims(&[true]).unwrap().shape, [1]);
}

#[test]
fn with_dims_copies_chunks_as_they_are_when_the_layout_is_the_same() {
    let meta = NdMeta::new(&[1, 9, 1, 5], &[1, 4, 1, 3], &[1, 2, 1, 2], "<u2");
    let data = items(45, 2, 1);
    let mut sc = ndarray::builder(&meta, CParams::default())
        .unwrap()
        .meta("other", b"kept")
        .build_memory()
        .unwrap();
    ndarray::fill(&mut sc, &meta, &data).unwrap();
    sc.vlmeta_add("note", b"carried").unwrap();
    let new = meta.squeeze();
    let mut view = ndarray::with_dims(&mut sc, &meta, &new).unwrap();
    assert_eq!(view.nchunks(), sc.nchunks());
    for i in 0..sc.nchunks() {
        assert_eq!(
            view.get_chunk(i).unwrap(),
            sc.get_chunk(i).unwrap(),
            "chunk {i}"
        );
    }
    assert_eq!(view.meta_get("other").unwrap(), b"kept");
    assert_eq!(view.vlmeta_get("note").unwrap().unwrap(), b"carried");
    let back = ndarray::find_meta(&view).unwrap().unwrap().1;
    assert_eq!(back.shape, [9, 5]);
    assert_eq!(all(view), data);
    // And expanded again, from the squeezed array.
    let wide = new.expand_dims(&[false, true, false, true]).unwrap();
    let mut view = ndarray::with_dims(&mut sc, &meta, &meta).unwrap();
    let again = ndarray::with_dims(&mut view, &meta, &meta).unwrap();
    assert_eq!(all(again), data);
    let mut sq = ndarray::with_dims(&mut sc, &meta, &new).unwrap();
    assert_eq!(all(ndarray::with_dims(&mut sq, &new, &wide).unwrap()), data);
}

#[test]
fn with_dims_gathers_new_chunks_when_a_removed_dimension_had_longer_chunks() {
    // Dimension 0 has length 1 but chunks of 2 and blocks of 2: without it
    // the chunks hold other items, gathered again.
    let meta = NdMeta::new(&[1, 11, 3], &[2, 4, 2], &[2, 3, 1], "<i4");
    let data = items(33, 4, 2);
    let mut sc = make(&meta, &data);
    let new = meta.squeeze();
    assert_eq!(new.chunkshape, [4, 2]);
    let view = ndarray::with_dims(&mut sc, &meta, &new).unwrap();
    assert_eq!(view.nchunks(), 6);
    assert_eq!(all(view), data);
    // A zero array stays zeros.
    let mut z = ndarray::builder(&meta, CParams::default())
        .unwrap()
        .build_memory()
        .unwrap();
    let per = 2 * 6 * 2;
    z.fill_special(per * 6, Fill::Zeros, per as usize * 4)
        .unwrap();
    let view = ndarray::with_dims(&mut z, &meta, &new).unwrap();
    assert_eq!(all(view), vec![0u8; 33 * 4]);
}

#[test]
fn with_dims_refuses_other_items_and_chunks_that_do_not_back_the_metalayer() {
    let meta = NdMeta::new(&[2, 6], &[1, 3], &[1, 3], "|u1");
    let mut sc = make(&meta, &items(12, 1, 3));
    let other = NdMeta::new(&[6, 2], &[3, 1], &[3, 1], "|u1");
    assert!(ndarray::with_dims(&mut sc, &meta, &other).is_err());
    let fewer = NdMeta::new(&[2, 5], &[1, 3], &[1, 3], "|u1");
    assert!(ndarray::with_dims(&mut sc, &meta, &fewer).is_err());
    // A metalayer whose chunks are larger than the stored ones.
    let lying = NdMeta::new(&[2, 6, 1], &[1, 3, 1], &[1, 3, 1], "|u1");
    let wide = NdMeta::new(&[2, 6], &[1, 6], &[1, 6], "|u1");
    let mut sc2 = make(&wide, &items(12, 1, 4));
    assert!(ndarray::with_dims(&mut sc2, &meta, &lying).is_err());
}

/// `copy_box` by hand: every item of the box, one at a time.
#[allow(clippy::too_many_arguments)]
fn naive_copy(
    is: usize,
    src: &[u8],
    ss: &[u64],
    lo: &[u64],
    hi: &[u64],
    dst: &mut [u8],
    ds: &[u64],
    at: &[u64],
) {
    let n = ss.len();
    let ext: Vec<u64> = (0..n).map(|d| hi[d] - lo[d]).collect();
    let count: u64 = ext.iter().product();
    for k in 0..count {
        let mut rem = k;
        let (mut so, mut dof) = (0u64, 0u64);
        let mut idx = vec![0u64; n];
        for d in (0..n).rev() {
            idx[d] = rem % ext[d];
            rem /= ext[d];
        }
        for d in 0..n {
            so = so * ss[d] + lo[d] + idx[d];
            dof = dof * ds[d] + at[d] + idx[d];
        }
        let (so, dof) = (so as usize * is, dof as usize * is);
        dst[dof..dof + is].copy_from_slice(&src[so..so + is]);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    #[test]
    fn copy_box_matches_the_item_by_item_copy(
        ndim in 0usize..5,
        is in 1usize..5,
        seed in any::<u64>(),
    ) {
        let mut r = Rng(seed);
        let ss: Vec<u64> = (0..ndim).map(|_| 1 + r.below(5)).collect();
        let lo: Vec<u64> = ss.iter().map(|&s| r.below(s + 1)).collect();
        let hi: Vec<u64> = (0..ndim).map(|d| lo[d] + r.below(ss[d] - lo[d] + 1)).collect();
        // Whole dimensions now and then, as the run merging takes them.
        let ds: Vec<u64> = (0..ndim)
            .map(|d| hi[d] - lo[d] + if r.below(2) == 0 { 0 } else { r.below(3) })
            .collect();
        let at: Vec<u64> = (0..ndim).map(|d| r.below(ds[d] - (hi[d] - lo[d]) + 1)).collect();
        let sn = ss.iter().product::<u64>() as usize * is;
        let dn = ds.iter().product::<u64>() as usize * is;
        let src = items(sn / is, is, seed);
        let mut got = vec![0xeeu8; dn];
        let mut want = got.clone();
        ndarray::copy_box(is, &src, &ss, &lo, &hi, &mut got, &ds, &at).unwrap();
        naive_copy(is, &src, &ss, &lo, &hi, &mut want, &ds, &at);
        prop_assert_eq!(got, want);
    }
}

#[test]
fn copy_box_refuses_boxes_and_buffers_that_do_not_fit() {
    let src = [0u8; 12];
    // (item size, source bytes, source shape, start, stop, destination
    // shape, place), into a destination of 6 bytes.
    type Case<'a> = (
        usize,
        usize,
        &'a [u64],
        &'a [u64],
        &'a [u64],
        &'a [u64],
        &'a [u64],
    );
    let call = |(is, sn, ss, lo, hi, ds, at): Case| {
        let mut dst = [0u8; 6];
        ndarray::copy_box(is, &src[..sn], ss, lo, hi, &mut dst, ds, at)
    };
    assert!(call((1, 12, &[3, 4], &[1, 1], &[3, 3], &[2, 3], &[0, 1])).is_ok());
    let bad: [Case; 9] = [
        // Stop past the source; start after stop; past the destination.
        (1, 12, &[3, 4], &[1, 1], &[3, 5], &[2, 3], &[0, 0]),
        (1, 12, &[3, 4], &[2, 1], &[1, 3], &[2, 3], &[0, 0]),
        (1, 12, &[3, 4], &[1, 1], &[3, 3], &[2, 3], &[0, 2]),
        // Buffers shorter than their shapes; item size 0; lengths that
        // differ.
        (2, 12, &[3, 4], &[0, 0], &[1, 1], &[2, 3], &[0, 0]),
        (1, 11, &[3, 4], &[0, 0], &[1, 1], &[2, 3], &[0, 0]),
        (0, 12, &[3, 4], &[0, 0], &[1, 1], &[2, 3], &[0, 0]),
        (1, 12, &[3, 4], &[0], &[1, 1], &[2, 3], &[0, 0]),
        // Shapes whose bytes overflow; a place whose end overflows.
        (1, 12, &[u64::MAX, 2], &[0, 0], &[1, 1], &[2, 3], &[0, 0]),
        (1, 12, &[3, 4], &[0, 0], &[1, 1], &[2, 3], &[0, u64::MAX]),
    ];
    for (k, case) in bad.into_iter().enumerate() {
        assert!(call(case).is_err(), "case {k}");
    }
}

/// The C-order concatenation of `a` (shape `sa`) and `b` along `axis`.
fn naive_concat(a: &[u8], sa: &[u64], b: &[u8], sb: &[u64], axis: usize, is: usize) -> Vec<u8> {
    let outer: u64 = sa[..axis].iter().product();
    let ia: usize = sa[axis..].iter().product::<u64>() as usize * is;
    let ib: usize = sb[axis..].iter().product::<u64>() as usize * is;
    let mut out = Vec::new();
    for o in 0..outer as usize {
        out.extend_from_slice(&a[o * ia..(o + 1) * ia]);
        out.extend_from_slice(&b[o * ib..(o + 1) * ib]);
    }
    out
}

#[test]
fn concatenations_match_the_model_and_copy_aligned_chunks_as_they_are() {
    let mut r = Rng(0xc0ca7);
    let dir = support::tempdir("nd-concat");
    // Aligned, by where the source lives: its chunks borrowed from memory,
    // or read from its file.
    let mut aligned_seen = [0, 0];
    for case in 0..80 {
        let ndim = 1 + r.below(3) as usize;
        let axis = r.below(ndim as u64) as usize;
        let is = [1usize, 2, 4, 8][r.below(4) as usize];
        let cs: Vec<u64> = (0..ndim).map(|_| 1 + r.below(4)).collect();
        // Blocks at most the chunks, or now and then longer (C allows it).
        let bs: Vec<u64> = (0..ndim)
            .map(|d| {
                if r.below(5) == 0 {
                    cs[d] + 1
                } else {
                    1 + r.below(cs[d])
                }
            })
            .collect();
        let sa: Vec<u64> = (0..ndim).map(|_| 1 + r.below(7)).collect();
        let mut sb = sa.clone();
        sb[axis] = 1 + r.below(7);
        if r.below(2) == 0 {
            // Ends at a chunk boundary: aligned when b's shapes are a's.
            sb[axis] = cs[axis] * (1 + r.below(2));
        }
        let (cb, bb) = if r.below(3) == 0 {
            let c: Vec<u64> = (0..ndim).map(|_| 1 + r.below(4)).collect();
            let b: Vec<u64> = c.iter().map(|&c| 1 + r.below(c)).collect();
            (c, b)
        } else {
            (cs.clone(), bs.clone())
        };
        let mut ma = NdMeta::new(&sa, &cs, &bs, &dtype(is));
        let mb = NdMeta::new(&sb, &cb, &bb, &dtype(is));
        let (da, db) = (
            items(sa.iter().product::<u64>() as usize, is, case),
            items(sb.iter().product::<u64>() as usize, is, case + 100),
        );
        let mut a = make(&ma, &da);
        let mut b = make(&mb, &db);
        let on_disk = case % 2 == 1;
        if on_disk {
            let path = dir.join(format!("b{case}.b2nd"));
            b.save(&path).unwrap();
            b = SChunk::open(&path).unwrap();
            assert!(b.is_on_disk());
        }
        let aligned = cb == cs && bb == bs && sa[axis].is_multiple_of(cs[axis]);
        let before: Vec<Vec<u8>> = (0..b.nchunks())
            .map(|i| b.get_chunk(i).unwrap().into_owned())
            .collect();
        ndarray::concatenate(&mut a, &mut ma, &mut b, &mb, axis).unwrap();
        let mut want_shape = sa.clone();
        want_shape[axis] += sb[axis];
        assert_eq!(ma.shape, want_shape, "case {case}");
        assert_eq!(
            ndarray::find_meta(&a).unwrap().unwrap().1,
            ma,
            "case {case}"
        );
        if aligned {
            // Each of b's chunks is one of the new chunks, byte for byte.
            let mut got: Vec<Vec<u8>> = (0..a.nchunks())
                .map(|i| a.get_chunk(i).unwrap().into_owned())
                .collect();
            for c in &before {
                let at = got.iter().position(|g| g == c);
                assert!(
                    at.is_some(),
                    "case {case}: a chunk of b not copied as it is"
                );
                got.remove(at.unwrap());
            }
            aligned_seen[usize::from(on_disk)] += 1;
        }
        assert_eq!(
            all(a),
            naive_concat(&da, &sa, &db, &sb, axis, is),
            "case {case}: {sa:?} {cs:?} {bs:?} + {sb:?} {cb:?} {bb:?} axis {axis}"
        );
    }
    assert!(aligned_seen.iter().all(|&k| k >= 5), "{aligned_seen:?}");
}

#[test]
fn a_concatenation_of_zero_chunks_and_of_no_items() {
    let mut ma = NdMeta::new(&[4, 3], &[2, 3], &[1, 3], "|u1");
    let mut a = make(&ma, &[1u8; 12]);
    let mb = NdMeta::new(&[4, 0], &[2, 0], &[1, 0], "|u1");
    let mut b = make(&mb, &[]);
    // Along axis 1: b adds no items.
    ndarray::concatenate(&mut a, &mut ma, &mut b, &mb, 1).unwrap();
    assert_eq!(ma.shape, [4, 3]);
    let mz = NdMeta::new(&[2, 3], &[2, 3], &[1, 3], "|u1");
    let mut z = ndarray::builder(&mz, CParams::default())
        .unwrap()
        .build_memory()
        .unwrap();
    z.fill_special(6, Fill::Zeros, 6).unwrap();
    ndarray::concatenate(&mut a, &mut ma, &mut z, &mz, 0).unwrap();
    let mut want = vec![1u8; 12];
    want.extend_from_slice(&[0; 6]);
    assert_eq!(all(a), want);
}

#[test]
fn bad_concatenations_are_errors_and_change_nothing() {
    let mut ma = NdMeta::new(&[4, 3], &[2, 2], &[1, 2], "<i2");
    let da = items(12, 2, 9);
    let mut a = make(&ma, &da);
    let check = |a: &mut SChunk, ma: &NdMeta| {
        assert_eq!(ma.shape, [4, 3]);
        let on_disk = ndarray::find_meta(a).unwrap().unwrap().1;
        assert_eq!(&on_disk, ma);
        let mut got = vec![0u8; 24];
        ndarray::get_slice(a, ma, &[0, 0], &[4, 3], &mut got, &[4, 3]).unwrap();
        assert_eq!(got, da);
    };
    let cases = [
        (NdMeta::new(&[4, 5], &[2, 2], &[1, 2], "<i2"), 0), // other length in dimension 1
        (NdMeta::new(&[4], &[2], &[1], "<i2"), 0),          // other number of dimensions
        (NdMeta::new(&[4, 3], &[2, 2], &[1, 2], "<i2"), 2), // axis past the dimensions
    ];
    for (mb, axis) in cases {
        let n: u64 = mb.shape.iter().product();
        let mut b = make(&mb, &items(n as usize, 2, 1));
        assert!(ndarray::concatenate(&mut a, &mut ma, &mut b, &mb, axis).is_err());
        check(&mut a, &ma);
    }
    // Another item size.
    let mb = NdMeta::new(&[4, 3], &[2, 2], &[1, 2], "<i4");
    let mut b = make(&mb, &items(12, 4, 1));
    assert!(ndarray::concatenate(&mut a, &mut ma, &mut b, &mb, 0).is_err());
    check(&mut a, &ma);
    // A source whose metalayer says more chunks than it has.
    let mb = NdMeta::new(&[8, 3], &[2, 2], &[1, 2], "<i2");
    let small = NdMeta::new(&[4, 3], &[2, 2], &[1, 2], "<i2");
    let mut b = make(&small, &items(12, 2, 1));
    assert!(ndarray::concatenate(&mut a, &mut ma, &mut b, &mb, 0).is_err());
    check(&mut a, &ma);
    // A source whose chunks hold other bytes than its metalayer says:
    // copied as they are (aligned, each chunk checked first) or read.
    let wide = NdMeta::new(&[4, 3], &[2, 3], &[1, 3], "<i2");
    let lying = NdMeta::new(&[4, 2], &[2, 2], &[1, 2], "<i2");
    let mut b = make(&wide, &items(12, 2, 1));
    let mut mc = NdMeta::new(&[4, 2], &[2, 2], &[1, 2], "<i2");
    let mut c = make(&mc, &items(8, 2, 5));
    let was = mc.clone();
    assert!(ndarray::concatenate(&mut c, &mut mc, &mut b, &lying, 0).is_err());
    assert_eq!(mc, was);
    assert_eq!(all_of(&mut c, &mc), items(8, 2, 5));
    assert!(ndarray::concatenate(&mut a, &mut ma, &mut b, &lying, 1).is_err());
    check(&mut a, &ma);
    // 0-dimensional arrays.
    let mut m0 = NdMeta::new(&[], &[], &[], "<i2");
    let mut s0 = make(&m0, &[1, 2]);
    let mut t0 = make(&m0.clone(), &[3, 4]);
    let m0c = m0.clone();
    assert!(ndarray::concatenate(&mut s0, &mut m0, &mut t0, &m0c, 0).is_err());
}
