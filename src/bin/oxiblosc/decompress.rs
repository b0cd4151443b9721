//! `decompress` and `verify`: one reader per container.

use oxiblosc::stream::ChunkDecoder;

use super::*;
use crate::compress::{OutWrite, explain};

/// Decompress a Bloscpack file front to back (a pipe too), one chunk in
/// memory at a time, every chunk's checksum verified before it is decoded.
/// Output goes to a temporary file renamed into place only once every
/// chunk has decoded, so a fault found in a later chunk leaves no output.
pub(crate) fn decompress_blp<R: std::io::Read + Send>(
    stream: R,
    name: &str,
    output: &Place,
    dparams: DParams,
) -> Result<(), String> {
    let mut dec = oxiblosc::bloscpack::Decoder::with_params(stream, dparams)
        .map_err(|e| format!("cannot open {name} as a Bloscpack file: {e}"))?;
    let mut out = OutWrite(files::Output::begin(output)?);
    dec.copy_to(&mut out)
        .map_err(|e| explain(&e, "decompress", &name))?;
    out.0.finish()
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
    let mut i = 0;
    write_pipelined(files::Output::begin(output)?, |buf| {
        if i == r.nchunks() {
            return Ok(false);
        }
        *buf = r
            .decompress_chunk(i)
            .map_err(|e| format!("cannot decompress {name} (chunk {i}): {e}"))?;
        i += 1;
        Ok(true)
    })
}

/// Write the pieces `fill` makes into `out`, in order, from a writer thread
/// while `fill` makes the next ones on this thread: decoding chunk i+1
/// overlaps writing chunk i. `fill` puts the next piece into the buffer it
/// is given (`Ok(true)`), or says there is none left (`Ok(false)`).
///
/// At most [`oxiblosc::stream::IN_FLIGHT`] pieces wait for the writer, and
/// the `IN_FLIGHT + 2` buffers go round (one being filled, one being
/// written): a buffer keeps its length, so filling a chunk of the size it
/// held before neither allocates nor touches fresh pages. Any error (the
/// first one: `fill`'s, else the writer's) drops `out` unfinished, which
/// removes its temporary file and leaves the target as it was; on success
/// `out` is finished (synced, renamed into place) once everything is
/// written.
pub(crate) fn write_pipelined(
    out: files::Output,
    mut fill: impl FnMut(&mut Vec<u8>) -> Result<bool, String>,
) -> Result<(), String> {
    use crossbeam_channel::bounded;
    use oxiblosc::stream::IN_FLIGHT;
    let (full_tx, full_rx) = bounded::<Vec<u8>>(IN_FLIGHT);
    let (free_tx, free_rx) = bounded::<Vec<u8>>(IN_FLIGHT + 2);
    for _ in 0..IN_FLIGHT + 2 {
        let _ = free_tx.send(Vec::new());
    }
    let (made, written) = std::thread::scope(|s| {
        // Only the writer holds `free_tx` from here on: once it stops, a
        // `recv` below fails instead of waiting for a buffer forever.
        let writer = s.spawn(move || -> Result<files::Output, String> {
            let mut out = out;
            for buf in full_rx.iter() {
                out.write(&buf)?;
                let _ = free_tx.send(buf);
            }
            Ok(out)
        });
        let made = (|| -> Result<(), String> {
            while let Ok(mut buf) = free_rx.recv() {
                if !fill(&mut buf)? {
                    break;
                }
                if full_tx.send(buf).is_err() {
                    break; // the writer stopped: its error says why
                }
            }
            Ok(())
        })();
        drop(full_tx);
        let written = writer
            .join()
            .unwrap_or_else(|_| Err("the writer thread panicked".to_string()));
        (made, written)
    });
    made?;
    written?.finish()
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
    let mut d = Decompressor::new(sc.dparams().clone());
    let nchunks = sc.nchunks();
    let mut i = 0;
    write_pipelined(files::Output::begin(output)?, |buf| {
        if i == nchunks {
            return Ok(false);
        }
        // Read once; checked whole before the buffer is sized by its
        // header: a corrupt chunk claiming 2 GiB fails here.
        let chunk = sc
            .get_chunk(i)
            .map_err(|e| format!("cannot read {name} (chunk {i}): {e}"))?;
        let undecodable =
            |e: &dyn std::fmt::Display| format!("cannot decompress {name} (chunk {i}): {e}");
        let n = oxiblosc::chunk::validate(&chunk)
            .map_err(|e| undecodable(&e))?
            .nbytes;
        buf.resize(n, 0);
        let got = d
            .decompress_into(&chunk, buf)
            .map_err(|e| undecodable(&e))?;
        if got != n {
            return Err(undecodable(&format_args!("decoded {got} of {n} bytes")));
        }
        if let Some(d) = &digests {
            d.check(i, &buf[..got])
                .map_err(|e| format!("{name}: {e}"))?;
        }
        i += 1;
        Ok(true)
    })
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
    let dparams = DParams::default().nthreads(args.nthreads.unwrap_or(1) as usize);
    // Enough of the start to tell the container apart.
    let mut head = Vec::new();
    files::read_piece(&mut reader, &mut head, 32)
        .map_err(|e| format!("cannot read {name}: {e}"))?;
    if head.starts_with(oxiblosc::bloscpack::MAGIC) {
        let stream = std::io::Read::chain(std::io::Cursor::new(head), reader);
        return decompress_blp(stream, &name.to_string(), &output, dparams);
    }
    if oxiblosc::frame::is_frame(&head) {
        if let Place::File(p) = &input {
            let sc = open
                .open(p)
                .map_err(|e| format!("cannot open {name} as a frame: {e}"))?;
            return decompress_frame(sc, &name.to_string(), &output);
        }
        // From a pipe: copied to a temporary file first, then read as a
        // file (one chunk in memory at a time). A frame's index comes last
        // and may list its chunks in any stored order, and its checksums sit
        // in the trailer: streaming it front to back could emit data in the
        // wrong order before finding out, and could not check the digests.
        let mut stream = std::io::Read::chain(std::io::Cursor::new(head), reader);
        let copy = files::StreamCopy::of(&mut stream)
            .map_err(|e| format!("cannot copy {name} to a temporary file: {e}"))?;
        let sc = open
            .open(copy.path())
            .map_err(|e| format!("cannot open {name} as a frame: {e}"))?;
        let done = decompress_frame(sc, &name.to_string(), &output);
        drop(copy);
        return done;
    }
    let stream = std::io::Read::chain(std::io::Cursor::new(head), reader);
    let mut dec = ChunkDecoder::with_params(stream, dparams);
    let mut out = OutWrite(files::Output::begin(&output)?);
    dec.copy_to(&mut out).map_err(|e| {
        let msg = explain(&e, "decompress", &name);
        if e.get_ref()
            .is_some_and(|i| i.to_string().starts_with("not a Blosc chunk"))
        {
            format!("{name} is {e}")
        } else {
            msg
        }
    })?;
    out.0.finish()
}
