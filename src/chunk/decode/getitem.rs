//! getitem: a range of items, decoding only the blocks it lies in.

use super::*;

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
    // A memcpyed chunk: its items are a copy, without the plan.
    if let Some((items, ts)) = ChunkHeader::memcpyed_items(src) {
        let (begin, end) = item_range(start, nitems, ts, items.len(), dst.len())?;
        crate::chunk::copy_pieces(&mut dst[..end - begin], &items[begin..end]);
        return Ok(end - begin);
    }
    let mut plan = Plan::new(Plan::header(src)?, src, context);
    plan.check()?;
    let h = &plan.h;
    if h.is_vlblocks() {
        return Err(Error::InvalidParam(
            "getitem is not defined on VL-block chunks".into(),
        ));
    }
    let (begin, end) = item_range(start, nitems, usize::from(h.typesize), h.nbytes, dst.len())?;
    let len = end - begin;
    let dst = &mut dst[..len];
    if len == 0 {
        return Ok(0);
    }
    if h.special().is_some() {
        // Synthesised from the pattern, aligned as in the chunk.
        fill_special_at(h, plan.chunk, begin, dst)?;
        return Ok(len);
    }
    // (A memcpyed chunk that is not special was taken above:
    // `ChunkHeader::memcpyed_items` accepts every one that parses.)
    let k = Kernels::selected()?;
    let bs = h.blocksize;
    let first = begin / bs;
    let last = (end - 1) / bs;
    // Blocks the range covers whole decode straight into `dst` (as C-Blosc2
    // does for a range of exactly one block); only a partly covered first or
    // last block goes through the block buffer.
    let covers = |i: usize| begin <= i * bs && i * bs + h.block_len(i) <= end;
    let partial = !covers(first) || !covers(last);
    // The streams must back the block size before a buffer is sized by it.
    // When the scratch is already that large (the decompressor's last
    // getitem), nothing is allocated and decoding checks each stream itself.
    let need = h.block_len(first);
    // A partly read block of a shuffle-only chunk goes through
    // `unshuffle_items`, which uses the scratch pair, not the block buffer:
    // the buffer is grown only when a block falls back to it (checking
    // the blocks first unless that was done here).
    // (`decode_block` sizes `a` and `b` only for a filtered chunk.)
    let shortcut = plan.pipeline.only_transpose().is_some();
    let warm = !plan.has_delta()
        && (!partial || shortcut || scratch.block.len() >= need)
        && (plan.pipeline_is_empty() || (scratch.a.len() >= need && scratch.b.len() >= need));
    let check = || -> Result<()> {
        if plan.has_delta() && first > 0 {
            plan.check_block(0)?;
        }
        (first..=last).try_for_each(|i| plan.check_block(i))
    };
    if !warm {
        check()?;
    }
    let mut checked = !warm;
    // DELTA's reference, block 0, decoded once into a buffer kept like the
    // block buffer (its blocks were checked above: `warm` is false).
    let mut b0 = std::mem::take(&mut scratch.block0);
    let len0 = h.block_len(0);
    let block0: Option<&[u8]> = if plan.has_delta() && last > 0 {
        b0.grow_to(len0);
        plan.decode_block(k, scratch, 0, None, &mut b0[..len0])?;
        Some(&b0[..len0])
    } else {
        None
    };
    // Grown (in the loop, for the first block that needs it) to the
    // checked blocks' length (the first is the longest), not to the
    // header's block size: a short last block may be all that is read.
    // The buffer is the decompressor's from its last getitem when it is
    // long enough: a fresh zeroed one per call cost more than a small
    // getitem itself (a 256 KiB block: an mmap and 64 page faults, ~2.5 us).
    // Taken out of `scratch` for the call (the blocks decode with it); an
    // error drops it.
    let mut block = std::mem::take(&mut scratch.block);
    for i in first..=last {
        let blen = h.block_len(i);
        let bstart = i * bs;
        let from = begin.max(bstart);
        let to = end.min(bstart + blen);
        let whole = covers(i);
        if !whole && plan.stored_items(i, from - bstart, &mut dst[from - begin..to - begin]) {
            continue;
        }
        if !whole
            && plan.unshuffle_items(
                k,
                scratch,
                i,
                from - bstart,
                &mut dst[from - begin..to - begin],
            )?
        {
            continue;
        }
        if !whole && block.len() < need {
            if !checked {
                check()?;
                checked = true;
            }
            block.grow_to(need);
        }
        let out = if whole {
            &mut dst[from - begin..to - begin]
        } else {
            &mut block[..blen]
        };
        match (block0, i) {
            (Some(b0), 0) => out.copy_from_slice(b0),
            (b0, _) => {
                let reference = if i == 0 { None } else { b0 };
                plan.decode_block(k, scratch, i, reference, out)?;
            }
        }
        if !whole {
            dst[from - begin..to - begin].copy_from_slice(&block[from - bstart..to - bstart]);
        }
    }
    if block.len() <= GETITEM_KEPT {
        scratch.block = block;
    }
    if b0.len() <= GETITEM_KEPT {
        scratch.block0 = b0;
    }
    Ok(len)
}

/// The largest getitem block buffer a decompressor keeps for its next
/// getitem (C-Blosc2 keeps a block-sized buffer in each context, whatever
/// its size).
pub(super) const GETITEM_KEPT: usize = 4 << 20;

/// Bytes `begin..end` of items `start..start + nitems` of `ts` bytes in a
/// chunk of `nbytes`, checked against the chunk and the `dst_len` bytes of
/// the caller's buffer.
fn item_range(
    start: usize,
    nitems: usize,
    ts: usize,
    nbytes: usize,
    dst_len: usize,
) -> Result<(usize, usize)> {
    let begin = start.checked_mul(ts);
    let end = start.checked_add(nitems).and_then(|e| e.checked_mul(ts));
    let (begin, end) = match (begin, end) {
        (Some(b), Some(e)) if e <= nbytes => (b, e),
        _ => {
            return Err(Error::InvalidParam(format!(
                "items {start}..{} are outside the chunk's {} items",
                start.saturating_add(nitems),
                nbytes / ts
            )));
        }
    };
    if dst_len < end - begin {
        return Err(Error::DstTooSmall {
            needed: end - begin,
            available: dst_len,
        });
    }
    Ok((begin, end))
}

impl Plan<'_> {
    /// Bytes `at..at + out.len()` of block `i` into `out`, copied straight
    /// from the chunk, when the chunk has no filter to undo and every
    /// stream the range lies in is stored raw or is a run (incompressible
    /// data in a destination larger than `nbytes + 32`, where C writes raw
    /// streams rather than a memcpyed chunk): the block is not decoded
    /// into a buffer first. False for anything else (a codec stream, a
    /// version-2 chunk whose split rule is ambiguous, the range reaching a
    /// block's bytes past its last stream, a size word out of place); the
    /// caller then decodes the block, which also reports what is wrong.
    /// `out` may have been written in part then.
    pub(super) fn stored_items(&self, i: usize, at: usize, out: &mut [u8]) -> bool {
        let nstreams = self.nstreams(i, true);
        if !self.pipeline_is_empty() || out.is_empty() || nstreams != self.nstreams(i, false) {
            return false;
        }
        let neblock = self.h.block_len(i) / nstreams;
        let end = at + out.len();
        if end > nstreams * neblock {
            return false;
        }
        let Ok(mut ip) = self.bstart(i) else {
            return false;
        };
        let src = self.chunk;
        for s in 0..nstreams {
            let (lo, hi) = (s * neblock, (s + 1) * neblock);
            if lo >= end {
                return true;
            }
            let Ok(csize) = i32_at(src, ip, "stream size") else {
                return false;
            };
            ip += 4;
            let (from, to) = (at.max(lo), end.min(hi));
            let wanted = from < to;
            let part = if wanted {
                &mut out[from - at..to - at]
            } else {
                &mut [][..]
            };
            match csize {
                0 => part.fill(0),
                -255..=-1 => {
                    if src.get(ip) != Some(&0x01) {
                        return false;
                    }
                    ip += 1;
                    part.fill((-csize) as u8);
                }
                c if c as usize == neblock => {
                    let Some(payload) = src.get(ip..ip + neblock) else {
                        return false;
                    };
                    if wanted {
                        part.copy_from_slice(&payload[from - lo..to - lo]);
                    }
                    ip += neblock;
                }
                c if c > 0 && !wanted => ip += c as usize,
                _ => return false,
            }
        }
        true
    }

    /// Bytes `at..at + out.len()` of block `i` into `out`, when the block's
    /// only filter is a byte or bit shuffle: its streams are decoded, then
    /// only the elements the range touches (rounded out to whole groups of 8
    /// for a bit shuffle) are gathered from each byte or bit row and
    /// unshuffled, straight into `out` when the range is on that grid. This
    /// replaces unshuffling the whole block into a buffer and copying out
    /// of it. False, with nothing written, for any other block, a range
    /// reaching the block's untransposed tail, or a widened range with no
    /// room for its staging: the caller then decodes the whole block.
    pub(super) fn unshuffle_items(
        &self,
        k: &Kernels,
        scratch: &mut Scratch,
        i: usize,
        at: usize,
        out: &mut [u8],
    ) -> Result<bool> {
        let Some((bits, es)) = self.pipeline.only_transpose() else {
            return Ok(false);
        };
        let blen = self.h.block_len(i);
        let nelem = blen / es;
        // C-Blosc 1.x stored such a block as it was: the bytes are in place.
        let raw = bits && self.pipeline.blosc1_bitshuffle() && !nelem.is_multiple_of(8);
        // Elements transposed (the rest of the block is stored as is), and
        // the grid a range of them must be cut on.
        let (m, grid) = if bits {
            (nelem - nelem % 8, 8)
        } else {
            (nelem, 1)
        };
        let end = at + out.len();
        let e0 = at / es / grid * grid;
        let e1 = end.div_ceil(es).div_ceil(grid) * grid;
        let exact = e0 * es == at && e1 * es == end;
        let n = e1 - e0;
        if out.is_empty()
            || (!bits && es < 2)
            || (!raw && e1 > m)
            || (!raw && !exact && 2 * n * es > blen)
        {
            return Ok(false);
        }
        scratch.reserve(blen);
        self.decode_streams(i, &mut scratch.codecs, &mut scratch.a[..blen])?;
        if raw {
            out.copy_from_slice(&scratch.a[at..end]);
            return Ok(true);
        }
        // Rows of the transposed part: `es` byte planes of `m` bytes, or
        // `8 * es` bit rows of `m / 8` bytes; the range's part of each.
        let (rows, row_len, r0, r1) = if bits {
            (8 * es, m / 8, e0 / 8, e1 / 8)
        } else {
            (es, m, e0, e1)
        };
        let staging = if exact { 0 } else { n * es };
        let (gathered, staged) = scratch.b[..n * es + staging].split_at_mut(n * es);
        for (r, row) in gathered.chunks_exact_mut(r1 - r0).take(rows).enumerate() {
            let from = r * row_len + r0;
            row.copy_from_slice(&scratch.a[from..from + (r1 - r0)]);
        }
        let target = if exact { &mut *out } else { &mut *staged };
        if bits {
            k.bitunshuffle(es, gathered, target)?;
        } else {
            k.unshuffle(es, gathered, target)?;
        }
        if !exact {
            out.copy_from_slice(&staged[at - e0 * es..end - e0 * es]);
        }
        Ok(true)
    }
}
