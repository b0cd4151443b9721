//! Safe, reusable zlib (RFC 1950) streams over zlib-ng 2.3 (C, built by
//! `libz-ng-sys` with cmake), the zlib C-Blosc2 3.x bundles: an [`Inflater`]
//! runs C-Blosc2's own inflater, a [`Deflater`] its compressor with the
//! parameters of its `zng_compress2` calls (window 15, memory level 8,
//! default strategy), so its streams are C-Blosc2's bytes.
//!
//! Each value owns one zlib-ng stream state, reset (not reallocated) for
//! every call, and works on whole streams held in memory. The oxiblosc
//! engine decodes with the [`Inflater`], and compresses with the
//! [`Deflater`] (at every level) only when [`DEFLATE_BUILT_BY_CLANG`]: gcc
//! 12, Debian 12's compiler, builds a deflater that runs at about half the
//! speed of C-Blosc2's own copy, clang 19 one a little faster than it
//! (perf/README.md, "zlib-ng compression built by clang 19";
//! `.cargo/zlib-ng-clang.cmake` picks clang for this repository's builds).
//!
//! ```
//! use oxiblosc_zng::{Deflater, Inflater};
//!
//! let data = b"hello hello hello hello hello hello".repeat(100);
//! let mut z = vec![0u8; data.len() + 64];
//! let n = Deflater::new(5).unwrap().compress(&data, &mut z).unwrap();
//! assert!(n > 0 && n < data.len());
//! let mut back = vec![0u8; data.len()];
//! assert_eq!(Inflater::new().unwrap().decompress(&z[..n], &mut back), Ok(data.len()));
//! assert_eq!(back, data);
//! ```
//!
//! `unsafe` lives in this crate only because zlib-ng is reached through its
//! raw bindings: every block says why it is sound.
#![deny(missing_docs)]
#![deny(unsafe_op_in_unsafe_fn)]

use std::fmt;
use std::os::raw::{c_int, c_uint, c_void};
use std::ptr;

use libz_ng_sys as z;

/// Whether libz-ng-sys compiled zlib-ng with clang (read from its cmake
/// build by `build.rs`). zlib-ng 2.3.3's `deflate_medium` (levels 3-6)
/// stalls under gcc 12 on an 8-byte reload of its match struct: a clang 19
/// build compresses about twice as fast, a little faster than C-Blosc2's
/// gcc 14 copy, so the engine takes the [`Deflater`] only from such a build.
pub const DEFLATE_BUILT_BY_CLANG: bool = cfg!(zng_clang);

/// Why a call failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ZngError {
    /// The input is not a valid zlib stream (bad header, code, distance or
    /// Adler-32 check).
    Corrupt,
    /// The input ends before the stream's end.
    Truncated,
    /// The decoded bytes do not fit in the output buffer.
    OutputFull,
    /// zlib-ng could not allocate its state.
    NoMemory,
    /// A compression level outside 0..=9.
    BadLevel,
    /// An input of 4 GiB or more to compress (zlib-ng takes 32-bit lengths
    /// per call; Blosc streams are far smaller).
    TooLarge,
}

impl fmt::Display for ZngError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ZngError::Corrupt => "invalid zlib stream",
            ZngError::Truncated => "truncated zlib stream",
            ZngError::OutputFull => "zlib stream decodes to more bytes than the output holds",
            ZngError::NoMemory => "zlib-ng could not allocate its state",
            ZngError::BadLevel => "zlib level outside 0..=9",
            ZngError::TooLarge => "input of 4 GiB or more",
        })
    }
}

impl std::error::Error for ZngError {}

unsafe extern "C" {
    fn calloc(n: usize, size: usize) -> *mut c_void;
    fn free(p: *mut c_void);
}

/// zlib-ng's allocator callback: the C heap, as its own default.
unsafe extern "C" fn zalloc(_opaque: *mut c_void, items: c_uint, size: c_uint) -> *mut c_void {
    // SAFETY: calloc has no preconditions (it checks the product for
    // overflow and returns null on failure, which zlib-ng checks).
    unsafe { calloc(items as usize, size as usize) }
}

/// zlib-ng's free callback.
unsafe extern "C" fn zfree(_opaque: *mut c_void, p: *mut c_void) {
    // SAFETY: zlib-ng frees only what `zalloc` returned.
    unsafe { free(p) }
}

/// A zeroed stream with our allocator, boxed: zlib-ng's state keeps a
/// pointer back to its stream, which therefore must not move.
fn new_stream() -> Box<z::z_stream> {
    Box::new(z::z_stream {
        next_in: ptr::null_mut(),
        avail_in: 0,
        total_in: 0,
        next_out: ptr::null_mut(),
        avail_out: 0,
        total_out: 0,
        msg: ptr::null_mut(),
        state: ptr::null_mut(),
        zalloc,
        zfree,
        opaque: ptr::null_mut(),
        data_type: 0,
        adler: 0,
        reserved: 0,
    })
}

/// A zlib-ng inflate state, reused for every stream.
pub struct Inflater {
    strm: Box<z::z_stream>,
}

// SAFETY: the stream and its state belong to this value alone, are touched
// only through `&mut self`, and zlib-ng keeps no thread-local state.
unsafe impl Send for Inflater {}

impl Inflater {
    /// A new inflate state (zlib-ng allocates its state and window now).
    pub fn new() -> Result<Inflater, ZngError> {
        let mut strm = new_stream();
        // SAFETY: a zeroed stream with allocator callbacks, boxed.
        let rc = unsafe {
            z::inflateInit_(
                &mut *strm,
                z::zlibVersion(),
                size_of::<z::z_stream>() as c_int,
            )
        };
        if rc == z::Z_OK {
            Ok(Inflater { strm })
        } else {
            Err(ZngError::NoMemory)
        }
    }

    /// Decode the zlib stream at the start of `src` into `dst`; returns the
    /// bytes written. Bytes after the stream's end are ignored.
    pub fn decompress(&mut self, src: &[u8], dst: &mut [u8]) -> Result<usize, ZngError> {
        let s = &mut *self.strm;
        // SAFETY: `s` was set up by inflateInit and is not ended.
        if unsafe { z::inflateReset(s) } != z::Z_OK {
            return Err(ZngError::Corrupt);
        }
        s.next_in = src.as_ptr().cast_mut();
        s.next_out = dst.as_mut_ptr();
        let (mut in_left, mut out_left) = (src.len(), dst.len());
        loop {
            // zlib-ng counts in 32 bits: hand it at most 4 GiB - 1 per call.
            let ai = in_left.min(c_uint::MAX as usize) as c_uint;
            let ao = out_left.min(c_uint::MAX as usize) as c_uint;
            s.avail_in = ai;
            s.avail_out = ao;
            // SAFETY: next_in/avail_in cover bytes of `src`, next_out/avail_out
            // bytes of `dst`, both borrowed for this call; zlib-ng reads and
            // writes only within them (it never writes through next_in).
            let rc = unsafe { z::inflate(s, z::Z_FINISH) };
            let (used_in, used_out) = ((ai - s.avail_in) as usize, (ao - s.avail_out) as usize);
            in_left -= used_in;
            out_left -= used_out;
            match rc {
                z::Z_STREAM_END => return Ok(dst.len() - out_left),
                z::Z_OK | z::Z_BUF_ERROR => {
                    if out_left == 0 {
                        // More to decode (or an unread check) and no room.
                        return Err(if in_left == 0 {
                            ZngError::Truncated
                        } else {
                            ZngError::OutputFull
                        });
                    }
                    if in_left == 0 {
                        return Err(ZngError::Truncated);
                    }
                    if used_in == 0 && used_out == 0 {
                        // No progress with input and room left: not a
                        // valid stream; do not spin.
                        return Err(ZngError::Corrupt);
                    }
                }
                z::Z_MEM_ERROR => return Err(ZngError::NoMemory),
                _ => return Err(ZngError::Corrupt),
            }
        }
    }
}

impl Drop for Inflater {
    fn drop(&mut self) {
        // SAFETY: set up by inflateInit, ended once, here.
        unsafe { z::inflateEnd(&mut *self.strm) };
    }
}

/// A zlib-ng deflate state for one level, reused for every stream: its
/// streams are those of zlib-ng's `compress2` at that level (window 15,
/// memory level 8, default strategy), which is what C-Blosc2 calls.
pub struct Deflater {
    strm: Box<z::z_stream>,
    level: u8,
}

// SAFETY: as for `Inflater`.
unsafe impl Send for Deflater {}

impl Deflater {
    /// A new deflate state at `level` (0..=9).
    pub fn new(level: u8) -> Result<Deflater, ZngError> {
        if level > 9 {
            return Err(ZngError::BadLevel);
        }
        let mut strm = new_stream();
        // SAFETY: a zeroed stream with allocator callbacks, boxed; the
        // parameters are compress2's.
        let rc = unsafe {
            z::deflateInit2_(
                &mut *strm,
                c_int::from(level),
                z::Z_DEFLATED,
                15,
                8,
                z::Z_DEFAULT_STRATEGY,
                z::zlibVersion(),
                size_of::<z::z_stream>() as c_int,
            )
        };
        match rc {
            z::Z_OK => Ok(Deflater { strm, level }),
            z::Z_MEM_ERROR => Err(ZngError::NoMemory),
            _ => Err(ZngError::BadLevel),
        }
    }

    /// The level this state compresses at.
    pub fn level(&self) -> u8 {
        self.level
    }

    /// Compress `src` into one zlib stream in `dst`; returns its length, or
    /// `Ok(0)` when it does not fit in `dst`.
    pub fn compress(&mut self, src: &[u8], dst: &mut [u8]) -> Result<usize, ZngError> {
        let ai = c_uint::try_from(src.len()).map_err(|_| ZngError::TooLarge)?;
        let s = &mut *self.strm;
        // SAFETY: `s` was set up by deflateInit2 and is not ended.
        if unsafe { z::deflateReset(s) } != z::Z_OK {
            return Err(ZngError::NoMemory);
        }
        // A stream longer than 4 GiB - 1 never fits a Blosc block: the
        // room is capped, not the stream.
        let ao = dst.len().min(c_uint::MAX as usize) as c_uint;
        s.next_in = src.as_ptr().cast_mut();
        s.avail_in = ai;
        s.next_out = dst.as_mut_ptr();
        s.avail_out = ao;
        // SAFETY: next_in/avail_in cover `src`, next_out/avail_out a prefix
        // of `dst`, both borrowed for this call; zlib-ng stays within them.
        let rc = unsafe { z::deflate(s, z::Z_FINISH) };
        match rc {
            z::Z_STREAM_END => Ok((ao - s.avail_out) as usize),
            // Out of room before the end.
            z::Z_OK | z::Z_BUF_ERROR => Ok(0),
            z::Z_MEM_ERROR => Err(ZngError::NoMemory),
            _ => Err(ZngError::Corrupt),
        }
    }
}

impl Drop for Deflater {
    fn drop(&mut self) {
        // SAFETY: set up by deflateInit2, ended once, here.
        unsafe { z::deflateEnd(&mut *self.strm) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(n: usize) -> Vec<u8> {
        let mut st = 1u32;
        (0..n)
            .map(|i| {
                st = st.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                ((i / 7) as u8).wrapping_add((st >> 28) as u8)
            })
            .collect()
    }

    /// `src` as a zlib stream at `level`, written by zlib-rs (zlib-ng's
    /// algorithms in Rust: the streams zlib-ng writes at those levels).
    fn compressed(level: u8, src: &[u8]) -> Vec<u8> {
        // Level 1 (static Huffman codes only) can grow noisy data by 1/8.
        let mut z = vec![0u8; src.len() * 2 + 64];
        let mut d = zlib_rs::Deflate::new(i32::from(level), true, 15);
        let status = d.compress(src, &mut z, zlib_rs::DeflateFlush::Finish);
        assert!(
            matches!(status, Ok(zlib_rs::Status::StreamEnd)),
            "level {level}"
        );
        z.truncate(d.total_out() as usize);
        z
    }

    /// One reused state decodes the streams of every level, of every length.
    #[test]
    fn every_level_round_trips_with_one_reused_state() {
        let mut inf = Inflater::new().unwrap();
        for level in 0..=9 {
            for n in [0, 1, 100, 65_536, 300_001] {
                let src = data(n);
                let z = compressed(level, &src);
                let mut back = vec![0xAAu8; n];
                assert_eq!(inf.decompress(&z, &mut back), Ok(n), "level {level} n {n}");
                assert_eq!(back, src);
            }
        }
    }

    #[test]
    fn bad_streams_are_errors_and_the_state_recovers() {
        let src = data(40_000);
        let z = compressed(5, &src);
        let mut inf = Inflater::new().unwrap();
        let mut out = vec![0u8; src.len()];
        // Every truncation: Truncated (never Ok, never a panic).
        for cut in [0, 1, 2, 10, z.len() / 2, z.len() - 4, z.len() - 1] {
            assert_eq!(
                inf.decompress(&z[..cut], &mut out),
                Err(ZngError::Truncated),
                "cut {cut}"
            );
        }
        // Too small an output.
        let mut small = vec![0u8; src.len() - 1];
        assert_eq!(inf.decompress(&z, &mut small), Err(ZngError::OutputFull));
        // A wrong check, a bad header.
        let mut bad = z.clone();
        *bad.last_mut().unwrap() ^= 1;
        assert_eq!(inf.decompress(&bad, &mut out), Err(ZngError::Corrupt));
        bad = z.clone();
        bad[0] = 0x77;
        assert_eq!(inf.decompress(&bad, &mut out), Err(ZngError::Corrupt));
        // Bit flips anywhere: an error or the right length, never a panic.
        for i in 0..z.len().min(2000) {
            let mut f = z.clone();
            f[i] ^= 0x10;
            let _ = inf.decompress(&f, &mut out);
        }
        // Trailing bytes are not read; the state still decodes.
        let mut more = z.clone();
        more.extend_from_slice(b"trailing");
        assert_eq!(inf.decompress(&more, &mut out), Ok(src.len()));
        assert_eq!(out, src);
        assert_eq!(inf.decompress(&z, &mut out), Ok(src.len()));
    }

    /// The [`Deflater`]: one reused state per level writes what a fresh
    /// one writes, and zlib-rs's bytes (the fallback the engine takes from
    /// a gcc build), and the streams decode back.
    #[test]
    fn deflater_every_level_reused_state_writes_zlib_rs_bytes() {
        let mut inf = Inflater::new().unwrap();
        for level in 0..=9 {
            let mut def = Deflater::new(level).unwrap();
            assert_eq!(def.level(), level);
            for n in [0, 1, 100, 65_536, 300_001] {
                let src = data(n);
                let mut z = vec![0u8; n * 2 + 64];
                let k = def.compress(&src, &mut z).unwrap();
                assert!(k > 0, "level {level} n {n}");
                let mut fresh = vec![0u8; n * 2 + 64];
                let f = Deflater::new(level)
                    .unwrap()
                    .compress(&src, &mut fresh)
                    .unwrap();
                assert_eq!(z[..k], fresh[..f], "level {level} n {n}");
                assert_eq!(z[..k], compressed(level, &src)[..], "level {level} n {n}");
                let mut back = vec![0xAAu8; n];
                assert_eq!(inf.decompress(&z[..k], &mut back), Ok(n));
                assert_eq!(back, src);
            }
        }
    }

    #[test]
    fn deflater_stream_that_does_not_fit_is_zero_and_the_state_recovers() {
        let src = data(50_000);
        let mut def = Deflater::new(5).unwrap();
        let mut small = vec![0u8; 100];
        assert_eq!(def.compress(&src, &mut small), Ok(0));
        let good = compressed(5, &src);
        let mut z = vec![0u8; good.len()];
        assert_eq!(def.compress(&src, &mut z), Ok(good.len()));
        assert_eq!(z, good);
        let mut short = vec![0u8; good.len() - 1];
        assert_eq!(def.compress(&src, &mut short), Ok(0));
        assert_eq!(Deflater::new(10).err(), Some(ZngError::BadLevel));
    }

    /// This repository's builds take clang when it is installed
    /// (`.cargo/zlib-ng-clang.cmake`); CI installs it (`.ci/prereqs.sh`).
    #[test]
    fn this_build_says_which_compiler_built_zlib_ng() {
        let clang = ["clang-21", "clang-20", "clang-19"].iter().any(|c| {
            std::process::Command::new(c)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        });
        assert_eq!(
            DEFLATE_BUILT_BY_CLANG, clang,
            "zlib-ng was built before clang was installed (or removed): \
             `cargo clean -p libz-ng-sys` makes cmake configure it again"
        );
    }
}
