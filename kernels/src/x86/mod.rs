//! x86-64 kernels: SSE2 (baseline on x86-64) and AVX2 (detected at run time).

pub(crate) mod avx2;
pub(crate) mod sse2;

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
