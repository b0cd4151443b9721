//! [`NdArray`]: an NDArray super-chunk opened for reading, and its logical
//! C-order array reassembled from the padded chunks and blocks.

use std::io::Write;

use super::layout::Layout;
use super::meta::{B2ND_META, CATERVA_META, NdMeta};
use super::npy::{NpyHeader, dtype_itemsize};
use crate::error::{Error, Result};
use crate::schunk::SChunk;

/// The most bytes [`NdArray::write_to`] holds at once (one slab of chunks
/// along the first dimension): larger slabs are an error, not an
/// allocation.
pub const MAX_SLAB_BYTES: u64 = 1 << 32;

/// An NDArray: a super-chunk with a `b2nd` (or `caterva`) metalayer.
///
/// ```
/// use oxiblosc::ndarray::{self, NdArray, NdMeta};
/// use oxiblosc::CParams;
/// let data: Vec<u8> = (0..35u8).collect();
/// let meta = NdMeta::new(&[7, 5], &[3, 4], &[2, 3], "|u1");
/// let sc = ndarray::create(&meta, CParams::default(), &data).unwrap();
/// let mut a = NdArray::open(sc).unwrap();
/// assert_eq!(a.meta().shape, [7, 5]);
/// assert_eq!(a.to_vec().unwrap(), data);
/// ```
#[derive(Debug)]
pub struct NdArray {
    sc: SChunk,
    meta: NdMeta,
    layout: Layout,
    meta_name: &'static str,
}

/// The metalayer that makes `sc` an NDArray, if any: `b2nd`, else
/// `caterva`; its name and decoded content.
///
/// # Errors
/// [`NdMeta::decode`]'s, when the metalayer is there but malformed.
pub fn find_meta(sc: &SChunk) -> Result<Option<(&'static str, NdMeta)>> {
    for name in [B2ND_META, CATERVA_META] {
        if let Some(raw) = sc.meta_get(name) {
            return NdMeta::decode(raw).map(|m| Some((name, m)));
        }
    }
    Ok(None)
}

/// Whether `sc` carries an NDArray metalayer (`b2nd` or `caterva`).
pub fn is_ndarray(sc: &SChunk) -> bool {
    sc.meta_exists(B2ND_META) || sc.meta_exists(CATERVA_META)
}

impl NdArray {
    /// Open `sc` as an NDArray: its metalayer is decoded and checked
    /// against the super-chunk (type size, number of chunks, chunk size).
    ///
    /// # Errors
    /// [`Error::InvalidParam`] when `sc` has no `b2nd` or `caterva`
    /// metalayer; [`Error::Corrupt`] when the metalayer is malformed, its
    /// products overflow, its dtype's item size is not the super-chunk's
    /// type size, or it disagrees with the number or the size of the
    /// chunks.
    pub fn open(sc: SChunk) -> Result<NdArray> {
        let (meta_name, mut meta) = find_meta(&sc)?.ok_or_else(|| {
            Error::InvalidParam("not an NDArray: no b2nd or caterva metalayer".into())
        })?;
        let itemsize = sc.typesize();
        if !meta.has_dtype {
            meta.dtype = NdMeta::default_dtype(itemsize);
        }
        // A dtype this crate can size must agree with the type size; others
        // (structured ones) are carried as text, sized by the type size as
        // C-Blosc2 does.
        if let Ok(n) = dtype_itemsize(&meta.dtype)
            && n != itemsize
        {
            return Err(Error::Corrupt(format!(
                "b2nd metalayer: dtype {} has {n}-byte items, the super-chunk's type size is \
                 {itemsize}",
                meta.dtype
            )));
        }
        let layout = Layout::new(&meta, itemsize)?;
        if layout.nchunks() != sc.nchunks() as u64 {
            return Err(Error::Corrupt(format!(
                "b2nd metalayer: shape {:?} in chunks {:?} makes {} chunks, the super-chunk has {}",
                meta.shape,
                meta.chunkshape,
                layout.nchunks(),
                sc.nchunks()
            )));
        }
        if let Some(cs) = sc.chunksize()
            && sc.nchunks() > 0
            && cs != layout.chunk_nbytes()
        {
            return Err(Error::Corrupt(format!(
                "b2nd metalayer: chunks {:?} in blocks {:?} are {} bytes, the super-chunk's \
                 chunks are {cs}",
                meta.chunkshape,
                meta.blockshape,
                layout.chunk_nbytes()
            )));
        }
        Ok(NdArray {
            sc,
            meta,
            layout,
            meta_name,
        })
    }

    /// The metalayer's content (for a `caterva` one, `dtype` is the
    /// default for the type size).
    pub fn meta(&self) -> &NdMeta {
        &self.meta
    }
    /// The geometry.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }
    /// `b2nd` or `caterva`: the metalayer the array was read from.
    pub fn meta_name(&self) -> &'static str {
        self.meta_name
    }
    /// The super-chunk.
    pub fn schunk(&mut self) -> &mut SChunk {
        &mut self.sc
    }
    /// The super-chunk, giving up the array view.
    pub fn into_schunk(self) -> SChunk {
        self.sc
    }
    /// Bytes of the logical array.
    pub fn nbytes(&self) -> u64 {
        self.layout.nbytes()
    }
    /// The `.npy` header of the array.
    pub fn npy_header(&self) -> NpyHeader {
        NpyHeader {
            dtype: self.meta.dtype.clone(),
            shape: self.meta.shape.clone(),
        }
    }

    /// [`crate::DParams::max_output`] against the chunk size, before
    /// anything is sized by it (the decoder would refuse every chunk
    /// only once its buffer is allocated).
    fn check_output(&self) -> Result<()> {
        if self.layout.nchunks() == 0 {
            return Ok(());
        }
        self.sc.dparams().check_output(self.layout.chunk_nbytes())
    }

    /// The rows `first..first + rows` of the first dimension (all of a
    /// 0-dimensional array) into `dst`, their C-order bytes, through
    /// [`super::get_slice`]: only the blocks of each chunk that hold items
    /// of the array are decoded (a chunk sticking far past the array's
    /// edge costs the blocks inside it, not the whole chunk, as C-Blosc2's
    /// `b2nd_to_cbuffer` masks them out), a zero chunk is not decoded, and
    /// a chunk that is one run of `dst` decodes straight into it.
    fn read_rows(&mut self, first: u64, rows: u64, dst: &mut [u8]) -> Result<()> {
        let mut start = vec![0; self.meta.ndim()];
        let mut stop = self.meta.shape.clone();
        if let (Some(s), Some(e)) = (start.first_mut(), stop.first_mut()) {
            *s = first;
            *e = first + rows;
        }
        let bshape: Vec<u64> = start.iter().zip(&stop).map(|(s, e)| e - s).collect();
        super::get_slice(&mut self.sc, &self.meta, &start, &stop, dst, &bshape)
    }

    /// The logical array in C order into `dst` (exactly
    /// [`NdArray::nbytes`] long).
    ///
    /// # Errors
    /// [`Error::InvalidParam`] for another length, or chunks larger than
    /// the super-chunk's [`crate::DParams::max_output`] (refused before
    /// any buffer is sized by them); the super-chunk's errors for bad
    /// chunks, [`Error::Corrupt`] for a chunk of the wrong size.
    pub fn read_into(&mut self, dst: &mut [u8]) -> Result<()> {
        if dst.len() as u64 != self.nbytes() {
            return Err(Error::InvalidParam(format!(
                "destination of {} bytes for an array of {}",
                dst.len(),
                self.nbytes()
            )));
        }
        // `get_slice` refuses a chunk over the output limit before sizing
        // anything by it.
        let rows = self.meta.shape.first().copied().unwrap_or(1);
        self.read_rows(0, rows, dst)
    }

    /// The logical array in C order.
    ///
    /// # Errors
    /// As [`NdArray::read_into`]; [`Error::InvalidParam`] when the array
    /// is larger than the super-chunk's [`crate::DParams::max_output`] (the
    /// whole array is this call's output: a frame of a few hundred bytes
    /// may hold gigabytes of zero chunks) or does not fit in memory (the
    /// allocation is tried, never assumed), before anything is allocated.
    pub fn to_vec(&mut self) -> Result<Vec<u8>> {
        self.check_output()?;
        let n = usize::try_from(self.nbytes())
            .map_err(|_| Error::InvalidParam("array larger than memory".into()))?;
        if let Some(limit) = self.sc.dparams().max_output.filter(|&l| n > l) {
            return Err(Error::InvalidParam(format!(
                "the array is {n} bytes, over the output limit of {limit}"
            )));
        }
        let mut v = Vec::new();
        v.try_reserve_exact(n)
            .map_err(|_| Error::InvalidParam(format!("cannot allocate {n} bytes for the array")))?;
        // Onto huge pages before the zeros are first written
        // (`perf/README.md`, session 41).
        oxiblosc_kernels::advise_huge_pages(&mut v);
        v.resize(n, 0);
        self.read_into(&mut v)?;
        Ok(v)
    }

    /// Write the logical array in C order to `w`, one slab of chunks along
    /// the first dimension at a time (memory: one slab, at most
    /// [`MAX_SLAB_BYTES`]).
    ///
    /// # Errors
    /// As [`NdArray::read_into`]; [`Error::Io`] from `w`;
    /// [`Error::Unsupported`] for a slab over [`MAX_SLAB_BYTES`].
    pub fn write_to(&mut self, w: &mut dyn Write) -> Result<()> {
        let nchunks = self.layout.nchunks();
        if nchunks == 0 {
            return Ok(());
        }
        self.check_output()?;
        let is = self.layout.itemsize() as u64;
        let row = self.layout.row_items();
        let (slabs, rows_per_slab, dim0) = match self.meta.shape.first() {
            Some(&d0) => (self.layout.grid()[0], self.meta.chunkshape[0], d0),
            None => (1, 1, 1),
        };
        let mut buf = Vec::new();
        for s in 0..slabs {
            let first_row = s * rows_per_slab;
            let rows = rows_per_slab.min(dim0 - first_row);
            let bytes = rows * row * is;
            if bytes > MAX_SLAB_BYTES {
                return Err(Error::Unsupported(format!(
                    "a slab of {bytes} bytes (chunk rows of the array) is over \
                     {MAX_SLAB_BYTES}; read it with read_into"
                )));
            }
            let bytes = bytes as usize;
            if buf.len() < bytes {
                buf.try_reserve_exact(bytes - buf.len())
                    .map_err(|_| Error::InvalidParam(format!("cannot allocate {bytes} bytes")))?;
                buf.resize(bytes, 0);
            }
            self.read_rows(first_row, rows, &mut buf[..bytes])?;
            w.write_all(&buf[..bytes])?;
        }
        Ok(())
    }

    /// Write the array as a `.npy` file to `w` (header, then the data).
    ///
    /// # Errors
    /// [`Error::Unsupported`] before anything is written when the array's
    /// dtype is not one numpy reads as its items (see
    /// [`npy_itemsize`](super::npy_itemsize): a frame's dtype is any text,
    /// and an object dtype would make numpy unpickle the data); else as
    /// [`NdArray::write_to`].
    pub fn write_npy(&mut self, w: &mut dyn Write) -> Result<()> {
        let dtype = &self.meta.dtype;
        let is = self.layout.itemsize();
        match super::npy_itemsize(dtype) {
            Ok(n) if n == is => {}
            Ok(n) => {
                return Err(Error::Unsupported(format!(
                    "dtype {dtype:?} has {n}-byte items, the array {is}-byte ones: no .npy of it"
                )));
            }
            Err(e) => {
                return Err(Error::Unsupported(format!(
                    "no .npy header can say dtype {dtype:?}: {e}"
                )));
            }
        }
        w.write_all(&self.npy_header().encode())?;
        self.write_to(w)
    }
}
