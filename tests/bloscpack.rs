//! Bloscpack (`.blp`): the vectors bloscpack 0.16.0 wrote decode to their
//! data; a file built byte by byte from the spec's field table parses;
//! round trips for every option; appends and metadata rewrites; hostile
//! input (truncations, bit flips, absurd header fields) ends in the right
//! data or an error naming the section or chunk, never a panic or a big
//! allocation; and interop with the real bloscpack 0.16.0 both ways.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use oxiblosc::bloscpack::{
    self, Checksum, Decoder, Encoder, Header, MetaCodec, MetadataOptions, Options, Reader,
};
use oxiblosc::{CParams, ChunkFormat, Codec, Error, Filter};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

mod support;
use support::counting;
use support::{data, repo};

#[global_allocator]
static GLOBAL: counting::Counting = counting::Counting;

fn manifest_entries() -> Vec<Value> {
    let m: Value =
        serde_json::from_slice(&std::fs::read(repo().join("tests/data/manifest.json")).unwrap())
            .unwrap();
    m["vectors"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|v| v["path"].as_str().unwrap().starts_with("bloscpack/"))
        .cloned()
        .collect()
}

fn sha256_hex(d: &[u8]) -> String {
    Sha256::digest(d)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Gives its bytes in pieces of 1 to 13 bytes, as a pipe might.
struct Dribble<'a> {
    src: &'a [u8],
    turn: usize,
}

impl std::io::Read for Dribble<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.turn += 1;
        let n = (1 + self.turn * 5 % 13).min(buf.len()).min(self.src.len());
        buf[..n].copy_from_slice(&self.src[..n]);
        self.src = &self.src[n..];
        Ok(n)
    }
}

/// `blp` decoded by the streaming `Decoder` from a reader that gives a few
/// bytes at a time, into a sink through `io::copy` (so that the largest
/// allocation is the decoder's own).
fn stream_unpack(blp: &[u8]) -> Result<Vec<u8>, String> {
    let mut dec = Decoder::new(Dribble { src: blp, turn: 0 }).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    std::io::copy(&mut dec, &mut out).map_err(|e| e.to_string())?;
    Ok(out)
}

fn vector(name: &str) -> (Vec<u8>, Value) {
    let v = manifest_entries()
        .into_iter()
        .find(|v| v["name"] == name)
        .unwrap();
    let blp = std::fs::read(repo().join("tests/data").join(v["path"].as_str().unwrap())).unwrap();
    (blp, v)
}

/// Deterministic test data: a noisy ramp that compresses some.

#[test]
fn vectors_decode_to_their_data() {
    let entries = manifest_entries();
    assert_eq!(entries.len(), 17);
    for v in &entries {
        let name = v["name"].as_str().unwrap();
        let blp =
            std::fs::read(repo().join("tests/data").join(v["path"].as_str().unwrap())).unwrap();
        let r = Reader::new(&blp[..]).unwrap_or_else(|e| panic!("{name}: {e}"));
        let out = r.decompress_all().unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            out.len() as u64,
            v["expected"]["nbytes"].as_u64().unwrap(),
            "{name}"
        );
        assert_eq!(sha256_hex(&out), v["expected"]["sha256"], "{name}");
        if let Some(f) = v["expected"]["file"].as_str() {
            assert_eq!(
                out,
                std::fs::read(repo().join("tests/data").join(f)).unwrap(),
                "{name}"
            );
        }
        let want = &v["bloscpack"]["header"];
        let h = r.header();
        assert_eq!(want["format_version"], 3);
        assert_eq!(want["offsets"], h.offsets, "{name}");
        assert_eq!(want["metadata"], h.metadata, "{name}");
        assert_eq!(want["checksum"], h.checksum.name(), "{name}");
        assert_eq!(want["typesize"], h.typesize, "{name}");
        assert_eq!(want["chunk_size"], h.chunk_size.unwrap(), "{name}");
        assert_eq!(want["last_chunk"], h.last_chunk.unwrap(), "{name}");
        assert_eq!(want["nchunks"], h.nchunks.unwrap(), "{name}");
        assert_eq!(want["max_app_chunks"], h.max_app_chunks, "{name}");
        if h.offsets {
            let offs: Vec<Value> = r
                .offsets()
                .unwrap()
                .iter()
                .map(|o| json!(o.unwrap()))
                .collect();
            assert_eq!(v["bloscpack"]["offsets"], json!(offs), "{name}");
        }
        assert_eq!(
            r.metadata().cloned().unwrap_or(Value::Null),
            v["bloscpack"]["metadata"],
            "{name}"
        );
        if let Some(mh) = r.metadata_header() {
            let w = &v["bloscpack"]["metadata_header"];
            assert_eq!(w["meta_size"], mh.meta_size, "{name}");
            assert_eq!(w["max_meta_size"], mh.max_meta_size, "{name}");
            assert_eq!(w["meta_comp_size"], mh.meta_comp_size, "{name}");
            assert_eq!(w["meta_checksum"], mh.checksum.name(), "{name}");
            assert_eq!(w["meta_level"], mh.level, "{name}");
            let codec = if mh.codec == MetaCodec::Zlib {
                "zlib"
            } else {
                "None"
            };
            assert_eq!(w["meta_codec"], codec, "{name}");
        }
        assert_eq!(bloscpack::unpack(&blp).unwrap(), out, "{name}");
        // Streamed: the same data, header, metadata and offsets.
        assert!(stream_unpack(&blp).unwrap() == out, "{name}: streamed");
        let dec = Decoder::new(&blp[..]).unwrap();
        assert_eq!(dec.header(), r.header(), "{name}");
        assert_eq!(dec.metadata(), r.metadata(), "{name}");
        assert_eq!(dec.metadata_header(), r.metadata_header(), "{name}");
        assert_eq!(dec.offsets(), r.offsets(), "{name}");
    }
}

/// zlib's Adler-32, written out here so the known-answer file does not
/// lean on the crate's own checksum code.
fn adler32(d: &[u8]) -> u32 {
    let (mut a, mut b) = (1u32, 0u32);
    for &x in d {
        a = (a + u32::from(x)) % 65521;
        b = (b + a) % 65521;
    }
    (b << 16) | a
}

/// CONTAINER-NOTES §7.6: `pack_ndarray_to_file(arange(6, int16),
/// chunk_size=8, checksum='crc32', max_app_chunks=1, max_meta_size=64)`,
/// with the metadata stored raw (61 bytes, as long as the zlib form, so
/// every position is the dump's).
fn spec_file() -> Vec<u8> {
    let meta = br#"{"dtype":"'<i2'","shape":[6],"order":"C","container":"numpy"}"#;
    assert_eq!(meta.len(), 61);
    let mut f = Vec::new();
    f.extend_from_slice(b"blpk"); // magic
    f.extend_from_slice(&[3, 0x03, 2, 2]); // version, offsets+metadata, crc32, typesize 2
    f.extend_from_slice(&8i32.to_le_bytes()); // chunk_size
    f.extend_from_slice(&4i32.to_le_bytes()); // last_chunk
    f.extend_from_slice(&2i64.to_le_bytes()); // nchunks
    f.extend_from_slice(&1i64.to_le_bytes()); // max_app_chunks
    assert_eq!(f.len(), 0x20);
    f.extend_from_slice(b"JSON\0\0\0\0");
    f.extend_from_slice(&[0, 1, 0, 6]); // options, adler32, codec none, level 6
    f.extend_from_slice(&61u32.to_le_bytes()); // meta_size
    f.extend_from_slice(&64u32.to_le_bytes()); // max_meta_size
    f.extend_from_slice(&61u32.to_le_bytes()); // meta_comp_size
    f.extend_from_slice(&[0; 8]); // user codec
    f.extend_from_slice(meta);
    f.extend_from_slice(&[0; 3]); // prealloc
    f.extend_from_slice(&adler32(meta).to_le_bytes());
    assert_eq!(f.len(), 0x84);
    f.extend_from_slice(&0x9ci64.to_le_bytes());
    f.extend_from_slice(&0xb8i64.to_le_bytes());
    f.extend_from_slice(&(-1i64).to_le_bytes());
    assert_eq!(f.len(), 0x9c);
    f.extend_from_slice(&[2, 1, 0x13, 2, 8, 0, 0, 0, 8, 0, 0, 0, 0x18, 0, 0, 0]);
    f.extend_from_slice(&[0, 0, 1, 0, 2, 0, 3, 0]);
    f.extend_from_slice(&[0x95, 0x90, 0x66, 0x3b]); // crc32 of chunk 0, from the dump
    assert_eq!(f.len(), 0xb8);
    f.extend_from_slice(&[
        2, 1, 0x13, 2, 4, 0, 0, 0, 4, 0, 0, 0, 0x14, 0, 0, 0, 4, 0, 5, 0,
    ]);
    f.extend_from_slice(&[0xdf, 0x57, 0x33, 0xdf]); // crc32 of chunk 1
    assert_eq!(f.len(), 208);
    f
}

fn arange6_i16() -> Vec<u8> {
    (0i16..6).flat_map(|v| v.to_le_bytes()).collect()
}

#[test]
fn known_answer_file_from_the_field_table() {
    let f = spec_file();
    let r = Reader::new(&f[..]).unwrap();
    assert_eq!(
        *r.header(),
        Header {
            offsets: true,
            metadata: true,
            checksum: Checksum::Crc32,
            typesize: 2,
            chunk_size: Some(8),
            last_chunk: Some(4),
            nchunks: Some(2),
            max_app_chunks: 1,
        }
    );
    let mh = r.metadata_header().unwrap();
    assert_eq!(
        (mh.meta_size, mh.max_meta_size, mh.meta_comp_size),
        (61, 64, 61)
    );
    assert_eq!(
        (mh.checksum, mh.codec, mh.level),
        (Checksum::Adler32, MetaCodec::None, 6)
    );
    assert_eq!(
        r.metadata().unwrap(),
        &json!({"dtype": "'<i2'", "shape": [6], "order": "C", "container": "numpy"})
    );
    assert_eq!(r.offsets().unwrap(), &[Some(0x9c), Some(0xb8)]);
    assert_eq!(r.offsets_position(), 0x84);
    assert_eq!(r.chunk_range(1), Some(0xb8..0xcc));
    assert_eq!(r.decompress_chunk(1).unwrap(), [4, 0, 5, 0]);
    assert_eq!(r.decompress_all().unwrap(), arange6_i16());
    assert_eq!(Header::parse(&f).unwrap().to_bytes().unwrap(), f[..32]);

    // Our writer gives the same bytes for the same request (key order
    // aside: serde_json sorts keys, so compare with sorted-key metadata).
    let meta = json!({"dtype": "'<i2'", "shape": [6], "order": "C", "container": "numpy"});
    let opts = Options::default()
        .typesize(2)
        .chunk_size(8)
        .checksum(Checksum::Crc32)
        .max_app_chunks(1)
        .metadata(meta.clone())
        .metadata_options(
            MetadataOptions::default()
                .codec(MetaCodec::None)
                .max_meta_size(64),
        );
    let ours = bloscpack::pack(&arange6_i16(), &opts).unwrap();
    assert_eq!(ours.len(), f.len());
    assert_eq!(ours[..0x40], f[..0x40], "headers");
    assert_eq!(ours[0x84..], f[0x84..], "offsets, chunks and digests");
    assert_eq!(Reader::new(&ours[..]).unwrap().metadata(), Some(&meta));
}

fn all_option_files() -> Vec<(String, Vec<u8>, Vec<u8>, Options)> {
    let mut out = Vec::new();
    for cs in Checksum::ALL {
        for offsets in [true, false] {
            for meta in [false, true] {
                for (len, chunk) in [(0usize, 1 << 20), (1, 1 << 20), (100_003, 30_000)] {
                    let mut o = Options::default()
                        .checksum(cs)
                        .offsets(offsets)
                        .chunk_size(chunk);
                    if meta {
                        o = o.metadata(json!({"k": len, "cs": cs.name(), "list": [1, 2, 3]}));
                    }
                    let d = data(len, len as u32 ^ u32::from(cs.id()));
                    let blp = bloscpack::pack(&d, &o).unwrap();
                    out.push((
                        format!("{cs} offsets={offsets} meta={meta} len={len}"),
                        d,
                        blp,
                        o,
                    ));
                }
            }
        }
    }
    out
}

/// The streaming `Encoder` writes `pack`'s bytes for every option set,
/// whether fed by `write` in pieces of 1 to 13 bytes or by `copy_from`
/// (the pipeline); and past its 8 MiB of memory (a 24 MiB input of poorly
/// compressible bytes, CRC-32 digests), where the chunks wait in a file.
#[test]
fn the_encoder_writes_packs_bytes() {
    use std::io::Write;
    for (name, d, blp, o) in all_option_files() {
        let mut enc = Encoder::new(Vec::new(), &o).unwrap();
        let mut at = 0;
        let mut turn = 0;
        while at < d.len() {
            turn += 1;
            let n = (1 + turn * 5 % 13).min(d.len() - at);
            enc.write_all(&d[at..at + n]).unwrap();
            at += n;
        }
        assert!(enc.finish().unwrap() == blp, "{name}: write");
        let mut enc = Encoder::new(Vec::new(), &o).unwrap();
        assert_eq!(enc.copy_from(&d[..]).unwrap(), d.len() as u64);
        assert!(enc.finish().unwrap() == blp, "{name}: copy_from");
    }
    let d = data(24 << 20, 9);
    let o = Options::default()
        .checksum(Checksum::Crc32)
        .cparams(CParams::default().codec(Codec::Lz4).typesize(4));
    let blp = bloscpack::pack(&d, &o).unwrap();
    assert!(
        blp.len() > 9 << 20,
        "{} bytes fit the spool's memory",
        blp.len()
    );
    let spool = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("blp-spool-{}", std::process::id()));
    std::fs::create_dir_all(&spool).unwrap();
    let mut enc = Encoder::new(Vec::new(), &o).unwrap();
    enc.spool_dir(&spool);
    enc.copy_from(&d[..]).unwrap();
    assert_eq!(enc.nchunks(), 24);
    assert!(enc.finish().unwrap() == blp, "spooled to a file");
    // The spool's file is gone (unlinked at once, or removed on drop).
    assert_eq!(std::fs::read_dir(&spool).unwrap().count(), 0);
    let _ = std::fs::remove_dir_all(&spool);
    // Bad options are refused as pack refuses them.
    for bad in [
        Options::default().chunk_size(0),
        Options::default().cparams(CParams::default().typesize(256)),
        Options::default()
            .metadata(json!({"long": "x".repeat(300)}))
            .metadata_options(
                MetadataOptions::default()
                    .codec(MetaCodec::None)
                    .max_meta_size(64),
            ),
    ] {
        let e = Encoder::new(Vec::new(), &bad).unwrap_err();
        assert!(matches!(e, Error::InvalidParam(_)), "{e}");
        assert!(bloscpack::pack(&[1, 2, 3], &bad).is_err());
    }
}

#[test]
fn roundtrip_every_option() {
    for (name, d, blp, o) in all_option_files() {
        let r = Reader::new(&blp[..]).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(r.decompress_all().unwrap(), d, "{name}");
        let h = r.header();
        assert_eq!(h.checksum, o.checksum, "{name}");
        assert_eq!(h.typesize, 8);
        let n = r.nchunks() as u64;
        assert_eq!(h.nchunks, Some(n));
        assert_eq!(
            n,
            if d.len() > o.chunk_size {
                d.len().div_ceil(o.chunk_size) as u64
            } else {
                1
            }
        );
        assert_eq!(
            h.max_app_chunks,
            if o.offsets { 10 * n } else { 0 },
            "{name}"
        );
        for i in 0..r.nchunks() {
            let c = r.chunk(i).unwrap();
            assert_eq!(c[0], 2, "{name}: Blosc1 chunks");
        }
        assert_eq!(r.metadata(), o.metadata.as_ref(), "{name}");
    }
    // Other codecs and filters.
    let d = data(300_000, 9);
    for p in [
        CParams::default().codec(Codec::Lz4).typesize(4),
        CParams::default()
            .codec(Codec::Zstd)
            .clevel(3)
            .typesize(2)
            .filters(&[Filter::BitShuffle]),
        CParams::default()
            .codec(Codec::Zlib)
            .typesize(1)
            .filters(&[]),
        CParams::default()
            .codec(Codec::Lz4Hc)
            .clevel(9)
            .format(ChunkFormat::Blosc2),
    ] {
        let blp = bloscpack::pack(
            &d,
            &Options::default().cparams(p.clone()).chunk_size(65_536),
        )
        .unwrap();
        assert_eq!(bloscpack::unpack(&blp).unwrap(), d, "{p:?}");
    }
    // Bad options.
    assert!(bloscpack::pack(&d, &Options::default().chunk_size(0)).is_err());
    assert!(bloscpack::pack(&d, &Options::default().typesize(256)).is_err());
    let tiny = Options::default()
        .metadata(json!({"a": "b".repeat(100)}))
        .metadata_options(MetadataOptions::default().max_meta_size(4));
    assert!(matches!(
        bloscpack::pack(&d, &tiny),
        Err(Error::InvalidParam(_))
    ));
}

#[test]
fn files_and_writers() {
    let dir = std::env::temp_dir().join(format!("oxiblosc-blp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("a.blp");
    let d = data(250_000, 3);
    let o = Options::default()
        .chunk_size(100_000)
        .metadata(json!({"x": 1}));
    bloscpack::pack_to_file(&d, &path, &o).unwrap();
    let mut w = Vec::new();
    bloscpack::pack_to_writer(&d, &mut w, &o).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), w);
    assert_eq!(bloscpack::unpack_file(&path).unwrap(), d);
    assert_eq!(bloscpack::append_file(&path, &d, None).unwrap(), 2);
    let mut both = d.clone();
    both.extend_from_slice(&d);
    assert_eq!(bloscpack::unpack_file(&path).unwrap(), both);
    bloscpack::rewrite_metadata_file(
        &path,
        &json!({"x": 2, "y": [true]}),
        &MetadataOptions::default(),
    )
    .unwrap();
    let r = Reader::open(&path).unwrap();
    assert_eq!(r.metadata(), Some(&json!({"x": 2, "y": [true]})));
    assert_eq!(r.decompress_all().unwrap(), both);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn append_fills_the_last_chunk_then_uses_reserved_slots() {
    let d = data(25_000, 5);
    let o = Options::default()
        .chunk_size(10_000)
        .max_app_chunks(3)
        .checksum(Checksum::Sha1);
    let mut blp = bloscpack::pack(&d, &o).unwrap();
    let mut all = d.clone();
    // Fits in the last chunk (5,000 free): no new chunk.
    let a = data(4_000, 6);
    assert_eq!(bloscpack::append(&mut blp, &a, None).unwrap(), 0);
    all.extend_from_slice(&a);
    let r = Reader::new(&blp[..]).unwrap();
    assert_eq!(
        (
            r.nchunks(),
            r.header().last_chunk,
            r.header().max_app_chunks
        ),
        (3, Some(9_000), 3)
    );
    assert_eq!(r.decompress_all().unwrap(), all);
    // 1,000 fill the last chunk, 25,000 make three more: all the slots.
    let b = data(26_000, 7);
    assert_eq!(bloscpack::append(&mut blp, &b, None).unwrap(), 3);
    all.extend_from_slice(&b);
    let r = Reader::new(&blp[..]).unwrap();
    assert_eq!(
        (
            r.nchunks(),
            r.header().last_chunk,
            r.header().max_app_chunks
        ),
        (6, Some(5_000), 0)
    );
    assert_eq!(r.offsets().unwrap().len(), 6);
    assert!(r.offsets().unwrap().iter().all(Option::is_some));
    assert_eq!(r.decompress_all().unwrap(), all);
    // No slot left: an error, and the file is unchanged.
    let before = blp.clone();
    let e = bloscpack::append(&mut blp, &data(6_000, 8), None).unwrap_err();
    assert!(e.to_string().contains("offset slots"), "{e}");
    assert_eq!(blp, before);
    // Still room in the last chunk.
    assert_eq!(bloscpack::append(&mut blp, &[1; 5_000], None).unwrap(), 0);
    // No offsets: no append.
    let mut no = bloscpack::pack(&d, &Options::default().offsets(false)).unwrap();
    assert!(bloscpack::append(&mut no, &d, None).is_err());
}

#[test]
fn rewrite_metadata_within_the_room() {
    let d = data(1000, 1);
    let o = Options::default()
        .metadata(json!({"a": 1}))
        .metadata_options(MetadataOptions::default().max_meta_size(200));
    let mut blp = bloscpack::pack(&d, &o).unwrap();
    let len = blp.len();
    let big = json!({"name": "x".repeat(190), "v": [1, 2, 3]});
    bloscpack::rewrite_metadata(&mut blp, &big, &MetadataOptions::default()).unwrap();
    assert_eq!(blp.len(), len);
    let r = Reader::new(&blp[..]).unwrap();
    assert_eq!(r.metadata(), Some(&big));
    assert_eq!(r.metadata_header().unwrap().codec, MetaCodec::Zlib);
    assert_eq!(r.decompress_all().unwrap(), d);
    let raw = MetadataOptions::default().codec(MetaCodec::None);
    let e = bloscpack::rewrite_metadata(&mut blp, &big, &raw).unwrap_err();
    assert!(matches!(e, Error::InvalidParam(_)), "{e}");
    let mut plain = bloscpack::pack(&d, &Options::default()).unwrap();
    assert!(bloscpack::rewrite_metadata(&mut plain, &big, &raw).is_err());
}

/// Decode `blp`; the outcome must be the expected data or an error that
/// names bloscpack; `exact` says whether an undetected change is
/// impossible (the file has checksums).
fn check_hostile(what: &str, blp: &[u8], want: &[u8], exact: bool) {
    let whole = bloscpack::unpack(blp);
    // The streaming decoder takes the same files and refuses the same ones,
    // with the same data when it takes one.
    match (&whole, stream_unpack(blp)) {
        (Ok(a), Ok(b)) => assert!(*a == b, "{what}: streamed other data"),
        (Err(_), Err(_)) => {}
        (Ok(_), Err(e)) => panic!("{what}: only the stream failed: {e}"),
        (Err(e), Ok(_)) => panic!("{what}: only the stream took it (unpack: {e})"),
    }
    match whole {
        Ok(out) => {
            if exact {
                assert!(out == want, "{what}: Ok with wrong data");
            }
        }
        Err(e) => {
            let msg = e.to_string();
            assert!(
                msg.contains("bloscpack"),
                "{what}: error without context: {msg}"
            );
        }
    }
}

fn hostile_files() -> Vec<(String, Vec<u8>, Vec<u8>, bool)> {
    let mut files = Vec::new();
    for name in [
        "p04_checksum_md5",
        "p05_checksum_sha1",
        "p08_checksum_sha512",
        "p13_exact_multiple",
        "p15_ndarray_i2_lz4hc",
        "p16_small_1byte",
    ] {
        let (blp, v) = vector(name);
        let want = bloscpack::unpack(&blp).unwrap();
        assert_eq!(sha256_hex(&want), v["expected"]["sha256"]);
        let exact = Reader::new(&blp[..]).unwrap().header().checksum != Checksum::None;
        files.push((name.to_string(), blp, want, exact));
    }
    // Our own: several chunks, zlib metadata, crc32 and no checksum.
    for cs in [Checksum::Crc32, Checksum::None] {
        let d = data(3_000, 11);
        let o = Options::default()
            .chunk_size(1_000)
            .checksum(cs)
            .typesize(4)
            .metadata(json!({"dtype": "<i4", "shape": [750]}));
        files.push((
            format!("own {cs}"),
            bloscpack::pack(&d, &o).unwrap(),
            d,
            cs != Checksum::None,
        ));
    }
    files
}

#[test]
fn hostile_truncations_never_panic() {
    for (name, blp, want, _) in hostile_files() {
        for n in 0..blp.len() {
            // A file cut anywhere has lost its last digest or chunk (or more).
            let r = bloscpack::unpack(&blp[..n]);
            assert!(
                stream_unpack(&blp[..n]).is_err(),
                "{name} cut at {n} streamed"
            );
            let e = r.expect_err(&format!("{name} cut at {n} decoded"));
            assert!(
                e.to_string().contains("bloscpack"),
                "{name} cut at {n}: {e}"
            );
        }
        check_hostile(&name, &blp, &want, true);
    }
    // A cut in the chunks names the chunk.
    let (blp, _) = vector("p13_exact_multiple");
    let r = Reader::new(&blp[..]).unwrap();
    let last = r.chunk_range(r.nchunks() - 1).unwrap();
    let e = bloscpack::unpack(&blp[..last.start + 20])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(&format!("bloscpack chunk {}", r.nchunks() - 1)),
        "{e}"
    );
}

#[test]
fn hostile_bit_flips_are_caught() {
    for (name, blp, want, exact) in hostile_files() {
        let mut f = blp.clone();
        for at in 0..f.len() {
            for bit in 0..8 {
                f[at] ^= 1 << bit;
                check_hostile(&format!("{name} byte {at} bit {bit}"), &f, &want, exact);
                f[at] ^= 1 << bit;
            }
        }
    }
    // A flipped chunk byte under a checksum: the error names the chunk.
    let (mut blp, _) = vector("p13_exact_multiple");
    let r = Reader::new(&blp[..]).unwrap();
    let c3 = r.chunk_range(3).unwrap();
    blp[c3.start + 20] ^= 0x10;
    let e = bloscpack::unpack(&blp).unwrap_err().to_string();
    assert!(e.contains("bloscpack chunk 3: checksum mismatch"), "{e}");
    // Larger vectors: every byte before the chunks, and a sample after.
    for v in manifest_entries() {
        let name = v["name"].as_str().unwrap();
        let (blp, _) = vector(name);
        let want = bloscpack::unpack(&blp).unwrap();
        let r = Reader::new(&blp[..]).unwrap();
        let exact = r.header().checksum != Checksum::None;
        let first = r.chunk_range(0).unwrap().start;
        let mut f = blp.clone();
        let step = (blp.len() / 97).max(1);
        for at in (0..first).chain((first..blp.len()).step_by(step)) {
            for bit in [0, 3, 7] {
                f[at] ^= 1 << bit;
                check_hostile(&format!("{name} byte {at} bit {bit}"), &f, &want, exact);
                f[at] ^= 1 << bit;
            }
        }
    }
}

fn tiny_header(options: u8, nchunks: i64, max_app: i64) -> Vec<u8> {
    let mut f = b"blpk".to_vec();
    f.extend_from_slice(&[3, options, 1, 8]);
    f.extend_from_slice(&1_048_576i32.to_le_bytes());
    f.extend_from_slice(&100i32.to_le_bytes());
    f.extend_from_slice(&nchunks.to_le_bytes());
    f.extend_from_slice(&max_app.to_le_bytes());
    f
}

#[test]
fn absurd_header_fields_fail_fast_without_big_allocations() {
    let mut cases: Vec<(&str, Vec<u8>)> = vec![
        ("huge nchunks with offsets", tiny_header(1, i64::MAX, 0)),
        ("huge nchunks + max_app", tiny_header(1, 1 << 40, i64::MAX)),
        ("huge max_app_chunks", tiny_header(1, 1, 1 << 60)),
        ("huge nchunks, no offsets", tiny_header(0, i64::MAX, 0)),
        ("nchunks 2^32, no offsets", tiny_header(0, 1 << 32, 0)),
        ("negative nchunks", tiny_header(0, -5, 0)),
        ("unknown nchunks with offsets", tiny_header(1, -1, 0)),
        ("negative max_app", tiny_header(1, 1, -1)),
    ];
    // Metadata sections claiming 4 GiB.
    for (codec, meta_size, max_meta, comp) in [
        (1u8, u32::MAX, u32::MAX, 100u32),
        (1, u32::MAX, 200, 100),
        (0, 100, u32::MAX, 100),
        (1, 1000, u32::MAX, u32::MAX),
    ] {
        let mut f = tiny_header(2, 1, 0);
        f.extend_from_slice(b"JSON\0\0\0\0");
        f.extend_from_slice(&[0, 1, codec, 6]);
        f.extend_from_slice(&meta_size.to_le_bytes());
        f.extend_from_slice(&max_meta.to_le_bytes());
        f.extend_from_slice(&comp.to_le_bytes());
        f.extend_from_slice(&[0; 8 + 200]);
        cases.push(("huge metadata sizes", f));
    }
    // A chunk claiming 2 GiB of compressed bytes.
    let mut f = tiny_header(0, 1, 0);
    f.extend_from_slice(&[
        2, 1, 0x11, 8, 0, 0, 0, 0x40, 0, 0, 1, 0, 0xff, 0xff, 0xff, 0x7f,
    ]);
    f.extend_from_slice(&[0; 64]);
    cases.push(("huge chunk", f));
    for (what, f) in &cases {
        counting::reset_largest();
        let r = bloscpack::unpack(f);
        let largest = counting::largest();
        let e = r.expect_err(what);
        assert!(e.to_string().contains("bloscpack"), "{what}: {e}");
        assert!(largest < 16 << 10, "{what}: allocated {largest} bytes");
        counting::reset_largest();
        let r = stream_unpack(f);
        let largest = counting::largest();
        let e = r.expect_err(what);
        assert!(e.contains("bloscpack"), "{what}, streamed: {e}");
        assert!(
            largest < 16 << 10,
            "{what}, streamed: allocated {largest} bytes"
        );
    }
}

/// `decompress_all` sizes its output once, for every chunk: its largest
/// allocation is the data's size, not a doubling past it (growing chunk by
/// chunk copied the output at each doubling, to 16 MiB here).
/// Appending re-encodes the last chunk with the new bytes: that chunk,
/// decoded into a `Vec` of its exact size, was extended by them, and the
/// `Vec` doubled (a 376-byte file whose last chunk stands for 64 MiB took
/// a 128 MiB allocation to append 8 bytes; the `blp_read` target under a
/// 72 MB malloc limit). The largest allocation is now about the chunk.
#[test]
fn append_to_a_large_last_chunk_does_not_double_it() {
    // Chunks of 8 MiB, the last one of 4 MiB.
    let d = vec![0u8; 12 << 20];
    let opts = Options::default().chunk_size(8 << 20).max_app_chunks(2);
    let mut blp = bloscpack::pack(&d, &opts).unwrap();
    assert!(blp.len() < 1 << 20, "zeros compress: {} bytes", blp.len());
    counting::reset_largest();
    assert_eq!(bloscpack::append(&mut blp, &[7; 8], None).unwrap(), 0);
    let largest = counting::largest();
    assert!(
        largest < (4 << 20) + (1 << 20),
        "appending 8 bytes to a 4 MiB chunk allocated {largest} bytes at once"
    );
    let mut all = d;
    all.extend_from_slice(&[7; 8]);
    assert!(
        bloscpack::unpack(&blp).unwrap() == all,
        "the data comes back"
    );
}

#[test]
fn decompress_all_allocates_its_output_once() {
    let d = data((10 << 20) + 300_000, 9);
    let opts = Options::default()
        .chunk_size(1 << 20)
        .cparams(CParams::default().codec(Codec::Lz4).typesize(4));
    let blp = bloscpack::pack(&d, &opts).unwrap();
    let r = Reader::new(&blp[..]).unwrap();
    counting::reset_largest();
    let out = r.decompress_all().unwrap();
    let largest = counting::largest();
    assert!(out == d, "the data comes back");
    assert_eq!(largest, d.len(), "the largest allocation");
    assert_eq!(out.capacity(), d.len());
}

/// A 64 MiB file streamed holds about one chunk at a time: its largest
/// allocation is under 2 MiB (1 MiB chunks), and the data comes back.
#[test]
fn a_large_file_streams_in_chunk_sized_memory() {
    let d = data(64 << 20, 5);
    let opts = Options::default()
        .chunk_size(1 << 20)
        .checksum(Checksum::Crc32)
        .cparams(CParams::default().codec(Codec::Lz4).typesize(4));
    let blp = bloscpack::pack(&d, &opts).unwrap();
    /// Compares what it is given with `want`, in order.
    struct Compare<'a> {
        want: &'a [u8],
        same: bool,
    }
    impl std::io::Write for Compare<'_> {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            let n = buf.len().min(self.want.len());
            self.same &= n == buf.len() && buf == &self.want[..n];
            self.want = &self.want[n..];
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    counting::reset_largest();
    let mut dec = Decoder::new(&blp[..]).unwrap();
    let mut cmp = Compare {
        want: &d,
        same: true,
    };
    let n = std::io::copy(&mut dec, &mut cmp).unwrap();
    let largest = counting::largest();
    assert_eq!(n, d.len() as u64);
    assert!(cmp.same && cmp.want.is_empty(), "other data");
    assert_eq!(dec.nchunks(), 64);
    assert!(largest < 2 << 20, "allocated {largest} bytes");
}

// ---------------------------------------------------------------- interop

/// Run the bloscpack harness on `jobs`; one result per job.
fn bloscpack_py(jobs: &[Value]) -> Vec<Value> {
    let py = support::pyenv::blosc1();
    let work = scratch("jobs");
    let job_file = work.join(format!("jobs-{:?}.json", std::thread::current().id()));
    std::fs::write(&job_file, serde_json::to_vec(jobs).unwrap()).unwrap();
    let out = py
        .command()
        .arg(repo().join("tests/support/bloscpack_harness.py"))
        .arg(&job_file)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "harness: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    v["results"].as_array().unwrap().clone()
}

fn scratch(what: &str) -> PathBuf {
    let d = repo()
        .join("target")
        .join("bloscpack-tests")
        .join(format!("{what}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn p(path: &Path) -> String {
    path.to_str().unwrap().to_string()
}

#[test]
fn bloscpack_reads_what_we_write() {
    let dir = scratch("ours");
    let mut jobs = vec![json!({"op": "hello"})];
    let mut expect = Vec::new();
    for (k, (name, d, blp, o)) in all_option_files().into_iter().enumerate() {
        let f = dir.join(format!("{k}.blp"));
        std::fs::write(&f, &blp).unwrap();
        let out = dir.join(format!("{k}.out"));
        jobs.push(json!({"op": "unpack", "in": p(&f), "out": p(&out)}));
        expect.push((name, d, out, o.metadata));
    }
    // After appends (one that fills the last chunk, one that adds chunks).
    let d = data(70_000, 21);
    let mut blp = bloscpack::pack(
        &d,
        &Options::default()
            .chunk_size(32_768)
            .checksum(Checksum::Sha384),
    )
    .unwrap();
    bloscpack::append(&mut blp, &data(1_000, 22), None).unwrap();
    bloscpack::append(&mut blp, &data(100_000, 23), None).unwrap();
    let mut all = d.clone();
    all.extend(data(1_000, 22));
    all.extend(data(100_000, 23));
    let f = dir.join("appended.blp");
    std::fs::write(&f, &blp).unwrap();
    let out = dir.join("appended.out");
    jobs.push(json!({"op": "unpack", "in": p(&f), "out": p(&out)}));
    expect.push(("appended".into(), all, out, None));
    // Metadata rewritten; other codecs.
    let mut blp = bloscpack::pack(&d, &Options::default().metadata(json!({"a": 1}))).unwrap();
    bloscpack::rewrite_metadata(&mut blp, &json!({"b": [2, 3]}), &MetadataOptions::default())
        .unwrap();
    let f = dir.join("rewritten.blp");
    std::fs::write(&f, &blp).unwrap();
    let out = dir.join("rewritten.out");
    jobs.push(json!({"op": "unpack", "in": p(&f), "out": p(&out)}));
    expect.push((
        "rewritten".into(),
        d.clone(),
        out,
        Some(json!({"b": [2, 3]})),
    ));
    for (i, c) in [Codec::Lz4, Codec::Lz4Hc, Codec::Zlib, Codec::Zstd]
        .into_iter()
        .enumerate()
    {
        let cp = bloscpack::default_cparams().codec(c).typesize(4);
        let blp = bloscpack::pack(&d, &Options::default().cparams(cp).chunk_size(16_384)).unwrap();
        let f = dir.join(format!("codec{i}.blp"));
        std::fs::write(&f, &blp).unwrap();
        let out = dir.join(format!("codec{i}.out"));
        jobs.push(json!({"op": "unpack", "in": p(&f), "out": p(&out)}));
        expect.push((format!("{c:?}"), d.clone(), out, None));
    }
    let results = bloscpack_py(&jobs);
    assert_eq!(
        results[0],
        json!({"bloscpack": "0.16.0", "blosc": "1.11.4"})
    );
    assert_eq!(results.len(), expect.len() + 1);
    for ((name, d, out, meta), r) in expect.iter().zip(&results[1..]) {
        assert!(r.get("error").is_none(), "{name}: bloscpack says {}", r);
        assert!(
            std::fs::read(out).unwrap() == *d,
            "{name}: bloscpack decodes other bytes"
        );
        assert_eq!(r["metadata"], meta.clone().unwrap_or(Value::Null), "{name}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn we_read_what_bloscpack_writes() {
    let dir = scratch("theirs");
    let mut jobs = Vec::new();
    let mut expect = Vec::new();
    let mut add = |k: usize, d: Vec<u8>, mut job: Value| {
        let raw = dir.join(format!("{k}.raw"));
        std::fs::write(&raw, &d).unwrap();
        let f = dir.join(format!("{k}.blp"));
        job["op"] = json!("pack");
        job["in"] = json!(p(&raw));
        job["out"] = json!(p(&f));
        jobs.push(job.clone());
        expect.push((job, d, f));
    };
    let mut k = 0;
    for cs in Checksum::ALL {
        for (len, chunk) in [
            (0usize, 1 << 20),
            (5, 1 << 20),
            (123_457, 10_000),
            (65_536, 16_384),
        ] {
            add(
                k,
                data(len, k as u32),
                json!({"chunk_size": chunk, "bloscpack": {"checksum": cs.name()}}),
            );
            k += 1;
        }
    }
    for (cname, shuffle, typesize) in [
        ("lz4", 1, 4),
        ("zlib", 0, 1),
        ("zstd", 2, 8),
        ("lz4hc", 1, 2),
        ("blosclz", 2, 16),
    ] {
        add(
            k,
            data(200_001, k as u32),
            json!({"chunk_size": 50_000,
            "blosc": {"typesize": typesize, "clevel": 5, "shuffle": shuffle, "cname": cname}}),
        );
        k += 1;
    }
    for (offsets, max_app) in [(false, 0), (true, 0), (true, 3)] {
        add(
            k,
            data(30_000, k as u32),
            json!({"chunk_size": 7_000,
            "bloscpack": {"offsets": offsets, "max_app_chunks": max_app, "checksum": "crc32"}}),
        );
        k += 1;
    }
    for (codec, mcs, max_meta) in [
        ("zlib", "adler32", Value::Null),
        ("None", "sha512", json!(1000)),
        ("zlib", "md5", json!(300)),
    ] {
        let mut ma = json!({"meta_codec": codec, "meta_checksum": mcs});
        if !max_meta.is_null() {
            ma["max_meta_size"] = max_meta;
        }
        add(
            k,
            data(40_000, k as u32),
            json!({"chunk_size": 8_192,
            "metadata": {"dtype": "<f8", "shape": [5000], "nested": {"x": [1, 2.5, "s"]}},
            "metadata_args": ma}),
        );
        k += 1;
    }
    let results = bloscpack_py(&jobs);
    for ((job, d, f), r) in expect.iter().zip(&results) {
        assert!(r.get("error").is_none(), "{job}: bloscpack says {r}");
        let blp = std::fs::read(f).unwrap();
        let rd = Reader::new(&blp[..]).unwrap_or_else(|e| panic!("{job}: {e}"));
        assert!(
            rd.decompress_all().unwrap_or_else(|e| panic!("{job}: {e}")) == *d,
            "{job}"
        );
        assert_eq!(
            rd.metadata().cloned().unwrap_or(Value::Null),
            job["metadata"],
            "{job}"
        );
    }
    // bloscpack appends to our file, we read the result; we append to
    // theirs, bloscpack reads it.
    let d = data(50_000, 99);
    let ours = dir.join("ours.blp");
    bloscpack::pack_to_file(&d, &ours, &Options::default().chunk_size(20_000)).unwrap();
    let extra = dir.join("extra.raw");
    std::fs::write(&extra, data(45_000, 100)).unwrap();
    let (_, _, theirs) = &expect[14]; // 123_457 bytes in 10_000-byte chunks, md5
    let theirs_before = std::fs::read(theirs).unwrap();
    bloscpack::append_file(theirs, &data(25_000, 101), None).unwrap();
    let theirs_out = dir.join("theirs.out");
    let r = bloscpack_py(&[
        json!({"op": "append", "file": p(&ours), "in": p(&extra)}),
        json!({"op": "unpack", "in": p(theirs), "out": p(&theirs_out)}),
    ]);
    assert!(
        r[0].get("error").is_none() && r[1].get("error").is_none(),
        "{r:?}"
    );
    let mut all = d.clone();
    all.extend(data(45_000, 100));
    assert!(
        bloscpack::unpack_file(&ours).unwrap() == all,
        "bloscpack's append"
    );
    let mut all = bloscpack::unpack(&theirs_before).unwrap();
    all.extend(data(25_000, 101));
    assert!(
        std::fs::read(&theirs_out).unwrap() == all,
        "our append, read by bloscpack"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A chunk whose header claims far more bytes than its streams hold is
/// refused before the reader sizes its output by that claim.
#[test]
fn chunk_claiming_huge_nbytes_fails_before_allocating_it() {
    let d: Vec<u8> = (0..1000u32).map(|i| (i % 10) as u8).collect();
    let opts = Options::default()
        .checksum(Checksum::None)
        .cparams(CParams::default().codec(Codec::Lz4).typesize(4));
    let good = bloscpack::pack(&d, &opts).unwrap();
    let r = Reader::new(&good[..]).unwrap();
    let at = r.chunk_range(0).unwrap().start;
    let claim = 0x7fff_0000u32;
    let mut bad = good.clone();
    // the chunk's nbytes (and the file header's sizes, which must agree)
    bad[at + 4..at + 8].copy_from_slice(&claim.to_le_bytes());
    bad[8..12].copy_from_slice(&claim.to_le_bytes());
    bad[12..16].copy_from_slice(&claim.to_le_bytes());
    counting::reset_largest();
    let res = Reader::new(&bad[..]).and_then(|r| r.decompress_all());
    let largest = counting::largest();
    let e = res.expect_err("a 2 GiB claim decoded");
    assert!(e.to_string().contains("chunk"), "{e}");
    assert!(largest < 1 << 20, "allocated {largest} bytes");
}
