//! The super-chunk API over memory, one file (also at an offset inside a
//! larger file) and a directory: every operation against a model, reopened
//! after each change; thread counts from tcomp/tdecomp; first-edition
//! frames; crash safety of file-backed changes under a write cut at every
//! byte.

mod support;
use oxiblosc::frame::{Edition, Frame, FrameIo};
use oxiblosc::schunk::{Fill, OpenOptions, SChunk, Storage};
use oxiblosc::{CParams, Codec, DParams, SpecialValue};
use std::cell::RefCell;
use std::io;
use std::path::Path;
use std::rc::Rc;
use support::{data, tempdir};

const CS: usize = 4000;

fn cparams() -> CParams {
    CParams::default().codec(Codec::Lz4).typesize(4)
}

/// Everything the super-chunk must show, from the model of its chunks.
fn assert_model(sc: &mut SChunk, model: &[Vec<u8>], what: &str) {
    assert_eq!(sc.nchunks(), model.len(), "{what}: nchunks");
    let flat: Vec<u8> = model.concat();
    assert_eq!(sc.nbytes(), flat.len() as u64, "{what}: nbytes");
    for (i, m) in model.iter().enumerate() {
        let mut out = vec![0u8; m.len()];
        assert_eq!(
            sc.decompress_chunk_into(i, &mut out).unwrap(),
            m.len(),
            "{what}: chunk {i}"
        );
        assert_eq!(&out, m, "{what}: chunk {i}");
    }
    assert_eq!(
        sc.get_slice(0, flat.len() as u64).unwrap(),
        flat,
        "{what}: slice"
    );
}

enum Kind {
    Memory,
    File,
    FileAtOffset,
    Dir,
}

fn create(kind: &Kind, dir: &Path, tag: &str) -> SChunk {
    let b = SChunk::builder()
        .cparams(cparams())
        .chunksize(CS)
        .meta("m", &[0x93, 1, 2, 3])
        .fsync(false);
    match kind {
        Kind::Memory => b.build_memory().unwrap(),
        Kind::File => b.create_file(dir.join(format!("{tag}.b2frame"))).unwrap(),
        Kind::FileAtOffset => {
            let p = dir.join(format!("{tag}.bin"));
            std::fs::write(&p, vec![0x5A; 333]).unwrap();
            b.append_to_file(&p).unwrap()
        }
        Kind::Dir => b.create_dir(dir.join(format!("{tag}.b2frame.d"))).unwrap(),
    }
}

fn reopen(sc: &mut SChunk) -> SChunk {
    match sc.storage() {
        Storage::Memory | Storage::Custom => SChunk::from_cframe(sc.to_cframe().unwrap()).unwrap(),
        Storage::File { path, offset } => {
            if offset > 0 {
                // The bytes before the frame are untouched.
                let all = std::fs::read(&path).unwrap();
                assert!(all[..offset as usize].iter().all(|&b| b == 0x5A));
            }
            OpenOptions::new()
                .offset(offset)
                .fsync(false)
                .open(&path)
                .unwrap()
        }
        Storage::Directory(p) => SChunk::open(&p).unwrap(),
    }
}

fn exercise(kind: Kind, tag: &str) {
    let dir = tempdir(tag);
    let mut sc = create(&kind, &dir, tag);
    let mut model: Vec<Vec<u8>> = Vec::new();
    assert_model(&mut sc, &model, "empty");
    for k in 0..4 {
        let d = data(CS, k);
        assert_eq!(sc.append_buffer(&d).unwrap(), k as usize + 1);
        model.push(d);
    }
    assert_model(&mut reopen(&mut sc), &model, "appended");
    assert_eq!(sc.chunksize(), Some(CS));

    // Insert, update, delete, reorder.
    let d = data(CS, 77);
    let chunk = oxiblosc::compress(&d, &cparams()).unwrap();
    sc.insert_chunk(1, &chunk).unwrap();
    model.insert(1, d);
    assert_model(&mut reopen(&mut sc), &model, "inserted");
    let d = data(CS, 99);
    sc.update_chunk(3, &oxiblosc::compress(&d, &cparams()).unwrap())
        .unwrap();
    model[3] = d;
    assert_model(&mut reopen(&mut sc), &model, "updated");
    sc.delete_chunk(0).unwrap();
    model.remove(0);
    assert_model(&mut reopen(&mut sc), &model, "deleted");
    sc.reorder_chunks(&[3, 1, 0, 2]).unwrap();
    model = vec![
        model[3].clone(),
        model[1].clone(),
        model[0].clone(),
        model[2].clone(),
    ];
    assert_model(&mut reopen(&mut sc), &model, "reordered");
    assert!(sc.reorder_chunks(&[0, 0, 1, 2]).is_err());

    // A zeros chunk becomes an index code; NaN too.
    let z = oxiblosc::special_chunk(&cparams(), CS, SpecialValue::Zeros, &[]).unwrap();
    sc.append_chunk(&z).unwrap();
    model.push(vec![0; CS]);
    let info = sc.chunk_info(4).unwrap();
    assert_eq!(info.special, Some(SpecialValue::Zeros));
    assert_eq!(info.cbytes, 0);
    assert_model(&mut reopen(&mut sc), &model, "zeros appended");

    // Slices across chunk boundaries.
    let patch = data(5000, 5);
    sc.set_slice(3000, &patch).unwrap();
    let mut flat = model.concat();
    flat[3000..8000].copy_from_slice(&patch);
    model = flat.chunks(CS).map(|c| c.to_vec()).collect();
    assert_model(&mut reopen(&mut sc), &model, "set_slice");
    assert_eq!(sc.get_slice(3990, 4010).unwrap(), flat[3990..4010]);
    assert!(sc.get_slice(0, flat.len() as u64 + 1).is_err());

    // A short last chunk, then a longer one: the chunk size turns variable
    // (and the zeros code is stored as a chunk).
    let d = data(1000, 3);
    sc.append_buffer(&d).unwrap();
    model.push(d);
    assert_eq!(sc.chunksize(), Some(CS));
    let d = data(CS, 4);
    sc.append_buffer(&d).unwrap();
    model.push(d);
    assert_eq!(sc.chunksize(), None);
    assert_eq!(sc.frame_header().version(), 3);
    assert_model(&mut reopen(&mut sc), &model, "variable");

    // Metalayers and vlmetalayers.
    assert_eq!(sc.meta_get("m"), Some(&[0x93, 1, 2, 3][..]));
    sc.meta_update("m", &[9, 9]).unwrap();
    assert!(sc.meta_update("m", &[0; 5]).is_err());
    assert!(
        sc.meta_add("late", b"x").is_err(),
        "metalayers only before data"
    );
    sc.vlmeta_add("a", b"alpha").unwrap();
    sc.vlmeta_add("b", &data(3000, 1)).unwrap();
    sc.vlmeta_update("a", b"ALPHA!").unwrap();
    assert!(sc.vlmeta_add("a", b"x").is_err());
    let mut back = reopen(&mut sc);
    assert_eq!(back.meta_get("m"), Some(&[9, 9, 2, 3][..]));
    assert_eq!(back.vlmeta_names(), ["a", "b"]);
    assert_eq!(back.vlmeta_get("a").unwrap().unwrap(), b"ALPHA!");
    assert_eq!(back.vlmeta_get("b").unwrap().unwrap(), data(3000, 1));
    sc.vlmeta_delete("a").unwrap();
    let mut back = reopen(&mut sc);
    assert_eq!(back.vlmeta_names(), ["b"]);
    assert_eq!(back.vlmeta_get("a").unwrap(), None);
    assert_model(&mut back, &model, "final");
    assert!(sc.cratio() > 1.0);
    assert_eq!(sc.typesize(), 4);

    // The result is a valid cframe.
    let cf = sc.to_cframe().unwrap();
    let f = Frame::parse(&cf).unwrap();
    assert_eq!(f.nchunks(), model.len());
}

#[test]
fn operations_in_memory() {
    exercise(Kind::Memory, "mem");
}
#[test]
fn operations_on_a_file() {
    exercise(Kind::File, "file");
}
#[test]
fn operations_on_a_frame_at_an_offset() {
    exercise(Kind::FileAtOffset, "offset");
}
#[test]
fn operations_on_a_directory() {
    exercise(Kind::Dir, "dir");
}

#[test]
fn sframe_files_follow_the_ids() {
    let dir = tempdir("ids");
    let p = dir.join("s.b2frame");
    let mut sc = SChunk::builder()
        .cparams(cparams())
        .chunksize(CS)
        .fsync(false)
        .create_dir(&p)
        .unwrap();
    for k in 0..3 {
        sc.append_buffer(&data(CS, k)).unwrap();
    }
    let names = |p: &Path| {
        let mut v: Vec<String> = std::fs::read_dir(p)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        v.sort();
        v
    };
    assert_eq!(
        names(&p),
        [
            "00000000.chunk",
            "00000001.chunk",
            "00000002.chunk",
            "chunks.b2frame"
        ]
    );
    sc.delete_chunk(1).unwrap();
    assert_eq!(
        names(&p),
        ["00000000.chunk", "00000002.chunk", "chunks.b2frame"]
    );
    sc.update_chunk(0, &oxiblosc::compress(&data(CS, 9), &cparams()).unwrap())
        .unwrap();
    assert_eq!(
        names(&p),
        ["00000002.chunk", "00000003.chunk", "chunks.b2frame"]
    );
    let total: u64 = ["00000002.chunk", "00000003.chunk"]
        .iter()
        .map(|n| std::fs::metadata(p.join(n)).unwrap().len())
        .sum();
    assert_eq!(sc.cbytes(), total);
    assert_eq!(
        SChunk::open(&p).unwrap().frame_header().cbytes as u64,
        total
    );
}

#[test]
fn fill_special_kinds() {
    for (fill, ts) in [
        (Fill::Zeros, 4),
        (Fill::Nan, 8),
        (Fill::Uninit, 4),
        (Fill::Value(&[1, 2, 3, 4]), 4),
    ] {
        let mut sc = SChunk::new(CParams::default().typesize(ts)).unwrap();
        sc.fill_special(10_003, fill, 8000).unwrap();
        let mut back = reopen(&mut sc);
        assert_eq!(back.nbytes(), 10_003 * ts as u64);
        let n = back.nchunks();
        assert_eq!(n, (10_003 * ts).div_ceil(8000));
        let last = back.decompress_chunk_vec(n - 1).unwrap();
        assert_eq!(last.len(), 10_003 * ts - (n - 1) * 8000);
        match fill {
            Fill::Zeros => assert!(last.iter().all(|&b| b == 0)),
            Fill::Nan => assert!(
                last.chunks(8)
                    .all(|c| f64::from_le_bytes(c.try_into().unwrap()).is_nan())
            ),
            Fill::Value(v) => assert!(last.chunks(4).all(|c| c == v)),
            Fill::Uninit => {}
        }
        if !matches!(fill, Fill::Value(_)) {
            assert_eq!(back.cbytes(), 0, "index codes only");
        }
        // Not on a non-empty super-chunk.
        assert!(back.fill_special(1, Fill::Zeros, 8000).is_err());
    }
    // NaN needs float items.
    let mut sc = SChunk::new(CParams::default().typesize(2)).unwrap();
    assert!(sc.fill_special(10, Fill::Nan, 100).is_err());
}

/// tcomp/tdecomp record the thread counts; on open they become the
/// defaults, unless the caller overrides them.
#[test]
fn thread_counts_round_trip_through_the_header() {
    let dir = tempdir("threads");
    let p = dir.join("t.b2frame");
    let mut sc = SChunk::builder()
        .cparams(cparams().nthreads(3))
        .dparams(DParams::default().nthreads(2))
        .fsync(false)
        .create_file(&p)
        .unwrap();
    sc.append_buffer(&data(CS, 1)).unwrap();
    drop(sc);
    let f = Frame::parse(&std::fs::read(&p).unwrap()).unwrap();
    assert_eq!((f.header.tcomp, f.header.tdecomp), (3, 2));
    let mut sc = SChunk::open(&p).unwrap();
    assert_eq!(sc.cparams().nthreads, 3);
    assert_eq!(sc.dparams().nthreads, 2);
    // Later writes record what is in use.
    sc.set_cparams(cparams().nthreads(1)).unwrap();
    sc.set_dparams(DParams::default().nthreads(4));
    sc.append_buffer(&data(CS, 2)).unwrap();
    drop(sc);
    let sc = OpenOptions::new().nthreads_comp(2).open(&p).unwrap();
    assert_eq!(sc.cparams().nthreads, 2, "override");
    assert_eq!(sc.dparams().nthreads, 4, "from tdecomp");
    assert_eq!(sc.frame_header().tcomp, 1);
}

/// A type size over 255 (items of a numpy `V300` dtype; chunk headers
/// record 1 for it) is the frame's: a reopened frame's parameters keep it,
/// so a copy made with them, and what is appended, keep it too. The
/// parameters said 255 (fuzz target `capi_frame`: `b2nd_save` of an array
/// of 12,036-byte items wrote one of 255-byte items).
#[test]
fn type_sizes_over_255_survive_a_reopen() {
    for ts in [256usize, 300, 12_036] {
        let mut sc = SChunk::builder()
            .cparams(CParams::default().typesize(ts))
            .chunksize(3 * ts)
            .build_memory()
            .unwrap();
        sc.append_buffer(&data(3 * ts, 1)).unwrap();
        let mut back = SChunk::from_cframe(sc.to_cframe().unwrap()).unwrap();
        assert_eq!(back.typesize(), ts, "typesize {ts}");
        assert_eq!(back.cparams().typesize, ts, "typesize {ts}: the parameters");
        back.append_buffer(&data(3 * ts, 2)).unwrap();
        sc.append_buffer(&data(3 * ts, 2)).unwrap();
        assert_eq!(
            back.get_chunk(1).unwrap(),
            sc.get_chunk(1).unwrap(),
            "typesize {ts}: a chunk appended after the reopen"
        );
        let mut copy = SChunk::builder()
            .cparams(back.cparams().clone())
            .build_memory()
            .unwrap();
        let copy = SChunk::from_cframe(copy.to_cframe().unwrap()).unwrap();
        assert_eq!(copy.typesize(), ts, "typesize {ts}: a copy");
    }
}

/// A first-edition frame (0x9d header, seed 001): no block size field, a
/// usermeta chunk in the trailer. Read only.
#[test]
fn first_edition_frame() {
    let payload = data(1000, 8);
    let chunk = oxiblosc::compress(&payload, &CParams::default().typesize(1)).unwrap();
    let usermeta = oxiblosc::compress(b"hello", &CParams::default().typesize(1)).unwrap();
    let index = oxiblosc::frame::encode_index(&[0]).unwrap();
    let mut h = Vec::new();
    h.push(0x9d);
    h.push(0xa8);
    h.extend_from_slice(b"b2frame\0");
    h.push(0xd2);
    h.extend_from_slice(&[0; 4]); // header_len, patched
    h.push(0xcf);
    h.extend_from_slice(&[0; 8]); // frame_len, patched
    h.extend_from_slice(&[0xa4, 0x11, 0, 0x05, 0]);
    h.push(0xd3);
    h.extend_from_slice(&1000i64.to_be_bytes());
    h.push(0xd3);
    h.extend_from_slice(&(chunk.len() as i64).to_be_bytes());
    h.push(0xd2);
    h.extend_from_slice(&1i32.to_be_bytes());
    h.push(0xd2);
    h.extend_from_slice(&1000i32.to_be_bytes());
    h.extend_from_slice(&[0xd1, 0, 1, 0xd1, 0, 1, 0xc3]);
    h.extend_from_slice(&[0xd8, 6, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    assert_eq!(h.len(), 82);
    h.extend_from_slice(&[0x93, 0xcd, 0, 7, 0xde, 0, 0, 0xdc, 0, 0]);
    let hl = h.len();
    h[11..15].copy_from_slice(&(hl as i32).to_be_bytes());
    h.extend_from_slice(&chunk);
    h.extend_from_slice(&index);
    let tlen = 2 + 5 + usermeta.len() + 5 + 2 + 16;
    h.extend_from_slice(&[0x94, 0x01, 0xc6]);
    h.extend_from_slice(&(usermeta.len() as u32).to_be_bytes());
    h.extend_from_slice(&usermeta);
    h.push(0xce);
    h.extend_from_slice(&(tlen as u32).to_be_bytes());
    h.extend_from_slice(&[0xd8, 0]);
    h.extend_from_slice(&[0; 16]);
    let flen = h.len() as u64;
    h[16..24].copy_from_slice(&flen.to_be_bytes());

    let f = Frame::parse(&h).unwrap();
    assert_eq!(f.header.edition, Edition::First);
    assert_eq!(f.header.chunksize, 1000);
    assert_eq!(f.header.blocksize, 0);
    assert_eq!(
        oxiblosc::decompress(f.usermeta.as_ref().unwrap()).unwrap(),
        b"hello"
    );
    let mut sc = SChunk::from_cframe(h).unwrap();
    assert_eq!(sc.decompress_chunk_vec(0).unwrap(), payload);
    assert!(
        sc.append_buffer(&payload).is_err(),
        "first edition is read only"
    );
}

// ---------------------------------------------------------------------------
// Crash safety

/// Storage that keeps at most `budget` more written bytes: the write that
/// crosses it is cut there, later ones are lost. The header commit (one
/// write inside the first 87 bytes) is all or nothing, as a write inside
/// one disk sector is.
struct Cut {
    disk: Rc<RefCell<Vec<u8>>>,
    budget: Rc<RefCell<usize>>,
}

impl FrameIo for Cut {
    fn storage_len(&mut self) -> io::Result<u64> {
        Ok(self.disk.borrow().len() as u64)
    }
    fn read_exact_at(&mut self, pos: u64, buf: &mut [u8]) -> io::Result<()> {
        self.disk.borrow_mut().read_exact_at(pos, buf)
    }
    fn write_all_at(&mut self, pos: u64, data: &[u8]) -> io::Result<()> {
        let mut b = self.budget.borrow_mut();
        if *b == usize::MAX - 1 {
            return Err(io::Error::other("power cut"));
        }
        let atomic = pos + data.len() as u64 <= 87;
        let n = if atomic && *b < data.len() {
            0
        } else {
            data.len().min(*b)
        };
        *b -= n;
        self.disk.borrow_mut().write_all_at(pos, &data[..n])?;
        if n < data.len() {
            *b = usize::MAX - 1; // dead from now on
            return Err(io::Error::other("power cut"));
        }
        Ok(())
    }
    fn set_len(&mut self, len: u64) -> io::Result<()> {
        if *self.budget.borrow() == usize::MAX - 1 {
            return Err(io::Error::other("power cut"));
        }
        FrameIo::set_len(&mut *self.disk.borrow_mut(), len)
    }
    fn sync(&mut self) -> io::Result<()> {
        Ok(())
    }
    fn is_persistent(&self) -> bool {
        true
    }
}

fn contents(bytes: Vec<u8>) -> Result<(Vec<Vec<u8>>, Vec<String>), String> {
    let mut sc = OpenOptions::new()
        .open_io(Box::new(bytes))
        .map_err(|e| e.to_string())?;
    let mut chunks = Vec::new();
    for i in 0..sc.nchunks() {
        chunks.push(sc.decompress_chunk_vec(i).map_err(|e| e.to_string())?);
    }
    let names = sc.vlmeta_names().iter().map(|s| s.to_string()).collect();
    Ok((chunks, names))
}

#[test]
fn a_write_cut_at_any_byte_leaves_old_or_new_contents() {
    type Op = fn(&mut SChunk) -> oxiblosc::Result<()>;
    let ops: [(&str, Op); 6] = [
        ("append", |sc| sc.append_buffer(&data(CS, 50)).map(drop)),
        ("insert", |sc| {
            let c = oxiblosc::compress(&data(CS, 51), &cparams())?;
            sc.insert_chunk(1, &c)
        }),
        ("update", |sc| {
            let c = oxiblosc::compress(&data(CS, 52), &cparams())?;
            sc.update_chunk(2, &c)
        }),
        ("delete", |sc| sc.delete_chunk(1)),
        ("reorder", |sc| sc.reorder_chunks(&[2, 0, 1])),
        ("vlmeta", |sc| sc.vlmeta_add("v", b"value")),
    ];
    // The starting file: a frame of 3 chunks written through the same path.
    let disk = Rc::new(RefCell::new(Vec::new()));
    let budget = Rc::new(RefCell::new(usize::MAX - 2));
    let mut sc = SChunk::builder()
        .cparams(cparams())
        .chunksize(CS)
        .build_io(Box::new(Cut {
            disk: disk.clone(),
            budget: budget.clone(),
        }))
        .unwrap();
    for k in 0..3 {
        sc.append_buffer(&data(CS, k)).unwrap();
    }
    drop(sc);
    let start = disk.borrow().clone();
    let old = contents(start.clone()).unwrap();
    let mut cuts = 0;
    for (name, op) in ops {
        // Unlimited budget: the new contents and how many bytes it writes.
        let d = Rc::new(RefCell::new(start.clone()));
        let b = Rc::new(RefCell::new(usize::MAX - 2));
        let mut sc = OpenOptions::new()
            .open_io(Box::new(Cut {
                disk: d.clone(),
                budget: b.clone(),
            }))
            .unwrap();
        op(&mut sc).unwrap();
        drop(sc);
        let written = usize::MAX - 2 - *b.borrow();
        let new = contents(d.borrow().clone()).unwrap();
        assert_ne!(new, old, "{name} changes something");
        for k in 0..=written {
            let d = Rc::new(RefCell::new(start.clone()));
            let b = Rc::new(RefCell::new(k));
            let mut sc = OpenOptions::new()
                .open_io(Box::new(Cut {
                    disk: d.clone(),
                    budget: b.clone(),
                }))
                .unwrap();
            // The change fails (or completes, at k == written).
            let r = op(&mut sc);
            drop(sc);
            assert_eq!(r.is_ok(), k >= written, "{name}: cut at {k} of {written}");
            let got =
                contents(d.borrow().clone()).unwrap_or_else(|e| panic!("{name}: cut at {k}: {e}"));
            assert!(
                got == old || got == new,
                "{name}: cut at {k} of {written}: mixed contents"
            );
            if k < written {
                // Nothing is committed before the header write.
                cuts += 1;
            }
        }
    }
    assert!(cuts > 1000, "{cuts} cuts");
}

/// The space-reuse paths under a write cut at every byte: a chunk into a
/// hole left by a delete, `trim` (the index moved back into the gap before
/// the old one, then the file cut) and the two-step `compact` (whose
/// contents never change).
#[test]
fn a_write_cut_during_hole_reuse_trim_or_compact_leaves_old_or_new_contents() {
    type Op = fn(&mut SChunk) -> oxiblosc::Result<()>;
    let ops: [(&str, Op); 4] = [
        ("append into a hole", |sc| {
            sc.append_buffer(&data(CS, 1)).map(drop)
        }),
        ("vlmeta", |sc| sc.vlmeta_add("a", b"1")),
        ("trim", |sc| sc.trim()),
        ("compact", |sc| sc.compact()),
    ];
    let disk = Rc::new(RefCell::new(Vec::new()));
    let budget = Rc::new(RefCell::new(usize::MAX - 2));
    let mut sc = SChunk::builder()
        .cparams(cparams())
        .chunksize(CS)
        .build_io(Box::new(Cut {
            disk: disk.clone(),
            budget: budget.clone(),
        }))
        .unwrap();
    for k in 0..4 {
        sc.append_buffer(&data(CS, k)).unwrap();
    }
    // A chunk in the middle deleted: a hole (the size of chunk 1 again).
    sc.delete_chunk(1).unwrap();
    assert!(sc.hole_bytes() > 0);
    drop(sc);
    let start = disk.borrow().clone();
    let old = contents(start.clone()).unwrap();
    for (name, op) in ops {
        let d = Rc::new(RefCell::new(start.clone()));
        let b = Rc::new(RefCell::new(usize::MAX - 2));
        let mut sc = OpenOptions::new()
            .open_io(Box::new(Cut {
                disk: d.clone(),
                budget: b.clone(),
            }))
            .unwrap();
        let holes = sc.hole_bytes();
        let dead = sc.dead_bytes();
        op(&mut sc).unwrap();
        match name {
            "append into a hole" => assert!(sc.hole_bytes() < holes, "{name}"),
            "trim" => assert!(sc.dead_bytes() < dead, "{name}"),
            "compact" => assert_eq!(sc.dead_bytes(), 0, "{name}"),
            _ => {}
        }
        drop(sc);
        let written = usize::MAX - 2 - *b.borrow();
        let new = contents(d.borrow().clone()).unwrap();
        if name == "trim" || name == "compact" {
            assert_eq!(new, old, "{name} keeps the contents");
            assert!(d.borrow().len() < start.len(), "{name} shrinks the file");
        } else {
            assert_ne!(new, old, "{name} changes something");
        }
        for k in 0..written {
            let d = Rc::new(RefCell::new(start.clone()));
            let b = Rc::new(RefCell::new(k));
            let mut sc = OpenOptions::new()
                .open_io(Box::new(Cut {
                    disk: d.clone(),
                    budget: b.clone(),
                }))
                .unwrap();
            assert!(op(&mut sc).is_err(), "{name}: cut at {k} of {written}");
            drop(sc);
            let got =
                contents(d.borrow().clone()).unwrap_or_else(|e| panic!("{name}: cut at {k}: {e}"));
            assert!(
                got == old || got == new,
                "{name}: cut at {k} of {written}: mixed contents"
            );
        }
    }
}

/// `get_slice` of any range equals the same range of the flat content:
/// whole chunks, parts of one (decoded by getitem, only the blocks the part
/// lies in), ranges ending in the bytes after a chunk's last whole item,
/// across special chunks, with every filter kind and 1 or 2 threads.
#[test]
fn get_slice_of_any_range_matches_the_content() {
    use oxiblosc::Filter;
    let variants: [(usize, &[Filter]); 5] = [
        (4, &[Filter::Shuffle]),
        (8, &[Filter::Delta, Filter::Shuffle]),
        (3, &[Filter::BitShuffle]),
        (1, &[]),
        (16, &[Filter::Shuffle, Filter::ByteDelta]),
    ];
    let mut rng = support::Rng(11);
    for (ts, filters) in variants {
        for (nthreads, cs) in [(1, 10_003), (2, 10_003), (1, 10_080), (2, 10_080)] {
            let p = CParams::default()
                .codec(Codec::Lz4)
                .typesize(ts)
                .filters(filters)
                .blocksize(1024);
            let mut sc = SChunk::new(p.clone()).unwrap();
            sc.set_dparams(DParams::default().nthreads(nthreads));
            // Blocks of 1 KiB; chunks of 10,003 bytes have a tail after the
            // last whole item for every type size but 1, 10,080 none.
            let mut flat = Vec::new();
            for k in 0..3 {
                let d = data(cs, 40 + k);
                sc.append_buffer(&d).unwrap();
                flat.extend_from_slice(&d);
            }
            // A zeros chunk (an index code) and a value chunk (a special
            // chunk stored, which getitem synthesises).
            let z = oxiblosc::special_chunk(&p, cs, SpecialValue::Zeros, &[]).unwrap();
            sc.append_chunk(&z).unwrap();
            flat.resize(flat.len() + cs, 0);
            let value: Vec<u8> = (1..=ts as u8).collect();
            if cs % ts == 0 {
                let v = oxiblosc::special_chunk(&p, cs, SpecialValue::Value, &value).unwrap();
                sc.append_chunk(&v).unwrap();
                flat.extend((0..cs).map(|k| value[k % ts]));
            }
            let last = data(517, 9);
            sc.append_buffer(&last).unwrap();
            flat.extend_from_slice(&last);
            let mut sc = SChunk::from_cframe(sc.to_cframe().unwrap()).unwrap();
            sc.set_dparams(DParams::default().nthreads(nthreads));
            let n = flat.len() as u64;
            let mut ranges = vec![(0, n), (0, 0), (n, n), (cs as u64 - 2, cs as u64 + 1)];
            for k in 1..=sc.nchunks() as u64 - 1 {
                let edge = k * cs as u64;
                ranges.extend([
                    (edge - 1, edge),
                    (edge - 3, edge + 3),
                    (edge - cs as u64, edge),
                ]);
            }
            for _ in 0..200 {
                let a = rng.below(n + 1);
                let len = match rng.below(3) {
                    0 => rng.below(20),
                    1 => rng.below(3000),
                    _ => rng.below(n - a + 1),
                };
                ranges.push((a, (a + len).min(n)));
            }
            for (a, b) in ranges {
                let what = format!("ts {ts} filters {filters:?} threads {nthreads}: {a}..{b}");
                let want = &flat[a as usize..b as usize];
                assert_eq!(sc.get_slice(a, b).unwrap(), want, "{what}");
                // The _into form: a buffer longer than the slice keeps its
                // tail; a shorter one is refused.
                let mut buf = vec![0xA5u8; want.len() + 3];
                assert_eq!(sc.get_slice_into(a, b, &mut buf).unwrap(), want.len());
                assert_eq!(&buf[..want.len()], want, "{what}");
                assert_eq!(buf[want.len()..], [0xA5; 3], "{what}");
                if !want.is_empty() {
                    let short = &mut buf[..want.len() - 1];
                    assert!(matches!(
                        sc.get_slice_into(a, b, short),
                        Err(oxiblosc::Error::DstTooSmall { .. })
                    ));
                }
            }
        }
    }
}

/// A frame recording `tcomp` / `tdecomp` 64 reports them as they are, runs
/// at most the machine's thread count (`compress_params`,
/// `decompress_params`), and keeps those counts when a call context is
/// attached (`set_call_context`; re-setting `cparams().clone()` would start
/// 64 threads).
#[test]
fn opened_frames_run_capped_thread_counts_with_a_context() {
    use oxiblosc::plugins::CallContext;
    let mut sc =
        oxiblosc::SChunk::new(oxiblosc::CParams::default().typesize(4).nthreads(64)).unwrap();
    sc.set_dparams(oxiblosc::DParams::default().nthreads(64));
    sc.append_buffer(&[3u8; 4000]).unwrap();
    let mut sc = oxiblosc::SChunk::from_cframe(sc.to_cframe().unwrap()).unwrap();
    let cores = std::thread::available_parallelism().unwrap().get();
    let run = |sc: &oxiblosc::SChunk| {
        (
            sc.cparams().nthreads,
            sc.dparams().nthreads,
            sc.compress_params().nthreads,
            sc.decompress_params().nthreads,
        )
    };
    assert_eq!(run(&sc), (64, 64, 64.min(cores), 64.min(cores)));
    sc.set_call_context(Some(CallContext::new(5u32)));
    assert_eq!(run(&sc), (64, 64, 64.min(cores), 64.min(cores)));
    let ctx = sc.compress_params().context.clone().unwrap();
    assert_eq!(ctx.get::<u32>(), Some(&5));
    assert!(sc.decompress_params().context.is_some() && sc.cparams().context.is_some());
    assert_eq!(sc.decompress_chunk_vec(0).unwrap(), vec![3u8; 4000]);
}

/// Slices of a super-chunk of chunks of any size, empty ones among them
/// (passed over without being read), equal the same range of the content:
/// every range starting and ending at or beside a chunk boundary.
#[test]
fn get_slice_across_chunks_of_any_size_and_empty_ones() {
    let sizes = [700, 0, 0, 300, 1, 0, 513, 0, 0, 64];
    let mut sc = SChunk::new(cparams()).unwrap();
    let mut flat = Vec::new();
    for (k, &n) in sizes.iter().enumerate() {
        let d = data(n, k as u32);
        sc.append_buffer(&d).unwrap();
        flat.extend_from_slice(&d);
    }
    assert_eq!(sc.chunksize(), None);
    let mut sc = SChunk::from_cframe(sc.to_cframe().unwrap()).unwrap();
    let n = flat.len() as u64;
    let mut points = vec![0u64];
    let mut edge = 0u64;
    for &s in &sizes {
        edge += s as u64;
        points.extend([edge.saturating_sub(1), edge, edge + 1]);
    }
    points.retain(|&p| p <= n);
    for &a in &points {
        for &b in points.iter().filter(|&&b| b >= a) {
            assert_eq!(
                sc.get_slice(a, b).unwrap(),
                flat[a as usize..b as usize],
                "{a}..{b}"
            );
        }
    }
    assert!(sc.get_slice(n - 1, n + 1).is_err());
}

/// `SChunk::set_chunksize` before the first chunk gives the frame the
/// builder's `chunksize` gives (in memory, byte for byte; and a file frame
/// keeps it when reopened empty); `Some(0)` makes the sizes vary from the
/// first chunk, `None` lets the first chunk set it again; refused once
/// there are chunks, over `i32::MAX`, and on a frame opened read-only.
#[test]
fn set_chunksize_before_the_first_chunk_is_the_builders() {
    let first = data(1000, 3);
    let mut sc = SChunk::new(cparams()).unwrap();
    sc.set_chunksize(Some(4000)).unwrap();
    sc.append_buffer(&first).unwrap();
    assert_eq!(sc.chunksize(), Some(4000));
    let mut built = SChunk::builder()
        .cparams(cparams())
        .chunksize(4000)
        .build_memory()
        .unwrap();
    built.append_buffer(&first).unwrap();
    assert_eq!(sc.to_cframe().unwrap(), built.to_cframe().unwrap());
    // Refused with chunks, and changes nothing.
    assert!(matches!(
        sc.set_chunksize(Some(1000)),
        Err(oxiblosc::Error::InvalidParam(_))
    ));
    assert_eq!(sc.chunksize(), Some(4000));

    // Sizes that vary from the first chunk; None again.
    let mut sc = SChunk::new(cparams()).unwrap();
    sc.set_chunksize(Some(0)).unwrap();
    sc.append_buffer(&data(3000, 1)).unwrap();
    sc.append_buffer(&first).unwrap();
    assert_eq!(sc.chunksize(), None);
    let mut back = SChunk::from_cframe(sc.to_cframe().unwrap()).unwrap();
    assert_eq!(back.frame_header().chunksize, 0);
    assert_eq!(back.decompress_chunk_vec(1).unwrap(), first);
    let mut sc = SChunk::new(cparams()).unwrap();
    sc.set_chunksize(Some(4000)).unwrap();
    sc.set_chunksize(None).unwrap();
    sc.append_buffer(&first).unwrap();
    assert_eq!(sc.chunksize(), Some(1000));
    assert!(sc.set_chunksize(Some(i32::MAX as usize + 1)).is_err());

    // A file frame: written at once, kept when reopened empty, read-only
    // refused.
    let dir = tempdir("set-chunksize");
    let p = dir.join("s.b2frame");
    let mut sc = SChunk::builder()
        .cparams(cparams())
        .fsync(false)
        .create_file(&p)
        .unwrap();
    sc.set_chunksize(Some(4000)).unwrap();
    drop(sc);
    let mut ro = OpenOptions::new().read_only(true).open(&p).unwrap();
    assert_eq!(ro.frame_header().chunksize, 4000);
    assert!(ro.set_chunksize(Some(8000)).is_err());
    drop(ro);
    let mut sc = SChunk::open(&p).unwrap();
    sc.append_buffer(&first).unwrap();
    drop(sc);
    let sc = SChunk::open(&p).unwrap();
    assert_eq!((sc.nchunks(), sc.chunksize()), (1, Some(4000)));
}
