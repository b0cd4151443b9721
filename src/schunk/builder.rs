//! [`SChunkBuilder`]: a new, empty super-chunk in memory, behind a
//! [`FrameIo`], in a new file (or appended to one) or in a new directory.

use std::fs::{self, File, OpenOptions as FsOpenOptions};
use std::path::Path;

use super::space::Space;
use super::storage::{DirFrame, StoreRef, at};
use super::{Backend, SChunk, Storage};
use crate::error::{Result, invalid_param};
use crate::frame::io::{FileStore, MemFrame, NamedIo, OpenMode};
use crate::frame::{self, FileIo, FrameHeader, FrameIo, FrameKind, Metalayer, Offsets};
use crate::params::{CParams, DParams};
use crate::{Compressor, Decompressor};

/// Builds a new, empty super-chunk.
#[derive(Clone, Debug)]
pub struct SChunkBuilder {
    cparams: CParams,
    dparams: DParams,
    chunksize: Option<usize>,
    meta: Vec<Metalayer>,
    fsync: bool,
    store: Option<StoreRef>,
}

impl Default for SChunkBuilder {
    fn default() -> Self {
        SChunkBuilder {
            cparams: CParams::default(),
            dparams: DParams::default(),
            chunksize: None,
            meta: Vec::new(),
            fsync: true,
            store: None,
        }
    }
}

impl SChunkBuilder {
    /// Read and write the files of [`SChunkBuilder::create_file`] and
    /// [`SChunkBuilder::create_dir`] through `store` (see [`FileStore`]:
    /// a contiguous frame made so is held as [`Storage::Custom`], and an
    /// existing file at its path is replaced).
    pub fn store(mut self, store: std::sync::Arc<dyn FileStore>) -> Self {
        self.store = Some(StoreRef(store));
        self
    }
    /// Compression parameters for [`SChunk::append_buffer`] and friends;
    /// their `nthreads` is written as the frame's `tcomp`. A super-chunk
    /// compresses Blosc2 chunks, whatever `p.format` says (its `cparams`
    /// then say [`crate::ChunkFormat::Blosc2`]): C-Blosc2 cannot open a
    /// frame on disk whose first chunk is a Blosc1 chunk, and no C-Blosc
    /// 1.x reader reads frames.
    pub fn cparams(mut self, p: CParams) -> Self {
        self.cparams = frame::raw::frame_cparams(p);
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

    pub(super) fn empty_frame(&self, kind: FrameKind) -> Result<(FrameHeader, Vec<u8>)> {
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
        let mut bytes = frame::raw::encode_header(&mut h, &self.meta)?;
        let trailer = frame::raw::encode_trailer(&[])?;
        h.frame_len = (bytes.len() + trailer.len()) as u64;
        bytes[..frame::HEADER_FIXED_LEN].copy_from_slice(&h.encode_fixed());
        bytes.extend_from_slice(&trailer);
        Ok((h, bytes))
    }

    pub(super) fn finish(self, backend: Backend, header: FrameHeader) -> SChunk {
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
            trailing_free: false,
            tidy_on_close: false,
            tidy_on_drop: true,
            unfit_chunk: None,
            tail_stale: false,
            stamp_epoch: super::next_stamp_epoch(),
        }
    }

    /// An empty super-chunk in memory.
    ///
    /// # Errors
    /// [`Error::InvalidParam`](crate::Error::InvalidParam) for bad parameters or metalayers.
    pub fn build_memory(self) -> Result<SChunk> {
        let (h, bytes) = self.empty_frame(FrameKind::Contiguous)?;
        let backend = Backend::Frame {
            io: Box::new(MemFrame::from(bytes)),
            storage: Storage::Memory,
        };
        Ok(self.finish(backend, h))
    }

    /// An empty super-chunk behind a caller-supplied [`FrameIo`] (written
    /// at its position 0).
    ///
    /// # Errors
    /// As [`SChunkBuilder::build_memory`], plus I/O errors.
    pub fn build_io(self, io: Box<dyn FrameIo>) -> Result<SChunk> {
        let mut io: Box<dyn FrameIo> = Box::new(NamedIo(io));
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
        if let Some(store) = &self.store {
            let io = store.0.open(path, OpenMode::Create).map_err(at(path))?;
            return self.build_io(io);
        }
        let file = FsOpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(path)
            .map_err(at(path))?;
        self.write_new_file(file, path, 0)
    }

    /// An empty cframe appended at the end of an existing file (the bytes
    /// before it are kept); [`SChunk::storage`] tells its offset.
    ///
    /// # Errors
    /// As [`SChunkBuilder::create_file`].
    pub fn append_to_file(self, path: impl AsRef<Path>) -> Result<SChunk> {
        let path = path.as_ref();
        let file = FsOpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .map_err(at(path))?;
        let offset = file.metadata().map_err(at(path))?.len();
        self.write_new_file(file, path, offset)
    }

    pub(super) fn write_new_file(self, file: File, path: &Path, offset: u64) -> Result<SChunk> {
        let (h, bytes) = self.empty_frame(FrameKind::Contiguous)?;
        let mut io = NamedIo(Box::new(FileIo::with_path(file, offset, path)));
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
        let dir = DirFrame {
            path: path.to_path_buf(),
            store: self.store.clone(),
        };
        match &self.store {
            None => fs::create_dir(path),
            Some(s) => s.0.create_dir(path),
        }
        .map_err(at(path))?;
        dir.replace_index(&bytes, self.fsync)?;
        let backend = Backend::Dir(dir);
        Ok(self.finish(backend, h))
    }
}
