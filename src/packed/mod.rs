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

mod header;
mod read;
mod write;

pub use header::PackedHeader;
pub use read::PackedReader;
pub use write::{append, append_chunk, pack, unpack};

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

/// The name of a packed header's filter code (`shuffle`, `bitshuffle`,
/// `delta`); `None` for [`FILTER_NONE`] and unknown codes.
///
/// ```
/// use oxiblosc::packed::{FILTER_DELTA, FILTER_NONE, filter_name};
/// assert_eq!(filter_name(FILTER_DELTA), Some("delta"));
/// assert_eq!(filter_name(FILTER_NONE), None);
/// ```
pub fn filter_name(code: u8) -> Option<&'static str> {
    match code {
        FILTER_SHUFFLE => Some("shuffle"),
        FILTER_BITSHUFFLE => Some("bitshuffle"),
        FILTER_DELTA => Some("delta"),
        _ => None,
    }
}
