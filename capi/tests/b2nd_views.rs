//! `b2nd_squeeze`, `b2nd_squeeze_index`, `b2nd_expand_dims`,
//! `b2nd_concatenate` and `b2nd_copy_buffer2` from Rust through the
//! library's rlib: their data, their error codes (as C-Blosc2 gives them,
//! and where ours checks more), and what a failure leaves.

mod common;
use common::new_ctx;

use std::ffi::CString;

use blosc2::b2nd::b2nd_copy;
use blosc2::b2nd::{
    b2nd_array_t, b2nd_concatenate, b2nd_copy_buffer2, b2nd_create_ctx, b2nd_expand_dims,
    b2nd_free, b2nd_free_ctx, b2nd_from_cbuffer, b2nd_from_cframe, b2nd_resize,
    b2nd_set_slice_cbuffer, b2nd_squeeze, b2nd_squeeze_index, b2nd_to_cbuffer, b2nd_to_cframe,
};
use blosc2::schunk::{
    blosc2_metalayer, blosc2_schunk_get_chunk, blosc2_storage, blosc2_vlmeta_add, blosc2_vlmeta_get,
};
use blosc2::v2::{CPARAMS_DEFAULTS, err};

/// An in-memory `|u1` array of these shapes holding `data`.
fn array(shape: &[i64], chunks: &[i32], blocks: &[i32], data: &[u8]) -> *mut b2nd_array_t {
    let ctx = new_ctx(shape, chunks, blocks);
    let mut a: *mut b2nd_array_t = std::ptr::null_mut();
    // SAFETY: a live context, data of its bytes, a writable out pointer.
    let r = unsafe { b2nd_from_cbuffer(ctx, &mut a, data.as_ptr().cast(), data.len() as i64) };
    assert_eq!(r, 0, "b2nd_from_cbuffer");
    // SAFETY: the context, freed once.
    unsafe { b2nd_free_ctx(ctx) };
    a
}

/// The array's shape and items, as C reads them.
fn contents(a: *mut b2nd_array_t) -> (Vec<i64>, Vec<u8>) {
    // SAFETY: a live array of this library.
    let c = unsafe { &*a };
    let shape = c.shape[..c.ndim as usize].to_vec();
    let mut out = vec![0u8; c.nitems as usize];
    // SAFETY: a live array, a buffer of its bytes.
    let r = unsafe { b2nd_to_cbuffer(a, out.as_mut_ptr().cast(), out.len() as i64) };
    assert_eq!(r, 0, "b2nd_to_cbuffer");
    (shape, out)
}

fn free(a: *mut b2nd_array_t) {
    // SAFETY: a live array of this library, freed once.
    assert_eq!(unsafe { b2nd_free(a) }, 0);
}

#[test]
fn views_hold_the_items_under_their_new_shape() {
    let data: Vec<u8> = (0..60).collect();
    let a = array(&[1, 6, 1, 10], &[1, 4, 1, 3], &[1, 2, 1, 2], &data);
    let mut v: *mut b2nd_array_t = std::ptr::null_mut();
    // SAFETY: a live array, a writable out pointer.
    assert_eq!(unsafe { b2nd_squeeze(a, &mut v) }, 0);
    assert_eq!(contents(v), (vec![6, 10], data.clone()));
    // SAFETY: as above; index holds ndim flags.
    let mut w: *mut b2nd_array_t = std::ptr::null_mut();
    let index = [false, false, true, false];
    assert_eq!(unsafe { b2nd_squeeze_index(a, &mut w, index.as_ptr()) }, 0);
    assert_eq!(contents(w), (vec![1, 6, 10], data.clone()));
    let axis = [false, true, false, true, false];
    let mut e: *mut b2nd_array_t = std::ptr::null_mut();
    // SAFETY: a live view, axis of final_dims flags.
    assert_eq!(unsafe { b2nd_expand_dims(w, &mut e, axis.as_ptr(), 5) }, 0);
    assert_eq!(contents(e), (vec![1, 1, 6, 1, 10], data.clone()));
    // Freed in any order, the original first.
    free(a);
    assert_eq!(contents(v).1, data);
    free(w);
    free(e);
    free(v);
}

#[test]
fn views_refuse_what_c_blosc2_refuses() {
    let a = array(&[2, 1, 3], &[2, 1, 3], &[1, 1, 3], &[7; 6]);
    let mut v: *mut b2nd_array_t = std::ptr::null_mut();
    let index = [true, true, false];
    // SAFETY: live array, flags of ndim, writable out pointer (or NULLs).
    unsafe {
        assert_eq!(
            b2nd_squeeze_index(a, &mut v, index.as_ptr()),
            err::INVALID_INDEX
        );
        assert_eq!(
            b2nd_squeeze_index(a, &mut v, std::ptr::null()),
            err::NULL_POINTER
        );
        assert_eq!(
            b2nd_squeeze(std::ptr::null_mut(), &mut v),
            err::NULL_POINTER
        );
        assert_eq!(b2nd_squeeze(a, std::ptr::null_mut()), err::NULL_POINTER);
        // More than 16 dimensions; unmarked places that are not 3.
        let many = [true; 17];
        assert_eq!(
            b2nd_expand_dims(a, &mut v, many.as_ptr(), 17),
            err::INVALID_PARAM
        );
        let two = [false, false, true];
        assert_eq!(
            b2nd_expand_dims(a, &mut v, two.as_ptr(), 3),
            err::INVALID_PARAM
        );
    }
    assert!(v.is_null());
    free(a);
    // An array with another metalayer (C-Blosc2 refuses it too).
    let (name, mut content) = (CString::new("other").unwrap(), *b"xy");
    let meta = blosc2_metalayer {
        name: name.as_ptr() as *mut _,
        content: content.as_mut_ptr(),
        content_len: 2,
    };
    let dtype = CString::new("|u1").unwrap();
    let (shape, chunks, blocks) = ([2i64, 1], [2i32, 1], [1i32, 1]);
    // SAFETY: shapes of ndim values, one metalayer, a NUL-terminated dtype.
    let ctx = unsafe {
        b2nd_create_ctx(
            std::ptr::null(),
            2,
            shape.as_ptr(),
            chunks.as_ptr(),
            blocks.as_ptr(),
            dtype.as_ptr(),
            0,
            &meta,
            1,
        )
    };
    assert!(!ctx.is_null());
    let mut a: *mut b2nd_array_t = std::ptr::null_mut();
    // SAFETY: a live context, 2 bytes of data, a writable out pointer.
    assert_eq!(
        unsafe { b2nd_from_cbuffer(ctx, &mut a, b"ab".as_ptr().cast(), 2) },
        0
    );
    // SAFETY: as above.
    assert_eq!(unsafe { b2nd_squeeze(a, &mut v) }, err::INVALID_PARAM);
    assert!(v.is_null());
    // SAFETY: the context, freed once.
    unsafe { b2nd_free_ctx(ctx) };
    free(a);
}

#[test]
fn concatenations_copy_or_grow_the_first_array() {
    let (da, db): (Vec<u8>, Vec<u8>) = ((0..12).collect(), (100..106).collect());
    let a = array(&[4, 3], &[2, 3], &[1, 3], &da);
    let b = array(&[2, 3], &[2, 3], &[1, 3], &db);
    let mut want = da.clone();
    want.extend_from_slice(&db);
    // A copy: the first array unchanged.
    let ctx = new_ctx(&[4, 3], &[2, 3], &[1, 3]);
    let mut c: *mut b2nd_array_t = std::ptr::null_mut();
    // SAFETY: live context and arrays, a writable out pointer.
    assert_eq!(unsafe { b2nd_concatenate(ctx, a, b, 0, true, &mut c) }, 0);
    assert_ne!(c, a);
    assert_eq!(contents(c), (vec![6, 3], want.clone()));
    assert_eq!(contents(a), (vec![4, 3], da.clone()));
    free(c);
    // In place: the first array is the result.
    let mut d: *mut b2nd_array_t = std::ptr::null_mut();
    // SAFETY: as above.
    assert_eq!(unsafe { b2nd_concatenate(ctx, a, b, 0, false, &mut d) }, 0);
    assert_eq!(d, a);
    assert_eq!(contents(a), (vec![6, 3], want.clone()));
    // The array after itself, in place.
    let mut e: *mut b2nd_array_t = std::ptr::null_mut();
    // SAFETY: as above, src1 and src2 the same live array.
    assert_eq!(unsafe { b2nd_concatenate(ctx, b, b, 1, false, &mut e) }, 0);
    let (shape, items) = contents(b);
    assert_eq!(shape, [2, 6]);
    assert_eq!(
        items,
        [100, 101, 102, 100, 101, 102, 103, 104, 105, 103, 104, 105]
    );
    // Refused: an axis past the dimensions, other lengths, NULLs; the
    // first array as it was.
    let mut f: *mut b2nd_array_t = std::ptr::null_mut();
    // SAFETY: as above (or NULLs).
    unsafe {
        assert_eq!(
            b2nd_concatenate(ctx, a, b, 2, false, &mut f),
            err::INVALID_PARAM
        );
        assert_eq!(
            b2nd_concatenate(ctx, a, b, -1, true, &mut f),
            err::INVALID_PARAM
        );
        assert_eq!(
            b2nd_concatenate(ctx, a, b, 0, false, &mut f),
            err::INVALID_PARAM
        );
        assert_eq!(
            b2nd_concatenate(ctx, a, b, 0, true, &mut f),
            err::INVALID_PARAM
        );
        assert_eq!(
            b2nd_concatenate(ctx, a, std::ptr::null(), 0, false, &mut f),
            err::NULL_POINTER
        );
        assert_eq!(
            b2nd_concatenate(ctx, a, b, 0, false, std::ptr::null_mut()),
            err::NULL_POINTER
        );
    }
    assert!(f.is_null());
    assert_eq!(contents(a), (vec![6, 3], want));
    // SAFETY: the context, freed once.
    unsafe { b2nd_free_ctx(ctx) };
    free(a);
    free(b);
}

#[test]
fn copy_buffer2_copies_a_box_and_checks_every_bound() {
    let src: Vec<u8> = (0..24).collect(); // 2 x 3 x 4, items of 1 byte
    let mut dst = [0u8; 8]; // 2 x 2 x 2
    let (ss, ds) = ([2i64, 3, 4], [2i64, 2, 2]);
    let call = |lo: [i64; 3], hi: [i64; 3], at: [i64; 3], dst: &mut [u8; 8], is: i32| {
        // SAFETY: src holds 24 bytes, dst 8; every shape and coordinate 3
        // values.
        unsafe {
            b2nd_copy_buffer2(
                3,
                is,
                src.as_ptr().cast(),
                ss.as_ptr(),
                lo.as_ptr(),
                hi.as_ptr(),
                dst.as_mut_ptr().cast(),
                ds.as_ptr(),
                at.as_ptr(),
            )
        }
    };
    assert_eq!(call([0, 1, 2], [2, 3, 3], [0, 0, 1], &mut dst, 1), 0);
    assert_eq!(dst, [0, 6, 0, 10, 0, 18, 0, 22]);
    // Past the source, past the destination, start after stop, item
    // size 0 and 2 (a source shorter than its shape's bytes is the caller's
    // contract: here 2-byte items make the shapes 48 and 16 bytes, which
    // the check refuses only through the box, not the buffer).
    assert_eq!(
        call([0, 0, 0], [2, 4, 1], [0, 0, 0], &mut dst, 1),
        err::INVALID_PARAM
    );
    assert_eq!(
        call([0, 0, 0], [1, 1, 1], [2, 0, 0], &mut dst, 1),
        err::INVALID_PARAM
    );
    assert_eq!(
        call([1, 0, 0], [0, 1, 1], [0, 0, 0], &mut dst, 1),
        err::INVALID_PARAM
    );
    assert_eq!(
        call([0, 0, 0], [1, 1, 1], [0, 0, 0], &mut dst, 0),
        err::INVALID_PARAM
    );
    assert_eq!(
        call([0, 0, 0], [1, 1, 1], [0, 0, -1], &mut dst, 1),
        err::INVALID_PARAM
    );
    // SAFETY: NULL buffers are refused before anything is read.
    let r = unsafe {
        b2nd_copy_buffer2(
            3,
            1,
            std::ptr::null(),
            ss.as_ptr(),
            ss.as_ptr(),
            ss.as_ptr(),
            dst.as_mut_ptr().cast(),
            ds.as_ptr(),
            ds.as_ptr(),
        )
    };
    assert_eq!(r, err::NULL_POINTER);
}

/// Chunk `i` of the array's super-chunk, as `blosc2_schunk_get_chunk`
/// gives it.
fn chunk_of(a: *mut b2nd_array_t, i: i64) -> Vec<u8> {
    let (mut p, mut needs_free) = (std::ptr::null_mut::<u8>(), false);
    // SAFETY: a live array's super-chunk, writable out pointers.
    let n = unsafe { blosc2_schunk_get_chunk((*a).sc, i, &mut p, &mut needs_free) };
    assert!(n > 0, "get_chunk {i}: {n}");
    // SAFETY: n bytes at p, freed below when needs_free.
    let v = unsafe { std::slice::from_raw_parts(p, n as usize) }.to_vec();
    if needs_free {
        // SAFETY: malloc'ed by the library.
        unsafe { libc::free(p.cast()) };
    }
    v
}

/// `b2nd_copy` with the source's chunk and block shapes copies its
/// compressed chunks as they are (as C-Blosc2 copies the super-chunk then),
/// with its vlmetalayers, whatever codec the context names; with other
/// shapes the items are compressed again.
#[test]
fn a_copy_with_the_same_shapes_keeps_the_compressed_chunks() {
    let data: Vec<u8> = (0..120u32).map(|i| (i * 7 % 251) as u8).collect();
    // The source in LZ4; the copies' contexts name the default, BLOSCLZ:
    // chunks compressed again would be other bytes.
    let mut cp = CPARAMS_DEFAULTS;
    cp.compcode = 1;
    cp.typesize = 1;
    let storage = blosc2_storage {
        contiguous: false,
        urlpath: std::ptr::null_mut(),
        cparams: &mut cp,
        dparams: std::ptr::null_mut(),
        io: std::ptr::null_mut(),
    };
    let dtype = CString::new("|u1").unwrap();
    let (shape, chunks, blocks) = ([12i64, 10], [5i32, 4], [2i32, 3]);
    // SAFETY: shapes of ndim values, a storage and dtype live for the call.
    let src_ctx = unsafe {
        b2nd_create_ctx(
            &storage,
            2,
            shape.as_ptr(),
            chunks.as_ptr(),
            blocks.as_ptr(),
            dtype.as_ptr(),
            0,
            std::ptr::null(),
            0,
        )
    };
    let mut a: *mut b2nd_array_t = std::ptr::null_mut();
    // SAFETY: a live context, data of its bytes, a writable out pointer.
    let r = unsafe { b2nd_from_cbuffer(src_ctx, &mut a, data.as_ptr().cast(), 120) };
    assert_eq!(r, 0);
    // SAFETY: the context, freed once.
    unsafe { b2nd_free_ctx(src_ctx) };
    let (name, mut v) = (CString::new("note").unwrap(), *b"kept");
    // SAFETY: the live super-chunk, a name, 4 bytes.
    let r = unsafe {
        blosc2_vlmeta_add(
            (*a).sc,
            name.as_ptr(),
            v.as_mut_ptr(),
            4,
            std::ptr::null_mut(),
        )
    };
    assert!(r >= 0, "vlmeta_add {r}");
    for (chunks, blocks, same) in [([5, 4], [2, 3], true), ([6, 4], [2, 3], false)] {
        let ctx = new_ctx(&[12, 10], &chunks, &blocks);
        let mut c: *mut b2nd_array_t = std::ptr::null_mut();
        // SAFETY: a live context and array, a writable out pointer.
        assert_eq!(unsafe { b2nd_copy(ctx, a, &mut c) }, 0);
        assert_eq!(contents(c), (vec![12, 10], data.clone()));
        // SAFETY: live arrays.
        let n = unsafe { (*(*a).sc).nchunks };
        if same {
            assert_eq!(unsafe { (*(*c).sc).nchunks }, n);
            for i in 0..n {
                assert_eq!(chunk_of(c, i), chunk_of(a, i), "chunk {i}");
            }
        } else {
            assert_ne!(chunk_of(c, 0), chunk_of(a, 0), "compressed again");
        }
        let (mut p, mut len) = (std::ptr::null_mut::<u8>(), 0i32);
        // SAFETY: the copy's live super-chunk, writable out pointers.
        let r = unsafe { blosc2_vlmeta_get((*c).sc, name.as_ptr(), &mut p, &mut len) };
        assert!(r >= 0, "vlmeta_get of the copy ({chunks:?}): {r}");
        // SAFETY: len bytes at p, malloc'ed by the library.
        assert_eq!(
            unsafe { std::slice::from_raw_parts(p, len as usize) },
            b"kept"
        );
        // SAFETY: as above.
        unsafe { libc::free(p.cast()) };
        free(c);
        // SAFETY: the context, freed once.
        unsafe { b2nd_free_ctx(ctx) };
    }
    free(a);
}

/// A view shares the original's chunks (as C-Blosc2's): a write through
/// either shows in the other, both may be freed in any order; it cannot
/// change shape; a frame written of it holds its own shape; once the
/// original is resized the view refuses calls. A squeeze that drops a
/// dimension of length 1 with longer chunks makes an independent copy.
#[test]
fn views_share_the_chunks_of_the_original() {
    let data: Vec<u8> = (0..60).collect();
    let a = array(&[6, 10], &[4, 3], &[2, 2], &data);
    let axis = [true, false, false];
    let mut v: *mut b2nd_array_t = std::ptr::null_mut();
    // SAFETY: a live array, 3 flags, a writable out pointer.
    assert_eq!(unsafe { b2nd_expand_dims(a, &mut v, axis.as_ptr(), 3) }, 0);
    // SAFETY: live arrays.
    assert_eq!(unsafe { (*v).sc }, unsafe { (*a).sc }, "one super-chunk");
    let set = |arr: *mut b2nd_array_t, lo: &[i64], hi: &[i64], val: u8| {
        let shape: Vec<i64> = lo.iter().zip(hi).map(|(l, h)| h - l).collect();
        let n: i64 = shape.iter().product();
        let buf = vec![val; n as usize];
        // SAFETY: a live array; the box and the buffer's shape of ndim values.
        unsafe {
            b2nd_set_slice_cbuffer(
                buf.as_ptr().cast(),
                shape.as_ptr(),
                n,
                lo.as_ptr(),
                hi.as_ptr(),
                arr,
            )
        }
    };
    assert_eq!(set(a, &[0, 0], &[1, 2], 200), 0);
    let mut want = data.clone();
    want[..2].fill(200);
    assert_eq!(contents(v), (vec![1, 6, 10], want.clone()));
    assert_eq!(set(v, &[0, 5, 9], &[1, 6, 10], 201), 0);
    want[59] = 201;
    assert_eq!(contents(a), (vec![6, 10], want.clone()));
    // Its shape is its own: no resize, no concatenation into it.
    let ns = [1i64, 7, 10];
    // SAFETY: a live view, a shape of ndim values.
    assert_eq!(
        unsafe { b2nd_resize(v, ns.as_ptr(), std::ptr::null()) },
        err::INVALID_PARAM
    );
    let ctx = new_ctx(&[1, 6, 10], &[1, 4, 3], &[1, 2, 2]);
    let mut out: *mut b2nd_array_t = std::ptr::null_mut();
    // SAFETY: live context and arrays, a writable out pointer.
    assert_eq!(
        unsafe { b2nd_concatenate(ctx, v, v, 1, false, &mut out) },
        err::INVALID_PARAM
    );
    // Into a copy it works.
    // SAFETY: as above.
    assert_eq!(unsafe { b2nd_concatenate(ctx, v, v, 1, true, &mut out) }, 0);
    let mut twice = Vec::new();
    for _ in 0..2 {
        twice.extend_from_slice(&want);
    }
    assert_eq!(contents(out), (vec![1, 12, 10], twice));
    free(out);
    // SAFETY: the context, freed once.
    unsafe { b2nd_free_ctx(ctx) };
    // A frame of the view holds the view's shape.
    let (mut frame, mut len, mut needs_free) = (std::ptr::null_mut::<u8>(), 0i64, false);
    // SAFETY: a live view, writable out pointers.
    assert_eq!(
        unsafe { b2nd_to_cframe(v, &mut frame, &mut len, &mut needs_free) },
        0
    );
    // Made for the call and freed after it: a copy the caller frees.
    assert!(needs_free, "a view's frame is a copy");
    let mut back: *mut b2nd_array_t = std::ptr::null_mut();
    // SAFETY: the frame of len bytes, copied.
    assert_eq!(unsafe { b2nd_from_cframe(frame, len, true, &mut back) }, 0);
    assert_eq!(contents(back), (vec![1, 6, 10], want.clone()));
    free(back);
    if needs_free {
        // SAFETY: malloc'ed by the library.
        unsafe { libc::free(frame.cast()) };
    }
    // The original resized: the view refuses calls.
    let grown = [7i64, 10];
    // SAFETY: a live array, a shape of ndim values.
    assert_eq!(
        unsafe { b2nd_resize(a, grown.as_ptr(), std::ptr::null()) },
        0
    );
    let mut buf = vec![0u8; 60];
    // SAFETY: a live view and a buffer of 60 bytes.
    assert_eq!(
        unsafe { b2nd_to_cbuffer(v, buf.as_mut_ptr().cast(), 60) },
        err::INVALID_PARAM
    );
    free(a);
    free(v);
    // A squeeze of a dimension of length 1 whose chunks are longer: a copy.
    let b = array(&[1, 8], &[2, 4], &[2, 2], &data[..8]);
    let mut s: *mut b2nd_array_t = std::ptr::null_mut();
    // SAFETY: a live array, a writable out pointer.
    assert_eq!(unsafe { b2nd_squeeze(b, &mut s) }, 0);
    // SAFETY: live arrays.
    assert_ne!(unsafe { (*s).sc }, unsafe { (*b).sc });
    assert_eq!(set(b, &[0, 0], &[1, 1], 99), 0);
    assert_eq!(contents(s), (vec![8], data[..8].to_vec()));
    free(b);
    free(s);
}
