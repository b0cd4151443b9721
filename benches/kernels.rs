//! Criterion benchmarks of the filter kernels, on every implementation this
//! CPU can run (`Kernels::available()`: generic, sse2, avx2 / neon).
//!
//! ```text
//! cargo bench --bench kernels                      # everything (a few minutes)
//! cargo bench --bench kernels -- 'shuffle/avx2'    # a subset (regex on the id)
//! cargo bench --bench kernels -- --test            # run each once, as a check
//! ```
//!
//! Ids are `KERNEL/ISA/tsTYPESIZE-SIZE` (e.g. `bitshuffle/avx2/ts4-256KiB`)
//! plus `memcpy/SIZE`, the ceiling. Throughput is bytes of input per second.
//! The delta kernels are timed with a reference block (every block of a chunk
//! but the first); trunc_prec keeps 10 (f32) or 20 (f64) mantissa bits.
//! For the comparison with C-Blosc2 see `perf/` (`perf/run kernels`).

mod support;

use std::hint::black_box;
use std::time::Duration;

use criterion::measurement::WallTime;
use criterion::{
    BenchmarkGroup, BenchmarkId, Criterion, SamplingMode, Throughput, criterion_group,
    criterion_main,
};
use oxiblosc_kernels::Kernels;

const SIZES: [usize; 3] = [32 << 10, 256 << 10, 8 << 20];
const TYPESIZES: [usize; 5] = [1, 2, 4, 8, 16];

/// Throughput and sampling for a benchmark of `size` bytes: an 8 MiB call
/// of a generic kernel takes tens of ms, too long for linear sampling in the
/// short default measurement time, so those sizes use flat sampling.
fn configure(group: &mut BenchmarkGroup<'_, WallTime>, size: usize) {
    group.throughput(Throughput::Bytes(size as u64));
    group.sampling_mode(if size >= 1 << 20 {
        SamplingMode::Flat
    } else {
        SamplingMode::Auto
    });
}

fn size_label(bytes: usize) -> String {
    if bytes >= 1 << 20 {
        format!("{}MiB", bytes >> 20)
    } else {
        format!("{}KiB", bytes >> 10)
    }
}

/// A kernel as a uniform `(kernels, typesize, src, dst)` call.
type KernelFn = fn(&Kernels, usize, &[u8], &mut [u8]);

/// `(name, kernel, forward kernel that makes its input, typesizes)`.
type Case = (&'static str, KernelFn, Option<KernelFn>, &'static [usize]);

fn shuffle(k: &Kernels, ts: usize, src: &[u8], dst: &mut [u8]) {
    k.shuffle(ts, src, dst).unwrap();
}
fn unshuffle(k: &Kernels, ts: usize, src: &[u8], dst: &mut [u8]) {
    k.unshuffle(ts, src, dst).unwrap();
}
fn bitshuffle(k: &Kernels, ts: usize, src: &[u8], dst: &mut [u8]) {
    k.bitshuffle(ts, src, dst).unwrap();
}
fn bitunshuffle(k: &Kernels, ts: usize, src: &[u8], dst: &mut [u8]) {
    k.bitunshuffle(ts, src, dst).unwrap();
}
fn bytedelta_encode(k: &Kernels, ts: usize, src: &[u8], dst: &mut [u8]) {
    k.bytedelta_encode(ts, src, dst).unwrap();
}
fn bytedelta_decode(k: &Kernels, ts: usize, src: &[u8], dst: &mut [u8]) {
    k.bytedelta_decode(ts, src, dst).unwrap();
}
fn trunc_prec(k: &Kernels, ts: usize, src: &[u8], dst: &mut [u8]) {
    let prec = if ts == 4 { 10 } else { 20 };
    k.trunc_prec(ts, prec, src, dst).unwrap();
}

const CASES: [Case; 7] = [
    ("shuffle", shuffle, None, &TYPESIZES),
    ("unshuffle", unshuffle, Some(shuffle), &TYPESIZES),
    ("bitshuffle", bitshuffle, None, &TYPESIZES),
    ("bitunshuffle", bitunshuffle, Some(bitshuffle), &TYPESIZES),
    ("bytedelta_encode", bytedelta_encode, None, &TYPESIZES),
    (
        "bytedelta_decode",
        bytedelta_decode,
        Some(bytedelta_encode),
        &TYPESIZES,
    ),
    ("trunc_prec", trunc_prec, None, &[4, 8]),
];

fn kernels(c: &mut Criterion) {
    let max = SIZES[SIZES.len() - 1];
    let data = support::float_data(max);
    // A second block, as the delta reference (block 0 of the chunk).
    let reference = support::float_data(2 * max).split_off(max);
    let mut input = vec![0u8; max];
    let mut dst = vec![1u8; max];
    let generic = Kernels::available().next().expect("generic kernels");

    for (name, kernel, forward, typesizes) in CASES {
        let mut group = c.benchmark_group(name);
        for k in Kernels::available() {
            for &ts in typesizes {
                for size in SIZES {
                    let src: &[u8] = match forward {
                        Some(fwd) => {
                            fwd(generic, ts, &data[..size], &mut input[..size]);
                            &input[..size]
                        }
                        None => &data[..size],
                    };
                    let dst = &mut dst[..size];
                    configure(&mut group, size);
                    let id =
                        BenchmarkId::new(k.isa().name(), format!("ts{ts}-{}", size_label(size)));
                    group.bench_function(id, |b| {
                        b.iter(|| kernel(k, ts, black_box(src), black_box(&mut *dst)));
                    });
                }
            }
        }
        group.finish();
    }

    for (name, decode) in [("delta_encode", false), ("delta_decode", true)] {
        let mut group = c.benchmark_group(name);
        for k in Kernels::available() {
            for ts in TYPESIZES {
                for size in SIZES {
                    let reference = &reference[..size];
                    let src: &[u8] = if decode {
                        generic
                            .delta_encode(ts, Some(reference), &data[..size], &mut input[..size])
                            .unwrap();
                        &input[..size]
                    } else {
                        &data[..size]
                    };
                    let dst = &mut dst[..size];
                    configure(&mut group, size);
                    let id =
                        BenchmarkId::new(k.isa().name(), format!("ts{ts}-{}", size_label(size)));
                    group.bench_function(id, |b| {
                        b.iter(|| {
                            let (r, s, d) =
                                (black_box(reference), black_box(src), black_box(&mut *dst));
                            if decode {
                                k.delta_decode(ts, Some(r), s, d).unwrap();
                            } else {
                                k.delta_encode(ts, Some(r), s, d).unwrap();
                            }
                        });
                    });
                }
            }
        }
        group.finish();
    }

    let mut group = c.benchmark_group("memcpy");
    for size in SIZES {
        let src = &data[..size];
        let dst = &mut dst[..size];
        configure(&mut group, size);
        group.bench_function(size_label(size), |b| {
            b.iter(|| black_box(&mut *dst).copy_from_slice(black_box(src)));
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    // Short, so that the ~380 benchmarks finish in minutes on 2 cores;
    // override on the command line (--warm-up-time, --measurement-time).
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_millis(700))
        .sample_size(10);
    targets = kernels
}
criterion_main!(benches);
