//! Run-time choice of the kernel implementation.
//!
//! Each instruction set has one static [`Kernels`] table of plain function
//! pointers. A table for a SIMD instruction set is only handed out after the
//! CPU was found to support it, which is what makes its entries safe to call.
//! The table used by the free functions of this crate is picked once per
//! process (first call) and cached: the best the CPU offers, or the one named
//! by the `OXIBLOSC_KERNELS` environment variable.

use std::fmt;
use std::str::FromStr;
use std::sync::OnceLock;

use crate::{Error, generic};

/// Name of the environment variable that forces one kernel implementation.
pub const ENV_VAR: &str = "OXIBLOSC_KERNELS";

/// An implementation of the kernels, named after the instruction set it uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Isa {
    /// Portable scalar Rust: the reference for all others.
    Generic,
    /// x86-64 SSE2 (every x86-64 CPU has it).
    Sse2,
    /// x86-64 AVX2.
    Avx2,
    /// AArch64 NEON (every AArch64 CPU has it).
    Neon,
}

impl Isa {
    /// Every implementation this crate knows of, best last.
    pub const ALL: [Isa; 4] = [Isa::Generic, Isa::Sse2, Isa::Avx2, Isa::Neon];

    /// The lowercase name used by `OXIBLOSC_KERNELS` (`generic`, `sse2`, `avx2`, `neon`).
    pub fn name(self) -> &'static str {
        match self {
            Isa::Generic => "generic",
            Isa::Sse2 => "sse2",
            Isa::Avx2 => "avx2",
            Isa::Neon => "neon",
        }
    }

    /// Whether this build, on this CPU, can run the implementation.
    pub fn is_available(self) -> bool {
        Kernels::get(self).is_some()
    }

    /// The implementation forced by `OXIBLOSC_KERNELS`, if the variable is set.
    ///
    /// # Errors
    /// [`Error::UnknownIsa`] for a name that is not one of [`Isa::name`]'s,
    /// [`Error::UnsupportedIsa`] for one this CPU cannot run.
    pub fn from_env() -> Result<Option<Isa>, Error> {
        match std::env::var(ENV_VAR) {
            Err(std::env::VarError::NotPresent) => Ok(None),
            Err(std::env::VarError::NotUnicode(v)) => {
                Err(Error::UnknownIsa(v.to_string_lossy().into_owned()))
            }
            Ok(v) if v.trim().is_empty() => Ok(None),
            Ok(v) => {
                let isa: Isa = v.parse()?;
                if isa.is_available() {
                    Ok(Some(isa))
                } else {
                    Err(Error::UnsupportedIsa(isa))
                }
            }
        }
    }
}

impl fmt::Display for Isa {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Isa {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Error> {
        let s = s.trim();
        Isa::ALL
            .into_iter()
            .find(|isa| isa.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| Error::UnknownIsa(s.to_owned()))
    }
}

/// `(typesize, src, dst)` kernels: shuffle, bitshuffle, bytedelta and their inverses.
pub(crate) type BytesFn = fn(usize, &[u8], &mut [u8]);
/// `(typesize, reference, src, dst)`: the delta kernels.
pub(crate) type DeltaFn = fn(usize, Option<&[u8]>, &[u8], &mut [u8]);
/// `(typesize, zeroed_bits, src, dst)`: trunc_prec.
pub(crate) type TruncFn = fn(usize, u32, &[u8], &mut [u8]);

/// One implementation of every kernel, for one instruction set.
///
/// Obtain one with [`Kernels::get`] (a given instruction set, `None` when the
/// CPU lacks it), [`Kernels::best`] (what the CPU offers) or
/// [`Kernels::active`] (what the free functions of this crate use). Its
/// methods check their arguments exactly like the free functions do.
pub struct Kernels {
    pub(crate) isa: Isa,
    pub(crate) shuffle: BytesFn,
    pub(crate) unshuffle: BytesFn,
    pub(crate) bitshuffle: BytesFn,
    pub(crate) bitunshuffle: BytesFn,
    pub(crate) delta_encode: DeltaFn,
    pub(crate) delta_decode: DeltaFn,
    pub(crate) trunc_prec: TruncFn,
    pub(crate) bytedelta_encode: BytesFn,
    pub(crate) bytedelta_decode: BytesFn,
}

impl fmt::Debug for Kernels {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Kernels").field("isa", &self.isa).finish()
    }
}

pub(crate) static GENERIC: Kernels = Kernels {
    isa: Isa::Generic,
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

/// What [`Kernels::selected`] decided.
static SELECTED: OnceLock<Result<&'static Kernels, Error>> = OnceLock::new();

impl Kernels {
    /// The table for `isa`, or `None` when this build or this CPU cannot run it.
    pub fn get(isa: Isa) -> Option<&'static Kernels> {
        match isa {
            Isa::Generic => Some(&GENERIC),
            #[cfg(target_arch = "x86_64")]
            Isa::Sse2 => crate::x86::sse2::kernels(),
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => crate::x86::avx2::kernels(),
            #[cfg(target_arch = "aarch64")]
            Isa::Neon => crate::aarch64::neon::kernels(),
            #[allow(unreachable_patterns)]
            _ => None,
        }
    }

    /// Every table this CPU can run, generic first.
    pub fn available() -> impl Iterator<Item = &'static Kernels> {
        Isa::ALL.into_iter().filter_map(Kernels::get)
    }

    /// The fastest table this CPU can run (ignores `OXIBLOSC_KERNELS`).
    pub fn best() -> &'static Kernels {
        static BEST: OnceLock<&'static Kernels> = OnceLock::new();
        BEST.get_or_init(|| Kernels::available().last().unwrap_or(&GENERIC))
    }

    /// The table the free functions use: the one named by `OXIBLOSC_KERNELS`
    /// if it is set, else [`Kernels::best`]. Decided on the first call.
    ///
    /// # Errors
    /// The error of [`Isa::from_env`] when the variable names an
    /// implementation that does not exist or that this CPU cannot run.
    // Inlined for the answer already decided: every chunk asks (out of
    // line, a call and a `Result` through memory per chunk; `#[inline]` alone
    // left it a call in the chunk decoder).
    #[inline(always)]
    pub fn selected() -> Result<&'static Kernels, Error> {
        if let Some(Ok(k)) = SELECTED.get() {
            return Ok(k);
        }
        Kernels::select()
    }

    /// [`Kernels::selected`] the first time (and when it is an error).
    #[inline(never)]
    fn select() -> Result<&'static Kernels, Error> {
        SELECTED
            .get_or_init(|| match Isa::from_env()? {
                Some(isa) => Kernels::get(isa).ok_or(Error::UnsupportedIsa(isa)),
                None => Ok(Kernels::best()),
            })
            .clone()
    }

    /// Like [`Kernels::selected`], for callers that cannot handle the error.
    ///
    /// # Panics
    /// When `OXIBLOSC_KERNELS` names an implementation that is unknown or that
    /// this CPU lacks: the variable is a testing and benchmarking switch, and
    /// silently running another implementation would falsify the results.
    pub fn active() -> &'static Kernels {
        match Kernels::selected() {
            Ok(k) => k,
            Err(e) => panic!("{e}"),
        }
    }

    /// The instruction set of this table.
    pub fn isa(&self) -> Isa {
        self.isa
    }
}
