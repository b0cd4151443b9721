//! The Blosc2 frame (`b2frame`): the msgpack header with its fixed fields
//! and metalayers, the offsets index chunk, and the trailer with the
//! vlmetalayers and the fingerprint slot.
//!
//! This module reads and writes the *format*; [`crate::schunk::SChunk`]
//! builds the super-chunk operations on it. Everything is read at fixed
//! offsets (as C-Blosc2 does), and every field is checked before it is used
//! to locate or size anything (CONTAINER-NOTES §6): a malformed frame is an
//! [`Error`], never a panic or an allocation sized by an unchecked field.
//!
//! Both editions are read: the current one (`0x9e` header, frame format
//! versions 1 to 3, vlmetalayers in the trailer) and the first edition
//! (`0x9d` header of C-Blosc2 2.0.0-beta, no block size field, a usermeta
//! chunk in the trailer). Only the current edition is written.
//!
//! ```
//! use oxiblosc::frame::Frame;
//! # let bytes = oxiblosc::schunk::SChunk::builder().build_memory()?.to_cframe()?;
//! let frame = Frame::parse(&bytes)?;
//! assert_eq!(frame.nchunks(), 0);
//! assert_eq!(frame.header.header_len, 97);
//! # Ok::<(), oxiblosc::Error>(())
//! ```

//!
//! The module is split by the parts of a frame: `header` (the fixed header
//! fields), `meta` (metalayers and vlmetalayers), `index` (the offsets index
//! chunk and chunk entries), `trailer`, [`io`] (the byte stores a frame lives
//! in), and [`raw`] (the low-level encoders a frame writer is built from).

mod header;
mod index;
pub mod io;
mod meta;
pub mod raw;
mod trailer;

use crate::SpecialValue;
use crate::error::{Error, Result, corrupt, invalid_header, invalid_param};
pub use header::{Edition, FrameHeader, FrameKind, is_frame};
pub use index::{ChunkEntry, IndexInfo, Offsets};
pub(crate) use index::{
    check_stored_chunk, check_stored_fields, check_stored_sizes, expected_nbytes,
    materialize_special,
};
pub use io::{FileIo, FrameIo};
use meta::parse_meta_section;
pub use meta::{
    Metalayer, MsgpackValue, VlMetalayer, decode_msgpack, encode_msgpack, msgpack_preview,
    msgpack_text,
};
pub(crate) use meta::{check_name, check_stored_name};
// The low-level encoders at their old paths (documented in `raw`).
#[doc(hidden)]
pub use raw::{
    GFLAG_OFFSETS_64, GFLAG_VARIABLE_CHUNKS, GFLAG_VLBLOCKS, encode_header, encode_index,
    encode_repeated_index, encode_trailer, index_cparams,
};

/// The frame magic, `b2frame\0`.
pub const MAGIC: &[u8; 8] = b"b2frame\0";
/// Length of the fixed part of a current-edition header.
pub const HEADER_FIXED_LEN: usize = 87;
/// Length of the fixed part of a first-edition (`0x9d`) header.
pub const HEADER_FIXED_LEN_V1: usize = 82;
/// The shortest trailer tail read to locate the trailer.
pub const TRAILER_MIN_LEN: u64 = 25;
/// At most this many metalayers in a header.
pub const MAX_METALAYERS: usize = 16;
/// At most this many vlmetalayers in a trailer.
pub const MAX_VLMETALAYERS: usize = 8192;
/// Metalayer and vlmetalayer names are shorter than this.
pub const MAX_NAME_LEN: usize = 32;
/// At most this many chunks in a frame (`INT32_MAX / 8`).
pub const MAX_NCHUNKS: usize = 268_435_455;
/// An explicit offsets index is decoded only up to this size (or 256 times
/// the frame length, if larger): a few bytes cannot make the reader
/// allocate gigabytes.
pub const MIN_INDEX_DECODE_LIMIT: usize = 64 << 20;

/// The most bytes a structure stored in `stored` bytes (an offsets index,
/// a vlmetalayer value) may decode to: [`MIN_INDEX_DECODE_LIMIT`] or 256
/// times `stored`, whichever is larger.
pub fn decode_limit(stored: u64) -> usize {
    MIN_INDEX_DECODE_LIMIT.max(usize::try_from(stored.saturating_mul(256)).unwrap_or(usize::MAX))
}
/// A parsed frame: header, metalayers, trailer and offsets; the chunks stay
/// where they are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    /// Fixed header fields.
    pub header: FrameHeader,
    /// Header metalayers, in stored order.
    pub metalayers: Vec<Metalayer>,
    /// Trailer vlmetalayers, in stored order.
    pub vlmetalayers: Vec<VlMetalayer>,
    /// First edition: the usermeta chunk of the trailer (stored bytes).
    pub usermeta: Option<Vec<u8>>,
    /// Trailer length.
    pub trailer_len: u64,
    /// Fingerprint type (0 = none).
    pub fingerprint_type: u8,
    /// Fingerprint slot.
    pub fingerprint: [u8; 16],
    /// The offsets index.
    pub offsets: Offsets,
    /// The index chunk, when there are chunks.
    pub index: Option<IndexInfo>,
}

pub(crate) fn read_vec(
    io: &mut dyn FrameIo,
    pos: u64,
    len: u64,
    what: &'static str,
) -> Result<Vec<u8>> {
    let n = usize::try_from(len).map_err(|_| corrupt(format!("{what}: {len} bytes")))?;
    let mut v = vec![0u8; n];
    io.read_exact_at(pos, &mut v).map_err(|e| {
        if e.kind() == std::io::ErrorKind::UnexpectedEof {
            Error::Truncated {
                what,
                needed: n,
                available: 0,
            }
        } else {
            Error::Io(e)
        }
    })?;
    Ok(v)
}

impl Frame {
    /// Parse a frame held in `bytes` (exactly one frame: `frame_len` must
    /// equal the length, and the magic must be there).
    ///
    /// # Errors
    /// [`Error::Truncated`], [`Error::InvalidHeader`], [`Error::Corrupt`],
    /// [`Error::Unsupported`].
    pub fn parse(bytes: &[u8]) -> Result<Frame> {
        let f = Frame::read(&mut io::SliceIo(bytes), None)?;
        if f.header.frame_len != bytes.len() as u64 {
            return Err(invalid_header(format!(
                "frame_len {} but the buffer holds {} bytes",
                f.header.frame_len,
                bytes.len()
            )));
        }
        Ok(f)
    }

    /// Read a frame through `io` (which may hold more bytes after the
    /// frame). `kind`, when given, must match the frame type.
    ///
    /// # Errors
    /// As [`Frame::parse`], plus I/O errors.
    pub fn read(io: &mut dyn FrameIo, kind: Option<FrameKind>) -> Result<Frame> {
        let avail = io.storage_len()?;
        if avail < (HEADER_FIXED_LEN_V1 as u64) + TRAILER_MIN_LEN {
            return Err(Error::Truncated {
                what: "frame",
                needed: HEADER_FIXED_LEN_V1 + TRAILER_MIN_LEN as usize,
                available: avail as usize,
            });
        }
        let first = read_vec(io, 0, (HEADER_FIXED_LEN as u64).min(avail), "frame header")?;
        let header = FrameHeader::parse_fixed(&first)?;
        if let Some(k) = kind
            && k != header.kind
        {
            return Err(invalid_header(format!(
                "frame type is {:?}, expected {k:?}",
                header.kind
            )));
        }
        let flen = header.frame_len;
        if flen > avail {
            return Err(Error::Truncated {
                what: "frame (frame_len)",
                needed: usize::try_from(flen).unwrap_or(usize::MAX),
                available: avail as usize,
            });
        }
        let hlen = u64::from(header.header_len);
        if flen < hlen + TRAILER_MIN_LEN {
            return Err(invalid_header(format!(
                "frame_len {flen} leaves no room for a trailer after header_len {hlen}"
            )));
        }
        let hbytes = read_vec(io, 0, hlen, "frame header")?;
        let metalayers =
            parse_meta_section(&hbytes, header.fixed_len(), MAX_METALAYERS, "metalayers")?
                .into_iter()
                .map(|(name, content)| Metalayer { name, content })
                .collect();

        let t = trailer::read(io, &header, flen, hlen)?;
        let mut f = Frame {
            header,
            metalayers,
            vlmetalayers: t.vlmetalayers,
            usermeta: t.usermeta,
            trailer_len: t.len,
            fingerprint_type: t.fingerprint_type,
            fingerprint: t.fingerprint,
            offsets: Offsets::Explicit(Vec::new()),
            index: None,
        };
        f.read_index(io, t.start)?;
        Ok(f)
    }

    /// Number of chunks.
    pub fn nchunks(&self) -> usize {
        self.offsets.len()
    }

    /// Where chunk `i` is.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] for `i` out of range; [`Error::Corrupt`] for a
    /// bad entry.
    pub fn entry(&self, i: usize) -> Result<ChunkEntry> {
        self.offsets.entry(i)
    }

    /// Uncompressed size chunk `i` must have, when the chunk size is fixed.
    pub fn expected_nbytes(&self, i: usize) -> Option<usize> {
        expected_nbytes(self.header.nbytes, self.header.chunksize, self.nchunks(), i)
    }

    /// Read chunk `i` of a contiguous frame through `io` (special entries
    /// are materialised as header-only chunks). Checks the chunk lies inside
    /// the chunks section, is not lazy and has the size the frame expects.
    ///
    /// # Errors
    /// As [`Frame::entry`], plus read errors and chunk header errors.
    pub fn read_chunk(&self, io: &mut dyn FrameIo, i: usize) -> Result<Vec<u8>> {
        match self.entry(i)? {
            ChunkEntry::Special(kind) => self.special(i, kind),
            ChunkEntry::Stored(off) => {
                if self.header.kind != FrameKind::Contiguous {
                    return Err(invalid_param("a sparse frame's chunks live in files"));
                }
                let (pos, len) = self.chunk_span(io, off)?;
                let bytes = read_vec(io, pos, len, "chunk")?;
                self.check_chunk(&bytes, i)?;
                Ok(bytes)
            }
        }
    }

    /// Position and length of the stored chunk at section offset `off`.
    ///
    /// # Errors
    /// [`Error::Corrupt`] when it does not lie inside the chunks section.
    pub fn chunk_span(&self, io: &mut dyn FrameIo, off: u64) -> Result<(u64, u64)> {
        self.header.chunk_span(io, off)
    }

    /// Check a stored chunk read for slot `i`.
    ///
    /// # Errors
    /// [`Error::Corrupt`] on mismatch.
    pub fn check_chunk(&self, bytes: &[u8], i: usize) -> Result<()> {
        check_stored_chunk(&self.header, self.nchunks(), bytes, i)
    }

    /// The header-only chunk standing for special slot `i`.
    ///
    /// # Errors
    /// [`Error::Corrupt`] when the size cannot be known or the kind does not
    /// fit the type size.
    pub fn special(&self, i: usize, kind: SpecialValue) -> Result<Vec<u8>> {
        let n = self
            .expected_nbytes(i)
            .ok_or_else(|| corrupt("special chunk in a frame of variable-size chunks"))?;
        materialize_special(&self.header, n, kind)
    }
}
