//! Freeing a super-chunk tidies the frame file it changed: C-Blosc2
//! updates a frame file in place and leaves it as compact as written
//! (its `test_b2nd_resize` grows a frame 100 times and wants it within
//! 4 KiB of the frame written at once); our crash-safe changes leave
//! replaced chunks as holes and a free reserve until `SChunk::tidy`. A
//! handle that only read leaves the file alone, and a free never waits
//! for a frame lock another handle holds (`BLOSC_LOCKING`). One test: it
//! sets `BLOSC_LOCKING` part way, and the environment is the process's.

use std::ffi::CString;
use std::path::PathBuf;
use std::time::Duration;

use blosc2::schunk::{
    blosc2_schunk, blosc2_schunk_append_buffer, blosc2_schunk_decompress_chunk,
    blosc2_schunk_delete_chunk, blosc2_schunk_free, blosc2_schunk_lock, blosc2_schunk_new,
    blosc2_schunk_open, blosc2_schunk_unlock, blosc2_storage,
};
use blosc2::v2::{CPARAMS_DEFAULTS, DPARAMS_DEFAULTS};

const CHUNK: usize = 64 << 10;

fn dir() -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("free_tidy-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Chunk `k`'s bytes: a ramp with a little noise, compressing about 4x.
fn data(k: u32) -> Vec<u8> {
    let mut x = 0x9e37_79b9_u32 ^ k;
    (0..CHUNK as u32)
        .map(|i| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            ((i / 64) as u8).wrapping_add((x >> 30) as u8)
        })
        .collect()
}

/// A contiguous frame at `path` of the chunks `ks` (`data(k)` each),
/// then with `delete` its third deleted. Not freed.
fn frame(path: &CString, ks: &[u32], delete: bool) -> *mut blosc2_schunk {
    let _ = std::fs::remove_file(path.to_str().unwrap());
    let mut cp = CPARAMS_DEFAULTS;
    cp.typesize = 4;
    let mut dp = DPARAMS_DEFAULTS;
    let mut st = blosc2_storage {
        contiguous: true,
        urlpath: path.as_ptr().cast_mut(),
        cparams: &mut cp,
        dparams: &mut dp,
        io: std::ptr::null_mut(),
    };
    // SAFETY: a valid storage whose parameters live through the call.
    let s = unsafe { blosc2_schunk_new(&mut st) };
    assert!(!s.is_null());
    for (i, &k) in ks.iter().enumerate() {
        let d = data(k);
        // SAFETY: a live handle; CHUNK readable bytes.
        let rc = unsafe { blosc2_schunk_append_buffer(s, d.as_ptr().cast(), CHUNK as i32) };
        assert_eq!(rc, i as i64 + 1);
    }
    if delete {
        // SAFETY: a live handle.
        assert_eq!(
            unsafe { blosc2_schunk_delete_chunk(s, 2) },
            ks.len() as i64 - 1
        );
    }
    s
}

/// 8 chunks, the third deleted: a hole in the file, and the reserve
/// before the index.
fn changed_frame(path: &CString) -> *mut blosc2_schunk {
    frame(path, &[0, 1, 2, 3, 4, 5, 6, 7], true)
}

/// The frame file of the changed frame's chunks written at once and
/// freed (then as compact as C-Blosc2 writes it): its bytes.
fn written_at_once(path: &CString) -> Vec<u8> {
    let s = frame(path, &[0, 1, 3, 4, 5, 6, 7], false);
    // SAFETY: a live handle, freed once.
    unsafe { blosc2_schunk_free(s) };
    std::fs::read(path.to_str().unwrap()).unwrap()
}

fn open(path: &CString) -> *mut blosc2_schunk {
    // SAFETY: a NUL-terminated path.
    let s = unsafe { blosc2_schunk_open(path.as_ptr()) };
    assert!(!s.is_null());
    s
}

/// Every chunk of the frame at `path` decodes to what was appended.
fn check_chunks(path: &CString) {
    let s = open(path);
    let mut out = vec![0u8; CHUNK];
    for (i, k) in [0, 1, 3, 4, 5, 6, 7].into_iter().enumerate() {
        // SAFETY: a live handle; out holds CHUNK writable bytes.
        let n = unsafe {
            blosc2_schunk_decompress_chunk(s, i as i64, out.as_mut_ptr().cast(), CHUNK as i32)
        };
        assert_eq!(n, CHUNK as i32);
        assert!(out == data(k), "chunk {i}");
    }
    // SAFETY: a live handle, freed once.
    unsafe { blosc2_schunk_free(s) };
}

fn size(path: &CString) -> u64 {
    std::fs::metadata(path.to_str().unwrap()).unwrap().len()
}

#[test]
fn freeing_a_changed_frame_tidies_it_and_never_waits() {
    let d = dir();
    for locking in [false, true] {
        if locking {
            // SAFETY: the only test of this binary: no other thread reads
            // the environment.
            unsafe { std::env::set_var("BLOSC_LOCKING", "1") };
        }
        let path = CString::new(d.join(format!("a{locking}.b2frame")).to_str().unwrap()).unwrap();

        // A changed frame: holes and a reserve, dropped by the free.
        let other = d.join(format!("b{locking}.b2frame"));
        let compact = written_at_once(&CString::new(other.to_str().unwrap()).unwrap());
        let s = changed_frame(&path);
        let before = size(&path);
        assert!(
            before > compact.len() as u64 + CHUNK as u64 / 8,
            "{before} bytes for a {}-byte frame",
            compact.len()
        );
        // SAFETY: a live handle, freed once.
        unsafe { blosc2_schunk_free(s) };
        // No larger than the same chunks written at once (which keeps the
        // 35-byte trailer of its empty frame as a hole: `SChunk::tidy`).
        let after = size(&path);
        assert!(
            after <= compact.len() as u64 && after + 64 > compact.len() as u64,
            "locking {locking}: {after} bytes after the free, {} written at once",
            compact.len()
        );
        check_chunks(&path);

        // A handle that only read leaves the file as it is.
        let s = changed_frame(&path);
        let reader = open(&path);
        let mut out = vec![0u8; CHUNK];
        // SAFETY: a live handle; out holds CHUNK writable bytes.
        let n = unsafe {
            blosc2_schunk_decompress_chunk(reader, 1, out.as_mut_ptr().cast(), CHUNK as i32)
        };
        assert_eq!(n, CHUNK as i32);
        let held = size(&path);
        let bytes = std::fs::read(path.to_str().unwrap()).unwrap();
        // SAFETY: a live handle, freed once.
        unsafe { blosc2_schunk_free(reader) };
        assert_eq!(std::fs::read(path.to_str().unwrap()).unwrap(), bytes);

        // The writer's free, while another handle holds the frame's lock
        // (with locking on): it returns at once and leaves the file.
        let holder = open(&path);
        // SAFETY: a live handle.
        assert_eq!(unsafe { blosc2_schunk_lock(holder) }, 0);
        let w = s as usize;
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            // SAFETY: the writer's live handle, freed once, on this thread
            // only.
            unsafe { blosc2_schunk_free(w as *mut blosc2_schunk) };
            let _ = tx.send(());
        });
        rx.recv_timeout(Duration::from_secs(20))
            .expect("the free waited for the lock another handle holds");
        if locking {
            assert_eq!(size(&path), held, "a free without the lock writes nothing");
        } else {
            assert!(
                size(&path) < held,
                "without locking there is no lock to wait for"
            );
        }
        // SAFETY: the holder's live handle, unlocked and freed once.
        unsafe {
            assert_eq!(blosc2_schunk_unlock(holder), 0);
            blosc2_schunk_free(holder);
        }
        check_chunks(&path);
    }
    // SAFETY: as above.
    unsafe { std::env::remove_var("BLOSC_LOCKING") };
}
