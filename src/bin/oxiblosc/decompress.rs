//! `decompress` and `verify`: one reader per container.

use super::*;

/// Decompress a Bloscpack file, every chunk's checksum verified.
pub(crate) fn decompress_blp(data: Vec<u8>, name: &str, output: &Place) -> Result<(), String> {
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
pub(crate) fn decompress_packed(input: &Place, output: &Place) -> Result<(), String> {
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

/// Decompress every chunk of a frame into `output`, in order.
pub(crate) fn decompress_frame(mut sc: SChunk, name: &str, output: &Place) -> Result<(), String> {
    if oxiblosc::ndarray::is_ndarray(&sc) {
        return super::ndarray::decompress(sc, name, output);
    }
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

pub(crate) fn decompress(args: DecompressArgs, talk: Talk) -> Result<(), String> {
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
pub(crate) fn verify(args: VerifyArgs, talk: Talk) -> Result<(), String> {
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

pub(crate) fn decompress_to(
    args: &DecompressArgs,
    input: &Place,
    output: &Place,
) -> Result<(), String> {
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
        if index == 0 && oxiblosc::frame::is_frame(&chunk) {
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
        let Some(prefix) = oxiblosc::chunk::header::ChunkPrefix::read(&chunk) else {
            return Err(format!(
                "{name} is not a Blosc chunk{at}: {got} bytes, shorter than any chunk header"
            ));
        };
        let cbytes = prefix.chunk_len().ok_or_else(|| {
            format!(
                "{name} is not a Blosc chunk{at}: chunk size {}",
                prefix.cbytes
            )
        })?;
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
