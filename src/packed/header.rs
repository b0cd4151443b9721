//! The 96-byte packed header: fields, parse and write.

use super::*;

/// The 96-byte header of a packed super-chunk (layout A, all little endian).
///
/// | bytes | field |
/// |---|---|
/// | 0 | [`version`](Self::version) |
/// | 1..4 | [`flags`](Self::flags) |
/// | 4..6 | [`compressor`](Self::compressor) |
/// | 6..8 | [`clevel`](Self::clevel) |
/// | 8..10 | [`filters`](Self::filters) |
/// | 10..12 | [`filters_meta`](Self::filters_meta) |
/// | 12..16 | [`chunksize`](Self::chunksize) |
/// | 16..24 | [`nchunks`](Self::nchunks) |
/// | 24..32 | [`nbytes`](Self::nbytes) |
/// | 32..40 | [`cbytes`](Self::cbytes) |
/// | 40..48 | [`filters_chunk`](Self::filters_chunk) |
/// | 48..56 | [`codec_chunk`](Self::codec_chunk) |
/// | 56..64 | [`metadata_chunk`](Self::metadata_chunk) |
/// | 64..72 | [`userdata_chunk`](Self::userdata_chunk) |
/// | 72..80 | [`data_starts`](Self::data_starts) |
/// | 80..96 | reserved: ignored on read, written as zeros |
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct PackedHeader {
    /// Format version (byte 0); [`VERSION`] (0) is the only one.
    pub version: u8,
    /// flags1..flags3 (bytes 1..3): reserved, written 0, ignored on read.
    pub flags: [u8; 3],
    /// Compressor code (`cname`, u16 at 4): C-Blosc2's `compcode` of the
    /// time, as [`Codec::id`] (0 blosclz, 1 lz4, 2 lz4hc, 3 snappy, 4 zlib,
    /// 5 zstd). Informative: every chunk names its own codec.
    pub compressor: u16,
    /// Compression level (u16 at 6). Informative.
    pub clevel: u16,
    /// The filter pipeline (u16 at 8), 3 bits per slot; see
    /// [`PackedHeader::filter_codes`].
    pub filters: u16,
    /// Filter metadata (u16 at 10): no defined meaning; written 0.
    pub filters_meta: u16,
    /// Size of every data chunk but the last (u32 at 12), or 0 when not
    /// fixed. C never set it; informative.
    pub chunksize: u32,
    /// Number of data chunks (i64 at 16).
    pub nchunks: i64,
    /// Uncompressed size (i64 at 24): 96 + the `nbytes` of every chunk
    /// (ancillary and data) + 8 × `nchunks`.
    pub nbytes: i64,
    /// Total length of the packed buffer (i64 at 32).
    pub cbytes: i64,
    /// Offset of the filters chunk (i64 at 40), 0 when absent.
    pub filters_chunk: i64,
    /// Offset of the codec chunk (i64 at 48), 0 when absent (never written).
    pub codec_chunk: i64,
    /// Offset of the metadata chunk (i64 at 56), 0 when absent (never written).
    pub metadata_chunk: i64,
    /// Offset of the userdata chunk (i64 at 64), 0 when absent (never written).
    pub userdata_chunk: i64,
    /// Offset of the data-starts array (i64 at 72): `nchunks` i64 offsets
    /// of the data chunks, at the very end of the buffer.
    pub data_starts: i64,
}

pub(super) fn u16_at(b: &[u8], o: usize) -> u16 {
    u16::from_le_bytes([b[o], b[o + 1]])
}

pub(super) fn u32_at(b: &[u8], o: usize) -> u32 {
    u32::from_le_bytes(b[o..o + 4].try_into().expect("4 bytes"))
}

pub(super) fn i64_at(b: &[u8], o: usize) -> i64 {
    i64::from_le_bytes(b[o..o + 8].try_into().expect("8 bytes"))
}

impl PackedHeader {
    /// Read the header from the first 96 bytes of `src`. Checks only the
    /// length and the version; [`PackedReader::new`] checks the fields
    /// against the buffer.
    ///
    /// # Errors
    /// [`Error::Truncated`] under 96 bytes; [`Error::InvalidHeader`] for a
    /// version other than 0.
    pub fn parse(src: &[u8]) -> Result<PackedHeader> {
        if src.len() < HEADER_LEN {
            return Err(Error::Truncated {
                what: "packed super-chunk header",
                needed: HEADER_LEN,
                available: src.len(),
            });
        }
        let h = PackedHeader {
            version: src[0],
            flags: [src[1], src[2], src[3]],
            compressor: u16_at(src, 4),
            clevel: u16_at(src, 6),
            filters: u16_at(src, 8),
            filters_meta: u16_at(src, 10),
            chunksize: u32_at(src, 12),
            nchunks: i64_at(src, 16),
            nbytes: i64_at(src, 24),
            cbytes: i64_at(src, 32),
            filters_chunk: i64_at(src, 40),
            codec_chunk: i64_at(src, 48),
            metadata_chunk: i64_at(src, 56),
            userdata_chunk: i64_at(src, 64),
            data_starts: i64_at(src, 72),
        };
        if h.version != VERSION {
            return Err(invalid_header(format!(
                "packed super-chunk version {} (only version {VERSION} exists)",
                h.version
            )));
        }
        Ok(h)
    }

    /// The 96 header bytes (bytes 80..95 zero).
    pub fn to_bytes(&self) -> [u8; HEADER_LEN] {
        let mut b = [0u8; HEADER_LEN];
        b[0] = self.version;
        b[1..4].copy_from_slice(&self.flags);
        b[4..6].copy_from_slice(&self.compressor.to_le_bytes());
        b[6..8].copy_from_slice(&self.clevel.to_le_bytes());
        b[8..10].copy_from_slice(&self.filters.to_le_bytes());
        b[10..12].copy_from_slice(&self.filters_meta.to_le_bytes());
        b[12..16].copy_from_slice(&self.chunksize.to_le_bytes());
        let longs = [
            self.nchunks,
            self.nbytes,
            self.cbytes,
            self.filters_chunk,
            self.codec_chunk,
            self.metadata_chunk,
            self.userdata_chunk,
            self.data_starts,
        ];
        for (i, v) in longs.iter().enumerate() {
            b[16 + 8 * i..24 + 8 * i].copy_from_slice(&v.to_le_bytes());
        }
        b
    }

    /// The five 3-bit filter codes, slot 0 first ([`FILTER_NONE`],
    /// [`FILTER_SHUFFLE`], [`FILTER_BITSHUFFLE`], [`FILTER_DELTA`]; 4..7 are
    /// undefined). Bit 15 is ignored.
    pub fn filter_codes(&self) -> [u8; FILTER_SLOTS] {
        std::array::from_fn(|i| ((self.filters >> (3 * i)) & 7) as u8)
    }

    /// The filters field holding `codes` (slot 0 first; each taken mod 8).
    pub fn pack_filter_codes(codes: [u8; FILTER_SLOTS]) -> u16 {
        codes
            .iter()
            .enumerate()
            .fold(0u16, |acc, (i, &c)| acc | (u16::from(c & 7) << (3 * i)))
    }

    /// Whether the pipeline includes the super-chunk delta filter.
    pub fn has_delta(&self) -> bool {
        self.filter_codes().contains(&FILTER_DELTA)
    }

    /// The codec the compressor code names, if this crate has it (3,
    /// snappy, and unknown codes give `None`).
    pub fn codec(&self) -> Option<Codec> {
        u8::try_from(self.compressor).ok().and_then(Codec::from_id)
    }

    /// Compression parameters for new chunks of this super-chunk (as
    /// [`append`] uses): its codec, clevel and shuffle, Blosc1 chunks, and
    /// `typesize` (which the header does not record).
    ///
    /// # Errors
    /// [`Error::Unsupported`] for a compressor code this crate cannot write;
    /// [`Error::InvalidParam`] for a clevel over 9 or undefined filter codes.
    pub fn cparams(&self, typesize: usize) -> Result<CParams> {
        let codec = self.codec().ok_or_else(|| {
            Error::Unsupported(format!(
                "packed super-chunk compressor code {} (this crate writes 0 blosclz, \
                 1 lz4, 2 lz4hc, 4 zlib, 5 zstd)",
                self.compressor
            ))
        })?;
        let clevel = u8::try_from(self.clevel)
            .ok()
            .filter(|&c| c <= 9)
            .ok_or_else(|| invalid_param(format!("clevel {} is not in 0..=9", self.clevel)))?;
        let mut filters = Vec::new();
        for (slot, code) in self.filter_codes().into_iter().enumerate() {
            filters.push(match code {
                FILTER_NONE => continue,
                FILTER_SHUFFLE => Filter::Shuffle,
                FILTER_BITSHUFFLE => Filter::BitShuffle,
                FILTER_DELTA => Filter::Delta,
                other => {
                    return Err(invalid_param(format!(
                        "filter slot {slot} holds undefined code {other}"
                    )));
                }
            });
        }
        Ok(CParams::default()
            .codec(codec)
            .clevel(clevel)
            .typesize(typesize)
            .filters(&filters)
            .format(ChunkFormat::Blosc1))
    }
}
