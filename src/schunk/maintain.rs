//! Dead space of file-backed frames: how much there is, and `trim` /
//! `compact` to drop it (both crash-safe).

use super::commit::{MetaChange, encode_offsets};
use super::space::Space;
use super::{Backend, SChunk, Storage, Tail};
use crate::error::Result;
use crate::frame::{self, ChunkEntry, Offsets};

impl SChunk {
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
    /// I/O errors; [`Error::Unsupported`](crate::Error::Unsupported) for a read-only super-chunk.
    pub fn trim(&mut self) -> Result<()> {
        self.check_editable()?;
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
                Vec::<Vec<u8>>::new(),
                |_| Ok(None),
                MetaChange::default(),
                Vec::new(),
                Tail::Trim,
            )?;
        }
        self.tidy_on_close = false;
        Ok(())
    }

    /// Finish with a file-backed super-chunk: when it changed, drop its
    /// free space as [`SChunk::tidy`] does, then make everything durable.
    /// Dropping an `SChunk` does the same, ignoring errors; call `close` to
    /// see them. Nothing to do for memory and directory frames or a
    /// read-only super-chunk.
    ///
    /// # Errors
    /// I/O errors (the file then holds the frame of the last successful
    /// change, or the tidied one: every step is crash-safe).
    pub fn close(mut self) -> Result<()> {
        self.tidy()
    }

    /// Drop the free space a file-backed frame accumulated through this
    /// handle's changes: [`SChunk::trim`] always, and [`SChunk::compact`]
    /// instead when the holes between chunks exceed 1 % of the live chunk
    /// bytes (compaction copies every chunk twice; smaller holes are left
    /// for later chunks to fill).
    /// After appends alone the file is then as small as the one C-Blosc2
    /// writes for the same chunks (the 35-byte trailer of the empty frame
    /// stays as a hole before the first chunk). Crash-safe; a no-op when
    /// nothing changed since the last tidy.
    ///
    /// # Errors
    /// I/O errors; [`Error::Unsupported`](crate::Error::Unsupported) for a read-only super-chunk.
    pub fn tidy(&mut self) -> Result<()> {
        if !self.tidy_pending() {
            return Ok(());
        }
        self.check_editable()?;
        if self.space.hole_bytes().saturating_mul(100) > self.live_cbytes {
            self.compact()?;
        } else {
            self.trim()?;
        }
        if let Backend::Frame { io, .. } = &mut self.backend {
            io.sync()?;
        }
        self.tidy_on_close = false;
        Ok(())
    }

    /// Whether [`SChunk::tidy`] has work: a file-backed frame this handle
    /// changed since it was opened or last tidied.
    pub fn tidy_pending(&self) -> bool {
        self.tidy_on_close && self.is_persistent_frame()
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
    /// I/O errors; [`Error::Unsupported`](crate::Error::Unsupported) for a read-only super-chunk.
    pub fn compact(&mut self) -> Result<()> {
        self.check_editable()?;
        // Stored chunks may move: every chunk stamp taken before is stale.
        self.stamp_epoch = super::next_stamp_epoch();
        let persistent = self.is_persistent_frame();
        let Backend::Frame { .. } = &self.backend else {
            return Ok(());
        };
        if persistent && self.space.hole_bytes() == 0 {
            return self.trim();
        }
        // The final layout: distinct stored chunks in index order. A
        // repeated index is one entry however many chunks it stands for,
        // and stays one (`remap`): not expanded, so not refused as an
        // index too large to write (which made `compact` fail in memory
        // where a file without holes trims, until session 52).
        let entries = match &self.offsets {
            Offsets::Repeated { value, .. } => vec![*value],
            Offsets::Explicit(_) => {
                self.check_index_editable()?;
                self.offsets.to_vec()
            }
        };
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
        if !persistent && self.compact_in_place(&order)? {
            return Ok(());
        }
        let remap = |offsets: &Offsets, shift: u64| remap(offsets, &place, shift);
        let fin = remap(&self.offsets, 0);
        let hl = u64::from(self.header.header_len);
        if !persistent {
            let mut h = self.header.clone();
            h.cbytes = total as i64;
            self.stamp(&mut h);
            // The header as stored, metalayers included: a compaction
            // moves chunks, not metalayers. A file's keeps its header (its
            // commits write only the fixed fields); in memory the header
            // was written as ours encodes it, which may differ from one
            // another writer made (C leaves bytes after the layers, a
            // fuzzed one has layers sharing bytes), and a `meta_update`
            // after it then worked in memory and failed in a file (until
            // session 52).
            let mut out = self.stored_header()?;
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
            out.extend_from_slice(&frame::raw::encode_trailer(&self.vlmetalayers)?);
            h.frame_len = out.len() as u64;
            out[..frame::HEADER_FIXED_LEN].copy_from_slice(&h.encode_fixed());
            io.write_all_at(0, &out)?;
            io.set_len(h.frame_len)?;
            self.header = h;
            self.offsets = fin;
            self.tail_stale = false;
            return Ok(());
        }
        let index_len = if self.header.nbytes > 0 && !fin.is_empty() {
            encode_offsets(&fin)?.len() as u64
        } else {
            0
        };
        let tail_len = index_len + frame::raw::encode_trailer(&self.vlmetalayers)?.len() as u64;
        // Step 1: a copy after the frame's end, far enough for step 2's
        // chunks, index and trailer to fit before it.
        let old_end = self.header.frame_len - hl;
        let start = old_end.max(total + tail_len);
        self.copy_chunks(&order, |loc| hl + start + place[&loc], |loc| hl + loc)?;
        let step1 = remap(&self.offsets, start);
        self.commit(
            self.header.clone(),
            Vec::<Vec<u8>>::new(),
            move |_| Ok(Some(step1)),
            MetaChange::default(),
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
            Vec::<Vec<u8>>::new(),
            move |_| Ok(Some(fin)),
            MetaChange::default(),
            Vec::new(),
            Tail::At(total),
        )?;
        self.space = Space::build(order.iter().map(|&(loc, len)| (place[&loc], len)));
        self.tidy_on_close = false;
        Ok(())
    }

    /// [`SChunk::compact`] of a frame that need not survive a crash (in
    /// memory), in place: the stored chunks `order` (`(loc, len)`, each
    /// once) move down in the order they lie, each to right after the one
    /// before, so none is overwritten before it moved, then the index and
    /// trailer follow them. False, with nothing changed, when that cannot
    /// be done (chunks that overlap, a header that would change its length,
    /// a chunk past the storage's end): the caller copies instead.
    fn compact_in_place(&mut self, order: &[(u64, u64)]) -> Result<bool> {
        let mut by_loc = order.to_vec();
        by_loc.sort_unstable();
        if by_loc
            .windows(2)
            .any(|w| w[0].0.saturating_add(w[0].1) > w[1].0)
        {
            return Ok(false);
        }
        let mut place = std::collections::HashMap::with_capacity(by_loc.len());
        let mut total = 0u64;
        for &(loc, len) in &by_loc {
            place.insert(loc, total);
            total += len;
        }
        let fin = remap(&self.offsets, &place, 0);
        let mut h = self.header.clone();
        h.cbytes = total as i64;
        self.stamp(&mut h);
        let hl = u64::from(self.header.header_len);
        // As stored (see `compact`).
        let mut head = self.stored_header()?;
        let mut tail = if h.nbytes > 0 && !fin.is_empty() {
            encode_offsets(&fin)?
        } else {
            Vec::new()
        };
        tail.extend_from_slice(&frame::raw::encode_trailer(&self.vlmetalayers)?);
        h.frame_len = hl + total + tail.len() as u64;
        head[..frame::HEADER_FIXED_LEN].copy_from_slice(&h.encode_fixed());
        let Backend::Frame { io, .. } = &mut self.backend else {
            return Ok(false);
        };
        // Every step that can fail is behind: no chunk has moved yet.
        let end = by_loc.last().map_or(0, |&(loc, len)| hl + loc + len);
        if end > io.storage_len()? {
            return Ok(false);
        }
        for &(loc, len) in &by_loc {
            let to = place[&loc];
            if to != loc {
                io.copy_within(hl + loc, len, hl + to)?;
            }
        }
        io.write_all_at(hl + total, &tail)?;
        io.write_all_at(0, &head)?;
        io.set_len(h.frame_len)?;
        self.header = h;
        self.offsets = fin;
        self.tail_stale = false;
        Ok(true)
    }

    /// Copy each chunk `(loc, len)` of `order` from `from(loc)` to `to(loc)`
    /// (storage positions).
    pub(super) fn copy_chunks(
        &mut self,
        order: &[(u64, u64)],
        to: impl Fn(u64) -> u64,
        from: impl Fn(u64) -> u64,
    ) -> Result<()> {
        let fsync = self.fsync;
        let frame_len = self.header.frame_len;
        let Backend::Frame { io, .. } = &mut self.backend else {
            return Ok(());
        };
        let mut buf = Vec::new();
        let r = (|| {
            for &(loc, len) in order {
                buf.resize(len as usize, 0);
                io.read_exact_at(from(loc), &mut buf)?;
                io.write_all_at(to(loc), &buf)?;
            }
            if fsync {
                io.sync()?;
            }
            Ok(())
        })();
        if r.is_err() {
            // Nothing committed: cut back what was written past the frame.
            let _ = io.set_len(frame_len);
        }
        r
    }
}

impl SChunk {
    /// Whether dropping this handle tidies its file ([`SChunk::tidy`]; on by
    /// default). Turn it off where other processes share the file under
    /// their own locking and expect no write after the last change, or to
    /// tidy on your own terms: the C ABI turns it off and, when it frees a
    /// super-chunk, tidies only a frame still its own, under the frame's
    /// lock and never waiting for it. [`SChunk::close`] still tidies.
    pub fn set_tidy_on_drop(&mut self, on: bool) {
        self.tidy_on_drop = on;
    }
}

impl Drop for SChunk {
    /// Tidies a changed frame in a file ([`Storage::File`]; not one behind
    /// a caller's [`FrameIo`](crate::frame::FrameIo), whose writes the
    /// caller may not expect after the last change) with [`SChunk::tidy`];
    /// errors are ignored (the file keeps the last committed frame): use
    /// [`SChunk::close`] to see them.
    fn drop(&mut self) {
        if self.tidy_on_drop
            && matches!(
                self.backend,
                Backend::Frame {
                    storage: Storage::File { .. },
                    ..
                }
            )
        {
            let _ = self.tidy();
        }
    }
}

/// `offsets` with each stored chunk's location `loc` made `place[loc] +
/// shift` (special entries as they are).
fn remap(offsets: &Offsets, place: &std::collections::HashMap<u64, u64>, shift: u64) -> Offsets {
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
}
