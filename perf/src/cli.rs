//! The command line (clap derive): what each option means and how it turns
//! into the `Options` of `kernels`, `chunks`, `scaling`, `capi` and `b2nd`.
//!
//! Outputs: the main job always writes `target/perf/main.csv` and `.svg`; a
//! complete default `kernels` / `chunks` run writes `target/perf/kernels.csv`
//! / `chunks.csv` + `.svg`, `--quick` and subsets nothing; `capi` and `b2nd`
//! always write `target/perf/capi.csv` / `b2nd.csv`. `--save` writes the
//! same files into `perf/results/` (tracked) instead; `--csv` / `--svg` put
//! them anywhere, `--no-csv` writes none.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use oxiblosc::{Codec, Filter};

use crate::b2nd;
use crate::capi;
use crate::chunks::{self, Workload, output_path};
use crate::kernels::{self, Kernel};
use crate::scaling;
use crate::timing::{self, Clock};

/// oxiblosc timed against the real C-Blosc2, in one process, on the same
/// buffers, interleaved.
///
/// Without a command: the main job (`main`), whole chunks of every codec
/// against C-Blosc2 3.3.5 (python-blosc2 4.14.1's library, installed into
/// target/pydeps when missing), a table, a CSV and a plot in a few minutes.
#[derive(Parser, Debug)]
#[command(
    name = "oxiblosc-perf",
    after_help = "\
Examples:
  perf/run                      the main job (= perf/run main)
  perf/run main --save          the same, writing perf/results/main.{csv,svg}
  perf/run --quick              short for `chunks --quick`
  perf/run kernels --quick      the shuffle kernels against C-Blosc2's
  perf/run chunks --codec blosclz --filter shuffle --nthreads 1
  perf/run --c-lib target/pydeps/blosc2/lib/libblosc2.so chunks --quick"
)]
pub struct Cli {
    /// Time whole chunks against this C-Blosc2 3.x shared library (dlopen),
    /// e.g. python-blosc2's target/pydeps/blosc2/lib/libblosc2.so (3.3.5),
    /// instead of the static 2.15 of blosc2-sys (the main job's and the
    /// kernels' default is python-blosc2's library; the kernels also run
    /// the static 2.15's code for each instruction set)
    #[arg(long, global = true, value_name = "PATH")]
    pub c_lib: Option<PathBuf>,

    #[command(subcommand)]
    pub command: Option<Command>,
}

/// The commands.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// The main job (the default): whole chunks, ours against C-Blosc2 3.3.5
    /// (every codec at clevel 1 and 5, shuffle and bitshuffle, 1 and 2
    /// threads, 4 MiB chunks of three workloads: 120 rows, a few minutes);
    /// writes target/perf/main.csv and .svg
    Main(MainArgs),
    /// shuffle/unshuffle/bitshuffle/bitunshuffle: ours vs C-Blosc2 3.3.5's
    /// exported kernels and the static 2.15's, GB/s table
    Kernels(KernelArgs),
    /// Whole chunks: compress/decompress GB/s and ratio, ours vs C-Blosc2
    /// (the static 2.15 unless --c-lib)
    Chunks(ChunkArgs),
    /// What a second thread buys per chunk size (ours and C-Blosc2's), and
    /// how many CPUs the threads keep busy (wall clock;
    /// OXIBLOSC_INLINE_BELOW=0 in the environment sends our small chunks to
    /// the pool too)
    Scaling(ScalingArgs),
    /// CPU, chosen implementations (ours and C-Blosc2's), C-Blosc2 version
    Info,
    /// The same C calls (blosc2_{compress,decompress,getitem}_ctx,
    /// blosc_{compress,decompress,getitem}) through our libblosc2.so /
    /// libblosc.so.1 and through C-Blosc2 3.3.5's and C-Blosc 1.21's, side
    /// by side (all four dlopened); writes target/perf/capi.csv
    Capi(CapiArgs),
    /// The NDArray calls of b2nd.h (b2nd_from_cbuffer, b2nd_to_cbuffer,
    /// b2nd_get_slice_cbuffer, b2nd_set_slice_cbuffer) through our
    /// libblosc2.so and through C-Blosc2 3.3.5's, side by side (both
    /// dlopened), on in-memory arrays of points and an image; writes
    /// target/perf/b2nd.csv
    B2nd(B2ndArgs),
    /// Files through the CLI: `oxiblosc compress` / `decompress` (release
    /// binary, process wall time) against python-blosc2 4.14.1 doing the
    /// same with a file-backed SChunk, on 512 MiB of float32 samples;
    /// prints the table (not in CI: minutes)
    Files(FilesArgs),
}

/// Options of `files`.
#[derive(Args, Debug, Clone)]
pub struct FilesArgs {
    /// Bytes of input, suffixes k and m
    #[arg(long, value_name = "BYTES", default_value = "512m", value_parser = parse_num)]
    pub size: usize,
    /// Codecs
    #[arg(long, value_name = "NAME,...", value_delimiter = ',', default_value = "lz4,blosclz,zstd",
          value_parser = parse_codec)]
    pub codec: Vec<Codec>,
    /// Threads, for both sides
    #[arg(long, value_name = "N,...", value_delimiter = ',', default_value = "1,2",
          value_parser = parse_threads)]
    pub nthreads: Vec<usize>,
    /// Rounds per contestant (the median is reported)
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub rounds: usize,
    /// Also write the table as CSV here
    #[arg(long, value_name = "PATH")]
    pub csv: Option<PathBuf>,
}

impl FilesArgs {
    /// The options of `files`.
    pub fn options(&self) -> crate::files::Options {
        crate::files::Options {
            size: self.size.max(4),
            codecs: self.codec.clone(),
            nthreads: self.nthreads.clone(),
            rounds: self.rounds.max(1),
            csv: self.csv.clone(),
        }
    }
}

impl Cli {
    /// Parses `args` (the program name first); `--quick` as the first option
    /// (after `--c-lib PATH`) means `chunks --quick`, as it always has.
    /// Prints help or the error and exits when clap says so.
    pub fn parse_args(args: impl IntoIterator<Item = OsString>) -> Cli {
        Cli::parse_from(quick_means_chunks(args.into_iter().collect()))
    }
}

/// Inserts `chunks` before a leading `--quick`.
fn quick_means_chunks(mut args: Vec<OsString>) -> Vec<OsString> {
    let mut i = 1;
    while let Some(a) = args.get(i).and_then(|a| a.to_str()) {
        match a {
            "--c-lib" => i += 2,
            _ if a.starts_with("--c-lib=") => i += 1,
            "--quick" => {
                args.insert(i, "chunks".into());
                break;
            }
            _ => break,
        }
    }
    args
}

/// `--rounds` and `--target-ms`, which every command takes.
#[derive(Args, Debug, Default, Clone)]
pub struct RoundArgs {
    /// Rounds per contestant (the median is reported)
    #[arg(long, value_name = "N")]
    pub rounds: Option<usize>,
    /// Minimum length of one round, in milliseconds
    #[arg(long, value_name = "MS")]
    pub target_ms: Option<u64>,
}

impl RoundArgs {
    fn apply(&self, t: &mut timing::Config) {
        if let Some(n) = self.rounds {
            t.rounds = n.max(1);
        }
        if let Some(ms) = self.target_ms {
            t.target = Duration::from_millis(ms);
        }
    }
}

/// The grid of whole chunks, shared by `main` and `chunks`; every option
/// narrows (or replaces) one dimension. Lists are comma-separated.
#[derive(Args, Debug, Default, Clone)]
pub struct GridArgs {
    /// Codecs: blosclz, lz4, lz4hc, zlib, zstd (default: all)
    #[arg(long, value_name = "NAME,...", value_delimiter = ',', value_parser = parse_codec)]
    pub codec: Option<Vec<Codec>>,
    /// Compression levels (default: chunks 1,5,9; main 1,5)
    #[arg(long, value_name = "N,...", value_delimiter = ',', value_parser = parse_clevel)]
    pub clevel: Option<Vec<u8>>,
    /// The filter in slot 0: shuffle, bitshuffle (default: both)
    #[arg(long, value_name = "NAME,...", value_delimiter = ',', value_parser = parse_filter)]
    pub filter: Option<Vec<Filter>>,
    /// Threads for both libraries (default 1,2; rows with more than one
    /// thread are timed with the wall clock)
    #[arg(long, value_name = "N,...", value_delimiter = ',', value_parser = parse_threads)]
    pub nthreads: Option<Vec<usize>>,
    /// Chunk sizes, suffixes k and m (default: chunks 1m,4m; main 4m)
    #[arg(long, value_name = "BYTES,...", value_delimiter = ',', value_parser = parse_chunk)]
    pub chunk: Option<Vec<usize>>,
    /// Workloads: arange, linspace, sine, alphabet, random, zeros (default:
    /// chunks all; main and --quick linspace, sine, alphabet)
    #[arg(long, value_name = "W,...", value_delimiter = ',', value_parser = parse_workload)]
    pub workload: Option<Vec<Workload>>,
    /// Data per workload (default: chunks 64m, --quick 8m; main 16m)
    #[arg(long, value_name = "BYTES", value_parser = parse_num)]
    pub total: Option<usize>,
    /// A row's volume stops growing once compressing it took this long in
    /// the check pass (default 250, --quick and main 100): slow codecs are
    /// timed on fewer chunks
    #[arg(long, value_name = "MS")]
    pub budget_ms: Option<u64>,
}

impl GridArgs {
    /// Applies the options to `o`; returns whether any was given.
    fn apply(&self, o: &mut chunks::Options) -> bool {
        let mut subset = false;
        if let Some(v) = &self.codec {
            o.codecs = v.clone();
            subset = true;
        }
        if let Some(v) = &self.clevel {
            o.clevels = v.clone();
            o.clevel5_except_blosclz = false;
            subset = true;
        }
        if let Some(v) = &self.filter {
            o.filters = v.clone();
            subset = true;
        }
        if let Some(v) = &self.nthreads {
            o.nthreads = v.clone();
            o.threads_on_largest_chunk_only = false;
            subset = true;
        }
        if let Some(v) = &self.chunk {
            o.chunks = v.clone();
            o.threads_on_largest_chunk_only = false;
            subset = true;
        }
        if let Some(v) = &self.workload {
            o.workloads = v.clone();
            subset = true;
        }
        if let Some(v) = self.total {
            o.total = v;
            subset = true;
        }
        if let Some(ms) = self.budget_ms {
            o.budget = Duration::from_millis(ms);
            subset = true;
        }
        subset
    }
}

/// Where the CSV and the plot go.
#[derive(Args, Debug, Default, Clone)]
pub struct OutputArgs {
    /// Write the CSV there (and the plot next to it, as .svg)
    #[arg(long, value_name = "PATH")]
    pub csv: Option<PathBuf>,
    /// Write the plot there
    #[arg(long, value_name = "PATH")]
    pub svg: Option<PathBuf>,
    /// Write the default outputs into perf/results/ (tracked) instead of
    /// target/perf/
    #[arg(long)]
    pub save: bool,
    /// Write neither CSV nor plot
    #[arg(long, conflicts_with_all = ["csv", "svg", "save"])]
    pub no_csv: bool,
}

impl OutputArgs {
    /// The CSV and SVG paths: `name`.csv/.svg in the default place when
    /// `default` (a complete run) or `--save`, else only where asked.
    fn paths(&self, name: &str, default: bool) -> (Option<PathBuf>, Option<PathBuf>) {
        if self.no_csv {
            return (None, None);
        }
        let csv = match &self.csv {
            Some(p) => Some(p.clone()),
            None if default || self.save => Some(output_path(&format!("{name}.csv"), self.save)),
            None => None,
        };
        let svg = match (&self.svg, &csv) {
            (Some(p), _) => Some(p.clone()),
            (None, Some(csv)) => Some(csv.with_extension("svg")),
            (None, None) => None,
        };
        (csv, svg)
    }
}

/// Options of `main`.
#[derive(Args, Debug, Default, Clone)]
pub struct MainArgs {
    #[command(flatten)]
    pub grid: GridArgs,
    #[command(flatten)]
    pub rounds: RoundArgs,
    /// Time rounds with the thread's CPU time (default: leaves out time
    /// spent descheduled on a busy machine) or wall time
    #[arg(long, value_name = "cpu|wall", value_parser = parse_clock)]
    pub clock: Option<Clock>,
    #[command(flatten)]
    pub out: OutputArgs,
}

impl MainArgs {
    /// The `chunks` options of the main job.
    pub fn options(&self) -> Result<chunks::Options, String> {
        let mut o = chunks::Options::main_job();
        self.grid.apply(&mut o);
        self.rounds.apply(&mut o.timing);
        if let Some(c) = self.clock {
            o.timing.clock = c;
        }
        (o.csv, o.svg) = self.out.paths("main", true);
        Ok(o)
    }
}

/// Options of `kernels`.
#[derive(Args, Debug, Default, Clone)]
pub struct KernelArgs {
    /// 5 rounds of >= 8 ms (default: 7 rounds of >= 20 ms)
    #[arg(long)]
    pub quick: bool,
    #[command(flatten)]
    pub rounds: RoundArgs,
    /// Time rounds with the thread's CPU time (default: leaves out time
    /// spent descheduled on a busy machine) or wall time
    #[arg(long, value_name = "cpu|wall", value_parser = parse_clock)]
    pub clock: Option<Clock>,
    /// Only these kernels: shuffle, unshuffle, bitshuffle, bitunshuffle
    #[arg(long, value_name = "NAME,...", value_delimiter = ',', value_parser = parse_kernel)]
    pub kernel: Option<Vec<Kernel>>,
    /// Only these typesizes (default 1,2,4,8,16)
    #[arg(long, value_name = "N,...", value_delimiter = ',', value_parser = parse_typesize)]
    pub typesize: Option<Vec<usize>>,
    /// Only these buffer sizes, suffixes k and m (default 32k,256k,8m)
    #[arg(long, value_name = "BYTES,...", value_delimiter = ',', value_parser = parse_num)]
    pub size: Option<Vec<usize>>,
    /// Write the CSV there (default: target/perf/kernels.csv, only for a
    /// complete run: --quick or a subset writes no CSV)
    #[arg(long, value_name = "PATH")]
    pub csv: Option<PathBuf>,
    /// Write the default CSV into perf/results/ (tracked) instead
    #[arg(long)]
    pub save: bool,
    /// Don't write a CSV
    #[arg(long, conflicts_with_all = ["csv", "save"])]
    pub no_csv: bool,
}

impl KernelArgs {
    /// The `kernels` options.
    pub fn options(&self) -> Result<kernels::Options, String> {
        let mut o = kernels::Options::new(if self.quick {
            timing::Config::quick()
        } else {
            timing::Config::full()
        });
        self.rounds.apply(&mut o.timing);
        if let Some(c) = self.clock {
            o.timing.clock = c;
        }
        let mut subset = self.quick;
        if let Some(v) = &self.kernel {
            o.kernels = v.clone();
            subset = true;
        }
        if let Some(v) = &self.typesize {
            o.typesizes = v.clone();
            subset = true;
        }
        if let Some(v) = &self.size {
            o.sizes = v.clone();
            subset = true;
        }
        let out = OutputArgs {
            csv: self.csv.clone(),
            svg: None,
            save: self.save,
            no_csv: self.no_csv,
        };
        o.csv = out.paths("kernels", !subset).0;
        Ok(o)
    }
}

/// Options of `chunks`.
#[derive(Args, Debug, Default, Clone)]
pub struct ChunkArgs {
    /// < 2 minutes: every codec at clevel 5 plus blosclz at 1 and 9,
    /// shuffle, 1 thread on 1 MiB and 4 MiB chunks and 2 threads on 4 MiB
    /// chunks, 3 workloads, 8 MiB each, 5 rounds of >= 8 ms (default: the
    /// full grid, 720 rows, 64 MiB per workload, 7 rounds of >= 20 ms)
    #[arg(long)]
    pub quick: bool,
    #[command(flatten)]
    pub grid: GridArgs,
    #[command(flatten)]
    pub rounds: RoundArgs,
    /// Time rounds with the thread's CPU time (default: leaves out time
    /// spent descheduled on a busy machine) or wall time
    #[arg(long, value_name = "cpu|wall", value_parser = parse_clock)]
    pub clock: Option<Clock>,
    /// For profilers: after each row's checks run only WHO for 5 s, no table
    #[arg(long, value_name = "WHO", value_parser = chunks::SOLO_NAMES)]
    pub solo: Option<String>,
    /// How long --solo runs, in seconds
    #[arg(long, value_name = "S", requires = "solo")]
    pub solo_secs: Option<u64>,
    #[command(flatten)]
    pub out: OutputArgs,
}

impl ChunkArgs {
    /// The `chunks` options.
    pub fn options(&self) -> Result<chunks::Options, String> {
        let mut o = chunks::Options::new(self.quick);
        let mut subset = self.quick | self.grid.apply(&mut o);
        self.rounds.apply(&mut o.timing);
        if let Some(c) = self.clock {
            o.timing.clock = c;
        }
        if let Some(who) = &self.solo {
            subset = true;
            let at = chunks::SOLO_NAMES
                .iter()
                .position(|n| n == who)
                .ok_or(format!("--solo: one of {}", chunks::SOLO_NAMES.join(", ")))?;
            o.solo = Some((at, Duration::from_secs(self.solo_secs.unwrap_or(5))));
        }
        (o.csv, o.svg) = self.out.paths("chunks", !subset);
        Ok(o)
    }
}

/// Options of `scaling`.
#[derive(Args, Debug, Default, Clone)]
pub struct ScalingArgs {
    /// lz4 and zstd on 64 KiB, 256 KiB and 4 MiB chunks, 5 short rounds
    /// (default: blosclz, lz4, zlib, zstd on 16 KiB .. 4 MiB)
    #[arg(long)]
    pub quick: bool,
    #[command(flatten)]
    pub rounds: RoundArgs,
    /// Codecs
    #[arg(long, value_name = "NAME,...", value_delimiter = ',', value_parser = parse_codec)]
    pub codec: Option<Vec<Codec>>,
    /// Compression level (default 5)
    #[arg(long, value_name = "N", value_parser = parse_clevel)]
    pub clevel: Option<u8>,
    /// shuffle or bitshuffle (default shuffle)
    #[arg(long, value_name = "NAME", value_parser = parse_filter)]
    pub filter: Option<Filter>,
    /// Chunk sizes, suffixes k and m
    #[arg(long, value_name = "BYTES,...", value_delimiter = ',', value_parser = parse_chunk)]
    pub chunk: Option<Vec<usize>>,
    /// One workload (default sine)
    #[arg(long, value_name = "W", value_parser = parse_workload)]
    pub workload: Option<Workload>,
    /// Data per timed call (default 16m)
    #[arg(long, value_name = "BYTES", value_parser = parse_num)]
    pub total: Option<usize>,
    /// The thread count compared with 1 (default 2)
    #[arg(long, value_name = "N")]
    pub nthreads: Option<usize>,
}

impl ScalingArgs {
    /// The `scaling` options.
    pub fn options(&self) -> Result<scaling::Options, String> {
        let mut o = scaling::Options::new(self.quick);
        // Rows are timed with the wall clock here: no --clock.
        self.rounds.apply(&mut o.timing);
        if let Some(v) = &self.codec {
            o.codecs = v.clone();
        }
        if let Some(l) = self.clevel {
            o.clevel = l;
        }
        if let Some(f) = self.filter {
            o.filter = f;
        }
        if let Some(v) = &self.chunk {
            o.chunks = v.clone();
        }
        if let Some(w) = self.workload {
            o.workload = w;
        }
        if let Some(t) = self.total {
            o.total = t.max(1);
        }
        if let Some(n) = self.nthreads {
            o.nthreads = n.max(2);
        }
        Ok(o)
    }
}

/// Options of `capi`.
#[derive(Args, Debug, Default, Clone)]
pub struct CapiArgs {
    /// blosclz and lz4 on 32 KiB and 1 MiB chunks, 5 rounds of >= 8 ms
    /// (default: blosclz, lz4, zlib, zstd on 32 KiB, 256 KiB, 4 MiB, 7 rounds
    /// of >= 10 ms)
    #[arg(long)]
    pub quick: bool,
    #[command(flatten)]
    pub rounds: RoundArgs,
    /// Only this API: blosc2 (the _ctx calls) or blosc1 (blosc_*)
    #[arg(long, value_name = "blosc2|blosc1", value_parser = parse_api)]
    pub api: Option<capi::Api>,
    /// Codecs: blosclz, lz4, zlib, zstd
    #[arg(long, value_name = "NAME,...", value_delimiter = ',', value_parser = parse_ccodec)]
    pub codec: Option<Vec<capi::CCodec>>,
    /// Compression level (default 5)
    #[arg(long, value_name = "N", value_parser = parse_clevel)]
    pub clevel: Option<u8>,
    /// Workloads (each has its typesize; default sine-f32, linspace-f64)
    #[arg(long, value_name = "W,...", value_delimiter = ',', value_parser = parse_workload)]
    pub workload: Option<Vec<Workload>>,
    /// Chunk sizes, suffixes k and m
    #[arg(long, value_name = "BYTES,...", value_delimiter = ',', value_parser = parse_chunk)]
    pub size: Option<Vec<usize>>,
    /// Threads for both libraries (default 1; above 1 the wall clock)
    #[arg(long, value_name = "N", value_parser = parse_threads)]
    pub nthreads: Option<usize>,
    /// Our libblosc2.so (default: build oxiblosc-capi, take target/release's)
    #[arg(long, value_name = "PATH")]
    pub ours: Option<PathBuf>,
    /// The C-Blosc2 3.x library (default: python-blosc2 4.14.1's in target/pydeps)
    #[arg(long, value_name = "PATH")]
    pub c_blosc2: Option<PathBuf>,
    /// The C-Blosc 1.x library (default: Debian's libblosc.so.1)
    #[arg(long, value_name = "PATH")]
    pub c_blosc1: Option<PathBuf>,
    /// Write the CSV there (default target/perf/capi.csv)
    #[arg(long, value_name = "PATH")]
    pub csv: Option<PathBuf>,
    /// Write perf/results/capi.csv (tracked) instead
    #[arg(long)]
    pub save: bool,
    /// Don't write a CSV
    #[arg(long, conflicts_with_all = ["csv", "save"])]
    pub no_csv: bool,
}

impl CapiArgs {
    /// The `capi` options.
    pub fn options(&self) -> Result<capi::Options, String> {
        let mut o = capi::Options::new(self.quick);
        self.rounds.apply(&mut o.timing);
        if let Some(a) = self.api {
            o.apis = vec![a];
        }
        if let Some(v) = &self.codec {
            o.codecs = v.clone();
        }
        if let Some(l) = self.clevel {
            o.clevel = l;
        }
        if let Some(v) = &self.workload {
            o.workloads = v.clone();
        }
        if let Some(v) = &self.size {
            o.sizes = v.clone();
        }
        if let Some(n) = self.nthreads {
            o.nthreads = n;
        }
        o.ours = self.ours.clone();
        o.c_blosc2 = self.c_blosc2.clone();
        o.c_blosc1 = self.c_blosc1.clone();
        let out = OutputArgs {
            csv: self.csv.clone(),
            svg: None,
            save: self.save,
            no_csv: self.no_csv,
        };
        o.csv = out.paths("capi", true).0;
        Ok(o)
    }
}

/// Options of `b2nd`.
#[derive(Args, Debug, Default, Clone)]
pub struct B2ndArgs {
    /// 5 rounds of >= 8 ms (default: 7 rounds of >= 20 ms)
    #[arg(long)]
    pub quick: bool,
    #[command(flatten)]
    pub rounds: RoundArgs,
    /// Workloads: points, image, image-tiles (default: all)
    #[arg(long, value_name = "W,...", value_delimiter = ',', value_parser = parse_nd_workload)]
    pub workload: Option<Vec<b2nd::Workload>>,
    /// Threads for both libraries (default 1; above 1 the wall clock)
    #[arg(long, alias = "threads", value_name = "N", value_parser = parse_threads)]
    pub nthreads: Option<usize>,
    /// Our libblosc2.so (default: build oxiblosc-capi, take target/release's)
    #[arg(long, value_name = "PATH")]
    pub ours: Option<PathBuf>,
    /// The C-Blosc2 3.x library (default: python-blosc2 4.14.1's in target/pydeps)
    #[arg(long, value_name = "PATH")]
    pub c_blosc2: Option<PathBuf>,
    /// Write the CSV there (default target/perf/b2nd.csv)
    #[arg(long, value_name = "PATH")]
    pub csv: Option<PathBuf>,
    /// Write perf/results/b2nd.csv (tracked) instead
    #[arg(long)]
    pub save: bool,
    /// Don't write a CSV
    #[arg(long, conflicts_with_all = ["csv", "save"])]
    pub no_csv: bool,
}

impl B2ndArgs {
    /// The `b2nd` options.
    pub fn options(&self) -> b2nd::Options {
        let mut o = b2nd::Options::new(self.quick);
        self.rounds.apply(&mut o.timing);
        if let Some(v) = &self.workload {
            o.workloads = v.clone();
        }
        if let Some(n) = self.nthreads {
            o.nthreads = n;
        }
        o.ours = self.ours.clone();
        o.c_blosc2 = self.c_blosc2.clone();
        let out = OutputArgs {
            csv: self.csv.clone(),
            svg: None,
            save: self.save,
            no_csv: self.no_csv,
        };
        o.csv = out.paths("b2nd", true).0;
        o
    }
}

fn parse_nd_workload(s: &str) -> Result<b2nd::Workload, String> {
    b2nd::Workload::parse(s.trim()).ok_or(format!("workload {s:?}: points, image or image-tiles"))
}

fn parse_api(s: &str) -> Result<capi::Api, String> {
    capi::Api::parse(s.trim()).ok_or(format!("api {s:?}: blosc2 or blosc1"))
}

fn parse_ccodec(s: &str) -> Result<capi::CCodec, String> {
    capi::CCodec::parse(s.trim()).ok_or(format!("codec {s:?}: blosclz, lz4, zlib or zstd"))
}

/// `123`, `32k` (KiB), `8m` (MiB).
pub fn parse_num(s: &str) -> Result<usize, String> {
    let s = s.trim().to_ascii_lowercase();
    let (digits, mult) = match s.strip_suffix('k') {
        Some(d) => (d, 1 << 10),
        None => match s.strip_suffix('m') {
            Some(d) => (d, 1 << 20),
            None => (s.as_str(), 1),
        },
    };
    digits
        .parse::<usize>()
        .ok()
        .and_then(|n| n.checked_mul(mult))
        .ok_or_else(|| format!("not a number: {s:?}"))
}

fn parse_chunk(s: &str) -> Result<usize, String> {
    match parse_num(s)? {
        c if c == 0 || c > i32::MAX as usize - 64 => {
            Err("chunk sizes must be in 1..2 GiB".to_owned())
        }
        c => Ok(c),
    }
}

fn parse_typesize(s: &str) -> Result<usize, String> {
    match parse_num(s)? {
        0 => Err("typesize must be at least 1".to_owned()),
        n => Ok(n),
    }
}

fn parse_threads(s: &str) -> Result<usize, String> {
    parse_num(s).map(|n| n.max(1))
}

fn parse_codec(s: &str) -> Result<Codec, String> {
    s.trim().parse::<Codec>().map_err(|e| e.to_string())
}

fn parse_clevel(s: &str) -> Result<u8, String> {
    match s.trim().parse::<u8>() {
        Ok(l) if l <= 9 => Ok(l),
        _ => Err(format!("clevel {s:?} is not in 0..=9")),
    }
}

fn parse_filter(s: &str) -> Result<Filter, String> {
    match s.trim().parse::<Filter>() {
        Ok(f @ (Filter::Shuffle | Filter::BitShuffle)) => Ok(f),
        _ => Err(format!("filter {s:?}: shuffle or bitshuffle")),
    }
}

fn parse_workload(s: &str) -> Result<Workload, String> {
    Workload::parse(s.trim()).ok_or(format!("unknown workload {s:?}"))
}

fn parse_kernel(s: &str) -> Result<Kernel, String> {
    Kernel::parse(s.trim()).ok_or(format!("unknown kernel {s:?}"))
}

fn parse_clock(s: &str) -> Result<Clock, String> {
    Clock::parse(s).ok_or(format!("unknown clock {s:?} (cpu or wall)"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        let args: Vec<OsString> = std::iter::once("oxiblosc-perf")
            .chain(args.iter().copied())
            .map(OsString::from)
            .collect();
        Cli::try_parse_from(quick_means_chunks(args))
    }

    #[test]
    fn the_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn numbers_with_suffixes() {
        assert_eq!(parse_num("32k"), Ok(32 << 10));
        assert_eq!(parse_num("8M"), Ok(8 << 20));
        assert_eq!(parse_num("7"), Ok(7));
        assert!(parse_num("x").is_err());
        assert!(parse_num("99999999999999999999m").is_err());
    }

    #[test]
    fn no_command_is_the_main_job_writing_under_target() {
        let cli = parse(&[]).unwrap();
        assert!(cli.command.is_none() && cli.c_lib.is_none());
        let o = MainArgs::default().options().unwrap();
        assert_eq!(o.rows(), 120);
        let csv = o.csv.unwrap();
        assert!(csv.ends_with("target/perf/main.csv"), "{}", csv.display());
        assert!(o.svg.unwrap().ends_with("target/perf/main.svg"));

        let Some(Command::Main(m)) = parse(&["main", "--save"]).unwrap().command else {
            panic!("main");
        };
        let o = m.options().unwrap();
        assert!(o.csv.unwrap().ends_with("perf/results/main.csv"));
        let Some(Command::Main(m)) = parse(&["main", "--no-csv", "--codec", "lz4,zstd"])
            .unwrap()
            .command
        else {
            panic!("main");
        };
        let o = m.options().unwrap();
        assert!(o.csv.is_none() && o.svg.is_none());
        assert_eq!(o.codecs, vec![Codec::Lz4, Codec::Zstd]);
        assert!(parse(&["main", "--no-csv", "--save"]).is_err());
    }

    #[test]
    fn quick_alone_means_chunks_quick_and_c_lib_goes_anywhere() {
        for args in [
            &["--quick", "--codec", "zstd"][..],
            &["--c-lib", "/x.so", "--quick", "--codec", "zstd"],
            &["chunks", "--quick", "--codec", "zstd", "--c-lib", "/x.so"],
        ] {
            let cli = parse(args).unwrap();
            let Some(Command::Chunks(c)) = cli.command else {
                panic!("{args:?}: not chunks");
            };
            assert!(c.quick, "{args:?}");
            let o = c.options().unwrap();
            assert_eq!(o.codecs, vec![Codec::Zstd]);
            assert!(o.csv.is_none(), "a subset writes no CSV");
            if args.contains(&"/x.so") {
                assert_eq!(cli.c_lib, Some(PathBuf::from("/x.so")));
            }
        }
    }

    #[test]
    fn chunk_options_keep_their_meaning() {
        let Some(Command::Chunks(c)) = parse(&[
            "chunks",
            "--clevel",
            "1,9",
            "--filter",
            "bitshuffle",
            "--nthreads",
            "0,2",
            "--chunk",
            "64k,1m",
            "--workload",
            "sine,random-u8",
            "--total",
            "2m",
            "--budget-ms",
            "50",
            "--rounds",
            "0",
            "--target-ms",
            "3",
            "--clock",
            "wall",
            "--solo",
            "c-decompress",
            "--solo-secs",
            "2",
        ])
        .unwrap()
        .command
        else {
            panic!("chunks");
        };
        let o = c.options().unwrap();
        assert_eq!(o.clevels, vec![1, 9]);
        assert!(!o.clevel5_except_blosclz && !o.threads_on_largest_chunk_only);
        assert_eq!(o.filters, vec![Filter::BitShuffle]);
        assert_eq!(o.nthreads, vec![1, 2]);
        assert_eq!(o.chunks, vec![64 << 10, 1 << 20]);
        assert_eq!(o.workloads, vec![Workload::Sine, Workload::Random]);
        assert_eq!((o.total, o.budget), (2 << 20, Duration::from_millis(50)));
        assert_eq!(o.timing.rounds, 1);
        assert_eq!(o.timing.target, Duration::from_millis(3));
        assert_eq!(o.timing.clock, Clock::Wall);
        assert_eq!(o.solo, Some((3, Duration::from_secs(2))));
        assert!(o.csv.is_none());

        // A complete run writes under target/, or perf/results/ with --save;
        // --csv alone puts the plot next to it.
        let full = |args: &[&str]| match parse(args).unwrap().command {
            Some(Command::Chunks(c)) => c.options().unwrap(),
            _ => panic!("chunks"),
        };
        assert!(
            full(&["chunks"])
                .svg
                .unwrap()
                .ends_with("target/perf/chunks.svg")
        );
        assert!(
            full(&["chunks", "--save"])
                .csv
                .unwrap()
                .ends_with("perf/results/chunks.csv")
        );
        let o = full(&["chunks", "--codec", "lz4", "--csv", "/tmp/a.csv"]);
        assert_eq!(o.svg, Some(PathBuf::from("/tmp/a.svg")));

        for bad in [
            &["chunks", "--clevel", "10"][..],
            &["chunks", "--filter", "delta"],
            &["chunks", "--chunk", "0"],
            &["chunks", "--workload", "nope"],
            &["chunks", "--solo", "nobody"],
            &["chunks", "--solo-secs", "3"],
            &["chunks", "--clock", "sundial"],
            &["chunks", "--frobnicate"],
            &["nonsense"],
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn b2nd_options() {
        let Some(Command::B2nd(b)) = parse(&[
            "b2nd",
            "--quick",
            "--workload",
            "image,points",
            "--threads",
            "2",
        ])
        .unwrap()
        .command
        else {
            panic!("b2nd");
        };
        let o = b.options();
        assert_eq!(
            o.workloads,
            vec![b2nd::Workload::Image, b2nd::Workload::Points]
        );
        assert_eq!((o.nthreads, o.timing.rounds), (2, 5));
        assert!(o.csv.unwrap().ends_with("target/perf/b2nd.csv"));
        let Some(Command::B2nd(b)) = parse(&["b2nd", "--save"]).unwrap().command else {
            panic!("b2nd");
        };
        assert!(b.options().csv.unwrap().ends_with("perf/results/b2nd.csv"));
        assert!(parse(&["b2nd", "--workload", "cube"]).is_err());
        assert!(parse(&["b2nd", "--no-csv", "--save"]).is_err());
    }

    #[test]
    fn kernel_and_scaling_options() {
        let Some(Command::Kernels(k)) = parse(&[
            "kernels",
            "--kernel",
            "bitshuffle,unshuffle",
            "--typesize",
            "4,8",
            "--size",
            "256k",
        ])
        .unwrap()
        .command
        else {
            panic!("kernels");
        };
        let o = k.options().unwrap();
        assert_eq!(o.kernels, vec![Kernel::Bitshuffle, Kernel::Unshuffle]);
        assert_eq!((o.typesizes, o.sizes), (vec![4, 8], vec![256 << 10]));
        assert!(o.csv.is_none());
        let Some(Command::Kernels(k)) = parse(&["kernels"]).unwrap().command else {
            panic!("kernels");
        };
        assert!(
            k.options()
                .unwrap()
                .csv
                .unwrap()
                .ends_with("target/perf/kernels.csv")
        );
        assert!(parse(&["kernels", "--typesize", "0"]).is_err());

        let Some(Command::Scaling(s)) = parse(&[
            "scaling",
            "--quick",
            "--codec",
            "lz4",
            "--clevel",
            "3",
            "--filter",
            "bitshuffle",
            "--workload",
            "alphabet",
            "--nthreads",
            "1",
            "--total",
            "1m",
        ])
        .unwrap()
        .command
        else {
            panic!("scaling");
        };
        let o = s.options().unwrap();
        assert_eq!(o.codecs, vec![Codec::Lz4]);
        assert_eq!((o.clevel, o.filter), (3, Filter::BitShuffle));
        assert_eq!(
            (o.workload, o.nthreads, o.total),
            (Workload::Alphabet, 2, 1 << 20)
        );
        assert_eq!(o.timing.clock, Clock::Wall);
        assert!(parse(&["scaling", "--clock", "cpu"]).is_err());
    }
}
