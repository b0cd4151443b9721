//! Selections of items: sparse gathers by flat C-order coordinates
//! ([`get_items`], C-Blosc2's `b2nd_get_sparse_cbuffer`) and orthogonal
//! selections, a list of indices per dimension whose every combination is
//! an item ([`get_orthogonal`], [`set_orthogonal`], its
//! `b2nd_get_orthogonal_selection` / `b2nd_set_orthogonal_selection`).
//!
//! Indices may repeat and come in any order; every one must be inside the
//! array, checked before anything is decoded (C-Blosc2 accepts an index
//! equal to the dimension's length). The requested items are grouped by
//! chunk: a read decodes each chunk the selection touches once, and in it
//! only the blocks holding requested items (a chunk of zeros not at all);
//! a write decodes, patches and compresses each touched chunk once and
//! changes the super-chunk once, as [`super::set_slice`] does (a failed
//! write leaves the array as it was).

use super::layout::Layout;
use super::meta::{MAX_DIM, NdMeta};
use super::slice::{ChunkReader, layout_of, patch_chunks};
use crate::error::{Error, Result};
use crate::schunk::SChunk;

/// Read the runs `(chunk_item, dst_item, n)` of chunk `ci` (`n` items
/// that follow on in both the decoded chunk and `dst`, all in bounds) into
/// `dst` through `r`, decoding only the blocks they are in.
fn read_runs(
    r: &mut ChunkReader,
    sc: &mut SChunk,
    ci: u64,
    runs: impl Iterator<Item = (usize, usize, usize)> + Clone,
    dst: &mut [u8],
    is: usize,
) -> Result<()> {
    if !r.begin(sc, ci)? {
        for (c, _, n) in runs.clone() {
            r.mark(c, n);
        }
        r.decode(sc, ci)?;
    }
    for (c, o, n) in runs {
        r.copy(c, n, &mut dst[o * is..(o + n) * is]);
    }
    Ok(())
}

/// Read the items at the flat C-order coordinates `coords` (each below the
/// array's item count; repeated and in any order) of the NDArray in `sc`
/// (described by `meta`) into `dst`, one item after the other in the order
/// of `coords`. Each chunk holding a requested item is read once, and only
/// its blocks holding one are decoded.
///
/// ```
/// use oxiblosc::ndarray::{self, NdMeta, get_items};
/// use oxiblosc::CParams;
/// let data: Vec<u8> = (0..35u8).collect();
/// let meta = NdMeta::new(&[7, 5], &[3, 4], &[2, 3], "|u1");
/// let mut sc = ndarray::create(&meta, CParams::default(), &data).unwrap();
/// let mut out = [0u8; 4];
/// get_items(&mut sc, &meta, &[34, 0, 13, 0], &mut out).unwrap();
/// assert_eq!(out, [34, 0, 13, 0]);
/// assert!(get_items(&mut sc, &meta, &[35], &mut [0u8; 1]).is_err());
/// ```
///
/// # Errors
/// [`Error::InvalidParam`] for a coordinate at or past the array's item
/// count, a `dst` of another size than the coordinates' items, chunks
/// larger than the super-chunk's [`crate::DParams::max_output`];
/// [`Error::Corrupt`] when the super-chunk disagrees with `meta` (as
/// [`super::get_slice`]); the super-chunk's errors.
pub fn get_items(sc: &mut SChunk, meta: &NdMeta, coords: &[u64], dst: &mut [u8]) -> Result<()> {
    let is = sc.typesize();
    if coords.len().checked_mul(is) != Some(dst.len()) {
        return Err(Error::InvalidParam(format!(
            "a {}-byte buffer for {} items of {is} bytes",
            dst.len(),
            coords.len()
        )));
    }
    let layout = layout_of(sc, meta)?;
    let n = meta.ndim();
    // Every coordinate's chunk, item in the chunk and place in `dst`,
    // sorted to group them by chunk.
    let mut at = Vec::with_capacity(coords.len());
    let mut x = [0u64; MAX_DIM];
    for (o, &f) in coords.iter().enumerate() {
        let outside = || {
            Error::InvalidParam(format!(
                "coordinate {f} outside the array's {} items",
                layout.nitems()
            ))
        };
        if f >= layout.nitems() {
            return Err(outside());
        }
        // In bounds: no dimension is 0.
        let mut rem = f;
        for d in (0..n).rev() {
            x[d] = rem % meta.shape[d];
            rem /= meta.shape[d];
        }
        let (ci, c) = layout.locate(&x[..n]).ok_or_else(outside)?;
        at.push((ci, c, o));
    }
    at.sort_unstable();
    let mut r = ChunkReader::new(&layout);
    for group in at.chunk_by(|a, b| a.0 == b.0) {
        let items = group.iter().map(|&(_, c, o)| (c, o, 1));
        read_runs(&mut r, sc, group[0].0, items, dst, is)?;
    }
    r.finish();
    Ok(())
}

/// One dimension of an orthogonal selection.
struct Axis {
    /// For each `(index, place in the selection)` of the dimension, by
    /// index then place: what its index adds to an item's offset in
    /// its chunk ([`Layout::chunk_offset_part`]) and its place to the
    /// item's offset in the buffer.
    parts: Vec<(u64, u64)>,
    /// Runs of `parts` in one chunk of the dimension: `(chunk
    /// coordinate, start, end)`, by chunk coordinate.
    groups: Vec<(u64, usize, usize)>,
}

/// An orthogonal selection, checked (see [`check_selection`]), each
/// dimension's indices grouped by chunk.
struct Orthogonal {
    axes: Vec<Axis>,
}

impl Orthogonal {
    fn new(meta: &NdMeta, layout: &Layout, selection: &[&[u64]], bshape: &[u64]) -> Orthogonal {
        let n = meta.ndim();
        // Saturating: only used when every dimension selects an item, the
        // buffer's items then checked to fit.
        let mut bstrides = vec![1u64; n];
        for d in (0..n.saturating_sub(1)).rev() {
            bstrides[d] = bstrides[d + 1].saturating_mul(bshape[d + 1]);
        }
        let axes = (0..n)
            .map(|d| {
                let mut sorted: Vec<(u64, u64)> = selection[d]
                    .iter()
                    .enumerate()
                    .map(|(p, &x)| (x, p as u64))
                    .collect();
                sorted.sort_unstable();
                let mut groups: Vec<(u64, usize, usize)> = Vec::new();
                for (k, &(x, _)) in sorted.iter().enumerate() {
                    let cc = x / meta.chunkshape[d];
                    match groups.last_mut() {
                        Some(g) if g.0 == cc => g.2 = k + 1,
                        _ => groups.push((cc, k, k + 1)),
                    }
                }
                let parts = sorted
                    .iter()
                    .map(|&(x, p)| {
                        (
                            layout.chunk_offset_part(d, x),
                            p.saturating_mul(bstrides[d]),
                        )
                    })
                    .collect();
                Axis { parts, groups }
            })
            .collect();
        Orthogonal { axes }
    }

    /// The chunks holding selected items, in C order of the grid.
    fn chunks(&self, layout: &Layout) -> Vec<u64> {
        let n = self.axes.len();
        if self.axes.iter().any(|a| a.groups.is_empty()) {
            return Vec::new();
        }
        let grid = layout.grid();
        let mut out = Vec::new();
        let mut g = [0usize; MAX_DIM];
        loop {
            let mut ci = 0u64;
            for d in 0..n {
                ci = ci * grid[d] + self.axes[d].groups[g[d]].0;
            }
            out.push(ci);
            let mut d = n;
            loop {
                if d == 0 {
                    return out;
                }
                d -= 1;
                g[d] += 1;
                if g[d] < self.axes[d].groups.len() {
                    break;
                }
                g[d] = 0;
            }
        }
    }

    /// The selected items of chunk `ci` into `out` as runs `(chunk_item,
    /// buffer_item, n)` of items that follow on in both, in C order of
    /// their places in the buffer among the items of one array item (a
    /// repeated index's later place after its earlier, never in one run
    /// with it, so a write of them in this order leaves the later).
    fn runs(&self, layout: &Layout, ci: u64, out: &mut Vec<(usize, usize, usize)>) {
        out.clear();
        let n = self.axes.len();
        if n == 0 {
            // The one item of a 0-dimensional array.
            out.push((0, 0, 1));
            return;
        }
        let grid = layout.grid();
        let (mut lo, mut hi) = ([0usize; MAX_DIM], [0usize; MAX_DIM]);
        let mut rem = ci;
        for d in (0..n).rev() {
            let cc = rem % grid[d];
            rem /= grid[d];
            let groups = &self.axes[d].groups;
            let Ok(k) = groups.binary_search_by_key(&cc, |g| g.0) else {
                return;
            };
            (lo[d], hi[d]) = (groups[k].1, groups[k].2);
        }
        let last = &self.axes[n - 1].parts[lo[n - 1]..hi[n - 1]];
        let mut k = lo;
        loop {
            // The offsets of the dimensions before the last.
            let (mut c0, mut b0) = (0u64, 0u64);
            for (axis, &kd) in self.axes[..n - 1].iter().zip(&k) {
                let (c, b) = axis.parts[kd];
                c0 += c;
                b0 += b;
            }
            for &(c, b) in last {
                let (c, b) = ((c0 + c) as usize, (b0 + b) as usize);
                match out.last_mut() {
                    Some((pc, pb, m)) if *pc + *m == c && *pb + *m == b => *m += 1,
                    _ => out.push((c, b, 1)),
                }
            }
            // The next row: an odometer over the other dimensions' runs.
            let mut d = n - 1;
            loop {
                if d == 0 {
                    return;
                }
                d -= 1;
                k[d] += 1;
                if k[d] < hi[d] {
                    break;
                }
                k[d] = lo[d];
            }
        }
    }
}

/// Check an orthogonal selection and its buffer shape against the array;
/// the buffer's byte size.
fn check_selection(
    meta: &NdMeta,
    selection: &[&[u64]],
    bshape: &[u64],
    itemsize: usize,
) -> Result<usize> {
    let n = meta.ndim();
    if selection.len() != n || bshape.len() != n {
        return Err(Error::InvalidParam(format!(
            "the selection and buffer shape need {n} dimensions"
        )));
    }
    for d in 0..n {
        if let Some(&x) = selection[d].iter().find(|&&x| x >= meta.shape[d]) {
            return Err(Error::InvalidParam(format!(
                "index {x} outside dimension {d} of length {}",
                meta.shape[d]
            )));
        }
        if bshape[d] < selection[d].len() as u64 {
            return Err(Error::InvalidParam(format!(
                "buffer shape {} smaller than the selection's {} in dimension {d}",
                bshape[d],
                selection[d].len()
            )));
        }
    }
    super::box_bytes(bshape, itemsize)
        .and_then(|b| usize::try_from(b).ok())
        .ok_or_else(|| Error::InvalidParam("buffer shape overflows".into()))
}

/// Read an orthogonal selection of the NDArray in `sc` (described by
/// `meta`) into `dst`, a C-order buffer of shape `bshape` (each dimension
/// at least its selection's length): `selection[d]` lists indices along
/// dimension `d` (repeated and in any order), and the item at place
/// `(i0, i1, ..)` of the buffer is the array's item `(selection[0][i0],
/// selection[1][i1], ..)`. The rest of `dst` is left as is. Each chunk
/// holding a selected item is read once, and only its blocks holding one
/// are decoded.
///
/// ```
/// use oxiblosc::ndarray::{self, NdMeta, get_orthogonal};
/// use oxiblosc::CParams;
/// let data: Vec<u8> = (0..35u8).collect();
/// let meta = NdMeta::new(&[7, 5], &[3, 4], &[2, 3], "|u1");
/// let mut sc = ndarray::create(&meta, CParams::default(), &data).unwrap();
/// // Rows 6 and 1, columns 4, 0 and 4: item (i, j) is rows[i] * 5 + cols[j].
/// let mut out = [0u8; 6];
/// get_orthogonal(&mut sc, &meta, &[&[6, 1], &[4, 0, 4]], &mut out, &[2, 3]).unwrap();
/// assert_eq!(out, [34, 30, 34, 9, 5, 9]);
/// // In a wider buffer, at its origin.
/// let mut wide = [0xffu8; 8];
/// get_orthogonal(&mut sc, &meta, &[&[6, 1], &[4, 0, 4]], &mut wide, &[2, 4]).unwrap();
/// assert_eq!(wide, [34, 30, 34, 0xff, 9, 5, 9, 0xff]);
/// ```
///
/// # Errors
/// [`Error::InvalidParam`] for an index at or past its dimension's length,
/// a selection or buffer shape of another number of dimensions than the
/// array's, a buffer shape smaller than the selection or overflowing, a
/// `dst` of another size than the buffer shape's, chunks larger than the
/// super-chunk's [`crate::DParams::max_output`]; [`Error::Corrupt`] when
/// the super-chunk disagrees with `meta` (as [`super::get_slice`]); the
/// super-chunk's errors.
pub fn get_orthogonal(
    sc: &mut SChunk,
    meta: &NdMeta,
    selection: &[&[u64]],
    dst: &mut [u8],
    bshape: &[u64],
) -> Result<()> {
    let need = check_selection(meta, selection, bshape, sc.typesize())?;
    if dst.len() != need {
        return Err(Error::InvalidParam(format!(
            "a {}-byte buffer for a shape of {need} bytes",
            dst.len()
        )));
    }
    let layout = layout_of(sc, meta)?;
    let sel = Orthogonal::new(meta, &layout, selection, bshape);
    let mut r = ChunkReader::new(&layout);
    let mut items = Vec::new();
    let is = layout.itemsize();
    for ci in sel.chunks(&layout) {
        sel.runs(&layout, ci, &mut items);
        read_runs(&mut r, sc, ci, items.iter().copied(), dst, is)?;
    }
    r.finish();
    Ok(())
}

/// Write an orthogonal selection of the NDArray in `sc` from `src`, a
/// C-order buffer of shape `bshape` laid out as [`get_orthogonal`] reads
/// one (its items outside the selection unused). Where an index repeats,
/// the item at the later place in the buffer (in C order) is the one
/// written. Each chunk holding a selected item is decompressed, patched
/// and compressed again, and the super-chunk changed once (a failed call
/// leaves the array as it was).
///
/// ```
/// use oxiblosc::ndarray::{self, NdMeta, get_items, set_orthogonal};
/// use oxiblosc::CParams;
/// let meta = NdMeta::new(&[7, 5], &[3, 4], &[2, 3], "|u1");
/// let mut sc = ndarray::create(&meta, CParams::default(), &[0u8; 35]).unwrap();
/// // Rows 0 and 6, column 2 twice: the later column's items are written.
/// set_orthogonal(&mut sc, &meta, &[&[0, 6], &[2, 2]], &[1, 2, 3, 4], &[2, 2]).unwrap();
/// let mut out = [0u8; 3];
/// get_items(&mut sc, &meta, &[2, 32, 3], &mut out).unwrap();
/// assert_eq!(out, [2, 4, 0]);
/// ```
///
/// # Errors
/// As [`get_orthogonal`] (with `src` for `dst`); a read-only super-chunk's
/// errors.
pub fn set_orthogonal(
    sc: &mut SChunk,
    meta: &NdMeta,
    selection: &[&[u64]],
    src: &[u8],
    bshape: &[u64],
) -> Result<()> {
    let is = sc.typesize();
    let need = check_selection(meta, selection, bshape, is)?;
    if src.len() != need {
        return Err(Error::InvalidParam(format!(
            "a {}-byte buffer for a shape of {need} bytes",
            src.len()
        )));
    }
    // Before anything is sized by the chunk count (see `patch_chunks`).
    sc.check_editable()?;
    sc.check_index_editable()?;
    let layout = layout_of(sc, meta)?;
    let sel = Orthogonal::new(meta, &layout, selection, bshape);
    let chunks = sel.chunks(&layout);
    if chunks.is_empty() {
        return Ok(());
    }
    let mut items = Vec::new();
    patch_chunks(
        sc,
        &layout,
        &chunks,
        |_| false,
        |ci, buf| {
            sel.runs(&layout, ci, &mut items);
            for &(c, b, m) in &items {
                buf[c * is..(c + m) * is].copy_from_slice(&src[b * is..(b + m) * is]);
            }
            Ok(())
        },
    )
}
