//! The real C-Blosc2, called through its static library.
//!
//! `blosc2-sys` (with its `static` feature) builds the C-Blosc2 sources it
//! vendors with C-Blosc2's own CMake project, so the SSE2, AVX2 and AVX512
//! shuffle files are compiled with `-msse2`, `-mavx2`, `-mavx512f -mavx512bw`
//! and chosen at run time by C-Blosc2's dispatcher (`shuffle.c`), exactly as
//! in an upstream build. This module declares the kernel entry points we time
//! (C marks them `BLOSC_NO_EXPORT`, i.e. hidden visibility, which only matters
//! for shared libraries: in `libblosc2.a` they are ordinary global symbols)
//! and wraps them in safe functions that check the buffer sizes first; and
//! the context API for whole chunks (`blosc2_create_cctx` /
//! `blosc2_compress_ctx`, `blosc2_create_dctx` / `blosc2_decompress_ctx`),
//! wrapped in [`CCompressor`] and [`CDecompressor`], which own a context.
//!
//! Because oxiblosc is linked into the same binary, C-Blosc2's calls into
//! zstd and lz4 resolve to the copies `zstd-sys` (zstd 1.5.7) and `lzzzz`
//! (lz4 1.10.0) bring, not to the ones bundled in libblosc2.a (see the
//! README).
//!
//! All `unsafe` code of this crate lives here, which is why the one libc
//! call the timing needs ([`thread_cpu_time`]) is here too.

use std::ffi::CStr;
use std::fmt;
use std::os::raw::{c_char, c_int, c_void};
use std::ptr::NonNull;
use std::sync::Once;
use std::time::Duration;

// Makes cargo link libblosc2.a. The crate's bindings are only used to check
// the layout of our own `blosc2_cparams` / `blosc2_dparams` (see `ffi`).
use blosc2_sys as _;

/// Raw declarations, checked against the headers of the vendored C-Blosc2
/// (`blosc/shuffle.h`, `shuffle-generic.h`, `bitshuffle-generic.h`,
/// `shuffle-{sse2,avx2}.h`, `bitshuffle-{sse2,avx2,avx512}.h`, `blosc2.h`).
mod ffi {
    use std::os::raw::{c_char, c_int, c_void};

    unsafe extern "C" {
        // blosc/shuffle.h: the run-time dispatchers C-Blosc2 itself calls.
        pub fn shuffle(bytesoftype: i32, blocksize: i32, src: *const u8, dest: *mut u8);
        pub fn unshuffle(bytesoftype: i32, blocksize: i32, src: *const u8, dest: *mut u8);
        pub fn bitshuffle(bytesoftype: i32, blocksize: i32, src: *const u8, dest: *mut u8) -> i32;
        pub fn bitunshuffle(
            bytesoftype: i32,
            blocksize: i32,
            src: *const u8,
            dest: *mut u8,
            format_version: u8,
        ) -> i32;

        // blosc/shuffle-generic.h, blosc/bitshuffle-generic.h: portable C.
        pub fn shuffle_generic(bytesoftype: i32, blocksize: i32, src: *const u8, dest: *mut u8);
        pub fn unshuffle_generic(bytesoftype: i32, blocksize: i32, src: *const u8, dest: *mut u8);
        pub fn bshuf_trans_bit_elem_scal(
            input: *const c_void,
            out: *mut c_void,
            size: usize,
            elem_size: usize,
        ) -> i64;
        pub fn bshuf_untrans_bit_elem_scal(
            input: *const c_void,
            out: *mut c_void,
            size: usize,
            elem_size: usize,
        ) -> i64;

        // blosc2.h
        pub fn blosc2_get_version_string() -> *const c_char;
        pub fn blosc2_init();
        pub fn blosc2_create_cctx(cparams: Cparams) -> *mut Context;
        pub fn blosc2_create_dctx(dparams: Dparams) -> *mut Context;
        pub fn blosc2_free_ctx(context: *mut Context);
        pub fn blosc2_compress_ctx(
            context: *mut Context,
            src: *const c_void,
            srcsize: i32,
            dest: *mut c_void,
            destsize: i32,
        ) -> c_int;
        pub fn blosc2_decompress_ctx(
            context: *mut Context,
            src: *const c_void,
            srcsize: i32,
            dest: *mut c_void,
            destsize: i32,
        ) -> c_int;
    }

    /// `blosc2_context` (opaque).
    #[repr(C)]
    pub struct Context {
        _private: [u8; 0],
    }

    /// `blosc2_cparams` of `blosc2.h` (C-Blosc2 2.15), field for field.
    #[repr(C)]
    pub struct Cparams {
        pub compcode: u8,
        pub compcode_meta: u8,
        pub clevel: u8,
        pub use_dict: c_int,
        pub typesize: i32,
        pub nthreads: i16,
        pub blocksize: i32,
        pub splitmode: i32,
        pub schunk: *mut c_void,
        pub filters: [u8; 6],
        pub filters_meta: [u8; 6],
        /// `blosc2_prefilter_fn` (NULL: none).
        pub prefilter: Option<unsafe extern "C" fn(*mut c_void) -> c_int>,
        pub preparams: *mut c_void,
        pub tuner_params: *mut c_void,
        pub tuner_id: c_int,
        pub instr_codec: bool,
        pub codec_params: *mut c_void,
        pub filter_params: [*mut c_void; 6],
    }

    /// `blosc2_dparams` of `blosc2.h`, field for field.
    #[repr(C)]
    pub struct Dparams {
        pub nthreads: i16,
        pub schunk: *mut c_void,
        /// `blosc2_postfilter_fn` (NULL: none).
        pub postfilter: Option<unsafe extern "C" fn(*mut c_void) -> c_int>,
        pub postparams: *mut c_void,
    }

    // The layout must be C's exactly (the structs are passed by value). Check
    // it against the bindgen output of `blosc2-sys`, whose own tests check it
    // against the header: same size, alignment and every field offset.
    macro_rules! same_layout {
        ($ours:ty, $theirs:ty, $($f:ident),*) => {
            const _: () = {
                assert!(std::mem::size_of::<$ours>() == std::mem::size_of::<$theirs>());
                assert!(std::mem::align_of::<$ours>() == std::mem::align_of::<$theirs>());
                $(assert!(
                    std::mem::offset_of!($ours, $f) == std::mem::offset_of!($theirs, $f)
                );)*
            };
        };
    }
    same_layout!(
        Cparams,
        blosc2_sys::blosc2_cparams,
        compcode,
        compcode_meta,
        clevel,
        use_dict,
        typesize,
        nthreads,
        blocksize,
        splitmode,
        schunk,
        filters,
        filters_meta,
        prefilter,
        preparams,
        tuner_params,
        tuner_id,
        instr_codec,
        codec_params,
        filter_params
    );
    same_layout!(
        Dparams,
        blosc2_sys::blosc2_dparams,
        nthreads,
        schunk,
        postfilter,
        postparams
    );
    #[cfg(target_pointer_width = "64")]
    const _: () =
        assert!(std::mem::size_of::<Cparams>() == 136 && std::mem::size_of::<Dparams>() == 32);

    #[cfg(target_arch = "x86_64")]
    unsafe extern "C" {
        // blosc/shuffle-sse2.h, blosc/bitshuffle-sse2.h
        pub static is_shuffle_sse2: u8;
        pub static is_bshuf_SSE: u8;
        pub fn shuffle_sse2(bytesoftype: i32, blocksize: i32, src: *const u8, dest: *mut u8);
        pub fn unshuffle_sse2(bytesoftype: i32, blocksize: i32, src: *const u8, dest: *mut u8);
        pub fn bshuf_trans_bit_elem_SSE(
            input: *const c_void,
            out: *mut c_void,
            size: usize,
            elem_size: usize,
        ) -> i64;
        pub fn bshuf_untrans_bit_elem_SSE(
            input: *const c_void,
            out: *mut c_void,
            size: usize,
            elem_size: usize,
        ) -> i64;

        // blosc/shuffle-avx2.h, blosc/bitshuffle-avx2.h
        pub static is_shuffle_avx2: u8;
        pub static is_bshuf_AVX: u8;
        pub fn shuffle_avx2(bytesoftype: i32, blocksize: i32, src: *const u8, dest: *mut u8);
        pub fn unshuffle_avx2(bytesoftype: i32, blocksize: i32, src: *const u8, dest: *mut u8);
        pub fn bshuf_trans_bit_elem_AVX(
            input: *const c_void,
            out: *mut c_void,
            size: usize,
            elem_size: usize,
        ) -> i64;
        pub fn bshuf_untrans_bit_elem_AVX(
            input: *const c_void,
            out: *mut c_void,
            size: usize,
            elem_size: usize,
        ) -> i64;

        // blosc/bitshuffle-avx512.h (compiled in by GCC >= 11.4, Clang >= 13)
        pub static is_bshuf_AVX512: u8;
        pub fn bshuf_trans_bit_elem_AVX512(
            input: *const c_void,
            out: *mut c_void,
            size: usize,
            elem_size: usize,
        ) -> i64;
        pub fn bshuf_untrans_bit_elem_AVX512(
            input: *const c_void,
            out: *mut c_void,
            size: usize,
            elem_size: usize,
        ) -> i64;
    }
}

/// The chunk format version passed to C's `bitunshuffle`: anything but 2
/// selects the Blosc2 behaviour (transpose the largest multiple of 8 whole
/// elements, copy the rest), which is what `oxiblosc_kernels::bitunshuffle` does.
const FORMAT_VERSION: u8 = 5;

/// A C-Blosc2 shuffle implementation, named like C-Blosc2 names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CIsa {
    /// `shuffle_generic` and the scalar bitshuffle (`bshuf_*_scal`).
    Generic,
    /// `shuffle_sse2` and `bshuf_*_SSE`.
    Sse2,
    /// `shuffle_avx2` and `bshuf_*_AVX`.
    Avx2,
    /// C-Blosc2's "avx512": `shuffle_avx2` with `bshuf_*_AVX512`.
    Avx512,
}

impl CIsa {
    /// C-Blosc2's name for the implementation (`host_implementation.name`).
    pub fn name(self) -> &'static str {
        match self {
            CIsa::Generic => "generic",
            CIsa::Sse2 => "sse2",
            CIsa::Avx2 => "avx2",
            CIsa::Avx512 => "avx512",
        }
    }

    /// Whether libblosc2.a has this implementation compiled in (its `is_*`
    /// flags are true only when the file was built with the ISA enabled).
    pub fn compiled_in(self) -> bool {
        match self {
            CIsa::Generic => true,
            #[cfg(target_arch = "x86_64")]
            // SAFETY: the `is_*` symbols are `const bool` objects defined in
            // libblosc2.a, initialised at compile time to 0 or 1 and never written.
            CIsa::Sse2 => unsafe { ffi::is_shuffle_sse2 != 0 && ffi::is_bshuf_SSE != 0 },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: as above.
            CIsa::Avx2 => unsafe { ffi::is_shuffle_avx2 != 0 && ffi::is_bshuf_AVX != 0 },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: as above.
            CIsa::Avx512 => unsafe { ffi::is_shuffle_avx2 != 0 && ffi::is_bshuf_AVX512 != 0 },
            #[cfg(not(target_arch = "x86_64"))]
            _ => false,
        }
    }

    /// Whether this CPU has what the implementation needs, tested like
    /// C-Blosc2's `blosc_get_cpu_features` (`__builtin_cpu_supports`).
    pub fn cpu_supports(self) -> bool {
        match self {
            CIsa::Generic => true,
            #[cfg(target_arch = "x86_64")]
            CIsa::Sse2 => std::arch::is_x86_feature_detected!("sse2"),
            #[cfg(target_arch = "x86_64")]
            CIsa::Avx2 => std::arch::is_x86_feature_detected!("avx2"),
            #[cfg(target_arch = "x86_64")]
            CIsa::Avx512 => {
                std::arch::is_x86_feature_detected!("avx512f")
                    && std::arch::is_x86_feature_detected!("avx512bw")
            }
            #[cfg(not(target_arch = "x86_64"))]
            _ => false,
        }
    }

    /// The implementation C-Blosc2's dispatcher picks on this machine, by the
    /// rules of `get_shuffle_implementation` in `shuffle.c`: the first of
    /// avx512, avx2, sse2 that is compiled in and supported by the CPU, else
    /// generic. (On other architectures C may use NEON/ALTIVEC shuffles,
    /// which this crate does not call directly.)
    pub fn dispatched() -> CIsa {
        [CIsa::Avx512, CIsa::Avx2, CIsa::Sse2]
            .into_iter()
            .find(|isa| isa.compiled_in() && isa.cpu_supports())
            .unwrap_or(CIsa::Generic)
    }

    /// The C implementation using the same instruction set as one of ours.
    pub fn matching(isa: oxiblosc_kernels::Isa) -> Option<CIsa> {
        match isa {
            oxiblosc_kernels::Isa::Generic => Some(CIsa::Generic),
            oxiblosc_kernels::Isa::Sse2 => Some(CIsa::Sse2),
            oxiblosc_kernels::Isa::Avx2 => Some(CIsa::Avx2),
            _ => None,
        }
    }
}

impl fmt::Display for CIsa {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Which C entry point a [`CKernels`] calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CTarget {
    /// C-Blosc2's dispatchers `shuffle`, `unshuffle`, `bitshuffle`,
    /// `bitunshuffle`: what C-Blosc2 runs when it compresses.
    Dispatch,
    /// One implementation's functions, called directly.
    Isa(CIsa),
}

/// What was wrong with the arguments of a C kernel call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CError {
    /// `src` and `dst` differ in length.
    LengthMismatch,
    /// Typesize 0, or larger than C-Blosc2's `int32_t`.
    BadTypesize(usize),
    /// More bytes than C-Blosc2's `int32_t` block size allows.
    TooLong(usize),
    /// A C bitshuffle function returned this (negative) error code.
    Failed(i64),
    /// A C-Blosc2 call returned this error code (or NULL, as 0).
    Blosc(&'static str, i32),
}

impl fmt::Display for CError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CError::LengthMismatch => f.write_str("src and dst differ in length"),
            CError::BadTypesize(ts) => write!(f, "typesize {ts} out of range"),
            CError::TooLong(n) => write!(f, "{n} bytes do not fit C-Blosc2's int32 block size"),
            CError::Failed(code) => write!(f, "C bitshuffle failed with code {code}"),
            CError::Blosc(call, code) => write!(f, "{call} failed (returned {code})"),
        }
    }
}

impl std::error::Error for CError {}

type ShuffleFn = unsafe extern "C" fn(i32, i32, *const u8, *mut u8);
type BitFn = unsafe extern "C" fn(*const c_void, *mut c_void, usize, usize) -> i64;

/// The C functions of one implementation.
struct Table {
    shuffle: ShuffleFn,
    unshuffle: ShuffleFn,
    bitshuffle: BitFn,
    bitunshuffle: BitFn,
}

fn table(isa: CIsa) -> Table {
    match isa {
        CIsa::Generic => Table {
            shuffle: ffi::shuffle_generic,
            unshuffle: ffi::unshuffle_generic,
            bitshuffle: ffi::bshuf_trans_bit_elem_scal,
            bitunshuffle: ffi::bshuf_untrans_bit_elem_scal,
        },
        #[cfg(target_arch = "x86_64")]
        CIsa::Sse2 => Table {
            shuffle: ffi::shuffle_sse2,
            unshuffle: ffi::unshuffle_sse2,
            bitshuffle: ffi::bshuf_trans_bit_elem_SSE,
            bitunshuffle: ffi::bshuf_untrans_bit_elem_SSE,
        },
        #[cfg(target_arch = "x86_64")]
        CIsa::Avx2 => Table {
            shuffle: ffi::shuffle_avx2,
            unshuffle: ffi::unshuffle_avx2,
            bitshuffle: ffi::bshuf_trans_bit_elem_AVX,
            bitunshuffle: ffi::bshuf_untrans_bit_elem_AVX,
        },
        #[cfg(target_arch = "x86_64")]
        CIsa::Avx512 => Table {
            shuffle: ffi::shuffle_avx2,
            unshuffle: ffi::unshuffle_avx2,
            bitshuffle: ffi::bshuf_trans_bit_elem_AVX512,
            bitunshuffle: ffi::bshuf_untrans_bit_elem_AVX512,
        },
        #[cfg(not(target_arch = "x86_64"))]
        _ => unreachable!("CKernels::get only hands out generic here"),
    }
}

/// The four shuffle kernels of one C target, with Rust-like safe signatures
/// `(typesize, src, dst)` that behave like C-Blosc2's dispatchers (for a
/// direct implementation, the bytes past the largest multiple of 8 whole
/// elements are copied, as `bitshuffle` in `shuffle.c` does).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CKernels {
    target: CTarget,
}

impl CKernels {
    /// C-Blosc2's own run-time dispatch.
    pub fn dispatch() -> CKernels {
        CKernels {
            target: CTarget::Dispatch,
        }
    }

    /// One implementation, if libblosc2.a has it and this CPU can run it.
    pub fn get(isa: CIsa) -> Option<CKernels> {
        (isa.compiled_in() && isa.cpu_supports()).then_some(CKernels {
            target: CTarget::Isa(isa),
        })
    }

    /// The implementation that actually runs (the dispatched one for
    /// [`CTarget::Dispatch`]).
    pub fn effective_isa(&self) -> CIsa {
        match self.target {
            CTarget::Dispatch => CIsa::dispatched(),
            CTarget::Isa(isa) => isa,
        }
    }

    /// A short label: `avx2`, or `dispatch (avx512)`.
    pub fn label(&self) -> String {
        match self.target {
            CTarget::Dispatch => format!("dispatch ({})", CIsa::dispatched()),
            CTarget::Isa(isa) => isa.name().to_owned(),
        }
    }

    /// The address of the C function that does the work for `kernel` (0..4:
    /// shuffle, unshuffle, bitshuffle, bitunshuffle), to tell whether two
    /// targets end up running the same code.
    pub fn function_address(&self, kernel: usize) -> usize {
        let t = table(self.effective_isa());
        match kernel {
            0 => t.shuffle as usize,
            1 => t.unshuffle as usize,
            2 => t.bitshuffle as usize,
            _ => t.bitunshuffle as usize,
        }
    }

    fn check(typesize: usize, src: &[u8], dst: &[u8]) -> Result<(i32, i32), CError> {
        if src.len() != dst.len() {
            return Err(CError::LengthMismatch);
        }
        let ts = i32::try_from(typesize)
            .ok()
            .filter(|&t| t > 0)
            .ok_or(CError::BadTypesize(typesize))?;
        let len = i32::try_from(src.len()).map_err(|_| CError::TooLong(src.len()))?;
        Ok((ts, len))
    }

    /// Byte shuffle (C `shuffle`).
    ///
    /// # Errors
    /// [`CError`] for mismatched lengths or out-of-range sizes.
    pub fn shuffle(&self, typesize: usize, src: &[u8], dst: &mut [u8]) -> Result<(), CError> {
        let (ts, len) = Self::check(typesize, src, dst)?;
        let f = match self.target {
            CTarget::Dispatch => ffi::shuffle,
            CTarget::Isa(isa) => table(isa).shuffle,
        };
        // SAFETY: `src` and `dst` are valid for `len` bytes (checked equal
        // lengths, `len` fits i32), do not overlap (shared vs exclusive
        // borrow), and C reads/writes exactly `blocksize` bytes. A direct
        // SIMD target was only handed out by `get` after checking the CPU.
        unsafe { f(ts, len, src.as_ptr(), dst.as_mut_ptr()) };
        Ok(())
    }

    /// Byte unshuffle (C `unshuffle`).
    ///
    /// # Errors
    /// [`CError`] for mismatched lengths or out-of-range sizes.
    pub fn unshuffle(&self, typesize: usize, src: &[u8], dst: &mut [u8]) -> Result<(), CError> {
        let (ts, len) = Self::check(typesize, src, dst)?;
        let f = match self.target {
            CTarget::Dispatch => ffi::unshuffle,
            CTarget::Isa(isa) => table(isa).unshuffle,
        };
        // SAFETY: as in `shuffle`.
        unsafe { f(ts, len, src.as_ptr(), dst.as_mut_ptr()) };
        Ok(())
    }

    /// Bit shuffle (C `bitshuffle`, Blosc2 semantics).
    ///
    /// # Errors
    /// [`CError`] for mismatched lengths, out-of-range sizes, or a C failure.
    pub fn bitshuffle(&self, typesize: usize, src: &[u8], dst: &mut [u8]) -> Result<(), CError> {
        let (ts, len) = Self::check(typesize, src, dst)?;
        match self.target {
            CTarget::Dispatch => {
                // SAFETY: as in `shuffle`; C's `bitshuffle` transposes the
                // multiple-of-8 element prefix and memcpy's the rest, all
                // within `blocksize` bytes.
                let r = unsafe { ffi::bitshuffle(ts, len, src.as_ptr(), dst.as_mut_ptr()) };
                check_ret(i64::from(r))
            }
            CTarget::Isa(isa) => bit_direct(table(isa).bitshuffle, typesize, src, dst),
        }
    }

    /// Bit unshuffle (C `bitunshuffle`, Blosc2 semantics).
    ///
    /// # Errors
    /// [`CError`] for mismatched lengths, out-of-range sizes, or a C failure.
    pub fn bitunshuffle(&self, typesize: usize, src: &[u8], dst: &mut [u8]) -> Result<(), CError> {
        let (ts, len) = Self::check(typesize, src, dst)?;
        match self.target {
            CTarget::Dispatch => {
                // SAFETY: as in `bitshuffle`.
                let r = unsafe {
                    ffi::bitunshuffle(ts, len, src.as_ptr(), dst.as_mut_ptr(), FORMAT_VERSION)
                };
                check_ret(i64::from(r))
            }
            CTarget::Isa(isa) => bit_direct(table(isa).bitunshuffle, typesize, src, dst),
        }
    }
}

fn check_ret(r: i64) -> Result<(), CError> {
    if r < 0 {
        Err(CError::Failed(r))
    } else {
        Ok(())
    }
}

/// Calls one `bshuf_(un)trans_bit_elem_*` on the largest multiple of 8 whole
/// elements and copies the rest, like C-Blosc2's `bitshuffle` wrapper.
fn bit_direct(f: BitFn, typesize: usize, src: &[u8], dst: &mut [u8]) -> Result<(), CError> {
    let elems = src.len() / typesize / 8 * 8;
    let body = elems * typesize;
    // SAFETY: `body <= src.len() == dst.len()`; the `bshuf_*` functions read
    // `elems * typesize` bytes from `in`, write as many to `out` (any
    // temporary is their own malloc), require `elems % 8 == 0` (ensured), and
    // need no alignment. The buffers do not overlap. SIMD variants are only
    // reachable through `CKernels::get`, which checked the CPU.
    let r = unsafe {
        f(
            src.as_ptr().cast(),
            dst.as_mut_ptr().cast(),
            elems,
            typesize,
        )
    };
    check_ret(r)?;
    dst[body..].copy_from_slice(&src[body..]);
    Ok(())
}

/// CPU time consumed so far by the calling thread (user + system), from
/// `clock_gettime(CLOCK_THREAD_CPUTIME_ID)`; `None` where that clock is
/// unavailable.
pub fn thread_cpu_time() -> Option<Duration> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; the call only writes it.
    let r = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    (r == 0).then(|| Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32))
}

/// CPU time of the whole process, all threads (`CLOCK_PROCESS_CPUTIME_ID`),
/// or `None` where the platform lacks it.
pub fn process_cpu_time() -> Option<Duration> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; the call only writes it.
    let r = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    (r == 0).then(|| Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32))
}

/// The version string of the linked C-Blosc2 (e.g. `2.15.3.dev`).
pub fn version() -> String {
    // SAFETY: returns a pointer to a static NUL-terminated string literal.
    let p: *const c_char = unsafe { ffi::blosc2_get_version_string() };
    if p.is_null() {
        return "unknown".to_owned();
    }
    // SAFETY: non-null, NUL-terminated, static lifetime (see above).
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

/// `blosc2_dparams` of C-Blosc2 3.x (the 3.3.5 header python-blosc2 ships):
/// 2.15's fields plus a trailing `typesize`. (`blosc2_cparams` is the same
/// in both versions.)
#[repr(C)]
struct Dparams3 {
    nthreads: i16,
    schunk: *mut c_void,
    postfilter: Option<unsafe extern "C" fn(*mut c_void) -> c_int>,
    postparams: *mut c_void,
    typesize: i32,
}

type CtxCall =
    unsafe extern "C" fn(*mut ffi::Context, *const c_void, i32, *mut c_void, i32) -> c_int;

/// The functions of a C-Blosc2 3.x shared library opened with `--c-lib`.
struct DynApi {
    path: String,
    version: String,
    init: unsafe extern "C" fn(),
    create_cctx: unsafe extern "C" fn(ffi::Cparams) -> *mut ffi::Context,
    create_dctx: unsafe extern "C" fn(Dparams3) -> *mut ffi::Context,
    free_ctx: unsafe extern "C" fn(*mut ffi::Context),
    compress_ctx: CtxCall,
    decompress_ctx: CtxCall,
    kernels: DynKernels,
}

/// `int32_t blosc2_{,un,bit,bitun}shuffle(int32_t typesize, int32_t
/// blocksize, const void* src, void* dest)` of blosc2.h 3.x.
type KernelCall = unsafe extern "C" fn(i32, i32, *const c_void, *mut c_void) -> i32;

/// The four exported shuffle helpers of the C-Blosc2 3.x library opened with
/// `--c-lib` (its own run-time dispatch, as its chunks use it).
#[derive(Clone, Copy, Debug)]
pub struct DynKernels {
    version: &'static str,
    shuffle: KernelCall,
    unshuffle: KernelCall,
    bitshuffle: KernelCall,
    bitunshuffle: KernelCall,
}

impl DynKernels {
    /// `C-Blosc2 3.3.5`.
    pub fn label(&self) -> String {
        format!("C-Blosc2 {}", self.version)
    }

    fn call(
        &self,
        f: KernelCall,
        name: &'static str,
        typesize: usize,
        src: &[u8],
        dst: &mut [u8],
    ) -> Result<(), CError> {
        let (ts, len) = CKernels::check(typesize, src, dst)?;
        // SAFETY: `f` is the library's function of that prototype (see
        // `load_library`); `check` made sure both buffers hold `len` bytes and
        // that `ts` and `len` fit an int32_t; the C function reads `len` bytes
        // of `src` and writes `len` bytes of `dst`, which do not overlap
        // (a shared and an exclusive borrow).
        let r = unsafe { f(ts, len, src.as_ptr().cast(), dst.as_mut_ptr().cast()) };
        if r < 0 {
            Err(CError::Blosc(name, r))
        } else {
            Ok(())
        }
    }

    /// `blosc2_shuffle`.
    ///
    /// # Errors
    /// Mismatched lengths, a typesize out of range, or a negative return.
    pub fn shuffle(&self, typesize: usize, src: &[u8], dst: &mut [u8]) -> Result<(), CError> {
        self.call(self.shuffle, "blosc2_shuffle", typesize, src, dst)
    }

    /// `blosc2_unshuffle`.
    ///
    /// # Errors
    /// As [`DynKernels::shuffle`].
    pub fn unshuffle(&self, typesize: usize, src: &[u8], dst: &mut [u8]) -> Result<(), CError> {
        self.call(self.unshuffle, "blosc2_unshuffle", typesize, src, dst)
    }

    /// `blosc2_bitshuffle`.
    ///
    /// # Errors
    /// As [`DynKernels::shuffle`].
    pub fn bitshuffle(&self, typesize: usize, src: &[u8], dst: &mut [u8]) -> Result<(), CError> {
        self.call(self.bitshuffle, "blosc2_bitshuffle", typesize, src, dst)
    }

    /// `blosc2_bitunshuffle`.
    ///
    /// # Errors
    /// As [`DynKernels::shuffle`].
    pub fn bitunshuffle(&self, typesize: usize, src: &[u8], dst: &mut [u8]) -> Result<(), CError> {
        self.call(self.bitunshuffle, "blosc2_bitunshuffle", typesize, src, dst)
    }
}

/// Set once by [`load_library`], before any context exists; from then on
/// every `CCompressor` / `CDecompressor` is one of that library's.
static DYN: std::sync::OnceLock<DynApi> = std::sync::OnceLock::new();
/// Whether a context (of the static library) has been made.
static CONTEXT_MADE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Opens the C-Blosc2 3.x shared library at `path` (e.g. python-blosc2's
/// `libblosc2.so` 3.3.5) and makes the chunk contexts use it instead of the
/// static 2.15 (the shuffle kernels stay the static library's). Returns its
/// version string.
///
/// # Errors
/// Called after a context was made, a library that does not open, lacks a
/// symbol, or is not version 3.x (whose `blosc2_dparams` layout we know).
pub fn load_library(path: &str) -> Result<String, String> {
    if CONTEXT_MADE.load(std::sync::atomic::Ordering::SeqCst) || DYN.get().is_some() {
        return Err("--c-lib must be chosen before any C-Blosc2 context exists".into());
    }
    let cpath = std::ffi::CString::new(path).map_err(|_| format!("bad path {path:?}"))?;
    // SAFETY: `cpath` is NUL-terminated. RTLD_LOCAL keeps the library's
    // symbols out of the global scope and RTLD_DEEPBIND makes it bind its own
    // calls to its own symbols, not to the static 2.15 linked into this
    // binary. The handle is never closed (the functions live until exit).
    let handle = unsafe {
        libc::dlopen(
            cpath.as_ptr(),
            libc::RTLD_NOW | libc::RTLD_LOCAL | libc::RTLD_DEEPBIND,
        )
    };
    if handle.is_null() {
        return Err(format!("cannot open {path} (dlopen failed)"));
    }
    let sym = |name: &str| -> Result<*mut c_void, String> {
        let cname = std::ffi::CString::new(name).expect("no NUL in symbol names");
        // SAFETY: `handle` is a live dlopen handle, `cname` NUL-terminated.
        let p = unsafe { libc::dlsym(handle, cname.as_ptr()) };
        if p.is_null() {
            Err(format!("{path} has no symbol {name}"))
        } else {
            Ok(p)
        }
    };
    // SAFETY (each transmute below): the symbol is the C function of that
    // name in blosc2.h 3.3.5, whose prototype the target type spells out
    // (`const char* blosc2_get_version_string(void)`, `void blosc2_init(void)`,
    // `blosc2_context* blosc2_create_cctx(blosc2_cparams)`,
    // `blosc2_context* blosc2_create_dctx(blosc2_dparams)`,
    // `void blosc2_free_ctx(blosc2_context*)`, and
    // `int blosc2_{de,}compress_ctx(blosc2_context*, const void*, int32_t,
    // void*, int32_t)`); a data pointer and a function pointer have the same
    // size on every platform dlsym exists on.
    let version_fn: unsafe extern "C" fn() -> *const c_char =
        unsafe { std::mem::transmute(sym("blosc2_get_version_string")?) };
    // SAFETY: see above; it returns a static NUL-terminated string.
    let vp = unsafe { version_fn() };
    if vp.is_null() {
        return Err(format!("{path}: no version string"));
    }
    // SAFETY: non-null, NUL-terminated, static (see above).
    let version = unsafe { CStr::from_ptr(vp) }.to_string_lossy().into_owned();
    if !version.starts_with("3.") {
        return Err(format!(
            "{path} is C-Blosc2 {version}: only 3.x (whose blosc2_dparams layout this crate \
             knows) can be loaded"
        ));
    }
    // SAFETY: see the comment above `version_fn`.
    let api = unsafe {
        DynApi {
            path: path.to_owned(),
            version: version.clone(),
            init: std::mem::transmute::<*mut c_void, unsafe extern "C" fn()>(sym("blosc2_init")?),
            create_cctx: std::mem::transmute::<
                *mut c_void,
                unsafe extern "C" fn(ffi::Cparams) -> *mut ffi::Context,
            >(sym("blosc2_create_cctx")?),
            create_dctx: std::mem::transmute::<
                *mut c_void,
                unsafe extern "C" fn(Dparams3) -> *mut ffi::Context,
            >(sym("blosc2_create_dctx")?),
            free_ctx: std::mem::transmute::<*mut c_void, unsafe extern "C" fn(*mut ffi::Context)>(
                sym("blosc2_free_ctx")?,
            ),
            compress_ctx: std::mem::transmute::<*mut c_void, CtxCall>(sym("blosc2_compress_ctx")?),
            decompress_ctx: std::mem::transmute::<*mut c_void, CtxCall>(sym(
                "blosc2_decompress_ctx",
            )?),
            // `int32_t blosc2_shuffle(const int32_t typesize, const int32_t
            // blocksize, const void* src, void* dest)` and its three siblings.
            kernels: DynKernels {
                version: Box::leak(version.clone().into_boxed_str()),
                shuffle: std::mem::transmute::<*mut c_void, KernelCall>(sym("blosc2_shuffle")?),
                unshuffle: std::mem::transmute::<*mut c_void, KernelCall>(sym("blosc2_unshuffle")?),
                bitshuffle: std::mem::transmute::<*mut c_void, KernelCall>(sym(
                    "blosc2_bitshuffle",
                )?),
                bitunshuffle: std::mem::transmute::<*mut c_void, KernelCall>(sym(
                    "blosc2_bitunshuffle",
                )?),
            },
        }
    };
    // SAFETY: `blosc2_init` of the loaded library, once (DYN is set once).
    unsafe { (api.init)() };
    DYN.set(api).map_err(|_| "--c-lib given twice".to_owned())?;
    Ok(version)
}

/// The shuffle helpers of the library [`load_library`] opened, if any.
pub fn loaded_kernels() -> Option<DynKernels> {
    DYN.get().map(|d| d.kernels)
}

/// `Some((path, version))` when `--c-lib` replaced the static library.
pub fn loaded_library() -> Option<(String, String)> {
    DYN.get().map(|d| (d.path.clone(), d.version.clone()))
}

/// `blosc2_init()`, once per process (registers C-Blosc2's codecs and
/// filters; contexts need it).
pub fn init() {
    static INIT: Once = Once::new();
    // SAFETY: `blosc2_init` takes no arguments and only sets up C-Blosc2's
    // global state; `Once` makes it run once, before any context is created
    // by this crate (every constructor below calls `init` first).
    INIT.call_once(|| unsafe { ffi::blosc2_init() });
    CONTEXT_MADE.store(true, std::sync::atomic::Ordering::SeqCst);
}

/// `BLOSC_AUTO_SPLIT`: split blocks into per-byte streams when C-Blosc2's
/// heuristic says it pays (python-blosc2's default).
pub const SPLIT_AUTO: i32 = 3;

/// What a C-Blosc2 compression context is made with; every other field of
/// `blosc2_cparams` is its default (`BLOSC2_CPARAMS_DEFAULTS`: no
/// dictionary, automatic block size, no prefilter, no tuner).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CCompressParams {
    /// C-Blosc2 codec id (`BLOSC_BLOSCLZ` = 0, `LZ4` 1, `LZ4HC` 2, `ZLIB` 4, `ZSTD` 5).
    pub codec: u8,
    /// 0..=9.
    pub clevel: u8,
    /// Bytes per item.
    pub typesize: usize,
    /// Filter ids by slot, run from slot 0 (0 = none), like python-blosc2's
    /// `filters=[...]` list (C's default puts SHUFFLE in the last slot).
    pub filters: [u8; 6],
    /// `BLOSC_*_SPLIT` (e.g. [`SPLIT_AUTO`]).
    pub splitmode: i32,
    /// Threads of the context's pool (1: C compresses in the calling thread).
    pub nthreads: usize,
}

/// A C-Blosc2 compression context (`blosc2_create_cctx`), made once and
/// reused for every call; freed on drop.
pub struct CCompressor {
    ctx: NonNull<ffi::Context>,
}

impl CCompressor {
    /// Creates the context.
    ///
    /// # Errors
    /// Out-of-range parameters, or `blosc2_create_cctx` returning NULL.
    pub fn new(p: &CCompressParams) -> Result<CCompressor, CError> {
        init();
        let typesize = i32::try_from(p.typesize)
            .ok()
            .filter(|t| (1..=255).contains(t))
            .ok_or(CError::BadTypesize(p.typesize))?;
        let nthreads = i16::try_from(p.nthreads.max(1))
            .map_err(|_| CError::Blosc("nthreads out of range", 0))?;
        let cparams = ffi::Cparams {
            compcode: p.codec,
            compcode_meta: 0,
            clevel: p.clevel,
            use_dict: 0,
            typesize,
            nthreads,
            blocksize: 0,
            splitmode: p.splitmode,
            schunk: std::ptr::null_mut(),
            filters: p.filters,
            filters_meta: [0; 6],
            prefilter: None,
            preparams: std::ptr::null_mut(),
            tuner_params: std::ptr::null_mut(),
            tuner_id: 0,
            instr_codec: false,
            codec_params: std::ptr::null_mut(),
            filter_params: [std::ptr::null_mut(); 6],
        };
        // SAFETY: `cparams` is a fully initialised `blosc2_cparams` (layout
        // checked at compile time); C copies what it needs out of it (the
        // pointers are all NULL) and returns a new context or NULL.
        let ctx = unsafe {
            match DYN.get() {
                Some(d) => (d.create_cctx)(cparams),
                None => ffi::blosc2_create_cctx(cparams),
            }
        };
        NonNull::new(ctx)
            .map(|ctx| CCompressor { ctx })
            .ok_or(CError::Blosc("blosc2_create_cctx", 0))
    }

    /// `blosc2_compress_ctx`: compresses `src` into `dst`, returns the chunk
    /// size (`dst` of `src.len() + 32` bytes always suffices).
    ///
    /// # Errors
    /// Sizes over `i32::MAX`, or C's error code (0: does not fit `dst`).
    pub fn compress(&mut self, src: &[u8], dst: &mut [u8]) -> Result<usize, CError> {
        let srcsize = i32::try_from(src.len()).map_err(|_| CError::TooLong(src.len()))?;
        let destsize = i32::try_from(dst.len()).unwrap_or(i32::MAX);
        // SAFETY: `self.ctx` is a live compression context owned by `self`
        // (`&mut self`: no concurrent use; its worker threads, if any, are
        // joined inside the call). `src` is readable for `srcsize` bytes and
        // `dst` writable for `destsize <= dst.len()` bytes; they do not
        // overlap (shared vs exclusive borrow). C-Blosc2 guarantees it never
        // writes more than `destsize` bytes.
        let r = unsafe {
            DYN.get()
                .map_or(ffi::blosc2_compress_ctx as CtxCall, |d| d.compress_ctx)(
                self.ctx.as_ptr(),
                src.as_ptr().cast(),
                srcsize,
                dst.as_mut_ptr().cast(),
                destsize,
            )
        };
        if r > 0 {
            Ok(r as usize)
        } else {
            Err(CError::Blosc("blosc2_compress_ctx", r))
        }
    }
}

impl Drop for CCompressor {
    fn drop(&mut self) {
        // SAFETY: the context was made by `blosc2_create_cctx` of the library
        // in use (chosen before any context existed), is owned by `self` and
        // freed exactly once, here, by that library.
        unsafe { DYN.get().map_or(ffi::blosc2_free_ctx as _, |d| d.free_ctx)(self.ctx.as_ptr()) }
    }
}

/// A C-Blosc2 decompression context (`blosc2_create_dctx`); freed on drop.
pub struct CDecompressor {
    ctx: NonNull<ffi::Context>,
}

impl CDecompressor {
    /// Creates the context with `nthreads` threads.
    ///
    /// # Errors
    /// `nthreads` out of range, or `blosc2_create_dctx` returning NULL.
    pub fn new(nthreads: usize) -> Result<CDecompressor, CError> {
        init();
        let nthreads = i16::try_from(nthreads.max(1))
            .map_err(|_| CError::Blosc("nthreads out of range", 0))?;
        let dparams = ffi::Dparams {
            nthreads,
            schunk: std::ptr::null_mut(),
            postfilter: None,
            postparams: std::ptr::null_mut(),
        };
        // SAFETY: a fully initialised `blosc2_dparams` (layout checked at
        // compile time) with NULL pointers; C returns a new context or NULL.
        let ctx = unsafe {
            match DYN.get() {
                Some(d) => (d.create_dctx)(Dparams3 {
                    nthreads: dparams.nthreads,
                    schunk: dparams.schunk,
                    postfilter: dparams.postfilter,
                    postparams: dparams.postparams,
                    typesize: 0,
                }),
                None => ffi::blosc2_create_dctx(dparams),
            }
        };
        NonNull::new(ctx)
            .map(|ctx| CDecompressor { ctx })
            .ok_or(CError::Blosc("blosc2_create_dctx", 0))
    }

    /// `blosc2_decompress_ctx`: decompresses the chunk `src` into `dst`,
    /// returns the number of bytes written.
    ///
    /// # Errors
    /// Sizes over `i32::MAX`, or C's (negative) error code.
    pub fn decompress(&mut self, src: &[u8], dst: &mut [u8]) -> Result<usize, CError> {
        let srcsize = i32::try_from(src.len()).map_err(|_| CError::TooLong(src.len()))?;
        let destsize = i32::try_from(dst.len()).unwrap_or(i32::MAX);
        // SAFETY: `self.ctx` is a live decompression context owned by `self`
        // (`&mut self`: no concurrent use). `src` is readable for `srcsize`
        // bytes, `dst` writable for `destsize` bytes, no overlap. C-Blosc2
        // checks the chunk header against `srcsize` (it rejects a chunk whose
        // cbytes exceed it) and documents that it never writes more than
        // `destsize` bytes. The chunks passed here are ones a compressor made.
        let r = unsafe {
            DYN.get()
                .map_or(ffi::blosc2_decompress_ctx as CtxCall, |d| d.decompress_ctx)(
                self.ctx.as_ptr(),
                src.as_ptr().cast(),
                srcsize,
                dst.as_mut_ptr().cast(),
                destsize,
            )
        };
        if r >= 0 {
            Ok(r as usize)
        } else {
            Err(CError::Blosc("blosc2_decompress_ctx", r))
        }
    }
}

impl Drop for CDecompressor {
    fn drop(&mut self) {
        // SAFETY: made by `blosc2_create_dctx` of the library in use, owned
        // by `self`, freed once, by that library.
        unsafe { DYN.get().map_or(ffi::blosc2_free_ctx as _, |d| d.free_ctx)(self.ctx.as_ptr()) }
    }
}
