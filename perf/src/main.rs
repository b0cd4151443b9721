//! `oxiblosc-perf`: oxiblosc timed against the real C-Blosc2, in one process.
//!
//! ```text
//! perf/run                       # the main job: whole chunks against C-Blosc2 3.3.5
//! perf/run kernels [--quick]     # or: cargo run -p oxiblosc-perf --release -- kernels
//! perf/run chunks [--quick]
//! perf/run --quick               # = chunks --quick
//! perf/run scaling [--quick]     # 2 threads against 1, per chunk size
//! perf/run info
//! perf/run capi [--quick]     # the same C calls through our C libraries and C's
//! perf/run b2nd [--quick]     # the NDArray calls (b2nd.h) through our libblosc2.so and C's
//! perf/run files [--size 512m]  # the CLI on a file against python-blosc2's file SChunk
//! ```
//!
//! The command line is `cli` (clap derive). Subcommands live in their own
//! modules (`kernels`: the shuffle kernels; `chunks`: whole chunks against
//! `blosc2_compress_ctx` / `blosc2_decompress_ctx`, plotted by `svg`; the
//! main job is a `chunks` grid against python-blosc2's C-Blosc2 3.3.5, found
//! or installed by `pydeps`; `capi`: the C ABI of our `libblosc2.so` /
//! `libblosc.so.1` against C's, both dlopened; `b2nd`: the NDArray calls
//! of `b2nd.h` the same way, reusing `capi`'s loader; `files`: the CLI on
//! files). The static C-Blosc2's FFI is in `c` (the dlopened libraries'
//! in `capi` and `b2nd`), the interleaved median timing in `timing`, output
//! tables in `table`, the machine description in `sysinfo`.

mod b2nd;
mod c;
mod capi;
mod chunks;
mod cli;
mod files;
mod kernels;
mod pydeps;
mod scaling;
mod svg;
mod sysinfo;
mod table;
mod timing;

use std::process::ExitCode;
use std::time::Instant;

use oxiblosc_kernels::Kernels;

use crate::cli::{Cli, Command};

fn main() -> ExitCode {
    let cli = Cli::parse_args(std::env::args_os());
    match run(cli) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

/// Runs a parsed command line; `Ok(false)` when a check failed.
fn run(cli: Cli) -> Result<bool, String> {
    if let Some(path) = &cli.c_lib {
        c::load_library(&path.to_string_lossy())?;
    }
    match cli.command.unwrap_or(Command::Main(Default::default())) {
        Command::Main(args) => {
            if cli.c_lib.is_none() {
                let lib = pydeps::libblosc2()?;
                c::load_library(&lib.to_string_lossy())?;
            }
            let opts = args.options()?;
            print_header();
            let start = Instant::now();
            eprintln!(
                "main job: {} rows of whole chunks, ours against C-Blosc2 {} (progress on \
                 stderr, table on stdout at the end)",
                opts.rows(),
                c::loaded_library().map_or_else(c::version, |(_, v)| v)
            );
            let ok = chunks::run(&opts)?;
            finish(start, ok, CHUNK_MISMATCH);
            Ok(ok)
        }
        Command::Kernels(args) => {
            // The current C-Blosc2's exported kernels are a contestant too.
            if cli.c_lib.is_none() {
                let lib = pydeps::libblosc2()?;
                c::load_library(&lib.to_string_lossy())?;
            }
            let opts = args.options()?;
            print_header();
            let start = Instant::now();
            let ok = kernels::run(&opts)?;
            finish(
                start,
                ok,
                "some outputs differ from C-Blosc2's (rows marked MISMATCH)",
            );
            Ok(ok)
        }
        Command::Chunks(args) => {
            let opts = args.options()?;
            print_header();
            let start = Instant::now();
            let ok = chunks::run(&opts)?;
            finish(start, ok, CHUNK_MISMATCH);
            Ok(ok)
        }
        Command::Scaling(args) => {
            let opts = args.options()?;
            print_header();
            let start = Instant::now();
            let ok = scaling::run(&opts)?;
            finish(start, true, "");
            Ok(ok)
        }
        Command::Capi(args) => {
            let opts = args.options()?;
            print_header();
            let start = Instant::now();
            let ok = capi::run(&opts)?;
            finish(
                start,
                ok,
                "some chunks did not decode to their input (rows marked MISMATCH)",
            );
            Ok(ok)
        }
        Command::B2nd(args) => {
            print_header();
            let start = Instant::now();
            let ok = b2nd::run(&args.options())?;
            finish(
                start,
                ok,
                "some b2nd calls failed or returned wrong data (rows marked FAILED)",
            );
            Ok(ok)
        }
        Command::Files(args) => {
            print_header();
            let start = Instant::now();
            let ok = files::run(&args.options())?;
            finish(start, ok, "an output did not decompress to the input");
            Ok(ok)
        }
        Command::Info => {
            print_header();
            Ok(true)
        }
    }
}

const CHUNK_MISMATCH: &str =
    "some chunks did not decode to their input in the other library (rows marked MISMATCH)";

/// The closing line, and the error when a check failed.
fn finish(start: Instant, ok: bool, what_failed: &str) {
    println!(
        "\nwall time: {:.1} s; load average at the end: {}",
        start.elapsed().as_secs_f64(),
        load()
    );
    if !ok {
        eprintln!("\nERROR: {what_failed}");
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
    let isas = [
        c::CIsa::Generic,
        c::CIsa::Sse2,
        c::CIsa::Avx2,
        c::CIsa::Avx512,
    ]
    .into_iter()
    .filter(|i| c::CKernels::get(*i).is_some())
    .map(c::CIsa::name)
    .collect::<Vec<_>>()
    .join(", ");
    let avx512 = if c_isa == c::CIsa::Avx512 {
        " (its `avx512` = its AVX2 byte shuffle + its AVX512 bitshuffle)"
    } else {
        ""
    };
    match c::loaded_library() {
        Some((path, version)) => {
            println!("- **C: C-Blosc2 {version}** for whole chunks (`{path}`, dlopen)");
            println!(
                "- C kernels (`kernels` only): C-Blosc2 {version}'s exported `blosc2_shuffle` & \
                 co. (its own dispatch), and C-Blosc2 {} (blosc2-sys, static), whose dispatch \
                 picks `{c_isa}`{avx512} and whose code for each instruction set is callable",
                c::version()
            );
        }
        None => println!(
            "- C: C-Blosc2 {} (blosc2-sys, static), dispatch picks `{c_isa}` \
             (compiled in and supported here: {isas}){avx512}",
            c::version()
        ),
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
