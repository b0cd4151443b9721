//! python-blosc2's core calls, the Blosc1 call numcodecs needs, the reused
//! (de)compressors and the thread count.

use std::cell::RefCell;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use oxiblosc::{
    CParams, ChunkFormat, ChunkHeader, Codec, Compressor, DParams, Decompressor, Filter,
};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::buffers::{Buf, new_bytes, new_bytes_exact};
use crate::errors::to_py;
use crate::params::cparams_from;

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
pub(crate) fn with_compressor<R>(p: CParams, f: impl FnOnce(&mut Compressor) -> R) -> R {
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
pub(crate) fn with_decompressor<R>(p: DParams, f: impl FnOnce(&mut Decompressor) -> R) -> R {
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
pub(crate) static IMPORT_PID: OnceLock<u32> = OnceLock::new();
/// The thread count `nthreads=None` means (`set_nthreads`).
static NTHREADS: AtomicUsize = AtomicUsize::new(1);

/// The thread count to use for a call: `requested`, or the module default;
/// always 1 in a process forked after import.
pub(crate) fn threads(requested: Option<usize>) -> PyResult<usize> {
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
pub(crate) fn set_nthreads(nthreads: usize) -> PyResult<usize> {
    if nthreads == 0 {
        return Err(PyValueError::new_err("nthreads must be at least 1"));
    }
    Ok(NTHREADS.swap(nthreads.min(256), Ordering::Relaxed))
}

/// The default number of threads used inside one (de)compression call.
#[pyfunction]
pub(crate) fn get_nthreads() -> usize {
    NTHREADS.load(Ordering::Relaxed)
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
pub(crate) fn compress2<'py>(
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

/// A `ValueError` when the output buffer `dst` shares bytes with the input
/// `src`: the engine reads one while it writes the other.
fn refuse_overlap(dst: &Buf, src: &[u8]) -> PyResult<()> {
    if dst.overlaps(src) {
        return Err(PyValueError::new_err(
            "src and dst overlap: the output must be another buffer than the input",
        ));
    }
    Ok(())
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
            refuse_overlap(&d, src)?;
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
pub(crate) fn decompress2<'py>(
    py: Python<'py>,
    src: &Bound<'py, PyAny>,
    dst: Option<&Bound<'py, PyAny>>,
    nthreads: Option<usize>,
) -> PyResult<Py<PyAny>> {
    let s = Buf::get(src, "src", false)?;
    let chunk = s.as_slice();
    let h = ChunkHeader::parse(chunk).map_err(to_py)?;
    let dp = DParams::default().nthreads(threads(nthreads)?);
    decompress_to(py, chunk, h.nbytes, dp, dst, |got| {
        format!(
            "destination buffer too small; expected at least {}, got {got}",
            h.nbytes
        )
    })
}

/// Decompresses `chunk` (whose header declares `nbytes`) with `dp`, the GIL
/// released: into `dst` (a writable buffer; returns the bytes written) or
/// into a new `bytes`. `too_small(len)` is the `ValueError` message when
/// `dst` holds only `len < nbytes` bytes.
pub(crate) fn decompress_to(
    py: Python<'_>,
    chunk: &[u8],
    nbytes: usize,
    dp: DParams,
    dst: Option<&Bound<'_, PyAny>>,
    too_small: impl FnOnce(usize) -> String,
) -> PyResult<Py<PyAny>> {
    match dst {
        Some(d) => {
            let d = Buf::get(d, "dst", true)?;
            refuse_overlap(&d, chunk)?;
            let out = d.as_mut_slice();
            if out.len() < nbytes {
                return Err(PyValueError::new_err(too_small(out.len())));
            }
            let n = py
                .detach(|| with_decompressor(dp, |d| d.decompress_into(chunk, out)))
                .map_err(to_py)?;
            Ok(n.into_pyobject(py)?.into_any().unbind())
        }
        None => {
            // The new object is sized by the header: only once the chunk's
            // streams are known to back that size (a 64-byte chunk claiming
            // 2 GiB is refused here, before anything is allocated), as the
            // Rust `Decompressor::decompress` sizes its `Vec`.
            oxiblosc::chunk::validate(chunk).map_err(to_py)?;
            let b = new_bytes_exact(py, nbytes, |out| {
                with_decompressor(dp, |d| d.decompress_into(chunk, out))
            })?;
            Ok(b.into_any().unbind())
        }
    }
}

/// Items `[start, start + nitems)` of a chunk (in units of its type size),
/// decoding only the blocks they lie in (C-Blosc's `blosc2_getitem`).
#[pyfunction]
pub(crate) fn getitem<'py>(
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
pub(crate) fn cbuffer_sizes(src: &Bound<'_, PyAny>) -> PyResult<(usize, usize, usize)> {
    let s = Buf::get(src, "src", false)?;
    oxiblosc::cbuffer_sizes(s.as_slice()).map_err(to_py)
}

/// `(typesize, flags)` from a chunk's header: C-Blosc's
/// `blosc_cbuffer_metainfo` (flags bit 0 shuffle, 1 memcpyed, 2 bitshuffle).
#[pyfunction]
pub(crate) fn cbuffer_metainfo(src: &Bound<'_, PyAny>) -> PyResult<(usize, u8)> {
    let s = Buf::get(src, "src", false)?;
    let h = ChunkHeader::parse(s.as_slice()).map_err(to_py)?;
    Ok((h.typesize as usize, h.flags))
}

/// The name of the compression library of a chunk, as C-Blosc's
/// `blosc_cbuffer_complib` gives it (`BloscLZ`, `LZ4`, `Zlib`, `Zstd`).
#[pyfunction]
pub(crate) fn cbuffer_complib(src: &Bound<'_, PyAny>) -> PyResult<&'static str> {
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
pub(crate) fn list_compressors() -> Vec<&'static str> {
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
pub(crate) fn blosc1_compress<'py>(
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
