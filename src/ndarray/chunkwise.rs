//! Shape changes made of whole chunks, as C-Blosc2's `b2nd_resize`,
//! `b2nd_insert` and `b2nd_append` make them: [`resize_keep_chunks`] and
//! [`insert_keep_chunks`]. Every stored chunk that keeps a place in the new
//! chunk grid is kept byte for byte (its padding, the part past the
//! array's end, included); chunks are only added (zero chunks) or removed.
//! The C ABI (`b2nd.h`) changes shapes this way, so programs written for
//! libblosc2 see the items they see there; [`super::resize`] and
//! [`super::insert`] are the Rust API's, whose new items are always zero.

use std::borrow::Cow;

use super::chunkbuf::ChunkBuf;
use super::fill::{BoxFill, FillSrc};
use super::meta::{MAX_DIM, NdMeta};
use super::reshape::{Prepared, commit, insert_box, next_chunk, prepare};
use super::slice::{box_covers, check_chunk_count, chunk_cparams, decode_whole};
use crate::error::Result;
use crate::schunk::{Rebuild, SChunk};

/// Along one dimension (old length `o`, new `w`, chunk length `cs`,
/// changed at `s`): which old chunk coordinate each new one is. A shrink
/// removes the old chunks that start in `s..s + (o - w)`; a growth adds
/// zero chunks at the new coordinates that start in `s..s + (w - o)`; the
/// others keep their order (C-Blosc2's `shrink_shape` / `extend_shape`).
struct ChunkMap {
    /// New coordinates from `lo` to `hi` are added chunks (growth), or
    /// old coordinates `lo..hi` are removed (shrink).
    lo: u64,
    hi: u64,
    grow: bool,
    old_grid: u64,
}

impl ChunkMap {
    fn new(o: u64, w: u64, s: u64, cs: u64, old_grid: u64) -> ChunkMap {
        // A chunk length of 0 only in a dimension 0 long before and after
        // (the layouts check it): nothing moves.
        let cs = cs.max(1);
        let (grow, delta) = if w >= o {
            (true, w - o)
        } else {
            (false, o - w)
        };
        ChunkMap {
            lo: s.div_ceil(cs),
            hi: (s + delta).div_ceil(cs),
            grow,
            old_grid,
        }
    }

    /// The old chunk coordinate new coordinate `c` keeps; `None` for an
    /// added chunk.
    fn old(&self, c: u64) -> Option<u64> {
        let oc = if c < self.lo {
            c
        } else if self.grow {
            if c < self.hi {
                return None;
            }
            c - (self.hi - self.lo)
        } else {
            c + (self.hi - self.lo)
        };
        (oc < self.old_grid).then_some(oc)
    }
}

/// Change the NDArray's shape to `new_shape` as C-Blosc2's `b2nd_resize`
/// does: with `start` `None` dimensions grow or shrink at their end; with
/// `start`, a dimension changed anywhere else gains (or loses) whole
/// chunks at `start[d]`. Every chunk that stays is kept as stored: items a
/// growth adds inside an old edge chunk are what its padding held (zero
/// in the chunks this library writes from items, the fill value in the
/// chunks of C-Blosc2's `b2nd_full`, the old items a shrink cut off), and
/// the items a shrink cuts off stay in their chunk as padding. Added chunks
/// are zero chunks. No chunk is decoded or compressed. One change of the
/// chunk list and the metalayer, old-or-new as [`super::resize`]. Updates
/// `meta`.
///
/// ```
/// use oxiblosc::ndarray::{self, NdMeta, get_slice, resize_keep_chunks};
/// use oxiblosc::CParams;
/// let mut meta = NdMeta::new(&[5], &[4], &[2], "|u1");
/// let mut sc = ndarray::create(&meta, CParams::default(), &[1, 2, 3, 4, 5]).unwrap();
/// // Item 3 stays in the first chunk as padding; the second chunk goes.
/// resize_keep_chunks(&mut sc, &mut meta, &[3], None).unwrap();
/// resize_keep_chunks(&mut sc, &mut meta, &[6], None).unwrap();
/// let mut all = [9u8; 6];
/// get_slice(&mut sc, &meta, &[0], &[6], &mut all, &[6]).unwrap();
/// assert_eq!(all, [1, 2, 3, 4, 0, 0]);
/// ```
///
/// # Errors
/// [`Error::InvalidParam`](crate::Error::InvalidParam) for a shape of another number of dimensions, a
/// `start` past a dimension's end, a dimension changed away from its end
/// whose `start` or change of length is not a whole number of chunks
/// (C-Blosc2's rule), or a shrink past the end; the super-chunk's errors.
pub fn resize_keep_chunks(
    sc: &mut SChunk,
    meta: &mut NdMeta,
    new_shape: &[u64],
    start: Option<&[u64]>,
) -> Result<()> {
    keep_chunks_with(sc, meta, new_shape, start, None)
}

/// Insert `data` (a C-order array of the NDArray's shape except along
/// `axis`) at `pos` of `axis` as C-Blosc2's `b2nd_insert` does: a
/// [`resize_keep_chunks`] (at the end of `axis` when `pos` is its length,
/// else whole chunks at `pos`), then `data` written into the new items.
/// A chunk `data` covers whole (its items inside the array) is written
/// from zeros; one it covers in part (the old edge chunk of an append) is
/// decoded and patched, its padding kept. One change of the chunk list
/// and the metalayer (a failure leaves the array as it was).
///
/// ```
/// use oxiblosc::ndarray::{self, NdMeta, get_slice, insert_keep_chunks};
/// use oxiblosc::CParams;
/// let mut meta = NdMeta::new(&[2, 3], &[2, 2], &[1, 2], "|u1");
/// let mut sc = ndarray::create(&meta, CParams::default(), &[1, 2, 3, 4, 5, 6]).unwrap();
/// insert_keep_chunks(&mut sc, &mut meta, &[7, 8, 9], 0, 2).unwrap();
/// let mut all = [0u8; 9];
/// get_slice(&mut sc, &meta, &[0, 0], &[3, 3], &mut all, &[3, 3]).unwrap();
/// assert_eq!(all, [1, 2, 3, 4, 5, 6, 7, 8, 9]);
/// ```
///
/// # Errors
/// As [`super::insert`] and [`resize_keep_chunks`]: `pos` away from the
/// end must be at a chunk boundary, and `data` then a whole number of
/// chunks along `axis`.
pub fn insert_keep_chunks(
    sc: &mut SChunk,
    meta: &mut NdMeta,
    data: &[u8],
    axis: usize,
    pos: u64,
) -> Result<()> {
    let b = insert_box(meta, sc.typesize(), data.len(), axis, pos)?;
    let at_end = pos == meta.shape[axis];
    let fill = BoxFill {
        lo: &b.lo,
        hi: &b.hi,
        src: FillSrc::Data(data),
    };
    let start = (!at_end).then(|| {
        let mut s = vec![0u64; meta.ndim()];
        s[axis] = pos;
        s
    });
    keep_chunks_with(sc, meta, &b.shape, start.as_deref(), Some(fill))
}

/// [`resize_keep_chunks`], with `fill`'s items (a box of new items, whose
/// chunks it covers whole except the old edge chunk of an append) written
/// in the same change.
fn keep_chunks_with(
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
    } = prepare(sc, meta, new_shape, start, true)?;
    check_chunk_count(sc, &old_layout)?;
    let nchunks = new_layout.nchunks();
    let old_shape = &meta.shape;
    let cs = meta.chunkshape.clone();
    let grid_new = new_layout.grid().to_vec();
    let grid_old = old_layout.grid().to_vec();
    let maps: Vec<ChunkMap> = (0..n)
        .map(|d| ChunkMap::new(old_shape[d], new_shape[d], s[d], cs[d], grid_old[d]))
        .collect();
    let mut comp = crate::Compressor::new(chunk_cparams(sc, &new_layout));
    let want = new_layout.chunk_nbytes();
    let zero = crate::special_chunk(comp.params(), want, crate::SpecialValue::Zeros, &[])?;
    let mut plan: Vec<Rebuild> = Vec::new();
    // Sized when a chunk is first written from items.
    let mut buf = ChunkBuf::default();
    let mut tmp: Vec<u8> = Vec::new();
    let mut keep_all: Vec<bool> = Vec::new();
    let bn = new_layout.block_nbytes().max(1);
    let mut cc = [0u64; MAX_DIM];
    for ci in 0..nchunks {
        if ci > 0 {
            next_chunk(&mut cc[..n], &grid_new);
        }
        // The old chunk this one is, if any.
        let mut old = Some(0u64);
        for d in 0..n {
            old = match (old, maps[d].old(cc[d])) {
                (Some(i), Some(x)) => Some(i * grid_old[d] + x),
                _ => None,
            };
        }
        let old = old.filter(|&i| i < old_layout.nchunks());
        let meets = |f: &BoxFill<'_>| {
            (0..n).all(|d| {
                let lo = cc[d] * cs[d];
                let hi = (lo + cs[d]).min(new_shape[d]);
                f.lo[d] < hi && lo < f.hi[d]
            })
        };
        let Some(f) = fill.as_mut().filter(|f| meets(f)) else {
            match old {
                Some(i) => Rebuild::keep(&mut plan, i as usize),
                None => plan.push(Rebuild::New(Cow::Borrowed(&zero))),
            }
            continue;
        };
        let covers = box_covers(new_shape, &cs, &cc[..n], f.lo, f.hi);
        if keep_all.is_empty() {
            sc.dparams().check_output(want)?;
            keep_all = vec![false; want.div_ceil(bn)];
        }
        // Only the blocks the last chunk wrote are zeroed again, and the
        // encoder skips the blocks this one leaves zero (`ChunkBuf`).
        buf.zero(want, bn);
        if let Some(i) = old.filter(|_| !covers) {
            decode_whole(sc, i, bn, &keep_all, buf.all_mut())?;
        }
        f.write(
            &new_layout,
            ci,
            &cc[..n],
            &cs,
            new_shape,
            &mut buf,
            &mut tmp,
        )?;
        plan.push(Rebuild::New(
            comp.compress_hinted(buf.bytes(), Some(buf.zeros()))?.into(),
        ));
    }
    commit(sc, meta, new_meta, &plan, &raw)
}
