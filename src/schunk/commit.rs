//! The write path: every change of chunks, index or trailer goes through
//! `change_chunks` / `commit`, which write in the crash-safe order the module
//! documentation of [`super`] describes.

use std::borrow::Cow;

use super::storage::DirFrame;
use super::{Backend, SChunk, Storage, Tail};
use crate::SpecialValue;
use crate::chunk::ChunkHeader;
use crate::error::{Error, Result, corrupt, invalid_param};
use crate::frame::{self, ChunkEntry, FrameHeader, Metalayer, Offsets, VlMetalayer};

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

    /// A change of the chunk list: `edit` gets the explicit offsets and a
    /// `place` function that stores a chunk (or turns it into an index
    /// code) and returns its entry; it returns the entries whose stored
    /// bytes become garbage.
    pub(super) fn change_chunks<'a, F>(
        &mut self,
        new_cs: i32,
        nbytes: i64,
        vlblocks: bool,
        edit: F,
    ) -> Result<()>
    where
        F: FnOnce(
            &mut Vec<i64>,
            &mut dyn FnMut(&'a [u8], &ChunkHeader) -> Result<i64>,
        ) -> Result<Vec<i64>>,
    {
        self.change_chunks_with(new_cs, nbytes, vlblocks, None, edit)
    }

    /// [`SChunk::change_chunks`] that also writes `metas` (new metalayers
    /// of the same stored sizes) in the same commit write.
    pub(super) fn change_chunks_with<'a, F>(
        &mut self,
        new_cs: i32,
        nbytes: i64,
        vlblocks: bool,
        metas: Option<Vec<Metalayer>>,
        edit: F,
    ) -> Result<()>
    where
        F: FnOnce(
            &mut Vec<i64>,
            &mut dyn FnMut(&'a [u8], &ChunkHeader) -> Result<i64>,
        ) -> Result<Vec<i64>>,
    {
        self.check_index_editable()?;
        let mut offs = self.offsets.to_vec();
        // The new stored chunks, borrowed from the caller (a rebuild of
        // megabytes of chunks copied none of them here).
        let mut pending: Vec<Cow<'a, [u8]>> = Vec::new();
        // Placeholder entries for new stored chunks: -1 - k (never a valid
        // entry: special codes are below -2^62), replaced once
        // their location is known.
        const TAG: i64 = -1;
        let is_tag = |e: i64| e <= TAG && e > -(1 << 40);
        let garbage = {
            let mut place = |bytes: &'a [u8], h: &ChunkHeader| -> Result<i64> {
                if let Some(code) = self.index_code(new_cs, h) {
                    return code;
                }
                pending.push(Cow::Borrowed(bytes));
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
                    pending.push(Cow::Owned(chunk));
                    *e = TAG - (pending.len() as i64 - 1);
                }
            }
        }
        // Stored chunks that die with this change: each dropped entry (once)
        // that no new entry names.
        let mut dead = Vec::new();
        let persistent = self.is_persistent_frame();
        let mut dropped: Vec<u64> = garbage
            .iter()
            .filter_map(|&g| match ChunkEntry::from_raw(g) {
                Ok(ChunkEntry::Stored(loc)) => Some(loc),
                _ => None,
            })
            .collect();
        dropped.sort_unstable();
        dropped.dedup();
        if !dropped.is_empty() {
            let set = Names::of(&offs, dropped.len());
            for loc in dropped {
                if set.names(&offs, loc as i64) {
                    continue;
                }
                // A file frame's space map holds the length (no read of the
                // chunk's header per dropped chunk); it is kept only for
                // storage that must survive a crash, and a directory's chunk
                // files are not in it.
                let len = match self.space.span(loc) {
                    Some(len) if persistent => len,
                    _ => self.stored_len(loc).unwrap_or(0),
                };
                dead.push((loc, len));
            }
        }
        let dead_files: Vec<u64> = match self.backend {
            Backend::Dir(_) => dead.iter().map(|&(loc, _)| loc).collect(),
            _ => Vec::new(),
        };
        // Turning variable: a reader then checks that the stored chunks'
        // sizes add up to nbytes (chunks of a fixed-size frame are checked
        // only when read), so check it here first and never write a frame
        // that would not reopen.
        if new_cs == 0 && self.header.chunksize != 0 && nbytes > 0 {
            self.check_variable_sum(&offs, &pending, nbytes)?;
        }
        // A frame of no bytes has no index (C-Blosc2 reads none; nor do
        // we): chunks that hold no byte would be lost on reopen unless one
        // beside them does. Storage that is written with each change
        // refuses to hold them alone; a super-chunk in memory holds them
        // (as C-Blosc2's does) and refuses to be written as a frame
        // ([`SChunk::check_writable_frame`]).
        if nbytes == 0 && !offs.is_empty() && !self.is_memory_frame() {
            return Err(invalid_param(EMPTY_CHUNKS_ALONE));
        }
        let h = self.changed_header(new_cs, nbytes, vlblocks, offs.is_empty());
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
            MetaChange {
                vlmeta: None,
                metas,
            },
            dead,
            Tail::Auto,
        )?;
        // Removed once the new index is in place. No new chunk can have
        // taken a dead file's number: `commit` numbers new files from one
        // past the largest the old index names.
        if let Backend::Dir(dir) = &self.backend {
            for &loc in &dead_files {
                dir.remove_chunk(loc);
            }
        }
        Ok(())
    }

    /// The header of the frame after a change of its chunk list: chunk
    /// size `new_cs` (-1 again when the list is `empty` and had none),
    /// `nbytes`, and the format version and flags these imply.
    fn changed_header(&self, new_cs: i32, nbytes: i64, vlblocks: bool, empty: bool) -> FrameHeader {
        let mut h = self.header.clone();
        h.chunksize = if empty && new_cs <= 0 && h.chunksize < 0 {
            -1
        } else {
            new_cs
        };
        h.nbytes = nbytes;
        let version = if h.chunksize == 0 || vlblocks { 3 } else { 2 };
        let mut gf = (h.general_flags & 0x30) | version;
        if h.chunksize == 0 {
            gf |= frame::raw::GFLAG_VARIABLE_CHUNKS;
        }
        if vlblocks {
            gf |= frame::raw::GFLAG_VLBLOCKS;
        }
        h.general_flags = gf;
        h
    }

    /// The index code a new chunk `h` is stored as instead of its bytes:
    /// zeros, NaN (of the frame's type size) and uninit chunks of the whole
    /// chunk size, when it stays fixed (`new_cs > 0`: a code does not say
    /// its size). A short (last) chunk is stored, as are chunks not of
    /// whole items of the frame's type size. C-Blosc2 codes a short last
    /// chunk of zeros too, but cannot live with it: it makes a code's chunk
    /// with `blosc2_chunk_zeros` (or `_nans`, `_uninit`), which refuses a
    /// size not of whole items, so that it could not read that chunk nor
    /// open the frame from memory with a copy; and a chunk it appends after
    /// a coded short one leaves a frame of variable-size chunks with codes
    /// in its index, which neither C-Blosc2 nor we can open (its own frames
    /// too: the whole frame is lost).
    fn index_code(&self, new_cs: i32, h: &ChunkHeader) -> Option<Result<i64>> {
        let ts = usize::try_from(self.header.typesize).unwrap_or(1).max(1);
        match h.special() {
            Some(k @ (SpecialValue::Zeros | SpecialValue::Nan | SpecialValue::Uninit))
                if new_cs > 0
                    && h.nbytes == new_cs as usize
                    && h.nbytes.is_multiple_of(ts)
                    && (k != SpecialValue::Nan
                        || i32::from(h.typesize) == self.header.typesize) =>
            {
                Some(ChunkEntry::Special(k).to_raw())
            }
            _ => None,
        }
    }

    /// Append checked chunk `chunk` (header `ch`) to a frame in memory
    /// without the copy of the index a change makes (to leave the old one
    /// on failure): its bytes go after the chunks section, its entry onto
    /// the index, the sizes into the header; the index and trailer are
    /// written by [`SChunk::flush_tail`]. `new_cs` and `nbytes` as for
    /// [`SChunk::change_chunks`]. False, with nothing done, where the
    /// general change is needed: another storage, an empty or repeated
    /// index, a chunk size turning variable (stored codes, a sum check).
    pub(super) fn append_in_memory(
        &mut self,
        chunk: &[u8],
        ch: &ChunkHeader,
        new_cs: i32,
        nbytes: i64,
    ) -> Result<bool> {
        let n = self.offsets.len();
        if !matches!(
            self.backend,
            Backend::Frame {
                storage: Storage::Memory,
                ..
            }
        ) || !matches!(self.offsets, Offsets::Explicit(_))
            || n == 0
            || n >= frame::MAX_NCHUNKS
            || (new_cs <= 0 && self.header.chunksize != 0)
        {
            return Ok(false);
        }
        self.check_index_editable()?;
        let mut h = self.changed_header(new_cs, nbytes, ch.is_vlblocks(), false);
        self.stamp(&mut h);
        let code = self.index_code(new_cs, ch).transpose()?;
        let hl = u64::from(h.header_len);
        let end = self.header.cbytes.max(0) as u64;
        let stored = if code.is_some() {
            0
        } else {
            chunk.len() as u64
        };
        h.cbytes = i64::try_from(end + stored).map_err(|_| invalid_param("frame too large"))?;
        h.frame_len = hl + end + stored;
        let Backend::Frame { io, .. } = &mut self.backend else {
            return Ok(false);
        };
        self.tail_stale = true;
        if code.is_none() {
            io.write_all_at(hl + end, chunk)?;
        }
        io.write_all_at(0, &h.encode_fixed())?;
        io.set_len(h.frame_len)?;
        if let Offsets::Explicit(v) = &mut self.offsets {
            v.push(code.unwrap_or(end as i64));
        }
        self.header = h;
        self.live_cbytes += stored;
        Ok(true)
    }

    /// Whether a commit that also writes `metas` changes header bytes of
    /// one disk sector only (always for memory and directory frames): from
    /// the frame's first byte (the fixed fields may all change) to the last
    /// byte `metas` change.
    pub(super) fn header_change_in_one_sector(&self, metas: &[Metalayer]) -> Result<bool> {
        let Backend::Frame { io, storage } = &self.backend else {
            return Ok(true);
        };
        if !io.is_persistent() {
            return Ok(true);
        }
        let at = match storage {
            Storage::File { offset, .. } => *offset,
            _ => 0,
        };
        let old = frame::raw::encode_header(&mut self.header.clone(), &self.metalayers)?;
        let new = frame::raw::encode_header(&mut self.header.clone(), metas)?;
        if old.len() != new.len() {
            return Ok(false);
        }
        let last = (0..new.len())
            .rfind(|&k| old[k] != new[k])
            .unwrap_or(0)
            .max(frame::HEADER_FIXED_LEN - 1);
        Ok(at / 512 == (at + last as u64) / 512)
    }

    /// An edit writes an explicit index of every entry: refuse it when that
    /// index is over what a reader decodes ([`frame::decode_limit`]) — a
    /// 40-byte repeated index may stand for 2^28 entries, which an edit would
    /// expand to 2 GiB and write a frame that does not reopen. The limit
    /// is taken from the bytes that back the chunks (the header and the
    /// stored chunks), the same in memory, in a file and in a directory:
    /// a file's frame length also holds its free space, such as the gap of
    /// one chunk's size a change leaves before the index (2 GiB for chunks
    /// of 2 GiB, after a vlmetalayer added to a 172-byte frame), which let
    /// an edit expand a repeated index to 1 GiB in a file where memory
    /// refused it (until session 52).
    pub(crate) fn check_index_editable(&self) -> Result<()> {
        let n = self.offsets.len().saturating_add(1);
        let backed = u64::from(self.header.header_len).saturating_add(self.live_cbytes);
        let limit = frame::decode_limit(backed);
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
    pub(super) fn check_variable_sum(
        &mut self,
        offs: &[i64],
        pending: &[Cow<'_, [u8]>],
        nbytes: i64,
    ) -> Result<()> {
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

/// Why a frame of only chunks of 0 bytes is not written (see
/// [`SChunk::change_chunks_with`]).
pub(super) const EMPTY_CHUNKS_ALONE: &str = "a frame cannot hold only chunks of 0 bytes: \
     readers (C-Blosc2's and ours) find no chunk in a frame of no bytes";

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

/// Whether an index names an entry, for `k` lookups: a scan of the index
/// per lookup for a few, a set of its entries for more (an edit may drop
/// every old entry, a shrink half of them: a scan each was quadratic; a
/// set of every entry for the one chunk a `set_slice` drops cost more than
/// the rest of the change).
enum Names {
    Scan,
    Set(std::collections::HashSet<i64>),
}

impl Names {
    fn of(index: &[i64], k: usize) -> Names {
        if k > 16 {
            Names::Set(index.iter().copied().collect())
        } else {
            Names::Scan
        }
    }

    fn names(&self, index: &[i64], e: i64) -> bool {
        match self {
            Names::Scan => index.contains(&e),
            Names::Set(s) => s.contains(&e),
        }
    }
}
