//! Differential tests against the real C-Blosc2 3.3.5 (through python-blosc2
//! 4.14.1, see `tests/support`):
//!
//! 1. chunks oxiblosc writes decode in C to the input;
//! 2. chunks C writes (every codec, dictionaries too) decode in oxiblosc to
//!    what C itself decodes them to, which is the input except for C's own
//!    documented bugs (CHUNK-NOTES §14);
//! 3. for the same parameters the headers agree field by field;
//! 4. `getitem` on random ranges equals the slice of the input.
//!
//! The cases are drawn by proptest with a fixed seed (reproducible runs);
//! `OXIBLOSC_DIFF_SEED=random` (or a number) draws others, and
//! `OXIBLOSC_DIFF_SCALE=N` multiplies the number of cases.

mod support;

use oxiblosc::kernels::Kernels;
use oxiblosc::{CParams, ChunkHeader, Codec, Error, Filter, SplitMode};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed};
use support as c;

// ---------------------------------------------------------------------------
// Data

/// Element types of the ramps.
#[derive(Clone, Copy, Debug)]
enum Dtype {
    U8,
    U16,
    U32,
    U64,
    F32,
    F64,
}

/// What the input looks like.
#[derive(Clone, Copy, Debug)]
enum Shape {
    /// `start + i * step` in some element type.
    Ramp(Dtype),
    /// A smooth f32 (false) or f64 (true) signal plus small noise.
    Noisy(bool),
    /// Runs of one byte value, 1..300 long.
    Runs,
    /// Words and punctuation.
    Text,
    Zeros,
    /// Every byte the same non-zero value.
    Const(u8),
    Random,
    /// Zeros with a random byte here and there (zero-run streams next to
    /// compressed ones).
    Sparse,
}

/// splitmix64: small, deterministic.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn make_data(shape: Shape, len: usize, seed: u64) -> Vec<u8> {
    let mut r = Rng(seed);
    let mut out = Vec::with_capacity(len + 8);
    match shape {
        Shape::Ramp(dt) => {
            let start = r.below(100_000);
            let step = 1 + r.below(7);
            let mut i = 0u64;
            while out.len() < len {
                let v = start + i * step;
                match dt {
                    Dtype::U8 => out.push(v as u8),
                    Dtype::U16 => out.extend_from_slice(&(v as u16).to_le_bytes()),
                    Dtype::U32 => out.extend_from_slice(&(v as u32).to_le_bytes()),
                    Dtype::U64 => out.extend_from_slice(&v.to_le_bytes()),
                    Dtype::F32 => out.extend_from_slice(&(v as f32 * 0.25).to_le_bytes()),
                    Dtype::F64 => out.extend_from_slice(&(v as f64 * 0.1).to_le_bytes()),
                }
                i += 1;
            }
        }
        Shape::Noisy(double) => {
            let amp = 1.0 + r.unit() * 1000.0;
            let noise = r.unit() * 0.01;
            let mut i = 0u64;
            while out.len() < len {
                let v = (i as f64 * 0.001).sin() * amp + (r.unit() - 0.5) * noise * amp;
                if double {
                    out.extend_from_slice(&v.to_le_bytes());
                } else {
                    out.extend_from_slice(&(v as f32).to_le_bytes());
                }
                i += 1;
            }
        }
        Shape::Runs => {
            while out.len() < len {
                let v = r.next() as u8;
                let n = 1 + r.below(300) as usize;
                out.resize(out.len() + n, v);
            }
        }
        Shape::Text => {
            const WORDS: &[&str] = &[
                "blosc",
                "chunk",
                "the",
                "of",
                "compression",
                "a",
                "block",
                "stream",
                "shuffle",
                "filter",
                "and",
                "data",
                "is",
                "fast",
                "zstd",
                "lz4",
                "header",
                "to",
                "in",
            ];
            while out.len() < len {
                out.extend_from_slice(WORDS[r.below(WORDS.len() as u64) as usize].as_bytes());
                out.extend_from_slice(match r.below(12) {
                    0 => b". ",
                    1 => b",\n",
                    _ => b" ",
                });
            }
        }
        Shape::Zeros => out.resize(len, 0),
        Shape::Const(b) => out.resize(len, b),
        Shape::Random => {
            while out.len() < len {
                out.extend_from_slice(&r.next().to_le_bytes());
            }
        }
        Shape::Sparse => {
            out.resize(len, 0);
            for _ in 0..len / 100 {
                let at = r.below(len as u64) as usize;
                out[at] = r.next() as u8;
            }
        }
    }
    out.truncate(len);
    out
}

fn shape() -> impl Strategy<Value = Shape> {
    use Dtype::*;
    prop_oneof![
        4 => prop::sample::select(vec![U8, U16, U32, U64, F32, F64]).prop_map(Shape::Ramp),
        2 => any::<bool>().prop_map(Shape::Noisy),
        2 => Just(Shape::Runs),
        2 => Just(Shape::Text),
        1 => Just(Shape::Zeros),
        1 => (1u8..=255).prop_map(Shape::Const),
        2 => Just(Shape::Random),
        1 => Just(Shape::Sparse),
    ]
}

fn length() -> impl Strategy<Value = usize> {
    prop_oneof![
        2 => 0usize..64,
        3 => 0usize..4096,
        3 => 4096usize..70_000,
        2 => 70_000usize..300_000,
    ]
}

// ---------------------------------------------------------------------------
// Cases

#[derive(Clone, Debug)]
struct Case {
    shape: Shape,
    len: usize,
    seed: u64,
    codec: Codec,
    clevel: u8,
    typesize: usize,
    filters: Vec<Filter>,
    /// BYTEDELTA gets meta = typesize (what python-blosc2 writes) instead of 0.
    bytedelta_meta_ts: bool,
    blocksize: usize,
    splitmode: SplitMode,
    use_dict: bool,
}

impl Case {
    fn data(&self) -> Vec<u8> {
        make_data(self.shape, self.len, self.seed)
    }

    fn params(&self) -> CParams {
        let with_meta: Vec<(Filter, u8)> = self
            .filters
            .iter()
            .map(|&f| match f {
                Filter::TruncPrec(m) => (f, m),
                Filter::ByteDelta if self.bytedelta_meta_ts => (f, self.typesize as u8),
                _ => (f, 0),
            })
            .collect();
        CParams::default()
            .codec(self.codec)
            .clevel(self.clevel)
            .typesize(self.typesize)
            .filters_with_meta(&with_meta)
            .blocksize(self.blocksize)
            .splitmode(self.splitmode)
            .nthreads(1)
            .use_dict(self.use_dict)
    }

    fn trunc_prec(&self) -> Option<i8> {
        self.filters.iter().find_map(|f| match f {
            Filter::TruncPrec(m) => Some(*m as i8),
            _ => None,
        })
    }

    fn has_delta(&self) -> bool {
        self.filters.contains(&Filter::Delta)
    }

    /// The block size C uses internally (CHUNK-NOTES §2 with `forced`), and
    /// the one it writes: they differ only for a forced block size that is not
    /// a whole number of elements (C then writes a chunk it cannot read).
    fn c_forced_blocksize(&self) -> Option<(usize, usize)> {
        if self.blocksize == 0 || self.len < self.typesize {
            return None;
        }
        let header = self.blocksize.min(self.len);
        let mut internal = header;
        if internal > self.typesize {
            internal = internal / self.typesize * self.typesize;
        }
        Some((internal, header))
    }

    fn c_writes_broken_blocksize(&self) -> bool {
        self.c_forced_blocksize().is_some_and(|(i, h)| i != h)
    }

    /// The bytes a decoder must give back for a chunk whose header is `h`:
    /// the input, truncated by TRUNC_PREC unless the chunk was stored raw
    /// (a memcpyed chunk skips the whole pipeline).
    fn expected(&self, data: &[u8], h: &ChunkHeader) -> Vec<u8> {
        match self.trunc_prec() {
            Some(prec) if !h.is_memcpyed() => {
                // TRUNC_PREC is always the first filter here, so it sees
                // the raw input; blocks are whole elements, so truncating
                // the whole buffer is truncating block by block.
                let mut out = vec![0u8; data.len()];
                Kernels::active()
                    .trunc_prec(self.typesize, prec, data, &mut out)
                    .unwrap();
                out
            }
            _ => data.to_vec(),
        }
    }

    /// Trailing bytes C leaves undefined: DELTA words and TRUNC_PREC
    /// elements that do not fit whole at the end (CHUNK-NOTES §4.4, §4.5).
    fn c_undefined_tail(&self) -> usize {
        let mut tail = 0;
        if self.has_delta() {
            let w = match self.typesize {
                1 | 2 | 4 | 8 => self.typesize,
                t if t % 8 == 0 => 8,
                _ => 1,
            };
            tail = self.len % w;
        }
        if self.trunc_prec().is_some() {
            tail = tail.max(self.len % self.typesize);
        }
        tail
    }

    /// With three or more active filters C's forward pipeline writes into
    /// its input; with DELTA among them the chunk does not decode to the
    /// input (CHUNK-NOTES §14.8).
    fn c_clobbers_input(&self) -> bool {
        self.filters.len() >= 3 && self.has_delta()
    }

    /// The "zero runs" a filtered stream is made of do not depend on the codec,
    /// but which streams fit does: for these codecs oxiblosc's streams are
    /// not C's (lz4_flex, libdeflate), so a chunk may be memcpyed on one side
    /// only.
    fn codec_bytes_differ(&self) -> bool {
        matches!(self.codec, Codec::Lz4 | Codec::Zlib)
    }
}

fn typesize() -> impl Strategy<Value = usize> {
    prop_oneof![
        2 => Just(1usize),
        2 => Just(2usize),
        3 => Just(4usize),
        3 => Just(8usize),
        1 => Just(16usize),
        3 => 1usize..=32,
    ]
}

/// Filter pipelines for `ts`: the common ones, random combinations of up
/// to three, and TRUNC_PREC (first, for f32 / f64).
fn pipeline(ts: usize) -> BoxedStrategy<Vec<Filter>> {
    use Filter::*;
    let common = prop::sample::select(vec![
        vec![],
        vec![Shuffle],
        vec![BitShuffle],
        vec![Delta],
        vec![Shuffle, Delta],
        vec![Delta, Shuffle],
        vec![Shuffle, ByteDelta],
        vec![ByteDelta],
        vec![Delta, BitShuffle],
        vec![BitShuffle, Delta],
    ]);
    let random = prop::collection::vec(
        prop::sample::select(vec![Shuffle, BitShuffle, Delta, ByteDelta]),
        1..=3,
    );
    if ts == 4 || ts == 8 {
        let mant: i8 = if ts == 4 { 23 } else { 52 };
        let prec = prop_oneof![1..=mant, -(mant - 1)..=-1];
        let rest = prop::sample::select(vec![
            vec![],
            vec![Shuffle],
            vec![BitShuffle],
            vec![Shuffle, ByteDelta],
            vec![Delta],
            vec![Shuffle, Delta],
        ]);
        let trunc = (prec, rest).prop_map(|(p, rest)| {
            let mut v = vec![TruncPrec(p as u8)];
            v.extend(rest);
            v
        });
        prop_oneof![6 => common, 3 => random, 3 => trunc].boxed()
    } else {
        prop_oneof![6 => common, 3 => random].boxed()
    }
}

/// Compression levels: 9 (slow for zstd, lz4hc and zlib) drawn rarely, and
/// only for inputs of at most 64 KiB with those codecs.
fn clevel() -> impl Strategy<Value = u8> {
    prop_oneof![1 => Just(0u8), 12 => 1u8..=8, 1 => Just(9u8)]
}

fn forced_blocksize(ts: usize) -> impl Strategy<Value = usize> {
    prop_oneof![
        10 => Just(0usize),
        2 => (1usize..=2048).prop_map(move |k| k * ts),
        1 => 1usize..=70_000,
    ]
}

fn case(codecs: &'static [Codec], dicts: bool) -> impl Strategy<Value = Case> {
    (typesize(), prop::sample::select(codecs)).prop_flat_map(move |(ts, codec)| {
        let dict_ok = dicts && matches!(codec, Codec::Lz4 | Codec::Lz4Hc | Codec::Zstd);
        (
            shape(),
            length(),
            any::<u64>(),
            clevel(),
            pipeline(ts),
            any::<bool>(),
            forced_blocksize(ts),
            prop::sample::select(vec![
                SplitMode::Always,
                SplitMode::Never,
                SplitMode::Auto,
                SplitMode::ForwardCompat,
            ]),
            prop::bool::weighted(if dict_ok { 0.2 } else { 0.0 }),
        )
            .prop_map(
                move |(
                    shape,
                    mut len,
                    seed,
                    clevel,
                    filters,
                    bdm,
                    mut blocksize,
                    splitmode,
                    use_dict,
                )| {
                    if clevel == 9 && codec != Codec::Lz4 {
                        len = len.min(64 * 1024);
                    }
                    // At most ~4096 blocks: tiny forced blocks on big inputs
                    // only make the run slow.
                    if blocksize > 0 && len / blocksize > 4096 {
                        blocksize *= (len / blocksize).div_ceil(4096);
                    }
                    Case {
                        shape,
                        len,
                        seed,
                        codec,
                        clevel,
                        typesize: ts,
                        filters,
                        bytedelta_meta_ts: bdm,
                        blocksize,
                        splitmode,
                        use_dict,
                    }
                },
            )
    })
}

const RUST_CODECS: &[Codec] = &[Codec::Lz4, Codec::Lz4Hc, Codec::Zlib, Codec::Zstd];
const ALL_CODECS: &[Codec] = &[
    Codec::BloscLz,
    Codec::Lz4,
    Codec::Lz4Hc,
    Codec::Zlib,
    Codec::Zstd,
];

fn config(cases: u32) -> Config {
    let scale: u32 = std::env::var("OXIBLOSC_DIFF_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    let rng_seed = match std::env::var("OXIBLOSC_DIFF_SEED").as_deref() {
        Ok("random") => RngSeed::Random,
        Ok(s) => RngSeed::Fixed(s.parse().expect("OXIBLOSC_DIFF_SEED: a number or `random`")),
        Err(_) => RngSeed::Fixed(0x0b10_5c2d),
    };
    Config {
        cases: cases * scale,
        failure_persistence: None,
        max_shrink_time: 120_000,
        rng_seed,
        ..Config::default()
    }
}

fn header(chunk: &[u8]) -> ChunkHeader {
    ChunkHeader::parse(chunk).expect("chunk header parses")
}

/// Index and values of the first difference, for messages.
fn first_diff(a: &[u8], b: &[u8]) -> String {
    if a.len() != b.len() {
        return format!("lengths {} vs {}", a.len(), b.len());
    }
    match a.iter().zip(b).position(|(x, y)| x != y) {
        None => "equal".into(),
        Some(i) => format!(
            "first difference at byte {i} of {}: {:#04x} vs {:#04x} ({} bytes differ)",
            a.len(),
            a[i],
            b[i],
            a.iter().zip(b).filter(|(x, y)| x != y).count()
        ),
    }
}

// ---------------------------------------------------------------------------
// 1. oxiblosc's chunks decode in C

/// Our chunk for `case`, checked to decode in C (and in Rust) to the input.
fn check_rust_chunk_in_c(case: &Case) -> Result<(), TestCaseError> {
    let data = case.data();
    let chunk = oxiblosc::compress(&data, &case.params())
        .map_err(|e| TestCaseError::fail(format!("oxiblosc::compress failed: {e}")))?;
    let h = header(&chunk);
    let want = case.expected(&data, &h);
    let ours = oxiblosc::decompress(&chunk)
        .map_err(|e| TestCaseError::fail(format!("oxiblosc cannot read its own chunk: {e}")))?;
    prop_assert!(
        ours == want,
        "Rust round trip: {}",
        first_diff(&ours, &want)
    );
    match c::decompress(&chunk) {
        Ok(theirs) => prop_assert!(
            theirs == want,
            "C decodes our chunk wrongly: {}\nheader {h:?}",
            first_diff(&theirs, &want)
        ),
        Err(e) => prop_assert!(false, "C rejects our chunk: {e}\nheader {h:?}"),
    }
    Ok(())
}

proptest! {
    #![proptest_config(config(500))]

    #[test]
    fn rust_chunks_decode_in_c(case in case(RUST_CODECS, true)) {
        check_rust_chunk_in_c(&case)?;
    }
}

// ---------------------------------------------------------------------------
// 2. C's chunks decode in oxiblosc

fn check_c_chunk_in_rust(case: &Case) -> Result<(), TestCaseError> {
    let data = case.data();
    let p = case.params();
    let cres = c::compress(&p, &data, true);
    let chunk = match cres.chunk {
        Ok(chunk) => chunk,
        Err(e) => {
            // C refused the parameters: so must we.
            let ours = oxiblosc::compress(&data, &p);
            prop_assert!(
                ours.is_err(),
                "C refuses to compress ({e}) but oxiblosc does not"
            );
            return Ok(());
        }
    };
    let h = header(&chunk);
    let tail = case.c_undefined_tail();
    let defined = data.len() - tail;
    let want = case.expected(&data, &h);
    let ours = oxiblosc::decompress(&chunk);
    match cres.roundtrip.unwrap() {
        Ok(theirs) => {
            // Both decoders read the same bytes: they must agree.
            let ours = ours.map_err(|e| {
                TestCaseError::fail(format!("C decodes its chunk, oxiblosc fails: {e}\n{h:?}"))
            })?;
            prop_assert_eq!(ours.len(), theirs.len());
            prop_assert!(
                ours[..defined] == theirs[..defined],
                "oxiblosc and C decode C's chunk differently: {}\n{h:?}",
                first_diff(&ours[..defined], &theirs[..defined])
            );
            if case.c_clobbers_input() {
                // C's chunk itself is wrong (CHUNK-NOTES §14.8): agreeing
                // with C's decoder is all that can be asked.
            } else {
                prop_assert!(
                    theirs[..defined] == want[..defined],
                    "C does not round-trip (a C bug missing from CHUNK-NOTES?): {}\n{h:?}",
                    first_diff(&theirs[..defined], &want[..defined])
                );
            }
        }
        Err(e) => {
            if h.is_memcpyed() && h.use_dict() {
                // CHUNK-NOTES §14.11: C keeps the dict bit on its memcpy
                // fallback and then cannot read the chunk; the data is raw.
                let ours = ours.map_err(|e| TestCaseError::fail(e.to_string()))?;
                prop_assert!(
                    ours == want,
                    "memcpyed dict chunk: {}",
                    first_diff(&ours, &want)
                );
            } else if case.c_writes_broken_blocksize() {
                // CHUNK-NOTES §2: the header block size is not the one C
                // used; the chunk is broken. oxiblosc must say so, not panic.
                prop_assert!(ours.is_err(), "C cannot read it ({e}); oxiblosc decodes it");
            } else {
                prop_assert!(false, "C cannot decode its own chunk: {e}\n{h:?}");
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(config(500))]

    #[test]
    fn c_chunks_decode_in_rust(case in case(ALL_CODECS, true)) {
        check_c_chunk_in_rust(&case)?;
    }
}

// ---------------------------------------------------------------------------
// 3. Same parameters, same header

fn check_headers(case: &Case) -> Result<(), TestCaseError> {
    let data = case.data();
    let mut case = case.clone();
    // python-blosc2 always writes meta = typesize for BYTEDELTA.
    case.bytedelta_meta_ts = true;
    let p = case.params();
    let ours = oxiblosc::compress(&data, &p);
    let theirs = c::compress(&p, &data, false).chunk;
    let (ours, theirs) = match (ours, theirs) {
        (Ok(o), Ok(t)) => (o, t),
        (Err(_), Err(_)) => return Ok(()),
        (o, t) => {
            return Err(TestCaseError::fail(format!(
                "only one side compresses: oxiblosc {:?}, C {:?}",
                o.map(|c| c.len()),
                t.map(|c| c.len())
            )));
        }
    };
    let o = header(&ours);
    let t = header(&theirs);
    let ctx = || format!("\noxiblosc {o:?}\nC        {t:?}");
    prop_assert_eq!(o.version, t.version, "version{}", ctx());
    prop_assert_eq!(o.versionlz, t.versionlz, "versionlz{}", ctx());
    prop_assert_eq!(o.typesize, t.typesize, "typesize{}", ctx());
    prop_assert_eq!(o.nbytes, t.nbytes, "nbytes{}", ctx());
    prop_assert_eq!(o.filters, t.filters, "filters{}", ctx());
    prop_assert_eq!(o.filters_meta, t.filters_meta, "filters_meta{}", ctx());
    prop_assert_eq!(o.udcodec, t.udcodec, "udcodec{}", ctx());
    prop_assert_eq!(o.compcode_meta, t.compcode_meta, "compcode_meta{}", ctx());
    prop_assert_eq!(o.blosc2_flags2, t.blosc2_flags2, "blosc2_flags2{}", ctx());
    if case.c_writes_broken_blocksize() {
        // C writes the forced value (not a whole number of elements) and
        // cuts blocks at the rounded one; we write the rounded one.
        let (internal, c_header) = case.c_forced_blocksize().unwrap();
        prop_assert_eq!(t.blocksize, c_header, "C's header blocksize{}", ctx());
        prop_assert_eq!(o.blocksize, internal, "our blocksize{}", ctx());
    } else {
        prop_assert_eq!(o.blocksize, t.blocksize, "blocksize{}", ctx());
    }
    // Special-zero chunks: decided by zero runs of the filtered streams,
    // which do not depend on the codec library.
    prop_assert_eq!(
        o.blosc2_flags & 0x70,
        t.blosc2_flags & 0x70,
        "special type{}",
        ctx()
    );
    let o_raw = o.is_memcpyed();
    let t_raw = t.is_memcpyed();
    if o_raw == t_raw {
        prop_assert_eq!(o.flags, t.flags, "flags{}", ctx());
        if o_raw && t.use_dict() {
            // C's memcpy fallback keeps the dict bit (CHUNK-NOTES §14.11).
            prop_assert!(!o.use_dict(), "dict bit on a memcpyed chunk{}", ctx());
        } else {
            prop_assert_eq!(o.blosc2_flags, t.blosc2_flags, "blosc2_flags{}", ctx());
        }
    } else {
        // One side's streams did not fit and it fell back to storing raw
        // (flags | 0x02, the rest kept); with different codec libraries the
        // other side's may have fitted. Memcpy from the start (clevel 0,
        // tiny input) is exactly 0x07 on both sides and cannot differ.
        prop_assert!(
            case.codec_bytes_differ(),
            "memcpy on one side only, with the same codec library{}",
            ctx()
        );
        let (raw, other) = if o_raw { (&o, &t) } else { (&t, &o) };
        prop_assert_eq!(raw.flags, other.flags | 0x02, "fallback flags{}", ctx());
        prop_assert_eq!(
            raw.blosc2_flags & !0x01,
            other.blosc2_flags & !0x01,
            "blosc2_flags{}",
            ctx()
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(config(400))]

    #[test]
    fn headers_match_c(case in case(RUST_CODECS, true)) {
        check_headers(&case)?;
    }
}

// ---------------------------------------------------------------------------
// 4. getitem

fn check_getitem(case: &Case, ranges: &[(usize, usize)]) -> Result<(), TestCaseError> {
    let data = case.data();
    let chunk = oxiblosc::compress(&data, &case.params())
        .map_err(|e| TestCaseError::fail(format!("compress: {e}")))?;
    let h = header(&chunk);
    let want = case.expected(&data, &h);
    let ts = usize::from(h.typesize);
    let items = data.len() / ts;
    for &(a, b) in ranges {
        let start = a % (items + 1);
        let nitems = b % (items - start + 1);
        let got = oxiblosc::getitem(&chunk, start, nitems)
            .map_err(|e| TestCaseError::fail(format!("getitem({start}, {nitems}): {e}")))?;
        let slice = &want[start * ts..(start + nitems) * ts];
        prop_assert!(
            got == slice,
            "getitem({start}, {nitems}) of {items} items: {}\n{h:?}",
            first_diff(&got, slice)
        );
    }
    // Past the end is an error, not a panic or a short read.
    prop_assert!(oxiblosc::getitem(&chunk, items + 1, 0).is_err());
    prop_assert!(oxiblosc::getitem(&chunk, 0, items + 1).is_err());
    prop_assert!(oxiblosc::getitem(&chunk, items, 1).is_err());
    Ok(())
}

/// Cases with several blocks: small forced block sizes.
fn getitem_case() -> impl Strategy<Value = Case> {
    (case(RUST_CODECS, true), 0usize..6, 1usize..=64).prop_map(|(mut case, pick, k)| {
        if pick < 4 {
            case.blocksize = k * 64 * case.typesize;
        }
        if pick == 0 && !case.has_delta() {
            // After TRUNC_PREC, which must stay first (see `Case::expected`).
            let at = usize::from(case.trunc_prec().is_some());
            case.filters.insert(at, Filter::Delta);
            case.filters.truncate(3);
        }
        case
    })
}

proptest! {
    #![proptest_config(config(400))]

    #[test]
    fn getitem_equals_slice(
        case in getitem_case(),
        ranges in prop::collection::vec((any::<usize>(), any::<usize>()), 1..8),
    ) {
        check_getitem(&case, &ranges)?;
    }
}

/// C's getitem on our chunks (without DELTA: C's getitem decodes every
/// block as if it were block 0, CHUNK-NOTES §10) equals the slice too.
#[test]
fn c_getitem_on_our_chunks() {
    let mut n = 0;
    for (i, &codec) in RUST_CODECS.iter().enumerate() {
        for (j, filters) in [
            vec![],
            vec![Filter::Shuffle],
            vec![Filter::BitShuffle],
            vec![Filter::Shuffle, Filter::ByteDelta],
        ]
        .into_iter()
        .enumerate()
        {
            for ts in [1usize, 4, 7, 8] {
                let case = Case {
                    shape: Shape::Ramp(Dtype::U32),
                    len: 50_003,
                    seed: (i * 100 + j * 10 + ts) as u64,
                    codec,
                    clevel: 5,
                    typesize: ts,
                    filters: filters.clone(),
                    bytedelta_meta_ts: true,
                    blocksize: 1024 * ts,
                    splitmode: SplitMode::Auto,
                    use_dict: false,
                };
                let data = case.data();
                let chunk = oxiblosc::compress(&data, &case.params()).unwrap();
                let items = data.len() / ts;
                let mut r = Rng(n);
                for _ in 0..5 {
                    let start = r.below(items as u64 + 1) as usize;
                    let nitems = r.below((items - start) as u64 + 1) as usize;
                    let theirs = c::getitem(&chunk, start, nitems)
                        .unwrap_or_else(|e| panic!("{case:?}: C getitem({start}, {nitems}): {e}"));
                    let ours = oxiblosc::getitem(&chunk, start, nitems).unwrap();
                    let slice = &data[start * ts..(start + nitems) * ts];
                    assert!(theirs == slice, "{case:?}: C getitem({start}, {nitems})");
                    assert!(ours == slice, "{case:?}: getitem({start}, {nitems})");
                    n += 1;
                }
            }
        }
    }
    assert_eq!(n, 4 * 4 * 4 * 5);
}

// ---------------------------------------------------------------------------
// A fixed grid: every codec x every common pipeline x a few type sizes, so
// each combination is covered whatever proptest draws.

#[test]
fn grid_every_codec_and_pipeline() {
    use Filter::*;
    let pipelines: Vec<Vec<Filter>> = vec![
        vec![],
        vec![Shuffle],
        vec![BitShuffle],
        vec![Delta],
        vec![Shuffle, Delta],
        vec![Delta, Shuffle],
        vec![Shuffle, ByteDelta],
        vec![ByteDelta],
        vec![Delta, BitShuffle],
        vec![Shuffle, BitShuffle, ByteDelta],
        vec![TruncPrec(10)],
        vec![TruncPrec((-5i8) as u8), Shuffle],
    ];
    let mut checked = 0;
    for &codec in ALL_CODECS {
        for filters in &pipelines {
            for ts in [1usize, 2, 4, 8, 12] {
                let trunc = matches!(filters[..], [TruncPrec(_), ..]);
                if trunc && ts != 4 && ts != 8 {
                    continue;
                }
                for (len, shape) in [(40_000usize, Shape::Ramp(Dtype::F32)), (777, Shape::Text)] {
                    let case = Case {
                        shape,
                        len,
                        seed: checked as u64,
                        codec,
                        clevel: 5,
                        typesize: ts,
                        filters: filters.clone(),
                        bytedelta_meta_ts: true,
                        blocksize: 0,
                        splitmode: SplitMode::Auto,
                        use_dict: false,
                    };
                    let r = (|| {
                        if codec != Codec::BloscLz {
                            check_rust_chunk_in_c(&case)?;
                            check_headers(&case)?;
                        }
                        check_c_chunk_in_rust(&case)
                    })();
                    if let Err(e) = r {
                        panic!("{case:?}: {e}");
                    }
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 400, "{checked}");
}

/// oxiblosc cannot write BloscLZ yet (decoding it is tested above): when it
/// can, this fails as a reminder to add `Codec::BloscLz` to `RUST_CODECS`.
#[test]
fn blosclz_compression_not_yet_implemented() {
    let p = CParams::default().codec(Codec::BloscLz);
    assert!(matches!(
        oxiblosc::compress(&[1u8; 1000], &p),
        Err(Error::Unsupported(_))
    ));
}
