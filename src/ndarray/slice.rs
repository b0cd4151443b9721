//! Slices of an NDArray's super-chunk: read a box of the logical array into
//! a C-order buffer ([`get_slice`]), write one from a buffer ([`set_slice`]),
//! (shape changes are in `reshape.rs`).
//!
//! A box is `start..stop` per dimension. The buffer's shape may be larger
//! than the box in any dimension: the box sits at the buffer's origin (as
//! C-Blosc2's `b2nd_get_slice_cbuffer` / `b2nd_set_slice_cbuffer` do).
//! Only the chunks the box touches are decompressed (and, for a write,
//! recompressed); a read decodes only their blocks the box touches.

use super::layout::Layout;
use super::meta::NdMeta;
use crate::error::{Error, Result};
use crate::schunk::{Rebuild, SChunk};

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
    }
    super::box_bytes(bshape, itemsize)
        .and_then(|b| usize::try_from(b).ok())
        .ok_or_else(|| Error::InvalidParam("buffer shape overflows".into()))
}

/// The chunks (indices in C order of the grid) the box touches.
pub(super) fn chunks_of_box(
    meta: &NdMeta,
    layout: &Layout,
    start: &[u64],
    stop: &[u64],
) -> Vec<u64> {
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
/// smaller than the box or of the wrong length, a `dst` of another size,
/// chunks larger than the super-chunk's [`crate::DParams::max_output`]
/// (refused before a chunk buffer is allocated);
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
    let mut r = ChunkReader::new(&layout);
    let want = layout.chunk_nbytes();
    for ci in chunks_of_box(meta, &layout, start, stop) {
        // A chunk the box holds whole, one run of the buffer: decoded (or
        // zeroed) straight into it, not through a chunk buffer and a copy.
        if let Some(b) = layout.whole_chunk_run(ci, start, stop, bshape) {
            let out = &mut dst[b as usize * is..b as usize * is + want];
            if r.begin(sc, ci)? {
                out.fill(0);
            } else {
                r.decode_whole_into(sc, ci, out)?;
            }
            continue;
        }
        if !r.begin(sc, ci)? {
            // Only the blocks the box touches are decoded (C-Blosc2 masks
            // the others out the same way).
            layout.for_each_box_span(ci, start, stop, bshape, |c, _, n| r.mark(c, n));
            r.decode(sc, ci)?;
        }
        layout.for_each_box_span(ci, start, stop, bshape, |c, b, n| {
            r.copy(c, n, &mut dst[b * is..(b + n) * is]);
        });
    }
    r.finish();
    Ok(())
}

/// This thread's buffers for the NDArray readers and editors, lent out
/// and taken back, so that a loop of reads or edits does not allocate,
/// zero and page in a block's or a chunk's buffer each time (a 10-item
/// `get_slice` zeroed a 128 KB block per call; `perf/README.md`, session
/// 35). One per thread, not per array: what stays allocated is bounded by
/// the threads, each keeping at most [`MAX_SCRATCH`] per slot.
#[derive(Clone, Copy)]
pub(super) enum Scratch {
    /// The blocks a read decodes.
    Part,
    /// A whole chunk (read whole, or patched).
    Whole,
}

/// The largest buffer a [`Scratch`] slot keeps (a larger one is freed).
const MAX_SCRATCH: usize = 8 << 20;

thread_local! {
    static SLOTS: [std::cell::Cell<Vec<u8>>; 2] =
        const { [std::cell::Cell::new(Vec::new()), std::cell::Cell::new(Vec::new())] };
}

impl Scratch {
    /// The slot's buffer (its bytes what the last user left; empty the
    /// first time, or while another user holds it).
    pub(super) fn take(self) -> Vec<u8> {
        SLOTS
            .try_with(|s| s[self as usize].take())
            .unwrap_or_default()
    }

    /// Hand a buffer back to the slot, kept when it is at most
    /// [`MAX_SCRATCH`] bytes.
    pub(super) fn keep(self, v: Vec<u8>) {
        if v.capacity() <= MAX_SCRATCH {
            let _ = SLOTS.try_with(|s| s[self as usize].set(v));
        }
    }
}

/// Where the items [`ChunkReader`] copies come from.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Held {
    /// The chunk is zeros by its index entry (nothing decoded).
    Zeros,
    /// The marked blocks, decoded one after the other into `part`.
    Part,
    /// The whole chunk, in `whole`.
    Whole,
}

/// Reads items out of an NDArray's chunks, one chunk at a time, decoding
/// only the blocks the items are in: [`ChunkReader::begin`] a chunk,
/// [`ChunkReader::mark`] the items wanted, [`ChunkReader::decode`], then
/// [`ChunkReader::copy`] them out (a chunk of zeros by its index entry is
/// not decoded at all). The buffers are sized once the first chunk that
/// is not zeros, checked to the end of its streams, backs the metalayer's
/// chunk size (see [`check_chunk`]): a block each of the blocks wanted,
/// not a chunk (a box of one row of a chunk of megabytes decodes and clears
/// one block, as C-Blosc2's b2nd does), unless the chunk's type size does
/// not divide its blocks into items. What [`get_slice`] and the selections
/// (`select.rs`) read with.
pub(super) struct ChunkReader {
    /// Bytes per item.
    is: usize,
    /// Bytes per chunk (the metalayer's).
    want: usize,
    /// Bytes and items per block.
    bn: usize,
    bi: usize,
    nblocks: usize,
    /// The blocks not wanted (true) of the chunk begun.
    mask: Vec<bool>,
    /// Where each wanted block sits in `part`.
    rank: Vec<usize>,
    /// The wanted blocks as runs `(first, count)`.
    runs: Vec<(usize, usize)>,
    part: Vec<u8>,
    whole: Vec<u8>,
    held: Held,
}

impl ChunkReader {
    /// A reader for chunks of `layout`, its buffers borrowed from this
    /// thread's [`Scratch`] until [`ChunkReader::finish`].
    pub(super) fn new(layout: &Layout) -> ChunkReader {
        let is = layout.itemsize().max(1);
        let bn = layout.block_nbytes().max(1);
        ChunkReader {
            is,
            want: layout.chunk_nbytes(),
            bn,
            bi: (bn / is).max(1),
            nblocks: layout.chunk_nbytes().div_ceil(bn),
            mask: Vec::new(),
            rank: Vec::new(),
            runs: Vec::new(),
            part: Scratch::Part.take(),
            whole: Scratch::Whole.take(),
            held: Held::Zeros,
        }
    }

    /// Hand the buffers back to this thread's [`Scratch`] (their bytes
    /// left as they are: the next reader overwrites what it reads, no
    /// zeroing).
    pub(super) fn finish(self) {
        Scratch::Part.keep(self.part);
        Scratch::Whole.keep(self.whole);
    }

    /// Begin chunk `ci`: true when it is zeros by its index entry (then
    /// [`ChunkReader::copy`] gives zeros, nothing is marked or decoded).
    pub(super) fn begin(&mut self, sc: &mut SChunk, ci: u64) -> Result<bool> {
        if zero_chunk(sc, ci, self.want)? {
            self.held = Held::Zeros;
            return Ok(true);
        }
        if self.mask.is_empty() {
            check_chunk(sc, ci, self.want)?;
            self.mask = vec![true; self.nblocks];
            self.rank = vec![0; self.nblocks];
        }
        self.mask.fill(true);
        Ok(false)
    }

    /// Want the items `c..c + n` of the chunk begun (in bounds).
    #[inline]
    pub(super) fn mark(&mut self, c: usize, n: usize) {
        let (is, bn) = (self.is, self.bn);
        self.mask[c * is / bn..=((c + n) * is - 1) / bn].fill(false);
    }

    /// Decode the blocks marked of chunk `ci` (begun, not zeros).
    pub(super) fn decode(&mut self, sc: &mut SChunk, ci: u64) -> Result<()> {
        let (want, bn) = (self.want, self.bn);
        self.runs.clear();
        let mut kept = 0;
        for (b, &out) in self.mask.iter().enumerate() {
            if out {
                continue;
            }
            self.rank[b] = kept;
            kept += 1;
            match self.runs.last_mut() {
                Some((first, count)) if *first + *count == b => *count += 1,
                _ => self.runs.push((b, 1)),
            }
        }
        if kept < self.nblocks {
            if self.part.len() < kept * bn {
                self.part.resize(kept * bn, 0);
            }
            let got = sc.decompress_chunk_block_runs_into(
                ci as usize,
                bn,
                &self.runs,
                &mut self.part[..kept * bn],
            )?;
            match got {
                Some(n) if n != want => return Err(short_chunk(ci, n, want)),
                Some(_) => {
                    self.held = Held::Part;
                    return Ok(());
                }
                // Blocks that are not whole items of the chunk's type size:
                // the whole chunk.
                None => {}
            }
        }
        if self.whole.len() < want {
            self.whole.resize(want, 0);
        }
        // A stored chunk of other blocks is refused (as `NdArray` reads
        // refuse it); a special one is decoded whole.
        let whole = &mut self.whole[..want];
        let n = sc.decompress_chunk_blocks_into(ci as usize, bn, &self.mask, whole)?;
        // A shorter chunk would leave the previous chunk's bytes in `whole`.
        if n != want {
            return Err(short_chunk(ci, n, want));
        }
        self.held = Held::Whole;
        Ok(())
    }

    /// Decode chunk `ci` (begun, not zeros) whole into `out`, its
    /// `chunk_nbytes` bytes; a stored chunk of other blocks is refused, as
    /// [`ChunkReader::decode`] refuses it (no mask: nothing is skipped).
    pub(super) fn decode_whole_into(
        &mut self,
        sc: &mut SChunk,
        ci: u64,
        out: &mut [u8],
    ) -> Result<()> {
        let n = sc.decompress_chunk_blocks_into(ci as usize, self.bn, &[], out)?;
        if n != self.want {
            return Err(short_chunk(ci, n, self.want));
        }
        Ok(())
    }

    /// Copy the items `c..c + n` of the chunk (marked and decoded, or
    /// zeros) into `out` (their `n` items' bytes). Items marked together
    /// that follow on in the chunk follow on in `part` too (their blocks
    /// were all kept, one after the other).
    #[inline]
    pub(super) fn copy(&self, c: usize, n: usize, out: &mut [u8]) {
        let is = self.is;
        match self.held {
            Held::Zeros => out.fill(0),
            Held::Part => {
                let at = self.rank[c / self.bi] * self.bi + c % self.bi;
                out.copy_from_slice(&self.part[at * is..(at + n) * is]);
            }
            Held::Whole => out.copy_from_slice(&self.whole[c * is..(c + n) * is]),
        }
    }
}

/// Whether chunk `ci` is zeros by its index entry alone (as `b2nd_zeros`,
/// `fill_special` and resizes leave an array's chunks), of the
/// metalayer's chunk size `want`; a zero chunk of another size, or over
/// [`crate::DParams::max_output`], is refused as a decoded one would be.
pub(super) fn zero_chunk(sc: &mut SChunk, ci: u64, want: usize) -> Result<bool> {
    let ci = ci as usize;
    if sc.index_special(ci) != Some(crate::SpecialValue::Zeros) {
        return Ok(false);
    }
    // The output limit holds as for a decoded chunk: the same calls work
    // or are refused, only faster.
    sc.dparams().check_output(want)?;
    let n = sc.chunk_nbytes(ci)?;
    if n != want {
        return Err(short_chunk(ci as u64, n, want));
    }
    Ok(true)
}

/// Whether chunk `ci`, checked to the end of its streams, declares `want`
/// bytes, the metalayer's chunk size, within the decoder's output limit:
/// what a buffer sized by the metalayer waits for (a metalayer that is not
/// the super-chunk's is refused before anything is sized by it).
fn check_chunk(sc: &mut SChunk, ci: u64, want: usize) -> Result<()> {
    sc.dparams().check_output(want)?;
    let chunk = sc.get_chunk(ci as usize)?;
    let h = crate::chunk::validate(&chunk)?;
    if h.nbytes != want {
        return Err(short_chunk(ci, h.nbytes, want));
    }
    Ok(())
}

/// A buffer of `want` bytes, allocated only once chunk `ci` passes
/// [`check_chunk`].
fn chunk_buffer(sc: &mut SChunk, ci: u64, want: usize) -> Result<Vec<u8>> {
    check_chunk(sc, ci, want)?;
    let mut v = Scratch::Whole.take();
    v.resize(want, 0);
    Ok(v)
}

/// The super-chunk's compression parameters (with the thread count it
/// runs, not a frame header's) with the array's block size: every chunk of
/// an NDArray has blocks of the block shape's bytes (its readers, ours and
/// C-Blosc2's, require it), whatever block size the frame's header records.
pub(super) fn chunk_cparams(sc: &SChunk, layout: &Layout) -> crate::CParams {
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
    // Before anything is sized by the chunk count (see `patch_chunks`).
    sc.check_editable()?;
    sc.check_index_editable()?;
    let layout = layout_of(sc, meta)?;
    let chunks = chunks_of_box(meta, &layout, start, stop);
    let covers = |ci| box_covers_chunk(meta, &layout, ci, start, stop);
    patch_chunks(sc, &layout, &chunks, covers, |ci, buf| {
        layout.for_each_box_span(ci, start, stop, bshape, |c, b, n| {
            buf[c * is..(c + n) * is].copy_from_slice(&src[b * is..(b + n) * is]);
        });
        Ok(())
    })
}

/// Whether the box `start..stop` holds every item of chunk `ci` (of
/// `layout`'s grid, in C order) that is inside the array: a write of the
/// box replaces all of the chunk's items.
fn box_covers_chunk(meta: &NdMeta, layout: &Layout, ci: u64, start: &[u64], stop: &[u64]) -> bool {
    let grid = layout.grid();
    let mut cc = [0u64; super::meta::MAX_DIM];
    let mut rest = ci;
    for d in (0..grid.len()).rev() {
        let g = grid[d].max(1);
        cc[d] = rest % g;
        rest /= g;
    }
    box_covers(
        &meta.shape,
        &meta.chunkshape,
        &cc[..grid.len()],
        start,
        stop,
    )
}

/// Whether the box `lo..hi` holds every item, inside an array of `shape`
/// in chunks of `cs`, of the chunk at coordinates `cc`.
pub(super) fn box_covers(shape: &[u64], cs: &[u64], cc: &[u64], lo: &[u64], hi: &[u64]) -> bool {
    (0..cc.len()).all(|d| {
        let a = cc[d] * cs[d];
        lo[d] <= a && (a + cs[d]).min(shape[d]) <= hi[d]
    })
}

/// `Corrupt` unless the super-chunk holds as many chunks as `layout`.
pub(super) fn check_chunk_count(sc: &SChunk, layout: &Layout) -> Result<()> {
    if layout.nchunks() != sc.nchunks() as u64 {
        return Err(Error::Corrupt(format!(
            "the NDArray has {} chunks, its shape needs {}",
            sc.nchunks(),
            layout.nchunks()
        )));
    }
    Ok(())
}

/// Decode chunk `ci` whole into `buf` (the metalayer's chunk size), every
/// block of `bn` bytes (`keep_all`: a `false` per block): a stored chunk
/// of other blocks, or of another size, is `Corrupt` (a shorter chunk
/// would be stored again with the previous chunk's bytes after its own).
pub(super) fn decode_whole(
    sc: &mut SChunk,
    ci: u64,
    bn: usize,
    keep_all: &[bool],
    buf: &mut [u8],
) -> Result<()> {
    let n = sc.decompress_chunk_blocks_into(ci as usize, bn, keep_all, buf)?;
    if n != buf.len() {
        return Err(short_chunk(ci, n, buf.len()));
    }
    Ok(())
}

/// Decode each chunk of `chunks` (indices of `layout`'s grid, each once)
/// whole, let `patch(ci, chunk)` change its bytes, compress it again, and
/// replace all of them in one change of the super-chunk (a chunk that does
/// not decode, a failed `patch` or write, or a crash leave the array as it
/// was): what [`set_slice`], orthogonal selections and concatenations
/// write with. A chunk for which `fresh(ci)` holds (the patch writes every
/// item of it inside the array) is not decoded, only checked to be the
/// metalayer's chunk: it starts from zeros, so its padding (the chunk's
/// part past the array's end) is zero after, as C-Blosc2's
/// `b2nd_set_slice_cbuffer` writes such a chunk.
pub(super) fn patch_chunks(
    sc: &mut SChunk,
    layout: &Layout,
    chunks: &[u64],
    fresh: impl Fn(u64) -> bool,
    mut patch: impl FnMut(u64, &mut [u8]) -> Result<()>,
) -> Result<()> {
    sc.check_editable()?;
    // Before anything is sized by the chunk count (a repeated index may
    // stand for millions of chunks the change could not write).
    sc.check_index_editable()?;
    check_chunk_count(sc, layout)?;
    let want = layout.chunk_nbytes();
    // One compressor for every chunk (codec contexts and thread pool made
    // once).
    let mut comp = crate::Compressor::new(chunk_cparams(sc, layout));
    let mut buf = Vec::new();
    let mut updates = Vec::new();
    let bn = layout.block_nbytes().max(1);
    // Sized with the buffer, once the first chunk backs the metalayer.
    let mut keep_all = Vec::new();
    for &ci in chunks {
        let fresh = fresh(ci);
        if buf.is_empty() {
            buf = chunk_buffer(sc, ci, want)?;
            keep_all = vec![false; want.div_ceil(bn)];
        } else if fresh {
            // Not decoded, but still the metalayer's chunk: a chunk that is
            // not refuses the edit, as a decode would.
            check_chunk(sc, ci, want)?;
        }
        if fresh {
            // Every item replaced: nothing of the stored chunk is kept.
            buf.fill(0);
        } else {
            // Every block decoded; a stored chunk of other blocks refused,
            // as `get_slice` refuses it.
            decode_whole(sc, ci, bn, &keep_all, &mut buf)?;
        }
        patch(ci, &mut buf)?;
        updates.push((ci as usize, comp.compress(&buf)?));
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
        plan.push(Rebuild::New(chunk.into()));
        next = ci + 1;
    }
    if next < n {
        plan.push(Rebuild::Keep(next..n));
    }
    Scratch::Whole.keep(buf);
    sc.rebuild_chunks(&plan)
}
