//! VL-block chunks: blocks of individual sizes, each decoded as a block 0
//! of its own.

use super::*;

/// VL-block chunk: blocks of individual sizes, each `i32 size | payload`,
/// each filtered as a block 0 of its own. With a team, the blocks are
/// handed out one at a time as the fixed-size blocks are, each decoding into
/// its part of `dst`.
pub(super) fn decompress_vl(
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
pub(super) fn vl_block_spans<'a>(plan: &Plan<'a>) -> Result<Vec<(usize, &'a [u8])>> {
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
    let plan = Plan::open(src, context)?;
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
