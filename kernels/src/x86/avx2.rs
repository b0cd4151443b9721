//! AVX2 kernels.

use super::retarget;
use crate::dispatch::{Isa, Kernels};
use crate::generic;

/// The AVX2 table, if this CPU supports AVX2.
pub(crate) fn kernels() -> Option<&'static Kernels> {
    if std::arch::is_x86_feature_detected!("avx2") {
        Some(&KERNELS)
    } else {
        None
    }
}

static KERNELS: Kernels = Kernels {
    isa: Isa::Avx2,
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

retarget!("avx2", shuffle = generic::shuffle, (ts: usize, src: &[u8], dst: &mut [u8]));
retarget!("avx2", unshuffle = generic::unshuffle, (ts: usize, src: &[u8], dst: &mut [u8]));
retarget!("avx2", bitshuffle = generic::bitshuffle, (ts: usize, src: &[u8], dst: &mut [u8]));
retarget!("avx2", bitunshuffle = generic::bitunshuffle, (ts: usize, src: &[u8], dst: &mut [u8]));
retarget!("avx2", delta_encode = generic::delta_encode, (ts: usize, r: Option<&[u8]>, src: &[u8], dst: &mut [u8]));
retarget!("avx2", delta_decode = generic::delta_decode, (ts: usize, r: Option<&[u8]>, src: &[u8], dst: &mut [u8]));
retarget!("avx2", trunc_prec = generic::trunc_prec, (ts: usize, zeroed: u32, src: &[u8], dst: &mut [u8]));
retarget!("avx2", bytedelta_encode = generic::bytedelta_encode, (ts: usize, src: &[u8], dst: &mut [u8]));
retarget!("avx2", bytedelta_decode = generic::bytedelta_decode, (ts: usize, src: &[u8], dst: &mut [u8]));
