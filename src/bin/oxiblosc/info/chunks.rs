//! `info` of a file of chunks one after the other: each header.

use super::{J, codec_name, filter_names, int, ratio};
use oxiblosc::chunk::header::ChunkPrefix;
use oxiblosc::{ChunkHeader, SpecialValue};
use std::fmt::Write as _;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// A file of chunks one after the other: each header, read without
/// decoding anything.
pub(super) fn chunks(mut f: File, path: &Path, len: u64, json: bool) -> Result<String, String> {
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
