//! NDArray slices and shape changes (`ndarray::{get_slice, set_slice,
//! resize, insert, append}`): checked against a plain C-order model in 0
//! to 4 dimensions with padded edge chunks and blocks, bad input refused
//! with errors, and arrays we resized opened by python-blosc2.

mod support;

use std::path::Path;

use oxiblosc::ndarray::{self, NdArray, NdMeta};
use oxiblosc::schunk::SChunk;
use oxiblosc::{CParams, Error};
use serde_json::{Value, json};

/// A small deterministic generator.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn below(&mut self, n: u64) -> u64 {
        if n == 0 { 0 } else { self.next() % n }
    }
    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

/// The model: a C-order array of `shape` with items of `is` bytes.
#[derive(Clone, Debug, PartialEq)]
struct Model {
    shape: Vec<u64>,
    is: usize,
    data: Vec<u8>,
}

fn strides(shape: &[u64]) -> Vec<u64> {
    let mut s = vec![1u64; shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        s[d] = s[d + 1] * shape[d + 1];
    }
    s
}

/// Every index of a box, in C order.
fn indices(lo: &[u64], hi: &[u64]) -> Vec<Vec<u64>> {
    let mut out = vec![Vec::new()];
    for d in 0..lo.len() {
        let mut next = Vec::new();
        for p in &out {
            for x in lo[d]..hi[d] {
                let mut q = p.clone();
                q.push(x);
                next.push(q);
            }
        }
        out = next;
    }
    out
}

fn offset(idx: &[u64], strides: &[u64]) -> usize {
    idx.iter().zip(strides).map(|(a, b)| a * b).sum::<u64>() as usize
}

impl Model {
    fn get(&self, lo: &[u64], hi: &[u64]) -> Vec<u8> {
        let st = strides(&self.shape);
        let mut out = Vec::new();
        for i in indices(lo, hi) {
            let o = offset(&i, &st) * self.is;
            out.extend_from_slice(&self.data[o..o + self.is]);
        }
        out
    }
    fn set(&mut self, lo: &[u64], hi: &[u64], src: &[u8]) {
        let st = strides(&self.shape);
        for (k, i) in indices(lo, hi).into_iter().enumerate() {
            let o = offset(&i, &st) * self.is;
            self.data[o..o + self.is].copy_from_slice(&src[k * self.is..(k + 1) * self.is]);
        }
    }
    /// Resize as `ndarray::resize` documents: items at `start..` move.
    fn resize(&self, new: &[u64], start: &[u64]) -> Model {
        let n = self.shape.len();
        let total: u64 = new.iter().product();
        let mut out = Model {
            shape: new.to_vec(),
            is: self.is,
            data: vec![0; total as usize * self.is],
        };
        let ost = strides(&self.shape);
        let nst = strides(new);
        let zeros = vec![0u64; n];
        for i in indices(&zeros, new) {
            let mut old = Vec::with_capacity(n);
            for d in 0..n {
                let (o, w, s, x) = (self.shape[d], new[d], start[d], i[d]);
                let v = if x < s {
                    Some(x)
                } else if w >= o {
                    (x >= s + (w - o)).then(|| x - (w - o))
                } else {
                    Some(x + (o - w))
                };
                match v {
                    Some(v) if v < o => old.push(v),
                    _ => break,
                }
            }
            if old.len() == n {
                let a = offset(&old, &ost) * self.is;
                let b = offset(&i, &nst) * self.is;
                out.data[b..b + self.is].copy_from_slice(&self.data[a..a + self.is]);
            }
        }
        out
    }
}

struct Case {
    shape: Vec<u64>,
    chunks: Vec<u64>,
    blocks: Vec<u64>,
    dtype: &'static str,
}

fn cases() -> Vec<Case> {
    let c = |shape: &[u64], chunks: &[u64], blocks: &[u64], dtype| Case {
        shape: shape.to_vec(),
        chunks: chunks.to_vec(),
        blocks: blocks.to_vec(),
        dtype,
    };
    vec![
        c(&[], &[], &[], "<i4"),
        c(&[23], &[7], &[3], "|u1"),
        c(&[10, 7], &[4, 3], &[3, 2], "<i4"),
        c(&[9, 6], &[9, 6], &[4, 6], "<f8"),
        c(&[5, 4, 7], &[2, 3, 4], &[2, 2, 3], "<u2"),
        c(&[3, 4, 2, 5], &[2, 3, 2, 2], &[1, 2, 1, 2], "|i1"),
    ]
}

fn build(c: &Case, rng: &mut Rng) -> (SChunk, NdMeta, Model) {
    let meta = NdMeta::new(&c.shape, &c.chunks, &c.blocks, c.dtype);
    let is = ndarray::dtype_itemsize(c.dtype).unwrap();
    let n: u64 = c.shape.iter().product();
    let data = rng.bytes(n as usize * is);
    let sc = ndarray::create(&meta, CParams::default(), &data).unwrap();
    let model = Model {
        shape: c.shape.clone(),
        is,
        data,
    };
    (sc, meta, model)
}

fn random_box(shape: &[u64], rng: &mut Rng) -> (Vec<u64>, Vec<u64>) {
    let mut lo = Vec::new();
    let mut hi = Vec::new();
    for &s in shape {
        let a = rng.below(s + 1);
        let b = rng.below(s + 1);
        lo.push(a.min(b));
        hi.push(a.max(b));
    }
    (lo, hi)
}

/// The whole array through our reader (not through `get_slice`).
fn whole(sc: SChunk) -> Vec<u8> {
    NdArray::open(sc).unwrap().to_vec().unwrap()
}

#[test]
fn get_slice_matches_the_model_including_padded_edges_and_larger_buffers() {
    let mut rng = Rng(1);
    for c in cases() {
        let (mut sc, meta, model) = build(&c, &mut rng);
        for _ in 0..40 {
            let (lo, hi) = random_box(&c.shape, &mut rng);
            let bshape: Vec<u64> = lo.iter().zip(&hi).map(|(a, b)| b - a).collect();
            let n: u64 = bshape.iter().product();
            let mut got = vec![0xAAu8; n as usize * model.is];
            ndarray::get_slice(&mut sc, &meta, &lo, &hi, &mut got, &bshape).unwrap();
            assert_eq!(got, model.get(&lo, &hi), "{:?} {lo:?}..{hi:?}", c.shape);
            // A buffer one larger in every dimension: the box at its origin,
            // the rest untouched.
            let big: Vec<u64> = bshape.iter().map(|b| b + 1).collect();
            let nb: u64 = big.iter().product();
            let mut buf = vec![0xAAu8; nb as usize * model.is];
            ndarray::get_slice(&mut sc, &meta, &lo, &hi, &mut buf, &big).unwrap();
            let bm = Model {
                shape: big.clone(),
                is: model.is,
                data: buf,
            };
            let zeros = vec![0u64; big.len()];
            assert_eq!(bm.get(&zeros, &bshape), model.get(&lo, &hi));
            let outside = bm.data.iter().filter(|&&b| b == 0xAA).count();
            let inside_aa = model.get(&lo, &hi).iter().filter(|&&b| b == 0xAA).count();
            assert_eq!(outside - inside_aa, (nb - n) as usize * model.is);
        }
    }
}

#[test]
fn set_slice_matches_the_model_and_only_touches_the_box() {
    let mut rng = Rng(2);
    for c in cases() {
        let (mut sc, meta, mut model) = build(&c, &mut rng);
        for _ in 0..25 {
            let (lo, hi) = random_box(&c.shape, &mut rng);
            let bshape: Vec<u64> = lo.iter().zip(&hi).map(|(a, b)| b - a).collect();
            let n: u64 = bshape.iter().product();
            let src = rng.bytes(n as usize * model.is);
            ndarray::set_slice(&mut sc, &meta, &lo, &hi, &src, &bshape).unwrap();
            model.set(&lo, &hi, &src);
        }
        let nchunks = sc.nchunks();
        let got = whole(sc);
        assert_eq!(got, model.data, "{:?}", c.shape);
        assert_eq!(
            nchunks as u64,
            ndarray::Layout::new(&meta, model.is).unwrap().nchunks()
        );
    }
}

/// Chunks written by `set_slice` and `resize` have the array's block size
/// even when the super-chunk's compression parameters give another one (a
/// frame's header may; found by fuzzing `ndarray_read`): before, they
/// took the parameters' block size and the array no longer opened.
#[test]
fn edits_write_blocks_of_the_block_shape_whatever_the_cparams() {
    let meta = NdMeta::new(&[12, 9], &[4, 6], &[2, 3], "<i4");
    let data: Vec<u8> = (0..12 * 9 * 4).map(|i| (i % 251) as u8).collect();
    let block = 2 * 3 * 4;
    for other in [0, block + 4, 4 * 6 * 4] {
        let mut sc = ndarray::create(&meta, CParams::default(), &data).unwrap();
        sc.set_cparams(sc.cparams().clone().blocksize(other))
            .unwrap();
        let mut model = Model {
            shape: vec![12, 9],
            is: 4,
            data: data.clone(),
        };
        let src: Vec<u8> = (0..3 * 5 * 4).map(|i| 255 - i as u8).collect();
        ndarray::set_slice(&mut sc, &meta, &[1, 2], &[4, 7], &src, &[3, 5]).unwrap();
        model.set(&[1, 2], &[4, 7], &src);
        let mut m = meta.clone();
        ndarray::resize(&mut sc, &mut m, &[12, 15], None).unwrap();
        for i in 0..sc.nchunks() {
            let c = sc.get_chunk(i).unwrap();
            let h = oxiblosc::ChunkHeader::parse(&c).unwrap();
            assert_eq!(h.blocksize, block, "blocksize {other}: chunk {i}");
        }
        let mut a = NdArray::open(sc).expect("the edited array opens");
        let got = a.to_vec().expect("the edited array reads");
        for r in 0..12 {
            let row = &got[r * 15 * 4..(r + 1) * 15 * 4];
            assert_eq!(row[..36], model.data[r * 36..(r + 1) * 36], "row {r}");
            assert!(row[36..].iter().all(|&b| b == 0), "row {r}: new items");
        }
    }
}

#[test]
fn resize_insert_and_append_match_the_model() {
    let mut rng = Rng(3);
    for c in cases().into_iter().filter(|c| !c.shape.is_empty()) {
        let (mut sc, mut meta, mut model) = build(&c, &mut rng);
        let n = c.shape.len();
        for step in 0..6 {
            let axis = rng.below(n as u64) as usize;
            match step % 3 {
                0 => {
                    // Grow or shrink every dimension at its end.
                    let new: Vec<u64> = model
                        .shape
                        .iter()
                        .map(|&s| (s + rng.below(6)).saturating_sub(rng.below(4)).max(1))
                        .collect();
                    let start: Vec<u64> = model
                        .shape
                        .iter()
                        .zip(&new)
                        .map(|(a, b)| *a.min(b))
                        .collect();
                    ndarray::resize(&mut sc, &mut meta, &new, None).unwrap();
                    model = model.resize(&new, &start);
                }
                1 => {
                    // Insert at a chunk boundary of one axis.
                    let bounds = model.shape[axis] / c.chunks[axis];
                    let pos = rng.below(bounds + 1) * c.chunks[axis];
                    let other: u64 = (0..n)
                        .filter(|&d| d != axis)
                        .map(|d| model.shape[d])
                        .product();
                    let k = 1 + rng.below(5);
                    let data = rng.bytes((k * other) as usize * model.is);
                    ndarray::insert(&mut sc, &mut meta, &data, axis, pos).unwrap();
                    let mut new = model.shape.clone();
                    new[axis] += k;
                    let mut start = model.shape.clone();
                    start[axis] = pos;
                    model = model.resize(&new, &start);
                    let mut lo = vec![0; n];
                    lo[axis] = pos;
                    let mut hi = new.clone();
                    hi[axis] = pos + k;
                    model.set(&lo, &hi, &data);
                }
                _ => {
                    let other: u64 = (0..n)
                        .filter(|&d| d != axis)
                        .map(|d| model.shape[d])
                        .product();
                    let k = 1 + rng.below(4);
                    let data = rng.bytes((k * other) as usize * model.is);
                    ndarray::append(&mut sc, &mut meta, &data, axis).unwrap();
                    let mut new = model.shape.clone();
                    new[axis] += k;
                    let old = model.shape.clone();
                    model = model.resize(&new, &old);
                    let mut lo = vec![0; n];
                    lo[axis] = old[axis];
                    model.set(&lo, &new, &data);
                }
            }
            assert_eq!(meta.shape, model.shape);
            let raw = sc.meta_get(ndarray::B2ND_META).unwrap().to_vec();
            assert_eq!(NdMeta::decode(&raw).unwrap().shape, model.shape);
            let copy = SChunk::from_cframe(sc.to_cframe().unwrap()).unwrap();
            assert_eq!(whole(copy), model.data, "{:?} step {step}", c.shape);
        }
    }
}

#[test]
fn a_middle_insert_along_the_first_axis_keeps_the_chunks_before_it() {
    let meta = NdMeta::new(&[8, 3], &[2, 3], &[1, 3], "|u1");
    let data: Vec<u8> = (0..24).collect();
    let mut sc = ndarray::create(&meta, CParams::default(), &data).unwrap();
    let before: Vec<Vec<u8>> = (0..4)
        .map(|i| sc.get_chunk(i).unwrap().into_owned())
        .collect();
    let mut meta = meta;
    ndarray::insert(&mut sc, &mut meta, &[100; 6], 0, 4).unwrap();
    assert_eq!(meta.shape, [10, 3]);
    for (i, chunk) in before.iter().enumerate().take(2) {
        assert_eq!(
            &*sc.get_chunk(i).unwrap(),
            &chunk[..],
            "chunk {i} kept as is"
        );
    }
    let mut want: Vec<u8> = (0..12).collect();
    want.extend([100; 6]);
    want.extend(12..24);
    assert_eq!(whole(sc), want);
}

#[test]
fn bad_slices_and_shapes_are_errors() {
    let meta = NdMeta::new(&[10, 7], &[4, 3], &[3, 2], "<i4");
    let mut sc = ndarray::create(&meta, CParams::default(), &[0u8; 280]).unwrap();
    let mut buf = vec![0u8; 280];
    let bad_param = |r: oxiblosc::Result<()>| matches!(r, Err(Error::InvalidParam(_)));
    // Past the end, reversed, wrong number of dimensions.
    assert!(bad_param(ndarray::get_slice(
        &mut sc,
        &meta,
        &[0, 0],
        &[11, 7],
        &mut buf,
        &[11, 7]
    )));
    assert!(bad_param(ndarray::get_slice(
        &mut sc,
        &meta,
        &[5, 0],
        &[4, 7],
        &mut buf,
        &[10, 7]
    )));
    assert!(bad_param(ndarray::get_slice(
        &mut sc,
        &meta,
        &[0],
        &[4],
        &mut buf,
        &[4]
    )));
    // A buffer shape smaller than the box, a buffer of the wrong size, an
    // overflowing buffer shape.
    assert!(bad_param(ndarray::get_slice(
        &mut sc,
        &meta,
        &[0, 0],
        &[10, 7],
        &mut buf,
        &[9, 7]
    )));
    assert!(bad_param(ndarray::get_slice(
        &mut sc,
        &meta,
        &[0, 0],
        &[2, 2],
        &mut buf,
        &[2, 2]
    )));
    assert!(bad_param(ndarray::get_slice(
        &mut sc,
        &meta,
        &[0, 0],
        &[1, 1],
        &mut buf,
        &[u64::MAX / 2, 4]
    )));
    assert!(bad_param(ndarray::set_slice(
        &mut sc,
        &meta,
        &[0, 0],
        &[2, 2],
        &[0u8; 15],
        &[2, 2]
    )));
    // Another array's metalayer: the super-chunk disagrees.
    let other = NdMeta::new(&[20, 7], &[4, 3], &[3, 2], "<i4");
    assert!(matches!(
        ndarray::get_slice(&mut sc, &other, &[0, 0], &[1, 1], &mut buf[..4], &[1, 1]),
        Err(Error::Corrupt(_))
    ));
    let mut m = meta.clone();
    // A start not at a chunk boundary, past the end, a shrink past the end,
    // another number of dimensions, a bad axis, a ragged insert.
    assert!(bad_param(ndarray::resize(
        &mut sc,
        &mut m,
        &[12, 7],
        Some(&[3, 0])
    )));
    assert!(bad_param(ndarray::resize(
        &mut sc,
        &mut m,
        &[12, 7],
        Some(&[11, 0])
    )));
    assert!(bad_param(ndarray::resize(
        &mut sc,
        &mut m,
        &[6, 7],
        Some(&[8, 0])
    )));
    assert!(bad_param(ndarray::resize(&mut sc, &mut m, &[12], None)));
    // Too many chunks: refused before anything is planned or allocated.
    assert!(bad_param(ndarray::resize(
        &mut sc,
        &mut m,
        &[1 << 40, 7],
        None
    )));
    assert!(bad_param(ndarray::append(&mut sc, &mut m, &[0u8; 28], 2)));
    assert!(bad_param(ndarray::append(&mut sc, &mut m, &[0u8; 27], 0)));
    assert!(bad_param(ndarray::insert(&mut sc, &mut m, &[], 0, 0)));
    assert_eq!(m, meta, "a refused change leaves the metalayer alone");
    assert_eq!(sc.nchunks(), 9);
}

/// python-blosc2 4.14.1 opens the arrays we resized, inserted into and
/// appended to, and reads the model's bytes.
const SCRIPT: &str = r#"
import sys, json, os
import numpy as np, blosc2
d = sys.argv[1]
cases = json.load(open(os.path.join(d, "cases.json")))
out = []
for i, c in enumerate(cases):
    a = blosc2.open(os.path.join(d, "ours%d.b2nd" % i))
    want = open(os.path.join(d, "ours%d.raw" % i), "rb").read()
    out.append({"shape": list(a.shape), "equal": np.asarray(a[()]).tobytes() == want})
print(json.dumps(out))
"#;

#[test]
fn arrays_we_resize_open_in_python_blosc2() {
    let dir = support::tempdir("nd-slice-to-python");
    let mut rng = Rng(4);
    let mut shapes = Vec::new();
    for (i, c) in cases().into_iter().skip(1).enumerate() {
        let (mut sc, mut meta, mut model) = build(&c, &mut rng);
        let n = c.shape.len();
        let other: u64 = (1..n).map(|d| model.shape[d]).product();
        let data = rng.bytes((3 * other) as usize * model.is);
        ndarray::append(&mut sc, &mut meta, &data, 0).unwrap();
        let mut new = model.shape.clone();
        new[0] += 3;
        let old = model.shape.clone();
        model = model.resize(&new, &old);
        let mut lo = vec![0; n];
        lo[0] = old[0];
        model.set(&lo, &new, &data);
        let grown: Vec<u64> = model.shape.iter().map(|s| s + 2).collect();
        ndarray::resize(&mut sc, &mut meta, &grown, None).unwrap();
        model = model.resize(&grown, &new);
        let path = dir.join(format!("ours{i}.b2nd"));
        std::fs::write(&path, sc.to_cframe().unwrap()).unwrap();
        std::fs::write(dir.join(format!("ours{i}.raw")), &model.data).unwrap();
        shapes.push((i, model.shape.clone()));
    }
    let cases: Vec<Value> = shapes.iter().map(|(_, s)| json!({ "shape": s })).collect();
    std::fs::write(dir.join("cases.json"), Value::Array(cases).to_string()).unwrap();
    let got = run(&dir);
    assert_eq!(got.len(), shapes.len());
    for (g, (_, s)) in got.iter().zip(&shapes) {
        assert_eq!(g["shape"], json!(s));
        assert_eq!(g["equal"], json!(true), "{s:?}");
    }
}

fn run(dir: &Path) -> Vec<Value> {
    let script = dir.join("nd_slice_oracle.py");
    std::fs::write(&script, SCRIPT).unwrap();
    let out = support::cblosc2::run_script(script.to_str().unwrap(), &[dir.to_str().unwrap()])
        .unwrap_or_else(|e| panic!("the python-blosc2 oracle failed: {e}"));
    serde_json::from_str::<Value>(out.trim())
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

/// A read decodes only the blocks of a chunk the box touches: with one
/// block's streams broken, boxes away from it read right and boxes over it
/// fail.
#[test]
fn get_slice_decodes_only_the_blocks_the_box_touches() {
    use oxiblosc::{ChunkHeader, Codec};
    // One 64x64 chunk of 16 blocks of 16x16 u32 items.
    let meta = NdMeta::new(&[64, 64], &[64, 64], &[16, 16], "<u4");
    let data: Vec<u8> = (0..64 * 64u32)
        .flat_map(|v| (v / 3).to_le_bytes())
        .collect();
    let p = CParams::default().codec(Codec::Lz4).typesize(4);
    let mut sc = ndarray::create(&meta, p, &data).unwrap();
    let mut chunk = sc.get_chunk(0).unwrap().into_owned();
    let h = ChunkHeader::parse(&chunk).unwrap();
    assert_eq!((h.nblocks(), h.is_memcpyed()), (16, false));
    // Break block 5 (rows 16..32, columns 16..32).
    let bstart = |c: &[u8], i: usize| {
        let at = h.header_len() + 4 * i;
        u32::from_le_bytes(c[at..at + 4].try_into().unwrap()) as usize
    };
    let (s5, s6) = (bstart(&chunk, 5), bstart(&chunk, 6));
    chunk[s5 + 8..s6].fill(0xFF);
    sc.update_chunk(0, &chunk).unwrap();
    let read = |sc: &mut SChunk, lo: [u64; 2], hi: [u64; 2]| {
        let shape = [hi[0] - lo[0], hi[1] - lo[1]];
        let mut out = vec![0u8; (shape[0] * shape[1] * 4) as usize];
        ndarray::get_slice(sc, &meta, &lo, &hi, &mut out, &shape).map(|()| out)
    };
    for (lo, hi) in [
        ([0, 0], [16, 64]),
        ([16, 0], [32, 16]),
        ([40, 30], [64, 64]),
    ] {
        let got = read(&mut sc, lo, hi).unwrap();
        let want: Vec<u8> = (lo[0]..hi[0])
            .flat_map(|r| {
                data[(r * 256 + lo[1] * 4) as usize..(r * 256 + hi[1] * 4) as usize].to_vec()
            })
            .collect();
        assert_eq!(got, want, "{lo:?}..{hi:?}");
    }
    for (lo, hi) in [
        ([20, 20], [21, 21]),
        ([0, 0], [64, 64]),
        ([16, 10], [18, 17]),
    ] {
        assert!(read(&mut sc, lo, hi).is_err(), "{lo:?}..{hi:?}");
    }
}

/// A stored chunk cut in blocks of another size than the block shape's
/// (here as many blocks, cut elsewhere): its bytes may be laid out by
/// another block shape, so `get_slice` and `set_slice` refuse it, as
/// `NdArray` reads do (until session 18 `get_slice` decoded it whole; in
/// session 17 it applied the array's mask to the chunk's blocks and read
/// bytes the decoder had skipped). A special chunk, whatever block size
/// its header records, is read (found by `ndarray_read`, session 17: a
/// repeated-value chunk with blocks of 8,251 bytes).
#[test]
fn slices_refuse_stored_chunks_of_other_blocks_and_read_special_ones() {
    use oxiblosc::{ChunkHeader, Codec, SpecialValue};
    // One 64x64 chunk of 16 blocks of 16x16 u32 items (1 KiB each).
    let meta = NdMeta::new(&[64, 64], &[64, 64], &[16, 16], "<u4");
    let data: Vec<u8> = (0..64 * 64u32)
        .flat_map(|v| (v / 3).to_le_bytes())
        .collect();
    let p = CParams::default().codec(Codec::Lz4).typesize(4);
    let mut sc = ndarray::create(&meta, p.clone(), &data).unwrap();
    // The chunk's own bytes (ordered block by block) again, in 16 blocks of
    // 1,028 bytes (the last one shorter).
    let content = sc.decompress_chunk_vec(0).unwrap();
    let other = oxiblosc::compress(&content, &p.clone().blocksize(1028)).unwrap();
    let h = ChunkHeader::parse(&other).unwrap();
    assert_eq!((h.blocksize, h.nblocks()), (1028, 16));
    sc.update_chunk(0, &other).unwrap();
    let (lo, hi) = ([16u64, 16u64], [32u64, 32u64]);
    let shape = [hi[0] - lo[0], hi[1] - lo[1]];
    let mut got = vec![0u8; (shape[0] * shape[1] * 4) as usize];
    let e = ndarray::get_slice(&mut sc, &meta, &lo, &hi, &mut got, &shape).unwrap_err();
    assert!(
        matches!(&e, Error::Corrupt(m) if m.contains("blocks of 1028 bytes")),
        "{e}"
    );
    // Blocks of whole rows: a box of whole chunks is decoded straight into
    // the buffer, and a chunk of other blocks is refused there too.
    let rows = NdMeta::new(&[64, 64], &[64, 64], &[16, 64], "<u4");
    let mut sr = ndarray::create(&rows, p.clone(), &data).unwrap();
    let mut all = vec![0u8; data.len()];
    ndarray::get_slice(&mut sr, &rows, &[0, 0], &[64, 64], &mut all, &[64, 64]).unwrap();
    assert_eq!(all, data);
    let content = sr.decompress_chunk_vec(0).unwrap();
    let other = oxiblosc::compress(&content, &p.clone().blocksize(1028)).unwrap();
    sr.update_chunk(0, &other).unwrap();
    let e = ndarray::get_slice(&mut sr, &rows, &[0, 0], &[64, 64], &mut all, &[64, 64]);
    assert!(
        matches!(&e, Err(Error::Corrupt(m)) if m.contains("blocks of 1028 bytes")),
        "{e:?}"
    );
    let before = sc.to_cframe().unwrap();
    let e = ndarray::set_slice(&mut sc, &meta, &lo, &hi, &got, &shape).unwrap_err();
    assert!(matches!(e, Error::Corrupt(_)), "{e}");
    assert!(
        sc.to_cframe().unwrap() == before,
        "a refused set_slice changed the frame"
    );
    let e = NdArray::open(SChunk::from_cframe(before).unwrap())
        .unwrap()
        .to_vec()
        .unwrap_err();
    assert!(matches!(e, Error::Corrupt(_)), "{e}");
    // A repeated value whose header says 1,028-byte blocks.
    let value = 7u32.to_le_bytes();
    let special = oxiblosc::special_chunk(
        &p.clone().blocksize(1028),
        data.len(),
        SpecialValue::Value,
        &value,
    )
    .unwrap();
    assert_eq!(ChunkHeader::parse(&special).unwrap().blocksize, 1028);
    sc.update_chunk(0, &special).unwrap();
    ndarray::get_slice(&mut sc, &meta, &lo, &hi, &mut got, &shape).unwrap();
    assert!(
        got.chunks(4).all(|v| v == value),
        "a repeated value of 1,028-byte blocks"
    );
    sr.update_chunk(0, &special).unwrap();
    ndarray::get_slice(&mut sr, &rows, &[0, 0], &[64, 64], &mut all, &[64, 64]).unwrap();
    assert!(all.chunks(4).all(|v| v == value), "the whole chunk");
    // A zero chunk by its index entry, read whole into a buffer of other
    // bytes: zeros.
    let mut z = ndarray::builder(&rows, p.clone())
        .unwrap()
        .build_memory()
        .unwrap();
    z.fill_special(64 * 64, oxiblosc::schunk::Fill::Zeros, data.len())
        .unwrap();
    all.fill(0xAA);
    ndarray::get_slice(&mut z, &rows, &[0, 0], &[64, 64], &mut all, &[64, 64]).unwrap();
    assert!(all.iter().all(|&b| b == 0), "a zero chunk read whole");
}

/// A file frame whose `b2nd` metalayer sits after a large one (its bytes
/// past the first disk sector of the header): resize, insert and set_slice
/// cannot carry the metalayer in their one commit write, so they update it
/// first and then the chunks; they work and read back like the others.
#[test]
fn edits_of_an_array_whose_metalayer_is_past_the_first_sector() {
    let dir = support::tempdir("nd-late-meta");
    let path = dir.join("a.b2nd");
    let meta = NdMeta::new(&[12, 9], &[4, 3], &[2, 3], "<u2");
    let data: Vec<u8> = (0..108u16).flat_map(|v| v.to_le_bytes()).collect();
    {
        let mut sc = SChunk::builder()
            .cparams(CParams::default().typesize(2).blocksize(12))
            .chunksize(24)
            .meta("pad", &[0xAB; 700])
            .meta("b2nd", &meta.encode().unwrap())
            .create_file(&path)
            .unwrap();
        ndarray::fill(&mut sc, &meta, &data).unwrap();
    }
    let raw = std::fs::read(&path).unwrap();
    let enc = meta.encode().unwrap();
    let at = raw.windows(enc.len()).position(|w| w == &enc[..]).unwrap();
    assert!(at > 512, "the metalayer starts at {at}");
    let mut sc = SChunk::open(&path).unwrap();
    let mut m = meta.clone();
    ndarray::insert(&mut sc, &mut m, &[5u8; 4 * 9 * 2], 0, 4).unwrap();
    ndarray::set_slice(&mut sc, &m, &[0, 0], &[1, 2], &[1, 0, 2, 0], &[1, 2]).unwrap();
    drop(sc);
    let mut a = NdArray::open(SChunk::open(&path).unwrap()).unwrap();
    assert_eq!(a.meta().shape, [16, 9]);
    let mut want = data[..4 * 9 * 2].to_vec();
    want.extend_from_slice(&[5u8; 4 * 9 * 2]);
    want.extend_from_slice(&data[4 * 9 * 2..]);
    want[..4].copy_from_slice(&[1, 0, 2, 0]);
    assert!(a.to_vec().unwrap() == want);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// NDArray edits on a sparse frame (a directory): each is one replacement
/// of `chunks.b2frame` (metalayer and index together), the chunk files it
/// no longer names are removed, and the array reopens with the edits.
#[test]
fn edits_of_an_array_in_a_directory() {
    let dir = support::tempdir("nd-sframe-edits");
    let path = dir.join("a.b2nd");
    let meta = NdMeta::new(&[12, 9], &[4, 3], &[2, 3], "<u2");
    let data: Vec<u8> = (0..108u16).flat_map(|v| v.to_le_bytes()).collect();
    {
        let mut sc = ndarray::builder(&meta, CParams::default())
            .unwrap()
            .create_dir(&path)
            .unwrap();
        ndarray::fill(&mut sc, &meta, &data).unwrap();
    }
    let files = |p: &Path| std::fs::read_dir(p).unwrap().count();
    assert_eq!(files(&path), 9 + 1);
    let mut sc = SChunk::open(&path).unwrap();
    let mut m = meta.clone();
    ndarray::insert(&mut sc, &mut m, &[5u8; 4 * 9 * 2], 0, 4).unwrap();
    ndarray::set_slice(&mut sc, &m, &[0, 0], &[1, 2], &[1, 0, 2, 0], &[1, 2]).unwrap();
    ndarray::resize(&mut sc, &mut m, &[16, 6], None).unwrap();
    drop(sc);
    let mut a = NdArray::open(SChunk::open(&path).unwrap()).unwrap();
    assert_eq!(a.meta().shape, [16, 6]);
    // The model: rows 0-3, four rows of 5s, rows 4-11; the first two items
    // 1 and 2; then the last three columns cut.
    let mut rows: Vec<Vec<u8>> = data.chunks(9 * 2).map(<[u8]>::to_vec).collect();
    rows.splice(4..4, std::iter::repeat_n(vec![5u8; 9 * 2], 4));
    rows[0][..4].copy_from_slice(&[1, 0, 2, 0]);
    let want: Vec<u8> = rows.iter().flat_map(|r| r[..6 * 2].to_vec()).collect();
    assert!(a.to_vec().unwrap() == want);
    // 16 x 6 in chunks of 4 x 3: 8 chunks, their files and the index.
    assert_eq!(a.schunk().nchunks(), 8);
    assert!(files(&path) <= 8 + 1, "{} files", files(&path));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// An empty array in a frame whose chunk size is not set yet (-1, as
/// C-Blosc2 leaves a super-chunk before its first chunk): growing it gives
/// the frame the chunks' fixed size, as appending a first chunk does, not
/// a frame of variable-size chunks.
#[test]
fn growing_an_empty_array_fixes_the_chunk_size() {
    let meta = NdMeta::new(&[0, 9], &[4, 3], &[2, 3], "<u2");
    let mut sc = SChunk::builder()
        .cparams(CParams::default().typesize(2).blocksize(12))
        .meta("b2nd", &meta.encode().unwrap())
        .build_memory()
        .unwrap();
    assert_eq!(sc.frame_header().chunksize, -1);
    let mut m = meta.clone();
    ndarray::resize(&mut sc, &mut m, &[5, 9], None).unwrap();
    assert_eq!(sc.chunksize(), Some(4 * 3 * 2));
    let mut a = NdArray::open(SChunk::from_cframe(sc.to_cframe().unwrap()).unwrap()).unwrap();
    assert_eq!(a.to_vec().unwrap(), vec![0u8; 5 * 9 * 2]);
}

/// A stored chunk whose type size is not the array's item size: when its
/// blocks are whole items of that size the box's blocks are decoded alone;
/// when not (a header saying type size 3 over blocks of 1,024 bytes, which
/// no compressor writes: it rounds blocks to whole items) the chunk is
/// decoded whole. The box reads right either way.
#[test]
fn slices_of_chunks_of_another_type_size() {
    let meta = NdMeta::new(&[64, 64], &[64, 64], &[4, 64], "<u4");
    let data: Vec<u8> = (0..64 * 64u32)
        .flat_map(|v| v.wrapping_mul(2_654_435_761).to_le_bytes())
        .collect();
    for ts in [1, 2, 3, 8] {
        let mut sc = ndarray::create(&meta, CParams::default(), &data).unwrap();
        let content = sc.decompress_chunk_vec(0).unwrap();
        // Unfiltered, so that a header's type size changes nothing else.
        let p = CParams::default()
            .typesize(if ts == 3 { 4 } else { ts })
            .filters(&[])
            .blocksize(1024);
        let mut chunk = oxiblosc::compress(&content, &p).unwrap();
        chunk[3] = ts as u8;
        let h = oxiblosc::ChunkHeader::parse(&chunk).unwrap();
        assert_eq!((h.typesize as usize, h.blocksize), (ts, 1024));
        sc.update_chunk(0, &chunk).unwrap();
        for (lo, hi) in [
            ([5u64, 3u64], [6u64, 9u64]),
            ([2, 0], [9, 64]),
            ([0, 7], [64, 8]),
        ] {
            let shape = [hi[0] - lo[0], hi[1] - lo[1]];
            let mut got = vec![0u8; (shape[0] * shape[1] * 4) as usize];
            ndarray::get_slice(&mut sc, &meta, &lo, &hi, &mut got, &shape).unwrap();
            let want: Vec<u8> = (lo[0]..hi[0])
                .flat_map(|r| {
                    data[(r * 256 + lo[1] * 4) as usize..(r * 256 + hi[1] * 4) as usize].to_vec()
                })
                .collect();
            assert_eq!(got, want, "type size {ts}, {lo:?}..{hi:?}");
        }
    }
}

/// C-Blosc2's `b2nd/test_b2nd_roundtrip` shape of 16 dimensions, chunks
/// longer than the array in some (2 where the array has 1) and blocks of
/// one item: made from a C-order buffer, it reads back whole through
/// `get_slice` and `NdArray`.
#[test]
fn sixteen_dimensions_with_chunks_longer_than_the_array_read_back() {
    let shape = [2u64, 3, 1, 1, 1, 1, 8, 1, 2, 2, 1, 1, 1, 1, 1, 2];
    let chunks = [1u64, 2, 1, 1, 1, 2, 1, 2, 1, 1, 1, 1, 1, 1, 1, 1];
    let meta = NdMeta::new(&shape, &chunks, &[1; 16], "|u1");
    let n: u64 = shape.iter().product();
    let data: Vec<u8> = (0..n).map(|v| (v * 7) as u8).collect();
    let mut sc = ndarray::create(&meta, CParams::default(), &data).unwrap();
    let mut got = vec![0u8; n as usize];
    ndarray::get_slice(&mut sc, &meta, &[0; 16], &shape, &mut got, &shape).unwrap();
    assert_eq!(got, data);
    assert_eq!(NdArray::open(sc).unwrap().to_vec().unwrap(), data);
}
