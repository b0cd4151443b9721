//! The block-size tuner and the split rule, making the same choices as
//! C-Blosc2's `blosc_stune_next_blocksize` and `split_block` (CHUNK-NOTES §2,
//! §3), except that a forced block size is rounded to whole elements and the
//! value actually used is the one written (C writes the unrounded value and
//! produces a chunk it cannot read).

use crate::params::{CParams, Codec, Filter, MAX_BLOCKSIZE, SplitMode};

const L1: usize = 32 * 1024;

/// Whether a block of `blocksize` bytes of `typesize`-byte items is split
/// into one stream per byte.
pub(crate) fn split_block(p: &CParams, typesize: usize, blocksize: usize) -> bool {
    match p.splitmode {
        SplitMode::Always => true,
        SplitMode::Never => false,
        SplitMode::Auto | SplitMode::ForwardCompat => {
            let codec_ok = matches!(p.codec, Codec::BloscLz | Codec::Lz4)
                || (p.codec == Codec::Zstd && p.clevel <= 5);
            let has_shuffle = p.filters.contains(&Some(Filter::Shuffle));
            codec_ok && has_shuffle && typesize <= 16 && blocksize / typesize >= 32
        }
    }
}

/// The block size for `nbytes` of input with parameters `p`, computed with
/// the real (uncapped) type size.
pub(crate) fn compute_blocksize(p: &CParams, nbytes: usize) -> usize {
    let ts = p.typesize;
    if nbytes < ts {
        return 1;
    }
    let clevel = usize::from(p.clevel);
    let mut bs;
    if p.blocksize > 0 {
        bs = p.blocksize;
    } else {
        bs = nbytes;
        if nbytes >= L1 {
            let hcr = p.codec.is_hcr();
            let base = if hcr { 2 * L1 } else { L1 };
            bs = match clevel {
                0 => base / 4,
                1 => base / 2,
                2 => base,
                3 => 2 * base,
                4 | 5 => 4 * base,
                6..=8 => 8 * base,
                _ => 8 * base * if hcr { 2 } else { 1 },
            };
        }
        if clevel > 0 && split_block(p, ts, nbytes) {
            let per_item = match clevel {
                1..=3 => 32 * 1024,
                4..=6 => 64 * 1024,
                7 => 128 * 1024,
                8 => 256 * 1024,
                _ => 512 * 1024,
            };
            bs = (per_item * ts).clamp(L1, 4 * 1024 * 1024);
        }
    }
    bs = bs.min(nbytes).min(MAX_BLOCKSIZE);
    if bs > ts {
        bs = bs / ts * ts;
    }
    bs.max(1)
}

/// C-Blosc 1.x: inputs below this are stored raw, and a forced block size
/// is raised to it (`MIN_BUFFERSIZE`).
pub(crate) const BLOSC1_MIN_BUFFERSIZE: usize = 128;
/// C-Blosc 1.x splits blocks of at most this many bytes per item.
pub(crate) const BLOSC1_MAX_SPLITS: usize = 16;

/// C-Blosc 1.21's split rule (`split_block` in its blosc.c): it ignores the
/// filters, and AUTO splits only BloscLZ (and Snappy, which we do not
/// write). Evaluated with the stored (capped) type size.
pub(crate) fn split_block_blosc1(p: &CParams, typesize: usize, blocksize: usize) -> bool {
    let enough = typesize <= BLOSC1_MAX_SPLITS && blocksize / typesize >= BLOSC1_MIN_BUFFERSIZE;
    match p.splitmode {
        SplitMode::Always => true,
        SplitMode::Never => false,
        SplitMode::Auto => p.codec == Codec::BloscLz && enough,
        SplitMode::ForwardCompat => p.codec != Codec::Zstd && enough,
    }
}

/// C-Blosc 1.21's block-size tuner (`compute_blocksize` in its blosc.c),
/// called with the stored (capped) type size: a forced size is raised to
/// 128 bytes, and a splitting codec then gets `min(bs, 256 KiB) * typesize`
/// clamped to 64 KiB..=1 MiB (for forced sizes too, as in C).
pub(crate) fn compute_blocksize_blosc1(p: &CParams, typesize: usize, nbytes: usize) -> usize {
    let ts = typesize;
    if nbytes < ts {
        return 1;
    }
    let clevel = usize::from(p.clevel);
    let mut bs = nbytes;
    if p.blocksize > 0 {
        bs = p.blocksize.clamp(BLOSC1_MIN_BUFFERSIZE, MAX_BLOCKSIZE);
    } else if nbytes >= L1 {
        let hcr = p.codec.is_hcr();
        let base = if hcr { 2 * L1 } else { L1 };
        bs = match clevel {
            0 => base / 4,
            1 => base / 2,
            2 => base,
            3 => 2 * base,
            4 | 5 => 4 * base,
            6..=8 => 8 * base,
            _ => 8 * base * if hcr { 2 } else { 1 },
        };
    }
    if clevel > 0 && split_block_blosc1(p, ts, bs) {
        bs = (bs.min(256 * 1024) * ts).clamp(64 * 1024, 1024 * 1024);
    }
    bs = bs.min(nbytes);
    if bs > ts {
        bs = bs / ts * ts;
    }
    bs.max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    const K: usize = 1024;
    const M: usize = 1024 * 1024;

    fn bs(codec: Codec, ts: usize, nbytes: usize, clevel: u8, shuffle: bool) -> usize {
        let p = CParams::default()
            .codec(codec)
            .typesize(ts)
            .clevel(clevel)
            .filters(if shuffle { &[Filter::Shuffle] } else { &[] });
        compute_blocksize(&p, nbytes)
    }

    /// codecs, typesizes, nbytes values, shuffle, blocksize per clevel 1..=9.
    type Row<'a> = (&'a [Codec], &'a [usize], &'a [usize], bool, [usize; 9]);

    /// The table C-Blosc2 3.3.5 measured (CHUNK-NOTES §2), cell by cell.
    #[test]
    fn matches_c_blosc2_measured_table() {
        use Codec::*;
        #[rustfmt::skip]
        let rows: &[Row] = &[
            (&[BloscLz, Lz4], &[1, 4, 8], &[K], true, [K; 9]),
            (&[BloscLz, Lz4], &[1], &[64 * K], true, [32*K, 32*K, 32*K, 64*K, 64*K, 64*K, 64*K, 64*K, 64*K]),
            (&[BloscLz, Lz4], &[1], &[M, 4 * M], true, [32*K, 32*K, 32*K, 64*K, 64*K, 64*K, 128*K, 256*K, 512*K]),
            (&[BloscLz, Lz4], &[4], &[64 * K], true, [64 * K; 9]),
            (&[BloscLz, Lz4], &[4], &[M], true, [128*K, 128*K, 128*K, 256*K, 256*K, 256*K, 512*K, M, M]),
            (&[BloscLz, Lz4], &[4], &[4 * M], true, [128*K, 128*K, 128*K, 256*K, 256*K, 256*K, 512*K, M, 2*M]),
            (&[BloscLz, Lz4], &[8], &[64 * K], true, [64 * K; 9]),
            (&[BloscLz, Lz4], &[8], &[M], true, [256*K, 256*K, 256*K, 512*K, 512*K, 512*K, M, M, M]),
            (&[BloscLz, Lz4], &[8], &[4 * M], true, [256*K, 256*K, 256*K, 512*K, 512*K, 512*K, M, 2*M, 4*M]),
            (&[Zstd], &[1, 4, 8], &[K], true, [K; 9]),
            (&[Zstd], &[1], &[64 * K], true, [32*K, 32*K, 32*K, 64*K, 64*K, 64*K, 64*K, 64*K, 64*K]),
            (&[Zstd], &[1], &[M, 4 * M], true, [32*K, 32*K, 32*K, 64*K, 64*K, 512*K, 512*K, 512*K, M]),
            (&[Zstd], &[4], &[64 * K], true, [64 * K; 9]),
            (&[Zstd], &[4], &[M, 4 * M], true, [128*K, 128*K, 128*K, 256*K, 256*K, 512*K, 512*K, 512*K, M]),
            (&[Zstd], &[8], &[64 * K], true, [64 * K; 9]),
            (&[Zstd], &[8], &[M, 4 * M], true, [256*K, 256*K, 256*K, 512*K, 512*K, 512*K, 512*K, 512*K, M]),
            (&[Zlib, Lz4Hc], &[1, 4, 8], &[K], true, [K; 9]),
            (&[Zlib, Lz4Hc], &[1, 4, 8], &[64 * K], true, [32*K, 64*K, 64*K, 64*K, 64*K, 64*K, 64*K, 64*K, 64*K]),
            (&[Zlib, Lz4Hc], &[1, 4, 8], &[M, 4 * M], true, [32*K, 64*K, 128*K, 256*K, 256*K, 512*K, 512*K, 512*K, M]),
            (&[BloscLz, Lz4], &[1, 4, 8], &[64 * K], false, [16*K, 32*K, 64*K, 64*K, 64*K, 64*K, 64*K, 64*K, 64*K]),
            (&[BloscLz, Lz4], &[1, 4, 8], &[M, 4 * M], false, [16*K, 32*K, 64*K, 128*K, 128*K, 256*K, 256*K, 256*K, 256*K]),
        ];
        for (codecs, tss, sizes, shuffle, want) in rows {
            for &codec in *codecs {
                for &ts in *tss {
                    for &n in *sizes {
                        for cl in 1..=9u8 {
                            assert_eq!(
                                bs(codec, ts, n, cl, *shuffle),
                                want[cl as usize - 1],
                                "{codec} ts {ts} nbytes {n} clevel {cl} shuffle {shuffle}"
                            );
                        }
                    }
                }
            }
        }
        // clevel 0 with nbytes >= 32K: L1/4, x2 for HCR codecs.
        assert_eq!(bs(Zstd, 4, M, 0, true), 16 * K);
        assert_eq!(bs(BloscLz, 4, M, 0, true), 8 * K);
    }

    #[test]
    fn small_and_forced() {
        assert_eq!(bs(Codec::Lz4, 8, 0, 5, true), 1);
        assert_eq!(bs(Codec::Lz4, 8, 7, 5, true), 1);
        let p = CParams::default().typesize(12).blocksize(1000);
        assert_eq!(
            compute_blocksize(&p, 100_000),
            996,
            "rounded to whole items"
        );
        let p = CParams::default().typesize(300).clevel(5);
        assert_eq!(
            compute_blocksize(&p, 1 << 20) % 300,
            0,
            "multiple of the real typesize"
        );
    }
}
