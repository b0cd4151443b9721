//! C's `data` array of an NDArray in memory made without a frame
//! (`contiguous` false, as C-Blosc2's `test_b2nd_expand_dims` reads it):
//! after slice writes, resizes and inserts, entry `i` holds chunk `i`'s
//! bytes, and the chunks a call left alone keep their copies (addresses).

use super::*;
use crate::schunk::data_tests::entry;
use crate::v2::CPARAMS_DEFAULTS;

/// Every entry is the engine's chunk; the entries' addresses.
fn check(a: *mut b2nd_array_t, what: &str) -> Vec<*mut u8> {
    // SAFETY: a live array of this library; its sc a live handle.
    let s = unsafe { (*a).sc };
    let n = with_locked(s, false, |sc| sc.nchunks()).unwrap();
    // SAFETY: as above.
    assert_eq!(unsafe { (*s).data_len }, n, "{what}: entries");
    (0..n)
        .map(|i| {
            let (bytes, p) = entry(s, i);
            let stored = with_locked(s, false, |sc| sc.get_chunk(i).unwrap().into_owned()).unwrap();
            assert_eq!(bytes, stored, "{what}: chunk {i}");
            p
        })
        .collect()
}

/// An array of 40 `i32` in chunks of 10 made from `0..40`, in memory, with
/// or without a frame.
fn array(contiguous: bool) -> (*mut b2nd_context_t, *mut b2nd_array_t) {
    let mut cp = CPARAMS_DEFAULTS;
    cp.typesize = 4;
    cp.nthreads = 1;
    let st = blosc2_storage {
        contiguous,
        urlpath: std::ptr::null_mut(),
        cparams: &mut cp,
        dparams: std::ptr::null_mut(),
        io: std::ptr::null_mut(),
    };
    let (shape, chunks, blocks) = ([40i64], [10i32], [5i32]);
    // SAFETY: ndim 1 and shapes of one value; the storage is read now.
    let ctx = unsafe {
        b2nd_create_ctx(
            &st,
            1,
            shape.as_ptr(),
            chunks.as_ptr(),
            blocks.as_ptr(),
            std::ptr::null(),
            0,
            std::ptr::null(),
            0,
        )
    };
    assert!(!ctx.is_null());
    let items: Vec<i32> = (0..40).collect();
    let mut a = std::ptr::null_mut();
    // SAFETY: a live context, a writable out pointer, 160 readable bytes.
    let r = unsafe { b2nd_from_cbuffer(ctx, &mut a, items.as_ptr().cast(), 160) };
    assert_eq!(r, 0);
    (ctx, a)
}

#[test]
fn the_data_array_of_an_array_without_a_frame_follows_its_writes() {
    let (ctx, a) = array(false);
    // SAFETY: a live array; its sc and storage live handles.
    assert!(unsafe { !(*(*(*a).sc).storage).contiguous });
    let made = check(a, "made");
    assert_eq!(made.len(), 4);

    // Items 12..18, in chunk 1.
    let new = [-1i32; 6];
    let (bshape, start, stop) = ([6i64], [12i64], [18i64]);
    // SAFETY: a live array; 24 readable bytes of shape [6]; a box of one
    // dimension.
    let r = unsafe {
        b2nd_set_slice_cbuffer(
            new.as_ptr().cast(),
            bshape.as_ptr(),
            24,
            start.as_ptr(),
            stop.as_ptr(),
            a,
        )
    };
    assert_eq!(r, 0);
    let written = check(a, "after set_slice");
    assert_eq!(
        [written[0], written[2], written[3]],
        [made[0], made[2], made[3]],
        "the chunks the write left alone keep their copies"
    );
    let mut back = [0i32; 40];
    // SAFETY: a live array; 160 writable bytes.
    assert_eq!(
        unsafe { b2nd_to_cbuffer(a, back.as_mut_ptr().cast(), 160) },
        0
    );
    assert_eq!(&back[12..18], &new);

    // Grown by two chunks at the end (C's resize keeps every chunk).
    let grown = [60i64];
    // SAFETY: a live array; one new length; NULL start (at the end).
    assert_eq!(
        unsafe { b2nd_resize(a, grown.as_ptr(), std::ptr::null()) },
        0
    );
    let resized = check(a, "after resize");
    assert_eq!(resized.len(), 6);
    assert_eq!(
        &resized[..4],
        &written[..],
        "the kept chunks keep their copies"
    );

    // A whole chunk inserted first: the others move up one entry.
    let ins = [7i32; 10];
    // SAFETY: a live array; 40 readable bytes; axis 0.
    assert_eq!(unsafe { b2nd_insert(a, ins.as_ptr().cast(), 40, 0, 0) }, 0);
    let inserted = check(a, "after insert");
    assert_eq!(&inserted[1..5], &resized[..4]);
    // The two zero chunks are one stamp (the same bytes): each keeps one
    // of their copies, in either order.
    for p in &inserted[5..] {
        assert!(resized[4..].contains(p), "a zero chunk copied again");
    }
    assert_ne!(inserted[5], inserted[6]);

    // SAFETY: this library's array and context, each freed once.
    unsafe {
        assert_eq!(b2nd_free(a), 0);
        assert_eq!(b2nd_free_ctx(ctx), 0);
    }
}

#[test]
fn an_array_in_memory_with_a_frame_has_no_data_array() {
    let (ctx, a) = array(true);
    // SAFETY: a live array; its sc and storage live handles.
    unsafe {
        let s = (*a).sc;
        assert!((*(*s).storage).contiguous);
        assert!((*s).data.is_null() || (*s).data_len == 0);
        assert!(!(*s).frame.is_null());
        assert_eq!(b2nd_free(a), 0);
        assert_eq!(b2nd_free_ctx(ctx), 0);
    }
}
