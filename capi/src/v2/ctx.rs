//! Contexts.
//!
//! A `blosc2_context` starts with the fields our `context.h` declares for
//! C (`capi/peer-include/c-blosc2/context.h`, the C-Blosc2 test programs
//! read and write them): `nthreads`, `new_nthreads` (a count written there
//! is applied at the context's next call), `use_dict`, `thread_pool`
//! (the [`SharedPool`] of its thread count, shared by every context with
//! that count), and for a compression context the filter pipeline
//! `filters` / `filters_meta` (C-Blosc2's `test_b2nd_stringshuffle` writes
//! `cctx->filters_meta[5]` between two calls; the next call compresses with
//! it). The library's own state follows; C only ever holds the pointer.

use std::sync::Arc;

use super::*;
use crate::internal::ctx::pool::{self, SharedPool};

// ---------------------------------------------------------------------------
// Contexts.

/// `struct blosc2_context_s`: the C-visible head, then our own fields.
#[repr(C)]
pub struct blosc2_context {
    /// Threads the context runs with.
    pub nthreads: i16,
    /// A thread count written here by C is applied at the next call.
    pub new_nthreads: i16,
    /// Compression: chunks get a dictionary. Decompression: the last
    /// chunk decoded had one.
    pub use_dict: c_int,
    /// The shared pool of `nthreads` (null with one thread or before the
    /// first call).
    pub thread_pool: *const SharedPool,
    /// Compression: the filter of each pipeline slot, as C-Blosc2's
    /// context holds it; what C writes here is what the next call uses.
    pub filters: [u8; MAX_FILTERS],
    /// Compression: the meta of each filter slot (for a shuffle, its
    /// element size when non-zero); C may write it between calls.
    pub filters_meta: [u8; MAX_FILTERS],
    pool: Option<Arc<SharedPool>>,
    pub(super) cparams: Option<blosc2_cparams>,
    pub(super) dparams: Option<blosc2_dparams>,
    pub(super) maskout: Option<Vec<bool>>,
    /// The decompressor of `blosc2_decompress_ctx` and `blosc2_getitem_ctx`,
    /// kept between calls as C-Blosc2 keeps its context's buffers (no
    /// per-call lookup in the thread's engine cache).
    dec: Option<Box<Decompressor>>,
}

impl blosc2_context {
    fn new(cparams: Option<blosc2_cparams>, dparams: Option<blosc2_dparams>) -> blosc2_context {
        let n = match (&cparams, &dparams) {
            (Some(c), _) => c.nthreads,
            (None, Some(d)) => d.nthreads,
            (None, None) => 1,
        }
        .max(1);
        blosc2_context {
            nthreads: n,
            new_nthreads: n,
            use_dict: cparams.map_or(0, |c| c_int::from(c.use_dict != 0)),
            thread_pool: std::ptr::null(),
            filters: cparams.map_or([0; MAX_FILTERS], |c| c.filters),
            filters_meta: cparams.map_or([0; MAX_FILTERS], |c| c.filters_meta),
            pool: None,
            cparams,
            dparams,
            maskout: None,
            dec: None,
        }
    }

    /// Run `f` with the decompressor of the context at `ctx` for `nthreads`
    /// threads (made on first use and when the count changes). It is out of
    /// the context while `f` runs, and no reference to the context is held
    /// then: a C callback (a user codec or filter) that calls back into this
    /// same context, with the pointer C holds, gets a fresh decompressor and
    /// aliases nothing (`reentry_tests`). Once `f` returns, the taken one is
    /// put back (a decompressor such a call left there is dropped).
    ///
    /// # Safety
    /// `ctx` is a live context, and the caller holds no reference to it
    /// across this call.
    #[inline(always)]
    unsafe fn with_decompressor<R>(
        ctx: *mut blosc2_context,
        nthreads: i16,
        f: impl FnOnce(&mut Decompressor) -> R,
    ) -> R {
        let n = nthreads.max(1) as usize;
        // SAFETY: live (the caller's contract); the field borrow ends here.
        let taken = unsafe { (*ctx).dec.take() };
        let mut d = match taken {
            Some(d) if d.params().nthreads == n => d,
            _ => Box::new(Decompressor::new(DParams::default().nthreads(n))),
        };
        let r = f(&mut d);
        // SAFETY: as above; `f` has returned, so no inner call is running.
        // Almost always empty: its drop is out of line.
        if let Some(left) = unsafe { (*ctx).dec.replace(d) } {
            drop_cold(left);
        }
        r
    }

    /// The cparams of a compression context as its next call uses them:
    /// those it was made with, the filter pipeline as C last wrote it to
    /// `filters` / `filters_meta`.
    #[inline(always)]
    pub(crate) fn current_cparams(&self) -> Option<blosc2_cparams> {
        self.cparams.map(|mut c| {
            c.filters = self.filters;
            c.filters_meta = self.filters_meta;
            c
        })
    }

    /// What every call does first: apply a thread count C wrote to
    /// `new_nthreads` (`BLOSC2_ERROR_INVALID_PARAM` for one below 1, as
    /// C-Blosc2), and attach the context to the shared pool of its count
    /// (none with one thread).
    #[inline(always)]
    pub(crate) fn begin_call(&mut self) -> Result<(), c_int> {
        if self.new_nthreads == self.nthreads && self.nthreads <= 1 && self.pool.is_none() {
            // One thread, as on the last call: nothing to attach.
            return Ok(());
        }
        self.attach_threads()
    }

    /// [`blosc2_context::begin_call`] when the thread count changed or is
    /// more than one.
    #[inline(never)]
    fn attach_threads(&mut self) -> Result<(), c_int> {
        if self.new_nthreads != self.nthreads {
            if self.new_nthreads < 1 {
                return Err(err::INVALID_PARAM);
            }
            self.nthreads = self.new_nthreads;
            if let Some(c) = self.cparams.as_mut() {
                c.nthreads = self.nthreads;
            }
            if let Some(d) = self.dparams.as_mut() {
                d.nthreads = self.nthreads;
            }
        }
        let n = self.nthreads.max(1) as usize;
        if n == 1 {
            self.pool = None;
        } else if self.pool.as_ref().is_none_or(|p| p.nthreads() != n) {
            self.pool = Some(pool::acquire(n));
        }
        self.thread_pool = self.pool.as_ref().map_or(std::ptr::null(), Arc::as_ptr);
        Ok(())
    }
}

/// Drop a decompressor a reentrant call left in its context.
#[cold]
#[inline(never)]
fn drop_cold(d: Box<Decompressor>) {
    drop(d);
}

/// Before each call on a super-chunk: a thread count C wrote to its
/// `cctx->new_nthreads` / `dctx->new_nthreads` (C-Blosc2's way to change
/// them between calls) is applied to the contexts and to the super-chunk's
/// compressor / decompressor. A count below 1 is left unapplied (the
/// super-chunk keeps its threads). Returns whether the super-chunk's
/// parameters changed.
///
/// # Safety
/// `cctx` and `dctx` are null or the super-chunk's own live contexts, not
/// borrowed elsewhere while this runs.
#[inline(always)]
pub(crate) unsafe fn sync_schunk_threads(
    cctx: *mut blosc2_context,
    dctx: *mut blosc2_context,
    sc: &mut oxiblosc::SChunk,
) -> bool {
    let mut changed = false;
    // SAFETY: the caller's contract.
    if let Some(c) = unsafe { ctx_mut(cctx) }
        && c.begin_call().is_ok()
    {
        let n = c.nthreads.max(1) as usize;
        if sc.cparams().nthreads != n {
            let _ = sc.set_cparams(sc.cparams().clone().nthreads(n));
            changed = true;
        }
    }
    // SAFETY: the caller's contract.
    if let Some(d) = unsafe { ctx_mut(dctx) }
        && d.begin_call().is_ok()
    {
        let n = d.nthreads.max(1) as usize;
        if sc.dparams().nthreads != n {
            sc.set_dparams(sc.dparams().clone().nthreads(n));
            changed = true;
        }
    }
    changed
}

/// A compression context for `cparams` (checked when used).
#[unsafe(no_mangle)]
pub extern "C" fn blosc2_create_cctx(cparams: blosc2_cparams) -> *mut blosc2_context {
    guard(std::ptr::null_mut(), || {
        Box::into_raw(Box::new(blosc2_context::new(Some(cparams), None)))
    })
}

/// A decompression context for `dparams`.
#[unsafe(no_mangle)]
pub extern "C" fn blosc2_create_dctx(dparams: blosc2_dparams) -> *mut blosc2_context {
    guard(std::ptr::null_mut(), || {
        Box::into_raw(Box::new(blosc2_context::new(None, Some(dparams))))
    })
}

/// Free a context (null is ignored); it leaves its shared pool.
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

/// The context at `ctx` for a call, after [`blosc2_context::begin_call`]:
/// `BLOSC2_ERROR_NULL_POINTER` for null, or the error of `begin_call`.
///
/// # Safety
/// `ctx` is null or a live context from `blosc2_create_*ctx`.
pub(crate) unsafe fn ctx_call<'a>(
    ctx: *mut blosc2_context,
) -> Result<&'a mut blosc2_context, c_int> {
    // SAFETY: the caller's contract.
    let c = unsafe { ctx_mut(ctx) }.ok_or(err::NULL_POINTER)?;
    c.begin_call()?;
    Ok(c)
}

/// # Safety
/// `ctx` is null or a live context from `blosc2_create_*ctx`.
pub(super) unsafe fn ctx_mut<'a>(ctx: *mut blosc2_context) -> Option<&'a mut blosc2_context> {
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
        let Some(cp) = c.current_cparams() else {
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
        let ctx = match unsafe { ctx_call(context) } {
            Ok(c) => c,
            Err(e) => return e,
        };
        let Some(cp) = ctx.current_cparams() else {
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
            // `ctx` is not used again: the prefilter is handed `context`.
            return compress_prefiltered(
                context,
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
/// is compressed with the same parameters (so the same blocks). `ctx` is
/// the pointer C holds, only handed to the prefilter: a raw pointer, so a
/// prefilter or user filter that calls back into the context aliases no
/// reference of ours.
pub(super) fn compress_prefiltered(
    ctx: *mut blosc2_context,
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
            ctx,
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
        let ctx = match unsafe { ctx_call(context) } {
            Ok(c) => c,
            Err(e) => return e,
        };
        // The two fields the plain decode needs, read in place: a copy of
        // the whole parameters was made on every call for them.
        let (nthreads, postfiltered) = match &ctx.dparams {
            Some(d) => (d.nthreads, d.postfilter.is_some()),
            None => (DPARAMS_DEFAULTS.nthreads, false),
        };
        if destsize < 0 {
            return err::INVALID_PARAM;
        }
        let chunk = match chunk_sized(src, srcsize) {
            Ok(c) => c,
            Err(e) => return e,
        };
        if ctx.cparams.is_none() {
            // A decompression context tells whether the chunk it decodes
            // has a dictionary (C-Blosc2's `dctx->use_dict`). Read from the
            // flag bits, not a whole parse: the decode parses the header
            // anyway, and a second parse cost a 32 KiB chunk's decode about
            // 150 instructions (perf/README.md, session 15).
            ctx.use_dict = c_int::from(header_uses_dict(chunk));
        }
        let maskout = ctx.maskout.take();
        if !postfiltered {
            // SAFETY: live; `ctx` is not used again.
            return unsafe {
                blosc2_context::with_decompressor(context, nthreads, |d| {
                    decompress_with(d, chunk, dest, destsize as usize, maskout.as_deref())
                })
            };
        }
        let dp = ctx.dparams.unwrap_or(DPARAMS_DEFAULTS);
        // `ctx` is not used again: the postfilter is handed `context`.
        decompress_postfiltered(context, &dp, chunk, dest, destsize as usize, maskout)
    })
}

/// Decompression with a postfilter: the blocks kept by the mask (all
/// without one) are decoded into a scratch buffer, then each is handed to
/// the postfilter to write into `dest`. `ctx`: as for
/// [`compress_prefiltered`], handed to the postfilter.
pub(super) fn decompress_postfiltered(
    ctx: *mut blosc2_context,
    dp: &blosc2_dparams,
    chunk: &[u8],
    dest: *mut c_void,
    destsize: usize,
    maskout: Option<Vec<bool>>,
) -> c_int {
    let Some(post) = dp.postfilter else {
        return err::INVALID_PARAM;
    };
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
    let r = match maskout.as_deref() {
        None => d.decompress_into(chunk, &mut tmp),
        Some(m) => match super::mask_fits(chunk, m) {
            Ok(()) => d.decompress_masked_into(chunk, m, &mut tmp),
            Err(code) => return code,
        },
    };
    if let Err(e) = r {
        return code_of(&e);
    }
    // SAFETY: dest has destsize >= nbytes writable bytes.
    let out = unsafe { slice_out(dest, h.nbytes) };
    let bs = h.blocksize.max(1);
    let mut ttmp = vec![0u8; bs * 4];
    for (nblock, (inb, outb)) in tmp.chunks(bs).zip(out.chunks_mut(bs)).enumerate() {
        if maskout
            .as_ref()
            .is_some_and(|m| m.get(nblock).copied().unwrap_or(false))
        {
            continue;
        }
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
            ctx,
        };
        // SAFETY: the caller's postfilter, with live buffers of the
        // sizes given.
        if unsafe { post(&mut pp) } != 0 {
            return err::POSTFILTER;
        }
    }
    h.nbytes as c_int
}

/// Whether a chunk's header says a dictionary precedes its streams: an
/// extended header (both shuffle bits of `flags`) with `BLOSC2_USEDICT` in
/// `blosc2_flags` (byte 31), not memcpyed ([`ChunkHeader::use_dict`]'s
/// rule on the raw bytes; `false` for a chunk too short to say).
fn header_uses_dict(chunk: &[u8]) -> bool {
    const EXTENDED: u8 = 0x05;
    const MEMCPYED: u8 = 0x02;
    const USE_DICT: u8 = 0x01;
    chunk.len() >= EXTENDED_HEADER_LENGTH
        && chunk[2] & EXTENDED == EXTENDED
        && chunk[2] & MEMCPYED == 0
        && chunk[31] & USE_DICT != 0
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
        let ctx = match unsafe { ctx_call(context) } {
            Ok(c) => c,
            Err(e) => return e,
        };
        let chunk = match chunk_sized(src, srcsize) {
            Ok(c) => c,
            Err(e) => return e,
        };
        if let Some(dp) = ctx
            .dparams
            .as_ref()
            .filter(|d| d.postfilter.is_some())
            .copied()
        {
            // `ctx` is not used again: the postfilter is handed `context`.
            return getitem_postfiltered(context, &dp, chunk, start, nitems, dest, destsize);
        }
        // The count `blosc2_decompress_ctx` uses: one decompressor serves both.
        let nthreads = ctx
            .dparams
            .as_ref()
            .map_or(DPARAMS_DEFAULTS.nthreads, |d| d.nthreads);
        getitem_raw(chunk, start, nitems, dest, destsize.max(0) as usize, |f| {
            // SAFETY: live; `ctx` is not used again.
            unsafe { blosc2_context::with_decompressor(context, nthreads, f) }
        })
    })
}

/// getitem through a postfilter: decode the chunk with it, then copy
/// (`ctx` as for [`decompress_postfiltered`]).
pub(super) fn getitem_postfiltered(
    ctx: *mut blosc2_context,
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
    // The whole chunk is decoded into a buffer sized by its header (and,
    // in `decompress_postfiltered`, into one more): only once its streams
    // are known to back that size (a 64-byte chunk claiming 2 GiB fails
    // here, not after 4 GiB were allocated).
    if let Err(e) = oxiblosc::chunk::validate(chunk) {
        return code_of(&e);
    }
    let mut full = vec![0u8; h.nbytes];
    let rc = decompress_postfiltered(
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

#[cfg(test)]
mod tests {
    use super::*;

    /// `blosc2_decompress_ctx` and `blosc2_getitem_ctx` share the context's
    /// own decompressor: made on the first call, the same one on the next
    /// calls, replaced when C changes the thread count, and the results are
    /// right each time.
    #[test]
    fn a_context_keeps_one_decompressor_across_calls() {
        let src: Vec<u8> = (0..65_536u32).flat_map(|i| (i / 3).to_le_bytes()).collect();
        let mut cp = CPARAMS_DEFAULTS;
        cp.typesize = 4;
        cp.blocksize = 16_384;
        let cctx = blosc2_create_cctx(cp);
        let chunk = super::super::test_calls::compress(cctx, &src).unwrap();
        let dctx = blosc2_create_dctx(DPARAMS_DEFAULTS);
        let engine = |c: *mut blosc2_context| {
            // SAFETY: c is a live context.
            let d = unsafe { &*c }.dec.as_deref();
            d.map(|d| (d as *const Decompressor, d.params().nthreads))
        };
        assert_eq!(engine(dctx), None, "nothing before the first call");
        let mut out = vec![0u8; src.len()];
        let mut items = vec![0u8; 400];
        let mut seen = Vec::new();
        for nthreads in [1, 1, 2, 2] {
            // SAFETY: dctx is live (C may write `new_nthreads` between calls).
            unsafe { (*dctx).new_nthreads = nthreads };
            out.fill(0);
            items.fill(0);
            let r = super::super::test_calls::decompress_into(dctx, &chunk, &mut out);
            // SAFETY: live context; the buffers have the sizes given.
            let g = unsafe {
                blosc2_getitem_ctx(
                    dctx,
                    chunk.as_ptr().cast(),
                    chunk.len() as i32,
                    5000,
                    100,
                    items.as_mut_ptr().cast(),
                    items.len() as i32,
                )
            };
            assert_eq!((r, g), (src.len() as c_int, 400));
            assert_eq!(out, src);
            assert_eq!(items, src[20_000..20_400]);
            let (ptr, n) = engine(dctx).expect("made by the first call");
            assert_eq!(n, nthreads as usize);
            seen.push(ptr);
        }
        assert_eq!(seen[0], seen[1], "kept between calls");
        assert_eq!(seen[2], seen[3], "kept between calls");
        // SAFETY: both contexts are live and freed once.
        unsafe {
            blosc2_free_ctx(cctx);
            blosc2_free_ctx(dctx);
        }
    }
}
