//! Special chunks.

use super::*;

// ---------------------------------------------------------------------------
// Special chunks.

pub(super) fn special(
    cparams: &blosc2_cparams,
    nbytes: i32,
    dest: *mut c_void,
    destsize: i32,
    kind: SpecialValue,
    value: &[u8],
) -> c_int {
    let ts = cparams.typesize;
    if !(1..=255).contains(&ts) {
        return err::INVALID_PARAM;
    }
    // C-Blosc2's two checks first, with its code (BLOSC2_ERROR_DATA): room
    // for the header (and a repeated value), and nbytes a multiple of the
    // type size (with C's signed remainder: -1 is refused but for type
    // size 1). Stricter checks of ours follow, where C-Blosc2 writes a
    // chunk it cannot read itself (nbytes < 0, NaNs of 1-byte items) or
    // ignores what it was given (a negative block size, an unknown codec):
    // capi/tests/c_interop.rs `special_chunks_as_c_blosc2_makes_them`.
    let room = 32 + if kind == SpecialValue::Value { ts } else { 0 };
    if destsize < room || nbytes % ts != 0 {
        return err::DATA;
    }
    if nbytes < 0 {
        return err::INVALID_PARAM;
    }
    // Special chunks have no streams, so no dictionary either.
    let p = match to_cparams(cparams) {
        Ok(p) => p.use_dict(false),
        Err(e) => return e,
    };
    let chunk = match special_chunk(&p, nbytes as usize, kind, value) {
        Ok(c) => c,
        Err(e) => return code_of(&e),
    };
    // The room checked above is the chunk's length (its header, and the
    // value); this guards the write below should that ever change.
    if chunk.len() > destsize.max(0) as usize {
        return err::DATA;
    }
    if dest.is_null() {
        return err::NULL_POINTER;
    }
    // SAFETY: dest has destsize >= chunk.len() writable bytes.
    unsafe { slice_out(dest, chunk.len()) }.copy_from_slice(&chunk);
    chunk.len() as c_int
}

/// A chunk of `nbytes` zeros.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_chunk_zeros(
    cparams: blosc2_cparams,
    nbytes: i32,
    dest: *mut c_void,
    destsize: i32,
) -> c_int {
    guard(err::FAILURE, || {
        special(&cparams, nbytes, dest, destsize, SpecialValue::Zeros, &[])
    })
}

/// A chunk of `nbytes` of NaNs (typesize 4 or 8).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_chunk_nans(
    cparams: blosc2_cparams,
    nbytes: i32,
    dest: *mut c_void,
    destsize: i32,
) -> c_int {
    guard(err::FAILURE, || {
        special(&cparams, nbytes, dest, destsize, SpecialValue::Nan, &[])
    })
}

/// A chunk of `nbytes` without defined content.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_chunk_uninit(
    cparams: blosc2_cparams,
    nbytes: i32,
    dest: *mut c_void,
    destsize: i32,
) -> c_int {
    guard(err::FAILURE, || {
        special(&cparams, nbytes, dest, destsize, SpecialValue::Uninit, &[])
    })
}

/// A chunk of `nbytes` repeating the `typesize`-byte value at `repeatval`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_chunk_repeatval(
    cparams: blosc2_cparams,
    nbytes: i32,
    dest: *mut c_void,
    destsize: i32,
    repeatval: *const c_void,
) -> c_int {
    guard(err::FAILURE, || {
        if repeatval.is_null() {
            return err::NULL_POINTER;
        }
        if cparams.typesize <= 0 {
            return err::INVALID_PARAM;
        }
        // SAFETY: repeatval points to one typesize-byte value.
        let v = unsafe { slice_in(repeatval, cparams.typesize as usize) };
        special(&cparams, nbytes, dest, destsize, SpecialValue::Value, v)
    })
}
