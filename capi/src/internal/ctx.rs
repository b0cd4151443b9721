//! Context, thread-pool, threading and shuffle internals for the peer
//! suites' internal-header tests (`capi/peer-include/*/context.h`,
//! `threading.h`, `shuffle*.h`).
//!
//! * [`open_race`]: `blosc2_test_arm_open_race`, the transient-frame hook
//!   of C-Blosc2's `test_frame_lock`;
//! * [`pool`]: `struct blosc_shared_pool`, the thread pools contexts share
//!   (the context itself, `struct blosc2_context_s`, is
//!   `crate::v2::blosc2_context`);
//! * [`shuffle`]: the shuffle entry points of C-Blosc's `shuffle*.h` and
//!   C-Blosc2's `shuffle-generic.h`.
//!
//! C-Blosc2's `threading.h` needs nothing of ours: on POSIX its
//! `blosc2_pthread_*` names are the system's pthreads.

pub mod open_race;
pub mod pool;
pub mod shuffle;

#[cfg(test)]
mod tests;
