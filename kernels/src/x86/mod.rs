//! x86-64 kernels: SSE2 (baseline on x86-64) and AVX2 (detected at run time).
//!
//! Files:
//!
//! - `sse2.rs`, `avx2.rs`: the two `Kernels` tables. Each entry splits off
//!   the bytes the kernel leaves unchanged and picks a kernel by typesize;
//!   every kernel is a separate `#[target_feature]` function (`simd_kernel!`
//!   below), so that each is register allocated on its own;
//! - `tiles.rs`: byte shuffle/unshuffle and bit shuffle/unshuffle, written
//!   once over the `Simd` trait;
//! - `simd.rs`: the `Simd` trait, which models a vector as one (SSE2,
//!   `__m128i`) or two (AVX2, `__m256i`) independent 16-byte lanes, and the
//!   register-level byte and bit transposes;
//! - `gather.rs`: AVX2 `pshufb` gathers for typesizes 3, 5, 6, 7;
//! - `scan.rs`: BYTEDELTA and DELTA decoding as vector prefix scans;
//! - `scalar.rs`: what no vector covers exactly.
//!
//! Only in-lane operations are used in the transposes: an AVX2 register
//! simply carries two 16-element problems side by side, loaded and stored a
//! lane at a time where the memory layout needs it. The per-ISA work (which
//! shuffle instructions realise a given byte transpose) lives in the trait
//! implementations; the memory walk, the tail handling and the bit
//! transposes live in `tiles.rs`.
//!
//! Byte transposes are reasoned about as permutations of address bits. A
//! group of `N` registers holding 16-byte lanes has, per lane, four byte
//! index bits `P0..P3` and `log2 N` register index bits `R0..`. Shuffling
//! `16` elements of `T = 2^t` bytes means going from `(j | e)` (byte `j` of
//! element `e` at address `e*T + j`) to `(e | j)`; every instruction used
//! either permutes the `P` bits inside a register (`pshufb`), rotates the
//! whole bit string by one (`punpckl/hbw` pairs, `packuswb` pairs) or swaps
//! one `P` bit with one `R` bit (`punpckl/hqdq`, shift + blend).
//!
//! Everything a vector loop cannot cover exactly (fewer elements than one
//! tile, the last elements of a buffer whose element size is below 16, the
//! `len % typesize` trailing bytes) goes through the scalar helpers of
//! `scalar.rs`, which follow the reference definitions directly. Partial
//! tiles are otherwise handled by running one last full tile that overlaps
//! the previous one: it rewrites the bytes they share with the same values.
//!
//! Soundness: every `unsafe fn` here needs only its instruction set (and,
//! for the pointer helpers of `Simd`, valid bytes); the kernels check the
//! slice lengths their pointer arithmetic relies on with `assert!`s, so a
//! wrong length panics instead of touching memory out of bounds.

pub(crate) mod avx2;
mod gather;
mod scalar;
mod scan;
mod simd;
pub(crate) mod sse2;
mod tiles;

/// Asks for the cache lines of `buf` (see [`crate::prefetch`]).
#[inline]
pub(crate) fn prefetch(buf: &[u8]) {
    // SAFETY: SSE is part of the x86-64 baseline; the lines lie inside
    // `buf` (prefetches touch no memory in any case).
    unsafe { simd::prefetch_lines(buf.as_ptr(), 0, buf.len()) }
}

/// The trailing bytes the kernels leave as they are. Most buffers have
/// none, and then there is no `memcpy` call (a 4 KiB chunk's decode made
/// one of 0 bytes for every block).
#[inline(always)]
fn copy_tail(s_tail: &[u8], d_tail: &mut [u8]) {
    if !s_tail.is_empty() {
        d_tail.copy_from_slice(s_tail);
    }
}

/// Byte-shuffle framing: checks `src.len() == dst.len()`, copies the
/// `len % ts` trailing bytes and returns the `n * ts`-byte bodies and `n`.
fn split_elements<'a, 'b>(
    ts: usize,
    src: &'a [u8],
    dst: &'b mut [u8],
) -> (&'a [u8], &'b mut [u8], usize) {
    assert_eq!(src.len(), dst.len());
    // A shift for the type sizes that are powers of two (almost all): a
    // `div` is ~10 cycles before the kernel knows its length.
    let n = if ts.is_power_of_two() {
        src.len() >> ts.trailing_zeros()
    } else {
        src.len() / ts
    };
    let (s, s_tail) = src.split_at(n * ts);
    let (d, d_tail) = dst.split_at_mut(n * ts);
    copy_tail(s_tail, d_tail);
    (s, d, n)
}

/// Bit-shuffle framing: checks `src.len() == dst.len()`, copies the bytes
/// after the largest multiple of 8 whole elements and returns the bodies
/// and the row length (a row per bit of an element, `m / 8` bytes each).
fn split_rows<'a, 'b>(
    ts: usize,
    src: &'a [u8],
    dst: &'b mut [u8],
) -> (&'a [u8], &'b mut [u8], usize) {
    assert_eq!(src.len(), dst.len());
    let m = crate::generic::bit_elements(ts, src.len());
    let (s, s_tail) = src.split_at(m * ts);
    let (d, d_tail) = dst.split_at_mut(m * ts);
    copy_tail(s_tail, d_tail);
    (s, d, m / 8)
}

/// Defines a safe `fn $name` that runs the scalar kernel `$generic` compiled
/// with `$feature` enabled (so the compiler may vectorise it for that ISA).
///
/// The resulting function must only be reachable through a [`Kernels`] table
/// that is handed out after `$feature` was detected.
///
/// [`Kernels`]: crate::Kernels
macro_rules! retarget {
    ($feature:literal, $name:ident = $generic:path, ($($arg:ident: $ty:ty),*)) => {
        fn $name($($arg: $ty),*) {
            #[target_feature(enable = $feature)]
            fn inner($($arg: $ty),*) {
                $generic($($arg),*)
            }
            // SAFETY: this function is only stored in this module's `KERNELS`
            // table, which `kernels()` hands out only after detecting the feature.
            unsafe { inner($($arg),*) }
        }
    };
}
pub(crate) use retarget;

/// Defines a safe `fn $name` that runs the unsafe kernel `$imp`, whose only
/// requirement is `$feature`, inside a function compiled with `$feature`
/// enabled. That function cannot be inlined into callers without the
/// feature, so each kernel defined this way is compiled (and register
/// allocated) on its own.
///
/// The resulting function must only be reachable through a [`Kernels`] table
/// that is handed out after `$feature` was detected (directly or from the
/// table's own dispatch functions).
///
/// [`Kernels`]: crate::Kernels
macro_rules! simd_kernel {
    ($feature:literal, $name:ident = $imp:expr, ($($arg:ident: $ty:ty),*)) => {
        fn $name($($arg: $ty),*) {
            #[target_feature(enable = $feature)]
            fn inner($($arg: $ty),*) {
                // SAFETY: `$feature` is enabled for this function, so the CPU
                // has it, and that is all `$imp` requires.
                unsafe { $imp($($arg),*) }
            }
            // SAFETY: this function is only reachable through this module's
            // `KERNELS` table, which `kernels()` hands out only after
            // detecting the feature.
            unsafe { inner($($arg),*) }
        }
    };
}
pub(crate) use simd_kernel;
