//! The BloscLZ decoder: every offset checked against both buffers.

use crate::error::{Result, corrupt};

/// Copy `len` bytes from `dst[from..]` to `dst[op..]` where the regions may
/// overlap (`op - from` is the match distance): byte runs become a fill,
/// short repeating patterns are copied in doubling non-overlapping pieces.
#[inline(always)]
fn copy_match(dst: &mut [u8], from: usize, op: usize, len: usize) {
    let d = op - from;
    if d >= len {
        dst.copy_within(from..from + len, op);
    } else if d == 1 {
        let b = dst[from];
        dst[op..op + len].fill(b);
    } else {
        let mut copied = 0;
        while copied < len {
            // The pattern is already present `d + copied` bytes back.
            let n = (d + copied).min(len - copied);
            dst.copy_within(from..from + n, op + copied);
            copied += n;
        }
    }
}

/// Decode a BloscLZ stream into `dst`; returns the bytes written.
///
/// A stream is a sequence of tokens. The first byte always opens a literal
/// run (its top bits are a marker). `ctrl < 32`: `ctrl + 1` literal bytes.
/// `ctrl >= 32`: a match of length `(ctrl >> 5) + 2` (7 means: add bytes
/// until one is not 255, then 9 + their sum) at distance
/// `(ctrl & 31) * 256 + next + 1`; the distance `31 * 256 + 255` is
/// followed by a 16-bit big-endian extension (far matches).
///
/// Every read and write is bounds-checked; where both buffers have room to
/// spare, literals and non-overlapping matches move in fixed 32/16-byte
/// pieces (one vector load and store each) instead of exact-length copies.
pub(crate) fn decompress(src: &[u8], dst: &mut [u8]) -> Result<usize> {
    let Some(&first) = src.first() else {
        return if dst.is_empty() {
            Ok(0)
        } else {
            Err(corrupt("empty blosclz stream"))
        };
    };
    let ilen = src.len();
    let olen = dst.len();
    let mut ip = 1usize;
    let mut op = 0usize;
    let mut ctrl = first & 31;
    loop {
        if ctrl >= 32 {
            let mut len = usize::from(ctrl >> 5);
            if len == 7 {
                loop {
                    let e = *src
                        .get(ip)
                        .ok_or_else(|| corrupt("blosclz stream ends inside a match length"))?;
                    ip += 1;
                    len += usize::from(e);
                    if e != 255 {
                        break;
                    }
                }
            }
            len += 2;
            let hi = usize::from(ctrl & 31);
            let lo = usize::from(
                *src.get(ip)
                    .ok_or_else(|| corrupt("blosclz stream ends inside a match"))?,
            );
            ip += 1;
            let mut dist = (hi << 8) + lo;
            if hi == 31 && lo == 255 {
                let ext = src
                    .get(ip..ip + 2)
                    .ok_or_else(|| corrupt("blosclz stream ends inside a far match"))?;
                dist = 8191 + (usize::from(ext[0]) << 8) + usize::from(ext[1]);
                ip += 2;
            }
            if dist >= op {
                return Err(corrupt(format!(
                    "blosclz match reaches {} bytes back at output offset {op}",
                    dist + 1
                )));
            }
            if len > olen - op {
                return Err(corrupt("blosclz match runs past the end of the block"));
            }
            let from = op - dist - 1;
            if dist >= 15 && len <= 16 && op + 16 <= olen {
                // Source and destination 16 bytes apart at least: one piece.
                let piece: [u8; 16] = dst[from..from + 16].try_into().unwrap();
                dst[op..op + 16].copy_from_slice(&piece);
            } else {
                copy_match(dst, from, op, len);
            }
            op += len;
        } else {
            let n = usize::from(ctrl) + 1;
            if ip + 32 <= ilen && op + 32 <= olen {
                let piece: [u8; 32] = src[ip..ip + 32].try_into().unwrap();
                dst[op..op + 32].copy_from_slice(&piece);
            } else {
                let lit = src
                    .get(ip..ip + n)
                    .ok_or_else(|| corrupt("blosclz literal run ends past the stream"))?;
                let out = dst
                    .get_mut(op..op + n)
                    .ok_or_else(|| corrupt("blosclz literal run past the end of the block"))?;
                out.copy_from_slice(lit);
            }
            ip += n;
            op += n;
        }
        if ip >= ilen {
            return Ok(op);
        }
        ctrl = src[ip];
        ip += 1;
    }
}
