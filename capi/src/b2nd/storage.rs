//! Arrays and their super-chunks, files and frames: `b2nd_open`,
//! `b2nd_open_offset`, `b2nd_from_schunk`, `b2nd_from_cframe`,
//! `b2nd_to_cframe`, `b2nd_save`, `b2nd_save_append`, `b2nd_free`.

use super::*;

/// `b2nd_open`: open an array stored in a frame file or directory.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn b2nd_open(urlpath: *const c_char, array: *mut *mut b2nd_array_t) -> c_int {
    guard(err::FAILURE, || {
        if array.is_null() {
            return err::NULL_POINTER;
        }
        // SAFETY: urlpath is null or a NUL-terminated string.
        let Some(url) = (unsafe { str_arg(urlpath) }) else {
            return err::NULL_POINTER;
        };
        let url = url.strip_prefix("file:///").unwrap_or(url);
        // As blosc2_schunk_open (and b2nd_open_offset) open it.
        let sc = match open_locked(url, || crate::schunk::open_options().open(url)) {
            Ok(sc) => sc,
            Err(e) => return code(&e),
        };
        let h = handle_of_opened(sc, Some(url));
        if h.is_null() {
            return err::FAILURE;
        }
        // An array the library cannot lay out, or whose chunks its shape
        // does not account for, is refused here rather than at each call
        // (as by b2nd_open_offset and b2nd_from_cframe: the same checks).
        // SAFETY: h is the new super-chunk; array is non-null and writable.
        unsafe { array_of_handle(h, array, true) }
    })
}

/// `b2nd_free`: free an array and its super-chunk.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn b2nd_free(array: *mut b2nd_array_t) -> c_int {
    guard(err::FAILURE, || {
        if array.is_null() {
            return 0;
        }
        // SAFETY: array was made by this library and is freed once.
        let a = unsafe { Box::from_raw(array as *mut Array) };
        // A handle a view shares is freed with the last array holding it.
        if !a.c.sc.is_null() && !super::unshare(a.c.sc) {
            forget_lock(a.c.sc);
            // SAFETY: the super-chunk handle belongs to this array.
            unsafe { blosc2_schunk_free(a.c.sc) };
        }
        0
    })
}

/// The array over the super-chunk handle `h` (its `b2nd` or `caterva`
/// metalayer read and laid out), into `*array`. `stored`: `h` was just
/// opened from a stored frame by the caller, which hands it over: it is
/// freed on failure, and the array must be one the frame holds, as
/// `b2nd_open` checks (`ndarray::layout_of`). Otherwise (`b2nd_from_schunk`)
/// `h` stays the caller's on failure and may not hold the array's chunks
/// yet, as C-Blosc2 allows.
///
/// # Safety
/// `h` is null or a live super-chunk from this library; `array` writable.
unsafe fn array_of_handle(
    h: *mut blosc2_schunk,
    array: *mut *mut b2nd_array_t,
    stored: bool,
) -> c_int {
    let meta = with_locked(h, false, |sc| -> oxiblosc::Result<Option<NdMeta>> {
        let Some((_, mut meta)) = ndarray::find_meta(sc)? else {
            return Ok(None);
        };
        c_struct_fits(&meta, sc.typesize())?;
        if stored {
            ndarray::layout_of(sc, &meta)?;
        }
        if !meta.has_dtype {
            meta.dtype = NdMeta::default_dtype(sc.typesize());
        }
        Ok(Some(meta))
    });
    let rc = match meta {
        Ok(Ok(Some(meta))) => {
            // SAFETY: array is non-null (the callers check) and writable.
            unsafe { *array = Array::boxed(h, meta) };
            return 0;
        }
        Ok(Ok(None)) => err::INVALID_PARAM,
        Ok(Err(e)) => code(&e),
        Err(rc) => rc,
    };
    if stored && !h.is_null() {
        // SAFETY: h is this library's super-chunk, not handed out.
        unsafe { blosc2_schunk_free(h) };
    }
    rc
}

/// Whether C's `b2nd_array_t` holds the array `meta` describes, as
/// C-Blosc2 checks it when it makes one from a super-chunk: every shape
/// positive and within its field (a chunk or block length of 0 only in a
/// dimension of length 0), the item, chunk and block counts within theirs
/// (`int32` for a chunk's and a block's items, `int64` for the array's, the
/// shape rounded up to whole chunks and the chunk to whole blocks). Nothing
/// more: an array whose chunks the super-chunk does not hold (yet), or
/// whose chunk is over the largest buffer, is made, and each call on it is
/// refused by its own layout check (C-Blosc2's `test_b2nd_shape_overflow`
/// makes a 4 GiB chunk's array and wants its `b2nd_get_slice_cbuffer`
/// refused).
fn c_struct_fits(meta: &NdMeta, itemsize: usize) -> oxiblosc::Result<()> {
    let bad = |what: &str| Err(Error::Corrupt(format!("b2nd metalayer: {what}")));
    let n = meta.ndim();
    if n > MAX_DIM || meta.chunkshape.len() != n || meta.blockshape.len() != n {
        return bad("shapes of different numbers of dimensions");
    }
    if itemsize == 0 {
        return bad("item size 0");
    }
    let (i32max, i64max) = (i32::MAX as u64, i64::MAX as u64);
    let (mut chunk, mut block, mut items, mut ext, mut extchunk) = (1u64, 1u64, 1u64, 1u64, 1u64);
    for d in 0..n {
        let (s, c, b) = (meta.shape[d], meta.chunkshape[d], meta.blockshape[d]);
        if s > i64max || c > i32max || b > i32max || (s > 0 && (c == 0 || b == 0)) {
            return bad(&format!("dimension {d}: shape {s}, chunk {c}, block {b}"));
        }
        let up = |x: u64, m: u64| {
            if m == 0 {
                Some(x)
            } else {
                x.div_ceil(m).checked_mul(m)
            }
        };
        let (e, ec) = (up(s, c), up(c, b));
        let prod = |acc: u64, x: Option<u64>, max: u64| {
            x.and_then(|x| acc.checked_mul(x)).filter(|&v| v <= max)
        };
        match (
            prod(chunk, Some(c), i32max),
            prod(block, Some(b), i32max),
            prod(items, Some(s), i64max),
            prod(ext, e, i64max),
            prod(extchunk, ec, i64max),
        ) {
            (Some(c), Some(b), Some(s), Some(e), Some(ec)) => {
                (chunk, block, items, ext, extchunk) = (c, b, s, e, ec);
            }
            _ => return bad("a product of the shapes overflows C's fields"),
        }
    }
    Ok(())
}

/// `b2nd_from_schunk`: the array a super-chunk holds (its `b2nd`
/// metalayer). The array takes the super-chunk: `b2nd_free` frees it.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn b2nd_from_schunk(
    schunk: *mut blosc2_schunk,
    array: *mut *mut b2nd_array_t,
) -> c_int {
    guard(err::FAILURE, || {
        if schunk.is_null() || array.is_null() {
            return err::NULL_POINTER;
        }
        // SAFETY: C's contract: a live super-chunk, a writable out pointer.
        unsafe { array_of_handle(schunk, array, false) }
    })
}

/// `b2nd_to_cframe`: the array's contiguous frame, as
/// `blosc2_schunk_to_buffer` gives its super-chunk's (an array in memory
/// lends its own frame, `*needs_free` false; else a `calloc`'ed copy the
/// caller `free()`s). A view's frame, made for the call, is a copy.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn b2nd_to_cframe(
    array: *const b2nd_array_t,
    cframe: *mut *mut u8,
    cframe_len: *mut i64,
    needs_free: *mut bool,
) -> c_int {
    guard(err::FAILURE, || {
        // SAFETY: array is null or a live array from this library.
        let Some(a) = (unsafe { self::array(array) }) else {
            return err::NULL_POINTER;
        };
        if cframe.is_null() || cframe_len.is_null() || needs_free.is_null() {
            return err::NULL_POINTER;
        }
        // A view's handle is freed after the call: its frame is copied.
        let lend = !a.view;
        let n = match materialized(a, |h| {
            // SAFETY: a live super-chunk handle; the out pointers are
            // non-null and writable (C's contract).
            unsafe { crate::schunk::to_buffer(h, cframe, needs_free, lend) }
        }) {
            Ok(n) => n,
            Err(rc) => return rc,
        };
        if n < 0 {
            return n as c_int;
        }
        // SAFETY: non-null (checked) and writable.
        unsafe { *cframe_len = n };
        0
    })
}

/// `b2nd_from_cframe`: the array in a contiguous frame in memory (`copy`:
/// the frame's bytes copied, else borrowed: they must outlive the array).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn b2nd_from_cframe(
    cframe: *mut u8,
    cframe_len: i64,
    copy: bool,
    array: *mut *mut b2nd_array_t,
) -> c_int {
    guard(err::FAILURE, || {
        if cframe.is_null() || array.is_null() {
            return err::NULL_POINTER;
        }
        // SAFETY: cframe holds cframe_len bytes (C's contract).
        let h = unsafe { crate::schunk::blosc2_schunk_from_buffer(cframe, cframe_len, copy) };
        if h.is_null() {
            return err::INVALID_PARAM;
        }
        // SAFETY: h is the new super-chunk; array is writable.
        unsafe { array_of_handle(h, array, true) }
    })
}

/// `b2nd_open_offset`: the array in the frame starting at `offset` of the
/// file `urlpath`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn b2nd_open_offset(
    urlpath: *const c_char,
    array: *mut *mut b2nd_array_t,
    offset: i64,
) -> c_int {
    guard(err::FAILURE, || {
        if urlpath.is_null() || array.is_null() {
            return err::NULL_POINTER;
        }
        // SAFETY: urlpath is a NUL-terminated string (C's contract).
        let h = unsafe { crate::schunk::blosc2_schunk_open_offset(urlpath, offset) };
        if h.is_null() {
            return err::FILE_OPEN;
        }
        // SAFETY: h is the new super-chunk; array is writable.
        unsafe { array_of_handle(h, array, true) }
    })
}

/// `b2nd_save`: a copy of the array at `urlpath` (a contiguous frame file
/// when the array's super-chunk is contiguous, a directory otherwise, as
/// C-Blosc2 saves it).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn b2nd_save(array: *const b2nd_array_t, urlpath: *mut c_char) -> c_int {
    guard(err::FAILURE, || {
        // SAFETY: array is null or a live array from this library.
        let Some(a) = (unsafe { self::array(array) }) else {
            return err::NULL_POINTER;
        };
        if urlpath.is_null() || a.c.sc.is_null() {
            return err::NULL_POINTER;
        }
        // SAFETY: the handle's storage is null or its own live struct.
        let contiguous = unsafe { (*a.c.sc).storage.as_ref() }.is_none_or(|st| st.contiguous);
        let mut storage = blosc2_storage {
            contiguous,
            urlpath,
            cparams: std::ptr::null_mut(),
            dparams: std::ptr::null_mut(),
            io: std::ptr::null_mut(),
        };
        let copy = match materialized(a, |h| {
            // SAFETY: a live super-chunk handle and a complete storage.
            unsafe { crate::schunk::blosc2_schunk_copy(h, &mut storage) }
        }) {
            Ok(c) => c,
            Err(rc) => return rc,
        };
        if copy.is_null() {
            return err::FILE_WRITE;
        }
        // SAFETY: the copy's handle, freed once.
        unsafe { blosc2_schunk_free(copy) };
        0
    })
}

/// `b2nd_save_append`: the array's frame appended to the file `urlpath`;
/// the offset it starts at, or a negative error code.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn b2nd_save_append(
    array: *const b2nd_array_t,
    urlpath: *const c_char,
) -> i64 {
    guard(i64::from(err::FAILURE), || {
        // SAFETY: array is null or a live array from this library.
        let Some(a) = (unsafe { self::array(array) }) else {
            return i64::from(err::NULL_POINTER);
        };
        materialized(a, |h| {
            // SAFETY: a live super-chunk handle; urlpath is null or a
            // NUL-terminated string (checked by the callee).
            unsafe { crate::schunk::blosc2_schunk_append_file(h, urlpath) }
        })
        .unwrap_or_else(i64::from)
    })
}

/// `f` of the array's super-chunk handle, or, for a view (whose frame
/// holds the original array's metalayer), of a temporary in-memory
/// super-chunk of the view's own shape (its compressed chunks copied):
/// what a frame written of a view must hold.
fn materialized<T>(a: &mut Array, f: impl FnOnce(*mut blosc2_schunk) -> T) -> Result<T, c_int> {
    if !a.view {
        return Ok(f(a.c.sc));
    }
    let mut made = None;
    let rc = with_array(a, false, |sc, meta| {
        let (_, base) =
            ndarray::find_meta(sc)?.ok_or_else(|| Error::Corrupt("no b2nd metalayer".into()))?;
        made = Some(ndarray::with_dims(sc, &base, meta)?);
        Ok(())
    });
    let Some(sc) = made.filter(|_| rc >= 0) else {
        return Err(rc);
    };
    // SAFETY: a.c.sc is the live handle with_array just used; its storage
    // and parameters point into it.
    let (cparams, dparams) = unsafe {
        let st = &*(*a.c.sc).storage;
        (*st.cparams, *st.dparams)
    };
    let h = handle_of(sc, cparams, dparams, None, true);
    if h.is_null() {
        return Err(err::FAILURE);
    }
    let r = f(h);
    // SAFETY: the temporary handle, freed once.
    unsafe { blosc2_schunk_free(h) };
    Ok(r)
}
