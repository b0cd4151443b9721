//! oxiblosc: a pure-Rust, SIMD-first engine for the Blosc2 compression formats.
//!
//! The Blosc2 *chunk* is a self-describing compressed buffer: a header, then
//! blocks that are filtered (shuffle, bitshuffle, delta, ...) and compressed
//! (BloscLZ, LZ4, LZ4HC, zlib, zstd) independently. This crate reads every
//! chunk C-Blosc2 3.x and C-Blosc 1.x write and writes chunks they read.
//!
//! ```
//! use oxiblosc::{CParams, Codec, Filter, compress, decompress};
//!
//! let data: Vec<u8> = (0u32..10_000).flat_map(|v| v.to_le_bytes()).collect();
//! let params = CParams::default().codec(Codec::Lz4).typesize(4).filters(&[Filter::Shuffle]);
//! let chunk = compress(&data, &params)?;
//! assert!(chunk.len() < data.len() / 10);
//! assert_eq!(decompress(&chunk)?, data);
//! # Ok::<(), oxiblosc::Error>(())
//! ```
//!
//! The byte-transform kernels are in [`kernels`] (`oxiblosc-kernels`).
//!
//! # Threads and processes
//!
//! [`CParams`], [`DParams`], [`Compressor`], [`Decompressor`], [`Error`],
//! [`frame::Frame`] and [`frame::FrameHeader`] are `Send + Sync`: move a
//! `Compressor` / `Decompressor` into a thread, or make one per thread
//! (they compress through `&mut self`; their worker pools are shared
//! process-wide). [`schunk::SChunk`] is neither `Send` nor `Sync` (it may
//! hold a caller's [`frame::FrameIo`]): open one handle per thread. Any
//! number of readers, in threads or processes, may open a file frame
//! while one writer appends to it; each open sees a complete old or new
//! frame (see [`schunk`]'s *Sharing a file*; `tests/concurrency.rs`).

#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod bloscpack;
pub mod chunk;
mod codecs;
mod context;
mod error;
mod filters;
pub mod frame;
pub mod ndarray;
pub mod packed;
mod parallel;
mod params;
pub mod plugins;
pub mod schunk;
pub mod stream;

pub use oxiblosc_kernels as kernels;

pub use chunk::{ChunkHeader, SpecialValue, cbuffer_sizes, special_chunk};
pub use context::{Compressor, Decompressor};
pub use error::{Error, Result};
pub use frame::{Frame, FrameHeader};
pub use params::{
    CParams, ChunkFormat, Codec, DParams, Filter, MAX_BLOCKSIZE, MAX_BUFFERSIZE, MAX_OVERHEAD,
    MAX_TYPESIZE, SplitMode,
};
pub use schunk::{OpenOptions, SChunk, SChunkBuilder};

/// The largest chunk `n` input bytes can give: `n + 32`.
pub const fn max_compressed_len(n: usize) -> usize {
    n + MAX_OVERHEAD
}

/// Compress `src` into a new chunk.
///
/// # Errors
/// [`Error::InvalidParam`] for bad parameters or an input over
/// [`MAX_BUFFERSIZE`]; [`Error::Unsupported`] for a codec this build lacks.
pub fn compress(src: &[u8], params: &CParams) -> Result<Vec<u8>> {
    Compressor::new(params.clone()).compress(src)
}

/// Compress `src` into `dst`; returns the chunk's size. As in C-Blosc2,
/// `dst.len()` bounds the output: when the compressed form does not fit the
/// data is stored raw, and when that does not fit either (`dst` shorter than
/// `src.len() + 32`) the call fails. The chunk never exceeds
/// [`max_compressed_len`]`(src.len())`, however large `dst` is (the room
/// python-blosc2 gives C-Blosc2, so the chunk is the one C writes for it);
/// [`Compressor::compress_into_all_room`] uses all of `dst`, as C's
/// `destsize`.
///
/// # Errors
/// As [`compress`], plus [`Error::DstTooSmall`].
pub fn compress_into(src: &[u8], dst: &mut [u8], params: &CParams) -> Result<usize> {
    Compressor::new(params.clone()).compress_into(src, dst)
}

/// Decompress a chunk into a new buffer of its declared size.
///
/// # Errors
/// [`Error::Truncated`], [`Error::InvalidHeader`], [`Error::Corrupt`] for bad
/// input; [`Error::Unsupported`] for chunks using what this build lacks.
pub fn decompress(src: &[u8]) -> Result<Vec<u8>> {
    Decompressor::new(DParams::default()).decompress(src)
}

/// Decompress a chunk into `dst`; returns the number of bytes written.
///
/// # Errors
/// As [`decompress`], plus [`Error::DstTooSmall`].
pub fn decompress_into(src: &[u8], dst: &mut [u8], params: &DParams) -> Result<usize> {
    Decompressor::new(params.clone()).decompress_into(src, dst)
}

/// Items `[start, start + nitems)` of a chunk, in units of its header's type
/// size, decoding only the blocks they lie in.
///
/// # Errors
/// As [`decompress`], plus [`Error::InvalidParam`] for a range outside the
/// chunk or a VL-block chunk.
pub fn getitem(src: &[u8], start: usize, nitems: usize) -> Result<Vec<u8>> {
    Decompressor::new(DParams::default()).getitem(src, start, nitems)
}

/// Compress a slice of plain-old-data items; the type size is `size_of::<T>()`.
///
/// # Errors
/// As [`compress`].
pub fn compress_typed<T: bytemuck::Pod>(src: &[T], params: &CParams) -> Result<Vec<u8>> {
    let p = params.clone().typesize(std::mem::size_of::<T>().max(1));
    compress(bytemuck::cast_slice(src), &p)
}

/// Decompress a chunk of `T` items into a `Vec<T>` (properly aligned).
///
/// # Errors
/// As [`decompress`], plus [`Error::Corrupt`] when the size is not a whole
/// number of items.
pub fn decompress_typed<T: bytemuck::Pod>(src: &[u8]) -> Result<Vec<T>> {
    let h = chunk::validate(src)?;
    let size = std::mem::size_of::<T>().max(1);
    if h.nbytes % size != 0 {
        return Err(Error::Corrupt(format!(
            "chunk holds {} bytes, not a whole number of {size}-byte items",
            h.nbytes
        )));
    }
    let mut out: Vec<T> = vec![T::zeroed(); h.nbytes / size];
    decompress_into(src, bytemuck::cast_slice_mut(&mut out), &DParams::default())?;
    Ok(out)
}

/// The README's Rust examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
