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

pub mod io;

use crate::chunk::ChunkHeader;
use crate::error::{Error, Result, corrupt, invalid_header, invalid_param};
use crate::params::{CParams, Codec, Filter, SplitMode};
use crate::{SpecialValue, special_chunk};
pub use io::{FileIo, FrameIo};

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

/// Special offset codes (bit 63 set, kind in the top byte).
const SPECIAL_ZEROS: i64 = 0x81u64.wrapping_shl(56) as i64;
const SPECIAL_NAN: i64 = 0x82u64.wrapping_shl(56) as i64;
const SPECIAL_UNINIT: i64 = 0x84u64.wrapping_shl(56) as i64;

/// general_flags: 64-bit offsets.
pub const GFLAG_OFFSETS_64: u8 = 0x10;
/// general_flags: variable-size chunks (chunksize 0).
pub const GFLAG_VARIABLE_CHUNKS: u8 = 0x40;
/// general_flags: VL-block chunks.
pub const GFLAG_VLBLOCKS: u8 = 0x80;

/// Which layout the header has.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Edition {
    /// `0x9d`: C-Blosc2 2.0.0-beta.2 … beta.5 (no block size, usermeta trailer). Read only.
    First,
    /// `0x9e`: C-Blosc2 2.0.0-rc1 … 3.x.
    Current,
}

/// What the frame holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FrameKind {
    /// Chunks inside the frame (a cframe).
    Contiguous,
    /// The index file of a directory frame: chunks live in `%08X.chunk` files.
    Sparse,
}

/// The fixed fields of a frame header, as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FrameHeader {
    /// Header layout.
    pub edition: Edition,
    /// Bytes from the frame start to the end of the metalayers.
    pub header_len: u32,
    /// Bytes of the whole frame, trailer included.
    pub frame_len: u64,
    /// Frame format version (bits 0-3), offset width (4-5), variable chunks (6), VL blocks (7).
    pub general_flags: u8,
    /// Contiguous or sparse.
    pub kind: FrameKind,
    /// Codec (low nibble; 6 = see `udcodec`) and clevel (high nibble).
    pub codec_flags: u8,
    /// Split mode − 1 in bits 0-1.
    pub other_flags: u8,
    /// Uncompressed bytes of all chunks.
    pub nbytes: i64,
    /// Bytes of the chunks section (cframe) or of all chunk files (sframe).
    pub cbytes: i64,
    /// Item size.
    pub typesize: i32,
    /// Requested block size (0 = automatic).
    pub blocksize: i32,
    /// Bytes of every chunk but the last; 0 = variable; −1 = not set yet.
    pub chunksize: i32,
    /// Threads the writer compressed with.
    pub tcomp: i16,
    /// Threads the writer decompressed with.
    pub tdecomp: i16,
    /// The writer's "has vlmetalayers" (first edition: "has usermeta") flag.
    pub has_vlmeta: bool,
    /// Number of filter slots (6).
    pub nfilters: u8,
    /// Filter ids per slot.
    pub filters: [u8; 6],
    /// Codec id when the codec nibble is 6 (C writes the codec id always).
    pub udcodec: u8,
    /// Codec meta byte.
    pub compcode_meta: u8,
    /// Filter meta bytes per slot.
    pub filters_meta: [u8; 6],
    /// Bit 0: use a dictionary.
    pub other_flags2: u8,
}

impl FrameHeader {
    /// A fresh current-edition header for `p` (no chunks; `chunksize` −1 if unknown).
    pub fn new(kind: FrameKind, p: &CParams, dnthreads: usize, chunksize: i32) -> FrameHeader {
        let compcode = p.codec.id();
        let mut filters = [0u8; 6];
        let mut filters_meta = p.filters_meta;
        for (i, f) in p.filters.iter().enumerate() {
            if let Some(f) = f {
                filters[i] = f.id();
                if let Filter::TruncPrec(m) = f {
                    filters_meta[i] = *m;
                }
            }
        }
        FrameHeader {
            edition: Edition::Current,
            header_len: 0,
            frame_len: 0,
            general_flags: GFLAG_OFFSETS_64 | 2,
            kind,
            codec_flags: (compcode.min(6)) | (p.clevel.min(9) << 4),
            other_flags: p.splitmode.id() - 1,
            nbytes: 0,
            cbytes: 0,
            typesize: i32::try_from(p.typesize).unwrap_or(i32::MAX),
            blocksize: i32::try_from(p.blocksize).unwrap_or(0),
            chunksize,
            tcomp: i16::try_from(p.nthreads).unwrap_or(i16::MAX),
            tdecomp: i16::try_from(dnthreads).unwrap_or(i16::MAX),
            has_vlmeta: false,
            nfilters: 6,
            filters,
            udcodec: compcode,
            compcode_meta: p.codec_meta,
            filters_meta,
            other_flags2: u8::from(p.use_dict),
        }
    }

    /// Position and length of the stored chunk at section offset `off`.
    ///
    /// # Errors
    /// [`Error::Corrupt`] when it does not lie inside the chunks section.
    pub fn chunk_span(&self, io: &mut dyn FrameIo, off: u64) -> Result<(u64, u64)> {
        let cbytes = self.cbytes as u64;
        if cbytes < 32 || off > cbytes - 32 {
            return Err(corrupt(format!(
                "chunk offset {off} outside cbytes {cbytes}"
            )));
        }
        let pos = u64::from(self.header_len) + off;
        let mut hdr = [0u8; 16];
        io.read_exact_at(pos, &mut hdr)?;
        let cb = u64::from(u32::from_le_bytes([hdr[12], hdr[13], hdr[14], hdr[15]]));
        if cb < 32 || cb > i32::MAX as u64 || off + cb > cbytes {
            return Err(corrupt(format!(
                "chunk at {off} of {cb} bytes runs outside the {cbytes}-byte section"
            )));
        }
        Ok((pos, cb))
    }

    /// Frame format version (general_flags bits 0-3).
    pub fn version(&self) -> u8 {
        self.general_flags & 0x0f
    }
    /// Codec id (the nibble, or `udcodec` when it is 6).
    pub fn compcode(&self) -> u8 {
        let c = self.codec_flags & 0x0f;
        if c >= 6 { self.udcodec } else { c }
    }
    /// Compression level.
    pub fn clevel(&self) -> u8 {
        self.codec_flags >> 4
    }
    /// Split mode from `other_flags`.
    pub fn splitmode(&self) -> SplitMode {
        match self.other_flags & 3 {
            0 => SplitMode::Always,
            1 => SplitMode::Never,
            2 => SplitMode::Auto,
            _ => SplitMode::ForwardCompat,
        }
    }
    /// Whether the writer used a dictionary.
    pub fn use_dict(&self) -> bool {
        self.other_flags2 & 1 != 0
    }

    /// The compression parameters the header records (what later appends
    /// use by default). Unknown codecs and filters fall back to the
    /// defaults; `nthreads` comes from `tcomp` (at least 1).
    pub fn cparams(&self) -> CParams {
        let mut p = CParams::default();
        if let Some(c) = Codec::from_id(self.compcode()) {
            p.codec = c;
        }
        p.clevel = self.clevel().min(9);
        p.codec_meta = self.compcode_meta;
        p.typesize = usize::try_from(self.typesize).unwrap_or(1).clamp(1, 255);
        p.blocksize = usize::try_from(self.blocksize).unwrap_or(0);
        p.splitmode = self.splitmode();
        p.use_dict = self.use_dict();
        p.nthreads = usize::try_from(self.tcomp).unwrap_or(1).max(1);
        p.filters = [None; 6];
        p.filters_meta = self.filters_meta;
        for i in 0..6 {
            p.filters[i] = Filter::from_id(self.filters[i], self.filters_meta[i]);
        }
        p
    }

    /// Encode the fixed 87 bytes (current edition).
    pub fn encode_fixed(&self) -> [u8; HEADER_FIXED_LEN] {
        let mut b = [0u8; HEADER_FIXED_LEN];
        b[0] = 0x9e;
        b[1] = 0xa8;
        b[2..10].copy_from_slice(MAGIC);
        b[10] = 0xd2;
        b[11..15].copy_from_slice(&self.header_len.to_be_bytes());
        b[15] = 0xcf;
        b[16..24].copy_from_slice(&self.frame_len.to_be_bytes());
        b[24] = 0xa4;
        b[25] = self.general_flags;
        b[26] = match self.kind {
            FrameKind::Contiguous => 0,
            FrameKind::Sparse => 1,
        };
        b[27] = self.codec_flags;
        b[28] = self.other_flags;
        b[29] = 0xd3;
        b[30..38].copy_from_slice(&self.nbytes.to_be_bytes());
        b[38] = 0xd3;
        b[39..47].copy_from_slice(&self.cbytes.to_be_bytes());
        b[47] = 0xd2;
        b[48..52].copy_from_slice(&self.typesize.to_be_bytes());
        b[52] = 0xd2;
        b[53..57].copy_from_slice(&self.blocksize.to_be_bytes());
        b[57] = 0xd2;
        b[58..62].copy_from_slice(&self.chunksize.to_be_bytes());
        b[62] = 0xd1;
        b[63..65].copy_from_slice(&self.tcomp.to_be_bytes());
        b[65] = 0xd1;
        b[66..68].copy_from_slice(&self.tdecomp.to_be_bytes());
        b[68] = if self.has_vlmeta { 0xc3 } else { 0xc2 };
        b[69] = 0xd8;
        b[70] = self.nfilters;
        b[71..77].copy_from_slice(&self.filters);
        b[77] = self.udcodec;
        b[78] = self.compcode_meta;
        b[79..85].copy_from_slice(&self.filters_meta);
        b[85] = self.other_flags2;
        b[86] = 0;
        b
    }

    /// Parse and check the fixed part at the start of `b` (at least 82 or
    /// 87 bytes, per the edition byte).
    ///
    /// # Errors
    /// [`Error::Truncated`] or [`Error::InvalidHeader`].
    pub fn parse_fixed(b: &[u8]) -> Result<FrameHeader> {
        if b.len() < HEADER_FIXED_LEN_V1 {
            return Err(Error::Truncated {
                what: "frame header",
                needed: HEADER_FIXED_LEN_V1,
                available: b.len(),
            });
        }
        let edition = match b[0] {
            0x9e => Edition::Current,
            0x9d => Edition::First,
            x => {
                return Err(invalid_header(format!(
                    "frame header starts with {x:#04x}, not 0x9e"
                )));
            }
        };
        let need = match edition {
            Edition::Current => HEADER_FIXED_LEN,
            Edition::First => HEADER_FIXED_LEN_V1,
        };
        if b.len() < need {
            return Err(Error::Truncated {
                what: "frame header",
                needed: need,
                available: b.len(),
            });
        }
        if b[1] != 0xa8 || &b[2..10] != MAGIC {
            return Err(invalid_header("frame magic is not b2frame"));
        }
        let marker = |o: usize, m: u8, what: &str| -> Result<()> {
            if b[o] == m {
                Ok(())
            } else {
                Err(invalid_header(format!(
                    "frame header: {what} marker at {o} is {:#04x}, not {m:#04x}",
                    b[o]
                )))
            }
        };
        marker(10, 0xd2, "header_len")?;
        marker(15, 0xcf, "frame_len")?;
        marker(24, 0xa4, "flags")?;
        marker(29, 0xd3, "nbytes")?;
        marker(38, 0xd3, "cbytes")?;
        marker(47, 0xd2, "typesize")?;
        let be32 = |o: usize| i32::from_be_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
        let be16 = |o: usize| i16::from_be_bytes([b[o], b[o + 1]]);
        let be64 = |o: usize| {
            let mut x = [0u8; 8];
            x.copy_from_slice(&b[o..o + 8]);
            x
        };
        let header_len = be32(11);
        let general_flags = b[25];
        let kind = match (edition, b[26]) {
            (Edition::First, _) | (_, 0) => FrameKind::Contiguous,
            (_, 1) => FrameKind::Sparse,
            (_, t) => return Err(invalid_header(format!("unknown frame type {t}"))),
        };
        let version = general_flags & 0x0f;
        match edition {
            Edition::Current if !(1..=3).contains(&version) => {
                return Err(Error::Unsupported(format!(
                    "frame format version {version}"
                )));
            }
            Edition::First if version != 1 => {
                return Err(Error::Unsupported(format!(
                    "first-edition frame with format version {version}"
                )));
            }
            _ => {}
        }
        if (general_flags >> 4) & 3 != 1 {
            return Err(Error::Unsupported(format!(
                "frame offsets of width code {} (only 64-bit exists)",
                (general_flags >> 4) & 3
            )));
        }
        // Offsets of the fields after typesize, per edition.
        let (o_bs, o_cs, o_tc, o_td, o_vl, o_ext) = match edition {
            Edition::Current => (Some(53), 58, 63, 66, 68, 69),
            Edition::First => (None, 53, 58, 61, 63, 64),
        };
        if let Some(o) = o_bs {
            marker(o - 1, 0xd2, "blocksize")?;
        }
        marker(o_cs - 1, 0xd2, "chunksize")?;
        marker(o_tc - 1, 0xd1, "tcomp")?;
        marker(o_td - 1, 0xd1, "tdecomp")?;
        marker(o_ext, 0xd8, "filter pipeline")?;
        let has_vlmeta = match b[o_vl] {
            0xc2 => false,
            0xc3 => true,
            x => {
                return Err(invalid_header(format!(
                    "frame header: bool marker {x:#04x}"
                )));
            }
        };
        let nfilters = b[o_ext + 1];
        if nfilters > 6 {
            return Err(invalid_header(format!(
                "{nfilters} filter slots (at most 6)"
            )));
        }
        let p = o_ext + 2;
        let mut filters = [0u8; 6];
        filters.copy_from_slice(&b[p..p + 6]);
        let mut filters_meta = [0u8; 6];
        filters_meta.copy_from_slice(&b[p + 8..p + 14]);
        let (udcodec, compcode_meta, other_flags2) = match edition {
            Edition::Current => (b[77], b[78], b[85]),
            Edition::First => (b[27] & 0x0f, 0, 0),
        };
        let h = FrameHeader {
            edition,
            header_len: u32::try_from(header_len)
                .map_err(|_| invalid_header(format!("negative header_len {header_len}")))?,
            frame_len: u64::from_be_bytes(be64(16)),
            general_flags,
            kind,
            codec_flags: b[27],
            other_flags: b[28],
            nbytes: i64::from_be_bytes(be64(30)),
            cbytes: i64::from_be_bytes(be64(39)),
            typesize: be32(48),
            blocksize: o_bs.map_or(0, be32),
            chunksize: be32(o_cs),
            tcomp: be16(o_tc),
            tdecomp: be16(o_td),
            has_vlmeta,
            nfilters,
            filters,
            udcodec,
            compcode_meta,
            filters_meta,
            other_flags2,
        };
        if (h.header_len as usize) < need {
            return Err(invalid_header(format!(
                "header_len {} < {need}",
                h.header_len
            )));
        }
        if h.frame_len < u64::from(h.header_len) {
            return Err(invalid_header(format!(
                "header_len {} > frame_len {}",
                h.header_len, h.frame_len
            )));
        }
        if h.typesize <= 0 {
            return Err(invalid_header(format!("typesize {}", h.typesize)));
        }
        if h.nbytes < 0 || h.cbytes < 0 {
            return Err(invalid_header("negative nbytes or cbytes"));
        }
        if h.blocksize < 0 {
            return Err(invalid_header(format!("blocksize {}", h.blocksize)));
        }
        if h.chunksize < -1 {
            return Err(invalid_header(format!("chunksize {}", h.chunksize)));
        }
        Ok(h)
    }

    fn fixed_len(&self) -> usize {
        match self.edition {
            Edition::Current => HEADER_FIXED_LEN,
            Edition::First => HEADER_FIXED_LEN_V1,
        }
    }
}

/// A fixed-size metalayer of the header: a name and opaque bytes
/// (python-blosc2 stores msgpack).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Metalayer {
    /// Name, shorter than 32 bytes.
    pub name: String,
    /// Content.
    pub content: Vec<u8>,
}

/// A variable-length metalayer of the trailer: the value is stored as a
/// compressed Blosc2 chunk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VlMetalayer {
    /// Name, shorter than 32 bytes.
    pub name: String,
    /// The stored chunk (decompress for the value).
    pub chunk: Vec<u8>,
}

impl VlMetalayer {
    /// The value: the chunk decompressed (up to [`decode_limit`] of its size).
    ///
    /// # Errors
    /// The chunk decoder's errors; [`Error::Corrupt`] over the limit.
    pub fn value(&self) -> Result<Vec<u8>> {
        let h = ChunkHeader::parse(&self.chunk)?;
        if h.cbytes != self.chunk.len() || h.nbytes > decode_limit(h.cbytes as u64) {
            return Err(corrupt(format!(
                "vlmetalayer {:?}: bad value chunk",
                self.name
            )));
        }
        crate::decompress(&self.chunk)
    }
}

/// Check a name for a metalayer or vlmetalayer.
pub(crate) fn check_name(name: &str) -> Result<()> {
    if name.is_empty() || name.len() >= MAX_NAME_LEN {
        return Err(invalid_param(format!(
            "metalayer name {name:?} must be 1..=31 bytes"
        )));
    }
    Ok(())
}

/// Where chunk *i* is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ChunkEntry {
    /// Stored: offset from `header_len` (cframe) or chunk file id (sframe).
    Stored(u64),
    /// Not stored: a zeros, NaN or uninit chunk.
    Special(SpecialValue),
}

impl ChunkEntry {
    /// Decode an index entry.
    ///
    /// # Errors
    /// [`Error::Corrupt`] for a negative value that is not a special code.
    pub fn from_raw(v: i64) -> Result<ChunkEntry> {
        if v >= 0 {
            return Ok(ChunkEntry::Stored(v as u64));
        }
        match v {
            SPECIAL_ZEROS => Ok(ChunkEntry::Special(SpecialValue::Zeros)),
            SPECIAL_NAN => Ok(ChunkEntry::Special(SpecialValue::Nan)),
            SPECIAL_UNINIT => Ok(ChunkEntry::Special(SpecialValue::Uninit)),
            _ => Err(corrupt(format!(
                "offsets index entry {v:#x} is not a special code"
            ))),
        }
    }
    /// The index entry value.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] for a repeated-value kind (never an offset) or
    /// an offset over `i64::MAX`.
    pub fn to_raw(self) -> Result<i64> {
        match self {
            ChunkEntry::Stored(o) => {
                i64::try_from(o).map_err(|_| invalid_param("chunk offset over i64::MAX"))
            }
            ChunkEntry::Special(SpecialValue::Zeros) => Ok(SPECIAL_ZEROS),
            ChunkEntry::Special(SpecialValue::Nan) => Ok(SPECIAL_NAN),
            ChunkEntry::Special(SpecialValue::Uninit) => Ok(SPECIAL_UNINIT),
            ChunkEntry::Special(SpecialValue::Value) => Err(invalid_param(
                "repeated-value chunks are stored, not index codes",
            )),
        }
    }
}

/// The decoded offsets index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Offsets {
    /// One entry per chunk.
    Explicit(Vec<i64>),
    /// Every entry the same (the repeated-value index C writes for
    /// `fill_special`); kept unexpanded.
    Repeated {
        /// The entry.
        value: i64,
        /// Number of entries.
        len: usize,
    },
}

impl Offsets {
    /// Number of entries.
    pub fn len(&self) -> usize {
        match self {
            Offsets::Explicit(v) => v.len(),
            Offsets::Repeated { len, .. } => *len,
        }
    }
    /// No entries.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Entry `i`.
    pub fn get(&self, i: usize) -> Option<i64> {
        match self {
            Offsets::Explicit(v) => v.get(i).copied(),
            Offsets::Repeated { value, len } => (i < *len).then_some(*value),
        }
    }
    /// All entries, expanded (bounded by [`MAX_NCHUNKS`]).
    pub fn to_vec(&self) -> Vec<i64> {
        match self {
            Offsets::Explicit(v) => v.clone(),
            Offsets::Repeated { value, len } => vec![*value; *len],
        }
    }
}

/// Where the offsets index chunk sits and what it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IndexInfo {
    /// Position from the frame start.
    pub pos: u64,
    /// Its compressed size.
    pub cbytes: u64,
    /// Special kind, when the index itself is a special chunk.
    pub special: Option<SpecialValue>,
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

fn read_vec(io: &mut dyn FrameIo, pos: u64, len: u64, what: &'static str) -> Result<Vec<u8>> {
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

/// A little cursor over a byte slice with checked reads.
struct Cur<'a> {
    b: &'a [u8],
    p: usize,
    what: &'static str,
}

impl<'a> Cur<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let end = self
            .p
            .checked_add(n)
            .filter(|&e| e <= self.b.len())
            .ok_or(Error::Truncated {
                what: self.what,
                needed: self.p.saturating_add(n),
                available: self.b.len(),
            })?;
        let s = &self.b[self.p..end];
        self.p = end;
        Ok(s)
    }
    fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }
    fn expect(&mut self, m: u8) -> Result<()> {
        let at = self.p;
        let x = self.u8()?;
        if x != m {
            return Err(corrupt(format!(
                "{}: marker {x:#04x} at {at}, expected {m:#04x}",
                self.what
            )));
        }
        Ok(())
    }
    fn be_u16(&mut self) -> Result<u16> {
        let s = self.take(2)?;
        Ok(u16::from_be_bytes([s[0], s[1]]))
    }
    fn be_i32(&mut self) -> Result<i32> {
        let s = self.take(4)?;
        Ok(i32::from_be_bytes([s[0], s[1], s[2], s[3]]))
    }
}

/// Parse a metalayer-style section: `93 cd idx de count {name d2 off}*
/// dc count {c6 len content}*`. `b` is the whole region the offsets point
/// into (from the frame or trailer start), `start` where the section begins.
fn parse_meta_section(
    b: &[u8],
    start: usize,
    max: usize,
    what: &'static str,
) -> Result<Vec<(String, Vec<u8>)>> {
    let mut c = Cur { b, p: start, what };
    c.expect(0x93)?;
    c.expect(0xcd)?;
    c.be_u16()?;
    c.expect(0xde)?;
    let n = usize::from(c.be_u16()?);
    if n > max {
        return Err(corrupt(format!("{what}: {n} entries (at most {max})")));
    }
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let m = c.u8()?;
        if !(0xa0..=0xbf).contains(&m) {
            return Err(corrupt(format!("{what}: name marker {m:#04x}")));
        }
        let name = c.take(usize::from(m & 0x1f))?;
        let name = String::from_utf8(name.to_vec())
            .map_err(|_| corrupt(format!("{what}: name is not UTF-8")))?;
        c.expect(0xd2)?;
        let off = c.be_i32()?;
        let off = usize::try_from(off)
            .ok()
            .filter(|&o| o < b.len())
            .ok_or_else(|| corrupt(format!("{what}: value offset {off} out of range")))?;
        let mut v = Cur { b, p: off, what };
        v.expect(0xc6)?;
        let s = v.take(4)?;
        let len = u32::from_be_bytes([s[0], s[1], s[2], s[3]]);
        if len > i32::MAX as u32 {
            return Err(corrupt(format!("{what}: value length {len}")));
        }
        let content = v.take(len as usize)?.to_vec();
        out.push((name, content));
    }
    Ok(out)
}

fn encode_meta_section(out: &mut Vec<u8>, entries: &[(&str, &[u8])], base: usize, rel: usize) {
    // base: where `out` index 0 sits relative to the offset origin.
    let start = out.len();
    out.push(0x93);
    out.extend_from_slice(&[0xcd, 0, 0]);
    out.push(0xde);
    out.extend_from_slice(&(entries.len() as u16).to_be_bytes());
    let mut slots = Vec::with_capacity(entries.len());
    for (name, _) in entries {
        out.push(0xa0 | name.len() as u8);
        out.extend_from_slice(name.as_bytes());
        out.push(0xd2);
        slots.push(out.len());
        out.extend_from_slice(&[0; 4]);
    }
    let idx = (out.len() - start - rel) as u16;
    out[start + 2..start + 4].copy_from_slice(&idx.to_be_bytes());
    out.push(0xdc);
    out.extend_from_slice(&(entries.len() as u16).to_be_bytes());
    for ((_, content), slot) in entries.iter().zip(slots) {
        let off = (base + out.len()) as i32;
        out[slot..slot + 4].copy_from_slice(&off.to_be_bytes());
        out.push(0xc6);
        out.extend_from_slice(&(content.len() as u32).to_be_bytes());
        out.extend_from_slice(content);
    }
}

/// Encode a current-edition header with its metalayers; sets `header_len`
/// (the caller's `frame_len` etc. are kept).
///
/// # Errors
/// [`Error::InvalidParam`] for more than 16 metalayers, bad names, or a
/// header over `i32::MAX` bytes.
pub fn encode_header(h: &mut FrameHeader, metalayers: &[Metalayer]) -> Result<Vec<u8>> {
    if metalayers.len() > MAX_METALAYERS {
        return Err(invalid_param("more than 16 metalayers"));
    }
    for m in metalayers {
        check_name(&m.name)?;
    }
    let entries: Vec<(&str, &[u8])> = metalayers
        .iter()
        .map(|m| (m.name.as_str(), m.content.as_slice()))
        .collect();
    let mut sec = Vec::new();
    encode_meta_section(&mut sec, &entries, HEADER_FIXED_LEN, 0);
    let total = HEADER_FIXED_LEN + sec.len();
    h.header_len = u32::try_from(total)
        .ok()
        .filter(|&l| l <= i32::MAX as u32)
        .ok_or_else(|| invalid_param("metalayers too large"))?;
    let mut out = h.encode_fixed().to_vec();
    out.extend_from_slice(&sec);
    Ok(out)
}

/// Encode a current-edition trailer with `vlmetalayers`, fingerprint type 0.
///
/// # Errors
/// [`Error::InvalidParam`] for too many vlmetalayers or bad names.
pub fn encode_trailer(vlmetalayers: &[VlMetalayer]) -> Result<Vec<u8>> {
    if vlmetalayers.len() > MAX_VLMETALAYERS {
        return Err(invalid_param("more than 8192 vlmetalayers"));
    }
    for m in vlmetalayers {
        check_name(&m.name)?;
    }
    let entries: Vec<(&str, &[u8])> = vlmetalayers
        .iter()
        .map(|m| (m.name.as_str(), m.chunk.as_slice()))
        .collect();
    let mut out = vec![0x94, 0x01];
    encode_meta_section(&mut out, &entries, 0, 1);
    let len = out.len() + 5 + 2 + 16;
    let len32 = u32::try_from(len)
        .ok()
        .filter(|&l| l <= i32::MAX as u32)
        .ok_or_else(|| invalid_param("vlmetalayers too large"))?;
    out.push(0xce);
    out.extend_from_slice(&len32.to_be_bytes());
    out.push(0xd8);
    out.push(0);
    out.extend_from_slice(&[0; 16]);
    Ok(out)
}

/// The parameters C-Blosc2 compresses the offsets index with on every
/// change (blosclz 5, shuffle, never split, 16 KiB blocks, typesize 8).
pub fn index_cparams() -> CParams {
    CParams::default()
        .codec(Codec::BloscLz)
        .clevel(5)
        .typesize(8)
        .splitmode(SplitMode::Never)
        .blocksize(16 * 1024)
        .nthreads(1)
}

/// Encode an offsets index chunk for `offsets`.
///
/// # Errors
/// The chunk encoder's errors (more than [`MAX_NCHUNKS`] entries).
pub fn encode_index(offsets: &[i64]) -> Result<Vec<u8>> {
    if offsets.len() > MAX_NCHUNKS {
        return Err(invalid_param("more than 268435455 chunks"));
    }
    let raw: Vec<u8> = offsets.iter().flat_map(|o| o.to_le_bytes()).collect();
    crate::compress(&raw, &index_cparams())
}

/// The repeated-value index chunk C writes for `fill_special`: `n` copies
/// of one special entry in a 40-byte chunk.
///
/// # Errors
/// [`Error::InvalidParam`] for `n` over [`MAX_NCHUNKS`].
pub fn encode_repeated_index(entry: i64, n: usize) -> Result<Vec<u8>> {
    if n > MAX_NCHUNKS {
        return Err(invalid_param("more than 268435455 chunks"));
    }
    special_chunk(
        &CParams::default().typesize(8),
        n * 8,
        SpecialValue::Value,
        &entry.to_le_bytes(),
    )
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

        let mut f = Frame {
            header,
            metalayers,
            vlmetalayers,
            usermeta,
            trailer_len: tlen,
            fingerprint_type,
            fingerprint,
            offsets: Offsets::Explicit(Vec::new()),
            index: None,
        };
        f.read_index(io, tstart)?;
        Ok(f)
    }

    fn read_index(&mut self, io: &mut dyn FrameIo, tstart: u64) -> Result<()> {
        let h = &self.header;
        let hlen = u64::from(h.header_len);
        let cbytes = h.cbytes as u64;
        // The chunks section lies between the header and the trailer, with
        // or without chunks: writers append at its end.
        let ipos = match h.kind {
            FrameKind::Contiguous => hlen
                .checked_add(cbytes)
                .filter(|&p| p <= tstart)
                .ok_or_else(|| corrupt("cbytes runs past the trailer"))?,
            FrameKind::Sparse => hlen,
        };
        if h.nbytes == 0 {
            return Ok(());
        }
        let span = tstart - ipos;
        if span < 32 {
            return Err(corrupt(format!(
                "offsets index: {span} bytes, less than a chunk header"
            )));
        }
        let ibytes = read_vec(io, ipos, span, "offsets index")?;
        let ih = ChunkHeader::parse(&ibytes)?;
        if ih.is_lazy() {
            return Err(corrupt("offsets index is a lazy chunk"));
        }
        let nchunks = match h.chunksize {
            cs if cs > 0 => {
                let n = (h.nbytes as u64).div_ceil(cs as u64);
                usize::try_from(n)
                    .ok()
                    .filter(|&n| n <= MAX_NCHUNKS)
                    .ok_or_else(|| corrupt(format!("{n} chunks")))?
            }
            0 => {
                if ih.nbytes % 8 != 0 {
                    return Err(corrupt("offsets index size is not a multiple of 8"));
                }
                ih.nbytes / 8
            }
            _ => return Err(corrupt("chunksize −1 with nbytes > 0")),
        };
        if nchunks > MAX_NCHUNKS {
            return Err(corrupt(format!("{nchunks} chunks")));
        }
        if ih.nbytes != nchunks * 8 {
            return Err(corrupt(format!(
                "offsets index holds {} bytes, {nchunks} chunks need {}",
                ih.nbytes,
                nchunks * 8
            )));
        }
        let special = ih.special();
        let offsets = match special {
            Some(SpecialValue::Value) => {
                if ih.cbytes != 40 || ih.typesize != 8 {
                    return Err(corrupt("repeated-value offsets index is not 8-byte"));
                }
                let mut v = [0u8; 8];
                v.copy_from_slice(&ibytes[32..40]);
                Offsets::Repeated {
                    value: i64::from_le_bytes(v),
                    len: nchunks,
                }
            }
            Some(SpecialValue::Zeros) => Offsets::Repeated {
                value: 0,
                len: nchunks,
            },
            Some(k) => return Err(corrupt(format!("offsets index is a {k:?} chunk"))),
            None => {
                let limit = decode_limit(h.frame_len);
                if ih.nbytes > limit {
                    return Err(corrupt(format!(
                        "offsets index of {} bytes exceeds the decode limit {limit}",
                        ih.nbytes
                    )));
                }
                let raw = crate::decompress(&ibytes[..ih.cbytes])?;
                if raw.len() != nchunks * 8 {
                    return Err(corrupt("offsets index decodes to the wrong size"));
                }
                Offsets::Explicit(
                    raw.chunks_exact(8)
                        .map(|c| {
                            let mut v = [0u8; 8];
                            v.copy_from_slice(c);
                            i64::from_le_bytes(v)
                        })
                        .collect(),
                )
            }
        };
        // Check every distinct entry.
        let check = |v: i64| -> Result<()> {
            match ChunkEntry::from_raw(v)? {
                ChunkEntry::Special(_) if h.chunksize <= 0 => {
                    Err(corrupt("special offset in a frame of variable-size chunks"))
                }
                ChunkEntry::Special(_) => Ok(()),
                ChunkEntry::Stored(o) => match h.kind {
                    FrameKind::Contiguous if cbytes < 32 || o > cbytes - 32 => {
                        Err(corrupt(format!("chunk offset {o} outside cbytes {cbytes}")))
                    }
                    FrameKind::Sparse if o > u64::from(u32::MAX) => {
                        Err(corrupt(format!("chunk id {o} over 0xFFFFFFFF")))
                    }
                    _ => Ok(()),
                },
            }
        };
        match &offsets {
            Offsets::Explicit(v) => v.iter().try_for_each(|&o| check(o))?,
            Offsets::Repeated { value, len } if *len > 0 => check(*value)?,
            Offsets::Repeated { .. } => {}
        }
        self.offsets = offsets;
        self.index = Some(IndexInfo {
            pos: ipos,
            cbytes: ih.cbytes as u64,
            special,
        });
        Ok(())
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
        let v = self
            .offsets
            .get(i)
            .ok_or_else(|| invalid_param(format!("chunk {i} of {}", self.nchunks())))?;
        ChunkEntry::from_raw(v)
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

/// Check a stored chunk of slot `i` of a frame of `nchunks` chunks against
/// its header: whole (`cbytes` is the stored length), not lazy, no larger
/// than the frame, and of the size a fixed `chunksize` implies.
///
/// # Errors
/// [`Error::Corrupt`] on mismatch; the chunk header's errors.
pub(crate) fn check_stored_chunk(
    h: &FrameHeader,
    nchunks: usize,
    bytes: &[u8],
    i: usize,
) -> Result<()> {
    let ch = ChunkHeader::parse(bytes)?;
    if ch.cbytes != bytes.len() {
        return Err(corrupt(format!(
            "chunk {i}: header cbytes {} but {} bytes stored",
            ch.cbytes,
            bytes.len()
        )));
    }
    if ch.is_lazy() {
        return Err(corrupt(format!("chunk {i} is a lazy chunk")));
    }
    if ch.nbytes as u64 > h.nbytes as u64 {
        return Err(corrupt(format!("chunk {i} is larger than the frame")));
    }
    if let Some(n) = expected_nbytes(h.nbytes, h.chunksize, nchunks, i)
        && ch.nbytes != n
    {
        return Err(corrupt(format!(
            "chunk {i} holds {} bytes, the frame expects {n}",
            ch.nbytes
        )));
    }
    Ok(())
}

/// Size chunk `i` of `nchunks` must have for a fixed `chunksize`.
pub(crate) fn expected_nbytes(
    nbytes: i64,
    chunksize: i32,
    nchunks: usize,
    i: usize,
) -> Option<usize> {
    if chunksize <= 0 || i >= nchunks {
        return None;
    }
    let cs = chunksize as u64;
    let nb = nbytes as u64;
    if i + 1 < nchunks {
        Some(cs as usize)
    } else {
        let r = nb - cs * (nchunks as u64 - 1);
        usize::try_from(r).ok()
    }
}

/// A header-only special chunk of `n` bytes with the frame's type size
/// and block size.
pub(crate) fn materialize_special(
    h: &FrameHeader,
    n: usize,
    kind: SpecialValue,
) -> Result<Vec<u8>> {
    let mut p = CParams {
        typesize: usize::try_from(h.typesize).unwrap_or(1).clamp(1, 255),
        ..CParams::default()
    };
    if h.typesize > 255 {
        p.typesize = 1;
    }
    if kind == SpecialValue::Nan && !n.is_multiple_of(p.typesize) {
        return Err(corrupt("NaN chunk size is not a whole number of items"));
    }
    if kind == SpecialValue::Uninit && !n.is_multiple_of(p.typesize) {
        p.typesize = 1;
    }
    p.blocksize = usize::try_from(h.blocksize).unwrap_or(0).min(n);
    special_chunk(&p, n, kind, &[]).map_err(|e| corrupt(format!("special chunk: {e}")))
}
