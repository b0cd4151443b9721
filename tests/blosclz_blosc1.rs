//! Our Blosc1 BloscLZ chunks against C-Blosc 1.21.7's (BloscLZ 2.5.1, from
//! python-blosc 1.11.4, one thread), byte for byte.
//!
//! The inputs are a few hundred generated buffers of different kinds
//! (ramps, runs, text, noisy floats, random bytes, sparse zeros, and blends
//! whose last blocks get less room than a block), 16 bytes to 300 KiB, at
//! every clevel, with and without shuffle (split and unsplit blocks), some
//! with a forced block size. `tests/support/cblosc1_blosclz.py` compresses
//! them all in one run; the chunks must equal
//! `oxiblosc::compress(.., ChunkFormat::Blosc1, Codec::BloscLz, ..)`.

mod support;

use oxiblosc::{CParams, ChunkFormat, Codec, Filter, compress, decompress};

/// One input and the parameters it is compressed with.
struct Case {
    what: String,
    data: Vec<u8>,
    typesize: u8,
    clevel: u8,
    /// 0 none, 1 shuffle, 2 bitshuffle (as the script takes it).
    shuffle: u8,
    /// Forced block size, 0 for the tuner's.
    blocksize: u32,
}

/// xorshift64: the same inputs every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn f64(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

const WORDS: [&str; 24] = [
    "the",
    "blosc",
    "chunk",
    "of",
    "a",
    "block",
    "is",
    "split",
    "into",
    "streams",
    "and",
    "compressed",
    "with",
    "blosclz",
    "which",
    "finds",
    "matches",
    "in",
    "hash",
    "table",
    "literal",
    "run",
    "shuffle",
    "bytes",
];

/// `len` bytes of kind `kind`.
fn make(kind: usize, len: usize, rng: &mut Rng) -> Vec<u8> {
    let mut v: Vec<u8> = match kind {
        // Byte ramp and slow ramp.
        0 => {
            let step = 1 + rng.below(4) as usize;
            (0..len).map(|i| (i / step) as u8).collect()
        }
        // u32 ramp (little-endian).
        1 => {
            let k = 1 + rng.below(7) as u32;
            (0u32..)
                .flat_map(|i| i.wrapping_mul(k).to_le_bytes())
                .take(len)
                .collect()
        }
        // Runs of random lengths.
        2 => {
            let mut v = Vec::with_capacity(len);
            while v.len() < len {
                let b = rng.next() as u8;
                let n = 1 + rng.below(300) as usize;
                v.extend(std::iter::repeat_n(b, n));
            }
            v
        }
        // Text.
        3 => {
            let mut v = Vec::with_capacity(len + 16);
            while v.len() < len {
                v.extend_from_slice(WORDS[rng.below(WORDS.len() as u64) as usize].as_bytes());
                v.push(if rng.below(12) == 0 { b'\n' } else { b' ' });
            }
            v
        }
        // Noisy float64s.
        4 => {
            let noise = [0.0, 1e-9, 1e-4, 0.5][rng.below(4) as usize];
            let mut v = Vec::with_capacity(len + 8);
            let mut i = 0.0f64;
            while v.len() < len {
                let x = (i * 0.01).sin() * 100.0 + noise * (rng.f64() - 0.5);
                v.extend_from_slice(&x.to_le_bytes());
                i += 1.0;
            }
            v
        }
        // Noisy float32s, rounded.
        5 => {
            let mut v = Vec::with_capacity(len + 4);
            let mut i = 0.0f32;
            while v.len() < len {
                let x = ((i * 0.003).cos() * 1000.0).round() + (rng.below(3) as f32);
                v.extend_from_slice(&x.to_le_bytes());
                i += 1.0;
            }
            v
        }
        // Random bytes.
        6 => (0..len).map(|_| rng.next() as u8).collect(),
        // Sparse: zeros with a few random bytes.
        7 => {
            let density = 1 + rng.below(200);
            (0..len)
                .map(|_| {
                    if rng.below(1000) < density {
                        rng.next() as u8
                    } else {
                        0
                    }
                })
                .collect()
        }
        // Small alphabet noise (ratios around the probe's thresholds).
        8 => {
            let k = 2 + rng.below(30);
            (0..len).map(|_| rng.below(k) as u8).collect()
        }
        // Repeats at near distances.
        9 => {
            let period = 100 + rng.below(4000) as usize;
            let base: Vec<u8> = (0..period).map(|_| rng.next() as u8).collect();
            base.iter().cycle().take(len).copied().collect()
        }
        // Repeats at far distances (more than 8 KiB back) of small-alphabet
        // noise, whose 4-byte sequences seldom recur nearer.
        _ => {
            let period = 9000 + rng.below(60_000) as usize;
            let k = 3 + rng.below(8);
            let base: Vec<u8> = (0..period).map(|_| rng.below(k) as u8).collect();
            base.iter().cycle().take(len).copied().collect()
        }
    };
    v.truncate(len);
    v
}

/// Random first blocks (stored raw, 4 bytes over each) then a block that
/// compresses only somewhat: the last streams get less room than a block
/// (`maxout < neblock`), and fit or do not by a few bytes.
fn tight(len: usize, rng: &mut Rng) -> Vec<u8> {
    let head = len * (1 + rng.below(3) as usize) / 4;
    let mut v = make(6, head, rng);
    let mut tail = Vec::with_capacity(len - head);
    // Runs of copies between random pieces, the share of copies tuned
    // finely so that some tails just fit.
    let share = rng.below(1000);
    while tail.len() < len - head {
        if rng.below(1000) < share && tail.len() > 64 {
            let back = 1 + rng.below(tail.len().min(8000) as u64 - 8) as usize;
            let n = 4 + rng.below(40) as usize;
            for _ in 0..n {
                tail.push(tail[tail.len() - back]);
            }
        } else {
            tail.push(rng.next() as u8);
        }
    }
    tail.truncate(len - head);
    v.extend_from_slice(&tail);
    v
}

fn cases() -> Vec<Case> {
    let mut rng = Rng(0x5eed_b105c1);
    let lengths = [
        16, 40, 100, 127, 128, 200, 511, 1000, 3000, 4096, 10_000, 33_333, 65_536, 100_000,
        131_072, 200_000, 262_144, 300_000,
    ];
    let mut out = Vec::new();
    for i in 0..600 {
        let kind = i % 12;
        let len = if rng.below(4) == 0 {
            lengths[rng.below(lengths.len() as u64) as usize]
        } else {
            16 + rng.below(300_000 - 16) as usize
        };
        let clevel = 1 + rng.below(9) as u8;
        let (typesize, shuffle) = match rng.below(10) {
            0 | 1 => (1, 0),
            2 => (4, 1),
            3 => (8, 1),
            4 => (2, 1),
            5 => (16, 1),
            // More than 16 bytes: never split.
            6 | 7 => (32, 1),
            8 => (24, 0),
            _ => ([4, 8][rng.below(2) as usize], 2),
        };
        // Forced block sizes: one block, or small blocks.
        let blocksize = match rng.below(6) {
            0 => len as u32,
            1 => [128, 1000, 4096, 16_384, 65_536][rng.below(5) as usize],
            _ => 0,
        };
        let (what, data) = if kind == 11 {
            ("tight".to_string(), tight(len, &mut rng))
        } else {
            (format!("kind {kind}"), make(kind, len, &mut rng))
        };
        out.push(Case {
            what,
            data,
            typesize,
            clevel,
            shuffle,
            blocksize,
        });
    }
    out
}

fn params(c: &Case) -> CParams {
    let filters: &[Filter] = match c.shuffle {
        0 => &[],
        1 => &[Filter::Shuffle],
        _ => &[Filter::BitShuffle],
    };
    CParams::default()
        .format(ChunkFormat::Blosc1)
        .codec(Codec::BloscLz)
        .clevel(c.clevel)
        .typesize(usize::from(c.typesize))
        .filters(filters)
        .blocksize(c.blocksize as usize)
        .nthreads(1)
}

/// C-Blosc 1.21's chunks for `cases`, in order.
fn c_chunks(cases: &[Case]) -> Vec<Vec<u8>> {
    let dir = std::env::temp_dir().join(format!("oxiblosc-blz1-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (inp, outp) = (dir.join("in.bin"), dir.join("out.bin"));
    let mut buf = Vec::new();
    for c in cases {
        buf.extend_from_slice(&(c.data.len() as u32).to_le_bytes());
        buf.extend_from_slice(&[c.typesize, c.clevel, c.shuffle]);
        buf.extend_from_slice(&c.blocksize.to_le_bytes());
        buf.extend_from_slice(&c.data);
    }
    std::fs::write(&inp, &buf).unwrap();
    let versions = support::cblosc1::run_script(
        "cblosc1_blosclz.py",
        &[inp.to_str().unwrap(), outp.to_str().unwrap()],
    )
    .unwrap_or_else(|e| panic!("cblosc1_blosclz.py failed:\n{e}"));
    assert!(
        versions.starts_with("1.11.4 1.21."),
        "want python-blosc 1.11.4 with C-Blosc 1.21, got {versions}"
    );
    let raw = std::fs::read(&outp).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let mut chunks = Vec::new();
    let mut pos = 0;
    while pos < raw.len() {
        let n = u32::from_le_bytes(raw[pos..pos + 4].try_into().unwrap()) as usize;
        chunks.push(raw[pos + 4..pos + 4 + n].to_vec());
        pos += 4 + n;
    }
    assert_eq!(chunks.len(), cases.len());
    chunks
}

/// What a Blosc1 chunk holds (nothing for a chunk stored whole).
#[derive(Default)]
struct Stats {
    /// Streams of BloscLZ output.
    streams: usize,
    /// Streams stored raw (the encoder gave 0, or no less than a block).
    raw: usize,
    /// Streams coded with less room than their size (`maxout < neblock`).
    tight: usize,
    /// BloscLZ streams with at least one far match.
    far: usize,
}

/// Whether a BloscLZ stream has a far match token.
fn has_far_match(s: &[u8]) -> bool {
    let (mut ip, mut ctrl) = (1, usize::from(s[0] & 31));
    loop {
        if ctrl >= 32 {
            if ctrl >> 5 == 7 {
                while s[ip] == 255 {
                    ip += 1;
                }
                ip += 1;
            }
            if ctrl & 31 == 31 && s[ip] == 255 {
                return true;
            }
            ip += 1;
        } else {
            ip += ctrl + 1;
        }
        if ip >= s.len() {
            return false;
        }
        ctrl = usize::from(s[ip]);
        ip += 1;
    }
}

fn stats(chunk: &[u8], st: &mut Stats) {
    let flags = chunk[2];
    if flags & 0x02 != 0 {
        return;
    }
    let u32_at = |at: usize| u32::from_le_bytes(chunk[at..at + 4].try_into().unwrap()) as usize;
    let (typesize, nbytes, blocksize) = (usize::from(chunk[3]), u32_at(4), u32_at(8));
    let destsize = nbytes + 16;
    let nblocks = nbytes.div_ceil(blocksize);
    let split = flags & 0x10 == 0;
    for b in 0..nblocks {
        let bsize = blocksize.min(nbytes - b * blocksize);
        let nstreams = if split && bsize == blocksize {
            typesize
        } else {
            1
        };
        let neblock = bsize / nstreams;
        let mut at = u32_at(16 + 4 * b);
        for _ in 0..nstreams {
            let csize = u32_at(at);
            if destsize - (at + 4) < neblock {
                st.tight += 1;
            }
            if csize == neblock {
                st.raw += 1;
            } else {
                st.streams += 1;
                if has_far_match(&chunk[at + 4..at + 4 + csize]) {
                    st.far += 1;
                }
            }
            at += 4 + csize;
        }
    }
}

#[test]
fn blosc1_blosclz_chunks_match_c_blosc_1_21() {
    let cases = cases();
    let theirs = c_chunks(&cases);
    let mut identical = 0;
    let mut failures = Vec::new();
    let (mut split, mut unsplit, mut memcpyed) = (0, 0, 0);
    let mut st = Stats::default();
    for (i, (c, want)) in cases.iter().zip(&theirs).enumerate() {
        let ours = compress(&c.data, &params(c)).unwrap();
        stats(want, &mut st);
        if want[2] & 0x02 != 0 {
            memcpyed += 1;
        } else if want[2] & 0x10 == 0 {
            split += 1;
        } else {
            unsplit += 1;
        }
        if ours == *want {
            identical += 1;
        } else {
            let at = ours.iter().zip(want).position(|(a, b)| a != b);
            failures.push(format!(
                "case {i} ({}, {} bytes, typesize {}, clevel {}, shuffle {}, blocksize {}): \
                 ours {} bytes, C {} bytes, first difference at {at:?}",
                c.what,
                c.data.len(),
                c.typesize,
                c.clevel,
                c.shuffle,
                c.blocksize,
                ours.len(),
                want.len()
            ));
        }
        assert_eq!(decompress(want).unwrap(), c.data, "case {i}: C's chunk");
    }
    eprintln!(
        "{identical}/{} chunks identical to C-Blosc 1.21's ({split} split, {unsplit} unsplit, \
         {memcpyed} stored whole; {} BloscLZ streams, {} with far matches, {} streams stored raw, \
         {} streams coded with less room than a block)",
        cases.len(),
        st.streams,
        st.far,
        st.raw,
        st.tight
    );
    assert!(
        failures.is_empty(),
        "{} of {} chunks differ:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
    // The cases reach both encoder settings and both sides of the probe.
    assert!(
        split > 50 && unsplit > 50,
        "{split} split, {unsplit} unsplit"
    );
    assert!(st.streams > 1000 && st.raw > 100 && st.far > 10 && st.tight > 10);
}
