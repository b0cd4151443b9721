//! Hostile bytes: every truncation and every single-bit flip of the header
//! and block-start table of a sample of real chunks, and random corruption
//! anywhere, either decode to the declared length or fail with an `Err` —
//! never a panic, and never an allocation larger than the declared size.

mod support;
use oxiblosc::{ChunkHeader, DParams, Decompressor};
use proptest::prelude::*;
use support::corpus::*;
use support::counting;

#[global_allocator]
static GLOBAL: counting::Counting = counting::Counting;

/// Above this declared size the test decodes into a small buffer instead
/// (and expects `DstTooSmall`), to keep memory and time bounded.
const BIG: usize = 64 << 20;

/// Try every decoding entry point on `bytes`; panics (failing the test) only
/// if a result breaks the contract.
fn attempt(d: &mut Decompressor, bytes: &[u8], what: &str) {
    let declared = ChunkHeader::parse(bytes).map(|h| h.nbytes);
    counting::reset_largest();
    match declared {
        Ok(n) if n <= BIG => {
            if let Ok(out) = d.decompress(bytes) {
                assert_eq!(out.len(), n, "{what}: Ok with the wrong length");
            }
            let largest = counting::largest();
            // Scratch, codec contexts and tables are small; nothing may be
            // sized by an unchecked field beyond the declared output.
            let bound = n.max(bytes.len()) + (1 << 20);
            assert!(
                largest <= bound,
                "{what}: allocated {largest} bytes for a {n}-byte chunk"
            );
            let _ = d.getitem(bytes, 0, 16);
            let _ = d.getitem(bytes, n / 2, 3);
        }
        Ok(n) => {
            let mut small = vec![0u8; 1 << 20];
            assert!(
                d.decompress_into(bytes, &mut small).is_err(),
                "{what}: {n} bytes into 1 MiB"
            );
        }
        Err(_) => {
            assert!(
                d.decompress(bytes).is_err(),
                "{what}: header rejected but decode worked"
            );
        }
    }
}

/// A spread of vectors: every codec, filter, special, dict, VL and Blosc1 kind.
fn sample() -> Vec<(String, Vec<u8>)> {
    let all = vectors(&["chunk", "blosc1"]);
    let mut picked = Vec::new();
    for (i, v) in all.iter().enumerate() {
        let name = v["name"].as_str().unwrap().to_owned();
        let size = v["file_nbytes"].as_u64().unwrap();
        let interesting = [
            "dict",
            "vlblock",
            "special",
            "zeros",
            "nan",
            "repeat",
            "delta",
            "bytedelta",
            "memcpy",
        ]
        .iter()
        .any(|k| name.contains(k));
        if (interesting || i % 9 == 0) && size <= 40_000 {
            picked.push((name, read(v)));
        }
    }
    picked
}

#[test]
fn every_truncation_of_sampled_chunks() {
    let mut d = Decompressor::new(DParams::default());
    let sample = sample();
    assert!(sample.len() >= 20, "sample too small: {}", sample.len());
    for (name, bytes) in &sample {
        for len in 0..bytes.len() {
            attempt(&mut d, &bytes[..len], &format!("{name} cut at {len}"));
        }
    }
}

#[test]
fn every_bit_flip_of_header_and_bstarts() {
    let mut d = Decompressor::new(DParams::default());
    for (name, bytes) in &sample() {
        let h = ChunkHeader::parse(bytes).unwrap();
        let meta_end = if h.is_memcpyed() || h.special().is_some() {
            h.header_len()
        } else {
            h.header_len() + 4 * h.nblocks() + if h.use_dict() { 4 } else { 0 }
        };
        let mut m = bytes.clone();
        for byte in 0..meta_end.min(bytes.len()) {
            for bit in 0..8 {
                m[byte] ^= 1 << bit;
                attempt(&mut d, &m, &format!("{name} bit {bit} of byte {byte}"));
                m[byte] ^= 1 << bit;
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, failure_persistence: None, ..ProptestConfig::default() })]

    /// Random corruption anywhere in a chunk (payloads included).
    #[test]
    fn random_corruption_never_panics(which in any::<prop::sample::Index>(), edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8)) {
        thread_local! { static SAMPLE: Vec<(String, Vec<u8>)> = sample(); }
        SAMPLE.with(|s| {
            let (name, bytes) = &s[which.index(s.len())];
            let mut m = bytes.clone();
            for (at, v) in &edits {
                let i = at.index(m.len());
                m[i] = *v;
            }
            let mut d = Decompressor::new(DParams::default());
            attempt(&mut d, &m, &format!("{name} with {edits:?}"));
        });
    }

    /// Arbitrary bytes behind a plausible header.
    #[test]
    fn garbage_never_panics(head in prop::collection::vec(any::<u8>(), 16..48), tail in prop::collection::vec(any::<u8>(), 0..600)) {
        let mut m = head;
        m[2] |= 0x05; // mostly extended headers
        m.extend_from_slice(&tail);
        let mut d = Decompressor::new(DParams::default());
        attempt(&mut d, &m, "garbage");
    }
}

/// A tiny chunk claiming a huge size (every codec format, with and without
/// a filter, blocks of every scale, streams that end early, stored-raw
/// sizes and small codec streams): every entry point fails or succeeds
/// allocating at most a few KB plus the codec's expansion ratio times the
/// input (what the input could back), never what the header claims.
#[test]
fn tiny_chunks_claiming_huge_sizes_allocate_little() {
    let mut rng = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let mut tried = 0;
    for format in 0u8..=4 {
        // The largest expansion per input byte of each codec format.
        let ratio = [256usize, 256, 32, 1040, 32 * 1024][format as usize];
        for filtered in [false, true] {
            for (nbytes, blocksize) in [
                (i32::MAX as usize - 32, i32::MAX as usize - 32),
                (i32::MAX as usize - 32, 1 << 29),
                (1 << 28, 1 << 20),
                (1 << 24, 4096),
            ] {
                for csize in [1u32, 5, 40, 1000, blocksize as u32] {
                    for nthreads in [1, 2] {
                        let mut c = vec![0u8; 32];
                        c[0] = 5;
                        c[1] = 1;
                        c[2] = 0x05 | 0x10 | (format << 5); // extended, no split
                        c[3] = 4;
                        c[4..8].copy_from_slice(&(nbytes as u32).to_le_bytes());
                        c[8..12].copy_from_slice(&(blocksize as u32).to_le_bytes());
                        if filtered {
                            c[21] = 1; // shuffle
                        }
                        let nblocks = nbytes.div_ceil(blocksize).min(4);
                        let table = 32 + 4 * nblocks;
                        for b in 0..nblocks {
                            c.extend_from_slice(&((table + 9 * b) as u32).to_le_bytes());
                        }
                        for _ in 0..nblocks {
                            c.extend_from_slice(&csize.to_le_bytes());
                            c.extend((0..5).map(|_| next() as u8));
                        }
                        let len = c.len() as u32;
                        c[12..16].copy_from_slice(&len.to_le_bytes());
                        let bound = (512 << 10) + ratio * c.len();
                        counting::reset_largest();
                        let mut d = Decompressor::new(DParams::default().nthreads(nthreads));
                        let _ = oxiblosc::chunk::validate(&c);
                        let _ = d.decompress(&c);
                        let _ = d.getitem(&c, 0, 16);
                        let _ = d.getitem(&c, 0, 1 << 20);
                        let mut small = vec![0u8; 1 << 16];
                        let _ = d.decompress_into(&c, &mut small);
                        let largest = counting::largest();
                        assert!(
                            largest <= bound,
                            "format {format} filtered {filtered} nbytes {nbytes} blocksize \
                             {blocksize} csize {csize} nthreads {nthreads}: allocated {largest}"
                        );
                        tried += 1;
                    }
                }
            }
        }
    }
    assert!(tried >= 400);
}

/// getitem on the short last block of a chunk whose header claims 512 MiB
/// blocks sizes its buffer by that block, not by the header's block size.
#[test]
fn getitem_of_a_short_last_block_allocates_by_that_block() {
    let bs = oxiblosc::MAX_BLOCKSIZE;
    let nbytes = bs + 16;
    let mut c = vec![0u8; 32];
    c[0] = 5;
    c[1] = 1;
    c[2] = 0x05 | 0x10; // extended, BloscLZ, no split
    c[3] = 1;
    c[4..8].copy_from_slice(&(nbytes as u32).to_le_bytes());
    c[8..12].copy_from_slice(&(bs as u32).to_le_bytes());
    c.extend_from_slice(&40u32.to_le_bytes()); // block 0: a stream past the end
    c.extend_from_slice(&44u32.to_le_bytes()); // block 1: 16 raw bytes
    c.extend_from_slice(&1000u32.to_le_bytes());
    c.extend_from_slice(&16u32.to_le_bytes());
    c.extend(1..=16u8);
    let len = c.len() as u32;
    c[12..16].copy_from_slice(&len.to_le_bytes());
    let mut d = Decompressor::new(DParams::default());
    counting::reset_largest();
    let got = d.getitem(&c, bs, 16).unwrap();
    assert_eq!(got, (1..=16u8).collect::<Vec<_>>());
    assert!(d.getitem(&c, 0, 1).is_err());
    assert!(d.decompress(&c).is_err());
    let largest = counting::largest();
    assert!(largest <= 64 << 10, "allocated {largest}");
}

/// The streaming decoders keep `DParams::max_output` before sizing their
/// output: a 32-byte special chunk declaring 2 GiB (it validates: a special
/// chunk backs any size) is refused with a few KB allocated. Before, the
/// stream sized its buffer by the header first (found when the fuzz
/// targets began streaming, session 17).
#[test]
fn streams_keep_the_output_limit_before_allocating() {
    use oxiblosc::stream::ChunkDecoder;
    use oxiblosc::{CParams, SpecialValue};
    use std::io::Read;
    let nbytes = (1usize << 31) - 64;
    let chunk = oxiblosc::special_chunk(
        &CParams::default().typesize(1),
        nbytes,
        SpecialValue::Uninit,
        &[],
    )
    .unwrap();
    assert_eq!(chunk.len(), 32);
    counting::reset_largest();
    let mut out = Vec::new();
    let err = ChunkDecoder::with_params(&chunk[..], DParams::default().max_output(1 << 20))
        .read_to_end(&mut out)
        .unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::InvalidData);
    assert!(err.to_string().contains("output limit"), "{err}");
    let largest = counting::largest();
    assert!(largest <= 64 << 10, "allocated {largest}");
    // Within the limit, the same chunk kind streams.
    let small = oxiblosc::special_chunk(
        &CParams::default().typesize(1),
        4096,
        SpecialValue::Zeros,
        &[],
    )
    .unwrap();
    let mut out = Vec::new();
    ChunkDecoder::with_params(&small[..], DParams::default().max_output(1 << 20))
        .read_to_end(&mut out)
        .unwrap();
    assert_eq!(out, vec![0u8; 4096]);
}
