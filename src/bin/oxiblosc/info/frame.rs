//! `info` of a frame or a sparse frame: header, metalayers, vlmetalayers,
//! the NDArray it holds, and a row per run of chunks.

use super::{J, codec_name, filter_names, hex, int, ratio};
use oxiblosc::SpecialValue;
use oxiblosc::schunk::SChunk;
use std::fmt::Write as _;
use std::path::Path;

/// [`frame`] on stdout; a reader that goes away (`| head`) ends it
/// quietly.
pub(super) fn frame_out(sc: SChunk, path: &Path, kind: &str, json: bool) -> Result<(), String> {
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
            ("ndarray", J::Raw(crate::ndarray::info_json(&sc))),
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
    s.push_str(&crate::ndarray::info_text(&sc));
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
