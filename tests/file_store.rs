//! `oxiblosc::frame::io::FileStore`: a super-chunk built or opened with a
//! store reads and writes every file of its frame (a contiguous frame's
//! file; a sparse frame's index and chunk files) through it. The store
//! here counts its calls and keeps each file at another path than the one
//! the super-chunk names, so a file access that went around it would find
//! nothing there (or leave a file behind).

mod support;

use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use oxiblosc::frame::FrameIo;
use oxiblosc::frame::io::{FileStore, OpenMode, StdFileStore};
use oxiblosc::schunk::{OpenOptions, SChunk, Storage};
use oxiblosc::{CParams, Codec};

#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Counts {
    open: usize,
    len: usize,
    read: usize,
    write: usize,
    set_len: usize,
    rename: usize,
    remove: usize,
    /// Bytes read.
    read_bytes: u64,
    /// Every path asked for.
    paths: Vec<PathBuf>,
}

/// Keeps `P` at `P.real` (and `D/NAME` at `D.real/NAME`); counts.
struct Redirect {
    counts: Arc<Mutex<Counts>>,
    renames: bool,
    /// Fail every write after this many.
    fail_writes_after: Option<usize>,
}

fn real(path: &Path) -> PathBuf {
    match (path.parent(), path.file_name()) {
        (Some(dir), Some(name)) if is_sframe(dir) => {
            let mut d = dir.as_os_str().to_owned();
            d.push(".real");
            PathBuf::from(d).join(name)
        }
        _ => {
            let mut p = path.as_os_str().to_owned();
            p.push(".real");
            PathBuf::from(p)
        }
    }
}

/// The test's sparse frames are directories named `*.sframe`.
fn is_sframe(dir: &Path) -> bool {
    dir.extension().is_some_and(|e| e == "sframe")
}

struct Counted {
    inner: Box<dyn FrameIo>,
    counts: Arc<Mutex<Counts>>,
    fail_writes_after: Option<usize>,
}

impl FrameIo for Counted {
    fn storage_len(&mut self) -> io::Result<u64> {
        self.counts.lock().unwrap().len += 1;
        self.inner.storage_len()
    }
    fn read_exact_at(&mut self, pos: u64, buf: &mut [u8]) -> io::Result<()> {
        {
            let mut c = self.counts.lock().unwrap();
            c.read += 1;
            c.read_bytes += buf.len() as u64;
        }
        self.inner.read_exact_at(pos, buf)
    }
    fn write_all_at(&mut self, pos: u64, data: &[u8]) -> io::Result<()> {
        let n = {
            let mut c = self.counts.lock().unwrap();
            c.write += 1;
            c.write
        };
        if self.fail_writes_after.is_some_and(|k| n > k) {
            return Err(io::Error::other("injected write failure"));
        }
        self.inner.write_all_at(pos, data)
    }
    fn set_len(&mut self, len: u64) -> io::Result<()> {
        self.counts.lock().unwrap().set_len += 1;
        self.inner.set_len(len)
    }
    fn sync(&mut self) -> io::Result<()> {
        self.inner.sync()
    }
    fn is_persistent(&self) -> bool {
        true
    }
}

impl FileStore for Redirect {
    fn open(&self, path: &Path, mode: OpenMode) -> io::Result<Box<dyn FrameIo>> {
        {
            let mut c = self.counts.lock().unwrap();
            c.open += 1;
            c.paths.push(path.to_path_buf());
        }
        Ok(Box::new(Counted {
            inner: StdFileStore.open(&real(path), mode)?,
            counts: self.counts.clone(),
            fail_writes_after: self.fail_writes_after,
        }))
    }
    fn remove_file(&self, path: &Path) -> io::Result<()> {
        self.counts.lock().unwrap().remove += 1;
        std::fs::remove_file(real(path))
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.counts.lock().unwrap().rename += 1;
        std::fs::rename(real(from), real(to))
    }
    fn can_rename(&self) -> bool {
        self.renames
    }
    fn create_dir(&self, path: &Path) -> io::Result<()> {
        // The directory itself is the system's (opening asks the system
        // whether a path is one); its files live beside it.
        std::fs::create_dir(path)?;
        let mut r = path.as_os_str().to_owned();
        r.push(".real");
        std::fs::create_dir(r)
    }
}

fn store(renames: bool) -> (Arc<Redirect>, Arc<Mutex<Counts>>) {
    let counts = Arc::new(Mutex::new(Counts::default()));
    let s = Arc::new(Redirect {
        counts: counts.clone(),
        renames,
        fail_writes_after: None,
    });
    (s, counts)
}

fn params() -> CParams {
    CParams::default().codec(Codec::Lz4).typesize(4).nthreads(2)
}

/// Every kind of change, then a reopen through the store; the contents
/// checked after each step against a model.
fn exercise(path: &Path, sparse: bool, renames: bool) {
    let (s, counts) = store(renames);
    let b = SChunk::builder()
        .cparams(params())
        .fsync(false)
        .meta("m", b"abc")
        .store(s.clone());
    let mut sc = if sparse {
        b.create_dir(path).unwrap()
    } else {
        b.create_file(path).unwrap()
    };
    let chunk = |k: u32| -> Vec<u8> {
        (0..20_000u32)
            .flat_map(|i| (i / 7 + k).to_le_bytes())
            .collect()
    };
    let mut model: Vec<Vec<u8>> = Vec::new();
    for k in 0..5 {
        sc.append_buffer(&chunk(k)).unwrap();
        model.push(chunk(k));
    }
    let c9 = oxiblosc::compress(&chunk(9), &params()).unwrap();
    sc.update_chunk(1, &c9).unwrap();
    model[1] = chunk(9);
    sc.insert_chunk(0, &c9).unwrap();
    model.insert(0, chunk(9));
    sc.delete_chunk(3).unwrap();
    model.remove(3);
    sc.vlmeta_add("note", b"through the store").unwrap();
    sc.meta_update("m", b"xyz").unwrap();
    for (i, m) in model.iter().enumerate() {
        assert_eq!(&sc.decompress_chunk_vec(i).unwrap(), m, "chunk {i}");
    }
    let after_writes = counts.lock().unwrap().clone();
    assert!(after_writes.open > 0 && after_writes.write > 0 && after_writes.set_len > 0);
    if sparse {
        // Index rewrites: renamed into place, or rewritten in place.
        assert_eq!(after_writes.rename > 0, renames);
        assert!(after_writes.remove > 0, "the dropped chunk file is removed");
    }
    drop(sc);
    // Reopened through the store.
    let mut sc = OpenOptions::new().store(s.clone()).open(path).unwrap();
    if !sparse {
        assert_eq!(sc.storage(), Storage::Custom);
    } else {
        assert_eq!(sc.storage(), Storage::Directory(path.to_path_buf()));
    }
    assert_eq!(sc.nchunks(), model.len());
    assert_eq!(
        sc.vlmeta_get("note").unwrap().unwrap(),
        b"through the store"
    );
    assert_eq!(sc.metalayers()[0].content, b"xyz");
    let reads = counts.lock().unwrap().read;
    for (i, m) in model.iter().enumerate() {
        assert_eq!(&sc.decompress_chunk_vec(i).unwrap(), m, "chunk {i}");
    }
    assert!(counts.lock().unwrap().read > reads);
    drop(sc);
    // Nothing went around the store: the super-chunk's own path holds no
    // frame bytes (a sparse frame's directory stays empty), and every path
    // the store was asked for is the frame's file or in its directory.
    if sparse {
        assert_eq!(std::fs::read_dir(path).unwrap().count(), 0);
        let mut r = path.as_os_str().to_owned();
        r.push(".real");
        let files = std::fs::read_dir(PathBuf::from(r)).unwrap().count();
        assert_eq!(files, model.len() + 1, "chunk files and the index");
        assert!(
            counts
                .lock()
                .unwrap()
                .paths
                .iter()
                .all(|p| p.starts_with(path))
        );
    } else {
        assert!(!path.exists());
        assert!(counts.lock().unwrap().paths.iter().all(|p| p == path));
        // The file at the store's path is a frame the system's files open.
        let mut plain = SChunk::open(real(path)).unwrap();
        assert_eq!(plain.decompress_chunk_vec(0).unwrap(), model[0]);
    }
}

#[test]
fn a_contiguous_frame_goes_through_the_store() {
    let dir = support::tempdir("store-cframe");
    exercise(&dir.join("f.b2frame"), false, true);
}

#[test]
fn a_sparse_frame_goes_through_the_store_with_and_without_renames() {
    let dir = support::tempdir("store-sframe");
    exercise(&dir.join("a.sframe"), true, true);
    exercise(&dir.join("b.sframe"), true, false);
}

#[test]
fn store_errors_are_errors() {
    let dir = support::tempdir("store-errors");
    // A file the store cannot open.
    let (s, _) = store(true);
    assert!(
        OpenOptions::new()
            .store(s.clone())
            .open(dir.join("missing.b2frame"))
            .is_err()
    );
    // Writes that start failing: the change fails with the store's error,
    // and what was committed before still reads back.
    for sparse in [false, true] {
        let counts = Arc::new(Mutex::new(Counts::default()));
        let s = Arc::new(Redirect {
            counts: counts.clone(),
            renames: true,
            fail_writes_after: Some(4),
        });
        let path = dir.join(if sparse { "w.sframe" } else { "w.b2frame" });
        let b = SChunk::builder()
            .cparams(params())
            .fsync(false)
            .store(s.clone());
        let mut sc = if sparse {
            b.create_dir(&path).unwrap()
        } else {
            b.create_file(&path).unwrap()
        };
        let data = vec![3u8; 40_000];
        let mut ok = 0;
        let err = loop {
            match sc.append_buffer(&data) {
                Ok(_) => ok += 1,
                Err(e) => break e,
            }
            assert!(ok < 10, "writes never failed");
        };
        assert!(err.to_string().contains("injected write failure"), "{err}");
        assert_eq!(sc.nchunks(), ok);
        drop(sc);
        let mut again = OpenOptions::new().store(store(true).0).open(&path).unwrap();
        assert_eq!(again.nchunks(), ok);
        for i in 0..ok {
            assert_eq!(again.decompress_chunk_vec(i).unwrap(), data);
        }
    }
}

/// A directory frame written out as one contiguous frame reads each chunk
/// file's bytes once (the layout pass reads each file's header alone, and
/// runs once), and its length is measured from the headers alone.
#[test]
fn a_directory_frame_is_read_once_to_be_written_out() {
    let dir = support::tempdir("store-once");
    let path = dir.join("f.sframe");
    let (s, counts) = store(true);
    let mut sc = SChunk::builder()
        .cparams(params().clevel(1))
        .fsync(false)
        .store(s)
        .create_dir(&path)
        .unwrap();
    let mut state = 12345u64;
    let mut files = 0u64;
    for _ in 0..8 {
        let chunk: Vec<u8> = (0..100_000)
            .map(|_| {
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
                (state >> 56) as u8
            })
            .collect();
        sc.append_buffer(&chunk).unwrap();
    }
    for i in 0..sc.nchunks() {
        files += sc.get_chunk(i).unwrap().len() as u64;
    }
    assert!(files > 800_000, "{files}");
    let count = |counts: &Arc<Mutex<Counts>>| std::mem::take(&mut *counts.lock().unwrap());
    count(&counts);
    let len = sc.cframe_len().unwrap();
    let c = count(&counts);
    assert!(
        c.read_bytes <= 8 * 64,
        "cframe_len read {} bytes",
        c.read_bytes
    );
    let mut out = Vec::new();
    assert_eq!(sc.write_cframe(&mut out).unwrap(), len);
    let c = count(&counts);
    assert!(
        c.read_bytes <= files + 8 * 64,
        "write_cframe read {} bytes of {files} in chunk files",
        c.read_bytes
    );
    assert_eq!(out.len() as u64, len);
    // to_cframe, to_cframe_into and a caller's buffer sized by
    // cframe_layout (C's to_buffer, Python's to_cframe) lay the frame out
    // once too: each file opened twice (its header, then all of it).
    for way in ["to_cframe", "to_cframe_into", "cframe_layout"] {
        let got = match way {
            "to_cframe" => sc.to_cframe().unwrap(),
            "to_cframe_into" => {
                let mut buf = vec![0u8; len as usize];
                sc.to_cframe_into(&mut buf).unwrap();
                buf
            }
            _ => {
                let layout = sc.cframe_layout().unwrap();
                let c = count(&counts);
                assert!(
                    c.read_bytes <= 8 * 64 && c.open <= 8,
                    "the layout opened {} files and read {} bytes",
                    c.open,
                    c.read_bytes
                );
                let mut buf = vec![0u8; layout.frame_len() as usize];
                assert_eq!(layout.write_into(&mut buf).unwrap(), buf.len());
                buf
            }
        };
        let c = count(&counts);
        assert!(got == out, "{way}");
        assert!(
            c.read_bytes <= files + 8 * 64 && c.open <= 2 * 8,
            "{way} opened {} files and read {} bytes of {files}",
            c.open,
            c.read_bytes
        );
    }
    // A buffer a byte short is refused before any chunk file is read.
    let layout = sc.cframe_layout().unwrap();
    count(&counts);
    let mut short = vec![0u8; len as usize - 1];
    assert!(matches!(
        layout.write_into(&mut short),
        Err(oxiblosc::Error::DstTooSmall { needed, available })
            if needed as u64 == len && available as u64 == len - 1
    ));
    assert_eq!(count(&counts).read_bytes, 0);
    assert_eq!(SChunk::from_cframe(out).unwrap().nchunks(), 8);
}
