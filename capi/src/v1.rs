//! The C-Blosc 1.x ABI (`blosc.h`): `blosc_*`, writing Blosc1 chunks
//! (16-byte header, format version 2) that every C-Blosc 1.x reads.

use std::ffi::{CStr, c_char, c_int, c_void};
use std::sync::Mutex;

use oxiblosc::{CParams, ChunkFormat, Codec, DParams, Filter, SplitMode};

use crate::common::{
    c_strdup, chunk_at, codec_cname, codec_of_code, complib_info, complib_of_format, guard,
    header16, is_dst_too_small, le_i32, slice_in, slice_out, str_arg, strtol,
};

/// `BLOSC_VERSION_STRING` of the ABI implemented.
pub const VERSION_STRING: &CStr = c"1.21.6";
/// `BLOSC_VERSION_FORMAT`: the chunk format version written.
const VERSION_FORMAT: u8 = 2;
const MIN_HEADER_LENGTH: usize = 16;
const MAX_OVERHEAD: usize = MIN_HEADER_LENGTH;
const MAX_BUFFERSIZE: usize = i32::MAX as usize - MAX_OVERHEAD;
const MAX_THREADS: c_int = 256;

/// The global settings of the non-`_ctx` calls.
#[derive(Clone, Copy)]
struct Settings {
    codec: Codec,
    nthreads: c_int,
    blocksize: usize,
    splitmode: SplitMode,
}

static SETTINGS: Mutex<Settings> = Mutex::new(Settings {
    codec: Codec::BloscLz,
    nthreads: 1,
    blocksize: 0,
    splitmode: SplitMode::ForwardCompat,
});

fn settings() -> std::sync::MutexGuard<'static, Settings> {
    SETTINGS.lock().unwrap_or_else(|e| e.into_inner())
}

fn splitmode_of(code: c_int) -> Option<SplitMode> {
    Some(match code {
        1 => SplitMode::Always,
        2 => SplitMode::Never,
        3 => SplitMode::Auto,
        4 => SplitMode::ForwardCompat,
        _ => return None,
    })
}

/// Compress with everything decided: the body of every compress call.
#[allow(clippy::too_many_arguments)]
fn compress_impl(
    clevel: c_int,
    doshuffle: c_int,
    typesize: usize,
    nbytes: usize,
    src: *const c_void,
    dest: *mut c_void,
    destsize: usize,
    codec: Codec,
    blocksize: usize,
    nthreads: c_int,
    splitmode: SplitMode,
) -> c_int {
    if nbytes > MAX_BUFFERSIZE || destsize < MAX_OVERHEAD {
        return 0;
    }
    if !(0..=9).contains(&clevel) || !(0..=2).contains(&doshuffle) {
        return -10;
    }
    if src.is_null() || dest.is_null() || !(1..=MAX_THREADS).contains(&nthreads) {
        return -1;
    }
    let filters: &[Filter] = match doshuffle {
        1 => &[Filter::Shuffle],
        2 => &[Filter::BitShuffle],
        _ => &[],
    };
    let p = CParams::default()
        .format(ChunkFormat::Blosc1)
        .codec(codec)
        .clevel(clevel as u8)
        .typesize(typesize.max(1))
        .filters(filters)
        .blocksize(blocksize)
        .splitmode(splitmode)
        .nthreads(nthreads as usize);
    // SAFETY: the caller gives `nbytes` readable bytes at src and
    // `destsize` writable bytes at dest; C-Blosc forbids them to overlap.
    let (input, output) = unsafe { (slice_in(src, nbytes), slice_out(dest, destsize)) };
    match crate::engines::with_compressor(p, |c| c.compress_into_all_room(input, output)) {
        Ok(n) => n as c_int,
        Err(e) if is_dst_too_small(&e) => 0,
        Err(_) => -1,
    }
}

/// Decompress `src` into `dest[..destsize]` with `nthreads` threads.
fn decompress_impl(
    src: *const c_void,
    dest: *mut c_void,
    destsize: usize,
    nthreads: c_int,
) -> c_int {
    if src.is_null() || (dest.is_null() && destsize > 0) || nthreads < 1 {
        return -1;
    }
    // SAFETY: C-Blosc's contract: src holds a whole chunk, at least its
    // 16-byte header and then the `cbytes` that header declares.
    let Some(chunk) = (unsafe { chunk_at(src) }) else {
        return -1;
    };
    if chunk[0] > VERSION_FORMAT {
        return -1;
    }
    // SAFETY: the caller gives `destsize` writable bytes at dest, not
    // overlapping src.
    let out = unsafe { slice_out(dest, destsize) };
    let p = DParams::default().nthreads(nthreads as usize);
    match crate::engines::with_decompressor(p, |d| d.decompress_into(chunk, out)) {
        Ok(n) => n as c_int,
        Err(_) => -1,
    }
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// Initialise the library (nothing to set up: kept for the ABI).
#[unsafe(no_mangle)]
pub extern "C" fn blosc_init() {}

/// Tear down the library (the settings stay, as in C-Blosc).
#[unsafe(no_mangle)]
pub extern "C" fn blosc_destroy() {}

/// `blosc_compress`: honours `BLOSC_CLEVEL`, `BLOSC_SHUFFLE`,
/// `BLOSC_TYPESIZE`, `BLOSC_COMPRESSOR`, `BLOSC_NTHREADS`,
/// `BLOSC_BLOCKSIZE`, `BLOSC_SPLITMODE` and `BLOSC_NOLOCK`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc_compress(
    clevel: c_int,
    doshuffle: c_int,
    typesize: usize,
    nbytes: usize,
    src: *const c_void,
    dest: *mut c_void,
    destsize: usize,
) -> c_int {
    guard(-1, || {
        let mut clevel = clevel;
        let mut doshuffle = doshuffle;
        let mut typesize = typesize;
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
        if let Some(v) = env("BLOSC_TYPESIZE") {
            let v = strtol(&v);
            if v > 0 {
                typesize = v as usize;
            }
        }
        if let Some(v) = env("BLOSC_COMPRESSOR") {
            let Ok(name) = std::ffi::CString::new(v) else {
                return -1;
            };
            // SAFETY: name is a NUL-terminated string.
            let r = unsafe { blosc_set_compressor(name.as_ptr()) };
            if r < 0 {
                return r;
            }
        }
        if let Some(v) = env("BLOSC_BLOCKSIZE") {
            let v = strtol(&v);
            if v > 0 {
                settings().blocksize = v as usize;
            }
        }
        if let Some(v) = env("BLOSC_NTHREADS") {
            let v = strtol(&v);
            if v > 0 {
                let r = blosc_set_nthreads(v.min(i64::from(c_int::MAX)) as c_int);
                if r < 0 {
                    return r;
                }
            }
        }
        if let Some(v) = env("BLOSC_SPLITMODE") {
            let mode = match v.as_str() {
                "ALWAYS" => SplitMode::Always,
                "NEVER" => SplitMode::Never,
                "AUTO" => SplitMode::Auto,
                "FORWARD_COMPAT" => SplitMode::ForwardCompat,
                _ => {
                    eprintln!("BLOSC_SPLITMODE environment variable '{v}' not recognized");
                    return -1;
                }
            };
            settings().splitmode = mode;
        }
        // BLOSC_NOLOCK asks for the context path; ours never holds a lock
        // while compressing, so both paths are the same code.
        let s = *settings();
        compress_impl(
            clevel,
            doshuffle,
            typesize,
            nbytes,
            src,
            dest,
            destsize,
            s.codec,
            s.blocksize,
            s.nthreads,
            s.splitmode,
        )
    })
}

/// `blosc_compress_ctx`: no global state, no environment variables.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc_compress_ctx(
    clevel: c_int,
    doshuffle: c_int,
    typesize: usize,
    nbytes: usize,
    src: *const c_void,
    dest: *mut c_void,
    destsize: usize,
    compressor: *const c_char,
    blocksize: usize,
    numinternalthreads: c_int,
) -> c_int {
    guard(-1, || {
        // SAFETY: compressor is null or a NUL-terminated string.
        let Some(codec) = codec_of_code(unsafe { blosc_compname_to_compcode(compressor) }) else {
            return -1;
        };
        let splitmode = settings().splitmode;
        compress_impl(
            clevel,
            doshuffle,
            typesize,
            nbytes,
            src,
            dest,
            destsize,
            codec,
            blocksize,
            numinternalthreads,
            splitmode,
        )
    })
}

/// `blosc_decompress`: honours `BLOSC_NTHREADS` and `BLOSC_NOLOCK`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc_decompress(
    src: *const c_void,
    dest: *mut c_void,
    destsize: usize,
) -> c_int {
    guard(-1, || {
        if let Some(v) = env("BLOSC_NTHREADS") {
            let v = strtol(&v);
            if v > 0 {
                let r = blosc_set_nthreads(v.min(i64::from(c_int::MAX)) as c_int);
                if r < 0 {
                    return r;
                }
            }
        }
        let nthreads = settings().nthreads;
        decompress_impl(src, dest, destsize, nthreads)
    })
}

/// `blosc_decompress_ctx`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc_decompress_ctx(
    src: *const c_void,
    dest: *mut c_void,
    destsize: usize,
    numinternalthreads: c_int,
) -> c_int {
    guard(-1, || {
        decompress_impl(src, dest, destsize, numinternalthreads)
    })
}

/// `blosc_getitem`: items `[start, start + nitems)` into dest.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc_getitem(
    src: *const c_void,
    start: c_int,
    nitems: c_int,
    dest: *mut c_void,
) -> c_int {
    guard(-1, || {
        if src.is_null() || start < 0 || nitems < 0 {
            return -1;
        }
        // SAFETY: src holds a whole chunk (C-Blosc's contract).
        let Some(chunk) = (unsafe { chunk_at(src) }) else {
            return -1;
        };
        if chunk[0] > VERSION_FORMAT {
            return -1;
        }
        let ts = usize::from(chunk[3]).max(1);
        let nbytes = le_i32(chunk, 4).max(0) as usize;
        let (start, nitems) = (start as usize, nitems as usize);
        // `start + nitems > nbytes / ts` without a division (in u64: both
        // ints are below 2^31 and ts below 2^8).
        if (start + nitems) as u64 * ts as u64 > nbytes as u64 {
            return -1;
        }
        let len = nitems * ts;
        if len > 0 && dest.is_null() {
            return -1;
        }
        // SAFETY: dest has room for nitems items (C-Blosc's contract).
        let out = unsafe { slice_out(dest, len) };
        // A memcpyed chunk's items are copied from where they are stored.
        if let Some((items, _)) = oxiblosc::ChunkHeader::memcpyed_items(chunk) {
            // In range: the same typesize and nbytes (= items.len()) as above.
            out.copy_from_slice(&items[start * ts..start * ts + len]);
            return len as c_int;
        }
        match crate::engines::with_decompressor(DParams::default(), |d| {
            d.getitem_into(chunk, start, nitems, out)
        }) {
            Ok(n) => n as c_int,
            Err(_) => -1,
        }
    })
}

/// The number of threads of the non-`_ctx` calls.
#[unsafe(no_mangle)]
pub extern "C" fn blosc_get_nthreads() -> c_int {
    guard(1, || settings().nthreads)
}

/// Set the number of threads; returns the previous one (-1 when out of
/// `1..=BLOSC_MAX_THREADS`).
#[unsafe(no_mangle)]
pub extern "C" fn blosc_set_nthreads(nthreads: c_int) -> c_int {
    guard(-1, || {
        if !(1..=MAX_THREADS).contains(&nthreads) {
            return -1;
        }
        let mut s = settings();
        std::mem::replace(&mut s.nthreads, nthreads)
    })
}

/// The compressor of the non-`_ctx` calls.
#[unsafe(no_mangle)]
pub extern "C" fn blosc_get_compressor() -> *const c_char {
    guard(c"blosclz".as_ptr(), || {
        codec_cname(settings().codec).as_ptr()
    })
}

/// Select the compressor; its code, or -1 when unknown or not built in.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc_set_compressor(compname: *const c_char) -> c_int {
    guard(-1, || {
        // SAFETY: compname is null or a NUL-terminated string (C's contract).
        let code = unsafe { blosc_compname_to_compcode(compname) };
        if let Some(c) = codec_of_code(code) {
            settings().codec = c;
        }
        code
    })
}

/// The name of a compressor code; the code, or -1 when not built in
/// (`*compname` is still set for the codes C-Blosc knows).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc_compcode_to_compname(
    compcode: c_int,
    compname: *mut *const c_char,
) -> c_int {
    guard(-1, || {
        let name: Option<&'static CStr> = match compcode {
            0 => Some(c"blosclz"),
            1 => Some(c"lz4"),
            2 => Some(c"lz4hc"),
            3 => Some(c"snappy"),
            4 => Some(c"zlib"),
            5 => Some(c"zstd"),
            _ => None,
        };
        if !compname.is_null() {
            // SAFETY: compname is non-null and points to a writable pointer.
            unsafe { *compname = name.map_or(std::ptr::null(), |n| n.as_ptr()) };
        }
        if codec_of_code(compcode).is_some() {
            compcode
        } else {
            -1
        }
    })
}

/// The code of a compressor name; -1 when unknown or not built in.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc_compname_to_compcode(compname: *const c_char) -> c_int {
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

/// The compressors of this build, comma-separated.
#[unsafe(no_mangle)]
pub extern "C" fn blosc_list_compressors() -> *const c_char {
    c"blosclz,lz4,lz4hc,zlib,zstd".as_ptr()
}

/// The version of the C-Blosc ABI this library implements.
#[unsafe(no_mangle)]
pub extern "C" fn blosc_get_version_string() -> *const c_char {
    VERSION_STRING.as_ptr()
}

/// Library name and version of a compressor (malloc'ed copies the caller
/// frees); the library code, or -1 (and NULLs) when not built in.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc_get_complib_info(
    compname: *const c_char,
    complib: *mut *mut c_char,
    version: *mut *mut c_char,
) -> c_int {
    guard(-1, || {
        // SAFETY: compname is null or a NUL-terminated string (C's contract).
        let code = unsafe { blosc_compname_to_compcode(compname) };
        let codec = codec_of_code(code);
        let (lib, ver) = codec.map_or((None, None), |c| {
            let (l, v) = complib_info(c);
            (Some(l), Some(v))
        });
        if !complib.is_null() {
            // SAFETY: complib is non-null and points to a writable pointer.
            unsafe { *complib = lib.map_or(std::ptr::null_mut(), c_strdup) };
        }
        if !version.is_null() {
            // SAFETY: version is non-null and points to a writable pointer.
            unsafe { *version = ver.map_or(std::ptr::null_mut(), c_strdup) };
        }
        codec.map_or(-1, |c| c_int::from(c.format()))
    })
}

/// Free temporaries and thread pools (the shared pools stay): 0.
#[unsafe(no_mangle)]
pub extern "C" fn blosc_free_resources() -> c_int {
    0
}

/// Read the header of a Blosc1 chunk; `None` for newer formats or null.
fn v1_header(cbuffer: *const c_void) -> Option<[u8; 16]> {
    if cbuffer.is_null() {
        return None;
    }
    // SAFETY: cbuffer holds at least a 16-byte header (C-Blosc's contract).
    let h = unsafe { header16(cbuffer) };
    (h[0] <= VERSION_FORMAT).then_some(h)
}

/// # Safety
/// `p` is null or writable.
unsafe fn put<T>(p: *mut T, v: T) {
    if !p.is_null() {
        // SAFETY: p is non-null and writable (the caller's contract).
        unsafe { *p = v };
    }
}

/// `nbytes`, `cbytes` and `blocksize` from a chunk header (zeros for a
/// format this library does not read).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc_cbuffer_sizes(
    cbuffer: *const c_void,
    nbytes: *mut usize,
    cbytes: *mut usize,
    blocksize: *mut usize,
) {
    guard((), || {
        let (n, c, b) = v1_header(cbuffer).map_or((0, 0, 0), |h| {
            (
                le_i32(&h, 4) as u32 as usize,
                le_i32(&h, 12) as u32 as usize,
                le_i32(&h, 8) as u32 as usize,
            )
        });
        // SAFETY: the out-pointers are null or writable.
        unsafe {
            put(nbytes, n);
            put(cbytes, c);
            put(blocksize, b);
        }
    })
}

/// 0 (and `*nbytes`) when `cbytes` bytes at `cbuffer` may be a valid chunk.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc_cbuffer_validate(
    cbuffer: *const c_void,
    cbytes: usize,
    nbytes: *mut usize,
) -> c_int {
    guard(-1, || {
        if cbytes < MIN_HEADER_LENGTH {
            return -1;
        }
        let Some(h) = v1_header(cbuffer) else {
            return -1;
        };
        let n = le_i32(&h, 4) as u32 as usize;
        let c = le_i32(&h, 12) as u32 as usize;
        // SAFETY: nbytes is null or writable.
        unsafe { put(nbytes, n) };
        if c != cbytes || n > MAX_BUFFERSIZE {
            return -1;
        }
        0
    })
}

/// Type size and flags of a chunk (zeros for a format this library does
/// not read).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc_cbuffer_metainfo(
    cbuffer: *const c_void,
    typesize: *mut usize,
    flags: *mut c_int,
) {
    guard((), || {
        let (t, f) = v1_header(cbuffer).map_or((0, 0), |h| (usize::from(h[3]), c_int::from(h[2])));
        // SAFETY: the out-pointers are null or writable.
        unsafe {
            put(typesize, t);
            put(flags, f);
        }
    })
}

/// Format version and codec format version of a chunk.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc_cbuffer_versions(
    cbuffer: *const c_void,
    version: *mut c_int,
    compversion: *mut c_int,
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
            put(compversion, c);
        }
    })
}

/// The library (`BloscLZ`, `LZ4`, `Snappy`, `Zlib`, `Zstd`) of a chunk.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc_cbuffer_complib(cbuffer: *const c_void) -> *const c_char {
    guard(std::ptr::null(), || {
        if cbuffer.is_null() {
            return std::ptr::null();
        }
        // SAFETY: cbuffer holds at least a 16-byte header.
        let h = unsafe { header16(cbuffer) };
        complib_of_format(h[2] >> 5).map_or(std::ptr::null(), |s| s.as_ptr())
    })
}

/// The forced block size (0 = automatic).
#[unsafe(no_mangle)]
pub extern "C" fn blosc_get_blocksize() -> c_int {
    guard(0, || settings().blocksize.min(c_int::MAX as usize) as c_int)
}

/// Force a block size (0 = automatic).
#[unsafe(no_mangle)]
pub extern "C" fn blosc_set_blocksize(blocksize: usize) {
    guard((), || settings().blocksize = blocksize)
}

/// Set the split mode (`BLOSC_*_SPLIT`); other values are ignored.
#[unsafe(no_mangle)]
pub extern "C" fn blosc_set_splitmode(splitmode: c_int) {
    guard((), || {
        if let Some(m) = splitmode_of(splitmode) {
            settings().splitmode = m;
        }
    })
}
