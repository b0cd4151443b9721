//! Byte access to where a frame lives: a `Vec<u8>`, a region of a file, or
//! anything else that implements [`FrameIo`].

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// Positioned reads and writes relative to the start of a frame.
///
/// The super-chunk writes through this trait only, in the order that keeps a
/// frame readable after a write cut at any byte (see the crate docs of
/// [`crate::schunk`]); tests use it to inject faults.
pub trait FrameIo {
    /// Bytes available from the frame start to the end of the storage.
    ///
    /// # Errors
    /// The storage's I/O error.
    fn storage_len(&mut self) -> io::Result<u64>;
    /// Fill `buf` from `pos`; an error if the storage ends first.
    ///
    /// # Errors
    /// The storage's I/O error, `UnexpectedEof` past the end.
    fn read_exact_at(&mut self, pos: u64, buf: &mut [u8]) -> io::Result<()>;
    /// Write all of `data` at `pos`, growing the storage if needed.
    ///
    /// # Errors
    /// The storage's I/O error.
    fn write_all_at(&mut self, pos: u64, data: &[u8]) -> io::Result<()>;
    /// A hint that about `additional` bytes are about to be written past
    /// the end (an in-memory frame grows its buffer once for them).
    fn reserve(&mut self, additional: u64) {
        let _ = additional;
    }
    /// Copy the `len` bytes at `from` to `to` (the spans may overlap, as
    /// for `memmove`), both inside the storage. The default reads them
    /// into a buffer and writes them back; a `Vec` moves them in place.
    ///
    /// # Errors
    /// The storage's I/O error, `UnexpectedEof` past the end.
    fn copy_within(&mut self, from: u64, len: u64, to: u64) -> io::Result<()> {
        let mut buf = vec![0u8; usize::try_from(len).map_err(|_| eof())?];
        self.read_exact_at(from, &mut buf)?;
        self.write_all_at(to, &buf)
    }
    /// Make the storage end at `len` (relative to the frame start).
    ///
    /// # Errors
    /// The storage's I/O error.
    fn set_len(&mut self, len: u64) -> io::Result<()>;
    /// Make the writes so far durable (`fsync`); a no-op in memory.
    ///
    /// # Errors
    /// The storage's I/O error.
    fn sync(&mut self) -> io::Result<()>;
    /// Whether the bytes survive the process (a file): then changes are
    /// written in the crash-safe order, never over live bytes.
    fn is_persistent(&self) -> bool;
    /// Borrow the bytes `[pos, pos + len)` without copying, when the storage
    /// is memory. By default, from [`FrameIo::bytes`].
    fn slice(&self, pos: u64, len: usize) -> Option<&[u8]> {
        part(self.bytes()?, pos, len)
    }
    /// All the bytes from the frame start, when the storage is memory: a
    /// chunk read takes its header and its bytes from them with one call
    /// (two calls of [`FrameIo::slice`] otherwise). `None` by default; a
    /// storage that gives them has [`FrameIo::slice`] with them.
    fn bytes(&self) -> Option<&[u8]> {
        None
    }
    /// A pointer to [`FrameIo::bytes`] that may be written through, when
    /// the storage is memory of its own (not borrowed), made without a
    /// reference to the bytes (pointers taken from [`FrameIo::bytes`]
    /// before stay valid): what [`SChunk::cframe_ptr`] lends to C.
    /// `None` by default.
    ///
    /// [`SChunk::cframe_ptr`]: crate::SChunk::cframe_ptr
    fn as_mut_ptr(&mut self) -> Option<*mut u8> {
        None
    }
    /// A count of the changes to the storage's bytes in memory, when it
    /// keeps one: it moves on every write, resize or copy through this
    /// trait (each of which may also move the buffer), so that bytes and
    /// pointers taken from [`FrameIo::bytes`] or [`FrameIo::as_mut_ptr`]
    /// are known to be unchanged while it stays the same. `None` by default
    /// (and for a bare `Vec<u8>`); a super-chunk's own frames in memory
    /// keep one: [`SChunk::frame_version`].
    ///
    /// [`SChunk::frame_version`]: crate::SChunk::frame_version
    fn writes(&self) -> Option<u64> {
        None
    }
    /// What the storage is, for error messages (a file's path): a
    /// super-chunk's I/O errors start with it.
    fn describe(&self) -> String {
        "the frame storage".to_string()
    }
}

/// Bytes `[pos, pos + len)` of `all`, or `None` when they are not all there.
pub(crate) fn part(all: &[u8], pos: u64, len: usize) -> Option<&[u8]> {
    let start = usize::try_from(pos).ok()?;
    all.get(start..start.checked_add(len)?)
}

fn eof() -> io::Error {
    io::Error::new(
        io::ErrorKind::UnexpectedEof,
        "read past the end of the frame storage",
    )
}

impl FrameIo for Vec<u8> {
    fn storage_len(&mut self) -> io::Result<u64> {
        Ok(<[u8]>::len(self) as u64)
    }
    fn read_exact_at(&mut self, pos: u64, buf: &mut [u8]) -> io::Result<()> {
        let src = FrameIo::slice(self, pos, buf.len()).ok_or_else(eof)?;
        buf.copy_from_slice(src);
        Ok(())
    }
    fn write_all_at(&mut self, pos: u64, data: &[u8]) -> io::Result<()> {
        let start = usize::try_from(pos).map_err(|_| eof())?;
        let end = start.checked_add(data.len()).ok_or_else(eof)?;
        let len = <[u8]>::len(self);
        if end <= len {
            self[start..end].copy_from_slice(data);
            return Ok(());
        }
        // Past the end: the bytes that overlap copied, the rest appended
        // (not zero-filled first and then copied over: an append of a
        // concatenation's chunks wrote each of its bytes twice).
        if start > len {
            self.resize(start, 0);
        }
        let (over, rest) = data.split_at(self.len() - start);
        self[start..].copy_from_slice(over);
        self.extend_from_slice(rest);
        Ok(())
    }
    fn set_len(&mut self, len: u64) -> io::Result<()> {
        let len = usize::try_from(len).map_err(|_| eof())?;
        self.resize(len, 0);
        Ok(())
    }
    fn copy_within(&mut self, from: u64, len: u64, to: u64) -> io::Result<()> {
        let at = |p: u64| usize::try_from(p).map_err(|_| eof());
        let (from, len, to) = (at(from)?, at(len)?, at(to)?);
        let n = <[u8]>::len(self);
        if from.checked_add(len).is_none_or(|e| e > n) || to.checked_add(len).is_none_or(|e| e > n)
        {
            return Err(eof());
        }
        <[u8]>::copy_within(self, from..from + len, to);
        Ok(())
    }
    fn reserve(&mut self, additional: u64) {
        // A hint: a failure to grow now is left to the writes.
        if let Some(total) = usize::try_from(additional)
            .ok()
            .and_then(|n| n.checked_add(<[u8]>::len(self)))
            && total > self.capacity()
        {
            grow(self, total);
        }
    }
    fn sync(&mut self) -> io::Result<()> {
        Ok(())
    }
    fn is_persistent(&self) -> bool {
        false
    }
    fn bytes(&self) -> Option<&[u8]> {
        Some(self.as_slice())
    }
    fn as_mut_ptr(&mut self) -> Option<*mut u8> {
        Some(Vec::as_mut_ptr(self))
    }
}

/// A super-chunk's frame in memory: its bytes, and a count of the calls
/// that changed them or may have moved them ([`FrameIo::writes`]).
#[derive(Debug, Default)]
pub(crate) struct MemFrame {
    bytes: Vec<u8>,
    writes: u64,
}

impl From<Vec<u8>> for MemFrame {
    fn from(bytes: Vec<u8>) -> Self {
        MemFrame { bytes, writes: 0 }
    }
}

impl FrameIo for MemFrame {
    fn storage_len(&mut self) -> io::Result<u64> {
        Ok(self.bytes.len() as u64)
    }
    fn read_exact_at(&mut self, pos: u64, buf: &mut [u8]) -> io::Result<()> {
        FrameIo::read_exact_at(&mut self.bytes, pos, buf)
    }
    fn write_all_at(&mut self, pos: u64, data: &[u8]) -> io::Result<()> {
        self.writes += 1;
        FrameIo::write_all_at(&mut self.bytes, pos, data)
    }
    fn set_len(&mut self, len: u64) -> io::Result<()> {
        self.writes += 1;
        FrameIo::set_len(&mut self.bytes, len)
    }
    fn copy_within(&mut self, from: u64, len: u64, to: u64) -> io::Result<()> {
        self.writes += 1;
        FrameIo::copy_within(&mut self.bytes, from, len, to)
    }
    fn reserve(&mut self, additional: u64) {
        // Growing moves the buffer (counted even when no write follows: a
        // change that failed after its reserve).
        let at = self.bytes.as_ptr();
        FrameIo::reserve(&mut self.bytes, additional);
        if self.bytes.as_ptr() != at {
            self.writes += 1;
        }
    }
    fn sync(&mut self) -> io::Result<()> {
        Ok(())
    }
    fn is_persistent(&self) -> bool {
        false
    }
    fn bytes(&self) -> Option<&[u8]> {
        Some(&self.bytes)
    }
    fn as_mut_ptr(&mut self) -> Option<*mut u8> {
        Some(self.bytes.as_mut_ptr())
    }
    fn writes(&self) -> Option<u64> {
        Some(self.writes)
    }
}

/// Room for `total` bytes in a memory frame's buffer, its new pages advised
/// onto huge pages before they are first written (a frame of tens of
/// megabytes otherwise faults in 4 KiB at a time on every copy into fresh
/// memory: `perf/README.md`, session 41). A failure to grow is left to the
/// writes that need the room.
fn grow(v: &mut Vec<u8>, total: usize) {
    // Amortised (at least doubled), as a `Vec` grows: appends one chunk at
    // a time reserve each time.
    if v.try_reserve(total.saturating_sub(v.len())).is_ok() {
        oxiblosc_kernels::advise_huge_pages(v);
    }
}

/// A frame inside a file, starting at byte `offset` of it.
#[derive(Debug)]
pub struct FileIo {
    file: File,
    offset: u64,
    path: Option<PathBuf>,
}

impl FileIo {
    /// The frame that starts at `offset` in `file`.
    pub fn new(file: File, offset: u64) -> Self {
        FileIo {
            file,
            offset,
            path: None,
        }
    }
    /// The frame that starts at `offset` in `file`, opened from `path`
    /// (which [`FrameIo::describe`] then names).
    pub fn with_path(file: File, offset: u64, path: impl AsRef<Path>) -> Self {
        FileIo {
            file,
            offset,
            path: Some(path.as_ref().to_path_buf()),
        }
    }
    /// Where the frame starts in the file.
    pub fn offset(&self) -> u64 {
        self.offset
    }
    fn abs(&self, pos: u64) -> io::Result<u64> {
        self.offset
            .checked_add(pos)
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "file position overflows"))
    }
}

impl FrameIo for FileIo {
    fn storage_len(&mut self) -> io::Result<u64> {
        let size = self.file.metadata()?.len();
        Ok(size.saturating_sub(self.offset))
    }
    fn read_exact_at(&mut self, pos: u64, buf: &mut [u8]) -> io::Result<()> {
        let abs = self.abs(pos)?;
        self.file.seek(SeekFrom::Start(abs))?;
        self.file.read_exact(buf)
    }
    fn write_all_at(&mut self, pos: u64, data: &[u8]) -> io::Result<()> {
        let abs = self.abs(pos)?;
        self.file.seek(SeekFrom::Start(abs))?;
        self.file.write_all(data)
    }
    fn set_len(&mut self, len: u64) -> io::Result<()> {
        let abs = self.abs(len)?;
        self.file.set_len(abs)
    }
    fn sync(&mut self) -> io::Result<()> {
        self.file.sync_data()
    }
    fn is_persistent(&self) -> bool {
        true
    }
    fn describe(&self) -> String {
        let name = match &self.path {
            Some(p) => format!("'{}'", p.display()),
            None => "the frame file".to_string(),
        };
        if self.offset == 0 {
            name
        } else {
            format!("{name} (frame at byte {})", self.offset)
        }
    }
}

/// A [`FrameIo`] whose errors say which storage failed and what it was
/// doing: `'<path>': cannot write 4096 bytes at byte 1234: No space left
/// on device (os error 28)` (the error kind is kept).
pub(crate) struct NamedIo(pub Box<dyn FrameIo>);

impl NamedIo {
    fn err(&self, what: std::fmt::Arguments<'_>, e: io::Error) -> io::Error {
        io::Error::new(e.kind(), format!("{}: {what}: {e}", self.0.describe()))
    }
}

impl FrameIo for NamedIo {
    fn storage_len(&mut self) -> io::Result<u64> {
        self.0
            .storage_len()
            .map_err(|e| self.err(format_args!("cannot read its length"), e))
    }
    fn read_exact_at(&mut self, pos: u64, buf: &mut [u8]) -> io::Result<()> {
        let n = buf.len();
        self.0
            .read_exact_at(pos, buf)
            .map_err(|e| self.err(format_args!("cannot read {n} bytes at byte {pos}"), e))
    }
    fn write_all_at(&mut self, pos: u64, data: &[u8]) -> io::Result<()> {
        let n = data.len();
        self.0
            .write_all_at(pos, data)
            .map_err(|e| self.err(format_args!("cannot write {n} bytes at byte {pos}"), e))
    }
    fn set_len(&mut self, len: u64) -> io::Result<()> {
        self.0
            .set_len(len)
            .map_err(|e| self.err(format_args!("cannot set its length to {len}"), e))
    }
    fn sync(&mut self) -> io::Result<()> {
        self.0
            .sync()
            .map_err(|e| self.err(format_args!("cannot sync"), e))
    }
    fn is_persistent(&self) -> bool {
        self.0.is_persistent()
    }
    fn slice(&self, pos: u64, len: usize) -> Option<&[u8]> {
        self.0.slice(pos, len)
    }
    fn bytes(&self) -> Option<&[u8]> {
        self.0.bytes()
    }
    fn as_mut_ptr(&mut self) -> Option<*mut u8> {
        self.0.as_mut_ptr()
    }
    fn writes(&self) -> Option<u64> {
        self.0.writes()
    }
    fn describe(&self) -> String {
        self.0.describe()
    }
}

/// A read-only view of a frame held in a slice.
#[derive(Debug)]
pub(crate) struct SliceIo<'a>(pub &'a [u8]);

impl FrameIo for SliceIo<'_> {
    fn storage_len(&mut self) -> io::Result<u64> {
        Ok(self.0.len() as u64)
    }
    fn read_exact_at(&mut self, pos: u64, buf: &mut [u8]) -> io::Result<()> {
        let src = FrameIo::slice(self, pos, buf.len()).ok_or_else(eof)?;
        buf.copy_from_slice(src);
        Ok(())
    }
    fn write_all_at(&mut self, _pos: u64, _data: &[u8]) -> io::Result<()> {
        Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            "read-only frame",
        ))
    }
    fn set_len(&mut self, _len: u64) -> io::Result<()> {
        Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            "read-only frame",
        ))
    }
    fn sync(&mut self) -> io::Result<()> {
        Ok(())
    }
    fn is_persistent(&self) -> bool {
        false
    }
    fn bytes(&self) -> Option<&[u8]> {
        Some(self.0)
    }
}

/// How [`FileStore::open`] opens a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpenMode {
    /// An existing file, for reading.
    Read,
    /// An existing file, for reading and writing.
    ReadWrite,
    /// A new, empty file for reading and writing (an existing one is
    /// emptied).
    Create,
}

/// The files a super-chunk on disk reads and writes through: a
/// contiguous frame's file, a sparse frame's index file and chunk files.
/// By default a super-chunk uses the operating system's files directly;
/// one built or opened with a store ([`crate::schunk::SChunkBuilder::store`],
/// [`crate::schunk::OpenOptions::store`]) opens, reads, writes and
/// truncates every such file through it (C-Blosc2's user-defined I/O,
/// `blosc2_io_cb`). Directory creation, renames and removals have
/// defaults on the operating system's calls (C-Blosc2 makes those
/// directly too).
///
/// A contiguous frame opened through a store is held as
/// [`crate::schunk::Storage::Custom`]: changes are written in place, as
/// atomic as the store's writes. A sparse frame keeps its
/// [`crate::schunk::Storage::Directory`] and replaces its index file by
/// writing a temporary file through the store and renaming it, or, for a
/// store that cannot rename ([`FileStore::can_rename`]), by rewriting it
/// in place (as C-Blosc2 does).
///
/// ```
/// use std::path::Path;
/// use std::sync::Arc;
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// use oxiblosc::frame::io::{FileStore, FrameIo, OpenMode, StdFileStore};
/// use oxiblosc::schunk::SChunk;
///
/// /// Counts the files opened.
/// struct Counting(AtomicUsize);
/// impl FileStore for Counting {
///     fn open(&self, path: &Path, mode: OpenMode) -> std::io::Result<Box<dyn FrameIo>> {
///         self.0.fetch_add(1, Ordering::Relaxed);
///         StdFileStore.open(path, mode)
///     }
/// }
/// let dir = std::env::temp_dir().join(format!("oxiblosc-store-doc-{}", std::process::id()));
/// let _ = std::fs::remove_dir_all(&dir);
/// let store = Arc::new(Counting(AtomicUsize::new(0)));
/// let mut sc = SChunk::builder().store(store.clone()).create_dir(&dir).unwrap();
/// sc.append_buffer(&[7u8; 4000]).unwrap();
/// assert!(store.0.load(Ordering::Relaxed) >= 2); // the index file and one chunk file
/// std::fs::remove_dir_all(&dir).unwrap();
/// ```
pub trait FileStore: Send + Sync {
    /// Open the file at `path` as `mode` says.
    ///
    /// # Errors
    /// The store's I/O error (`NotFound` for a missing file).
    fn open(&self, path: &Path, mode: OpenMode) -> io::Result<Box<dyn FrameIo>>;
    /// Remove the file at `path`.
    ///
    /// # Errors
    /// The I/O error.
    fn remove_file(&self, path: &Path) -> io::Result<()> {
        std::fs::remove_file(path)
    }
    /// Rename the file `from` to `to`, replacing `to`.
    ///
    /// # Errors
    /// The I/O error.
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        std::fs::rename(from, to)
    }
    /// Whether [`FileStore::rename`] renames the store's files (the default
    /// does, for the system's files); a store whose files are not the
    /// system's returns false, and a sparse frame's index is then
    /// rewritten in place.
    fn can_rename(&self) -> bool {
        true
    }
    /// Create the directory `path` (its parent must exist).
    ///
    /// # Errors
    /// The I/O error (`AlreadyExists` when it does).
    fn create_dir(&self, path: &Path) -> io::Result<()> {
        std::fs::create_dir(path)
    }
}

/// The operating system's files as a [`FileStore`] (what a super-chunk
/// without a store uses).
#[derive(Clone, Copy, Debug, Default)]
pub struct StdFileStore;

impl FileStore for StdFileStore {
    fn open(&self, path: &Path, mode: OpenMode) -> io::Result<Box<dyn FrameIo>> {
        let mut o = std::fs::OpenOptions::new();
        match mode {
            OpenMode::Read => o.read(true),
            OpenMode::ReadWrite => o.read(true).write(true),
            OpenMode::Create => o.read(true).write(true).create(true).truncate(true),
        };
        let file = o.open(path)?;
        Ok(Box::new(FileIo::with_path(file, 0, path)))
    }
}

/// The whole file at `path`, read through `store`.
///
/// # Errors
/// The store's I/O errors.
pub fn read_file(store: &dyn FileStore, path: &Path) -> io::Result<Vec<u8>> {
    let mut f = store.open(path, OpenMode::Read)?;
    let len = f.storage_len()?;
    let len = usize::try_from(len)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "file too large"))?;
    let mut v = vec![0u8; len];
    f.read_exact_at(0, &mut v)?;
    Ok(v)
}

/// Make the file at `path` hold exactly `bytes`, through `store` (created,
/// written, truncated to its length, synced when `sync`).
///
/// # Errors
/// The store's I/O errors.
pub fn write_file(store: &dyn FileStore, path: &Path, bytes: &[u8], sync: bool) -> io::Result<()> {
    let mut f = store.open(path, OpenMode::Create)?;
    f.write_all_at(0, bytes)?;
    f.set_len(bytes.len() as u64)?;
    if sync {
        f.sync()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::FrameIo;

    /// A write inside, across the end of, at the end of and past the end of
    /// an in-memory frame: the bytes written where they go, a gap zeros.
    #[test]
    fn vec_writes_inside_across_and_past_the_end() {
        let mut v: Vec<u8> = vec![1, 2, 3, 4];
        v.write_all_at(1, &[9, 9]).unwrap();
        assert_eq!(v, [1, 9, 9, 4]);
        v.write_all_at(3, &[7, 7, 7]).unwrap();
        assert_eq!(v, [1, 9, 9, 7, 7, 7]);
        v.write_all_at(6, &[5]).unwrap();
        assert_eq!(v, [1, 9, 9, 7, 7, 7, 5]);
        v.write_all_at(9, &[8, 8]).unwrap();
        assert_eq!(v, [1, 9, 9, 7, 7, 7, 5, 0, 0, 8, 8]);
        v.write_all_at(2, &[]).unwrap();
        assert_eq!(v.len(), 11);
        assert!(v.write_all_at(u64::MAX, &[1]).is_err());
    }
}
