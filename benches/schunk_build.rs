//! Criterion benchmarks of building a super-chunk in memory: `n` appends
//! each cost the same (the offsets index is written once, when the frame
//! is read whole), where they once re-encoded the whole index.
//!
//! ```text
//! cargo bench --bench schunk_build                 # every row
//! cargo bench --bench schunk_build -- --test       # run each once, as a check
//! ```
//!
//! Ids: `schunk_build/append_20000` (20,000 appends of one compressed
//! 4 KB chunk to `SChunk::new`, then `to_cframe`), `schunk_build/ndarray_40000`
//! (`ndarray::create` of a 40,000 x 4 u32 array in chunks of one row, in
//! memory, then `to_cframe`), `schunk_build/ndarray_points` (`ndarray::create`
//! of a 1,000,000 x 3 float32 array, `default_shapes`, in memory: the
//! compression, and putting C-order rows into chunks).

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use oxiblosc::CParams;
use oxiblosc::ndarray::{self, NdMeta};
use oxiblosc::schunk::SChunk;

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("schunk_build");
    g.sample_size(10).measurement_time(Duration::from_secs(5));
    let p = CParams::default().typesize(4);
    let data: Vec<u8> = (0..1024u32)
        .flat_map(|v| (v * 3 + v % 7).to_le_bytes())
        .collect();
    let chunk = oxiblosc::compress(&data, &p).unwrap();
    g.bench_function("append_20000", |b| {
        b.iter(|| {
            let mut sc = SChunk::new(p.clone()).unwrap();
            for _ in 0..20_000 {
                sc.append_chunk(&chunk).unwrap();
            }
            black_box(sc.to_cframe().unwrap().len())
        })
    });
    let rows = 40_000u64;
    let meta = NdMeta::new(&[rows, 4], &[1, 4], &[1, 4], "<u4");
    let items: Vec<u8> = (0..rows as u32 * 4).flat_map(|v| v.to_le_bytes()).collect();
    g.bench_function("ndarray_40000", |b| {
        b.iter(|| {
            let mut sc = ndarray::create(&meta, CParams::default(), &items).unwrap();
            black_box(sc.to_cframe().unwrap().len())
        })
    });
    let shape = [1_000_000u64, 3];
    let (chunks, blocks) = ndarray::default_shapes(&shape, 4);
    let meta = NdMeta::new(&shape, &chunks, &blocks, "<f4");
    let items: Vec<u8> = (0..3_000_000u32)
        .flat_map(|v| (v as f32 * 0.5).to_le_bytes())
        .collect();
    g.bench_function("ndarray_points", |b| {
        b.iter(|| {
            black_box(
                ndarray::create(&meta, CParams::default(), &items)
                    .unwrap()
                    .nchunks(),
            )
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
