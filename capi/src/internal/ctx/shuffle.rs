//! The shuffle entry points C-Blosc's and C-Blosc2's internal headers
//! declare (`shuffle.h`, `shuffle-generic.h`, `shuffle-sse2.h`,
//! `shuffle-avx2.h`), on our kernels (`oxiblosc::kernels`).
//!
//! Each `*_generic` call runs our portable kernel, each `*_sse2` /
//! `*_avx2` call the kernel of that instruction set. The instruction set
//! is checked at run time: on a CPU without it (C's would crash with an
//! illegal instruction) the call runs the best kernel the CPU has, which
//! writes the same bytes (`kernels/tests/simd_vs_generic.rs`).
//!
//! C's functions return nothing and do not check their arguments; ours do
//! nothing for a null pointer or a zero type size.

use std::ffi::c_void;

use oxiblosc::kernels::{Isa, Kernels};

use crate::common::{guard, slice_in, slice_out};

type Op = fn(&Kernels, usize, &[u8], &mut [u8]) -> Result<(), oxiblosc::kernels::Error>;

/// The table for `isa`, or the best this CPU runs when it lacks `isa`.
fn table(isa: Option<Isa>) -> &'static Kernels {
    isa.and_then(Kernels::get).unwrap_or_else(Kernels::best)
}

/// Runs `op` of the `isa` table over `blocksize` bytes at `src` into `dest`.
///
/// # Safety
/// `src` and `dest` are null or point to `blocksize` bytes each, readable
/// and writable respectively, not overlapping (C's contract).
unsafe fn run(
    isa: Option<Isa>,
    op: Op,
    typesize: usize,
    blocksize: usize,
    src: *const u8,
    dest: *mut u8,
) {
    if src.is_null() || dest.is_null() || typesize == 0 {
        return;
    }
    guard((), || {
        // SAFETY: the caller's contract (above).
        let (input, output) = unsafe {
            (
                slice_in(src as *const c_void, blocksize),
                slice_out(dest as *mut c_void, blocksize),
            )
        };
        let _ = op(table(isa), typesize, input, output);
    })
}

macro_rules! blosc1_entry {
    ($(#[$doc:meta] $name:ident => $isa:expr, $op:expr;)*) => {$(
        #[$doc]
        ///
        /// # Safety
        /// `src` and `dest` point to `blocksize` bytes each (or are null).
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(
            bytesoftype: usize,
            blocksize: usize,
            src: *const u8,
            dest: *mut u8,
        ) {
            // SAFETY: forwarded from this function's contract.
            unsafe { run($isa, $op, bytesoftype, blocksize, src, dest) }
        }
    )*};
}

blosc1_entry! {
    /// C-Blosc's `blosc_internal_shuffle`: byte shuffle with the best kernel.
    blosc_internal_shuffle => None, Kernels::shuffle;
    /// C-Blosc's `blosc_internal_unshuffle`: its inverse, best kernel.
    blosc_internal_unshuffle => None, Kernels::unshuffle;
    /// C-Blosc's `blosc_internal_shuffle_generic`: the portable kernel.
    blosc_internal_shuffle_generic => Some(Isa::Generic), Kernels::shuffle;
    /// C-Blosc's `blosc_internal_unshuffle_generic`.
    blosc_internal_unshuffle_generic => Some(Isa::Generic), Kernels::unshuffle;
    /// C-Blosc's `blosc_internal_shuffle_sse2`: the SSE2 kernel.
    blosc_internal_shuffle_sse2 => Some(Isa::Sse2), Kernels::shuffle;
    /// C-Blosc's `blosc_internal_unshuffle_sse2`.
    blosc_internal_unshuffle_sse2 => Some(Isa::Sse2), Kernels::unshuffle;
    /// C-Blosc's `blosc_internal_shuffle_avx2`: the AVX2 kernel.
    blosc_internal_shuffle_avx2 => Some(Isa::Avx2), Kernels::shuffle;
    /// C-Blosc's `blosc_internal_unshuffle_avx2`.
    blosc_internal_unshuffle_avx2 => Some(Isa::Avx2), Kernels::unshuffle;
}

macro_rules! blosc2_entry {
    ($($(#[$doc:meta])+ $name:ident => $op:expr;)*) => {$(
        $(#[$doc])+
        ///
        /// # Safety
        /// `src` and `dest` point to `blocksize` bytes each (or are null).
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(
            bytesoftype: i32,
            blocksize: i32,
            src: *const u8,
            dest: *mut u8,
        ) {
            if bytesoftype > 0 && blocksize >= 0 {
                // SAFETY: forwarded from this function's contract.
                unsafe {
                    run(
                        Some(Isa::Generic),
                        $op,
                        bytesoftype as usize,
                        blocksize as usize,
                        src,
                        dest,
                    )
                }
            }
        }
    )*};
}

blosc2_entry! {
    /// C-Blosc2's `shuffle_generic` (`shuffle-generic.h`): the portable byte
    /// shuffle of `blocksize` bytes of `bytesoftype`-byte items.
    shuffle_generic => Kernels::shuffle;
    /// C-Blosc2's `unshuffle_generic`: the inverse of [`shuffle_generic`].
    unshuffle_generic => Kernels::unshuffle;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive(ts: usize, src: &[u8]) -> Vec<u8> {
        let n = src.len() / ts;
        let mut out = src.to_vec();
        for i in 0..n {
            for j in 0..ts {
                out[j * n + i] = src[i * ts + j];
            }
        }
        out
    }

    #[test]
    fn every_entry_point_shuffles_like_the_definition_and_inverts() {
        type F = unsafe extern "C" fn(usize, usize, *const u8, *mut u8);
        let pairs: [(F, F); 4] = [
            (blosc_internal_shuffle, blosc_internal_unshuffle),
            (
                blosc_internal_shuffle_generic,
                blosc_internal_unshuffle_generic,
            ),
            (blosc_internal_shuffle_sse2, blosc_internal_unshuffle_sse2),
            (blosc_internal_shuffle_avx2, blosc_internal_unshuffle_avx2),
        ];
        for ts in [1usize, 2, 3, 4, 8, 16, 17, 32] {
            for len in [0usize, 7, 64, 1000, 4099] {
                let src: Vec<u8> = (0..len).map(|i| (i * 31 % 251) as u8).collect();
                let want = naive(ts, &src);
                for (sh, un) in pairs {
                    let mut mid = vec![0u8; len];
                    let mut back = vec![0u8; len];
                    // SAFETY: both buffers hold len bytes.
                    unsafe {
                        sh(ts, len, src.as_ptr(), mid.as_mut_ptr());
                        un(ts, len, mid.as_ptr(), back.as_mut_ptr());
                    }
                    assert_eq!(mid, want, "typesize {ts}, {len} bytes");
                    assert_eq!(back, src);
                }
                let mut mid = vec![0u8; len];
                let mut back = vec![0u8; len];
                // SAFETY: as above.
                unsafe {
                    shuffle_generic(ts as i32, len as i32, src.as_ptr(), mid.as_mut_ptr());
                    unshuffle_generic(ts as i32, len as i32, mid.as_ptr(), back.as_mut_ptr());
                }
                assert_eq!((mid, back), (want, src));
            }
        }
    }

    #[test]
    fn bad_arguments_do_nothing() {
        let src = [1u8; 8];
        let mut dst = [0u8; 8];
        // SAFETY: null pointers and zero or negative sizes are checked first.
        unsafe {
            blosc_internal_shuffle_generic(0, 8, src.as_ptr(), dst.as_mut_ptr());
            blosc_internal_shuffle_avx2(4, 8, std::ptr::null(), dst.as_mut_ptr());
            shuffle_generic(-1, 8, src.as_ptr(), dst.as_mut_ptr());
            unshuffle_generic(4, -8, src.as_ptr(), dst.as_mut_ptr());
        }
        assert_eq!(dst, [0u8; 8]);
    }
}
