//! Compressing with all of a destination's room
//! (`Compressor::compress_into_all_room`, what the C ABI's compress calls
//! use) allocates by the input, not by the destination: a Blosc1 chunk
//! whose split streams C-Blosc 1.21 could not read back is first encoded
//! C's way in a trial buffer, which was as large as the destination.
//!
//! A counting global allocator sees every allocation of this process; this
//! file holds a single test so nothing else runs while it counts.

mod support;
use oxiblosc::{CParams, ChunkFormat, Codec, Compressor, SplitMode};
use support::counting;

#[global_allocator]
static GLOBAL: counting::Counting = counting::Counting;

#[test]
fn all_the_room_allocates_by_the_input() {
    // 20-byte items: C-Blosc 1.21's ALWAYS split mode writes split streams
    // its readers refuse, so the encoder runs C's streams in a trial buffer.
    let src: Vec<u8> = (0..4000u32).map(|i| (i / 7 % 251) as u8).collect();
    let p = CParams::default()
        .format(ChunkFormat::Blosc1)
        .codec(Codec::BloscLz)
        .typesize(20)
        .splitmode(SplitMode::Always);
    let mut c = Compressor::new(p);
    // Zeroed pages from the allocator: untouched, they cost no memory.
    let mut dst = vec![0u8; 256 << 20];
    // Past the largest chunk the streams can make, more room changes
    // nothing: the chunk is the one a destination of twice the input gets.
    let mut twice = vec![0u8; 2 * src.len() + 64];
    let k = c.compress_into_all_room(&src, &mut twice).unwrap();
    let chunk = twice[..k].to_vec();
    counting::reset_largest();
    let n = c.compress_into_all_room(&src, &mut dst).unwrap();
    let largest = counting::largest();
    assert!(
        largest < 64 << 10,
        "{largest} bytes in one allocation for a {}-byte input",
        src.len()
    );
    assert_eq!(dst[..n], chunk[..]);
    assert!(n < src.len());
    assert_eq!(oxiblosc::decompress(&dst[..n]).unwrap(), src);
}
