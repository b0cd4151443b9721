//! The `sframe_read` target's input laid out as a sparse frame, shared
//! (with `#[path]`) by the target, by `fuzz/c-diff` (which has C-Blosc2
//! open the same directories) and by `tests/findings.rs` (which replays the
//! target's findings).
//!
//! Layout: three `(id: u8, len: u16 LE)` records, then the chunk files'
//! bytes in that order (a record of length 0, or past the input's end,
//! writes less or no file), then the index, `chunks.b2frame`.

use std::path::Path;

/// The records' length: an input shorter than this lays out nothing.
pub const HEAD: usize = 9;

/// Write `data`'s chunk files and index into the existing directory `dir`.
/// `false` (nothing written) for an input shorter than [`HEAD`].
pub fn lay_out(data: &[u8], dir: &Path) -> std::io::Result<bool> {
    if data.len() < HEAD {
        return Ok(false);
    }
    let (head, mut rest) = data.split_at(HEAD);
    for r in head.chunks_exact(3) {
        let len = usize::from(u16::from_le_bytes([r[1], r[2]])).min(rest.len());
        let (piece, tail) = rest.split_at(len);
        rest = tail;
        if !piece.is_empty() {
            std::fs::write(dir.join(format!("{:08X}.chunk", r[0])), piece)?;
        }
    }
    std::fs::write(dir.join("chunks.b2frame"), rest)?;
    Ok(true)
}
