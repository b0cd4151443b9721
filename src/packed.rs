//! The historic "Blosc packed" super-chunk: a 96-byte header, the ancillary
//! chunks, the data chunks and an array of chunk starts, in one buffer.
//!
//! C-Blosc2 2.0.0a2 … 2.0.0a4 (Dec 2015 – Aug 2017) serialised its in-memory
//! super-chunk this way (`blosc2_pack_schunk`, `blosc2_unpack_schunk`,
//! `blosc2_packed_append_buffer`, `blosc2_packed_decompress_chunk`); frames
//! replaced it in 2018. This module implements that layout, "layout A" of
//! CONTAINER-NOTES §8.1; the later, self-inconsistent layout "B" (2.0.0a5) is
//! not supported. The format has **no magic number**: nothing in the bytes
//! says they are a packed super-chunk, so callers must know it out of band.
//!
//! ```text
//! 0       96                                                          cbytes
//! | header | filters | codec | metadata | userdata | chunk 0 … n-1 | starts |
//!            (each ancillary chunk optional)                         n × i64
//! ```
//!
//! All integers are little endian; all offsets count from the start of the
//! buffer. See [`PackedHeader`] for the header fields.
//!
//! Entry points: [`pack`] and [`unpack`] for whole buffers, [`PackedReader`]
//! for the header and single chunks, [`append`] (data) and
//! [`append_chunk`] (a compressed chunk) for a new buffer with one more chunk.
//!
//! # Decisions where the sources leave room
//!
//! * **Chunk format.** The data and ancillary chunks are Blosc1 chunks
//!   (16-byte header, [`ChunkFormat::Blosc1`]) whatever
//!   [`CParams::format`] says: the notes record that the chunks of that era
//!   had the 16-byte Blosc1-style header (the 32-byte Blosc2 header came with
//!   frames), and it is the form every Blosc reader decodes. The reader takes
//!   any chunk the crate decodes (Blosc1 or Blosc2 headers), except lazy ones.
//! * **Compressor code** (bytes 4-5): the C code stored its compressor enum
//!   (`compcode`: 0 blosclz, 1 lz4, 2 lz4hc, 3 snappy, 4 zlib, 5 zstd, the
//!   numbers of [`Codec::id`]), not the README's table (which lists the
//!   stream formats 0 blosclz, 1 lz4/lz4hc, 2 snappy, 3 zlib). Where the two
//!   disagree the code wins; we write `compcode`.
//! * **Filters** (bytes 8-9): 3 bits per slot, slot `i` at bits `3i..3i+2`,
//!   five slots, codes 0 none, 1 shuffle, 2 bitshuffle, 3 delta (the C
//!   decoder's 2-bit mask was a bug; we read 3 bits). The active filters of
//!   the parameters fill the slots from slot 0 in pipeline order; bit 15 is
//!   written 0 and ignored. Codes 4..7 are rejected on read.
//! * **Delta** is a super-chunk filter in this format: the first buffer is
//!   stored, as a clevel-0 (memcpyed) chunk, as the *filters chunk*; every
//!   data chunk holds `src[i] - ref[i]` (bytewise, wrapping) over the common
//!   length, and reading adds the reference back. The data chunks do **not**
//!   carry the chunk-level delta flag (0x08): today's decoders read that flag
//!   as Blosc2's own delta against the first block, which is not this one.
//!   A filters chunk is present exactly when the header lists delta and there
//!   is at least one chunk; the reader rejects any other combination.
//! * **chunksize** (bytes 12-15): C never set it (always 0). We write the
//!   chunk size [`pack`] was given when every chunk but the last has that
//!   size (as the README defines it) and 0 otherwise; readers ignore it.
//! * **filters meta** (bytes 10-11) and **flags1..3** are written 0 and
//!   ignored on read; **bytes 80..95** (never initialised by C) are written 0
//!   and ignored on read. Only version 0 is accepted.
//!
//! # Hostile input
//!
//! [`PackedReader::new`] checks the whole layout before anything is
//! decoded: `cbytes` equals the buffer length, the starts array (`nchunks ×
//! 8` bytes, checked against the length before use) sits at the very end,
//! every chunk's header is valid and the chunks lie back to back from byte
//! 96 up to the starts array, in the order the offsets give, and `nbytes`
//! equals the sum the chunks' own headers declare. No allocation is sized by
//! a header field before those checks, and [`unpack`] reserves its output
//! fallibly (an absurd but consistent total is an `Err`, not an abort). The
//! format has no checksums: a
//! flipped bit inside a chunk's payload is the chunk decoder's to notice,
//! and may go unnoticed.
//!
//! ```
//! use oxiblosc::{CParams, Codec, Filter};
//! use oxiblosc::packed::{self, PackedReader};
//!
//! let data: Vec<u8> = (0u32..3_000).flat_map(|v| v.to_le_bytes()).collect();
//! let params = CParams::default().codec(Codec::Lz4).typesize(4).filters(&[Filter::Shuffle]);
//! let bytes = packed::pack(&data, &params, 5_000)?; // 3 chunks: 5000 + 5000 + 2000 bytes
//! let reader = PackedReader::new(&bytes)?;
//! assert_eq!(reader.nchunks(), 3);
//! assert_eq!(reader.decompress_chunk(2)?, data[10_000..]);
//! let bytes = packed::append(&bytes, b"more", 4)?;
//! let mut all = data.clone();
//! all.extend_from_slice(b"more");
//! assert_eq!(packed::unpack(&bytes)?, all);
//! # Ok::<(), oxiblosc::Error>(())
//! ```

use crate::chunk::ChunkHeader;
use crate::error::{Error, Result, corrupt, invalid_header, invalid_param};
use crate::params::{CParams, ChunkFormat, Codec, DParams, Filter, MAX_BUFFERSIZE};
use crate::{Compressor, Decompressor};

/// Length of the packed header.
pub const HEADER_LEN: usize = 96;

/// The only packed-format version there is (0, "pre-first version").
pub const VERSION: u8 = 0;

/// Filter slots in the header's filters field.
pub const FILTER_SLOTS: usize = 5;

/// Filter code: no filter.
pub const FILTER_NONE: u8 = 0;
/// Filter code: byte shuffle.
pub const FILTER_SHUFFLE: u8 = 1;
/// Filter code: bit shuffle.
pub const FILTER_BITSHUFFLE: u8 = 2;
/// Filter code: delta against the filters chunk.
pub const FILTER_DELTA: u8 = 3;

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

fn u16_at(b: &[u8], o: usize) -> u16 {
    u16::from_le_bytes([b[o], b[o + 1]])
}

fn u32_at(b: &[u8], o: usize) -> u32 {
    u32::from_le_bytes(b[o..o + 4].try_into().expect("4 bytes"))
}

fn i64_at(b: &[u8], o: usize) -> i64 {
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

/// The filters field for `params`, and whether it includes delta.
fn filters_field(params: &CParams) -> Result<(u16, bool)> {
    let mut codes = [FILTER_NONE; FILTER_SLOTS];
    let mut delta = false;
    for (n, f) in params.filters.iter().flatten().enumerate() {
        let code = match f {
            Filter::Shuffle => FILTER_SHUFFLE,
            Filter::BitShuffle => FILTER_BITSHUFFLE,
            Filter::Delta => FILTER_DELTA,
            other => {
                return Err(Error::Unsupported(format!(
                    "filter {} has no code in the packed super-chunk format \
                     (shuffle, bitshuffle, delta only)",
                    other.name()
                )));
            }
        };
        if n == FILTER_SLOTS {
            return Err(invalid_param(format!(
                "the packed super-chunk header holds at most {FILTER_SLOTS} filters"
            )));
        }
        delta |= code == FILTER_DELTA;
        codes[n] = code;
    }
    Ok((PackedHeader::pack_filter_codes(codes), delta))
}

/// The parameters the chunks are compressed with: Blosc1 chunks, delta
/// (done at the super-chunk level) removed.
fn chunk_params(params: &CParams) -> CParams {
    let mut p = params.clone().format(ChunkFormat::Blosc1);
    for slot in 0..p.filters.len() {
        if p.filters[slot] == Some(Filter::Delta) {
            p.filters[slot] = None;
            p.filters_meta[slot] = 0;
        }
    }
    p
}

/// `src - reference` bytewise (wrapping) over the common length.
fn delta_encode(src: &[u8], reference: &[u8]) -> Vec<u8> {
    let mut out = src.to_vec();
    for (o, r) in out.iter_mut().zip(reference) {
        *o = o.wrapping_sub(*r);
    }
    out
}

/// Add `reference` back (bytewise, wrapping) over the common length.
fn delta_decode(dst: &mut [u8], reference: &[u8]) {
    for (o, r) in dst.iter_mut().zip(reference) {
        *o = o.wrapping_add(*r);
    }
}

fn to_i64(v: usize) -> Result<i64> {
    i64::try_from(v).map_err(|_| invalid_param("packed super-chunk larger than i64::MAX bytes"))
}

fn overflow() -> Error {
    invalid_param("packed super-chunk size overflows")
}

/// Lay out header, ancillary chunk and data chunks; fills in the sizes and
/// offsets of `header`.
fn assemble(
    mut header: PackedHeader,
    ancillary: [Option<&[u8]>; 4],
    chunks: &[&[u8]],
) -> Result<Vec<u8>> {
    let mut total = HEADER_LEN;
    let mut nbytes = HEADER_LEN;
    for c in ancillary.iter().flatten().chain(chunks) {
        let h = ChunkHeader::parse(c)?;
        total = total.checked_add(c.len()).ok_or_else(overflow)?;
        nbytes = nbytes.checked_add(h.nbytes).ok_or_else(overflow)?;
    }
    let starts_len = chunks.len().checked_mul(8).ok_or_else(overflow)?;
    total = total.checked_add(starts_len).ok_or_else(overflow)?;
    nbytes = nbytes.checked_add(starts_len).ok_or_else(overflow)?;
    header.nchunks = to_i64(chunks.len())?;
    header.nbytes = to_i64(nbytes)?;
    header.cbytes = to_i64(total)?;
    header.data_starts = to_i64(total - starts_len)?;
    let mut offsets = [0i64; 4];
    let mut at = HEADER_LEN;
    for (k, c) in ancillary.iter().enumerate() {
        if let Some(c) = c {
            offsets[k] = to_i64(at)?;
            at += c.len();
        }
    }
    [
        header.filters_chunk,
        header.codec_chunk,
        header.metadata_chunk,
        header.userdata_chunk,
    ] = offsets;

    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(&header.to_bytes());
    for c in ancillary.iter().flatten() {
        out.extend_from_slice(c);
    }
    let mut starts = Vec::with_capacity(starts_len);
    for c in chunks {
        starts.extend_from_slice(&to_i64(out.len())?.to_le_bytes());
        out.extend_from_slice(c);
    }
    out.extend_from_slice(&starts);
    debug_assert_eq!(out.len(), total);
    Ok(out)
}

/// Pack `data` into a packed super-chunk of `chunksize`-byte chunks (the
/// last one may be shorter; empty data gives no chunks), compressed with
/// `params` as Blosc1 chunks (see the module docs for delta).
///
/// # Errors
/// [`Error::InvalidParam`] for a `chunksize` of 0 or over
/// [`MAX_BUFFERSIZE`], or bad `params`; [`Error::Unsupported`] for filters
/// the format cannot name (trunc_prec, bytedelta) or a codec this build
/// lacks.
pub fn pack(data: &[u8], params: &CParams, chunksize: usize) -> Result<Vec<u8>> {
    if chunksize == 0 || chunksize > MAX_BUFFERSIZE {
        return Err(invalid_param(format!(
            "chunksize {chunksize} is not in 1..={MAX_BUFFERSIZE}"
        )));
    }
    let (filters, delta) = filters_field(params)?;
    let cp = chunk_params(params);
    cp.validate()?;
    let header = PackedHeader {
        version: VERSION,
        compressor: u16::from(params.codec.id()),
        clevel: u16::from(params.clevel),
        filters,
        chunksize: u32::try_from(chunksize).unwrap_or(0),
        ..PackedHeader::default()
    };
    let mut comp = Compressor::new(cp.clone());
    let reference = if delta && !data.is_empty() {
        Some(&data[..chunksize.min(data.len())])
    } else {
        None
    };
    let filters_chunk = match reference {
        Some(r) => Some(Compressor::new(cp.clone().clevel(0)).compress(r)?),
        None => None,
    };
    let mut chunks = Vec::with_capacity(data.len().div_ceil(chunksize));
    for piece in data.chunks(chunksize) {
        chunks.push(match reference {
            Some(r) => comp.compress(&delta_encode(piece, r))?,
            None => comp.compress(piece)?,
        });
    }
    let refs: Vec<&[u8]> = chunks.iter().map(Vec::as_slice).collect();
    assemble(header, [filters_chunk.as_deref(), None, None, None], &refs)
}

/// All the data of a packed super-chunk, chunk after chunk.
///
/// # Errors
/// As [`PackedReader::new`] and [`PackedReader::decompress_chunk`].
pub fn unpack(packed: &[u8]) -> Result<Vec<u8>> {
    PackedReader::new(packed)?.unpack()
}

/// A new packed buffer: `packed` with `data` appended as one more chunk,
/// compressed with the super-chunk's own codec, clevel and filters
/// ([`PackedHeader::cparams`]) and `typesize` (which the header does not
/// record). As C did, the starts array moves to the end and `nchunks`,
/// `nbytes`, `cbytes` and the starts offset are updated; appending to an
/// empty delta super-chunk makes `data` the delta reference.
///
/// # Errors
/// As [`PackedReader::new`] for `packed`, as [`PackedHeader::cparams`],
/// and as [`crate::compress`].
pub fn append(packed: &[u8], data: &[u8], typesize: usize) -> Result<Vec<u8>> {
    let reader = PackedReader::new(packed)?;
    let h = *reader.header();
    let params = h.cparams(typesize)?;
    let cp = chunk_params(&params);
    cp.validate()?;
    let mut new_filters_chunk = None;
    let chunk = if h.has_delta() {
        let reference = match &reader.reference {
            Some(r) => r.as_slice(),
            None => {
                new_filters_chunk = Some(compress_with(&cp.clone().clevel(0), data)?);
                data
            }
        };
        compress_with(&cp, &delta_encode(data, reference))?
    } else {
        compress_with(&cp, data)?
    };
    add_chunk(&reader, &chunk, data.len(), new_filters_chunk.as_deref())
}

/// A new packed buffer: `packed` with `chunk`, an already compressed Blosc
/// chunk, appended verbatim. With the delta filter the chunk must hold the
/// data minus the reference (the filters chunk), so appending to an empty
/// delta super-chunk this way is refused: use [`append`].
///
/// # Errors
/// As [`PackedReader::new`] for `packed`; the chunk header's errors, and
/// [`Error::InvalidParam`] for a lazy chunk, a chunk whose `cbytes` is not
/// its length, or a delta super-chunk without a reference.
pub fn append_chunk(packed: &[u8], chunk: &[u8]) -> Result<Vec<u8>> {
    let reader = PackedReader::new(packed)?;
    let h = ChunkHeader::parse(chunk)?;
    if h.is_lazy() || h.cbytes != chunk.len() {
        return Err(invalid_param(format!(
            "not a whole chunk: {} bytes, its header says {}{}",
            chunk.len(),
            h.cbytes,
            if h.is_lazy() { " (lazy)" } else { "" }
        )));
    }
    if reader.header.has_delta() && reader.reference.is_none() {
        return Err(invalid_param(
            "a delta super-chunk without chunks has no reference yet: append data, not a chunk",
        ));
    }
    add_chunk(&reader, chunk, h.nbytes, None)
}

/// `reader`'s buffer plus `chunk` (of `nbytes` data bytes), and the filters
/// chunk `new_filters_chunk` when it is the first delta reference.
fn add_chunk(
    reader: &PackedReader<'_>,
    chunk: &[u8],
    nbytes: usize,
    new_filters_chunk: Option<&[u8]>,
) -> Result<Vec<u8>> {
    let mut header = reader.header;
    if header.chunksize != 0 {
        let last_full = match reader.nchunks() {
            0 => true,
            n => reader.chunk_nbytes(n - 1)? == header.chunksize as usize,
        };
        if !last_full || nbytes > header.chunksize as usize {
            header.chunksize = 0;
        }
    }
    let mut chunks: Vec<&[u8]> = Vec::with_capacity(reader.nchunks() + 1);
    for i in 0..reader.nchunks() {
        chunks.push(reader.chunk(i)?);
    }
    chunks.push(chunk);
    let filters_chunk = new_filters_chunk.or(reader.filters_chunk());
    assemble(
        header,
        [
            filters_chunk,
            reader.codec_chunk(),
            reader.metadata_chunk(),
            reader.userdata_chunk(),
        ],
        &chunks,
    )
}

fn compress_with(params: &CParams, data: &[u8]) -> Result<Vec<u8>> {
    Compressor::new(params.clone()).compress(data)
}

/// A parsed and checked packed super-chunk over borrowed bytes: the header,
/// the chunks (raw or decompressed) and the whole data.
///
/// ```
/// use oxiblosc::CParams;
/// use oxiblosc::packed::{PackedReader, pack};
///
/// let bytes = pack(&[7u8; 1000], &CParams::default().typesize(1), 300)?;
/// let r = PackedReader::new(&bytes)?;
/// assert_eq!((r.nchunks(), r.header().chunksize), (4, 300));
/// assert_eq!(r.decompress_chunk(3)?, [7u8; 100]);
/// # Ok::<(), oxiblosc::Error>(())
/// ```
#[derive(Debug)]
pub struct PackedReader<'a> {
    bytes: &'a [u8],
    header: PackedHeader,
    nchunks: usize,
    /// Offset of the data-starts array.
    starts_at: usize,
    /// Byte ranges of the filters, codec, metadata and userdata chunks.
    ancillary: [Option<(usize, usize)>; 4],
    /// Sum of the data chunks' `nbytes`.
    data_nbytes: usize,
    /// The decoded delta reference (the filters chunk), when delta is on.
    reference: Option<Vec<u8>>,
}

const ANCILLARY: [&str; 4] = ["filters", "codec", "metadata", "userdata"];

impl<'a> PackedReader<'a> {
    /// Parse the header and check the whole layout against `bytes` (see
    /// the module docs); decodes only the filters chunk (delta reference).
    ///
    /// # Errors
    /// [`Error::Truncated`] for a buffer shorter than its header or
    /// `cbytes` says; [`Error::InvalidHeader`] for impossible fields;
    /// [`Error::Corrupt`] when the chunks do not fit the offsets and sizes;
    /// chunk errors from the chunks' headers and the filters chunk.
    pub fn new(bytes: &'a [u8]) -> Result<PackedReader<'a>> {
        let header = PackedHeader::parse(bytes)?;
        let len = bytes.len();
        match usize::try_from(header.cbytes) {
            Ok(c) if c == len => {}
            Ok(c) if c > len => {
                return Err(Error::Truncated {
                    what: "packed super-chunk (cbytes)",
                    needed: c,
                    available: len,
                });
            }
            _ => {
                return Err(invalid_header(format!(
                    "packed super-chunk cbytes {} but the buffer holds {len} bytes",
                    header.cbytes
                )));
            }
        }
        let room = (len - HEADER_LEN) / 8;
        let nchunks = usize::try_from(header.nchunks)
            .ok()
            .filter(|&n| n <= room)
            .ok_or_else(|| {
                invalid_header(format!(
                    "nchunks {} does not fit a {len}-byte packed super-chunk",
                    header.nchunks
                ))
            })?;
        let starts_at = len - 8 * nchunks;
        if usize::try_from(header.data_starts).ok() != Some(starts_at) {
            return Err(invalid_header(format!(
                "data starts at {} but {nchunks} starts end a {len}-byte buffer at {starts_at}",
                header.data_starts
            )));
        }
        let codes = header.filter_codes();
        if let Some(slot) = codes.iter().position(|&c| c > FILTER_DELTA) {
            return Err(invalid_header(format!(
                "filter slot {slot} holds undefined code {}",
                codes[slot]
            )));
        }

        // Walk the chunks, which must lie back to back from byte 96.
        let body = &bytes[..starts_at];
        let mut pos = HEADER_LEN;
        let mut total_nbytes = HEADER_LEN + 8 * nchunks;
        let mut chunk_at = |start: usize, what: &dyn Fn() -> String| -> Result<(usize, usize)> {
            if start != pos {
                return Err(corrupt(format!(
                    "{} at offset {start}, but the previous one ends at {pos}",
                    what()
                )));
            }
            let h = ChunkHeader::parse(&body[pos..]).map_err(|e| match e {
                Error::Truncated { .. } => corrupt(format!(
                    "{} at {pos} runs past the data-starts array at {starts_at} ({e})",
                    what()
                )),
                e => e,
            })?;
            if h.is_lazy() {
                return Err(invalid_header(format!("{} is a lazy chunk", what())));
            }
            pos += h.cbytes;
            total_nbytes = total_nbytes
                .checked_add(h.nbytes)
                .ok_or_else(|| corrupt("chunk sizes overflow"))?;
            Ok((h.nbytes, pos))
        };
        let offsets = [
            header.filters_chunk,
            header.codec_chunk,
            header.metadata_chunk,
            header.userdata_chunk,
        ];
        let mut ancillary = [None; 4];
        for (k, &off) in offsets.iter().enumerate() {
            if off == 0 {
                continue;
            }
            let start = usize::try_from(off).map_err(|_| {
                invalid_header(format!("{} chunk offset {off} is negative", ANCILLARY[k]))
            })?;
            let (_, end) = chunk_at(start, &|| format!("{} chunk", ANCILLARY[k]))?;
            ancillary[k] = Some((start, end));
        }
        let mut data_nbytes = 0usize;
        for i in 0..nchunks {
            let off = i64_at(bytes, starts_at + 8 * i);
            let start = usize::try_from(off).unwrap_or(usize::MAX);
            data_nbytes += chunk_at(start, &|| format!("data chunk {i}"))?.0;
        }
        if pos != starts_at {
            return Err(corrupt(format!(
                "{} bytes between the last chunk (ends at {pos}) and the data-starts array",
                starts_at - pos
            )));
        }
        if usize::try_from(header.nbytes).ok() != Some(total_nbytes) {
            return Err(corrupt(format!(
                "nbytes {} but the chunks' headers add up to {total_nbytes}",
                header.nbytes
            )));
        }
        let delta = codes.contains(&FILTER_DELTA);
        let reference = match (delta, ancillary[0]) {
            (true, Some((a, b))) => {
                if nchunks == 0 {
                    return Err(corrupt(
                        "filters chunk in a packed super-chunk without chunks",
                    ));
                }
                Some(crate::decompress(&bytes[a..b])?)
            }
            (true, None) if nchunks > 0 => {
                return Err(corrupt(
                    "delta filter without a filters chunk (its reference)",
                ));
            }
            (false, Some(_)) => {
                return Err(corrupt("filters chunk present but no delta filter"));
            }
            _ => None,
        };
        Ok(PackedReader {
            bytes,
            header,
            nchunks,
            starts_at,
            ancillary,
            data_nbytes,
            reference,
        })
    }

    /// The header.
    pub fn header(&self) -> &PackedHeader {
        &self.header
    }

    /// The number of data chunks.
    pub fn nchunks(&self) -> usize {
        self.nchunks
    }

    /// The total size of the data (the chunks' `nbytes` added up).
    pub fn data_nbytes(&self) -> usize {
        self.data_nbytes
    }

    fn chunk_start(&self, i: usize) -> usize {
        // Checked in `new`: the starts are in range and back to back.
        i64_at(self.bytes, self.starts_at + 8 * i) as usize
    }

    fn check_index(&self, i: usize) -> Result<()> {
        if i >= self.nchunks {
            return Err(invalid_param(format!(
                "chunk {i} of a packed super-chunk with {} chunks",
                self.nchunks
            )));
        }
        Ok(())
    }

    /// The raw (compressed) data chunk `i`.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] when `i >= nchunks`.
    pub fn chunk(&self, i: usize) -> Result<&'a [u8]> {
        self.check_index(i)?;
        let end = if i + 1 < self.nchunks {
            self.chunk_start(i + 1)
        } else {
            self.starts_at
        };
        Ok(&self.bytes[self.chunk_start(i)..end])
    }

    /// The uncompressed size of chunk `i`, from its header.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] when `i >= nchunks`.
    pub fn chunk_nbytes(&self, i: usize) -> Result<usize> {
        Ok(ChunkHeader::parse(self.chunk(i)?)?.nbytes)
    }

    fn ancillary(&self, k: usize) -> Option<&'a [u8]> {
        self.ancillary[k].map(|(a, b)| &self.bytes[a..b])
    }

    /// The raw filters chunk (the delta reference), if present.
    pub fn filters_chunk(&self) -> Option<&'a [u8]> {
        self.ancillary(0)
    }

    /// The raw codec chunk, if present (C never wrote one).
    pub fn codec_chunk(&self) -> Option<&'a [u8]> {
        self.ancillary(1)
    }

    /// The raw metadata chunk, if present (C never wrote one).
    pub fn metadata_chunk(&self) -> Option<&'a [u8]> {
        self.ancillary(2)
    }

    /// The raw userdata chunk, if present (C never wrote one).
    pub fn userdata_chunk(&self) -> Option<&'a [u8]> {
        self.ancillary(3)
    }

    /// Decompress chunk `i` into `dst` (undoing delta); returns its size.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] when `i >= nchunks`; [`Error::DstTooSmall`];
    /// the chunk decoder's errors.
    pub fn decompress_chunk_into(&self, i: usize, dst: &mut [u8]) -> Result<usize> {
        let mut d = Decompressor::new(DParams::default());
        self.decode_into(&mut d, i, dst)
    }

    fn decode_into(&self, d: &mut Decompressor, i: usize, dst: &mut [u8]) -> Result<usize> {
        let chunk = self.chunk(i)?;
        let want = ChunkHeader::parse(chunk)?.nbytes;
        if dst.len() < want {
            return Err(Error::DstTooSmall {
                needed: want,
                available: dst.len(),
            });
        }
        let n = d.decompress_into(chunk, &mut dst[..want])?;
        if n != want {
            return Err(corrupt(format!(
                "chunk {i} decoded to {n} bytes, its header says {want}"
            )));
        }
        if let Some(r) = &self.reference {
            delta_decode(&mut dst[..n], r);
        }
        Ok(n)
    }

    /// Decompress chunk `i` (undoing delta).
    ///
    /// # Errors
    /// As [`PackedReader::decompress_chunk_into`].
    pub fn decompress_chunk(&self, i: usize) -> Result<Vec<u8>> {
        let n = self.chunk_nbytes(i)?;
        let mut out = vec![0u8; n];
        self.decompress_chunk_into(i, &mut out)?;
        Ok(out)
    }

    /// All the data, chunk after chunk.
    ///
    /// # Errors
    /// As [`PackedReader::decompress_chunk`].
    pub fn unpack(&self) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        out.try_reserve_exact(self.data_nbytes).map_err(|_| {
            Error::InvalidParam(format!(
                "cannot allocate the {} bytes the chunks declare",
                self.data_nbytes
            ))
        })?;
        out.resize(self.data_nbytes, 0);
        let mut d = Decompressor::new(DParams::default());
        let mut at = 0;
        for i in 0..self.nchunks {
            at += self.decode_into(&mut d, i, &mut out[at..])?;
        }
        Ok(out)
    }
}
