//! Files, defaults and frame helpers.

use super::*;

// ---------------------------------------------------------------------------
// Files and defaults.

/// Remove a file or a directory tree (0; missing paths are fine).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_remove_urlpath(path: *const c_char) -> c_int {
    guard(err::FAILURE, || {
        // SAFETY: path is null or a NUL-terminated string.
        let Some(p) = (unsafe { str_arg(path) }) else {
            return 0;
        };
        let p = Path::new(p);
        let r = if p.is_dir() {
            std::fs::remove_dir_all(p)
        } else if p.exists() {
            std::fs::remove_file(p)
        } else {
            Ok(())
        };
        // A frame file's lock sidecar (lock.rs) goes with it.
        let mut side = p.as_os_str().to_os_string();
        side.push(".b2lock");
        let _ = std::fs::remove_file(side);
        if r.is_ok() { 0 } else { -31 }
    })
}

/// `blosc2_rename_urlpath`: rename a frame file or a sparse frame's
/// directory (0; `BLOSC2_ERROR_FAILURE` when `old_urlpath` is missing or
/// the rename fails; nothing for a NULL path, as C-Blosc2).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_rename_urlpath(
    old_urlpath: *mut c_char,
    new_urlpath: *mut c_char,
) -> c_int {
    guard(err::FAILURE, || {
        if old_urlpath.is_null() || new_urlpath.is_null() {
            return 0;
        }
        // SAFETY: both are NUL-terminated strings (C's contract).
        let (from, to) = unsafe {
            (
                std::ffi::CStr::from_ptr(old_urlpath),
                std::ffi::CStr::from_ptr(new_urlpath),
            )
        };
        use std::os::unix::ffi::OsStrExt;
        let (from, to) = (
            Path::new(std::ffi::OsStr::from_bytes(from.to_bytes())),
            Path::new(std::ffi::OsStr::from_bytes(to.to_bytes())),
        );
        if std::fs::symlink_metadata(from).is_err() {
            eprintln!("blosc2_rename_urlpath: cannot access {}", from.display());
            return err::FAILURE;
        }
        match std::fs::rename(from, to) {
            Ok(()) => 0,
            Err(e) => {
                eprintln!(
                    "blosc2_rename_urlpath: {} to {}: {e}",
                    from.display(),
                    to.display()
                );
                err::FAILURE
            }
        }
    })
}

/// Remove a directory tree.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_remove_dir(path: *const c_char) -> c_int {
    // SAFETY: same contract.
    unsafe { blosc2_remove_urlpath(path) }
}

/// `BLOSC2_CPARAMS_DEFAULTS`.
#[unsafe(no_mangle)]
pub extern "C" fn blosc2_get_blosc2_cparams_defaults() -> blosc2_cparams {
    CPARAMS_DEFAULTS
}

/// `BLOSC2_DPARAMS_DEFAULTS`.
#[unsafe(no_mangle)]
pub extern "C" fn blosc2_get_blosc2_dparams_defaults() -> blosc2_dparams {
    DPARAMS_DEFAULTS
}

/// `BLOSC2_STORAGE_DEFAULTS`.
#[unsafe(no_mangle)]
pub extern "C" fn blosc2_get_blosc2_storage_defaults() -> blosc2_storage {
    blosc2_storage {
        contiguous: false,
        urlpath: std::ptr::null_mut(),
        cparams: std::ptr::null_mut(),
        dparams: std::ptr::null_mut(),
        io: std::ptr::null_mut(),
    }
}

/// `BLOSC2_IO_DEFAULTS`.
#[unsafe(no_mangle)]
pub extern "C" fn blosc2_get_blosc2_io_defaults() -> blosc2_io {
    blosc2_io {
        id: 0,
        name: c"filesystem".as_ptr(),
        params: std::ptr::null_mut(),
    }
}

/// The offsets index of the super-chunk's frame (malloc'ed, nchunks
/// entries; the caller frees it): byte offsets of a contiguous frame's
/// chunks, chunk file ids of a sparse frame's; NULL without a frame.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_frame_get_offsets(schunk: *mut blosc2_schunk) -> *mut i64 {
    guard(std::ptr::null_mut(), || {
        with_read(schunk, std::ptr::null_mut(), false, |h| {
            if h.c.frame.is_null()
                && !matches!(h.sc.storage(), oxiblosc::schunk::Storage::Directory(_))
            {
                return std::ptr::null_mut();
            }
            // The entries as the frame's index holds them (no chunk read,
            // no frame copied: a frame in a file was read whole for this),
            // written straight into the buffer returned: its nchunks
            // entries are all this call allocates, as in C-Blosc2. (An
            // index stored as a run of one special code stands for any
            // number of chunks: 134 million, 1 GiB of entries, in a
            // 172-byte frame.)
            let n = h.sc.nchunks();
            let Some(bytes) = n.checked_mul(8) else {
                return std::ptr::null_mut();
            };
            // SAFETY: malloc has no preconditions; null is checked.
            let p = unsafe { libc::malloc(bytes.max(1)) } as *mut i64;
            if p.is_null() {
                return std::ptr::null_mut();
            }
            for i in 0..n {
                let Ok(v) = h.sc.chunk_entry(i).and_then(|e| e.to_raw()) else {
                    // SAFETY: malloc'ed above, freed once, not returned.
                    unsafe { libc::free(p.cast()) };
                    return std::ptr::null_mut();
                };
                // SAFETY: i < n, and p holds n entries (8-byte aligned, as
                // malloc aligns for every fundamental type).
                unsafe { p.add(i).write(v) };
            }
            p
        })
    })
}

/// The chunks items `[*start, *stop)` of a (one-dimensional) super-chunk
/// fall in, malloc'ed into `*chunks_idx`; their number.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_get_slice_nchunks(
    schunk: *mut blosc2_schunk,
    start: *mut i64,
    stop: *mut i64,
    chunks_idx: *mut *mut i64,
) -> i64 {
    guard(i64::from(err::FAILURE), || {
        with_read(schunk, i64::from(err::NULL_POINTER), false, |h| {
            if start.is_null() || stop.is_null() || chunks_idx.is_null() {
                return i64::from(err::NULL_POINTER);
            }
            if h.c.ndim > 1 {
                // b2nd arrays (ndim > 1) are not supported.
                return i64::from(err::INVALID_PARAM);
            }
            // SAFETY: start and stop point to one index each (ndim <= 1).
            let (s, e) = unsafe { (*start, *stop) };
            let ts = h.sc.typesize().max(1) as i64;
            if s < 0 || e < s {
                return i64::from(err::INVALID_PARAM);
            }
            // The byte offsets of the caller's item indices: an index past
            // every byte a frame can hold is refused, not wrapped.
            let (Some(bs), Some(be)) = (s.checked_mul(ts), e.checked_mul(ts)) else {
                return i64::from(err::INVALID_PARAM);
            };
            let nchunks = h.sc.nchunks() as i64;
            let (first, last) = match h.sc.chunksize().filter(|&c| c > 0) {
                _ if nchunks == 0 => (0, 0),
                Some(cs) => {
                    let cs = cs as i64;
                    let first = (bs / cs).min(nchunks);
                    let last = if e == s {
                        first
                    } else {
                        (be / cs + i64::from(be % cs != 0)).min(nchunks)
                    };
                    (first, last)
                }
                None => return i64::from(err::INVALID_PARAM),
            };
            let idx: Vec<u8> = (first..last).flat_map(|i| i.to_ne_bytes()).collect();
            // SAFETY: chunks_idx is non-null and writable.
            unsafe { *chunks_idx = malloc_copy(&idx) as *mut i64 };
            last - first
        })
    })
}
