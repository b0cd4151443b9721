//! Chunk decoding, straight into the caller's buffer; `getitem`.

use oxiblosc_kernels::Kernels;

use rayon::prelude::*;

use super::header::{ChunkHeader, SpecialValue};
use crate::codecs::{CodecCtx, DecDict, DecodedConst};
use crate::error::{Error, Result, corrupt};
use crate::filters::{Pipeline, Undo};
use crate::parallel::{Scratch, Workers};
use crate::plugins::{CallContext, CodecCall};

/// How many bytes of a block's output are asked for (`prefetch`) before
/// its streams are decoded: the lines then arrive while the codec runs.
const PREFETCH_OUT: usize = 8 << 10;

/// Everything the block decoder needs that is the same for all blocks.
struct Plan<'a> {
    h: ChunkHeader,
    /// The chunk, cut to `cbytes`.
    chunk: &'a [u8],
    pipeline: Pipeline<'a>,
    /// What undoing `pipeline` takes ([`Undo::of`]).
    undo: Undo,
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
    /// [`Plan::header`], [`Plan::new`] and [`Plan::check`] in one, for the
    /// callers off the hot path.
    fn open(src: &'a [u8], context: Option<&'a CallContext>) -> Result<Plan<'a>> {
        let mut plan = Plan::new(Plan::header(src)?, src, context);
        plan.check()?;
        Ok(plan)
    }

    /// The header of `src`, a chunk that a plan decodes (not a lazy one).
    // Inlined with the header's parse: the header is built in place, not
    // moved through the stack (see `ChunkHeader`).
    #[inline(always)]
    fn header(src: &[u8]) -> Result<(ChunkHeader, u128)> {
        let (h, tail) = ChunkHeader::parse_with_tail(src)?;
        if h.is_lazy() {
            return Err(Error::Unsupported(
                "lazy chunk: its blocks live in a frame, open it through the frame".into(),
            ));
        }
        Ok((h, tail))
    }

    /// The plan of `src`, whose header [`Plan::header`] read; [`Plan::check`]
    /// it before decoding. `context`: handed to user filters and codecs
    /// (`DParams::context`).
    // Infallible and inlined, so the plan is built where the caller keeps
    // it: returned in a `Result`, it was built on the stack with narrow
    // stores and moved with 16-byte loads, each a store-forwarding stall
    // (14 % of `decompress_into`'s own samples on a 4 KiB chunk;
    // perf/README.md, session 22).
    #[inline(always)]
    fn new(
        (h, tail): (ChunkHeader, u128),
        src: &'a [u8],
        context: Option<&'a CallContext>,
    ) -> Plan<'a> {
        Plan {
            // `Plan::header` refused lazy chunks, the only ones whose
            // `cbytes` may exceed `src`.
            chunk: &src[..h.cbytes],
            nblocks: h.nblocks(),
            undo: Undo::of(tail, usize::from(h.typesize)),
            pipeline: Pipeline::from_slots(
                tail.to_le_bytes(),
                usize::from(h.typesize),
                h.version == 2,
                context,
            ),
            h,
            dict: None,
        }
    }

    /// Check what the header alone does not: the filters can be undone,
    /// the block start table fits, and the dictionary (read here).
    // Inlined: every decode runs it, and out of line its `Result` came
    // back through memory.
    #[inline(always)]
    fn check(&mut self) -> Result<()> {
        if self.h.is_memcpyed() || self.h.special().is_some() || self.h.nbytes == 0 {
            return Ok(());
        }
        // Only a pipeline beyond one shuffle may hold a filter this build
        // cannot undo.
        if self.undo == Undo::Pipeline {
            self.pipeline.check_decodable()?;
        }
        let hlen = self.h.header_len();
        let nblocks = self.nblocks;
        let chunk = self.chunk;
        let bstarts_end = nblocks
            .checked_mul(4)
            .and_then(|n| n.checked_add(hlen))
            .filter(|&e| e <= chunk.len())
            .ok_or_else(|| Error::Truncated {
                what: "block start table",
                needed: hlen.saturating_add(nblocks.saturating_mul(4)),
                available: chunk.len(),
            })?;
        if self.h.use_dict() {
            let dsize = i32_at(chunk, bstarts_end, "dictionary size")?;
            if !(1..=32768).contains(&dsize) {
                return Err(corrupt(format!("dictionary size {dsize} not in 1..=32768")));
            }
            let start = bstarts_end + 4;
            let raw = chunk
                .get(start..start + dsize as usize)
                .ok_or_else(|| corrupt("dictionary runs past the end of the chunk"))?;
            self.dict = DecDict::new(self.h.codec_format(), raw)?;
        }
        Ok(())
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
        // The last block when it is short. No remainder: `nbytes %
        // blocksize` was a `div` on every block's way to its streams.
        let leftover_block = h.block_len(i) < h.blocksize;
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
    #[inline(always)]
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
        // Bytes past the last stream (a block not a multiple of its
        // streams). Most blocks have none, and then no call at all: glibc's
        // AVX-512 `memset` of 0 bytes is a store with an empty mask, which
        // cost ~0.19 us a chunk where an unfiltered block decodes straight
        // into the caller's buffer (a quarter of a 32 KiB LZ4 chunk's decode;
        // perf/README.md, session 13).
        let tail = &mut out[nstreams * neblock..];
        if !tail.is_empty() {
            tail.fill(0);
        }
        Ok(())
    }

    /// One stream's `payload` into `dst`: stored raw when it is exactly
    /// `dst`'s size, else through the chunk's codec.
    #[inline(always)]
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
            context: self.pipeline.context.cloned(),
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
        if self.undo == Undo::Nothing {
            return self.decode_streams(i, &mut scratch.codecs, out);
        }
        // A block of zero runs (a chunk of mostly zeros has many) is zeros
        // after every filter that keeps zeros: no stream decoded into the
        // scratch, no filter run over it (a 132-byte chunk of 6 MB of zero
        // runs spent its time unshuffling zeros: fuzz/README.md, session 40).
        if self.zero_runs(i) && self.keeps_zeros() {
            out.fill(0);
            return Ok(());
        }
        scratch.reserve(n);
        oxiblosc_kernels::prefetch(&out[..n.min(PREFETCH_OUT)]);
        self.decode_streams(i, &mut scratch.codecs, &mut scratch.a[..n])?;
        match self.undo {
            // The kernel straight away: the pipeline's walk over its slots
            // cost a 4 KiB chunk ~130 instructions.
            Undo::Unshuffle(es) => Ok(k.unshuffle(es, &scratch.a[..n], out)?),
            _ => {
                self.pipeline
                    .backward(k, &mut scratch.a[..n], &mut scratch.b[..n], reference, out)
            }
        }
    }

    /// Whether every stream of block `i` is a zero run (all its size words
    /// 0; the first is enough to tell a block that is not). False when a
    /// word is past the chunk: the decode then says what is wrong.
    fn zero_runs(&self, i: usize) -> bool {
        let Ok(mut ip) = self.bstart(i) else {
            return false;
        };
        for _ in 0..self.nstreams(i, true) {
            match self.chunk.get(ip..ip + 4) {
                Some(&[0, 0, 0, 0]) => ip += 4,
                _ => return false,
            }
        }
        true
    }

    /// Whether undoing the filters turns zeros into zeros: shuffles, bit
    /// shuffles, truncations (nothing to undo) and bytedelta (running
    /// sums) do; DELTA (an XOR with block 0) and user filters need not.
    fn keeps_zeros(&self) -> bool {
        use crate::filters::id;
        match self.undo {
            Undo::Nothing | Undo::Unshuffle(_) => true,
            Undo::Pipeline => self.pipeline.ids().iter().all(|&f| {
                matches!(
                    f,
                    id::NOFILTER
                        | id::SHUFFLE
                        | id::BITSHUFFLE
                        | id::TRUNC_PREC
                        | id::INT_TRUNC
                        | id::BYTEDELTA
                )
            }),
        }
    }

    /// Whether block 0 is the reference of the others (DELTA); asked of
    /// the pipeline only when it is more than one shuffle.
    fn has_delta(&self) -> bool {
        self.undo == Undo::Pipeline && self.pipeline.has_delta()
    }

    /// Whether the streams decode straight into the output (no filter to
    /// undo).
    fn pipeline_is_empty(&self) -> bool {
        self.undo == Undo::Nothing
    }
}

fn annotate(e: Error, block: usize, stream: usize) -> Error {
    match e {
        Error::Corrupt(m) => corrupt(format!("block {block} stream {stream}: {m}")),
        other => other,
    }
}

/// Fill `dst` with bytes `at..at + dst.len()` of a special chunk's content
/// (its pattern repeated from the chunk's start).
fn fill_special_at(h: &ChunkHeader, chunk: &[u8], at: usize, dst: &mut [u8]) -> Result<()> {
    let pattern: &[u8] = match h.special() {
        Some(SpecialValue::Zeros) | Some(SpecialValue::Uninit) => {
            dst.fill(0);
            return Ok(());
        }
        Some(SpecialValue::Nan) if h.typesize == 4 => &0x7FC0_0000u32.to_le_bytes(),
        Some(SpecialValue::Nan) => &0x7FF8_0000_0000_0000u64.to_le_bytes(),
        Some(SpecialValue::Value) => &chunk[h.header_len()..h.cbytes],
        None => unreachable!("fill_special_at on a regular chunk"),
    };
    let p = pattern.len();
    if p == 0 {
        return Err(corrupt("a value chunk without its value"));
    }
    // One period, rotated to `at`, then copies of what is filled so far
    // (whole periods, so the pattern stays aligned), doubling each time:
    // no allocation, and a few large copies rather than one per item.
    let first = p.min(dst.len());
    for (k, b) in dst[..first].iter_mut().enumerate() {
        *b = pattern[(at + k) % p];
    }
    let mut filled = first;
    while filled < dst.len() {
        let n = filled.min(dst.len() - filled);
        dst.copy_within(..n, filled);
        filled += n;
    }
    Ok(())
}

/// Decompress the chunk in `src` into `dst`; returns the decoded size.
///
/// `maskout`: one flag per block; the blocks flagged are not decoded and
/// their bytes of `dst` are left as they are (C-Blosc2's block mask). It
/// comes before the one-word arguments: as the seventh and eighth words it
/// was passed on the stack as two 8-byte stores that the callee copied with
/// one 16-byte load (a store-forwarding stall, ~15 % of this function's own
/// time on a 4 KiB chunk).
pub(crate) fn decompress_into(
    src: &[u8],
    dst: &mut [u8],
    maskout: Option<&[bool]>,
    workers: &mut Workers,
    context: Option<&CallContext>,
) -> Result<usize> {
    let mut plan = Plan::new(Plan::header(src)?, src, context);
    plan.check()?;
    let h = &plan.h;
    let nbytes = h.nbytes;
    if dst.len() < nbytes {
        return Err(Error::DstTooSmall {
            needed: nbytes,
            available: dst.len(),
        });
    }
    let dst = &mut dst[..nbytes];
    if let Some(m) = maskout {
        if h.is_vlblocks() {
            return Err(Error::InvalidParam(
                "a block mask is not defined on VL-block chunks".into(),
            ));
        }
        if m.len() != plan.nblocks {
            return Err(Error::InvalidParam(format!(
                "a block mask of {} flags for a chunk of {} blocks",
                m.len(),
                plan.nblocks
            )));
        }
        if h.special().is_some() || h.is_memcpyed() {
            // Each kept block from the whole chunk's pattern or bytes.
            let bs = h.blocksize.max(1);
            let hlen = h.header_len();
            for (i, out) in dst.chunks_mut(bs).enumerate().filter(|&(i, _)| !m[i]) {
                let at = i * bs;
                if h.is_memcpyed() && h.special().is_none() {
                    out.copy_from_slice(&plan.chunk[hlen + at..hlen + at + out.len()]);
                } else {
                    fill_special_at(h, plan.chunk, at, out)?;
                }
            }
            return Ok(nbytes);
        }
    }
    if h.special().is_some() {
        fill_special_at(h, plan.chunk, 0, dst)?;
        return Ok(nbytes);
    }
    if h.is_memcpyed() {
        let hlen = h.header_len();
        let src = &plan.chunk[hlen..hlen + nbytes];
        // Stored raw: copied in pieces, on the pool when there are threads
        // (as C-Blosc2 copies such a chunk's blocks on its threads).
        let pieces = nbytes.div_ceil(super::COPY_PIECE);
        match workers.team(nbytes, pieces, |_| Ok(()))? {
            None => super::copy_pieces(dst, src),
            Some(team) => team.pool.install(|| {
                dst.par_chunks_mut(super::COPY_PIECE)
                    .zip(src.par_chunks(super::COPY_PIECE))
                    .with_max_len(1)
                    .for_each(|(d, s)| d.copy_from_slice(s))
            }),
        }
        return Ok(nbytes);
    }
    if h.is_vlblocks() {
        return decompress_vl(&plan, &vl_block_spans(&plan)?, dst, workers);
    }
    if nbytes == 0 {
        return Ok(0);
    }
    // Inline, nothing is sized by the header beyond `dst` (one block of
    // scratch, at most `nbytes`), and decoding checks every stream as it
    // goes. A team readies a block of scratch per thread first: the streams
    // must back the block size before that.
    let skip = |i: usize| maskout.is_some_and(|m| m[i]);
    let delta = plan.has_delta();
    if workers.may_team(nbytes, plan.nblocks) {
        // The blocks to decode (block 0 too, with DELTA).
        (0..plan.nblocks)
            .filter(|&i| !skip(i) || (i == 0 && delta))
            .try_for_each(|i| plan.check_block(i))?;
    }
    let k = Kernels::selected()?;
    let bs = h.blocksize;
    let filtered = !plan.pipeline_is_empty();
    let warm = |s: &mut Scratch| {
        if filtered {
            s.reserve(bs);
        }
        s.codecs.warm_decompress(plan.h.codec_format())
    };
    // Block 0 decodes aside when it is masked out but is the DELTA
    // reference of a block kept.
    let block0_aside = delta && skip(0) && (1..plan.nblocks).any(|i| !skip(i));
    let aside = if block0_aside {
        plan.check_block(0)?;
        let mut b0 = vec![0u8; bs.min(nbytes)];
        plan.decode_block(k, workers.inline(), 0, None, &mut b0)?;
        Some(b0)
    } else {
        None
    };
    let Some(team) = workers.team(nbytes, plan.nblocks, warm)? else {
        let scratch = workers.inline();
        let (first, rest) = dst.split_at_mut(bs.min(nbytes));
        if !skip(0) {
            plan.decode_block(k, scratch, 0, None, first)?;
        }
        let reference = match &aside {
            Some(b0) => Some(b0.as_slice()),
            None => delta.then_some(&*first),
        };
        for (j, out) in rest.chunks_mut(bs).enumerate() {
            if !skip(j + 1) {
                plan.decode_block(k, scratch, j + 1, reference, out)?;
            }
        }
        return Ok(nbytes);
    };
    // Each block decodes straight into its part of `dst`, blocks handed out
    // one at a time. With DELTA, block 0 is the reference of all others: it
    // goes first.
    let scratch = team.scratch;
    team.pool.install(|| {
        let (from, reference, rest) = match &aside {
            Some(b0) => (1, Some(b0.as_slice()), &mut dst[bs..]),
            None if delta => {
                let (first, rest) = dst.split_at_mut(bs);
                if !skip(0) {
                    plan.decode_block(k, &mut scratch.get(), 0, None, first)?;
                }
                (1, Some(&*first), rest)
            }
            None => (0, None, dst),
        };
        rest.par_chunks_mut(bs)
            .with_max_len(1)
            .enumerate()
            .filter(|&(j, _)| !skip(from + j))
            .try_for_each(|(j, out)| {
                plan.decode_block(k, &mut scratch.get(), from + j, reference, out)
            })
    })?;
    Ok(nbytes)
}

/// Check a chunk without decoding it: its header, and that every block's
/// streams lie inside it and can decode to the sizes the header declares
/// (so that a buffer of the declared size is backed by the input; see
/// [`crate::chunk::validate`]).
pub(crate) fn validate(src: &[u8]) -> Result<ChunkHeader> {
    let plan = Plan::open(src, None)?;
    if plan.h.is_vlblocks() {
        vl_block_spans(&plan)?;
    } else if plan.h.nbytes > 0 {
        plan.check_blocks()?;
    }
    Ok(plan.h)
}

mod getitem;
#[cfg(test)]
mod tests;
mod vl;

pub(crate) use getitem::getitem_into;
pub(crate) use vl::vl_blocks;
use vl::{decompress_vl, vl_block_spans};
