//! The I/O backend functions of `blosc2/blosc2-stdio.h`, as the header
//! declares them: `blosc2_stdio_*` (a `FILE*` wrapped in a
//! `blosc2_stdio_file`) and `blosc2_stdio_mmap_*` (a memory-mapped file
//! described by a caller-owned `blosc2_stdio_mmap`).
//!
//! Every argument is checked first: null pointers, negative sizes,
//! positions or counts and `size * nitems` or `position + bytes` overflows
//! give 0 (read/write) or -1, and a failed stdio read never touches the
//! caller's `*ptr` (the `is_allocation_necessary` contract), while a failed
//! mmap read sets it to NULL (the mapped pointer is the result).
//!
//! The mmap modes are numpy's: `r` (read-only, shared), `r+` and `w+`
//! (read-write, shared; the file grows with the writes), `c` (copy on
//! write: the file's bytes in anonymous memory, changes never reach the
//! file).

use std::ffi::{c_char, c_int, c_void};

use crate::common::{c_strdup, guard, str_arg};

/// `blosc2_stdio_file`.
#[repr(C)]
pub struct blosc2_stdio_file {
    /// The stream.
    pub file: *mut libc::FILE,
}

/// `blosc2_stdio_mmap` (POSIX layout).
#[repr(C)]
pub struct blosc2_stdio_mmap {
    /// `r`, `r+`, `w+` or `c`.
    pub mode: *const c_char,
    /// The first mapping's size for the writable modes.
    pub initial_mapping_size: usize,
    /// Whether `blosc2_stdio_mmap_destroy` frees this struct.
    pub needs_free: bool,
    /// The mapping.
    pub addr: *mut c_char,
    /// The file's path (malloc'ed by open).
    pub urlpath: *mut c_char,
    /// The file's size.
    pub file_size: usize,
    /// The mapping's size (>= file_size).
    pub mapping_size: usize,
    /// Mode `c`: changes stay in memory.
    pub is_memory_only: bool,
    /// The stream.
    pub file: *mut libc::FILE,
    /// Its descriptor.
    pub fd: c_int,
    /// `PROT_*` of the mapping.
    pub access_flags: i64,
    /// `MAP_*` of the mapping.
    pub map_flags: i64,
}

// The layout gcc gives the header's struct on LP64.
const _: () = {
    assert!(std::mem::size_of::<blosc2_stdio_mmap>() == 96);
    assert!(std::mem::offset_of!(blosc2_stdio_mmap, addr) == 24);
    assert!(std::mem::offset_of!(blosc2_stdio_mmap, file_size) == 40);
    assert!(std::mem::offset_of!(blosc2_stdio_mmap, is_memory_only) == 56);
    assert!(std::mem::offset_of!(blosc2_stdio_mmap, fd) == 72);
    assert!(std::mem::offset_of!(blosc2_stdio_mmap, map_flags) == 88);
};

/// `blosc2_get_blosc2_stdio_mmap_defaults`: C-Blosc2's
/// `BLOSC2_STDIO_MMAP_DEFAULTS` (mode `r`, a first mapping of 1 GiB,
/// nothing mapped or open: descriptor and flags -1).
#[unsafe(no_mangle)]
pub extern "C" fn blosc2_get_blosc2_stdio_mmap_defaults() -> blosc2_stdio_mmap {
    blosc2_stdio_mmap {
        mode: c"r".as_ptr(),
        initial_mapping_size: 1 << 30,
        needs_free: false,
        addr: std::ptr::null_mut(),
        urlpath: std::ptr::null_mut(),
        file_size: 0,
        mapping_size: 0,
        is_memory_only: false,
        file: std::ptr::null_mut(),
        fd: -1,
        access_flags: -1,
        map_flags: -1,
    }
}

/// `size * nitems` and `position + size * nitems` when all are
/// non-negative and nothing overflows.
fn span(size: i64, nitems: i64, position: i64) -> Option<(usize, usize)> {
    if size < 0 || nitems < 0 || position < 0 {
        return None;
    }
    let n = size.checked_mul(nitems)?;
    let end = position.checked_add(n)?;
    Some((usize::try_from(n).ok()?, usize::try_from(end).ok()?))
}

/// Items transferred out of `bytes` bytes.
fn items(bytes: usize, size: i64) -> i64 {
    if size > 0 { bytes as i64 / size } else { 0 }
}

/// The `blosc2_stdio_file` behind `stream`, when both pointers are set.
///
/// # Safety
/// `stream` is null or a `blosc2_stdio_file`.
unsafe fn stdio_file<'a>(stream: *mut c_void) -> Option<&'a mut blosc2_stdio_file> {
    // SAFETY: the caller's contract.
    let f = unsafe { (stream as *mut blosc2_stdio_file).as_mut() }?;
    (!f.file.is_null()).then_some(f)
}

/// Opens `urlpath` with `fopen(urlpath, mode)`; NULL on bad arguments or
/// failure. `params` (`blosc2_stdio_params`) is not needed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_stdio_open(
    urlpath: *const c_char,
    mode: *const c_char,
    _params: *mut c_void,
) -> *mut c_void {
    guard(std::ptr::null_mut(), || {
        if urlpath.is_null() || mode.is_null() {
            return std::ptr::null_mut();
        }
        // SAFETY: both are NUL-terminated strings (checked non-null).
        let file = unsafe { libc::fopen(urlpath, mode) };
        if file.is_null() {
            return std::ptr::null_mut();
        }
        // SAFETY: malloc has no preconditions; checked below.
        let p = unsafe { libc::malloc(std::mem::size_of::<blosc2_stdio_file>()) }
            as *mut blosc2_stdio_file;
        if p.is_null() {
            // SAFETY: `file` is open.
            unsafe { libc::fclose(file) };
            return std::ptr::null_mut();
        }
        // SAFETY: p points to a fresh, suitably aligned allocation.
        unsafe { p.write(blosc2_stdio_file { file }) };
        p as *mut c_void
    })
}

/// Closes and frees a stream of `blosc2_stdio_open`; -1 for NULL.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_stdio_close(stream: *mut c_void) -> c_int {
    guard(-1, || {
        // SAFETY: stream is null or a blosc2_stdio_open result.
        let Some(f) = (unsafe { stdio_file(stream) }) else {
            return -1;
        };
        // SAFETY: an open FILE, closed once; the wrapper came from malloc.
        unsafe {
            let rc = libc::fclose(f.file);
            libc::free(stream);
            rc
        }
    })
}

/// The file's size, leaving the stream's position where it was; -1 on
/// error.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_stdio_size(stream: *mut c_void) -> i64 {
    guard(-1, || {
        // SAFETY: stream is null or a blosc2_stdio_file.
        let Some(f) = (unsafe { stdio_file(stream) }) else {
            return -1;
        };
        // SAFETY: f.file is an open stream.
        unsafe {
            let here = libc::ftello(f.file);
            if here < 0 || libc::fseeko(f.file, 0, libc::SEEK_END) != 0 {
                return -1;
            }
            let size = libc::ftello(f.file);
            if libc::fseeko(f.file, here, libc::SEEK_SET) != 0 {
                return -1;
            }
            size
        }
    })
}

/// Writes `nitems` items of `size` bytes at `position`; the items written
/// (0 on bad arguments).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_stdio_write(
    ptr: *const c_void,
    size: i64,
    nitems: i64,
    position: i64,
    stream: *mut c_void,
) -> i64 {
    guard(0, || {
        // SAFETY: stream is null or a blosc2_stdio_file.
        let Some(f) = (unsafe { stdio_file(stream) }) else {
            return 0;
        };
        let Some((n, _)) = span(size, nitems, position) else {
            return 0;
        };
        if ptr.is_null() {
            return 0;
        }
        // SAFETY: f.file is open; ptr has n readable bytes (the caller's
        // contract for size * nitems).
        unsafe {
            if libc::fseeko(f.file, position, libc::SEEK_SET) != 0 {
                return 0;
            }
            items(libc::fwrite(ptr, 1, n, f.file), size)
        }
    })
}

/// Reads `nitems` items of `size` bytes at `position` into `*ptr`; the
/// items read. `*ptr` is never changed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_stdio_read(
    ptr: *mut *mut c_void,
    size: i64,
    nitems: i64,
    position: i64,
    stream: *mut c_void,
) -> i64 {
    guard(0, || {
        // SAFETY: stream is null or a blosc2_stdio_file.
        let Some(f) = (unsafe { stdio_file(stream) }) else {
            return 0;
        };
        if ptr.is_null() {
            return 0;
        }
        let Some((n, _)) = span(size, nitems, position) else {
            return 0;
        };
        // SAFETY: ptr is non-null and points to the caller's buffer pointer.
        let buf = unsafe { *ptr };
        if n == 0 {
            return 0;
        }
        if buf.is_null() {
            return 0;
        }
        // SAFETY: f.file is open; buf has room for n bytes (the caller's
        // contract).
        unsafe {
            if libc::fseeko(f.file, position, libc::SEEK_SET) != 0 {
                return 0;
            }
            items(libc::fread(buf, 1, n, f.file), size)
        }
    })
}

/// Truncates (or extends) the file to `size`; 0, or -1 on error.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_stdio_truncate(stream: *mut c_void, size: i64) -> c_int {
    guard(-1, || {
        // SAFETY: stream is null or a blosc2_stdio_file.
        let Some(f) = (unsafe { stdio_file(stream) }) else {
            return -1;
        };
        if size < 0 {
            return -1;
        }
        // SAFETY: f.file is open; flush first so buffered writes land
        // before the size changes.
        unsafe {
            libc::fflush(f.file);
            libc::ftruncate(libc::fileno(f.file), size)
        }
    })
}

/// Nothing to free for the stdio backend: 0.
#[unsafe(no_mangle)]
pub extern "C" fn blosc2_stdio_destroy(_params: *mut c_void) -> c_int {
    0
}

/// Maps `urlpath` as `params->mode` says, into `params` (which is also the
/// stream returned); the same `params` again when it already maps that
/// path. NULL on bad arguments or failure.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_stdio_mmap_open(
    urlpath: *const c_char,
    _mode: *const c_char,
    params: *mut c_void,
) -> *mut c_void {
    guard(std::ptr::null_mut(), || {
        // SAFETY: params is null or a blosc2_stdio_mmap.
        let Some(m) = (unsafe { (params as *mut blosc2_stdio_mmap).as_mut() }) else {
            return std::ptr::null_mut();
        };
        // SAFETY: NUL-terminated or null.
        let (Some(path), Some(mode)) = (unsafe { str_arg(urlpath) }, unsafe { str_arg(m.mode) })
        else {
            return std::ptr::null_mut();
        };
        if !m.addr.is_null() {
            // SAFETY: urlpath of an open mapping is ours (NUL-terminated).
            let same = unsafe { str_arg(m.urlpath) } == Some(path);
            return if same { params } else { std::ptr::null_mut() };
        }
        // SAFETY: m is a valid, unmapped blosc2_stdio_mmap.
        match unsafe { mmap_open(m, urlpath, path, mode) } {
            Some(()) => params,
            None => std::ptr::null_mut(),
        }
    })
}

/// # Safety
/// `m` is unmapped; `urlpath` is the NUL-terminated `path`.
unsafe fn mmap_open(
    m: &mut blosc2_stdio_mmap,
    urlpath: *const c_char,
    path: &str,
    mode: &str,
) -> Option<()> {
    let (fmode, prot, shared) = match mode {
        "r" => (c"rb", libc::PROT_READ, true),
        "r+" => (c"rb+", libc::PROT_READ | libc::PROT_WRITE, true),
        "w+" => (c"wb+", libc::PROT_READ | libc::PROT_WRITE, true),
        "c" => (c"rb", libc::PROT_READ | libc::PROT_WRITE, false),
        _ => return None,
    };
    // SAFETY: NUL-terminated path and mode.
    let file = unsafe { libc::fopen(urlpath, fmode.as_ptr()) };
    if file.is_null() {
        return None;
    }
    // SAFETY: file is open.
    let fd = unsafe { libc::fileno(file) };
    // SAFETY: fd is open; st is written by fstat.
    let file_size = unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        if libc::fstat(fd, &mut st) != 0 {
            libc::fclose(file);
            return None;
        }
        st.st_size as usize
    };
    let mapping_size = if mode == "r" {
        file_size
    } else {
        file_size.max(m.initial_mapping_size)
    }
    .max(1);
    let flags = if shared {
        libc::MAP_SHARED
    } else {
        libc::MAP_PRIVATE | libc::MAP_ANONYMOUS
    };
    // SAFETY: a fresh mapping (no fixed address) of the open fd, or an
    // anonymous one for mode c.
    let addr = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            mapping_size,
            prot,
            flags,
            if shared { fd } else { -1 },
            0,
        )
    };
    if addr == libc::MAP_FAILED {
        // SAFETY: file is open.
        unsafe { libc::fclose(file) };
        return None;
    }
    if !shared && file_size > 0 {
        // Mode c: the file's bytes, copied into the private memory.
        // SAFETY: the mapping has mapping_size >= file_size writable bytes.
        let buf = unsafe { std::slice::from_raw_parts_mut(addr as *mut u8, file_size) };
        let mut done = 0;
        while done < file_size {
            // SAFETY: buf[done..] is writable; fd is open.
            let r = unsafe {
                libc::pread(
                    fd,
                    buf[done..].as_mut_ptr() as *mut c_void,
                    file_size - done,
                    done as libc::off_t,
                )
            };
            if r <= 0 {
                // SAFETY: the mapping and the file were made above.
                unsafe {
                    libc::munmap(addr, mapping_size);
                    libc::fclose(file);
                }
                return None;
            }
            done += r as usize;
        }
    }
    m.addr = addr as *mut c_char;
    m.urlpath = c_strdup(path);
    m.file_size = file_size;
    m.mapping_size = mapping_size;
    m.is_memory_only = !shared;
    m.file = file;
    m.fd = fd;
    m.access_flags = i64::from(prot);
    m.map_flags = i64::from(flags);
    Some(())
}

/// The mapping stays until `blosc2_stdio_mmap_destroy`: 0.
#[unsafe(no_mangle)]
pub extern "C" fn blosc2_stdio_mmap_close(_stream: *mut c_void) -> c_int {
    0
}

/// The mapped file's size; -1 for NULL.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_stdio_mmap_size(stream: *mut c_void) -> i64 {
    guard(-1, || {
        // SAFETY: stream is null or a blosc2_stdio_mmap.
        match unsafe { (stream as *const blosc2_stdio_mmap).as_ref() } {
            Some(m) => i64::try_from(m.file_size).unwrap_or(i64::MAX),
            None => -1,
        }
    })
}

/// Copies `size * nitems` bytes to `position` of the mapping (growing the
/// mapping and the file as needed); the items written, 0 on bad arguments.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_stdio_mmap_write(
    ptr: *const c_void,
    size: i64,
    nitems: i64,
    position: i64,
    stream: *mut c_void,
) -> i64 {
    guard(0, || {
        // SAFETY: stream is null or a blosc2_stdio_mmap.
        let Some(m) = (unsafe { (stream as *mut blosc2_stdio_mmap).as_mut() }) else {
            return 0;
        };
        if ptr.is_null() || m.addr.is_null() {
            return 0;
        }
        let Some((n, end)) = span(size, nitems, position) else {
            return 0;
        };
        if m.access_flags >= 0 && m.access_flags & i64::from(libc::PROT_WRITE) == 0 {
            return 0;
        }
        if end > m.mapping_size {
            // Only mappings this library made can grow.
            if m.file.is_null() {
                return 0;
            }
            let new_size = end.max(m.mapping_size.saturating_mul(2));
            // SAFETY: addr/mapping_size describe our own mapping.
            let a = unsafe {
                libc::mremap(
                    m.addr as *mut c_void,
                    m.mapping_size,
                    new_size,
                    libc::MREMAP_MAYMOVE,
                )
            };
            if a == libc::MAP_FAILED {
                return 0;
            }
            m.addr = a as *mut c_char;
            m.mapping_size = new_size;
        }
        if end > m.file_size {
            // The file backs a shared mapping: it must cover the bytes
            // written (else the pages have no backing).
            // SAFETY: fd is the open descriptor of the mapped file.
            if !m.is_memory_only && m.fd >= 0 && unsafe { libc::ftruncate(m.fd, end as i64) } != 0 {
                return 0;
            }
            m.file_size = end;
        }
        // SAFETY: the mapping has `end <= mapping_size` writable bytes;
        // ptr has n readable ones (the caller's contract); they do not
        // overlap (the caller's buffer is not our mapping's range being
        // written, as in C).
        unsafe {
            std::ptr::copy(
                ptr as *const u8,
                (m.addr as *mut u8).add(position as usize),
                n,
            )
        };
        nitems
    })
}

/// Points `*ptr` at `position` of the mapping when `size * nitems` bytes
/// from there are inside the file; the items, or 0 with `*ptr` NULL.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_stdio_mmap_read(
    ptr: *mut *mut c_void,
    size: i64,
    nitems: i64,
    position: i64,
    stream: *mut c_void,
) -> i64 {
    guard(0, || {
        if ptr.is_null() {
            return 0;
        }
        // SAFETY: stream is null or a blosc2_stdio_mmap.
        let m = unsafe { (stream as *const blosc2_stdio_mmap).as_ref() };
        let ok = match (m, span(size, nitems, position)) {
            (Some(m), Some((_, end))) if !m.addr.is_null() && end <= m.file_size => Some(m),
            _ => None,
        };
        // SAFETY: ptr is non-null and writable (the caller's out-pointer);
        // position < file_size <= mapping_size when ok.
        unsafe {
            match ok {
                Some(m) => {
                    *ptr = m.addr.add(position as usize) as *mut c_void;
                    nitems
                }
                None => {
                    *ptr = std::ptr::null_mut();
                    0
                }
            }
        }
    })
}

/// Sets the file's size (mode `c`: only the recorded size); 0, or -1.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_stdio_mmap_truncate(stream: *mut c_void, size: i64) -> c_int {
    guard(-1, || {
        // SAFETY: stream is null or a blosc2_stdio_mmap.
        let Some(m) = (unsafe { (stream as *mut blosc2_stdio_mmap).as_mut() }) else {
            return -1;
        };
        let Ok(target) = usize::try_from(size) else {
            return -1;
        };
        if target == m.file_size {
            return 0;
        }
        if target > m.mapping_size {
            // Reads are bounded by file_size: it may not pass the mapping.
            return -1;
        }
        m.file_size = target;
        if m.is_memory_only || m.fd < 0 {
            return 0;
        }
        // SAFETY: fd is the open descriptor of the mapped file.
        unsafe { libc::ftruncate(m.fd, size) }
    })
}

/// Unmaps, syncs (writable shared mappings) and closes; frees the struct
/// when `needs_free`. -1 for NULL or a struct that was never opened.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_stdio_mmap_destroy(params: *mut c_void) -> c_int {
    guard(-1, || {
        // SAFETY: params is null or a blosc2_stdio_mmap.
        let Some(m) = (unsafe { (params as *mut blosc2_stdio_mmap).as_mut() }) else {
            return -1;
        };
        let mut rc = 0;
        if m.addr.is_null() || m.file.is_null() {
            rc = -1;
        } else {
            // SAFETY: addr/mapping_size are our mapping, file our stream;
            // each is released once and the fields cleared.
            unsafe {
                let writable = m.access_flags & i64::from(libc::PROT_WRITE) != 0;
                if writable
                    && !m.is_memory_only
                    && m.file_size > 0
                    && libc::msync(m.addr as *mut c_void, m.file_size, libc::MS_SYNC) != 0
                {
                    rc = -1;
                }
                if libc::munmap(m.addr as *mut c_void, m.mapping_size) != 0 {
                    rc = -1;
                }
                if libc::fclose(m.file) != 0 {
                    rc = -1;
                }
            }
            m.addr = std::ptr::null_mut();
            m.file = std::ptr::null_mut();
            m.fd = -1;
        }
        // SAFETY: urlpath is null or our c_strdup (malloc); params was
        // malloc'ed by the caller when needs_free.
        unsafe {
            libc::free(m.urlpath as *mut c_void);
            m.urlpath = std::ptr::null_mut();
            if m.needs_free {
                libc::free(params);
            }
        }
        rc
    })
}
