//! `scaling`: what a second thread buys, ours and C-Blosc2's, per chunk size.
//!
//! For each codec and chunk size, eight contestants are timed interleaved
//! with the wall clock: compress and decompress, ours and C, with 1 and with
//! `--nthreads` threads. The table gives each side's N-thread/1-thread
//! speedup, and how many CPUs the N-thread decompression kept busy (process
//! CPU time / wall time over a separate run): about N when the threads
//! really work in parallel, whatever the machine's load does to the speedup.
//! With `OXIBLOSC_INLINE_BELOW=0` in the environment our small chunks go to
//! the pool too, which is how the inline threshold was chosen.

use std::hint::black_box;
use std::time::{Duration, Instant};

use oxiblosc::{CParams, Codec, Compressor, DParams, Decompressor, Filter, SplitMode};

use crate::c::{CCompressParams, CCompressor, CDecompressor, SPLIT_AUTO, process_cpu_time};
use crate::chunks::Workload;
use crate::kernels::size_label;
use crate::table::Table;
use crate::timing::{self, Clock, Config, Contestant};

/// What to run.
#[derive(Clone, Debug)]
pub struct Options {
    /// Rounds and their length (always the wall clock).
    pub timing: Config,
    /// Codecs (clevel 5 except `clevel`).
    pub codecs: Vec<Codec>,
    /// Compression level.
    pub clevel: u8,
    /// The filter in slot 0.
    pub filter: Filter,
    /// Chunk sizes.
    pub chunks: Vec<usize>,
    /// Data.
    pub workload: Workload,
    /// Bytes per timed call.
    pub total: usize,
    /// The thread count compared with 1.
    pub nthreads: usize,
}

impl Options {
    /// The default sweep, or `--quick`'s.
    pub fn new(quick: bool) -> Options {
        Options {
            timing: Config {
                clock: Clock::Wall,
                ..if quick {
                    Config::quick()
                } else {
                    Config::full()
                }
            },
            codecs: if quick {
                vec![Codec::Lz4, Codec::Zstd]
            } else {
                vec![Codec::BloscLz, Codec::Lz4, Codec::Zlib, Codec::Zstd]
            },
            clevel: 5,
            filter: Filter::Shuffle,
            chunks: if quick {
                vec![64 << 10, 256 << 10, 4 << 20]
            } else {
                vec![
                    16 << 10,
                    32 << 10,
                    64 << 10,
                    128 << 10,
                    256 << 10,
                    512 << 10,
                    1 << 20,
                    4 << 20,
                ]
            },
            workload: Workload::Sine,
            total: 16 << 20,
            nthreads: 2,
        }
    }
}

/// Runs the sweep and prints the table; `Ok(false)` when a round trip
/// failed.
pub fn run(o: &Options) -> Result<bool, String> {
    let n = o.nthreads;
    let mut t = Table::new([
        "codec".to_owned(),
        "chunk".to_owned(),
        "comp ours 1".to_owned(),
        format!("comp ours {n}/1"),
        format!("comp C {n}/1"),
        "dec ours 1".to_owned(),
        format!("dec ours {n}/1"),
        format!("dec C {n}/1"),
        format!("dec ours {n}: CPUs busy"),
        format!("dec C {n}: CPUs busy"),
        format!("dec ours CPU {n}/1"),
        format!("dec C CPU {n}/1"),
        "dec ours/C 1".to_owned(),
        format!("dec ours/C {n}"),
    ]);
    let mut ok = true;
    let mut census = None;
    let input_all = o
        .workload
        .generate(o.total.max(o.chunks.iter().copied().max().unwrap_or(0)));
    for &codec in &o.codecs {
        for &cs in &o.chunks {
            let volume = input_all.len() / cs * cs;
            let input = &input_all[..volume];
            let ours_p = |threads: usize| {
                CParams::default()
                    .codec(codec)
                    .clevel(o.clevel)
                    .typesize(o.workload.typesize())
                    .filters(&[o.filter])
                    .splitmode(SplitMode::Auto)
                    .nthreads(threads)
            };
            let c_p = |threads: usize| CCompressParams {
                codec: codec.id(),
                clevel: o.clevel,
                typesize: o.workload.typesize(),
                filters: [o.filter.id(), 0, 0, 0, 0, 0],
                splitmode: SPLIT_AUTO,
                nthreads: threads,
            };
            let mut oc = [Compressor::new(ours_p(1)), Compressor::new(ours_p(n))];
            let mut od = [
                Decompressor::new(DParams::default().nthreads(1)),
                Decompressor::new(DParams::default().nthreads(n)),
            ];
            let mut cc = [
                CCompressor::new(&c_p(1)).map_err(|e| e.to_string())?,
                CCompressor::new(&c_p(n)).map_err(|e| e.to_string())?,
            ];
            let mut cd = [
                CDecompressor::new(1).map_err(|e| e.to_string())?,
                CDecompressor::new(n).map_err(|e| e.to_string())?,
            ];
            // Chunks (made with one thread) and a round trip each way.
            let mut dst = vec![0u8; cs + 32];
            let mut chunks_ours = Vec::new();
            let mut chunks_c = Vec::new();
            for src in input.chunks_exact(cs) {
                let k = oc[0]
                    .compress_into(src, &mut dst)
                    .map_err(|e| e.to_string())?;
                chunks_ours.push(dst[..k].to_vec());
                let k = cc[0].compress(src, &mut dst).map_err(|e| e.to_string())?;
                chunks_c.push(dst[..k].to_vec());
            }
            let mut out = vec![0u8; volume];
            for (d, chunks) in [(0, &chunks_c), (1, &chunks_ours)] {
                for (chunk, o) in chunks.iter().zip(out.chunks_exact_mut(cs)) {
                    od[d].decompress_into(chunk, o).map_err(|e| e.to_string())?;
                }
                if out != input {
                    eprintln!("{codec} {}: no round trip", size_label(cs));
                    ok = false;
                }
            }
            let (dst_a, dst_b) = (&mut vec![0u8; cs + 32], &mut vec![0u8; cs + 32]);
            let samples = {
                let [oc0, oc1] = &mut oc;
                let [cc0, cc1] = &mut cc;
                let [od0, od1] = &mut od;
                let [cd0, cd1] = &mut cd;
                let out = &mut out;
                let (co, cc_) = (&chunks_ours, &chunks_c);
                let out2 = &mut vec![0u8; volume];
                let out3 = &mut vec![0u8; volume];
                let out4 = &mut vec![0u8; volume];
                let mut cs_ = [
                    comp(oc0, input, cs, dst_a),
                    comp(oc1, input, cs, dst_b),
                    ccomp(cc0, input, cs, vec![0u8; cs + 32]),
                    ccomp(cc1, input, cs, vec![0u8; cs + 32]),
                    dec(od0, co, cs, out),
                    dec(od1, co, cs, out2),
                    cdec(cd0, cc_, cs, out3),
                    cdec(cd1, cc_, cs, out4),
                ];
                let s = timing::measure(&o.timing, &mut cs_);
                let busy_ours = busy(&mut cs_[5]);
                let busy_c = busy(&mut cs_[7]);
                let cpu_ours = busy(&mut cs_[4]).1;
                let cpu_c = busy(&mut cs_[6]).1;
                let (busy_ours, busy_c) = (
                    (busy_ours.0, busy_ours.1 / cpu_ours),
                    (busy_c.0, busy_c.1 / cpu_c),
                );
                // While every context of this row is alive; the row with
                // the most threads.
                let now = thread_census();
                if census
                    .as_ref()
                    .is_none_or(|c: &(usize, String)| now.0 > c.0)
                {
                    census = Some(now);
                }
                (s, busy_ours, busy_c)
            };
            let (s, busy_ours, busy_c) = samples;
            let row = vec![
                codec.to_string(),
                size_label(cs),
                format!("{:.2}", s[0].gbps(volume)),
                format!("{:.2}x", s[1].speedup_over(&s[0])),
                format!("{:.2}x", s[3].speedup_over(&s[2])),
                format!("{:.2}", s[4].gbps(volume)),
                format!("{:.2}x", s[5].speedup_over(&s[4])),
                format!("{:.2}x", s[7].speedup_over(&s[6])),
                format!("{:.2}", busy_ours.0),
                format!("{:.2}", busy_c.0),
                format!("{:.2}", busy_ours.1),
                format!("{:.2}", busy_c.1),
                format!("{:.2}x", s[4].speedup_over(&s[6])),
                format!("{:.2}x", s[5].speedup_over(&s[7])),
            ];
            eprintln!("{}", row.join("  "));
            t.push(row);
        }
    }
    println!(
        "\nGB/s of uncompressed data, one thread, ours; N/1 = median over interleaved rounds of the \
         1-thread time / the {n}-thread time (wall clock; > 1: the threads help); CPUs busy = \
         process CPU time / wall time while only that contestant runs (about {n} when its threads \
         run in parallel on an idle machine); CPU {n}/1 = process CPU time per call with {n} \
         threads / with 1 (the work threads add: spinning, waking, copying); workload {}, clevel {}, {}, {} MiB per call.\n",
        o.workload.name(),
        o.clevel,
        o.filter.name(),
        o.total >> 20
    );
    print!("{}", t.markdown());
    if let Some((_, c)) = census {
        println!("\n{c}");
    }
    Ok(ok)
}

fn comp<'a>(
    c: &'a mut Compressor,
    input: &'a [u8],
    cs: usize,
    dst: &'a mut [u8],
) -> Contestant<'a> {
    Contestant::new(move || {
        for src in input.chunks_exact(cs) {
            black_box(c.compress_into(black_box(src), dst).expect("compresses"));
        }
    })
}

fn ccomp<'a>(
    c: &'a mut CCompressor,
    input: &'a [u8],
    cs: usize,
    mut dst: Vec<u8>,
) -> Contestant<'a> {
    Contestant::new(move || {
        for src in input.chunks_exact(cs) {
            black_box(c.compress(black_box(src), &mut dst).expect("compresses"));
        }
    })
}

fn dec<'a>(
    d: &'a mut Decompressor,
    chunks: &'a [Vec<u8>],
    cs: usize,
    out: &'a mut [u8],
) -> Contestant<'a> {
    Contestant::new(move || {
        for (chunk, o) in chunks.iter().zip(out.chunks_exact_mut(cs)) {
            black_box(d.decompress_into(black_box(chunk), o).expect("decodes"));
        }
    })
}

fn cdec<'a>(
    d: &'a mut CDecompressor,
    chunks: &'a [Vec<u8>],
    cs: usize,
    out: &'a mut [u8],
) -> Contestant<'a> {
    Contestant::new(move || {
        for (chunk, o) in chunks.iter().zip(out.chunks_exact_mut(cs)) {
            black_box(d.decompress(black_box(chunk), o).expect("decodes"));
        }
    })
}

/// Runs `c` alone for about 300 ms: (process CPU time / wall time, process
/// CPU seconds per call).
fn busy(c: &mut Contestant<'_>) -> (f64, f64) {
    let (Some(cpu0), start) = (process_cpu_time(), Instant::now()) else {
        return (f64::NAN, f64::NAN);
    };
    let mut calls = 0u32;
    while calls == 0 || start.elapsed() < Duration::from_millis(300) {
        c.call();
        calls += 1;
    }
    let wall = start.elapsed().as_secs_f64();
    let cpu = process_cpu_time()
        .unwrap_or(cpu0)
        .saturating_sub(cpu0)
        .as_secs_f64();
    (cpu / wall, cpu / f64::from(calls))
}

/// The threads of this process by name: ours are `oxiblosc-N-i`, C-Blosc2's
/// pthreads keep the program's name.
pub fn thread_census() -> (usize, String) {
    let Ok(dir) = std::fs::read_dir("/proc/self/task") else {
        return (0, "threads: unknown (no /proc/self/task)".to_owned());
    };
    let mut names: Vec<String> = dir
        .filter_map(|e| e.ok())
        .filter_map(|e| std::fs::read_to_string(e.path().join("comm")).ok())
        .map(|s| s.trim().to_owned())
        .collect();
    names.sort();
    let ours = names
        .iter()
        .filter(|n| {
            n.strip_prefix("oxiblosc-")
                .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()))
        })
        .count();
    let text = format!(
        "threads in this process (at the busiest row): {} ({} oxiblosc pool threads; the \
         other {} are the main thread and the threads of C-Blosc2's compression and \
         decompression contexts): {}",
        names.len(),
        ours,
        names.len() - ours,
        names.join(", ")
    );
    (names.len(), text)
}
