//! `oxiblosc info`: what a frame, a sparse frame or a chunk file holds.
//!
//! Text for people, `--json` for scripts. The JSON is one object: for
//! frames `{"path", "kind", "header": {...}, "nchunks", "nbytes", "cbytes",
//! "cratio", "chunks": [{"index", "count", "nbytes", "cbytes", "ratio",
//! "special"}], "metalayers": [{"name", "nbytes", "hex", "value"}],
//! "vlmetalayers": [{"name", "cbytes", "nbytes"}], "ndarray": null or
//! {"metalayer", "shape", "chunks", "blocks", "dtype"}}` ("value": the
//! msgpack decoded as text, or null; each member of "chunks" stands for
//! `count` chunks from `index` on, 1 unless the frame's index names one
//! entry for all of them); for chunk files `{"path", "kind": "chunks",
//! "chunks": [{"index", "offset", "nbytes", "cbytes", ...header fields}]}`.

use std::fmt::Write as _;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use oxiblosc::chunk::header::ChunkPrefix;
use oxiblosc::schunk::{OpenOptions, SChunk};
use oxiblosc::{ChunkHeader, Codec, Filter, SpecialValue};

/// A JSON value, written by hand (the CLI has no serde).
enum J {
    Num(f64),
    Int(i128),
    Str(String),
    Bool(bool),
    Null,
    Arr(Vec<J>),
    /// JSON text written as is.
    Raw(String),
    Obj(Vec<(&'static str, J)>),
}

impl J {
    fn write(&self, out: &mut String) {
        match self {
            J::Num(v) if v.is_finite() => {
                let _ = write!(out, "{v}");
            }
            J::Num(_) | J::Null => out.push_str("null"),
            J::Int(v) => {
                let _ = write!(out, "{v}");
            }
            J::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            J::Raw(t) => out.push_str(t),
            J::Str(s) => {
                out.push('"');
                for c in s.chars() {
                    match c {
                        '"' => out.push_str("\\\""),
                        '\\' => out.push_str("\\\\"),
                        '\n' => out.push_str("\\n"),
                        '\r' => out.push_str("\\r"),
                        '\t' => out.push_str("\\t"),
                        c if (c as u32) < 0x20 => {
                            let _ = write!(out, "\\u{:04x}", c as u32);
                        }
                        c => out.push(c),
                    }
                }
                out.push('"');
            }
            J::Arr(items) => {
                out.push('[');
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    v.write(out);
                }
                out.push(']');
            }
            J::Obj(fields) => {
                out.push('{');
                for (i, (k, v)) in fields.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    J::Str((*k).to_string()).write(out);
                    out.push(':');
                    v.write(out);
                }
                out.push('}');
            }
        }
    }
}

fn int(v: impl Into<i128>) -> J {
    J::Int(v.into())
}

fn ratio(nbytes: u64, cbytes: u64) -> f64 {
    if cbytes == 0 {
        0.0
    } else {
        nbytes as f64 / cbytes as f64
    }
}

fn codec_name(id: u8) -> String {
    Codec::from_id(id).map_or_else(|| format!("codec {id}"), |c| c.name().to_string())
}

fn filter_names(ids: &[u8], metas: &[u8]) -> Vec<String> {
    ids.iter()
        .zip(metas)
        .filter(|(id, _)| **id != 0)
        .map(|(&id, &meta)| {
            Filter::from_id(id, meta).map_or_else(|| format!("filter {id}"), |f| f.to_string())
        })
        .collect()
}

fn hex(b: &[u8]) -> String {
    b.iter()
        .fold(String::with_capacity(2 * b.len()), |mut s, x| {
            let _ = write!(s, "{x:02x}");
            s
        })
}

/// Describe `path` on stdout.
pub fn run(path: &Path, json: bool) -> Result<(), String> {
    let what = format!("'{}'", path.display());
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot open {what}: {e}"))?;
    let out = if meta.is_dir() {
        let sc = OpenOptions::new()
            .read_only(true)
            .open(path)
            .map_err(|e| format!("cannot open {what} as a sparse frame: {e}"))?;
        return frame_out(sc, path, "sframe", json);
    } else {
        let mut f = File::open(path).map_err(|e| format!("cannot open {what}: {e}"))?;
        let mut head = Vec::new();
        (&mut f)
            .take(16)
            .read_to_end(&mut head)
            .map_err(|e| format!("cannot read {what}: {e}"))?;
        if head.starts_with(oxiblosc::bloscpack::MAGIC) {
            drop(f);
            blp(path, json)?
        } else if oxiblosc::frame::is_frame(&head) {
            drop(f);
            let sc = OpenOptions::new()
                .read_only(true)
                .open(path)
                .map_err(|e| format!("cannot open {what} as a frame: {e}"))?;
            return frame_out(sc, path, "frame", json);
        } else {
            chunks(f, path, meta.len(), json)?
        }
    };
    print!("{out}");
    Ok(())
}

/// [`frame`] on stdout; a reader that goes away (`| head`) ends it
/// quietly.
fn frame_out(sc: SChunk, path: &Path, kind: &str, json: bool) -> Result<(), String> {
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    match frame(sc, path, kind, json, &mut out)
        .and_then(|()| std::io::Write::flush(&mut out).map_err(Failure::Write))
    {
        Ok(()) => Ok(()),
        Err(Failure::Write(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(Failure::Write(e)) => Err(format!("cannot write the description: {e}")),
        Err(Failure::Read(m)) => Err(m),
    }
}

/// Why [`frame`] stopped.
enum Failure {
    Read(String),
    Write(std::io::Error),
}

/// Where the chunk rows go in the JSON text (never in a JSON string: a
/// control character).
const CHUNKS_MARK: &str = "\u{1}chunks\u{1}";

/// Describe a frame into `out`: the header, metalayers and vlmetalayers,
/// then one row per chunk (per run of chunks of one index entry: [`runs`]),
/// written as each chunk is read (a frame of millions of chunks is not held
/// in memory).
fn frame(
    mut sc: SChunk,
    path: &Path,
    kind: &str,
    json: bool,
    out: &mut dyn std::io::Write,
) -> Result<(), Failure> {
    let what = format!("'{}'", path.display());
    let h = sc.frame_header().clone();
    let n = sc.nchunks();
    let metas: Vec<(String, Vec<u8>)> = sc
        .metalayers()
        .iter()
        .map(|m| (m.name.clone(), m.content.clone()))
        .collect();
    let mut vlmetas = Vec::new();
    for m in sc.vlmetalayers().to_vec() {
        let value = sc
            .vlmeta_get(&m.name)
            .map_err(|e| {
                Failure::Read(format!("cannot read {what} (vlmetalayer {}): {e}", m.name))
            })?
            .unwrap_or_default();
        vlmetas.push((m.name, m.chunk.len(), value));
    }
    let filters = filter_names(&h.filters, &h.filters_meta);
    let chunksize = sc.chunksize();
    let mut s = String::new();
    if json {
        let header = J::Obj(vec![
            (
                "edition",
                J::Str(format!("{:?}", h.edition).to_ascii_lowercase()),
            ),
            ("version", int(h.version())),
            ("header_len", int(h.header_len)),
            ("frame_len", int(h.frame_len)),
            ("nbytes", int(h.nbytes)),
            ("cbytes", int(h.cbytes)),
            ("typesize", int(h.typesize)),
            ("blocksize", int(h.blocksize)),
            ("chunksize", int(h.chunksize)),
            ("codec", J::Str(codec_name(h.compcode()))),
            ("clevel", int(h.clevel())),
            (
                "filters",
                J::Arr(filters.iter().cloned().map(J::Str).collect()),
            ),
            ("splitmode", J::Str(format!("{:?}", h.splitmode()))),
            ("use_dict", J::Bool(h.use_dict())),
            ("tcomp", int(h.tcomp)),
            ("tdecomp", int(h.tdecomp)),
        ]);
        let obj = J::Obj(vec![
            ("path", J::Str(path.display().to_string())),
            ("kind", J::Str(kind.into())),
            ("header", header),
            ("nchunks", int(n as u64)),
            ("nbytes", int(sc.nbytes())),
            ("cbytes", int(sc.cbytes())),
            ("cratio", J::Num(sc.cratio())),
            ("chunks", J::Raw(CHUNKS_MARK.into())),
            ("ndarray", J::Raw(super::ndarray::info_json(&sc))),
            (
                "metalayers",
                J::Arr(
                    metas
                        .iter()
                        .map(|(name, v)| {
                            J::Obj(vec![
                                ("name", J::Str(name.clone())),
                                ("nbytes", int(v.len() as u64)),
                                ("hex", J::Str(hex(v))),
                                (
                                    "value",
                                    oxiblosc::frame::msgpack_text(v).map_or(J::Null, J::Str),
                                ),
                            ])
                        })
                        .collect(),
                ),
            ),
            (
                "vlmetalayers",
                J::Arr(
                    vlmetas
                        .iter()
                        .map(|(name, cbytes, v)| {
                            J::Obj(vec![
                                ("name", J::Str(name.clone())),
                                ("cbytes", int(*cbytes as u64)),
                                ("nbytes", int(v.len() as u64)),
                            ])
                        })
                        .collect(),
                ),
            ),
        ]);
        obj.write(&mut s);
        s.push('\n');
        let (pre, post) = s.split_once(CHUNKS_MARK).unwrap_or((&s, ""));
        out.write_all(pre.as_bytes()).map_err(Failure::Write)?;
        out.write_all(b"[").map_err(Failure::Write)?;
        let mut row = String::new();
        runs(&mut sc, &what, |i, count, c| {
            row.clear();
            if i > 0 {
                row.push(',');
            }
            J::Obj(vec![
                ("index", int(i as u64)),
                ("count", int(count as u64)),
                ("nbytes", int(c.nbytes as u64)),
                ("cbytes", int(c.cbytes as u64)),
                ("ratio", J::Num(ratio(c.nbytes as u64, c.cbytes as u64))),
                (
                    "special",
                    c.special
                        .map(SpecialValue::name)
                        .map_or(J::Null, |n| J::Str(n.into())),
                ),
            ])
            .write(&mut row);
            out.write_all(row.as_bytes()).map_err(Failure::Write)
        })?;
        out.write_all(b"]").map_err(Failure::Write)?;
        out.write_all(post.as_bytes()).map_err(Failure::Write)?;
        return Ok(());
    }
    let kind_text = if kind == "sframe" {
        "sparse frame (directory)"
    } else {
        "contiguous frame"
    };
    let _ = writeln!(s, "{}: {kind_text}", path.display());
    let _ = writeln!(
        s,
        "  format        {:?} edition, version {}, header {} bytes, frame {} bytes",
        h.edition,
        h.version(),
        h.header_len,
        h.frame_len
    );
    let _ = writeln!(
        s,
        "  chunks        {n} of {}",
        chunksize.map_or("variable size".to_string(), |c| format!("{c} bytes"))
    );
    let _ = writeln!(
        s,
        "  bytes         {} -> {} (ratio {:.2})",
        sc.nbytes(),
        sc.cbytes(),
        sc.cratio()
    );
    let _ = writeln!(
        s,
        "  typesize      {}, blocksize {}",
        h.typesize,
        if h.blocksize == 0 {
            "automatic".to_string()
        } else {
            h.blocksize.to_string()
        }
    );
    let _ = writeln!(
        s,
        "  codec         {} clevel {}, filters [{}], split {:?}{}",
        codec_name(h.compcode()),
        h.clevel(),
        filters.join(", "),
        h.splitmode(),
        if h.use_dict() { ", dictionary" } else { "" }
    );
    let _ = writeln!(
        s,
        "  threads       tcomp {}, tdecomp {}",
        h.tcomp, h.tdecomp
    );
    let _ = writeln!(s, "  metalayers    {}", metas.len());
    for (name, v) in &metas {
        let text = oxiblosc::frame::msgpack_text(v)
            .unwrap_or_else(|| oxiblosc::frame::msgpack_preview(v, 32));
        let _ = writeln!(s, "    {name:<31} {:>6} B  {text}", v.len());
    }
    s.push_str(&super::ndarray::info_text(&sc));
    let _ = writeln!(s, "  vlmetalayers  {}", vlmetas.len());
    for (name, cbytes, v) in &vlmetas {
        let _ = writeln!(
            s,
            "    {name:<31} {:>6} B stored, {} B value{}",
            cbytes,
            v.len(),
            oxiblosc::frame::msgpack_text(v).map_or(String::new(), |t| format!("  {t}"))
        );
    }
    if n > 0 {
        let _ = writeln!(
            s,
            "  {:>8} {:>12} {:>12} {:>8}  special",
            "chunk", "nbytes", "cbytes", "ratio"
        );
    }
    out.write_all(s.as_bytes()).map_err(Failure::Write)?;
    runs(&mut sc, &what, |i, count, c| {
        writeln!(
            out,
            "  {:>8} {:>12} {:>12} {:>8.2}  {}",
            i,
            c.nbytes,
            c.cbytes,
            ratio(c.nbytes as u64, c.cbytes as u64),
            c.special.map(SpecialValue::name).unwrap_or("-")
        )
        .map_err(Failure::Write)?;
        if count > 1 {
            writeln!(
                out,
                "  {:>8}  chunks {i} to {} ({count}) share this index entry",
                "...",
                i + count - 1
            )
            .map_err(Failure::Write)?;
        }
        Ok(())
    })
}

/// Hand `row` the chunks of the frame in runs: `(first, count, info)` for
/// each run of chunks that share one index entry and read the same
/// ([`SChunk::entry_run`]; the last chunk, which may be shorter, only when
/// it reads the same), so that a frame of a few hundred bytes that names
/// millions of chunks is listed in a few rows, and each run is read once.
fn runs(
    sc: &mut SChunk,
    what: &str,
    mut row: impl FnMut(usize, usize, &oxiblosc::schunk::ChunkInfo) -> Result<(), Failure>,
) -> Result<(), Failure> {
    let n = sc.nchunks();
    let read = |sc: &mut SChunk, i: usize| {
        sc.chunk_info(i)
            .map_err(|e| Failure::Read(format!("cannot read {what} (chunk {i}): {e}")))
    };
    let mut i = 0;
    // The last chunk, when a run's end read it and it differed: its row.
    let mut last = None;
    while i < n {
        let c = match last.take() {
            Some(c) if i == n - 1 => c,
            _ => read(sc, i)?,
        };
        let mut count = sc.entry_run(i).clamp(1, n - i);
        if count > 1 && i + count == n {
            let l = read(sc, n - 1)?;
            if l != c {
                count -= 1;
                last = Some(l);
            }
        }
        row(i, count, &c)?;
        i += count;
    }
    Ok(())
}

/// A file of chunks one after the other: each header, read without
/// decoding anything.
fn chunks(mut f: File, path: &Path, len: u64, json: bool) -> Result<String, String> {
    let what = format!("'{}'", path.display());
    let mut list = Vec::new();
    let mut buf = Vec::new();
    let mut at = 0u64;
    while at < len || list.is_empty() {
        f.seek(SeekFrom::Start(at))
            .map_err(|e| format!("cannot read {what}: {e}"))?;
        // The header's cbytes says how long the chunk is; the parser wants
        // the whole chunk (it checks cbytes against it), so read it all.
        let mut head = [0u8; 16];
        let got = (&mut f)
            .take(16)
            .read(&mut head)
            .map_err(|e| format!("cannot read {what}: {e}"))?;
        // Only a plausible header (a known format version, an item size, a
        // block size) is reported as a truncated chunk; anything else as
        // not a chunk at all (the parse below says why).
        let prefix = ChunkPrefix::read(&head[..got]);
        let declared = prefix.and_then(|p| p.chunk_len()).map(|c| c as u64);
        if let Some(c) = declared
            && prefix.is_some_and(|p| p.is_plausible())
            && at + c > len
        {
            let chunk = if list.is_empty() {
                String::new()
            } else {
                format!(" at byte {at}")
            };
            return Err(format!(
                "{what}: the chunk{chunk} is truncated: its header gives a {c}-byte chunk but \
                 the file ends after {} bytes",
                len - at
            ));
        }
        let take = declared.filter(|&c| at + c <= len).unwrap_or(16);
        f.seek(SeekFrom::Start(at))
            .map_err(|e| format!("cannot read {what}: {e}"))?;
        buf.clear();
        (&mut f)
            .take(take)
            .read_to_end(&mut buf)
            .map_err(|e| format!("cannot read {what}: {e}"))?;
        let h = ChunkHeader::parse(&buf).map_err(|e| {
            if list.is_empty() {
                format!("{what} is neither a frame nor a Blosc chunk: {e}")
            } else {
                format!("{what}: bad chunk at byte {at}: {e}")
            }
        })?;
        let cbytes = h.cbytes as u64;
        list.push((at, h));
        at += cbytes;
    }
    let mut s = String::new();
    if json {
        let items = list
            .iter()
            .enumerate()
            .map(|(i, (off, h))| {
                J::Obj(vec![
                    ("index", int(i as u64)),
                    ("offset", int(*off)),
                    ("version", int(h.version)),
                    ("nbytes", int(h.nbytes as u64)),
                    ("cbytes", int(h.cbytes as u64)),
                    ("ratio", J::Num(ratio(h.nbytes as u64, h.cbytes as u64))),
                    ("typesize", int(h.typesize)),
                    ("blocksize", int(h.blocksize as u64)),
                    ("nblocks", int(h.nblocks() as u64)),
                    ("codec", J::Str(chunk_codec(h))),
                    (
                        "filters",
                        J::Arr(
                            filter_names(&h.filters, &h.filters_meta)
                                .into_iter()
                                .map(J::Str)
                                .collect(),
                        ),
                    ),
                    ("memcpyed", J::Bool(h.is_memcpyed())),
                    ("split", J::Bool(!h.dont_split())),
                    (
                        "special",
                        h.special()
                            .map(SpecialValue::name)
                            .map_or(J::Null, |n| J::Str(n.into())),
                    ),
                ])
            })
            .collect();
        J::Obj(vec![
            ("path", J::Str(path.display().to_string())),
            ("kind", J::Str("chunks".into())),
            ("chunks", J::Arr(items)),
        ])
        .write(&mut s);
        s.push('\n');
        return Ok(s);
    }
    let _ = writeln!(s, "{}: {} Blosc chunk(s)", path.display(), list.len());
    let _ = writeln!(
        s,
        "  {:>6} {:>12} {:>12} {:>12} {:>8} {:>3} {:>9}  codec, filters",
        "chunk", "offset", "nbytes", "cbytes", "ratio", "ts", "blocksize"
    );
    for (i, (off, h)) in list.iter().enumerate() {
        let mut extra = filter_names(&h.filters, &h.filters_meta).join(",");
        if let Some(sp) = h.special().map(SpecialValue::name) {
            extra = format!("special {sp}");
        } else if h.is_memcpyed() {
            extra.push_str(" (stored)");
        }
        let _ = writeln!(
            s,
            "  {:>6} {:>12} {:>12} {:>12} {:>8.2} {:>3} {:>9}  {} {}",
            i,
            off,
            h.nbytes,
            h.cbytes,
            ratio(h.nbytes as u64, h.cbytes as u64),
            h.typesize,
            h.blocksize,
            chunk_codec(h),
            extra
        );
    }
    Ok(s)
}

fn chunk_codec(h: &ChunkHeader) -> String {
    match h.codec() {
        Some(c) => c.name().to_string(),
        None if h.codec_format() == 6 => codec_name(h.udcodec),
        None => format!("format {}", h.codec_format()),
    }
}

/// Describe a packed super-chunk (`info --format packed`): its 96-byte
/// header, the ancillary chunks and the data chunks.
pub fn packed(path: &Path, json: bool) -> Result<String, String> {
    let what = format!("'{}'", path.display());
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {what}: {e}"))?;
    let r = oxiblosc::packed::PackedReader::new(&bytes)
        .map_err(|e| format!("{what} is not a packed super-chunk: {e}"))?;
    let h = *r.header();
    let codec = h.codec().map_or_else(
        || format!("compressor {}", h.compressor),
        |c| c.name().to_string(),
    );
    let filters: Vec<String> = h
        .filter_codes()
        .iter()
        .filter(|&&f| f != 0)
        .map(|&f| {
            oxiblosc::packed::filter_name(f).map_or_else(|| format!("filter {f}"), String::from)
        })
        .collect();
    let mut rows = Vec::new();
    for i in 0..r.nchunks() {
        let c = r
            .chunk(i)
            .map_err(|e| format!("cannot read {what} (chunk {i}): {e}"))?;
        let ch = ChunkHeader::parse(c).map_err(|e| format!("{what} (chunk {i}): {e}"))?;
        rows.push((ch.nbytes, ch.cbytes));
    }
    let ancillary = [
        ("filters", h.filters_chunk),
        ("codec", h.codec_chunk),
        ("metadata", h.metadata_chunk),
        ("userdata", h.userdata_chunk),
    ];
    let mut s = String::new();
    if json {
        let obj = J::Obj(vec![
            ("path", J::Str(path.display().to_string())),
            ("kind", J::Str("packed".into())),
            ("version", int(h.version)),
            ("codec", J::Str(codec)),
            ("clevel", int(h.clevel)),
            ("filters", J::Arr(filters.into_iter().map(J::Str).collect())),
            ("chunksize", int(h.chunksize)),
            ("nchunks", int(h.nchunks)),
            ("nbytes", int(h.nbytes)),
            ("cbytes", int(h.cbytes)),
            ("cratio", J::Num(ratio(h.nbytes as u64, h.cbytes as u64))),
            (
                "ancillary_offsets",
                J::Obj(ancillary.iter().map(|(n, o)| (*n, int(*o))).collect()),
            ),
            ("data_starts", int(h.data_starts)),
            (
                "chunks",
                J::Arr(
                    rows.iter()
                        .enumerate()
                        .map(|(i, (n, c))| {
                            J::Obj(vec![
                                ("index", int(i as u64)),
                                ("nbytes", int(*n as u64)),
                                ("cbytes", int(*c as u64)),
                            ])
                        })
                        .collect(),
                ),
            ),
        ]);
        obj.write(&mut s);
        s.push('\n');
    } else {
        let _ = writeln!(
            s,
            "{}: packed super-chunk, version {}",
            path.display(),
            h.version
        );
        let _ = writeln!(
            s,
            "  codec {codec}, clevel {}, filters [{}], chunksize {}",
            h.clevel,
            filters.join(", "),
            h.chunksize
        );
        let _ = writeln!(
            s,
            "  {} chunks, nbytes {}, cbytes {} (ratio {:.2})",
            h.nchunks,
            h.nbytes,
            h.cbytes,
            ratio(h.nbytes as u64, h.cbytes as u64)
        );
        for (name, off) in ancillary {
            if off != 0 {
                let _ = writeln!(s, "  {name} chunk at byte {off}");
            }
        }
        let _ = writeln!(s, "  data starts at byte {}", h.data_starts);
        for (i, (n, c)) in rows.iter().enumerate() {
            let _ = writeln!(s, "  chunk {i}: nbytes {n}, cbytes {c}");
        }
    }
    Ok(s)
}

/// Describe a Bloscpack file: its header, metadata, offsets and the
/// checksum of every chunk (each one verified).
fn blp(path: &Path, json: bool) -> Result<String, String> {
    let what = format!("'{}'", path.display());
    let r = oxiblosc::bloscpack::Reader::open(path)
        .map_err(|e| format!("cannot open {what} as a Bloscpack file: {e}"))?;
    let h = *r.header();
    let opt = |v: Option<u64>| v.map_or(J::Null, int);
    let mut rows = Vec::new();
    for i in 0..r.nchunks() {
        let range = r
            .chunk_range(i)
            .ok_or_else(|| format!("{what}: bloscpack chunk {i} is outside the file"))?;
        let chunk = r.chunk(i).map_err(|e| format!("{what}: {e}"))?;
        let ch = ChunkHeader::parse(chunk).map_err(|e| format!("{what} (chunk {i}): {e}"))?;
        let digest_at = range.start + chunk.len();
        let digest = &r.as_bytes()[digest_at..digest_at + h.checksum.size()];
        rows.push((range.start, ch.nbytes, ch.cbytes, hex(digest)));
    }
    let offsets: Option<Vec<Option<u64>>> = r.offsets().map(<[_]>::to_vec);
    let meta = r.metadata().map(|v| v.to_string());
    let mut s = String::new();
    if json {
        let obj = J::Obj(vec![
            ("path", J::Str(path.display().to_string())),
            ("kind", J::Str("bloscpack".into())),
            ("format_version", int(oxiblosc::bloscpack::FORMAT_VERSION)),
            ("offsets", J::Bool(h.offsets)),
            ("metadata", J::Bool(h.metadata)),
            ("checksum", J::Str(h.checksum.name().to_ascii_lowercase())),
            ("typesize", int(h.typesize)),
            ("chunk_size", opt(h.chunk_size.map(u64::from))),
            ("last_chunk", opt(h.last_chunk.map(u64::from))),
            ("nchunks", opt(h.nchunks)),
            ("max_app_chunks", int(h.max_app_chunks)),
            ("metadata_json", meta.clone().map_or(J::Null, J::Str)),
            (
                "offset_table",
                offsets
                    .clone()
                    .map_or(J::Null, |o| J::Arr(o.into_iter().map(opt).collect())),
            ),
            (
                "chunks",
                J::Arr(
                    rows.iter()
                        .enumerate()
                        .map(|(i, (off, n, c, d))| {
                            J::Obj(vec![
                                ("index", int(i as u64)),
                                ("offset", int(*off as u64)),
                                ("nbytes", int(*n as u64)),
                                ("cbytes", int(*c as u64)),
                                ("digest", J::Str(d.clone())),
                            ])
                        })
                        .collect(),
                ),
            ),
        ]);
        obj.write(&mut s);
        s.push('\n');
    } else {
        let show = |v: Option<u64>| v.map_or("unknown".to_string(), |v| v.to_string());
        let _ = writeln!(
            s,
            "{}: Bloscpack file, format version {}",
            path.display(),
            oxiblosc::bloscpack::FORMAT_VERSION
        );
        let _ = writeln!(
            s,
            "  typesize {}, chunk_size {}, last_chunk {}, nchunks {}, max_app_chunks {}",
            h.typesize,
            show(h.chunk_size.map(u64::from)),
            show(h.last_chunk.map(u64::from)),
            show(h.nchunks),
            h.max_app_chunks
        );
        let _ = writeln!(
            s,
            "  checksum {}, offsets {}, metadata {}",
            h.checksum.name().to_ascii_lowercase(),
            if h.offsets { "yes" } else { "no" },
            if h.metadata { "yes" } else { "no" }
        );
        if let Some(m) = &meta {
            let _ = writeln!(s, "  metadata: {m}");
        }
        if let Some(o) = &offsets {
            let used: Vec<String> = o.iter().flatten().map(u64::to_string).collect();
            let _ = writeln!(
                s,
                "  offsets: [{}], room for {} more",
                used.join(", "),
                h.max_app_chunks
            );
        }
        for (i, (off, n, c, d)) in rows.iter().enumerate() {
            let _ = writeln!(
                s,
                "  chunk {i} at byte {off}: nbytes {n}, cbytes {c}, {} {d} (verified)",
                h.checksum.name().to_ascii_lowercase()
            );
        }
    }
    Ok(s)
}
