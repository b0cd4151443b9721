//! Hostile frames: every truncation of every frame vector, every single
//! bit flip of their headers, index chunks and trailers, and random flips
//! elsewhere, open to `Ok` or `Err` — never a panic, a hang, or an
//! allocation sized by an unchecked field. Sparse frames get the same for
//! their index file and chunk files.

mod support;
use oxiblosc::frame::{Frame, MIN_INDEX_DECODE_LIMIT};
use oxiblosc::schunk::{OpenOptions, SChunk};
use support::Rng;
use support::corpus::*;
use support::counting;

#[global_allocator]
static GLOBAL: counting::Counting = counting::Counting;

/// The largest real chunk in the corpus is 3 MB; the index decode limit is
/// the other big allocation a reader may make.
const BOUND: usize = MIN_INDEX_DECODE_LIMIT + (8 << 20);

/// Use everything a reader would on a super-chunk.
fn exercise(sc: &mut SChunk) {
    let n = sc.nchunks().min(64);
    for i in 0..n {
        let _ = sc.chunk_info(i);
        if let Ok(v) = sc.decompress_chunk_vec(i) {
            assert!(v.len() as u64 <= sc.nbytes());
        }
    }
    let names: Vec<String> = sc.vlmeta_names().iter().map(|s| s.to_string()).collect();
    for name in names {
        let _ = sc.vlmeta_get(&name);
    }
    // The chunks were decoded above; a slice over the start is enough.
    let nb = sc.nbytes().min(1 << 16);
    let _ = sc.get_slice(0, nb);
}

fn attempt(bytes: &[u8], what: &str) {
    counting::reset_largest();
    let _ = Frame::parse(bytes);
    if let Ok(mut sc) = OpenOptions::new()
        .read_only(true)
        .from_cframe(bytes.to_vec())
    {
        exercise(&mut sc);
    }
    let largest = counting::largest();
    assert!(largest <= BOUND, "{what}: allocated {largest} bytes");
}

fn frames() -> Vec<(String, Vec<u8>)> {
    vectors(&["frame", "compat"])
        .into_iter()
        .filter(|v| v["kind"] == "frame" || v["container"] == "frame")
        .map(|v| (v["name"].as_str().unwrap().to_string(), read(&v)))
        .collect()
}

#[test]
fn every_truncation_fails_cleanly() {
    for (name, bytes) in frames() {
        // Every prefix for small frames; a dense sample (all of the first
        // and last 4 KiB, every 7th byte between) for big ones.
        for len in 0..bytes.len() {
            let keep =
                bytes.len() < 16384 || len < 4096 || len + 4096 > bytes.len() || len % 7 == 0;
            if keep {
                let r = Frame::parse(&bytes[..len]);
                assert!(r.is_err(), "{name}: prefix of {len} bytes parses");
                attempt(&bytes[..len], &format!("{name} cut at {len}"));
            }
        }
    }
}

/// splitmix64.
#[test]
fn bit_flips_fail_cleanly_or_decode() {
    let mut rng = Rng(0xF1A5);
    let mut tried = 0;
    for (name, bytes) in frames() {
        let f = Frame::parse(&bytes).unwrap();
        let hl = f.header.header_len as usize;
        let tstart = bytes.len() - f.trailer_len as usize;
        let istart = f.index.map_or(tstart, |i| i.pos as usize);
        // Every bit of the header, the index chunk and the trailer.
        let mut positions: Vec<usize> = (0..hl).chain(istart..bytes.len()).collect();
        // Every bit of each stored chunk's header, and random bits elsewhere.
        let mut sc = SChunk::from_cframe(bytes.clone()).unwrap();
        for i in 0..sc.nchunks() {
            if let Ok(info) = sc.chunk_info(i)
                && let Some(loc) = info.location
            {
                let at = hl + loc as usize;
                positions.extend(at..(at + 32).min(bytes.len()));
            }
        }
        for _ in 0..200 {
            positions.push(rng.next() as usize % bytes.len());
        }
        for &p in &positions {
            for bit in 0..8 {
                let mut b = bytes.clone();
                b[p] ^= 1 << bit;
                attempt(&b, &format!("{name}: bit {bit} of byte {p}"));
                tried += 1;
            }
        }
    }
    assert!(tried > 50_000, "{tried} flips");
}

#[test]
fn sframe_corruption_fails_cleanly() {
    let tmp = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("hostile-sframe-{}", std::process::id()));
    for v in vectors(&["sframe"]) {
        let src = data_dir().join(v["path"].as_str().unwrap());
        let files: Vec<_> = std::fs::read_dir(&src)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        for target in &files {
            let orig = std::fs::read(src.join(target)).unwrap();
            let cases: Vec<Vec<u8>> = (0..orig.len().min(200))
                .map(|n| orig[..n].to_vec())
                .chain((0..orig.len().min(120)).flat_map(|p| {
                    let orig = &orig;
                    (0..8).map(move |bit| {
                        let mut b = orig.clone();
                        b[p] ^= 1 << bit;
                        b
                    })
                }))
                .collect();
            for case in cases {
                let _ = std::fs::remove_dir_all(&tmp);
                std::fs::create_dir_all(&tmp).unwrap();
                for f in &files {
                    let bytes = if f == target {
                        case.clone()
                    } else {
                        std::fs::read(src.join(f)).unwrap()
                    };
                    std::fs::write(tmp.join(f), bytes).unwrap();
                }
                counting::reset_largest();
                if let Ok(mut sc) = OpenOptions::new().read_only(true).open(&tmp) {
                    exercise(&mut sc);
                }
                let largest = counting::largest();
                assert!(largest <= BOUND, "{target:?}: allocated {largest}");
            }
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
}

/// Hand-made frames hitting the checks of CONTAINER-NOTES §6 one by one.
#[test]
fn safe_reader_checklist() {
    let base = frames()
        .into_iter()
        .find(|(n, _)| n == "f00_blosclz_5chunks")
        .unwrap()
        .1;
    let patch = |at: usize, b: &[u8]| {
        let mut v = base.clone();
        v[at..at + b.len()].copy_from_slice(b);
        v
    };
    let bad: Vec<(&str, Vec<u8>)> = vec![
        ("magic", patch(2, b"x")),
        ("9d version nibble", patch(0, &[0x9d])),
        ("version 4", patch(25, &[0x14])),
        ("32-bit offsets", patch(25, &[0x02])),
        ("frame type 2", patch(26, &[2])),
        ("header_len < 87", patch(11, &50i32.to_be_bytes())),
        ("header_len > frame_len", patch(11, &i32::MAX.to_be_bytes())),
        (
            "frame_len > len",
            patch(16, &(base.len() as u64 + 1).to_be_bytes()),
        ),
        ("frame_len huge", patch(16, &u64::MAX.to_be_bytes())),
        ("typesize 0", patch(48, &0i32.to_be_bytes())),
        ("negative nbytes", patch(30, &(-1i64).to_be_bytes())),
        ("cbytes past trailer", patch(39, &(i64::MAX).to_be_bytes())),
        (
            "nbytes needs more chunks",
            patch(30, &400_000i64.to_be_bytes()),
        ),
        ("7 filters", patch(70, &[7])),
        ("chunksize -2", patch(58, &(-2i32).to_be_bytes())),
        ("metalayer count 17", patch(92, &[0, 17])),
        ("trailer_len 0", patch(base.len() - 22, &0u32.to_be_bytes())),
        (
            "trailer_len huge",
            patch(base.len() - 22, &u32::MAX.to_be_bytes()),
        ),
        ("no ce marker", patch(base.len() - 23, &[0])),
    ];
    for (what, b) in bad {
        assert!(Frame::parse(&b).is_err(), "{what} accepted");
        attempt(&b, what);
    }
    // A chunk offset past cbytes.
    let f = Frame::parse(&base).unwrap();
    let ipos = f.index.unwrap().pos as usize;
    let mut b = base.clone();
    // The index is memcpyed: entries start 32 bytes in.
    b[ipos + 32..ipos + 40].copy_from_slice(&5000i64.to_le_bytes());
    assert!(Frame::parse(&b).is_err(), "offset past cbytes accepted");
    // An unknown special code.
    b[ipos + 32..ipos + 40].copy_from_slice(&(0x83u64 << 56).to_le_bytes());
    assert!(Frame::parse(&b).is_err(), "special 0x83 accepted");
    // A chunk whose cbytes runs past the section.
    let mut b = base.clone();
    b[97 + 12..97 + 16].copy_from_slice(&100_000u32.to_le_bytes());
    assert!(SChunk::from_cframe(b).is_err_and(|e| e.to_string().contains("outside")));
    // A lazy chunk.
    let mut b = base.clone();
    b[97 + 31] |= 0x08;
    let mut sc = SChunk::from_cframe(b).unwrap();
    assert!(sc.get_chunk(0).is_err());
}

/// A few KB plus a small multiple of the input.
fn small_bound(input: usize) -> usize {
    (512 << 10) + 64 * input
}

fn finding(name: &str) -> Vec<u8> {
    std::fs::read(data_dir().join("findings").join(name)).unwrap()
}

/// Tiny contiguous frames claiming huge sizes (nchunks, nbytes, tdecomp,
/// chunks of 2 GiB): opening and every read allocate a few KB plus a small
/// multiple of the input.
#[test]
fn tiny_cframes_claiming_huge_sizes_allocate_little() {
    for name in [
        "oom-probes/frame-tdecomp.b2frame",
        "oom-probes/frame-huge-nchunks.b2frame",
        "cframe-1.bin",
        "cframe-1b-dup-offsets.b2frame",
    ] {
        let bytes = finding(name);
        counting::reset_largest();
        let _ = Frame::parse(&bytes);
        if let Ok(mut sc) = OpenOptions::new()
            .read_only(true)
            .from_cframe(bytes.clone())
        {
            exercise(&mut sc);
            let _ = sc.get_slice(0, 4096.min(sc.nbytes()));
            let _ = sc.dead_bytes();
        }
        let largest = counting::largest();
        assert!(
            largest <= small_bound(bytes.len()),
            "{name}: allocated {largest}"
        );
    }
}

/// A sparse frame whose chunk file is 72 bytes claiming 2 GiB: open and
/// every read allocate a few KB.
#[test]
fn tiny_sframe_chunk_claiming_huge_sizes_allocates_little() {
    use oxiblosc::CParams;
    let d = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("hostile-tiny-sframe-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    let mut sc = SChunk::builder()
        .cparams(CParams::default().typesize(1))
        .fsync(false)
        .create_dir(&d)
        .unwrap();
    sc.append_buffer(&[1u8; 100]).unwrap();
    sc.append_buffer(&[2u8; 50]).unwrap();
    drop(sc);
    let probe = finding("oom-probes/chunk-filter-fail.b2");
    let claimed = oxiblosc::ChunkHeader::parse(&probe).unwrap().nbytes;
    std::fs::write(d.join("00000000.chunk"), &probe).unwrap();
    let index_path = d.join("chunks.b2frame");
    let mut index = std::fs::read(&index_path).unwrap();
    let f = Frame::parse(&index).unwrap();
    let mut h = f.header.clone();
    h.nbytes = claimed as i64 + 50;
    index[..oxiblosc::frame::HEADER_FIXED_LEN].copy_from_slice(&h.encode_fixed());
    std::fs::write(&index_path, &index).unwrap();
    counting::reset_largest();
    if let Ok(mut sc) = OpenOptions::new().read_only(true).open(&d) {
        exercise(&mut sc);
        assert!(sc.decompress_chunk_vec(0).is_err());
        let _ = sc.to_cframe();
    }
    let largest = counting::largest();
    assert!(
        largest <= small_bound(index.len() + probe.len()),
        "allocated {largest}"
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// A 40-byte repeated index may stand for 2^27 chunks: an edit of the
/// chunks would expand it to a 1 GiB explicit index (and a frame no reader
/// opens); it is refused. An edit of the vlmetalayers and `compact` keep
/// it as it is, in memory, in a file and in a directory, allocating little.
#[test]
fn edits_of_a_huge_repeated_index_are_refused_or_small() {
    use oxiblosc::CParams;
    use oxiblosc::schunk::Fill;
    // 2^27 zeros chunks of 1 GiB each.
    let (n, cs) = (1u64 << 27, 1usize << 30);
    let mut sc = SChunk::new(CParams::default().typesize(1)).unwrap();
    sc.fill_special(n * cs as u64, Fill::Zeros, cs).unwrap();
    let chunk = oxiblosc::compress(&[1u8; 8], &CParams::default().typesize(1)).unwrap();
    let frame = sc.to_cframe().unwrap();
    assert!(frame.len() < 1024);
    counting::reset_largest();
    let mut sc = SChunk::from_cframe(frame.clone()).unwrap();
    assert!(sc.append_buffer(&[1u8]).is_err());
    assert!(sc.delete_chunk(0).is_err());
    let largest = counting::largest();
    assert!(largest <= small_bound(frame.len()), "allocated {largest}");
    // The trailer changes, the index staying as it is: a vlmetalayer
    // added and updated, the frame compacted (refused in memory until
    // session 52, where a file trimmed: cframe_edit on a frame of
    // cframe_read's corpus), written and reopened.
    // Until session 52 the change reserved 8 bytes an entry for the index:
    // 1 GiB (found through capi_frame's blosc2_vlmeta_add on a 172-byte
    // frame of cframe_read's corpus).
    counting::reset_largest();
    sc.vlmeta_add("note", b"first").unwrap();
    sc.vlmeta_update("note", b"kept").unwrap();
    sc.compact().unwrap();
    let again = sc.to_cframe().unwrap();
    let largest = counting::largest();
    assert!(largest <= small_bound(again.len()), "allocated {largest}");
    let mut sc = SChunk::from_cframe(again).unwrap();
    assert_eq!(sc.nchunks(), 1 << 27);
    assert_eq!(
        sc.vlmeta_get("note").unwrap().as_deref(),
        Some(&b"kept"[..])
    );
    // The same in a file and in a directory (a sparse frame).
    let dir = std::env::temp_dir().join(format!("oxiblosc-huge-repeated-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("f.b2frame");
    std::fs::write(&file, &frame).unwrap();
    let sparse = dir.join("d.b2frame");
    let mut d = SChunk::builder()
        .cparams(CParams::default().typesize(1))
        .create_dir(&sparse)
        .unwrap();
    d.fill_special(n * cs as u64, Fill::Zeros, cs).unwrap();
    drop(d);
    for path in [&file, &sparse] {
        counting::reset_largest();
        let mut sc = SChunk::open(path).unwrap();
        sc.vlmeta_add("note", b"first").unwrap();
        sc.vlmeta_update("note", b"kept").unwrap();
        // Refused as in memory, though the change above left a gap of a
        // chunk's size (1 GiB) before the index, which the frame's length
        // counts.
        assert!(sc.insert_chunk(0, &chunk).is_err());
        assert!(sc.append_buffer(&[1u8]).is_err());
        sc.compact().unwrap();
        drop(sc);
        let largest = counting::largest();
        assert!(
            largest <= small_bound(frame.len()),
            "{}: allocated {largest}",
            path.display()
        );
        let mut sc = SChunk::open(path).unwrap();
        assert_eq!(sc.nchunks(), 1 << 27);
        assert_eq!(
            sc.vlmeta_get("note").unwrap().as_deref(),
            Some(&b"kept"[..])
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A cframe whose second chunk claims `cbytes` = i32::MAX (far past the
/// chunks section) fails to open by default; with
/// `OpenOptions::defer_chunk_checks` (C-Blosc2's `from_buffer(copy=false)`)
/// it opens read-only, its good chunk reads, and the bad one fails when
/// read, in memory and in a file.
#[test]
fn deferred_chunk_checks_fail_on_read_and_refuse_changes() {
    let data = support::data(4096, 7);
    let mut sc = SChunk::new(oxiblosc::CParams::default().typesize(4)).unwrap();
    sc.append_buffer(&data).unwrap();
    sc.append_buffer(&data).unwrap();
    let mut bytes = sc.to_cframe().unwrap();
    let f = Frame::parse(&bytes).unwrap();
    let oxiblosc::frame::ChunkEntry::Stored(loc) = f.entry(1).unwrap() else {
        panic!("chunk 1 is not stored");
    };
    let at = f.header.header_len as usize + loc as usize + 12;
    bytes[at..at + 4].copy_from_slice(&i32::MAX.to_le_bytes());

    match SChunk::from_cframe(bytes.clone()) {
        Err(oxiblosc::Error::Corrupt(_)) => {}
        Err(e) => panic!("strict open: {e}"),
        Ok(_) => panic!("strict open accepts a chunk outside the section"),
    }

    let check = |sc: &mut SChunk| {
        assert_eq!(sc.nchunks(), 2);
        assert_eq!(sc.decompress_chunk_vec(0).unwrap(), data);
        let e = sc.decompress_chunk_vec(1).unwrap_err();
        assert!(matches!(e, oxiblosc::Error::Corrupt(_)), "{e}");
        assert!(sc.get_chunk(1).is_err());
        assert!(sc.get_slice(0, 2 * data.len() as u64).is_err());
        assert!(sc.check_writable().is_err());
        assert!(sc.append_buffer(&data).is_err());
        assert!(sc.delete_chunk(0).is_err());
        assert_eq!(sc.nchunks(), 2);
        // No new frame is written from it: it would not reopen (found by
        // cframe_read's deferred opening, session 44).
        let refused = |r: oxiblosc::Result<()>, what: &str| match r {
            Err(oxiblosc::Error::Corrupt(_)) => {}
            other => panic!("{what}: {other:?}"),
        };
        refused(sc.to_cframe().map(drop), "to_cframe");
        refused(sc.cframe_len().map(drop), "cframe_len");
        refused(sc.cframe_layout().map(drop), "cframe_layout");
        refused(
            sc.to_cframe_into(&mut [0u8; 1 << 16]).map(drop),
            "to_cframe_into",
        );
        let mut out = Vec::new();
        refused(sc.write_cframe(&mut out).map(drop), "write_cframe");
        assert!(out.is_empty(), "write_cframe wrote {} bytes", out.len());
        let saved = std::env::temp_dir().join(format!("oxiblosc-deferred-{}", std::process::id()));
        refused(sc.save(&saved).map(drop), "save");
        assert!(!saved.exists(), "save left a file");
    };
    let mut lazy = OpenOptions::new()
        .defer_chunk_checks(true)
        .from_cframe(bytes.clone())
        .unwrap();
    check(&mut lazy);

    let dir = support::tempdir("deferred-chunk-checks");
    let path = dir.join("bad.b2frame");
    std::fs::write(&path, &bytes).unwrap();
    assert!(SChunk::open(&path).is_err());
    let mut lazy = OpenOptions::new()
        .defer_chunk_checks(true)
        .open(&path)
        .unwrap();
    check(&mut lazy);
    drop(lazy);
    assert_eq!(
        std::fs::read(&path).unwrap(),
        bytes,
        "the file is untouched"
    );
}

/// A sparse frame missing one chunk file (C-Blosc2 opens it and reads the
/// other chunks) fails to open by default, naming the file and the option
/// that reads the rest; with `OpenOptions::defer_chunk_checks` it opens
/// read-only, the other chunks read, and reading the missing one fails
/// naming its file. The directory is left as it was.
#[test]
fn a_sparse_frame_missing_a_chunk_file_opens_deferred() {
    let dir = support::tempdir("sframe-missing-chunk");
    let path = dir.join("s.b2frame");
    let data: Vec<Vec<u8>> = (0..3).map(|k| support::data(4096, k + 1)).collect();
    let mut sc = SChunk::builder()
        .cparams(oxiblosc::CParams::default().typesize(4))
        .fsync(false)
        .create_dir(&path)
        .unwrap();
    for d in &data {
        sc.append_buffer(d).unwrap();
    }
    drop(sc);
    let gone = path.join("00000001.chunk");
    std::fs::remove_file(&gone).unwrap();
    let before = support::dir_files(&path);

    let e = match SChunk::open(&path) {
        Err(e @ oxiblosc::Error::Corrupt(_)) => e.to_string(),
        Err(e) => panic!("strict open: {e}"),
        Ok(_) => panic!("strict open accepts a missing chunk file"),
    };
    assert!(e.contains("00000001.chunk"), "{e}");
    assert!(e.contains("defer_chunk_checks"), "{e}");

    let mut sc = OpenOptions::new()
        .defer_chunk_checks(true)
        .open(&path)
        .unwrap();
    assert_eq!(sc.nchunks(), 3);
    assert!(sc.decompress_chunk_vec(0).unwrap() == data[0]);
    assert!(sc.decompress_chunk_vec(2).unwrap() == data[2]);
    let e = sc.decompress_chunk_vec(1).unwrap_err().to_string();
    assert!(e.contains("00000001.chunk"), "{e}");
    assert!(sc.append_buffer(&data[0]).is_err());
    assert!(
        sc.update_chunk(
            1,
            &oxiblosc::compress(&data[1], &oxiblosc::CParams::default()).unwrap()
        )
        .is_err()
    );
    assert!(sc.delete_chunk(1).is_err());
    assert!(sc.to_cframe().is_err(), "a frame that would not reopen");
    drop(sc);
    assert!(support::dir_files(&path) == before, "the directory changed");
}

/// A short slice of a large chunk decodes the blocks it lies in, not the
/// chunk: 10 bytes of a 4 MiB chunk of 64 KiB blocks allocate well under
/// the chunk's size (the whole chunk was decoded before).
#[test]
fn a_short_slice_decodes_only_its_blocks() {
    use oxiblosc::{CParams, Filter};
    let chunk = support::data(4 << 20, 3);
    let p = CParams::default()
        .typesize(4)
        .filters(&[Filter::Shuffle])
        .blocksize(64 << 10);
    let mut sc = SChunk::new(p).unwrap();
    sc.append_buffer(&chunk).unwrap();
    sc.append_buffer(&chunk).unwrap();
    let mut sc = SChunk::from_cframe(sc.to_cframe().unwrap()).unwrap();
    for (a, b) in [(1_000_001, 1_000_011), ((4 << 20) - 5, (4 << 20) + 5)] {
        counting::reset_largest();
        let got = sc.get_slice(a, b).unwrap();
        let largest = counting::largest();
        let flat = |k: u64| chunk[(k % (4 << 20)) as usize];
        assert_eq!(got, (a..b).map(flat).collect::<Vec<_>>());
        assert!(largest < 512 << 10, "{a}..{b}: allocated {largest}");
    }
}

/// `ndarray::get_slice` and `set_slice` take the metalayer as an argument:
/// one that is not the super-chunk's, or a chunk shorter than the
/// metalayer's chunks, is `Corrupt`. Before, a metalayer claiming 256 MiB
/// chunks (same number of chunks) allocated 256 MiB and read zeros for the
/// real 48-byte chunks, and a short last chunk read (and `set_slice`
/// stored) the previous chunk's bytes after its own. A refused `set_slice`
/// changes nothing, not even the chunks before the bad one.
#[test]
fn ndarray_slices_refuse_chunks_that_are_not_the_metalayers() {
    use oxiblosc::ndarray::{self, NdMeta};
    use oxiblosc::{CParams, Error};
    let meta = NdMeta::new(&[12, 9], &[4, 3], &[2, 3], "<i4");
    let data: Vec<u8> = (0..12 * 9 * 4).map(|i| (i % 251) as u8 + 1).collect();
    let mut sc = ndarray::create(&meta, CParams::default(), &data).unwrap();
    assert_eq!(sc.nchunks(), 9);
    let corrupt = |r: oxiblosc::Result<()>| matches!(r, Err(Error::Corrupt(_)));

    // Nine chunks as well, of 2^26 items.
    let huge = NdMeta::new(&[3, 3 << 26], &[1, 1 << 26], &[1, 1 << 20], "<i4");
    let mut out = [0u8; 4];
    counting::reset_largest();
    assert!(corrupt(ndarray::get_slice(
        &mut sc,
        &huge,
        &[0, 0],
        &[1, 1],
        &mut out,
        &[1, 1]
    )));
    assert!(corrupt(ndarray::set_slice(
        &mut sc,
        &huge,
        &[0, 0],
        &[1, 1],
        &[7u8; 4],
        &[1, 1]
    )));
    let largest = counting::largest();
    assert!(largest < 1 << 20, "allocated {largest} bytes");

    // The last chunk (rows 8..12, columns 6..9) replaced by one of 24
    // bytes instead of 48.
    let short = oxiblosc::compress(&[9u8; 24], &CParams::default().typesize(4)).unwrap();
    sc.update_chunk(8, &short).unwrap();
    let before = sc.to_cframe().unwrap();
    let mut box_ = vec![0u8; 4 * 3 * 4];
    assert!(corrupt(ndarray::get_slice(
        &mut sc,
        &meta,
        &[8, 6],
        &[12, 9],
        &mut box_,
        &[4, 3]
    )));
    // Chunk 7 first (its 48 bytes fill the buffer), then the short one.
    let mut two = vec![0u8; 4 * 6 * 4];
    assert!(corrupt(ndarray::get_slice(
        &mut sc,
        &meta,
        &[8, 3],
        &[12, 9],
        &mut two,
        &[4, 6]
    )));
    assert!(corrupt(ndarray::set_slice(
        &mut sc,
        &meta,
        &[8, 3],
        &[12, 9],
        &two,
        &[4, 6]
    )));
    // Chunk 7 decodes, but nothing is stored before every chunk has.
    assert!(
        sc.to_cframe().unwrap() == before,
        "a refused set_slice changed the frame"
    );
}

/// An NDArray of 20,000,000 one-item chunks, all zeros (index codes): an
/// edit would write an index of 160 MB, over what a reader of the frame
/// decodes, so `set_slice` and `resize` refuse it before anything is sized
/// by the chunk count (since session 18 they replace their chunks in one
/// change of the whole list, which must not be built for such an array).
#[test]
fn ndarray_edits_of_an_array_too_large_to_edit_are_refused_at_once() {
    use oxiblosc::ndarray::{self, NdMeta};
    use oxiblosc::schunk::Fill;
    use oxiblosc::{CParams, Error};
    let n = 20_000_000u64;
    let mut meta = NdMeta::new(&[n], &[1], &[1], "|u1");
    let mut sc = ndarray::builder(&meta, CParams::default())
        .unwrap()
        .build_memory()
        .unwrap();
    sc.fill_special(n, Fill::Zeros, 1).unwrap();
    assert_eq!(sc.nchunks(), n as usize);
    counting::reset_largest();
    let r = ndarray::set_slice(&mut sc, &meta, &[5], &[7], &[1, 2], &[2]);
    assert!(matches!(r, Err(Error::Unsupported(_))), "{r:?}");
    let r = ndarray::resize(&mut sc, &mut meta, &[n + 1], None);
    assert!(matches!(r, Err(Error::Unsupported(_))), "{r:?}");
    let largest = counting::largest();
    assert!(largest < 1 << 20, "largest allocation {largest}");
    assert_eq!(meta.shape, [n]);
}

/// A sparse frame's chunk file that is not a regular file: a symbolic link
/// (to a good copy of the chunk, elsewhere), a directory, or a FIFO no one
/// writes to. Each is refused as corrupt, naming the file, without waiting
/// on the FIFO (the read runs on a thread given 20 s); the other chunks
/// still read.
#[cfg(unix)]
#[test]
fn sframe_chunk_files_that_are_not_regular_files_are_refused() {
    use std::sync::mpsc;
    let base = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("sframe-not-regular-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    std::fs::create_dir_all(&base).unwrap();
    let data: Vec<u8> = (0..4096u32).flat_map(|v| (v / 5).to_le_bytes()).collect();
    for kind in ["symlink", "directory", "fifo"] {
        let dir = base.join(format!("{kind}.b2frame"));
        {
            let mut sc = SChunk::builder()
                .cparams(oxiblosc::CParams::default().typesize(4))
                .fsync(false)
                .create_dir(&dir)
                .unwrap();
            for _ in 0..3 {
                sc.append_buffer(&data).unwrap();
            }
        }
        let chunk = dir.join("00000001.chunk");
        let copy = base.join(format!("{kind}-copy.chunk"));
        std::fs::rename(&chunk, &copy).unwrap();
        match kind {
            "symlink" => std::os::unix::fs::symlink(&copy, &chunk).unwrap(),
            "directory" => std::fs::create_dir(&chunk).unwrap(),
            _ => assert!(
                std::process::Command::new("mkfifo")
                    .arg(&chunk)
                    .status()
                    .unwrap()
                    .success()
            ),
        }
        let (tx, rx) = mpsc::channel();
        let d = dir.clone();
        std::thread::spawn(move || {
            let mut sc = OpenOptions::new().read_only(true).open(&d).unwrap();
            let r = (0..3)
                .map(|i| sc.decompress_chunk_vec(i))
                .collect::<Vec<_>>();
            let _ = tx.send(r);
        });
        let r = rx
            .recv_timeout(std::time::Duration::from_secs(20))
            .unwrap_or_else(|_| panic!("{kind}: the read waited (or panicked)"));
        assert_eq!(r[0].as_ref().unwrap(), &data, "{kind}: chunk 0");
        assert_eq!(r[2].as_ref().unwrap(), &data, "{kind}: chunk 2");
        let e = r[1].as_ref().unwrap_err();
        assert!(matches!(e, oxiblosc::Error::Corrupt(_)), "{kind}: {e}");
        let msg = e.to_string();
        assert!(
            msg.contains("00000001.chunk") && msg.contains("not a regular file"),
            "{kind}: {msg}"
        );
    }
    let _ = std::fs::remove_dir_all(&base);
}

/// A metalayer or vlmetalayer name is a C string to C-Blosc2, which reads
/// the bytes up to the first NUL as the name. A frame whose trailer names
/// a vlmetalayer `"a\0b"` (and whose header names a metalayer `"mx\0"`)
/// reads so here too: the names are `"a"` and `"mx"`, found by those names,
/// as C finds them. The C ABI listed the first such name (found by
/// capi_frame, session 44) and did not find it by the name it listed. A
/// name with a NUL is refused when added.
#[test]
fn names_end_at_their_first_nul_as_in_c() {
    let mut sc = SChunk::new(oxiblosc::CParams::default()).unwrap();
    sc.meta_add("mxy", b"\x01\x02").unwrap();
    sc.append_buffer(&[5u8; 100]).unwrap();
    sc.vlmeta_set("abc", b"value").unwrap();
    let mut frame = sc.to_cframe().unwrap();
    let patch = |frame: &mut Vec<u8>, from: &[u8], to: &[u8]| {
        let at = frame
            .windows(from.len())
            .position(|w| w == from)
            .expect("the name in the frame");
        frame[at..at + to.len()].copy_from_slice(to);
    };
    patch(&mut frame, b"\xa3abc", b"\xa3a\0b");
    patch(&mut frame, b"\xa3mxy", b"\xa3mx\0");
    let mut back = SChunk::from_cframe(frame).unwrap();
    assert_eq!(back.vlmeta_names(), ["a"]);
    assert_eq!(
        back.vlmeta_get("a").unwrap().as_deref(),
        Some(&b"value"[..])
    );
    assert_eq!(back.metalayers()[0].name, "mx");
    assert_eq!(back.meta_get("mx"), Some(&b"\x01\x02"[..]));
    for bad in ["a\0b", "\0"] {
        assert!(matches!(
            back.vlmeta_set(bad, b"x"),
            Err(oxiblosc::Error::InvalidParam(_))
        ));
    }
    let mut empty = SChunk::new(oxiblosc::CParams::default()).unwrap();
    assert!(matches!(
        empty.meta_add("m\0", b"x"),
        Err(oxiblosc::Error::InvalidParam(_))
    ));
}
