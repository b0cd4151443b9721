//! A safe, reusable zlib (RFC 1950) inflater over zlib-ng 2.3 (C, built by
//! `libz-ng-sys` with cmake), the zlib C-Blosc2 3.x bundles: an [`Inflater`]
//! runs C-Blosc2's own inflater.
//!
//! It owns one zlib-ng stream state, reset (not reallocated) for every
//! call, and decodes whole streams held in memory. There is no deflater:
//! this repository's gcc 12 build of zlib-ng compresses at about half the
//! speed of C-Blosc2's own copy (perf/README.md, session 14), so the
//! oxiblosc engine compresses with zlib-rs and libdeflate.
//!
//! ```
//! // "hello" as a zlib stream (one stored block).
//! let z = [
//!     0x78, 0x01, 0x01, 0x05, 0x00, 0xfa, 0xff, b'h', b'e', b'l', b'l', b'o', 0x06, 0x2c,
//!     0x02, 0x15,
//! ];
//! let mut out = [0u8; 5];
//! let mut inflater = oxiblosc_zng::Inflater::new().unwrap();
//! assert_eq!(inflater.decompress(&z, &mut out), Ok(5));
//! assert_eq!(&out, b"hello");
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
}

impl fmt::Display for ZngError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ZngError::Corrupt => "invalid zlib stream",
            ZngError::Truncated => "truncated zlib stream",
            ZngError::OutputFull => "zlib stream decodes to more bytes than the output holds",
            ZngError::NoMemory => "zlib-ng could not allocate its state",
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
}
