//! The `BloscError` exception and the mapping of crate errors to Python ones.

use oxiblosc::Error;
use pyo3::create_exception;
use pyo3::exceptions::{PyIOError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;

create_exception!(
    _oxiblosc,
    BloscError,
    PyRuntimeError,
    "Corrupt, truncated or unsupported compressed data (a `RuntimeError`, as numcodecs raises)."
);

/// Maps a crate error to the Python exception a caller expects: bad
/// parameters and too-small destinations are `ValueError`, I/O failures
/// `OSError`, everything about the data itself [`BloscError`].
pub(crate) fn to_py(e: Error) -> PyErr {
    match e {
        Error::InvalidParam(_) | Error::DstTooSmall { .. } => PyValueError::new_err(e.to_string()),
        Error::Io(io) => PyIOError::new_err(io.to_string()),
        other => BloscError::new_err(other.to_string()),
    }
}
