//! Byte-transform kernels of the Blosc2 filter pipeline.
//!
//! The filters Blosc2 runs on every block before and after the codec: byte
//! [`shuffle`], [`bitshuffle`], [`delta_encode`], [`trunc_prec`] and
//! [`bytedelta_encode`], each with its inverse. The output layouts are exactly
//! C-Blosc2's, so buffers made here and there are interchangeable.
//!
//! Each kernel exists as portable scalar Rust (the reference) and, where it
//! pays, as SSE2, AVX2 and NEON code. The best implementation the CPU offers
//! is chosen once, at the first call; the environment variable
//! `OXIBLOSC_KERNELS=generic|sse2|avx2|neon` forces one (for tests and
//! benchmarks), and [`Kernels::get`] gives any available one explicitly.
//!
//! [`advise_huge_pages`] asks Linux for huge pages for a large buffer
//! before it is first written (the kernels' callers fill buffers of tens of
//! megabytes).
//!
//! Every kernel takes `src` and `dst` of equal length (they cannot alias:
//! one is shared, the other exclusive) and returns an [`Error`] for bad
//! arguments rather than panicking.
//!
//! ```
//! use oxiblosc_kernels::{shuffle, unshuffle};
//!
//! let src: Vec<u8> = (0u32..1000).flat_map(|v| v.to_le_bytes()).collect();
//! let mut shuffled = vec![0; src.len()];
//! shuffle(4, &src, &mut shuffled)?;
//! // Byte 0 of every element comes first: 0, 1, 2, ...
//! assert_eq!(&shuffled[..4], &[0, 1, 2, 3]);
//! let mut back = vec![0; src.len()];
//! unshuffle(4, &shuffled, &mut back)?;
//! assert_eq!(back, src);
//! # Ok::<(), oxiblosc_kernels::Error>(())
//! ```

#![deny(missing_docs)]
#![deny(unsafe_op_in_unsafe_fn)]

use std::fmt;

mod dispatch;
mod generic;
mod mem;

#[cfg(target_arch = "aarch64")]
mod aarch64;
#[cfg(target_arch = "x86_64")]
mod x86;

pub use dispatch::{ENV_VAR, Isa, Kernels};
pub use mem::{HUGE_PAGES_FROM, advise_huge_pages, advise_huge_pages_at, prefetch};

/// What was wrong with the arguments of a kernel call.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// `src` and `dst` differ in length.
    LengthMismatch {
        /// Length of the source.
        src: usize,
        /// Length of the destination.
        dst: usize,
    },
    /// A type size of 0.
    ZeroTypesize,
    /// The delta reference block is shorter than the block it applies to.
    ReferenceTooShort {
        /// Length of the reference.
        reference: usize,
        /// Length needed (the length of `src`).
        needed: usize,
    },
    /// `trunc_prec` only handles 4-byte (f32) and 8-byte (f64) elements.
    TruncPrecTypesize(usize),
    /// `trunc_prec` precision out of range for the float type.
    TruncPrecBits {
        /// The element size (4 or 8).
        typesize: usize,
        /// The precision asked for (negative: number of bits to clear).
        prec: i8,
    },
    /// `OXIBLOSC_KERNELS` names no known implementation.
    UnknownIsa(String),
    /// The implementation asked for cannot run on this CPU or build.
    UnsupportedIsa(Isa),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::LengthMismatch { src, dst } => write!(
                f,
                "kernel buffers differ in length: src has {src} bytes, dst has {dst}"
            ),
            Error::ZeroTypesize => f.write_str("typesize must be at least 1"),
            Error::ReferenceTooShort { reference, needed } => write!(
                f,
                "delta reference block has {reference} bytes, the block needs {needed}"
            ),
            Error::TruncPrecTypesize(ts) => {
                write!(f, "trunc_prec needs typesize 4 (f32) or 8 (f64), got {ts}")
            }
            Error::TruncPrecBits { typesize, prec } => {
                let mant = if *typesize == 4 { 23 } else { 52 };
                write!(
                    f,
                    "trunc_prec precision {prec} is out of range for {}-byte floats \
                     (valid: 1..={mant} bits to keep, or -{}..=-1 bits to clear)",
                    typesize,
                    mant - 1
                )
            }
            Error::UnknownIsa(name) => write!(
                f,
                "{}={name:?} names no kernel implementation (use generic, sse2, avx2 or neon)",
                ENV_VAR
            ),
            Error::UnsupportedIsa(isa) => write!(
                f,
                "{}={isa}: this CPU or build cannot run the {isa} kernels (available: {})",
                ENV_VAR,
                Kernels::available()
                    .map(|k| k.isa().name())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }
}

impl std::error::Error for Error {}

#[inline]
fn check(typesize: usize, src: &[u8], dst: &[u8]) -> Result<(), Error> {
    if typesize == 0 {
        return Err(Error::ZeroTypesize);
    }
    if src.len() != dst.len() {
        return Err(Error::LengthMismatch {
            src: src.len(),
            dst: dst.len(),
        });
    }
    Ok(())
}

#[inline]
fn check_reference(reference: Option<&[u8]>, src: &[u8]) -> Result<(), Error> {
    match reference {
        Some(r) if r.len() < src.len() => Err(Error::ReferenceTooShort {
            reference: r.len(),
            needed: src.len(),
        }),
        _ => Ok(()),
    }
}

/// Number of mantissa bits `trunc_prec` clears for `typesize` and `prec`,
/// following C-Blosc2: a positive `prec` is the number of mantissa bits to
/// keep, a negative one the number to clear.
///
/// # Errors
/// [`Error::TruncPrecTypesize`] unless `typesize` is 4 or 8;
/// [`Error::TruncPrecBits`] when the precision is 0 or out of range.
pub fn trunc_prec_zeroed_bits(typesize: usize, prec: i8) -> Result<u32, Error> {
    let mant: i32 = match typesize {
        4 => 23,
        8 => 52,
        _ => return Err(Error::TruncPrecTypesize(typesize)),
    };
    let p = i32::from(prec);
    let zeroed = if p >= 0 { mant - p } else { -p };
    if p.abs() > mant || zeroed >= mant || zeroed < 0 {
        return Err(Error::TruncPrecBits { typesize, prec });
    }
    Ok(zeroed as u32)
}

// The four transposes below are inlined into their callers: each is two
// tests and a call through the table, and out of line its `Result` came back
// through memory (the decoder calls one per block; perf/README.md, session 24).
impl Kernels {
    /// Byte shuffle of `typesize`-byte elements: byte `j` of element `i`
    /// goes to `dst[j * n + i]` (`n` whole elements); trailing bytes copied.
    ///
    /// # Errors
    /// [`Error::ZeroTypesize`], [`Error::LengthMismatch`].
    #[inline(always)]
    pub fn shuffle(&self, typesize: usize, src: &[u8], dst: &mut [u8]) -> Result<(), Error> {
        check(typesize, src, dst)?;
        (self.shuffle)(typesize, src, dst);
        Ok(())
    }

    /// Inverse of [`Kernels::shuffle`].
    ///
    /// # Errors
    /// [`Error::ZeroTypesize`], [`Error::LengthMismatch`].
    #[inline(always)]
    pub fn unshuffle(&self, typesize: usize, src: &[u8], dst: &mut [u8]) -> Result<(), Error> {
        check(typesize, src, dst)?;
        (self.unshuffle)(typesize, src, dst);
        Ok(())
    }

    /// Bit shuffle as C-Blosc2 (format version >= 3) does it: the largest
    /// multiple of 8 whole elements is bit-transposed (bit `b` of byte `j` of
    /// every element packed LSB-first into row `8 * j + b`), the rest copied.
    ///
    /// # Errors
    /// [`Error::ZeroTypesize`], [`Error::LengthMismatch`].
    #[inline(always)]
    pub fn bitshuffle(&self, typesize: usize, src: &[u8], dst: &mut [u8]) -> Result<(), Error> {
        check(typesize, src, dst)?;
        (self.bitshuffle)(typesize, src, dst);
        Ok(())
    }

    /// Inverse of [`Kernels::bitshuffle`].
    ///
    /// # Errors
    /// [`Error::ZeroTypesize`], [`Error::LengthMismatch`].
    #[inline(always)]
    pub fn bitunshuffle(&self, typesize: usize, src: &[u8], dst: &mut [u8]) -> Result<(), Error> {
        check(typesize, src, dst)?;
        (self.bitunshuffle)(typesize, src, dst);
        Ok(())
    }

    /// Bit shuffle as C-Blosc 1.x (chunk format version 2) wrote it: when the
    /// number of whole elements is a multiple of 8 they are all transposed and
    /// the byte tail copied, otherwise the whole buffer is copied unchanged.
    ///
    /// # Errors
    /// [`Error::ZeroTypesize`], [`Error::LengthMismatch`].
    pub fn bitshuffle_blosc1(
        &self,
        typesize: usize,
        src: &[u8],
        dst: &mut [u8],
    ) -> Result<(), Error> {
        check(typesize, src, dst)?;
        if (src.len() / typesize).is_multiple_of(8) {
            (self.bitshuffle)(typesize, src, dst);
        } else {
            dst.copy_from_slice(src);
        }
        Ok(())
    }

    /// Inverse of [`Kernels::bitshuffle_blosc1`]: what a version-2 chunk needs.
    ///
    /// # Errors
    /// [`Error::ZeroTypesize`], [`Error::LengthMismatch`].
    pub fn bitunshuffle_blosc1(
        &self,
        typesize: usize,
        src: &[u8],
        dst: &mut [u8],
    ) -> Result<(), Error> {
        check(typesize, src, dst)?;
        if (src.len() / typesize).is_multiple_of(8) {
            (self.bitunshuffle)(typesize, src, dst);
        } else {
            dst.copy_from_slice(src);
        }
        Ok(())
    }

    /// DELTA filter, forward. Words are `typesize` bytes for typesize 1, 2, 4,
    /// 8; 8 bytes for other multiples of 8; 1 byte otherwise. Without a
    /// `reference` (block 0 of a chunk) every word but the first is XORed with
    /// the word before it; with one (any later block: block 0 of the
    /// unfiltered input) every word is XORed with the reference word at the
    /// same offset. Trailing bytes that do not fill a word are copied.
    ///
    /// # Errors
    /// [`Error::ZeroTypesize`], [`Error::LengthMismatch`],
    /// [`Error::ReferenceTooShort`].
    pub fn delta_encode(
        &self,
        typesize: usize,
        reference: Option<&[u8]>,
        src: &[u8],
        dst: &mut [u8],
    ) -> Result<(), Error> {
        check(typesize, src, dst)?;
        check_reference(reference, src)?;
        (self.delta_encode)(typesize, reference, src, dst);
        Ok(())
    }

    /// Inverse of [`Kernels::delta_encode`] with the same reference (for
    /// blocks after the first: block 0 of the decoded output).
    ///
    /// # Errors
    /// [`Error::ZeroTypesize`], [`Error::LengthMismatch`],
    /// [`Error::ReferenceTooShort`].
    pub fn delta_decode(
        &self,
        typesize: usize,
        reference: Option<&[u8]>,
        src: &[u8],
        dst: &mut [u8],
    ) -> Result<(), Error> {
        check(typesize, src, dst)?;
        check_reference(reference, src)?;
        (self.delta_decode)(typesize, reference, src, dst);
        Ok(())
    }

    /// TRUNC_PREC (lossy): clears low mantissa bits of f32 (`typesize` 4) or
    /// f64 (`typesize` 8) values. `prec > 0` keeps that many mantissa bits,
    /// `prec < 0` clears `-prec` bits (the filter meta byte read as `i8`).
    /// Trailing bytes that do not form a whole element are copied.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`], and those of [`trunc_prec_zeroed_bits`].
    pub fn trunc_prec(
        &self,
        typesize: usize,
        prec: i8,
        src: &[u8],
        dst: &mut [u8],
    ) -> Result<(), Error> {
        let zeroed = trunc_prec_zeroed_bits(typesize, prec)?;
        check(typesize, src, dst)?;
        (self.trunc_prec)(typesize, zeroed, src, dst);
        Ok(())
    }

    /// BYTEDELTA (filter id 35), forward: the buffer is `typesize` streams of
    /// `len / typesize` bytes, each byte replaced by its difference from the
    /// previous byte of its stream (mod 256). Trailing bytes copied.
    ///
    /// # Errors
    /// [`Error::ZeroTypesize`], [`Error::LengthMismatch`].
    pub fn bytedelta_encode(
        &self,
        typesize: usize,
        src: &[u8],
        dst: &mut [u8],
    ) -> Result<(), Error> {
        check(typesize, src, dst)?;
        (self.bytedelta_encode)(typesize, src, dst);
        Ok(())
    }

    /// Inverse of [`Kernels::bytedelta_encode`].
    ///
    /// # Errors
    /// [`Error::ZeroTypesize`], [`Error::LengthMismatch`].
    pub fn bytedelta_decode(
        &self,
        typesize: usize,
        src: &[u8],
        dst: &mut [u8],
    ) -> Result<(), Error> {
        check(typesize, src, dst)?;
        (self.bytedelta_decode)(typesize, src, dst);
        Ok(())
    }
}

macro_rules! free_fn {
    ($(#[$doc:meta])* $name:ident($($arg:ident: $ty:ty),*)) => {
        $(#[$doc])*
        ///
        /// Runs on [`Kernels::selected`]; an `OXIBLOSC_KERNELS` naming an
        /// implementation this CPU cannot run is an `Err`, as are bad
        /// arguments.
        pub fn $name($($arg: $ty),*) -> Result<(), Error> {
            Kernels::selected()?.$name($($arg),*)
        }
    };
}

free_fn!(
    /// Byte shuffle; see [`Kernels::shuffle`].
    shuffle(typesize: usize, src: &[u8], dst: &mut [u8])
);
free_fn!(
    /// Byte unshuffle; see [`Kernels::unshuffle`].
    unshuffle(typesize: usize, src: &[u8], dst: &mut [u8])
);
free_fn!(
    /// Bit shuffle; see [`Kernels::bitshuffle`].
    bitshuffle(typesize: usize, src: &[u8], dst: &mut [u8])
);
free_fn!(
    /// Bit unshuffle; see [`Kernels::bitunshuffle`].
    bitunshuffle(typesize: usize, src: &[u8], dst: &mut [u8])
);
free_fn!(
    /// Blosc1 (format version 2) bit shuffle; see [`Kernels::bitshuffle_blosc1`].
    bitshuffle_blosc1(typesize: usize, src: &[u8], dst: &mut [u8])
);
free_fn!(
    /// Blosc1 (format version 2) bit unshuffle; see [`Kernels::bitunshuffle_blosc1`].
    bitunshuffle_blosc1(typesize: usize, src: &[u8], dst: &mut [u8])
);
free_fn!(
    /// DELTA forward; see [`Kernels::delta_encode`].
    delta_encode(typesize: usize, reference: Option<&[u8]>, src: &[u8], dst: &mut [u8])
);
free_fn!(
    /// DELTA backward; see [`Kernels::delta_decode`].
    delta_decode(typesize: usize, reference: Option<&[u8]>, src: &[u8], dst: &mut [u8])
);
free_fn!(
    /// TRUNC_PREC; see [`Kernels::trunc_prec`].
    trunc_prec(typesize: usize, prec: i8, src: &[u8], dst: &mut [u8])
);
free_fn!(
    /// BYTEDELTA forward; see [`Kernels::bytedelta_encode`].
    bytedelta_encode(typesize: usize, src: &[u8], dst: &mut [u8])
);
free_fn!(
    /// BYTEDELTA backward; see [`Kernels::bytedelta_decode`].
    bytedelta_decode(typesize: usize, src: &[u8], dst: &mut [u8])
);
