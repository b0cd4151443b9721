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

mod buffers;
mod calls;
mod errors;
mod params;
mod schunk;

use pyo3::prelude::*;

use crate::calls::{
    IMPORT_PID, blosc1_compress, cbuffer_complib, cbuffer_metainfo, cbuffer_sizes, compress2,
    decompress2, get_nthreads, getitem, list_compressors, set_nthreads,
};
use crate::errors::BloscError;
use crate::schunk::{Meta, SChunk, VlMeta};

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
