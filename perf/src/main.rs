//! `oxiblosc-perf`: oxiblosc timed against the real C-Blosc2, in one process.
//!
//! ```text
//! perf/run kernels [--quick]     # or: cargo run -p oxiblosc-perf --release -- kernels
//! perf/run chunks [--quick]
//! perf/run --quick               # = chunks --quick
//! perf/run scaling [--quick]     # 2 threads against 1, per chunk size
//! perf/run info
//! ```
//!
//! Subcommands live in their own modules (`kernels`: the shuffle kernels;
//! `chunks`: whole chunks against `blosc2_compress_ctx` /
//! `blosc2_decompress_ctx`, plotted by `svg`). The C-Blosc2 FFI (and all
//! `unsafe`) is in `c`, the interleaved median timing in `timing`, output
//! tables in `table`, the machine description in `sysinfo`.

mod c;
mod chunks;
mod kernels;
mod scaling;
mod svg;
mod sysinfo;
mod table;
mod timing;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use oxiblosc_kernels::Kernels;

const USAGE: &str = "\
usage: oxiblosc-perf <command> [options]

commands:
  kernels   shuffle/unshuffle/bitshuffle/bitunshuffle: ours vs C-Blosc2, GB/s table
  chunks    whole chunks: compress/decompress GB/s and ratio, ours vs C-Blosc2
  scaling   what a second thread buys per chunk size (ours and C-Blosc2's), and
            how many CPUs the threads keep busy
  info      CPU, chosen implementations (ours and C-Blosc2's), C-Blosc2 version
  --quick   short for `chunks --quick`

global option:
  --c-lib PATH   time chunks against this C-Blosc2 3.x shared library (dlopen), e.g.
                 python-blosc2's target/pydeps/blosc2/lib/libblosc2.so (3.3.5), instead
                 of the static 2.15 of blosc2-sys

options for `kernels`:
  --quick            5 rounds of >= 8 ms (default: 7 rounds of >= 20 ms)
  --rounds N         rounds per contestant (median reported)
  --target-ms MS     minimum length of one round
  --clock cpu|wall   time rounds with the thread's CPU time (default: leaves out
                     time spent descheduled on a busy machine) or wall time
  --kernel NAME,...  only these kernels (shuffle, unshuffle, bitshuffle, bitunshuffle)
  --typesize N,...   only these typesizes (default 1,2,4,8,16)
  --size BYTES,...   only these buffer sizes (suffixes k, m: 32k, 8m)
  --csv PATH         write the CSV there (default: perf/results/kernels.csv, and
                     only for a full run: --quick or a subset writes no CSV)
  --no-csv           don't write a CSV

options for `chunks` (lists are comma-separated; each narrows the grid):
  --quick            < 2 minutes: every codec at clevel 5 plus blosclz at 1 and 9,
                     shuffle, 1 thread on 1 MiB and 4 MiB chunks and 2 threads on
                     4 MiB chunks, 3 workloads, 8 MiB each, 5 rounds of >= 8 ms
                     (default: the full grid below, 64 MiB per workload, 7 rounds
                     of >= 20 ms)
  --codec NAME,...   blosclz, lz4, lz4hc, zlib, zstd (default: all)
  --clevel N,...     default 1,5,9
  --filter NAME,...  the filter in slot 0: shuffle, bitshuffle (default: both)
  --nthreads N,...   threads for both libraries (default 1,2; rows with more than
                     one thread are timed with the wall clock)
  --chunk BYTES,...  chunk sizes (default 1m,4m)
  --workload W,...   arange, linspace, sine, alphabet, random, zeros (default: all)
  --total BYTES      data per workload (default 64m, --quick 8m)
  --budget-ms MS     a row's volume stops growing once compressing it took this
                     long in the check pass (default 250, --quick 100): slow codecs
                     are timed on fewer chunks
  --rounds, --target-ms, --clock   as for `kernels`
  --csv PATH         write the CSV there, and the plot next to it (.svg) (default:
                     perf/results/chunks.csv and .svg, only for a full run)
  --svg PATH         write the plot there
  --solo WHO         for profilers: after each row's checks run only WHO (ours-compress,
                     c-compress, ours-decompress, c-decompress) for 5 s, no table
  --solo-secs S      (after --solo) how long
  --no-csv           write neither

options for `scaling` (wall clock; OXIBLOSC_INLINE_BELOW=0 in the environment sends
our small chunks to the pool too):
  --quick            lz4 and zstd on 64 KiB, 256 KiB and 4 MiB chunks, 5 short rounds
                     (default: blosclz, lz4, zlib, zstd on 16 KiB .. 4 MiB)
  --codec NAME,...   codecs
  --clevel N         compression level (default 5)
  --filter NAME      shuffle or bitshuffle (default shuffle)
  --chunk BYTES,...  chunk sizes
  --workload W       one workload (default sine)
  --total BYTES      data per timed call (default 16m)
  --nthreads N       the thread count compared with 1 (default 2)
  --rounds, --target-ms   as for `kernels`
";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("error: {e}\n\n{USAGE}");
            ExitCode::from(2)
        }
    }
}

/// Runs a command line; `Ok(false)` when a check failed.
fn run(args: &[String]) -> Result<bool, String> {
    let Some((cmd, rest)) = args.split_first() else {
        print!("{USAGE}");
        return Ok(true);
    };
    if let Some(at) = args.iter().position(|a| a == "--c-lib") {
        let path = args
            .get(at + 1)
            .ok_or("--c-lib needs the path of a C-Blosc2 3.x shared library")?;
        c::load_library(path)?;
        let mut rest_args = args.to_vec();
        rest_args.drain(at..at + 2);
        return run(&rest_args);
    }
    if cmd == "--quick" {
        // `cargo run -p oxiblosc-perf --release -- --quick`: the chunk grid's subset.
        let mut chunk_args = args.to_vec();
        chunk_args.insert(0, "chunks".to_owned());
        return run(&chunk_args);
    }
    match cmd.as_str() {
        "kernels" => {
            let opts = kernel_options(rest)?;
            print_header();
            let start = Instant::now();
            let ok = kernels::run(&opts)?;
            println!(
                "\nwall time: {:.1} s; load average at the end: {}",
                start.elapsed().as_secs_f64(),
                load()
            );
            if !ok {
                eprintln!("\nERROR: some outputs differ from C-Blosc2's (rows marked MISMATCH)");
            }
            Ok(ok)
        }
        "chunks" => {
            let opts = chunk_options(rest)?;
            print_header();
            let start = Instant::now();
            let ok = chunks::run(&opts)?;
            println!(
                "\nwall time: {:.1} s; load average at the end: {}",
                start.elapsed().as_secs_f64(),
                load()
            );
            if !ok {
                eprintln!(
                    "\nERROR: some chunks did not decode to their input in the other library \
                     (rows marked MISMATCH)"
                );
            }
            Ok(ok)
        }
        "scaling" => {
            let opts = scaling_options(rest)?;
            print_header();
            let start = Instant::now();
            let ok = scaling::run(&opts)?;
            println!(
                "\nwall time: {:.1} s; load average at the end: {}",
                start.elapsed().as_secs_f64(),
                load()
            );
            Ok(ok)
        }
        "info" => {
            print_header();
            Ok(true)
        }
        "-h" | "--help" | "help" => {
            print!("{USAGE}");
            Ok(true)
        }
        other => Err(format!("unknown command {other:?}")),
    }
}

fn print_header() {
    let cpu = sysinfo::cpu_model();
    let ours = Kernels::best().isa();
    let c_isa = c::CIsa::dispatched();
    println!("# oxiblosc vs C-Blosc2");
    println!();
    println!("- date: {}", sysinfo::now_utc());
    println!(
        "- CPU: {cpu} ({} logical CPUs; {})",
        sysinfo::cpus(),
        sysinfo::cpu_features().join(" ")
    );
    println!(
        "- ours: oxiblosc-kernels at `{}`, best implementation `{ours}` (available: {})",
        sysinfo::source_version(),
        Kernels::available()
            .map(|k| k.isa().name())
            .collect::<Vec<_>>()
            .join(", ")
    );
    println!(
        "- C: C-Blosc2 {} (blosc2-sys, static), dispatch picks `{c_isa}` \
         (compiled in and supported here: {})",
        c::version(),
        [
            c::CIsa::Generic,
            c::CIsa::Sse2,
            c::CIsa::Avx2,
            c::CIsa::Avx512
        ]
        .into_iter()
        .filter(|i| c::CKernels::get(*i).is_some())
        .map(c::CIsa::name)
        .collect::<Vec<_>>()
        .join(", ")
    );
    if let Some((path, version)) = c::loaded_library() {
        println!(
            "- **C for whole chunks: C-Blosc2 {version}** (`--c-lib {path}`, dlopen); the \
             kernels and the dispatch above are still the static 2.15's"
        );
    }
    if c_isa == c::CIsa::Avx512 {
        println!("  (C-Blosc2's `avx512` = its AVX2 byte shuffle + its AVX512 bitshuffle)");
    }
    println!(
        "- load average at the start: {} (other work on the machine distorts absolute numbers)",
        load()
    );
    println!();
}

fn load() -> String {
    sysinfo::loadavg().map_or_else(|| "unknown".to_owned(), |l| format!("{l:.2}"))
}

fn kernel_options(args: &[String]) -> Result<kernels::Options, String> {
    let quick = args.iter().any(|a| a == "--quick");
    let mut opts = kernels::Options::new(if quick {
        timing::Config::quick()
    } else {
        timing::Config::full()
    });
    let mut subset = quick;
    let mut csv = None;
    let mut no_csv = false;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = || {
            it.next()
                .cloned()
                .ok_or_else(|| format!("{a} needs a value"))
        };
        match a.as_str() {
            "--quick" => {}
            t if timing_option(t, &mut value, &mut opts.timing, true)? => {}
            "--kernel" => {
                subset = true;
                opts.kernels = value()?
                    .split(',')
                    .map(|k| kernels::Kernel::parse(k).ok_or(format!("unknown kernel {k:?}")))
                    .collect::<Result<_, _>>()?
            }
            "--typesize" => {
                subset = true;
                opts.typesizes = value()?
                    .split(',')
                    .map(parse_num)
                    .collect::<Result<_, _>>()?;
                if opts.typesizes.contains(&0) {
                    return Err("typesize must be at least 1".into());
                }
            }
            "--size" => {
                subset = true;
                opts.sizes = value()?
                    .split(',')
                    .map(parse_num)
                    .collect::<Result<_, _>>()?
            }
            "--csv" => csv = Some(PathBuf::from(value()?)),
            "--no-csv" => no_csv = true,
            other => return Err(format!("unknown option {other:?}")),
        }
    }
    // Keep results/kernels.csv the output of a complete default run.
    opts.csv = match (no_csv, csv, subset) {
        (true, _, _) => None,
        (false, Some(path), _) => Some(path),
        (false, None, true) => None,
        (false, None, false) => Some(kernels::default_csv()),
    };
    Ok(opts)
}

/// The timing options the commands share (`--rounds`, `--target-ms`, and
/// `--clock` when `clock`): applies `name` to `t` and says whether it was one.
fn timing_option(
    name: &str,
    value: &mut dyn FnMut() -> Result<String, String>,
    t: &mut timing::Config,
    clock: bool,
) -> Result<bool, String> {
    match name {
        "--rounds" => t.rounds = parse_num(&value()?)?.max(1),
        "--target-ms" => t.target = Duration::from_millis(parse_num(&value()?)? as u64),
        "--clock" if clock => {
            let v = value()?;
            t.clock =
                timing::Clock::parse(&v).ok_or(format!("unknown clock {v:?} (cpu or wall)"))?;
        }
        _ => return Ok(false),
    }
    Ok(true)
}

fn chunk_options(args: &[String]) -> Result<chunks::Options, String> {
    let quick = args.iter().any(|a| a == "--quick");
    let mut opts = chunks::Options::new(quick);
    let mut subset = quick;
    let (mut csv, mut svg, mut no_csv) = (None, None, false);
    let list = |v: String| -> Vec<String> { v.split(',').map(|s| s.trim().to_owned()).collect() };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = || {
            it.next()
                .cloned()
                .ok_or_else(|| format!("{a} needs a value"))
        };
        match a.as_str() {
            "--quick" => {}
            t if timing_option(t, &mut value, &mut opts.timing, true)? => {}
            "--codec" => {
                subset = true;
                opts.codecs = list(value()?)
                    .iter()
                    .map(|c| c.parse::<oxiblosc::Codec>().map_err(|e| e.to_string()))
                    .collect::<Result<_, _>>()?;
            }
            "--clevel" => {
                subset = true;
                opts.clevel5_except_blosclz = false;
                opts.clevels = list(value()?)
                    .iter()
                    .map(|c| match c.parse::<u8>() {
                        Ok(l) if l <= 9 => Ok(l),
                        _ => Err(format!("clevel {c:?} is not in 0..=9")),
                    })
                    .collect::<Result<_, _>>()?;
            }
            "--filter" => {
                subset = true;
                opts.filters = list(value()?)
                    .iter()
                    .map(|f| match f.parse::<oxiblosc::Filter>() {
                        Ok(f @ (oxiblosc::Filter::Shuffle | oxiblosc::Filter::BitShuffle)) => Ok(f),
                        _ => Err(format!("filter {f:?}: shuffle or bitshuffle")),
                    })
                    .collect::<Result<_, _>>()?;
            }
            "--nthreads" => {
                subset = true;
                opts.threads_on_largest_chunk_only = false;
                opts.nthreads = list(value()?)
                    .iter()
                    .map(|n| parse_num(n).map(|n| n.max(1)))
                    .collect::<Result<_, _>>()?;
            }
            "--chunk" => {
                subset = true;
                opts.threads_on_largest_chunk_only = false;
                opts.chunks = list(value()?)
                    .iter()
                    .map(|n| parse_num(n))
                    .collect::<Result<_, _>>()?;
                if opts
                    .chunks
                    .iter()
                    .any(|&c| c == 0 || c > i32::MAX as usize - 64)
                {
                    return Err("chunk sizes must be in 1..2 GiB".into());
                }
            }
            "--workload" => {
                subset = true;
                opts.workloads = list(value()?)
                    .iter()
                    .map(|w| chunks::Workload::parse(w).ok_or(format!("unknown workload {w:?}")))
                    .collect::<Result<_, _>>()?;
            }
            "--total" => {
                subset = true;
                opts.total = parse_num(&value()?)?;
            }
            "--budget-ms" => {
                subset = true;
                opts.budget = Duration::from_millis(parse_num(&value()?)? as u64);
            }
            "--solo" => {
                subset = true;
                let v = value()?;
                let who = chunks::SOLO_NAMES
                    .iter()
                    .position(|n| *n == v)
                    .ok_or(format!("--solo: one of {}", chunks::SOLO_NAMES.join(", ")))?;
                let secs = opts.solo.map_or(Duration::from_secs(5), |s| s.1);
                opts.solo = Some((who, secs));
            }
            "--solo-secs" => {
                let secs = Duration::from_secs(parse_num(&value()?)? as u64);
                opts.solo = opts.solo.map(|(who, _)| (who, secs));
                if opts.solo.is_none() {
                    return Err("--solo-secs comes after --solo".into());
                }
            }
            "--csv" => csv = Some(PathBuf::from(value()?)),
            "--svg" => svg = Some(PathBuf::from(value()?)),
            "--no-csv" => no_csv = true,
            other => return Err(format!("unknown option {other:?}")),
        }
    }
    // Keep results/chunks.csv the output of a complete default run.
    opts.csv = match (no_csv, csv, subset) {
        (true, _, _) => None,
        (false, Some(path), _) => Some(path),
        (false, None, true) => None,
        (false, None, false) => Some(chunks::default_csv()),
    };
    opts.svg = match (no_csv, svg, &opts.csv) {
        (true, _, _) => None,
        (false, Some(path), _) => Some(path),
        (false, None, Some(csv)) => Some(csv.with_extension("svg")),
        (false, None, None) => None,
    };
    Ok(opts)
}

fn scaling_options(args: &[String]) -> Result<scaling::Options, String> {
    let quick = args.iter().any(|a| a == "--quick");
    let mut opts = scaling::Options::new(quick);
    let list = |v: String| -> Vec<String> { v.split(',').map(|s| s.trim().to_owned()).collect() };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = || {
            it.next()
                .cloned()
                .ok_or_else(|| format!("{a} needs a value"))
        };
        match a.as_str() {
            "--quick" => {}
            // Rows are timed with the wall clock here: no --clock.
            t if timing_option(t, &mut value, &mut opts.timing, false)? => {}
            "--codec" => {
                opts.codecs = list(value()?)
                    .iter()
                    .map(|c| c.parse::<oxiblosc::Codec>().map_err(|e| e.to_string()))
                    .collect::<Result<_, _>>()?;
            }
            "--clevel" => {
                let v = value()?;
                opts.clevel = v
                    .parse::<u8>()
                    .ok()
                    .filter(|l| *l <= 9)
                    .ok_or(format!("clevel {v:?} is not in 0..=9"))?;
            }
            "--filter" => {
                let v = value()?;
                opts.filter = match v.parse::<oxiblosc::Filter>() {
                    Ok(f @ (oxiblosc::Filter::Shuffle | oxiblosc::Filter::BitShuffle)) => f,
                    _ => return Err(format!("filter {v:?}: shuffle or bitshuffle")),
                };
            }
            "--chunk" => {
                opts.chunks = list(value()?)
                    .iter()
                    .map(|n| parse_num(n))
                    .collect::<Result<_, _>>()?;
                if opts
                    .chunks
                    .iter()
                    .any(|&c| c == 0 || c > i32::MAX as usize - 64)
                {
                    return Err("chunk sizes must be in 1..2 GiB".into());
                }
            }
            "--workload" => {
                let w = value()?;
                opts.workload =
                    chunks::Workload::parse(&w).ok_or(format!("unknown workload {w:?}"))?;
            }
            "--total" => opts.total = parse_num(&value()?)?.max(1),
            "--nthreads" => opts.nthreads = parse_num(&value()?)?.max(2),
            other => return Err(format!("unknown option {other:?}")),
        }
    }
    Ok(opts)
}

/// `123`, `32k` (KiB), `8m` (MiB).
fn parse_num(s: &str) -> Result<usize, String> {
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
        .map(|n| n * mult)
        .map_err(|_| format!("not a number: {s:?}"))
}

#[cfg(test)]
mod tests {
    use super::parse_num;

    #[test]
    fn numbers_with_suffixes() {
        assert_eq!(parse_num("32k"), Ok(32 << 10));
        assert_eq!(parse_num("8M"), Ok(8 << 20));
        assert_eq!(parse_num("7"), Ok(7));
        assert!(parse_num("x").is_err());
    }
}
