//! Dead space in file-backed frames stays bounded: crash-safe changes never
//! overwrite bytes the previous frame still uses, so every change leaves
//! some bytes dead; the allocator in `src/schunk/space.rs` reuses them.
//! These tests append thousands of small chunks (to a file and to a frame
//! at an offset inside a larger file) and check the file length after
//! every append against the live bytes plus the bound the module docs
//! prove: at most one reserved chunk and two index+trailer tails, plus
//! the 35-byte trailer of the empty frame the first chunk cannot reuse.

mod support;
use oxiblosc::schunk::{OpenOptions, SChunk};
use oxiblosc::{CParams, Codec};
use std::fs;
use std::path::PathBuf;
use support::tempdir;

/// A chunk's worth of data whose compressibility varies with `k`, so the
/// stored chunk sizes vary (about 100 bytes to 2 KB).
fn data(n: usize, k: u32) -> Vec<u8> {
    let mut s = k.wrapping_mul(2_654_435_761).wrapping_add(1);
    let noisy = (k % 17) as usize * n / 200;
    (0..n)
        .map(|i| {
            if i < noisy {
                s ^= s << 13;
                s ^= s >> 17;
                s ^= s << 5;
                s as u8
            } else {
                (i / 256) as u8 ^ k as u8
            }
        })
        .collect()
}

const CS: usize = 4096;
const N: u32 = 2000;
/// The empty frame's trailer (no vlmetalayers): the first chunk is written
/// after it, and no chunk is ever small enough to reuse it.
const EMPTY_TRAILER: u64 = 35;

struct Sizes {
    file: u64,
    live: u64,
    holes: u64,
}

/// Live bytes of the frame: header, stored chunks, index and trailer.
fn live_bytes(sc: &SChunk) -> (u64, u64) {
    let h = sc.frame_header();
    let hl = u64::from(h.header_len);
    let tail = h.frame_len - hl - h.cbytes as u64;
    (hl + sc.cbytes() + tail, tail)
}

fn append_many(sc: &mut SChunk, path: &PathBuf, prefix: u64) -> Sizes {
    let mut max_chunk = 0u64;
    let mut max_tail = 0u64;
    let mut holes = 0u64;
    for k in 0..N {
        let n = sc.append_buffer(&data(CS, k)).unwrap();
        let c = sc.chunk_info(n - 1).unwrap().cbytes as u64;
        let new_max = c > max_chunk;
        max_chunk = max_chunk.max(c);
        let (live, tail) = live_bytes(sc);
        max_tail = max_tail.max(tail);
        let file = fs::metadata(path).unwrap().len() - prefix;
        assert_eq!(file, sc.frame_header().frame_len, "append {k}");
        let dead = file - live;
        assert_eq!(dead, sc.dead_bytes(), "append {k}");
        // Holes only appear when a chunk is larger than every earlier one
        // (it did not fit the reserve); otherwise later chunks fill them.
        assert!(
            sc.hole_bytes() <= holes || new_max,
            "append {k}: holes grew from {holes} to {}",
            sc.hole_bytes()
        );
        holes = sc.hole_bytes();
        // The gap before the index: the reserve (the largest chunk) plus at
        // most the old and the new index+trailer.
        // The reserve is the largest chunk a chunk of CS bytes can be
        // (CS plus the 32-byte header), or the largest stored if larger.
        let gap = dead - holes;
        let reserve = max_chunk.max(CS as u64 + 32);
        assert!(
            gap <= reserve + 2 * max_tail,
            "append {k}: gap of {gap} bytes, reserve {reserve}, max tail {max_tail}"
        );
        if std::env::var("DBG").is_ok() {
            eprintln!("k {k} dead {dead} holes {holes} mc {max_chunk} mt {max_tail}");
        }
    }
    let (live, _) = live_bytes(sc);
    Sizes {
        file: fs::metadata(path).unwrap().len() - prefix,
        live,
        holes,
    }
}

fn check_contents(sc: &mut SChunk) {
    assert_eq!(sc.nchunks(), N as usize);
    for k in 0..N {
        assert_eq!(
            sc.decompress_chunk_vec(k as usize).unwrap(),
            data(CS, k),
            "chunk {k}"
        );
    }
}

fn cparams() -> CParams {
    CParams::default().codec(Codec::Lz4).typesize(4)
}

#[test]
fn appending_thousands_of_chunks_to_a_file_wastes_a_bounded_amount() {
    let dir = tempdir("file");
    let path = dir.join("f.b2frame");
    let mut sc = SChunk::builder()
        .cparams(cparams())
        .chunksize(CS)
        .fsync(false)
        .create_file(&path)
        .unwrap();
    let s = append_many(&mut sc, &path, 0);
    eprintln!(
        "file frame after {N} appends: live {} bytes, file {} bytes ({} dead, {} in holes)",
        s.live,
        s.file,
        s.file - s.live,
        s.holes
    );
    drop(sc);
    let mut sc = OpenOptions::new().fsync(false).open(&path).unwrap();
    check_contents(&mut sc);
    // trim: the frame ends right after its last chunk.
    sc.trim().unwrap();
    let (live, _) = live_bytes(&sc);
    let file = fs::metadata(&path).unwrap().len();
    assert_eq!(file, live + sc.hole_bytes(), "trimmed");
    assert!(sc.hole_bytes() >= EMPTY_TRAILER);
    eprintln!("after trim: live {live}, file {file}");
    // compact: not one dead byte.
    sc.compact().unwrap();
    let (live, _) = live_bytes(&sc);
    assert_eq!(fs::metadata(&path).unwrap().len(), live);
    drop(sc);
    let mut sc = SChunk::open(&path).unwrap();
    check_contents(&mut sc);
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn appending_thousands_of_chunks_to_a_frame_at_an_offset_wastes_a_bounded_amount() {
    let dir = tempdir("offset");
    let path = dir.join("f.bin");
    let prefix = vec![0xA5u8; 1000];
    fs::write(&path, &prefix).unwrap();
    let mut sc = SChunk::builder()
        .cparams(cparams())
        .chunksize(CS)
        .fsync(false)
        .append_to_file(&path)
        .unwrap();
    let s = append_many(&mut sc, &path, prefix.len() as u64);
    eprintln!(
        "frame at offset 1000 after {N} appends: live {} bytes, file {} bytes ({} dead, {} in holes)",
        s.live,
        s.file,
        s.file - s.live,
        s.holes
    );
    sc.compact().unwrap();
    let (live, _) = live_bytes(&sc);
    assert_eq!(fs::metadata(&path).unwrap().len(), 1000 + live);
    drop(sc);
    assert_eq!(fs::read(&path).unwrap()[..1000], prefix[..]);
    let mut sc = SChunk::open_offset(&path, 1000).unwrap();
    check_contents(&mut sc);
    fs::remove_dir_all(&dir).unwrap();
}

/// After chunks are dropped (updated, deleted, cut by a shrinking rebuild
/// of the chunk list), the handle's live and dead bytes are what a fresh
/// open of the file finds: each dropped chunk counts its stored length.
#[test]
fn live_and_dead_bytes_after_drops_are_what_a_fresh_open_finds() {
    let dir = tempdir("drops");
    let path = dir.join("f.b2frame");
    let mut sc = SChunk::builder()
        .cparams(CParams::default().codec(Codec::Lz4).typesize(4))
        .chunksize(CS)
        .fsync(false)
        .create_file(&path)
        .unwrap();
    for k in 0..40 {
        sc.append_buffer(&data(CS, k)).unwrap();
    }
    let same_as_fresh = |sc: &SChunk, what: &str| {
        let fresh = OpenOptions::new().read_only(true).open(&path).unwrap();
        assert_eq!(
            (sc.cbytes(), sc.dead_bytes(), sc.hole_bytes()),
            (fresh.cbytes(), fresh.dead_bytes(), fresh.hole_bytes()),
            "{what}: (cbytes, dead, holes) of the handle and of a fresh open"
        );
    };
    same_as_fresh(&sc, "appends");
    for (k, i) in [(100u32, 3usize), (101, 17), (102, 39)] {
        sc.update_chunk(i, &oxiblosc::compress(&data(CS, k), sc.cparams()).unwrap())
            .unwrap();
        same_as_fresh(&sc, &format!("update {i}"));
    }
    for i in [0usize, 10, 20, 30] {
        sc.delete_chunk(i).unwrap();
        same_as_fresh(&sc, &format!("delete {i}"));
    }
    sc.insert_chunk(
        5,
        &oxiblosc::compress(&data(CS, 200), sc.cparams()).unwrap(),
    )
    .unwrap();
    same_as_fresh(&sc, "insert");
    // Many chunks dropped at once (an NDArray shrink takes this path).
    let keep = sc.nchunks() / 3;
    let n = sc.nchunks();
    for i in (keep..n).rev() {
        sc.delete_chunk(i).unwrap();
    }
    same_as_fresh(&sc, "deletes to a third");
}
