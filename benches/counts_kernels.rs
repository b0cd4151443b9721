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
//! Each benchmark runs one kernel call on 64 KiB of float64 data (a ramp with noise) with the
//! best implementation this CPU offers (`Kernels::best()`; Valgrind reports
//! AVX2 where the host has it), for type sizes 1, 2, 4, 8 and 16; the
//! buffers are made in the setup, which is not counted. gungraun prints each
//! benchmark's `Instructions` (and the change against the previous run,
//! kept in `target/gungraun/`).

mod support;

use std::hint::black_box;

use gungraun::{library_benchmark, library_benchmark_group, main};
use oxiblosc_kernels::{Error, Kernels};

const LEN: usize = 64 << 10;

/// The type size, the input (float-like data) and an output buffer.
type Input = (usize, Vec<u8>, Vec<u8>);

fn setup(typesize: usize) -> Input {
    let _ = Kernels::best(); // the CPU probe, outside the count
    (typesize, support::float_data(LEN), vec![0u8; LEN])
}

/// A kernel of a table: `(table, typesize, src, dst)`.
type Kernel = fn(&Kernels, usize, &[u8], &mut [u8]) -> Result<(), Error>;

/// One call of `kernel` of the best table on `input`.
fn call(kernel: Kernel, input: Input) -> Vec<u8> {
    let (ts, src, mut dst) = input;
    kernel(Kernels::best(), ts, black_box(&src), &mut dst).expect("kernel");
    black_box(dst)
}

#[library_benchmark]
#[benches::ts(args = [1, 2, 4, 8, 16], setup = setup)]
fn shuffle(input: Input) -> Vec<u8> {
    call(Kernels::shuffle, input)
}

#[library_benchmark]
#[benches::ts(args = [1, 2, 4, 8, 16], setup = setup)]
fn unshuffle(input: Input) -> Vec<u8> {
    call(Kernels::unshuffle, input)
}

#[library_benchmark]
#[benches::ts(args = [1, 2, 4, 8, 16], setup = setup)]
fn bitshuffle(input: Input) -> Vec<u8> {
    call(Kernels::bitshuffle, input)
}

#[library_benchmark]
#[benches::ts(args = [1, 2, 4, 8, 16], setup = setup)]
fn bitunshuffle(input: Input) -> Vec<u8> {
    call(Kernels::bitunshuffle, input)
}

library_benchmark_group!(
    name = kernels,
    benchmarks = [shuffle, unshuffle, bitshuffle, bitunshuffle]
);

main!(library_benchmark_groups = kernels);
