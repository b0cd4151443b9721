//! Chunk decoding: validate, decompress (serial and parallel, which must
//! agree), decompress_into a small buffer, getitem, block masks, VL blocks,
//! and the streaming decoder of chunk sequences (`stream::ChunkDecoder`),
//! which must agree when the input is one chunk.
#![no_main]
use std::io::Read;

use libfuzzer_sys::fuzz_target;
use oxiblosc::stream::ChunkDecoder;
use oxiblosc::{ChunkHeader, Decompressor};

#[path = "common.rs"]
mod common;

/// This target's output limit, below the shared [`common::MAX_OUTPUT`]:
/// with 64 MiB, one corpus input in eight (mutated sizes between 16 and
/// 64 MiB) took most of the time, and the target ran 30-60 inputs a
/// second. Its 2,371-input corpus, run once: 107 s and 2,343 edges at
/// 64 MiB, 22 s and 2,341 at 16 MiB, 3.8 s and 2,329-2,332 at 4 or 8 MiB.
const MAX_OUTPUT: usize = 16 << 20;

fuzz_target!(
    init: {
        // Every chunk of two blocks (or copy pieces) or more goes to the
        // pool in the 2-thread decoder: the library decodes chunks under
        // 128 KiB inline, and most inputs here are a few hundred bytes, so
        // until session 44 the parallel decoder saw only the corpus's
        // large chunks, and never a VL-block chunk (source coverage of the
        // corpus, fuzz/README.md). Set before any thread runs.
        // SAFETY: no other thread exists yet to read the environment.
        unsafe { std::env::set_var("OXIBLOSC_INLINE_BELOW", "0") }
    },
    |data: &[u8]| {
        let dparams = |n| common::dparams(n).max_output(MAX_OUTPUT);
        let valid = oxiblosc::chunk::validate(data);
        let mut d1 = Decompressor::new(dparams(1));
        let serial = d1.decompress(data);
        if let Ok(out) = &serial {
            let h = ChunkHeader::parse(data).unwrap();
            assert_eq!(out.len(), h.nbytes);
            assert!(valid.is_ok(), "decoded but does not validate");
            // Parallel decoding gives the same bytes.
            let mut d2 = Decompressor::new(dparams(2));
            let par = d2.decompress(data).expect("serial Ok, parallel Err");
            assert_eq!(&par, out);
            // getitem agrees with the whole.
            let ts = usize::from(h.typesize);
            let items = h.nbytes / ts;
            if !h.is_vlblocks() && items > 0 {
                for (start, n) in [(0, 1), (items / 2, items - items / 2), (items - 1, 1)] {
                    if let Ok(got) = d1.getitem(data, start, n) {
                        assert_eq!(
                            got,
                            out[start * ts..(start + n) * ts],
                            "getitem {start} {n}"
                        );
                    }
                }
            }
            if h.is_vlblocks() {
                if let Ok(blocks) = d1.vl_blocks(data) {
                    assert_eq!(blocks.concat(), *out);
                }
            } else if h.nblocks() <= 4096 {
                // A mask from the chunk's own bytes: kept blocks are the whole
                // decode's, masked ones keep the sentinel; 1 and 2 threads.
                let mask: Vec<bool> = (0..h.nblocks())
                    .map(|i| data[i % data.len()] & (1 << (i % 8)) != 0)
                    .collect();
                let bs = h.blocksize.max(1);
                for d in [&mut d1, &mut d2] {
                    let mut got = vec![0xA5u8; h.nbytes];
                    let n = d.decompress_masked_into(data, &mask, &mut got);
                    assert_eq!(n.expect("whole Ok, masked Err"), h.nbytes);
                    for (i, (g, o)) in got.chunks(bs).zip(out.chunks(bs)).enumerate() {
                        if mask[i] {
                            assert!(g.iter().all(|&b| b == 0xA5), "masked block {i}");
                        } else {
                            assert_eq!(g, o, "kept block {i}");
                        }
                    }
                }
            }
        } else {
            // A chunk one thread refuses, the pool refuses too (every block's
            // error reaches the caller, none is dropped by a worker).
            let mut d2 = Decompressor::new(dparams(2));
            assert!(d2.decompress(data).is_err(), "serial Err, parallel Ok");
            let _ = d1.getitem(data, 0, 4);
            let _ = d1.getitem(data, 3, 1 << 12);
            let _ = d1.vl_blocks(data);
        }
        let dec = ChunkDecoder::with_params(data, dparams(1));
        let mut streamed = Vec::new();
        let limit = MAX_OUTPUT as u64 + 1;
        if dec.take(limit).read_to_end(&mut streamed).is_ok() && (streamed.len() as u64) < limit
            && let (Ok(out), Ok(h)) = (&serial, ChunkHeader::parse(data))
                && h.cbytes == data.len() {
                    assert!(
                        streamed == *out,
                        "the stream and the chunk decode differently"
                    );
                }
        let mut small = vec![0u8; 4096];
        let _ = d1.decompress_into(data, &mut small);
        // decompress_typed has no output limit: only for chunks within it.
        if valid.is_ok_and(|h| h.nbytes <= MAX_OUTPUT) {
            let _ = oxiblosc::decompress_typed::<u32>(data);
        }
    }
);
