//! Faults on write (issue #15 item 4): a write that fails with ENOSPC,
//! EFBIG or EIO leaves the previous file intact (it reopens with the same
//! contents, or, when only the final truncation failed, the new ones), no
//! temporary file behind, and an error that names the path and the cause.
//!
//! Two ways in: `Faulty`, a [`FrameIo`] over the real file that fails
//! after a budget of written bytes (every change of a file frame, at many
//! budgets), and the operating system itself: a child process under
//! `ulimit -f` (with SIGXFSZ ignored, so writes past the limit fail with
//! EFBIG) for what does not go through a `FrameIo` — the copy-and-rename
//! of a large metalayer update and of adding a metalayer, `save`, a
//! directory frame's chunk files, and the CLI's `compress`.

mod support;
use oxiblosc::frame::{FileIo, FrameIo};
use oxiblosc::schunk::{OpenOptions, SChunk};
use oxiblosc::{CParams, Codec};
use std::cell::Cell;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::rc::Rc;
use support::{Rng, data, tempdir};

const CS: usize = 4096;

fn cparams() -> CParams {
    CParams::default().codec(Codec::Lz4).typesize(4)
}

const ENOSPC: i32 = 28;
const EFBIG: i32 = 27;
const EIO: i32 = 5;

/// A file frame whose writes fail with OS error `code` once `budget`
/// bytes were written: the write that crosses it is cut there (a write
/// inside one 512-byte sector is all or nothing, the assumption the
/// commit point makes), and every later write fails; truncation and sync
/// still work after ENOSPC and EFBIG (a full disk can still shrink a
/// file), not after EIO.
struct Faulty {
    inner: FileIo,
    budget: Rc<Cell<usize>>,
    code: i32,
}

impl Faulty {
    fn dead(&self) -> bool {
        self.budget.get() == usize::MAX
    }
    fn fail(&self) -> io::Error {
        self.budget.set(usize::MAX);
        io::Error::from_raw_os_error(self.code)
    }
}

impl FrameIo for Faulty {
    fn storage_len(&mut self) -> io::Result<u64> {
        self.inner.storage_len()
    }
    fn read_exact_at(&mut self, pos: u64, buf: &mut [u8]) -> io::Result<()> {
        self.inner.read_exact_at(pos, buf)
    }
    fn write_all_at(&mut self, pos: u64, data: &[u8]) -> io::Result<()> {
        if self.dead() {
            return Err(self.fail());
        }
        let b = self.budget.get();
        if data.len() <= b {
            self.budget.set(b - data.len());
            return self.inner.write_all_at(pos, data);
        }
        let end = pos + data.len() as u64 - 1;
        if pos / 512 != end / 512 {
            self.inner.write_all_at(pos, &data[..b])?;
        }
        Err(self.fail())
    }
    fn set_len(&mut self, len: u64) -> io::Result<()> {
        if self.dead() && self.code == EIO {
            return Err(self.fail());
        }
        self.inner.set_len(len)
    }
    fn sync(&mut self) -> io::Result<()> {
        if self.dead() && self.code == EIO {
            return Err(self.fail());
        }
        self.inner.sync()
    }
    fn is_persistent(&self) -> bool {
        true
    }
    fn describe(&self) -> String {
        self.inner.describe()
    }
}

/// Everything a reader sees in a frame.
#[derive(Debug, PartialEq)]
struct Contents {
    chunks: Vec<Vec<u8>>,
    metas: Vec<(String, Vec<u8>)>,
    vl: Vec<(String, Vec<u8>)>,
}

fn contents(path: &Path) -> Result<Contents, String> {
    let mut sc = OpenOptions::new()
        .read_only(true)
        .open(path)
        .map_err(|e| e.to_string())?;
    let mut chunks = Vec::new();
    for i in 0..sc.nchunks() {
        chunks.push(sc.decompress_chunk_vec(i).map_err(|e| e.to_string())?);
    }
    let metas = sc
        .metalayers()
        .iter()
        .map(|m| (m.name.clone(), m.content.clone()))
        .collect();
    let names: Vec<String> = sc.vlmeta_names().iter().map(|s| s.to_string()).collect();
    let mut vl = Vec::new();
    for n in names {
        let v = sc.vlmeta_get(&n).map_err(|e| e.to_string())?.unwrap();
        vl.push((n, v));
    }
    Ok(Contents { chunks, metas, vl })
}

fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// A frame of 5 chunks (one a zeros index code), a metalayer and a
/// vlmetalayer, with a hole (a deleted chunk) so compaction has work.
fn start_file(path: &Path) {
    let mut sc = SChunk::builder()
        .cparams(cparams())
        .chunksize(CS)
        .meta("m", b"\x93\x01\x02\x03")
        .fsync(false)
        .create_file(path)
        .unwrap();
    for k in 0..6 {
        sc.append_buffer(&data(CS, k)).unwrap();
    }
    sc.append_buffer(&[0u8; CS]).unwrap();
    sc.vlmeta_add("v", b"first value").unwrap();
    sc.delete_chunk(2).unwrap();
    // Keep the hole: no tidy on drop for this starting state.
    std::mem::forget(sc);
}

type Op = fn(&mut SChunk) -> oxiblosc::Result<()>;

fn ops() -> Vec<(&'static str, Op)> {
    vec![
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
        ("reorder", |sc| sc.reorder_chunks(&[5, 4, 3, 2, 1, 0])),
        ("set_slice", |sc| sc.set_slice(100, &data(6000, 53))),
        ("meta_update", |sc| sc.meta_update("m", b"\x93\x07\x08\x09")),
        ("vlmeta_add", |sc| sc.vlmeta_add("w", b"another")),
        ("vlmeta_update", |sc| sc.vlmeta_update("v", b"second value")),
        ("vlmeta_delete", |sc| sc.vlmeta_delete("v")),
        ("trim", |sc| sc.trim()),
        ("compact", |sc| sc.compact()),
        ("close", |sc| {
            sc.append_buffer(&data(CS, 54))?;
            sc.tidy()
        }),
    ]
}

fn open_faulty(path: &Path, budget: usize, code: i32) -> (SChunk, Rc<Cell<usize>>) {
    let file = fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .unwrap();
    let b = Rc::new(Cell::new(budget));
    let io = Faulty {
        inner: FileIo::with_path(file, 0, path),
        budget: b.clone(),
        code,
    };
    let sc = OpenOptions::new()
        .fsync(false)
        .open_io(Box::new(io))
        .unwrap();
    (sc, b)
}

/// Every change of a file frame, failing with ENOSPC, EFBIG and EIO at a
/// spread of byte budgets (all of them near the start and the end of its
/// writes): an error naming the file and the cause, and the file reopens
/// with its old contents (or the new ones, when the failure came after
/// the commit), nothing else in its directory.
#[test]
fn a_failed_write_leaves_the_previous_frame_and_names_the_file_and_cause() {
    let dir = tempdir("faults");
    let start = dir.join("start.b2frame");
    start_file(&start);
    let start_bytes = fs::read(&start).unwrap();
    let old = contents(&start).unwrap();
    fs::remove_file(&start).unwrap();
    let path = dir.join("f.b2frame");
    let mut runs = 0;
    for (name, op) in ops() {
        fs::write(&path, &start_bytes).unwrap();
        let (mut sc, b) = open_faulty(&path, usize::MAX - 1, ENOSPC);
        op(&mut sc).unwrap_or_else(|e| panic!("{name}: {e}"));
        drop(sc);
        let written = usize::MAX - 1 - b.get();
        let new = contents(&path).unwrap();
        if name != "trim" && name != "compact" {
            assert_ne!(new, old, "{name} changes something");
        }
        assert!(written > 0, "{name} writes");
        let mut budgets: Vec<usize> = (0..written.min(40)).collect();
        budgets.extend((written.saturating_sub(40)..written).filter(|&k| k >= 40));
        budgets.extend((1..20).map(|i| written * i / 20));
        budgets.sort_unstable();
        budgets.dedup();
        for (i, &k) in budgets.iter().enumerate() {
            let (code, cause) = [
                (ENOSPC, "No space left on device"),
                (EFBIG, "File too large"),
                (EIO, "Input/output error"),
            ][i % 3];
            fs::write(&path, &start_bytes).unwrap();
            let (mut sc, _) = open_faulty(&path, k, code);
            let r = op(&mut sc);
            drop(sc);
            let e = r.expect_err(&format!("{name}: fails at {k} of {written}"));
            let msg = e.to_string();
            assert!(
                msg.contains(&path.display().to_string()) && msg.contains(cause),
                "{name} at {k}: {msg}"
            );
            match e {
                oxiblosc::Error::Io(io) => assert_eq!(
                    io.kind(),
                    io::Error::from_raw_os_error(code).kind(),
                    "{name} at {k}"
                ),
                other => panic!("{name} at {k}: not an I/O error: {other}"),
            }
            let got = contents(&path).unwrap_or_else(|e| panic!("{name} at {k}: {e}"));
            assert!(got == old || got == new, "{name} at {k}: mixed contents");
            if code != EIO {
                // What the change wrote past the frame's end was cut back:
                // the file reopens writable (no stray bytes after it) ...
                let sc = OpenOptions::new().fsync(false).open(&path).unwrap();
                sc.check_writable()
                    .unwrap_or_else(|e| panic!("{name} at {k}: {e}"));
                // ... and no longer than before (but compact, whose first
                // step commits a copy of the chunks after the old end).
                let len = fs::metadata(&path).unwrap().len();
                if got == old && name != "compact" {
                    assert!(
                        len <= start_bytes.len() as u64,
                        "{name} at {k}: {len} bytes"
                    );
                }
            }
            assert_eq!(entries(&dir), ["f.b2frame"], "{name} at {k}");
            runs += 1;
        }
    }
    eprintln!("{runs} failed writes checked");
    assert!(runs > 500);
    fs::remove_dir_all(&dir).unwrap();
}

/// An NDArray edit is one change of the file (chunk list and `b2nd`
/// metalayer in one commit write, since session 18): an insert in the
/// middle, an append along the last axis (every edge chunk rebuilt), a
/// shrink and a box write over four chunks, each failing at a spread of
/// byte budgets, leave the array as it was or as edited, never new chunks
/// under the old shape or half the box written (they were several changes
/// before).
#[test]
fn ndarray_edits_fail_whole() {
    use oxiblosc::ndarray::{self, NdArray, NdMeta};
    type NdOp = fn(&mut SChunk, &mut NdMeta) -> oxiblosc::Result<()>;
    let dir = tempdir("faults-nd");
    let path = dir.join("a.b2nd");
    let meta = NdMeta::new(&[40, 30], &[10, 10], &[5, 5], "<i4");
    let data: Vec<u8> = (0..1200u32).flat_map(|v| v.to_le_bytes()).collect();
    {
        let mut sc = ndarray::builder(&meta, cparams())
            .unwrap()
            .fsync(false)
            .create_file(&path)
            .unwrap();
        ndarray::fill(&mut sc, &meta, &data).unwrap();
    }
    let start_bytes = fs::read(&path).unwrap();
    let array = |p: &Path| -> Result<(Vec<u64>, Vec<u8>), String> {
        let sc = OpenOptions::new()
            .read_only(true)
            .open(p)
            .map_err(|e| e.to_string())?;
        let mut a = NdArray::open(sc).map_err(|e| e.to_string())?;
        let v = a.to_vec().map_err(|e| e.to_string())?;
        Ok((a.meta().shape.clone(), v))
    };
    let old = array(&path).unwrap();
    let ops: Vec<(&str, NdOp)> = vec![
        ("insert", |sc, m| {
            ndarray::insert(sc, m, &[7u8; 10 * 30 * 4], 0, 20)
        }),
        ("append along axis 1", |sc, m| {
            ndarray::append(sc, m, &[9u8; 40 * 3 * 4], 1)
        }),
        ("shrink", |sc, m| ndarray::resize(sc, m, &[25, 30], None)),
        ("set_slice", |sc, m| {
            let b = [1u8; 10 * 10 * 4];
            ndarray::set_slice(sc, m, &[5, 5], &[15, 15], &b, &[10, 10])
        }),
    ];
    let mut runs = 0;
    for (name, op) in ops {
        fs::write(&path, &start_bytes).unwrap();
        let (mut sc, b) = open_faulty(&path, usize::MAX - 1, ENOSPC);
        op(&mut sc, &mut meta.clone()).unwrap_or_else(|e| panic!("{name}: {e}"));
        drop(sc);
        let written = usize::MAX - 1 - b.get();
        let new = array(&path).unwrap();
        assert_ne!(new, old, "{name} changes the array");
        let mut budgets: Vec<usize> = (0..written.min(30)).collect();
        budgets.extend((1..40).map(|i| written * i / 40));
        budgets.extend(written.saturating_sub(30)..written);
        budgets.sort_unstable();
        budgets.dedup();
        for (i, &k) in budgets.iter().enumerate() {
            let code = [ENOSPC, EFBIG, EIO][i % 3];
            fs::write(&path, &start_bytes).unwrap();
            let (mut sc, _) = open_faulty(&path, k, code);
            let r = op(&mut sc, &mut meta.clone());
            drop(sc);
            assert!(r.is_err(), "{name}: fails at {k} of {written}");
            let got = array(&path).unwrap_or_else(|e| panic!("{name} at {k}: {e}"));
            assert!(
                got == old || got == new,
                "{name} at {k} of {written}: mixed contents"
            );
            runs += 1;
        }
    }
    eprintln!("{runs} failed NDArray edits checked");
    fs::remove_dir_all(&dir).unwrap();
}

// ---------------------------------------------------------------------------
// Real EFBIG from the OS: a child process under `ulimit -f`.

const CHILD_ENV: &str = "OXIBLOSC_WRITE_FAULTS_CHILD";

/// The child's side: run one operation on the paths it is given and print
/// its error (or "OK").
#[test]
fn child_entry() {
    let Ok(op) = std::env::var(CHILD_ENV) else {
        return;
    };
    let a = PathBuf::from(std::env::var("OXIBLOSC_WF_A").unwrap());
    let b = std::env::var("OXIBLOSC_WF_B").map(PathBuf::from);
    let r: oxiblosc::Result<()> = (|| match op.as_str() {
        "append" => {
            let mut sc = OpenOptions::new().fsync(false).open(&a)?;
            let mut rng = Rng(3);
            let noise: Vec<u8> = (0..256 << 10).map(|_| rng.next() as u8).collect();
            sc.append_buffer(&noise).map(drop)
        }
        "meta_update" => {
            let mut sc = OpenOptions::new().fsync(false).open(&a)?;
            sc.meta_update("big", &[0x5a; 2000])
        }
        "meta_add" => {
            let mut sc = OpenOptions::new().fsync(false).offset(1000).open(&a)?;
            sc.meta_add("m", b"\xa3abc")
        }
        "save" => {
            let mut sc = OpenOptions::new().read_only(true).open(&a)?;
            sc.save(b.as_ref().unwrap()).map(drop)
        }
        _ => panic!("unknown op {op}"),
    })();
    match r {
        Ok(()) => println!("\nRESULT OK"),
        Err(e) => println!("\nRESULT ERR {e}"),
    }
}

/// Run `child_entry` for `op` with a file-size limit of `blocks` 512-byte
/// blocks (dash's and POSIX's `ulimit -f` unit) and SIGXFSZ ignored; its
/// "RESULT ..." line.
fn child(op: &str, blocks: u64, a: &Path, b: Option<&Path>) -> String {
    let exe = std::env::current_exe().unwrap();
    let mut cmd = Command::new("sh");
    cmd.args([
        "-c",
        "trap '' XFSZ; ulimit -f \"$1\" || exit 90; shift; exec \"$@\"",
        "sh",
        &blocks.to_string(),
    ])
    .arg(&exe)
    .args(["--exact", "child_entry", "--nocapture", "--test-threads=1"])
    .env(CHILD_ENV, op)
    .env("OXIBLOSC_WF_A", a);
    if let Some(b) = b {
        cmd.env("OXIBLOSC_WF_B", b);
    }
    let out = cmd.output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "child {op}: {out:?}");
    text.lines()
        .find(|l| l.starts_with("RESULT "))
        .unwrap_or_else(|| panic!("child {op} printed no result: {text}"))
        .to_string()
}

fn blocks_for(bytes: u64) -> u64 {
    bytes.div_ceil(512)
}

#[test]
fn efbig_from_the_os_leaves_files_intact_and_no_temporary_file() {
    let dir = tempdir("efbig");
    // A frame with a 2000-byte metalayer (its update spans sectors, so it
    // goes through a copy of the file renamed over it).
    let path = dir.join("f.b2frame");
    let mut sc = SChunk::builder()
        .cparams(cparams())
        .chunksize(64 << 10)
        .meta("big", &[0x11; 2000])
        .fsync(false)
        .create_file(&path)
        .unwrap();
    for k in 0..8 {
        sc.append_buffer(&data(64 << 10, k)).unwrap();
    }
    sc.close().unwrap();
    let len = fs::metadata(&path).unwrap().len();
    let old = contents(&path).unwrap();
    let bytes = fs::read(&path).unwrap();
    let cause = "File too large";
    let named = |r: &str, p: &Path| {
        assert!(r.starts_with("RESULT ERR"), "{r}");
        assert!(
            r.contains(cause) && r.contains(&p.display().to_string()),
            "{r}"
        );
    };
    // Appending an incompressible chunk past the limit.
    let r = child("append", blocks_for(len) + 8, &path, None);
    named(&r, &path);
    assert_eq!(contents(&path).unwrap(), old);
    assert_eq!(entries(&dir), ["f.b2frame"]);
    // A metalayer update through a copy: the copy hits the limit.
    let r = child("meta_update", blocks_for(len) / 2, &path, None);
    named(&r, &path);
    assert_eq!(fs::read(&path).unwrap(), bytes);
    assert_eq!(entries(&dir), ["f.b2frame"]);
    // ... and succeeds without the limit, old-or-new by rename, no copy left.
    let r = child("meta_update", blocks_for(len) + 64, &path, None);
    assert_eq!(r, "RESULT OK");
    assert_eq!(contents(&path).unwrap().metas[0].1, vec![0x5a; 2000]);
    assert_eq!(contents(&path).unwrap().chunks, old.chunks);
    assert_eq!(entries(&dir), ["f.b2frame"]);
    // save over an existing file.
    let saved = dir.join("saved.b2frame");
    fs::write(&saved, b"previous").unwrap();
    let r = child("save", blocks_for(len) / 2, &path, Some(&saved));
    named(&r, &saved);
    assert_eq!(fs::read(&saved).unwrap(), b"previous");
    assert_eq!(entries(&dir), ["f.b2frame", "saved.b2frame"]);
    let r = child("save", blocks_for(len) + 64, &path, Some(&saved));
    assert_eq!(r, "RESULT OK");
    assert_eq!(contents(&saved).unwrap().chunks, old.chunks);
    // Adding a metalayer to an empty frame at an offset in a big file:
    // the copy (the 200 KB prefix along) hits the limit.
    let host = dir.join("host.bin");
    fs::write(&host, vec![0xA5; 1000]).unwrap();
    let sc = SChunk::builder()
        .cparams(cparams())
        .fsync(false)
        .append_to_file(&host)
        .unwrap();
    drop(sc);
    let host_bytes = fs::read(&host).unwrap();
    let r = child("meta_add", 1, &host, None);
    named(&r, &host);
    assert_eq!(fs::read(&host).unwrap(), host_bytes);
    assert_eq!(entries(&dir), ["f.b2frame", "host.bin", "saved.b2frame"]);
    let r = child("meta_add", 64, &host, None);
    assert_eq!(r, "RESULT OK");
    assert_eq!(fs::read(&host).unwrap()[..1000], host_bytes[..1000]);
    let sc = SChunk::open_offset(&host, 1000).unwrap();
    assert_eq!(sc.meta_get("m"), Some(&b"\xa3abc"[..]));
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn efbig_in_a_directory_frame_leaves_no_chunk_file_behind() {
    let dir = tempdir("efbig-dir");
    let sdir = dir.join("s.b2sframe");
    let mut sc = SChunk::builder()
        .cparams(cparams())
        .chunksize(CS)
        .fsync(false)
        .create_dir(&sdir)
        .unwrap();
    sc.append_buffer(&data(CS, 1)).unwrap();
    drop(sc);
    let before = entries(&sdir);
    let old = contents(&sdir).unwrap();
    let r = child("append", 16, &sdir, None);
    assert!(
        r.starts_with("RESULT ERR") && r.contains("File too large"),
        "{r}"
    );
    assert!(r.contains(&sdir.display().to_string()), "{r}");
    assert_eq!(entries(&sdir), before);
    assert_eq!(contents(&sdir).unwrap(), old);
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn cli_compress_past_a_file_size_limit_keeps_the_old_output() {
    let dir = tempdir("efbig-cli");
    let input = dir.join("in.bin");
    let mut rng = Rng(9);
    let noise: Vec<u8> = (0..1 << 20).map(|_| rng.next() as u8).collect();
    fs::write(&input, &noise).unwrap();
    let out = dir.join("out.b2frame");
    fs::write(&out, b"the previous output").unwrap();
    let o = Command::new("sh")
        .args([
            "-c",
            "trap '' XFSZ; ulimit -f 256 || exit 90; exec \"$@\"",
            "sh",
        ])
        .arg(env!("CARGO_BIN_EXE_oxiblosc"))
        .args(["compress", "-f", "-q"])
        .arg(&input)
        .arg(&out)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{o:?}");
    assert_ne!(o.status.code(), Some(90));
    assert!(
        err.contains(&out.display().to_string()) && err.contains("File too large"),
        "{err}"
    );
    assert_eq!(fs::read(&out).unwrap(), b"the previous output");
    assert_eq!(entries(&dir), ["in.bin", "out.b2frame"]);
    fs::remove_dir_all(&dir).unwrap();
}
