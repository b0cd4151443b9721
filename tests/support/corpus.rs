//! The interop corpus in `tests/data` (copied from the shared vectors;
//! manifest.json describes it).
#![allow(dead_code)]

use serde_json::Value;
use sha2::{Digest, Sha256};
use std::path::PathBuf;

pub fn data_dir() -> PathBuf {
    super::repo().join("tests/data")
}

pub fn manifest() -> Value {
    let text = std::fs::read_to_string(data_dir().join("manifest.json"))
        .expect("tests/data/manifest.json");
    serde_json::from_str(&text).expect("manifest parses")
}

/// Vectors of the given kinds (`chunk`, `blosc1`, `compat`, ...).
pub fn vectors(kinds: &[&str]) -> Vec<Value> {
    manifest()["vectors"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|v| kinds.contains(&v["kind"].as_str().unwrap()))
        .cloned()
        .collect()
}

pub fn read(v: &Value) -> Vec<u8> {
    std::fs::read(data_dir().join(v["path"].as_str().unwrap())).unwrap()
}

pub fn sha256_hex(data: &[u8]) -> String {
    Sha256::digest(data)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The `CParams` a manifest entry was compressed with: `blosc2.compress2`
/// fills filter slots from 0 with the list, module-level `blosc2.compress`
/// puts its one filter in slot 5 (C's default layout).
pub fn cparams_of(v: &Value) -> oxiblosc::CParams {
    use oxiblosc::{CParams, Codec, Filter, SplitMode};
    let p = &v["params"];
    let codec: Codec = p["codec"].as_str().unwrap().parse().unwrap();
    let metas: Vec<u8> = p["filters_meta"]
        .as_array()
        .map(|a| a.iter().map(|m| m.as_i64().unwrap() as i8 as u8).collect())
        .unwrap_or_default();
    let mut c = CParams::default()
        .codec(codec)
        .clevel(p["clevel"].as_u64().unwrap() as u8)
        .typesize(p["typesize"].as_u64().unwrap() as usize)
        .blocksize(p["blocksize"].as_u64().unwrap_or(0) as usize)
        .nthreads(1)
        .use_dict(p["use_dict"].as_bool().unwrap_or(false));
    c.splitmode = match p["splitmode"].as_str().unwrap_or("forward_compat") {
        "always" => SplitMode::Always,
        "never" => SplitMode::Never,
        "auto" => SplitMode::Auto,
        _ => SplitMode::ForwardCompat,
    };
    c.filters = [None; 6];
    c.filters_meta = [0; 6];
    let first_slot = if v["api"] == "blosc2.compress" { 5 } else { 0 };
    for (i, f) in p["filters"].as_array().unwrap().iter().enumerate() {
        let slot = first_slot + i;
        let meta = metas.get(i).copied().unwrap_or(0);
        c.filters[slot] = match f.as_str().unwrap() {
            "nofilter" => None,
            "shuffle" => Some(Filter::Shuffle),
            "bitshuffle" => Some(Filter::BitShuffle),
            "delta" => Some(Filter::Delta),
            "trunc_prec" => Some(Filter::TruncPrec(meta)),
            "bytedelta" => Some(Filter::ByteDelta),
            other => panic!("unknown filter {other}"),
        };
        c.filters_meta[slot] = meta;
        // The global (Blosc1-style) API drops SHUFFLE for 1-byte items.
        if first_slot == 5 && c.typesize == 1 && c.filters[slot] == Some(Filter::Shuffle) {
            c.filters[slot] = None;
        }
    }
    c
}
