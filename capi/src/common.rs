//! Helpers shared by both ABIs: panic guards, raw-buffer views, C strings.

use std::ffi::{CStr, c_char, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};

use oxiblosc::{Codec, Error};

/// Run `f`, turning a panic into `on_panic` (no unwinding into C).
pub fn guard<T>(on_panic: T, f: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or(on_panic)
}

unsafe extern "C" {
    fn malloc(size: usize) -> *mut c_void;
    fn calloc(n: usize, size: usize) -> *mut c_void;
    fn free(p: *mut c_void);
}

/// `len` bytes from C's `calloc` (at least one is allocated), written by
/// `fill`; the caller `free()`s them. `Err(None)` when allocation fails,
/// `Err(Some(e))` when `fill` does (the bytes are freed).
pub fn calloc_filled<E>(
    len: usize,
    fill: impl FnOnce(&mut [u8]) -> Result<(), E>,
) -> Result<*mut u8, Option<E>> {
    // SAFETY: calloc has no preconditions; null is checked.
    let p = unsafe { calloc(len.max(1), 1) } as *mut u8;
    if p.is_null() {
        return Err(None);
    }
    // SAFETY: p holds len zeroed (so initialised) bytes that nothing else
    // refers to until p is returned; the advice (huge pages before they
    // are first written, from 4 MiB on) neither reads nor writes them.
    let dst = unsafe {
        oxiblosc::kernels::advise_huge_pages_at(p, len);
        std::slice::from_raw_parts_mut(p, len)
    };
    match guard(None, || Some(fill(dst))) {
        Some(Ok(())) => Ok(p),
        r => {
            // SAFETY: p came from calloc above and is freed once.
            unsafe { free(p.cast()) };
            Err(r.and_then(Result::err))
        }
    }
}

/// A copy of `b` in memory from C's `malloc` (the caller `free()`s it; at
/// least one byte is allocated), or null when allocation fails.
pub fn malloc_copy(b: &[u8]) -> *mut u8 {
    // SAFETY: malloc has no preconditions; null is checked.
    let p = unsafe { malloc(b.len().max(1)) } as *mut u8;
    if !p.is_null() {
        // SAFETY: p holds b.len() fresh bytes, not overlapping b.
        unsafe { std::ptr::copy_nonoverlapping(b.as_ptr(), p, b.len()) };
    }
    p
}

/// A `malloc`'ed copy of the plain-data struct `v` (the caller `free()`s
/// it), or null when allocation fails.
pub fn malloc_value<T: Copy>(v: &T) -> *mut T {
    // SAFETY: `T: Copy` is plain data here (the C params structs); its
    // `size_of::<T>()` bytes are read from a live reference.
    let bytes =
        unsafe { std::slice::from_raw_parts(v as *const T as *const u8, std::mem::size_of::<T>()) };
    malloc_copy(bytes) as *mut T
}

/// C's name of a codec (`"unknown"` for user codecs).
pub fn codec_cname(c: Codec) -> &'static CStr {
    match c {
        Codec::BloscLz => c"blosclz",
        Codec::Lz4 => c"lz4",
        Codec::Lz4Hc => c"lz4hc",
        Codec::Zlib => c"zlib",
        Codec::Zstd => c"zstd",
        _ => c"unknown",
    }
}

/// A copy of `s` in memory from C's `malloc` (the caller `free()`s it), or
/// null when allocation fails.
pub fn c_strdup(s: &str) -> *mut c_char {
    // SAFETY: malloc has no preconditions; the result is checked for null.
    let p = unsafe { malloc(s.len() + 1) } as *mut u8;
    if p.is_null() {
        return p as *mut c_char;
    }
    // SAFETY: p points to s.len() + 1 freshly allocated bytes that do not
    // overlap `s`.
    unsafe {
        std::ptr::copy_nonoverlapping(s.as_ptr(), p, s.len());
        *p.add(s.len()) = 0;
    }
    p as *mut c_char
}

/// The NUL-terminated string at `p` as UTF-8, or `None` (null or not UTF-8).
///
/// # Safety
/// `p` is null or points to a NUL-terminated string.
pub unsafe fn str_arg<'a>(p: *const c_char) -> Option<&'a str> {
    if p.is_null() {
        return None;
    }
    // SAFETY: the caller promises a NUL-terminated string.
    unsafe { CStr::from_ptr(p) }.to_str().ok()
}

/// Read the 16-byte Blosc header at `p` (version, versionlz, flags,
/// typesize, nbytes, blocksize, cbytes).
///
/// # Safety
/// `p` is non-null and points to at least 16 readable bytes.
pub unsafe fn header16(p: *const c_void) -> [u8; 16] {
    let mut h = [0u8; 16];
    // SAFETY: the caller promises 16 readable bytes at p.
    unsafe { std::ptr::copy_nonoverlapping(p as *const u8, h.as_mut_ptr(), 16) };
    h
}

/// Little-endian i32 at offset `o` of a header.
pub fn le_i32(h: &[u8], o: usize) -> i32 {
    i32::from_le_bytes([h[o], h[o + 1], h[o + 2], h[o + 3]])
}

/// The library name of a codec format number (`flags >> 5`).
pub fn complib_of_format(format: u8) -> Option<&'static CStr> {
    Some(match format {
        0 => c"BloscLZ",
        1 => c"LZ4",
        2 => c"Snappy",
        3 => c"Zlib",
        4 => c"Zstd",
        _ => return None,
    })
}

/// The library (`BloscLZ`, `LZ4`, ...) and its version for a codec.
pub fn complib_info(codec: Codec) -> (&'static str, &'static str) {
    match codec {
        Codec::BloscLz => ("BloscLZ", "2.5.1"),
        Codec::Lz4 | Codec::Lz4Hc => ("LZ4", "1.9.4"),
        Codec::Zlib => ("Zlib", "1.2.13"),
        Codec::Zstd => ("Zstd", "1.5.5"),
        _ => ("Unknown", "0"),
    }
}

/// The codec for a C-Blosc code, if this build has it.
pub fn codec_of_code(code: i32) -> Option<Codec> {
    let c = Codec::from_id(u8::try_from(code).ok()?)?;
    c.is_available().then_some(c)
}

/// Whether an error means "the output did not fit".
pub fn is_dst_too_small(e: &Error) -> bool {
    matches!(e, Error::DstTooSmall { .. })
}

/// `strtol(s, NULL, 10)` on an environment variable's value.
pub fn strtol(s: &str) -> i64 {
    let t = s.trim_start();
    let (neg, digits) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let mut v: i64 = 0;
    for b in digits.bytes() {
        if !b.is_ascii_digit() {
            break;
        }
        v = v.saturating_mul(10).saturating_add(i64::from(b - b'0'));
    }
    if neg { -v } else { v }
}

/// `len` bytes at `p` as a slice (empty when `len` is 0, whatever `p` is).
///
/// # Safety
/// When `len > 0`, `p` is non-null and points to `len` readable bytes that
/// stay valid and unwritten for `'a`.
pub unsafe fn slice_in<'a>(p: *const c_void, len: usize) -> &'a [u8] {
    if len == 0 || p.is_null() {
        return &[];
    }
    // SAFETY: the caller promises `len` readable bytes at `p`.
    unsafe { std::slice::from_raw_parts(p as *const u8, len) }
}

/// `len` bytes at `p` as a mutable slice (empty when `len` is 0).
///
/// # Safety
/// When `len > 0`, `p` is non-null and points to `len` writable bytes, not
/// aliased by any other live slice, valid for `'a`.
pub unsafe fn slice_out<'a>(p: *mut c_void, len: usize) -> &'a mut [u8] {
    if len == 0 || p.is_null() {
        return &mut [];
    }
    // SAFETY: the caller promises `len` writable, unaliased bytes at `p`.
    unsafe { std::slice::from_raw_parts_mut(p as *mut u8, len) }
}

/// The chunk at `src` as a slice of its header's `cbytes` (the C libraries
/// trust that field the same way), after checking the 16-byte header.
/// `None` for a header that cannot be right (cbytes below the header size).
///
/// # Safety
/// `src` is non-null and points to a chunk of at least 16 bytes whose
/// header's `cbytes` bytes are readable.
pub unsafe fn chunk_at<'a>(src: *const c_void) -> Option<&'a [u8]> {
    // SAFETY: the caller promises at least a 16-byte header.
    let h = unsafe { header16(src) };
    let cbytes = le_i32(&h, 12);
    let min = if h[2] & 0x05 == 0x05 { 32 } else { 16 };
    let cbytes = usize::try_from(cbytes).ok().filter(|&c| c >= min)?;
    // SAFETY: the caller promises `cbytes` readable bytes at src.
    Some(unsafe { slice_in(src, cbytes) })
}

#[cfg(test)]
mod tests {
    use std::ffi::c_void;

    /// `calloc_filled` hands over the bytes `fill` wrote (zero where it
    /// wrote nothing), and frees them when `fill` fails or panics (under
    /// Miri: no leak, no double free).
    #[test]
    fn calloc_filled_hands_over_or_frees() {
        let p = super::calloc_filled(5, |b| {
            b[1] = 7;
            Ok::<(), ()>(())
        })
        .unwrap();
        // SAFETY: 5 bytes from calloc, ours to read and free.
        unsafe {
            assert_eq!(std::slice::from_raw_parts(p, 5), [0, 7, 0, 0, 0]);
            super::free(p.cast());
        }
        let e = super::calloc_filled(5, |_| Err::<(), _>("no"));
        assert_eq!(e.err(), Some(Some("no")));
        let e = super::calloc_filled(5, |_| -> Result<(), ()> { panic!("fill") });
        assert_eq!(e.err(), Some(None));
        // Zero bytes still allocate one (C callers free what they get).
        let p = super::calloc_filled(0, |b| {
            assert!(b.is_empty());
            Ok::<(), ()>(())
        })
        .unwrap();
        assert!(!p.is_null());
        // SAFETY: from calloc, freed once.
        unsafe { super::free(p.cast()) };
    }

    /// getitem of memcpyed chunks (clevel 0) through both ABIs takes the
    /// direct copy: every range gives the input's items; a range past the
    /// end is refused as before; a chunk whose cbytes is cut short still
    /// goes through the engine's checks (an error, not a short copy).
    /// `src` (4-byte items, byte shuffle) as a chunk of `blosc2_compress`.
    fn blosc2_chunk(clevel: i32, src: &[u8]) -> Vec<u8> {
        let mut c = vec![0u8; src.len() + 64];
        // SAFETY: the buffers have the sizes given.
        let n = unsafe {
            crate::v2::blosc2_compress(
                clevel,
                1,
                4,
                src.as_ptr().cast(),
                src.len() as i32,
                c.as_mut_ptr().cast(),
                c.len() as i32,
            )
        };
        assert!(n > 0);
        c.truncate(n as usize);
        c
    }

    #[test]
    fn memcpyed_getitem_copies_the_items_and_refuses_what_is_outside() {
        let src: Vec<u8> = (0..4000u32).flat_map(|i| (i * 7).to_le_bytes()).collect();
        let chunk = blosc2_chunk(0, &src);
        assert_ne!(chunk[2] & 0x02, 0, "clevel 0 makes a memcpyed chunk");
        // The Blosc1 ABI reads Blosc1 chunks (16-byte header).
        let mut chunk1 = vec![0u8; src.len() + 64];
        // SAFETY: the buffers have the sizes given.
        let n1 = unsafe {
            crate::v1::blosc_compress(
                0,
                1,
                4,
                src.len(),
                src.as_ptr().cast(),
                chunk1.as_mut_ptr().cast(),
                chunk1.len(),
            )
        };
        assert!(n1 > 0);
        chunk1.truncate(n1 as usize);
        assert_ne!(chunk1[2] & 0x02, 0, "clevel 0 makes a memcpyed chunk");
        for (start, nitems) in [(0, 1), (17, 100), (3999, 1), (0, 4000), (2000, 0)] {
            let mut out = vec![0u8; nitems * 4 + 1];
            // SAFETY: chunk is a whole chunk; out has room.
            let r = unsafe {
                crate::v2::blosc2_getitem(
                    chunk.as_ptr().cast(),
                    chunk.len() as i32,
                    start as i32,
                    nitems as i32,
                    out.as_mut_ptr().cast::<c_void>(),
                    out.len() as i32,
                )
            };
            assert_eq!(r, (nitems * 4) as i32);
            assert_eq!(&out[..nitems * 4], &src[start * 4..(start + nitems) * 4]);
            let mut out1 = vec![0u8; nitems * 4 + 1];
            // SAFETY: as above.
            let r1 = unsafe {
                crate::v1::blosc_getitem(
                    chunk1.as_ptr().cast(),
                    start as i32,
                    nitems as i32,
                    out1.as_mut_ptr().cast::<c_void>(),
                )
            };
            assert_eq!(r1, (nitems * 4) as i32);
            assert_eq!(out1, out);
        }
        let mut out = vec![0u8; 64];
        // SAFETY: as above.
        let past = unsafe {
            crate::v2::blosc2_getitem(
                chunk.as_ptr().cast(),
                chunk.len() as i32,
                3999,
                2,
                out.as_mut_ptr().cast::<c_void>(),
                64,
            )
        };
        assert!(past < 0);
        // cbytes claims more than the buffer holds: refused, not copied short.
        let cut = &chunk[..chunk.len() - 100];
        // SAFETY: `cut` is readable for the size given.
        let r = unsafe {
            crate::v2::blosc2_getitem(
                cut.as_ptr().cast(),
                cut.len() as i32,
                3990,
                5,
                out.as_mut_ptr().cast::<c_void>(),
                64,
            )
        };
        assert!(r < 0, "{r}");
        // ... also for items inside what is there.
        // SAFETY: `cut` is readable for the size given.
        let r = unsafe {
            crate::v2::blosc2_getitem(
                cut.as_ptr().cast(),
                cut.len() as i32,
                0,
                5,
                out.as_mut_ptr().cast::<c_void>(),
                64,
            )
        };
        assert!(r < 0, "{r}");
    }

    /// getitem's range check when nbytes is not a multiple of the typesize
    /// (4001 bytes of 4-byte items: 1000 whole items), through both ABIs:
    /// C's `start + nitems <= nbytes / typesize`.
    #[test]
    fn getitem_range_counts_whole_items_only() {
        let src: Vec<u8> = (0..4001u32).map(|i| (i % 251) as u8).collect();
        for clevel in [0, 5] {
            let mut chunk = vec![0u8; src.len() + 64];
            let mut chunk1 = vec![0u8; src.len() + 64];
            // SAFETY: the buffers have the sizes given.
            let (n, n1) = unsafe {
                (
                    crate::v2::blosc2_compress(
                        clevel,
                        1,
                        4,
                        src.as_ptr().cast(),
                        src.len() as i32,
                        chunk.as_mut_ptr().cast(),
                        chunk.len() as i32,
                    ),
                    crate::v1::blosc_compress(
                        clevel,
                        1,
                        4,
                        src.len(),
                        src.as_ptr().cast(),
                        chunk1.as_mut_ptr().cast(),
                        chunk1.len(),
                    ),
                )
            };
            assert!(n > 0 && n1 > 0);
            for (start, nitems, ok) in [
                (0, 1000, true),
                (999, 1, true),
                (1000, 0, true),
                (1000, 1, false),
                (0, 1001, false),
                (1001, 0, false),
            ] {
                let mut out = vec![0u8; 4 * 1001];
                // SAFETY: the chunks are whole; out holds 1001 items.
                let (r, r1) = unsafe {
                    (
                        crate::v2::blosc2_getitem(
                            chunk.as_ptr().cast(),
                            n,
                            start,
                            nitems,
                            out.as_mut_ptr().cast::<c_void>(),
                            out.len() as i32,
                        ),
                        crate::v1::blosc_getitem(
                            chunk1.as_ptr().cast(),
                            start,
                            nitems,
                            out.as_mut_ptr().cast::<c_void>(),
                        ),
                    )
                };
                let want = if ok { 4 * nitems } else { -1 };
                assert_eq!(
                    (r >= 0, r1 >= 0),
                    (ok, ok),
                    "clevel {clevel} {start}+{nitems}"
                );
                if ok {
                    assert_eq!((r, r1), (want, want));
                }
            }
        }
    }

    /// The memcpyed shortcut refuses what the engine's path refuses, with
    /// the same codes: the same bad calls on a memcpyed chunk and on a
    /// compressed chunk of the same data give the same result, through
    /// `blosc2_getitem_ctx`.
    #[test]
    fn memcpyed_and_compressed_chunks_refuse_bad_getitems_alike() {
        use crate::v2::{self, err};
        let src: Vec<u8> = (0..4000u32).flat_map(|i| (i / 3).to_le_bytes()).collect();
        let (memcpyed, packed) = (blosc2_chunk(0, &src), blosc2_chunk(5, &src));
        assert_ne!(memcpyed[2] & 0x02, 0);
        assert_eq!(packed[2] & 0x02, 0, "clevel 5 compresses this data");
        let dctx = v2::blosc2_create_dctx(v2::DPARAMS_DEFAULTS);
        let call =
            |chunk: &[u8], start: i32, nitems: i32, out: Option<&mut [u8]>, destsize: i32| {
                let dest = out.map_or(std::ptr::null_mut(), |o| o.as_mut_ptr().cast::<c_void>());
                // SAFETY: chunk is readable for its length; dest is null or has
                // at least destsize bytes (the cases below keep to that).
                unsafe {
                    v2::blosc2_getitem_ctx(
                        dctx,
                        chunk.as_ptr().cast(),
                        chunk.len() as i32,
                        start,
                        nitems,
                        dest,
                        destsize,
                    )
                }
            };
        let mut out = vec![0u8; 1024];
        let cases: [(i32, i32, bool, i32, i32); 7] = [
            // (start, nitems, dest given, destsize, expected)
            (10, 20, true, 80, 80),
            (10, 20, true, 79, err::WRITE_BUFFER),
            (3990, 11, true, 1024, err::INVALID_PARAM),
            (-1, 1, true, 1024, err::INVALID_PARAM),
            (0, -1, true, 1024, err::INVALID_PARAM),
            (0, 4, false, 16, err::NULL_POINTER),
            (4000, 0, false, 0, 0),
        ];
        for (start, nitems, given, destsize, want) in cases {
            let mut results = Vec::new();
            for chunk in [&memcpyed, &packed] {
                let o = given.then_some(&mut out[..]);
                results.push(call(chunk, start, nitems, o, destsize));
            }
            assert_eq!(
                results,
                [want, want],
                "start {start} nitems {nitems} destsize {destsize}"
            );
        }
        // A header the full parse refuses is refused with parse's code (the
        // two chunks may fail different checks: a memcpyed chunk's cbytes
        // must be nbytes + 32, a compressed one's must fit the buffer).
        for (at, v) in [
            (0usize, 0u8),
            (3, 0),
            (12, 0xff),
            (13, 0x7f),
            (15, 0x80),
            (31, 0x80),
        ] {
            for chunk in [&memcpyed, &packed] {
                let mut bad = chunk.clone();
                bad[at] = v;
                let Err(e) = oxiblosc::ChunkHeader::parse(&bad) else {
                    panic!(
                        "byte {at} = {v:#x} parses, memcpyed: {}",
                        chunk == &memcpyed
                    );
                };
                let want = v2::code_of(&e);
                let got = call(&bad, 0, 4, Some(&mut out[..]), 1024);
                assert_eq!(
                    got,
                    want,
                    "byte {at} = {v:#x}, memcpyed: {}",
                    chunk == &memcpyed
                );
            }
        }
        // SAFETY: dctx came from blosc2_create_dctx and is freed once.
        unsafe { v2::blosc2_free_ctx(dctx) };
    }
}
