//! Block-parallel compression and decompression: any `nthreads` gives the
//! chunk `nthreads = 1` gives, byte for byte (also when the destination is
//! tight enough to make the codecs stop early or the chunk fall back to
//! memcpy), and decodes to the same bytes; a corrupt chunk fails the same
//! way whatever the thread count.

use oxiblosc::{CParams, Codec, Compressor, DParams, Decompressor, Filter};

/// A small deterministic generator (xorshift64*).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

fn data(kind: &str, n: usize) -> Vec<u8> {
    let mut r = Rng(0x9E37_79B9_7F4A_7C15);
    match kind {
        "arange" => (0..n as u64 / 8 + 1)
            .flat_map(|v| v.to_le_bytes())
            .take(n)
            .collect(),
        "noisy" => (0..n / 4 + 1)
            .flat_map(|i| {
                let v = (i as f32 * 0.001).sin() + (r.next() % 1000) as f32 * 1e-6;
                v.to_le_bytes()
            })
            .take(n)
            .collect(),
        "random" => (0..n).map(|_| r.next() as u8).collect(),
        // Half compressible, half not: the tail of the chunk runs short of
        // room when the destination is tight.
        "mixed" => (0..n)
            .map(|i| {
                if i < n / 2 {
                    (i / 64) as u8
                } else {
                    r.next() as u8
                }
            })
            .collect(),
        "zeros" => vec![0; n],
        other => panic!("unknown data kind {other}"),
    }
}

const CODECS: [Codec; 5] = [
    Codec::BloscLz,
    Codec::Lz4,
    Codec::Lz4Hc,
    Codec::Zlib,
    Codec::Zstd,
];

fn chunk_with(p: &CParams, nthreads: usize, src: &[u8], room: usize) -> Result<Vec<u8>, String> {
    let mut c = Compressor::new(p.clone().nthreads(nthreads));
    let mut out = vec![0u8; room];
    // Twice through the same compressor: warm contexts must not change a byte.
    let first = c.compress_into(src, &mut out).map_err(|e| e.to_string())?;
    let first = out[..first].to_vec();
    let n = c.compress_into(src, &mut out).map_err(|e| e.to_string())?;
    assert_eq!(
        out[..n],
        first[..],
        "second chunk of the same compressor differs"
    );
    Ok(first)
}

/// Run `f` on a thread of its own and fail unless it ends within `limit`:
/// a hang fails the test instead of stalling the suite. Its panics are the
/// test's.
fn within(limit: std::time::Duration, f: impl FnOnce() + Send + 'static) {
    use std::sync::mpsc::RecvTimeoutError;
    let (tx, rx) = std::sync::mpsc::channel();
    let h = std::thread::spawn(move || {
        f();
        let _ = tx.send(());
    });
    match rx.recv_timeout(limit) {
        Ok(()) => h.join().unwrap(),
        Err(RecvTimeoutError::Disconnected) => std::panic::resume_unwind(h.join().unwrap_err()),
        Err(RecvTimeoutError::Timeout) => panic!("did not end within {limit:?}"),
    }
}

fn decode_with(nthreads: usize, chunk: &[u8], len: usize) -> Result<Vec<u8>, String> {
    let mut d = Decompressor::new(DParams::default().nthreads(nthreads));
    let mut out = vec![0u8; len];
    let n = d
        .decompress_into(chunk, &mut out)
        .map_err(|e| e.to_string())?;
    out.truncate(n);
    Ok(out)
}

#[test]
fn every_thread_count_writes_the_serial_chunk() {
    let filter_sets: [&[Filter]; 5] = [
        &[Filter::Shuffle],
        &[Filter::BitShuffle],
        &[Filter::Delta, Filter::Shuffle],
        &[Filter::TruncPrec(12), Filter::Delta, Filter::BitShuffle],
        &[],
    ];
    let mut cases = 0;
    for codec in CODECS {
        for (fi, filters) in filter_sets.iter().enumerate() {
            for kind in ["arange", "noisy", "random", "mixed", "zeros"] {
                // A whole number of blocks, and a leftover block.
                for (n, blocksize) in [(1 << 20, 0), (1_000_003, 64 * 1024)] {
                    if n != 1 << 20 && !matches!(kind, "noisy" | "mixed") {
                        continue;
                    }
                    // TRUNC_PREC needs 4- or 8-byte items.
                    let ts = if fi == 3 { 4 } else { 8 };
                    let clevel = if codec == Codec::Zstd { 3 } else { 5 };
                    let p = CParams::default()
                        .codec(codec)
                        .clevel(clevel)
                        .typesize(ts)
                        .filters(filters)
                        .blocksize(blocksize);
                    let src = data(kind, n);
                    let serial = chunk_with(&p, 1, &src, n + 32).unwrap();
                    let decoded = decode_with(1, &serial, n).unwrap();
                    for nthreads in [2, 3, 4] {
                        let par = chunk_with(&p, nthreads, &src, n + 32).unwrap();
                        assert!(
                            par == serial,
                            "{codec:?} {filters:?} {kind} n={n} nthreads={nthreads}: chunk differs"
                        );
                        assert!(
                            decode_with(nthreads, &serial, n).unwrap() == decoded,
                            "{codec:?} {filters:?} {kind} n={n} nthreads={nthreads}: decode differs"
                        );
                        cases += 1;
                    }
                    if fi != 3 {
                        assert!(
                            decoded == src,
                            "{codec:?} {filters:?} {kind}: no round trip"
                        );
                    }
                }
            }
        }
    }
    assert_eq!(cases, 5 * 5 * (5 + 2) * 3);
}

/// Destinations from far too small to roomy: the parallel encoder must make
/// the serial one's decisions (codec stopped by the room left, raw streams,
/// memcpy fallback, `DstTooSmall`) at every size.
#[test]
fn tight_destinations_give_the_serial_result() {
    for codec in CODECS {
        for kind in ["mixed", "noisy"] {
            let n = 600_000;
            let p = CParams::default()
                .codec(codec)
                .clevel(5)
                .typesize(4)
                .filters(&[Filter::Shuffle])
                .blocksize(32 * 1024);
            let src = data(kind, n);
            let full = chunk_with(&p, 1, &src, n + 32).unwrap().len();
            let mut rooms: Vec<usize> = (0..12).map(|d| full.saturating_sub(d * 3001)).collect();
            rooms.extend((1..8).map(|d| full + d * 13));
            rooms.extend([n + 32, n + 31, n, n / 2, 100, 31]);
            for room in rooms {
                let serial = chunk_with(&p, 1, &src, room);
                for nthreads in [2, 3] {
                    let par = chunk_with(&p, nthreads, &src, room);
                    assert!(
                        par == serial,
                        "{codec:?} {kind} room {room} nthreads {nthreads}: {:?} vs serial {:?}",
                        par.as_ref().map(Vec::len),
                        serial.as_ref().map(Vec::len)
                    );
                }
            }
        }
    }
}

/// Flipped bytes anywhere: decoding with 2 or 3 threads succeeds exactly
/// when decoding with one does, with the same bytes.
#[test]
fn corrupt_chunks_fail_alike_in_parallel() {
    let n = 1 << 20;
    let mut r = Rng(42);
    for codec in CODECS {
        for filters in [&[Filter::Shuffle][..], &[Filter::Delta, Filter::BitShuffle]] {
            let p = CParams::default()
                .codec(codec)
                .clevel(5)
                .typesize(8)
                .filters(filters)
                .blocksize(64 * 1024);
            let good = chunk_with(&p, 1, &data("noisy", n), n + 32).unwrap();
            for _ in 0..60 {
                let mut bad = good.clone();
                for _ in 0..1 + r.next() % 4 {
                    let at = (r.next() % bad.len() as u64) as usize;
                    bad[at] ^= 1 << (r.next() % 8);
                }
                let serial = decode_with(1, &bad, n);
                for nthreads in [2, 3] {
                    let par = decode_with(nthreads, &bad, n);
                    assert_eq!(
                        par.is_ok(),
                        serial.is_ok(),
                        "{codec:?}: nthreads {nthreads} {:?} vs serial {:?}",
                        par.as_ref().err(),
                        serial.as_ref().err()
                    );
                    if let (Ok(a), Ok(b)) = (&par, &serial) {
                        assert!(a == b, "{codec:?}: corrupt chunk decodes differently");
                    }
                }
            }
        }
    }
}

/// Compressors and decompressors can move to another thread (their
/// per-worker contexts and the shared pool handle are all `Send`).
#[test]
fn compressors_are_send() {
    fn send<T: Send>(_: T) {}
    send(Compressor::new(CParams::default().nthreads(2)));
    send(Decompressor::new(DParams::default().nthreads(2)));
    let mut c = Compressor::new(CParams::default().nthreads(2));
    let src = data("noisy", 1 << 20);
    let chunk = std::thread::spawn(move || c.compress(&src).unwrap())
        .join()
        .unwrap();
    assert_eq!(
        decode_with(2, &chunk, 1 << 20).unwrap(),
        data("noisy", 1 << 20)
    );
}

/// A VL-block chunk (format version 6, CHUNK-NOTES §13) of raw-stored
/// blocks of the given payloads: BloscLZ, typesize 4, the given filter in
/// slot 0.
fn vl_chunk(payloads: &[Vec<u8>], filter: u8) -> Vec<u8> {
    let nbytes: usize = payloads.iter().map(Vec::len).sum();
    let mut c = vec![0u8; 32];
    c[0] = 6;
    c[1] = 1;
    c[2] = 0x15;
    c[3] = 4;
    c[4..8].copy_from_slice(&(nbytes as i32).to_le_bytes());
    c[8..12].copy_from_slice(&(payloads.len() as i32).to_le_bytes());
    c[16] = filter;
    c[30] = 0x01;
    let mut at = 32 + 4 * payloads.len();
    for p in payloads {
        c.extend_from_slice(&(at as i32).to_le_bytes());
        at += 4 + p.len();
    }
    for p in payloads {
        c.extend_from_slice(&(p.len() as i32).to_le_bytes());
        c.extend_from_slice(p);
    }
    let cbytes = c.len() as i32;
    c[12..16].copy_from_slice(&cbytes.to_le_bytes());
    c
}

/// The blocks of a large VL-block chunk decode in parallel to what the
/// serial path gives, and to the blocks themselves: unfiltered, the
/// payloads; shuffled, each block unshuffled on its own (trailing bytes
/// kept).
#[test]
fn vl_block_chunks_decode_alike_in_parallel() {
    let sizes = [100_000, 60_003, 1, 50_000, 0, 40_002, 70_000];
    let payloads: Vec<Vec<u8>> = sizes
        .iter()
        .enumerate()
        .map(|(i, &n)| data(if i % 2 == 0 { "noisy" } else { "random" }, n))
        .collect();
    let total: usize = sizes.iter().sum();
    for filter in [0u8, 1] {
        let chunk = vl_chunk(&payloads, filter);
        let want: Vec<Vec<u8>> = payloads
            .iter()
            .map(|p| {
                if filter == 0 {
                    return p.clone();
                }
                let n = p.len() / 4;
                let mut out = p.clone();
                for i in 0..n {
                    for j in 0..4 {
                        out[i * 4 + j] = p[j * n + i];
                    }
                }
                out
            })
            .collect();
        for nthreads in [1, 2, 3, 8] {
            let mut d = Decompressor::new(DParams::default().nthreads(nthreads));
            assert_eq!(d.vl_blocks(&chunk).unwrap(), want, "nthreads {nthreads}");
            let whole = d.decompress(&chunk).unwrap();
            assert_eq!(whole.len(), total);
            assert!(
                whole == want.concat(),
                "nthreads {nthreads} filter {filter}"
            );
        }
        // A block that claims one byte more than it holds fails alike.
        let mut bad = chunk.clone();
        let first = 32 + 4 * sizes.len();
        bad[first..first + 4].copy_from_slice(&100_001i32.to_le_bytes());
        for nthreads in [1, 2] {
            let mut d = Decompressor::new(DParams::default().nthreads(nthreads));
            assert!(d.decompress(&bad).is_err(), "nthreads {nthreads}");
        }
    }
}

/// Chunks that fall back to memcpy part-way through (incompressible data
/// in a destination of `nbytes + 32`): the workers stop at the block that
/// does not fit and the call returns the serial chunk, for every thread
/// count, many times over (a worker that found the fallback once looped
/// on it forever, session 43). Run on a thread of its own so a hang fails
/// the test instead of stalling the suite.
#[test]
fn fallbacks_found_by_a_worker_end_the_run() {
    within(std::time::Duration::from_secs(300), || {
        for codec in CODECS {
            let n = 1 << 20;
            let src = data("random", n);
            let p = CParams::default()
                .codec(codec)
                .clevel(5)
                .typesize(4)
                .filters(&[Filter::Shuffle])
                .blocksize(16 * 1024);
            let serial = chunk_with(&p, 1, &src, n + 32).unwrap();
            for nthreads in [2, 3, 4] {
                for _ in 0..20 {
                    let par = chunk_with(&p, nthreads, &src, n + 32).unwrap();
                    assert!(
                        par == serial,
                        "{codec:?} nthreads {nthreads}: chunk differs"
                    );
                }
            }
        }
    });
}

/// A user codec that fails on any block whose first item is `POISON`, and
/// otherwise stores nothing (its streams go raw).
struct FailsOnPoison;

const POISON: u32 = 0xDEAD_BEEF;

impl oxiblosc::plugins::UserCodec for FailsOnPoison {
    fn compress(
        &self,
        src: &[u8],
        _dst: &mut [u8],
        _call: &oxiblosc::plugins::CodecCall,
    ) -> oxiblosc::Result<usize> {
        if src.len() >= 4 && src[..4] == POISON.to_le_bytes() {
            return Err(oxiblosc::Error::InvalidParam("poisoned block".into()));
        }
        Ok(0)
    }

    fn decompress(
        &self,
        _src: &[u8],
        _dst: &mut [u8],
        _call: &oxiblosc::plugins::CodecCall,
    ) -> oxiblosc::Result<usize> {
        Err(oxiblosc::Error::Corrupt("never stored".into()))
    }
}

/// A block that fails to compress (the first, one in the middle, the last,
/// several) fails the call with the serial run's error for every thread
/// count, without a hang; the same compressor then compresses good data to
/// the serial chunk (nothing of the failed run is left in its staging).
#[test]
fn a_failing_block_fails_the_chunk_and_leaves_the_compressor_usable() {
    const ID: u8 = 230;
    oxiblosc::plugins::register_codec(ID, std::sync::Arc::new(FailsOnPoison)).unwrap();
    within(std::time::Duration::from_secs(120), || {
        let bs = 16 * 1024;
        let n = 64 * bs;
        let good = data("noisy", n);
        let p = CParams::default()
            .codec(Codec::User(ID))
            .typesize(4)
            .filters(&[])
            .blocksize(bs);
        let serial_good = chunk_with(&p, 1, &good, n + 32).unwrap();
        for poisoned in [vec![0], vec![31], vec![63], vec![5, 40, 41]] {
            let mut bad = good.clone();
            for &b in &poisoned {
                bad[b * bs..b * bs + 4].copy_from_slice(&POISON.to_le_bytes());
            }
            let serial = chunk_with(&p, 1, &bad, n + 32);
            assert!(serial.is_err(), "{poisoned:?}: {serial:?}");
            for nthreads in [2, 3, 4] {
                let mut c = Compressor::new(p.clone().nthreads(nthreads));
                let mut out = vec![0u8; n + 32];
                for _ in 0..5 {
                    let r = c.compress_into(&bad, &mut out).map_err(|e| e.to_string());
                    assert_eq!(r.map(|_| ()), serial.clone().map(|_| ()), "{poisoned:?}");
                }
                let m = c.compress_into(&good, &mut out).unwrap();
                assert!(
                    out[..m] == serial_good[..],
                    "{poisoned:?} nthreads {nthreads}: the next chunk differs"
                );
            }
        }
    });
}
