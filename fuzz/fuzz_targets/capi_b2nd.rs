//! The C ABI of `b2nd.h` (`libblosc2.so`) against the NDArray model
//! (since session 19): an array of any geometry made by `b2nd_create_ctx`
//! and `b2nd_zeros` (in memory, in a file or in a directory), filled
//! through `b2nd_set_slice_cbuffer`, then the calls of `ndarray_edit`
//! (`ndmodel.rs`) through `b2nd_get_slice_cbuffer`,
//! `b2nd_set_slice_cbuffer`, `b2nd_resize`, `b2nd_insert` and
//! `b2nd_append`, every buffer exactly the size the call is told (a read
//! or write past one is an ASan report). A call returns 0 exactly when its
//! arguments are valid, else `BLOSC2_ERROR_INVALID_PARAM`; after each, the
//! struct C reads (`ndim`, `shape`, `nitems`, `chunkshape`, `blockshape`)
//! is the model's and the array reads whole as the model. For a file or a
//! directory, a second handle opened with `b2nd_open` follows each change
//! through `b2nd_refresh` (1 when the shape changed, else 0) and reads as
//! the model too; at the end the array reopens from disk as the model.
//! Since session 33 every check also reads the array whole through
//! `b2nd_to_cbuffer` (a buffer one item short is refused), and at the end
//! `b2nd_to_cframe` / `b2nd_from_cframe` (copied and borrowed) give an
//! array that reads as the model. Since session 34, after the calls:
//! `b2nd_get_sparse_cbuffer` and `b2nd_get/set_orthogonal_selection` of
//! items picked from the model (an index past the end refused with
//! `BLOSC2_ERROR_INVALID_INDEX`), `b2nd_expand_dims` and `b2nd_squeeze`
//! views and `b2nd_concatenate` of the array after itself (into a copy)
//! read as the model. Since session 37 the model is C-style
//! (`Model::c_style`): `b2nd_resize`, `b2nd_insert`, `b2nd_append` change
//! shapes as C-Blosc2 does (whole chunks kept as stored, their padding
//! included; away from a dimension's end only whole chunks at a chunk
//! boundary), so the model holds every chunk's padding and a growth reads
//! what the padding held. Since session 44, after those: `b2nd_get_slice`,
//! `b2nd_copy`, `b2nd_from_cbuffer`, `b2nd_delete` and
//! `b2nd_copy_buffer2` (`arrays_from`).
#![no_main]
use std::ffi::{CString, c_char, c_void};

use blosc2::b2nd::{
    b2nd_append, b2nd_array_t, b2nd_concatenate, b2nd_context_t, b2nd_copy, b2nd_copy_buffer2,
    b2nd_create_ctx, b2nd_delete, b2nd_expand_dims, b2nd_free, b2nd_free_ctx, b2nd_from_cbuffer,
    b2nd_from_cframe, b2nd_get_orthogonal_selection, b2nd_get_slice, b2nd_get_slice_cbuffer,
    b2nd_get_sparse_cbuffer, b2nd_insert, b2nd_open, b2nd_refresh, b2nd_resize,
    b2nd_set_orthogonal_selection, b2nd_set_slice_cbuffer, b2nd_squeeze, b2nd_to_cbuffer,
    b2nd_to_cframe, b2nd_zeros,
};
use blosc2::schunk::{blosc2_schunk_get_chunk, blosc2_storage};
use blosc2::v2::{CPARAMS_DEFAULTS, DPARAMS_DEFAULTS, err};
use libfuzzer_sys::fuzz_target;
use oxiblosc::ndarray::NdMeta;

#[path = "ndmodel.rs"]
mod ndmodel;
use ndmodel::{Call, Input, Model, nitems};

unsafe extern "C" {
    /// C's `free`, for the buffer `b2nd_to_cframe` mallocs.
    fn free(p: *mut c_void);
}

fn dir() -> std::path::PathBuf {
    std::env::temp_dir().join(format!("oxiblosc-fuzz-capi-b2nd-{}", std::process::id()))
}

fn i64s(v: &[u64]) -> Vec<i64> {
    v.iter().map(|&x| x as i64).collect()
}

fuzz_target!(|inp: Input| {
    let g = &inp.geometry;
    let (shape, chunks, blocks, is) = g.shapes();
    let n = shape.len();
    let mut cp = CPARAMS_DEFAULTS;
    cp.typesize = is as i32;
    cp.compcode = [0u8, 1, 2, 4, 5][usize::from(g.codec) % 5];
    cp.clevel = g.clevel % 10;
    cp.nthreads = 1;
    cp.filters = [0; 6];
    for (k, f) in g.filter_codes().into_iter().enumerate() {
        cp.filters[5 - k] = f;
    }
    let mut dp = DPARAMS_DEFAULTS;
    dp.nthreads = 1;
    let backend = g.backend % 4;
    let base = dir();
    let path = base.join(if backend == 2 { "a.b2nd" } else { "a.dir" });
    let url = CString::new(path.to_str().unwrap()).unwrap();
    if backend >= 2 {
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir_all(&base).unwrap();
    }
    let storage = blosc2_storage {
        contiguous: backend == 2,
        urlpath: if backend >= 2 {
            url.as_ptr() as *mut c_char
        } else {
            std::ptr::null_mut()
        },
        cparams: &mut cp,
        dparams: &mut dp,
        io: std::ptr::null_mut(),
    };
    let ctx = create_ctx(&storage, &shape, &chunks, &blocks, is);
    let mut a: *mut b2nd_array_t = std::ptr::null_mut();
    // SAFETY: live context, writable out pointer.
    let r = unsafe { b2nd_zeros(ctx, &mut a) };
    // SAFETY: the context, freed once.
    unsafe { b2nd_free_ctx(ctx) };
    assert_eq!(r, 0, "b2nd_zeros");
    let mut model = Model::new(shape.clone(), chunks.clone(), is, g.init).c_style();
    // The model's items, written whole.
    let whole = Call::Set {
        start: vec![0; n],
        stop: shape.clone(),
        bshape: shape.clone(),
        src: model.data.clone(),
    };
    assert_eq!(run(a, &whole, None), 0, "the first write");
    check(a, &model, &chunks, &blocks, "fill");
    // A second handle on the same file or directory.
    let mut other: *mut b2nd_array_t = std::ptr::null_mut();
    if backend >= 2 {
        // SAFETY: a NUL-terminated path, writable out pointer.
        let r = unsafe { b2nd_open(url.as_ptr(), &mut other) };
        assert_eq!(r, 0, "b2nd_open of the array just made");
    }
    for (k, op) in inp.ops.iter().take(12).enumerate() {
        let what = format!("op {k} {op:?}");
        let p = model.plan(op);
        if Model::too_large(&p) {
            continue;
        }
        let r = run(a, &p.call, p.got.as_deref());
        if p.valid {
            assert_eq!(r, 0, "{what}: valid arguments refused");
        } else {
            assert_eq!(r, err::INVALID_PARAM, "{what}: invalid arguments");
        }
        let old = model.shape.clone();
        model.commit(p);
        check(a, &model, &chunks, &blocks, &what);
        if !other.is_null() {
            // SAFETY: the live second handle.
            let r = unsafe { b2nd_refresh(other) };
            assert_eq!(r, i32::from(old != model.shape), "{what}: b2nd_refresh");
            check(
                other,
                &model,
                &chunks,
                &blocks,
                &format!("{what}, second handle"),
            );
        }
    }
    selections_and_views(a, &mut model, &chunks, &blocks);
    if !other.is_null() {
        // SAFETY: the live second handle.
        unsafe { b2nd_refresh(other) };
        check(
            other,
            &model,
            &chunks,
            &blocks,
            "after the selections, second handle",
        );
    }
    arrays_from(a, &model, &chunks, &blocks);
    // Its frame, in memory, as an array again: copied, then borrowed.
    let (mut frame, mut len, mut needs_free) = (std::ptr::null_mut::<u8>(), 0i64, false);
    // SAFETY: a live array and writable out pointers.
    let r = unsafe { b2nd_to_cframe(a, &mut frame, &mut len, &mut needs_free) };
    assert_eq!(r, 0, "b2nd_to_cframe");
    for copy in [true, false] {
        let mut back: *mut b2nd_array_t = std::ptr::null_mut();
        // SAFETY: the frame of len bytes, live until freed below.
        let r = unsafe { b2nd_from_cframe(frame, len, copy, &mut back) };
        assert_eq!(r, 0, "b2nd_from_cframe (copy {copy})");
        check(back, &model, &chunks, &blocks, "from its cframe");
        // SAFETY: the handle, freed once (before the frame it borrows).
        unsafe { b2nd_free(back) };
    }
    if needs_free {
        // SAFETY: b2nd_to_cframe's malloc'ed buffer, freed once.
        unsafe { free(frame as *mut c_void) };
    }
    // SAFETY: each handle, freed once.
    unsafe {
        b2nd_free(a);
        b2nd_free(other);
    }
    if backend >= 2 {
        let mut again: *mut b2nd_array_t = std::ptr::null_mut();
        // SAFETY: a NUL-terminated path, writable out pointer.
        let r = unsafe { b2nd_open(url.as_ptr(), &mut again) };
        assert_eq!(r, 0, "the array does not reopen from disk");
        check(again, &model, &chunks, &blocks, "reopened");
        // SAFETY: the handle, freed once.
        unsafe { b2nd_free(again) };
        let _ = std::fs::remove_dir_all(&base);
    }
});

/// `b2nd_create_ctx` for `storage` and a geometry the model made valid
/// (the default dtype of `is`-byte items, no metalayers).
fn create_ctx(
    storage: &blosc2_storage,
    shape: &[u64],
    chunks: &[u64],
    blocks: &[u64],
    is: usize,
) -> *mut b2nd_context_t {
    let dtype = CString::new(NdMeta::default_dtype(is)).unwrap();
    let cs: Vec<i32> = chunks.iter().map(|&x| x as i32).collect();
    let bs: Vec<i32> = blocks.iter().map(|&x| x as i32).collect();
    let sh = i64s(shape);
    // SAFETY: every pointer is live for the call; the shapes hold ndim
    // values.
    let ctx = unsafe {
        b2nd_create_ctx(
            storage,
            shape.len() as i8,
            sh.as_ptr(),
            cs.as_ptr(),
            bs.as_ptr(),
            dtype.as_ptr(),
            0,
            std::ptr::null(),
            0,
        )
    };
    assert!(!ctx.is_null(), "b2nd_create_ctx refused a valid geometry");
    ctx
}

/// The array's items, read whole (`b2nd_to_cbuffer`).
fn contents(a: *const b2nd_array_t) -> Vec<u8> {
    // SAFETY: a live array; a buffer of the size told.
    unsafe {
        let n = (*a).nitems.max(0) as usize * (*(*a).sc).typesize.max(1) as usize;
        let mut v = vec![0u8; n];
        let r = b2nd_to_cbuffer(a, v.as_mut_ptr().cast(), n as i64);
        assert_eq!(r, 0, "b2nd_to_cbuffer");
        v
    }
}

/// Arrays made from the array or its items, and a deletion (since session
/// 44: no target had made these calls): `b2nd_get_slice` of a box is what
/// `b2nd_get_slice_cbuffer` reads there; `b2nd_copy` and
/// `b2nd_from_cbuffer` of its items read as the model; deleting the last
/// third of the copy's first dimension (`b2nd_delete`) leaves the
/// model's first rows, and a deletion past the end or on an axis it does
/// not have is refused; `b2nd_copy_buffer2` of the box out of the model's
/// buffer is that box.
fn arrays_from(a: *mut b2nd_array_t, m: &Model, chunks: &[u64], blocks: &[u64]) {
    let n = m.shape.len();
    // SAFETY: a live array.
    let is = unsafe { (*(*a).sc).typesize } as usize;
    let mut cp = CPARAMS_DEFAULTS;
    cp.typesize = is as i32;
    cp.nthreads = 1;
    let mut dp = DPARAMS_DEFAULTS;
    dp.nthreads = 1;
    let storage = blosc2_storage {
        contiguous: false,
        urlpath: std::ptr::null_mut(),
        cparams: &mut cp,
        dparams: &mut dp,
        io: std::ptr::null_mut(),
    };
    let ctx = create_ctx(&storage, &m.shape, chunks, blocks, is);
    let sh = i64s(&m.shape);
    let lo: Vec<u64> = m.shape.iter().map(|&d| d / 3).collect();
    let hi: Vec<u64> = m
        .shape
        .iter()
        .zip(&lo)
        .map(|(&d, &l)| (d - d / 4).max(l))
        .collect();
    let bshape: Vec<u64> = hi.iter().zip(&lo).map(|(h, l)| h - l).collect();
    let mut want = vec![0u8; nitems(&bshape) as usize * is];
    let (l, h, b) = (i64s(&lo), i64s(&hi), i64s(&bshape));
    // SAFETY: a live array; start, stop and shape hold ndim values; the
    // buffer of the size told.
    let r = unsafe {
        b2nd_get_slice_cbuffer(
            a,
            l.as_ptr(),
            h.as_ptr(),
            want.as_mut_ptr().cast(),
            b.as_ptr(),
            want.len() as i64,
        )
    };
    assert_eq!(r, 0, "b2nd_get_slice_cbuffer of a box inside");
    // SAFETY (the calls below): a live context and array; shapes of ndim
    // values; every buffer of the size told; each array made is freed once.
    unsafe {
        let mut s: *mut b2nd_array_t = std::ptr::null_mut();
        assert_eq!(
            b2nd_get_slice(ctx, &mut s, a, l.as_ptr(), h.as_ptr()),
            0,
            "b2nd_get_slice"
        );
        assert_eq!(&(&*s).shape[..n], &b[..], "b2nd_get_slice: the shape");
        assert!(contents(s) == want, "b2nd_get_slice: the items");
        b2nd_free(s);

        let mut c: *mut b2nd_array_t = std::ptr::null_mut();
        assert_eq!(b2nd_copy(ctx, a, &mut c), 0, "b2nd_copy");
        assert!(contents(c) == m.data, "b2nd_copy: the items");
        let mut f: *mut b2nd_array_t = std::ptr::null_mut();
        let r = b2nd_from_cbuffer(ctx, &mut f, m.data.as_ptr().cast(), m.data.len() as i64);
        assert_eq!(r, 0, "b2nd_from_cbuffer");
        assert!(contents(f) == m.data, "b2nd_from_cbuffer: the items");
        b2nd_free(f);

        let d0 = m.shape[0];
        assert_ne!(
            b2nd_delete(c, n as i8, 0, 1),
            0,
            "b2nd_delete on an axis past ndim"
        );
        assert_ne!(
            b2nd_delete(c, 0, d0 as i64, 1),
            0,
            "b2nd_delete past the end"
        );
        if d0 > 0 {
            let len = 1 + d0 / 3;
            assert_eq!(
                b2nd_delete(c, 0, (d0 - len) as i64, len as i64),
                0,
                "b2nd_delete"
            );
            let mut rest = m.shape.clone();
            rest[0] = d0 - len;
            let mut kept = vec![0u8; nitems(&rest) as usize * is];
            let (z, r2) = (vec![0i64; n], i64s(&rest));
            let r = b2nd_get_slice_cbuffer(
                a,
                z.as_ptr(),
                r2.as_ptr(),
                kept.as_mut_ptr().cast(),
                r2.as_ptr(),
                kept.len() as i64,
            );
            assert_eq!(r, 0, "b2nd_get_slice_cbuffer of the first rows");
            assert_eq!(&(&*c).shape[..n], &r2[..], "b2nd_delete: the shape");
            assert!(contents(c) == kept, "b2nd_delete: the items left");
        }
        b2nd_free(c);

        let mut out = vec![0xEEu8; want.len()];
        let z = vec![0i64; n];
        let r = b2nd_copy_buffer2(
            n as i8,
            is as i32,
            m.data.as_ptr().cast(),
            sh.as_ptr(),
            l.as_ptr(),
            h.as_ptr(),
            out.as_mut_ptr().cast(),
            b.as_ptr(),
            z.as_ptr(),
        );
        assert_eq!(r, 0, "b2nd_copy_buffer2");
        assert!(out == want, "b2nd_copy_buffer2: the box");
        b2nd_free_ctx(ctx);
    }
}

/// Run `call` through the C ABI; its return code. A `Get` that works must
/// give `got` (when the model has it).
fn run(a: *mut b2nd_array_t, call: &Call, got: Option<&[u8]>) -> i32 {
    // SAFETY (every call below): `a` is a live array; each buffer is a
    // live Vec of exactly the size passed; the shape arguments hold ndim
    // values.
    match call {
        Call::Get {
            start,
            stop,
            bshape,
        } => {
            // SAFETY: a live array.
            let is = unsafe { (*(*a).sc).typesize } as usize;
            let mut dst = vec![0xEEu8; nitems(bshape) as usize * is];
            let (lo, hi, b) = (i64s(start), i64s(stop), i64s(bshape));
            // SAFETY: see above.
            let r = unsafe {
                b2nd_get_slice_cbuffer(
                    a,
                    lo.as_ptr(),
                    hi.as_ptr(),
                    dst.as_mut_ptr() as *mut c_void,
                    b.as_ptr(),
                    dst.len() as i64,
                )
            };
            if r == 0
                && let Some(want) = got
            {
                assert!(
                    dst == want,
                    "get_slice {start:?}..{stop:?} differs from the model"
                );
            }
            r
        }
        Call::Set {
            start,
            stop,
            bshape,
            src,
        } => {
            let (lo, hi, b) = (i64s(start), i64s(stop), i64s(bshape));
            // SAFETY: see above.
            unsafe {
                b2nd_set_slice_cbuffer(
                    src.as_ptr() as *const c_void,
                    b.as_ptr(),
                    src.len() as i64,
                    lo.as_ptr(),
                    hi.as_ptr(),
                    a,
                )
            }
        }
        Call::Resize { shape, start } => {
            let w = i64s(shape);
            let s = start.as_deref().map(i64s);
            // SAFETY: see above.
            unsafe {
                b2nd_resize(
                    a,
                    w.as_ptr(),
                    s.as_ref().map_or(std::ptr::null(), |s| s.as_ptr()),
                )
            }
        }
        Call::Insert {
            axis,
            pos,
            src,
            append,
        } => {
            let (p, len) = (src.as_ptr() as *const c_void, src.len() as i64);
            if *append {
                // SAFETY: see above.
                unsafe { b2nd_append(a, p, len, *axis as i8) }
            } else {
                // SAFETY: see above.
                unsafe { b2nd_insert(a, p, len, *axis as i8, *pos as i64) }
            }
        }
    }
}

/// The struct C reads describes the model's array, which reads whole as
/// the model.
fn check(a: *mut b2nd_array_t, m: &Model, chunks: &[u64], blocks: &[u64], what: &str) {
    let n = m.shape.len();
    // SAFETY: a live array.
    let c = unsafe { &*a };
    assert_eq!(c.ndim as usize, n, "{what}: ndim");
    assert_eq!(&c.shape[..n], &i64s(&m.shape)[..], "{what}: shape");
    assert_eq!(c.nitems, nitems(&m.shape) as i64, "{what}: nitems");
    let cs: Vec<u64> = c.chunkshape[..n].iter().map(|&x| x as u64).collect();
    let bs: Vec<u64> = c.blockshape[..n].iter().map(|&x| x as u64).collect();
    assert_eq!(
        (&cs[..], &bs[..]),
        (chunks, blocks),
        "{what}: chunk and block shapes"
    );
    let all = Call::Get {
        start: vec![0; n],
        stop: m.shape.clone(),
        bshape: m.shape.clone(),
    };
    assert_eq!(
        run(a, &all, Some(&m.data)),
        0,
        "{what}: the whole array does not read"
    );
    let mut out = vec![0xEEu8; m.data.len()];
    // SAFETY: a live array and a buffer of out.len() bytes.
    let r = unsafe { b2nd_to_cbuffer(a, out.as_mut_ptr() as *mut c_void, out.len() as i64) };
    assert_eq!(r, 0, "{what}: b2nd_to_cbuffer");
    assert!(out == m.data, "{what}: b2nd_to_cbuffer's items");
    if let Some(short) = out.len().checked_sub(1).filter(|&s| s > 0) {
        // SAFETY: as above, told one byte less.
        let r = unsafe { b2nd_to_cbuffer(a, out.as_mut_ptr() as *mut c_void, short as i64) };
        assert_eq!(r, err::INVALID_PARAM, "{what}: a short b2nd_to_cbuffer");
    }
    check_data_array(a, what);
}

/// An array in memory without a frame shows its chunks in C's `data`
/// array (since session 38, pointers into the frame): each entry is the
/// stored chunk (read through the pointer: ASan sees a stale one).
fn check_data_array(a: *mut b2nd_array_t, what: &str) {
    // SAFETY: a live array; its sc and storage live handles of this
    // library; data holds data_len pointers to whole chunks.
    unsafe {
        let s = (*a).sc;
        let st = &*(*s).storage;
        if st.contiguous || !st.urlpath.is_null() {
            return;
        }
        assert_eq!((*s).data_len as i64, (*s).nchunks, "{what}: data_len");
        for i in 0..(*s).nchunks {
            let (mut chunk, mut needs_free) = (std::ptr::null_mut(), false);
            let cb = blosc2_schunk_get_chunk(s, i, &mut chunk, &mut needs_free);
            assert!(cb > 0, "{what}: blosc2_schunk_get_chunk {i}");
            let stored = std::slice::from_raw_parts(chunk, cb as usize).to_vec();
            if needs_free {
                free(chunk.cast());
            }
            let entry = std::slice::from_raw_parts(*(*s).data.add(i as usize), cb as usize);
            assert!(entry == &stored[..], "{what}: data[{i}] is not chunk {i}");
        }
    }
}

/// Sparse and orthogonal selections read as the model (one orthogonal
/// write applied to it too), views and a concatenation of the array after
/// itself read as it.
fn selections_and_views(a: *mut b2nd_array_t, m: &mut Model, chunks: &[u64], blocks: &[u64]) {
    let n = m.shape.len();
    let is = m.is;
    let total = nitems(&m.shape);
    if total > 0 {
        // Items by flat coordinates, some repeated.
        let coords: Vec<i64> = (0..7u64)
            .map(|k| ((k * 7919 + u64::from(m.data[k as usize % m.data.len()])) % total) as i64)
            .collect();
        let mut out = vec![0xEEu8; coords.len() * is];
        // SAFETY: a live array, coords of ncoords values, out of its bytes.
        let r = unsafe {
            b2nd_get_sparse_cbuffer(
                a,
                coords.len() as i64,
                coords.as_ptr(),
                out.as_mut_ptr() as *mut c_void,
                out.len() as i64,
            )
        };
        assert_eq!(r, 0, "b2nd_get_sparse_cbuffer");
        for (k, &c) in coords.iter().enumerate() {
            let c = c as usize;
            assert!(
                out[k * is..(k + 1) * is] == m.data[c * is..(c + 1) * is],
                "sparse item {c}"
            );
        }
        let past = [total as i64];
        // SAFETY: as above, one coordinate.
        let r = unsafe {
            b2nd_get_sparse_cbuffer(
                a,
                1,
                past.as_ptr(),
                out.as_mut_ptr() as *mut c_void,
                is as i64,
            )
        };
        assert_eq!(r, err::INVALID_INDEX, "a sparse coordinate past the end");
        // An orthogonal selection: last, first and middle index of each
        // dimension, read, then written with new items.
        let sel: Vec<Vec<i64>> = m
            .shape
            .iter()
            .map(|&s| vec![s as i64 - 1, 0, (s / 2) as i64])
            .collect();
        let mut ptrs: Vec<*mut i64> = sel.iter().map(|v| v.as_ptr() as *mut i64).collect();
        let mut sizes = vec![3i64; n];
        let mut bshape = vec![3i64; n];
        let k = 3usize.pow(n as u32);
        let mut buf = vec![0xEEu8; k * is];
        // SAFETY: ndim lists of 3 indices, a buffer of 3^ndim items.
        let r = unsafe {
            b2nd_get_orthogonal_selection(
                a,
                ptrs.as_mut_ptr(),
                sizes.as_mut_ptr(),
                buf.as_mut_ptr() as *mut c_void,
                bshape.as_mut_ptr(),
                buf.len() as i64,
            )
        };
        assert_eq!(r, 0, "b2nd_get_orthogonal_selection");
        let strides: Vec<usize> = (0..n)
            .map(|d| m.shape[d + 1..].iter().product::<u64>() as usize)
            .collect();
        let at = |j: usize| -> usize {
            let (mut rem, mut f) = (j, 0);
            for d in (0..n).rev() {
                f += sel[d][rem % 3] as usize * strides[d];
                rem /= 3;
            }
            f
        };
        for j in 0..k {
            let f = at(j);
            assert!(
                buf[j * is..(j + 1) * is] == m.data[f * is..(f + 1) * is],
                "orthogonal item {j}"
            );
        }
        let new: Vec<u8> = (0..k * is).map(|i| (i * 13 + 5) as u8).collect();
        // SAFETY: as above, the buffer read.
        let r = unsafe {
            b2nd_set_orthogonal_selection(
                a,
                ptrs.as_mut_ptr(),
                sizes.as_mut_ptr(),
                new.as_ptr() as *const c_void,
                bshape.as_mut_ptr(),
                new.len() as i64,
            )
        };
        assert_eq!(r, 0, "b2nd_set_orthogonal_selection");
        // Repeated places: the later one in the buffer wins.
        for j in 0..k {
            m.write_item(at(j), &new[j * is..(j + 1) * is]);
        }
        check(a, m, chunks, blocks, "after an orthogonal write");
    }
    // A view with a new first dimension, and that view squeezed.
    let mut axis = vec![true];
    axis.extend(std::iter::repeat_n(false, n));
    let mut v: *mut b2nd_array_t = std::ptr::null_mut();
    // SAFETY: a live array, ndim + 1 flags, a writable out pointer.
    let r = unsafe { b2nd_expand_dims(a, &mut v, axis.as_ptr(), (n + 1) as u8) };
    assert_eq!(r, 0, "b2nd_expand_dims");
    let mut w: *mut b2nd_array_t = std::ptr::null_mut();
    // SAFETY: the live view, a writable out pointer.
    let r = unsafe { b2nd_squeeze(v, &mut w) };
    assert_eq!(r, 0, "b2nd_squeeze");
    for (view, what) in [(v, "expand_dims"), (w, "squeeze")] {
        let mut out = vec![0xEEu8; m.data.len()];
        // SAFETY: a live view and a buffer of out.len() bytes.
        let r = unsafe { b2nd_to_cbuffer(view, out.as_mut_ptr() as *mut c_void, out.len() as i64) };
        assert_eq!(r, 0, "{what}: b2nd_to_cbuffer");
        assert!(out == m.data, "{what}: the view's items");
        // SAFETY: the view, freed once.
        unsafe { b2nd_free(view) };
    }
    // The array after itself along its first dimension, into a copy.
    let mut cp = CPARAMS_DEFAULTS;
    cp.typesize = is as i32;
    cp.nthreads = 1;
    let storage = blosc2_storage {
        contiguous: false,
        urlpath: std::ptr::null_mut(),
        cparams: &mut cp,
        dparams: std::ptr::null_mut(),
        io: std::ptr::null_mut(),
    };
    let (sh, cs, bs) = (
        i64s(&m.shape),
        chunks.iter().map(|&x| x as i32).collect::<Vec<_>>(),
        blocks.iter().map(|&x| x as i32).collect::<Vec<_>>(),
    );
    // SAFETY: the shapes hold ndim values; NULL dtype and metalayers.
    let ctx = unsafe {
        b2nd_create_ctx(
            &storage,
            n as i8,
            sh.as_ptr(),
            cs.as_ptr(),
            bs.as_ptr(),
            std::ptr::null(),
            0,
            std::ptr::null(),
            0,
        )
    };
    assert!(!ctx.is_null(), "b2nd_create_ctx for the concatenation");
    let mut c: *mut b2nd_array_t = std::ptr::null_mut();
    // SAFETY: a live context and array (twice), a writable out pointer.
    let r = unsafe { b2nd_concatenate(ctx, a, a, 0, true, &mut c) };
    // SAFETY: the context, freed once.
    unsafe { b2nd_free_ctx(ctx) };
    if n == 0 {
        assert_eq!(r, err::INVALID_PARAM, "b2nd_concatenate of 0 dimensions");
        return;
    }
    assert_eq!(r, 0, "b2nd_concatenate");
    let mut twice = m.data.clone();
    twice.extend_from_slice(&m.data);
    let mut out = vec![0xEEu8; twice.len()];
    // SAFETY: the new array and a buffer of out.len() bytes.
    let r = unsafe { b2nd_to_cbuffer(c, out.as_mut_ptr() as *mut c_void, out.len() as i64) };
    assert_eq!(r, 0, "the concatenation's b2nd_to_cbuffer");
    assert!(out == twice, "the concatenation's items");
    // SAFETY: the new array, freed once.
    unsafe { b2nd_free(c) };
}
