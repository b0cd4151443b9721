//! Blosc1 chunks against the real C-Blosc 1.21 (python-blosc 1.11.4, which
//! bundles C-Blosc 1.21.7; installed on first use into `target/pydeps-c1`).
//!
//! For thousands of random cases (every codec, clevel 0..=9, no shuffle /
//! shuffle / bitshuffle, type sizes 1..=255 and a few above, odd lengths,
//! forced block sizes, every split mode):
//! 1. the header we write equals C-Blosc 1.21's (bytes 0..12: version,
//!    codec version, flags, typesize, nbytes, blocksize; bytes 12..16, the
//!    compressed size, whenever the streams are equal), except the "not
//!    split" flag (0x10) where C-Blosc 1.21 writes split streams its own
//!    reader cannot decode: ours then write one stream and say so;
//! 2. the whole chunk equals C's wherever the codec library is the same
//!    (the per-codec counts are printed; the codecs in `MUST_BE_IDENTICAL`
//!    must be identical in every case);
//! 3. C-Blosc 1.21 decodes our chunk to the input, and we decode C's;
//! 4. our chunk is the same with 1 and 2 threads.
//!
//! `OXIBLOSC_DIFF_SCALE=N` multiplies the number of cases,
//! `OXIBLOSC_DIFF_SEED=N` draws others.

mod support;
use support::Rng;

use std::collections::BTreeMap;

use oxiblosc::{CParams, ChunkFormat, Codec, Filter, SplitMode, compress, decompress};
use serde_json::{Value, json};
use support::pyenv;

/// splitmix64.
/// Data of several shapes: ramps of a type, runs, text, noisy floats,
/// random bytes, sparse zeros, constants.
fn make_data(kind: u64, len: usize, ts: usize, seed: u64) -> Vec<u8> {
    let mut r = Rng(seed);
    let mut out = Vec::with_capacity(len + 16);
    match kind {
        0 => {
            let step = 1 + r.below(5);
            let mut i = r.below(1000);
            while out.len() < len {
                let v = i * step;
                out.extend_from_slice(&v.to_le_bytes()[..ts.clamp(1, 8)]);
                i += 1;
            }
        }
        1 => {
            while out.len() < len {
                let v = r.next() as u8;
                let n = 1 + r.below(200) as usize;
                out.resize(out.len() + n, v);
            }
        }
        2 => {
            let words = [
                "blosc ", "chunk ", "the ", "zarr, ", "array ", "of ", "data. ",
            ];
            while out.len() < len {
                out.extend_from_slice(words[r.below(words.len() as u64) as usize].as_bytes());
            }
        }
        3 => {
            let mut i = 0u64;
            while out.len() < len {
                let v = (i as f64 * 0.01).sin() * 100.0 + (r.below(1000) as f64) * 1e-4;
                out.extend_from_slice(&(v as f32).to_le_bytes());
                i += 1;
            }
        }
        4 => out.extend((0..len).map(|_| r.next() as u8)),
        5 => {
            out.resize(len, 0);
            for _ in 0..len / 97 {
                let at = r.below(len.max(1) as u64) as usize;
                out[at] = r.next() as u8;
            }
        }
        _ => out.resize(len, 0x5a),
    }
    out.truncate(len);
    out
}

#[derive(Clone, Debug)]
struct Case {
    codec: Codec,
    clevel: u8,
    typesize: usize,
    shuffle: u8,
    blocksize: usize,
    splitmode: Option<SplitMode>,
    data: Vec<u8>,
}

impl Case {
    fn params(&self) -> CParams {
        let filters: &[Filter] = match self.shuffle {
            1 => &[Filter::Shuffle],
            2 => &[Filter::BitShuffle],
            _ => &[],
        };
        let mut p = CParams::default()
            .format(ChunkFormat::Blosc1)
            .codec(self.codec)
            .clevel(self.clevel)
            .typesize(self.typesize)
            .filters(filters)
            .blocksize(self.blocksize);
        if let Some(m) = self.splitmode {
            p = p.splitmode(m);
        }
        p
    }

    fn op(&self) -> Value {
        json!({
            "op": "compress",
            "typesize": self.typesize,
            "clevel": self.clevel,
            "shuffle": self.shuffle,
            "cname": self.codec.name(),
            "blocksize": self.blocksize,
            "splitmode": self.splitmode.map(|m| match m {
                SplitMode::Always => "ALWAYS",
                SplitMode::Never => "NEVER",
                SplitMode::Auto => "AUTO",
                _ => "FORWARD_COMPAT",
            }),
            "nthreads": 1,
            "blobs": [self.data.len()],
        })
    }
}

fn scale() -> usize {
    std::env::var("OXIBLOSC_DIFF_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1)
}

fn seed() -> u64 {
    std::env::var("OXIBLOSC_DIFF_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x0b10_5c01)
}

fn draw(r: &mut Rng) -> Case {
    let codec = Codec::ALL[r.below(5) as usize];
    let clevel = r.below(10) as u8;
    let typesize = match r.below(10) {
        0..=5 => [1, 2, 4, 8][r.below(4) as usize],
        6..=8 => 1 + r.below(255) as usize,
        _ => 256 + r.below(200) as usize,
    };
    let shuffle = r.below(3) as u8;
    let len = match r.below(10) {
        0 => r.below(200) as usize,
        1..=6 => r.below(70_000) as usize,
        _ => r.below(600_000) as usize,
    };
    let blocksize = if r.below(6) == 0 {
        r.below(100_000) as usize
    } else {
        0
    };
    let splitmode = match r.below(8) {
        0 => Some(SplitMode::Always),
        1 => Some(SplitMode::Never),
        2 => Some(SplitMode::Auto),
        3 => Some(SplitMode::ForwardCompat),
        _ => None,
    };
    let kind = r.below(7);
    let data = make_data(kind, len, typesize, r.next());
    Case {
        codec,
        clevel,
        typesize,
        shuffle,
        blocksize,
        splitmode,
        data,
    }
}

/// Send one batch to `cblosc1.py`; the results with their blobs.
fn batch(py: &pyenv::Py, ops: &[Value], blobs: &[&[u8]]) -> Vec<(Value, Vec<Vec<u8>>)> {
    let doc = serde_json::to_vec(&json!({ "ops": ops })).unwrap();
    let mut req = Vec::new();
    req.extend_from_slice(&(doc.len() as u32).to_le_bytes());
    req.extend_from_slice(&doc);
    for b in blobs {
        req.extend_from_slice(b);
    }
    let out = pyenv::run_script(py, "cblosc1.py", &req);
    let n = u32::from_le_bytes(out[..4].try_into().unwrap()) as usize;
    let answer: Value = serde_json::from_slice(&out[4..4 + n]).unwrap();
    let mut pos = 4 + n;
    answer["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let bs = r["blobs"]
                .as_array()
                .unwrap()
                .iter()
                .map(|l| {
                    let l = l.as_u64().unwrap() as usize;
                    pos += l;
                    out[pos - l..pos].to_vec()
                })
                .collect();
            (r.clone(), bs)
        })
        .collect()
}

fn result(r: &(Value, Vec<Vec<u8>>)) -> Result<&[u8], String> {
    if r.0["ok"] == true {
        Ok(&r.1[0])
    } else {
        Err(r.0["error"].as_str().unwrap_or("?").to_string())
    }
}

/// Codecs whose Blosc1 chunks must equal C-Blosc 1.21's byte for byte: the
/// same algorithm and library version on both sides (our BloscLZ is a
/// twin of C-Blosc 1.21's BloscLZ 2.5.1; liblz4 1.10.0 on both sides,
/// called as C-Blosc 1.x calls it; with the `zlib-classic` feature classic
/// zlib's deflate on both sides, its 1.3.1 there, the system's here). Not
/// zstd (python-blosc 1.11.4 has libzstd 1.5.6; we link 1.5.7 as C-Blosc2
/// 3.3.5 does), nor zlib by default (zlib-ng, or zlib-rs, at clevel 5
/// at least 4x faster).
const MUST_BE_IDENTICAL: &[Codec] = if cfg!(feature = "zlib-classic") {
    &[Codec::BloscLz, Codec::Lz4, Codec::Lz4Hc, Codec::Zlib]
} else {
    &[Codec::BloscLz, Codec::Lz4, Codec::Lz4Hc]
};

/// Whether C-Blosc 1.21's chunk `theirs` of `len` bytes has split streams
/// its own reader reads as one (ALWAYS split mode on items over 16 bytes,
/// or on blocks of under 128 items): C cannot decode it.
fn c_splits_what_it_cannot_read(theirs: &[u8], len: usize) -> bool {
    let ts = usize::from(theirs[3]);
    let bs = u32::from_le_bytes(theirs[8..12].try_into().unwrap()) as usize;
    theirs[2] & 0x12 == 0 && !(ts <= 16 && bs / ts >= 128) && bs <= len
}

/// Whether our Blosc1 header (bytes 0..12: version, codec version, flags,
/// typesize, nbytes, blocksize) is C-Blosc 1.21's.
///
/// Bytes 12..16 are cbytes, the chunk's compressed size: equal exactly when
/// the codec streams are (compared apart). The memcpy bit (0x02) of the
/// flags depends on the streams too: C stores a chunk raw when its streams
/// do not fit in nbytes + 16. With the same codec library (`same_lib`) it
/// must match; with another version of zlib or zstd it may differ. Where C
/// splits streams it cannot read (`c_unreadable`), ours write one stream
/// and set the "not split" flag (0x10), or store the chunk raw (0x02) when
/// that one stream does not fit where C's split ones did.
fn headers_agree(mine: &[u8], theirs: &[u8], c_unreadable: bool, same_lib: bool) -> bool {
    let mut mask = if same_lib { 0 } else { 0x02 };
    if c_unreadable && matches!(mine[2] & 0x12, 0x10 | 0x02) {
        mask = 0x12;
    }
    let head = |h: &[u8]| {
        let mut h = h[..12].to_vec();
        h[2] &= !mask;
        h
    };
    head(mine) == head(theirs)
}

#[test]
fn blosc1_chunks_match_c_blosc_1_21() {
    let py = pyenv::blosc1();
    let hello = batch(&py, &[json!({"op": "hello"})], &[]);
    assert_eq!(hello[0].0["blosc"], "1.11.4", "{}", hello[0].0);
    eprintln!(
        "oracle: C-Blosc {} with {}",
        hello[0].0["c_blosc"], hello[0].0["libs"]
    );

    let mut r = Rng(seed());
    let n = 2500 * scale();
    let cases: Vec<Case> = (0..n).map(|_| draw(&mut r)).collect();
    let ops: Vec<Value> = cases.iter().map(Case::op).collect();
    let blobs: Vec<&[u8]> = cases.iter().map(|c| c.data.as_slice()).collect();
    let from_c = batch(&py, &ops, &blobs);

    // Ours, at 1 and 2 threads.
    let ours: Vec<Vec<u8>> = cases
        .iter()
        .map(|c| {
            let one = compress(&c.data, &c.params()).unwrap_or_else(|e| panic!("{c:?}: {e}"));
            let two = compress(&c.data, &c.params().nthreads(2)).unwrap();
            assert_eq!(one, two, "1 and 2 threads differ: {:?}", c.params());
            one
        })
        .collect();

    // C decodes ours.
    let dops: Vec<Value> = ours
        .iter()
        .map(|ch| json!({"op": "decompress", "blobs": [ch.len()]}))
        .collect();
    let dblobs: Vec<&[u8]> = ours.iter().map(Vec::as_slice).collect();
    let c_decoded = batch(&py, &dops, &dblobs);

    // (identical, total) per codec.
    let mut tally: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    let mut first_diff: BTreeMap<&str, String> = BTreeMap::new();
    let mut memcpy_diff: BTreeMap<&str, usize> = BTreeMap::new();
    let mut unreadable = 0usize;
    for (i, c) in cases.iter().enumerate() {
        let what = || format!("case {i}: {:?} len {}", c.params(), c.data.len());
        let theirs = result(&from_c[i]).unwrap_or_else(|e| panic!("C failed on {}: {e}", what()));
        let mine = &ours[i];
        // C-Blosc 1.21 in ALWAYS split mode splits blocks its own reader
        // reads as one stream (items over 16 bytes, or under 128 of them):
        // it cannot decode those chunks. Ours write one stream and set the
        // "not split" flag (0x10), which C-Blosc2 needs to read one stream
        // (it splits whenever the flag is clear): they differ there by
        // design, in that bit and the streams, and C decodes them.
        let c_unreadable = c_splits_what_it_cannot_read(theirs, c.data.len());
        let same_lib = MUST_BE_IDENTICAL.contains(&c.codec);
        assert!(
            headers_agree(mine, theirs, c_unreadable, same_lib),
            "header (version, versionlz, flags, typesize, nbytes, blocksize) differs \
             from C-Blosc 1.21's: {} (ours {:02x?}, C's {:02x?})",
            what(),
            &mine[..16],
            &theirs[..16]
        );
        if mine[2] & 0x02 != theirs[2] & 0x02 {
            *memcpy_diff.entry(c.codec.name()).or_default() += 1;
        }
        if c_unreadable {
            unreadable += 1;
            assert!(
                oxiblosc::decompress(theirs).is_ok_and(|d| d == c.data),
                "we decode C's ALWAYS-split chunk wrong: {}",
                what()
            );
        }
        let t = tally.entry(c.codec.name()).or_default();
        t.1 += usize::from(!c_unreadable);
        if c_unreadable {
        } else if mine == theirs {
            t.0 += 1;
        } else {
            first_diff.entry(c.codec.name()).or_insert_with(what);
        }
        assert_eq!(
            result(&c_decoded[i])
                .unwrap_or_else(|e| panic!("C cannot decode ours: {e}: {}", what())),
            c.data.as_slice(),
            "C-Blosc 1.21 decodes our chunk wrong: {}",
            what()
        );
        assert_eq!(
            decompress(theirs).unwrap_or_else(|e| panic!("we cannot decode C's: {e}: {}", what())),
            c.data,
            "we decode C's chunk wrong: {}",
            what()
        );
    }
    for (codec, (same, total)) in &tally {
        eprintln!(
            "{codec}: {same}/{total} chunks byte-identical to C-Blosc 1.21, \
             {} stored raw by one side only",
            memcpy_diff.get(codec).copied().unwrap_or(0)
        );
    }
    eprintln!(
        "{unreadable} cases where C-Blosc 1.21 writes split streams its reader cannot \
         decode (ALWAYS split mode); ours differ there by design and C decodes them"
    );
    for codec in MUST_BE_IDENTICAL {
        let (same, total) = tally.get(codec.name()).copied().unwrap_or_default();
        assert_eq!(
            same,
            total,
            "{codec}: {same}/{total} identical; first difference: {}",
            first_diff.get(codec.name()).map_or("-", String::as_str)
        );
    }
}

/// Found by `fuzz/c-diff.sh` comparing the roundtrip corpus with C-Blosc 1.21
/// byte for byte (session 49): 272 bytes of three-byte items, shuffled,
/// BloscLZ at clevel 2, ALWAYS split, one block of 90 items and a leftover.
/// C splits the block into three streams, which its own reader then reads
/// as one: its chunk does not decode. Ours writes one stream, which does not
/// fit in nbytes + 16 where C's three did, so ours is stored raw. The header
/// comparison of `blosc1_chunks_match_c_blosc_1_21` must take that (it took
/// only the "not split" flag).
#[test]
fn always_split_blocks_c_cannot_read_may_be_ours_raw() {
    const DATA: &str = "\
        ffffffffffababababffffffffffffffffffff15151515ffababababffffffff\
        ffffffff13ffffff15151515151515151515151515ffffffffffffffffff1515\
        1515151515f3151515151515ff3315ffffffffffffffffffffffffffffffffff\
        ffffffe3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3ababababab\
        abab01ffffffffffffffffffffffffffffffffffffffe5ffc9c9c9c9c9c9c9c9\
        c9c9c9c9c9e3e3e3e3e3e3e3e3e3c9c9c9c9c9c9c9c9ffffffffffffffffffff\
        fffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7ffff\
        fffffffffffffffffffffffffff7ffffffffffffffffffffffffffffffffffff\
        ffffffffffff40ffffffffffffffff03";
    let data: Vec<u8> = (0..DATA.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&DATA[i..i + 2], 16).unwrap())
        .collect();
    let c = Case {
        codec: Codec::BloscLz,
        clevel: 2,
        typesize: 3,
        shuffle: 1,
        blocksize: 11714,
        splitmode: Some(SplitMode::Always),
        data,
    };
    let py = pyenv::blosc1();
    let from_c = batch(&py, &[c.op()], &[&c.data]);
    let theirs = result(&from_c[0]).unwrap().to_vec();
    let mine = compress(&c.data, &c.params()).unwrap();
    // C's chunk: compressed, split, and C cannot decode it.
    assert_eq!(theirs[2], 0x01, "C's flags {:02x?}", &theirs[..16]);
    assert!(c_splits_what_it_cannot_read(&theirs, c.data.len()));
    let back = batch(
        &py,
        &[json!({"op": "decompress", "blobs": [theirs.len()]})],
        &[&theirs],
    );
    assert!(
        result(&back[0]) != Ok(c.data.as_slice()),
        "C-Blosc 1.21 decodes its own chunk"
    );
    // Ours: raw (shuffle + memcpyed), the rest of C's header; C decodes it,
    // and it is the chunk of one stream (NEVER split) but for that flag.
    assert_eq!(mine[2], 0x03, "our flags {:02x?}", &mine[..16]);
    assert!(headers_agree(&mine, &theirs, true, true));
    let back = batch(
        &py,
        &[json!({"op": "decompress", "blobs": [mine.len()]})],
        &[&mine],
    );
    assert_eq!(result(&back[0]).unwrap(), c.data.as_slice());
    let mut never = compress(&c.data, &c.params().splitmode(SplitMode::Never)).unwrap();
    never[2] &= !0x10;
    assert_eq!(never, mine);
    // Raw and "not split" at once, or raw where C's is readable and
    // compressed: the headers disagree.
    let mut both = mine.clone();
    both[2] = 0x13;
    assert!(!headers_agree(&both, &theirs, true, true));
    assert!(!headers_agree(&mine, &theirs, false, true));
}
