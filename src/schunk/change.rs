//! The chunk list a change makes: `change_chunks` turns an edit of the
//! entries into new chunks, an index and a header for [`SChunk::commit`]
//! (`commit.rs`), the fast append of a frame in memory, and the checks a
//! change passes first (an index a reader decodes, the sizes of a frame
//! turning variable, a header write within one sector).

use std::borrow::Cow;

use super::commit::MetaChange;
use super::{Backend, SChunk, Storage, Tail};
use crate::SpecialValue;
use crate::chunk::ChunkHeader;
use crate::error::{Error, Result, corrupt, invalid_param};
use crate::frame::{self, ChunkEntry, FrameHeader, Metalayer, Offsets};

impl SChunk {
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
}

/// Why a frame of only chunks of 0 bytes is not written (see
/// [`SChunk::change_chunks_with`]).
pub(super) const EMPTY_CHUNKS_ALONE: &str = "a frame cannot hold only chunks of 0 bytes: \
     readers (C-Blosc2's and ours) find no chunk in a frame of no bytes";

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
