//! `chunks`: whole-chunk compression and decompression, oxiblosc against
//! C-Blosc2, on the same data in the same process.
//!
//! For every codec x clevel x filter x nthreads x chunk size x workload:
//! our `Compressor::compress_into` / `Decompressor::decompress_into` against
//! C-Blosc2's `blosc2_compress_ctx` / `blosc2_decompress_ctx` (contexts made
//! once per row), plus `memcpy` of the same bytes as the ceiling. Before
//! timing, every chunk each library made is decoded by the other library
//! (and by itself) and compared with the input.
//!
//! One timed call compresses (or decompresses) every chunk of the row's
//! volume in turn: up to `total` bytes of the workload, fewer for slow
//! configurations (the volume is cut once compressing it has taken either
//! library `budget` of wall time in the check pass), so that zstd clevel 9
//! and friends stay in the grid without taking hours.

use std::hint::black_box;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use oxiblosc::{
    CParams, Codec, Compressor, DParams, Decompressor, Filter, SplitMode, max_compressed_len,
};

use crate::c::{CCompressParams, CCompressor, CDecompressor, SPLIT_AUTO};
use crate::kernels::size_label;
use crate::svg;
use crate::table::Table;
use crate::timing::{self, Clock, Config, Contestant, Sample};

/// A kind of data, generated in process, deterministically; a shorter
/// buffer is always a prefix of a longer one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Workload {
    /// int64 0, 1, 2, ... (typesize 8).
    Arange,
    /// float64 from 0 to 1000 in 8 Mi steps (typesize 8).
    Linspace,
    /// float32 sine with a little noise (typesize 4).
    Sine,
    /// int16 drawn uniformly from 0..16 (typesize 2).
    Alphabet,
    /// Uniformly random bytes (typesize 1).
    Random,
    /// Zeros (typesize 8).
    Zeros,
}

impl Workload {
    /// All, in table order.
    pub const ALL: [Workload; 6] = [
        Workload::Arange,
        Workload::Linspace,
        Workload::Sine,
        Workload::Alphabet,
        Workload::Random,
        Workload::Zeros,
    ];

    /// The three of `--quick`.
    pub const QUICK: [Workload; 3] = [Workload::Linspace, Workload::Sine, Workload::Alphabet];

    /// The name on the command line and in the table.
    pub fn name(self) -> &'static str {
        match self {
            Workload::Arange => "arange-i64",
            Workload::Linspace => "linspace-f64",
            Workload::Sine => "sine-f32",
            Workload::Alphabet => "alphabet-i16",
            Workload::Random => "random-u8",
            Workload::Zeros => "zeros-i64",
        }
    }

    /// Parses [`Workload::name`] or its first word (`sine`, `random`, ...).
    pub fn parse(s: &str) -> Option<Workload> {
        Workload::ALL
            .into_iter()
            .find(|w| w.name() == s || w.name().split('-').next() == Some(s))
    }

    /// Bytes per item.
    pub fn typesize(self) -> usize {
        match self {
            Workload::Arange | Workload::Linspace | Workload::Zeros => 8,
            Workload::Sine => 4,
            Workload::Alphabet => 2,
            Workload::Random => 1,
        }
    }

    /// `len` bytes of this workload (little-endian items).
    pub fn generate(self, len: usize) -> Vec<u8> {
        let ts = self.typesize();
        let mut rng = XorShift(0x9E37_79B9_7F4A_7C15 ^ (self as u64 + 1));
        let mut out = Vec::with_capacity(len + ts);
        let mut i = 0u64;
        // Linspace over the 64 MiB default volume, whatever `len` is, so that
        // a quick run's data is a prefix of a full run's.
        const LINSPACE_N: u64 = (64 << 20) / 8;
        while out.len() < len {
            match self {
                Workload::Arange => out.extend_from_slice(&(i as i64).to_le_bytes()),
                Workload::Linspace => {
                    let v = i as f64 * (1000.0 / (LINSPACE_N - 1) as f64);
                    out.extend_from_slice(&v.to_le_bytes());
                }
                Workload::Sine => {
                    let noise = rng.unit() - 0.5;
                    let v = ((i as f64 * 0.002).sin() + noise * 1e-3) as f32;
                    out.extend_from_slice(&v.to_le_bytes());
                }
                Workload::Alphabet => {
                    let v = (rng.next() >> 60) as i16;
                    out.extend_from_slice(&v.to_le_bytes());
                }
                Workload::Random => out.extend_from_slice(&rng.next().to_le_bytes()),
                Workload::Zeros => out.extend_from_slice(&[0; 8]),
            }
            i += 1;
        }
        out.truncate(len);
        out
    }
}

/// xorshift64: fast, deterministic, good enough for test data.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// One configuration of both libraries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct RowConfig {
    codec_id: u8,
    clevel: u8,
    filter_id: u8,
    nthreads: usize,
    chunk: usize,
    workload: Workload,
}

/// What to run.
#[derive(Clone, Debug)]
pub struct Options {
    /// Rounds and round length (rows with nthreads > 1 use the wall clock).
    pub timing: Config,
    /// Codecs.
    pub codecs: Vec<Codec>,
    /// Compression levels.
    pub clevels: Vec<u8>,
    /// The filter put in slot 0 (one per row).
    pub filters: Vec<Filter>,
    /// Threads, for both libraries, compression and decompression.
    pub nthreads: Vec<usize>,
    /// Chunk sizes in bytes.
    pub chunks: Vec<usize>,
    /// Data.
    pub workloads: Vec<Workload>,
    /// `--quick` without `--clevel`: clevels other than 5 for BloscLZ only.
    pub clevel5_except_blosclz: bool,
    /// `--quick` without `--nthreads` or `--chunk`: more than one thread
    /// only on the largest chunk size.
    pub threads_on_largest_chunk_only: bool,
    /// Bytes of each workload (the most one timed call processes).
    pub total: usize,
    /// Wall time of compressing after which the check pass stops adding
    /// chunks to a row's volume.
    pub budget: Duration,
    /// Where to write the CSV (`None`: don't).
    pub csv: Option<PathBuf>,
    /// Where to write the SVG plot (`None`: don't).
    pub svg: Option<PathBuf>,
    /// `--solo`: run only this contestant (0 ours compress, 1 C compress,
    /// 2 ours decompress, 3 C decompress) for this long per row, untimed
    /// by rounds: for profilers (`perf record`, callgrind).
    pub solo: Option<(usize, Duration)>,
    /// Print the main job's narrower table (no chunk, volume, memcpy and
    /// same-bytes columns) instead of the full one.
    pub compact: bool,
}

/// The contestants' names for `--solo`.
pub const SOLO_NAMES: [&str; 4] = [
    "ours-compress",
    "c-compress",
    "ours-decompress",
    "c-decompress",
];

impl Options {
    /// The full grid (or `--quick`'s subset), no CSV.
    pub fn new(quick: bool) -> Self {
        if quick {
            Options {
                timing: Config::quick(),
                codecs: Codec::ALL.to_vec(),
                clevels: vec![1, 5, 9],
                filters: vec![Filter::Shuffle],
                nthreads: vec![1, 2],
                chunks: vec![1 << 20, 4 << 20],
                workloads: Workload::QUICK.to_vec(),
                clevel5_except_blosclz: true,
                threads_on_largest_chunk_only: true,
                total: 8 << 20,
                budget: Duration::from_millis(100),
                csv: None,
                svg: None,
                solo: None,
                compact: false,
            }
        } else {
            Options {
                timing: Config::full(),
                codecs: Codec::ALL.to_vec(),
                clevels: vec![1, 5, 9],
                filters: vec![Filter::Shuffle, Filter::BitShuffle],
                nthreads: vec![1, 2],
                chunks: vec![1 << 20, 4 << 20],
                workloads: Workload::ALL.to_vec(),
                clevel5_except_blosclz: false,
                threads_on_largest_chunk_only: false,
                total: 64 << 20,
                budget: Duration::from_millis(250),
                csv: None,
                svg: None,
                solo: None,
                compact: false,
            }
        }
    }

    /// The main job's grid (`perf/run`, `perf/run main`): what a user of
    /// python-blosc2 compresses, in a few minutes on 2 cores. Every codec at
    /// clevel 1 (python-blosc2's default) and 5 (C-Blosc2's), shuffle and
    /// bitshuffle, 1 and 2 threads, 4 MiB chunks of three workloads (floats
    /// from a simulation, a noisy sensor signal, small integer labels),
    /// 16 MiB each, 5 interleaved rounds of >= 8 ms: 120 rows.
    pub fn main_job() -> Self {
        Options {
            timing: Config::quick(),
            codecs: Codec::ALL.to_vec(),
            clevels: vec![1, 5],
            filters: vec![Filter::Shuffle, Filter::BitShuffle],
            nthreads: vec![1, 2],
            chunks: vec![4 << 20],
            workloads: Workload::QUICK.to_vec(),
            clevel5_except_blosclz: false,
            threads_on_largest_chunk_only: false,
            total: 16 << 20,
            budget: Duration::from_millis(100),
            csv: None,
            svg: None,
            solo: None,
            compact: true,
        }
    }

    /// The number of rows [`run`] measures.
    pub fn rows(&self) -> usize {
        self.grid().len()
    }

    fn grid(&self) -> Vec<RowConfig> {
        let mut v = Vec::new();
        for &workload in &self.workloads {
            for &chunk in &self.chunks {
                for &codec in &self.codecs {
                    for &clevel in &self.clevels {
                        if self.clevel5_except_blosclz && clevel != 5 && codec != Codec::BloscLz {
                            continue;
                        }
                        for &filter in &self.filters {
                            for &nthreads in &self.nthreads {
                                if self.threads_on_largest_chunk_only
                                    && nthreads > 1
                                    && Some(&chunk) != self.chunks.iter().max()
                                {
                                    continue;
                                }
                                v.push(RowConfig {
                                    codec_id: codec.id(),
                                    clevel,
                                    filter_id: filter.id(),
                                    nthreads,
                                    chunk,
                                    workload,
                                });
                            }
                        }
                    }
                }
            }
        }
        v
    }
}

/// Where `name` (e.g. `chunks.csv`) goes by default: `target/perf/`, or
/// `perf/results/` (tracked) when `save`.
pub fn output_path(name: &str, save: bool) -> PathBuf {
    if save {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("results")
            .join(name)
    } else {
        crate::pydeps::target_dir().join("perf").join(name)
    }
}

impl RowConfig {
    fn codec(&self) -> Codec {
        Codec::from_id(self.codec_id).expect("a known codec")
    }

    fn filter(&self) -> Filter {
        Filter::from_id(self.filter_id, 0).expect("a known filter")
    }

    fn ours(&self) -> CParams {
        CParams::default()
            .codec(self.codec())
            .clevel(self.clevel)
            .typesize(self.workload.typesize())
            .filters(&[self.filter()])
            .splitmode(SplitMode::Auto)
            .nthreads(self.nthreads)
    }

    fn c(&self) -> CCompressParams {
        CCompressParams {
            codec: self.codec_id,
            clevel: self.clevel,
            typesize: self.workload.typesize(),
            filters: [self.filter_id, 0, 0, 0, 0, 0],
            splitmode: SPLIT_AUTO,
            nthreads: self.nthreads,
        }
    }

    fn label(&self) -> String {
        format!(
            "{} clevel {} {} nthreads {} {} {}",
            self.codec(),
            self.clevel,
            self.filter().name(),
            self.nthreads,
            size_label(self.chunk),
            self.workload.name()
        )
    }
}

/// The results of one row. Speeds in GB/s of uncompressed bytes; `*_x` are
/// ours/C (above 1: ours is faster, or compresses better).
#[derive(Clone, Debug)]
pub struct Row {
    cfg: RowConfig,
    /// Bytes processed per timed call.
    volume: usize,
    comp_ours: f64,
    comp_c: f64,
    comp_x: f64,
    dec_ours: f64,
    dec_c: f64,
    dec_x: f64,
    /// nbytes / cbytes over the volume.
    ratio_ours: f64,
    ratio_c: f64,
    memcpy: f64,
    spread: f64,
    clock: Clock,
    /// Our chunks are byte for byte C's.
    identical: bool,
    /// `None`: every cross-check passed; else what failed.
    error: Option<String>,
}

impl Row {
    /// Plot coordinates: (ratio, compress GB/s, decompress GB/s) of ours and of C.
    pub fn points(&self) -> [(f64, f64, f64); 2] {
        [
            (self.ratio_ours, self.comp_ours, self.dec_ours),
            (self.ratio_c, self.comp_c, self.dec_c),
        ]
    }

    /// The row's codec.
    pub fn codec(&self) -> Codec {
        self.cfg.codec()
    }

    /// A one-line description (plot tooltips).
    pub fn label(&self) -> String {
        self.cfg.label()
    }

    /// Whether the row was measured (its checks passed).
    pub fn ok(&self) -> bool {
        self.error.is_none()
    }

    /// Single-thread memcpy GB/s of the same bytes.
    pub fn memcpy(&self) -> f64 {
        self.memcpy
    }
}

/// Buffers shared by the rows of one workload, allocated and touched once.
struct Buffers {
    input: Vec<u8>,
    out_ours: Vec<u8>,
    out_c: Vec<u8>,
    copy: Vec<u8>,
}

/// Runs the grid, prints the markdown table, writes CSV and SVG. Returns
/// whether every cross-check passed.
///
/// # Errors
/// The CSV or SVG cannot be written.
pub fn run(opts: &Options) -> Result<bool, String> {
    let grid = opts.grid();
    let max_chunk = opts.chunks.iter().copied().max().unwrap_or(1 << 20);
    let total = opts.total.max(max_chunk);
    let mut rows: Vec<Row> = Vec::with_capacity(grid.len());
    let mut all_ok = true;
    let mut bufs: Option<(Workload, Buffers)> = None;
    for (n, cfg) in grid.iter().enumerate() {
        if bufs.as_ref().map(|(w, _)| *w) != Some(cfg.workload) {
            drop(bufs.take()); // free the previous workload's buffers first
            bufs = Some((
                cfg.workload,
                Buffers {
                    input: cfg.workload.generate(total),
                    out_ours: vec![1; total],
                    out_c: vec![1; total],
                    copy: vec![1; total],
                },
            ));
        }
        let b = &mut bufs.as_mut().expect("just made").1;
        let row = measure_row(cfg, opts, b);
        all_ok &= row.ok();
        eprintln!(
            "[{:>3}/{}] {:<58} comp {} | {} ({:.2}x)  dec {} | {} ({:.2}x)  ratio {} | {}  \
             memcpy {:.2}  {} MiB{}",
            n + 1,
            grid.len(),
            cfg.label(),
            gbps(row.comp_ours),
            gbps(row.comp_c),
            row.comp_x,
            gbps(row.dec_ours),
            gbps(row.dec_c),
            row.dec_x,
            ratio(row.ratio_ours),
            ratio(row.ratio_c),
            row.memcpy,
            mib(row.volume),
            match &row.error {
                None => String::new(),
                Some(e) => format!("  MISMATCH: {e}"),
            }
        );
        rows.push(row);
    }
    drop(bufs);
    rows.sort_by_key(|r| {
        (
            Codec::ALL.iter().position(|c| c.id() == r.cfg.codec_id),
            r.cfg.clevel,
            r.cfg.filter_id,
            r.cfg.nthreads,
            r.cfg.chunk,
            r.cfg.workload,
        )
    });
    if opts.compact {
        print_compact(opts, &rows);
    } else {
        print_table(opts, &rows);
    }
    print_summary(&rows);
    if let Some(path) = &opts.csv {
        csv_table(&rows)
            .write_csv(path)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        println!("\nCSV written to {}", path.display());
    }
    if let Some(path) = &opts.svg {
        svg::write(path, &rows).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        println!("plot written to {}", path.display());
    }
    Ok(all_ok)
}

/// Compresses `input[..volume]` chunk by chunk with both libraries, cross
/// checks, then times.
fn measure_row(cfg: &RowConfig, opts: &Options, b: &mut Buffers) -> Row {
    let cs = cfg.chunk;
    let mut row = Row {
        cfg: *cfg,
        volume: 0,
        comp_ours: f64::NAN,
        comp_c: f64::NAN,
        comp_x: f64::NAN,
        dec_ours: f64::NAN,
        dec_c: f64::NAN,
        dec_x: f64::NAN,
        ratio_ours: f64::NAN,
        ratio_c: f64::NAN,
        memcpy: f64::NAN,
        spread: f64::NAN,
        // Thread CPU time would miss C's worker threads.
        clock: if cfg.nthreads > 1 {
            Clock::Wall
        } else {
            opts.timing.clock
        },
        identical: false,
        error: None,
    };
    let mut ours = Compressor::new(cfg.ours());
    let mut dec = Decompressor::new(DParams::default().nthreads(cfg.nthreads));
    let (mut cc, mut cd) = match (CCompressor::new(&cfg.c()), CDecompressor::new(cfg.nthreads)) {
        (Ok(cc), Ok(cd)) => (cc, cd),
        (Err(e), _) | (_, Err(e)) => {
            row.error = Some(format!("C context: {e}"));
            return row;
        }
    };

    // Check pass: compress chunk after chunk until the volume is reached or
    // the slower library has spent the budget.
    let nmax = (b.input.len() / cs).max(1);
    let mut dst_ours = vec![0u8; max_compressed_len(cs)];
    let mut dst_c = vec![0u8; max_compressed_len(cs)];
    let mut chunks_ours: Vec<Vec<u8>> = Vec::new();
    let mut chunks_c: Vec<Vec<u8>> = Vec::new();
    let (mut t_ours, mut t_c) = (Duration::ZERO, Duration::ZERO);
    for src in b.input.chunks_exact(cs).take(nmax) {
        let t = Instant::now();
        let r = ours.compress_into(src, &mut dst_ours);
        t_ours += t.elapsed();
        match r {
            Ok(n) => chunks_ours.push(dst_ours[..n].to_vec()),
            Err(e) => {
                row.error = Some(format!("ours compress: {e}"));
                return row;
            }
        }
        let t = Instant::now();
        let r = cc.compress(src, &mut dst_c);
        t_c += t.elapsed();
        match r {
            Ok(n) => chunks_c.push(dst_c[..n].to_vec()),
            Err(e) => {
                row.error = Some(format!("C compress: {e}"));
                return row;
            }
        }
        if t_ours.max(t_c) >= opts.budget {
            break;
        }
    }
    let nchunks = chunks_ours.len();
    let volume = nchunks * cs;
    row.volume = volume;
    let input = &b.input[..volume];
    row.identical = chunks_ours == chunks_c;
    let csum = |v: &[Vec<u8>]| v.iter().map(Vec::len).sum::<usize>() as f64;
    row.ratio_ours = volume as f64 / csum(&chunks_ours);
    row.ratio_c = volume as f64 / csum(&chunks_c);

    // Every chunk decoded by both libraries must give the input back.
    let mut errors = Vec::new();
    {
        let mut check = |who: &str, chunks: &[Vec<u8>], out: &mut [u8], c_decodes: bool| {
            for (i, (chunk, want)) in chunks.iter().zip(input.chunks_exact(cs)).enumerate() {
                let got = &mut out[i * cs..(i + 1) * cs];
                got.fill(0xA5);
                let r = if c_decodes {
                    cd.decompress(chunk, got).map_err(|e| e.to_string())
                } else {
                    dec.decompress_into(chunk, got).map_err(|e| e.to_string())
                };
                match r {
                    Ok(n) if n == cs && got == want => {}
                    Ok(n) => {
                        let at = got.iter().zip(want).position(|(a, b)| a != b);
                        errors.push(format!(
                            "{who}: chunk {i} decodes to {n} bytes, first difference at {at:?}"
                        ));
                        return;
                    }
                    Err(e) => {
                        errors.push(format!("{who}: chunk {i}: {e}"));
                        return;
                    }
                }
            }
        };
        check("C decoding ours", &chunks_ours, &mut b.out_c, true);
        check("ours decoding C's", &chunks_c, &mut b.out_ours, false);
        check("C decoding C's", &chunks_c, &mut b.out_c, true);
        check("ours decoding ours", &chunks_ours, &mut b.out_ours, false);
    }
    if !errors.is_empty() {
        row.error = Some(errors.join("; "));
        return row;
    }

    // Timing: all five interleaved.
    let timing = Config {
        clock: row.clock,
        ..opts.timing
    };
    let samples: Vec<Sample> = {
        let out_ours = &mut b.out_ours[..volume];
        let out_c = &mut b.out_c[..volume];
        let copy = &mut b.copy[..volume];
        let (chunks_ours, chunks_c) = (&chunks_ours, &chunks_c);
        let mut contestants = [
            Contestant::new(|| {
                for src in input.chunks_exact(cs) {
                    let n = ours.compress_into(black_box(src), &mut dst_ours);
                    black_box(n.expect("compressed in the check pass"));
                }
            }),
            Contestant::new(|| {
                for src in input.chunks_exact(cs) {
                    let n = cc.compress(black_box(src), &mut dst_c);
                    black_box(n.expect("compressed in the check pass"));
                }
            }),
            Contestant::new(|| {
                for (chunk, out) in chunks_ours.iter().zip(out_ours.chunks_exact_mut(cs)) {
                    let n = dec.decompress_into(black_box(chunk), out);
                    black_box(n.expect("decoded in the check pass"));
                }
            }),
            Contestant::new(|| {
                for (chunk, out) in chunks_c.iter().zip(out_c.chunks_exact_mut(cs)) {
                    let n = cd.decompress(black_box(chunk), out);
                    black_box(n.expect("decoded in the check pass"));
                }
            }),
            Contestant::new(|| {
                copy.copy_from_slice(black_box(input));
                black_box(&copy);
            }),
        ];
        if let Some((who, secs)) = opts.solo {
            let start = Instant::now();
            let mut calls = 0u64;
            while calls == 0 || start.elapsed() < secs {
                contestants[who].call();
                calls += 1;
            }
            let per_call = start.elapsed().as_secs_f64() / calls as f64;
            eprintln!(
                "solo {}: {calls} calls, {:.3} GB/s (wall)",
                SOLO_NAMES[who],
                volume as f64 / per_call / 1e9
            );
            return row;
        }
        timing::measure(&timing, &mut contestants)
    };
    let gb = |i: usize| samples[i].gbps(volume);
    row.comp_ours = gb(0);
    row.comp_c = gb(1);
    row.comp_x = samples[0].speedup_over(&samples[1]);
    row.dec_ours = gb(2);
    row.dec_c = gb(3);
    row.dec_x = samples[2].speedup_over(&samples[3]);
    row.memcpy = gb(4);
    row.spread = samples[..4].iter().map(Sample::spread).fold(0.0, f64::max);
    row
}

fn gbps(v: f64) -> String {
    if v.is_nan() {
        "-".to_owned()
    } else if v < 0.1 {
        format!("{v:.3}")
    } else {
        format!("{v:.2}")
    }
}

fn ratio(v: f64) -> String {
    if v.is_nan() {
        "-".to_owned()
    } else if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

fn x(v: f64) -> String {
    if v.is_nan() {
        "-".to_owned()
    } else {
        format!("{v:.2}")
    }
}

fn mib(bytes: usize) -> String {
    let m = bytes as f64 / f64::from(1 << 20);
    if m.fract() == 0.0 {
        format!("{m:.0}")
    } else {
        format!("{m:.1}")
    }
}

const HEADER: [&str; 20] = [
    "codec",
    "filter",
    "workload",
    "clevel",
    "threads",
    "chunk",
    "MiB",
    "comp ours",
    "comp C",
    "comp ours/C",
    "dec ours",
    "dec C",
    "dec ours/C",
    "ratio ours",
    "ratio C",
    "ratio ours/C",
    "memcpy",
    "spread",
    "same bytes",
    "check",
];

/// The legend shared by both tables.
fn print_legend(opts: &Options) {
    println!();
    println!(
        "GB/s = 10^9 uncompressed bytes per second (compress: read, decompress: written), median \
         of {} interleaved rounds of >= {} ms ({} time; rows with threads > 1: wall time);",
        opts.timing.rounds,
        opts.timing.target.as_millis(),
        match opts.timing.clock {
            Clock::ThreadCpu => "thread CPU",
            Clock::Wall => "wall",
        }
    );
    println!(
        "ours/C = median over the rounds of C's time / ours in the same round (> 1: ours is \
         faster); ratio = nbytes / cbytes (higher: smaller chunks);"
    );
}

/// The main job's table: one line per row, what a user compares.
fn print_compact(opts: &Options, rows: &[Row]) {
    let mut t = Table::new([
        "codec",
        "filter",
        "workload",
        "clevel",
        "threads",
        "comp ours",
        "comp C",
        "comp ours/C",
        "dec ours",
        "dec C",
        "dec ours/C",
        "ratio ours",
        "ratio C",
        "spread",
        "check",
    ]);
    for r in rows {
        t.push(vec![
            r.cfg.codec().name().to_owned(),
            r.cfg.filter().name().to_owned(),
            r.cfg.workload.name().to_owned(),
            r.cfg.clevel.to_string(),
            r.cfg.nthreads.to_string(),
            gbps(r.comp_ours),
            gbps(r.comp_c),
            x(r.comp_x),
            gbps(r.dec_ours),
            gbps(r.dec_c),
            x(r.dec_x),
            ratio(r.ratio_ours),
            ratio(r.ratio_c),
            if r.spread.is_nan() {
                "-".to_owned()
            } else {
                format!("{:.0}%", r.spread * 100.0)
            },
            if r.ok() { "ok" } else { "MISMATCH" }.to_owned(),
        ]);
    }
    print_legend(opts);
    let chunks: Vec<String> = opts.chunks.iter().map(|&c| size_label(c)).collect();
    println!(
        "chunks of {} over up to {} MiB per workload; spread = (slowest - fastest round) / \
         median of the noisiest contestant; check = each library decoded the other's chunks \
         (and its own) to the input.",
        chunks.join(", "),
        mib(opts.total)
    );
    println!();
    print!("{}", t.markdown());
}

/// Geometric mean of the finite, positive values (NaN when there are none).
fn geomean(values: impl Iterator<Item = f64>) -> f64 {
    let (mut sum, mut n) = (0.0, 0usize);
    for v in values.filter(|v| v.is_finite() && *v > 0.0) {
        sum += v.ln();
        n += 1;
    }
    if n == 0 {
        f64::NAN
    } else {
        (sum / n as f64).exp()
    }
}

/// Per codec and thread count: geometric means of ours/C over the rows.
fn print_summary(rows: &[Row]) {
    let mut keys: Vec<(usize, u8, usize)> = rows
        .iter()
        .map(|r| {
            (
                Codec::ALL
                    .iter()
                    .position(|c| c.id() == r.cfg.codec_id)
                    .unwrap_or(usize::MAX),
                r.cfg.codec_id,
                r.cfg.nthreads,
            )
        })
        .collect();
    keys.sort_unstable();
    keys.dedup();
    let mut t = Table::new([
        "codec",
        "threads",
        "rows",
        "comp ours/C",
        "dec ours/C",
        "ratio ours/C",
        "check ok",
    ]);
    let mut line = |name: String, threads: String, sel: Vec<&Row>| {
        t.push(vec![
            name,
            threads,
            sel.len().to_string(),
            x(geomean(sel.iter().map(|r| r.comp_x))),
            x(geomean(sel.iter().map(|r| r.dec_x))),
            x(geomean(sel.iter().map(|r| r.ratio_ours / r.ratio_c))),
            format!("{}/{}", sel.iter().filter(|r| r.ok()).count(), sel.len()),
        ]);
    };
    for &(_, id, n) in &keys {
        let sel: Vec<&Row> = rows
            .iter()
            .filter(|r| r.cfg.codec_id == id && r.cfg.nthreads == n)
            .collect();
        let name = Codec::from_id(id).map_or("?", Codec::name).to_owned();
        line(name, n.to_string(), sel);
    }
    if keys.len() > 1 {
        line("all".to_owned(), "-".to_owned(), rows.iter().collect());
    }
    println!();
    println!("Summary: geometric mean of ours/C over the rows (> 1: ours faster / smaller):");
    println!();
    print!("{}", t.markdown());
}

fn print_table(opts: &Options, rows: &[Row]) {
    let mut t = Table::new(HEADER);
    for r in rows {
        t.push(vec![
            r.cfg.codec().name().to_owned(),
            r.cfg.filter().name().to_owned(),
            r.cfg.workload.name().to_owned(),
            r.cfg.clevel.to_string(),
            r.cfg.nthreads.to_string(),
            size_label(r.cfg.chunk),
            mib(r.volume),
            gbps(r.comp_ours),
            gbps(r.comp_c),
            x(r.comp_x),
            gbps(r.dec_ours),
            gbps(r.dec_c),
            x(r.dec_x),
            ratio(r.ratio_ours),
            ratio(r.ratio_c),
            x(r.ratio_ours / r.ratio_c),
            gbps(r.memcpy),
            if r.spread.is_nan() {
                "-".to_owned()
            } else {
                format!("{:.0}%", r.spread * 100.0)
            },
            if r.identical { "yes" } else { "no" }.to_owned(),
            if r.ok() { "ok" } else { "MISMATCH" }.to_owned(),
        ]);
    }
    print_legend(opts);
    println!(
        "MiB = data per timed call ({} MiB, or less where compressing it took longer than {} ms);",
        mib(opts.total),
        opts.budget.as_millis()
    );
    println!("ratio ours/C > 1: ours compresses better;");
    println!(
        "memcpy = single-thread copy of the same bytes (the ceiling); spread = (slowest - \
         fastest round) / median, noisiest contestant; same bytes = our chunks equal C's byte for \
         byte; check = each library decoded the other's chunks (and its own) to the input."
    );
    println!();
    print!("{}", t.markdown());
}

fn csv_table(rows: &[Row]) -> Table {
    let mut t = Table::new([
        "codec",
        "filter",
        "workload",
        "typesize",
        "clevel",
        "nthreads",
        "chunk_bytes",
        "volume_bytes",
        "comp_ours_gbps",
        "comp_c_gbps",
        "comp_ours_over_c",
        "dec_ours_gbps",
        "dec_c_gbps",
        "dec_ours_over_c",
        "ratio_ours",
        "ratio_c",
        "memcpy_gbps",
        "spread_pct",
        "clock",
        "same_bytes",
        "check",
    ]);
    let f = |v: f64| {
        if v.is_nan() {
            String::new()
        } else {
            format!("{v:.4}")
        }
    };
    for r in rows {
        t.push(vec![
            r.cfg.codec().name().to_owned(),
            r.cfg.filter().name().to_owned(),
            r.cfg.workload.name().to_owned(),
            r.cfg.workload.typesize().to_string(),
            r.cfg.clevel.to_string(),
            r.cfg.nthreads.to_string(),
            r.cfg.chunk.to_string(),
            r.volume.to_string(),
            f(r.comp_ours),
            f(r.comp_c),
            f(r.comp_x),
            f(r.dec_ours),
            f(r.dec_c),
            f(r.dec_x),
            f(r.ratio_ours),
            f(r.ratio_c),
            f(r.memcpy),
            f(r.spread * 100.0),
            r.clock.name().to_owned(),
            r.identical.to_string(),
            match &r.error {
                None => "ok".to_owned(),
                Some(e) => format!("MISMATCH: {e}"),
            },
        ]);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workloads_are_prefix_stable() {
        for w in Workload::ALL {
            let long = w.generate(10_000);
            let short = w.generate(777);
            assert_eq!(long.len(), 10_000);
            assert_eq!(&long[..777], &short[..], "{}", w.name());
            assert_eq!(Workload::parse(w.name()), Some(w));
        }
        assert_eq!(Workload::parse("sine"), Some(Workload::Sine));
        assert!(
            Workload::generate(Workload::Alphabet, 4000)
                .chunks(2)
                .all(|v| i16::from_le_bytes([v[0], v[1]]) < 16)
        );
    }

    #[test]
    fn quick_grid_is_the_subset() {
        let g = Options::new(true).grid();
        // 5 codecs at clevel 5 + blosclz at 1 and 9, on 3 workloads, each
        // at nthreads 1 on 1 MiB and 4 MiB chunks and at nthreads 2 on 4 MiB.
        assert_eq!(g.len(), 7 * 3 * 3);
        assert!(
            g.iter()
                .all(|c| c.clevel == 5 || c.codec() == Codec::BloscLz)
        );
        let big = g.iter().map(|c| c.chunk).max().unwrap();
        assert!(g.iter().all(|c| c.nthreads == 1 || c.chunk == big));
        assert_eq!(g.iter().filter(|c| c.nthreads == 2).count(), 7 * 3);
        assert_eq!(Options::new(false).grid().len(), 5 * 3 * 2 * 2 * 2 * 6);
    }

    /// Our chunks decode in C-Blosc2 and C-Blosc2's in ours, for every codec
    /// (and both filters, a multi-block chunk with a short last block).
    #[test]
    fn chunks_round_trip_across_libraries() {
        let len = 300_004;
        for w in [Workload::Sine, Workload::Arange] {
            let data = w.generate(len);
            for codec in Codec::ALL {
                for filter in [Filter::Shuffle, Filter::BitShuffle] {
                    let cfg = RowConfig {
                        codec_id: codec.id(),
                        clevel: 5,
                        filter_id: filter.id(),
                        nthreads: 1,
                        chunk: len,
                        workload: w,
                    };
                    let what = cfg.label();
                    let mut buf = vec![0u8; max_compressed_len(len)];
                    let n = Compressor::new(cfg.ours())
                        .compress_into(&data, &mut buf)
                        .unwrap();
                    let ours = buf[..n].to_vec();
                    let n = CCompressor::new(&cfg.c())
                        .unwrap()
                        .compress(&data, &mut buf)
                        .unwrap();
                    let theirs = buf[..n].to_vec();
                    assert!(ours.len() < len && theirs.len() < len, "{what}");

                    let mut out = vec![0u8; len];
                    let mut cd = CDecompressor::new(1).unwrap();
                    assert_eq!(cd.decompress(&ours, &mut out), Ok(len), "{what}");
                    assert!(out == data, "C decoding ours: {what}");
                    out.fill(0);
                    let mut dec = Decompressor::new(DParams::default());
                    assert_eq!(dec.decompress_into(&theirs, &mut out).unwrap(), len);
                    assert!(out == data, "ours decoding C's: {what}");
                }
            }
        }
    }

    /// The main job's plumbing on a tiny grid (against the static C-Blosc2
    /// here): every row checked and measured, table printed, CSV and plot
    /// written where asked, directories made.
    #[test]
    fn a_tiny_main_job_writes_its_csv_and_plot() {
        let dir = crate::pydeps::target_dir()
            .join(format!("perf-main-test-{}", std::process::id()))
            .join("new");
        let _ = std::fs::remove_dir_all(&dir);
        let mut o = Options::main_job();
        o.codecs = vec![Codec::BloscLz, Codec::Lz4];
        o.clevels = vec![5];
        o.filters = vec![Filter::Shuffle];
        o.nthreads = vec![1, 2];
        o.chunks = vec![64 << 10];
        o.workloads = vec![Workload::Sine];
        o.total = 128 << 10;
        o.timing = Config {
            rounds: 1,
            target: Duration::from_millis(1),
            clock: Clock::Wall,
        };
        o.csv = Some(dir.join("main.csv"));
        o.svg = Some(dir.join("main.svg"));
        assert_eq!(o.rows(), 4);
        assert!(run(&o).unwrap());
        let csv = std::fs::read_to_string(dir.join("main.csv")).unwrap();
        assert_eq!(csv.lines().count(), 1 + 4, "{csv}");
        assert!(csv.lines().skip(1).all(|l| l.ends_with(",ok")), "{csv}");
        let svg = std::fs::read_to_string(dir.join("main.svg")).unwrap();
        assert!(
            svg.starts_with("<svg") && svg.contains("4 rows"),
            "{svg:.200}"
        );
        std::fs::remove_dir_all(dir.parent().unwrap()).unwrap();
    }

    #[test]
    fn geometric_means() {
        assert!((geomean([2.0, 8.0].into_iter()) - 4.0).abs() < 1e-12);
        assert!((geomean([f64::NAN, 0.0, 3.0].into_iter()) - 3.0).abs() < 1e-12);
        assert!(geomean(std::iter::empty()).is_nan());
    }

    #[test]
    fn formats() {
        assert_eq!(ratio(32768.4), "32768");
        assert_eq!(ratio(12.34), "12.3");
        assert_eq!(gbps(0.0123), "0.012");
        assert_eq!(mib(8 << 20), "8");
        assert_eq!(mib(3 << 19), "1.5");
    }
}
