//! The C super-chunk API (`libblosc2.so`) on a fuzzed contiguous frame:
//! `blosc2_schunk_from_buffer` (copying and not), then what a C reader
//! does: the struct's fields and metalayers (read directly, as
//! `blosc2_meta_get`, a `static inline` in `blosc2.h`, does), every chunk
//! through `blosc2_schunk_decompress_chunk`, `_get_chunk` and
//! `_get_lazychunk`, a slice, the vlmetalayers, and `blosc2_schunk_to_buffer`,
//! whose frame must open again. Every buffer is exactly the size the call
//! is told, so a read or write past one is an ASan report. Since session
//! 17, for inputs whose last byte is even, the copied handle is then edited
//! (`blosc2_schunk_append_buffer`, `_delete_chunk`, `_insert_chunk`,
//! `_update_chunk`): after each edit, worked or not, the frame
//! `blosc2_schunk_to_buffer` gives opens with the chunk count and sizes the
//! handle's struct shows (since session 44 also `_append_chunk`,
//! `_reorder_offsets`, `_set_slice_buffer`, `blosc2_meta_update`,
//! `blosc2_vlmeta_add`, `_update` and `_delete`, and `blosc2_schunk_copy`,
//! whose copy must write a frame that opens; and on every handle the
//! calls that describe it: `_get_cparams`, `_get_dparams`,
//! `blosc2_frame_get_offsets`, `blosc2_get_slice_nchunks`,
//! `blosc2_schunk_frame_len`, `blosc2_vlmeta_exists` and, on chunks
//! within 8 MiB, `blosc2_schunk_get_vlblock`). Since session 19, a frame holding a `b2nd`
//! metalayer is also opened from a file with `b2nd_open`, its struct read
//! and its first item read with `b2nd_get_slice_cbuffer`; since session
//! 45 also with `b2nd_open_offset` and `b2nd_from_schunk`, which must
//! take what `b2nd_open` takes with the same geometry, and saved with `b2nd_save` and
//! `b2nd_save_append`, whose files must open as the same array. Since
//! session 52, for one input in four, the bytes as a file opened by path
//! with `blosc2_schunk_open` and through user-defined I/O
//! (`blosc2_register_io_cb`, `blosc2_schunk_open_udio`), which no target
//! had read a frame through: both open or neither, with the same struct,
//! and every chunk decompresses the same through both.
#![no_main]
use std::ffi::{CStr, CString, c_char, c_void};

use blosc2::b2nd::{
    b2nd_array_t, b2nd_deserialize_meta, b2nd_free, b2nd_from_schunk, b2nd_get_slice_cbuffer,
    b2nd_open, b2nd_open_offset, b2nd_save, b2nd_save_append, b2nd_serialize_meta, b2nd_to_cbuffer,
};
use blosc2::schunk::{
    blosc2_frame_get_offsets, blosc2_get_blosc2_storage_defaults, blosc2_get_slice_nchunks,
    blosc2_meta_update, blosc2_schunk, blosc2_schunk_append_buffer, blosc2_schunk_append_chunk,
    blosc2_schunk_copy, blosc2_schunk_decompress_chunk, blosc2_schunk_delete_chunk,
    blosc2_schunk_frame_len, blosc2_schunk_free, blosc2_schunk_from_buffer,
    blosc2_schunk_get_chunk, blosc2_schunk_get_cparams, blosc2_schunk_get_dparams,
    blosc2_schunk_get_lazychunk, blosc2_schunk_get_slice_buffer, blosc2_schunk_get_vlblock,
    blosc2_schunk_insert_chunk, blosc2_schunk_reorder_offsets, blosc2_schunk_set_slice_buffer,
    blosc2_schunk_to_buffer, blosc2_schunk_update_chunk, blosc2_vlmeta_add, blosc2_vlmeta_delete,
    blosc2_vlmeta_exists, blosc2_vlmeta_get, blosc2_vlmeta_get_names, blosc2_vlmeta_update,
};
use blosc2::schunk::{
    blosc2_io, blosc2_io_cb, blosc2_register_io_cb, blosc2_schunk_open, blosc2_schunk_open_udio,
};
use blosc2::stdio::{
    blosc2_stdio_close, blosc2_stdio_destroy, blosc2_stdio_open, blosc2_stdio_size,
    blosc2_stdio_truncate, blosc2_stdio_write,
};
use libfuzzer_sys::fuzz_target;

#[path = "b2nd_geometry.rs"]
mod b2nd_geometry;

unsafe extern "C" {
    fn free(p: *mut c_void);
}

/// The most chunks read, and the largest chunk decoded.
const MAX_CHUNKS: i64 = 64;
const MAX_CHUNK: usize = 8 << 20;

/// Read every byte of `len` at `p` (ASan checks each).
fn touch(p: *const u8, len: usize) -> u64 {
    if p.is_null() {
        return 0;
    }
    // SAFETY: the library's contract for the buffer it returned.
    unsafe { std::slice::from_raw_parts(p, len) }
        .iter()
        .map(|&b| u64::from(b))
        .sum()
}

/// What a C reader does with an open super-chunk.
///
/// # Safety
/// `sc` is a live handle.
unsafe fn read_all(sc: *mut blosc2_schunk) {
    // SAFETY: live handle (caller).
    let s = unsafe { &*sc };
    let mut sink = 0u64;
    for m in s.metalayers.iter().take(usize::from(s.nmetalayers).min(16)) {
        if m.is_null() {
            continue;
        }
        // SAFETY: a metalayer the library published: a NUL-terminated
        // name and content_len bytes of content.
        let m = unsafe { &**m };
        let name = unsafe { CStr::from_ptr(m.name) };
        sink += name.to_bytes().len() as u64;
        sink += touch(m.content, m.content_len.max(0) as usize);
        if matches!(name.to_bytes(), b"b2nd" | b"caterva") {
            // SAFETY: content_len bytes at content (above).
            let raw =
                unsafe { std::slice::from_raw_parts(m.content, m.content_len.max(0) as usize) };
            deserialize(raw);
        }
    }
    let (nchunks, chunksize) = (s.nchunks, s.chunksize);
    let dest_len = usize::try_from(chunksize).unwrap_or(0).min(MAX_CHUNK);
    let mut dest = vec![0u8; dest_len];
    // The bytes the chunks read declare, and whether each is within
    // MAX_CHUNK (for the slice below).
    let (mut declared, mut small) = (0usize, true);
    for i in 0..nchunks.clamp(0, MAX_CHUNKS) {
        // SAFETY: live handle; dest_len writable bytes.
        let _ = unsafe {
            blosc2_schunk_decompress_chunk(sc, i, dest.as_mut_ptr().cast(), dest_len as i32)
        };
        for lazy in [false, true] {
            let (mut chunk, mut needs_free) = (std::ptr::null_mut::<u8>(), false);
            // SAFETY: live handle; writable out-pointers.
            let n = unsafe {
                if lazy {
                    blosc2_schunk_get_lazychunk(sc, i, &mut chunk, &mut needs_free)
                } else {
                    blosc2_schunk_get_chunk(sc, i, &mut chunk, &mut needs_free)
                }
            };
            if n > 0 {
                sink += touch(chunk, n as usize);
                if !lazy {
                    let nb = if n >= 16 {
                        // SAFETY: n >= 16 readable bytes (a chunk header).
                        let h = unsafe { std::slice::from_raw_parts(chunk, 16) };
                        i32::from_le_bytes(h[4..8].try_into().unwrap()).max(0) as usize
                    } else {
                        usize::MAX
                    };
                    small &= nb <= MAX_CHUNK;
                    declared = declared.saturating_add(nb);
                    if nb <= MAX_CHUNK {
                        sink += unsafe { vlblocks(sc, i) };
                    }
                }
            } else if !lazy {
                small = false;
            }
            if needs_free && !chunk.is_null() {
                // SAFETY: malloc'ed for the caller, who frees it.
                unsafe { free(chunk.cast()) };
            }
        }
    }
    // A slice of the first items, into a buffer of exactly that size. A
    // slice decodes whole chunks, and run streams let a few bytes stand for
    // a 2 GiB chunk legitimately (the C ABI has no output limit, as
    // C-Blosc2 has none): only over chunks read above that declare at most
    // MAX_CHUNK bytes each (its first runs, without that rule, stopped on
    // a 244-byte frame whose chunk declares 2 GiB of runs).
    let ts = i64::from(s.typesize.max(1));
    let stop = (s.nbytes / ts).clamp(0, (MAX_CHUNK as i64) / ts).min(1000);
    if small && (stop * ts) as usize <= declared {
        let mut slice = vec![0u8; (stop * ts) as usize];
        // SAFETY: live handle; stop * typesize writable bytes.
        let _ = unsafe { blosc2_schunk_get_slice_buffer(sc, 0, stop, slice.as_mut_ptr().cast()) };
    }
    // SAFETY: live handle.
    sink += unsafe { structure(sc) };
    let mut names = vec![std::ptr::null_mut::<c_char>(); 8192];
    // SAFETY: live handle; room for the most vlmetalayers a handle has.
    let n = unsafe { blosc2_vlmeta_get_names(sc, names.as_mut_ptr()) };
    for (k, &name) in names.iter().take(n.clamp(0, 64) as usize).enumerate() {
        if name.is_null() {
            continue;
        }
        // SAFETY: live handle; a name the library gave.
        let at = unsafe { blosc2_vlmeta_exists(sc, name) };
        // The first layer of that name (a frame may repeat one).
        assert!(
            (0..=k as i32).contains(&at)
                // SAFETY: names the library gave.
                && unsafe { CStr::from_ptr(names[at as usize]) == CStr::from_ptr(name) },
            "blosc2_vlmeta_exists: {at} for the name listed at {k}"
        );
        let (mut content, mut len) = (std::ptr::null_mut::<u8>(), 0i32);
        // SAFETY: live handle; a name the library gave; writable out-pointers.
        if unsafe { blosc2_vlmeta_get(sc, name, &mut content, &mut len) } >= 0 {
            sink += touch(content, len.max(0) as usize);
            // SAFETY: malloc'ed for the caller.
            unsafe { free(content.cast()) };
        }
    }
    std::hint::black_box(sink);
}

/// `b2nd_deserialize_meta` of a metalayer's bytes (since session 44: no
/// target had called it) into arrays of exactly `B2ND_MAX_DIM` values:
/// it reads what `NdMeta::decode` reads, and `b2nd_serialize_meta` of
/// that gives bytes that read the same again.
fn deserialize(raw: &[u8]) {
    const MAX: usize = 16;
    let (mut ndim, mut fmt) = (-1i8, -1i8);
    let (mut shape, mut cs, mut bs) = ([0i64; MAX], [0i32; MAX], [0i32; MAX]);
    let mut dtype = std::ptr::null_mut::<c_char>();
    // SAFETY: raw holds its length; arrays of B2ND_MAX_DIM values; writable
    // out-pointers.
    let r = unsafe {
        b2nd_deserialize_meta(
            raw.as_ptr(),
            raw.len() as i32,
            &mut ndim,
            shape.as_mut_ptr(),
            cs.as_mut_ptr(),
            bs.as_mut_ptr(),
            &mut dtype,
            &mut fmt,
        )
    };
    let decoded = oxiblosc::ndarray::NdMeta::decode(raw);
    assert_eq!(
        r >= 0,
        decoded.is_ok(),
        "b2nd_deserialize_meta and NdMeta::decode"
    );
    if r < 0 {
        return;
    }
    let m = decoded.unwrap();
    let n = ndim as usize;
    assert_eq!(n, m.ndim(), "b2nd_deserialize_meta: ndim");
    assert!(
        (0..n).all(|d| shape[d] as u64 == m.shape[d]
            && cs[d] as u64 == m.chunkshape[d]
            && bs[d] as u64 == m.blockshape[d]),
        "b2nd_deserialize_meta: the shapes"
    );
    let mut again = std::ptr::null_mut::<u8>();
    // SAFETY: ndim values in each array; dtype null or a C string the call
    // made; a writable out-pointer.
    let len = unsafe {
        b2nd_serialize_meta(
            ndim,
            shape.as_ptr(),
            cs.as_ptr(),
            bs.as_ptr(),
            dtype,
            fmt,
            &mut again,
        )
    };
    if len >= 0 {
        // SAFETY: len bytes the call malloc'ed, freed once.
        let bytes = unsafe { std::slice::from_raw_parts(again, len as usize) }.to_vec();
        unsafe { free(again.cast()) };
        let back = oxiblosc::ndarray::NdMeta::decode(&bytes).expect("serialized meta reads");
        assert_eq!(
            (&back.shape, &back.chunkshape, &back.blockshape),
            (&m.shape, &m.chunkshape, &m.blockshape),
            "b2nd_serialize_meta of what was read"
        );
    }
    if !dtype.is_null() {
        // SAFETY: malloc'ed by the call.
        unsafe { free(dtype.cast()) };
    }
}

/// Blocks 0 and 1 of chunk `i` through `blosc2_schunk_get_vlblock` (since
/// session 44): a VL-block chunk's block, malloc'ed, or an error for any
/// other chunk.
///
/// # Safety
/// `sc` is a live handle.
unsafe fn vlblocks(sc: *mut blosc2_schunk, i: i64) -> u64 {
    let mut sink = 0;
    for j in 0..2 {
        let (mut p, mut n) = (std::ptr::null_mut::<u8>(), -1i32);
        // SAFETY: live handle (caller); writable out-pointers.
        let r = unsafe { blosc2_schunk_get_vlblock(sc, i, j, &mut p, &mut n) };
        if r >= 0 {
            assert!(
                r == n && !p.is_null(),
                "blosc2_schunk_get_vlblock: {r}, {n}"
            );
            sink += touch(p, n as usize);
            // SAFETY: malloc'ed for the caller.
            unsafe { free(p.cast()) };
        }
    }
    sink
}

/// What describes the super-chunk (since session 44): its cparams and
/// dparams (malloc'ed copies), the frame's offsets index (`nchunks`
/// entries, each read), the chunks a slice of its first items lies in,
/// and the frame's length, which is what `blosc2_schunk_to_buffer` gives.
///
/// # Safety
/// `sc` is a live handle.
unsafe fn structure(sc: *mut blosc2_schunk) -> u64 {
    let mut sink = 0;
    // SAFETY: live handle (caller); writable out-pointers; what the calls
    // malloc is freed once.
    unsafe {
        let mut cp = std::ptr::null_mut();
        if blosc2_schunk_get_cparams(sc, &mut cp) >= 0 {
            assert!(!cp.is_null(), "blosc2_schunk_get_cparams: no cparams");
            sink += u64::from((*cp).typesize as u32);
            free(cp.cast());
        }
        let mut dp = std::ptr::null_mut();
        if blosc2_schunk_get_dparams(sc, &mut dp) >= 0 {
            assert!(!dp.is_null(), "blosc2_schunk_get_dparams: no dparams");
            sink += u64::from((*dp).nthreads as u32);
            free(dp.cast());
        }
        // Its result is 8 bytes per chunk, whatever the frame's size (an
        // index stored as a run of one special code stands for any number
        // of chunks: 134 million in 172 bytes, session 52): asked only of
        // up to 2^20 chunks, as the chunks decoded are bounded.
        if (*sc).nchunks <= 1 << 20 {
            let offsets = blosc2_frame_get_offsets(sc);
            if !offsets.is_null() {
                let n = (*sc).nchunks.clamp(0, 1 << 16) as usize;
                sink += touch(offsets.cast(), n * 8);
                free(offsets.cast());
            }
        }
        let s = &*sc;
        let (mut start, mut stop) = (0i64, (s.nbytes / i64::from(s.typesize.max(1))).min(1000));
        let mut idx = std::ptr::null_mut::<i64>();
        let n = blosc2_get_slice_nchunks(sc, &mut start, &mut stop, &mut idx);
        if n >= 0 && !idx.is_null() {
            sink += touch(idx.cast(), n as usize * 8);
            free(idx.cast());
        }
        let len = blosc2_schunk_frame_len(sc);
        let (mut frame, mut needs_free) = (std::ptr::null_mut::<u8>(), false);
        let n = blosc2_schunk_to_buffer(sc, &mut frame, &mut needs_free);
        if n >= 0 {
            assert_eq!(
                len, n,
                "blosc2_schunk_frame_len and blosc2_schunk_to_buffer"
            );
        }
        if needs_free && !frame.is_null() {
            free(frame.cast());
        }
    }
    sink
}

/// The frame `blosc2_schunk_to_buffer` gives for `sc` opens, with the
/// chunk count and sizes the struct shows.
///
/// # Safety
/// `sc` is a live handle.
unsafe fn same_when_reopened(sc: *mut blosc2_schunk, what: &str) {
    let (mut frame, mut needs_free) = (std::ptr::null_mut::<u8>(), false);
    // SAFETY: live handle (caller); writable out-pointers.
    let n = unsafe { blosc2_schunk_to_buffer(sc, &mut frame, &mut needs_free) };
    if n > 0 {
        // SAFETY: n bytes the library returned.
        let mut again = unsafe { std::slice::from_raw_parts(frame, n as usize) }.to_vec();
        // SAFETY: again holds its length and outlives the handle.
        let sc2 =
            unsafe { blosc2_schunk_from_buffer(again.as_mut_ptr(), again.len() as i64, true) };
        assert!(!sc2.is_null(), "{what}: the frame written does not open");
        // SAFETY: both live.
        let (a, b) = unsafe { (&*sc, &*sc2) };
        assert_eq!(
            (a.nchunks, a.nbytes, a.cbytes),
            (b.nchunks, b.nbytes, b.cbytes),
            "{what}: the struct and the frame it writes"
        );
        // SAFETY: live, freed once.
        unsafe { blosc2_schunk_free(sc2) };
    }
    if needs_free && !frame.is_null() {
        // SAFETY: malloc'ed for the caller.
        unsafe { free(frame.cast()) };
    }
}

/// Edits through the C API on a live handle, each followed by a reopen.
///
/// # Safety
/// `sc` is a live handle.
unsafe fn edit_all(sc: *mut blosc2_schunk) {
    // SAFETY: live handle (caller).
    let cs = unsafe { (*sc).chunksize };
    let len = if (1..=65536).contains(&cs) {
        cs as usize
    } else {
        100
    };
    let data: Vec<u8> = (0..len).map(|i| (i * 7) as u8).collect();
    let mut chunk = oxiblosc::compress(&data, &oxiblosc::CParams::default().typesize(1)).unwrap();
    // SAFETY: live handle; `data` and `chunk` hold their lengths (a copy
    // of the chunk is taken).
    unsafe {
        let _ = blosc2_schunk_append_buffer(sc, data.as_ptr().cast(), len as i32);
        same_when_reopened(sc, "append_buffer");
        let _ = blosc2_schunk_delete_chunk(sc, 0);
        same_when_reopened(sc, "delete_chunk");
        let _ = blosc2_schunk_insert_chunk(sc, 0, chunk.as_mut_ptr(), true);
        same_when_reopened(sc, "insert_chunk");
        let last = (*sc).nchunks - 1;
        let _ = blosc2_schunk_update_chunk(sc, last, chunk.as_mut_ptr(), true);
        same_when_reopened(sc, "update_chunk");
        // Since session 44: the other edits of the C API.
        let _ = blosc2_schunk_append_chunk(sc, chunk.as_mut_ptr(), true);
        same_when_reopened(sc, "append_chunk");
        let n = (*sc).nchunks;
        if (1..=4096).contains(&n) {
            let mut order: Vec<i64> = (0..n).rev().collect();
            let _ = blosc2_schunk_reorder_offsets(sc, order.as_mut_ptr());
            same_when_reopened(sc, "reorder_offsets");
        }
        // A slice write decodes the chunks it falls in, with no output
        // limit (as C's): only where chunks hold at most MAX_CHUNK bytes.
        let cs = (*sc).chunksize;
        if cs > 0 && cs as usize <= MAX_CHUNK {
            let ts = i64::from((*sc).typesize.max(1));
            let items = ((*sc).nbytes / ts).clamp(0, 64);
            let mut buf: Vec<u8> = (0..(items * ts) as usize).map(|i| (i * 3) as u8).collect();
            let _ = blosc2_schunk_set_slice_buffer(sc, 0, items, buf.as_mut_ptr().cast());
            same_when_reopened(sc, "set_slice_buffer");
        }
        meta_edits(sc);
        copy_of(sc);
    }
}

/// The metalayer calls on a live handle, each followed by a reopen (since
/// session 44): the first metalayer's content rewritten (same length);
/// a vlmetalayer added, updated and deleted. A call that works shows in
/// the struct C reads.
///
/// # Safety
/// `sc` is a live handle.
unsafe fn meta_edits(sc: *mut blosc2_schunk) {
    // SAFETY: live handle (caller); buffers that hold their lengths.
    unsafe {
        let s = &*sc;
        if s.nmetalayers > 0 && !s.metalayers[0].is_null() {
            let m = &*s.metalayers[0];
            let name = CStr::from_ptr(m.name).to_owned();
            let len = m.content_len.clamp(0, 1 << 16);
            let mut content: Vec<u8> = (0..len).map(|i| (i * 5 + 1) as u8).collect();
            let r = blosc2_meta_update(sc, name.as_ptr(), content.as_mut_ptr(), len);
            if r >= 0 {
                let m = &*(*sc).metalayers[r as usize];
                assert_eq!(
                    m.content_len, len,
                    "blosc2_meta_update: the struct's length"
                );
                let now = std::slice::from_raw_parts(m.content, len as usize);
                assert!(now == content, "blosc2_meta_update: the struct's content");
            }
            same_when_reopened(sc, "meta_update");
        }
        let name = c"fz";
        let mut content = vec![7u8; 40];
        let _ = blosc2_vlmeta_add(
            sc,
            name.as_ptr(),
            content.as_mut_ptr(),
            40,
            std::ptr::null_mut(),
        );
        same_when_reopened(sc, "vlmeta_add");
        let mut content = vec![9u8; 300];
        let r = blosc2_vlmeta_update(
            sc,
            name.as_ptr(),
            content.as_mut_ptr(),
            300,
            std::ptr::null_mut(),
        );
        if r >= 0 {
            let (mut got, mut len) = (std::ptr::null_mut::<u8>(), 0i32);
            let g = blosc2_vlmeta_get(sc, name.as_ptr(), &mut got, &mut len);
            assert!(
                g >= 0,
                "blosc2_vlmeta_update worked, blosc2_vlmeta_get fails"
            );
            let now = std::slice::from_raw_parts(got, len.max(0) as usize);
            assert!(
                now == content,
                "blosc2_vlmeta_get after blosc2_vlmeta_update"
            );
            free(got.cast());
        }
        same_when_reopened(sc, "vlmeta_update");
        if blosc2_vlmeta_delete(sc, name.as_ptr()) >= 0 {
            assert!(
                blosc2_vlmeta_exists(sc, name.as_ptr()) < 0,
                "a deleted vlmetalayer exists"
            );
        }
        same_when_reopened(sc, "vlmeta_delete");
    }
}

/// `blosc2_schunk_copy` into a contiguous frame in memory (since session
/// 44): a copy that is made holds what the struct shows and writes a
/// frame that opens.
///
/// # Safety
/// `sc` is a live handle.
unsafe fn copy_of(sc: *mut blosc2_schunk) {
    let mut storage = blosc2_get_blosc2_storage_defaults();
    storage.contiguous = true;
    // SAFETY: live handle (caller); a storage that lives through the call.
    unsafe {
        let c = blosc2_schunk_copy(sc, &mut storage);
        if c.is_null() {
            return;
        }
        let (a, b) = (&*sc, &*c);
        assert_eq!(
            (a.nchunks, a.nbytes),
            (b.nchunks, b.nbytes),
            "blosc2_schunk_copy: the copy's struct"
        );
        // (A frame's header may give any i32; chunks hold 1-255.)
        if (1..=255).contains(&a.typesize) {
            assert_eq!(a.typesize, b.typesize, "blosc2_schunk_copy: the type size");
        }
        same_when_reopened(c, "schunk_copy");
        blosc2_schunk_free(c);
    }
}

/// [`b2nd_geometry::of_array`], then the typesize.
fn geometry(a: *const b2nd_array_t) -> Vec<i64> {
    let mut g = b2nd_geometry::of_array(a);
    // SAFETY: a live array's super-chunk.
    g.push(i64::from(unsafe { (*(*a).sc).typesize }));
    g
}

/// The array's items read whole by `b2nd_to_cbuffer` (`None` when it
/// refuses, or when they or a chunk are over `MAX_CHUNK` bytes).
fn items(a: *const b2nd_array_t) -> Option<Vec<u8>> {
    // SAFETY: a live array and its super-chunk.
    let c = unsafe { &*a };
    let ts = unsafe { (*c.sc).typesize.max(1) } as usize;
    let chunk_bytes = (c.chunknitems.max(0) as usize).saturating_mul(ts);
    let bytes = (c.nitems.max(0) as usize).saturating_mul(ts);
    if chunk_bytes > MAX_CHUNK || bytes > MAX_CHUNK {
        return None;
    }
    let mut out = vec![0u8; bytes];
    // SAFETY: a live array; a buffer of the size told.
    let r = unsafe { b2nd_to_cbuffer(a, out.as_mut_ptr().cast(), bytes as i64) };
    (r == 0).then_some(out)
}

/// `url` as a C string.
fn c_path(p: &std::path::Path) -> CString {
    CString::new(p.to_str().unwrap()).unwrap()
}

/// A frame holding a `b2nd` metalayer, written to a file and opened with
/// `b2nd_open` (since session 19): the struct C reads, and the array's
/// first item read through `b2nd_get_slice_cbuffer` into a buffer of
/// exactly one item (only for chunks of at most `MAX_CHUNK` bytes).
/// Since session 45 the same bytes are also opened with
/// `b2nd_open_offset` (after a prefix of 1-16 bytes), which takes the
/// frame exactly when `b2nd_open` does, and with `b2nd_from_schunk` (of
/// `blosc2_schunk_from_buffer`, when it takes the frame), which takes at
/// least what `b2nd_open` takes (also arrays whose chunks are not there
/// yet); every array
/// opened has the same geometry. An array
/// opened is saved with `b2nd_save` and `b2nd_save_append` (after a
/// prefix); when a save works, the array it wrote opens (`b2nd_open`,
/// `b2nd_open_offset` at the offset returned) with the same geometry and,
/// when the original's items read, the same items.
fn b2nd_read(data: &[u8]) {
    let dir = std::env::temp_dir().join(format!("oxiblosc-fuzz-capi-frame-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("a.b2nd");
    std::fs::write(&path, data).unwrap();
    let url = c_path(&path);
    let prefix = vec![0xa5u8; 1 + data.len() % 16];
    let off_path = dir.join("off.b2nd");
    std::fs::write(&off_path, [prefix.as_slice(), data].concat()).unwrap();
    let off_url = c_path(&off_path);
    let mut a: *mut b2nd_array_t = std::ptr::null_mut();
    // SAFETY: a NUL-terminated path, a writable out pointer.
    let opened = unsafe { b2nd_open(url.as_ptr(), &mut a) } == 0;
    let mut at: *mut b2nd_array_t = std::ptr::null_mut();
    // SAFETY: as above; the offset is where the frame starts.
    let r = unsafe { b2nd_open_offset(off_url.as_ptr(), &mut at, prefix.len() as i64) };
    assert_eq!(
        r == 0,
        opened,
        "b2nd_open_offset ({r}) and b2nd_open disagree"
    );
    let mut buf = data.to_vec();
    // SAFETY: buf holds len bytes (copied by the call).
    let sc = unsafe { blosc2_schunk_from_buffer(buf.as_mut_ptr(), buf.len() as i64, true) };
    let mut from: *mut b2nd_array_t = std::ptr::null_mut();
    if !sc.is_null() {
        // SAFETY: a live super-chunk, a writable out pointer; the array
        // takes the super-chunk when it is made, else it stays ours.
        let r = unsafe { b2nd_from_schunk(sc, &mut from) };
        // It also takes a super-chunk that does not hold the array's
        // chunks (yet), as C-Blosc2 does; b2nd_open refuses that frame.
        assert!(
            r == 0 || !opened,
            "b2nd_from_schunk ({r}) refused what b2nd_open took"
        );
        if r != 0 {
            // SAFETY: ours, freed once.
            unsafe { blosc2_schunk_free(sc) };
        }
    }
    // (blosc2_schunk_from_buffer may refuse a frame a file holds: the
    // buffer must be the frame's length, the file may hold more.)
    if opened {
        let g = geometry(a);
        assert_eq!(geometry(at), g, "b2nd_open_offset: another geometry");
        if !from.is_null() {
            assert_eq!(geometry(from), g, "b2nd_from_schunk: another geometry");
        }
        // SAFETY: a live array (b2nd_open returned 0).
        let c = unsafe { &*a };
        let n = c.ndim.clamp(0, 16) as usize;
        let mut sink: i64 = c.nitems ^ c.extnitems ^ i64::from(c.chunknitems);
        for d in 0..n {
            sink ^= c.shape[d] ^ c.extshape[d] ^ c.extchunkshape[d] ^ c.item_array_strides[d];
        }
        // SAFETY: a live array's super-chunk and its dtype string.
        let (ts, _) = unsafe { ((*c.sc).typesize.max(1) as usize, CStr::from_ptr(c.dtype)) };
        let chunk_bytes = (c.chunknitems.max(0) as usize).saturating_mul(ts);
        if c.nitems > 0 && chunk_bytes <= MAX_CHUNK {
            let start = vec![0i64; n];
            let stop = vec![1i64; n];
            let mut item = vec![0u8; ts];
            // SAFETY: a live array; start, stop and the buffer shape hold
            // ndim values; the buffer holds one item.
            let _ = unsafe {
                b2nd_get_slice_cbuffer(
                    a,
                    start.as_ptr(),
                    stop.as_ptr(),
                    item.as_mut_ptr().cast(),
                    stop.as_ptr(),
                    ts as i64,
                )
            };
        }
        std::hint::black_box(sink);
        same_as_rust(a, &g, &path);
        saves(a, &g, &dir, &prefix);
    }
    // SAFETY: null or the arrays opened above, each freed once.
    unsafe {
        b2nd_free(a);
        b2nd_free(at);
        b2nd_free(from);
    }
    // The directory too: one per process was left behind in $TMPDIR.
    let _ = std::fs::remove_dir_all(&dir);
}

/// When the Rust API opens the file as an array too (`NdArray::open`,
/// which also checks the dtype against the type size), it has the
/// geometry `g` of the live array `a` and, within `MAX_CHUNK` bytes, the
/// items `b2nd_to_cbuffer` reads (since session 45).
fn same_as_rust(a: *mut b2nd_array_t, g: &[i64], path: &std::path::Path) {
    let Ok(mut r) = oxiblosc::schunk::SChunk::open(path).and_then(oxiblosc::ndarray::NdArray::open)
    else {
        return;
    };
    assert_eq!(
        &g[..g.len() - 1],
        &b2nd_geometry::of_meta(r.meta())[..],
        "b2nd_open and NdArray::open: another geometry"
    );
    if r.nbytes() <= MAX_CHUNK as u64 {
        let rust = r.to_vec().ok();
        let c = items(a);
        if let (Some(rust), Some(c)) = (&rust, &c) {
            assert!(
                rust == c,
                "b2nd_to_cbuffer and NdArray::to_vec: other items"
            );
        }
        // SAFETY: a live array.
        let chunk_items = unsafe { (*a).chunknitems }.max(0) as u64;
        let chunk_bytes = chunk_items * g[g.len() - 1].max(0) as u64;
        assert!(
            c.is_none() || rust.is_some(),
            "b2nd_to_cbuffer reads the items, NdArray::to_vec does not"
        );
        assert!(
            rust.is_none() || c.is_some() || chunk_bytes > MAX_CHUNK as u64,
            "NdArray::to_vec reads the items, b2nd_to_cbuffer does not"
        );
    }
}

/// `b2nd_save` and `b2nd_save_append` of the live array `a` (geometry
/// `g`): what a save wrote opens as `a` (see [`b2nd_read`]).
fn saves(a: *mut b2nd_array_t, g: &[i64], dir: &std::path::Path, prefix: &[u8]) {
    let want = items(a);
    let same = |b: *mut b2nd_array_t, what: &str| {
        assert_eq!(geometry(b), g, "{what}: another geometry");
        if let Some(w) = &want {
            assert_eq!(items(b).as_ref(), Some(w), "{what}: other items");
        }
    };
    let saved = c_path(&dir.join("saved.b2nd"));
    // SAFETY: a live array and a NUL-terminated path (C's signature takes
    // it as mutable; it is only read).
    if unsafe { b2nd_save(a, saved.as_ptr() as *mut c_char) } == 0 {
        let mut b: *mut b2nd_array_t = std::ptr::null_mut();
        // SAFETY: a NUL-terminated path, a writable out pointer.
        let r = unsafe { b2nd_open(saved.as_ptr(), &mut b) };
        assert_eq!(r, 0, "b2nd_open of what b2nd_save wrote");
        same(b, "b2nd_save");
        // SAFETY: the array opened above, freed once.
        unsafe { b2nd_free(b) };
    }
    let appended = dir.join("appended.b2nd");
    std::fs::write(&appended, prefix).unwrap();
    let url = c_path(&appended);
    // SAFETY: a live array and a NUL-terminated path.
    let offset = unsafe { b2nd_save_append(a, url.as_ptr()) };
    if offset >= 0 {
        assert_eq!(offset, prefix.len() as i64, "b2nd_save_append: the offset");
        let mut b: *mut b2nd_array_t = std::ptr::null_mut();
        // SAFETY: a NUL-terminated path, a writable out pointer.
        let r = unsafe { b2nd_open_offset(url.as_ptr(), &mut b, offset) };
        assert_eq!(r, 0, "b2nd_open_offset of what b2nd_save_append wrote");
        same(b, "b2nd_save_append");
        // SAFETY: the array opened above, freed once.
        unsafe { b2nd_free(b) };
    }
}

/// The id the user-defined I/O of [`by_path`] is registered under.
const UDIO_ID: u8 = 200;
/// Reads through that I/O's callback.
static UDIO_READS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// The user-defined I/O's read: `blosc2_stdio_read`, counted.
unsafe extern "C" fn counted_read(
    ptr: *mut *mut c_void,
    size: i64,
    nitems: i64,
    position: i64,
    stream: *mut c_void,
) -> i64 {
    UDIO_READS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    // SAFETY: the library's arguments, passed on as they came.
    unsafe { blosc2::stdio::blosc2_stdio_read(ptr, size, nitems, position, stream) }
}

/// What a chunk of an open handle decompresses to: the return code and
/// the bytes (chunks of at most `MAX_CHUNK` bytes).
///
/// # Safety
/// `sc` is a live handle.
unsafe fn chunk_reads(sc: *mut blosc2_schunk) -> Vec<(i32, Vec<u8>)> {
    // SAFETY: live handle (caller).
    let s = unsafe { &*sc };
    let len = usize::try_from(s.chunksize).unwrap_or(0).min(MAX_CHUNK);
    (0..s.nchunks.clamp(0, MAX_CHUNKS))
        .map(|i| {
            let mut dest = vec![0u8; len];
            // SAFETY: live handle; len writable bytes.
            let r = unsafe {
                blosc2_schunk_decompress_chunk(sc, i, dest.as_mut_ptr().cast(), len as i32)
            };
            dest.truncate(r.max(0) as usize);
            (r, dest)
        })
        .collect()
}

/// `data` as a file, opened by path (since session 52): with
/// `blosc2_schunk_open` and through user-defined I/O (callbacks over
/// `blosc2_stdio_*`, as C-Blosc2's test_udio.c registers them), which must
/// agree: both open or neither, the same struct, every chunk decompresses
/// the same, and the callbacks were read through. The handle opened
/// through them is then read as a C reader does ([`read_all`]).
fn by_path(data: &[u8]) {
    static REGISTER: std::sync::Once = std::sync::Once::new();
    REGISTER.call_once(|| {
        let cb = blosc2_io_cb {
            id: UDIO_ID,
            name: c"fuzz".as_ptr() as *mut c_char,
            is_allocation_necessary: true,
            open: Some(blosc2_stdio_open),
            close: Some(blosc2_stdio_close),
            size: Some(blosc2_stdio_size),
            write: Some(blosc2_stdio_write),
            read: Some(counted_read),
            truncate: Some(blosc2_stdio_truncate),
            destroy: Some(blosc2_stdio_destroy),
        };
        // SAFETY: a complete callback set, copied by the call.
        assert_eq!(unsafe { blosc2_register_io_cb(&cb) }, 0);
    });
    let dir = std::env::temp_dir().join(format!("oxiblosc-fuzz-capi-udio-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("frame.b2frame");
    std::fs::write(&path, data).unwrap();
    let url = c_path(&path);
    let io = blosc2_io {
        id: UDIO_ID,
        name: c"fuzz".as_ptr(),
        params: std::ptr::null_mut(),
    };
    // SAFETY: a NUL-terminated path.
    let plain = unsafe { blosc2_schunk_open(url.as_ptr()) };
    UDIO_READS.store(0, std::sync::atomic::Ordering::Relaxed);
    // SAFETY: a NUL-terminated path; an io the call copies.
    let udio = unsafe { blosc2_schunk_open_udio(url.as_ptr(), &io) };
    assert_eq!(
        plain.is_null(),
        udio.is_null(),
        "blosc2_schunk_open and blosc2_schunk_open_udio disagree"
    );
    if !udio.is_null() {
        assert!(
            UDIO_READS.load(std::sync::atomic::Ordering::Relaxed) > 0,
            "opened without reading through the callbacks"
        );
        // SAFETY: both live.
        let (a, b) = unsafe { (&*plain, &*udio) };
        assert_eq!(
            (
                a.nchunks,
                a.nbytes,
                a.cbytes,
                a.typesize,
                a.chunksize,
                a.blocksize
            ),
            (
                b.nchunks,
                b.nbytes,
                b.cbytes,
                b.typesize,
                b.chunksize,
                b.blocksize
            ),
            "the struct by path and through user-defined I/O"
        );
        // SAFETY: both live.
        let (ra, rb) = unsafe { (chunk_reads(plain), chunk_reads(udio)) };
        for (i, (x, y)) in ra.iter().zip(&rb).enumerate() {
            assert_eq!(
                x.0, y.0,
                "chunk {i}: decompress by path and through user-defined I/O"
            );
            assert!(
                x.1 == y.1,
                "chunk {i}: other bytes through user-defined I/O"
            );
        }
        // SAFETY: live handle.
        unsafe { read_all(udio) };
        // SAFETY: made above, freed once.
        unsafe { blosc2_schunk_free(udio) };
    }
    if !plain.is_null() {
        // SAFETY: made above, freed once.
        unsafe { blosc2_schunk_free(plain) };
    }
    let _ = std::fs::remove_dir_all(&dir);
}

fuzz_target!(|data: &[u8]| {
    if data.first().is_some_and(|b| b % 4 == 1) {
        by_path(data);
    }
    if data.windows(4).any(|w| w == b"b2nd") {
        b2nd_read(data);
    }
    for copy in [true, false] {
        // An exact copy: the frame's buffer for `copy == false` must stay
        // alive while the handle lives, and a read past it is an ASan report.
        let mut buf = data.to_vec();
        // SAFETY: buf holds len bytes and outlives the handle.
        let sc = unsafe { blosc2_schunk_from_buffer(buf.as_mut_ptr(), buf.len() as i64, copy) };
        if sc.is_null() {
            return;
        }
        // SAFETY: a live handle, freed once below.
        unsafe { read_all(sc) };
        // SAFETY: a live handle.
        unsafe { same_when_reopened(sc, "read-only") };
        if copy && data.last().is_some_and(|b| b % 2 == 0) {
            // SAFETY: a live handle.
            unsafe { edit_all(sc) };
        }
        // SAFETY: made above, freed once.
        unsafe { blosc2_schunk_free(sc) };
        drop(buf);
    }
});
