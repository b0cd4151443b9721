//! The `SChunk` class and its `meta` / `vlmeta` mappings.

use oxiblosc::ChunkHeader;
use oxiblosc::schunk::{OpenOptions as RsOpenOptions, SChunk as RsSChunk, Storage};
use pyo3::exceptions::{PyIOError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

use crate::buffers::Buf;
use crate::calls::{decompress_to, threads, with_compressor};
use crate::errors::to_py;
use crate::params::cparams_from;

/// A super-chunk: a sequence of compressed chunks in a frame held in memory
/// (`to_cframe` / `from_cframe`), in a file (`.b2frame`) or in a directory
/// (sparse frame), with metalayers and variable-length metalayers. The
/// frames are C-Blosc2's: python-blosc2 opens ours and we open its.
///
/// ``SChunk(chunksize=None, data=None, urlpath=None, contiguous=True,
/// meta=None, mode="a", **cparams)`` creates one (or opens an existing
/// ``urlpath`` when ``mode`` is ``"r"`` or ``"a"`` and it exists; ``"w"``
/// replaces it); ``data`` is cut into ``chunksize`` pieces and appended; the
/// compression keywords are those of `compress2`.
#[pyclass(unsendable, module = "oxiblosc")]
pub(crate) struct SChunk {
    inner: RsSChunk,
}

#[pymethods]
impl SChunk {
    #[new]
    #[pyo3(signature = (chunksize=None, data=None, urlpath=None, contiguous=true, meta=None,
        mode="a", *, codec=None, clevel=None, typesize=None, filters=None, filters_meta=None,
        blocksize=None, splitmode=None, nthreads=None, use_dict=false))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        chunksize: Option<usize>,
        data: Option<&Bound<'_, PyAny>>,
        urlpath: Option<std::path::PathBuf>,
        contiguous: bool,
        meta: Option<&Bound<'_, PyDict>>,
        mode: &str,
        codec: Option<&Bound<'_, PyAny>>,
        clevel: Option<i64>,
        typesize: Option<usize>,
        filters: Option<&Bound<'_, PyAny>>,
        filters_meta: Option<Vec<i64>>,
        blocksize: Option<usize>,
        splitmode: Option<&Bound<'_, PyAny>>,
        nthreads: Option<usize>,
        use_dict: bool,
    ) -> PyResult<SChunk> {
        if !matches!(mode, "r" | "a" | "w") {
            return Err(PyValueError::new_err(format!(
                "mode must be 'r', 'a' or 'w', not {mode:?}"
            )));
        }
        if let Some(path) = &urlpath
            && path.exists()
            && mode != "w"
        {
            let inner = RsOpenOptions::new()
                .read_only(mode == "r")
                .open(path)
                .map_err(to_py)?;
            return Ok(SChunk { inner });
        }
        if mode == "r" {
            return Err(PyIOError::new_err(format!(
                "no such frame: {:?}",
                urlpath.unwrap_or_default()
            )));
        }
        let p = cparams_from(
            codec,
            clevel,
            typesize,
            8,
            filters,
            filters_meta,
            blocksize,
            splitmode,
            nthreads,
            use_dict,
        )?;
        let mut b = RsSChunk::builder().cparams(p);
        if let Some(cs) = chunksize {
            b = b.chunksize(cs);
        }
        if let Some(m) = meta {
            for (k, v) in m.iter() {
                let name: String = k.extract()?;
                let vb = Buf::get(&v, "a meta value", false)?;
                b = b.meta(&name, vb.as_slice());
            }
        }
        let mut inner = match &urlpath {
            None => b.build_memory(),
            Some(path) => {
                if path.exists() {
                    if path.is_dir() {
                        std::fs::remove_dir_all(path)?;
                    } else {
                        std::fs::remove_file(path)?;
                    }
                }
                if contiguous {
                    b.create_file(path)
                } else {
                    b.create_dir(path)
                }
            }
        }
        .map_err(to_py)?;
        if let Some(d) = data {
            let d = Buf::get(d, "data", false)?;
            let bytes = d.as_slice();
            let cs = chunksize.unwrap_or(bytes.len().max(1));
            for piece in bytes.chunks(cs) {
                append_compressed(py, &mut inner, piece)?;
            }
        }
        Ok(SChunk { inner })
    }

    /// Open a frame file (`.b2frame`) or a sparse frame (directory).
    #[staticmethod]
    #[pyo3(signature = (urlpath, mode="a", offset=0))]
    fn open(urlpath: std::path::PathBuf, mode: &str, offset: u64) -> PyResult<SChunk> {
        let inner = RsOpenOptions::new()
            .read_only(mode == "r")
            .offset(offset)
            .open(urlpath)
            .map_err(to_py)?;
        Ok(SChunk { inner })
    }

    /// An in-memory super-chunk from a contiguous frame (`to_cframe`'s or
    /// python-blosc2's `schunk.to_cframe()`). The bytes are copied.
    #[staticmethod]
    fn from_cframe(cframe: &Bound<'_, PyAny>) -> PyResult<SChunk> {
        let b = Buf::get(cframe, "cframe", false)?;
        let inner = RsSChunk::from_cframe(b.as_slice().to_vec()).map_err(to_py)?;
        Ok(SChunk { inner })
    }

    /// The whole super-chunk as one contiguous frame (`bytes`).
    #[allow(clippy::wrong_self_convention)] // python-blosc2's name
    fn to_cframe<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        // Written straight into the `bytes` (no second copy of the frame).
        // Laid out once (a directory frame's chunk headers read once).
        let layout = self.inner.cframe_layout().map_err(to_py)?;
        let n = usize::try_from(layout.frame_len())
            .map_err(|_| PyValueError::new_err("frame too large"))?;
        PyBytes::new_with(py, n, |dst| layout.write_into(dst).map(drop).map_err(to_py))
    }

    /// Compress `data` with the super-chunk's parameters and append it as a
    /// new chunk (the GIL is released while compressing). Returns the new
    /// number of chunks.
    fn append_data(&mut self, py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<usize> {
        let d = Buf::get(data, "data", false)?;
        append_compressed(py, &mut self.inner, d.as_slice())
    }

    /// Append an already compressed Blosc2 chunk. Returns the new number of
    /// chunks.
    fn append_chunk(&mut self, chunk: &Bound<'_, PyAny>) -> PyResult<usize> {
        let c = Buf::get(chunk, "chunk", false)?;
        self.inner.append_chunk(c.as_slice()).map_err(to_py)
    }

    /// Insert an already compressed chunk at position `nchunk`.
    fn insert_chunk(&mut self, nchunk: usize, chunk: &Bound<'_, PyAny>) -> PyResult<usize> {
        let c = Buf::get(chunk, "chunk", false)?;
        self.inner
            .insert_chunk(nchunk, c.as_slice())
            .map_err(to_py)?;
        Ok(self.inner.nchunks())
    }

    /// Replace chunk `nchunk` by an already compressed chunk.
    fn update_chunk(&mut self, nchunk: usize, chunk: &Bound<'_, PyAny>) -> PyResult<usize> {
        let c = Buf::get(chunk, "chunk", false)?;
        self.inner
            .update_chunk(nchunk, c.as_slice())
            .map_err(to_py)?;
        Ok(self.inner.nchunks())
    }

    /// Compress `data` and replace chunk `nchunk` by it.
    fn update_data(
        &mut self,
        py: Python<'_>,
        nchunk: usize,
        data: &Bound<'_, PyAny>,
    ) -> PyResult<usize> {
        let d = Buf::get(data, "data", false)?;
        let chunk = compress_for(py, &self.inner, d.as_slice())?;
        self.inner.update_chunk(nchunk, &chunk).map_err(to_py)?;
        Ok(self.inner.nchunks())
    }

    /// Delete chunk `nchunk`; returns the new number of chunks.
    fn delete_chunk(&mut self, nchunk: usize) -> PyResult<usize> {
        self.inner.delete_chunk(nchunk).map_err(to_py)?;
        Ok(self.inner.nchunks())
    }

    /// The compressed chunk `nchunk` (`bytes`).
    fn get_chunk<'py>(&mut self, py: Python<'py>, nchunk: usize) -> PyResult<Bound<'py, PyBytes>> {
        let c = self.inner.get_chunk(nchunk).map_err(to_py)?;
        Ok(PyBytes::new(py, &c))
    }

    /// Decompress chunk `nchunk`: into `dst` (a writable buffer at least the
    /// chunk's size; returns the bytes written) or into a new `bytes`. The
    /// GIL is released while decompressing.
    #[pyo3(signature = (nchunk, dst=None))]
    fn decompress_chunk(
        &mut self,
        py: Python<'_>,
        nchunk: usize,
        dst: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let chunk = self.inner.get_chunk(nchunk).map_err(to_py)?.into_owned();
        let dp = self.inner.dparams().clone().nthreads(threads(None)?);
        let h = ChunkHeader::parse(&chunk).map_err(to_py)?;
        decompress_to(py, &chunk, h.nbytes, dp, dst, |got| {
            format!(
                "dst too small: chunk {nchunk} holds {} bytes, dst has {got}",
                h.nbytes
            )
        })
    }

    /// Bytes `[start, stop)` of the uncompressed data, across chunks.
    #[pyo3(signature = (start=0, stop=None))]
    fn get_slice<'py>(
        &mut self,
        py: Python<'py>,
        start: u64,
        stop: Option<u64>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let stop = stop.unwrap_or(self.inner.nbytes());
        let v = self.inner.get_slice(start, stop).map_err(to_py)?;
        Ok(PyBytes::new(py, &v))
    }

    /// Number of chunks.
    #[getter]
    fn nchunks(&self) -> usize {
        self.inner.nchunks()
    }

    /// Uncompressed size in bytes.
    #[getter]
    fn nbytes(&self) -> u64 {
        self.inner.nbytes()
    }

    /// Compressed size in bytes (chunks only).
    #[getter]
    fn cbytes(&self) -> u64 {
        self.inner.cbytes()
    }

    /// `nbytes / cbytes`.
    #[getter]
    fn cratio(&self) -> f64 {
        self.inner.cratio()
    }

    /// Uncompressed size of a full chunk, or `None` for variable-size chunks.
    #[getter]
    fn chunksize(&self) -> Option<usize> {
        self.inner.chunksize()
    }

    /// Item size the chunks are compressed with.
    #[getter]
    fn typesize(&self) -> usize {
        self.inner.typesize()
    }

    /// Block size of the chunks (0 = automatic).
    #[getter]
    fn blocksize(&self) -> usize {
        self.inner.blocksize()
    }

    /// Where the frame lives: `None` in memory, else the file or directory.
    #[getter]
    fn urlpath(&self) -> Option<std::path::PathBuf> {
        match self.inner.storage() {
            Storage::File { path, .. } => Some(path),
            Storage::Directory(p) => Some(p),
            _ => None,
        }
    }

    /// Whether the frame is contiguous (memory or one file), not sparse.
    #[getter]
    fn contiguous(&self) -> bool {
        !matches!(self.inner.storage(), Storage::Directory(_))
    }

    /// The compression parameters, as a dict of python-blosc2's names.
    #[getter]
    fn cparams<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let p = self.inner.cparams();
        let d = PyDict::new(py);
        d.set_item("codec", p.codec.name())?;
        d.set_item("clevel", p.clevel)?;
        d.set_item("typesize", p.typesize)?;
        d.set_item("blocksize", p.blocksize)?;
        d.set_item("nthreads", p.nthreads)?;
        let fl = PyList::empty(py);
        for f in p.filters.iter() {
            fl.append(f.map(|f| f.name()).unwrap_or("nofilter"))?;
        }
        d.set_item("filters", fl)?;
        d.set_item("filters_meta", p.filters_meta.to_vec())?;
        d.set_item("use_dict", p.use_dict)?;
        Ok(d)
    }

    /// The fixed-size metalayers (python-blosc2's `schunk.meta`).
    #[getter]
    fn meta(slf: Bound<'_, Self>) -> Meta {
        Meta { sc: slf.unbind() }
    }

    /// The variable-length metalayers (python-blosc2's `schunk.vlmeta`).
    #[getter]
    fn vlmeta(slf: Bound<'_, Self>) -> VlMeta {
        VlMeta { sc: slf.unbind() }
    }

    fn __len__(&self) -> usize {
        self.inner.nchunks()
    }

    fn __repr__(&self) -> String {
        format!(
            "SChunk(nchunks={}, nbytes={}, cbytes={}, urlpath={:?})",
            self.inner.nchunks(),
            self.inner.nbytes(),
            self.inner.cbytes(),
            self.urlpath()
        )
    }
}

/// Compresses `data` with the super-chunk's parameters (and the thread
/// count it runs, not a frame header's), GIL released.
fn compress_for(py: Python<'_>, sc: &RsSChunk, data: &[u8]) -> PyResult<Vec<u8>> {
    let p = sc.compress_params().clone();
    py.detach(|| with_compressor(p, |c| c.compress(data)))
        .map_err(to_py)
}

/// Compresses `data` (GIL released) and appends the chunk.
fn append_compressed(py: Python<'_>, sc: &mut RsSChunk, data: &[u8]) -> PyResult<usize> {
    sc.check_writable().map_err(to_py)?;
    let chunk = compress_for(py, sc, data)?;
    sc.append_chunk(&chunk).map_err(to_py)
}

/// `schunk.meta`: the fixed-size metalayers as a mapping of name to bytes.
/// Values keep their size once the frame is written (C-Blosc2's rule).
#[pyclass(unsendable, module = "oxiblosc", mapping)]
pub(crate) struct Meta {
    sc: Py<SChunk>,
}

#[pymethods]
impl Meta {
    fn __getitem__<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyBytes>> {
        let sc = self.sc.borrow(py);
        match sc.inner.meta_get(name) {
            Some(v) => Ok(PyBytes::new(py, v)),
            None => Err(pyo3::exceptions::PyKeyError::new_err(name.to_string())),
        }
    }

    fn __setitem__(&self, py: Python<'_>, name: &str, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let v = Buf::get(value, "a meta value", false)?;
        let mut sc = self.sc.borrow_mut(py);
        if sc.inner.meta_exists(name) {
            sc.inner.meta_update(name, v.as_slice()).map_err(to_py)
        } else {
            sc.inner.meta_add(name, v.as_slice()).map_err(to_py)
        }
    }

    fn __contains__(&self, py: Python<'_>, name: &str) -> bool {
        self.sc.borrow(py).inner.meta_exists(name)
    }

    fn __len__(&self, py: Python<'_>) -> usize {
        self.sc.borrow(py).inner.metalayers().len()
    }

    /// The metalayer names, in frame order.
    fn keys(&self, py: Python<'_>) -> Vec<String> {
        self.sc
            .borrow(py)
            .inner
            .metalayers()
            .iter()
            .map(|m| m.name.clone())
            .collect()
    }
}

/// `schunk.vlmeta`: the variable-length metalayers as a mapping of name to
/// bytes (stored compressed, any size, can be deleted).
#[pyclass(unsendable, module = "oxiblosc", mapping)]
pub(crate) struct VlMeta {
    sc: Py<SChunk>,
}

#[pymethods]
impl VlMeta {
    fn __getitem__<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyBytes>> {
        let mut sc = self.sc.borrow_mut(py);
        match sc.inner.vlmeta_get(name).map_err(to_py)? {
            Some(v) => Ok(PyBytes::new(py, &v)),
            None => Err(pyo3::exceptions::PyKeyError::new_err(name.to_string())),
        }
    }

    fn __setitem__(&self, py: Python<'_>, name: &str, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let v = match value.extract::<String>() {
            Ok(s) => s.into_bytes(),
            Err(_) => Buf::get(value, "a vlmeta value", false)?
                .as_slice()
                .to_vec(),
        };
        self.sc
            .borrow_mut(py)
            .inner
            .vlmeta_set(name, &v)
            .map_err(to_py)
    }

    fn __delitem__(&self, py: Python<'_>, name: &str) -> PyResult<()> {
        let mut sc = self.sc.borrow_mut(py);
        if !sc.inner.vlmeta_names().contains(&name) {
            return Err(pyo3::exceptions::PyKeyError::new_err(name.to_string()));
        }
        sc.inner.vlmeta_delete(name).map_err(to_py)
    }

    fn __contains__(&self, py: Python<'_>, name: &str) -> bool {
        self.sc.borrow(py).inner.vlmeta_names().contains(&name)
    }

    fn __len__(&self, py: Python<'_>) -> usize {
        self.sc.borrow(py).inner.vlmeta_names().len()
    }

    /// The vlmetalayer names, in frame order.
    fn keys(&self, py: Python<'_>) -> Vec<String> {
        self.sc
            .borrow(py)
            .inner
            .vlmeta_names()
            .into_iter()
            .map(String::from)
            .collect()
    }
}
