//! Drop-in C libraries on the oxiblosc engine.
//!
//! One cdylib exports two C ABIs whose symbol names do not clash:
//!
//! * [`v1`]: C-Blosc 1.x (`blosc.h`): `blosc_*`, writing Blosc1 chunks;
//! * [`v2`]: C-Blosc2 3.x (`blosc2.h`): `blosc1_*` and `blosc2_*`.
//!
//! Every exported function catches panics (none crosses the boundary: the
//! C library's error code comes back instead) and checks its pointers for
//! null before use. Global settings live behind mutexes.

#![allow(clippy::missing_safety_doc)]

pub mod b2nd;
pub mod common;
pub mod engines;
pub mod internal;
pub mod schunk;
pub mod stdio;
pub mod v1;
pub mod v2;
