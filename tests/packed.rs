//! The historic "Blosc packed" super-chunk (`oxiblosc::packed`, layout A of
//! CONTAINER-NOTES §8.1): known-answer buffers laid out by hand from the
//! field table, round trips, appends, and hostile input (every truncation,
//! every bit flip, absurd fields, a counting allocator).

mod support;
use oxiblosc::packed::{self, HEADER_LEN, PackedHeader, PackedReader};
use oxiblosc::{CParams, ChunkFormat, Codec, Error, Filter, compress};
use support::counting;

#[global_allocator]
static GLOBAL: counting::Counting = counting::Counting;

/// A noisy ramp of u32 (compressible, not trivially).
fn data(n: usize) -> Vec<u8> {
    let mut s = 7u32;
    (0..n)
        .map(|i| {
            s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            ((i / 3) as u8).wrapping_add((s >> 29) as u8)
        })
        .collect()
}

/// The chunk the packed writer should produce for `src`: a Blosc1 chunk
/// from the crate's chunk layer, made here independently of `packed`.
fn blosc1(src: &[u8], p: &CParams) -> Vec<u8> {
    compress(src, &p.clone().format(ChunkFormat::Blosc1)).unwrap()
}

/// The 96-byte header laid out byte by byte from the field table.
#[allow(clippy::too_many_arguments)]
fn header_bytes(
    compressor: u16,
    clevel: u16,
    filters: u16,
    chunksize: u32,
    nchunks: i64,
    nbytes: i64,
    cbytes: i64,
    ancillary: [i64; 4],
    data_starts: i64,
) -> Vec<u8> {
    let mut h = Vec::with_capacity(96);
    h.push(0); // version
    h.extend_from_slice(&[0, 0, 0]); // flags1..3
    h.extend_from_slice(&compressor.to_le_bytes()); // 4..6
    h.extend_from_slice(&clevel.to_le_bytes()); // 6..8
    h.extend_from_slice(&filters.to_le_bytes()); // 8..10
    h.extend_from_slice(&0u16.to_le_bytes()); // 10..12 filters_meta
    h.extend_from_slice(&chunksize.to_le_bytes()); // 12..16
    h.extend_from_slice(&nchunks.to_le_bytes()); // 16..24
    h.extend_from_slice(&nbytes.to_le_bytes()); // 24..32
    h.extend_from_slice(&cbytes.to_le_bytes()); // 32..40
    for off in ancillary {
        h.extend_from_slice(&off.to_le_bytes()); // 40..72
    }
    h.extend_from_slice(&data_starts.to_le_bytes()); // 72..80
    h.extend_from_slice(&[0; 16]); // 80..96 reserved
    assert_eq!(h.len(), 96);
    h
}

/// Header + optional filters chunk + chunks + starts, by hand.
fn layout(
    compressor: u16,
    clevel: u16,
    filters: u16,
    chunksize: u32,
    filters_chunk: Option<(&[u8], usize)>,
    chunks: &[(Vec<u8>, usize)],
) -> Vec<u8> {
    let n = chunks.len();
    let fc_len = filters_chunk.map_or(0, |(c, _)| c.len());
    let fc_nbytes = filters_chunk.map_or(0, |(_, nb)| nb);
    let body: usize = chunks.iter().map(|(c, _)| c.len()).sum();
    let cbytes = 96 + fc_len + body + 8 * n;
    let nbytes = 96 + fc_nbytes + chunks.iter().map(|(_, nb)| nb).sum::<usize>() + 8 * n;
    let fc_off = if filters_chunk.is_some() { 96 } else { 0 };
    let mut out = header_bytes(
        compressor,
        clevel,
        filters,
        chunksize,
        n as i64,
        nbytes as i64,
        cbytes as i64,
        [fc_off, 0, 0, 0],
        (cbytes - 8 * n) as i64,
    );
    if let Some((c, _)) = filters_chunk {
        out.extend_from_slice(c);
    }
    let mut starts = vec![];
    for (c, _) in chunks {
        starts.extend_from_slice(&(out.len() as i64).to_le_bytes());
        out.extend_from_slice(c);
    }
    out.extend_from_slice(&starts);
    assert_eq!(out.len(), cbytes);
    out
}

#[test]
fn known_answer_lz4_shuffle_ragged() {
    let src = data(900);
    let p = CParams::default()
        .codec(Codec::Lz4)
        .clevel(5)
        .typesize(4)
        .filters(&[Filter::Shuffle]);
    let chunks: Vec<(Vec<u8>, usize)> = src.chunks(400).map(|c| (blosc1(c, &p), c.len())).collect();
    assert_eq!(chunks.len(), 3);
    // compressor 1 (lz4), clevel 5, filters: slot 0 = 1 (shuffle), chunksize 400.
    let expected = layout(1, 5, 0x0001, 400, None, &chunks);
    let written = packed::pack(&src, &p, 400).unwrap();
    assert_eq!(written, expected);

    let r = PackedReader::new(&expected).unwrap();
    let h = r.header();
    let c: Vec<usize> = chunks.iter().map(|(c, _)| c.len()).collect();
    let total = 96 + c.iter().sum::<usize>() + 24;
    assert_eq!(
        *h,
        PackedHeader {
            version: 0,
            flags: [0; 3],
            compressor: 1,
            clevel: 5,
            filters: 1,
            filters_meta: 0,
            chunksize: 400,
            nchunks: 3,
            nbytes: 96 + 900 + 24,
            cbytes: total as i64,
            filters_chunk: 0,
            codec_chunk: 0,
            metadata_chunk: 0,
            userdata_chunk: 0,
            data_starts: (total - 24) as i64,
        }
    );
    assert_eq!(h.codec(), Some(Codec::Lz4));
    assert_eq!(h.filter_codes(), [1, 0, 0, 0, 0]);
    assert_eq!(r.chunk(0).unwrap(), &chunks[0].0[..]);
    assert_eq!(r.chunk(2).unwrap(), &chunks[2].0[..]);
    assert_eq!(r.chunk_nbytes(2).unwrap(), 100);
    assert_eq!(r.decompress_chunk(1).unwrap(), src[400..800]);
    assert_eq!(r.unpack().unwrap(), src);
    assert_eq!(r.data_nbytes(), 900);
    assert!(r.filters_chunk().is_none());
    assert_eq!(
        PackedHeader::parse(&expected).unwrap().to_bytes()[..],
        expected[..96]
    );
}

#[test]
fn known_answer_zlib_delta_bitshuffle() {
    if !Codec::Zlib.is_available() {
        return;
    }
    let src = data(1000);
    let p = CParams::default()
        .codec(Codec::Zlib)
        .clevel(3)
        .typesize(2)
        .filters(&[Filter::Delta, Filter::BitShuffle]);
    let chunk_p = p.clone().filters(&[Filter::BitShuffle]);
    // The reference: the first buffer, stored at clevel 0.
    let reference = &src[..300];
    let fc = blosc1(reference, &chunk_p.clone().clevel(0));
    assert_eq!(fc[2] & 0x02, 0x02, "filters chunk is memcpyed");
    let chunks: Vec<(Vec<u8>, usize)> = src
        .chunks(300)
        .map(|c| {
            let d: Vec<u8> = c
                .iter()
                .zip(reference.iter().chain(std::iter::repeat(&0)))
                .map(|(a, b)| a.wrapping_sub(*b))
                .collect();
            (blosc1(&d, &chunk_p), c.len())
        })
        .collect();
    // compressor 4 (zlib's compcode), filters: slot 0 = 3 (delta), slot 1 = 2.
    let filters = 3 | (2 << 3);
    let expected = layout(4, 3, filters, 300, Some((&fc, 300)), &chunks);
    assert_eq!(packed::pack(&src, &p, 300).unwrap(), expected);
    let r = PackedReader::new(&expected).unwrap();
    assert_eq!(r.header().filters_chunk, 96);
    assert_eq!(r.header().filter_codes(), [3, 2, 0, 0, 0]);
    assert!(r.header().has_delta());
    assert_eq!(r.filters_chunk().unwrap(), &fc[..]);
    assert_eq!(r.decompress_chunk(3).unwrap(), src[900..]);
    assert_eq!(packed::unpack(&expected).unwrap(), src);
}

#[test]
fn known_answer_empty() {
    let p = CParams::default();
    let expected = header_bytes(0, 5, 1, 1 << 20, 0, 96, 96, [0; 4], 96);
    assert_eq!(packed::pack(&[], &p, 1 << 20).unwrap(), expected);
    let r = PackedReader::new(&expected).unwrap();
    assert_eq!(r.nchunks(), 0);
    assert_eq!(r.unpack().unwrap(), Vec::<u8>::new());
}

/// A memcpyed Blosc1 chunk written byte by byte, noise in bytes 80..95 and
/// in the reserved flags: the reader ignores them.
#[test]
fn known_answer_hand_chunk_and_noise() {
    let payload = b"hello, packed world!";
    let mut chunk = vec![2u8, 1, 0x02, 1]; // version 2, versionlz 1, memcpyed, typesize 1
    chunk.extend_from_slice(&(payload.len() as i32).to_le_bytes()); // nbytes
    chunk.extend_from_slice(&(payload.len() as i32).to_le_bytes()); // blocksize
    chunk.extend_from_slice(&(16 + payload.len() as i32).to_le_bytes()); // cbytes
    chunk.extend_from_slice(payload);
    let mut b = layout(0, 0, 0, 0, None, &[(chunk.clone(), payload.len())]);
    b[1] = 0xaa;
    b[3] = 0x55;
    for (i, x) in b[80..96].iter_mut().enumerate() {
        *x = 0xc3 ^ i as u8;
    }
    let r = PackedReader::new(&b).unwrap();
    assert_eq!(r.header().flags, [0xaa, 0, 0x55]);
    assert_eq!(r.decompress_chunk(0).unwrap(), payload);
    assert_eq!(packed::unpack(&b).unwrap(), payload);
    // The header writes zeros where the noise was.
    assert_eq!(r.header().to_bytes()[80..96], [0u8; 16]);
}

#[test]
fn header_fields_roundtrip() {
    let h = PackedHeader {
        version: 0,
        flags: [1, 2, 3],
        compressor: 0x0405,
        clevel: 0x0607,
        filters: PackedHeader::pack_filter_codes([1, 2, 3, 0, 1]),
        filters_meta: 0x0b0a,
        chunksize: 0x0f0e_0d0c,
        nchunks: 0x1716_1514_1312_1110,
        nbytes: 0x1f1e_1d1c_1b1a_1918,
        cbytes: 0x2726_2524_2322_2120,
        filters_chunk: 40,
        codec_chunk: 48,
        metadata_chunk: 56,
        userdata_chunk: 64,
        data_starts: 72,
    };
    let b = h.to_bytes();
    assert_eq!(
        b[..16],
        [0, 1, 2, 3, 5, 4, 7, 6, b[8], b[9], 10, 11, 12, 13, 14, 15]
    );
    assert_eq!(
        u16::from_le_bytes([b[8], b[9]]),
        1 | 2 << 3 | 3 << 6 | 1 << 12
    );
    for (i, &x) in b.iter().enumerate().take(40).skip(16) {
        assert_eq!(x, i as u8);
    }
    assert_eq!(b[40], 40);
    assert_eq!(b[72], 72);
    assert_eq!(PackedHeader::parse(&b).unwrap(), h);
    assert_eq!(h.filter_codes(), [1, 2, 3, 0, 1]);
    let mut v1 = b;
    v1[0] = 1;
    assert!(matches!(
        PackedHeader::parse(&v1),
        Err(Error::InvalidHeader(_))
    ));
    assert!(matches!(
        PackedHeader::parse(&b[..95]),
        Err(Error::Truncated { .. })
    ));
}

#[test]
fn roundtrips() {
    let filter_sets: [&[Filter]; 5] = [
        &[],
        &[Filter::Shuffle],
        &[Filter::BitShuffle],
        &[Filter::Delta],
        &[Filter::Delta, Filter::Shuffle],
    ];
    for codec in Codec::ALL.into_iter().filter(|c| c.is_available()) {
        for (k, &typesize) in [1usize, 2, 4, 8, 16].iter().enumerate() {
            let filters = filter_sets[(k + codec.id() as usize) % filter_sets.len()];
            let p = CParams::default()
                .codec(codec)
                .typesize(typesize)
                .filters(filters);
            for len in [0usize, 1, 999, 20_000] {
                let src = data(len);
                for chunksize in [1usize, 7, 256, 4096, 1 << 20] {
                    if len / chunksize > 3000 {
                        continue;
                    }
                    let what =
                        format!("{codec} ts {typesize} {filters:?} len {len} cs {chunksize}");
                    let b = packed::pack(&src, &p, chunksize).expect(&what);
                    let r = PackedReader::new(&b).expect(&what);
                    assert_eq!(r.nchunks(), len.div_ceil(chunksize), "{what}");
                    assert_eq!(r.header().chunksize as usize, chunksize, "{what}");
                    assert_eq!(r.header().codec(), Some(codec), "{what}");
                    assert_eq!(r.unpack().unwrap(), src, "{what}");
                    if r.nchunks() > 0 {
                        let last = r.nchunks() - 1;
                        assert_eq!(
                            r.decompress_chunk(last).unwrap(),
                            src[last * chunksize..],
                            "{what}"
                        );
                        // Chunks are Blosc1 chunks (16-byte header).
                        assert_eq!(r.chunk(0).unwrap()[0], 2, "{what}");
                    }
                }
            }
        }
    }
}

#[test]
fn pack_refuses_what_the_format_cannot_hold() {
    let src = data(100);
    assert!(matches!(
        packed::pack(&src, &CParams::default(), 0),
        Err(Error::InvalidParam(_))
    ));
    let p = CParams::default().filters(&[Filter::Shuffle, Filter::ByteDelta]);
    assert!(matches!(
        packed::pack(&src, &p, 64),
        Err(Error::Unsupported(_))
    ));
    let p = CParams::default().filters(&[Filter::TruncPrec(10)]);
    assert!(packed::pack(&src, &p.typesize(4), 64).is_err());
    // Blosc1 chunks take one shuffle at most.
    let p = CParams::default().filters(&[Filter::Shuffle, Filter::BitShuffle]);
    assert!(packed::pack(&src, &p, 64).is_err());
}

#[test]
fn appends() {
    let p = CParams::default()
        .codec(Codec::BloscLz)
        .typesize(4)
        .filters(&[Filter::Shuffle]);
    let src = data(10_000);
    // Appending whole chunks gives the bytes pack gives.
    let mut b = packed::pack(&src[..4000], &p, 1000).unwrap();
    for piece in src[4000..].chunks(1000) {
        b = packed::append(&b, piece, 4).unwrap();
    }
    assert_eq!(b, packed::pack(&src, &p, 1000).unwrap());
    // Ragged appends: a short chunk after full ones keeps chunksize, any
    // chunk after a short one clears it; the data concatenate.
    let mut all = src.clone();
    for (i, len) in [1usize, 0, 3333, 17].into_iter().enumerate() {
        let piece = data(len + i);
        b = packed::append(&b, &piece, 4).unwrap();
        all.extend_from_slice(&piece);
        let r = PackedReader::new(&b).unwrap();
        assert_eq!(r.header().chunksize, if i == 0 { 1000 } else { 0 });
        assert_eq!(r.header().cbytes as usize, b.len());
        assert_eq!(r.chunk_nbytes(r.nchunks() - 1).unwrap(), piece.len());
    }
    assert_eq!(packed::unpack(&b).unwrap(), all);
    // A short last chunk keeps chunksize; anything after it clears it.
    let b = packed::pack(&src[..1500], &p, 1000).unwrap();
    let b2 = packed::append(&b, &src[..10], 4).unwrap();
    assert_eq!(PackedReader::new(&b2).unwrap().header().chunksize, 0);
    let b = packed::pack(&src[..2000], &p, 1000).unwrap();
    let b2 = packed::append(&b, &src[..10], 4).unwrap();
    assert_eq!(PackedReader::new(&b2).unwrap().header().chunksize, 1000);
}

#[test]
fn appends_with_delta() {
    let p = CParams::default()
        .codec(Codec::Lz4)
        .typesize(8)
        .filters(&[Filter::Delta, Filter::BitShuffle]);
    // Empty delta super-chunk: the first append becomes the reference.
    let mut b = packed::pack(&[], &p, 512).unwrap();
    assert_eq!(PackedReader::new(&b).unwrap().header().filters_chunk, 0);
    let pieces = [data(512), data(100), data(2000), vec![]];
    let mut all = vec![];
    for piece in &pieces {
        b = packed::append(&b, piece, 8).unwrap();
        all.extend_from_slice(piece);
    }
    let r = PackedReader::new(&b).unwrap();
    assert_eq!(r.header().filters_chunk, 96);
    assert_eq!(
        oxiblosc::decompress(r.filters_chunk().unwrap()).unwrap(),
        pieces[0]
    );
    assert_eq!(r.unpack().unwrap(), all);
    for (i, piece) in pieces.iter().enumerate() {
        assert_eq!(&r.decompress_chunk(i).unwrap(), piece);
    }
    // Same bytes as packing the first 512 bytes, then appending.
    let src = data(1536);
    let mut b = packed::pack(&src[..512], &p, 512).unwrap();
    b = packed::append(&b, &src[512..1024], 8).unwrap();
    b = packed::append(&b, &src[1024..], 8).unwrap();
    assert_eq!(b, packed::pack(&src, &p, 512).unwrap());
}

/// A buffer with all four ancillary chunks, laid out by hand; the reader
/// finds them and append keeps them.
fn with_all_ancillary() -> (Vec<u8>, Vec<u8>) {
    let p = CParams::default().typesize(1).filters(&[]);
    let anc: Vec<Vec<u8>> = (0..4).map(|k| blosc1(&data(10 + k), &p)).collect();
    let src = data(700);
    let chunks: Vec<Vec<u8>> = src.chunks(300).map(|c| blosc1(c, &p)).collect();
    let n = chunks.len();
    let anc_len: usize = anc.iter().map(Vec::len).sum();
    let body: usize = chunks.iter().map(Vec::len).sum();
    let cbytes = 96 + anc_len + body + 8 * n;
    let nbytes = 96 + (10 + 11 + 12 + 13) + 700 + 8 * n;
    let mut offs = [0i64; 4];
    let mut at = 96;
    for (k, c) in anc.iter().enumerate() {
        offs[k] = at as i64;
        at += c.len();
    }
    // No delta, so no filters chunk may be present: drop it.
    let mut b = header_bytes(
        0,
        5,
        0,
        300,
        n as i64,
        (nbytes - 10) as i64,
        (cbytes - anc[0].len()) as i64,
        [
            0,
            offs[1] - anc[0].len() as i64,
            offs[2] - anc[0].len() as i64,
            offs[3] - anc[0].len() as i64,
        ],
        (cbytes - anc[0].len() - 8 * n) as i64,
    );
    for c in &anc[1..] {
        b.extend_from_slice(c);
    }
    let mut starts = vec![];
    for c in &chunks {
        starts.extend_from_slice(&(b.len() as i64).to_le_bytes());
        b.extend_from_slice(c);
    }
    b.extend_from_slice(&starts);
    assert_eq!(b.len(), cbytes - anc[0].len());
    (b, src)
}

#[test]
fn ancillary_chunks_are_found_and_kept() {
    let (b, src) = with_all_ancillary();
    let r = PackedReader::new(&b).unwrap();
    assert!(r.filters_chunk().is_none());
    assert_eq!(
        oxiblosc::decompress(r.codec_chunk().unwrap()).unwrap(),
        data(11)
    );
    assert_eq!(
        oxiblosc::decompress(r.metadata_chunk().unwrap()).unwrap(),
        data(12)
    );
    assert_eq!(
        oxiblosc::decompress(r.userdata_chunk().unwrap()).unwrap(),
        data(13)
    );
    assert_eq!(r.unpack().unwrap(), src);
    let b2 = packed::append(&b, b"tail", 1).unwrap();
    let r2 = PackedReader::new(&b2).unwrap();
    assert_eq!(r2.userdata_chunk(), r.userdata_chunk());
    assert_eq!(r2.header().codec_chunk, r.header().codec_chunk);
    let mut all = src.clone();
    all.extend_from_slice(b"tail");
    assert_eq!(r2.unpack().unwrap(), all);
}

/// Sample buffers for the hostile tests, with their data.
fn samples() -> Vec<(&'static str, Vec<u8>, Vec<u8>)> {
    let mut v = vec![];
    let src = data(3000);
    let p = CParams::default().codec(Codec::Lz4).typesize(4);
    v.push((
        "lz4 shuffle",
        packed::pack(&src, &p, 1024).unwrap(),
        src.clone(),
    ));
    let p = CParams::default()
        .typesize(2)
        .filters(&[Filter::Delta, Filter::Shuffle]);
    v.push((
        "blosclz delta",
        packed::pack(&src[..1500], &p, 600).unwrap(),
        src[..1500].to_vec(),
    ));
    let p = CParams::default().clevel(0).typesize(1);
    v.push((
        "memcpyed",
        packed::pack(&src[..200], &p, 64).unwrap(),
        src[..200].to_vec(),
    ));
    v.push(("empty", packed::pack(&[], &p, 64).unwrap(), vec![]));
    let (b, s) = with_all_ancillary();
    v.push(("ancillary", b, s));
    v
}

/// Positions where a flipped bit must give an `Err` or the right data: the
/// packed header, the starts array, and each chunk's nbytes and cbytes.
fn guarded(b: &[u8]) -> Vec<bool> {
    let r = PackedReader::new(b).unwrap();
    let mut g = vec![false; b.len()];
    g[..HEADER_LEN].fill(true);
    let starts = r.header().data_starts as usize;
    g[starts..].fill(true);
    let mut chunk_starts: Vec<usize> = (0..r.nchunks())
        .map(|i| r.chunk(i).unwrap().as_ptr() as usize - b.as_ptr() as usize)
        .collect();
    for c in [
        r.filters_chunk(),
        r.codec_chunk(),
        r.metadata_chunk(),
        r.userdata_chunk(),
    ]
    .into_iter()
    .flatten()
    {
        chunk_starts.push(c.as_ptr() as usize - b.as_ptr() as usize);
    }
    for s in chunk_starts {
        g[s + 4..s + 8].fill(true);
        g[s + 12..s + 16].fill(true);
    }
    g
}

#[test]
fn every_truncation_fails_cleanly() {
    for (name, b, _) in samples() {
        for k in 0..b.len() {
            let t = &b[..k];
            assert!(
                PackedReader::new(t).is_err(),
                "{name}: truncated to {k} opened"
            );
            assert!(
                packed::unpack(t).is_err(),
                "{name}: truncated to {k} unpacked"
            );
            assert!(packed::append(t, b"x", 1).is_err(), "{name}: {k}");
        }
    }
}

#[test]
fn every_bit_flip_is_right_or_an_error() {
    let extra = blosc1(b"abcdefgh", &CParams::default().typesize(2));
    for (name, b, src) in samples() {
        let g = guarded(&b);
        let mut right = 0;
        for pos in 0..b.len() {
            for bit in 0..8 {
                let mut f = b.clone();
                f[pos] ^= 1 << bit;
                counting::reset_largest();
                let out = PackedReader::new(&f).and_then(|r| {
                    let _ = r.decompress_chunk(r.nchunks().saturating_sub(1));
                    r.unpack()
                });
                let largest = counting::largest();
                assert!(
                    largest <= src.len().max(b.len()) + (1 << 20),
                    "{name}: flip {pos}.{bit} allocated {largest} bytes"
                );
                match out {
                    Ok(d) if d == src => right += 1,
                    Ok(d) => {
                        assert!(!g[pos], "{name}: flip {pos}.{bit} gave wrong data");
                        assert_eq!(d.len(), src.len(), "{name}: flip {pos}.{bit}");
                    }
                    Err(_) => {}
                }
                // Bytes 80..95 and flags1..3 are ignored.
                if (80..96).contains(&pos) || (1..4).contains(&pos) {
                    assert!(PackedReader::new(&f).unwrap().unpack().unwrap() == src);
                }
                let _ = packed::append(&f, b"abcd", 2);
                let _ = packed::append_chunk(&f, &extra);
            }
        }
        assert!(right > 0, "{name}");
    }
}

/// `bytes` with one i64 field of the header set to `v`.
fn with_i64(b: &[u8], at: usize, v: i64) -> Vec<u8> {
    let mut f = b.to_vec();
    f[at..at + 8].copy_from_slice(&v.to_le_bytes());
    f
}

#[test]
fn absurd_fields_fail_fast_with_little_allocation() {
    // A bare 96-byte header claiming a huge super-chunk.
    for (nchunks, nbytes) in [
        (i64::MAX, i64::MAX),
        (1 << 40, 1 << 60),
        (-1, 96),
        (1, 1 << 50),
        (0, i64::MAX),
    ] {
        let b = header_bytes(0, 5, 1, 1 << 20, nchunks, nbytes, 96, [0; 4], 96);
        counting::reset_largest();
        assert!(PackedReader::new(&b).is_err(), "{nchunks} {nbytes}");
        assert!(packed::unpack(&b).is_err());
        assert!(packed::append(&b, b"x", 1).is_err());
        let largest = counting::largest();
        assert!(
            largest < 4096,
            "{nchunks}/{nbytes}: allocated {largest} bytes"
        );
    }
    let (_, b, _) = samples().swap_remove(0);
    for at in [16, 24, 32, 40, 48, 56, 64, 72] {
        for v in [
            i64::MIN,
            -96,
            -1,
            1,
            95,
            96,
            97,
            i64::MAX,
            b.len() as i64 + 8,
            1 << 40,
        ] {
            let f = with_i64(&b, at, v);
            if f == b {
                continue;
            }
            counting::reset_largest();
            assert!(PackedReader::new(&f).is_err(), "field {at} = {v}");
            assert!(counting::largest() < 4096, "field {at} = {v}");
        }
    }
    // Starts pointing anywhere.
    let r = PackedReader::new(&b).unwrap();
    let s = r.header().data_starts as usize;
    for v in [0, 95, 96 + 1, i64::MAX, -1, b.len() as i64, s as i64] {
        let f = with_i64(&b, s + 8, v);
        assert!(PackedReader::new(&f).is_err(), "start 1 = {v}");
    }
    // The chunk index is checked.
    assert!(matches!(
        r.decompress_chunk(r.nchunks()),
        Err(Error::InvalidParam(_))
    ));
    assert!(r.chunk(usize::MAX).is_err());
}

#[test]
fn append_compressed_chunks() {
    let p = CParams::default().typesize(4);
    let src = data(5000);
    let mut b = packed::pack(&src[..3000], &p, 1000).unwrap();
    // Any chunk the crate reads goes in verbatim, a Blosc2 one included.
    let c2 = compress(&src[3000..], &p).unwrap();
    assert_eq!(c2[0], 5, "a Blosc2 chunk");
    b = packed::append_chunk(&b, &c2).unwrap();
    let r = PackedReader::new(&b).unwrap();
    assert_eq!(r.chunk(3).unwrap(), &c2[..]);
    assert_eq!(
        r.header().chunksize,
        0,
        "a 2000-byte chunk after 1000-byte ones"
    );
    assert_eq!(r.unpack().unwrap(), src);
    // Not a whole chunk: refused.
    let mut longer = c2.clone();
    longer.push(0);
    assert!(matches!(
        packed::append_chunk(&b, &longer),
        Err(Error::InvalidParam(_))
    ));
    assert!(packed::append_chunk(&b, &c2[..c2.len() - 1]).is_err());
    // Delta: refused on an empty super-chunk, taken as data - reference after.
    let pd = CParams::default().typesize(1).filters(&[Filter::Delta]);
    let empty = packed::pack(&[], &pd, 100).unwrap();
    assert!(packed::append_chunk(&empty, &c2).is_err());
    let one = packed::append(&empty, &src[..100], 1).unwrap();
    let diff: Vec<u8> = src[100..200]
        .iter()
        .zip(&src[..100])
        .map(|(a, b)| a.wrapping_sub(*b))
        .collect();
    let two = packed::append_chunk(&one, &blosc1(&diff, &pd.clone().filters(&[]))).unwrap();
    assert_eq!(packed::unpack(&two).unwrap(), src[..200]);
}

/// A chunk whose header claims far more bytes than its streams hold is
/// refused before the reader sizes its output by that claim.
#[test]
fn chunk_claiming_huge_nbytes_fails_before_allocating_it() {
    let d: Vec<u8> = (0..1000u32).map(|i| (i % 10) as u8).collect();
    let good = packed::pack(&d, &CParams::default().codec(Codec::Lz4).typesize(4), 1000).unwrap();
    let r = PackedReader::new(&good).unwrap();
    let chunk = r.chunk(0).unwrap();
    let at = chunk.as_ptr() as usize - good.as_ptr() as usize;
    let mut bad = good.clone();
    bad[at + 4..at + 8].copy_from_slice(&0x7fff_0000u32.to_le_bytes());
    // the packed header's total (i64 at 24) made to agree with the claim
    let total = i64::from_le_bytes(bad[24..32].try_into().unwrap()) - 1000 + 0x7fff_0000;
    bad[24..32].copy_from_slice(&total.to_le_bytes());
    counting::reset_largest();
    let res = PackedReader::new(&bad).and_then(|r| r.unpack());
    let largest = counting::largest();
    let e = res.expect_err("a 2 GiB claim decoded");
    assert!(e.to_string().contains("chunk"), "{e}");
    assert!(largest < 1 << 20, "allocated {largest} bytes");
}
