//! Criterion benchmarks of the stream adapters: what the bounded pipeline
//! (`copy_from` / `copy_to`: reader thread, compressor, writer thread)
//! gains over the same work done in turn on one thread (`io::copy` into the
//! encoder, `read` from the decoder), when reading and writing cost time as
//! they do in a real pipe (here: making the data, and hashing the output).
//!
//! ```text
//! cargo bench --bench stream                 # every row
//! cargo bench --bench stream -- --test       # run each once, as a check
//! ```
//!
//! Ids are `encode|decode/FORMAT-nthreadsN/serial|pipeline`; throughput is
//! bytes of uncompressed data per second, 256 MiB per run (the pipeline's
//! few buffers are set up once per run), 4 MiB chunks.

use std::hint::black_box;
use std::io::{self, Read, Write};
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use oxiblosc::stream::{ChunkDecoder, ChunkEncoder, DEFAULT_CHUNKSIZE, FrameDecoder, FrameEncoder};
use oxiblosc::{CParams, Codec, DParams, Filter};

const LEN: u64 = 256 << 20;

/// A reader that makes `left` bytes of noisy u32 ramps as it is read (the
/// cost of a producer on the other end of a pipe).
struct Source {
    left: u64,
    state: u64,
    i: u32,
}

impl Source {
    fn new() -> Source {
        Source {
            left: LEN,
            state: 0x2545_F491_4F6C_DD1D,
            i: 0,
        }
    }
}

impl Read for Source {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = (buf.len() as u64).min(self.left) as usize / 4 * 4;
        for w in buf[..n].chunks_exact_mut(4) {
            self.state ^= self.state << 13;
            self.state ^= self.state >> 7;
            self.state ^= self.state << 17;
            self.i = self.i.wrapping_add(1);
            let v = (self.i >> 3) ^ (self.state as u32 & 0x3f);
            w.copy_from_slice(&v.to_le_bytes());
        }
        self.left -= n as u64;
        Ok(n)
    }
}

/// A writer that hashes what it is given (the cost of a consumer).
#[derive(Default)]
struct Sink(u64);

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        for w in buf.chunks(8) {
            let mut b = [0u8; 8];
            b[..w.len()].copy_from_slice(w);
            self.0 = (self.0 ^ u64::from_le_bytes(b)).wrapping_mul(0x100_0000_01b3);
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

fn params(nthreads: usize) -> CParams {
    CParams::default()
        .codec(Codec::Lz4)
        .clevel(5)
        .typesize(4)
        .filters(&[Filter::Shuffle])
        .nthreads(nthreads)
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("encode");
    g.throughput(Throughput::Bytes(LEN));
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(8));
    for nthreads in [1, 2] {
        let id = |format: &str| format!("{format}-nthreads{nthreads}");
        g.bench_function(BenchmarkId::new(id("chunks"), "serial"), |b| {
            b.iter(|| {
                let mut enc =
                    ChunkEncoder::new(Sink::default(), params(nthreads), DEFAULT_CHUNKSIZE)
                        .unwrap();
                io::copy(&mut Source::new(), &mut enc).unwrap();
                black_box(enc.finish().unwrap().0)
            })
        });
        g.bench_function(BenchmarkId::new(id("chunks"), "pipeline"), |b| {
            b.iter(|| {
                let mut enc =
                    ChunkEncoder::new(Sink::default(), params(nthreads), DEFAULT_CHUNKSIZE)
                        .unwrap();
                enc.copy_from(Source::new()).unwrap();
                black_box(enc.finish().unwrap().0)
            })
        });
        g.bench_function(BenchmarkId::new(id("frame"), "pipeline"), |b| {
            b.iter(|| {
                let mut enc =
                    FrameEncoder::new(Sink::default(), params(nthreads), DEFAULT_CHUNKSIZE)
                        .unwrap();
                enc.copy_from(Source::new()).unwrap();
                black_box(enc.finish().unwrap().0)
            })
        });
    }
    g.finish();

    let mut chunks = ChunkEncoder::new(Vec::new(), params(1), DEFAULT_CHUNKSIZE).unwrap();
    chunks.copy_from(Source::new()).unwrap();
    let chunks = chunks.finish().unwrap();
    let mut frame = FrameEncoder::new(Vec::new(), params(1), DEFAULT_CHUNKSIZE).unwrap();
    frame.copy_from(Source::new()).unwrap();
    let frame = frame.finish().unwrap();
    let mut g = c.benchmark_group("decode");
    g.throughput(Throughput::Bytes(LEN));
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(8));
    for nthreads in [1, 2] {
        let dp = || DParams::default().nthreads(nthreads);
        let id = |format: &str| format!("{format}-nthreads{nthreads}");
        g.bench_function(BenchmarkId::new(id("chunks"), "serial"), |b| {
            b.iter(|| {
                let mut sink = Sink::default();
                io::copy(&mut ChunkDecoder::with_params(&chunks[..], dp()), &mut sink).unwrap();
                black_box(sink.0)
            })
        });
        g.bench_function(BenchmarkId::new(id("chunks"), "pipeline"), |b| {
            b.iter(|| {
                let mut sink = Sink::default();
                ChunkDecoder::with_params(&chunks[..], dp())
                    .copy_to(&mut sink)
                    .unwrap();
                black_box(sink.0)
            })
        });
        g.bench_function(BenchmarkId::new(id("frame"), "pipeline"), |b| {
            b.iter(|| {
                let mut sink = Sink::default();
                FrameDecoder::with_params(&frame[..], dp())
                    .unwrap()
                    .copy_to(&mut sink)
                    .unwrap();
                black_box(sink.0)
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
