//! Shared helpers for the integration tests: the interop corpus in
//! `tests/data` (copied from the shared vectors; manifest.json describes it).
#![allow(dead_code)]

use serde_json::Value;
use sha2::{Digest, Sha256};
use std::path::PathBuf;

pub fn data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data")
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
