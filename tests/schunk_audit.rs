//! Regression tests from an audit of the super-chunk API's arguments:
//! a chunk size the frame header gives is checked against the caller's
//! [`DParams::max_output`] before a buffer is sized by it. (The audit's
//! other finding, `read_items` visiting every index entry before its range,
//! is in `tests/findings.rs`, beside the finding it reads.)

mod support;
use support::counting;

use oxiblosc::schunk::{Fill, SChunk};
use oxiblosc::{CParams, DParams, Error};

#[global_allocator]
static GLOBAL: counting::Counting = counting::Counting;

/// `ChunkIter::next_into` and `SChunk::read_items` (a part of a chunk)
/// resized their buffer to the chunk's size, 64 MiB of a frame of a few
/// hundred bytes here, before the decoder refused it as over the 1 MiB
/// output limit. (`read_items` now reads as `get_slice` does, which decodes
/// only the items asked for.)
#[test]
fn chunk_buffers_are_not_sized_past_the_output_limit() {
    let mut sc = SChunk::new(CParams::default().typesize(1)).unwrap();
    sc.fill_special(64 << 20, Fill::Zeros, 64 << 20).unwrap();
    sc.set_dparams(DParams::default().max_output(1 << 20));
    let over = |e: &Error| {
        matches!(e, Error::InvalidParam(m)
            if m.contains("67108864 bytes, over the output limit of 1048576"))
    };
    let mut buf = Vec::new();
    counting::reset_largest();
    let e = sc.iter_chunks().next_into(&mut buf).unwrap().unwrap_err();
    assert!(over(&e), "{e}");
    let largest = counting::largest();
    assert!(largest < 1 << 20, "next_into allocated {largest} bytes");
    assert!(buf.capacity() < 1 << 20, "{}", buf.capacity());
    // Ten items of the chunk: its index code's pattern, as `get_slice`
    // reads them, with no buffer of the chunk's size.
    let mut items = [1u8; 10];
    counting::reset_largest();
    sc.read_items(5, &mut items).unwrap();
    assert_eq!(items, [0; 10]);
    let largest = counting::largest();
    assert!(largest < 1 << 20, "read_items allocated {largest} bytes");
    // Within the limit the whole chunk reads as before.
    sc.set_dparams(DParams::default());
    assert_eq!(
        sc.iter_chunks().next_into(&mut buf).unwrap().unwrap(),
        64 << 20
    );
    assert!(buf.iter().all(|&b| b == 0));
}
