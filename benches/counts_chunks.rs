//! Instruction counts of whole chunks compressed and decompressed, measured
//! by gungraun (Callgrind under Valgrind): steady numbers on a noisy
//! machine, so a regression in the chunk path (filters, codecs, block
//! layout) shows as a count. Wall-clock throughput is `benches/formats.rs`
//! (criterion) and `perf/`.
//!
//! ```text
//! cargo install gungraun-runner --version 0.20.0 --locked   # once; same version as the crate
//! cargo bench --bench counts_chunks
//! ```
//!
//! Each benchmark is one 256 KiB chunk of float64 data (a noisy ramp; typesize 8,
//! clevel 5, one thread) through a warm `Compressor` or `Decompressor`, for
//! blosclz, lz4 and zstd with shuffle and with bitshuffle. The setup (the
//! data, the context, a first call that warms it, and for decompression the
//! chunk) is not counted; dropping it when the benchmark returns is (about
//! 700 instructions of `__rust_dealloc` for a decompressor and its buffers,
//! the same on every commit). The decompress benchmarks check that the
//! chunk decodes to its input.
//!
//! `decompress_small` decodes small chunks, where the fixed costs of a
//! decode show (the header, the plan, the calls around the codec): int32
//! counters `3i + i % 7` (blosclz 5, shuffle, one block), 4 KiB and
//! 256 bytes, the chunks of `perf/diag/dec_small.c` (perf/README.md,
//! sessions 21-23).

mod support;

use std::hint::black_box;

use gungraun::{library_benchmark, library_benchmark_group, main};
use oxiblosc::{CParams, Codec, Compressor, DParams, Decompressor, Filter, MAX_OVERHEAD};

const LEN: usize = 256 << 10;

fn params(codec: Codec, filter: Filter) -> CParams {
    CParams::default()
        .codec(codec)
        .clevel(5)
        .typesize(8)
        .filters(&[filter])
        .nthreads(1)
}

/// A warm compressor, the input and an output buffer.
fn setup_compress(codec: Codec, filter: Filter) -> (Compressor, Vec<u8>, Vec<u8>) {
    let src = support::float_data(LEN);
    let mut dst = vec![0u8; LEN + MAX_OVERHEAD];
    let mut c = Compressor::new(params(codec, filter));
    c.compress_into(&src, &mut dst).expect("compress");
    (c, src, dst)
}

/// A warm decompressor, the chunk, the output buffer and the expected data.
fn setup_decompress(codec: Codec, filter: Filter) -> (Decompressor, Vec<u8>, Vec<u8>) {
    let src = support::float_data(LEN);
    let chunk = oxiblosc::compress(&src, &params(codec, filter)).expect("compress");
    let mut d = Decompressor::new(DParams::default().nthreads(1));
    let mut dst = vec![0u8; LEN];
    d.decompress_into(&chunk, &mut dst).expect("decompress");
    assert_eq!(dst, src, "the chunk decodes to its input");
    (d, chunk, dst)
}

#[library_benchmark]
#[bench::blosclz_shuffle(args = (Codec::BloscLz, Filter::Shuffle), setup = setup_compress)]
#[bench::blosclz_bitshuffle(args = (Codec::BloscLz, Filter::BitShuffle), setup = setup_compress)]
#[bench::lz4_shuffle(args = (Codec::Lz4, Filter::Shuffle), setup = setup_compress)]
#[bench::lz4_bitshuffle(args = (Codec::Lz4, Filter::BitShuffle), setup = setup_compress)]
#[bench::zstd_shuffle(args = (Codec::Zstd, Filter::Shuffle), setup = setup_compress)]
#[bench::zstd_bitshuffle(args = (Codec::Zstd, Filter::BitShuffle), setup = setup_compress)]
fn compress((mut c, src, mut dst): (Compressor, Vec<u8>, Vec<u8>)) -> usize {
    black_box(
        c.compress_into(black_box(&src), &mut dst)
            .expect("compress"),
    )
}

#[library_benchmark]
#[bench::blosclz_shuffle(args = (Codec::BloscLz, Filter::Shuffle), setup = setup_decompress)]
#[bench::blosclz_bitshuffle(args = (Codec::BloscLz, Filter::BitShuffle), setup = setup_decompress)]
#[bench::lz4_shuffle(args = (Codec::Lz4, Filter::Shuffle), setup = setup_decompress)]
#[bench::lz4_bitshuffle(args = (Codec::Lz4, Filter::BitShuffle), setup = setup_decompress)]
#[bench::zstd_shuffle(args = (Codec::Zstd, Filter::Shuffle), setup = setup_decompress)]
#[bench::zstd_bitshuffle(args = (Codec::Zstd, Filter::BitShuffle), setup = setup_decompress)]
fn decompress((mut d, chunk, mut dst): (Decompressor, Vec<u8>, Vec<u8>)) -> usize {
    black_box(
        d.decompress_into(black_box(&chunk), &mut dst)
            .expect("decompress"),
    )
}

/// A warm decompressor, a chunk of `items` int32 counters (blosclz 5,
/// shuffle), the output buffer.
fn setup_small(items: usize) -> (Decompressor, Vec<u8>, Vec<u8>) {
    let src: Vec<u8> = (0..items as i32)
        .flat_map(|i| (3 * i + i % 7).to_le_bytes())
        .collect();
    let p = CParams::default()
        .codec(Codec::BloscLz)
        .clevel(5)
        .typesize(4)
        .filters(&[Filter::Shuffle])
        .nthreads(1);
    let chunk = oxiblosc::compress(&src, &p).expect("compress");
    let mut d = Decompressor::new(DParams::default().nthreads(1));
    let mut dst = vec![0u8; src.len()];
    d.decompress_into(&chunk, &mut dst).expect("decompress");
    assert_eq!(dst, src, "the chunk decodes to its input");
    (d, chunk, dst)
}

#[library_benchmark]
#[bench::counters_4k(args = (1024,), setup = setup_small)]
#[bench::counters_256(args = (64,), setup = setup_small)]
fn decompress_small((mut d, chunk, mut dst): (Decompressor, Vec<u8>, Vec<u8>)) -> usize {
    black_box(
        d.decompress_into(black_box(&chunk), &mut dst)
            .expect("decompress"),
    )
}

library_benchmark_group!(
    name = chunks,
    benchmarks = [compress, decompress, decompress_small]
);

main!(library_benchmark_groups = chunks);
