//! The write path: every change of chunks, index or trailer goes through
//! `commit` (after `change_chunks`, `change.rs`, for the chunk list), which
//! writes in the crash-safe order the module documentation of [`super`]
//! describes; and `flush_tail`, which completes a frame in memory.

use super::storage::DirFrame;
use super::{Backend, SChunk, Storage, Tail};
use crate::error::{Error, Result, corrupt, invalid_param};
use crate::frame::{self, FrameHeader, Metalayer, Offsets, VlMetalayer};

/// Remove the chunk files `ids` of a directory frame written by a change
/// that failed (no index names them).
fn remove_chunk_files(dir: &DirFrame, ids: &[i64]) {
    for &id in ids {
        dir.remove_chunk(id as u64);
    }
}

pub(super) fn encode_offsets(offsets: &Offsets) -> Result<Vec<u8>> {
    match offsets {
        Offsets::Explicit(v) => frame::raw::encode_index(v),
        Offsets::Repeated { value, len } => frame::raw::encode_repeated_index(*value, *len),
    }
}

/// The largest a chunk of `chunksize` bytes can be stored as: its bytes
/// plus the chunk header ([`crate::MAX_OVERHEAD`]), as a chunk that does not
/// shrink is stored as a copy (0 when chunks have no fixed size).
pub(super) fn chunk_bound(chunksize: i32) -> u64 {
    if chunksize > 0 {
        chunksize as u64 + crate::MAX_OVERHEAD as u64
    } else {
        0
    }
}

/// What a commit changes besides chunks and index: the vlmetalayers
/// (the trailer) and the metalayers (in the header), `None` to keep them.
#[derive(Default)]
pub(super) struct MetaChange {
    pub vlmeta: Option<Vec<VlMetalayer>>,
    pub metas: Option<Vec<Metalayer>>,
}

impl SChunk {
    /// Write header fields that record the writer.
    pub(super) fn stamp(&self, h: &mut FrameHeader) {
        h.tcomp = i16::try_from(self.cparams.nthreads).unwrap_or(i16::MAX);
        h.tdecomp = i16::try_from(self.dparams.nthreads).unwrap_or(i16::MAX);
        h.has_vlmeta = !self.vlmetalayers.is_empty();
    }

    /// Store `new_chunks`, then the index `make(locations)` (or the current
    /// one), then the trailer (of `meta.vlmeta`, or the current vlmetalayers),
    /// then the header `h` (with sizes filled in; with `meta.metas`, the
    /// metalayers too, in the same write). The state changes only when
    /// everything was written.
    pub(super) fn commit<F, C: AsRef<[u8]>>(
        &mut self,
        mut h: FrameHeader,
        new_chunks: Vec<C>,
        make: F,
        meta: MetaChange,
        dead: Vec<(u64, u64)>,
        tail: Tail,
    ) -> Result<()>
    where
        F: FnOnce(&[i64]) -> Result<Option<Offsets>>,
    {
        let fsync = self.fsync;
        let MetaChange { vlmeta, metas } = meta;
        // Metalayers changed along (`rebuild_chunks_with_meta`) are written
        // by the commit write itself: the change is old-or-new as a whole.
        let freed: u64 = dead.iter().map(|&(_, l)| l).sum();
        let sizes: Vec<u64> = new_chunks.iter().map(|c| c.as_ref().len() as u64).collect();
        let mut alloc = None;
        let new_live: u64 = sizes.iter().sum();
        let live = (self.live_cbytes + new_live).saturating_sub(freed);
        let vl_changed = vlmeta.is_some();
        let vl = vlmeta.unwrap_or_else(|| self.vlmetalayers.clone());
        h.tcomp = i16::try_from(self.cparams.nthreads).unwrap_or(i16::MAX);
        h.tdecomp = i16::try_from(self.dparams.nthreads).unwrap_or(i16::MAX);
        h.has_vlmeta = !vl.is_empty();
        // A memory frame leaves its index and trailer to `flush_tail`
        // (`to_cframe`): new chunks go over them, so they are stale from
        // here until written whole again (also after a failure).
        let memory = matches!(
            self.backend,
            Backend::Frame {
                storage: Storage::Memory,
                ..
            }
        );
        if memory {
            self.tail_stale = true;
        }
        // Checked now (a later `flush_tail` must not fail on them).
        let trailer = if memory && !vl_changed {
            Vec::new()
        } else {
            frame::raw::encode_trailer(&vl)?
        };
        let offsets;
        match &mut self.backend {
            Backend::Frame { io, .. } if memory => {
                let hl = u64::from(h.header_len);
                // A frame of no bytes has its trailer right after the
                // header (see `EMPTY_TAIL`): what it held before, none of
                // it live, is dropped.
                let mut sect = if h.nbytes == 0 && live == 0 {
                    0
                } else {
                    self.header.cbytes as u64
                };
                let mut locs = Vec::with_capacity(new_chunks.len());
                // One growth of the frame's buffer for all of them and the
                // index and trailer `flush_tail` writes after them (at most
                // 8 bytes an entry, a chunk header, the vlmetalayers'
                // chunks, names and msgpack): a growth after it would copy
                // the frame (see `FrameIo::reserve` for `Vec`). A repeated
                // index no chunk joins stays one entry, however many chunks
                // it stands for (2^27 in a 172-byte frame: 1 GiB reserved
                // for a vlmetalayer added, until session 52).
                let index_bound = match &self.offsets {
                    Offsets::Repeated { .. } if new_chunks.is_empty() => 8,
                    o => 8 * (o.len() + new_chunks.len()) as u64,
                };
                let vl_len: u64 = vl
                    .iter()
                    .map(|m| (m.chunk.len() + m.name.len()) as u64 + 16)
                    .sum();
                io.reserve(new_live + index_bound + vl_len + 4096);
                for c in &new_chunks {
                    let c = c.as_ref();
                    io.write_all_at(hl + sect, c)?;
                    locs.push(sect as i64);
                    sect += c.len() as u64;
                }
                offsets = make(&locs)?.unwrap_or_else(|| self.offsets.clone());
                if offsets.len() > frame::MAX_NCHUNKS {
                    return Err(invalid_param("more than 268435455 chunks"));
                }
                h.cbytes = i64::try_from(sect).map_err(|_| invalid_param("frame too large"))?;
                h.frame_len = hl + sect;
                let bytes = match &metas {
                    None => h.encode_fixed().to_vec(),
                    Some(m) => {
                        let mut hh = h.clone();
                        let mut new = frame::raw::encode_header(&mut hh, m)?;
                        if hh.header_len != h.header_len {
                            return Err(corrupt("metalayer change changed the header length"));
                        }
                        new[..frame::HEADER_FIXED_LEN].copy_from_slice(&h.encode_fixed());
                        new
                    }
                };
                io.write_all_at(0, &bytes)?;
                io.set_len(h.frame_len)?;
            }
            Backend::Frame { io, storage } => {
                let hl = u64::from(h.header_len);
                let persistent = io.is_persistent();
                // A failure before the commit point leaves the old frame;
                // cut back what the change wrote after its end (best effort)
                // so the file is as it was, still writable.
                let old_flen = self.header.frame_len;
                macro_rules! cut {
                    ($e:expr) => {
                        match $e {
                            Ok(v) => v,
                            Err(e) => {
                                if persistent {
                                    let _ = io.set_len(old_flen);
                                }
                                return Err(e.into());
                            }
                        }
                    };
                }
                let old_cbytes = self.header.cbytes as u64;
                let old_end = self.header.frame_len - hl;
                // Where new bytes go, relative to header_len: in memory over
                // the old index (as C-Blosc2 does); on storage that must
                // survive a crash only where the old frame has no live byte
                // (see the module docs).
                // Storage that need not survive a crash puts an empty
                // frame's trailer right after its header now (see
                // `EMPTY_TAIL`); a file gets it there after the commit.
                let mut sect = if !persistent && h.nbytes == 0 && live == 0 {
                    0
                } else {
                    old_cbytes
                };
                let mut locs = Vec::with_capacity(new_chunks.len());
                if persistent {
                    let a = self.space.place(&sizes, old_cbytes, old_end);
                    for (c, &loc) in new_chunks.iter().zip(&a.locs) {
                        cut!(io.write_all_at(hl + loc, c.as_ref()));
                        locs.push(loc as i64);
                    }
                    alloc = Some(a);
                } else {
                    for c in &new_chunks {
                        let c = c.as_ref();
                        io.write_all_at(hl + sect, c)?;
                        locs.push(sect as i64);
                        sect += c.len() as u64;
                    }
                }
                offsets = cut!(make(&locs)).unwrap_or_else(|| self.offsets.clone());
                let index = if h.nbytes > 0 && !offsets.is_empty() {
                    cut!(encode_offsets(&offsets))
                } else {
                    Vec::new()
                };
                if let Some(a) = &alloc {
                    let tail_len = (index.len() + trailer.len()) as u64;
                    sect = match tail {
                        Tail::Auto => {
                            let r = a.reserve().max(chunk_bound(h.chunksize));
                            a.tail(tail_len, Some(r), old_cbytes, old_end)
                        }
                        Tail::Trim => a.tail(tail_len, Some(0), old_cbytes, old_end),
                        Tail::At(p) => p,
                    };
                }
                cut!(io.write_all_at(hl + sect, &index));
                let tpos = hl + sect + index.len() as u64;
                cut!(io.write_all_at(tpos, &trailer));
                let flen = tpos + trailer.len() as u64;
                if persistent && fsync {
                    cut!(io.sync());
                }
                h.cbytes = cut!(i64::try_from(sect).map_err(|_| invalid_param("frame too large")));
                h.frame_len = flen;
                let (old, new) = match &metas {
                    None => (
                        self.header.encode_fixed().to_vec(),
                        h.encode_fixed().to_vec(),
                    ),
                    Some(m) => {
                        let mut hh = h.clone();
                        let mut new = cut!(frame::raw::encode_header(&mut hh, m));
                        if hh.header_len != h.header_len {
                            cut!(Err(corrupt("metalayer change changed the header length")));
                        }
                        new[..frame::HEADER_FIXED_LEN].copy_from_slice(&h.encode_fixed());
                        let mut old = vec![0u8; new.len()];
                        cut!(io.read_exact_at(0, &mut old));
                        (old, new)
                    }
                };
                // The commit point: one write of the changed header bytes
                // (inside one disk sector when metalayers change along: the
                // write that must not tear).
                if let Some(a) = (0..old.len()).find(|&k| old[k] != new[k]) {
                    let b = (0..old.len()).rfind(|&k| old[k] != new[k]).unwrap_or(a);
                    let at = match storage {
                        Storage::File { offset, .. } => *offset,
                        _ => 0,
                    };
                    if metas.is_some()
                        && persistent
                        && (at + a as u64) / 512 != (at + b as u64) / 512
                    {
                        cut!(Err(Error::Unsupported(
                            "the header bytes a metalayer change and the sizes touch span two \
                             disk sectors"
                                .into()
                        )));
                    }
                    cut!(io.write_all_at(a as u64, &new[a..=b]));
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
                    let r = dir.write_chunk(id as u64, c.as_ref(), fsync);
                    locs.push(id);
                    if let Err(e) = r {
                        remove_chunk_files(&dir, &locs);
                        return Err(e);
                    }
                }
                offsets = make(&locs)?.unwrap_or_else(|| self.offsets.clone());
                h.cbytes = live as i64;
                let mut bytes =
                    frame::raw::encode_header(&mut h, metas.as_ref().unwrap_or(&self.metalayers))?;
                if h.nbytes > 0 && !offsets.is_empty() {
                    bytes.extend_from_slice(&encode_offsets(&offsets)?);
                }
                bytes.extend_from_slice(&trailer);
                h.frame_len = bytes.len() as u64;
                bytes[..frame::HEADER_FIXED_LEN].copy_from_slice(&h.encode_fixed());
                if let Err(e) = dir.replace_index(&bytes, fsync) {
                    // The old index still names the old chunk files only.
                    remove_chunk_files(&dir, &locs);
                    return Err(e);
                }
            }
        }
        self.tail_stale = memory;
        self.header = h;
        self.offsets = offsets;
        self.vlmetalayers = vl;
        if let Some(m) = metas {
            self.metalayers = m;
        }
        self.live_cbytes = live;
        if alloc.is_some() {
            self.tidy_on_close = true;
        }
        if let Some(a) = alloc {
            let dead: Vec<u64> = dead.iter().map(|&(l, _)| l).collect();
            self.space.commit(a, &sizes, &dead);
        }
        // A frame in memory does not keep what its changes left dead
        // without bound (C-Blosc2's super-chunk in memory frees a replaced
        // chunk; a loop of `set_slice` calls grew ours by a chunk each):
        // compacted once the dead bytes pass the live ones (or
        // `MEMORY_SLACK`), it holds at most about twice its chunks, and
        // each byte written is copied at most about twice more (amortised).
        // The change above is done: a compaction that fails (an index
        // that does not encode, before anything is written) leaves the
        // frame as it is, dead bytes and all.
        if memory && self.dead_bytes() > self.live_cbytes.max(MEMORY_SLACK) {
            let _ = self.compact();
        }
        // EMPTY_TAIL: a frame of no bytes is read with its trailer right
        // after the header (C-Blosc2's `get_trailer_offset`: no index, and
        // the frame's length is not used to find it). A file's change puts
        // the trailer where the old frame has no live byte, so one left
        // elsewhere is moved there by a trim (one or two more crash-safe
        // commits; its own commits use `Tail::Trim`). The change is done:
        // a trim that fails leaves a frame we read, C-Blosc2 reads its
        // older trailer there, and `close` (or a drop) trims again.
        if self.header.nbytes == 0
            && self.header.cbytes != 0
            && tail == Tail::Auto
            && self.is_persistent_frame()
        {
            let _ = self.trim();
        }
        Ok(())
    }
}

/// The dead bytes a frame in memory may hold beside fewer live ones before
/// a change compacts it (see [`SChunk::commit`]).
const MEMORY_SLACK: u64 = 1 << 20;

impl SChunk {
    /// Write a memory frame's offsets index and trailer after its chunks
    /// (left out by the changes since the last flush, see `tail_stale`),
    /// and its header with the frame's length: the frame in memory is then
    /// whole, as [`SChunk::to_cframe`] returns it. Nothing to do otherwise.
    pub(crate) fn flush_tail(&mut self) -> Result<()> {
        if !self.tail_stale {
            return Ok(());
        }
        let Backend::Frame { io, .. } = &mut self.backend else {
            self.tail_stale = false;
            return Ok(());
        };
        let hl = u64::from(self.header.header_len);
        let end = hl + self.header.cbytes.max(0) as u64;
        let index = if self.header.nbytes > 0 && !self.offsets.is_empty() {
            encode_offsets(&self.offsets)?
        } else {
            Vec::new()
        };
        let trailer = frame::raw::encode_trailer(&self.vlmetalayers)?;
        io.write_all_at(end, &index)?;
        io.write_all_at(end + index.len() as u64, &trailer)?;
        let mut h = self.header.clone();
        h.frame_len = end + (index.len() + trailer.len()) as u64;
        io.write_all_at(0, &h.encode_fixed())?;
        io.set_len(h.frame_len)?;
        self.header = h;
        self.tail_stale = false;
        Ok(())
    }
}
