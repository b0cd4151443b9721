//! New arrays: the constructors (`b2nd_zeros`, `b2nd_empty`, `b2nd_uninit`,
//! `b2nd_nans`, `b2nd_full`, `b2nd_from_cbuffer`) and the `create` they and
//! `b2nd_get_slice` / `b2nd_copy` share.

use super::*;

impl b2nd_context_t {
    /// The storage's path as C sees it now: C code may set
    /// `ctx->b2_storage->urlpath` after b2nd_create_ctx (C-Blosc2's test
    /// `b2nd/test_b2nd_expand_dims` sets it to NULL for an array in
    /// memory); `BLOSC2_ERROR_INVALID_PARAM` for one that is not UTF-8.
    ///
    /// # Safety
    /// The storage's urlpath is null, the context's own string, or a
    /// NUL-terminated string the caller set (C's contract).
    pub(super) unsafe fn urlpath(&self, what: &str) -> Result<Option<String>, c_int> {
        if self.storage.urlpath.is_null() {
            return Ok(None);
        }
        // SAFETY: the caller's contract.
        match unsafe { str_arg(self.storage.urlpath) } {
            Some(u) => Ok(Some(u.to_owned())),
            None => {
                eprintln!("{what}: a urlpath that is not UTF-8");
                Err(err::INVALID_PARAM)
            }
        }
    }

    /// The super-chunk `b` makes where the storage says: in memory, a
    /// frame file (`contiguous`) or a directory at `urlpath`.
    pub(super) fn build(
        &self,
        b: oxiblosc::schunk::SChunkBuilder,
        urlpath: Option<&str>,
    ) -> oxiblosc::Result<SChunk> {
        match urlpath {
            None => b.build_memory(),
            Some(u) if self.storage.contiguous => b.create_file(u),
            Some(u) => b.create_dir(u),
        }
    }
}

/// What a new array's chunks hold.
pub(super) enum Init<'a> {
    /// Special chunks of this kind (`Fill::Value`'s item checked against
    /// the item size first).
    Special(Fill<'a>),
    /// The array's items in C order, compressed chunk by chunk.
    Data(&'a [u8]),
}

/// A new array of `ctx`'s parameters into `*array`; `what` names the C call
/// in the message printed on failure.
///
/// # Safety
/// `ctx` is null or a live context from `b2nd_create_ctx`; `array` is null
/// or writable.
unsafe fn create(
    ctx: *mut b2nd_context_t,
    array: *mut *mut b2nd_array_t,
    what: &str,
    init: Init<'_>,
) -> c_int {
    // SAFETY: the caller's contract.
    unsafe { create_shaped(ctx, array, what, init, None, None) }
}

/// What `b2nd_copy` carries over from the source array besides its items:
/// its metalayers other than the array's own, and its vlmetalayers.
pub(super) struct Copied {
    pub(super) metalayers: Vec<(String, Vec<u8>)>,
    pub(super) vlmetalayers: Vec<(String, Vec<u8>)>,
}

/// [`create`] with the array's shape `shape` instead of the context's (of
/// as many dimensions: `BLOSC2_ERROR_INVALID_PARAM` otherwise), as
/// `b2nd_get_slice` and `b2nd_copy` make theirs.
///
/// # Safety
/// As [`create`].
pub(super) unsafe fn create_shaped(
    ctx: *mut b2nd_context_t,
    array: *mut *mut b2nd_array_t,
    what: &str,
    init: Init<'_>,
    shape: Option<&[u64]>,
    copied: Option<&Copied>,
) -> c_int {
    // SAFETY: the caller's contract.
    let (Some(ctx), false) = (unsafe { ctx.as_ref() }, array.is_null()) else {
        return err::NULL_POINTER;
    };
    let cp = match to_cparams(&ctx.cparams) {
        Ok(p) => p,
        Err(e) => return e,
    };
    let mut meta = ctx.meta.clone();
    if let Some(shape) = shape {
        if shape.len() != meta.ndim() {
            eprintln!(
                "{what}: an array of {} dimensions for a context of {}",
                shape.len(),
                meta.ndim()
            );
            return err::INVALID_PARAM;
        }
        meta.shape = shape.to_vec();
    }
    // A chunk (padded to whole blocks) past the largest buffer a chunk may
    // hold is C-Blosc2's BLOSC2_ERROR_MAX_BUFSIZE_EXCEEDED (its test
    // `b2nd/test_b2nd_chunk_overflow`), not a layout error.
    if let Ok(itemsize) = ndarray::dtype_itemsize(&meta.dtype) {
        let padded = meta
            .chunkshape
            .iter()
            .zip(&meta.blockshape)
            .try_fold(itemsize as u64, |a, (&c, &b)| {
                a.checked_mul(if b == 0 { c } else { c.div_ceil(b) * b })
            });
        if padded.is_none_or(|n| n > MAX_BUFFERSIZE as u64) {
            eprintln!("{what}: a chunk of more than {MAX_BUFFERSIZE} bytes");
            return err::MAX_BUFSIZE_EXCEEDED;
        }
    }
    // SAFETY: the caller's contract (ctx live).
    let urlpath = match unsafe { ctx.urlpath(what) } {
        Ok(u) => u,
        Err(rc) => return rc,
    };
    let made = (|| -> oxiblosc::Result<SChunk> {
        let itemsize = ndarray::dtype_itemsize(&meta.dtype)?;
        let layout = Layout::new(&meta, itemsize)?;
        // Checked before anything is made: a fill item of the item size,
        // NaNs of 4 or 8 bytes, the whole array's bytes.
        match &init {
            Init::Special(Fill::Value(v)) if v.len() != itemsize => {
                return Err(Error::InvalidParam(format!(
                    "a fill value of {} bytes for items of {itemsize}",
                    v.len()
                )));
            }
            Init::Special(Fill::Nan) if itemsize != 4 && itemsize != 8 => {
                return Err(Error::InvalidParam(format!(
                    "NaNs need items of 4 or 8 bytes, not {itemsize}"
                )));
            }
            Init::Data(d) if (d.len() as u64) < layout.nbytes() => {
                return Err(Error::InvalidParam(format!(
                    "a buffer of {} bytes for an array of {}",
                    d.len(),
                    layout.nbytes()
                )));
            }
            _ => {}
        }
        let mut b = ndarray::builder(&meta, cp)?
            .fsync(false)
            .dparams(DParams::default().nthreads(ctx.dparams.nthreads.max(1) as usize));
        for (name, content) in &ctx.metalayers {
            b = b.meta(name, content);
        }
        for (name, content) in copied.map_or(&[][..], |c| &c.metalayers[..]) {
            if !ctx.metalayers.iter().any(|(n, _)| n == name) {
                b = b.meta(name, content);
            }
        }
        let mut sc = ctx.build(b, urlpath.as_deref())?;
        for (name, value) in copied.map_or(&[][..], |c| &c.vlmetalayers[..]) {
            sc.vlmeta_set(name, value)?;
        }
        match init {
            Init::Data(d) => ndarray::fill(&mut sc, &meta, &d[..layout.nbytes() as usize])?,
            Init::Special(Fill::Value(v)) if v.len() > 255 => {
                // A chunk header's type size is one byte: items of more
                // than 255 bytes make no repeated-value chunk. One chunk
                // of the value repeated, compressed once, stored for all.
                let buf: Vec<u8> = v
                    .iter()
                    .copied()
                    .cycle()
                    .take(layout.chunk_nbytes())
                    .collect();
                let chunk = oxiblosc::compress(&buf, sc.compress_params())?;
                for _ in 0..layout.nchunks() {
                    sc.append_chunk(&chunk)?;
                }
            }
            Init::Special(fill) if layout.nchunks() > 0 => {
                // The items of all chunks, padding included (edge chunks
                // and blocks are whole): more than the array's, past u64
                // for a large array.
                let per = (layout.chunk_nbytes() / itemsize) as u64;
                let items = per.checked_mul(layout.nchunks()).ok_or_else(|| {
                    Error::InvalidParam(format!(
                        "{} chunks of {per} items overflow",
                        layout.nchunks()
                    ))
                })?;
                sc.fill_special(items, fill, layout.chunk_nbytes())?;
            }
            Init::Special(_) => {}
        }
        Ok(sc)
    })();
    let sc = match made {
        Ok(sc) => sc,
        Err(e) => {
            eprintln!("{what}: {e}");
            return code(&e);
        }
    };
    let mut cparams = ctx.cparams;
    cparams.typesize = sc.typesize() as i32;
    let h = handle_of(
        sc,
        cparams,
        ctx.dparams,
        urlpath.as_deref(),
        ctx.storage.contiguous,
    );
    if h.is_null() {
        return err::FAILURE;
    }
    // SAFETY: array is non-null (checked above) and writable.
    unsafe { *array = Array::boxed(h, meta) };
    0
}

/// `b2nd_zeros`: a new array of zeros (chunks recorded as zero chunks).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn b2nd_zeros(
    ctx: *mut b2nd_context_t,
    array: *mut *mut b2nd_array_t,
) -> c_int {
    // SAFETY: C's contract: ctx from b2nd_create_ctx, array writable.
    guard(err::FAILURE, || unsafe {
        create(ctx, array, "b2nd_zeros", Init::Special(Fill::Zeros))
    })
}

/// `b2nd_empty`: a new array, of zero chunks as C-Blosc2 3.x makes it
/// (python-blosc2's `empty` reads zeros).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn b2nd_empty(
    ctx: *mut b2nd_context_t,
    array: *mut *mut b2nd_array_t,
) -> c_int {
    // SAFETY: C's contract: ctx from b2nd_create_ctx, array writable.
    guard(err::FAILURE, || unsafe {
        create(ctx, array, "b2nd_empty", Init::Special(Fill::Zeros))
    })
}

/// `b2nd_uninit`: a new array of uninitialised chunks (read as zeros here).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn b2nd_uninit(
    ctx: *mut b2nd_context_t,
    array: *mut *mut b2nd_array_t,
) -> c_int {
    // SAFETY: C's contract: ctx from b2nd_create_ctx, array writable.
    guard(err::FAILURE, || unsafe {
        create(ctx, array, "b2nd_uninit", Init::Special(Fill::Uninit))
    })
}

/// `b2nd_nans`: a new array of NaN chunks (items of 4 or 8 bytes; other
/// sizes are `BLOSC2_ERROR_INVALID_PARAM`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn b2nd_nans(
    ctx: *mut b2nd_context_t,
    array: *mut *mut b2nd_array_t,
) -> c_int {
    // SAFETY: C's contract: ctx from b2nd_create_ctx, array writable.
    guard(err::FAILURE, || unsafe {
        create(ctx, array, "b2nd_nans", Init::Special(Fill::Nan))
    })
}

/// `b2nd_full`: a new array whose every item is the item size's bytes at
/// `fill_value` (chunks of a repeated value).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn b2nd_full(
    ctx: *mut b2nd_context_t,
    array: *mut *mut b2nd_array_t,
    fill_value: *const c_void,
) -> c_int {
    guard(err::FAILURE, || {
        // SAFETY: ctx is null or a live context from b2nd_create_ctx.
        let Some(c) = (unsafe { ctx.as_ref() }) else {
            return err::NULL_POINTER;
        };
        if fill_value.is_null() {
            return err::NULL_POINTER;
        }
        let itemsize = match ndarray::dtype_itemsize(&c.meta.dtype) {
            Ok(n) => n,
            Err(e) => return code(&e),
        };
        // SAFETY: fill_value points to one item (C's contract).
        let value = unsafe { slice_in(fill_value, itemsize) };
        // SAFETY: C's contract: array writable.
        unsafe { create(ctx, array, "b2nd_full", Init::Special(Fill::Value(value))) }
    })
}

/// `b2nd_from_cbuffer`: a new array holding the C-order items of `buffer`
/// (at least the array's bytes; `BLOSC2_ERROR_INVALID_PARAM` when
/// shorter).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn b2nd_from_cbuffer(
    ctx: *mut b2nd_context_t,
    array: *mut *mut b2nd_array_t,
    buffer: *const c_void,
    buffersize: i64,
) -> c_int {
    guard(err::FAILURE, || {
        if buffer.is_null() {
            return err::NULL_POINTER;
        }
        let Ok(len) = usize::try_from(buffersize) else {
            return err::INVALID_PARAM;
        };
        // SAFETY: buffer holds buffersize readable bytes (C's contract).
        let data = unsafe { slice_in(buffer, len) };
        // SAFETY: C's contract: ctx from b2nd_create_ctx, array writable.
        unsafe { create(ctx, array, "b2nd_from_cbuffer", Init::Data(data)) }
    })
}
