//! Edits that write many chunks hold one chunk's buffers at a time, not one
//! per chunk: `Compressor::compress` handed back its `src.len() + 32`-byte
//! output buffer with the chunk in its first bytes, so every chunk an edit
//! collected before committing kept a whole chunk's capacity. Appending
//! 65 KB of rows to an array of one-row 4 MiB chunks held 18 GB (found by
//! the fuzz target `ndarray_args`: `slow-unit-ea7ce835…`). Measured with
//! the tests' counting allocator (peak of live bytes, process-wide); this
//! file holds a single test so nothing else allocates while it counts.

mod support;
use oxiblosc::ndarray::{self, NdMeta};
use oxiblosc::schunk::Fill;
use oxiblosc::{CParams, Compressor};
use support::counting;

#[global_allocator]
static GLOBAL: counting::Counting = counting::Counting;

const ROW: u64 = 5;
const CHUNK: u64 = 1 << 22;

#[test]
fn edits_of_many_mostly_padding_chunks_hold_one_chunk_at_a_time() {
    // A compressed chunk holds about its own bytes.
    let mut c = Compressor::new(CParams::default().typesize(1));
    counting::reset_peak();
    let base = counting::live();
    let zeros = vec![0u8; CHUNK as usize];
    let mut chunks = Vec::new();
    for _ in 0..8 {
        chunks.push(c.compress(&zeros).unwrap());
    }
    let held = counting::live() - base;
    let kept: usize = chunks.iter().map(Vec::len).sum();
    // The zeros, the compressor's scratch (its output buffer and the
    // blocks'), and the chunks: not 8 buffers of 4 MiB.
    assert!(
        held < 3 * CHUNK as usize,
        "8 compressed chunks of {kept} bytes in all hold {held} bytes"
    );
    drop((chunks, zeros, c));

    // One row of 5 items in chunks of one row of 4 Mi items: an append of
    // 64 rows writes 64 chunks, 5 bytes of items each, the rest padding.
    let is = 1;
    let mut meta = NdMeta::new(
        &[1, ROW],
        &[1, CHUNK],
        &[1, 1 << 16],
        &NdMeta::default_dtype(is),
    );
    let mut sc = ndarray::builder(&meta, CParams::default().nthreads(1))
        .unwrap()
        .build_memory()
        .unwrap();
    sc.fill_special(CHUNK, Fill::Zeros, CHUNK as usize).unwrap();
    let rows = 64u64;
    let data: Vec<u8> = (0..rows * ROW).map(|i| i as u8).collect();
    counting::reset_peak();
    let base = counting::live();
    ndarray::append(&mut sc, &mut meta, &data, 0).unwrap();
    let append_peak = counting::peak() - base;
    assert_eq!(meta.shape, [rows + 1, ROW]);
    assert_eq!(sc.nchunks(), rows as usize + 1);
    // Before: 64 chunks of 4 MiB capacity, 256 MiB.
    assert!(
        append_peak < 4 * CHUNK as usize,
        "an append of 64 mostly-padding chunks peaked at {append_peak} bytes"
    );

    // A set over a column of every row rewrites every chunk.
    let col = vec![0xABu8; (rows + 1) as usize];
    counting::reset_peak();
    let base = counting::live();
    ndarray::set_slice(
        &mut sc,
        &meta,
        &[0, 2],
        &[rows + 1, 3],
        &col,
        &[rows + 1, 1],
    )
    .unwrap();
    let set_peak = counting::peak() - base;
    assert!(
        set_peak < 4 * CHUNK as usize,
        "a set over 65 chunks peaked at {set_peak} bytes"
    );

    // And the items are the ones written.
    let mut back = vec![0u8; ((rows + 1) * ROW) as usize];
    ndarray::get_slice(
        &mut sc,
        &meta,
        &[0, 0],
        &[rows + 1, ROW],
        &mut back,
        &[rows + 1, ROW],
    )
    .unwrap();
    for r in 0..=rows {
        for k in 0..ROW {
            let want = match (r, k) {
                (_, 2) => 0xAB,
                (0, _) => 0,
                _ => data[((r - 1) * ROW + k) as usize],
            };
            assert_eq!(back[(r * ROW + k) as usize], want, "row {r} item {k}");
        }
    }
}
