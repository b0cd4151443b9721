//! Chunk encoding: filters -> split streams -> codec -> layout, with the same
//! decisions as C-Blosc2 (CHUNK-NOTES §5): the destination's size steers the
//! codec's output limit and the memcpy fallback exactly as `destsize` does in
//! C, so a destination of `nbytes + 32` gives C's chunk shape.

use oxiblosc_kernels::Kernels;

use super::blocksize::{
    BLOSC1_MIN_BUFFERSIZE, compute_blocksize, compute_blocksize_blosc1, split_block,
    split_block_blosc1,
};
use super::header::{ChunkHeader, EXTENDED_HEADER_LEN, MIN_HEADER_LEN, bflags, flags};
use crate::codecs::EncDict;
use crate::error::{Error, Result};
use crate::filters::{Pipeline, id};
use crate::parallel::{Scratch, Workers};
use crate::params::{
    CParams, ChunkFormat, Codec, Filter, MAX_BUFFERSIZE, MAX_OVERHEAD, MAX_TYPESIZE,
};
use stream::{StreamCodec, constant, write_stream};

/// Chunk format version C-Blosc2 writes for fixed-size blocks.
const VERSION_STABLE: u8 = 5;
/// Chunk format version C-Blosc 1.x writes (and the only one it reads).
const VERSION_BLOSC1: u8 = 2;
/// Codec format version of the built-in codecs.
const VERSIONLZ: u8 = 1;
/// Inputs below this are stored raw (`BLOSC_MIN_BUFFERSIZE`).
const MIN_BUFFERSIZE: usize = 32;
const MAX_DICT: usize = 32 * 1024;
const MIN_USEFUL_DICT: usize = 256;

/// The layout decided for a chunk before any block is compressed.
pub(crate) struct Layout<'c> {
    pub header: ChunkHeader,
    /// A Blosc1 chunk (16-byte header, no run streams, C-Blosc 1.x rules).
    pub blosc1: bool,
    pub typesize: usize,
    pub blocksize: usize,
    pub nblocks: usize,
    pub pipeline: Pipeline<'c>,
}

/// Header and layout for compressing `nbytes` with `p`.
pub(crate) fn layout(p: &CParams, nbytes: usize) -> Result<Layout<'_>> {
    p.validate()?;
    if nbytes > MAX_BUFFERSIZE {
        return Err(Error::InvalidParam(format!(
            "input of {nbytes} bytes exceeds the chunk maximum of {MAX_BUFFERSIZE}"
        )));
    }
    let typesize = if p.typesize > MAX_TYPESIZE {
        1
    } else {
        p.typesize
    };
    if p.format == ChunkFormat::Blosc1 {
        return Ok(layout_blosc1(p, typesize, nbytes));
    }
    let blocksize = compute_blocksize(p, nbytes);
    let nblocks = nbytes.div_ceil(blocksize);
    let mut ids = [0u8; 6];
    let mut metas = [0u8; 6];
    for s in 0..6 {
        if let Some(f) = p.filters[s] {
            ids[s] = f.id();
            metas[s] = p.slot_meta(s);
            // BYTEDELTA meta 0 means "the super-chunk's typesize", which C
            // refuses outside a super-chunk: write the typesize itself.
            if f == Filter::ByteDelta && metas[s] == 0 {
                metas[s] = typesize as u8;
            }
        }
    }
    // A block is split into `typesize` streams only when it holds whole
    // items (a forced block smaller than one item cannot be split).
    let dont_split = !split_block(p, typesize, blocksize) || !whole_items(blocksize, typesize);
    let mut fl = flags::EXTENDED | (p.codec.format() << 5);
    if p.filters.contains(&Some(Filter::Delta)) {
        fl |= flags::DELTA;
    }
    if dont_split {
        fl |= flags::DONT_SPLIT;
    }
    let header = ChunkHeader {
        version: VERSION_STABLE,
        versionlz: VERSIONLZ,
        flags: fl,
        typesize: typesize as u8,
        nbytes,
        blocksize,
        cbytes: 0,
        filters: ids,
        filters_meta: metas,
        udcodec: p.codec.id(),
        compcode_meta: p.codec_meta,
        blosc2_flags2: 0,
        blosc2_flags: 0,
    };
    Ok(Layout {
        header,
        blosc1: false,
        typesize,
        blocksize,
        nblocks,
        pipeline: Pipeline::new(ids, metas, typesize, false, p.context.as_ref()),
    })
}

/// Whether a block of `blocksize` bytes holds a whole number (at least one)
/// of `typesize`-byte items: only such a block can be split into streams.
fn whole_items(blocksize: usize, typesize: usize) -> bool {
    blocksize >= typesize && blocksize.is_multiple_of(typesize)
}

/// The layout C-Blosc 1.21 gives `nbytes` with `p` (CHUNK-NOTES §11.2): its
/// tuner and split rule on the capped type size, the shuffle / bitshuffle
/// flag bits instead of filter slots (shuffle only runs when the type size
/// is above 1, as in C), version 2.
fn layout_blosc1(p: &CParams, typesize: usize, nbytes: usize) -> Layout<'_> {
    let blocksize = compute_blocksize_blosc1(p, typesize, nbytes);
    let nblocks = nbytes.div_ceil(blocksize);
    // C's flag, also where C-Blosc 1.x readers will not split (items over
    // 16 bytes, under 128 items, a block under one item): `Blocks::nstreams`
    // writes one stream there, which every reader decodes.
    let dont_split = !split_block_blosc1(p, typesize, blocksize);
    let mut fl = p.codec.format() << 5;
    let mut ids = [0u8; 6];
    match p.blosc1_shuffle() {
        Some(Filter::Shuffle) => {
            fl |= flags::SHUFFLE;
            if typesize > 1 {
                ids[5] = id::SHUFFLE;
            }
        }
        Some(Filter::BitShuffle) => {
            fl |= flags::BITSHUFFLE;
            ids[5] = id::BITSHUFFLE;
        }
        _ => {}
    }
    if dont_split {
        fl |= flags::DONT_SPLIT;
    }
    let header = ChunkHeader {
        version: VERSION_BLOSC1,
        versionlz: VERSIONLZ,
        flags: fl,
        typesize: typesize as u8,
        nbytes,
        blocksize,
        cbytes: 0,
        filters: [0; 6],
        filters_meta: [0; 6],
        udcodec: 0,
        compcode_meta: 0,
        blosc2_flags2: 0,
        blosc2_flags: 0,
    };
    Layout {
        header,
        blosc1: true,
        typesize,
        blocksize,
        nblocks,
        pipeline: Pipeline::new(ids, [0; 6], typesize, true, p.context.as_ref()),
    }
}

/// Store `src` raw after the header. `flags_value` is 0x07 for a chunk stored
/// from the start, or the normal flags plus 0x02 for the fallback.
fn write_memcpyed(
    h: &mut ChunkHeader,
    src: &[u8],
    dst: &mut [u8],
    flags_value: u8,
) -> Result<usize> {
    let hlen = h.header_len();
    let total = src.len() + hlen;
    if dst.len() < total {
        return Err(Error::DstTooSmall {
            needed: total,
            available: dst.len(),
        });
    }
    h.flags = flags_value;
    debug_assert_eq!(h.header_len(), hlen);
    // The dictionary is not used by raw data: C leaves the bit set and then
    // cannot read its own chunk; we clear it.
    h.blosc2_flags &= !bflags::USE_DICT;
    h.cbytes = total;
    h.write(dst);
    super::copy_pieces(&mut dst[hlen..total], src);
    Ok(total)
}

/// How much of the destination a chunk may use.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Room {
    /// At most `nbytes` plus the header (32 bytes for Blosc2, 16 for
    /// Blosc1): the room python-blosc2 and numcodecs give C, so the chunk
    /// is the one they get, whatever the size of `dst`.
    Bounded,
    /// All of `dst`, as C-Blosc2's and C-Blosc's `destsize`: with more
    /// room than `nbytes` plus the header, blocks that do not compress are
    /// written as raw streams (each with its size word) where the bounded
    /// room stores the whole chunk raw (memcpyed).
    All,
}

/// Compress `src` into `dst` with `p`; returns the chunk size.
pub(crate) fn compress_into(
    src: &[u8],
    dst: &mut [u8],
    p: &CParams,
    workers: &mut Workers,
    room: Room,
) -> Result<usize> {
    compress_into_hinted(src, dst, p, workers, room, None)
}

/// Which bytes of a chunk's input are known to be zero: the input cut in
/// granules of `granule` bytes (the last may be shorter), granule `g`
/// all zeros unless `dirty[g]`. A caller that builds a chunk from zeros
/// and a few items knows it without looking.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ZeroMap<'a> {
    pub granule: usize,
    pub dirty: &'a [bool],
}

impl ZeroMap<'_> {
    /// Whether every byte of `range` lies in granules not dirty.
    fn clean(&self, range: std::ops::Range<usize>) -> bool {
        if range.is_empty() || self.granule == 0 {
            return range.is_empty();
        }
        let (g0, g1) = (range.start / self.granule, (range.end - 1) / self.granule);
        self.dirty
            .get(g0..=g1)
            .is_some_and(|d| d.iter().all(|&x| !x))
    }
}

/// [`compress_into`] of an input whose zero bytes `zeros` tells: the same
/// chunk, byte for byte, but a block all in clean granules is not filtered
/// or scanned. When its filters turn zeros into zeros (shuffle,
/// bitshuffle, truncation, bytedelta), each of its streams is a zero run
/// (Blosc2 chunks), which the scan would have found.
pub(crate) fn compress_into_hinted(
    src: &[u8],
    dst: &mut [u8],
    p: &CParams,
    workers: &mut Workers,
    room: Room,
    zeros: Option<ZeroMap<'_>>,
) -> Result<usize> {
    // Sampled, not scanned: a whole scan is what the map saves (and in
    // fuzz builds, which keep debug assertions, a traced comparison per
    // byte made inputs with chunks of mostly padding 50 times slower).
    debug_assert!(zeros.is_none_or(|z| {
        (0..src.len())
            .step_by(65_521)
            .chain(src.len().checked_sub(1))
            .all(|at| src[at] == 0 || !z.clean(at..at + 1))
    }));
    let lay = layout(p, src.len())?;
    let mut h = lay.header.clone();
    let nbytes = src.len();
    // The header is also the most a chunk adds to its input with the
    // bounded room (32 bytes for Blosc2, 16 for Blosc1).
    let (hlen, min_buffersize) = if lay.blosc1 {
        (MIN_HEADER_LEN, BLOSC1_MIN_BUFFERSIZE)
    } else {
        (EXTENDED_HEADER_LEN, MIN_BUFFERSIZE)
    };
    debug_assert!(hlen <= MAX_OVERHEAD);
    let limit = match room {
        Room::Bounded => dst.len().min(nbytes + hlen),
        Room::All => dst.len(),
    };
    let dst = &mut dst[..limit];
    let destsize = dst.len();
    if destsize < hlen {
        return Err(Error::DstTooSmall {
            needed: hlen,
            available: destsize,
        });
    }
    let bstarts_len = 4 * lay.nblocks;
    // Stored raw from the start: Blosc2 writes flags 0x07 and nothing else;
    // C-Blosc 1.x keeps its shuffle, split and codec bits.
    let raw_flags = if lay.blosc1 {
        h.flags | flags::MEMCPYED
    } else {
        flags::EXTENDED | flags::MEMCPYED
    };
    let starts_fit = hlen + bstarts_len <= destsize;
    // With a dictionary, C-Blosc2's first (training) pass writes no block
    // starts, so its "they do not fit" check never stores the chunk raw
    // from the start: its fallback does, keeping the normal flags.
    let dict_pass = p.use_dict && !lay.blosc1;
    if p.clevel == 0 || nbytes < min_buffersize || !(starts_fit || dict_pass) {
        return write_memcpyed(&mut h, src, dst, raw_flags);
    }
    let normal_flags = h.flags;
    // Stored raw by the fallback: C-Blosc2's flags, whose split bit follows
    // its split rule alone (a forced block of part items, which is never
    // split, is marked split in its header; readers of a raw chunk do not
    // look at the bit).
    let fallback_flags = flags::MEMCPYED
        | match lay.blosc1 {
            true => normal_flags,
            false if split_block(p, lay.typesize, lay.blocksize) => {
                normal_flags & !flags::DONT_SPLIT
            }
            false => normal_flags | flags::DONT_SPLIT,
        };
    if !starts_fit {
        return write_memcpyed(&mut h, src, dst, fallback_flags);
    }
    let k = Kernels::selected()?;

    // Dictionary: trained on the filtered blocks (CHUNK-NOTES §7).
    let dict = if p.use_dict {
        train_dict(&lay, p, src, k, workers.inline())?
    } else {
        None
    };
    let mut ntbytes = hlen + bstarts_len;
    if let Some((raw, _)) = &dict {
        let need = ntbytes + 4 + raw.len();
        if need > destsize {
            return write_memcpyed(&mut h, src, dst, fallback_flags);
        }
        dst[ntbytes..ntbytes + 4].copy_from_slice(&(raw.len() as i32).to_le_bytes());
        dst[ntbytes + 4..need].copy_from_slice(raw);
        ntbytes = need;
        h.blosc2_flags |= bflags::USE_DICT;
    }
    let enc_dict = dict.as_ref().map(|(_, d)| d);

    let reference0 = delta_reference(&lay, src, k, workers.inline())?;
    let reference0: &[u8] = &reference0;
    let zero_filters = lay.pipeline.ids().iter().all(|&f| {
        matches!(
            f,
            id::NOFILTER | id::SHUFFLE | id::BITSHUFFLE | id::TRUNC_PREC | id::BYTEDELTA
        )
    });
    let blocks = Blocks {
        lay: &lay,
        p,
        k,
        src,
        reference0,
        dict: enc_dict,
        c_split: false,
        zeros: zeros.filter(|_| zero_filters && !lay.blosc1),
    };
    if lay.blosc1 && blocks.c_split_unreadable() {
        // C-Blosc 1.21 would write split streams here that its readers
        // cannot decode; we write one stream per block instead, and set the
        // flag that says so (below). Whether C
        // falls back to storing the chunk raw depends on its own streams:
        // run them to make the same choice (and so the same flags).
        let c_like = Blocks {
            c_split: true,
            ..blocks
        };
        // No more than the largest chunk those streams can make: a
        // destination larger than that changes nothing, and with all of a
        // caller's room (`Room::All`) `destsize` is not bounded by the input.
        let most = ntbytes + (0..lay.nblocks).map(|i| c_like.worst(i)).sum::<usize>();
        let mut trial = vec![0u8; destsize.min(most)];
        let mut end = ntbytes;
        for i in 0..lay.nblocks {
            match c_like.encode(i, workers.inline(), &mut trial, end)? {
                Some(e) => end = e,
                None => return write_memcpyed(&mut h, src, dst, fallback_flags),
            }
        }
        // Our one stream per block is what C-Blosc 1.x readers expect with
        // the split flag clear, but C-Blosc2 splits every block of a chunk
        // whose flag is clear: say "not split" (0x10), which both read as
        // one stream. Only this bit differs from C-Blosc 1.21's header, and
        // only where C-Blosc 1.x could not read C-Blosc 1.21's own chunk.
        h.flags |= flags::DONT_SPLIT;
    }
    let nstreams_total: usize = (0..lay.nblocks).map(|i| blocks.nstreams(i)).sum();
    let bstart_at = |i: usize| hlen + 4 * i;
    let warm = |s: &mut Scratch| {
        s.reserve(lay.blocksize);
        s.codecs.warm_compress(p.codec, p.clevel)
    };
    match workers.team(nbytes, lay.nblocks, warm)? {
        None => {
            let scratch = workers.inline();
            for i in 0..lay.nblocks {
                dst[bstart_at(i)..bstart_at(i) + 4]
                    .copy_from_slice(&(ntbytes as i32).to_le_bytes());
                match blocks.encode(i, scratch, dst, ntbytes)? {
                    Some(end) => ntbytes = end,
                    None => {
                        return write_memcpyed(&mut h, src, dst, fallback_flags);
                    }
                }
            }
        }
        Some(team) => match parallel::encode_blocks(team, &blocks, dst, ntbytes, hlen)? {
            Some(end) => ntbytes = end,
            None => return write_memcpyed(&mut h, src, dst, fallback_flags),
        },
    }

    if !lay.blosc1 && dict.is_none() && ntbytes == hlen + bstarts_len + 4 * nstreams_total {
        // Every stream is a zero run: the chunk is all zeros.
        h.blosc2_flags |= 0x10;
        h.cbytes = hlen;
        h.write(dst);
        return Ok(hlen);
    }
    h.cbytes = ntbytes;
    h.write(dst);
    Ok(ntbytes)
}

/// A block's first this many streams are checked for being constant right
/// after its filters run (a block has at most 255 streams, one per byte of
/// the type size; any further would be checked when written).
const CHECKED_AHEAD: usize = 256;

/// What every block of a chunk being compressed shares.
#[derive(Clone, Copy)]
struct Blocks<'a> {
    lay: &'a Layout<'a>,
    p: &'a CParams,
    k: &'a Kernels,
    src: &'a [u8],
    /// Block 0 as decoders will see it (DELTA's reference).
    reference0: &'a [u8],
    dict: Option<&'a EncDict>,
    /// Split Blosc1 blocks as C-Blosc 1.21's writer does, readable or not
    /// (only to predict its memcpy fallback).
    c_split: bool,
    /// Blocks known to be zeros, whose streams are zero runs (see
    /// [`compress_into_hinted`]).
    zeros: Option<ZeroMap<'a>>,
}

impl Blocks<'_> {
    /// Whether C-Blosc 1.21 would split blocks its readers do not split:
    /// the split flag set for items over 16 bytes or blocks under 128 items.
    fn c_split_unreadable(&self) -> bool {
        let ts = self.lay.typesize;
        let readable = ts <= 16 && self.lay.blocksize / ts >= 128;
        !self.lay.header.dont_split() && !readable
    }

    fn block(&self, i: usize) -> &[u8] {
        let bs = self.lay.blocksize;
        &self.src[i * bs..((i + 1) * bs).min(self.src.len())]
    }

    /// Streams block `i` is split into.
    fn nstreams(&self, i: usize) -> usize {
        let leftover_block = self.block(i).len() < self.lay.blocksize;
        let ts = self.lay.typesize;
        // C-Blosc 1.x readers split only blocks of at most 16-byte items
        // with at least 128 of them, whatever the flag says; C-Blosc 1.21's
        // ALWAYS mode writes split streams outside that and cannot read them
        // back. Write what the readers expect (and the header then says
        // "not split", for C-Blosc2's readers: see `compress_into_hinted`).
        let readable_split =
            !self.lay.blosc1 || self.c_split || (ts <= 16 && self.lay.blocksize / ts >= 128);
        if self.lay.header.dont_split() || leftover_block || !readable_split {
            1
        } else {
            ts
        }
    }

    /// The most bytes block `i` can take: a size word per stream, and every
    /// stream stored raw.
    fn worst(&self, i: usize) -> usize {
        4 * self.nstreams(i) + self.block(i).len()
    }

    /// Filter block `i` and write its streams into `dst` from `pos`, with
    /// `dst.len()` as the limit; the end, or `None` when they do not fit.
    fn encode(
        &self,
        i: usize,
        scratch: &mut Scratch,
        dst: &mut [u8],
        pos: usize,
    ) -> Result<Option<usize>> {
        let bs = self.lay.blocksize;
        if self
            .zeros
            .is_some_and(|z| z.clean(i * bs..((i + 1) * bs).min(self.src.len())))
        {
            // What the filters and the scan below would find: every stream
            // a zero run, its size word 0.
            let end = pos + 4 * self.nstreams(i);
            if end > dst.len() {
                return Ok(None);
            }
            dst[pos..end].fill(0);
            return Ok(Some(end));
        }
        let block = self.block(i);
        let reference = (i > 0).then_some(self.reference0);
        scratch.reserve(block.len());
        let Scratch { a, b, codecs, .. } = scratch;
        let filtered = self.lay.pipeline.forward(self.k, block, reference, a, b)?;
        let nstreams = self.nstreams(i);
        let neblock = block.len() / nstreams;
        let mut ntbytes = pos;
        // Which streams are one repeated byte (run streams, the Blosc1
        // memo), checked now, while the filter's output is still in cache:
        // a constant stream is read to its end, and later, once the codec
        // has run on the streams before it, much of it comes from memory.
        let mut constant_streams = [false; CHECKED_AHEAD];
        for (c, stream) in constant_streams
            .iter_mut()
            .zip(filtered.chunks_exact(neblock).take(nstreams))
        {
            *c = constant(stream);
        }
        for (j, stream) in filtered.chunks_exact(neblock).take(nstreams).enumerate() {
            let is_constant = match constant_streams.get(j) {
                Some(&c) => c,
                None => constant(stream),
            };
            let runs = !self.lay.blosc1;
            // C-Blosc 1.x hands its BloscLZ the chunk's split flag, even for
            // the one stream of a leftover block.
            let split = !self.lay.header.dont_split();
            let how = StreamCodec {
                p: self.p,
                runs,
                blosc1_split: self.lay.blosc1.then_some(split),
            };
            match write_stream(stream, is_constant, dst, ntbytes, &how, codecs, self.dict)? {
                Some(end) => ntbytes = end,
                None => return Ok(None),
            }
        }
        Ok(Some(ntbytes))
    }
}

/// The block DELTA XORs later blocks with: block 0 as every decoder will
/// see it, i.e. the input itself unless a lossy TRUNC_PREC slot changes it
/// (then block 0 is run through the filters and back).
fn delta_reference<'a>(
    lay: &Layout,
    src: &'a [u8],
    k: &Kernels,
    scratch: &mut Scratch,
) -> Result<std::borrow::Cow<'a, [u8]>> {
    let block0 = &src[..lay.blocksize.min(src.len())];
    let lossy = lay.pipeline.ids().contains(&id::TRUNC_PREC);
    if !lay.pipeline.has_delta() || !lossy {
        return Ok(std::borrow::Cow::Borrowed(block0));
    }
    let n = block0.len();
    scratch.reserve(n);
    let Scratch { a, b, .. } = scratch;
    let mut filtered = lay.pipeline.forward(k, block0, None, a, b)?.to_vec();
    let mut spare = vec![0u8; n];
    let mut decoded = vec![0u8; n];
    lay.pipeline
        .backward(k, &mut filtered, &mut spare, None, &mut decoded)?;
    Ok(std::borrow::Cow::Owned(decoded))
}

/// Train the chunk's dictionary: `(raw bytes stored in the chunk, digested
/// form)`, or `None` when the chunk is too small for a useful one.
fn train_dict(
    lay: &Layout,
    p: &CParams,
    src: &[u8],
    k: &Kernels,
    scratch: &mut Scratch,
) -> Result<Option<(Vec<u8>, EncDict)>> {
    let nbytes = src.len();
    let maxsize = MAX_DICT.min(nbytes / 20);
    let split = !lay.header.dont_split();
    let nsamples = 8.max(lay.nblocks * if split { lay.typesize } else { 1 });
    let sample_size = nbytes / nsamples / 16;
    if maxsize < MIN_USEFUL_DICT || sample_size == 0 {
        return Ok(None);
    }
    // The filtered blocks, concatenated (C's first pass).
    let mut filtered = Vec::with_capacity(nbytes);
    let reference0 = delta_reference(lay, src, k, scratch)?;
    let reference0: &[u8] = &reference0;
    for (i, block) in src.chunks(lay.blocksize).enumerate() {
        scratch.reserve(block.len());
        let reference = (i > 0).then_some(reference0);
        let Scratch { a, b, .. } = scratch;
        filtered.extend_from_slice(lay.pipeline.forward(k, block, reference, a, b)?);
    }
    match p.codec {
        #[cfg(feature = "zstd")]
        Codec::Zstd => {
            let sizes = vec![sample_size; nsamples];
            let Some(raw) =
                crate::codecs::zstd::train(&filtered[..nsamples * sample_size], &sizes, maxsize)
            else {
                return Ok(None);
            };
            if raw.is_empty() {
                return Ok(None);
            }
            let cdict = crate::codecs::zstd::CDict::new(&raw)?;
            Ok(Some((raw, EncDict::Zstd(cdict))))
        }
        Codec::Lz4 | Codec::Lz4Hc => {
            let len = (nsamples * sample_size).min(maxsize);
            let raw = lz4_dict(&filtered[..len], lay.nblocks);
            let d = EncDict::Lz4(raw.clone());
            Ok(Some((raw, d)))
        }
        _ => Ok(None),
    }
}

/// An LZ4 / LZ4HC dictionary as C-Blosc2 makes it of `sample` (the first
/// bytes of the filtered data, as long as the dictionary) for a chunk of
/// `nblocks` blocks: C writes the dictionary's size (LE i32) into its sample
/// area at byte `4 * nblocks` before it copies the dictionary out, so those
/// four bytes hold the size, or, when they straddle the dictionary's end,
/// those of them inside it (the size's low bytes). Regular and VL-block
/// chunks alike.
pub(crate) fn lz4_dict(sample: &[u8], nblocks: usize) -> Vec<u8> {
    let mut raw = sample.to_vec();
    let size = i32::try_from(raw.len()).unwrap_or(i32::MAX).to_le_bytes();
    for (d, s) in raw.iter_mut().skip(nblocks.saturating_mul(4)).zip(size) {
        *d = s;
    }
    raw
}

/// The header of a special chunk, as `blosc2_chunk_zeros` and friends make it.
pub(crate) fn special_header(
    p: &CParams,
    nbytes: usize,
    special: u8,
    value_len: usize,
) -> Result<ChunkHeader> {
    let lay = layout(p, nbytes)?;
    Ok(ChunkHeader {
        version: VERSION_STABLE,
        versionlz: VERSIONLZ,
        flags: flags::EXTENDED,
        typesize: lay.typesize as u8,
        nbytes,
        blocksize: lay.blocksize,
        cbytes: EXTENDED_HEADER_LEN + value_len,
        filters: [0; 6],
        filters_meta: [0; 6],
        udcodec: 0,
        compcode_meta: 0,
        blosc2_flags2: 0,
        blosc2_flags: special << 4,
    })
}

mod parallel;
mod stream;
#[cfg(test)]
mod tests;
