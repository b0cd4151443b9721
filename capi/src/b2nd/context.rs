//! `b2nd_create_ctx` and `b2nd_free_ctx`: the parameters of a new array,
//! with the C view C-Blosc2's tests read (`b2nd_context_view`).

use super::*;

/// `b2nd_create_ctx`: the parameters of a new array (NULL on bad input).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn b2nd_create_ctx(
    b2_storage: *const blosc2_storage,
    ndim: i8,
    shape: *const i64,
    chunkshape: *const i32,
    blockshape: *const i32,
    dtype: *const c_char,
    dtype_format: i8,
    metalayers: *const blosc2_metalayer,
    nmetalayers: i32,
) -> *mut b2nd_context_t {
    guard(std::ptr::null_mut(), || {
        if !(0..=B2ND_MAX_DIM as i8).contains(&ndim) || dtype_format < 0 || nmetalayers < 0 {
            return std::ptr::null_mut();
        }
        let n = ndim as usize;
        // SAFETY: storage is null or points to C's storage.
        let st = unsafe { b2_storage.as_ref() }.copied();
        // SAFETY: cparams is null or points to C's cparams.
        let cp = st
            .and_then(|s| unsafe { s.cparams.as_ref() }.copied())
            .unwrap_or(CPARAMS_DEFAULTS);
        // SAFETY: dparams is null or points to C's dparams.
        let dp = st
            .and_then(|s| unsafe { s.dparams.as_ref() }.copied())
            .unwrap_or(DPARAMS_DEFAULTS);
        // SAFETY: the shape arrays hold ndim values (C's contract).
        let (Some(sh), Some(cs), Some(bs)) = (
            unsafe { shape_arg(shape, n) },
            unsafe { shape_arg(chunkshape, n) },
            unsafe { shape_arg(blockshape, n) },
        ) else {
            return std::ptr::null_mut();
        };
        // Products C keeps in int32 (items of a chunk, of a block) and
        // int64 (of the array): a geometry past them makes no context, as
        // in C-Blosc2 (its test b2nd/test_b2nd_shape_overflow).
        let fits = |v: &[u64], max: u64| {
            v.iter()
                .try_fold(1u64, |a, &d| a.checked_mul(d))
                .is_some_and(|p| p <= max)
        };
        if !fits(&cs, i32::MAX as u64) || !fits(&bs, i32::MAX as u64) || !fits(&sh, i64::MAX as u64)
        {
            return std::ptr::null_mut();
        }
        // SAFETY: dtype is null or a NUL-terminated string.
        let dt = match unsafe { str_arg(dtype) } {
            Some(d) => d.to_string(),
            None => format!("|S{}", cp.typesize),
        };
        let mut meta = NdMeta::new(&sh, &cs, &bs, &dt);
        meta.dtype_format = dtype_format as u8;
        let mut metas = Vec::new();
        for i in 0..nmetalayers as usize {
            // SAFETY: metalayers holds nmetalayers entries (C's contract).
            let Some(m) = (unsafe { metalayers.add(i).as_ref() }) else {
                return std::ptr::null_mut();
            };
            // SAFETY: name is null or a NUL-terminated string.
            let Some(name) = (unsafe { str_arg(m.name) }) else {
                return std::ptr::null_mut();
            };
            if m.content_len < 0 {
                return std::ptr::null_mut();
            }
            // SAFETY: content holds content_len bytes.
            let content = unsafe { slice_in(m.content as *const c_void, m.content_len as usize) };
            metas.push((name.to_string(), content.to_vec()));
        }
        // SAFETY: urlpath is null or a NUL-terminated string.
        let url = st
            .and_then(|s| unsafe { str_arg(s.urlpath) })
            .map(|u| u.strip_prefix("file:///").unwrap_or(u).to_string());
        let storage = st.unwrap_or(blosc2_storage {
            contiguous: false,
            urlpath: std::ptr::null_mut(),
            cparams: std::ptr::null_mut(),
            dparams: std::ptr::null_mut(),
            io: std::ptr::null_mut(),
        });
        Box::into_raw(b2nd_context_t::new(storage, url, cp, dp, meta, metas))
    })
}

/// `b2nd_free_ctx`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn b2nd_free_ctx(ctx: *mut b2nd_context_t) -> c_int {
    guard(err::FAILURE, || {
        if ctx.is_null() {
            return err::NULL_POINTER;
        }
        // SAFETY: ctx was made by b2nd_create_ctx and is freed once.
        drop(unsafe { Box::from_raw(ctx) });
        0
    })
}
