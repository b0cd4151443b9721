//! Building a super-chunk in memory by appends costs in proportion to its
//! chunks: each append once copied and re-encoded the whole offsets index
//! (4,000 appends here allocated 0.8 GB, 16,000 appends 7.2 GB; a
//! 40,000-chunk NDArray took 7 s to create). Counted with the tests' allocator; this file holds
//! a single test so nothing else allocates while it counts.

mod support;
use oxiblosc::schunk::SChunk;
use oxiblosc::{CParams, SpecialValue};
use support::counting;

#[global_allocator]
static GLOBAL: counting::Counting = counting::Counting;

/// Bytes allocated while appending `n` copies of `chunk` (and a zeros chunk
/// every 8th, an index code) to a new memory super-chunk, then writing its
/// frame once.
fn bytes_for(n: usize, chunk: &[u8], zeros: &[u8]) -> usize {
    let mut sc = SChunk::new(CParams::default().typesize(4)).unwrap();
    let (_, before) = counting::totals();
    for k in 0..n {
        if k % 8 == 7 {
            sc.append_chunk(zeros).unwrap();
        } else {
            sc.append_chunk(chunk).unwrap();
        }
    }
    let frame = sc.to_cframe().unwrap();
    let (_, after) = counting::totals();
    assert_eq!(SChunk::from_cframe(frame).unwrap().nchunks(), n);
    after - before
}

#[test]
fn appends_to_a_memory_super_chunk_allocate_linearly() {
    let data: Vec<u8> = (0..1000u32).flat_map(|v| (v * 7).to_le_bytes()).collect();
    let p = CParams::default().typesize(4);
    let chunk = oxiblosc::compress(&data, &p).unwrap();
    let zeros = oxiblosc::special_chunk(&p, data.len(), SpecialValue::Zeros, &[]).unwrap();
    let small = bytes_for(4000, &chunk, &zeros);
    let large = bytes_for(16_000, &chunk, &zeros);
    // Linear: 4x the chunks, about 4x the bytes (the frame's and index's
    // vectors double as they grow). Quadratic would be 16x.
    assert!(
        large < 6 * small,
        "4,000 appends allocated {small} bytes, 16,000 allocated {large}"
    );
    // And in absolute terms: a few times the frame itself (16,000 chunks),
    // where re-encoding the index per append allocated 7.2 GB.
    let frame = 16_000 * chunk.len();
    assert!(
        large < 8 * frame,
        "16,000 appends allocated {large} bytes for a {frame}-byte frame"
    );
}
