//! C's `data` array of an in-memory super-chunk without a frame: the
//! changes C's pointer array must follow ([`DataEdit`]), and the refresh
//! of the array after a call: copies of the chunks for super-chunks of
//! `blosc2_schunk_new`, pointers into the frame for an NDArray's.

use std::borrow::Cow;
use std::collections::HashMap;

use oxiblosc::schunk::{ChunkStamp, SChunk};

use super::Handle;

/// A change of an in-memory super-chunk's chunks that C's `data` array
/// (a copy of each chunk, for super-chunks without a frame) must follow,
/// other than appends (found by the count). Noted by the call that made
/// it, when it worked; [`Handle::sync_data`] applies it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DataEdit {
    /// None since the last refresh.
    None,
    /// Chunk `i` inserted.
    Insert(usize),
    /// Chunk `i` deleted.
    Delete(usize),
    /// Chunk `i` replaced.
    Update(usize),
    /// Anything else: copy every chunk again.
    All,
}

impl DataEdit {
    /// Note `e` after this one: two changes need every chunk again.
    pub(crate) fn note(&mut self, e: DataEdit) {
        *self = if *self == DataEdit::None {
            e
        } else {
            DataEdit::All
        };
    }
}

/// A copy of chunk `i` for C's `data` array (`None` when it does not read).
fn copy_chunk(sc: &mut SChunk, i: usize) -> Option<Vec<u8>> {
    sc.get_chunk(i).map(|c| c.into_owned()).ok()
}

impl Handle {
    /// Refresh C's `data` array (in-memory super-chunks without a frame):
    /// the one chunk an insert, update or delete changed (a pointer array
    /// edit, as C's), the chunks appended, or all of them after another
    /// change. A memory frame is written whole first when C sees it as a
    /// frame (`contiguous`: its `frame->len`).
    pub(super) fn sync_data(&mut self) {
        if self.urlpath.is_some() || self.storage.contiguous {
            if self.urlpath.is_none() {
                // Cannot fail for a memory frame; a failure leaves the
                // index for `to_cframe`, which reports it.
                let _ = self.sc.flush();
            }
            return;
        }
        if self.data_in_frame {
            self.sync_data_in_frame();
            return;
        }
        let n = self.sc.nchunks();
        let edit = std::mem::replace(&mut self.data_edit, DataEdit::None);
        let had = self.chunks.len();
        let applied = match edit {
            DataEdit::None => n >= had,
            DataEdit::Insert(i) if i <= had && n == had + 1 => match copy_chunk(&mut self.sc, i) {
                Some(c) => {
                    self.chunks.insert(i, c);
                    self.stamps.insert(i, self.sc.chunk_stamp(i));
                    self.data_ptrs.insert(i, self.chunks[i].as_mut_ptr());
                    true
                }
                None => false,
            },
            DataEdit::Delete(i) if i < had && n + 1 == had => {
                self.chunks.remove(i);
                self.stamps.remove(i);
                self.data_ptrs.remove(i);
                true
            }
            DataEdit::Update(i) if i < had && n == had => match copy_chunk(&mut self.sc, i) {
                Some(c) => {
                    self.chunks[i] = c;
                    self.stamps[i] = self.sc.chunk_stamp(i);
                    self.data_ptrs[i] = self.chunks[i].as_mut_ptr();
                    true
                }
                None => false,
            },
            _ => false,
        };
        if !applied {
            self.rematch_data(n);
        }
        for i in self.chunks.len()..n {
            match copy_chunk(&mut self.sc, i) {
                Some(c) => {
                    self.chunks.push(c);
                    self.stamps.push(self.sc.chunk_stamp(i));
                    self.data_ptrs.push(self.chunks[i].as_mut_ptr());
                }
                None => {
                    self.data_edit = DataEdit::All;
                    break;
                }
            }
        }
        self.c.data = self.data_ptrs.as_mut_ptr();
        self.c.data_len = self.data_ptrs.len();
    }

    /// C's `data` array of an NDArray's handle: pointers into the frame in
    /// memory, so that its writes copy no chunk a second time (copies made
    /// `b2nd_concatenate` 4.5 times slower, `perf/README.md` session 38).
    /// A special chunk the index alone records points to one made for its
    /// stamp (kept while used). The pointers are made again whenever the
    /// frame's version moved ([`SChunk::frame_version`]): after any call
    /// that wrote a byte of it (a change, a flush of its index by
    /// `to_buffer` or `frame_len`) or moved its buffer or its chunks. A
    /// write through the frame's buffer ends the provenance of pointers
    /// taken before (`b2nd/data_tests.rs`, under Miri). C may read them
    /// until the next call that changes the array or writes its frame
    /// (C-Blosc2 frees a replaced chunk too).
    fn sync_data_in_frame(&mut self) {
        let n = self.sc.nchunks();
        let edit = std::mem::replace(&mut self.data_edit, DataEdit::None);
        let version = self.sc.frame_version();
        if edit == DataEdit::None
            && n == self.data_ptrs.len()
            && version.is_some()
            && version == self.data_version
        {
            return;
        }
        let mut old = std::mem::take(&mut self.specials);
        self.data_ptrs.clear();
        self.data_version = version;
        for i in 0..n {
            let stamp = self.sc.chunk_stamp(i);
            // A special chunk made before (kept, or from the last refresh).
            if let Some(s) = stamp {
                if let Some(c) = old.remove(&s) {
                    self.specials.insert(s, c);
                }
                if let Some(c) = self.specials.get_mut(&s) {
                    self.data_ptrs.push(c.as_mut_ptr());
                    continue;
                }
            }
            let p = match (self.sc.chunk_shared(i), stamp) {
                (Ok(Cow::Borrowed(c)), _) => c.as_ptr() as *mut u8,
                (Ok(Cow::Owned(c)), Some(s)) => self.specials.entry(s).or_insert(c).as_mut_ptr(),
                _ => {
                    self.data_edit = DataEdit::All;
                    break;
                }
            };
            self.data_ptrs.push(p);
        }
        self.c.data = self.data_ptrs.as_mut_ptr();
        self.c.data_len = self.data_ptrs.len();
    }

    /// Bring C's `data` array up to the `n` chunks after any change: each
    /// copy whose chunk the super-chunk still holds (the same
    /// [`ChunkStamp`], at its index or another) is kept, address and all;
    /// the other chunks are copied again. A reorder moves the copies, as
    /// C moves its pointers; a slice write or an NDArray call through
    /// `b2nd_from_schunk` copies the chunks it changed, not all.
    fn rematch_data(&mut self, n: usize) {
        let new: Vec<Option<ChunkStamp>> = (0..n).map(|i| self.sc.chunk_stamp(i)).collect();
        let old_stamps = std::mem::take(&mut self.stamps);
        let mut old: Vec<Option<Vec<u8>>> = std::mem::take(&mut self.chunks)
            .into_iter()
            .map(Some)
            .collect();
        self.data_ptrs.clear();
        // Copies not kept at their own index, by stamp (a stamp held at
        // several indexes, a chunk stored once or a special chunk, has a
        // copy for each; popped in their old order).
        let mut spare: HashMap<ChunkStamp, Vec<usize>> = HashMap::new();
        for (j, s) in old_stamps.iter().enumerate().rev() {
            if let Some(s) = s
                && new.get(j) != Some(&Some(*s))
            {
                spare.entry(*s).or_default().push(j);
            }
        }
        for (i, s) in new.iter().enumerate() {
            let kept = if s.is_some() && old_stamps.get(i) == Some(s) {
                old[i].take()
            } else {
                s.and_then(|s| spare.get_mut(&s)?.pop())
                    .and_then(|j| old[j].take())
            };
            match kept.or_else(|| copy_chunk(&mut self.sc, i)) {
                Some(c) => {
                    self.chunks.push(c);
                    self.stamps.push(*s);
                }
                None => {
                    self.data_edit = DataEdit::All;
                    break;
                }
            }
        }
        self.data_ptrs = self.chunks.iter_mut().map(|c| c.as_mut_ptr()).collect();
    }
}
