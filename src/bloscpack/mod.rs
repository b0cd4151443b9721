//! Bloscpack (`.blp`) files, format version 3 as bloscpack 0.16.0 writes
//! them: read, write, append and metadata rewrite.
//!
//! A Bloscpack file is
//! `header (32) | [metadata section] | [offsets] | chunk₀ digest₀ | chunk₁ digest₁ | …`,
//! all integers little-endian:
//!
//! - the [`Header`] says which optional sections are present, the
//!   [`Checksum`] after each chunk, the typesize, the chunk size, the last
//!   chunk's size, the number of chunks and the offset slots kept free for
//!   appends (`max_app_chunks`);
//! - the metadata section ([`MetadataHeader`]) holds JSON, raw or zlib,
//!   with its own checksum and room reserved for rewrites;
//! - the offsets are the absolute positions of the chunks, then −1 in the
//!   reserved slots;
//! - each chunk is a plain Blosc1 chunk (16-byte header, as C-Blosc 1.x
//!   writes it, so python-blosc 1.x reads it), followed by the digest of
//!   its compressed bytes.
//!
//! ```
//! use oxiblosc::bloscpack::{self, Checksum, Options, Reader};
//! use serde_json::json;
//!
//! let data: Vec<u8> = (0u64..200_000).flat_map(|v| v.to_le_bytes()).collect();
//! let opts = Options::default()
//!     .chunk_size(1 << 19)
//!     .checksum(Checksum::Crc32)
//!     .metadata(json!({"dtype": "<u8", "shape": [200_000]}));
//! let mut blp = bloscpack::pack(&data, &opts)?;
//!
//! let r = Reader::new(&blp[..])?;
//! assert_eq!(r.nchunks(), 4);
//! assert_eq!(r.metadata().unwrap()["dtype"], "<u8");
//! assert_eq!(r.decompress_all()?, data);
//!
//! // Appends use the offset slots reserved at creation (10 × nchunks).
//! bloscpack::append(&mut blp, &[7u8; 1000], None)?;
//! assert_eq!(bloscpack::unpack(&blp)?.len(), data.len() + 1000);
//! # Ok::<(), oxiblosc::Error>(())
//! ```
//!
//! Reading never trusts a size field: every section is checked against
//! the length of the input before anything it sizes is allocated, every
//! chunk's digest is verified before it is decoded, and errors name the
//! section or the chunk (`bloscpack chunk 3: checksum mismatch (adler32)`).
//!
//! [`Reader`] holds the whole file; [`Decoder`] reads one front to back from
//! any [`io::Read`](std::io::Read) (a pipe too) with one chunk in memory at a
//! time, making the same checks as the bytes arrive. [`pack`] builds a file
//! in memory; [`Encoder`] writes the same bytes from a stream of any length
//! (an [`io::Write`](std::io::Write)), its chunks held in a spool until
//! `finish`.

mod checksum;
mod decoder;
mod encoder;
mod header;
mod metadata;
mod offsets;
mod reader;
mod writer;

pub use checksum::Checksum;
pub use decoder::Decoder;
pub use encoder::Encoder;
pub use header::{FORMAT_VERSION, HEADER_LEN, Header, MAGIC};
pub use metadata::{JSON_MAGIC, METADATA_HEADER_LEN, MetaCodec, MetadataHeader, MetadataOptions};
pub use reader::Reader;
pub use writer::{
    DEFAULT_CHUNK_SIZE, DEFAULT_CLEVEL, Options, append, append_file, default_cparams, pack,
    pack_to_file, pack_to_writer, rewrite_metadata, rewrite_metadata_file, unpack, unpack_file,
};
