//! The block scheduler: rayon pools keyed by thread count, and the
//! per-worker scratch a [`Compressor`](crate::Compressor) or
//! [`Decompressor`](crate::Decompressor) keeps between chunks.
//!
//! - Pools are process-wide, one per thread count, built on first use: a
//!   thousand compressors with `nthreads = 2` share two worker threads.
//!   Each compressor takes an `Arc` to its pool once, so no lock or map
//!   lookup is paid per chunk. The registry keeps the pools of the
//!   [`KEEP_POOLS`] thread counts used last; an older pool ends when the
//!   last compressor holding it is dropped, so a process that goes through
//!   many thread counts does not keep every pool's threads.
//! - `nthreads == 1`, a chunk of a single block, or a chunk below
//!   `MIN_PARALLEL_BYTES` runs inline on the caller's thread with worker
//!   0's scratch: no pool, no synchronisation.
//! - Otherwise the blocks are handed out one at a time, as C-Blosc2 hands
//!   out blocks to compress: a thread that is done takes the next block not
//!   started, so a thread the machine delays (a busy core, a descheduled
//!   vCPU) holds back the chunk by at most one block, not by a fixed share
//!   of them. Each pool thread `t` works with scratch `t`, so after one
//!   chunk of a given shape every scratch buffer and codec context is warm
//!   (each scratch, up to one per block of the chunk, is readied for the
//!   chunk's blocks as the run starts, whether or not its thread gets one)
//!   and the next chunk allocates
//!   nothing (tests/alloc.rs). The scratch
//!   sits behind a mutex that is never contended: only thread `t` takes
//!   lock `t` during a run, and it holds it only around leaf code (one
//!   block's filters and codec, which never wait on the pool), so a thread
//!   that steals work while it waits cannot take its own lock twice.
//!
//! The chunk layer (`chunk::encode`, `chunk::decode`) uses the scheduler and
//! its [`Scratch`]; the scheduler knows nothing of chunks.
//!
//! All of this is safe code: disjoint output regions come from
//! `par_chunks_mut` (decoding) or from a mutex per staging [`Slot`] and one
//! around the chunk being placed (`chunk::encode::parallel`), never from
//! raw pointers.

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};

use rayon::ThreadPool;

use crate::codecs::CodecCtx;

/// The largest pool built; larger `nthreads` values use this many threads.
pub(crate) const MAX_THREADS: usize = 256;

/// Chunks smaller than this are processed inline even when `nthreads > 1`:
/// below it, handing blocks to the pool costs more than it saves
/// (measured with `perf/run scaling`; see perf/README.md). The environment
/// variable `OXIBLOSC_INLINE_BELOW` (bytes, read once) overrides it, for
/// measuring the crossover on other machines.
pub(crate) const MIN_PARALLEL_BYTES: usize = 128 * 1024;

fn min_parallel_bytes() -> usize {
    static V: OnceLock<usize> = OnceLock::new();
    *V.get_or_init(|| {
        std::env::var("OXIBLOSC_INLINE_BELOW")
            .ok()
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(MIN_PARALLEL_BYTES)
    })
}

/// A thread count read from a file (a frame's `tcomp` / `tdecomp`), capped
/// to the machine's parallelism: a header cannot make a reader start
/// hundreds of threads, each with its own scratch.
pub(crate) fn cap_header_threads(n: usize) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    n.clamp(1, cores)
}

/// How many pools the registry keeps: those of the thread counts requested
/// last. A pool dropped from it lives on while a compressor holds it.
pub(crate) const KEEP_POOLS: usize = 8;

/// The kept pools, the one requested last at the end, and the process
/// that built them.
type Registry = Mutex<(u32, Vec<(usize, Arc<ThreadPool>)>)>;

fn registry() -> &'static Registry {
    static POOLS: OnceLock<Registry> = OnceLock::new();
    POOLS.get_or_init(|| Mutex::new((std::process::id(), Vec::new())))
}

/// Let go of a pool built by the process this one was forked from: its
/// threads were not copied into this process, so a job handed to it would
/// wait forever. It is leaked, not dropped: dropping it would signal
/// threads that do not exist here.
fn forget_forked(pool: Arc<ThreadPool>) {
    std::mem::forget(pool);
}

/// The shared pool of `nthreads` threads (built on first request, or when
/// its pool has left the registry). `None` when the pool cannot be built
/// (the caller then runs inline).
fn shared_pool(nthreads: usize) -> Option<Arc<ThreadPool>> {
    let mut registry = registry().lock().unwrap_or_else(PoisonError::into_inner);
    let (pid, pools) = &mut *registry;
    if *pid != std::process::id() {
        // A forked child (C-Blosc's test_forksafe): new pools for it.
        pools.drain(..).for_each(|(_, p)| forget_forked(p));
        *pid = std::process::id();
    }
    if let Some(i) = pools.iter().position(|(n, _)| *n == nthreads) {
        let entry = pools.remove(i);
        let pool = Arc::clone(&entry.1);
        pools.push(entry);
        return Some(pool);
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(nthreads)
        .thread_name(move |i| format!("oxiblosc-{nthreads}-{i}"))
        // liblz4 keeps its compression state in a thread-local slot that
        // is allocated on first use: do it now, once per pool thread, so it
        // never happens in the middle of a chunk.
        .start_handler(|_| crate::codecs::lz4::warm_thread())
        .build()
        .ok()?;
    let pool = Arc::new(pool);
    pools.push((nthreads, Arc::clone(&pool)));
    if pools.len() > KEEP_POOLS {
        // The least recently requested: its threads end once no
        // compressor holds it.
        pools.remove(0);
    }
    Some(pool)
}

/// A reusable byte buffer whose contents start on a 64-byte boundary.
///
/// The filters' SIMD loads and stores then never straddle two cache lines:
/// a plain `Vec<u8>` of a block's size starts 16 bytes into a line, and an
/// 8-byte unshuffle reading one of them took about 15% longer per 32 KiB
/// block (C-Blosc2 aligns its block buffers to 32 bytes).
#[derive(Default)]
pub(crate) struct AlignedBuf {
    v: Vec<u8>,
    off: usize,
    len: usize,
}

impl AlignedBuf {
    /// Make the buffer at least `n` bytes long (new bytes are zero; the old
    /// contents are not kept when it grows).
    #[inline]
    pub(crate) fn grow_to(&mut self, n: usize) {
        if self.len < n {
            self.grow(n);
        }
    }

    /// [`AlignedBuf::grow_to`] when it grows, out of line (the check is
    /// made on every block decoded).
    #[cold]
    fn grow(&mut self, n: usize) {
        self.v = vec![0; n + 63];
        self.off = self.v.as_ptr().addr().wrapping_neg() % 64;
        self.len = n;
    }
}

impl std::ops::Deref for AlignedBuf {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.v[self.off..self.off + self.len]
    }
}

impl std::ops::DerefMut for AlignedBuf {
    fn deref_mut(&mut self) -> &mut [u8] {
        &mut self.v[self.off..self.off + self.len]
    }
}

/// One worker's reusable buffers and codec contexts.
#[derive(Default)]
pub(crate) struct Scratch {
    pub a: AlignedBuf,
    pub b: AlignedBuf,
    pub codecs: CodecCtx,
    /// getitem's block buffer, kept for the next getitem (up to
    /// `chunk::decode::getitem::GETITEM_KEPT` bytes).
    pub block: AlignedBuf,
    /// getitem's decoded block 0 of a DELTA chunk (the reference of the
    /// others), kept alike.
    pub block0: AlignedBuf,
}

impl Scratch {
    /// Make both buffers at least `n` bytes long.
    #[inline]
    pub(crate) fn reserve(&mut self, n: usize) {
        self.a.grow_to(n);
        self.b.grow_to(n);
    }
}

/// One compressor's or decompressor's workers: its thread count, its pool
/// (taken on the first chunk that goes parallel), one [`Scratch`] per
/// worker, and the compressor's per-block output staging.
pub(crate) struct Workers {
    nthreads: usize,
    pool: Option<Arc<ThreadPool>>,
    /// The process `pool` was taken in (a forked child takes its own).
    pool_pid: u32,
    pool_failed: bool,
    /// `scratch[0]` serves inline runs; pool thread `t` of a parallel run
    /// uses `scratch[t]`.
    scratch: Vec<Mutex<Scratch>>,
    /// Compression: each block's staging (kept between chunks).
    slots: Vec<Slot>,
}

/// One block's staging in a parallel compression: its streams, written by
/// the worker that compresses the block and read by the one that places it
/// in the chunk.
#[derive(Default)]
pub(crate) struct Slot {
    pub staged: Mutex<Staged>,
    /// Set (release) once `staged` holds the block's streams.
    pub done: AtomicBool,
}

/// A block's streams as compressed into its slot.
#[derive(Default)]
pub(crate) struct Staged {
    /// At least the block's worst case long.
    pub buf: Vec<u8>,
    /// The streams' length, `None` when they did not fit in `buf` (the
    /// block is compressed again in place).
    pub len: Option<usize>,
}

/// What a parallel run gets: the pool, one scratch per pool thread, and the
/// compressor's staging.
pub(crate) struct Team<'w> {
    pub pool: &'w ThreadPool,
    pub scratch: Scratches<'w>,
    pub slots: &'w mut Vec<Slot>,
}

/// The scratch of each pool thread of a [`Team`].
#[derive(Clone, Copy)]
pub(crate) struct Scratches<'w>(&'w [Mutex<Scratch>]);

impl Scratches<'_> {
    /// How many (one per pool thread).
    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }

    /// The scratch of the pool thread this runs on (scratch 0 outside the
    /// pool). Hold it only around leaf code: see the module documentation.
    pub(crate) fn get(&self) -> MutexGuard<'_, Scratch> {
        let t = rayon::current_thread_index().unwrap_or(0) % self.0.len();
        self.0[t].lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Workers {
    /// Workers for `nthreads` threads (0 counts as 1).
    pub(crate) fn new(nthreads: usize) -> Workers {
        Workers {
            nthreads: nthreads.clamp(1, MAX_THREADS),
            pool: None,
            pool_pid: 0,
            pool_failed: false,
            scratch: vec![Mutex::new(Scratch::default())],
            slots: Vec::new(),
        }
    }

    /// The scratch of inline runs.
    pub(crate) fn inline(&mut self) -> &mut Scratch {
        self.scratch[0]
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether [`Workers::team`] may give a team for a chunk of `nbytes` in
    /// `nblocks` blocks (`false`: it runs inline, on the caller's thread).
    #[inline]
    pub(crate) fn may_team(&self, nbytes: usize, nblocks: usize) -> bool {
        !(self.nthreads == 1 || nblocks < 2 || self.pool_failed || nbytes < min_parallel_bytes())
    }

    /// The team for a chunk of `nbytes` in `nblocks` blocks, or `None` to
    /// run it inline. `warm` readies every scratch of the team for this
    /// chunk's blocks (buffers, codec context) now, whether or not its
    /// thread will get a block of this chunk, so that no later chunk of this
    /// shape allocates on some thread's first block.
    // Inlined for its first test, which every chunk on one thread stops at
    // (out of line, a call and a `Result` through memory per chunk;
    // `#[inline]` alone left it a call in the chunk decoder).
    #[inline(always)]
    pub(crate) fn team(
        &mut self,
        nbytes: usize,
        nblocks: usize,
        warm: impl Fn(&mut Scratch) -> crate::Result<()>,
    ) -> crate::Result<Option<Team<'_>>> {
        if !self.may_team(nbytes, nblocks) {
            return Ok(None);
        }
        self.form_team(nblocks, warm)
    }

    /// [`Workers::team`] once it may form one.
    #[inline(never)]
    fn form_team(
        &mut self,
        nblocks: usize,
        warm: impl Fn(&mut Scratch) -> crate::Result<()>,
    ) -> crate::Result<Option<Team<'_>>> {
        let pid = std::process::id();
        if self.pool_pid != pid {
            // Taken before a fork: its threads are not in this process.
            if let Some(p) = self.pool.take() {
                forget_forked(p);
            }
        }
        if self.pool.is_none() {
            self.pool = shared_pool(self.nthreads);
            self.pool_pid = pid;
            self.pool_failed = self.pool.is_none();
        }
        let Some(pool) = self.pool.as_deref() else {
            return Ok(None);
        };
        // One scratch per pool thread, even when the chunk has fewer
        // blocks: whichever threads take them, no two share a lock.
        let threads = pool.current_num_threads().clamp(1, self.nthreads);
        if self.scratch.len() < threads {
            self.scratch
                .resize_with(threads, || Mutex::new(Scratch::default()));
        }
        // At most `nblocks` threads work on this chunk at once: warming more
        // scratches than blocks would size memory by the thread count, not
        // by the chunk (the others are readied on their first block).
        for s in &mut self.scratch[..threads.min(nblocks)] {
            warm(s.get_mut().unwrap_or_else(PoisonError::into_inner))?;
        }
        Ok(Some(Team {
            pool,
            scratch: Scratches(&self.scratch[..threads]),
            slots: &mut self.slots,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::{AlignedBuf, KEEP_POOLS, registry, shared_pool};
    use std::sync::Arc;

    #[test]
    fn the_registry_keeps_the_pools_of_the_last_thread_counts() {
        // Thread counts no other test of this binary uses (they run in
        // parallel and share the registry).
        let held = shared_pool(41).expect("pool");
        let dropped = Arc::downgrade(&shared_pool(42).expect("pool"));
        for n in 43..43 + KEEP_POOLS {
            let p = shared_pool(n).expect("pool");
            assert_eq!(p.current_num_threads(), n);
        }
        let kept: Vec<usize> = registry().lock().unwrap().1.iter().map(|e| e.0).collect();
        assert!(kept.len() <= KEEP_POOLS, "{kept:?}");
        assert!(!kept.contains(&41) && !kept.contains(&42), "{kept:?}");
        // A pool out of the registry that nobody holds has ended; one that a
        // compressor still holds works on.
        assert!(dropped.upgrade().is_none());
        assert_eq!(held.install(rayon::current_num_threads), 41);
        // Asking again gives a pool of that count, kept again.
        let again = shared_pool(42).expect("pool");
        assert_eq!(again.current_num_threads(), 42);
        assert!(Arc::ptr_eq(&again, &shared_pool(42).expect("pool")));
        assert!(registry().lock().unwrap().1.iter().any(|e| e.0 == 42));
    }

    #[test]
    fn aligned_buf_starts_on_64_bytes_and_only_grows() {
        let mut b = AlignedBuf::default();
        assert!(b.is_empty());
        for n in [1, 100, 4096, 32_768, 1000, 70_001] {
            b.grow_to(n);
            assert!(b.len() >= n);
            assert_eq!(b.as_ptr().addr() % 64, 0, "grow_to({n})");
            b.fill(0xA5);
        }
        // A smaller request keeps the buffer (and what was written to it).
        assert_eq!(b.len(), 70_001);
        b.grow_to(10);
        assert_eq!(b.len(), 70_001);
        assert!(b.iter().all(|&x| x == 0xA5));
    }
}
