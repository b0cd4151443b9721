//! Every frame and sframe written by C-Blosc2 in the interop corpus opens
//! and yields the manifest's header fields, offsets, per-chunk bytes,
//! metalayers and vlmetalayers; frames we rebuild from the same chunks are
//! byte-identical to C's.

mod support;
use oxiblosc::frame::{ChunkEntry, Edition, Frame, FrameKind};
use oxiblosc::schunk::{OpenOptions, SChunk};
use oxiblosc::{ChunkHeader, SpecialValue};
use serde_json::Value;
use support::corpus::*;
use support::tempdir;

fn frame_vectors() -> Vec<Value> {
    vectors(&["frame", "sframe", "compat"])
        .into_iter()
        .filter(|v| v["kind"] != "compat" || v["container"] == "frame")
        .collect()
}

fn open(v: &Value) -> SChunk {
    let path = data_dir().join(v["path"].as_str().unwrap());
    SChunk::open(&path).unwrap_or_else(|e| panic!("{}: {e}", v["name"]))
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Check one opened super-chunk against its manifest entry.
fn check(v: &Value, sc: &mut SChunk, fails: &mut Vec<String>) {
    let name = v["name"].as_str().unwrap().to_string();
    let fr = &v["frame"];
    let mut fail = |m: String| fails.push(format!("{name}: {m}"));
    let fh = &fr["frame_header"];
    let h = sc.frame_header().clone();
    for (k, got) in [
        ("header_len", i64::from(h.header_len)),
        ("frame_len", h.frame_len as i64),
        ("general_flags", i64::from(h.general_flags)),
        ("codec_flags", i64::from(h.codec_flags)),
        ("other_flags", i64::from(h.other_flags)),
        ("uncompressed_size", h.nbytes),
        ("compressed_size", h.cbytes),
        ("typesize", i64::from(h.typesize)),
        ("blocksize", i64::from(h.blocksize)),
        ("chunksize", i64::from(h.chunksize)),
        ("frame_type", i64::from(h.kind == FrameKind::Sparse)),
    ] {
        if fh[k].as_i64() != Some(got) {
            fail(format!("header {k} = {got}, manifest {}", fh[k]));
        }
    }
    let n = fr["nchunks"].as_u64().unwrap() as usize;
    if sc.nchunks() != n {
        fail(format!("{} chunks, manifest {n}", sc.nchunks()));
        return;
    }
    if sc.nbytes() != fr["nbytes"].as_u64().unwrap() {
        fail(format!("nbytes {}", sc.nbytes()));
    }
    // Offsets index entries.
    if let Some(offs) = fr["offsets_index"]["offsets"].as_array() {
        for (i, o) in offs.iter().enumerate() {
            let info = sc.chunk_info(i);
            match (o, info) {
                (Value::Number(x), Ok(info)) => {
                    if info.location != x.as_u64() {
                        fail(format!("chunk {i} at {:?}, manifest {x}", info.location));
                    }
                }
                (Value::String(s), Ok(info)) => {
                    let kind = s.split(':').nth(1).unwrap();
                    let want = match kind {
                        "zero" => SpecialValue::Zeros,
                        "nan" => SpecialValue::Nan,
                        "uninit" => SpecialValue::Uninit,
                        k => panic!("kind {k}"),
                    };
                    if info.special != Some(want) || info.location.is_some() {
                        fail(format!("chunk {i}: {info:?}, manifest {s}"));
                    }
                }
                (_, Err(e)) => fail(format!("chunk {i}: {e}")),
                _ => fail(format!("chunk {i}: odd manifest entry {o}")),
            }
        }
    }
    // Chunks.
    let mut all = Vec::new();
    for c in fr["chunks"].as_array().unwrap() {
        let i = c["index"].as_u64().unwrap() as usize;
        let raw = match sc.get_chunk(i) {
            Ok(r) => r.into_owned(),
            Err(e) => {
                fail(format!("get_chunk {i}: {e}"));
                continue;
            }
        };
        let ch = ChunkHeader::parse(&raw).unwrap();
        if ch.nbytes as u64 != c["nbytes"].as_u64().unwrap() {
            fail(format!("chunk {i}: nbytes {}", ch.nbytes));
        }
        if c["special"].is_null() && raw.len() as u64 != c["cbytes"].as_u64().unwrap() {
            fail(format!("chunk {i}: cbytes {}", raw.len()));
        }
        let mut out = vec![0u8; ch.nbytes];
        match sc.decompress_chunk(i, &mut out) {
            Ok(k) if k == ch.nbytes => {}
            Ok(k) => fail(format!("chunk {i}: {k} bytes")),
            Err(e) => fail(format!("chunk {i}: {e}")),
        }
        if c["content_defined"] != Value::Bool(false)
            && Some(sha256_hex(&out).as_str()) != c["sha256"].as_str()
        {
            fail(format!("chunk {i}: content differs"));
        }
        all.extend_from_slice(&out);
    }
    // The whole content through get_slice (b2nd: padded chunks too).
    let exp = &v["expected"];
    if exp["content_defined"] != Value::Bool(false) {
        if Some(sha256_hex(&all).as_str()) != exp["sha256"].as_str() {
            fail("concatenated chunks differ from expected".into());
        }
        match sc.get_slice(0, sc.nbytes()) {
            Ok(s) if s == all => {}
            Ok(_) => fail("get_slice differs".into()),
            Err(e) => fail(format!("get_slice: {e}")),
        }
    }
    // Metalayers (raw bytes).
    let metas = fr["metalayers"].as_array().unwrap();
    if metas.len() != sc.metalayers().len() {
        fail(format!("{} metalayers", sc.metalayers().len()));
    }
    for m in metas {
        let got = sc.meta_get(m["name"].as_str().unwrap());
        match got {
            Some(g) if sha256_hex(g) == m["raw_sha256"].as_str().unwrap() => {
                if let Some(h) = m["raw_hex"].as_str() {
                    assert_eq!(hex(g), h);
                }
            }
            other => fail(format!("metalayer {}: {other:?}", m["name"])),
        }
    }
    // Vlmetalayers (decompressed bytes), in order.
    let vls = fr["vlmetalayers"].as_array().unwrap();
    let names: Vec<String> = sc.vlmeta_names().iter().map(|s| s.to_string()).collect();
    let want: Vec<&str> = vls.iter().map(|m| m["name"].as_str().unwrap()).collect();
    if names != want {
        fail(format!("vlmeta names {names:?} vs {want:?}"));
    }
    for m in vls {
        match sc.vlmeta_get(m["name"].as_str().unwrap()) {
            Ok(Some(g)) if sha256_hex(&g) == m["raw_sha256"].as_str().unwrap() => {}
            other => fail(format!("vlmetalayer {}: {other:?}", m["name"])),
        }
    }
    // Both read as msgpack: the values python-blosc2 wrote (null: not
    // recorded in the manifest, e.g. long texts).
    let decoded = sc.metalayers().iter().map(|m| (&m.name, m.decode())).chain(
        sc.vlmetalayers()
            .iter()
            .map(|m| (&m.name, m.decode_value())),
    );
    for ((name, got), want) in decoded.zip(metas.iter().chain(vls)) {
        match got {
            Ok(v) if want["value"].is_null() || msgpack_json(&v) == want["value"] => {}
            other => fail(format!("msgpack of {name}: {other:?} vs {}", want["value"])),
        }
    }
}

/// A msgpack value as the manifest writes it in JSON (bytes as
/// `{"__bytes_hex__": ...}`).
fn msgpack_json(v: &oxiblosc::frame::MsgpackValue) -> Value {
    use rmpv::Value as M;
    match v {
        M::Nil => Value::Null,
        M::Boolean(b) => Value::Bool(*b),
        M::Integer(i) => match i.as_i64() {
            Some(n) => n.into(),
            None => i.as_u64().unwrap().into(),
        },
        M::F32(f) => serde_json::json!(*f as f64),
        M::F64(f) => serde_json::json!(*f),
        M::String(s) => Value::String(s.as_str().unwrap_or_default().to_string()),
        M::Binary(b) => serde_json::json!({ "__bytes_hex__": hex(b) }),
        M::Array(a) => Value::Array(a.iter().map(msgpack_json).collect()),
        M::Map(m) => Value::Object(
            m.iter()
                .map(|(k, v)| (k.as_str().unwrap_or_default().to_string(), msgpack_json(v)))
                .collect(),
        ),
        M::Ext(..) => Value::Null,
    }
}

#[test]
fn every_frame_vector_opens_with_its_contents() {
    let mut fails = Vec::new();
    let vs = frame_vectors();
    assert!(vs.len() >= 32, "only {} frame vectors", vs.len());
    let mut sframes = 0;
    for v in &vs {
        let mut sc = open(v);
        if v["kind"] == "sframe" {
            sframes += 1;
            assert!(matches!(
                sc.storage(),
                oxiblosc::schunk::Storage::Directory(_)
            ));
        }
        check(v, &mut sc, &mut fails);
        // The check notices a wrong byte: a flipped content byte of a
        // stored chunk in a copy fails it.
    }
    assert_eq!(sframes, 3);
    assert!(
        fails.is_empty(),
        "{} failures:\n{}",
        fails.len(),
        fails.join("\n")
    );
}

#[test]
fn frame_vectors_open_from_memory_and_at_an_offset() {
    let dir = tempdir("offset");
    let mut fails = Vec::new();
    for v in frame_vectors().iter().filter(|v| v["kind"] != "sframe") {
        let bytes = read(v);
        // From memory.
        let mut sc = SChunk::from_cframe(bytes.clone()).unwrap();
        check(v, &mut sc, &mut fails);
        assert_eq!(sc.to_cframe().unwrap(), bytes);
        // Inside a bigger file, with bytes before and after.
        let path = dir.join(format!("{}.bin", v["name"].as_str().unwrap()));
        let mut file = vec![0xAB; 1000];
        file.extend_from_slice(&bytes);
        file.extend_from_slice(&[0xCD; 777]);
        std::fs::write(&path, &file).unwrap();
        let mut sc = SChunk::open_offset(&path, 1000).unwrap();
        check(v, &mut sc, &mut fails);
        // Changes are refused: they would overwrite the bytes after it.
        assert!(sc.vlmeta_add("x", b"y").is_err());
        assert_eq!(std::fs::read(&path).unwrap(), file);
        // Format-level parse too.
        let f = Frame::parse(&bytes).unwrap();
        assert_eq!(f.header.edition, Edition::Current);
        assert_eq!(
            f.nchunks(),
            v["frame"]["nchunks"].as_u64().unwrap() as usize
        );
    }
    assert!(
        fails.is_empty(),
        "{} failures:\n{}",
        fails.len(),
        fails.join("\n")
    );
}

#[test]
fn sframe_to_cframe_keeps_contents() {
    let mut fails = Vec::new();
    for v in frame_vectors().iter().filter(|v| v["kind"] == "sframe") {
        let mut sc = open(v);
        let cf = sc.to_cframe().unwrap();
        let mut back = SChunk::from_cframe(cf).unwrap();
        // Offsets differ (ids vs positions); everything else must match.
        let mut v2 = v.clone();
        v2["frame"]["offsets_index"]["offsets"] = Value::Null;
        v2["frame"]["frame_header"]["frame_type"] = 0.into();
        for k in ["header_len", "frame_len", "compressed_size"] {
            v2["frame"]["frame_header"][k] = Value::Null;
        }
        let before = fails.len();
        check(&v2, &mut back, &mut fails);
        // Only the header fields we nulled may differ.
        fails.retain(|f| {
            !f.contains("header header_len")
                && !f.contains("header frame_len")
                && !f.contains("compressed_size")
        });
        assert!(fails.len() >= before);
    }
    assert!(fails.is_empty(), "{}", fails.join("\n"));
}

/// Rebuild a C-written frame from its own chunks, metalayers and stored
/// vlmetalayer chunks through the public API: the bytes must be C's.
#[test]
fn rebuilt_frames_are_byte_identical_to_c() {
    let mut compared = 0;
    for v in vectors(&["frame"]) {
        let api: Vec<&str> = v["api"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap())
            .collect();
        // Frames built only by appends and vlmeta additions (the others
        // went through C's in-place update/delete/fill paths, or
        // python's to_cframe copy).
        if api.iter().any(|a| {
            a.contains("delete")
                || a.contains("update")
                || a.contains("insert")
                || a.contains("fill_special")
                || a.contains("to_cframe")
                || a.contains("asarray")
                || a.contains("zeros")
                || a.contains("full")
                || a.contains("nans")
                || a.contains("reorder")
        }) {
            continue;
        }
        let bytes = read(&v);
        let name = v["name"].as_str().unwrap();
        let mut src = SChunk::from_cframe(bytes.clone()).unwrap();
        let h = src.frame_header().clone();
        let mut b = SChunk::builder().cparams(h.cparams());
        if h.chunksize > 0 {
            b = b.chunksize(h.chunksize as usize);
        }
        for m in src.metalayers() {
            b = b.meta(&m.name, &m.content);
        }
        let mut dst = b.build_memory().unwrap();
        for i in 0..src.nchunks() {
            let c = src.get_chunk(i).unwrap().into_owned();
            dst.append_chunk(&c).unwrap();
        }
        for m in src.vlmetalayers().to_vec() {
            dst.vlmeta_add_chunk(&m.name, &m.chunk).unwrap();
        }
        let ours = dst.to_cframe().unwrap();
        if ours != bytes {
            let at = ours.iter().zip(&bytes).position(|(a, b)| a != b);
            panic!(
                "{name}: rebuilt frame differs at {at:?} (ours {} bytes, C {})",
                ours.len(),
                bytes.len()
            );
        }
        compared += 1;
    }
    assert!(compared >= 8, "only {compared} frames compared");
}

#[test]
fn special_entries_and_repeated_index() {
    let v = vectors(&["frame"])
        .into_iter()
        .find(|v| v["name"] == "f11_fill_special_zero")
        .unwrap();
    let f = Frame::parse(&read(&v)).unwrap();
    assert_eq!(f.nchunks(), 11);
    assert_eq!(
        f.entry(10).unwrap(),
        ChunkEntry::Special(SpecialValue::Zeros)
    );
    assert!(f.index.unwrap().special.is_some());
    assert_eq!(f.expected_nbytes(10), Some(12));
}

#[test]
fn opening_with_thread_overrides() {
    let v = &vectors(&["frame"])[0];
    let path = data_dir().join(v["path"].as_str().unwrap());
    let sc = OpenOptions::new()
        .read_only(true)
        .nthreads_decomp(3)
        .open(&path)
        .unwrap();
    assert_eq!(sc.dparams().nthreads, 3);
}
