//! Criterion benchmarks of NDArray edits on a 40,000-chunk array (shape
//! 40,000 x 4 of u32 in chunks of one row): each edit is one change of the
//! super-chunk, whose cost grows with the chunk count (the new chunk list,
//! the chunks it drops). In memory, and in a file (crash-safe writes, no
//! fsync), each iteration on a fresh copy of the array (set up outside the
//! timing).
//!
//! ```text
//! cargo bench --bench ndarray_edit                 # every row
//! cargo bench --bench ndarray_edit -- --test       # run each once, as a check
//! ```
//!
//! Ids are `ndarray_edit/EDIT/memory|file`: `shrink_half` (resize to 20,000
//! rows: 20,000 chunks dropped), `append_row`, `insert_10_rows` (at row
//! 20,000), `set_slice_row` (one row in the middle).
//!
//! `ndarray_rewrite/set_slice_column/CODEC` writes one column of a
//! 4,096 x 1,024 array of u32 in 1,024 chunks of 16 KiB (4 x 1,024, blocks
//! of 4 x 256), in memory: every chunk is decoded, patched and compressed
//! again, so the cost is the codec's, chunk by chunk.
//!
//! `ndarray_padding/append_256_rows` appends 256 rows of 5 one-byte items
//! to an array in chunks of one row of 1 Mi items (blocks of 64 Ki), in
//! memory: 256 new chunks of 1 MiB, 5 bytes of items each and the rest
//! padding (the shape of the fuzz input `ndarray_args` `slow-unit-ea7ce835`,
//! fuzz/README.md session 36): building, checking and compressing padding;
//! `append_256_rows/keep_chunks` the same as C-Blosc2's `b2nd_append` does
//! it (`insert_keep_chunks`); `append_1000_narrow_rows` appends 1,000 rows of
//! 10 u32 to an array in chunks of 1,000 x 1,000 (blocks of 100 x 100): a
//! new chunk of 4 MB whose items fill one column of its blocks.
//!
//! `ndarray_concat/image_tiles_aligned` concatenates a 2,000 x 2,000
//! float64 array (25.8 MB compressed) to a copy of itself, in memory: its
//! chunks copied into 25.8 MB of fresh memory (page faults, not codecs).

use std::hint::black_box;
use std::path::PathBuf;
use std::time::Duration;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use oxiblosc::ndarray::{self, NdMeta};
use oxiblosc::schunk::{OpenOptions, SChunk};
use oxiblosc::{CParams, Codec};

const ROWS: u64 = 40_000;

fn meta() -> NdMeta {
    NdMeta::new(&[ROWS, 4], &[1, 4], &[1, 4], "<u4")
}

/// The array's frame bytes.
fn frame() -> Vec<u8> {
    let data: Vec<u8> = (0..ROWS as u32 * 4).flat_map(|v| v.to_le_bytes()).collect();
    let mut sc = ndarray::create(&meta(), CParams::default(), &data).unwrap();
    sc.to_cframe().unwrap()
}

fn path() -> PathBuf {
    std::env::temp_dir().join(format!(
        "oxiblosc-bench-ndarray-{}.b2nd",
        std::process::id()
    ))
}

/// A fresh array: in memory, or written to the bench's file and opened.
fn fresh(bytes: &[u8], file: bool) -> SChunk {
    if file {
        std::fs::write(path(), bytes).unwrap();
        OpenOptions::new().fsync(false).open(path()).unwrap()
    } else {
        SChunk::from_cframe(bytes.to_vec()).unwrap()
    }
}

type Edit = fn(&mut SChunk, &mut NdMeta);

fn edits() -> [(&'static str, Edit); 4] {
    [
        ("shrink_half", |sc, m| {
            ndarray::resize(sc, m, &[ROWS / 2, 4], None).unwrap()
        }),
        ("append_row", |sc, m| {
            ndarray::append(sc, m, &[7u8; 16], 0).unwrap()
        }),
        ("insert_10_rows", |sc, m| {
            ndarray::insert(sc, m, &[7u8; 160], 0, ROWS / 2).unwrap()
        }),
        ("set_slice_row", |sc, m| {
            let r = ROWS / 2 + 1;
            ndarray::set_slice(sc, m, &[r, 0], &[r + 1, 4], &[9u8; 16], &[1, 4]).unwrap()
        }),
    ]
}

fn bench(c: &mut Criterion) {
    let bytes = frame();
    let mut g = c.benchmark_group("ndarray_edit");
    g.sample_size(20).measurement_time(Duration::from_secs(4));
    for (name, edit) in edits() {
        for file in [false, true] {
            let id = format!("{name}/{}", if file { "file" } else { "memory" });
            g.bench_function(id, |b| {
                b.iter_batched(
                    || (fresh(&bytes, file), meta()),
                    |(mut sc, mut m)| {
                        edit(&mut sc, &mut m);
                        black_box(sc.nchunks());
                        // Returned: criterion drops it (a file frame tidies
                        // its free space then) outside the timing.
                        sc
                    },
                    BatchSize::PerIteration,
                );
            });
        }
    }
    g.finish();
    let _ = std::fs::remove_file(path());
}

/// One column written over every chunk of a 1,024-chunk array, per codec.
fn rewrite(c: &mut Criterion) {
    let meta = NdMeta::new(&[4096, 1024], &[4, 1024], &[4, 256], "<u4");
    let data: Vec<u8> = (0..4096u32 * 1024)
        .flat_map(|v| (v / 3).to_le_bytes())
        .collect();
    let mut g = c.benchmark_group("ndarray_rewrite");
    g.sample_size(10).measurement_time(Duration::from_secs(4));
    for (name, codec) in [
        ("blosclz", Codec::BloscLz),
        ("lz4", Codec::Lz4),
        ("zlib", Codec::Zlib),
        ("zstd", Codec::Zstd),
    ] {
        let cparams = CParams::default().codec(codec).nthreads(1);
        let mut sc = ndarray::create(&meta, cparams, &data).unwrap();
        let bytes = sc.to_cframe().unwrap();
        let column = vec![7u8; 4096 * 4];
        g.bench_function(format!("set_slice_column/{name}"), |b| {
            b.iter_batched(
                || SChunk::from_cframe(bytes.clone()).unwrap(),
                |mut sc| {
                    ndarray::set_slice(&mut sc, &meta, &[0, 5], &[4096, 6], &column, &[4096, 1])
                        .unwrap();
                    sc
                },
                BatchSize::PerIteration,
            );
        });
    }
    g.finish();
}

/// Rows appended to an array of one-row chunks far wider than its rows.
fn padding(c: &mut Criterion) {
    let meta = NdMeta::new(&[1, 5], &[1, 1 << 20], &[1, 1 << 16], "|u1");
    let mut sc = ndarray::create(&meta, CParams::default().nthreads(1), &[1u8; 5]).unwrap();
    let bytes = sc.to_cframe().unwrap();
    let rows = vec![7u8; 256 * 5];
    let mut g = c.benchmark_group("ndarray_padding");
    g.sample_size(10).measurement_time(Duration::from_secs(4));
    g.bench_function("append_256_rows", |b| {
        b.iter_batched(
            || (SChunk::from_cframe(bytes.clone()).unwrap(), meta.clone()),
            |(mut sc, mut m)| {
                ndarray::append(&mut sc, &mut m, &rows, 0).unwrap();
                assert_eq!(sc.nchunks(), 257);
                sc
            },
            BatchSize::PerIteration,
        );
    });
    // The same through C-Blosc2's way (the C ABI's `b2nd_append`).
    g.bench_function("append_256_rows/keep_chunks", |b| {
        b.iter_batched(
            || (SChunk::from_cframe(bytes.clone()).unwrap(), meta.clone()),
            |(mut sc, mut m)| {
                ndarray::insert_keep_chunks(&mut sc, &mut m, &rows, 0, 1).unwrap();
                assert_eq!(sc.nchunks(), 257);
                sc
            },
            BatchSize::PerIteration,
        );
    });
    // Rows narrower than the chunks: 1,000 rows of 10 u32 into a new chunk
    // of 1,000 x 1,000 (4 MB, blocks of 100 x 100), whose items lie in one
    // column of its 10 x 10 blocks.
    let narrow = NdMeta::new(&[1000, 10], &[1000, 1000], &[100, 100], "<u4");
    let mut sc = ndarray::create(&narrow, CParams::default().nthreads(1), &[1u8; 40_000]).unwrap();
    let narrow_bytes = sc.to_cframe().unwrap();
    let narrow_rows = vec![3u8; 40_000];
    g.bench_function("append_1000_narrow_rows", |b| {
        b.iter_batched(
            || {
                (
                    SChunk::from_cframe(narrow_bytes.clone()).unwrap(),
                    narrow.clone(),
                )
            },
            |(mut sc, mut m)| {
                ndarray::append(&mut sc, &mut m, &narrow_rows, 0).unwrap();
                assert_eq!(sc.nchunks(), 2);
                sc
            },
            BatchSize::PerIteration,
        );
    });
    g.finish();
}

/// C-Blosc2's shape changes (the C ABI's `b2nd_resize`): an array of
/// 100,000 `i64` in chunks of 16,384 grown by 1,000 items at its end, into
/// its edge chunk's padding, by `resize_keep_chunks` (no chunk touched)
/// and by `resize` (the edge chunk rebuilt, its new items zero); and a
/// whole edge chunk's items written by `set_slice` (not decoded since
/// session 37: it starts from zeros).
fn chunkwise(c: &mut Criterion) {
    let meta = NdMeta::new(&[100_000], &[16_384], &[256], "<i8");
    let data: Vec<u8> = (0..100_000i64).flat_map(|v| v.to_le_bytes()).collect();
    let mut sc = ndarray::create(&meta, CParams::default().nthreads(1), &data).unwrap();
    let bytes = sc.to_cframe().unwrap();
    let mut g = c.benchmark_group("ndarray_chunkwise");
    g.sample_size(20).measurement_time(Duration::from_secs(4));
    type Grow = fn(&mut SChunk, &mut NdMeta, &[u64], Option<&[u64]>) -> oxiblosc::Result<()>;
    let grows: [(&str, Grow); 2] = [
        ("grow_1000/keep_chunks", ndarray::resize_keep_chunks),
        ("grow_1000/resize", ndarray::resize),
    ];
    for (name, grow) in grows {
        g.bench_function(name, |b| {
            b.iter_batched(
                || (SChunk::from_cframe(bytes.clone()).unwrap(), meta.clone()),
                |(mut sc, mut m)| {
                    grow(&mut sc, &mut m, &[101_000], None).unwrap();
                    sc
                },
                BatchSize::PerIteration,
            );
        });
    }
    // The sixth chunk, 16,384 items, written whole.
    let chunk = vec![9u8; 16_384 * 8];
    g.bench_function("set_slice_whole_chunk", |b| {
        b.iter_batched(
            || SChunk::from_cframe(bytes.clone()).unwrap(),
            |mut sc| {
                let (lo, hi) = (5 * 16_384, 6 * 16_384);
                ndarray::set_slice(&mut sc, &meta, &[lo], &[hi], &chunk, &[16_384]).unwrap();
                sc
            },
            BatchSize::PerIteration,
        );
    });
    g.finish();
}

/// An array concatenated to a copy of itself along axis 0, aligned (its
/// chunks appended compressed, as they are): the image of
/// `perf/run b2nd`'s `image-tiles` rows (2,000 x 2,000 float64 in
/// 500 x 500 chunks of 100 x 100 blocks, blosclz 5 shuffle, 25.8 MB
/// compressed), in memory. The copy is made outside the timing; the
/// concatenation grows its frame by 25.8 MB of fresh memory, written once.
fn concat(c: &mut Criterion) {
    let meta = NdMeta::new(&[2000, 2000], &[500, 500], &[100, 100], "<f8");
    let data: Vec<u8> = (0..2000)
        .flat_map(|i| {
            let row = (f64::from(i) / 50.0).sin();
            (0..2000).flat_map(move |j| (row + (f64::from(j) / 70.0).cos()).to_le_bytes())
        })
        .collect();
    let params = CParams::default()
        .codec(Codec::BloscLz)
        .clevel(5)
        .nthreads(1);
    let mut src = ndarray::create(&meta, params, &data).unwrap();
    let bytes = src.to_cframe().unwrap();
    let mut g = c.benchmark_group("ndarray_concat");
    g.sample_size(20).measurement_time(Duration::from_secs(6));
    g.bench_function("image_tiles_aligned", |b| {
        b.iter_batched(
            || (SChunk::from_cframe(bytes.clone()).unwrap(), meta.clone()),
            |(mut sc, mut m)| {
                ndarray::concatenate(&mut sc, &mut m, &mut src, &meta, 0).unwrap();
                assert_eq!(m.shape, [4000, 2000]);
                sc
            },
            BatchSize::PerIteration,
        );
    });
    g.finish();
}

criterion_group!(benches, bench, rewrite, padding, chunkwise, concat);
criterion_main!(benches);
