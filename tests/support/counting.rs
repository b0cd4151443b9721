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
thread_local! {
    static LARGEST: Cell<usize> = const { Cell::new(0) };
}

fn note(size: usize) {
    ALLOCS.fetch_add(1, Relaxed);
    BYTES.fetch_add(size, Relaxed);
    // `try_with`: the slot may already be gone while a thread shuts down.
    let _ = LARGEST.try_with(|l| l.set(l.get().max(size)));
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
        unsafe { System.alloc(l) }
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        note(l.size());
        // SAFETY: same contract as our caller's.
        unsafe { System.alloc_zeroed(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        // SAFETY: same contract as our caller's.
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        note(new);
        // SAFETY: same contract as our caller's.
        unsafe { System.realloc(p, l, new) }
    }
}
