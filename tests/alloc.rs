//! After its first chunk, a `Compressor` / `Decompressor` allocates nothing
//! on the heap per chunk or per block (`compress_into` / `decompress_into`
//! with caller buffers), for every codec and filter, inline and with a
//! pool of 2 threads.
//!
//! A counting global allocator sees every allocation of every thread of
//! this process (the pool's included); this file holds a single test so
//! nothing else runs while it counts.
//!
//! The one exception is rayon's, and it is counted exactly: each parallel
//! call enters the pool once (`ThreadPool::install` from outside the pool
//! pushes one job into rayon's global injector queue, a crossbeam-deque
//! `Injector`), and that queue is a linked list of 63-slot blocks of
//! 24-byte slots: every 63rd job allocates the next 1,520-byte block (and
//! frees the old one). So 2 threads cost one 1,520-byte allocation per 63
//! chunks (24 bytes a chunk, amortised), and no other allocation at all.

mod support;
use oxiblosc::{CParams, Codec, Compressor, DParams, Decompressor, Filter, SpecialValue};
use support::counting;

#[global_allocator]
static GLOBAL: counting::Counting = counting::Counting;

/// One block of rayon's injector queue: 63 slots of (job pointer, job
/// function, state) = 63 * 24 bytes, plus the link to the next block.
const INJECTOR_BLOCK: usize = 63 * 24 + 8;

/// A noisy ramp of u32: every codec compresses it, none to nothing.
fn data(n: usize) -> Vec<u8> {
    let mut s = 1u32;
    (0..n as u32 / 4)
        .flat_map(|i| {
            s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (i / 4 + (s >> 28)).to_le_bytes()
        })
        .collect()
}

/// Allocations (count, bytes) made while compressing and decompressing
/// `rounds` chunks after one warm-up chunk.
fn count(p: &CParams, nthreads: usize, src: &[u8], rounds: usize) -> (usize, usize) {
    let mut c = Compressor::new(p.clone().nthreads(nthreads));
    let mut d = Decompressor::new(DParams::default().nthreads(nthreads));
    let mut chunk = vec![0u8; src.len() + 32];
    let mut back = vec![0u8; src.len()];
    let mut run = |c: &mut Compressor, d: &mut Decompressor| {
        let n = c.compress_into(src, &mut chunk).unwrap();
        assert!(n < src.len(), "{p:?}: not compressed");
        let m = d.decompress_into(&chunk[..n], &mut back).unwrap();
        assert!(m == src.len() && back == src, "{p:?}: no round trip");
    };
    run(&mut c, &mut d);
    let (a0, b0) = counting::totals();
    for _ in 0..rounds {
        run(&mut c, &mut d);
    }
    let (a1, b1) = counting::totals();
    (a1 - a0, b1 - b0)
}

#[test]
fn warm_compressors_do_not_allocate() {
    let src = data(4 << 20);
    let codecs = [
        (Codec::BloscLz, 5),
        (Codec::Lz4, 5),
        (Codec::Lz4Hc, 5),
        (Codec::Zlib, 5),
        (Codec::Zstd, 3),
    ];
    let filter_sets: [&[Filter]; 3] = [
        &[Filter::Shuffle],
        &[Filter::BitShuffle],
        &[Filter::Delta, Filter::Shuffle],
    ];
    let rounds = 8;
    let mut report = Vec::new();
    let mut serial_allocs = 0;
    let mut parallel = (0, 0, 0);
    let mut per_window = Vec::new();
    for (codec, clevel) in codecs {
        for filters in filter_sets {
            // Small blocks: many per chunk, several per worker.
            let p = CParams::default()
                .codec(codec)
                .clevel(clevel)
                .typesize(4)
                .filters(filters)
                .blocksize(128 * 1024);
            let (n1, b1) = count(&p, 1, &src, rounds);
            let (n2, b2) = count(&p, 2, &src, rounds);
            serial_allocs += n1;
            parallel.0 += n2;
            parallel.1 += b2;
            parallel.2 += 2 * rounds;
            per_window.push((n2, b2));
            report.push(format!(
                "{codec:?} {filters:?}: nthreads 1: {n1} allocs ({b1} B), nthreads 2: {n2} ({b2} B)"
            ));
        }
    }
    eprintln!("{}", report.join("\n"));
    eprintln!(
        "nthreads 2: {} allocations, {} bytes over {} parallel calls",
        parallel.0, parallel.1, parallel.2
    );
    assert_eq!(
        serial_allocs,
        0,
        "inline runs allocated:\n{}",
        report.join("\n")
    );
    // Each window enters the pool 2 * rounds (< 63) times: at most one
    // injector block, 1,520 bytes.
    assert!(
        per_window
            .iter()
            .all(|&(n, b)| n <= 1 && b == n * INJECTOR_BLOCK),
        "parallel runs allocated more than rayon's injector blocks:\n{}",
        report.join("\n")
    );
    // Reading an in-memory super-chunk back into a caller's buffer: the
    // chunk is borrowed from the frame, nothing is copied or allocated.
    let src = data(256 << 10);
    let mut sc = oxiblosc::schunk::SChunk::builder()
        .cparams(CParams::default().codec(Codec::Lz4).typesize(4))
        .chunksize(64 << 10)
        .build_memory()
        .unwrap();
    for piece in src.chunks(64 << 10) {
        sc.append_buffer(piece).unwrap();
    }
    let mut out = vec![0u8; 64 << 10];
    sc.decompress_chunk(0, &mut out).unwrap();
    let (a0, _) = counting::totals();
    for i in 0..sc.nchunks() {
        assert_eq!(sc.decompress_chunk(i, &mut out).unwrap(), 64 << 10);
        assert!(out[..] == src[i * (64 << 10)..(i + 1) * (64 << 10)]);
    }
    let (a1, _) = counting::totals();
    assert_eq!(a1 - a0, 0, "SChunk::decompress_chunk allocated");
    // decompress_chunk_vec allocates its output and nothing else (the
    // chunk is borrowed, not copied).
    let (a0, _) = counting::totals();
    for i in 0..sc.nchunks() {
        assert_eq!(sc.decompress_chunk_vec(i).unwrap().len(), 64 << 10);
    }
    let (a1, _) = counting::totals();
    assert_eq!(
        a1 - a0,
        sc.nchunks(),
        "decompress_chunk_vec: one allocation a chunk"
    );
    // Special chunks (whole, masked, getitem) and block masks of a regular
    // chunk fill the caller's buffer without allocating.
    let p = CParams::default().typesize(4).blocksize(16 << 10);
    let mut d = Decompressor::new(DParams::default());
    let mut out = vec![0u8; 64 << 10];
    let mask = [true, false, false, true];
    let regular = oxiblosc::compress(&src[..64 << 10], &p).unwrap();
    let mut specials = vec![regular];
    for kind in [SpecialValue::Zeros, SpecialValue::Nan, SpecialValue::Value] {
        specials.push(oxiblosc::special_chunk(&p, 64 << 10, kind, &[1, 2, 3, 4]).unwrap());
    }
    let decode_all = |d: &mut Decompressor, out: &mut [u8]| {
        for c in &specials {
            assert_eq!(d.decompress_into(c, out).unwrap(), 64 << 10);
            assert_eq!(d.decompress_masked_into(c, &mask, out).unwrap(), 64 << 10);
            assert_eq!(d.getitem_into(c, 1001, 3000, out).unwrap(), 12_000);
        }
    };
    decode_all(&mut d, &mut out);
    let (a0, _) = counting::totals();
    decode_all(&mut d, &mut out);
    let (a1, _) = counting::totals();
    assert_eq!(a1 - a0, 0, "special chunks or block masks allocated");
    // Over all calls (warm-ups included), one block per 63 pool entries.
    let entries = per_window.len() * 2 * (rounds + 1);
    assert!(
        parallel.0 <= entries.div_ceil(63),
        "{} injector blocks for {entries} pool entries",
        parallel.0
    );
}
