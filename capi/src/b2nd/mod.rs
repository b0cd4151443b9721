//! The C-Blosc2 `b2nd` (N-dimensional array) ABI over
//! [`oxiblosc::ndarray`].
//!
//! A `b2nd_array_t*` handed to C points to the first field of an
//! [`Array`]: the C-layout struct C code reads (`sc`, shape, chunk and block
//! shapes, their extended shapes, item counts, strides, dtype), refreshed
//! after every call, followed by the decoded metalayer. Its `sc` is a
//! super-chunk handle of [`crate::schunk`]; every call runs under that
//! handle's frame lock when `BLOSC_LOCKING` is on (writes exclusive, reads
//! shared, nesting in a `blosc2_schunk_lock` bracket) and first follows
//! changes other handles or processes made to the frame on disk.

#![allow(non_camel_case_types)]

use std::ffi::{CString, c_char, c_int, c_void};

use oxiblosc::ndarray::{self, Layout, MAX_DIM, NdMeta};
use oxiblosc::schunk::{Fill, SChunk};
use oxiblosc::{DParams, Error, MAX_BUFFERSIZE};

use crate::common::{guard, slice_in, slice_out, str_arg};
use crate::schunk::{
    blosc2_metalayer, blosc2_schunk, blosc2_schunk_free, blosc2_storage, forget_lock, handle_of,
    handle_of_opened, open_locked, with_locked,
};
use crate::v2::{CPARAMS_DEFAULTS, DPARAMS_DEFAULTS, code_of, err, to_cparams};

/// `B2ND_MAX_DIM`.
pub const B2ND_MAX_DIM: usize = 16;
const _: () = assert!(B2ND_MAX_DIM == MAX_DIM);

/// `struct chunk_cache_s` (unused here: always empty).
#[repr(C)]
pub struct chunk_cache_s {
    pub data: *mut u8,
    pub nchunk: i64,
}

/// `b2nd_array_t`, laid out as `b2nd.h` declares it.
#[repr(C)]
pub struct b2nd_array_t {
    pub sc: *mut blosc2_schunk,
    pub shape: [i64; B2ND_MAX_DIM],
    pub chunkshape: [i32; B2ND_MAX_DIM],
    pub extshape: [i64; B2ND_MAX_DIM],
    pub blockshape: [i32; B2ND_MAX_DIM],
    pub extchunkshape: [i64; B2ND_MAX_DIM],
    pub nitems: i64,
    pub chunknitems: i32,
    pub extnitems: i64,
    pub blocknitems: i32,
    pub extchunknitems: i64,
    pub ndim: i8,
    pub chunk_cache: chunk_cache_s,
    pub item_array_strides: [i64; B2ND_MAX_DIM],
    pub item_chunk_strides: [i64; B2ND_MAX_DIM],
    pub item_extchunk_strides: [i64; B2ND_MAX_DIM],
    pub item_block_strides: [i64; B2ND_MAX_DIM],
    pub block_chunk_strides: [i64; B2ND_MAX_DIM],
    pub chunk_array_strides: [i64; B2ND_MAX_DIM],
    pub dtype: *mut c_char,
    pub dtype_format: i8,
    pub last_tick: i64,
}

const _: () = assert!(std::mem::offset_of!(b2nd_array_t, shape) == 8);
const _: () = assert!(std::mem::offset_of!(b2nd_array_t, chunkshape) == 136);
const _: () = assert!(std::mem::offset_of!(b2nd_array_t, extshape) == 200);
const _: () = assert!(std::mem::offset_of!(b2nd_array_t, blockshape) == 328);
const _: () = assert!(std::mem::offset_of!(b2nd_array_t, extchunkshape) == 392);
const _: () = assert!(std::mem::offset_of!(b2nd_array_t, nitems) == 520);
const _: () = assert!(std::mem::offset_of!(b2nd_array_t, ndim) == 560);
const _: () = assert!(std::mem::offset_of!(b2nd_array_t, chunk_cache) == 568);
const _: () = assert!(std::mem::offset_of!(b2nd_array_t, dtype) == 1352);
const _: () = assert!(std::mem::size_of::<b2nd_array_t>() == 1376);

/// What a `b2nd_array_t*` points to (the C struct first).
#[repr(C)]
pub struct Array {
    c: b2nd_array_t,
    meta: NdMeta,
    dtype: CString,
    /// A view (`b2nd_squeeze`, `b2nd_expand_dims`): the super-chunk is
    /// another array's, shared (see [`share`]), and `meta` is the view's
    /// own shape of the same chunks, not the frame's metalayer.
    view: bool,
}

/// Super-chunk handles that views share, with the count of arrays beyond
/// the first that hold each (keyed by address): `b2nd_free` frees a
/// handle only when no other array holds it, whichever is freed first.
static SHARED: std::sync::Mutex<Vec<(usize, usize)>> = std::sync::Mutex::new(Vec::new());

/// One more array holds the handle `sc`.
fn share(sc: *mut blosc2_schunk) {
    let mut v = SHARED.lock().unwrap_or_else(|e| e.into_inner());
    match v.iter_mut().find(|(p, _)| *p == sc as usize) {
        Some((_, n)) => *n += 1,
        None => v.push((sc as usize, 1)),
    }
}

/// One array lets go of the handle `sc`: true when another still holds it
/// (then it must not be freed).
fn unshare(sc: *mut blosc2_schunk) -> bool {
    let mut v = SHARED.lock().unwrap_or_else(|e| e.into_inner());
    match v.iter().position(|(p, _)| *p == sc as usize) {
        Some(i) => {
            v[i].1 -= 1;
            if v[i].1 == 0 {
                v.swap_remove(i);
            }
            true
        }
        None => false,
    }
}

/// `B2ND_MAX_METALAYERS` (`BLOSC2_MAX_METALAYERS - 1`).
pub const B2ND_MAX_METALAYERS: usize = 15;

/// The head of a context, laid out as C-Blosc2's internal `struct
/// b2nd_context_s` (its `context.h`; `b2nd.h` declares the type opaque).
/// C-Blosc2's own b2nd tests read `ctx->ndim` and `ctx->shape`; our
/// `capi/peer-include/c-blosc2/context.h` declares the same fields. The
/// library reads its own copies, never this view.
#[repr(C)]
pub struct b2nd_context_view {
    /// Dimensions of the array.
    pub ndim: i8,
    /// The array's shape (the first `ndim` entries).
    pub shape: [i64; B2ND_MAX_DIM],
    /// Its chunks' shape.
    pub chunkshape: [i32; B2ND_MAX_DIM],
    /// Its blocks' shape.
    pub blockshape: [i32; B2ND_MAX_DIM],
    /// The dtype string (NUL-terminated, the context's own).
    pub dtype: *mut c_char,
    /// The dtype's format (0: NumPy).
    pub dtype_format: i8,
    /// The context's own storage (its `cparams`, `dparams` and `urlpath`
    /// pointing into the context, copied at `b2nd_create_ctx` as C does).
    pub b2_storage: *mut blosc2_storage,
    /// The metalayers the array is made with (the first `nmetalayers`).
    pub metalayers: [blosc2_metalayer; B2ND_MAX_METALAYERS],
    /// How many of `metalayers` are set.
    pub nmetalayers: i32,
}

// The offsets gcc gives `struct b2nd_context_s` on LP64.
const _: () = assert!(std::mem::offset_of!(b2nd_context_view, shape) == 8);
const _: () = assert!(std::mem::offset_of!(b2nd_context_view, chunkshape) == 136);
const _: () = assert!(std::mem::offset_of!(b2nd_context_view, blockshape) == 200);
const _: () = assert!(std::mem::offset_of!(b2nd_context_view, dtype) == 264);
const _: () = assert!(std::mem::offset_of!(b2nd_context_view, b2_storage) == 280);
const _: () = assert!(std::mem::offset_of!(b2nd_context_view, metalayers) == 288);
const _: () = assert!(std::mem::offset_of!(b2nd_context_view, nmetalayers) == 648);

/// `b2nd_context_t`: the C view first, then the library's own state (C
/// only ever uses the pointer `b2nd_create_ctx` hands out).
#[repr(C)]
pub struct b2nd_context_t {
    c: b2nd_context_view,
    storage: blosc2_storage,
    urlpath: Option<String>,
    cparams: crate::v2::blosc2_cparams,
    dparams: crate::v2::blosc2_dparams,
    meta: NdMeta,
    metalayers: Vec<(String, Vec<u8>)>,
    /// What the view's pointers point to.
    c_dtype: CString,
    c_urlpath: Option<CString>,
    c_names: Vec<CString>,
}

impl b2nd_context_t {
    /// A boxed context of these parameters, its C view filled from them
    /// and its pointers into the box.
    fn new(
        storage: blosc2_storage,
        urlpath: Option<String>,
        cparams: crate::v2::blosc2_cparams,
        dparams: crate::v2::blosc2_dparams,
        meta: NdMeta,
        metalayers: Vec<(String, Vec<u8>)>,
    ) -> Box<b2nd_context_t> {
        let cstring = |s: &str| CString::new(s.replace('\0', "")).unwrap_or_default();
        let mut b = Box::new(b2nd_context_t {
            // SAFETY: every field of the view is an integer, a raw pointer
            // or an array of them: all-zero is a valid value (filled below).
            c: unsafe { std::mem::zeroed() },
            storage,
            c_dtype: cstring(&meta.dtype),
            c_urlpath: urlpath.as_deref().map(cstring),
            c_names: metalayers.iter().map(|(name, _)| cstring(name)).collect(),
            urlpath,
            cparams,
            dparams,
            meta,
            metalayers,
        });
        let ctx = &mut *b;
        let (m, c) = (&ctx.meta, &mut ctx.c);
        let n = m.ndim().min(B2ND_MAX_DIM);
        c.ndim = n as i8;
        for d in 0..n {
            c.shape[d] = m.shape[d] as i64;
            c.chunkshape[d] = m.chunkshape[d] as i32;
            c.blockshape[d] = m.blockshape[d] as i32;
        }
        c.dtype_format = m.dtype_format as i8;
        c.dtype = ctx.c_dtype.as_ptr() as *mut c_char;
        ctx.storage.urlpath = ctx
            .c_urlpath
            .as_ref()
            .map_or(std::ptr::null_mut(), |u| u.as_ptr() as *mut c_char);
        ctx.storage.cparams = &mut ctx.cparams;
        ctx.storage.dparams = &mut ctx.dparams;
        c.b2_storage = &mut ctx.storage;
        let k = ctx.metalayers.len().min(B2ND_MAX_METALAYERS);
        for i in 0..k {
            c.metalayers[i] = blosc2_metalayer {
                name: ctx.c_names[i].as_ptr() as *mut c_char,
                content: ctx.metalayers[i].1.as_ptr() as *mut u8,
                content_len: ctx.metalayers[i].1.len() as i32,
            };
        }
        c.nmetalayers = k as i32;
        b
    }
}

fn strides(shape: &[i64]) -> [i64; B2ND_MAX_DIM] {
    let mut s = [0i64; B2ND_MAX_DIM];
    let n = shape.len();
    if n > 0 {
        s[n - 1] = 1;
        for d in (0..n - 1).rev() {
            s[d] = s[d + 1].saturating_mul(shape[d + 1]);
        }
    }
    s
}

impl Array {
    /// Refresh the C view from `meta`.
    fn sync(&mut self) {
        let m = &self.meta;
        let n = m.ndim();
        let c = &mut self.c;
        c.ndim = n as i8;
        let mut ext = [0i64; B2ND_MAX_DIM];
        let mut extc = [0i64; B2ND_MAX_DIM];
        let mut bpc = [0i64; B2ND_MAX_DIM];
        let mut cpa = [0i64; B2ND_MAX_DIM];
        c.shape = [0; B2ND_MAX_DIM];
        c.chunkshape = [0; B2ND_MAX_DIM];
        c.blockshape = [0; B2ND_MAX_DIM];
        for d in 0..n {
            let (s, cs, bs) = (
                m.shape[d] as i64,
                m.chunkshape[d] as i64,
                m.blockshape[d] as i64,
            );
            c.shape[d] = s;
            c.chunkshape[d] = cs as i32;
            c.blockshape[d] = bs as i32;
            // Rounded up to whole chunks and blocks, saturating (the
            // layout checks of `b2nd_open` and every call refuse arrays
            // whose padded shape does not fit; this view must not panic
            // on them either).
            let up = |x: i64, m: i64| -> i64 {
                if m <= 0 {
                    return x;
                }
                let r = (x.max(0) as u64)
                    .div_ceil(m as u64)
                    .saturating_mul(m as u64);
                i64::try_from(r).unwrap_or(i64::MAX)
            };
            ext[d] = up(s, cs);
            extc[d] = if bs == 0 { cs } else { up(cs, bs) };
            bpc[d] = if bs == 0 { 0 } else { extc[d] / bs };
            cpa[d] = if cs == 0 { 0 } else { ext[d] / cs };
        }
        c.extshape = ext;
        c.extchunkshape = extc;
        let prod = |v: &[i64]| v.iter().fold(1i64, |a, &b| a.saturating_mul(b));
        c.nitems = prod(&c.shape[..n]);
        c.chunknitems = prod(
            &c.chunkshape[..n]
                .iter()
                .map(|&x| x as i64)
                .collect::<Vec<_>>(),
        ) as i32;
        c.blocknitems = prod(
            &c.blockshape[..n]
                .iter()
                .map(|&x| x as i64)
                .collect::<Vec<_>>(),
        ) as i32;
        c.extnitems = prod(&ext[..n]);
        c.extchunknitems = prod(&extc[..n]);
        c.item_array_strides = strides(&c.shape[..n]);
        c.item_chunk_strides = strides(
            &c.chunkshape[..n]
                .iter()
                .map(|&x| x as i64)
                .collect::<Vec<_>>(),
        );
        c.item_extchunk_strides = strides(&extc[..n]);
        c.item_block_strides = strides(
            &c.blockshape[..n]
                .iter()
                .map(|&x| x as i64)
                .collect::<Vec<_>>(),
        );
        c.block_chunk_strides = strides(&bpc[..n]);
        c.chunk_array_strides = strides(&cpa[..n]);
        c.dtype = self.dtype.as_ptr() as *mut c_char;
        c.dtype_format = m.dtype_format as i8;
        c.chunk_cache = chunk_cache_s {
            data: std::ptr::null_mut(),
            nchunk: -1,
        };
    }

    fn boxed(sc: *mut blosc2_schunk, meta: NdMeta) -> *mut b2nd_array_t {
        Self::boxed_as(sc, meta, false)
    }

    /// A view over `sc`, another array's handle (shared: see [`share`]).
    fn boxed_view(sc: *mut blosc2_schunk, meta: NdMeta) -> *mut b2nd_array_t {
        share(sc);
        Self::boxed_as(sc, meta, true)
    }

    fn boxed_as(sc: *mut blosc2_schunk, meta: NdMeta, view: bool) -> *mut b2nd_array_t {
        let dtype = CString::new(meta.dtype.replace('\0', "")).unwrap_or_default();
        let mut a = Box::new(Array {
            // SAFETY: every field of b2nd_array_t is an integer, a raw
            // pointer or an array of them: all-zero is a valid value.
            c: unsafe { std::mem::zeroed() },
            meta,
            dtype,
            view,
        });
        a.c.sc = sc;
        a.sync();
        Box::into_raw(a) as *mut b2nd_array_t
    }
}

/// # Safety
/// `a` is null or a live array from this library.
unsafe fn array<'a>(a: *const b2nd_array_t) -> Option<&'a mut Array> {
    // SAFETY: a non-null b2nd_array_t* from this library points to the
    // first field of a live Array (repr(C)).
    unsafe { (a as *mut Array).as_mut() }
}

fn code(e: &Error) -> c_int {
    code_of(e)
}

/// Run `f` on the array's super-chunk and metalayer under the frame lock
/// (exclusive when `write`), the metalayer read again first (another
/// handle may have resized the array).
fn with_array(
    a: &mut Array,
    write: bool,
    f: impl FnOnce(&mut SChunk, &mut NdMeta) -> oxiblosc::Result<()>,
) -> c_int {
    let meta = &mut a.meta;
    let view = a.view;
    let r = with_locked(a.c.sc, write, |sc| {
        match ndarray::find_meta(sc) {
            // A view keeps its own shape, while the frame's array still
            // lays its items out in the same chunks.
            Ok(Some((_, m))) if view => {
                if !ndarray::same_chunks(&m, meta) {
                    return err::INVALID_PARAM;
                }
            }
            Ok(Some((_, m))) => {
                let dtype = std::mem::take(&mut meta.dtype);
                *meta = m;
                if !meta.has_dtype {
                    meta.dtype = dtype;
                }
            }
            Ok(None) => return err::DATA,
            Err(e) => return code(&e),
        }
        match f(sc, meta) {
            Ok(()) => 0,
            Err(e) => code(&e),
        }
    });
    a.sync();
    r.unwrap_or_else(|e| e)
}

/// A shape argument of `n` dimensions, each at least 0.
///
/// # Safety
/// `p` is null or points to `n` readable values.
unsafe fn shape_arg<T: Copy + Into<i64>>(p: *const T, n: usize) -> Option<Vec<u64>> {
    if n == 0 {
        return Some(Vec::new());
    }
    if p.is_null() {
        return None;
    }
    (0..n)
        .map(|i| {
            // SAFETY: i < n and p (non-null) points to n values.
            let x: i64 = unsafe { p.add(i).read_unaligned() }.into();
            u64::try_from(x).ok()
        })
        .collect()
}

mod context;
mod create;
mod dims;
mod meta;
mod reshape;
mod select;
mod slice;
mod storage;

pub use context::*;
pub use create::*;
pub use dims::*;
pub use meta::*;
pub use reshape::*;
pub use select::*;
pub use slice::*;
pub use storage::*;

#[cfg(test)]
mod data_tests;
#[cfg(test)]
mod select_tests;
#[cfg(test)]
mod tests;
