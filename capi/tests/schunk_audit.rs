//! Regression tests from an audit of the super-chunk calls: item indices
//! whose byte offsets overflow `i64` get `BLOSC2_ERROR_INVALID_PARAM`, not
//! a panic caught at the boundary (`BLOSC2_ERROR_FAILURE`, in a build with
//! overflow checks) or a wrapped value (a range of 2^60 chunk numbers in
//! one without). The calls are made from Rust through the library's rlib,
//! as `capi/tests/b2nd_audit.rs` makes them.

use blosc2::schunk::{
    blosc2_get_slice_nchunks, blosc2_schunk, blosc2_schunk_append_buffer,
    blosc2_schunk_append_file, blosc2_schunk_free, blosc2_schunk_from_buffer, blosc2_schunk_new,
    blosc2_schunk_open, blosc2_schunk_open_offset, blosc2_schunk_to_file, blosc2_storage,
    blosc2_vlmeta_exists, blosc2_vlmeta_get_names,
};
use blosc2::v2::{CPARAMS_DEFAULTS, DPARAMS_DEFAULTS, err};
use std::ffi::CString;

unsafe extern "C" {
    fn free(p: *mut std::ffi::c_void);
}

/// An in-memory super-chunk of `typesize` 4 with two chunks of 1000 items.
fn two_chunks() -> *mut blosc2_schunk {
    let mut cp = CPARAMS_DEFAULTS;
    cp.typesize = 4;
    let mut dp = DPARAMS_DEFAULTS;
    let mut st = blosc2_storage {
        contiguous: false,
        urlpath: std::ptr::null_mut(),
        cparams: &mut cp,
        dparams: &mut dp,
        io: std::ptr::null_mut(),
    };
    // SAFETY: a valid storage whose parameters live through the call.
    let s = unsafe { blosc2_schunk_new(&mut st) };
    assert!(!s.is_null());
    let data = vec![7u8; 4000];
    for n in 1..=2 {
        // SAFETY: a live handle; data.len() readable bytes.
        let rc = unsafe { blosc2_schunk_append_buffer(s, data.as_ptr().cast(), 4000) };
        assert_eq!(rc, n);
    }
    s
}

/// `blosc2_get_slice_nchunks(start, stop)` with its return code and the
/// chunk numbers it gave (freed here).
fn slice_nchunks(s: *mut blosc2_schunk, start: i64, stop: i64) -> (i64, Vec<i64>) {
    let (mut a, mut b) = (start, stop);
    let mut idx: *mut i64 = std::ptr::null_mut();
    // SAFETY: a live handle; start, stop and the out pointer are writable.
    let n = unsafe { blosc2_get_slice_nchunks(s, &mut a, &mut b, &mut idx) };
    let mut got = Vec::new();
    if n >= 0 && !idx.is_null() {
        // SAFETY: the call malloc'ed n chunk numbers at idx.
        got = unsafe { std::slice::from_raw_parts(idx, n as usize) }.to_vec();
    }
    if !idx.is_null() {
        // SAFETY: malloc'ed for the caller, freed once.
        unsafe { free(idx.cast()) };
    }
    (n, got)
}

/// `start * typesize`, `stop * typesize` and the rounding up of the last
/// chunk were computed unchecked from the caller's item indices.
#[test]
fn slice_nchunks_whose_byte_offsets_overflow_are_invalid_params() {
    let s = two_chunks();
    assert_eq!(slice_nchunks(s, 0, 1500), (2, vec![0, 1]));
    assert_eq!(slice_nchunks(s, 1000, 1000), (0, vec![]));
    for (start, stop) in [
        // start * 4 overflows.
        (i64::MAX / 2, i64::MAX),
        // stop * 4 overflows.
        (0, i64::MAX / 4 + 1),
        (1, i64::MAX),
    ] {
        let (n, got) = slice_nchunks(s, start, stop);
        assert_eq!(
            n,
            i64::from(err::INVALID_PARAM),
            "{start}..{stop} gave {got:?}"
        );
    }
    // Byte offsets that fit, rounded up to a whole chunk past `i64::MAX`:
    // the chunks up to the last one.
    assert_eq!(slice_nchunks(s, 0, i64::MAX / 4), (2, vec![0, 1]));
    assert_eq!(slice_nchunks(s, i64::MAX / 4, i64::MAX / 4), (0, vec![]));
    // The super-chunk is as it was.
    assert_eq!(slice_nchunks(s, 999, 1001), (2, vec![0, 1]));
    // SAFETY: made by blosc2_schunk_new, freed once.
    unsafe { blosc2_schunk_free(s) };
}

/// `blosc2_schunk_to_file` and `blosc2_schunk_append_file` write the frame
/// a piece at a time (since session 39). The file written is the frame;
/// an append goes after what the file held and returns where it starts;
/// a write that fails is `BLOSC2_ERROR_FILE_WRITE` and leaves the file as
/// it was: `to_file` into a directory that is not there makes no file,
/// `append_file` of a file it makes removes it, and `/dev/full` (every
/// write fails) is refused.
#[test]
fn frames_to_files_and_failed_writes() {
    let s = two_chunks();
    let dir = std::env::temp_dir().join(format!("oxiblosc-capi-to-file-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let c = |p: &std::path::Path| CString::new(p.to_str().unwrap()).unwrap();
    let whole = dir.join("whole.b2frame");
    // SAFETY: a live handle and a NUL-terminated path.
    let n = unsafe { blosc2_schunk_to_file(s, c(&whole).as_ptr()) };
    let frame = std::fs::read(&whole).unwrap();
    assert_eq!(n, frame.len() as i64);
    oxiblosc::Frame::parse(&frame).unwrap();

    let appended = dir.join("appended.bin");
    std::fs::write(&appended, b"what the file held").unwrap();
    // SAFETY: as above.
    let at = unsafe { blosc2_schunk_append_file(s, c(&appended).as_ptr()) };
    assert_eq!(at, 18);
    let both = std::fs::read(&appended).unwrap();
    assert_eq!(&both[..18], b"what the file held");
    assert!(both[18..] == frame[..]);

    let missing = dir.join("missing").join("f.b2frame");
    // SAFETY: as above.
    let rc = unsafe { blosc2_schunk_to_file(s, c(&missing).as_ptr()) };
    assert_eq!(rc, i64::from(err::FILE_WRITE));
    assert!(!missing.exists() && !dir.join("missing").exists());
    let dev_full = std::path::Path::new("/dev/full");
    if dev_full.exists() {
        // SAFETY: as above.
        let rc = unsafe { blosc2_schunk_append_file(s, c(dev_full).as_ptr()) };
        assert_eq!(rc, i64::from(err::FILE_WRITE));
    }
    // SAFETY: the handle is live and freed once.
    unsafe { blosc2_schunk_free(s) };

    // A frame opened from a file, written over that same file: the file
    // is the frame, and the handle's later appends go to it.
    // SAFETY: a NUL-terminated path.
    let f = unsafe { blosc2_schunk_open(c(&whole).as_ptr()) };
    assert!(!f.is_null());
    // SAFETY: a live handle and a NUL-terminated path.
    let n = unsafe { blosc2_schunk_to_file(f, c(&whole).as_ptr()) };
    assert_eq!(n, std::fs::metadata(&whole).unwrap().len() as i64);
    let data = vec![3u8; 4000];
    // SAFETY: a live handle; data.len() readable bytes.
    let rc = unsafe { blosc2_schunk_append_buffer(f, data.as_ptr().cast(), 4000) };
    assert_eq!(rc, 3);
    // SAFETY: the handle is live and freed once.
    unsafe { blosc2_schunk_free(f) };
    // SAFETY: a NUL-terminated path.
    let f = unsafe { blosc2_schunk_open(c(&whole).as_ptr()) };
    assert!(!f.is_null());
    // SAFETY: a live handle, the struct C reads.
    assert_eq!(unsafe { (*f).nchunks }, 3);

    // Its own frame appended to its own file: the copy after it is never
    // overwritten (C-Blosc2 cuts it at the handle's next change), neither
    // by a change (refused) nor by the tidy when the handle is freed.
    // SAFETY: a live handle; data.len() readable bytes.
    let rc = unsafe { blosc2_schunk_append_buffer(f, data.as_ptr().cast(), 4000) };
    assert_eq!(rc, 4);
    // SAFETY: a live handle and a NUL-terminated path.
    let at = unsafe { blosc2_schunk_append_file(f, c(&whole).as_ptr()) };
    let both = std::fs::read(&whole).unwrap();
    assert_eq!(at as usize * 2, both.len());
    // SAFETY: as above.
    let rc = unsafe { blosc2_schunk_append_buffer(f, data.as_ptr().cast(), 4000) };
    assert!(rc < 0, "{rc}");
    // SAFETY: the handle is live and freed once.
    unsafe { blosc2_schunk_free(f) };
    assert!(std::fs::read(&whole).unwrap() == both);
    for offset in [0, at] {
        // SAFETY: a NUL-terminated path.
        let f = unsafe { blosc2_schunk_open_offset(c(&whole).as_ptr(), offset) };
        assert!(!f.is_null());
        // SAFETY: a live handle, the struct C reads.
        assert_eq!(unsafe { (*f).nchunks }, 4);
        // SAFETY: the handle is live and freed once.
        unsafe { blosc2_schunk_free(f) };
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A vlmetalayer whose name in the frame holds a NUL (`"a\0b"`) is listed
/// by `blosc2_vlmeta_get_names` as C-Blosc2 lists it (`"a"`, the C string)
/// and found by that name. capi_frame found the C ABI listing one name
/// and finding none by it (session 44).
#[test]
fn a_vlmetalayer_is_found_by_the_name_listed() {
    let mut sc = oxiblosc::SChunk::new(oxiblosc::CParams::default()).unwrap();
    sc.append_buffer(&[5u8; 100]).unwrap();
    sc.vlmeta_set("abc", b"value").unwrap();
    let mut frame = sc.to_cframe().unwrap();
    let at = frame.windows(4).position(|w| w == b"\xa3abc").unwrap();
    frame[at + 2] = 0;
    // SAFETY: frame holds its length; copied.
    let s = unsafe { blosc2_schunk_from_buffer(frame.as_mut_ptr(), frame.len() as i64, true) };
    assert!(!s.is_null());
    let mut names = [std::ptr::null_mut::<std::ffi::c_char>(); 4];
    // SAFETY: a live handle; room for its one name.
    assert_eq!(unsafe { blosc2_vlmeta_get_names(s, names.as_mut_ptr()) }, 1);
    // SAFETY: a name the library published.
    let name = unsafe { std::ffi::CStr::from_ptr(names[0]) };
    assert_eq!(name.to_bytes(), b"a");
    // SAFETY: a live handle and NUL-terminated names.
    unsafe {
        assert_eq!(blosc2_vlmeta_exists(s, names[0]), 0);
        assert_eq!(blosc2_vlmeta_exists(s, c"a".as_ptr()), 0);
        blosc2_schunk_free(s);
    }
}
