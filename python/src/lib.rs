//! `oxiblosc._oxiblosc`: the Python extension module behind the `oxiblosc`
//! package (PyO3, stable ABI 3.11+).
//!
//! It offers python-blosc2's core calls (`compress2`, `decompress2`,
//! `getitem`, `SChunk`), the Blosc1 calls numcodecs' `Blosc` codec needs,
//! and header inspection. Inputs come through the buffer protocol without a
//! copy; outputs go to new `bytes` or into a caller's writable buffer; the GIL
//! is released while (de)compressing.
//!
//! The pure-Python layer (`pysrc/oxiblosc`) adds the numcodecs and Zarr
//! codecs on top.

use std::cell::RefCell;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use oxiblosc::schunk::{OpenOptions as RsOpenOptions, SChunk as RsSChunk, Storage};
use oxiblosc::{
    CParams, ChunkFormat, ChunkHeader, Codec, Compressor, DParams, Decompressor, Error, Filter,
    SplitMode,
};
use pyo3::buffer::PyUntypedBuffer;
use pyo3::create_exception;
use pyo3::exceptions::{PyIOError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

create_exception!(
    _oxiblosc,
    BloscError,
    PyRuntimeError,
    "Corrupt, truncated or unsupported compressed data (a `RuntimeError`, as numcodecs raises)."
);

/// Maps a crate error to the Python exception a caller expects: bad
/// parameters and too-small destinations are `ValueError`, I/O failures
/// `OSError`, everything about the data itself [`BloscError`].
fn to_py(e: Error) -> PyErr {
    match e {
        Error::InvalidParam(_) | Error::DstTooSmall { .. } => PyValueError::new_err(e.to_string()),
        Error::Io(io) => PyIOError::new_err(io.to_string()),
        other => BloscError::new_err(other.to_string()),
    }
}

// ----------------------------------------------------------------------
// Buffers

/// A contiguous buffer borrowed from a Python object for the duration of
/// one call (released on drop, with the GIL, by PyO3).
struct Buf {
    buf: PyUntypedBuffer,
}

impl Buf {
    /// Borrows `obj`'s buffer; `writable` demands a writable one.
    fn get(obj: &Bound<'_, PyAny>, what: &str, writable: bool) -> PyResult<Buf> {
        let buf = PyUntypedBuffer::get(obj).map_err(|_| {
            PyTypeError::new_err(format!(
                "{what} must support the buffer protocol (bytes, bytearray, memoryview, \
                 NumPy array), not {}",
                obj.get_type()
                    .name()
                    .map(|n| n.to_string())
                    .unwrap_or_else(|_| "?".into())
            ))
        })?;
        // Either order is one run of memory, used in memory order (as
        // numcodecs does with PyBUF_ANY_CONTIGUOUS).
        if !buf.is_c_contiguous() && !buf.is_fortran_contiguous() {
            return Err(PyValueError::new_err(format!(
                "{what} must be a contiguous buffer (C or Fortran order)"
            )));
        }
        if writable && buf.readonly() {
            return Err(PyTypeError::new_err(format!(
                "{what} must be a writable buffer (bytearray, NumPy array, ...), not read-only"
            )));
        }
        if buf.format().to_bytes() == b"O" {
            return Err(PyTypeError::new_err(format!(
                "{what} holds Python objects, not raw data"
            )));
        }
        Ok(Buf { buf })
    }

    /// The item size the exporter declares (NumPy's itemsize).
    fn itemsize(&self) -> usize {
        self.buf.item_size().max(1)
    }

    /// The bytes, readable.
    fn as_slice(&self) -> &[u8] {
        let len = self.buf.len_bytes();
        if len == 0 {
            return &[];
        }
        // SAFETY: the buffer is contiguous (C or Fortran order, checked in `get`), so its
        // `len_bytes()` bytes start at `buf_ptr()` and stay valid and in place
        // while `self.buf` holds the export (the exporter may not resize or
        // free it until PyBuffer_Release). Another Python thread could write to
        // the memory meanwhile, as with any C extension; the bytes are plain
        // `u8`, for which every value is valid.
        unsafe { std::slice::from_raw_parts(self.buf.buf_ptr() as *const u8, len) }
    }

    /// The bytes, writable (only for buffers checked `writable` in `get`).
    #[allow(clippy::mut_from_ref)]
    fn as_mut_slice(&self) -> &mut [u8] {
        debug_assert!(!self.buf.readonly());
        let len = self.buf.len_bytes();
        if len == 0 {
            return &mut [];
        }
        // SAFETY: as in `as_slice`; the exporter declared the buffer writable
        // (checked in `get`), and each call site takes this slice once and
        // holds no other reference into the same buffer from Rust.
        unsafe { std::slice::from_raw_parts_mut(self.buf.buf_ptr() as *mut u8, len) }
    }
}

/// A new `bytes` of at most `cap` bytes, filled by `fill` with the GIL
/// released; `fill` returns how many bytes it wrote (the rest is cut off, at
/// the price of one copy of the result).
fn new_bytes<'py, F>(py: Python<'py>, cap: usize, fill: F) -> PyResult<Bound<'py, PyBytes>>
where
    F: Send + FnOnce(&mut [u8]) -> oxiblosc::Result<usize>,
{
    let mut out = vec![0u8; cap];
    let n = py.detach(|| fill(&mut out)).map_err(to_py)?;
    Ok(PyBytes::new(py, &out[..n]))
}

/// A new `bytes` of exactly `len` bytes, written in place by `fill` with the
/// GIL released (no intermediate buffer); `fill` must write all of them.
fn new_bytes_exact<'py, F>(py: Python<'py>, len: usize, fill: F) -> PyResult<Bound<'py, PyBytes>>
where
    F: Send + FnOnce(&mut [u8]) -> oxiblosc::Result<usize>,
{
    PyBytes::new_with(py, len, |buf| {
        // The new object is not yet visible to any other thread.
        let n = py.detach(|| fill(buf)).map_err(to_py)?;
        if n != len {
            return Err(BloscError::new_err(format!(
                "corrupt data: decompressed to {n} bytes, the header declares {len}"
            )));
        }
        Ok(())
    })
}

// ----------------------------------------------------------------------
// Reused (de)compressors

thread_local! {
    /// The last few compressors this OS thread used, most recent first: their
    /// scratch buffers and codec contexts (a ZSTD context is costly to make)
    /// are kept between calls.
    static COMPRESSORS: RefCell<Vec<Compressor>> = const { RefCell::new(Vec::new()) };
    /// As `COMPRESSORS`, one per thread count.
    static DECOMPRESSORS: RefCell<Vec<Decompressor>> = const { RefCell::new(Vec::new()) };
}

/// Runs `f` with this thread's cached compressor for `p` (made on first use).
fn with_compressor<R>(p: CParams, f: impl FnOnce(&mut Compressor) -> R) -> R {
    COMPRESSORS.with(|cell| {
        let mut cache = cell.borrow_mut();
        match cache.iter().position(|c| *c.params() == p) {
            Some(i) => cache[..=i].rotate_right(1),
            None => {
                cache.insert(0, Compressor::new(p));
                cache.truncate(4);
            }
        }
        f(&mut cache[0])
    })
}

/// Runs `f` with this thread's cached decompressor for `p`.
fn with_decompressor<R>(p: DParams, f: impl FnOnce(&mut Decompressor) -> R) -> R {
    DECOMPRESSORS.with(|cell| {
        let mut cache = cell.borrow_mut();
        match cache.iter().position(|c| *c.params() == p) {
            Some(i) => cache[..=i].rotate_right(1),
            None => {
                cache.insert(0, Decompressor::new(p));
                cache.truncate(2);
            }
        }
        f(&mut cache[0])
    })
}

// ----------------------------------------------------------------------
// Threads

/// The process id at import: a forked child must not use the parent's
/// rayon pools (their threads do not exist in the child).
static IMPORT_PID: OnceLock<u32> = OnceLock::new();
/// The thread count `nthreads=None` means (`set_nthreads`).
static NTHREADS: AtomicUsize = AtomicUsize::new(1);

/// The thread count to use for a call: `requested`, or the module default;
/// always 1 in a process forked after import.
fn threads(requested: Option<usize>) -> PyResult<usize> {
    let n = requested.unwrap_or_else(|| NTHREADS.load(Ordering::Relaxed));
    if n == 0 {
        return Err(PyValueError::new_err("nthreads must be at least 1"));
    }
    if IMPORT_PID
        .get()
        .is_some_and(|pid| *pid != std::process::id())
    {
        return Ok(1);
    }
    Ok(n.min(256))
}

/// Set the default number of threads used inside one (de)compression call
/// when `nthreads` is not given; returns the previous value.
#[pyfunction]
fn set_nthreads(nthreads: usize) -> PyResult<usize> {
    if nthreads == 0 {
        return Err(PyValueError::new_err("nthreads must be at least 1"));
    }
    Ok(NTHREADS.swap(nthreads.min(256), Ordering::Relaxed))
}

/// The default number of threads used inside one (de)compression call.
#[pyfunction]
fn get_nthreads() -> usize {
    NTHREADS.load(Ordering::Relaxed)
}

// ----------------------------------------------------------------------
// Parameters

/// A codec from a name (`"zstd"`), an id (`5`) or an enum with `.name` /
/// `.value` (python-blosc2's `blosc2.Codec`).
fn parse_codec(obj: &Bound<'_, PyAny>) -> PyResult<Codec> {
    if let Ok(s) = obj.extract::<String>() {
        return s.parse::<Codec>().map_err(to_py);
    }
    if let Ok(b) = obj.extract::<Vec<u8>>()
        && let Ok(s) = std::str::from_utf8(&b)
    {
        return s.parse::<Codec>().map_err(to_py);
    }
    if let Ok(id) = obj.extract::<u8>() {
        return Codec::from_id(id)
            .ok_or_else(|| PyValueError::new_err(format!("unknown codec id {id}")));
    }
    if let Ok(v) = obj.getattr("value") {
        return parse_codec(&v);
    }
    Err(PyTypeError::new_err(
        "codec must be a name ('blosclz', 'lz4', 'lz4hc', 'zlib', 'zstd') or a codec id",
    ))
}

/// A filter from a name, an id or an enum with `.value`.
fn parse_filter(obj: &Bound<'_, PyAny>, meta: u8) -> PyResult<Option<Filter>> {
    if let Ok(s) = obj.extract::<String>() {
        if s.eq_ignore_ascii_case("nofilter") || s.is_empty() {
            return Ok(None);
        }
        let f: Filter = s.parse().or_else(|e| {
            if s.eq_ignore_ascii_case("trunc_prec") {
                Ok(Filter::TruncPrec(meta))
            } else {
                Err(to_py(e))
            }
        })?;
        return Ok(Some(f));
    }
    if let Ok(id) = obj.extract::<u8>() {
        if id == 0 {
            return Ok(None);
        }
        return Filter::from_id(id, meta)
            .map(Some)
            .ok_or_else(|| PyValueError::new_err(format!("unknown filter id {id}")));
    }
    if let Ok(v) = obj.getattr("value") {
        return parse_filter(&v, meta);
    }
    Err(PyTypeError::new_err(
        "a filter must be a name ('shuffle', 'bitshuffle', 'delta', 'trunc_prec', 'bytedelta') \
         or a filter id",
    ))
}

/// Builds [`CParams`] from python-blosc2's keyword names.
#[allow(clippy::too_many_arguments)]
fn cparams_from(
    codec: Option<&Bound<'_, PyAny>>,
    clevel: Option<i64>,
    typesize: Option<usize>,
    default_typesize: usize,
    filters: Option<&Bound<'_, PyAny>>,
    filters_meta: Option<Vec<i64>>,
    blocksize: Option<usize>,
    splitmode: Option<&Bound<'_, PyAny>>,
    nthreads: Option<usize>,
    use_dict: bool,
) -> PyResult<CParams> {
    let mut p = CParams::default();
    if let Some(c) = codec {
        p = p.codec(parse_codec(c)?);
    }
    if let Some(l) = clevel {
        if !(0..=9).contains(&l) {
            return Err(PyValueError::new_err(format!("clevel {l} is not in 0..=9")));
        }
        p = p.clevel(l as u8);
    }
    let ts = typesize.unwrap_or(default_typesize);
    if ts == 0 {
        return Err(PyValueError::new_err("typesize must be at least 1"));
    }
    p = p.typesize(ts);
    if let Some(fs) = filters {
        let metas = filters_meta.unwrap_or_default();
        let mut list = Vec::new();
        for (i, f) in fs.try_iter()?.enumerate() {
            let m = metas.get(i).copied().unwrap_or(0);
            if !(-128..=255).contains(&m) {
                return Err(PyValueError::new_err(format!(
                    "filters_meta[{i}] = {m} does not fit a byte"
                )));
            }
            if let Some(f) = parse_filter(&f?, m as u8)? {
                list.push((f, m as u8));
            }
        }
        if list.len() > 6 {
            return Err(PyValueError::new_err("at most 6 filters"));
        }
        p = p.filters_with_meta(&list);
    }
    if let Some(b) = blocksize {
        p = p.blocksize(b);
    }
    if let Some(s) = splitmode {
        let id: u8 = match s.extract::<u8>() {
            Ok(v) => v,
            Err(_) => s.getattr("value")?.extract()?,
        };
        p = p.splitmode(match id {
            1 => SplitMode::Always,
            2 => SplitMode::Never,
            3 => SplitMode::Auto,
            4 => SplitMode::ForwardCompat,
            _ => {
                return Err(PyValueError::new_err(format!(
                    "splitmode {id} is not 1 (always), 2 (never), 3 (auto) or 4 (forward compat)"
                )));
            }
        });
    }
    p = p.nthreads(threads(nthreads)?).use_dict(use_dict);
    p.validate().map_err(to_py)?;
    Ok(p)
}

// ----------------------------------------------------------------------
// python-blosc2's core calls

/// Compress `src` into a Blosc2 chunk (python-blosc2's `compress2`).
///
/// Keyword arguments are python-blosc2's compression parameters: `codec`
/// (name, id or `blosc2.Codec`; default ``"blosclz"``), `clevel` (0-9,
/// default 5), `typesize` (default: the buffer's item size), `filters`
/// (list of names / ids, default ``["shuffle"]``), `filters_meta`,
/// `blocksize` (0 = automatic), `splitmode`, `nthreads`, `use_dict`.
///
/// With `dst` (a writable buffer) the chunk is written there and its size
/// returned; otherwise a new `bytes` is returned. The GIL is released while
/// compressing.
#[pyfunction]
#[pyo3(signature = (src, dst=None, *, codec=None, clevel=None, typesize=None, filters=None,
    filters_meta=None, blocksize=None, splitmode=None, nthreads=None, use_dict=false))]
#[allow(clippy::too_many_arguments)]
fn compress2<'py>(
    py: Python<'py>,
    src: &Bound<'py, PyAny>,
    dst: Option<&Bound<'py, PyAny>>,
    codec: Option<&Bound<'py, PyAny>>,
    clevel: Option<i64>,
    typesize: Option<usize>,
    filters: Option<&Bound<'py, PyAny>>,
    filters_meta: Option<Vec<i64>>,
    blocksize: Option<usize>,
    splitmode: Option<&Bound<'py, PyAny>>,
    nthreads: Option<usize>,
    use_dict: bool,
) -> PyResult<Py<PyAny>> {
    let s = Buf::get(src, "src", false)?;
    let p = cparams_from(
        codec,
        clevel,
        typesize,
        s.itemsize(),
        filters,
        filters_meta,
        blocksize,
        splitmode,
        nthreads,
        use_dict,
    )?;
    compress_with(py, &s, dst, p)
}

/// Compress with `p` into `dst` (returns the size) or a new `bytes`.
fn compress_with(
    py: Python<'_>,
    s: &Buf,
    dst: Option<&Bound<'_, PyAny>>,
    p: CParams,
) -> PyResult<Py<PyAny>> {
    let src = s.as_slice();
    match dst {
        Some(d) => {
            let d = Buf::get(d, "dst", true)?;
            let out = d.as_mut_slice();
            let n = py
                .detach(|| with_compressor(p, |c| c.compress_into(src, out)))
                .map_err(to_py)?;
            Ok(n.into_pyobject(py)?.into_any().unbind())
        }
        None => {
            let b = new_bytes(py, oxiblosc::max_compressed_len(src.len()), |out| {
                with_compressor(p, |c| c.compress_into(src, out))
            })?;
            Ok(b.into_any().unbind())
        }
    }
}

/// Decompress a Blosc/Blosc2 chunk (python-blosc2's `decompress2`).
///
/// With `dst` (a writable buffer at least the chunk's size) the data is
/// written there and the number of bytes returned; otherwise a new `bytes`
/// is returned. The GIL is released while decompressing.
#[pyfunction]
#[pyo3(signature = (src, dst=None, *, nthreads=None))]
fn decompress2<'py>(
    py: Python<'py>,
    src: &Bound<'py, PyAny>,
    dst: Option<&Bound<'py, PyAny>>,
    nthreads: Option<usize>,
) -> PyResult<Py<PyAny>> {
    let s = Buf::get(src, "src", false)?;
    let chunk = s.as_slice();
    let h = ChunkHeader::parse(chunk).map_err(to_py)?;
    let dp = DParams::default().nthreads(threads(nthreads)?);
    match dst {
        Some(d) => {
            let d = Buf::get(d, "dst", true)?;
            let out = d.as_mut_slice();
            if out.len() < h.nbytes {
                return Err(PyValueError::new_err(format!(
                    "destination buffer too small; expected at least {}, got {}",
                    h.nbytes,
                    out.len()
                )));
            }
            let n = py
                .detach(|| with_decompressor(dp, |d| d.decompress_into(chunk, out)))
                .map_err(to_py)?;
            Ok(n.into_pyobject(py)?.into_any().unbind())
        }
        None => {
            let b = new_bytes_exact(py, h.nbytes, |out| {
                with_decompressor(dp, |d| d.decompress_into(chunk, out))
            })?;
            Ok(b.into_any().unbind())
        }
    }
}

/// Items `[start, start + nitems)` of a chunk (in units of its type size),
/// decoding only the blocks they lie in (C-Blosc's `blosc2_getitem`).
#[pyfunction]
fn getitem<'py>(
    py: Python<'py>,
    src: &Bound<'py, PyAny>,
    start: usize,
    nitems: usize,
) -> PyResult<Bound<'py, PyBytes>> {
    let s = Buf::get(src, "src", false)?;
    let chunk = s.as_slice();
    let v = py
        .detach(|| oxiblosc::getitem(chunk, start, nitems))
        .map_err(to_py)?;
    Ok(PyBytes::new(py, &v))
}

/// `(nbytes, cbytes, blocksize)` from a chunk's header.
#[pyfunction]
fn cbuffer_sizes(src: &Bound<'_, PyAny>) -> PyResult<(usize, usize, usize)> {
    let s = Buf::get(src, "src", false)?;
    oxiblosc::cbuffer_sizes(s.as_slice()).map_err(to_py)
}

/// `(typesize, flags)` from a chunk's header: C-Blosc's
/// `blosc_cbuffer_metainfo` (flags bit 0 shuffle, 1 memcpyed, 2 bitshuffle).
#[pyfunction]
fn cbuffer_metainfo(src: &Bound<'_, PyAny>) -> PyResult<(usize, u8)> {
    let s = Buf::get(src, "src", false)?;
    let h = ChunkHeader::parse(s.as_slice()).map_err(to_py)?;
    Ok((h.typesize as usize, h.flags))
}

/// The name of the compression library of a chunk, as C-Blosc's
/// `blosc_cbuffer_complib` gives it (`BloscLZ`, `LZ4`, `Zlib`, `Zstd`).
#[pyfunction]
fn cbuffer_complib(src: &Bound<'_, PyAny>) -> PyResult<&'static str> {
    let s = Buf::get(src, "src", false)?;
    let h = ChunkHeader::parse(s.as_slice()).map_err(to_py)?;
    Ok(match h.codec_format() {
        0 => "BloscLZ",
        1 => "LZ4",
        2 => "Snappy",
        3 => "Zlib",
        4 => "Zstd",
        _ => "unknown",
    })
}

/// The codecs this build compresses with, in C-Blosc's order.
#[pyfunction]
fn list_compressors() -> Vec<&'static str> {
    Codec::ALL
        .into_iter()
        .filter(|c| c.is_available())
        .map(|c| c.name())
        .collect()
}

// ----------------------------------------------------------------------
// Blosc1 (numcodecs)

/// Compress `src` into a Blosc1 chunk (16-byte header, as C-Blosc 1.21 and
/// so numcodecs write). `shuffle` is 0 (none), 1 (byte) or 2 (bit);
/// `typesize=None` takes the buffer's item size; `blocksize` 0 is automatic.
#[pyfunction]
#[pyo3(signature = (src, cname, clevel, shuffle, blocksize=0, typesize=None, nthreads=None))]
#[allow(clippy::too_many_arguments)]
fn blosc1_compress<'py>(
    py: Python<'py>,
    src: &Bound<'py, PyAny>,
    cname: &str,
    clevel: i64,
    shuffle: i64,
    blocksize: i64,
    typesize: Option<i64>,
    nthreads: Option<usize>,
) -> PyResult<Bound<'py, PyBytes>> {
    let s = Buf::get(src, "source", false)?;
    let codec: Codec = match cname {
        "blosclz" | "lz4" | "lz4hc" | "zlib" | "zstd" => cname.parse().map_err(to_py)?,
        _ => {
            return Err(PyValueError::new_err(format!(
                "bad compressor or compressor not supported: {cname:?}; expected one of {:?}",
                list_compressors()
            )));
        }
    };
    let typesize = match typesize {
        Some(t) if t < 1 => {
            return Err(PyValueError::new_err(format!(
                "Cannot use typesize {t} less than 1."
            )));
        }
        Some(t) => t as usize,
        None => s.itemsize(),
    };
    let filters: &[Filter] = match shuffle {
        0 => &[],
        1 => &[Filter::Shuffle],
        2 => &[Filter::BitShuffle],
        _ => {
            return Err(PyValueError::new_err(format!(
                "invalid shuffle argument; expected -1, 0, 1 or 2, found {shuffle}"
            )));
        }
    };
    // C-Blosc clamps the level and treats negative block sizes as automatic.
    let clevel = clevel.clamp(0, 9) as u8;
    let blocksize = blocksize.max(0) as usize;
    let p = CParams::default()
        .format(ChunkFormat::Blosc1)
        .codec(codec)
        .clevel(clevel)
        .typesize(typesize)
        .filters(filters)
        .blocksize(blocksize)
        .nthreads(threads(nthreads)?);
    p.validate().map_err(to_py)?;
    let src = s.as_slice();
    if src.len() > oxiblosc::MAX_BUFFERSIZE {
        return Err(PyValueError::new_err(format!(
            "input of {} bytes exceeds Blosc's maximum of {}",
            src.len(),
            oxiblosc::MAX_BUFFERSIZE
        )));
    }
    new_bytes(py, oxiblosc::max_compressed_len(src.len()), |out| {
        with_compressor(p, |c| c.compress_into(src, out))
    })
}

// ----------------------------------------------------------------------
// SChunk

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
struct SChunk {
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
        let v = self.inner.to_cframe().map_err(to_py)?;
        Ok(PyBytes::new(py, &v))
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
        match dst {
            Some(d) => {
                let d = Buf::get(d, "dst", true)?;
                let out = d.as_mut_slice();
                if out.len() < h.nbytes {
                    return Err(PyValueError::new_err(format!(
                        "dst too small: chunk {nchunk} holds {} bytes, dst has {}",
                        h.nbytes,
                        out.len()
                    )));
                }
                let n = py
                    .detach(|| with_decompressor(dp, |d| d.decompress_into(&chunk, out)))
                    .map_err(to_py)?;
                Ok(n.into_pyobject(py)?.into_any().unbind())
            }
            None => Ok(new_bytes_exact(py, h.nbytes, |out| {
                with_decompressor(dp, |d| d.decompress_into(&chunk, out))
            })?
            .into_any()
            .unbind()),
        }
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

/// Compresses `data` with the super-chunk's parameters, GIL released.
fn compress_for(py: Python<'_>, sc: &RsSChunk, data: &[u8]) -> PyResult<Vec<u8>> {
    let p = sc.cparams().clone();
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
struct Meta {
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
struct VlMeta {
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

// ----------------------------------------------------------------------

/// The extension module.
#[pymodule]
fn _oxiblosc(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let _ = IMPORT_PID.set(std::process::id());
    m.add("BloscError", m.py().get_type::<BloscError>())?;
    m.add("MAX_OVERHEAD", oxiblosc::MAX_OVERHEAD)?;
    m.add("MAX_BUFFERSIZE", oxiblosc::MAX_BUFFERSIZE)?;
    m.add("MAX_TYPESIZE", oxiblosc::MAX_TYPESIZE)?;
    m.add("MAX_BLOCKSIZE", oxiblosc::MAX_BLOCKSIZE)?;
    m.add_function(wrap_pyfunction!(compress2, m)?)?;
    m.add_function(wrap_pyfunction!(decompress2, m)?)?;
    m.add_function(wrap_pyfunction!(getitem, m)?)?;
    m.add_function(wrap_pyfunction!(cbuffer_sizes, m)?)?;
    m.add_function(wrap_pyfunction!(cbuffer_metainfo, m)?)?;
    m.add_function(wrap_pyfunction!(cbuffer_complib, m)?)?;
    m.add_function(wrap_pyfunction!(list_compressors, m)?)?;
    m.add_function(wrap_pyfunction!(blosc1_compress, m)?)?;
    m.add_function(wrap_pyfunction!(set_nthreads, m)?)?;
    m.add_function(wrap_pyfunction!(get_nthreads, m)?)?;
    m.add_class::<SChunk>()?;
    m.add_class::<Meta>()?;
    m.add_class::<VlMeta>()?;
    Ok(())
}
