//! Criterion benchmarks of BloscLZ decompression (whole chunks, one thread,
//! clevel 5, shuffle): the decoder's match copies on the data shapes that
//! decide them.
//!
//! ```text
//! cargo bench --bench blosclz_decode                        # every row
//! cargo bench --bench blosclz_decode -- --save-baseline old # then, changed:
//! cargo bench --bench blosclz_decode -- --baseline old
//! ```
//!
//! Rows (`decompress/ROW`, throughput in bytes of output):
//!
//! - `counter-i32-4KiB`: a small chunk (one block), where the fixed costs of
//!   a decode show: int32 counters, whose one BloscLZ plane has long runs
//!   (`fill`) and matches of 64-160 bytes.
//! - `linspace-f64-32KiB`, `linspace-f64-256KiB`: `perf/`'s linspace-f64
//!   (typesize 8), Blosc2 chunks. Its byte planes are full of 6-33 byte
//!   matches at distances 1, 2 and 131 (pattern stores and 16-byte pieces).
//! - `sine-f32-blosc1-4MiB`: a noisy float32 sine, C-Blosc 1.21's chunk
//!   layout (`ChunkFormat::Blosc1`), mostly matches of at most 16 bytes at
//!   distances of 16 and more, and literals.
//! - `runs-i64-4MiB`: int64 values each held for 1000 items: byte runs of
//!   hundreds of bytes (`fill`) and long matches (`copy_within`).
//!
//! ## Results (2026-11-24, shared 2-core AMD EPYC VM, load ~3)
//!
//! The match-copy change of the decoder (`perf/README.md`, `capi`, 15:16
//! UTC), `--save-baseline old` on the old decoder, then `--baseline old`:
//!
//! | row | old | new | throughput |
//! |---|---:|---:|---:|
//! | linspace-f64-32KiB | 8.76 us | 6.69 us | +30.7 % |
//! | linspace-f64-256KiB | 33.7 us | 26.2 us | +33.5 % |
//! | sine-f32-blosc1-4MiB | 1.176 ms | 1.121 ms | +4.7 % |
//! | runs-i64-4MiB | 156.6 us | 170.2 us | -3.9 % (-0.9 % in an earlier run; 0.97-0.99x interleaved: three branches more per token) |
//!
//! Session 21 (2026-11-28): the header parsed into its stored layout and
//! exact literal copies without `memcpy` (perf/README.md, "Small chunks"),
//! `--save-baseline old` before, `--baseline old` after (fuzzer paused):
//!
//! | row | old | new | time |
//! |---|---:|---:|---:|
//! | counter-i32-4KiB | 252.2 ns | 219.2 ns | -13.1 % |
//! | linspace-f64-32KiB | 6.349 us | 6.260 us | -1.6 % |
//! | linspace-f64-256KiB | 23.64 us | 24.08 us | +0.9 % |
//! | sine-f32-blosc1-4MiB | 1.168 ms | 1.185 ms | +0.8 % |
//! | runs-i64-4MiB | 160.4 us | 155.3 us | -3.2 % |

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use oxiblosc::{CParams, ChunkFormat, Codec, DParams, Decompressor, Filter};

/// `perf/`'s linspace-f64: `len` bytes of a linspace over 64 MiB of items.
fn linspace(len: usize) -> Vec<u8> {
    const N: u64 = (64 << 20) / 8;
    (0..(len / 8) as u64)
        .flat_map(|i| (i as f64 * (1000.0 / (N - 1) as f64)).to_le_bytes())
        .collect()
}

/// A float32 sine with noise in its low bits (`formats.rs`'s ts4 data).
fn sine(len: usize) -> Vec<u8> {
    let mut state = 0x2545_F491_4F6C_DD1D_u64;
    (0..(len / 4) as u64)
        .flat_map(|i| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            ((i as f32 * 0.001).sin() * 50.0 + (state % 100) as f32 * 1e-3).to_le_bytes()
        })
        .collect()
}

/// int32 counters `3i + i % 7` (`perf/diag/dec_small.c`'s data): after the
/// shuffle, two zero planes, one stored raw and one of long matches and runs.
fn counter(len: usize) -> Vec<u8> {
    (0..(len / 4) as i32)
        .flat_map(|i| (i * 3 + i % 7).to_le_bytes())
        .collect()
}

/// int64 values each repeated 1000 times.
fn runs(len: usize) -> Vec<u8> {
    (0..(len / 8) as i64)
        .flat_map(|i| ((i / 1000) * 12345).to_le_bytes())
        .collect()
}

fn blosclz_decode(c: &mut Criterion) {
    let rows: [(&str, Vec<u8>, usize, ChunkFormat); 5] = [
        ("counter-i32-4KiB", counter(4 << 10), 4, ChunkFormat::Blosc2),
        (
            "linspace-f64-32KiB",
            linspace(32 << 10),
            8,
            ChunkFormat::Blosc2,
        ),
        (
            "linspace-f64-256KiB",
            linspace(256 << 10),
            8,
            ChunkFormat::Blosc2,
        ),
        (
            "sine-f32-blosc1-4MiB",
            sine(4 << 20),
            4,
            ChunkFormat::Blosc1,
        ),
        ("runs-i64-4MiB", runs(4 << 20), 8, ChunkFormat::Blosc2),
    ];
    let mut g = c.benchmark_group("decompress");
    g.sample_size(30)
        .measurement_time(Duration::from_secs(2))
        .warm_up_time(Duration::from_millis(500));
    for (name, data, typesize, format) in rows {
        let params = CParams::default()
            .codec(Codec::BloscLz)
            .clevel(5)
            .typesize(typesize)
            .filters(&[Filter::Shuffle])
            .nthreads(1)
            .format(format);
        let chunk = oxiblosc::compress(&data, &params).expect("compress");
        let mut d = Decompressor::new(DParams::default().nthreads(1));
        let mut out = vec![0u8; data.len()];
        d.decompress_into(&chunk, &mut out).expect("decompress");
        assert!(out == data, "{name}: the chunk decodes to its input");
        g.throughput(Throughput::Bytes(data.len() as u64));
        g.bench_function(BenchmarkId::from_parameter(name), |b| {
            b.iter(|| d.decompress_into(black_box(&chunk), &mut out).unwrap())
        });
    }
    g.finish();
}

criterion_group!(benches, blosclz_decode);
criterion_main!(benches);
