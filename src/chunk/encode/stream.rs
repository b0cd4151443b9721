//! One stream of a block: its size word and payload (a run, a codec's
//! output, or the bytes as they are), and the scan that finds constant
//! streams.

use crate::codecs::{ConstKey, EncDict};
use crate::error::Result;
use crate::params::{CParams, Codec};

/// How the streams of a chunk are coded.
pub(super) struct StreamCodec<'a> {
    pub p: &'a CParams,
    /// Constant streams become run streams (Blosc2 only).
    pub runs: bool,
    /// For Blosc1 chunks, the split flag C-Blosc 1.x hands its BloscLZ.
    pub blosc1_split: Option<bool>,
}

/// Write one stream at `pos` (size word, then payload); `None` when it does
/// not fit in `dst` (the chunk then falls back to memcpy). `is_constant`:
/// whether every byte of `stream` is its first.
pub(super) fn write_stream(
    stream: &[u8],
    is_constant: bool,
    dst: &mut [u8],
    pos: usize,
    how: &StreamCodec,
    codecs: &mut crate::codecs::CodecCtx,
    dict: Option<&EncDict>,
) -> Result<Option<usize>> {
    let p = how.p;
    let destsize = dst.len();
    let neblock = stream.len();
    let mut ntbytes = pos + 4;
    if ntbytes > destsize {
        return Ok(None);
    }
    let csize: i32;
    if how.runs && is_constant {
        let v = stream[0];
        if v == 0 {
            csize = 0;
        } else {
            if ntbytes + 1 > destsize {
                return Ok(None);
            }
            csize = -i32::from(v);
            dst[ntbytes] = 0x01;
            ntbytes += 1;
        }
    } else {
        let maxout = neblock.min(destsize - ntbytes);
        if maxout == 0 {
            return Ok(None);
        }
        let out = &mut dst[ntbytes..ntbytes + maxout];
        // A constant stream in a Blosc1 chunk (no run streams): with the
        // full room, the same call as an earlier one gives the same bytes.
        let key = (!how.runs && dict.is_none() && maxout == neblock && neblock >= 64)
            .then_some(is_constant)
            .filter(|&constant| constant)
            .map(|_| ConstKey {
                codec: p.codec,
                clevel: p.clevel,
                split: how.blosc1_split.unwrap_or(false),
                len: neblock,
                value: stream[0],
            });
        let hit = key
            .as_ref()
            .and_then(|k| codecs.consts.find(|(kk, _)| kk == k));
        let mut c = if let Some((_, hit)) = hit {
            // Stored raw the first time: 0 sends it down the raw path below.
            hit.as_ref().map_or(0, |bytes| {
                out[..bytes.len()].copy_from_slice(bytes);
                bytes.len()
            })
        } else {
            let c = match how.blosc1_split {
                Some(split) if p.codec == Codec::BloscLz => {
                    codecs.compress_blosclz_blosc1(p.clevel, stream, out, split)?
                }
                Some(_) if p.codec == Codec::Lz4 => {
                    codecs.compress_lz4_blosc1(p.clevel, stream, out)?
                }
                Some(_) if p.codec == Codec::Zlib => {
                    codecs.compress_zlib_blosc1(p.clevel, stream, out)?
                }
                _ => match p.codec {
                    Codec::User(id) => {
                        let call = crate::plugins::CodecCall {
                            id,
                            clevel: p.clevel,
                            meta: p.codec_meta,
                            typesize: p.typesize,
                            context: p.context.clone(),
                        };
                        codecs.compress_user(&call, stream, out)?
                    }
                    _ => codecs.compress(p.codec, p.clevel, stream, out, dict)?,
                },
            };
            if let Some(k) = key {
                let gain = (c > 0 && c < neblock).then(|| out[..c].to_vec());
                codecs.consts.push((k, gain));
            }
            c
        };
        if c == 0 || c >= neblock {
            if ntbytes + neblock > destsize {
                return Ok(None);
            }
            dst[ntbytes..ntbytes + neblock].copy_from_slice(stream);
            c = neblock;
        }
        csize = c as i32;
        ntbytes += c;
    }
    dst[pos..pos + 4].copy_from_slice(&csize.to_le_bytes());
    Ok(Some(ntbytes))
}

/// Whether every byte of `s` equals the first (`true` for an empty slice).
///
/// Every stream of a chunk goes through this check (run streams in Blosc2
/// chunks, the constant-stream memo in Blosc1 chunks), and a constant stream
/// is scanned to its end. The scan is slice comparisons (`memcmp`): its
/// first 64 bytes, so a stream that differs early stops there, then a
/// kilobyte at a time. That is as fast as a vector loop, and a fuzzer's
/// comparison tracing sees one call per kilobyte instead of a comparison
/// per word: a word loop here took 90% of the time of a fuzz input whose
/// chunks are mostly padding (`ndarray_args`, 90 s under ASan).
pub(super) fn constant(s: &[u8]) -> bool {
    let Some(&v) = s.first() else {
        return true;
    };
    let head = s.len().min(64);
    if s[..head] != [v; 64][..head] {
        return false;
    }
    if s.len() == head {
        return true;
    }
    let line = [v; 1024];
    let mut parts = s[head..].chunks_exact(line.len());
    parts.by_ref().all(|p| p == line) && {
        let rest = parts.remainder();
        rest == &line[..rest.len()]
    }
}
