//! `blosc2_set_maskout` then `blosc2_decompress_ctx`: the masked blocks of
//! the caller's buffer are left as they were (the engine skips them: a
//! masked block whose streams are broken does not fail the call), the mask
//! is for one call only, and a mask of the wrong length is
//! `BLOSC2_ERROR_DATA`, as in C-Blosc2.

use super::test_calls::{compress, decompress_into as decompress};
use super::*;

const BLOCK: usize = 16 * 1024;

fn set_mask(dctx: *mut blosc2_context, mask: &mut [bool]) -> c_int {
    // SAFETY: dctx is live; mask holds mask.len() flags.
    unsafe { blosc2_set_maskout(dctx, mask.as_mut_ptr(), mask.len() as c_int) }
}

#[test]
fn masked_blocks_stay_and_are_not_read() {
    let data: Vec<u8> = (0..4 * BLOCK as u32 / 4)
        .flat_map(|i| (i / 3).to_le_bytes())
        .collect();
    let mut cp = CPARAMS_DEFAULTS;
    cp.typesize = 4;
    cp.blocksize = BLOCK as i32;
    cp.compcode = 1; // lz4
    let cctx = blosc2_create_cctx(cp);
    let mut chunk = compress(cctx, &data).unwrap();
    assert!(chunk.len() < data.len() / 2, "{}", chunk.len());
    // Break block 1's streams (after its first size word).
    let bstart = |i: usize| {
        let at = 32 + 4 * i;
        u32::from_le_bytes(chunk[at..at + 4].try_into().unwrap()) as usize
    };
    let (s1, s2) = (bstart(1), bstart(2));
    chunk[s1 + 8..s2].fill(0xFF);
    for nthreads in [1, 2] {
        let mut dp = DPARAMS_DEFAULTS;
        dp.nthreads = nthreads;
        let dctx = blosc2_create_dctx(dp);
        let mut out = vec![0x5Au8; data.len()];
        assert!(decompress(dctx, &chunk, &mut out) < 0, "block 1 is broken");
        let mut out = vec![0x5Au8; data.len()];
        assert_eq!(set_mask(dctx, &mut [false, true, false, true]), 0);
        assert_eq!(decompress(dctx, &chunk, &mut out), data.len() as c_int);
        for (i, (o, d)) in out.chunks(BLOCK).zip(data.chunks(BLOCK)).enumerate() {
            if i % 2 == 0 {
                assert_eq!(o, d, "block {i} kept");
            } else {
                assert!(o.iter().all(|&b| b == 0x5A), "block {i} masked");
            }
        }
        // The mask was for that call: the next one decodes every block.
        assert!(decompress(dctx, &chunk, &mut out) < 0);
        // One flag too few or too many.
        for len in [3, 5] {
            assert_eq!(set_mask(dctx, &mut vec![false; len]), 0);
            assert_eq!(decompress(dctx, &chunk, &mut out), err::DATA);
        }
        // SAFETY: created above, freed once.
        unsafe { blosc2_free_ctx(dctx) };
    }
    // SAFETY: created above, freed once.
    unsafe { blosc2_free_ctx(cctx) };
}
