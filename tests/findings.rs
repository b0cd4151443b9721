//! Regression tests for the inputs fuzzing found (tests/data/findings, a
//! copy of the shared findings folder; its README says how each was found).
//! Every input ends in `Ok` with the right data or a clear `Err`: no panic,
//! no abort, no allocation beyond what the input's length justifies.

#[path = "../fuzz/fuzz_targets/sframe_input.rs"]
mod sframe_input;
mod support;
use std::path::{Path, PathBuf};
use support::counting;

use oxiblosc::schunk::{OpenOptions, SChunk};
use oxiblosc::{CParams, ChunkFormat, Codec, DParams, Decompressor, Filter, SplitMode};

#[global_allocator]
static GLOBAL: counting::Counting = counting::Counting;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/findings")
}

fn finding(name: &str) -> Vec<u8> {
    std::fs::read(dir().join(name)).unwrap()
}

/// The frames the `cframe_mut` fuzz target was fed start after a 4-byte
/// prefix (its choice of operations).
fn mut_frame(name: &str) -> Vec<u8> {
    finding(name)[4..].to_vec()
}

/// A small valid chunk for edits.
fn small_chunk(n: usize) -> Vec<u8> {
    let data: Vec<u8> = (0..n).map(|i| (i % 251) as u8).collect();
    oxiblosc::compress(&data, &CParams::default().typesize(1)).unwrap()
}

/// Run `f`, asserting its largest allocation on this thread stays under `bound`.
fn bounded<T>(what: &str, bound: usize, f: impl FnOnce() -> T) -> T {
    counting::reset_largest();
    let r = f();
    let largest = counting::largest();
    assert!(
        largest <= bound,
        "{what}: allocated {largest} bytes (bound {bound})"
    );
    r
}

/// Whether a frame written by an edit reopens and reads back.
fn reopens(bytes: Vec<u8>, what: &str) {
    let mut sc = SChunk::from_cframe(bytes).unwrap_or_else(|e| panic!("{what}: no reopen: {e}"));
    for i in 0..sc.nchunks().min(16) {
        let _ = sc.decompress_chunk_vec(i);
    }
}

#[test]
fn cframe_1_dead_bytes_does_not_overflow() {
    for name in ["cframe-1.bin", "cframe-1b-dup-offsets.b2frame"] {
        if let Ok(sc) = SChunk::from_cframe(finding(name)) {
            let dead = sc.dead_bytes();
            assert!(dead <= sc.frame_header().frame_len, "{name}: {dead}");
        }
    }
}

#[test]
fn cframe_1_edits_do_not_allocate_by_header() {
    for name in ["cframe-1.bin", "cframe-1b-dup-offsets.b2frame"] {
        let bytes = finding(name);
        let bound = (1 << 20) + 16 * bytes.len();
        bounded(name, bound, || {
            if let Ok(mut sc) = SChunk::from_cframe(bytes.clone())
                && sc.append_buffer(&[1u8; 64]).is_ok()
            {
                reopens(sc.to_cframe().unwrap(), name);
            }
            if let Ok(mut sc) = SChunk::from_cframe(bytes.clone())
                && sc.insert_chunk(0, &small_chunk(64)).is_ok()
            {
                reopens(sc.to_cframe().unwrap(), name);
            }
        });
    }
}

#[test]
fn roundtrip_1_always_split_with_block_smaller_than_typesize() {
    let data = finding("roundtrip-1.bin");
    let codecs = [
        Codec::BloscLz,
        Codec::Lz4,
        Codec::Lz4Hc,
        Codec::Zlib,
        Codec::Zstd,
    ];
    for format in [ChunkFormat::Blosc2, ChunkFormat::Blosc1] {
        for codec in codecs {
            for ts in [2usize, 3, 4, 7, 8, 16, 33] {
                for bs in [1usize, 2, 3, 5, 7, 15] {
                    for filters in [&[][..], &[Filter::Shuffle][..]] {
                        let p = CParams::default()
                            .codec(codec)
                            .typesize(ts)
                            .blocksize(bs)
                            .splitmode(SplitMode::Always)
                            .filters(filters)
                            .format(format);
                        for len in [data.len(), 200] {
                            let src: Vec<u8> = data.iter().cycle().take(len).copied().collect();
                            let what = format!("{format:?} {codec:?} ts {ts} bs {bs} {filters:?}");
                            let chunk = oxiblosc::compress(&src, &p)
                                .unwrap_or_else(|e| panic!("{what}: {e}"));
                            let back = oxiblosc::decompress(&chunk)
                                .unwrap_or_else(|e| panic!("{what}: {e}"));
                            assert_eq!(back, src, "{what}");
                        }
                    }
                }
            }
        }
    }
}

fn copy_dir(from: &Path, to: &Path) {
    let _ = std::fs::remove_dir_all(to);
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
}

fn tmp(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("findings-{name}-{}", std::process::id()))
}

#[test]
fn sframe_1_to_cframe_never_writes_a_frame_that_does_not_reopen() {
    let d = tmp("sframe-1");
    copy_dir(&dir().join("sframe-1.dir"), &d);
    if let Ok(mut sc) = OpenOptions::new().read_only(true).open(&d)
        && let Ok(frame) = sc.to_cframe()
    {
        reopens(frame, "sframe-1 to_cframe");
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// Every edit at every position: an edit that succeeds leaves a frame that
/// reopens.
fn every_edit_reopens(bytes: &[u8], what: &str) {
    let chunk = small_chunk(64);
    let Ok(sc) = SChunk::from_cframe(bytes.to_vec()) else {
        return;
    };
    let n = sc.nchunks();
    drop(sc);
    // Compressing the appended chunk may warm a codec context.
    let bound = (1 << 20) + 16 * bytes.len();
    for i in 0..=n.min(8) {
        type Edit = Box<dyn Fn(&mut SChunk) -> oxiblosc::Result<()>>;
        let c = chunk.clone();
        let edits: Vec<(&str, Edit)> = vec![
            ("insert", Box::new(move |sc| sc.insert_chunk(i, &c))),
            (
                "append",
                Box::new(|sc| sc.append_buffer(&[9u8; 64]).map(|_| ())),
            ),
            ("update", {
                let c = chunk.clone();
                Box::new(move |sc| sc.update_chunk(i, &c))
            }),
            ("delete", Box::new(move |sc| sc.delete_chunk(i))),
        ];
        for (name, edit) in edits {
            let what = format!("{what}: {name} at {i}");
            bounded(&what, bound, || {
                let mut sc = SChunk::from_cframe(bytes.to_vec()).unwrap();
                if edit(&mut sc).is_ok() {
                    reopens(sc.to_cframe().unwrap(), &what);
                }
            });
        }
    }
}

#[test]
fn cframe_mut_1_insert_writes_a_frame_that_reopens() {
    every_edit_reopens(&mut_frame("cframe_mut-1.bin"), "cframe_mut-1");
}

#[test]
fn cframe_mut_2_edits_do_not_allocate_by_header() {
    every_edit_reopens(&mut_frame("cframe_mut-2-oom.bin"), "cframe_mut-2");
}

fn probe(name: &str) -> Vec<u8> {
    finding(&format!("oom-probes/{name}"))
}

/// A few KB plus a small multiple of the input.
fn small_bound(input: usize) -> usize {
    64 * 1024 + 64 * input
}

#[test]
fn oom_probe_chunks_fail_fast() {
    for name in ["chunk-filter-fail.b2", "chunk-hdr-only.b2"] {
        let bytes = probe(name);
        for nthreads in [1, 2, 8] {
            let what = format!("{name} with {nthreads} threads");
            bounded(&what, small_bound(bytes.len()), || {
                let mut d = Decompressor::new(DParams::default().nthreads(nthreads));
                assert!(d.decompress(&bytes).is_err(), "{what}");
                let mut out = vec![0u8; 4096];
                assert!(d.decompress_into(&bytes, &mut out).is_err(), "{what}");
                assert!(d.getitem(&bytes, 0, 16).is_err(), "{what}");
                assert!(oxiblosc::chunk::validate(&bytes).is_err(), "{what}");
            });
        }
    }
}

#[test]
fn oom_probe_zero_runs_can_be_capped() {
    let bytes = probe("chunk-zero-runs.b2");
    // The format allows 72 bytes to stand for 2 GB of zeros: a caller caps it.
    let h = oxiblosc::ChunkHeader::parse(&bytes).unwrap();
    assert!(h.nbytes > 1 << 30);
    bounded("zero runs, capped", small_bound(bytes.len()), || {
        let mut d = Decompressor::new(DParams::default().max_output(1 << 20));
        let e = d.decompress(&bytes).unwrap_err();
        assert!(e.to_string().contains("limit"), "{e}");
        // getitem decodes whole blocks: a 512 MiB block is over the limit too.
        assert!(d.getitem(&bytes, 0, 4).is_err());
    });
    let mut small = vec![0u8; 1 << 20];
    bounded("zero runs, capped, into", small_bound(bytes.len()), || {
        let mut d = Decompressor::new(DParams::default().max_output(1 << 20));
        assert!(d.decompress_into(&bytes, &mut small).is_err());
    });
}

#[test]
fn oom_probe_frame_tdecomp_is_capped() {
    let bytes = probe("frame-tdecomp.b2frame");
    // tdecomp = 256 is reported as recorded, but no more threads than the
    // machine has are started, each with its scratch.
    bounded("tdecomp frame", small_bound(bytes.len()), || {
        let mut sc = SChunk::from_cframe(bytes.clone()).unwrap();
        assert_eq!(sc.dparams().nthreads, 256);
        for i in 0..sc.nchunks() {
            let _ = sc.decompress_chunk_vec(i);
        }
    });
}

#[test]
fn oom_probe_huge_nchunks_get_slice() {
    let bytes = probe("frame-huge-nchunks.b2frame");
    bounded("huge nchunks", small_bound(bytes.len()) + (1 << 20), || {
        // 2^58 bytes of zero chunks (index codes): a start is readable
        // without materialising a whole chunk, and a caller caps the rest.
        let mut sc = SChunk::from_cframe(bytes.clone()).unwrap();
        let nb = sc.nbytes();
        assert_eq!(sc.get_slice(0, 4096).unwrap(), vec![0u8; 4096]);
        assert_eq!(sc.get_slice(nb - 10, nb).unwrap(), vec![0u8; 10]);
        sc.set_dparams(DParams::default().max_output(1 << 20));
        assert!(sc.get_slice(0, nb).is_err());
        assert!(sc.get_slice(nb / 2, nb).is_err());
    });
}

/// A sparse frame in `d` of two chunk files (100 bytes of 1, 100 of 2)
/// whose index has `n` entries naming them in turn, 0, 1, 0, 1, ... (an
/// explicit index: all zeros would be a repeated one).
fn sframe_sharing_two_files(d: &Path, n: usize) {
    use oxiblosc::frame::{self, Frame};
    let _ = std::fs::remove_dir_all(d);
    let mut sc = SChunk::builder()
        .cparams(CParams::default().typesize(1))
        .fsync(false)
        .create_dir(d)
        .unwrap();
    sc.append_buffer(&[1u8; 100]).unwrap();
    sc.append_buffer(&[2u8; 100]).unwrap();
    drop(sc);
    let index_path = d.join("chunks.b2frame");
    let old = std::fs::read(&index_path).unwrap();
    let f = Frame::parse(&old).unwrap();
    let mut h = f.header.clone();
    let entries: Vec<i64> = (0..n as i64).map(|i| i % 2).collect();
    let index = frame::encode_index(&entries).unwrap();
    let hl = h.header_len as usize;
    let mut new = old[..hl].to_vec();
    new.extend_from_slice(&index);
    new.extend_from_slice(&old[old.len() - f.trailer_len as usize..]);
    h.frame_len = new.len() as u64;
    h.nbytes = 100 * n as i64;
    new[..frame::HEADER_FIXED_LEN].copy_from_slice(&h.encode_fixed());
    assert!(new.len() < 1 << 20, "{}", new.len());
    std::fs::write(&index_path, &new).unwrap();
}

/// A sparse frame whose index is at the decode limit (8 Mi entries, all
/// naming chunk files 0 and 1): opening it looks at that file once, not once per
/// entry (5.9 s before).
#[test]
fn sframe_index_at_the_limit_opens_quickly() {
    let d = tmp("sframe-limit");
    let n = oxiblosc::frame::MIN_INDEX_DECODE_LIMIT / 8;
    sframe_sharing_two_files(&d, n);
    let t = std::time::Instant::now();
    let sc = OpenOptions::new().read_only(true).open(&d).unwrap();
    let took = t.elapsed();
    assert_eq!(sc.nchunks(), n);
    eprintln!("open took {took:?}");
    assert!(took.as_secs_f64() < 3.0, "open took {took:?}");
    let _ = std::fs::remove_dir_all(&d);
}

/// `to_cframe` of a sparse frame whose 1 Mi entries name two chunk files
/// stores each file once, the entries sharing it; it made a copy per entry
/// (`sframe_read` found an input of a few kilobytes whose frame grew past
/// 1.5 GB). Its largest allocation is the index (8 bytes an entry), and
/// the frame reopens with the same chunks.
#[test]
fn sframe_to_cframe_stores_a_shared_chunk_file_once() {
    let d = tmp("sframe-shared");
    let n = 1 << 20;
    sframe_sharing_two_files(&d, n);
    let mut sc = OpenOptions::new().read_only(true).open(&d).unwrap();
    let frame = bounded("to_cframe", 12 * n, || sc.to_cframe().unwrap());
    assert!(frame.len() < 1 << 20, "{} bytes", frame.len());
    let mut back = SChunk::from_cframe(frame).unwrap();
    assert_eq!(back.nchunks(), n);
    for i in [0, 1, 2, n - 2, n - 1] {
        let want = vec![1 + (i % 2) as u8; 100];
        assert_eq!(back.decompress_chunk_vec(i).unwrap(), want, "chunk {i}");
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// The `sframe_read` fuzz target's layout (`fuzz/fuzz_targets/sframe_input.rs`),
/// written into the new directory `d`.
fn unpack_sframe_input(data: &[u8], d: &Path) {
    let _ = std::fs::remove_dir_all(d);
    std::fs::create_dir_all(d).unwrap();
    assert!(
        sframe_input::lay_out(data, d).unwrap(),
        "a finding of 9 bytes or more"
    );
}

/// `fuzz-sframe_read-1.bin`: a 1,038-byte sparse frame whose index names
/// the same few chunk files over and over; `to_cframe` copied a file per
/// entry and went past libFuzzer's 2 GiB (one 1.5 GB buffer). Now each file
/// is stored once, and nothing it allocates is larger than the index.
#[test]
fn fuzz_sframe_read_1_to_cframe_stays_small() {
    let d = tmp("fuzz-sframe_read-1");
    unpack_sframe_input(&finding("fuzz-sframe_read-1.bin"), &d);
    let mut sc = OpenOptions::new().read_only(true).open(&d).unwrap();
    let n = sc.nchunks();
    eprintln!("{n} index entries");
    let frame = bounded("to_cframe", 12 * n + (1 << 20), || sc.to_cframe());
    if let Ok(frame) = frame {
        eprintln!("frame of {} bytes", frame.len());
        reopens(frame, "fuzz-sframe_read-1 to_cframe");
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// `oxiblosc decompress` of a 72-byte chunk claiming 2^31 - 33 bytes, or
/// of a frame holding it, fails fast with a clear message, under a 256 MB
/// address-space limit (it peaked at 2 GiB before).
#[test]
fn cli_decompress_of_a_tiny_chunk_claiming_2_gib_fails_fast() {
    let Some(bin) = option_env!("CARGO_BIN_EXE_oxiblosc") else {
        return; // built without the `cli` feature
    };
    for name in [
        "chunk-filter-fail.b2",
        "chunk-hdr-only.b2",
        "frame-tdecomp.b2frame",
    ] {
        let input = dir().join("oom-probes").join(name);
        let out = tmp(&format!("cli-{name}.out"));
        let script = format!(
            "ulimit -v 262144; exec '{bin}' decompress '{}' '{}'",
            input.display(),
            out.display()
        );
        let t = std::time::Instant::now();
        let r = std::process::Command::new("sh")
            .arg("-c")
            .arg(&script)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&r.stderr);
        assert_eq!(r.status.code(), Some(1), "{name}: {:?} {stderr}", r.status);
        assert!(stderr.contains("cannot decompress"), "{name}: {stderr}");
        assert!(t.elapsed().as_secs() < 10);
        let _ = std::fs::remove_file(&out);
    }
}

/// Found by the cframe_edit fuzz target: a sparse frame's index file (frame
/// type 1) held in memory was taken as a contiguous frame; appending wrote a
/// frame that did not reopen. `from_cframe` refuses sparse frames now.
#[test]
fn fuzz_cframe_edit_1_sparse_index_is_not_a_cframe() {
    let bytes = mut_frame("fuzz-cframe_edit-1.bin");
    assert!(oxiblosc::Frame::parse(&bytes).is_ok());
    let e = SChunk::from_cframe(bytes.clone()).unwrap_err();
    assert!(e.to_string().contains("sparse"), "{e}");
    every_edit_reopens(&bytes, "fuzz-cframe_edit-1");
}

/// `fuzz-sframe_read-2.bin`: a sparse frame of variable-size chunks whose
/// five entries all name one chunk file. `to_cframe` (sharing the file)
/// writes an index of five equal offsets, which the reader takes as a
/// repeated index and counted as holding no bytes: the frame did not
/// reopen ("chunks hold 0 bytes, the header says 60000"). It reopens with
/// the same chunks (or the same errors for them).
#[test]
fn fuzz_sframe_read_2_shared_file_frame_reopens() {
    let d = tmp("fuzz-sframe_read-2");
    unpack_sframe_input(&finding("fuzz-sframe_read-2.bin"), &d);
    let mut sc = OpenOptions::new().read_only(true).open(&d).unwrap();
    let n = sc.nchunks();
    assert_eq!(n, 5);
    let frame = sc.to_cframe().unwrap();
    let mut back = SChunk::from_cframe(frame).unwrap();
    assert_eq!((back.nchunks(), back.nbytes()), (n, sc.nbytes()));
    for i in 0..n {
        // (Its chunk names a filter this build refuses: the same answer.)
        let err = |e: oxiblosc::Error| e.to_string();
        assert_eq!(
            back.decompress_chunk_vec(i).map_err(err),
            sc.decompress_chunk_vec(i).map_err(err)
        );
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// A sparse frame whose 204-byte index is one chunk file repeated
/// 73,400,325 times, in a frame of variable-size chunks holding 60,000
/// bytes: `to_cframe` expanded the index entry by entry (3.7 s, and
/// hundreds of megabytes) before finding that the chunks hold 880 GB; the
/// fuzz target timed out. A repeated index now stays repeated in the
/// cframe, and the sizes are checked at once (found by `sframe_read`,
/// session 18).
#[test]
fn fuzz_sframe_read_4_repeated_index_to_cframe_is_immediate() {
    let d = tmp("fuzz-sframe_read-4");
    unpack_sframe_input(&finding("fuzz-sframe_read-4.bin"), &d);
    let mut sc = OpenOptions::new().read_only(true).open(&d).unwrap();
    assert_eq!(sc.nchunks(), 73_400_325);
    let r = bounded("to_cframe", 1 << 20, || sc.to_cframe());
    assert!(
        matches!(&r, Err(oxiblosc::Error::Corrupt(m)) if m.contains("880803900000")),
        "{r:?}"
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// `oxiblosc info` of the same 73,400,325-entry sparse frame: the listing
/// is written chunk by chunk, so a reader that takes the first lines
/// (`| head -3`) gets them at once and the command ends quietly when it
/// goes; under a 256 MB address-space limit (it built the whole listing,
/// gigabytes, in memory first: nothing came out in 20 s).
#[test]
fn cli_info_of_millions_of_chunks_streams() {
    let Some(bin) = option_env!("CARGO_BIN_EXE_oxiblosc") else {
        return; // built without the `cli` feature
    };
    let d = tmp("cli-info-sframe");
    unpack_sframe_input(&finding("fuzz-sframe_read-4.bin"), &d);
    for flag in ["", "--json"] {
        let script = format!(
            "ulimit -v 262144; '{bin}' info {flag} '{}' | head -c 2000; echo \"rc=${{PIPESTATUS[0]}}\"",
            d.display()
        );
        let r = std::process::Command::new("bash")
            .arg("-c")
            .arg(&script)
            .output()
            .unwrap();
        let out = String::from_utf8_lossy(&r.stdout);
        assert!(out.contains("73400325"), "{flag}: {out}");
        assert!(
            out.trim_end().ends_with("rc=0"),
            "{flag}: {out} {}",
            String::from_utf8_lossy(&r.stderr)
        );
        assert!(
            r.stderr.is_empty(),
            "{flag}: {}",
            String::from_utf8_lossy(&r.stderr)
        );
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// A sparse frame whose header declares far more bytes (about 1.4e16)
/// than its chunks hold: a slice inside the declared size but past the
/// chunks returned `Ok` with fewer bytes than asked for (0 of 4,096); it is
/// an error now (found by `sframe_read`, session 11).
#[test]
fn fuzz_sframe_read_3_slice_past_the_chunks_is_an_error() {
    let d = tmp("fuzz-sframe_read-3");
    unpack_sframe_input(&finding("fuzz-sframe_read-3.bin"), &d);
    let mut sc = OpenOptions::new().read_only(true).open(&d).unwrap();
    let nb = sc.nbytes();
    let (a, b) = (nb / 2, nb.min(nb / 2 + 4096));
    assert_eq!(b - a, 4096);
    let err = sc.get_slice(a, b).unwrap_err();
    assert!(matches!(err, oxiblosc::Error::Corrupt(_)), "{err}");
    let mut buf = vec![0u8; 4096];
    assert!(sc.get_slice_into(a, b, &mut buf).is_err());
    let _ = std::fs::remove_dir_all(&d);
}

/// An NDArray frame whose header records a block size (8,200 bytes) other
/// than its block shape's (8,192): `ndarray::set_slice` compressed the
/// chunks it rewrote with the header's block size, and the array no longer
/// opened ("chunk 0 has blocks of 8200 bytes, the b2nd metalayer's are
/// 8192"). Edits now write blocks of the block shape (found by
/// `ndarray_read`, session 17).
#[test]
fn fuzz_ndarray_read_1_set_slice_keeps_the_block_shape() {
    use oxiblosc::ndarray::{self, NdArray};
    let bytes = finding("fuzz-ndarray_read-1.bin");
    let sc = OpenOptions::new().from_cframe(bytes).unwrap();
    assert_ne!(sc.cparams().blocksize, 8192);
    let mut a = NdArray::open(sc).unwrap();
    assert_eq!(a.layout().block_nbytes(), 8192);
    let all = a.to_vec().unwrap();
    let meta = a.meta().clone();
    let mut sc = a.into_schunk();
    let zeros = vec![0u64; meta.ndim()];
    ndarray::set_slice(&mut sc, &meta, &zeros, &meta.shape, &all, &meta.shape).unwrap();
    let frame = sc.to_cframe().unwrap();
    let mut again = NdArray::open(SChunk::from_cframe(frame).unwrap()).unwrap();
    assert!(again.to_vec().unwrap() == all);
}

/// An NDArray frame whose header records blocks of 8,320 bytes, the block
/// shape 8,192: grown by `ndarray::resize`, its new all-zero chunks are
/// special index entries, which read back with the header's block size, and
/// `NdArray` refused them ("chunk 9 has blocks of 8320 bytes"). A special
/// chunk has no blocks to decode: the check is for stored chunks only
/// (found by `ndarray_read`, session 17).
#[test]
fn fuzz_ndarray_read_2_grown_zero_chunks_read() {
    use oxiblosc::ndarray::{self, NdArray};
    let bytes = finding("fuzz-ndarray_read-2.bin");
    let sc = OpenOptions::new().from_cframe(bytes).unwrap();
    let mut a = NdArray::open(sc).unwrap();
    let all = a.to_vec().unwrap();
    let mut meta = a.meta().clone();
    let mut sc = a.into_schunk();
    let old = meta.shape.clone();
    let mut grown = old.clone();
    grown[0] += meta.chunkshape[0];
    ndarray::resize(&mut sc, &mut meta, &grown, None).unwrap();
    let mut a = NdArray::open(SChunk::from_cframe(sc.to_cframe().unwrap()).unwrap()).unwrap();
    let v = a.to_vec().unwrap();
    assert!(v[..all.len()] == all[..]);
    assert!(v[all.len()..].iter().all(|&b| b == 0));
}

/// An NDArray frame with a repeated-value chunk whose header records blocks
/// of 8,251 bytes (the array's are 8,192; both make 16 blocks):
/// `ndarray::get_slice` of the box `[0, 255]..[208, 286]` applied the mask
/// made for the array's blocks to the chunk's and read skipped bytes. Such
/// a chunk is decoded whole now (found by `ndarray_read`, session 17, once
/// `NdArray` read special chunks of any block size).
#[test]
fn fuzz_ndarray_read_3_box_over_a_chunk_of_other_blocks() {
    use oxiblosc::ndarray::{self, NdArray};
    let bytes = finding("fuzz-ndarray_read-3.bin");
    let sc = OpenOptions::new()
        .read_only(true)
        .from_cframe(bytes)
        .unwrap();
    let mut a = NdArray::open(sc).unwrap();
    let all = a.to_vec().unwrap();
    let meta = a.meta().clone();
    assert_eq!(meta.shape, [300, 300]);
    let (start, stop) = ([0u64, 255], [208u64, 286]);
    let bshape = [208u64, 31];
    let mut got = vec![0u8; 208 * 31 * 8];
    ndarray::get_slice(a.schunk(), &meta, &start, &stop, &mut got, &bshape).unwrap();
    for (r, row) in got.chunks_exact(31 * 8).enumerate() {
        let at = (r * 300 + 255) * 8;
        assert!(row == &all[at..at + 31 * 8], "row {r}");
    }
}

/// A frame whose offsets index is one repeated value naming a stored
/// 36-byte chunk (five entries, one chunk): its live compressed bytes were
/// counted as 0, so after an append the super-chunk (and the C ABI's
/// `schunk->cbytes`) said 56 bytes while the frame it wrote held 92 (found
/// by `capi_frame` once it edits, session 17).
#[test]
fn fuzz_capi_frame_2_repeated_index_counts_its_chunk() {
    let bytes = finding("fuzz-capi_frame-2.bin");
    let mut sc = OpenOptions::new().from_cframe(bytes).unwrap();
    assert_eq!(sc.nchunks(), 5);
    let stored = sc.chunk_info(0).unwrap().cbytes as u64;
    assert_eq!(sc.cbytes(), stored);
    let cs = sc.chunksize().unwrap();
    sc.append_buffer(&vec![1u8; cs]).unwrap();
    let again = SChunk::from_cframe(sc.to_cframe().unwrap()).unwrap();
    assert_eq!(
        (again.nchunks(), again.cbytes()),
        (sc.nchunks(), sc.cbytes())
    );
}

/// An NDArray frame whose header records `tcomp` 33: `ndarray::set_slice`
/// and `resize` compressed with `SChunk::cparams`, which reports that count
/// as it is, and started a pool of 33 threads (each with its codec states;
/// a pool per count, kept, up to 256 threads for `tcomp` 4,099): the ASan
/// fuzzer ran out of memory. They compress with
/// `SChunk::compress_params`, whose thread count is capped to the machine's
/// (found by `ndarray_read`, session 17).
#[test]
fn fuzz_ndarray_read_4_edits_run_the_capped_thread_count() {
    use oxiblosc::ndarray::{self, NdArray};
    let bytes = finding("fuzz-ndarray_read-4.bin");
    let sc = OpenOptions::new().from_cframe(bytes).unwrap();
    let cores = std::thread::available_parallelism().unwrap().get();
    assert_eq!(sc.cparams().nthreads, 33);
    assert_eq!(sc.compress_params().nthreads, 33.min(cores));
    let mut a = NdArray::open(sc).unwrap();
    let all = a.to_vec().unwrap();
    let meta = a.meta().clone();
    let mut sc = a.into_schunk();
    let zeros = vec![0u64; meta.ndim()];
    ndarray::set_slice(&mut sc, &meta, &zeros, &meta.shape, &all, &meta.shape).unwrap();
    assert!(NdArray::open(sc).unwrap().to_vec().unwrap() == all);
}

/// `fuzz-sframe_read-5.bin`: a sparse frame whose header says 60,000 bytes
/// in variable-size chunks and whose offsets index lists none. It opened
/// (with no chunks), and the `sframe_read` target's edits then wrote it
/// back with its nbytes and no index at all: after `reorder_chunks(&[])`
/// it no longer opened ("offsets index: 0 bytes, less than a chunk
/// header"). Such a frame is refused when opened, read-only or writable
/// (the check is in the index reader both frame kinds share; found by
/// `sframe_read`, session 26).
#[test]
fn fuzz_sframe_read_5_bytes_in_no_chunk_are_refused() {
    let d = tmp("fuzz-sframe_read-5");
    unpack_sframe_input(&finding("fuzz-sframe_read-5.bin"), &d);
    for read_only in [true, false] {
        let e = OpenOptions::new()
            .read_only(read_only)
            .open(&d)
            .unwrap_err();
        assert!(
            matches!(&e, oxiblosc::Error::Corrupt(m) if m.contains("60000 bytes and the offsets index lists no chunk")),
            "{e}"
        );
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// A file store that counts the files opened through it and refuses any
/// after `limit` (so that a read that opens a file per index entry fails
/// fast instead of running for minutes).
struct OpenLimit {
    opens: std::sync::atomic::AtomicUsize,
    limit: usize,
}

impl oxiblosc::frame::io::FileStore for OpenLimit {
    fn open(
        &self,
        path: &Path,
        mode: oxiblosc::frame::io::OpenMode,
    ) -> std::io::Result<Box<dyn oxiblosc::frame::FrameIo>> {
        let n = self
            .opens
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if n >= self.limit {
            return Err(std::io::Error::other("over the test's limit of opens"));
        }
        oxiblosc::frame::io::StdFileStore.open(path, mode)
    }
    fn remove_file(&self, path: &Path) -> std::io::Result<()> {
        oxiblosc::frame::io::StdFileStore.remove_file(path)
    }
    fn rename(&self, from: &Path, to: &Path) -> std::io::Result<()> {
        oxiblosc::frame::io::StdFileStore.rename(from, to)
    }
    fn can_rename(&self) -> bool {
        oxiblosc::frame::io::StdFileStore.can_rename()
    }
    fn create_dir(&self, path: &Path) -> std::io::Result<()> {
        oxiblosc::frame::io::StdFileStore.create_dir(path)
    }
}

/// `fuzz-sframe_read-6.bin` unpacked into directory `tag` and opened
/// read-only through a store that counts its opens (at most 10,000).
fn open_sframe_6(tag: &str) -> (PathBuf, std::sync::Arc<OpenLimit>, SChunk) {
    let d = tmp(tag);
    unpack_sframe_input(&finding("fuzz-sframe_read-6.bin"), &d);
    let store = std::sync::Arc::new(OpenLimit {
        opens: Default::default(),
        limit: 10_000,
    });
    let sc = OpenOptions::new()
        .read_only(true)
        .store(store.clone())
        .open(&d)
        .unwrap();
    (d, store, sc)
}

/// `fuzz-sframe_read-6.bin`: a 2,020-byte sparse frame of chunks of any
/// size whose offsets index is one value repeated 14,680,070 times (every
/// entry names chunk file 0, of 800 bytes), under a header claiming far
/// more bytes than that. Slicing past the chunks read the chunk file once
/// per entry to learn its size: 156 s under ASan (`sframe_read`, session
/// 27, a timeout). Entries that repeat the last one reuse its size; the
/// slice fails as before, having opened a handful of files.
#[test]
fn fuzz_sframe_read_6_repeated_entries_are_read_once() {
    let (d, store, mut sc) = open_sframe_6("fuzz-sframe_read-6");
    assert_eq!(sc.nchunks(), 14_680_070);
    assert_eq!(sc.chunk_nbytes(0).unwrap(), 800);
    let nb = sc.nbytes();
    let e = sc.get_slice(nb / 2, nb / 2 + 4096).unwrap_err();
    assert!(
        matches!(&e, oxiblosc::Error::Corrupt(m) if m.contains("the chunks end at byte 11744056000")),
        "{e}"
    );
    // A slice inside the chunks reads them: the chunk's own error (its
    // filter byte is not one the library has).
    let e0 = sc.decompress_chunk_vec(0).unwrap_err().to_string();
    assert!(e0.contains("filter id 5"), "{e0}");
    assert_eq!(sc.get_slice(1000, 3000).unwrap_err().to_string(), e0);
    // The entries before a slice are passed over as one run, not one by
    // one: a slice that starts in the last of them reaches it (the chunk's
    // own error), one that starts where they end reaches none.
    let end = 14_680_070u64 * 800;
    assert_eq!(sc.get_slice(end - 10, end).unwrap_err().to_string(), e0);
    assert_eq!(
        sc.get_slice(end - 800, end - 799).unwrap_err().to_string(),
        e0
    );
    let e = sc.get_slice(end, end + 1).unwrap_err().to_string();
    assert!(
        e.contains(&format!("{end}..{}: the chunks end at byte {end}", end + 1)),
        "{e}"
    );
    let opens = store.opens.load(std::sync::atomic::Ordering::Relaxed);
    assert!(opens < 100, "{opens} files opened");
    let _ = std::fs::remove_dir_all(&d);
}

/// `oxiblosc info` on the same 1.4 KB sparse frame listed one row per index
/// entry: 14.7 M rows, 95 s. The entries are one entry repeated, and a run
/// of them is one row (`SChunk::entry_run`), in text and in JSON.
#[cfg(feature = "cli")]
#[test]
fn fuzz_sframe_read_6_info_lists_the_repeated_entry_once() {
    let d = tmp("fuzz-sframe_read-6-info");
    unpack_sframe_input(&finding("fuzz-sframe_read-6.bin"), &d);
    let sc = OpenOptions::new().read_only(true).open(&d).unwrap();
    assert_eq!(sc.entry_run(0), 14_680_070);
    assert_eq!(sc.entry_run(14_680_069), 1);
    drop(sc);
    let info = |json: bool| {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_oxiblosc"));
        cmd.arg("info");
        if json {
            cmd.arg("--json");
        }
        let o = cmd.arg(&d).output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout).unwrap()
    };
    let text = info(false);
    let rows: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("chunk "))
        .collect();
    assert_eq!(
        rows[1..],
        [
            "         0          800          566     1.41  -",
            "       ...  chunks 0 to 14680069 (14680070) share this index entry",
        ],
        "{text}"
    );
    let mut v: serde_json::Value = serde_json::from_str(&info(true)).unwrap();
    assert_eq!(v["nchunks"], 14_680_070u64);
    // serde_json's default parser may be one unit in the last place off.
    let ratio = v["chunks"][0]["ratio"].take().as_f64().unwrap();
    assert!((ratio - 800.0 / 566.0).abs() < 1e-12, "{ratio}");
    assert_eq!(
        v["chunks"],
        serde_json::json!([{"index": 0, "count": 14_680_070u64, "nbytes": 800, "cbytes": 566,
            "ratio": null, "special": null}])
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// Found by an audit (session 29): the 1.4 KB sparse frame of
/// `fuzz-sframe_read-6.bin` names one chunk file
/// (800 bytes, type size 2) 14.7 million times, with a header size past
/// the chunks' end. `get_slice` passes over such a run at once; `read_items`
/// read the size of every chunk before its range, a file open each: 7.3
/// million for a read from the middle (over a minute), and a read between
/// the chunks' end and the header's size visited all of them, then
/// returned `Ok` with `out` as it was.
#[test]
fn read_items_passes_over_repeated_index_entries_at_once() {
    let (d, store, mut sc) = open_sframe_6("fuzz-sframe_read-6-read-items");
    assert_eq!((sc.nchunks(), sc.typesize()), (14_680_070, 2));
    let end = 14_680_070u64 * 800;
    assert!(sc.nbytes() > end);
    // The chunk's own error (a filter the library does not have), as
    // `get_slice` gives it.
    let e0 = sc.decompress_chunk_vec(0).unwrap_err().to_string();
    assert!(e0.contains("filter id 5"), "{e0}");
    let mut out = [7u16; 16];
    let e = sc.read_items(end / 4, &mut out).unwrap_err();
    assert_eq!(e.to_string(), e0);
    let e = sc.read_items(end / 2 - 1, &mut out).unwrap_err();
    assert_eq!(e.to_string(), e0);
    // Items past the chunks' end are not there.
    let e = sc.read_items(end / 2, &mut out).unwrap_err();
    assert!(
        matches!(&e, oxiblosc::Error::Corrupt(m) if m.contains(&format!("the chunks end at byte {end}"))),
        "{e}"
    );
    assert_eq!(out, [7; 16]);
    let opens = store.opens.load(std::sync::atomic::Ordering::Relaxed);
    assert!(opens < 100, "{opens} files opened");
    let _ = std::fs::remove_dir_all(&d);
}

/// `fuzz-sframe_read-7.bin` (CI's minute of `sframe_read`, session 47): a
/// sparse frame of variable-size chunks whose header says 12,576 bytes
/// while its chunks hold other sizes (four entries naming one chunk file of
/// 11,841 bytes, and a fifth chunk that does not decode). Deleting a chunk
/// computed the new size from the header's, 735 bytes, smaller than the
/// chunks kept, which then no longer read. Such a directory now opens
/// read-only: its chunks read as before, every change fails, nothing is
/// written.
#[test]
fn fuzz_sframe_read_7_chunks_that_do_not_add_up_open_read_only() {
    let d = tmp("sframe-7");
    unpack_sframe_input(&finding("fuzz-sframe_read-7.bin"), &d);
    let before = support::dir_files(&d);
    let mut sc = OpenOptions::new().fsync(false).open(&d).unwrap();
    assert_eq!(sc.nchunks(), 5);
    let chunk0 = sc.decompress_chunk_vec(0).unwrap();
    assert_eq!(chunk0.len(), 11_841);
    match sc.delete_chunk(1) {
        Err(e) => assert!(e.to_string().contains("read-only"), "{e}"),
        Ok(()) => panic!("a delete on a frame whose chunks do not add up"),
    }
    assert!(sc.append_buffer(&chunk0).is_err());
    assert_eq!(sc.nchunks(), 5);
    assert!(sc.decompress_chunk_vec(0).unwrap() == chunk0);
    drop(sc);
    assert!(support::dir_files(&d) == before, "the directory changed");
    let _ = std::fs::remove_dir_all(&d);
}

/// `fuzz/artifacts/cframe_edit/crash-411903e0…` (session 48's loop, after
/// 363 k runs): a frame whose metalayer name is a NUL then "ind", which
/// reads as the empty name (C-Blosc2 reads a name up to its first NUL, and
/// writes an empty one: it checks the length alone). Compacting it in
/// memory failed ("metalayer name \"\" must be 1..=31 bytes": the frame
/// writer checked the names it wrote again as new ones) where the same
/// compaction of the frame as a file worked. The frame's own names are now
/// written as they were read, in memory as in a file, and reopen the same.
#[test]
fn fuzz_cframe_edit_2_an_empty_metalayer_name_is_written_again() {
    let input = finding("fuzz-cframe_edit-2.bin");
    let frame = &input[4..];
    let chunk = oxiblosc::compress(&[7u8; 64], &CParams::default().typesize(1)).unwrap();
    let path = tmp("cframe-edit-2.b2frame");
    std::fs::write(&path, frame).unwrap();
    let mut memory = SChunk::from_cframe(frame.to_vec()).unwrap();
    let mut file = OpenOptions::new().fsync(false).open(&path).unwrap();
    let names =
        |sc: &SChunk| -> Vec<String> { sc.metalayers().iter().map(|m| m.name.clone()).collect() };
    assert!(
        names(&memory).iter().any(|n| n.is_empty()),
        "{:?}",
        names(&memory)
    );
    let metas = memory.metalayers().to_vec();
    for sc in [&mut memory, &mut file] {
        sc.insert_chunk(0, &chunk).unwrap();
        sc.compact().unwrap();
        assert_eq!(sc.metalayers(), &metas[..]);
    }
    for mut again in [
        SChunk::from_cframe(memory.to_cframe().unwrap()).unwrap(),
        OpenOptions::new().read_only(true).open(&path).unwrap(),
    ] {
        assert_eq!(again.metalayers(), &metas[..]);
        assert_eq!(again.nchunks(), 1);
        assert_eq!(again.decompress_chunk_vec(0).unwrap(), vec![7u8; 64]);
    }
    let _ = std::fs::remove_file(&path);
}

/// `fuzz/artifacts/cframe_edit/crash-cdaec386…` (session 49's loop, CI
/// build 6ed09fd8): a frame whose 165-byte header holds its one metalayer
/// ("b2nd", 48 bytes) then 5 bytes more, and whose content array says 5
/// entries; ours would write that header in 160 bytes. Compacting it in
/// memory rewrote the header at 160 bytes, and a `meta_update` then
/// worked, where the file kept its 165 bytes and `meta_update` failed
/// ("metalayer update changed the header length"): it re-encoded the
/// header and refused any other length. An update now overwrites the
/// content where it is stored when ours would write another length, as
/// C-Blosc2 does: in memory and in a file alike, with or without the
/// compaction, and the header's other bytes stay.
#[test]
fn fuzz_cframe_edit_3_meta_update_of_a_header_ours_writes_shorter() {
    let input = finding("fuzz-cframe_edit-3.bin");
    let frame = &input[4..];
    let buf: Vec<u8> = (0..48).map(|i| (i * 31 + 3) as u8).collect();
    for compact in [false, true] {
        let path = tmp(&format!("cframe-edit-3-{compact}.b2frame"));
        std::fs::write(&path, frame).unwrap();
        let mut memory = SChunk::from_cframe(frame.to_vec()).unwrap();
        let mut file = OpenOptions::new().fsync(false).open(&path).unwrap();
        assert_eq!(memory.frame_header().header_len, 165);
        let name = memory.metalayers()[0].name.clone();
        for sc in [&mut memory, &mut file] {
            if compact {
                sc.compact().unwrap();
            }
            sc.meta_update(&name, &buf).unwrap();
            assert_eq!(sc.metalayers()[0].content, buf);
        }
        drop(file);
        let stored = std::fs::read(&path).unwrap();
        // In the file: the 48 bytes of content (after `c6` and its length
        // at byte 107, the offset the header names) changed, nothing else.
        let changed: Vec<usize> = (0..frame.len().min(stored.len()))
            .filter(|&i| frame[i] != stored[i])
            .collect();
        assert_eq!(stored.len(), frame.len());
        assert!(
            changed.iter().all(|&i| (112..160).contains(&i)),
            "{changed:?}"
        );
        for mut again in [
            SChunk::from_cframe(memory.to_cframe().unwrap()).unwrap(),
            OpenOptions::new().read_only(true).open(&path).unwrap(),
        ] {
            assert_eq!(again.metalayers()[0].content, buf);
            assert_eq!(again.nchunks(), memory.nchunks());
            for i in 0..again.nchunks() {
                assert_eq!(
                    again.decompress_chunk_vec(i).ok(),
                    memory.decompress_chunk_vec(i).ok()
                );
            }
        }
        let _ = std::fs::remove_file(&path);
    }
}

/// A frame's header with bytes after its metalayers (`fuzz-cframe_edit-3`'s
/// kind), our NdArray's frame with 5 such bytes added: the header's length
/// and the frame's grow by 5 (chunk offsets count from the header's end).
fn header_with_5_more_bytes(frame: &[u8]) -> Vec<u8> {
    assert_eq!(frame[10], 0xd2);
    let hlen = u32::from_be_bytes(frame[11..15].try_into().unwrap()) as usize;
    assert_eq!(frame[15], 0xcf);
    let flen = u64::from_be_bytes(frame[16..24].try_into().unwrap());
    let mut out = frame[..hlen].to_vec();
    out.extend_from_slice(&[0xdb, 0, 0, 0, 3]);
    out.extend_from_slice(&frame[hlen..]);
    out[11..15].copy_from_slice(&(hlen as u32 + 5).to_be_bytes());
    out[16..24].copy_from_slice(&(flen + 5).to_be_bytes());
    out
}

/// The same class as `fuzz_cframe_edit_3`: an NdArray resize replaces the
/// chunks and the `b2nd` metalayer in one change, whose header write also
/// re-encoded the header and refused another length ("metalayer change
/// changed the header length"), in memory and in a file. With a header ours
/// would write at another length the metalayer is now updated first (in
/// place), then the chunks, each change old-or-new.
#[test]
fn ndarray_resize_of_a_header_ours_writes_shorter() {
    use oxiblosc::ndarray::{self, NdMeta};
    let data: Vec<u8> = (0..48u8).collect();
    let meta = NdMeta::new(&[6, 8], &[2, 4], &[1, 2], "|u1");
    let mut made = ndarray::create(&meta, CParams::default(), &data).unwrap();
    let frame = header_with_5_more_bytes(&made.to_cframe().unwrap());
    let path = tmp("resize-longer-header.b2frame");
    std::fs::write(&path, &frame).unwrap();
    let memory = SChunk::from_cframe(frame.clone()).unwrap();
    let file = OpenOptions::new().fsync(false).open(&path).unwrap();
    for mut sc in [memory, file] {
        let mut m = meta.clone();
        ndarray::resize(&mut sc, &mut m, &[8, 8], None).unwrap();
        let mut all = vec![9u8; 64];
        ndarray::get_slice(&mut sc, &m, &[0, 0], &[8, 8], &mut all, &[8, 8]).unwrap();
        let mut want = data.clone();
        want.resize(64, 0);
        assert_eq!(all, want);
        let mut again = SChunk::from_cframe(sc.to_cframe().unwrap()).unwrap();
        let back = NdMeta::decode(&again.metalayers()[0].content).unwrap();
        assert_eq!(back.shape, vec![8, 8]);
        assert_eq!(
            again.decompress_chunk_vec(0).ok(),
            sc.decompress_chunk_vec(0).ok()
        );
    }
    let back = OpenOptions::new().read_only(true).open(&path).unwrap();
    assert_eq!(
        back.frame_header().header_len as usize,
        5 + made.frame_header().header_len as usize
    );
    let _ = std::fs::remove_file(&path);
}

/// Found by cframe_edit (session 52, replaying the frame corpora with edit
/// bytes in front): a 217-byte header whose first metalayer's stored bytes
/// run into the next one's. A compaction in memory wrote the header as
/// ours encodes it (the layers apart), so a `meta_update` of that layer
/// then worked in memory; a file's compaction keeps its header, and there
/// the update, written where the header puts the layer, overwrote the next
/// layer's marker and failed. A compaction now keeps the stored header in
/// memory too: the update fails alike, and both frames keep their bytes.
#[test]
fn fuzz_cframe_edit_4_compaction_keeps_the_stored_header() {
    let input = finding("fuzz-cframe_edit-4.bin");
    let frame = &input[4..];
    let path = tmp("cframe-edit-4.b2frame");
    std::fs::write(&path, frame).unwrap();
    let mut memory = SChunk::from_cframe(frame.to_vec()).unwrap();
    let mut file = OpenOptions::new().fsync(false).open(&path).unwrap();
    assert_eq!(memory.frame_header().header_len, 217);
    let name = memory.metalayers()[0].name.clone();
    let len = memory.metalayers()[0].content.len();
    let buf: Vec<u8> = (0..len).map(|i| (i * 31 + 2) as u8).collect();
    for sc in [&mut memory, &mut file] {
        sc.compact().unwrap();
        let before = sc.metalayers().to_vec();
        let r = sc.meta_update(&name, &buf);
        assert!(r.is_err(), "the layer's bytes run into the next one's");
        assert_eq!(sc.metalayers(), before.as_slice());
    }
    let stored = memory.to_cframe().unwrap();
    assert_eq!(stored[..217], frame[..217], "the header as stored");
    drop(file);
    let mut again = OpenOptions::new().read_only(true).open(&path).unwrap();
    assert_eq!(again.metalayers(), memory.metalayers());
    for i in 0..again.nchunks() {
        assert_eq!(
            again.decompress_chunk_vec(i).ok(),
            memory.decompress_chunk_vec(i).ok()
        );
    }
}
