//! `blosc2_schunk_to_buffer` hands out a super-chunk's frame in memory
//! itself, as C-Blosc2 does (`needs_free` false, valid until the next
//! change; C callers write to it), and a copy of any other frame
//! (`needs_free` true). Writes through the lent frame leave the handle's
//! reads failing or reading, never out of bounds (run under Miri in CI).

use super::*;
use crate::v2::{CPARAMS_DEFAULTS, DPARAMS_DEFAULTS};

/// `(pointer, length, needs_free)` of `blosc2_schunk_to_buffer`.
fn to_buffer(s: *mut blosc2_schunk) -> (*mut u8, usize, bool) {
    let (mut p, mut needs_free) = (std::ptr::null_mut::<u8>(), true);
    // SAFETY: a live handle; writable out-pointers.
    let n = unsafe { blosc2_schunk_to_buffer(s, &mut p, &mut needs_free) };
    assert!(n > 0 && !p.is_null(), "to_buffer gave {n}");
    (p, n as usize, needs_free)
}

/// The number of chunks of a copy of `frame` opened, and its chunk `i`.
fn reopened(frame: &[u8], i: i64, size: usize) -> (i64, Vec<u8>) {
    let mut copy = frame.to_vec();
    // SAFETY: copy holds its length; the handle copies it.
    let s = unsafe { blosc2_schunk_from_buffer(copy.as_mut_ptr(), copy.len() as i64, true) };
    assert!(!s.is_null(), "the frame does not open");
    let mut out = vec![0u8; size];
    // SAFETY: a live handle; out holds size bytes.
    let rc = unsafe { blosc2_schunk_decompress_chunk(s, i, out.as_mut_ptr().cast(), size as i32) };
    assert_eq!(rc, size as c_int);
    // SAFETY: a live handle, freed once.
    let n = unsafe { (*s).nchunks };
    unsafe { blosc2_schunk_free(s) };
    (n, out)
}

fn append(s: *mut blosc2_schunk, data: &[u8]) -> i64 {
    // SAFETY: a live handle; data.len() readable bytes.
    unsafe { blosc2_schunk_append_buffer(s, data.as_ptr().cast(), data.len() as i32) }
}

fn chunk(k: u8) -> Vec<u8> {
    (0..4000u32).map(|i| (i % 97) as u8 ^ k).collect()
}

/// An in-memory super-chunk (`contiguous`: with a frame C sees) of three
/// chunks.
fn three_chunks(contiguous: bool) -> *mut blosc2_schunk {
    let (mut cp, mut dp) = (CPARAMS_DEFAULTS, DPARAMS_DEFAULTS);
    cp.typesize = 4;
    cp.nthreads = 1;
    let s = memory_schunk(contiguous, &mut cp, &mut dp);
    for k in 0..3 {
        assert_eq!(append(s, &chunk(k)), i64::from(k) + 1);
    }
    s
}

#[test]
fn a_frame_in_memory_is_lent_not_copied() {
    {
        let s = three_chunks(true);
        let (p, n, needs_free) = to_buffer(s);
        assert!(!needs_free, "a frame in memory is lent");
        // Lent again while nothing changed: the same bytes, in place.
        let (p2, n2, _) = to_buffer(s);
        assert_eq!((p2, n2), (p, n));
        // SAFETY: the lent frame, n bytes, valid until the handle changes.
        let frame = unsafe { std::slice::from_raw_parts(p, n) }.to_vec();
        assert_eq!(reopened(&frame, 1, 4000), (3, chunk(1)));
        // A change, then lent again: the frame has the new chunk.
        assert_eq!(append(s, &chunk(3)), 4);
        let (p, n, needs_free) = to_buffer(s);
        assert!(!needs_free);
        // SAFETY: as above.
        let frame = unsafe { std::slice::from_raw_parts(p, n) }.to_vec();
        assert_eq!(reopened(&frame, 3, 4000), (4, chunk(3)));
        // C writes to it (C-Blosc2's test_frame_metalayer_overflow does):
        // the handle's reads then fail or read, within bounds.
        // SAFETY: the lent frame's n bytes; nothing of ours holds a
        // reference to them during the call.
        unsafe { std::ptr::write_bytes(p.add(n / 3), 0xA5, n / 3) };
        let mut out = vec![0u8; 4000];
        for i in 0..4 {
            // SAFETY: a live handle; out holds 4000 bytes.
            let rc = unsafe { blosc2_schunk_decompress_chunk(s, i, out.as_mut_ptr().cast(), 4000) };
            assert!(rc == 4000 || rc < 0, "chunk {i}: {rc}");
        }
        // SAFETY: made by blosc2_schunk_new, freed once.
        unsafe { blosc2_schunk_free(s) };
    }
}

/// C's default in-memory super-chunk has no frame (`contiguous` false):
/// C-Blosc2 builds one for the call and the caller frees it
/// (C-Blosc2's `test_special_chunk_copy` checks `needs_free`).
#[test]
fn a_super_chunk_without_a_frame_gets_a_copy() {
    let s = three_chunks(false);
    let (p, n, needs_free) = to_buffer(s);
    assert!(needs_free, "no frame: a copy");
    // SAFETY: n bytes the call returned.
    let frame = unsafe { std::slice::from_raw_parts(p, n) }.to_vec();
    // SAFETY: calloc'ed for the caller, freed once; the handle, once.
    unsafe {
        libc::free(p.cast());
        blosc2_schunk_free(s);
    }
    assert_eq!(reopened(&frame, 2, 4000), (3, chunk(2)));
}

#[test]
fn a_frame_in_a_file_is_copied() {
    let dir = std::env::temp_dir().join(format!("oxiblosc-to-buffer-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = std::ffi::CString::new(dir.join("f.b2frame").to_str().unwrap()).unwrap();
    let (mut cp, mut dp) = (CPARAMS_DEFAULTS, DPARAMS_DEFAULTS);
    cp.typesize = 4;
    let mut st = blosc2_storage {
        contiguous: true,
        urlpath: path.as_ptr().cast_mut(),
        cparams: &mut cp,
        dparams: &mut dp,
        io: std::ptr::null_mut(),
    };
    // SAFETY: a valid storage (its parameters live through the call).
    let s = unsafe { blosc2_schunk_new(&mut st) };
    assert!(!s.is_null());
    let data: Vec<u8> = (0..4000u32).map(|i| (i % 89) as u8).collect();
    assert_eq!(append(s, &data), 1);
    let (p, n, needs_free) = to_buffer(s);
    assert!(needs_free, "a file frame's buffer is the caller's");
    // SAFETY: n bytes the call returned.
    let frame = unsafe { std::slice::from_raw_parts(p, n) }.to_vec();
    // The file's frame, before the handle's tidy at its free.
    let file = std::fs::read(dir.join("f.b2frame")).unwrap();
    assert!(file[..n] == frame[..]);
    // SAFETY: calloc'ed for the caller, freed once; the handle, once.
    unsafe {
        libc::free(p.cast());
        blosc2_schunk_free(s);
    }
    assert_eq!(reopened(&frame, 0, 4000), (1, data));
    std::fs::remove_dir_all(&dir).unwrap();
}
