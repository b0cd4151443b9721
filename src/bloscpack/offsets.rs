//! The offsets section (header options bit 0): `nchunks + max_app_chunks`
//! little-endian i64 slots, each the absolute position of a chunk's Blosc
//! header; −1 marks a slot not (yet) used (the room for appends, or a
//! write that never finished).

use crate::error::{Error, Result};

/// Bytes of one offset slot.
pub const SLOT_LEN: usize = 8;

/// Read the `slots` offset slots at the start of `src` and return the
/// first `used` of them (`None` for −1).
///
/// The length is checked against `src` before anything is allocated.
///
/// # Errors
/// [`Error::Truncated`] when the slots run past `src`,
/// [`Error::InvalidHeader`] for an offset below −1.
pub fn parse(src: &[u8], slots: u64, used: u64) -> Result<Vec<Option<u64>>> {
    let needed = slots
        .checked_mul(SLOT_LEN as u64)
        .filter(|&n| n <= src.len() as u64);
    let Some(needed) = needed else {
        return Err(Error::Truncated {
            what: "bloscpack offsets",
            needed: usize::try_from(slots.saturating_mul(SLOT_LEN as u64)).unwrap_or(usize::MAX),
            available: src.len(),
        });
    };
    let used = used.min(slots) as usize;
    let mut out = Vec::with_capacity(used);
    for (i, b) in src[..needed as usize].chunks_exact(SLOT_LEN).enumerate() {
        if let Some(o) = slot(i as u64, b.try_into().unwrap(), used as u64)? {
            out.push(o);
        }
    }
    Ok(out)
}

/// Check offset slot `i` (its 8 bytes) of a section whose first `used`
/// slots are in use: `Some(offset)` for a used slot (`None` inside for −1),
/// `None` for a reserved one, which must hold −1.
///
/// # Errors
/// [`Error::InvalidHeader`] for a reserved slot that is not −1, or a used
/// one below −1.
pub(crate) fn slot(i: u64, b: [u8; SLOT_LEN], used: u64) -> Result<Option<Option<u64>>> {
    let v = i64::from_le_bytes(b);
    if i >= used {
        // The reserved slots must still be free: a real offset there means
        // the header's nchunks is wrong.
        return if v == -1 {
            Ok(None)
        } else {
            Err(Error::InvalidHeader(format!(
                "bloscpack offsets: slot {i} is reserved for appends (nchunks {used}) but holds {v}"
            )))
        };
    }
    match v {
        -1 => Ok(Some(None)),
        v if v >= 0 => Ok(Some(Some(v as u64))),
        v => Err(Error::InvalidHeader(format!(
            "bloscpack offsets: slot {i} holds {v}"
        ))),
    }
}

/// The bytes of `slots` offset slots: `used` first, −1 in the rest.
pub fn encode(used: &[u64], slots: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(slots * SLOT_LEN);
    for i in 0..slots {
        let v = used.get(i).map_or(-1, |&o| o as i64);
        out.extend_from_slice(&v.to_le_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_encode() {
        let b = encode(&[0x9c, 0xb8], 3);
        assert_eq!(b.len(), 24);
        assert_eq!(&b[16..], &[0xff; 8]);
        assert_eq!(parse(&b, 3, 2).unwrap(), vec![Some(0x9c), Some(0xb8)]);
        assert_eq!(parse(&b, 3, 3).unwrap()[2], None);
        assert!(parse(&b, 3, 1).is_err());
        assert!(parse(&b, 4, 2).is_err());
        assert!(parse(&b, u64::MAX, 2).is_err());
    }
}
