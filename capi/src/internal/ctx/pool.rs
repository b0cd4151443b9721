//! Thread pools shared by contexts (`struct blosc_shared_pool` of our
//! `context.h`).
//!
//! The engine runs every chunk of `n` threads on its one process-wide pool
//! of `n` threads (`oxiblosc`'s parallel layer, keyed by thread count). A
//! [`SharedPool`] stands for that pool in the C view: every context that
//! runs with `n > 1` threads is attached to the one `SharedPool` of `n`
//! (its `thread_pool` field points to it), which lives while a context is
//! attached (the contexts hold it by reference count) and is dropped from
//! the registry with the last one. A context with one thread has none.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError, Weak};

/// `struct blosc_shared_pool`: the pool of `nthreads` threads.
#[derive(Debug)]
pub struct SharedPool {
    nthreads: usize,
}

impl SharedPool {
    /// The number of threads of the pool.
    pub fn nthreads(&self) -> usize {
        self.nthreads
    }
}

static POOLS: Mutex<Option<HashMap<usize, Weak<SharedPool>>>> = Mutex::new(None);

/// The shared pool of `nthreads` threads: the live one when a context is
/// attached to it, else a new one (registered for the next contexts).
pub fn acquire(nthreads: usize) -> Arc<SharedPool> {
    let mut g = POOLS.lock().unwrap_or_else(PoisonError::into_inner);
    let map = g.get_or_insert_with(HashMap::new);
    if let Some(p) = map.get(&nthreads).and_then(Weak::upgrade) {
        return p;
    }
    map.retain(|_, w| w.strong_count() > 0);
    let p = Arc::new(SharedPool { nthreads });
    map.insert(nthreads, Arc::downgrade(&p));
    p
}

/// How many contexts are attached to the pool of `nthreads` threads (0:
/// it does not exist).
pub fn attached(nthreads: usize) -> usize {
    let g = POOLS.lock().unwrap_or_else(PoisonError::into_inner);
    g.as_ref()
        .and_then(|m| m.get(&nthreads))
        .map_or(0, Weak::strong_count)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_pool_per_thread_count_while_attached() {
        // A count no other test uses.
        let n = 97;
        assert_eq!(attached(n), 0);
        let a = acquire(n);
        let b = acquire(n);
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!((attached(n), a.nthreads()), (2, n));
        let c = acquire(n + 1);
        assert!(!Arc::ptr_eq(&a, &c));
        drop((a, b));
        assert_eq!(attached(n), 0);
        let d = acquire(n);
        assert_eq!(attached(n), 1);
        drop((c, d));
        assert_eq!(attached(n + 1), 0);
    }
}
