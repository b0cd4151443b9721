//! NDArray edits against a model (since session 19): an array of any
//! geometry (1-4 dimensions, item size, chunk and block shapes, lossless
//! compression parameters), in memory, in a file or in a directory, takes
//! a sequence of `get_slice`, `set_slice`, `resize`, `insert` and `append`
//! calls with arguments from the input, valid or not. The same calls run
//! on a plain C-order buffer (the model). Each call must work exactly when
//! its arguments are valid by the documented rules; one that works leaves
//! the array equal to the model, one that fails leaves it as it was (and
//! `meta` unchanged). After each call the array reads whole as the model,
//! its `b2nd` metalayer reopens with the model's shape, and its frame
//! written by `to_cframe` reopens; at the end a file or directory array
//! reopens from disk with the model's items.
#![no_main]
use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use oxiblosc::ndarray::{self, NdArray, NdMeta};
use oxiblosc::schunk::{OpenOptions, SChunk};
use oxiblosc::{CParams, Codec, Filter};

#[path = "common.rs"]
mod common;

#[derive(Arbitrary, Debug)]
struct Input {
    ndim: u8,
    dims: [[u8; 3]; 4],
    itemsize: u8,
    codec: u8,
    clevel: u8,
    filters: [u8; 2],
    backend: u8,
    init: u8,
    ops: Vec<Op>,
}

#[derive(Arbitrary, Debug)]
enum Op {
    Get {
        a: [u8; 4],
        b: [u8; 4],
        pad: u8,
    },
    Set {
        a: [u8; 4],
        b: [u8; 4],
        pad: u8,
        fill: u8,
    },
    Resize {
        shape: [u8; 4],
        start: [u8; 4],
        at_end: bool,
    },
    Insert {
        axis: u8,
        pos: u8,
        n: u8,
        fill: u8,
    },
    Append {
        axis: u8,
        n: u8,
        fill: u8,
    },
}

/// The array as a C-order buffer.
struct Model {
    shape: Vec<u64>,
    is: usize,
    data: Vec<u8>,
}

impl Model {
    fn nitems(shape: &[u64]) -> u64 {
        shape.iter().product()
    }

    /// The flat item index of `idx` in `shape`.
    fn flat(shape: &[u64], idx: &[u64]) -> usize {
        idx.iter().zip(shape).fold(0u64, |f, (&i, &s)| f * s + i) as usize
    }

    /// Every index of the box `lo..hi`, in C order.
    fn each(lo: &[u64], hi: &[u64], mut f: impl FnMut(&[u64], usize)) {
        if lo.iter().zip(hi).any(|(a, b)| a >= b) {
            return;
        }
        let mut idx = lo.to_vec();
        let mut k = 0;
        loop {
            f(&idx, k);
            k += 1;
            let mut d = idx.len();
            loop {
                if d == 0 {
                    return;
                }
                d -= 1;
                idx[d] += 1;
                if idx[d] < hi[d] {
                    break;
                }
                idx[d] = lo[d];
            }
        }
    }

    /// The model after a resize to `w` with the changed dimensions' items
    /// gained or lost at `s` (new items zero).
    fn resized(&self, w: &[u64], s: &[u64]) -> Vec<u8> {
        let is = self.is;
        let mut out = vec![0u8; Self::nitems(w) as usize * is];
        let zero = vec![0u64; w.len()];
        let o = &self.shape;
        Self::each(&zero, w, |j, k| {
            let mut old = Vec::with_capacity(j.len());
            for d in 0..j.len() {
                let (od, wd, sd) = (o[d], w[d], s[d]);
                let x = j[d];
                let m = if x < sd {
                    Some(x)
                } else if wd >= od {
                    (x >= sd + (wd - od)).then(|| x - (wd - od))
                } else {
                    Some(x + (od - wd))
                };
                match m {
                    Some(v) => old.push(v),
                    None => return,
                }
            }
            let f = Self::flat(o, &old) * is;
            out[k * is..(k + 1) * is].copy_from_slice(&self.data[f..f + is]);
        });
        out
    }
}

/// Whether `resize(w, Some(s))` is valid for an array of shape `o` and
/// chunk shape `cs` (the rules `ndarray::resize` documents).
fn resize_valid(o: &[u64], w: &[u64], s: &[u64], cs: &[u64]) -> bool {
    (0..o.len()).all(|d| {
        s[d] <= o[d]
            && (w[d] >= o[d] || s[d] + (o[d] - w[d]) <= o[d])
            && (w[d] == o[d] || s[d] == o[d].min(w[d]) || s[d] % cs[d] == 0)
    })
}

fn items(n: usize, fill: u8) -> Vec<u8> {
    (0..n)
        .map(|i| fill ^ (i as u8).wrapping_mul(31) ^ (i >> 8) as u8)
        .collect()
}

/// A box from raw bytes: within `0..=shape+1` each side, so some boxes
/// are outside the array; whether it is inside.
fn boxed(shape: &[u64], a: &[u8; 4], b: &[u8; 4]) -> (Vec<u64>, Vec<u64>, bool) {
    let n = shape.len();
    let start: Vec<u64> = (0..n).map(|d| u64::from(a[d]) % (shape[d] + 2)).collect();
    let stop: Vec<u64> = (0..n)
        .map(|d| start[d] + u64::from(b[d]) % (shape[d] + 3 - start[d].min(shape[d] + 2)))
        .collect();
    let ok = (0..n).all(|d| start[d] <= stop[d] && stop[d] <= shape[d]);
    (start, stop, ok)
}

fn dir() -> std::path::PathBuf {
    std::env::temp_dir().join(format!("oxiblosc-fuzz-ndedit-{}", std::process::id()))
}

fuzz_target!(|inp: Input| {
    let n = usize::from(inp.ndim % 4) + 1;
    let is = [1usize, 2, 4, 8, 3, 16][usize::from(inp.itemsize) % 6];
    let shape: Vec<u64> = (0..n).map(|d| u64::from(inp.dims[d][0] % 13)).collect();
    let chunks: Vec<u64> = (0..n).map(|d| u64::from(inp.dims[d][1] % 6) + 1).collect();
    let blocks: Vec<u64> = (0..n)
        .map(|d| u64::from(inp.dims[d][2]) % chunks[d] + 1)
        .collect();
    let dtype = NdMeta::default_dtype(is);
    let mut meta = NdMeta::new(&shape, &chunks, &blocks, &dtype);
    let codec = [
        Codec::BloscLz,
        Codec::Lz4,
        Codec::Lz4Hc,
        Codec::Zlib,
        Codec::Zstd,
    ][usize::from(inp.codec) % 5];
    let filters: Vec<Filter> = inp
        .filters
        .iter()
        .filter_map(|&f| match f % 6 {
            1 => Some(Filter::Shuffle),
            2 => Some(Filter::BitShuffle),
            3 => Some(Filter::Delta),
            4 => Some(Filter::ByteDelta),
            _ => None,
        })
        .collect();
    let cparams = CParams::default()
        .codec(codec)
        .clevel(inp.clevel % 10)
        .filters(&filters)
        .nthreads(1);
    let mut model = Model {
        shape: shape.clone(),
        is,
        data: items(Model::nitems(&shape) as usize * is, inp.init),
    };
    let b = ndarray::builder(&meta, cparams)
        .expect("a valid geometry builds")
        .fsync(false);
    let base = dir();
    let backend = inp.backend % 4;
    let path = base.join(if backend == 2 { "a.b2nd" } else { "a.dir" });
    if backend >= 2 {
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir_all(&base).unwrap();
    }
    let built = match backend {
        2 => b.create_file(&path),
        3 => b.create_dir(&path),
        _ => b.build_memory(),
    };
    let mut sc = built.expect("a valid array builds");
    sc.set_dparams(common::dparams(1));
    ndarray::fill(&mut sc, &meta, &model.data).expect("a valid array fills");
    check(&mut sc, &meta, &model, "fill");
    for (k, op) in inp.ops.iter().take(12).enumerate() {
        let what = format!("op {k} {op:?}");
        let before = meta.clone();
        let (r, valid, want) = apply(&mut sc, &mut meta, &model, op);
        match (&r, valid) {
            (Ok(()), true) => {
                if let Some((s, d)) = want {
                    model.shape = s;
                    model.data = d;
                }
            }
            (Err(e), false) => {
                assert!(
                    matches!(e, oxiblosc::Error::InvalidParam(_)),
                    "{what}: refused with {e}"
                );
                assert_eq!(
                    meta.shape, before.shape,
                    "{what}: a refused call changed meta"
                );
            }
            (Ok(()), false) => panic!("{what}: invalid arguments accepted"),
            (Err(e), true) => panic!("{what}: valid arguments refused: {e}"),
        }
        assert_eq!(meta.shape, model.shape, "{what}: meta");
        check(&mut sc, &meta, &model, &what);
    }
    if backend >= 2 {
        drop(sc);
        let sc = OpenOptions::new()
            .read_only(true)
            .open(&path)
            .expect("the array reopens from disk");
        let mut a = NdArray::open(sc).expect("the array reopens as an NDArray");
        assert_eq!(a.meta().shape, model.shape, "shape on disk");
        let v = a.to_vec().expect("the array on disk reads");
        assert!(v == model.data, "the array on disk differs from the model");
        let _ = std::fs::remove_dir_all(&base);
    }
});

/// One call on the array and what the model says of it: its result,
/// whether its arguments were valid, and (for an edit) the model's new
/// shape and items.
#[allow(clippy::type_complexity)]
fn apply(
    sc: &mut SChunk,
    meta: &mut NdMeta,
    m: &Model,
    op: &Op,
) -> (oxiblosc::Result<()>, bool, Option<(Vec<u64>, Vec<u8>)>) {
    let n = m.shape.len();
    let is = m.is;
    match op {
        Op::Get { a, b, pad } | Op::Set { a, b, pad, .. } => {
            let (start, stop, ok) = boxed(&m.shape, a, b);
            let bshape: Vec<u64> = (0..n)
                .map(|d| stop[d].saturating_sub(start[d]) + u64::from(pad >> d & 1))
                .collect();
            let len = Model::nitems(&bshape) as usize * is;
            if let Op::Set { fill, .. } = op {
                let src = items(len, *fill);
                let r = ndarray::set_slice(sc, meta, &start, &stop, &src, &bshape);
                let mut data = m.data.clone();
                if ok {
                    let zero = vec![0u64; n];
                    let hi: Vec<u64> = (0..n).map(|d| stop[d] - start[d]).collect();
                    Model::each(&zero, &hi, |j, _| {
                        let at: Vec<u64> = (0..n).map(|d| start[d] + j[d]).collect();
                        let f = Model::flat(&m.shape, &at) * is;
                        let s = Model::flat(&bshape, j) * is;
                        data[f..f + is].copy_from_slice(&src[s..s + is]);
                    });
                }
                return (r, ok, Some((m.shape.clone(), data)));
            }
            let mut dst = vec![0xEEu8; len];
            let r = ndarray::get_slice(sc, meta, &start, &stop, &mut dst, &bshape);
            if r.is_ok() && ok {
                let mut want = vec![0xEEu8; len];
                let zero = vec![0u64; n];
                let hi: Vec<u64> = (0..n).map(|d| stop[d] - start[d]).collect();
                Model::each(&zero, &hi, |j, _| {
                    let at: Vec<u64> = (0..n).map(|d| start[d] + j[d]).collect();
                    let f = Model::flat(&m.shape, &at) * is;
                    let s = Model::flat(&bshape, j) * is;
                    want[s..s + is].copy_from_slice(&m.data[f..f + is]);
                });
                assert!(
                    dst == want,
                    "get_slice {start:?}..{stop:?} differs from the model"
                );
            }
            (r, ok, None)
        }
        Op::Resize {
            shape,
            start,
            at_end,
        } => {
            let w: Vec<u64> = (0..n).map(|d| u64::from(shape[d] % 14)).collect();
            let s: Vec<u64> = if *at_end {
                (0..n).map(|d| m.shape[d].min(w[d])).collect()
            } else {
                (0..n)
                    .map(|d| u64::from(start[d]) % (m.shape[d] + 2))
                    .collect()
            };
            let valid = resize_valid(&m.shape, &w, &s, &meta.chunkshape);
            let r = if *at_end {
                ndarray::resize(sc, meta, &w, None)
            } else {
                ndarray::resize(sc, meta, &w, Some(&s))
            };
            let want = valid.then(|| (w.clone(), m.resized(&w, &s)));
            (r, valid, want)
        }
        Op::Insert {
            axis, n: k, fill, ..
        }
        | Op::Append { axis, n: k, fill } => {
            let axis = usize::from(*axis) % (n + 1);
            let pos = match op {
                Op::Insert { pos, .. } if axis < n => u64::from(*pos) % (m.shape[axis] + 2),
                _ => m.shape.get(axis).copied().unwrap_or(0),
            };
            let add = u64::from(*k % 3) + 1;
            let other: u64 = (0..n).filter(|&d| d != axis).map(|d| m.shape[d]).product();
            let src = items((other * add) as usize * is, *fill);
            let r = match op {
                Op::Insert { .. } => ndarray::insert(sc, meta, &src, axis, pos),
                _ => ndarray::append(sc, meta, &src, axis),
            };
            let valid = axis < n
                && other > 0
                && pos <= m.shape[axis]
                && (pos == m.shape[axis] || pos % meta.chunkshape[axis] == 0);
            if !valid {
                return (r, false, None);
            }
            // The model: zeros inserted by a resize, then the new slices.
            let mut w = m.shape.clone();
            w[axis] += add;
            let mut s = m.shape.clone();
            s[axis] = pos;
            let mut data = m.resized(&w, &s);
            let mut lo = vec![0u64; n];
            lo[axis] = pos;
            let mut hi = w.clone();
            hi[axis] = pos + add;
            Model::each(&lo, &hi, |j, k| {
                let f = Model::flat(&w, j) * is;
                data[f..f + is].copy_from_slice(&src[k * is..(k + 1) * is]);
            });
            (r, true, Some((w, data)))
        }
    }
}

/// The array equals the model: read whole through `get_slice`, and as an
/// `NdArray` opened from the frame `to_cframe` writes (its metalayer gives
/// the model's shape).
fn check(sc: &mut SChunk, meta: &NdMeta, m: &Model, what: &str) {
    let n = m.shape.len();
    let len = m.data.len();
    let mut all = vec![0xEEu8; len];
    ndarray::get_slice(sc, meta, &vec![0; n], &m.shape, &mut all, &m.shape)
        .unwrap_or_else(|e| panic!("{what}: the whole array does not read: {e}"));
    assert!(all == m.data, "{what}: the array differs from the model");
    common::must_reopen(sc, what);
    let frame = sc.to_cframe().expect("to_cframe");
    let again = SChunk::from_cframe(frame).expect("the frame reopens");
    let mut a = NdArray::open(again)
        .unwrap_or_else(|e| panic!("{what}: the frame does not open as an NDArray: {e}"));
    assert_eq!(a.meta().shape, m.shape, "{what}: the metalayer's shape");
    let v = a
        .to_vec()
        .unwrap_or_else(|e| panic!("{what}: the frame's array does not read: {e}"));
    assert!(
        v == m.data,
        "{what}: the frame's array differs from the model"
    );
}
