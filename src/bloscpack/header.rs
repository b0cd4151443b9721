//! The 32-byte Bloscpack header (format version 3), all fields little-endian:
//!
//! | off | type | field |
//! |---|---|---|
//! | 0 | 4 bytes | magic `blpk` |
//! | 4 | u8 | format version, 3 |
//! | 5 | u8 | options: bit 0 offsets, bit 1 metadata, others 0 |
//! | 6 | u8 | checksum id (0..=8) |
//! | 7 | u8 | typesize |
//! | 8 | i32 | chunk size (−1 unknown) |
//! | 12 | i32 | last chunk size (−1 unknown) |
//! | 16 | i64 | nchunks (−1 unknown) |
//! | 24 | i64 | max_app_chunks (offset slots kept free for appends) |

use super::checksum::Checksum;
use crate::error::{Error, Result};

/// The magic bytes a Bloscpack file starts with.
pub const MAGIC: &[u8; 4] = b"blpk";
/// The format version this module reads and writes.
pub const FORMAT_VERSION: u8 = 3;
/// Bytes of the header.
pub const HEADER_LEN: usize = 32;

const OPT_OFFSETS: u8 = 0x01;
const OPT_METADATA: u8 = 0x02;

fn bad(msg: String) -> Error {
    Error::InvalidHeader(format!("bloscpack header: {msg}"))
}

/// The Bloscpack header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// Whether the offsets section is present (options bit 0).
    pub offsets: bool,
    /// Whether the metadata section is present (options bit 1).
    pub metadata: bool,
    /// The checksum after every chunk.
    pub checksum: Checksum,
    /// The type size of the data.
    pub typesize: u8,
    /// Uncompressed size of every chunk but the last; `None` if unknown (−1).
    pub chunk_size: Option<u32>,
    /// Uncompressed size of the last chunk; `None` if unknown (−1).
    pub last_chunk: Option<u32>,
    /// Number of chunks; `None` if unknown (−1).
    pub nchunks: Option<u64>,
    /// Offset slots reserved after the `nchunks` used ones, for appends.
    pub max_app_chunks: u64,
}

fn opt_i32(v: Option<u32>) -> i32 {
    v.map_or(-1, |v| v as i32)
}

fn opt_i64(v: Option<u64>) -> i64 {
    v.map_or(-1, |v| v as i64)
}

impl Header {
    /// Parse and check the first 32 bytes of `src`.
    ///
    /// # Errors
    /// [`Error::Truncated`] when `src` is shorter than 32 bytes,
    /// [`Error::InvalidHeader`] (message starting `bloscpack header:`) for a
    /// wrong magic, a format version other than 3, unknown option bits, an
    /// unknown checksum or a size field out of range.
    pub fn parse(src: &[u8]) -> Result<Header> {
        let Some(h) = src.get(..HEADER_LEN) else {
            return Err(Error::Truncated {
                what: "bloscpack header",
                needed: HEADER_LEN,
                available: src.len(),
            });
        };
        if &h[..4] != MAGIC {
            return Err(bad(format!("magic {:02x?} is not \"blpk\"", &h[..4])));
        }
        if h[4] != FORMAT_VERSION {
            return Err(bad(format!(
                "format version {} (only {FORMAT_VERSION} is known)",
                h[4]
            )));
        }
        let options = h[5];
        if options & !(OPT_OFFSETS | OPT_METADATA) != 0 {
            return Err(bad(format!("unknown option bits {options:#04x}")));
        }
        let checksum = Checksum::from_id(h[6]).map_err(|_| bad(format!("checksum id {}", h[6])))?;
        let i32_at = |o: usize| i32::from_le_bytes(h[o..o + 4].try_into().unwrap());
        let i64_at = |o: usize| i64::from_le_bytes(h[o..o + 8].try_into().unwrap());
        let size32 = |o: usize, name: &str| -> Result<Option<u32>> {
            match i32_at(o) {
                -1 => Ok(None),
                v if v >= 0 => Ok(Some(v as u32)),
                v => Err(bad(format!("{name} {v} (must be -1 or at least 0)"))),
            }
        };
        let chunk_size = size32(8, "chunk size")?;
        let last_chunk = size32(12, "last chunk size")?;
        let nchunks = match i64_at(16) {
            -1 => None,
            v if v >= 0 => Some(v as u64),
            v => return Err(bad(format!("nchunks {v} (must be -1 or at least 0)"))),
        };
        let max_app_chunks = match i64_at(24) {
            v if v >= 0 => v as u64,
            v => return Err(bad(format!("max_app_chunks {v} is negative"))),
        };
        if let (Some(c), Some(l)) = (chunk_size, last_chunk)
            && l > c
        {
            return Err(bad(format!(
                "last chunk size {l} is larger than the chunk size {c}"
            )));
        }
        let header = Header {
            offsets: options & OPT_OFFSETS != 0,
            metadata: options & OPT_METADATA != 0,
            checksum,
            typesize: h[7],
            chunk_size,
            last_chunk,
            nchunks,
            max_app_chunks,
        };
        if nchunks == Some(0) {
            // Empty input is one empty chunk: no writer makes zero chunks.
            return Err(bad("nchunks 0 (a file holds at least one chunk)".into()));
        }
        if header.offsets && nchunks.is_none() {
            return Err(bad("offsets present but nchunks unknown (-1)".into()));
        }
        Ok(header)
    }

    /// The 32 bytes of this header.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] for a size that does not fit its field
    /// (chunk sizes over `i32::MAX`, counts over `i64::MAX`).
    pub fn to_bytes(&self) -> Result<[u8; HEADER_LEN]> {
        let too_big =
            |name: &str| Error::InvalidParam(format!("bloscpack header: {name} too large"));
        if self.chunk_size.is_some_and(|v| v > i32::MAX as u32) {
            return Err(too_big("chunk size"));
        }
        if self.last_chunk.is_some_and(|v| v > i32::MAX as u32) {
            return Err(too_big("last chunk size"));
        }
        if self.nchunks.is_some_and(|v| v > i64::MAX as u64) {
            return Err(too_big("nchunks"));
        }
        if self.max_app_chunks > i64::MAX as u64 {
            return Err(too_big("max_app_chunks"));
        }
        let mut h = [0u8; HEADER_LEN];
        h[..4].copy_from_slice(MAGIC);
        h[4] = FORMAT_VERSION;
        h[5] = (u8::from(self.offsets) * OPT_OFFSETS) | (u8::from(self.metadata) * OPT_METADATA);
        h[6] = self.checksum.id();
        h[7] = self.typesize;
        h[8..12].copy_from_slice(&opt_i32(self.chunk_size).to_le_bytes());
        h[12..16].copy_from_slice(&opt_i32(self.last_chunk).to_le_bytes());
        h[16..24].copy_from_slice(&opt_i64(self.nchunks).to_le_bytes());
        h[24..32].copy_from_slice(&(self.max_app_chunks as i64).to_le_bytes());
        Ok(h)
    }

    /// The uncompressed size chunk `i` must have, when the header says
    /// (every chunk but the last has `chunk_size`).
    pub(crate) fn expected_chunk_len(&self, i: u64) -> Option<u32> {
        let n = self.nchunks?;
        if i + 1 == n {
            self.last_chunk
        } else {
            self.chunk_size
        }
    }

    /// Number of offset slots in the file: `nchunks + max_app_chunks` when
    /// offsets are present, else 0 (`None` on overflow).
    pub fn offset_slots(&self) -> Option<u64> {
        if self.offsets {
            self.nchunks?.checked_add(self.max_app_chunks)
        } else {
            Some(0)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roundtrip_and_rejects() {
        let h = Header {
            offsets: true,
            metadata: true,
            checksum: Checksum::Crc32,
            typesize: 2,
            chunk_size: Some(8),
            last_chunk: Some(4),
            nchunks: Some(2),
            max_app_chunks: 1,
        };
        let b = h.to_bytes().unwrap();
        assert_eq!(&b[..8], b"blpk\x03\x03\x02\x02");
        assert_eq!(Header::parse(&b).unwrap(), h);
        for (at, v) in [
            (0, b'x'),
            (4, 2),
            (5, 4),
            (6, 9),
            (12, 9),
            (16, 0xfe),
            (31, 0x80),
        ] {
            let mut c = b;
            c[at] = v;
            if at == 16 {
                c[16..24].copy_from_slice(&(-2i64).to_le_bytes());
            }
            assert!(Header::parse(&c).is_err(), "byte {at} = {v}");
        }
        assert!(matches!(
            Header::parse(&b[..31]),
            Err(Error::Truncated { .. })
        ));
    }
}
