//! The metadata section (header options bit 1), right after the Bloscpack
//! header:
//! `metadata header (32) | stored data (meta_comp_size) | zeros up to
//! max_meta_size | digest of the stored data`.
//!
//! Metadata header, little-endian:
//!
//! | off | type | field |
//! |---|---|---|
//! | 0 | 8 bytes | serializer, NUL-padded: `JSON` (the only one) |
//! | 8 | u8 | meta options, 0 |
//! | 9 | u8 | checksum id of the stored data |
//! | 10 | u8 | codec: 0 none, 1 zlib |
//! | 11 | u8 | codec level (bloscpack leaves 6 even when it stores raw) |
//! | 12 | u32 | meta_size: length of the serialized JSON |
//! | 16 | u32 | max_meta_size: room reserved for the stored data |
//! | 20 | u32 | meta_comp_size: bytes stored |
//! | 24 | 8 bytes | user codec, NUL-padded, unused |

use serde_json::Value;

use super::checksum::Checksum;
use crate::error::{Error, Result};

/// Bytes of the metadata header.
pub const METADATA_HEADER_LEN: usize = 32;
/// The serializer field bloscpack writes (and the only one it knows).
pub const JSON_MAGIC: &[u8; 8] = b"JSON\0\0\0\0";
/// zlib's worst-case expansion on decoding: no stream inflates more.
const ZLIB_MAX_RATIO: u64 = 1032;

fn bad(msg: impl std::fmt::Display) -> Error {
    Error::InvalidHeader(format!("bloscpack metadata: {msg}"))
}

fn corrupt(msg: impl std::fmt::Display) -> Error {
    Error::Corrupt(format!("bloscpack metadata: {msg}"))
}

/// How the metadata is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum MetaCodec {
    /// Raw JSON (id 0).
    None,
    /// A zlib stream (id 1): bloscpack's default.
    #[default]
    Zlib,
}

impl MetaCodec {
    /// The id in the metadata header.
    pub fn id(self) -> u8 {
        match self {
            MetaCodec::None => 0,
            MetaCodec::Zlib => 1,
        }
    }
}

/// The 32-byte metadata header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MetadataHeader {
    /// The serializer, NUL-padded (`b"JSON\0\0\0\0"`).
    pub magic_format: [u8; 8],
    /// Option bits (0).
    pub options: u8,
    /// Checksum of the stored bytes.
    pub checksum: Checksum,
    /// Codec of the stored bytes.
    pub codec: MetaCodec,
    /// Codec level as written.
    pub level: u8,
    /// Length of the serialized JSON.
    pub meta_size: u32,
    /// Room reserved for the stored bytes.
    pub max_meta_size: u32,
    /// Bytes stored.
    pub meta_comp_size: u32,
    /// User codec name, NUL-padded (unused by bloscpack).
    pub user_codec: [u8; 8],
}

impl MetadataHeader {
    /// Parse and check a metadata header (the first 32 bytes of `src`).
    ///
    /// # Errors
    /// [`Error::Truncated`] for fewer than 32 bytes, [`Error::Unsupported`]
    /// for a serializer other than JSON, [`Error::InvalidHeader`] for
    /// unknown options, checksum or codec, or stored bytes larger than the
    /// room reserved.
    pub fn parse(src: &[u8]) -> Result<MetadataHeader> {
        let Some(h) = src.get(..METADATA_HEADER_LEN) else {
            return Err(Error::Truncated {
                what: "bloscpack metadata header",
                needed: METADATA_HEADER_LEN,
                available: src.len(),
            });
        };
        let magic_format: [u8; 8] = h[..8].try_into().unwrap();
        if &magic_format != JSON_MAGIC {
            return Err(Error::Unsupported(format!(
                "bloscpack metadata: serializer {:?} (only JSON is known)",
                String::from_utf8_lossy(&magic_format).trim_end_matches('\0')
            )));
        }
        if h[8] != 0 {
            return Err(bad(format_args!("meta options {:#04x} (must be 0)", h[8])));
        }
        let checksum =
            Checksum::from_id(h[9]).map_err(|_| bad(format_args!("checksum id {}", h[9])))?;
        let codec = match h[10] {
            0 => MetaCodec::None,
            1 => MetaCodec::Zlib,
            c => return Err(bad(format_args!("codec id {c} (0 none, 1 zlib)"))),
        };
        let u32_at = |o: usize| u32::from_le_bytes(h[o..o + 4].try_into().unwrap());
        let header = MetadataHeader {
            magic_format,
            options: h[8],
            checksum,
            codec,
            level: h[11],
            meta_size: u32_at(12),
            max_meta_size: u32_at(16),
            meta_comp_size: u32_at(20),
            user_codec: h[24..32].try_into().unwrap(),
        };
        if header.meta_comp_size > header.max_meta_size {
            return Err(bad(format_args!(
                "{} bytes stored but only {} reserved",
                header.meta_comp_size, header.max_meta_size
            )));
        }
        let bound = match codec {
            MetaCodec::None => u64::from(header.meta_comp_size),
            MetaCodec::Zlib => u64::from(header.meta_comp_size) * ZLIB_MAX_RATIO,
        };
        if u64::from(header.meta_size) > bound
            || (codec == MetaCodec::None && header.meta_size != header.meta_comp_size)
        {
            return Err(bad(format_args!(
                "meta_size {} cannot come from {} stored {} bytes",
                header.meta_size,
                header.meta_comp_size,
                if codec == MetaCodec::None {
                    "raw"
                } else {
                    "zlib"
                }
            )));
        }
        Ok(header)
    }

    /// The 32 bytes of this header.
    pub fn to_bytes(&self) -> [u8; METADATA_HEADER_LEN] {
        let mut h = [0u8; METADATA_HEADER_LEN];
        h[..8].copy_from_slice(&self.magic_format);
        h[8] = self.options;
        h[9] = self.checksum.id();
        h[10] = self.codec.id();
        h[11] = self.level;
        h[12..16].copy_from_slice(&self.meta_size.to_le_bytes());
        h[16..20].copy_from_slice(&self.max_meta_size.to_le_bytes());
        h[20..24].copy_from_slice(&self.meta_comp_size.to_le_bytes());
        h[24..32].copy_from_slice(&self.user_codec);
        h
    }

    /// Bytes of the whole section: header, reserved room and digest.
    pub fn section_len(&self) -> u64 {
        METADATA_HEADER_LEN as u64 + u64::from(self.max_meta_size) + self.checksum.size() as u64
    }
}

/// How metadata is written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MetadataOptions {
    /// Checksum of the stored bytes (default adler32).
    pub checksum: Checksum,
    /// Codec (default zlib; kept only when it makes the data smaller, and
    /// dropped to none in builds without the `zlib` feature).
    pub codec: MetaCodec,
    /// Codec level written in the header (default 6).
    pub level: u8,
    /// Room reserved for the stored bytes; `None` = 10 × the JSON's length
    /// (bloscpack's default).
    pub max_meta_size: Option<u32>,
}

impl Default for MetadataOptions {
    fn default() -> Self {
        MetadataOptions {
            checksum: Checksum::Adler32,
            codec: MetaCodec::Zlib,
            level: 6,
            max_meta_size: None,
        }
    }
}

impl MetadataOptions {
    /// Set the checksum.
    pub fn checksum(mut self, checksum: Checksum) -> Self {
        self.checksum = checksum;
        self
    }
    /// Set the codec.
    pub fn codec(mut self, codec: MetaCodec) -> Self {
        self.codec = codec;
        self
    }
    /// Set the codec level (1..=9 for zlib).
    pub fn level(mut self, level: u8) -> Self {
        self.level = level;
        self
    }
    /// Set the room reserved for the stored bytes.
    pub fn max_meta_size(mut self, max_meta_size: u32) -> Self {
        self.max_meta_size = Some(max_meta_size);
        self
    }
}

#[cfg(feature = "zlib")]
fn zlib_compress(level: u8, src: &[u8]) -> Result<Option<Vec<u8>>> {
    let mut dst = vec![0u8; src.len() + src.len() / 1000 + 64];
    let n =
        crate::codecs::zlib::Zlib::default().compress_stream(level.clamp(1, 9), src, &mut dst)?;
    if n == 0 {
        return Ok(None);
    }
    dst.truncate(n);
    Ok(Some(dst))
}

#[cfg(not(feature = "zlib"))]
fn zlib_compress(_level: u8, _src: &[u8]) -> Result<Option<Vec<u8>>> {
    Ok(None)
}

#[cfg(feature = "zlib")]
fn zlib_decompress(src: &[u8], len: usize) -> Result<Vec<u8>> {
    let mut dst = vec![0u8; len];
    let n = crate::codecs::zlib::Zlib::default()
        .decompress_stream(src, &mut dst)
        .map_err(corrupt)?;
    if n != len {
        return Err(corrupt(format_args!(
            "zlib data inflates to {n} bytes, header says {len}"
        )));
    }
    Ok(dst)
}

#[cfg(not(feature = "zlib"))]
fn zlib_decompress(_src: &[u8], _len: usize) -> Result<Vec<u8>> {
    Err(Error::Unsupported(
        "bloscpack metadata: zlib-compressed metadata needs the `zlib` cargo feature".into(),
    ))
}

/// The JSON text bloscpack writes for `value` (compact separators).
pub fn to_json(value: &Value) -> Vec<u8> {
    // serde_json's compact output is Python's `separators=(',', ':')`.
    serde_json::to_vec(value).expect("a serde_json::Value always serializes")
}

/// Encode a metadata section for `value`: the header and the section's
/// bytes (header, stored data, zero room, digest).
///
/// # Errors
/// [`Error::InvalidParam`] when the stored data does not fit the room
/// asked for, or the JSON is over 4 GiB.
pub fn encode(value: &Value, opts: &MetadataOptions) -> Result<(MetadataHeader, Vec<u8>)> {
    let json = to_json(value);
    let meta_size = u32::try_from(json.len())
        .map_err(|_| Error::InvalidParam("bloscpack metadata: JSON over 4 GiB".into()))?;
    let max_meta_size = match opts.max_meta_size {
        Some(m) => m,
        None => meta_size.saturating_mul(10),
    };
    encode_into_room(&json, meta_size, max_meta_size, opts)
}

fn encode_into_room(
    json: &[u8],
    meta_size: u32,
    max_meta_size: u32,
    opts: &MetadataOptions,
) -> Result<(MetadataHeader, Vec<u8>)> {
    let mut codec = opts.codec;
    let stored: Vec<u8> = match codec {
        MetaCodec::None => json.to_vec(),
        MetaCodec::Zlib => match zlib_compress(opts.level, json)? {
            // Opportunistic, as bloscpack: raw when zlib does not help.
            Some(z) if z.len() <= json.len() => z,
            _ => {
                codec = MetaCodec::None;
                json.to_vec()
            }
        },
    };
    let meta_comp_size = stored.len() as u32;
    if meta_comp_size > max_meta_size {
        return Err(Error::InvalidParam(format!(
            "bloscpack metadata: {meta_comp_size} bytes to store, only {max_meta_size} reserved"
        )));
    }
    let header = MetadataHeader {
        magic_format: *JSON_MAGIC,
        options: 0,
        checksum: opts.checksum,
        codec,
        level: opts.level,
        meta_size,
        max_meta_size,
        meta_comp_size,
        user_codec: [0; 8],
    };
    let mut out = Vec::with_capacity(header.section_len() as usize);
    out.extend_from_slice(&header.to_bytes());
    out.extend_from_slice(&stored);
    out.resize(METADATA_HEADER_LEN + max_meta_size as usize, 0);
    out.extend_from_slice(&opts.checksum.digest(&stored));
    Ok((header, out))
}

/// Encode `value` into the room of an existing section `old` (same
/// `max_meta_size` and checksum, codec and level from `opts`).
///
/// # Errors
/// [`Error::InvalidParam`] when it does not fit.
pub fn reencode(
    old: &MetadataHeader,
    value: &Value,
    opts: &MetadataOptions,
) -> Result<(MetadataHeader, Vec<u8>)> {
    let json = to_json(value);
    let meta_size = u32::try_from(json.len())
        .map_err(|_| Error::InvalidParam("bloscpack metadata: JSON over 4 GiB".into()))?;
    let opts = MetadataOptions {
        checksum: old.checksum,
        ..opts.clone()
    };
    encode_into_room(&json, meta_size, old.max_meta_size, &opts)
}

/// Parse the metadata section at the start of `src`: its header, the
/// decoded JSON and the section's length.
///
/// # Errors
/// As [`MetadataHeader::parse`], plus [`Error::Truncated`] when the section
/// runs past `src`, [`Error::Corrupt`] for a checksum mismatch, a bad zlib
/// stream or invalid JSON, and [`Error::Unsupported`] for zlib metadata in
/// a build without the `zlib` feature.
pub fn decode(src: &[u8]) -> Result<(MetadataHeader, Value, usize)> {
    let header = MetadataHeader::parse(src)?;
    let len = header.section_len();
    if len > src.len() as u64 {
        return Err(Error::Truncated {
            what: "bloscpack metadata section",
            needed: usize::try_from(len).unwrap_or(usize::MAX),
            available: src.len(),
        });
    }
    let len = len as usize;
    let stored_end = METADATA_HEADER_LEN + header.meta_comp_size as usize;
    let stored = &src[METADATA_HEADER_LEN..stored_end];
    let digest = &src[len - header.checksum.size()..len];
    if !header.checksum.verify(stored, digest) {
        return Err(corrupt(format_args!(
            "checksum mismatch ({})",
            header.checksum
        )));
    }
    let json = match header.codec {
        MetaCodec::None => stored.to_vec(),
        MetaCodec::Zlib => zlib_decompress(stored, header.meta_size as usize)?,
    };
    let value = serde_json::from_slice(&json).map_err(|e| corrupt(format_args!("JSON: {e}")))?;
    Ok((header, value, len))
}
