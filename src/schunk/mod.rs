//! Super-chunks: a sequence of chunks with metalayers and vlmetalayers,
//! kept as a Blosc2 frame in one of three storages:
//!
//! * memory: a contiguous frame (cframe) in a `Vec<u8>`;
//! * one file: a cframe on disk, possibly at an offset inside a larger
//!   file (bytes after the frame are never truncated or overwritten: a
//!   frame followed by other bytes is opened read-only for changes unless
//!   [`OpenOptions::discard_trailing`] says those bytes are free);
//! * a directory: a sparse frame (sframe), `chunks.b2frame` plus one
//!   `%08X.chunk` file per stored chunk.
//!
//! ```
//! use oxiblosc::schunk::SChunk;
//! use oxiblosc::{CParams, Codec};
//!
//! let mut sc = SChunk::builder()
//!     .cparams(CParams::default().codec(Codec::Lz4).typesize(4))
//!     .chunksize(4000)
//!     .meta("shape", b"\x91\xcd\x07\xd0")
//!     .build_memory()?;
//! let data: Vec<u8> = (0u32..2000).flat_map(|v| v.to_le_bytes()).collect();
//! for part in data.chunks(4000) {
//!     sc.append_buffer(part)?;
//! }
//! sc.vlmeta_add("author", b"me")?;
//! assert_eq!(sc.nchunks(), 2);
//! assert_eq!(sc.get_slice(10, 20)?, &data[10..20]);
//!
//! // The same bytes C-Blosc2 would read.
//! let cframe = sc.to_cframe()?;
//! let mut back = SChunk::from_cframe(cframe)?;
//! assert_eq!(back.meta_get("shape"), Some(&b"\x91\xcd\x07\xd0"[..]));
//! assert_eq!(back.vlmeta_get("author")?, Some(b"me".to_vec()));
//! # Ok::<(), oxiblosc::Error>(())
//! ```
//!
//! # When data reaches the disk
//!
//! Every change to a file-backed frame (append, insert, update, delete,
//! reorder, vlmetalayer changes, fill) is written in this order:
//!
//! 1. the new chunk bytes, then the new offsets index and the new trailer,
//!    all in bytes the current frame does not use (see *Dead space*
//!    below): the old chunks, index and trailer stay untouched;
//! 2. `fsync` (when [`SChunkBuilder::fsync`] / [`OpenOptions::fsync`] is on,
//!    the default);
//! 3. the header's fixed fields (sizes, flags, frame length) in one write of
//!    at most 87 bytes, the commit point;
//! 4. `fsync` again, then the file is cut back to the frame's end when the
//!    frame owns the end of the file.
//!
//! A write cut at any byte before step 3 leaves the old frame intact (the
//! header still describes it); after step 3 the new frame is complete. The
//! header write is assumed not to tear (it is one small write at the start
//! of the frame, inside one disk sector when the frame starts at a sector
//! boundary). With `fsync` off nothing is synced: the order of writes is
//! the same, but the OS may reach the disk in another order, so only a
//! process crash (not a power cut) is covered. A cut between steps 3 and 4
//! leaves stray bytes after the frame: it opens with the new contents, read
//! only until reopened with [`OpenOptions::discard_trailing`].
//!
//! # Dead space
//!
//! Readers find the index at `header_len + cbytes`, so the chunks section
//! may hold bytes no index entry points at. Crash-safe changes create such
//! bytes (the old index and trailer, replaced chunks); to keep them bounded,
//! each change of a file-backed frame places
//!
//! * each new chunk first-fit in a hole between live chunks, else at the
//!   start of the gap between the last live chunk and the old index, else
//!   after the frame's end (only a chunk larger than every earlier one can
//!   get there, leaving the old gap and index as a hole for later chunks);
//! * the new index and trailer a *reserve* (the largest chunk stored so
//!   far) after the last live chunk when that fits before the old index
//!   (the frame then shrinks and the file is cut after the commit), else
//!   right after the old frame's end, and at least the reserve after the
//!   last chunk.
//!
//! So after every change the gap before the index is at least the reserve
//! (the next chunk fits there) and, for appends, at most the reserve plus
//! the old and the new index+trailer: the index only moves past the old one
//! when the gap left after the new chunks is smaller than the reserve plus
//! the new index. Appending thousands of chunks therefore wastes at most
//! about one chunk and two indexes (tests/frame_space.rs checks it after
//! each of 2000 appends), and every append writes its chunk, the index, the
//! trailer and up to 87 header bytes, nothing more. Holes come from
//! updates, deletes and the rare oversized chunk, and are reused by later
//! chunks that fit. [`SChunk::trim`] drops the reserve, [`SChunk::compact`]
//! every dead byte (e.g. before handing a file over); both are crash-safe.
//! Memory frames work like C-Blosc2 (new chunks over the old index, no
//! reserve); directory frames have no dead space.
//!
//! Directory frames write a new chunk to a fresh `%08X.chunk` file, `fsync`
//! it, then replace `chunks.b2frame` by writing a temporary file and
//! renaming it over the old one (atomic), then remove chunk files no longer
//! referenced. Adding a metalayer (allowed only while there are no chunks)
//! and updating one rewrite the header in place.

use std::borrow::Cow;
use std::fs::{self, File, OpenOptions as FsOpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::chunk::ChunkHeader;
use crate::error::{Error, Result, corrupt, invalid_param};
use crate::frame::{
    self, ChunkEntry, Edition, FileIo, Frame, FrameHeader, FrameIo, FrameKind, Metalayer, Offsets,
    VlMetalayer,
};
use crate::params::{CParams, DParams};
use crate::{Compressor, Decompressor, SpecialValue, special_chunk};

mod space;
use space::Space;

/// Where a change puts the new index and trailer of a file-backed frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tail {
    /// After the last chunk plus the reserve (see the module docs).
    Auto,
    /// Right after the last chunk (no reserve).
    Trim,
    /// At this section offset (compaction; no new chunks).
    At(u64),
}

/// Name of the index file of a directory frame.
pub const SFRAME_INDEX: &str = "chunks.b2frame";

/// Where a super-chunk lives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Storage {
    /// A cframe in memory.
    Memory,
    /// A cframe in a file, starting at `offset`.
    File {
        /// The file.
        path: PathBuf,
        /// Where the frame starts.
        offset: u64,
    },
    /// A sparse frame in a directory.
    Directory(PathBuf),
    /// A cframe behind a caller-supplied [`FrameIo`].
    Custom,
}

/// What `fill_special` fills with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fill<'a> {
    /// Zero bytes.
    Zeros,
    /// NaN floats (type size 4 or 8).
    Nan,
    /// Undefined content (reads as zeros here).
    Uninit,
    /// One item repeated (its length must be the type size).
    Value(&'a [u8]),
}

/// What one chunk is, for listings (`oxiblosc info`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChunkInfo {
    /// Uncompressed bytes.
    pub nbytes: usize,
    /// Stored bytes (0 for chunks only the index records).
    pub cbytes: usize,
    /// Special kind (zeros, NaN, uninit as index codes; repeated value as
    /// a stored special chunk).
    pub special: Option<SpecialValue>,
    /// Offset in the chunks section (cframe) or chunk file id (sframe);
    /// `None` for chunks only the index records.
    pub location: Option<u64>,
}

enum Backend {
    Frame {
        io: Box<dyn FrameIo>,
        storage: Storage,
    },
    Dir(PathBuf),
}

/// A super-chunk. See the [module docs](self).
pub struct SChunk {
    backend: Backend,
    header: FrameHeader,
    metalayers: Vec<Metalayer>,
    vlmetalayers: Vec<VlMetalayer>,
    offsets: Offsets,
    /// Sum of the stored (live) chunk sizes.
    live_cbytes: u64,
    /// Live chunk spans and free space of a file-backed cframe.
    space: Space,
    cparams: CParams,
    dparams: DParams,
    compressor: Compressor,
    decompressor: Decompressor,
    fsync: bool,
    /// Changes allowed (current edition; the frame owns the end of its file).
    writable: std::result::Result<(), String>,
}

impl std::fmt::Debug for SChunk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SChunk")
            .field("storage", &self.storage())
            .field("nchunks", &self.nchunks())
            .field("nbytes", &self.nbytes())
            .field("header", &self.header)
            .finish_non_exhaustive()
    }
}

/// Builds a new, empty super-chunk.
#[derive(Clone, Debug)]
pub struct SChunkBuilder {
    cparams: CParams,
    dparams: DParams,
    chunksize: Option<usize>,
    meta: Vec<Metalayer>,
    fsync: bool,
}

impl Default for SChunkBuilder {
    fn default() -> Self {
        SChunkBuilder {
            cparams: CParams::default(),
            dparams: DParams::default(),
            chunksize: None,
            meta: Vec::new(),
            fsync: true,
        }
    }
}

impl SChunkBuilder {
    /// Compression parameters for [`SChunk::append_buffer`] and friends;
    /// their `nthreads` is written as the frame's `tcomp`.
    pub fn cparams(mut self, p: CParams) -> Self {
        self.cparams = p;
        self
    }
    /// Decompression parameters; their `nthreads` is written as `tdecomp`.
    pub fn dparams(mut self, p: DParams) -> Self {
        self.dparams = p;
        self
    }
    /// The size of every chunk but the last (otherwise the first chunk
    /// sets it).
    pub fn chunksize(mut self, n: usize) -> Self {
        self.chunksize = Some(n);
        self
    }
    /// Add a metalayer (at most 16, names up to 31 bytes).
    pub fn meta(mut self, name: &str, content: &[u8]) -> Self {
        self.meta.push(Metalayer {
            name: name.to_string(),
            content: content.to_vec(),
        });
        self
    }
    /// `fsync` file storages at each change (default on).
    pub fn fsync(mut self, on: bool) -> Self {
        self.fsync = on;
        self
    }

    fn empty_frame(&self, kind: FrameKind) -> Result<(FrameHeader, Vec<u8>)> {
        self.cparams.validate()?;
        let cs = match self.chunksize {
            None => -1,
            Some(n) => i32::try_from(n)
                .ok()
                .filter(|&n| n > 0)
                .ok_or_else(|| invalid_param(format!("chunksize {n}")))?,
        };
        let mut names: Vec<&str> = self.meta.iter().map(|m| m.name.as_str()).collect();
        names.sort_unstable();
        if names.windows(2).any(|w| w[0] == w[1]) {
            return Err(invalid_param("duplicate metalayer name"));
        }
        let mut h = FrameHeader::new(kind, &self.cparams, self.dparams.nthreads, cs);
        let mut bytes = frame::encode_header(&mut h, &self.meta)?;
        let trailer = frame::encode_trailer(&[])?;
        h.frame_len = (bytes.len() + trailer.len()) as u64;
        bytes[..frame::HEADER_FIXED_LEN].copy_from_slice(&h.encode_fixed());
        bytes.extend_from_slice(&trailer);
        Ok((h, bytes))
    }

    fn finish(self, backend: Backend, header: FrameHeader) -> SChunk {
        SChunk {
            backend,
            header,
            metalayers: self.meta,
            vlmetalayers: Vec::new(),
            offsets: Offsets::Explicit(Vec::new()),
            live_cbytes: 0,
            space: Space::default(),
            compressor: Compressor::new(self.cparams.clone()),
            decompressor: Decompressor::new(self.dparams.clone()),
            cparams: self.cparams,
            dparams: self.dparams,
            fsync: self.fsync,
            writable: Ok(()),
        }
    }

    /// An empty super-chunk in memory.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] for bad parameters or metalayers.
    pub fn build_memory(self) -> Result<SChunk> {
        let (h, bytes) = self.empty_frame(FrameKind::Contiguous)?;
        let backend = Backend::Frame {
            io: Box::new(bytes),
            storage: Storage::Memory,
        };
        Ok(self.finish(backend, h))
    }

    /// An empty super-chunk behind a caller-supplied [`FrameIo`] (written
    /// at its position 0).
    ///
    /// # Errors
    /// As [`SChunkBuilder::build_memory`], plus I/O errors.
    pub fn build_io(self, mut io: Box<dyn FrameIo>) -> Result<SChunk> {
        let (h, bytes) = self.empty_frame(FrameKind::Contiguous)?;
        io.write_all_at(0, &bytes)?;
        io.set_len(bytes.len() as u64)?;
        io.sync()?;
        let backend = Backend::Frame {
            io,
            storage: Storage::Custom,
        };
        Ok(self.finish(backend, h))
    }

    /// A new file holding an empty cframe; fails if `path` exists.
    ///
    /// # Errors
    /// As [`SChunkBuilder::build_memory`], plus I/O errors.
    pub fn create_file(self, path: impl AsRef<Path>) -> Result<SChunk> {
        let path = path.as_ref();
        let file = FsOpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(path)?;
        self.write_new_file(file, path, 0)
    }

    /// An empty cframe appended at the end of an existing file (the bytes
    /// before it are kept); [`SChunk::storage`] tells its offset.
    ///
    /// # Errors
    /// As [`SChunkBuilder::create_file`].
    pub fn append_to_file(self, path: impl AsRef<Path>) -> Result<SChunk> {
        let path = path.as_ref();
        let file = FsOpenOptions::new().read(true).write(true).open(path)?;
        let offset = file.metadata()?.len();
        self.write_new_file(file, path, offset)
    }

    fn write_new_file(self, file: File, path: &Path, offset: u64) -> Result<SChunk> {
        let (h, bytes) = self.empty_frame(FrameKind::Contiguous)?;
        let mut io = FileIo::new(file, offset);
        io.write_all_at(0, &bytes)?;
        if self.fsync {
            io.sync()?;
        }
        let backend = Backend::Frame {
            io: Box::new(io),
            storage: Storage::File {
                path: path.to_path_buf(),
                offset,
            },
        };
        Ok(self.finish(backend, h))
    }

    /// A new directory holding an empty sparse frame; fails if `path` exists.
    ///
    /// # Errors
    /// As [`SChunkBuilder::build_memory`], plus I/O errors.
    pub fn create_dir(self, path: impl AsRef<Path>) -> Result<SChunk> {
        let path = path.as_ref();
        let (h, bytes) = self.empty_frame(FrameKind::Sparse)?;
        fs::create_dir(path)?;
        write_replace(&path.join(SFRAME_INDEX), &bytes, self.fsync)?;
        let backend = Backend::Dir(path.to_path_buf());
        Ok(self.finish(backend, h))
    }
}

/// How to open an existing super-chunk.
#[derive(Clone, Debug, Default)]
pub struct OpenOptions {
    offset: u64,
    nthreads_comp: Option<usize>,
    nthreads_decomp: Option<usize>,
    read_only: bool,
    discard_trailing: bool,
    no_fsync: bool,
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
    /// `fsync` at each change (default on).
    pub fn fsync(mut self, on: bool) -> Self {
        self.no_fsync = !on;
        self
    }

    /// Open a file (cframe) or directory (sframe).
    ///
    /// # Errors
    /// I/O errors and every frame check of [`Frame::read`].
    pub fn open(&self, path: impl AsRef<Path>) -> Result<SChunk> {
        let path = path.as_ref();
        if fs::metadata(path)?.is_dir() {
            let index = fs::read(path.join(SFRAME_INDEX))?;
            let f = Frame::read(&mut frame::io::SliceIo(&index), Some(FrameKind::Sparse))?;
            let trailing = index.len() as u64 - f.header.frame_len;
            let mut sc = self.assemble(Backend::Dir(path.to_path_buf()), f)?;
            if trailing != 0 {
                sc.writable = Err(format!("{trailing} stray bytes after {SFRAME_INDEX}"));
            }
            if self.read_only && sc.writable.is_ok() {
                sc.writable = Err("opened read-only".into());
            }
            sc.live_cbytes = sc.scan_live_cbytes()?;
            return Ok(sc);
        }
        let file = if self.read_only {
            File::open(path)?
        } else {
            match FsOpenOptions::new().read(true).write(true).open(path) {
                Ok(f) => f,
                Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => File::open(path)?,
                Err(e) => return Err(e.into()),
            }
        };
        let mut io = FileIo::new(file, self.offset);
        let f = Frame::read(&mut io, Some(FrameKind::Contiguous))?;
        let after = io.storage_len()? - f.header.frame_len;
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
        sc.live_cbytes = sc.scan_live_cbytes()?;
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
                io: Box::new(bytes),
                storage: Storage::Memory,
            },
            f,
        )?;
        if self.read_only && sc.writable.is_ok() {
            sc.writable = Err("opened read-only".into());
        }
        sc.live_cbytes = sc.scan_live_cbytes()?;
        Ok(sc)
    }

    /// Open a cframe behind a caller-supplied [`FrameIo`] (bytes after the
    /// frame are left alone unless [`OpenOptions::discard_trailing`]).
    ///
    /// # Errors
    /// As [`OpenOptions::open`].
    pub fn open_io(&self, mut io: Box<dyn FrameIo>) -> Result<SChunk> {
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
        sc.live_cbytes = sc.scan_live_cbytes()?;
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
        })
    }
}

/// Write `bytes` to `path` through a temporary file and a rename.
fn write_replace(path: &Path, bytes: &[u8], sync: bool) -> Result<()> {
    let tmp = path.with_extension("b2frame.tmp");
    {
        let mut f = File::create(&tmp)?;
        f.write_all(bytes)?;
        if sync {
            f.sync_all()?;
        }
    }
    fs::rename(&tmp, path)?;
    if sync && let Some(dir) = path.parent() {
        // Make the rename durable; not every platform can open a directory.
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
    }
    Ok(())
}

fn chunk_file(dir: &Path, id: u64) -> PathBuf {
    dir.join(format!("{id:08X}.chunk"))
}

/// Read a chunk file: a regular file (no symlink), 32 bytes or more, whose
/// size is its header's cbytes.
fn read_chunk_file(dir: &Path, id: u64) -> Result<Vec<u8>> {
    let p = chunk_file(dir, id);
    let md = fs::symlink_metadata(&p)?;
    if !md.file_type().is_file() {
        return Err(corrupt(format!("{} is not a regular file", p.display())));
    }
    if md.len() < 32 || md.len() > i32::MAX as u64 {
        return Err(corrupt(format!("{}: {} bytes", p.display(), md.len())));
    }
    let bytes = fs::read(&p)?;
    Ok(bytes)
}

impl SChunk {
    /// A builder for a new super-chunk.
    pub fn builder() -> SChunkBuilder {
        SChunkBuilder::default()
    }

    /// An empty in-memory super-chunk compressing with `cparams`.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] for bad parameters.
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

    /// The whole super-chunk as one contiguous frame (a copy; for a
    /// directory frame, a compact cframe of its chunks).
    ///
    /// # Errors
    /// I/O errors.
    pub fn to_cframe(&mut self) -> Result<Vec<u8>> {
        match &mut self.backend {
            Backend::Frame { io, .. } => {
                let mut v = vec![0u8; self.header.frame_len as usize];
                io.read_exact_at(0, &mut v)?;
                Ok(v)
            }
            Backend::Dir(dir) => {
                let dir = dir.clone();
                let mut section = Vec::new();
                let n = self.offsets.len();
                let mut offs = Vec::with_capacity(n.min(1 << 20));
                let mut held = 0u64;
                for i in 0..n {
                    match self.entry(i)? {
                        ChunkEntry::Special(_) => offs.push(self.offsets.get(i).unwrap_or(0)),
                        ChunkEntry::Stored(id) => {
                            // Checked as a reader checks it: a corrupt chunk
                            // file is an error here, not a frame that does
                            // not reopen.
                            let bytes = read_chunk_file(&dir, id)?;
                            frame::check_stored_chunk(&self.header, n, &bytes, i)?;
                            held += ChunkHeader::parse(&bytes)?.nbytes as u64;
                            offs.push(section.len() as i64);
                            section.extend_from_slice(&bytes);
                        }
                    }
                }
                if self.header.chunksize == 0 && held != self.header.nbytes as u64 {
                    return Err(corrupt(format!(
                        "the chunks hold {held} bytes, the header says {}",
                        self.header.nbytes
                    )));
                }
                let mut h = self.header.clone();
                h.kind = FrameKind::Contiguous;
                h.cbytes = section.len() as i64;
                let mut out = frame::encode_header(&mut h, &self.metalayers)?;
                out.extend_from_slice(&section);
                if !offs.is_empty() {
                    out.extend_from_slice(&encode_offsets(&Offsets::Explicit(offs))?);
                }
                out.extend_from_slice(&frame::encode_trailer(&self.vlmetalayers)?);
                h.frame_len = out.len() as u64;
                out[..frame::HEADER_FIXED_LEN].copy_from_slice(&h.encode_fixed());
                // The frame must open as written (index, sizes, trailer).
                Frame::parse(&out)?;
                Ok(out)
            }
        }
    }

    /// Where the super-chunk lives.
    pub fn storage(&self) -> Storage {
        match &self.backend {
            Backend::Frame { storage, .. } => storage.clone(),
            Backend::Dir(p) => Storage::Directory(p.clone()),
        }
    }

    /// The frame header as last written (for listings).
    pub fn frame_header(&self) -> &FrameHeader {
        &self.header
    }

    /// The compression parameters in use.
    pub fn cparams(&self) -> &CParams {
        &self.cparams
    }
    /// The decompression parameters in use.
    pub fn dparams(&self) -> &DParams {
        &self.dparams
    }
    /// Use other compression parameters from now on (their `nthreads` is
    /// written as `tcomp` at the next change).
    ///
    /// # Errors
    /// [`Error::InvalidParam`] for bad parameters.
    pub fn set_cparams(&mut self, p: CParams) -> Result<()> {
        p.validate()?;
        self.compressor = Compressor::new(p.clone());
        self.cparams = p;
        Ok(())
    }
    /// Use other decompression parameters from now on.
    pub fn set_dparams(&mut self, p: DParams) {
        self.decompressor = Decompressor::new(p.clone());
        self.dparams = p;
    }

    /// Number of chunks.
    pub fn nchunks(&self) -> usize {
        self.offsets.len()
    }
    /// Uncompressed bytes of all chunks.
    pub fn nbytes(&self) -> u64 {
        self.header.nbytes as u64
    }
    /// Stored bytes of all chunks (special chunks the index records count 0;
    /// dead bytes of a frame are not counted).
    pub fn cbytes(&self) -> u64 {
        self.live_cbytes
    }
    /// `nbytes / cbytes` (0 when empty; infinite ratios as `f64::INFINITY`).
    pub fn cratio(&self) -> f64 {
        if self.nbytes() == 0 {
            0.0
        } else {
            self.nbytes() as f64 / self.cbytes() as f64
        }
    }
    /// The size of every chunk but the last; `None` when variable or not
    /// set yet.
    pub fn chunksize(&self) -> Option<usize> {
        usize::try_from(self.header.chunksize)
            .ok()
            .filter(|&c| c > 0)
    }
    /// The requested block size (0 = automatic).
    pub fn blocksize(&self) -> usize {
        usize::try_from(self.header.blocksize).unwrap_or(0)
    }
    /// The item size.
    pub fn typesize(&self) -> usize {
        usize::try_from(self.header.typesize).unwrap_or(1)
    }

    /// Whether changes are allowed, and why not.
    ///
    /// # Errors
    /// [`Error::Unsupported`] saying why the super-chunk is read-only.
    pub fn check_writable(&self) -> Result<()> {
        self.writable.clone().map_err(Error::Unsupported)
    }

    fn entry(&self, i: usize) -> Result<ChunkEntry> {
        let v = self
            .offsets
            .get(i)
            .ok_or_else(|| invalid_param(format!("chunk {i} of {}", self.nchunks())))?;
        ChunkEntry::from_raw(v)
    }

    fn expected_nbytes(&self, i: usize) -> Option<usize> {
        frame::expected_nbytes(self.header.nbytes, self.header.chunksize, self.nchunks(), i)
    }

    /// Sum of the stored chunk sizes; for a cframe of variable-size chunks
    /// also checks that the chunks' sizes add up to the header's nbytes.
    fn scan_live_cbytes(&mut self) -> Result<u64> {
        let mut total = 0u64;
        let mut nbytes = 0u64;
        let variable = self.header.chunksize == 0;
        let mut spans = Vec::new();
        if let Offsets::Repeated { value, .. } = self.offsets
            && let ChunkEntry::Stored(loc) = ChunkEntry::from_raw(value)?
        {
            spans.push((loc, self.stored_len(loc)?));
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
                            let len = self.stored_len(loc)?;
                            total += len;
                            spans.push((loc, len));
                            let mut nb = 0;
                            if variable && let Backend::Frame { io, .. } = &mut self.backend {
                                let mut b = [0u8; 4];
                                let at = u64::from(self.header.header_len) + loc + 4;
                                io.read_exact_at(at, &mut b)?;
                                nb = u64::from(u32::from_le_bytes(b));
                            }
                            seen.insert(loc, nb);
                            nb
                        }
                    };
                    nbytes = nbytes.saturating_add(chunk_nbytes);
                }
            }
        }
        if variable
            && matches!(self.backend, Backend::Frame { .. })
            && nbytes != self.header.nbytes as u64
        {
            return Err(corrupt(format!(
                "chunks hold {nbytes} bytes, the header says {}",
                self.header.nbytes
            )));
        }
        if matches!(self.backend, Backend::Frame { .. }) {
            self.space = Space::build(spans);
        }
        Ok(total)
    }

    fn stored_len(&mut self, loc: u64) -> Result<u64> {
        match &mut self.backend {
            Backend::Frame { io, .. } => Ok(self.header.chunk_span(io.as_mut(), loc)?.1),
            Backend::Dir(dir) => {
                let p = chunk_file(dir, loc);
                Ok(fs::symlink_metadata(&p)
                    .map_err(|e| corrupt(format!("{}: {e}", p.display())))?
                    .len())
            }
        }
    }

    /// The compressed chunk `i`: borrowed from an in-memory frame, read
    /// from disk (only its bytes) otherwise; special index entries are
    /// materialised as header-only chunks.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] for `i` out of range; corrupt-frame errors.
    pub fn get_chunk(&mut self, i: usize) -> Result<Cow<'_, [u8]>> {
        let entry = self.entry(i)?;
        let expected = self.expected_nbytes(i);
        let nchunks = self.nchunks();
        load_chunk(&mut self.backend, &self.header, nchunks, entry, expected, i)
    }

    /// Uncompressed size of chunk `i`.
    ///
    /// # Errors
    /// As [`SChunk::get_chunk`].
    pub fn chunk_nbytes(&mut self, i: usize) -> Result<usize> {
        if let Some(n) = self.expected_nbytes(i) {
            return Ok(n);
        }
        let c = self.get_chunk(i)?;
        Ok(ChunkHeader::parse(&c)?.nbytes)
    }

    /// What chunk `i` is (sizes, special kind, location).
    ///
    /// # Errors
    /// As [`SChunk::get_chunk`].
    pub fn chunk_info(&mut self, i: usize) -> Result<ChunkInfo> {
        let entry = self.entry(i)?;
        let c = self.get_chunk(i)?;
        let h = ChunkHeader::parse(&c)?;
        Ok(match entry {
            ChunkEntry::Special(k) => ChunkInfo {
                nbytes: h.nbytes,
                cbytes: 0,
                special: Some(k),
                location: None,
            },
            ChunkEntry::Stored(loc) => ChunkInfo {
                nbytes: h.nbytes,
                cbytes: h.cbytes,
                special: h.special(),
                location: Some(loc),
            },
        })
    }

    /// Decompress chunk `i` into `dst` (at least its size); returns the
    /// bytes written.
    ///
    /// # Errors
    /// As [`SChunk::get_chunk`], plus [`Error::DstTooSmall`].
    pub fn decompress_chunk(&mut self, i: usize, dst: &mut [u8]) -> Result<usize> {
        let entry = self.entry(i)?;
        let expected = self.expected_nbytes(i);
        let nchunks = self.nchunks();
        // Borrowed from an in-memory frame while the decompressor runs: no
        // copy of the compressed chunk.
        let chunk = load_chunk(&mut self.backend, &self.header, nchunks, entry, expected, i)?;
        let n = self.decompressor.decompress_into(&chunk, dst)?;
        let h = ChunkHeader::parse(&chunk)?;
        if n != h.nbytes {
            return Err(corrupt(format!(
                "chunk {i} decompressed to {n} of {} bytes",
                h.nbytes
            )));
        }
        Ok(n)
    }

    /// Chunk `i` decompressed into a new buffer.
    ///
    /// # Errors
    /// As [`SChunk::decompress_chunk`].
    pub fn decompress_chunk_vec(&mut self, i: usize) -> Result<Vec<u8>> {
        let chunk = self.get_chunk(i)?.into_owned();
        self.decompressor.decompress(&chunk)
    }

    // ------------------------------------------------------------------
    // Metalayers

    /// The metalayers, in stored order.
    pub fn metalayers(&self) -> &[Metalayer] {
        &self.metalayers
    }
    /// The content of metalayer `name`.
    pub fn meta_get(&self, name: &str) -> Option<&[u8]> {
        self.metalayers
            .iter()
            .find(|m| m.name == name)
            .map(|m| m.content.as_slice())
    }
    /// Whether metalayer `name` exists.
    pub fn meta_exists(&self, name: &str) -> bool {
        self.meta_get(name).is_some()
    }

    /// Add a metalayer; only while the super-chunk has no chunks (the
    /// header grows). At most 16, names up to 31 bytes.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] when there are chunks, the name exists, or a
    /// limit is hit.
    pub fn meta_add(&mut self, name: &str, content: &[u8]) -> Result<()> {
        self.check_writable()?;
        frame::check_name(name)?;
        if self.meta_exists(name) {
            return Err(invalid_param(format!("metalayer {name:?} exists")));
        }
        if self.nchunks() != 0 {
            return Err(invalid_param(
                "metalayers can only be added before any chunk",
            ));
        }
        let mut metas = self.metalayers.clone();
        metas.push(Metalayer {
            name: name.to_string(),
            content: content.to_vec(),
        });
        self.rewrite_empty(metas)
    }

    /// Overwrite metalayer `name` in place. As in C-Blosc2 the new content
    /// may not be longer than the old; a shorter one overwrites the first
    /// bytes and the stored length stays (the old tail remains).
    ///
    /// # Errors
    /// [`Error::InvalidParam`] for an unknown name or longer content.
    pub fn meta_update(&mut self, name: &str, content: &[u8]) -> Result<()> {
        self.check_writable()?;
        let mut metas = self.metalayers.clone();
        let m = metas
            .iter_mut()
            .find(|m| m.name == name)
            .ok_or_else(|| invalid_param(format!("no metalayer {name:?}")))?;
        if content.len() > m.content.len() {
            return Err(invalid_param(format!(
                "metalayer {name:?}: {} bytes do not fit its {}",
                content.len(),
                m.content.len()
            )));
        }
        m.content[..content.len()].copy_from_slice(content);
        let mut h = self.header.clone();
        let bytes = frame::encode_header(&mut h, &metas)?;
        if h.header_len != self.header.header_len {
            return Err(corrupt("metalayer update changed the header length"));
        }
        self.write_header_region(&bytes)?;
        self.metalayers = metas;
        Ok(())
    }

    fn write_header_region(&mut self, bytes: &[u8]) -> Result<()> {
        let fsync = self.fsync;
        match &mut self.backend {
            Backend::Frame { io, .. } => {
                io.write_all_at(0, bytes)?;
                if fsync {
                    io.sync()?;
                }
            }
            Backend::Dir(dir) => {
                let p = dir.join(SFRAME_INDEX);
                let mut all = fs::read(&p)?;
                if all.len() < bytes.len() {
                    return Err(corrupt("index file shorter than its header"));
                }
                all[..bytes.len()].copy_from_slice(bytes);
                write_replace(&p, &all, fsync)?;
            }
        }
        Ok(())
    }

    /// Rewrite an empty frame with other metalayers.
    fn rewrite_empty(&mut self, metas: Vec<Metalayer>) -> Result<()> {
        let mut h = self.header.clone();
        h.nbytes = 0;
        h.cbytes = 0;
        self.stamp(&mut h);
        let mut bytes = frame::encode_header(&mut h, &metas)?;
        let trailer = frame::encode_trailer(&self.vlmetalayers)?;
        h.frame_len = (bytes.len() + trailer.len()) as u64;
        bytes[..frame::HEADER_FIXED_LEN].copy_from_slice(&h.encode_fixed());
        bytes.extend_from_slice(&trailer);
        let fsync = self.fsync;
        match &mut self.backend {
            Backend::Frame { io, .. } => {
                io.write_all_at(0, &bytes)?;
                io.set_len(bytes.len() as u64)?;
                if fsync {
                    io.sync()?;
                }
            }
            Backend::Dir(dir) => write_replace(&dir.join(SFRAME_INDEX), &bytes, fsync)?,
        }
        self.header = h;
        self.metalayers = metas;
        self.offsets = Offsets::Explicit(Vec::new());
        self.space = Space::default();
        Ok(())
    }

    // ------------------------------------------------------------------
    // Vlmetalayers

    /// The vlmetalayers (stored compressed), in stored order.
    pub fn vlmetalayers(&self) -> &[VlMetalayer] {
        &self.vlmetalayers
    }
    /// Names of the vlmetalayers.
    pub fn vlmeta_names(&self) -> Vec<&str> {
        self.vlmetalayers.iter().map(|m| m.name.as_str()).collect()
    }
    /// The value of vlmetalayer `name`, decompressed.
    ///
    /// # Errors
    /// The chunk decoder's errors for a corrupt value.
    pub fn vlmeta_get(&mut self, name: &str) -> Result<Option<Vec<u8>>> {
        let Some(m) = self.vlmetalayers.iter().find(|m| m.name == name) else {
            return Ok(None);
        };
        let h = ChunkHeader::parse(&m.chunk)?;
        if h.cbytes != m.chunk.len() {
            return Err(corrupt(format!(
                "vlmetalayer {name:?}: chunk size mismatch"
            )));
        }
        let limit = frame::decode_limit(h.cbytes as u64);
        if h.nbytes > limit {
            return Err(corrupt(format!(
                "vlmetalayer {name:?} declares {} bytes, over the decode limit {limit}",
                h.nbytes
            )));
        }
        self.decompressor.decompress(&m.chunk).map(Some)
    }

    fn vl_chunk(&self, value: &[u8]) -> Result<Vec<u8>> {
        // C-Blosc2's defaults (BLOSC2_CPARAMS_DEFAULTS), as blosc2_vlmeta_add uses.
        let p = CParams::default().nthreads(self.cparams.nthreads);
        crate::compress(value, &p)
    }

    /// Add vlmetalayer `name` (the value is stored compressed).
    ///
    /// # Errors
    /// [`Error::InvalidParam`] if it exists or a limit is hit.
    pub fn vlmeta_add(&mut self, name: &str, value: &[u8]) -> Result<()> {
        self.check_writable()?;
        frame::check_name(name)?;
        if self.vlmetalayers.iter().any(|m| m.name == name) {
            return Err(invalid_param(format!("vlmetalayer {name:?} exists")));
        }
        let mut vl = self.vlmetalayers.clone();
        vl.push(VlMetalayer {
            name: name.to_string(),
            chunk: self.vl_chunk(value)?,
        });
        self.commit(
            self.header.clone(),
            Vec::new(),
            |_| Ok(None),
            Some(vl),
            Vec::new(),
            Tail::Auto,
        )
    }

    /// Add vlmetalayer `name` from an already compressed chunk (stored as
    /// is; for copying vlmetalayers between frames).
    ///
    /// # Errors
    /// As [`SChunk::vlmeta_add`], plus a malformed chunk.
    pub fn vlmeta_add_chunk(&mut self, name: &str, chunk: &[u8]) -> Result<()> {
        self.check_writable()?;
        frame::check_name(name)?;
        let h = ChunkHeader::parse(chunk)?;
        if h.cbytes != chunk.len() {
            return Err(invalid_param("vlmetalayer chunk size mismatch"));
        }
        if self.vlmetalayers.iter().any(|m| m.name == name) {
            return Err(invalid_param(format!("vlmetalayer {name:?} exists")));
        }
        let mut vl = self.vlmetalayers.clone();
        vl.push(VlMetalayer {
            name: name.to_string(),
            chunk: chunk.to_vec(),
        });
        self.commit(
            self.header.clone(),
            Vec::new(),
            |_| Ok(None),
            Some(vl),
            Vec::new(),
            Tail::Auto,
        )
    }

    /// Replace the value of vlmetalayer `name`.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] if it does not exist.
    pub fn vlmeta_update(&mut self, name: &str, value: &[u8]) -> Result<()> {
        self.check_writable()?;
        let chunk = self.vl_chunk(value)?;
        let mut vl = self.vlmetalayers.clone();
        let m = vl
            .iter_mut()
            .find(|m| m.name == name)
            .ok_or_else(|| invalid_param(format!("no vlmetalayer {name:?}")))?;
        m.chunk = chunk;
        self.commit(
            self.header.clone(),
            Vec::new(),
            |_| Ok(None),
            Some(vl),
            Vec::new(),
            Tail::Auto,
        )
    }

    /// Add or replace vlmetalayer `name`.
    ///
    /// # Errors
    /// As [`SChunk::vlmeta_add`].
    pub fn vlmeta_set(&mut self, name: &str, value: &[u8]) -> Result<()> {
        if self.vlmetalayers.iter().any(|m| m.name == name) {
            self.vlmeta_update(name, value)
        } else {
            self.vlmeta_add(name, value)
        }
    }

    /// Delete vlmetalayer `name`; the later ones move down.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] if it does not exist.
    pub fn vlmeta_delete(&mut self, name: &str) -> Result<()> {
        self.check_writable()?;
        let mut vl = self.vlmetalayers.clone();
        let i = vl
            .iter()
            .position(|m| m.name == name)
            .ok_or_else(|| invalid_param(format!("no vlmetalayer {name:?}")))?;
        vl.remove(i);
        self.commit(
            self.header.clone(),
            Vec::new(),
            |_| Ok(None),
            Some(vl),
            Vec::new(),
            Tail::Auto,
        )
    }

    // ------------------------------------------------------------------
    // Chunks

    /// Compress `src` with the super-chunk's parameters and append it.
    /// Returns the new number of chunks.
    ///
    /// # Errors
    /// Compression errors and those of [`SChunk::append_chunk`].
    pub fn append_buffer(&mut self, src: &[u8]) -> Result<usize> {
        self.check_writable()?;
        let chunk = self.compressor.compress(src)?;
        self.append_chunk(&chunk)
    }

    /// Append a compressed chunk (copied). Zeros, NaN and uninit chunks
    /// become index codes when the chunk size is fixed. Returns the new
    /// number of chunks.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] for a malformed or empty chunk, or one that
    /// mixes VL-block and regular chunks.
    pub fn append_chunk(&mut self, chunk: &[u8]) -> Result<usize> {
        let n = self.nchunks();
        self.insert_chunk(n, chunk)?;
        Ok(self.nchunks())
    }

    fn check_new_chunk(&self, chunk: &[u8]) -> Result<ChunkHeader> {
        let h = ChunkHeader::parse(chunk)?;
        if h.cbytes != chunk.len() {
            return Err(invalid_param(format!(
                "chunk declares {} bytes but {} were given",
                h.cbytes,
                chunk.len()
            )));
        }
        if h.is_lazy() {
            return Err(invalid_param("lazy chunks cannot be stored"));
        }
        if h.nbytes == 0 {
            return Err(invalid_param("empty chunks cannot be stored in a frame"));
        }
        if !h.is_extended() {
            return Err(invalid_param("frames hold Blosc2 chunks (32-byte header)"));
        }
        let vl = self.header.general_flags & frame::GFLAG_VLBLOCKS != 0;
        if self.nchunks() > 0 && vl != h.is_vlblocks() {
            return Err(invalid_param("cannot mix VL-block and regular chunks"));
        }
        Ok(h)
    }

    /// Insert a compressed chunk at position `i` (0..=nchunks).
    ///
    /// # Errors
    /// As [`SChunk::append_chunk`], plus `i` out of range.
    pub fn insert_chunk(&mut self, i: usize, chunk: &[u8]) -> Result<()> {
        self.check_writable()?;
        let n = self.nchunks();
        if i > n {
            return Err(invalid_param(format!("insert at {i} of {n} chunks")));
        }
        let ch = self.check_new_chunk(chunk)?;
        let cs = self.header.chunksize;
        let last_short = n > 0 && cs > 0 && self.expected_nbytes(n - 1) != Some(cs as usize);
        let new_cs = if n == 0 && cs <= 0 && self.header.chunksize != 0 || n == 0 && cs == -1 {
            if ch.is_vlblocks() {
                0
            } else {
                i32::try_from(ch.nbytes).unwrap_or(0)
            }
        } else if cs > 0 {
            let nb = ch.nbytes as u64;
            if ch.is_vlblocks()
                || nb > cs as u64
                || (i == n && last_short)
                || (i < n && nb != cs as u64)
            {
                0
            } else {
                cs
            }
        } else {
            0
        };
        let nbytes = self
            .header
            .nbytes
            .checked_add(ch.nbytes as i64)
            .ok_or_else(|| invalid_param("nbytes overflows"))?;
        self.change_chunks(new_cs, nbytes, ch.is_vlblocks(), |offs, place| {
            let e = place(chunk, &ch)?;
            offs.insert(i, e);
            Ok(Vec::new())
        })
    }

    /// Replace chunk `i`.
    ///
    /// # Errors
    /// As [`SChunk::append_chunk`], plus `i` out of range.
    pub fn update_chunk(&mut self, i: usize, chunk: &[u8]) -> Result<()> {
        self.check_writable()?;
        let n = self.nchunks();
        if i >= n {
            return Err(invalid_param(format!("update of chunk {i} of {n}")));
        }
        let ch = self.check_new_chunk(chunk)?;
        let old_n = self.chunk_nbytes(i)?;
        let cs = self.header.chunksize;
        let new_cs = if cs > 0 {
            let nb = ch.nbytes as u64;
            if ch.is_vlblocks() || nb > cs as u64 || (i + 1 < n && nb != cs as u64) {
                0
            } else {
                cs
            }
        } else {
            0
        };
        let nbytes = self.header.nbytes - old_n as i64 + ch.nbytes as i64;
        let old = self.offsets.get(i).unwrap_or(0);
        self.change_chunks(new_cs, nbytes, ch.is_vlblocks(), |offs, place| {
            let e = place(chunk, &ch)?;
            offs[i] = e;
            Ok(vec![old])
        })
    }

    /// Delete chunk `i`.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] for `i` out of range.
    pub fn delete_chunk(&mut self, i: usize) -> Result<()> {
        self.check_writable()?;
        let n = self.nchunks();
        if i >= n {
            return Err(invalid_param(format!("delete of chunk {i} of {n}")));
        }
        let old_n = self.chunk_nbytes(i)?;
        let cs = self.header.chunksize;
        let last_short = cs > 0 && self.expected_nbytes(n - 1) != Some(cs as usize);
        let new_cs = if cs > 0 && last_short && i + 1 < n {
            0
        } else {
            cs
        };
        let nbytes = self.header.nbytes - old_n as i64;
        let vl = self.header.general_flags & frame::GFLAG_VLBLOCKS != 0 && n > 1;
        let old = self.offsets.get(i).unwrap_or(0);
        self.change_chunks(new_cs, nbytes, vl, |offs, _| {
            offs.remove(i);
            Ok(vec![old])
        })
    }

    /// Reorder: chunk `i` becomes the old chunk `order[i]`. `order` must be
    /// a permutation of `0..nchunks`.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] when it is not.
    pub fn reorder_chunks(&mut self, order: &[usize]) -> Result<()> {
        self.check_writable()?;
        let n = self.nchunks();
        if order.len() != n {
            return Err(invalid_param("order must list every chunk once"));
        }
        let mut seen = vec![false; n];
        for &o in order {
            if o >= n || std::mem::replace(&mut seen[o], true) {
                return Err(invalid_param("order is not a permutation"));
            }
        }
        let cs = self.header.chunksize;
        let last_short = n > 0 && cs > 0 && self.expected_nbytes(n - 1) != Some(cs as usize);
        let new_cs = if last_short && order[n - 1] != n - 1 {
            0
        } else {
            cs
        };
        let nbytes = self.header.nbytes;
        let vl = self.header.general_flags & frame::GFLAG_VLBLOCKS != 0;
        let order = order.to_vec();
        self.change_chunks(new_cs, nbytes, vl, move |offs, _| {
            let old = offs.clone();
            for (i, &o) in order.iter().enumerate() {
                offs[i] = old[o];
            }
            Ok(Vec::new())
        })
    }

    /// Fill an empty super-chunk with `nitems` items of a special value in
    /// chunks of `chunksize` bytes. Zeros, NaN and uninit are recorded in
    /// the index only (as C-Blosc2 does); a repeated value is stored as one
    /// small chunk per chunk.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] when there are chunks already, sizes do not
    /// fit the type size, or NaN with a type size other than 4 or 8.
    pub fn fill_special(&mut self, nitems: u64, fill: Fill<'_>, chunksize: usize) -> Result<()> {
        self.check_writable()?;
        if self.nchunks() != 0 {
            return Err(invalid_param("fill_special needs an empty super-chunk"));
        }
        let ts = self.typesize() as u64;
        let nbytes = nitems
            .checked_mul(ts)
            .filter(|&n| n <= i64::MAX as u64)
            .ok_or_else(|| invalid_param("nitems * typesize overflows"))?;
        let cs = i32::try_from(chunksize)
            .ok()
            .filter(|&c| c > 0 && (chunksize as u64).is_multiple_of(ts))
            .ok_or_else(|| invalid_param(format!("chunksize {chunksize}")))?;
        if nbytes == 0 {
            return Ok(());
        }
        let nchunks = usize::try_from(nbytes.div_ceil(chunksize as u64))
            .ok()
            .filter(|&n| n <= frame::MAX_NCHUNKS)
            .ok_or_else(|| invalid_param("too many chunks"))?;
        let last = (nbytes - (nchunks as u64 - 1) * chunksize as u64) as usize;
        let kind = match fill {
            Fill::Zeros => SpecialValue::Zeros,
            Fill::Nan => SpecialValue::Nan,
            Fill::Uninit => SpecialValue::Uninit,
            Fill::Value(v) => {
                if v.len() as u64 != ts {
                    return Err(invalid_param("the value must be one item"));
                }
                let full = special_chunk(&self.cparams, chunksize, SpecialValue::Value, v)?;
                let tail = special_chunk(&self.cparams, last, SpecialValue::Value, v)?;
                return self.change_chunks(cs, nbytes as i64, false, |offs, place| {
                    let hf = ChunkHeader::parse(&full)?;
                    let ht = ChunkHeader::parse(&tail)?;
                    for k in 0..nchunks {
                        let e = if k + 1 < nchunks {
                            place(&full, &hf)?
                        } else {
                            place(&tail, &ht)?
                        };
                        offs.push(e);
                    }
                    Ok(Vec::new())
                });
            }
        };
        if kind == SpecialValue::Nan && ts != 4 && ts != 8 {
            return Err(invalid_param("NaN needs typesize 4 or 8"));
        }
        let sample = special_chunk(&self.cparams, chunksize, kind, &[])?;
        let sample_bs = ChunkHeader::parse(&sample)?.blocksize;
        let code = ChunkEntry::Special(kind).to_raw()?;
        let mut h = self.header.clone();
        h.blocksize = i32::try_from(sample_bs).unwrap_or(0);
        h.chunksize = cs;
        h.nbytes = nbytes as i64;
        h.general_flags = (h.general_flags & 0x30) | 2;
        self.commit(
            h,
            Vec::new(),
            move |_| {
                Ok(Some(Offsets::Repeated {
                    value: code,
                    len: nchunks,
                }))
            },
            None,
            Vec::new(),
            Tail::Auto,
        )
    }

    /// The chunk to start a scan for byte `start` at, and its position.
    fn first_chunk_at(&self, start: u64) -> (usize, u64) {
        match self.chunksize() {
            Some(cs) if self.nchunks() > 0 => {
                let i = ((start / cs as u64) as usize).min(self.nchunks() - 1);
                (i, i as u64 * cs as u64)
            }
            _ => (0, 0),
        }
    }

    /// Bytes `[start, stop)` of the flat uncompressed content.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] for a range outside `0..nbytes`.
    pub fn get_slice(&mut self, start: u64, stop: u64) -> Result<Vec<u8>> {
        if start > stop || stop > self.nbytes() {
            return Err(invalid_param(format!(
                "slice {start}..{stop} outside 0..{}",
                self.nbytes()
            )));
        }
        // The range is checked against the header's nbytes only: the
        // buffer grows as chunks actually decode, never sized by a header,
        // and a failed allocation is an error, not an abort.
        let len = stop - start;
        if let Some(limit) = self.dparams.max_output
            && len > limit as u64
        {
            return Err(invalid_param(format!(
                "slice of {len} bytes is over the output limit of {limit}"
            )));
        }
        let grow = |out: &mut Vec<u8>, n: u64| -> Result<()> {
            usize::try_from(n)
                .ok()
                .and_then(|n| out.try_reserve(n).ok())
                .ok_or_else(|| invalid_param(format!("slice of {len} bytes: out of memory")))
        };
        let mut out = Vec::with_capacity(usize::try_from(len).map_or(0, |n| n.min(1 << 20)));
        let (first, mut pos) = self.first_chunk_at(start);
        for i in first..self.nchunks() {
            if pos >= stop {
                break;
            }
            let n = self.chunk_nbytes(i)? as u64;
            if pos + n > start {
                let a = start.max(pos) - pos;
                let b = stop.min(pos + n) - pos;
                if let ChunkEntry::Special(kind) = self.entry(i)? {
                    // An index code: the pattern, without materialising the
                    // whole chunk (a header may declare 2 GiB chunks).
                    let ts = match kind {
                        SpecialValue::Nan => usize::try_from(self.header.typesize).unwrap_or(1),
                        _ => 1,
                    };
                    let one = frame::materialize_special(&self.header, ts, kind)?;
                    let item = self.decompressor.decompress(&one)?;
                    grow(&mut out, b - a)?;
                    out.extend((a..b).map(|k| item[(k % ts as u64) as usize]));
                    pos += n;
                    continue;
                }
                let data = self.decompress_chunk_vec(i)?;
                if data.len() as u64 != n {
                    return Err(corrupt(format!("chunk {i} has the wrong size")));
                }
                grow(&mut out, b - a)?;
                out.extend_from_slice(&data[a as usize..b as usize]);
            }
            pos += n;
        }
        Ok(out)
    }

    /// Overwrite bytes `[start, start + data.len())` of the flat content
    /// (inside `0..nbytes`): touched chunks are recompressed and updated.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] for a range outside the content.
    pub fn set_slice(&mut self, start: u64, data: &[u8]) -> Result<()> {
        self.check_writable()?;
        let stop = start
            .checked_add(data.len() as u64)
            .filter(|&s| s <= self.nbytes())
            .ok_or_else(|| invalid_param("slice outside the content"))?;
        let (first, mut pos) = self.first_chunk_at(start);
        for i in first..self.nchunks() {
            if pos >= stop {
                break;
            }
            let n = self.chunk_nbytes(i)? as u64;
            if pos + n > start {
                let a = start.max(pos);
                let b = stop.min(pos + n);
                let src = &data[(a - start) as usize..(b - start) as usize];
                let mut buf = if a == pos && b == pos + n {
                    src.to_vec()
                } else {
                    let mut d = self.decompress_chunk_vec(i)?;
                    d[(a - pos) as usize..(b - pos) as usize].copy_from_slice(src);
                    d
                };
                let chunk = self.compressor.compress(&buf)?;
                buf.clear();
                self.update_chunk(i, &chunk)?;
            }
            pos += n;
        }
        Ok(())
    }

    // ------------------------------------------------------------------
    // Dead space

    /// Bytes of the frame no reader needs: dead chunk bytes, old indexes
    /// and the free reserve before the index (0 for directory frames).
    pub fn dead_bytes(&self) -> u64 {
        match &self.backend {
            Backend::Frame { .. } => {
                // The chunks section less its live chunks. Saturating: the
                // header's cbytes lies inside the frame (checked on open),
                // but index entries may share a chunk, so the live sum can
                // exceed the section.
                let body = self
                    .header
                    .frame_len
                    .saturating_sub(u64::from(self.header.header_len));
                let section = (self.header.cbytes.max(0) as u64).min(body);
                section.saturating_sub(self.live_cbytes)
            }
            Backend::Dir(_) => 0,
        }
    }

    /// The part of [`SChunk::dead_bytes`] in holes between live chunks of
    /// a file-backed frame (later chunks fill them when they fit; the rest
    /// is the gap before the index).
    pub fn hole_bytes(&self) -> u64 {
        if self.is_persistent_frame() {
            self.space.hole_bytes()
        } else {
            0
        }
    }

    /// Drop the free space between the last chunk and the index of a
    /// file-backed frame (the reserve kept for the next chunk and dead old
    /// indexes): the frame then ends right after its last chunk's index
    /// and trailer. Holes between chunks stay (see [`SChunk::compact`]).
    /// Crash-safe like every change; writes the index and trailer once or
    /// twice. Nothing to do for memory and directory frames.
    ///
    /// # Errors
    /// I/O errors; [`Error::Unsupported`] for a read-only super-chunk.
    pub fn trim(&mut self) -> Result<()> {
        self.check_writable()?;
        if !self.is_persistent_frame() {
            return Ok(());
        }
        // When the gap cannot hold the new index, the first pass moves it
        // past the old one, which makes the gap large enough for the second.
        for _ in 0..2 {
            if self.header.cbytes as u64 == self.space.live_end() {
                break;
            }
            self.commit(
                self.header.clone(),
                Vec::new(),
                |_| Ok(None),
                None,
                Vec::new(),
                Tail::Trim,
            )?;
        }
        Ok(())
    }

    /// Remove every dead byte: the chunks are rewritten back to back in
    /// index order, then the index and trailer, so the frame is as compact
    /// as one C-Blosc2 writes. A file-backed frame is rewritten in two
    /// crash-safe steps (all live chunks copied after the frame's end and
    /// committed, then copied to the start of the chunks section and
    /// committed, then the file is cut), so it briefly needs room for a
    /// second copy of its chunks; when there are no holes between chunks
    /// this is [`SChunk::trim`]. Nothing to do for directory frames.
    ///
    /// # Errors
    /// I/O errors; [`Error::Unsupported`] for a read-only super-chunk.
    pub fn compact(&mut self) -> Result<()> {
        self.check_writable()?;
        let persistent = self.is_persistent_frame();
        let Backend::Frame { .. } = &self.backend else {
            return Ok(());
        };
        if persistent && self.space.hole_bytes() == 0 {
            return self.trim();
        }
        // The final layout: distinct stored chunks in index order.
        self.check_index_editable()?;
        let entries = self.offsets.to_vec();
        let mut place: std::collections::HashMap<u64, u64> = std::collections::HashMap::new();
        let mut order = Vec::new();
        let mut total = 0u64;
        for &e in &entries {
            if let ChunkEntry::Stored(loc) = ChunkEntry::from_raw(e)?
                && !place.contains_key(&loc)
            {
                let len = self.stored_len(loc)?;
                place.insert(loc, total);
                order.push((loc, len));
                total += len;
            }
        }
        let remap = |offsets: &Offsets, shift: u64| -> Offsets {
            let map = |e: i64| match ChunkEntry::from_raw(e) {
                Ok(ChunkEntry::Stored(loc)) => (place[&loc] + shift) as i64,
                _ => e,
            };
            match offsets {
                Offsets::Explicit(v) => Offsets::Explicit(v.iter().map(|&e| map(e)).collect()),
                Offsets::Repeated { value, len } => Offsets::Repeated {
                    value: map(*value),
                    len: *len,
                },
            }
        };
        let fin = remap(&self.offsets, 0);
        let hl = u64::from(self.header.header_len);
        if !persistent {
            let mut h = self.header.clone();
            h.cbytes = total as i64;
            self.stamp(&mut h);
            let mut out = frame::encode_header(&mut h, &self.metalayers)?;
            let Backend::Frame { io, .. } = &mut self.backend else {
                return Ok(());
            };
            for &(loc, len) in &order {
                let start = out.len();
                out.resize(start + len as usize, 0);
                io.read_exact_at(hl + loc, &mut out[start..])?;
            }
            if h.nbytes > 0 && !fin.is_empty() {
                out.extend_from_slice(&encode_offsets(&fin)?);
            }
            out.extend_from_slice(&frame::encode_trailer(&self.vlmetalayers)?);
            h.frame_len = out.len() as u64;
            out[..frame::HEADER_FIXED_LEN].copy_from_slice(&h.encode_fixed());
            io.write_all_at(0, &out)?;
            io.set_len(h.frame_len)?;
            self.header = h;
            self.offsets = fin;
            return Ok(());
        }
        let index_len = if self.header.nbytes > 0 && !fin.is_empty() {
            encode_offsets(&fin)?.len() as u64
        } else {
            0
        };
        let tail_len = index_len + frame::encode_trailer(&self.vlmetalayers)?.len() as u64;
        // Step 1: a copy after the frame's end, far enough for step 2's
        // chunks, index and trailer to fit before it.
        let old_end = self.header.frame_len - hl;
        let start = old_end.max(total + tail_len);
        self.copy_chunks(&order, |loc| hl + start + place[&loc], |loc| hl + loc)?;
        let step1 = remap(&self.offsets, start);
        self.commit(
            self.header.clone(),
            Vec::new(),
            move |_| Ok(Some(step1)),
            None,
            Vec::new(),
            Tail::At(start + total),
        )?;
        self.space = Space::build(order.iter().map(|&(loc, len)| (start + place[&loc], len)));
        // Step 2: back to the start of the chunks section.
        self.copy_chunks(
            &order,
            |loc| hl + place[&loc],
            |loc| hl + start + place[&loc],
        )?;
        self.commit(
            self.header.clone(),
            Vec::new(),
            move |_| Ok(Some(fin)),
            None,
            Vec::new(),
            Tail::At(total),
        )?;
        self.space = Space::build(order.iter().map(|&(loc, len)| (place[&loc], len)));
        Ok(())
    }

    /// Copy each chunk `(loc, len)` of `order` from `from(loc)` to `to(loc)`
    /// (storage positions).
    fn copy_chunks(
        &mut self,
        order: &[(u64, u64)],
        to: impl Fn(u64) -> u64,
        from: impl Fn(u64) -> u64,
    ) -> Result<()> {
        let fsync = self.fsync;
        let Backend::Frame { io, .. } = &mut self.backend else {
            return Ok(());
        };
        let mut buf = Vec::new();
        for &(loc, len) in order {
            buf.resize(len as usize, 0);
            io.read_exact_at(from(loc), &mut buf)?;
            io.write_all_at(to(loc), &buf)?;
        }
        if fsync {
            io.sync()?;
        }
        Ok(())
    }

    fn is_persistent_frame(&self) -> bool {
        matches!(&self.backend, Backend::Frame { io, .. } if io.is_persistent())
    }

    // ------------------------------------------------------------------
    // The write path

    /// Write header fields that record the writer.
    fn stamp(&self, h: &mut FrameHeader) {
        h.tcomp = i16::try_from(self.cparams.nthreads).unwrap_or(i16::MAX);
        h.tdecomp = i16::try_from(self.dparams.nthreads).unwrap_or(i16::MAX);
        h.has_vlmeta = !self.vlmetalayers.is_empty();
    }

    /// A change of the chunk list: `edit` gets the explicit offsets and a
    /// `place` function that stores a chunk (or turns it into an index
    /// code) and returns its entry; it returns the entries whose stored
    /// bytes become garbage.
    fn change_chunks<F>(&mut self, new_cs: i32, nbytes: i64, vlblocks: bool, edit: F) -> Result<()>
    where
        F: FnOnce(
            &mut Vec<i64>,
            &mut dyn FnMut(&[u8], &ChunkHeader) -> Result<i64>,
        ) -> Result<Vec<i64>>,
    {
        self.check_index_editable()?;
        let mut offs = self.offsets.to_vec();
        let mut pending: Vec<Vec<u8>> = Vec::new();
        // Placeholder entries for new stored chunks: -1 - k (never a valid
        // entry: special codes are below -2^62), replaced once
        // their location is known.
        const TAG: i64 = -1;
        let is_tag = |e: i64| e <= TAG && e > -(1 << 40);
        let special_ok = new_cs > 0;
        let frame_ts = self.header.typesize;
        let garbage = {
            let mut place = |bytes: &[u8], h: &ChunkHeader| -> Result<i64> {
                if special_ok
                    && let Some(
                        k @ (SpecialValue::Zeros | SpecialValue::Nan | SpecialValue::Uninit),
                    ) = h.special()
                    && (k != SpecialValue::Nan || i32::from(h.typesize) == frame_ts)
                {
                    return ChunkEntry::Special(k).to_raw();
                }
                pending.push(bytes.to_vec());
                Ok(TAG - (pending.len() as i64 - 1))
            };
            edit(&mut offs, &mut place)?
        };
        // Chunk size turned variable: index codes cannot say their size any
        // more, so those chunks are stored.
        if new_cs <= 0 && self.header.chunksize > 0 {
            let n = self.nchunks();
            if n > 0
                && self.expected_nbytes(n - 1) != Some(self.header.chunksize as usize)
                && matches!(
                    self.offsets.get(n - 1).map(ChunkEntry::from_raw),
                    Some(Ok(ChunkEntry::Special(_)))
                )
            {
                return Err(Error::Unsupported(
                    "making the chunk size variable with a short special last chunk".into(),
                ));
            }
            for e in offs.iter_mut() {
                if *e < 0
                    && !is_tag(*e)
                    && let Ok(ChunkEntry::Special(kind)) = ChunkEntry::from_raw(*e)
                {
                    let size = self.header.chunksize as usize;
                    let chunk = frame::materialize_special(&self.header, size, kind)?;
                    pending.push(chunk);
                    *e = TAG - (pending.len() as i64 - 1);
                }
            }
        }
        // Stored chunks that die with this change.
        let mut dead = Vec::new();
        for &g in &garbage {
            if let Ok(ChunkEntry::Stored(loc)) = ChunkEntry::from_raw(g)
                && !offs.contains(&g)
                && !dead.iter().any(|&(l, _)| l == loc)
            {
                dead.push((loc, self.stored_len(loc).unwrap_or(0)));
            }
        }
        // Turning variable: a reader then checks that the stored chunks'
        // sizes add up to nbytes (chunks of a fixed-size frame are checked
        // only when read), so check it here first and never write a frame
        // that would not reopen.
        if new_cs == 0 && self.header.chunksize != 0 && nbytes > 0 {
            self.check_variable_sum(&offs, &pending, nbytes)?;
        }
        let mut h = self.header.clone();
        h.chunksize = if offs.is_empty() && new_cs <= 0 && h.chunksize < 0 {
            -1
        } else {
            new_cs
        };
        h.nbytes = nbytes;
        let version = if h.chunksize == 0 || vlblocks { 3 } else { 2 };
        let mut gf = (h.general_flags & 0x30) | version;
        if h.chunksize == 0 {
            gf |= frame::GFLAG_VARIABLE_CHUNKS;
        }
        if vlblocks {
            gf |= frame::GFLAG_VLBLOCKS;
        }
        h.general_flags = gf;
        self.commit(
            h,
            pending,
            move |locs| {
                for e in offs.iter_mut() {
                    if is_tag(*e) {
                        *e = locs[(TAG - *e) as usize];
                    }
                }
                Ok(Some(Offsets::Explicit(offs)))
            },
            None,
            dead,
            Tail::Auto,
        )?;
        if let Backend::Dir(dir) = &self.backend {
            let live: std::collections::HashSet<i64> = self.offsets.to_vec().into_iter().collect();
            for &g in &garbage {
                if g >= 0 && !live.contains(&g) {
                    let _ = fs::remove_file(chunk_file(dir, g as u64));
                }
            }
        }
        Ok(())
    }

    /// An edit writes an explicit index of every entry: refuse it when that
    /// index is over what a reader decodes ([`frame::decode_limit`]) — a
    /// 40-byte repeated index may stand for 2^28 entries, which an edit would
    /// expand to 2 GiB and write a frame that does not reopen.
    fn check_index_editable(&self) -> Result<()> {
        let n = self.offsets.len().saturating_add(1);
        let limit = frame::decode_limit(self.header.frame_len);
        if n.saturating_mul(8) > limit {
            return Err(Error::Unsupported(format!(
                "an index of {n} entries is over the {limit}-byte decode limit: \
                 this frame cannot be edited"
            )));
        }
        Ok(())
    }

    /// For a frame becoming one of variable-size chunks: the chunks of
    /// `offs` (existing entries, and tags `-1 - k` for `pending[k]`) must
    /// hold `nbytes` bytes in all, as [`OpenOptions`] checks on open.
    fn check_variable_sum(&mut self, offs: &[i64], pending: &[Vec<u8>], nbytes: i64) -> Result<()> {
        let Backend::Frame { io, .. } = &mut self.backend else {
            return Ok(());
        };
        let mut sum = 0u64;
        for (i, &e) in offs.iter().enumerate() {
            let nb = if e < 0 && e > -(1 << 40) {
                let k = (-1 - e) as usize;
                let c = pending
                    .get(k)
                    .ok_or_else(|| corrupt("pending chunk missing"))?;
                ChunkHeader::parse(c)?.nbytes as u64
            } else {
                match ChunkEntry::from_raw(e)? {
                    ChunkEntry::Special(_) => continue,
                    ChunkEntry::Stored(loc) => {
                        let (pos, _) = self.header.chunk_span(io.as_mut(), loc)?;
                        let mut b = [0u8; 4];
                        io.read_exact_at(pos + 4, &mut b)?;
                        let nb = u64::from(u32::from_le_bytes(b));
                        if nb > i32::MAX as u64 {
                            return Err(corrupt(format!("chunk {i} has a corrupt header")));
                        }
                        nb
                    }
                }
            };
            sum += nb;
        }
        if sum != nbytes as u64 {
            return Err(corrupt(format!(
                "the frame's chunks hold {sum} bytes, not the {nbytes} its header implies: \
                 a corrupt chunk cannot go into a frame of variable-size chunks"
            )));
        }
        Ok(())
    }

    /// Store `new_chunks`, then the index `make(locations)` (or the current
    /// one), then the trailer (of `vlmeta`, or the current vlmetalayers),
    /// then the header `h` (with sizes filled in). The state changes only
    /// when everything was written.
    fn commit<F>(
        &mut self,
        mut h: FrameHeader,
        new_chunks: Vec<Vec<u8>>,
        make: F,
        vlmeta: Option<Vec<VlMetalayer>>,
        dead: Vec<(u64, u64)>,
        tail: Tail,
    ) -> Result<()>
    where
        F: FnOnce(&[i64]) -> Result<Option<Offsets>>,
    {
        let fsync = self.fsync;
        let freed: u64 = dead.iter().map(|&(_, l)| l).sum();
        let sizes: Vec<u64> = new_chunks.iter().map(|c| c.len() as u64).collect();
        let mut alloc = None;
        let new_live: u64 = new_chunks.iter().map(|c| c.len() as u64).sum();
        let live = (self.live_cbytes + new_live).saturating_sub(freed);
        let vl = vlmeta.unwrap_or_else(|| self.vlmetalayers.clone());
        h.tcomp = i16::try_from(self.cparams.nthreads).unwrap_or(i16::MAX);
        h.tdecomp = i16::try_from(self.dparams.nthreads).unwrap_or(i16::MAX);
        h.has_vlmeta = !vl.is_empty();
        let trailer = frame::encode_trailer(&vl)?;
        let offsets;
        match &mut self.backend {
            Backend::Frame { io, .. } => {
                let hl = u64::from(h.header_len);
                let persistent = io.is_persistent();
                let old_cbytes = self.header.cbytes as u64;
                let old_end = self.header.frame_len - hl;
                // Where new bytes go, relative to header_len: in memory over
                // the old index (as C-Blosc2 does); on storage that must
                // survive a crash only where the old frame has no live byte
                // (see the module docs).
                let mut sect = old_cbytes;
                let mut locs = Vec::with_capacity(new_chunks.len());
                if persistent {
                    let a = self.space.place(&sizes, old_cbytes, old_end);
                    for (c, &loc) in new_chunks.iter().zip(&a.locs) {
                        io.write_all_at(hl + loc, c)?;
                        locs.push(loc as i64);
                    }
                    alloc = Some(a);
                } else {
                    for c in &new_chunks {
                        io.write_all_at(hl + sect, c)?;
                        locs.push(sect as i64);
                        sect += c.len() as u64;
                    }
                }
                offsets = make(&locs)?.unwrap_or_else(|| self.offsets.clone());
                let index = if h.nbytes > 0 && !offsets.is_empty() {
                    encode_offsets(&offsets)?
                } else {
                    Vec::new()
                };
                if let Some(a) = &alloc {
                    let tail_len = (index.len() + trailer.len()) as u64;
                    sect = match tail {
                        Tail::Auto => a.tail(tail_len, None, old_cbytes, old_end),
                        Tail::Trim => a.tail(tail_len, Some(0), old_cbytes, old_end),
                        Tail::At(p) => p,
                    };
                }
                io.write_all_at(hl + sect, &index)?;
                let tpos = hl + sect + index.len() as u64;
                io.write_all_at(tpos, &trailer)?;
                let flen = tpos + trailer.len() as u64;
                if persistent && fsync {
                    io.sync()?;
                }
                h.cbytes = i64::try_from(sect).map_err(|_| invalid_param("frame too large"))?;
                h.frame_len = flen;
                let old = self.header.encode_fixed();
                let new = h.encode_fixed();
                // The commit point: one write of the changed header bytes.
                if let Some(a) = (0..old.len()).find(|&k| old[k] != new[k]) {
                    let b = (0..old.len()).rfind(|&k| old[k] != new[k]).unwrap_or(a);
                    io.write_all_at(a as u64, &new[a..=b])?;
                }
                if persistent && fsync {
                    io.sync()?;
                }
                io.set_len(flen)?;
            }
            Backend::Dir(dir) => {
                let dir = dir.clone();
                let next = match &self.offsets {
                    Offsets::Explicit(v) => v.iter().copied().filter(|&o| o >= 0).max(),
                    Offsets::Repeated { value, .. } => Some(*value).filter(|&v| v >= 0),
                }
                .map_or(0, |m| m + 1);
                let mut locs = Vec::with_capacity(new_chunks.len());
                for (k, c) in new_chunks.iter().enumerate() {
                    let id = next + k as i64;
                    if id > i64::from(u32::MAX) {
                        return Err(invalid_param("chunk ids exhausted"));
                    }
                    let mut f = File::create(chunk_file(&dir, id as u64))?;
                    f.write_all(c)?;
                    if fsync {
                        f.sync_all()?;
                    }
                    locs.push(id);
                }
                offsets = make(&locs)?.unwrap_or_else(|| self.offsets.clone());
                h.cbytes = live as i64;
                let mut bytes = frame::encode_header(&mut h, &self.metalayers)?;
                if h.nbytes > 0 && !offsets.is_empty() {
                    bytes.extend_from_slice(&encode_offsets(&offsets)?);
                }
                bytes.extend_from_slice(&trailer);
                h.frame_len = bytes.len() as u64;
                bytes[..frame::HEADER_FIXED_LEN].copy_from_slice(&h.encode_fixed());
                write_replace(&dir.join(SFRAME_INDEX), &bytes, fsync)?;
            }
        }
        self.header = h;
        self.offsets = offsets;
        self.vlmetalayers = vl;
        self.live_cbytes = live;
        if let Some(a) = alloc {
            let dead: Vec<u64> = dead.iter().map(|&(l, _)| l).collect();
            self.space.commit(a, &sizes, &dead);
        }
        Ok(())
    }
}

fn encode_offsets(offsets: &Offsets) -> Result<Vec<u8>> {
    match offsets {
        Offsets::Explicit(v) => frame::encode_index(v),
        Offsets::Repeated { value, len } => frame::encode_repeated_index(*value, *len),
    }
}

/// The compressed chunk of slot `i` (index entry `entry`): borrowed from an
/// in-memory frame, read from disk (only its bytes) otherwise; special
/// entries materialised as header-only chunks. A free function over the
/// fields it needs, so callers can hold the chunk and use the decompressor.
fn load_chunk<'a>(
    backend: &'a mut Backend,
    header: &FrameHeader,
    nchunks: usize,
    entry: ChunkEntry,
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
            Backend::Frame { io, .. } => {
                let (pos, len) = header.chunk_span(io.as_mut(), loc)?;
                let len = len as usize;
                // Asked twice: returning a borrow from the `if let` arm
                // would keep `io` borrowed in the `else` arm (a known limit
                // of today's borrow checker); the slice is a bounds check,
                // not a copy.
                if io.slice(pos, len).is_some() {
                    let s = io.slice(pos, len).unwrap_or(&[]);
                    frame::check_stored_chunk(header, nchunks, s, i)?;
                    Cow::Borrowed(s)
                } else {
                    let mut v = vec![0u8; len];
                    io.read_exact_at(pos, &mut v)?;
                    frame::check_stored_chunk(header, nchunks, &v, i)?;
                    Cow::Owned(v)
                }
            }
            Backend::Dir(dir) => {
                let v = read_chunk_file(dir, loc)?;
                frame::check_stored_chunk(header, nchunks, &v, i)?;
                Cow::Owned(v)
            }
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_memory_frame_is_132_bytes() {
        let mut sc = SChunk::builder()
            .cparams(CParams::default().typesize(4).codec(crate::Codec::Zstd))
            .build_memory()
            .unwrap();
        let b = sc.to_cframe().unwrap();
        assert_eq!(b.len(), 132);
        let f = Frame::parse(&b).unwrap();
        assert_eq!(f.header.chunksize, -1);
        assert_eq!(f.header.codec_flags, 0x55);
    }
}
