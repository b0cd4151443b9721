//! Shape changes: `b2nd_resize`, `b2nd_insert`, `b2nd_append`,
//! `b2nd_delete`, and `b2nd_refresh` (following another handle's change).

use super::*;

/// `b2nd_delete`: remove `delete_len` items of `axis` from `delete_start`
/// (a chunk boundary, or through the end: C-Blosc2's rule for shrinking).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn b2nd_delete(
    array: *mut b2nd_array_t,
    axis: i8,
    delete_start: i64,
    delete_len: i64,
) -> c_int {
    guard(err::FAILURE, || {
        // SAFETY: array is null or a live array from this library.
        let Some(a) = (unsafe { self::array(array) }) else {
            return err::NULL_POINTER;
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
            ndarray::resize(sc, meta, &shape, Some(&at))
        })
    })
}

/// `b2nd_resize`: change the shape (new items zero), growing or shrinking
/// each changed dimension at `start` (NULL: at its end).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn b2nd_resize(
    array: *mut b2nd_array_t,
    new_shape: *const i64,
    start: *const i64,
) -> c_int {
    guard(err::FAILURE, || {
        // SAFETY: array is null or a live array from this library.
        let Some(a) = (unsafe { self::array(array) }) else {
            return err::NULL_POINTER;
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
            ndarray::resize(sc, meta, &shape, st.as_deref())
        })
    })
}

/// `b2nd_insert`: insert a C-order buffer at `insert_start` of `axis`.
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
        let Some(a) = (unsafe { self::array(array) }) else {
            return err::NULL_POINTER;
        };
        if buffersize <= 0 || buffer.is_null() || axis < 0 || insert_start < 0 {
            return err::INVALID_PARAM;
        }
        // SAFETY: buffer holds buffersize readable bytes.
        let src = unsafe { slice_in(buffer, buffersize as usize) };
        with_array(a, true, |sc, meta| {
            ndarray::insert(sc, meta, src, axis as usize, insert_start as u64)
        })
    })
}

/// `b2nd_append`: append a C-order buffer at the end of `axis`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn b2nd_append(
    array: *mut b2nd_array_t,
    buffer: *const c_void,
    buffersize: i64,
    axis: i8,
) -> c_int {
    guard(err::FAILURE, || {
        // SAFETY: array is null or a live array from this library.
        let Some(a) = (unsafe { self::array(array) }) else {
            return err::NULL_POINTER;
        };
        if buffersize <= 0 || buffer.is_null() || axis < 0 {
            return err::INVALID_PARAM;
        }
        // SAFETY: buffer holds buffersize readable bytes.
        let src = unsafe { slice_in(buffer, buffersize as usize) };
        with_array(a, true, |sc, meta| {
            ndarray::append(sc, meta, src, axis as usize)
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
