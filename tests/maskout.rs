//! Block masks (`Decompressor::decompress_masked_into`, C-Blosc2's
//! `blosc2_set_maskout`): the blocks kept decode to the data, the blocks
//! masked out leave the output as it was and are not read, for every chunk
//! kind, filter and thread count.

mod support;
use oxiblosc::{
    CParams, ChunkHeader, Codec, DParams, Decompressor, Error, Filter, SpecialValue, compress,
};
use support::Rng;

const SENTINEL: u8 = 0xA7;

/// Decode `chunk` with `mask` into a sentinel-filled buffer and check every
/// block: kept ones against `want`, masked ones untouched.
fn check(d: &mut Decompressor, chunk: &[u8], mask: &[bool], want: &[u8], what: &str) {
    let h = ChunkHeader::parse(chunk).unwrap();
    let mut out = vec![SENTINEL; want.len() + 5];
    let n = d.decompress_masked_into(chunk, mask, &mut out).unwrap();
    assert_eq!(n, want.len(), "{what}");
    let bs = h.blocksize;
    for (i, kept) in mask.iter().map(|m| !m).enumerate() {
        let r = i * bs..((i + 1) * bs).min(want.len());
        if kept {
            assert_eq!(out[r.clone()], want[r], "{what}: block {i} kept");
        } else {
            assert!(
                out[r].iter().all(|&b| b == SENTINEL),
                "{what}: block {i} masked"
            );
        }
    }
    assert!(
        out[want.len()..].iter().all(|&b| b == SENTINEL),
        "{what}: tail"
    );
}

fn masks(rng: &mut Rng, nblocks: usize) -> Vec<Vec<bool>> {
    let mut m = vec![vec![false; nblocks], vec![true; nblocks]];
    let mut only0 = vec![false; nblocks];
    only0[0] = true;
    m.push(only0);
    let mut all_but_last = vec![true; nblocks];
    all_but_last[nblocks - 1] = false;
    m.push(all_but_last);
    for _ in 0..6 {
        m.push((0..nblocks).map(|_| rng.below(2) == 0).collect());
    }
    m
}

#[test]
fn kept_blocks_decode_and_masked_ones_stay() {
    let mut rng = Rng(5);
    let variants: [(Codec, usize, &[Filter]); 6] = [
        (Codec::Lz4, 4, &[Filter::Shuffle]),
        (Codec::BloscLz, 8, &[Filter::Delta, Filter::Shuffle]),
        (Codec::Zstd, 2, &[Filter::BitShuffle]),
        (Codec::Lz4, 1, &[]),
        (Codec::Lz4, 8, &[Filter::Delta]),
        (Codec::Zlib, 4, &[Filter::Shuffle, Filter::ByteDelta]),
    ];
    for (codec, ts, filters) in variants {
        // 300 KiB plus a leftover: the 2-thread decoder runs a team.
        let src: Vec<u8> = (0..(300 * 1024 + 3 * ts) / 4 + 1)
            .flat_map(|i| ((i as f32 * 0.001).sin() * 1000.0).round().to_le_bytes())
            .take(300 * 1024 + 3 * ts)
            .collect();
        for clevel in [0, 5] {
            let p = CParams::default()
                .codec(codec)
                .clevel(clevel)
                .typesize(ts)
                .filters(filters)
                .blocksize(32 * 1024);
            let chunk = compress(&src, &p).unwrap();
            let h = ChunkHeader::parse(&chunk).unwrap();
            assert_eq!(h.is_memcpyed(), clevel == 0);
            let nblocks = h.nblocks();
            for nthreads in [1, 2] {
                let mut d = Decompressor::new(DParams::default().nthreads(nthreads));
                for mask in masks(&mut rng, nblocks) {
                    let what = format!("{codec:?} ts {ts} {filters:?} clevel {clevel} x{nthreads}");
                    check(&mut d, &chunk, &mask, &src, &what);
                }
            }
        }
    }
}

#[test]
fn special_chunks_fill_only_the_kept_blocks() {
    let mut rng = Rng(9);
    let p = CParams::default().typesize(4).blocksize(1000);
    let n = 10_000;
    let value = [1u8, 2, 3, 4];
    for (kind, want) in [
        (SpecialValue::Zeros, vec![0u8; n]),
        (
            SpecialValue::Nan,
            0x7FC0_0000u32.to_le_bytes().repeat(n / 4),
        ),
        (SpecialValue::Value, value.repeat(n / 4)),
    ] {
        let chunk = oxiblosc::special_chunk(&p, n, kind, &value).unwrap();
        let nblocks = ChunkHeader::parse(&chunk).unwrap().nblocks();
        let mut d = Decompressor::new(DParams::default());
        for mask in masks(&mut rng, nblocks) {
            check(&mut d, &chunk, &mask, &want, &format!("{kind:?}"));
        }
    }
}

#[test]
fn a_masked_block_is_not_read_and_a_wrong_mask_is_refused() {
    let src: Vec<u8> = (0..16 * 1024u32)
        .flat_map(|v| (v * 7).to_le_bytes())
        .collect();
    let p = CParams::default()
        .codec(Codec::Lz4)
        .typesize(4)
        .blocksize(16 * 1024);
    let mut chunk = compress(&src, &p).unwrap();
    let h = ChunkHeader::parse(&chunk).unwrap();
    assert_eq!(h.nblocks(), 4);
    assert!(!h.is_memcpyed());
    // Break block 2's streams: zero its compressed bytes.
    let bstart = |c: &[u8], i: usize| {
        let at = h.header_len() + 4 * i;
        u32::from_le_bytes(c[at..at + 4].try_into().unwrap()) as usize
    };
    let (s2, s3) = (bstart(&chunk, 2), bstart(&chunk, 3));
    chunk[s2 + 8..s3].fill(0xFF);
    let mut d = Decompressor::new(DParams::default());
    let mut out = vec![0u8; src.len()];
    assert!(d.decompress_into(&chunk, &mut out).is_err());
    check(
        &mut d,
        &chunk,
        &[false, false, true, false],
        &src,
        "block 2 broken",
    );
    for bad in [&[false; 3][..], &[false; 5][..], &[][..]] {
        assert!(matches!(
            d.decompress_masked_into(&chunk, bad, &mut out),
            Err(Error::InvalidParam(_))
        ));
    }
}
