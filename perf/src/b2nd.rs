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
//!   array built for that row.
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
//! reads back the buffer; after a `set_slice` each array reads back the
//! expected whole buffer (so both the same). A side whose call fails is
//! not timed; its row fails the run. A library without
//! `b2nd_from_cbuffer` gets the arrays of the other rows from `b2nd_zeros`
//! and a `b2nd_set_slice_cbuffer` of the whole array (said in the header).
//!
//! The FFI wrappers check every box and buffer length before a call, so the
//! `unsafe` blocks rely only on the C prototypes (spelled out in their
//! `SAFETY` comments).

use std::ffi::{CString, c_char, c_int, c_void};
use std::path::PathBuf;

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
}

impl B2ndApi {
    /// Calls `blosc2_init` and takes the `b2nd.h` symbols.
    fn load(lib: &Lib) -> Result<B2ndApi, String> {
        let opt = |name: &str| lib.sym(name).ok();
        // SAFETY (every `func` and the transmute): the symbol is the
        // blosc2.h / b2nd.h 3.x function of that name, whose prototype the
        // target type spells out (`void blosc2_init(void)`, and the
        // prototypes on `CreateCtx`, `FreeFn`, `GetSlice`, `SetSlice`,
        // `FromCbuffer`, `ToCbuffer`, `Zeros`); data and function pointers
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
            })
        }
    }

    /// The optional calls this library lacks.
    fn missing(&self) -> Vec<&'static str> {
        let mut v = Vec::new();
        if self.from_cbuffer.is_none() {
            v.push("b2nd_from_cbuffer");
        }
        if self.to_cbuffer.is_none() {
            v.push("b2nd_to_cbuffer");
        }
        v
    }

    /// A `b2nd_create_ctx` for `layout`: in memory, not contiguous, BLOSCLZ
    /// clevel 5 shuffle, `nthreads` to compress and decompress.
    fn ctx<'a>(&'a self, layout: &'a Layout, nthreads: usize) -> Result<NdCtx<'a>, String> {
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
            layout,
            _params: (storage, cparams, dparams, dtype),
        })
    }
}

/// A `b2nd_context_t` of one library, freed on drop, with what it was made
/// from.
struct NdCtx<'a> {
    api: &'a B2ndApi,
    ptr: *mut c_void,
    layout: &'a Layout,
    _params: (Box<Storage>, Box<Cparams>, Box<Dparams>, CString),
}

impl Drop for NdCtx<'_> {
    fn drop(&mut self) {
        // SAFETY: `int b2nd_free_ctx(b2nd_context_t*)` on the context this
        // library made, once; every array borrowed it and is gone.
        unsafe { (self.api.free_ctx)(self.ptr) };
    }
}

/// A `b2nd_array_t` of one library, freed (`b2nd_free`) on drop.
struct NdArray<'c> {
    ctx: &'c NdCtx<'c>,
    ptr: *mut c_void,
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

    /// An array `b2nd_*` returned `rc` and `ptr` for.
    fn made(
        &'c self,
        ptr: *mut c_void,
        rc: c_int,
        call: impl Fn() -> String,
    ) -> Result<NdArray<'c>, String> {
        let a = (!ptr.is_null()).then_some(NdArray { ctx: self, ptr });
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
}

impl NdArray<'_> {
    fn layout(&self) -> &Layout {
        self.ctx.layout
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
        self.shape.iter().map(|&d| d as usize).product::<usize>() * self.itemsize
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
}

impl Op {
    const ALL: [Op; 6] = [
        Op::FromCbuffer,
        Op::ToCbuffer,
        Op::GetSmall,
        Op::GetBand,
        Op::GetColumns,
        Op::SetSmall,
    ];

    fn name(self) -> &'static str {
        match self {
            Op::FromCbuffer => "from_cbuffer",
            Op::ToCbuffer => "to_cbuffer",
            Op::GetSmall => "get_slice small",
            Op::GetBand => "get_slice band",
            Op::GetColumns => "get_slice columns",
            Op::SetSmall => "set_slice small",
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
    region: NdBox,
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
                .filter(move |&op| w.region(op).is_some())
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
            let Some(region) = w.region(op) else {
                continue;
            };
            eprintln!(
                "[{}/{}] {} {} {}",
                results.len() + 1,
                rows.len(),
                w.name(),
                op.name(),
                region.label()
            );
            let (samples, check) = measure_row(op, &region, &src, &ctxs, &arrays, &cfg);
            results.push(Measured {
                workload: w,
                op,
                bytes: region.items() * layout.itemsize,
                region,
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
    let mut ratios = Vec::new();
    let mut all_ok = true;
    for m in &results {
        let [o, c] = &m.samples;
        let ratio = match (o, c) {
            (Some(o), Some(c)) => {
                let r = o.speedup_over(c);
                ratios.push(r);
                format!("{r:.2}")
            }
            _ => "-".into(),
        };
        all_ok &= m.check.is_ok();
        table.push(vec![
            m.workload.name().into(),
            m.op.name().into(),
            m.region.label(),
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
    if !ratios.is_empty() {
        let geo = (ratios.iter().map(|r| r.ln()).sum::<f64>() / ratios.len() as f64).exp();
        let min = ratios.iter().copied().fold(f64::INFINITY, f64::min);
        let max = ratios.iter().copied().fold(0.0, f64::max);
        println!(
            "C/ours over the {} rows timed on both sides: geomean {geo:.2}, min {min:.2}, max \
             {max:.2}",
            ratios.len()
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

/// Checks one row on both sides, then times the sides whose calls worked.
fn measure_row(
    op: Op,
    region: &NdBox,
    src: &[u8],
    ctxs: &[NdCtx<'_>; 2],
    arrays: &[Result<NdArray<'_>, String>; 2],
    cfg: &Config,
) -> ([Option<Sample>; 2], Result<(), String>) {
    let layout = ctxs[0].layout;
    let (shape, item) = (&layout.shape, layout.itemsize);
    let whole = NdBox::whole(shape);
    let n = src.len();
    let mut check = Ok(());
    let mut fail = |s: usize, what: String| {
        if check.is_ok() {
            check = Err(format!("{}: {what}", WHO[s]));
        }
    };
    // Whether each side's call worked in the check (only those are timed).
    let mut works = [false; 2];
    let samples = match op {
        Op::FromCbuffer => {
            for s in 0..2 {
                match ctxs[s].array_from(src) {
                    Ok(a) => {
                        works[s] = true;
                        let mut out = vec![0xA5u8; n];
                        match a.get_slice(&whole, &mut out) {
                            Ok(()) if out == src => {}
                            Ok(()) => fail(s, differs("its array reads back", &out, src, item)),
                            Err(e) => fail(s, format!("reading its array back: {e}")),
                        }
                    }
                    Err(e) => fail(s, e),
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
            time_sides(cfg, side(0), side(1))
        }
        Op::ToCbuffer => {
            for s in 0..2 {
                let mut out = vec![0xA5u8; n];
                match arrays[s].as_ref().map(|a| a.to_cbuffer(&mut out)) {
                    Ok(Ok(())) => {
                        works[s] = true;
                        if out != src {
                            fail(s, differs("b2nd_to_cbuffer wrote", &out, src, item));
                        }
                    }
                    Ok(Err(e)) => fail(s, e),
                    Err(e) => fail(s, format!("no array ({e})")),
                }
            }
            let side = |s: usize| {
                let a = arrays[s].as_ref().ok().filter(|_| works[s])?;
                let mut out = vec![0u8; n];
                Some(Contestant::new(move || {
                    a.to_cbuffer(&mut out).expect("b2nd_to_cbuffer");
                }))
            };
            time_sides(cfg, side(0), side(1))
        }
        Op::GetSmall | Op::GetBand | Op::GetColumns => {
            let want = region.extract(src, shape, item);
            for s in 0..2 {
                let mut out = vec![0xA5u8; want.len()];
                match arrays[s].as_ref().map(|a| a.get_slice(region, &mut out)) {
                    Ok(Ok(())) => {
                        works[s] = true;
                        if out != want {
                            fail(
                                s,
                                differs("b2nd_get_slice_cbuffer wrote", &out, &want, item),
                            );
                        }
                    }
                    Ok(Err(e)) => fail(s, e),
                    Err(e) => fail(s, format!("no array ({e})")),
                }
            }
            let side = |s: usize| {
                let a = arrays[s].as_ref().ok().filter(|_| works[s])?;
                let mut out = vec![0u8; want.len()];
                Some(Contestant::new(move || {
                    a.get_slice(region, &mut out)
                        .expect("b2nd_get_slice_cbuffer");
                }))
            };
            time_sides(cfg, side(0), side(1))
        }
        Op::SetSmall => {
            // The box's values with their sign bit flipped (little-endian
            // floats: the top bit of each item's last byte).
            let mut new = region.extract(src, shape, item);
            for v in new.chunks_mut(item) {
                v[item - 1] ^= 0x80;
            }
            let mut want = src.to_vec();
            region.insert(&mut want, shape, item, &new);
            // Arrays of their own: the read rows' stay as built.
            let mut fresh = [ctxs[0].build(src), ctxs[1].build(src)];
            let mut back: [Option<Vec<u8>>; 2] = [None, None];
            for s in 0..2 {
                let a = match &mut fresh[s] {
                    Ok(a) => a,
                    Err(e) => {
                        fail(s, format!("no array ({e})"));
                        continue;
                    }
                };
                if let Err(e) = a.set_slice(region, &new) {
                    fail(s, e);
                    continue;
                }
                works[s] = true;
                let mut out = vec![0xA5u8; n];
                match a.get_slice(&whole, &mut out) {
                    Ok(()) if out == want => back[s] = Some(out),
                    Ok(()) => fail(
                        s,
                        differs("after set_slice it reads back", &out, &want, item),
                    ),
                    Err(e) => fail(s, format!("reading back after set_slice: {e}")),
                }
            }
            if let [Some(a), Some(b)] = &back
                && a != b
            {
                fail(0, "reads back other bytes than C after set_slice".into());
            }
            let [f0, f1] = &mut fresh;
            let new = &new;
            let set = |a: &mut NdArray<'_>| {
                a.set_slice(region, new).expect("b2nd_set_slice_cbuffer");
            };
            let c0 = f0.as_mut().ok().filter(|_| works[0]);
            let c1 = f1.as_mut().ok().filter(|_| works[1]);
            time_sides(
                cfg,
                c0.map(|a| Contestant::new(move || set(a))),
                c1.map(|a| Contestant::new(move || set(a))),
            )
        }
    };
    (samples, check)
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
                    assert_eq!((w, op), (Workload::Points, Op::GetColumns));
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
    }
}
