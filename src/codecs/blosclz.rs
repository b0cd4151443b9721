//! BloscLZ, C-Blosc2's default codec (stream format of CHUNK-NOTES §9.4).
//!
//! The decoder is written from the format description and checks every
//! offset against both buffers. The encoder makes the same choices as
//! C-Blosc2's (blosclz 2.5.3, CHUNK-NOTES §9.5), so its streams are the same
//! bytes: an entropy probe on the end of the block decides whether to try at
//! all, then a greedy single-hash LZ77 pass.

use crate::error::{Result, corrupt};

/// Longest literal run one token holds.
const MAX_COPY: usize = 32;
/// Longest distance of a near match (13 bits); further ones are far matches.
const MAX_DISTANCE: usize = 8191;
/// Longest distance of a far match.
const MAX_FARDISTANCE: usize = 65535 + MAX_DISTANCE - 1;

/// Hash table size (log2) per clevel.
const HASHLOG: [u32; 10] = [12, 12, 13, 14, 14, 14, 14, 14, 14, 14];
/// Minimum probe ratio per clevel below which the block is not compressed.
const MIN_RATIO: [f64; 10] = [2.0, 2.0, 1.5, 1.2, 1.2, 1.2, 1.2, 1.15, 1.1, 1.0];

#[inline(always)]
fn read_u32(buf: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(buf[at..at + 4].try_into().unwrap())
}

#[inline(always)]
fn hash(x: u32, hashlog: u32) -> usize {
    (x.wrapping_mul(2_654_435_761) >> (32 - hashlog)) as usize
}

/// One past the end of the common run of `buf[p..]` and `buf[q..]`, as the
/// C encoder counts it: the first mismatch position + 1, at most `bound`.
#[inline(always)]
fn match_end(buf: &[u8], mut p: usize, mut q: usize, bound: usize) -> usize {
    // Eight bytes at a time while both words fit before `bound`.
    while p + 8 <= bound {
        let a = u64::from_le_bytes(buf[p..p + 8].try_into().unwrap());
        let b = u64::from_le_bytes(buf[q..q + 8].try_into().unwrap());
        let x = a ^ b;
        if x != 0 {
            return p + (x.trailing_zeros() / 8) as usize + 1;
        }
        p += 8;
        q += 8;
    }
    while p < bound {
        if buf[p] != buf[q] {
            return p + 1;
        }
        p += 1;
        q += 1;
    }
    bound
}

/// The length bytes of a long match (`len >= 7`): one 255 per 255 of
/// `len - 7`; returns the remainder, or `None` if `dst` is full.
#[inline(always)]
fn emit_long_len(dst: &mut [u8], op: &mut usize, len: usize, maxout: usize) -> Option<usize> {
    let mut rest = len - 7;
    while rest >= 255 {
        if *op + 1 > maxout {
            return None;
        }
        dst[*op] = 255;
        *op += 1;
        rest -= 255;
    }
    Some(rest)
}

/// Encoder state: the hash table, reused between streams.
#[derive(Default)]
pub(crate) struct BloscLz {
    table: Vec<u32>,
}

impl BloscLz {
    fn reset_table(&mut self, hashlog: u32) {
        let size = 1usize << hashlog;
        self.table.clear();
        self.table.resize(size, 0);
    }

    /// The entropy probe: a dry run of the encoder over (a part of) the end
    /// of the block that counts output bytes; `ip / oc` estimates the ratio.
    fn probe_ratio(&mut self, clevel: usize, src: &[u8]) -> f64 {
        let n = src.len();
        let hashlog = HASHLOG[clevel];
        let maxlen = match clevel {
            1 => n / 8,
            2 | 3 => n / 4,
            4..=6 => n / 2,
            _ => n,
        };
        let win = &src[n - maxlen..];
        let limit = maxlen.min(1 << hashlog);
        if limit < 13 {
            return 0.0;
        }
        let bound = limit - 1;
        let iplimit = limit - 12;
        self.reset_table(hashlog);
        let table = &mut self.table;
        let mut oc: isize = 5;
        let mut lit = 4usize;
        let mut ip = 0usize;
        while ip < iplimit {
            let a = ip;
            let seq = read_u32(win, a);
            let h = hash(seq, hashlog);
            let r = table[h] as usize;
            let mut dist = a.wrapping_sub(r);
            table[h] = a as u32;
            let mut matched = false;
            if dist != 0 && dist < MAX_FARDISTANCE && read_u32(win, r) == seq {
                let e = match_end(win, a + 4, r + 4, bound);
                dist -= 1;
                let len = e - 4 - a;
                if len >= 4 {
                    matched = true;
                    if lit == 0 {
                        oc -= 1;
                    }
                    lit = 0;
                    if len >= 7 {
                        oc += ((len - 7) / 255 + 1) as isize;
                    }
                    oc += if dist < MAX_DISTANCE { 2 } else { 4 };
                    let p = a + len;
                    table[hash(read_u32(win, p), hashlog)] = p as u32;
                    ip = p + 2;
                    oc += 1;
                }
            }
            if !matched {
                oc += 1;
                ip = a + 1;
                lit += 1;
                if lit == MAX_COPY {
                    lit = 0;
                    oc += 1;
                }
            }
        }
        ip as f64 / oc as f64
    }

    /// Compress `src` into `dst` (at most `dst.len()` bytes); 0 when the
    /// block looks incompressible or the stream would not fit.
    pub(crate) fn compress(&mut self, clevel: u8, src: &[u8], dst: &mut [u8]) -> Result<usize> {
        let clevel = usize::from(clevel.clamp(1, 9));
        let ratio = self.probe_ratio(clevel, src);
        if ratio < MIN_RATIO[clevel] {
            return Ok(0);
        }
        let n = src.len();
        if n < 16 || dst.len() < 66 {
            return Ok(0);
        }
        Ok(self.encode(clevel, src, dst).unwrap_or(0))
    }

    /// The main pass; `None` when the output would exceed `dst`.
    fn encode(&mut self, clevel: usize, src: &[u8], dst: &mut [u8]) -> Option<usize> {
        let n = src.len();
        let maxout = dst.len();
        let hashlog = HASHLOG[clevel];
        self.reset_table(hashlog);
        let table = &mut self.table;
        let bound = n - 1;
        let iplimit = n - 12;
        dst[0] = (MAX_COPY - 1) as u8;
        dst[1..5].copy_from_slice(&src[..4]);
        let mut op = 5usize;
        let mut lit = 4usize;
        let mut marker = 0usize;
        let mut ip = 4usize;
        macro_rules! need {
            ($k:expr) => {
                if op + $k > maxout {
                    return None;
                }
            };
        }
        macro_rules! literal {
            ($a:expr) => {{
                need!(2);
                dst[op] = src[$a];
                op += 1;
                ip = $a + 1;
                lit += 1;
                if lit == MAX_COPY {
                    lit = 0;
                    marker = op;
                    dst[op] = (MAX_COPY - 1) as u8;
                    op += 1;
                }
            }};
        }
        while ip < iplimit {
            let a = ip;
            let seq = read_u32(src, a);
            let h = hash(seq, hashlog);
            let r = table[h] as usize;
            let mut dist = a.wrapping_sub(r);
            table[h] = a as u32;
            if dist == 0 || dist >= MAX_FARDISTANCE || read_u32(src, r) != seq {
                literal!(a);
                continue;
            }
            let e = match_end(src, a + 4, r + 4, bound);
            dist -= 1;
            let mut len = e - 4 - a;
            if len < 4 || (len <= 5 && dist >= MAX_DISTANCE) {
                literal!(a);
                continue;
            }
            if lit > 0 {
                dst[marker] = (lit - 1) as u8;
            } else {
                op -= 1; // the unused marker
            }
            lit = 0;
            let p = a + len;
            if dist < MAX_DISTANCE {
                if len < 7 {
                    need!(2);
                    dst[op] = ((len << 5) + (dist >> 8)) as u8;
                    dst[op + 1] = (dist & 255) as u8;
                    op += 2;
                } else {
                    need!(1);
                    dst[op] = ((7 << 5) + (dist >> 8)) as u8;
                    op += 1;
                    len = emit_long_len(dst, &mut op, len, maxout)?;
                    need!(2);
                    dst[op] = len as u8;
                    dst[op + 1] = (dist & 255) as u8;
                    op += 2;
                }
            } else {
                let far = dist - MAX_DISTANCE;
                if len < 7 {
                    need!(4);
                    dst[op] = ((len << 5) + 31) as u8;
                    dst[op + 1] = 255;
                    dst[op + 2] = (far >> 8) as u8;
                    dst[op + 3] = (far & 255) as u8;
                    op += 4;
                } else {
                    need!(1);
                    dst[op] = ((7 << 5) + 31) as u8;
                    op += 1;
                    len = emit_long_len(dst, &mut op, len, maxout)?;
                    need!(4);
                    dst[op] = len as u8;
                    dst[op + 1] = 255;
                    dst[op + 2] = (far >> 8) as u8;
                    dst[op + 3] = (far & 255) as u8;
                    op += 4;
                }
            }
            let x = read_u32(src, p);
            table[hash(x, hashlog)] = p as u32;
            if clevel == 9 {
                table[hash(x >> 8, hashlog)] = (p + 1) as u32;
            }
            ip = p + 2;
            need!(1);
            marker = op;
            dst[op] = (MAX_COPY - 1) as u8;
            op += 1;
        }
        while ip <= bound {
            need!(2);
            dst[op] = src[ip];
            op += 1;
            ip += 1;
            lit += 1;
            if lit == MAX_COPY {
                lit = 0;
                marker = op;
                dst[op] = (MAX_COPY - 1) as u8;
                op += 1;
            }
        }
        if lit > 0 {
            dst[marker] = (lit - 1) as u8;
        } else {
            op -= 1;
        }
        dst[0] |= 0x20;
        Some(op)
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The format description, one byte at a time: the oracle for the fast
    /// decoder. `None` for anything malformed.
    fn reference_decode(src: &[u8], out_len: usize) -> Option<Vec<u8>> {
        let mut out = Vec::with_capacity(out_len);
        let mut ip = 1;
        let mut ctrl = usize::from(*src.first()? & 31);
        loop {
            if ctrl >= 32 {
                let mut len = ctrl >> 5;
                if len == 7 {
                    loop {
                        let e = usize::from(*src.get(ip)?);
                        ip += 1;
                        len += e;
                        if e != 255 {
                            break;
                        }
                    }
                }
                len += 2;
                let hi = ctrl & 31;
                let lo = usize::from(*src.get(ip)?);
                ip += 1;
                let mut d = (hi << 8) + lo;
                if hi == 31 && lo == 255 {
                    d = 8191 + (usize::from(*src.get(ip)?) << 8) + usize::from(*src.get(ip + 1)?);
                    ip += 2;
                }
                if d >= out.len() || out.len() + len > out_len {
                    return None;
                }
                for _ in 0..len {
                    out.push(out[out.len() - d - 1]);
                }
            } else {
                let lit = src.get(ip..ip + ctrl + 1)?;
                if out.len() + lit.len() > out_len {
                    return None;
                }
                out.extend_from_slice(lit);
                ip += ctrl + 1;
            }
            if ip >= src.len() {
                return Some(out);
            }
            ctrl = usize::from(src[ip]);
            ip += 1;
        }
    }

    fn shapes(kind: u8, len: usize, seed: u64) -> Vec<u8> {
        let mut s = seed | 1;
        let mut rnd = move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        };
        match kind % 5 {
            0 => (0..len).map(|i| (i / 3) as u8).collect(),
            1 => (0..len)
                .map(|i| if i % 700 < 350 { 9 } else { (rnd() % 3) as u8 })
                .collect(),
            2 => (0..len).map(|_| (rnd() % 16) as u8).collect(),
            // Repeats at far distances (8 KiB .. 70 KiB back).
            3 => {
                let base: Vec<u8> = (0..9000).map(|_| rnd() as u8).collect();
                base.iter().cycle().take(len).copied().collect()
            }
            _ => (0..len).map(|_| rnd() as u8).collect(),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 300, failure_persistence: None, ..ProptestConfig::default() })]

        #[test]
        fn encoder_round_trips_at_every_clevel(kind in 0u8..5, len in 0usize..150_000, seed: u64, clevel in 1u8..=9) {
            let src = shapes(kind, len, seed);
            let mut dst = vec![0u8; len];
            let n = BloscLz::default().compress(clevel, &src, &mut dst).unwrap();
            if n > 0 {
                let stream = &dst[..n];
                let mut out = vec![0u8; len];
                prop_assert_eq!(decompress(stream, &mut out).unwrap(), len);
                prop_assert!(out == src);
                prop_assert_eq!(reference_decode(stream, len), Some(src));
            }
        }

        /// Mutated real streams and random bytes: the fast decoder never
        /// panics, and when it succeeds it agrees with the reference.
        #[test]
        fn hostile_streams(kind in 0u8..4, len in 16usize..20_000, seed: u64, edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..6), cut in any::<prop::sample::Index>(), out_len in 0usize..25_000) {
            let src = shapes(kind, len, seed);
            let mut dst = vec![0u8; len];
            let n = BloscLz::default().compress(5, &src, &mut dst).unwrap();
            let mut stream = if n > 0 { dst[..n].to_vec() } else { src.clone() };
            for (at, v) in &edits {
                let i = at.index(stream.len());
                stream[i] = *v;
            }
            stream.truncate(cut.index(stream.len() + 1));
            for out_len in [out_len, len] {
                let mut out = vec![0u8; out_len];
                if let Ok(k) = decompress(&stream, &mut out) {
                    let want = reference_decode(&stream, out_len);
                    prop_assert!(want.is_some(), "fast decoder accepted what the format rejects");
                    let want = want.unwrap();
                    prop_assert_eq!(k, want.len());
                    prop_assert!(out[..k] == want[..]);
                }
            }
        }
    }

    #[test]
    fn tiny_and_incompressible_inputs_are_refused() {
        let mut z = BloscLz::default();
        let mut dst = vec![0u8; 100];
        assert_eq!(z.compress(5, &[1, 2, 3], &mut dst).unwrap(), 0);
        let random = shapes(4, 4096, 7);
        let mut dst = vec![0u8; 4096];
        assert_eq!(z.compress(5, &random, &mut dst).unwrap(), 0);
    }
}
