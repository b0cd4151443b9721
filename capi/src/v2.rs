//! The C-Blosc2 3.x chunk ABI (`blosc2.h`): `blosc1_*`, `blosc2_*`,
//! contexts, special chunks, the shuffle helpers. Chunks are Blosc2 chunks
//! (32-byte header).

#![allow(non_camel_case_types)]

use std::ffi::{CStr, c_char, c_int, c_void};
use std::sync::Mutex;

use oxiblosc::kernels::Kernels;
use oxiblosc::{
    CParams, ChunkHeader, Codec, Compressor, DParams, Decompressor, Error, Filter, SpecialValue,
    SplitMode, special_chunk,
};

use crate::common::{
    c_strdup, chunk_at, codec_of_code, complib_info, complib_of_format, guard, header16,
    is_dst_too_small, le_i32, slice_in, slice_out, str_arg, strtol,
};

/// `BLOSC2_VERSION_STRING` of the header implemented.
pub const VERSION_STRING: &CStr = c"3.3.5";

/// `BLOSC2_ERROR_*`.
pub mod err {
    pub const FAILURE: i32 = -1;
    pub const STREAM: i32 = -2;
    pub const DATA: i32 = -3;
    pub const MEMORY_ALLOC: i32 = -4;
    pub const READ_BUFFER: i32 = -5;
    pub const WRITE_BUFFER: i32 = -6;
    pub const CODEC_SUPPORT: i32 = -7;
    pub const CODEC_PARAM: i32 = -8;
    pub const CODEC_DICT: i32 = -9;
    pub const VERSION_SUPPORT: i32 = -10;
    pub const INVALID_HEADER: i32 = -11;
    pub const INVALID_PARAM: i32 = -12;
    pub const FILE_READ: i32 = -13;
    pub const FILTER_PIPELINE: i32 = -18;
    pub const POSTFILTER: i32 = -27;
    pub const NULL_POINTER: i32 = -32;
    pub const INVALID_INDEX: i32 = -33;
    pub const MAX_BUFSIZE_EXCEEDED: i32 = -35;
}

const MIN_HEADER_LENGTH: usize = 16;
const EXTENDED_HEADER_LENGTH: usize = 32;
const MAX_OVERHEAD: usize = EXTENDED_HEADER_LENGTH;
const MAX_BUFFERSIZE: usize = i32::MAX as usize - MAX_OVERHEAD;
const MAX_FILTERS: usize = 6;

/// The error code of an engine error.
pub fn code_of(e: &Error) -> c_int {
    match e {
        Error::Truncated { .. } => err::READ_BUFFER,
        Error::InvalidHeader(_) => err::INVALID_HEADER,
        Error::Corrupt(_) => err::DATA,
        Error::DstTooSmall { .. } => err::WRITE_BUFFER,
        Error::InvalidParam(_) => err::INVALID_PARAM,
        Error::Unsupported(_) => err::CODEC_SUPPORT,
        Error::Io(_) => err::FILE_READ,
        _ => err::FAILURE,
    }
}

/// `blosc2_prefilter_params`.
#[repr(C)]
pub struct blosc2_prefilter_params {
    pub user_data: *mut c_void,
    pub input: *const u8,
    pub output: *mut u8,
    pub output_size: i32,
    pub output_typesize: i32,
    pub output_offset: i32,
    pub nchunk: i64,
    pub nblock: i32,
    pub tid: i32,
    pub ttmp: *mut u8,
    pub ttmp_nbytes: usize,
    pub ctx: *mut blosc2_context,
    pub output_is_disposable: bool,
}

/// `blosc2_postfilter_params`.
#[repr(C)]
pub struct blosc2_postfilter_params {
    pub user_data: *mut c_void,
    pub input: *const u8,
    pub output: *mut u8,
    pub size: i32,
    pub typesize: i32,
    pub offset: i32,
    pub nchunk: i64,
    pub nblock: i32,
    pub tid: i32,
    pub ttmp: *mut u8,
    pub ttmp_nbytes: usize,
    pub ctx: *mut blosc2_context,
}

/// `blosc2_prefilter_fn`.
pub type blosc2_prefilter_fn = Option<unsafe extern "C" fn(*mut blosc2_prefilter_params) -> c_int>;
/// `blosc2_postfilter_fn`.
pub type blosc2_postfilter_fn =
    Option<unsafe extern "C" fn(*mut blosc2_postfilter_params) -> c_int>;

/// `blosc2_cparams`, laid out as `blosc2.h` declares it.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct blosc2_cparams {
    pub compcode: u8,
    pub compcode_meta: u8,
    pub clevel: u8,
    pub use_dict: c_int,
    pub typesize: i32,
    pub nthreads: i16,
    pub blocksize: i32,
    pub splitmode: i32,
    pub schunk: *mut c_void,
    pub filters: [u8; MAX_FILTERS],
    pub filters_meta: [u8; MAX_FILTERS],
    pub prefilter: blosc2_prefilter_fn,
    pub preparams: *mut blosc2_prefilter_params,
    pub tuner_params: *mut c_void,
    pub tuner_id: c_int,
    pub instr_codec: bool,
    pub codec_params: *mut c_void,
    pub filter_params: [*mut c_void; MAX_FILTERS],
}

/// `blosc2_dparams`, laid out as `blosc2.h` declares it.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct blosc2_dparams {
    pub nthreads: i16,
    pub schunk: *mut c_void,
    pub postfilter: blosc2_postfilter_fn,
    pub postparams: *mut blosc2_postfilter_params,
    pub typesize: i32,
}

const _: () = assert!(std::mem::size_of::<blosc2_cparams>() == 136);
const _: () = assert!(std::mem::offset_of!(blosc2_cparams, filters) == 32);
const _: () = assert!(std::mem::offset_of!(blosc2_cparams, instr_codec) == 76);
const _: () = assert!(std::mem::offset_of!(blosc2_cparams, filter_params) == 88);
const _: () = assert!(std::mem::size_of::<blosc2_dparams>() == 40);
const _: () = assert!(std::mem::offset_of!(blosc2_dparams, typesize) == 32);
const _: () = assert!(std::mem::size_of::<blosc2_prefilter_params>() == 88);
const _: () = assert!(std::mem::size_of::<blosc2_postfilter_params>() == 80);

/// `BLOSC2_CPARAMS_DEFAULTS`.
pub const CPARAMS_DEFAULTS: blosc2_cparams = blosc2_cparams {
    compcode: 0,
    compcode_meta: 0,
    clevel: 5,
    use_dict: 0,
    typesize: 8,
    nthreads: 1,
    blocksize: 0,
    splitmode: 4,
    schunk: std::ptr::null_mut(),
    filters: [0, 0, 0, 0, 0, 1],
    filters_meta: [0; 6],
    prefilter: None,
    preparams: std::ptr::null_mut(),
    tuner_params: std::ptr::null_mut(),
    tuner_id: 0,
    instr_codec: false,
    codec_params: std::ptr::null_mut(),
    filter_params: [std::ptr::null_mut(); 6],
};

/// `BLOSC2_DPARAMS_DEFAULTS`.
pub const DPARAMS_DEFAULTS: blosc2_dparams = blosc2_dparams {
    nthreads: 1,
    schunk: std::ptr::null_mut(),
    postfilter: None,
    postparams: std::ptr::null_mut(),
    typesize: 8,
};

/// A compression or decompression context (opaque to C).
pub struct blosc2_context {
    cparams: Option<blosc2_cparams>,
    dparams: Option<blosc2_dparams>,
    maskout: Option<Vec<bool>>,
}

fn splitmode_of(code: i32) -> Option<SplitMode> {
    Some(match code {
        1 => SplitMode::Always,
        2 => SplitMode::Never,
        3 => SplitMode::Auto,
        4 => SplitMode::ForwardCompat,
        _ => return None,
    })
}

/// The engine's parameters for C's; the error code when C's are invalid.
pub fn to_cparams(c: &blosc2_cparams) -> Result<CParams, c_int> {
    let codec = Codec::from_id(c.compcode).ok_or(err::CODEC_SUPPORT)?;
    if !codec.is_available() {
        return Err(err::CODEC_SUPPORT);
    }
    if c.clevel > 9 {
        return Err(err::CODEC_PARAM);
    }
    if c.typesize <= 0 || c.blocksize < 0 {
        return Err(err::INVALID_PARAM);
    }
    let mut p = CParams::default()
        .codec(codec)
        .clevel(c.clevel)
        .typesize(c.typesize as usize)
        .blocksize(c.blocksize as usize)
        .splitmode(splitmode_of(c.splitmode).unwrap_or(SplitMode::ForwardCompat))
        .nthreads(c.nthreads.max(1) as usize)
        .use_dict(c.use_dict != 0);
    p.codec_meta = c.compcode_meta;
    for s in 0..MAX_FILTERS {
        p.filters[s] = match c.filters[s] {
            0 => None,
            id => Some(Filter::from_id(id, c.filters_meta[s]).ok_or(err::FILTER_PIPELINE)?),
        };
        p.filters_meta[s] = c.filters_meta[s];
    }
    Ok(p)
}

/// The global settings of the non-context calls.
#[derive(Clone, Copy)]
struct Settings {
    codec: Codec,
    nthreads: i16,
    blocksize: usize,
    splitmode: SplitMode,
    delta: bool,
}

static SETTINGS: Mutex<Settings> = Mutex::new(Settings {
    codec: Codec::BloscLz,
    nthreads: 1,
    blocksize: 0,
    splitmode: SplitMode::ForwardCompat,
    delta: false,
});

fn settings() -> std::sync::MutexGuard<'static, Settings> {
    SETTINGS.lock().unwrap_or_else(|e| e.into_inner())
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// `BLOSC_NTHREADS`, when set: it must be in `1..=INT16_MAX`, and becomes
/// the global thread count.
fn env_nthreads() -> Result<(), c_int> {
    if let Some(v) = env("BLOSC_NTHREADS") {
        let v = strtol(&v);
        if !(1..=i64::from(i16::MAX)).contains(&v) {
            return Err(err::INVALID_PARAM);
        }
        settings().nthreads = v as i16;
    }
    Ok(())
}

/// C-Blosc2's checks before decoding: a 32-byte header with flag bits
/// from a future format is refused with `BLOSC2_ERROR_VERSION_SUPPORT`.
fn precheck(chunk: &[u8]) -> Result<(), c_int> {
    if chunk.len() >= EXTENDED_HEADER_LENGTH && chunk[2] & 0x05 == 0x05 && chunk[30] & !0x01 != 0 {
        return Err(err::VERSION_SUPPORT);
    }
    Ok(())
}

/// Compress `src[..nbytes]` into `dest[..destsize]` with `p`; C-Blosc2's
/// return convention (0 when it does not fit).
fn compress_raw(
    p: CParams,
    src: *const c_void,
    nbytes: usize,
    dest: *mut c_void,
    destsize: usize,
) -> c_int {
    if nbytes > MAX_BUFFERSIZE {
        return err::MAX_BUFSIZE_EXCEEDED;
    }
    if destsize < MAX_OVERHEAD {
        return err::WRITE_BUFFER;
    }
    if (src.is_null() && nbytes > 0) || (dest.is_null() && destsize > 0) {
        return err::NULL_POINTER;
    }
    // SAFETY: the caller gives `nbytes` readable bytes at src and
    // `destsize` writable ones at dest, not overlapping (C's contract).
    let (input, output) = unsafe { (slice_in(src, nbytes), slice_out(dest, destsize)) };
    match Compressor::new(p).compress_into(input, output) {
        Ok(n) => n as c_int,
        Err(e) if is_dst_too_small(&e) => 0,
        Err(e) => code_of(&e),
    }
}

/// The body of `blosc1_compress` / `blosc2_compress`: global settings and
/// the environment variables C-Blosc2 honours.
fn compress_global(
    clevel: c_int,
    doshuffle: c_int,
    typesize: usize,
    src: *const c_void,
    nbytes: usize,
    dest: *mut c_void,
    destsize: usize,
) -> c_int {
    let (mut clevel, mut doshuffle, mut typesize) = (clevel, doshuffle, typesize);
    if let Some(v) = env("BLOSC_CLEVEL") {
        let v = strtol(&v);
        if v >= 0 {
            clevel = v.min(i64::from(c_int::MAX)) as c_int;
        }
    }
    if let Some(v) = env("BLOSC_SHUFFLE") {
        match v.as_str() {
            "NOSHUFFLE" => doshuffle = 0,
            "SHUFFLE" => doshuffle = 1,
            "BITSHUFFLE" => doshuffle = 2,
            _ => eprintln!("BLOSC_SHUFFLE environment variable '{v}' not recognized"),
        }
    }
    if let Some(v) = env("BLOSC_DELTA") {
        settings().delta = strtol(&v) == 1;
    }
    if let Some(v) = env("BLOSC_TYPESIZE") {
        let v = strtol(&v);
        if v > 0 {
            typesize = v as usize;
        }
    }
    if let Some(v) = env("BLOSC_COMPRESSOR") {
        let Ok(name) = std::ffi::CString::new(v) else {
            return err::CODEC_SUPPORT;
        };
        // SAFETY: name is a NUL-terminated string.
        if unsafe { blosc1_set_compressor(name.as_ptr()) } < 0 {
            return err::CODEC_SUPPORT;
        }
    }
    if let Some(v) = env("BLOSC_BLOCKSIZE") {
        let v = strtol(&v);
        if v > 0 {
            settings().blocksize = v as usize;
        }
    }
    if let Err(e) = env_nthreads() {
        return e;
    }
    if let Some(v) = env("BLOSC_SPLITMODE") {
        let mode = match v.as_str() {
            "ALWAYS" => SplitMode::Always,
            "NEVER" => SplitMode::Never,
            "AUTO" => SplitMode::Auto,
            "FORWARD_COMPAT" => SplitMode::ForwardCompat,
            _ => {
                eprintln!("BLOSC_SPLITMODE environment variable '{v}' not recognized");
                return err::INVALID_PARAM;
            }
        };
        settings().splitmode = mode;
    }
    if !(0..=9).contains(&clevel) {
        return err::CODEC_PARAM;
    }
    if !(0..=4).contains(&doshuffle) {
        return err::INVALID_PARAM;
    }
    let s = *settings();
    let mut c = CPARAMS_DEFAULTS;
    c.compcode = s.codec.id();
    c.clevel = clevel as u8;
    c.typesize = typesize.clamp(1, i32::MAX as usize) as i32;
    c.nthreads = s.nthreads;
    c.blocksize = s.blocksize.min(i32::MAX as usize) as i32;
    c.splitmode = i32::from(s.splitmode.id());
    c.filters[MAX_FILTERS - 1] = doshuffle as u8;
    if s.delta {
        c.filters[MAX_FILTERS - 2] = 3;
    }
    match to_cparams(&c) {
        Ok(p) => compress_raw(p, src, nbytes, dest, destsize),
        Err(code) => code,
    }
}

/// Decompress the chunk `src` into `dest[..destsize]`.
fn decompress_raw(chunk: &[u8], dest: *mut c_void, destsize: usize, nthreads: i16) -> c_int {
    if dest.is_null() && destsize > 0 {
        return err::NULL_POINTER;
    }
    if let Err(e) = precheck(chunk) {
        return e;
    }
    // SAFETY: the caller gives `destsize` writable bytes at dest, not
    // overlapping src.
    let out = unsafe { slice_out(dest, destsize) };
    let mut d = Decompressor::new(DParams::default().nthreads(nthreads.max(1) as usize));
    match d.decompress_into(chunk, out) {
        Ok(n) => n as c_int,
        Err(e) => code_of(&e),
    }
}

/// The chunk at `src` of `srcsize` bytes, or the error code.
fn chunk_sized<'a>(src: *const c_void, srcsize: i32) -> Result<&'a [u8], c_int> {
    if src.is_null() {
        return Err(err::NULL_POINTER);
    }
    if srcsize < MIN_HEADER_LENGTH as i32 {
        return Err(err::READ_BUFFER);
    }
    // SAFETY: the caller gives `srcsize` readable bytes at src.
    Ok(unsafe { slice_in(src, srcsize as usize) })
}

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

fn codec_cname(c: Codec) -> &'static CStr {
    match c {
        Codec::BloscLz => c"blosclz",
        Codec::Lz4 => c"lz4",
        Codec::Lz4Hc => c"lz4hc",
        Codec::Zlib => c"zlib",
        Codec::Zstd => c"zstd",
        _ => c"unknown",
    }
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

// ---------------------------------------------------------------------------
// Blosc1-style calls.

/// `blosc1_compress`: a Blosc2 chunk with the global settings.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc1_compress(
    clevel: c_int,
    doshuffle: c_int,
    typesize: usize,
    nbytes: usize,
    src: *const c_void,
    dest: *mut c_void,
    destsize: usize,
) -> c_int {
    guard(err::FAILURE, || {
        compress_global(clevel, doshuffle, typesize, src, nbytes, dest, destsize)
    })
}

/// `blosc1_decompress`: the chunk's size comes from its header.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc1_decompress(
    src: *const c_void,
    dest: *mut c_void,
    destsize: usize,
) -> c_int {
    guard(err::FAILURE, || {
        if src.is_null() {
            return err::NULL_POINTER;
        }
        // SAFETY: src holds a whole chunk (C-Blosc2's contract for this call).
        let Some(chunk) = (unsafe { chunk_at(src) }) else {
            return err::INVALID_HEADER;
        };
        if let Err(e) = env_nthreads() {
            return e;
        }
        let nthreads = settings().nthreads;
        decompress_raw(chunk, dest, destsize.min(i32::MAX as usize), nthreads)
    })
}

/// Items of a chunk (count in the header's typesize) into `dest[..destsize]`.
fn getitem_raw(
    chunk: &[u8],
    start: c_int,
    nitems: c_int,
    dest: *mut c_void,
    destsize: usize,
) -> c_int {
    if start < 0 || nitems < 0 {
        return err::INVALID_PARAM;
    }
    if let Err(e) = precheck(chunk) {
        return e;
    }
    let h = match ChunkHeader::parse(chunk) {
        Ok(h) => h,
        Err(e) => return code_of(&e),
    };
    let ts = usize::from(h.typesize).max(1);
    let (start, nitems) = (start as usize, nitems as usize);
    if start + nitems > h.nbytes / ts && !(nitems == 0 && start <= h.nbytes / ts) {
        return err::INVALID_PARAM;
    }
    let len = nitems * ts;
    if len > destsize {
        return err::WRITE_BUFFER;
    }
    if dest.is_null() && len > 0 {
        return err::NULL_POINTER;
    }
    // SAFETY: dest has `destsize >= len` writable bytes.
    let out = unsafe { slice_out(dest, len) };
    let mut d = Decompressor::new(DParams::default());
    match d.getitem_into(chunk, start, nitems, out) {
        Ok(n) => n as c_int,
        Err(e) => code_of(&e),
    }
}

/// `blosc1_getitem`: the chunk's size comes from its header, dest holds
/// the items.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc1_getitem(
    src: *const c_void,
    start: c_int,
    nitems: c_int,
    dest: *mut c_void,
) -> c_int {
    guard(err::FAILURE, || {
        if src.is_null() {
            return err::NULL_POINTER;
        }
        // SAFETY: src holds a whole chunk.
        let Some(chunk) = (unsafe { chunk_at(src) }) else {
            return err::INVALID_HEADER;
        };
        getitem_raw(chunk, start, nitems, dest, usize::MAX)
    })
}

/// `blosc2_getitem`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_getitem(
    src: *const c_void,
    srcsize: i32,
    start: c_int,
    nitems: c_int,
    dest: *mut c_void,
    destsize: i32,
) -> c_int {
    guard(err::FAILURE, || match chunk_sized(src, srcsize) {
        Ok(chunk) => getitem_raw(chunk, start, nitems, dest, destsize.max(0) as usize),
        Err(e) => e,
    })
}

/// # Safety
/// `p` is null or writable.
unsafe fn put<T>(p: *mut T, v: T) {
    if !p.is_null() {
        // SAFETY: p is non-null and writable (the caller's contract).
        unsafe { *p = v };
    }
}

/// `nbytes`, `cbytes`, `blocksize` of a chunk header.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc1_cbuffer_sizes(
    cbuffer: *const c_void,
    nbytes: *mut usize,
    cbytes: *mut usize,
    blocksize: *mut usize,
) {
    guard((), || {
        let (mut n, mut c, mut b) = (0i32, 0i32, 0i32);
        // SAFETY: cbuffer holds a header; the out-pointers are writable.
        unsafe {
            blosc2_cbuffer_sizes(cbuffer, &mut n, &mut c, &mut b);
            put(nbytes, n as u32 as usize);
            put(cbytes, c as u32 as usize);
            put(blocksize, b as u32 as usize);
        }
    })
}

/// `nbytes`, `cbytes`, `blocksize` of a chunk header; 0 or an error code.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_cbuffer_sizes(
    cbuffer: *const c_void,
    nbytes: *mut i32,
    cbytes: *mut i32,
    blocksize: *mut i32,
) -> c_int {
    guard(err::FAILURE, || {
        if cbuffer.is_null() {
            return err::NULL_POINTER;
        }
        // SAFETY: cbuffer holds at least a 16-byte header.
        let h = unsafe { header16(cbuffer) };
        if h[0] == 0 || h[0] > 6 {
            // SAFETY: the out-pointers are null or writable.
            unsafe {
                put(nbytes, 0);
                put(cbytes, 0);
                put(blocksize, 0);
            }
            return err::VERSION_SUPPORT;
        }
        // SAFETY: the out-pointers are null or writable.
        unsafe {
            put(nbytes, le_i32(&h, 4));
            put(cbytes, le_i32(&h, 12));
            put(blocksize, le_i32(&h, 8));
        }
        0
    })
}

/// 0 (and `*nbytes`) when `cbytes` bytes at `cbuffer` may be a chunk.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc1_cbuffer_validate(
    cbuffer: *const c_void,
    cbytes: usize,
    nbytes: *mut usize,
) -> c_int {
    guard(-1, || {
        if cbytes < MIN_HEADER_LENGTH || cbuffer.is_null() {
            return -1;
        }
        let (mut n, mut c, mut b) = (0i32, 0i32, 0i32);
        // SAFETY: cbuffer holds a header of at least 16 bytes.
        let rc = unsafe { blosc2_cbuffer_sizes(cbuffer, &mut n, &mut c, &mut b) };
        // SAFETY: nbytes is null or writable.
        unsafe { put(nbytes, n as u32 as usize) };
        if rc < 0 || c as u32 as usize != cbytes || n < 0 || n as usize > MAX_BUFFERSIZE {
            return -1;
        }
        0
    })
}

/// Type size and flags of a chunk.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc1_cbuffer_metainfo(
    cbuffer: *const c_void,
    typesize: *mut usize,
    flags: *mut c_int,
) {
    guard((), || {
        let (t, f) = if cbuffer.is_null() {
            (0, 0)
        } else {
            // SAFETY: cbuffer holds at least a 16-byte header.
            let h = unsafe { header16(cbuffer) };
            if h[0] == 0 || h[0] > 6 {
                (0, 0)
            } else {
                (usize::from(h[3]), c_int::from(h[2]))
            }
        };
        // SAFETY: the out-pointers are null or writable.
        unsafe {
            put(typesize, t);
            put(flags, f);
        }
    })
}

/// Format version and codec format version of a chunk.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_cbuffer_versions(
    cbuffer: *const c_void,
    version: *mut c_int,
    versionlz: *mut c_int,
) {
    guard((), || {
        let (v, c) = if cbuffer.is_null() {
            (0, 0)
        } else {
            // SAFETY: cbuffer holds at least a 16-byte header.
            let h = unsafe { header16(cbuffer) };
            (c_int::from(h[0]), c_int::from(h[1]))
        };
        // SAFETY: the out-pointers are null or writable.
        unsafe {
            put(version, v);
            put(versionlz, c);
        }
    })
}

/// The codec library of a chunk.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_cbuffer_complib(cbuffer: *const c_void) -> *const c_char {
    guard(std::ptr::null(), || {
        if cbuffer.is_null() {
            return std::ptr::null();
        }
        // SAFETY: cbuffer holds at least a 16-byte header.
        let h = unsafe { header16(cbuffer) };
        let format = h[2] >> 5;
        if format == 6 {
            return c"udcodec".as_ptr();
        }
        complib_of_format(format).map_or(std::ptr::null(), |s| s.as_ptr())
    })
}

// ---------------------------------------------------------------------------
// Blosc2 calls with global settings.

/// `blosc2_compress`: global settings, `doshuffle` in the last filter slot.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_compress(
    clevel: c_int,
    doshuffle: c_int,
    typesize: i32,
    src: *const c_void,
    srcsize: i32,
    dest: *mut c_void,
    destsize: i32,
) -> c_int {
    guard(err::FAILURE, || {
        if srcsize < 0 || destsize < 0 || typesize < 0 {
            return err::INVALID_PARAM;
        }
        compress_global(
            clevel,
            doshuffle,
            typesize as usize,
            src,
            srcsize as usize,
            dest,
            destsize as usize,
        )
    })
}

/// `blosc2_decompress`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_decompress(
    src: *const c_void,
    srcsize: i32,
    dest: *mut c_void,
    destsize: i32,
) -> c_int {
    guard(err::FAILURE, || {
        if destsize < 0 {
            return err::INVALID_PARAM;
        }
        let chunk = match chunk_sized(src, srcsize) {
            Ok(c) => c,
            Err(e) => return e,
        };
        if let Err(e) = env_nthreads() {
            return e;
        }
        let nthreads = settings().nthreads;
        decompress_raw(chunk, dest, destsize as usize, nthreads)
    })
}

// ---------------------------------------------------------------------------
// Contexts.

/// A compression context for `cparams` (checked when used).
#[unsafe(no_mangle)]
pub extern "C" fn blosc2_create_cctx(cparams: blosc2_cparams) -> *mut blosc2_context {
    guard(std::ptr::null_mut(), || {
        Box::into_raw(Box::new(blosc2_context {
            cparams: Some(cparams),
            dparams: None,
            maskout: None,
        }))
    })
}

/// A decompression context for `dparams`.
#[unsafe(no_mangle)]
pub extern "C" fn blosc2_create_dctx(dparams: blosc2_dparams) -> *mut blosc2_context {
    guard(std::ptr::null_mut(), || {
        Box::into_raw(Box::new(blosc2_context {
            cparams: None,
            dparams: Some(dparams),
            maskout: None,
        }))
    })
}

/// Free a context (null is ignored).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_free_ctx(context: *mut blosc2_context) {
    guard((), || {
        if !context.is_null() {
            // SAFETY: context came from blosc2_create_cctx/dctx (Box::into_raw)
            // and is freed once (C's contract).
            drop(unsafe { Box::from_raw(context) });
        }
    })
}

/// # Safety
/// `ctx` is null or a live context from `blosc2_create_*ctx`.
unsafe fn ctx_mut<'a>(ctx: *mut blosc2_context) -> Option<&'a mut blosc2_context> {
    // SAFETY: the caller's contract.
    unsafe { ctx.as_mut() }
}

/// The cparams of a compression context; 0 or an error code.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_ctx_get_cparams(
    ctx: *mut blosc2_context,
    cparams: *mut blosc2_cparams,
) -> c_int {
    guard(err::FAILURE, || {
        // SAFETY: ctx is a live context or null.
        let Some(c) = (unsafe { ctx_mut(ctx) }) else {
            return err::NULL_POINTER;
        };
        let Some(cp) = c.cparams else {
            return err::INVALID_PARAM;
        };
        if cparams.is_null() {
            return err::NULL_POINTER;
        }
        // SAFETY: cparams is non-null and writable.
        unsafe { *cparams = cp };
        0
    })
}

/// The dparams of a decompression context; 0 or an error code.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_ctx_get_dparams(
    ctx: *mut blosc2_context,
    dparams: *mut blosc2_dparams,
) -> c_int {
    guard(err::FAILURE, || {
        // SAFETY: ctx is a live context or null.
        let Some(c) = (unsafe { ctx_mut(ctx) }) else {
            return err::NULL_POINTER;
        };
        let Some(dp) = c.dparams else {
            return err::INVALID_PARAM;
        };
        if dparams.is_null() {
            return err::NULL_POINTER;
        }
        // SAFETY: dparams is non-null and writable.
        unsafe { *dparams = dp };
        0
    })
}

/// Mask out blocks for the next decompression with `ctx`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_set_maskout(
    ctx: *mut blosc2_context,
    maskout: *mut bool,
    nblocks: c_int,
) -> c_int {
    guard(err::FAILURE, || {
        // SAFETY: ctx is a live context or null.
        let Some(c) = (unsafe { ctx_mut(ctx) }) else {
            return err::NULL_POINTER;
        };
        if maskout.is_null() || nblocks < 0 {
            return err::INVALID_PARAM;
        }
        // SAFETY: maskout points to nblocks bools (C's contract).
        let m = unsafe { std::slice::from_raw_parts(maskout, nblocks as usize) };
        c.maskout = Some(m.to_vec());
        0
    })
}

/// `blosc2_compress_ctx`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_compress_ctx(
    context: *mut blosc2_context,
    src: *const c_void,
    srcsize: i32,
    dest: *mut c_void,
    destsize: i32,
) -> c_int {
    guard(err::FAILURE, || {
        // SAFETY: context is a live context or null.
        let Some(ctx) = (unsafe { ctx_mut(context) }) else {
            return err::NULL_POINTER;
        };
        let Some(cp) = ctx.cparams else {
            return err::INVALID_PARAM;
        };
        if srcsize < 0 || destsize < 0 {
            return err::INVALID_PARAM;
        }
        let p = match to_cparams(&cp) {
            Ok(p) => p,
            Err(e) => return e,
        };
        if cp.prefilter.is_some() {
            return compress_prefiltered(
                ctx,
                &cp,
                p,
                src,
                srcsize as usize,
                dest,
                destsize as usize,
            );
        }
        compress_raw(p, src, srcsize as usize, dest, destsize as usize)
    })
}

/// Compression with a prefilter: the chunk is laid out first (block size),
/// then the prefilter fills each block from `src`, then the filled buffer
/// is compressed with the same parameters (so the same blocks).
fn compress_prefiltered(
    ctx: &mut blosc2_context,
    cp: &blosc2_cparams,
    p: CParams,
    src: *const c_void,
    nbytes: usize,
    dest: *mut c_void,
    destsize: usize,
) -> c_int {
    if src.is_null() && nbytes > 0 {
        return err::NULL_POINTER;
    }
    // SAFETY: src has nbytes readable bytes.
    let input = unsafe { slice_in(src, nbytes) };
    let probe = match Compressor::new(p.clone()).compress(input) {
        Ok(c) => c,
        Err(e) => return code_of(&e),
    };
    let blocksize = le_i32(&probe, 8).max(1) as usize;
    let mut filled = vec![0u8; nbytes];
    let mut ttmp = vec![0u8; blocksize * 4];
    let Some(prefilter) = cp.prefilter else {
        return err::FAILURE;
    };
    let ctx_ptr: *mut blosc2_context = ctx;
    for (nblock, out) in filled.chunks_mut(blocksize).enumerate() {
        let offset = nblock * blocksize;
        let mut pp = blosc2_prefilter_params {
            user_data: if cp.preparams.is_null() {
                std::ptr::null_mut()
            } else {
                // SAFETY: preparams is non-null and points to the caller's params.
                unsafe { (*cp.preparams).user_data }
            },
            input: input[offset..].as_ptr(),
            output: out.as_mut_ptr(),
            output_size: out.len() as i32,
            output_typesize: cp.typesize,
            output_offset: offset as i32,
            nchunk: -1,
            nblock: nblock as i32,
            tid: 0,
            ttmp: ttmp.as_mut_ptr(),
            ttmp_nbytes: ttmp.len(),
            ctx: ctx_ptr,
            output_is_disposable: false,
        };
        // SAFETY: the prefilter is the caller's function; its params point to
        // live buffers of the sizes given.
        if unsafe { prefilter(&mut pp) } != 0 {
            return err::FAILURE;
        }
    }
    compress_raw(p, filled.as_ptr() as *const c_void, nbytes, dest, destsize)
}

/// `blosc2_decompress_ctx`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_decompress_ctx(
    context: *mut blosc2_context,
    src: *const c_void,
    srcsize: i32,
    dest: *mut c_void,
    destsize: i32,
) -> c_int {
    guard(err::FAILURE, || {
        // SAFETY: context is a live context or null.
        let Some(ctx) = (unsafe { ctx_mut(context) }) else {
            return err::NULL_POINTER;
        };
        let dp = ctx.dparams.unwrap_or(DPARAMS_DEFAULTS);
        if destsize < 0 {
            return err::INVALID_PARAM;
        }
        let chunk = match chunk_sized(src, srcsize) {
            Ok(c) => c,
            Err(e) => return e,
        };
        let maskout = ctx.maskout.take();
        if maskout.is_none() && dp.postfilter.is_none() {
            return decompress_raw(chunk, dest, destsize as usize, dp.nthreads);
        }
        decompress_special(ctx, &dp, chunk, dest, destsize as usize, maskout)
    })
}

/// Decompression with a mask or a postfilter: the whole chunk is decoded
/// into a scratch buffer, then each block kept is copied (or handed to the
/// postfilter) into `dest`.
fn decompress_special(
    ctx: &mut blosc2_context,
    dp: &blosc2_dparams,
    chunk: &[u8],
    dest: *mut c_void,
    destsize: usize,
    maskout: Option<Vec<bool>>,
) -> c_int {
    let h = match ChunkHeader::parse(chunk) {
        Ok(h) => h,
        Err(e) => return code_of(&e),
    };
    if h.nbytes > destsize {
        return err::WRITE_BUFFER;
    }
    if dest.is_null() && h.nbytes > 0 {
        return err::NULL_POINTER;
    }
    let mut tmp = vec![0u8; h.nbytes];
    let mut d = Decompressor::new(DParams::default().nthreads(dp.nthreads.max(1) as usize));
    if let Err(e) = d.decompress_into(chunk, &mut tmp) {
        return code_of(&e);
    }
    // SAFETY: dest has destsize >= nbytes writable bytes.
    let out = unsafe { slice_out(dest, h.nbytes) };
    let bs = h.blocksize.max(1);
    let mut ttmp = vec![0u8; bs * 4];
    let ctx_ptr: *mut blosc2_context = ctx;
    for (nblock, (inb, outb)) in tmp.chunks(bs).zip(out.chunks_mut(bs)).enumerate() {
        if maskout
            .as_ref()
            .is_some_and(|m| m.get(nblock).copied().unwrap_or(false))
        {
            continue;
        }
        match dp.postfilter {
            Some(post) => {
                let mut pp = blosc2_postfilter_params {
                    user_data: if dp.postparams.is_null() {
                        std::ptr::null_mut()
                    } else {
                        // SAFETY: postparams is non-null: the caller's params.
                        unsafe { (*dp.postparams).user_data }
                    },
                    input: inb.as_ptr(),
                    output: outb.as_mut_ptr(),
                    size: inb.len() as i32,
                    typesize: i32::from(h.typesize),
                    offset: (nblock * bs) as i32,
                    nchunk: -1,
                    nblock: nblock as i32,
                    tid: 0,
                    ttmp: ttmp.as_mut_ptr(),
                    ttmp_nbytes: ttmp.len(),
                    ctx: ctx_ptr,
                };
                // SAFETY: the caller's postfilter, with live buffers of the
                // sizes given.
                if unsafe { post(&mut pp) } != 0 {
                    return err::POSTFILTER;
                }
            }
            None => outb.copy_from_slice(inb),
        }
    }
    h.nbytes as c_int
}

/// `blosc2_getitem_ctx`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_getitem_ctx(
    context: *mut blosc2_context,
    src: *const c_void,
    srcsize: i32,
    start: c_int,
    nitems: c_int,
    dest: *mut c_void,
    destsize: i32,
) -> c_int {
    guard(err::FAILURE, || {
        // SAFETY: context is a live context or null.
        let Some(ctx) = (unsafe { ctx_mut(context) }) else {
            return err::NULL_POINTER;
        };
        let chunk = match chunk_sized(src, srcsize) {
            Ok(c) => c,
            Err(e) => return e,
        };
        let dp = ctx.dparams.unwrap_or(DPARAMS_DEFAULTS);
        if dp.postfilter.is_some() {
            return getitem_postfiltered(ctx, &dp, chunk, start, nitems, dest, destsize);
        }
        getitem_raw(chunk, start, nitems, dest, destsize.max(0) as usize)
    })
}

/// getitem through a postfilter: decode the chunk with it, then copy.
fn getitem_postfiltered(
    ctx: &mut blosc2_context,
    dp: &blosc2_dparams,
    chunk: &[u8],
    start: c_int,
    nitems: c_int,
    dest: *mut c_void,
    destsize: i32,
) -> c_int {
    let h = match ChunkHeader::parse(chunk) {
        Ok(h) => h,
        Err(e) => return code_of(&e),
    };
    if start < 0 || nitems < 0 {
        return err::INVALID_PARAM;
    }
    let ts = usize::from(h.typesize).max(1);
    let (s, n) = (start as usize * ts, nitems as usize * ts);
    if s + n > h.nbytes {
        return err::INVALID_PARAM;
    }
    if n > destsize.max(0) as usize {
        return err::WRITE_BUFFER;
    }
    let mut full = vec![0u8; h.nbytes];
    let rc = decompress_special(
        ctx,
        dp,
        chunk,
        full.as_mut_ptr() as *mut c_void,
        full.len(),
        None,
    );
    if rc < 0 {
        return rc;
    }
    // SAFETY: dest has at least n writable bytes.
    unsafe { slice_out(dest, n) }.copy_from_slice(&full[s..s + n]);
    n as c_int
}

/// `blosc2_getitem_bytes_ctx`: bytes `[start, start + nbytes)`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_getitem_bytes_ctx(
    context: *mut blosc2_context,
    src: *const c_void,
    srcsize: i32,
    start: i32,
    nbytes: i32,
    dest: *mut c_void,
    destsize: i32,
) -> c_int {
    guard(err::FAILURE, || {
        if context.is_null() {
            return err::NULL_POINTER;
        }
        let chunk = match chunk_sized(src, srcsize) {
            Ok(c) => c,
            Err(e) => return e,
        };
        if start < 0 || nbytes < 0 {
            return err::INVALID_PARAM;
        }
        let h = match ChunkHeader::parse(chunk) {
            Ok(h) => h,
            Err(e) => return code_of(&e),
        };
        let (s, n) = (start as usize, nbytes as usize);
        if s + n > h.nbytes {
            return err::INVALID_PARAM;
        }
        if n > destsize.max(0) as usize {
            return err::WRITE_BUFFER;
        }
        if n == 0 {
            return 0;
        }
        let ts = usize::from(h.typesize).max(1);
        if s % ts != 0 || n % ts != 0 {
            return err::INVALID_PARAM;
        }
        let first = s / ts;
        let last = (s + n).div_ceil(ts).min(h.nbytes / ts);
        let mut d = Decompressor::new(DParams::default());
        let bytes = if (s + n).div_ceil(ts) > h.nbytes / ts {
            // The range reaches into a tail shorter than one item.
            match d.decompress(chunk) {
                Ok(all) => all[s..s + n].to_vec(),
                Err(e) => return code_of(&e),
            }
        } else {
            match d.getitem(chunk, first, last - first) {
                Ok(items) => items[s - first * ts..s - first * ts + n].to_vec(),
                Err(e) => return code_of(&e),
            }
        };
        // SAFETY: dest has at least n writable bytes.
        unsafe { slice_out(dest, n) }.copy_from_slice(&bytes);
        n as c_int
    })
}

// ---------------------------------------------------------------------------
// Special chunks.

fn special(
    cparams: &blosc2_cparams,
    nbytes: i32,
    dest: *mut c_void,
    destsize: i32,
    kind: SpecialValue,
    value: &[u8],
) -> c_int {
    if nbytes < 0 {
        return err::INVALID_PARAM;
    }
    // Special chunks have no streams, so no dictionary either.
    let p = match to_cparams(cparams) {
        Ok(p) => p.use_dict(false),
        Err(e) => return e,
    };
    let chunk = match special_chunk(&p, nbytes as usize, kind, value) {
        Ok(c) => c,
        Err(e) => return code_of(&e),
    };
    if chunk.len() > destsize.max(0) as usize {
        return err::WRITE_BUFFER;
    }
    if dest.is_null() {
        return err::NULL_POINTER;
    }
    // SAFETY: dest has destsize >= chunk.len() writable bytes.
    unsafe { slice_out(dest, chunk.len()) }.copy_from_slice(&chunk);
    chunk.len() as c_int
}

/// A chunk of `nbytes` zeros.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_chunk_zeros(
    cparams: blosc2_cparams,
    nbytes: i32,
    dest: *mut c_void,
    destsize: i32,
) -> c_int {
    guard(err::FAILURE, || {
        special(&cparams, nbytes, dest, destsize, SpecialValue::Zeros, &[])
    })
}

/// A chunk of `nbytes` of NaNs (typesize 4 or 8).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_chunk_nans(
    cparams: blosc2_cparams,
    nbytes: i32,
    dest: *mut c_void,
    destsize: i32,
) -> c_int {
    guard(err::FAILURE, || {
        special(&cparams, nbytes, dest, destsize, SpecialValue::Nan, &[])
    })
}

/// A chunk of `nbytes` without defined content.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_chunk_uninit(
    cparams: blosc2_cparams,
    nbytes: i32,
    dest: *mut c_void,
    destsize: i32,
) -> c_int {
    guard(err::FAILURE, || {
        special(&cparams, nbytes, dest, destsize, SpecialValue::Uninit, &[])
    })
}

/// A chunk of `nbytes` repeating the `typesize`-byte value at `repeatval`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_chunk_repeatval(
    cparams: blosc2_cparams,
    nbytes: i32,
    dest: *mut c_void,
    destsize: i32,
    repeatval: *const c_void,
) -> c_int {
    guard(err::FAILURE, || {
        if repeatval.is_null() {
            return err::NULL_POINTER;
        }
        if cparams.typesize <= 0 {
            return err::INVALID_PARAM;
        }
        // SAFETY: repeatval points to one typesize-byte value.
        let v = unsafe { slice_in(repeatval, cparams.typesize as usize) };
        special(&cparams, nbytes, dest, destsize, SpecialValue::Value, v)
    })
}

// ---------------------------------------------------------------------------
// Shuffle helpers.

type KernelFn = fn(&Kernels, usize, &[u8], &mut [u8]) -> Result<(), oxiblosc::kernels::Error>;

fn run_kernel(
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

// ---------------------------------------------------------------------------
// VL-block chunks (decoding; the engine has no public VL-block writer).

unsafe extern "C" {
    fn malloc(size: usize) -> *mut c_void;
}

/// A malloc'ed copy of `b` (the caller `free()`s it); null on failure.
fn malloc_copy(b: &[u8]) -> *mut u8 {
    // SAFETY: malloc has no preconditions; null is checked.
    let p = unsafe { malloc(b.len().max(1)) } as *mut u8;
    if !p.is_null() {
        // SAFETY: p holds b.len() fresh bytes, not overlapping b.
        unsafe { std::ptr::copy_nonoverlapping(b.as_ptr(), p, b.len()) };
    }
    p
}

fn vl_header(src: *const c_void, srcsize: i32) -> Result<(&'static [u8], ChunkHeader), c_int> {
    let chunk = chunk_sized(src, srcsize)?;
    let h = ChunkHeader::parse(chunk).map_err(|e| code_of(&e))?;
    if !h.is_vlblocks() {
        return Err(err::INVALID_PARAM);
    }
    Ok((chunk, h))
}

/// The number of blocks of a VL-block chunk (header only); 0 or an error.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_vlchunk_get_nblocks(
    src: *const c_void,
    srcsize: i32,
    nblocks: *mut i32,
) -> c_int {
    guard(err::FAILURE, || {
        if nblocks.is_null() {
            return err::NULL_POINTER;
        }
        match vl_header(src, srcsize) {
            Ok((_, h)) => {
                // SAFETY: nblocks is non-null and writable.
                unsafe { *nblocks = h.nblocks().min(i32::MAX as usize) as i32 };
                0
            }
            Err(e) => e,
        }
    })
}

fn vl_blocks(dp: &blosc2_dparams, chunk: &[u8]) -> Result<Vec<Vec<u8>>, c_int> {
    let mut d = Decompressor::new(DParams::default().nthreads(dp.nthreads.max(1) as usize));
    d.vl_blocks(chunk).map_err(|e| code_of(&e))
}

/// Decode every block of a VL-block chunk into malloc'ed buffers; their
/// number.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_vldecompress_ctx(
    context: *mut blosc2_context,
    src: *const c_void,
    srcsize: i32,
    dests: *mut *mut c_void,
    destsizes: *mut i32,
    maxblocks: i32,
) -> c_int {
    guard(err::FAILURE, || {
        // SAFETY: context is a live context or null.
        let Some(ctx) = (unsafe { ctx_mut(context) }) else {
            return err::NULL_POINTER;
        };
        if dests.is_null() || destsizes.is_null() {
            return err::NULL_POINTER;
        }
        let chunk = match vl_header(src, srcsize) {
            Ok((c, _)) => c,
            Err(e) => return e,
        };
        let blocks = match vl_blocks(&ctx.dparams.unwrap_or(DPARAMS_DEFAULTS), chunk) {
            Ok(b) => b,
            Err(e) => return e,
        };
        if blocks.len() > maxblocks.max(0) as usize {
            return err::WRITE_BUFFER;
        }
        for (i, b) in blocks.iter().enumerate() {
            // SAFETY: dests and destsizes have maxblocks >= blocks.len() entries.
            unsafe {
                *dests.add(i) = malloc_copy(b) as *mut c_void;
                *destsizes.add(i) = b.len() as i32;
            }
        }
        blocks.len() as c_int
    })
}

/// Decode block `nblock` of a VL-block chunk into a malloc'ed buffer; its
/// size.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_vldecompress_block_ctx(
    context: *mut blosc2_context,
    src: *const c_void,
    srcsize: i32,
    nblock: i32,
    dest: *mut *mut u8,
    destsize: *mut i32,
) -> c_int {
    guard(err::FAILURE, || {
        // SAFETY: context is a live context or null.
        let Some(ctx) = (unsafe { ctx_mut(context) }) else {
            return err::NULL_POINTER;
        };
        if dest.is_null() || destsize.is_null() {
            return err::NULL_POINTER;
        }
        let (chunk, h) = match vl_header(src, srcsize) {
            Ok(x) => x,
            Err(e) => return e,
        };
        if nblock < 0 || nblock as usize >= h.nblocks() {
            return err::INVALID_PARAM;
        }
        let blocks = match vl_blocks(&ctx.dparams.unwrap_or(DPARAMS_DEFAULTS), chunk) {
            Ok(b) => b,
            Err(e) => return e,
        };
        let b = &blocks[nblock as usize];
        // SAFETY: dest and destsize are non-null and writable.
        unsafe {
            *dest = malloc_copy(b);
            *destsize = b.len() as i32;
        }
        b.len() as c_int
    })
}
