//! Callbacks re-entering the super-chunk their engine call is using:
//! reads of the C struct and `blosc2_vlmeta_get` work, other calls are
//! refused, and nothing aliases a `&mut` (this test also runs under Miri:
//! `cargo +nightly miri test -p oxiblosc-capi --lib reentry`).

use std::sync::atomic::{AtomicUsize, Ordering};

use super::*;
use crate::v2::plugins::{blosc2_filter, blosc2_register_filter};

static FORWARD: AtomicUsize = AtomicUsize::new(0);
static BACKWARD: AtomicUsize = AtomicUsize::new(0);
static REFUSED: AtomicUsize = AtomicUsize::new(0);

/// What a callback checks on the super-chunk it is given.
unsafe fn check_schunk(schunk: *mut c_void, typesize: i32) -> bool {
    let s = schunk as *mut blosc2_schunk;
    if s.is_null() {
        return false;
    }
    // SAFETY: the engine call hands its live handle; its C view is
    // readable while the call runs.
    if unsafe { (*s).typesize } != typesize {
        return false;
    }
    let (mut content, mut len) = (std::ptr::null_mut(), 0i32);
    // SAFETY: a live handle, a NUL-terminated name, writable out-pointers.
    let rc = unsafe { blosc2_vlmeta_get(s, c"k".as_ptr(), &mut content, &mut len) };
    if rc < 0 || len != 1 {
        return false;
    }
    // SAFETY: blosc2_vlmeta_get returned a malloc'ed byte.
    let ok = unsafe { *content } == 222;
    // SAFETY: malloc'ed by blosc2_vlmeta_get.
    unsafe { free(content as *mut c_void) };
    // SAFETY: a live handle: freeing it from its own callback is refused.
    if unsafe { blosc2_schunk_free(s) } >= 0 {
        return false;
    }
    // A call that needs the super-chunk itself is refused, not aliased.
    let data = [0u8; 16];
    // SAFETY: a live handle; 16 readable bytes.
    if unsafe { blosc2_schunk_append_buffer(s, data.as_ptr() as *const c_void, 16) } < 0 {
        REFUSED.fetch_add(1, Ordering::Relaxed);
    }
    ok
}

unsafe extern "C" fn forward(
    src: *const u8,
    dst: *mut u8,
    size: i32,
    _meta: u8,
    cparams: *mut blosc2_cparams,
    _id: u8,
) -> c_int {
    // SAFETY: the engine's cparams.
    let cp = unsafe { &*cparams };
    // SAFETY: as check_schunk's contract.
    if !unsafe { check_schunk(cp.schunk, 4) } {
        return -1;
    }
    FORWARD.fetch_add(1, Ordering::Relaxed);
    for i in 0..size as usize {
        // SAFETY: size bytes each.
        unsafe { *dst.add(i) = (*src.add(i)).wrapping_add(1) };
    }
    0
}

unsafe extern "C" fn backward(
    src: *const u8,
    dst: *mut u8,
    size: i32,
    _meta: u8,
    dparams: *mut blosc2_dparams,
    _id: u8,
) -> c_int {
    // SAFETY: the engine's dparams.
    let dp = unsafe { &*dparams };
    // SAFETY: as check_schunk's contract.
    if !unsafe { check_schunk(dp.schunk, 4) } {
        return -1;
    }
    BACKWARD.fetch_add(1, Ordering::Relaxed);
    for i in 0..size as usize {
        // SAFETY: size bytes each.
        unsafe { *dst.add(i) = (*src.add(i)).wrapping_sub(1) };
    }
    0
}

fn round_trip(nthreads: i16, n: usize) {
    let mut f = blosc2_filter {
        id: 240,
        name: c"reentry".as_ptr() as *mut c_char,
        version: 1,
        forward: Some(forward),
        backward: Some(backward),
    };
    // SAFETY: a valid filter.
    assert_eq!(unsafe { blosc2_register_filter(&mut f) }, 0);
    let mut cp = CPARAMS_DEFAULTS;
    cp.typesize = 4;
    cp.nthreads = nthreads;
    cp.filters = [0, 0, 0, 0, 240, 1];
    cp.blocksize = 4096;
    let mut dp = DPARAMS_DEFAULTS;
    dp.nthreads = nthreads;
    let s = memory_schunk(false, &mut cp, &mut dp);
    let mut v = 222u8;
    // SAFETY: a live handle and one byte of content.
    assert!(unsafe { blosc2_vlmeta_add(s, c"k".as_ptr(), &mut v, 1, std::ptr::null_mut()) } >= 0);
    let data: Vec<u8> = (0..n as u32).flat_map(|i| (i / 3).to_le_bytes()).collect();
    let (f0, b0, r0) = (
        FORWARD.load(Ordering::Relaxed),
        BACKWARD.load(Ordering::Relaxed),
        REFUSED.load(Ordering::Relaxed),
    );
    // SAFETY: a live handle; data.len() readable bytes.
    let rc = unsafe {
        blosc2_schunk_append_buffer(s, data.as_ptr() as *const c_void, data.len() as i32)
    };
    assert_eq!(rc, 1);
    let mut back = vec![0u8; data.len()];
    // SAFETY: back has data.len() writable bytes.
    let rc = unsafe {
        blosc2_schunk_decompress_chunk(s, 0, back.as_mut_ptr() as *mut c_void, back.len() as i32)
    };
    assert_eq!(rc as usize, data.len());
    assert_eq!(back, data);
    let blocks = data.len().div_ceil(4096);
    assert!(FORWARD.load(Ordering::Relaxed) >= f0 + blocks);
    assert!(BACKWARD.load(Ordering::Relaxed) >= b0 + blocks);
    assert!(REFUSED.load(Ordering::Relaxed) >= r0 + 2 * blocks);
    // SAFETY: the handle's nchunks: the refused appends added nothing.
    assert_eq!(unsafe { (*s).nchunks }, 1);
    // Outside an engine call the handle is free again.
    let mut v2 = 1u8;
    // SAFETY: a live handle and one byte of content.
    assert!(
        unsafe { blosc2_vlmeta_add(s, c"other".as_ptr(), &mut v2, 1, std::ptr::null_mut()) } >= 0
    );
    // SAFETY: made by blosc2_schunk_new, freed once.
    assert_eq!(unsafe { blosc2_schunk_free(s) }, 0);
}

#[test]
fn reentry_from_callbacks_reads_the_handle_and_refuses_changes() {
    round_trip(1, 4096);
    if !cfg!(miri) {
        // Pool threads (chunks of 128 KiB and more go parallel).
        round_trip(2, 100_000);
    }
}
