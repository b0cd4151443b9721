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
//! `resize_keep_chunks` / `insert_keep_chunks` instead. Since session 45
//! a box copy also goes through `b2nd_copy_buffer2` and `b2nd_copy_buffer`
//! ([`c_copy_box`]), and a `Make` call makes an array of the current
//! geometry through `b2nd_create_ctx` and `b2nd_zeros`, `_empty`,
//! `_uninit`, `_nans` or `_full`, squeezes it with `b2nd_squeeze_index`
//! and maps flat indices through `blosc2_unidim_to_multidim` and
//! `blosc2_multidim_to_unidim` ([`c_make`]).
//!
//! Checked: no panic and no allocation past libFuzzer's limit; a call that
//! fails fails with `InvalidParam` and leaves `meta` as it was; after every
//! call the array's layout still matches its super-chunk, and at the end
//! its frame reopens as an NDArray of the same shape.
#![no_main]
use std::ffi::CString;

use arbitrary::Arbitrary;
use blosc2::b2nd::{
    b2nd_array_t, b2nd_copy_buffer, b2nd_copy_buffer2, b2nd_create_ctx, b2nd_empty, b2nd_free,
    b2nd_free_ctx, b2nd_full, b2nd_nans, b2nd_squeeze_index, b2nd_to_cbuffer, b2nd_uninit,
    b2nd_zeros, blosc2_multidim_to_unidim, blosc2_unidim_to_multidim,
};
use blosc2::schunk::blosc2_storage;
use blosc2::v2::{CPARAMS_DEFAULTS, DPARAMS_DEFAULTS, err};
use libfuzzer_sys::fuzz_target;
use oxiblosc::ndarray::{self, Layout, NdArray, NdMeta};
use oxiblosc::schunk::{Fill, SChunk};
use oxiblosc::{CParams, DParams, Error};

#[path = "b2nd_geometry.rs"]
mod b2nd_geometry;
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
    /// An array of the same geometry made through the C ABI (since
    /// session 45): see [`c_make`].
    Make {
        kind: u8,
        fill: u8,
        contiguous: bool,
        squeeze: u8,
        at: [Num; 3],
    },
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
    let want = ndarray::box_bytes(shape, is)
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

/// Whether the product of `v` is at most `max`.
fn product_within(v: &[u64], max: u64) -> bool {
    v.iter()
        .try_fold(1u64, |a, &d| a.checked_mul(d))
        .is_some_and(|p| p <= max)
}

/// `b2nd_copy_buffer2` and `b2nd_copy_buffer` given what `copy_box` was
/// (since session 45; no target had called them with arguments past a
/// box's bounds): when the buffers hold their shapes whole and every
/// value fits C's `int64_t`, each works exactly when `copy_box` did,
/// leaving `dst` as `copy_box` left it, and leaves it as it was when it
/// refuses.
#[allow(clippy::too_many_arguments)]
fn c_copy_box(
    is: usize,
    src: &[u8],
    ss: &[u64],
    lo: &[u64],
    hi: &[u64],
    dst0: &[u8],
    ds: &[u64],
    at: &[u64],
    rust: (&Result<(), Error>, &[u8]),
    what: &str,
) {
    let whole =
        |b: &[u8], s: &[u64]| ndarray::box_bytes(s, is).is_some_and(|n| n == b.len() as u64);
    if !whole(src, ss) || !whole(dst0, ds) {
        return;
    }
    let c = |v: &[u64]| -> Option<Vec<i64>> { v.iter().map(|&x| i64::try_from(x).ok()).collect() };
    let (Some(ss), Some(lo), Some(hi), Some(ds), Some(at)) = (c(ss), c(lo), c(hi), c(ds), c(at))
    else {
        return;
    };
    for v1 in [false, true] {
        let mut dst = dst0.to_vec();
        let n = ss.len() as i8;
        // SAFETY: every shape and coordinate holds ndim values; src and
        // dst hold their shapes' bytes (checked above), and do not overlap.
        let r = unsafe {
            if v1 {
                b2nd_copy_buffer(
                    n,
                    is as u8,
                    src.as_ptr().cast(),
                    ss.as_ptr(),
                    lo.as_ptr(),
                    hi.as_ptr(),
                    dst.as_mut_ptr().cast(),
                    ds.as_ptr(),
                    at.as_ptr(),
                )
            } else {
                b2nd_copy_buffer2(
                    n,
                    is as i32,
                    src.as_ptr().cast(),
                    ss.as_ptr(),
                    lo.as_ptr(),
                    hi.as_ptr(),
                    dst.as_mut_ptr().cast(),
                    ds.as_ptr(),
                    at.as_ptr(),
                )
            }
        };
        let call = if v1 {
            "b2nd_copy_buffer"
        } else {
            "b2nd_copy_buffer2"
        };
        match rust.0 {
            Ok(()) => {
                assert_eq!(r, 0, "{what}: {call} refused what copy_box took");
                assert!(dst == rust.1, "{what}: {call} copied other bytes");
            }
            Err(_) => {
                assert_eq!(r, err::INVALID_PARAM, "{what}: {call}");
                assert!(dst == dst0, "{what}: {call} refused but wrote");
            }
        }
    }
}

/// The items of a live array of `nbytes` bytes (`b2nd_to_cbuffer`).
fn c_items(a: *const b2nd_array_t, nbytes: usize, what: &str) -> Vec<u8> {
    let mut out = vec![0u8; nbytes];
    // SAFETY: a live array; a buffer of the size told.
    let r = unsafe { b2nd_to_cbuffer(a, out.as_mut_ptr().cast(), nbytes as i64) };
    assert_eq!(r, 0, "{what}: b2nd_to_cbuffer");
    out
}

/// An array of `meta`'s geometry made through the C ABI (since session
/// 45; only `b2nd_zeros` had made one, always of a valid geometry):
/// `b2nd_create_ctx` refuses it exactly when a chunk's or a block's items
/// overflow C's `int32_t` or the array's its `int64_t`; then
/// `b2nd_zeros`, `_empty`, `_uninit`, `_nans` (refused with
/// `BLOSC2_ERROR_INVALID_PARAM` unless the items are 4 or 8 bytes) or
/// `_full`. An array made has `meta`'s geometry in the struct C reads and,
/// when within [`MAX_BUF`] bytes, reads as zeros (`zeros`, `empty`), NaNs
/// or the fill value. A `b2nd_squeeze_index` view of it works exactly when
/// each dimension marked is of length 1, drops them and reads the same
/// items. `blosc2_unidim_to_multidim` of a flat index gives coordinates
/// inside the shape that `blosc2_multidim_to_unidim` (C-order strides)
/// takes back to it.
fn c_make(meta: &NdMeta, is: usize, how: (u8, u8, bool, u8, &[Num; 3]), what: &str) {
    let (kind, fill, contiguous, squeeze, at) = how;
    let n = meta.ndim();
    let (Some(shape), Some(chunks), Some(blocks)) = (
        meta.shape
            .iter()
            .map(|&d| i64::try_from(d).ok())
            .collect::<Option<Vec<_>>>(),
        meta.chunkshape
            .iter()
            .map(|&d| i32::try_from(d).ok())
            .collect::<Option<Vec<_>>>(),
        meta.blockshape
            .iter()
            .map(|&d| i32::try_from(d).ok())
            .collect::<Option<Vec<_>>>(),
    ) else {
        return;
    };
    let float = matches!(is, 4 | 8);
    let dtype = CString::new(if float {
        format!("<f{is}")
    } else {
        NdMeta::default_dtype(is)
    })
    .unwrap();
    let mut cp = CPARAMS_DEFAULTS;
    cp.typesize = is as i32;
    cp.nthreads = 1;
    let mut dp = DPARAMS_DEFAULTS;
    dp.nthreads = 1;
    let storage = blosc2_storage {
        contiguous,
        urlpath: std::ptr::null_mut(),
        cparams: &mut cp,
        dparams: &mut dp,
        io: std::ptr::null_mut(),
    };
    // SAFETY: a storage whose parameters outlive the call; each shape
    // holds ndim values; a NUL-terminated dtype; no metalayers.
    let ctx = unsafe {
        b2nd_create_ctx(
            &storage,
            n as i8,
            shape.as_ptr(),
            chunks.as_ptr(),
            blocks.as_ptr(),
            dtype.as_ptr(),
            0,
            std::ptr::null(),
            0,
        )
    };
    let fits = product_within(&meta.chunkshape, i32::MAX as u64)
        && product_within(&meta.blockshape, i32::MAX as u64)
        && product_within(&meta.shape, i64::MAX as u64);
    assert_eq!(!ctx.is_null(), fits, "{what}: b2nd_create_ctx");
    if ctx.is_null() {
        return;
    }
    let value = vec![fill; is];
    let mut a: *mut b2nd_array_t = std::ptr::null_mut();
    let kind = kind % 5;
    // SAFETY: a live context, a writable out pointer, a fill value of
    // one item.
    let r = unsafe {
        match kind {
            0 => b2nd_zeros(ctx, &mut a),
            1 => b2nd_empty(ctx, &mut a),
            2 => b2nd_uninit(ctx, &mut a),
            3 => b2nd_nans(ctx, &mut a),
            _ => b2nd_full(ctx, &mut a, value.as_ptr().cast()),
        }
    };
    // SAFETY: the context, freed once.
    unsafe { b2nd_free_ctx(ctx) };
    let call = [
        "b2nd_zeros",
        "b2nd_empty",
        "b2nd_uninit",
        "b2nd_nans",
        "b2nd_full",
    ][kind as usize];
    if kind == 3 && !float {
        assert_eq!(r, err::INVALID_PARAM, "{what}: {call} of {is}-byte items");
    }
    if r != 0 {
        assert!(a.is_null(), "{what}: {call} failed ({r}) but made an array");
        return;
    }
    assert_eq!(
        b2nd_geometry::of_array(a),
        b2nd_geometry::of_meta(meta),
        "{what}: {call}: the struct"
    );
    let nbytes = ndarray::box_bytes(&meta.shape, is);
    let small = nbytes.filter(|&b| b <= MAX_BUF).map(|b| b as usize);
    let items = small.map(|b| c_items(a, b, &format!("{what}: {call}")));
    if let Some(items) = &items {
        for (k, item) in items.chunks(is).enumerate() {
            let ok = match kind {
                0 | 1 => item.iter().all(|&b| b == 0),
                3 if is == 4 => f32::from_le_bytes(item.try_into().unwrap()).is_nan(),
                3 => f64::from_le_bytes(item.try_into().unwrap()).is_nan(),
                4 => item == value.as_slice(),
                _ => true,
            };
            assert!(ok, "{what}: {call}: item {k} is {item:?}");
        }
    }
    // A dimension squeezed away for each bit of `squeeze`.
    let flags: Vec<bool> = (0..n).map(|d| squeeze >> d & 1 == 1).collect();
    let mut view: *mut b2nd_array_t = std::ptr::null_mut();
    // SAFETY: a live array, a writable out pointer, ndim flags.
    let r = unsafe { b2nd_squeeze_index(a, &mut view, flags.as_ptr()) };
    let can = (0..n).all(|d| !flags[d] || meta.shape[d] == 1);
    assert_eq!(r == 0, can, "{what}: b2nd_squeeze_index {flags:?} gave {r}");
    if r == 0 {
        let keep =
            |v: &[u64]| -> Vec<u64> { (0..n).filter(|&d| !flags[d]).map(|d| v[d]).collect() };
        let dtype = meta.dtype.clone();
        let squeezed = NdMeta::new(
            &keep(&meta.shape),
            &keep(&meta.chunkshape),
            &keep(&meta.blockshape),
            &dtype,
        );
        assert_eq!(
            b2nd_geometry::of_array(view),
            b2nd_geometry::of_meta(&squeezed),
            "{what}: b2nd_squeeze_index: the struct"
        );
        if let (Some(b), Some(items)) = (small, &items)
            && kind != 2
        {
            let got = c_items(view, b, &format!("{what}: the squeezed view"));
            assert!(&got == items, "{what}: the squeezed view's items");
        }
        // SAFETY: the view, freed once.
        unsafe { b2nd_free(view) };
    } else {
        assert!(
            view.is_null(),
            "{what}: b2nd_squeeze_index refused but made a view"
        );
    }
    let total = meta.shape.iter().try_fold(1u64, |x, &d| x.checked_mul(d));
    if let Some(total) = total.filter(|&t| t > 0 && n > 0) {
        let mut sh = shape.clone();
        let mut strides = vec![1i64; n];
        for d in (0..n - 1).rev() {
            strides[d] = strides[d + 1] * shape[d + 1];
        }
        for x in at {
            let i = (x.get() % total) as i64;
            let mut index = vec![-1i64; n];
            // SAFETY: shape and index hold ndim values.
            unsafe { blosc2_unidim_to_multidim(n as u8, sh.as_mut_ptr(), i, index.as_mut_ptr()) };
            for d in 0..n {
                assert!(
                    (0..shape[d]).contains(&index[d]),
                    "{what}: blosc2_unidim_to_multidim of {i}: {index:?}"
                );
            }
            let mut back = -1i64;
            // SAFETY: index and strides hold ndim values.
            unsafe {
                blosc2_multidim_to_unidim(index.as_ptr(), n as i8, strides.as_ptr(), &mut back)
            };
            assert_eq!(back, i, "{what}: blosc2_multidim_to_unidim of {index:?}");
        }
    }
    // SAFETY: the array made above, freed once.
    unsafe { b2nd_free(a) };
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
                let (lo, hi, at) = (nums(start, n), nums(stop, n), nums(at, n));
                let src: Vec<u8> = buffer(&ss, is, 3)
                    .iter()
                    .enumerate()
                    .map(|(i, _)| i as u8)
                    .collect();
                let mut dst = buffer(&ds, is, 4);
                let dst0 = dst.clone();
                let r = ndarray::copy_box(is, &src, &ss, &lo, &hi, &mut dst, &ds, &at);
                c_copy_box(is, &src, &ss, &lo, &hi, &dst0, &ds, &at, (&r, &dst), &what);
                r
            }
            Call::Make {
                kind,
                fill,
                contiguous,
                squeeze,
                at,
            } => {
                c_make(&meta, is, (*kind, *fill, *contiguous, *squeeze, at), &what);
                Ok(())
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
