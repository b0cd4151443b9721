//! Opening existing super-chunks: [`OpenOptions`] and the `SChunk`
//! constructors (`builder`, `new`, `open`, `open_offset`, `from_cframe`).

use std::fs::{self, File, OpenOptions as FsOpenOptions};
use std::path::Path;

use super::space::Space;
use super::storage::{DirFrame, StoreRef, at};
use super::{Backend, SChunk, SChunkBuilder, SFRAME_INDEX, Storage};
use crate::error::{Result, invalid_param};
use crate::frame::io::{FileStore, MemFrame, NamedIo, OpenMode};
use crate::frame::{self, Edition, FileIo, Frame, FrameIo, FrameKind};
use crate::params::{CParams, DParams};
use crate::{Compressor, Decompressor};

/// How to open an existing super-chunk.
#[derive(Clone, Debug, Default)]
pub struct OpenOptions {
    offset: u64,
    nthreads_comp: Option<usize>,
    nthreads_decomp: Option<usize>,
    read_only: bool,
    discard_trailing: bool,
    no_fsync: bool,
    store: Option<StoreRef>,
    defer_chunk_checks: bool,
}

/// Bytes of a file frame's start compared before and after an open.
const SNAPSHOT: usize = 64 << 10;
/// Opens retried while a writer keeps committing.
const MAX_OPEN_TRIES: usize = 1000;

/// Up to `len` bytes of `file` from `offset` (fewer at its end).
fn header_snapshot(file: &File, offset: u64, len: usize) -> std::io::Result<Vec<u8>> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = file;
    f.seek(SeekFrom::Start(offset))?;
    let mut v = Vec::with_capacity(len);
    f.take(len as u64).read_to_end(&mut v)?;
    Ok(v)
}

impl OpenOptions {
    /// Default options: offset 0, thread counts from the frame's
    /// `tcomp`/`tdecomp`, writable, `fsync` on.
    pub fn new() -> Self {
        OpenOptions::default()
    }
    /// The frame starts at this byte of the file.
    pub fn offset(mut self, offset: u64) -> Self {
        self.offset = offset;
        self
    }
    /// Compress with this many threads instead of the frame's `tcomp`.
    pub fn nthreads_comp(mut self, n: usize) -> Self {
        self.nthreads_comp = Some(n);
        self
    }
    /// Decompress with this many threads instead of the frame's `tdecomp`.
    pub fn nthreads_decomp(mut self, n: usize) -> Self {
        self.nthreads_decomp = Some(n);
        self
    }
    /// Open the file read-only; every change fails.
    pub fn read_only(mut self, on: bool) -> Self {
        self.read_only = on;
        self
    }
    /// Treat bytes after the frame in its file as free space (a change then
    /// overwrites and truncates them). Off by default: such a frame cannot
    /// be changed, so nothing after it is lost.
    pub fn discard_trailing(mut self, on: bool) -> Self {
        self.discard_trailing = on;
        self
    }
    /// Read and write the frame's files through `store` (see
    /// [`FileStore`]: a contiguous frame opened so is held as
    /// [`Storage::Custom`]). Whether `path` is a directory is still asked of
    /// the operating system.
    pub fn store(mut self, store: std::sync::Arc<dyn FileStore>) -> Self {
        self.store = Some(StoreRef(store));
        self
    }
    /// `fsync` at each change (default on).
    pub fn fsync(mut self, on: bool) -> Self {
        self.no_fsync = !on;
        self
    }
    /// Off by default: a stored chunk whose size (the `cbytes` of its
    /// header) runs outside the frame's chunks section, or a sparse frame's
    /// missing chunk file, fails the open (the error names this option).
    /// On: such a frame opens read-only (every change fails), and reading
    /// that chunk fails (naming the file, for a sparse frame); the other
    /// chunks read as usual; no new frame is written from it
    /// ([`SChunk::to_cframe`], [`SChunk::write_cframe`], [`SChunk::save`]
    /// fail), as it would not reopen. (C-Blosc2 opens such frames: one in
    /// memory without copying it, `blosc2_schunk_from_buffer(...,
    /// copy=false)`, and sparse frames by path.)
    pub fn defer_chunk_checks(mut self, on: bool) -> Self {
        self.defer_chunk_checks = on;
        self
    }

    /// Open a file (cframe) or directory (sframe).
    ///
    /// A sparse frame's chunk files are read as they are needed, each opened
    /// once and checked on the open file: a chunk file that is not a regular
    /// file (a symbolic link, a directory, a FIFO, which is not waited on) or
    /// whose size is out of range is refused as corrupt, naming the file.
    ///
    /// # Errors
    /// I/O errors and every frame check of [`Frame::read`].
    pub fn open(&self, path: impl AsRef<Path>) -> Result<SChunk> {
        let path = path.as_ref();
        // Through a store, a path the system does not know is a file of the
        // store's (only a sparse frame's directory must be the system's).
        let is_dir = match (fs::metadata(path), &self.store) {
            (Ok(m), _) => m.is_dir(),
            (Err(_), Some(_)) => false,
            (Err(e), None) => return Err(at(path)(e)),
        };
        if is_dir {
            let dir = DirFrame {
                path: path.to_path_buf(),
                store: self.store.clone(),
            };
            let index = dir.read_index()?;
            let f = Frame::read(&mut frame::io::SliceIo(&index), Some(FrameKind::Sparse))?;
            let trailing = index.len() as u64 - f.header.frame_len;
            let mut sc = self.assemble(Backend::Dir(dir), f)?;
            if trailing != 0 {
                sc.writable = Err(format!("{trailing} stray bytes after {SFRAME_INDEX}"));
            }
            if self.read_only && sc.writable.is_ok() {
                sc.writable = Err("opened read-only".into());
            }
            sc.live_cbytes = sc.scan_live_cbytes(self.defer_chunk_checks)?;
            return Ok(sc);
        }
        if let Some(store) = &self.store {
            if self.offset != 0 {
                return Err(invalid_param(
                    "a frame at an offset cannot be opened through a store",
                ));
            }
            let mode = if self.read_only {
                OpenMode::Read
            } else {
                OpenMode::ReadWrite
            };
            let io = match store.0.open(path, mode) {
                Err(e)
                    if mode == OpenMode::ReadWrite
                        && e.kind() == std::io::ErrorKind::PermissionDenied =>
                {
                    store.0.open(path, OpenMode::Read)
                }
                r => r,
            }
            .map_err(at(path))?;
            return self.open_io(io);
        }
        let file = if self.read_only {
            File::open(path).map_err(at(path))?
        } else {
            match FsOpenOptions::new().read(true).write(true).open(path) {
                Ok(f) => f,
                Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
                    File::open(path).map_err(at(path))?
                }
                Err(e) => return Err(at(path)(e)),
            }
        };
        // A writer in another process or thread may commit while we read:
        // the header is read again after the rest, and the open retried
        // when it changed (see "Sharing" in the crate docs of `schunk`).
        let mut tries = 0;
        loop {
            let before = header_snapshot(&file, self.offset, SNAPSHOT).map_err(at(path))?;
            let handle = file.try_clone().map_err(at(path))?;
            let r = self.open_file_once(handle, path);
            let hl = match &r {
                Ok(sc) => sc.header.header_len as usize,
                Err(_) => frame::HEADER_FIXED_LEN,
            }
            .min(before.len());
            let again = header_snapshot(&file, self.offset, hl).map_err(at(path))?;
            tries += 1;
            if before[..hl] == again[..] || tries >= MAX_OPEN_TRIES {
                return r;
            }
            std::thread::yield_now();
        }
    }

    fn open_file_once(&self, file: File, path: &Path) -> Result<SChunk> {
        let mut io = NamedIo(Box::new(FileIo::with_path(file, self.offset, path)));
        let f = Frame::read(&mut io, Some(FrameKind::Contiguous))?;
        let after = io.storage_len()?.saturating_sub(f.header.frame_len);
        let storage = Storage::File {
            path: path.to_path_buf(),
            offset: self.offset,
        };
        let mut sc = self.assemble(
            Backend::Frame {
                io: Box::new(io),
                storage,
            },
            f,
        )?;
        if after != 0 && !self.discard_trailing && sc.writable.is_ok() {
            sc.writable = Err(format!(
                "{after} bytes follow the frame in its file; changes would overwrite them \
                 (OpenOptions::discard_trailing allows it)"
            ));
        }
        if self.read_only && sc.writable.is_ok() {
            sc.writable = Err("opened read-only".into());
        }
        sc.live_cbytes = sc.scan_live_cbytes(self.defer_chunk_checks)?;
        Ok(sc)
    }

    /// Adopt a cframe held in memory (no copy). Its length must be the
    /// frame's `frame_len`.
    ///
    /// # Errors
    /// Every frame check of [`Frame::parse`].
    pub fn from_cframe(&self, bytes: Vec<u8>) -> Result<SChunk> {
        let f = Frame::parse(&bytes)?;
        // A sparse frame's index names chunk files, not offsets into these
        // bytes: held as a contiguous frame, reads and edits would go wrong.
        if f.header.kind != FrameKind::Contiguous {
            return Err(crate::error::invalid_header(
                "a sparse frame's index (open its directory), not a contiguous frame",
            ));
        }
        let mut sc = self.assemble(
            Backend::Frame {
                io: Box::new(MemFrame::from(bytes)),
                storage: Storage::Memory,
            },
            f,
        )?;
        if self.read_only && sc.writable.is_ok() {
            sc.writable = Err("opened read-only".into());
        }
        sc.live_cbytes = sc.scan_live_cbytes(self.defer_chunk_checks)?;
        Ok(sc)
    }

    /// Open a cframe behind a caller-supplied [`FrameIo`] (bytes after the
    /// frame are left alone unless [`OpenOptions::discard_trailing`]).
    ///
    /// # Errors
    /// As [`OpenOptions::open`].
    pub fn open_io(&self, io: Box<dyn FrameIo>) -> Result<SChunk> {
        let mut io: Box<dyn FrameIo> = Box::new(NamedIo(io));
        let f = Frame::read(io.as_mut(), Some(FrameKind::Contiguous))?;
        let after = io.storage_len()? - f.header.frame_len;
        let mut sc = self.assemble(
            Backend::Frame {
                io,
                storage: Storage::Custom,
            },
            f,
        )?;
        if after != 0 && !self.discard_trailing && sc.writable.is_ok() {
            sc.writable = Err(format!("{after} bytes follow the frame"));
        }
        if self.read_only && sc.writable.is_ok() {
            sc.writable = Err("opened read-only".into());
        }
        sc.live_cbytes = sc.scan_live_cbytes(self.defer_chunk_checks)?;
        Ok(sc)
    }

    fn assemble(&self, backend: Backend, f: Frame) -> Result<SChunk> {
        let mut cparams = f.header.cparams();
        // The thread counts the frame records (`tcomp`, `tdecomp`) are
        // reported as they are (and written back unchanged), but the
        // threads actually started are capped to the machine's.
        let mut run_c = crate::parallel::cap_header_threads(cparams.nthreads);
        if let Some(n) = self.nthreads_comp {
            cparams.nthreads = n;
            run_c = n;
        }
        let mut dparams =
            DParams::default().nthreads(usize::try_from(f.header.tdecomp).unwrap_or(1).max(1));
        let mut run_d = crate::parallel::cap_header_threads(dparams.nthreads);
        if let Some(n) = self.nthreads_decomp {
            dparams.nthreads = n;
            run_d = n;
        }
        if cparams.nthreads == 0 || dparams.nthreads == 0 {
            return Err(invalid_param("nthreads must be at least 1"));
        }
        let writable = if f.header.edition == Edition::First {
            Err("first-edition (0x9d) frames are read-only".to_string())
        } else {
            Ok(())
        };
        Ok(SChunk {
            backend,
            compressor: Compressor::new(cparams.clone().nthreads(run_c)),
            decompressor: Decompressor::new(dparams.clone().nthreads(run_d)),
            cparams,
            dparams,
            header: f.header,
            metalayers: f.metalayers,
            vlmetalayers: f.vlmetalayers,
            offsets: f.offsets,
            live_cbytes: 0,
            space: Space::default(),
            fsync: !self.no_fsync,
            writable,
            trailing_free: self.discard_trailing,
            tidy_on_close: false,
            tidy_on_drop: true,
            unfit_chunk: None,
            tail_stale: false,
            stamp_epoch: super::next_stamp_epoch(),
        })
    }
}

impl SChunk {
    /// A builder for a new super-chunk.
    pub fn builder() -> SChunkBuilder {
        SChunkBuilder::default()
    }

    /// An empty in-memory super-chunk compressing with `cparams`.
    ///
    /// # Errors
    /// [`Error::InvalidParam`](crate::Error::InvalidParam) for bad parameters.
    pub fn new(cparams: CParams) -> Result<SChunk> {
        SChunk::builder().cparams(cparams).build_memory()
    }

    /// Open a file (cframe at offset 0) or a directory (sframe) with the
    /// default [`OpenOptions`].
    ///
    /// # Errors
    /// As [`OpenOptions::open`].
    pub fn open(path: impl AsRef<Path>) -> Result<SChunk> {
        OpenOptions::new().open(path)
    }

    /// Open the cframe that starts at byte `offset` of a file.
    ///
    /// # Errors
    /// As [`OpenOptions::open`].
    pub fn open_offset(path: impl AsRef<Path>, offset: u64) -> Result<SChunk> {
        OpenOptions::new().offset(offset).open(path)
    }

    /// Adopt a cframe in memory without copying it (C's `copy = false`;
    /// for `copy = true` pass `bytes.to_vec()`).
    ///
    /// # Errors
    /// As [`OpenOptions::from_cframe`].
    pub fn from_cframe(bytes: Vec<u8>) -> Result<SChunk> {
        OpenOptions::new().from_cframe(bytes)
    }
}
