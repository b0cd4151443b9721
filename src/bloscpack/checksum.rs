//! The nine checksums of Bloscpack (header byte 6, metadata header byte 9):
//! computed on the stored (compressed) bytes and written right after them.
//! Adler-32 and CRC-32 are 4 bytes little-endian (`struct.pack('<I', ..)`),
//! the hashes are their raw digests.

use std::fmt;

use md5::Md5;
use sha1::Sha1;
use sha2::{Digest, Sha224, Sha256, Sha384, Sha512};

use crate::error::{Error, Result};

/// A Bloscpack checksum, by its id in the headers (0..=8).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Checksum {
    /// No checksum (id 0): nothing is stored.
    None,
    /// zlib's Adler-32 (id 1, 4 bytes LE): bloscpack's default.
    #[default]
    Adler32,
    /// zlib's CRC-32 (id 2, 4 bytes LE).
    Crc32,
    /// MD5 (id 3, 16 bytes).
    Md5,
    /// SHA-1 (id 4, 20 bytes).
    Sha1,
    /// SHA-224 (id 5, 28 bytes).
    Sha224,
    /// SHA-256 (id 6, 32 bytes).
    Sha256,
    /// SHA-384 (id 7, 48 bytes).
    Sha384,
    /// SHA-512 (id 8, 64 bytes).
    Sha512,
}

impl Checksum {
    /// All nine, in id order.
    pub const ALL: [Checksum; 9] = [
        Checksum::None,
        Checksum::Adler32,
        Checksum::Crc32,
        Checksum::Md5,
        Checksum::Sha1,
        Checksum::Sha224,
        Checksum::Sha256,
        Checksum::Sha384,
        Checksum::Sha512,
    ];

    /// The checksum with header id `id`.
    ///
    /// # Errors
    /// [`Error::InvalidHeader`] for an id over 8.
    pub fn from_id(id: u8) -> Result<Checksum> {
        Checksum::ALL.get(usize::from(id)).copied().ok_or_else(|| {
            Error::InvalidHeader(format!("bloscpack checksum id {id} is not in 0..=8"))
        })
    }

    /// The id written in the headers.
    pub fn id(self) -> u8 {
        Checksum::ALL.iter().position(|&c| c == self).unwrap_or(0) as u8
    }

    /// bloscpack's name for it (`"None"`, `"adler32"`, `"crc32"`, `"md5"`,
    /// `"sha1"`, `"sha224"`, `"sha256"`, `"sha384"`, `"sha512"`).
    pub fn name(self) -> &'static str {
        match self {
            Checksum::None => "None",
            Checksum::Adler32 => "adler32",
            Checksum::Crc32 => "crc32",
            Checksum::Md5 => "md5",
            Checksum::Sha1 => "sha1",
            Checksum::Sha224 => "sha224",
            Checksum::Sha256 => "sha256",
            Checksum::Sha384 => "sha384",
            Checksum::Sha512 => "sha512",
        }
    }

    /// The checksum called `name` (as [`Checksum::name`]; `"none"` too).
    pub fn from_name(name: &str) -> Option<Checksum> {
        if name.eq_ignore_ascii_case("none") {
            return Some(Checksum::None);
        }
        Checksum::ALL.iter().copied().find(|c| c.name() == name)
    }

    /// Bytes the digest takes after the data it covers.
    pub fn size(self) -> usize {
        match self {
            Checksum::None => 0,
            Checksum::Adler32 | Checksum::Crc32 => 4,
            Checksum::Md5 => 16,
            Checksum::Sha1 => 20,
            Checksum::Sha224 => 28,
            Checksum::Sha256 => 32,
            Checksum::Sha384 => 48,
            Checksum::Sha512 => 64,
        }
    }

    /// The digest of `data`, as stored ([`Checksum::size`] bytes).
    pub fn digest(self, data: &[u8]) -> Vec<u8> {
        match self {
            Checksum::None => Vec::new(),
            Checksum::Adler32 => adler2::adler32_slice(data).to_le_bytes().to_vec(),
            Checksum::Crc32 => crc32fast::hash(data).to_le_bytes().to_vec(),
            Checksum::Md5 => Md5::digest(data).to_vec(),
            Checksum::Sha1 => Sha1::digest(data).to_vec(),
            Checksum::Sha224 => Sha224::digest(data).to_vec(),
            Checksum::Sha256 => Sha256::digest(data).to_vec(),
            Checksum::Sha384 => Sha384::digest(data).to_vec(),
            Checksum::Sha512 => Sha512::digest(data).to_vec(),
        }
    }

    /// Whether `stored` is the digest of `data`.
    pub fn verify(self, data: &[u8], stored: &[u8]) -> bool {
        stored.len() == self.size() && self.digest(data) == stored
    }
}

impl fmt::Display for Checksum {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_digests() {
        // zlib.adler32(b"abc") = 0x024d0127, zlib.crc32(b"abc") = 0x352441c2.
        assert_eq!(Checksum::Adler32.digest(b"abc"), [0x27, 0x01, 0x4d, 0x02]);
        assert_eq!(Checksum::Crc32.digest(b"abc"), [0xc2, 0x41, 0x24, 0x35]);
        assert_eq!(Checksum::Md5.digest(b"abc")[..4], [0x90, 0x01, 0x50, 0x98]);
        for (i, c) in Checksum::ALL.iter().enumerate() {
            assert_eq!(c.id() as usize, i);
            assert_eq!(Checksum::from_id(i as u8).unwrap(), *c);
            assert_eq!(c.digest(b"xyz").len(), c.size());
            assert_eq!(Checksum::from_name(c.name()), Some(*c));
        }
        assert!(Checksum::from_id(9).is_err());
    }
}
