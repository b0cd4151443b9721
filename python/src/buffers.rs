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

    /// Whether this buffer shares a byte with `other` (the same object
    /// passed twice, or two views of one): such a pair may not be taken as
    /// an input and an output, see [`Buf::as_mut_slice`].
    pub(crate) fn overlaps(&self, other: &[u8]) -> bool {
        let len = self.buf.len_bytes();
        let (a, b) = (self.buf.buf_ptr() as usize, other.as_ptr() as usize);
        len > 0 && !other.is_empty() && a < b + other.len() && b < a + len
    }

    /// The bytes, writable (only for buffers checked `writable` in `get`,
    /// and checked with [`Buf::overlaps`] against every slice the caller
    /// holds: Rust may not read and write the same bytes through two
    /// references).
    #[allow(clippy::mut_from_ref)]
    pub(crate) fn as_mut_slice(&self) -> &mut [u8] {
        debug_assert!(!self.buf.readonly());
        let len = self.buf.len_bytes();
        if len == 0 {
            return &mut [];
        }
        // SAFETY: as in `as_slice`; the exporter declared the buffer writable
        // (checked in `get`), and each call site takes this slice once and
        // holds no other reference into the same bytes from Rust (it checks
        // `overlaps` against its input first).
        unsafe { std::slice::from_raw_parts_mut(self.buf.buf_ptr() as *mut u8, len) }
    }
}

thread_local! {
    /// Per OS thread, the buffer compression writes into before its result is
    /// copied into a `bytes` of the exact size: reused between calls, so a
    /// call neither allocates nor faults in fresh pages for its worst case.
    static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Scratch buffers above this size are freed after the call instead of kept.
const SCRATCH_KEEP: usize = 16 << 20;

/// Asks Linux to back the 2 MiB-aligned part of `len` bytes at `ptr` with
/// transparent huge pages before they are first written (from 4 MiB on:
/// `oxiblosc::kernels::advise_huge_pages_at`). A fresh 64 MiB result
/// otherwise takes 16,384 page faults, which cost more than the
/// (de)compression itself (this machine's THP mode is `madvise`).
fn advise_huge(ptr: *mut u8, len: usize) {
    // SAFETY: every caller passes a live allocation of `len` bytes at `ptr`
    // (a scratch `Vec`'s capacity or a `bytes` object's contents), not
    // read or written by the advice.
    unsafe { oxiblosc::kernels::advise_huge_pages_at(ptr, len) }
}

/// A `bytes` of `len` bytes whose contents are not yet written, and a
/// pointer to them. Only the allocation happens with the GIL held.
fn bytes_uninit(py: Python<'_>, len: usize) -> PyResult<(Bound<'_, PyBytes>, *mut u8)> {
    let len_ssize = pyo3::ffi::Py_ssize_t::try_from(len)
        .map_err(|_| PyValueError::new_err(format!("{len} bytes is too large for a bytes")))?;
    // SAFETY: with a null source pointer CPython allocates a bytes object of
    // `len` bytes (plus the trailing NUL) and leaves its contents
    // uninitialised; a null return means an exception is set, which
    // `from_owned_ptr_or_err` turns into an error. The new reference is owned.
    let obj = unsafe {
        Bound::from_owned_ptr_or_err(
            py,
            pyo3::ffi::PyBytes_FromStringAndSize(std::ptr::null(), len_ssize),
        )?
    };
    // SAFETY: `obj` is a bytes object (just made); PyBytes_AsString returns
    // the pointer to its `len` bytes, valid while `obj` lives.
    let ptr = unsafe { pyo3::ffi::PyBytes_AsString(obj.as_ptr()) } as *mut u8;
    Ok((obj.cast_into::<PyBytes>()?, ptr))
}

/// A raw pointer sent to the thread that runs with the GIL released.
struct SendPtr(*mut u8);
// SAFETY: the pointer designates the contents of a bytes object no other
// thread can see yet (it was created in this call and not published); only
// the closure it is sent to writes through it, while the caller waits.
unsafe impl Send for SendPtr {}

/// A new `bytes` filled by `fill` with the GIL released; `fill` may write
/// up to `cap` bytes and returns how many it wrote. `fill` writes into a
/// per-thread scratch buffer; the result is copied, also with the GIL
/// released, into a `bytes` of the exact size, so the GIL is held only to
/// allocate that object.
pub(crate) fn new_bytes<'py, F>(
    py: Python<'py>,
    cap: usize,
    fill: F,
) -> PyResult<Bound<'py, PyBytes>>
where
    F: Send + FnOnce(&mut [u8]) -> oxiblosc::Result<usize>,
{
    SCRATCH.with(|cell| {
        let mut guard = cell.borrow_mut();
        let scratch: &mut Vec<u8> = &mut guard;
        let n = py
            .detach(|| {
                if scratch.len() < cap {
                    // The old one freed first; the new one zeroed by the
                    // allocator (calloc: fresh pages, no memset, for large
                    // sizes) and advised huge before first written.
                    drop(std::mem::take(scratch));
                    *scratch = vec![0; cap];
                    advise_huge(scratch.as_mut_ptr(), cap);
                }
                fill(&mut scratch[..cap])
            })
            .map_err(to_py)?;
        let n = n.min(cap);
        let (obj, ptr) = bytes_uninit(py, n)?;
        let dst = SendPtr(ptr);
        let src = &scratch[..n];
        py.detach(move || {
            let dst = dst;
            advise_huge(dst.0, n);
            // SAFETY: `dst.0` points at the `n` unwritten bytes of the new
            // object (see `bytes_uninit`), which does not overlap `scratch`.
            unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), dst.0, n) };
        });
        if scratch.len() > SCRATCH_KEEP {
            *scratch = Vec::new();
        }
        Ok(obj)
    })
}

/// A new `bytes` of exactly `len` bytes, written in place by `fill` with the
/// GIL released (no intermediate buffer, no zeroing); `fill` must write all
/// of them.
pub(crate) fn new_bytes_exact<'py, F>(
    py: Python<'py>,
    len: usize,
    fill: F,
) -> PyResult<Bound<'py, PyBytes>>
where
    F: Send + FnOnce(&mut [u8]) -> oxiblosc::Result<usize>,
{
    let (obj, ptr) = bytes_uninit(py, len)?;
    let dst = SendPtr(ptr);
    let n = py
        .detach(move || {
            let dst = dst;
            if len == 0 {
                return fill(&mut []);
            }
            advise_huge(dst.0, len);
            // The decoders write every byte they report; start from zeros
            // only where they may not (never for a successful call), so the
            // memory is initialised before a `&mut [u8]` is made of it.
            // SAFETY: `dst.0` points at `len` bytes owned by the new object,
            // not yet visible to any other thread; zeroing them makes them
            // initialised `u8`s, so the slice below is valid for its life.
            unsafe { std::ptr::write_bytes(dst.0, 0, len) };
            // SAFETY: as above; the object outlives this closure (the caller
            // holds it) and nothing else references its contents.
            let buf = unsafe { std::slice::from_raw_parts_mut(dst.0, len) };
            fill(buf)
        })
        .map_err(to_py)?;
    if n != len {
        return Err(BloscError::new_err(format!(
            "corrupt data: decompressed to {n} bytes, the header declares {len}"
        )));
    }
    Ok(obj)
}
