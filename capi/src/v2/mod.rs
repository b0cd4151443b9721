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
    c_strdup, chunk_at, codec_cname, codec_of_code, complib_info, complib_of_format, guard,
    header16, is_dst_too_small, le_i32, malloc_copy, slice_in, slice_out, str_arg, strtol,
};

mod compress;
mod ctx;
mod global;
#[cfg(test)]
mod maskout_tests;
pub(crate) mod plugins;
#[cfg(test)]
mod reentry_tests;
mod shuffle;
mod special;
#[cfg(test)]
mod test_calls;
mod vlchunk;

pub use compress::*;
pub use ctx::*;
pub use global::*;
pub use shuffle::*;
pub use special::*;
pub use vlchunk::*;

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
    pub const FILE_WRITE: i32 = -14;
    pub const FILE_OPEN: i32 = -15;
    pub const FILTER_PIPELINE: i32 = -18;
    pub const POSTFILTER: i32 = -27;
    pub const NULL_POINTER: i32 = -32;
    pub const INVALID_INDEX: i32 = -33;
    pub const METALAYER_NOT_FOUND: i32 = -34;
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

// `blosc2_context` (C-visible head declared by our `context.h`) is in ctx.rs.

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
    match crate::engines::with_compressor(p, |c| c.compress_into_all_room(input, output)) {
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
    let p = DParams::default().nthreads(nthreads.max(1) as usize);
    crate::engines::with_decompressor(p, |d| decompress_with(d, chunk, dest, destsize, None))
}

/// [`decompress_raw`] with the given decompressor.
/// `maskout`: the context's block mask (`blosc2_set_maskout`), if any.
#[inline(always)]
fn decompress_with(
    d: &mut Decompressor,
    chunk: &[u8],
    dest: *mut c_void,
    destsize: usize,
    maskout: Option<&[bool]>,
) -> c_int {
    if dest.is_null() && destsize > 0 {
        return err::NULL_POINTER;
    }
    if let Err(e) = precheck(chunk) {
        return e;
    }
    // SAFETY: the caller gives `destsize` writable bytes at dest, not
    // overlapping src.
    let out = unsafe { slice_out(dest, destsize) };
    let r = match maskout {
        None => d.decompress_into(chunk, out),
        Some(m) => match mask_fits(chunk, m) {
            Ok(()) => d.decompress_masked_into(chunk, m, out),
            Err(code) => return code,
        },
    };
    match r {
        Ok(n) => n as c_int,
        Err(e) => code_of(&e),
    }
}

/// C-Blosc2's check of a block mask: one flag per block of the chunk, else
/// `BLOSC2_ERROR_DATA`.
pub(super) fn mask_fits(chunk: &[u8], maskout: &[bool]) -> Result<(), c_int> {
    match ChunkHeader::parse(chunk) {
        Ok(h) if h.nblocks() == maskout.len() => Ok(()),
        Ok(_) => Err(err::DATA),
        Err(e) => Err(code_of(&e)),
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
