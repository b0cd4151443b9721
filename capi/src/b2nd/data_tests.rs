//! C's `data` array of an NDArray in memory made without a frame
//! (`contiguous` false, as C-Blosc2's `test_b2nd_expand_dims` reads it):
//! after slice writes, resizes, inserts, frames written and compactions,
//! entry `i` holds chunk `i`'s bytes: a stored chunk's entry points into
//! the frame (no copy), special chunks of one kind share one.

use super::*;
use std::borrow::Cow;

use crate::schunk::data_tests::entry;
use crate::v2::CPARAMS_DEFAULTS;

/// Every entry is the engine's chunk, a stored one in the frame itself;
/// the entries' addresses.
fn check(a: *mut b2nd_array_t, what: &str) -> Vec<*mut u8> {
    // SAFETY: a live array of this library; its sc a live handle.
    let s = unsafe { (*a).sc };
    let n = with_locked(s, false, |sc| sc.nchunks()).unwrap();
    // SAFETY: as above.
    assert_eq!(unsafe { (*s).data_len }, n, "{what}: entries");
    (0..n)
        .map(|i| {
            let (bytes, p) = entry(s, i);
            let (stored, at) = with_locked(s, false, |sc| match sc.chunk_shared(i).unwrap() {
                Cow::Borrowed(c) => (c.to_vec(), Some(c.as_ptr())),
                Cow::Owned(c) => (c, None),
            })
            .unwrap();
            assert_eq!(bytes, stored, "{what}: chunk {i}");
            if let Some(at) = at {
                assert_eq!(p as *const u8, at, "{what}: chunk {i} is not the frame's");
            }
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
    assert_eq!(check(a, "made").len(), 4);

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
    check(a, "after set_slice");
    let mut back = [0i32; 40];
    // SAFETY: a live array; 160 writable bytes.
    assert_eq!(
        unsafe { b2nd_to_cbuffer(a, back.as_mut_ptr().cast(), 160) },
        0
    );
    assert_eq!(&back[12..18], &new);

    // Grown by two chunks at the end (zero chunks, the index's alone).
    let grown = [60i64];
    // SAFETY: a live array; one new length; NULL start (at the end).
    assert_eq!(
        unsafe { b2nd_resize(a, grown.as_ptr(), std::ptr::null()) },
        0
    );
    let resized = check(a, "after resize");
    assert_eq!(resized.len(), 6);
    assert_eq!(resized[4], resized[5], "zero chunks share one made chunk");

    // A whole chunk inserted first.
    let ins = [7i32; 10];
    // SAFETY: a live array; 40 readable bytes; axis 0.
    assert_eq!(unsafe { b2nd_insert(a, ins.as_ptr().cast(), 40, 0, 0) }, 0);
    assert_eq!(check(a, "after insert").len(), 7);
    // The frame's pending index and trailer written by a call that changes
    // no chunk: the entries are made again (Miri: their provenance).
    // SAFETY: a live array; its sc a live handle.
    assert!(unsafe { crate::schunk::blosc2_schunk_frame_len((*a).sc) } > 0);
    check(a, "after frame_len");
    // A change of no chunk (a vlmetalayer) rewrites the frame's header.
    let (name, mut v) = (c"note", [1u8, 2, 3]);
    // SAFETY: a live handle; a NUL-terminated name; 3 readable bytes.
    let rc = unsafe {
        crate::schunk::blosc2_vlmeta_add(
            (*a).sc,
            name.as_ptr(),
            v.as_mut_ptr(),
            3,
            std::ptr::null_mut(),
        )
    };
    assert!(rc >= 0, "vlmeta_add {rc}");
    check(a, "after vlmeta_add");

    // The frame written whole (it may grow the buffer), then compacted by
    // a call that writes no chunk (chunk 1's replaced version is a hole):
    // the chunks after the hole move down.
    let (mut buf, mut len, mut needs_free) = (std::ptr::null_mut(), 0i64, false);
    // SAFETY: a live array; writable out pointers.
    assert_eq!(
        unsafe { b2nd_to_cframe(a, &mut buf, &mut len, &mut needs_free) },
        0
    );
    // Without a frame C-Blosc2 builds one for the call: a copy.
    assert!(needs_free, "an array without a frame gets a copy");
    assert_eq!(reads_as(a, buf, len), 70);
    if needs_free {
        // SAFETY: the frame's copy, malloc'ed for the caller.
        unsafe { libc::free(buf.cast()) };
    }
    check(a, "after to_cframe");
    // SAFETY: a live array; its sc a live handle.
    with_locked(unsafe { (*a).sc }, false, |sc| sc.compact().unwrap()).unwrap();
    check(a, "after a compaction");

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
        // Its frame is lent, as C-Blosc2 lends it (not to be freed).
        let (mut buf, mut len, mut needs_free) = (std::ptr::null_mut(), 0i64, true);
        assert_eq!(b2nd_to_cframe(a, &mut buf, &mut len, &mut needs_free), 0);
        assert!(!needs_free, "an array with a frame in memory lends it");
        assert_eq!(reads_as(a, buf, len), 40);
        assert_eq!(b2nd_free(a), 0);
        assert_eq!(b2nd_free_ctx(ctx), 0);
    }
}

/// The array of the frame `buf` (`len` bytes, copied) reads as `a`; its
/// number of items.
fn reads_as(a: *mut b2nd_array_t, buf: *mut u8, len: i64) -> usize {
    let mut back = std::ptr::null_mut();
    // SAFETY: the frame's len bytes, copied by the call.
    assert_eq!(unsafe { b2nd_from_cframe(buf, len, true, &mut back) }, 0);
    // SAFETY: live arrays; each buffer holds the array's items.
    unsafe {
        let n = (*back).nitems as usize;
        assert_eq!(n as i64, (*a).nitems);
        let (mut got, mut want) = (vec![0i32; n], vec![0i32; n]);
        assert_eq!(
            b2nd_to_cbuffer(back, got.as_mut_ptr().cast(), 4 * n as i64),
            0
        );
        assert_eq!(
            b2nd_to_cbuffer(a, want.as_mut_ptr().cast(), 4 * n as i64),
            0
        );
        assert_eq!(got, want);
        assert_eq!(b2nd_free(back), 0);
        n
    }
}
