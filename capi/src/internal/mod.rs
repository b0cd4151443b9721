//! Functions and struct fields that C-Blosc's and C-Blosc2's own
//! internal-header test programs use (declared by our headers in
//! `capi/peer-include/`), exported by our library so those programs build
//! and run against it unmodified.
//!
//! * [`ctx`]: contexts, thread pools, threading and the shuffle entry points;
//! * [`frame`]: frames, sparse frames and chunk internals.

pub mod ctx;
pub mod frame;
