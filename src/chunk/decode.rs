//! Chunk decoding, straight into the caller's buffer; `getitem`.

use oxiblosc_kernels::Kernels;

use rayon::prelude::*;

use super::header::{ChunkHeader, SpecialValue};
use crate::codecs::{CodecCtx, DecDict, DecodedConst};
use crate::error::{Error, Result, corrupt};
use crate::filters::Pipeline;
use crate::parallel::{Scratch, Workers};
use crate::plugins::{CallContext, CodecCall};

/// Everything the block decoder needs that is the same for all blocks.
struct Plan<'a> {
    h: ChunkHeader,
    /// The chunk, cut to `cbytes`.
    chunk: &'a [u8],
    pipeline: Pipeline,
    dict: Option<DecDict<'a>>,
    nblocks: usize,
}

fn i32_at(buf: &[u8], off: usize, what: &'static str) -> Result<i32> {
    buf.get(off..off + 4)
        .map(|b| i32::from_le_bytes(b.try_into().unwrap()))
        // Built only when needed: an `ok_or` built and dropped an `Error`
        // (an out-of-line drop) for every stream and block start read.
        .ok_or_else(|| Error::Truncated {
            what,
            needed: off + 4,
            available: buf.len(),
        })
}

impl<'a> Plan<'a> {
    /// `context`: handed to user filters and codecs (`DParams::context`).
    fn new(src: &'a [u8], context: Option<&CallContext>) -> Result<Plan<'a>> {
        let h = ChunkHeader::parse(src)?;
        if h.is_lazy() {
            return Err(Error::Unsupported(
                "lazy chunk: its blocks live in a frame, open it through the frame".into(),
            ));
        }
        let chunk = &src[..h.cbytes];
        let pipeline = Pipeline {
            ids: h.filters,
            metas: h.filters_meta,
            typesize: usize::from(h.typesize),
            blosc1_bitshuffle: h.version <= 2,
            context: context.cloned(),
        };
        let nblocks = h.nblocks();
        let mut plan = Plan {
            h,
            chunk,
            pipeline,
            dict: None,
            nblocks,
        };
        if plan.h.is_memcpyed() || plan.h.special().is_some() || plan.h.nbytes == 0 {
            return Ok(plan);
        }
        plan.pipeline.check_decodable()?;
        let hlen = plan.h.header_len();
        let bstarts_end = nblocks
            .checked_mul(4)
            .and_then(|n| n.checked_add(hlen))
            .filter(|&e| e <= chunk.len())
            .ok_or_else(|| Error::Truncated {
                what: "block start table",
                needed: hlen.saturating_add(nblocks.saturating_mul(4)),
                available: chunk.len(),
            })?;
        if plan.h.use_dict() {
            let dsize = i32_at(chunk, bstarts_end, "dictionary size")?;
            if !(1..=32768).contains(&dsize) {
                return Err(corrupt(format!("dictionary size {dsize} not in 1..=32768")));
            }
            let start = bstarts_end + 4;
            let raw = chunk
                .get(start..start + dsize as usize)
                .ok_or_else(|| corrupt("dictionary runs past the end of the chunk"))?;
            plan.dict = DecDict::new(plan.h.codec_format(), raw)?;
        }
        Ok(plan)
    }

    fn bstart(&self, i: usize) -> Result<usize> {
        let off = self.h.header_len() + 4 * i;
        let b = i32_at(self.chunk, off, "block start")?;
        match usize::try_from(b) {
            Ok(b) if b > 0 && b < self.chunk.len() => Ok(b),
            _ => Err(corrupt(format!(
                "block {i} starts at {b}, outside the {}-byte chunk",
                self.chunk.len()
            ))),
        }
    }

    /// Number of streams block `i` is split into; `blosc1_rule` applies
    /// C-Blosc 1.x's reader rule to version-2 chunks.
    fn nstreams(&self, i: usize, blosc1_rule: bool) -> usize {
        let h = &self.h;
        let ts = usize::from(h.typesize);
        let leftover_block = i + 1 == self.nblocks && h.leftover() > 0;
        let split = if h.version <= 2 && blosc1_rule {
            // C-Blosc 1.x rule: the dont_split flag exists only since 1.11.
            !h.dont_split() && ts <= 16 && h.blocksize / ts >= 128 && !leftover_block
        } else {
            !h.dont_split() && !leftover_block
        };
        if split { ts } else { 1 }
    }

    /// Check, without decoding, that the streams of block `i` lie inside the
    /// chunk and can decode to the block's size (a codec stream expands at
    /// most by its codec's ratio; runs stand for any size). Run before any
    /// buffer is sized by the header, so a few bytes claiming gigabytes
    /// fail fast.
    fn check_block(&self, i: usize) -> Result<()> {
        // Version-2 chunks decode with either split rule (see
        // `decode_streams`): either layout may pass.
        let first = self.nstreams(i, true);
        match self.check_block_n(i, first) {
            Err(e) if self.h.version <= 2 && self.nstreams(i, false) != first => self
                .check_block_n(i, self.nstreams(i, false))
                .map_err(|_| e),
            r => r,
        }
    }

    /// [`Plan::check_block`] with `nstreams` streams.
    fn check_block_n(&self, i: usize, nstreams: usize) -> Result<()> {
        let bsize = self.h.block_len(i);
        let neblock = bsize / nstreams;
        let mut ip = self.bstart(i)?;
        let src = self.chunk;
        for s in 0..nstreams {
            let csize = i32_at(src, ip, "stream size").map_err(|_| {
                corrupt(format!(
                    "block {i} stream {s}: size word past the chunk end"
                ))
            })?;
            ip += 4;
            if csize < 0 {
                if csize < -255 {
                    return Err(corrupt(format!("block {i} stream {s}: run size {csize}")));
                }
                if ip >= src.len() {
                    return Err(corrupt(format!("block {i} stream {s}: run token missing")));
                }
                ip += 1;
            } else if csize > 0 {
                let csize = csize as usize;
                if csize > src.len() - ip {
                    return Err(corrupt(format!(
                        "block {i} stream {s}: {csize} bytes declared, the chunk ends first"
                    )));
                }
                if csize != neblock {
                    let max = crate::codecs::max_decoded_len(
                        self.h.codec_format(),
                        self.h.udcodec,
                        csize,
                    )?;
                    if neblock > max {
                        return Err(corrupt(format!(
                            "block {i} stream {s}: {csize} compressed bytes cannot decode \
                             to {neblock}"
                        )));
                    }
                }
                ip += csize;
            }
        }
        Ok(())
    }

    /// [`Plan::check_block`] for every block of a regular chunk.
    fn check_blocks(&self) -> Result<()> {
        if self.h.is_memcpyed() || self.h.special().is_some() || self.h.is_vlblocks() {
            return Ok(());
        }
        (0..self.nblocks).try_for_each(|i| self.check_block(i))
    }

    /// Decode the streams of block `i` into `out` (exactly the block size).
    /// Version-2 chunks are read with C-Blosc 1.x's split rule; when that
    /// fails and the flag alone says otherwise, with the flag (C-Blosc
    /// 1.11+ in ALWAYS split mode writes split blocks of items over 16 bytes
    /// or under 128 items, which its own reader cannot decode).
    fn decode_streams(&self, i: usize, codecs: &mut CodecCtx, out: &mut [u8]) -> Result<()> {
        let first = self.nstreams(i, true);
        match self.decode_streams_n(i, first, codecs, out) {
            Err(e) if self.h.version <= 2 => {
                let by_flag = self.nstreams(i, false);
                if by_flag == first {
                    return Err(e);
                }
                self.decode_streams_n(i, by_flag, codecs, out)
                    .map_err(|_| e)
            }
            r => r,
        }
    }

    /// [`Plan::decode_streams`] with `nstreams` streams.
    fn decode_streams_n(
        &self,
        i: usize,
        nstreams: usize,
        codecs: &mut CodecCtx,
        out: &mut [u8],
    ) -> Result<()> {
        let bsize = out.len();
        let neblock = bsize / nstreams;
        let mut ip = self.bstart(i)?;
        let src = self.chunk;
        for s in 0..nstreams {
            let dst = &mut out[s * neblock..(s + 1) * neblock];
            let csize = i32_at(src, ip, "stream size").map_err(|_| {
                corrupt(format!(
                    "block {i} stream {s}: size word past the chunk end"
                ))
            })?;
            ip += 4;
            if csize == 0 {
                dst.fill(0);
            } else if csize < 0 {
                if csize < -255 {
                    return Err(corrupt(format!("block {i} stream {s}: run size {csize}")));
                }
                let token = *src
                    .get(ip)
                    .ok_or_else(|| corrupt(format!("block {i} stream {s}: run token missing")))?;
                if token != 0x01 {
                    return Err(corrupt(format!(
                        "block {i} stream {s}: unknown run token {token:#04x}"
                    )));
                }
                ip += 1;
                dst.fill((-csize) as u8);
            } else {
                let csize = csize as usize;
                let payload = src.get(ip..ip + csize).ok_or_else(|| {
                    corrupt(format!(
                        "block {i} stream {s}: {csize} bytes declared, the chunk ends first"
                    ))
                })?;
                self.decode_payload(codecs, payload, dst)
                    .map_err(|e| annotate(e, i, s))?;
                ip += csize;
            }
        }
        out[nstreams * neblock..].fill(0);
        Ok(())
    }

    /// One stream's `payload` into `dst`: stored raw when it is exactly
    /// `dst`'s size, else through the chunk's codec.
    fn decode_payload(&self, codecs: &mut CodecCtx, payload: &[u8], dst: &mut [u8]) -> Result<()> {
        if payload.len() == dst.len() {
            dst.copy_from_slice(payload);
            return Ok(());
        }
        // A stream this small for its output is likely a constant byte
        // plane (Blosc1 chunks have no run streams): decoded once, filled
        // after. No dictionary: the stream alone decides the output.
        let format = self.h.codec_format();
        // A user codec is not memoised: it may be registered anew.
        let user = (format == crate::params::FORMAT_UDCODEC).then(|| CodecCall {
            id: self.h.udcodec,
            clevel: 0,
            meta: self.h.compcode_meta,
            typesize: usize::from(self.h.typesize),
            context: self.pipeline.context.clone(),
        });
        let memo =
            user.is_none() && self.dict.is_none() && payload.len().saturating_mul(64) <= dst.len();
        let (ud, len) = (self.h.udcodec, dst.len());
        if memo
            && let Some(e) = codecs.decoded_consts.find(|e| {
                e.format == format && e.udcodec == ud && e.len == len && e.stream == payload
            })
        {
            dst.fill(e.value);
            return Ok(());
        }
        codecs.decompress(format, ud, payload, dst, self.dict.as_ref(), user.as_ref())?;
        if memo && len > 0 && super::all_equal(dst) {
            codecs.decoded_consts.push(DecodedConst {
                format,
                udcodec: ud,
                len,
                stream: payload.to_vec(),
                value: dst[0],
            });
        }
        Ok(())
    }

    /// Decode block `i` into `out`; `reference` is block 0 of the decoded
    /// output (for DELTA), `None` for block 0 itself.
    fn decode_block(
        &self,
        k: &Kernels,
        scratch: &mut Scratch,
        i: usize,
        reference: Option<&[u8]>,
        out: &mut [u8],
    ) -> Result<()> {
        let n = out.len();
        if self.pipeline_is_empty() {
            return self.decode_streams(i, &mut scratch.codecs, out);
        }
        scratch.reserve(n);
        self.decode_streams(i, &mut scratch.codecs, &mut scratch.a[..n])?;
        self.pipeline
            .backward(k, &mut scratch.a[..n], &mut scratch.b[..n], reference, out)
    }

    fn pipeline_is_empty(&self) -> bool {
        self.pipeline.ids.iter().all(|&f| {
            matches!(
                f,
                0 | crate::filters::id::TRUNC_PREC | crate::filters::id::INT_TRUNC
            )
        })
    }
}

fn annotate(e: Error, block: usize, stream: usize) -> Error {
    match e {
        Error::Corrupt(m) => corrupt(format!("block {block} stream {stream}: {m}")),
        other => other,
    }
}

/// Fill `dst` (exactly nbytes long) for a special chunk.
fn fill_special(h: &ChunkHeader, chunk: &[u8], dst: &mut [u8]) -> Result<()> {
    match h.special() {
        Some(SpecialValue::Zeros) | Some(SpecialValue::Uninit) => dst.fill(0),
        Some(SpecialValue::Nan) => {
            if h.typesize == 4 {
                for c in dst.chunks_exact_mut(4) {
                    c.copy_from_slice(&0x7FC0_0000u32.to_le_bytes());
                }
            } else {
                for c in dst.chunks_exact_mut(8) {
                    c.copy_from_slice(&0x7FF8_0000_0000_0000u64.to_le_bytes());
                }
            }
        }
        Some(SpecialValue::Value) => {
            let value = &chunk[h.header_len()..h.cbytes];
            for c in dst.chunks_mut(value.len()) {
                c.copy_from_slice(&value[..c.len()]);
            }
        }
        None => unreachable!("fill_special on a regular chunk"),
    }
    Ok(())
}

/// Decompress the chunk in `src` into `dst`; returns the decoded size.
pub(crate) fn decompress_into(
    src: &[u8],
    dst: &mut [u8],
    workers: &mut Workers,
    context: Option<&CallContext>,
) -> Result<usize> {
    let plan = Plan::new(src, context)?;
    let h = &plan.h;
    let nbytes = h.nbytes;
    if dst.len() < nbytes {
        return Err(Error::DstTooSmall {
            needed: nbytes,
            available: dst.len(),
        });
    }
    let dst = &mut dst[..nbytes];
    if h.special().is_some() {
        fill_special(h, plan.chunk, dst)?;
        return Ok(nbytes);
    }
    if h.is_memcpyed() {
        let hlen = h.header_len();
        dst.copy_from_slice(&plan.chunk[hlen..hlen + nbytes]);
        return Ok(nbytes);
    }
    if h.is_vlblocks() {
        return decompress_vl(&plan, &vl_block_spans(&plan)?, dst, workers);
    }
    if nbytes == 0 {
        return Ok(0);
    }
    plan.check_blocks()?;
    let k = Kernels::selected()?;
    let bs = h.blocksize;
    let delta = plan.pipeline.has_delta();
    let filtered = !plan.pipeline_is_empty();
    let warm = |s: &mut Scratch| {
        if filtered {
            s.reserve(bs);
        }
        s.codecs.warm_decompress(plan.h.codec_format())
    };
    let Some(team) = workers.team(nbytes, plan.nblocks, warm)? else {
        let scratch = workers.inline();
        let (first, rest) = dst.split_at_mut(bs.min(nbytes));
        plan.decode_block(k, scratch, 0, None, first)?;
        let reference = delta.then_some(&*first);
        for (j, out) in rest.chunks_mut(bs).enumerate() {
            plan.decode_block(k, scratch, j + 1, reference, out)?;
        }
        return Ok(nbytes);
    };
    // Each block decodes straight into its part of `dst`, blocks handed out
    // one at a time. With DELTA, block 0 is the reference of all others: it
    // goes first.
    let scratch = team.scratch;
    team.pool.install(|| {
        let (skip, reference, rest) = if delta {
            let (first, rest) = dst.split_at_mut(bs);
            plan.decode_block(k, &mut scratch.get(), 0, None, first)?;
            (1, Some(&*first), rest)
        } else {
            (0, None, dst)
        };
        rest.par_chunks_mut(bs)
            .with_max_len(1)
            .enumerate()
            .try_for_each(|(j, out)| {
                plan.decode_block(k, &mut scratch.get(), skip + j, reference, out)
            })
    })?;
    Ok(nbytes)
}

/// VL-block chunk: blocks of individual sizes, each `i32 size | payload`,
/// each filtered as a block 0 of its own. With a team, the blocks are
/// handed out one at a time as the fixed-size blocks are, each decoding into
/// its part of `dst`.
fn decompress_vl(
    plan: &Plan,
    blocks: &[(usize, &[u8])],
    dst: &mut [u8],
    workers: &mut Workers,
) -> Result<usize> {
    let total = plan.h.nbytes;
    let k = Kernels::selected()?;
    let mut outs: Vec<&mut [u8]> = Vec::with_capacity(blocks.len());
    let mut rest = &mut dst[..total];
    for &(size, _) in blocks {
        let (out, tail) = rest.split_at_mut(size);
        outs.push(out);
        rest = tail;
    }
    let largest = blocks.iter().map(|b| b.0).max().unwrap_or(0);
    let filtered = !plan.pipeline_is_empty();
    let warm = |s: &mut Scratch| {
        if filtered {
            s.reserve(largest);
        }
        s.codecs.warm_decompress(plan.h.codec_format())
    };
    let Some(team) = workers.team(total, blocks.len(), warm)? else {
        let scratch = workers.inline();
        for (i, (&(_, payload), out)) in blocks.iter().zip(outs).enumerate() {
            decode_vl_block(plan, k, i, payload, scratch, out)?;
        }
        return Ok(total);
    };
    let scratch = team.scratch;
    team.pool.install(|| {
        outs.par_iter_mut()
            .zip(blocks.par_iter())
            .with_max_len(1)
            .enumerate()
            .try_for_each(|(i, (out, &(_, payload)))| {
                decode_vl_block(plan, k, i, payload, &mut scratch.get(), out)
            })
    })?;
    Ok(total)
}

/// Decode VL block `i` (its `payload`) into `out`, which is its size.
fn decode_vl_block(
    plan: &Plan,
    k: &Kernels,
    i: usize,
    payload: &[u8],
    scratch: &mut Scratch,
    out: &mut [u8],
) -> Result<()> {
    let size = out.len();
    let stage: &mut [u8] = if plan.pipeline_is_empty() {
        out
    } else {
        scratch.reserve(size);
        &mut scratch.a[..size]
    };
    plan.decode_payload(&mut scratch.codecs, payload, stage)
        .map_err(|e| annotate(e, i, 0))?;
    if !plan.pipeline_is_empty() {
        plan.pipeline
            .backward(k, &mut scratch.a[..size], &mut scratch.b[..size], None, out)?;
    }
    Ok(())
}

/// `(uncompressed size, payload)` of every block of a VL-block chunk.
fn vl_block_spans<'a>(plan: &Plan<'a>) -> Result<Vec<(usize, &'a [u8])>> {
    let n = plan.nblocks;
    let chunk = plan.chunk;
    let mut starts = Vec::with_capacity(n.min(chunk.len() / 4));
    for i in 0..n {
        starts.push(plan.bstart(i)?);
    }
    let mut out = Vec::with_capacity(starts.len());
    for i in 0..n {
        let start = starts[i];
        let end = if i + 1 < n {
            starts[i + 1]
        } else {
            chunk.len()
        };
        if end < start + 4 {
            return Err(corrupt(format!("VL block {i} starts are not increasing")));
        }
        let size = usize::try_from(i32_at(chunk, start, "VL block size")?)
            .map_err(|_| corrupt(format!("VL block {i} has a negative size")))?;
        if size > plan.h.nbytes {
            return Err(corrupt(format!("VL block {i} is larger than the chunk")));
        }
        let payload = &chunk[start + 4..end];
        if payload.len() != size
            && size
                > crate::codecs::max_decoded_len(
                    plan.h.codec_format(),
                    plan.h.udcodec,
                    payload.len(),
                )?
        {
            return Err(corrupt(format!(
                "VL block {i}: {} compressed bytes cannot decode to {size}",
                payload.len()
            )));
        }
        out.push((size, payload));
    }
    let total = out.iter().fold(0usize, |t, b| t.saturating_add(b.0));
    if total != plan.h.nbytes {
        return Err(corrupt(format!(
            "VL blocks add up to {total} bytes, the header says {}",
            plan.h.nbytes
        )));
    }
    Ok(out)
}

/// Decode the blocks of a VL-block chunk separately.
pub(crate) fn vl_blocks(
    src: &[u8],
    workers: &mut Workers,
    context: Option<&CallContext>,
) -> Result<Vec<Vec<u8>>> {
    let plan = Plan::new(src, context)?;
    if !plan.h.is_vlblocks() {
        return Err(Error::InvalidParam("not a VL-block chunk".into()));
    }
    let spans = vl_block_spans(&plan)?;
    let mut whole = vec![0u8; plan.h.nbytes];
    decompress_vl(&plan, &spans, &mut whole, workers)?;
    let mut off = 0;
    Ok(spans
        .into_iter()
        .map(|(size, _)| {
            let b = whole[off..off + size].to_vec();
            off += size;
            b
        })
        .collect())
}

/// Items `[start, start + nitems)` (in units of the header type size) into
/// `dst`, decoding only the blocks they lie in (plus block 0 for DELTA).
pub(crate) fn getitem_into(
    src: &[u8],
    start: usize,
    nitems: usize,
    dst: &mut [u8],
    scratch: &mut Scratch,
    context: Option<&CallContext>,
) -> Result<usize> {
    let plan = Plan::new(src, context)?;
    let h = &plan.h;
    if h.is_vlblocks() {
        return Err(Error::InvalidParam(
            "getitem is not defined on VL-block chunks".into(),
        ));
    }
    let ts = usize::from(h.typesize);
    let begin = start.checked_mul(ts);
    let end = start.checked_add(nitems).and_then(|e| e.checked_mul(ts));
    let (begin, end) = match (begin, end) {
        (Some(b), Some(e)) if e <= h.nbytes => (b, e),
        _ => {
            return Err(Error::InvalidParam(format!(
                "items {start}..{} are outside the chunk's {} items",
                start.saturating_add(nitems),
                h.nbytes / ts
            )));
        }
    };
    let len = end - begin;
    if dst.len() < len {
        return Err(Error::DstTooSmall {
            needed: len,
            available: dst.len(),
        });
    }
    let dst = &mut dst[..len];
    if len == 0 {
        return Ok(0);
    }
    if let Some(sp) = h.special() {
        // Synthesise the range from the pattern, aligned as in the chunk.
        match sp {
            SpecialValue::Value => {
                let value = &plan.chunk[h.header_len()..h.cbytes];
                for (k, b) in dst.iter_mut().enumerate() {
                    *b = value[(begin + k) % value.len()];
                }
            }
            // Zeros; NaN items start at a multiple of the type size.
            _ => fill_special(h, plan.chunk, dst)?,
        }
        return Ok(len);
    }
    if h.is_memcpyed() {
        let hlen = h.header_len();
        dst.copy_from_slice(&plan.chunk[hlen + begin..hlen + end]);
        return Ok(len);
    }
    let k = Kernels::selected()?;
    let bs = h.blocksize;
    let first = begin / bs;
    let last = (end - 1) / bs;
    if plan.pipeline.has_delta() && first > 0 {
        plan.check_block(0)?;
    }
    (first..=last).try_for_each(|i| plan.check_block(i))?;
    let block0: Option<Vec<u8>> = if plan.pipeline.has_delta() && last > 0 {
        let mut b0 = vec![0u8; h.block_len(0)];
        plan.decode_block(k, scratch, 0, None, &mut b0)?;
        Some(b0)
    } else {
        None
    };
    // Sized by the blocks checked above (the first is the longest), not by
    // the header's block size: a short last block may be all that is read.
    // The buffer is the decompressor's from its last getitem when it is
    // long enough: a fresh zeroed one per call cost more than a small
    // getitem itself (a 256 KiB block: an mmap and 64 page faults, ~2.5 us).
    // Taken out of `scratch` for the call (the blocks decode with it); an
    // error drops it.
    let mut block = std::mem::take(&mut scratch.block);
    if block.len() < h.block_len(first) {
        block = vec![0u8; h.block_len(first)];
    }
    for i in first..=last {
        let blen = h.block_len(i);
        let out = &mut block[..blen];
        match (&block0, i) {
            (Some(b0), 0) => out.copy_from_slice(b0),
            (b0, _) => {
                let reference = if i == 0 { None } else { b0.as_deref() };
                plan.decode_block(k, scratch, i, reference, out)?;
            }
        }
        let bstart = i * bs;
        let from = begin.max(bstart);
        let to = end.min(bstart + blen);
        dst[from - begin..to - begin].copy_from_slice(&out[from - bstart..to - bstart]);
    }
    if block.len() <= GETITEM_KEPT {
        scratch.block = block;
    }
    Ok(len)
}

/// The largest getitem block buffer a decompressor keeps for its next
/// getitem (C-Blosc2 keeps a block-sized buffer in each context, whatever
/// its size).
pub(crate) const GETITEM_KEPT: usize = 4 << 20;

/// Check a chunk without decoding it: its header, and that every block's
/// streams lie inside it and can decode to the sizes the header declares
/// (so that a buffer of the declared size is backed by the input; see
/// [`crate::chunk::validate`]).
pub(crate) fn validate(src: &[u8]) -> Result<ChunkHeader> {
    let plan = Plan::new(src, None)?;
    if plan.h.is_vlblocks() {
        vl_block_spans(&plan)?;
    } else if plan.h.nbytes > 0 {
        plan.check_blocks()?;
    }
    Ok(plan.h)
}

#[cfg(test)]
mod tests {
    use crate::parallel::Scratch;
    use crate::{CParams, Codec, Filter};

    fn chunk(typesize: usize, blocksize: usize, len: usize, seed: u64) -> (Vec<u8>, Vec<u8>) {
        let mut x = seed | 1;
        let src: Vec<u8> = (0..len)
            .map(|i| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                // Compressible but not constant: ramps with noise in the low bits.
                (i / 64) as u8 ^ (x as u8 & 3)
            })
            .collect();
        let mut p = CParams {
            codec: Codec::Lz4,
            typesize,
            blocksize,
            ..CParams::default()
        };
        p.filters[5] = Some(Filter::Shuffle);
        let c = crate::Compressor::new(p).compress(&src).unwrap();
        (src, c)
    }

    /// A chunk of a codec that decodes without a dictionary but carries one
    /// (C-Blosc2 3.3 writes such VL-block chunks for ZLIB with `use_dict`):
    /// the dictionary is passed over, as C-Blosc2's decoder does, and the
    /// chunk decodes (whole and by getitem) to its data.
    #[test]
    fn a_dictionary_a_codec_does_not_use_is_passed_over() {
        for codec in [Codec::Zlib, Codec::BloscLz] {
            let src: Vec<u8> = (0..64 << 10)
                .map(|i| (i / 96) as u8 ^ (i % 7) as u8)
                .collect();
            let p = CParams {
                codec,
                typesize: 1,
                blocksize: 16 << 10,
                ..CParams::default()
            };
            let c = crate::Compressor::new(p).compress(&src).unwrap();
            let nblocks = 4;
            let bstarts_end = 32 + 4 * nblocks;
            // Insert [i32 size | dictionary] after the block starts and move
            // every block start past it.
            let dict: Vec<u8> = (0..300u32).map(|i| (i * 7) as u8).collect();
            let shift = 4 + dict.len();
            let mut d = c[..bstarts_end].to_vec();
            for b in 0..nblocks {
                let at = 32 + 4 * b;
                let v = i32::from_le_bytes(d[at..at + 4].try_into().unwrap());
                d[at..at + 4].copy_from_slice(&(v + shift as i32).to_le_bytes());
            }
            d.extend_from_slice(&(dict.len() as i32).to_le_bytes());
            d.extend_from_slice(&dict);
            d.extend_from_slice(&c[bstarts_end..]);
            d[31] |= super::super::header::bflags::USE_DICT;
            let cbytes = d.len() as i32;
            d[12..16].copy_from_slice(&cbytes.to_le_bytes());
            let mut dec = crate::Decompressor::new(crate::DParams::default());
            assert_eq!(dec.decompress(&d).unwrap(), src, "{codec:?}");
            let mut out = vec![0u8; 1000];
            let mut scratch = Scratch::default();
            super::getitem_into(&d, 20_000, 1000, &mut out, &mut scratch, None).unwrap();
            assert_eq!(out, src[20_000..21_000], "{codec:?} getitem");
        }
    }

    /// getitem reuses one block buffer per thread: alternating chunks with
    /// larger and smaller blocks (and a short last block), ranges inside one
    /// block, across blocks and whole chunks, each result is exactly the
    /// input's slice (a stale byte of an earlier block would show).
    #[test]
    fn getitem_reused_block_buffer() {
        let chunks = [
            chunk(8, 64 << 10, (256 << 10) + 8 * 100, 1),
            chunk(4, 16 << 10, 100 << 10, 2),
            chunk(8, 32 << 10, 96 << 10, 3),
            chunk(2, 128 << 10, 300 << 10, 4),
        ];
        let mut scratch = Scratch::default();
        for round in 0..3 {
            for (k, (src, c)) in chunks.iter().enumerate() {
                let ts = [8, 4, 8, 2][k];
                let n = src.len() / ts;
                for (start, nitems) in [
                    (0, 1),
                    (n / 2, 512),
                    (n - 3, 3),
                    (1000 + round, n / 3),
                    (0, n),
                ] {
                    let mut got = vec![0u8; nitems * ts];
                    let n = super::getitem_into(c, start, nitems, &mut got, &mut scratch, None)
                        .unwrap();
                    assert_eq!(n, got.len());
                    assert_eq!(
                        got,
                        src[start * ts..(start + nitems) * ts],
                        "chunk {k} items {start}+{nitems} round {round}"
                    );
                }
            }
        }
        // Kept between calls: the largest block seen (128 KiB) is still there.
        assert!(scratch.block.len() >= 128 << 10);
    }

    /// A block above the kept size is not kept for the next call.
    #[test]
    fn getitem_drops_large_block_buffer() {
        let (src, c) = chunk(8, 8 << 20, 8 << 20, 5);
        let h = crate::ChunkHeader::parse(&c).unwrap();
        assert!(h.blocksize > super::GETITEM_KEPT && !h.is_memcpyed());
        let mut scratch = Scratch::default();
        let mut got = vec![0u8; 8000];
        super::getitem_into(&c, 7, 1000, &mut got, &mut scratch, None).unwrap();
        assert_eq!(got, src[56..56 + 8000]);
        assert!(scratch.block.is_empty());
    }
}
