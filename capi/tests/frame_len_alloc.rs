//! `blosc2_schunk_frame_len` measures a contiguous frame without copying
//! it: it built the whole frame in memory (`to_cframe`) only to return its
//! length, so asking the length of a 16 MiB frame file allocated 16 MiB.
//! So did `blosc2_frame_get_offsets` for its index, and
//! `blosc2_schunk_to_file` / `blosc2_schunk_append_file` to write the frame
//! (until session 39), and `blosc2_schunk_to_buffer` copied the frame
//! into one allocation and that into the one it returned (until session
//! 40): they now hold at most a piece of it.
//! Counted with the tests' counting allocator (peak of live bytes); this file
//! holds a single test so nothing else allocates while it counts.

use std::ffi::CString;

use blosc2::schunk::{
    blosc2_frame_get_offsets, blosc2_schunk, blosc2_schunk_append_buffer,
    blosc2_schunk_append_file, blosc2_schunk_fill_special, blosc2_schunk_frame_len,
    blosc2_schunk_free, blosc2_schunk_new, blosc2_schunk_to_buffer, blosc2_schunk_to_file,
    blosc2_storage,
};
use blosc2::v2::{CPARAMS_DEFAULTS, DPARAMS_DEFAULTS};

/// The root crate's counting allocator (`tests/support/counting.rs`).
#[path = "../../tests/support/counting.rs"]
mod counting;

#[global_allocator]
static GLOBAL: counting::Counting = counting::Counting;

unsafe extern "C" {
    fn free(p: *mut std::ffi::c_void);
}

/// An empty contiguous super-chunk of type size 1, in a file at `path` or
/// (None) in memory.
fn empty(path: Option<&CString>) -> *mut blosc2_schunk {
    let mut cp = CPARAMS_DEFAULTS;
    cp.typesize = 1;
    let mut dp = DPARAMS_DEFAULTS;
    let mut st = blosc2_storage {
        contiguous: true,
        urlpath: path.map_or(std::ptr::null_mut(), |p| p.as_ptr().cast_mut()),
        cparams: &mut cp,
        dparams: &mut dp,
        io: std::ptr::null_mut(),
    };
    // SAFETY: a valid storage whose parameters live through the call.
    let s = unsafe { blosc2_schunk_new(&mut st) };
    assert!(!s.is_null());
    s
}

/// `blosc2_frame_get_offsets` of `s`: its entries (copied, the C buffer
/// freed) and the peak of live bytes the call allocated besides its result
/// (C's malloc, which the counting allocator does not see).
fn offsets_counted(s: *mut blosc2_schunk) -> (Vec<i64>, usize) {
    counting::reset_peak();
    let base = counting::live();
    // SAFETY: a live handle.
    let offsets = unsafe { blosc2_frame_get_offsets(s) };
    let peak = counting::peak() - base;
    assert!(!offsets.is_null());
    // SAFETY: a live handle; nchunks entries malloc'ed for us, read, then
    // freed once.
    let entries = unsafe {
        let n = (*s).nchunks as usize;
        let v = std::slice::from_raw_parts(offsets, n).to_vec();
        free(offsets.cast());
        v
    };
    (entries, peak)
}

/// A super-chunk of 16 chunks of 1 MiB that do not compress, contiguous,
/// in a file at `path` or (None) in memory.
fn frame(path: Option<&CString>) -> *mut blosc2_schunk {
    let s = empty(path);
    let mut x = 0x9e37_79b9_u32;
    let data: Vec<u8> = (0..1 << 20)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            (x >> 24) as u8
        })
        .collect();
    for n in 1..=16 {
        // SAFETY: a live handle; data.len() readable bytes.
        let rc = unsafe { blosc2_schunk_append_buffer(s, data.as_ptr().cast(), 1 << 20) };
        assert_eq!(rc, n);
    }
    s
}

#[test]
fn frame_len_does_not_copy_the_frame() {
    let dir = std::env::temp_dir().join(format!("oxiblosc-frame-len-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("f.b2frame");
    let cpath = CString::new(path.to_str().unwrap()).unwrap();
    for on_disk in [true, false] {
        let s = frame(on_disk.then_some(&cpath));
        counting::reset_peak();
        let base = counting::live();
        // SAFETY: a live handle.
        let len = unsafe { blosc2_schunk_frame_len(s) };
        let peak = counting::peak() - base;
        assert!(len > 16 << 20, "frame_len {len}");
        assert!(
            peak < 1 << 20,
            "frame_len of a {len}-byte frame (on disk: {on_disk}) allocated {peak} bytes"
        );
        // The length of the frame `to_buffer` gives, and of the file;
        // `to_buffer` writes the frame into the buffer it gives, holding
        // no copy of its own (the C allocation is not counted here).
        let mut buf: *mut u8 = std::ptr::null_mut();
        let mut needs_free = false;
        counting::reset_peak();
        let base = counting::live();
        // SAFETY: a live handle; out-pointers to locals.
        let n = unsafe { blosc2_schunk_to_buffer(s, &mut buf, &mut needs_free) };
        let peak = counting::peak() - base;
        assert_eq!(n, len);
        assert!(
            peak < (1 << 20) + (64 << 10),
            "to_buffer (on disk: {on_disk}) allocated {peak} bytes"
        );
        // SAFETY: the call gave n readable bytes at buf.
        let frame = unsafe { std::slice::from_raw_parts(buf, n as usize) }.to_vec();
        if needs_free {
            // SAFETY: malloc'd by the library for us.
            unsafe { free(buf.cast()) };
        }
        let frame = oxiblosc::Frame::parse(&frame).unwrap();
        let want: Vec<i64> = (0..16)
            .map(|i| frame.entry(i).unwrap().to_raw().unwrap())
            .collect();
        if on_disk {
            assert_eq!(std::fs::metadata(&path).unwrap().len() as i64, len);
        }
        // The index: 16 entries, no frame copied.
        let (entries, peak) = offsets_counted(s);
        assert!(
            peak < 4096,
            "get_offsets (on disk: {on_disk}) allocated {peak} bytes"
        );
        assert_eq!(entries, want);
        // The frame written to a file, and appended to one: a piece at a
        // time.
        let copy = dir.join("copy.b2frame");
        let ccopy = CString::new(copy.to_str().unwrap()).unwrap();
        for append in [false, true] {
            counting::reset_peak();
            let base = counting::live();
            // SAFETY: a live handle and a NUL-terminated path.
            let rc = unsafe {
                if append {
                    blosc2_schunk_append_file(s, ccopy.as_ptr())
                } else {
                    blosc2_schunk_to_file(s, ccopy.as_ptr())
                }
            };
            let peak = counting::peak() - base;
            // to_file's length, or where append_file put the frame: after
            // the frame to_file wrote.
            assert_eq!(rc, len);
            assert!(
                peak < (1 << 20) + (64 << 10),
                "to_file/append_file {append} (on disk: {on_disk}) allocated {peak} bytes"
            );
            assert_eq!(
                std::fs::metadata(&copy).unwrap().len() as i64,
                if append { 2 * len } else { len }
            );
        }
        // SAFETY: a live handle, freed once.
        unsafe { blosc2_schunk_free(s) };
    }
    std::fs::remove_dir_all(&dir).unwrap();

    // An index of 2^20 entries, all one special code: get_offsets writes
    // them straight into the buffer it returns (C's malloc, not counted
    // here), holding no copy of its own. Until session 52 it built them in
    // a Vec first: a 172-byte frame whose index stands for 134 million
    // chunks took 2 GiB there, 1 GiB as much as the entries.
    let s = empty(None);
    let n = 1usize << 20;
    // SAFETY: a live, empty handle; 1 is BLOSC2_SPECIAL_ZERO.
    let rc = unsafe { blosc2_schunk_fill_special(s, n as i64 * 16, 1, 16) };
    assert_eq!(rc, n as i64);
    let (entries, peak) = offsets_counted(s);
    assert!(
        peak < 64 << 10,
        "get_offsets of {n} chunks allocated {peak} bytes besides its result"
    );
    assert_eq!(entries.len(), n);
    assert!(entries.iter().all(|&e| e == entries[0]) && entries[0] < 0);
    // SAFETY: a live handle, freed once.
    unsafe { blosc2_schunk_free(s) };
}
