//! oxiblosc: a pure-Rust, SIMD-first engine for the Blosc2 compression formats.
//!
//! This crate is being built up issue by issue. Today it exposes the
//! byte-transform kernels of the filter pipeline as [`kernels`]; the chunk
//! codec, frames and super-chunks follow.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub use oxiblosc_kernels as kernels;
