//! The command line: subcommands, their arguments and the value parsers.

use super::*;

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
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,

    /// Print nothing but errors (no progress line, no summary).
    #[arg(short, long, global = true)]
    pub(crate) quiet: bool,

    /// Print a one-line summary (sizes, ratio, speed) on stderr; it is also
    /// printed, with a progress line while running, when stderr is a
    /// terminal.
    #[arg(short, long, global = true, conflicts_with = "quiet")]
    pub(crate) verbose: bool,
}

#[derive(Subcommand, Debug)]
pub(crate) enum Command {
    /// Compress IN into OUT.
    Compress(CompressArgs),
    /// Decompress IN into OUT: a contiguous frame, a sparse frame
    /// (directory) or chunks (the format is recognised from the bytes). An
    /// NDArray (a `b2nd` metalayer) gives its array: a `.npy` when OUT ends
    /// in `.npy`, else its raw C-order bytes.
    Decompress(DecompressArgs),
    /// Describe a frame, a sparse frame or a chunk file: header fields, the
    /// chunks (size, ratio, special kind), metalayers and vlmetalayers.
    Info(InfoArgs),
    /// Check that every chunk of IN decodes (and, where the file has them,
    /// that its checksums match): frames, sparse frames, chunks, Bloscpack
    /// files, packed super-chunks (`--format packed`). Exit 0 when all is
    /// well, 1 naming the first bad chunk.
    Verify(VerifyArgs),
    /// Measure compression ratio and speed over a grid of codecs, levels
    /// and filters, on FILE or on generated realistic data; print a table
    /// and optionally write an SVG plot (`--svg`).
    Bench(super::bench::BenchArgs),
}

/// The container written by `compress`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Format {
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
pub(crate) const DEFAULT_CHUNKSIZE: usize = 4 << 20;

#[derive(Args, Debug)]
pub(crate) struct CompressArgs {
    /// Container format: `frame` (a contiguous Blosc2 frame; the default for
    /// files), `sframe` (a sparse frame: OUT is a directory), `chunk` (one
    /// Blosc2 chunk, the default for stdout; inputs over ~2 GiB become a
    /// sequence of chunks, each readable on its own) or `blosc1` (the same
    /// with Blosc1 chunks, as C-Blosc 1.x writes and reads them; filters:
    /// shuffle, bitshuffle or none) or `packed` (a packed super-chunk of
    /// `--chunksize` chunks; decompress and info need `--format packed`) or
    /// `blp` (a Bloscpack file of Blosc1 chunks, see `--checksum`).
    #[arg(long, value_name = "FORMAT", value_parser = parse_format)]
    pub(crate) format: Option<Format>,

    /// Bytes of input per frame chunk (suffixes K, M, G: binary), rounded
    /// down to whole items. Default 4M (1M for `--format blp`, as
    /// bloscpack).
    #[arg(long, value_name = "BYTES", value_parser = parse_chunksize)]
    pub(crate) chunksize: Option<usize>,

    /// A checksum of every chunk: for a Bloscpack file (`--format blp`) the
    /// one stored after each chunk (default adler32); for a frame or sparse
    /// frame a digest of each chunk's data in the vlmetalayer
    /// `oxiblosc.checksums`, checked by `decompress` and `verify` (C-Blosc2
    /// ignores it). NAME: none, adler32, crc32, md5, sha1, sha224, sha256,
    /// sha384 or sha512.
    #[arg(long, value_name = "NAME", value_parser = parse_checksum)]
    pub(crate) checksum: Option<oxiblosc::bloscpack::Checksum>,

    /// A metalayer for the frame, its VALUE stored as a msgpack string (the
    /// way python-blosc2 stores a `str`). Repeatable (up to 16); names up to
    /// 31 bytes.
    #[arg(long = "meta", value_name = "NAME=VALUE", value_parser = parse_meta)]
    pub(crate) metas: Vec<(String, String)>,

    /// Codec (the default is C-Blosc2's).
    #[arg(short, long, value_name = "CODEC", default_value_t = CParams::default().codec,
          value_parser = codec_parser())]
    pub(crate) codec: Codec,

    /// Compression level, 0 (store) to 9.
    #[arg(short = 'l', long, value_name = "CLEVEL", default_value_t = CParams::default().clevel,
          value_parser = clap::value_parser!(u8).range(0..=9))]
    pub(crate) clevel: u8,

    /// Size in bytes of the items in the data (shuffle works per item).
    /// Default 8 (C-Blosc2's), or the size of `--dtype`.
    #[arg(short, long, value_name = "TYPESIZE",
          value_parser = clap::value_parser!(u64).range(1..=MAX_BLOCKSIZE as u64))]
    pub(crate) typesize: Option<u64>,

    /// The items' NumPy type (e.g. `<f4`, `i8`, `u2`, `c16`, `S10`, `<U3`),
    /// which sets the type size.
    #[arg(long, value_name = "DTYPE", value_parser = parse_dtype)]
    pub(crate) dtype: Option<u64>,

    /// Replace OUT if it exists.
    #[arg(short, long)]
    pub(crate) force: bool,

    /// A filter, run before the codec; repeat to fill the six filter slots
    /// in order from slot 0. NAME is shuffle, bitshuffle, delta, bytedelta or
    /// trunc_prec:BITS (BITS > 0: mantissa bits kept, < 0: bits cleared);
    /// `none` alone means no filter. Default: shuffle (in slot 5).
    #[arg(long = "filter", value_name = "NAME[:META]", value_parser = parse_filter)]
    pub(crate) filters: Vec<FilterArg>,

    /// Block size in bytes (suffixes K, M: binary); 0 lets the library choose.
    #[arg(short, long, value_name = "BLOCKSIZE", default_value = "0", value_parser = parse_size)]
    pub(crate) blocksize: usize,

    /// When blocks are split into one stream per byte of the item.
    #[arg(long = "split", value_name = "MODE", default_value = "forward",
          value_parser = PossibleValuesParser::new(["always", "never", "auto", "forward"])
              .try_map(|s| s.parse::<SplitMode>()))]
    pub(crate) split: SplitMode,

    /// Threads compressing the blocks.
    #[arg(short, long, value_name = "NTHREADS", default_value_t = 1,
          value_parser = clap::value_parser!(u64).range(1..=4096))]
    pub(crate) nthreads: u64,

    /// Train a dictionary on the data and compress with it (zstd, lz4, lz4hc).
    #[arg(long)]
    pub(crate) dict: bool,

    /// For a `.npy` input (which becomes an NDArray): the chunk shape, e.g.
    /// `32,64` (default: about 4 MiB chunks).
    #[arg(long, value_name = "N,N,...", value_parser = super::ndarray::parse_shape)]
    pub(crate) chunkshape: Option<super::ndarray::Shape>,

    /// For a `.npy` input: the block shape inside a chunk, e.g. `8,16`
    /// (default: about 64 KiB blocks).
    #[arg(long, value_name = "N,N,...", value_parser = super::ndarray::parse_shape)]
    pub(crate) blockshape: Option<super::ndarray::Shape>,

    /// Input file, or `-` for stdin.
    #[arg(value_name = "IN")]
    pub(crate) input: PathBuf,

    /// Output file, or `-` for stdout (default: see below).
    #[arg(value_name = "OUT")]
    pub(crate) output: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub(crate) struct DecompressArgs {
    /// Replace OUT if it exists.
    #[arg(short, long)]
    pub(crate) force: bool,

    /// Read IN as this format instead of recognising it: only `packed` (a
    /// packed super-chunk has no magic bytes to recognise it by).
    #[arg(long, value_name = "FORMAT", value_parser = parse_read_format)]
    pub(crate) format: Option<Format>,

    /// Threads decompressing the blocks (default: the `tdecomp` a frame
    /// records, 1 for chunks).
    #[arg(short, long, value_name = "NTHREADS",
          value_parser = clap::value_parser!(u64).range(1..=4096))]
    pub(crate) nthreads: Option<u64>,

    /// Input file, or `-` for stdin.
    #[arg(value_name = "IN")]
    pub(crate) input: PathBuf,

    /// Output file, or `-` for stdout (default: see below).
    #[arg(value_name = "OUT")]
    pub(crate) output: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub(crate) struct VerifyArgs {
    /// Read IN as this format instead of recognising it: only `packed`.
    #[arg(long, value_name = "FORMAT", value_parser = parse_read_format)]
    pub(crate) format: Option<Format>,

    /// The file or directory to check, or `-` for stdin.
    #[arg(value_name = "IN")]
    pub(crate) input: PathBuf,
}

#[derive(Args, Debug)]
pub(crate) struct InfoArgs {
    /// Read PATH as this format instead of recognising it: only `packed`.
    #[arg(long, value_name = "FORMAT", value_parser = parse_read_format)]
    pub(crate) format: Option<Format>,

    /// Print JSON instead of text.
    #[arg(long)]
    pub(crate) json: bool,

    /// A frame file, a sparse frame directory, or a file of chunks.
    #[arg(value_name = "PATH")]
    pub(crate) path: PathBuf,
}

/// One `--filter` value: a filter, or `none`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct FilterArg(pub(crate) Option<Filter>);

pub(crate) fn parse_format(s: &str) -> Result<Format, String> {
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
pub(crate) fn parse_read_format(s: &str) -> Result<Format, String> {
    match s.trim().to_ascii_lowercase().as_str() {
        "packed" => Ok(Format::Packed),
        _ => Err("only `packed` needs naming; other formats are recognised".into()),
    }
}

pub(crate) fn parse_checksum(s: &str) -> Result<oxiblosc::bloscpack::Checksum, String> {
    oxiblosc::bloscpack::Checksum::from_name(&s.trim().to_ascii_lowercase()).ok_or_else(|| {
        "unknown checksum (known: none, adler32, crc32, md5, sha1, sha224, sha256, sha384, \
         sha512)"
            .to_string()
    })
}

/// The item size of a NumPy dtype string: optional byte order (`<`, `>`,
/// `=`, `|`), a kind letter and a size (`U` counts 4-byte characters).
pub(crate) fn parse_dtype(s: &str) -> Result<u64, String> {
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

pub(crate) fn parse_chunksize(s: &str) -> Result<usize, String> {
    let n = parse_bytes(s, MAX_BUFFERSIZE as u64, "a chunk's limit")?;
    if n == 0 {
        return Err("a chunk holds at least one byte".into());
    }
    Ok(n)
}

pub(crate) fn parse_meta(s: &str) -> Result<(String, String), String> {
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

pub(crate) fn codec_parser() -> impl clap::builder::TypedValueParser<Value = Codec> {
    PossibleValuesParser::new(Codec::ALL.map(Codec::name)).try_map(|s| s.parse::<Codec>())
}

pub(crate) fn parse_filter(s: &str) -> Result<FilterArg, String> {
    if s.trim().eq_ignore_ascii_case("none") {
        return Ok(FilterArg(None));
    }
    s.parse::<Filter>()
        .map(|f| FilterArg(Some(f)))
        .map_err(|e| strip_invalid_param(&e))
}

/// `invalid parameter: X` reads oddly inside clap's "invalid value" error.
pub(crate) fn strip_invalid_param(e: &oxiblosc::Error) -> String {
    match e {
        oxiblosc::Error::InvalidParam(m) => m.clone(),
        other => other.to_string(),
    }
}

/// A byte count: digits with an optional binary suffix K, M or G (`KiB`,
/// `K`, `k` and `KB` all mean 1024).
pub(crate) fn parse_size(s: &str) -> Result<usize, String> {
    parse_bytes(s, MAX_BLOCKSIZE as u64, "the largest block size")
}

/// A byte count no larger than `max` (`what` names the limit in errors).
pub(crate) fn parse_bytes(s: &str, max: u64, what: &str) -> Result<usize, String> {
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
pub(crate) fn usage_error(kind: ErrorKind, msg: impl std::fmt::Display) -> ! {
    let mut cmd = Cli::command();
    cmd.build();
    cmd.find_subcommand_mut("compress")
        .expect("compress subcommand")
        .error(kind, msg)
        .exit()
}
