//! The chunk header: 16 bytes (Blosc1 layout) plus the 32-byte extension
//! Blosc2 adds. Every field is checked against the buffer before use.

use crate::error::{Error, Result, invalid_header};
use crate::params::MAX_BLOCKSIZE;

/// Length of the Blosc1 header.
pub const MIN_HEADER_LEN: usize = 16;
/// Length of the Blosc2 extended header.
pub const EXTENDED_HEADER_LEN: usize = 32;

/// Header flag bits (byte 2).
pub(crate) mod flags {
    pub const SHUFFLE: u8 = 0x01;
    pub const MEMCPYED: u8 = 0x02;
    pub const BITSHUFFLE: u8 = 0x04;
    pub const DELTA: u8 = 0x08;
    pub const DONT_SPLIT: u8 = 0x10;
    /// Both shuffle bits set: a 32-byte extended header follows.
    pub const EXTENDED: u8 = SHUFFLE | BITSHUFFLE;
}

/// `blosc2_flags` bits (byte 31).
pub(crate) mod bflags {
    pub const USE_DICT: u8 = 0x01;
    pub const LAZY: u8 = 0x08;
    /// Bits 4..=6: the special value a chunk stands for (0: none).
    pub const SPECIAL: u8 = 0x70;
    pub const INSTRUMENTED: u8 = 0x80;
}

/// `blosc2_flags2` bits (byte 30): the only one defined.
const VL_BLOCKS: u8 = 0x01;

/// What a special chunk stands for (`blosc2_flags` bits 4..6).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SpecialValue {
    /// Every byte is zero.
    Zeros,
    /// Every element is a quiet NaN (f32 or f64).
    Nan,
    /// One value, stored after the header, repeated.
    Value,
    /// Content not defined (decoded as zeros here).
    Uninit,
}

impl SpecialValue {
    pub(crate) fn code(self) -> u8 {
        match self {
            SpecialValue::Zeros => 1,
            SpecialValue::Nan => 2,
            SpecialValue::Value => 3,
            SpecialValue::Uninit => 4,
        }
    }

    /// Its lowercase name, as C-Blosc2's docs and `oxiblosc info` spell it:
    /// `zeros`, `nan`, `value`, `uninit`.
    ///
    /// ```
    /// assert_eq!(oxiblosc::SpecialValue::Nan.name(), "nan");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            SpecialValue::Zeros => "zeros",
            SpecialValue::Nan => "nan",
            SpecialValue::Value => "value",
            SpecialValue::Uninit => "uninit",
        }
    }
}

/// The first 16 bytes of a chunk read on their own, before the rest of the
/// chunk is: enough to know how long the whole chunk is (`cbytes`) when
/// chunks are read one after another from a file or a stream. Nothing here
/// is checked beyond its presence; [`ChunkHeader::parse`] checks the whole
/// chunk once it is read.
///
/// ```
/// use oxiblosc::chunk::header::ChunkPrefix;
/// let chunk = oxiblosc::compress(&[7u8; 1000], &oxiblosc::CParams::default()).unwrap();
/// let p = ChunkPrefix::read(&chunk).unwrap();
/// assert_eq!(p.chunk_len(), Some(chunk.len()));
/// assert!(p.is_plausible());
/// assert_eq!(ChunkPrefix::read(&chunk[..15]), None);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChunkPrefix {
    /// Chunk format version (byte 0).
    pub version: u8,
    /// Item size (byte 3).
    pub typesize: u8,
    /// Uncompressed size as stored (bytes 4..8), possibly negative.
    pub nbytes: i32,
    /// Block size as stored (bytes 8..12), possibly negative.
    pub blocksize: i32,
    /// Whole chunk size as stored (bytes 12..16), possibly negative.
    pub cbytes: i32,
}

impl ChunkPrefix {
    /// The fields of the first [`MIN_HEADER_LEN`] bytes of `head`; `None`
    /// when `head` is shorter.
    pub fn read(head: &[u8]) -> Option<ChunkPrefix> {
        let head = head.get(..MIN_HEADER_LEN)?;
        let i32_at =
            |o: usize| i32::from_le_bytes([head[o], head[o + 1], head[o + 2], head[o + 3]]);
        Some(ChunkPrefix {
            version: head[0],
            typesize: head[3],
            nbytes: i32_at(4),
            blocksize: i32_at(8),
            cbytes: i32_at(12),
        })
    }

    /// How many bytes the whole chunk takes, header included: `cbytes`,
    /// when it is at least a header long; `None` otherwise (no chunk).
    pub fn chunk_len(&self) -> Option<usize> {
        usize::try_from(self.cbytes)
            .ok()
            .filter(|&c| c >= MIN_HEADER_LEN)
    }

    /// Whether these bytes look like the start of a chunk at all: a known
    /// format version (1..=6), an item size, a non-negative `nbytes` and a
    /// positive block size. A reader uses it to tell a cut chunk (plausible,
    /// but `cbytes` runs past the end) from bytes that are no chunk.
    pub fn is_plausible(&self) -> bool {
        (1..=6).contains(&self.version)
            && self.typesize != 0
            && self.nbytes >= 0
            && self.blocksize > 0
    }
}

/// A parsed chunk header. Fields are as stored; the accessor methods give
/// what they mean.
#[derive(Clone, Debug, PartialEq, Eq)]
// `repr(C)`, the fields in their stored order: the parser fills each run of
// bytes with one wide store, which the decoder's wide loads of the header
// read back. Filled byte by byte, every such load waited for the narrow
// stores to retire (a store-forwarding stall, several per chunk decoded:
// with `copy_literal`, a 4 KiB chunk 250 -> 234 ns, perf/README.md
// session 21).
#[repr(C)]
pub struct ChunkHeader {
    /// Chunk format version (2 for C-Blosc 1.x, 5 for C-Blosc2, 6 for VL blocks).
    pub version: u8,
    /// Codec format version.
    pub versionlz: u8,
    /// Flag byte.
    pub flags: u8,
    /// Type size as stored (1..=255).
    pub typesize: u8,
    /// Uncompressed size.
    pub nbytes: usize,
    /// Block size (VL-block chunks: the number of blocks).
    pub blocksize: usize,
    /// Size of the whole chunk.
    pub cbytes: usize,
    /// Filter ids per slot (derived from the flags for 16-byte headers).
    pub filters: [u8; 6],
    /// Codec id (byte 22).
    pub udcodec: u8,
    /// Codec meta (byte 23).
    pub compcode_meta: u8,
    /// Meta byte per filter slot.
    pub filters_meta: [u8; 6],
    /// `blosc2_flags2` (byte 30).
    pub blosc2_flags2: u8,
    /// `blosc2_flags` (byte 31).
    pub blosc2_flags: u8,
}

/// The error for the header's size word at byte `offset` (4, 8 or 12)
/// holding the negative `v`.
#[cold]
fn negative_field(offset: usize, v: i32) -> Error {
    let name = match offset {
        4 => "nbytes",
        8 => "blocksize",
        _ => "cbytes",
    };
    invalid_header(format!("{name} is negative ({v})"))
}

/// The special kind in `blosc2_flags` bits 4..=6 (only extended headers
/// have them).
fn special_of(extended: bool, blosc2_flags: u8) -> Option<SpecialValue> {
    if !extended {
        return None;
    }
    match (blosc2_flags >> 4) & 7 {
        1 => Some(SpecialValue::Zeros),
        2 => Some(SpecialValue::Nan),
        3 => Some(SpecialValue::Value),
        4 => Some(SpecialValue::Uninit),
        _ => None,
    }
}

impl ChunkHeader {
    /// Whether the 32-byte extended header is present.
    pub fn is_extended(&self) -> bool {
        self.flags & flags::EXTENDED == flags::EXTENDED
    }
    /// Header length: 16 or 32.
    pub fn header_len(&self) -> usize {
        if self.is_extended() {
            EXTENDED_HEADER_LEN
        } else {
            MIN_HEADER_LEN
        }
    }
    /// The payload is the raw input (no blocks, no codec).
    pub fn is_memcpyed(&self) -> bool {
        self.flags & flags::MEMCPYED != 0
    }
    /// Each block is one stream (no split per byte).
    pub fn dont_split(&self) -> bool {
        self.flags & flags::DONT_SPLIT != 0
    }
    /// Codec format (`flags >> 5`).
    pub fn codec_format(&self) -> u8 {
        self.flags >> 5
    }
    /// Special chunk kind, if any.
    pub fn special(&self) -> Option<SpecialValue> {
        special_of(self.is_extended(), self.blosc2_flags)
    }
    /// The codec that wrote the streams, when this crate knows it: the one
    /// with the header's codec format, or, for format 6 (a user codec), the
    /// one whose id is in the extended header. LZ4 and LZ4HC share format
    /// 1, which reads as [`Codec::Lz4`](crate::Codec::Lz4) (its decoder
    /// reads both).
    ///
    /// ```
    /// use oxiblosc::{CParams, ChunkHeader, Codec};
    /// let p = CParams::default().codec(Codec::Zstd);
    /// let chunk = oxiblosc::compress(&vec![1u8; 4096], &p).unwrap();
    /// assert_eq!(ChunkHeader::parse(&chunk).unwrap().codec(), Some(Codec::Zstd));
    /// ```
    pub fn codec(&self) -> Option<crate::params::Codec> {
        use crate::params::{Codec, FORMAT_UDCODEC};
        match self.codec_format() {
            FORMAT_UDCODEC => Codec::from_id(self.udcodec),
            f => Codec::ALL.into_iter().find(|c| c.format() == f),
        }
    }
    /// A dictionary precedes the streams.
    pub fn use_dict(&self) -> bool {
        self.is_extended() && self.blosc2_flags & bflags::USE_DICT != 0 && !self.is_memcpyed()
    }
    /// A lazy chunk (header + bstarts + trailer, blocks left in a frame).
    pub fn is_lazy(&self) -> bool {
        self.is_extended() && self.blosc2_flags & bflags::LAZY != 0
    }
    /// Blocks of individual sizes (format version 6).
    pub fn is_vlblocks(&self) -> bool {
        self.is_extended() && self.blosc2_flags2 & VL_BLOCKS != 0
    }
    /// Number of blocks.
    pub fn nblocks(&self) -> usize {
        if self.is_vlblocks() {
            self.blocksize
        } else if self.nbytes == 0 {
            0
        } else if self.nbytes <= self.blocksize {
            // One block, no division (a small chunk's decode asks first).
            1
        } else {
            self.nbytes.div_ceil(self.blocksize)
        }
    }
    /// Size of block `i` (fixed-size blocks).
    pub fn block_len(&self, i: usize) -> usize {
        let start = i * self.blocksize;
        self.blocksize.min(self.nbytes - start)
    }
    /// Size of the bytes after the last whole block (0 if none).
    pub fn leftover(&self) -> usize {
        if self.blocksize == 0 {
            0
        } else {
            self.nbytes % self.blocksize
        }
    }

    /// Parse and check the header at the start of `src`.
    ///
    /// Checks what C-Blosc2 checks (CHUNK-NOTES §1.5) and a little more: the
    /// buffer holds the header, block size and type size are in range,
    /// memcpyed chunks are `nbytes + header` long, special and VL chunks are
    /// well formed, and `cbytes` fits the buffer (except for lazy chunks,
    /// whose `cbytes` is the size of the chunk they stand for).
    ///
    /// # Errors
    /// [`Error::Truncated`] or [`Error::InvalidHeader`].
    pub fn parse(src: &[u8]) -> Result<ChunkHeader> {
        Self::parse_inline(src)
    }

    /// [`ChunkHeader::parse`], inlined into the chunk decoder.
    #[inline(always)]
    pub(crate) fn parse_inline(src: &[u8]) -> Result<ChunkHeader> {
        Self::parse_with_tail(src).map(|(h, _)| h)
    }

    /// [`ChunkHeader::parse_inline`], and bytes 16..32 of the header as the
    /// fields `filters` to `blosc2_flags` hold them, as one value: the chunk
    /// decoder takes its filter pipeline from it in registers, where reading
    /// the header's fields back from the stack right after they were stored
    /// stalled on store forwarding (perf/README.md, session 22).
    #[inline(always)]
    pub(crate) fn parse_with_tail(src: &[u8]) -> Result<(ChunkHeader, u128)> {
        Self::parse_head_of(src, src.len())
    }

    /// [`ChunkHeader::parse_with_tail`] of a chunk `len` bytes long of
    /// which `src` holds the start (at least its header): the same checks,
    /// `cbytes` against `len`. Lets a chunk be measured and checked from
    /// its header without reading it whole.
    #[inline(always)]
    pub(crate) fn parse_head_of(src: &[u8], len: usize) -> Result<(ChunkHeader, u128)> {
        if src.len() < MIN_HEADER_LEN {
            return Err(Error::Truncated {
                what: "chunk header",
                needed: MIN_HEADER_LEN,
                available: src.len(),
            });
        }
        let i32_at = |o: usize| i32::from_le_bytes(src[o..o + 4].try_into().unwrap());
        // The field's name is worked out on the error path only: passed in,
        // it was stored to the stack for every field read.
        let nonneg = |o: usize| -> Result<usize> {
            let v = i32_at(o);
            usize::try_from(v).map_err(|_| negative_field(o, v))
        };
        // Every field is checked as a local and the header is built once at
        // the end: building it field by field and then moving it out made the
        // move's wide loads wait on the narrow stores (a store-forwarding
        // stall that cost a small getitem about 10 ns).
        let head = u32::from_le_bytes(src[..4].try_into().unwrap());
        let [version, versionlz, flags, typesize] = head.to_le_bytes();
        let nbytes = nonneg(4)?;
        let mut blocksize = nonneg(8)?;
        let cbytes = nonneg(12)?;
        if version == 0 {
            return Err(invalid_header("format version 0"));
        }
        let extended = flags & flags::EXTENDED == flags::EXTENDED;
        // Bytes 16..32 as stored (filters, codec id and meta, filter metas,
        // the two Blosc2 flag bytes), as one value: see the struct's layout.
        let tail: u128 = if extended {
            if src.len() < EXTENDED_HEADER_LEN {
                return Err(Error::Truncated {
                    what: "extended chunk header",
                    needed: EXTENDED_HEADER_LEN,
                    available: src.len(),
                });
            }
            let mut tail = u128::from_le_bytes(src[16..32].try_into().unwrap());
            if version == 3 {
                // Blosc2 alpha left slot 5 uninitialised (filter and meta).
                tail &= !((0xFF << 40) | (0xFF << 104));
            }
            let [.., flags2, bflags] = tail.to_le_bytes();
            if flags2 & !VL_BLOCKS != 0 {
                return Err(invalid_header(format!(
                    "unknown blosc2_flags2 bits {flags2:#04x}"
                )));
            }
            if bflags & bflags::INSTRUMENTED != 0 {
                return Err(Error::Unsupported(
                    "instrumented chunk (its streams hold timings, not data)".into(),
                ));
            }
            let special = (bflags >> 4) & 7;
            if special > 4 {
                return Err(invalid_header(format!("special chunk type {special}")));
            }
            tail
        } else {
            // Blosc1 header: the filters are implied by the flags, the codec
            // by the flags' top bits.
            let mut t = [0u8; 16];
            if flags & flags::SHUFFLE != 0 && typesize > 1 {
                t[5] = 1;
            }
            if flags & flags::BITSHUFFLE != 0 {
                t[5] = 2;
            }
            if flags & flags::DELTA != 0 {
                t[4] = 3;
            }
            t[6] = flags >> 5;
            u128::from_le_bytes(t)
        };
        let t = tail.to_le_bytes();
        let (udcodec, compcode_meta, blosc2_flags2, blosc2_flags) = (t[6], t[7], t[14], t[15]);
        let hlen = if extended {
            EXTENDED_HEADER_LEN
        } else {
            MIN_HEADER_LEN
        };
        let special = special_of(extended, blosc2_flags);
        let memcpyed = flags & flags::MEMCPYED != 0;
        if cbytes < hlen {
            return Err(invalid_header(format!(
                "cbytes {cbytes} is smaller than the {hlen}-byte header"
            )));
        }
        if typesize == 0 {
            return Err(invalid_header("typesize 0"));
        }
        if blocksize == 0 || blocksize > MAX_BLOCKSIZE {
            return Err(invalid_header(format!(
                "blocksize {blocksize} is not in 1..={MAX_BLOCKSIZE}"
            )));
        }
        if extended && blosc2_flags2 & VL_BLOCKS != 0 {
            if memcpyed || special.is_some() {
                return Err(invalid_header(
                    "VL-block chunk cannot be memcpyed or special",
                ));
            }
        } else if nbytes > 0 && blocksize > nbytes {
            blocksize = nbytes;
        }
        if memcpyed && special.is_none() && cbytes != nbytes + hlen {
            return Err(invalid_header(format!(
                "memcpyed chunk has cbytes {cbytes} but nbytes {nbytes} + header {hlen}"
            )));
        }
        if let Some(sp) = special {
            let ts = typesize as usize;
            match sp {
                SpecialValue::Nan => {
                    if ts != 4 && ts != 8 {
                        return Err(invalid_header(format!("NaN chunk with typesize {ts}")));
                    }
                    if !nbytes.is_multiple_of(ts) {
                        return Err(invalid_header(
                            "NaN chunk nbytes not a multiple of typesize",
                        ));
                    }
                }
                SpecialValue::Value => {
                    let vts = cbytes - hlen;
                    if vts == 0 || (nbytes > 0 && (vts > nbytes || !nbytes.is_multiple_of(vts))) {
                        return Err(invalid_header(format!(
                            "repeated-value chunk: value of {vts} bytes does not divide nbytes {nbytes}"
                        )));
                    }
                }
                SpecialValue::Uninit if !nbytes.is_multiple_of(ts) => {
                    return Err(invalid_header(
                        "uninit chunk nbytes not a multiple of typesize",
                    ));
                }
                _ => {}
            }
        }
        let lazy = extended && blosc2_flags & bflags::LAZY != 0;
        if !lazy && cbytes > len {
            return Err(Error::Truncated {
                what: "chunk (cbytes)",
                needed: cbytes,
                available: len,
            });
        }
        let h = ChunkHeader {
            version,
            versionlz,
            flags,
            typesize,
            nbytes,
            blocksize,
            cbytes,
            filters: t[..6].try_into().unwrap(),
            udcodec,
            compcode_meta,
            filters_meta: t[8..14].try_into().unwrap(),
            blosc2_flags2,
            blosc2_flags,
        };
        Ok((h, tail))
    }

    /// The items of a memcpyed chunk, stored as they are after its header:
    /// `Some((items, typesize))` exactly when [`ChunkHeader::parse`] accepts
    /// `src` and the chunk is memcpyed, not special, not lazy and not of
    /// variable-size blocks; `items` is then `src[header_len..cbytes]`
    /// (`nbytes` long) and `typesize` is at least 1.
    ///
    /// A getitem of a few items from such a chunk is a copy; this reads only
    /// the fields that place them, without building a [`ChunkHeader`] (what
    /// made a 4 KiB getitem of a memcpyed chunk 0.88x of C-Blosc2's speed
    /// through the C ABI). Any other chunk gives `None`: call
    /// [`ChunkHeader::parse`] for it and for its error.
    ///
    /// ```
    /// let data: Vec<u8> = (0..64u8).collect();
    /// let p = oxiblosc::CParams::default().clevel(0).typesize(4);
    /// let chunk = oxiblosc::compress(&data, &p).unwrap();
    /// let (items, typesize) = oxiblosc::ChunkHeader::memcpyed_items(&chunk).unwrap();
    /// assert_eq!((items, typesize), (&data[..], 4));
    /// ```
    #[inline]
    pub fn memcpyed_items(src: &[u8]) -> Option<(&[u8], usize)> {
        let header = src.get(..MIN_HEADER_LEN)?;
        let (version, flags, typesize) = (header[0], header[2], header[3]);
        let i32_at = |o: usize| i32::from_le_bytes([src[o], src[o + 1], src[o + 2], src[o + 3]]);
        let nbytes = usize::try_from(i32_at(4)).ok()?;
        let blocksize = usize::try_from(i32_at(8)).ok()?;
        let cbytes = usize::try_from(i32_at(12)).ok()?;
        if version == 0
            || flags & flags::MEMCPYED == 0
            || typesize == 0
            || blocksize == 0
            || blocksize > MAX_BLOCKSIZE
        {
            return None;
        }
        let hlen = if flags & flags::EXTENDED == flags::EXTENDED {
            let ext = src.get(MIN_HEADER_LEN..EXTENDED_HEADER_LEN)?;
            // blosc2_flags2: none (VL blocks cannot be memcpyed, other bits
            // are unknown); blosc2_flags: not instrumented, special or lazy.
            let (flags2, bflags) = (ext[14], ext[15]);
            if flags2 != 0 || bflags & (bflags::INSTRUMENTED | bflags::SPECIAL | bflags::LAZY) != 0
            {
                return None;
            }
            EXTENDED_HEADER_LEN
        } else {
            MIN_HEADER_LEN
        };
        if cbytes != nbytes + hlen {
            return None;
        }
        Some((src.get(hlen..cbytes)?, usize::from(typesize)))
    }

    /// Write the header (16 or 32 bytes, per [`ChunkHeader::is_extended`]).
    pub(crate) fn write(&self, dst: &mut [u8]) {
        dst[0] = self.version;
        dst[1] = self.versionlz;
        dst[2] = self.flags;
        dst[3] = self.typesize;
        dst[4..8].copy_from_slice(&(self.nbytes as i32).to_le_bytes());
        dst[8..12].copy_from_slice(&(self.blocksize as i32).to_le_bytes());
        dst[12..16].copy_from_slice(&(self.cbytes as i32).to_le_bytes());
        if self.is_extended() {
            dst[16..22].copy_from_slice(&self.filters);
            dst[22] = self.udcodec;
            dst[23] = self.compcode_meta;
            dst[24..30].copy_from_slice(&self.filters_meta);
            dst[30] = self.blosc2_flags2;
            dst[31] = self.blosc2_flags;
        }
    }
}

/// Sizes of a chunk from its header alone: `(nbytes, cbytes, blocksize)`.
///
/// # Errors
/// As [`ChunkHeader::parse`].
pub fn cbuffer_sizes(chunk: &[u8]) -> Result<(usize, usize, usize)> {
    let h = ChunkHeader::parse(chunk)?;
    Ok((h.nbytes, h.cbytes, h.blocksize))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CParams, ChunkFormat, compress};

    /// Every field comes from its own bytes (the parser reads the header
    /// as two wide values): an extended header of distinct bytes, with the
    /// Blosc2 alpha's slot 5 cleared for version 3 only, and Blosc1 headers
    /// whose filters and codec come from the flags.
    #[test]
    fn parse_reads_every_field_where_it_is_stored() {
        for version in [3u8, 4, 5] {
            let mut b = vec![0u8; 64];
            b[..4].copy_from_slice(&[version, 9, flags::EXTENDED, 4]);
            b[4..8].copy_from_slice(&32i32.to_le_bytes());
            b[8..12].copy_from_slice(&32i32.to_le_bytes());
            b[12..16].copy_from_slice(&64i32.to_le_bytes());
            for (i, v) in b[16..30].iter_mut().enumerate() {
                *v = 0x40 + i as u8;
            }
            b[30] = VL_BLOCKS;
            b[31] = 0x03;
            let h = ChunkHeader::parse(&b).unwrap();
            let slot5 = |v: u8| if version == 3 { 0 } else { v };
            assert_eq!(
                (h.version, h.versionlz, h.flags, h.typesize),
                (version, 9, 5, 4)
            );
            assert_eq!((h.nbytes, h.blocksize, h.cbytes), (32, 32, 64));
            assert_eq!(h.filters, [0x40, 0x41, 0x42, 0x43, 0x44, slot5(0x45)]);
            assert_eq!((h.udcodec, h.compcode_meta), (0x46, 0x47));
            assert_eq!(h.filters_meta, [0x48, 0x49, 0x4a, 0x4b, 0x4c, slot5(0x4d)]);
            assert_eq!((h.blosc2_flags2, h.blosc2_flags), (VL_BLOCKS, 0x03));
            let mut again = vec![0u8; 64];
            h.write(&mut again);
            assert_eq!(ChunkHeader::parse(&again).unwrap(), h);
        }
        // Blosc1: shuffle (typesize > 1), bitshuffle, delta, codec bits.
        for (flags, typesize, filters) in [
            (flags::SHUFFLE, 4u8, [0, 0, 0, 0, 0, 1]),
            (flags::SHUFFLE, 1, [0; 6]),
            (flags::BITSHUFFLE, 1, [0, 0, 0, 0, 0, 2]),
            (flags::SHUFFLE | flags::DELTA, 8, [0, 0, 0, 0, 3, 1]),
        ] {
            for codec in 0..8u8 {
                let mut b = vec![0u8; 48];
                b[..4].copy_from_slice(&[2, 1, flags | codec << 5, typesize]);
                b[4..8].copy_from_slice(&32i32.to_le_bytes());
                b[8..12].copy_from_slice(&32i32.to_le_bytes());
                b[12..16].copy_from_slice(&48i32.to_le_bytes());
                let h = ChunkHeader::parse(&b).unwrap();
                assert_eq!(h.filters, filters, "flags {flags:#x} typesize {typesize}");
                assert_eq!(h.filters_meta, [0; 6]);
                assert_eq!(h.udcodec, codec);
                assert_eq!(
                    (h.compcode_meta, h.blosc2_flags2, h.blosc2_flags),
                    (0, 0, 0)
                );
                assert_eq!((h.version, h.versionlz, h.typesize), (2, 1, typesize));
            }
        }
    }

    /// What [`ChunkHeader::memcpyed_items`] must give: parse's verdict and
    /// the items it places.
    fn by_parse(src: &[u8]) -> Option<(&[u8], usize)> {
        let h = ChunkHeader::parse(src).ok()?;
        if !h.is_memcpyed() || h.special().is_some() || h.is_lazy() || h.is_vlblocks() {
            return None;
        }
        Some((&src[h.header_len()..h.cbytes], usize::from(h.typesize)))
    }

    /// A negative `nbytes`, `blocksize` or `cbytes` is refused, and the error
    /// names the field.
    #[test]
    fn a_negative_size_word_is_named_in_the_error() {
        for (offset, name) in [(4, "nbytes"), (8, "blocksize"), (12, "cbytes")] {
            let mut b = vec![0u8; 32];
            b[..4].copy_from_slice(&[2, 1, 0, 4]);
            for o in [4, 8, 12] {
                b[o..o + 4].copy_from_slice(&32i32.to_le_bytes());
            }
            b[offset..offset + 4].copy_from_slice(&(-7i32).to_le_bytes());
            let e = ChunkHeader::parse(&b).unwrap_err().to_string();
            assert!(e.contains(&format!("{name} is negative (-7)")), "{e}");
        }
    }

    /// One block when `nbytes` fits the block size (no division), else as
    /// many as cover it.
    #[test]
    fn nblocks_of_one_and_of_many() {
        let mut b = vec![0u8; 32];
        b[..4].copy_from_slice(&[2, 1, 0, 1]);
        for (nbytes, blocksize, want) in [
            (1usize, 1i32, 1usize),
            (100, 100, 1),
            (100, 40, 3),
            (120, 40, 3),
            (121, 40, 4),
            (0, 40, 0),
        ] {
            b[4..8].copy_from_slice(&(nbytes as i32).to_le_bytes());
            b[8..12].copy_from_slice(&blocksize.to_le_bytes());
            b[12..16].copy_from_slice(&(nbytes as i32 + 16).to_le_bytes());
            let mut c = b.clone();
            c.resize(nbytes + 16, 0);
            // Memcpyed: the payload is the data, so any sizes parse.
            c[2] = flags::MEMCPYED;
            let h = ChunkHeader::parse(&c).unwrap();
            assert_eq!(h.nblocks(), want, "{nbytes} / {blocksize}");
        }
    }

    /// The shortcut agrees with parse on memcpyed chunks of both formats
    /// and on every mutation of their headers: single bytes set to values
    /// around each field's limits, random headers, and every truncation.
    #[test]
    fn memcpyed_items_agrees_with_parse() {
        let data: Vec<u8> = (0..1000u32)
            .flat_map(|i| i.wrapping_mul(2_654_435_761).to_le_bytes())
            .collect();
        let mut chunks = Vec::new();
        for format in [ChunkFormat::Blosc2, ChunkFormat::Blosc1] {
            for ts in [1, 4, 8] {
                let p = CParams::default().clevel(0).typesize(ts).format(format);
                chunks.push(compress(&data, &p).unwrap());
                chunks.push(compress(&data[..ts], &p).unwrap());
                chunks.push(compress(&[], &p).unwrap());
            }
        }
        let (mut agreed_some, mut cases) = (0, 0);
        let mut check = |c: &[u8]| {
            let got = ChunkHeader::memcpyed_items(c);
            assert_eq!(got, by_parse(c), "header {:02x?}", &c[..c.len().min(32)]);
            agreed_some += usize::from(got.is_some());
            cases += 1;
        };
        let interesting = [
            0u8, 1, 2, 3, 4, 5, 6, 7, 8, 0x0f, 0x10, 0x20, 0x70, 0x7f, 0x80, 0xff,
        ];
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for chunk in &chunks {
            assert!(ChunkHeader::memcpyed_items(chunk).is_some());
            for cut in 0..=chunk.len().min(48) {
                check(&chunk[..cut]);
            }
            check(&chunk[..chunk.len() - 1]);
            let mut c = chunk.clone();
            c.extend_from_slice(&[7; 9]);
            check(&c);
            for at in 0..32.min(chunk.len()) {
                for v in interesting {
                    let mut c = chunk.clone();
                    c[at] = v;
                    check(&c);
                    // The same value in the top byte of each i32 field.
                    if at % 4 == 0 && (4..16).contains(&at) {
                        c[at] = chunk[at];
                        c[at + 3] = v;
                        check(&c);
                    }
                }
            }
            for _ in 0..3000 {
                let mut c = chunk.clone();
                for _ in 0..1 + next() % 4 {
                    let r = next();
                    let at = (r % 32.min(c.len() as u64)) as usize;
                    c[at] = (r >> 8) as u8;
                }
                check(&c);
            }
        }
        // Valid memcpyed chunks were among the cases, and the rest refused.
        assert!(agreed_some > chunks.len() * 40, "{agreed_some} of {cases}");
        assert!(cases - agreed_some > cases / 2, "{agreed_some} of {cases}");
    }
}
