//! `SChunk::chunk_stamp`: equal stamps of a super-chunk in memory name the
//! same chunk bytes, through any run of changes (compactions included);
//! chunks a change leaves alone keep theirs.

mod support;
use std::collections::HashMap;

use oxiblosc::schunk::{ChunkStamp, SChunk};
use oxiblosc::{CParams, Codec};
use support::{Rng, data, tempdir};

const CS: usize = 1000;

fn cparams() -> CParams {
    CParams::default().codec(Codec::BloscLz).typesize(4)
}

fn chunk(seed: u64) -> Vec<u8> {
    oxiblosc::compress(&data(CS, seed as u32), &cparams()).unwrap()
}

fn stamps(sc: &SChunk) -> Vec<ChunkStamp> {
    (0..sc.nchunks())
        .map(|i| {
            sc.chunk_stamp(i)
                .expect("a chunk of a frame in memory has a stamp")
        })
        .collect()
}

#[test]
fn a_change_keeps_the_stamps_of_the_chunks_it_leaves_alone() {
    let mut sc = SChunk::new(cparams()).unwrap();
    for s in 0..4 {
        sc.append_chunk(&chunk(s)).unwrap();
    }
    let s0 = stamps(&sc);
    assert_eq!(sc.chunk_stamp(4), None, "out of range");

    sc.update_chunk(1, &chunk(10)).unwrap();
    let s1 = stamps(&sc);
    assert_ne!(s1[1], s0[1], "the updated chunk");
    assert_eq!([s1[0], s1[2], s1[3]], [s0[0], s0[2], s0[3]]);

    sc.insert_chunk(0, &chunk(11)).unwrap();
    let s2 = stamps(&sc);
    assert!(!s1.contains(&s2[0]), "the inserted chunk is new");
    assert_eq!(&s2[1..], &s1[..], "the others moved up one index");

    sc.delete_chunk(2).unwrap();
    let s3 = stamps(&sc);
    assert_eq!(s3, [s2[0], s2[1], s2[3], s2[4]]);

    sc.append_chunk(&chunk(12)).unwrap();
    let s4 = stamps(&sc);
    assert_eq!(&s4[..4], &s3[..]);
    assert!(!s3.contains(&s4[4]));
}

/// A compaction moves chunks into space others held: the chunk now at an
/// old chunk's place must not take its stamp.
#[test]
fn a_compaction_renews_every_stamp() {
    let mut sc = SChunk::new(cparams()).unwrap();
    sc.append_chunk(&chunk(1)).unwrap();
    sc.append_chunk(&chunk(2)).unwrap();
    let before = stamps(&sc);
    // Chunk 0's new version goes after chunk 1, its old place is a hole;
    // compacted, chunk 1 starts where chunk 0 did.
    sc.update_chunk(0, &chunk(3)).unwrap();
    let updated = stamps(&sc);
    assert_eq!(updated[1], before[1]);
    sc.compact().unwrap();
    let after = stamps(&sc);
    for s in &after {
        assert!(
            !before.contains(s) && !updated.contains(s),
            "{s:?} outlived the compaction"
        );
    }
    assert_eq!(sc.get_chunk(1).unwrap().into_owned(), chunk(2));
}

#[test]
fn stamps_of_two_super_chunks_differ_and_files_have_none() {
    let mut a = SChunk::new(cparams()).unwrap();
    let mut b = SChunk::new(cparams()).unwrap();
    a.append_chunk(&chunk(1)).unwrap();
    b.append_chunk(&chunk(1)).unwrap();
    assert_ne!(a.chunk_stamp(0), b.chunk_stamp(0));
    let back = SChunk::from_cframe(a.to_cframe().unwrap()).unwrap();
    assert!(back.chunk_stamp(0).is_some());
    assert_ne!(back.chunk_stamp(0), a.chunk_stamp(0));

    let path = tempdir("schunk-stamp").join("f.b2frame");
    let mut f = SChunk::builder()
        .cparams(cparams())
        .create_file(&path)
        .unwrap();
    f.append_chunk(&chunk(1)).unwrap();
    assert_eq!(f.chunk_stamp(0), None, "a frame in a file reuses its space");
}

/// Random changes (appends, inserts, updates, deletes, zero chunks, the
/// compactions a frame in memory makes by itself past its slack and
/// explicit ones, frames written): a stamp seen again names the bytes it
/// named when first seen.
#[test]
fn an_equal_stamp_is_always_the_same_bytes() {
    let mut rng = Rng(0x5747_4d50);
    let mut sc = SChunk::new(cparams()).unwrap();
    let mut seen: HashMap<ChunkStamp, Vec<u8>> = HashMap::new();
    let zero = oxiblosc::special_chunk(&cparams(), CS, oxiblosc::SpecialValue::Zeros, &[]).unwrap();
    let mut renewed = 0;
    for step in 0..3000u64 {
        let n = sc.nchunks();
        let c = if rng.below(8) == 0 {
            zero.clone()
        } else {
            chunk(step)
        };
        match rng.below(10) {
            _ if n == 0 => drop(sc.append_chunk(&c).unwrap()),
            0..=2 => drop(sc.append_chunk(&c).unwrap()),
            3 => sc
                .insert_chunk(rng.below(n as u64 + 1) as usize, &c)
                .unwrap(),
            4..=6 => sc.update_chunk(rng.below(n as u64) as usize, &c).unwrap(),
            7 => sc.delete_chunk(rng.below(n as u64) as usize).unwrap(),
            8 if rng.below(20) == 0 => {
                sc.compact().unwrap();
                renewed += 1;
            }
            _ => drop(sc.to_cframe().unwrap()),
        }
        for i in 0..sc.nchunks() {
            let s = sc.chunk_stamp(i).unwrap();
            let bytes = sc.get_chunk(i).unwrap().into_owned();
            let first = seen.entry(s).or_insert_with(|| bytes.clone());
            assert_eq!(
                *first, bytes,
                "step {step}: chunk {i}'s stamp {s:?} named other bytes"
            );
        }
    }
    assert!(
        renewed > 0 && sc.nchunks() > 10,
        "the run compacted and kept chunks"
    );
}
