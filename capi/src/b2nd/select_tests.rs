//! The selection calls of `select.rs` (`b2nd_get_sparse_cbuffer`,
//! `b2nd_get_orthogonal_selection`, `b2nd_set_orthogonal_selection`): the
//! items they read and write against the array's C-order items, and the
//! error codes of what C-Blosc2 accepts (an index at a dimension's length,
//! a buffer larger than the selection) or dereferences (NULLs).

use super::select::*;
use super::*;
use crate::v2::err;

/// A context and an array of `shape` (in chunks and blocks) of `<i4`
/// items: `0, 1, 2, ..` in C order from `b2nd_from_cbuffer`, or zeros
/// from `b2nd_zeros`.
fn make(
    shape: &[i64],
    chunks: &[i32],
    blocks: &[i32],
    zeros: bool,
) -> (*mut b2nd_context_t, *mut b2nd_array_t) {
    let dt = CString::new("<i4").unwrap();
    // SAFETY: ndim values in each shape; a NUL-terminated dtype.
    let ctx = unsafe {
        b2nd_create_ctx(
            std::ptr::null(),
            shape.len() as i8,
            shape.as_ptr(),
            chunks.as_ptr(),
            blocks.as_ptr(),
            dt.as_ptr(),
            0,
            std::ptr::null(),
            0,
        )
    };
    assert!(!ctx.is_null());
    let mut a: *mut b2nd_array_t = std::ptr::null_mut();
    let n: i64 = shape.iter().product();
    let items: Vec<i32> = (0..n as i32).collect();
    // SAFETY: a live context, a writable out pointer, a buffer of its size.
    let r = unsafe {
        if zeros {
            b2nd_zeros(ctx, &mut a)
        } else {
            b2nd_from_cbuffer(ctx, &mut a, items.as_ptr().cast(), n * 4)
        }
    };
    assert_eq!(r, 0);
    (ctx, a)
}

fn free(ctx: *mut b2nd_context_t, a: *mut b2nd_array_t) {
    // SAFETY: both from `make`, freed once.
    unsafe {
        b2nd_free(a);
        b2nd_free_ctx(ctx);
    }
}

/// Every item of the array, through `b2nd_to_cbuffer`.
fn items(a: *mut b2nd_array_t, n: usize) -> Vec<i32> {
    let mut out = vec![0i32; n];
    // SAFETY: a live array; a buffer of n items.
    let r = unsafe { b2nd_to_cbuffer(a, out.as_mut_ptr().cast(), n as i64 * 4) };
    assert_eq!(r, 0);
    out
}

/// `b2nd_get_sparse_cbuffer` of `coords` into a buffer of `room` items
/// (filled with -1 first) of which `size` bytes are given: its code and
/// the buffer.
fn sparse(a: *mut b2nd_array_t, coords: &[i64], room: usize, size: i64) -> (c_int, Vec<i32>) {
    let mut out = vec![-1i32; room];
    // SAFETY: coords.len() values; `size` at most the buffer's bytes
    // where a call may write them (the tests of larger sizes fail first).
    let r = unsafe {
        b2nd_get_sparse_cbuffer(
            a,
            coords.len() as i64,
            coords.as_ptr(),
            out.as_mut_ptr().cast(),
            size,
        )
    };
    (r, out)
}

#[test]
fn sparse_reads_items_by_flat_coordinates() {
    // C-Blosc2's test_b2nd_get_sparse, 2-D: edge chunks and blocks padded.
    let (ctx, a) = make(&[6, 7], &[4, 5], &[3, 4], false);
    let coords = [0i64, 6, 7, 13, 20, 41, 20, 5];
    let (r, out) = sparse(a, &coords, 8, 32);
    assert_eq!(r, 0);
    assert_eq!(out, [0, 6, 7, 13, 20, 41, 20, 5]);
    // A larger buffer: the rest left as is.
    let (r, out) = sparse(a, &coords[..2], 4, 16);
    assert_eq!((r, out), (0, vec![0, 6, -1, -1]));
    // No coordinates: NULL coordinates and buffer are fine.
    // SAFETY: a live array; nothing is read or written.
    let r = unsafe { b2nd_get_sparse_cbuffer(a, 0, std::ptr::null(), std::ptr::null_mut(), 0) };
    assert_eq!(r, 0);
    free(ctx, a);
    // Zeros by their chunks' index entries.
    let (ctx, a) = make(&[6, 7], &[4, 5], &[3, 4], true);
    let (r, out) = sparse(a, &[41, 0, 20], 3, 12);
    assert_eq!((r, out), (0, vec![0, 0, 0]));
    free(ctx, a);
}

#[test]
fn sparse_refuses_bad_arguments_and_writes_nothing() {
    let (ctx, a) = make(&[6, 7], &[4, 5], &[3, 4], false);
    let nothing = vec![-1i32; 2];
    // An index at the item count (C reads padding or past it), negative.
    for bad in [42i64, -1, i64::MIN, i64::MAX] {
        let (r, out) = sparse(a, &[3, bad], 2, 8);
        assert_eq!((r, &out), (err::INVALID_INDEX, &nothing), "{bad}");
    }
    // A buffer short by a byte, a negative size or count.
    assert_eq!(
        sparse(a, &[3, 4], 2, 7),
        (err::INVALID_PARAM, nothing.clone())
    );
    assert_eq!(sparse(a, &[3, 4], 2, -1).0, err::INVALID_PARAM);
    let mut out = [0i32; 2];
    let coords = [1i64, 2];
    // SAFETY: the NULLs and the negative count are what is tested; the
    // other pointers hold what the calls may read or write.
    unsafe {
        let p = out.as_mut_ptr().cast();
        assert_eq!(
            b2nd_get_sparse_cbuffer(a, -1, coords.as_ptr(), p, 8),
            err::INVALID_PARAM
        );
        assert_eq!(
            b2nd_get_sparse_cbuffer(std::ptr::null(), 2, coords.as_ptr(), p, 8),
            err::NULL_POINTER
        );
        assert_eq!(
            b2nd_get_sparse_cbuffer(a, 2, std::ptr::null(), p, 8),
            err::NULL_POINTER
        );
        assert_eq!(
            b2nd_get_sparse_cbuffer(a, 2, coords.as_ptr(), std::ptr::null_mut(), 8),
            err::NULL_POINTER
        );
    }
    free(ctx, a);
}

/// `b2nd_get_orthogonal_selection` of `sel` into a buffer of `room` items
/// (filled with -1 first) of shape `bshape`, `size` bytes given.
fn get(
    a: *mut b2nd_array_t,
    sel: &[&[i64]],
    bshape: &[i64],
    room: usize,
    size: i64,
) -> (c_int, Vec<i32>) {
    let mut ptrs: Vec<*mut i64> = sel.iter().map(|s| s.as_ptr() as *mut i64).collect();
    let mut sizes: Vec<i64> = sel.iter().map(|s| s.len() as i64).collect();
    let mut bshape = bshape.to_vec();
    let mut out = vec![-1i32; room];
    // SAFETY: ndim lists of their sizes; `size` at most the buffer's bytes
    // where a call may write them (the tests of larger sizes fail first).
    let r = unsafe {
        b2nd_get_orthogonal_selection(
            a,
            ptrs.as_mut_ptr(),
            sizes.as_mut_ptr(),
            out.as_mut_ptr().cast(),
            bshape.as_mut_ptr(),
            size,
        )
    };
    (r, out)
}

/// `b2nd_set_orthogonal_selection` of `sel` from `src` of shape `bshape`,
/// `size` bytes given.
fn set(a: *mut b2nd_array_t, sel: &[&[i64]], bshape: &[i64], src: &[i32], size: i64) -> c_int {
    let mut ptrs: Vec<*mut i64> = sel.iter().map(|s| s.as_ptr() as *mut i64).collect();
    let mut sizes: Vec<i64> = sel.iter().map(|s| s.len() as i64).collect();
    let mut bshape = bshape.to_vec();
    // SAFETY: ndim lists of their sizes (the call never writes them);
    // `size` at most src's bytes where a call may read them.
    unsafe {
        b2nd_set_orthogonal_selection(
            a,
            ptrs.as_mut_ptr(),
            sizes.as_mut_ptr(),
            src.as_ptr().cast(),
            bshape.as_mut_ptr(),
            size,
        )
    }
}

#[test]
fn orthogonal_selections_read_and_write() {
    // Padded edge chunks and blocks; item (i, j) is i * 7 + j.
    let (ctx, a) = make(&[6, 7], &[4, 5], &[3, 4], false);
    let (rows, cols): (&[i64], &[i64]) = (&[5, 0, 5, 3], &[6, 1, 4]);
    let (r, out) = get(a, &[rows, cols], &[4, 3], 12, 48);
    assert_eq!(r, 0);
    let want: Vec<i32> = rows
        .iter()
        .flat_map(|&i| cols.iter().map(move |&j| (i * 7 + j) as i32))
        .collect();
    assert_eq!(out, want);
    // A wider buffer, and more bytes than its shape's (C refuses a buffer
    // larger than the selection): the selection at its origin.
    let (r, out) = get(a, &[rows, cols], &[4, 4], 20, 80);
    assert_eq!(r, 0);
    for (i, row) in out[..16].chunks(4).enumerate() {
        assert_eq!(&row[..3], &want[i * 3..i * 3 + 3]);
        assert_eq!(row[3], -1);
    }
    assert!(out[16..].iter().all(|&v| v == -1));
    // A write: row 5 twice, its later place's items written.
    let src: Vec<i32> = (100..112).collect();
    assert_eq!(set(a, &[rows, cols], &[4, 3], &src, 48), 0);
    let mut model: Vec<i32> = (0..42).collect();
    for (p, &i) in rows.iter().enumerate() {
        for (q, &j) in cols.iter().enumerate() {
            model[(i * 7 + j) as usize] = src[p * 3 + q];
        }
    }
    assert_eq!(model[5 * 7 + 6], 106);
    assert_eq!(items(a, 42), model);
    // An empty selection in a dimension: nothing read or written (its
    // list may then be NULL).
    let (r, out) = get(a, &[&[], cols], &[0, 3], 1, 0);
    assert_eq!((r, out), (0, vec![-1]));
    let mut ptrs = [std::ptr::null_mut(), cols.as_ptr() as *mut i64];
    let (mut sizes, mut bshape) = ([0i64, 3], [0i64, 3]);
    // SAFETY: NULL only for the empty list; nothing is written.
    let r = unsafe {
        b2nd_get_orthogonal_selection(
            a,
            ptrs.as_mut_ptr(),
            sizes.as_mut_ptr(),
            std::ptr::null_mut(),
            bshape.as_mut_ptr(),
            0,
        )
    };
    assert_eq!(r, 0);
    assert_eq!(items(a, 42), model);
    free(ctx, a);
    // An array of zero chunks: read as zeros, written.
    let (ctx, a) = make(&[6, 7], &[4, 5], &[3, 4], true);
    let (r, out) = get(a, &[&[5, 1], &[6]], &[2, 1], 2, 8);
    assert_eq!((r, out), (0, vec![0, 0]));
    assert_eq!(set(a, &[&[5, 1], &[6]], &[2, 1], &[7, 8], 8), 0);
    let mut model = vec![0i32; 42];
    (model[41], model[13]) = (7, 8);
    assert_eq!(items(a, 42), model);
    free(ctx, a);
}

#[test]
fn orthogonal_selections_refuse_bad_arguments_and_change_nothing() {
    let (ctx, a) = make(&[6, 7], &[4, 5], &[3, 4], false);
    let before = items(a, 42);
    let src = vec![9i32; 64];
    let untouched = vec![-1i32; 4];
    type Case<'a> = (&'a [&'a [i64]], &'a [i64], i64, c_int);
    let cases: &[Case] = &[
        // An index at the dimension's length (C accepts it), negative.
        (&[&[6], &[0]], &[1, 1], 4, err::INVALID_INDEX),
        (&[&[0], &[1, 7]], &[1, 2], 8, err::INVALID_INDEX),
        (&[&[-1], &[0]], &[1, 1], 4, err::INVALID_INDEX),
        (&[&[0], &[i64::MIN]], &[1, 1], 4, err::INVALID_INDEX),
        // A buffer shape smaller than the selection, negative,
        // overflowing; a buffer smaller than its shape, a negative size.
        (&[&[0, 1], &[0]], &[1, 1], 4, err::INVALID_PARAM),
        (&[&[0], &[0]], &[1, -1], 4, err::INVALID_PARAM),
        (&[&[0], &[0]], &[1 << 40, 1 << 40], 4, err::INVALID_PARAM),
        (&[&[0], &[0]], &[1, 2], 7, err::INVALID_PARAM),
        (&[&[0], &[0]], &[1, 1], -4, err::INVALID_PARAM),
    ];
    for &(sel, bshape, size, code) in cases {
        let (r, out) = get(a, sel, bshape, 4, size);
        assert_eq!(
            (r, &out),
            (code, &untouched),
            "get {sel:?} {bshape:?} {size}"
        );
        let r = set(a, sel, bshape, &src, size);
        assert_eq!(r, code, "set {sel:?} {bshape:?} {size}");
        assert_eq!(items(a, 42), before, "set {sel:?} {bshape:?} {size}");
    }
    // NULLs: the array, the lists, the sizes, the buffer shape, a list of
    // indices, the buffer.
    let one = [2i64];
    let l = one.as_ptr() as *mut i64;
    let mut out = [0i32; 1];
    let o = out.as_mut_ptr().cast::<c_void>();
    let null = std::ptr::null_mut::<i64>();
    let (mut ptrs, mut nulls) = ([l, l], [l, null]);
    let (mut sizes, mut bshape) = ([1i64, 1], [1i64, 1]);
    let (p, s, b) = (ptrs.as_mut_ptr(), sizes.as_mut_ptr(), bshape.as_mut_ptr());
    let np = nulls.as_mut_ptr();
    let n2 = std::ptr::null_mut::<*mut i64>();
    type Ptrs = (*mut *mut i64, *mut i64, *mut i64, *mut c_void);
    let nulled: [Ptrs; 5] = [
        (n2, s, b, o),
        (p, null, b, o),
        (p, s, null, o),
        (np, s, b, o),
        (p, s, b, std::ptr::null_mut()),
    ];
    // SAFETY: the NULLs are what is tested; the other pointers hold what
    // the calls may read or write.
    unsafe {
        assert_eq!(
            b2nd_get_orthogonal_selection(std::ptr::null(), p, s, o, b, 4),
            err::NULL_POINTER
        );
        assert_eq!(
            b2nd_set_orthogonal_selection(std::ptr::null_mut(), p, s, o, b, 4),
            err::NULL_POINTER
        );
        for (k, &(p, s, b, o)) in nulled.iter().enumerate() {
            assert_eq!(
                b2nd_get_orthogonal_selection(a, p, s, o, b, 4),
                err::NULL_POINTER,
                "get {k}"
            );
            assert_eq!(
                b2nd_set_orthogonal_selection(a, p, s, o, b, 4),
                err::NULL_POINTER,
                "set {k}"
            );
        }
        // All given: item (2, 2).
        assert_eq!(b2nd_get_orthogonal_selection(a, p, s, o, b, 4), 0);
    }
    assert_eq!(out, [16]);
    assert_eq!(items(a, 42), before);
    free(ctx, a);
}
