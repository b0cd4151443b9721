//! The BloscLZ decoder: every offset checked against both buffers.

use crate::error::{Result, corrupt};

/// Copy `len` bytes from `dst[from..]` to `dst[op..]` where the regions may
/// overlap (`op - from` is the match distance): byte runs become a fill,
/// short repeating patterns are copied in doubling non-overlapping pieces.
/// The exact path, used where the block has no room after the match.
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

/// Matches up to this long at distances of 16 bytes or more are copied in
/// 16-byte pieces; longer ones by `copy_within` (libc `memmove`, faster on
/// long copies than pieces, slower on short ones by its call and dispatch).
const PIECES_MAX: usize = 64;

/// Byte runs (distance 1) longer than this are a `fill` (libc `memset`):
/// the high byte planes of shuffled 16-bit counters are runs of 50-90
/// bytes, which 16-byte pattern pieces (two 8-byte stores each) decoded
/// 1.3x slower (32 KiB chunk 1.61 -> 1.25 us, C-Blosc2 1.18; the perf grid's
/// rows unchanged, perf/README.md session 13). It was 128. Pieces of the
/// byte splatted over a 16-byte register were slower too (a 4 KiB chunk
/// with eleven 83-byte runs: 263 against 234 ns, session 21).
const RUN_FILL_MIN: usize = 32;

/// One 16-byte piece from `dst[from..]` to `dst[to..]` (an unaligned vector
/// load and store; the two ranges may overlap only if `to - from >= 16`).
#[inline(always)]
fn piece16(dst: &mut [u8], from: usize, to: usize) {
    let p: [u8; 16] = dst[from..from + 16].try_into().unwrap();
    dst[to..to + 16].copy_from_slice(&p);
}

/// One 4-byte piece from `dst[from..]` to `dst[to..]`, `to - from >= 4`.
#[inline(always)]
fn piece4(dst: &mut [u8], from: usize, to: usize) {
    let p: [u8; 4] = dst[from..from + 4].try_into().unwrap();
    dst[to..to + 4].copy_from_slice(&p);
}

/// Where a pattern of period `d` (1 to 15 bytes) repeated over 16 bytes
/// starts again: the largest multiple of `d` in 16 (`STEP[d]`).
const STEP: [usize; 16] = {
    let mut t = [0; 16];
    let mut d = 1;
    while d < 16 {
        t[d] = 16 - 16 % d;
        d += 1;
    }
    t
};

/// The `d` bytes at the start of `window` (3, 5, 6, 7 or 9 to 15: the
/// period of a match `d` bytes back; the window's other bytes are
/// overwritten) repeated over 16 bytes, and the largest multiple of the
/// period in 16 (where the pattern starts again). Each byte is the one a
/// period before it: `period[i % d]` cost 16 divisions, about 70 ns a call
/// (the byte planes of truncated float32, 32 KiB: 7% of the decoding).
/// Rare in Blosc's byte planes, and kept out of line.
#[inline(never)]
fn odd_pattern(window: &[u8; 16], d: usize) -> ([u8; 16], usize) {
    debug_assert!((3..16).contains(&d));
    let mut p = *window;
    for i in d..16 {
        p[i] = p[i - d];
    }
    (p, STEP[d])
}

/// Copy the match of `len` bytes at distance `d = op - from`, writing up to
/// 16 bytes past `op + len` ("wild" pieces), which the caller guarantees
/// exist (`op + len + 16 <= dst.len()`): the bytes past the match are
/// garbage that the next tokens overwrite. Returns false (nothing written)
/// for the long copies this leaves to [`copy_match`]. Byte runs longer than
/// [`RUN_FILL_MIN`] are not asked of it.
#[inline(always)]
fn copy_match_wild(dst: &mut [u8], from: usize, op: usize, len: usize) -> bool {
    let d = op - from;
    if d >= 16 {
        if len > PIECES_MAX {
            return false;
        }
        // Each piece reads 16 bytes that end at least `d - 16` bytes before
        // the piece it writes: all written already. The caller copies
        // matches of at most 16 bytes in one piece, so this one has two at
        // least (the first two unrolled: 1.36x instead of 1.25x of the
        // old speed on linspace-f64 32 KiB, 1.51x instead of 1.35x at 256).
        debug_assert!(len > 16);
        piece16(dst, from, op);
        piece16(dst, from + 16, op + 16);
        let mut k = 32;
        while k < len {
            piece16(dst, from + k, op + k);
            k += 16;
        }
    } else {
        // Long byte runs are the caller's `fill`.
        debug_assert!(d != 1 || len <= RUN_FILL_MIN);
        // A short period: the `d` bytes before `op` repeated over 16 bytes,
        // stored every `step` bytes (the largest multiple of `d` in 16), so
        // that every store writes the pattern at its own phase. The pattern
        // is loaded with loads of exactly `d` bytes: a wider load, reaching
        // past `op` or further back, would span bytes that several recent
        // stores wrote (the previous tokens' pieces) and wait for them to
        // retire (a failed store-to-load forward). The odd periods, rare,
        // take one 16-byte load instead (a stall, cheaper than building the
        // pattern byte by byte from `d` loads).
        let half = match d {
            1 => u64::from(dst[from]) * 0x0101_0101_0101_0101,
            2 => u64::from(u16::from_le_bytes([dst[from], dst[from + 1]])) * 0x0001_0001_0001_0001,
            4 => {
                let x = u32::from_le_bytes(dst[from..op].try_into().unwrap());
                u64::from(x) * 0x0000_0001_0000_0001
            }
            8 => u64::from_le_bytes(dst[from..op].try_into().unwrap()),
            _ => {
                // In bounds: `from < op` and `op + len + 16 <= dst.len()`.
                let window: &[u8; 16] = dst[from..from + 16].try_into().unwrap();
                let (pat, step) = odd_pattern(window, d);
                let mut k = 0;
                while k < len {
                    dst[op + k..op + k + 16].copy_from_slice(&pat);
                    k += step;
                }
                return true;
            }
        };
        // Two 8-byte stores per piece: built in a vector register the
        // pattern went through the stack (two 8-byte stores, one 16-byte
        // load: a failed forward per match), 0.85x.
        let b = half.to_le_bytes();
        let end = op + len.next_multiple_of(16);
        for piece in dst[op..end].chunks_exact_mut(16) {
            piece[..8].copy_from_slice(&b);
            piece[8..].copy_from_slice(&b);
        }
    }
    true
}

/// Copy a literal run of 1 to 32 bytes (`dst.len() == src.len()`) with two
/// fixed-size copies that overlap in the middle, rather than a
/// `copy_from_slice` of a length known only at run time (a libc `memcpy`
/// call): the exact path for the literals a stream ends with, where the
/// 32-byte piece would read past the stream. A small chunk's stream has
/// several (4 KiB of int32 counters: 5 calls a chunk).
#[inline(always)]
fn copy_literal(dst: &mut [u8], src: &[u8]) {
    let n = src.len();
    debug_assert!(n == dst.len() && (1..=32).contains(&n));
    if n >= 16 {
        dst[..16].copy_from_slice(&src[..16]);
        dst[n - 16..].copy_from_slice(&src[n - 16..]);
    } else if n >= 8 {
        dst[..8].copy_from_slice(&src[..8]);
        dst[n - 8..].copy_from_slice(&src[n - 8..]);
    } else if n >= 4 {
        dst[..4].copy_from_slice(&src[..4]);
        dst[n - 4..].copy_from_slice(&src[n - 4..]);
    } else {
        dst[0] = src[0];
        dst[n / 2] = src[n / 2];
        dst[n - 1] = src[n - 1];
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
/// Every read and write is bounds-checked. Where both buffers have room to
/// spare, literals move in one 32-byte piece (16-byte for runs of at most 16
/// bytes near the end of a stream) and matches in 16-byte pieces
/// that may write up to 31 bytes past the token's end (bytes of `dst` past
/// the returned length are unspecified): matches at distances of 16 and
/// more as 16-byte loads and stores up to 64 bytes (longer ones by
/// `copy_within`, libc's `memmove`), shorter distances by storing their
/// repeating pattern (byte runs up to 32 bytes, longer ones by `fill`).
/// That replaced a `memmove` per match (per doubling piece for distances
/// below 16), which cost the byte planes of shuffled float64 data (full of
/// 6-33 byte matches at distances 1, 2 and 131) a quarter of their time.
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
                piece16(dst, from, op);
            } else if dist == 0 && len > RUN_FILL_MIN {
                // A long byte run (`copy_match`'s fill), asked here before
                // the wild path tests it (~15 instructions a run; a 4 KiB
                // chunk of int32 counters has eleven).
                copy_match(dst, from, op, len);
            } else if dist >= 3 && len <= 8 && op + 8 <= olen {
                // A short match 4 to 15 bytes back (unfiltered 32- and 64-bit
                // integers: 6-byte matches at distances 4 and 8, alternating):
                // two 4-byte pieces, each reading bytes written before it,
                // without the wild path's jump on the distance, which
                // mispredicts when distances alternate (perf/README.md,
                // session 25: 256 KiB of noisy int32 ramps, no filter, 1.6x
                // faster). Asked in `copy_match_wild`, LLVM folds it into
                // that jump and the gain is gone.
                piece4(dst, from, op);
                piece4(dst, from + 4, op + 4);
            } else if olen - op - len < 16 || !copy_match_wild(dst, from, op, len) {
                copy_match(dst, from, op, len);
            }
            op += len;
        } else {
            let n = usize::from(ctrl) + 1;
            if ip + 32 <= ilen && op + 32 <= olen {
                let piece: [u8; 32] = src[ip..ip + 32].try_into().unwrap();
                dst[op..op + 32].copy_from_slice(&piece);
            } else if n <= 16 && ip + 16 <= ilen && op + 16 <= olen {
                // Near a short stream's end: one 16-byte piece still fits
                // (the streams of a 4 KiB chunk are tens of bytes long, and
                // most of their literals are within 32 bytes of the end).
                let piece: [u8; 16] = src[ip..ip + 16].try_into().unwrap();
                dst[op..op + 16].copy_from_slice(&piece);
            } else {
                let lit = src
                    .get(ip..ip + n)
                    .ok_or_else(|| corrupt("blosclz literal run ends past the stream"))?;
                let out = dst
                    .get_mut(op..op + n)
                    .ok_or_else(|| corrupt("blosclz literal run past the end of the block"))?;
                copy_literal(out, lit);
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
