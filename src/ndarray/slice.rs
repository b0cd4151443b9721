//! Slices of an NDArray's super-chunk: read a box of the logical array into
//! a C-order buffer ([`get_slice`]), write one from a buffer ([`set_slice`]),
//! and change the array's shape ([`resize`], [`insert`], [`append`]).
//!
//! A box is `start..stop` per dimension. The buffer's shape may be larger
//! than the box in any dimension: the box sits at the buffer's origin (as
//! C-Blosc2's `b2nd_get_slice_cbuffer` / `b2nd_set_slice_cbuffer` do).
//! Only the chunks the box touches are decompressed (and, for a write,
//! recompressed); a read decodes only their blocks the box touches.

use super::layout::Layout;
use super::meta::{B2ND_META, CATERVA_META, MAX_DIM, NdMeta};
use crate::error::{Error, Result};
use crate::schunk::{Rebuild, SChunk};

/// The most chunks [`resize`] makes an array of (its plan holds one entry
/// per chunk).
pub const MAX_RESIZE_CHUNKS: u64 = 1 << 24;

fn strides(shape: &[u64]) -> Vec<u64> {
    let mut s = vec![1u64; shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        s[d] = s[d + 1].saturating_mul(shape[d + 1]);
    }
    s
}

/// The layout of the NDArray `meta` describes on `sc`, checked against
/// the super-chunk's chunk count: what every slice and resize call checks
/// first (the C ABI's `b2nd_open` too).
///
/// ```
/// use oxiblosc::ndarray::{self, NdMeta, layout_of};
/// use oxiblosc::CParams;
/// let meta = NdMeta::new(&[7, 5], &[3, 4], &[2, 3], "|u1");
/// let sc = ndarray::create(&meta, CParams::default(), &[0u8; 35]).unwrap();
/// assert_eq!(layout_of(&sc, &meta).unwrap().nchunks(), 6);
/// let other = NdMeta::new(&[70, 5], &[3, 4], &[2, 3], "|u1");
/// assert!(layout_of(&sc, &other).is_err());
/// ```
///
/// # Errors
/// [`Layout::new`]'s errors; [`Error::Corrupt`] when the shape needs
/// another number of chunks than the super-chunk has.
pub fn layout_of(sc: &SChunk, meta: &NdMeta) -> Result<Layout> {
    let l = Layout::new(meta, sc.typesize())?;
    if l.nchunks() != sc.nchunks() as u64 {
        return Err(Error::Corrupt(format!(
            "the NDArray has {} chunks, its shape needs {}",
            sc.nchunks(),
            l.nchunks()
        )));
    }
    Ok(l)
}

/// Check a box and a buffer against the array; the buffer's byte size.
fn check_box(
    meta: &NdMeta,
    start: &[u64],
    stop: &[u64],
    bshape: &[u64],
    itemsize: usize,
) -> Result<usize> {
    let n = meta.ndim();
    if start.len() != n || stop.len() != n || bshape.len() != n {
        return Err(Error::InvalidParam(format!(
            "start, stop and buffer shape need {n} dimensions"
        )));
    }
    let mut items: u64 = 1;
    for d in 0..n {
        if start[d] > stop[d] || stop[d] > meta.shape[d] {
            return Err(Error::InvalidParam(format!(
                "slice {}..{} outside dimension {d} of length {}",
                start[d], stop[d], meta.shape[d]
            )));
        }
        if bshape[d] < stop[d] - start[d] {
            return Err(Error::InvalidParam(format!(
                "buffer shape {} smaller than the slice's {} in dimension {d}",
                bshape[d],
                stop[d] - start[d]
            )));
        }
        items = items
            .checked_mul(bshape[d])
            .ok_or_else(|| Error::InvalidParam("buffer shape overflows".into()))?;
    }
    items
        .checked_mul(itemsize as u64)
        .and_then(|b| usize::try_from(b).ok())
        .ok_or_else(|| Error::InvalidParam("buffer shape overflows".into()))
}

/// The chunks (indices in C order of the grid) the box touches.
fn chunks_of_box(meta: &NdMeta, layout: &Layout, start: &[u64], stop: &[u64]) -> Vec<u64> {
    let n = meta.ndim();
    if n == 0 {
        return if layout.nchunks() > 0 {
            vec![0]
        } else {
            Vec::new()
        };
    }
    if (0..n).any(|d| start[d] >= stop[d]) {
        return Vec::new();
    }
    let grid = layout.grid();
    let lo: Vec<u64> = (0..n).map(|d| start[d] / meta.chunkshape[d]).collect();
    let hi: Vec<u64> = (0..n).map(|d| (stop[d] - 1) / meta.chunkshape[d]).collect();
    let mut out = Vec::new();
    let mut cc = lo.clone();
    loop {
        let mut ci = 0u64;
        for d in 0..n {
            ci = ci * grid[d] + cc[d];
        }
        out.push(ci);
        let mut d = n;
        loop {
            if d == 0 {
                return out;
            }
            d -= 1;
            cc[d] += 1;
            if cc[d] <= hi[d] {
                break;
            }
            cc[d] = lo[d];
        }
    }
}

/// For each run of chunk `ci` inside the box: `f(chunk_item, buffer_item,
/// nitems)`, the buffer being of shape `bshape` with the box at its origin.
fn for_each_box_run(
    meta: &NdMeta,
    layout: &Layout,
    ci: u64,
    start: &[u64],
    stop: &[u64],
    bshape: &[u64],
    mut f: impl FnMut(usize, usize, usize),
) {
    let n = meta.ndim();
    let astr = strides(&meta.shape);
    let bstr = strides(bshape);
    layout.for_each_run(ci, |c, a, len| {
        if n == 0 {
            f(c, 0, len);
            return;
        }
        let mut boff = 0u64;
        for d in 0..n - 1 {
            let x = (a / astr[d]) % meta.shape[d];
            if x < start[d] || x >= stop[d] {
                return;
            }
            boff += (x - start[d]) * bstr[d];
        }
        let x0 = a % meta.shape[n - 1];
        let lo = x0.max(start[n - 1]);
        let hi = (x0 + len as u64).min(stop[n - 1]);
        if lo >= hi {
            return;
        }
        boff += lo - start[n - 1];
        f(c + (lo - x0) as usize, boff as usize, (hi - lo) as usize);
    });
}

/// Read the box `start..stop` of the NDArray in `sc` (described by `meta`)
/// into `dst`, a C-order buffer of shape `bshape` (each dimension at least
/// the box's), the box at its origin; the rest of `dst` is left as is.
///
/// ```
/// use oxiblosc::ndarray::{self, NdMeta, get_slice};
/// use oxiblosc::CParams;
/// let data: Vec<u8> = (0..35u8).collect();
/// let meta = NdMeta::new(&[7, 5], &[3, 4], &[2, 3], "|u1");
/// let mut sc = ndarray::create(&meta, CParams::default(), &data).unwrap();
/// let mut out = [0u8; 4];
/// get_slice(&mut sc, &meta, &[2, 3], &[4, 5], &mut out, &[2, 2]).unwrap();
/// assert_eq!(out, [13, 14, 18, 19]);
/// ```
///
/// # Errors
/// [`Error::InvalidParam`] for a box outside the array, a buffer shape
/// smaller than the box or of the wrong length, a `dst` of another size;
/// [`Error::Corrupt`] when the super-chunk disagrees with `meta` (a chunk
/// of another size, or a stored chunk of blocks other than the block
/// shape's); the super-chunk's errors.
pub fn get_slice(
    sc: &mut SChunk,
    meta: &NdMeta,
    start: &[u64],
    stop: &[u64],
    dst: &mut [u8],
    bshape: &[u64],
) -> Result<()> {
    let is = sc.typesize();
    let need = check_box(meta, start, stop, bshape, is)?;
    if dst.len() != need {
        return Err(Error::InvalidParam(format!(
            "a {}-byte buffer for a shape of {need} bytes",
            dst.len()
        )));
    }
    let layout = layout_of(sc, meta)?;
    let want = layout.chunk_nbytes();
    // Sized by the first chunk of the box (see `chunk_buffer`).
    let mut buf = Vec::new();
    let mut mask = Vec::new();
    let bn = layout.block_nbytes().max(1);
    for ci in chunks_of_box(meta, &layout, start, stop) {
        if buf.is_empty() {
            buf = chunk_buffer(sc, ci, want)?;
            mask = vec![true; want.div_ceil(bn)];
        }
        // Only the blocks the box touches are decoded (C-Blosc2 masks the
        // others out the same way).
        mask.fill(true);
        for_each_box_run(meta, &layout, ci, start, stop, bshape, |c, _, _| {
            mask[c * is / bn] = false;
        });
        // A stored chunk of other blocks is refused (as `NdArray` reads
        // refuse it); a special one is decoded whole.
        let n = sc.decompress_chunk_blocks_into(ci as usize, bn, &mask, &mut buf)?;
        // A shorter chunk would leave the previous chunk's bytes in `buf`.
        if n != want {
            return Err(short_chunk(ci, n, want));
        }
        for_each_box_run(meta, &layout, ci, start, stop, bshape, |c, b, n| {
            dst[b * is..(b + n) * is].copy_from_slice(&buf[c * is..(c + n) * is]);
        });
    }
    Ok(())
}

/// A buffer of `want` bytes, the metalayer's chunk size, allocated only once
/// chunk `ci`, checked to the end of its streams, declares that size: a
/// metalayer that is not the super-chunk's is refused before anything is
/// sized by it.
fn chunk_buffer(sc: &mut SChunk, ci: u64, want: usize) -> Result<Vec<u8>> {
    let chunk = sc.get_chunk(ci as usize)?;
    let h = crate::chunk::validate(&chunk)?;
    if h.nbytes != want {
        return Err(short_chunk(ci, h.nbytes, want));
    }
    Ok(vec![0u8; want])
}

/// The super-chunk's compression parameters (with the thread count it
/// runs, not a frame header's) with the array's block size: every chunk of
/// an NDArray has blocks of the block shape's bytes (its readers, ours and
/// C-Blosc2's, require it), whatever block size the frame's header records.
fn chunk_cparams(sc: &SChunk, layout: &Layout) -> crate::CParams {
    sc.compress_params()
        .clone()
        .blocksize(layout.block_nbytes())
}

/// The error for chunk `ci` of `n` bytes where the metalayer gives `want`.
fn short_chunk(ci: u64, n: usize, want: usize) -> Error {
    Error::Corrupt(format!(
        "chunk {ci} holds {n} bytes, the NDArray's metalayer gives {want}"
    ))
}

/// Write the box `start..stop` of the NDArray in `sc` from `src`, a
/// C-order buffer of shape `bshape` with the box at its origin. Each chunk
/// the box touches is decompressed, patched and compressed again; the
/// super-chunk is changed only once all of them are, in one change (a
/// chunk that does not decode, a failed write or a crash leave the array
/// as it was).
///
/// ```
/// use oxiblosc::ndarray::{self, NdMeta, get_slice, set_slice};
/// use oxiblosc::CParams;
/// let meta = NdMeta::new(&[7, 5], &[3, 4], &[2, 3], "|u1");
/// let mut sc = ndarray::create(&meta, CParams::default(), &[0u8; 35]).unwrap();
/// set_slice(&mut sc, &meta, &[2, 3], &[4, 5], &[1, 2, 3, 4], &[2, 2]).unwrap();
/// let mut all = [0u8; 35];
/// get_slice(&mut sc, &meta, &[0, 0], &[7, 5], &mut all, &[7, 5]).unwrap();
/// assert_eq!(&all[13..15], &[1, 2]);
/// assert_eq!(&all[18..20], &[3, 4]);
/// assert_eq!(all.iter().map(|&b| b as u32).sum::<u32>(), 10);
/// ```
///
/// # Errors
/// As [`get_slice`].
pub fn set_slice(
    sc: &mut SChunk,
    meta: &NdMeta,
    start: &[u64],
    stop: &[u64],
    src: &[u8],
    bshape: &[u64],
) -> Result<()> {
    let is = sc.typesize();
    let need = check_box(meta, start, stop, bshape, is)?;
    if src.len() != need {
        return Err(Error::InvalidParam(format!(
            "a {}-byte buffer for a shape of {need} bytes",
            src.len()
        )));
    }
    sc.check_writable()?;
    // Before anything is sized by the chunk count (a repeated index may
    // stand for millions of chunks the change could not write).
    sc.check_index_editable()?;
    let layout = layout_of(sc, meta)?;
    let want = layout.chunk_nbytes();
    let cparams = chunk_cparams(sc, &layout);
    let mut buf = Vec::new();
    let mut updates = Vec::new();
    let bn = layout.block_nbytes().max(1);
    // Sized with the buffer, once the first chunk backs the metalayer.
    let mut keep_all = Vec::new();
    for ci in chunks_of_box(meta, &layout, start, stop) {
        if buf.is_empty() {
            buf = chunk_buffer(sc, ci, want)?;
            keep_all = vec![false; want.div_ceil(bn)];
        }
        // Every block decoded; a stored chunk of other blocks refused, as
        // `get_slice` refuses it.
        let n = sc.decompress_chunk_blocks_into(ci as usize, bn, &keep_all, &mut buf)?;
        // A shorter chunk would be stored again with the previous chunk's
        // bytes after its own.
        if n != want {
            return Err(short_chunk(ci, n, want));
        }
        for_each_box_run(meta, &layout, ci, start, stop, bshape, |c, b, n| {
            buf[c * is..(c + n) * is].copy_from_slice(&src[b * is..(b + n) * is]);
        });
        updates.push((ci as usize, crate::compress(&buf, &cparams)?));
    }
    // Every chunk replaced in one change (old-or-new as a whole): the
    // chunks between them kept as runs.
    updates.sort_by_key(|&(ci, _)| ci);
    let n = sc.nchunks();
    let mut plan = Vec::with_capacity(2 * updates.len() + 1);
    let mut next = 0;
    for (ci, chunk) in updates {
        if ci < next || ci >= n {
            continue;
        }
        if ci > next {
            plan.push(Rebuild::Keep(next..ci));
        }
        plan.push(Rebuild::New(chunk));
        next = ci + 1;
    }
    if next < n {
        plan.push(Rebuild::Keep(next..n));
    }
    sc.rebuild_chunks(&plan)
}

/// Pieces of `lo..hi` (new coordinates of one dimension) that hold old
/// items: `(new_lo, new_hi, old_lo)`. Items at `s..` move by the change of
/// length (inserted zeros, or deleted items, at `s`).
fn old_pieces(lo: u64, hi: u64, old: u64, new: u64, s: u64) -> Vec<(u64, u64, u64)> {
    let mut out = Vec::new();
    let a = hi.min(s);
    if lo < a {
        out.push((lo, a, lo));
    }
    if new >= old {
        let gap = s + (new - old);
        let b = lo.max(gap);
        if b < hi {
            out.push((b, hi, b - (new - old)));
        }
    } else {
        let b = lo.max(s);
        if b < hi {
            out.push((b, hi, b + (old - new)));
        }
    }
    out
}

/// Change the NDArray's shape to `new_shape`, in place: with `start`
/// `None` dimensions grow or shrink at their end; with `start`, each
/// changed dimension gains zeros (or loses items) at `start[d]`. New items
/// are zero. Chunks whose content does not change are kept as they are;
/// the others are rebuilt. The new chunks are all compressed before the
/// super-chunk is changed; then the chunk list and the metalayer are
/// replaced in one change, old-or-new on a file like every change (a
/// failure or a crash leaves the array as it was, or resized), unless
/// the header is too large for its changed bytes to fit one disk sector
/// (then the metalayer is written first: see
/// `SChunk::rebuild_chunks_with_meta`). Updates `meta`.
///
/// ```
/// use oxiblosc::ndarray::{self, NdMeta, get_slice, resize};
/// use oxiblosc::CParams;
/// let data: Vec<u8> = (1..=6u8).collect();
/// let mut meta = NdMeta::new(&[2, 3], &[1, 2], &[1, 2], "|u1");
/// let mut sc = ndarray::create(&meta, CParams::default(), &data).unwrap();
/// resize(&mut sc, &mut meta, &[3, 3], Some(&[1, 0])).unwrap();
/// let mut all = [9u8; 9];
/// get_slice(&mut sc, &meta, &[0, 0], &[3, 3], &mut all, &[3, 3]).unwrap();
/// assert_eq!(all, [1, 2, 3, 0, 0, 0, 4, 5, 6]);
/// ```
///
/// # Errors
/// [`Error::InvalidParam`] for a shape of another number of dimensions, a
/// `start` past a dimension's end, a changed dimension whose `start` is
/// not at a chunk boundary or at the end (C-Blosc2's rule), or a shrink
/// past the end; the super-chunk's errors.
pub fn resize(
    sc: &mut SChunk,
    meta: &mut NdMeta,
    new_shape: &[u64],
    start: Option<&[u64]>,
) -> Result<()> {
    resize_with(sc, meta, new_shape, start, None)
}

/// Items written into the new shape by [`resize_with`]: the C-order box
/// `lo..hi` (new coordinates) of `data`.
struct BoxFill<'a> {
    lo: &'a [u64],
    hi: &'a [u64],
    data: &'a [u8],
}

/// Along one dimension of a resize (old length `o`, new `w`, chunk length
/// `cs`, items moving at `s`): the old chunk coordinate whose items new
/// chunk coordinate `c` holds unchanged, if any: all of them when the
/// length is unchanged; else those wholly before `s`, and those wholly in
/// the part that moves by a whole number of chunks.
struct DimMap {
    same: bool,
    /// New coordinates below this are unchanged.
    before: u64,
    /// New coordinates from this on moved by `shift` chunks (`u64::MAX`:
    /// none).
    moved_from: u64,
    grow: bool,
    shift: u64,
    /// Old coordinates are below this.
    old_grid: u64,
}

impl DimMap {
    fn new(o: u64, w: u64, s: u64, cs: u64, old_grid: u64) -> DimMap {
        let (grow, delta) = if w >= o {
            (true, w - o)
        } else {
            (false, o - w)
        };
        let moved_from = if o == w || !delta.is_multiple_of(cs) {
            u64::MAX
        } else if grow {
            // lo = c * cs >= s + delta
            (s + delta).div_ceil(cs)
        } else {
            // lo >= s
            s.div_ceil(cs)
        };
        DimMap {
            same: o == w,
            // lo + cs <= s
            before: s / cs,
            moved_from,
            grow,
            shift: delta / cs,
            old_grid,
        }
    }

    fn old(&self, c: u64) -> Option<u64> {
        let oc = if self.same || c < self.before {
            c
        } else if c >= self.moved_from {
            if self.grow {
                c - self.shift
            } else {
                c + self.shift
            }
        } else {
            return None;
        };
        (oc < self.old_grid).then_some(oc)
    }
}

/// The chunk coordinates (chunks of `cs` items, a dimension of `w`) whose
/// items meet `lo..hi` (a box of items: not empty).
fn fill_range(lo: u64, hi: u64, w: u64, cs: u64) -> std::ops::Range<u64> {
    if lo >= w {
        return 0..0;
    }
    lo / cs..hi.div_ceil(cs)
}

/// [`resize`], with the items of `fill` (if any) written in the same plan:
/// one change of the chunk list and the metalayer.
fn resize_with(
    sc: &mut SChunk,
    meta: &mut NdMeta,
    new_shape: &[u64],
    start: Option<&[u64]>,
    fill: Option<BoxFill<'_>>,
) -> Result<()> {
    let n = meta.ndim();
    if new_shape.len() != n || start.is_some_and(|s| s.len() != n) {
        return Err(Error::InvalidParam(format!(
            "a new shape needs {n} dimensions"
        )));
    }
    sc.check_writable()?;
    sc.check_index_editable()?;
    let old_layout = layout_of(sc, meta)?;
    let old_shape = meta.shape.clone();
    let mut s = [0u64; MAX_DIM];
    for d in 0..n {
        let (o, w) = (old_shape[d], new_shape[d]);
        s[d] = match start {
            Some(st) => st[d],
            None => o.min(w),
        };
        if s[d] > o {
            return Err(Error::InvalidParam(format!(
                "resize start {} past dimension {d} of length {o}",
                s[d]
            )));
        }
        if w < o && s[d] + (o - w) > o {
            return Err(Error::InvalidParam(format!(
                "cannot delete {} items at {} of dimension {d} of length {o}",
                o - w,
                s[d]
            )));
        }
        if w != o && s[d] != o.min(w) && !s[d].is_multiple_of(meta.chunkshape[d]) {
            return Err(Error::InvalidParam(format!(
                "resize start {} not at a chunk boundary of dimension {d}",
                s[d]
            )));
        }
    }
    let mut new_meta = meta.clone();
    new_meta.shape = new_shape.to_vec();
    let is = sc.typesize();
    let new_layout = Layout::new(&new_meta, is).map_err(|e| match e {
        Error::Corrupt(m) => Error::InvalidParam(m),
        o => o,
    })?;
    if new_layout.nchunks() > MAX_RESIZE_CHUNKS {
        return Err(Error::InvalidParam(format!(
            "a shape of {} chunks (at most {MAX_RESIZE_CHUNKS})",
            new_layout.nchunks()
        )));
    }
    let raw = new_meta.encode()?;
    let grid_new = new_layout.grid().to_vec();
    let grid_old = old_layout.grid().to_vec();
    let cs = &meta.chunkshape;
    // The new chunks in order: runs of old ones kept, and new bytes.
    let mut plan: Vec<Rebuild> = Vec::new();
    let cparams = chunk_cparams(sc, &new_layout);
    let mut buf = vec![0u8; new_layout.chunk_nbytes()];
    // Per dimension: which old chunk coordinate each new one keeps, and
    // which new ones meet `fill` (looked up for every chunk below: an edit
    // of a 40,000-chunk array visits them all).
    let nchunks = new_layout.nchunks();
    let maps: Vec<DimMap> = (0..n)
        .map(|d| DimMap::new(old_shape[d], new_shape[d], s[d], cs[d], grid_old[d]))
        .collect();
    let hits: Vec<std::ops::Range<u64>> = (0..n)
        .map(|d| match fill.as_ref() {
            Some(f) => fill_range(f.lo[d], f.hi[d], new_shape[d], cs[d]),
            None => 0..0,
        })
        .collect();
    let mut cc = [0u64; MAX_DIM];
    for ci in 0..nchunks {
        // The next chunk's coordinates (C order).
        if ci > 0 {
            let mut d = n;
            while d > 0 {
                d -= 1;
                cc[d] += 1;
                if cc[d] < grid_new[d] {
                    break;
                }
                cc[d] = 0;
            }
        }
        // The old chunk whose content this one is, if any.
        let mut keep = n > 0;
        let mut oi = 0u64;
        for d in 0..n {
            match maps[d].old(cc[d]) {
                Some(x) => oi = oi * grid_old[d] + x,
                None => {
                    keep = false;
                    break;
                }
            }
        }
        // Whether the chunk holds items of `fill`.
        let filled = fill.is_some() && (0..n).all(|d| hits[d].contains(&cc[d]));
        if keep && !filled {
            Rebuild::keep(&mut plan, oi as usize);
            continue;
        }
        buf.fill(0);
        // The sub-boxes of this chunk holding old items.
        let per_dim: Vec<Vec<(u64, u64, u64)>> = (0..n)
            .map(|d| {
                let lo = cc[d] * cs[d];
                let hi = (lo + cs[d]).min(new_shape[d]);
                if old_shape[d] == new_shape[d] {
                    vec![(lo, hi, lo)]
                } else {
                    old_pieces(lo, hi, old_shape[d], new_shape[d], s[d])
                }
            })
            .collect();
        let write_fill = |buf: &mut [u8]| {
            if let Some(f) = fill.as_ref().filter(|_| filled) {
                let fshape: Vec<u64> = (0..n).map(|d| f.hi[d] - f.lo[d]).collect();
                for_each_box_run(
                    &new_meta,
                    &new_layout,
                    ci,
                    f.lo,
                    f.hi,
                    &fshape,
                    |c, b, k| {
                        buf[c * is..(c + k) * is].copy_from_slice(&f.data[b * is..(b + k) * is]);
                    },
                );
            }
        };
        if per_dim.iter().any(|p| p.is_empty()) {
            // No old item lands here: the fill's items, or a zero chunk,
            // recorded as such.
            plan.push(Rebuild::New(if filled {
                write_fill(&mut buf);
                crate::compress(&buf, &cparams)?
            } else {
                crate::special_chunk(
                    &cparams,
                    new_layout.chunk_nbytes(),
                    crate::SpecialValue::Zeros,
                    &[],
                )?
            }));
            continue;
        }
        let mut idx = vec![0usize; n];
        loop {
            let nlo: Vec<u64> = (0..n).map(|d| per_dim[d][idx[d]].0).collect();
            let nhi: Vec<u64> = (0..n).map(|d| per_dim[d][idx[d]].1).collect();
            let olo: Vec<u64> = (0..n).map(|d| per_dim[d][idx[d]].2).collect();
            let ohi: Vec<u64> = (0..n).map(|d| olo[d] + nhi[d] - nlo[d]).collect();
            let bshape: Vec<u64> = (0..n).map(|d| nhi[d] - nlo[d]).collect();
            let items: u64 = bshape.iter().product();
            let mut tmp = vec![0u8; items as usize * is];
            get_slice(sc, meta, &olo, &ohi, &mut tmp, &bshape)?;
            for_each_box_run(
                &new_meta,
                &new_layout,
                ci,
                &nlo,
                &nhi,
                &bshape,
                |c, b, k| {
                    buf[c * is..(c + k) * is].copy_from_slice(&tmp[b * is..(b + k) * is]);
                },
            );
            let mut d = n;
            let done = loop {
                if d == 0 {
                    break true;
                }
                d -= 1;
                idx[d] += 1;
                if idx[d] < per_dim[d].len() {
                    break false;
                }
                idx[d] = 0;
            };
            if done {
                break;
            }
        }
        write_fill(&mut buf);
        plan.push(Rebuild::New(crate::compress(&buf, &cparams)?));
    }
    let name = if sc.meta_exists(B2ND_META) {
        B2ND_META
    } else {
        CATERVA_META
    };
    // Every chunk and the metalayer in one change.
    sc.rebuild_chunks_with_meta(&plan, name, &raw)?;
    *meta = new_meta;
    Ok(())
}

/// Insert `data` (a C-order array of the NDArray's shape except along
/// `axis`) at position `pos` of `axis`: a [`resize`] whose new items are
/// `data`'s, in the same single change of the chunk list (a failure
/// leaves the array as it was).
///
/// # Errors
/// [`Error::InvalidParam`] for a bad axis or a `data` that is not a whole
/// number of slices along `axis`; [`resize`]'s errors.
pub fn insert(
    sc: &mut SChunk,
    meta: &mut NdMeta,
    data: &[u8],
    axis: usize,
    pos: u64,
) -> Result<()> {
    let n = meta.ndim();
    if axis >= n {
        return Err(Error::InvalidParam(format!(
            "axis {axis} of a {n}-dimensional array"
        )));
    }
    let is = sc.typesize() as u64;
    let other: u64 = (0..n)
        .filter(|&d| d != axis)
        .map(|d| meta.shape[d])
        .product::<u64>()
        * is;
    if other == 0 || data.is_empty() || !(data.len() as u64).is_multiple_of(other) {
        return Err(Error::InvalidParam(format!(
            "{} bytes are not a whole number of {other}-byte slices along axis {axis}",
            data.len()
        )));
    }
    let add = data.len() as u64 / other;
    let mut shape = meta.shape.clone();
    let mut start = shape.clone();
    start[axis] = pos;
    shape[axis] = shape[axis]
        .checked_add(add)
        .ok_or_else(|| Error::InvalidParam("shape overflows".into()))?;
    let mut lo = vec![0u64; n];
    lo[axis] = pos;
    let mut hi = shape.clone();
    hi[axis] = pos + add;
    let fill = BoxFill {
        lo: &lo,
        hi: &hi,
        data,
    };
    resize_with(sc, meta, &shape, Some(&start), Some(fill))
}

/// Append `data` at the end of `axis` (see [`insert`]).
///
/// # Errors
/// As [`insert`].
pub fn append(sc: &mut SChunk, meta: &mut NdMeta, data: &[u8], axis: usize) -> Result<()> {
    let pos = *meta.shape.get(axis).ok_or_else(|| {
        Error::InvalidParam(format!(
            "axis {axis} of a {}-dimensional array",
            meta.ndim()
        ))
    })?;
    insert(sc, meta, data, axis, pos)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rule `DimMap` and `fill_range` precompute, as `resize_with`
    /// applied it to each chunk (one division and test per chunk).
    fn old_by_rule(o: u64, w: u64, s: u64, cs: u64, old_grid: u64, c: u64) -> Option<u64> {
        let lo = c * cs;
        let oc = if o == w || lo + cs <= s {
            Some(c)
        } else if w > o && (w - o).is_multiple_of(cs) && lo >= s + (w - o) {
            Some(c - (w - o) / cs)
        } else if w < o && (o - w).is_multiple_of(cs) && lo >= s {
            Some(c + (o - w) / cs)
        } else {
            None
        };
        oc.filter(|&x| x < old_grid)
    }

    #[test]
    fn dim_maps_and_fill_ranges_follow_the_per_chunk_rule() {
        let mut cases = 0;
        for cs in 1..=5u64 {
            for o in 0..=13u64 {
                for w in 0..=13u64 {
                    for s in 0..=o {
                        // Only starts `resize` takes: in range, and at a
                        // chunk boundary or the end when the length changes.
                        if w != o && s != o.min(w) && !s.is_multiple_of(cs) {
                            continue;
                        }
                        if w < o && s + (o - w) > o {
                            continue;
                        }
                        let (og, ng) = (o.div_ceil(cs), w.div_ceil(cs));
                        let m = DimMap::new(o, w, s, cs, og);
                        for c in 0..ng {
                            assert_eq!(
                                m.old(c),
                                old_by_rule(o, w, s, cs, og, c),
                                "o {o} w {w} s {s} cs {cs} c {c}"
                            );
                            cases += 1;
                        }
                        for lo in 0..=w + 1 {
                            for hi in 0..=w + 1 {
                                let r = fill_range(lo, hi, w, cs);
                                for c in 0..ng {
                                    let l = c * cs;
                                    let rule = l < hi && lo < (l + cs).min(w);
                                    assert_eq!(
                                        r.contains(&c),
                                        rule,
                                        "lo {lo} hi {hi} w {w} cs {cs} c {c}"
                                    );
                                }
                            }
                        }
                    }
                }
            }
        }
        assert!(cases > 1000, "{cases}");
    }
}
