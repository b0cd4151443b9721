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
    /// Boxed, with the C view filled and its pointers into the box.
    fn boxed(mut self) -> Box<b2nd_context_t> {
        let m = &self.meta;
        let n = m.ndim().min(B2ND_MAX_DIM);
        // SAFETY: every field of the view is an integer, a raw pointer or
        // an array of them: all-zero is a valid value.
        self.c = unsafe { std::mem::zeroed() };
        self.c.ndim = n as i8;
        for d in 0..n {
            self.c.shape[d] = m.shape[d] as i64;
            self.c.chunkshape[d] = m.chunkshape[d] as i32;
            self.c.blockshape[d] = m.blockshape[d] as i32;
        }
        self.c.dtype_format = m.dtype_format as i8;
        self.c_dtype = CString::new(m.dtype.replace('\0', "")).unwrap_or_default();
        self.c_urlpath = self
            .urlpath
            .as_ref()
            .map(|u| CString::new(u.replace('\0', "")).unwrap_or_default());
        self.c_names = self
            .metalayers
            .iter()
            .map(|(name, _)| CString::new(name.replace('\0', "")).unwrap_or_default())
            .collect();
        let mut b = Box::new(self);
        let ctx = &mut *b;
        ctx.c.dtype = ctx.c_dtype.as_ptr() as *mut c_char;
        ctx.storage.urlpath = ctx
            .c_urlpath
            .as_ref()
            .map_or(std::ptr::null_mut(), |u| u.as_ptr() as *mut c_char);
        ctx.storage.cparams = &mut ctx.cparams;
        ctx.storage.dparams = &mut ctx.dparams;
        ctx.c.b2_storage = &mut ctx.storage;
        let k = ctx.metalayers.len().min(B2ND_MAX_METALAYERS);
        for i in 0..k {
            ctx.c.metalayers[i] = blosc2_metalayer {
                name: ctx.c_names[i].as_ptr() as *mut c_char,
                content: ctx.metalayers[i].1.as_ptr() as *mut u8,
                content_len: ctx.metalayers[i].1.len() as i32,
            };
        }
        ctx.c.nmetalayers = k as i32;
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
        let dtype = CString::new(meta.dtype.replace('\0', "")).unwrap_or_default();
        let mut a = Box::new(Array {
            // SAFETY: every field of b2nd_array_t is an integer, a raw
            // pointer or an array of them: all-zero is a valid value.
            c: unsafe { std::mem::zeroed() },
            meta,
            dtype,
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
    let r = with_locked(a.c.sc, write, |sc| {
        match ndarray::find_meta(sc) {
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

/// `b2nd_create_ctx`: the parameters of a new array (NULL on bad input).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn b2nd_create_ctx(
    b2_storage: *const blosc2_storage,
    ndim: i8,
    shape: *const i64,
    chunkshape: *const i32,
    blockshape: *const i32,
    dtype: *const c_char,
    dtype_format: i8,
    metalayers: *const blosc2_metalayer,
    nmetalayers: i32,
) -> *mut b2nd_context_t {
    guard(std::ptr::null_mut(), || {
        if !(0..=B2ND_MAX_DIM as i8).contains(&ndim) || dtype_format < 0 || nmetalayers < 0 {
            return std::ptr::null_mut();
        }
        let n = ndim as usize;
        // SAFETY: storage is null or points to C's storage.
        let st = unsafe { b2_storage.as_ref() }.copied();
        // SAFETY: cparams is null or points to C's cparams.
        let cp = st
            .and_then(|s| unsafe { s.cparams.as_ref() }.copied())
            .unwrap_or(CPARAMS_DEFAULTS);
        // SAFETY: dparams is null or points to C's dparams.
        let dp = st
            .and_then(|s| unsafe { s.dparams.as_ref() }.copied())
            .unwrap_or(DPARAMS_DEFAULTS);
        // SAFETY: the shape arrays hold ndim values (C's contract).
        let (Some(sh), Some(cs), Some(bs)) = (
            unsafe { shape_arg(shape, n) },
            unsafe { shape_arg(chunkshape, n) },
            unsafe { shape_arg(blockshape, n) },
        ) else {
            return std::ptr::null_mut();
        };
        // Products C keeps in int32 (items of a chunk, of a block) and
        // int64 (of the array): a geometry past them makes no context, as
        // in C-Blosc2 (its test b2nd/test_b2nd_shape_overflow).
        let fits = |v: &[u64], max: u64| {
            v.iter()
                .try_fold(1u64, |a, &d| a.checked_mul(d))
                .is_some_and(|p| p <= max)
        };
        if !fits(&cs, i32::MAX as u64) || !fits(&bs, i32::MAX as u64) || !fits(&sh, i64::MAX as u64)
        {
            return std::ptr::null_mut();
        }
        // SAFETY: dtype is null or a NUL-terminated string.
        let dt = match unsafe { str_arg(dtype) } {
            Some(d) => d.to_string(),
            None => format!("|S{}", cp.typesize),
        };
        let mut meta = NdMeta::new(&sh, &cs, &bs, &dt);
        meta.dtype_format = dtype_format as u8;
        let mut metas = Vec::new();
        for i in 0..nmetalayers as usize {
            // SAFETY: metalayers holds nmetalayers entries (C's contract).
            let Some(m) = (unsafe { metalayers.add(i).as_ref() }) else {
                return std::ptr::null_mut();
            };
            // SAFETY: name is null or a NUL-terminated string.
            let Some(name) = (unsafe { str_arg(m.name) }) else {
                return std::ptr::null_mut();
            };
            if m.content_len < 0 {
                return std::ptr::null_mut();
            }
            // SAFETY: content holds content_len bytes.
            let content = unsafe { slice_in(m.content as *const c_void, m.content_len as usize) };
            metas.push((name.to_string(), content.to_vec()));
        }
        // SAFETY: urlpath is null or a NUL-terminated string.
        let url = st
            .and_then(|s| unsafe { str_arg(s.urlpath) })
            .map(|u| u.strip_prefix("file:///").unwrap_or(u).to_string());
        let storage = st.unwrap_or(blosc2_storage {
            contiguous: false,
            urlpath: std::ptr::null_mut(),
            cparams: std::ptr::null_mut(),
            dparams: std::ptr::null_mut(),
            io: std::ptr::null_mut(),
        });
        Box::into_raw(
            b2nd_context_t {
                // SAFETY: all-zero is a valid view (integers and pointers);
                // `boxed` fills it.
                c: unsafe { std::mem::zeroed() },
                storage,
                urlpath: url,
                cparams: cp,
                dparams: dp,
                meta,
                metalayers: metas,
                c_dtype: CString::default(),
                c_urlpath: None,
                c_names: Vec::new(),
            }
            .boxed(),
        )
    })
}

/// `b2nd_free_ctx`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn b2nd_free_ctx(ctx: *mut b2nd_context_t) -> c_int {
    guard(err::FAILURE, || {
        if ctx.is_null() {
            return err::NULL_POINTER;
        }
        // SAFETY: ctx was made by b2nd_create_ctx and is freed once.
        drop(unsafe { Box::from_raw(ctx) });
        0
    })
}

/// What a new array's chunks hold.
enum Init<'a> {
    /// Special chunks of this kind (`Fill::Value`'s item checked against
    /// the item size first).
    Special(Fill<'a>),
    /// The array's items in C order, compressed chunk by chunk.
    Data(&'a [u8]),
}

/// A new array of `ctx`'s parameters into `*array`; `what` names the C call
/// in the message printed on failure.
///
/// # Safety
/// `ctx` is null or a live context from `b2nd_create_ctx`; `array` is null
/// or writable.
unsafe fn create(
    ctx: *mut b2nd_context_t,
    array: *mut *mut b2nd_array_t,
    what: &str,
    init: Init<'_>,
) -> c_int {
    // SAFETY: the caller's contract.
    unsafe { create_shaped(ctx, array, what, init, None, None) }
}

/// What `b2nd_copy` carries over from the source array besides its items:
/// its metalayers other than the array's own, and its vlmetalayers.
struct Copied {
    metalayers: Vec<(String, Vec<u8>)>,
    vlmetalayers: Vec<(String, Vec<u8>)>,
}

/// [`create`] with the array's shape `shape` instead of the context's (of
/// as many dimensions: `BLOSC2_ERROR_INVALID_PARAM` otherwise), as
/// `b2nd_get_slice` and `b2nd_copy` make theirs.
///
/// # Safety
/// As [`create`].
unsafe fn create_shaped(
    ctx: *mut b2nd_context_t,
    array: *mut *mut b2nd_array_t,
    what: &str,
    init: Init<'_>,
    shape: Option<&[u64]>,
    copied: Option<&Copied>,
) -> c_int {
    // SAFETY: the caller's contract.
    let (Some(ctx), false) = (unsafe { ctx.as_ref() }, array.is_null()) else {
        return err::NULL_POINTER;
    };
    let cp = match to_cparams(&ctx.cparams) {
        Ok(p) => p,
        Err(e) => return e,
    };
    let mut meta = ctx.meta.clone();
    if let Some(shape) = shape {
        if shape.len() != meta.ndim() {
            eprintln!(
                "{what}: an array of {} dimensions for a context of {}",
                shape.len(),
                meta.ndim()
            );
            return err::INVALID_PARAM;
        }
        meta.shape = shape.to_vec();
    }
    // A chunk (padded to whole blocks) past the largest buffer a chunk may
    // hold is C-Blosc2's BLOSC2_ERROR_MAX_BUFSIZE_EXCEEDED (its test
    // `b2nd/test_b2nd_chunk_overflow`), not a layout error.
    if let Ok(itemsize) = ndarray::dtype_itemsize(&meta.dtype) {
        let padded = meta
            .chunkshape
            .iter()
            .zip(&meta.blockshape)
            .try_fold(itemsize as u64, |a, (&c, &b)| {
                a.checked_mul(if b == 0 { c } else { c.div_ceil(b) * b })
            });
        if padded.is_none_or(|n| n > MAX_BUFFERSIZE as u64) {
            eprintln!("{what}: a chunk of more than {MAX_BUFFERSIZE} bytes");
            return err::MAX_BUFSIZE_EXCEEDED;
        }
    }
    let made = (|| -> oxiblosc::Result<SChunk> {
        let itemsize = ndarray::dtype_itemsize(&meta.dtype)?;
        let layout = Layout::new(&meta, itemsize)?;
        // Checked before anything is made: a fill item of the item size,
        // NaNs of 4 or 8 bytes, the whole array's bytes.
        match &init {
            Init::Special(Fill::Value(v)) if v.len() != itemsize => {
                return Err(Error::InvalidParam(format!(
                    "a fill value of {} bytes for items of {itemsize}",
                    v.len()
                )));
            }
            Init::Special(Fill::Nan) if itemsize != 4 && itemsize != 8 => {
                return Err(Error::InvalidParam(format!(
                    "NaNs need items of 4 or 8 bytes, not {itemsize}"
                )));
            }
            Init::Data(d) if (d.len() as u64) < layout.nbytes() => {
                return Err(Error::InvalidParam(format!(
                    "a buffer of {} bytes for an array of {}",
                    d.len(),
                    layout.nbytes()
                )));
            }
            _ => {}
        }
        let mut b = ndarray::builder(&meta, cp)?
            .fsync(false)
            .dparams(DParams::default().nthreads(ctx.dparams.nthreads.max(1) as usize));
        for (name, content) in &ctx.metalayers {
            b = b.meta(name, content);
        }
        for (name, content) in copied.map_or(&[][..], |c| &c.metalayers[..]) {
            if !ctx.metalayers.iter().any(|(n, _)| n == name) {
                b = b.meta(name, content);
            }
        }
        let mut sc = match &ctx.urlpath {
            None => b.build_memory()?,
            Some(u) if ctx.storage.contiguous => b.create_file(u)?,
            Some(u) => b.create_dir(u)?,
        };
        for (name, value) in copied.map_or(&[][..], |c| &c.vlmetalayers[..]) {
            sc.vlmeta_set(name, value)?;
        }
        match init {
            Init::Data(d) => ndarray::fill(&mut sc, &meta, &d[..layout.nbytes() as usize])?,
            Init::Special(Fill::Value(v)) if v.len() > 255 => {
                // A chunk header's type size is one byte: items of more
                // than 255 bytes make no repeated-value chunk. One chunk
                // of the value repeated, compressed once, stored for all.
                let buf: Vec<u8> = v
                    .iter()
                    .copied()
                    .cycle()
                    .take(layout.chunk_nbytes())
                    .collect();
                let chunk = oxiblosc::compress(&buf, sc.compress_params())?;
                for _ in 0..layout.nchunks() {
                    sc.append_chunk(&chunk)?;
                }
            }
            Init::Special(fill) if layout.nchunks() > 0 => {
                // The items of all chunks, padding included (edge chunks
                // and blocks are whole): more than the array's, past u64
                // for a large array.
                let per = (layout.chunk_nbytes() / itemsize) as u64;
                let items = per.checked_mul(layout.nchunks()).ok_or_else(|| {
                    Error::InvalidParam(format!(
                        "{} chunks of {per} items overflow",
                        layout.nchunks()
                    ))
                })?;
                sc.fill_special(items, fill, layout.chunk_nbytes())?;
            }
            Init::Special(_) => {}
        }
        Ok(sc)
    })();
    let sc = match made {
        Ok(sc) => sc,
        Err(e) => {
            eprintln!("{what}: {e}");
            return code(&e);
        }
    };
    let mut cparams = ctx.cparams;
    cparams.typesize = sc.typesize() as i32;
    let h = handle_of(sc, cparams, ctx.dparams, ctx.urlpath.as_deref());
    if h.is_null() {
        return err::FAILURE;
    }
    // SAFETY: array is non-null (checked above) and writable.
    unsafe { *array = Array::boxed(h, meta) };
    0
}

/// `b2nd_zeros`: a new array of zeros (chunks recorded as zero chunks).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn b2nd_zeros(
    ctx: *mut b2nd_context_t,
    array: *mut *mut b2nd_array_t,
) -> c_int {
    // SAFETY: C's contract: ctx from b2nd_create_ctx, array writable.
    guard(err::FAILURE, || unsafe {
        create(ctx, array, "b2nd_zeros", Init::Special(Fill::Zeros))
    })
}

/// `b2nd_empty`: a new array, of zero chunks as C-Blosc2 3.x makes it
/// (python-blosc2's `empty` reads zeros).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn b2nd_empty(
    ctx: *mut b2nd_context_t,
    array: *mut *mut b2nd_array_t,
) -> c_int {
    // SAFETY: C's contract: ctx from b2nd_create_ctx, array writable.
    guard(err::FAILURE, || unsafe {
        create(ctx, array, "b2nd_empty", Init::Special(Fill::Zeros))
    })
}

/// `b2nd_uninit`: a new array of uninitialised chunks (read as zeros here).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn b2nd_uninit(
    ctx: *mut b2nd_context_t,
    array: *mut *mut b2nd_array_t,
) -> c_int {
    // SAFETY: C's contract: ctx from b2nd_create_ctx, array writable.
    guard(err::FAILURE, || unsafe {
        create(ctx, array, "b2nd_uninit", Init::Special(Fill::Uninit))
    })
}

/// `b2nd_nans`: a new array of NaN chunks (items of 4 or 8 bytes; other
/// sizes are `BLOSC2_ERROR_INVALID_PARAM`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn b2nd_nans(
    ctx: *mut b2nd_context_t,
    array: *mut *mut b2nd_array_t,
) -> c_int {
    // SAFETY: C's contract: ctx from b2nd_create_ctx, array writable.
    guard(err::FAILURE, || unsafe {
        create(ctx, array, "b2nd_nans", Init::Special(Fill::Nan))
    })
}

/// `b2nd_full`: a new array whose every item is the item size's bytes at
/// `fill_value` (chunks of a repeated value).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn b2nd_full(
    ctx: *mut b2nd_context_t,
    array: *mut *mut b2nd_array_t,
    fill_value: *const c_void,
) -> c_int {
    guard(err::FAILURE, || {
        // SAFETY: ctx is null or a live context from b2nd_create_ctx.
        let Some(c) = (unsafe { ctx.as_ref() }) else {
            return err::NULL_POINTER;
        };
        if fill_value.is_null() {
            return err::NULL_POINTER;
        }
        let itemsize = match ndarray::dtype_itemsize(&c.meta.dtype) {
            Ok(n) => n,
            Err(e) => return code(&e),
        };
        // SAFETY: fill_value points to one item (C's contract).
        let value = unsafe { slice_in(fill_value, itemsize) };
        // SAFETY: C's contract: array writable.
        unsafe { create(ctx, array, "b2nd_full", Init::Special(Fill::Value(value))) }
    })
}

/// `b2nd_from_cbuffer`: a new array holding the C-order items of `buffer`
/// (at least the array's bytes; `BLOSC2_ERROR_INVALID_PARAM` when
/// shorter).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn b2nd_from_cbuffer(
    ctx: *mut b2nd_context_t,
    array: *mut *mut b2nd_array_t,
    buffer: *const c_void,
    buffersize: i64,
) -> c_int {
    guard(err::FAILURE, || {
        if buffer.is_null() {
            return err::NULL_POINTER;
        }
        let Ok(len) = usize::try_from(buffersize) else {
            return err::INVALID_PARAM;
        };
        // SAFETY: buffer holds buffersize readable bytes (C's contract).
        let data = unsafe { slice_in(buffer, len) };
        // SAFETY: C's contract: ctx from b2nd_create_ctx, array writable.
        unsafe { create(ctx, array, "b2nd_from_cbuffer", Init::Data(data)) }
    })
}

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
            let need = meta
                .shape
                .iter()
                .try_fold(sc.typesize() as u64, |a, &d| a.checked_mul(d))
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

/// `b2nd_open`: open an array stored in a frame file or directory.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn b2nd_open(urlpath: *const c_char, array: *mut *mut b2nd_array_t) -> c_int {
    guard(err::FAILURE, || {
        if array.is_null() {
            return err::NULL_POINTER;
        }
        // SAFETY: urlpath is null or a NUL-terminated string.
        let Some(url) = (unsafe { str_arg(urlpath) }) else {
            return err::NULL_POINTER;
        };
        let url = url.strip_prefix("file:///").unwrap_or(url);
        let sc = match open_locked(url, || oxiblosc::OpenOptions::new().fsync(false).open(url)) {
            Ok(sc) => sc,
            Err(e) => return code(&e),
        };
        let mut meta = match ndarray::find_meta(&sc) {
            Ok(Some((_, m))) => m,
            Ok(None) => return err::INVALID_PARAM,
            Err(e) => return code(&e),
        };
        // An array the library cannot lay out, or whose chunks its shape
        // does not account for, is refused here rather than at each call.
        if let Err(e) = ndarray::layout_of(&sc, &meta) {
            return code(&e);
        }
        if !meta.has_dtype {
            meta.dtype = NdMeta::default_dtype(sc.typesize());
        }
        let h = handle_of_opened(sc, Some(url));
        if h.is_null() {
            return err::FAILURE;
        }
        // SAFETY: array is non-null (checked above) and writable.
        unsafe { *array = Array::boxed(h, meta) };
        0
    })
}

/// `b2nd_free`: free an array and its super-chunk.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn b2nd_free(array: *mut b2nd_array_t) -> c_int {
    guard(err::FAILURE, || {
        if array.is_null() {
            return 0;
        }
        // SAFETY: array was made by this library and is freed once.
        let a = unsafe { Box::from_raw(array as *mut Array) };
        if !a.c.sc.is_null() {
            forget_lock(a.c.sc);
            // SAFETY: the super-chunk handle belongs to this array.
            unsafe { blosc2_schunk_free(a.c.sc) };
        }
        0
    })
}

/// The array over the super-chunk handle `h` (its `b2nd` or `caterva`
/// metalayer read and laid out), into `*array`; `h` is freed on failure
/// only when `free_on_error`.
///
/// # Safety
/// `h` is null or a live super-chunk from this library; `array` writable.
unsafe fn array_of_handle(
    h: *mut blosc2_schunk,
    array: *mut *mut b2nd_array_t,
    free_on_error: bool,
) -> c_int {
    let meta = with_locked(h, false, |sc| -> oxiblosc::Result<Option<NdMeta>> {
        let Some((_, mut meta)) = ndarray::find_meta(sc)? else {
            return Ok(None);
        };
        ndarray::layout_of(sc, &meta)?;
        if !meta.has_dtype {
            meta.dtype = NdMeta::default_dtype(sc.typesize());
        }
        Ok(Some(meta))
    });
    let rc = match meta {
        Ok(Ok(Some(meta))) => {
            // SAFETY: array is non-null (the callers check) and writable.
            unsafe { *array = Array::boxed(h, meta) };
            return 0;
        }
        Ok(Ok(None)) => err::INVALID_PARAM,
        Ok(Err(e)) => code(&e),
        Err(rc) => rc,
    };
    if free_on_error && !h.is_null() {
        // SAFETY: h is this library's super-chunk, not handed out.
        unsafe { blosc2_schunk_free(h) };
    }
    rc
}

/// `b2nd_from_schunk`: the array a super-chunk holds (its `b2nd`
/// metalayer). The array takes the super-chunk: `b2nd_free` frees it.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn b2nd_from_schunk(
    schunk: *mut blosc2_schunk,
    array: *mut *mut b2nd_array_t,
) -> c_int {
    guard(err::FAILURE, || {
        if schunk.is_null() || array.is_null() {
            return err::NULL_POINTER;
        }
        // SAFETY: C's contract: a live super-chunk, a writable out pointer.
        unsafe { array_of_handle(schunk, array, false) }
    })
}

/// `b2nd_to_cframe`: the array's contiguous frame, in memory from
/// `malloc` (`*needs_free` true: the caller `free()`s it).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn b2nd_to_cframe(
    array: *const b2nd_array_t,
    cframe: *mut *mut u8,
    cframe_len: *mut i64,
    needs_free: *mut bool,
) -> c_int {
    guard(err::FAILURE, || {
        // SAFETY: array is null or a live array from this library.
        let Some(a) = (unsafe { self::array(array) }) else {
            return err::NULL_POINTER;
        };
        if cframe.is_null() || cframe_len.is_null() || needs_free.is_null() {
            return err::NULL_POINTER;
        }
        // SAFETY: the array's super-chunk handle; the out pointers are
        // non-null and writable (C's contract).
        let n = unsafe { crate::schunk::blosc2_schunk_to_buffer(a.c.sc, cframe, needs_free) };
        if n < 0 {
            return n as c_int;
        }
        // SAFETY: non-null (checked) and writable.
        unsafe { *cframe_len = n };
        0
    })
}

/// `b2nd_from_cframe`: the array in a contiguous frame in memory (`copy`:
/// the frame's bytes copied, else borrowed: they must outlive the array).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn b2nd_from_cframe(
    cframe: *mut u8,
    cframe_len: i64,
    copy: bool,
    array: *mut *mut b2nd_array_t,
) -> c_int {
    guard(err::FAILURE, || {
        if cframe.is_null() || array.is_null() {
            return err::NULL_POINTER;
        }
        // SAFETY: cframe holds cframe_len bytes (C's contract).
        let h = unsafe { crate::schunk::blosc2_schunk_from_buffer(cframe, cframe_len, copy) };
        if h.is_null() {
            return err::INVALID_PARAM;
        }
        // SAFETY: h is the new super-chunk; array is writable.
        unsafe { array_of_handle(h, array, true) }
    })
}

/// `b2nd_open_offset`: the array in the frame starting at `offset` of the
/// file `urlpath`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn b2nd_open_offset(
    urlpath: *const c_char,
    array: *mut *mut b2nd_array_t,
    offset: i64,
) -> c_int {
    guard(err::FAILURE, || {
        if urlpath.is_null() || array.is_null() {
            return err::NULL_POINTER;
        }
        // SAFETY: urlpath is a NUL-terminated string (C's contract).
        let h = unsafe { crate::schunk::blosc2_schunk_open_offset(urlpath, offset) };
        if h.is_null() {
            return err::FILE_OPEN;
        }
        // SAFETY: h is the new super-chunk; array is writable.
        unsafe { array_of_handle(h, array, true) }
    })
}

/// `b2nd_save`: a copy of the array at `urlpath` (a contiguous frame file
/// when the array's super-chunk is contiguous, a directory otherwise, as
/// C-Blosc2 saves it).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn b2nd_save(array: *const b2nd_array_t, urlpath: *mut c_char) -> c_int {
    guard(err::FAILURE, || {
        // SAFETY: array is null or a live array from this library.
        let Some(a) = (unsafe { self::array(array) }) else {
            return err::NULL_POINTER;
        };
        if urlpath.is_null() || a.c.sc.is_null() {
            return err::NULL_POINTER;
        }
        // SAFETY: the handle's storage is null or its own live struct.
        let contiguous = unsafe { (*a.c.sc).storage.as_ref() }.is_none_or(|st| st.contiguous);
        let mut storage = blosc2_storage {
            contiguous,
            urlpath,
            cparams: std::ptr::null_mut(),
            dparams: std::ptr::null_mut(),
            io: std::ptr::null_mut(),
        };
        // SAFETY: the array's super-chunk handle and a complete storage.
        let copy = unsafe { crate::schunk::blosc2_schunk_copy(a.c.sc, &mut storage) };
        if copy.is_null() {
            return err::FILE_WRITE;
        }
        // SAFETY: the copy's handle, freed once.
        unsafe { blosc2_schunk_free(copy) };
        0
    })
}

/// `b2nd_serialize_meta`: the `b2nd` metalayer of a geometry, in memory
/// from `malloc` at `*smeta` (the caller `free()`s it); its length, or a
/// negative error code.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn b2nd_serialize_meta(
    ndim: i8,
    shape: *const i64,
    chunkshape: *const i32,
    blockshape: *const i32,
    dtype: *const c_char,
    dtype_format: i8,
    smeta: *mut *mut u8,
) -> c_int {
    guard(err::FAILURE, || {
        if smeta.is_null() {
            return err::NULL_POINTER;
        }
        if !(0..=B2ND_MAX_DIM as i8).contains(&ndim) || dtype_format < 0 {
            return err::INVALID_PARAM;
        }
        let n = ndim as usize;
        // SAFETY: the shape arrays hold ndim values (C's contract).
        let (Some(sh), Some(cs), Some(bs)) = (
            unsafe { shape_arg(shape, n) },
            unsafe { shape_arg(chunkshape, n) },
            unsafe { shape_arg(blockshape, n) },
        ) else {
            return err::INVALID_PARAM;
        };
        // SAFETY: dtype is null or a NUL-terminated string.
        let dt = unsafe { str_arg(dtype) }.unwrap_or(ndarray::DEFAULT_DTYPE);
        let mut meta = NdMeta::new(&sh, &cs, &bs, dt);
        meta.dtype_format = dtype_format as u8;
        let bytes = match meta.encode() {
            Ok(b) => b,
            Err(e) => return code(&e),
        };
        let p = crate::common::malloc_copy(&bytes);
        if p.is_null() {
            return err::MEMORY_ALLOC;
        }
        // SAFETY: smeta is non-null and writable (C's contract).
        unsafe { *smeta = p };
        bytes.len() as c_int
    })
}

/// `b2nd_deserialize_meta`: read a `b2nd` (or `caterva`) metalayer of
/// `smeta_len` bytes, every value checked ([`NdMeta::decode`]); `*dtype`
/// from `malloc` (the caller `free()`s it; NULL for a `caterva` one). The
/// bytes read, or a negative error code.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn b2nd_deserialize_meta(
    smeta: *const u8,
    smeta_len: i32,
    ndim: *mut i8,
    shape: *mut i64,
    chunkshape: *mut i32,
    blockshape: *mut i32,
    dtype: *mut *mut c_char,
    dtype_format: *mut i8,
) -> c_int {
    guard(err::FAILURE, || {
        if smeta.is_null() || ndim.is_null() || smeta_len < 0 {
            return err::INVALID_PARAM;
        }
        // SAFETY: smeta holds smeta_len bytes (C's contract).
        let raw = unsafe { slice_in(smeta as *const c_void, smeta_len as usize) };
        let meta = match NdMeta::decode(raw) {
            Ok(m) => m,
            Err(_) => return err::FAILURE,
        };
        let n = meta.ndim();
        // SAFETY: the out pointers hold B2ND_MAX_DIM values each and are
        // writable, or are null (then skipped), as C's reader assumes.
        unsafe {
            *ndim = n as i8;
            for d in 0..n {
                if !shape.is_null() {
                    *shape.add(d) = meta.shape[d] as i64;
                }
                if !chunkshape.is_null() {
                    *chunkshape.add(d) = meta.chunkshape[d] as i32;
                }
                if !blockshape.is_null() {
                    *blockshape.add(d) = meta.blockshape[d] as i32;
                }
            }
            if !dtype.is_null() && !dtype_format.is_null() {
                *dtype_format = meta.dtype_format as i8;
                *dtype = if meta.has_dtype {
                    crate::common::c_strdup(&meta.dtype)
                } else {
                    std::ptr::null_mut()
                };
            }
        }
        smeta_len
    })
}

/// The whole box `start..stop` of `a` in C order, in a new buffer (the
/// box's shape with it); errors as `get_slice`.
fn read_box(a: &mut Array, start: &[u64], stop: &[u64]) -> Result<(Vec<u8>, Vec<u64>), c_int> {
    let mut out = Vec::new();
    let shape: Vec<u64> = start
        .iter()
        .zip(stop)
        .map(|(&lo, &hi)| hi.saturating_sub(lo))
        .collect();
    let rc = with_array(a, false, |sc, meta| {
        let n = shape
            .iter()
            .try_fold(sc.typesize() as u64, |a, &d| a.checked_mul(d))
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

/// `b2nd_delete`: remove `delete_len` items of `axis` from `delete_start`
/// (a chunk boundary, or through the end: C-Blosc2's rule for shrinking).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn b2nd_delete(
    array: *mut b2nd_array_t,
    axis: i8,
    delete_start: i64,
    delete_len: i64,
) -> c_int {
    guard(err::FAILURE, || {
        // SAFETY: array is null or a live array from this library.
        let Some(a) = (unsafe { self::array(array) }) else {
            return err::NULL_POINTER;
        };
        let n = a.meta.ndim();
        let (Ok(axis), Ok(start), Ok(len)) = (
            usize::try_from(axis),
            u64::try_from(delete_start),
            u64::try_from(delete_len),
        ) else {
            return err::INVALID_PARAM;
        };
        if axis >= n {
            return err::INVALID_PARAM;
        }
        with_array(a, true, |sc, meta| {
            let mut shape = meta.shape.clone();
            shape[axis] = start
                .checked_add(len)
                .filter(|&end| end <= shape[axis])
                .map(|_| shape[axis] - len)
                .ok_or_else(|| {
                    Error::InvalidParam(format!(
                        "delete {start}+{len} past dimension {axis} of length {}",
                        shape[axis]
                    ))
                })?;
            let mut at = vec![0u64; shape.len()];
            at[axis] = start;
            ndarray::resize(sc, meta, &shape, Some(&at))
        })
    })
}

/// `b2nd_save_append`: the array's frame appended to the file `urlpath`;
/// the offset it starts at, or a negative error code.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn b2nd_save_append(
    array: *const b2nd_array_t,
    urlpath: *const c_char,
) -> i64 {
    guard(i64::from(err::FAILURE), || {
        // SAFETY: array is null or a live array from this library.
        let Some(a) = (unsafe { self::array(array) }) else {
            return i64::from(err::NULL_POINTER);
        };
        // SAFETY: the array's super-chunk handle; urlpath is null or a
        // NUL-terminated string (checked by the callee).
        unsafe { crate::schunk::blosc2_schunk_append_file(a.c.sc, urlpath) }
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
            let need = bs
                .iter()
                .fold(sc.typesize() as u64, |a, &d| a.saturating_mul(d));
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
            let need = bs
                .iter()
                .fold(sc.typesize() as u64, |a, &d| a.saturating_mul(d));
            if need > src.len() as u64 {
                return Err(Error::InvalidParam("buffer too small".into()));
            }
            ndarray::set_slice(sc, meta, &lo, &hi, &src[..need as usize], &bs)
        })
    })
}

/// `b2nd_resize`: change the shape (new items zero), growing or shrinking
/// each changed dimension at `start` (NULL: at its end).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn b2nd_resize(
    array: *mut b2nd_array_t,
    new_shape: *const i64,
    start: *const i64,
) -> c_int {
    guard(err::FAILURE, || {
        // SAFETY: array is null or a live array from this library.
        let Some(a) = (unsafe { self::array(array) }) else {
            return err::NULL_POINTER;
        };
        let n = a.c.ndim.max(0) as usize;
        // SAFETY: new_shape holds ndim values (C's contract).
        let Some(shape) = (unsafe { shape_arg(new_shape, n) }) else {
            return err::INVALID_PARAM;
        };
        let st = if start.is_null() {
            None
        } else {
            // SAFETY: start holds ndim values (C's contract).
            match unsafe { shape_arg(start, n) } {
                Some(s) => Some(s),
                None => return err::INVALID_PARAM,
            }
        };
        with_array(a, true, |sc, meta| {
            ndarray::resize(sc, meta, &shape, st.as_deref())
        })
    })
}

/// `b2nd_insert`: insert a C-order buffer at `insert_start` of `axis`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn b2nd_insert(
    array: *mut b2nd_array_t,
    buffer: *const c_void,
    buffersize: i64,
    axis: i8,
    insert_start: i64,
) -> c_int {
    guard(err::FAILURE, || {
        // SAFETY: array is null or a live array from this library.
        let Some(a) = (unsafe { self::array(array) }) else {
            return err::NULL_POINTER;
        };
        if buffersize <= 0 || buffer.is_null() || axis < 0 || insert_start < 0 {
            return err::INVALID_PARAM;
        }
        // SAFETY: buffer holds buffersize readable bytes.
        let src = unsafe { slice_in(buffer, buffersize as usize) };
        with_array(a, true, |sc, meta| {
            ndarray::insert(sc, meta, src, axis as usize, insert_start as u64)
        })
    })
}

/// `b2nd_append`: append a C-order buffer at the end of `axis`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn b2nd_append(
    array: *mut b2nd_array_t,
    buffer: *const c_void,
    buffersize: i64,
    axis: i8,
) -> c_int {
    guard(err::FAILURE, || {
        // SAFETY: array is null or a live array from this library.
        let Some(a) = (unsafe { self::array(array) }) else {
            return err::NULL_POINTER;
        };
        if buffersize <= 0 || buffer.is_null() || axis < 0 {
            return err::INVALID_PARAM;
        }
        // SAFETY: buffer holds buffersize readable bytes.
        let src = unsafe { slice_in(buffer, buffersize as usize) };
        with_array(a, true, |sc, meta| {
            ndarray::append(sc, meta, src, axis as usize)
        })
    })
}

/// `b2nd_refresh`: follow a shape change another handle made on disk. 1
/// when the shape changed, 0 when current, `BLOSC2_ERROR_DATA` when the
/// dimensions, chunk or block shape changed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn b2nd_refresh(array: *mut b2nd_array_t) -> c_int {
    guard(err::FAILURE, || {
        // SAFETY: array is null or a live array from this library.
        let Some(a) = (unsafe { self::array(array) }) else {
            return err::NULL_POINTER;
        };
        let before = a.meta.clone();
        let r = with_array(a, false, |_, _| Ok(()));
        if r < 0 {
            return r;
        }
        let m = &a.meta;
        if m.ndim() != before.ndim()
            || m.chunkshape != before.chunkshape
            || m.blockshape != before.blockshape
        {
            return err::DATA;
        }
        c_int::from(m.shape != before.shape)
    })
}

#[cfg(test)]
mod tests;
