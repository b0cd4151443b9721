//! Warm engines for the C calls: each thread keeps its last few
//! `Compressor`s and `Decompressor`s (keyed by their parameters), so a C
//! program calling `blosc2_compress_ctx`, `blosc2_decompress`,
//! `blosc_getitem`, ... in a loop reuses the engine's scratch buffers and
//! codec states instead of allocating (and page-faulting) them on every
//! call, as C-Blosc2 reuses its context's. Parameters and outputs are the
//! same as with a fresh engine: only allocations are saved.
//!
//! A call made while the cache is in use on this thread (a prefilter or
//! postfilter calling back into the library) gets a fresh engine.

use std::cell::RefCell;

use oxiblosc::{CParams, Compressor, DParams, Decompressor};

/// Engines kept per thread, per kind (least recently used dropped first).
const KEEP: usize = 4;

thread_local! {
    static COMPRESSORS: RefCell<Vec<Compressor>> = const { RefCell::new(Vec::new()) };
    static DECOMPRESSORS: RefCell<Vec<Decompressor>> = const { RefCell::new(Vec::new()) };
}

/// Runs `f` with a warm `Compressor` for `p`.
pub fn with_compressor<R>(p: CParams, f: impl FnOnce(&mut Compressor) -> R) -> R {
    COMPRESSORS.with(|cell| match cell.try_borrow_mut() {
        Ok(mut v) => {
            let mut c = match v.iter().position(|c| *c.params() == p) {
                Some(i) => v.remove(i),
                None => Compressor::new(p),
            };
            // Not borrowed while `f` runs: a re-entrant call finds the
            // cache free (and `c` out of it).
            drop(v);
            let r = f(&mut c);
            if let Ok(mut v) = cell.try_borrow_mut() {
                v.insert(0, c);
                v.truncate(KEEP);
            }
            r
        }
        Err(_) => f(&mut Compressor::new(p)),
    })
}

/// Runs `f` with a warm `Decompressor` for `p`.
pub fn with_decompressor<R>(p: DParams, f: impl FnOnce(&mut Decompressor) -> R) -> R {
    DECOMPRESSORS.with(|cell| match cell.try_borrow_mut() {
        Ok(mut v) => {
            let mut d = match v.iter().position(|d| *d.params() == p) {
                Some(i) => v.remove(i),
                None => Decompressor::new(p),
            };
            drop(v);
            let r = f(&mut d);
            if let Ok(mut v) = cell.try_borrow_mut() {
                v.insert(0, d);
                v.truncate(KEEP);
            }
            r
        }
        Err(_) => f(&mut Decompressor::new(p)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use oxiblosc::Codec;

    #[test]
    fn engines_are_reused_and_give_the_fresh_bytes() {
        let src: Vec<u8> = (0..200_000u32)
            .flat_map(|i| (i / 7).to_le_bytes())
            .collect();
        let p = CParams::default().codec(Codec::Lz4).typesize(4);
        let fresh = Compressor::new(p.clone()).compress(&src).unwrap();
        for _ in 0..3 {
            let mut out = vec![0u8; src.len() + 64];
            let n = with_compressor(p.clone(), |c| c.compress_into(&src, &mut out)).unwrap();
            assert_eq!(&out[..n], &fresh[..]);
        }
        COMPRESSORS.with(|c| assert_eq!(c.borrow().len(), 1));
        // Other parameters: a second engine, at most KEEP kept.
        for l in 1..=9 {
            let q = p.clone().clevel(l);
            with_compressor(q, |c| c.compress(&src)).unwrap();
        }
        COMPRESSORS.with(|c| assert_eq!(c.borrow().len(), KEEP));
        let mut back = vec![0u8; src.len()];
        for _ in 0..2 {
            let n = with_decompressor(DParams::default(), |d| d.decompress_into(&fresh, &mut back))
                .unwrap();
            assert_eq!((n, &back), (src.len(), &src));
        }
        DECOMPRESSORS.with(|c| assert_eq!(c.borrow().len(), 1));
    }

    #[test]
    fn a_reentrant_call_gets_its_own_engine() {
        let src = vec![7u8; 10_000];
        let p = CParams::default().typesize(1);
        let n = with_compressor(p.clone(), |_outer| {
            // The cache is free while the outer engine is out of it.
            with_compressor(p.clone(), |inner| inner.compress(&src))
                .unwrap()
                .len()
        });
        assert!(n > 0);
        let r = DECOMPRESSORS.with(|cell| {
            let _held = cell.borrow_mut();
            with_decompressor(DParams::default(), |d| d.params().nthreads)
        });
        assert_eq!(r, 1);
    }
}
