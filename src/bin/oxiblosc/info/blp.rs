//! `info` of a Bloscpack file.

use super::{J, hex, int};
use oxiblosc::ChunkHeader;
use std::fmt::Write as _;
use std::path::Path;

/// Describe a Bloscpack file: its header, metadata, offsets and the
/// checksum of every chunk (each one verified).
pub(super) fn blp(path: &Path, json: bool) -> Result<String, String> {
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
