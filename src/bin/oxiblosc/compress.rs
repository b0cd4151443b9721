//! `compress`: the parameters, then one writer per container.

use std::io::{self, Write};

use oxiblosc::bloscpack::Checksum;
use oxiblosc::stream::{ChunkEncoder, FrameEncoder};

use super::*;

/// The type size: `-t`, else `--dtype`'s, else C-Blosc2's default; both
/// given and different is a usage error.
pub(crate) fn typesize(args: &CompressArgs) -> u64 {
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
pub(crate) fn cparams(args: &CompressArgs) -> CParams {
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

pub(crate) fn compress(args: CompressArgs, talk: Talk) -> Result<(), String> {
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

pub(crate) fn compress_to(
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
    let npy = super::ndarray::is_npy_input(input);
    if npy && matches!(format, Format::Frame | Format::Sframe) {
        return super::ndarray::compress_npy(args, params, format, input, output);
    }
    if args.chunkshape.is_some() || args.blockshape.is_some() {
        usage_error(
            ErrorKind::ArgumentConflict,
            "--chunkshape and --blockshape are for a .npy input written as a frame",
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
pub(crate) fn compress_packed(
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

/// Compress into a Bloscpack file through the bounded pipeline of a
/// [`bloscpack::Encoder`](oxiblosc::bloscpack::Encoder): its offsets come
/// first, so the compressed chunks wait in a spool (memory up to 8 MiB,
/// then an unnamed temporary file in `$TMPDIR`) until the end; memory stays
/// at a few chunks whatever the input size.
pub(crate) fn compress_blp(
    args: &CompressArgs,
    params: CParams,
    input: &Place,
    output: &Place,
) -> Result<(), String> {
    use oxiblosc::bloscpack;
    let name = input.as_input();
    let reader = InRead::new(input)?;
    let ts = params.typesize.max(1);
    let chunksize = args.chunksize.unwrap_or(bloscpack::DEFAULT_CHUNK_SIZE);
    let chunksize = (chunksize / ts * ts).max(ts);
    let opts = bloscpack::Options::default()
        .cparams(params)
        .chunk_size(chunksize)
        .checksum(args.checksum.unwrap_or(bloscpack::Checksum::Adler32));
    let out = OutWrite(files::Output::begin(output)?);
    let mut enc =
        bloscpack::Encoder::new(out, &opts).map_err(|e| format!("cannot compress {name}: {e}"))?;
    enc.copy_from(reader)
        .map_err(|e| explain(&e, "compress", &name))?;
    let out = enc.finish().map_err(|e| explain(&e, "compress", &name))?;
    out.0.finish()
}

/// An error message an adapter passes through whole (the reader's and the
/// writer's, which already name the file).
#[derive(Debug)]
pub(crate) struct Said(pub(crate) String);

impl std::fmt::Display for Said {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Said {}

/// The message of a stream error: the reader's or writer's own, else
/// "cannot VERB NAME: ERROR".
pub(crate) fn explain(e: &io::Error, verb: &str, name: &dyn std::fmt::Display) -> String {
    match e.get_ref().and_then(|i| i.downcast_ref::<Said>()) {
        Some(Said(msg)) => msg.clone(),
        None => format!("cannot {verb} {name}: {e}"),
    }
}

/// [`files::Output`] as an [`io::Write`] for the stream adapters.
pub(crate) struct OutWrite(pub(crate) files::Output);

impl Write for OutWrite {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write(buf).map_err(|m| io::Error::other(Said(m)))?;
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The input, its read errors named, and (with `--checksum`) the digest of
/// every `chunksize` bytes it yields, taken as they pass.
pub(crate) struct InRead {
    pub(crate) inner: Box<dyn Read + Send>,
    pub(crate) name: String,
    sums: Option<(digests::Digests, usize, Vec<u8>)>,
}

impl InRead {
    pub(crate) fn new(input: &Place) -> Result<InRead, String> {
        Ok(InRead {
            inner: files::open_input(input)?,
            name: input.as_input().to_string(),
            sums: None,
        })
    }

    /// Take the digest of every `chunksize` bytes with `algorithm`.
    fn digest(mut self, algorithm: Option<Checksum>, chunksize: usize) -> InRead {
        self.sums = algorithm.map(|a| (digests::Digests::new(a), chunksize, Vec::new()));
        self
    }

    /// The digests of all the chunks read.
    fn digests(&mut self) -> Option<digests::Digests> {
        let (mut d, _, rest) = self.sums.take()?;
        if !rest.is_empty() {
            d.add(&rest);
        }
        Some(d)
    }
}

impl Read for InRead {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf).map_err(|e| {
            io::Error::new(e.kind(), Said(format!("cannot read {}: {e}", self.name)))
        })?;
        if let Some((d, cs, pending)) = &mut self.sums {
            let mut data = &buf[..n];
            while !data.is_empty() {
                let k = (*cs - pending.len()).min(data.len());
                pending.extend_from_slice(&data[..k]);
                data = &data[k..];
                if pending.len() == *cs {
                    d.add(pending);
                    pending.clear();
                }
            }
        }
        Ok(n)
    }
}

/// Compress into a sequence of chunks of [`oxiblosc::stream::DEFAULT_CHUNKSIZE`]
/// bytes (an empty input is one empty chunk), through the bounded pipeline:
/// memory stays at a few chunks whatever the input size.
pub(crate) fn compress_chunks(
    params: CParams,
    input: &Place,
    output: &Place,
) -> Result<(), String> {
    let name = input.as_input();
    let reader = InRead::new(input)?;
    let out = OutWrite(files::Output::begin(output)?);
    let mut enc = ChunkEncoder::new(out, params, oxiblosc::stream::DEFAULT_CHUNKSIZE)
        .map_err(|e| format!("cannot compress {name}: {e}"))?;
    enc.copy_from(reader)
        .map_err(|e| explain(&e, "compress", &name))?;
    let out = enc.finish().map_err(|e| explain(&e, "compress", &name))?;
    out.0.finish()
}

/// Compress into a frame: a file (written beside the target through a
/// seekable [`FrameEncoder`], then renamed over it), a directory (an
/// `SChunk`, likewise), or stdout / a device (a spooling [`FrameEncoder`]).
/// Memory stays at a few chunks in every case.
pub(crate) fn compress_frame(
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
    let name = input.as_input();
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
                // Devices and FIFOs are written in place, spooled.
                Some(k) if !k.is_file() && !k.is_dir() => None,
                _ => Some(p),
            }
        }
        Place::Std => None,
    };
    if format == Format::Sframe {
        let path = path.expect("checked: an sframe goes to a directory");
        return compress_sframe(args, params, chunksize, input, path);
    }
    let mut reader = InRead::new(input)?.digest(args.checksum, chunksize);
    let stream = |e: io::Error| explain(&e, "compress", &name);
    let setup = |e: oxiblosc::Error| format!("cannot make the frame: {e}");
    let Some(path) = path else {
        let out = OutWrite(files::Output::begin(output)?);
        let mut enc = FrameEncoder::new(out, params, chunksize).map_err(setup)?;
        for (name, value) in &args.metas {
            enc.meta(
                name,
                &oxiblosc::frame::encode_msgpack(&value.as_str().into()),
            )
            .map_err(setup)?;
        }
        enc.copy_from(&mut reader).map_err(stream)?;
        if let Some(d) = reader.digests() {
            enc.vlmeta_set(digests::VLMETA_NAME, &d.encode())
                .map_err(|e| format!("cannot write the checksums: {e}"))?;
        }
        let out = enc.finish().map_err(stream)?;
        return out.0.finish();
    };
    let tmp = TempTarget::new(path)?;
    let what = format!("'{}'", path.display());
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(tmp.path())
        .map_err(|e| format!("cannot write {what}: {e}"))?;
    let file = io::BufWriter::with_capacity(1 << 20, files::WritebackFile::new(file));
    let mut enc = FrameEncoder::new_seekable(file, params, chunksize).map_err(setup)?;
    for (name, value) in &args.metas {
        enc.meta(
            name,
            &oxiblosc::frame::encode_msgpack(&value.as_str().into()),
        )
        .map_err(setup)?;
    }
    let write_err = |e: io::Error| match e.get_ref().and_then(|i| i.downcast_ref::<Said>()) {
        Some(_) => explain(&e, "compress", &name),
        None if e.kind() == io::ErrorKind::InvalidData => explain(&e, "compress", &name),
        None => format!("cannot write {what}: {e}"),
    };
    enc.copy_from(&mut reader).map_err(write_err)?;
    if let Some(d) = reader.digests() {
        enc.vlmeta_set(digests::VLMETA_NAME, &d.encode())
            .map_err(|e| format!("cannot write the checksums: {e}"))?;
    }
    let file = enc.finish().map_err(write_err)?;
    let file = file
        .into_inner()
        .map_err(|e| format!("cannot write {what}: {}", e.error()))?;
    drop(file);
    tmp.persist()
}

/// Compress into a sparse frame (a directory), built beside the target and
/// renamed over it; chunks are appended as the input is read, so memory
/// stays at about one chunk.
fn compress_sframe(
    args: &CompressArgs,
    params: CParams,
    chunksize: usize,
    input: &Place,
    path: &std::path::Path,
) -> Result<(), String> {
    let mut builder = SChunk::builder()
        .cparams(params)
        .chunksize(chunksize)
        .fsync(false);
    for (name, value) in &args.metas {
        builder = builder.meta(
            name,
            &oxiblosc::frame::encode_msgpack(&value.as_str().into()),
        );
    }
    let name = input.as_input();
    let mut reader = files::open_input(input)?;
    let tmp = TempTarget::new(path)?;
    let what = format!("'{}'", path.display());
    let mut sc = builder
        .create_dir(tmp.path())
        .map_err(|e| format!("cannot write {what}: {e}"))?;
    let mut buf = Vec::new();
    let mut sums = args.checksum.map(digests::Digests::new);
    loop {
        let n = files::read_piece(&mut reader, &mut buf, chunksize)
            .map_err(|e| format!("cannot read {name}: {e}"))?;
        if n > 0 {
            // Failed writes name the output, not the input.
            sc.append_buffer(&buf[..n]).map_err(|e| match e {
                oxiblosc::Error::Io(_) => format!("cannot write {what}: {e}"),
                e => format!("cannot compress {name}: {e}"),
            })?;
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
    drop(sc);
    tmp.persist()
}
