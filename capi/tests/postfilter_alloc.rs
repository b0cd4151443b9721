//! `blosc2_getitem_ctx` through a context with a postfilter decodes the
//! whole chunk into a buffer of its own, sized by the chunk's header: a
//! 64-byte chunk claiming 2 GiB got a 2 GiB buffer before its streams
//! were found not to back it (issue #15: such a chunk fails fast with a
//! few KB). Without a postfilter, and for `blosc2_decompress_ctx` (whose
//! buffer is bounded by the caller's), nothing of that size was allocated.
//! Counted with the tests' counting allocator (peak of live bytes); this
//! file holds a single test so nothing else allocates while it counts.

use std::ffi::c_int;

use blosc2::v2::{
    DPARAMS_DEFAULTS, blosc2_create_dctx, blosc2_decompress_ctx, blosc2_free_ctx,
    blosc2_getitem_ctx, blosc2_postfilter_params,
};

/// The root crate's counting allocator (`tests/support/counting.rs`).
#[path = "../../tests/support/counting.rs"]
mod counting;

#[global_allocator]
static GLOBAL: counting::Counting = counting::Counting;

/// A postfilter that copies its input.
unsafe extern "C" fn copy(pp: *mut blosc2_postfilter_params) -> c_int {
    // SAFETY: the engine's params: size bytes at input and output.
    unsafe {
        let pp = &*pp;
        std::ptr::copy_nonoverlapping(pp.input, pp.output, pp.size as usize);
    }
    0
}

#[test]
fn a_small_chunk_claiming_gigabytes_fails_before_a_postfilter_buffer() {
    let data: Vec<u8> = (0..40_000u32).map(|i| (i * 7 % 251) as u8).collect();
    let p = oxiblosc::CParams::default()
        .typesize(4)
        .codec(oxiblosc::Codec::Lz4);
    let good = oxiblosc::compress(&data, &p).unwrap();
    let mut bad = good[..64].to_vec();
    bad[4..8].copy_from_slice(&(i32::MAX - 1023).to_le_bytes()); // nbytes
    bad[12..16].copy_from_slice(&64i32.to_le_bytes()); // cbytes
    let mut dp = DPARAMS_DEFAULTS;
    dp.postfilter = Some(copy);
    let dctx = blosc2_create_dctx(dp);
    let plain = blosc2_create_dctx(DPARAMS_DEFAULTS);
    let mut out = [0u8; 64];
    for (what, ctx) in [("postfilter", dctx), ("plain", plain)] {
        // The good chunk works through both (what the bad one is cut from).
        // SAFETY: live contexts; the sizes told are the buffers'.
        let rc = unsafe {
            blosc2_getitem_ctx(
                ctx,
                good.as_ptr().cast(),
                good.len() as i32,
                3,
                4,
                out.as_mut_ptr().cast(),
                64,
            )
        };
        assert_eq!(rc, 16, "{what}: the good chunk");
        assert_eq!(out[..16], data[12..28], "{what}: the good chunk's items");
        counting::reset_peak();
        let base = counting::live();
        // SAFETY: as above.
        let rc = unsafe {
            blosc2_getitem_ctx(
                ctx,
                bad.as_ptr().cast(),
                64,
                3,
                4,
                out.as_mut_ptr().cast(),
                64,
            )
        };
        let peak = counting::peak() - base;
        assert!(rc < 0, "{what}: getitem of the bad chunk returned {rc}");
        assert!(peak < 1 << 20, "{what}: getitem peaked at {peak} bytes");
        counting::reset_peak();
        let base = counting::live();
        // SAFETY: as above.
        let rc = unsafe {
            blosc2_decompress_ctx(ctx, bad.as_ptr().cast(), 64, out.as_mut_ptr().cast(), 64)
        };
        let peak = counting::peak() - base;
        assert!(rc < 0, "{what}: decompress of the bad chunk returned {rc}");
        assert!(peak < 1 << 20, "{what}: decompress peaked at {peak} bytes");
    }
    // SAFETY: the contexts made above, freed once.
    unsafe {
        blosc2_free_ctx(dctx);
        blosc2_free_ctx(plain);
    }
}
