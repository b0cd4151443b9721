//! Contiguous frames: parse, open, and every read; the streaming decoder
//! (`stream::FrameDecoder`, as `oxiblosc decompress` reads a pipe) on the
//! same bytes, which must give the frame's data when both read it.
#![no_main]
use std::io::Read;

use libfuzzer_sys::fuzz_target;
use oxiblosc::schunk::OpenOptions;
use oxiblosc::stream::FrameDecoder;

#[path = "common.rs"]
mod common;

fuzz_target!(|data: &[u8]| {
    let _ = oxiblosc::Frame::parse(data);
    let mut whole = None;
    if let Ok(mut sc) = OpenOptions::new()
        .read_only(true)
        .from_cframe(data.to_vec())
    {
        common::read_all(&mut sc);
        common::must_reopen(&mut sc, "read-only");
        let nb = sc.nbytes();
        if nb <= common::MAX_OUTPUT as u64 {
            whole = sc.get_slice(0, nb).ok();
        }
    }
    if let Ok(dec) = FrameDecoder::with_params(data, common::dparams(1)) {
        let mut out = Vec::new();
        let limit = common::MAX_OUTPUT as u64 + 1;
        if dec.take(limit).read_to_end(&mut out).is_ok() && (out.len() as u64) < limit {
            if let Some(w) = &whole {
                assert!(out == *w, "the stream and the frame decode differently");
            }
        }
    }
});
