//! `info` of a packed super-chunk.

use super::{J, int, ratio};
use oxiblosc::ChunkHeader;
use std::fmt::Write as _;
use std::path::Path;

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
