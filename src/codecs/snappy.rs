//! Snappy decoding (raw format, no framing), for Blosc1 chunks written with
//! C-Blosc 1.x's `snappy` codec (flags format 2). C-Blosc2 dropped Snappy;
//! such chunks are still found in numcodecs' fixtures and old Zarr stores.
//! Writing Snappy is not offered.
//!
//! A raw Snappy stream is a varint (the decoded length) followed by elements
//! whose tag byte's low two bits say what they are: `00` a literal (length
//! in the tag's upper six bits, or in the next 1-4 bytes), `01` a copy with
//! a 3-bit length (4..=11) and an 11-bit offset, `10` a copy with a 6-bit
//! length (1..=64) and a 2-byte offset, `11` the same with a 4-byte offset.

use super::{Backend, DecDict, EncDict};
use crate::error::{Error, Result, corrupt};

/// Snappy: decoding only.
pub(crate) struct Snappy;

impl Backend for Snappy {
    /// A 3-byte copy writes at most 64 bytes.
    const EXPANSION: (usize, usize) = (32, 64);

    fn compress(
        &mut self,
        _clevel: u8,
        _src: &[u8],
        _dst: &mut [u8],
        _dict: Option<&EncDict>,
    ) -> Result<usize> {
        Err(Error::Unsupported(
            "writing Snappy streams is not offered".into(),
        ))
    }

    fn decompress(&mut self, src: &[u8], dst: &mut [u8], _dict: Option<&DecDict>) -> Result<usize> {
        decompress(src, dst)
    }
}

/// Decode the raw Snappy stream `src` into exactly `dst.len()` bytes;
/// returns the number of bytes written (always `dst.len()` on success).
pub(crate) fn decompress(src: &[u8], dst: &mut [u8]) -> Result<usize> {
    let (len, mut ip) = varint(src)?;
    if len != dst.len() as u64 {
        return Err(corrupt(format!(
            "snappy stream declares {len} bytes, {} expected",
            dst.len()
        )));
    }
    let n = dst.len();
    let mut op = 0usize;
    while ip < src.len() {
        let tag = src[ip];
        ip += 1;
        match tag & 3 {
            0 => {
                let mut lit = usize::from(tag >> 2);
                if lit >= 60 {
                    let extra = lit - 59;
                    let bytes = src
                        .get(ip..ip + extra)
                        .ok_or_else(|| corrupt("snappy literal length cut short"))?;
                    lit = bytes
                        .iter()
                        .rev()
                        .fold(0usize, |acc, &b| (acc << 8) | usize::from(b));
                    ip += extra;
                }
                let lit = lit + 1;
                let from = src
                    .get(ip..ip.saturating_add(lit))
                    .ok_or_else(|| corrupt("snappy literal runs past the stream"))?;
                let to = dst
                    .get_mut(op..op.saturating_add(lit))
                    .ok_or_else(|| corrupt("snappy literal runs past the output"))?;
                to.copy_from_slice(from);
                ip += lit;
                op += lit;
            }
            kind => {
                let (len, offset) = match kind {
                    1 => {
                        let b = *src
                            .get(ip)
                            .ok_or_else(|| corrupt("snappy copy cut short"))?;
                        ip += 1;
                        (
                            usize::from((tag >> 2) & 7) + 4,
                            (usize::from(tag >> 5) << 8) | usize::from(b),
                        )
                    }
                    2 => {
                        let b = src
                            .get(ip..ip + 2)
                            .ok_or_else(|| corrupt("snappy copy cut short"))?;
                        ip += 2;
                        (
                            usize::from(tag >> 2) + 1,
                            usize::from(u16::from_le_bytes([b[0], b[1]])),
                        )
                    }
                    _ => {
                        let b = src
                            .get(ip..ip + 4)
                            .ok_or_else(|| corrupt("snappy copy cut short"))?;
                        ip += 4;
                        (
                            usize::from(tag >> 2) + 1,
                            u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize,
                        )
                    }
                };
                if offset == 0 || offset > op {
                    return Err(corrupt(format!(
                        "snappy copy offset {offset} at output byte {op}"
                    )));
                }
                if len > n - op {
                    return Err(corrupt("snappy copy runs past the output"));
                }
                let from = op - offset;
                if offset >= len {
                    dst.copy_within(from..from + len, op);
                } else {
                    // Overlapping: the pattern repeats every `offset` bytes.
                    for k in 0..len {
                        dst[op + k] = dst[from + k];
                    }
                }
                op += len;
            }
        }
    }
    if op != n {
        return Err(corrupt(format!(
            "snappy stream decoded to {op} bytes, {n} expected"
        )));
    }
    Ok(n)
}

/// The leading varint (at most 5 bytes for a 32-bit length) and its size.
fn varint(src: &[u8]) -> Result<(u64, usize)> {
    let mut v = 0u64;
    for (i, &b) in src.iter().take(5).enumerate() {
        v |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return Ok((v, i + 1));
        }
    }
    Err(corrupt("snappy stream has no valid length"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(kind: u8, len: usize, seed: u64) -> Vec<u8> {
        let mut x = seed | 1;
        (0..len)
            .map(|i| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                match kind {
                    0 => (i / 7) as u8,
                    1 => (x % 4) as u8,
                    2 => x as u8,
                    _ => b"the quick brown fox "[i % 20],
                }
            })
            .collect()
    }

    #[test]
    fn decodes_what_the_snap_crate_encodes() {
        let mut enc = snap::raw::Encoder::new();
        for kind in 0..4 {
            for &len in &[0usize, 1, 5, 60, 61, 300, 4096, 70_000, 300_000] {
                let src = data(kind, len, len as u64 + 7);
                let stream = enc.compress_vec(&src).unwrap();
                let mut out = vec![0u8; len];
                assert_eq!(decompress(&stream, &mut out).unwrap(), len);
                assert_eq!(out, src, "kind {kind} len {len}");
            }
        }
    }

    #[test]
    fn literal_lengths_of_every_width() {
        // Hand-made streams: one literal with a 1-, 2-, 3- and 4-byte length.
        for (extra, len) in [(1usize, 100usize), (2, 1000), (3, 70_000), (4, 70_000)] {
            let mut s = Vec::new();
            let mut v = len;
            while v >= 0x80 {
                s.push((v as u8) | 0x80);
                v >>= 7;
            }
            s.push(v as u8);
            s.push(((59 + extra) as u8) << 2);
            s.extend_from_slice(&(len as u32 - 1).to_le_bytes()[..extra]);
            s.extend((0..len).map(|i| i as u8));
            let mut out = vec![0u8; len];
            decompress(&s, &mut out).unwrap();
            assert!(out.iter().enumerate().all(|(i, &b)| b == i as u8));
        }
    }

    #[test]
    fn hostile_streams_are_errors() {
        let mut enc = snap::raw::Encoder::new();
        let src = data(0, 5000, 1);
        let good = enc.compress_vec(&src).unwrap();
        let mut out = vec![0u8; src.len()];
        // Every truncation, and every single-byte change, is Ok-and-right or Err.
        for cut in 0..good.len() {
            let _ = decompress(&good[..cut], &mut out);
        }
        for at in 0..good.len() {
            for flip in [1u8, 0x80, 0xff] {
                let mut bad = good.clone();
                bad[at] ^= flip;
                if decompress(&bad, &mut out).is_ok() {
                    assert_eq!(out.len(), src.len());
                }
            }
        }
        // Wrong declared length, offset 0, offset past the start.
        assert!(decompress(&good, &mut [0u8; 10]).is_err());
        assert!(decompress(&[4, 0, b'a', 0x01, 0x00], &mut [0u8; 4]).is_err());
        assert!(decompress(&[8, 0, b'a', 0x01, 0x05], &mut [0u8; 8]).is_err());
        assert!(decompress(&[0x80, 0x80, 0x80, 0x80, 0x80], &mut []).is_err());
    }
}
