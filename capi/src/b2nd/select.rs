//! Selections of items through C buffers: `b2nd_get_sparse_cbuffer` (items
//! by flat C-order coordinates) and `b2nd_get_orthogonal_selection` /
//! `b2nd_set_orthogonal_selection` (a list of indices per dimension), over
//! [`ndarray::get_items`], [`ndarray::get_orthogonal`] and
//! [`ndarray::set_orthogonal`].
//!
//! Stricter than C-Blosc2 3.3.5: an index at a dimension's length (or a
//! coordinate at the item count) is `BLOSC2_ERROR_INVALID_INDEX`, as is a
//! negative one; counts and buffer shapes are checked (negative,
//! overflowing, a buffer shape smaller than its selection, a buffer
//! smaller than its shape: `BLOSC2_ERROR_INVALID_PARAM`); a NULL pointer
//! that must hold values is `BLOSC2_ERROR_NULL_POINTER`. Every check is
//! made before anything is read from or written to the array. A buffer
//! larger than its shape's bytes is accepted (C refuses a buffer larger
//! than the selection for the orthogonal calls).

use super::*;

/// Keep `rc`, the code of one of this file's own checks, in `refused`
/// for the call to return: the closure `with_array` runs returns the
/// library's errors, which have no `INVALID_INDEX` or `NULL_POINTER`.
fn refuse(refused: &mut Option<c_int>, rc: c_int) -> Error {
    *refused = Some(rc);
    Error::InvalidParam("refused by the C ABI's checks".into())
}

/// `n` values at `p` as indices below `len`: `Err(INVALID_INDEX)` for a
/// negative one or one at or past `len`, `Err(INVALID_PARAM)` when they
/// cannot be allocated.
///
/// # Safety
/// `p` points to `n` readable values (when `n > 0`).
unsafe fn indices(p: *const i64, n: usize, len: u64) -> Result<Vec<u64>, c_int> {
    let mut out = Vec::new();
    out.try_reserve_exact(n).map_err(|_| err::INVALID_PARAM)?;
    for i in 0..n {
        // SAFETY: i < n values at p (the caller's contract).
        let v = unsafe { p.add(i).read_unaligned() };
        match u64::try_from(v) {
            Ok(v) if v < len => out.push(v),
            _ => return Err(err::INVALID_INDEX),
        }
    }
    Ok(out)
}

/// `b2nd_get_sparse_cbuffer`: the items at the flat C-order coordinates
/// `coords` (`ncoords` of them, repeated and in any order) into `buffer`,
/// one after the other, each chunk read once. `ncoords` 0 reads nothing
/// (`coords` and `buffer` may then be NULL). Unlike C-Blosc2, a coordinate
/// at or past the array's item count, or negative, is
/// `BLOSC2_ERROR_INVALID_INDEX` with nothing written to `buffer`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn b2nd_get_sparse_cbuffer(
    array: *const b2nd_array_t,
    ncoords: i64,
    coords: *const i64,
    buffer: *mut c_void,
    buffersize: i64,
) -> c_int {
    guard(err::FAILURE, || {
        // SAFETY: array is null or a live array from this library.
        let Some(a) = (unsafe { self::array(array) }) else {
            return err::NULL_POINTER;
        };
        let (Ok(n), Ok(size)) = (usize::try_from(ncoords), usize::try_from(buffersize)) else {
            return err::INVALID_PARAM;
        };
        if n > 0 && (coords.is_null() || buffer.is_null()) {
            return err::NULL_POINTER;
        }
        // SAFETY: buffer holds buffersize writable bytes (C's contract;
        // an empty slice when it is NULL or the size 0).
        let dst = unsafe { slice_out(buffer, size) };
        let mut refused = None;
        let rc = with_array(a, false, |sc, meta| {
            // The buffer first: it bounds how many coordinates are read.
            let Some(need) = n.checked_mul(sc.typesize()).filter(|&b| b <= dst.len()) else {
                return Err(Error::InvalidParam(format!(
                    "a buffer of {} bytes for {n} items of {} bytes",
                    dst.len(),
                    sc.typesize()
                )));
            };
            // Without a count of items (a shape whose product overflows)
            // the library refuses the layout.
            let nitems = meta.nitems().unwrap_or(u64::MAX);
            // SAFETY: coords holds ncoords values (C's contract; non-null
            // when n > 0, checked above).
            let flat =
                unsafe { indices(coords, n, nitems) }.map_err(|rc| refuse(&mut refused, rc))?;
            ndarray::get_items(sc, meta, &flat, &mut dst[..need])
        });
        refused.unwrap_or(rc)
    })
}

/// The checked arguments of an orthogonal selection call.
struct Selection {
    lists: Vec<Vec<u64>>,
    bshape: Vec<u64>,
    /// The buffer's bytes (its shape's items times the item size).
    need: usize,
}

impl Selection {
    /// Read and check the arguments of an array of shape `shape` and
    /// items of `itemsize` bytes with a buffer of `size` bytes at `buffer`:
    /// the buffer shape and sizes first, the index lists (bounded by them
    /// and the buffer) after.
    ///
    /// # Safety
    /// `selection_size` and `buffershape` point to `shape.len()` values,
    /// `selection` to as many pointers, each to its `selection_size`
    /// values (C's contract); each may be NULL, which is refused where
    /// values are needed.
    unsafe fn read(
        shape: &[u64],
        itemsize: usize,
        selection: *const *const i64,
        selection_size: *const i64,
        buffershape: *const i64,
        buffer: *const c_void,
        size: usize,
    ) -> Result<Selection, c_int> {
        let n = shape.len();
        if n > 0 && (selection.is_null() || selection_size.is_null() || buffershape.is_null()) {
            return Err(err::NULL_POINTER);
        }
        // SAFETY: each holds n values (the caller's contract).
        let (sizes, bshape) = unsafe { (shape_arg(selection_size, n), shape_arg(buffershape, n)) };
        // Negative sizes or buffer shapes.
        let (Some(sizes), Some(bshape)) = (sizes, bshape) else {
            return Err(err::INVALID_PARAM);
        };
        if sizes.iter().zip(&bshape).any(|(s, b)| s > b) {
            return Err(err::INVALID_PARAM);
        }
        let need = ndarray::box_bytes(&bshape, itemsize)
            .and_then(|b| usize::try_from(b).ok())
            .filter(|&b| b <= size)
            .ok_or(err::INVALID_PARAM)?;
        if need > 0 && buffer.is_null() {
            return Err(err::NULL_POINTER);
        }
        let mut lists = Vec::with_capacity(n);
        for d in 0..n {
            // SAFETY: selection (non-null) holds n pointers.
            let p = unsafe { selection.add(d).read_unaligned() };
            let k = sizes[d] as usize;
            if k > 0 && p.is_null() {
                return Err(err::NULL_POINTER);
            }
            // SAFETY: p holds selection_size[d] values.
            lists.push(unsafe { indices(p, k, shape[d]) }?);
        }
        Ok(Selection {
            lists,
            bshape,
            need,
        })
    }

    fn refs(&self) -> Vec<&[u64]> {
        self.lists.iter().map(|l| l.as_slice()).collect()
    }
}

/// `b2nd_get_orthogonal_selection`: the items of an orthogonal selection
/// (`selection[d]`, `selection_size[d]` indices along dimension `d`,
/// repeated and in any order) into `buffer`, a C-order array of shape
/// `buffershape` (each dimension at least its selection's size): the item
/// at place `(i0, i1, ..)` is the array's `(selection[0][i0],
/// selection[1][i1], ..)`, the rest of the buffer left as is. Unlike
/// C-Blosc2, an index at its dimension's length is
/// `BLOSC2_ERROR_INVALID_INDEX`, and a buffer larger than the selection is
/// accepted (its shape's bytes must fit in `buffersize`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn b2nd_get_orthogonal_selection(
    array: *const b2nd_array_t,
    selection: *mut *mut i64,
    selection_size: *mut i64,
    buffer: *mut c_void,
    buffershape: *mut i64,
    buffersize: i64,
) -> c_int {
    // SAFETY: the caller's contract; the buffer is written.
    unsafe {
        orthogonal(
            array,
            false,
            selection,
            selection_size,
            buffer,
            buffershape,
            buffersize,
        )
    }
}

/// `b2nd_set_orthogonal_selection`: write an orthogonal selection (laid out
/// as `b2nd_get_orthogonal_selection` reads one) from `buffer`; where an
/// index repeats, the item at the later place of the buffer (in C order)
/// is written. The whole write is one change of the array under one
/// exclusive frame lock; a refused or failed call leaves the array as it
/// was. Unlike C-Blosc2, as `b2nd_get_orthogonal_selection`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn b2nd_set_orthogonal_selection(
    array: *mut b2nd_array_t,
    selection: *mut *mut i64,
    selection_size: *mut i64,
    buffer: *const c_void,
    buffershape: *mut i64,
    buffersize: i64,
) -> c_int {
    // SAFETY: the caller's contract; the buffer is only read.
    unsafe {
        orthogonal(
            array,
            true,
            selection,
            selection_size,
            buffer as *mut c_void,
            buffershape,
            buffersize,
        )
    }
}

/// The two orthogonal calls: read the selection into `buffer` or, with
/// `write`, write it from there (under an exclusive frame lock).
///
/// # Safety
/// As the calls: `array` null or live; the selection pointers hold ndim
/// values each; `buffer` holds `buffersize` bytes, writable unless
/// `write`.
unsafe fn orthogonal(
    array: *const b2nd_array_t,
    write: bool,
    selection: *mut *mut i64,
    selection_size: *mut i64,
    buffer: *mut c_void,
    buffershape: *mut i64,
    buffersize: i64,
) -> c_int {
    guard(err::FAILURE, || {
        // SAFETY: array is null or a live array from this library.
        let Some(a) = (unsafe { self::array(array) }) else {
            return err::NULL_POINTER;
        };
        let Ok(size) = usize::try_from(buffersize) else {
            return err::INVALID_PARAM;
        };
        let mut refused = None;
        let rc = with_array(a, write, |sc, meta| {
            // SAFETY: the pointers hold ndim values each (C's contract).
            let sel = unsafe {
                Selection::read(
                    &meta.shape,
                    sc.typesize(),
                    selection as *const *const i64,
                    selection_size,
                    buffershape,
                    buffer,
                    size,
                )
            }
            .map_err(|rc| refuse(&mut refused, rc))?;
            if write {
                // SAFETY: buffer holds buffersize readable bytes (C's
                // contract; an empty slice when it is NULL, refused above
                // if it must hold items).
                let src = unsafe { slice_in(buffer, size) };
                ndarray::set_orthogonal(sc, meta, &sel.refs(), &src[..sel.need], &sel.bshape)
            } else {
                // SAFETY: buffer holds buffersize writable bytes (as above).
                let dst = unsafe { slice_out(buffer, size) };
                ndarray::get_orthogonal(sc, meta, &sel.refs(), &mut dst[..sel.need], &sel.bshape)
            }
        });
        refused.unwrap_or(rc)
    })
}
