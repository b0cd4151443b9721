//! `capi`: the same C calls through our C libraries and through the real
//! ones, side by side.
//!
//! Three shared libraries are opened with `dlopen(RTLD_NOW | RTLD_LOCAL |
//! RTLD_DEEPBIND)`, so that each binds its own calls to its own symbols
//! (none to another library's, nor to the static C-Blosc2 2.15 linked into
//! this binary):
//!
//! - **ours**: `target/release/libblosc2.so` of `oxiblosc-capi` (both ABIs,
//!   `blosc2_*` and `blosc_*`, in one file; built with `cargo build
//!   --release -p oxiblosc-capi` first unless `--ours PATH` is given);
//! - **C-Blosc2 3.3.5**: `libblosc2.so` of python-blosc2 4.14.1's wheel in
//!   `target/pydeps` (installed when missing, as for the main job);
//! - **C-Blosc 1.21**: Debian's `libblosc.so.1` (package libblosc1,
//!   installed by `.ci/prereqs.sh`).
//!
//! Every timed call goes through a function pointer from `dlsym` on both
//! sides, on the same buffers, interleaved (`timing`): `blosc2_compress_ctx`,
//! `blosc2_decompress_ctx`, `blosc2_getitem_ctx` (a context made once per
//! row, as an application would) and the Blosc1 API's `blosc_compress`,
//! `blosc_decompress`, `blosc_getitem` (global settings, set once per row
//! with `blosc_set_compressor` / `blosc_set_nthreads`). Before timing, each
//! row checks that each library decodes its own and the other's chunk to
//! the input, and that getitem returns the right items.
//!
//! The FFI wrappers here check every buffer length before the call, so the
//! `unsafe` blocks only rely on the C prototypes (each spelled out in its
//! `SAFETY` comment).

use std::ffi::{CStr, CString, c_char, c_int, c_void};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::chunks::{Workload, output_path};
use crate::kernels::size_label;
use crate::table::Table;
use crate::timing::{self, Clock, Config, Contestant, Sample};

/// `blosc2_cparams` of C-Blosc2 3.x's `blosc2.h`, field for field (made
/// with [`Cparams::new`]; `b2nd` reuses it for its `blosc2_storage`).
#[repr(C)]
pub(crate) struct Cparams {
    compcode: u8,
    compcode_meta: u8,
    clevel: u8,
    use_dict: c_int,
    typesize: i32,
    nthreads: i16,
    blocksize: i32,
    splitmode: i32,
    schunk: *mut c_void,
    filters: [u8; 6],
    filters_meta: [u8; 6],
    prefilter: *mut c_void,
    preparams: *mut c_void,
    tuner_params: *mut c_void,
    tuner_id: c_int,
    instr_codec: bool,
    codec_params: *mut c_void,
    filter_params: [*mut c_void; 6],
}

/// `blosc2_dparams` of C-Blosc2 3.x's `blosc2.h` (with its trailing
/// `typesize`; made with [`Dparams::new`]).
#[repr(C)]
pub(crate) struct Dparams {
    nthreads: i16,
    schunk: *mut c_void,
    postfilter: *mut c_void,
    postparams: *mut c_void,
    typesize: i32,
}

// The sizes gcc gives the two structs for x86-64 / aarch64 (LP64).
const _: () = assert!(std::mem::size_of::<Cparams>() == 136);
const _: () = assert!(std::mem::size_of::<Dparams>() == 40);

impl Cparams {
    /// Compression parameters with one filter (in the last of the six
    /// slots, as python-blosc2 puts it), `BLOSC_AUTO_SPLIT` (python-blosc2's
    /// default), the block size left to the library, no callbacks and no
    /// pointers.
    pub(crate) fn new(
        codec: CCodec,
        clevel: u8,
        filter: CFilter,
        typesize: i32,
        nthreads: i16,
    ) -> Cparams {
        let mut filters = [0u8; 6];
        filters[5] = filter.code();
        Cparams {
            compcode: codec.code(),
            compcode_meta: 0,
            clevel,
            use_dict: 0,
            typesize,
            nthreads,
            blocksize: 0,
            splitmode: 3, // BLOSC_AUTO_SPLIT, python-blosc2's default
            schunk: std::ptr::null_mut(),
            filters,
            filters_meta: [0; 6],
            prefilter: std::ptr::null_mut(),
            preparams: std::ptr::null_mut(),
            tuner_params: std::ptr::null_mut(),
            tuner_id: 0,
            instr_codec: false,
            codec_params: std::ptr::null_mut(),
            filter_params: [std::ptr::null_mut(); 6],
        }
    }
}

impl Dparams {
    /// Decompression parameters: `nthreads`, no callbacks, no pointers.
    pub(crate) fn new(nthreads: i16) -> Dparams {
        Dparams {
            nthreads,
            schunk: std::ptr::null_mut(),
            postfilter: std::ptr::null_mut(),
            postparams: std::ptr::null_mut(),
            typesize: 0,
        }
    }
}

type CtxCall = unsafe extern "C" fn(*mut c_void, *const c_void, i32, *mut c_void, i32) -> c_int;
type GetitemCtx =
    unsafe extern "C" fn(*mut c_void, *const c_void, i32, c_int, c_int, *mut c_void, i32) -> c_int;

/// The `blosc2.h` calls this mode times, from one library.
struct Blosc2Api {
    create_cctx: unsafe extern "C" fn(Cparams) -> *mut c_void,
    create_dctx: unsafe extern "C" fn(Dparams) -> *mut c_void,
    free_ctx: unsafe extern "C" fn(*mut c_void),
    compress_ctx: CtxCall,
    decompress_ctx: CtxCall,
    getitem_ctx: GetitemCtx,
    set_maskout: unsafe extern "C" fn(*mut c_void, *mut bool, c_int) -> c_int,
}

/// The `blosc.h` (C-Blosc 1.x) calls this mode times, from one library.
struct Blosc1Api {
    set_nthreads: unsafe extern "C" fn(c_int) -> c_int,
    set_compressor: unsafe extern "C" fn(*const c_char) -> c_int,
    compress: unsafe extern "C" fn(
        c_int,
        c_int,
        usize,
        usize,
        *const c_void,
        *mut c_void,
        usize,
    ) -> c_int,
    decompress: unsafe extern "C" fn(*const c_void, *mut c_void, usize) -> c_int,
    getitem: unsafe extern "C" fn(*const c_void, c_int, c_int, *mut c_void) -> c_int,
}

/// A library opened for good (the handle is never closed, so the function
/// pointers taken from it live until exit).
pub(crate) struct Lib {
    /// The path it was opened from, for messages.
    pub(crate) path: String,
    handle: *mut c_void,
}

impl Lib {
    /// `dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND)`.
    ///
    /// # Errors
    /// dlopen's message.
    pub(crate) fn open(path: &Path) -> Result<Lib, String> {
        let shown = path.display().to_string();
        let c = CString::new(path.as_os_str().as_encoded_bytes())
            .map_err(|_| format!("bad path {shown:?}"))?;
        // SAFETY: `c` is NUL-terminated; RTLD_LOCAL | RTLD_DEEPBIND keep the
        // library's symbols to itself and its calls bound to its own
        // symbols. Its initialisers run here, as in any program linking it.
        let handle = unsafe {
            libc::dlopen(
                c.as_ptr(),
                libc::RTLD_NOW | libc::RTLD_LOCAL | libc::RTLD_DEEPBIND,
            )
        };
        if handle.is_null() {
            // SAFETY: dlerror returns null or a NUL-terminated string valid
            // until the next dl* call on this thread.
            let why = unsafe {
                let e = libc::dlerror();
                if e.is_null() {
                    String::new()
                } else {
                    CStr::from_ptr(e).to_string_lossy().into_owned()
                }
            };
            return Err(format!("cannot open {shown}: {why}"));
        }
        Ok(Lib {
            path: shown,
            handle,
        })
    }

    /// The address of the symbol `name` (`dlsym`).
    ///
    /// # Errors
    /// The library has no such symbol.
    pub(crate) fn sym(&self, name: &str) -> Result<*mut c_void, String> {
        let c = CString::new(name).expect("no NUL in symbol names");
        // SAFETY: `handle` is a live dlopen handle, `c` is NUL-terminated.
        let p = unsafe { libc::dlsym(self.handle, c.as_ptr()) };
        if p.is_null() {
            Err(format!("{} has no symbol {name}", self.path))
        } else {
            Ok(p)
        }
    }

    /// `const char *NAME(void)` called once, as a string.
    pub(crate) fn version(&self, name: &str) -> Result<String, String> {
        let f = self.sym(name)?;
        // SAFETY: `blosc2_get_version_string` and `blosc_get_version_string`
        // are `const char *(void)` returning a static NUL-terminated string.
        let s = unsafe {
            let f: unsafe extern "C" fn() -> *const c_char = std::mem::transmute(f);
            let p = f();
            if p.is_null() {
                return Err(format!("{}: {name} returned NULL", self.path));
            }
            CStr::from_ptr(p).to_string_lossy().into_owned()
        };
        Ok(s)
    }

    fn blosc2(&self) -> Result<Blosc2Api, String> {
        // SAFETY (every transmute): the symbol is the blosc2.h 3.x function
        // of that name, whose prototype the target type spells out:
        // `void blosc2_init(void)`, `blosc2_context*
        // blosc2_create_cctx(blosc2_cparams)`, `blosc2_context*
        // blosc2_create_dctx(blosc2_dparams)`, `void
        // blosc2_free_ctx(blosc2_context*)`, `int
        // blosc2_{de,}compress_ctx(blosc2_context*, const void*, int32_t,
        // void*, int32_t)`, `int blosc2_getitem_ctx(blosc2_context*, const
        // void*, int32_t, int, int, void*, int32_t)`, `int
        // blosc2_set_maskout(blosc2_context*, bool*, int)`; data and
        // function pointers have the same size wherever dlsym exists.
        unsafe {
            let init: unsafe extern "C" fn() = std::mem::transmute(self.sym("blosc2_init")?);
            init();
            Ok(Blosc2Api {
                create_cctx: func(self.sym("blosc2_create_cctx")?),
                create_dctx: func(self.sym("blosc2_create_dctx")?),
                free_ctx: func(self.sym("blosc2_free_ctx")?),
                compress_ctx: func(self.sym("blosc2_compress_ctx")?),
                decompress_ctx: func(self.sym("blosc2_decompress_ctx")?),
                getitem_ctx: func(self.sym("blosc2_getitem_ctx")?),
                set_maskout: func(self.sym("blosc2_set_maskout")?),
            })
        }
    }

    fn blosc1(&self) -> Result<Blosc1Api, String> {
        // SAFETY (every transmute): the symbol is the blosc.h 1.21 function
        // of that name, whose prototype the target type spells out: `void
        // blosc_init(void)`, `int blosc_set_nthreads(int)`, `int
        // blosc_set_compressor(const char*)`, `int blosc_compress(int, int,
        // size_t, size_t, const void*, void*, size_t)`, `int
        // blosc_decompress(const void*, void*, size_t)`, `int
        // blosc_getitem(const void*, int, int, void*)`.
        unsafe {
            let init: unsafe extern "C" fn() = std::mem::transmute(self.sym("blosc_init")?);
            init();
            Ok(Blosc1Api {
                set_nthreads: func(self.sym("blosc_set_nthreads")?),
                set_compressor: func(self.sym("blosc_set_compressor")?),
                compress: func(self.sym("blosc_compress")?),
                decompress: func(self.sym("blosc_decompress")?),
                getitem: func(self.sym("blosc_getitem")?),
            })
        }
    }
}

/// A symbol's address as the function pointer type `F`.
///
/// # Safety
/// `F` is a function pointer type matching the symbol's C prototype.
pub(crate) unsafe fn func<F: Copy>(p: *mut c_void) -> F {
    assert_eq!(std::mem::size_of::<F>(), std::mem::size_of::<*mut c_void>());
    // SAFETY: same size (checked); the caller's contract for the type.
    unsafe { std::mem::transmute_copy(&p) }
}

/// A `blosc2_context` of one library, freed on drop.
struct Ctx<'a> {
    api: &'a Blosc2Api,
    ptr: *mut c_void,
}

impl Drop for Ctx<'_> {
    fn drop(&mut self) {
        // SAFETY: `ptr` came from this library's create_cctx/create_dctx
        // and is freed once.
        unsafe { (self.api.free_ctx)(self.ptr) }
    }
}

fn len_i32(n: usize) -> Result<i32, String> {
    i32::try_from(n).map_err(|_| format!("{n} bytes is beyond the int32 API"))
}

/// The larger of a chunk's `cbytes` (header bytes 12..16) and 16, if
/// `chunk` holds that many bytes: what the C calls that take no size read.
fn whole_chunk(chunk: &[u8]) -> Result<(), String> {
    let cbytes = chunk
        .get(12..16)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
        .ok_or("chunk shorter than its header")?;
    if cbytes < 16 || cbytes > chunk.len() {
        return Err(format!(
            "chunk of {} bytes says cbytes {cbytes}",
            chunk.len()
        ));
    }
    Ok(())
}

/// The chunk's nbytes (header bytes 4..8).
fn chunk_nbytes(chunk: &[u8]) -> usize {
    u32::from_le_bytes([chunk[4], chunk[5], chunk[6], chunk[7]]) as usize
}

impl Blosc2Api {
    fn cctx(&self, row: &Row) -> Result<Ctx<'_>, String> {
        let cp = Cparams::new(
            row.codec,
            row.clevel,
            row.filter,
            len_i32(row.workload.typesize())?,
            row.nthreads as i16,
        );
        // SAFETY: a complete cparams by value; no callbacks, no pointers.
        let ptr = unsafe { (self.create_cctx)(cp) };
        if ptr.is_null() {
            return Err("blosc2_create_cctx returned NULL".into());
        }
        Ok(Ctx { api: self, ptr })
    }

    fn dctx(&self, nthreads: usize) -> Result<Ctx<'_>, String> {
        let dp = Dparams::new(nthreads as i16);
        // SAFETY: a complete dparams by value; no callbacks, no pointers.
        let ptr = unsafe { (self.create_dctx)(dp) };
        if ptr.is_null() {
            return Err("blosc2_create_dctx returned NULL".into());
        }
        Ok(Ctx { api: self, ptr })
    }
}

impl Ctx<'_> {
    fn compress(&mut self, src: &[u8], dst: &mut [u8]) -> Result<usize, String> {
        let (n, d) = (len_i32(src.len())?, len_i32(dst.len())?);
        // SAFETY: src has n readable bytes, dst d writable ones, both live
        // for the call; the context is this library's.
        let r = unsafe {
            (self.api.compress_ctx)(self.ptr, src.as_ptr().cast(), n, dst.as_mut_ptr().cast(), d)
        };
        usize::try_from(r)
            .ok()
            .filter(|&r| r > 0)
            .ok_or(format!("blosc2_compress_ctx: {r}"))
    }

    fn decompress(&mut self, src: &[u8], dst: &mut [u8]) -> Result<usize, String> {
        let (n, d) = (len_i32(src.len())?, len_i32(dst.len())?);
        // SAFETY: as in `compress`; the call reads at most `n` bytes.
        let r = unsafe {
            (self.api.decompress_ctx)(self.ptr, src.as_ptr().cast(), n, dst.as_mut_ptr().cast(), d)
        };
        usize::try_from(r).map_err(|_| format!("blosc2_decompress_ctx: {r}"))
    }

    /// `blosc2_set_maskout` with `mask`, then `blosc2_decompress_ctx`.
    fn decompress_masked(
        &mut self,
        src: &[u8],
        mask: &mut [bool],
        dst: &mut [u8],
    ) -> Result<usize, String> {
        let m = len_i32(mask.len())?;
        // SAFETY: mask holds m flags, live for the call (C copies them).
        let r = unsafe { (self.api.set_maskout)(self.ptr, mask.as_mut_ptr(), m) };
        if r != 0 {
            return Err(format!("blosc2_set_maskout: {r}"));
        }
        self.decompress(src, dst)
    }

    fn getitem(
        &mut self,
        src: &[u8],
        start: usize,
        nitems: usize,
        dst: &mut [u8],
    ) -> Result<usize, String> {
        let (n, d) = (len_i32(src.len())?, len_i32(dst.len())?);
        let (s, k) = (len_i32(start)?, len_i32(nitems)?);
        // SAFETY: as in `decompress`; the call writes at most `d` bytes.
        let r = unsafe {
            (self.api.getitem_ctx)(
                self.ptr,
                src.as_ptr().cast(),
                n,
                s,
                k,
                dst.as_mut_ptr().cast(),
                d,
            )
        };
        usize::try_from(r).map_err(|_| format!("blosc2_getitem_ctx: {r}"))
    }
}

impl Blosc1Api {
    fn settings(&self, row: &Row) -> Result<(), String> {
        let name = CString::new(row.codec.name()).expect("no NUL");
        // SAFETY: `name` is NUL-terminated; both calls only set globals.
        let (a, b) = unsafe {
            (
                (self.set_compressor)(name.as_ptr()),
                (self.set_nthreads)(row.nthreads as c_int),
            )
        };
        if a < 0 || b < 0 {
            return Err(format!(
                "blosc_set_compressor({}) / blosc_set_nthreads: {a} / {b}",
                row.codec.name()
            ));
        }
        Ok(())
    }

    fn compress(&self, row: &Row, src: &[u8], dst: &mut [u8]) -> Result<usize, String> {
        let doshuffle = c_int::from(row.filter.code());
        // SAFETY: src has src.len() readable bytes, dst dst.len() writable
        // ones; blosc_compress writes at most destsize bytes.
        let r = unsafe {
            (self.compress)(
                c_int::from(row.clevel),
                doshuffle,
                row.workload.typesize(),
                src.len(),
                src.as_ptr().cast(),
                dst.as_mut_ptr().cast(),
                dst.len(),
            )
        };
        usize::try_from(r)
            .ok()
            .filter(|&r| r > 0)
            .ok_or(format!("blosc_compress: {r}"))
    }

    fn decompress(&self, src: &[u8], dst: &mut [u8]) -> Result<usize, String> {
        whole_chunk(src)?;
        // SAFETY: src holds the whole chunk its header describes (checked
        // above); dst has dst.len() writable bytes, which the call honours.
        let r =
            unsafe { (self.decompress)(src.as_ptr().cast(), dst.as_mut_ptr().cast(), dst.len()) };
        usize::try_from(r).map_err(|_| format!("blosc_decompress: {r}"))
    }

    fn getitem(
        &self,
        src: &[u8],
        start: usize,
        nitems: usize,
        ts: usize,
        dst: &mut [u8],
    ) -> Result<usize, String> {
        whole_chunk(src)?;
        if nitems * ts > dst.len() || (start + nitems) * ts > chunk_nbytes(src) {
            return Err("getitem out of range".into());
        }
        let (s, k) = (len_i32(start)?, len_i32(nitems)?);
        // SAFETY: src holds its whole chunk; dst has room for the nitems *
        // typesize bytes blosc_getitem writes (checked above).
        let r = unsafe { (self.getitem)(src.as_ptr().cast(), s, k, dst.as_mut_ptr().cast()) };
        usize::try_from(r).map_err(|_| format!("blosc_getitem: {r}"))
    }
}

/// A codec of both APIs (the Blosc codes and names of the headers).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CCodec {
    /// `BLOSC_BLOSCLZ`
    BloscLz,
    /// `BLOSC_LZ4`
    Lz4,
    /// `BLOSC_ZLIB`
    Zlib,
    /// `BLOSC_ZSTD`
    Zstd,
}

impl CCodec {
    const ALL: [CCodec; 4] = [CCodec::BloscLz, CCodec::Lz4, CCodec::Zlib, CCodec::Zstd];

    fn code(self) -> u8 {
        match self {
            CCodec::BloscLz => 0,
            CCodec::Lz4 => 1,
            CCodec::Zlib => 4,
            CCodec::Zstd => 5,
        }
    }

    /// The name `blosc_set_compressor` takes.
    pub fn name(self) -> &'static str {
        match self {
            CCodec::BloscLz => "blosclz",
            CCodec::Lz4 => "lz4",
            CCodec::Zlib => "zlib",
            CCodec::Zstd => "zstd",
        }
    }

    /// Parses [`CCodec::name`].
    pub fn parse(s: &str) -> Option<CCodec> {
        CCodec::ALL.into_iter().find(|c| c.name() == s)
    }
}

/// The filter (Blosc1's `doshuffle`, Blosc2's last filter slot).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CFilter {
    /// `BLOSC_SHUFFLE`
    Shuffle,
    /// `BLOSC_BITSHUFFLE`
    BitShuffle,
}

impl CFilter {
    fn code(self) -> u8 {
        match self {
            CFilter::Shuffle => 1,
            CFilter::BitShuffle => 2,
        }
    }

    fn name(self) -> &'static str {
        match self {
            CFilter::Shuffle => "shuffle",
            CFilter::BitShuffle => "bitshuffle",
        }
    }
}

/// Which header's calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Api {
    /// `blosc2_{compress,decompress,getitem}_ctx` (libblosc2).
    Blosc2,
    /// `blosc_{compress,decompress,getitem}` (libblosc.so.1).
    Blosc1,
}

impl Api {
    fn name(self) -> &'static str {
        match self {
            Api::Blosc2 => "blosc2_*_ctx",
            Api::Blosc1 => "blosc_*",
        }
    }

    /// `blosc2` or `blosc1`.
    pub fn parse(s: &str) -> Option<Api> {
        match s {
            "blosc2" => Some(Api::Blosc2),
            "blosc1" => Some(Api::Blosc1),
            _ => None,
        }
    }
}

/// One configuration, timed for compress, decompress and getitem.
#[derive(Clone, Copy, Debug)]
struct Row {
    api: Api,
    codec: CCodec,
    clevel: u8,
    filter: CFilter,
    workload: Workload,
    size: usize,
    nthreads: usize,
}

/// What to run.
#[derive(Clone, Debug)]
pub struct Options {
    /// APIs (both by default).
    pub apis: Vec<Api>,
    /// Codecs.
    pub codecs: Vec<CCodec>,
    /// Compression level.
    pub clevel: u8,
    /// Workloads (one typesize each).
    pub workloads: Vec<Workload>,
    /// Chunk sizes.
    pub sizes: Vec<usize>,
    /// Threads for both libraries.
    pub nthreads: usize,
    /// Rounds and their length.
    pub timing: Config,
    /// Our `libblosc2.so` (None: build it and take target/release's).
    pub ours: Option<PathBuf>,
    /// C-Blosc2 3.x (None: python-blosc2's in target/pydeps).
    pub c_blosc2: Option<PathBuf>,
    /// C-Blosc 1.x (None: Debian's libblosc.so.1).
    pub c_blosc1: Option<PathBuf>,
    /// Where the CSV goes.
    pub csv: Option<PathBuf>,
}

impl Options {
    /// The default grid (`quick`: fewer rows, shorter rounds).
    pub fn new(quick: bool) -> Options {
        Options {
            apis: vec![Api::Blosc2, Api::Blosc1],
            codecs: if quick {
                vec![CCodec::BloscLz, CCodec::Lz4]
            } else {
                vec![CCodec::BloscLz, CCodec::Lz4, CCodec::Zlib, CCodec::Zstd]
            },
            clevel: 5,
            workloads: vec![Workload::Sine, Workload::Linspace],
            sizes: if quick {
                vec![32 << 10, 1 << 20]
            } else {
                vec![32 << 10, 256 << 10, 4 << 20]
            },
            nthreads: 1,
            timing: if quick {
                Config::quick()
            } else {
                Config {
                    rounds: 7,
                    target: std::time::Duration::from_millis(10),
                    clock: Clock::best(),
                }
            },
            ours: None,
            c_blosc2: None,
            c_blosc1: None,
            csv: Some(output_path("capi.csv", false)),
        }
    }

    fn rows(&self) -> Vec<Row> {
        let mut v = Vec::new();
        for &api in &self.apis {
            for &codec in &self.codecs {
                for filter in [CFilter::Shuffle, CFilter::BitShuffle] {
                    for &workload in &self.workloads {
                        for &size in &self.sizes {
                            v.push(Row {
                                api,
                                codec,
                                clevel: self.clevel,
                                filter,
                                workload,
                                size,
                                nthreads: self.nthreads,
                            });
                        }
                    }
                }
            }
        }
        v
    }
}

/// Debian's `libblosc.so.1` (C-Blosc 1.21).
const DEBIAN_BLOSC1: &str = "/usr/lib/x86_64-linux-gnu/libblosc.so.1";

/// Our `libblosc2.so`: `cargo build --release -p oxiblosc-capi` (a no-op
/// when fresh), then `<repo>/target/release/libblosc2.so`.
///
/// # Errors
/// cargo cannot be run or fails, or the library is missing afterwards.
pub(crate) fn build_ours() -> Result<PathBuf, String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    eprintln!("cargo build --release -p oxiblosc-capi (our libblosc2.so)");
    let st = Command::new(cargo)
        .args(["build", "--release", "-p", "oxiblosc-capi"])
        .current_dir(crate::pydeps::repo())
        .status()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !st.success() {
        return Err("cargo build --release -p oxiblosc-capi failed".into());
    }
    let lib = crate::pydeps::target_dir().join("release/libblosc2.so");
    if !lib.exists() {
        return Err(format!("{} is missing after the build", lib.display()));
    }
    Ok(lib)
}

/// Items getitem asks for: 4 KiB worth from the middle of the chunk.
fn getitem_span(size: usize, ts: usize) -> (usize, usize) {
    let n = size / ts;
    let k = (4096 / ts).min(n);
    ((n - k) / 2, k)
}

/// One row's result.
struct Measured {
    /// Per op: ours through the C ABI, C, and (Blosc2 rows) our engine
    /// called directly in Rust, then (Blosc2 decompress and getitem) ours
    /// through the C ABI on C's chunk.
    samples: [Vec<Sample>; 3],
    csize: [usize; 2],
    /// Both libraries wrote the same bytes.
    same_chunk: bool,
    check: Result<(), String>,
}

/// The two sides of one API.
enum Pair<'a> {
    Two([&'a Blosc2Api; 2]),
    One([&'a Blosc1Api; 2]),
}

/// Runs every row; returns whether every check passed.
///
/// # Errors
/// A library cannot be found, built or opened.
pub fn run(opts: &Options) -> Result<bool, String> {
    let ours_path = match &opts.ours {
        Some(p) => p.clone(),
        None => build_ours()?,
    };
    let c2_path = match &opts.c_blosc2 {
        Some(p) => p.clone(),
        None => crate::pydeps::libblosc2()?,
    };
    let c1_path = opts
        .c_blosc1
        .clone()
        .unwrap_or_else(|| PathBuf::from(DEBIAN_BLOSC1));
    let need2 = opts.apis.contains(&Api::Blosc2);
    let need1 = opts.apis.contains(&Api::Blosc1);

    let ours = Lib::open(&ours_path)?;
    println!(
        "- ours: `{}` (blosc2.h {}, blosc.h {})",
        ours.path,
        ours.version("blosc2_get_version_string")?,
        ours.version("blosc_get_version_string")?
    );
    let (ours2, c2) = if need2 {
        let c2 = Lib::open(&c2_path)?;
        println!(
            "- C-Blosc2 {}: `{}`",
            c2.version("blosc2_get_version_string")?,
            c2.path
        );
        (Some(ours.blosc2()?), Some(c2.blosc2()?))
    } else {
        (None, None)
    };
    let (ours1, c1) = if need1 {
        let c1 = Lib::open(&c1_path).map_err(|e| {
            format!("{e}\n(C-Blosc 1.x: install Debian's libblosc1, or give --c-blosc1 PATH)")
        })?;
        println!(
            "- C-Blosc {}: `{}`",
            c1.version("blosc_get_version_string")?,
            c1.path
        );
        (Some(ours.blosc1()?), Some(c1.blosc1()?))
    } else {
        (None, None)
    };
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
        "- {} rounds of >= {} ms per contestant, interleaved, {} clock; nthreads {}; clevel {}",
        cfg.rounds,
        cfg.target.as_millis(),
        clock.name(),
        opts.nthreads,
        opts.clevel
    );
    println!();

    let mut table = Table::new([
        "api",
        "codec",
        "filter",
        "workload",
        "size",
        "op",
        "ours µs",
        "C µs",
        "ours GB/s",
        "C GB/s",
        "ours/C speed",
        "C ABI/engine speed",
        "ours/C on C's chunk",
        "same chunk",
        "ours ratio",
        "C ratio",
        "check",
    ]);
    let rows = opts.rows();
    let mut all_ok = true;
    let mut speedups: Vec<(Api, usize, f64, Option<f64>)> = Vec::new();
    for (i, row) in rows.iter().enumerate() {
        eprintln!(
            "[{}/{}] {} {} {} {} {}",
            i + 1,
            rows.len(),
            row.api.name(),
            row.codec.name(),
            row.filter.name(),
            row.workload.name(),
            size_label(row.size)
        );
        let pair = match row.api {
            Api::Blosc2 => Pair::Two([
                ours2.as_ref().expect("loaded"),
                c2.as_ref().expect("loaded"),
            ]),
            Api::Blosc1 => Pair::One([
                ours1.as_ref().expect("loaded"),
                c1.as_ref().expect("loaded"),
            ]),
        };
        let m = measure_row(row, &pair, &cfg)?;
        let ts = row.workload.typesize();
        let (_, k) = getitem_span(row.size, ts);
        for (op, name) in ["compress", "decompress", "getitem"].iter().enumerate() {
            let (o, c) = (&m.samples[op][0], &m.samples[op][1]);
            let ffi_x = m.samples[op].get(2).map(|e| o.speedup_over(e));
            let ffi = ffi_x.map_or("-".to_owned(), |x| format!("{x:.2}"));
            let on_c = m.samples[op]
                .get(3)
                .map_or("-".to_owned(), |x| format!("{:.2}", x.speedup_over(c)));
            let bytes = if op == 2 { k * ts } else { row.size };
            let sp = o.speedup_over(c);
            speedups.push((row.api, op, sp, ffi_x));
            table.push(vec![
                row.api.name().into(),
                row.codec.name().into(),
                row.filter.name().into(),
                row.workload.name().into(),
                size_label(row.size),
                (*name).into(),
                format!("{:.1}", o.median * 1e6),
                format!("{:.1}", c.median * 1e6),
                format!("{:.2}", o.gbps(bytes)),
                format!("{:.2}", c.gbps(bytes)),
                format!("{sp:.2}"),
                ffi,
                on_c,
                if m.same_chunk { "yes" } else { "no" }.into(),
                format!("{:.2}", row.size as f64 / m.csize[0] as f64),
                format!("{:.2}", row.size as f64 / m.csize[1] as f64),
                match &m.check {
                    Ok(()) => "ok".into(),
                    Err(e) => format!("MISMATCH: {e}"),
                },
            ]);
        }
        all_ok &= m.check.is_ok();
    }
    println!("{}", table.markdown());
    println!(
        "ours/C speed: above 1, ours is faster (median of the per-round ratios). C ABI/engine \
         speed: our library through its C ABI against our engine called in Rust (same \
         chunk; 1.00: the FFI layer costs nothing). ours/C on C's chunk: ours decoding C's \
         chunk against C decoding it (Blosc2 rows; the decoders alone, whatever each encoder \
         chose). same chunk: both libraries wrote the same bytes."
    );
    println!();
    let mut summary = Table::new([
        "api",
        "op",
        "rows",
        "geomean ours/C",
        "min ours/C",
        "max ours/C",
        "geomean C ABI/engine",
    ]);
    for api in [Api::Blosc2, Api::Blosc1] {
        for (op, name) in ["compress", "decompress", "getitem"].iter().enumerate() {
            let v: Vec<f64> = speedups
                .iter()
                .filter(|s| s.0 == api && s.1 == op)
                .map(|s| s.2)
                .collect();
            if v.is_empty() {
                continue;
            }
            let geo = geomean(&v);
            let ffi: Vec<f64> = speedups
                .iter()
                .filter(|s| s.0 == api && s.1 == op)
                .filter_map(|s| s.3)
                .collect();
            let min = v.iter().copied().fold(f64::INFINITY, f64::min);
            let max = v.iter().copied().fold(0.0, f64::max);
            summary.push(vec![
                api.name().into(),
                (*name).into(),
                v.len().to_string(),
                format!("{geo:.2}"),
                format!("{min:.2}"),
                format!("{max:.2}"),
                if ffi.is_empty() {
                    "-".into()
                } else {
                    format!("{:.2}", geomean(&ffi))
                },
            ]);
        }
    }
    println!("{}", summary.markdown());
    if let Some(csv) = &opts.csv {
        table
            .write_csv(csv)
            .map_err(|e| format!("cannot write {}: {e}", csv.display()))?;
        println!("CSV: {}", csv.display());
    }
    if let (Some(o), Some(c)) = (&ours2, &c2) {
        all_ok &= masked_rows(opts, [o, c], &cfg)?;
    }
    Ok(all_ok)
}

/// Block masks: `blosc2_set_maskout` keeping one block in four, then
/// `blosc2_decompress_ctx`, by both libraries on C-Blosc2's chunk (shuffle,
/// chunks of 256 KiB and more); its own table and `capi-masked.csv`.
fn masked_rows(opts: &Options, apis: [&Blosc2Api; 2], cfg: &Config) -> Result<bool, String> {
    let mut table = Table::new([
        "codec",
        "workload",
        "size",
        "blocks kept",
        "ours µs",
        "C µs",
        "ours/C speed",
        "check",
    ]);
    let mut all_ok = true;
    for &codec in &opts.codecs {
        for &workload in &opts.workloads {
            for &size in opts.sizes.iter().filter(|&&s| s >= 256 << 10) {
                let row = Row {
                    api: Api::Blosc2,
                    codec,
                    clevel: opts.clevel,
                    filter: CFilter::Shuffle,
                    workload,
                    size,
                    nthreads: opts.nthreads,
                };
                let src = workload.generate(size);
                let mut chunk = vec![0u8; size + 64];
                let n = apis[1].cctx(&row)?.compress(&src, &mut chunk)?;
                chunk.truncate(n);
                let bs = u32::from_le_bytes(chunk[8..12].try_into().expect("4 bytes")) as usize;
                let bs = bs.clamp(1, size);
                let mask: Vec<bool> = (0..size.div_ceil(bs)).map(|i| i % 4 != 0).collect();
                let mut dctx = [apis[0].dctx(row.nthreads)?, apis[1].dctx(row.nthreads)?];
                let mut check = Ok(());
                for (d, ctx) in dctx.iter_mut().enumerate() {
                    let mut out = vec![0xA5u8; size];
                    let r = ctx.decompress_masked(&chunk, &mut mask.clone(), &mut out);
                    let blocks = out.chunks(bs).zip(src.chunks(bs)).enumerate();
                    let right = blocks.into_iter().all(|(i, (o, w))| {
                        !mask[i] && o == w || mask[i] && o.iter().all(|&b| b == 0xA5)
                    });
                    if (r != Ok(size) || !right) && check.is_ok() {
                        check = Err(format!(
                            "{}: {r:?}, blocks right: {right}",
                            ["ours", "C"][d]
                        ));
                    }
                }
                let [d0, d1] = &mut dctx;
                let (mut m0, mut m1) = (mask.clone(), mask.clone());
                let (mut o0, mut o1) = (vec![0u8; size], vec![0u8; size]);
                let t = timing::measure(
                    cfg,
                    &mut [
                        Contestant::new(|| {
                            d0.decompress_masked(&chunk, &mut m0, &mut o0)
                                .expect("masked");
                        }),
                        Contestant::new(|| {
                            d1.decompress_masked(&chunk, &mut m1, &mut o1)
                                .expect("masked");
                        }),
                    ],
                );
                all_ok &= check.is_ok();
                table.push(vec![
                    codec.name().into(),
                    workload.name().into(),
                    size_label(size),
                    format!("{} of {}", mask.iter().filter(|&&m| !m).count(), mask.len()),
                    format!("{:.1}", t[0].median * 1e6),
                    format!("{:.1}", t[1].median * 1e6),
                    format!("{:.2}", t[0].speedup_over(&t[1])),
                    match &check {
                        Ok(()) => "ok".into(),
                        Err(e) => format!("MISMATCH: {e}"),
                    },
                ]);
            }
        }
    }
    println!();
    println!("Block masks (blosc2_set_maskout, one block in four kept, C-Blosc2's chunk):");
    println!();
    println!("{}", table.markdown());
    if let Some(csv) = &opts.csv {
        let path = csv.with_file_name("capi-masked.csv");
        table
            .write_csv(&path)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        println!("CSV: {}", path.display());
    }
    Ok(all_ok)
}

/// Checks one row (each side decodes both chunks; getitem) and times it.
fn measure_row(row: &Row, pair: &Pair<'_>, cfg: &Config) -> Result<Measured, String> {
    let src = row.workload.generate(row.size);
    let ts = row.workload.typesize();
    let (start, k) = getitem_span(row.size, ts);
    let want_items = &src[start * ts..(start + k) * ts];
    let cap = row.size + 64;
    let mut chunks = [vec![0u8; cap], vec![0u8; cap]];
    let mut csize = [0usize; 2];
    let mut check = Ok(());
    let mut fail = |what: String| {
        if check.is_ok() {
            check = Err(what);
        }
    };
    let who = ["ours", "C"];
    match pair {
        Pair::Two(apis) => {
            let mut cctx = [apis[0].cctx(row)?, apis[1].cctx(row)?];
            let mut dctx = [apis[0].dctx(row.nthreads)?, apis[1].dctx(row.nthreads)?];
            for s in 0..2 {
                csize[s] = cctx[s].compress(&src, &mut chunks[s])?;
            }
            let mut out = vec![0u8; row.size];
            let mut items = vec![0u8; k * ts];
            for d in 0..2 {
                for (c, chunk) in chunks.iter().enumerate() {
                    out.fill(0xA5);
                    match dctx[d].decompress(&chunk[..csize[c]], &mut out) {
                        Ok(n) if n == row.size && out == src => {}
                        r => fail(format!("{} decoding {}'s chunk: {r:?}", who[d], who[c])),
                    }
                    items.fill(0xA5);
                    match dctx[d].getitem(&chunk[..csize[c]], start, k, &mut items) {
                        Ok(n) if n == k * ts && items == want_items => {}
                        r => fail(format!("{} getitem of {}'s chunk: {r:?}", who[d], who[c])),
                    }
                }
            }
            // Our engine in Rust, no C ABI: the baseline that shows what
            // the FFI layer costs (its chunk must be the C ABI's, byte for
            // byte: the same call, with all of the same room).
            let mut ec = oxiblosc::Compressor::new(engine_params(row)?);
            let mut ed =
                oxiblosc::Decompressor::new(oxiblosc::DParams::default().nthreads(row.nthreads));
            let mut direct = vec![0u8; cap];
            let n = ec
                .compress_into_all_room(&src, &mut direct)
                .map_err(|e| e.to_string())?;
            if direct[..n] != chunks[0][..csize[0]] {
                fail("our engine's chunk differs from our C ABI's".into());
            }
            let [c0, c1] = &mut cctx;
            let [d0, d1] = &mut dctx;
            // Ours on C's chunk, with a context of its own (as a caller
            // decoding chunks of both libraries would have).
            let mut dx = apis[0].dctx(row.nthreads)?;
            let (ch0, ch1) = (&chunks[0][..csize[0]], &chunks[1][..csize[1]]);
            let mut bufs = [
                vec![0u8; cap],
                vec![0u8; cap],
                vec![0u8; cap],
                vec![0u8; cap],
                vec![0u8; cap],
                vec![0u8; cap],
            ];
            let [b0, b1, b2, b3, b4, b5] = &mut bufs;
            let comp = timing::measure(
                cfg,
                &mut [
                    Contestant::new(|| {
                        c0.compress(&src, b0).expect("compress");
                    }),
                    Contestant::new(|| {
                        c1.compress(&src, b1).expect("compress");
                    }),
                    Contestant::new(|| {
                        ec.compress_into_all_room(&src, b4).expect("compress");
                    }),
                ],
            );
            let dec = timing::measure(
                cfg,
                &mut [
                    Contestant::new(|| {
                        d0.decompress(ch0, &mut b2[..row.size]).expect("decompress");
                    }),
                    Contestant::new(|| {
                        d1.decompress(ch1, &mut b3[..row.size]).expect("decompress");
                    }),
                    Contestant::new(|| {
                        ed.decompress_into(ch0, &mut b5[..row.size])
                            .expect("decompress");
                    }),
                    Contestant::new(|| {
                        dx.decompress(ch1, &mut b4[..row.size]).expect("decompress");
                    }),
                ],
            );
            let get = timing::measure(
                cfg,
                &mut [
                    Contestant::new(|| {
                        d0.getitem(ch0, start, k, &mut b2[..k * ts])
                            .expect("getitem");
                    }),
                    Contestant::new(|| {
                        d1.getitem(ch1, start, k, &mut b3[..k * ts])
                            .expect("getitem");
                    }),
                    Contestant::new(|| {
                        ed.getitem_into(ch0, start, k, &mut b5[..k * ts])
                            .expect("getitem");
                    }),
                    Contestant::new(|| {
                        dx.getitem(ch1, start, k, &mut b4[..k * ts])
                            .expect("getitem");
                    }),
                ],
            );
            Ok(Measured {
                samples: [comp, dec, get],
                same_chunk: chunks[0][..csize[0]] == chunks[1][..csize[1]],
                csize,
                check,
            })
        }
        Pair::One(apis) => {
            let mut out = vec![0u8; row.size];
            let mut items = vec![0u8; k * ts];
            for s in 0..2 {
                apis[s].settings(row)?;
                csize[s] = apis[s].compress(row, &src, &mut chunks[s])?;
            }
            for d in 0..2 {
                for (c, chunk) in chunks.iter().enumerate() {
                    out.fill(0xA5);
                    match apis[d].decompress(&chunk[..csize[c]], &mut out) {
                        Ok(n) if n == row.size && out == src => {}
                        r => fail(format!("{} decoding {}'s chunk: {r:?}", who[d], who[c])),
                    }
                    items.fill(0xA5);
                    match apis[d].getitem(&chunk[..csize[c]], start, k, ts, &mut items) {
                        Ok(n) if n == k * ts && items == want_items => {}
                        r => fail(format!("{} getitem of {}'s chunk: {r:?}", who[d], who[c])),
                    }
                }
            }
            let (a0, a1) = (apis[0], apis[1]);
            let (ch0, ch1) = (&chunks[0][..csize[0]], &chunks[1][..csize[1]]);
            let mut bufs = [
                vec![0u8; cap],
                vec![0u8; cap],
                vec![0u8; cap],
                vec![0u8; cap],
            ];
            let [b0, b1, b2, b3] = &mut bufs;
            let comp = timing::measure(
                cfg,
                &mut [
                    Contestant::new(|| {
                        a0.compress(row, &src, b0).expect("compress");
                    }),
                    Contestant::new(|| {
                        a1.compress(row, &src, b1).expect("compress");
                    }),
                ],
            );
            let dec = timing::measure(
                cfg,
                &mut [
                    Contestant::new(|| {
                        a0.decompress(ch0, &mut b2[..row.size]).expect("decompress");
                    }),
                    Contestant::new(|| {
                        a1.decompress(ch1, &mut b3[..row.size]).expect("decompress");
                    }),
                ],
            );
            let get = timing::measure(
                cfg,
                &mut [
                    Contestant::new(|| {
                        a0.getitem(ch0, start, k, ts, &mut b2[..k * ts])
                            .expect("getitem");
                    }),
                    Contestant::new(|| {
                        a1.getitem(ch1, start, k, ts, &mut b3[..k * ts])
                            .expect("getitem");
                    }),
                ],
            );
            Ok(Measured {
                samples: [comp, dec, get],
                same_chunk: chunks[0][..csize[0]] == chunks[1][..csize[1]],
                csize,
                check,
            })
        }
    }
}

fn geomean(v: &[f64]) -> f64 {
    (v.iter().map(|x| x.ln()).sum::<f64>() / v.len() as f64).exp()
}

/// The engine parameters `blosc2_create_cctx` makes of the row's cparams.
fn engine_params(row: &Row) -> Result<oxiblosc::CParams, String> {
    let codec = oxiblosc::Codec::from_id(row.codec.code()).ok_or("unknown codec")?;
    let filter = match row.filter {
        CFilter::Shuffle => oxiblosc::Filter::Shuffle,
        CFilter::BitShuffle => oxiblosc::Filter::BitShuffle,
    };
    let mut p = oxiblosc::CParams::default()
        .codec(codec)
        .clevel(row.clevel)
        .typesize(row.workload.typesize())
        .splitmode(oxiblosc::SplitMode::Auto)
        .nthreads(row.nthreads);
    // The last of the six slots, as `Cctx` sets them.
    p.filters = [None; 6];
    p.filters[5] = Some(filter);
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn getitem_span_stays_inside() {
        assert_eq!(getitem_span(32 << 10, 4), ((8192 - 1024) / 2, 1024));
        assert_eq!(getitem_span(100, 8), (0, 12));
    }

    #[test]
    fn names_round_trip_and_grid_size() {
        for c in CCodec::ALL {
            assert_eq!(CCodec::parse(c.name()), Some(c));
        }
        assert_eq!(Api::parse("blosc1"), Some(Api::Blosc1));
        // 2 APIs x 4 codecs x 2 filters x 2 workloads x 3 sizes.
        assert_eq!(Options::new(false).rows().len(), 2 * 4 * 2 * 2 * 3);
    }

    #[test]
    fn whole_chunk_checks_cbytes() {
        let mut c = vec![0u8; 32];
        c[12] = 32;
        assert!(whole_chunk(&c).is_ok());
        c[12] = 33;
        assert!(whole_chunk(&c).is_err());
        assert!(whole_chunk(&c[..10]).is_err());
    }
}
