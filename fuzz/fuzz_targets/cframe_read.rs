//! Contiguous frames: parse, open, and every read.
#![no_main]
use libfuzzer_sys::fuzz_target;
use oxiblosc::schunk::OpenOptions;

#[path = "common.rs"]
mod common;

fuzz_target!(|data: &[u8]| {
    let _ = oxiblosc::Frame::parse(data);
    if let Ok(mut sc) = OpenOptions::new()
        .read_only(true)
        .from_cframe(data.to_vec())
    {
        common::read_all(&mut sc);
        common::must_reopen(&mut sc, "read-only");
    }
});
