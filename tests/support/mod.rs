//! What the integration tests share, one module for all of them (each test
//! binary says `mod support;` and uses what it needs):
//!
//! - [`corpus`]: the interop vectors in `tests/data` and their manifest;
//! - [`cblosc2`]: the C-Blosc2 3.3.5 oracle (python-blosc2 4.14.1 behind a
//!   pipe) for the differential tests;
//! - [`cblosc1`] and [`pyenv`]: C-Blosc 1.21 (python-blosc 1.11.4) and the
//!   private Python environments both are installed into ([`pip`], shared
//!   with `capi/` and `perf/`);
//! - [`counting`]: the counting global allocator;
//! - here: [`tempdir`], [`data`] and [`Rng`].
#![allow(dead_code)]

pub mod cblosc1;
pub mod cblosc2;
pub mod corpus;
pub mod counting;
pub mod pip;
pub mod pyenv;

use std::path::PathBuf;

/// Whether ZLIB compresses with zlib-ng itself (a clang build
/// of it, `oxiblosc_zng::DEFLATE_BUILT_BY_CLANG`): the library and the
/// parameters of C-Blosc2 3.3.5's `zng_compress2`, so those chunks must be
/// C's bytes. A gcc build compresses them with zlib-rs, whose bytes are
/// zlib-ng's on most data but not promised.
pub fn zlib_ng_compresses() -> bool {
    #[cfg(feature = "zlib")]
    return oxiblosc_zng::DEFLATE_BUILT_BY_CLANG;
    #[cfg(not(feature = "zlib"))]
    return false;
}

/// The repository root.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A fresh, empty directory for test `tag` under cargo's per-target temporary
/// directory (one per process: test binaries run side by side).
pub fn tempdir(tag: &str) -> PathBuf {
    let d =
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The files of directory `d` (a sparse frame), sorted by name, with their
/// bytes: to check that a refused change wrote nothing.
#[allow(dead_code)]
pub fn dir_files(d: &std::path::Path) -> Vec<(std::ffi::OsString, Vec<u8>)> {
    let mut v: Vec<_> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (e.file_name(), std::fs::read(e.path()).unwrap())
        })
        .collect();
    v.sort();
    v
}

/// `n` bytes of compressible data that differ with `seed`: a slow ramp with
/// a little noise (an LCG's top bits).
pub fn data(n: usize, seed: u32) -> Vec<u8> {
    let mut s = seed.wrapping_mul(2_654_435_761).wrapping_add(1);
    (0..n)
        .map(|i| {
            s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            ((i / 7) as u8).wrapping_add((s >> 29) as u8)
        })
        .collect()
}

/// SplitMix64: the tests' seeded random numbers.
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (0 for `n` 0).
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 { 0 } else { self.next() % n }
    }

    /// `n` random bytes.
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }

    /// A number in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}
