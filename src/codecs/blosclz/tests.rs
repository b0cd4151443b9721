//! The encoders against byte-at-a-time descriptions of C's, and hostile
//! streams against the decoder.

use super::*;
use proptest::prelude::*;

/// The format description, one byte at a time: the oracle for the fast
/// decoder. `None` for anything malformed.
fn reference_decode(src: &[u8], out_len: usize) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(out_len);
    let mut ip = 1;
    let mut ctrl = usize::from(*src.first()? & 31);
    loop {
        if ctrl >= 32 {
            let mut len = ctrl >> 5;
            if len == 7 {
                loop {
                    let e = usize::from(*src.get(ip)?);
                    ip += 1;
                    len += e;
                    if e != 255 {
                        break;
                    }
                }
            }
            len += 2;
            let hi = ctrl & 31;
            let lo = usize::from(*src.get(ip)?);
            ip += 1;
            let mut d = (hi << 8) + lo;
            if hi == 31 && lo == 255 {
                d = 8191 + (usize::from(*src.get(ip)?) << 8) + usize::from(*src.get(ip + 1)?);
                ip += 2;
            }
            if d >= out.len() || out.len() + len > out_len {
                return None;
            }
            for _ in 0..len {
                out.push(out[out.len() - d - 1]);
            }
        } else {
            let lit = src.get(ip..ip + ctrl + 1)?;
            if out.len() + lit.len() > out_len {
                return None;
            }
            out.extend_from_slice(lit);
            ip += ctrl + 1;
        }
        if ip >= src.len() {
            return Some(out);
        }
        ctrl = usize::from(src[ip]);
        ip += 1;
    }
}

fn ref_hash(x: u32, hl: u32) -> usize {
    (x.wrapping_mul(2_654_435_761) >> (32 - hl)) as usize
}

fn ref_u32(b: &[u8], i: usize) -> u32 {
    u32::from_le_bytes(b[i..i + 4].try_into().unwrap())
}

fn ref_match_end(b: &[u8], mut p: usize, mut q: usize, bound: usize) -> usize {
    while p < bound {
        if b[p] != b[q] {
            return p + 1;
        }
        p += 1;
        q += 1;
    }
    bound
}

/// The entropy probe as CHUNK-NOTES §9.5 describes it, one byte at a
/// time.
fn reference_probe(clevel: usize, src: &[u8]) -> f64 {
    let hl = HASHLOG[clevel];
    let n = src.len();
    let maxlen = [0, n / 8, n / 4, n / 4, n / 2, n / 2, n / 2, n, n, n][clevel];
    let limit = maxlen.min(1 << hl);
    if limit < 13 {
        return 0.0;
    }
    let w = &src[n - maxlen..];
    let (bound, iplimit) = (limit - 1, limit - 12);
    let mut table = vec![0usize; 1 << hl];
    let (mut oc, mut lit, mut ip) = (5isize, 4usize, 0usize);
    while ip < iplimit {
        let a = ip;
        let hv = ref_hash(ref_u32(w, a), hl);
        let r = table[hv];
        let dist = a.wrapping_sub(r);
        table[hv] = a;
        let len = if dist != 0 && dist < MAX_FARDISTANCE && ref_u32(w, r) == ref_u32(w, a) {
            ref_match_end(w, a + 4, r + 4, bound) - 4 - a
        } else {
            0
        };
        if len < 4 {
            oc += 1;
            ip = a + 1;
            lit += 1;
            if lit == 32 {
                lit = 0;
                oc += 1;
            }
            continue;
        }
        if lit == 0 {
            oc -= 1;
        }
        lit = 0;
        if len >= 7 {
            oc += ((len - 7) / 255 + 1) as isize;
        }
        oc += if dist - 1 < MAX_DISTANCE { 2 } else { 4 };
        let p = a + len;
        table[ref_hash(ref_u32(w, p), hl)] = p;
        ip = p + 2;
        oc += 1;
    }
    ip as f64 / oc as f64
}

/// The compressor as CHUNK-NOTES §9.5 describes it, one byte at a time
/// with a room check before every byte: the oracle for the encoder's
/// batched literal runs and wide match compares.
fn reference_compress(clevel: u8, src: &[u8], maxout: usize) -> Vec<u8> {
    let clevel = usize::from(clevel.clamp(1, 9));
    let ratio = reference_probe(clevel, src);
    if ratio < MIN_RATIO[clevel] || src.len() < 16 || maxout < 66 {
        return Vec::new();
    }
    reference_main_pass(clevel, src, maxout, 4)
}

/// C-Blosc 1.21's probe (BloscLZ 2.5.1), one byte at a time: a dry run
/// with a 12-bit table, `ipshift = minlen = 3`, over the first 4096
/// bytes of the last quarter.
fn reference_probe_blosc1(src: &[u8]) -> f64 {
    let hl = 12;
    let n = src.len();
    let maxlen = n / 4;
    let limit = maxlen.min(4096);
    if limit < 13 {
        return 0.0;
    }
    let w = &src[n - maxlen..];
    let (bound, iplimit) = (limit - 1, limit - 12);
    let mut table = vec![0usize; 1 << hl];
    let (mut oc, mut copy, mut ip) = (5isize, 4usize, 0usize);
    while ip < iplimit {
        let a = ip;
        let hv = ref_hash(ref_u32(w, a), hl);
        let r = table[hv];
        let dist = a - r;
        table[hv] = a;
        let len = if dist != 0 && dist < MAX_FARDISTANCE && ref_u32(w, r) == ref_u32(w, a) {
            ref_match_end(w, a + 4, r + 4, bound) as isize - 3 - a as isize
        } else {
            0
        };
        if len < 3 {
            oc += 1;
            ip = a + 1;
            copy += 1;
            if copy == 32 {
                copy = 0;
                oc += 1;
            }
            continue;
        }
        if copy == 0 {
            oc -= 1;
        }
        copy = 0;
        if len >= 7 {
            oc += (len - 7) / 255 + 1;
        }
        oc += if dist - 1 < MAX_DISTANCE { 2 } else { 4 };
        let p = a + len as usize;
        table[ref_hash(ref_u32(w, p), hl)] = p;
        ip = p + 2;
        oc += 1;
    }
    ip as f64 / oc as f64
}

/// C-Blosc 1.21's `blosclz_compress`, one byte at a time.
fn reference_compress_blosc1(clevel: u8, src: &[u8], maxout: usize, split: bool) -> Vec<u8> {
    let clevel = usize::from(clevel.clamp(1, 9));
    let ratio = reference_probe_blosc1(src);
    if ratio < MIN_RATIO[clevel] || src.len() < 16 || maxout < 66 {
        return Vec::new();
    }
    let shift = if !split || ratio < 4.0 { 3 } else { 4 };
    reference_main_pass(clevel, src, maxout, shift)
}

/// The main pass of both encoders with C's `ipshift` (= `minlen`)
/// `shift`.
fn reference_main_pass(clevel: usize, src: &[u8], maxout: usize, shift: usize) -> Vec<u8> {
    let hl = HASHLOG[clevel];
    let h = |x: u32| ref_hash(x, hl);
    let u32_at = ref_u32;
    let mend = ref_match_end;
    let n = src.len();
    let mut out: Vec<u8> = vec![31, src[0], src[1], src[2], src[3]];
    let (bound, iplimit) = (n - 1, n - 12);
    let mut table = vec![0usize; 1 << hl];
    let (mut lit, mut marker, mut ip) = (4usize, 0usize, 4usize);
    macro_rules! need {
        ($k:expr) => {
            if out.len() + $k > maxout {
                return Vec::new();
            }
        };
    }
    macro_rules! literal {
        ($b:expr) => {{
            need!(2);
            out.push($b);
            lit += 1;
            if lit == 32 {
                lit = 0;
                marker = out.len();
                out.push(31);
            }
        }};
    }
    while ip < iplimit {
        let a = ip;
        let hv = h(u32_at(src, a));
        let r = table[hv];
        let dist = a.wrapping_sub(r);
        table[hv] = a;
        let len = if dist != 0 && dist < MAX_FARDISTANCE && u32_at(src, r) == u32_at(src, a) {
            (mend(src, a + 4, r + 4, bound) - a).saturating_sub(shift)
        } else {
            0
        };
        let dist = dist.wrapping_sub(1);
        if len < shift || (len <= 5 && dist >= MAX_DISTANCE) {
            literal!(src[a]);
            ip = a + 1;
            continue;
        }
        if lit > 0 {
            out[marker] = (lit - 1) as u8;
        } else {
            out.pop();
        }
        lit = 0;
        let (code, tail): (usize, Vec<u8>) = if dist < MAX_DISTANCE {
            (dist >> 8, vec![(dist & 255) as u8])
        } else {
            let f = dist - MAX_DISTANCE;
            (31, vec![255, (f >> 8) as u8, (f & 255) as u8])
        };
        if len < 7 {
            need!(1 + tail.len());
            out.push(((len << 5) + code) as u8);
        } else {
            need!(1);
            out.push(((7 << 5) + code) as u8);
            let mut rest = len - 7;
            while rest >= 255 {
                need!(1);
                out.push(255);
                rest -= 255;
            }
            need!(1 + tail.len());
            out.push(rest as u8);
        }
        out.extend_from_slice(&tail);
        let p = a + len;
        let x = u32_at(src, p);
        table[h(x)] = p;
        if clevel == 9 {
            table[h(x >> 8)] = p + 1;
        }
        ip = p + 2;
        need!(1);
        marker = out.len();
        out.push(31);
    }
    while ip <= bound {
        literal!(src[ip]);
        ip += 1;
    }
    if lit > 0 {
        out[marker] = (lit - 1) as u8;
    } else {
        out.pop();
    }
    out[0] |= 0x20;
    out
}

fn shapes(kind: u8, len: usize, seed: u64) -> Vec<u8> {
    let mut s = seed | 1;
    let mut rnd = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    match kind % 5 {
        0 => (0..len).map(|i| (i / 3) as u8).collect(),
        1 => (0..len)
            .map(|i| if i % 700 < 350 { 9 } else { (rnd() % 3) as u8 })
            .collect(),
        2 => (0..len).map(|_| (rnd() % 16) as u8).collect(),
        // Repeats at far distances (8 KiB .. 70 KiB back).
        3 => {
            let base: Vec<u8> = (0..9000).map(|_| rnd() as u8).collect();
            base.iter().cycle().take(len).copied().collect()
        }
        _ => (0..len).map(|_| rnd() as u8).collect(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn encoder_round_trips_at_every_clevel(kind in 0u8..5, len in 0usize..150_000, seed: u64, clevel in 1u8..=9) {
        let src = shapes(kind, len, seed);
        let mut dst = vec![0u8; len];
        let n = BloscLz::default().compress_stream(clevel, &src, &mut dst).unwrap();
        if n > 0 {
            let stream = &dst[..n];
            let mut out = vec![0u8; len];
            prop_assert_eq!(decompress(stream, &mut out).unwrap(), len);
            prop_assert!(out == src);
            prop_assert_eq!(reference_decode(stream, len), Some(src));
        }
    }

    /// The encoder against the per-byte description, with output
    /// limits anywhere from tiny to roomy (the limit decides between a
    /// stream and 0, so the room checks must be exactly the same).
    #[test]
    fn encoder_matches_reference(kind in 0u8..5, len in 0usize..70_000, seed: u64, clevel in 1u8..=9, room in 0.0f64..1.2) {
        let src = shapes(kind, len, seed);
        let maxout = (len as f64 * room) as usize;
        let want = reference_compress(clevel, &src, maxout);
        // A dst with garbage: the encoder must not depend on its contents.
        let mut dst = vec![0xA5u8; maxout];
        let n = BloscLz::default().compress_stream(clevel, &src, &mut dst).unwrap();
        prop_assert_eq!(n, want.len());
        prop_assert!(dst[..n] == want[..]);
    }

    /// The probe's estimate, exactly (C-identity hangs on which side
    /// of the threshold it falls), on the shapes and on blends of
    /// literals and matches that end on every residue of the 32-byte
    /// literal runs.
    #[test]
    fn probe_matches_reference(kind in 0u8..5, len in 0usize..40_000, seed: u64, clevel in 1usize..=9, lits in 0usize..70, reps in 1usize..40) {
        let mut src = shapes(kind, len, seed);
        let noise = shapes(4, lits, seed ^ 1);
        for _ in 0..reps {
            src.extend_from_slice(&noise);
            src.extend_from_slice(&[7; 20]);
        }
        let mut z = BloscLz::default();
        prop_assert_eq!(z.probe_ratio(clevel, &src).to_bits(), reference_probe(clevel, &src).to_bits());
    }

    /// C-Blosc 1.21's encoder: its streams decode back, with both the
    /// fast decoder and the format description.
    #[test]
    fn blosc1_encoder_round_trips(kind in 0u8..5, len in 0usize..150_000, seed: u64, clevel in 1u8..=9, split: bool) {
        let src = shapes(kind, len, seed);
        let mut dst = vec![0u8; len];
        let n = BloscLz::default().compress_blosc1(clevel, &src, &mut dst, split).unwrap();
        prop_assert!(n <= len);
        if n > 0 {
            let stream = &dst[..n];
            let mut out = vec![0u8; len];
            prop_assert_eq!(decompress(stream, &mut out).unwrap(), len);
            prop_assert!(out == src);
            prop_assert_eq!(reference_decode(stream, len), Some(src));
        }
    }

    /// C-Blosc 1.21's encoder against its per-byte description, with
    /// output limits from tiny to roomy.
    #[test]
    fn blosc1_encoder_matches_reference(kind in 0u8..5, len in 0usize..70_000, seed: u64, clevel in 1u8..=9, room in 0.0f64..1.2, split: bool) {
        let src = shapes(kind, len, seed);
        let maxout = (len as f64 * room) as usize;
        let want = reference_compress_blosc1(clevel, &src, maxout, split);
        let mut dst = vec![0xA5u8; maxout];
        let n = BloscLz::default().compress_blosc1(clevel, &src, &mut dst, split).unwrap();
        prop_assert_eq!(n, want.len());
        prop_assert!(dst[..n] == want[..]);
    }

    /// C-Blosc 1.21's probe, exactly, around every residue of the
    /// literal runs (the ratio decides both whether to compress and
    /// the match shift).
    #[test]
    fn blosc1_probe_matches_reference(kind in 0u8..5, len in 0usize..40_000, seed: u64, lits in 0usize..70, reps in 1usize..40) {
        let mut src = shapes(kind, len, seed);
        let noise = shapes(4, lits, seed ^ 1);
        for _ in 0..reps {
            src.extend_from_slice(&noise);
            src.extend_from_slice(&[7; 20]);
        }
        let mut z = BloscLz::default();
        prop_assert_eq!(z.probe_ratio_blosc1(&src).to_bits(), reference_probe_blosc1(&src).to_bits());
    }

    /// Mutated real streams and random bytes: the fast decoder never
    /// panics, and when it succeeds it agrees with the reference.
    #[test]
    fn hostile_streams(kind in 0u8..4, len in 16usize..20_000, seed: u64, edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..6), cut in any::<prop::sample::Index>(), out_len in 0usize..25_000) {
        let src = shapes(kind, len, seed);
        let mut dst = vec![0u8; len];
        let n = BloscLz::default().compress_stream(5, &src, &mut dst).unwrap();
        let mut stream = if n > 0 { dst[..n].to_vec() } else { src.clone() };
        for (at, v) in &edits {
            let i = at.index(stream.len());
            stream[i] = *v;
        }
        stream.truncate(cut.index(stream.len() + 1));
        for out_len in [out_len, len] {
            let mut out = vec![0u8; out_len];
            if let Ok(k) = decompress(&stream, &mut out) {
                let want = reference_decode(&stream, out_len);
                prop_assert!(want.is_some(), "fast decoder accepted what the format rejects");
                let want = want.unwrap();
                prop_assert_eq!(k, want.len());
                prop_assert!(out[..k] == want[..]);
            }
        }
    }
}

/// A stream of a literal run and then matches of every distance from 1 to
/// 80 (and some far ones) with lengths from 3 to 300, near and far from the
/// block's end: the fast decoder's piece copies (32/16/8 bytes, repeated
/// short patterns) agree with the byte-at-a-time reference.
#[test]
fn matches_of_every_distance_and_length_agree_with_the_reference() {
    fn token(out: &mut Vec<u8>, dist: usize, len: usize) {
        // len >= 3; (len - 2) < 7 fits the control byte, else extension bytes.
        let l = len - 2;
        let (hi, lo) = if dist < 8191 {
            (dist >> 8, dist & 255)
        } else {
            (31, 255)
        };
        if l < 7 {
            out.push(((l << 5) | hi) as u8);
        } else {
            out.push(((7 << 5) | hi) as u8);
            let mut rest = l - 7;
            while rest >= 255 {
                out.push(255);
                rest -= 255;
            }
            out.push(rest as u8);
        }
        out.push(lo as u8);
        if dist >= 8191 {
            let far = dist - 8191;
            out.extend_from_slice(&[(far >> 8) as u8, far as u8]);
        }
    }
    let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut cases = 0;
    for dist in (0..80).chain([200, 1000, 8190, 8191, 9000]) {
        for len in [
            3, 4, 5, 6, 7, 8, 9, 15, 16, 17, 31, 32, 33, 40, 64, 65, 100, 300,
        ] {
            // Enough literals first for the distance, then matches and
            // literals mixed, the last ones ending exactly at the block's end.
            let mut stream = Vec::new();
            let mut produced = 0;
            while produced <= dist + 40 {
                let n = 32.min(dist + 41 - produced);
                stream.push((n - 1) as u8);
                for _ in 0..n {
                    stream.push(next() as u8);
                }
                produced += n;
            }
            for _ in 0..6 {
                token(&mut stream, dist, len);
                produced += len;
                let n = (next() % 5 + 1) as usize;
                stream.push((n - 1) as u8);
                for _ in 0..n {
                    stream.push(next() as u8);
                }
                produced += n;
            }
            token(&mut stream, dist, len);
            produced += len;
            let want = reference_decode(&stream, produced).expect("a valid stream");
            assert_eq!(want.len(), produced);
            // The exact size (matches end at the block's end), and room
            // after: 8 bytes past a short match's start and 16 past a
            // match's end are where the decoder starts copying in wild
            // pieces.
            for room in [0, 1, 5, 15, 16, 17, 31, 32, 64] {
                let mut out = vec![0xAAu8; produced + room];
                let k = decompress(&stream, &mut out).unwrap();
                assert_eq!(k, produced, "dist {dist} len {len} room {room}");
                assert!(out[..k] == want[..], "dist {dist} len {len} room {room}");
                cases += 1;
            }
        }
    }
    assert_eq!(cases, 85 * 18 * 9);
}

/// Literal runs of every length (1..=32) where the 32-byte literal piece
/// cannot be used: at the stream's end (too few input bytes left) and at
/// the block's end (too little output room), each copied exactly.
#[test]
fn literal_runs_of_every_length_at_the_stream_and_block_end() {
    let mut cases = 0;
    for n in 1..=32usize {
        for lead in [0usize, 1, 5, 31] {
            for tail_match in [false, true] {
                // A first literal run of `lead + 1` bytes, the run of `n`,
                // then (or not) a 3-byte match at distance 1.
                let mut stream = vec![lead as u8];
                stream.extend((0..=lead).map(|i| (i * 7 + 1) as u8));
                stream.push((n - 1) as u8);
                stream.extend((0..n).map(|i| (i * 13 + 100) as u8));
                let mut produced = lead + 1 + n;
                if tail_match {
                    stream.extend_from_slice(&[1 << 5, 0]);
                    produced += 3;
                }
                let want = reference_decode(&stream, produced).expect("a valid stream");
                for room in [0, 1, 15, 16, 17, 31, 32, 40] {
                    let mut out = vec![0xAAu8; produced + room];
                    let k = decompress(&stream, &mut out).unwrap();
                    assert_eq!(k, produced, "n {n} lead {lead} room {room}");
                    assert!(out[..k] == want[..], "n {n} lead {lead} room {room}");
                    cases += 1;
                }
                // One byte short of the run: refused, not cut.
                let mut short = vec![0u8; lead + n];
                assert!(
                    decompress(&stream, &mut short).is_err(),
                    "n {n} lead {lead}"
                );
            }
        }
    }
    assert_eq!(cases, 32 * 4 * 2 * 8);
}

/// Output limits right around the stream's length, where one room
/// check more or less decides between a stream and 0.
#[test]
fn encoder_room_checks_match_reference_at_the_edge() {
    let mut z = BloscLz::default();
    for (kind, len, clevel) in [
        (0u8, 5000, 5u8),
        (1, 20_000, 9),
        (0, 30_000, 1),
        (1, 9000, 4),
        (3, 40_000, 7),
        (1, 100, 9),
        (1, 777, 9),
    ] {
        let src = shapes(kind, len, 99);
        let full = reference_compress(clevel, &src, len + 100);
        assert!(
            !full.is_empty(),
            "kind {kind} len {len} clevel {clevel} should compress"
        );
        // Room for the stream plus one byte, and at least the 66 bytes
        // the encoder asks for before it starts.
        let hi = (full.len() + 2).max(66);
        for maxout in full.len().saturating_sub(80)..=hi {
            let want = reference_compress(clevel, &src, maxout);
            let mut dst = vec![0u8; maxout];
            let n = z.compress_stream(clevel, &src, &mut dst).unwrap();
            assert_eq!(n, want.len(), "kind {kind} clevel {clevel} maxout {maxout}");
            assert_eq!(dst[..n], want[..]);
        }
        // The range holds the switch from 0 to the whole stream.
        assert!(reference_compress(clevel, &src, full.len() - 1).is_empty());
        assert_eq!(reference_compress(clevel, &src, hi), full);
    }
}

/// Hostile room for C-Blosc 1.21's encoder: every `dst` length up to
/// a little past the stream (dirty `dst`s, both match shifts) gives 0
/// or the whole stream, exactly where the per-byte description does,
/// and nothing past `dst` is needed.
#[test]
fn blosc1_every_room_near_the_stream_gives_0_or_the_stream() {
    let mut z = BloscLz::default();
    let mut streams = 0;
    // Split blocks with probe ratios below and above 4 (match shift 3
    // and 4).
    let (mut low, mut high) = (false, false);
    for (kind, len, clevel) in [
        (0u8, 5000, 5u8),
        (1, 20_000, 9),
        (0, 30_000, 1),
        (1, 9000, 4),
        (0, 40_000, 7),
        (1, 12_000, 2),
        (1, 100, 9),
        (1, 777, 3),
        (1, 60, 6),
    ] {
        let src = shapes(kind, len, 99);
        let ratio = reference_probe_blosc1(&src);
        low |= ratio < 4.0;
        high |= ratio >= 4.0;
        for split in [false, true] {
            let full = reference_compress_blosc1(clevel, &src, 2 * len + 100, split);
            assert!(
                !full.is_empty(),
                "kind {kind} len {len} clevel {clevel} should compress"
            );
            let mut dst = vec![0u8; (full.len() + 3).max(66)];
            let n = z.compress_blosc1(clevel, &src, &mut dst, split).unwrap();
            assert_eq!(dst[..n], full[..]);
            let mut first_fit = None;
            for maxout in (0..100).chain(full.len().saturating_sub(80)..full.len() + 3) {
                let want = reference_compress_blosc1(clevel, &src, maxout, split);
                let mut dst = vec![0x5Au8; maxout];
                let n = z.compress_blosc1(clevel, &src, &mut dst, split).unwrap();
                assert_eq!(
                    n,
                    want.len(),
                    "kind {kind} clevel {clevel} split {split} maxout {maxout}"
                );
                assert!(
                    n == 0 || dst[..n] == full[..],
                    "a stream, not a part of one"
                );
                if n > 0 && first_fit.is_none() {
                    first_fit = Some(maxout);
                }
            }
            // The switch from 0 to the whole stream is in the range.
            let fit = first_fit.expect("the stream fits somewhere");
            assert!(fit >= full.len() && fit >= 66);
            streams += 1;
        }
    }
    assert_eq!(streams, 18);
    assert!(low && high);
}

#[test]
fn tiny_and_incompressible_inputs_are_refused() {
    let mut z = BloscLz::default();
    let mut dst = vec![0u8; 100];
    assert_eq!(z.compress_stream(5, &[1, 2, 3], &mut dst).unwrap(), 0);
    let random = shapes(4, 4096, 7);
    let mut dst = vec![0u8; 4096];
    assert_eq!(z.compress_stream(5, &random, &mut dst).unwrap(), 0);
}

/// Streams of 64 KiB, the longest whose main pass has a table of `u16`
/// slots, and longer ones (`u32` slots; the probes always have `u16`
/// ones, their windows being shorter): the reference's bytes. A `u16`
/// table on the 100 000-byte streams would wrap positions and fail.
#[test]
fn streams_around_64_kib_agree_with_the_reference() {
    let mut z = BloscLz::default();
    let mut streams = 0;
    for len in [1 << 16, (1 << 16) + 1, 100_000] {
        for kind in [0u8, 1, 3] {
            let src = shapes(kind, len, len as u64);
            for clevel in [1u8, 2, 5, 9] {
                let want = reference_compress(clevel, &src, len);
                let mut got = vec![0u8; len];
                let n = z.compress_stream(clevel, &src, &mut got).unwrap();
                streams += usize::from(n > 0);
                assert!(
                    got[..n] == want[..],
                    "len {len} kind {kind} clevel {clevel}"
                );
                for split in [false, true] {
                    let want = reference_compress_blosc1(clevel, &src, len, split);
                    let n = z.compress_blosc1(clevel, &src, &mut got, split).unwrap();
                    assert!(
                        got[..n] == want[..],
                        "blosc1 len {len} kind {kind} clevel {clevel}"
                    );
                }
            }
        }
    }
    // Most of them are streams (the far repeats are refused at clevel 1).
    assert!(streams >= 30, "{streams}");
}

/// One encoder over many streams in a row (its hash table is never zeroed
/// between them: slots of earlier passes must read as C's zeroed ones), of
/// both encoders and every clevel, also across the point where the table's
/// bases run out and it is zeroed: the same bytes as a fresh encoder's and
/// the reference's.
#[test]
fn a_reused_encoder_writes_the_bytes_of_a_fresh_one() {
    let mut z = BloscLz::default();
    let mut checked = 0;
    for start in [0, u32::MAX - 300_000, u32::MAX - 5] {
        z.alloc_table();
        z.next = start;
        for (i, (kind, len)) in [(0u8, 5000), (1, 20_000), (2, 4096), (3, 70_000), (4, 300)]
            .into_iter()
            .cycle()
            .take(12)
            .enumerate()
        {
            let src = shapes(kind, len, i as u64);
            let clevel = (i % 9 + 1) as u8;
            let mut got = vec![0u8; len + 64];
            let n = z.compress_stream(clevel, &src, &mut got).unwrap();
            let want = reference_compress(clevel, &src, len + 64);
            assert_eq!(n, want.len(), "start {start} stream {i}");
            assert!(got[..n] == want[..], "start {start} stream {i}");
            let mut fresh = vec![0u8; len + 64];
            let split = i % 2 == 0;
            let m = z.compress_blosc1(clevel, &src, &mut fresh, split).unwrap();
            let k = BloscLz::default()
                .compress_blosc1(clevel, &src, &mut got, split)
                .unwrap();
            assert_eq!(m, k, "blosc1, start {start} stream {i}");
            assert!(fresh[..m] == got[..k], "blosc1, start {start} stream {i}");
            checked += 1;
        }
    }
    assert_eq!(checked, 36);
    // The last round ran through the end of the bases.
    assert!(z.next < u32::MAX - 300_000);
}
