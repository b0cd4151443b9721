//! Library set-up and global settings.

use super::*;

// ---------------------------------------------------------------------------
// Library set-up and global settings.

/// Initialise the library (nothing to set up).
#[unsafe(no_mangle)]
pub extern "C" fn blosc2_init() {}

/// Tear down the library.
#[unsafe(no_mangle)]
pub extern "C" fn blosc2_destroy() {}

/// Free temporaries: 0.
#[unsafe(no_mangle)]
pub extern "C" fn blosc2_free_resources() -> c_int {
    0
}

/// The number of threads of the non-context calls.
#[unsafe(no_mangle)]
pub extern "C" fn blosc2_get_nthreads() -> i16 {
    guard(1, || settings().nthreads)
}

/// Set the number of threads; returns the previous one, or an error code
/// for values below 1.
#[unsafe(no_mangle)]
pub extern "C" fn blosc2_set_nthreads(nthreads: i16) -> i16 {
    guard(err::FAILURE as i16, || {
        if nthreads < 1 {
            return err::INVALID_PARAM as i16;
        }
        std::mem::replace(&mut settings().nthreads, nthreads)
    })
}

/// `blosc_threads_callback`.
pub type blosc_threads_callback = Option<
    unsafe extern "C" fn(
        callback_data: *mut c_void,
        dojob: unsafe extern "C" fn(*mut c_void),
        numjobs: c_int,
        jobdata_elsize: usize,
        jobdata: *mut c_void,
    ),
>;

/// The caller's threading backend, if any (the callback and its data).
pub static THREADS_CALLBACK: Mutex<Option<(usize, usize)>> = Mutex::new(None);

/// A custom threading backend. Our rayon pools run the blocks of a chunk;
/// the callback runs the per-item gathers of
/// `blosc2_schunk_get_sparse_buffer` when more than one thread is asked for.
#[unsafe(no_mangle)]
pub extern "C" fn blosc2_set_threads_callback(
    callback: blosc_threads_callback,
    callback_data: *mut c_void,
) {
    guard((), || {
        *THREADS_CALLBACK.lock().unwrap_or_else(|e| e.into_inner()) =
            callback.map(|f| (f as usize, callback_data as usize));
    })
}

/// Run `numjobs` jobs of `jobdata` through the caller's backend; false
/// when none is set.
///
/// # Safety
/// `jobdata` holds `numjobs` elements of `jobdata_elsize` bytes that
/// `dojob` accepts, alive until this returns.
pub unsafe fn run_threads_callback(
    dojob: unsafe extern "C" fn(*mut c_void),
    numjobs: usize,
    jobdata_elsize: usize,
    jobdata: *mut c_void,
) -> bool {
    let cb = *THREADS_CALLBACK.lock().unwrap_or_else(|e| e.into_inner());
    let Some((f, data)) = cb else {
        return false;
    };
    // SAFETY: f was stored from a non-null `blosc_threads_callback`
    // function pointer of exactly this type.
    let f: unsafe extern "C" fn(
        *mut c_void,
        unsafe extern "C" fn(*mut c_void),
        c_int,
        usize,
        *mut c_void,
    ) = unsafe { std::mem::transmute(f) };
    // SAFETY: the caller's backend runs dojob on each of the numjobs
    // elements of jobdata, which stay alive until it returns.
    unsafe {
        f(
            data as *mut c_void,
            dojob,
            numjobs as c_int,
            jobdata_elsize,
            jobdata,
        )
    };
    true
}

/// The compressor of the non-context calls.
#[unsafe(no_mangle)]
pub extern "C" fn blosc1_get_compressor() -> *const c_char {
    guard(c"blosclz".as_ptr(), || {
        codec_cname(settings().codec).as_ptr()
    })
}

/// Select the compressor; its code, or -1.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc1_set_compressor(compname: *const c_char) -> c_int {
    guard(-1, || {
        // SAFETY: compname is null or a NUL-terminated string (C's contract).
        let code = unsafe { blosc2_compname_to_compcode(compname) };
        if let Some(c) = codec_of_code(code) {
            settings().codec = c;
        }
        code
    })
}

/// Turn the delta filter on (1) or off (0) for the non-context calls.
#[unsafe(no_mangle)]
pub extern "C" fn blosc2_set_delta(dodelta: c_int) {
    guard((), || settings().delta = dodelta != 0)
}

/// The forced block size (0 = automatic).
#[unsafe(no_mangle)]
pub extern "C" fn blosc1_get_blocksize() -> c_int {
    guard(0, || settings().blocksize.min(c_int::MAX as usize) as c_int)
}

/// Force a block size (0 = automatic).
#[unsafe(no_mangle)]
pub extern "C" fn blosc1_set_blocksize(blocksize: usize) {
    guard((), || settings().blocksize = blocksize)
}

/// Set the split mode (`BLOSC_*_SPLIT`); other values are ignored.
#[unsafe(no_mangle)]
pub extern "C" fn blosc1_set_splitmode(splitmode: c_int) {
    guard((), || {
        if let Some(m) = splitmode_of(splitmode) {
            settings().splitmode = m;
        }
    })
}

/// The name of a codec code; the code, or -1.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_compcode_to_compname(
    compcode: c_int,
    compname: *mut *const c_char,
) -> c_int {
    guard(-1, || {
        let name = codec_of_code(compcode).map(codec_cname);
        if !compname.is_null() {
            // SAFETY: compname is non-null and points to a writable pointer.
            unsafe { *compname = name.map_or(std::ptr::null(), |n| n.as_ptr()) };
        }
        if name.is_some() { compcode } else { -1 }
    })
}

/// The code of a codec name, or -1.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_compname_to_compcode(compname: *const c_char) -> c_int {
    guard(-1, || {
        // SAFETY: compname is null or a NUL-terminated string.
        let Some(name) = (unsafe { str_arg(compname) }) else {
            return -1;
        };
        Codec::ALL
            .into_iter()
            .find(|c| c.name() == name && c.is_available())
            .map_or(-1, |c| c_int::from(c.id()))
    })
}

/// The codecs of this build, comma-separated.
#[unsafe(no_mangle)]
pub extern "C" fn blosc2_list_compressors() -> *const c_char {
    c"blosclz,lz4,lz4hc,zlib,zstd".as_ptr()
}

/// The version of the C-Blosc2 ABI implemented.
#[unsafe(no_mangle)]
pub extern "C" fn blosc2_get_version_string() -> *const c_char {
    VERSION_STRING.as_ptr()
}

/// Library name and version of a codec (malloc'ed); the library code or -1.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_get_complib_info(
    compname: *const c_char,
    complib: *mut *mut c_char,
    version: *mut *mut c_char,
) -> c_int {
    guard(-1, || {
        // SAFETY: compname is null or a NUL-terminated string (C's contract).
        let codec = codec_of_code(unsafe { blosc2_compname_to_compcode(compname) });
        let info = codec.map(complib_info);
        if !complib.is_null() {
            // SAFETY: complib is non-null and writable.
            unsafe { *complib = info.map_or(std::ptr::null_mut(), |(l, _)| c_strdup(l)) };
        }
        if !version.is_null() {
            // SAFETY: version is non-null and writable.
            unsafe { *version = info.map_or(std::ptr::null_mut(), |(_, v)| c_strdup(v)) };
        }
        codec.map_or(-1, |c| c_int::from(c.format()))
    })
}

/// A description of a `BLOSC2_ERROR_*` code.
#[unsafe(no_mangle)]
pub extern "C" fn blosc2_error_string(error_code: c_int) -> *const c_char {
    let s: &'static CStr = match error_code {
        0 => c"Success",
        -1 => c"Generic failure",
        -2 => c"Bad stream",
        -3 => c"Invalid data",
        -4 => c"Memory alloc/realloc failure",
        -5 => c"Not enough space to read",
        -6 => c"Not enough space to write",
        -7 => c"Codec not supported",
        -8 => c"Invalid parameter supplied to codec",
        -9 => c"Codec dictionary error",
        -10 => c"Version not supported",
        -11 => c"Invalid value in header",
        -12 => c"Invalid parameter supplied to function",
        -13 => c"File read failure",
        -14 => c"File write failure",
        -15 => c"File open failure",
        -16 => c"Not found",
        -17 => c"Bad run length encoding",
        -18 => c"Filter pipeline error",
        -19 => c"Chunk insert failure",
        -20 => c"Chunk append failure",
        -21 => c"Chunk update failure",
        -22 => c"Sizes larger than 2gb not supported",
        -23 => c"Super-chunk copy failure",
        -24 => c"Wrong type for frame",
        -25 => c"File truncate failure",
        -26 => c"Thread or thread context creation failure",
        -27 => c"Postfilter failure",
        -28 => c"Special frame failure",
        -29 => c"Special super-chunk failure",
        -30 => c"IO plugin error",
        -31 => c"Remove file failure",
        -32 => c"Pointer is null",
        -33 => c"Invalid index",
        -34 => c"Metalayer has not been found",
        -35 => c"Maximum buffersize exceeded",
        -36 => c"Tuner failure",
        -37 => c"Frame lock failure",
        _ => c"Unknown error",
    };
    s.as_ptr()
}
