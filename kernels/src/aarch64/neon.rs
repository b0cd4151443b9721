//! NEON kernels (AArch64 Advanced SIMD, 128-bit vectors).
//!
//! NEON is part of the AArch64 baseline: the table exists whenever the target
//! enables the `neon` feature (all the usual AArch64 targets), with no
//! run-time detection. Every kernel here produces exactly the output of its
//! scalar reference in [`crate::generic`], and falls back to it for inputs
//! too short to fill a vector block.
//!
//! - [`shuffle`](mod@shuffle): byte (un)shuffle, `vld4q`/`vst2q`/`vst4q`, unzips and zips
//!   for typesizes 2, 4, 8, 16, 16x16 byte transposes for any other;
//! - [`bitshuffle`](mod@bitshuffle): bit (un)shuffle, byte de-interleave
//!   followed by an 8x8 bit transpose across eight vectors (delta swaps);
//! - [`filters`]: DELTA, TRUNC_PREC, BYTEDELTA;
//! - [`prims`]: the shared loads, stores and transposes.
//!
//! The kernels are `#[target_feature(enable = "neon")]` functions, so the
//! register intrinsics are safe to call in them; the table holds plain
//! wrappers (`entry!`) whose one `unsafe` call relies on this module only
//! being compiled when the build enables NEON. The only other `unsafe` code
//! is in the load and store helpers of `prims`, which take a sub-slice of
//! exactly the bytes the instruction touches before handing its pointer to
//! the intrinsic: an out-of-range offset panics in the slicing, it cannot
//! reach memory.
//!
//! No intrinsic that Miri cannot interpret is used (`vld2q`, `vsli`, `vsri`
//! are avoided for that reason), so `cargo miri test --target
//! aarch64-unknown-linux-gnu` checks this code without qemu.

use crate::dispatch::Kernels;

#[cfg(target_feature = "neon")]
mod bitshuffle;
#[cfg(target_feature = "neon")]
mod filters;
#[cfg(target_feature = "neon")]
mod prims;
#[cfg(target_feature = "neon")]
mod shuffle;
#[cfg(all(test, target_feature = "neon"))]
mod tests;

/// The NEON table (NEON is baseline on AArch64 targets that enable it).
#[cfg(target_feature = "neon")]
pub(crate) fn kernels() -> Option<&'static Kernels> {
    Some(&KERNELS)
}

/// No NEON table on an AArch64 target built without NEON.
#[cfg(not(target_feature = "neon"))]
pub(crate) fn kernels() -> Option<&'static Kernels> {
    None
}

#[cfg(target_feature = "neon")]
static KERNELS: Kernels = Kernels {
    isa: crate::dispatch::Isa::Neon,
    shuffle,
    unshuffle,
    bitshuffle,
    bitunshuffle,
    delta_encode,
    delta_decode,
    trunc_prec,
    bytedelta_encode,
    bytedelta_decode,
};

/// Defines a plain `fn $name` (storable in the [`Kernels`] table) that calls
/// the `#[target_feature(enable = "neon")]` kernel `$imp`.
#[cfg(target_feature = "neon")]
macro_rules! entry {
    ($name:ident = $imp:path, ($($arg:ident: $ty:ty),*)) => {
        pub(super) fn $name($($arg: $ty),*) {
            // SAFETY: this function only exists when the build enables the
            // `neon` target feature (`cfg(target_feature = "neon")` above),
            // so the CPU running it has NEON; `$imp` has no other
            // precondition.
            unsafe { $imp($($arg),*) }
        }
    };
}

#[cfg(target_feature = "neon")]
mod entries {
    use super::{bitshuffle as bit, filters as flt, shuffle as shf};

    type Ref<'a> = Option<&'a [u8]>;

    entry!(shuffle = shf::shuffle, (ts: usize, src: &[u8], dst: &mut [u8]));
    entry!(unshuffle = shf::unshuffle, (ts: usize, src: &[u8], dst: &mut [u8]));
    entry!(bitshuffle = bit::bitshuffle, (ts: usize, src: &[u8], dst: &mut [u8]));
    entry!(bitunshuffle = bit::bitunshuffle, (ts: usize, src: &[u8], dst: &mut [u8]));
    entry!(delta_encode = flt::delta_encode, (ts: usize, r: Ref<'_>, src: &[u8], dst: &mut [u8]));
    entry!(delta_decode = flt::delta_decode, (ts: usize, r: Ref<'_>, src: &[u8], dst: &mut [u8]));
    entry!(trunc_prec = flt::trunc_prec, (ts: usize, zeroed: u32, src: &[u8], dst: &mut [u8]));
    entry!(bytedelta_encode = flt::bytedelta_encode, (ts: usize, src: &[u8], dst: &mut [u8]));
    entry!(bytedelta_decode = flt::bytedelta_decode, (ts: usize, src: &[u8], dst: &mut [u8]));
}
#[cfg(target_feature = "neon")]
use entries::*;
