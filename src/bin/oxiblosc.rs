//! `oxiblosc`: compress files into Blosc2 frames or chunks, decompress them,
//! and describe them.
//!
//! ```text
//! oxiblosc compress [--format frame|sframe|chunk|blosc1] [--chunksize N] [--meta NAME=VALUE]...
//!                   [-c CODEC] [-l CLEVEL] [-t TYPESIZE] [--filter NAME[:META]]...
//!                   [-b BLOCKSIZE] [--split MODE] [-n NTHREADS] [--dict] IN OUT
//! oxiblosc decompress [-n NTHREADS] IN OUT
//! oxiblosc info [--json] PATH
//! ```
//!
//! `-` is stdin or stdout. Errors are one line on stderr and exit code 1
//! (2 for bad arguments); OUT is replaced only once the result is complete.

#![forbid(unsafe_code)]

#[path = "oxiblosc/digests.rs"]
mod digests;
#[path = "oxiblosc/files.rs"]
mod files;
#[path = "oxiblosc/info.rs"]
mod info;

use std::io::{IsTerminal, Read};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::error::ErrorKind;
use clap::{Args, CommandFactory, Parser, Subcommand};
use oxiblosc::schunk::{OpenOptions, SChunk};
use oxiblosc::{
    CParams, ChunkFormat, ChunkHeader, Codec, Compressor, DParams, Decompressor, Filter,
    MAX_BLOCKSIZE, MAX_BUFFERSIZE, SplitMode,
};

use files::{Place, TempTarget};

/// Compress files into Blosc2 frames or chunks, decompress them, describe them.
#[derive(Parser, Debug)]
#[command(name = "oxiblosc", version, about, long_about = None)]
#[command(
    after_help = "Use `-` for stdin or stdout. Without OUT, compress writes IN.b2frame (or \
the format's extension: .b2sframe, .b2, .b1, .blp, .packed) and decompress writes IN without \
that extension (else IN.out); stdin goes to stdout. An existing OUT is replaced only with \
-f, and only when the command succeeds; the input is never overwritten. An interrupted \
run (SIGINT, SIGTERM, a full disk, a file size limit) leaves no temporary file.\n\
Exit status: 0 on success, 1 on errors, 2 on bad arguments."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,

    /// Print nothing but errors (no progress line, no summary).
    #[arg(short, long, global = true)]
    quiet: bool,

    /// Print a one-line summary (sizes, ratio, speed) on stderr; it is also
    /// printed, with a progress line while running, when stderr is a
    /// terminal.
    #[arg(short, long, global = true, conflicts_with = "quiet")]
    verbose: bool,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Compress IN into OUT.
    Compress(CompressArgs),
    /// Decompress IN into OUT: a contiguous frame, a sparse frame
    /// (directory) or chunks (the format is recognised from the bytes).
    Decompress(DecompressArgs),
    /// Describe a frame, a sparse frame or a chunk file: header fields, the
    /// chunks (size, ratio, special kind), metalayers and vlmetalayers.
    Info(InfoArgs),
    /// Check that every chunk of IN decodes (and, where the file has them,
    /// that its checksums match): frames, sparse frames, chunks, Bloscpack
    /// files, packed super-chunks (`--format packed`). Exit 0 when all is
    /// well, 1 naming the first bad chunk.
    Verify(VerifyArgs),
}

/// The container written by `compress`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Format {
    /// Blosc2 chunks: one for inputs up to `MAX_BUFFERSIZE` bytes, else a
    /// sequence of chunks written one after the other.
    Chunk,
    /// A contiguous frame (cframe): one file, chunks of `--chunksize` bytes.
    Frame,
    /// A sparse frame (sframe): a directory with one file per chunk.
    Sframe,
    /// Blosc1 chunks (16-byte header, format version 2) as C-Blosc 1.21
    /// writes them, for C-Blosc 1.x readers (numcodecs, Zarr, HDF5);
    /// a sequence like `Chunk` for inputs over one chunk.
    Blosc1,
    /// A packed super-chunk (the 96-byte header of early C-Blosc2 with its
    /// chunks and data-starts array); has no magic, so reading it takes
    /// `--format packed` too.
    Packed,
    /// A Bloscpack file (`.blp`): Blosc1 chunks of `--chunksize` bytes,
    /// each followed by its `--checksum`, with an offsets section.
    Blp,
}

/// Default frame chunk size (rounded down to whole items).
const DEFAULT_CHUNKSIZE: usize = 4 << 20;

#[derive(Args, Debug)]
struct CompressArgs {
    /// Container format: `frame` (a contiguous Blosc2 frame; the default for
    /// files), `sframe` (a sparse frame: OUT is a directory), `chunk` (one
    /// Blosc2 chunk, the default for stdout; inputs over ~2 GiB become a
    /// sequence of chunks, each readable on its own) or `blosc1` (the same
    /// with Blosc1 chunks, as C-Blosc 1.x writes and reads them; filters:
    /// shuffle, bitshuffle or none) or `packed` (a packed super-chunk of
    /// `--chunksize` chunks; decompress and info need `--format packed`) or
    /// `blp` (a Bloscpack file of Blosc1 chunks, see `--checksum`).
    #[arg(long, value_name = "FORMAT", value_parser = parse_format)]
    format: Option<Format>,

    /// Bytes of input per frame chunk (suffixes K, M, G: binary), rounded
    /// down to whole items. Default 4M (1M for `--format blp`, as
    /// bloscpack).
    #[arg(long, value_name = "BYTES", value_parser = parse_chunksize)]
    chunksize: Option<usize>,

    /// A checksum of every chunk: for a Bloscpack file (`--format blp`) the
    /// one stored after each chunk (default adler32); for a frame or sparse
    /// frame a digest of each chunk's data in the vlmetalayer
    /// `oxiblosc.checksums`, checked by `decompress` and `verify` (C-Blosc2
    /// ignores it). NAME: none, adler32, crc32, md5, sha1, sha224, sha256,
    /// sha384 or sha512.
    #[arg(long, value_name = "NAME", value_parser = parse_checksum)]
    checksum: Option<oxiblosc::bloscpack::Checksum>,

    /// A metalayer for the frame, its VALUE stored as a msgpack string (the
    /// way python-blosc2 stores a `str`). Repeatable (up to 16); names up to
    /// 31 bytes.
    #[arg(long = "meta", value_name = "NAME=VALUE", value_parser = parse_meta)]
    metas: Vec<(String, String)>,

    /// Codec (the default is C-Blosc2's).
    #[arg(short, long, value_name = "CODEC", default_value_t = CParams::default().codec,
          value_parser = codec_parser())]
    codec: Codec,

    /// Compression level, 0 (store) to 9.
    #[arg(short = 'l', long, value_name = "CLEVEL", default_value_t = CParams::default().clevel,
          value_parser = clap::value_parser!(u8).range(0..=9))]
    clevel: u8,

    /// Size in bytes of the items in the data (shuffle works per item).
    /// Default 8 (C-Blosc2's), or the size of `--dtype`.
    #[arg(short, long, value_name = "TYPESIZE",
          value_parser = clap::value_parser!(u64).range(1..=MAX_BLOCKSIZE as u64))]
    typesize: Option<u64>,

    /// The items' NumPy type (e.g. `<f4`, `i8`, `u2`, `c16`, `S10`, `<U3`),
    /// which sets the type size.
    #[arg(long, value_name = "DTYPE", value_parser = parse_dtype)]
    dtype: Option<u64>,

    /// Replace OUT if it exists.
    #[arg(short, long)]
    force: bool,

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

    /// Output file, or `-` for stdout (default: see below).
    #[arg(value_name = "OUT")]
    output: Option<PathBuf>,
}

#[derive(Args, Debug)]
struct DecompressArgs {
    /// Replace OUT if it exists.
    #[arg(short, long)]
    force: bool,

    /// Read IN as this format instead of recognising it: only `packed` (a
    /// packed super-chunk has no magic bytes to recognise it by).
    #[arg(long, value_name = "FORMAT", value_parser = parse_read_format)]
    format: Option<Format>,

    /// Threads decompressing the blocks (default: the `tdecomp` a frame
    /// records, 1 for chunks).
    #[arg(short, long, value_name = "NTHREADS",
          value_parser = clap::value_parser!(u64).range(1..=4096))]
    nthreads: Option<u64>,

    /// Input file, or `-` for stdin.
    #[arg(value_name = "IN")]
    input: PathBuf,

    /// Output file, or `-` for stdout (default: see below).
    #[arg(value_name = "OUT")]
    output: Option<PathBuf>,
}

#[derive(Args, Debug)]
struct VerifyArgs {
    /// Read IN as this format instead of recognising it: only `packed`.
    #[arg(long, value_name = "FORMAT", value_parser = parse_read_format)]
    format: Option<Format>,

    /// The file or directory to check, or `-` for stdin.
    #[arg(value_name = "IN")]
    input: PathBuf,
}

#[derive(Args, Debug)]
struct InfoArgs {
    /// Read PATH as this format instead of recognising it: only `packed`.
    #[arg(long, value_name = "FORMAT", value_parser = parse_read_format)]
    format: Option<Format>,

    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,

    /// A frame file, a sparse frame directory, or a file of chunks.
    #[arg(value_name = "PATH")]
    path: PathBuf,
}

/// One `--filter` value: a filter, or `none`.
#[derive(Clone, Copy, Debug)]
struct FilterArg(Option<Filter>);

fn parse_format(s: &str) -> Result<Format, String> {
    match s.trim().to_ascii_lowercase().as_str() {
        "chunk" => Ok(Format::Chunk),
        "frame" | "cframe" => Ok(Format::Frame),
        "sframe" => Ok(Format::Sframe),
        "blosc1" => Ok(Format::Blosc1),
        "packed" => Ok(Format::Packed),
        "blp" | "bloscpack" => Ok(Format::Blp),
        _ => Err("unknown format (known: frame, sframe, chunk, blosc1, packed, blp)".into()),
    }
}

/// `--format` of `decompress` and `info`: the formats that cannot be
/// recognised from their bytes.
fn parse_read_format(s: &str) -> Result<Format, String> {
    match s.trim().to_ascii_lowercase().as_str() {
        "packed" => Ok(Format::Packed),
        _ => Err("only `packed` needs naming; other formats are recognised".into()),
    }
}

fn parse_checksum(s: &str) -> Result<oxiblosc::bloscpack::Checksum, String> {
    oxiblosc::bloscpack::Checksum::from_name(&s.trim().to_ascii_lowercase()).ok_or_else(|| {
        "unknown checksum (known: none, adler32, crc32, md5, sha1, sha224, sha256, sha384, \
         sha512)"
            .to_string()
    })
}

/// The item size of a NumPy dtype string: optional byte order (`<`, `>`,
/// `=`, `|`), a kind letter and a size (`U` counts 4-byte characters).
fn parse_dtype(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let t = t.strip_prefix(['<', '>', '=', '|']).unwrap_or(t);
    let mut chars = t.chars();
    let kind = chars.next().ok_or("an empty dtype")?;
    let digits = chars.as_str();
    let n: u64 = match (kind, digits) {
        ('?', "") | ('b' | 'B', "") => 1,
        ('b' | 'i' | 'u' | 'f' | 'c' | 'S' | 'V' | 'a' | 'm' | 'M' | 'U', d) if !d.is_empty() => {
            d.parse().map_err(|_| format!("bad size in dtype {s:?}"))?
        }
        _ => {
            return Err(format!(
                "unknown dtype {s:?} (e.g. <f4, i8, u2, c16, S10, <U3)"
            ));
        }
    };
    let n = if kind == 'U' { n * 4 } else { n };
    if n == 0 || n > MAX_BLOCKSIZE as u64 {
        return Err(format!("dtype {s:?} has item size {n}"));
    }
    Ok(n)
}

fn parse_chunksize(s: &str) -> Result<usize, String> {
    let n = parse_bytes(s, MAX_BUFFERSIZE as u64, "a chunk's limit")?;
    if n == 0 {
        return Err("a chunk holds at least one byte".into());
    }
    Ok(n)
}

fn parse_meta(s: &str) -> Result<(String, String), String> {
    let (name, value) = s
        .split_once('=')
        .ok_or_else(|| "expected NAME=VALUE".to_string())?;
    if name.is_empty() || name.len() > 31 {
        return Err(format!(
            "a metalayer name has 1 to 31 bytes; {name:?} has {}",
            name.len()
        ));
    }
    Ok((name.to_string(), value.to_string()))
}

/// `s` as a msgpack string (fixstr, str8, str16 or str32).
fn msgpack_str(s: &str) -> Vec<u8> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len() + 5);
    match b.len() {
        n if n < 32 => out.push(0xa0 | n as u8),
        n if n < 256 => out.extend([0xd9, n as u8]),
        n if n < 65_536 => {
            out.push(0xda);
            out.extend((n as u16).to_be_bytes());
        }
        n => {
            out.push(0xdb);
            out.extend((n as u32).to_be_bytes());
        }
    }
    out.extend_from_slice(b);
    out
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
    parse_bytes(s, MAX_BLOCKSIZE as u64, "the largest block size")
}

/// A byte count no larger than `max` (`what` names the limit in errors).
fn parse_bytes(s: &str, max: u64, what: &str) -> Result<usize, String> {
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
        .filter(|&v| v <= max)
        .ok_or_else(|| format!("more than {what}, {max}"))?;
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
    files::cleanup_on_signals();
    files::progress::start(!cli.quiet);
    let talk = Talk {
        summary: cli.verbose || (!cli.quiet && std::io::stderr().is_terminal()),
    };
    let result = match cli.command {
        Command::Compress(args) => compress(args, talk),
        Command::Decompress(args) => decompress(args, talk),
        Command::Verify(args) => verify(args, talk),
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
struct Talk {
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
fn output_size(output: &Place) -> u64 {
    match output {
        Place::File(p) => files::size_on_disk(p),
        Place::Std => files::progress::bytes_written(),
    }
}

/// The type size: `-t`, else `--dtype`'s, else C-Blosc2's default; both
/// given and different is a usage error.
fn typesize(args: &CompressArgs) -> u64 {
    match (args.typesize, args.dtype) {
        (Some(t), Some(d)) if t != d => usage_error(
            ErrorKind::ArgumentConflict,
            format!("--typesize {t} and --dtype (item size {d}) disagree"),
        ),
        (Some(t), _) | (None, Some(t)) => t,
        (None, None) => CParams::default().typesize as u64,
    }
}

/// The compression parameters the arguments ask for; bad combinations are
/// usage errors.
fn cparams(args: &CompressArgs) -> CParams {
    let format = if matches!(args.format, Some(Format::Blosc1 | Format::Blp)) {
        ChunkFormat::Blosc1
    } else {
        ChunkFormat::Blosc2
    };
    let mut p = CParams::default()
        .format(format)
        .codec(args.codec)
        .clevel(args.clevel)
        .typesize(typesize(args) as usize)
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

fn compress(args: CompressArgs, talk: Talk) -> Result<(), String> {
    let params = cparams(&args);
    let input = Place::new(&args.input);
    let output = match (&args.output, &input) {
        (Some(p), _) => Place::new(p),
        (None, Place::Std) => Place::Std,
        (None, Place::File(p)) => {
            let ext = match args.format.unwrap_or(Format::Frame) {
                Format::Frame => ".b2frame",
                Format::Sframe => ".b2sframe",
                Format::Chunk => ".b2",
                Format::Blosc1 => ".b1",
                Format::Blp => ".blp",
                Format::Packed => ".packed",
            };
            let mut name = p.as_os_str().to_os_string();
            name.push(ext);
            Place::File(PathBuf::from(name))
        }
    };
    let format = args.format.unwrap_or(match output {
        Place::Std => Format::Chunk,
        Place::File(_) => Format::Frame,
    });
    let r = compress_to(&args, params, format, &input, &output);
    if r.is_ok() {
        talk.summary(&input, &output, output_size(&output));
    }
    r
}

fn compress_to(
    args: &CompressArgs,
    params: CParams,
    format: Format,
    input: &Place,
    output: &Place,
) -> Result<(), String> {
    let chunks = matches!(format, Format::Chunk | Format::Blosc1);
    if args.checksum.is_some() && !matches!(format, Format::Blp | Format::Frame | Format::Sframe) {
        usage_error(
            ErrorKind::ArgumentConflict,
            "--checksum is for frames, sparse frames and Bloscpack files",
        );
    }
    if matches!(format, Format::Packed | Format::Blp) && !args.metas.is_empty() {
        usage_error(
            ErrorKind::ArgumentConflict,
            "--meta is for frames (--format frame or sframe)",
        );
    }
    if chunks && (args.chunksize.is_some() || !args.metas.is_empty()) {
        usage_error(
            ErrorKind::ArgumentConflict,
            "--chunksize and --meta are for frames (--format frame or sframe)",
        );
    }
    if args.metas.len() > 16 {
        usage_error(
            ErrorKind::TooManyValues,
            format!(
                "{} metalayers given; a frame has at most 16",
                args.metas.len()
            ),
        );
    }
    if format == Format::Sframe && matches!(output, Place::Std) {
        usage_error(
            ErrorKind::ArgumentConflict,
            "a sparse frame is a directory: give OUT, not `-`",
        );
    }
    files::check_output(input, output, args.force)?;
    if matches!(output, Place::Std) && std::io::stdout().is_terminal() {
        return Err(
            "refusing to write compressed data to a terminal (redirect stdout or give OUT)".into(),
        );
    }
    match format {
        Format::Chunk | Format::Blosc1 => compress_chunks(params, input, output),
        Format::Packed => compress_packed(args, params, input, output),
        Format::Blp => compress_blp(args, params, input, output),
        Format::Frame | Format::Sframe => compress_frame(args, params, format, input, output),
    }
}

/// Compress into a packed super-chunk, built in memory (the format keeps
/// its chunk offsets at the end).
fn compress_packed(
    args: &CompressArgs,
    params: CParams,
    input: &Place,
    output: &Place,
) -> Result<(), String> {
    let name = input.as_input();
    let mut data = Vec::new();
    files::open_input(input)?
        .read_to_end(&mut data)
        .map_err(|e| format!("cannot read {name}: {e}"))?;
    let ts = params.typesize.max(1);
    let chunksize = (args.chunksize.unwrap_or(DEFAULT_CHUNKSIZE) / ts * ts).max(ts);
    let packed = oxiblosc::packed::pack(&data, &params, chunksize)
        .map_err(|e| format!("cannot compress {name}: {e}"))?;
    let mut out = files::Output::begin(output)?;
    out.write(&packed)?;
    out.finish()
}

/// Compress into a Bloscpack file (built in memory: its offsets section
/// precedes the chunks).
fn compress_blp(
    args: &CompressArgs,
    params: CParams,
    input: &Place,
    output: &Place,
) -> Result<(), String> {
    use oxiblosc::bloscpack;
    let name = input.as_input();
    let mut data = Vec::new();
    files::open_input(input)?
        .read_to_end(&mut data)
        .map_err(|e| format!("cannot read {name}: {e}"))?;
    let ts = params.typesize.max(1);
    let chunksize = args.chunksize.unwrap_or(bloscpack::DEFAULT_CHUNK_SIZE);
    let chunksize = (chunksize / ts * ts).max(ts);
    let opts = bloscpack::Options::default()
        .cparams(params)
        .chunk_size(chunksize)
        .checksum(args.checksum.unwrap_or(bloscpack::Checksum::Adler32));
    let blp = bloscpack::pack(&data, &opts).map_err(|e| format!("cannot compress {name}: {e}"))?;
    let mut out = files::Output::begin(output)?;
    out.write(&blp)?;
    out.finish()
}

/// Decompress a Bloscpack file, every chunk's checksum verified.
fn decompress_blp(data: Vec<u8>, name: &str, output: &Place) -> Result<(), String> {
    let r = oxiblosc::bloscpack::Reader::new(data)
        .map_err(|e| format!("cannot open {name} as a Bloscpack file: {e}"))?;
    let mut out = files::Output::begin(output)?;
    for i in 0..r.nchunks() {
        let chunk = r
            .decompress_chunk(i)
            .map_err(|e| format!("cannot decompress {name}: {e}"))?;
        out.write(&chunk)?;
    }
    out.finish()
}

/// Decompress a packed super-chunk (`decompress --format packed`).
fn decompress_packed(input: &Place, output: &Place) -> Result<(), String> {
    let name = input.as_input();
    let mut data = Vec::new();
    files::open_input(input)?
        .read_to_end(&mut data)
        .map_err(|e| format!("cannot read {name}: {e}"))?;
    let r = oxiblosc::packed::PackedReader::new(&data)
        .map_err(|e| format!("{name} is not a packed super-chunk: {e}"))?;
    let mut out = files::Output::begin(output)?;
    for i in 0..r.nchunks() {
        let chunk = r
            .decompress_chunk(i)
            .map_err(|e| format!("cannot decompress {name} (chunk {i}): {e}"))?;
        out.write(&chunk)?;
    }
    out.finish()
}

fn compress_chunks(params: CParams, input: &Place, output: &Place) -> Result<(), String> {
    let name = input.as_input();
    let piece = piece_len(params.typesize);
    let mut reader = files::open_input(input)?;
    let mut out = files::Output::begin(output)?;
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

/// Compress into a frame: a file (built beside the target, then renamed
/// over it), a directory (likewise), or stdout (built in memory). Chunks are
/// appended as the input is read, so memory stays at about one chunk for
/// files and directories.
fn compress_frame(
    args: &CompressArgs,
    params: CParams,
    format: Format,
    input: &Place,
    output: &Place,
) -> Result<(), String> {
    let ts = params.typesize.max(1);
    let requested = args.chunksize.unwrap_or(DEFAULT_CHUNKSIZE);
    let chunksize = if requested >= ts {
        requested / ts * ts
    } else {
        requested
    };
    let mut builder = SChunk::builder()
        .cparams(params)
        .chunksize(chunksize)
        .fsync(false);
    for (name, value) in &args.metas {
        builder = builder.meta(name, &msgpack_str(value));
    }
    let name = input.as_input();
    let mut reader = files::open_input(input)?;
    let checksum = args.checksum;
    let mut fill = |sc: &mut SChunk| -> Result<(), String> {
        let mut buf = Vec::new();
        let mut sums = checksum.map(digests::Digests::new);
        loop {
            let n = files::read_piece(&mut reader, &mut buf, chunksize)
                .map_err(|e| format!("cannot read {name}: {e}"))?;
            if n > 0 {
                sc.append_buffer(&buf[..n])
                    .map_err(|e| format!("cannot compress {name}: {e}"))?;
                if let Some(s) = &mut sums {
                    s.add(&buf[..n]);
                }
            }
            if n < chunksize {
                break;
            }
        }
        if let Some(s) = sums {
            sc.vlmeta_set(digests::VLMETA_NAME, &s.encode())
                .map_err(|e| format!("cannot write the checksums: {e}"))?;
        }
        Ok(())
    };
    let path = match output {
        Place::File(p) => {
            let kind = std::fs::metadata(p).ok().map(|m| m.file_type());
            match kind {
                Some(k) if k.is_dir() && format == Format::Frame => {
                    return Err(format!("'{}' is a directory", p.display()));
                }
                Some(k) if k.is_file() && format == Format::Sframe => {
                    return Err(format!(
                        "'{}' is a file; a sparse frame is a directory (remove it first)",
                        p.display()
                    ));
                }
                // Devices and FIFOs are written in place, from memory.
                Some(k) if !k.is_file() && !k.is_dir() => None,
                _ => Some(p),
            }
        }
        Place::Std => None,
    };
    let Some(path) = path else {
        let mut sc = builder
            .build_memory()
            .map_err(|e| format!("cannot make the frame: {e}"))?;
        fill(&mut sc)?;
        let bytes = sc
            .to_cframe()
            .map_err(|e| format!("cannot make the frame: {e}"))?;
        let mut out = files::Output::begin(output)?;
        out.write(&bytes)?;
        return out.finish();
    };
    let tmp = TempTarget::new(path)?;
    let what = format!("'{}'", path.display());
    let mut sc = match format {
        Format::Sframe => builder.create_dir(tmp.path()),
        _ => builder.create_file(tmp.path()),
    }
    .map_err(|e| format!("cannot write {what}: {e}"))?;
    fill(&mut sc)?;
    if format == Format::Frame {
        // Drop the reserve the crash-safe appends keep after the last chunk.
        sc.trim().map_err(|e| format!("cannot write {what}: {e}"))?;
    }
    drop(sc);
    tmp.persist()
}

/// Whether `data` starts like a Blosc2 contiguous frame (msgpack fixarray,
/// then the fixstr "b2frame\0").
fn is_frame(data: &[u8]) -> bool {
    data.len() >= 10 && data[1] == 0xa8 && &data[2..10] == oxiblosc::frame::MAGIC
}

/// Decompress every chunk of a frame into `output`, in order.
fn decompress_frame(mut sc: SChunk, name: &str, output: &Place) -> Result<(), String> {
    let digests = match sc
        .vlmeta_get(digests::VLMETA_NAME)
        .map_err(|e| format!("cannot read {name}: {e}"))?
    {
        Some(v) => {
            Some(digests::Digests::decode(&v, sc.nchunks()).map_err(|e| format!("{name}: {e}"))?)
        }
        None => None,
    };
    let mut out = files::Output::begin(output)?;
    let mut buf = Vec::new();
    for i in 0..sc.nchunks() {
        // The chunk is checked whole before the buffer is sized by the
        // frame's header: a corrupt chunk claiming 2 GiB fails here.
        let chunk = sc
            .get_chunk(i)
            .map_err(|e| format!("cannot read {name} (chunk {i}): {e}"))?;
        let n = oxiblosc::chunk::validate(&chunk)
            .map_err(|e| format!("cannot decompress {name} (chunk {i}): {e}"))?
            .nbytes;
        drop(chunk);
        buf.resize(n, 0);
        let got = sc
            .decompress_chunk(i, &mut buf)
            .map_err(|e| format!("cannot decompress {name} (chunk {i}): {e}"))?;
        if let Some(d) = &digests {
            d.check(i, &buf[..got])
                .map_err(|e| format!("{name}: {e}"))?;
        }
        out.write(&buf[..got])?;
    }
    out.finish()
}

fn decompress(args: DecompressArgs, talk: Talk) -> Result<(), String> {
    let input = Place::new(&args.input);
    let output = match (&args.output, &input) {
        (Some(p), _) => Place::new(p),
        (None, Place::Std) => Place::Std,
        (None, Place::File(p)) => Place::File(files::decompressed_name(p)),
    };
    files::check_output(&input, &output, args.force)?;
    let r = decompress_to(&args, &input, &output);
    if r.is_ok() {
        talk.summary(&input, &output, output_size(&output));
    }
    r
}

/// `verify`: decode everything into nothing.
fn verify(args: VerifyArgs, talk: Talk) -> Result<(), String> {
    let input = Place::new(&args.input);
    let as_decompress = DecompressArgs {
        force: true,
        format: args.format,
        nthreads: None,
        input: args.input.clone(),
        output: None,
    };
    decompress_to(&as_decompress, &input, &Place::File("/dev/null".into()))?;
    files::progress::clear();
    if talk.summary {
        eprintln!(
            "{}: ok, {} of data decoded",
            input.as_input(),
            files::progress::human(files::progress::bytes_written())
        );
    }
    Ok(())
}

fn decompress_to(args: &DecompressArgs, input: &Place, output: &Place) -> Result<(), String> {
    let (input, output) = (input.clone(), output.clone());
    if args.format == Some(Format::Packed) {
        return decompress_packed(&input, &output);
    }
    let name = input.as_input();
    let mut open = OpenOptions::new().read_only(true);
    if let Some(n) = args.nthreads {
        open = open.nthreads_decomp(n as usize);
    }
    if let Place::File(p) = &input
        && std::fs::metadata(p).is_ok_and(|m| m.is_dir())
    {
        let sc = open
            .open(p)
            .map_err(|e| format!("cannot open {name} as a sparse frame: {e}"))?;
        return decompress_frame(sc, &name.to_string(), &output);
    }
    let mut reader = files::open_input(&input)?;
    let mut d = Decompressor::new(DParams::default().nthreads(args.nthreads.unwrap_or(1) as usize));
    let mut chunk = Vec::new();
    let mut decoded = Vec::new();
    let mut index = 0usize;
    let mut out = None;
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
        if index == 0 && chunk.starts_with(oxiblosc::bloscpack::MAGIC) {
            std::io::Read::read_to_end(&mut reader, &mut chunk)
                .map_err(|e| format!("cannot read {name}: {e}"))?;
            return decompress_blp(std::mem::take(&mut chunk), &name.to_string(), &output);
        }
        if index == 0 && is_frame(&chunk) {
            let sc = match &input {
                Place::File(p) => open.open(p),
                Place::Std => {
                    std::io::Read::read_to_end(&mut reader, &mut chunk)
                        .map_err(|e| format!("cannot read {name}: {e}"))?;
                    open.from_cframe(std::mem::take(&mut chunk))
                }
            }
            .map_err(|e| format!("cannot open {name} as a frame: {e}"))?;
            return decompress_frame(sc, &name.to_string(), &output);
        }
        if out.is_none() {
            out = Some(files::Output::begin(&output)?);
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
        // Checked whole before the output is sized by its header: a few
        // bytes claiming gigabytes fail here, not after the allocation.
        ChunkHeader::parse(&chunk).map_err(|e| format!("{name} is not a Blosc chunk{at}: {e}"))?;
        let header = oxiblosc::chunk::validate(&chunk)
            .map_err(|e| format!("cannot decompress {name}{at}: {e}"))?;
        decoded.resize(header.nbytes, 0);
        let n = d
            .decompress_into(&chunk, &mut decoded)
            .map_err(|e| format!("cannot decompress {name}{at}: {e}"))?;
        if let Some(out) = out.as_mut() {
            out.write(&decoded[..n])?;
        }
        index += 1;
    }
    match out {
        Some(out) => out.finish(),
        None => Ok(()),
    }
}
