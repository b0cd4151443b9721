//! C's `data` array of an in-memory super-chunk without a frame
//! (`contiguous` false): after appends, inserts, updates, deletes (also
//! refused ones), reorders and slice writes, entry `i` holds chunk `i`'s
//! bytes. Inserts, updates and deletes change one entry (as C's pointer
//! array edits do), so the other entries keep their addresses; reorders
//! and slice writes keep the copies of the chunks they move or leave.

use super::*;
use crate::v2::{CPARAMS_DEFAULTS, DPARAMS_DEFAULTS};

/// Chunk `i` as C's `data` array shows it, and its address.
pub(crate) fn entry(s: *mut blosc2_schunk, i: usize) -> (Vec<u8>, *mut u8) {
    // SAFETY: a live handle whose data array holds data_len entries, each
    // a whole chunk (its length in the chunk header's bytes 12..16).
    unsafe {
        assert!(i < (*s).data_len);
        let p = *(*s).data.add(i);
        let head = std::slice::from_raw_parts(p, 16);
        let cbytes = u32::from_le_bytes(head[12..16].try_into().unwrap()) as usize;
        (std::slice::from_raw_parts(p, cbytes).to_vec(), p)
    }
}

/// Every entry of the data array is the engine's chunk; the addresses.
fn check(s: *mut blosc2_schunk, what: &str) -> Vec<*mut u8> {
    // SAFETY: a live handle from this library.
    let h = unsafe { &mut *(s as *mut Handle) };
    let n = h.sc.nchunks();
    // SAFETY: as above.
    assert_eq!(unsafe { (*s).data_len }, n, "{what}");
    (0..n)
        .map(|i| {
            let (bytes, p) = entry(s, i);
            assert_eq!(
                bytes,
                h.sc.get_chunk(i).unwrap().to_vec(),
                "{what}: chunk {i}"
            );
            p
        })
        .collect()
}

fn chunk_of(seed: u8) -> Vec<u8> {
    let d: Vec<u8> = (0..4000u32).map(|i| (i / 9) as u8 ^ seed).collect();
    let p = oxiblosc::CParams::default().typesize(4);
    oxiblosc::compress(&d, &p).unwrap()
}

#[test]
fn the_data_array_follows_every_change_of_the_chunks() {
    let mut cp = CPARAMS_DEFAULTS;
    cp.typesize = 4;
    let mut dp = DPARAMS_DEFAULTS;
    let s = memory_schunk(false, &mut cp, &mut dp);
    for k in 0..6u8 {
        let mut c = chunk_of(k);
        // SAFETY: a live handle; a valid chunk, copied.
        assert_eq!(
            unsafe { blosc2_schunk_append_chunk(s, c.as_mut_ptr(), true) },
            i64::from(k) + 1
        );
    }
    let before = check(s, "appended");

    let mut c = chunk_of(100);
    // SAFETY: as above.
    assert_eq!(
        unsafe { blosc2_schunk_insert_chunk(s, 2, c.as_mut_ptr(), true) },
        7
    );
    let after = check(s, "inserted");
    assert_eq!(&after[..2], &before[..2], "entries before the insert stay");
    assert_eq!(
        &after[3..],
        &before[2..],
        "entries after it move, not copied"
    );

    let mut c = chunk_of(101);
    // SAFETY: as above.
    assert_eq!(
        unsafe { blosc2_schunk_update_chunk(s, 4, c.as_mut_ptr(), true) },
        7
    );
    let updated = check(s, "updated");
    for i in (0..7).filter(|&i| i != 4) {
        assert_eq!(updated[i], after[i], "entry {i} stays");
    }

    // SAFETY: a live handle.
    assert_eq!(unsafe { blosc2_schunk_delete_chunk(s, 0) }, 6);
    let deleted = check(s, "deleted");
    assert_eq!(&deleted[..], &updated[1..]);

    // Refused: a lazy chunk, an index out of range; nothing changes.
    let mut bad = chunk_of(102);
    // Marked lazy (its blocks would live in a frame): no super-chunk
    // stores one. Its sizes stay those of its bytes.
    bad[31] |= 0x08;
    // SAFETY: a live handle; chunks holding the bytes their headers say.
    unsafe {
        assert!(blosc2_schunk_insert_chunk(s, 1, bad.as_mut_ptr(), true) < 0);
        assert!(blosc2_schunk_update_chunk(s, 9, c.as_mut_ptr(), true) < 0);
        assert!(blosc2_schunk_delete_chunk(s, 6) < 0);
    }
    // (Their entries are copied again: a refused change is not trusted
    // to have changed nothing.)
    check(s, "refused");

    let before = check(s, "before the reorder");
    // A mark in chunk 0's copy (its last byte, flipped; put back below):
    // a copy made again would not hold it.
    let last = entry(s, 0).0.len() - 1;
    // SAFETY: entry 0 points to a live copy of last + 1 bytes.
    unsafe { *before[0].add(last) ^= 0xFF };
    let order = [5i64, 4, 3, 2, 1, 0];
    // SAFETY: a live handle; nchunks order entries.
    assert_eq!(
        unsafe { blosc2_schunk_reorder_offsets(s, order.as_ptr().cast_mut()) },
        0
    );
    // SAFETY: entry 5 (chunk 0 before the reorder) is a live copy of
    // last + 1 bytes.
    unsafe {
        let p = *(*s).data.add(5);
        assert_eq!(p, before[0], "chunk 0's copy moved to entry 5");
        let stored = (*(s as *mut Handle)).sc.get_chunk(5).unwrap()[last];
        assert_eq!(
            *p.add(last),
            stored ^ 0xFF,
            "the mark survived: the copy was kept"
        );
        *p.add(last) ^= 0xFF;
    }
    let reordered = check(s, "reordered");
    let reversed: Vec<_> = before.iter().rev().copied().collect();
    assert_eq!(
        reordered, reversed,
        "each chunk keeps its copy, as C's pointers move"
    );
    let patch = [7u8; 40];
    // SAFETY: a live handle; 10 items of 4 bytes.
    assert_eq!(
        unsafe { blosc2_schunk_set_slice_buffer(s, 995, 1005, patch.as_ptr().cast_mut().cast()) },
        0
    );
    let written = check(s, "slice written");
    assert_eq!(
        &written[2..],
        &reordered[2..],
        "the chunks the slice (items 995..1005: chunks 0 and 1) left alone keep their copies"
    );
    let mut c = chunk_of(103);
    // SAFETY: as above.
    assert_eq!(
        unsafe { blosc2_schunk_append_chunk(s, c.as_mut_ptr(), true) },
        7
    );
    check(s, "appended again");
    // SAFETY: made by blosc2_schunk_new, freed once.
    unsafe { blosc2_schunk_free(s) };
}
