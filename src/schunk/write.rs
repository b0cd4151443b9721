//! Chunk changes: append, insert, update, delete, reorder, special fills
//! and slice writes; each is one commit.

use super::commit::MetaChange;
use super::{Fill, SChunk, Tail};
use crate::chunk::ChunkHeader;
use crate::error::{Result, invalid_param};
use crate::frame::{self, ChunkEntry, Offsets};
use crate::{SpecialValue, special_chunk};

impl SChunk {
    /// Compress `src` with the super-chunk's parameters and append it.
    /// Returns the new number of chunks.
    ///
    /// # Errors
    /// Compression errors and those of [`SChunk::append_chunk`].
    pub fn append_buffer(&mut self, src: &[u8]) -> Result<usize> {
        self.check_editable()?;
        let chunk = self.compressor.compress(src)?;
        self.append_chunk(&chunk)
    }

    /// Append a compressed chunk (copied). Zeros, NaN and uninit chunks
    /// become index codes when the chunk size is fixed and they hold whole
    /// items of the frame's type size (C-Blosc2 reads no other code).
    /// Returns the new number of chunks.
    ///
    /// # Errors
    /// [`Error::InvalidParam`](crate::Error::InvalidParam) for a malformed chunk, or one that
    /// mixes VL-block and regular chunks. A chunk holding 0 bytes, or one
    /// with a 16-byte (Blosc1-style) header, is valid, as in C-Blosc2. A
    /// frame of 0 bytes has no index (readers find no chunk in it), so a
    /// frame in a file or a directory refuses a change that would leave it
    /// only chunks of 0 bytes (`InvalidParam`, nothing changed); a
    /// super-chunk in memory holds them, and refuses to be written as a
    /// frame ([`SChunk::to_cframe`]) until a chunk with data joins them.
    pub fn append_chunk(&mut self, chunk: &[u8]) -> Result<usize> {
        let n = self.nchunks();
        self.insert_chunk(n, chunk)?;
        Ok(self.nchunks())
    }

    pub(super) fn check_new_chunk(&self, chunk: &[u8]) -> Result<ChunkHeader> {
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
        // Empty chunks and 16-byte (Blosc1-style) headers are valid chunks:
        // C-Blosc2 stores them too (test_schunk_min_header_chunk).
        let vl = self.header.general_flags & frame::raw::GFLAG_VLBLOCKS != 0;
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
        self.check_editable()?;
        let n = self.nchunks();
        if i > n {
            return Err(invalid_param(format!("insert at {i} of {n} chunks")));
        }
        self.check_new_chunk(chunk)?;
        let widened = frame::raw::widen_short_chunk(chunk)?;
        let chunk = &widened[..];
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
        if i == n && self.append_in_memory(chunk, &ch, new_cs, nbytes)? {
            return Ok(());
        }
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
        self.check_editable()?;
        let n = self.nchunks();
        if i >= n {
            return Err(invalid_param(format!("update of chunk {i} of {n}")));
        }
        self.check_new_chunk(chunk)?;
        let widened = frame::raw::widen_short_chunk(chunk)?;
        let chunk = &widened[..];
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
    /// [`Error::InvalidParam`](crate::Error::InvalidParam) for `i` out of range.
    pub fn delete_chunk(&mut self, i: usize) -> Result<()> {
        self.check_editable()?;
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
        let vl = self.header.general_flags & frame::raw::GFLAG_VLBLOCKS != 0 && n > 1;
        let old = self.offsets.get(i).unwrap_or(0);
        self.change_chunks(new_cs, nbytes, vl, |offs, _| {
            offs.remove(i);
            Ok(vec![old])
        })
    }

    /// A new chunk list in one commit, `plan` in order: runs of old chunks
    /// kept (as stored) and new chunks. Old chunks the plan does not keep
    /// die. Used by the NDArray edits that move and rebuild many chunks at
    /// once (`ndarray::resize`, `insert`, `set_slice`), so that a failure
    /// leaves the old chunks, not a mix. A run costs a copy of its index
    /// entries (an edit of a 40,000-chunk array keeps one or two runs).
    pub(crate) fn rebuild_chunks(&mut self, plan: &[Rebuild<'_>]) -> Result<()> {
        self.rebuild_chunks_and(plan, None)
    }

    /// [`SChunk::rebuild_chunks`], writing `metas` in the same commit.
    fn rebuild_chunks_and(
        &mut self,
        plan: &[Rebuild<'_>],
        metas: Option<Vec<frame::Metalayer>>,
    ) -> Result<()> {
        self.check_editable()?;
        self.check_index_editable()?;
        let n = self.nchunks();
        let cs = self.header.chunksize;
        // The new chunks' sizes as (size, count) runs, in order.
        let mut sizes: Vec<(usize, usize)> = Vec::new();
        // Each step: old chunks kept, or the new chunk and its header.
        let mut items: Vec<Step> = Vec::with_capacity(plan.len());
        let mut total = 0usize;
        for p in plan {
            match p {
                Rebuild::Keep(r) if r.start <= r.end && r.end <= n => {
                    if r.is_empty() {
                        continue;
                    }
                    if cs > 0 {
                        // Fixed-size chunks: every one has the chunk size
                        // but the last, whose size the header gives (no
                        // read per kept chunk of a file).
                        let full = r.end.min(n - 1).saturating_sub(r.start);
                        if full > 0 {
                            sizes.push((cs as usize, full));
                        }
                        if r.end == n {
                            let last = match self.expected_nbytes(n - 1) {
                                Some(s) => s,
                                None => self.chunk_nbytes(n - 1)?,
                            };
                            sizes.push((last, 1));
                        }
                    } else {
                        for j in r.clone() {
                            sizes.push((self.chunk_nbytes(j)?, 1));
                        }
                    }
                    total += r.len();
                    items.push(Step::Keep(r.clone()));
                }
                Rebuild::Keep(r) => {
                    return Err(invalid_param(format!(
                        "keep chunks {}..{} of {n}",
                        r.start, r.end
                    )));
                }
                Rebuild::New(c) => {
                    let mut h = self.check_new_chunk(c)?;
                    let c = frame::raw::widen_short_chunk(c)?;
                    if let std::borrow::Cow::Owned(w) = &c {
                        h = self.check_new_chunk(w)?;
                    }
                    if h.is_vlblocks() {
                        return Err(invalid_param("VL-block chunks in a rebuilt list"));
                    }
                    sizes.push((h.nbytes, 1));
                    total += 1;
                    items.push(Step::New(c, h));
                }
            }
        }
        // The index written must decode within the limit a reader of the
        // new frame applies (the frame grows by the new stored chunks;
        // zeros, NaN and uninit chunks, most of which become index codes,
        // are left out: a lower bound of the growth, so a stricter limit).
        let grow: u64 = items
            .iter()
            .filter_map(|it| match it {
                Step::New(c, h)
                    if !matches!(
                        h.special(),
                        Some(SpecialValue::Zeros | SpecialValue::Nan | SpecialValue::Uninit)
                    ) =>
                {
                    Some(c.len() as u64)
                }
                _ => None,
            })
            .sum();
        let limit = frame::decode_limit(self.header.frame_len.saturating_add(grow));
        if total.saturating_mul(8) > limit {
            return Err(crate::Error::Unsupported(format!(
                "an index of {total} entries is over the {limit}-byte decode limit"
            )));
        }
        let nbytes = sizes.iter().try_fold(0i64, |t, &(s, k)| {
            (s as i64)
                .checked_mul(k as i64)
                .and_then(|b| t.checked_add(b))
                .ok_or_else(|| invalid_param("nbytes overflows"))
        })?;
        // The chunk size stays fixed when every chunk but the last has it
        // and the last no more; a frame that has none yet and no fixed size
        // takes the first chunk's (as `insert_chunk` does).
        let cs = match (cs, sizes.first()) {
            (c, Some(&(first, _))) if c < 0 && n == 0 => i32::try_from(first).unwrap_or(0),
            (c, _) => c,
        };
        let fixed = cs > 0
            && sizes.split_last().is_none_or(|(&(last, k), rest)| {
                last <= cs as usize
                    && (k == 1 || last == cs as usize)
                    && rest.iter().all(|&(s, _)| s == cs as usize)
            });
        let new_cs = if fixed { cs } else { 0 };
        let vl = self.header.general_flags & frame::raw::GFLAG_VLBLOCKS != 0 && total > 0;
        self.change_chunks_with(new_cs, nbytes, vl, metas, |offs, place| {
            // `offs` holds the old index (a copy): the new one is built
            // from it, run by run.
            let old = std::mem::take(offs);
            let mut new = Vec::with_capacity(total);
            let mut kept = vec![false; old.len()];
            for item in &items {
                match item {
                    Step::Keep(r) => {
                        new.extend_from_slice(&old[r.clone()]);
                        kept[r.clone()].fill(true);
                    }
                    Step::New(bytes, h) => new.push(place(bytes, h)?),
                }
            }
            *offs = new;
            // The entries dropped (those no kept slot names): a set_slice of
            // one chunk of many drops one.
            Ok(old
                .iter()
                .zip(&kept)
                .filter(|&(_, &k)| !k)
                .map(|(&e, _)| e)
                .collect())
        })
    }

    /// [`SChunk::rebuild_chunks`] and metalayer `name`'s update
    /// ([`SChunk::meta_update`]'s rules) in one change: the commit write
    /// carries the metalayer's bytes, so a failure or a crash leaves the
    /// old chunks with the old metalayer or the new with the new. When the
    /// header bytes that change would span two disk sectors of a file (a
    /// header of many metalayers), or the header is one ours would write at
    /// another length (bytes after its layers: written in place by
    /// `meta_update`), the metalayer is updated first, then the chunks
    /// (each change old-or-new, not the two together).
    pub(crate) fn rebuild_chunks_with_meta(
        &mut self,
        plan: &[Rebuild<'_>],
        name: &str,
        content: &[u8],
    ) -> Result<()> {
        self.check_editable()?;
        let metas = self.metas_updated(name, content)?;
        let mut h = self.header.clone();
        frame::raw::encode_header(&mut h, &metas)?;
        if h.header_len != self.header.header_len || !self.header_change_in_one_sector(&metas)? {
            self.meta_update(name, content)?;
            return self.rebuild_chunks(plan);
        }
        self.rebuild_chunks_and(plan, Some(metas))
    }

    /// Reorder: chunk `i` becomes the old chunk `order[i]`. `order` must be
    /// a permutation of `0..nchunks`.
    ///
    /// # Errors
    /// [`Error::InvalidParam`](crate::Error::InvalidParam) when it is not.
    pub fn reorder_chunks(&mut self, order: &[usize]) -> Result<()> {
        self.check_editable()?;
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
        let vl = self.header.general_flags & frame::raw::GFLAG_VLBLOCKS != 0;
        let order = order.to_vec();
        self.change_chunks(new_cs, nbytes, vl, move |offs, _| {
            let old = offs.clone();
            for (i, &o) in order.iter().enumerate() {
                offs[i] = old[o];
            }
            Ok(Vec::new())
        })
    }

    /// Set the size of every chunk but the last before the first chunk is
    /// added, as C code sets `schunk->chunksize` after `blosc2_schunk_new`
    /// (python-blosc2's `SChunk(chunksize=...)` does): `Some(n)` as
    /// [`SChunkBuilder::chunksize`](crate::schunk::SChunkBuilder::chunksize),
    /// `Some(0)` for chunks of any sizes, `None` for the first chunk's size.
    /// The frame is written again with it (crash-safe, as every change).
    ///
    /// ```
    /// let mut sc = oxiblosc::SChunk::new(oxiblosc::CParams::default())?;
    /// sc.set_chunksize(Some(4000))?;
    /// sc.append_buffer(&[7u8; 1000])?; // shorter: the last chunk
    /// assert_eq!(sc.chunksize(), Some(4000));
    /// # Ok::<(), oxiblosc::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::InvalidParam`](crate::Error::InvalidParam) when there are
    /// chunks already or `n` is over `i32::MAX`; a super-chunk opened
    /// read-only, or a write that fails, as for [`SChunk::append_chunk`].
    pub fn set_chunksize(&mut self, n: Option<usize>) -> Result<()> {
        self.check_editable()?;
        if self.nchunks() != 0 {
            return Err(invalid_param("set_chunksize needs an empty super-chunk"));
        }
        let cs = match n {
            None => -1,
            Some(n) => i32::try_from(n).map_err(|_| invalid_param(format!("chunksize {n}")))?,
        };
        if cs == self.header.chunksize {
            return Ok(());
        }
        let old = self.header.clone();
        // The format version and flags as a change of the chunk list writes
        // them: version 3 and the variable-sizes flag for chunks of any size.
        let mut gf = (old.general_flags & 0x30) | if cs == 0 { 3 } else { 2 };
        if cs == 0 {
            gf |= frame::raw::GFLAG_VARIABLE_CHUNKS;
        }
        self.header.chunksize = cs;
        self.header.general_flags = gf;
        let r = self.rewrite_empty(self.metalayers.clone());
        if r.is_err() {
            self.header = old;
        }
        r
    }

    /// Fill an empty super-chunk with `nitems` items of a special value in
    /// chunks of `chunksize` bytes. Zeros, NaN and uninit are recorded in
    /// the index only (as C-Blosc2 does); a repeated value is stored as one
    /// small chunk per chunk.
    ///
    /// # Errors
    /// [`Error::InvalidParam`](crate::Error::InvalidParam) when there are chunks already, sizes do not
    /// fit the type size, or NaN with a type size other than 4 or 8.
    pub fn fill_special(&mut self, nitems: u64, fill: Fill<'_>, chunksize: usize) -> Result<()> {
        self.check_editable()?;
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
            Vec::<Vec<u8>>::new(),
            move |_| {
                Ok(Some(Offsets::Repeated {
                    value: code,
                    len: nchunks,
                }))
            },
            MetaChange::default(),
            Vec::new(),
            Tail::Auto,
        )
    }

    /// Overwrite bytes `[start, start + data.len())` of the flat content
    /// (inside `0..nbytes`): touched chunks are recompressed and replaced
    /// in one change (a crash or a failed write leaves the old or the new
    /// content of the whole slice; the new chunks are held in memory until
    /// then).
    ///
    /// # Errors
    /// [`Error::InvalidParam`](crate::Error::InvalidParam) for a range outside the content.
    pub fn set_slice(&mut self, start: u64, data: &[u8]) -> Result<()> {
        self.check_editable()?;
        let stop = start
            .checked_add(data.len() as u64)
            .filter(|&s| s <= self.nbytes())
            .ok_or_else(|| invalid_param("slice outside the content"))?;
        let (first, mut pos) = self.first_chunk_at(start);
        let mut new = Vec::new();
        for i in first..self.nchunks() {
            if pos >= stop {
                break;
            }
            let n = self.chunk_nbytes(i)? as u64;
            if pos + n > start {
                let a = start.max(pos);
                let b = stop.min(pos + n);
                let src = &data[(a - start) as usize..(b - start) as usize];
                let chunk = if a == pos && b == pos + n {
                    self.compressor.compress(src)?
                } else {
                    let mut d = self.decompress_chunk_vec(i)?;
                    d[(a - pos) as usize..(b - pos) as usize].copy_from_slice(src);
                    self.compressor.compress(&d)?
                };
                let h = self.check_new_chunk(&chunk)?;
                if h.nbytes as u64 != n {
                    return Err(invalid_param("set_slice changed a chunk's size"));
                }
                new.push((i, chunk, h, self.offsets.get(i).unwrap_or(0)));
            }
            pos += n;
        }
        if new.is_empty() {
            return Ok(());
        }
        let cs = self.header.chunksize;
        let nbytes = self.header.nbytes;
        let vl = self.header.general_flags & frame::raw::GFLAG_VLBLOCKS != 0;
        self.change_chunks(cs, nbytes, vl, |offs, place| {
            let mut old = Vec::with_capacity(new.len());
            for (i, chunk, h, o) in &new {
                offs[*i] = place(chunk, h)?;
                old.push(*o);
            }
            Ok(old)
        })
    }
}

/// One step of a new chunk list ([`SChunk::rebuild_chunks`]).
pub(crate) enum Rebuild<'a> {
    /// Old chunks `start..end`, in order, as stored.
    Keep(std::ops::Range<usize>),
    /// A new chunk's bytes (borrowed: another array's chunk in memory).
    New(std::borrow::Cow<'a, [u8]>),
}

impl Rebuild<'_> {
    /// Add old chunk `j` to `plan`: onto the last run when it follows it.
    pub(crate) fn keep(plan: &mut Vec<Self>, j: usize) {
        if let Some(Rebuild::Keep(r)) = plan.last_mut()
            && r.end == j
        {
            r.end += 1;
            return;
        }
        plan.push(Rebuild::Keep(j..j + 1));
    }
}

/// A checked step of [`SChunk::rebuild_chunks`]: old chunks kept, or a new
/// chunk (widened to a Blosc2 header) and its header.
enum Step<'p> {
    Keep(std::ops::Range<usize>),
    /// A new chunk, borrowed from the plan (owned only when widened).
    New(std::borrow::Cow<'p, [u8]>, ChunkHeader),
}
