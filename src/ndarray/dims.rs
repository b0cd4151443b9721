//! Dimensions of length 1 added to or removed from an NDArray: the same
//! items in the same C order under another shape ([`NdMeta::squeeze`],
//! [`NdMeta::squeeze_index`], [`NdMeta::expand_dims`]), and a new
//! super-chunk holding them ([`with_dims`]), as C-Blosc2's `b2nd_squeeze`,
//! `b2nd_squeeze_index` and `b2nd_expand_dims` make their views.

use super::layout::Layout;
use super::meta::{B2ND_META, CATERVA_META, MAX_DIM, NdMeta};
use super::slice::{get_slice, layout_of};
use crate::error::{Error, Result};
use crate::schunk::SChunk;

impl NdMeta {
    /// This array without its dimensions of length 1 (chunk and block
    /// shapes dropped with them), as C-Blosc2's `b2nd_squeeze`.
    ///
    /// ```
    /// use oxiblosc::ndarray::NdMeta;
    /// let m = NdMeta::new(&[1, 7, 1], &[1, 5, 1], &[1, 2, 1], "<f4");
    /// let s = m.squeeze();
    /// assert_eq!((s.shape, s.chunkshape, s.blockshape), (vec![7], vec![5], vec![2]));
    /// ```
    pub fn squeeze(&self) -> NdMeta {
        let index: Vec<bool> = self.shape.iter().map(|&s| s == 1).collect();
        self.squeeze_index(&index)
            .expect("every marked dimension has length 1")
    }

    /// This array without the dimensions `index` marks (`true`), each of
    /// length 1, as C-Blosc2's `b2nd_squeeze_index`.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] when `index` has another length than the
    /// array's dimensions, or marks a dimension whose length is not 1.
    pub fn squeeze_index(&self, index: &[bool]) -> Result<NdMeta> {
        let n = self.ndim();
        if index.len() != n || self.chunkshape.len() != n || self.blockshape.len() != n {
            return Err(Error::InvalidParam(format!(
                "{} squeeze flags for an array of {n} dimensions",
                index.len()
            )));
        }
        if let Some(d) = (0..n).find(|&d| index[d] && self.shape[d] != 1) {
            return Err(Error::InvalidParam(format!(
                "dimension {d} has length {}, not 1: it cannot be squeezed",
                self.shape[d]
            )));
        }
        let keep =
            |v: &[u64]| -> Vec<u64> { (0..n).filter(|&d| !index[d]).map(|d| v[d]).collect() };
        Ok(NdMeta {
            shape: keep(&self.shape),
            chunkshape: keep(&self.chunkshape),
            blockshape: keep(&self.blockshape),
            ..self.clone()
        })
    }

    /// This array with a new dimension of length 1 (chunk and block 1) at
    /// each place `axis` marks: `axis` has one flag per dimension of the
    /// result, its unmarked places taking the array's dimensions in order,
    /// as C-Blosc2's `b2nd_expand_dims`.
    ///
    /// ```
    /// use oxiblosc::ndarray::NdMeta;
    /// let m = NdMeta::new(&[10], &[7], &[2], "|u1");
    /// let e = m.expand_dims(&[true, false, true]).unwrap();
    /// assert_eq!((e.shape, e.chunkshape, e.blockshape),
    ///            (vec![1, 10, 1], vec![1, 7, 1], vec![1, 2, 1]));
    /// ```
    ///
    /// # Errors
    /// [`Error::InvalidParam`] when `axis` has more than [`MAX_DIM`] flags
    /// or its unmarked places are not as many as the array's dimensions.
    pub fn expand_dims(&self, axis: &[bool]) -> Result<NdMeta> {
        let n = self.ndim();
        let kept = axis.iter().filter(|&&a| !a).count();
        if axis.len() > MAX_DIM
            || kept != n
            || self.chunkshape.len() != n
            || self.blockshape.len() != n
        {
            return Err(Error::InvalidParam(format!(
                "{} new-axis flags ({kept} unmarked) for an array of {n} dimensions \
                 (at most {MAX_DIM} in all)",
                axis.len()
            )));
        }
        let mut out = NdMeta {
            shape: Vec::with_capacity(axis.len()),
            chunkshape: Vec::with_capacity(axis.len()),
            blockshape: Vec::with_capacity(axis.len()),
            ..self.clone()
        };
        let mut d = 0;
        for &new in axis {
            let (s, c, b) = if new {
                (1, 1, 1)
            } else {
                d += 1;
                (
                    self.shape[d - 1],
                    self.chunkshape[d - 1],
                    self.blockshape[d - 1],
                )
            };
            out.shape.push(s);
            out.chunkshape.push(c);
            out.blockshape.push(b);
        }
        Ok(out)
    }
}

/// Whether the NDArrays `a` and `b` describe place every item at the same
/// byte of the same chunk: they differ at most in dimensions of length 1
/// with chunks and blocks of 1. Then one super-chunk holds both (what
/// [`with_dims`] copies as it is; the C ABI's views share it).
///
/// ```
/// use oxiblosc::ndarray::{NdMeta, same_chunks};
/// let m = NdMeta::new(&[7, 5], &[3, 4], &[2, 3], "|u1");
/// assert!(same_chunks(&m, &m.expand_dims(&[true, false, false]).unwrap()));
/// let long = NdMeta::new(&[1, 7], &[2, 3], &[2, 3], "|u1");
/// assert!(!same_chunks(&long, &long.squeeze()));
/// ```
pub fn same_chunks(a: &NdMeta, b: &NdMeta) -> bool {
    placing(a) == placing(b)
}

/// The dimensions that place items: all but those of length 1 with chunks
/// and blocks of 1 (which change no offset in a chunk or the array).
fn placing(m: &NdMeta) -> Vec<(u64, u64, u64)> {
    (0..m.ndim())
        .map(|d| (m.shape[d], m.chunkshape[d], m.blockshape[d]))
        .filter(|&t| t != (1, 1, 1))
        .collect()
}

/// A new in-memory super-chunk holding the items of the NDArray in `sc`
/// (described by `meta`) under `new`, a shape with the same items in the
/// same C order (dimensions of length 1 added or removed: see
/// [`NdMeta::squeeze`] and [`NdMeta::expand_dims`]), with `sc`'s
/// parameters, other metalayers and vlmetalayers. When the items sit in
/// the same bytes of the same chunks (the dimensions added or removed have
/// chunks and blocks of 1) the compressed chunks are copied as they are;
/// otherwise each new chunk is gathered from the old ones and compressed.
///
/// ```
/// use oxiblosc::ndarray::{self, NdMeta, with_dims, get_slice};
/// use oxiblosc::CParams;
/// let data: Vec<u8> = (0..35u8).collect();
/// let meta = NdMeta::new(&[7, 5], &[3, 4], &[2, 3], "|u1");
/// let mut sc = ndarray::create(&meta, CParams::default(), &data).unwrap();
/// let wide = meta.expand_dims(&[false, true, false]).unwrap();
/// let mut view = with_dims(&mut sc, &meta, &wide).unwrap();
/// let mut all = [0u8; 35];
/// get_slice(&mut view, &wide, &[0, 0, 0], &[7, 1, 5], &mut all, &[7, 1, 5]).unwrap();
/// assert_eq!(&all[..], &data[..]);
/// ```
///
/// # Errors
/// [`Error::InvalidParam`] when `new` does not hold the same items in the
/// same order, or its layout is refused ([`Layout::new`]); [`get_slice`]'s
/// errors (a chunk that does not back the metalayer is refused); the
/// super-chunk's errors.
pub fn with_dims(sc: &mut SChunk, meta: &NdMeta, new: &NdMeta) -> Result<SChunk> {
    let cparams = sc.compress_params().clone();
    with_dims_in(sc, meta, new, cparams, |b| b.build_memory())
}

/// [`with_dims`] into a super-chunk that `build` makes from the prepared
/// builder (in memory, in a file or in a directory), whose later writes
/// compress with `cparams` (its type size and block size the array's):
/// its chunks are the source's, copied as they are, or, where they must be
/// gathered, compressed with `cparams`. With `new` equal to `meta`, a copy
/// of the array that decodes nothing, as C-Blosc2's `b2nd_copy` makes one
/// when the chunk and block shapes do not change.
///
/// ```
/// use oxiblosc::ndarray::{self, NdMeta, with_dims_in, get_slice};
/// use oxiblosc::{CParams, Codec};
/// let data: Vec<u8> = (0..35u8).collect();
/// let meta = NdMeta::new(&[7, 5], &[3, 4], &[2, 3], "|u1");
/// let mut sc = ndarray::create(&meta, CParams::default(), &data).unwrap();
/// let lz4 = CParams::default().codec(Codec::Lz4);
/// let mut copy = with_dims_in(&mut sc, &meta, &meta, lz4, |b| b.build_memory()).unwrap();
/// assert_eq!(copy.get_chunk(0).unwrap(), sc.get_chunk(0).unwrap());
/// let mut all = [0u8; 35];
/// get_slice(&mut copy, &meta, &[0, 0], &[7, 5], &mut all, &[7, 5]).unwrap();
/// assert_eq!(&all[..], &data[..]);
/// ```
///
/// # Errors
/// As [`with_dims`]; `build`'s errors.
pub fn with_dims_in(
    sc: &mut SChunk,
    meta: &NdMeta,
    new: &NdMeta,
    cparams: crate::CParams,
    build: impl FnOnce(crate::schunk::SChunkBuilder) -> Result<SChunk>,
) -> Result<SChunk> {
    let long = |m: &NdMeta| -> Vec<u64> { m.shape.iter().copied().filter(|&s| s != 1).collect() };
    if long(meta) != long(new) || meta.nitems() != new.nitems() {
        return Err(Error::InvalidParam(format!(
            "a shape of {:?} does not hold the items of one of {:?} in the same order",
            new.shape, meta.shape
        )));
    }
    let old_layout = layout_of(sc, meta)?;
    let is = sc.typesize();
    let layout = Layout::new(new, is).map_err(|e| match e {
        Error::Corrupt(m) => Error::InvalidParam(m),
        o => o,
    })?;
    let mut b = super::write::builder_of(new, cparams, is, &layout)?
        .dparams(sc.dparams().clone())
        .fsync(false);
    for m in sc.metalayers() {
        if m.name != B2ND_META && m.name != CATERVA_META {
            b = b.meta(&m.name, &m.content);
        }
    }
    let mut out = build(b)?;
    let names: Vec<String> = sc.vlmeta_names().into_iter().map(String::from).collect();
    for name in names {
        if let Some(v) = sc.vlmeta_get(&name)? {
            out.vlmeta_set(&name, &v)?;
        }
    }
    let want = layout.chunk_nbytes();
    if placing(meta) == placing(new) {
        // The same chunks: copied compressed, each checked to back the
        // metalayer (as a read would check it) before it is stored.
        for ci in 0..old_layout.nchunks() as usize {
            let chunk = sc.get_chunk(ci)?;
            let h = crate::chunk::validate(&chunk)?;
            if h.nbytes != want {
                return Err(Error::Corrupt(format!(
                    "chunk {ci} holds {} bytes, the NDArray's metalayer gives {want}",
                    h.nbytes
                )));
            }
            out.append_chunk(&chunk)?;
        }
        return Ok(out);
    }
    // Other chunks: each new chunk's box read from the old array (its
    // dimensions of length 1 are whole in both shapes, so a box's items
    // come in the same C order) and scattered into the chunk.
    let n = new.ndim();
    let mut comp = crate::Compressor::new(super::slice::chunk_cparams(&out, &layout));
    let mut buf = Vec::new();
    let mut tmp = Vec::new();
    let grid = layout.grid().to_vec();
    let mut cc = vec![0u64; n];
    for ci in 0..layout.nchunks() {
        if ci > 0 {
            // The next chunk's coordinates (C order of the grid).
            for d in (0..n).rev() {
                cc[d] += 1;
                if cc[d] < grid[d] {
                    break;
                }
                cc[d] = 0;
            }
        }
        let lo: Vec<u64> = (0..n).map(|d| cc[d] * new.chunkshape[d]).collect();
        let hi: Vec<u64> = (0..n)
            .map(|d| (lo[d] + new.chunkshape[d]).min(new.shape[d]))
            .collect();
        let bshape: Vec<u64> = (0..n).map(|d| hi[d] - lo[d]).collect();
        // The same box in the old dimensions: the long ones in order, the
        // others 0..1.
        let (mut olo, mut ohi) = (vec![0u64; meta.ndim()], meta.shape.clone());
        let mut k = 0;
        for d in 0..meta.ndim() {
            if meta.shape[d] != 1 {
                while new.shape[k] == 1 {
                    k += 1;
                }
                olo[d] = lo[k];
                ohi[d] = hi[k];
                k += 1;
            }
        }
        let oshape: Vec<u64> = (0..meta.ndim()).map(|d| ohi[d] - olo[d]).collect();
        let items: u64 = bshape.iter().product();
        tmp.clear();
        tmp.resize(items as usize * is, 0);
        get_slice(sc, meta, &olo, &ohi, &mut tmp, &oshape)?;
        if buf.is_empty() {
            // Within the decoder's output limit, as a read's chunk is.
            sc.dparams().check_output(want)?;
            buf = vec![0u8; want];
        }
        buf.fill(0);
        layout.for_each_box_span(ci, &lo, &hi, &bshape, |c, b, k| {
            buf[c * is..(c + k) * is].copy_from_slice(&tmp[b * is..(b + k) * is]);
        });
        out.append_chunk(&comp.compress(&buf)?)?;
    }
    Ok(out)
}
