//! Regression tests from an audit of the `b2nd.h` calls: arguments whose
//! products overflow get `BLOSC2_ERROR_INVALID_PARAM`, not a panic caught
//! at the boundary (`BLOSC2_ERROR_FAILURE`, in a build with overflow
//! checks) or a wrapped value. The calls are made from Rust through the
//! library's rlib, as `fuzz/fuzz_targets/capi_b2nd.rs` makes them.

mod common;
use common::new_ctx;

use blosc2::b2nd::{
    b2nd_array_t, b2nd_free, b2nd_free_ctx, b2nd_get_slice_cbuffer, b2nd_resize,
    b2nd_set_slice_cbuffer, b2nd_zeros,
};
use blosc2::schunk::blosc2_vlmeta_add;
use blosc2::v2::err;

/// `b2nd_zeros` of an in-memory `|u1` array of these shapes: its return
/// code and the array (null on failure).
fn zeros(shape: &[i64], chunks: &[i32], blocks: &[i32]) -> (i32, *mut b2nd_array_t) {
    let ctx = new_ctx(shape, chunks, blocks);
    let mut a: *mut b2nd_array_t = std::ptr::null_mut();
    // SAFETY: a live context and a writable out pointer.
    let r = unsafe { b2nd_zeros(ctx, &mut a) };
    // SAFETY: the context, freed once.
    unsafe { b2nd_free_ctx(ctx) };
    (r, a)
}

/// A buffer shape whose item count overflows `u64` (2^32 × 2^32) was
/// multiplied unchecked before the buffer size was compared.
#[test]
fn slice_buffer_shapes_that_overflow_are_invalid_params() {
    let (r, a) = zeros(&[4, 4], &[2, 2], &[1, 1]);
    assert_eq!(r, 0);
    let (start, stop) = ([0i64, 0], [0i64, 0]);
    let mut buf = [0u8; 16];
    for bshape in [[1i64 << 32, 1 << 32], [i64::MAX, 3]] {
        // SAFETY: a live array; start, stop and the buffer shape hold
        // ndim values; buf holds 16 bytes.
        let r = unsafe {
            b2nd_get_slice_cbuffer(
                a,
                start.as_ptr(),
                stop.as_ptr(),
                buf.as_mut_ptr().cast(),
                bshape.as_ptr(),
                buf.len() as i64,
            )
        };
        assert_eq!(r, err::INVALID_PARAM, "get {bshape:?}");
        // SAFETY: as above, buf read.
        let r = unsafe {
            b2nd_set_slice_cbuffer(
                buf.as_ptr().cast(),
                bshape.as_ptr(),
                buf.len() as i64,
                start.as_ptr(),
                stop.as_ptr(),
                a,
            )
        };
        assert_eq!(r, err::INVALID_PARAM, "set {bshape:?}");
    }
    // The whole array still reads through the same calls.
    let whole = [4i64, 4];
    // SAFETY: as above.
    let r = unsafe {
        b2nd_get_slice_cbuffer(
            a,
            start.as_ptr(),
            whole.as_ptr(),
            buf.as_mut_ptr().cast(),
            whole.as_ptr(),
            buf.len() as i64,
        )
    };
    assert_eq!((r, buf), (0, [0u8; 16]));
    // SAFETY: the array, freed once.
    unsafe { b2nd_free(a) };
}

/// An array whose padded chunks hold more than `u64::MAX` items (3 ×
/// 3,074,457,345,618,258,602 items, under `i64::MAX`, in 22,906,492,160
/// chunks of 2^30 padded items): `b2nd_zeros` multiplied the two unchecked
/// (a panic with overflow checks; else a wrapped item count, a super-chunk
/// of fewer chunks than the shape needs).
#[test]
fn zeros_whose_padded_items_overflow_is_an_invalid_param() {
    let (r, a) = zeros(
        &[3, 3_074_457_345_618_258_602],
        &[2, (1 << 28) + 1],
        &[1, 1 << 28],
    );
    assert_eq!(r, err::INVALID_PARAM);
    assert!(a.is_null());
}

/// The calls added in session 33, with arguments out of any range: each
/// is refused with an error code other than `BLOSC2_ERROR_FAILURE` (what a
/// panic caught at the boundary gives) and leaves no array; the array
/// they were given still reads.
#[test]
fn the_session_33_calls_refuse_arguments_out_of_range() {
    use blosc2::b2nd::{
        b2nd_copy, b2nd_delete, b2nd_deserialize_meta, b2nd_from_cbuffer, b2nd_from_cframe,
        b2nd_get_slice, b2nd_to_cbuffer,
    };
    let (r, a) = zeros(&[4, 4], &[2, 2], &[1, 1]);
    assert_eq!(r, 0);
    let refused = |r: i32, what: &str| {
        assert!(r < 0 && r != err::FAILURE, "{what}: {r}");
    };
    // Deletes past the axis, negative, or on an axis the array lacks.
    for (axis, start, len) in [
        (0i8, 2i64, 3i64),
        (0, -1, 1),
        (0, 0, -1),
        (2, 0, 1),
        (-1, 0, 1),
        (1, i64::MAX, i64::MAX),
    ] {
        // SAFETY: a live array.
        refused(
            unsafe { b2nd_delete(a, axis, start, len) },
            &format!("delete {axis} {start} {len}"),
        );
    }
    // Slices into a new array: stop before start, past the shape.
    let (cs, bs) = ([2i32, 2], [1i32, 1]);
    let ctx = new_ctx(&[2, 2], &cs, &bs);
    for (lo, hi) in [
        ([2i64, 0], [1i64, 4]),
        ([0, 0], [5, 4]),
        ([0, -3], [4, 4]),
        ([0, 0], [i64::MAX, 4]),
    ] {
        let mut out: *mut b2nd_array_t = std::ptr::null_mut();
        // SAFETY: a live context and source; start and stop hold 2 values.
        let r = unsafe { b2nd_get_slice(ctx, &mut out, a, lo.as_ptr(), hi.as_ptr()) };
        refused(r, &format!("get_slice {lo:?}..{hi:?}"));
        assert!(out.is_null());
    }
    // A copy with a context of another number of dimensions.
    let ctx1 = new_ctx(&[4], &cs[..1], &bs[..1]);
    let mut out: *mut b2nd_array_t = std::ptr::null_mut();
    // SAFETY: live contexts and source.
    refused(
        unsafe { b2nd_copy(ctx1, a, &mut out) },
        "copy into 1 dimension",
    );
    assert!(out.is_null());
    // Buffers too short or of negative size.
    let mut buf = [0u8; 16];
    for n in [-1i64, 0, 15] {
        // SAFETY: buf holds 16 bytes, the calls are told n.
        refused(
            unsafe { b2nd_to_cbuffer(a, buf.as_mut_ptr().cast(), n) },
            &format!("to_cbuffer {n}"),
        );
        let mut out: *mut b2nd_array_t = std::ptr::null_mut();
        let ctx4 = new_ctx(&[4, 4], &cs, &bs);
        // SAFETY: a live context, buf holds 16 bytes.
        refused(
            unsafe { b2nd_from_cbuffer(ctx4, &mut out, buf.as_ptr().cast(), n) },
            &format!("from_cbuffer {n}"),
        );
        assert!(out.is_null());
        // SAFETY: the context, freed once.
        unsafe { b2nd_free_ctx(ctx4) };
    }
    // Frames and metalayers of garbage, or of negative length.
    let mut junk = [0xA5u8; 64];
    for n in [-5i64, 0, 10, 64] {
        let mut out: *mut b2nd_array_t = std::ptr::null_mut();
        // SAFETY: junk holds 64 bytes; the call is told n.
        refused(
            unsafe { b2nd_from_cframe(junk.as_mut_ptr(), n, true, &mut out) },
            &format!("from_cframe {n}"),
        );
        assert!(out.is_null());
        let (mut nd, mut shape, mut cs2, mut bs2) = (0i8, [0i64; 16], [0i32; 16], [0i32; 16]);
        let (mut dt, mut fmt) = (std::ptr::null_mut(), 0i8);
        // SAFETY: junk holds 64 bytes, the outputs hold 16 values each.
        let r = unsafe {
            b2nd_deserialize_meta(
                junk.as_ptr(),
                n as i32,
                &mut nd,
                shape.as_mut_ptr(),
                cs2.as_mut_ptr(),
                bs2.as_mut_ptr(),
                &mut dt,
                &mut fmt,
            )
        };
        assert!(r < 0, "deserialize_meta {n}: {r}");
    }
    // The array still reads whole.
    // SAFETY: a live array, buf holds 16 bytes.
    assert_eq!(
        unsafe { b2nd_to_cbuffer(a, buf.as_mut_ptr().cast(), 16) },
        0
    );
    // SAFETY: each freed once.
    unsafe {
        b2nd_free_ctx(ctx);
        b2nd_free_ctx(ctx1);
        b2nd_free(a);
    }
}

/// The C view's metalayer structs stay put across calls that do not change
/// them (C code may hold `sc->metalayers[i]` across calls, as C-Blosc2's
/// stay put), and `change_tick` moves only when a (vl)metalayer changes, as
/// `blosc2.h` documents. Every call under the frame lock made them anew
/// and bumped the tick, a read too (and cleared 8192 vlmetalayer pointers).
#[test]
fn reads_leave_the_metalayer_structs_and_change_tick_alone() {
    let (r, a) = zeros(&[10, 10], &[5, 5], &[5, 5]);
    assert_eq!(r, 0);
    // SAFETY: a live array of ours; its super-chunk is live with it.
    let sc = unsafe { (*a).sc };
    let view = || {
        // SAFETY: sc is live; the C view's fields are plain values.
        unsafe { ((*sc).nmetalayers, (*sc).metalayers[0], (*sc).change_tick) }
    };
    let (n, m0, tick) = view();
    assert_eq!(n, 1);
    assert!(!m0.is_null());
    let mut out = vec![0u8; 4];
    let (lo, hi, bs) = ([0i64, 0], [2i64, 2], [2i64, 2]);
    for _ in 0..3 {
        // SAFETY: a live array; the box and a buffer of its 4 bytes.
        let r = unsafe {
            b2nd_get_slice_cbuffer(
                a,
                lo.as_ptr(),
                hi.as_ptr(),
                out.as_mut_ptr().cast(),
                bs.as_ptr(),
                4,
            )
        };
        assert_eq!(r, 0);
        assert_eq!(view(), (1, m0, tick), "a read changed the metalayer view");
    }
    // A vlmetalayer added: the tick moves, the metalayer stays put.
    let mut content = *b"x";
    // SAFETY: a live super-chunk; a NUL-terminated name, 1 byte of content.
    let r = unsafe {
        blosc2_vlmeta_add(
            sc,
            c"note".as_ptr(),
            content.as_mut_ptr(),
            1,
            std::ptr::null_mut(),
        )
    };
    assert!(r >= 0, "{r}");
    let (n, m, tick2) = view();
    assert_eq!((n, m), (1, m0));
    assert!(tick2 > tick);
    // SAFETY: as above.
    assert_eq!(unsafe { (*sc).nvlmetalayers }, 1);
    // A resize changes the b2nd metalayer: the tick moves again.
    let shape = [20i64, 10];
    // SAFETY: a live array; a shape of its 2 dimensions.
    let r = unsafe { b2nd_resize(a, shape.as_ptr(), std::ptr::null()) };
    assert_eq!(r, 0);
    assert!(view().2 > tick2);
    // SAFETY: the array, freed once.
    unsafe { b2nd_free(a) };
}

/// The bytes of `tests/data/findings/<name>`.
fn finding(name: &str) -> Vec<u8> {
    std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/data/findings")
            .join(name),
    )
    .unwrap()
}

/// `tests/data/findings/fuzz-capi_frame-3.bin` (CI's minute of `capi_frame`,
/// session 48): an array whose frame has a chunk that runs past it.
/// `b2nd_open_offset` opened it (through `blosc2_schunk_open_offset`,
/// which opens damaged frames as C-Blosc2 does since 5eeb551d) where
/// `b2nd_open` still opened strictly and failed; the two open the same
/// frames again, as `blosc2_schunk_open` does.
#[test]
fn b2nd_open_and_open_offset_take_the_same_damaged_frames() {
    use blosc2::b2nd::{b2nd_open, b2nd_open_offset};
    use blosc2::schunk::{blosc2_schunk_free, blosc2_schunk_open};
    let frame = finding("fuzz-capi_frame-3.bin");
    let dir = common::tempdir("b2nd-open-damaged");
    let (path, off_path) = (dir.join("a.b2nd"), dir.join("off.b2nd"));
    std::fs::write(&path, &frame).unwrap();
    std::fs::write(&off_path, [&[0xa5u8; 9][..], &frame].concat()).unwrap();
    let c = |p: &std::path::Path| std::ffi::CString::new(p.to_str().unwrap()).unwrap();
    let (url, off_url) = (c(&path), c(&off_path));
    let mut a: *mut b2nd_array_t = std::ptr::null_mut();
    let mut at: *mut b2nd_array_t = std::ptr::null_mut();
    // SAFETY: NUL-terminated paths, writable out pointers.
    let (r, r_off) = unsafe {
        (
            b2nd_open(url.as_ptr(), &mut a),
            b2nd_open_offset(off_url.as_ptr(), &mut at, 9),
        )
    };
    // SAFETY: a NUL-terminated path.
    let sc = unsafe { blosc2_schunk_open(url.as_ptr()) };
    assert_eq!(r_off, 0, "b2nd_open_offset");
    assert_eq!(r, 0, "b2nd_open");
    assert!(!sc.is_null(), "blosc2_schunk_open");
    // SAFETY: live handles from the calls above, each freed once.
    unsafe {
        b2nd_free(a);
        b2nd_free(at);
        blosc2_schunk_free(sc);
    }
}

/// `tests/data/findings/fuzz-capi_frame-4.bin` (session 49's loop B, the
/// target's "NdArray::to_vec reads the items, b2nd_to_cbuffer does not"): an
/// array of shape [36029346774777920, 0] and type size 4100, so no item.
/// `b2nd_to_cbuffer` of its 0 bytes failed (-12): the buffer size it wants
/// was the type size times each dimension in order, which overflowed before
/// the 0. It now reads nothing and succeeds, as `NdArray::to_vec` does.
#[test]
fn b2nd_to_cbuffer_of_no_items_beside_a_huge_dimension() {
    use blosc2::b2nd::{b2nd_open, b2nd_to_cbuffer};
    let frame = finding("fuzz-capi_frame-4.bin");
    let dir = common::tempdir("b2nd-no-items");
    let path = dir.join("a.b2nd");
    std::fs::write(&path, &frame).unwrap();
    let url = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    let mut a: *mut b2nd_array_t = std::ptr::null_mut();
    // SAFETY: a NUL-terminated path, a writable out pointer.
    assert_eq!(unsafe { b2nd_open(url.as_ptr(), &mut a) }, 0);
    // SAFETY: the live array just opened.
    let (nitems, ndim) = unsafe { ((*a).nitems, (*a).ndim) };
    assert_eq!((nitems, ndim), (0, 2));
    let mut buf = [7u8; 1];
    // SAFETY: a live array, a buffer of at least the size told.
    let r = unsafe { b2nd_to_cbuffer(a, buf.as_mut_ptr().cast(), 0) };
    assert_eq!(r, 0);
    assert_eq!(buf, [7]);
    // SAFETY: the array opened above, freed once.
    unsafe { b2nd_free(a) };
}

/// The class of the finding above in the other calls: an array of no item
/// beside a dimension of 2^62, of 8-byte items. Their byte counts were
/// products in order from the item size, and 8 × 2^62 overflowed before
/// the 0: `b2nd_get_slice` of the whole array, an orthogonal selection
/// buffer shaped like it, and `b2nd_copy_buffer2` of arrays shaped like it
/// were refused though they hold no byte.
#[test]
fn boxes_of_no_items_beside_a_huge_dimension_hold_no_bytes() {
    use blosc2::b2nd::{b2nd_copy_buffer2, b2nd_get_orthogonal_selection, b2nd_get_slice};
    let shape = [1i64 << 62, 0];
    let ctx = common::new_ctx_of("<i8", &shape, &[1, 1], &[1, 1]);
    let mut a: *mut b2nd_array_t = std::ptr::null_mut();
    // SAFETY: a live context and a writable out pointer.
    assert_eq!(unsafe { b2nd_zeros(ctx, &mut a) }, 0);
    let mut buf = [7u8; 8];
    let p = buf.as_mut_ptr().cast();
    // SAFETY: a live array; the coordinates hold ndim values; the buffer
    // holds the size told.
    unsafe {
        assert_eq!(
            b2nd_get_slice_cbuffer(a, [0, 0].as_ptr(), shape.as_ptr(), p, shape.as_ptr(), 0),
            0
        );
        assert_eq!(
            b2nd_set_slice_cbuffer(p, shape.as_ptr(), 0, [0, 0].as_ptr(), shape.as_ptr(), a),
            0
        );
    }
    let mut out: *mut b2nd_array_t = std::ptr::null_mut();
    // SAFETY: as above; `out` a writable out pointer.
    let r = unsafe { b2nd_get_slice(ctx, &mut out, a, [0, 0].as_ptr(), shape.as_ptr()) };
    assert_eq!(r, 0);
    // SAFETY: the array just made.
    let (s0, s1, nitems) = unsafe { ((*out).shape[0], (*out).shape[1], (*out).nitems) };
    assert_eq!((s0, s1, nitems), (1 << 62, 0, 0));
    // SAFETY: the array made above, freed once.
    unsafe { b2nd_free(out) };
    let mut rows = [0i64, 1, 2];
    let mut sel = [rows.as_mut_ptr(), std::ptr::null_mut()];
    let mut sizes = [3i64, 0];
    let mut bshape = shape;
    // SAFETY: a live array; selection and sizes hold ndim values, each
    // list its size; the buffer holds the size told.
    let r = unsafe {
        b2nd_get_orthogonal_selection(
            a,
            sel.as_mut_ptr(),
            sizes.as_mut_ptr(),
            p,
            bshape.as_mut_ptr(),
            0,
        )
    };
    assert_eq!(r, 0);
    // SAFETY: the shapes and coordinates hold 2 values; both buffers hold
    // their shapes' bytes (none).
    let r = unsafe {
        b2nd_copy_buffer2(
            2,
            8,
            buf.as_ptr().cast(),
            shape.as_ptr(),
            [0, 0].as_ptr(),
            shape.as_ptr(),
            p,
            shape.as_ptr(),
            [0, 0].as_ptr(),
        )
    };
    assert_eq!(r, 0);
    assert_eq!(buf, [7; 8]);
    // SAFETY: the array and context made above, freed once.
    unsafe {
        b2nd_free(a);
        b2nd_free_ctx(ctx);
    }
}
