//! oxiblosc's side of `fuzz/c-diff.sh`, which runs the same inputs through
//! C-Blosc2 3.3.5 (`oracle.py`) and compares the two reports
//! (`compare.py`). Reads paths on stdin, one per line, and prints one
//! tab-separated line per input: its file name, then `OK` and what was
//! read, `ERR` and the error, or `SKIP` (more than [`CAP`] bytes to
//! decode). Hashes are the first 8 bytes of SHA-256, in hex.
//!
//! Modes (the first argument):
//! - `chunk`: the input as a chunk, decompressed: `OK <len> <hash>`.
//! - `frame`: the input as a contiguous frame: `OK <nchunks>
//!   meta[name=hash,..] vlmeta[name=hash,..]` and, for each of the first 64
//!   chunks, `<len>:<hash>`, `E(<error>)` or `SKIP`, marked `I` when the
//!   chunk is a zeros, NaN or uninit chunk stored whole, `F` when it is a
//!   data chunk with two DELTAs apart (another filter between them), which
//!   C-Blosc2's decoder misreads; a vlmetalayer's
//!   value is marked `U` when it is stored as an uninit chunk (undefined:
//!   we read zeros, C-Blosc2 what its buffer held). A directory (a
//!   sparse frame) or a file named `*.f` is opened by its path.
//! - `frame-lax`: as `frame`, the frame opened as C-Blosc2 opens it (for
//!   the inputs): a chunk that does not fit, or a sparse frame's missing
//!   chunk file, fails that chunk only
//!   ([`OpenOptions::defer_chunk_checks`]).
//! - `nd`: the input as a frame holding an NDArray: `OK <shape>
//!   <chunkshape> <blockshape>`, `<len>:<hash>` of its items (C order;
//!   marked `U` when some chunk is uninit, whose items are undefined; `F`
//!   when some chunk has three filters or more, or two DELTAs, which
//!   C-Blosc2's decoder misreads; `B` when the frame's block size is not
//!   that of its data chunks and some chunk is a special value stored as
//!   an index code, which C-Blosc2 makes with the frame's block size),
//!   `E(<error>)` or `SKIP`, and `c0=` how chunk 0 reads: `ok`, `E` (an
//!   error, or over [`CAP`]), `I` (as in `frame`) or `none`; by its path as
//!   in `frame`.
//! - `edit DIR`: the input as a frame in memory, written back
//!   (`DIR/<name>.0`), then changed by up to three edits the input's
//!   bytes pick (append, insert, delete, update, vlmetalayers) and written
//!   again (`DIR/<name>.1`); the frame as written, copied to the file
//!   `DIR/<name>.f` and edited there in place; the frame as read, copied
//!   into the sparse frame `DIR/<name>.s` and edited there in place. Prints
//!   what it did. `frame` then reads the four.
//! - `nd-edit DIR`: the input as a frame holding an NDArray, written back
//!   (`DIR/<name>.0`), then changed by up to three array edits the input's
//!   bytes pick (resize, append, insert, a box written) and written again
//!   (`DIR/<name>.1`); likewise as a file (`.f`) and a sparse frame (`.s`)
//!   edited in place, as in `edit`. Prints what it did. `nd` then reads
//!   the four.
//! - `sframe DIR`: the input as a `sframe_read` fuzz input, laid out as
//!   that target does: up to three chunk files and an index, in the new
//!   directory `DIR/<name>`.
//! - `sframe-edit DIR`: each path read a directory of `sframe`, copied to
//!   `DIR/<name>.e` and edited there in place (the edits of `edit`) when it
//!   opens.
//! - `encode-frame DIR`: the input as a `roundtrip` fuzz input, its data
//!   in a frame with its parameters and chunk size (written from a
//!   super-chunk in memory, by the streaming encoder, or as a sparse frame,
//!   as the input picks), what we read back in `DIR/<name>.back`.
//! - `encode-nd DIR`: the input as a `roundtrip` fuzz input, its data
//!   an NDArray we write with its parameters, a dtype of its type size and
//!   a geometry its bytes pick, in memory then as a frame (`.0`), in a file
//!   (`.f`) or a sparse frame (`.s`); prints the items' hash (marked `L`
//!   when lossy filters change them). `nd` then reads them.
//! - `encode DIR`: the input as a `roundtrip` fuzz input: its data
//!   compressed with its parameters, the chunk, the data and our
//!   decompression written to `DIR/<name>.{chunk,data,back}` and the
//!   parameters to `DIR/<name>.params`.

use std::io::BufRead;

use arbitrary::{Arbitrary, Unstructured};
use oxiblosc::frame::ChunkEntry;
use oxiblosc::ndarray::NdArray;
use oxiblosc::schunk::{OpenOptions, SChunk};
use oxiblosc::{ChunkHeader, DParams, Decompressor, SpecialValue};
use sha2::{Digest, Sha256};

// What the `roundtrip` target alone uses of it (its containers) stays unread.
#[allow(dead_code)]
#[path = "../../fuzz_targets/roundtrip_input.rs"]
mod roundtrip_input;
#[path = "../../fuzz_targets/sframe_input.rs"]
mod sframe_input;

/// The most bytes one chunk or array may decode to (both sides skip more).
const CAP: usize = 16 << 20;

fn hash(b: &[u8]) -> String {
    Sha256::digest(b)[..8]
        .iter()
        .map(|x| format!("{x:02x}"))
        .collect()
}

/// An error as one field: no tabs or newlines in it.
fn clean(e: impl std::fmt::Display) -> String {
    e.to_string().replace(['\t', '\n'], " ")
}

fn chunk(data: &[u8]) -> String {
    if ChunkHeader::parse(data).is_ok_and(|h| h.nbytes > CAP) {
        return "SKIP".into();
    }
    let mut d = Decompressor::new(DParams::default().nthreads(1).max_output(CAP));
    match d.decompress(data) {
        Ok(out) => format!("OK\t{}\t{}", out.len(), hash(&out)),
        Err(e) => format!("ERR\t{}", clean(e)),
    }
}

/// Opened by its path rather than from its bytes, on both sides (here and
/// in `oracle.py`): a directory (a sparse frame), or a file whose name ends
/// in `.f` (a file frame we edited in place).
fn by_path(path: &str) -> bool {
    std::path::Path::new(path).is_dir() || path.ends_with(".f")
}

/// The `frame` report of the frame at `path`: by path (a sparse frame's
/// directory or a file frame, see [`by_path`]), or from its bytes. `lax`
/// (for inputs) opens as C-Blosc2 does, a chunk that does not fit its frame
/// or a sparse frame's missing chunk file failing that chunk only, so that
/// the others are compared; the frames we wrote must open strictly.
fn frame(path: &str, lax: bool) -> String {
    let o = OpenOptions::new().read_only(true).defer_chunk_checks(lax);
    let opened = if by_path(path) {
        o.open(path)
    } else {
        o.from_cframe(std::fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}")))
    };
    match opened {
        Ok(sc) => frame_report(sc),
        Err(e) => format!("ERR\t{}", clean(e)),
    }
}

/// The mark of chunk `i` in a frame report (see the module docs): `I`
/// for a zeros, NaN or uninit chunk stored whole rather than as an index
/// code; `F` for a data chunk whose pipeline (no-filter slots left out)
/// has two DELTAs with another filter between them, which C-Blosc2's
/// decoder misreads, on its own chunks too (tests/differential.rs
/// `c_bugs_the_harness_tolerates`); else nothing.
fn chunk_mark(sc: &mut SChunk, i: usize) -> &'static str {
    if !matches!(sc.chunk_entry(i), Ok(ChunkEntry::Stored(_))) {
        return "";
    }
    let Ok(c) = sc.get_chunk(i) else { return "" };
    let Ok(h) = ChunkHeader::parse(&c) else {
        return "";
    };
    match h.special() {
        Some(SpecialValue::Zeros | SpecialValue::Nan | SpecialValue::Uninit) => return "I",
        Some(_) => return "",
        None if h.is_memcpyed() => return "",
        None => {}
    }
    let deltas: Vec<usize> = (h.filters.iter().filter(|&&f| f != 0).enumerate())
        .filter(|&(_, &f)| f == 3)
        .map(|(at, _)| at)
        .collect();
    if deltas.windows(2).any(|w| w[1] > w[0] + 1) {
        "F"
    } else {
        ""
    }
}

/// `U` when vlmetalayer `name` is stored as an uninit chunk, whose value
/// is undefined (see the module docs), else nothing.
fn vlmeta_mark(sc: &SChunk, name: &str) -> &'static str {
    let uninit = sc.vlmetalayers().iter().any(|m| {
        m.name == name
            && ChunkHeader::parse(&m.chunk).is_ok_and(|h| h.special() == Some(SpecialValue::Uninit))
    });
    if uninit { "U" } else { "" }
}

/// The marks of an array's items (see the module docs), from one pass
/// over its first 4,096 chunks: `U` when some chunk is uninit (its items
/// are undefined: we read zeros, C-Blosc2's array reads leave what its
/// buffer held); `F` and `B` for C-Blosc2's known misreadings (a data
/// chunk with three filters or more, or two DELTAs; a special chunk
/// stored as an index code in a frame whose block size is not its data
/// chunks').
fn item_marks(sc: &mut SChunk) -> String {
    let frame_bs = sc.cparams().blocksize;
    let (mut uninit, mut filters, mut other_bs, mut special_code) = (false, false, false, false);
    for i in 0..sc.nchunks().min(1 << 12) {
        match sc.chunk_entry(i) {
            Ok(ChunkEntry::Special(v)) => {
                special_code = true;
                uninit |= v == SpecialValue::Uninit;
            }
            Ok(ChunkEntry::Stored(_)) => {
                let Ok(c) = sc.get_chunk(i) else { continue };
                let Ok(h) = ChunkHeader::parse(&c) else {
                    continue;
                };
                if h.special().is_some() || h.is_memcpyed() {
                    uninit |= h.special() == Some(SpecialValue::Uninit);
                    continue;
                }
                let active = h.filters.iter().filter(|&&f| f != 0).count();
                let deltas = h.filters.iter().filter(|&&f| f == 3).count();
                filters |= active >= 3 || deltas >= 2;
                other_bs |= frame_bs != 0 && h.blocksize != frame_bs;
            }
            _ => {}
        }
    }
    [
        (uninit, 'U'),
        (filters, 'F'),
        (other_bs && special_code, 'B'),
    ]
    .iter()
    .filter(|(on, _)| *on)
    .map(|(_, m)| *m)
    .collect()
}

fn frame_report(mut sc: SChunk) -> String {
    let metas: Vec<String> = sc
        .metalayers()
        .iter()
        .map(|m| format!("{}={}", m.name, hash(&m.content)))
        .collect();
    let names: Vec<String> = sc.vlmeta_names().iter().map(|s| s.to_string()).collect();
    let vlmetas: Vec<String> = names
        .iter()
        .map(|n| match sc.vlmeta_get(n) {
            Ok(Some(v)) => format!("{n}={}{}", vlmeta_mark(&sc, n), hash(&v)),
            Ok(None) => format!("{n}=E(none)"),
            // Inside `vlmeta[..]`: no separator of that list in it.
            Err(e) => format!("{n}=E({})", clean(e).replace([',', '=', '[', ']'], " ")),
        })
        .collect();
    let mut out = format!(
        "OK\t{}\tmeta[{}]\tvlmeta[{}]",
        sc.nchunks(),
        metas.join(","),
        vlmetas.join(",")
    );
    for i in 0..sc.nchunks().min(64) {
        if sc.chunk_nbytes(i).is_ok_and(|n| n > CAP) {
            out += "\tSKIP";
            continue;
        }
        // `I`: a zeros, NaN or uninit chunk stored whole rather than as an
        // index code. C-Blosc2 reads one from a frame in memory, but not
        // from a file or directory (its lazy chunks take only stored data
        // and value runs): there it cannot open a frame whose first chunk
        // is one (`compare.py`).
        let mark = chunk_mark(&mut sc, i);
        match sc.decompress_chunk_vec(i) {
            Ok(v) => out += &format!("\t{mark}{}:{}", v.len(), hash(&v)),
            Err(e) => out += &format!("\t{mark}E({})", clean(e)),
        }
    }
    out
}

/// The `nd` report of the array at `path`: by path (see [`by_path`]) or
/// from its bytes.
fn nd(path: &str) -> String {
    let o = OpenOptions::new().read_only(true);
    let opened = if by_path(path) {
        o.open(path)
    } else {
        o.from_cframe(std::fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}")))
    };
    let mut sc = match opened {
        Ok(sc) => sc,
        Err(e) => return format!("ERR\tframe: {}", clean(e)),
    };
    // Chunk 0 as C-Blosc2's by-path open sees it (`compare.py`).
    let c0 = if sc.nchunks() == 0 {
        "none"
    } else if chunk_mark(&mut sc, 0) == "I" {
        "I"
    } else if sc.chunk_nbytes(0).is_ok_and(|n| n > CAP) || sc.decompress_chunk_vec(0).is_err() {
        "E"
    } else {
        "ok"
    };
    let marks = item_marks(&mut sc);
    let mut a = match NdArray::open(sc) {
        Ok(a) => a,
        Err(e) => return format!("ERR\tndarray: {}", clean(e)),
    };
    let m = a.meta().clone();
    let mut out = format!("OK\t{:?}\t{:?}\t{:?}", m.shape, m.chunkshape, m.blockshape);
    if a.nbytes() > CAP as u64 {
        out += "\tSKIP";
    } else {
        match a.to_vec() {
            Ok(v) => {
                out += &format!("\t{marks}{}:{}", v.len(), hash(&v));
            }
            Err(e) => out += &format!("\tE({})", clean(e)),
        }
    }
    out = out.replace(", ", ",");
    out + "\tc0=" + c0
}

/// The edits an input picks: a hash of its bytes.
fn seed(data: &[u8]) -> u64 {
    data.iter()
        .fold(0u64, |a, &b| a.wrapping_mul(31).wrapping_add(u64::from(b)))
}

/// `sc` written as a frame to `DIR/<name>.<version>` (0: as read, 1:
/// edited); the error as one field.
fn write_back(sc: &mut SChunk, dir: &str, name: &str, version: u8) -> Result<(), String> {
    let b = sc
        .to_cframe()
        .map_err(|e| format!("to_cframe: {}", clean(e)))?;
    std::fs::write(format!("{dir}/{name}.{version}"), b).expect("write");
    Ok(())
}

/// Up to three edits `seed` picks (append, insert, delete, update,
/// vlmetalayers), in place; what each did.
fn edits(sc: &mut SChunk, seed: u64, buf: &[u8]) -> Vec<String> {
    let mut log = Vec::new();
    for step in 0..3u64 {
        let n = sc.nchunks();
        let op = (seed >> (8 * step)) % 7;
        let r = match op {
            0 => sc.append_buffer(buf).map(drop),
            1 if n > 0 => sc
                .get_chunk(n - 1)
                .map(|c| c.into_owned())
                .and_then(|c| sc.insert_chunk(0, &c)),
            2 if n > 0 => sc.delete_chunk((seed as usize / 7) % n),
            3 if n > 0 => sc
                .get_chunk(0)
                .map(|c| c.into_owned())
                .and_then(|c| sc.update_chunk(n - 1, &c)),
            4 => sc.vlmeta_set(&format!("cdiff{step}"), b"\xa5value"),
            5 => sc.append_buffer(&buf[..buf.len() / 2]).map(drop),
            _ => match sc.vlmeta_names().first().map(|s| s.to_string()) {
                Some(v) => sc.vlmeta_delete(&v),
                None => Ok(()),
            },
        };
        log.push(format!("op{op}:{}", if r.is_ok() { "ok" } else { "err" }));
        if r.is_err() {
            break;
        }
    }
    log
}

/// The chunk buffer the edits of `sc` append: one chunk, a pattern.
fn edit_buffer(sc: &SChunk, seed: u64) -> Vec<u8> {
    let cs = sc.chunksize().unwrap_or(1000).clamp(1, 1 << 20);
    let ts = sc.cparams().typesize.max(1);
    (0..cs).map(|i| (i / ts) as u8 ^ seed as u8).collect()
}

/// `sc` copied into a new sparse frame at `path` (its parameters,
/// metalayers, chunks as they are and vlmetalayers), no syncs.
fn to_dir(sc: &mut SChunk, path: &str) -> oxiblosc::Result<SChunk> {
    // A copy cut short (a chunk that does not read) is not left to be
    // compared: it is the harness's, not a frame our edits wrote.
    let r = copy_to_dir(sc, path);
    if r.is_err() {
        let _ = std::fs::remove_dir_all(path);
    }
    r
}

fn copy_to_dir(sc: &mut SChunk, path: &str) -> oxiblosc::Result<SChunk> {
    let mut b = SChunk::builder().cparams(sc.cparams().clone()).fsync(false);
    if let Some(cs) = sc.chunksize() {
        b = b.chunksize(cs);
    }
    for m in sc.metalayers() {
        b = b.meta(&m.name, &m.content);
    }
    let mut out = b.create_dir(path)?;
    for i in 0..sc.nchunks() {
        let c = sc.get_chunk(i)?.into_owned();
        out.append_chunk(&c)?;
    }
    let names: Vec<String> = sc.vlmeta_names().iter().map(|s| s.to_string()).collect();
    for n in names {
        if let Some(v) = sc.vlmeta_get(&n)? {
            out.vlmeta_set(&n, &v)?;
        }
    }
    Ok(out)
}

/// What [`edits`] did to the frame opened writable at `path`, in place.
fn edit_at(path: &str, seed: u64, buf: &[u8]) -> String {
    match OpenOptions::new().fsync(false).open(path) {
        Ok(mut sc) => edits(&mut sc, seed, buf).join(","),
        Err(e) => format!("open: {}", clean(e)),
    }
}

fn edit(data: &[u8], name: &str, dir: &str) -> String {
    let Ok(mut sc) = SChunk::from_cframe(data.to_vec()) else {
        return "ERR\tdoes not open".into();
    };
    let seed = seed(data);
    let buf = edit_buffer(&sc, seed);
    if let Err(e) = write_back(&mut sc, dir, name, 0) {
        return format!("ERR\t{e}");
    }
    // The frame as written, as a file edited in place (`.f`).
    let file = format!("{dir}/{name}.f");
    std::fs::copy(format!("{dir}/{name}.0"), &file).expect("copy");
    let flog = edit_at(&file, seed, &buf);
    // The frame as read, copied into a sparse frame edited in place (`.s`).
    let sdir = format!("{dir}/{name}.s");
    let slog = match to_dir(&mut sc, &sdir) {
        Ok(s) => {
            drop(s);
            edit_at(&sdir, seed, &buf)
        }
        Err(e) => format!("to a directory: {}", clean(e)),
    };
    // In memory, written again (`.1`).
    let mut log = edits(&mut sc, seed, &buf);
    if let Err(e) = write_back(&mut sc, dir, name, 1) {
        log.push(e);
    }
    format!("OK\t{}\tfile {flog}\tdir {slog}", log.join(" "))
}

/// A `sframe_read` input as that target lays it out: up to three chunk
/// files, then the index, in the new directory `DIR/<name>`.
fn sframe(data: &[u8], name: &str, dir: &str) -> String {
    if data.len() < sframe_input::HEAD {
        return "SKIP".into();
    }
    let d = std::path::Path::new(dir).join(name);
    std::fs::create_dir(&d).expect("create the directory");
    sframe_input::lay_out(data, &d).expect("write");
    "OK".into()
}

/// The sparse frame at `path` (a directory of `sframe`), copied to
/// `DIR/<name>.e` and changed there by [`edits`], when it opens.
fn sframe_edit(path: &str, name: &str, dir: &str) -> String {
    let index = std::fs::read(format!("{path}/chunks.b2frame")).unwrap_or_default();
    let seed = seed(&index);
    let buf = match OpenOptions::new().read_only(true).open(path) {
        Ok(sc) => edit_buffer(&sc, seed),
        Err(e) => return format!("ERR\tdoes not open: {}", clean(e)),
    };
    let copy = std::path::Path::new(dir).join(format!("{name}.e"));
    std::fs::create_dir(&copy).expect("create the copy");
    for f in std::fs::read_dir(path).expect("read the directory") {
        let f = f.expect("an entry");
        std::fs::copy(f.path(), copy.join(f.file_name())).expect("copy");
    }
    format!(
        "OK\t{}",
        edit_at(copy.to_str().expect("a UTF-8 path"), seed, &buf)
    )
}

/// Up to three array edits `seed` picks (resize, append, insert, a box
/// written) of the NDArray in `sc`, in place; what each did.
fn nd_edits(sc: &mut SChunk, seed: u64) -> Vec<String> {
    use oxiblosc::ndarray;
    let mut meta = match ndarray::find_meta(sc) {
        Ok(Some((_, m))) => m,
        Ok(None) => return vec!["no NDArray".into()],
        Err(e) => return vec![format!("meta: {}", clean(e))],
    };
    let is = sc.typesize().max(1);
    let n = meta.ndim();
    let items = |shape: &[u64]| shape.iter().try_fold(1u64, |a, &d| a.checked_mul(d));
    let mut log = Vec::new();
    for step in 0..3u64 {
        if n == 0 {
            break;
        }
        let op = (seed >> (8 * step)) % 5;
        let axis = (seed >> (8 * step + 3)) as usize % n;
        let mut slab = meta.shape.clone();
        slab[axis] = meta.chunkshape[axis].clamp(1, 64);
        let slab_bytes = items(&slab)
            .filter(|&k| k.saturating_mul(is as u64) <= 1 << 24)
            .map(|k| k as usize * is);
        let pattern =
            |len: usize| -> Vec<u8> { (0..len).map(|i| (i as u64 ^ seed) as u8).collect() };
        let r = match (op, slab_bytes) {
            (0, _) => {
                let mut grown = meta.shape.clone();
                grown[axis] = grown[axis].saturating_add(meta.chunkshape[axis].max(1));
                ndarray::resize(sc, &mut meta, &grown, None)
            }
            (1, _) => {
                let mut cut = meta.shape.clone();
                cut[axis] = cut[axis].saturating_sub(meta.chunkshape[axis].max(1));
                ndarray::resize(sc, &mut meta, &cut, None)
            }
            (2, Some(len)) => ndarray::append(sc, &mut meta, &pattern(len), axis),
            (3, Some(len)) => ndarray::insert(sc, &mut meta, &pattern(len), axis, 0),
            (4, _) => {
                let stop: Vec<u64> = meta.shape.iter().map(|&d| d.min(2)).collect();
                let len = items(&stop).unwrap_or(0) as usize * is;
                let start = vec![0; n];
                ndarray::set_slice(sc, &meta, &start, &stop, &pattern(len), &stop)
            }
            _ => Ok(()),
        };
        log.push(format!(
            "op{op}/{axis}:{}",
            if r.is_ok() { "ok" } else { "err" }
        ));
        if r.is_err() {
            break;
        }
    }
    log
}

fn nd_edit(data: &[u8], name: &str, dir: &str) -> String {
    let Ok(mut sc) = SChunk::from_cframe(data.to_vec()) else {
        return "ERR\tdoes not open".into();
    };
    match oxiblosc::ndarray::find_meta(&sc) {
        Ok(Some(_)) => {}
        _ => return "ERR\tno NDArray".into(),
    }
    if NdArray::open(SChunk::from_cframe(data.to_vec()).expect("opened once")).is_err() {
        return "ERR\tnot an NDArray that opens".into();
    }
    if let Err(e) = write_back(&mut sc, dir, name, 0) {
        return format!("ERR\t{e}");
    }
    let seed = seed(data);
    let at = |path: &str| match OpenOptions::new().fsync(false).open(path) {
        Ok(mut sc) => nd_edits(&mut sc, seed).join(","),
        Err(e) => format!("open: {}", clean(e)),
    };
    // The array as written, as a file edited in place (`.f`).
    let file = format!("{dir}/{name}.f");
    std::fs::copy(format!("{dir}/{name}.0"), &file).expect("copy");
    let flog = at(&file);
    // The array as read, copied into a sparse frame edited in place (`.s`).
    let sdir = format!("{dir}/{name}.s");
    let slog = match to_dir(&mut sc, &sdir) {
        // A frame of variable-size chunks whose chunks are all one size
        // becomes a frame of that chunk size when copied (the first
        // append sets it), which an array whose metalayer does not fit its
        // chunks cannot be opened as: the copy is not the frame read, so
        // it is not left to be compared.
        Ok(s) if s.chunksize() != sc.chunksize() => {
            drop(s);
            let _ = std::fs::remove_dir_all(&sdir);
            "to a directory: the copy has a chunk size, the frame none".into()
        }
        Ok(s) => {
            drop(s);
            at(&sdir)
        }
        Err(e) => format!("to a directory: {}", clean(e)),
    };
    // In memory, written again (`.1`).
    let mut log = nd_edits(&mut sc, seed);
    if let Err(e) = write_back(&mut sc, dir, name, 1) {
        log.push(e);
    }
    format!("OK\t{}\tfile {flog}\tdir {slog}", log.join(" "))
}

/// A `roundtrip` input's data as that target's containers hold it: with
/// its parameters, in chunks of its chunk size, in a super-chunk written
/// as a frame (`DIR/<name>.frame`; `container` % 3 == 0), through the
/// streaming frame encoder (1) or in a sparse frame (`DIR/<name>.d`, 2);
/// what we read back of every chunk in `DIR/<name>.back`, the parameters
/// in `DIR/<name>.params`.
fn encode_frame(bytes: &[u8], name: &str, dir: &str) -> String {
    use oxiblosc::Error::{InvalidParam, Unsupported};
    use std::io::Write;
    let Ok(mut inp) = roundtrip_input::Input::arbitrary_take_rest(Unstructured::new(bytes)) else {
        return "SKIP".into();
    };
    inp.tile_data();
    let p = inp.params();
    let chunksize = p.typesize * (usize::from(inp.chunk) % 512 + 1);
    let base = format!("{dir}/{name}");
    let which = inp.container % 3;
    let built = match which {
        0 | 2 => {
            let b = SChunk::builder()
                .cparams(p.clone())
                .chunksize(chunksize)
                .fsync(false);
            let sc = if which == 0 {
                b.build_memory()
            } else {
                b.create_dir(format!("{base}.d"))
            };
            sc.and_then(|mut sc| {
                for part in inp.data.chunks(chunksize) {
                    sc.append_buffer(part)?;
                }
                if which == 0 {
                    std::fs::write(format!("{base}.frame"), sc.to_cframe()?).expect("write");
                }
                Ok(())
            })
        }
        _ => oxiblosc::stream::FrameEncoder::new(Vec::new(), p.clone(), chunksize).and_then(
            |mut enc| {
                enc.write_all(&inp.data)?;
                let frame = enc.finish()?;
                std::fs::write(format!("{base}.frame"), frame).expect("write");
                Ok(())
            },
        ),
    };
    match built {
        Ok(()) => {}
        // Parameters a container refuses (as in the target).
        Err(InvalidParam(_) | Unsupported(_)) => {
            let _ = std::fs::remove_dir_all(format!("{base}.d"));
            return "SKIP".into();
        }
        Err(e) => return format!("ERR\t{}", clean(e)),
    }
    let path = if which == 2 {
        format!("{base}.d")
    } else {
        format!("{base}.frame")
    };
    let mut sc = match SChunk::open(&path) {
        Ok(sc) => sc,
        Err(e) => return format!("ERR\twe do not reopen it: {}", clean(e)),
    };
    let mut back = Vec::new();
    for i in 0..sc.nchunks() {
        match sc.decompress_chunk_vec(i) {
            Ok(v) => back.extend(v),
            Err(e) => return format!("ERR\tchunk {i}: {}", clean(e)),
        }
    }
    if back.len() != inp.data.len() || (!inp.lossy() && back != inp.data) {
        return "ERR\tour frame does not give the data back".into();
    }
    std::fs::write(format!("{base}.back"), &back).expect("write");
    if which != 2 {
        // For oracle.py `samef`: C-Blosc2 makes the same frame.
        let c = format!("{} {chunksize} {} {which}", c_params(&p), p.nthreads);
        std::fs::write(format!("{base}.cp"), c).expect("write");
        std::fs::write(format!("{base}.data"), &inp.data).expect("write");
    }
    std::fs::write(
        format!("{base}.params"),
        format!("{p:?} chunksize {chunksize}"),
    )
    .expect("write");
    format!("OK\t{}\t{}", sc.nchunks(), hash(&back))
}

/// A `roundtrip` input's data as an NDArray written by us: its
/// parameters, a dtype of its type size, a geometry of 1 to 3 dimensions
/// its bytes pick (chunks and blocks of any length that fits), in a frame
/// (`DIR/<name>.0`), a file (`DIR/<name>.f`) or a sparse frame
/// (`DIR/<name>.s`), as the input picks. `nd` then reads it.
fn encode_nd(bytes: &[u8], name: &str, dir: &str) -> String {
    use oxiblosc::ndarray::{self, NdMeta};
    let Ok(mut inp) = roundtrip_input::Input::arbitrary_take_rest(Unstructured::new(bytes)) else {
        return "SKIP".into();
    };
    inp.tile_data();
    let p = inp.params();
    let ts = p.typesize.max(1);
    let dtype = match ts {
        1 => "|u1".to_string(),
        2 => "<u2".to_string(),
        4 => "<f4".to_string(),
        8 => "<f8".to_string(),
        n => format!("|V{n}"),
    };
    let nitems = (inp.data.len() / ts) as u64;
    if nitems == 0 {
        return "SKIP".into();
    }
    // The geometry: bytes of the input's chunk and block fields.
    let g = [inp.chunk.to_le_bytes(), inp.blocksize.to_le_bytes()].concat();
    let ndim = 1 + usize::from(g[0] % 3);
    let mut shape = vec![1u64; ndim];
    let mut left = nitems;
    for d in 1..ndim {
        shape[d] = 1 + u64::from(g[d]) % 9;
        left /= shape[d];
    }
    shape[0] = left.max(1);
    let items: u64 = shape.iter().product();
    if items > nitems {
        return "SKIP".into();
    }
    let chunks: Vec<u64> = (0..ndim)
        .map(|d| 1 + u64::from(g[(d + 1) % 4].rotate_left(d as u32)) % shape[d])
        .collect();
    let blocks: Vec<u64> = (0..ndim)
        .map(|d| 1 + u64::from(g[(d + 2) % 4]) % chunks[d])
        .collect();
    let meta = NdMeta::new(&shape, &chunks, &blocks, &dtype);
    let data = &inp.data[..(items as usize) * ts];
    let builder = match ndarray::builder(&meta, p.clone()) {
        Ok(b) => b.fsync(false),
        Err(e) => return format!("SKIP\t{}", clean(e)),
    };
    let (path, built) = match inp.container % 3 {
        0 => (format!("{dir}/{name}.0"), builder.build_memory()),
        1 => {
            let f = format!("{dir}/{name}.f");
            (f.clone(), builder.create_file(&f))
        }
        _ => {
            let s = format!("{dir}/{name}.s");
            (s.clone(), builder.create_dir(&s))
        }
    };
    let mut sc = match built {
        Ok(sc) => sc,
        Err(e) => return format!("ERR\tbuild: {}", clean(e)),
    };
    if let Err(e) = ndarray::fill(&mut sc, &meta, data) {
        drop(sc);
        let _ = std::fs::remove_dir_all(&path);
        let _ = std::fs::remove_file(&path);
        return format!("SKIP\tfill: {}", clean(e));
    }
    if inp.container % 3 == 0 {
        match sc.to_cframe() {
            Ok(b) => std::fs::write(&path, b).expect("write"),
            Err(e) => return format!("ERR\tto_cframe: {}", clean(e)),
        }
    }
    // Lossy filters (TRUNC_PREC) change the data: `L`, not checked.
    let lossy = if inp.lossy() { "L" } else { "" };
    format!(
        "OK\t{:?}\t{:?}\t{:?}\t{lossy}{}:{}",
        shape,
        chunks,
        blocks,
        data.len(),
        hash(data)
    )
    .replace(", ", ",")
}

/// C-Blosc2's blosc2_cparams for `p` (oracle.py `same`, `samef`):
/// compcode clevel typesize blocksize splitmode use_dict blosc1
/// filters... metas... (six each, comma-separated).
fn c_params(p: &oxiblosc::CParams) -> String {
    let ids: Vec<String> = p
        .filters
        .iter()
        .map(|f| f.map_or(0, |f| f.id()).to_string())
        .collect();
    let metas: Vec<String> = (0..6)
        .map(|i| match p.filters[i] {
            Some(oxiblosc::Filter::TruncPrec(m)) => m,
            _ => p.filters_meta[i],
        })
        .map(|m| m.to_string())
        .collect();
    format!(
        "{} {} {} {} {} {} {} {} {}",
        p.codec.id(),
        p.clevel,
        p.typesize,
        p.blocksize,
        p.splitmode.id(),
        u8::from(p.use_dict),
        u8::from(p.format == oxiblosc::ChunkFormat::Blosc1),
        ids.join(","),
        metas.join(",")
    )
}

fn encode(bytes: &[u8], name: &str, dir: &str) -> String {
    let Ok(mut inp) = roundtrip_input::Input::arbitrary_take_rest(Unstructured::new(bytes)) else {
        return "SKIP".into();
    };
    inp.tile_data();
    let p = inp.params();
    let chunk = match oxiblosc::compress(&inp.data, &p) {
        Ok(c) => c,
        Err(e) => return format!("ERR\t{}", clean(e)),
    };
    let back = match oxiblosc::decompress(&chunk) {
        Ok(b) => b,
        Err(e) => return format!("ERR\tour own chunk: {}", clean(e)),
    };
    let write =
        |ext: &str, b: &[u8]| std::fs::write(format!("{dir}/{name}.{ext}"), b).expect("write");
    write("chunk", &chunk);
    write("data", &inp.data);
    write("back", &back);
    write("params", format!("{p:?}").as_bytes());
    write("cp", c_params(&p).as_bytes());
    format!("OK\t{}\t{}", chunk.len(), hash(&back))
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mode = args
        .next()
        .expect("a mode: chunk, frame, frame-lax, nd, encode-frame DIR, encode-nd DIR, edit DIR, nd-edit DIR, encode DIR, sframe DIR or sframe-edit DIR");
    let dir = args.next().unwrap_or_default();
    for line in std::io::stdin().lock().lines() {
        let path = line.expect("stdin");
        let read = || std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let name = path.rsplit('/').next().unwrap_or(&path).to_string();
        let res = match mode.as_str() {
            "chunk" => chunk(&read()),
            "frame" => frame(&path, false),
            "frame-lax" => frame(&path, true),
            "nd" => nd(&path),
            "edit" => edit(&read(), &name, &dir),
            "nd-edit" => nd_edit(&read(), &name, &dir),
            "encode" => encode(&read(), &name, &dir),
            "encode-frame" => encode_frame(&read(), &name, &dir),
            "encode-nd" => encode_nd(&read(), &name, &dir),
            "sframe" => sframe(&read(), &name, &dir),
            "sframe-edit" => sframe_edit(&path, &name, &dir),
            m => panic!("unknown mode {m}"),
        };
        println!("{name}\t{res}");
    }
}
