//! Claims on super-chunk handles: which call is using a handle, so a
//! callback re-entering it, or another thread, never aliases a `&mut`
//! (the module docs of `schunk`, ARCHITECTURE.md's re-entrancy).
//!
//! Each handle carries its claim state in the allocation it shares with
//! its [`Handle`] ([`Boxed`]), after it: no `&mut Handle` covers it, so a
//! call on another thread may try to claim the handle (an atomic
//! compare-and-swap) while one holds it. A claim costs that one
//! compare-and-swap and a plain store to release it; a process-wide table
//! behind a spin lock took two of each (about 5 ns of a 4 KB chunk's read
//! through a super-chunk; perf/README.md, session 23).

use std::sync::atomic::{AtomicU8, Ordering};

use super::{Handle, blosc2_schunk};

/// How a handle is in use (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Use {
    /// [`super::with`]: only the engine's fields are borrowed; the C view is
    /// read-only and may be read through a [`super::View`].
    Engine = 1,
    /// `&mut Handle` is live: nothing else may touch the handle.
    Exclusive = 2,
}

/// Not claimed (the state's value).
const FREE: u8 = 0;

/// What a `blosc2_schunk*` is allocated as: the handle first (C's pointer
/// is the handle's, and its C struct's), then its claim state.
#[repr(C)]
pub(super) struct Boxed {
    handle: Handle,
    state: AtomicU8,
}

impl Boxed {
    /// A handle, not claimed.
    pub(super) fn new(handle: Handle) -> Boxed {
        Boxed {
            handle,
            state: AtomicU8::new(FREE),
        }
    }
}

/// The claim state of the handle at `p`, borrowed alone (no reference to
/// the handle is made).
///
/// # Safety
/// `p` is a live super-chunk from this library (`Box<Boxed>::into_raw`).
unsafe fn state<'a>(p: *mut blosc2_schunk) -> &'a AtomicU8 {
    // SAFETY: the caller's contract; the field is reached through the raw
    // pointer (whose provenance is the whole allocation), never through a
    // reference to the handle.
    unsafe { &*std::ptr::addr_of!((*(p as *const Boxed)).state) }
}

/// What the claim state `v` says.
fn use_of(v: u8) -> Option<Use> {
    match v {
        1 => Some(Use::Engine),
        2 => Some(Use::Exclusive),
        _ => None,
    }
}

/// Claim `state` for `how`; `Err` with its current use when it is claimed.
fn claim_state(state: &AtomicU8, how: Use) -> Result<(), Use> {
    match state.compare_exchange(FREE, how as u8, Ordering::Acquire, Ordering::Acquire) {
        Ok(_) => Ok(()),
        // A state is only ever FREE or a `Use`.
        Err(v) => Err(use_of(v).unwrap_or(Use::Exclusive)),
    }
}

/// A claim on a handle, released when dropped.
pub(crate) struct Claim<'a>(&'a AtomicU8);

impl Drop for Claim<'_> {
    fn drop(&mut self) {
        self.0.store(FREE, Ordering::Release);
    }
}

impl Claim<'_> {
    /// Keep the claim (not released): for a handle about to be freed, whose
    /// state goes with it.
    pub(super) fn keep(self) {
        std::mem::forget(self);
    }
}

/// Claim the handle at `p` for `how`; `Err` with its current use when a
/// call (this thread's or a callback's caller) is using it.
///
/// # Safety
/// `p` is a live super-chunk from this library, for as long as the claim
/// lives.
pub(crate) unsafe fn claim<'a>(p: *mut blosc2_schunk, how: Use) -> Result<Claim<'a>, Use> {
    // SAFETY: the caller's contract.
    let state = unsafe { state(p) };
    claim_state(state, how).map(|()| Claim(state))
}

/// How the handle at `p` is in use, if it is.
///
/// # Safety
/// `p` is a live super-chunk from this library.
pub(super) unsafe fn in_use(p: *mut blosc2_schunk) -> Option<Use> {
    // SAFETY: the caller's contract.
    use_of(unsafe { state(p) }.load(Ordering::Acquire))
}

/// The whole handle at `s`, claimed exclusively (released when the
/// [`Claim`] drops; use the handle only while it lives). `None` for null,
/// or for a handle another call is using (a callback re-entering).
///
/// # Safety
/// `s` is null or a live super-chunk from this library.
pub(super) unsafe fn handle<'a>(s: *mut blosc2_schunk) -> Option<(&'a mut Handle, Claim<'a>)> {
    if s.is_null() {
        return None;
    }
    // SAFETY: the caller's contract.
    let claim = unsafe { claim(s, Use::Exclusive) }.ok()?;
    // SAFETY: a non-null blosc2_schunk* from this library points to the
    // first field of a live Handle (repr(C)), the first field of its
    // `Boxed`; the claim keeps every other call of ours from touching it
    // meanwhile, and the reference covers the handle only, not the state.
    unsafe { (s as *mut Handle).as_mut() }.map(|h| (h, claim))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    /// Claim states: threads claiming one state never hold it together,
    /// claims of other states go through, a claimed state tells its use,
    /// and every claim is released.
    #[test]
    fn one_claim_at_a_time_across_threads() {
        // Fewer under Miri (.ci/miri.sh runs it: its data-race detector
        // checks the orderings).
        const ROUNDS: usize = if cfg!(miri) { 100 } else { 20_000 };
        let shared = AtomicU8::new(FREE);
        let own: Vec<AtomicU8> = (0..4).map(|_| AtomicU8::new(FREE)).collect();
        let holders = AtomicUsize::new(0);
        let (won, refused) = (AtomicUsize::new(0), AtomicUsize::new(0));
        std::thread::scope(|s| {
            for mine in &own {
                let (shared, holders, won, refused) = (&shared, &holders, &won, &refused);
                s.spawn(move || {
                    for _ in 0..ROUNDS {
                        let c = claim_state(mine, Use::Engine).map(|()| Claim(mine));
                        assert!(c.is_ok(), "a state no other thread uses");
                        assert_eq!(claim_state(mine, Use::Exclusive), Err(Use::Engine));
                        match claim_state(shared, Use::Exclusive) {
                            Ok(()) => {
                                let _c = Claim(shared);
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
        assert_eq!(won.into_inner() + refused.into_inner(), 4 * ROUNDS);
        assert_eq!(shared.into_inner(), FREE, "the shared claim left");
        assert!(
            own.into_iter().all(|s| s.into_inner() == FREE),
            "claims left"
        );
    }
}
