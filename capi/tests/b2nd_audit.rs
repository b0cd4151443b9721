//! Regression tests from an audit of the `b2nd.h` calls: arguments whose
//! products overflow get `BLOSC2_ERROR_INVALID_PARAM`, not a panic caught
//! at the boundary (`BLOSC2_ERROR_FAILURE`, in a build with overflow
//! checks) or a wrapped value. The calls are made from Rust through the
//! library's rlib, as `fuzz/fuzz_targets/capi_b2nd.rs` makes them.

use std::ffi::CString;

use blosc2::b2nd::{
    b2nd_array_t, b2nd_create_ctx, b2nd_free, b2nd_free_ctx, b2nd_get_slice_cbuffer,
    b2nd_set_slice_cbuffer, b2nd_zeros,
};
use blosc2::v2::err;

/// `b2nd_zeros` of an in-memory `|u1` array of these shapes: its return
/// code and the array (null on failure).
fn zeros(shape: &[i64], chunks: &[i32], blocks: &[i32]) -> (i32, *mut b2nd_array_t) {
    let dtype = CString::new("|u1").unwrap();
    // SAFETY: the shapes hold ndim values, the dtype is NUL-terminated;
    // NULL storage and metalayers are allowed.
    let ctx = unsafe {
        b2nd_create_ctx(
            std::ptr::null(),
            shape.len() as i8,
            shape.as_ptr(),
            chunks.as_ptr(),
            blocks.as_ptr(),
            dtype.as_ptr(),
            0,
            std::ptr::null(),
            0,
        )
    };
    assert!(!ctx.is_null(), "b2nd_create_ctx");
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
