//! BloscLZ, C-Blosc2's default codec (stream format of CHUNK-NOTES §9.4).
//!
//! The decoder is written from the format description and checks every
//! offset against both buffers. The encoder makes the same choices as
//! C-Blosc2's (blosclz 2.5.3, CHUNK-NOTES §9.5), so its streams are the same
//! bytes: an entropy probe on the end of the block decides whether to try at
//! all, then a greedy single-hash LZ77 pass. For Blosc1 chunks a second
//! entry point makes C-Blosc 1.21's choices (blosclz 2.5.1): another probe,
//! and a shorter minimum match for blocks that are not split or compress
//! poorly; the scan and the main pass are shared, with the match shift as a
//! const parameter.
//!
//! Both encoder loops scan for the next match first and settle the literal
//! run before it in one step (the probe only counts it, the main pass copies
//! it in pieces of up to 32 bytes), which gives exactly the per-byte
//! description's output and output-limit checks.

use super::{Backend, DecDict, EncDict, Warm};
use crate::error::{Result, corrupt};

/// Longest literal run one token holds.
const MAX_COPY: usize = 32;
/// Longest distance of a near match (13 bits); further ones are far matches.
const MAX_DISTANCE: usize = 8191;
/// Longest distance of a far match.
const MAX_FARDISTANCE: usize = 65535 + MAX_DISTANCE - 1;
/// Hash table slots for the largest `hashlog` (14).
const TABLE: usize = 1 << 14;

/// Hash table size (log2) per clevel.
const HASHLOG: [u32; 10] = [12, 12, 13, 14, 14, 14, 14, 14, 14, 14];
/// Minimum probe ratio per clevel below which the block is not compressed.
const MIN_RATIO: [f64; 10] = [2.0, 2.0, 1.5, 1.2, 1.2, 1.2, 1.2, 1.15, 1.1, 1.0];

#[inline(always)]
fn read_u32(buf: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(buf[at..at + 4].try_into().unwrap())
}

#[inline(always)]
fn read_u64(buf: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(buf[at..at + 8].try_into().unwrap())
}

/// The hash of a 4-byte sequence, masked to the table so that indexing a
/// `[u32; TABLE]` needs no bounds check (`hashlog <= 14`: the mask changes
/// nothing).
#[inline(always)]
fn hash(x: u32, hashlog: u32) -> usize {
    (x.wrapping_mul(2_654_435_761) >> (32 - hashlog)) as usize & (TABLE - 1)
}

/// One past the end of the common run of `buf[p..]` and `buf[q..]`, as the
/// C encoder counts it: the first mismatch position + 1, at most `bound`.
/// Requires `q < p <= bound <= buf.len()`.
#[inline(always)]
fn match_end(buf: &[u8], p: usize, q: usize, bound: usize) -> usize {
    let s = &buf[..bound];
    let (x, y) = (&s[p..], &s[q..]);
    let word = |c: &[u8], at: usize| u128::from_le_bytes(c[at..at + 16].try_into().unwrap());
    // 32 bytes a step (two 16-byte compares, one branch) while both pieces
    // lie before `bound`, then 16.
    let mut off = 0;
    for (a, b) in x.chunks_exact(32).zip(y.chunks_exact(32)) {
        let d0 = word(a, 0) ^ word(b, 0);
        let d1 = word(a, 16) ^ word(b, 16);
        if d0 | d1 != 0 {
            let at = if d0 != 0 {
                d0.trailing_zeros() / 8
            } else {
                16 + d1.trailing_zeros() / 8
            };
            return p + off + at as usize + 1;
        }
        off += 32;
    }
    if x.len() - off >= 16 {
        let d = word(x, off) ^ word(y, off);
        if d != 0 {
            return p + off + (d.trailing_zeros() / 8) as usize + 1;
        }
        off += 16;
    }
    let (x, y) = (&x[off..], &y[off..]);
    let mut i = 0;
    if x.len() >= 8 {
        let a = u64::from_le_bytes(x[..8].try_into().unwrap());
        let b = u64::from_le_bytes(y[..8].try_into().unwrap());
        let d = a ^ b;
        if d != 0 {
            return p + off + (d.trailing_zeros() / 8) as usize + 1;
        }
        i = 8;
    }
    while i < x.len() {
        if x[i] != y[i] {
            return p + off + i + 1;
        }
        i += 1;
    }
    bound
}

/// Hash and look up the positions from `*ip` on (entering each into the
/// table) until one has a candidate worth measuring: 1 to
/// `MAX_FARDISTANCE - 1` bytes back and at least `2 * SHIFT - 1` bytes
/// equal (`len >= SHIFT` in C's count, `len = match_end - SHIFT - a`).
/// Returns the candidate, with `*ip` left at the position (or at
/// `iplimit`). Requires `iplimit + 8 <= buf.len()`.
#[inline(always)]
fn next_candidate<const SHIFT: usize>(
    buf: &[u8],
    table: &mut [u32; TABLE],
    hashlog: u32,
    ip: &mut usize,
    iplimit: usize,
) -> Option<usize> {
    let (a, r) = scan::<SHIFT>(buf, table, hashlog, *ip, iplimit);
    *ip = a;
    (a < iplimit).then_some(r)
}

/// The per-byte loop of [`next_candidate`]: `(position, candidate)`, or
/// `(iplimit, _)`. Not inlined: inside the encoder loops the compiler
/// keeps half a dozen extra induction variables alive in it for the code
/// after the loop, which costs more than the call does.
#[inline(never)]
fn scan<const SHIFT: usize>(
    buf: &[u8],
    table: &mut [u32; TABLE],
    hashlog: u32,
    mut a: usize,
    iplimit: usize,
) -> (usize, usize) {
    // Only the low `2 * SHIFT - 1` bytes of the 8 compared must agree
    // (little-endian: the top ones are shifted out).
    let unchecked = 64 - 8 * (2 * SHIFT as u32 - 1);
    while a < iplimit {
        let w = read_u64(buf, a);
        let h = hash(w as u32, hashlog);
        let r = table[h] as usize;
        table[h] = a as u32;
        // `1 <= a - r < MAX_FARDISTANCE` in one test (`r <= a` always),
        // then the first `2 * SHIFT - 1` bytes.
        if a.wrapping_sub(r).wrapping_sub(1) < MAX_FARDISTANCE - 1
            && (w ^ read_u64(buf, r)) << unchecked == 0
        {
            return (a, r);
        }
        a += 1;
    }
    (a, 0)
}

/// The next match the encoder takes from `*ip` on: a candidate of
/// [`next_candidate`] that is near, or far with `len >= far_min`. `SHIFT`
/// is C's `ipshift` (and its `minlen`, which always equals it): the match
/// length counts the bytes up to the first mismatch less `SHIFT - 1`.
/// Returns the position, `len` and the biased distance (`a - r - 1`).
/// Requires `iplimit + 12 <= buf.len()`; `bound = buf.len() - 1`.
#[inline(always)]
fn next_match<const SHIFT: usize>(
    buf: &[u8],
    table: &mut [u32; TABLE],
    hashlog: u32,
    ip: &mut usize,
    iplimit: usize,
    far_min: usize,
) -> Option<(usize, usize, usize)> {
    let bound = buf.len() - 1;
    let known = 2 * SHIFT - 1;
    loop {
        let r = next_candidate::<SHIFT>(buf, table, hashlog, ip, iplimit)?;
        let a = *ip;
        let dist = a - r - 1;
        let len = match_end(buf, a + known, r + known, bound) - SHIFT - a;
        if dist < MAX_DISTANCE || len >= far_min {
            return Some((a, len, dist));
        }
        *ip = a + 1;
    }
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

/// The open literal run of the main pass: how many literals it holds
/// (`lit < 32`) and where its marker byte is.
struct Run {
    lit: usize,
    marker: usize,
}

/// Append `src[from..to]` to the open literal run, opening a new run (a
/// marker byte) each time one reaches 32; `None` where the per-byte
/// description would have run out of room (it wants 2 free bytes before
/// each literal).
#[inline(always)]
fn emit_literals(
    dst: &mut [u8],
    op: &mut usize,
    run: &mut Run,
    src: &[u8],
    mut from: usize,
    to: usize,
) -> Option<()> {
    let maxout = dst.len();
    while from < to {
        let take = (MAX_COPY - run.lit).min(to - from);
        // The last byte of this piece has the strictest room check.
        if *op + take + 1 > maxout {
            return None;
        }
        if from + MAX_COPY <= src.len() && *op + MAX_COPY <= maxout {
            // One fixed 32-byte move; bytes past `take` are overwritten
            // later or lie past the end of the stream.
            let piece: [u8; MAX_COPY] = src[from..from + MAX_COPY].try_into().unwrap();
            dst[*op..*op + MAX_COPY].copy_from_slice(&piece);
        } else {
            dst[*op..*op + take].copy_from_slice(&src[from..from + take]);
        }
        *op += take;
        from += take;
        run.lit += take;
        if run.lit == MAX_COPY {
            run.lit = 0;
            run.marker = *op;
            dst[*op] = (MAX_COPY - 1) as u8;
            *op += 1;
        }
    }
    Some(())
}

impl Backend for BloscLz {
    /// A match length grows by 255 per extra byte.
    const EXPANSION: (usize, usize) = (256, 64);

    fn warm(&mut self, w: Warm) -> Result<()> {
        if let Warm::Compress(_) = w {
            self.alloc_table();
        }
        Ok(())
    }

    fn compress(
        &mut self,
        clevel: u8,
        src: &[u8],
        dst: &mut [u8],
        _dict: Option<&EncDict>,
    ) -> Result<usize> {
        self.compress_stream(clevel, src, dst)
    }

    fn decompress(&mut self, src: &[u8], dst: &mut [u8], _dict: Option<&DecDict>) -> Result<usize> {
        decompress(src, dst)
    }
}

/// Encoder state: the hash table, reused between streams.
#[derive(Default)]
pub(crate) struct BloscLz {
    table: Vec<u32>,
}

impl BloscLz {
    /// Allocate the hash table now (see `CodecCtx::warm_compress`).
    fn alloc_table(&mut self) {
        if self.table.len() != TABLE {
            self.table = vec![0; TABLE];
        }
    }

    /// The hash table with its first `1 << hashlog` slots zeroed.
    fn table(&mut self, hashlog: u32) -> &mut [u32; TABLE] {
        self.alloc_table();
        let table: &mut [u32; TABLE] = self.table.as_mut_slice().try_into().unwrap();
        table[..1 << hashlog].fill(0);
        table
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
        let limit = maxlen.min(1 << hashlog);
        if limit < 13 {
            return 0.0;
        }
        let win = &src[n - maxlen..][..limit];
        let iplimit = limit - 12;
        let table = self.table(hashlog);
        let mut oc: usize = 5;
        let mut lit = 4usize;
        let mut ip = 0usize;
        // Where the current literal run started: a literal is one output
        // byte, plus a marker each time the run reaches 32.
        let mut run = 0usize;
        'scan: loop {
            let Some((a, len, dist)) = next_match::<4>(win, table, hashlog, &mut ip, iplimit, 4)
            else {
                break 'scan;
            };
            let k = a - run;
            oc += k + (lit + k) / MAX_COPY;
            if (lit + k).is_multiple_of(MAX_COPY) {
                oc -= 1;
            }
            lit = 0;
            if len >= 7 {
                oc += (len - 7) / 255 + 1;
            }
            oc += if dist < MAX_DISTANCE { 2 } else { 4 };
            let p = a + len;
            table[hash(read_u32(win, p), hashlog)] = p as u32;
            ip = p + 2;
            run = ip;
            oc += 1;
        }
        let k = ip - run;
        oc += k + (lit + k) / MAX_COPY;
        ip as f64 / oc as f64
    }

    /// Compress `src` into `dst` (at most `dst.len()` bytes); 0 when the
    /// block looks incompressible or the stream would not fit.
    fn compress_stream(&mut self, clevel: u8, src: &[u8], dst: &mut [u8]) -> Result<usize> {
        let clevel = usize::from(clevel.clamp(1, 9));
        let ratio = self.probe_ratio(clevel, src);
        if ratio < MIN_RATIO[clevel] {
            return Ok(0);
        }
        let n = src.len();
        if n < 16 || dst.len() < 66 {
            return Ok(0);
        }
        Ok(self.encode::<4>(clevel, src, dst).unwrap_or(0))
    }

    /// Compress `src` as C-Blosc 1.21's BloscLZ 2.5.1 does (the same bytes);
    /// `split` is whether the chunk's blocks are split into streams
    /// (C-Blosc 1.x hands its encoder the flag). 0 when the block looks
    /// incompressible or the stream would not fit in `dst`.
    ///
    /// The differences from [`Self::compress`]: the probe
    /// ([`Self::probe_ratio_blosc1`]) and the match shift, which is 3
    /// (matches of 3 and more, counted from one byte further) for blocks
    /// that are not split or whose probe ratio is below 4, else 4 as in
    /// C-Blosc2.
    pub(crate) fn compress_blosc1(
        &mut self,
        clevel: u8,
        src: &[u8],
        dst: &mut [u8],
        split: bool,
    ) -> Result<usize> {
        let clevel = usize::from(clevel.clamp(1, 9));
        let ratio = self.probe_ratio_blosc1(src);
        if ratio < MIN_RATIO[clevel] {
            return Ok(0);
        }
        if src.len() < 16 || dst.len() < 66 {
            return Ok(0);
        }
        let out = if !split || ratio < 4.0 {
            self.encode::<3>(clevel, src, dst)
        } else {
            self.encode::<4>(clevel, src, dst)
        };
        Ok(out.unwrap_or(0))
    }

    /// C-Blosc 1.21's entropy probe: a dry run of the encoder with match
    /// shift 3 over the first 4096 bytes of the last quarter of the block,
    /// with a 12-bit hash table at every clevel. It counts output bytes as
    /// the main pass writes them up to where the scan stops; the estimate
    /// is `ip / oc`.
    fn probe_ratio_blosc1(&mut self, src: &[u8]) -> f64 {
        const HASHLOG_PROBE: u32 = 12;
        let n = src.len();
        let maxlen = n / 4;
        let limit = maxlen.min(1 << HASHLOG_PROBE);
        if limit < 13 {
            return 0.0;
        }
        let win = &src[n - maxlen..][..limit];
        let iplimit = limit - 12;
        let table = self.table(HASHLOG_PROBE);
        let mut oc: usize = 5;
        let mut lit = 4usize;
        let mut ip = 0usize;
        // Where the current literal run started: a literal is one output
        // byte, plus a marker each time the run reaches 32.
        let mut run = 0usize;
        while let Some((a, len, dist)) =
            next_match::<3>(win, table, HASHLOG_PROBE, &mut ip, iplimit, 3)
        {
            let k = a - run;
            oc += k + (lit + k) / MAX_COPY;
            // The unused marker of an empty run is taken back.
            if (lit + k).is_multiple_of(MAX_COPY) {
                oc -= 1;
            }
            lit = 0;
            if len >= 7 {
                oc += (len - 7) / 255 + 1;
            }
            oc += if dist < MAX_DISTANCE { 2 } else { 4 };
            let p = a + len;
            table[hash(read_u32(win, p), HASHLOG_PROBE)] = p as u32;
            ip = p + 2;
            run = ip;
            oc += 1;
        }
        // The literals up to `iplimit` (none if the last match ended past
        // it); the bytes after it are in neither count.
        let k = ip - run;
        oc += k + (lit + k) / MAX_COPY;
        ip as f64 / oc as f64
    }

    /// The main pass; `None` when the output would exceed `dst`. `SHIFT` is
    /// the match shift of [`next_match`]: 4 for C-Blosc2's encoder, 3 or 4
    /// for C-Blosc 1.21's.
    fn encode<const SHIFT: usize>(
        &mut self,
        clevel: usize,
        src: &[u8],
        dst: &mut [u8],
    ) -> Option<usize> {
        let n = src.len();
        let maxout = dst.len();
        let hashlog = HASHLOG[clevel];
        let table = self.table(hashlog);
        let iplimit = n - 12;
        dst[0] = (MAX_COPY - 1) as u8;
        dst[1..5].copy_from_slice(&src[..4]);
        let mut op = 5usize;
        let mut run = Run { lit: 4, marker: 0 };
        let mut ip = 4usize;
        // Start of the literals not yet emitted.
        let mut pending = ip;
        macro_rules! need {
            ($k:expr) => {
                if op + $k > maxout {
                    return None;
                }
            };
        }
        'scan: loop {
            // Far matches shorter than 6 are not worth their 4 bytes.
            let Some((a, mut len, dist)) =
                next_match::<SHIFT>(src, table, hashlog, &mut ip, iplimit, 6)
            else {
                break 'scan;
            };
            emit_literals(dst, &mut op, &mut run, src, pending, a)?;
            if run.lit > 0 {
                dst[run.marker] = (run.lit - 1) as u8;
            } else {
                op -= 1; // the unused marker
            }
            run.lit = 0;
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
            pending = ip;
            need!(1);
            run.marker = op;
            dst[op] = (MAX_COPY - 1) as u8;
            op += 1;
        }
        // The scan stops before `iplimit`; everything from the pending
        // literals to the end of the block is literal.
        emit_literals(dst, &mut op, &mut run, src, pending, n)?;
        if run.lit > 0 {
            dst[run.marker] = (run.lit - 1) as u8;
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

    fn ref_hash(x: u32, hl: u32) -> usize {
        (x.wrapping_mul(2_654_435_761) >> (32 - hl)) as usize
    }

    fn ref_u32(b: &[u8], i: usize) -> u32 {
        u32::from_le_bytes(b[i..i + 4].try_into().unwrap())
    }

    fn ref_match_end(b: &[u8], mut p: usize, mut q: usize, bound: usize) -> usize {
        while p < bound {
            if b[p] != b[q] {
                return p + 1;
            }
            p += 1;
            q += 1;
        }
        bound
    }

    /// The entropy probe as CHUNK-NOTES §9.5 describes it, one byte at a
    /// time.
    fn reference_probe(clevel: usize, src: &[u8]) -> f64 {
        let hl = HASHLOG[clevel];
        let n = src.len();
        let maxlen = [0, n / 8, n / 4, n / 4, n / 2, n / 2, n / 2, n, n, n][clevel];
        let limit = maxlen.min(1 << hl);
        if limit < 13 {
            return 0.0;
        }
        let w = &src[n - maxlen..];
        let (bound, iplimit) = (limit - 1, limit - 12);
        let mut table = vec![0usize; 1 << hl];
        let (mut oc, mut lit, mut ip) = (5isize, 4usize, 0usize);
        while ip < iplimit {
            let a = ip;
            let hv = ref_hash(ref_u32(w, a), hl);
            let r = table[hv];
            let dist = a.wrapping_sub(r);
            table[hv] = a;
            let len = if dist != 0 && dist < MAX_FARDISTANCE && ref_u32(w, r) == ref_u32(w, a) {
                ref_match_end(w, a + 4, r + 4, bound) - 4 - a
            } else {
                0
            };
            if len < 4 {
                oc += 1;
                ip = a + 1;
                lit += 1;
                if lit == 32 {
                    lit = 0;
                    oc += 1;
                }
                continue;
            }
            if lit == 0 {
                oc -= 1;
            }
            lit = 0;
            if len >= 7 {
                oc += ((len - 7) / 255 + 1) as isize;
            }
            oc += if dist - 1 < MAX_DISTANCE { 2 } else { 4 };
            let p = a + len;
            table[ref_hash(ref_u32(w, p), hl)] = p;
            ip = p + 2;
            oc += 1;
        }
        ip as f64 / oc as f64
    }

    /// The compressor as CHUNK-NOTES §9.5 describes it, one byte at a time
    /// with a room check before every byte: the oracle for the encoder's
    /// batched literal runs and wide match compares.
    fn reference_compress(clevel: u8, src: &[u8], maxout: usize) -> Vec<u8> {
        let clevel = usize::from(clevel.clamp(1, 9));
        let ratio = reference_probe(clevel, src);
        if ratio < MIN_RATIO[clevel] || src.len() < 16 || maxout < 66 {
            return Vec::new();
        }
        reference_main_pass(clevel, src, maxout, 4)
    }

    /// C-Blosc 1.21's probe (BloscLZ 2.5.1), one byte at a time: a dry run
    /// with a 12-bit table, `ipshift = minlen = 3`, over the first 4096
    /// bytes of the last quarter.
    fn reference_probe_blosc1(src: &[u8]) -> f64 {
        let hl = 12;
        let n = src.len();
        let maxlen = n / 4;
        let limit = maxlen.min(4096);
        if limit < 13 {
            return 0.0;
        }
        let w = &src[n - maxlen..];
        let (bound, iplimit) = (limit - 1, limit - 12);
        let mut table = vec![0usize; 1 << hl];
        let (mut oc, mut copy, mut ip) = (5isize, 4usize, 0usize);
        while ip < iplimit {
            let a = ip;
            let hv = ref_hash(ref_u32(w, a), hl);
            let r = table[hv];
            let dist = a - r;
            table[hv] = a;
            let len = if dist != 0 && dist < MAX_FARDISTANCE && ref_u32(w, r) == ref_u32(w, a) {
                ref_match_end(w, a + 4, r + 4, bound) as isize - 3 - a as isize
            } else {
                0
            };
            if len < 3 {
                oc += 1;
                ip = a + 1;
                copy += 1;
                if copy == 32 {
                    copy = 0;
                    oc += 1;
                }
                continue;
            }
            if copy == 0 {
                oc -= 1;
            }
            copy = 0;
            if len >= 7 {
                oc += (len - 7) / 255 + 1;
            }
            oc += if dist - 1 < MAX_DISTANCE { 2 } else { 4 };
            let p = a + len as usize;
            table[ref_hash(ref_u32(w, p), hl)] = p;
            ip = p + 2;
            oc += 1;
        }
        ip as f64 / oc as f64
    }

    /// C-Blosc 1.21's `blosclz_compress`, one byte at a time.
    fn reference_compress_blosc1(clevel: u8, src: &[u8], maxout: usize, split: bool) -> Vec<u8> {
        let clevel = usize::from(clevel.clamp(1, 9));
        let ratio = reference_probe_blosc1(src);
        if ratio < MIN_RATIO[clevel] || src.len() < 16 || maxout < 66 {
            return Vec::new();
        }
        let shift = if !split || ratio < 4.0 { 3 } else { 4 };
        reference_main_pass(clevel, src, maxout, shift)
    }

    /// The main pass of both encoders with C's `ipshift` (= `minlen`)
    /// `shift`.
    fn reference_main_pass(clevel: usize, src: &[u8], maxout: usize, shift: usize) -> Vec<u8> {
        let hl = HASHLOG[clevel];
        let h = |x: u32| ref_hash(x, hl);
        let u32_at = ref_u32;
        let mend = ref_match_end;
        let n = src.len();
        let mut out: Vec<u8> = vec![31, src[0], src[1], src[2], src[3]];
        let (bound, iplimit) = (n - 1, n - 12);
        let mut table = vec![0usize; 1 << hl];
        let (mut lit, mut marker, mut ip) = (4usize, 0usize, 4usize);
        macro_rules! need {
            ($k:expr) => {
                if out.len() + $k > maxout {
                    return Vec::new();
                }
            };
        }
        macro_rules! literal {
            ($b:expr) => {{
                need!(2);
                out.push($b);
                lit += 1;
                if lit == 32 {
                    lit = 0;
                    marker = out.len();
                    out.push(31);
                }
            }};
        }
        while ip < iplimit {
            let a = ip;
            let hv = h(u32_at(src, a));
            let r = table[hv];
            let dist = a.wrapping_sub(r);
            table[hv] = a;
            let len = if dist != 0 && dist < MAX_FARDISTANCE && u32_at(src, r) == u32_at(src, a) {
                (mend(src, a + 4, r + 4, bound) - a).saturating_sub(shift)
            } else {
                0
            };
            let dist = dist.wrapping_sub(1);
            if len < shift || (len <= 5 && dist >= MAX_DISTANCE) {
                literal!(src[a]);
                ip = a + 1;
                continue;
            }
            if lit > 0 {
                out[marker] = (lit - 1) as u8;
            } else {
                out.pop();
            }
            lit = 0;
            let (code, tail): (usize, Vec<u8>) = if dist < MAX_DISTANCE {
                (dist >> 8, vec![(dist & 255) as u8])
            } else {
                let f = dist - MAX_DISTANCE;
                (31, vec![255, (f >> 8) as u8, (f & 255) as u8])
            };
            if len < 7 {
                need!(1 + tail.len());
                out.push(((len << 5) + code) as u8);
            } else {
                need!(1);
                out.push(((7 << 5) + code) as u8);
                let mut rest = len - 7;
                while rest >= 255 {
                    need!(1);
                    out.push(255);
                    rest -= 255;
                }
                need!(1 + tail.len());
                out.push(rest as u8);
            }
            out.extend_from_slice(&tail);
            let p = a + len;
            let x = u32_at(src, p);
            table[h(x)] = p;
            if clevel == 9 {
                table[h(x >> 8)] = p + 1;
            }
            ip = p + 2;
            need!(1);
            marker = out.len();
            out.push(31);
        }
        while ip <= bound {
            literal!(src[ip]);
            ip += 1;
        }
        if lit > 0 {
            out[marker] = (lit - 1) as u8;
        } else {
            out.pop();
        }
        out[0] |= 0x20;
        out
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
            let n = BloscLz::default().compress_stream(clevel, &src, &mut dst).unwrap();
            if n > 0 {
                let stream = &dst[..n];
                let mut out = vec![0u8; len];
                prop_assert_eq!(decompress(stream, &mut out).unwrap(), len);
                prop_assert!(out == src);
                prop_assert_eq!(reference_decode(stream, len), Some(src));
            }
        }

        /// The encoder against the per-byte description, with output
        /// limits anywhere from tiny to roomy (the limit decides between a
        /// stream and 0, so the room checks must be exactly the same).
        #[test]
        fn encoder_matches_reference(kind in 0u8..5, len in 0usize..70_000, seed: u64, clevel in 1u8..=9, room in 0.0f64..1.2) {
            let src = shapes(kind, len, seed);
            let maxout = (len as f64 * room) as usize;
            let want = reference_compress(clevel, &src, maxout);
            // A dst with garbage: the encoder must not depend on its contents.
            let mut dst = vec![0xA5u8; maxout];
            let n = BloscLz::default().compress_stream(clevel, &src, &mut dst).unwrap();
            prop_assert_eq!(n, want.len());
            prop_assert!(dst[..n] == want[..]);
        }

        /// The probe's estimate, exactly (C-identity hangs on which side
        /// of the threshold it falls), on the shapes and on blends of
        /// literals and matches that end on every residue of the 32-byte
        /// literal runs.
        #[test]
        fn probe_matches_reference(kind in 0u8..5, len in 0usize..40_000, seed: u64, clevel in 1usize..=9, lits in 0usize..70, reps in 1usize..40) {
            let mut src = shapes(kind, len, seed);
            let noise = shapes(4, lits, seed ^ 1);
            for _ in 0..reps {
                src.extend_from_slice(&noise);
                src.extend_from_slice(&[7; 20]);
            }
            let mut z = BloscLz::default();
            prop_assert_eq!(z.probe_ratio(clevel, &src).to_bits(), reference_probe(clevel, &src).to_bits());
        }

        /// C-Blosc 1.21's encoder: its streams decode back, with both the
        /// fast decoder and the format description.
        #[test]
        fn blosc1_encoder_round_trips(kind in 0u8..5, len in 0usize..150_000, seed: u64, clevel in 1u8..=9, split: bool) {
            let src = shapes(kind, len, seed);
            let mut dst = vec![0u8; len];
            let n = BloscLz::default().compress_blosc1(clevel, &src, &mut dst, split).unwrap();
            prop_assert!(n <= len);
            if n > 0 {
                let stream = &dst[..n];
                let mut out = vec![0u8; len];
                prop_assert_eq!(decompress(stream, &mut out).unwrap(), len);
                prop_assert!(out == src);
                prop_assert_eq!(reference_decode(stream, len), Some(src));
            }
        }

        /// C-Blosc 1.21's encoder against its per-byte description, with
        /// output limits from tiny to roomy.
        #[test]
        fn blosc1_encoder_matches_reference(kind in 0u8..5, len in 0usize..70_000, seed: u64, clevel in 1u8..=9, room in 0.0f64..1.2, split: bool) {
            let src = shapes(kind, len, seed);
            let maxout = (len as f64 * room) as usize;
            let want = reference_compress_blosc1(clevel, &src, maxout, split);
            let mut dst = vec![0xA5u8; maxout];
            let n = BloscLz::default().compress_blosc1(clevel, &src, &mut dst, split).unwrap();
            prop_assert_eq!(n, want.len());
            prop_assert!(dst[..n] == want[..]);
        }

        /// C-Blosc 1.21's probe, exactly, around every residue of the
        /// literal runs (the ratio decides both whether to compress and
        /// the match shift).
        #[test]
        fn blosc1_probe_matches_reference(kind in 0u8..5, len in 0usize..40_000, seed: u64, lits in 0usize..70, reps in 1usize..40) {
            let mut src = shapes(kind, len, seed);
            let noise = shapes(4, lits, seed ^ 1);
            for _ in 0..reps {
                src.extend_from_slice(&noise);
                src.extend_from_slice(&[7; 20]);
            }
            let mut z = BloscLz::default();
            prop_assert_eq!(z.probe_ratio_blosc1(&src).to_bits(), reference_probe_blosc1(&src).to_bits());
        }

        /// Mutated real streams and random bytes: the fast decoder never
        /// panics, and when it succeeds it agrees with the reference.
        #[test]
        fn hostile_streams(kind in 0u8..4, len in 16usize..20_000, seed: u64, edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..6), cut in any::<prop::sample::Index>(), out_len in 0usize..25_000) {
            let src = shapes(kind, len, seed);
            let mut dst = vec![0u8; len];
            let n = BloscLz::default().compress_stream(5, &src, &mut dst).unwrap();
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

    /// Output limits right around the stream's length, where one room
    /// check more or less decides between a stream and 0.
    #[test]
    fn encoder_room_checks_match_reference_at_the_edge() {
        let mut z = BloscLz::default();
        for (kind, len, clevel) in [
            (0u8, 5000, 5u8),
            (1, 20_000, 9),
            (0, 30_000, 1),
            (1, 9000, 4),
            (3, 40_000, 7),
            (1, 100, 9),
            (1, 777, 9),
        ] {
            let src = shapes(kind, len, 99);
            let full = reference_compress(clevel, &src, len + 100);
            assert!(
                !full.is_empty(),
                "kind {kind} len {len} clevel {clevel} should compress"
            );
            // Room for the stream plus one byte, and at least the 66 bytes
            // the encoder asks for before it starts.
            let hi = (full.len() + 2).max(66);
            for maxout in full.len().saturating_sub(80)..=hi {
                let want = reference_compress(clevel, &src, maxout);
                let mut dst = vec![0u8; maxout];
                let n = z.compress_stream(clevel, &src, &mut dst).unwrap();
                assert_eq!(n, want.len(), "kind {kind} clevel {clevel} maxout {maxout}");
                assert_eq!(dst[..n], want[..]);
            }
            // The range holds the switch from 0 to the whole stream.
            assert!(reference_compress(clevel, &src, full.len() - 1).is_empty());
            assert_eq!(reference_compress(clevel, &src, hi), full);
        }
    }

    /// Hostile room for C-Blosc 1.21's encoder: every `dst` length up to
    /// a little past the stream (dirty `dst`s, both match shifts) gives 0
    /// or the whole stream, exactly where the per-byte description does,
    /// and nothing past `dst` is needed.
    #[test]
    fn blosc1_every_room_near_the_stream_gives_0_or_the_stream() {
        let mut z = BloscLz::default();
        let mut streams = 0;
        // Split blocks with probe ratios below and above 4 (match shift 3
        // and 4).
        let (mut low, mut high) = (false, false);
        for (kind, len, clevel) in [
            (0u8, 5000, 5u8),
            (1, 20_000, 9),
            (0, 30_000, 1),
            (1, 9000, 4),
            (0, 40_000, 7),
            (1, 12_000, 2),
            (1, 100, 9),
            (1, 777, 3),
            (1, 60, 6),
        ] {
            let src = shapes(kind, len, 99);
            let ratio = reference_probe_blosc1(&src);
            low |= ratio < 4.0;
            high |= ratio >= 4.0;
            for split in [false, true] {
                let full = reference_compress_blosc1(clevel, &src, 2 * len + 100, split);
                assert!(
                    !full.is_empty(),
                    "kind {kind} len {len} clevel {clevel} should compress"
                );
                let mut dst = vec![0u8; (full.len() + 3).max(66)];
                let n = z.compress_blosc1(clevel, &src, &mut dst, split).unwrap();
                assert_eq!(dst[..n], full[..]);
                let mut first_fit = None;
                for maxout in (0..100).chain(full.len().saturating_sub(80)..full.len() + 3) {
                    let want = reference_compress_blosc1(clevel, &src, maxout, split);
                    let mut dst = vec![0x5Au8; maxout];
                    let n = z.compress_blosc1(clevel, &src, &mut dst, split).unwrap();
                    assert_eq!(
                        n,
                        want.len(),
                        "kind {kind} clevel {clevel} split {split} maxout {maxout}"
                    );
                    assert!(
                        n == 0 || dst[..n] == full[..],
                        "a stream, not a part of one"
                    );
                    if n > 0 && first_fit.is_none() {
                        first_fit = Some(maxout);
                    }
                }
                // The switch from 0 to the whole stream is in the range.
                let fit = first_fit.expect("the stream fits somewhere");
                assert!(fit >= full.len() && fit >= 66);
                streams += 1;
            }
        }
        assert_eq!(streams, 18);
        assert!(low && high);
    }

    #[test]
    fn tiny_and_incompressible_inputs_are_refused() {
        let mut z = BloscLz::default();
        let mut dst = vec![0u8; 100];
        assert_eq!(z.compress_stream(5, &[1, 2, 3], &mut dst).unwrap(), 0);
        let random = shapes(4, 4096, 7);
        let mut dst = vec![0u8; 4096];
        assert_eq!(z.compress_stream(5, &random, &mut dst).unwrap(), 0);
    }
}
