//! What a resize writes into the new shape besides the old items
//! ([`BoxFill`]): a box of items from a C-order buffer (`insert`,
//! `append`) or from another NDArray (`concatenate`), whose chunks an
//! aligned fill hands over as they are (borrowed from a frame in memory).

use std::borrow::Cow;

use super::chunkbuf::ChunkBuf;
use super::layout::Layout;
use super::meta::NdMeta;
use super::slice::{chunks_of_box, get_slice, zero_chunk};
use crate::error::{Error, Result};
use crate::schunk::SChunk;

/// Items written into the new shape by `reshape::resize_with`: the box `lo..hi`
/// (new coordinates) of `src`.
pub(super) struct BoxFill<'a> {
    pub(super) lo: &'a [u64],
    pub(super) hi: &'a [u64],
    pub(super) src: FillSrc<'a>,
}

/// Where a [`BoxFill`]'s items come from.
pub(super) enum FillSrc<'a> {
    /// A C-order buffer of the box's shape.
    Data(&'a [u8]),
    /// Another NDArray of the box's shape, read one chunk's part of the
    /// box at a time. With `aligned` (the same chunk and block shapes, the
    /// box starting at a chunk boundary), a new chunk the box covers whole
    /// is the array's chunk, copied compressed.
    Array {
        sc: &'a mut SChunk,
        meta: &'a NdMeta,
        /// Its layout (boxed: the variant stays small).
        layout: Box<Layout>,
        aligned: bool,
    },
    /// Another NDArray in memory, of the same chunk and block shapes, whose
    /// chunks are whole new chunks: the box starts at a chunk boundary and
    /// covers every new chunk it meets whole (an aligned concatenation:
    /// checked by [`BoxFill::whole_chunk`]). Each chunk is borrowed from
    /// the array's frame, copied once, into the new frame.
    Chunks {
        sc: &'a SChunk,
        /// Its layout (boxed: the variant stays small).
        layout: Box<Layout>,
    },
}

impl<'a> BoxFill<'a> {
    /// Write the items of the fill that chunk `ci` (coordinates `cc` of a
    /// `layout` of chunks `cs`, new shape `shape`) holds into `buf`, the
    /// chunk's bytes (marked as written where they go); `tmp` a scratch
    /// buffer.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn write(
        &mut self,
        layout: &Layout,
        ci: u64,
        cc: &[u64],
        cs: &[u64],
        shape: &[u64],
        buf: &mut ChunkBuf,
        tmp: &mut Vec<u8>,
    ) -> Result<()> {
        let n = self.lo.len();
        let is = layout.itemsize();
        let fshape: Vec<u64> = (0..n).map(|d| self.hi[d] - self.lo[d]).collect();
        match &mut self.src {
            FillSrc::Data(data) => {
                layout.for_each_box_span(ci, self.lo, self.hi, &fshape, |c, b, k| {
                    buf.write(c * is, &data[b * is..(b + k) * is]);
                });
            }
            FillSrc::Array { sc, meta, .. } => {
                // The part of the box in this chunk, read from the array.
                let flo: Vec<u64> = (0..n).map(|d| self.lo[d].max(cc[d] * cs[d])).collect();
                let fhi: Vec<u64> = (0..n)
                    .map(|d| self.hi[d].min((cc[d] + 1) * cs[d]).min(shape[d]))
                    .collect();
                let ext: Vec<u64> = (0..n).map(|d| fhi[d].saturating_sub(flo[d])).collect();
                if ext.contains(&0) {
                    return Ok(());
                }
                let slo: Vec<u64> = (0..n).map(|d| flo[d] - self.lo[d]).collect();
                let shi: Vec<u64> = (0..n).map(|d| fhi[d] - self.lo[d]).collect();
                tmp.clear();
                // At most one chunk's items.
                tmp.resize(ext.iter().product::<u64>() as usize * is, 0);
                get_slice(sc, meta, &slo, &shi, tmp, &ext)?;
                layout.for_each_box_span(ci, &flo, &fhi, &ext, |c, b, k| {
                    buf.write(c * is, &tmp[b * is..(b + k) * is]);
                });
            }
            // Its chunks are whole new chunks: `whole_chunk` gave each one
            // or failed, so no chunk comes here.
            FillSrc::Chunks { .. } => {
                return Err(Error::InvalidParam(
                    "a new chunk holding part of a box of whole chunks".into(),
                ));
            }
        }
        Ok(())
    }

    /// Whether the fill's items in new chunk `cc` (of chunks `cs`, new shape
    /// `shape`) are all zeros by the index alone: another array's, every
    /// chunk they come from a zero chunk ([`zero_chunk`]). A buffer's items
    /// are not looked at (false).
    pub(super) fn zeros_in(&mut self, cc: &[u64], cs: &[u64], shape: &[u64]) -> Result<bool> {
        let FillSrc::Array {
            sc, meta, layout, ..
        } = &mut self.src
        else {
            return Ok(false);
        };
        let n = self.lo.len();
        let flo: Vec<u64> = (0..n).map(|d| self.lo[d].max(cc[d] * cs[d])).collect();
        let fhi: Vec<u64> = (0..n)
            .map(|d| self.hi[d].min((cc[d] + 1) * cs[d]).min(shape[d]))
            .collect();
        if (0..n).any(|d| fhi[d] <= flo[d]) {
            return Ok(true);
        }
        let slo: Vec<u64> = (0..n).map(|d| flo[d] - self.lo[d]).collect();
        let shi: Vec<u64> = (0..n).map(|d| fhi[d] - self.lo[d]).collect();
        let want = layout.chunk_nbytes();
        for ci in chunks_of_box(meta, layout, &slo, &shi) {
            if !zero_chunk(sc, ci, want)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// The compressed chunk of the fill's array that is new chunk `cc`
    /// (of a `layout` of chunks `cs`, new shape `shape`) as it is, when the
    /// fill is aligned and covers that chunk whole (always for
    /// [`FillSrc::Chunks`]: an error otherwise); checked to hold the
    /// layout's chunk of its blocks.
    pub(super) fn whole_chunk(
        &mut self,
        layout: &Layout,
        cc: &[u64],
        cs: &[u64],
        shape: &[u64],
    ) -> Result<Option<Cow<'a, [u8]>>> {
        let n = self.lo.len();
        let inside = (0..n).all(|d| {
            cc[d] * cs[d] >= self.lo[d] && ((cc[d] + 1) * cs[d]).min(shape[d]) <= self.hi[d]
        });
        // The source's chunk at the same place of its grid.
        let lo = self.lo;
        let index = |l: &Layout| {
            let grid = l.grid();
            (0..n).fold(0u64, |a, d| a * grid[d] + (cc[d] - lo[d] / cs[d])) as usize
        };
        let (si, chunk) = match &mut self.src {
            FillSrc::Array {
                sc,
                layout,
                aligned: true,
                ..
            } if inside => {
                let si = index(layout);
                (si, Cow::Owned(sc.get_chunk(si)?.into_owned()))
            }
            FillSrc::Chunks { sc, layout } if inside => {
                let (si, sc): (usize, &'a SChunk) = (index(layout), sc);
                (si, sc.chunk_shared(si)?)
            }
            FillSrc::Chunks { .. } => {
                return Err(Error::InvalidParam(
                    "a box of whole chunks covering a new chunk in part".into(),
                ));
            }
            _ => return Ok(None),
        };
        let h = crate::chunk::validate(&chunk)?;
        let want = layout.chunk_nbytes();
        if h.nbytes != want || (h.special().is_none() && h.blocksize != layout.block_nbytes()) {
            return Err(Error::Corrupt(format!(
                "chunk {si} of the array concatenated holds {} bytes in blocks of {}, \
                 its metalayer gives {want} in blocks of {}",
                h.nbytes,
                h.blocksize,
                layout.block_nbytes()
            )));
        }
        Ok(Some(chunk))
    }
}
