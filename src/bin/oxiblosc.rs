//! `oxiblosc`: compress files into Blosc2 chunks and decompress them.
//!
//! ```text
//! oxiblosc compress [-c CODEC] [-l CLEVEL] [-t TYPESIZE] [--filter NAME[:META]]...
//!                   [-b BLOCKSIZE] [--split MODE] [-n NTHREADS] [--dict] IN OUT
//! oxiblosc decompress [-n NTHREADS] IN OUT
//! ```
//!
//! `-` is stdin or stdout. Errors are one line on stderr and exit code 1
//! (2 for bad arguments); OUT is replaced only once the result is complete.

#![forbid(unsafe_code)]

#[path = "oxiblosc/files.rs"]
mod files;

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::error::ErrorKind;
use clap::{Args, CommandFactory, Parser, Subcommand};
use oxiblosc::{
    CParams, ChunkHeader, Codec, Compressor, DParams, Decompressor, Filter, MAX_BLOCKSIZE,
    MAX_BUFFERSIZE, SplitMode,
};

use files::Place;

/// Compress files into Blosc2 chunks and decompress them.
#[derive(Parser, Debug)]
#[command(name = "oxiblosc", version, about, long_about = None)]
#[command(
    after_help = "Use `-` for stdin or stdout. OUT is replaced only when the command \
succeeds.\nExit status: 0 on success, 1 on errors, 2 on bad arguments."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Compress IN into OUT.
    Compress(CompressArgs),
    /// Decompress IN into OUT (the format is recognised from the bytes).
    Decompress(DecompressArgs),
}

/// The container written by `compress`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Format {
    /// Blosc2 chunks: one for inputs up to `MAX_BUFFERSIZE` bytes, else a
    /// sequence of chunks written one after the other.
    Chunk,
}

#[derive(Args, Debug)]
struct CompressArgs {
    /// Container format: `chunk` (one Blosc2 chunk; inputs over ~2 GiB become a
    /// sequence of chunks, each readable on its own).
    /// `frame` is not available yet.
    #[arg(long, value_name = "FORMAT", default_value = "chunk", value_parser = parse_format)]
    format: Format,

    /// Codec (the default is C-Blosc2's).
    #[arg(short, long, value_name = "CODEC", default_value_t = CParams::default().codec,
          value_parser = codec_parser())]
    codec: Codec,

    /// Compression level, 0 (store) to 9.
    #[arg(short = 'l', long, value_name = "CLEVEL", default_value_t = CParams::default().clevel,
          value_parser = clap::value_parser!(u8).range(0..=9))]
    clevel: u8,

    /// Size in bytes of the items in the data (shuffle works per item).
    #[arg(short, long, value_name = "TYPESIZE", default_value_t = CParams::default().typesize as u64,
          value_parser = clap::value_parser!(u64).range(1..=MAX_BLOCKSIZE as u64))]
    typesize: u64,

    /// A filter, run before the codec; repeat to fill the six filter slots
    /// in order from slot 0. NAME is shuffle, bitshuffle, delta, bytedelta or
    /// trunc_prec:BITS (BITS > 0: mantissa bits kept, < 0: bits cleared);
    /// `none` alone means no filter. Default: shuffle (in slot 5).
    #[arg(long = "filter", value_name = "NAME[:META]", value_parser = parse_filter)]
    filters: Vec<FilterArg>,

    /// Block size in bytes (suffixes K, M: binary); 0 lets the library choose.
    #[arg(short, long, value_name = "BLOCKSIZE", default_value = "0", value_parser = parse_size)]
    blocksize: usize,

    /// When blocks are split into one stream per byte of the item.
    #[arg(long = "split", value_name = "MODE", default_value = "forward",
          value_parser = PossibleValuesParser::new(["always", "never", "auto", "forward"])
              .try_map(|s| s.parse::<SplitMode>()))]
    split: SplitMode,

    /// Threads compressing the blocks.
    #[arg(short, long, value_name = "NTHREADS", default_value_t = 1,
          value_parser = clap::value_parser!(u64).range(1..=4096))]
    nthreads: u64,

    /// Train a dictionary on the data and compress with it (zstd, lz4, lz4hc).
    #[arg(long)]
    dict: bool,

    /// Input file, or `-` for stdin.
    #[arg(value_name = "IN")]
    input: PathBuf,

    /// Output file, or `-` for stdout.
    #[arg(value_name = "OUT")]
    output: PathBuf,
}

#[derive(Args, Debug)]
struct DecompressArgs {
    /// Threads decompressing the blocks.
    #[arg(short, long, value_name = "NTHREADS", default_value_t = 1,
          value_parser = clap::value_parser!(u64).range(1..=4096))]
    nthreads: u64,

    /// Input file, or `-` for stdin.
    #[arg(value_name = "IN")]
    input: PathBuf,

    /// Output file, or `-` for stdout.
    #[arg(value_name = "OUT")]
    output: PathBuf,
}

/// One `--filter` value: a filter, or `none`.
#[derive(Clone, Copy, Debug)]
struct FilterArg(Option<Filter>);

fn parse_format(s: &str) -> Result<Format, String> {
    match s.trim().to_ascii_lowercase().as_str() {
        "chunk" => Ok(Format::Chunk),
        "frame" => Err("the frame format is not available yet; only `chunk` is".into()),
        _ => Err("unknown format (known: chunk)".into()),
    }
}

fn codec_parser() -> impl clap::builder::TypedValueParser<Value = Codec> {
    PossibleValuesParser::new(Codec::ALL.map(Codec::name)).try_map(|s| s.parse::<Codec>())
}

fn parse_filter(s: &str) -> Result<FilterArg, String> {
    if s.trim().eq_ignore_ascii_case("none") {
        return Ok(FilterArg(None));
    }
    s.parse::<Filter>()
        .map(|f| FilterArg(Some(f)))
        .map_err(|e| strip_invalid_param(&e))
}

/// `invalid parameter: X` reads oddly inside clap's "invalid value" error.
fn strip_invalid_param(e: &oxiblosc::Error) -> String {
    match e {
        oxiblosc::Error::InvalidParam(m) => m.clone(),
        other => other.to_string(),
    }
}

/// A byte count: digits with an optional binary suffix K, M or G (`KiB`,
/// `K`, `k` and `KB` all mean 1024).
fn parse_size(s: &str) -> Result<usize, String> {
    let t = s.trim();
    let digits_end = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, suffix) = t.split_at(digits_end);
    let n: u64 = num
        .parse()
        .map_err(|_| "expected a number of bytes".to_string())?;
    let shift = match suffix.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        _ => return Err(format!("unknown size suffix {suffix:?} (K, M or G)")),
    };
    let v = n
        .checked_mul(1 << shift)
        .filter(|&v| v <= MAX_BLOCKSIZE as u64)
        .ok_or_else(|| format!("more than the largest block size, {MAX_BLOCKSIZE}"))?;
    Ok(v as usize)
}

/// A usage error of the `compress` subcommand (exit code 2), formatted by clap.
fn usage_error(kind: ErrorKind, msg: impl std::fmt::Display) -> ! {
    let mut cmd = Cli::command();
    cmd.build();
    cmd.find_subcommand_mut("compress")
        .expect("compress subcommand")
        .error(kind, msg)
        .exit()
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Compress(args) => compress(args),
        Command::Decompress(args) => decompress(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(msg) => {
            eprintln!("oxiblosc: {msg}");
            ExitCode::FAILURE
        }
    }
}

/// The compression parameters the arguments ask for; bad combinations are
/// usage errors.
fn cparams(args: &CompressArgs) -> CParams {
    let mut p = CParams::default()
        .codec(args.codec)
        .clevel(args.clevel)
        .typesize(args.typesize as usize)
        .blocksize(args.blocksize)
        .splitmode(args.split)
        .nthreads(args.nthreads as usize)
        .use_dict(args.dict);
    if !args.filters.is_empty() {
        let has_none = args.filters.iter().any(|f| f.0.is_none());
        if has_none && args.filters.len() > 1 {
            usage_error(
                ErrorKind::ArgumentConflict,
                "`--filter none` cannot be combined with other filters",
            );
        }
        if args.filters.len() > 6 {
            usage_error(
                ErrorKind::TooManyValues,
                format!(
                    "{} filters given; a chunk has 6 filter slots",
                    args.filters.len()
                ),
            );
        }
        let list: Vec<Filter> = args.filters.iter().filter_map(|f| f.0).collect();
        p = p.filters(&list);
    }
    if let Err(e) = p.validate() {
        usage_error(ErrorKind::ValueValidation, strip_invalid_param(&e));
    }
    p
}

/// Largest piece of input one chunk takes: `MAX_BUFFERSIZE` rounded down to
/// whole items. Inputs up to this size become one chunk; larger ones a
/// sequence of chunks, one after the other (each chunk carries its size, so
/// the sequence is self-delimiting and every chunk decodes on its own, in
/// C-Blosc2 too).
fn piece_len(typesize: usize) -> usize {
    let ts = if typesize > oxiblosc::MAX_TYPESIZE {
        typesize
    } else {
        typesize.max(1)
    };
    MAX_BUFFERSIZE / ts * ts
}

fn compress(args: CompressArgs) -> Result<(), String> {
    let params = cparams(&args);
    let Format::Chunk = args.format;
    let input = Place::new(&args.input);
    let output = Place::new(&args.output);
    if matches!(output, Place::Std) && std::io::stdout().is_terminal() {
        return Err(
            "refusing to write a compressed chunk to a terminal (redirect stdout or give OUT)"
                .into(),
        );
    }
    let name = input.as_input();
    let piece = piece_len(params.typesize);
    let mut reader = files::open_input(&input)?;
    let mut out = files::Output::begin(&output)?;
    let mut compressor = Compressor::new(params);
    let mut buf = Vec::new();
    let mut first = true;
    loop {
        let n = files::read_piece(&mut reader, &mut buf, piece)
            .map_err(|e| format!("cannot read {name}: {e}"))?;
        // An empty input still makes one (empty) chunk.
        if n == 0 && !first {
            break;
        }
        first = false;
        let chunk = compressor
            .compress(&buf[..n])
            .map_err(|e| format!("cannot compress {name}: {e}"))?;
        out.write(&chunk)?;
        if n < piece {
            break;
        }
    }
    out.finish()
}

/// Whether `data` starts like a Blosc2 contiguous frame (msgpack fixarray,
/// then the string "b2frame\0").
fn is_frame(data: &[u8]) -> bool {
    data.len() >= 10 && data[1] == 0xa8 && &data[2..10] == b"b2frame\0"
}

fn decompress(args: DecompressArgs) -> Result<(), String> {
    let input = Place::new(&args.input);
    let output = Place::new(&args.output);
    let name = input.as_input();
    let mut reader = files::open_input(&input)?;
    let mut out = files::Output::begin(&output)?;
    let mut d = Decompressor::new(DParams::default().nthreads(args.nthreads as usize));
    let mut chunk = Vec::new();
    let mut decoded = Vec::new();
    let mut index = 0usize;
    loop {
        // The header says how long the chunk is (bytes 12..16, cbytes).
        chunk.clear();
        let got = files::read_piece(&mut reader, &mut chunk, 32)
            .map_err(|e| format!("cannot read {name}: {e}"))?;
        if got == 0 && index > 0 {
            break;
        }
        let at = if index == 0 {
            String::new()
        } else {
            format!(" (chunk {index})")
        };
        if index == 0 && is_frame(&chunk) {
            return Err(format!(
                "{name} is a Blosc2 frame; this version reads chunks only"
            ));
        }
        if got < 16 {
            return Err(format!(
                "{name} is not a Blosc chunk{at}: {got} bytes, shorter than any chunk header"
            ));
        }
        let cbytes = i32::from_le_bytes(chunk[12..16].try_into().unwrap());
        let cbytes = usize::try_from(cbytes)
            .ok()
            .filter(|&c| c >= 16)
            .ok_or_else(|| format!("{name} is not a Blosc chunk{at}: chunk size {cbytes}"))?;
        if cbytes > got {
            let more = files::read_piece_append(&mut reader, &mut chunk, cbytes - got)
                .map_err(|e| format!("cannot read {name}: {e}"))?;
            if more < cbytes - got {
                return Err(format!(
                    "{name} is not a Blosc chunk{at}: its header gives a {cbytes}-byte chunk \
                     but the input ends after {} bytes",
                    got + more
                ));
            }
        } else if cbytes < got {
            // The header ends before the 32 bytes read: keep the rest for
            // the next chunk.
            let rest = chunk.split_off(cbytes);
            reader = Box::new(std::io::Read::chain(std::io::Cursor::new(rest), reader));
        }
        let header = ChunkHeader::parse(&chunk)
            .map_err(|e| format!("{name} is not a Blosc chunk{at}: {e}"))?;
        decoded.resize(header.nbytes, 0);
        let n = d
            .decompress_into(&chunk, &mut decoded)
            .map_err(|e| format!("cannot decompress {name}{at}: {e}"))?;
        out.write(&decoded[..n])?;
        index += 1;
    }
    out.finish()
}
