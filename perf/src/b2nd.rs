//! `b2nd`: the NDArray calls of `b2nd.h` through our `libblosc2.so` and
//! through C-Blosc2 3.3.5's, side by side.
//!
//! Both libraries are opened as `capi` opens them (`dlopen(RTLD_NOW |
//! RTLD_LOCAL | RTLD_DEEPBIND)`, [`capi::Lib`]): ours is
//! `target/release/libblosc2.so` of `oxiblosc-capi` (built first unless
//! `--ours PATH`), C's the `libblosc2.so` of python-blosc2 4.14.1's wheel
//! in `target/pydeps` (installed when missing). The calls timed, through
//! function pointers from `dlsym`, on the same buffers, interleaved
//! (`timing`):
//!
//! - `from_cbuffer`: `b2nd_from_cbuffer` of the whole C-order buffer, then
//!   `b2nd_free` of the new array (one `b2nd_create_ctx` per workload and
//!   library, made before timing);
//! - `to_cbuffer`: `b2nd_to_cbuffer` of the whole array;
//! - `get_slice small` / `band` / `columns`: `b2nd_get_slice_cbuffer` of a
//!   small box inside one block, of a band of whole rows, and (2-D images)
//!   of a band of 10 columns through every row;
//! - `set_slice small`: `b2nd_set_slice_cbuffer` of the small box (the same
//!   values every call: the box's own with their sign flipped), on an
//!   array built for that row;
//! - `get_sparse spread` / `block`: `b2nd_get_sparse_cbuffer` of 1,000
//!   flat C-order coordinates drawn (with repeats, unsorted) from the whole
//!   array, or from the one block holding the small box;
//! - `get_orthogonal rows` / `grid`: `b2nd_get_orthogonal_selection` of
//!   100 distinct rows in random order with every column (`a[idx]`), or
//!   with 2 of the 3 columns (points) or 20 of the 2,000 (images), also in
//!   random order (`a.oindex[rows, cols]`);
//! - `set_orthogonal small`: `b2nd_set_orthogonal_selection` of 10 rows x
//!   2 or 10 columns inside one chunk (values as `set_slice small`), on an
//!   array built for that row;
//! - `concatenate`: `b2nd_concatenate` of the array with itself along axis
//!   0, `copy = true`, into the workload's context (its chunks and blocks,
//!   in memory), then `b2nd_free` of the result: the aligned case for
//!   points and image-tiles (a length a multiple of the chunk's), the
//!   unaligned one for image (2,000 rows in chunks of 504);
//! - `expand_dims`: `b2nd_expand_dims` to (1, rows, columns), then
//!   `b2nd_free`; `squeeze`: `b2nd_squeeze` of such an array (made once per
//!   side before timing), then `b2nd_free`. C-Blosc2's are views sharing
//!   the chunk list (O(1)); ours copy the compressed chunks into a new
//!   in-memory array.
//!
//! The coordinates and indices come from a fixed seed per workload and
//! row ([`Rng`]): the same on every run.
//!
//! The arrays live in memory as python-blosc2's `blosc2.asarray` makes them
//! without a `urlpath`: `contiguous = false` (`blosc2.Storage` defaults to
//! `contiguous = urlpath is not None`), `urlpath = NULL`; BLOSCLZ clevel 5,
//! shuffle, `BLOSC_AUTO_SPLIT`, the same `blosc2_cparams` and
//! `blosc2_dparams` for both libraries, 1 thread unless `--nthreads`.
//!
//! The workloads: `points` (1,000,000 x 3 float32, a slow spiral) and
//! `image` (2,000 x 2,000 float64, a smooth function) in the chunks and
//! blocks python-blosc2 4.14.1's `blosc2.asarray` picks for those shapes by
//! default on the development machine (its choice depends on the CPU's
//! caches), and `image-tiles`, the same image in 500 x 500 chunks of
//! 100 x 100 blocks (2-D blocks, which a band of columns cuts across).
//!
//! Before timing, each row checks its calls: every get returns the bytes
//! computed here from the source buffer; an array made by `from_cbuffer`
//! reads back the buffer; after a `set_slice` or `set_orthogonal` each
//! array reads back the expected whole buffer (so both the same); an array
//! made by `concatenate`, `expand_dims` or `squeeze` has the shape, chunks
//! and blocks expected in its `b2nd_array_t` and reads back the expected
//! bytes (`b2nd_to_cbuffer`), and the concatenated array still reads back
//! the buffer. A side whose call fails is
//! not timed; its row fails the run. A library without
//! `b2nd_from_cbuffer` gets the arrays of the other rows from `b2nd_zeros`
//! and a `b2nd_set_slice_cbuffer` of the whole array (said in the header).
//!
//! The FFI wrappers check every box and buffer length before a call, so the
//! `unsafe` blocks rely only on the C prototypes (spelled out in their
//! `SAFETY` comments).

use std::ffi::{CString, c_char, c_int, c_void};
use std::path::PathBuf;
use std::rc::Rc;

use crate::capi::{self, CCodec, CFilter, Cparams, Dparams, Lib, func};
use crate::chunks::output_path;
use crate::table::Table;
use crate::timing::{self, Clock, Config, Contestant, Sample};

/// `blosc2_storage` of C-Blosc2 3.x's `blosc2.h`, field for field.
#[repr(C)]
struct Storage {
    contiguous: bool,
    urlpath: *mut c_char,
    cparams: *mut Cparams,
    dparams: *mut Dparams,
    io: *mut c_void,
}

// The size gcc gives it on LP64 (a bool padded to 8, four pointers).
const _: () = assert!(std::mem::size_of::<Storage>() == 40);

/// `b2nd_context_t *b2nd_create_ctx(const blosc2_storage *b2_storage,
/// int8_t ndim, const int64_t *shape, const int32_t *chunkshape, const
/// int32_t *blockshape, const char *dtype, int8_t dtype_format, const
/// blosc2_metalayer *metalayers, int32_t nmetalayers)`.
type CreateCtx = unsafe extern "C" fn(
    *const Storage,
    i8,
    *const i64,
    *const i32,
    *const i32,
    *const c_char,
    i8,
    *const c_void,
    i32,
) -> *mut c_void;
/// `int b2nd_free_ctx(b2nd_context_t *ctx)` and `int b2nd_free(b2nd_array_t
/// *array)`.
type FreeFn = unsafe extern "C" fn(*mut c_void) -> c_int;
/// `int b2nd_from_cbuffer(b2nd_context_t *ctx, b2nd_array_t **array, const
/// void *buffer, int64_t buffersize)`.
type FromCbuffer = unsafe extern "C" fn(*mut c_void, *mut *mut c_void, *const c_void, i64) -> c_int;
/// `int b2nd_zeros(b2nd_context_t *ctx, b2nd_array_t **array)`.
type Zeros = unsafe extern "C" fn(*mut c_void, *mut *mut c_void) -> c_int;
/// `int b2nd_to_cbuffer(const b2nd_array_t *array, void *buffer, int64_t
/// buffersize)`.
type ToCbuffer = unsafe extern "C" fn(*const c_void, *mut c_void, i64) -> c_int;
/// `int b2nd_get_slice_cbuffer(const b2nd_array_t *array, const int64_t
/// *start, const int64_t *stop, void *buffer, const int64_t *buffershape,
/// int64_t buffersize)`.
type GetSlice = unsafe extern "C" fn(
    *const c_void,
    *const i64,
    *const i64,
    *mut c_void,
    *const i64,
    i64,
) -> c_int;
/// `int b2nd_set_slice_cbuffer(const void *buffer, const int64_t
/// *buffershape, int64_t buffersize, const int64_t *start, const int64_t
/// *stop, b2nd_array_t *array)`.
type SetSlice = unsafe extern "C" fn(
    *const c_void,
    *const i64,
    i64,
    *const i64,
    *const i64,
    *mut c_void,
) -> c_int;

/// `int b2nd_get_sparse_cbuffer(const b2nd_array_t *array, int64_t
/// ncoords, const int64_t *coords, void *buffer, int64_t buffersize)`.
type GetSparse = unsafe extern "C" fn(*const c_void, i64, *const i64, *mut c_void, i64) -> c_int;
/// `int b2nd_get_orthogonal_selection(const b2nd_array_t *array, int64_t
/// **selection, int64_t *selection_size, void *buffer, int64_t
/// *buffershape, int64_t buffersize)`.
type GetOrtho = unsafe extern "C" fn(
    *const c_void,
    *mut *mut i64,
    *mut i64,
    *mut c_void,
    *mut i64,
    i64,
) -> c_int;
/// `int b2nd_set_orthogonal_selection(b2nd_array_t *array, int64_t
/// **selection, int64_t *selection_size, const void *buffer, int64_t
/// *buffershape, int64_t buffersize)`.
type SetOrtho = unsafe extern "C" fn(
    *mut c_void,
    *mut *mut i64,
    *mut i64,
    *const c_void,
    *mut i64,
    i64,
) -> c_int;
/// `int b2nd_concatenate(b2nd_context_t *ctx, const b2nd_array_t *src1,
/// const b2nd_array_t *src2, int8_t axis, bool copy, b2nd_array_t
/// **array)`.
type Concatenate = unsafe extern "C" fn(
    *mut c_void,
    *const c_void,
    *const c_void,
    i8,
    bool,
    *mut *mut c_void,
) -> c_int;
/// `int b2nd_expand_dims(const b2nd_array_t *array, b2nd_array_t **view,
/// const bool *axis, const uint8_t final_dims)`.
type ExpandDims = unsafe extern "C" fn(*const c_void, *mut *mut c_void, *const bool, u8) -> c_int;
/// `int b2nd_squeeze(b2nd_array_t *array, b2nd_array_t **view)`.
type Squeeze = unsafe extern "C" fn(*mut c_void, *mut *mut c_void) -> c_int;

/// `B2ND_MAX_DIM`.
const MAX_DIM: usize = 16;

/// The head of `b2nd_array_t` (`b2nd.h`), field for field up to `ndim`:
/// both libraries lay the struct out so (ours asserts the same offsets in
/// `capi/src/b2nd/mod.rs`). Read to check the shape of the arrays
/// `b2nd_concatenate`, `b2nd_expand_dims` and `b2nd_squeeze` make.
#[repr(C)]
#[derive(Clone, Copy)]
struct ArrayHead {
    sc: *mut c_void,
    shape: [i64; MAX_DIM],
    chunkshape: [i32; MAX_DIM],
    extshape: [i64; MAX_DIM],
    blockshape: [i32; MAX_DIM],
    extchunkshape: [i64; MAX_DIM],
    nitems: i64,
    chunknitems: i32,
    extnitems: i64,
    blocknitems: i32,
    extchunknitems: i64,
    ndim: i8,
}

const _: () = assert!(std::mem::offset_of!(ArrayHead, blockshape) == 328);
const _: () = assert!(std::mem::offset_of!(ArrayHead, nitems) == 520);
const _: () = assert!(std::mem::offset_of!(ArrayHead, ndim) == 560);

/// The `b2nd.h` calls of one library (the optional ones `None` when the
/// library lacks the symbol).
struct B2ndApi {
    path: String,
    create_ctx: CreateCtx,
    free_ctx: FreeFn,
    free: FreeFn,
    get_slice: GetSlice,
    set_slice: SetSlice,
    from_cbuffer: Option<FromCbuffer>,
    to_cbuffer: Option<ToCbuffer>,
    zeros: Option<Zeros>,
    get_sparse: Option<GetSparse>,
    get_ortho: Option<GetOrtho>,
    set_ortho: Option<SetOrtho>,
    concatenate: Option<Concatenate>,
    expand_dims: Option<ExpandDims>,
    squeeze: Option<Squeeze>,
}

impl B2ndApi {
    /// Calls `blosc2_init` and takes the `b2nd.h` symbols.
    fn load(lib: &Lib) -> Result<B2ndApi, String> {
        let opt = |name: &str| lib.sym(name).ok();
        // SAFETY (every `func` and the transmute): the symbol is the
        // blosc2.h / b2nd.h 3.x function of that name, whose prototype the
        // target type spells out (`void blosc2_init(void)`, and the
        // prototypes on `CreateCtx`, `FreeFn`, `GetSlice`, `SetSlice`,
        // `FromCbuffer`, `ToCbuffer`, `Zeros`, `GetSparse`, `GetOrtho`,
        // `SetOrtho`, `Concatenate`, `ExpandDims`, `Squeeze`); data and function pointers
        // have the same size wherever dlsym exists.
        unsafe {
            let init: unsafe extern "C" fn() = std::mem::transmute(lib.sym("blosc2_init")?);
            init();
            Ok(B2ndApi {
                path: lib.path.clone(),
                create_ctx: func(lib.sym("b2nd_create_ctx")?),
                free_ctx: func(lib.sym("b2nd_free_ctx")?),
                free: func(lib.sym("b2nd_free")?),
                get_slice: func(lib.sym("b2nd_get_slice_cbuffer")?),
                set_slice: func(lib.sym("b2nd_set_slice_cbuffer")?),
                from_cbuffer: opt("b2nd_from_cbuffer").map(|p| func(p)),
                to_cbuffer: opt("b2nd_to_cbuffer").map(|p| func(p)),
                zeros: opt("b2nd_zeros").map(|p| func(p)),
                get_sparse: opt("b2nd_get_sparse_cbuffer").map(|p| func(p)),
                get_ortho: opt("b2nd_get_orthogonal_selection").map(|p| func(p)),
                set_ortho: opt("b2nd_set_orthogonal_selection").map(|p| func(p)),
                concatenate: opt("b2nd_concatenate").map(|p| func(p)),
                expand_dims: opt("b2nd_expand_dims").map(|p| func(p)),
                squeeze: opt("b2nd_squeeze").map(|p| func(p)),
            })
        }
    }

    /// The optional calls this library lacks.
    fn missing(&self) -> Vec<&'static str> {
        let mut v = Vec::new();
        if self.from_cbuffer.is_none() {
            v.push("b2nd_from_cbuffer");
        }
        let more = [
            (self.to_cbuffer.is_none(), "b2nd_to_cbuffer"),
            (self.get_sparse.is_none(), "b2nd_get_sparse_cbuffer"),
            (self.get_ortho.is_none(), "b2nd_get_orthogonal_selection"),
            (self.set_ortho.is_none(), "b2nd_set_orthogonal_selection"),
            (self.concatenate.is_none(), "b2nd_concatenate"),
            (self.expand_dims.is_none(), "b2nd_expand_dims"),
            (self.squeeze.is_none(), "b2nd_squeeze"),
        ];
        v.extend(more.into_iter().filter(|m| m.0).map(|m| m.1));
        v
    }

    /// A `b2nd_create_ctx` for `layout`: in memory, not contiguous, BLOSCLZ
    /// clevel 5 shuffle, `nthreads` to compress and decompress.
    fn ctx(&self, layout: &Layout, nthreads: usize) -> Result<NdCtx<'_>, String> {
        let n = layout.shape.len();
        if n == 0
            || n > 16
            || layout.chunks.len() != n
            || layout.blocks.len() != n
            || layout.itemsize == 0
        {
            return Err(format!("bad layout {layout:?}"));
        }
        let threads = i16::try_from(nthreads).map_err(|_| format!("{nthreads} threads"))?;
        let typesize = i32::try_from(layout.itemsize).map_err(|_| "itemsize".to_owned())?;
        let mut cparams = Box::new(Cparams::new(
            CCodec::BloscLz,
            5,
            CFilter::Shuffle,
            typesize,
            threads,
        ));
        let mut dparams = Box::new(Dparams::new(threads));
        let storage = Box::new(Storage {
            contiguous: false,
            urlpath: std::ptr::null_mut(),
            cparams: &mut *cparams,
            dparams: &mut *dparams,
            io: std::ptr::null_mut(),
        });
        let dtype = CString::new(layout.dtype).map_err(|_| "NUL in dtype".to_owned())?;
        // SAFETY: `b2nd_create_ctx(const blosc2_storage*, int8_t ndim, const
        // int64_t *shape, const int32_t *chunkshape, const int32_t
        // *blockshape, const char *dtype, int8_t dtype_format, const
        // blosc2_metalayer *metalayers, int32_t nmetalayers)`: the three
        // shapes hold ndim = n values (checked above), dtype is
        // NUL-terminated, no metalayers (NULL, 0); the storage and the
        // cparams and dparams it points to are boxed and kept in the
        // context until `b2nd_free_ctx`, whether or not the library copies
        // them.
        let ptr = unsafe {
            (self.create_ctx)(
                &*storage,
                n as i8,
                layout.shape.as_ptr(),
                layout.chunks.as_ptr(),
                layout.blocks.as_ptr(),
                dtype.as_ptr(),
                0, // DTYPE_NUMPY_FORMAT
                std::ptr::null(),
                0,
            )
        };
        if ptr.is_null() {
            return Err(format!("{}: b2nd_create_ctx returned NULL", self.path));
        }
        Ok(NdCtx {
            api: self,
            ptr,
            layout: Rc::new(layout.clone()),
            _params: (storage, cparams, dparams, dtype),
        })
    }
}

/// A `b2nd_context_t` of one library, freed on drop, with what it was made
/// from.
struct NdCtx<'a> {
    api: &'a B2ndApi,
    ptr: *mut c_void,
    layout: Rc<Layout>,
    _params: (Box<Storage>, Box<Cparams>, Box<Dparams>, CString),
}

impl Drop for NdCtx<'_> {
    fn drop(&mut self) {
        // SAFETY: `int b2nd_free_ctx(b2nd_context_t*)` on the context this
        // library made, once; every array borrowed it and is gone.
        unsafe { (self.api.free_ctx)(self.ptr) };
    }
}

/// A `b2nd_array_t` of one library, freed (`b2nd_free`) on drop, with the
/// layout it should have (its context's, or for an array a call made from
/// others, the one expected of that call).
///
/// An array `b2nd_expand_dims` or `b2nd_squeeze` made is a view in
/// C-Blosc2 (sharing the chunks of the array it was made from), so it is
/// dropped before that array: the rows keep such arrays in locals of the
/// function that times them, while the arrays they come from live in `run`.
struct NdArray<'c> {
    ctx: &'c NdCtx<'c>,
    ptr: *mut c_void,
    layout: Rc<Layout>,
}

impl Drop for NdArray<'_> {
    fn drop(&mut self) {
        // SAFETY: `int b2nd_free(b2nd_array_t*)` on an array this library
        // made, once.
        unsafe { (self.ctx.api.free)(self.ptr) };
    }
}

fn len_i64(n: usize) -> Result<i64, String> {
    i64::try_from(n).map_err(|_| format!("{n} bytes is beyond int64_t"))
}

impl<'c> NdCtx<'c> {
    fn nbytes(&self) -> usize {
        self.layout.nbytes()
    }

    /// `b2nd_from_cbuffer` of the whole C-order buffer `src`.
    fn array_from(&'c self, src: &[u8]) -> Result<NdArray<'c>, String> {
        let f = self
            .api
            .from_cbuffer
            .ok_or_else(|| format!("{} has no b2nd_from_cbuffer", self.api.path))?;
        if src.len() != self.nbytes() {
            return Err(format!(
                "{} bytes for an array of {}",
                src.len(),
                self.nbytes()
            ));
        }
        let size = len_i64(src.len())?;
        let mut out: *mut c_void = std::ptr::null_mut();
        // SAFETY: `int b2nd_from_cbuffer(b2nd_context_t *ctx, b2nd_array_t
        // **array, const void *buffer, int64_t buffersize)`: a live context
        // of this library, a writable pointer for the array, and `src`
        // holding buffersize readable bytes, exactly the array's (checked).
        let rc = unsafe { f(self.ptr, &mut out, src.as_ptr().cast(), size) };
        self.made(out, rc, || format!("b2nd_from_cbuffer(buffersize {size})"))
    }

    /// An array `b2nd_*` returned `rc` and `ptr` for, of this context's
    /// layout.
    fn made(
        &'c self,
        ptr: *mut c_void,
        rc: c_int,
        call: impl Fn() -> String,
    ) -> Result<NdArray<'c>, String> {
        self.made_as(ptr, rc, Rc::clone(&self.layout), call)
    }

    /// An array `b2nd_*` returned `rc` and `ptr` for, expected of `layout`
    /// (not checked here: [`NdArray::check_head`]).
    fn made_as(
        &'c self,
        ptr: *mut c_void,
        rc: c_int,
        layout: Rc<Layout>,
        call: impl Fn() -> String,
    ) -> Result<NdArray<'c>, String> {
        let a = (!ptr.is_null()).then_some(NdArray {
            ctx: self,
            ptr,
            layout,
        });
        match (rc, a) {
            (0, Some(a)) => Ok(a),
            (0, None) => Err(format!("{} returned 0 and no array", call())),
            (rc, _) => Err(format!("{} returned {rc}", call())),
        }
    }

    /// The array of `src`: `b2nd_from_cbuffer`, or where the library lacks
    /// it, `b2nd_zeros` and one `b2nd_set_slice_cbuffer` of the whole array.
    fn build(&'c self, src: &[u8]) -> Result<NdArray<'c>, String> {
        if self.api.from_cbuffer.is_some() {
            return self.array_from(src);
        }
        let f = self.api.zeros.ok_or_else(|| {
            format!(
                "{} has neither b2nd_from_cbuffer nor b2nd_zeros",
                self.api.path
            )
        })?;
        let mut out: *mut c_void = std::ptr::null_mut();
        // SAFETY: `int b2nd_zeros(b2nd_context_t *ctx, b2nd_array_t
        // **array)`: a live context of this library, a writable pointer.
        let rc = unsafe { f(self.ptr, &mut out) };
        let mut a = self.made(out, rc, || "b2nd_zeros".to_owned())?;
        a.set_slice(&NdBox::whole(&self.layout.shape), src)?;
        Ok(a)
    }

    /// `b2nd_concatenate(ctx, a1, a2, axis, copy = true, &out)`: a new
    /// array made with this context, `a2`'s items after `a1`'s along
    /// `axis`; `layout` is the one expected of it.
    fn concatenate(
        &'c self,
        a1: &NdArray<'_>,
        a2: &NdArray<'_>,
        axis: usize,
        layout: &Rc<Layout>,
    ) -> Result<NdArray<'c>, String> {
        let f = self
            .api
            .concatenate
            .ok_or_else(|| format!("{} has no b2nd_concatenate", self.api.path))?;
        if !std::ptr::eq(a1.ctx.api, self.api) || !std::ptr::eq(a2.ctx.api, self.api) {
            return Err("arrays of another library".into());
        }
        let n = a1.layout().shape.len();
        if axis >= n || a2.layout().shape.len() != n {
            return Err(format!("axis {axis} of {n} dimensions"));
        }
        let mut out: *mut c_void = std::ptr::null_mut();
        // SAFETY: `int b2nd_concatenate(b2nd_context_t *ctx, const
        // b2nd_array_t *src1, const b2nd_array_t *src2, int8_t axis, bool
        // copy, b2nd_array_t **array)`: a live context and two live arrays
        // of this library (checked above), an axis below their ndim, copy
        // (so src1 is only read), a writable pointer for the new array.
        let rc = unsafe { f(self.ptr, a1.ptr, a2.ptr, axis as i8, true, &mut out) };
        self.made_as(out, rc, Rc::clone(layout), || {
            format!("b2nd_concatenate(axis {axis}, copy true)")
        })
    }
}

impl<'c> NdArray<'c> {
    fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The `buffershape` and `buffersize` of box `b` after checking that it
    /// lies inside the array and that `have` bytes hold it.
    fn box_args(&self, b: &NdBox, have: usize) -> Result<(Vec<i64>, i64), String> {
        let shape = &self.layout().shape;
        let n = shape.len();
        if b.start.len() != n || b.stop.len() != n {
            return Err(format!("box {} for {n} dimensions", b.label()));
        }
        for d in 0..n {
            if !(0 <= b.start[d] && b.start[d] <= b.stop[d] && b.stop[d] <= shape[d]) {
                return Err(format!("box {} outside shape {shape:?}", b.label()));
            }
        }
        let need = b.items() * self.layout().itemsize;
        if need > have {
            return Err(format!(
                "box {} needs {need} bytes, buffer {have}",
                b.label()
            ));
        }
        Ok((b.shape(), len_i64(need)?))
    }

    /// `b2nd_get_slice_cbuffer` of box `b` into the first bytes of `dst`.
    fn get_slice(&self, b: &NdBox, dst: &mut [u8]) -> Result<(), String> {
        let (bshape, size) = self.box_args(b, dst.len())?;
        // SAFETY: `int b2nd_get_slice_cbuffer(const b2nd_array_t *array,
        // const int64_t *start, const int64_t *stop, void *buffer, const
        // int64_t *buffershape, int64_t buffersize)`: a live array of this
        // library; start, stop and buffershape hold ndim values, the box
        // lies in the array, and `dst` has buffersize (the box's bytes)
        // writable bytes (all checked by `box_args`).
        let rc = unsafe {
            (self.ctx.api.get_slice)(
                self.ptr,
                b.start.as_ptr(),
                b.stop.as_ptr(),
                dst.as_mut_ptr().cast(),
                bshape.as_ptr(),
                size,
            )
        };
        match rc {
            0 => Ok(()),
            rc => Err(format!(
                "b2nd_get_slice_cbuffer(start {:?}, stop {:?}, buffershape {bshape:?}, \
                 buffersize {size}) returned {rc}",
                b.start, b.stop
            )),
        }
    }

    /// `b2nd_set_slice_cbuffer` of box `b` from the first bytes of `src`.
    fn set_slice(&mut self, b: &NdBox, src: &[u8]) -> Result<(), String> {
        let (bshape, size) = self.box_args(b, src.len())?;
        // SAFETY: `int b2nd_set_slice_cbuffer(const void *buffer, const
        // int64_t *buffershape, int64_t buffersize, const int64_t *start,
        // const int64_t *stop, b2nd_array_t *array)`: `src` has buffersize
        // (the box's bytes) readable bytes; buffershape, start and stop
        // hold ndim values and the box lies in the array (checked by
        // `box_args`); a live array of this library.
        let rc = unsafe {
            (self.ctx.api.set_slice)(
                src.as_ptr().cast(),
                bshape.as_ptr(),
                size,
                b.start.as_ptr(),
                b.stop.as_ptr(),
                self.ptr,
            )
        };
        match rc {
            0 => Ok(()),
            rc => Err(format!(
                "b2nd_set_slice_cbuffer(buffershape {bshape:?}, buffersize {size}, start {:?}, \
                 stop {:?}) returned {rc}",
                b.start, b.stop
            )),
        }
    }

    /// The shape, chunks and blocks the library's `b2nd_array_t` holds
    /// (`Err` when they are not the expected [`NdArray::layout`]).
    fn check_head(&self) -> Result<(), String> {
        // SAFETY: `ptr` is a live `b2nd_array_t*` of this library, whose
        // first fields `ArrayHead` declares as `b2nd.h` does; it is copied
        // out (no reference into memory the library owns is kept).
        let h = unsafe { self.ptr.cast::<ArrayHead>().read() };
        let n = usize::try_from(h.ndim)
            .ok()
            .filter(|&n| n <= MAX_DIM)
            .ok_or_else(|| format!("made an array of ndim {}", h.ndim))?;
        let l = self.layout();
        let got = (&h.shape[..n], &h.chunkshape[..n], &h.blockshape[..n]);
        if got != (&l.shape[..], &l.chunks[..], &l.blocks[..]) {
            return Err(format!(
                "made an array of shape {:?}, chunks {:?}, blocks {:?}; expected {:?}, {:?}, {:?}",
                got.0, got.1, got.2, l.shape, l.chunks, l.blocks
            ));
        }
        Ok(())
    }

    /// `b2nd_get_sparse_cbuffer` of the items at the flat C-order
    /// coordinates `coords` into the first bytes of `dst`.
    fn get_sparse(&self, coords: &[i64], dst: &mut [u8]) -> Result<(), String> {
        let f = self
            .ctx
            .api
            .get_sparse
            .ok_or_else(|| format!("{} has no b2nd_get_sparse_cbuffer", self.ctx.api.path))?;
        let nitems = len_i64(self.layout().nbytes() / self.layout().itemsize)?;
        if let Some(c) = coords.iter().find(|&&c| !(0..nitems).contains(&c)) {
            return Err(format!("coordinate {c} of {nitems} items"));
        }
        let need = coords.len() * self.layout().itemsize;
        if need > dst.len() {
            return Err(format!("{need} bytes of items, buffer {}", dst.len()));
        }
        let (n, size) = (len_i64(coords.len())?, len_i64(need)?);
        // SAFETY: `int b2nd_get_sparse_cbuffer(const b2nd_array_t *array,
        // int64_t ncoords, const int64_t *coords, void *buffer, int64_t
        // buffersize)`: a live array of this library; `coords` holds
        // ncoords values, each in [0, nitems) (checked), and `dst` has
        // buffersize = ncoords items' writable bytes (checked).
        let rc = unsafe { f(self.ptr, n, coords.as_ptr(), dst.as_mut_ptr().cast(), size) };
        if rc < 0 {
            return Err(format!(
                "b2nd_get_sparse_cbuffer(ncoords {n}, buffersize {size}) returned {rc}"
            ));
        }
        Ok(())
    }

    /// The arguments of an orthogonal selection call after checking `sel`
    /// against the array and that `have` bytes hold it: the index list
    /// pointers, `selection_size`, `buffershape` (both the lists' lengths:
    /// a buffer exactly the selection's, as C-Blosc2 requires) and
    /// `buffersize`.
    #[allow(clippy::type_complexity)]
    fn ortho_args(
        &self,
        sel: &Ortho,
        have: usize,
    ) -> Result<([*mut i64; MAX_DIM], [i64; MAX_DIM], [i64; MAX_DIM], i64), String> {
        let shape = &self.layout().shape;
        let n = shape.len();
        if sel.lists.len() != n {
            return Err(format!(
                "a selection of {} lists for {n} dimensions",
                sel.lists.len()
            ));
        }
        let mut ptrs = [std::ptr::null_mut(); MAX_DIM];
        let mut sizes = [0i64; MAX_DIM];
        for (d, l) in sel.lists.iter().enumerate() {
            if let Some(i) = l.iter().find(|&&i| !(0..shape[d]).contains(&i)) {
                return Err(format!(
                    "index {i} along dimension {d} of length {}",
                    shape[d]
                ));
            }
            // Read, never written, by both libraries (C-Blosc2's
            // `orthogonal_selection` copies them into sorted lists; the
            // prototype just lacks the `const`).
            ptrs[d] = l.as_ptr().cast_mut();
            sizes[d] = len_i64(l.len())?;
        }
        let need = sel.items() * self.layout().itemsize;
        if need > have {
            return Err(format!("a selection of {need} bytes, buffer {have}"));
        }
        Ok((ptrs, sizes, sizes, len_i64(need)?))
    }

    /// `b2nd_get_orthogonal_selection` of `sel` into the first bytes of
    /// `dst` (C order over the selection).
    fn get_ortho(&self, sel: &Ortho, dst: &mut [u8]) -> Result<(), String> {
        let f =
            self.ctx.api.get_ortho.ok_or_else(|| {
                format!("{} has no b2nd_get_orthogonal_selection", self.ctx.api.path)
            })?;
        let (mut ptrs, mut sizes, mut bshape, size) = self.ortho_args(sel, dst.len())?;
        // SAFETY: `int b2nd_get_orthogonal_selection(const b2nd_array_t
        // *array, int64_t **selection, int64_t *selection_size, void
        // *buffer, int64_t *buffershape, int64_t buffersize)`: a live array
        // of this library; selection holds ndim pointers, each to its
        // selection_size indices inside the array's dimension, and
        // buffershape ndim values (all checked by `ortho_args`, read
        // only); `dst` has buffersize (the selection's bytes) writable
        // bytes.
        let rc = unsafe {
            f(
                self.ptr,
                ptrs.as_mut_ptr(),
                sizes.as_mut_ptr(),
                dst.as_mut_ptr().cast(),
                bshape.as_mut_ptr(),
                size,
            )
        };
        if rc < 0 {
            return Err(format!(
                "b2nd_get_orthogonal_selection({}, buffersize {size}) returned {rc}",
                sel.label()
            ));
        }
        Ok(())
    }

    /// `b2nd_set_orthogonal_selection` of `sel` from the first bytes of
    /// `src` (C order over the selection).
    fn set_ortho(&mut self, sel: &Ortho, src: &[u8]) -> Result<(), String> {
        let f =
            self.ctx.api.set_ortho.ok_or_else(|| {
                format!("{} has no b2nd_set_orthogonal_selection", self.ctx.api.path)
            })?;
        let (mut ptrs, mut sizes, mut bshape, size) = self.ortho_args(sel, src.len())?;
        // SAFETY: `int b2nd_set_orthogonal_selection(b2nd_array_t *array,
        // int64_t **selection, int64_t *selection_size, const void
        // *buffer, int64_t *buffershape, int64_t buffersize)`: as
        // `get_ortho`, with `src` holding buffersize readable bytes.
        let rc = unsafe {
            f(
                self.ptr,
                ptrs.as_mut_ptr(),
                sizes.as_mut_ptr(),
                src.as_ptr().cast(),
                bshape.as_mut_ptr(),
                size,
            )
        };
        if rc < 0 {
            return Err(format!(
                "b2nd_set_orthogonal_selection({}, buffersize {size}) returned {rc}",
                sel.label()
            ));
        }
        Ok(())
    }

    /// `b2nd_expand_dims` with the `final_dims = flags.len()` flags
    /// `flags`; `layout` is the one expected of the new array.
    fn expand_dims(&self, flags: &[bool], layout: &Rc<Layout>) -> Result<NdArray<'c>, String> {
        let f = self
            .ctx
            .api
            .expand_dims
            .ok_or_else(|| format!("{} has no b2nd_expand_dims", self.ctx.api.path))?;
        let old = self.layout().shape.len();
        if flags.len() > MAX_DIM || flags.iter().filter(|&&f| !f).count() != old {
            return Err(format!("flags {flags:?} for {old} dimensions"));
        }
        let mut out: *mut c_void = std::ptr::null_mut();
        // SAFETY: `int b2nd_expand_dims(const b2nd_array_t *array,
        // b2nd_array_t **view, const bool *axis, const uint8_t
        // final_dims)`: a live array of this library, a writable pointer,
        // `flags` holding final_dims bools of which ndim are false
        // (checked).
        let rc = unsafe { f(self.ptr, &mut out, flags.as_ptr(), flags.len() as u8) };
        self.ctx.made_as(out, rc, Rc::clone(layout), || {
            format!("b2nd_expand_dims({flags:?})")
        })
    }

    /// `b2nd_squeeze`; `layout` is the one expected of the new array.
    fn squeeze(&mut self, layout: &Rc<Layout>) -> Result<NdArray<'c>, String> {
        let f = self
            .ctx
            .api
            .squeeze
            .ok_or_else(|| format!("{} has no b2nd_squeeze", self.ctx.api.path))?;
        let mut out: *mut c_void = std::ptr::null_mut();
        // SAFETY: `int b2nd_squeeze(b2nd_array_t *array, b2nd_array_t
        // **view)`: a live array of this library, a writable pointer.
        let rc = unsafe { f(self.ptr, &mut out) };
        self.ctx
            .made_as(out, rc, Rc::clone(layout), || "b2nd_squeeze".to_owned())
    }

    /// `b2nd_to_cbuffer` of the whole array into the first bytes of `dst`.
    fn to_cbuffer(&self, dst: &mut [u8]) -> Result<(), String> {
        let f = self
            .ctx
            .api
            .to_cbuffer
            .ok_or_else(|| format!("{} has no b2nd_to_cbuffer", self.ctx.api.path))?;
        let need = self.layout().nbytes();
        if dst.len() < need {
            return Err(format!("{} bytes for an array of {need}", dst.len()));
        }
        let size = len_i64(need)?;
        // SAFETY: `int b2nd_to_cbuffer(const b2nd_array_t *array, void
        // *buffer, int64_t buffersize)`: a live array of this library, and
        // `dst` has buffersize writable bytes, the array's (checked).
        let rc = unsafe { f(self.ptr, dst.as_mut_ptr().cast(), size) };
        match rc {
            0 => Ok(()),
            rc => Err(format!("b2nd_to_cbuffer(buffersize {size}) returned {rc}")),
        }
    }
}

/// A box of an array: `start[d]..stop[d]` in every dimension.
#[derive(Clone, Debug, PartialEq, Eq)]
struct NdBox {
    start: Vec<i64>,
    stop: Vec<i64>,
}

impl NdBox {
    fn new(start: &[i64], stop: &[i64]) -> NdBox {
        NdBox {
            start: start.to_vec(),
            stop: stop.to_vec(),
        }
    }

    fn whole(shape: &[i64]) -> NdBox {
        NdBox {
            start: vec![0; shape.len()],
            stop: shape.to_vec(),
        }
    }

    fn shape(&self) -> Vec<i64> {
        self.start
            .iter()
            .zip(&self.stop)
            .map(|(a, b)| b - a)
            .collect()
    }

    fn items(&self) -> usize {
        self.shape().iter().map(|&d| d.max(0) as usize).product()
    }

    /// `[500000:501000, 0:3]`.
    fn label(&self) -> String {
        let dims: Vec<String> = self
            .start
            .iter()
            .zip(&self.stop)
            .map(|(a, b)| format!("{a}:{b}"))
            .collect();
        format!("[{}]", dims.join(", "))
    }

    /// The byte ranges (offset, length) the box covers in the C-order
    /// buffer of an array of `shape` and `itemsize`, in C order.
    fn spans(&self, shape: &[i64], itemsize: usize) -> Vec<(usize, usize)> {
        let n = shape.len();
        if n == 0 || self.items() == 0 {
            return Vec::new();
        }
        let mut strides = vec![itemsize; n];
        for d in (0..n - 1).rev() {
            strides[d] = strides[d + 1] * shape[d + 1] as usize;
        }
        let run = (self.stop[n - 1] - self.start[n - 1]) as usize * itemsize;
        let mut idx = self.start.clone();
        let mut out = Vec::new();
        loop {
            let off = (0..n).map(|d| idx[d] as usize * strides[d]).sum();
            out.push((off, run));
            // The next index of the outer dimensions (an odometer).
            let mut d = n - 1;
            loop {
                if d == 0 {
                    return out;
                }
                d -= 1;
                idx[d] += 1;
                if idx[d] < self.stop[d] {
                    break;
                }
                idx[d] = self.start[d];
            }
        }
    }

    /// The box's bytes of the C-order buffer `src`, in C order.
    fn extract(&self, src: &[u8], shape: &[i64], itemsize: usize) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.items() * itemsize);
        for (off, len) in self.spans(shape, itemsize) {
            out.extend_from_slice(&src[off..off + len]);
        }
        out
    }

    /// Writes `data` (the box's bytes in C order) into the C-order `dst`.
    fn insert(&self, dst: &mut [u8], shape: &[i64], itemsize: usize, data: &[u8]) {
        let mut at = 0;
        for (off, len) in self.spans(shape, itemsize) {
            dst[off..off + len].copy_from_slice(&data[at..at + len]);
            at += len;
        }
    }
}

/// An array's shape, chunks, blocks and dtype.
#[derive(Clone, Debug)]
struct Layout {
    shape: Vec<i64>,
    chunks: Vec<i32>,
    blocks: Vec<i32>,
    dtype: &'static str,
    itemsize: usize,
}

impl Layout {
    fn nbytes(&self) -> usize {
        self.items() * self.itemsize
    }

    fn items(&self) -> usize {
        self.shape.iter().map(|&d| d as usize).product::<usize>()
    }

    /// `(2000, 2000)`.
    fn shape_label(&self) -> String {
        let dims: Vec<String> = self.shape.iter().map(i64::to_string).collect();
        format!("({})", dims.join(", "))
    }

    /// The layout of two such arrays concatenated along `axis`.
    fn concatenated(&self, axis: usize) -> Layout {
        let mut l = self.clone();
        l.shape[axis] *= 2;
        l
    }

    /// What `b2nd_expand_dims` with `flags` makes of it: a dimension of
    /// length 1 (chunks and blocks of 1) where a flag is true.
    fn expanded(&self, flags: &[bool]) -> Layout {
        let mut l = Layout {
            shape: Vec::new(),
            chunks: Vec::new(),
            blocks: Vec::new(),
            ..self.clone()
        };
        let mut old = 0;
        for &new in flags {
            let (s, c, b) = if new {
                (1, 1, 1)
            } else {
                old += 1;
                (
                    self.shape[old - 1],
                    self.chunks[old - 1],
                    self.blocks[old - 1],
                )
            };
            l.shape.push(s);
            l.chunks.push(c);
            l.blocks.push(b);
        }
        l
    }

    /// What `b2nd_squeeze` makes of it: without the dimensions of length 1.
    fn squeezed(&self) -> Layout {
        let keep: Vec<usize> = (0..self.shape.len())
            .filter(|&d| self.shape[d] != 1)
            .collect();
        Layout {
            shape: keep.iter().map(|&d| self.shape[d]).collect(),
            chunks: keep.iter().map(|&d| self.chunks[d]).collect(),
            blocks: keep.iter().map(|&d| self.blocks[d]).collect(),
            ..self.clone()
        }
    }
}

/// splitmix64: the coordinates and indices of the selections, the same on
/// every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// In `lo..hi` (not empty; the modulo's bias is immaterial here).
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next() % (hi - lo) as u64) as i64
    }

    /// `k` distinct values of `lo..hi`, in the order drawn (not sorted).
    fn distinct(&mut self, k: usize, lo: i64, hi: i64) -> Vec<i64> {
        assert!(k as i64 <= hi - lo, "{k} of {lo}..{hi}");
        let mut seen = std::collections::HashSet::new();
        let mut out = Vec::with_capacity(k);
        while out.len() < k {
            let v = self.range(lo, hi);
            if seen.insert(v) {
                out.push(v);
            }
        }
        out
    }
}

/// An orthogonal selection: a list of indices along each dimension (the
/// items selected are every combination, in C order over the lists), with
/// the range each was drawn from (for the label).
#[derive(Clone, Debug)]
struct Ortho {
    lists: Vec<Vec<i64>>,
    from: Vec<(i64, i64)>,
}

impl Ortho {
    /// `lo..hi` whole and in order along a dimension.
    fn all(lo: i64, hi: i64) -> (Vec<i64>, (i64, i64)) {
        ((lo..hi).collect(), (lo, hi))
    }

    /// `k` distinct indices of `lo..hi` in random order.
    fn some(rng: &mut Rng, k: usize, lo: i64, hi: i64) -> (Vec<i64>, (i64, i64)) {
        (rng.distinct(k, lo, hi), (lo, hi))
    }

    fn new(dims: Vec<(Vec<i64>, (i64, i64))>) -> Ortho {
        let (lists, from) = dims.into_iter().unzip();
        Ortho { lists, from }
    }

    fn items(&self) -> usize {
        self.lists.iter().map(Vec::len).product()
    }

    /// `[100 of 0:2000, 0:2000]`: a dimension taken whole and in order as
    /// a slice, else how many indices of which range.
    fn label(&self) -> String {
        let dims: Vec<String> = self
            .lists
            .iter()
            .zip(&self.from)
            .map(|(l, &(lo, hi))| {
                if l.iter().copied().eq(lo..hi) {
                    format!("{lo}:{hi}")
                } else {
                    format!("{} of {lo}:{hi}", l.len())
                }
            })
            .collect();
        format!("[{}]", dims.join(", "))
    }

    /// The offsets (in items) of the selected items in the C-order buffer
    /// of an array of `shape`, in C order over the selection.
    fn offsets(&self, shape: &[i64]) -> Vec<usize> {
        let n = shape.len();
        let mut strides = vec![1usize; n];
        for d in (0..n.saturating_sub(1)).rev() {
            strides[d] = strides[d + 1] * shape[d + 1] as usize;
        }
        let mut out = vec![0usize];
        for (l, &stride) in self.lists.iter().zip(&strides) {
            out = out
                .iter()
                .flat_map(|&o| l.iter().map(move |&i| o + i as usize * stride))
                .collect();
        }
        out
    }

    /// The selection's bytes of the C-order buffer `src`.
    fn extract(&self, src: &[u8], shape: &[i64], itemsize: usize) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.items() * itemsize);
        for o in self.offsets(shape) {
            out.extend_from_slice(&src[o * itemsize..(o + 1) * itemsize]);
        }
        out
    }

    /// Writes `data` (the selection's bytes) into the C-order `dst`.
    fn insert(&self, dst: &mut [u8], shape: &[i64], itemsize: usize, data: &[u8]) {
        for (o, v) in self.offsets(shape).into_iter().zip(data.chunks(itemsize)) {
            dst[o * itemsize..(o + 1) * itemsize].copy_from_slice(v);
        }
    }
}

/// What a row reads, writes or makes.
#[derive(Clone, Debug)]
enum Target {
    /// A box (`get_slice`, `set_slice`; the whole array for
    /// `from_cbuffer` and `to_cbuffer`).
    Box(NdBox),
    /// Flat C-order coordinates, drawn from inside a box.
    Coords { coords: Vec<i64>, within: NdBox },
    /// An orthogonal selection.
    Ortho(Ortho),
    /// The array concatenated with itself along an axis.
    Concat { axis: usize },
    /// `b2nd_expand_dims` with these flags.
    Expand(Vec<bool>),
    /// `b2nd_squeeze` of the array expanded with these flags.
    Squeeze(Vec<bool>),
}

impl Target {
    /// The table's `box` column.
    fn label(&self, l: &Layout) -> String {
        match self {
            Target::Box(b) => b.label(),
            Target::Coords { coords, within } => {
                format!("{} in {}", coords.len(), within.label())
            }
            Target::Ortho(o) => o.label(),
            Target::Concat { axis } => {
                let (n, c) = (l.shape[*axis], i64::from(l.chunks[*axis]));
                let how = if n % c == 0 {
                    "aligned".to_owned()
                } else {
                    format!("unaligned, {n} % {c} = {}", n % c)
                };
                format!("2 x {} axis {axis}, {how}", l.shape_label())
            }
            Target::Expand(f) => {
                format!("{} -> {}", l.shape_label(), l.expanded(f).shape_label())
            }
            Target::Squeeze(f) => {
                let e = l.expanded(f);
                format!("{} -> {}", e.shape_label(), e.squeezed().shape_label())
            }
        }
    }

    /// The bytes the call reads, writes or (`concatenate`) makes; an
    /// `expand_dims` or `squeeze` the array's.
    fn bytes(&self, l: &Layout) -> usize {
        l.itemsize
            * match self {
                Target::Box(b) => b.items(),
                Target::Coords { coords, .. } => coords.len(),
                Target::Ortho(o) => o.items(),
                Target::Concat { .. } => 2 * l.items(),
                Target::Expand(_) | Target::Squeeze(_) => l.items(),
            }
    }
}

/// The arrays timed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Workload {
    /// 1,000,000 x 3 float32 points of a slow spiral, python-blosc2's
    /// default chunks and blocks.
    Points,
    /// 2,000 x 2,000 float64, `sin(i/50) + cos(j/70)`, python-blosc2's
    /// default chunks and blocks (whole rows).
    Image,
    /// The same image in 500 x 500 chunks of 100 x 100 blocks.
    ImageTiles,
}

impl Workload {
    /// Every workload, in table order.
    pub const ALL: [Workload; 3] = [Workload::Points, Workload::Image, Workload::ImageTiles];

    /// `points`, `image`, `image-tiles`.
    pub fn name(self) -> &'static str {
        match self {
            Workload::Points => "points",
            Workload::Image => "image",
            Workload::ImageTiles => "image-tiles",
        }
    }

    /// Parses [`Workload::name`].
    pub fn parse(s: &str) -> Option<Workload> {
        Workload::ALL.into_iter().find(|w| w.name() == s)
    }

    fn layout(self) -> Layout {
        match self {
            // What `blosc2.asarray(np.zeros(...))` of python-blosc2 4.14.1
            // picks on the development machine (AMD EPYC, 2 vCPUs).
            Workload::Points => Layout {
                shape: vec![1_000_000, 3],
                chunks: vec![500_000, 3],
                blocks: vec![10_000, 3],
                dtype: "<f4",
                itemsize: 4,
            },
            Workload::Image => Layout {
                shape: vec![2000, 2000],
                chunks: vec![504, 2000],
                blocks: vec![8, 2000],
                dtype: "<f8",
                itemsize: 8,
            },
            Workload::ImageTiles => Layout {
                shape: vec![2000, 2000],
                chunks: vec![500, 500],
                blocks: vec![100, 100],
                dtype: "<f8",
                itemsize: 8,
            },
        }
    }

    /// The array's C-order bytes (little-endian).
    fn generate(self) -> Vec<u8> {
        match self {
            Workload::Points => {
                let mut v = Vec::with_capacity(1_000_000 * 3 * 4);
                for i in 0..1_000_000 {
                    let t = f64::from(i) * 1e-3;
                    for x in [t.cos() * t, t.sin() * t, t] {
                        v.extend_from_slice(&(x as f32).to_le_bytes());
                    }
                }
                v
            }
            Workload::Image | Workload::ImageTiles => {
                let mut v = Vec::with_capacity(2000 * 2000 * 8);
                for i in 0..2000 {
                    let row = (f64::from(i) / 50.0).sin();
                    for j in 0..2000 {
                        let x = row + (f64::from(j) / 70.0).cos();
                        v.extend_from_slice(&x.to_le_bytes());
                    }
                }
                v
            }
        }
    }

    /// The box an operation reads or writes (`None`: not on this workload).
    fn region(self, op: Op) -> Option<NdBox> {
        let whole = NdBox::whole(&self.layout().shape);
        let points = self == Workload::Points;
        Some(match op {
            Op::FromCbuffer | Op::ToCbuffer => whole,
            // Inside one block: points chunk 1 block 0; image chunk 2 block
            // 0 (blocks of 8 whole rows); image-tiles chunk (2, 2) block
            // (0, 0).
            Op::GetSmall | Op::SetSmall => match self {
                Workload::Points => NdBox::new(&[500_000, 0], &[501_000, 3]),
                Workload::Image => NdBox::new(&[1008, 1000], &[1016, 1010]),
                Workload::ImageTiles => NdBox::new(&[1000, 1000], &[1010, 1010]),
            },
            Op::GetBand if points => NdBox::new(&[0, 0], &[500_000, 3]),
            Op::GetBand => NdBox::new(&[0, 0], &[200, 2000]),
            Op::GetColumns if points => return None,
            Op::GetColumns => NdBox::new(&[0, 1000], &[2000, 1010]),
            _ => return None,
        })
    }

    /// The block the small box lies in: points chunk 1 block 0, image
    /// chunk 2 block 0 (8 whole rows), image-tiles chunk (2, 2) block
    /// (0, 0).
    fn one_block(self) -> NdBox {
        match self {
            Workload::Points => NdBox::new(&[500_000, 0], &[510_000, 3]),
            Workload::Image => NdBox::new(&[1008, 0], &[1016, 2000]),
            Workload::ImageTiles => NdBox::new(&[1000, 1000], &[1100, 1100]),
        }
    }

    /// What an operation reads, writes or makes (`None`: not on this
    /// workload). The coordinates and indices are drawn by [`Rng`] from a
    /// seed of the workload and the operation: the same on every run.
    fn target(self, op: Op) -> Option<Target> {
        let l = self.layout();
        let mut rng = Rng(0x6F78_6962_6C6F_7363 ^ (((self as u64) << 8) | op as u64));
        let points = self == Workload::Points;
        let rows = l.shape[0];
        let cols = l.shape[1];
        Some(match op {
            Op::FromCbuffer
            | Op::ToCbuffer
            | Op::GetSmall
            | Op::GetBand
            | Op::GetColumns
            | Op::SetSmall => Target::Box(self.region(op)?),
            // 1,000 items anywhere (most blocks of the array touched), or
            // all in the small box's block.
            Op::SparseSpread | Op::SparseBlock => {
                let within = if op == Op::SparseSpread {
                    NdBox::whole(&l.shape)
                } else {
                    self.one_block()
                };
                let coords = (0..1000)
                    .map(|_| {
                        (0..l.shape.len()).fold(0, |flat, d| {
                            flat * l.shape[d] + rng.range(within.start[d], within.stop[d])
                        })
                    })
                    .collect();
                Target::Coords { coords, within }
            }
            // `a[idx]` / `a.oindex[idx, :]`: 100 rows anywhere, whole.
            Op::GetOrthoRows => Target::Ortho(Ortho::new(vec![
                Ortho::some(&mut rng, 100, 0, rows),
                Ortho::all(0, cols),
            ])),
            // `a.oindex[rows, cols]`: 100 rows anywhere, 2 of the 3
            // columns of points, 20 of the 2,000 of the images.
            Op::GetOrthoGrid => {
                let k = if points { 2 } else { 20 };
                let r = Ortho::some(&mut rng, 100, 0, rows);
                Target::Ortho(Ortho::new(vec![r, Ortho::some(&mut rng, k, 0, cols)]))
            }
            // 10 rows x 2 (points) or 10 columns inside chunk 1 (points,
            // image) or (1, 1) (image-tiles): one chunk written, as
            // `set_slice small`.
            Op::SetOrtho => {
                let (c0, c1) = (i64::from(l.chunks[0]), i64::from(l.chunks[1]));
                let r = Ortho::some(&mut rng, 10, c0, 2 * c0);
                let c = match self {
                    Workload::Points => Ortho::some(&mut rng, 2, 0, cols),
                    Workload::Image => Ortho::some(&mut rng, 10, 0, cols),
                    Workload::ImageTiles => Ortho::some(&mut rng, 10, c1, 2 * c1),
                };
                Target::Ortho(Ortho::new(vec![r, c]))
            }
            Op::Concat => Target::Concat { axis: 0 },
            // `a[np.newaxis]`.
            Op::ExpandDims => Target::Expand(vec![true, false, false]),
            Op::Squeeze => Target::Squeeze(vec![true, false, false]),
        })
    }
}

/// What a row times.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    FromCbuffer,
    ToCbuffer,
    GetSmall,
    GetBand,
    GetColumns,
    SetSmall,
    SparseSpread,
    SparseBlock,
    GetOrthoRows,
    GetOrthoGrid,
    SetOrtho,
    Concat,
    ExpandDims,
    Squeeze,
}

impl Op {
    const ALL: [Op; 14] = [
        Op::FromCbuffer,
        Op::ToCbuffer,
        Op::GetSmall,
        Op::GetBand,
        Op::GetColumns,
        Op::SetSmall,
        Op::SparseSpread,
        Op::SparseBlock,
        Op::GetOrthoRows,
        Op::GetOrthoGrid,
        Op::SetOrtho,
        Op::Concat,
        Op::ExpandDims,
        Op::Squeeze,
    ];

    fn name(self) -> &'static str {
        match self {
            Op::FromCbuffer => "from_cbuffer",
            Op::ToCbuffer => "to_cbuffer",
            Op::GetSmall => "get_slice small",
            Op::GetBand => "get_slice band",
            Op::GetColumns => "get_slice columns",
            Op::SetSmall => "set_slice small",
            Op::SparseSpread => "get_sparse spread",
            Op::SparseBlock => "get_sparse block",
            Op::GetOrthoRows => "get_orthogonal rows",
            Op::GetOrthoGrid => "get_orthogonal grid",
            Op::SetOrtho => "set_orthogonal small",
            Op::Concat => "concatenate",
            Op::ExpandDims => "expand_dims",
            Op::Squeeze => "squeeze",
        }
    }
}

/// What to run.
#[derive(Clone, Debug)]
pub struct Options {
    /// Workloads (all by default).
    pub workloads: Vec<Workload>,
    /// Threads for both libraries (`nthreads` of cparams and dparams).
    pub nthreads: usize,
    /// Rounds and their length.
    pub timing: Config,
    /// Our `libblosc2.so` (None: build it and take target/release's).
    pub ours: Option<PathBuf>,
    /// C-Blosc2 3.x (None: python-blosc2's in target/pydeps).
    pub c_blosc2: Option<PathBuf>,
    /// Where the CSV goes.
    pub csv: Option<PathBuf>,
}

impl Options {
    /// The default run (`quick`: 5 rounds of >= 8 ms instead of 7 of >= 20
    /// ms).
    pub fn new(quick: bool) -> Options {
        Options {
            workloads: Workload::ALL.to_vec(),
            nthreads: 1,
            timing: if quick {
                Config::quick()
            } else {
                Config::full()
            },
            ours: None,
            c_blosc2: None,
            csv: Some(output_path("b2nd.csv", false)),
        }
    }
}

/// One row's result: ours and C's times (None: not timed), the check.
struct Measured {
    workload: Workload,
    op: Op,
    /// [`Target::label`].
    label: String,
    bytes: usize,
    samples: [Option<Sample>; 2],
    check: Result<(), String>,
}

const WHO: [&str; 2] = ["ours", "C"];

/// Runs every row; returns whether every check passed.
///
/// # Errors
/// A library cannot be found, built or opened, lacks a `b2nd.h` call
/// every row needs, or C-Blosc2 cannot make an array.
pub fn run(opts: &Options) -> Result<bool, String> {
    let ours_path = match &opts.ours {
        Some(p) => p.clone(),
        None => capi::build_ours()?,
    };
    let c_path = match &opts.c_blosc2 {
        Some(p) => p.clone(),
        None => crate::pydeps::libblosc2()?,
    };
    let ours = Lib::open(&ours_path)?;
    let c = Lib::open(&c_path)?;
    println!(
        "- ours: `{}` (blosc2.h {})",
        ours.path,
        ours.version("blosc2_get_version_string")?
    );
    println!(
        "- C-Blosc2 {}: `{}`",
        c.version("blosc2_get_version_string")?,
        c.path
    );
    let apis = [B2ndApi::load(&ours)?, B2ndApi::load(&c)?];
    for (who, api) in WHO.iter().zip(&apis) {
        let missing = api.missing();
        if !missing.is_empty() {
            println!(
                "- **{who} has no `{}`**: those rows fail{}",
                missing.join("`, `"),
                if api.from_cbuffer.is_none() {
                    "; its arrays for the other rows are made with `b2nd_zeros` and one \
                     `b2nd_set_slice_cbuffer` of the whole array"
                } else {
                    ""
                }
            );
        }
    }
    let clock = if opts.nthreads > 1 {
        Clock::Wall
    } else {
        opts.timing.clock
    };
    let cfg = Config {
        clock,
        ..opts.timing
    };
    println!(
        "- {} rounds of >= {} ms per contestant, interleaved, {} clock; nthreads {}; BLOSCLZ \
         clevel 5 shuffle (AUTO_SPLIT); in memory (contiguous = false, urlpath = NULL: \
         python-blosc2's `blosc2.asarray` without urlpath)",
        cfg.rounds,
        cfg.target.as_millis(),
        clock.name(),
        opts.nthreads,
    );
    for w in &opts.workloads {
        let l = w.layout();
        println!(
            "- {}: shape {:?} {} ({}), chunks {:?}, blocks {:?}",
            w.name(),
            l.shape,
            l.dtype,
            bytes_label(l.nbytes()),
            l.chunks,
            l.blocks
        );
    }
    println!();

    let rows: Vec<(Workload, Op)> = opts
        .workloads
        .iter()
        .flat_map(|&w| {
            Op::ALL
                .into_iter()
                .filter(move |&op| w.target(op).is_some())
                .map(move |op| (w, op))
        })
        .collect();
    let mut results = Vec::new();
    for &w in &opts.workloads {
        let layout = w.layout();
        let src = w.generate();
        let ctxs = [
            apis[0].ctx(&layout, opts.nthreads)?,
            apis[1].ctx(&layout, opts.nthreads)?,
        ];
        // The arrays the reads time, each library's own from `src`.
        let arrays = [ctxs[0].build(&src), ctxs[1].build(&src)];
        if let Err(e) = &arrays[1] {
            return Err(format!("C-Blosc2 cannot make the {} array: {e}", w.name()));
        }
        for op in Op::ALL {
            let Some(target) = w.target(op) else {
                continue;
            };
            let label = target.label(&layout);
            eprintln!(
                "[{}/{}] {} {} {label}",
                results.len() + 1,
                rows.len(),
                w.name(),
                op.name(),
            );
            let (samples, check) = measure_row(op, &target, &src, &ctxs, &arrays, &cfg);
            results.push(Measured {
                workload: w,
                op,
                bytes: target.bytes(&layout),
                label,
                samples,
                check,
            });
        }
    }

    let mut table = Table::new([
        "workload",
        "op",
        "box",
        "bytes",
        "ours µs",
        "C µs",
        "C/ours",
        "ours spread",
        "C spread",
        "check",
    ]);
    let us = |s: &Option<Sample>| s.as_ref().map_or("-".into(), |s| fmt_us(s.median));
    let spread = |s: &Option<Sample>| {
        s.as_ref()
            .map_or("-".into(), |s| format!("{:.0}%", s.spread() * 100.0))
    };
    // (ratio, whether the row is a view in C-Blosc2).
    let mut ratios = Vec::new();
    let mut all_ok = true;
    for m in &results {
        let [o, c] = &m.samples;
        let ratio = match (o, c) {
            (Some(o), Some(c)) => {
                let r = o.speedup_over(c);
                ratios.push((r, matches!(m.op, Op::ExpandDims | Op::Squeeze)));
                fmt_ratio(r)
            }
            _ => "-".into(),
        };
        all_ok &= m.check.is_ok();
        table.push(vec![
            m.workload.name().into(),
            m.op.name().into(),
            m.label.clone(),
            bytes_label(m.bytes),
            us(o),
            us(c),
            ratio,
            spread(o),
            spread(c),
            match &m.check {
                Ok(()) => "ok".into(),
                Err(e) => format!("FAILED: {e}"),
            },
        ]);
    }
    println!("{}", table.markdown());
    println!(
        "µs: median time per call. C/ours: C's time over ours (above 1, ours is faster; the \
         median of the per-round ratios). spread: (slowest - fastest round) / median."
    );
    let all: Vec<f64> = ratios.iter().map(|r| r.0).collect();
    let copies: Vec<f64> = ratios.iter().filter(|r| !r.1).map(|r| r.0).collect();
    let mut lines = vec![(all, "rows timed on both sides")];
    if copies.len() < lines[0].0.len() {
        lines.push((
            copies,
            "rows without expand_dims and squeeze (O(1) views in C-Blosc2)",
        ));
    }
    for (v, what) in lines.iter().filter(|l| !l.0.is_empty()) {
        let geo = (v.iter().map(|r| r.ln()).sum::<f64>() / v.len() as f64).exp();
        let min = v.iter().copied().fold(f64::INFINITY, f64::min);
        let max = v.iter().copied().fold(0.0, f64::max);
        println!(
            "C/ours over the {} {what}: geomean {}, min {}, max {}",
            v.len(),
            fmt_ratio(geo),
            fmt_ratio(min),
            fmt_ratio(max)
        );
    }
    if let Some(csv) = &opts.csv {
        table
            .write_csv(csv)
            .map_err(|e| format!("cannot write {}: {e}", csv.display()))?;
        println!("CSV: {}", csv.display());
    }
    Ok(all_ok)
}

/// The first failure of a row's checks.
struct Check(Result<(), String>);

impl Check {
    /// Keeps `what` (of side `s`) unless a failure came first.
    fn fail(&mut self, s: usize, what: String) {
        if self.0.is_ok() {
            self.0 = Err(format!("{}: {what}", WHO[s]));
        }
    }

    /// Fails side `s` unless its `got` is `want`.
    fn same(&mut self, s: usize, what: &str, got: &[u8], want: &[u8], item: usize) {
        if got != want {
            self.fail(s, differs(what, got, want, item));
        }
    }

    /// Fails side `s` unless `a`'s `b2nd_array_t` has the shape, chunks
    /// and blocks expected of it and `b2nd_to_cbuffer` of it gives `want`.
    fn reads(&mut self, s: usize, what: &str, a: &NdArray<'_>, want: &[u8], item: usize) {
        if let Err(e) = a.check_head() {
            return self.fail(s, format!("{what}: {e}"));
        }
        let mut out = vec![0xA5u8; want.len()];
        match a.to_cbuffer(&mut out) {
            Ok(()) => self.same(s, &format!("{what} reads back"), &out, want, item),
            Err(e) => self.fail(s, format!("reading back {what}: {e}")),
        }
    }
}

/// The row's result: the samples of the sides timed, the check.
type RowResult = ([Option<Sample>; 2], Result<(), String>);

/// Checks one row on both sides, then times the sides whose calls worked.
fn measure_row(
    op: Op,
    target: &Target,
    src: &[u8],
    ctxs: &[NdCtx<'_>; 2],
    arrays: &[Result<NdArray<'_>, String>; 2],
    cfg: &Config,
) -> RowResult {
    let layout = &*ctxs[0].layout;
    let (shape, item) = (&layout.shape[..], layout.itemsize);
    match (op, target) {
        (Op::FromCbuffer, _) => from_row(src, ctxs, cfg),
        (Op::ToCbuffer, _) => get_row(cfg, arrays, src, item, "b2nd_to_cbuffer", |a, out| {
            a.to_cbuffer(out)
        }),
        (Op::GetSmall | Op::GetBand | Op::GetColumns, Target::Box(b)) => {
            let want = b.extract(src, shape, item);
            get_row(
                cfg,
                arrays,
                &want,
                item,
                "b2nd_get_slice_cbuffer",
                |a, out| a.get_slice(b, out),
            )
        }
        (Op::SetSmall, Target::Box(b)) => {
            // The box's values with their sign bit flipped (little-endian
            // floats: the top bit of each item's last byte).
            let new = flipped(&b.extract(src, shape, item), item);
            let mut want = src.to_vec();
            b.insert(&mut want, shape, item, &new);
            set_row(cfg, ctxs, src, &want, "set_slice", |a| a.set_slice(b, &new))
        }
        (Op::SparseSpread | Op::SparseBlock, Target::Coords { coords, .. }) => {
            let mut want = Vec::with_capacity(coords.len() * item);
            for &c in coords {
                let c = c as usize * item;
                want.extend_from_slice(&src[c..c + item]);
            }
            get_row(
                cfg,
                arrays,
                &want,
                item,
                "b2nd_get_sparse_cbuffer",
                |a, out| a.get_sparse(coords, out),
            )
        }
        (Op::GetOrthoRows | Op::GetOrthoGrid, Target::Ortho(sel)) => {
            let want = sel.extract(src, shape, item);
            get_row(
                cfg,
                arrays,
                &want,
                item,
                "b2nd_get_orthogonal_selection",
                |a, out| a.get_ortho(sel, out),
            )
        }
        (Op::SetOrtho, Target::Ortho(sel)) => {
            let new = flipped(&sel.extract(src, shape, item), item);
            let mut want = src.to_vec();
            sel.insert(&mut want, shape, item, &new);
            set_row(cfg, ctxs, src, &want, "set_orthogonal_selection", |a| {
                a.set_ortho(sel, &new)
            })
        }
        (Op::Concat, &Target::Concat { axis }) => concat_row(axis, src, ctxs, arrays, cfg),
        (Op::ExpandDims, Target::Expand(flags)) => expand_row(flags, src, layout, arrays, cfg),
        (Op::Squeeze, Target::Squeeze(flags)) => squeeze_row(flags, src, layout, arrays, cfg),
        (op, t) => ([None, None], Err(format!("{} of {t:?}", op.name()))),
    }
}

/// Every item of `v` (items of `item` bytes, little-endian floats) with its
/// sign bit flipped.
fn flipped(v: &[u8], item: usize) -> Vec<u8> {
    let mut new = v.to_vec();
    for x in new.chunks_mut(item) {
        x[item - 1] ^= 0x80;
    }
    new
}

/// `from_cbuffer`: each side's `b2nd_from_cbuffer` of `src` reads back
/// `src`; timed with the `b2nd_free` of the new array.
fn from_row(src: &[u8], ctxs: &[NdCtx<'_>; 2], cfg: &Config) -> RowResult {
    let item = ctxs[0].layout.itemsize;
    let whole = NdBox::whole(&ctxs[0].layout.shape);
    let mut check = Check(Ok(()));
    // Whether each side's call worked in the check (only those are timed).
    let mut works = [false; 2];
    for s in 0..2 {
        match ctxs[s].array_from(src) {
            Ok(a) => {
                works[s] = true;
                let mut out = vec![0xA5u8; src.len()];
                match a.get_slice(&whole, &mut out) {
                    Ok(()) => check.same(s, "its array reads back", &out, src, item),
                    Err(e) => check.fail(s, format!("reading its array back: {e}")),
                }
            }
            Err(e) => check.fail(s, e),
        }
    }
    let side = |s: usize| {
        works[s].then(|| {
            let ctx = &ctxs[s];
            Contestant::new(move || {
                drop(ctx.array_from(src).expect("b2nd_from_cbuffer"));
            })
        })
    };
    (time_sides(cfg, side(0), side(1)), check.0)
}

/// A read into a buffer: `get` of each side's array writes `want` (into a
/// buffer of `want.len()` bytes, filled with 0xA5 before the check).
fn get_row<F>(
    cfg: &Config,
    arrays: &[Result<NdArray<'_>, String>; 2],
    want: &[u8],
    item: usize,
    call: &str,
    get: F,
) -> RowResult
where
    F: Fn(&NdArray<'_>, &mut [u8]) -> Result<(), String>,
{
    let mut check = Check(Ok(()));
    let mut works = [false; 2];
    for s in 0..2 {
        let mut out = vec![0xA5u8; want.len()];
        match arrays[s].as_ref().map(|a| get(a, &mut out)) {
            Ok(Ok(())) => {
                works[s] = true;
                check.same(s, &format!("{call} wrote"), &out, want, item);
            }
            Ok(Err(e)) => check.fail(s, e),
            Err(e) => check.fail(s, format!("no array ({e})")),
        }
    }
    let get = &get;
    let side = |s: usize| {
        let a = arrays[s].as_ref().ok().filter(|_| works[s])?;
        let mut out = vec![0u8; want.len()];
        Some(Contestant::new(move || get(a, &mut out).expect(call)))
    };
    (time_sides(cfg, side(0), side(1)), check.0)
}

/// A write: `set` on an array of each side's own, made from `src` for the
/// row (the read rows' stay as built), after which it reads back `want`
/// (so both the same); timed on those arrays, writing the same values
/// every call.
fn set_row<F>(
    cfg: &Config,
    ctxs: &[NdCtx<'_>; 2],
    src: &[u8],
    want: &[u8],
    call: &str,
    set: F,
) -> RowResult
where
    F: Fn(&mut NdArray<'_>) -> Result<(), String>,
{
    let item = ctxs[0].layout.itemsize;
    let whole = NdBox::whole(&ctxs[0].layout.shape);
    let mut check = Check(Ok(()));
    let mut works = [false; 2];
    let mut fresh = [ctxs[0].build(src), ctxs[1].build(src)];
    let mut back: [Option<Vec<u8>>; 2] = [None, None];
    for s in 0..2 {
        let a = match &mut fresh[s] {
            Ok(a) => a,
            Err(e) => {
                check.fail(s, format!("no array ({e})"));
                continue;
            }
        };
        if let Err(e) = set(a) {
            check.fail(s, e);
            continue;
        }
        works[s] = true;
        let mut out = vec![0xA5u8; want.len()];
        match a.get_slice(&whole, &mut out) {
            Ok(()) if out == want => back[s] = Some(out),
            Ok(()) => check.fail(
                s,
                differs(&format!("after {call} it reads back"), &out, want, item),
            ),
            Err(e) => check.fail(s, format!("reading back after {call}: {e}")),
        }
    }
    if let [Some(a), Some(b)] = &back
        && a != b
    {
        check.fail(0, format!("reads back other bytes than C after {call}"));
    }
    let set = &set;
    let [f0, f1] = &mut fresh;
    let c0 = f0.as_mut().ok().filter(|_| works[0]);
    let c1 = f1.as_mut().ok().filter(|_| works[1]);
    let samples = time_sides(
        cfg,
        c0.map(|a| Contestant::new(move || set(a).expect(call))),
        c1.map(|a| Contestant::new(move || set(a).expect(call))),
    );
    (samples, check.0)
}

/// `concatenate`: `b2nd_concatenate` of each side's array with itself
/// along `axis`, `copy = true`, into a new array of the side's context
/// (the array's chunks and blocks, in memory); it has the shape, chunks
/// and blocks expected and reads back `src` twice over, and the array
/// still reads back `src`. Timed with the `b2nd_free` of the new array.
fn concat_row(
    axis: usize,
    src: &[u8],
    ctxs: &[NdCtx<'_>; 2],
    arrays: &[Result<NdArray<'_>, String>; 2],
    cfg: &Config,
) -> RowResult {
    let layout = &*ctxs[0].layout;
    let item = layout.itemsize;
    let joined = Rc::new(layout.concatenated(axis));
    let mut want = vec![0u8; joined.nbytes()];
    let first = NdBox::whole(&layout.shape);
    let mut second = first.clone();
    second.start[axis] += layout.shape[axis];
    second.stop[axis] += layout.shape[axis];
    first.insert(&mut want, &joined.shape, item, src);
    second.insert(&mut want, &joined.shape, item, src);
    let mut check = Check(Ok(()));
    let mut works = [false; 2];
    for s in 0..2 {
        let a = match &arrays[s] {
            Ok(a) => a,
            Err(e) => {
                check.fail(s, format!("no array ({e})"));
                continue;
            }
        };
        match ctxs[s].concatenate(a, a, axis, &joined) {
            Ok(r) => {
                works[s] = true;
                check.reads(s, "its concatenation", &r, &want, item);
            }
            Err(e) => check.fail(s, e),
        }
        let mut out = vec![0xA5u8; src.len()];
        match a.to_cbuffer(&mut out) {
            Ok(()) => check.same(
                s,
                "after b2nd_concatenate its source reads back",
                &out,
                src,
                item,
            ),
            Err(e) => check.fail(s, format!("reading back after b2nd_concatenate: {e}")),
        }
    }
    let joined = &joined;
    let side = |s: usize| {
        let a = arrays[s].as_ref().ok().filter(|_| works[s])?;
        let ctx = &ctxs[s];
        Some(Contestant::new(move || {
            drop(
                ctx.concatenate(a, a, axis, joined)
                    .expect("b2nd_concatenate"),
            );
        }))
    };
    (time_sides(cfg, side(0), side(1)), check.0)
}

/// `expand_dims`: `b2nd_expand_dims` of each side's array with `flags`
/// has the shape, chunks and blocks expected and reads back `src`. Timed
/// with the `b2nd_free` of the new array (a view in C-Blosc2, a copy of
/// the compressed chunks in ours).
fn expand_row(
    flags: &[bool],
    src: &[u8],
    layout: &Layout,
    arrays: &[Result<NdArray<'_>, String>; 2],
    cfg: &Config,
) -> RowResult {
    let item = layout.itemsize;
    let expanded = Rc::new(layout.expanded(flags));
    let mut check = Check(Ok(()));
    let mut works = [false; 2];
    for s in 0..2 {
        match arrays[s].as_ref().map(|a| a.expand_dims(flags, &expanded)) {
            Ok(Ok(v)) => {
                works[s] = true;
                check.reads(s, "its expanded array", &v, src, item);
            }
            Ok(Err(e)) => check.fail(s, e),
            Err(e) => check.fail(s, format!("no array ({e})")),
        }
    }
    let expanded = &expanded;
    let side = |s: usize| {
        let a = arrays[s].as_ref().ok().filter(|_| works[s])?;
        Some(Contestant::new(move || {
            drop(a.expand_dims(flags, expanded).expect("b2nd_expand_dims"));
        }))
    };
    (time_sides(cfg, side(0), side(1)), check.0)
}

/// `squeeze`: `b2nd_squeeze` of each side's array expanded with `flags`
/// (by its own `b2nd_expand_dims`, before timing) has the shape, chunks
/// and blocks expected and reads back `src`. Timed with the `b2nd_free` of
/// the new array.
fn squeeze_row(
    flags: &[bool],
    src: &[u8],
    layout: &Layout,
    arrays: &[Result<NdArray<'_>, String>; 2],
    cfg: &Config,
) -> RowResult {
    let item = layout.itemsize;
    let expanded = Rc::new(layout.expanded(flags));
    let squeezed = Rc::new(expanded.squeezed());
    let mut check = Check(Ok(()));
    // Each side's expanded array, dropped (as the squeezed ones made of
    // it) before this returns: in C-Blosc2 it is a view of `arrays[s]`.
    let mut views = [None, None];
    for s in 0..2 {
        let e = match arrays[s].as_ref().map(|a| a.expand_dims(flags, &expanded)) {
            Ok(Ok(e)) => e,
            Ok(Err(e)) => {
                check.fail(s, format!("the array to squeeze: {e}"));
                continue;
            }
            Err(e) => {
                check.fail(s, format!("no array ({e})"));
                continue;
            }
        };
        let mut e = e;
        match e.squeeze(&squeezed) {
            Ok(v) => {
                check.reads(s, "its squeezed array", &v, src, item);
                drop(v);
                views[s] = Some(e);
            }
            Err(err) => check.fail(s, err),
        }
    }
    let squeezed = &squeezed;
    let [v0, v1] = views;
    let samples = time_sides(
        cfg,
        v0.map(|mut e| Contestant::new(move || drop(e.squeeze(squeezed).expect("b2nd_squeeze")))),
        v1.map(|mut e| Contestant::new(move || drop(e.squeeze(squeezed).expect("b2nd_squeeze")))),
    );
    (samples, check.0)
}

/// Times the sides given, interleaved; `None` for a side not given.
fn time_sides<'a>(
    cfg: &Config,
    ours: Option<Contestant<'a>>,
    c: Option<Contestant<'a>>,
) -> [Option<Sample>; 2] {
    let mut sides = Vec::new();
    let mut contestants = Vec::new();
    for (s, x) in [ours, c].into_iter().enumerate() {
        if let Some(x) = x {
            sides.push(s);
            contestants.push(x);
        }
    }
    let mut out = [None, None];
    if contestants.is_empty() {
        return out;
    }
    for (s, sample) in sides
        .into_iter()
        .zip(timing::measure(cfg, &mut contestants))
    {
        out[s] = Some(sample);
    }
    out
}

/// "WHAT other data: first at item k of n".
fn differs(what: &str, got: &[u8], want: &[u8], item: usize) -> String {
    let at = got.iter().zip(want).position(|(a, b)| a != b);
    match at {
        Some(i) => format!(
            "{what} other data: first at item {} of {}",
            i / item,
            want.len() / item
        ),
        None => format!("{what} {} bytes, expected {}", got.len(), want.len()),
    }
}

/// `12.3` under 100 µs, else whole µs.
fn fmt_us(secs: f64) -> String {
    let us = secs * 1e6;
    if us < 100.0 {
        format!("{us:.1}")
    } else {
        format!("{us:.0}")
    }
}

/// Two decimals, or two significant digits under 0.095 (`0.0028`, not
/// `0.00`).
fn fmt_ratio(r: f64) -> String {
    if !(r > 0.0 && r < 0.095) {
        return format!("{r:.2}");
    }
    let decimals = (1 - r.log10().floor() as i32).max(2) as usize;
    format!("{r:.decimals$}")
}

/// `640 B`, `11.7 KiB`, `30.5 MiB`.
fn bytes_label(n: usize) -> String {
    if n >= 1 << 20 {
        format!("{:.1} MiB", n as f64 / f64::from(1 << 20))
    } else if n >= 1 << 10 {
        format!("{:.1} KiB", n as f64 / f64::from(1 << 10))
    } else {
        format!("{n} B")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for w in Workload::ALL {
            assert_eq!(Workload::parse(w.name()), Some(w));
        }
        assert_eq!(Workload::parse("nope"), None);
    }

    #[test]
    fn boxes_fit_and_small_ones_stay_in_one_block() {
        for w in Workload::ALL {
            let l = w.layout();
            assert_eq!(w.generate().len(), l.nbytes(), "{}", w.name());
            for op in Op::ALL {
                let Some(b) = w.region(op) else {
                    assert!(
                        (w, op) == (Workload::Points, Op::GetColumns)
                            || !matches!(w.target(op), Some(Target::Box(_))),
                        "{} {}",
                        w.name(),
                        op.name()
                    );
                    continue;
                };
                for d in 0..l.shape.len() {
                    assert!(0 <= b.start[d] && b.start[d] < b.stop[d] && b.stop[d] <= l.shape[d]);
                }
                if matches!(op, Op::GetSmall | Op::SetSmall) {
                    // (chunk, block within the chunk) of the first and the
                    // last item, in every dimension.
                    for d in 0..l.shape.len() {
                        let (c, bl) = (i64::from(l.chunks[d]), i64::from(l.blocks[d]));
                        let at = |x: i64| (x / c, x % c / bl);
                        assert_eq!(at(b.start[d]), at(b.stop[d] - 1), "{} dim {d}", w.name());
                    }
                }
            }
        }
    }

    #[test]
    fn selections_fit_and_stay_where_said() {
        for w in Workload::ALL {
            let l = w.layout();
            let (c0, c1) = (i64::from(l.chunks[0]), i64::from(l.chunks[1]));
            for op in Op::ALL {
                let t = w.target(op);
                assert_eq!(
                    t.is_some(),
                    w.region(op).is_some()
                        || !matches!(
                            op,
                            Op::FromCbuffer
                                | Op::ToCbuffer
                                | Op::GetSmall
                                | Op::GetBand
                                | Op::GetColumns
                                | Op::SetSmall
                        )
                );
                // The same selections on every run (a fixed seed).
                assert_eq!(format!("{t:?}"), format!("{:?}", w.target(op)));
                match t {
                    Some(Target::Coords { coords, within }) => {
                        assert_eq!(coords.len(), 1000);
                        let block = op == Op::SparseBlock;
                        assert_eq!(
                            within,
                            if block {
                                w.one_block()
                            } else {
                                NdBox::whole(&l.shape)
                            }
                        );
                        for c in coords {
                            let (r, col) = (c / l.shape[1], c % l.shape[1]);
                            assert!(within.start[0] <= r && r < within.stop[0]);
                            assert!(within.start[1] <= col && col < within.stop[1]);
                        }
                    }
                    Some(Target::Ortho(o)) => {
                        for (d, list) in o.lists.iter().enumerate() {
                            let mut u = list.clone();
                            u.sort();
                            u.dedup();
                            assert_eq!(u.len(), list.len(), "distinct");
                            assert!(list.iter().all(|&i| 0 <= i && i < l.shape[d]));
                        }
                        if op == Op::SetOrtho {
                            // One chunk: chunk 1 along dimension 0, and
                            // (image-tiles) along dimension 1.
                            assert!(o.lists[0].iter().all(|&i| i / c0 == 1));
                            let cols: Vec<i64> = o.lists[1].iter().map(|&i| i / c1).collect();
                            assert!(cols.iter().all(|&c| c == cols[0]));
                        }
                    }
                    _ => {}
                }
            }
            // The block of `get_sparse block` holds the small box and is
            // one block.
            let (b, small) = (w.one_block(), w.region(Op::GetSmall).unwrap());
            for d in 0..2 {
                assert!(b.start[d] <= small.start[d] && small.stop[d] <= b.stop[d]);
                let bl = i64::from(l.blocks[d]);
                let c = i64::from(l.chunks[d]);
                assert_eq!(b.start[d] % c % bl, 0);
                assert_eq!(b.stop[d] - b.start[d], bl.min(l.shape[d]));
            }
        }
    }

    #[test]
    fn ortho_and_layouts() {
        // A 3 x 4 array of one-byte items 0..12: rows [2, 0] x columns [1, 3].
        let src: Vec<u8> = (0..12).collect();
        let o = Ortho::new(vec![(vec![2, 0], (0, 3)), Ortho::all(1, 3)]);
        assert_eq!(o.extract(&src, &[3, 4], 1), vec![9, 10, 1, 2]);
        assert_eq!(o.label(), "[2 of 0:3, 1:3]");
        let mut dst = src.clone();
        o.insert(&mut dst, &[3, 4], 1, &[90, 100, 10, 20]);
        assert_eq!(dst, vec![0, 10, 20, 3, 4, 5, 6, 7, 8, 90, 100, 11]);
        let l = Workload::Image.layout();
        let e = l.expanded(&[true, false, false]);
        assert_eq!(
            (e.shape.clone(), e.chunks.clone()),
            (vec![1, 2000, 2000], vec![1, 504, 2000])
        );
        assert_eq!(e.squeezed().shape, l.shape);
        assert_eq!(l.concatenated(0).shape, vec![4000, 2000]);
        let t = Target::Concat { axis: 0 };
        assert_eq!(
            t.label(&l),
            "2 x (2000, 2000) axis 0, unaligned, 2000 % 504 = 488"
        );
        assert_eq!(
            t.label(&Workload::ImageTiles.layout()),
            "2 x (2000, 2000) axis 0, aligned"
        );
        assert_eq!(
            Target::Squeeze(vec![true, false, false]).label(&l),
            "(1, 2000, 2000) -> (2000, 2000)"
        );
    }

    #[test]
    fn extract_and_insert_follow_c_order() {
        // A 3 x 4 array of one-byte items 0..12.
        let src: Vec<u8> = (0..12).collect();
        let b = NdBox::new(&[1, 1], &[3, 3]);
        assert_eq!(b.extract(&src, &[3, 4], 1), vec![5, 6, 9, 10]);
        assert_eq!(b.label(), "[1:3, 1:3]");
        let mut dst = src.clone();
        b.insert(&mut dst, &[3, 4], 1, &[50, 60, 90, 100]);
        assert_eq!(dst, vec![0, 1, 2, 3, 4, 50, 60, 7, 8, 90, 100, 11]);
        // Two-byte items, a whole row, and 3-D.
        let b = NdBox::new(&[1, 0], &[2, 4]);
        let src16: Vec<u8> = (0..24).collect();
        assert_eq!(b.extract(&src16, &[3, 4], 2), (8..16).collect::<Vec<u8>>());
        let cube: Vec<u8> = (0..24).collect();
        let b = NdBox::new(&[1, 0, 1], &[2, 2, 3]);
        assert_eq!(b.extract(&cube, &[2, 3, 4], 1), vec![13, 14, 17, 18]);
        assert!(NdBox::new(&[1, 1], &[1, 3]).spans(&[3, 4], 1).is_empty());
    }

    #[test]
    fn labels() {
        assert_eq!(bytes_label(640), "640 B");
        assert_eq!(bytes_label(12_000), "11.7 KiB");
        assert_eq!(fmt_us(12.34e-6), "12.3");
        assert_eq!(fmt_us(1234.4e-6), "1234");
        assert_eq!(fmt_ratio(1.234), "1.23");
        assert_eq!(fmt_ratio(0.0995), "0.10");
        assert_eq!(fmt_ratio(0.05), "0.050");
        assert_eq!(fmt_ratio(0.002_83), "0.0028");
    }
}
