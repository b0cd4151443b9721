//! AArch64 kernels. NEON is part of the AArch64 baseline, so no run-time
//! detection is needed: the NEON table exists whenever the target has NEON
//! (`cfg(target_feature = "neon")`).

pub(crate) mod neon;
