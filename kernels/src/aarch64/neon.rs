//! NEON kernels.

use crate::dispatch::{Isa, Kernels};
use crate::generic;

/// The NEON table (NEON is baseline on AArch64 targets that enable it).
pub(crate) fn kernels() -> Option<&'static Kernels> {
    if cfg!(target_feature = "neon") {
        Some(&KERNELS)
    } else {
        None
    }
}

static KERNELS: Kernels = Kernels {
    isa: Isa::Neon,
    shuffle: generic::shuffle,
    unshuffle: generic::unshuffle,
    bitshuffle: generic::bitshuffle,
    bitunshuffle: generic::bitunshuffle,
    delta_encode: generic::delta_encode,
    delta_decode: generic::delta_decode,
    trunc_prec: generic::trunc_prec,
    bytedelta_encode: generic::bytedelta_encode,
    bytedelta_decode: generic::bytedelta_decode,
};
