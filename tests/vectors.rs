//! Every chunk written by C-Blosc2 3.3.5 and C-Blosc 1.x in the interop
//! corpus decodes to its expected bytes, and its header reads as the
//! manifest says.

mod support;
use oxiblosc::{ChunkHeader, DParams, Decompressor};
use serde_json::Value;
use support::corpus::*;

/// Check one decoded chunk against the manifest entry; returns a failure text.
fn check(v: &Value, out: &[u8]) -> Option<String> {
    let name = v["name"].as_str().unwrap();
    let exp = &v["expected"];
    if out.len() as u64 != exp["nbytes"].as_u64().unwrap() {
        return Some(format!(
            "{name}: {} bytes, expected {}",
            out.len(),
            exp["nbytes"]
        ));
    }
    if exp["content_defined"] == Value::Bool(false) {
        return None;
    }
    if let Some(verify) = v
        .get("verify")
        .filter(|x| x["tail_defined"] == Value::Bool(false))
    {
        let n = verify["prefix_nbytes"].as_u64().unwrap() as usize;
        let want = verify["prefix_sha256"].as_str().unwrap();
        return (sha256_hex(&out[..n]) != want).then(|| format!("{name}: defined prefix differs"));
    }
    let want = exp["sha256"].as_str().unwrap();
    (sha256_hex(out) != want).then(|| format!("{name}: decoded bytes differ"))
}

fn header_matches(v: &Value, h: &ChunkHeader) -> Option<String> {
    let name = v["name"].as_str().unwrap();
    let m = &v["header"];
    let fields = [
        ("version", u64::from(h.version)),
        ("versionlz", u64::from(h.versionlz)),
        ("flags", u64::from(h.flags)),
        ("typesize", u64::from(h.typesize)),
        ("nbytes", h.nbytes as u64),
        ("cbytes", h.cbytes as u64),
    ];
    for (f, got) in fields {
        if m[f].as_u64() != Some(got) {
            return Some(format!(
                "{name}: header {f} = {got}, manifest says {}",
                m[f]
            ));
        }
    }
    // C clamps the block size to nbytes when reading; the stored value is in the file.
    if m["nbytes"].as_u64() > Some(0)
        && m["blocksize"].as_u64().unwrap() <= h.nbytes as u64
        && m["blocksize"].as_u64() != Some(h.blocksize as u64)
    {
        return Some(format!(
            "{name}: blocksize {} vs {}",
            h.blocksize, m["blocksize"]
        ));
    }
    if m["extended_header"] == Value::Bool(true) {
        let filters: Vec<u64> = m["filters"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap())
            .collect();
        let ours: Vec<u64> = h.filters.iter().map(|&x| u64::from(x)).collect();
        if h.version != 3 && filters != ours {
            return Some(format!("{name}: filters {ours:?} vs {filters:?}"));
        }
    }
    None
}

#[test]
fn chunk_blosc1_and_compat_vectors_decode() {
    let mut failures = Vec::new();
    let mut count = 0;
    let mut sha_checked = 0;
    let mut d = Decompressor::new(DParams::default());
    for v in vectors(&["chunk", "blosc1", "compat"]) {
        if v["kind"] == "compat" && v["container"] != "chunk" {
            continue; // frames: the frame layer's tests
        }
        count += 1;
        let bytes = read(&v);
        let name = v["name"].as_str().unwrap();
        match ChunkHeader::parse(&bytes) {
            Ok(h) => {
                if let Some(f) = header_matches(&v, &h) {
                    failures.push(f);
                }
            }
            Err(e) => failures.push(format!("{name}: header: {e}")),
        }
        match d.decompress(&bytes) {
            Ok(out) => {
                if v["expected"]["content_defined"] != Value::Bool(false) {
                    sha_checked += 1;
                    // The check itself must notice a wrong byte.
                    if !out.is_empty() && v.get("verify").is_none() {
                        let mut bad = out.clone();
                        bad[out.len() / 2] ^= 1;
                        assert!(
                            check(&v, &bad).is_some(),
                            "{name}: check misses a flipped byte"
                        );
                    }
                }
                if let Some(f) = check(&v, &out) {
                    failures.push(f);
                }
            }
            Err(e) => failures.push(format!("{name}: {e}")),
        }
    }
    assert!(count > 250, "only {count} vectors found");
    assert!(
        sha_checked > 240,
        "only {sha_checked} vectors compared by content"
    );
    eprintln!("{count} vectors decoded, {sha_checked} compared by content");
    assert!(
        failures.is_empty(),
        "{} of {count} vectors fail:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
