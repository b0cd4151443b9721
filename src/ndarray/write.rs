//! Building an NDArray super-chunk from a C-order buffer: the `b2nd`
//! metalayer, chunks padded to their full extent, and default chunk and
//! block shapes.

use super::layout::Layout;
use super::meta::{B2ND_META, NdMeta};
use crate::error::{Error, Result};
use crate::params::CParams;
use crate::schunk::{SChunk, SChunkBuilder};

/// The chunk size [`default_shapes`] aims at (bytes).
pub const DEFAULT_CHUNK_BYTES: u64 = 4 << 20;
/// The block size [`default_shapes`] aims at (bytes).
pub const DEFAULT_BLOCK_BYTES: u64 = 64 << 10;

/// Shrink `dims` (starting from the whole `shape`) until its product times
/// `itemsize` is at most `target`, halving the outermost dimension above 1
/// first, as python-blosc2's defaults favour whole inner rows.
fn fit(shape: &[u64], itemsize: u64, target: u64) -> Vec<u64> {
    let mut dims: Vec<u64> = shape.iter().map(|&d| d.max(1)).collect();
    let bytes = |d: &[u64]| {
        d.iter()
            .try_fold(itemsize, |a, &x| a.checked_mul(x))
            .unwrap_or(u64::MAX)
    };
    while bytes(&dims) > target {
        match dims.iter().position(|&d| d > 1) {
            Some(i) => dims[i] = dims[i].div_ceil(2),
            None => break,
        }
    }
    dims
}

/// Chunk and block shapes for an array of `shape` with items of `itemsize`
/// bytes: chunks of about [`DEFAULT_CHUNK_BYTES`] and blocks of about
/// [`DEFAULT_BLOCK_BYTES`], both cut from the outer dimensions first (an
/// empty array gets its shape as both, as python-blosc2 does).
pub fn default_shapes(shape: &[u64], itemsize: usize) -> (Vec<u64>, Vec<u64>) {
    if shape.contains(&0) {
        return (shape.to_vec(), shape.to_vec());
    }
    let is = itemsize.max(1) as u64;
    let chunks = fit(shape, is, DEFAULT_CHUNK_BYTES.max(is));
    let blocks = fit(&chunks, is, DEFAULT_BLOCK_BYTES.max(is));
    (chunks, blocks)
}

/// A builder for the NDArray `meta` describes: the `b2nd` metalayer, a
/// chunk size of one padded chunk, and `cparams` with the type size of
/// one item and the block size of one block. Build it in memory, in a file
/// or a directory, then [`fill`] it.
///
/// # Errors
/// [`Layout::new`]'s and [`NdMeta::encode`]'s errors;
/// [`Error::InvalidParam`] when the dtype's item size is unknown
/// ([`super::dtype_itemsize`]) or the block is larger than a chunk can be.
pub fn builder(meta: &NdMeta, cparams: CParams) -> Result<SChunkBuilder> {
    let itemsize = super::dtype_itemsize(&meta.dtype)?;
    let layout = Layout::new(meta, itemsize).map_err(to_param)?;
    let raw = meta.encode()?;
    let mut b = SChunk::builder()
        .cparams(
            cparams
                .typesize(itemsize)
                .blocksize(if layout.nchunks() == 0 {
                    0
                } else {
                    layout.block_nbytes()
                }),
        )
        .meta(B2ND_META, &raw);
    if layout.nchunks() > 0 {
        b = b.chunksize(layout.chunk_nbytes());
    }
    Ok(b)
}

fn to_param(e: Error) -> Error {
    match e {
        Error::Corrupt(m) => Error::InvalidParam(m),
        other => other,
    }
}

/// Append the chunks of the C-order array `data` to `sc`, an empty
/// super-chunk made by [`builder`] for the same `meta`: each chunk gathered
/// from the array, its padding zero.
///
/// # Errors
/// [`Error::InvalidParam`] when `data` is not exactly the array's size or
/// `sc` already has chunks; the super-chunk's errors.
pub fn fill(sc: &mut SChunk, meta: &NdMeta, data: &[u8]) -> Result<()> {
    let itemsize = super::dtype_itemsize(&meta.dtype)?;
    let layout = Layout::new(meta, itemsize).map_err(to_param)?;
    if data.len() as u64 != layout.nbytes() {
        return Err(Error::InvalidParam(format!(
            "{} bytes of data for an array of {} bytes (shape {:?}, dtype {})",
            data.len(),
            layout.nbytes(),
            meta.shape,
            meta.dtype
        )));
    }
    if sc.nchunks() != 0 {
        return Err(Error::InvalidParam(
            "the super-chunk already has chunks".into(),
        ));
    }
    let is = itemsize;
    let mut buf = vec![0u8; layout.chunk_nbytes()];
    for ci in 0..layout.nchunks() {
        buf.fill(0);
        layout.for_each_run(ci, |c, a, n| {
            let a = a as usize * is;
            buf[c * is..(c + n) * is].copy_from_slice(&data[a..a + n * is]);
        });
        sc.append_buffer(&buf)?;
    }
    Ok(())
}

/// A new in-memory NDArray super-chunk holding the C-order array `data`
/// ([`builder`] then [`fill`]); `to_cframe` gives its file bytes.
///
/// # Errors
/// As [`builder`] and [`fill`].
pub fn create(meta: &NdMeta, cparams: CParams, data: &[u8]) -> Result<SChunk> {
    let mut sc = builder(meta, cparams)?.build_memory()?;
    fill(&mut sc, meta, data)?;
    Ok(sc)
}
