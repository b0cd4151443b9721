//! `SChunk::frame_version`: while it stays the same, the chunks borrowed
//! from a frame in memory are where they were and hold what they held; every
//! change moves it; reads leave it alone.

mod support;

use oxiblosc::schunk::SChunk;
use oxiblosc::{CParams, Codec};
use support::{Rng, data, tempdir};

const CS: usize = 4000;

fn cparams() -> CParams {
    CParams::default().codec(Codec::BloscLz).typesize(4)
}

fn chunk(seed: u64) -> Vec<u8> {
    oxiblosc::compress(&data(CS, seed as u32), &cparams()).unwrap()
}

/// Where each chunk borrowed from the frame is, and its bytes.
fn borrowed(sc: &SChunk) -> Vec<(usize, Vec<u8>)> {
    (0..sc.nchunks())
        .map(|i| {
            let c = sc.chunk_shared(i).unwrap();
            (c.as_ptr() as usize, c.to_vec())
        })
        .collect()
}

/// Random reads and changes of every kind: after each, an unchanged
/// version finds every borrowed chunk at its address with its bytes, and a
/// change always moved the version.
#[test]
fn an_unchanged_version_keeps_every_borrowed_chunk() {
    let mut rng = Rng(0x4652_5645);
    let mut sc = SChunk::builder()
        .cparams(cparams())
        .meta("m", &[0u8; 8])
        .build_memory()
        .unwrap();
    let mut before = (sc.frame_version(), borrowed(&sc));
    let (mut kept, mut moved) = (0, 0);
    for step in 0..2000u64 {
        let n = sc.nchunks();
        let c = chunk(step);
        let pick = if n == 0 { 0 } else { rng.below(16) };
        let at = |rng: &mut Rng, n: usize| rng.below(n as u64) as usize;
        // Whether the step changed the super-chunk.
        let changes = match pick {
            0 => sc.append_chunk(&c).is_ok(),
            1 => sc.append_buffer(&data(CS, step as u32)).is_ok(),
            2 => sc.insert_chunk(at(&mut rng, n + 1), &c).is_ok(),
            3 => sc.update_chunk(at(&mut rng, n), &c).is_ok(),
            4 => sc.delete_chunk(at(&mut rng, n)).is_ok(),
            5 => {
                let name = format!("v{}", rng.below(3));
                sc.vlmeta_set(&name, &[step as u8; 40]).is_ok()
            }
            6 => sc.meta_update("m", &step.to_le_bytes()).is_ok(),
            7 => {
                let mut order: Vec<usize> = (0..n).rev().collect();
                order.rotate_left(at(&mut rng, n));
                sc.reorder_chunks(&order).is_ok()
            }
            8 => sc.set_slice(rng.below(CS as u64), &[7u8; 12]).is_ok(),
            9 => rng.below(4) == 0 && sc.compact().is_ok(),
            // Writes the pending index and trailer, if any: no change.
            10 => sc.flush().is_err(),
            11 => sc.to_cframe().is_err(),
            12 => sc.cframe_len().is_err(),
            13 => sc.get_chunk(at(&mut rng, n)).is_err(),
            _ => sc.decompress_chunk_vec(at(&mut rng, n)).is_err(),
        };
        let now = (sc.frame_version(), borrowed(&sc));
        assert!(now.0.is_some(), "a frame in memory has a version");
        if now.0 == before.0 {
            assert!(!changes, "step {step}: a change kept the version");
            assert!(
                now.1 == before.1,
                "step {step}: the version stayed, a borrowed chunk moved or changed"
            );
            kept += 1;
        } else {
            moved += 1;
        }
        before = now;
    }
    assert!(kept > 300 && moved > 300, "kept {kept}, moved {moved}");
}

/// A read, however many, leaves the version; a flush with nothing pending
/// too. A flush that writes the index moves it, and so does a pointer lent
/// for C's writes only when it writes the pending index.
#[test]
fn reads_keep_the_version_and_a_flush_of_the_index_moves_it() {
    let mut sc = SChunk::new(cparams()).unwrap();
    sc.append_chunk(&chunk(1)).unwrap();
    sc.append_chunk(&chunk(2)).unwrap();
    let v = sc.frame_version();
    for i in 0..2 {
        sc.get_chunk(i).unwrap();
        sc.decompress_chunk_vec(i).unwrap();
        sc.chunk_stamp(i).unwrap();
    }
    assert_eq!(sc.frame_version(), v);
    let (p, _) = sc.cframe_ptr().unwrap().unwrap();
    let flushed = sc.frame_version();
    assert_ne!(flushed, v, "lending the frame wrote its pending index");
    assert_eq!(sc.cframe_ptr().unwrap().unwrap().0, p);
    sc.to_cframe().unwrap();
    sc.flush().unwrap();
    assert_eq!(sc.frame_version(), flushed, "nothing was pending");
}

#[test]
fn versions_of_two_super_chunks_differ_and_other_storage_has_none() {
    let mut a = SChunk::new(cparams()).unwrap();
    let mut b = SChunk::new(cparams()).unwrap();
    a.append_chunk(&chunk(1)).unwrap();
    b.append_chunk(&chunk(1)).unwrap();
    assert!(a.frame_version().is_some());
    assert_ne!(a.frame_version(), b.frame_version());
    let back = SChunk::from_cframe(a.to_cframe().unwrap()).unwrap();
    assert!(back.frame_version().is_some());
    assert_ne!(back.frame_version(), a.frame_version());

    let dir = tempdir("schunk-frame-version");
    let mut f = SChunk::builder()
        .cparams(cparams())
        .create_file(dir.join("f.b2frame"))
        .unwrap();
    f.append_chunk(&chunk(1)).unwrap();
    assert_eq!(f.frame_version(), None, "a frame in a file");
    let mut d = SChunk::builder()
        .cparams(cparams())
        .create_dir(dir.join("d.b2frame"))
        .unwrap();
    d.append_chunk(&chunk(1)).unwrap();
    assert_eq!(d.frame_version(), None, "a directory frame");
    let mut v = SChunk::builder()
        .cparams(cparams())
        .build_io(Box::new(Vec::<u8>::new()))
        .unwrap();
    v.append_chunk(&chunk(1)).unwrap();
    assert_eq!(
        v.frame_version(),
        None,
        "a caller's storage counts no writes"
    );
}
