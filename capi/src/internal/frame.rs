//! Frame, sparse-frame and chunk internals for the peer suites'
//! internal-header tests (`capi/peer-include/c-blosc2/frame.h`,
//! `blosc-private.h`, `sframe.h`, `config.h`).
//!
//! * [`blosc2_frame_s`]: the frame view `frame.h` declares. A super-chunk's
//!   `frame` member points to one its handle keeps up to date (see
//!   `crate::schunk`); [`frame_from_file_offset`] returns one of its own.
//! * [`frame_from_file_offset`] / [`frame_free`]: open (and so check) the
//!   frame stored in a file, as C-Blosc2's reader does; a frame our reader
//!   refuses (bad magic, header, index, trailer) gives NULL.
//! * [`sframe_open_chunk`]: a sparse frame's chunk file, opened through the
//!   I/O callbacks the caller's `blosc2_io` names.
//!
//! `blosc-private.h`'s byte-order helpers and
//! `blosc2_nchunks_to_offsets_nbytes` are `static inline` in the header:
//! nothing to export for them.

use std::ffi::{CString, c_char, c_int};
use std::path::Path;

use oxiblosc::schunk::Storage;

use crate::common::{guard, str_arg};
use crate::schunk::{CStore, blosc2_io, blosc2_schunk, io_cb, open_options, strip_file_scheme};

/// `blosc2_frame_s` as our `frame.h` declares it.
#[repr(C)]
pub struct blosc2_frame_s {
    /// The file or directory; NULL for a frame in memory.
    pub urlpath: *mut c_char,
    /// Bytes of the whole frame (of a sparse frame: of its index file).
    pub len: i64,
    /// Where the frame starts in its file.
    pub file_offset: i64,
    /// A sparse frame (a directory).
    pub sframe: bool,
    /// The super-chunk this frame belongs to, or NULL.
    pub schunk: *mut blosc2_schunk,
}

// The layout gcc gives the header's struct on LP64.
const _: () = {
    assert!(std::mem::size_of::<blosc2_frame_s>() == 40);
    assert!(std::mem::offset_of!(blosc2_frame_s, len) == 8);
    assert!(std::mem::offset_of!(blosc2_frame_s, file_offset) == 16);
    assert!(std::mem::offset_of!(blosc2_frame_s, sframe) == 24);
    assert!(std::mem::offset_of!(blosc2_frame_s, schunk) == 32);
};

impl blosc2_frame_s {
    /// A frame view with nothing set.
    pub(crate) const EMPTY: blosc2_frame_s = blosc2_frame_s {
        urlpath: std::ptr::null_mut(),
        len: 0,
        file_offset: 0,
        sframe: false,
        schunk: std::ptr::null_mut(),
    };

    /// Fill in what a super-chunk stored in `storage`, whose frame (sparse:
    /// index file) is `frame_len` bytes long, looks like from C.
    pub(crate) fn describe(&mut self, storage: &Storage, frame_len: u64) {
        self.len = i64::try_from(frame_len).unwrap_or(i64::MAX);
        self.sframe = matches!(storage, Storage::Directory(_));
        self.file_offset = match storage {
            Storage::File { offset, .. } => i64::try_from(*offset).unwrap_or(i64::MAX),
            _ => 0,
        };
    }
}

/// What [`frame_from_file_offset`] allocates: the C view first, then the
/// memory its `urlpath` points into.
#[repr(C)]
struct OwnedFrame {
    c: blosc2_frame_s,
    urlpath: CString,
}

/// Open the frame stored in file (or sparse-frame directory) `urlpath` from
/// byte `offset` on, through the I/O callbacks `io` names (NULL or ids 0/1:
/// the file system); NULL for bad arguments or a frame our reader refuses.
/// The frame is read, never changed. Free the result with [`frame_free`].
///
/// # Safety
/// `urlpath` is null or a NUL-terminated string; `io` is null or points to
/// a `blosc2_io`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn frame_from_file_offset(
    urlpath: *const c_char,
    io: *const blosc2_io,
    offset: i64,
) -> *mut blosc2_frame_s {
    guard(std::ptr::null_mut(), || {
        // SAFETY: urlpath is null or a NUL-terminated string.
        let Some(url) = (unsafe { str_arg(urlpath) }).map(strip_file_scheme) else {
            return std::ptr::null_mut();
        };
        let Ok(offset) = u64::try_from(offset) else {
            return std::ptr::null_mut();
        };
        // SAFETY: io is null or points to C's blosc2_io.
        let io = unsafe { io.as_ref() };
        let mut opts = open_options().read_only(true).offset(offset);
        match CStore::for_io(io) {
            Ok(Some(store)) => opts = opts.store(store),
            Ok(None) => {}
            Err(_) => return std::ptr::null_mut(),
        }
        let mut sc = match opts.open(url) {
            Ok(sc) => sc,
            Err(e) => {
                eprintln!("frame_from_file_offset: {e}");
                return std::ptr::null_mut();
            }
        };
        sc.set_tidy_on_drop(false);
        let Ok(url) = CString::new(url) else {
            return std::ptr::null_mut();
        };
        let mut f = Box::new(OwnedFrame {
            c: blosc2_frame_s::EMPTY,
            urlpath: url,
        });
        f.c.describe(&sc.storage(), sc.frame_header().frame_len);
        f.c.urlpath = f.urlpath.as_ptr() as *mut c_char;
        Box::into_raw(f) as *mut blosc2_frame_s
    })
}

/// Free a frame [`frame_from_file_offset`] returned (NULL is fine); 0.
///
/// # Safety
/// `frame` is null or came from [`frame_from_file_offset`] and is freed
/// once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn frame_free(frame: *mut blosc2_frame_s) -> c_int {
    guard(-1, || {
        if !frame.is_null() {
            // SAFETY: frame came from Box::into_raw of an OwnedFrame (whose
            // first field it points to) and is freed once (the contract).
            drop(unsafe { Box::from_raw(frame as *mut OwnedFrame) });
        }
        0
    })
}

/// The file name of chunk `nchunk` in a sparse frame's directory (8
/// uppercase hex digits); `None` outside `0..=u32::MAX`, which that name
/// cannot hold.
fn chunk_file_name(nchunk: i64) -> Option<String> {
    let n = u32::try_from(nchunk).ok()?;
    Some(format!("{n:08X}.chunk"))
}

/// Open chunk `nchunk`'s file of the sparse frame in directory `urlpath`
/// in fopen `mode`, through the `open` callback of the I/O backend `io`
/// names (NULL: the file system). The stream `open` returned (close it
/// with that backend's `close`), or NULL: for a chunk number outside
/// `0..=UINT32_MAX`, null arguments, an unknown backend, or a file that
/// does not open.
///
/// # Safety
/// `urlpath` and `mode` are null or NUL-terminated strings; `io` is null
/// or points to a `blosc2_io`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sframe_open_chunk(
    urlpath: *const c_char,
    nchunk: i64,
    mode: *const c_char,
    io: *const blosc2_io,
) -> *mut std::ffi::c_void {
    guard(std::ptr::null_mut(), || {
        let Some(name) = chunk_file_name(nchunk) else {
            return std::ptr::null_mut();
        };
        // SAFETY: urlpath is null or a NUL-terminated string.
        let Some(url) = (unsafe { str_arg(urlpath) }).map(strip_file_scheme) else {
            return std::ptr::null_mut();
        };
        if mode.is_null() {
            return std::ptr::null_mut();
        }
        // SAFETY: io is null or points to C's blosc2_io.
        let (id, params) = match unsafe { io.as_ref() } {
            Some(io) => (io.id, io.params),
            None => (0, std::ptr::null_mut()),
        };
        let Some(open) = io_cb(id).and_then(|cb| cb.open) else {
            return std::ptr::null_mut();
        };
        let path = Path::new(url).join(name);
        let Some(path) = path.to_str().and_then(|p| CString::new(p).ok()) else {
            return std::ptr::null_mut();
        };
        // SAFETY: the callback is the backend's `open`, given a
        // NUL-terminated path, C's NUL-terminated mode and the io's params,
        // as C-Blosc2 calls it.
        unsafe { open(path.as_ptr(), mode, params) }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunk_file_names_cover_u32_only() {
        assert_eq!(chunk_file_name(0).as_deref(), Some("00000000.chunk"));
        assert_eq!(chunk_file_name(0xAB).as_deref(), Some("000000AB.chunk"));
        assert_eq!(
            chunk_file_name(i64::from(u32::MAX)).as_deref(),
            Some("FFFFFFFF.chunk")
        );
        assert_eq!(chunk_file_name(i64::from(u32::MAX) + 1), None);
        assert_eq!(chunk_file_name(-1), None);
    }
}
