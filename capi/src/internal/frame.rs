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
//! * `lazy_vl_chunk` / `materialize_lazy`: the lazy form
//!   `blosc2_schunk_get_lazychunk` gives of a VL-block chunk of a frame on
//!   disk (as C-Blosc2's: the header with the lazy bit, the block starts,
//!   then `i32 nchunk | i64 offset | i32 block_csizes[nblocks]`), and the
//!   whole chunk again, checked against it, for the calls that decode one.
//!
//! `blosc-private.h`'s byte-order helpers and
//! `blosc2_nchunks_to_offsets_nbytes` are `static inline` in the header:
//! nothing to export for them.

use std::ffi::{CString, c_char, c_int};
use std::path::Path;

use oxiblosc::schunk::Storage;

use oxiblosc::ChunkHeader;

use crate::common::{guard, str_arg};
use crate::schunk::{CStore, blosc2_io, blosc2_schunk, io_cb, open_options, strip_file_scheme};
use crate::v2::err;

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

/// `blosc2_flags` bit of a lazy chunk.
const LAZY: u8 = 0x08;
/// Byte of `blosc2_flags` in a chunk header.
const BLOSC2_FLAGS: usize = 31;
/// The extended (32-byte) header's length.
const HEADER_LEN: usize = 32;

/// The lazy form of `chunk`, chunk number `nchunk` of its super-chunk, when
/// it is a VL-block chunk with blocks (not memcpyed, not special): its
/// header with the lazy bit set, its block starts, then C-Blosc2's lazy
/// trailer `i32 nchunk | i64 offset | i32 block_csizes[nblocks]` (little
/// endian, as C writes it on such hosts). `offset` is where the chunk
/// lives (a contiguous frame: its byte from the frame start, as C; a
/// sparse frame: its chunk file id, where C repeats the id in `nchunk`
/// too: this library reads the chunk again by its number, see
/// [`materialize_lazy`]). `None` for any other chunk.
pub(crate) fn lazy_vl_chunk(chunk: &[u8], nchunk: i64, offset: i64) -> Option<Vec<u8>> {
    let h = ChunkHeader::parse(chunk).ok()?;
    if !h.is_vlblocks() || h.is_memcpyed() || h.special().is_some() || h.is_lazy() {
        return None;
    }
    let n = h.nblocks();
    let nchunk = i32::try_from(nchunk).ok()?;
    let bend = n.checked_mul(4)?.checked_add(HEADER_LEN)?;
    let cbytes = h.cbytes;
    if n == 0 || bend > chunk.len() || cbytes > chunk.len() {
        return None;
    }
    let starts: Vec<usize> = chunk[HEADER_LEN..bend]
        .chunks_exact(4)
        .map(|b| usize::try_from(i32::from_le_bytes([b[0], b[1], b[2], b[3]])).ok())
        .collect::<Option<_>>()?;
    // A block's compressed size runs to the next block start (in stored
    // order: threads may have written them out of order), the last to the
    // chunk's end.
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&i| starts[i]);
    let mut csizes = vec![0i32; n];
    for (k, &i) in order.iter().enumerate() {
        let end = order.get(k + 1).map_or(cbytes, |&j| starts[j]);
        csizes[i] = i32::try_from(end.checked_sub(starts[i])?).ok()?;
    }
    let mut out = Vec::with_capacity(bend + 12 + 4 * n);
    out.extend_from_slice(&chunk[..bend]);
    out[BLOSC2_FLAGS] |= LAZY;
    out.extend_from_slice(&nchunk.to_le_bytes());
    out.extend_from_slice(&offset.to_le_bytes());
    for c in csizes {
        out.extend_from_slice(&c.to_le_bytes());
    }
    Some(out)
}

/// When `src` is a lazy chunk: the whole chunk it stands for, read again
/// from `schunk` (the decompression context's super-chunk) by the number
/// its trailer holds, after checking that `src` is exactly the lazy form of
/// that chunk (header, block starts, trailer). `Ok(None)` for a chunk that
/// is not lazy. Errors: `BLOSC2_ERROR_READ_BUFFER` for a lazy chunk cut
/// short, `BLOSC2_ERROR_INVALID_HEADER` for one that does not describe the
/// chunk (a tampered block size, a lazy chunk of another kind),
/// `BLOSC2_ERROR_INVALID_PARAM` without a super-chunk, or the error reading
/// the chunk gave.
pub(crate) fn materialize_lazy(
    src: &[u8],
    schunk: *mut std::ffi::c_void,
) -> Result<Option<Vec<u8>>, c_int> {
    let Ok(h) = ChunkHeader::parse(src) else {
        return Ok(None);
    };
    if !h.is_lazy() {
        return Ok(None);
    }
    if !h.is_vlblocks() {
        return Err(err::INVALID_HEADER);
    }
    let n = h.nblocks();
    let need = n
        .checked_mul(8)
        .and_then(|b| b.checked_add(HEADER_LEN + 12))
        .ok_or(err::INVALID_HEADER)?;
    if src.len() < need {
        return Err(err::READ_BUFFER);
    }
    let at = HEADER_LEN + 4 * n;
    let nchunk = i32::from_le_bytes([src[at], src[at + 1], src[at + 2], src[at + 3]]);
    if schunk.is_null() {
        return Err(err::INVALID_PARAM);
    }
    let mut p: *mut u8 = std::ptr::null_mut();
    let mut needs_free = false;
    // SAFETY: schunk is the context's super-chunk (a live handle of this
    // library, C's contract for decoding lazy chunks); the out-pointers
    // are valid locals.
    let rc = unsafe {
        crate::schunk::blosc2_schunk_get_chunk(
            schunk as *mut blosc2_schunk,
            i64::from(nchunk),
            &mut p,
            &mut needs_free,
        )
    };
    if rc < 0 || p.is_null() {
        return Err(if rc < 0 { rc } else { err::READ_BUFFER });
    }
    // SAFETY: get_chunk returned a malloc'ed chunk of rc bytes, ours to free.
    let full = unsafe { std::slice::from_raw_parts(p, rc as usize) }.to_vec();
    if needs_free {
        // SAFETY: as above; freed once, not used after.
        unsafe { libc::free(p as *mut std::ffi::c_void) };
    }
    // The trailer's offset is where the chunk was when the lazy chunk was
    // made; the rest must describe the chunk read now.
    let offset = i64::from_le_bytes(src[at + 4..at + 12].try_into().unwrap_or([0; 8]));
    match lazy_vl_chunk(&full, i64::from(nchunk), offset) {
        Some(expect) if expect.len() == need && expect[..] == src[..need] => Ok(Some(full)),
        _ => Err(err::INVALID_HEADER),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lazy_form_of_vl_chunks_only() {
        let blocks: [&[u8]; 3] = [b"red", &[7u8; 300], b"blue-blue-blue"];
        let p = oxiblosc::CParams::default().typesize(1);
        let chunk = oxiblosc::chunk::vl_compress(&blocks, &p).unwrap();
        let lazy = lazy_vl_chunk(&chunk, 5, 97).unwrap();
        let n = 3;
        assert_eq!(lazy.len(), HEADER_LEN + 4 * n + 12 + 4 * n);
        assert_eq!(lazy[BLOSC2_FLAGS] & LAZY, LAZY);
        assert_eq!(&lazy[..BLOSC2_FLAGS], &chunk[..BLOSC2_FLAGS]);
        assert_eq!(
            &lazy[HEADER_LEN..HEADER_LEN + 4 * n],
            &chunk[HEADER_LEN..HEADER_LEN + 4 * n]
        );
        let at = HEADER_LEN + 4 * n;
        let i32_at = |o: usize| i32::from_le_bytes(lazy[o..o + 4].try_into().unwrap());
        assert_eq!(i32_at(at), 5);
        assert_eq!(
            i64::from_le_bytes(lazy[at + 4..at + 12].try_into().unwrap()),
            97
        );
        // Each block's compressed size: to the next start, the last to cbytes.
        let start =
            |i: usize| i32::from_le_bytes(chunk[32 + 4 * i..36 + 4 * i].try_into().unwrap());
        for i in 0..n {
            let end = if i + 1 < n {
                start(i + 1)
            } else {
                chunk.len() as i32
            };
            assert_eq!(i32_at(at + 12 + 4 * i), end - start(i));
        }
        // A lazy chunk, a regular chunk and a short buffer have no lazy form.
        assert!(lazy_vl_chunk(&lazy, 5, 0).is_none());
        let regular = oxiblosc::Compressor::new(p).compress(&[1u8; 1000]).unwrap();
        assert!(lazy_vl_chunk(&regular, 0, 0).is_none());
        assert!(lazy_vl_chunk(&chunk[..20], 0, 0).is_none());

        // Materializing: not lazy -> nothing to do; lazy without a
        // super-chunk, or cut short -> the C library's error codes.
        let none = std::ptr::null_mut();
        assert_eq!(materialize_lazy(&chunk, none), Ok(None));
        assert_eq!(materialize_lazy(&regular, none), Ok(None));
        assert_eq!(materialize_lazy(&lazy, none), Err(err::INVALID_PARAM));
        assert_eq!(
            materialize_lazy(&lazy[..lazy.len() - 1], none),
            Err(err::READ_BUFFER)
        );
        let mut other = regular.clone();
        other[BLOSC2_FLAGS] |= LAZY;
        assert_eq!(materialize_lazy(&other, none), Err(err::INVALID_HEADER));
    }

    /// A fresh directory under the system's temporary directory.
    fn scratch_dir(tag: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("oxiblosc-capi-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn cstr(p: &Path) -> CString {
        CString::new(p.to_str().unwrap()).unwrap()
    }

    #[test]
    fn frames_from_files_and_sparse_chunk_files() {
        let dir = scratch_dir("frame-from-file");
        let data = vec![3u8; 4000];
        // A contiguous frame in a file, then the same after 100 bytes.
        let file = dir.join("f.b2frame");
        let mut sc = oxiblosc::SChunk::builder().create_file(&file).unwrap();
        sc.append_buffer(&data).unwrap();
        sc.append_buffer(&data).unwrap();
        drop(sc);
        let bytes = std::fs::read(&file).unwrap();
        let shifted = dir.join("shifted.bin");
        let mut v = vec![0xAAu8; 100];
        v.extend_from_slice(&bytes);
        std::fs::write(&shifted, &v).unwrap();
        // SAFETY: valid NUL-terminated paths, a null io (the file system);
        // every non-null frame is freed once.
        unsafe {
            let f = frame_from_file_offset(cstr(&file).as_ptr(), std::ptr::null(), 0);
            assert!(!f.is_null());
            assert_eq!((*f).len, bytes.len() as i64);
            assert_eq!(((*f).file_offset, (*f).sframe), (0, false));
            assert!((*f).schunk.is_null());
            assert_eq!(str_arg((*f).urlpath), file.to_str());
            assert_eq!(frame_free(f), 0);

            let g = frame_from_file_offset(cstr(&shifted).as_ptr(), std::ptr::null(), 100);
            assert!(!g.is_null());
            assert_eq!(((*g).len, (*g).file_offset), (bytes.len() as i64, 100));
            assert_eq!(frame_free(g), 0);
            // Not a frame there, a negative offset, no path, no file.
            for (path, off) in [(&shifted, 0), (&shifted, 99), (&file, -1)] {
                let p = cstr(path);
                assert!(frame_from_file_offset(p.as_ptr(), std::ptr::null(), off).is_null());
            }
            assert!(frame_from_file_offset(std::ptr::null(), std::ptr::null(), 0).is_null());
            let missing = cstr(&dir.join("missing"));
            assert!(frame_from_file_offset(missing.as_ptr(), std::ptr::null(), 0).is_null());
            assert_eq!(frame_free(std::ptr::null_mut()), 0);
        }

        // A sparse frame: the directory opens as a frame, its chunk files
        // open by number (within 0..=UINT32_MAX only).
        let sdir = dir.join("s.b2frame");
        let mut sc = oxiblosc::SChunk::builder().create_dir(&sdir).unwrap();
        sc.append_buffer(&data).unwrap();
        drop(sc);
        let rb = c"rb";
        // SAFETY: as above; streams are closed by the backend's close.
        unsafe {
            let f = frame_from_file_offset(cstr(&sdir).as_ptr(), std::ptr::null(), 0);
            assert!(!f.is_null());
            assert!((*f).sframe);
            assert_eq!(frame_free(f), 0);
            let d = cstr(&sdir);
            let fp = sframe_open_chunk(d.as_ptr(), 0, rb.as_ptr(), std::ptr::null());
            assert!(!fp.is_null());
            assert_eq!(crate::stdio::blosc2_stdio_size(fp), {
                std::fs::metadata(sdir.join("00000000.chunk"))
                    .unwrap()
                    .len() as i64
            });
            assert_eq!(crate::stdio::blosc2_stdio_close(fp), 0);
            for n in [1, -1, i64::from(u32::MAX) + 1] {
                assert!(sframe_open_chunk(d.as_ptr(), n, rb.as_ptr(), std::ptr::null()).is_null());
            }
            assert!(sframe_open_chunk(d.as_ptr(), 0, std::ptr::null(), std::ptr::null()).is_null());
            let io = blosc2_io {
                id: 200,
                name: std::ptr::null(),
                params: std::ptr::null_mut(),
            };
            assert!(sframe_open_chunk(d.as_ptr(), 0, rb.as_ptr(), &io).is_null());
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

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
