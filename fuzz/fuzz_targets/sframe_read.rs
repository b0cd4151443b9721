//! Sparse frames: the input is an index file and up to three chunk files
//! (laid out as `sframe_input.rs` says). Open, every
//! read, and to_cframe, which must give a frame that reopens. For one
//! input in four (since session 17), two edits of the directory opened
//! writable, after each of which it must reopen. Since session 44 also
//! opened with deferred chunk checks, which must take what the strict
//! open takes, with the same chunks.
#![no_main]
use libfuzzer_sys::fuzz_target;
use oxiblosc::schunk::OpenOptions;

#[path = "common.rs"]
mod common;
#[path = "sframe_input.rs"]
mod sframe_input;

fuzz_target!(|data: &[u8]| {
    if data.len() < sframe_input::HEAD {
        return;
    }
    let dir = std::env::temp_dir().join(format!("oxiblosc-fuzz-sframe-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    sframe_input::lay_out(data, &dir).unwrap();
    let head = &data[..sframe_input::HEAD];
    let mut strict = OpenOptions::new().read_only(true).open(&dir);
    // With deferred chunk checks (since session 44).
    let lax = OpenOptions::new()
        .read_only(true)
        .defer_chunk_checks(true)
        .open(&dir);
    common::deferred_as_strict(lax, strict.as_mut().ok());
    if let Ok(mut sc) = strict {
        common::read_all(&mut sc);
        common::must_reopen(&mut sc, "sframe to_cframe");
        drop(sc);
        // One input in four: the first record's id byte picks two edits of
        // the directory opened writable; after each, it reopens.
        if head[0].is_multiple_of(4)
            && let Ok(mut sc) = OpenOptions::new().open(&dir)
        {
            sc.set_dparams(common::dparams(1));
            for (k, op) in [head[3], head[6]].into_iter().enumerate() {
                common::edit(&mut sc, k, op);
                if let Err(e) = OpenOptions::new().read_only(true).open(&dir) {
                    panic!("after op {op}, the sparse frame does not reopen: {e}");
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
});
