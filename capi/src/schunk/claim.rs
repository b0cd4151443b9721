//! Claims on super-chunk handles: which calls are using a handle, so a
//! callback re-entering it, or another thread, never aliases a `&mut`
//! (the module docs of `schunk`, ARCHITECTURE.md's re-entrancy).

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, Ordering};

use super::{Handle, blosc2_schunk};

/// How a handle is in use (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Use {
    /// [`super::with`]: only the engine's fields are borrowed; the C view is
    /// read-only and may be read through a [`super::View`].
    Engine,
    /// `&mut Handle` is live: nothing else may touch the handle.
    Exclusive,
}

/// The handles in use (few at a time: a plain list, whose capacity stays,
/// so a call allocates nothing here), behind a spin lock: every super-chunk
/// call takes it twice (claim, release) for a few instructions each. A
/// `Mutex` cost two atomic read-modify-writes per take (its unlock is a
/// swap), this one compare-and-swap and a plain store: two fewer per call,
/// about 10 ns of a 4 KB chunk's read (perf/README.md, session 22).
struct ClaimTable {
    busy: AtomicBool,
    entries: UnsafeCell<Vec<(usize, Use)>>,
}

// SAFETY: `entries` is only touched by `with_table`, under `busy`.
unsafe impl Sync for ClaimTable {}

static IN_USE: ClaimTable = ClaimTable {
    busy: AtomicBool::new(false),
    entries: UnsafeCell::new(Vec::new()),
};

/// Run `f` on the table of handles in use, alone.
pub(super) fn with_table<R>(f: impl FnOnce(&mut Vec<(usize, Use)>) -> R) -> R {
    let mut spins = 0u32;
    while IN_USE
        .busy
        .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
        .is_err()
    {
        spins += 1;
        if spins < 64 {
            std::hint::spin_loop();
        } else {
            // The holder may be descheduled: let it run.
            std::thread::yield_now();
        }
    }
    /// Releases the lock, also if `f` unwinds.
    struct Release;
    impl Drop for Release {
        fn drop(&mut self) {
            IN_USE.busy.store(false, Ordering::Release);
        }
    }
    let _release = Release;
    // SAFETY: `busy` is held (acquired above, released by `_release` after
    // `f`): no other reference to the entries exists meanwhile.
    f(unsafe { &mut *IN_USE.entries.get() })
}

pub(super) fn use_of(t: &[(usize, Use)], key: usize) -> Option<Use> {
    t.iter().find(|e| e.0 == key).map(|e| e.1)
}

/// A claim on a handle, released when dropped.
pub(crate) struct Claim(usize);

impl Drop for Claim {
    fn drop(&mut self) {
        with_table(|t| {
            if let Some(i) = t.iter().position(|e| e.0 == self.0) {
                t.swap_remove(i);
            }
        });
    }
}

/// Claim the handle at `p` for `how`; `Err` with its current use when a
/// call (this thread's or a callback's caller) is using it.
pub(crate) fn claim(p: *mut blosc2_schunk, how: Use) -> Result<Claim, Use> {
    let key = p as usize;
    with_table(|t| {
        if let Some(u) = use_of(t, key) {
            return Err(u);
        }
        t.push((key, how));
        Ok(Claim(key))
    })
}

/// The whole handle at `s`, claimed exclusively (released when the
/// [`Claim`] drops; use the handle only while it lives). `None` for null,
/// or for a handle another call is using (a callback re-entering).
///
/// # Safety
/// `s` is null or a live super-chunk from this library.
pub(super) unsafe fn handle<'a>(s: *mut blosc2_schunk) -> Option<(&'a mut Handle, Claim)> {
    if s.is_null() {
        return None;
    }
    let claim = claim(s, Use::Exclusive).ok()?;
    // SAFETY: a non-null blosc2_schunk* from this library points to the
    // first field of a live Handle (repr(C)); the claim keeps every other
    // call of ours from touching it meanwhile.
    unsafe { (s as *mut Handle).as_mut() }.map(|h| (h, claim))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    /// The claim table's spin lock: threads claiming one handle never hold
    /// it together, claims of other handles go through, and every claim is
    /// released.
    #[test]
    fn one_claim_at_a_time_across_threads() {
        // Keys only: a claim never dereferences the pointer.
        const SHARED: usize = 0x1000;
        let holders = AtomicUsize::new(0);
        let (won, refused) = (AtomicUsize::new(0), AtomicUsize::new(0));
        std::thread::scope(|s| {
            for t in 0..4usize {
                let (holders, won, refused) = (&holders, &won, &refused);
                s.spawn(move || {
                    let own = (0x2000 + 0x10 * t) as *mut blosc2_schunk;
                    for _ in 0..20_000 {
                        let mine = claim(own, Use::Engine);
                        assert!(mine.is_ok(), "a handle no other thread uses");
                        assert_eq!(claim(own, Use::Exclusive).err(), Some(Use::Engine));
                        match claim(SHARED as *mut blosc2_schunk, Use::Exclusive) {
                            Ok(_c) => {
                                assert_eq!(holders.fetch_add(1, Ordering::SeqCst), 0);
                                std::hint::spin_loop();
                                holders.fetch_sub(1, Ordering::SeqCst);
                                won.fetch_add(1, Ordering::Relaxed);
                            }
                            Err(u) => {
                                assert_eq!(u, Use::Exclusive);
                                refused.fetch_add(1, Ordering::Relaxed);
                            }
                        }
                    }
                });
            }
        });
        assert_eq!(won.into_inner() + refused.into_inner(), 80_000);
        // Other tests of this process may hold claims of their own handles.
        let ours = |k: usize| k == SHARED || (0x2000..0x2040).contains(&k);
        with_table(|t| assert!(!t.iter().any(|e| ours(e.0)), "claims left: {t:?}"));
    }
}
