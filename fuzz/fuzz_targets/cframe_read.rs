//! Contiguous frames: parse, open, and every read; the streaming decoder
//! (`stream::FrameDecoder`, as `oxiblosc decompress` reads a pipe) on the
//! same bytes, which must give the frame's data when both read it; and, for
//! one input in four (a file per input is slow), the bytes as a file frame
//! (`SChunk::open`, the file backend), which must read as the in-memory
//! frame does.
#![no_main]
use std::io::Read;

use libfuzzer_sys::fuzz_target;
use oxiblosc::schunk::{OpenOptions, SChunk};
use oxiblosc::stream::FrameDecoder;

#[path = "common.rs"]
mod common;

fuzz_target!(|data: &[u8]| {
    let _ = oxiblosc::Frame::parse(data);
    let mut whole = None;
    let mut memory = OpenOptions::new()
        .read_only(true)
        .from_cframe(data.to_vec());
    if let Ok(sc) = memory.as_mut() {
        common::read_all(sc);
        common::must_reopen(sc, "read-only");
        let nb = sc.nbytes();
        if nb <= common::MAX_OUTPUT as u64 {
            whole = sc.get_slice(0, nb).ok();
        }
    }
    deferred(data, memory.as_mut().ok());
    if let Ok(dec) = FrameDecoder::with_params(data, common::dparams(1)) {
        let mut out = Vec::new();
        let limit = common::MAX_OUTPUT as u64 + 1;
        if dec.take(limit).read_to_end(&mut out).is_ok()
            && (out.len() as u64) < limit
            && let Some(w) = &whole
        {
            assert!(out == *w, "the stream and the frame decode differently");
        }
    }
    if data.last().is_some_and(|b| b % 4 == 0) {
        as_file(data, memory.ok());
    }
});

/// `data` written to a file and opened read-only from it: opened or
/// refused as in memory, and, opened, every chunk reads the same. As
/// C-Blosc2 does, a file may hold bytes after the frame (`frame_len`), and
/// its magic is not checked: the memory side is then the frame's bytes with
/// the magic.
fn as_file(data: &[u8], mut memory: Option<SChunk>) {
    let dir = std::env::temp_dir().join(format!("oxiblosc-fuzz-cframe-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("frame.b2frame");
    std::fs::write(&path, data).unwrap();
    let file = OpenOptions::new().read_only(true).open(&path);
    // The same bytes after a prefix, opened at its end (as
    // `blosc2_schunk_open_offset`): opened or refused alike, and the same
    // chunks.
    let skip = 1 + usize::from(data[0] % 16);
    let shifted = dir.join("shifted.b2frame");
    std::fs::write(&shifted, [&vec![0xA5; skip][..], data].concat()).unwrap();
    let at = OpenOptions::new()
        .read_only(true)
        .offset(skip as u64)
        .open(&shifted);
    match (&file, at) {
        (Ok(_), Ok(mut a)) => {
            let mut f = OpenOptions::new().read_only(true).open(&path).unwrap();
            common::same_chunks(&mut f, &mut a, "at offset 0 and at an offset");
        }
        (Err(_), Err(_)) => {}
        (f, a) => panic!(
            "a file frame {} at offset 0 and {} at offset {skip}",
            if f.is_ok() { "opens" } else { "is refused" },
            if a.is_ok() { "opens" } else { "is refused" }
        ),
    }
    if memory.is_none() && file.is_ok() && data.len() >= 24 {
        let flen = u64::from_be_bytes(data[16..24].try_into().unwrap());
        let mut frame = data[..flen.min(data.len() as u64) as usize].to_vec();
        frame[2..10].copy_from_slice(b"b2frame\0");
        memory = OpenOptions::new().read_only(true).from_cframe(frame).ok();
    }
    match (file, memory) {
        (Ok(mut f), Some(mut m)) => {
            f.set_dparams(common::dparams(1));
            m.set_dparams(common::dparams(1));
            common::same_chunks(&mut f, &mut m, "in a file and in memory");
            common::read_all(&mut f);
        }
        (Err(_), None) => {}
        (f, m) => panic!(
            "the file frame {} and the memory frame {}",
            if f.is_ok() { "opens" } else { "is refused" },
            if m.is_some() { "opens" } else { "is refused" }
        ),
    }
    // The directory too: one per process was left behind in $TMPDIR.
    let _ = std::fs::remove_dir_all(&dir);
}

/// Opened with deferred chunk checks (as `blosc2_schunk_from_buffer`
/// without a copy, since session 44): every frame the strict open takes
/// opens the same; one it refuses may open (read-only) when only its
/// chunks are wrong, and then every read fails or works, without a panic.
fn deferred(data: &[u8], strict: Option<&mut SChunk>) {
    let lax = OpenOptions::new()
        .read_only(true)
        .defer_chunk_checks(true)
        .from_cframe(data.to_vec());
    common::deferred_as_strict(lax, strict);
}
