//! `b2nd.h` calls on arrays whose `b2nd` metalayer the frame does not hold
//! (or no layout can): refused with an error code, never a panic caught at the boundary
//! (which gives `BLOSC2_ERROR_FAILURE`) nor garbage in the struct C reads.
use super::*;
use crate::v2::err;
use oxiblosc::CParams;

/// A file frame of no chunks whose `b2nd` metalayer is `meta`.
fn frame_with(tag: &str, meta: &NdMeta) -> (std::path::PathBuf, CString) {
    let dir = std::env::temp_dir().join(format!("oxiblosc-capi-b2nd-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("a.b2nd");
    SChunk::builder()
        .cparams(CParams::default().typesize(1))
        .meta("b2nd", &meta.encode().unwrap())
        .create_file(&path)
        .unwrap();
    let url = CString::new(path.to_str().unwrap()).unwrap();
    (dir, url)
}

#[test]
fn arrays_the_frame_does_not_hold_are_refused_at_open() {
    // A shape of i64::MAX items in chunks of 2 over a frame of no chunks:
    // rounding it up to whole chunks overflowed in the struct's extshape
    // (a panic caught at the boundary, BLOSC2_ERROR_FAILURE, in a build
    // with overflow checks; a wrapped value otherwise). And a shape whose
    // byte count overflows, which no layout holds. And (since session 45)
    // 30 items in chunks of 10 over a frame of no chunks: b2nd_open refused
    // it, b2nd_open_offset and b2nd_from_cframe made an array of it (the
    // fuzz target capi_frame found them disagreeing). All three open a
    // stored frame, so all three refuse what b2nd_open refuses.
    let big = i64::MAX as u64;
    for (k, meta) in [
        NdMeta::new(&[big], &[2], &[1], "|u1"),
        NdMeta::new(&[big, big], &[1, 1], &[1, 1], "|u1"),
        NdMeta::new(&[30], &[10], &[5], "|u1"),
    ]
    .iter()
    .enumerate()
    {
        let what = format!("{:?}", meta.shape);
        let (dir, url) = frame_with(&format!("huge{k}"), meta);
        let mut a: *mut b2nd_array_t = std::ptr::null_mut();
        // SAFETY: a NUL-terminated path and a writable out pointer.
        let r = unsafe { b2nd_open(url.as_ptr(), &mut a) };
        assert_eq!(r, err::DATA, "b2nd_open of {what}");
        assert!(a.is_null());
        // SAFETY: as above; the frame starts at byte 0.
        let r = unsafe { b2nd_open_offset(url.as_ptr(), &mut a, 0) };
        assert_eq!(r, err::DATA, "b2nd_open_offset of {what}");
        assert!(a.is_null());
        let mut frame = std::fs::read(dir.join("a.b2nd")).unwrap();
        for copy in [true, false] {
            // SAFETY: frame holds its length in bytes and outlives the call
            // (no array is made to borrow it).
            let r =
                unsafe { b2nd_from_cframe(frame.as_mut_ptr(), frame.len() as i64, copy, &mut a) };
            assert_eq!(r, err::DATA, "b2nd_from_cframe (copy {copy}) of {what}");
            assert!(a.is_null());
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn the_struct_of_a_large_array_holds_its_rounded_shapes() {
    // The largest array the layout accepts: extshape rounds up without
    // overflow.
    let s = (i64::MAX as u64) / 8 - 3;
    let meta = NdMeta::new(&[s], &[4], &[2], "|u1");
    let c = {
        let mut a = Array {
            // SAFETY: all-zero is a valid b2nd_array_t (integers and
            // pointers).
            c: unsafe { std::mem::zeroed() },
            meta,
            dtype: CString::new("|u1").unwrap(),
            view: false,
        };
        a.sync();
        a.c
    };
    assert_eq!(c.shape[0], s as i64);
    assert_eq!(c.extshape[0], s.div_ceil(4) as i64 * 4);
    assert_eq!(c.extchunkshape[0], 4);
    assert_eq!(c.chunk_array_strides[0], 1);
}

/// What `b2nd.h` says is an error and C-Blosc2 3.3.5 does not refuse:
/// NaNs of items other than 4 or 8 bytes (it makes the array), a NULL
/// fill value (it dereferences it). Ours refuses both with an error code
/// and no array; `tests/c-interop/b2nd_make.c` compares the rest with C.
#[test]
fn nans_of_two_byte_items_and_a_null_fill_value_are_refused() {
    let shape = [3i64, 4];
    let (chunks, blocks) = ([2i32, 2], [1i32, 2]);
    for (dtype, nans) in [("<i2", err::INVALID_PARAM), ("<f4", 0)] {
        let dt = CString::new(dtype).unwrap();
        // SAFETY: ndim 2 and shapes of 2 values; a NUL-terminated dtype.
        let ctx = unsafe {
            b2nd_create_ctx(
                std::ptr::null(),
                2,
                shape.as_ptr(),
                chunks.as_ptr(),
                blocks.as_ptr(),
                dt.as_ptr(),
                0,
                std::ptr::null(),
                0,
            )
        };
        assert!(!ctx.is_null());
        let mut a: *mut b2nd_array_t = std::ptr::null_mut();
        // SAFETY: a live context and a writable out pointer.
        let r = unsafe { b2nd_nans(ctx, &mut a) };
        assert_eq!(r, nans, "{dtype}");
        assert_eq!(a.is_null(), r != 0);
        // SAFETY: a is null or this library's array, freed once.
        unsafe { b2nd_free(a) };
        let mut a: *mut b2nd_array_t = std::ptr::null_mut();
        // SAFETY: as above; the NULL fill value is what is tested.
        let r = unsafe { b2nd_full(ctx, &mut a, std::ptr::null()) };
        assert_eq!((r, a.is_null()), (err::NULL_POINTER, true), "{dtype}");
        // SAFETY: the context from b2nd_create_ctx, freed once.
        unsafe { b2nd_free_ctx(ctx) };
    }
}

/// A super-chunk of `typesize` in memory with only the `b2nd` metalayer of
/// `meta`, made an array by `b2nd_from_schunk` (its code and the array).
fn array_of_meta(meta: &NdMeta, typesize: i32) -> (c_int, *mut b2nd_array_t) {
    let mut cp = crate::v2::CPARAMS_DEFAULTS;
    cp.typesize = typesize;
    // Chunks appended by hand have the block shape's blocks.
    let block: u64 = meta.blockshape.iter().product();
    cp.blocksize = i32::try_from(block * typesize as u64).unwrap_or(0);
    cp.nthreads = 1;
    let mut st = blosc2_storage {
        contiguous: true,
        urlpath: std::ptr::null_mut(),
        cparams: &mut cp,
        dparams: std::ptr::null_mut(),
        io: std::ptr::null_mut(),
    };
    // SAFETY: a storage whose cparams outlive the call.
    let s = unsafe { crate::schunk::blosc2_schunk_new(&mut st) };
    assert!(!s.is_null());
    let mut m = meta.encode().unwrap();
    // SAFETY: a live handle, a NUL-terminated name, m.len() bytes.
    let r = unsafe {
        crate::schunk::blosc2_meta_add(s, c"b2nd".as_ptr(), m.as_mut_ptr(), m.len() as i32)
    };
    assert!(r >= 0);
    let mut a = std::ptr::null_mut();
    // SAFETY: a live handle and a writable out pointer.
    let r = unsafe { b2nd_from_schunk(s, &mut a) };
    if r != 0 {
        // SAFETY: the handle, not taken by an array.
        unsafe { crate::schunk::blosc2_schunk_free(s) };
    }
    (r, a)
}

/// Items `start..stop` of a 1-D array into `out` (`b2nd_get_slice_cbuffer`).
fn get_1d(a: *mut b2nd_array_t, start: i64, stop: i64, out: &mut [u8]) -> c_int {
    let (st, sp, bs) = ([start], [stop], [stop - start]);
    // SAFETY: a live array; shapes of one value; out.len() writable bytes.
    unsafe {
        b2nd_get_slice_cbuffer(
            a,
            st.as_ptr(),
            sp.as_ptr(),
            out.as_mut_ptr().cast(),
            bs.as_ptr(),
            out.len() as i64,
        )
    }
}

/// As C-Blosc2 makes them: `b2nd_from_schunk` makes the array of a
/// metalayer C's struct holds even when the super-chunk does not hold its
/// chunks (yet) or its chunk is over the largest buffer; each call on it is
/// refused until the chunks are there. Products that overflow C's fields
/// are refused at once.
#[test]
fn from_schunk_makes_arrays_whose_chunks_are_not_there_yet() {
    // 30 one-byte items in chunks of 10: no chunk yet, then appended by hand.
    let (r, a) = array_of_meta(&NdMeta::new(&[30], &[10], &[5], "|u1"), 1);
    assert_eq!(r, 0, "an array of no chunks yet");
    let mut out = [0u8; 4];
    assert_eq!(
        get_1d(a, 12, 16, &mut out),
        err::DATA,
        "its chunks are missing"
    );
    // SAFETY: a live array.
    let s = unsafe { (*a).sc };
    for k in 0..3u8 {
        let items: Vec<u8> = (0..10).map(|i| k * 10 + i).collect();
        // SAFETY: a live handle, 10 readable bytes.
        assert_eq!(
            unsafe { crate::schunk::blosc2_schunk_append_buffer(s, items.as_ptr().cast(), 10) },
            i64::from(k) + 1
        );
    }
    assert_eq!(
        get_1d(a, 12, 16, &mut out),
        0,
        "read once the chunks are there"
    );
    assert_eq!(out, [12, 13, 14, 15]);
    // SAFETY: the array (and its super-chunk), freed once.
    assert_eq!(unsafe { b2nd_free(a) }, 0);

    // A chunk of 1073741952 four-byte items (over 2 GiB): made, never read.
    let n = 1_073_741_952u64;
    let (r, a) = array_of_meta(&NdMeta::new(&[n], &[n], &[128], "<u4"), 4);
    assert_eq!(r, 0, "C's struct holds it");
    let mut item = [0u8; 4];
    assert_eq!(get_1d(a, 0, 1, &mut item), err::DATA);
    let mut whole = [0u8; 4];
    // SAFETY: a live array; 4 writable bytes, told 4 (not the array's size).
    let r = unsafe { b2nd_to_cbuffer(a, whole.as_mut_ptr().cast(), 4) };
    assert!(
        r < 0 && r != err::FAILURE,
        "to_cbuffer refused, not a caught panic: {r}"
    );
    // SAFETY: the array, freed once.
    assert_eq!(unsafe { b2nd_free(a) }, 0);

    // Products over C's fields: blocks of 2^32 items, an array of 2^64.
    for meta in [
        NdMeta::new(&[65536, 65536], &[65536, 1], &[65536, 65536], "|u1"),
        NdMeta::new(&[1 << 62, 4], &[1, 1], &[1, 1], "|u1"),
    ] {
        let (r, a) = array_of_meta(&meta, 1);
        assert_eq!((r, a.is_null()), (err::DATA, true), "{:?}", meta.shape);
    }
}
