//! Serialising a super-chunk to one contiguous frame: writing what a
//! memory frame leaves for later ([`SChunk::flush`]), the frame's length
//! ([`SChunk::cframe_len`]) and bytes ([`SChunk::to_cframe`]), a directory
//! frame's chunks gathered into one.

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
    /// pending changes are written. A directory frame's cframe is built to
    /// be measured.
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
        if matches!(self.backend, Backend::Frame { .. }) {
            self.flush_tail()?;
            return Ok(self.header.frame_len);
        }
        Ok(self.to_cframe()?.len() as u64)
    }

    /// The whole super-chunk as one contiguous frame (a copy; for a
    /// directory frame, a compact cframe of its chunks).
    ///
    /// # Errors
    /// I/O errors.
    pub fn to_cframe(&mut self) -> Result<Vec<u8>> {
        self.flush_tail()?;
        match &mut self.backend {
            Backend::Frame { io, .. } => {
                let mut v = vec![0u8; self.header.frame_len as usize];
                io.read_exact_at(0, &mut v)?;
                Ok(v)
            }
            Backend::Dir(dir) => {
                let dir = dir.clone();
                let (section, offsets, held) = match self.offsets {
                    Offsets::Repeated { value, len } => {
                        self.repeated_dir_section(&dir, value, len)?
                    }
                    Offsets::Explicit(_) => self.explicit_dir_section(&dir)?,
                };
                if self.header.chunksize == 0 && held != self.header.nbytes as u64 {
                    return Err(corrupt(format!(
                        "the chunks hold {held} bytes, the header says {}",
                        self.header.nbytes
                    )));
                }
                let mut h = self.header.clone();
                h.kind = FrameKind::Contiguous;
                h.cbytes = section.len() as i64;
                let mut out = frame::raw::encode_header(&mut h, &self.metalayers)?;
                out.extend_from_slice(&section);
                if !offsets.is_empty() {
                    out.extend_from_slice(&encode_offsets(&offsets)?);
                }
                out.extend_from_slice(&frame::raw::encode_trailer(&self.vlmetalayers)?);
                h.frame_len = out.len() as u64;
                out[..frame::HEADER_FIXED_LEN].copy_from_slice(&h.encode_fixed());
                // The frame must open as written (index, sizes, trailer).
                Frame::parse(&out)?;
                Ok(out)
            }
        }
    }

    /// The chunks section, offsets and bytes held of a directory frame's
    /// cframe ([`SChunk::to_cframe`]), for an explicit index.
    fn explicit_dir_section(&mut self, dir: &DirFrame) -> Result<(Vec<u8>, Offsets, u64)> {
        let mut section = Vec::new();
        let n = self.offsets.len();
        let mut offs = Vec::with_capacity(n.min(1 << 20));
        let mut held = 0u64;
        // Entries naming the same chunk file share one copy of it
        // (a cframe's index may repeat an offset): millions of
        // entries naming one file made a copy each, a frame of
        // gigabytes from a few kilobytes of input.
        // Per file: where it is in `section`, its length, its nbytes.
        let mut placed: std::collections::HashMap<u64, (usize, usize, u64)> =
            std::collections::HashMap::new();
        for i in 0..n {
            match self.entry(i)? {
                ChunkEntry::Special(_) => offs.push(self.offsets.get(i).unwrap_or(0)),
                ChunkEntry::Stored(id) => {
                    let (at, len, nb) = match placed.get(&id) {
                        Some(&p) => p,
                        None => {
                            let file = dir.read_chunk(id)?;
                            frame::check_stored_chunk(&self.header, n, &file, i)?;
                            let bytes = frame::raw::widen_short_chunk(&file)?;
                            let nb = ChunkHeader::parse(&bytes)?.nbytes as u64;
                            let p = (section.len(), bytes.len(), nb);
                            section.extend_from_slice(&bytes);
                            placed.insert(id, p);
                            p
                        }
                    };
                    // Checked as a reader checks it, for every entry
                    // (the last may be shorter): a corrupt chunk file
                    // is an error here, not a frame that does not
                    // reopen.
                    frame::check_stored_chunk(&self.header, n, &section[at..at + len], i)?;
                    held += nb;
                    offs.push(at as i64);
                }
            }
        }
        Ok((section, Offsets::Explicit(offs), held))
    }

    /// The same for an index that is one value repeated `n` times (a
    /// special code, or one chunk file): the section holds the file once
    /// and the index stays repeated, in time and memory of one chunk
    /// whatever `n` (a 204-byte index may stand for millions of entries;
    /// expanding it took seconds and hundreds of megabytes before failing
    /// on a frame that would not reopen).
    fn repeated_dir_section(
        &mut self,
        dir: &DirFrame,
        value: i64,
        n: usize,
    ) -> Result<(Vec<u8>, Offsets, u64)> {
        match ChunkEntry::from_raw(value)? {
            ChunkEntry::Special(_) => Ok((Vec::new(), Offsets::Repeated { value, len: n }, 0)),
            ChunkEntry::Stored(id) => {
                let file = dir.read_chunk(id)?;
                // Checked as a reader checks each entry: the first, and the
                // last (which may be shorter).
                frame::check_stored_chunk(&self.header, n, &file, 0)?;
                frame::check_stored_chunk(&self.header, n, &file, n.saturating_sub(1))?;
                let bytes = frame::raw::widen_short_chunk(&file)?.into_owned();
                let nb = ChunkHeader::parse(&bytes)?.nbytes as u64;
                Ok((
                    bytes,
                    Offsets::Repeated { value: 0, len: n },
                    nb.saturating_mul(n as u64),
                ))
            }
        }
    }
}
