//! Frames nobody has seen: `tests/support/heldout_frames.py` has the real
//! C-Blosc2 (python-blosc2) write a fresh set of contiguous frames, sparse
//! frames and serialized in-memory frames from a seed, with random codecs,
//! filters, typesizes, thread counts, dictionaries, ragged last chunks,
//! metalayers, vlmetalayers and random changes (insert, update, delete,
//! append, vlmeta updates and deletes), then reads each back with C and
//! records what C sees. We must open every one and see the same.
//!
//! The seed is fixed so a failure can be reproduced; set
//! `OXIBLOSC_HELDOUT_SEED` (and `OXIBLOSC_HELDOUT_COUNT`) to explore others.

mod support;

use std::fs;
use std::path::PathBuf;

use oxiblosc::schunk::SChunk;
use serde_json::Value;
use sha2::{Digest, Sha256};

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

#[test]
fn heldout_c_frames_open_with_the_contents_c_reads() {
    let seed = env_or("OXIBLOSC_HELDOUT_SEED", 20_261_122);
    let count = env_or("OXIBLOSC_HELDOUT_COUNT", 24);
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("target")
        .join(format!("heldout-frames-{seed}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    let dir_arg = dir.to_str().expect("a UTF-8 target path");
    if let Err(e) = support::cblosc2::run_script(
        "heldout_frames.py",
        &[dir_arg, &seed.to_string(), &count.to_string()],
    ) {
        panic!("heldout_frames.py failed:\n{e}");
    }
    let manifest: Value =
        serde_json::from_slice(&fs::read(dir.join("manifest.json")).unwrap()).unwrap();
    let vectors = manifest["vectors"].as_array().unwrap();
    assert_eq!(vectors.len() as u64, count, "generator made too few frames");
    let mut chunks_checked = 0;
    let mut kinds = std::collections::BTreeSet::new();
    for v in vectors {
        let name = v["name"].as_str().unwrap();
        let path = dir.join(v["path"].as_str().unwrap());
        kinds.insert(v["kind"].as_str().unwrap().to_string());
        let f = &v["frame"];
        let mut sc = SChunk::open(&path).unwrap_or_else(|e| panic!("{name}: open: {e}"));
        assert_eq!(
            sc.nchunks() as u64,
            f["nchunks"].as_u64().unwrap(),
            "{name}"
        );
        assert_eq!(sc.nbytes(), f["nbytes"].as_u64().unwrap(), "{name}: nbytes");
        assert_eq!(
            sc.typesize() as u64,
            f["typesize"].as_u64().unwrap(),
            "{name}"
        );
        assert_eq!(
            sc.chunksize().unwrap_or(0) as u64,
            f["chunksize"].as_u64().unwrap(),
            "{name}: chunksize"
        );
        for c in f["chunks"].as_array().unwrap() {
            let i = c["index"].as_u64().unwrap() as usize;
            let out = sc
                .decompress_chunk_vec(i)
                .unwrap_or_else(|e| panic!("{name}: chunk {i}: {e}"));
            assert_eq!(
                out.len() as u64,
                c["nbytes"].as_u64().unwrap(),
                "{name}/{i}"
            );
            assert_eq!(
                hex(&Sha256::digest(&out)),
                c["sha256"].as_str().unwrap(),
                "{name}: chunk {i} content"
            );
            chunks_checked += 1;
        }
        let metas = f["metalayers"].as_array().unwrap();
        assert_eq!(sc.metalayers().len(), metas.len(), "{name}: metalayers");
        for m in metas {
            let mname = m["name"].as_str().unwrap();
            let got = sc
                .meta_get(mname)
                .unwrap_or_else(|| panic!("{name}: metalayer {mname} missing"));
            assert_eq!(hex(got), m["raw_hex"].as_str().unwrap(), "{name}: {mname}");
        }
        let vlmetas = f["vlmetalayers"].as_array().unwrap();
        assert_eq!(
            sc.vlmeta_names().len(),
            vlmetas.len(),
            "{name}: vlmetalayers"
        );
        for m in vlmetas {
            let mname = m["name"].as_str().unwrap();
            let got = sc
                .vlmeta_get(mname)
                .unwrap_or_else(|e| panic!("{name}: vlmeta {mname}: {e}"))
                .unwrap_or_else(|| panic!("{name}: vlmetalayer {mname} missing"));
            assert_eq!(hex(&got), m["raw_hex"].as_str().unwrap(), "{name}: {mname}");
        }
    }
    assert!(
        chunks_checked > 2 * count,
        "too few chunks: {chunks_checked}"
    );
    assert!(
        kinds.contains("frame") && kinds.contains("sframe"),
        "{kinds:?}"
    );
    eprintln!(
        "{} held-out frames ({chunks_checked} chunks) from seed {seed}; {} parameter sets \
         C-Blosc2 itself could not write or read back were replaced",
        vectors.len(),
        manifest["c_failures"].as_array().map_or(0, |f| f.len())
    );
    let _ = fs::remove_dir_all(&dir);
}
