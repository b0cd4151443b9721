//! Context, thread-pool, threading and shuffle internals for the peer
//! suites' internal-header tests (`capi/peer-include/*/context.h`,
//! `threading.h`, `shuffle*.h`).
//!
//! * [`shuffle`]: the shuffle entry points of C-Blosc's `shuffle*.h` and
//!   C-Blosc2's `shuffle-generic.h`.

pub mod shuffle;
