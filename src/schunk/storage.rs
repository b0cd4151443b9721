//! Where the bytes live: chunk files of directory frames, atomic file
//! replacement, reading one stored chunk from any storage, and the in-place
//! header write (serialising to a cframe is `cframe.rs`).

use std::borrow::Cow;
use std::fs::{self, File};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::space::Space;
use super::{Backend, SChunk, SFRAME_INDEX, Storage};
use crate::error::{Error, Result, corrupt};
use crate::frame::io::{FileStore, NamedIo, OpenMode};
use crate::frame::{self, ChunkEntry, FileIo, FrameHeader, Offsets};

/// A caller's [`FileStore`] (see [`super::SChunkBuilder::store`]).
#[derive(Clone)]
pub(super) struct StoreRef(pub Arc<dyn FileStore>);

impl std::fmt::Debug for StoreRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FileStore")
    }
}

/// A sparse frame: its directory, and the store its files are read and
/// written through (`None`: the operating system's files, with the
/// symbolic-link and size checks of [`read_chunk_file`]).
#[derive(Clone, Debug)]
pub(super) struct DirFrame {
    pub path: PathBuf,
    pub store: Option<StoreRef>,
}

impl std::ops::Deref for DirFrame {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.path
    }
}

impl DirFrame {
    /// Chunk file `id`, checked as [`read_chunk_file`] checks it.
    pub(super) fn read_chunk(&self, id: u64) -> Result<Vec<u8>> {
        self.read_chunk_head(id, u64::MAX).map(|(v, _)| v)
    }

    /// The first `limit` bytes of chunk file `id` (all of a shorter file)
    /// and the file's length, checked as [`read_chunk_file`] checks it.
    pub(super) fn read_chunk_head(&self, id: u64, limit: u64) -> Result<(Vec<u8>, u64)> {
        let Some(store) = &self.store else {
            return read_chunk_file(&self.path, id, limit);
        };
        let p = chunk_file(&self.path, id);
        let mut f = store.0.open(&p, OpenMode::Read).map_err(at(&p))?;
        let len = f.storage_len().map_err(at(&p))?;
        if !(MIN_CHUNK_FILE..=i32::MAX as u64).contains(&len) {
            return Err(corrupt(format!("{}: {len} bytes", p.display())));
        }
        let mut v = vec![0u8; len.min(limit) as usize];
        f.read_exact_at(0, &mut v).map_err(at(&p))?;
        Ok((v, len))
    }

    /// The stored size of chunk file `id`.
    pub(super) fn chunk_len(&self, id: u64) -> Result<u64> {
        let p = chunk_file(&self.path, id);
        match &self.store {
            None => Ok(fs::symlink_metadata(&p)
                .map_err(|e| corrupt(format!("{}: {e}", p.display())))?
                .len()),
            Some(store) => store
                .0
                .open(&p, OpenMode::Read)
                .and_then(|mut f| f.storage_len())
                .map_err(|e| corrupt(format!("{}: {e}", p.display()))),
        }
    }

    /// Write chunk file `id` (a new file).
    pub(super) fn write_chunk(&self, id: u64, bytes: &[u8], fsync: bool) -> Result<()> {
        let p = chunk_file(&self.path, id);
        let r = match &self.store {
            None => File::create(&p).and_then(|mut f| {
                f.write_all(bytes)?;
                if fsync { f.sync_all() } else { Ok(()) }
            }),
            Some(store) => frame::io::write_file(store.0.as_ref(), &p, bytes, fsync),
        };
        r.map_err(at(&p))
    }

    /// Remove chunk file `id` (errors ignored: it is garbage either way).
    pub(super) fn remove_chunk(&self, id: u64) {
        let p = chunk_file(&self.path, id);
        let _ = match &self.store {
            None => fs::remove_file(&p),
            Some(store) => store.0.remove_file(&p),
        };
    }

    /// The index file's bytes.
    pub(super) fn read_index(&self) -> Result<Vec<u8>> {
        let p = self.path.join(SFRAME_INDEX);
        match &self.store {
            None => fs::read(&p),
            Some(store) => frame::io::read_file(store.0.as_ref(), &p),
        }
        .map_err(at(&p))
    }

    /// Replace the index file with `bytes` (atomically: a temporary file
    /// renamed over it; in place for a store that cannot rename).
    pub(super) fn replace_index(&self, bytes: &[u8], fsync: bool) -> Result<()> {
        let p = self.path.join(SFRAME_INDEX);
        let Some(store) = &self.store else {
            return write_replace(&p, bytes, fsync);
        };
        if !store.0.can_rename() {
            return frame::io::write_file(store.0.as_ref(), &p, bytes, fsync).map_err(at(&p));
        }
        let tmp = p.with_extension("b2frame.tmp");
        let r = frame::io::write_file(store.0.as_ref(), &tmp, bytes, fsync)
            .and_then(|()| store.0.rename(&tmp, &p));
        if let Err(e) = r {
            let _ = store.0.remove_file(&tmp);
            return Err(at(&p)(e));
        }
        Ok(())
    }
}

/// An I/O error that names `path`: `'<path>': <cause>` (the kind kept).
pub(super) fn at(path: &Path) -> impl Fn(std::io::Error) -> Error + '_ {
    move |e| Error::Io(named(path, e))
}

/// Whether `a` and `b` name one file (the same device and inode on Unix;
/// the same canonical path elsewhere); false when either is not there.
fn same_file(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (fs::metadata(a), fs::metadata(b)) {
            (Ok(x), Ok(y)) => (x.dev(), x.ino()) == (y.dev(), y.ino()),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        match (fs::canonicalize(a), fs::canonicalize(b)) {
            (Ok(x), Ok(y)) => x == y,
            _ => false,
        }
    }
}

/// Write `bytes` to `path` through a temporary file and a rename; on any
/// error the temporary file is removed and `path` is left as it was.
pub(super) fn write_replace(path: &Path, bytes: &[u8], sync: bool) -> Result<()> {
    write_replace_with(path, sync, |f| Ok(f.write_all(bytes)?))
}

/// [`write_replace`] of what `write` writes to the temporary file (its
/// errors as it gives them, the file's own naming `path`).
pub(super) fn write_replace_with(
    path: &Path,
    sync: bool,
    write: impl FnOnce(&mut dyn Write) -> Result<()>,
) -> Result<()> {
    let tmp = path.with_extension("b2frame.tmp");
    let written = (|| {
        let f = File::create(&tmp).map_err(at(path))?;
        let mut named = NamedWriter { f, path };
        write(&mut named)?;
        if sync {
            named.f.sync_all().map_err(at(path))?;
        }
        Ok(())
    })();
    if let Err(e) = written {
        let _ = fs::remove_file(&tmp);
        return Err(e);
    }
    if let Err(e) = fs::rename(&tmp, path) {
        let _ = fs::remove_file(&tmp);
        return Err(at(path)(e));
    }
    if sync && let Some(dir) = path.parent() {
        // Make the rename durable; not every platform can open a directory.
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
    }
    Ok(())
}

/// A file whose write errors name `path` (the file it will become).
struct NamedWriter<'a> {
    f: File,
    path: &'a Path,
}

impl Write for NamedWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.f.write(buf).map_err(|e| named(self.path, e))
    }
    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        self.f.write_all(buf).map_err(|e| named(self.path, e))
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.f.flush().map_err(|e| named(self.path, e))
    }
}

/// `e` with `path` in its message (the errors [`at`] and [`NamedWriter`] give).
fn named(path: &Path, e: std::io::Error) -> std::io::Error {
    std::io::Error::new(e.kind(), format!("'{}': {e}", path.display()))
}

pub(super) fn chunk_file(dir: &Path, id: u64) -> PathBuf {
    dir.join(format!("{id:08X}.chunk"))
}

/// The shortest chunk file read: a Blosc1 chunk's 16-byte header. Our
/// writers store chunks of at least 32 bytes (a Blosc2 header), as in a
/// contiguous frame, but C-Blosc2 stores a Blosc1 chunk appended to a
/// sparse frame as it is, 16 bytes and up, and reads it back (unless it is
/// the first chunk); `to_cframe` widens such chunks
/// ([`frame::raw::widen_short_chunk`]) so that the contiguous frame reopens.
const MIN_CHUNK_FILE: u64 = 16;

/// Read the first `limit` bytes of a chunk file (all of a shorter one) and
/// its length: a regular file (no symlink) of [`MIN_CHUNK_FILE`] bytes or
/// more. The checks are made on the open file, so the file read is the
/// file checked, and at most the checked length is read (a file that grows
/// meanwhile gives no more).
pub(super) fn read_chunk_file(dir: &Path, id: u64, limit: u64) -> Result<(Vec<u8>, u64)> {
    let p = chunk_file(dir, id);
    let not_regular = || corrupt(format!("{} is not a regular file", p.display()));
    let mut f = match open_no_follow(&p) {
        Ok(f) => f,
        // A symlink's open fails (ELOOP on Linux and macOS, EMLINK on
        // FreeBSD; elsewhere than Unix, any file that is not regular):
        // said as such, not as the operating system's error.
        Err(_) if fs::symlink_metadata(&p).is_ok_and(|m| !m.file_type().is_file()) => {
            return Err(not_regular());
        }
        Err(e) => return Err(at(&p)(e)),
    };
    let md = f.metadata().map_err(at(&p))?;
    if !md.file_type().is_file() {
        return Err(not_regular());
    }
    if md.len() < MIN_CHUNK_FILE || md.len() > i32::MAX as u64 {
        return Err(corrupt(format!("{}: {} bytes", p.display(), md.len())));
    }
    let mut bytes = vec![0u8; md.len().min(limit) as usize];
    f.read_exact(&mut bytes).map_err(at(&p))?;
    Ok((bytes, md.len()))
}

/// Open `p` to read, refusing a symbolic link as the last component, and
/// without waiting for a writer when it is a FIFO (the caller checks the
/// type on the open file). Elsewhere than Unix: the link and type checked
/// first, then opened.
fn open_no_follow(p: &Path) -> std::io::Result<File> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(p)
    }
    #[cfg(not(unix))]
    {
        if !fs::symlink_metadata(p)?.file_type().is_file() {
            return Err(std::io::Error::other("not a regular file"));
        }
        File::open(p)
    }
}

/// How much of a stored chunk's header [`load_chunk`] checks.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Check {
    /// All of it ([`frame::check_stored_chunk`]): the chunk goes to the
    /// caller as it is.
    Whole,
    /// Its sizes against the frame ([`frame::check_stored_sizes`]): the
    /// chunk is decoded next, and the decoder checks the rest.
    Sizes,
}

/// Check a stored chunk's header as `check` says.
#[inline(always)]
fn check_stored(
    check: Check,
    header: &FrameHeader,
    nchunks: usize,
    bytes: &[u8],
    i: usize,
) -> Result<()> {
    match check {
        Check::Whole => frame::check_stored_chunk(header, nchunks, bytes, i),
        Check::Sizes => frame::check_stored_sizes(header, nchunks, bytes, i),
    }
}

/// The compressed chunk of slot `i` (index entry `entry`): borrowed from an
/// in-memory frame, read from disk (only its bytes) otherwise; special
/// entries materialised as header-only chunks. A free function over the
/// fields it needs, so callers can hold the chunk and use the decompressor.
/// Inlined: see [`SChunk::entry`].
#[inline(always)]
pub(super) fn load_chunk<'a>(
    backend: &'a mut Backend,
    header: &FrameHeader,
    nchunks: usize,
    (entry, check): (ChunkEntry, Check),
    expected: Option<usize>,
    i: usize,
) -> Result<Cow<'a, [u8]>> {
    match entry {
        ChunkEntry::Stored(loc) if !backend.in_memory() => Ok(match backend {
            Backend::Frame { io, .. } => {
                let (pos, len) = header.chunk_span(io.as_mut(), loc)?;
                let mut v = vec![0u8; len as usize];
                io.read_exact_at(pos, &mut v)?;
                check_stored(check, header, nchunks, &v, i)?;
                Cow::Owned(v)
            }
            Backend::Dir(dir) => {
                let v = dir.read_chunk(loc)?;
                check_stored(check, header, nchunks, &v, i)?;
                Cow::Owned(v)
            }
        }),
        // Borrowed for `'a` here only, so the arm above may take `io`
        // mutably.
        _ => load_shared(backend, header, nchunks, (entry, check), expected, i),
    }
}

/// [`load_chunk`] through a shared borrow, for a special entry or a frame
/// in memory (the chunk borrowed from the frame's bytes, its span read
/// there too, not copied out through `read_exact_at`);
/// [`Error::Unsupported`] for a chunk that must be read from a file or
/// directory.
#[inline(always)]
pub(super) fn load_shared<'a>(
    backend: &'a Backend,
    header: &FrameHeader,
    nchunks: usize,
    (entry, check): (ChunkEntry, Check),
    expected: Option<usize>,
    i: usize,
) -> Result<Cow<'a, [u8]>> {
    Ok(match entry {
        ChunkEntry::Special(kind) => {
            let n = expected
                .ok_or_else(|| corrupt("special chunk in a frame of variable-size chunks"))?;
            Cow::Owned(frame::materialize_special(header, n, kind)?)
        }
        ChunkEntry::Stored(loc) => match backend {
            Backend::Frame { io, .. } if backend.in_memory() => {
                let s = header.chunk_in(&**io, loc)?;
                check_stored(check, header, nchunks, s, i)?;
                Cow::Borrowed(s)
            }
            _ => {
                return Err(Error::Unsupported(
                    "a chunk of a frame on disk is read, not borrowed".into(),
                ));
            }
        },
    })
}

impl Backend {
    /// Whether this is a frame whose bytes are in memory (its
    /// [`FrameIo::slice`] answers).
    pub(super) fn in_memory(&self) -> bool {
        match self {
            // Always a `MemFrame` (`builder.rs`, `open.rs`): no call
            // through the trait object to learn it.
            Backend::Frame {
                storage: Storage::Memory,
                io,
            } => {
                debug_assert!(io.bytes().is_some());
                true
            }
            Backend::Frame { io, .. } => io.slice(0, 0).is_some(),
            Backend::Dir(_) => false,
        }
    }
}

impl SChunk {
    /// Whether the super-chunk lives in a file or a directory: what
    /// [`SChunk::storage`] tells without copying its path.
    ///
    /// ```
    /// let sc = oxiblosc::SChunk::builder().build_memory()?;
    /// assert!(!sc.is_on_disk());
    /// # Ok::<(), oxiblosc::Error>(())
    /// ```
    #[inline]
    pub fn is_on_disk(&self) -> bool {
        match &self.backend {
            Backend::Frame { storage, .. } => {
                matches!(storage, Storage::File { .. } | Storage::Directory(_))
            }
            Backend::Dir(_) => true,
        }
    }

    /// Where the super-chunk lives.
    pub fn storage(&self) -> Storage {
        match &self.backend {
            Backend::Frame { storage, .. } => storage.clone(),
            Backend::Dir(p) => Storage::Directory(p.path.clone()),
        }
    }

    /// The `nbytes` header field of the chunk stored at `loc`: in a
    /// contiguous frame, or chunk file `loc` of a directory frame (where a
    /// file whose header does not read counts as `u64::MAX`: the sum then
    /// disagrees, and the frame is read-only, see [`SChunk::scan_live_cbytes`]).
    fn frame_chunk_nbytes(&mut self, loc: u64) -> Result<u64> {
        let mut b = [0u8; 4];
        match &mut self.backend {
            Backend::Frame { io, .. } => {
                io.read_exact_at(u64::from(self.header.header_len) + loc + 4, &mut b)?;
            }
            Backend::Dir(dir) => match dir.read_chunk_head(loc, 8) {
                Ok((head, _)) if head.len() >= 8 => b.copy_from_slice(&head[4..8]),
                _ => return Ok(u64::MAX),
            },
        }
        Ok(u64::from(u32::from_le_bytes(b)))
    }

    /// Sum of the stored chunk sizes; for a cframe of variable-size chunks
    /// also checks that the chunks' sizes add up to the header's nbytes.
    ///
    /// With `defer`, a stored chunk whose size does not fit (a
    /// [`Error::Corrupt`](crate::Error::Corrupt) from its span) is left out
    /// instead of failing: the super-chunk is then read-only, and reading
    /// that chunk fails with the same error (see
    /// [`OpenOptions::defer_chunk_checks`](crate::OpenOptions::defer_chunk_checks)).
    pub(super) fn scan_live_cbytes(&mut self, defer: bool) -> Result<u64> {
        let mut total = 0u64;
        let mut nbytes = 0u64;
        let variable = self.header.chunksize == 0;
        let mut spans = Vec::new();
        let mut bad: Option<crate::Error> = None;
        let mut span_of = |sc: &mut SChunk, loc: u64| -> Result<Option<u64>> {
            match sc.stored_len(loc) {
                Ok(len) => Ok(Some(len)),
                Err(e @ crate::Error::Corrupt(_)) if defer => {
                    bad.get_or_insert(e);
                    Ok(None)
                }
                // Say how to read the other chunks (C-Blosc2 opens such a
                // frame; a sparse frame missing one chunk file is the
                // common case).
                Err(crate::Error::Corrupt(m)) => Err(corrupt(format!(
                    "{m} (OpenOptions::defer_chunk_checks opens the frame \
                     read-only, its other chunks readable)"
                ))),
                Err(e) => Err(e),
            }
        };
        if let Offsets::Repeated { value, len: count } = self.offsets
            && let ChunkEntry::Stored(loc) = ChunkEntry::from_raw(value)?
            && let Some(len) = span_of(self, loc)?
        {
            // One stored chunk, counted once in the live bytes (as the
            // explicit index's repeated entries are; it was left out, and a
            // frame rewritten after an append showed more bytes than the
            // super-chunk had said).
            total += len;
            spans.push((loc, len));
            // Every entry is that chunk: it holds `count` times its bytes
            // (counted as 0 before, so such a frame, which `to_cframe` of
            // a directory whose entries all name one file writes, did not
            // reopen).
            if variable {
                nbytes = self.frame_chunk_nbytes(loc)?.saturating_mul(count as u64);
            }
        }
        if let Offsets::Explicit(v) = &self.offsets {
            let v = v.clone();
            // Each distinct chunk is looked at once (entries may repeat: a
            // directory index of millions of entries naming one file costs
            // one metadata call), and counted once in the live bytes.
            let mut seen: std::collections::HashMap<u64, u64> = std::collections::HashMap::new();
            for &o in v.iter() {
                if let ChunkEntry::Stored(loc) = ChunkEntry::from_raw(o)? {
                    let chunk_nbytes = match seen.get(&loc) {
                        Some(&nb) => nb,
                        None => {
                            let Some(len) = span_of(self, loc)? else {
                                continue;
                            };
                            total += len;
                            spans.push((loc, len));
                            let nb = if variable {
                                self.frame_chunk_nbytes(loc)?
                            } else {
                                0
                            };
                            seen.insert(loc, nb);
                            nb
                        }
                    };
                    nbytes = nbytes.saturating_add(chunk_nbytes);
                }
            }
        }
        if let Some(e) = bad {
            self.writable = Err(format!("a chunk does not fit its frame ({e}): read-only"));
            self.unfit_chunk = Some(e.to_string());
        } else if variable && nbytes != self.header.nbytes as u64 {
            let m = format!(
                "chunks hold {nbytes} bytes, the header says {}",
                self.header.nbytes
            );
            if matches!(self.backend, Backend::Frame { .. }) {
                return Err(corrupt(m));
            }
            // A directory opens (its chunks read as they are), but no change
            // is made: each computes the new size from the header's, and a
            // delete left a size smaller than the chunks kept, which then no
            // longer read (fuzz-sframe_read-7.bin, session 47).
            self.writable = Err(format!("{m}: read-only"));
        }
        if matches!(self.backend, Backend::Frame { .. }) {
            self.space = Space::build(spans);
        }
        Ok(total)
    }

    pub(super) fn stored_len(&mut self, loc: u64) -> Result<u64> {
        match &mut self.backend {
            Backend::Frame { io, .. } => Ok(self.header.chunk_span(io.as_mut(), loc)?.1),
            Backend::Dir(dir) => dir.chunk_len(loc),
        }
    }

    /// Whether the super-chunk is a contiguous frame in memory.
    pub(super) fn is_memory_frame(&self) -> bool {
        matches!(
            &self.backend,
            Backend::Frame {
                storage: Storage::Memory,
                ..
            }
        )
    }

    pub(super) fn is_persistent_frame(&self) -> bool {
        matches!(&self.backend, Backend::Frame { io, .. } if io.is_persistent())
    }

    /// The frame's header as stored (its `header_len` bytes, read when the
    /// frame was opened).
    pub(super) fn stored_header(&mut self) -> Result<Vec<u8>> {
        let n = self.header.header_len as usize;
        match &mut self.backend {
            Backend::Frame { io, .. } => {
                let mut b = vec![0u8; n];
                io.read_exact_at(0, &mut b)?;
                Ok(b)
            }
            Backend::Dir(dir) => {
                let mut all = dir.read_index()?;
                if all.len() < n {
                    return Err(corrupt("index file shorter than its header"));
                }
                all.truncate(n);
                Ok(all)
            }
        }
    }

    /// Write the header bytes `bytes` (the frame's first `bytes.len()`
    /// bytes, same header length) so that a crash leaves the old or the new
    /// header: only the changed byte range is written; in place when that
    /// range lies inside one 512-byte sector of the file (one small write,
    /// the assumption the commit point of every change already makes),
    /// else, for a frame in a file, through a copy of the file renamed over
    /// it ([`SChunk::replace_through_copy`]). A directory frame's index file
    /// is always replaced whole. A frame behind a caller's `FrameIo` is
    /// written in place (as atomic as that storage's writes).
    pub(super) fn write_header_region(&mut self, bytes: &[u8]) -> Result<()> {
        let fsync = self.fsync;
        let frame_len = self.header.frame_len;
        match &mut self.backend {
            Backend::Frame { io, storage } => {
                let mut old = vec![0u8; bytes.len()];
                io.read_exact_at(0, &mut old)?;
                let Some(a) = (0..old.len()).find(|&k| old[k] != bytes[k]) else {
                    return Ok(());
                };
                let b = (0..old.len()).rfind(|&k| old[k] != bytes[k]).unwrap_or(a);
                let one_sector = match storage {
                    Storage::File { offset, .. } => {
                        (*offset + a as u64) / 512 == (*offset + b as u64) / 512
                    }
                    _ => true,
                };
                if one_sector {
                    io.write_all_at(a as u64, &bytes[a..=b])?;
                    if fsync {
                        io.sync()?;
                    }
                } else {
                    self.replace_through_copy(frame_len, a as u64, &bytes[a..=b], frame_len)?;
                }
            }
            Backend::Dir(dir) => {
                let mut all = dir.read_index()?;
                if all.len() < bytes.len() {
                    return Err(corrupt("index file shorter than its header"));
                }
                all[..bytes.len()].copy_from_slice(bytes);
                dir.replace_index(&all, fsync)?;
            }
        }
        Ok(())
    }

    /// Change a frame in a file without writing over it: copy the file's
    /// bytes up to the frame's byte `keep` into a new file beside it,
    /// write `patch` at frame byte `pos`, make the frame `new_len` bytes
    /// long, sync, and rename the copy over the file (atomic; symbolic
    /// links are followed, the file's permissions kept). A crash leaves the
    /// old file, or the new one (plus, at worst, a stray `.NAME.oxiblosc-*.tmp`
    /// beside it); any error removes the copy and leaves the file as it
    /// was. Costs a copy of the file (`copy_file_range` where the system
    /// has it).
    pub(super) fn replace_through_copy(
        &mut self,
        keep: u64,
        pos: u64,
        patch: &[u8],
        new_len: u64,
    ) -> Result<()> {
        use std::io::{Read, Seek, SeekFrom};
        let fsync = self.fsync;
        let Backend::Frame {
            io,
            storage: Storage::File { path, offset },
        } = &mut self.backend
        else {
            return Err(corrupt("not a frame in a file"));
        };
        let offset = *offset;
        let real = fs::canonicalize(&*path).map_err(at(path))?;
        let name = real
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let tmp = real.with_file_name(format!(".{name}.oxiblosc-{}.tmp", std::process::id()));
        let copied = (|| -> std::io::Result<File> {
            let src = File::open(&real)?;
            let mut dst = fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create_new(true)
                .open(&tmp)?;
            dst.set_permissions(src.metadata()?.permissions())?;
            let want = offset + keep;
            let n = std::io::copy(&mut src.take(want), &mut dst)?;
            if n != want {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    "the file shrank while being copied",
                ));
            }
            dst.seek(SeekFrom::Start(offset + pos))?;
            dst.write_all(patch)?;
            dst.set_len(offset + new_len)?;
            if fsync {
                dst.sync_all()?;
            }
            Ok(dst)
        })();
        let file = match copied {
            Ok(f) => f,
            Err(e) => {
                let _ = fs::remove_file(&tmp);
                return Err(at(&real)(e));
            }
        };
        if let Err(e) = fs::rename(&tmp, &real) {
            let _ = fs::remove_file(&tmp);
            return Err(at(&real)(e));
        }
        if fsync
            && let Some(d) = real.parent()
            && let Ok(d) = File::open(d)
        {
            let _ = d.sync_all();
        }
        *io = Box::new(NamedIo(Box::new(FileIo::with_path(file, offset, &*path))));
        Ok(())
    }

    /// Write a whole new frame `bytes` over the frame: through
    /// [`SChunk::replace_through_copy`] for a frame in a file, else in
    /// place (memory, a caller's `FrameIo`) or by replacing a directory
    /// frame's index file.
    pub(super) fn replace_frame(&mut self, bytes: &[u8]) -> Result<()> {
        let fsync = self.fsync;
        let r = match &mut self.backend {
            Backend::Frame {
                storage: Storage::File { .. },
                ..
            } => self.replace_through_copy(0, 0, bytes, bytes.len() as u64),
            Backend::Frame { io, .. } => {
                io.write_all_at(0, bytes)?;
                io.set_len(bytes.len() as u64)?;
                if fsync {
                    io.sync()?;
                }
                Ok(())
            }
            Backend::Dir(dir) => dir.replace_index(bytes, fsync),
        };
        if r.is_ok() {
            // A whole frame: nothing of a memory frame is left stale.
            self.tail_stale = false;
        }
        r
    }

    /// Save the super-chunk as a contiguous frame file at `path` (its
    /// [`SChunk::to_cframe`] bytes), replacing `path` atomically: the bytes
    /// go to a temporary file beside it, synced (unless the super-chunk was
    /// made or opened with `fsync(false)`), then renamed over it. On any
    /// error the temporary file is removed and `path` is as it was. The
    /// frame is written a piece at a time ([`SChunk::write_cframe`]), never
    /// held whole. Returns its length.
    ///
    /// Saved over the file its own frame is in, the super-chunk is trimmed
    /// ([`SChunk::trim`]) so that the file is the frame, and keeps writing
    /// to that file (a rename over it would have left the super-chunk
    /// writing to a file no longer in the directory).
    ///
    /// # Errors
    /// I/O errors, naming the path and the cause; as
    /// [`SChunk::write_cframe`]; [`Error::InvalidParam`] for the file its
    /// own frame is in at an offset (the file holds more than the frame);
    /// as [`SChunk::trim`] (a read-only super-chunk) over its own file.
    pub fn save(&mut self, path: impl AsRef<Path>) -> Result<u64> {
        if let Backend::Frame {
            storage: Storage::File { path: own, offset },
            ..
        } = &self.backend
            && same_file(own, path.as_ref())
        {
            if *offset != 0 {
                return Err(Error::InvalidParam(format!(
                    "cannot save the frame over '{}', the file it is read from at \
                     offset {offset}",
                    path.as_ref().display()
                )));
            }
            self.trim()?;
            if let Backend::Frame { io, .. } = &mut self.backend
                && self.fsync
            {
                io.sync()?;
            }
            return Ok(self.header.frame_len);
        }
        let mut len = 0;
        let sync = self.fsync;
        write_replace_with(path.as_ref(), sync, |w| {
            len = self.write_cframe(w)?;
            Ok(())
        })?;
        Ok(len)
    }
}
