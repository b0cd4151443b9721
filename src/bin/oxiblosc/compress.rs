//! `compress`: the parameters, then one writer per container.

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

/// Largest piece of input one chunk takes: `MAX_BUFFERSIZE` rounded down to
/// whole items. Inputs up to this size become one chunk; larger ones a
/// sequence of chunks, one after the other (each chunk carries its size, so
/// the sequence is self-delimiting and every chunk decodes on its own, in
/// C-Blosc2 too).
pub(crate) fn piece_len(typesize: usize) -> usize {
    let ts = if typesize > oxiblosc::MAX_TYPESIZE {
        typesize
    } else {
        typesize.max(1)
    };
    MAX_BUFFERSIZE / ts * ts
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

/// Compress into a Bloscpack file (built in memory: its offsets section
/// precedes the chunks).
pub(crate) fn compress_blp(
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

pub(crate) fn compress_chunks(
    params: CParams,
    input: &Place,
    output: &Place,
) -> Result<(), String> {
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
    // Failed writes name the output, not the input.
    let out_name = match output {
        Place::File(p) => format!("'{}'", p.display()),
        Place::Std => "stdout".to_string(),
    };
    let fail = |e: oxiblosc::Error| match e {
        oxiblosc::Error::Io(_) => format!("cannot write {out_name}: {e}"),
        e => format!("cannot compress {name}: {e}"),
    };
    let mut fill = |sc: &mut SChunk| -> Result<(), String> {
        let mut buf = Vec::new();
        let mut sums = checksum.map(digests::Digests::new);
        loop {
            let n = files::read_piece(&mut reader, &mut buf, chunksize)
                .map_err(|e| format!("cannot read {name}: {e}"))?;
            if n > 0 {
                sc.append_buffer(&buf[..n]).map_err(fail)?;
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
