//! Every SIMD implementation available on this machine gives exactly the
//! scalar reference's output (forward and inverse), and round-trips, for
//! type sizes 1..=32, 48, 64, 255 and every length from 0 to well past the
//! widest unrolled loop, including partial elements and partial groups of 8.

mod common;
use common::*;
use oxiblosc_kernels::Kernels;

fn compare(op: Op) {
    let simd = simd_kernels();
    if simd.is_empty() {
        eprintln!("no SIMD kernels on this machine: nothing to compare");
        return;
    }
    let g = generic();
    for ts in typesizes() {
        if !op.applies(ts) {
            continue;
        }
        for len in lengths(ts, DENSE, ELEMS) {
            let src = mixed(len, (ts * 7919 + len) as u64);
            let reference = bytes(len, len as u64 ^ 0x55);
            let want = op.run(g, ts, &src, &reference);
            for k in &simd {
                let got = op.run(k, ts, &src, &reference);
                assert!(
                    got == want,
                    "{} {op:?} ts {ts} len {len}: first difference at byte {:?}",
                    k.isa(),
                    got.iter().zip(&want).position(|(a, b)| a != b)
                );
                if let Some(inv) = op.inverse() {
                    let back = inv.run(k, ts, &got, &reference);
                    assert!(
                        back == src,
                        "{} {op:?} ts {ts} len {len}: no round trip",
                        k.isa()
                    );
                }
            }
        }
    }
}

#[test]
fn shuffle() {
    compare(Op::Shuffle);
}
#[test]
fn unshuffle() {
    compare(Op::Unshuffle);
}
#[test]
fn bitshuffle() {
    compare(Op::Bitshuffle);
}
#[test]
fn bitunshuffle() {
    compare(Op::Bitunshuffle);
}
/// The bit shuffles of outputs of 1 MiB and more with typesizes of 5 and
/// more store their rows around the caches (non-temporal stores) when the
/// rows keep their alignment: rows that are a multiple of 32 bytes (and
/// one that is not), whole and partial groups of 8, trailing bytes, and
/// destinations at every offset mod 32 (so the first tile is unaligned).
#[test]
fn bitshuffle_streamed_rows() {
    let simd = simd_kernels();
    let g = generic();
    let (min, offsets): (usize, &[usize]) = if cfg!(miri) {
        (1 << 10, &[0, 1])
    } else {
        // Past the 1 MiB (exclusive) threshold for every typesize below.
        (1_100_000, &[0, 1, 8, 16, 31])
    };
    let sizes: &[usize] = if cfg!(miri) {
        &[5, 8, 16]
    } else {
        &[5, 7, 8, 12, 16, 24, 32, 48, 64, 255]
    };
    for &ts in sizes {
        let rowlen = (min / (8 * ts)).div_ceil(32) * 32;
        for (rows, extra_elems, tail) in [(rowlen, 0, 0), (rowlen, 5, ts - 1), (rowlen + 1, 3, 1)] {
            let len = (8 * rows + extra_elems) * ts + tail;
            assert!(len >= min);
            bitshuffle_at_offsets(&simd, g, ts, len, offsets);
        }
    }
}

/// `len` bytes of `ts`-byte items bit shuffled by every kernel of `simd`
/// into destinations at each of `offsets`: the scalar reference's output
/// (`g`), and back. Returns the number of cases.
fn bitshuffle_at_offsets(
    simd: &[&Kernels],
    g: &Kernels,
    ts: usize,
    len: usize,
    offsets: &[usize],
) -> usize {
    let src = mixed(len, (ts * 31 + len) as u64);
    let want = Op::Bitshuffle.run(g, ts, &src, &[]);
    let mut cases = 0;
    for k in simd {
        for &off in offsets {
            let mut buf = vec![0x5A; len + off];
            k.bitshuffle(ts, &src, &mut buf[off..]).unwrap();
            assert!(
                buf[off..] == want[..],
                "{} bitshuffle ts {ts} len {len} offset {off}: first difference at {:?}",
                k.isa(),
                buf[off..].iter().zip(&want).position(|(a, b)| a != b)
            );
            let mut back = vec![0; len];
            k.bitunshuffle(ts, &buf[off..], &mut back).unwrap();
            assert!(back == src, "{} ts {ts} len {len}: no round trip", k.isa());
            cases += 1;
        }
    }
    cases
}

/// Bit shuffles whose rows are a multiple of 4 KiB apart (256 bytes under
/// Miri), or of 2 KiB for 8-byte items, take blocks of 256 bytes per row for
/// typesizes 4 to 8 on 32-byte vectors, both ways: rows of one, two and (outputs past
/// 1 MiB, whose rows are streamed for typesizes of 5 and more) five pages
/// (one under Miri), and for 8-byte items of a half and three halves, with
/// whole and partial groups of 8 and trailing bytes after them, at offsets
/// that leave the first tile unaligned; each against the scalar reference,
/// and back.
#[test]
fn bitshuffle_rows_a_page_apart() {
    let simd = simd_kernels();
    let g = generic();
    let page = if cfg!(miri) { 256 } else { 4096 };
    let sizes: &[usize] = if cfg!(miri) {
        &[4, 8]
    } else {
        &[3, 4, 5, 6, 7, 8, 9]
    };
    let mut checked = 0;
    let mut cases = 0;
    for &ts in sizes {
        let mut rowlens: Vec<usize> = if cfg!(miri) {
            vec![page]
        } else {
            vec![page, 2 * page, 5 * page]
        };
        if ts == 8 && !cfg!(miri) {
            rowlens.extend([page / 2, 3 * page / 2]);
        }
        for rows in rowlens {
            for (extra_elems, tail) in [(0, 0), (5, ts - 1)] {
                let len = (8 * rows + extra_elems) * ts + tail;
                checked += bitshuffle_at_offsets(&simd, g, ts, len, &[0, 8]);
                cases += 2 * simd.len();
            }
        }
    }
    assert_eq!(checked, cases);
}

/// The byte (un)shuffles phase their tiles so that most wide stores are
/// aligned: destinations (and sources) at every offset mod 32, for the
/// typesizes with tiled kernels, with lengths of whole tiles, leftover
/// elements and trailing bytes, give exactly the reference's output.
#[test]
fn byte_shuffles_at_every_offset() {
    let simd = simd_kernels();
    let g = generic();
    let offsets: Vec<usize> = if cfg!(miri) {
        vec![0, 8, 16]
    } else {
        (0..32).collect()
    };
    let counts: &[usize] = if cfg!(miri) {
        &[64, 97]
    } else {
        &[32, 64, 97, 256, 1000, 4096 + 33]
    };
    for ts in [2, 4, 8, 16] {
        for &n in counts {
            for tail in [0, ts - 1] {
                let len = n * ts + tail;
                let src = mixed(len, (ts * 131 + len) as u64);
                let shuffled = Op::Shuffle.run(g, ts, &src, &[]);
                for k in &simd {
                    for &off in &offsets {
                        let mut sbuf = vec![0u8; len + 32];
                        sbuf[off..off + len].copy_from_slice(&shuffled);
                        let mut dbuf = vec![0x5A; len + 32];
                        let soff = (off * 7) % 32;
                        k.unshuffle(ts, &sbuf[off..off + len], &mut dbuf[soff..soff + len])
                            .unwrap();
                        assert!(
                            dbuf[soff..soff + len] == src[..],
                            "{} unshuffle ts {ts} len {len} offsets {off}/{soff}",
                            k.isa()
                        );
                        k.shuffle(ts, &src, &mut dbuf[off..off + len]).unwrap();
                        assert!(
                            dbuf[off..off + len] == shuffled[..],
                            "{} shuffle ts {ts} len {len} offset {off}",
                            k.isa()
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn bitshuffle_blosc1() {
    compare(Op::BitshuffleBlosc1);
    compare(Op::BitunshuffleBlosc1);
}
#[test]
fn delta() {
    for with_ref in [false, true] {
        compare(Op::DeltaEncode { with_ref });
        compare(Op::DeltaDecode { with_ref });
    }
}
#[test]
fn trunc_prec() {
    for p in [1, 7, 22, 23, -1, -10, -22, 51, 52, -51] {
        compare(Op::TruncPrec(p));
    }
}
#[test]
fn bytedelta() {
    compare(Op::BytedeltaEncode);
    compare(Op::BytedeltaDecode);
}
