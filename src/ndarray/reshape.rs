//! Changes of an NDArray's shape: [`resize`] (grow or shrink dimensions,
//! at their end or at a chunk boundary), [`insert`] and [`append`] (a
//! resize whose new items are given). Every change plans the new chunk
//! list (runs of old chunks kept, new chunks compressed) and commits it
//! with the new `b2nd` metalayer in one change of the super-chunk.

use super::chunkbuf::ChunkBuf;
use super::fill::{BoxFill, FillSrc};
use super::layout::Layout;
use super::meta::{B2ND_META, CATERVA_META, MAX_DIM, NdMeta};
use super::slice::{chunk_cparams, chunks_of_box, get_slice, layout_of, zero_chunk};
use crate::error::{Error, Result};
use crate::schunk::{Rebuild, SChunk};

/// The most chunks [`resize`] makes an array of (its plan visits every
/// chunk).
pub const MAX_RESIZE_CHUNKS: u64 = 1 << 24;

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
/// the header is too large for its changed bytes to fit one disk sector,
/// or holds bytes after its metalayers (then the metalayer is written
/// first: see `SChunk::rebuild_chunks_with_meta`). Updates `meta`.
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
        // A chunk length of 0 is only allowed in a dimension that is 0
        // long before and after (the layouts check it): `same`, and never
        // divided by.
        let cs = cs.max(1);
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

/// What every resize checks and works out before its plan: the start of
/// each changed dimension, the old and new layouts, the new metalayer.
pub(super) struct Prepared {
    pub(super) s: [u64; MAX_DIM],
    pub(super) old_layout: Layout,
    pub(super) new_meta: NdMeta,
    pub(super) new_layout: Layout,
    /// The new metalayer's bytes.
    pub(super) raw: Vec<u8>,
}

/// The checks of a resize of the NDArray in `sc` to `new_shape` changed at
/// `start` (`None`: at the ends): a changed dimension's start within it, a
/// shrink within it, away from its end a start at a chunk boundary and,
/// with `whole_chunks` (C-Blosc2's rule), a change of whole chunks; the new
/// layout within [`MAX_RESIZE_CHUNKS`].
pub(super) fn prepare(
    sc: &mut SChunk,
    meta: &NdMeta,
    new_shape: &[u64],
    start: Option<&[u64]>,
    whole_chunks: bool,
) -> Result<Prepared> {
    let n = meta.ndim();
    if new_shape.len() != n || start.is_some_and(|s| s.len() != n) {
        return Err(Error::InvalidParam(format!(
            "a new shape needs {n} dimensions"
        )));
    }
    sc.check_editable()?;
    sc.check_index_editable()?;
    let old_layout = layout_of(sc, meta)?;
    let mut s = [0u64; MAX_DIM];
    for d in 0..n {
        let (o, w) = (meta.shape[d], new_shape[d]);
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
        let cs = meta.chunkshape[d];
        if w != o && s[d] != o.min(w) {
            if !s[d].is_multiple_of(cs) {
                return Err(Error::InvalidParam(format!(
                    "resize start {} not at a chunk boundary of dimension {d}",
                    s[d]
                )));
            }
            if whole_chunks && !w.abs_diff(o).is_multiple_of(cs) {
                return Err(Error::InvalidParam(format!(
                    "dimension {d} changed by {} items at {}: away from its end, \
                     by whole chunks of {cs} only",
                    w.abs_diff(o),
                    s[d]
                )));
            }
        }
    }
    let mut new_meta = meta.clone();
    new_meta.shape = new_shape.to_vec();
    let new_layout = Layout::new(&new_meta, sc.typesize()).map_err(|e| match e {
        Error::Corrupt(m) => Error::InvalidParam(m),
        o => o,
    })?;
    if new_layout.nchunks() > MAX_RESIZE_CHUNKS {
        return Err(Error::InvalidParam(format!(
            "a shape of {} chunks (at most {MAX_RESIZE_CHUNKS})",
            new_layout.nchunks()
        )));
    }
    // In place of the stored metalayer, of its length (see `commit`).
    let stored = [B2ND_META, CATERVA_META]
        .iter()
        .find_map(|n| sc.meta_get(n))
        .map_or(0, <[u8]>::len);
    let raw = new_meta.encode_padded(stored)?;
    Ok(Prepared {
        s,
        old_layout,
        new_meta,
        new_layout,
        raw,
    })
}

/// Step `cc` to the next chunk coordinates of `grid` in C order.
pub(super) fn next_chunk(cc: &mut [u64], grid: &[u64]) {
    let mut d = cc.len();
    while d > 0 {
        d -= 1;
        cc[d] += 1;
        if cc[d] < grid[d] {
            break;
        }
        cc[d] = 0;
    }
}

/// Replace the chunk list by `plan` and the array's metalayer by `raw` in
/// one change; then `meta` is `new_meta`.
pub(super) fn commit(
    sc: &mut SChunk,
    meta: &mut NdMeta,
    new_meta: NdMeta,
    plan: &[Rebuild<'_>],
    raw: &[u8],
) -> Result<()> {
    let name = if sc.meta_exists(B2ND_META) {
        B2ND_META
    } else {
        CATERVA_META
    };
    sc.rebuild_chunks_with_meta(plan, name, raw)?;
    *meta = new_meta;
    Ok(())
}

/// [`resize`], with the items of `fill` (if any) written in the same plan:
/// one change of the chunk list and the metalayer.
fn resize_with(
    sc: &mut SChunk,
    meta: &mut NdMeta,
    new_shape: &[u64],
    start: Option<&[u64]>,
    mut fill: Option<BoxFill<'_>>,
) -> Result<()> {
    let n = meta.ndim();
    let Prepared {
        s,
        old_layout,
        new_meta,
        new_layout,
        raw,
    } = prepare(sc, meta, new_shape, start, false)?;
    let old_shape = meta.shape.clone();
    let is = sc.typesize();
    let grid_new = new_layout.grid().to_vec();
    let grid_old = old_layout.grid().to_vec();
    let cs = &meta.chunkshape;
    // The new chunks in order: runs of old ones kept, and new bytes.
    let mut plan: Vec<Rebuild> = Vec::new();
    // One compressor for every rebuilt chunk: its codec contexts (a zstd
    // or zlib state, a thread pool) are made once, not once per chunk.
    let mut comp = crate::Compressor::new(chunk_cparams(sc, &new_layout));
    // Sized when a chunk is first rebuilt from items: a resize that only
    // keeps chunks and adds zero ones allocates none (a frame of a few
    // bytes may claim chunks of gigabytes).
    let mut buf = ChunkBuf::default();
    let mut tmp: Vec<u8> = Vec::new();
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
        if ci > 0 {
            next_chunk(&mut cc[..n], &grid_new);
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
        // A chunk the fill covers whole, when it is another array's
        // chunk: copied as it is.
        if let Some(f) = fill.as_mut().filter(|_| filled)
            && let Some(chunk) = f.whole_chunk(&new_layout, &cc[..n], cs, new_shape)?
        {
            plan.push(Rebuild::New(chunk));
            continue;
        }
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
        let no_old = per_dim.iter().any(|p| p.is_empty());
        // Whether every old item that lands here is in a zero chunk (as in
        // an array `b2nd_zeros` made): then nothing is decoded, and without
        // `fill` the chunk is a zero chunk too. An insert into a 4 GiB
        // array of zeros decoded and compressed 4 GiB (17 s under ASan, a
        // third of the fuzz target `ndarray_args`' minute in CI).
        let boxes = if no_old {
            Vec::new()
        } else {
            piece_boxes(&per_dim)
        };
        let old_zero = no_old || zero_boxes(sc, meta, &old_layout, &boxes)?;
        // Zeros from another array's zero chunks make a zero chunk too,
        // nothing decoded or compressed (a concatenation of a 2 GiB array
        // of zeros compressed 2 GiB of zeros: 75 s under ASan in the fuzz
        // target `ndarray_args`).
        let fill_zero = match fill.as_mut().filter(|_| filled && old_zero) {
            Some(f) => f.zeros_in(&cc[..n], cs, new_shape)?,
            None => false,
        };
        if old_zero && (!filled || fill_zero) {
            // No item lands here, or only zeros: a zero chunk, recorded as
            // such.
            plan.push(Rebuild::New(
                crate::special_chunk(
                    comp.params(),
                    new_layout.chunk_nbytes(),
                    crate::SpecialValue::Zeros,
                    &[],
                )?
                .into(),
            ));
            continue;
        }
        // A chunk built from items is within the decoder's output limit,
        // as a chunk read or patched is (the array may be zero chunks of
        // a few bytes of index each, claiming gigabytes).
        sc.dparams().check_output(new_layout.chunk_nbytes())?;
        // Only the blocks the last chunk wrote are zeroed again, and the
        // encoder skips the blocks this one leaves zero (`ChunkBuf`).
        buf.zero(new_layout.chunk_nbytes(), new_layout.block_nbytes());
        if old_zero {
            // Only the fill's items.
            if let Some(f) = fill.as_mut() {
                f.write(&new_layout, ci, &cc[..n], cs, new_shape, &mut buf, &mut tmp)?;
            }
            plan.push(Rebuild::New(
                comp.compress_hinted(buf.bytes(), Some(buf.zeros()))?.into(),
            ));
            continue;
        }
        for PieceBox { nlo, nhi, olo, ohi } in &boxes {
            let bshape: Vec<u64> = (0..n).map(|d| nhi[d] - nlo[d]).collect();
            let items: u64 = bshape.iter().product();
            tmp.clear();
            tmp.resize(items as usize * is, 0);
            get_slice(sc, meta, olo, ohi, &mut tmp, &bshape)?;
            new_layout.for_each_box_span(ci, nlo, nhi, &bshape, |c, b, k| {
                buf.write(c * is, &tmp[b * is..(b + k) * is]);
            });
        }
        if let Some(f) = fill.as_mut().filter(|_| filled) {
            f.write(&new_layout, ci, &cc[..n], cs, new_shape, &mut buf, &mut tmp)?;
        }
        plan.push(Rebuild::New(
            comp.compress_hinted(buf.bytes(), Some(buf.zeros()))?.into(),
        ));
    }
    // Every chunk and the metalayer in one change.
    commit(sc, meta, new_meta, &plan, &raw)
}

/// One box of a rebuilt chunk that holds old items: new coordinates
/// `nlo..nhi`, read from old coordinates `olo..ohi`.
struct PieceBox {
    nlo: Vec<u64>,
    nhi: Vec<u64>,
    olo: Vec<u64>,
    ohi: Vec<u64>,
}

/// Every combination of one piece per dimension (`per_dim[d]`: the
/// `(new_lo, new_hi, old_lo)` pieces [`old_pieces`] gives), in C order;
/// none when a dimension has no piece.
fn piece_boxes(per_dim: &[Vec<(u64, u64, u64)>]) -> Vec<PieceBox> {
    let n = per_dim.len();
    let mut out = Vec::new();
    if per_dim.iter().any(|p| p.is_empty()) {
        return out;
    }
    let mut idx = vec![0usize; n];
    loop {
        let p = |d: usize| per_dim[d][idx[d]];
        out.push(PieceBox {
            nlo: (0..n).map(|d| p(d).0).collect(),
            nhi: (0..n).map(|d| p(d).1).collect(),
            olo: (0..n).map(|d| p(d).2).collect(),
            ohi: (0..n).map(|d| p(d).2 + p(d).1 - p(d).0).collect(),
        });
        let mut d = n;
        loop {
            if d == 0 {
                return out;
            }
            d -= 1;
            idx[d] += 1;
            if idx[d] < per_dim[d].len() {
                break;
            }
            idx[d] = 0;
        }
    }
}

/// Whether every old chunk that `boxes` read from is a zero chunk by its
/// index entry ([`zero_chunk`]).
fn zero_boxes(sc: &mut SChunk, meta: &NdMeta, layout: &Layout, boxes: &[PieceBox]) -> Result<bool> {
    let want = layout.chunk_nbytes();
    for b in boxes {
        for ci in chunks_of_box(meta, layout, &b.olo, &b.ohi) {
            if !zero_chunk(sc, ci, want)? {
                return Ok(false);
            }
        }
    }
    Ok(true)
}

/// Insert `data` (a C-order array of the NDArray's shape except along
/// `axis`) at position `pos` of `axis`: a [`resize`] whose new items are
/// `data`'s, in the same single change of the chunk list (a failure
/// leaves the array as it was).
///
/// # Errors
/// [`Error::InvalidParam`] for a bad axis, a `pos` past the end of
/// `axis`, a slice along `axis` whose byte count overflows, or a `data`
/// that is not a whole number of slices along `axis`; [`resize`]'s errors.
pub fn insert(
    sc: &mut SChunk,
    meta: &mut NdMeta,
    data: &[u8],
    axis: usize,
    pos: u64,
) -> Result<()> {
    let b = insert_box(meta, sc.typesize(), data.len(), axis, pos)?;
    let fill = BoxFill {
        lo: &b.lo,
        hi: &b.hi,
        src: FillSrc::Data(data),
    };
    resize_with(sc, meta, &b.shape, Some(&b.start), Some(fill))
}

/// The shape an insert of `len` bytes at `pos` of `axis` makes, the
/// resize's start, and the box of the new items.
pub(super) struct InsertBox {
    pub(super) shape: Vec<u64>,
    pub(super) start: Vec<u64>,
    pub(super) lo: Vec<u64>,
    pub(super) hi: Vec<u64>,
}

/// [`insert`]'s checks of its arguments (items of `is` bytes) and the
/// [`InsertBox`] they make.
pub(super) fn insert_box(
    meta: &NdMeta,
    is: usize,
    len: usize,
    axis: usize,
    pos: u64,
) -> Result<InsertBox> {
    let n = meta.ndim();
    if axis >= n {
        return Err(Error::InvalidParam(format!(
            "axis {axis} of a {n}-dimensional array"
        )));
    }
    if pos > meta.shape[axis] {
        return Err(Error::InvalidParam(format!(
            "insert position {pos} past dimension {axis} of length {}",
            meta.shape[axis]
        )));
    }
    let is = is as u64;
    let other: u64 = (0..n)
        .filter(|&d| d != axis)
        .try_fold(is, |a, d| a.checked_mul(meta.shape[d]))
        .ok_or_else(|| {
            Error::InvalidParam(format!(
                "a slice along axis {axis} of {:?} overflows",
                meta.shape
            ))
        })?;
    if other == 0 || len == 0 || !(len as u64).is_multiple_of(other) {
        return Err(Error::InvalidParam(format!(
            "{len} bytes are not a whole number of {other}-byte slices along axis {axis}"
        )));
    }
    let add = len as u64 / other;
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
    Ok(InsertBox {
        shape,
        start,
        lo,
        hi,
    })
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

/// Append the items of another NDArray (`src`, described by `src_meta`)
/// at the end of `axis` of the NDArray in `sc`: the arrays have the same
/// item size, number of dimensions (at least one) and shape in every other
/// dimension. `src` is read one chunk's part at a time; where the two
/// arrays have the same chunk and block shapes and the array ends at a
/// chunk boundary of `axis`, `src`'s chunks are copied compressed, as they
/// are. One change of the chunk list and the metalayer, as [`resize`]
/// (a failure leaves the array as it was).
///
/// ```
/// use oxiblosc::ndarray::{self, NdMeta, concatenate, get_slice};
/// use oxiblosc::CParams;
/// let mut meta = NdMeta::new(&[2, 3], &[2, 2], &[1, 2], "|u1");
/// let mut sc = ndarray::create(&meta, CParams::default(), &[1, 2, 3, 4, 5, 6]).unwrap();
/// let more = NdMeta::new(&[1, 3], &[1, 3], &[1, 3], "|u1");
/// let mut other = ndarray::create(&more, CParams::default(), &[7, 8, 9]).unwrap();
/// concatenate(&mut sc, &mut meta, &mut other, &more, 0).unwrap();
/// assert_eq!(meta.shape, [3, 3]);
/// let mut all = [0u8; 9];
/// get_slice(&mut sc, &meta, &[0, 0], &[3, 3], &mut all, &[3, 3]).unwrap();
/// assert_eq!(all, [1, 2, 3, 4, 5, 6, 7, 8, 9]);
/// ```
///
/// # Errors
/// [`Error::InvalidParam`] for arrays of no dimensions, an `axis` past
/// them, another item size, number of dimensions or shape in another
/// dimension, a length along `axis` that overflows; `src`'s chunks that do
/// not back its metalayer; [`resize`]'s errors.
pub fn concatenate(
    sc: &mut SChunk,
    meta: &mut NdMeta,
    src: &mut SChunk,
    src_meta: &NdMeta,
    axis: usize,
) -> Result<()> {
    let n = meta.ndim();
    if n == 0 || axis >= n {
        return Err(Error::InvalidParam(format!(
            "concatenation along axis {axis} of a {n}-dimensional array"
        )));
    }
    if src_meta.ndim() != n || src.typesize() != sc.typesize() {
        return Err(Error::InvalidParam(format!(
            "an array of {} dimensions and {}-byte items concatenated to one of {n} and {}",
            src_meta.ndim(),
            src.typesize(),
            sc.typesize()
        )));
    }
    if let Some(d) = (0..n).find(|&d| d != axis && src_meta.shape[d] != meta.shape[d]) {
        return Err(Error::InvalidParam(format!(
            "dimension {d} has length {} in the array concatenated, {} in the array",
            src_meta.shape[d], meta.shape[d]
        )));
    }
    let src_layout = layout_of(src, src_meta)?;
    let mut shape = meta.shape.clone();
    shape[axis] = shape[axis]
        .checked_add(src_meta.shape[axis])
        .ok_or_else(|| Error::InvalidParam("shape overflows".into()))?;
    let mut lo = vec![0u64; n];
    lo[axis] = meta.shape[axis];
    let aligned = src_meta.chunkshape == meta.chunkshape
        && src_meta.blockshape == meta.blockshape
        && meta.chunkshape[axis] > 0
        && lo[axis].is_multiple_of(meta.chunkshape[axis]);
    let has_items = src_layout.nitems() > 0;
    let layout = Box::new(src_layout);
    let src = if aligned && src.in_memory() {
        // Every new chunk the box meets is one of `src`'s (other
        // dimensions the same, the box from a chunk boundary to the end):
        // each borrowed until the new list is written.
        FillSrc::Chunks { sc: src, layout }
    } else {
        FillSrc::Array {
            sc: src,
            meta: src_meta,
            layout,
            aligned,
        }
    };
    let fill = has_items.then_some(BoxFill {
        lo: &lo,
        hi: &shape,
        src,
    });
    let new_shape = shape.clone();
    resize_with(sc, meta, &new_shape, None, fill)
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
