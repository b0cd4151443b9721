//! Shape changes: `b2nd_resize`, `b2nd_insert`, `b2nd_append`,
//! `b2nd_delete`, and `b2nd_refresh` (following another handle's change).

use super::*;

/// The array a shape change applies to: `BLOSC2_ERROR_NULL_POINTER` for
/// none, `BLOSC2_ERROR_INVALID_PARAM` for a view (its shape is its own,
/// over another array's chunks).
///
/// # Safety
/// `array` is null or a live array from this library.
unsafe fn reshapeable<'a>(array: *mut b2nd_array_t) -> Result<&'a mut Array, c_int> {
    // SAFETY: the caller's contract.
    match unsafe { self::array(array) } {
        None => Err(err::NULL_POINTER),
        Some(a) if a.view => Err(err::INVALID_PARAM),
        Some(a) => Ok(a),
    }
}

/// `b2nd_delete`: remove `delete_len` items of `axis` from `delete_start`
/// (through the end, or whole chunks from a chunk boundary: C-Blosc2's
/// rule for shrinking), as C-Blosc2 does: whole chunks removed, the others
/// kept as stored ([`ndarray::resize_keep_chunks`]).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn b2nd_delete(
    array: *mut b2nd_array_t,
    axis: i8,
    delete_start: i64,
    delete_len: i64,
) -> c_int {
    guard(err::FAILURE, || {
        // SAFETY: array is null or a live array from this library.
        let a = match unsafe { reshapeable(array) } {
            Ok(a) => a,
            Err(rc) => return rc,
        };
        let n = a.meta.ndim();
        let (Ok(axis), Ok(start), Ok(len)) = (
            usize::try_from(axis),
            u64::try_from(delete_start),
            u64::try_from(delete_len),
        ) else {
            return err::INVALID_PARAM;
        };
        if axis >= n {
            return err::INVALID_PARAM;
        }
        with_array(a, true, |sc, meta| {
            let mut shape = meta.shape.clone();
            shape[axis] = start
                .checked_add(len)
                .filter(|&end| end <= shape[axis])
                .map(|_| shape[axis] - len)
                .ok_or_else(|| {
                    Error::InvalidParam(format!(
                        "delete {start}+{len} past dimension {axis} of length {}",
                        shape[axis]
                    ))
                })?;
            let mut at = vec![0u64; shape.len()];
            at[axis] = start;
            ndarray::resize_keep_chunks(sc, meta, &shape, Some(&at))
        })
    })
}

/// `b2nd_resize`: change the shape, growing or shrinking each changed
/// dimension at `start` (NULL: at its end), as C-Blosc2 does
/// ([`ndarray::resize_keep_chunks`]): whole zero chunks added, whole
/// chunks removed, the others kept as stored, so new items inside an old
/// edge chunk are what its padding held (as in C-Blosc2, where
/// `test_b2nd_resize` reads `b2nd_full`'s value there).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn b2nd_resize(
    array: *mut b2nd_array_t,
    new_shape: *const i64,
    start: *const i64,
) -> c_int {
    guard(err::FAILURE, || {
        // SAFETY: array is null or a live array from this library.
        let a = match unsafe { reshapeable(array) } {
            Ok(a) => a,
            Err(rc) => return rc,
        };
        let n = a.c.ndim.max(0) as usize;
        // SAFETY: new_shape holds ndim values (C's contract).
        let Some(shape) = (unsafe { shape_arg(new_shape, n) }) else {
            return err::INVALID_PARAM;
        };
        let st = if start.is_null() {
            None
        } else {
            // SAFETY: start holds ndim values (C's contract).
            match unsafe { shape_arg(start, n) } {
                Some(s) => Some(s),
                None => return err::INVALID_PARAM,
            }
        };
        with_array(a, true, |sc, meta| {
            ndarray::resize_keep_chunks(sc, meta, &shape, st.as_deref())
        })
    })
}

/// `b2nd_insert`: insert a C-order buffer at `insert_start` of `axis`, as
/// C-Blosc2 does: a `b2nd_resize` there, the buffer written into the new
/// items, in one change ([`ndarray::insert_keep_chunks`]).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn b2nd_insert(
    array: *mut b2nd_array_t,
    buffer: *const c_void,
    buffersize: i64,
    axis: i8,
    insert_start: i64,
) -> c_int {
    guard(err::FAILURE, || {
        // SAFETY: array is null or a live array from this library.
        let a = match unsafe { reshapeable(array) } {
            Ok(a) => a,
            Err(rc) => return rc,
        };
        if buffersize <= 0 || buffer.is_null() || axis < 0 || insert_start < 0 {
            return err::INVALID_PARAM;
        }
        // SAFETY: buffer holds buffersize readable bytes.
        let src = unsafe { slice_in(buffer, buffersize as usize) };
        with_array(a, true, |sc, meta| {
            ndarray::insert_keep_chunks(sc, meta, src, axis as usize, insert_start as u64)
        })
    })
}

/// `b2nd_append`: append a C-order buffer at the end of `axis` (a
/// `b2nd_insert` there).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn b2nd_append(
    array: *mut b2nd_array_t,
    buffer: *const c_void,
    buffersize: i64,
    axis: i8,
) -> c_int {
    guard(err::FAILURE, || {
        // SAFETY: array is null or a live array from this library.
        let a = match unsafe { reshapeable(array) } {
            Ok(a) => a,
            Err(rc) => return rc,
        };
        if buffersize <= 0 || buffer.is_null() || axis < 0 {
            return err::INVALID_PARAM;
        }
        // SAFETY: buffer holds buffersize readable bytes.
        let src = unsafe { slice_in(buffer, buffersize as usize) };
        with_array(a, true, |sc, meta| {
            let axis = axis as usize;
            let Some(&end) = meta.shape.get(axis) else {
                return Err(Error::InvalidParam(format!(
                    "axis {axis} of a {}-dimensional array",
                    meta.ndim()
                )));
            };
            ndarray::insert_keep_chunks(sc, meta, src, axis, end)
        })
    })
}

/// `b2nd_refresh`: follow a shape change another handle made on disk. 1
/// when the shape changed, 0 when current, `BLOSC2_ERROR_DATA` when the
/// dimensions, chunk or block shape changed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn b2nd_refresh(array: *mut b2nd_array_t) -> c_int {
    guard(err::FAILURE, || {
        // SAFETY: array is null or a live array from this library.
        let Some(a) = (unsafe { self::array(array) }) else {
            return err::NULL_POINTER;
        };
        let before = a.meta.clone();
        let r = with_array(a, false, |_, _| Ok(()));
        if r < 0 {
            return r;
        }
        let m = &a.meta;
        if m.ndim() != before.ndim()
            || m.chunkshape != before.chunkshape
            || m.blockshape != before.blockshape
        {
            return err::DATA;
        }
        c_int::from(m.shape != before.shape)
    })
}

/// Append `src`'s items to `dst` along `axis` under both frame locks;
/// an error code on failure (`dst` unchanged).
fn concatenate_into(dst: &mut Array, src: &Array, axis: usize) -> c_int {
    let mut inner = 0;
    let rc = with_array(dst, true, |sc, meta| {
        let r = with_locked(src.c.sc, false, |ssc| -> oxiblosc::Result<()> {
            let (_, mut smeta) = ndarray::find_meta(ssc)?.ok_or_else(|| {
                Error::InvalidParam("the array concatenated has no b2nd metalayer".into())
            })?;
            if src.view {
                // A view: its own shape of the same chunks.
                if !ndarray::same_chunks(&smeta, &src.meta) {
                    return Err(Error::InvalidParam("a stale view".into()));
                }
                smeta = src.meta.clone();
            }
            ndarray::concatenate(sc, meta, ssc, &smeta, axis)
        });
        r.unwrap_or_else(|rc| {
            inner = rc;
            Err(Error::InvalidParam("the array concatenated is busy".into()))
        })
    });
    if inner < 0 { inner } else { rc }
}

/// `b2nd_concatenate`: `src2`'s items after `src1`'s along `axis` (the
/// same item size and shape in every other dimension), in a copy of
/// `src1` made with `ctx` (`copy`; freed again on failure) or in `src1`
/// itself (then `*array` is `src1`). Where both have the same chunk and
/// block shapes and `src1` ends at a chunk boundary, `src2`'s chunks are
/// copied as they are. The change is one: on failure `src1` is unchanged.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn b2nd_concatenate(
    ctx: *mut b2nd_context_t,
    src1: *const b2nd_array_t,
    src2: *const b2nd_array_t,
    axis: i8,
    copy: bool,
    array: *mut *mut b2nd_array_t,
) -> c_int {
    guard(err::FAILURE, || {
        if src1.is_null() || src2.is_null() || array.is_null() {
            return err::NULL_POINTER;
        }
        let Ok(axis) = usize::try_from(axis) else {
            return err::INVALID_PARAM;
        };
        if copy {
            let mut made: *mut b2nd_array_t = std::ptr::null_mut();
            // SAFETY: C's contract: ctx from b2nd_create_ctx; src1 live.
            let rc = unsafe { super::slice::b2nd_copy(ctx, src1, &mut made) };
            if rc < 0 {
                return rc;
            }
            // SAFETY: b2nd_copy succeeded: made is a live array of ours,
            // src2 a live array (C's contract), not `made`.
            let (Some(m), Some(a2)) = (unsafe { self::array(made) }, unsafe { self::array(src2) })
            else {
                return err::FAILURE;
            };
            let rc = concatenate_into(m, a2, axis);
            if rc < 0 {
                // SAFETY: made is ours and not handed out.
                unsafe { super::storage::b2nd_free(made) };
                return rc;
            }
            // SAFETY: array is non-null (checked above) and writable.
            unsafe { *array = made };
            return 0;
        }
        // SAFETY: src1 is a live array from this library (non-null).
        let Some(a1) = (unsafe { self::array(src1) }) else {
            return err::NULL_POINTER;
        };
        if a1.view {
            // In place into a view: its shape is its own.
            return err::INVALID_PARAM;
        }
        let rc = if std::ptr::eq(src1, src2) {
            // The array after itself: its items read first (within the
            // output limit), then appended.
            let n = a1.meta.ndim();
            if axis >= n {
                return err::INVALID_PARAM;
            }
            let shape = a1.meta.shape.clone();
            let (data, _) = match super::slice::read_box(a1, &vec![0; n], &shape) {
                Ok(x) => x,
                Err(rc) => return rc,
            };
            with_array(a1, true, |sc, meta| {
                if data.is_empty() {
                    let mut s = meta.shape.clone();
                    s[axis] = s[axis].saturating_mul(2);
                    ndarray::resize(sc, meta, &s, None)
                } else {
                    ndarray::append(sc, meta, &data, axis)
                }
            })
        } else {
            // SAFETY: src2 is a live array from this library, not src1.
            let Some(a2) = (unsafe { self::array(src2) }) else {
                return err::NULL_POINTER;
            };
            concatenate_into(a1, a2, axis)
        };
        if rc < 0 {
            return rc;
        }
        // SAFETY: array is non-null (checked above) and writable.
        unsafe { *array = src1 as *mut b2nd_array_t };
        0
    })
}
