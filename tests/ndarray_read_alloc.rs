//! A loop of small NDArray reads does not allocate a block's or a chunk's
//! buffer per read: the blocks a `get_slice` (or a selection) decodes, or
//! the whole chunk when it needs every block, go into buffers the thread
//! lends out and takes back, so after the first read each later one
//! allocates only its small bookkeeping (a read of 80 bytes allocated and
//! zeroed the whole 64 KiB block before, one of a column the whole 256 KiB
//! chunk).
//!
//! A counting global allocator sees every allocation of this process;
//! this file holds a single test so nothing else runs while it counts.

mod support;
use oxiblosc::ndarray::{self, NdMeta};
use oxiblosc::{CParams, Codec};
use support::counting;

#[global_allocator]
static GLOBAL: counting::Counting = counting::Counting;

#[test]
fn small_reads_after_the_first_do_not_allocate_a_block() {
    // 256 x 256 items of 8 bytes in chunks of 128 rows, blocks of 32 rows
    // (64 KiB).
    let meta = NdMeta::new(&[256, 256], &[128, 256], &[32, 256], "<f8");
    let data: Vec<u8> = (0..256 * 256 * 8u32)
        .map(|i| (i / 8 % 251) as u8 ^ (i % 8) as u8)
        .collect();
    let mut sc = ndarray::create(&meta, CParams::default().codec(Codec::Lz4), &data).unwrap();
    let block = 32 * 256 * 8;
    let (lo, hi, shape) = ([40u64, 100], [41u64, 110], [1u64, 10]);
    let mut out = vec![0u8; 80];
    let mut rows = vec![0u8; 2 * 3 * 8];
    // A column of 10 items through every block of chunk 0: decoded whole.
    let mut column = vec![0u8; 128 * 8];
    let sel: [&[u64]; 2] = [&[40, 90], &[1, 2, 3]];
    let mut read = |sc: &mut oxiblosc::SChunk, k: u64| {
        let (lo, hi) = ([lo[0] + k % 16, lo[1]], [hi[0] + k % 16, hi[1]]);
        ndarray::get_slice(sc, &meta, &lo, &hi, &mut out, &shape).unwrap();
        for (j, o) in out.chunks(8).enumerate() {
            let at = ((lo[0] * 256 + lo[1]) as usize + j) * 8;
            assert_eq!(o, &data[at..at + 8]);
        }
        ndarray::get_orthogonal(sc, &meta, &sel, &mut rows, &[2, 3]).unwrap();
        assert_eq!(&rows[..8], &data[(40 * 256 + 1) * 8..(40 * 256 + 2) * 8]);
        let x = 7 + k % 200;
        ndarray::get_slice(sc, &meta, &[0, x], &[128, x + 1], &mut column, &[128, 1]).unwrap();
        assert_eq!(
            &column[8..16],
            &data[(256 + x as usize) * 8..(257 + x as usize) * 8]
        );
    };
    read(&mut sc, 0);
    let (a0, b0) = counting::totals();
    let rounds = 50;
    for k in 1..=rounds {
        read(&mut sc, k);
    }
    let (a1, b1) = counting::totals();
    let per_read = (b1 - b0) / rounds as usize;
    assert!(
        per_read < block / 4,
        "{per_read} bytes ({} allocations) a round of three reads, a block is {block}",
        (a1 - a0) / rounds as usize
    );
}
