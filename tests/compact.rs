//! Compact frame files (issue #14 item 1): a frame written in one go, by
//! file-backed `SChunk` appends or by the CLI's `compress`, is as small as
//! the one python-blosc2 (C-Blosc2 3.3.5) writes for the same chunks
//! (within 1 %; LZ4 and BloscLZ chunks are byte-identical to C's), and a
//! file frame after many changes and `close` / drop has no large holes.

mod support;
use oxiblosc::schunk::{OpenOptions, SChunk};
use oxiblosc::{CParams, Codec};
use std::fs;
use std::path::Path;
use std::process::Command;
use support::{Rng, tempdir};

/// Realistic float32 samples: a slow sine with noise of a varying
/// amplitude, rounded to one decimal, so stored chunk sizes vary from chunk
/// to chunk (the case that used to leave a hole per larger chunk).
fn samples(bytes: usize, seed: u64) -> Vec<u8> {
    let mut rng = Rng(seed);
    let mut out = Vec::with_capacity(bytes);
    let n = bytes / 4;
    for i in 0..n {
        let amp = 1.0 + ((i / 65_536) % 7) as f64;
        let v = (i as f64 / 5000.0).sin() * 1000.0 + (rng.unit() - 0.5) * amp;
        let v = ((v * 10.0).round() / 10.0) as f32;
        out.extend_from_slice(&v.to_le_bytes());
    }
    out.resize(bytes, 7);
    out
}

const PY_WRITE: &str = r#"
import sys, os, blosc2, numpy as np
src, out, codec, chunksize = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
data = np.fromfile(src, dtype=np.uint8)
cp = {"codec": getattr(blosc2.Codec, codec), "clevel": 5, "typesize": 4, "nthreads": 1,
      "filters": [blosc2.Filter.NOFILTER] * 5 + [blosc2.Filter.SHUFFLE]}
sc = blosc2.SChunk(chunksize=chunksize, urlpath=out, contiguous=True, cparams=cp, mode="w")
for i in range(0, len(data), chunksize):
    sc.append_data(data[i:i + chunksize])
del sc
# How C-Blosc2 reads a frame: its sizes and every chunk.
def read(p):
    s = blosc2.open(p)
    got = b"".join(bytes(s.decompress_chunk(i)) for i in range(s.nchunks))
    return s.nbytes, s.cbytes, got
nb, cb, got = read(out)
assert got == data.tobytes()
for other in sys.argv[5:]:
    onb, ocb, ogot = read(other)
    assert ogot == got, other
    print(other, onb, ocb)
print(os.path.getsize(out), nb, cb)
"#;

/// Write the C frame of `data` and read `ours` with C-Blosc2; returns the
/// C file's size and, per file of ours, C's (nbytes, cbytes) of it.
fn c_frame(dir: &Path, data: &[u8], codec: &str, chunksize: usize, ours: &[&Path]) -> u64 {
    let src = dir.join("data.bin");
    fs::write(&src, data).unwrap();
    let script = dir.join("py_write.py");
    fs::write(&script, PY_WRITE).unwrap();
    let out = dir.join(format!("c-{codec}.b2frame"));
    let _ = fs::remove_file(&out);
    let cs = chunksize.to_string();
    let mut args = vec![
        src.to_str().unwrap(),
        out.to_str().unwrap(),
        codec,
        cs.as_str(),
    ];
    args.extend(ours.iter().map(|p| p.to_str().unwrap()));
    // run_script joins the path to tests/support: an absolute path wins.
    let text = support::cblosc2::run_script(script.to_str().unwrap(), &args)
        .unwrap_or_else(|e| panic!("python-blosc2: {e}"));
    let last = text.lines().last().unwrap();
    let c_size: u64 = last.split(' ').next().unwrap().parse().unwrap();
    assert_eq!(c_size, fs::metadata(&out).unwrap().len());
    // C reads the same cbytes from our files as from its own.
    let c_cbytes: u64 = last.split(' ').nth(2).unwrap().parse().unwrap();
    for line in text.lines().filter(|l| l.contains(".b2frame ")) {
        let ocb: u64 = line.rsplit(' ').next().unwrap().parse().unwrap();
        assert!(
            ocb.abs_diff(c_cbytes) * 100 <= c_cbytes,
            "C reads cbytes {ocb} of ours, {c_cbytes} of its own: {line}"
        );
    }
    c_size
}

fn within_one_percent(what: &str, ours: u64, c: u64) {
    eprintln!(
        "{what}: ours {ours} bytes, C-Blosc2 {c} bytes ({:+.4} %)",
        (ours as f64 - c as f64) / c as f64 * 100.0
    );
    assert!(
        ours.abs_diff(c) * 100 <= c,
        "{what}: {ours} bytes, C-Blosc2 writes {c}"
    );
}

fn cparams(codec: Codec) -> CParams {
    CParams::default().codec(codec).typesize(4).clevel(5)
}

/// Library appends (then `close`) and the CLI, for LZ4 and BloscLZ, on
/// inputs whose chunk sizes vary, against python-blosc2's file SChunk.
#[test]
fn a_frame_written_in_one_go_is_as_small_as_c_blosc2s() {
    let dir = tempdir("compact-c");
    let cases: [(Codec, &str, usize, usize); 4] = [
        (Codec::Lz4, "LZ4", 1 << 20, 256 << 10),
        (Codec::Lz4, "LZ4", (6 << 20) + 4 * 1234, 512 << 10),
        (Codec::BloscLz, "BLOSCLZ", 3 << 20, 256 << 10),
        (Codec::BloscLz, "BLOSCLZ", 12 << 20, 1 << 20),
    ];
    for (k, &(codec, name, size, cs)) in cases.iter().enumerate() {
        let data = samples(size, k as u64 + 1);
        // The library: file-backed appends, then close.
        let lib = dir.join(format!("lib-{k}.b2frame"));
        let mut sc = SChunk::builder()
            .cparams(cparams(codec))
            .chunksize(cs)
            .fsync(false)
            .create_file(&lib)
            .unwrap();
        for part in data.chunks(cs) {
            sc.append_buffer(part).unwrap();
        }
        sc.close().unwrap();
        // The CLI.
        let cli = dir.join(format!("cli-{k}.b2frame"));
        let input = dir.join(format!("in-{k}.bin"));
        fs::write(&input, &data).unwrap();
        let st = Command::new(env!("CARGO_BIN_EXE_oxiblosc"))
            .args(["compress", "-q", "-c", &name.to_lowercase(), "-t", "4"])
            .args(["--chunksize", &cs.to_string()])
            .arg(&input)
            .arg(&cli)
            .status()
            .unwrap();
        assert!(st.success());
        let c = c_frame(&dir, &data, name, cs, &[&lib, &cli]);
        let what = format!("{name} {size} bytes in chunks of {cs}");
        within_one_percent(
            &format!("{what}, library"),
            fs::metadata(&lib).unwrap().len(),
            c,
        );
        within_one_percent(
            &format!("{what}, CLI"),
            fs::metadata(&cli).unwrap().len(),
            c,
        );
        // Every byte accounted for: header, chunks, index, trailer, and
        // at most the empty frame's 35-byte trailer as a hole.
        for p in [&lib, &cli] {
            let mut sc = SChunk::open(p).unwrap();
            assert!(
                sc.dead_bytes() <= 35,
                "{}: {}",
                p.display(),
                sc.dead_bytes()
            );
            assert_eq!(sc.get_slice(0, data.len() as u64).unwrap(), data);
        }
    }
    fs::remove_dir_all(&dir).unwrap();
}

/// Live bytes of the frame: header, stored chunks, index and trailer.
fn live_bytes(sc: &SChunk) -> u64 {
    let h = sc.frame_header();
    let hl = u64::from(h.header_len);
    hl + sc.cbytes() + (h.frame_len - hl - h.cbytes as u64)
}

/// Many appends of varying chunk sizes, with updates and deletes between
/// them (holes), then `close`: the file is the sum of its parts, but for
/// holes of at most 1 % of the live bytes (`tidy` compacts above that) and
/// the empty frame's 35-byte trailer. The same through a plain drop.
#[test]
fn after_many_changes_close_leaves_no_large_holes() {
    let dir = tempdir("compact-close");
    const CS: usize = 16 << 10;
    for (round, via_drop) in [(0, false), (1, true), (2, false)] {
        let path = dir.join(format!("f{round}.b2frame"));
        let mut sc = SChunk::builder()
            .cparams(cparams(Codec::Lz4))
            .chunksize(CS)
            .fsync(false)
            .create_file(&path)
            .unwrap();
        let mut want: Vec<Vec<u8>> = Vec::new();
        let mut rng = Rng(round);
        for k in 0..400u64 {
            let d = samples(CS, k * 7 + round);
            sc.append_buffer(&d).unwrap();
            want.push(d);
            if round != 1 && k % 10 == 9 {
                // Holes: an update with another chunk, a delete.
                let i = rng.below(want.len() as u64) as usize;
                let d = samples(CS, 10_000 + k);
                sc.update_chunk(i, &oxiblosc::compress(&d, &cparams(Codec::Lz4)).unwrap())
                    .unwrap();
                want[i] = d;
                if round == 2 {
                    let j = rng.below(want.len() as u64) as usize;
                    sc.delete_chunk(j).unwrap();
                    want.remove(j);
                }
            }
        }
        let before = fs::metadata(&path).unwrap().len();
        let live = live_bytes(&sc);
        if round != 1 {
            assert!(before > live, "round {round}: changes leave dead bytes");
        }
        if via_drop {
            drop(sc);
        } else {
            sc.close().unwrap();
        }
        let after = fs::metadata(&path).unwrap().len();
        let mut sc = OpenOptions::new().read_only(true).open(&path).unwrap();
        eprintln!(
            "round {round}: {before} bytes before close, {after} after, {} live",
            live_bytes(&sc)
        );
        assert!(after <= before);
        let bound = 35 + sc.cbytes() / 100;
        assert!(
            sc.dead_bytes() <= bound,
            "round {round}: {} dead",
            sc.dead_bytes()
        );
        assert_eq!(after, live_bytes(&sc) + sc.dead_bytes());
        assert_eq!(sc.nchunks(), want.len());
        for (i, w) in want.iter().enumerate() {
            assert_eq!(
                &sc.decompress_chunk_vec(i).unwrap(),
                w,
                "round {round} chunk {i}"
            );
        }
        // Opening and closing without a change writes nothing.
        let bytes = fs::read(&path).unwrap();
        OpenOptions::new().open(&path).unwrap().close().unwrap();
        assert_eq!(fs::read(&path).unwrap(), bytes);
    }
    // Holes over 1 %: closing compacts, not one dead byte stays.
    let path = dir.join("heavy.b2frame");
    let mut sc = SChunk::builder()
        .cparams(cparams(Codec::Lz4))
        .chunksize(CS)
        .fsync(false)
        .create_file(&path)
        .unwrap();
    let mut want: Vec<Vec<u8>> = (0..100).map(|k| samples(CS, k)).collect();
    for d in &want {
        sc.append_buffer(d).unwrap();
    }
    for i in (0..20).rev() {
        sc.delete_chunk(i * 5).unwrap();
        want.remove(i * 5);
    }
    assert!(sc.hole_bytes() * 100 > sc.cbytes());
    sc.close().unwrap();
    let mut sc = SChunk::open(&path).unwrap();
    assert_eq!(sc.dead_bytes(), 0);
    assert_eq!(fs::metadata(&path).unwrap().len(), live_bytes(&sc));
    for (i, w) in want.iter().enumerate() {
        assert_eq!(
            &sc.decompress_chunk_vec(i).unwrap(),
            w,
            "compacted chunk {i}"
        );
    }
    fs::remove_dir_all(&dir).unwrap();
}

/// Dropping a handle whose view went stale (another handle changed the file
/// since its last write) does not tidy the file from that stale view: the
/// other handle's chunks stay.
#[test]
fn dropping_a_stale_handle_keeps_the_other_handles_changes() {
    let dir = tempdir("compact-stale");
    let path = dir.join("f.b2frame");
    let p = CParams::default().codec(Codec::Lz4).typesize(4);
    let mut sc = SChunk::builder()
        .cparams(p)
        .chunksize(4096)
        .fsync(false)
        .create_file(&path)
        .unwrap();
    sc.append_buffer(&[1u8; 4096]).unwrap();
    sc.close().unwrap();
    let mut a = OpenOptions::new().fsync(false).open(&path).unwrap();
    a.append_buffer(&[2u8; 4096]).unwrap(); // a now has a change to tidy
    let mut b = OpenOptions::new().fsync(false).open(&path).unwrap();
    b.append_buffer(&[3u8; 4096]).unwrap();
    b.close().unwrap();
    drop(a); // stale: must not trim or compact b's chunk away
    let mut again = SChunk::open(&path).unwrap();
    assert_eq!(again.nchunks(), 3);
    assert_eq!(again.decompress_chunk_vec(2).unwrap(), vec![3u8; 4096]);
}

/// A super-chunk in memory leaves no dead chunk bytes behind without
/// bound: chunks replaced, inserted and deleted over and over (as a loop of
/// NDArray `set_slice` calls does) would grow its frame by every new chunk,
/// where C-Blosc2's in-memory super-chunk frees the old one. After every
/// change the dead bytes stay within the live ones (or 1 MiB, for small
/// frames), and every chunk still reads back, also from the frame written
/// out and reopened.
#[test]
fn a_memory_frame_under_updates_keeps_its_dead_bytes_bounded() {
    const CS: usize = 64 << 10;
    let mut sc = SChunk::builder()
        .cparams(cparams(Codec::Lz4))
        .chunksize(CS)
        .build_memory()
        .unwrap();
    let mut comp = oxiblosc::Compressor::new(cparams(Codec::Lz4));
    let mut want: Vec<Vec<u8>> = Vec::new();
    for k in 0..8u64 {
        let d = samples(CS, k);
        sc.append_buffer(&d).unwrap();
        want.push(d);
    }
    let mut rng = Rng(5);
    let (mut written, mut max_dead) = (0u64, 0u64);
    for k in 0..400u64 {
        let d = samples(CS, 100 + k);
        let chunk = comp.compress(&d).unwrap();
        written += chunk.len() as u64;
        let i = rng.below(want.len() as u64) as usize;
        match k % 5 {
            // Mostly replaced; now and then one inserted and one deleted.
            0 => {
                sc.insert_chunk(i, &chunk).unwrap();
                want.insert(i, d);
            }
            1 if want.len() > 4 => {
                sc.delete_chunk(i).unwrap();
                want.remove(i);
            }
            _ => {
                sc.update_chunk(i, &chunk).unwrap();
                want[i] = d;
            }
        }
        let (dead, live) = (sc.dead_bytes(), sc.cbytes());
        max_dead = max_dead.max(dead);
        assert!(
            dead <= live.max(1 << 20),
            "change {k}: {dead} dead bytes beside {live} live ones"
        );
    }
    // The changes wrote many times the bound: without freeing, the dead
    // bytes would have passed it.
    assert!(written > 4 * (sc.cbytes().max(1 << 20)), "{written}");
    assert!(max_dead > 0);
    for (i, w) in want.iter().enumerate() {
        assert_eq!(&sc.decompress_chunk_vec(i).unwrap(), w, "chunk {i}");
    }
    let mut back = SChunk::from_cframe(sc.to_cframe().unwrap()).unwrap();
    assert_eq!(back.nchunks(), want.len());
    for (i, w) in want.iter().enumerate() {
        assert_eq!(&back.decompress_chunk_vec(i).unwrap(), w, "chunk {i}");
    }
}
