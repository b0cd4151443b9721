//! User-defined I/O: `blosc2_register_io_cb` / `blosc2_get_io_cb`, and a
//! super-chunk whose storage's `io` names a registered callback set reads
//! and writes every file of its frame through those callbacks, as an
//! [`oxiblosc::frame::io::FileStore`] (`SChunkBuilder::store`,
//! `OpenOptions::store`). Each access opens the file with the `open`
//! callback (`"rb"` to read, `"r+b"` to change, `"w+b"` to create), does its
//! `read` / `write` / `size` / `truncate` and closes it, as C-Blosc2 does;
//! `destroy` gets the io's `params` when the super-chunk is freed.
//! Directory creation and the removal of a sparse frame's dropped chunk
//! files use the system's calls (C-Blosc2 makes those directly too); the
//! index file is rewritten in place, not renamed.

use std::ffi::CString;
use std::io;
use std::path::Path;
use std::sync::Arc;
use std::sync::Mutex;

use oxiblosc::frame::FrameIo;
use oxiblosc::frame::io::{FileStore, OpenMode};

use super::*;

type OpenCb = unsafe extern "C" fn(*const c_char, *const c_char, *mut c_void) -> *mut c_void;
type CloseCb = unsafe extern "C" fn(*mut c_void) -> c_int;
type SizeCb = unsafe extern "C" fn(*mut c_void) -> i64;
type WriteCb = unsafe extern "C" fn(*const c_void, i64, i64, i64, *mut c_void) -> i64;
type ReadCb = unsafe extern "C" fn(*mut *mut c_void, i64, i64, i64, *mut c_void) -> i64;
type TruncateCb = unsafe extern "C" fn(*mut c_void, i64) -> c_int;
type DestroyCb = unsafe extern "C" fn(*mut c_void) -> c_int;

/// `blosc2_io_cb`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct blosc2_io_cb {
    pub id: u8,
    pub name: *mut c_char,
    pub is_allocation_necessary: bool,
    pub open: Option<OpenCb>,
    pub close: Option<CloseCb>,
    pub size: Option<SizeCb>,
    pub write: Option<WriteCb>,
    pub read: Option<ReadCb>,
    pub truncate: Option<TruncateCb>,
    pub destroy: Option<DestroyCb>,
}

const _: () = assert!(std::mem::size_of::<blosc2_io_cb>() == 80);

/// C-Blosc2's `BLOSC2_IO_REGISTERED`: user ids start here.
const IO_REGISTERED: u8 = 160;
/// `BLOSC2_ERROR_PLUGIN_IO`.
const PLUGIN_IO: c_int = -30;

/// The registered callback sets, each boxed so the pointer
/// `blosc2_get_io_cb` returns stays valid (entries are never removed).
#[allow(clippy::vec_box)]
struct Registry(Vec<Box<blosc2_io_cb>>);

// SAFETY: the entries are plain data (function pointers and a name pointer
// C owns); C-Blosc2 shares its table between threads the same way.
unsafe impl Send for Registry {}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry(Vec::new()));

fn builtin(id: u8) -> Option<blosc2_io_cb> {
    use crate::stdio::*;
    let (name, alloc, open, close, size, write, read, truncate, destroy): (
        &'static std::ffi::CStr,
        bool,
        OpenCb,
        CloseCb,
        SizeCb,
        WriteCb,
        ReadCb,
        TruncateCb,
        DestroyCb,
    ) = match id {
        0 => (
            c"filesystem",
            true,
            blosc2_stdio_open,
            blosc2_stdio_close,
            blosc2_stdio_size,
            blosc2_stdio_write,
            blosc2_stdio_read,
            blosc2_stdio_truncate,
            blosc2_stdio_destroy as DestroyCb,
        ),
        1 => (
            c"filesystem_mmap",
            false,
            blosc2_stdio_mmap_open,
            blosc2_stdio_mmap_close as CloseCb,
            blosc2_stdio_mmap_size,
            blosc2_stdio_mmap_write,
            blosc2_stdio_mmap_read,
            blosc2_stdio_mmap_truncate,
            blosc2_stdio_mmap_destroy,
        ),
        _ => return None,
    };
    Some(blosc2_io_cb {
        id,
        name: name.as_ptr() as *mut c_char,
        is_allocation_necessary: alloc,
        open: Some(open),
        close: Some(close),
        size: Some(size),
        write: Some(write),
        read: Some(read),
        truncate: Some(truncate),
        destroy: Some(destroy),
    })
}

/// The callbacks registered under `id` (0 and 1: the built-in file-system
/// backends), copied.
pub(crate) fn io_cb(id: u8) -> Option<blosc2_io_cb> {
    let r = REGISTRY.lock().unwrap_or_else(|e| e.into_inner());
    r.0.iter()
        .find(|c| c.id == id)
        .map(|c| **c)
        .or_else(|| builtin(id))
}

/// `blosc2_register_io_cb`: register a callback set under its id (160 or
/// more). Registering an id again keeps the first set (C-Blosc2 checks
/// the names; the test programs leave `name` unset, so it is not read).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_register_io_cb(io: *const blosc2_io_cb) -> c_int {
    guard(err::FAILURE, || {
        // SAFETY: io is null or points to C's blosc2_io_cb.
        let Some(cb) = (unsafe { io.as_ref() }).copied() else {
            return err::INVALID_PARAM;
        };
        if cb.id < IO_REGISTERED {
            return PLUGIN_IO;
        }
        let mut r = REGISTRY.lock().unwrap_or_else(|e| e.into_inner());
        if r.0.iter().any(|c| c.id == cb.id) {
            return 0;
        }
        if r.0.len() >= usize::from(u8::MAX) {
            return PLUGIN_IO;
        }
        r.0.push(Box::new(cb));
        0
    })
}

/// `blosc2_get_io_cb`: the callbacks registered under `id` (0 and 1 are
/// the built-in file-system backends), or NULL.
#[unsafe(no_mangle)]
pub extern "C" fn blosc2_get_io_cb(id: u8) -> *mut blosc2_io_cb {
    guard(std::ptr::null_mut(), || {
        let mut r = REGISTRY.lock().unwrap_or_else(|e| e.into_inner());
        if !r.0.iter().any(|c| c.id == id)
            && let Some(b) = builtin(id)
        {
            r.0.push(Box::new(b));
        }
        r.0.iter_mut()
            .find(|c| c.id == id)
            .map_or(std::ptr::null_mut(), |c| &mut **c as *mut blosc2_io_cb)
    })
}

/// A registered callback set with a super-chunk's `io->params`: the store
/// its frame's files go through.
pub(crate) struct CStore {
    cb: blosc2_io_cb,
    params: *mut c_void,
}

impl CStore {
    /// The store for `io` when it names a registered set other than the
    /// built-in file-system ones (`Ok(None)` for those); `Err` for an
    /// unknown id or a set missing a callback.
    pub(crate) fn for_io(io: Option<&blosc2_io>) -> Result<Option<Arc<CStore>>, c_int> {
        let Some(io) = io else { return Ok(None) };
        if io.id <= 1 {
            return Ok(None);
        }
        let cb = io_cb(io.id).ok_or(PLUGIN_IO)?;
        if cb.open.is_none()
            || cb.close.is_none()
            || cb.size.is_none()
            || cb.write.is_none()
            || cb.read.is_none()
            || cb.truncate.is_none()
        {
            return Err(PLUGIN_IO);
        }
        Ok(Some(Arc::new(CStore {
            cb,
            params: io.params,
        })))
    }
}

// SAFETY: a CStore only calls C's callbacks with C's params, from
// whichever thread uses the super-chunk, as C-Blosc2 does; it holds no
// Rust state that threads could race on.
unsafe impl Send for CStore {}
// SAFETY: as for Send: `&CStore` only reads the copied callback set.
unsafe impl Sync for CStore {}

impl Drop for CStore {
    fn drop(&mut self) {
        if let Some(destroy) = self.cb.destroy {
            // SAFETY: the registered callback with the io's params (C's
            // contract: called once the super-chunk is done with them).
            unsafe { destroy(self.params) };
        }
    }
}

fn io_err(what: &str) -> io::Error {
    io::Error::other(format!("user I/O callback: {what}"))
}

/// One file of a frame behind the callbacks.
struct CFile {
    store: CStore,
    path: CString,
}

/// An open stream of the callbacks, closed when dropped.
struct Stream<'a> {
    cb: &'a blosc2_io_cb,
    s: *mut c_void,
}

impl Drop for Stream<'_> {
    fn drop(&mut self) {
        if let Some(close) = self.cb.close {
            // SAFETY: a stream this set's open returned, closed once.
            unsafe { close(self.s) };
        }
    }
}

impl CFile {
    fn open(&self, mode: &std::ffi::CStr) -> io::Result<Stream<'_>> {
        let open = self.store.cb.open.ok_or_else(|| io_err("no open"))?;
        // SAFETY: NUL-terminated path and mode; the io's params as given.
        let s = unsafe { open(self.path.as_ptr(), mode.as_ptr(), self.store.params) };
        if s.is_null() {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("user I/O open of {:?} failed", self.path),
            ));
        }
        Ok(Stream {
            cb: &self.store.cb,
            s,
        })
    }
}

fn pos_i64(pos: u64) -> io::Result<i64> {
    i64::try_from(pos).map_err(|_| io_err("position too large"))
}

impl FrameIo for CFile {
    fn storage_len(&mut self) -> io::Result<u64> {
        let st = self.open(c"rb")?;
        let size = st.cb.size.ok_or_else(|| io_err("no size"))?;
        // SAFETY: an open stream of this set.
        let n = unsafe { size(st.s) };
        u64::try_from(n).map_err(|_| io_err("size failed"))
    }

    fn read_exact_at(&mut self, pos: u64, buf: &mut [u8]) -> io::Result<()> {
        if buf.is_empty() {
            return Ok(());
        }
        let st = self.open(c"rb")?;
        let read = st.cb.read.ok_or_else(|| io_err("no read"))?;
        let n = buf.len() as i64;
        let mut p = if st.cb.is_allocation_necessary {
            buf.as_mut_ptr() as *mut c_void
        } else {
            std::ptr::null_mut()
        };
        // SAFETY: an open stream; with is_allocation_necessary the callback
        // writes at most n bytes into buf (p), else it points p at n bytes
        // of its own, valid until the stream is closed.
        let got = unsafe { read(&mut p, 1, n, pos_i64(pos)?, st.s) };
        if got != n {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!("user I/O read {got} of {n} bytes at byte {pos}"),
            ));
        }
        if !st.cb.is_allocation_necessary {
            if p.is_null() {
                return Err(io_err("read returned no data"));
            }
            // SAFETY: p points to n readable bytes of the callback's (see
            // above), not overlapping buf.
            unsafe { std::ptr::copy_nonoverlapping(p as *const u8, buf.as_mut_ptr(), buf.len()) };
        }
        Ok(())
    }

    fn write_all_at(&mut self, pos: u64, data: &[u8]) -> io::Result<()> {
        if data.is_empty() {
            return Ok(());
        }
        let st = self.open(c"r+b")?;
        let write = st.cb.write.ok_or_else(|| io_err("no write"))?;
        let n = data.len() as i64;
        // SAFETY: an open stream; data has n readable bytes.
        let put = unsafe { write(data.as_ptr() as *const c_void, 1, n, pos_i64(pos)?, st.s) };
        if put != n {
            return Err(io::Error::new(
                io::ErrorKind::WriteZero,
                format!("user I/O wrote {put} of {n} bytes at byte {pos}"),
            ));
        }
        Ok(())
    }

    fn set_len(&mut self, len: u64) -> io::Result<()> {
        let st = self.open(c"r+b")?;
        let truncate = st.cb.truncate.ok_or_else(|| io_err("no truncate"))?;
        // SAFETY: an open stream.
        match unsafe { truncate(st.s, pos_i64(len)?) } {
            0 => Ok(()),
            rc => Err(io_err(&format!("truncate returned {rc}"))),
        }
    }

    fn sync(&mut self) -> io::Result<()> {
        Ok(())
    }

    fn is_persistent(&self) -> bool {
        true
    }

    fn describe(&self) -> String {
        format!(
            "'{}' (user I/O {})",
            self.path.to_string_lossy(),
            self.store.cb.id
        )
    }
}

impl FileStore for CStore {
    /// The callbacks have no rename: a sparse frame's index is rewritten
    /// in place through them, as C-Blosc2 does.
    fn can_rename(&self) -> bool {
        false
    }

    fn open(&self, path: &Path, mode: OpenMode) -> io::Result<Box<dyn FrameIo>> {
        let path = CString::new(path.as_os_str().as_encoded_bytes())
            .map_err(|_| io_err("path holds a NUL byte"))?;
        let f = CFile {
            // The same callbacks and params; only the original store
            // destroys the params.
            store: CStore {
                cb: blosc2_io_cb {
                    destroy: None,
                    ..self.cb
                },
                params: self.params,
            },
            path,
        };
        let mode = match mode {
            OpenMode::Read => c"rb",
            OpenMode::ReadWrite => c"r+b",
            OpenMode::Create => c"w+b",
        };
        // Opened once now: a missing file is an error here, and Create
        // makes (or empties) it.
        drop(f.open(mode)?);
        Ok(Box::new(f))
    }
}
