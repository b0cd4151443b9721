//! What our `context.h` promises, driven through the exported C calls:
//! `new_nthreads` takes effect at the next call (contexts and a
//! super-chunk's `cctx` / `dctx`), `thread_pool` is shared per thread
//! count and released with the last context, `use_dict` of a decompression
//! context follows the chunk decoded, `filters` / `filters_meta` written
//! to a compression context apply at its next call. Each test uses its own thread counts
//! (the pool registry is process-wide and tests run in parallel).

use std::ffi::c_void;

use super::pool;
use crate::schunk::{
    blosc2_schunk_append_buffer, blosc2_schunk_decompress_chunk, blosc2_schunk_free,
    blosc2_schunk_get_chunk, blosc2_schunk_get_slice_buffer, memory_schunk,
};
use crate::v2::{
    CPARAMS_DEFAULTS, DPARAMS_DEFAULTS, blosc2_compress_ctx, blosc2_context, blosc2_create_cctx,
    blosc2_create_dctx, blosc2_ctx_get_cparams, blosc2_decompress_ctx, blosc2_free_ctx,
    blosc2_vlcompress_ctx, blosc2_vldecompress_ctx, err,
};

fn data(n: usize) -> Vec<u8> {
    (0..n as u32).flat_map(|i| (i / 3).to_le_bytes()).collect()
}

/// Compress `src` with `ctx`; the chunk.
fn compress(ctx: *mut blosc2_context, src: &[u8]) -> Result<Vec<u8>, i32> {
    // nbytes + 32, the room python-blosc2 gives: data that does not
    // compress gives a memcpyed chunk (with more room, raw streams).
    let mut out = vec![0u8; src.len() + 32];
    // SAFETY: ctx is live; both buffers have the sizes given.
    let n = unsafe {
        blosc2_compress_ctx(
            ctx,
            src.as_ptr() as *const c_void,
            src.len() as i32,
            out.as_mut_ptr() as *mut c_void,
            out.len() as i32,
        )
    };
    if n <= 0 {
        return Err(n);
    }
    out.truncate(n as usize);
    Ok(out)
}

fn decompress(ctx: *mut blosc2_context, chunk: &[u8], len: usize) -> Vec<u8> {
    let mut out = vec![0u8; len];
    // SAFETY: ctx is live; both buffers have the sizes given.
    let n = unsafe {
        blosc2_decompress_ctx(
            ctx,
            chunk.as_ptr() as *const c_void,
            chunk.len() as i32,
            out.as_mut_ptr() as *mut c_void,
            len as i32,
        )
    };
    assert_eq!(n, len as i32);
    out
}

#[test]
fn new_nthreads_applies_at_the_next_call_and_moves_the_context_between_pools() {
    let (a, b) = (11usize, 13usize);
    let src = data(100_000);
    let mut cp = CPARAMS_DEFAULTS;
    cp.typesize = 4;
    cp.nthreads = 1;
    let c1 = blosc2_create_cctx(cp);
    cp.nthreads = a as i16;
    let c2 = blosc2_create_cctx(cp);
    // SAFETY: c1 and c2 are live contexts from blosc2_create_cctx; C reads
    // and writes their head fields between calls, as here.
    unsafe {
        assert_eq!(((*c1).nthreads, (*c1).new_nthreads), (1, 1));
        assert!((*c2).thread_pool.is_null(), "no pool before the first call");
        let want = compress(c1, &src).unwrap();
        assert!((*c1).thread_pool.is_null(), "one thread: no pool");
        assert_eq!(compress(c2, &src).unwrap(), want);
        assert!(!(*c2).thread_pool.is_null());
        assert_eq!(pool::attached(a), 1);

        // A count written by C: nothing changes until the next call.
        (*c1).new_nthreads = a as i16;
        assert_eq!(((*c1).nthreads, pool::attached(a)), (1, 1));
        assert_eq!(
            compress(c1, &src).unwrap(),
            want,
            "same bytes on any thread count"
        );
        assert_eq!((*c1).nthreads, a as i16);
        assert_eq!(
            (*c1).thread_pool,
            (*c2).thread_pool,
            "same count, same pool"
        );
        assert_eq!(pool::attached(a), 2);
        let mut got = CPARAMS_DEFAULTS;
        assert_eq!(blosc2_ctx_get_cparams(c1, &mut got), 0);
        assert_eq!(got.nthreads, a as i16, "the cparams follow");

        // Another count: another pool; the old one loses a context.
        (*c1).new_nthreads = b as i16;
        compress(c1, &src).unwrap();
        assert_ne!((*c1).thread_pool, (*c2).thread_pool);
        assert_eq!((pool::attached(a), pool::attached(b)), (1, 1));

        // Back to one thread: no pool.
        (*c1).new_nthreads = 1;
        compress(c1, &src).unwrap();
        assert!((*c1).thread_pool.is_null());
        assert_eq!(pool::attached(b), 0, "the last context left the pool");

        // A count below 1 is refused, as C-Blosc2 does.
        (*c1).new_nthreads = 0;
        assert_eq!(compress(c1, &src), Err(err::INVALID_PARAM));

        blosc2_free_ctx(c1);
        blosc2_free_ctx(c2);
    }
    assert_eq!(pool::attached(a), 0, "freed contexts leave their pool");
}

#[test]
fn decompression_contexts_share_pools_and_report_the_dictionary_of_the_chunk() {
    let n = 7usize;
    let src = data(200_000);
    let mut cp = CPARAMS_DEFAULTS;
    cp.typesize = 4;
    cp.compcode = 5; // zstd
    cp.use_dict = 1;
    let with_dict = blosc2_create_cctx(cp);
    cp.use_dict = 0;
    let plain = blosc2_create_cctx(cp);
    let mut dp = DPARAMS_DEFAULTS;
    dp.nthreads = n as i16;
    let (d1, d2) = (blosc2_create_dctx(dp), blosc2_create_dctx(dp));
    // SAFETY: live contexts from this library, read between calls.
    unsafe {
        assert_eq!(((*with_dict).use_dict, (*plain).use_dict), (1, 0));
        let cd = compress(with_dict, &src).unwrap();
        let cplain = compress(plain, &src).unwrap();
        assert_eq!(decompress(d1, &cd, src.len()), src);
        assert_eq!((*d1).use_dict, 1);
        assert_eq!(decompress(d1, &cplain, src.len()), src);
        assert_eq!((*d1).use_dict, 0, "no stale dictionary state");
        // A memcpyed chunk has no dictionary, whatever byte 31 says (the
        // flag bits are read without a parse: ChunkHeader::use_dict's rule).
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let noise: Vec<u8> = (0..4096)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 32) as u8
            })
            .collect();
        let mut raw = compress(plain, &noise).unwrap();
        assert_ne!(raw[2] & 0x02, 0, "incompressible: memcpyed");
        raw[31] |= 0x01;
        decompress(d1, &cd, src.len());
        assert_eq!((*d1).use_dict, 1);
        assert_eq!(decompress(d1, &raw, noise.len()), noise);
        assert_eq!((*d1).use_dict, 0, "memcpyed: no dictionary");
        decompress(d2, &cd, src.len());
        assert!(!(*d1).thread_pool.is_null());
        assert_eq!((*d1).thread_pool, (*d2).thread_pool);
        assert_eq!(pool::attached(n), 2);
        for c in [with_dict, plain, d1, d2] {
            blosc2_free_ctx(c);
        }
    }
    assert_eq!(pool::attached(n), 0);
}

/// An in-memory super-chunk of typesize 4, default parameters otherwise.
fn int32_schunk() -> *mut crate::schunk::blosc2_schunk {
    let mut cp = CPARAMS_DEFAULTS;
    cp.typesize = 4;
    let mut dp = DPARAMS_DEFAULTS;
    memory_schunk(false, &mut cp, &mut dp)
}

#[test]
fn a_super_chunks_contexts_take_new_thread_counts_to_its_engine() {
    let n = 5i16;
    let src = data(50_000);
    let s = int32_schunk();
    // SAFETY: the handle is used and freed here only; its cctx / dctx are
    // written between calls, as C does.
    unsafe {
        let (cctx, dctx) = ((*s).cctx, (*s).dctx);
        assert_eq!(((*cctx).nthreads, (*dctx).nthreads), (1, 1));
        (*cctx).new_nthreads = n;
        (*dctx).new_nthreads = n + 1;
        assert_eq!(
            (*(*(*s).storage).cparams).nthreads,
            1,
            "not before the next call"
        );
        let len = src.len() as i32;
        assert_eq!(
            blosc2_schunk_append_buffer(s, src.as_ptr() as *const c_void, len),
            1
        );
        assert_eq!((*cctx).nthreads, n);
        assert!(!(*cctx).thread_pool.is_null());
        assert_eq!(
            (*(*(*s).storage).cparams).nthreads,
            n,
            "the engine runs with it"
        );
        assert_eq!((*(*(*s).storage).dparams).nthreads, n + 1);
        let mut back = vec![0u8; src.len()];
        let got = blosc2_schunk_decompress_chunk(s, 0, back.as_mut_ptr() as *mut c_void, len);
        assert_eq!((got, &back), (len, &src));
        assert_eq!(blosc2_schunk_free(s), 0);
    }
}

/// The calls that only read a super-chunk (decompress_chunk, get_chunk,
/// get_slice_buffer) refresh its C view only when their start changed
/// something: thread counts C wrote before one of them show in the
/// storage's parameters after it.
#[test]
fn thread_counts_set_before_a_read_show_after_it() {
    let (nc, nd) = (17i16, 19i16);
    let src = data(50_000);
    let s = int32_schunk();
    // SAFETY: the handle is used and freed here only; its cctx / dctx are
    // written between calls, as C does.
    unsafe {
        let len = src.len() as i32;
        assert_eq!(
            blosc2_schunk_append_buffer(s, src.as_ptr() as *const c_void, len),
            1
        );
        let threads = || {
            (
                (*(*(*s).storage).cparams).nthreads,
                (*(*(*s).storage).dparams).nthreads,
            )
        };
        assert_eq!(threads(), (1, 1));
        let (cctx, dctx) = ((*s).cctx, (*s).dctx);
        let mut back = vec![0u8; src.len()];
        let out = back.as_mut_ptr() as *mut c_void;

        (*dctx).new_nthreads = nd;
        assert_eq!(blosc2_schunk_decompress_chunk(s, 0, out, len), len);
        assert_eq!(back, src);
        assert_eq!(threads(), (1, nd), "decompress_chunk");
        // A read with nothing changed leaves the view as it was.
        assert_eq!(blosc2_schunk_decompress_chunk(s, 0, out, len), len);
        assert_eq!(threads(), (1, nd));

        (*cctx).new_nthreads = nc;
        let mut chunk = std::ptr::null_mut();
        let mut needs_free = false;
        let cbytes = blosc2_schunk_get_chunk(s, 0, &mut chunk, &mut needs_free);
        assert!(cbytes > 0 && !chunk.is_null() && needs_free);
        libc::free(chunk as *mut c_void);
        assert_eq!(threads(), (nc, nd), "get_chunk");

        (*dctx).new_nthreads = 1;
        (*cctx).new_nthreads = 1;
        back.fill(0);
        assert_eq!(blosc2_schunk_get_slice_buffer(s, 0, 100, out), 0);
        assert_eq!(back[..400], src[..400]);
        assert_eq!(threads(), (1, 1), "get_slice_buffer");
        assert_eq!((*s).nchunks, 1);
        assert_eq!((*s).nbytes, i64::from(len));
        assert_eq!(blosc2_schunk_free(s), 0);
    }
}

#[test]
fn vl_chunks_too_small_for_a_dictionary_are_made_without_one() {
    let mut cp = CPARAMS_DEFAULTS;
    cp.typesize = 1;
    cp.compcode = 5; // zstd
    cp.use_dict = 1;
    let cctx = blosc2_create_cctx(cp);
    let dctx = blosc2_create_dctx(DPARAMS_DEFAULTS);
    let blocks: Vec<Vec<u8>> = (0..20u8).map(|i| vec![b'a' + i]).collect();
    let ptrs: Vec<*const c_void> = blocks.iter().map(|b| b.as_ptr() as *const c_void).collect();
    let sizes = vec![1i32; blocks.len()];
    let mut chunk = vec![0u8; 512];
    let mut dests = vec![std::ptr::null_mut::<c_void>(); blocks.len()];
    let mut dsizes = vec![0i32; blocks.len()];
    // SAFETY: the arrays have `blocks.len()` entries; the buffers the sizes
    // given; the decoded blocks are malloc'ed and freed here.
    unsafe {
        let n = blosc2_vlcompress_ctx(
            cctx,
            ptrs.as_ptr(),
            sizes.as_ptr(),
            blocks.len() as i32,
            chunk.as_mut_ptr() as *mut c_void,
            chunk.len() as i32,
        );
        assert!(n > 0, "{n}");
        let h = oxiblosc::ChunkHeader::parse(&chunk[..n as usize]).unwrap();
        assert!(!h.use_dict());
        let got = blosc2_vldecompress_ctx(
            dctx,
            chunk.as_ptr() as *const c_void,
            n,
            dests.as_mut_ptr(),
            dsizes.as_mut_ptr(),
            blocks.len() as i32,
        );
        assert_eq!(got, blocks.len() as i32);
        for (i, b) in blocks.iter().enumerate() {
            assert_eq!(
                std::slice::from_raw_parts(dests[i] as *const u8, dsizes[i] as usize),
                &b[..]
            );
            libc::free(dests[i]);
        }
        blosc2_free_ctx(cctx);
        blosc2_free_ctx(dctx);
    }
}

/// A compression context made with `filters` / `filters_meta`.
fn cctx_with(filters: [u8; 6], meta: [u8; 6]) -> *mut blosc2_context {
    let mut cp = CPARAMS_DEFAULTS;
    cp.typesize = 40;
    cp.filters = filters;
    cp.filters_meta = meta;
    blosc2_create_cctx(cp)
}

#[test]
fn filters_written_to_a_context_apply_at_its_next_call() {
    // C-Blosc2's test_b2nd_stringshuffle: strings of ten 4-byte characters
    // shuffled by character (meta 4), then `cctx->filters_meta[5] = 0`
    // and the same data shuffled by the whole 40-byte item.
    let src: Vec<u8> = (1..=4000u32).flat_map(u32::to_le_bytes).collect();
    let shuffle = [0, 0, 0, 0, 0, 1]; // BLOSC_SHUFFLE in the last slot
    let by_char = cctx_with(shuffle, [0, 0, 0, 0, 0, 4]);
    let by_item = cctx_with(shuffle, [0; 6]);
    let unfiltered = cctx_with([0; 6], [0; 6]);
    let dctx = blosc2_create_dctx(DPARAMS_DEFAULTS);
    let want_char = compress(by_char, &src).unwrap();
    let want_item = compress(by_item, &src).unwrap();
    let want_none = compress(unfiltered, &src).unwrap();
    assert_ne!(want_char, want_item);
    assert!(
        want_char.len() < want_item.len(),
        "by character packs better here"
    );

    let ctx = cctx_with(shuffle, [0, 0, 0, 0, 0, 4]);
    // SAFETY: every context is live until freed below; nothing else
    // borrows them.
    unsafe {
        assert_eq!(
            ((*ctx).filters, (*ctx).filters_meta),
            (shuffle, [0, 0, 0, 0, 0, 4])
        );
        assert_eq!(compress(ctx, &src).unwrap(), want_char);
        (*ctx).filters_meta[5] = 0;
        let chunk = compress(ctx, &src).unwrap();
        assert_eq!(chunk, want_item);
        assert_eq!(decompress(dctx, &chunk, src.len()), src);
        let mut cp = CPARAMS_DEFAULTS;
        assert_eq!(blosc2_ctx_get_cparams(ctx, &mut cp), 0);
        assert_eq!((cp.filters, cp.filters_meta), (shuffle, [0; 6]));

        (*ctx).filters = [0; 6];
        assert_eq!(compress(ctx, &src).unwrap(), want_none);
        // A filter id no pipeline knows is refused, as C-Blosc2 refuses it.
        (*ctx).filters[2] = 200;
        assert_eq!(compress(ctx, &src), Err(err::FILTER_PIPELINE));
        (*ctx).filters[2] = 0;
        assert_eq!(compress(ctx, &src).unwrap(), want_none);
        for c in [ctx, by_char, by_item, unfiltered, dctx] {
            blosc2_free_ctx(c);
        }
    }
}
