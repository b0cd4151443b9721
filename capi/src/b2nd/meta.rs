//! The `b2nd` metalayer through C: `b2nd_serialize_meta`,
//! `b2nd_deserialize_meta` (over `oxiblosc::ndarray::NdMeta`) and
//! `b2nd_print_meta`.

use super::*;

/// `b2nd_serialize_meta`: the `b2nd` metalayer of a geometry, in memory
/// from `malloc` at `*smeta` (the caller `free()`s it); its length, or a
/// negative error code.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn b2nd_serialize_meta(
    ndim: i8,
    shape: *const i64,
    chunkshape: *const i32,
    blockshape: *const i32,
    dtype: *const c_char,
    dtype_format: i8,
    smeta: *mut *mut u8,
) -> c_int {
    guard(err::FAILURE, || {
        if smeta.is_null() {
            return err::NULL_POINTER;
        }
        if !(0..=B2ND_MAX_DIM as i8).contains(&ndim) || dtype_format < 0 {
            return err::INVALID_PARAM;
        }
        let n = ndim as usize;
        // SAFETY: the shape arrays hold ndim values (C's contract).
        let (Some(sh), Some(cs), Some(bs)) = (
            unsafe { shape_arg(shape, n) },
            unsafe { shape_arg(chunkshape, n) },
            unsafe { shape_arg(blockshape, n) },
        ) else {
            return err::INVALID_PARAM;
        };
        // SAFETY: dtype is null or a NUL-terminated string.
        let dt = unsafe { str_arg(dtype) }.unwrap_or(ndarray::DEFAULT_DTYPE);
        let mut meta = NdMeta::new(&sh, &cs, &bs, dt);
        meta.dtype_format = dtype_format as u8;
        let bytes = match meta.encode() {
            Ok(b) => b,
            Err(e) => return code(&e),
        };
        let p = crate::common::malloc_copy(&bytes);
        if p.is_null() {
            return err::MEMORY_ALLOC;
        }
        // SAFETY: smeta is non-null and writable (C's contract).
        unsafe { *smeta = p };
        bytes.len() as c_int
    })
}

/// `b2nd_deserialize_meta`: read a `b2nd` (or `caterva`) metalayer of
/// `smeta_len` bytes, every value checked ([`NdMeta::decode`]); `*dtype`
/// from `malloc` (the caller `free()`s it; NULL for a `caterva` one). The
/// bytes read, or a negative error code.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn b2nd_deserialize_meta(
    smeta: *const u8,
    smeta_len: i32,
    ndim: *mut i8,
    shape: *mut i64,
    chunkshape: *mut i32,
    blockshape: *mut i32,
    dtype: *mut *mut c_char,
    dtype_format: *mut i8,
) -> c_int {
    guard(err::FAILURE, || {
        if smeta.is_null() || ndim.is_null() || smeta_len < 0 {
            return err::INVALID_PARAM;
        }
        // SAFETY: smeta holds smeta_len bytes (C's contract).
        let raw = unsafe { slice_in(smeta as *const c_void, smeta_len as usize) };
        let meta = match NdMeta::decode(raw) {
            Ok(m) => m,
            Err(_) => return err::FAILURE,
        };
        let n = meta.ndim();
        // SAFETY: the out pointers hold B2ND_MAX_DIM values each and are
        // writable, or are null (then skipped), as C's reader assumes.
        unsafe {
            *ndim = n as i8;
            for d in 0..n {
                if !shape.is_null() {
                    *shape.add(d) = meta.shape[d] as i64;
                }
                if !chunkshape.is_null() {
                    *chunkshape.add(d) = meta.chunkshape[d] as i32;
                }
                if !blockshape.is_null() {
                    *blockshape.add(d) = meta.blockshape[d] as i32;
                }
            }
            if !dtype.is_null() && !dtype_format.is_null() {
                *dtype_format = meta.dtype_format as i8;
                *dtype = if meta.has_dtype {
                    crate::common::c_strdup(&meta.dtype)
                } else {
                    std::ptr::null_mut()
                };
            }
        }
        smeta_len
    })
}

/// The text `b2nd_print_meta` prints for `m`: C-Blosc2's labels and
/// order (`Ndim`, `shape`, `chunkshape`, `dtype`, `blockshape`), the
/// values of each list separated by `", "`.
pub(super) fn meta_text(m: &NdMeta) -> String {
    let list = |v: &[u64]| {
        v.iter()
            .map(|x| x.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    format!(
        "b2nd metalayer parameters:\n Ndim:       {}\n shape:      {}\n chunkshape: {}\n \
         dtype: {}\n blockshape: {}\n",
        m.ndim(),
        list(&m.shape),
        list(&m.chunkshape),
        m.dtype,
        list(&m.blockshape)
    )
}

/// `b2nd_print_meta`: print the array's metalayer (as the frame holds it
/// now) on C's standard output, through C's `printf` so that it keeps its
/// place among the program's own output; `BLOSC2_ERROR_METALAYER_NOT_FOUND`
/// when the frame holds none.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn b2nd_print_meta(array: *const b2nd_array_t) -> c_int {
    guard(err::FAILURE, || {
        // SAFETY: array is null or a live array from this library.
        let Some(a) = (unsafe { self::array(array) }) else {
            return err::NULL_POINTER;
        };
        let mut text = None;
        let view = a.view.then(|| a.meta.clone());
        let r = with_locked(a.c.sc, false, |sc| match ndarray::find_meta(sc) {
            Ok(Some(_)) if view.is_some() => {
                text = view.as_ref().map(meta_text);
                0
            }
            Ok(Some((_, m))) => {
                text = Some(meta_text(&m));
                0
            }
            Ok(None) => err::METALAYER_NOT_FOUND,
            Err(e) => code(&e),
        });
        let rc = r.unwrap_or_else(|e| e);
        if let Some(t) = text {
            let t = CString::new(t.replace('\0', "")).unwrap_or_default();
            // SAFETY: a "%s" format and one NUL-terminated string.
            unsafe { libc::printf(c"%s".as_ptr(), t.as_ptr()) };
        }
        rc
    })
}
