//! `oxiblosc`: compress files into Blosc2 frames or chunks, decompress them,
//! and describe them.
//!
//! ```text
//! oxiblosc compress [--format frame|sframe|chunk|blosc1] [--chunksize N] [--meta NAME=VALUE]...
//!                   [-c CODEC] [-l CLEVEL] [-t TYPESIZE] [--filter NAME[:META]]...
//!                   [-b BLOCKSIZE] [--split MODE] [-n NTHREADS] [--dict] IN OUT
//! oxiblosc compress [--chunkshape N,N,..] [--blockshape N,N,..] IN.npy OUT.b2nd  # an NDArray
//! oxiblosc decompress [-n NTHREADS] IN OUT
//! oxiblosc info [--json] PATH
//! oxiblosc bench [--codecs ..] [--levels ..] [--filters ..] [--svg OUT.svg] [FILE]
//! ```
//!
//! `-` is stdin or stdout. Errors are one line on stderr and exit code 1
//! (2 for bad arguments); OUT is replaced only once the result is complete.

#![forbid(unsafe_code)]

#[path = "oxiblosc/args.rs"]
mod args;
#[path = "oxiblosc/bench.rs"]
mod bench;
#[path = "oxiblosc/compress.rs"]
mod compress;
#[path = "oxiblosc/decompress.rs"]
mod decompress;
#[path = "oxiblosc/digests.rs"]
mod digests;
#[path = "oxiblosc/files.rs"]
mod files;
#[path = "oxiblosc/info/mod.rs"]
mod info;
#[path = "oxiblosc/ndarray.rs"]
mod ndarray;

use std::io::{IsTerminal, Read};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::error::ErrorKind;
use clap::{Args, CommandFactory, Parser, Subcommand};
use oxiblosc::schunk::{OpenOptions, SChunk};
use oxiblosc::{
    CParams, ChunkFormat, Codec, Compressor, DParams, Decompressor, Filter, MAX_BLOCKSIZE,
    MAX_BUFFERSIZE, SplitMode,
};

use files::{Place, TempTarget};

use args::*;
use compress::compress;
use decompress::{decompress, verify};

pub(crate) fn main() -> ExitCode {
    let cli = Cli::parse();
    files::cleanup_on_signals();
    files::progress::start(!cli.quiet);
    let talk = Talk {
        summary: cli.verbose || (!cli.quiet && std::io::stderr().is_terminal()),
    };
    let result = match cli.command {
        Command::Compress(args) => compress(args, talk),
        Command::Decompress(args) => decompress(args, talk),
        Command::Verify(args) => verify(args, talk),
        Command::Bench(args) => bench::run(args),
        Command::Info(args) => match args.format {
            Some(Format::Packed) => info::packed(&args.path, args.json).map(|s| print!("{s}")),
            _ => info::run(&args.path, args.json),
        },
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(msg) => {
            eprintln!("oxiblosc: {msg}");
            ExitCode::FAILURE
        }
    }
}

/// What to say on stderr besides errors.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Talk {
    /// The one-line summary at the end.
    summary: bool,
}

impl Talk {
    /// `IN: 1.0 MiB -> 360.0 KiB (ratio 2.84) in 0.01 s, 95.3 MiB/s -> OUT`.
    fn summary(self, input: &Place, output: &Place, out_bytes: u64) {
        files::progress::clear();
        if !self.summary {
            return;
        }
        let in_bytes = files::progress::bytes_read().max(match input {
            Place::File(p) => files::size_on_disk(p),
            Place::Std => 0,
        });
        let secs = files::progress::elapsed().max(1e-9);
        let name = |p: &Place, std: &str| match p {
            Place::File(p) => p.display().to_string(),
            Place::Std => std.to_string(),
        };
        // The compression ratio, whichever way the data went.
        let (big, small) = (in_bytes.max(out_bytes), in_bytes.min(out_bytes));
        let ratio = if small > 0 {
            big as f64 / small as f64
        } else {
            0.0
        };
        eprintln!(
            "{}: {} -> {} (ratio {ratio:.2}) in {secs:.2} s, {}/s -> {}",
            name(input, "stdin"),
            files::progress::human(in_bytes),
            files::progress::human(out_bytes),
            files::progress::human((in_bytes.max(out_bytes) as f64 / secs) as u64),
            name(output, "stdout"),
        );
    }
}

/// How big the output came out.
pub(crate) fn output_size(output: &Place) -> u64 {
    match output {
        Place::File(p) => files::size_on_disk(p),
        Place::Std => files::progress::bytes_written(),
    }
}
