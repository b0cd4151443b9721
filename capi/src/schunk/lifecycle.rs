//! Creating, opening, freeing, copying and serialising super-chunks.

use super::*;

/// A new, empty super-chunk: in memory (`urlpath` NULL), in a file
/// (`contiguous`) or in a directory.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_schunk_new(storage: *mut blosc2_storage) -> *mut blosc2_schunk {
    guard(std::ptr::null_mut(), || {
        // SAFETY: storage is null or points to C's storage.
        let st = unsafe { storage.as_ref() }
            .copied()
            .unwrap_or(blosc2_storage {
                contiguous: false,
                urlpath: std::ptr::null_mut(),
                cparams: std::ptr::null_mut(),
                dparams: std::ptr::null_mut(),
                io: std::ptr::null_mut(),
            });
        let Ok((cp, dp)) = params_of_storage(&st) else {
            return std::ptr::null_mut();
        };
        // SAFETY: io is null or points to C's blosc2_io.
        let io = unsafe { st.io.as_ref() }.copied();
        // The file-system backends (plain and mmap: same bytes) use the
        // system's files; a registered set gets every file access.
        let Ok(store) = CStore::for_io(io.as_ref()) else {
            return std::ptr::null_mut();
        };
        let Ok(p) = to_cparams(&cp) else {
            return std::ptr::null_mut();
        };
        let p = schunk_cparams(p);
        let d = DParams::default().nthreads(dp.nthreads.max(1) as usize);
        let mut b = SChunk::builder().fsync(false).cparams(p).dparams(d);
        // SAFETY: urlpath is null or a NUL-terminated string.
        let url = unsafe { str_arg(st.urlpath) }.map(strip_file_scheme);
        if let (Some(s), Some(_)) = (store, url) {
            b = b.store(s);
        }
        let sc = match url {
            None => b.build_memory(),
            Some(u) if st.contiguous => b.create_file(u),
            Some(u) => b.create_dir(u),
        };
        match sc {
            Ok(sc) => with_io(Handle::boxed(sc, cp, dp, url, st.contiguous, false), io),
            Err(e) => {
                eprintln!("blosc2_schunk_new: {e}");
                std::ptr::null_mut()
            }
        }
    })
}

/// Record the storage's `io` in the C view of a new handle.
fn with_io(s: *mut blosc2_schunk, io: Option<blosc2_io>) -> *mut blosc2_schunk {
    if let Some(io) = io
        // SAFETY: s is null or a handle just made, not yet shared.
        && let Some((h, _claim)) = unsafe { handle(s) }
    {
        h.io = io;
        if lock::io_requests_locking(Some(&io)) {
            lock::request_locking(s);
        }
    }
    s
}

/// Open the frame file or directory at `url` with the file-system backend
/// (`io`: its parameters; locking when they or `BLOSC_LOCKING` ask). A
/// locked open reads the frame under the shared lock, retries a frame
/// caught half-way through a change, then follows the lock's generation at
/// once (C-Blosc2 guards the first read the same way).
fn open_fs(url: &str, io: Option<&blosc2_io>) -> *mut blosc2_schunk {
    let requested = lock::io_requests_locking(io);
    let locking = requested || lock::locking_on_env();
    let sc = open_locked_if(requested, url, || {
        if Path::new(url).is_dir() {
            open_options().open(url)
        } else {
            lock::read_frame(url, 0, locking)
        }
    });
    let s = wrap_opened(sc, Some(url));
    if requested {
        lock::request_locking(s);
    }
    if locking && !s.is_null() && !lock::guard_first_read(s) {
        // SAFETY: s is a handle just made, not shared.
        unsafe { blosc2_schunk_free(s) };
        return std::ptr::null_mut();
    }
    match io {
        Some(io) => with_io(s, Some(*io)),
        None => s,
    }
}

pub(super) fn wrap_opened(sc: oxiblosc::Result<SChunk>, url: Option<&str>) -> *mut blosc2_schunk {
    match sc {
        Ok(mut sc) => {
            // C-Blosc2 gives an opened super-chunk the global thread count
            // (blosc2_get_nthreads) for both contexts, not the `tcomp` /
            // `tdecomp` its frame records.
            let n = usize::try_from(crate::v2::blosc2_get_nthreads())
                .unwrap_or(1)
                .max(1);
            let _ = sc.set_cparams(sc.cparams().clone().nthreads(n));
            sc.set_dparams(sc.dparams().clone().nthreads(n));
            let cp = cparams_of_rust(sc.cparams());
            let mut dp = DPARAMS_DEFAULTS;
            dp.nthreads = sc.dparams().nthreads.min(i16::MAX as usize) as i16;
            let contiguous = !matches!(sc.storage(), oxiblosc::schunk::Storage::Directory(_));
            Handle::boxed(sc, cp, dp, url, contiguous, false)
        }
        Err(e) => {
            eprintln!("blosc2_schunk_open: {e}");
            std::ptr::null_mut()
        }
    }
}

/// Open a frame file or a sparse-frame directory. As in C-Blosc2, the
/// chunks are not all read at the open: a frame with a damaged chunk (a
/// chunk file gone, a chunk that runs past the frame) opens, and reading
/// that chunk fails; such a super-chunk is read-only here (C-Blosc2 would
/// change it).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_schunk_open(urlpath: *const c_char) -> *mut blosc2_schunk {
    guard(std::ptr::null_mut(), || {
        // SAFETY: urlpath is null or a NUL-terminated string.
        let Some(url) = (unsafe { str_arg(urlpath) }).map(strip_file_scheme) else {
            return std::ptr::null_mut();
        };
        if !Path::new(url).exists() {
            return std::ptr::null_mut();
        }
        open_fs(url, None)
    })
}

/// Open a frame through an I/O backend: the file system ones (plain and
/// mmap) give the same bytes, so both open the file; other backends are
/// not supported (NULL).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_schunk_open_udio(
    urlpath: *const c_char,
    udio: *const blosc2_io,
) -> *mut blosc2_schunk {
    // SAFETY: udio is null or points to C's blosc2_io.
    if let Some(io) = unsafe { udio.as_ref() } {
        if io.id > 1 {
            return guard(std::ptr::null_mut(), || {
                let Ok(Some(store)) = CStore::for_io(Some(io)) else {
                    return std::ptr::null_mut();
                };
                // SAFETY: urlpath is null or a NUL-terminated string.
                let Some(url) = (unsafe { str_arg(urlpath) }).map(strip_file_scheme) else {
                    return std::ptr::null_mut();
                };
                let sc = open_options().store(store).open(url);
                with_io(wrap_opened(sc, Some(url)), Some(*io))
            });
        }
        if io.id == 1 && !io.params.is_null() {
            // SAFETY: the params of the mmap backend are a
            // blosc2_stdio_mmap, whose first field is `const char* mode`.
            let mode = unsafe { str_arg(*(io.params as *const *const c_char)) };
            if mode == Some("c") {
                // Copy-on-write: changes stay in memory, the file is untouched.
                return guard(std::ptr::null_mut(), || {
                    // SAFETY: urlpath is null or a NUL-terminated string.
                    let Some(url) = (unsafe { str_arg(urlpath) }).map(strip_file_scheme) else {
                        return std::ptr::null_mut();
                    };
                    match std::fs::read(url) {
                        Ok(b) => wrap_opened(SChunk::from_cframe(b), Some(url)),
                        Err(_) => std::ptr::null_mut(),
                    }
                });
            }
        }
    }
    // SAFETY: udio is null or points to C's blosc2_io.
    if let Some(io) = unsafe { udio.as_ref() }.filter(|io| lock::io_requests_locking(Some(io))) {
        return guard(std::ptr::null_mut(), || {
            // SAFETY: urlpath is null or a NUL-terminated string.
            let Some(url) = (unsafe { str_arg(urlpath) }).map(strip_file_scheme) else {
                return std::ptr::null_mut();
            };
            if !Path::new(url).exists() {
                return std::ptr::null_mut();
            }
            open_fs(url, Some(io))
        });
    }
    // SAFETY: same contract as blosc2_schunk_open.
    unsafe { blosc2_schunk_open(urlpath) }
}

/// As [`blosc2_schunk_open_udio`], at byte `offset` of the file.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_schunk_open_offset_udio(
    urlpath: *const c_char,
    offset: i64,
    udio: *const blosc2_io,
) -> *mut blosc2_schunk {
    // SAFETY: udio is null or points to C's blosc2_io.
    if unsafe { udio.as_ref() }.is_some_and(|io| io.id > 1) {
        return std::ptr::null_mut();
    }
    // SAFETY: same contract as blosc2_schunk_open_offset.
    unsafe { blosc2_schunk_open_offset(urlpath, offset) }
}

// `blosc2_schunk_refresh` is in lock.rs (it follows the lock's generation).

/// Open the frame at byte `offset` of a file.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_schunk_open_offset(
    urlpath: *const c_char,
    offset: i64,
) -> *mut blosc2_schunk {
    guard(std::ptr::null_mut(), || {
        // SAFETY: urlpath is null or a NUL-terminated string.
        let Some(url) = (unsafe { str_arg(urlpath) }).map(strip_file_scheme) else {
            return std::ptr::null_mut();
        };
        if offset < 0 || !Path::new(url).exists() {
            return std::ptr::null_mut();
        }
        wrap_opened(open_options().offset(offset as u64).open(url), Some(url))
    })
}

/// A super-chunk from a contiguous frame in memory (always copied). As in
/// C-Blosc2, with `copy` every chunk's size is checked at once; without,
/// a chunk that does not fit the frame fails only when it is read (the
/// super-chunk is then read-only).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_schunk_from_buffer(
    cframe: *mut u8,
    len: i64,
    copy: bool,
) -> *mut blosc2_schunk {
    guard(std::ptr::null_mut(), || {
        if cframe.is_null() || len <= 0 {
            return std::ptr::null_mut();
        }
        // SAFETY: cframe holds len readable bytes.
        let bytes = unsafe { slice_in(cframe as *const c_void, len as usize) }.to_vec();
        let opened = oxiblosc::OpenOptions::new()
            .defer_chunk_checks(!copy)
            .from_cframe(bytes);
        wrap_opened(opened, None)
    })
}

/// Free a super-chunk (0; null is ignored).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_schunk_free(schunk: *mut blosc2_schunk) -> c_int {
    guard(err::FAILURE, || {
        if !schunk.is_null() {
            // Not while a call is using it (a callback freeing the
            // super-chunk its engine call runs on).
            // SAFETY: schunk is a live super-chunk from this library (C's
            // contract).
            let Ok(claim) = (unsafe { claim(schunk, Use::Exclusive) }) else {
                return err::FAILURE;
            };
            // The state is freed with the handle: not released after.
            claim.keep();
            // SAFETY: schunk came from Handle::boxed (Box<Boxed>::into_raw)
            // and is freed once (C's contract); no call of ours is using it.
            drop(unsafe { Box::from_raw(schunk as *mut super::claim::Boxed) });
        }
        0
    })
}

/// Kept for the ABI: our super-chunks always own a copy of their frame.
#[unsafe(no_mangle)]
pub extern "C" fn blosc2_schunk_avoid_cframe_free(_schunk: *mut blosc2_schunk, _avoid: bool) {}

/// The whole super-chunk as a contiguous frame; its length. A frame in
/// memory (`contiguous`) is handed out itself, as C-Blosc2 does
/// (`*needs_free` false: valid until the super-chunk next changes or is
/// freed; C callers may write to it). Any other (a file, a directory, an
/// in-memory super-chunk without a frame, for which C builds one) is laid
/// out once and written into a `calloc`'ed buffer (`*needs_free` true: the
/// caller `free()`s it).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_schunk_to_buffer(
    schunk: *mut blosc2_schunk,
    cframe: *mut *mut u8,
    needs_free: *mut bool,
) -> i64 {
    // SAFETY: C's contract, passed on.
    unsafe { to_buffer(schunk, cframe, needs_free, true) }
}

/// [`blosc2_schunk_to_buffer`]; `lend` false gives a copy even of a frame
/// in memory (for a handle about to be freed: `b2nd_to_cframe` of a view).
///
/// # Safety
/// As `blosc2_schunk_to_buffer`.
pub(crate) unsafe fn to_buffer(
    schunk: *mut blosc2_schunk,
    cframe: *mut *mut u8,
    needs_free: *mut bool,
    lend: bool,
) -> i64 {
    guard(i64::from(err::FAILURE), || {
        with_read(schunk, i64::from(err::NULL_POINTER), false, |h| {
            if cframe.is_null() {
                return i64::from(err::NULL_POINTER);
            }
            let out = |p: *mut u8, free: bool, len: usize| {
                // SAFETY: cframe is non-null; needs_free is null-checked.
                unsafe {
                    *cframe = p;
                    if !needs_free.is_null() {
                        *needs_free = free;
                    }
                }
                len as i64
            };
            // Lent where C-Blosc2 lends: a frame in memory, one C sees
            // (`contiguous`; without one C builds a frame for the call; a
            // file's frame is not in memory, `cframe_ptr` gives None).
            if lend && !h.c.frame.is_null() {
                match h.sc.cframe_ptr() {
                    Ok(Some((p, len))) => return out(p, false, len),
                    Ok(None) => {}
                    Err(e) => return i64::from(code_of(&e)),
                }
            }
            // Laid out once: its length sizes the allocation it is
            // written into.
            let layout = match h.sc.cframe_layout() {
                Ok(l) => l,
                Err(e) => return i64::from(code_of(&e)),
            };
            let Ok(n) = usize::try_from(layout.frame_len()) else {
                return i64::from(err::MEMORY_ALLOC);
            };
            match calloc_filled(n, |dst| layout.write_into(dst).map(drop)) {
                Ok(p) => out(p, true, n),
                Err(None) => i64::from(err::MEMORY_ALLOC),
                Err(Some(e)) => i64::from(code_of(&e)),
            }
        })
    })
}

/// The length of the super-chunk's contiguous frame.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_schunk_frame_len(schunk: *mut blosc2_schunk) -> i64 {
    guard(i64::from(err::FAILURE), || {
        with_read(schunk, i64::from(err::NULL_POINTER), false, |h| {
            match h.sc.cframe_len() {
                Ok(n) => n as i64,
                Err(e) => i64::from(code_of(&e)),
            }
        })
    })
}

/// Write the super-chunk as a contiguous frame file; its length. The
/// frame goes to a temporary file renamed over `urlpath` (`SChunk::save`),
/// a piece at a time: a failed write leaves the file that was there, and
/// memory stays at a piece whatever the frame's size (C-Blosc2 copies a
/// frame that is not in memory chunk by chunk too).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_schunk_to_file(
    schunk: *mut blosc2_schunk,
    urlpath: *const c_char,
) -> i64 {
    guard(i64::from(err::FAILURE), || {
        // SAFETY: urlpath is null or a NUL-terminated string.
        let Some(url) = (unsafe { str_arg(urlpath) }).map(strip_file_scheme) else {
            return i64::from(err::NULL_POINTER);
        };
        with(schunk, i64::from(err::NULL_POINTER), false, |h| {
            match h.sc.save(url) {
                Ok(n) => n as i64,
                Err(oxiblosc::Error::Io(_)) => i64::from(err::FILE_WRITE),
                Err(e) => i64::from(code_of(&e)),
            }
        })
    })
}

/// Append the super-chunk's contiguous frame to a file; the offset where
/// it starts. The frame is written a piece at a time
/// (`SChunk::write_cframe`); when that fails, the file is cut back to what
/// it held (and a file the call made is removed).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_schunk_append_file(
    schunk: *mut blosc2_schunk,
    urlpath: *const c_char,
) -> i64 {
    guard(i64::from(err::FAILURE), || {
        // SAFETY: urlpath is null or a NUL-terminated string.
        let Some(url) = (unsafe { str_arg(urlpath) }).map(strip_file_scheme) else {
            return i64::from(err::NULL_POINTER);
        };
        with(schunk, i64::from(err::NULL_POINTER), false, |h| {
            let existed = std::fs::symlink_metadata(url).is_ok();
            let file = std::fs::OpenOptions::new()
                .append(true)
                .create(true)
                .open(url);
            let Ok(mut file) = file else {
                return i64::from(err::FILE_OPEN);
            };
            let Ok(offset) = file.metadata().map(|m| m.len()) else {
                return i64::from(err::FILE_READ);
            };
            let mut out = WriteFailed {
                w: &mut file,
                failed: false,
            };
            match h.sc.write_cframe(&mut out) {
                Ok(_) => offset as i64,
                Err(e) => {
                    let failed = out.failed;
                    if existed {
                        let _ = file.set_len(offset);
                    } else {
                        drop(file);
                        let _ = std::fs::remove_file(url);
                    }
                    if failed {
                        i64::from(err::FILE_WRITE)
                    } else {
                        i64::from(code_of(&e))
                    }
                }
            }
        })
    })
}

/// A writer that remembers whether a write to it failed (to tell C's
/// `BLOSC2_ERROR_FILE_WRITE` from the errors of reading the frame).
struct WriteFailed<'a, W: std::io::Write> {
    w: &'a mut W,
    failed: bool,
}

impl<W: std::io::Write> std::io::Write for WriteFailed<'_, W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let r = self.w.write(buf);
        self.failed |= r.is_err();
        r
    }
    fn flush(&mut self) -> std::io::Result<()> {
        let r = self.w.flush();
        self.failed |= r.is_err();
        r
    }
}

/// A copy of a super-chunk into new storage.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_schunk_copy(
    schunk: *mut blosc2_schunk,
    storage: *mut blosc2_storage,
) -> *mut blosc2_schunk {
    guard(std::ptr::null_mut(), || {
        // SAFETY: schunk is null or live.
        let Some((h, _claim)) = (unsafe { handle(schunk) }) else {
            return std::ptr::null_mut();
        };
        // SAFETY: storage is null or points to C's storage.
        let Some(st) = (unsafe { storage.as_ref() }).copied() else {
            return std::ptr::null_mut();
        };
        let (cp, dp) = match params_of_storage(&st) {
            Ok(x) => x,
            Err(_) => return std::ptr::null_mut(),
        };
        let cp = if st.cparams.is_null() { h.cparams } else { cp };
        let Ok(p) = to_cparams(&cp) else {
            return std::ptr::null_mut();
        };
        let d = DParams::default().nthreads(dp.nthreads.max(1) as usize);
        let mut b = SChunk::builder().fsync(false).cparams(p).dparams(d);
        if let Some(cs) = h.sc.chunksize() {
            b = b.chunksize(cs);
        }
        for m in h.sc.metalayers() {
            b = b.meta(&m.name, &m.content);
        }
        // SAFETY: urlpath is null or a NUL-terminated string.
        let url = unsafe { str_arg(st.urlpath) }.map(strip_file_scheme);
        let sc = match url {
            None => b.build_memory(),
            Some(u) if st.contiguous => b.create_file(u),
            Some(u) => b.create_dir(u),
        };
        let Ok(mut sc) = sc else {
            return std::ptr::null_mut();
        };
        let same_params = to_cparams(&h.cparams).ok().as_ref() == Some(sc.cparams());
        for i in 0..h.sc.nchunks() {
            let r = if same_params {
                match h.sc.get_chunk(i) {
                    Ok(c) => {
                        let c = c.into_owned();
                        sc.append_chunk(&c)
                    }
                    Err(e) => Err(e),
                }
            } else {
                match h.sc.decompress_chunk_vec(i) {
                    Ok(d) => sc.append_buffer(&d),
                    Err(e) => Err(e),
                }
            };
            if r.is_err() {
                return std::ptr::null_mut();
            }
        }
        for name in
            h.sc.vlmeta_names()
                .iter()
                .map(|s| s.to_string())
                .collect::<Vec<_>>()
        {
            let v = match h.sc.vlmeta_get(&name) {
                Ok(Some(v)) => v,
                _ => return std::ptr::null_mut(),
            };
            if sc.vlmeta_add(&name, &v).is_err() {
                return std::ptr::null_mut();
            }
        }
        Handle::boxed(sc, cp, dp, url, st.contiguous, false)
    })
}
