//! `blosc2_test_arm_open_race`: the fault-injection hook C-Blosc2's
//! `test_frame_lock` arms (C-Blosc2 builds it with `BLOSC_TESTING` only;
//! ours is always there and does nothing until armed).
//!
//! Every time our library reads a frame file from its start to open it or
//! to follow another handle's changes (an open, a reopen), it first calls
//! `before_frame_read`. Armed with `arm_at = n`, the `n`-th such read
//! since arming finds the header's `frame_len` made 10 MiB larger than it
//! is, on disk, as a writer half-way through extending the file would leave
//! it; the read after restores it (the writer finishing). One-shot: it
//! disarms itself after restoring. A locked open or reopen retries a frame
//! that does not read (C-Blosc2: 50 times, 1 ms apart), so it absorbs such
//! a transient state.

use std::ffi::c_int;
use std::fs::OpenOptions;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::{Mutex, PoisonError};

/// Byte offset of `frame_len` (big-endian u64) in a frame header.
const FRAME_LEN_AT: u64 = 16;
/// What the armed read adds to `frame_len`.
const BOGUS_EXTRA: u64 = 10 << 20;

struct Hook {
    arm_at: u32,
    calls: u32,
    /// The real `frame_len` bytes to put back at the next read.
    saved: Option<[u8; 8]>,
}

static HOOK: Mutex<Hook> = Mutex::new(Hook {
    arm_at: 0,
    calls: 0,
    saved: None,
});

/// Arm the hook for the `arm_at`-th frame read from now (0 disarms it,
/// dropping a pending restore).
#[unsafe(no_mangle)]
pub extern "C" fn blosc2_test_arm_open_race(arm_at: c_int) {
    crate::common::guard((), || {
        let mut h = HOOK.lock().unwrap_or_else(PoisonError::into_inner);
        h.arm_at = arm_at.max(0) as u32;
        h.calls = 0;
        h.saved = None;
    })
}

/// Called before each read of the frame at `offset` of `path` that opens
/// it or follows changes; does nothing unless the hook is armed.
pub(crate) fn before_frame_read(path: &Path, offset: u64) {
    let mut h = HOOK.lock().unwrap_or_else(PoisonError::into_inner);
    if h.arm_at == 0 {
        return;
    }
    h.calls += 1;
    let Ok(file) = OpenOptions::new().read(true).write(true).open(path) else {
        return;
    };
    let at = offset + FRAME_LEN_AT;
    if let Some(saved) = h.saved.take() {
        let _ = file.write_all_at(&saved, at);
        h.arm_at = 0;
    } else if h.calls == h.arm_at {
        let mut b = [0u8; 8];
        if file.read_exact_at(&mut b, at).is_ok() {
            let bogus = u64::from_be_bytes(b).saturating_add(BOGUS_EXTRA);
            if file.write_all_at(&bogus.to_be_bytes(), at).is_ok() {
                h.saved = Some(b);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_armed_read_sees_a_bogus_length_and_the_next_restores_it() {
        let dir = std::env::temp_dir().join(format!("oxiblosc-open-race-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("f.b2frame");
        let mut bytes = vec![0u8; 64];
        bytes[16..24].copy_from_slice(&1000u64.to_be_bytes());
        std::fs::write(&path, &bytes).unwrap();
        let len = || u64::from_be_bytes(std::fs::read(&path).unwrap()[16..24].try_into().unwrap());
        before_frame_read(&path, 0);
        assert_eq!(len(), 1000, "not armed: untouched");
        blosc2_test_arm_open_race(2);
        before_frame_read(&path, 0);
        assert_eq!(len(), 1000, "call 1 of 2");
        before_frame_read(&path, 0);
        assert_eq!(len(), 1000 + BOGUS_EXTRA, "call 2: the transient state");
        before_frame_read(&path, 0);
        assert_eq!(len(), 1000, "call 3 restores");
        before_frame_read(&path, 0);
        before_frame_read(&path, 0);
        assert_eq!(len(), 1000, "one-shot");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
