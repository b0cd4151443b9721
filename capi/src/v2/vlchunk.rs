//! VL-block chunks.

use super::*;

// ---------------------------------------------------------------------------
// VL-block chunks: writing (`oxiblosc::chunk::vl_compress_into`) and decoding.

pub(super) fn vl_header(
    src: *const c_void,
    srcsize: i32,
) -> Result<(&'static [u8], ChunkHeader), c_int> {
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

pub(super) fn vl_blocks(dp: &blosc2_dparams, chunk: &[u8]) -> Result<Vec<Vec<u8>>, c_int> {
    // A lazy chunk (blosc2_schunk_get_lazychunk): the whole chunk, read
    // again through the context's super-chunk and checked against it.
    let whole = crate::internal::frame::materialize_lazy(chunk, dp.schunk)?;
    let chunk = whole.as_deref().unwrap_or(chunk);
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
        let ctx = match unsafe { super::ctx::ctx_call(context) } {
            Ok(c) => c,
            Err(e) => return e,
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
        let ctx = match unsafe { super::ctx::ctx_call(context) } {
            Ok(c) => c,
            Err(e) => return e,
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

/// `blosc2_vlcompress_ctx`: `nblocks` blocks (`srcs[i]`, `srcsizes[i]`
/// bytes, each at least 1) into one VL-block chunk in `dest`, with the
/// context's cparams; the chunk's size, or a negative code
/// (`BLOSC2_ERROR_WRITE_BUFFER` when it does not fit: VL-block chunks have
/// no memcpyed form). Prefilters are refused; with `use_dict` and a level
/// above 0, chunks of 8 blocks or more carry a dictionary, as C-Blosc2
/// makes: used by ZSTD, LZ4 and LZ4HC, stored unused with the other codecs
/// (BloscLZ, ZLIB), whose regular chunks refuse `use_dict`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_vlcompress_ctx(
    context: *mut blosc2_context,
    srcs: *const *const c_void,
    srcsizes: *const i32,
    nblocks: i32,
    dest: *mut c_void,
    destsize: i32,
) -> c_int {
    guard(err::FAILURE, || {
        // SAFETY: context is a live context or null.
        let ctx = match unsafe { super::ctx::ctx_call(context) } {
            Ok(c) => c,
            Err(e) => return e,
        };
        let Some(cp) = ctx.current_cparams() else {
            return err::INVALID_PARAM;
        };
        if srcs.is_null() || srcsizes.is_null() || nblocks <= 0 || destsize < 0 {
            return err::INVALID_PARAM;
        }
        if dest.is_null() {
            return err::NULL_POINTER;
        }
        if cp.prefilter.is_some() {
            return err::INVALID_PARAM;
        }
        let p = match to_cparams(&cp) {
            Ok(p) => p,
            Err(e) => return e,
        };
        let n = nblocks as usize;
        // SAFETY: the caller gives `nblocks` entries in both arrays.
        let (ptrs, sizes) = unsafe {
            (
                std::slice::from_raw_parts(srcs, n),
                std::slice::from_raw_parts(srcsizes, n),
            )
        };
        let mut total: i64 = 0;
        for (&ptr, &size) in ptrs.iter().zip(sizes) {
            if ptr.is_null() || size <= 0 {
                return err::INVALID_PARAM;
            }
            total += i64::from(size);
            if total > MAX_BUFFERSIZE as i64 {
                return err::MAX_BUFSIZE_EXCEEDED;
            }
        }
        // SAFETY: block i has sizes[i] readable bytes at ptrs[i].
        let blocks: Vec<&[u8]> = ptrs
            .iter()
            .zip(sizes)
            .map(|(&ptr, &size)| unsafe { slice_in(ptr, size as usize) })
            .collect();
        // SAFETY: dest has destsize writable bytes, not overlapping the
        // blocks (C's contract).
        let out = unsafe { slice_out(dest, destsize as usize) };
        match oxiblosc::chunk::vl_compress_into(&blocks, out, &p) {
            Ok(n) => n as c_int,
            Err(e) if is_dst_too_small(&e) => err::WRITE_BUFFER,
            Err(e) => code_of(&e),
        }
    })
}
