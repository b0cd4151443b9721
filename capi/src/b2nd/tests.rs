//! `b2nd.h` calls on arrays whose `b2nd` metalayer the frame does not hold
//! (or no layout can): refused with an error code, never a panic caught at the boundary
//! (which gives `BLOSC2_ERROR_FAILURE`) nor garbage in the struct C reads.
use super::*;
use crate::v2::err;
use oxiblosc::CParams;

/// A file frame of no chunks whose `b2nd` metalayer is `meta`.
fn frame_with(tag: &str, meta: &NdMeta) -> (std::path::PathBuf, CString) {
    let dir = std::env::temp_dir().join(format!("oxiblosc-capi-b2nd-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("a.b2nd");
    SChunk::builder()
        .cparams(CParams::default().typesize(1))
        .meta("b2nd", &meta.encode().unwrap())
        .create_file(&path)
        .unwrap();
    let url = CString::new(path.to_str().unwrap()).unwrap();
    (dir, url)
}

#[test]
fn arrays_the_frame_does_not_hold_are_refused_at_open() {
    // A shape of i64::MAX items in chunks of 2 over a frame of no chunks:
    // rounding it up to whole chunks overflowed in the struct's extshape
    // (a panic caught at the boundary, BLOSC2_ERROR_FAILURE, in a build
    // with overflow checks; a wrapped value otherwise). And a shape whose
    // byte count overflows, which no layout holds.
    let big = i64::MAX as u64;
    for (k, meta) in [
        NdMeta::new(&[big], &[2], &[1], "|u1"),
        NdMeta::new(&[big, big], &[1, 1], &[1, 1], "|u1"),
    ]
    .iter()
    .enumerate()
    {
        let (dir, url) = frame_with(&format!("huge{k}"), meta);
        let mut a: *mut b2nd_array_t = std::ptr::null_mut();
        // SAFETY: a NUL-terminated path and a writable out pointer.
        let r = unsafe { b2nd_open(url.as_ptr(), &mut a) };
        assert_eq!(r, err::DATA, "b2nd_open of {:?}", meta.shape);
        assert!(a.is_null());
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn the_struct_of_a_large_array_holds_its_rounded_shapes() {
    // The largest array the layout accepts: extshape rounds up without
    // overflow.
    let s = (i64::MAX as u64) / 8 - 3;
    let meta = NdMeta::new(&[s], &[4], &[2], "|u1");
    let c = {
        let mut a = Array {
            // SAFETY: all-zero is a valid b2nd_array_t (integers and
            // pointers).
            c: unsafe { std::mem::zeroed() },
            meta,
            dtype: CString::new("|u1").unwrap(),
            view: false,
        };
        a.sync();
        a.c
    };
    assert_eq!(c.shape[0], s as i64);
    assert_eq!(c.extshape[0], s.div_ceil(4) as i64 * 4);
    assert_eq!(c.extchunkshape[0], 4);
    assert_eq!(c.chunk_array_strides[0], 1);
}

/// What `b2nd.h` says is an error and C-Blosc2 3.3.5 does not refuse:
/// NaNs of items other than 4 or 8 bytes (it makes the array), a NULL
/// fill value (it dereferences it). Ours refuses both with an error code
/// and no array; `tests/c-interop/b2nd_make.c` compares the rest with C.
#[test]
fn nans_of_two_byte_items_and_a_null_fill_value_are_refused() {
    let shape = [3i64, 4];
    let (chunks, blocks) = ([2i32, 2], [1i32, 2]);
    for (dtype, nans) in [("<i2", err::INVALID_PARAM), ("<f4", 0)] {
        let dt = CString::new(dtype).unwrap();
        // SAFETY: ndim 2 and shapes of 2 values; a NUL-terminated dtype.
        let ctx = unsafe {
            b2nd_create_ctx(
                std::ptr::null(),
                2,
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
        // SAFETY: a live context and a writable out pointer.
        let r = unsafe { b2nd_nans(ctx, &mut a) };
        assert_eq!(r, nans, "{dtype}");
        assert_eq!(a.is_null(), r != 0);
        // SAFETY: a is null or this library's array, freed once.
        unsafe { b2nd_free(a) };
        let mut a: *mut b2nd_array_t = std::ptr::null_mut();
        // SAFETY: as above; the NULL fill value is what is tested.
        let r = unsafe { b2nd_full(ctx, &mut a, std::ptr::null()) };
        assert_eq!((r, a.is_null()), (err::NULL_POINTER, true), "{dtype}");
        // SAFETY: the context from b2nd_create_ctx, freed once.
        unsafe { b2nd_free_ctx(ctx) };
    }
}
