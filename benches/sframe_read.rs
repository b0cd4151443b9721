//! Criterion benchmark of reading a sparse frame (a directory, one file per
//! chunk): every chunk of a 2,000-chunk frame of 4 KiB chunks decoded in
//! turn, so the row is mostly the cost of fetching a chunk file (open,
//! checks, read) beside a small decode. The directory is written once, in
//! the system's temporary directory, outside the timing.
//!
//! ```text
//! cargo bench --bench sframe_read                 # every row
//! cargo bench --bench sframe_read -- --test       # run each once, as a check
//! ```
//!
//! Id: `sframe_read/decompress_2000`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use oxiblosc::CParams;
use oxiblosc::schunk::{OpenOptions, SChunk};

fn bench(c: &mut Criterion) {
    let dir = std::env::temp_dir().join(format!(
        "oxiblosc-bench-sframe-{}.b2frame",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    let p = CParams::default().typesize(4);
    let data: Vec<u8> = (0..1024u32)
        .flat_map(|v| (v * 3 + v % 7).to_le_bytes())
        .collect();
    {
        let mut sc = SChunk::builder()
            .cparams(p)
            .fsync(false)
            .create_dir(&dir)
            .unwrap();
        for _ in 0..2000 {
            sc.append_buffer(&data).unwrap();
        }
    }
    let mut sc = OpenOptions::new().read_only(true).open(&dir).unwrap();
    let mut out = vec![0u8; data.len()];
    let mut g = c.benchmark_group("sframe_read");
    g.sample_size(20).measurement_time(Duration::from_secs(4));
    g.bench_function("decompress_2000", |b| {
        b.iter(|| {
            for i in 0..sc.nchunks() {
                black_box(sc.decompress_chunk_into(i, &mut out).unwrap());
            }
        })
    });
    g.finish();
    drop(sc);
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(benches, bench);
criterion_main!(benches);
