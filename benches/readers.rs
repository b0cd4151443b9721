//! Criterion benchmarks of readers whose cost per chunk is more than the
//! decode, on 2,000 chunks of 4 KiB:
//!
//! - `sframe_read/decompress_2000`: every chunk of a sparse frame (a
//!   directory, one file per chunk) decoded in turn, so mostly the cost of
//!   fetching a chunk file (open, checks, read). The directory is written
//!   once, in the system's temporary directory, outside the timing.
//! - `sframe_write_out/cframe_len_64MiB|write_cframe_64MiB`: a sparse frame
//!   of 64 incompressible chunks of 1 MiB measured as a contiguous frame
//!   (`cframe_len`: the chunk files' headers) and streamed as one to a sink
//!   (`write_cframe`: each file read once more and copied).
//! - `sparse_decode/FILTERS`: a 4 MiB chunk of float32 whose 32 KiB blocks
//!   are seven in eight zeros (zero runs), decoded whole, one thread.
//! - `bloscpack_read/decompress_all/CODEC`: a `.blp` in memory decoded whole
//!   (`Reader::decompress_all`: each chunk's digest checked, then decoded);
//!   `decompress_all_32MiB/blosclz`, the same for 32 MiB in bloscpack's
//!   default 1 MiB chunks.
//! - `packed_read/decompress_chunks|unpack`: every chunk of a packed
//!   super-chunk in memory decoded in turn
//!   (`PackedReader::decompress_chunk_into`), and into one new buffer
//!   (`unpack`).
//! - `ndarray_points/to_vec|write_to`: a 1,000,000 x 3 float32 NDArray (a
//!   point cloud: rows of 12 bytes, `default_shapes`) read whole into
//!   memory, and streamed to a sink; besides the decode, the cost of
//!   putting each chunk's items in C order; `get_slice_1000_rows|half`, rows
//!   500,000..501,000 (in one block) and the first half (two chunks) of it
//!   through `ndarray::get_slice`.
//! - `fresh_output/decompress_32MiB|to_cframe_48MiB`: a 32 MiB chunk
//!   decoded into a new buffer, a 48 MiB super-chunk in memory copied out
//!   whole (`to_cframe`): outputs written into fresh memory.
//!
//! ```text
//! cargo bench --bench readers                 # every row
//! cargo bench --bench readers -- --test       # run each once, as a check
//! ```

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use oxiblosc::bloscpack::{self, Options, Reader};
use oxiblosc::ndarray::{self, NdArray, NdMeta};
use oxiblosc::packed::{self, PackedReader};
use oxiblosc::schunk::{OpenOptions, SChunk};
use oxiblosc::{CParams, Codec};

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

/// A sparse frame of 64 chunks of 1 MiB that do not compress (64 MiB of
/// chunk files) written out as one contiguous frame: its length alone
/// (`cframe_len`, a layout pass) and the frame streamed to a sink
/// (`write_cframe`, the layout pass then every file copied).
fn sframe_write_out(c: &mut Criterion) {
    let dir = std::env::temp_dir().join(format!(
        "oxiblosc-bench-sframe-out-{}.b2frame",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    let mut state = 1u64;
    let chunk: Vec<u8> = (0..1 << 20)
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 56) as u8
        })
        .collect();
    {
        let mut sc = SChunk::builder()
            .cparams(CParams::default().codec(Codec::Lz4).clevel(1))
            .fsync(false)
            .create_dir(&dir)
            .unwrap();
        for k in 0..64u8 {
            let mut c = chunk.clone();
            c[0] = k;
            sc.append_buffer(&c).unwrap();
        }
    }
    let mut sc = OpenOptions::new().read_only(true).open(&dir).unwrap();
    let mut g = c.benchmark_group("sframe_write_out");
    g.sample_size(10).measurement_time(Duration::from_secs(4));
    g.bench_function("cframe_len_64MiB", |b| {
        b.iter(|| black_box(sc.cframe_len().unwrap()))
    });
    g.bench_function("write_cframe_64MiB", |b| {
        b.iter(|| black_box(sc.write_cframe(&mut std::io::sink()).unwrap()))
    });
    g.finish();
    drop(sc);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A 4 MiB chunk of float32 whose blocks (32 KiB) are seven in eight
/// zeros, decoded whole: the zero blocks' streams are zero runs.
fn sparse_decode(c: &mut Criterion) {
    use oxiblosc::{Compressor, Decompressor, Filter};
    let n = 1 << 20;
    let src: Vec<u8> = (0..n)
        .flat_map(|i: u32| {
            let v = if (i / 8192).is_multiple_of(8) {
                i as f32 * 0.5
            } else {
                0.0
            };
            v.to_le_bytes()
        })
        .collect();
    let mut g = c.benchmark_group("sparse_decode");
    g.sample_size(20).measurement_time(Duration::from_secs(3));
    let filters: [(&str, &[Filter]); 3] = [
        ("shuffle", &[Filter::Shuffle]),
        ("bitshuffle", &[Filter::BitShuffle]),
        ("shuffle_bytedelta", &[Filter::Shuffle, Filter::ByteDelta]),
    ];
    for (name, f) in filters {
        let p = CParams::default()
            .codec(Codec::Lz4)
            .typesize(4)
            .blocksize(32 << 10)
            .filters(f)
            .nthreads(1);
        let chunk = Compressor::new(p).compress(&src).unwrap();
        let mut d = Decompressor::new(oxiblosc::DParams::default().nthreads(1));
        let mut out = vec![0u8; src.len()];
        g.bench_function(name, |b| {
            b.iter(|| black_box(d.decompress_into(&chunk, &mut out).unwrap()))
        });
    }
    g.finish();
}

/// 2,000 chunks' worth (4 KiB each) of slowly rising 4-byte integers.
fn ramp_2000_chunks() -> Vec<u8> {
    (0..2000 * 1024u32)
        .flat_map(|v| (v / 3 + v % 7).to_le_bytes())
        .collect()
}

fn bloscpack_read(c: &mut Criterion) {
    let data = ramp_2000_chunks();
    let mut g = c.benchmark_group("bloscpack_read");
    g.sample_size(20).measurement_time(Duration::from_secs(4));
    for (name, codec) in [("blosclz", Codec::BloscLz), ("zstd", Codec::Zstd)] {
        let opts = Options::default()
            .cparams(CParams::default().codec(codec).typesize(4))
            .chunk_size(4096);
        let blp = bloscpack::pack(&data, &opts).unwrap();
        g.bench_function(format!("decompress_all/{name}"), |b| {
            b.iter(|| {
                let r = Reader::new(&blp[..]).unwrap();
                black_box(r.decompress_all().unwrap().len())
            })
        });
    }
    // bloscpack's default chunk size (1 MiB), a 32 MiB output.
    let data: Vec<u8> = (0..8 << 20u32)
        .flat_map(|v: u32| (v / 3 + v % 7).to_le_bytes())
        .collect();
    let opts = Options::default().cparams(CParams::default().codec(Codec::BloscLz).typesize(4));
    let blp = bloscpack::pack(&data, &opts).unwrap();
    g.bench_function("decompress_all_32MiB/blosclz", |b| {
        b.iter(|| {
            let r = Reader::new(&blp[..]).unwrap();
            black_box(r.decompress_all().unwrap().len())
        })
    });
    g.finish();
}

fn packed_read(c: &mut Criterion) {
    let data = ramp_2000_chunks();
    let bytes = packed::pack(&data, &CParams::default().typesize(4), 4096).unwrap();
    let r = PackedReader::new(&bytes).unwrap();
    let mut out = vec![0u8; 4096];
    let mut g = c.benchmark_group("packed_read");
    g.sample_size(20).measurement_time(Duration::from_secs(4));
    g.bench_function("decompress_chunks", |b| {
        b.iter(|| {
            for i in 0..r.nchunks() {
                black_box(r.decompress_chunk_into(i, &mut out).unwrap());
            }
        })
    });
    g.bench_function("unpack", |b| {
        b.iter(|| black_box(r.unpack().unwrap().len()))
    });
    g.finish();
}

/// A 1,000,000 x 3 float32 array of points on a slow spiral, in C order,
/// with `default_shapes`' chunks and blocks.
fn points() -> (NdMeta, Vec<u8>) {
    let rows = 1_000_000u64;
    let shape = [rows, 3];
    let (chunks, blocks) = ndarray::default_shapes(&shape, 4);
    let meta = NdMeta::new(&shape, &chunks, &blocks, "<f4");
    let data = (0..rows)
        .flat_map(|i| {
            let t = i as f32 * 1e-3;
            [t.cos() * t, t.sin() * t, t]
        })
        .flat_map(f32::to_le_bytes)
        .collect();
    (meta, data)
}

fn ndarray_points(c: &mut Criterion) {
    let (meta, data) = points();
    let sc = ndarray::create(&meta, CParams::default(), &data).unwrap();
    let mut a = NdArray::open(sc).unwrap();
    assert_eq!(a.to_vec().unwrap(), data);
    let mut g = c.benchmark_group("ndarray_points");
    g.sample_size(20).measurement_time(Duration::from_secs(4));
    g.bench_function("to_vec", |b| {
        b.iter(|| black_box(a.to_vec().unwrap().len()))
    });
    g.bench_function("write_to", |b| {
        b.iter(|| a.write_to(&mut std::io::sink()).unwrap())
    });
    let mut sc = a.into_schunk();
    for (name, rows) in [
        ("get_slice_1000_rows", 500_000..501_000u64),
        ("get_slice_half", 0..500_000),
    ] {
        let mut out = vec![0u8; (rows.end - rows.start) as usize * 12];
        let bshape = [rows.end - rows.start, 3];
        let (lo, hi) = ([rows.start, 0], [rows.end, 3]);
        let mut read =
            |out: &mut [u8]| ndarray::get_slice(&mut sc, &meta, &lo, &hi, out, &bshape).unwrap();
        // Checked once here: a filter on the ids may skip the row below.
        read(&mut out);
        let at = rows.start as usize * 12;
        assert_eq!(out, data[at..at + out.len()]);
        g.bench_function(name, |b| b.iter(|| read(&mut out)));
    }
    g.finish();
}

/// Outputs in fresh memory: a 32 MiB chunk of noisy u32 (LZ4, shuffle,
/// one thread) decoded into a new `Vec` (`Decompressor::decompress`), and
/// a 48 MiB super-chunk in memory copied out whole (`to_cframe`): the cost
/// of the pages first written, besides the decode or the copy.
fn fresh_output(c: &mut Criterion) {
    let mut state = 7u32;
    let data: Vec<u8> = (0..8u32 << 20)
        .flat_map(|v| {
            state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (v + (state >> 28)).to_le_bytes()
        })
        .collect();
    let p = CParams::default().typesize(4).codec(Codec::Lz4).nthreads(1);
    let chunk = oxiblosc::Compressor::new(p.clone())
        .compress(&data)
        .unwrap();
    let mut d = oxiblosc::Decompressor::new(oxiblosc::DParams::default().nthreads(1));
    assert!(d.decompress(&chunk).unwrap() == data);
    let mut g = c.benchmark_group("fresh_output");
    g.sample_size(20).measurement_time(Duration::from_secs(5));
    g.bench_function("decompress_32MiB", |b| {
        b.iter(|| black_box(d.decompress(&chunk).unwrap()))
    });
    let mut sc = SChunk::new(p.clevel(0)).unwrap();
    for part in data.chunks(4 << 20).cycle().take(12) {
        sc.append_buffer(part).unwrap();
    }
    let frame = sc.to_cframe().unwrap();
    assert!(frame.len() > 48 << 20);
    g.bench_function("to_cframe_48MiB", |b| {
        b.iter(|| black_box(sc.to_cframe().unwrap()))
    });
    g.finish();
}

criterion_group!(
    benches,
    bench,
    sframe_write_out,
    sparse_decode,
    bloscpack_read,
    packed_read,
    ndarray_points,
    fresh_output
);
criterion_main!(benches);
