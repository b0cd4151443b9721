//! The x86 shuffle and bitshuffle kernels, generic over the vector width.
//!
//! # Byte shuffle
//!
//! A *tile* is `W = V::BYTES` consecutive elements (16 per lane: lane `l` of
//! every register works on elements `16l..16l+16` of the tile), so each
//! output stream receives `W` contiguous bytes per tile.
//!
//! - typesizes 2, 4, 8 (and 16 for the unshuffle): the tile's `T` rows of 16
//!   bytes per lane are loaded, transposed in registers ([`Simd::shuf`]) and
//!   stored as `T` stream pieces (the inverse for unshuffle). `G` tiles are
//!   done together when registers allow, so that each stream piece is a
//!   whole 64-byte line written by back-to-back stores: the core commits two
//!   stores per cycle only when they hit the same line, and lines written in
//!   halves can be evicted in between (stream strides are often multiples
//!   of 4 KiB, so all streams compete for one L1 set);
//! - any other typesize (16 for the shuffle): columns of 16 bytes. For each
//!   tile and each column start `c` (0, 16, 32, ..., the last one moved back
//!   to `ts - 16` so it overlaps the previous one), the 16 bytes at `c` of
//!   each element form a 16x16 byte matrix per lane, transposed in registers
//!   into 16 stream pieces. For typesizes below 16 the single column (`c =
//!   0`) reaches past the element: only its first `ts` streams are stored;
//!   the unshuffle stores all 16 bytes per element in increasing order, so
//!   the surplus bytes land on the next element and are overwritten by its
//!   own store. The shuffle sweeps the columns over blocks of about 16 KiB
//!   of source, so that at most 16 output streams are open at a time, and
//!   when those streams crowd one L1 set it gathers the pieces of `G` tiles
//!   (64 bytes per stream) in a scratch buffer before writing them out.
//!
//! The element loop covers `0..n` with tiles stepping by `G * W`, phased so
//! that the wide stores of most tiles are aligned (a store straddling two
//! cache lines costs two; see [`align_phase`]), plus overlapping first and
//! last tiles where needed: overlapping rewrites are identical. Buffers too
//! short for a tile group use single tiles, buffers of fewer than `W`
//! elements (and, for typesizes below 16, the few last elements whose
//! 16-byte row would leave the buffer) are done by the scalar code.
//!
//! # Bit shuffle
//!
//! One pass over memory, by *blocks* of `8W` elements (`W` groups of 8),
//! i.e. `W` bytes of each of the `8 * ts` rows. A block is first byte
//! transposed so that, for every byte position `j` and every `k` in 0..8,
//! one register holds byte `j` of elements `8q + k` for the block's `W`
//! groups `q`; eight such registers (`k` = 0..8) then go through an 8x8 bit
//! transpose across registers ([`bitplanes8`], delta swaps), after which
//! register `b` is exactly the block's piece of row `8j + b`.
//!
//! The byte transpose is a byte shuffle of the block seen as `W`
//! super-elements of `8 * ts` bytes (one group of 8 elements each): for
//! typesize 1 it stays in registers (an 8-byte shuffle), otherwise it goes
//! through a scratch buffer in L1: for typesizes up to 31 but 16 the whole
//! block (16-byte columns of the `8 * ts`-byte super-elements), otherwise
//! one 16-byte range of `j` at a time. The forward direction takes blocks
//! of 64 groups (`G` tiles) when the rows are long enough, so every row
//! receives a whole cache line per block, and phases them like the tiles so
//! that the row stores are aligned. The bit unshuffle runs the same steps
//! backwards. Blocks step along the rows with overlapping first and last
//! blocks; buffers of fewer than `8W` elements go to the scalar code.

use super::scalar;
use super::simd::{Simd, bitplanes8, prefetch_lines, sfence};

/// Runs `$body` with `$i` set to each start of the `$w`-wide tiles covering
/// `0..$n` (`$n >= $w`): `0, w, 2w, ...` and, when `w` does not divide `n`,
/// `n - w` (overlapping the tile before). With a `$phase` (`< w`) the
/// starts are `0, phase, phase + w, phase + 2w, ...` and `n - w`: the first
/// tile overlaps the second, so that all the others start at `phase` modulo
/// `w` (see [`align_phase`]). A macro rather than an iterator: the loop it
/// expands to is an add, a compare and a `cmov` off the loop-carried chain,
/// which matters for kernels whose whole body is a handful of instructions.
macro_rules! for_tiles {
    ($i:ident in $n:expr, $w:expr => $body:block) => {
        for_tiles!($i in $n, $w, 0 => $body)
    };
    ($i:ident in $n:expr, $w:expr, $phase:expr => $body:block) => {{
        let (n, w, phase): (usize, usize, usize) = ($n, $w, $phase);
        assert!(n >= w && phase < w);
        let last = n - w;
        let mut $i = 0;
        // The start after the current one, before clamping to `last`. It
        // steps on its own so that the loop-carried chain is one add: the
        // clamp and the exit test hang off it (a chain through the clamped
        // start costs about four cycles per tile, which is most of the time
        // of the 2-byte unshuffle's tile).
        let mut next = if phase == 0 { w } else { phase };
        loop {
            $body
            if $i >= last {
                break;
            }
            $i = next.min(last);
            next += w;
        }
    }};
}
pub(super) use for_tiles;

/// The smallest `p < limit` such that `addr + p * step` is a multiple of
/// `align` (a power of two), or 0 if there is none.
///
/// The kernels start their tiles at such a `p` (see [`for_tiles!`]) so that
/// their wide stores do not straddle cache lines: a store that splits two
/// lines costs about as much as two, and with 32-byte stores to a buffer
/// that is only 16-byte aligned every other store would split.
#[inline(always)]
pub(super) fn align_phase(addr: usize, step: usize, align: usize, limit: usize) -> usize {
    (0..limit)
        .find(|p| (addr + p * step).is_multiple_of(align))
        .unwrap_or(0)
}

/// Byte shuffle of `n` elements of `ts >= 2` bytes (`s.len() == d.len() ==
/// n * ts`) with the plain choice of kernel: single tiles for 2, 4, 8,
/// columns for the others. For inputs too short for the tuned kernels.
///
/// # Safety
/// The CPU supports `V`'s instruction set.
#[inline(always)]
pub(super) unsafe fn shuffle_any<V: Simd>(ts: usize, s: &[u8], d: &mut [u8], n: usize) {
    // SAFETY: the caller guarantees the ISA; the kernels check the lengths.
    unsafe {
        match ts {
            2 => shuffle_pow2::<V, 2, 1>(s, d, n),
            4 => shuffle_pow2::<V, 4, 1>(s, d, n),
            8 => shuffle_pow2::<V, 8, 1>(s, d, n),
            _ => shuffle_cols::<V>(ts, s, d, n),
        }
    }
}

/// Inverse of [`shuffle_any`].
///
/// # Safety
/// The CPU supports `V`'s instruction set.
#[inline(always)]
pub(super) unsafe fn unshuffle_any<V: Simd>(ts: usize, s: &[u8], d: &mut [u8], n: usize) {
    // SAFETY: the caller guarantees the ISA; the kernels check the lengths.
    unsafe {
        match ts {
            2 => unshuffle_pow2::<V, 2, 1>(s, d, n),
            4 => unshuffle_pow2::<V, 4, 1>(s, d, n),
            8 => unshuffle_pow2::<V, 8, 1>(s, d, n),
            16 => unshuffle_pow2::<V, 16, 1>(s, d, n),
            _ => unshuffle_cols::<V>(ts, s, d, n),
        }
    }
}

/// Shuffle of `n` elements of `T` bytes (`T` in 2, 4, 8, 16; `s.len() ==
/// d.len() == n * T`), `G` tiles of `W` elements at a time.
///
/// # Safety
/// The CPU supports `V`'s instruction set.
// Index loops over the register arrays: with constant bounds they unroll
// into constant indices, which keeps the arrays in registers.
#[allow(clippy::needless_range_loop)]
#[inline(always)]
pub(super) unsafe fn shuffle_pow2<V: Simd, const T: usize, const G: usize>(
    s: &[u8],
    d: &mut [u8],
    n: usize,
) {
    const { assert!(matches!(T, 2 | 4 | 8 | 16)) };
    assert!(s.len() == n * T && d.len() == n * T);
    let w = V::BYTES;
    if n < G * w {
        if G > 1 {
            // SAFETY: forwarded caller contract.
            return unsafe { shuffle_pow2::<V, T, 1>(s, d, n) };
        }
        return scalar::shuffle_range(T, s, d, n, 0, n);
    }
    let (sp, dp) = (s.as_ptr(), d.as_mut_ptr());
    // Stream pieces aligned to their size (a cache line for `G * W` = 64).
    let phase = align_phase(dp as usize, 1, G * w, G * w);
    for_tiles!(i in n, G * w, phase => {
        // SAFETY: ISA from the caller. `i + G * w <= n`: row `k` of lane `l`
        // of tile `t < G` reads the 16 bytes at `(i + t * w + 16l) * T + 16k`,
        // which end at most at `(i + G * w) * T`; stream `j < T` is written
        // at `j * n + i .. + G * w`.
        unsafe {
            let mut r = [[V::zero(); T]; G];
            for t in 0..G {
                for k in 0..T {
                    r[t][k] = V::load_lanes(sp.add((i + t * w) * T + 16 * k), 16 * T);
                }
                V::shuf(&mut r[t]);
            }
            for j in 0..T {
                for t in 0..G {
                    V::store(dp.add(j * n + i + t * w), r[t][j]);
                }
            }
        }
    });
}

/// Unshuffle of `n` elements of `T` bytes (`T` in 2, 4, 8, 16; `s.len() ==
/// d.len() == n * T`), `G` tiles of `W` elements at a time.
///
/// # Safety
/// The CPU supports `V`'s instruction set.
// Index loops over the register arrays: with constant bounds they unroll
// into constant indices, which keeps the arrays in registers.
#[allow(clippy::needless_range_loop)]
#[inline(always)]
pub(super) unsafe fn unshuffle_pow2<V: Simd, const T: usize, const G: usize>(
    s: &[u8],
    d: &mut [u8],
    n: usize,
) {
    const { assert!(matches!(T, 2 | 4 | 8 | 16)) };
    assert!(s.len() == n * T && d.len() == n * T);
    let w = V::BYTES;
    if n < G * w {
        if G > 1 {
            // SAFETY: forwarded caller contract.
            return unsafe { unshuffle_pow2::<V, T, 1>(s, d, n) };
        }
        return scalar::unshuffle_range(T, s, d, n, 0, n);
    }
    let (sp, dp) = (s.as_ptr(), d.as_mut_ptr());
    // Output stores (pairs of lanes: 32 bytes with AVX2) aligned if possible.
    let phase = align_phase(dp as usize, T, 32, G * w);
    for_tiles!(i in n, G * w, phase => {
        // SAFETY: ISA from the caller. `i + G * w <= n`: stream `j < T` is
        // read at `j * n + i .. + G * w`; row `k` of lane `l` of tile `t < G`
        // is written to the 16 bytes at `(i + t * w + 16l) * T + 16k`, which
        // end at most at `(i + G * w) * T`.
        unsafe {
            let mut r = [[V::zero(); T]; G];
            for j in 0..T {
                for t in 0..G {
                    r[t][j] = V::load(sp.add(j * n + i + t * w));
                }
            }
            for t in 0..G {
                V::unshuf(&mut r[t]);
                for k in (0..T).step_by(2) {
                    let p = dp.add((i + t * w) * T + 16 * k);
                    V::store_lane_pairs(p, 16 * T, r[t][k], r[t][k + 1]);
                }
            }
        }
    });
}

/// Source bytes swept per column pass in the column kernels.
const BLOCK_BYTES: usize = 16384;

/// Number of leading elements whose 16 bytes from the element start stay
/// inside a buffer of `len` bytes (all `n` for typesizes of 16 and more).
#[inline(always)]
fn rows_reachable(ts: usize, n: usize, len: usize) -> usize {
    if ts >= 16 {
        n
    } else if len >= 16 {
        ((len - 16) / ts + 1).min(n)
    } else {
        0
    }
}

/// Shuffle of `n` elements of any size `ts >= 3` by 16-byte columns.
///
/// # Safety
/// The CPU supports `V`'s instruction set.
#[inline(always)]
pub(super) unsafe fn shuffle_cols<V: Simd>(ts: usize, s: &[u8], d: &mut [u8], n: usize) {
    assert!(ts >= 3 && s.len() == n * ts && d.len() == n * ts);
    let reach = rows_reachable(ts, n, s.len());
    let crowded = crowded_streams(n, ts.min(16));
    // SAFETY: forwarded caller contract (the ISA).
    let done = unsafe {
        if ts == 16 && !crowded {
            // One column: the plain tile loop, without blocks or scratch.
            shuffle_pow2::<V, 16, 1>(s, d, n);
            n
        } else if !crowded {
            shuffle_cols_g::<V, 1>(ts, s, d, n, reach)
        } else if V::LANES == 2 {
            shuffle_cols_g::<V, 2>(ts, s, d, n, reach)
        } else {
            shuffle_cols_g::<V, 4>(ts, s, d, n, reach)
        }
    };
    scalar::shuffle_range(ts, s, d, n, done, n);
}

/// Whether `streams` output streams `n` bytes apart crowd one set of the
/// L1 data cache (64 sets of 64-byte lines, 12 ways on current cores): more
/// than 8 of them on the same set means lines get evicted before both of
/// their halves are written, which is when the column kernel's scratch
/// buffer pays for its extra copy.
#[inline(always)]
fn crowded_streams(n: usize, streams: usize) -> bool {
    let mut per_set = [0u8; 64];
    for j in 0..streams {
        per_set[(j * n / 64) % 64] += 1;
    }
    per_set.iter().any(|&c| c > 8)
}

/// The vector part of [`shuffle_cols`]: elements `0..reach` (`reach` from
/// [`rows_reachable`]), `G` tiles at a time when there are enough of them;
/// returns how many elements it did (`reach` or 0).
///
/// With `G > 1` the tiles' stream pieces go through a scratch buffer first,
/// so that each stream then receives `G * W` = 64 contiguous bytes at once:
/// with 16 streams whose stride is a multiple of 4 KiB, writing 32-byte
/// halves of lines directly makes the L1 cache evict lines between their
/// two halves (see [`crowded_streams`]).
///
/// # Safety
/// The CPU supports `V`'s instruction set.
#[inline(always)]
unsafe fn shuffle_cols_g<V: Simd, const G: usize>(
    ts: usize,
    s: &[u8],
    d: &mut [u8],
    n: usize,
    reach: usize,
) -> usize {
    let w = V::BYTES;
    if reach < G * w {
        if G > 1 {
            // SAFETY: forwarded caller contract.
            return unsafe { shuffle_cols_g::<V, 1>(ts, s, d, n, reach) };
        }
        return 0;
    }
    let rows = ts.min(16);
    let mut scratch = Scratch([0; 4096]);
    assert!(16 * G * w <= scratch.0.len());
    let xp = scratch.0.as_mut_ptr();
    let (sp, dp) = (s.as_ptr(), d.as_mut_ptr());
    // Tiles are taken in blocks of about 16 KiB of source, and each block is
    // swept once per column: at most 16 output streams are written at a time
    // while the block's rows stay in cache.
    let gw = G * w;
    // The tile starts of `for_tiles!(i in reach, gw, phase)`, numbered:
    // `0`, then `phase + (t - 1) * gw`, the last one capped at `reach - gw`.
    let phase = align_phase(dp as usize, 1, gw, gw);
    let start = |t: usize| {
        match (t, phase) {
            (_, 0) => t * gw,
            (0, _) => 0,
            _ => phase + (t - 1) * gw,
        }
        .min(reach - gw)
    };
    let tiles = usize::from(phase > 0) + (reach - phase).div_ceil(gw);
    let block = (BLOCK_BYTES / (ts * gw)).max(1);
    for b0 in (0..tiles).step_by(block) {
        for_tiles!(c in ts.max(16), 16 => {
            for t0 in b0..tiles.min(b0 + block) {
                let i = start(t0);
                // SAFETY: ISA from the caller. Element `e = i + t * w + 16l +
                // k < reach` is read at `e * ts + c .. + 16`: inside `s`
                // because `c + 16 <= ts` (typesize >= 16) or by the definition
                // of `reach`. Scratch row `jj < 16` is written at
                // `jj * gw .. + gw <= 16 * gw <= 4096`. Streams `c + jj < ts`
                // (`jj < rows`) are written at `(c + jj) * n + i .. + gw`,
                // with `i + gw <= reach <= n`.
                unsafe {
                    for t in 0..G {
                        let mut r = [V::zero(); 16];
                        for (k, v) in r.iter_mut().enumerate() {
                            *v = V::load_lanes(sp.add((i + t * w + k) * ts + c), 16 * ts);
                        }
                        V::shuf(&mut r);
                        if G == 1 {
                            // A full loop with a test rather than a loop to
                            // `rows`: it unrolls, keeping `r` in registers.
                            for (jj, v) in r.iter().enumerate() {
                                if jj < rows {
                                    V::store(dp.add((c + jj) * n + i), *v);
                                }
                            }
                        } else {
                            for (jj, v) in r.iter().enumerate() {
                                V::store(xp.add(jj * gw + t * w), *v);
                            }
                        }
                    }
                    if G > 1 {
                        for jj in 0..16 {
                            if jj >= rows {
                                break;
                            }
                            for t in 0..G {
                                let v = V::load(xp.add(jj * gw + t * w));
                                V::store(dp.add((c + jj) * n + i + t * w), v);
                            }
                        }
                    }
                }
            }
        });
    }
    reach
}

/// Unshuffle of `n` elements of any size `ts >= 3` by 16-byte columns.
///
/// # Safety
/// The CPU supports `V`'s instruction set.
#[inline(always)]
pub(super) unsafe fn unshuffle_cols<V: Simd>(ts: usize, s: &[u8], d: &mut [u8], n: usize) {
    assert!(ts >= 3 && s.len() == n * ts && d.len() == n * ts);
    let w = V::BYTES;
    let reach = rows_reachable(ts, n, d.len());
    let mut done = 0;
    if reach >= w {
        let rows = ts.min(16);
        let (sp, dp) = (s.as_ptr(), d.as_mut_ptr());
        for_tiles!(i in reach, w => {
            for_tiles!(c in ts.max(16), 16 => {
                // SAFETY: ISA from the caller. Streams `c + jj < ts` are read
                // at `(c + jj) * n + i .. + w`, with `i + w <= n`. Element
                // `e = i + 16l + k < reach` is written at `e * ts + c .. + 16`:
                // inside `d` because `c + 16 <= ts` or by the definition of
                // `reach`. With `ts < 16` the 16 - ts surplus bytes go to the
                // next element, stored after this one (lanes in order, rows
                // in order, tiles in order); those past the last tile go to
                // elements `>= reach`, which the scalar code rewrites below.
                unsafe {
                    let mut r = [V::zero(); 16];
                    // A full loop with a test (it unrolls, see above).
                    for (jj, v) in r.iter_mut().enumerate() {
                        if jj < rows {
                            *v = V::load(sp.add((c + jj) * n + i));
                        }
                    }
                    V::unshuf(&mut r);
                    for l in 0..V::LANES {
                        for (k, v) in r.iter().enumerate() {
                            V::store_lane(dp.add((i + 16 * l + k) * ts + c), l, *v);
                        }
                    }
                }
            });
        });
        done = reach;
    }
    scalar::unshuffle_range(ts, s, d, n, done, n);
}

/// L1-sized scratch for the bit shuffle blocks, aligned for any vector.
#[repr(C, align(64))]
struct Scratch([u8; 4096]);

/// `N` bytes of scratch for blocks of 64 or more groups ([`BLOCK_SCRATCH`],
/// or [`PAGE_SCRATCH`] for rows a page apart), aligned for any vector.
#[repr(C, align(64))]
struct BigScratch<const N: usize>([u8; N]);

/// The scratch of the bit shuffles' blocks of 64 groups: twice [`Scratch`].
const BLOCK_SCRATCH: usize = 8192;
/// The stage of 8 rows' pieces of a block of 64 groups ([`RowStage`]).
const BLOCK_STAGE: usize = 1024;
/// The scratch of [`bitshuffle_small`]'s blocks of 256 groups for 4- to
/// 8-byte items in rows a page apart: `8 * 8 * 256` bytes.
const PAGE_SCRATCH: usize = 16384;
/// Their stage: 8 rows of 256 bytes.
const PAGE_STAGE: usize = 2048;

/// Bit shuffle of the `8 * rowlen` elements of `s` into `d` (the rows of
/// `generic::bitshuffle`, without its trailing bytes), for any typesize.
///
/// # Safety
/// The CPU supports `V`'s instruction set.
#[inline(always)]
pub(super) unsafe fn bitshuffle<V: Simd>(ts: usize, s: &[u8], d: &mut [u8], rowlen: usize) {
    assert!(s.len() == 8 * rowlen * ts && d.len() == 8 * rowlen * ts);
    if rowlen < V::BYTES {
        return scalar::bitshuffle_range(ts, s, d, rowlen, 0, rowlen);
    }
    // SAFETY: the caller guarantees the ISA; the lengths are checked above
    // and `rowlen >= V::BYTES`, `rowlen >= 64` for the `G * W` = 64 blocks,
    // and `rowlen >= 8 * V::BYTES` for the `8 * V::BYTES` = 256-group
    // blocks on 32-byte vectors (`page_blocks` requires it); `8 * 8 * 256`
    // bytes fit `PAGE_SCRATCH` and `8 * 256` `PAGE_STAGE`.
    unsafe {
        match ts {
            1 => bitshuffle_1::<V>(s, d, rowlen),
            2..=15 if rowlen < 64 => {
                bitshuffle_small::<V, 1, BLOCK_SCRATCH, BLOCK_STAGE>(ts, s, d, rowlen)
            }
            _ if page_blocks::<V>(ts, rowlen) => {
                bitshuffle_small::<V, 8, PAGE_SCRATCH, PAGE_STAGE>(ts, s, d, rowlen)
            }
            2..=15 if V::LANES == 2 => {
                bitshuffle_small::<V, 2, BLOCK_SCRATCH, BLOCK_STAGE>(ts, s, d, rowlen)
            }
            2..=15 => bitshuffle_small::<V, 4, BLOCK_SCRATCH, BLOCK_STAGE>(ts, s, d, rowlen),
            // 64-group blocks would not fit the scratch.
            17..=31 => bitshuffle_small::<V, 1, BLOCK_SCRATCH, BLOCK_STAGE>(ts, s, d, rowlen),
            _ if rowlen < 64 => bitshuffle_large::<V, 1>(ts, s, d, rowlen),
            _ if V::LANES == 2 => bitshuffle_large::<V, 2>(ts, s, d, rowlen),
            _ => bitshuffle_large::<V, 4>(ts, s, d, rowlen),
        }
    }
}

/// Whether a bit shuffle (either direction) of `ts`-byte items in rows of
/// `rowlen` bytes takes blocks of 256 bytes a row (`G = 8`, with
/// `PAGE_SCRATCH` and `PAGE_STAGE`): 32-byte vectors, 4- to 8-byte items,
/// rows of 256 bytes at least (`8 * V::BYTES`, the block's width, which the
/// `G = 8` calls' safety requires) that share L1 sets
/// ([`rows_share_sets`]). One test for both directions, so that their
/// dispatch and that requirement cannot drift apart.
#[inline(always)]
fn page_blocks<V: Simd>(ts: usize, rowlen: usize) -> bool {
    V::LANES == 2 && (4..=8).contains(&ts) && rowlen >= 8 * V::BYTES && rows_share_sets(ts, rowlen)
}

/// Whether 32 or more of the `8 * ts` rows of a bit shuffle of 4- to 8-byte
/// items start at the same offset in a 4 KiB page ([`ROWS_A_PAGE_APART`]),
/// so that the lines a block writes to them fall in one L1 set: rows a
/// multiple of 4 KiB apart for typesizes 4 to 8, and of 2 KiB for typesize
/// 8 (two page offsets, 32 rows each). With 64 bytes per row a block, 256 KiB of 8-byte items
/// (rows of 4 KiB) took 24.3 us against C-Blosc2 3.3.5's 15.8 (1.45 us for
/// 32 KiB, C 2.0), and 1 MiB 99.5 against 74.0. Blocks of 128 bytes per row
/// (`G = 4` on 32-byte vectors) took 17.3 and 61.2 us (perf/README.md,
/// session 25), blocks of 256 bytes (`G = 8`, a 16 KiB scratch) 12.3 and
/// 54.9 (session 26; `G = 16`: 14.6 and 58.2); 128 KiB of 8-byte items
/// (rows of 2 KiB) 8.3 -> 6.9 us. Fewer rows per offset keep `G = 2`,
/// faster there (a 32 KiB block of 8-byte items, 16 rows per offset: 1.41
/// against 2.33 us with `G = 8`; 5- to 7-byte items in rows of 2 KiB, 20
/// to 28 rows per offset: 4-16 % faster with `G = 2`).
#[inline(always)]
fn rows_share_sets(ts: usize, rowlen: usize) -> bool {
    // For 4 to 8 rows per byte of an item: 32 or more rows start at the
    // same offsets when they are a page apart (one offset), or half a page
    // for 64 rows (two offsets).
    rowlen.is_multiple_of(ROWS_A_PAGE_APART)
        || (ts == 8 && rowlen.is_multiple_of(ROWS_A_PAGE_APART / 2))
}

/// The page of [`rows_share_sets`]; under Miri (a thousand times slower)
/// small enough for its tests to reach, and no shorter than a block's 256
/// bytes.
const ROWS_A_PAGE_APART: usize = if cfg!(miri) { 256 } else { 4096 };

/// Inverse of [`bitshuffle`].
///
/// # Safety
/// The CPU supports `V`'s instruction set.
#[inline(always)]
pub(super) unsafe fn bitunshuffle<V: Simd>(ts: usize, s: &[u8], d: &mut [u8], rowlen: usize) {
    assert!(s.len() == 8 * rowlen * ts && d.len() == 8 * rowlen * ts);
    if rowlen < V::BYTES {
        return scalar::bitunshuffle_range(ts, s, d, rowlen, 0, rowlen);
    }
    // SAFETY: the caller guarantees the ISA; the lengths are checked above
    // and `rowlen >= V::BYTES`; `rowlen >= 8 * V::BYTES` for the 256-group
    // blocks (`page_blocks` requires it), whose `8 * 8 * 256` bytes fit
    // `PAGE_SCRATCH`.
    unsafe {
        match ts {
            1 => bitunshuffle_1::<V>(s, d, rowlen),
            // Four lines per row where the rows share L1 sets.
            _ if page_blocks::<V>(ts, rowlen) => {
                bitunshuffle_small::<V, 8, PAGE_SCRATCH>(ts, s, d, rowlen)
            }
            // Whole 64-byte lines per row (8 * 15 * 64 <= 8192 scratch).
            2..=15 if rowlen >= 64 && V::LANES == 2 => {
                bitunshuffle_small::<V, 2, BLOCK_SCRATCH>(ts, s, d, rowlen)
            }
            2..=15 if rowlen >= 64 => bitunshuffle_small::<V, 4, BLOCK_SCRATCH>(ts, s, d, rowlen),
            2..=15 | 17..=31 => bitunshuffle_small::<V, 1, BLOCK_SCRATCH>(ts, s, d, rowlen),
            _ => bitunshuffle_large::<V>(ts, s, d, rowlen),
        }
    }
}

/// Bit shuffle of single bytes: the block's `8W` bytes are an 8-byte
/// shuffle of `W` groups (register `k` = byte `k` of every group), then
/// [`bitplanes8`] turns register `b` into row `b`.
///
/// # Safety
/// The CPU supports `V`'s instruction set; `s.len() == d.len() == 8 *
/// rowlen` and `rowlen >= V::BYTES`.
#[inline(always)]
unsafe fn bitshuffle_1<V: Simd>(s: &[u8], d: &mut [u8], rowlen: usize) {
    debug_assert!(s.len() == 8 * rowlen && d.len() == 8 * rowlen);
    let w = V::BYTES;
    let (sp, dp) = (s.as_ptr(), d.as_mut_ptr());
    // Row stores aligned when the rows allow it.
    let phase = align_phase(dp as usize, 1, w, w);
    for_tiles!(q0 in rowlen, w, phase => {
        // SAFETY: ISA from the caller. `q0 + w <= rowlen`: the loads cover
        // `8 * q0 .. 8 * (q0 + w)` (row `k` of lane `l` at `8 * q0 + 128l +
        // 16k`), the stores `b * rowlen + q0 .. + w` for `b < 8`.
        unsafe {
            let mut r = [V::zero(); 8];
            for (k, v) in r.iter_mut().enumerate() {
                *v = V::load_lanes(sp.add(8 * q0 + 16 * k), 128);
            }
            V::shuf(&mut r);
            bitplanes8(&mut r);
            for (b, v) in r.iter().enumerate() {
                V::store(dp.add(b * rowlen + q0), *v);
            }
        }
    });
}

/// Inverse of [`bitshuffle_1`].
///
/// # Safety
/// As for [`bitshuffle_1`].
#[inline(always)]
unsafe fn bitunshuffle_1<V: Simd>(s: &[u8], d: &mut [u8], rowlen: usize) {
    debug_assert!(s.len() == 8 * rowlen && d.len() == 8 * rowlen);
    let w = V::BYTES;
    let (sp, dp) = (s.as_ptr(), d.as_mut_ptr());
    for_tiles!(q0 in rowlen, w => {
        // SAFETY: ISA from the caller. `q0 + w <= rowlen`: the loads cover
        // `b * rowlen + q0 .. + w` for `b < 8`, the stores `8 * q0 .. 8 *
        // (q0 + w)` (row `k` of lane `l` at `8 * q0 + 128l + 16k`).
        unsafe {
            let mut r = [V::zero(); 8];
            for (b, v) in r.iter_mut().enumerate() {
                *v = V::load(sp.add(b * rowlen + q0));
            }
            bitplanes8(&mut r);
            V::unshuf(&mut r);
            for k in (0..8).step_by(2) {
                V::store_lane_pairs(dp.add(8 * q0 + 16 * k), 128, r[k], r[k + 1]);
            }
        }
    });
}

/// Bit shuffle for typesizes 2..=31 but 16, with `S` bytes of scratch and a
/// stage of `T`. Per block of `G` times `W` groups:
/// the block's super-elements of `se = 8 * ts` bytes are byte shuffled into
/// the scratch (stream `c` at `c * G * W`, by 16-byte columns, the last one
/// overlapping), then for each byte position `j` the streams `k * ts + j`
/// (`k` = 0..8) are bit transposed into rows `8j..8j+8`. With `G * W` = 64
/// each row receives a whole cache line per block, in two nearby stores.
///
/// # Safety
/// The CPU supports `V`'s instruction set; `2 <= ts <= 31`, `s.len() ==
/// d.len() == 8 * rowlen * ts` and `rowlen >= G * V::BYTES`.
#[inline(always)]
unsafe fn bitshuffle_small<V: Simd, const G: usize, const S: usize, const T: usize>(
    ts: usize,
    s: &[u8],
    d: &mut [u8],
    rowlen: usize,
) {
    debug_assert!((2..=31).contains(&ts) && ts != 16);
    debug_assert!(s.len() == 8 * rowlen * ts && d.len() == 8 * rowlen * ts);
    let w = V::BYTES;
    let gw = G * w;
    let se = 8 * ts;
    let mut scratch = BigScratch([0; S]);
    assert!(se * gw <= scratch.0.len());
    let xp = scratch.0.as_mut_ptr();
    let (sp, dp) = (s.as_ptr(), d.as_mut_ptr());
    // Row stores aligned when the rows allow it.
    let phase = align_phase(dp as usize, 1, gw, gw);
    let stream = streams_rows(ts, d.len(), rowlen, w);
    let mut stage = RowStage([0; T]);
    assert!(8 * gw <= stage.0.len());
    let sg = stage.0.as_mut_ptr();
    for_tiles!(q0 in rowlen, gw, phase => {
        let nt = stream && (dp as usize + q0).is_multiple_of(w);
        for t in 0..G {
            let block = (q0 + t * w) * se;
            for_tiles!(c in se, 16 => {
                // SAFETY: ISA from the caller. Super-element `q0 + t * w + 16l
                // + k` (`< q0 + gw <= rowlen`) is read at its bytes `c .. c +
                // 16 <= se`, inside `s`; scratch stream `c + jj < se` is
                // written at `(c + jj) * gw + t * w .. + w <= se * gw <= S`.
                unsafe {
                    let mut r = [V::zero(); 16];
                    for (k, v) in r.iter_mut().enumerate() {
                        *v = V::load_lanes(sp.add(block + k * se + c), 16 * se);
                    }
                    V::shuf(&mut r);
                    for (jj, v) in r.iter().enumerate() {
                        V::store(xp.add((c + jj) * gw + t * w), *v);
                    }
                }
            });
        }
        for j in 0..ts {
            for t in 0..G {
                // SAFETY: ISA from the caller. Scratch streams `k * ts + j <
                // se` are read (all written just above); rows `8j + b < 8 *
                // ts` are written at `(8j + b) * rowlen + q0 + t * w .. + w`,
                // and `q0 + gw <= rowlen`.
                unsafe {
                    let mut r = [V::zero(); 8];
                    for (k, v) in r.iter_mut().enumerate() {
                        *v = V::load(xp.add((k * ts + j) * gw + t * w));
                    }
                    bitplanes8(&mut r);
                    for (b, v) in r.iter().enumerate() {
                        V::store(sg.add(b * gw + t * w), *v);
                    }
                }
            }
            // SAFETY: ISA from the caller; the stage holds the 8 rows' `gw`
            // bytes (all written just above); rows `8j..8j + 8 <= 8 * ts`
            // are written at `q0 .. q0 + gw <= rowlen`, aligned when `nt`.
            unsafe { write_rows::<V, G>(sg, dp.add(8 * j * rowlen + q0), rowlen, nt) };
        }
    });
    if stream {
        // SAFETY: SSE2 is part of every x86-64 CPU.
        unsafe { sfence() };
    }
}

/// Whether the row stores of a bit shuffle go around the caches
/// ([`Simd::store_stream`]): only for typesizes of 5 and more, whose 40 or
/// more output rows are more streams than the L2 prefetcher tracks (32),
/// only for outputs of more than 1 MiB, which would leave the L2 before they
/// are read anyway, and only when every row keeps row 0's alignment. A
/// chunk's block of exactly 1 MiB (C-Blosc 1.x's largest) stays cached: the
/// codec reads it right after, and streamed it compressed 0.64x as fast.
///
/// With ordinary stores the 64 rows of typesize 8 at 8 MiB (128 KiB apart,
/// all in one L2 set) ran at 1.0 or 2.6 GB/s from run to run; streamed,
/// they run at 3.3-4.1 GB/s. Typesizes 2 and 4 are faster cached.
fn streams_rows(ts: usize, len: usize, rowlen: usize, w: usize) -> bool {
    ts >= 5 && len >= STREAM_MIN && rowlen.is_multiple_of(w)
}

/// The smallest output that [`streams_rows`]; under Miri (a thousand times
/// slower) small enough for its tests to reach the streaming stores.
const STREAM_MIN: usize = if cfg!(miri) { 1 << 10 } else { (1 << 20) + 1 };

/// The staging of 8 rows' pieces of one block of `G * W` groups (`N`
/// bytes: [`BLOCK_STAGE`] or [`PAGE_STAGE`]).
#[repr(C, align(64))]
struct RowStage<const N: usize>([u8; N]);

/// Writes 8 rows of `G * V::BYTES` bytes from the stage `sg` (row `b` at
/// `b * G * V::BYTES`) to `dp + b * rowlen`, each row as consecutive
/// stores, so that every output line is complete before the next row's
/// (non-temporal stores when `nt`: then partial lines would be flushed
/// one piece at a time).
///
/// # Safety
/// The CPU supports `V`'s instruction set; `sg` holds `8 * G * V::BYTES`
/// readable bytes; each `dp + b * rowlen .. + G * V::BYTES` (`b < 8`) is
/// writable, and `V::BYTES`-aligned when `nt`.
#[inline(always)]
unsafe fn write_rows<V: Simd, const G: usize>(sg: *const u8, dp: *mut u8, rowlen: usize, nt: bool) {
    let (w, gw) = (V::BYTES, G * V::BYTES);
    for b in 0..8 {
        for t in 0..G {
            // SAFETY: as the caller guarantees.
            unsafe {
                let v = V::load(sg.add(b * gw + t * w));
                let p = dp.add(b * rowlen + t * w);
                if nt {
                    V::store_stream(p, v);
                } else {
                    V::store(p, v);
                }
            }
        }
    }
}

/// Inverse of [`bitshuffle_small`], with `S` bytes of scratch: per step,
/// `G` tiles of `W` groups, so that each of the `8 * ts` input rows is read
/// a whole cache line at a time when `G * W` = 64 (with one tile per step,
/// rows far apart, as in a 1 MiB block, lost their line between its two
/// halves), or four lines when the rows share L1 sets
/// ([`rows_share_sets`]; `blosc2_bitunshuffle` of 256 KiB of 8-byte items
/// 16.8 -> 10.8 us, C-Blosc2 3.3.5 22.9).
///
/// # Safety
/// The CPU supports `V`'s instruction set; `2 <= ts <= 31`, `s.len() ==
/// d.len() == 8 * rowlen * ts`, `rowlen >= G * V::BYTES` and `8 * ts * G *
/// V::BYTES <= S`.
#[inline(always)]
unsafe fn bitunshuffle_small<V: Simd, const G: usize, const S: usize>(
    ts: usize,
    s: &[u8],
    d: &mut [u8],
    rowlen: usize,
) {
    debug_assert!((2..=31).contains(&ts) && ts != 16);
    debug_assert!(s.len() == 8 * rowlen * ts && d.len() == 8 * rowlen * ts);
    let w = V::BYTES;
    let gw = G * w;
    let se = 8 * ts;
    let mut scratch = BigScratch([0; S]);
    assert!(se * gw <= scratch.0.len());
    let xp = scratch.0.as_mut_ptr();
    let (sp, dp) = (s.as_ptr(), d.as_mut_ptr());
    for_tiles!(q0 in rowlen, gw => {
        for j in 0..ts {
            for t in 0..G {
                // SAFETY: ISA from the caller. Rows `8j + b < 8 * ts` are
                // read at `(8j + b) * rowlen + q0 + t * w .. + w`, and `q0 +
                // gw <= rowlen`; scratch streams `k * ts + j < se` are
                // written at `.. * gw + t * w .. + w`, `se * gw <= S`.
                unsafe {
                    let mut r = [V::zero(); 8];
                    for (b, v) in r.iter_mut().enumerate() {
                        *v = V::load(sp.add((8 * j + b) * rowlen + q0 + t * w));
                    }
                    bitplanes8(&mut r);
                    for (k, v) in r.iter().enumerate() {
                        V::store(xp.add((k * ts + j) * gw + t * w), *v);
                    }
                }
            }
        }
        for t in 0..G {
            let block = (q0 + t * w) * se;
            // The stores below fill each output line in 16-byte pieces, a
            // line's four pieces in turn over the tile's `w` lines: lines
            // not in the caches are asked for four tiles ahead
            // (`prefetch_lines`; 64 MiB decoded in 4 MiB chunks of 8-byte
            // items, 16 KiB blocks: 3.0-3.3 -> 3.4-3.7 GB/s).
            let ahead = block + 4 * w * se;
            // SAFETY: SSE, part of the ISA the caller guarantees.
            unsafe { prefetch_lines(dp, ahead, d.len().min(ahead + w * se)) };
            for_tiles!(c in se, 16 => {
                // SAFETY: ISA from the caller. Scratch streams `c + jj < se`
                // are read at `.. * gw + t * w` (all written above);
                // super-element `q0 + t * w + 16l + k < rowlen` is written at
                // its bytes `c .. c + 16 <= se`, inside `d`.
                unsafe {
                    let mut r = [V::zero(); 16];
                    for (jj, v) in r.iter_mut().enumerate() {
                        *v = V::load(xp.add((c + jj) * gw + t * w));
                    }
                    V::unshuf(&mut r);
                    for (k, v) in r.iter().enumerate() {
                        V::store_lanes(dp.add(block + k * se + c), 16 * se, *v);
                    }
                }
            });
        }
    });
}

/// Bit shuffle for typesize 16 and typesizes of 32 and more. Per block of `G` times `W`
/// groups and per 16-byte range `j0..j0+16` of byte positions (the last
/// range overlapping): for each `k` in 0..8, bytes `j0..j0+16` of elements
/// `8q + k` are transposed into scratch streams `jj * 8 + k`; then each `jj`
/// gives rows `8(j0 + jj)..+8` through [`bitplanes8`].
///
/// # Safety
/// The CPU supports `V`'s instruction set; `ts >= 16`, `s.len() == d.len()
/// == 8 * rowlen * ts` and `rowlen >= G * V::BYTES`.
#[inline(always)]
unsafe fn bitshuffle_large<V: Simd, const G: usize>(
    ts: usize,
    s: &[u8],
    d: &mut [u8],
    rowlen: usize,
) {
    debug_assert!(ts >= 16);
    debug_assert!(s.len() == 8 * rowlen * ts && d.len() == 8 * rowlen * ts);
    let w = V::BYTES;
    let gw = G * w;
    let se = 8 * ts;
    let mut scratch = BigScratch([0; BLOCK_SCRATCH]);
    assert!(128 * gw <= scratch.0.len());
    let xp = scratch.0.as_mut_ptr();
    let (sp, dp) = (s.as_ptr(), d.as_mut_ptr());
    // Row stores aligned when the rows allow it.
    let phase = align_phase(dp as usize, 1, gw, gw);
    let stream = streams_rows(ts, d.len(), rowlen, w);
    let mut stage = RowStage([0; BLOCK_STAGE]);
    assert!(8 * gw <= stage.0.len());
    let sg = stage.0.as_mut_ptr();
    for_tiles!(q0 in rowlen, gw, phase => {
        let nt = stream && (dp as usize + q0).is_multiple_of(w);
        for_tiles!(j0 in ts, 16 => {
            for k in 0..8 {
                for t in 0..G {
                    let block = (q0 + t * w) * se;
                    // SAFETY: ISA from the caller. Element `8(q0 + t * w + 16l
                    // + p) + k` (group `< rowlen`) is read at its bytes `j0 ..
                    // j0 + 16 <= ts`, inside `s`; scratch streams `jj * 8 + k
                    // < 128` are written at `.. * gw + t * w .. + w`, and
                    // `128 * gw <= 8192`.
                    unsafe {
                        let mut r = [V::zero(); 16];
                        for (p, v) in r.iter_mut().enumerate() {
                            *v = V::load_lanes(sp.add(block + (8 * p + k) * ts + j0), 16 * se);
                        }
                        V::shuf(&mut r);
                        for (jj, v) in r.iter().enumerate() {
                            V::store(xp.add((jj * 8 + k) * gw + t * w), *v);
                        }
                    }
                }
            }
            for jj in 0..16 {
                for t in 0..G {
                    // SAFETY: ISA from the caller. Scratch streams `jj * 8 +
                    // k` were all written above; the stage takes `8 * gw`.
                    unsafe {
                        let mut r = [V::zero(); 8];
                        for (k, v) in r.iter_mut().enumerate() {
                            *v = V::load(xp.add((jj * 8 + k) * gw + t * w));
                        }
                        bitplanes8(&mut r);
                        for (b, v) in r.iter().enumerate() {
                            V::store(sg.add(b * gw + t * w), *v);
                        }
                    }
                }
                let row = 8 * (j0 + jj);
                // SAFETY: ISA from the caller; the stage holds the 8 rows'
                // `gw` bytes (written just above); rows `row..row + 8 <= 8 *
                // ts` are written at `q0 .. q0 + gw <= rowlen`, aligned when
                // `nt`.
                unsafe { write_rows::<V, G>(sg, dp.add(row * rowlen + q0), rowlen, nt) };
            }
        });
    });
    if stream {
        // SAFETY: SSE2 is part of every x86-64 CPU.
        unsafe { sfence() };
    }
}

/// Inverse of [`bitshuffle_large`].
///
/// # Safety
/// As for [`bitshuffle_large`].
#[inline(always)]
unsafe fn bitunshuffle_large<V: Simd>(ts: usize, s: &[u8], d: &mut [u8], rowlen: usize) {
    debug_assert!(ts >= 16);
    debug_assert!(s.len() == 8 * rowlen * ts && d.len() == 8 * rowlen * ts);
    let w = V::BYTES;
    let se = 8 * ts;
    let mut scratch = Scratch([0; 4096]);
    assert!(128 * w <= scratch.0.len());
    let xp = scratch.0.as_mut_ptr();
    let (sp, dp) = (s.as_ptr(), d.as_mut_ptr());
    for_tiles!(q0 in rowlen, w => {
        let block = q0 * se;
        for_tiles!(j0 in ts, 16 => {
            for jj in 0..16 {
                // SAFETY: ISA from the caller. Rows `8(j0 + jj) + b < 8 * ts`
                // are read at `.. * rowlen + q0 .. + w`, `q0 + w <= rowlen`;
                // scratch streams `jj * 8 + k < 128` are written.
                unsafe {
                    let mut r = [V::zero(); 8];
                    for (b, v) in r.iter_mut().enumerate() {
                        *v = V::load(sp.add((8 * (j0 + jj) + b) * rowlen + q0));
                    }
                    bitplanes8(&mut r);
                    for (k, v) in r.iter().enumerate() {
                        V::store(xp.add((jj * 8 + k) * w), *v);
                    }
                }
            }
            for k in 0..8 {
                // SAFETY: ISA from the caller. Scratch streams `jj * 8 + k`
                // were written above; element `8(q0 + 16l + p) + k` (group `<
                // rowlen`) is written at its bytes `j0 .. j0 + 16 <= ts`.
                unsafe {
                    let mut r = [V::zero(); 16];
                    for (jj, v) in r.iter_mut().enumerate() {
                        *v = V::load(xp.add((jj * 8 + k) * w));
                    }
                    V::unshuf(&mut r);
                    for (p, v) in r.iter().enumerate() {
                        V::store_lanes(dp.add(block + (8 * p + k) * ts + j0), 16 * se, *v);
                    }
                }
            }
        });
    });
}
