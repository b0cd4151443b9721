//! A chunk's blocks compressed on a pool, placed in order as they finish.
//!
//! Blocks are handed out one at a time in index order (an atomic counter,
//! C-Blosc2's dynamic schedule for compression), each compressed into its
//! own staging slot with the room its worst case needs. A block is placed
//! (copied after the blocks before it, its start written in the offsets
//! table) as soon as every block before it is placed, by whichever worker
//! holds the placing lock then, while the other workers go on compressing:
//! the copy of a chunk's compressed bytes is not a serial phase after the
//! parallel one (it was: 14 % of the wall time of 2-thread compression of
//! data that compresses to 65 %, perf/README.md, session 43). What is not
//! placed when the workers finish (a worker found the lock taken) the
//! caller places.
//!
//! Placing follows the serial run exactly, so the chunk is the serial
//! chunk byte for byte: a block whose worst case no longer fits in the
//! destination is compressed again right there with the room a serial run
//! gives it (the codecs may decide differently with less room), and a block
//! that does not fit makes the chunk fall back to memcpy.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError, TryLockError};

use rayon::prelude::*;

use super::Blocks;
use crate::error::{Error, Result};
use crate::parallel::{Scratches, Slot, Team};

/// Where placing stands.
struct Place<'d> {
    /// The chunk being written (the destination's room: `destsize`).
    dst: &'d mut [u8],
    /// The end of what is placed.
    ntbytes: usize,
    /// The first block not placed.
    next: usize,
}

/// What every worker of one chunk shares.
struct Run<'r, 'b> {
    blocks: &'r Blocks<'b>,
    slots: &'r [Slot],
    scratch: Scratches<'r>,
    /// The stride of the staging slots (block 0's worst case).
    stride: usize,
    /// Where block `i`'s start goes in the offsets table.
    bstarts_at: usize,
    /// The next block to hand out.
    next_block: AtomicUsize,
    /// A block failed or did not fit: nothing more is handed out or placed.
    stopped: AtomicBool,
    /// [`Place::next`], readable without the lock.
    placed: AtomicUsize,
    place: Mutex<Place<'r>>,
    /// The first error met (the workers stop handing out blocks).
    failure: Mutex<Option<Error>>,
}

/// Compress the blocks of `blocks` on `team`'s pool into `dst` from
/// `ntbytes` on (block `i`'s start written at `bstarts_at + 4 * i`): the
/// end of the chunk, or `None` when a block did not fit (store the chunk
/// raw).
pub(super) fn encode_blocks(
    team: Team<'_>,
    blocks: &Blocks<'_>,
    dst: &mut [u8],
    ntbytes: usize,
    bstarts_at: usize,
) -> Result<Option<usize>> {
    let nblocks = blocks.lay.nblocks;
    let stride = blocks.worst(0);
    if team.slots.len() < nblocks {
        team.slots.resize_with(nblocks, Slot::default);
    }
    for slot in &mut team.slots[..nblocks] {
        let staged = slot
            .staged
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner);
        if staged.buf.len() < stride {
            staged.buf.resize(stride, 0);
        }
        staged.len = None;
        *slot.done.get_mut() = false;
    }
    let workers = team.scratch.len().min(nblocks);
    let run = Run {
        blocks,
        slots: &team.slots[..nblocks],
        scratch: team.scratch,
        stride,
        bstarts_at,
        next_block: AtomicUsize::new(0),
        stopped: AtomicBool::new(false),
        placed: AtomicUsize::new(0),
        place: Mutex::new(Place {
            dst,
            ntbytes,
            next: 0,
        }),
        failure: Mutex::new(None),
    };
    team.pool.install(|| {
        (0..workers)
            .into_par_iter()
            .with_max_len(1)
            .for_each(|_| run.work())
    });
    // Every block is compressed (unless the run stopped, and then nothing
    // more is placed): place what the workers left.
    let mut place = run.place.lock().unwrap_or_else(PoisonError::into_inner);
    run.place_ready(&mut place);
    if let Some(e) = run
        .failure
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take()
    {
        return Err(e);
    }
    // Stopped without an error: a block did not fit, store the chunk raw.
    if run.stopped.load(Ordering::Relaxed) {
        return Ok(None);
    }
    debug_assert_eq!(place.next, nblocks);
    Ok(Some(place.ntbytes))
}

impl Run<'_, '_> {
    /// One worker: take blocks until none is left, compress each into its
    /// slot, then place what is ready.
    fn work(&self) {
        let nblocks = self.slots.len();
        loop {
            let i = self.next_block.fetch_add(1, Ordering::Relaxed);
            if i >= nblocks {
                return;
            }
            let slot = &self.slots[i];
            {
                let mut staged = slot.staged.lock().unwrap_or_else(PoisonError::into_inner);
                let staged = &mut *staged;
                let r = self.blocks.encode(
                    i,
                    &mut self.scratch.get(),
                    &mut staged.buf[..self.stride],
                    0,
                );
                match r {
                    Ok(len) => staged.len = len,
                    Err(e) => {
                        self.fail(e);
                        return;
                    }
                }
            }
            slot.done.store(true, Ordering::Release);
            self.try_place();
        }
    }

    /// Record the first error and stop handing out blocks.
    fn fail(&self, e: Error) {
        self.stop();
        let mut failure = self.failure.lock().unwrap_or_else(PoisonError::into_inner);
        failure.get_or_insert(e);
    }

    /// No more blocks are handed out or placed.
    fn stop(&self) {
        self.stopped.store(true, Ordering::Relaxed);
        self.next_block.store(self.slots.len(), Ordering::Relaxed);
    }

    /// Place the blocks that are ready, unless another worker is placing:
    /// it places them, or the next worker to finish a block, or the
    /// caller at the end.
    fn try_place(&self) {
        loop {
            let mut place = match self.place.try_lock() {
                Ok(p) => p,
                Err(TryLockError::WouldBlock) => return,
                Err(TryLockError::Poisoned(p)) => p.into_inner(),
            };
            self.place_ready(&mut place);
            drop(place);
            // A block finished after the placing looked at it and before
            // the lock was let go: its worker found the lock taken.
            let next = self.placed.load(Ordering::Acquire);
            if self.stopped.load(Ordering::Relaxed)
                || next >= self.slots.len()
                || !self.slots[next].done.load(Ordering::Acquire)
            {
                return;
            }
        }
    }

    /// Place blocks from `place.next` on while they are compressed.
    fn place_ready(&self, place: &mut Place<'_>) {
        let nblocks = self.slots.len();
        let destsize = place.dst.len();
        while place.next < nblocks && !self.stopped.load(Ordering::Relaxed) {
            let i = place.next;
            let slot = &self.slots[i];
            if !slot.done.load(Ordering::Acquire) {
                return;
            }
            let at = self.bstarts_at + 4 * i;
            let start = place.ntbytes;
            place.dst[at..at + 4].copy_from_slice(&(start as i32).to_le_bytes());
            let staged = slot.staged.lock().unwrap_or_else(PoisonError::into_inner);
            let fits = start + self.blocks.worst(i) <= destsize;
            let end = match staged.len.filter(|_| fits) {
                Some(len) => {
                    place.dst[start..start + len].copy_from_slice(&staged.buf[..len]);
                    Some(start + len)
                }
                None => match self
                    .blocks
                    .encode(i, &mut self.scratch.get(), place.dst, start)
                {
                    Ok(end) => end,
                    Err(e) => {
                        self.fail(e);
                        return;
                    }
                },
            };
            match end {
                Some(end) => place.ntbytes = end,
                None => {
                    self.stop();
                    return;
                }
            }
            place.next = i + 1;
            self.placed.store(place.next, Ordering::Release);
        }
    }
}
