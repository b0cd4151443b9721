//! SSE2 kernels.

use super::retarget;
use crate::dispatch::{Isa, Kernels};
use crate::generic;

/// The SSE2 table, if this CPU supports SSE2.
pub(crate) fn kernels() -> Option<&'static Kernels> {
    if std::arch::is_x86_feature_detected!("sse2") {
        Some(&KERNELS)
    } else {
        None
    }
}

static KERNELS: Kernels = Kernels {
    isa: Isa::Sse2,
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

retarget!("sse2", shuffle = generic::shuffle, (ts: usize, src: &[u8], dst: &mut [u8]));
retarget!("sse2", unshuffle = generic::unshuffle, (ts: usize, src: &[u8], dst: &mut [u8]));
retarget!("sse2", bitshuffle = generic::bitshuffle, (ts: usize, src: &[u8], dst: &mut [u8]));
retarget!("sse2", bitunshuffle = generic::bitunshuffle, (ts: usize, src: &[u8], dst: &mut [u8]));
retarget!("sse2", delta_encode = generic::delta_encode, (ts: usize, r: Option<&[u8]>, src: &[u8], dst: &mut [u8]));
retarget!("sse2", delta_decode = generic::delta_decode, (ts: usize, r: Option<&[u8]>, src: &[u8], dst: &mut [u8]));
retarget!("sse2", trunc_prec = generic::trunc_prec, (ts: usize, zeroed: u32, src: &[u8], dst: &mut [u8]));
retarget!("sse2", bytedelta_encode = generic::bytedelta_encode, (ts: usize, src: &[u8], dst: &mut [u8]));
retarget!("sse2", bytedelta_decode = generic::bytedelta_decode, (ts: usize, src: &[u8], dst: &mut [u8]));
