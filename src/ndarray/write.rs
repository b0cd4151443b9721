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
    builder_of(meta, cparams, itemsize, &layout)
}

/// [`builder`] for items of `itemsize` bytes laid out as `layout` (of
/// `meta`, checked by the caller).
pub(super) fn builder_of(
    meta: &NdMeta,
    cparams: CParams,
    itemsize: usize,
    layout: &Layout,
) -> Result<SChunkBuilder> {
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
        layout.for_each_span(ci, |c, a, n| {
            let a = a as usize * is;
            buf[c * is..(c + n) * is].copy_from_slice(&data[a..a + n * is]);
        });
        sc.append_buffer(&buf)?;
    }
    Ok(())
}

/// [`fill`] from a reader: the C-order array is read one slab of chunks
/// along the first dimension at a time (memory: one slab and one chunk, the
/// slab at most [`super::MAX_SLAB_BYTES`]). Reads exactly the array's bytes.
///
/// # Errors
/// As [`fill`]; [`Error::Io`] when `r` fails or ends early;
/// [`Error::Unsupported`] for a slab over [`super::MAX_SLAB_BYTES`].
pub fn fill_from(sc: &mut SChunk, meta: &NdMeta, r: &mut dyn std::io::Read) -> Result<()> {
    let itemsize = super::dtype_itemsize(&meta.dtype)?;
    let layout = Layout::new(meta, itemsize).map_err(to_param)?;
    if sc.nchunks() != 0 {
        return Err(Error::InvalidParam(
            "the super-chunk already has chunks".into(),
        ));
    }
    let nchunks = layout.nchunks();
    if nchunks == 0 {
        return Ok(());
    }
    let is = itemsize;
    let row = layout.row_items();
    let (slabs, rows_per_slab, dim0) = match meta.shape.first() {
        Some(&d0) => (layout.grid()[0], meta.chunkshape[0], d0),
        None => (1, 1, 1),
    };
    let per_slab = nchunks / slabs;
    let mut slab = Vec::new();
    let mut buf = vec![0u8; layout.chunk_nbytes()];
    for s in 0..slabs {
        let first_row = s * rows_per_slab;
        let bytes = rows_per_slab.min(dim0 - first_row) * row * is as u64;
        if bytes > super::MAX_SLAB_BYTES {
            return Err(Error::Unsupported(format!(
                "a slab of {bytes} bytes (chunk rows of the array) is over {}",
                super::MAX_SLAB_BYTES
            )));
        }
        let bytes = bytes as usize;
        if slab.len() < bytes {
            slab.try_reserve_exact(bytes - slab.len())
                .map_err(|_| Error::InvalidParam(format!("cannot allocate {bytes} bytes")))?;
        }
        slab.resize(bytes, 0);
        r.read_exact(&mut slab)?;
        let base = first_row * row;
        for ci in s * per_slab..(s + 1) * per_slab {
            buf.fill(0);
            layout.for_each_span(ci, |c, a, n| {
                let a = (a - base) as usize * is;
                buf[c * is..(c + n) * is].copy_from_slice(&slab[a..a + n * is]);
            });
            sc.append_buffer(&buf)?;
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ndarray::NdArray;

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
        /// Any geometry and item size: what we write reads back, whole and
        /// slab by slab, and reopens from the frame's bytes.
        #[test]
        fn random_arrays_round_trip(
            dims in proptest::collection::vec((1u64..9, 1u64..9, 1u64..9), 0..4),
            itemsize in 1usize..9,
            seed in 0u8..255,
        ) {
            let shape: Vec<u64> = dims.iter().map(|d| d.0).collect();
            let chunks: Vec<u64> = dims.iter().map(|d| d.1).collect();
            let blocks: Vec<u64> = dims.iter().map(|d| d.2.min(d.1)).collect();
            let dtype = format!("|V{itemsize}");
            let meta = NdMeta::new(&shape, &chunks, &blocks, &dtype);
            let n = shape.iter().product::<u64>() as usize * itemsize;
            let data: Vec<u8> = (0..n).map(|i| (i as u8).wrapping_mul(31) ^ seed).collect();
            let mut sc = create(&meta, CParams::default(), &data).unwrap();
            let bytes = sc.to_cframe().unwrap();
            let mut streamed_sc = builder(&meta, CParams::default()).unwrap().build_memory().unwrap();
            fill_from(&mut streamed_sc, &meta, &mut &data[..]).unwrap();
            proptest::prop_assert_eq!(&streamed_sc.to_cframe().unwrap(), &bytes);
            let mut a = NdArray::open(sc).unwrap();
            proptest::prop_assert_eq!(a.to_vec().unwrap(), data.clone());
            let mut streamed = Vec::new();
            a.write_to(&mut streamed).unwrap();
            proptest::prop_assert_eq!(&streamed, &data);
            let mut b = NdArray::open(SChunk::from_cframe(bytes).unwrap()).unwrap();
            proptest::prop_assert_eq!(b.meta(), &meta);
            proptest::prop_assert_eq!(b.to_vec().unwrap(), data);
        }

        /// Random bytes as a metalayer: an error or a checked value, never
        /// a panic.
        #[test]
        fn random_metalayers_never_panic(raw in proptest::collection::vec(proptest::num::u8::ANY, 0..80)) {
            if let Ok(m) = NdMeta::decode(&raw) {
                let _ = Layout::new(&m, 1);
            }
        }
    }

    #[test]
    fn wrong_sizes_are_errors() {
        let meta = NdMeta::new(&[4, 4], &[2, 2], &[1, 1], "<i2");
        assert!(create(&meta, CParams::default(), &[0; 31]).is_err());
        let bad = NdMeta::new(&[4, 4], &[2, 0], &[1, 0], "<i2");
        assert!(create(&bad, CParams::default(), &[0; 32]).is_err());
        let obj = NdMeta::new(&[4], &[2], &[1], "|O");
        assert!(create(&obj, CParams::default(), &[0; 32]).is_err());
        let mut sc = create(&meta, CParams::default(), &[0; 32]).unwrap();
        assert!(
            fill(&mut sc, &meta, &[0; 32]).is_err(),
            "already has chunks"
        );
    }
}
