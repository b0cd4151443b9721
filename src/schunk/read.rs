//! Reading: properties and chunks (compressed or decompressed); slices
//! are in `slice.rs`.

use std::borrow::Cow;

use super::storage::{Check, load_chunk, load_shared};
use super::{ChunkInfo, ChunkStamp, FrameVersion, SChunk};
use crate::chunk::ChunkHeader;
use crate::error::{Error, Result, corrupt, invalid_param};
use crate::frame::{self, ChunkEntry, FrameHeader};
use crate::params::{CParams, DParams};
use crate::{Compressor, Decompressor, SpecialValue};

impl SChunk {
    /// The frame header as last written (for listings). A super-chunk in
    /// memory writes its offsets index and trailer only when its frame is
    /// read whole ([`SChunk::to_cframe`]): after a change of its chunks,
    /// until then, `frame_len` ends at the chunks section.
    pub fn frame_header(&self) -> &FrameHeader {
        &self.header
    }

    /// The compression parameters in use.
    pub fn cparams(&self) -> &CParams {
        &self.cparams
    }

    /// The parameters the super-chunk compresses its chunks with:
    /// [`SChunk::cparams`] with the thread count actually run. For a frame
    /// opened from a file or a buffer, its `tcomp` is reported by
    /// `cparams` as it is, but capped to the machine's parallelism here: a
    /// header cannot make a writer start hundreds of threads. Compress
    /// chunks for this super-chunk with these.
    ///
    /// ```
    /// let sc = oxiblosc::SChunk::new(oxiblosc::CParams::default().nthreads(2))?;
    /// assert_eq!(sc.compress_params().nthreads, 2);
    /// # Ok::<(), oxiblosc::Error>(())
    /// ```
    pub fn compress_params(&self) -> &CParams {
        self.compressor.params()
    }

    /// The decompression parameters in use.
    pub fn dparams(&self) -> &DParams {
        &self.dparams
    }

    /// Use other compression parameters from now on (their `nthreads` is
    /// written as `tcomp` at the next change).
    ///
    /// A super-chunk compresses Blosc2 chunks, whatever `p.format` says
    /// (see [`SChunkBuilder::cparams`](crate::schunk::SChunkBuilder::cparams)).
    ///
    /// # Errors
    /// [`Error::InvalidParam`] for bad parameters.
    pub fn set_cparams(&mut self, p: CParams) -> Result<()> {
        p.validate()?;
        let p = frame::raw::frame_cparams(p);
        self.compressor = Compressor::new(p.clone());
        self.cparams = p;
        Ok(())
    }

    /// Use other decompression parameters from now on.
    pub fn set_dparams(&mut self, p: DParams) {
        self.decompressor = Decompressor::new(p.clone());
        self.dparams = p;
    }

    /// The parameters the super-chunk decompresses its chunks with:
    /// [`SChunk::dparams`] with the thread count actually run (a frame's
    /// `tdecomp` capped to the machine's parallelism, as for
    /// [`SChunk::compress_params`]).
    pub fn decompress_params(&self) -> &DParams {
        self.decompressor.params()
    }

    /// Hand `context` to the user filters and codecs of every later
    /// compression and decompression (in [`SChunk::cparams`] and
    /// [`SChunk::dparams`] too), keeping the thread counts run: unlike
    /// [`SChunk::set_cparams`] with `cparams().clone()`, which would start
    /// a frame's recorded `tcomp` uncapped.
    ///
    /// ```
    /// use oxiblosc::plugins::CallContext;
    /// let mut sc = oxiblosc::SChunk::new(oxiblosc::CParams::default())?;
    /// sc.set_call_context(Some(CallContext::new(7u8)));
    /// assert!(sc.compress_params().context.is_some());
    /// # Ok::<(), oxiblosc::Error>(())
    /// ```
    pub fn set_call_context(&mut self, context: Option<crate::plugins::CallContext>) {
        self.cparams.context = context.clone();
        self.dparams.context = context.clone();
        let mut cp = self.compressor.params().clone();
        cp.context = context.clone();
        self.compressor = Compressor::new(cp);
        let mut dp = self.decompressor.params().clone();
        dp.context = context;
        self.decompressor = Decompressor::new(dp);
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

    /// Whether changes are allowed, and why not. Each change also checks,
    /// before it writes, that a frame's file still ends where the frame
    /// does (bytes written after it since it was opened, or a file cut
    /// under it, make the change fail; see the [module docs](super)).
    ///
    /// # Errors
    /// [`Error::Unsupported`] saying why the super-chunk is read-only.
    pub fn check_writable(&self) -> Result<()> {
        self.writable.clone().map_err(Error::Unsupported)
    }

    /// [`SChunk::check_writable`], then, for a frame in a file (or behind a
    /// persistent [`FrameIo`](crate::frame::FrameIo)), that its storage
    /// still ends where the frame does: bytes another writer put after the
    /// frame since it was opened (another frame appended to the same file,
    /// as C-Blosc2's `blosc2_schunk_append_file` does) would be overwritten
    /// or cut by the change (unless the frame was opened with
    /// [`OpenOptions::discard_trailing`](super::OpenOptions::discard_trailing)),
    /// and a storage cut under the frame lost part of it. Every change calls
    /// this before it writes anything.
    pub(crate) fn check_editable(&mut self) -> Result<()> {
        self.check_writable()?;
        if !self.is_persistent_frame() {
            return Ok(());
        }
        let flen = self.header.frame_len;
        let super::Backend::Frame { io, .. } = &mut self.backend else {
            return Ok(());
        };
        let len = io.storage_len()?;
        if len > flen && !self.trailing_free {
            return Err(Error::Unsupported(format!(
                "{} bytes now follow the frame in its file (written there since it was \
                 opened); a change would overwrite them (OpenOptions::discard_trailing \
                 allows it)",
                len - flen
            )));
        }
        if len < flen {
            return Err(crate::error::corrupt(format!(
                "the file was cut to {len} bytes under the frame's {flen} since it was opened"
            )));
        }
        Ok(())
    }

    // Inlined, as are the chunk's load and its borrow with the
    // decompressor: out of line, each handed its result back through memory
    // with narrow stores that the caller read at once with a 16-byte load, a
    // store-forwarding stall (a sixth of a 4 KiB chunk's read through a
    // super-chunk; perf/README.md, session 23).
    #[inline(always)]
    pub(super) fn entry(&self, i: usize) -> Result<ChunkEntry> {
        self.offsets.entry(i)
    }

    pub(super) fn expected_nbytes(&self, i: usize) -> Option<usize> {
        frame::expected_nbytes(self.header.nbytes, self.header.chunksize, self.nchunks(), i)
    }

    /// The compressed chunk `i`: borrowed from an in-memory frame, read
    /// from disk (only its bytes) otherwise; special index entries are
    /// materialised as header-only chunks.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] for `i` out of range; corrupt-frame errors.
    pub fn get_chunk(&mut self, i: usize) -> Result<Cow<'_, [u8]>> {
        Ok(self.load(i, Check::Whole)?.0)
    }

    /// Chunk `i` as [`SChunk::get_chunk`] gives it, through a shared
    /// borrow (so that many may be held at once, as a rebuilt chunk list
    /// holds another array's chunks), for a super-chunk whose frame is in
    /// memory: a stored chunk is borrowed from the frame (no copy), a
    /// special chunk the index alone records is made (`Cow::Owned`).
    ///
    /// ```
    /// use std::borrow::Cow;
    /// use oxiblosc::{CParams, SChunk};
    ///
    /// let mut sc = SChunk::new(CParams::default())?;
    /// sc.append_buffer(&[1u8; 1000])?;
    /// sc.append_buffer(&[2u8; 1000])?;
    /// let (a, b) = (sc.chunk_shared(0)?, sc.chunk_shared(1)?);
    /// assert!(matches!(a, Cow::Borrowed(_)));
    /// assert_eq!(oxiblosc::decompress(&b)?, [2u8; 1000]);
    /// # Ok::<(), oxiblosc::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::Unsupported`] for a stored chunk of a file or a directory;
    /// as [`SChunk::get_chunk`].
    pub fn chunk_shared(&self, i: usize) -> Result<Cow<'_, [u8]>> {
        let at = (self.entry(i)?, Check::Whole);
        let (expected, n) = (self.expected_nbytes(i), self.nchunks());
        load_shared(&self.backend, &self.header, n, at, expected, i)
    }

    /// A stamp of chunk `i`'s stored version, for a super-chunk whose frame
    /// is in memory (`None` otherwise, and for `i` out of range): two stamps
    /// of this super-chunk that are equal name the same chunk bytes, so a
    /// copy of chunk `i` (or anything made from it, such as its decoded
    /// items) taken with its stamp is still current while the stamp is.
    /// Changes that leave a chunk as it was (appends, inserts and
    /// deletes elsewhere, updates of other chunks) leave its stamp as it
    /// was, under whatever index it has moved to; a compaction gives every
    /// chunk a new one. Stamps of different super-chunks never compare
    /// equal. Frames in files and directories reuse freed space, so their
    /// chunks have none.
    ///
    /// ```
    /// use oxiblosc::{CParams, SChunk};
    ///
    /// let mut sc = SChunk::new(CParams::default())?;
    /// sc.append_buffer(&[1u8; 1000])?;
    /// sc.append_buffer(&[2u8; 1000])?;
    /// let before = (sc.chunk_stamp(0), sc.chunk_stamp(1));
    /// let chunk = oxiblosc::compress(&[3u8; 1000], sc.compress_params())?;
    /// sc.update_chunk(1, &chunk)?;
    /// assert_eq!(sc.chunk_stamp(0), before.0);
    /// assert_ne!(sc.chunk_stamp(1), before.1);
    /// # Ok::<(), oxiblosc::Error>(())
    /// ```
    pub fn chunk_stamp(&self, i: usize) -> Option<ChunkStamp> {
        if !self.in_memory() || i >= self.nchunks() {
            return None;
        }
        Some(ChunkStamp {
            epoch: self.stamp_epoch,
            entry: self.offsets.get(i)?,
            nbytes: self.expected_nbytes(i),
        })
    }

    /// The version of this super-chunk's frame in memory, `None` for one in
    /// a file, a directory, or a caller's [`FrameIo`](crate::frame::FrameIo)
    /// that counts no writes. It changes whenever a byte of the frame may
    /// have changed or its buffer moved (a change, a flush of its index, a
    /// compaction); while it stays the same, the chunks
    /// [`SChunk::chunk_shared`] borrowed and the pointer
    /// [`SChunk::cframe_ptr`] lent still point at the frame's bytes, as
    /// they were.
    ///
    /// ```
    /// use oxiblosc::{CParams, SChunk};
    /// let mut sc = SChunk::new(CParams::default().typesize(4))?;
    /// sc.append_buffer(&[1u8; 4000])?;
    /// let v = sc.frame_version();
    /// sc.get_chunk(0)?;
    /// assert_eq!(sc.frame_version(), v);
    /// sc.append_buffer(&[2u8; 4000])?;
    /// assert_ne!(sc.frame_version(), v);
    /// # Ok::<(), oxiblosc::Error>(())
    /// ```
    pub fn frame_version(&self) -> Option<FrameVersion> {
        match &self.backend {
            super::Backend::Frame {
                io,
                storage: super::Storage::Memory,
            } => io.writes().map(|writes| FrameVersion {
                epoch: self.stamp_epoch,
                writes,
            }),
            _ => None,
        }
    }

    /// Whether the frame's bytes are in memory: [`SChunk::chunk_shared`]
    /// borrows every chunk.
    pub(crate) fn in_memory(&self) -> bool {
        self.backend.in_memory()
    }

    /// Chunk `i` (borrowed from an in-memory frame: no copy) and the
    /// decompressor, borrowed together so that one decodes the other. The
    /// chunk's header is checked against the frame for its sizes only: the
    /// caller decodes it, and the decoder checks the rest. A BYTEDELTA meta
    /// of 0 names the super-chunk's type size, as C-Blosc2 reads it
    /// ([`frame::raw::as_in_schunk`]: a patched copy only then).
    #[inline(always)]
    pub(super) fn chunk_and_decompressor(
        &mut self,
        i: usize,
    ) -> Result<(Cow<'_, [u8]>, &mut Decompressor)> {
        let ts = self.header.typesize;
        let (chunk, d) = self.load(i, Check::Sizes)?;
        Ok((frame::raw::as_in_schunk(chunk, ts), d))
    }

    /// Chunk `i`, its header checked as `check`, and the decompressor.
    #[inline(always)]
    fn load(&mut self, i: usize, check: Check) -> Result<(Cow<'_, [u8]>, &mut Decompressor)> {
        let entry = self.entry(i)?;
        let expected = self.expected_nbytes(i);
        let nchunks = self.nchunks();
        let at = (entry, check);
        let chunk = load_chunk(&mut self.backend, &self.header, nchunks, at, expected, i)?;
        Ok((chunk, &mut self.decompressor))
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

    /// Chunk `i`'s index entry: where the frame stores it (an offset from
    /// the end of a contiguous frame's header, or a directory frame's chunk
    /// file number), or the special value its entry codes. What C-Blosc2's
    /// `blosc2_frame_get_offsets` lists, without reading any chunk.
    ///
    /// ```
    /// use oxiblosc::frame::ChunkEntry;
    /// use oxiblosc::{CParams, SChunk, SpecialValue, special_chunk};
    ///
    /// let p = CParams::default().typesize(4);
    /// let mut sc = SChunk::new(p.clone())?;
    /// sc.append_buffer(&[1u8; 4000])?;
    /// sc.append_chunk(&special_chunk(&p, 4000, SpecialValue::Zeros, &[])?)?;
    /// assert_eq!(sc.chunk_entry(0)?, ChunkEntry::Stored(0));
    /// assert_eq!(sc.chunk_entry(1)?, ChunkEntry::Special(SpecialValue::Zeros));
    /// assert!(sc.chunk_entry(2).is_err());
    /// # Ok::<(), oxiblosc::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`crate::Error::InvalidParam`] for `i` out of range;
    /// [`crate::Error::Corrupt`] for an entry that is neither an offset
    /// nor a special code.
    pub fn chunk_entry(&self, i: usize) -> Result<ChunkEntry> {
        self.offsets.entry(i)
    }

    /// How many chunks from `i` on share chunk `i`'s index entry: 1 for
    /// an ordinary chunk, more where the index names one entry again and
    /// again (the one-value index C-Blosc2 writes for a run of special
    /// chunks, or one stored chunk named by several entries); 0 for `i`
    /// out of range. Chunks of one run hold the same bytes, except that the
    /// frame's last chunk may be shorter ([`SChunk::chunk_nbytes`]). A tool
    /// that lists chunks can show a run as one row: a frame of a few hundred
    /// bytes may name millions of chunks this way.
    ///
    /// ```
    /// use oxiblosc::schunk::{Fill, SChunk};
    /// use oxiblosc::CParams;
    ///
    /// let mut sc = SChunk::new(CParams::default().typesize(4))?;
    /// sc.fill_special(1_000_000, Fill::Zeros, 4000)?;
    /// assert_eq!(sc.nchunks(), 1000);
    /// assert_eq!(sc.entry_run(0), 1000);
    /// assert_eq!(sc.entry_run(998), 2);
    /// assert_eq!(sc.entry_run(1000), 0);
    /// # Ok::<(), oxiblosc::Error>(())
    /// ```
    pub fn entry_run(&self, i: usize) -> usize {
        self.offsets.run_len(i)
    }

    /// The special value chunk `i`'s index entry codes (zeros, NaN, uninit),
    /// `None` for a stored chunk (even a special one) or `i` out of range:
    /// read from the index alone, no chunk loaded. NDArray edits use it to
    /// pass over zero chunks without decoding them (`ndarray/slice.rs`,
    /// `ndarray/reshape.rs`).
    pub(crate) fn index_special(&self, i: usize) -> Option<SpecialValue> {
        match self.entry(i) {
            Ok(ChunkEntry::Special(k)) => Some(k),
            _ => None,
        }
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
    /// bytes written. The `_into` form of [`SChunk::decompress_chunk_vec`],
    /// as [`crate::decompress_into`] is of [`crate::decompress`].
    ///
    /// # Errors
    /// As [`SChunk::get_chunk`], plus [`Error::DstTooSmall`].
    pub fn decompress_chunk_into(&mut self, i: usize, dst: &mut [u8]) -> Result<usize> {
        // The decoder writes the whole chunk or fails: its return is the
        // header's `nbytes`, which `load_chunk` checked against the frame.
        let (chunk, decompressor) = self.chunk_and_decompressor(i)?;
        decompressor.decompress_into(&chunk, dst)
    }

    /// Decompress chunk `i` into `dst`, skipping the blocks flagged in
    /// `maskout` (one flag per block of the chunk): see
    /// [`Decompressor::decompress_masked_into`]. Returns the chunk's size.
    ///
    /// # Errors
    /// As [`SChunk::decompress_chunk_into`], plus [`Error::InvalidParam`]
    /// for a mask whose length is not the chunk's number of blocks.
    pub fn decompress_chunk_masked_into(
        &mut self,
        i: usize,
        maskout: &[bool],
        dst: &mut [u8],
    ) -> Result<usize> {
        let (chunk, decompressor) = self.chunk_and_decompressor(i)?;
        decompressor.decompress_masked_into(&chunk, maskout, dst)
    }

    /// Chunk `i` of an NDArray whose block shape makes blocks of
    /// `blocksize` bytes, as many as `maskout` has flags: decoded through
    /// [`SChunk::decompress_chunk_masked_into`], or whole when it has no
    /// blocks to mask (a special chunk, whose header may record any block
    /// size; VL blocks). One read of the chunk.
    ///
    /// # Errors
    /// [`Error::Corrupt`] for a stored chunk with blocks of another size:
    /// its bytes were laid out by another block shape than the metalayer's
    /// (as [`crate::ndarray::NdArray`] reads refuse it, and C-Blosc2's
    /// b2nd, whose mask must have a flag per block); decoding errors.
    pub(crate) fn decompress_chunk_blocks_into(
        &mut self,
        i: usize,
        blocksize: usize,
        maskout: &[bool],
        dst: &mut [u8],
    ) -> Result<usize> {
        let (chunk, decompressor) = self.chunk_and_decompressor(i)?;
        let h = b2nd_chunk_header(&chunk, i, blocksize)?;
        let masked = h.special().is_none() && !h.is_vlblocks() && h.nblocks() == maskout.len();
        let n = if masked {
            decompressor.decompress_masked_into(&chunk, maskout, dst)?
        } else {
            decompressor.decompress_into(&chunk, dst)?
        };
        if n != h.nbytes {
            return Err(corrupt(format!(
                "chunk {i} decompressed to {n} of {} bytes",
                h.nbytes
            )));
        }
        Ok(n)
    }

    /// Runs of blocks `(first, count)` of chunk `i` of an NDArray (blocks
    /// of `blocksize` bytes, checked as
    /// [`SChunk::decompress_chunk_blocks_into`] checks them) into `dst`, one
    /// after the other (`dst` is their `count`s' sum of blocks long),
    /// decoding only those blocks (getitem's path: whole blocks straight
    /// into `dst`), from one read of the chunk. `Ok(None)` when a run is
    /// not whole items of the chunk's type size (another type size than
    /// the array's item size) or the chunk has VL blocks: the caller
    /// decodes it whole. Otherwise the chunk's `nbytes`, which the caller
    /// checks against the metalayer's.
    ///
    /// # Errors
    /// As [`SChunk::decompress_chunk_blocks_into`]; [`Error::Corrupt`] when
    /// a run is not all in the chunk.
    pub(crate) fn decompress_chunk_block_runs_into(
        &mut self,
        i: usize,
        blocksize: usize,
        runs: &[(usize, usize)],
        dst: &mut [u8],
    ) -> Result<Option<usize>> {
        let (chunk, decompressor) = self.chunk_and_decompressor(i)?;
        let h = b2nd_chunk_header(&chunk, i, blocksize)?;
        let ts = usize::from(h.typesize).max(1);
        let whole_items = |v: Option<usize>| v.filter(|v| v % ts == 0);
        if h.is_vlblocks()
            || runs.iter().any(|&(first, count)| {
                whole_items(first.checked_mul(blocksize)).is_none()
                    || whole_items(count.checked_mul(blocksize)).is_none()
            })
        {
            return Ok(None);
        }
        let mut at = 0usize;
        for &(first, count) in runs {
            // Both products fit (checked above).
            let (begin, len) = (first * blocksize, count * blocksize);
            if begin.checked_add(len).is_none_or(|end| end > h.nbytes) {
                return Err(corrupt(format!(
                    "chunk {i} of {} bytes has no blocks {first}..{}",
                    h.nbytes,
                    first + count
                )));
            }
            let out = at
                .checked_add(len)
                .and_then(|end| dst.get_mut(at..end))
                .ok_or_else(|| invalid_param("block runs longer than the buffer"))?;
            let n = decompressor.getitem_into(&chunk, begin / ts, len / ts, out)?;
            if n != len {
                return Err(corrupt(format!(
                    "chunk {i}: blocks {first}..{} decoded to {n} of {len} bytes",
                    first + count
                )));
            }
            at += len;
        }
        Ok(Some(h.nbytes))
    }

    /// The same as [`SChunk::decompress_chunk_into`] (its first name).
    ///
    /// # Errors
    /// As [`SChunk::decompress_chunk_into`].
    pub fn decompress_chunk(&mut self, i: usize, dst: &mut [u8]) -> Result<usize> {
        self.decompress_chunk_into(i, dst)
    }

    /// Chunk `i` decompressed into a new buffer.
    ///
    /// # Errors
    /// As [`SChunk::decompress_chunk_into`].
    pub fn decompress_chunk_vec(&mut self, i: usize) -> Result<Vec<u8>> {
        let (chunk, decompressor) = self.chunk_and_decompressor(i)?;
        decompressor.decompress(&chunk)
    }
}

/// The header of chunk `i` of an NDArray whose blocks are `blocksize`
/// bytes: a stored chunk of other blocks is refused (its bytes were laid
/// out by another block shape), a special one may record any block size.
pub(super) fn b2nd_chunk_header(chunk: &[u8], i: usize, blocksize: usize) -> Result<ChunkHeader> {
    let h = ChunkHeader::parse(chunk)?;
    if h.special().is_none() && h.blocksize != blocksize {
        return Err(corrupt(format!(
            "chunk {i} has blocks of {} bytes, the b2nd metalayer's are {blocksize}",
            h.blocksize
        )));
    }
    Ok(h)
}
