//! BloscLZ, C-Blosc2's default codec (stream format of CHUNK-NOTES §9.4).
//!
//! The decoder (`decode.rs`) is written from the format description and
//! checks every offset against both buffers. The encoder makes the same choices as
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
use crate::error::Result;

/// Longest literal run one token holds.
const MAX_COPY: usize = 32;
/// Longest distance of a near match (13 bits); further ones are far matches.
const MAX_DISTANCE: usize = 8191;
/// Longest distance of a far match.
const MAX_FARDISTANCE: usize = 65535 + MAX_DISTANCE - 1;
/// Hash table slots for the largest `hashlog` (14).
const TABLE: usize = 1 << 14;

/// Hash table size (log2) of C-Blosc 1.21's probe.
const HASHLOG_PROBE: u32 = 12;
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
    // One 8-byte word first (a short match ends there), then 32 bytes a
    // step (two 16-byte compares, one branch) while both pieces lie before
    // `bound`, then 16.
    if x.len() >= 8 {
        let d = (read_u64(x, 0) ^ read_u64(y, 0)).to_le_bytes();
        if d != [0; 8] {
            // The first differing byte found by a branch per byte, each
            // exit a constant, not by counting the word's trailing zeros:
            // where matches have the same few lengths (unfiltered integers,
            // a 6-byte match every 8 bytes) the branches are predicted and
            // the next position's loads start before this word's bytes
            // arrive; `trailing_zeros` made the position wait for them
            // (perf/README.md, session 27: `blosclz/none/ts8/256K/l5`
            // compress 333-344 -> 307-314 µs).
            let mut i = 0;
            while d[i] == 0 {
                i += 1;
            }
            return p + i + 1;
        }
    }
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
    table: &mut impl Slots,
    hashlog: u32,
    ip: &mut usize,
    iplimit: usize,
) -> Option<usize> {
    let a = *ip;
    if a >= iplimit {
        return None;
    }
    // The first position in line: on match-heavy data about half the
    // matches start right here, after the previous one with no literal
    // between them, and those save the call of `scan`.
    let w = read_u64(buf, a);
    let r = enter(table, hashlog, a, w);
    if is_candidate::<SHIFT>(buf, a, r, w) {
        return Some(r);
    }
    // `scan` with `hashlog` (12, 13 or 14) a constant: its hashes shift by
    // an immediate, which keeps %cl and the loop's setup out of each call.
    debug_assert!((12..=14).contains(&hashlog));
    let (a, r) = match hashlog {
        12 => scan::<SHIFT, 12>(buf, table, a + 1, iplimit),
        13 => scan::<SHIFT, 13>(buf, table, a + 1, iplimit),
        _ => scan::<SHIFT, 14>(buf, table, a + 1, iplimit),
    };
    *ip = a;
    (a < iplimit).then_some(r)
}

/// Enter position `a`, whose word is `w`, into the table; returns the
/// position the slot held before (the candidate for [`is_candidate`]).
#[inline(always)]
fn enter(table: &mut impl Slots, hashlog: u32, a: usize, w: u64) -> usize {
    let h = hash(w as u32, hashlog);
    let r = table.get(h);
    table.set(h, a);
    r
}

/// Whether `r`, the table's entry for the word `w` at `a`, is a candidate
/// worth measuring (see [`next_candidate`]): `1 <= a - r < MAX_FARDISTANCE`
/// in one test (`r <= a` always), then the first `2 * SHIFT - 1` bytes
/// (little-endian: the top ones of the 8 compared are shifted out).
#[inline(always)]
fn is_candidate<const SHIFT: usize>(buf: &[u8], a: usize, r: usize, w: u64) -> bool {
    const { assert!(SHIFT >= 1 && 2 * SHIFT - 1 <= 7) };
    let unchecked = 64 - 8 * (2 * SHIFT as u32 - 1);
    a.wrapping_sub(r).wrapping_sub(1) < MAX_FARDISTANCE - 1
        && (w ^ read_u64(buf, r)) << unchecked == 0
}

/// The per-byte loop of [`next_candidate`] from `a` on, at `hashlog =
/// HASHLOG`: `(position, candidate)`, or `(iplimit, _)`. Not inlined:
/// inside the encoder loops the compiler keeps half a dozen extra
/// induction variables alive in it for the code after the loop, which
/// costs more than the call does.
#[inline(never)]
fn scan<const SHIFT: usize, const HASHLOG: u32>(
    buf: &[u8],
    table: &mut impl Slots,
    mut a: usize,
    iplimit: usize,
) -> (usize, usize) {
    let hit = |a: usize, r: usize, w: u64| is_candidate::<SHIFT>(buf, a, r, w);
    // Two positions a step from one load: the word at `a + 1` is the one
    // at `a` shifted by a byte, its low 7 bytes (all that are compared)
    // intact.
    while a + 1 < iplimit {
        let w = read_u64(buf, a);
        let r = enter(table, HASHLOG, a, w);
        if hit(a, r, w) {
            return (a, r);
        }
        let w1 = w >> 8;
        let r1 = enter(table, HASHLOG, a + 1, w1);
        if hit(a + 1, r1, w1) {
            return (a + 1, r1);
        }
        a += 2;
    }
    if a < iplimit {
        let w = read_u64(buf, a);
        let r = enter(table, HASHLOG, a, w);
        if hit(a, r, w) {
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
    table: &mut impl Slots,
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
    let lit = run.lit + (to - from);
    if lit < MAX_COPY && from + MAX_COPY <= src.len() && *op + MAX_COPY <= maxout {
        // The run stays below 32 literals (the common case: a few between
        // two matches): one fixed 32-byte move, and the room the loop
        // would check is there.
        let piece: [u8; MAX_COPY] = src[from..from + MAX_COPY].try_into().unwrap();
        dst[*op..*op + MAX_COPY].copy_from_slice(&piece);
        *op += to - from;
        run.lit = lit;
        return Some(());
    }
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

/// Encoder state: the hash tables, reused between streams.
#[derive(Default)]
pub(crate) struct BloscLz {
    table: Vec<u32>,
    /// The table of passes whose positions fit in 16 bits (see [`Plain`]).
    table16: Vec<u16>,
    /// Every slot holds less: the `base` of the next pass.
    next: u32,
}

/// One pass's view of the hash table: a [`Plain`] or a [`Tagged`] one.
trait Slots {
    /// The position in slot `h` (0 if this pass has not written it).
    fn get(&self, h: usize) -> usize;
    /// Store position `pos` (below the pass's stream length) in slot `h`.
    fn set(&mut self, h: usize, pos: usize);
}

/// A table zeroed before the pass, as C's: the slots hold positions.
/// With `u16` slots where every position of the pass fits (all probes, and
/// main passes over streams up to 64 KiB): the same values as C's `u32`
/// ones in half the memory. At hashlog 14 that is 32 KiB instead of 64:
/// zeroing it costs half, and the table and a 32 KiB byte plane fit better
/// in a 48 KiB L1 data cache (a shuffled float64 chunk, 8 planes of 32 KiB
/// at clevel 5: 5% faster, about half of it the zeroing).
struct Plain<'a, S>(&'a mut [S; TABLE]);

/// [`Slots`] for a [`Plain`] table of each slot width (the caller makes
/// sure every position of the pass fits: `as` never truncates here).
macro_rules! plain_slots {
    ($($s:ty),*) => {$(
        impl Slots for Plain<'_, $s> {
            #[inline(always)]
            fn get(&self, h: usize) -> usize {
                self.0[h] as usize
            }

            #[inline(always)]
            fn set(&mut self, h: usize, pos: usize) {
                self.0[h] = pos as $s;
            }
        }
    )*};
}

plain_slots!(u16, u32);

/// A table not zeroed: the pass stores `position + base`, with a `base`
/// above every value stored before, and a slot below `base` reads as 0,
/// what C's zeroed slot holds (the same candidates, so the same bytes).
/// For short streams: C zeroes its table (64 KiB at hashlog 14) before
/// each pass, twice per stream (probe and main pass), about as much work as
/// encoding a 4 KiB byte plane; the base costs a subtraction per lookup,
/// more than the zeroing on long streams.
struct Tagged<'a> {
    slots: &'a mut [u32; TABLE],
    base: u32,
}

impl Slots for Tagged<'_> {
    #[inline(always)]
    fn get(&self, h: usize) -> usize {
        self.slots[h].saturating_sub(self.base) as usize
    }

    #[inline(always)]
    fn set(&mut self, h: usize, pos: usize) {
        self.slots[h] = self.base + pos as u32;
    }
}

/// Streams up to this long are encoded with a [`Tagged`] table, longer
/// ones with a zeroed [`Plain`] one.
const TAGGED_MAX: usize = 4096;

/// Run `$body` with `$t` bound to a fresh table for a pass over the
/// stream `$src` at `$hashlog`: tagged for short streams, else zeroed, with
/// `u16` slots if the pass's positions fit. `probe` is a probe's form: its
/// positions lie in a window of at most `1 << hashlog <= TABLE` bytes.
macro_rules! with_table {
    ($z:expr, $src:expr, $hashlog:expr, |$t:ident| $body:expr) => {{
        let n = $src.len();
        if n <= TAGGED_MAX {
            let $t = &mut $z.tagged(n);
            $body
        } else if n <= 1 << 16 {
            let $t = &mut $z.plain16($hashlog);
            $body
        } else {
            let $t = &mut $z.plain($hashlog, n);
            $body
        }
    }};
    (probe $z:expr, $src:expr, $hashlog:expr, |$t:ident| $body:expr) => {{
        const { assert!(TABLE <= 1 << 16) };
        let n = $src.len();
        if n <= TAGGED_MAX {
            let $t = &mut $z.tagged(n);
            $body
        } else {
            let $t = &mut $z.plain16($hashlog);
            $body
        }
    }};
}

impl BloscLz {
    /// Allocate the hash tables now (see `CodecCtx::warm_compress`).
    fn alloc_table(&mut self) {
        if self.table.len() != TABLE {
            self.table = vec![0; TABLE];
            self.next = 0;
        }
        if self.table16.len() != TABLE {
            self.table16 = vec![0; TABLE];
        }
    }

    /// A [`Tagged`] table for a pass over `n` bytes (positions below `n`).
    fn tagged(&mut self, n: usize) -> Tagged<'_> {
        self.alloc_table();
        // (Streams are below 2 GiB; a longer one wraps as `as u32` does.)
        let n = u32::try_from(n).unwrap_or(u32::MAX);
        let base = match self.next.checked_add(n) {
            Some(next) => {
                let base = self.next;
                self.next = next;
                base
            }
            None => {
                self.table.fill(0);
                self.next = n;
                0
            }
        };
        let slots: &mut [u32; TABLE] = self.table.as_mut_slice().try_into().unwrap();
        Tagged { slots, base }
    }

    /// A [`Plain`] table for a pass over `n` bytes at `hashlog`: its first
    /// `1 << hashlog` slots (all the pass reads) zeroed.
    fn plain(&mut self, hashlog: u32, n: usize) -> Plain<'_, u32> {
        self.alloc_table();
        let n = u32::try_from(n).unwrap_or(u32::MAX);
        self.next = self.next.max(n);
        let slots: &mut [u32; TABLE] = self.table.as_mut_slice().try_into().unwrap();
        slots[..1 << hashlog].fill(0);
        Plain(slots)
    }

    /// [`Self::plain`] with `u16` slots, for a pass whose positions are
    /// below `1 << 16` (it leaves the `u32` table and its bases alone).
    fn plain16(&mut self, hashlog: u32) -> Plain<'_, u16> {
        self.alloc_table();
        let slots: &mut [u16; TABLE] = self.table16.as_mut_slice().try_into().unwrap();
        slots[..1 << hashlog].fill(0);
        Plain(slots)
    }

    /// The entropy probe: a dry run of the encoder over (a part of) the end
    /// of the block that counts output bytes; `ip / oc` estimates the ratio.
    fn probe_ratio(&mut self, clevel: usize, src: &[u8]) -> f64 {
        with_table!(probe self, src, HASHLOG[clevel], |table| {
            Self::probe_ratio_in(table, clevel, src)
        })
    }

    /// [`Self::probe_ratio`] with its table.
    fn probe_ratio_in<T: Slots>(table: &mut T, clevel: usize, src: &[u8]) -> f64 {
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
            table.set(hash(read_u32(win, p), hashlog), p);
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
        with_table!(probe self, src, HASHLOG_PROBE, |table| {
            Self::probe_ratio_blosc1_in(table, src)
        })
    }

    /// [`Self::probe_ratio_blosc1`] with its table.
    fn probe_ratio_blosc1_in<T: Slots>(table: &mut T, src: &[u8]) -> f64 {
        let n = src.len();
        let maxlen = n / 4;
        let limit = maxlen.min(1 << HASHLOG_PROBE);
        if limit < 13 {
            return 0.0;
        }
        let win = &src[n - maxlen..][..limit];
        let iplimit = limit - 12;
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
            table.set(hash(read_u32(win, p), HASHLOG_PROBE), p);
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
        with_table!(self, src, HASHLOG[clevel], |table| {
            Self::encode_in::<SHIFT, _>(table, clevel, src, dst)
        })
    }

    /// [`Self::encode`] with its table.
    fn encode_in<const SHIFT: usize, T: Slots>(
        table: &mut T,
        clevel: usize,
        src: &[u8],
        dst: &mut [u8],
    ) -> Option<usize> {
        let n = src.len();
        let maxout = dst.len();
        let hashlog = HASHLOG[clevel];
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
            if dist < MAX_DISTANCE && len < 7 {
                // The common token, a short near match, and the marker of
                // the next literal run in one store: its two room checks
                // (2 bytes, then 1) fail exactly when 3 bytes do not fit.
                let t: &mut [u8; 3] = dst.get_mut(op..op + 3)?.try_into().unwrap();
                *t = [
                    ((len << 5) + (dist >> 8)) as u8,
                    (dist & 255) as u8,
                    (MAX_COPY - 1) as u8,
                ];
                run.marker = op + 2;
                op += 3;
            } else {
                if dist < MAX_DISTANCE {
                    need!(1);
                    dst[op] = ((7 << 5) + (dist >> 8)) as u8;
                    op += 1;
                    len = emit_long_len(dst, &mut op, len, maxout)?;
                    need!(2);
                    dst[op] = len as u8;
                    dst[op + 1] = (dist & 255) as u8;
                    op += 2;
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
                need!(1);
                run.marker = op;
                dst[op] = (MAX_COPY - 1) as u8;
                op += 1;
            }
            let x = read_u32(src, p);
            table.set(hash(x, hashlog), p);
            if clevel == 9 {
                table.set(hash(x >> 8, hashlog), p + 1);
            }
            ip = p + 2;
            pending = ip;
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

mod decode;
pub(crate) use decode::decompress;

#[cfg(test)]
mod tests;
