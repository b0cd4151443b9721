//! Concurrency (issue #15 item 5): what may be shared across threads, and
//! readers of a file frame while a writer appends to it — from another
//! process (this test binary run again as the writer, as C-Blosc2's own
//! shared-reader test does) and from other threads. Every open sees a
//! valid old or new frame: its chunks are exactly the ones appended so
//! far, never a torn index, never a panic.

mod support;
use oxiblosc::schunk::{OpenOptions, SChunk};
use oxiblosc::{CParams, Codec, Compressor, DParams, Decompressor};
use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use support::tempdir;

// ---------------------------------------------------------------------------
// What is Send / Sync (checked at compile time).

const fn send_sync<T: Send + Sync>() {}

const _: () = {
    send_sync::<CParams>();
    send_sync::<DParams>();
    send_sync::<Compressor>();
    send_sync::<Decompressor>();
    send_sync::<oxiblosc::Error>();
    send_sync::<oxiblosc::frame::Frame>();
    send_sync::<oxiblosc::frame::FrameHeader>();
    send_sync::<oxiblosc::frame::FileIo>();
    send_sync::<oxiblosc::schunk::Storage>();
    send_sync::<oxiblosc::schunk::OpenOptions>();
    send_sync::<oxiblosc::bloscpack::Reader<Vec<u8>>>();
    send_sync::<oxiblosc::bloscpack::Reader<&[u8]>>();
    send_sync::<oxiblosc::packed::PackedReader<'static>>();
};

/// `SChunk` is neither `Send` nor `Sync` (it may hold a caller's
/// `FrameIo`, which need not be): this resolves only when `T: !Send`
/// (two candidate impls otherwise), so it stops compiling if `SChunk`
/// ever becomes `Send` without the docs saying so.
trait AmbiguousIfSend<A> {
    fn check() {}
}
impl<T: ?Sized> AmbiguousIfSend<()> for T {}
impl<T: ?Sized + Send> AmbiguousIfSend<u8> for T {}
trait AmbiguousIfSync<A> {
    fn check() {}
}
impl<T: ?Sized> AmbiguousIfSync<()> for T {}
impl<T: ?Sized + Sync> AmbiguousIfSync<u8> for T {}

#[test]
fn schunk_is_not_send_or_sync() {
    <SChunk as AmbiguousIfSend<_>>::check();
    <SChunk as AmbiguousIfSync<_>>::check();
}

/// One `Compressor` / `Decompressor` per thread, or one shared read-only
/// through `&` (`Sync`: its methods that compress take `&mut`, so sharing
/// means one per thread); the bytes do not depend on the thread.
#[test]
fn compressors_move_across_threads_and_give_the_same_bytes() {
    let p = CParams::default().codec(Codec::Lz4).typesize(4).nthreads(2);
    let data = support::data(1 << 20, 5);
    let want = oxiblosc::compress(&data, &p).unwrap();
    let data = Arc::new(data);
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let mut c = Compressor::new(p.clone());
            let mut d = Decompressor::new(DParams::default().nthreads(2));
            let data = data.clone();
            std::thread::spawn(move || {
                let out = c.compress(&data).unwrap();
                assert_eq!(d.decompress(&out).unwrap(), *data);
                out
            })
        })
        .collect();
    for h in handles {
        assert_eq!(h.join().unwrap(), want);
    }
}

/// Four threads share one reader through `&`: each decodes all 64 chunks
/// of 16 KiB (`decode(i)` into a buffer of that size, returning the bytes
/// written) in its own order and must get `data`'s.
fn four_threads_read_every_chunk(data: &[u8], decode: impl Fn(usize, &mut [u8]) -> usize + Sync) {
    const CHUNK: usize = 16 << 10;
    let n = data.len() / CHUNK;
    assert_eq!(n, 64);
    std::thread::scope(|s| {
        for t in 0..4 {
            let decode = &decode;
            s.spawn(move || {
                let mut out = vec![0u8; CHUNK];
                for k in 0..n {
                    let i = (k * 7 + t * 13) % n;
                    assert_eq!(decode(i, &mut out), CHUNK, "thread {t}, chunk {i}");
                    assert!(
                        out == data[i * CHUNK..(i + 1) * CHUNK],
                        "thread {t}, chunk {i}"
                    );
                }
            });
        }
    });
}

/// One Bloscpack `Reader` shared by four threads (it keeps one
/// decompressor behind a lock).
#[test]
fn a_bloscpack_reader_is_shared_across_threads() {
    use oxiblosc::bloscpack::{self, Options, Reader};
    let data = support::data(1 << 20, 3);
    let opts = Options::default()
        .cparams(CParams::default().codec(Codec::Zstd).typesize(4))
        .chunk_size(16 << 10);
    let blp = bloscpack::pack(&data, &opts).unwrap();
    let r = Reader::new(&blp[..]).unwrap();
    assert_eq!(r.nchunks(), 64);
    four_threads_read_every_chunk(&data, |i, out| {
        let got = r.decompress_chunk(i).unwrap();
        out[..got.len()].copy_from_slice(&got);
        got.len()
    });
    assert!(r.decompress_all().unwrap() == data);
}

/// A `PackedReader` shared the same way (it too keeps one decompressor
/// behind a lock), with delta on so each chunk also reads the reference.
#[test]
fn a_packed_reader_is_shared_across_threads() {
    use oxiblosc::packed::{self, PackedReader};
    let data = support::data(1 << 20, 5);
    let p = CParams::default()
        .codec(Codec::Lz4)
        .typesize(4)
        .filters(&[oxiblosc::Filter::Delta, oxiblosc::Filter::Shuffle]);
    let bytes = packed::pack(&data, &p, 16 << 10).unwrap();
    let r = PackedReader::new(&bytes).unwrap();
    assert_eq!(r.nchunks(), 64);
    four_threads_read_every_chunk(&data, |i, out| r.decompress_chunk_into(i, out).unwrap());
    assert!(r.unpack().unwrap() == data);
}

// ---------------------------------------------------------------------------
// Readers while a writer appends.

const CS: usize = 8 << 10;
const APPENDS: u64 = 1500;
const CHILD_ENV: &str = "OXIBLOSC_CONCURRENCY_WRITER";

fn chunk_data(k: u64) -> Vec<u8> {
    support::data(CS, k as u32)
}

fn cparams() -> CParams {
    CParams::default().codec(Codec::Lz4).typesize(4)
}

/// The writer: append chunks 1..=APPENDS, then close.
fn write_all(path: &Path) {
    write_all_paced(path, None)
}

/// As [`write_all`]; with `seen`, every 100 appends wait (up to 30 s) until
/// the reader reports in that file that it has seen them, so that a busy
/// machine cannot let the writer finish before the reader looks.
fn write_all_paced(path: &Path, seen: Option<&Path>) {
    let mut sc = OpenOptions::new().fsync(false).open(path).unwrap();
    for k in 1..=APPENDS {
        sc.append_buffer(&chunk_data(k)).unwrap();
        if k % 100 == 0 {
            // A vlmetalayer change moves the trailer too.
            sc.vlmeta_set("progress", &k.to_le_bytes()).unwrap();
            if let Some(seen) = seen {
                let until = std::time::Instant::now() + std::time::Duration::from_secs(30);
                while std::time::Instant::now() < until
                    && fs::read_to_string(seen)
                        .ok()
                        .and_then(|s| s.trim().parse::<u64>().ok())
                        .is_none_or(|n| n < k)
                {
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
            }
        }
    }
    sc.close().unwrap();
}

/// The writer process's side (this binary, run by the test below).
#[test]
fn writer_child() {
    if let Ok(p) = std::env::var(CHILD_ENV) {
        let seen = Path::new(&p).with_extension("seen");
        write_all_paced(Path::new(&p), Some(&seen));
        println!("\nWRITER DONE");
    }
}

fn new_frame(path: &Path) {
    let mut sc = SChunk::builder()
        .cparams(cparams())
        .chunksize(CS)
        .fsync(false)
        .create_file(path)
        .unwrap();
    sc.append_buffer(&chunk_data(0)).unwrap();
    sc.close().unwrap();
}

/// One reader's open: a valid frame whose chunks are chunks 0..n of the
/// writer's, n never going back; checks the first, the last and one more.
fn read_once(path: &Path, last_n: &mut usize, probe: &mut u64) {
    let mut sc = OpenOptions::new()
        .read_only(true)
        .open(path)
        .unwrap_or_else(|e| panic!("open after {last_n} chunks: {e}"));
    let n = sc.nchunks();
    assert!(n >= *last_n, "{n} chunks after {last_n}");
    assert!(n as u64 <= APPENDS + 1);
    *probe = (*probe * 31 + 7) % n as u64;
    for i in [0, n - 1, *probe as usize] {
        let got = sc
            .decompress_chunk_vec(i)
            .unwrap_or_else(|e| panic!("chunk {i} of {n}: {e}"));
        assert_eq!(got, chunk_data(i as u64), "chunk {i} of {n}");
    }
    if let Some(v) = sc.vlmeta_get("progress").unwrap() {
        let k = u64::from_le_bytes(v.try_into().unwrap());
        assert!((k as usize) < n, "progress {k} with {n} chunks");
    }
    *last_n = n;
}

fn read_all(path: &Path) {
    let mut sc = SChunk::open(path).unwrap();
    assert_eq!(sc.nchunks() as u64, APPENDS + 1);
    for i in 0..sc.nchunks() {
        assert_eq!(sc.decompress_chunk_vec(i).unwrap(), chunk_data(i as u64));
    }
    // Closed: tidy (the holes of reopening the one-chunk frame, well
    // under 1 %, stay).
    assert!(
        sc.dead_bytes() * 100 <= sc.cbytes(),
        "{} dead",
        sc.dead_bytes()
    );
    let h = sc.frame_header().clone();
    assert_eq!(h.frame_len, fs::metadata(path).unwrap().len());
}

#[test]
fn a_reader_process_sees_old_or_new_frames_while_another_appends() {
    let dir = tempdir("conc-proc");
    let path = dir.join("f.b2frame");
    new_frame(&path);
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "writer_child", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, &path)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let (mut last_n, mut probe, mut opens) = (0, 0, 0);
    let mut seen = std::collections::BTreeSet::new();
    loop {
        let done = child.try_wait().unwrap().is_some();
        read_once(&path, &mut last_n, &mut probe);
        seen.insert(last_n);
        opens += 1;
        // Tell the writer how far the reader got (it waits every 100).
        let _ = fs::write(
            path.with_extension("seen"),
            format!("{}\n", last_n.saturating_sub(1)),
        );
        if done {
            break;
        }
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("WRITER DONE"));
    eprintln!("{opens} opens saw {} different frames", seen.len());
    // The reader ran while the writer worked: it saw frames in between.
    assert!(seen.len() > 2, "{seen:?}");
    read_all(&path);
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn reader_threads_see_old_or_new_frames_while_a_thread_appends() {
    let dir = tempdir("conc-threads");
    let path = dir.join("f.b2frame");
    new_frame(&path);
    let stop = Arc::new(AtomicBool::new(false));
    let readers: Vec<_> = (0..2)
        .map(|t| {
            let path = path.clone();
            let stop = stop.clone();
            std::thread::spawn(move || {
                // Each thread opens its own handle (SChunk is not Send).
                let (mut last_n, mut probe, mut opens) = (0, t, 0);
                while !stop.load(Ordering::Relaxed) {
                    read_once(&path, &mut last_n, &mut probe);
                    opens += 1;
                }
                opens
            })
        })
        .collect();
    write_all(&path);
    stop.store(true, Ordering::Relaxed);
    for r in readers {
        let opens = r.join().unwrap();
        assert!(opens > 0);
    }
    read_all(&path);
    fs::remove_dir_all(&dir).unwrap();
}

// ---------------------------------------------------------------------------
// Another writer after the frame's end.

/// Bytes another writer puts after a frame once it is open (another frame
/// appended to the same file, as C's `blosc2_schunk_append_file` does, or
/// the file cut) are never overwritten or truncated by this handle: every
/// change is refused, naming what it found, and so is the tidy on drop.
/// Opened again with `discard_trailing`, changes go on.
#[test]
fn bytes_written_after_an_open_frame_are_not_overwritten() {
    let dir = tempdir("after-open");
    let path = dir.join("f.b2frame");
    new_frame(&path);
    let mut sc = OpenOptions::new().fsync(false).open(&path).unwrap();
    // A change first, so that dropping the handle has a tidy to do.
    sc.append_buffer(&chunk_data(1)).unwrap();
    sc.vlmeta_set("k", b"v").unwrap();
    let frame = fs::read(&path).unwrap();
    let tail = vec![0xEE; 4321];
    {
        use std::io::Write;
        let mut f = fs::OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(&tail).unwrap();
    }
    let whole = [frame.clone(), tail.clone()].concat();
    type Edit = fn(&mut SChunk) -> oxiblosc::Result<()>;
    let edits: [(&str, Edit); 10] = [
        ("append", |sc| sc.append_buffer(&chunk_data(2)).map(drop)),
        ("insert", |sc| {
            let c = sc.get_chunk(0)?.into_owned();
            sc.insert_chunk(0, &c)
        }),
        ("update", |sc| {
            let c = sc.get_chunk(1)?.into_owned();
            sc.update_chunk(0, &c)
        }),
        ("delete", |sc| sc.delete_chunk(0)),
        ("vlmeta", |sc| sc.vlmeta_set("k", b"w")),
        ("vlmeta_delete", |sc| sc.vlmeta_delete("k")),
        ("set_slice", |sc| sc.set_slice(0, &[1, 2, 3, 4])),
        ("trim", |sc| sc.trim()),
        ("compact", |sc| sc.compact()),
        ("tidy", |sc| sc.tidy()),
    ];
    for (what, edit) in edits {
        let e = edit(&mut sc).expect_err(what).to_string();
        assert!(e.contains("4321 bytes now follow the frame"), "{what}: {e}");
        assert_eq!(fs::read(&path).unwrap(), whole, "{what} wrote");
    }
    // Reads still work.
    assert_eq!(sc.nchunks(), 2);
    assert_eq!(sc.decompress_chunk_vec(1).unwrap(), chunk_data(1));
    drop(sc);
    assert_eq!(fs::read(&path).unwrap(), whole, "the tidy on drop wrote");

    // The same for a file cut under the frame.
    let mut sc = OpenOptions::new()
        .fsync(false)
        .discard_trailing(true)
        .open(&path)
        .unwrap();
    sc.append_buffer(&chunk_data(2)).unwrap();
    let grown = fs::read(&path).unwrap();
    assert!(grown.len() > frame.len());
    let cut = &grown[..grown.len() - 10];
    fs::write(&path, cut).unwrap();
    let e = sc.append_buffer(&chunk_data(3)).unwrap_err().to_string();
    assert!(e.contains("cut"), "{e}");
    drop(sc);
    assert_eq!(fs::read(&path).unwrap(), cut);

    // With discard_trailing the bytes after the frame are free.
    fs::write(&path, &whole).unwrap();
    let mut sc = OpenOptions::new()
        .fsync(false)
        .discard_trailing(true)
        .open(&path)
        .unwrap();
    {
        use std::io::Write;
        let mut f = fs::OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(&tail).unwrap();
    }
    sc.append_buffer(&chunk_data(2)).unwrap();
    sc.close().unwrap();
    let mut sc = SChunk::open(&path).unwrap();
    assert_eq!(sc.nchunks(), 3);
    assert_eq!(sc.decompress_chunk_vec(2).unwrap(), chunk_data(2));
    sc.check_writable().unwrap();
}
