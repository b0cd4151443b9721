//! Criterion benchmarks of whole-chunk compression and decompression in the
//! two chunk formats, on the same data and parameters: the Blosc1 writer
//! (`ChunkFormat::Blosc1`, C-Blosc 1.21's layout) must be no slower than the
//! Blosc2 one.
//!
//! ```text
//! cargo bench --bench formats                 # every row (about a minute)
//! cargo bench --bench formats -- 'lz4'        # a subset (regex on the id)
//! cargo bench --bench formats -- --test       # run each once, as a check
//! ```
//!
//! Ids are `compress|decompress/CODEC-tsTYPESIZE-FILTER/FORMAT`; throughput
//! is bytes of input per second, 4 MiB chunks, one thread.

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use oxiblosc::{CParams, ChunkFormat, Codec, Compressor, DParams, Decompressor, Filter};

const LEN: usize = 4 << 20;

/// float32 samples of a noisy sine, as little-endian bytes (typesize 4), or
/// int64 counters with small steps (typesize 8).
fn make_data(ts: usize) -> Vec<u8> {
    let mut state = 0x2545_F491_4F6C_DD1D_u64;
    let mut out = Vec::with_capacity(LEN + 8);
    let mut i = 0u64;
    let mut acc = 0i64;
    while out.len() < LEN {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        if ts == 4 {
            let v = (i as f32 * 0.001).sin() * 50.0 + (state % 100) as f32 * 1e-3;
            out.extend_from_slice(&v.to_le_bytes());
        } else {
            acc += (state % 7) as i64;
            out.extend_from_slice(&acc.to_le_bytes());
        }
        i += 1;
    }
    out.truncate(LEN);
    out
}

fn formats(c: &mut Criterion) {
    let rows: [(Codec, usize, Filter); 6] = [
        (Codec::BloscLz, 4, Filter::Shuffle),
        (Codec::BloscLz, 8, Filter::Shuffle),
        (Codec::Lz4, 4, Filter::Shuffle),
        (Codec::Lz4, 8, Filter::BitShuffle),
        (Codec::Zstd, 4, Filter::Shuffle),
        (Codec::Zlib, 8, Filter::Shuffle),
    ];
    for (codec, ts, filter) in rows {
        let data = make_data(ts);
        let row = format!("{codec}-ts{ts}-{}", filter.name());
        let mut g = c.benchmark_group("compress");
        g.throughput(Throughput::Bytes(LEN as u64))
            .sample_size(20)
            .measurement_time(Duration::from_secs(2))
            .warm_up_time(Duration::from_millis(500));
        let mut chunks = Vec::new();
        for format in [ChunkFormat::Blosc2, ChunkFormat::Blosc1] {
            let p = CParams::default()
                .format(format)
                .codec(codec)
                .typesize(ts)
                .filters(&[filter]);
            let mut comp = Compressor::new(p);
            chunks.push((format, comp.compress(&data).unwrap()));
            g.bench_function(BenchmarkId::new(&row, format.name()), |b| {
                b.iter(|| comp.compress(black_box(&data)).unwrap())
            });
        }
        g.finish();
        let mut g = c.benchmark_group("decompress");
        g.throughput(Throughput::Bytes(LEN as u64))
            .sample_size(20)
            .measurement_time(Duration::from_secs(2))
            .warm_up_time(Duration::from_millis(500));
        for (format, chunk) in &chunks {
            let mut d = Decompressor::new(DParams::default());
            let mut out = vec![0u8; LEN];
            g.bench_function(BenchmarkId::new(&row, format.name()), |b| {
                b.iter(|| d.decompress_into(black_box(chunk), &mut out).unwrap())
            });
        }
        g.finish();
    }
}

criterion_group!(benches, formats);
criterion_main!(benches);
