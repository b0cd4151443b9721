//! A super-chunk in memory leaves its offsets index and trailer to
//! `to_cframe` / `flush` (building one of `n` chunks rewrote `n` indexes):
//! long runs of changes with no frame written between them read as a model
//! of their chunks, and the frame written at any point reopens as it.
//! `tests/schunk_append_alloc.rs` shows the cost is now linear.

mod support;
use oxiblosc::frame::Frame;
use oxiblosc::schunk::SChunk;
use oxiblosc::{CParams, Codec, SpecialValue};
use support::{Rng, data};

const CS: usize = 1200;

fn cparams() -> CParams {
    CParams::default().codec(Codec::BloscLz).typesize(4)
}

/// The super-chunk's chunks, read one by one, are the model's.
fn assert_chunks(sc: &mut SChunk, model: &[Vec<u8>], what: &str) {
    assert_eq!(sc.nchunks(), model.len(), "{what}: nchunks");
    let nbytes: usize = model.iter().map(Vec::len).sum();
    assert_eq!(sc.nbytes(), nbytes as u64, "{what}: nbytes");
    for (i, m) in model.iter().enumerate() {
        assert_eq!(&sc.decompress_chunk_vec(i).unwrap(), m, "{what}: chunk {i}");
    }
}

/// The frame written now parses, reopens as the model, with the
/// vlmetalayer `v` holding `vl`; and the handle's header says its length.
fn assert_frame(sc: &mut SChunk, model: &[Vec<u8>], vl: Option<&[u8]>, what: &str) {
    let bytes = sc.to_cframe().unwrap();
    assert_eq!(
        sc.frame_header().frame_len,
        bytes.len() as u64,
        "{what}: frame_len after the frame is written"
    );
    let f = Frame::parse(&bytes).unwrap();
    assert_eq!(f.header.frame_len, bytes.len() as u64, "{what}");
    let mut back = SChunk::from_cframe(bytes).unwrap();
    assert_chunks(&mut back, model, &format!("{what}, reopened"));
    // The live bytes the handle kept count of are those a fresh open finds.
    assert_eq!(sc.dead_bytes(), back.dead_bytes(), "{what}: dead bytes");
    assert_eq!(
        back.vlmeta_get("v").unwrap().as_deref(),
        vl,
        "{what}: vlmeta"
    );
    assert_eq!(
        back.meta_get("m"),
        Some(&[0x93, 7, 7, 7][..]),
        "{what}: meta"
    );
}

fn run(seed: u64, ops: usize) {
    let mut rng = Rng(seed);
    let mut sc = SChunk::builder()
        .cparams(cparams())
        .chunksize(CS)
        .meta("m", &[0x93, 1, 2, 3])
        .build_memory()
        .unwrap();
    let mut model: Vec<Vec<u8>> = Vec::new();
    let mut vl: Option<Vec<u8>> = None;
    for k in 0..ops {
        let what = format!("seed {seed} op {k}");
        let n = model.len();
        let full = data(
            CS,
            (k as u32).wrapping_add((seed as u32).wrapping_mul(1000)),
        );
        match rng.below(20) as usize {
            // Appends: most changes (the path that no longer copies the index).
            0..=7 => {
                sc.append_buffer(&full).unwrap();
                model.push(full);
            }
            8 => {
                let z = oxiblosc::special_chunk(&cparams(), CS, SpecialValue::Zeros, &[]).unwrap();
                sc.append_chunk(&z).unwrap();
                model.push(vec![0; CS]);
            }
            // A short chunk: the chunk size turns variable from the next append.
            9 if rng.below(4) == 0 => {
                let short = full[..1 + rng.below(CS as u64 - 1) as usize].to_vec();
                sc.append_buffer(&short).unwrap();
                model.push(short);
            }
            10 | 11 => {
                let i = rng.below(n as u64 + 1) as usize;
                let len = model.get(i).map_or(CS, Vec::len);
                let c = oxiblosc::compress(&full[..len], &cparams()).unwrap();
                // Refused (a change the frame cannot take), it must change
                // nothing: the model stays, and is checked below.
                if sc.insert_chunk(i, &c).is_ok() {
                    model.insert(i, full[..len].to_vec());
                }
            }
            12 | 13 if n > 0 => {
                let i = rng.below(n as u64) as usize;
                let len = model[i].len();
                let c = oxiblosc::compress(&full[..len], &cparams()).unwrap();
                sc.update_chunk(i, &c).unwrap();
                model[i] = full[..len].to_vec();
            }
            14 if n > 0 => {
                let i = rng.below(n as u64) as usize;
                sc.delete_chunk(i).unwrap();
                model.remove(i);
            }
            15 => {
                let v = data(1 + rng.below(300) as usize, k as u32);
                if vl.is_some() {
                    sc.vlmeta_update("v", &v).unwrap();
                } else {
                    sc.vlmeta_add("v", &v).unwrap();
                }
                vl = Some(v);
            }
            16 => sc.meta_update("m", &[0x93, 7, 7, 7]).unwrap(),
            // A refused change leaves everything as it was.
            17 => {
                let mut bad = oxiblosc::compress(&full, &cparams()).unwrap();
                bad.truncate(bad.len() - 1);
                assert!(sc.append_chunk(&bad).is_err(), "{what}");
                assert!(sc.insert_chunk(n + 1, &bad).is_err(), "{what}");
            }
            18 if rng.below(3) == 0 => {
                sc.flush().unwrap();
            }
            _ => {}
        }
        assert_chunks(&mut sc, &model, &what);
        if k % 37 == 36 {
            sc.meta_update("m", &[0x93, 7, 7, 7]).unwrap();
            assert_frame(&mut sc, &model, vl.as_deref(), &what);
        }
    }
    sc.meta_update("m", &[0x93, 7, 7, 7]).unwrap();
    assert_frame(&mut sc, &model, vl.as_deref(), &format!("seed {seed} end"));
}

#[test]
fn long_runs_of_changes_in_memory_read_and_write_as_the_model() {
    for seed in 1u64..=6 {
        run(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15), 400);
    }
}

#[test]
fn frame_len_of_a_memory_frame_is_the_frames_after_flush() {
    let mut sc = SChunk::new(cparams()).unwrap();
    let empty = sc.to_cframe().unwrap().len() as u64;
    assert_eq!(sc.frame_header().frame_len, empty);
    for k in 0..50 {
        sc.append_buffer(&data(CS, k)).unwrap();
    }
    let hl = u64::from(sc.frame_header().header_len);
    // Before the flush, the frame ends at its chunks.
    assert_eq!(
        sc.frame_header().frame_len,
        hl + sc.frame_header().cbytes as u64
    );
    sc.flush().unwrap();
    let len = sc.frame_header().frame_len;
    assert!(len > hl + sc.frame_header().cbytes as u64);
    assert_eq!(sc.to_cframe().unwrap().len() as u64, len);
    // Flushing again, or writing the frame again, changes nothing.
    sc.flush().unwrap();
    assert_eq!(sc.to_cframe().unwrap().len() as u64, len);
}

#[test]
fn a_memory_frame_written_after_appends_is_byte_for_byte_the_one_written_each_time() {
    // Appending 200 chunks with the frame written after each (every index
    // encoded, as before), and with it written once at the end: the same
    // bytes (the deferred index is the one the last change would write).
    let mut each = SChunk::new(cparams()).unwrap();
    let mut once = SChunk::new(cparams()).unwrap();
    let mut last = Vec::new();
    for k in 0..200 {
        let d = data(CS, k);
        each.append_buffer(&d).unwrap();
        once.append_buffer(&d).unwrap();
        if k % 3 == 0 {
            let z = oxiblosc::special_chunk(&cparams(), CS, SpecialValue::Zeros, &[]).unwrap();
            each.append_chunk(&z).unwrap();
            once.append_chunk(&z).unwrap();
        }
        last = each.to_cframe().unwrap();
    }
    assert_eq!(once.to_cframe().unwrap(), last);
}

#[test]
fn flush_leaves_a_file_frame_as_its_changes_wrote_it() {
    let dir = support::tempdir("flush-file");
    let path = dir.join("f.b2frame");
    let mut sc = SChunk::builder()
        .cparams(cparams())
        .fsync(false)
        .create_file(&path)
        .unwrap();
    for k in 0..20 {
        sc.append_buffer(&data(CS, k)).unwrap();
    }
    // A file frame's changes write its index: the header says the file's
    // frame, before and after a flush, which writes nothing.
    let len = sc.frame_header().frame_len;
    let before = std::fs::read(&path).unwrap();
    assert_eq!(&before[..len as usize], &sc.to_cframe().unwrap()[..]);
    sc.flush().unwrap();
    assert_eq!(sc.frame_header().frame_len, len);
    assert_eq!(std::fs::read(&path).unwrap(), before);
}
