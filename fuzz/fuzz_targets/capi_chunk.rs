//! The chunk calls of the C libraries (`libblosc2.so`, `libblosc.so.1`) on
//! fuzzed chunks: the C ABI's own layers (size checks, the memcpyed getitem
//! shortcut, item ranges, the context's decompressor) between a C caller's
//! buffers and the engine. Every output buffer is exactly the size the call
//! is told, so a write past it is an ASan report; a successful call must
//! give the engine's bytes.
//!
//! Layout: `start: u16 LE, nitems: u16 LE, destsize selector: u8, flags:
//! u8` (bit 0: two threads), then the chunk. Calls whose C contract is "the
//! buffer holds the whole chunk" (no source size) are made only when the
//! header's `cbytes` fits the input, as a C caller would.
//!
//! getitem decodes whole blocks, so a partly read block needs a buffer of
//! its size. Run streams let a few bytes stand for a block of up to 512
//! MiB legitimately (C-Blosc2 allocates three such buffers): the Rust API's
//! answer is `DParams::max_output`, which bounds getitem's blocks too, and
//! which `chunk_decode` sets. The C ABI has no such limit, so this target
//! makes getitem calls only on chunks whose blocks are within [`MAX_DEST`]
//! (its first runs, without that rule, stopped on a 72-byte chunk with a
//! 512 MiB block of runs).
#![no_main]
use std::ffi::{c_int, c_void};

use blosc2::v1;
use blosc2::v2::{self as b2, DPARAMS_DEFAULTS};
use libfuzzer_sys::fuzz_target;
use oxiblosc::{ChunkHeader, DParams, Decompressor};

/// The largest output buffer made for one call.
const MAX_DEST: usize = 8 << 20;

fuzz_target!(|data: &[u8]| {
    if data.len() < 6 {
        return;
    }
    let start = c_int::from(u16::from_le_bytes([data[0], data[1]]));
    let nitems = c_int::from(u16::from_le_bytes([data[2], data[3]]));
    let (sel, flags) = (data[4], data[5]);
    // An exact copy: a read past its end is an ASan report.
    let chunk = data[6..].to_vec();
    let len = chunk.len();
    let src = chunk.as_ptr() as *const c_void;

    let parsed = ChunkHeader::parse(&chunk).ok();
    let nbytes = parsed.as_ref().map_or(0, |h| h.nbytes);
    // The header's byte, as the C calls read it (parse refuses 0).
    let typesize = usize::from(chunk.get(3).copied().unwrap_or(1).max(1));
    let destsize = match sel {
        0 => nbytes,
        1 => nbytes.saturating_sub(1),
        s => usize::from(s) * 64,
    }
    .min(MAX_DEST);
    // What the engine makes of the chunk, for comparison.
    let engine = Decompressor::new(DParams::default().max_output(MAX_DEST))
        .decompress(&chunk)
        .ok();
    let check = |what: &str, r: c_int, out: &[u8]| {
        if r < 0 {
            return;
        }
        let r = r as usize;
        assert!(
            r <= out.len(),
            "{what}: returned {r} for a {}-byte buffer",
            out.len()
        );
        if let Some(e) = &engine {
            assert_eq!(r, e.len(), "{what}: size differs from the engine's");
            assert_eq!(&out[..r], &e[..], "{what}: bytes differ from the engine's");
        }
    };

    let mut dp = DPARAMS_DEFAULTS;
    dp.nthreads = if flags & 1 != 0 { 2 } else { 1 };
    let dctx = b2::blosc2_create_dctx(dp);
    assert!(!dctx.is_null());

    let mut out = vec![0u8; destsize];
    // SAFETY: a live context; `len` readable bytes at src, `destsize`
    // writable at out.
    let r = unsafe {
        b2::blosc2_decompress_ctx(
            dctx,
            src,
            len as i32,
            out.as_mut_ptr().cast(),
            destsize as i32,
        )
    };
    check("blosc2_decompress_ctx", r, &out);
    out.fill(0);
    // SAFETY: as above, through the global context.
    let r =
        unsafe { b2::blosc2_decompress(src, len as i32, out.as_mut_ptr().cast(), destsize as i32) };
    check("blosc2_decompress", r, &out);
    if let Some(h) = parsed.as_ref() {
        masked(dctx, &chunk, h, &mut out, flags, engine.as_deref());
        // It decodes whole blocks, or the whole chunk for a range into a
        // tail shorter than an item, with no output limit (as C's): only
        // for chunks within MAX_DEST.
        if h.nbytes <= MAX_DEST {
            getitem_bytes(dctx, &chunk, start, nitems, flags, engine.as_deref());
        }
    }

    // getitem into a buffer of exactly nitems items (or one byte less),
    // for blocks within the limit (see the module's comment).
    let block = parsed.as_ref().map_or(0, |h| h.blocksize.min(h.nbytes));
    let getitems = block <= MAX_DEST;
    let full = nitems as usize * typesize;
    let want = full.min(MAX_DEST);
    let gsize = if flags & 2 != 0 {
        want.saturating_sub(1)
    } else {
        want
    };
    let mut items = vec![0u8; gsize];
    let item_check = |what: &str, r: c_int, out: &[u8]| {
        if r < 0 {
            return;
        }
        assert!(
            r as usize <= out.len(),
            "{what}: returned {r} for {} bytes",
            out.len()
        );
        if let Some(e) = &engine {
            let at = start as usize * typesize;
            assert_eq!(
                &out[..r as usize],
                &e[at..at + r as usize],
                "{what}: items differ"
            );
        }
    };
    if getitems {
        // SAFETY: a live context; `len` readable bytes, `gsize` writable.
        let r = unsafe {
            b2::blosc2_getitem_ctx(
                dctx,
                src,
                len as i32,
                start,
                nitems,
                items.as_mut_ptr().cast(),
                gsize as i32,
            )
        };
        item_check("blosc2_getitem_ctx", r, &items);
        items.fill(0);
        // SAFETY: as above.
        let r = unsafe {
            b2::blosc2_getitem(
                src,
                len as i32,
                start,
                nitems,
                items.as_mut_ptr().cast(),
                gsize as i32,
            )
        };
        item_check("blosc2_getitem", r, &items);
    }

    if len >= 32 {
        // Header-only calls: C's contract is a readable header (32 bytes
        // covers the extended one).
        let (mut nb, mut cb, mut bs) = (0i32, 0i32, 0i32);
        // SAFETY: 32 readable bytes; writable out-pointers.
        let r = unsafe { b2::blosc2_cbuffer_sizes(src, &mut nb, &mut cb, &mut bs) };
        if r >= 0
            && let Some(h) = &parsed
        {
            assert_eq!((nb as usize, cb as usize), (h.nbytes, h.cbytes));
        }
        let mut vnbytes = 0usize;
        // SAFETY: len readable bytes; a writable out-pointer.
        let _ = unsafe { v1::blosc_cbuffer_validate(src, len, &mut vnbytes) };
        let (mut ts, mut fl) = (0usize, 0 as c_int);
        // SAFETY: a readable header; writable out-pointers.
        unsafe { v1::blosc_cbuffer_metainfo(src, &mut ts, &mut fl) };
    }

    // The calls without a source size: only for a chunk whose header's
    // cbytes fits what the caller has.
    let cbytes = (len >= 16).then(|| i32::from_le_bytes(chunk[12..16].try_into().unwrap()));
    if cbytes.is_some_and(|c| c >= 16 && c as usize <= len) {
        out.fill(0);
        // SAFETY: the chunk holds its cbytes; destsize writable bytes.
        let r = unsafe { b2::blosc1_decompress(src, out.as_mut_ptr().cast(), destsize) };
        check("blosc1_decompress", r, &out);
        out.fill(0);
        // SAFETY: as above (the C-Blosc 1.x ABI).
        let r = unsafe { v1::blosc_decompress(src, out.as_mut_ptr().cast(), destsize) };
        check("blosc_decompress", r, &out);
        out.fill(0);
        // SAFETY: as above, one or two threads.
        let r = unsafe {
            v1::blosc_decompress_ctx(src, out.as_mut_ptr().cast(), destsize, dp.nthreads as c_int)
        };
        check("blosc_decompress_ctx", r, &out);
        // The unsized getitems write nitems items: only with room for all
        // of them (an 8 MiB buffer for 32,934 items of 255 bytes was this
        // target's own bug, not the library's).
        if getitems && gsize == full && full > 0 {
            items.fill(0);
            // SAFETY: the chunk holds its cbytes; `want` writable bytes.
            let r = unsafe { b2::blosc1_getitem(src, start, nitems, items.as_mut_ptr().cast()) };
            item_check("blosc1_getitem", r, &items);
            items.fill(0);
            // SAFETY: as above.
            let r = unsafe { v1::blosc_getitem(src, start, nitems, items.as_mut_ptr().cast()) };
            item_check("blosc_getitem", r, &items);
        }
    }
    if let Some(h) = parsed.as_ref() {
        vl_calls(dctx, &chunk, h, start, flags, engine.as_deref());
    }
    // SAFETY: made above, freed once.
    unsafe { b2::blosc2_free_ctx(dctx) };
});

/// A block mask from the chunk's own bytes for the next decode
/// (`blosc2_set_maskout`, since session 44: no target had set one), of
/// one flag per block, or one more when flag bit 2 is set (the decode must
/// then fail): the blocks kept are the engine's, the masked ones are left
/// as they were; the mask is for one call only (the next decode is whole).
fn masked(
    dctx: *mut b2::blosc2_context,
    chunk: &[u8],
    h: &ChunkHeader,
    out: &mut [u8],
    flags: u8,
    engine: Option<&[u8]>,
) {
    let nb = h.nblocks() + usize::from(flags & 4 != 0);
    if nb > 4096 || chunk.is_empty() {
        return;
    }
    let mut mask: Vec<bool> = (0..nb)
        .map(|i| chunk[i % chunk.len()] & (1 << (i % 8)) != 0)
        .collect();
    // SAFETY: a live context; nb flags at mask.
    let r = unsafe { b2::blosc2_set_maskout(dctx, mask.as_mut_ptr(), nb as c_int) };
    assert_eq!(r, 0, "blosc2_set_maskout");
    out.fill(0xA5);
    let (src, len) = (chunk.as_ptr() as *const c_void, chunk.len() as i32);
    // SAFETY: a live context; `len` readable bytes; out.len() writable.
    let r = unsafe {
        b2::blosc2_decompress_ctx(dctx, src, len, out.as_mut_ptr().cast(), out.len() as i32)
    };
    if r >= 0 {
        assert!(
            nb == h.nblocks(),
            "a mask of {nb} flags for {} blocks",
            h.nblocks()
        );
        assert_eq!(r as usize, h.nbytes, "masked decode: its size");
        let bs = h.blocksize.max(1);
        for (i, got) in out[..h.nbytes].chunks(bs).enumerate() {
            if mask[i] {
                assert!(got.iter().all(|&b| b == 0xA5), "masked block {i} written");
            } else if let Some(e) = engine {
                assert!(*got == e[i * bs..i * bs + got.len()], "kept block {i}");
            }
        }
    }
    // The mask was for that call: this one decodes the whole chunk.
    // SAFETY: as above.
    let r = unsafe {
        b2::blosc2_decompress_ctx(dctx, src, len, out.as_mut_ptr().cast(), out.len() as i32)
    };
    if r >= 0 {
        let e = engine.expect("blosc2_decompress_ctx decodes what the engine refuses");
        assert!(out[..r as usize] == *e, "the decode after a masked one");
    }
}

/// `blosc2_getitem_bytes_ctx` of `nitems` bytes from byte `start`
/// (since session 44: no target had called it), into a buffer of exactly
/// that size, or one byte less when flag bit 1 is set: what it gives is
/// the engine's bytes there.
fn getitem_bytes(
    dctx: *mut b2::blosc2_context,
    chunk: &[u8],
    start: c_int,
    nitems: c_int,
    flags: u8,
    engine: Option<&[u8]>,
) {
    let size = (nitems as usize).saturating_sub(usize::from(flags & 2 != 0));
    let mut dst = vec![0u8; size];
    // SAFETY: a live context; the chunk's bytes; `size` writable bytes.
    let r = unsafe {
        b2::blosc2_getitem_bytes_ctx(
            dctx,
            chunk.as_ptr().cast(),
            chunk.len() as i32,
            start,
            nitems,
            dst.as_mut_ptr().cast(),
            size as i32,
        )
    };
    if r >= 0 {
        assert!(
            r as usize <= size,
            "blosc2_getitem_bytes_ctx: {r} into {size}"
        );
        if let Some(e) = engine {
            let at = start as usize;
            assert!(
                dst[..r as usize] == e[at..at + r as usize],
                "blosc2_getitem_bytes_ctx: other bytes"
            );
        }
    }
}

unsafe extern "C" {
    /// C's `free`, for the blocks the VL calls malloc.
    fn free(p: *mut c_void);
}

/// The VL-block calls (since session 44: source coverage of the corpus
/// showed that none was ever made): the block count, every block into
/// malloc'ed buffers (with room for all of them, or one fewer when flag
/// bit 1 is set), and block `start % nblocks` alone. What they decode is
/// the engine's chunk cut at its blocks; a call the engine's decode
/// refuses fails. Only for chunks within [`MAX_DEST`] of at most 4,096
/// blocks (the C calls decode with no output limit, as C-Blosc2's).
fn vl_calls(
    dctx: *mut b2::blosc2_context,
    chunk: &[u8],
    h: &ChunkHeader,
    start: c_int,
    flags: u8,
    engine: Option<&[u8]>,
) {
    if !h.is_vlblocks() || h.nbytes > MAX_DEST {
        return;
    }
    let (src, len) = (chunk.as_ptr() as *const c_void, chunk.len() as i32);
    let mut nb = -1i32;
    // SAFETY: `len` readable bytes at src; a writable out-pointer.
    let r = unsafe { b2::blosc2_vlchunk_get_nblocks(src, len, &mut nb) };
    if r < 0 {
        return;
    }
    assert_eq!(nb as usize, h.nblocks(), "blosc2_vlchunk_get_nblocks");
    if nb <= 0 || nb > 4096 {
        return;
    }
    let max = if flags & 2 != 0 { nb - 1 } else { nb };
    let mut dests = vec![std::ptr::null_mut::<c_void>(); nb as usize];
    let mut sizes = vec![-1i32; nb as usize];
    // SAFETY: a live context; `len` readable bytes; `max` <= nb writable
    // entries in dests and sizes.
    let r = unsafe {
        b2::blosc2_vldecompress_ctx(dctx, src, len, dests.as_mut_ptr(), sizes.as_mut_ptr(), max)
    };
    let mut blocks: Vec<Vec<u8>> = Vec::new();
    if r >= 0 {
        assert_eq!(r, nb, "blosc2_vldecompress_ctx: blocks");
        assert_eq!(max, nb, "blosc2_vldecompress_ctx: {nb} blocks into {max}");
        for (&p, &s) in dests.iter().zip(&sizes) {
            assert!(
                !p.is_null() && s >= 0,
                "blosc2_vldecompress_ctx: a block of {s}"
            );
            // SAFETY: the call malloc'ed `s` bytes at p; freed once, here.
            unsafe {
                blocks.push(std::slice::from_raw_parts(p as *const u8, s as usize).to_vec());
                free(p);
            }
        }
        let e = engine.expect("blosc2_vldecompress_ctx decodes what the engine refuses");
        assert!(
            blocks.concat() == e,
            "blosc2_vldecompress_ctx: bytes differ"
        );
    } else {
        assert!(
            dests.iter().all(|p| p.is_null()),
            "blosc2_vldecompress_ctx failed and left buffers"
        );
    }
    let i = start % nb;
    let (mut p, mut s) = (std::ptr::null_mut::<u8>(), -1i32);
    // SAFETY: a live context; `len` readable bytes; writable out-pointers.
    let r = unsafe { b2::blosc2_vldecompress_block_ctx(dctx, src, len, i, &mut p, &mut s) };
    if r >= 0 {
        assert!(
            !p.is_null() && r == s,
            "blosc2_vldecompress_block_ctx: {r}, {s}"
        );
        // SAFETY: the call malloc'ed `s` bytes at p; freed once, here.
        let block = unsafe {
            let b = std::slice::from_raw_parts(p, s as usize).to_vec();
            free(p.cast());
            b
        };
        assert!(
            engine.is_some(),
            "blosc2_vldecompress_block_ctx decodes what the engine refuses"
        );
        if let Some(b) = blocks.get(i as usize) {
            assert!(
                *b == block,
                "blosc2_vldecompress_block_ctx: block {i} differs"
            );
        }
    }
}
