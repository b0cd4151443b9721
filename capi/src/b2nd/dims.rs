//! Dimensions of length 1 removed or added: `b2nd_squeeze`,
//! `b2nd_squeeze_index`, `b2nd_expand_dims`.
//!
//! C-Blosc2 makes these "views": a new array whose super-chunk points to
//! the original's chunk list, freed with `b2nd_free` in any order. Ours
//! too, in O(1): the view shares the original's super-chunk handle (freed
//! with the last array holding it) with a shape of its own, so a write
//! to either shows in the other. A view cannot change shape (resize,
//! insert, append, delete, concatenate into it:
//! `BLOSC2_ERROR_INVALID_PARAM`), and stops working
//! (`BLOSC2_ERROR_INVALID_PARAM`) once the original is resized; a frame
//! written of it (`b2nd_to_cframe`, `b2nd_save`, `b2nd_save_append`) holds
//! the view's shape. Only where a removed dimension of length 1 had chunks
//! or blocks longer than 1 (C's view would misplace the items there) is the
//! view a new in-memory array of the items gathered again
//! ([`ndarray::with_dims`]), with the original's compression parameters.
//! As in C, an array with metalayers other than `b2nd` is refused
//! (`BLOSC2_ERROR_INVALID_PARAM`).

use super::*;

/// A new array into `*view` holding `a`'s items under the shape `shape`
/// gives from the array's metalayer (an error code when it refuses it).
///
/// # Safety
/// `view` is null or writable.
unsafe fn view_of(
    a: &mut Array,
    view: *mut *mut b2nd_array_t,
    what: &str,
    shape: impl FnOnce(&NdMeta) -> Result<NdMeta, c_int>,
) -> c_int {
    if view.is_null() {
        return err::NULL_POINTER;
    }
    let mut made = None;
    let mut refused = 0;
    let rc = with_array(a, false, |sc, meta| {
        if let Some(m) = sc
            .metalayers()
            .iter()
            .find(|m| m.name != ndarray::B2ND_META)
        {
            refused = err::INVALID_PARAM;
            return Err(Error::InvalidParam(format!(
                "an array with the metalayer {:?} besides b2nd",
                m.name
            )));
        }
        let new = shape(meta).map_err(|rc| {
            refused = rc;
            Error::InvalidParam("the new shape is refused".into())
        })?;
        // The same chunks: a view sharing the super-chunk, as C's.
        let sc = if ndarray::same_chunks(meta, &new) {
            None
        } else {
            Some(ndarray::with_dims(sc, meta, &new)?)
        };
        made = Some((sc, new));
        Ok(())
    });
    if refused < 0 {
        return refused;
    }
    let Some((sc, meta)) = made.filter(|_| rc >= 0) else {
        eprintln!("{what}: error {rc}");
        return rc;
    };
    let Some(sc) = sc else {
        // SAFETY: view is non-null (checked above) and writable.
        unsafe { *view = Array::boxed_view(a.c.sc, meta) };
        return 0;
    };
    // The original's compression parameters (C copies them into the view).
    // SAFETY: a.c.sc is a live super-chunk handle of this library (with_array
    // succeeded on it); its storage and parameters point into the handle.
    let (cparams, dparams, contiguous) = unsafe {
        let st = &*(*a.c.sc).storage;
        (*st.cparams, *st.dparams, st.contiguous)
    };
    let h = handle_of(sc, cparams, dparams, None, contiguous);
    if h.is_null() {
        return err::FAILURE;
    }
    // SAFETY: view is non-null (checked above) and writable.
    unsafe { *view = Array::boxed(h, meta) };
    0
}

/// `b2nd_squeeze_index`: a new array without the dimensions `index`
/// marks, each of length 1 (`BLOSC2_ERROR_INVALID_INDEX` for one that is
/// not).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn b2nd_squeeze_index(
    array: *mut b2nd_array_t,
    view: *mut *mut b2nd_array_t,
    index: *const bool,
) -> c_int {
    guard(err::FAILURE, || {
        // SAFETY: array is null or a live array from this library.
        let Some(a) = (unsafe { self::array(array) }) else {
            return err::NULL_POINTER;
        };
        let n = a.c.ndim.max(0) as usize;
        if index.is_null() && n > 0 {
            return err::NULL_POINTER;
        }
        // SAFETY: index holds ndim flags (C's contract; checked non-null),
        // read as bytes (any non-zero byte is true, none is undefined).
        let flags: Vec<bool> = (0..n)
            .map(|i| unsafe { *(index as *const u8).add(i) } != 0)
            .collect();
        // SAFETY: view is null or writable (C's contract).
        unsafe {
            view_of(a, view, "b2nd_squeeze_index", |m| {
                if flags.len() != m.ndim() {
                    return Err(err::INVALID_PARAM);
                }
                m.squeeze_index(&flags).map_err(|_| err::INVALID_INDEX)
            })
        }
    })
}

/// `b2nd_squeeze`: a new array without the dimensions of length 1.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn b2nd_squeeze(
    array: *mut b2nd_array_t,
    view: *mut *mut b2nd_array_t,
) -> c_int {
    guard(err::FAILURE, || {
        // SAFETY: array is null or a live array from this library.
        let Some(a) = (unsafe { self::array(array) }) else {
            return err::NULL_POINTER;
        };
        // SAFETY: view is null or writable (C's contract).
        unsafe { view_of(a, view, "b2nd_squeeze", |m| Ok(m.squeeze())) }
    })
}

/// `b2nd_expand_dims`: a new array of `final_dims` dimensions, a new one of
/// length 1 (chunks and blocks of 1) where `axis` is true, the array's
/// dimensions in order where it is false (`BLOSC2_ERROR_INVALID_PARAM`
/// when they do not match the array's, or `final_dims` is over
/// `B2ND_MAX_DIM`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn b2nd_expand_dims(
    array: *const b2nd_array_t,
    view: *mut *mut b2nd_array_t,
    axis: *const bool,
    final_dims: u8,
) -> c_int {
    guard(err::FAILURE, || {
        // SAFETY: array is null or a live array from this library.
        let Some(a) = (unsafe { self::array(array) }) else {
            return err::NULL_POINTER;
        };
        let n = final_dims as usize;
        if n > B2ND_MAX_DIM {
            return err::INVALID_PARAM;
        }
        if axis.is_null() && n > 0 {
            return err::NULL_POINTER;
        }
        // SAFETY: axis holds final_dims flags (C's contract; checked
        // non-null), read as bytes.
        let flags: Vec<bool> = (0..n)
            .map(|i| unsafe { *(axis as *const u8).add(i) } != 0)
            .collect();
        // SAFETY: view is null or writable (C's contract).
        unsafe {
            view_of(a, view, "b2nd_expand_dims", |m| {
                m.expand_dims(&flags).map_err(|_| err::INVALID_PARAM)
            })
        }
    })
}
