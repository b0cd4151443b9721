//! Chunk and slice access, parameters.

use super::*;

/// Run `f`, a call that may change the super-chunk, on the engine of the
/// handle behind `schunk`, refreshing the C view after. `on_null` for
/// null, or for a handle another call is using (a callback re-entering).
/// While `f` runs, user filter and codec callbacks get this handle as
/// `cparams->schunk` (module docs). With locking on, the call holds the
/// frame's lock exclusively.
pub(super) fn with<T>(
    schunk: *mut blosc2_schunk,
    on_null: T,
    metas: bool,
    f: impl FnOnce(&mut Engine<'_>) -> T,
) -> T {
    with_mode(schunk, on_null, metas, Mode::Write, f)
}

/// [`with`] for a call that only reads the super-chunk: with locking on it
/// holds the frame's lock shared, as C-Blosc2's readers do, so readers in
/// other handles and processes run alongside it while writers wait. A
/// reader that finds another generation re-reads its frame under the shared
/// lock: no writer can change the frame while it is held, and the handle is
/// claimed by this call alone, so the re-read races with nothing.
pub(super) fn with_read<T>(
    schunk: *mut blosc2_schunk,
    on_null: T,
    metas: bool,
    f: impl FnOnce(&mut Engine<'_>) -> T,
) -> T {
    with_mode(schunk, on_null, metas, Mode::Read, f)
}

/// [`with_read`] for a call that changes nothing the C view shows (it
/// decodes or copies chunks; unlike `to_buffer` or `frame_len`, it flushes
/// no in-memory frame): the view is refreshed after it only when the call's
/// start changed the super-chunk (thread counts C set, or a frame another
/// handle rewrote, read again). The refresh converts the parameters and
/// the frame description back to C's structs: a quarter of the calls'
/// own cost on 4 KB chunks (perf/README.md, session 21).
pub(super) fn with_lookup<T>(
    schunk: *mut blosc2_schunk,
    on_null: T,
    f: impl FnOnce(&mut Engine<'_>) -> T,
) -> T {
    with_mode(schunk, on_null, false, Mode::Lookup, f)
}

/// What a call does to the super-chunk: see [`with`], [`with_read`] and
/// [`with_lookup`].
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Write,
    Read,
    Lookup,
}

fn with_mode<T>(
    schunk: *mut blosc2_schunk,
    on_null: T,
    metas: bool,
    mode: Mode,
    f: impl FnOnce(&mut Engine<'_>) -> T,
) -> T {
    let exclusive = mode == Mode::Write;
    if schunk.is_null() {
        return on_null;
    }
    // SAFETY: schunk is a live super-chunk from this library (C's
    // contract), for the whole call.
    let Ok(_claim) = (unsafe { claim(schunk, Use::Engine) }) else {
        return on_null;
    };
    let p = schunk as *mut Handle;
    let (reopened, locked, threads) = {
        // SAFETY: schunk is a live super-chunk from this library, claimed:
        // no other reference to it is live.
        let h = unsafe { &mut *p };
        // SAFETY: the handle's own contexts, not borrowed elsewhere.
        let threads = unsafe { crate::v2::sync_schunk_threads(h.c.cctx, h.c.dctx, &mut h.sc) };
        // With locking on, the call holds the frame's lock (lock.rs).
        let locked = match lock::begin_call(h, exclusive) {
            Ok(l) => l,
            Err(_) => return on_null,
        };
        let forced = locked == Some(true);
        let reopened = forced || h.refresh_if_stale();
        // A chunk size C code wrote before the first chunk, taken by the
        // calls that may add one (under the lock); the view is refreshed
        // after the call when it was.
        let preset = exclusive && h.take_chunksize();
        (reopened, locked.is_some(), threads || preset)
    };
    let before = if locked {
        // SAFETY: as above.
        disk_stamp(&unsafe { &*p }.sc)
    } else {
        None
    };
    // SAFETY: as above; `ctx` is set when the handle is made and never
    // replaced, and the engine's fields below do not include it. Borrowed,
    // not cloned: a clone and its drop were two atomic operations per call.
    let ctx = unsafe { &(*p).ctx };
    let slot = ctx.get::<SchunkSlot>().map(|s| &s.0);
    if let Some(s) = slot {
        s.store(schunk, Ordering::Release);
    }
    // SAFETY: as above; only these fields are borrowed (the module docs:
    // callbacks read the others through `View`, shared).
    let r = f(&mut unsafe {
        Engine {
            sc: &mut (*p).sc,
            data_edit: &mut (*p).data_edit,
            c: &(*p).c,
            cparams: &(*p).cparams,
            dparams: &(*p).dparams,
        }
    });
    if let Some(s) = slot {
        s.store(std::ptr::null_mut(), Ordering::Release);
    }
    // SAFETY: as above; the engine's borrows ended.
    let h = unsafe { &mut *p };
    // In memory the stamp is `None`: a test of its tag, not a 48-byte store
    // of `None` on every call.
    if h.sc.is_on_disk() || h.stamp.is_some() {
        h.stamp = disk_stamp(&h.sc);
    }
    if mode != Mode::Lookup || reopened || threads {
        h.sync(metas || reopened);
    }
    if locked {
        lock::end_call(h, h.stamp != before);
    }
    r
}

pub(super) fn index(h: &Engine<'_>, nchunk: i64, inclusive: bool) -> Result<usize, i64> {
    let n = h.sc.nchunks() as i64;
    if nchunk < 0 || nchunk > n || (!inclusive && nchunk == n) {
        return Err(i64::from(err::INVALID_PARAM));
    }
    Ok(nchunk as usize)
}

pub(super) fn r64(r: oxiblosc::Result<usize>) -> i64 {
    match r {
        Ok(n) => n as i64,
        Err(e) => i64::from(code_of(&e)),
    }
}

/// The chunk at `chunk` as a slice of its header's cbytes.
pub(super) fn chunk_arg<'a>(chunk: *mut u8) -> Result<&'a [u8], i64> {
    if chunk.is_null() {
        return Err(i64::from(err::NULL_POINTER));
    }
    // SAFETY: chunk holds a whole chunk (C's contract).
    unsafe { crate::common::chunk_at(chunk as *const c_void) }.ok_or(i64::from(err::INVALID_HEADER))
}

/// Compress `nbytes` at `src` and append them; the new number of chunks.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_schunk_append_buffer(
    schunk: *mut blosc2_schunk,
    src: *const c_void,
    nbytes: i32,
) -> i64 {
    guard(i64::from(err::FAILURE), || {
        with(schunk, i64::from(err::NULL_POINTER), false, |h| {
            if nbytes < 0 || (src.is_null() && nbytes > 0) {
                return i64::from(err::INVALID_PARAM);
            }
            // SAFETY: src holds nbytes readable bytes.
            let data = unsafe { slice_in(src, nbytes as usize) };
            r64(h.sc.append_buffer(data))
        })
    })
}

/// Append a compressed chunk; the new number of chunks.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_schunk_append_chunk(
    schunk: *mut blosc2_schunk,
    chunk: *mut u8,
    copy: bool,
) -> i64 {
    guard(i64::from(err::FAILURE), || {
        with(schunk, i64::from(err::NULL_POINTER), false, |h| {
            let r = match chunk_arg(chunk) {
                Ok(c) => r64(h.sc.append_chunk(c)),
                Err(e) => e,
            };
            take_over(chunk, copy, r >= 0);
            r
        })
    })
}

/// Insert a compressed chunk at `nchunk`; the new number of chunks.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_schunk_insert_chunk(
    schunk: *mut blosc2_schunk,
    nchunk: i64,
    chunk: *mut u8,
    copy: bool,
) -> i64 {
    guard(i64::from(err::FAILURE), || {
        with(schunk, i64::from(err::NULL_POINTER), false, |h| {
            let i = match index(h, nchunk, true) {
                Ok(i) => i,
                Err(e) => return e,
            };
            let r = match chunk_arg(chunk) {
                Ok(c) => r64({
                    let r = h.sc.insert_chunk(i, c);
                    h.data_edit.note(if r.is_ok() {
                        DataEdit::Insert(i)
                    } else {
                        DataEdit::All
                    });
                    r
                }
                .map(|()| h.sc.nchunks())),
                Err(e) => e,
            };
            take_over(chunk, copy, r >= 0);
            r
        })
    })
}

/// Replace chunk `nchunk`; the number of chunks.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_schunk_update_chunk(
    schunk: *mut blosc2_schunk,
    nchunk: i64,
    chunk: *mut u8,
    copy: bool,
) -> i64 {
    guard(i64::from(err::FAILURE), || {
        with(schunk, i64::from(err::NULL_POINTER), false, |h| {
            let i = match index(h, nchunk, false) {
                Ok(i) => i,
                Err(e) => return e,
            };
            let r = match chunk_arg(chunk) {
                Ok(c) => r64({
                    let r = h.sc.update_chunk(i, c);
                    h.data_edit.note(if r.is_ok() {
                        DataEdit::Update(i)
                    } else {
                        DataEdit::All
                    });
                    r
                }
                .map(|()| h.sc.nchunks())),
                Err(e) => e,
            };
            take_over(chunk, copy, r >= 0);
            r
        })
    })
}

/// Delete chunk `nchunk`; the new number of chunks.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_schunk_delete_chunk(
    schunk: *mut blosc2_schunk,
    nchunk: i64,
) -> i64 {
    guard(i64::from(err::FAILURE), || {
        with(schunk, i64::from(err::NULL_POINTER), false, |h| {
            let i = match index(h, nchunk, false) {
                Ok(i) => i,
                Err(e) => return e,
            };
            r64({
                let r = h.sc.delete_chunk(i);
                h.data_edit.note(if r.is_ok() {
                    DataEdit::Delete(i)
                } else {
                    DataEdit::All
                });
                r
            }
            .map(|()| h.sc.nchunks()))
        })
    })
}

/// Decompress chunk `nchunk` into `dest[..nbytes]`; its size.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_schunk_decompress_chunk(
    schunk: *mut blosc2_schunk,
    nchunk: i64,
    dest: *mut c_void,
    nbytes: i32,
) -> c_int {
    guard(err::FAILURE, || {
        with_lookup(schunk, err::NULL_POINTER, |h| {
            let i = match index(h, nchunk, false) {
                Ok(i) => i,
                Err(e) => return e as c_int,
            };
            if nbytes < 0 || (dest.is_null() && nbytes > 0) {
                return err::INVALID_PARAM;
            }
            // SAFETY: dest holds nbytes writable bytes.
            let out = unsafe { slice_out(dest, nbytes as usize) };
            match h.sc.decompress_chunk(i, out) {
                Ok(n) => n as c_int,
                Err(e) => code_of(&e),
            }
        })
    })
}

/// A malloc'ed copy of chunk `nchunk` (`*needs_free` = true); its size.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_schunk_get_chunk(
    schunk: *mut blosc2_schunk,
    nchunk: i64,
    chunk: *mut *mut u8,
    needs_free: *mut bool,
) -> c_int {
    guard(err::FAILURE, || {
        with_lookup(schunk, err::NULL_POINTER, |h| {
            if chunk.is_null() {
                return err::NULL_POINTER;
            }
            let i = match index(h, nchunk, false) {
                Ok(i) => i,
                Err(e) => {
                    // SAFETY: chunk is non-null and writable.
                    unsafe { *chunk = std::ptr::null_mut() };
                    return e as c_int;
                }
            };
            let on_disk = h.sc.is_on_disk();
            match h.sc.get_chunk(i) {
                // A chunk that cannot be read whole from its file.
                Err(
                    oxiblosc::Error::Truncated { .. }
                    | oxiblosc::Error::Io(_)
                    | oxiblosc::Error::Corrupt(_),
                ) if on_disk => -13, // BLOSC2_ERROR_FILE_READ
                Ok(c) => {
                    let p = malloc_copy(&c);
                    // SAFETY: the out-pointers are non-null (chunk) or null-checked.
                    unsafe {
                        *chunk = p;
                        if !needs_free.is_null() {
                            *needs_free = true;
                        }
                    }
                    if p.is_null() {
                        err::MEMORY_ALLOC
                    } else {
                        c.len() as c_int
                    }
                }
                Err(e) => code_of(&e),
            }
        })
    })
}

/// As [`blosc2_schunk_get_chunk`]: the whole chunk is a valid lazy chunk.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_schunk_get_lazychunk(
    schunk: *mut blosc2_schunk,
    nchunk: i64,
    chunk: *mut *mut u8,
    needs_free: *mut bool,
) -> c_int {
    // SAFETY: same contract as blosc2_schunk_get_chunk.
    let rc = unsafe { blosc2_schunk_get_chunk(schunk, nchunk, chunk, needs_free) };
    if rc <= 0 {
        return rc;
    }
    // As C-Blosc2: a VL-block chunk of a frame on disk comes lazy (header,
    // block starts and the lazy trailer); the VL decoders read the chunk
    // again through the context's super-chunk (internal::frame).
    guard(rc, || {
        use oxiblosc::schunk::Storage;
        // Where the chunk lives: a contiguous frame's byte (from the frame
        // start), a sparse frame's chunk file id; None in memory.
        let offset = with_read(schunk, None, false, |h| {
            let loc =
                h.sc.chunk_info(usize::try_from(nchunk).ok()?)
                    .ok()?
                    .location?;
            let loc = i64::try_from(loc).ok()?;
            match h.sc.storage() {
                Storage::Memory => None,
                Storage::Directory(_) => Some(loc),
                _ => loc.checked_add(i64::from(h.sc.frame_header().header_len)),
            }
        });
        let Some(offset) = offset else { return rc };
        // SAFETY: get_chunk stored a malloc'ed chunk of rc bytes at *chunk
        // (chunk is non-null: get_chunk checked it).
        let full = unsafe { std::slice::from_raw_parts(*chunk, rc as usize) };
        let Some(lazy) = crate::internal::frame::lazy_vl_chunk(full, nchunk, offset) else {
            return rc;
        };
        let p = malloc_copy(&lazy);
        if p.is_null() {
            return rc;
        }
        // SAFETY: the whole chunk was malloc'ed by get_chunk for the caller,
        // who now gets the lazy one instead; freed once.
        unsafe {
            free(*chunk as *mut c_void);
            *chunk = p;
            if !needs_free.is_null() {
                *needs_free = true;
            }
        }
        lazy.len() as c_int
    })
}

/// `blosc2_schunk_get_vlblock`: block `nblock` of the VL-block chunk
/// `nchunk`, decoded into a malloc'ed `*dest` (`*destsize` bytes; the
/// caller frees it) with the super-chunk's decompression context; its
/// size, or a negative code (`BLOSC2_ERROR_INVALID_PARAM` for a chunk
/// number or block number out of range, or a chunk without VL blocks).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_schunk_get_vlblock(
    schunk: *mut blosc2_schunk,
    nchunk: i64,
    nblock: i32,
    dest: *mut *mut u8,
    destsize: *mut i32,
) -> c_int {
    guard(err::FAILURE, || {
        with_read(schunk, err::NULL_POINTER, false, |h| {
            if dest.is_null() || destsize.is_null() {
                return err::NULL_POINTER;
            }
            let i = match index(h, nchunk, false) {
                Ok(i) => i,
                Err(e) => return e as c_int,
            };
            let dctx = h.c.dctx;
            match h.sc.get_chunk(i) {
                Ok(c) => {
                    let Ok(len) = i32::try_from(c.len()) else {
                        return err::INVALID_PARAM;
                    };
                    // SAFETY: dctx is this handle's live decompression
                    // context; the chunk is `len` readable bytes; dest and
                    // destsize are non-null and writable.
                    unsafe {
                        crate::v2::blosc2_vldecompress_block_ctx(
                            dctx,
                            c.as_ptr() as *const c_void,
                            len,
                            nblock,
                            dest,
                            destsize,
                        )
                    }
                }
                Err(e) => code_of(&e),
            }
        })
    })
}

/// Items `[start, stop)` of the flat content into `buffer`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_schunk_get_slice_buffer(
    schunk: *mut blosc2_schunk,
    start: i64,
    stop: i64,
    buffer: *mut c_void,
) -> c_int {
    guard(err::FAILURE, || {
        with_lookup(schunk, err::NULL_POINTER, |h| {
            let ts = h.sc.typesize().max(1) as i64;
            let nitems = h.sc.nbytes() as i64 / ts;
            if start < 0 || stop < start || stop > nitems {
                return err::INVALID_PARAM;
            }
            if buffer.is_null() {
                return err::NULL_POINTER;
            }
            // Decoded straight into the caller's buffer, no copy.
            // SAFETY: buffer has room for (stop - start) items.
            let dst = unsafe { slice_out(buffer, ((stop - start) * ts) as usize) };
            match h
                .sc
                .get_slice_into((start * ts) as u64, (stop * ts) as u64, dst)
            {
                Ok(_) => 0,
                Err(e) => code_of(&e),
            }
        })
    })
}

/// Overwrite items `[start, stop)` of the flat content from `buffer`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_schunk_set_slice_buffer(
    schunk: *mut blosc2_schunk,
    start: i64,
    stop: i64,
    buffer: *mut c_void,
) -> c_int {
    guard(err::FAILURE, || {
        with(schunk, err::NULL_POINTER, false, |h| {
            let ts = h.sc.typesize().max(1) as i64;
            let nitems = h.sc.nbytes() as i64 / ts;
            if start < 0 || stop < start || stop > nitems {
                return err::INVALID_PARAM;
            }
            if buffer.is_null() {
                return err::NULL_POINTER;
            }
            // SAFETY: buffer holds (stop - start) items.
            let data = unsafe { slice_in(buffer, ((stop - start) * ts) as usize) };
            h.data_edit.note(DataEdit::All);
            match h.sc.set_slice((start * ts) as u64, data) {
                Ok(()) => 0,
                Err(e) => code_of(&e),
            }
        })
    })
}

/// Items at `coords` (item indices) into `buffer`, one after another.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_schunk_get_sparse_buffer(
    schunk: *mut blosc2_schunk,
    ncoords: i64,
    coords: *const i64,
    buffer: *mut c_void,
) -> c_int {
    guard(err::FAILURE, || {
        with_read(schunk, err::NULL_POINTER, false, |h| {
            if ncoords < 0 || (ncoords > 0 && (coords.is_null() || buffer.is_null())) {
                return err::INVALID_PARAM;
            }
            let ts = h.sc.typesize().max(1);
            let nitems = h.sc.nbytes() / ts as u64;
            // SAFETY: coords holds ncoords values.
            let cs = unsafe { std::slice::from_raw_parts(coords, ncoords as usize) };
            if cs.iter().any(|&c| c < 0 || c as u64 >= nitems) {
                return err::INVALID_PARAM;
            }
            // Read: the chunks the coordinates fall in, each decoded once.
            let chunksize = h.sc.chunksize().filter(|&c| c > 0);
            let mut decoded: std::collections::HashMap<usize, Vec<u8>> = Default::default();
            let mut singles: Vec<Vec<u8>> = Vec::new();
            let mut sources: Vec<(usize, usize, bool)> = Vec::with_capacity(cs.len());
            for &c in cs {
                let s = c as u64 * ts as u64;
                match chunksize {
                    Some(csz) => {
                        let (i, off) = ((s / csz as u64) as usize, (s % csz as u64) as usize);
                        if let std::collections::hash_map::Entry::Vacant(e) = decoded.entry(i) {
                            match h.sc.decompress_chunk_vec(i) {
                                Ok(d) => {
                                    e.insert(d);
                                }
                                Err(e) => return code_of(&e),
                            }
                        }
                        sources.push((i, off, true));
                    }
                    None => match h.sc.get_slice(s, s + ts as u64) {
                        Ok(b) => {
                            singles.push(b);
                            sources.push((singles.len() - 1, 0, false));
                        }
                        Err(e) => return code_of(&e),
                    },
                }
            }
            // Gather: one job per coordinate, through the caller's threading
            // backend when one is set and more than one thread is asked for.
            let base = buffer as *mut u8;
            let mut jobs: Vec<GatherJob> = Vec::with_capacity(sources.len());
            for (k, &(i, off, chunked)) in sources.iter().enumerate() {
                let src: &[u8] = if chunked { &decoded[&i] } else { &singles[i] };
                if off + ts > src.len() {
                    return err::DATA;
                }
                jobs.push(GatherJob {
                    src: src[off..].as_ptr(),
                    // SAFETY: buffer has room for ncoords items (C's contract).
                    dst: unsafe { base.add(k * ts) },
                    len: ts,
                });
            }
            let threaded = h.dparams.nthreads > 1
                // SAFETY: jobs holds jobs.len() GatherJobs, alive until the
                // backend returns; gather_job reads exactly one of them.
                && unsafe { crate::v2::run_threads_callback(
                    gather_job,
                    jobs.len(),
                    std::mem::size_of::<GatherJob>(),
                    jobs.as_mut_ptr() as *mut c_void,
                ) };
            if !threaded {
                for j in jobs.iter_mut() {
                    // SAFETY: j is a live GatherJob.
                    unsafe { gather_job(j as *mut GatherJob as *mut c_void) };
                }
            }
            0
        })
    })
}

/// One item copy of `blosc2_schunk_get_sparse_buffer`.
#[repr(C)]
pub(super) struct GatherJob {
    src: *const u8,
    dst: *mut u8,
    len: usize,
}

/// Run one [`GatherJob`].
unsafe extern "C" fn gather_job(job: *mut c_void) {
    // SAFETY: job points to a live GatherJob whose src and dst hold len
    // bytes each, dst distinct for every job.
    unsafe {
        let j = &*(job as *const GatherJob);
        std::ptr::copy_nonoverlapping(j.src, j.dst, j.len);
    }
}

/// A malloc'ed copy of the super-chunk's cparams (the caller frees it).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_schunk_get_cparams(
    schunk: *mut blosc2_schunk,
    cparams: *mut *mut blosc2_cparams,
) -> c_int {
    guard(err::FAILURE, || {
        with_read(schunk, err::NULL_POINTER, false, |h| {
            if cparams.is_null() {
                return err::NULL_POINTER;
            }
            let mut cp = *h.cparams;
            cp.schunk = schunk as *mut c_void;
            // SAFETY: cparams is non-null and writable.
            unsafe { *cparams = malloc_value(&cp) };
            0
        })
    })
}

/// A malloc'ed copy of the super-chunk's dparams (the caller frees it).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_schunk_get_dparams(
    schunk: *mut blosc2_schunk,
    dparams: *mut *mut blosc2_dparams,
) -> c_int {
    guard(err::FAILURE, || {
        with_read(schunk, err::NULL_POINTER, false, |h| {
            if dparams.is_null() {
                return err::NULL_POINTER;
            }
            let mut dp = *h.dparams;
            dp.schunk = schunk as *mut c_void;
            // SAFETY: dparams is non-null and writable.
            unsafe { *dparams = malloc_value(&dp) };
            0
        })
    })
}

/// Reorder the chunks: chunk `i` becomes the old chunk `offsets_order[i]`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_schunk_reorder_offsets(
    schunk: *mut blosc2_schunk,
    offsets_order: *mut i64,
) -> c_int {
    guard(err::FAILURE, || {
        with(schunk, err::NULL_POINTER, false, |h| {
            if offsets_order.is_null() {
                return err::NULL_POINTER;
            }
            let n = h.sc.nchunks();
            // SAFETY: offsets_order holds nchunks values.
            let o = unsafe { std::slice::from_raw_parts(offsets_order, n) };
            let mut order = Vec::with_capacity(n);
            for &v in o {
                if v < 0 || v as usize >= n {
                    return err::DATA;
                }
                order.push(v as usize);
            }
            h.data_edit.note(DataEdit::All);
            match h.sc.reorder_chunks(&order) {
                Ok(()) => 0,
                Err(e) => code_of(&e),
            }
        })
    })
}

/// Fill an empty super-chunk with `nitems` special items; the number of
/// chunks.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_schunk_fill_special(
    schunk: *mut blosc2_schunk,
    nitems: i64,
    special_value: c_int,
    chunksize: i32,
) -> i64 {
    guard(i64::from(err::FAILURE), || {
        with(schunk, i64::from(err::NULL_POINTER), false, |h| {
            if nitems < 0 || chunksize <= 0 {
                return i64::from(err::INVALID_PARAM);
            }
            let fill = match special_value {
                1 => Fill::Zeros,
                2 => Fill::Nan,
                4 => Fill::Uninit,
                _ => return i64::from(err::INVALID_PARAM),
            };
            h.data_edit.note(DataEdit::All);
            match h.sc.fill_special(nitems as u64, fill, chunksize as usize) {
                Ok(()) => h.sc.nchunks() as i64,
                Err(e) => i64::from(code_of(&e)),
            }
        })
    })
}
