//! NDArrays in the CLI: `decompress X.b2nd OUT.npy` (a `.npy`; any other
//! OUT gets the raw C-order bytes of the array), `compress IN.npy OUT.b2nd`
//! (an NDArray python-blosc2 opens as one) and what `info` says of them.
//! An NDArray is recognised by its `b2nd` (or `caterva`) metalayer, a
//! `.npy` input by its magic bytes; only the OUT of `decompress` goes by
//! its name (`.npy`).

use std::fmt::Write as _;
use std::io::Read;

use oxiblosc::CParams;
use oxiblosc::ndarray::{self, NdArray, NdMeta, npy};
use oxiblosc::schunk::SChunk;

use super::args::{CompressArgs, Format};
use super::files::{self, Place, TempTarget};

/// `files::Output` as an `io::Write`, for the library's writers.
struct Sink(files::Output);

impl std::io::Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.write(buf).map_err(std::io::Error::other)?;
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Whether `output` names a `.npy` file.
fn wants_npy(output: &Place) -> bool {
    matches!(output, Place::File(p) if p.extension().is_some_and(|e| e.eq_ignore_ascii_case("npy")))
}

/// Decompress an NDArray: the logical array (never the padded chunks), as
/// a `.npy` when OUT ends in `.npy`, else its raw C-order bytes.
pub(crate) fn decompress(sc: SChunk, name: &str, output: &Place) -> Result<(), String> {
    let mut a = NdArray::open(sc).map_err(|e| format!("cannot open {name} as an NDArray: {e}"))?;
    let mut out = Sink(files::Output::begin(output)?);
    let r = if wants_npy(output) {
        a.write_npy(&mut out)
    } else {
        a.write_to(&mut out)
    };
    r.map_err(|e| format!("cannot decompress {name}: {e}"))?;
    out.0.finish()
}

/// Whether `input` is a regular file starting with the `.npy` magic (a
/// FIFO, a device or stdin is never peeked at: that would eat its bytes).
pub(crate) fn is_npy_input(input: &Place) -> bool {
    let Place::File(p) = input else {
        return false;
    };
    if !std::fs::metadata(p).is_ok_and(|m| m.is_file()) {
        return false;
    }
    let mut head = [0u8; 6];
    std::fs::File::open(p)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok()
        && &head == npy::MAGIC
}

/// A `--chunkshape` / `--blockshape` value.
#[derive(Clone, Debug)]
pub(crate) struct Shape(pub(crate) Vec<u64>);

/// A shape option: comma-separated positive numbers (`--chunkshape 32,64`).
pub(crate) fn parse_shape(s: &str) -> Result<Shape, String> {
    let dims = s
        .split(',')
        .map(|d| {
            d.trim()
                .parse::<u64>()
                .ok()
                .filter(|&n| n > 0 && n <= i32::MAX as u64)
                .ok_or_else(|| format!("{d:?} is not a dimension in 1..={}", i32::MAX))
        })
        .collect::<Result<Vec<u64>, String>>()?;
    if dims.len() > ndarray::MAX_DIM {
        return Err(format!(
            "{} dimensions; at most {}",
            dims.len(),
            ndarray::MAX_DIM
        ));
    }
    Ok(Shape(dims))
}

/// `compress IN.npy OUT`: an NDArray in a frame (or a sparse frame with
/// `--format sframe`), with `--chunkshape` / `--blockshape` or shapes of
/// about 4 MiB chunks and 64 KiB blocks.
pub(crate) fn compress_npy(
    args: &CompressArgs,
    params: CParams,
    format: Format,
    input: &Place,
    output: &Place,
) -> Result<(), String> {
    if args.chunksize.is_some() || args.checksum.is_some() {
        return Err(
            "--chunksize and --checksum are not for a .npy input (an NDArray): use \
             --chunkshape and --blockshape"
                .into(),
        );
    }
    let name = input.as_input();
    let bad = |e: String| format!("cannot read {name} as a .npy file: {e}");
    // The header first (its length is in bytes 8..10 or 8..12), then the
    // data, streamed one slab of chunks at a time.
    let mut reader = files::open_input(input)?;
    let mut head = Vec::new();
    files::read_piece(&mut reader, &mut head, 12).map_err(|e| bad(e.to_string()))?;
    let hlen = match head.get(6) {
        Some(1) if head.len() >= 10 => 10 + u16::from_le_bytes([head[8], head[9]]) as usize,
        Some(2 | 3) if head.len() >= 12 => {
            12 + u32::from_le_bytes(head[8..12].try_into().unwrap()) as usize
        }
        _ => head.len(),
    };
    if hlen > head.len() && hlen <= npy::MAX_HEADER_LEN + 12 {
        let missing = hlen - head.len();
        files::read_piece_append(&mut reader, &mut head, missing)
            .map_err(|e| bad(e.to_string()))?;
    }
    let (h, start) = npy::read_header(&head).map_err(|e| bad(e.to_string()))?;
    // Bytes read past the header belong to the data.
    let rest = head.split_off(start);
    let mut reader: Box<dyn Read> = Box::new(std::io::Cursor::new(rest).chain(reader));
    let itemsize = ndarray::dtype_itemsize(&h.dtype).map_err(|e| bad(e.to_string()))?;
    let (dc, db) = ndarray::default_shapes(&h.shape, itemsize);
    let given_chunks = args.chunkshape.as_ref().map(|s| s.0.clone());
    let given_blocks = args.blockshape.as_ref().map(|s| s.0.clone());
    let pick = |given: &Option<Vec<u64>>, default: Vec<u64>, what: &str| match given {
        Some(v) if v.len() != h.shape.len() => Err(format!(
            "--{what} has {} dimensions, the array {}",
            v.len(),
            h.shape.len()
        )),
        Some(v) => Ok(v.clone()),
        None => Ok(default),
    };
    let chunkshape = pick(&given_chunks, dc, "chunkshape")?;
    let blockshape = match (&given_blocks, &given_chunks) {
        (None, Some(c)) => ndarray::default_shapes(c, itemsize).1,
        _ => pick(&given_blocks, db, "blockshape")?,
    };
    if let Some(d) = (0..h.shape.len()).find(|&d| blockshape[d] > chunkshape[d]) {
        return Err(format!(
            "blockshape {blockshape:?} is larger than chunkshape {chunkshape:?} in dimension {d}"
        ));
    }
    let meta = NdMeta::new(&h.shape, &chunkshape, &blockshape, &h.dtype);
    let what = |e: oxiblosc::Error| format!("cannot compress {name}: {e}");
    let size = h.data_nbytes().unwrap_or(u64::MAX);
    let mut fill = |sc: &mut SChunk| -> Result<(), String> {
        ndarray::fill_from(sc, &meta, &mut reader).map_err(|e| match e {
            oxiblosc::Error::Io(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => format!(
                "{name} is not a whole .npy file: its header gives shape {:?} of {}, {size} \
                 data bytes, and the input ends before",
                h.shape, h.dtype
            ),
            e => what(e),
        })?;
        let mut more = [0u8; 1];
        match reader.read(&mut more) {
            Ok(0) => Ok(()),
            Ok(_) => Err(format!(
                "{name} is not a .npy file of shape {:?} and dtype {}: more than its {size} \
                 data bytes follow the header",
                h.shape, h.dtype
            )),
            Err(e) => Err(format!("cannot read {name}: {e}")),
        }
    };
    let mut builder = ndarray::builder(&meta, params).map_err(what)?.fsync(false);
    for (k, v) in &args.metas {
        builder = builder.meta(k, &oxiblosc::frame::encode_msgpack(&v.as_str().into()));
    }
    let path = match output {
        Place::File(p) if !std::fs::metadata(p).is_ok_and(|m| !m.is_file() && !m.is_dir()) => {
            Some(p)
        }
        _ => None,
    };
    let Some(path) = path else {
        let mut sc = builder.build_memory().map_err(what)?;
        fill(&mut sc)?;
        let mut out = files::Output::begin(output)?;
        // Streamed: the array's frame is not copied whole once more.
        let mut w = files::OutputWriter::new(&mut out);
        if let Err(e) = sc.write_cframe(&mut w) {
            return Err(w.take_error().unwrap_or_else(|| what(e)));
        }
        return out.finish();
    };
    if format == Format::Frame && path.is_dir() {
        return Err(format!("'{}' is a directory", path.display()));
    }
    let tmp = TempTarget::new(path)?;
    let mut sc = match format {
        Format::Sframe => builder.create_dir(tmp.path()),
        _ => builder.create_file(tmp.path()),
    }
    .map_err(what)?;
    fill(&mut sc)?;
    if format == Format::Frame {
        sc.trim().map_err(what)?;
    }
    drop(sc);
    tmp.persist()
}

/// `info`'s lines for an NDArray (nothing for other super-chunks): the
/// shape, chunk and block shapes, dtype, and any problem opening it.
pub(crate) fn info_text(sc: &SChunk) -> String {
    let mut s = String::new();
    let tuple = |d: &[u64]| {
        let inner: Vec<String> = d.iter().map(u64::to_string).collect();
        if d.len() == 1 {
            format!("({},)", inner[0])
        } else {
            format!("({})", inner.join(", "))
        }
    };
    match ndarray::find_meta(sc) {
        Ok(None) => {}
        Ok(Some((name, m))) => {
            let dtype = if m.has_dtype {
                m.dtype.clone()
            } else {
                format!("{} (none stored)", NdMeta::default_dtype(sc.typesize()))
            };
            let _ = writeln!(
                s,
                "  ndarray       {name} metalayer, {} dimensions",
                m.ndim()
            );
            let _ = writeln!(s, "    shape       {}", tuple(&m.shape));
            let _ = writeln!(s, "    chunks      {}", tuple(&m.chunkshape));
            let _ = writeln!(s, "    blocks      {}", tuple(&m.blockshape));
            let _ = writeln!(s, "    dtype       {dtype}");
            if let Ok(l) = ndarray::Layout::new(&m, sc.typesize()) {
                let _ = writeln!(
                    s,
                    "    array       {} bytes in {} padded chunks of {} bytes",
                    l.nbytes(),
                    l.nchunks(),
                    l.chunk_nbytes()
                );
            }
        }
        Err(e) => {
            let _ = writeln!(s, "  ndarray       bad metalayer: {e}");
        }
    }
    s
}

/// `info --json`'s `"ndarray"` member as JSON text (`null` for other
/// super-chunks).
pub(crate) fn info_json(sc: &SChunk) -> String {
    let list = |d: &[u64]| {
        let inner: Vec<String> = d.iter().map(u64::to_string).collect();
        format!("[{}]", inner.join(","))
    };
    match ndarray::find_meta(sc) {
        Ok(Some((name, m))) => {
            let dtype = if m.has_dtype {
                m.dtype.clone()
            } else {
                NdMeta::default_dtype(sc.typesize())
            };
            let mut dt = String::new();
            for c in dtype.chars() {
                match c {
                    '"' => dt.push_str("\\\""),
                    '\\' => dt.push_str("\\\\"),
                    c if (c as u32) < 0x20 => {
                        let _ = write!(dt, "\\u{:04x}", c as u32);
                    }
                    c => dt.push(c),
                }
            }
            format!(
                "{{\"metalayer\":\"{name}\",\"shape\":{},\"chunks\":{},\"blocks\":{},\"dtype\":\"{dt}\"}}",
                list(&m.shape),
                list(&m.chunkshape),
                list(&m.blockshape)
            )
        }
        _ => "null".into(),
    }
}
