//! Streams: `io::Write` / `io::Read` adapters for chunk sequences and
//! contiguous frames, in the style of the `zstd` and `lz4_flex` crates.
//!
//! * [`FrameEncoder`] (an [`io::Write`](std::io::Write)) cuts what it is
//!   given into chunks of a fixed size, compresses them and writes one
//!   contiguous frame (`b2frame`) that C-Blosc2 / python-blosc2 open.
//!   [`FrameDecoder`] (an [`io::Read`](std::io::Read)) reads such a frame
//!   from any reader (a pipe too) and yields the decompressed bytes.
//! * [`ChunkEncoder`] / [`ChunkDecoder`] do the same for a plain sequence of
//!   chunks, one after the other (each chunk carries its size, so the
//!   sequence is self-delimiting; it is what `oxiblosc compress - -` writes).
//! * [`FrameEncoder::copy_from`], [`ChunkEncoder::copy_from`] and the
//!   decoders' `copy_to` run a bounded pipeline: a reader thread, the
//!   block-parallel compressor (or decompressor) on the calling thread and
//!   an ordered writer thread, with at most [`IN_FLIGHT`] chunks queued
//!   between two stages, so reading, compressing and writing overlap while
//!   memory stays at a few chunks, whatever the input size.
//!
//! Like `zstd::Encoder` and `lz4_flex::frame::FrameEncoder`, an encoder must
//! be ended with `finish()`, which returns the inner writer. **An encoder
//! dropped without `finish()` leaves an incomplete stream** (for a frame: no
//! index and no trailer, or nothing at all).
//!
//! ```
//! use std::io::{Read, Write};
//! use oxiblosc::stream::{FrameDecoder, FrameEncoder};
//! use oxiblosc::{CParams, Codec};
//!
//! let data: Vec<u8> = (0u32..100_000).flat_map(|v| v.to_le_bytes()).collect();
//! let params = CParams::default().codec(Codec::Lz4).typesize(4);
//! let mut enc = FrameEncoder::new(Vec::new(), params, 64 * 1024)?;
//! enc.write_all(&data)?;
//! let frame: Vec<u8> = enc.finish()?;
//! // A valid frame: the super-chunk layer opens it.
//! let sc = oxiblosc::SChunk::from_cframe(frame.clone())?;
//! assert_eq!(sc.nchunks(), 7);
//! // And it streams back.
//! let mut back = Vec::new();
//! FrameDecoder::new(&frame[..])?.read_to_end(&mut back)?;
//! assert_eq!(back, data);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! One file per concern: `core` (the chunk cutter and the chunk decoder
//! shared by both formats, and the pipelines), `spool` (where a frame's
//! chunks wait when the output cannot seek), `frame_write`, `frame_read`,
//! `chunks` (the plain chunk sequence).

mod chunks;
pub(crate) mod core;
mod frame_read;
mod frame_write;
pub(crate) mod spool;

pub use chunks::{ChunkDecoder, ChunkEncoder};
pub use frame_read::FrameDecoder;
pub use frame_write::FrameEncoder;

/// The chunk size the CLI uses by default (4 MiB): large enough for the
/// block-parallel engine, small enough that a pipeline holds a few.
pub const DEFAULT_CHUNKSIZE: usize = 4 << 20;

/// Chunks that may wait between two stages of a pipeline (the reader, the
/// compressor and the writer); with the buffers in use by each stage, a
/// pipeline holds at most `2 * (IN_FLIGHT + 2)` chunk buffers.
pub const IN_FLIGHT: usize = 2;
