//! Shuffle helpers and timestamps.

use super::*;

// ---------------------------------------------------------------------------
// Shuffle helpers.

pub(super) type KernelFn =
    fn(&Kernels, usize, &[u8], &mut [u8]) -> Result<(), oxiblosc::kernels::Error>;

pub(super) fn run_kernel(
    f: KernelFn,
    typesize: i32,
    blocksize: i32,
    src: *const c_void,
    dest: *mut c_void,
) -> i32 {
    if src.is_null() || dest.is_null() {
        return err::NULL_POINTER;
    }
    if !(1..=255).contains(&typesize) || blocksize < 0 {
        return err::INVALID_PARAM;
    }
    let n = blocksize as usize;
    // SAFETY: src and dest hold blocksize bytes each and do not overlap
    // (C's contract).
    let (input, output) = unsafe { (slice_in(src, n), slice_out(dest, n)) };
    match f(Kernels::best(), typesize as usize, input, output) {
        Ok(()) => blocksize,
        Err(_) => err::FAILURE,
    }
}

/// Byte-shuffle one block.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_shuffle(
    typesize: i32,
    blocksize: i32,
    src: *const c_void,
    dest: *mut c_void,
) -> i32 {
    guard(err::FAILURE, || {
        run_kernel(Kernels::shuffle, typesize, blocksize, src, dest)
    })
}

/// Undo [`blosc2_shuffle`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_unshuffle(
    typesize: i32,
    blocksize: i32,
    src: *const c_void,
    dest: *mut c_void,
) -> i32 {
    guard(err::FAILURE, || {
        run_kernel(Kernels::unshuffle, typesize, blocksize, src, dest)
    })
}

/// Bit-shuffle one block.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_bitshuffle(
    typesize: i32,
    blocksize: i32,
    src: *const c_void,
    dest: *mut c_void,
) -> i32 {
    guard(err::FAILURE, || {
        run_kernel(Kernels::bitshuffle, typesize, blocksize, src, dest)
    })
}

/// Undo [`blosc2_bitshuffle`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_bitunshuffle(
    typesize: i32,
    blocksize: i32,
    src: *const c_void,
    dest: *mut c_void,
) -> i32 {
    guard(err::FAILURE, || {
        run_kernel(Kernels::bitunshuffle, typesize, blocksize, src, dest)
    })
}

// ---------------------------------------------------------------------------
// Timestamps (`blosc_timestamp_t` is a `struct timespec`).

/// `struct timespec` on Linux.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct blosc_timestamp_t {
    pub tv_sec: i64,
    pub tv_nsec: i64,
}

unsafe extern "C" {
    fn clock_gettime(clock: c_int, tp: *mut blosc_timestamp_t) -> c_int;
}

/// The current monotonic time.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc_set_timestamp(timestamp: *mut blosc_timestamp_t) {
    if !timestamp.is_null() {
        // SAFETY: timestamp is non-null and writable; CLOCK_MONOTONIC is 1.
        unsafe { clock_gettime(1, timestamp) };
    }
}

/// Nanoseconds between two timestamps.
#[unsafe(no_mangle)]
pub extern "C" fn blosc_elapsed_nsecs(
    start_time: blosc_timestamp_t,
    end_time: blosc_timestamp_t,
) -> f64 {
    (end_time.tv_sec - start_time.tv_sec) as f64 * 1e9
        + (end_time.tv_nsec - start_time.tv_nsec) as f64
}

/// Seconds between two timestamps.
#[unsafe(no_mangle)]
pub extern "C" fn blosc_elapsed_secs(
    start_time: blosc_timestamp_t,
    end_time: blosc_timestamp_t,
) -> f64 {
    blosc_elapsed_nsecs(start_time, end_time) / 1e9
}
