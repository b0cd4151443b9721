//! The tests' counting global allocator: it forwards every call to the
//! system allocator and records, on the side, the number and bytes of all
//! allocations of the process (`tests/alloc.rs`: nothing per warm chunk) and
//! the largest single allocation of the current thread (`tests/hostile.rs`,
//! `tests/frame_hostile.rs`: no allocation sized by an unchecked field; tests
//! run in parallel threads, each measures only its own allocations).
//!
//! A test binary installs it with
//! `#[global_allocator] static GLOBAL: counting::Counting = counting::Counting;`.
#![allow(dead_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

/// The allocator.
pub struct Counting;

static ALLOCS: AtomicUsize = AtomicUsize::new(0);
static BYTES: AtomicUsize = AtomicUsize::new(0);
/// Bytes allocated and not yet freed, and the most of them at once since
/// [`reset_peak`] (process-wide).
static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
thread_local! {
    static LARGEST: Cell<usize> = const { Cell::new(0) };
}

fn note(size: usize) {
    ALLOCS.fetch_add(1, Relaxed);
    BYTES.fetch_add(size, Relaxed);
    grow(size);
    // `try_with`: the slot may already be gone while a thread shuts down.
    let _ = LARGEST.try_with(|l| l.set(l.get().max(size)));
}

fn grow(size: usize) {
    let now = LIVE.fetch_add(size, Relaxed) + size;
    PEAK.fetch_max(now, Relaxed);
}

fn shrink(size: usize) {
    LIVE.fetch_sub(size, Relaxed);
}

/// Bytes the whole process holds allocated now.
pub fn live() -> usize {
    LIVE.load(Relaxed)
}

/// Start measuring the peak of [`live`] from now.
pub fn reset_peak() {
    PEAK.store(LIVE.load(Relaxed), Relaxed);
}

/// The most bytes the process held allocated at once since [`reset_peak`].
pub fn peak() -> usize {
    PEAK.load(Relaxed)
}

/// Allocations and bytes allocated by the whole process so far.
pub fn totals() -> (usize, usize) {
    (ALLOCS.load(Relaxed), BYTES.load(Relaxed))
}

/// Forget the current thread's largest allocation.
pub fn reset_largest() {
    LARGEST.with(|l| l.set(0));
}

/// The current thread's largest allocation since [`reset_largest`].
pub fn largest() -> usize {
    LARGEST.with(|l| l.get())
}

// SAFETY: forwards every call unchanged to the system allocator; it only
// counts on the side.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        note(l.size());
        // SAFETY: same contract as our caller's.
        let p = unsafe { System.alloc(l) };
        if p.is_null() {
            shrink(l.size());
        }
        p
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        note(l.size());
        // SAFETY: same contract as our caller's.
        let p = unsafe { System.alloc_zeroed(l) };
        if p.is_null() {
            shrink(l.size());
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        shrink(l.size());
        // SAFETY: same contract as our caller's.
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        // Counted as a new allocation of `new` bytes (the old block freed
        // once the call succeeds).
        note(new);
        // SAFETY: same contract as our caller's.
        let q = unsafe { System.realloc(p, l, new) };
        if q.is_null() {
            shrink(new);
        } else {
            shrink(l.size());
        }
        q
    }
}
