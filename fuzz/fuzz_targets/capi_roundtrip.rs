//! Compression through the C libraries with whatever parameters a C caller
//! may pass: `blosc2_cparams` with any codec, level, type size, block size,
//! split mode, filters and metas (`blosc2_compress_ctx`), and the Blosc1-style
//! calls with any level, shuffle and type size (`blosc1_compress`,
//! `blosc_compress_ctx` with any compressor name and block size). A call
//! either returns an error code or a chunk that fits the buffer it was
//! given and decodes back to the input through the C calls and the engine
//! (only the length with the lossy TRUNC_PREC and INT_TRUNC filters).
//!
//! Layout: 28 bytes of parameters (see [`Params`]), then the data (at most
//! 64 KiB). Thread counts are taken modulo 4: C-Blosc2 starts as many
//! threads as it is asked for, and so do we.
#![no_main]
use std::ffi::{c_char, c_int};

use blosc2::v1;
use blosc2::v2::{self as b2, CPARAMS_DEFAULTS, DPARAMS_DEFAULTS};
use libfuzzer_sys::fuzz_target;

/// The parameter bytes at the start of the input.
struct Params<'a>(&'a [u8]);

impl Params<'_> {
    fn u8(&self, i: usize) -> u8 {
        self.0[i]
    }
    fn i32(&self, i: usize) -> i32 {
        i32::from_le_bytes(self.0[i..i + 4].try_into().unwrap())
    }
}

const HEAD: usize = 28;
const MAX_DATA: usize = 64 << 10;

/// Whether a filter slot list holds a lossy filter (TRUNC_PREC 4, INT_TRUNC 6).
fn lossy(filters: &[u8]) -> bool {
    filters.iter().any(|&f| f == 4 || f == 6)
}

/// Decode `chunk` through `blosc2_decompress_ctx`, `blosc1_decompress` and
/// the engine; each must give `data` (its length only when `lossy`).
fn check_decodes(what: &str, chunk: &[u8], data: &[u8], lossy: bool) {
    let same = |how: &str, r: c_int, out: &[u8]| {
        assert_eq!(r as usize, data.len(), "{what}: {how} returned {r}");
        if !lossy {
            assert!(out == data, "{what}: {how} gave other bytes");
        }
    };
    let dctx = b2::blosc2_create_dctx(DPARAMS_DEFAULTS);
    let mut out = vec![0u8; data.len()];
    // SAFETY: a live context; the sizes are the buffers'.
    let r = unsafe {
        b2::blosc2_decompress_ctx(
            dctx,
            chunk.as_ptr().cast(),
            chunk.len() as i32,
            out.as_mut_ptr().cast(),
            out.len() as i32,
        )
    };
    same("blosc2_decompress_ctx", r, &out);
    // SAFETY: made above, freed once.
    unsafe { b2::blosc2_free_ctx(dctx) };
    out.fill(0);
    // SAFETY: the chunk is whole; data.len() writable bytes.
    let r =
        unsafe { b2::blosc1_decompress(chunk.as_ptr().cast(), out.as_mut_ptr().cast(), out.len()) };
    same("blosc1_decompress", r, &out);
    let engine = oxiblosc::decompress(chunk).unwrap_or_else(|e| panic!("{what}: engine: {e}"));
    same("the engine", engine.len() as c_int, &engine);
}

fuzz_target!(|input: &[u8]| {
    if input.len() < HEAD {
        return;
    }
    let (head, data) = input.split_at(HEAD);
    let data = &data[..data.len().min(MAX_DATA)];
    let p = Params(head);
    // Room for the chunk, or (flag) a buffer that may be too small.
    let destsize = if p.u8(27) & 1 == 0 {
        data.len() + 32
    } else {
        usize::from(p.u8(26)) * 16
    };

    let mut cp = CPARAMS_DEFAULTS;
    cp.compcode = p.u8(0);
    cp.compcode_meta = p.u8(1);
    cp.clevel = p.u8(2);
    cp.use_dict = c_int::from(p.u8(3) & 1);
    cp.typesize = p.i32(4);
    cp.nthreads = i16::from(p.u8(8) % 4);
    cp.blocksize = p.i32(9);
    cp.splitmode = i32::from(p.u8(13));
    cp.filters.copy_from_slice(&head[14..20]);
    cp.filters_meta.copy_from_slice(&head[20..26]);
    let cctx = b2::blosc2_create_cctx(cp);
    assert!(!cctx.is_null());
    let mut dest = vec![0u8; destsize];
    // SAFETY: a live context; the sizes are the buffers'.
    let r = unsafe {
        b2::blosc2_compress_ctx(
            cctx,
            data.as_ptr().cast(),
            data.len() as i32,
            dest.as_mut_ptr().cast(),
            destsize as i32,
        )
    };
    // SAFETY: made above, freed once.
    unsafe { b2::blosc2_free_ctx(cctx) };
    if r > 0 {
        assert!(
            r as usize <= destsize,
            "blosc2_compress_ctx: {r} bytes in {destsize}"
        );
        check_decodes(
            "blosc2_compress_ctx",
            &dest[..r as usize],
            data,
            lossy(&cp.filters),
        );
    }

    // The Blosc1-style calls: level, shuffle mode and type size as given.
    let (clevel, doshuffle, typesize) = (c_int::from(p.u8(2)), c_int::from(p.u8(14)) - 1, p.i32(4));
    dest.fill(0);
    // SAFETY: data.len() readable bytes; destsize writable.
    let r = unsafe {
        b2::blosc1_compress(
            clevel,
            doshuffle,
            typesize as usize,
            data.len(),
            data.as_ptr().cast(),
            dest.as_mut_ptr().cast(),
            destsize,
        )
    };
    if r > 0 {
        assert!(
            r as usize <= destsize,
            "blosc1_compress: {r} bytes in {destsize}"
        );
        check_decodes("blosc1_compress", &dest[..r as usize], data, false);
    }
    let names: [&[u8]; 7] = [
        b"blosclz\0",
        b"lz4\0",
        b"lz4hc\0",
        b"zlib\0",
        b"zstd\0",
        b"snappy\0",
        b"nope\0",
    ];
    let name = names[usize::from(p.u8(0)) % names.len()];
    dest.fill(0);
    // SAFETY: as above; a NUL-terminated compressor name.
    let r = unsafe {
        v1::blosc_compress_ctx(
            clevel,
            doshuffle,
            typesize as usize,
            data.len(),
            data.as_ptr().cast(),
            dest.as_mut_ptr().cast(),
            destsize,
            name.as_ptr() as *const c_char,
            p.i32(9) as usize,
            c_int::from(p.u8(8) % 4),
        )
    };
    if r > 0 {
        assert!(
            r as usize <= destsize,
            "blosc_compress_ctx: {r} bytes in {destsize}"
        );
        let chunk = &dest[..r as usize];
        let mut out = vec![0u8; data.len()];
        // SAFETY: the chunk is whole; data.len() writable bytes.
        let n = unsafe {
            v1::blosc_decompress_ctx(chunk.as_ptr().cast(), out.as_mut_ptr().cast(), out.len(), 1)
        };
        assert_eq!(
            n as usize,
            data.len(),
            "blosc_compress_ctx: blosc_decompress_ctx returned {n}"
        );
        assert!(out == data, "blosc_compress_ctx: other bytes back");
        check_decodes("blosc_compress_ctx", chunk, data, false);
    }
});
