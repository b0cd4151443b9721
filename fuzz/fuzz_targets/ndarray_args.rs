//! NDArray calls with any arguments (since session 29): the other NDArray
//! targets keep their arguments inside the array (values modulo its shape),
//! so they never pass `u64::MAX`, a position past the end or a buffer shape
//! whose product overflows; an audit found six such bugs that way
//! (`tests/ndarray_audit.rs`). Here every shape, chunk and block length,
//! start, stop, buffer shape and position may be small, large or an edge
//! value (`u64::MAX`, `2^63`, `2^32`...), and the array itself may be any
//! geometry `NdMeta` and `Layout` accept (empty dimensions, chunk lengths
//! of 0 from `default_shapes`, huge dimensions of an empty array). Since
//! session 37 a resize or insert may go through the C ABI's
//! `resize_keep_chunks` / `insert_keep_chunks` instead.
//!
//! Checked: no panic and no allocation past libFuzzer's limit; a call that
//! fails fails with `InvalidParam` and leaves `meta` as it was; after every
//! call the array's layout still matches its super-chunk, and at the end
//! its frame reopens as an NDArray of the same shape.
#![no_main]
use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use oxiblosc::ndarray::{self, Layout, NdArray, NdMeta};
use oxiblosc::schunk::{Fill, SChunk};
use oxiblosc::{CParams, DParams, Error};

#[path = "common.rs"]
mod common;

/// A number: small, any, or one of the edges arithmetic goes wrong at.
#[derive(Arbitrary, Debug, Clone, Copy)]
enum Num {
    Small(u8),
    Any(u64),
    Edge(u8),
}

impl Num {
    fn get(self) -> u64 {
        match self {
            Num::Small(v) => u64::from(v % 12),
            Num::Any(v) => v,
            Num::Edge(k) => [
                u64::MAX,
                u64::MAX - 1,
                1 << 63,
                (1 << 63) - 1,
                1 << 32,
                (1 << 32) - 1,
                1 << 31,
                1 << 28,
                1 << 24,
                0,
            ][usize::from(k) % 10],
        }
    }
}

fn nums(v: &[Num; 4], n: usize) -> Vec<u64> {
    v[..n].iter().map(|x| x.get()).collect()
}

#[derive(Arbitrary, Debug)]
enum Call {
    Get {
        start: [Num; 4],
        stop: [Num; 4],
        bshape: [Num; 4],
    },
    Set {
        start: [Num; 4],
        stop: [Num; 4],
        bshape: [Num; 4],
        fill: u8,
    },
    /// `c_style`: `resize_keep_chunks` (the C ABI's), else `resize`.
    Resize {
        shape: [Num; 4],
        start: Option<[Num; 4]>,
        c_style: bool,
    },
    /// `c_style`: `insert_keep_chunks` (the C ABI's), else `insert` /
    /// `append`.
    Insert {
        axis: u8,
        pos: Num,
        len: u16,
        append: bool,
        c_style: bool,
    },
    /// Read it whole through `NdArray` (`to_vec`, `write_to`).
    Whole,
    /// Items by flat coordinates (`get_items`).
    Items { coords: Vec<Num> },
    /// An orthogonal selection read or written (`get_orthogonal`,
    /// `set_orthogonal`), a few indices per dimension.
    Orthogonal {
        sel: [[Num; 3]; 4],
        lens: [u8; 4],
        bshape: [Num; 4],
        set: bool,
    },
    /// Dimensions of length 1 added or removed (`with_dims`): the flags
    /// of `expand_dims` (a bit per place, `places` of them) or a squeeze.
    Dims {
        squeeze: bool,
        flags: u8,
        places: u8,
    },
    /// Another array (zeros, or `fill` bytes) appended along `axis`
    /// (`concatenate`): its length there, its chunks and blocks any, or
    /// the array's own.
    Concat {
        axis: u8,
        len: Num,
        chunks: Option<([Num; 4], [Num; 4])>,
        fill: Option<u8>,
    },
    /// A box copied between two small C-order buffers (`copy_box`).
    CopyBox {
        src_shape: [Num; 4],
        start: [Num; 4],
        stop: [Num; 4],
        dst_shape: [Num; 4],
        at: [Num; 4],
    },
}

#[derive(Arbitrary, Debug)]
struct Input {
    ndim: u8,
    shape: [Num; 4],
    chunks: [Num; 4],
    blocks: [Num; 4],
    /// Chunk and block shapes from `default_shapes` instead.
    default_shapes: bool,
    itemsize: u8,
    calls: Vec<Call>,
}

/// The largest buffer a call gets; a larger one is passed short (it must
/// be refused).
const MAX_BUF: u64 = 1 << 20;
/// The largest decoded chunk, and array read whole.
const MAX_OUTPUT: usize = 4 << 20;
/// The largest array `write_to` streams.
const MAX_STREAM: u64 = 64 << 20;
/// Arrays (made, or left by a resize) of more chunks are not made: each
/// costs a few bytes of index but an edit visits every one.
const MAX_CHUNKS: u64 = 1 << 14;

/// A buffer of the product of `shape` items, or a short one when that is
/// over [`MAX_BUF`] bytes.
fn buffer(shape: &[u64], is: usize, fill: u8) -> Vec<u8> {
    let want = shape
        .iter()
        .try_fold(is as u64, |a, &d| a.checked_mul(d))
        .filter(|&b| b <= MAX_BUF)
        .unwrap_or(is as u64);
    vec![fill; want as usize]
}

/// The array made from C-order data (since session 44; the creation calls
/// had only ever been given valid geometries): `create` from a slice and
/// `fill_from` a reader of the same bytes read back as those bytes; data
/// one item short is refused (`create`) or fails cleanly (`fill_from`
/// reading a short stream), with no panic. Only for arrays of at most
/// [`MAX_BUF`] bytes.
fn from_data(meta: &NdMeta, layout: &Layout, is: usize) {
    if layout.nbytes() > MAX_BUF {
        return;
    }
    let data: Vec<u8> = (0..layout.nbytes() as usize)
        .map(|i| (i * 13 + 1) as u8)
        .collect();
    let cparams = CParams::default().nthreads(1);
    let read_back = |sc: SChunk, what: &str| {
        let mut a = NdArray::open(sc).unwrap_or_else(|e| panic!("{what}: opens: {e}"));
        let got = a.to_vec().unwrap_or_else(|e| panic!("{what}: reads: {e}"));
        assert!(got == data, "{what}: other items than it was made of");
    };
    match ndarray::create(meta, cparams.clone(), &data) {
        Ok(sc) => read_back(sc, "create"),
        Err(e) => {
            assert!(
                matches!(e, Error::InvalidParam(_)),
                "create refused with {e}"
            );
            return;
        }
    }
    let fresh = || {
        ndarray::builder(meta, cparams.clone())
            .and_then(|b| b.build_memory())
            .expect("builds as create did")
    };
    let mut sc = fresh();
    ndarray::fill_from(&mut sc, meta, &mut &data[..])
        .unwrap_or_else(|e| panic!("fill_from a reader of create's data: {e}"));
    read_back(sc, "fill_from");
    if !data.is_empty() {
        let short = &data[..data.len() - is];
        assert!(
            ndarray::create(meta, cparams.clone(), short).is_err(),
            "create of short data"
        );
        assert!(
            ndarray::fill_from(&mut fresh(), meta, &mut &short[..]).is_err(),
            "fill_from a short reader"
        );
    }
}

/// Whether `shape` lays out in at most [`MAX_CHUNKS`] chunks (or does not
/// lay out at all: the call must then fail cleanly).
fn small_enough(meta: &NdMeta, shape: &[u64], is: usize) -> bool {
    let mut m = meta.clone();
    m.shape = shape.to_vec();
    Layout::new(&m, is).map_or(true, |l| l.nchunks() <= MAX_CHUNKS)
}

fuzz_target!(|inp: Input| {
    let n = usize::from(inp.ndim % 4) + 1;
    let is = [1usize, 2, 4, 8, 3][usize::from(inp.itemsize) % 5];
    let shape = nums(&inp.shape, n);
    let (chunks, blocks) = if inp.default_shapes {
        ndarray::default_shapes(&shape, is)
    } else {
        (nums(&inp.chunks, n), nums(&inp.blocks, n))
    };
    let mut meta = NdMeta::new(&shape, &chunks, &blocks, &NdMeta::default_dtype(is));
    // Geometries the layout refuses are refused cleanly (`Layout::new`
    // ran, no panic); the rest get an array.
    let Ok(layout) = Layout::new(&meta, is) else {
        return;
    };
    if layout.nchunks() > MAX_CHUNKS || layout.chunk_nbytes() > MAX_OUTPUT {
        return;
    }
    from_data(&meta, &layout, is);
    let cparams = CParams::default().nthreads(1);
    let Ok(b) = ndarray::builder(&meta, cparams) else {
        return;
    };
    let mut sc = b.build_memory().expect("an in-memory array builds");
    if layout.nchunks() > 0 {
        // Zero chunks, padding included (as `b2nd_zeros` makes them).
        let per = (layout.chunk_nbytes() / is) as u64;
        sc.fill_special(per * layout.nchunks(), Fill::Zeros, layout.chunk_nbytes())
            .expect("zero chunks fill");
    }
    sc.set_dparams(DParams::default().nthreads(1).max_output(MAX_OUTPUT));
    for (k, call) in inp.calls.iter().take(16).enumerate() {
        let what = format!("call {k} {call:?} on {:?}", meta.shape);
        let before = meta.clone();
        let r = match call {
            Call::Get {
                start,
                stop,
                bshape,
            } => {
                let bs = nums(bshape, n);
                let mut dst = buffer(&bs, is, 0xEE);
                ndarray::get_slice(
                    &mut sc,
                    &meta,
                    &nums(start, n),
                    &nums(stop, n),
                    &mut dst,
                    &bs,
                )
            }
            Call::Set {
                start,
                stop,
                bshape,
                fill,
            } => {
                let bs = nums(bshape, n);
                let src = buffer(&bs, is, *fill);
                ndarray::set_slice(&mut sc, &meta, &nums(start, n), &nums(stop, n), &src, &bs)
            }
            Call::Resize {
                shape,
                start,
                c_style,
            } => {
                let w = nums(shape, n);
                if !small_enough(&meta, &w, is) {
                    continue;
                }
                let s = start.as_ref().map(|s| nums(s, n));
                if *c_style {
                    ndarray::resize_keep_chunks(&mut sc, &mut meta, &w, s.as_deref())
                } else {
                    ndarray::resize(&mut sc, &mut meta, &w, s.as_deref())
                }
            }
            Call::Insert {
                axis,
                pos,
                len,
                append,
                c_style,
            } => {
                let axis = usize::from(*axis) % (n + 1);
                // The new shape, when the call can work: its size bounded.
                if axis < n {
                    let other = (0..n)
                        .filter(|&d| d != axis)
                        .try_fold(is as u64, |a, d| a.checked_mul(meta.shape[d]));
                    let add = other.map_or(1, |o| u64::from(*len) / o.max(1));
                    let mut w = meta.shape.clone();
                    w[axis] = w[axis].saturating_add(add.max(1));
                    if !small_enough(&meta, &w, is) {
                        continue;
                    }
                }
                let data = vec![7u8; usize::from(*len)];
                if *c_style {
                    let at = match meta.shape.get(axis) {
                        Some(&end) if *append => end,
                        _ => pos.get(),
                    };
                    ndarray::insert_keep_chunks(&mut sc, &mut meta, &data, axis, at)
                } else if *append {
                    ndarray::append(&mut sc, &mut meta, &data, axis)
                } else {
                    ndarray::insert(&mut sc, &mut meta, &data, axis, pos.get())
                }
            }
            Call::Items { coords } => {
                let c: Vec<u64> = coords.iter().take(64).map(|x| x.get()).collect();
                let mut dst = vec![0u8; c.len() * is];
                ndarray::get_items(&mut sc, &meta, &c, &mut dst)
            }
            Call::Orthogonal {
                sel,
                lens,
                bshape,
                set,
            } => {
                let lists: Vec<Vec<u64>> = (0..n)
                    .map(|d| {
                        let k = usize::from(lens[d]) % 4;
                        sel[d][..k].iter().map(|x| x.get()).collect()
                    })
                    .collect();
                let refs: Vec<&[u64]> = lists.iter().map(|l| l.as_slice()).collect();
                let bs = nums(bshape, n);
                let mut buf = buffer(&bs, is, 0x5A);
                if *set {
                    ndarray::set_orthogonal(&mut sc, &meta, &refs, &buf, &bs)
                } else {
                    ndarray::get_orthogonal(&mut sc, &meta, &refs, &mut buf, &bs)
                }
            }
            Call::Dims {
                squeeze,
                flags,
                places,
            } => {
                let new = if *squeeze {
                    Ok(meta.squeeze())
                } else {
                    let k = usize::from(*places) % 8;
                    let f: Vec<bool> = (0..k).map(|i| flags >> i & 1 == 1).collect();
                    meta.expand_dims(&f)
                };
                match new {
                    Ok(new) => ndarray::with_dims(&mut sc, &meta, &new).map(|mut v| {
                        let layout = ndarray::layout_of(&v, &new)
                            .unwrap_or_else(|e| panic!("{what}: the new array lays out: {e}"));
                        if layout.nbytes() <= MAX_OUTPUT as u64 {
                            // The same items in the same order.
                            let lo = vec![0u64; meta.ndim()];
                            let mut a = vec![0u8; layout.nbytes() as usize];
                            let mut b = a.clone();
                            ndarray::get_slice(
                                &mut sc,
                                &meta,
                                &lo,
                                &meta.shape,
                                &mut a,
                                &meta.shape,
                            )
                            .unwrap_or_else(|e| panic!("{what}: read: {e}"));
                            let lo = vec![0u64; new.ndim()];
                            ndarray::get_slice(&mut v, &new, &lo, &new.shape, &mut b, &new.shape)
                                .unwrap_or_else(|e| panic!("{what}: read the new one: {e}"));
                            assert_eq!(a, b, "{what}: the items under the new shape");
                        }
                    }),
                    Err(e) => Err(e),
                }
            }
            Call::Concat {
                axis,
                len,
                chunks,
                fill,
            } => {
                let axis = usize::from(*axis) % n;
                let mut shape = meta.shape.clone();
                shape[axis] = len.get();
                let (c, b) = match chunks {
                    Some((c, b)) => (nums(c, n), nums(b, n)),
                    None => (meta.chunkshape.clone(), meta.blockshape.clone()),
                };
                let other = NdMeta::new(&shape, &c, &b, &meta.dtype);
                let mut grown = meta.shape.clone();
                grown[axis] = grown[axis].saturating_add(len.get());
                // Another array of a repeated value is compressed again
                // wherever its chunks do not line up: bounded as an output
                // (16 M items of 3 bytes took 55 s under ASan); one of
                // zero chunks stays zero chunks at any size.
                let fits = Layout::new(&other, is).is_ok_and(|l| {
                    l.nchunks() <= MAX_CHUNKS
                        && l.chunk_nbytes() <= MAX_OUTPUT
                        && (fill.is_none() || l.nbytes() <= MAX_OUTPUT as u64)
                });
                if !fits || !small_enough(&meta, &grown, is) {
                    continue;
                }
                let made = ndarray::builder(&other, CParams::default().nthreads(1))
                    .and_then(|b| b.build_memory())
                    .and_then(|mut o| {
                        let l = Layout::new(&other, is)?;
                        if l.nchunks() > 0 {
                            let per = (l.chunk_nbytes() / is) as u64;
                            match fill {
                                Some(v) => o.fill_special(
                                    per * l.nchunks(),
                                    Fill::Value(&vec![*v; is]),
                                    l.chunk_nbytes(),
                                )?,
                                None => o.fill_special(
                                    per * l.nchunks(),
                                    Fill::Zeros,
                                    l.chunk_nbytes(),
                                )?,
                            }
                        }
                        Ok(o)
                    });
                match made {
                    Ok(mut o) => ndarray::concatenate(&mut sc, &mut meta, &mut o, &other, axis),
                    Err(_) => continue,
                }
            }
            Call::CopyBox {
                src_shape,
                start,
                stop,
                dst_shape,
                at,
            } => {
                let (ss, ds) = (nums(src_shape, n), nums(dst_shape, n));
                let src = buffer(&ss, is, 3);
                let mut dst = buffer(&ds, is, 4);
                ndarray::copy_box(
                    is,
                    &src,
                    &ss,
                    &nums(start, n),
                    &nums(stop, n),
                    &mut dst,
                    &ds,
                    &nums(at, n),
                )
            }
            Call::Whole => {
                let sc2 = std::mem::replace(&mut sc, SChunk::new(CParams::default()).unwrap());
                let mut a = NdArray::open(sc2).unwrap_or_else(|e| panic!("{what}: opens: {e}"));
                // to_vec keeps to the output limit (the whole array is
                // its output); write_to streams, in time that grows with
                // the array: only small ones.
                let r = a.to_vec().map(|v| {
                    assert_eq!(v.len() as u64, a.nbytes(), "{what}: to_vec's length");
                });
                if a.nbytes() <= MAX_STREAM {
                    let r2 = a.write_to(&mut std::io::sink());
                    if a.nbytes() <= MAX_OUTPUT as u64 {
                        assert_eq!(r.is_ok(), r2.is_ok(), "{what}: to_vec and write_to");
                    }
                }
                sc = a.into_schunk();
                r
            }
        };
        if let Err(e) = &r {
            // Another array's chunks may not back its metalayer only when
            // it is refused as corrupt; ours are made here, so not.
            assert!(
                matches!(e, Error::InvalidParam(_)),
                "{what}: refused with {e}"
            );
            assert_eq!(meta, before, "{what}: a refused call changed meta");
        }
        ndarray::layout_of(&sc, &meta)
            .unwrap_or_else(|e| panic!("{what}: the array no longer lays out: {e}"));
    }
    common::must_reopen(&mut sc, "ndarray_args");
    let frame = sc.to_cframe().expect("to_cframe");
    let again = SChunk::from_cframe(frame).expect("the frame reopens");
    let a = NdArray::open(again).expect("the frame opens as an NDArray");
    assert_eq!(a.meta().shape, meta.shape, "the metalayer's shape");
});
