//! Metalayers and variable-length metalayers.

use super::*;

// ---------------------------------------------------------------------------
// Metalayers.

/// # Safety
/// `name` is null or a NUL-terminated string.
pub(super) unsafe fn meta_name<'a>(name: *const c_char) -> Result<&'a str, c_int> {
    // SAFETY: the caller's contract.
    let n = unsafe { str_arg(name) }.ok_or(err::NULL_POINTER)?;
    if n.len() > METALAYER_NAME_MAXLEN {
        return Err(err::INVALID_PARAM);
    }
    Ok(n)
}

pub(super) fn meta_index(h: &Engine<'_>, name: &str) -> c_int {
    h.sc.metalayers()
        .iter()
        .position(|m| m.name == name)
        .map_or(-16, |i| i as c_int)
}

/// Add a fixed-length metalayer; its index.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_meta_add(
    schunk: *mut blosc2_schunk,
    name: *const c_char,
    content: *mut u8,
    content_len: i32,
) -> c_int {
    guard(err::FAILURE, || {
        with(schunk, err::INVALID_PARAM, true, |h| {
            // SAFETY: name is null or a NUL-terminated string.
            let name = match unsafe { meta_name(name) } {
                Ok(n) => n,
                Err(e) => return e,
            };
            if content_len < 0 || (content.is_null() && content_len > 0) {
                return err::INVALID_PARAM;
            }
            // SAFETY: content holds content_len bytes.
            let c = unsafe { slice_in(content as *const c_void, content_len as usize) };
            match h.sc.meta_add(name, c) {
                Ok(()) => meta_index(h, name),
                Err(e) => code_of(&e),
            }
        })
    })
}

/// Replace a metalayer's content (same length or shorter); its index.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_meta_update(
    schunk: *mut blosc2_schunk,
    name: *const c_char,
    content: *mut u8,
    content_len: i32,
) -> c_int {
    guard(err::FAILURE, || {
        with(schunk, err::INVALID_PARAM, true, |h| {
            // SAFETY: name is null or a NUL-terminated string.
            let name = match unsafe { meta_name(name) } {
                Ok(n) => n,
                Err(e) => return e,
            };
            if content_len < 0 || (content.is_null() && content_len > 0) {
                return err::INVALID_PARAM;
            }
            if meta_index(h, name) < 0 {
                return -16;
            }
            // SAFETY: content holds content_len bytes.
            let c = unsafe { slice_in(content as *const c_void, content_len as usize) };
            match h.sc.meta_update(name, c) {
                Ok(()) => meta_index(h, name),
                Err(e) => code_of(&e),
            }
        })
    })
}

pub(super) fn vlmeta_index(h: &Engine<'_>, name: &str) -> c_int {
    h.sc.vlmetalayers()
        .iter()
        .position(|m| m.name == name)
        .map_or(-16, |i| i as c_int)
}

/// The index of a vlmetalayer, or `BLOSC2_ERROR_NOT_FOUND`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_vlmeta_exists(
    schunk: *mut blosc2_schunk,
    name: *const c_char,
) -> c_int {
    guard(err::FAILURE, || {
        // SAFETY: schunk is null or live.
        if let Some(v) = unsafe { view_in_engine(schunk) } {
            // A callback of an engine call on this super-chunk.
            // SAFETY: name is null or a NUL-terminated string.
            return match unsafe { meta_name(name) } {
                Ok(n) => v.vlmeta(n).map_or(-16, |(i, _)| i as c_int),
                Err(e) => e,
            };
        }
        with_read(schunk, err::INVALID_PARAM, false, |h| {
            // SAFETY: name is null or a NUL-terminated string.
            match unsafe { meta_name(name) } {
                Ok(n) => vlmeta_index(h, n),
                Err(e) => e,
            }
        })
    })
}

/// Add a vlmetalayer; its index.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_vlmeta_add(
    schunk: *mut blosc2_schunk,
    name: *const c_char,
    content: *mut u8,
    content_len: i32,
    _cparams: *mut blosc2_cparams,
) -> c_int {
    guard(err::FAILURE, || {
        with(schunk, err::INVALID_PARAM, true, |h| {
            // SAFETY: name is null or a NUL-terminated string.
            let name = match unsafe { meta_name(name) } {
                Ok(n) => n,
                Err(e) => return e,
            };
            if content_len < 0 || (content.is_null() && content_len > 0) {
                return err::INVALID_PARAM;
            }
            if vlmeta_index(h, name) >= 0 {
                return err::INVALID_PARAM;
            }
            // SAFETY: content holds content_len bytes.
            let c = unsafe { slice_in(content as *const c_void, content_len as usize) };
            match h.sc.vlmeta_add(name, c) {
                Ok(()) => vlmeta_index(h, name),
                Err(e) => code_of(&e),
            }
        })
    })
}

/// Replace a vlmetalayer's content; its index.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_vlmeta_update(
    schunk: *mut blosc2_schunk,
    name: *const c_char,
    content: *mut u8,
    content_len: i32,
    _cparams: *mut blosc2_cparams,
) -> c_int {
    guard(err::FAILURE, || {
        with(schunk, err::INVALID_PARAM, true, |h| {
            // SAFETY: name is null or a NUL-terminated string.
            let name = match unsafe { meta_name(name) } {
                Ok(n) => n,
                Err(e) => return e,
            };
            if content_len < 0 || (content.is_null() && content_len > 0) {
                return err::INVALID_PARAM;
            }
            if vlmeta_index(h, name) < 0 {
                return -16;
            }
            // SAFETY: content holds content_len bytes.
            let c = unsafe { slice_in(content as *const c_void, content_len as usize) };
            match h.sc.vlmeta_update(name, c) {
                Ok(()) => vlmeta_index(h, name),
                Err(e) => code_of(&e),
            }
        })
    })
}

/// A malloc'ed copy of a vlmetalayer's content; its index.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_vlmeta_get(
    schunk: *mut blosc2_schunk,
    name: *const c_char,
    content: *mut *mut u8,
    content_len: *mut i32,
) -> c_int {
    guard(err::FAILURE, || {
        // SAFETY: schunk is null or live.
        if let Some(v) = unsafe { view_in_engine(schunk) } {
            // A callback of an engine call on this super-chunk (C-Blosc2's
            // test_urcodecs reads its codec's parameters so): from the C
            // view, which holds each vlmetalayer's stored chunk.
            // SAFETY: name is null or a NUL-terminated string.
            let name = match unsafe { meta_name(name) } {
                Ok(n) => n,
                Err(e) => return e,
            };
            if content.is_null() || content_len.is_null() {
                return err::INVALID_PARAM;
            }
            let Some((i, m)) = v.vlmeta(name) else {
                return -16;
            };
            return match oxiblosc::decompress(m.content()) {
                Ok(d) => {
                    // SAFETY: the out-pointers are non-null and writable.
                    unsafe {
                        *content = malloc_copy(&d);
                        *content_len = d.len() as i32;
                    }
                    i as c_int
                }
                Err(e) => code_of(&e),
            };
        }
        with_read(schunk, err::INVALID_PARAM, false, |h| {
            // SAFETY: name is null or a NUL-terminated string.
            let name = match unsafe { meta_name(name) } {
                Ok(n) => n,
                Err(e) => return e,
            };
            if content.is_null() || content_len.is_null() {
                return err::INVALID_PARAM;
            }
            match h.sc.vlmeta_get(name) {
                Ok(Some(v)) => {
                    // SAFETY: the out-pointers are non-null and writable.
                    unsafe {
                        *content = malloc_copy(&v);
                        *content_len = v.len() as i32;
                    }
                    vlmeta_index(h, name)
                }
                Ok(None) => -16,
                Err(e) => code_of(&e),
            }
        })
    })
}

/// Delete a vlmetalayer; the number left.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_vlmeta_delete(
    schunk: *mut blosc2_schunk,
    name: *const c_char,
) -> c_int {
    guard(err::FAILURE, || {
        with(schunk, err::INVALID_PARAM, true, |h| {
            // SAFETY: name is null or a NUL-terminated string.
            let name = match unsafe { meta_name(name) } {
                Ok(n) => n,
                Err(e) => return e,
            };
            if vlmeta_index(h, name) < 0 {
                return -16;
            }
            match h.sc.vlmeta_delete(name) {
                Ok(()) => h.sc.vlmetalayers().len() as c_int,
                Err(e) => code_of(&e),
            }
        })
    })
}

/// The vlmetalayer names into `names` (pointers into the super-chunk);
/// their number.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_vlmeta_get_names(
    schunk: *mut blosc2_schunk,
    names: *mut *mut c_char,
) -> c_int {
    guard(err::FAILURE, || {
        // SAFETY: schunk is null or live.
        let Some((h, _claim)) = (unsafe { handle(schunk) }) else {
            return err::INVALID_PARAM;
        };
        if names.is_null() {
            return err::NULL_POINTER;
        }
        for (i, m) in h.vlmetas.iter().enumerate() {
            // SAFETY: names has room for nvlmetalayers pointers (C's contract).
            unsafe { *names.add(i) = m.c.name };
        }
        h.vlmetas.len() as c_int
    })
}
