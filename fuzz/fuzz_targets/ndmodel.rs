//! The NDArray model `ndarray_edit` and `capi_b2nd` share: an array as a
//! plain C-order buffer, the calls a fuzz input describes, each turned
//! into concrete arguments, whether they are valid by the rules
//! `oxiblosc::ndarray` documents, and what the array must hold after.
//! `capi_b2nd` runs it [`Model::c_style`]: shape changes as C-Blosc2's
//! `b2nd_resize` / `b2nd_insert` make them (whole chunks kept as stored,
//! their padding included, so the model also holds every chunk's padding).
#![allow(dead_code)]

use arbitrary::Arbitrary;

/// A fuzz input: an array, then calls on it.
#[derive(Arbitrary, Debug)]
pub struct Input {
    pub geometry: Geometry,
    pub ops: Vec<Op>,
}

/// An array's geometry and contents from the input.
#[derive(Arbitrary, Debug)]
pub struct Geometry {
    pub ndim: u8,
    pub dims: [[u8; 3]; 4],
    pub itemsize: u8,
    pub codec: u8,
    pub clevel: u8,
    pub filters: [u8; 2],
    pub backend: u8,
    pub init: u8,
}

impl Geometry {
    /// Shape (0 to [`cap`] per dimension), chunk shape (1-6), block
    /// shape (1 to the chunk's), item size (1-16 bytes).
    pub fn shapes(&self) -> (Vec<u64>, Vec<u64>, Vec<u64>, usize) {
        let n = usize::from(self.ndim % 4) + 1;
        let is = [1usize, 2, 4, 8, 3, 16][usize::from(self.itemsize) % 6];
        let shape: Vec<u64> = (0..n)
            .map(|d| u64::from(self.dims[d][0]) % (cap(n) + 1))
            .collect();
        let chunks: Vec<u64> = (0..n).map(|d| u64::from(self.dims[d][1] % 6) + 1).collect();
        let blocks: Vec<u64> = (0..n)
            .map(|d| u64::from(self.dims[d][2]) % chunks[d] + 1)
            .collect();
        (shape, chunks, blocks, is)
    }

    /// Filter codes (Blosc2 numbering) of the lossless filters picked:
    /// shuffle 1, bitshuffle 2, delta 3, bytedelta 35.
    pub fn filter_codes(&self) -> Vec<u8> {
        self.filters
            .iter()
            .filter_map(|&f| match f % 6 {
                1 => Some(1),
                2 => Some(2),
                3 => Some(3),
                4 => Some(35),
                _ => None,
            })
            .collect()
    }
}

/// The largest dimension an array of `n` dimensions starts with or is
/// resized to: at most a few hundred chunks (a directory holds a file
/// per chunk) and items.
pub fn cap(n: usize) -> u64 {
    [40, 12, 8, 5][n - 1]
}

/// The most items a call may leave: calls that would grow the array past
/// it are skipped (each call is checked against the whole array).
pub const MAX_ITEMS: u64 = 4096;

/// One call, as the input describes it.
#[derive(Arbitrary, Debug)]
pub enum Op {
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

/// A call with its concrete arguments.
#[derive(Debug)]
pub enum Call {
    /// Read `start..stop` into a buffer of shape `bshape`.
    Get {
        start: Vec<u64>,
        stop: Vec<u64>,
        bshape: Vec<u64>,
    },
    /// Write `src`, of shape `bshape`, into `start..stop`.
    Set {
        start: Vec<u64>,
        stop: Vec<u64>,
        bshape: Vec<u64>,
        src: Vec<u8>,
    },
    /// Resize to `shape`, changed dimensions at `start` (`None`: at their
    /// ends).
    Resize {
        shape: Vec<u64>,
        start: Option<Vec<u64>>,
    },
    /// Insert `src` at `pos` of `axis` (`append`: through `append`).
    Insert {
        axis: usize,
        pos: u64,
        src: Vec<u8>,
        append: bool,
    },
}

/// A call and what the model says of it.
pub struct Planned {
    pub call: Call,
    /// The arguments are valid: the call must work.
    pub valid: bool,
    /// The array's shape and items after the call, when valid.
    pub after: Option<(Vec<u64>, Vec<u8>)>,
    /// What a valid `Get` must give (a buffer of `bshape`, `0xEE` where
    /// the box is not).
    pub got: Option<Vec<u8>>,
    /// C-style: every chunk's items, padding included, after the call.
    pub ext_after: Option<Vec<u8>>,
}

/// The array as a C-order buffer.
pub struct Model {
    pub shape: Vec<u64>,
    pub chunkshape: Vec<u64>,
    pub is: usize,
    pub data: Vec<u8>,
    /// Shape changes as C-Blosc2 makes them ([`Model::c_style`]).
    pub c_style: bool,
    /// C-style: the items of every chunk, padding included, as a C-order
    /// array of [`ext_shape`] (empty otherwise).
    pub ext: Vec<u8>,
}

/// The shape of whole chunks of `cs` covering `shape`.
fn ext_shape(shape: &[u64], cs: &[u64]) -> Vec<u64> {
    shape
        .iter()
        .zip(cs)
        .map(|(&s, &c)| s.div_ceil(c) * c)
        .collect()
}

/// The items of `data` (of `shape`) in an ext array of whole chunks,
/// padding zero.
fn to_ext(shape: &[u64], cs: &[u64], is: usize, data: &[u8]) -> Vec<u8> {
    let es = ext_shape(shape, cs);
    let mut ext = vec![0u8; nitems(&es) as usize * is];
    let zero = vec![0u64; shape.len()];
    each(&zero, shape, |j, k| {
        let f = flat(&es, j) * is;
        ext[f..f + is].copy_from_slice(&data[k * is..(k + 1) * is]);
    });
    ext
}

/// The items of `shape` in an ext array.
fn from_ext(shape: &[u64], cs: &[u64], is: usize, ext: &[u8]) -> Vec<u8> {
    let es = ext_shape(shape, cs);
    let mut out = vec![0u8; nitems(shape) as usize * is];
    let zero = vec![0u64; shape.len()];
    each(&zero, shape, |j, k| {
        let f = flat(&es, j) * is;
        out[k * is..(k + 1) * is].copy_from_slice(&ext[f..f + is]);
    });
    out
}

/// Whether a resize of `o` to `w` changed at `s` is valid by C-Blosc2's
/// rule (`ndarray::resize_keep_chunks`): away from its end, a dimension
/// changes by whole chunks at a chunk boundary.
fn resize_valid_c(o: &[u64], w: &[u64], s: &[u64], cs: &[u64]) -> bool {
    (0..o.len()).all(|d| {
        let at_end = if w[d] >= o[d] {
            s[d] == o[d]
        } else {
            s[d] + (o[d] - w[d]) == o[d]
        };
        s[d] <= o[d]
            && (w[d] >= o[d] || s[d] + (o[d] - w[d]) <= o[d])
            && (w[d] == o[d]
                || at_end
                || (s[d].is_multiple_of(cs[d]) && w[d].abs_diff(o[d]).is_multiple_of(cs[d])))
    })
}

/// C-style resize of the ext array `ext` (shape `o`) to `w`, changed at
/// `s`: a shrink removes the chunks starting in `s..s + (o - w)`, a growth
/// adds zero chunks at the new chunks starting in `s..s + (w - o)`, every
/// other chunk is kept whole, in order.
fn resize_ext(ext: &[u8], o: &[u64], w: &[u64], s: &[u64], cs: &[u64], is: usize) -> Vec<u8> {
    let eo = ext_shape(o, cs);
    let ew = ext_shape(w, cs);
    let mut out = vec![0u8; nitems(&ew) as usize * is];
    let zero = vec![0u64; w.len()];
    each(&zero, &ew, |x, k| {
        let mut old = Vec::with_capacity(x.len());
        for d in 0..x.len() {
            let (c, off) = (x[d] / cs[d], x[d] % cs[d]);
            let delta = w[d].abs_diff(o[d]);
            let (lo, hi) = (s[d].div_ceil(cs[d]), (s[d] + delta).div_ceil(cs[d]));
            let oc = if c < lo {
                c
            } else if w[d] >= o[d] {
                if c < hi {
                    return;
                }
                c - (hi - lo)
            } else {
                c + (hi - lo)
            };
            if oc * cs[d] >= eo[d] {
                return;
            }
            old.push(oc * cs[d] + off);
        }
        let f = flat(&eo, &old) * is;
        out[k * is..(k + 1) * is].copy_from_slice(&ext[f..f + is]);
    });
    out
}

/// C-style write of `src` (a C-order box of shape `hi - lo`) into the ext
/// array `ext` of an array of `shape`: a chunk whose items inside the array
/// the box holds all is written from zeros (its padding zero after), the
/// others keep their padding.
fn write_ext(
    ext: &mut [u8],
    shape: &[u64],
    cs: &[u64],
    is: usize,
    lo: &[u64],
    hi: &[u64],
    src: &[u8],
) {
    let n = shape.len();
    if (0..n).any(|d| lo[d] >= hi[d]) {
        return;
    }
    let es = ext_shape(shape, cs);
    let clo: Vec<u64> = (0..n).map(|d| lo[d] / cs[d]).collect();
    let chi: Vec<u64> = (0..n).map(|d| hi[d].div_ceil(cs[d])).collect();
    each(&clo, &chi, |c, _| {
        let covered =
            (0..n).all(|d| lo[d] <= c[d] * cs[d] && ((c[d] + 1) * cs[d]).min(shape[d]) <= hi[d]);
        if covered {
            let a: Vec<u64> = (0..n).map(|d| c[d] * cs[d]).collect();
            let b: Vec<u64> = (0..n).map(|d| (c[d] + 1) * cs[d]).collect();
            each(&a, &b, |j, _| {
                let f = flat(&es, j) * is;
                ext[f..f + is].fill(0);
            });
        }
    });
    let bshape: Vec<u64> = (0..n).map(|d| hi[d] - lo[d]).collect();
    let zero = vec![0u64; n];
    each(&zero, &bshape, |j, k| {
        let at: Vec<u64> = (0..n).map(|d| lo[d] + j[d]).collect();
        let f = flat(&es, &at) * is;
        ext[f..f + is].copy_from_slice(&src[k * is..(k + 1) * is]);
    });
}

pub fn nitems(shape: &[u64]) -> u64 {
    shape.iter().product()
}

/// The flat item index of `idx` in `shape`.
fn flat(shape: &[u64], idx: &[u64]) -> usize {
    idx.iter().zip(shape).fold(0u64, |f, (&i, &s)| f * s + i) as usize
}

/// Every index of the box `lo..hi`, in C order, with its rank.
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

/// `n` bytes of a pattern seeded by `fill`.
pub fn items(n: usize, fill: u8) -> Vec<u8> {
    (0..n)
        .map(|i| fill ^ (i as u8).wrapping_mul(31) ^ (i >> 8) as u8)
        .collect()
}

/// A box from raw bytes, each side within `0..=shape+2`, so some boxes are
/// outside the array; whether it is inside.
fn boxed(shape: &[u64], a: &[u8; 4], b: &[u8; 4]) -> (Vec<u64>, Vec<u64>, bool) {
    let n = shape.len();
    let start: Vec<u64> = (0..n).map(|d| u64::from(a[d]) % (shape[d] + 2)).collect();
    let stop: Vec<u64> = (0..n)
        .map(|d| start[d] + u64::from(b[d]) % (shape[d] + 3 - start[d]))
        .collect();
    let ok = (0..n).all(|d| start[d] <= stop[d] && stop[d] <= shape[d]);
    (start, stop, ok)
}

/// Whether a resize of `o` to `w` with changed dimensions at `s` is valid
/// for chunks of `cs` (the rules `ndarray::resize` documents).
fn resize_valid(o: &[u64], w: &[u64], s: &[u64], cs: &[u64]) -> bool {
    (0..o.len()).all(|d| {
        s[d] <= o[d]
            && (w[d] >= o[d] || s[d] + (o[d] - w[d]) <= o[d])
            && (w[d] == o[d] || s[d] == o[d].min(w[d]) || s[d].is_multiple_of(cs[d]))
    })
}

impl Model {
    pub fn new(shape: Vec<u64>, chunkshape: Vec<u64>, is: usize, init: u8) -> Model {
        let data = items(nitems(&shape) as usize * is, init);
        Model {
            shape,
            chunkshape,
            is,
            data,
            c_style: false,
            ext: Vec::new(),
        }
    }

    /// The same model, its shape changes C-Blosc2's (`b2nd.h`), its
    /// chunks' padding zero (as a whole write leaves it).
    pub fn c_style(mut self) -> Model {
        self.c_style = true;
        self.ext = to_ext(&self.shape, &self.chunkshape, self.is, &self.data);
        self
    }

    /// Write item `f` (a flat index) as a call that keeps padding does.
    pub fn write_item(&mut self, f: usize, v: &[u8]) {
        let is = self.is;
        self.data[f * is..(f + 1) * is].copy_from_slice(v);
        if self.c_style {
            let mut idx = vec![0u64; self.shape.len()];
            let mut r = f as u64;
            for d in (0..idx.len()).rev() {
                idx[d] = r % self.shape[d];
                r /= self.shape[d];
            }
            let e = flat(&ext_shape(&self.shape, &self.chunkshape), &idx) * is;
            self.ext[e..e + is].copy_from_slice(v);
        }
    }

    /// The items after a resize to `w` with the changed dimensions' items
    /// gained or lost at `s` (new items zero).
    fn resized(&self, w: &[u64], s: &[u64]) -> Vec<u8> {
        let is = self.is;
        let mut out = vec![0u8; nitems(w) as usize * is];
        let zero = vec![0u64; w.len()];
        let o = &self.shape;
        each(&zero, w, |j, k| {
            let mut old = Vec::with_capacity(j.len());
            for d in 0..j.len() {
                let (od, wd, sd, x) = (o[d], w[d], s[d], j[d]);
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
            let f = flat(o, &old) * is;
            out[k * is..(k + 1) * is].copy_from_slice(&self.data[f..f + is]);
        });
        out
    }

    /// The call `op` describes, with the model's verdict.
    pub fn plan(&self, op: &Op) -> Planned {
        let n = self.shape.len();
        let is = self.is;
        match op {
            Op::Get { a, b, pad } | Op::Set { a, b, pad, .. } => {
                let (start, stop, ok) = boxed(&self.shape, a, b);
                let bshape: Vec<u64> = (0..n)
                    .map(|d| stop[d].saturating_sub(start[d]) + u64::from(pad >> d & 1))
                    .collect();
                let len = nitems(&bshape) as usize * is;
                let zero = vec![0u64; n];
                let hi: Vec<u64> = (0..n).map(|d| stop[d].saturating_sub(start[d])).collect();
                // Each item of the box: (offset in the array, in the buffer).
                let mut pairs = Vec::new();
                if ok {
                    each(&zero, &hi, |j, _| {
                        let at: Vec<u64> = (0..n).map(|d| start[d] + j[d]).collect();
                        pairs.push((flat(&self.shape, &at) * is, flat(&bshape, j) * is));
                    });
                }
                if let Op::Set { fill, .. } = op {
                    let src = items(len, *fill);
                    let mut data = self.data.clone();
                    for &(f, s) in &pairs {
                        data[f..f + is].copy_from_slice(&src[s..s + is]);
                    }
                    let ext_after = (ok && self.c_style).then(|| {
                        // The box's items in C order, from the buffer.
                        let mut boxed = vec![0u8; nitems(&hi) as usize * is];
                        each(&zero, &hi, |j, k| {
                            let b = flat(&bshape, j) * is;
                            boxed[k * is..(k + 1) * is].copy_from_slice(&src[b..b + is]);
                        });
                        let mut ext = self.ext.clone();
                        let cs = &self.chunkshape;
                        write_ext(&mut ext, &self.shape, cs, is, &start, &stop, &boxed);
                        ext
                    });
                    return Planned {
                        call: Call::Set {
                            start,
                            stop,
                            bshape,
                            src,
                        },
                        valid: ok,
                        after: ok.then(|| (self.shape.clone(), data)),
                        got: None,
                        ext_after,
                    };
                }
                let mut want = vec![0xEEu8; len];
                for &(f, s) in &pairs {
                    want[s..s + is].copy_from_slice(&self.data[f..f + is]);
                }
                Planned {
                    call: Call::Get {
                        start,
                        stop,
                        bshape,
                    },
                    valid: ok,
                    after: ok.then(|| (self.shape.clone(), self.data.clone())),
                    got: ok.then_some(want),
                    ext_after: (ok && self.c_style).then(|| self.ext.clone()),
                }
            }
            Op::Resize {
                shape,
                start,
                at_end,
            } => {
                let w: Vec<u64> = (0..n).map(|d| u64::from(shape[d]) % (cap(n) + 2)).collect();
                let s: Vec<u64> = if *at_end {
                    (0..n).map(|d| self.shape[d].min(w[d])).collect()
                } else {
                    (0..n)
                        .map(|d| u64::from(start[d]) % (self.shape[d] + 2))
                        .collect()
                };
                let cs = &self.chunkshape;
                let (valid, after, ext_after) = if self.c_style {
                    let valid = resize_valid_c(&self.shape, &w, &s, cs);
                    let ext = valid.then(|| resize_ext(&self.ext, &self.shape, &w, &s, cs, is));
                    let after = ext.as_ref().map(|e| (w.clone(), from_ext(&w, cs, is, e)));
                    (valid, after, ext)
                } else {
                    let valid = resize_valid(&self.shape, &w, &s, cs);
                    (
                        valid,
                        valid.then(|| (w.clone(), self.resized(&w, &s))),
                        None,
                    )
                };
                Planned {
                    call: Call::Resize {
                        shape: w,
                        start: (!*at_end).then_some(s),
                    },
                    valid,
                    after,
                    got: None,
                    ext_after,
                }
            }
            Op::Insert {
                axis, n: k, fill, ..
            }
            | Op::Append { axis, n: k, fill } => {
                let append = matches!(op, Op::Append { .. });
                let axis = usize::from(*axis) % (n + 1);
                let pos = match op {
                    Op::Insert { pos, .. } if axis < n => u64::from(*pos) % (self.shape[axis] + 2),
                    _ => self.shape.get(axis).copied().unwrap_or(0),
                };
                let add = u64::from(*k % 3) + 1;
                let other: u64 = (0..n)
                    .filter(|&d| d != axis)
                    .map(|d| self.shape[d])
                    .product();
                let src = items((other * add) as usize * is, *fill);
                let valid = axis < n
                    && other > 0
                    && pos <= self.shape[axis]
                    && (pos == self.shape[axis]
                        || (pos % self.chunkshape[axis] == 0
                            && (!self.c_style || add % self.chunkshape[axis] == 0)));
                let cs = &self.chunkshape;
                let ext_after = (valid && self.c_style).then(|| {
                    // A C-style resize (at the end, or whole chunks at
                    // `pos`), then the new items written.
                    let mut w = self.shape.clone();
                    w[axis] += add;
                    let mut s = self.shape.clone();
                    s[axis] = pos;
                    let mut ext = resize_ext(&self.ext, &self.shape, &w, &s, cs, is);
                    let mut lo = vec![0u64; n];
                    lo[axis] = pos;
                    let mut hi = w.clone();
                    hi[axis] = pos + add;
                    write_ext(&mut ext, &w, cs, is, &lo, &hi, &src);
                    ext
                });
                let after = valid.then(|| {
                    // Zeros inserted by a resize, then the new slices.
                    let mut w = self.shape.clone();
                    w[axis] += add;
                    let mut s = self.shape.clone();
                    s[axis] = pos;
                    let mut data = self.resized(&w, &s);
                    let mut lo = vec![0u64; n];
                    lo[axis] = pos;
                    let mut hi = w.clone();
                    hi[axis] = pos + add;
                    each(&lo, &hi, |j, k| {
                        let f = flat(&w, j) * is;
                        data[f..f + is].copy_from_slice(&src[k * is..(k + 1) * is]);
                    });
                    (w, data)
                });
                // C-style, every new item is written too: the items are the
                // same, read from the chunks.
                if let (Some((w, data)), Some(e)) = (&after, &ext_after) {
                    assert!(
                        *data == from_ext(w, cs, is, e),
                        "the two models of an insert differ"
                    );
                }
                Planned {
                    call: Call::Insert {
                        axis,
                        pos,
                        src,
                        append,
                    },
                    valid,
                    after,
                    got: None,
                    ext_after,
                }
            }
        }
    }

    /// Whether the call leaves more than [`MAX_ITEMS`] items.
    pub fn too_large(p: &Planned) -> bool {
        p.after.as_ref().is_some_and(|(s, _)| nitems(s) > MAX_ITEMS)
    }

    /// Take the state a valid call leaves.
    pub fn commit(&mut self, p: Planned) {
        if let Some((s, d)) = p.after {
            self.shape = s;
            self.data = d;
        }
        if let Some(e) = p.ext_after {
            self.ext = e;
        }
    }
}
