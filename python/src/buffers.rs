//! Buffer-protocol inputs and outputs: borrowed contiguous buffers and new
//! `bytes` filled with the GIL released.

use pyo3::buffer::PyUntypedBuffer;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::errors::{BloscError, to_py};

/// A contiguous buffer borrowed from a Python object for the duration of
/// one call (released on drop, with the GIL, by PyO3).
pub(crate) struct Buf {
    buf: PyUntypedBuffer,
}

impl Buf {
    /// Borrows `obj`'s buffer; `writable` demands a writable one.
    pub(crate) fn get(obj: &Bound<'_, PyAny>, what: &str, writable: bool) -> PyResult<Buf> {
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
    pub(crate) fn itemsize(&self) -> usize {
        self.buf.item_size().max(1)
    }

    /// The bytes, readable.
    pub(crate) fn as_slice(&self) -> &[u8] {
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
    pub(crate) fn as_mut_slice(&self) -> &mut [u8] {
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
pub(crate) fn new_bytes<'py, F>(
    py: Python<'py>,
    cap: usize,
    fill: F,
) -> PyResult<Bound<'py, PyBytes>>
where
    F: Send + FnOnce(&mut [u8]) -> oxiblosc::Result<usize>,
{
    let mut out = vec![0u8; cap];
    let n = py.detach(|| fill(&mut out)).map_err(to_py)?;
    Ok(PyBytes::new(py, &out[..n]))
}

/// A new `bytes` of exactly `len` bytes, written in place by `fill` with the
/// GIL released (no intermediate buffer); `fill` must write all of them.
pub(crate) fn new_bytes_exact<'py, F>(
    py: Python<'py>,
    len: usize,
    fill: F,
) -> PyResult<Bound<'py, PyBytes>>
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
