//! The C-Blosc2 super-chunk and frame ABI over [`oxiblosc::schunk::SChunk`].
//!
//! A `blosc2_schunk*` handed to C points to the first field of a [`Handle`]:
//! the C-layout struct C code reads directly (nchunks, nbytes, cbytes,
//! typesize, chunksize, storage, metalayers, vlmetalayers, cctx/dctx, ...),
//! refreshed after every call that changes the super-chunk, followed by the
//! Rust super-chunk and the memory the C struct points into.

#![allow(non_camel_case_types)]

use std::ffi::{CString, c_char, c_int, c_void};
use std::path::Path;

use oxiblosc::schunk::{Fill, SChunk};
use oxiblosc::{CParams, DParams};

use crate::common::{guard, slice_in, slice_out, str_arg};
use crate::v2::{
    CPARAMS_DEFAULTS, DPARAMS_DEFAULTS, blosc2_context, blosc2_cparams, blosc2_create_cctx,
    blosc2_create_dctx, blosc2_dparams, blosc2_free_ctx, code_of, err, to_cparams,
};

const MAX_METALAYERS: usize = 16;
const MAX_VLMETALAYERS: usize = 8 * 1024;
const METALAYER_NAME_MAXLEN: usize = 31;

/// `blosc2_io`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct blosc2_io {
    pub id: u8,
    pub name: *const c_char,
    pub params: *mut c_void,
}

/// `blosc2_storage`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct blosc2_storage {
    pub contiguous: bool,
    pub urlpath: *mut c_char,
    pub cparams: *mut blosc2_cparams,
    pub dparams: *mut blosc2_dparams,
    pub io: *mut blosc2_io,
}

/// `blosc2_metalayer`.
#[repr(C)]
pub struct blosc2_metalayer {
    pub name: *mut c_char,
    pub content: *mut u8,
    pub content_len: i32,
}

/// `blosc2_schunk`, laid out as `blosc2.h` declares it.
#[repr(C)]
pub struct blosc2_schunk {
    pub version: u8,
    pub compcode: u8,
    pub compcode_meta: u8,
    pub clevel: u8,
    pub splitmode: u8,
    pub typesize: i32,
    pub blocksize: i32,
    pub chunksize: i32,
    pub flags2: u8,
    pub use_dict: u8,
    pub filters: [u8; 6],
    pub filters_meta: [u8; 6],
    pub nchunks: i64,
    pub current_nchunk: i64,
    pub nbytes: i64,
    pub cbytes: i64,
    pub data: *mut *mut u8,
    pub data_len: usize,
    pub storage: *mut blosc2_storage,
    pub frame: *mut c_void,
    pub cctx: *mut blosc2_context,
    pub dctx: *mut blosc2_context,
    pub metalayers: [*mut blosc2_metalayer; MAX_METALAYERS],
    pub nmetalayers: u16,
    pub vlmetalayers: [*mut blosc2_metalayer; MAX_VLMETALAYERS],
    pub nvlmetalayers: i16,
    pub tuner_params: *mut c_void,
    pub tuner_id: c_int,
    pub ndim: i8,
    pub blockshape: *mut i64,
    pub view: bool,
    pub change_tick: i64,
}

const _: () = assert!(std::mem::size_of::<blosc2_schunk>() == 65840);
const _: () = assert!(std::mem::offset_of!(blosc2_schunk, nchunks) == 40);
const _: () = assert!(std::mem::offset_of!(blosc2_schunk, storage) == 88);
const _: () = assert!(std::mem::offset_of!(blosc2_schunk, metalayers) == 120);
const _: () = assert!(std::mem::offset_of!(blosc2_schunk, nmetalayers) == 248);
const _: () = assert!(std::mem::offset_of!(blosc2_schunk, nvlmetalayers) == 65792);
const _: () = assert!(std::mem::offset_of!(blosc2_schunk, change_tick) == 65832);
const _: () = assert!(std::mem::size_of::<blosc2_storage>() == 40);
const _: () = assert!(std::mem::size_of::<blosc2_io>() == 24);
const _: () = assert!(std::mem::size_of::<blosc2_metalayer>() == 24);

/// A metalayer as C sees it, with the memory its pointers point into.
struct MetaC {
    c: blosc2_metalayer,
    _name: CString,
    _content: Vec<u8>,
}

impl MetaC {
    fn new(name: &str, content: &[u8]) -> MetaC {
        let name = CString::new(name.replace('\0', "")).unwrap_or_default();
        let mut content = content.to_vec();
        let mut m = MetaC {
            c: blosc2_metalayer {
                name: std::ptr::null_mut(),
                content: std::ptr::null_mut(),
                content_len: content.len() as i32,
            },
            _name: name,
            _content: Vec::new(),
        };
        m.c.content = content.as_mut_ptr();
        m._content = content;
        m.c.name = m._name.as_ptr() as *mut c_char;
        m
    }
}

/// What a `blosc2_schunk*` points to (the C struct first).
#[repr(C)]
pub struct Handle {
    c: blosc2_schunk,
    sc: SChunk,
    storage: blosc2_storage,
    cparams: blosc2_cparams,
    dparams: blosc2_dparams,
    io: blosc2_io,
    urlpath: Option<CString>,
    metas: Vec<MetaC>,
    vlmetas: Vec<MetaC>,
    /// For an in-memory super-chunk without a frame (C's `data` array):
    /// a copy of each chunk, and the pointers C reads.
    chunks: Vec<Box<[u8]>>,
    data_ptrs: Vec<*mut u8>,
    /// Chunks changed other than by appending: rebuild `chunks`.
    data_dirty: bool,
    /// Identity and change time of the frame on disk when last seen.
    stamp: Option<DiskStamp>,
}

/// What tells that a frame on disk changed: device, inode, size and
/// modification time of the file (of a sparse frame's index file).
type DiskStamp = (u64, u64, u64, i64, i64);

fn disk_stamp(storage: &oxiblosc::schunk::Storage) -> Option<DiskStamp> {
    use oxiblosc::schunk::Storage;
    use std::os::unix::fs::MetadataExt;
    let path = match storage {
        Storage::File { path, .. } => path.clone(),
        Storage::Directory(dir) => dir.join(oxiblosc::schunk::SFRAME_INDEX),
        _ => return None,
    };
    let m = std::fs::metadata(path).ok()?;
    Some((m.dev(), m.ino(), m.size(), m.mtime(), m.mtime_nsec()))
}

impl Drop for Handle {
    fn drop(&mut self) {
        // SAFETY: the contexts were made by blosc2_create_cctx/dctx for this
        // handle and are freed only here.
        unsafe {
            blosc2_free_ctx(self.c.cctx);
            blosc2_free_ctx(self.c.dctx);
        }
    }
}

fn cparams_of_rust(p: &CParams) -> blosc2_cparams {
    let mut c = CPARAMS_DEFAULTS;
    c.compcode = p.codec.id();
    c.compcode_meta = p.codec_meta;
    c.clevel = p.clevel;
    c.use_dict = c_int::from(p.use_dict);
    c.typesize = p.typesize.min(i32::MAX as usize) as i32;
    c.nthreads = p.nthreads.min(i16::MAX as usize) as i16;
    c.blocksize = p.blocksize.min(i32::MAX as usize) as i32;
    c.splitmode = i32::from(p.splitmode.id());
    for s in 0..6 {
        c.filters[s] = p.filters[s].map_or(0, |f| f.id());
        c.filters_meta[s] = p.filters_meta[s];
        if let Some(oxiblosc::Filter::TruncPrec(m)) = p.filters[s] {
            c.filters_meta[s] = m;
        }
    }
    c
}

impl Handle {
    fn boxed(
        sc: SChunk,
        cparams: blosc2_cparams,
        dparams: blosc2_dparams,
        urlpath: Option<&str>,
        contiguous: bool,
    ) -> *mut blosc2_schunk {
        let h = Box::new(Handle {
            // SAFETY: every field of blosc2_schunk is an integer, a bool, a raw
            // pointer or an array of them: all-zero is a valid value.
            c: unsafe { std::mem::zeroed() },
            sc,
            storage: blosc2_storage {
                contiguous,
                urlpath: std::ptr::null_mut(),
                cparams: std::ptr::null_mut(),
                dparams: std::ptr::null_mut(),
                io: std::ptr::null_mut(),
            },
            cparams,
            dparams,
            io: blosc2_io {
                id: 0,
                name: c"filesystem".as_ptr(),
                params: std::ptr::null_mut(),
            },
            urlpath: urlpath.and_then(|u| CString::new(u).ok()),
            metas: Vec::new(),
            vlmetas: Vec::new(),
            chunks: Vec::new(),
            data_ptrs: Vec::new(),
            data_dirty: true,
            stamp: None,
        });
        let p = Box::into_raw(h);
        // SAFETY: p was just made by Box::into_raw and is uniquely owned here.
        let h = unsafe { &mut *p };
        let mut cp = h.cparams;
        cp.schunk = p as *mut c_void;
        let mut dp = h.dparams;
        dp.schunk = p as *mut c_void;
        h.c.cctx = blosc2_create_cctx(cp);
        h.c.dctx = blosc2_create_dctx(dp);
        h.c.current_nchunk = -1;
        h.stamp = disk_stamp(&h.sc.storage());
        h.sync(true);
        p as *mut blosc2_schunk
    }

    /// C-Blosc2 reads a frame on disk through its path on every access, so
    /// a handle sees what other handles (or processes) wrote, or a frame
    /// moved over its path. Reopen when the frame on disk is not the one
    /// last seen; true when it did.
    fn refresh_if_stale(&mut self) -> bool {
        use oxiblosc::schunk::Storage;
        let storage = self.sc.storage();
        let now = disk_stamp(&storage);
        if now.is_none() || now == self.stamp {
            return false;
        }
        let reopened = match &storage {
            Storage::File { path, offset } => open_options().offset(*offset).open(path),
            Storage::Directory(dir) => open_options().open(dir),
            _ => return false,
        };
        match reopened {
            Ok(mut sc) => {
                sc.set_dparams(self.sc.dparams().clone());
                self.sc = sc;
                self.data_dirty = true;
                self.stamp = now;
                true
            }
            Err(_) => false,
        }
    }

    /// Refresh C's `data` array (in-memory super-chunks without a frame).
    fn sync_data(&mut self) {
        if self.urlpath.is_some() || self.storage.contiguous {
            return;
        }
        let n = self.sc.nchunks();
        if self.data_dirty || n < self.chunks.len() {
            self.chunks.clear();
            self.data_dirty = false;
        }
        for i in self.chunks.len()..n {
            match self.sc.get_chunk(i) {
                Ok(c) => self.chunks.push(c.into_owned().into_boxed_slice()),
                Err(_) => {
                    self.data_dirty = true;
                    break;
                }
            }
        }
        self.data_ptrs = self.chunks.iter_mut().map(|c| c.as_mut_ptr()).collect();
        self.c.data = self.data_ptrs.as_mut_ptr();
        self.c.data_len = self.data_ptrs.len();
    }

    /// Refresh the C view (and the metalayer arrays when `metas`).
    fn sync(&mut self, metas: bool) {
        self.sync_data();
        let self_ptr: *mut Handle = self;
        let p = self.sc.cparams().clone();
        self.cparams = cparams_of_rust(&p);
        self.cparams.schunk = self_ptr as *mut c_void;
        self.dparams.nthreads = self.sc.dparams().nthreads.min(i16::MAX as usize) as i16;
        self.dparams.schunk = self_ptr as *mut c_void;
        let c = &mut self.c;
        c.version = 3;
        c.compcode = p.codec.id();
        c.compcode_meta = p.codec_meta;
        c.clevel = p.clevel;
        c.splitmode = p.splitmode.id();
        c.typesize = self.cparams.typesize;
        c.blocksize = self.cparams.blocksize;
        c.use_dict = u8::from(p.use_dict);
        c.filters = self.cparams.filters;
        c.filters_meta = self.cparams.filters_meta;
        let nchunks = self.sc.nchunks();
        c.nchunks = nchunks as i64;
        c.chunksize = match self.sc.chunksize() {
            Some(n) => n.min(i32::MAX as usize) as i32,
            None if nchunks == 0 => -1,
            None => 0,
        };
        c.nbytes = self.sc.nbytes() as i64;
        c.cbytes = self.sc.cbytes() as i64;
        self.storage.urlpath = self
            .urlpath
            .as_ref()
            .map_or(std::ptr::null_mut(), |u| u.as_ptr() as *mut c_char);
        self.storage.cparams = &mut self.cparams;
        self.storage.dparams = &mut self.dparams;
        self.storage.io = &mut self.io;
        c.storage = &mut self.storage;
        c.frame = if self.urlpath.is_some() || self.storage.contiguous {
            self_ptr as *mut c_void
        } else {
            std::ptr::null_mut()
        };
        if metas {
            self.metas = self
                .sc
                .metalayers()
                .iter()
                .take(MAX_METALAYERS)
                .map(|m| MetaC::new(&m.name, &m.content))
                .collect();
            self.vlmetas = self
                .sc
                .vlmetalayers()
                .iter()
                .take(MAX_VLMETALAYERS)
                .map(|m| MetaC::new(&m.name, &m.chunk))
                .collect();
            let c = &mut self.c;
            c.metalayers = [std::ptr::null_mut(); MAX_METALAYERS];
            for (i, m) in self.metas.iter_mut().enumerate() {
                c.metalayers[i] = &mut m.c;
            }
            c.nmetalayers = self.metas.len() as u16;
            for p in c.vlmetalayers.iter_mut() {
                *p = std::ptr::null_mut();
            }
            for (i, m) in self.vlmetas.iter_mut().enumerate() {
                c.vlmetalayers[i] = &mut m.c;
            }
            c.nvlmetalayers = self.vlmetas.len() as i16;
            c.change_tick += 1;
        }
    }
}

/// How frames on disk are opened: C-Blosc2 does not `fsync` after each
/// change, and neither do we (a super-chunk's files are as durable as C's).
fn open_options() -> oxiblosc::OpenOptions {
    oxiblosc::OpenOptions::new().fsync(false)
}

/// C-Blosc2 takes `file:///PATH` for `PATH`.
fn strip_file_scheme(u: &str) -> &str {
    u.strip_prefix("file:///").unwrap_or(u)
}

/// # Safety
/// `s` is null or a live super-chunk from this library.
unsafe fn handle<'a>(s: *mut blosc2_schunk) -> Option<&'a mut Handle> {
    // SAFETY: a non-null blosc2_schunk* from this library points to the
    // first field of a live Handle (repr(C)).
    unsafe { (s as *mut Handle).as_mut() }
}

unsafe extern "C" {
    fn malloc(size: usize) -> *mut c_void;
    fn free(p: *mut c_void);
}

/// With `copy` false C-Blosc2 takes the chunk over: once stored (as a
/// copy here), free it, as C does.
fn take_over(chunk: *mut u8, copy: bool, stored: bool) {
    if !copy && stored && !chunk.is_null() {
        // SAFETY: with copy == false the caller hands us a malloc'ed chunk
        // it will not use again (C-Blosc2's contract).
        unsafe { free(chunk as *mut c_void) };
    }
}

/// A malloc'ed copy of `b` (the caller `free()`s it).
fn malloc_copy(b: &[u8]) -> *mut u8 {
    // SAFETY: malloc has no preconditions; null is checked.
    let p = unsafe { malloc(b.len().max(1)) } as *mut u8;
    if !p.is_null() {
        // SAFETY: p holds b.len() fresh bytes, not overlapping b.
        unsafe { std::ptr::copy_nonoverlapping(b.as_ptr(), p, b.len()) };
    }
    p
}

fn params_of_storage(st: &blosc2_storage) -> Result<(blosc2_cparams, blosc2_dparams), c_int> {
    // SAFETY: the storage's pointers are null or point to C's params.
    let cp = unsafe { st.cparams.as_ref() }
        .copied()
        .unwrap_or(CPARAMS_DEFAULTS);
    // SAFETY: as above.
    let dp = unsafe { st.dparams.as_ref() }
        .copied()
        .unwrap_or(DPARAMS_DEFAULTS);
    Ok((cp, dp))
}

/// C-Blosc2 creates super-chunks that ask for a dictionary with a codec
/// that has none (the chunks are then made without one).
fn schunk_cparams(mut p: CParams) -> CParams {
    use oxiblosc::Codec;
    if p.use_dict && !matches!(p.codec, Codec::Zstd | Codec::Lz4 | Codec::Lz4Hc) {
        p.use_dict = false;
    }
    p
}

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
        if unsafe { st.io.as_ref() }.is_some_and(|io| io.id > 1) {
            // Only the file-system backends (plain and mmap: same bytes).
            return std::ptr::null_mut();
        }
        let Ok(p) = to_cparams(&cp) else {
            return std::ptr::null_mut();
        };
        let p = schunk_cparams(p);
        let d = DParams::default().nthreads(dp.nthreads.max(1) as usize);
        let b = SChunk::builder().fsync(false).cparams(p).dparams(d);
        // SAFETY: urlpath is null or a NUL-terminated string.
        let url = unsafe { str_arg(st.urlpath) }.map(strip_file_scheme);
        let sc = match url {
            None => b.build_memory(),
            Some(u) if st.contiguous => b.create_file(u),
            Some(u) => b.create_dir(u),
        };
        match sc {
            Ok(sc) => Handle::boxed(sc, cp, dp, url, st.contiguous),
            Err(e) => {
                eprintln!("blosc2_schunk_new: {e}");
                std::ptr::null_mut()
            }
        }
    })
}

fn wrap_opened(sc: oxiblosc::Result<SChunk>, url: Option<&str>) -> *mut blosc2_schunk {
    match sc {
        Ok(sc) => {
            let cp = cparams_of_rust(sc.cparams());
            let mut dp = DPARAMS_DEFAULTS;
            dp.nthreads = sc.dparams().nthreads.min(i16::MAX as usize) as i16;
            let contiguous = !matches!(sc.storage(), oxiblosc::schunk::Storage::Directory(_));
            Handle::boxed(sc, cp, dp, url, contiguous)
        }
        Err(e) => {
            eprintln!("blosc2_schunk_open: {e}");
            std::ptr::null_mut()
        }
    }
}

/// Open a frame file or a sparse-frame directory.
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
        wrap_opened(open_options().open(url), Some(url))
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
            return std::ptr::null_mut();
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

/// Re-read the frame from disk if another handle changed it: 0.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_schunk_refresh(schunk: *mut blosc2_schunk) -> c_int {
    guard(err::FAILURE, || {
        with(schunk, err::NULL_POINTER, false, |_| 0)
    })
}

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

/// A super-chunk from a contiguous frame in memory (always copied).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_schunk_from_buffer(
    cframe: *mut u8,
    len: i64,
    _copy: bool,
) -> *mut blosc2_schunk {
    guard(std::ptr::null_mut(), || {
        if cframe.is_null() || len <= 0 {
            return std::ptr::null_mut();
        }
        // SAFETY: cframe holds len readable bytes.
        let bytes = unsafe { slice_in(cframe as *const c_void, len as usize) }.to_vec();
        wrap_opened(SChunk::from_cframe(bytes), None)
    })
}

/// Free a super-chunk (0; null is ignored).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_schunk_free(schunk: *mut blosc2_schunk) -> c_int {
    guard(err::FAILURE, || {
        if !schunk.is_null() {
            // SAFETY: schunk came from Handle::boxed (Box::into_raw) and is
            // freed once (C's contract).
            drop(unsafe { Box::from_raw(schunk as *mut Handle) });
        }
        0
    })
}

/// Kept for the ABI: our super-chunks always own a copy of their frame.
#[unsafe(no_mangle)]
pub extern "C" fn blosc2_schunk_avoid_cframe_free(_schunk: *mut blosc2_schunk, _avoid: bool) {}

/// Run `f` on the handle behind `schunk`, refreshing the C view after.
fn with<T>(
    schunk: *mut blosc2_schunk,
    on_null: T,
    metas: bool,
    f: impl FnOnce(&mut Handle) -> T,
) -> T {
    // SAFETY: schunk is null or a live super-chunk from this library.
    match unsafe { handle(schunk) } {
        Some(h) => {
            let reopened = h.refresh_if_stale();
            let r = f(h);
            h.stamp = disk_stamp(&h.sc.storage());
            h.sync(metas || reopened);
            r
        }
        None => on_null,
    }
}

fn index(h: &Handle, nchunk: i64, inclusive: bool) -> Result<usize, i64> {
    let n = h.sc.nchunks() as i64;
    if nchunk < 0 || nchunk > n || (!inclusive && nchunk == n) {
        return Err(i64::from(err::INVALID_PARAM));
    }
    Ok(nchunk as usize)
}

fn r64(r: oxiblosc::Result<usize>) -> i64 {
    match r {
        Ok(n) => n as i64,
        Err(e) => i64::from(code_of(&e)),
    }
}

/// The chunk at `chunk` as a slice of its header's cbytes.
fn chunk_arg<'a>(chunk: *mut u8) -> Result<&'a [u8], i64> {
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
                    h.data_dirty = true;
                    h.sc.insert_chunk(i, c)
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
                    h.data_dirty = true;
                    h.sc.update_chunk(i, c)
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
                h.data_dirty = true;
                h.sc.delete_chunk(i)
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
        with(schunk, err::NULL_POINTER, false, |h| {
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
        with(schunk, err::NULL_POINTER, false, |h| {
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
            let on_disk = disk_stamp(&h.sc.storage()).is_some();
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
    unsafe { blosc2_schunk_get_chunk(schunk, nchunk, chunk, needs_free) }
}

/// The whole super-chunk as a contiguous frame (malloc'ed,
/// `*needs_free` = true); its length.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_schunk_to_buffer(
    schunk: *mut blosc2_schunk,
    cframe: *mut *mut u8,
    needs_free: *mut bool,
) -> i64 {
    guard(i64::from(err::FAILURE), || {
        with(schunk, i64::from(err::NULL_POINTER), false, |h| {
            if cframe.is_null() {
                return i64::from(err::NULL_POINTER);
            }
            match h.sc.to_cframe() {
                Ok(f) => {
                    let p = malloc_copy(&f);
                    // SAFETY: cframe is non-null; needs_free is null-checked.
                    unsafe {
                        *cframe = p;
                        if !needs_free.is_null() {
                            *needs_free = true;
                        }
                    }
                    f.len() as i64
                }
                Err(e) => i64::from(code_of(&e)),
            }
        })
    })
}

/// The length of the super-chunk's contiguous frame.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_schunk_frame_len(schunk: *mut blosc2_schunk) -> i64 {
    guard(i64::from(err::FAILURE), || {
        with(schunk, i64::from(err::NULL_POINTER), false, |h| {
            match h.sc.to_cframe() {
                Ok(f) => f.len() as i64,
                Err(e) => i64::from(code_of(&e)),
            }
        })
    })
}

/// Write the super-chunk as a contiguous frame file; its length.
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
            match h.sc.to_cframe() {
                Ok(f) => match std::fs::write(url, &f) {
                    Ok(()) => f.len() as i64,
                    Err(_) => -14,
                },
                Err(e) => i64::from(code_of(&e)),
            }
        })
    })
}

/// Append the super-chunk's contiguous frame to a file; the offset where
/// it starts.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_schunk_append_file(
    schunk: *mut blosc2_schunk,
    urlpath: *const c_char,
) -> i64 {
    guard(i64::from(err::FAILURE), || {
        use std::io::Write;
        // SAFETY: urlpath is null or a NUL-terminated string.
        let Some(url) = (unsafe { str_arg(urlpath) }).map(strip_file_scheme) else {
            return i64::from(err::NULL_POINTER);
        };
        with(schunk, i64::from(err::NULL_POINTER), false, |h| {
            let f = match h.sc.to_cframe() {
                Ok(f) => f,
                Err(e) => return i64::from(code_of(&e)),
            };
            let file = std::fs::OpenOptions::new()
                .append(true)
                .create(true)
                .open(url);
            let Ok(mut file) = file else {
                return -15;
            };
            let Ok(offset) = file.metadata().map(|m| m.len()) else {
                return -13;
            };
            match file.write_all(&f) {
                Ok(()) => offset as i64,
                Err(_) => -14,
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
        with(schunk, err::NULL_POINTER, false, |h| {
            let ts = h.sc.typesize().max(1) as i64;
            let nitems = h.sc.nbytes() as i64 / ts;
            if start < 0 || stop < start || stop > nitems {
                return err::INVALID_PARAM;
            }
            if buffer.is_null() {
                return err::NULL_POINTER;
            }
            match h.sc.get_slice((start * ts) as u64, (stop * ts) as u64) {
                Ok(b) => {
                    // SAFETY: buffer has room for (stop - start) items.
                    unsafe { slice_out(buffer, b.len()) }.copy_from_slice(&b);
                    0
                }
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
            h.data_dirty = true;
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
        with(schunk, err::NULL_POINTER, false, |h| {
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
struct GatherJob {
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
        with(schunk, err::NULL_POINTER, false, |h| {
            if cparams.is_null() {
                return err::NULL_POINTER;
            }
            let mut cp = h.cparams;
            cp.schunk = schunk as *mut c_void;
            // SAFETY: blosc2_cparams is plain data; its bytes are copied.
            let bytes = unsafe {
                std::slice::from_raw_parts(
                    &cp as *const blosc2_cparams as *const u8,
                    std::mem::size_of::<blosc2_cparams>(),
                )
            };
            // SAFETY: cparams is non-null and writable.
            unsafe { *cparams = malloc_copy(bytes) as *mut blosc2_cparams };
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
        with(schunk, err::NULL_POINTER, false, |h| {
            if dparams.is_null() {
                return err::NULL_POINTER;
            }
            let mut dp = h.dparams;
            dp.schunk = schunk as *mut c_void;
            // SAFETY: blosc2_dparams is plain data; its bytes are copied.
            let bytes = unsafe {
                std::slice::from_raw_parts(
                    &dp as *const blosc2_dparams as *const u8,
                    std::mem::size_of::<blosc2_dparams>(),
                )
            };
            // SAFETY: dparams is non-null and writable.
            unsafe { *dparams = malloc_copy(bytes) as *mut blosc2_dparams };
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
            h.data_dirty = true;
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
            h.data_dirty = true;
            match h.sc.fill_special(nitems as u64, fill, chunksize as usize) {
                Ok(()) => h.sc.nchunks() as i64,
                Err(e) => i64::from(code_of(&e)),
            }
        })
    })
}

/// A copy of a super-chunk into new storage.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_schunk_copy(
    schunk: *mut blosc2_schunk,
    storage: *mut blosc2_storage,
) -> *mut blosc2_schunk {
    guard(std::ptr::null_mut(), || {
        // SAFETY: schunk is null or live.
        let Some(h) = (unsafe { handle(schunk) }) else {
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
        Handle::boxed(sc, cp, dp, url, st.contiguous)
    })
}

// ---------------------------------------------------------------------------
// Metalayers.

/// # Safety
/// `name` is null or a NUL-terminated string.
unsafe fn meta_name<'a>(name: *const c_char) -> Result<&'a str, c_int> {
    // SAFETY: the caller's contract.
    let n = unsafe { str_arg(name) }.ok_or(err::NULL_POINTER)?;
    if n.len() > METALAYER_NAME_MAXLEN {
        return Err(err::INVALID_PARAM);
    }
    Ok(n)
}

fn meta_index(h: &Handle, name: &str) -> c_int {
    h.sc.metalayers()
        .iter()
        .position(|m| m.name == name)
        .map_or(-16, |i| i as c_int)
}

/// Add a fixed-length metalayer; its index.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_meta_add(
    schunk: *mut blosc2_schunk,
    name: *const c_char,
    content: *mut u8,
    content_len: i32,
) -> c_int {
    guard(err::FAILURE, || {
        with(schunk, err::INVALID_PARAM, true, |h| {
            // SAFETY: name is null or a NUL-terminated string.
            let name = match unsafe { meta_name(name) } {
                Ok(n) => n,
                Err(e) => return e,
            };
            if content_len < 0 || (content.is_null() && content_len > 0) {
                return err::INVALID_PARAM;
            }
            // SAFETY: content holds content_len bytes.
            let c = unsafe { slice_in(content as *const c_void, content_len as usize) };
            match h.sc.meta_add(name, c) {
                Ok(()) => meta_index(h, name),
                Err(e) => code_of(&e),
            }
        })
    })
}

/// Replace a metalayer's content (same length or shorter); its index.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_meta_update(
    schunk: *mut blosc2_schunk,
    name: *const c_char,
    content: *mut u8,
    content_len: i32,
) -> c_int {
    guard(err::FAILURE, || {
        with(schunk, err::INVALID_PARAM, true, |h| {
            // SAFETY: name is null or a NUL-terminated string.
            let name = match unsafe { meta_name(name) } {
                Ok(n) => n,
                Err(e) => return e,
            };
            if content_len < 0 || (content.is_null() && content_len > 0) {
                return err::INVALID_PARAM;
            }
            if meta_index(h, name) < 0 {
                return -16;
            }
            // SAFETY: content holds content_len bytes.
            let c = unsafe { slice_in(content as *const c_void, content_len as usize) };
            match h.sc.meta_update(name, c) {
                Ok(()) => meta_index(h, name),
                Err(e) => code_of(&e),
            }
        })
    })
}

fn vlmeta_index(h: &Handle, name: &str) -> c_int {
    h.sc.vlmetalayers()
        .iter()
        .position(|m| m.name == name)
        .map_or(-16, |i| i as c_int)
}

/// The index of a vlmetalayer, or `BLOSC2_ERROR_NOT_FOUND`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_vlmeta_exists(
    schunk: *mut blosc2_schunk,
    name: *const c_char,
) -> c_int {
    guard(err::FAILURE, || {
        with(schunk, err::INVALID_PARAM, false, |h| {
            // SAFETY: name is null or a NUL-terminated string.
            match unsafe { meta_name(name) } {
                Ok(n) => vlmeta_index(h, n),
                Err(e) => e,
            }
        })
    })
}

/// Add a vlmetalayer; its index.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_vlmeta_add(
    schunk: *mut blosc2_schunk,
    name: *const c_char,
    content: *mut u8,
    content_len: i32,
    _cparams: *mut blosc2_cparams,
) -> c_int {
    guard(err::FAILURE, || {
        with(schunk, err::INVALID_PARAM, true, |h| {
            // SAFETY: name is null or a NUL-terminated string.
            let name = match unsafe { meta_name(name) } {
                Ok(n) => n,
                Err(e) => return e,
            };
            if content_len < 0 || (content.is_null() && content_len > 0) {
                return err::INVALID_PARAM;
            }
            if vlmeta_index(h, name) >= 0 {
                return err::INVALID_PARAM;
            }
            // SAFETY: content holds content_len bytes.
            let c = unsafe { slice_in(content as *const c_void, content_len as usize) };
            match h.sc.vlmeta_add(name, c) {
                Ok(()) => vlmeta_index(h, name),
                Err(e) => code_of(&e),
            }
        })
    })
}

/// Replace a vlmetalayer's content; its index.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_vlmeta_update(
    schunk: *mut blosc2_schunk,
    name: *const c_char,
    content: *mut u8,
    content_len: i32,
    _cparams: *mut blosc2_cparams,
) -> c_int {
    guard(err::FAILURE, || {
        with(schunk, err::INVALID_PARAM, true, |h| {
            // SAFETY: name is null or a NUL-terminated string.
            let name = match unsafe { meta_name(name) } {
                Ok(n) => n,
                Err(e) => return e,
            };
            if content_len < 0 || (content.is_null() && content_len > 0) {
                return err::INVALID_PARAM;
            }
            if vlmeta_index(h, name) < 0 {
                return -16;
            }
            // SAFETY: content holds content_len bytes.
            let c = unsafe { slice_in(content as *const c_void, content_len as usize) };
            match h.sc.vlmeta_update(name, c) {
                Ok(()) => vlmeta_index(h, name),
                Err(e) => code_of(&e),
            }
        })
    })
}

/// A malloc'ed copy of a vlmetalayer's content; its index.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_vlmeta_get(
    schunk: *mut blosc2_schunk,
    name: *const c_char,
    content: *mut *mut u8,
    content_len: *mut i32,
) -> c_int {
    guard(err::FAILURE, || {
        with(schunk, err::INVALID_PARAM, false, |h| {
            // SAFETY: name is null or a NUL-terminated string.
            let name = match unsafe { meta_name(name) } {
                Ok(n) => n,
                Err(e) => return e,
            };
            if content.is_null() || content_len.is_null() {
                return err::INVALID_PARAM;
            }
            match h.sc.vlmeta_get(name) {
                Ok(Some(v)) => {
                    // SAFETY: the out-pointers are non-null and writable.
                    unsafe {
                        *content = malloc_copy(&v);
                        *content_len = v.len() as i32;
                    }
                    vlmeta_index(h, name)
                }
                Ok(None) => -16,
                Err(e) => code_of(&e),
            }
        })
    })
}

/// Delete a vlmetalayer; the number left.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_vlmeta_delete(
    schunk: *mut blosc2_schunk,
    name: *const c_char,
) -> c_int {
    guard(err::FAILURE, || {
        with(schunk, err::INVALID_PARAM, true, |h| {
            // SAFETY: name is null or a NUL-terminated string.
            let name = match unsafe { meta_name(name) } {
                Ok(n) => n,
                Err(e) => return e,
            };
            if vlmeta_index(h, name) < 0 {
                return -16;
            }
            match h.sc.vlmeta_delete(name) {
                Ok(()) => h.sc.vlmetalayers().len() as c_int,
                Err(e) => code_of(&e),
            }
        })
    })
}

/// The vlmetalayer names into `names` (pointers into the super-chunk);
/// their number.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_vlmeta_get_names(
    schunk: *mut blosc2_schunk,
    names: *mut *mut c_char,
) -> c_int {
    guard(err::FAILURE, || {
        // SAFETY: schunk is null or live.
        let Some(h) = (unsafe { handle(schunk) }) else {
            return err::INVALID_PARAM;
        };
        if names.is_null() {
            return err::NULL_POINTER;
        }
        for (i, m) in h.vlmetas.iter().enumerate() {
            // SAFETY: names has room for nvlmetalayers pointers (C's contract).
            unsafe { *names.add(i) = m.c.name };
        }
        h.vlmetas.len() as c_int
    })
}

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
        if r.is_ok() { 0 } else { -31 }
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
        with(schunk, std::ptr::null_mut(), false, |h| {
            let frame = match h.sc.storage() {
                oxiblosc::schunk::Storage::Directory(dir) => {
                    let Ok(b) = std::fs::read(dir.join(oxiblosc::schunk::SFRAME_INDEX)) else {
                        return std::ptr::null_mut();
                    };
                    oxiblosc::Frame::parse(&b)
                }
                _ if h.c.frame.is_null() => return std::ptr::null_mut(),
                _ => match h.sc.to_cframe() {
                    Ok(b) => oxiblosc::Frame::parse(&b),
                    Err(_) => return std::ptr::null_mut(),
                },
            };
            let Ok(frame) = frame else {
                return std::ptr::null_mut();
            };
            let mut raw = Vec::with_capacity(frame.nchunks() * 8);
            for i in 0..frame.nchunks() {
                let Ok(v) = frame.entry(i).and_then(|e| e.to_raw()) else {
                    return std::ptr::null_mut();
                };
                raw.extend_from_slice(&v.to_ne_bytes());
            }
            malloc_copy(&raw) as *mut i64
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
        with(schunk, i64::from(err::NULL_POINTER), false, |h| {
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
            let nchunks = h.sc.nchunks() as i64;
            let (first, last) = match h.sc.chunksize().filter(|&c| c > 0) {
                _ if nchunks == 0 => (0, 0),
                Some(cs) => {
                    let cs = cs as i64;
                    let first = (s * ts / cs).min(nchunks);
                    let last = if e == s {
                        first
                    } else {
                        ((e * ts + cs - 1) / cs).min(nchunks)
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
