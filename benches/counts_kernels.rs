//! Instruction counts of the filter kernels, measured by gungraun
//! (Callgrind under Valgrind): a count does not move with the machine's
//! load, so a regression shows as a number, not a guess. Wall-clock
//! throughput is `benches/kernels.rs` (criterion).
//!
//! ```text
//! cargo install gungraun-runner --version 0.20.0 --locked   # once; same version as the crate
//! cargo bench --bench counts_kernels
//! ```
//!
//! Each benchmark runs one kernel call on 64 KiB of float-like data with the
//! best implementation this CPU offers (`Kernels::best()`; Valgrind reports
//! AVX2 where the host has it), for type sizes 1, 2, 4, 8 and 16; the
//! buffers are made in the setup, which is not counted. gungraun prints each
//! benchmark's `Instructions` (and the change against the previous run,
//! kept in `target/gungraun/`).

use std::hint::black_box;

use gungraun::{library_benchmark, library_benchmark_group, main};
use oxiblosc_kernels::Kernels;

const LEN: usize = 64 << 10;

/// `(typesize, input, output)`: float64 samples of a slow ramp with a
/// little noise, as little-endian bytes.
fn setup(typesize: usize) -> (usize, Vec<u8>, Vec<u8>) {
    let _ = Kernels::best(); // the CPU probe, outside the count
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut src = Vec::with_capacity(LEN);
    let mut i = 0u64;
    while src.len() < LEN {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let v = 100.0 + i as f64 * 0.01 + (state >> 40) as f64 * 1e-9;
        src.extend_from_slice(&v.to_le_bytes());
        i += 1;
    }
    (typesize, src, vec![0u8; LEN])
}

#[library_benchmark]
#[benches::ts(args = [1, 2, 4, 8, 16], setup = setup)]
fn shuffle((ts, src, mut dst): (usize, Vec<u8>, Vec<u8>)) -> Vec<u8> {
    Kernels::best()
        .shuffle(ts, black_box(&src), &mut dst)
        .expect("shuffle");
    black_box(dst)
}

#[library_benchmark]
#[benches::ts(args = [1, 2, 4, 8, 16], setup = setup)]
fn unshuffle((ts, src, mut dst): (usize, Vec<u8>, Vec<u8>)) -> Vec<u8> {
    Kernels::best()
        .unshuffle(ts, black_box(&src), &mut dst)
        .expect("unshuffle");
    black_box(dst)
}

#[library_benchmark]
#[benches::ts(args = [1, 2, 4, 8, 16], setup = setup)]
fn bitshuffle((ts, src, mut dst): (usize, Vec<u8>, Vec<u8>)) -> Vec<u8> {
    Kernels::best()
        .bitshuffle(ts, black_box(&src), &mut dst)
        .expect("bitshuffle");
    black_box(dst)
}

#[library_benchmark]
#[benches::ts(args = [1, 2, 4, 8, 16], setup = setup)]
fn bitunshuffle((ts, src, mut dst): (usize, Vec<u8>, Vec<u8>)) -> Vec<u8> {
    Kernels::best()
        .bitunshuffle(ts, black_box(&src), &mut dst)
        .expect("bitunshuffle");
    black_box(dst)
}

library_benchmark_group!(
    name = kernels,
    benchmarks = [shuffle, unshuffle, bitshuffle, bitunshuffle]
);

main!(library_benchmark_groups = kernels);
