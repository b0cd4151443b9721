//! Serialising a super-chunk to one contiguous frame: writing what a
//! memory frame leaves for later ([`SChunk::flush`]), the frame's length
//! ([`SChunk::cframe_len`]) and bytes ([`SChunk::to_cframe`]), a directory
//! frame's chunks gathered into one.

use std::io::Write;

use super::commit::encode_offsets;
use super::storage::DirFrame;
use super::{Backend, SChunk};
use crate::chunk::ChunkHeader;
use crate::error::{Result, corrupt};
use crate::frame::{self, ChunkEntry, Frame, FrameKind, Offsets};

impl SChunk {
    /// Write what a super-chunk in memory leaves for later: changes of its
    /// chunks do not rewrite its offsets index and trailer each time (that
    /// made building a super-chunk of `n` chunks cost `n`² index
    /// entries); [`SChunk::to_cframe`] writes them, and so does this, after
    /// which [`SChunk::frame_header`]'s `frame_len` is the whole frame's.
    /// Nothing to do for other storage, whose changes write them.
    ///
    /// ```
    /// use oxiblosc::{CParams, schunk::SChunk};
    ///
    /// let mut sc = SChunk::new(CParams::default().typesize(4))?;
    /// sc.append_buffer(&[1u8; 4000])?;
    /// sc.flush()?;
    /// let len = sc.frame_header().frame_len;
    /// assert_eq!(sc.to_cframe()?.len() as u64, len);
    /// # Ok::<(), oxiblosc::Error>(())
    /// ```
    ///
    /// # Errors
    /// The index encoder's errors.
    pub fn flush(&mut self) -> Result<()> {
        self.flush_tail()
    }

    /// The length of [`to_cframe`](Self::to_cframe)'s frame. A contiguous
    /// frame (in memory or a file) is not copied: its header's length once
    /// pending changes are written. A directory frame is measured from its
    /// chunk files' headers and lengths, its chunks not read.
    ///
    /// ```
    /// use oxiblosc::{CParams, SChunk};
    /// let mut sc = SChunk::new(CParams::default().typesize(4))?;
    /// sc.append_buffer(&[1u8; 4000])?;
    /// assert_eq!(sc.cframe_len()?, sc.to_cframe()?.len() as u64);
    /// # Ok::<(), oxiblosc::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`to_cframe`](Self::to_cframe).
    pub fn cframe_len(&mut self) -> Result<u64> {
        Ok(self.cframe_layout()?.frame_len())
    }

    /// The whole super-chunk as one contiguous frame (a copy; for a
    /// directory frame, a compact cframe of its chunks). To write it to a
    /// file or a stream without holding it all, see
    /// [`write_cframe`](Self::write_cframe).
    ///
    /// # Errors
    /// I/O errors; [`crate::Error::Corrupt`] for a directory frame whose
    /// chunk files do not make a frame that opens, and for a super-chunk
    /// opened with [`defer_chunk_checks`](crate::OpenOptions::defer_chunk_checks)
    /// that left a chunk out (its frame would not reopen);
    /// [`crate::Error::InvalidParam`] for a super-chunk in memory whose
    /// chunks all hold 0 bytes (see [`SChunk::append_chunk`]).
    pub fn to_cframe(&mut self) -> Result<Vec<u8>> {
        let layout = self.cframe_layout()?;
        let n = usize::try_from(layout.frame_len())
            .map_err(|_| corrupt("frame length past the address space"))?;
        let mut v = vec![0u8; n];
        oxiblosc_kernels::advise_huge_pages(&mut v);
        layout.write_into(&mut v)?;
        Ok(v)
    }

    /// Write [`to_cframe`](Self::to_cframe)'s frame to the start of `dst`
    /// (at least [`cframe_len`](Self::cframe_len) bytes) without another
    /// copy of it: a frame in memory is copied once, one in a file read
    /// into it, a directory frame's chunk files read into it one at a time.
    /// Returns its length. To size a buffer of one's own to the frame
    /// without laying a directory frame out twice, see
    /// [`cframe_layout`](Self::cframe_layout).
    ///
    /// ```
    /// use oxiblosc::{CParams, SChunk};
    /// let mut sc = SChunk::new(CParams::default().typesize(4))?;
    /// sc.append_buffer(&[1u8; 4000])?;
    /// let mut buf = vec![0u8; sc.cframe_len()? as usize];
    /// let n = sc.to_cframe_into(&mut buf)?;
    /// assert_eq!(&buf[..n], &sc.to_cframe()?[..]);
    /// # Ok::<(), oxiblosc::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`crate::Error::DstTooSmall`] when `dst` is shorter than the frame;
    /// as [`to_cframe`](Self::to_cframe).
    pub fn to_cframe_into(&mut self, dst: &mut [u8]) -> Result<usize> {
        self.cframe_layout()?.write_into(dst)
    }

    /// [`to_cframe`](Self::to_cframe)'s frame laid out, its length known,
    /// to be written into a buffer the caller sizes to it: a memory
    /// frame's pending index is written, a directory frame measured from
    /// its chunk files' headers, once. C's `blosc2_schunk_to_buffer` writes
    /// into the allocation it returns this way, Python's `to_cframe` into
    /// its `bytes`. ([`cframe_len`](Self::cframe_len) and then
    /// [`to_cframe_into`](Self::to_cframe_into) read each chunk file's
    /// header twice.)
    ///
    /// ```
    /// use oxiblosc::{CParams, SChunk};
    /// let mut sc = SChunk::new(CParams::default().typesize(4))?;
    /// sc.append_buffer(&[1u8; 4000])?;
    /// let expected = sc.to_cframe()?;
    /// let layout = sc.cframe_layout()?;
    /// let mut buf = vec![0u8; layout.frame_len() as usize];
    /// assert_eq!(layout.write_into(&mut buf)?, buf.len());
    /// assert_eq!(buf, expected);
    /// # Ok::<(), oxiblosc::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`cframe_len`](Self::cframe_len).
    pub fn cframe_layout(&mut self) -> Result<CframeLayout<'_>> {
        self.check_whole()?;
        self.flush_tail()?;
        let dir = match &self.backend {
            Backend::Frame { .. } => None,
            Backend::Dir(dir) => {
                let dir = dir.clone();
                Some((self.dir_cframe(&dir)?, dir))
            }
        };
        Ok(CframeLayout { sc: self, dir })
    }

    /// Refuses to lay out a new frame from a super-chunk whose open left
    /// a chunk out (deferred chunk checks): the frame would hold that
    /// chunk's bytes and not reopen. Borrowing the frame as it is
    /// ([`cframe_ref`](Self::cframe_ref), as C-Blosc2's `to_buffer` lends
    /// a frame in memory) is still allowed: it is the caller's own bytes.
    ///
    /// Also refuses a super-chunk in memory whose chunks all hold 0 bytes
    /// (see [`SChunk::check_writable_frame`]).
    fn check_whole(&self) -> Result<()> {
        self.check_writable_frame()?;
        match &self.unfit_chunk {
            None => Ok(()),
            Some(e) => Err(corrupt(format!(
                "no frame is written from a super-chunk opened with a chunk left out ({e})"
            ))),
        }
    }

    /// Refuses to hand out the frame of a super-chunk in memory whose
    /// chunks all hold 0 bytes: readers find no chunk in a frame of no
    /// bytes (it has no index), so it would reopen empty. C-Blosc2 holds
    /// such a super-chunk in memory and refuses `blosc2_schunk_to_buffer`
    /// too; a chunk with data beside them makes the frame writable.
    pub(super) fn check_writable_frame(&self) -> Result<()> {
        if self.header.nbytes == 0 && self.nchunks() > 0 {
            return Err(crate::error::invalid_param(
                super::change::EMPTY_CHUNKS_ALONE,
            ));
        }
        Ok(())
    }

    /// [`to_cframe`](Self::to_cframe)'s frame borrowed, not copied, when
    /// the super-chunk is a contiguous frame in memory
    /// ([`Storage::Memory`](super::Storage::Memory)): its pending index and
    /// trailer are written first ([`SChunk::flush`]). `None` for a frame in
    /// a file, behind a caller's [`FrameIo`](crate::frame::FrameIo) or in a
    /// directory (use [`to_cframe`](Self::to_cframe) or
    /// [`write_cframe`](Self::write_cframe)).
    ///
    /// ```
    /// use oxiblosc::{CParams, SChunk};
    /// let mut sc = SChunk::new(CParams::default().typesize(4))?;
    /// sc.append_buffer(&[1u8; 4000])?;
    /// let copy = sc.to_cframe()?;
    /// assert_eq!(sc.cframe_ref()?, Some(&copy[..]));
    /// # Ok::<(), oxiblosc::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`SChunk::flush`].
    pub fn cframe_ref(&mut self) -> Result<Option<&[u8]>> {
        let Some(len) = self.memory_frame_len()? else {
            return Ok(None);
        };
        match &self.backend {
            Backend::Frame { io, .. } => Ok(io.slice(0, len)),
            Backend::Dir(_) => Ok(None),
        }
    }

    /// The length of a contiguous frame in memory
    /// ([`Storage::Memory`](super::Storage::Memory)), its pending index and
    /// trailer written first; `None` for other storage.
    fn memory_frame_len(&mut self) -> Result<Option<usize>> {
        if !matches!(
            self.backend,
            Backend::Frame {
                storage: super::Storage::Memory,
                ..
            }
        ) {
            return Ok(None);
        }
        self.check_writable_frame()?;
        self.flush_tail()?;
        usize::try_from(self.header.frame_len)
            .map(Some)
            .map_err(|_| corrupt("frame length past the address space"))
    }

    /// [`cframe_ref`](Self::cframe_ref)'s frame as a pointer and a length,
    /// for a caller that may write to it: C's `blosc2_schunk_to_buffer`
    /// hands out a super-chunk's frame in memory this way (not to be
    /// freed), and C callers write to it (C-Blosc2's
    /// `test_frame_metalayer_overflow` does). `None` where `cframe_ref`
    /// gives `None`, and for a frame in memory borrowed, not owned.
    ///
    /// The pointer is valid while [`SChunk::frame_version`] stays the same
    /// (until the super-chunk next changes or flushes its frame, or is
    /// dropped). Bytes written through it change the frame under the
    /// super-chunk, whose readers check what they read as they check a
    /// file's bytes: a later read may fail, it cannot read out of bounds.
    ///
    /// ```
    /// use oxiblosc::{CParams, SChunk};
    /// let mut sc = SChunk::new(CParams::default().typesize(4))?;
    /// sc.append_buffer(&[1u8; 4000])?;
    /// let copy = sc.to_cframe()?;
    /// let (p, n) = sc.cframe_ptr()?.unwrap();
    /// // SAFETY: p holds n bytes until sc changes.
    /// assert_eq!(unsafe { std::slice::from_raw_parts(p, n) }, &copy[..]);
    /// # Ok::<(), oxiblosc::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`SChunk::flush`].
    pub fn cframe_ptr(&mut self) -> Result<Option<(*mut u8, usize)>> {
        let Some(len) = self.memory_frame_len()? else {
            return Ok(None);
        };
        match &mut self.backend {
            Backend::Frame { io, .. } => {
                if io.bytes().is_none_or(|b| b.len() < len) {
                    return Ok(None);
                }
                Ok(io.as_mut_ptr().map(|p| (p, len)))
            }
            Backend::Dir(_) => Ok(None),
        }
    }

    /// Write [`to_cframe`](Self::to_cframe)'s frame to `w`, a piece at a
    /// time: memory stays at one [`CFRAME_PIECE`] for a contiguous frame
    /// and one chunk file for a directory frame (each file's header is
    /// read to lay the frame out, then the file once to write it), whatever
    /// the frame's size. Returns the bytes written. [`SChunk::save`] writes a
    /// file through it.
    ///
    /// ```
    /// use oxiblosc::{CParams, SChunk};
    /// let mut sc = SChunk::new(CParams::default().typesize(4))?;
    /// sc.append_buffer(&[1u8; 4000])?;
    /// let mut out = Vec::new();
    /// let n = sc.write_cframe(&mut out)?;
    /// assert_eq!((n, out), (sc.cframe_len()?, sc.to_cframe()?));
    /// # Ok::<(), oxiblosc::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`crate::Error::Io`] from `w` or from the storage (after which `w`
    /// holds part of the frame); [`crate::Error::Corrupt`] for a directory
    /// frame's chunk file that does not check against the frame, or that
    /// changed between its two reads; as [`to_cframe`](Self::to_cframe)
    /// for a chunk left out at the open.
    pub fn write_cframe(&mut self, w: &mut dyn Write) -> Result<u64> {
        self.check_whole()?;
        self.flush_tail()?;
        let len = self.header.frame_len;
        match &mut self.backend {
            Backend::Frame { io, .. } => {
                let mut buf = vec![0u8; len.min(CFRAME_PIECE as u64) as usize];
                let mut at = 0u64;
                while at < len {
                    let n = (len - at).min(buf.len() as u64) as usize;
                    io.read_exact_at(at, &mut buf[..n])?;
                    w.write_all(&buf[..n])?;
                    at += n as u64;
                }
                Ok(len)
            }
            Backend::Dir(dir) => {
                let dir = dir.clone();
                let plan = self.dir_cframe(&dir)?;
                write_dir_cframe(&dir, &plan, w)?;
                Ok(plan.frame_len)
            }
        }
    }

    /// Lay out a directory frame's cframe: every chunk file's header read,
    /// checked as a reader checks it against the file's length, and
    /// measured.
    fn dir_cframe(&mut self, dir: &DirFrame) -> Result<DirCframe> {
        let (files, offsets, held, section) = match self.offsets {
            Offsets::Repeated { value, len } => self.repeated_dir_section(dir, value, len)?,
            Offsets::Explicit(_) => self.explicit_dir_section(dir)?,
        };
        if self.header.chunksize == 0 && held != self.header.nbytes as u64 {
            return Err(corrupt(format!(
                "the chunks hold {held} bytes, the header says {}",
                self.header.nbytes
            )));
        }
        let mut h = self.header.clone();
        h.kind = FrameKind::Contiguous;
        h.cbytes = i64::try_from(section).map_err(|_| corrupt("chunks section too large"))?;
        let mut header = frame::raw::encode_header(&mut h, &self.metalayers)?;
        let mut tail = Vec::new();
        if !offsets.is_empty() {
            tail.extend_from_slice(&encode_offsets(&offsets)?);
        }
        tail.extend_from_slice(&frame::raw::encode_trailer(&self.vlmetalayers)?);
        h.frame_len = header.len() as u64 + section + tail.len() as u64;
        header[..frame::HEADER_FIXED_LEN].copy_from_slice(&h.encode_fixed());
        Ok(DirCframe {
            header,
            files,
            tail,
            frame_len: h.frame_len,
        })
    }

    /// The chunk files in section order (with their lengths and sizes), the
    /// offsets, the bytes held and the section's length of a directory
    /// frame's cframe, for an explicit index.
    fn explicit_dir_section(&mut self, dir: &DirFrame) -> Result<DirSection> {
        let n = self.offsets.len();
        let mut offs = Vec::with_capacity(n.min(1 << 20));
        let mut files = Vec::new();
        let mut held = 0u64;
        let mut section = 0u64;
        // Entries naming the same chunk file share one copy of it
        // (a cframe's index may repeat an offset): millions of
        // entries naming one file made a copy each, a frame of
        // gigabytes from a few kilobytes of input.
        // Per file: where it is in the section, its length and the sizes
        // its header gives.
        let mut placed: std::collections::HashMap<u64, (u64, usize, Sizes)> =
            std::collections::HashMap::new();
        for i in 0..n {
            match self.entry(i)? {
                ChunkEntry::Special(_) => offs.push(self.offsets.get(i).unwrap_or(0)),
                ChunkEntry::Stored(id) => {
                    let (at, len, sizes) = match placed.get(&id) {
                        Some(&p) => p,
                        None => {
                            let (len, sizes) = chunk_file_layout(dir, id)?;
                            let p = (section, len, sizes);
                            section += len as u64;
                            files.push((id, len, sizes));
                            placed.insert(id, p);
                            p
                        }
                    };
                    // Checked as a reader checks it, for every entry
                    // (the last may be shorter): a corrupt chunk file
                    // is an error here, not a frame that does not
                    // reopen.
                    frame::check_stored_fields(&self.header, n, len, sizes, i)?;
                    held += sizes.0 as u64;
                    offs.push(at as i64);
                }
            }
        }
        Ok((files, Offsets::Explicit(offs), held, section))
    }

    /// The same for an index that is one value repeated `n` times (a
    /// special code, or one chunk file): the section holds the file once
    /// and the index stays repeated, in time and memory of one chunk
    /// whatever `n` (a 204-byte index may stand for millions of entries;
    /// expanding it took seconds and hundreds of megabytes before failing
    /// on a frame that would not reopen).
    fn repeated_dir_section(&mut self, dir: &DirFrame, value: i64, n: usize) -> Result<DirSection> {
        match ChunkEntry::from_raw(value)? {
            ChunkEntry::Special(_) => Ok((Vec::new(), Offsets::Repeated { value, len: n }, 0, 0)),
            ChunkEntry::Stored(id) => {
                let (len, sizes) = chunk_file_layout(dir, id)?;
                // Checked as a reader checks each entry: the first, and the
                // last (which may be shorter).
                frame::check_stored_fields(&self.header, n, len, sizes, 0)?;
                frame::check_stored_fields(&self.header, n, len, sizes, n.saturating_sub(1))?;
                Ok((
                    vec![(id, len, sizes)],
                    Offsets::Repeated { value: 0, len: n },
                    (sizes.0 as u64).saturating_mul(n as u64),
                    len as u64,
                ))
            }
        }
    }
}

/// A super-chunk's contiguous frame laid out and not yet written
/// ([`SChunk::cframe_layout`]): its length, then its bytes into a buffer
/// of the caller's. It borrows the super-chunk, which cannot change in
/// between.
pub struct CframeLayout<'a> {
    sc: &'a mut SChunk,
    /// A directory frame's layout and the directory (`None`: a contiguous
    /// frame, whose header has its length).
    dir: Option<(DirCframe, DirFrame)>,
}

impl CframeLayout<'_> {
    /// The frame's length in bytes.
    pub fn frame_len(&self) -> u64 {
        self.dir
            .as_ref()
            .map_or(self.sc.header.frame_len, |(p, _)| p.frame_len)
    }

    /// Write the frame to the start of `dst`; its length.
    ///
    /// # Errors
    /// [`crate::Error::DstTooSmall`] when `dst` is shorter than
    /// [`frame_len`](Self::frame_len); I/O errors from the storage;
    /// [`crate::Error::Corrupt`] for a directory frame's chunk file that
    /// changed since the layout or a frame that does not open as written.
    pub fn write_into(self, dst: &mut [u8]) -> Result<usize> {
        let len = self.frame_len();
        let n = usize::try_from(len)
            .ok()
            .filter(|&n| n <= dst.len())
            .ok_or(crate::Error::DstTooSmall {
                needed: usize::try_from(len).unwrap_or(usize::MAX),
                available: dst.len(),
            })?;
        let dst = &mut dst[..n];
        match (self.dir, &mut self.sc.backend) {
            (Some((plan, dir)), _) => {
                let mut w = &mut *dst;
                write_dir_cframe(&dir, &plan, &mut w)?;
                if !w.is_empty() {
                    return Err(corrupt("the directory frame came out short"));
                }
                // The frame must open as written (index, sizes, trailer).
                Frame::parse(dst)?;
            }
            (None, Backend::Frame { io, .. }) => match io.slice(0, n) {
                Some(f) => dst.copy_from_slice(f),
                None => io.read_exact_at(0, dst)?,
            },
            (None, Backend::Dir(_)) => {
                return Err(corrupt("a directory frame without its layout"));
            }
        }
        Ok(n)
    }
}

/// Write a directory frame's cframe laid out as `plan` to `w`: each chunk
/// file read again and written, refused when its length or sizes are no
/// longer the layout's.
fn write_dir_cframe(dir: &DirFrame, plan: &DirCframe, w: &mut dyn Write) -> Result<()> {
    w.write_all(&plan.header)?;
    for &(id, len, sizes) in &plan.files {
        let file = dir.read_chunk(id)?;
        let bytes = frame::raw::widen_short_chunk(&file)?;
        let ch = ChunkHeader::parse(&bytes)?;
        if bytes.len() != len || (ch.nbytes, ch.cbytes, ch.is_lazy()) != sizes {
            return Err(corrupt(format!(
                "chunk file {id:08X} changed while the frame was written"
            )));
        }
        w.write_all(&bytes)?;
    }
    w.write_all(&plan.tail)?;
    Ok(())
}

/// Chunk file `id`'s length in a contiguous frame and its header's sizes,
/// from its header alone (a file shorter than an extended header is read
/// whole and widened to one, as [`SChunk::write_cframe`] writes it).
fn chunk_file_layout(dir: &DirFrame, id: u64) -> Result<(usize, Sizes)> {
    let (head, len) = dir.read_chunk_head(id, CHUNK_HEAD)?;
    let (len, ch) = if len < CHUNK_HEAD {
        let bytes = frame::raw::widen_short_chunk(&head)?;
        (bytes.len(), ChunkHeader::parse(&bytes)?)
    } else {
        let len = len as usize;
        (len, ChunkHeader::parse_head_of(&head, len)?.0)
    };
    Ok((len, (ch.nbytes, ch.cbytes, ch.is_lazy())))
}

/// An extended chunk header's length: what the layout of a directory
/// frame's cframe reads of each chunk file.
const CHUNK_HEAD: u64 = 32;

/// The most bytes of a contiguous frame [`SChunk::write_cframe`] holds at
/// once.
pub const CFRAME_PIECE: usize = 1 << 20;

/// A chunk header's `nbytes`, `cbytes` and lazy flag.
type Sizes = (usize, usize, bool);

/// A directory frame's chunk files in section order (id, length, sizes),
/// its cframe's offsets, the bytes its chunks hold and the section's
/// length.
type DirSection = (Vec<(u64, usize, Sizes)>, Offsets, u64, u64);

/// A directory frame's cframe laid out: the header, the chunk files to
/// write after it (id, length, the sizes its header gave), then the index
/// and the trailer.
struct DirCframe {
    header: Vec<u8>,
    files: Vec<(u64, usize, Sizes)>,
    tail: Vec<u8>,
    frame_len: u64,
}
