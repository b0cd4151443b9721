//! BloscLZ, C-Blosc2's default codec (stream format of CHUNK-NOTES §9.4).
//!
//! The decoder is written from the format description and checks every
//! offset against both buffers. The encoder (byte-identical to C-Blosc2's)
//! is tracked as its own piece of work; until it lands, compressing with
//! BloscLZ is an `Unsupported` error.

use crate::error::{Error, Result, corrupt};

/// Encoder state (the hash table, once the encoder exists).
#[derive(Default)]
pub(crate) struct BloscLz {}

impl BloscLz {
    pub(crate) fn compress(&mut self, _clevel: u8, _src: &[u8], _dst: &mut [u8]) -> Result<usize> {
        Err(Error::Unsupported(
            "compressing with blosclz is not implemented yet; choose lz4, lz4hc, zlib or zstd"
                .into(),
        ))
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
pub(crate) fn decompress(src: &[u8], dst: &mut [u8]) -> Result<usize> {
    let Some(&first) = src.first() else {
        return if dst.is_empty() {
            Ok(0)
        } else {
            Err(corrupt("empty blosclz stream"))
        };
    };
    let mut ip = 1usize;
    let mut op = 0usize;
    let mut ctrl = first & 31;
    let next = |ip: &mut usize| -> Result<u8> {
        let b = *src
            .get(*ip)
            .ok_or_else(|| corrupt("blosclz stream ends inside a match"))?;
        *ip += 1;
        Ok(b)
    };
    loop {
        if ctrl >= 32 {
            let mut len = usize::from(ctrl >> 5);
            if len == 7 {
                loop {
                    let e = next(&mut ip)?;
                    len += usize::from(e);
                    if e != 255 {
                        break;
                    }
                }
            }
            len += 2;
            let hi = usize::from(ctrl & 31);
            let lo = usize::from(next(&mut ip)?);
            let mut dist = (hi << 8) + lo;
            if hi == 31 && lo == 255 {
                let h = usize::from(next(&mut ip)?);
                let l = usize::from(next(&mut ip)?);
                dist = 8191 + (h << 8) + l;
            }
            if dist >= op {
                return Err(corrupt(format!(
                    "blosclz match reaches {} bytes back at output offset {op}",
                    dist + 1
                )));
            }
            if len > dst.len() - op {
                return Err(corrupt("blosclz match runs past the end of the block"));
            }
            let from = op - dist - 1;
            if dist + 1 >= len {
                dst.copy_within(from..from + len, op);
            } else {
                // Overlapping copy: repeats the last dist + 1 bytes.
                for k in 0..len {
                    dst[op + k] = dst[from + k];
                }
            }
            op += len;
        } else {
            let n = usize::from(ctrl) + 1;
            let lit = src
                .get(ip..ip + n)
                .ok_or_else(|| corrupt("blosclz literal run ends past the stream"))?;
            let out = dst
                .get_mut(op..op + n)
                .ok_or_else(|| corrupt("blosclz literal run past the end of the block"))?;
            out.copy_from_slice(lit);
            ip += n;
            op += n;
        }
        if ip >= src.len() {
            return Ok(op);
        }
        ctrl = src[ip];
        ip += 1;
    }
}
