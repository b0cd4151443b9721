//! `SChunk::write_cframe` and `SChunk::save`: the frame written a piece at
//! a time is `to_cframe`'s, byte for byte, for frames in memory, in a file
//! and in a directory, and writing it holds a piece (or one chunk file),
//! not the frame: saving a 4 MiB frame allocated 4 MiB until session 39.

mod support;
use support::{Rng, counting, tempdir};

use oxiblosc::schunk::{CFRAME_PIECE, SChunk};
use oxiblosc::{CParams, Frame, SpecialValue, special_chunk};
use std::fs;

#[global_allocator]
static GLOBAL: counting::Counting = counting::Counting;

/// Chunks of 256 KiB of noise (stored as they are: the frame is 4 MiB).
const CHUNK: usize = 256 << 10;

fn fill(sc: &mut SChunk) {
    let mut rng = Rng(11);
    for _ in 0..16 {
        sc.append_buffer(&rng.bytes(CHUNK)).unwrap();
    }
    // A zero chunk by its index entry, and one chunk stored twice over
    // (a copy of the last inserted in the middle).
    let zeros = special_chunk(
        &CParams::default().typesize(4),
        CHUNK,
        SpecialValue::Zeros,
        &[],
    )
    .unwrap();
    sc.append_chunk(&zeros).unwrap();
    let last = sc.get_chunk(3).unwrap().into_owned();
    sc.insert_chunk(5, &last).unwrap();
}

fn builder() -> oxiblosc::schunk::SChunkBuilder {
    SChunk::builder()
        .cparams(CParams::default().typesize(4))
        .chunksize(CHUNK)
        .fsync(false)
}

/// The frame `write_cframe` streams is `to_cframe`'s, its length
/// `cframe_len`; `save` writes the same bytes to a file, allocating no more
/// than a piece and a chunk, and the saved file opens with the same chunks.
#[test]
fn write_cframe_and_save_stream_the_frame() {
    let dir = tempdir("cframe-write");
    let mut memory = builder().build_memory().unwrap();
    fill(&mut memory);
    let mut file = builder().create_file(dir.join("in.b2frame")).unwrap();
    fill(&mut file);
    let mut sparse = builder().create_dir(dir.join("in.b2sframe")).unwrap();
    fill(&mut sparse);
    for (name, sc) in [
        ("memory", &mut memory),
        ("file", &mut file),
        ("directory", &mut sparse),
    ] {
        let whole = sc.to_cframe().unwrap();
        assert!(whole.len() > 16 * CHUNK, "{name}: {}", whole.len());
        Frame::parse(&whole).unwrap();
        let mut streamed = Vec::new();
        let n = sc.write_cframe(&mut streamed).unwrap();
        assert_eq!(n, whole.len() as u64, "{name}");
        assert!(streamed == whole, "{name}: another frame");
        assert_eq!(sc.cframe_len().unwrap(), n, "{name}");

        // Into a caller's buffer: no other copy of the frame; a memory
        // frame also lends its bytes.
        let mut buf = vec![0xA5u8; whole.len() + 7];
        counting::reset_largest();
        let m = sc.to_cframe_into(&mut buf).unwrap();
        let largest = counting::largest();
        assert!(
            largest <= CFRAME_PIECE + CHUNK + (64 << 10),
            "{name}: to_cframe_into allocated {largest} bytes at once"
        );
        assert_eq!(m, whole.len(), "{name}");
        assert!(buf[..m] == whole[..] && buf[m..] == [0xA5; 7], "{name}");
        let short = sc.to_cframe_into(&mut buf[..whole.len() - 1]).unwrap_err();
        assert!(
            matches!(short, oxiblosc::Error::DstTooSmall { needed, .. } if needed == m),
            "{name}: {short}"
        );
        match sc.cframe_ref().unwrap() {
            Some(f) => assert!(name == "memory" && f == &whole[..]),
            None => assert_ne!(name, "memory"),
        }

        let out = dir.join(format!("{name}.b2frame"));
        counting::reset_largest();
        let saved = sc.save(&out).unwrap();
        let largest = counting::largest();
        assert!(
            largest <= CFRAME_PIECE + CHUNK + (64 << 10),
            "{name}: save allocated {largest} bytes at once"
        );
        assert_eq!(saved, n, "{name}");
        assert!(fs::read(&out).unwrap() == whole, "{name}: the saved file");
        let mut back = SChunk::open(&out).unwrap();
        assert_eq!(back.nchunks(), sc.nchunks(), "{name}");
        for i in 0..sc.nchunks() {
            assert!(
                back.decompress_chunk_vec(i).unwrap() == sc.decompress_chunk_vec(i).unwrap(),
                "{name}: chunk {i}"
            );
        }
        let left: Vec<_> = fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| n.ends_with(".tmp"))
            .collect();
        assert!(left.is_empty(), "{name}: {left:?}");
    }
    drop((memory, file, sparse));
    let _ = fs::remove_dir_all(&dir);
}

/// A writer that fails after `budget` bytes: `write_cframe` returns its
/// error, and `save` into a directory that is not there names the path and
/// leaves no file.
#[test]
fn a_failing_writer_is_an_error() {
    struct Budget(usize);
    impl std::io::Write for Budget {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            if self.0 < b.len() {
                return Err(std::io::Error::other("no room"));
            }
            self.0 -= b.len();
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let dir = tempdir("cframe-write-fail");
    let mut sparse = builder().create_dir(dir.join("in.b2sframe")).unwrap();
    fill(&mut sparse);
    let mut memory = builder().build_memory().unwrap();
    fill(&mut memory);
    for sc in [&mut sparse, &mut memory] {
        for budget in [0, 100, 3 * CHUNK] {
            let e = sc.write_cframe(&mut Budget(budget)).unwrap_err();
            assert!(e.to_string().contains("no room"), "{budget}: {e}");
        }
        let missing = dir.join("missing").join("out.b2frame");
        let e = sc.save(&missing).unwrap_err();
        assert!(e.to_string().contains("missing"), "{e}");
        assert!(!missing.exists());
    }
    drop((sparse, memory));
    let _ = fs::remove_dir_all(&dir);
}

/// A chunk file replaced between `write_cframe`'s two reads of a directory
/// frame (the layout, then the bytes) by another chunk of another length:
/// refused as changed, not written into a frame whose index names other
/// lengths.
#[test]
fn a_chunk_file_changed_while_written_is_refused() {
    struct Swap<'a> {
        file: &'a std::path::Path,
        with: &'a [u8],
        done: bool,
        out: Vec<u8>,
    }
    impl std::io::Write for Swap<'_> {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            if !self.done {
                fs::write(self.file, self.with)?;
                self.done = true;
            }
            self.out.extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let dir = tempdir("cframe-write-swap");
    let path = dir.join("in.b2sframe");
    let mut sparse = builder().create_dir(&path).unwrap();
    fill(&mut sparse);
    let other = oxiblosc::compress(&[5u8; CHUNK], &CParams::default().typesize(4)).unwrap();
    let file = path.join("00000000.chunk");
    assert!(file.exists());
    assert_ne!(other.len() as u64, fs::metadata(&file).unwrap().len());
    let mut w = Swap {
        file: &file,
        with: &other,
        done: false,
        out: Vec::new(),
    };
    let e = sparse.write_cframe(&mut w).unwrap_err();
    assert!(e.to_string().contains("changed while"), "{e}");
    drop(sparse);
    let _ = fs::remove_dir_all(&dir);
}

/// `save` over the file the super-chunk's own frame is in (as C's
/// `blosc2_schunk_to_file` may be asked): the file holds the frame, and
/// the super-chunk keeps writing to that file, not to one a rename took
/// out of the directory. A frame at an offset of the file is refused (the
/// file holds more than the frame).
#[test]
fn saving_a_frame_over_its_own_file() {
    let dir = tempdir("cframe-write-self");
    let path = dir.join("self.b2frame");
    let mut sc = builder().create_file(&path).unwrap();
    fill(&mut sc);
    let n = sc.save(&path).unwrap();
    assert_eq!(n, sc.cframe_len().unwrap());
    assert!(fs::read(&path).unwrap() == sc.to_cframe().unwrap());
    let before = sc.nchunks();
    sc.append_buffer(&[9u8; 4000]).unwrap();
    sc.close().unwrap();
    let mut back = SChunk::open(&path).unwrap();
    assert_eq!(back.nchunks(), before + 1);
    assert!(back.decompress_chunk_vec(before).unwrap() == [9u8; 4000]);
    drop(back);

    // The same frame at offset 100 of a file.
    let mut bytes = vec![0xAB; 100];
    bytes.extend(fs::read(&path).unwrap());
    let outer = dir.join("outer.bin");
    fs::write(&outer, &bytes).unwrap();
    let mut sc = oxiblosc::schunk::OpenOptions::new()
        .offset(100)
        .open(&outer)
        .unwrap();
    let e = sc.save(&outer).unwrap_err();
    assert!(e.to_string().ends_with("at offset 100"), "{e}");
    assert!(fs::read(&outer).unwrap() == bytes);
    // Saved elsewhere: the frame alone, from its offset on.
    let alone = dir.join("alone.b2frame");
    let n = sc.save(&alone).unwrap();
    assert_eq!(n as usize, bytes.len() - 100);
    assert!(fs::read(&alone).unwrap() == bytes[100..]);
    drop(sc);
    let _ = fs::remove_dir_all(&dir);
}
