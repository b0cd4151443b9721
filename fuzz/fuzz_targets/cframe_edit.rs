//! Edits on an opened fuzzed frame: the first bytes choose a few edits
//! (append / insert / update / delete / reorder / vlmeta / meta), the rest is
//! the frame. After each edit, whether it worked or not, the frame must
//! reopen. For one input in four (a file per input is slow) the same edits
//! run on the frame as a file (`SChunk::open`, the file backend and its
//! crash-safe writes): each edit works or fails as in memory, the file
//! reopens after each, and at the end it holds the same chunks.
#![no_main]
use libfuzzer_sys::fuzz_target;
use oxiblosc::schunk::{OpenOptions, SChunk};

#[path = "common.rs"]
mod common;

fuzz_target!(|data: &[u8]| {
    if data.len() < 4 {
        return;
    }
    let (ops, frame) = data.split_at(4);
    let Ok(mut sc) = SChunk::from_cframe(frame.to_vec()) else {
        return;
    };
    sc.set_dparams(common::dparams(1));
    let mut worked = Vec::new();
    for (k, &op) in ops.iter().enumerate() {
        worked.push(common::edit(&mut sc, k, op));
        common::must_reopen(&mut sc, &format!("after op {op}"));
    }
    common::read_all(&mut sc);
    if frame.last().is_some_and(|b| b % 4 == 0) {
        as_file(ops, frame, &worked, &mut sc);
    }
});

/// The same edits on `frame` as a file; `memory` is the edited in-memory
/// frame, `worked` its edits' results.
fn as_file(ops: &[u8], frame: &[u8], worked: &[bool], memory: &mut SChunk) {
    let dir = std::env::temp_dir().join(format!("oxiblosc-fuzz-edit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("frame.b2frame");
    std::fs::write(&path, frame).unwrap();
    let Ok(mut f) = SChunk::open(&path) else {
        panic!("the frame opens in memory, not as a file");
    };
    f.set_dparams(common::dparams(1));
    for (k, &op) in ops.iter().enumerate() {
        assert_eq!(
            common::edit(&mut f, k, op),
            worked[k],
            "edit {k} (op {op}) in a file and in memory"
        );
        if let Err(e) = OpenOptions::new().read_only(true).open(&path) {
            panic!("after op {op}, the file does not reopen: {e}");
        }
    }
    assert_eq!(f.nchunks(), memory.nchunks());
    assert_eq!(f.nbytes(), memory.nbytes());
    for i in 0..f.nchunks().min(16) {
        let (a, b) = (f.decompress_chunk_vec(i), memory.decompress_chunk_vec(i));
        if let (Ok(a), Ok(b)) = (&a, &b) {
            assert!(a == b, "chunk {i} differs in the file");
        } else {
            assert_eq!(a.is_ok(), b.is_ok(), "chunk {i} reads in one only");
        }
    }
    drop(f);
    // The directory too: one per process was left behind in $TMPDIR.
    let _ = std::fs::remove_dir_all(&dir);
}
