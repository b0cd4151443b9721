//! The C view's `typesize` is the one the slice calls size the caller's
//! buffer by. A frame's header may hold any positive type size (C-Blosc2
//! writes items over 255 bytes as frames of that size with chunks of type
//! size 1); the view showed the engine's clamped one (255) while
//! `blosc2_schunk_get_slice_buffer` wrote `(stop - start) * 131073` bytes
//! into a buffer C had sized by the view (the `capi_frame` fuzz target's
//! first finding, a heap overflow in the caller's buffer).

use super::*;
use crate::v2::{CPARAMS_DEFAULTS, DPARAMS_DEFAULTS};

#[test]
fn slice_calls_use_the_typesize_c_reads() {
    let mut cp = CPARAMS_DEFAULTS;
    cp.typesize = 4;
    let mut dp = DPARAMS_DEFAULTS;
    let s = memory_schunk(true, &mut cp, &mut dp);
    let data: Vec<u8> = (0..6000u32).map(|i| (i % 251) as u8).collect();
    // SAFETY: a live handle; data.len() readable bytes.
    let rc = unsafe { blosc2_schunk_append_buffer(s, data.as_ptr().cast(), data.len() as i32) };
    assert_eq!(rc, 1);
    let (mut frame, mut needs_free) = (std::ptr::null_mut::<u8>(), false);
    // SAFETY: a live handle; writable out-pointers.
    let n = unsafe { blosc2_schunk_to_buffer(s, &mut frame, &mut needs_free) };
    assert!(n > 0);
    // SAFETY: n bytes the call returned.
    let mut bytes = unsafe { std::slice::from_raw_parts(frame, n as usize) }.to_vec();
    if needs_free {
        // SAFETY: malloc'ed for the caller.
        unsafe { free(frame.cast()) };
    }
    // SAFETY: made by blosc2_schunk_new, freed once.
    unsafe { blosc2_schunk_free(s) };
    // The header's typesize (msgpack int32 after the 0xd2 marker at 47).
    assert_eq!(bytes[47], 0xd2);
    for (ts, items) in [(4i32, 1500i64), (300, 20), (131_073, 0)] {
        bytes[48..52].copy_from_slice(&ts.to_be_bytes());
        // SAFETY: bytes holds its length and outlives the handle (a copy).
        let s = unsafe { blosc2_schunk_from_buffer(bytes.as_mut_ptr(), bytes.len() as i64, true) };
        assert!(!s.is_null(), "typesize {ts}");
        // SAFETY: a live handle.
        let (view, nbytes) = unsafe { ((*s).typesize, (*s).nbytes) };
        assert_eq!(view, ts, "the C view shows the frame's typesize");
        assert_eq!(nbytes / i64::from(view), items);
        // Half the items, into a buffer sized by the view, with 64 bytes
        // more that must stay untouched.
        let stop = items / 2;
        let want = (stop * i64::from(view)) as usize;
        let mut buf = vec![0xAAu8; want + 64];
        // SAFETY: a live handle; buf has room for stop items of the view's size.
        let rc = unsafe { blosc2_schunk_get_slice_buffer(s, 0, stop, buf.as_mut_ptr().cast()) };
        assert_eq!(rc, 0, "typesize {ts}");
        assert_eq!(buf[..want], data[..want], "typesize {ts}");
        assert!(
            buf[want..].iter().all(|&b| b == 0xAA),
            "typesize {ts}: written past the items"
        );
        // A slice past the items the view allows is refused.
        // SAFETY: as above; refused before anything is written.
        let rc =
            unsafe { blosc2_schunk_get_slice_buffer(s, 0, items + 1, buf.as_mut_ptr().cast()) };
        assert!(rc < 0, "typesize {ts}");
        // SAFETY: made by blosc2_schunk_from_buffer, freed once.
        unsafe { blosc2_schunk_free(s) };
    }
}

/// The fuzz target's input (`tests/data/findings/fuzz-capi_frame-1.bin`, a
/// 172-byte frame whose header says typesize 131073): the slice the target
/// asks for, into a buffer sized by the view, is written within it.
#[test]
fn fuzz_capi_frame_1_slice_stays_in_the_buffer() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/data/findings/fuzz-capi_frame-1.bin"
    );
    let mut bytes = std::fs::read(path).unwrap();
    // SAFETY: bytes holds its length and outlives the handle (a copy).
    let s = unsafe { blosc2_schunk_from_buffer(bytes.as_mut_ptr(), bytes.len() as i64, true) };
    assert!(!s.is_null());
    // SAFETY: a live handle.
    let (ts, nbytes) = unsafe { (i64::from((*s).typesize.max(1)), (*s).nbytes) };
    let stop = (nbytes / ts).clamp(0, 1000);
    let len = (stop * ts) as usize;
    let mut buf = vec![0xAAu8; len + 64];
    // SAFETY: a live handle; room for stop items of the view's size.
    let rc = unsafe { blosc2_schunk_get_slice_buffer(s, 0, stop, buf.as_mut_ptr().cast()) };
    assert!(
        buf[len..].iter().all(|&b| b == 0xAA),
        "rc {rc}: written past the items"
    );
    // SAFETY: made by blosc2_schunk_from_buffer, freed once.
    unsafe { blosc2_schunk_free(s) };
}
