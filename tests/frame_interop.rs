//! Frames we write open in the real C-Blosc2 3.3.5 (python-blosc2 4.14.1,
//! see `tests/support`) with the same chunks, metalayers and vlmetalayers —
//! in memory (as a cframe file), in a file, in a file at an offset, in a
//! directory, after every kind of change; C then appends to them and we
//! read what it wrote.

mod support;
use support::{data, tempdir};

use oxiblosc::schunk::{Fill, OpenOptions, SChunk, Storage};
use oxiblosc::{CParams, Codec, SpecialValue};
use serde_json::{Value, json};
use std::path::Path;
use support::corpus::sha256_hex;

const CS: usize = 8000;

fn cparams() -> CParams {
    CParams::default().codec(Codec::Zstd).clevel(3).typesize(4)
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// What a reader must see, in the oracle's report format.
fn report(sc: &mut SChunk) -> Value {
    let chunks: Vec<String> = (0..sc.nchunks())
        .map(|i| sha256_hex(&sc.decompress_chunk_vec(i).unwrap()))
        .collect();
    let meta: serde_json::Map<String, Value> = sc
        .metalayers()
        .iter()
        .map(|m| (m.name.clone(), Value::String(hex(&m.content))))
        .collect();
    let names: Vec<String> = sc.vlmeta_names().iter().map(|s| s.to_string()).collect();
    let vlmeta: serde_json::Map<String, Value> = names
        .iter()
        .map(|n| {
            (
                n.clone(),
                Value::String(hex(&sc.vlmeta_get(n).unwrap().unwrap())),
            )
        })
        .collect();
    json!({"nchunks": sc.nchunks(), "nbytes": sc.nbytes(), "chunks": chunks,
           "meta": meta, "vlmeta": vlmeta})
}

fn reopen(storage: &Storage) -> SChunk {
    match storage {
        Storage::File { path, offset } => OpenOptions::new().offset(*offset).open(path).unwrap(),
        Storage::Directory(p) => SChunk::open(p).unwrap(),
        _ => unreachable!(),
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
}

/// A new super-chunk (chunk size [`CS`], metalayer `m`) of storage `kind`:
/// `memory`, `file` (`dir/<stem>.b2frame`), `offset` (the frame after 4,321
/// bytes of 7s in `dir/<stem>-offset.bin`) or a directory
/// (`dir/<stem>-dir.b2frame`).
fn new_frame(kind: &str, dir: &Path, stem: &str) -> SChunk {
    let b = SChunk::builder()
        .cparams(cparams())
        .chunksize(CS)
        .meta("m", &[0x93, 1, 2, 3])
        .fsync(false);
    match kind {
        "memory" => b.build_memory().unwrap(),
        "file" => b.create_file(dir.join(format!("{stem}.b2frame"))).unwrap(),
        "offset" => {
            let p = dir.join(format!("{stem}-offset.bin"));
            std::fs::write(&p, vec![7u8; 4321]).unwrap();
            b.append_to_file(&p).unwrap()
        }
        _ => b
            .create_dir(dir.join(format!("{stem}-dir.b2frame")))
            .unwrap(),
    }
}

/// A snapshot of the current state where C can read it: (job, expected).
fn snapshot(sc: &mut SChunk, dir: &Path, tag: &str) -> (Value, Value) {
    let expected = report(sc);
    let job = match sc.storage() {
        Storage::Memory => {
            let p = dir.join(format!("{tag}.b2frame"));
            std::fs::write(&p, sc.to_cframe().unwrap()).unwrap();
            json!({"path": p, "offset": 0})
        }
        Storage::File { path, offset } => {
            let p = dir.join(format!("{tag}.bin"));
            std::fs::copy(&path, &p).unwrap();
            json!({"path": p, "offset": offset})
        }
        Storage::Directory(from) => {
            let p = dir.join(format!("{tag}.b2frame"));
            copy_dir(&from, &p);
            json!({"path": p, "offset": 0})
        }
        Storage::Custom => unreachable!(),
    };
    (job, expected)
}

type Step = (&'static str, fn(&mut SChunk));

fn steps() -> Vec<Step> {
    vec![
        ("append", |sc| {
            for k in 0..3 {
                sc.append_buffer(&data(CS, k)).unwrap();
            }
        }),
        ("insert", |sc| {
            let c = oxiblosc::compress(&data(CS, 10), &cparams()).unwrap();
            sc.insert_chunk(1, &c).unwrap();
        }),
        ("update", |sc| {
            let c = oxiblosc::compress(&data(CS, 11), &cparams()).unwrap();
            sc.update_chunk(2, &c).unwrap();
        }),
        ("delete", |sc| sc.delete_chunk(0).unwrap()),
        ("reorder", |sc| sc.reorder_chunks(&[2, 0, 1]).unwrap()),
        ("zeros", |sc| {
            let z = oxiblosc::special_chunk(&cparams(), CS, SpecialValue::Zeros, &[]).unwrap();
            sc.append_chunk(&z).unwrap();
        }),
        ("vlmeta", |sc| {
            sc.vlmeta_add("a", b"\xa5alpha").unwrap();
            sc.vlmeta_add("b", &[0xc4, 3, 1, 2, 3]).unwrap();
            sc.vlmeta_update("a", b"\xa4beta").unwrap();
        }),
        ("vlmeta_delete", |sc| sc.vlmeta_delete("b").unwrap()),
        ("meta_update", |sc| {
            sc.meta_update("m", &[0x93, 7, 7, 7]).unwrap()
        }),
        ("set_slice", |sc| {
            sc.set_slice(CS as u64 - 100, &data(300, 12)).unwrap()
        }),
        ("variable", |sc| {
            sc.append_buffer(&data(1000, 13)).unwrap();
            sc.append_buffer(&data(CS, 14)).unwrap();
            assert_eq!(sc.chunksize(), None);
        }),
    ]
}

fn oracle(jobs: &[Value]) -> Vec<Value> {
    let out =
        support::cblosc2::run_script("cframes.py", &[&Value::Array(jobs.to_vec()).to_string()])
            .unwrap_or_else(|e| panic!("cframes.py: {e}"));
    serde_json::from_str(&out).unwrap()
}

/// C opens every job's frame and sees what we see (`expected`, each
/// with what it is).
fn c_sees_what_we_see(jobs: &[Value], expected: &[(String, Value)]) {
    let reports = oracle(jobs);
    assert_eq!(reports.len(), expected.len());
    let mut fails = Vec::new();
    for (r, (what, exp)) in reports.iter().zip(expected) {
        if r["ok"] != true {
            fails.push(format!("{what}: C fails: {}", r["error"]));
        } else if !same(&r["before"], exp) {
            fails.push(format!("{what}: C sees {}\n  we see {exp}", r["before"]));
        }
    }
    assert!(fails.is_empty(), "{}", fails.join("\n"));
}

fn same(c: &Value, ours: &Value) -> bool {
    ["nchunks", "nbytes", "chunks", "meta", "vlmeta"]
        .iter()
        .all(|k| c[k] == ours[k])
}

#[test]
fn c_reads_our_frames_after_every_change_and_appends_to_them() {
    let dir = tempdir("c");
    let mut jobs = Vec::new();
    let mut expected = Vec::new();
    let mut lives = Vec::new();
    for kind in ["memory", "file", "offset", "dir"] {
        let mut sc = new_frame(kind, &dir, "live");
        for (name, step) in steps() {
            step(&mut sc);
            let (job, exp) = snapshot(&mut sc, &dir, &format!("{kind}-{name}"));
            jobs.push(job);
            expected.push((format!("{kind} after {name}"), exp));
        }
        // The live storage, for C to append to.
        let live = match sc.storage() {
            Storage::Memory => {
                let p = dir.join("live-mem.b2frame");
                std::fs::write(&p, sc.to_cframe().unwrap()).unwrap();
                Storage::File { path: p, offset: 0 }
            }
            s => s,
        };
        lives.push((kind, live, sc.nchunks()));
    }
    // fill_special frames.
    for (i, fill) in [Fill::Zeros, Fill::Nan, Fill::Value(&[1, 2, 3, 4])]
        .into_iter()
        .enumerate()
    {
        let mut sc = SChunk::builder()
            .cparams(cparams())
            .fsync(false)
            .create_file(dir.join(format!("fill{i}.b2frame")))
            .unwrap();
        sc.fill_special(10_001, fill, CS).unwrap();
        let (job, exp) = snapshot(&mut sc, &dir, &format!("fill{i}"));
        jobs.push(job);
        expected.push((format!("fill_special {fill:?}"), exp));
    }
    c_sees_what_we_see(&jobs, &expected);

    // C appends a chunk and a vlmetalayer; we read them.
    let extra = data(CS, 99);
    let jobs: Vec<Value> = lives
        .iter()
        .map(|(_, s, _)| match s {
            Storage::File { path, offset } => {
                json!({"path": path, "offset": offset, "append": hex(&extra)})
            }
            Storage::Directory(p) => json!({"path": p, "offset": 0, "append": hex(&extra)}),
            _ => unreachable!(),
        })
        .collect();
    let reports = oracle(&jobs);
    for (r, (kind, storage, n)) in reports.iter().zip(&lives) {
        assert_eq!(r["ok"], true, "{kind}: C append fails: {}", r["error"]);
        let mut sc = reopen(storage);
        assert_eq!(sc.nchunks(), n + 1, "{kind}");
        assert_eq!(sc.decompress_chunk_vec(*n).unwrap(), extra, "{kind}");
        assert_eq!(
            sc.vlmeta_get("c_added").unwrap().unwrap(),
            b"\xa6from C",
            "{kind}"
        );
        assert!(
            same(&r["after"], &report(&mut sc)),
            "{kind}: after C's append"
        );
        // And we can keep changing it.
        sc.append_buffer(&data(CS, 100)).unwrap();
        assert_eq!(reopen(storage).nchunks(), n + 2);
    }
    if let Storage::File { path, offset } = &lives[2].1 {
        // The bytes before the embedded frame are intact.
        let all = std::fs::read(path).unwrap();
        assert_eq!(*offset, 4321);
        assert!(all[..4321].iter().all(|&b| b == 7));
    }
}

/// A frame that holds no byte: C-Blosc2 reads its trailer right after the
/// header (no index; `get_trailer_offset`), wherever the header's frame
/// length ends. Until session 46 a frame in memory whose chunks were all
/// deleted kept their bytes before the trailer, and C could not open it
/// (`Cannot access the vlmetalayers`); a file frame left its trailer after
/// them, so C read the empty frame's first trailer and lost vlmetalayers
/// added since. Found by opening, in C-Blosc2, the frames our edits make
/// of the fuzz corpora. The emptied frames, with vlmetalayers added before
/// and after, and refilled, must read in C as in Rust, for every storage
/// (the file is read as the change left it, before any tidy).
#[test]
fn c_reads_our_frames_emptied_by_deletes() {
    let dir = tempdir("c-empty");
    let mut jobs = Vec::new();
    let mut expected = Vec::new();
    for kind in ["memory", "file", "offset", "dir"] {
        let mut sc = new_frame(kind, &dir, "e");
        let mut snap = |sc: &mut SChunk, tag: &str| {
            let (job, exp) = snapshot(sc, &dir, &format!("{kind}-{tag}"));
            jobs.push(job);
            expected.push((format!("{kind} {tag}"), exp));
        };
        sc.vlmeta_add("v", b"\xa3one").unwrap();
        snap(&mut sc, "new, vlmeta");
        for k in 0..3 {
            sc.append_buffer(&data(CS, k)).unwrap();
        }
        sc.vlmeta_add("w", b"\xa3two").unwrap();
        for i in [1, 2, 0] {
            sc.delete_chunk(i.min(sc.nchunks() - 1)).unwrap();
        }
        assert_eq!(sc.nchunks(), 0);
        snap(&mut sc, "emptied");
        sc.vlmeta_add("x", b"\xa5three").unwrap();
        snap(&mut sc, "emptied, vlmeta");
        sc.meta_update("m", &[0x93, 4, 5, 6]).unwrap();
        sc.vlmeta_delete("v").unwrap();
        snap(&mut sc, "emptied, meta and vlmeta changed");
        sc.append_buffer(&data(CS, 7)).unwrap();
        snap(&mut sc, "refilled");
    }
    c_sees_what_we_see(&jobs, &expected);
}

/// Chunks that hold no byte can only be written beside ones that do: a
/// frame of 0 bytes has no index for C-Blosc2 (nor for us), so its chunks
/// would be lost on reopen. Until session 46 two empty chunks appended to
/// a new super-chunk made a frame that reopened with none, and that
/// C-Blosc2 could not open. A file or a directory now refuses such a
/// change with nothing changed; a super-chunk in memory holds them (as
/// C-Blosc2's does) and refuses to be written as a frame (as C-Blosc2's
/// `to_buffer` does). An empty chunk after data is kept, and C reads it.
#[test]
fn empty_chunks_alone_are_refused_and_beside_data_read_in_c() {
    let dir = tempdir("c-empty-chunks");
    let mut jobs = Vec::new();
    let mut expected = Vec::new();
    for kind in ["memory", "file", "dir"] {
        let b = SChunk::builder().cparams(cparams()).fsync(false);
        let mut sc = match kind {
            "memory" => b.build_memory().unwrap(),
            "file" => b.create_file(dir.join("z.b2frame")).unwrap(),
            _ => b.create_dir(dir.join("z-dir.b2frame")).unwrap(),
        };
        let empty = oxiblosc::compress(&[], &cparams()).unwrap();
        let refused = |r: oxiblosc::Result<()>| {
            assert!(
                matches!(r, Err(oxiblosc::Error::InvalidParam(_))),
                "{kind}: {r:?}"
            )
        };
        if kind == "memory" {
            sc.append_buffer(&[]).unwrap();
            sc.append_chunk(&empty).unwrap();
            sc.insert_chunk(0, &empty).unwrap();
            assert_eq!(sc.nchunks(), 3);
            refused(sc.to_cframe().map(drop));
            refused(sc.cframe_ref().map(drop));
            refused(sc.write_cframe(&mut Vec::new()).map(drop));
            assert_eq!(sc.nchunks(), 3, "{kind}: chunks kept");
            for _ in 0..3 {
                sc.delete_chunk(0).unwrap();
            }
        } else {
            let before = report(&mut sc);
            refused(sc.append_buffer(&[]).map(drop));
            refused(sc.append_chunk(&empty).map(drop));
            refused(sc.insert_chunk(0, &empty));
            assert_eq!(report(&mut sc), before, "{kind}: a refused change changed");
        }
        sc.append_buffer(&data(CS, 1)).unwrap();
        sc.append_buffer(&[]).unwrap();
        sc.append_chunk(&empty).unwrap();
        assert_eq!(sc.nchunks(), 3);
        // Leaving only empty chunks is refused too, but in memory.
        let before = report(&mut sc);
        if kind != "memory" {
            refused(sc.delete_chunk(0));
            refused(sc.update_chunk(0, &empty));
            assert_eq!(report(&mut sc), before, "{kind}: a refused change changed");
        }
        let (job, exp) = snapshot(&mut sc, &dir, &format!("{kind}-beside"));
        jobs.push(job);
        expected.push((format!("{kind}: empty chunks after data"), exp));
        if let Storage::File { path, .. } | Storage::Directory(path) = sc.storage() {
            drop(sc);
            let mut again = SChunk::open(&path).unwrap();
            assert_eq!(again.nchunks(), 3, "{kind} reopened");
            assert_eq!(report(&mut again), before, "{kind} reopened");
        } else {
            let mut again = SChunk::from_cframe(sc.to_cframe().unwrap()).unwrap();
            assert_eq!(report(&mut again), before, "{kind} reopened");
        }
    }
    c_sees_what_we_see(&jobs, &expected);
}

/// `chunk` with its BYTEDELTA slot's meta set to `meta`.
fn bytedelta_meta(chunk: &[u8], meta: u8) -> Vec<u8> {
    let mut c = chunk.to_vec();
    let s = (0..6).find(|&s| c[16 + s] == 35).expect("a BYTEDELTA slot");
    c[24 + s] = meta;
    c
}

/// A BYTEDELTA slot whose meta is 0 stands for the super-chunk's type size
/// (CHUNK-NOTES §4.6): C-Blosc2 decodes such a chunk, in a frame, with the
/// frame's type size, and a vlmetalayer's chunk too. Neither encoder writes
/// meta 0 (both write the type size itself), but other writers may. Until
/// session 47 we decoded such chunks with the chunk's own type size, so a
/// chunk of another type size than its frame's and a vlmetalayer (type size
/// 8 in a frame of 4) read otherwise than in C (found by `fuzz/c-diff.sh`).
#[test]
fn bytedelta_meta_0_is_the_frames_typesize_as_in_c() {
    let dir = tempdir("c-bytedelta0");
    let raw: Vec<u8> = (0..CS as u32 / 2)
        .flat_map(|i| ((i * 7 + i / 9) as u16).to_le_bytes())
        .collect();
    let p = CParams::default()
        .codec(Codec::Lz4)
        .typesize(2)
        .filters(&[oxiblosc::Filter::Shuffle, oxiblosc::Filter::ByteDelta]);
    let ours = oxiblosc::compress(&raw, &p).unwrap();
    assert!(!oxiblosc::ChunkHeader::parse(&ours).unwrap().is_memcpyed());
    let meta0 = bytedelta_meta(&ours, 0);
    // Alone, meta 0 is the chunk's own type size (C refuses the chunk).
    assert!(oxiblosc::decompress(&meta0).unwrap() == raw);
    let in_frame = oxiblosc::decompress(&bytedelta_meta(&ours, 4)).unwrap();
    assert!(in_frame != raw, "type size 4 reads the chunk otherwise");
    let (mut jobs, mut expected) = (Vec::new(), Vec::new());
    for kind in ["memory", "file", "dir"] {
        let mut sc = new_frame(kind, &dir, "bd0");
        sc.append_chunk(&meta0).unwrap();
        sc.append_buffer(&data(CS, 6)).unwrap();
        assert!(sc.decompress_chunk_vec(0).unwrap() == in_frame, "{kind}");
        let (job, exp) = snapshot(&mut sc, &dir, &format!("snap-bd0-{kind}"));
        jobs.push(job);
        expected.push((format!("{kind}: a chunk of type size 2"), exp));
    }
    // A vlmetalayer (its chunk of type size 8) given BYTEDELTA, meta 0, in
    // place of its empty first filter slot.
    let mut sc = new_frame("memory", &dir, "bd0v");
    sc.append_buffer(&data(CS, 7)).unwrap();
    let value: Vec<u8> = (0..3000u32).flat_map(|v| (v * v).to_le_bytes()).collect();
    sc.vlmeta_add("v", &value).unwrap();
    let mut frame = sc.to_cframe().unwrap();
    let vl = oxiblosc::compress(&value, &CParams::default()).unwrap();
    let at = frame
        .windows(vl.len())
        .position(|w| w == vl)
        .expect("the vlmetalayer's chunk in the frame");
    assert_eq!((frame[at + 16], frame[at + 24]), (0, 0), "slot 0 empty");
    frame[at + 16] = 35;
    let alone = oxiblosc::decompress(&frame[at..at + vl.len()]).unwrap();
    let mut sc = SChunk::from_cframe(frame).unwrap();
    let got = sc.vlmeta_get("v").unwrap().unwrap();
    assert!(
        got != alone,
        "read with the frame's type size, not the chunk's"
    );
    let (job, exp) = snapshot(&mut sc, &dir, "bd0-vlmeta");
    jobs.push(job);
    expected.push(("a vlmetalayer of type size 8".into(), exp));
    c_sees_what_we_see(&jobs, &expected);
}

/// A short last chunk of zeros whose size is not a whole number of items
/// (6,144 bytes of 18-byte items in chunks of 4,590: a last chunk of 1,554
/// bytes) is stored, not coded in the index: C-Blosc2 makes a coded
/// chunk with `blosc2_chunk_zeros`, which refuses such a size, so it could
/// not read that chunk, nor open the frame from memory with a copy (its
/// own writer codes it so). Found by `fuzz/c-diff.sh`'s `encode-frame`
/// mode (session 47).
#[test]
fn a_short_last_zeros_chunk_of_part_items_is_stored_for_c() {
    let dir = tempdir("c-short-zeros");
    let p = CParams::default().codec(Codec::Lz4).typesize(18);
    let zeros = vec![0u8; 6144];
    let (mut jobs, mut expected) = (Vec::new(), Vec::new());
    for kind in ["memory", "file", "dir"] {
        let b = SChunk::builder()
            .cparams(p.clone())
            .chunksize(4590)
            .fsync(false);
        let mut sc = match kind {
            "memory" => b.build_memory().unwrap(),
            "file" => b.create_file(dir.join("short-zeros.b2frame")).unwrap(),
            _ => b.create_dir(dir.join("short-zeros-dir.b2frame")).unwrap(),
        };
        sc.append_buffer(&zeros[..4590]).unwrap();
        sc.append_buffer(&zeros[4590..]).unwrap();
        assert_eq!(sc.nchunks(), 2);
        whole_coded_short_stored(&sc, kind);
        let (job, exp) = snapshot(&mut sc, &dir, &format!("snap-short-zeros-{kind}"));
        jobs.push(job);
        expected.push((format!("{kind}: a short chunk of zeros"), exp));
        if kind == "memory" {
            // From memory, copying the frame: C makes every chunk at once.
            let mut copy = jobs.last().unwrap().clone();
            copy["copy"] = json!(true);
            jobs.push(copy);
            expected.push((
                "memory, copied: a short chunk of zeros".into(),
                expected.last().unwrap().1.clone(),
            ));
        }
    }
    c_sees_what_we_see(&jobs, &expected);
}

/// A forced block size that is not whole items (65,535 bytes of 18-byte
/// items) is recorded in the frame header rounded down to whole items, as
/// our chunks use it: C-Blosc2 compresses the chunks it appends to a frame
/// with the header's block size as it is, and with 65,535 it wrote a chunk
/// neither it nor we could read ("stream decoded to 65520 bytes, 65535
/// expected"). Found while looking at `fuzz/c-diff.sh`'s `encode-frame`
/// mode (session 47).
#[test]
fn c_appends_readable_chunks_to_frames_of_a_forced_part_item_blocksize() {
    let dir = tempdir("c-part-item-blocksize");
    let p = CParams::default()
        .codec(Codec::Lz4)
        .typesize(18)
        .blocksize(65_535);
    let n = 180_000;
    let ramp: Vec<u8> = (0..n).map(|i| (i % 97) as u8).collect();
    let extra: Vec<u8> = (0..n).map(|i| ((i * 7) % 251 / 3) as u8).collect();
    let mut lives = Vec::new();
    for kind in ["file", "dir"] {
        let b = SChunk::builder()
            .cparams(p.clone())
            .chunksize(n)
            .fsync(false);
        let mut sc = match kind {
            "file" => b.create_file(dir.join("bs.b2frame")).unwrap(),
            _ => b.create_dir(dir.join("bs-dir.b2frame")).unwrap(),
        };
        sc.append_buffer(&ramp).unwrap();
        assert_eq!(sc.frame_header().blocksize, 65_520, "{kind}");
        let c = sc.get_chunk(0).unwrap();
        assert_eq!(oxiblosc::ChunkHeader::parse(&c).unwrap().blocksize, 65_520);
        lives.push((kind, sc.storage()));
    }
    let extra_file = dir.join("extra.bin");
    std::fs::write(&extra_file, &extra).unwrap();
    let jobs: Vec<Value> = lives
        .iter()
        .map(|(_, s)| match s {
            Storage::File { path, .. } | Storage::Directory(path) => {
                json!({"path": path, "offset": 0, "append_file": extra_file})
            }
            _ => unreachable!(),
        })
        .collect();
    for (r, (kind, storage)) in oracle(&jobs).iter().zip(&lives) {
        assert_eq!(r["ok"], true, "{kind}: C append fails: {}", r["error"]);
        let mut sc = reopen(storage);
        assert_eq!(sc.nchunks(), 2, "{kind}");
        assert!(sc.decompress_chunk_vec(1).unwrap() == extra, "{kind}");
        assert!(
            same(&r["after"], &report(&mut sc)),
            "{kind}: C reads its chunk otherwise"
        );
    }
}

/// Blosc1 parameters (`ChunkFormat::Blosc1`) in a super-chunk or the
/// streaming frame encoder give Blosc2 chunks, as C-Blosc2's super-chunks
/// compress them: we stored Blosc1 chunks of 32 bytes and more as they
/// were, and C-Blosc2 cannot open a frame on disk whose first chunk is a
/// Blosc1 chunk ("Cannot inspect the first chunk in frame"). Found by
/// `fuzz/c-diff.sh`'s `encode-frame` mode (session 47: 3 sparse frames).
#[test]
fn blosc1_params_in_frames_give_blosc2_chunks_for_c() {
    use std::io::Write;
    let dir = tempdir("c-blosc1-params");
    let p = CParams::default()
        .codec(Codec::Lz4)
        .typesize(4)
        .filters(&[oxiblosc::Filter::BitShuffle])
        .format(oxiblosc::ChunkFormat::Blosc1);
    let raw = data(CS, 21);
    assert_eq!(
        oxiblosc::compress(&raw, &p).unwrap()[0],
        2,
        "a Blosc1 chunk alone"
    );
    let blosc2 = |c: &[u8], what: &str| {
        let h = oxiblosc::ChunkHeader::parse(c).unwrap();
        assert!(
            c.len() >= 32 && h.version >= 3,
            "{what}: version {}",
            h.version
        );
    };
    let (mut jobs, mut expected) = (Vec::new(), Vec::new());
    for kind in ["memory", "file", "dir"] {
        let b = SChunk::builder()
            .cparams(p.clone())
            .chunksize(CS)
            .fsync(false);
        let mut sc = match kind {
            "memory" => b.build_memory().unwrap(),
            "file" => b.create_file(dir.join("b1.b2frame")).unwrap(),
            _ => b.create_dir(dir.join("b1-dir.b2frame")).unwrap(),
        };
        assert_eq!(sc.cparams().format, oxiblosc::ChunkFormat::Blosc2);
        sc.append_buffer(&raw).unwrap();
        sc.append_buffer(&data(CS, 22)).unwrap();
        blosc2(&sc.get_chunk(0).unwrap(), kind);
        let (job, exp) = snapshot(&mut sc, &dir, &format!("snap-b1-{kind}"));
        jobs.push(job);
        expected.push((format!("{kind}: Blosc1 parameters"), exp));
    }
    let mut sc = SChunk::new(CParams::default()).unwrap();
    sc.set_cparams(p.clone()).unwrap();
    assert_eq!(sc.cparams().format, oxiblosc::ChunkFormat::Blosc2);
    sc.append_buffer(&raw).unwrap();
    blosc2(&sc.get_chunk(0).unwrap(), "set_cparams");
    let mut enc = oxiblosc::stream::FrameEncoder::new(Vec::new(), p.clone(), CS).unwrap();
    enc.write_all(&raw).unwrap();
    let path = dir.join("b1-stream.b2frame");
    std::fs::write(&path, enc.finish().unwrap()).unwrap();
    let mut sc = SChunk::open(&path).unwrap();
    blosc2(&sc.get_chunk(0).unwrap(), "FrameEncoder");
    expected.push(("FrameEncoder: Blosc1 parameters".into(), report(&mut sc)));
    jobs.push(json!({"path": path, "offset": 0}));
    c_sees_what_we_see(&jobs, &expected);
}

/// A short last chunk of zeros (of whole items) is stored, not coded in
/// the index: C-Blosc2 codes it in its own frames, and a chunk it then
/// appends leaves a frame of variable-size chunks with codes in its index,
/// which neither it nor we can open (python-blosc2: chunks of 451 bytes,
/// 451 then 281 zeros, then 451 bytes appended: the frame no longer opens).
/// Found by `fuzz/c-diff.sh`'s `c-append` mode (session 47: 15 of 2,074
/// frames C appended to, then could not open).
#[test]
fn c_appends_after_our_short_last_zeros_chunk() {
    let dir = tempdir("c-append-short-zeros");
    let p = CParams::default().codec(Codec::Zstd).typesize(1);
    let mut lives = Vec::new();
    for kind in ["file", "dir"] {
        let b = SChunk::builder()
            .cparams(p.clone())
            .chunksize(451)
            .fsync(false);
        let mut sc = match kind {
            "file" => b.create_file(dir.join("sz.b2frame")).unwrap(),
            _ => b.create_dir(dir.join("sz-dir.b2frame")).unwrap(),
        };
        sc.append_buffer(&[0u8; 451]).unwrap();
        sc.append_buffer(&[0u8; 281]).unwrap();
        whole_coded_short_stored(&sc, kind);
        lives.push((kind, sc.storage()));
    }
    let extra: Vec<u8> = (0..451u32).map(|i| (i * 7 % 251) as u8).collect();
    let jobs: Vec<Value> = lives
        .iter()
        .map(|(_, s)| match s {
            Storage::File { path, .. } | Storage::Directory(path) => {
                json!({"path": path, "offset": 0, "append": hex(&extra)})
            }
            _ => unreachable!(),
        })
        .collect();
    for (r, (kind, storage)) in oracle(&jobs).iter().zip(&lives) {
        // C refuses to append after a short chunk, or appends one we read;
        // either way the frame reopens, in C and here, its chunks whole.
        let mut sc = reopen(storage);
        assert!(sc.decompress_chunk_vec(0).unwrap() == [0u8; 451], "{kind}");
        assert!(sc.decompress_chunk_vec(1).unwrap() == [0u8; 281], "{kind}");
        if r["ok"] == true {
            assert_eq!(sc.nchunks(), 3, "{kind}");
            assert!(sc.decompress_chunk_vec(2).unwrap() == extra, "{kind}");
        } else {
            assert_eq!(sc.nchunks(), 2, "{kind}: C refused: {}", r["error"]);
        }
        let again = oracle(&[json!({"path": storage_path(storage), "offset": 0})]);
        assert_eq!(
            again[0]["ok"], true,
            "{kind}: C cannot reopen: {}",
            again[0]["error"]
        );
        assert!(
            same(&again[0]["before"], &report(&mut sc)),
            "{kind}: C reads the frame otherwise"
        );
    }
}

fn storage_path(s: &Storage) -> std::path::PathBuf {
    match s {
        Storage::File { path, .. } | Storage::Directory(path) => path.clone(),
        _ => unreachable!(),
    }
}

/// Chunk 0 (a whole chunk of zeros) is an index code, chunk 1 (a short
/// chunk of zeros) is stored.
fn whole_coded_short_stored(sc: &SChunk, kind: &str) {
    use oxiblosc::frame::ChunkEntry;
    assert!(
        matches!(sc.chunk_entry(0), Ok(ChunkEntry::Special(_))),
        "{kind}: a whole chunk of zeros is coded"
    );
    assert!(
        matches!(sc.chunk_entry(1), Ok(ChunkEntry::Stored(_))),
        "{kind}: the short one is stored"
    );
}
