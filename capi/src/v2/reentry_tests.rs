//! A user filter's callback calling back into the context whose call is
//! running it, with the pointer C holds: `blosc2_decompress_ctx` and
//! `blosc2_getitem_ctx` on the same decompression context, and
//! `blosc2_compress_ctx` on the same compression context. Each inner call
//! must work (it gets a decompressor of its own) and the outer call must
//! finish with the right bytes; under Miri
//! (`cargo +nightly miri test -p oxiblosc-capi --lib ctx_reentry`) no
//! reference to the context may be live across the callback.

use std::cell::Cell;
use std::sync::Mutex;
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};

use super::plugins::{blosc2_filter, blosc2_register_filter};
use super::test_calls::{compress, decompress_into};
use super::*;

/// The filter id, unused by the other tests of this crate.
const ID: u8 = 241;

/// The context the callbacks re-enter (null: do not re-enter).
static DCTX: AtomicPtr<blosc2_context> = AtomicPtr::new(std::ptr::null_mut());
static CCTX: AtomicPtr<blosc2_context> = AtomicPtr::new(std::ptr::null_mut());
/// The plain chunk the inner calls decode, and its data.
static INNER: Mutex<(Vec<u8>, Vec<u8>)> = Mutex::new((Vec::new(), Vec::new()));
/// The data the inner compressions compress, and the chunk they must give.
static OUTER: Mutex<(Vec<u8>, Vec<u8>)> = Mutex::new((Vec::new(), Vec::new()));
/// Inner calls that returned the right result.
static INNER_OK: AtomicUsize = AtomicUsize::new(0);
/// Inner calls made.
static INNER_CALLS: AtomicUsize = AtomicUsize::new(0);

/// Data of `n` bytes that compress.
fn data(n: usize) -> Vec<u8> {
    (0..n as u32 / 4)
        .flat_map(|i| (i / 5).to_le_bytes())
        .collect()
}

/// Decompress `chunk` through `ctx` into `len` bytes: the return code and
/// the buffer.
fn decompress(ctx: *mut blosc2_context, chunk: &[u8], len: usize) -> (c_int, Vec<u8>) {
    let mut out = vec![0u8; len];
    (decompress_into(ctx, chunk, &mut out), out)
}

/// Items `[start, start + nitems)` of 4 bytes of `chunk` through `ctx`:
/// the return code and the buffer.
fn getitem(
    ctx: *mut blosc2_context,
    chunk: &[u8],
    start: c_int,
    nitems: c_int,
) -> (c_int, Vec<u8>) {
    let mut items = vec![0u8; 4 * nitems as usize];
    // SAFETY: ctx is a live context; room for nitems items of 4 bytes.
    let n = unsafe {
        blosc2_getitem_ctx(
            ctx,
            chunk.as_ptr().cast(),
            chunk.len() as i32,
            start,
            nitems,
            items.as_mut_ptr().cast(),
            items.len() as i32,
        )
    };
    (n, items)
}

thread_local! {
    /// Set while a callback re-enters: the inner compression runs the
    /// filter too, which must not re-enter again.
    static INSIDE: Cell<bool> = const { Cell::new(false) };
}

/// What a callback does besides its filtering (once, not from an inner
/// call): decompress and get items from the inner chunk through `DCTX`,
/// compress the outer data through `CCTX`.
fn reenter() {
    if INSIDE.replace(true) {
        return;
    }
    let (chunk, want) = INNER.lock().unwrap().clone();
    let dctx = DCTX.load(Ordering::SeqCst);
    if !dctx.is_null() {
        INNER_CALLS.fetch_add(2, Ordering::SeqCst);
        let (n, out) = decompress(dctx, &chunk, want.len());
        if n as usize == want.len() && out == want {
            INNER_OK.fetch_add(1, Ordering::SeqCst);
        }
        let (n, items) = getitem(dctx, &chunk, 3, 10);
        if n == 40 && items == want[12..52] {
            INNER_OK.fetch_add(1, Ordering::SeqCst);
        }
    }
    let cctx = CCTX.load(Ordering::SeqCst);
    if !cctx.is_null() {
        INNER_CALLS.fetch_add(1, Ordering::SeqCst);
        let (data, chunk) = OUTER.lock().unwrap().clone();
        if compress(cctx, &data).is_ok_and(|c| c == chunk) {
            INNER_OK.fetch_add(1, Ordering::SeqCst);
        }
    }
    INSIDE.set(false);
}

unsafe extern "C" fn forward(
    src: *const u8,
    dst: *mut u8,
    size: i32,
    _meta: u8,
    _cparams: *mut blosc2_cparams,
    _id: u8,
) -> c_int {
    // SAFETY: size bytes at each, not overlapping (the engine's buffers).
    unsafe { std::ptr::copy_nonoverlapping(src, dst, size as usize) };
    reenter();
    0
}

unsafe extern "C" fn backward(
    src: *const u8,
    dst: *mut u8,
    size: i32,
    _meta: u8,
    _dparams: *mut blosc2_dparams,
    _id: u8,
) -> c_int {
    // SAFETY: as `forward`.
    unsafe { std::ptr::copy_nonoverlapping(src, dst, size as usize) };
    reenter();
    0
}

unsafe extern "C" fn prefilter(pp: *mut blosc2_prefilter_params) -> c_int {
    // SAFETY: the engine's params: output_size bytes at input and output.
    unsafe {
        let pp = &*pp;
        std::ptr::copy_nonoverlapping(pp.input, pp.output, pp.output_size as usize);
    }
    reenter();
    0
}

unsafe extern "C" fn postfilter(pp: *mut blosc2_postfilter_params) -> c_int {
    // SAFETY: the engine's params: size bytes at input and output.
    unsafe {
        let pp = &*pp;
        std::ptr::copy_nonoverlapping(pp.input, pp.output, pp.size as usize);
    }
    reenter();
    0
}

/// Decompress the outer chunk and get items from it through `dctx`, with
/// `DCTX` set to it: every call must give the outer data, and each
/// callback's inner calls must have worked.
fn decode_reentering(dctx: *mut blosc2_context, outer: &[u8], outer_data: &[u8], min_calls: usize) {
    let n = outer_data.len();
    DCTX.store(dctx, Ordering::SeqCst);
    let (ok0, calls0) = (
        INNER_OK.load(Ordering::SeqCst),
        INNER_CALLS.load(Ordering::SeqCst),
    );
    let (r, back) = decompress(dctx, outer, n);
    assert_eq!(r as usize, n);
    assert_eq!(back, outer_data);
    let (r, items) = getitem(dctx, outer, 200, 300);
    assert_eq!(r, 1200);
    assert_eq!(items, outer_data[800..2000]);
    DCTX.store(std::ptr::null_mut(), Ordering::SeqCst);
    let calls = INNER_CALLS.load(Ordering::SeqCst) - calls0;
    assert!(
        calls >= min_calls,
        "{calls} inner calls, {min_calls} expected"
    );
    assert_eq!(INNER_OK.load(Ordering::SeqCst) - ok0, calls);
    // The context still works.
    let (r, back) = decompress(dctx, outer, n);
    assert_eq!((r as usize, &back[..]), (n, outer_data));
}

/// Compress the outer data through `cctx` with `CCTX` set to it: the chunk
/// must be `outer`, and each callback's inner compression must have worked.
fn encode_reentering(cctx: *mut blosc2_context, outer: &[u8], outer_data: &[u8], min_calls: usize) {
    CCTX.store(cctx, Ordering::SeqCst);
    let (ok0, calls0) = (
        INNER_OK.load(Ordering::SeqCst),
        INNER_CALLS.load(Ordering::SeqCst),
    );
    assert_eq!(compress(cctx, outer_data).unwrap(), outer);
    CCTX.store(std::ptr::null_mut(), Ordering::SeqCst);
    let calls = INNER_CALLS.load(Ordering::SeqCst) - calls0;
    assert!(
        calls >= min_calls,
        "{calls} inner compressions, {min_calls} expected"
    );
    assert_eq!(INNER_OK.load(Ordering::SeqCst) - ok0, calls);
}

#[test]
fn ctx_reentry_from_a_filter_callback_works_and_aliases_nothing() {
    let mut f = blosc2_filter {
        id: ID,
        name: c"ctx-reentry".as_ptr() as *mut c_char,
        version: 1,
        forward: Some(forward),
        backward: Some(backward),
    };
    // SAFETY: a valid filter.
    assert_eq!(unsafe { blosc2_register_filter(&mut f) }, 0);
    let n = if cfg!(miri) { 2048 } else { 16_384 };
    let mut plain = CPARAMS_DEFAULTS;
    plain.typesize = 4;
    plain.blocksize = 1024;
    let pctx = blosc2_create_cctx(plain);
    let inner_data = data(n);
    let inner = compress(pctx, &inner_data).unwrap();
    *INNER.lock().unwrap() = (inner, inner_data);

    let mut cp = plain;
    cp.filters = [0, 0, 0, 0, 1, ID];
    // Not yet re-entering: the outer chunk.
    let cctx = blosc2_create_cctx(cp);
    let outer_data: Vec<u8> = data(n).iter().map(|b| b ^ 0x5a).collect();
    let outer = compress(cctx, &outer_data).unwrap();
    let blocks = n / 1024;
    *OUTER.lock().unwrap() = (outer_data.clone(), outer.clone());

    // Compression, decompression and getitem re-entering their own context
    // from the user filter: every block once for the compression and the
    // decompression, the two blocks the items cover for getitem, two inner
    // calls (decompress and getitem) per decoding callback.
    encode_reentering(cctx, &outer, &outer_data, blocks);
    let dctx = blosc2_create_dctx(DPARAMS_DEFAULTS);
    decode_reentering(dctx, &outer, &outer_data, 2 * (blocks + 2));

    // The same from a prefilter and a postfilter, on plain chunks.
    let mut pre = plain;
    pre.prefilter = Some(prefilter);
    let prectx = blosc2_create_cctx(pre);
    let plain_outer = compress(pctx, &outer_data).unwrap();
    *OUTER.lock().unwrap() = (outer_data.clone(), plain_outer.clone());
    encode_reentering(prectx, &plain_outer, &outer_data, blocks);
    let mut post = DPARAMS_DEFAULTS;
    post.postfilter = Some(postfilter);
    let postctx = blosc2_create_dctx(post);
    decode_reentering(postctx, &plain_outer, &outer_data, 2 * (blocks + 2));
    // SAFETY: each context is live and freed once.
    unsafe {
        blosc2_free_ctx(pctx);
        blosc2_free_ctx(cctx);
        blosc2_free_ctx(dctx);
        blosc2_free_ctx(prectx);
        blosc2_free_ctx(postctx);
    }
}
