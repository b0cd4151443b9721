use crate::parallel::Scratch;
use crate::{CParams, Codec, Filter};

fn chunk(typesize: usize, blocksize: usize, len: usize, seed: u64) -> (Vec<u8>, Vec<u8>) {
    chunk_with(typesize, blocksize, len, seed, Some(Filter::Shuffle))
}

/// [`chunk`] with `filter` (or none) as its only filter.
fn chunk_with(
    typesize: usize,
    blocksize: usize,
    len: usize,
    seed: u64,
    filter: Option<Filter>,
) -> (Vec<u8>, Vec<u8>) {
    let mut x = seed | 1;
    let src: Vec<u8> = (0..len)
        .map(|i| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Compressible but not constant: ramps with noise in the low bits.
            (i / 64) as u8 ^ (x as u8 & 3)
        })
        .collect();
    let mut p = CParams {
        codec: Codec::Lz4,
        typesize,
        blocksize,
        ..CParams::default()
    };
    p.filters[5] = filter;
    let c = crate::Compressor::new(p).compress(&src).unwrap();
    (src, c)
}

/// A chunk of a codec that decodes without a dictionary but carries one
/// (C-Blosc2 3.3 writes such VL-block chunks for ZLIB with `use_dict`):
/// the dictionary is passed over, as C-Blosc2's decoder does, and the
/// chunk decodes (whole and by getitem) to its data.
#[test]
fn a_dictionary_a_codec_does_not_use_is_passed_over() {
    for codec in [Codec::Zlib, Codec::BloscLz] {
        let src: Vec<u8> = (0..64 << 10)
            .map(|i| (i / 96) as u8 ^ (i % 7) as u8)
            .collect();
        let p = CParams {
            codec,
            typesize: 1,
            blocksize: 16 << 10,
            ..CParams::default()
        };
        let c = crate::Compressor::new(p).compress(&src).unwrap();
        let nblocks = 4;
        let bstarts_end = 32 + 4 * nblocks;
        // Insert [i32 size | dictionary] after the block starts and move
        // every block start past it.
        let dict: Vec<u8> = (0..300u32).map(|i| (i * 7) as u8).collect();
        let shift = 4 + dict.len();
        let mut d = c[..bstarts_end].to_vec();
        for b in 0..nblocks {
            let at = 32 + 4 * b;
            let v = i32::from_le_bytes(d[at..at + 4].try_into().unwrap());
            d[at..at + 4].copy_from_slice(&(v + shift as i32).to_le_bytes());
        }
        d.extend_from_slice(&(dict.len() as i32).to_le_bytes());
        d.extend_from_slice(&dict);
        d.extend_from_slice(&c[bstarts_end..]);
        d[31] |= crate::chunk::header::bflags::USE_DICT;
        let cbytes = d.len() as i32;
        d[12..16].copy_from_slice(&cbytes.to_le_bytes());
        let mut dec = crate::Decompressor::new(crate::DParams::default());
        assert_eq!(dec.decompress(&d).unwrap(), src, "{codec:?}");
        let mut out = vec![0u8; 1000];
        let mut scratch = Scratch::default();
        super::getitem_into(&d, 20_000, 1000, &mut out, &mut scratch, None).unwrap();
        assert_eq!(out, src[20_000..21_000], "{codec:?} getitem");
    }
}

/// getitem reuses one block buffer per thread: alternating chunks with
/// larger and smaller blocks (and a short last block), ranges inside one
/// block, across blocks and whole chunks, each result is exactly the
/// input's slice (a stale byte of an earlier block would show). The
/// chunks are unfiltered or delta-coded: a shuffle-only chunk's partial
/// blocks do not use the buffer (`getitem_shortcut_leaves_the_block_buffer`).
#[test]
fn getitem_reused_block_buffer() {
    let chunks = [
        chunk_with(8, 64 << 10, (256 << 10) + 8 * 100, 1, None),
        chunk_with(4, 16 << 10, 100 << 10, 2, Some(Filter::Delta)),
        chunk_with(8, 32 << 10, 96 << 10, 3, None),
        chunk_with(2, 128 << 10, 300 << 10, 4, None),
    ];
    let mut scratch = Scratch::default();
    for round in 0..3 {
        for (k, (src, c)) in chunks.iter().enumerate() {
            let ts = [8, 4, 8, 2][k];
            let n = src.len() / ts;
            for (start, nitems) in [
                (0, 1),
                (n / 2, 512),
                (n - 3, 3),
                (1000 + round, n / 3),
                (0, n),
            ] {
                let mut got = vec![0u8; nitems * ts];
                let n =
                    super::getitem_into(c, start, nitems, &mut got, &mut scratch, None).unwrap();
                assert_eq!(n, got.len());
                assert_eq!(
                    got,
                    src[start * ts..(start + nitems) * ts],
                    "chunk {k} items {start}+{nitems} round {round}"
                );
            }
        }
    }
    // Kept between calls: the largest block seen (128 KiB) is still there.
    assert!(scratch.block.len() >= 128 << 10);
}

/// A partly read block of a shuffle-only chunk is unshuffled from the
/// scratch pair: the block buffer is not grown (it was, to the block size,
/// on every call for blocks above the kept size), while an unfiltered
/// chunk's partial block still goes through it; both read right.
#[test]
fn getitem_shortcut_leaves_the_block_buffer() {
    for filter in [Some(Filter::Shuffle), Some(Filter::BitShuffle), None] {
        let (src, c) = chunk_with(8, 256 << 10, 1 << 20, 6, filter);
        let mut scratch = Scratch::default();
        // Inside one block, across two blocks, and a few items that a bit
        // shuffle reads widened to its grid of 8 elements.
        for (start, nitems) in [(7, 1000), (32_000, 1000), (3, 5)] {
            let mut got = vec![0u8; nitems * 8];
            super::getitem_into(&c, start, nitems, &mut got, &mut scratch, None).unwrap();
            assert_eq!(
                got,
                src[start * 8..(start + nitems) * 8],
                "{filter:?} {start}"
            );
        }
        if filter.is_some() {
            assert!(scratch.block.is_empty(), "{filter:?}: block buffer grown");
        } else {
            assert_eq!(scratch.block.len(), 256 << 10);
        }
    }
}

/// getitem on a DELTA chunk decodes block 0, the reference, into a buffer
/// the scratch keeps: the next getitem reuses it (no allocation per call).
#[test]
fn getitem_keeps_the_delta_reference_buffer() {
    let (src, c) = chunk_with(8, 256 << 10, 1 << 20, 7, Some(Filter::Delta));
    let mut scratch = Scratch::default();
    let mut at = None;
    for (start, nitems) in [(70_000, 1000), (100_000, 3), (32_760, 20), (5, 5)] {
        let mut got = vec![0u8; nitems * 8];
        super::getitem_into(&c, start, nitems, &mut got, &mut scratch, None).unwrap();
        assert_eq!(got, src[start * 8..(start + nitems) * 8], "{start}");
        if start >= 32_768 {
            assert_eq!(scratch.block0.len(), 256 << 10);
            let p = scratch.block0.as_ptr();
            assert_eq!(
                *at.get_or_insert(p),
                p,
                "{start}: block 0 buffer reallocated"
            );
        }
    }
}

/// A block above the kept size is not kept for the next call.
#[test]
fn getitem_drops_large_block_buffer() {
    let (src, c) = chunk_with(8, 8 << 20, 8 << 20, 5, None);
    let h = crate::ChunkHeader::parse(&c).unwrap();
    assert!(h.blocksize > super::getitem::GETITEM_KEPT && !h.is_memcpyed());
    let mut scratch = Scratch::default();
    let mut got = vec![0u8; 8000];
    super::getitem_into(&c, 7, 1000, &mut got, &mut scratch, None).unwrap();
    assert_eq!(got, src[56..56 + 8000]);
    assert!(scratch.block.is_empty());
}

/// Warm paths skip the up-front stream checks (an inline decompression
/// sizes nothing beyond `dst`; a getitem whose scratch is already
/// block-sized allocates nothing): every truncation and byte flip of a
/// chunk, filtered and not, decoded whole and by getitem with warm
/// buffers, ends in `Ok` with the right length or an `Err`, and no buffer
/// outgrows the chunk's real block size.
#[test]
fn warm_decoders_check_every_stream_as_they_go() {
    let (src, c) = chunk(4, 4 << 10, 20 << 10, 7);
    warm_decoders_on(&src, &c);
    // Unfiltered: getitem's scratch pair is never sized, only its block.
    let p = CParams {
        codec: Codec::Lz4,
        typesize: 4,
        blocksize: 4 << 10,
        filters: [None; 6],
        ..CParams::default()
    };
    let c = crate::Compressor::new(p).compress(&src).unwrap();
    warm_decoders_on(&src, &c);
}

fn warm_decoders_on(src: &[u8], c: &[u8]) {
    let mut workers = crate::parallel::Workers::new(1);
    let mut scratch = Scratch::default();
    let mut dst = vec![0u8; src.len()];
    super::decompress_into(c, &mut dst, None, &mut workers, None).unwrap();
    let mut item = vec![0u8; 4 << 10];
    super::getitem_into(c, 10, 1024, &mut item, &mut scratch, None).unwrap();
    assert_eq!(item, src[40..40 + (4 << 10)]);
    let mut variants: Vec<Vec<u8>> = (16..c.len())
        .map(|n| {
            // A truncation that keeps cbytes consistent with the length.
            let mut t = c[..n].to_vec();
            t[12..16].copy_from_slice(&(n as u32).to_le_bytes());
            t
        })
        .collect();
    for i in 16..c.len() {
        for bit in [0x01u8, 0x80] {
            let mut f = c.to_vec();
            f[i] ^= bit;
            variants.push(f);
        }
    }
    for v in &variants {
        if let Ok(n) = super::decompress_into(v, &mut dst, None, &mut workers, None) {
            assert!(n <= dst.len());
        }
        for (start, nitems) in [(0, 1024), (10, 1024), (1024, 2048), (0, 5120)] {
            let mut out = vec![0u8; nitems * 4];
            if let Ok(n) = super::getitem_into(v, start, nitems, &mut out, &mut scratch, None) {
                assert_eq!(n, out.len());
            }
        }
    }
    // Nothing was sized by a header field the streams do not back: a flip
    // may turn on a filter (sizing the scratch pair to the real block), but
    // no buffer outgrows the chunk's own 4 KiB blocks.
    let most = scratch
        .a
        .len()
        .max(scratch.b.len())
        .max(scratch.block.len());
    assert!(most <= 4 << 10, "a buffer grew to {most} bytes");
}

/// A split block whose size is not a multiple of its streams (only a
/// foreign or crafted chunk has one: our encoder splits whole items only):
/// the bytes after the last stream decode as zeros, over whatever the
/// caller's buffer held; getitem reads the streams alike. Built by hand:
/// Blosc2 header, no filter, typesize 4, one block of 10 bytes, four run
/// streams of 2 bytes (bytes 1, 2, 3, 4), so 2 bytes past the streams.
#[test]
fn bytes_past_a_blocks_last_stream_are_zeros() {
    let mut c = vec![5u8, 1, 0x05, 4];
    c.extend_from_slice(&10i32.to_le_bytes()); // nbytes
    c.extend_from_slice(&10i32.to_le_bytes()); // blocksize
    c.extend_from_slice(&56i32.to_le_bytes()); // cbytes
    c.extend_from_slice(&[0; 16]); // filters, codec meta, flags2, flags
    c.extend_from_slice(&36i32.to_le_bytes()); // block 0 start
    for s in 1..=4i32 {
        c.extend_from_slice(&(-s).to_le_bytes());
        c.push(0x01);
    }
    assert_eq!(c.len(), 56);
    let want = [1u8, 1, 2, 2, 3, 3, 4, 4, 0, 0];
    let mut d = crate::Decompressor::new(crate::DParams::default());
    let mut out = [0xAAu8; 10];
    assert_eq!(d.decompress_into(&c, &mut out).unwrap(), 10);
    assert_eq!(out, want);
    let mut items = [0xAAu8; 4];
    let mut scratch = Scratch::default();
    assert_eq!(
        super::getitem_into(&c, 1, 1, &mut items, &mut scratch, None).unwrap(),
        4
    );
    assert_eq!(items, want[4..8]);
}

/// getitem of part of a block whose only filter is a byte or bit shuffle
/// unshuffles just the elements the range touches (`Plan::unshuffle_items`):
/// every range gives the input's bytes, for type sizes 1-17 and 32, shuffle
/// element sizes other than the type size (the filter's meta), block sizes
/// that are not a multiple of either, ranges off the element grid, short
/// last blocks, both chunk formats (C-Blosc 1.x's bit shuffle leaves a
/// block of a count of elements that is not a multiple of 8 as it was) and
/// a DELTA pipeline (which takes the whole-block path).
#[test]
fn getitem_unshuffles_only_the_items_asked_for() {
    use crate::ChunkFormat;
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut scratch = Scratch::default();
    let (mut cases, mut took_shortcut) = (0, 0);
    let mut sizes: Vec<usize> = (1..=17).collect();
    sizes.push(32);
    for ts in sizes {
        let len = ts * 3001 + 5;
        // Elements counting up slowly, with noise in the low bit of some.
        let src: Vec<u8> = (0..len)
            .map(|i| {
                let v = (i / ts / 16) as u64 + u64::from(i % ts == 0 && next() % 4 == 0);
                v.checked_shr(8 * (i % ts) as u32).unwrap_or(0) as u8
            })
            .collect();
        let mut pipelines = vec![
            vec![(Filter::Shuffle, 0u8)],
            vec![(Filter::BitShuffle, 0)],
            vec![(Filter::Delta, 0), (Filter::Shuffle, 0)],
        ];
        if ts > 2 {
            pipelines.push(vec![(Filter::Shuffle, 2)]);
        }
        for filters in &pipelines {
            for blocksize in [1000, 4096, ts * 512, ts * 515] {
                for format in [ChunkFormat::Blosc2, ChunkFormat::Blosc1] {
                    if format == ChunkFormat::Blosc1 && (filters[0].1 != 0 || filters.len() > 1) {
                        continue; // Blosc1 headers hold neither metas nor this order
                    }
                    let p = CParams::default()
                        .codec(Codec::Lz4)
                        .typesize(ts)
                        .blocksize(blocksize)
                        .filters_with_meta(filters)
                        .format(format);
                    let c = crate::compress(&src, &p).unwrap();
                    let h = crate::ChunkHeader::parse(&c).unwrap();
                    assert!(!h.is_memcpyed(), "ts {ts}: the data compresses");
                    let plan = super::Plan::open(&c, None).unwrap();
                    let n = len / ts;
                    let bs_items = (h.blocksize / ts).max(1);
                    let mut ranges = vec![
                        (0, 1),
                        (n - 1, 1),
                        (1, bs_items),
                        (bs_items - 1, 2),
                        (8, 16),
                        (3, 9),
                        (n / 2, n / 3),
                    ];
                    for _ in 0..12 {
                        let start = next() as usize % n;
                        ranges.push((start, 1 + next() as usize % (n - start).min(3 * bs_items)));
                    }
                    for (start, nitems) in ranges {
                        let start = start.min(n - 1);
                        let nitems = nitems.min(n - start);
                        let mut got = vec![0xa5u8; nitems * ts];
                        let r =
                            super::getitem_into(&c, start, nitems, &mut got, &mut scratch, None);
                        assert_eq!(r.unwrap(), got.len());
                        assert_eq!(
                            got,
                            src[start * ts..(start + nitems) * ts],
                            "ts {ts} {filters:?} blocksize {blocksize} {format:?} items {start}+{nitems}"
                        );
                        cases += 1;
                    }
                    // The shortcut itself, on bytes es..4 * es of block 0 (a
                    // range off the bit grid): taken for a lone shuffle of
                    // elements of 2 bytes or more and for a lone bit shuffle of
                    // a block of 16 elements or more, with the input's bytes;
                    // refused for DELTA.
                    let (bits, es) = match filters[..] {
                        [(Filter::BitShuffle, _)] => (true, ts),
                        [(Filter::Shuffle, 0)] => (false, ts),
                        [(Filter::Shuffle, m)] => (false, usize::from(m)),
                        _ => (false, 0),
                    };
                    if es == 0 {
                        let mut out = vec![0u8; ts];
                        let took = plan
                            .unshuffle_items(k(), &mut scratch, 0, 0, &mut out)
                            .unwrap();
                        assert!(!took, "ts {ts} {filters:?}");
                        continue;
                    }
                    let mut out = vec![0u8; 3 * es];
                    let took = plan
                        .unshuffle_items(k(), &mut scratch, 0, es, &mut out)
                        .unwrap();
                    let expected = if bits {
                        h.block_len(0) / es >= 16
                    } else {
                        es > 1
                    };
                    assert_eq!(
                        took, expected,
                        "ts {ts} {filters:?} blocksize {blocksize} {format:?}"
                    );
                    if took {
                        assert_eq!(out, src[es..4 * es]);
                        took_shortcut += 1;
                    }
                }
            }
        }
    }
    assert!(
        cases > 2000 && took_shortcut > 100,
        "{cases} cases, shortcut {took_shortcut}"
    );
}

fn k() -> &'static crate::kernels::Kernels {
    crate::kernels::Kernels::selected().unwrap()
}

/// Memcpyed chunks larger than a copy piece (`copy_pieces`): compressed,
/// decompressed and read by getitem across the pieces' edges, byte for byte.
#[test]
fn memcpyed_chunks_copy_in_pieces() {
    use crate::chunk::COPY_PIECE;
    for len in [
        COPY_PIECE - 1,
        COPY_PIECE,
        COPY_PIECE + 1,
        3 * COPY_PIECE + 12,
    ] {
        // Incompressible bytes (SplitMix64's output): stored memcpyed.
        let src: Vec<u8> = (0..len as u64)
            .map(|i| splitmix64(i ^ len as u64) as u8)
            .collect();
        let p = CParams::default().typesize(4);
        let c = crate::compress(&src, &p).unwrap();
        let h = crate::chunk::ChunkHeader::parse(&c).unwrap();
        assert!(h.is_memcpyed(), "{len}");
        assert_eq!(crate::decompress(&c).unwrap(), src, "{len}");
        // Items from before the first edge to past the last.
        let start = (COPY_PIECE - 8) / 4;
        let n = (len / 4).saturating_sub(start + 1);
        let items = crate::getitem(&c, start, n).unwrap();
        assert_eq!(items, &src[start * 4..(start + n) * 4], "{len}");
    }
}

/// SplitMix64's output for `x` (a well-mixed 64-bit value).
fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// getitem on an unfiltered chunk whose streams are stored raw or are runs
/// (what C writes for data that does not compress, given more room than
/// nbytes + 32) copies the items out of the chunk: the block buffer is not
/// grown. Split (one stream per byte of the type size) and not, blocks of
/// noise, of zeros (run streams) and of a ramp (codec streams, which still
/// go through the buffer), ranges inside a stream, across streams, across
/// blocks and at the chunk's end; every one against the input.
#[test]
fn getitem_copies_stored_streams_from_the_chunk() {
    let len = 100_000;
    let mut x = 0x2545_f491_4f6c_dd1d_u64;
    let noise: Vec<u8> = (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 32) as u8
        })
        .collect();
    // Noise, then zeros, then a ramp, in 8 KiB pieces.
    let mixed: Vec<u8> = (0..len)
        .map(|i| match (i / 8192) % 3 {
            0 => noise[i],
            1 => 0,
            _ => (i / 16) as u8,
        })
        .collect();
    let mut cases = 0;
    for (data, codec_streams) in [(&noise, false), (&mixed, true)] {
        for typesize in [1usize, 2, 4, 8] {
            for split in [crate::SplitMode::Always, crate::SplitMode::Never] {
                let p = CParams {
                    codec: Codec::Lz4,
                    typesize,
                    blocksize: 8192,
                    ..CParams::default()
                }
                .filters(&[])
                .splitmode(split);
                let mut chunk = vec![0u8; 2 * len];
                let n = crate::Compressor::new(p)
                    .compress_into_all_room(data, &mut chunk)
                    .unwrap();
                chunk.truncate(n);
                assert!(!crate::ChunkHeader::parse(&chunk).unwrap().is_memcpyed());
                let mut scratch = Scratch::default();
                let nitems = len / typesize;
                let ranges = [
                    (3, 5),
                    (1000 / typesize, 700 / typesize),
                    (8000 / typesize, 400 / typesize),
                    (nitems - 7, 7),
                    (16_390 / typesize, 9),
                ];
                for (start, k) in ranges {
                    let mut got = vec![0xA5u8; k * typesize];
                    super::getitem_into(&chunk, start, k, &mut got, &mut scratch, None).unwrap();
                    assert!(
                        got == data[start * typesize..(start + k) * typesize],
                        "ts {typesize} {split:?} {start}+{k}"
                    );
                    cases += 1;
                }
                // Only codec streams needed the block buffer.
                assert_eq!(
                    scratch.block.is_empty(),
                    !codec_streams,
                    "ts {typesize} {split:?}"
                );
            }
        }
    }
    assert_eq!(cases, 2 * 4 * 2 * 5);
}

/// Blocks that are all zero runs decode to zeros without their filters
/// undone, except where undoing them does not keep zeros: with DELTA, a
/// block equal to block 0 is a block of zero runs that decodes to block
/// 0's bytes. Every filter set, whole and through getitem, serial and with
/// threads.
#[test]
fn blocks_of_zero_runs_decode_as_their_filters_say() {
    use crate::{Compressor, DParams, Decompressor};
    let bs = 4096;
    // Blocks: data, zeros, data again (a copy of block 0), zeros, one
    // with a zero run first, a short leftover of data.
    let block0: Vec<u8> = (0..bs).map(|i| (i * 7 % 251) as u8 | 1).collect();
    let mut src = block0.clone();
    src.extend(std::iter::repeat_n(0u8, bs));
    src.extend_from_slice(&block0);
    src.extend(std::iter::repeat_n(0u8, bs));
    // A block whose first byte plane is zeros (a zero run once shuffled)
    // and the others not.
    src.extend((0..bs as u32 / 4).flat_map(|k| (k << 8 | 1 << 16).to_le_bytes()));
    src.extend_from_slice(&block0[..1000]);
    let filters: [&[Filter]; 7] = [
        &[Filter::Shuffle],
        &[Filter::BitShuffle],
        &[Filter::Delta],
        &[Filter::Shuffle, Filter::Delta],
        &[Filter::Shuffle, Filter::ByteDelta],
        &[Filter::TruncPrec(20), Filter::BitShuffle],
        &[Filter::Delta, Filter::BitShuffle],
    ];
    for f in filters {
        for threads in [1, 3] {
            let p = CParams::default()
                .codec(Codec::Lz4)
                .typesize(4)
                .blocksize(bs)
                .filters(f)
                .nthreads(threads);
            let chunk = Compressor::new(p).compress(&src).unwrap();
            let mut d = Decompressor::new(DParams::default().nthreads(threads));
            let mut want = src.clone();
            if f.contains(&Filter::TruncPrec(20)) {
                // Lossy: what the filter keeps of block 0.
                want = d
                    .decompress(
                        &Compressor::new(CParams::default().typesize(4).blocksize(bs).filters(f))
                            .compress(&src)
                            .unwrap(),
                    )
                    .unwrap();
            }
            assert!(d.decompress(&chunk).unwrap() == want, "{f:?} x{threads}");
            for (at, len) in [
                (bs, bs),
                (bs + 8, 100),
                (2 * bs + 4, 40),
                (3 * bs, bs + 400),
            ] {
                let items = d.getitem(&chunk, at / 4, len / 4).unwrap();
                assert!(
                    items == want[at..at + len],
                    "{f:?} x{threads} getitem {at}+{len}"
                );
            }
        }
    }
}
