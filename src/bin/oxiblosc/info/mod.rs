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
//!
//! One file per kind of input: `frame.rs` (frames and sparse frames),
//! `chunks.rs` (files of chunks), `packed.rs` (packed super-chunks),
//! `blp.rs` (Bloscpack files); this one picks the kind and holds the JSON
//! writer and the helpers they share.

mod blp;
mod chunks;
mod frame;
mod packed;

pub use packed::packed;

use blp::blp;
use chunks::chunks;
use frame::frame_out;

use std::fmt::Write as _;
use std::fs::File;
use std::io::Read;
use std::path::Path;

use oxiblosc::schunk::OpenOptions;
use oxiblosc::{Codec, Filter};

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

/// Open `path` read-only as a frame (`kind` for the output, `as_what` for
/// the error) and describe it.
fn open_frame(
    path: &Path,
    what: &str,
    kind: &str,
    as_what: &str,
    json: bool,
) -> Result<(), String> {
    let sc = OpenOptions::new()
        .read_only(true)
        .open(path)
        .map_err(|e| format!("cannot open {what} as {as_what}: {e}"))?;
    frame_out(sc, path, kind, json)
}

/// Describe `path` on stdout.
pub fn run(path: &Path, json: bool) -> Result<(), String> {
    let what = format!("'{}'", path.display());
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot open {what}: {e}"))?;
    let out = if meta.is_dir() {
        return open_frame(path, &what, "sframe", "a sparse frame", json);
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
            return open_frame(path, &what, "frame", "a frame", json);
        } else {
            chunks(f, path, meta.len(), json)?
        }
    };
    print!("{out}");
    Ok(())
}
