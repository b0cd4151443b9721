//! Items in and out through C buffers: `b2nd_get_slice_cbuffer`,
//! `b2nd_set_slice_cbuffer`, `b2nd_to_cbuffer`, and boxes made into new
//! arrays (`b2nd_get_slice`, `b2nd_copy`).

use super::create::{Copied, Init, create_shaped};
use super::*;

/// `b2nd_to_cbuffer`: the whole array in C order into `buffer` (at least
/// the array's bytes; `BLOSC2_ERROR_INVALID_PARAM` when shorter).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn b2nd_to_cbuffer(
    array: *const b2nd_array_t,
    buffer: *mut c_void,
    buffersize: i64,
) -> c_int {
    guard(err::FAILURE, || {
        // SAFETY: array is null or a live array from this library.
        let Some(a) = (unsafe { self::array(array) }) else {
            return err::NULL_POINTER;
        };
        if buffer.is_null() {
            return err::NULL_POINTER;
        }
        let Ok(len) = usize::try_from(buffersize) else {
            return err::INVALID_PARAM;
        };
        // SAFETY: buffer holds buffersize writable bytes (C's contract).
        let dst = unsafe { slice_out(buffer, len) };
        with_array(a, false, |sc, meta| {
            let n = meta.ndim();
            let need = ndarray::box_bytes(&meta.shape, sc.typesize())
                .filter(|&b| b <= dst.len() as u64)
                .ok_or_else(|| {
                    Error::InvalidParam(format!(
                        "a buffer of {} bytes for an array of shape {:?}",
                        dst.len(),
                        meta.shape
                    ))
                })?;
            let start = vec![0u64; n];
            let shape = meta.shape.clone();
            ndarray::get_slice(sc, meta, &start, &shape, &mut dst[..need as usize], &shape)
        })
    })
}

/// The whole box `start..stop` of `a` in C order, in a new buffer (the
/// box's shape with it); errors as `get_slice`.
pub(super) fn read_box(
    a: &mut Array,
    start: &[u64],
    stop: &[u64],
) -> Result<(Vec<u8>, Vec<u64>), c_int> {
    let mut out = Vec::new();
    let shape: Vec<u64> = start
        .iter()
        .zip(stop)
        .map(|(&lo, &hi)| hi.saturating_sub(lo))
        .collect();
    let rc = with_array(a, false, |sc, meta| {
        let n = ndarray::box_bytes(&shape, sc.typesize())
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| Error::InvalidParam("the box's bytes overflow".into()))?;
        // Within the output limit, and tried, not assumed.
        if let Some(limit) = sc.dparams().max_output.filter(|&l| n > l) {
            return Err(Error::InvalidParam(format!(
                "a box of {n} bytes, over the output limit of {limit}"
            )));
        }
        out.try_reserve_exact(n)
            .map_err(|_| Error::InvalidParam(format!("cannot allocate {n} bytes")))?;
        out.resize(n, 0);
        ndarray::get_slice(sc, meta, start, stop, &mut out, &shape)
    });
    if rc < 0 { Err(rc) } else { Ok((out, shape)) }
}

/// `b2nd_get_slice`: a new array (of `ctx`'s storage, chunks and blocks)
/// holding the box `start..stop` of `src`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn b2nd_get_slice(
    ctx: *mut b2nd_context_t,
    array: *mut *mut b2nd_array_t,
    src: *const b2nd_array_t,
    start: *const i64,
    stop: *const i64,
) -> c_int {
    guard(err::FAILURE, || {
        // SAFETY: src is null or a live array from this library.
        let Some(a) = (unsafe { self::array(src) }) else {
            return err::NULL_POINTER;
        };
        let n = a.c.ndim.max(0) as usize;
        // SAFETY: start and stop hold ndim values (C's contract).
        let (Some(lo), Some(hi)) = (unsafe { shape_arg(start, n) }, unsafe {
            shape_arg(stop, n)
        }) else {
            return err::NULL_POINTER;
        };
        let (data, shape) = match read_box(a, &lo, &hi) {
            Ok(x) => x,
            Err(rc) => return rc,
        };
        // SAFETY: C's contract: ctx from b2nd_create_ctx, array writable.
        unsafe {
            create_shaped(
                ctx,
                array,
                "b2nd_get_slice",
                Init::Data(&data),
                Some(&shape),
                None,
            )
        }
    })
}

/// `b2nd_copy`: a new array (of `ctx`'s storage, chunks and blocks)
/// holding `src`'s items.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn b2nd_copy(
    ctx: *mut b2nd_context_t,
    src: *const b2nd_array_t,
    array: *mut *mut b2nd_array_t,
) -> c_int {
    guard(err::FAILURE, || {
        // SAFETY: src is null or a live array from this library.
        let Some(a) = (unsafe { self::array(src) }) else {
            return err::NULL_POINTER;
        };
        // SAFETY: C's contract: ctx from b2nd_create_ctx (or null).
        let Some(c) = (unsafe { ctx.as_ref() }) else {
            return err::NULL_POINTER;
        };
        if array.is_null() {
            return err::NULL_POINTER;
        }
        // The same chunk and block shapes (and item size, and no
        // metalayers of the context's own): the compressed chunks are
        // copied as they are, as C-Blosc2's b2nd_copy copies the
        // super-chunk then; nothing is decoded.
        if c.metalayers.is_empty()
            && c.meta.chunkshape == a.meta.chunkshape
            && c.meta.blockshape == a.meta.blockshape
        {
            // SAFETY: the context's storage urlpath (C's contract).
            let urlpath = match unsafe { c.urlpath("b2nd_copy") } {
                Ok(u) => u,
                Err(rc) => return rc,
            };
            let cp = match to_cparams(&c.cparams) {
                Ok(p) => p,
                Err(e) => return e,
            };
            let mut made = None;
            let rc = with_array(a, false, |sc, meta| {
                if ndarray::dtype_itemsize(&c.meta.dtype).ok() != Some(sc.typesize()) {
                    return Ok(());
                }
                let copy =
                    ndarray::with_dims_in(sc, meta, meta, cp, |b| c.build(b, urlpath.as_deref()))?;
                made = Some((copy, meta.clone()));
                Ok(())
            });
            if rc < 0 {
                eprintln!("b2nd_copy: error {rc}");
                return rc;
            }
            if let Some((sc, meta)) = made {
                let mut cparams = c.cparams;
                cparams.typesize = sc.typesize() as i32;
                let h = handle_of(
                    sc,
                    cparams,
                    c.dparams,
                    urlpath.as_deref(),
                    c.storage.contiguous,
                );
                if h.is_null() {
                    return err::FAILURE;
                }
                // SAFETY: array is non-null (checked above) and writable.
                unsafe { *array = Array::boxed(h, meta) };
                return 0;
            }
        }
        // The source's other metalayers and its vlmetalayers go with the
        // copy, as C-Blosc2's b2nd_copy carries them.
        let mut copied = Copied {
            metalayers: Vec::new(),
            vlmetalayers: Vec::new(),
        };
        let r = with_locked(a.c.sc, false, |sc| -> oxiblosc::Result<()> {
            for m in sc.metalayers() {
                if m.name != ndarray::B2ND_META && m.name != ndarray::CATERVA_META {
                    copied.metalayers.push((m.name.clone(), m.content.clone()));
                }
            }
            let names: Vec<String> = sc.vlmeta_names().into_iter().map(String::from).collect();
            for name in names {
                if let Some(v) = sc.vlmeta_get(&name)? {
                    copied.vlmetalayers.push((name, v));
                }
            }
            Ok(())
        });
        match r {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return code(&e),
            Err(rc) => return rc,
        }
        let shape = a.meta.shape.clone();
        let zeros = vec![0u64; shape.len()];
        let (data, shape) = match read_box(a, &zeros, &shape) {
            Ok(x) => x,
            Err(rc) => return rc,
        };
        // SAFETY: C's contract: ctx from b2nd_create_ctx, array writable.
        unsafe {
            create_shaped(
                ctx,
                array,
                "b2nd_copy",
                Init::Data(&data),
                Some(&shape),
                Some(&copied),
            )
        }
    })
}

/// Start, stop and buffer shape of a slice call.
///
/// # Safety
/// Each pointer is null or points to `n` values.
unsafe fn box_args(
    n: usize,
    start: *const i64,
    stop: *const i64,
    bshape: *const i64,
) -> Option<(Vec<u64>, Vec<u64>, Vec<u64>)> {
    // SAFETY: the caller's contract.
    unsafe {
        Some((
            shape_arg(start, n)?,
            shape_arg(stop, n)?,
            shape_arg(bshape, n)?,
        ))
    }
}

/// `b2nd_get_slice_cbuffer`: read a box of the array into a C-order
/// buffer of shape `buffershape` (the box at its origin).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn b2nd_get_slice_cbuffer(
    array: *const b2nd_array_t,
    start: *const i64,
    stop: *const i64,
    buffer: *mut c_void,
    buffershape: *const i64,
    buffersize: i64,
) -> c_int {
    guard(err::FAILURE, || {
        // SAFETY: array is null or a live array from this library.
        let Some(a) = (unsafe { self::array(array) }) else {
            return err::NULL_POINTER;
        };
        if buffersize < 0 || buffer.is_null() {
            return err::INVALID_PARAM;
        }
        let n = a.c.ndim.max(0) as usize;
        // SAFETY: each holds ndim values (C's contract).
        let Some((lo, hi, bs)) = (unsafe { box_args(n, start, stop, buffershape) }) else {
            return err::NULL_POINTER;
        };
        // SAFETY: buffer holds buffersize writable bytes.
        let dst = unsafe { slice_out(buffer, buffersize as usize) };
        with_array(a, false, |sc, meta| {
            let need = ndarray::box_bytes(&bs, sc.typesize()).unwrap_or(u64::MAX);
            if need > dst.len() as u64 {
                return Err(Error::InvalidParam("buffer too small".into()));
            }
            ndarray::get_slice(sc, meta, &lo, &hi, &mut dst[..need as usize], &bs)
        })
    })
}

/// `b2nd_set_slice_cbuffer`: write a box of the array from a C-order
/// buffer, the whole write under one exclusive frame lock.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn b2nd_set_slice_cbuffer(
    buffer: *const c_void,
    buffershape: *const i64,
    buffersize: i64,
    start: *const i64,
    stop: *const i64,
    array: *mut b2nd_array_t,
) -> c_int {
    guard(err::FAILURE, || {
        // SAFETY: array is null or a live array from this library.
        let Some(a) = (unsafe { self::array(array) }) else {
            return err::NULL_POINTER;
        };
        if buffersize < 0 || buffer.is_null() {
            return err::INVALID_PARAM;
        }
        let n = a.c.ndim.max(0) as usize;
        // SAFETY: each holds ndim values (C's contract).
        let Some((lo, hi, bs)) = (unsafe { box_args(n, start, stop, buffershape) }) else {
            return err::NULL_POINTER;
        };
        // SAFETY: buffer holds buffersize readable bytes.
        let src = unsafe { slice_in(buffer, buffersize as usize) };
        with_array(a, true, |sc, meta| {
            let need = ndarray::box_bytes(&bs, sc.typesize()).unwrap_or(u64::MAX);
            if need > src.len() as u64 {
                return Err(Error::InvalidParam("buffer too small".into()));
            }
            ndarray::set_slice(sc, meta, &lo, &hi, &src[..need as usize], &bs)
        })
    })
}

/// `b2nd_copy_buffer2`: copy the box `src_start..src_stop` of `src`, a
/// C-order array of `src_pad_shape` items of `itemsize` bytes, into `dst`
/// (of `dst_pad_shape`) at `dst_start`. C-Blosc2 checks no bound; ours
/// checks every one (`BLOSC2_ERROR_INVALID_PARAM`), each buffer taken to
/// hold its shape's bytes.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn b2nd_copy_buffer2(
    ndim: i8,
    itemsize: i32,
    src: *const c_void,
    src_pad_shape: *const i64,
    src_start: *const i64,
    src_stop: *const i64,
    dst: *mut c_void,
    dst_pad_shape: *const i64,
    dst_start: *const i64,
) -> c_int {
    guard(err::FAILURE, || {
        let (Ok(n), Ok(is)) = (usize::try_from(ndim), usize::try_from(itemsize)) else {
            return err::INVALID_PARAM;
        };
        if n > B2ND_MAX_DIM || is == 0 {
            return err::INVALID_PARAM;
        }
        if src.is_null() || dst.is_null() {
            return err::NULL_POINTER;
        }
        // SAFETY: each shape and coordinate holds ndim values (C's contract).
        let (Some(ss), Some(lo), Some(hi), Some(ds), Some(at)) = (unsafe {
            (
                shape_arg(src_pad_shape, n),
                shape_arg(src_start, n),
                shape_arg(src_stop, n),
                shape_arg(dst_pad_shape, n),
                shape_arg(dst_start, n),
            )
        }) else {
            return err::INVALID_PARAM;
        };
        let bytes = |shape: &[u64]| {
            ndarray::box_bytes(shape, is)
                .and_then(|b| usize::try_from(b).ok())
                .filter(|&b| b <= isize::MAX as usize)
        };
        let (Some(sn), Some(dn)) = (bytes(&ss), bytes(&ds)) else {
            return err::INVALID_PARAM;
        };
        // SAFETY: src and dst hold their padded shapes' bytes (C's
        // contract), dst not overlapping src.
        let (s, d) = unsafe { (slice_in(src, sn), slice_out(dst, dn)) };
        match ndarray::copy_box(is, s, &ss, &lo, &hi, d, &ds, &at) {
            Ok(()) => 0,
            Err(e) => code(&e),
        }
    })
}

/// `b2nd_copy_buffer`: [`b2nd_copy_buffer2`] with a one-byte item size
/// (deprecated in C-Blosc2, kept for old code).
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn b2nd_copy_buffer(
    ndim: i8,
    itemsize: u8,
    src: *const c_void,
    src_pad_shape: *const i64,
    src_start: *const i64,
    src_stop: *const i64,
    dst: *mut c_void,
    dst_pad_shape: *const i64,
    dst_start: *const i64,
) -> c_int {
    // SAFETY: the caller's contract, as b2nd_copy_buffer2's.
    unsafe {
        b2nd_copy_buffer2(
            ndim,
            itemsize as i32,
            src,
            src_pad_shape,
            src_start,
            src_stop,
            dst,
            dst_pad_shape,
            dst_start,
        )
    }
}

/// `blosc2_unidim_to_multidim`: the C-order index of item `i` of an array
/// of `shape` (`ndim` values) into `index`: `i / stride[0]` first (not
/// reduced by `shape[0]`, as C-Blosc2 gives it), then each dimension's
/// place. Where C-Blosc2 divides by zero (a dimension of length 0 after
/// the first) or asserts (`ndim` over `B2ND_MAX_DIM`), ours writes 0 for
/// the dimensions it cannot place, or nothing.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_unidim_to_multidim(
    ndim: u8,
    shape: *mut i64,
    i: i64,
    index: *mut i64,
) {
    guard((), || {
        let n = ndim as usize;
        if n == 0 || n > B2ND_MAX_DIM || shape.is_null() || index.is_null() {
            return;
        }
        // SAFETY: shape and index hold ndim values (C's contract).
        let (shape, index) = unsafe {
            (
                std::slice::from_raw_parts(shape as *const i64, n),
                std::slice::from_raw_parts_mut(index, n),
            )
        };
        let mut strides = [1i64; B2ND_MAX_DIM];
        for j in (0..n - 1).rev() {
            strides[j] = shape[j + 1].wrapping_mul(strides[j + 1]);
        }
        for j in 0..n {
            let s = strides[j];
            let rest = if j == 0 {
                Some(i)
            } else {
                i.checked_rem(strides[j - 1])
            };
            index[j] = rest.and_then(|r| r.checked_div(s)).unwrap_or(0);
        }
    })
}

/// `blosc2_multidim_to_unidim`: `*i = Σ index[j] · strides[j]` over the
/// `ndim` dimensions (0 for none; wrapping where C would overflow).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_multidim_to_unidim(
    index: *const i64,
    ndim: i8,
    strides: *const i64,
    i: *mut i64,
) {
    guard((), || {
        if i.is_null() {
            return;
        }
        let n = usize::try_from(ndim).unwrap_or(0);
        let mut sum = 0i64;
        if n > 0 && !index.is_null() && !strides.is_null() {
            for j in 0..n {
                // SAFETY: index and strides hold ndim values (C's contract).
                let (x, s) = unsafe { (*index.add(j), *strides.add(j)) };
                sum = sum.wrapping_add(x.wrapping_mul(s));
            }
        }
        // SAFETY: i is non-null and writable (C's contract).
        unsafe { *i = sum };
    })
}
