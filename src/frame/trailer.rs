//! The trailer, found from the frame's end: vlmetalayers (current edition)
//! or the usermeta chunk (first edition), the trailer length and the
//! fingerprint slot.

use super::meta::{Cur, parse_meta_section};
use super::{
    Edition, FrameHeader, FrameIo, MAX_VLMETALAYERS, TRAILER_MIN_LEN, VlMetalayer, read_vec,
};
use crate::error::{Result, corrupt};

/// What [`read`] finds.
pub(super) struct Trailer {
    /// Where the trailer starts (from the frame start).
    pub start: u64,
    /// Its length.
    pub len: u64,
    pub vlmetalayers: Vec<VlMetalayer>,
    pub usermeta: Option<Vec<u8>>,
    pub fingerprint_type: u8,
    pub fingerprint: [u8; 16],
}

/// Read the trailer of the frame of `flen` bytes whose header is `hlen`
/// bytes long.
pub(super) fn read(
    io: &mut dyn FrameIo,
    header: &FrameHeader,
    flen: u64,
    hlen: u64,
) -> Result<Trailer> {
    // Trailer, found from the end.
    let tail = read_vec(io, flen - TRAILER_MIN_LEN, TRAILER_MIN_LEN, "frame trailer")?;
    if tail[2] != 0xce {
        return Err(corrupt("trailer: no trailer_len marker 0xce at end − 23"));
    }
    let tlen = u64::from(u32::from_be_bytes([tail[3], tail[4], tail[5], tail[6]]));
    if tail[7] != 0xd8 {
        return Err(corrupt("trailer: no fingerprint marker 0xd8"));
    }
    let max_t = flen - hlen;
    if tlen < TRAILER_MIN_LEN || tlen > i32::MAX as u64 || tlen > max_t {
        return Err(corrupt(format!(
            "trailer_len {tlen} not in {TRAILER_MIN_LEN}..={max_t}"
        )));
    }
    let fingerprint_type = tail[8];
    let mut fingerprint = [0u8; 16];
    fingerprint.copy_from_slice(&tail[9..25]);
    let tstart = flen - tlen;
    let tbytes = read_vec(io, tstart, tlen, "frame trailer")?;
    let (vlmetalayers, usermeta) = match header.edition {
        Edition::Current => {
            let body = &tbytes[..tbytes.len() - 23];
            let mut c = Cur {
                b: body,
                p: 0,
                what: "trailer",
            };
            c.expect(0x94)?;
            c.u8()?;
            let vl = parse_meta_section(body, 2, MAX_VLMETALAYERS, "vlmetalayers")?
                .into_iter()
                .map(|(name, chunk)| VlMetalayer { name, chunk })
                .collect();
            (vl, None)
        }
        Edition::First => {
            let body = &tbytes[..tbytes.len() - 23];
            let mut c = Cur {
                b: body,
                p: 0,
                what: "trailer",
            };
            c.expect(0x94)?;
            c.u8()?;
            c.expect(0xc6)?;
            let s = c.take(4)?;
            let len = u32::from_be_bytes([s[0], s[1], s[2], s[3]]) as usize;
            let um = c.take(len)?.to_vec();
            (Vec::new(), Some(um))
        }
    };
    Ok(Trailer {
        start: tstart,
        len: tlen,
        vlmetalayers,
        usermeta,
        fingerprint_type,
        fingerprint,
    })
}
