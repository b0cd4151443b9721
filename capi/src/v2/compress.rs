//! Blosc1-style calls and Blosc2 calls with global settings.

use super::*;

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

/// A getitem's decode: `run(f)` calls `f` with a decompressor (the
/// context's, or one from the thread's engine cache).
pub(super) type WithDecompressor<'a> =
    &'a mut dyn FnMut(&mut Decompressor) -> oxiblosc::Result<usize>;

/// Items of a chunk (count in the header's typesize) into `dest[..destsize]`.
/// Only a chunk that needs decoding reaches `run` (a memcpyed one is
/// copied here), so a small getitem does not pay for fetching an engine.
pub(super) fn getitem_raw(
    chunk: &[u8],
    start: c_int,
    nitems: c_int,
    dest: *mut c_void,
    destsize: usize,
    run: impl FnOnce(WithDecompressor<'_>) -> oxiblosc::Result<usize>,
) -> c_int {
    if start < 0 || nitems < 0 {
        return err::INVALID_PARAM;
    }
    // A memcpyed chunk's items are copied from where they are stored; the
    // shortcut reads only the fields that place them (any chunk it does not
    // take, valid or not, goes through the full parse below).
    let memcpyed = ChunkHeader::memcpyed_items(chunk);
    let (ts, nbytes) = match memcpyed {
        Some((items, ts)) => (ts, items.len()),
        None => {
            if let Err(e) = precheck(chunk) {
                return e;
            }
            match ChunkHeader::parse(chunk) {
                Ok(h) => (usize::from(h.typesize).max(1), h.nbytes),
                Err(e) => return code_of(&e),
            }
        }
    };
    let (start, nitems) = (start as usize, nitems as usize);
    // `start + nitems > nbytes / ts` without a division (in u64: both ints
    // are below 2^31 and ts below 2^8).
    if (start + nitems) as u64 * ts as u64 > nbytes as u64 {
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
    if let Some((items, _)) = memcpyed {
        // In range: (start + nitems) * ts <= nbytes = items.len().
        out.copy_from_slice(&items[start * ts..start * ts + len]);
        return len as c_int;
    }
    match run(&mut |d| d.getitem_into(chunk, start, nitems, out)) {
        Ok(n) => n as c_int,
        Err(e) => code_of(&e),
    }
}

/// [`getitem_raw`]'s decode with a one-thread engine from the thread's cache.
pub(super) fn cached(f: WithDecompressor<'_>) -> oxiblosc::Result<usize> {
    crate::engines::with_decompressor(DParams::default(), f)
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
        getitem_raw(chunk, start, nitems, dest, usize::MAX, cached)
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
        Ok(chunk) => getitem_raw(chunk, start, nitems, dest, destsize.max(0) as usize, cached),
        Err(e) => e,
    })
}

/// # Safety
/// `p` is null or writable.
pub(super) unsafe fn put<T>(p: *mut T, v: T) {
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
