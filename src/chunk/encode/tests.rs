//! The encoder's tests: the constant-stream scan and the zero map.

use super::ZeroMap;
use super::stream::constant;
use crate::{CParams, ChunkFormat, Codec, Compressor, Filter, SplitMode};

/// A chunk whose caller says where it is zero is the chunk `compress`
/// writes, byte for byte, whatever the codec, filters, split mode,
/// format, threads, the granule of the map (smaller or larger than a
/// block) and where the zeros are (a tail from inside a block, a
/// block's edge, the leftover block; every other granule).
#[test]
fn a_zero_map_gives_the_same_chunk() {
    let mut x = 0x2545_f491_u32;
    let mut noise = |n: usize| -> Vec<u8> {
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                // Compressible: few distinct values.
                (x % 5) as u8
            })
            .collect()
    };
    let filters: [&[Filter]; 7] = [
        &[],
        &[Filter::Shuffle],
        &[Filter::BitShuffle],
        &[Filter::Delta],
        &[Filter::Shuffle, Filter::ByteDelta],
        &[Filter::TruncPrec(10), Filter::Shuffle],
        &[Filter::Shuffle, Filter::Delta],
    ];
    // (typesize, input length, blocksize (0: automatic)).
    let shapes = [
        (1, 10_000, 1024),
        (4, 65_536 + 20, 4096),
        (8, 40_000, 0),
        (3, 9_999, 1536),
    ];
    let mut cases = Vec::new();
    for (ts, len, bs) in shapes {
        for f in filters {
            for codec in [Codec::BloscLz, Codec::Lz4, Codec::Zstd, Codec::Zlib] {
                for format in [ChunkFormat::Blosc2, ChunkFormat::Blosc1] {
                    for (split, threads) in [(SplitMode::Always, 1), (SplitMode::Never, 2)] {
                        let p = CParams::default()
                            .codec(codec)
                            .clevel(5)
                            .typesize(ts)
                            .filters(f)
                            .blocksize(bs)
                            .splitmode(split)
                            .nthreads(threads)
                            .format(format);
                        if p.validate().is_ok() {
                            cases.push((p, len, if bs == 0 { 4096 } else { bs }));
                        }
                    }
                }
            }
        }
    }
    assert!(cases.len() > 300, "{} cases", cases.len());
    // The chunk with a map must be the chunk without one.
    let same = |c: &mut Compressor, src: &[u8], granule: usize, dirty: &[bool], what: &str| {
        let want = c.compress(src).unwrap();
        let got = c
            .compress_hinted(src, Some(ZeroMap { granule, dirty }))
            .unwrap();
        assert!(got == want, "{:?}: {what}", c.params());
    };
    for (p, len, block) in cases {
        let mut c = Compressor::new(p);
        for zero_from in [
            0,
            1,
            block - 1,
            block,
            block + 7,
            3 * block + block / 2,
            len - 1,
            len,
        ] {
            let mut src = noise(zero_from);
            src.resize(len, 0);
            for granule in [1, 100, block, 3 * block] {
                let n = len.div_ceil(granule);
                // A zero tail, the granules before it dirty.
                let mut dirty: Vec<bool> = (0..n).map(|g| g * granule < zero_from).collect();
                same(
                    &mut c,
                    &src,
                    granule,
                    &dirty,
                    &format!("zero from {zero_from}, granule {granule}"),
                );
                // Every other granule zeroed and clean.
                for g in (1..n).step_by(2) {
                    src[g * granule..((g + 1) * granule).min(len)].fill(0);
                    dirty[g] = false;
                }
                same(
                    &mut c,
                    &src,
                    granule,
                    &dirty,
                    &format!("holes, granule {granule}"),
                );
            }
        }
    }
}

/// The vector-friendly scan agrees with the obvious one for every length
/// around the 64-byte steps and a differing byte at every position.
#[test]
fn constant_matches_a_byte_scan() {
    let naive = |s: &[u8]| s.iter().all(|&b| b == s[0]);
    assert!(constant(&[]));
    assert!(constant(&[7]));
    for len in (2..=300).chain([4095, 4096, 4097, 128 * 1024]) {
        for v in [0u8, 0x5a, 0xff] {
            let mut s = vec![v; len];
            assert!(constant(&s), "len {len} value {v}");
            let step = if len > 4096 { 997 } else { 1 };
            for at in (0..len).step_by(step).chain([len - 1]) {
                s[at] ^= 1 << (at % 8);
                assert_eq!(constant(&s), naive(&s), "len {len} value {v} at {at}");
                assert!(!constant(&s), "len {len} value {v} at {at}");
                s[at] = v;
            }
        }
    }
}
