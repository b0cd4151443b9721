//! User-registered filters and codecs: process-wide registries of trait
//! objects, as C-Blosc2's `blosc2_register_filter` / `blosc2_register_codec`.
//!
//! - Filters (ids 160..=255, C-Blosc2's user range): the filter pipeline
//!   calls them for those ids; a chunk records the id (and the slot's meta
//!   byte) in its extended header like any filter.
//! - Codecs (ids 160..=255): [`crate::Codec::User`]; a chunk records codec
//!   format 6 in its flags and the id in header byte 22 (CHUNK-NOTES §1),
//!   as C-Blosc2 does, and is decoded wherever a codec of that id is
//!   registered. One stream per block; a stream the codec does not shrink
//!   is stored raw.
//!
//! A chunk is decodable wherever the same ids are registered with the same
//! transforms.
//!
//! A caller may attach a [`CallContext`] (any `Send + Sync` value) to its
//! [`crate::CParams::context`] / [`crate::DParams::context`]: every user
//! filter and codec call made for those parameters receives it
//! ([`FilterCall::context`], [`CodecCall::context`]), as C-Blosc2 hands its
//! callbacks `cparams->schunk`. The C ABI puts its super-chunk handle there.
//!
//! ```
//! use std::sync::Arc;
//! use oxiblosc::plugins::{FilterCall, UserFilter, register_filter};
//! use oxiblosc::{CParams, Filter, compress, decompress};
//!
//! /// Adds 17 to every byte.
//! struct Plus17;
//! impl UserFilter for Plus17 {
//!     fn forward(&self, src: &[u8], dst: &mut [u8], _: &FilterCall) -> oxiblosc::Result<()> {
//!         dst.iter_mut().zip(src).for_each(|(d, s)| *d = s.wrapping_add(17));
//!         Ok(())
//!     }
//!     fn backward(&self, src: &[u8], dst: &mut [u8], _: &FilterCall) -> oxiblosc::Result<()> {
//!         dst.iter_mut().zip(src).for_each(|(d, s)| *d = s.wrapping_sub(17));
//!         Ok(())
//!     }
//! }
//! register_filter(200, Arc::new(Plus17)).unwrap();
//! let data: Vec<u8> = (0..10_000u32).map(|i| (i % 251) as u8).collect();
//! let p = CParams::default().filters(&[Filter::from_id(200, 0).unwrap(), Filter::Shuffle]);
//! let chunk = compress(&data, &p).unwrap();
//! assert_eq!(chunk[16], 200);
//! assert_eq!(decompress(&chunk).unwrap(), data);
//! ```

use std::any::Any;
use std::collections::BTreeMap;
use std::fmt;
use std::ops::RangeInclusive;
use std::sync::{Arc, RwLock};

use crate::error::{Result, invalid_param};

/// The filter ids users may register (C-Blosc2's user range).
pub const USER_FILTER_IDS: RangeInclusive<u8> = 160..=255;

/// An opaque value attached to compression or decompression parameters
/// ([`crate::CParams::context`], [`crate::DParams::context`]) and handed to
/// every user filter and codec call made for them: what the callback needs
/// to know about its caller (C-Blosc2 hands its callbacks the super-chunk).
/// Cloning shares the value; two contexts are equal when they share it.
///
/// ```
/// use oxiblosc::plugins::CallContext;
/// let c = CallContext::new(42u32);
/// assert_eq!(c.get::<u32>(), Some(&42));
/// assert_eq!(c.get::<u64>(), None);
/// assert_eq!(c.clone(), c);
/// assert_ne!(CallContext::new(42u32), c);
/// ```
#[derive(Clone)]
pub struct CallContext(Arc<dyn Any + Send + Sync>);

impl CallContext {
    /// A context holding `value`.
    pub fn new<T: Any + Send + Sync>(value: T) -> CallContext {
        CallContext(Arc::new(value))
    }

    /// The value, when it is a `T`.
    pub fn get<T: Any>(&self) -> Option<&T> {
        self.0.downcast_ref()
    }
}

impl PartialEq for CallContext {
    fn eq(&self, other: &CallContext) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for CallContext {}

impl fmt::Debug for CallContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CallContext({:p})", Arc::as_ptr(&self.0))
    }
}

/// What a user filter is told about the block it transforms.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct FilterCall {
    /// The filter id the chunk records.
    pub id: u8,
    /// The slot's meta byte (`filters_meta`).
    pub meta: u8,
    /// The chunk's (stored) type size.
    pub typesize: usize,
    /// The caller's context ([`crate::CParams::context`] when compressing,
    /// [`crate::DParams::context`] when decompressing).
    pub context: Option<CallContext>,
}

/// A filter registered by the user: maps a block to a block of the same
/// size (`dst.len() == src.len()`), forward before the codec and backward
/// after it. Called from the threads that compress or decompress blocks.
pub trait UserFilter: Send + Sync {
    /// Filter `src` into `dst` (compression).
    ///
    /// # Errors
    /// Any; the chunk's compression fails with it.
    fn forward(&self, src: &[u8], dst: &mut [u8], call: &FilterCall) -> Result<()>;
    /// Undo [`UserFilter::forward`]: `src` into `dst` (decompression).
    ///
    /// # Errors
    /// Any; the chunk's decompression fails with it.
    fn backward(&self, src: &[u8], dst: &mut [u8], call: &FilterCall) -> Result<()>;
}

type Registry = BTreeMap<u8, Arc<dyn UserFilter>>;

static FILTERS: RwLock<Registry> = RwLock::new(BTreeMap::new());

/// The codec ids users may register (C-Blosc2's user range).
pub const USER_CODEC_IDS: RangeInclusive<u8> = 160..=255;

/// What a user codec is told about the stream it codes.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct CodecCall {
    /// The codec id the chunk records.
    pub id: u8,
    /// The compression level (0 when decompressing).
    pub clevel: u8,
    /// The codec's meta byte (`CParams::codec_meta` when compressing, the
    /// chunk's header byte 23 when decompressing).
    pub meta: u8,
    /// The type size (of the parameters when compressing, of the chunk's
    /// header when decompressing).
    pub typesize: usize,
    /// The caller's context ([`crate::CParams::context`] when compressing,
    /// [`crate::DParams::context`] when decompressing).
    pub context: Option<CallContext>,
}

impl CodecCall {
    pub(crate) fn new(id: u8, clevel: u8) -> CodecCall {
        CodecCall {
            id,
            clevel,
            meta: 0,
            typesize: 0,
            context: None,
        }
    }
}

/// A codec registered by the user. Called from the threads that compress
/// or decompress blocks, once per stream.
pub trait UserCodec: Send + Sync {
    /// Compress `src` into at most `dst.len()` bytes; the length written,
    /// or 0 when it does not fit (the stream is then stored raw).
    ///
    /// # Errors
    /// Any; the chunk's compression fails with it.
    fn compress(&self, src: &[u8], dst: &mut [u8], call: &CodecCall) -> Result<usize>;
    /// Decompress `src` into exactly `dst.len()` bytes; the length written.
    ///
    /// # Errors
    /// Any; the chunk's decompression fails with it.
    fn decompress(&self, src: &[u8], dst: &mut [u8], call: &CodecCall) -> Result<usize>;
}

static CODECS: RwLock<BTreeMap<u8, Arc<dyn UserCodec>>> = RwLock::new(BTreeMap::new());

/// Registers `codec` under `id` (in [`USER_CODEC_IDS`]) for this process; a
/// later registration of the same id replaces it.
///
/// # Errors
/// [`crate::Error::InvalidParam`] for an id outside [`USER_CODEC_IDS`].
pub fn register_codec(id: u8, codec: Arc<dyn UserCodec>) -> Result<()> {
    if !USER_CODEC_IDS.contains(&id) {
        return Err(invalid_param(format!(
            "user codec ids are {}..={}, not {id}",
            USER_CODEC_IDS.start(),
            USER_CODEC_IDS.end()
        )));
    }
    CODECS
        .write()
        .unwrap_or_else(|e| e.into_inner())
        .insert(id, codec);
    Ok(())
}

/// The codec registered under `id`, if any.
pub fn user_codec(id: u8) -> Option<Arc<dyn UserCodec>> {
    CODECS
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .get(&id)
        .cloned()
}

/// Registers `filter` under `id` (in [`USER_FILTER_IDS`]) for this process;
/// a later registration of the same id replaces it.
///
/// # Errors
/// [`crate::Error::InvalidParam`] for an id outside [`USER_FILTER_IDS`].
pub fn register_filter(id: u8, filter: Arc<dyn UserFilter>) -> Result<()> {
    if !USER_FILTER_IDS.contains(&id) {
        return Err(invalid_param(format!(
            "user filter ids are {}..={}, not {id}",
            USER_FILTER_IDS.start(),
            USER_FILTER_IDS.end()
        )));
    }
    FILTERS
        .write()
        .unwrap_or_else(|e| e.into_inner())
        .insert(id, filter);
    Ok(())
}

/// The filter registered under `id`, if any.
pub fn user_filter(id: u8) -> Option<Arc<dyn UserFilter>> {
    FILTERS
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .get(&id)
        .cloned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CParams, Codec, DParams, Decompressor, Filter, compress, decompress};

    /// Adds `k` to every little-endian u32 (typesize 4) and checks the meta.
    struct AddK(u32);
    impl UserFilter for AddK {
        fn forward(&self, src: &[u8], dst: &mut [u8], c: &FilterCall) -> Result<()> {
            if c.meta != 101 || c.typesize != 4 {
                return Err(invalid_param("wrong call"));
            }
            for (d, s) in dst.chunks_exact_mut(4).zip(src.chunks_exact(4)) {
                let v = u32::from_le_bytes(s.try_into().unwrap()).wrapping_add(self.0);
                d.copy_from_slice(&v.to_le_bytes());
            }
            dst[src.len() / 4 * 4..].copy_from_slice(&src[src.len() / 4 * 4..]);
            Ok(())
        }
        fn backward(&self, src: &[u8], dst: &mut [u8], c: &FilterCall) -> Result<()> {
            assert_eq!((c.id, c.meta), (c.id, 101));
            for (d, s) in dst.chunks_exact_mut(4).zip(src.chunks_exact(4)) {
                let v = u32::from_le_bytes(s.try_into().unwrap()).wrapping_sub(self.0);
                d.copy_from_slice(&v.to_le_bytes());
            }
            dst[src.len() / 4 * 4..].copy_from_slice(&src[src.len() / 4 * 4..]);
            Ok(())
        }
    }

    #[test]
    fn registered_filters_run_in_any_slot_and_thread_count() {
        register_filter(170, Arc::new(AddK(1))).unwrap();
        let data: Vec<u8> = (0..300_001u32)
            .flat_map(|i| (i / 5).to_le_bytes())
            .collect();
        let user = Filter::from_id(170, 101).unwrap();
        assert_eq!((user.id(), user.name()), (170, "user"));
        for filters in [
            vec![user],
            vec![user, Filter::Delta],
            vec![Filter::Shuffle, user],
        ] {
            for nthreads in [1, 2] {
                let mut p = CParams::default()
                    .codec(Codec::Lz4)
                    .typesize(4)
                    .filters(&filters)
                    .nthreads(nthreads);
                let slot = filters.iter().position(|f| *f == user).unwrap();
                p.filters_meta[slot] = 101;
                let chunk = compress(&data, &p).unwrap();
                assert_eq!(chunk[16 + slot], 170);
                let mut d = Decompressor::new(DParams::default().nthreads(nthreads));
                assert_eq!(d.decompress(&chunk).unwrap(), data, "{filters:?}");
                // getitem runs the backward filter on the blocks it needs.
                assert_eq!(d.getitem(&chunk, 1000, 10).unwrap(), data[4000..4040]);
            }
        }
    }

    #[test]
    fn ids_outside_the_user_range_and_unregistered_ids_are_errors() {
        assert!(register_filter(35, Arc::new(AddK(1))).is_err());
        assert!(register_filter(159, Arc::new(AddK(1))).is_err());
        assert_eq!(Filter::from_id(171, 0), None);
        // A chunk naming an unregistered user filter: a clear error.
        register_filter(172, Arc::new(AddK(3))).unwrap();
        let data = vec![5u8; 4000];
        let mut p = CParams::default()
            .typesize(4)
            .filters(&[Filter::from_id(172, 0).unwrap()]);
        p.filters_meta[0] = 101;
        let mut chunk = compress(&data, &p).unwrap();
        assert_eq!(decompress(&chunk).unwrap(), data);
        chunk[16] = 173;
        assert!(decompress(&chunk).is_err());
        // A forward error fails the compression.
        p.filters_meta[0] = 7;
        assert!(compress(&data, &p).is_err());
    }

    /// Stores a u32 arange as (start, step), as C-Blosc2's test_urcodecs.
    struct Arange;
    impl UserCodec for Arange {
        fn compress(&self, src: &[u8], dst: &mut [u8], _: &CodecCall) -> Result<usize> {
            let v: Vec<u32> = src
                .chunks_exact(4)
                .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
                .collect();
            if !src.len().is_multiple_of(4) || v.len() < 2 || dst.len() < 8 {
                return Ok(0);
            }
            let step = v[1].wrapping_sub(v[0]);
            if v.windows(2).any(|w| w[1].wrapping_sub(w[0]) != step) {
                return Ok(0);
            }
            dst[..4].copy_from_slice(&v[0].to_le_bytes());
            dst[4..8].copy_from_slice(&step.to_le_bytes());
            Ok(8)
        }
        fn decompress(&self, src: &[u8], dst: &mut [u8], _: &CodecCall) -> Result<usize> {
            if src.len() != 8 || !dst.len().is_multiple_of(4) {
                return Err(invalid_param("not an arange stream"));
            }
            let start = u32::from_le_bytes(src[..4].try_into().unwrap());
            let step = u32::from_le_bytes(src[4..].try_into().unwrap());
            for (i, d) in dst.chunks_exact_mut(4).enumerate() {
                d.copy_from_slice(
                    &start
                        .wrapping_add(step.wrapping_mul(i as u32))
                        .to_le_bytes(),
                );
            }
            Ok(dst.len())
        }
    }

    #[test]
    fn registered_codecs_write_format_6_and_decode() {
        register_codec(230, Arc::new(Arange)).unwrap();
        let codec = Codec::from_id(230).unwrap();
        assert_eq!(
            (codec, codec.format(), codec.is_available()),
            (Codec::User(230), 6, true)
        );
        let data: Vec<u8> = (0..100_000u32)
            .flat_map(|i| (7 + 3 * i).to_le_bytes())
            .collect();
        for nthreads in [1, 2] {
            let p = CParams::default()
                .codec(codec)
                .typesize(4)
                .filters(&[])
                .nthreads(nthreads);
            let chunk = compress(&data, &p).unwrap();
            assert_eq!((chunk[2] >> 5, chunk[22]), (6, 230));
            assert!(chunk.len() < 1000, "{} bytes", chunk.len());
            crate::chunk::validate(&chunk).unwrap();
            let mut d = Decompressor::new(DParams::default().nthreads(nthreads));
            assert_eq!(d.decompress(&chunk).unwrap(), data);
            assert_eq!(d.getitem(&chunk, 5000, 3).unwrap(), data[20_000..20_012]);
        }
        // Not an arange: every stream stored raw, still a valid chunk.
        let noise: Vec<u8> = (0..4000u32)
            .flat_map(|i| ((i * i) ^ 0x5a5a).to_le_bytes())
            .collect();
        let chunk = compress(&noise, &CParams::default().codec(codec).typesize(4)).unwrap();
        assert_eq!(decompress(&chunk).unwrap(), noise);
        // A chunk of an unregistered user codec: an error, not a panic.
        let p = CParams::default().codec(codec).typesize(4).filters(&[]);
        let mut other = compress(&data, &p).unwrap();
        other[22] = 231;
        assert!(decompress(&other).is_err());
        assert!(register_codec(5, Arc::new(Arange)).is_err());
        assert_eq!(Codec::from_id(232), None);
    }

    /// Records what each call was told; filter 190 adds 1 per u32, codec
    /// 191 stores streams raw behind a one-byte tag.
    /// (forward, context value, meta, typesize) per codec call.
    type CodecSeen = (bool, Option<u32>, u8, usize);
    #[derive(Default)]
    struct Seen {
        filter: std::sync::Mutex<Vec<(bool, Option<u32>, usize)>>,
        codec: std::sync::Mutex<Vec<CodecSeen>>,
    }
    struct CtxFilter(Arc<Seen>);
    impl UserFilter for CtxFilter {
        fn forward(&self, src: &[u8], dst: &mut [u8], c: &FilterCall) -> Result<()> {
            let tag = c.context.as_ref().and_then(|x| x.get::<u32>()).copied();
            self.0.filter.lock().unwrap().push((true, tag, c.typesize));
            dst.iter_mut()
                .zip(src)
                .for_each(|(d, s)| *d = s.wrapping_add(1));
            Ok(())
        }
        fn backward(&self, src: &[u8], dst: &mut [u8], c: &FilterCall) -> Result<()> {
            let tag = c.context.as_ref().and_then(|x| x.get::<u32>()).copied();
            self.0.filter.lock().unwrap().push((false, tag, c.typesize));
            dst.iter_mut()
                .zip(src)
                .for_each(|(d, s)| *d = s.wrapping_sub(1));
            Ok(())
        }
    }
    struct CtxCodec(Arc<Seen>);
    impl UserCodec for CtxCodec {
        fn compress(&self, src: &[u8], dst: &mut [u8], c: &CodecCall) -> Result<usize> {
            let tag = c.context.as_ref().and_then(|x| x.get::<u32>()).copied();
            self.0
                .codec
                .lock()
                .unwrap()
                .push((true, tag, c.meta, c.typesize));
            // Halves a stream whose bytes come in equal pairs.
            if !src.len().is_multiple_of(2) || src.chunks(2).any(|p| p[0] != p[1]) {
                return Ok(0);
            }
            let n = src.len() / 2;
            if dst.len() < n {
                return Ok(0);
            }
            dst[..n]
                .iter_mut()
                .zip(src.chunks(2))
                .for_each(|(d, p)| *d = p[0]);
            Ok(n)
        }
        fn decompress(&self, src: &[u8], dst: &mut [u8], c: &CodecCall) -> Result<usize> {
            let tag = c.context.as_ref().and_then(|x| x.get::<u32>()).copied();
            self.0
                .codec
                .lock()
                .unwrap()
                .push((false, tag, c.meta, c.typesize));
            if dst.len() != 2 * src.len() {
                return Err(crate::error::corrupt("not a halved stream"));
            }
            for (d, &s) in dst.chunks_mut(2).zip(src) {
                d.fill(s);
            }
            Ok(dst.len())
        }
    }

    #[test]
    fn the_context_of_the_params_reaches_every_user_filter_and_codec_call() {
        let seen = Arc::new(Seen::default());
        register_filter(190, Arc::new(CtxFilter(seen.clone()))).unwrap();
        register_codec(191, Arc::new(CtxCodec(seen.clone()))).unwrap();
        // Pairs of equal bytes, several blocks.
        let data: Vec<u8> = (0..400_000u32).map(|i| (i / 2 % 7) as u8).collect();
        for nthreads in [1, 3] {
            seen.filter.lock().unwrap().clear();
            seen.codec.lock().unwrap().clear();
            let mut p = CParams::default()
                .codec(Codec::User(191))
                .typesize(2)
                .blocksize(32 * 1024)
                .filters(&[Filter::from_id(190, 0).unwrap()])
                .nthreads(nthreads);
            p.codec_meta = 42;
            p.context = Some(CallContext::new(7u32));
            let chunk = compress(&data, &p).unwrap();
            assert_eq!((chunk[2] >> 5, chunk[22], chunk[23]), (6, 191, 42));
            assert!(chunk.len() < data.len() / 2 + 1000, "{}", chunk.len());
            let mut dp = DParams::default().nthreads(nthreads);
            dp.context = Some(CallContext::new(9u32));
            let mut d = Decompressor::new(dp);
            assert_eq!(d.decompress(&chunk).unwrap(), data);
            assert_eq!(
                d.getitem(&chunk, 70_000, 5).unwrap(),
                data[140_000..140_010]
            );
            let f = seen.filter.lock().unwrap().clone();
            let c = seen.codec.lock().unwrap().clone();
            // 13 blocks: forward once each, backward once each plus getitem's.
            assert_eq!(f.iter().filter(|x| x.0).count(), 13);
            assert!(f.iter().filter(|x| !x.0).count() >= 14);
            assert!(
                f.iter()
                    .all(|&(fwd, tag, ts)| ts == 2 && tag == Some(if fwd { 7 } else { 9 }))
            );
            assert!(c.iter().filter(|x| x.0).count() >= 13);
            assert!(c.iter().all(|&(fwd, tag, meta, ts)| meta == 42
                && ts == 2
                && tag == Some(if fwd { 7 } else { 9 })));
            // Without a context the calls get none (and decoding still works).
            seen.codec.lock().unwrap().clear();
            assert_eq!(decompress(&chunk).unwrap(), data);
            assert!(
                seen.codec
                    .lock()
                    .unwrap()
                    .iter()
                    .all(|x| x.1.is_none() && x.2 == 42)
            );
        }
        // A super-chunk hands its parameters' contexts to the calls it makes.
        let mut p = CParams::default()
            .codec(Codec::User(191))
            .typesize(2)
            .filters(&[Filter::from_id(190, 0).unwrap()]);
        p.context = Some(CallContext::new(11u32));
        let dp = DParams {
            context: Some(CallContext::new(12u32)),
            ..DParams::default()
        };
        let mut sc = crate::schunk::SChunk::builder()
            .cparams(p)
            .dparams(dp)
            .build_memory()
            .unwrap();
        seen.filter.lock().unwrap().clear();
        sc.append_buffer(&data[..50_000]).unwrap();
        assert_eq!(sc.decompress_chunk_vec(0).unwrap(), data[..50_000]);
        let f = seen.filter.lock().unwrap().clone();
        assert!(f.iter().any(|x| x.0) && f.iter().any(|x| !x.0));
        assert!(
            f.iter()
                .all(|&(fwd, tag, _)| tag == Some(if fwd { 11 } else { 12 }))
        );
        // Two contexts are equal only when they share their value.
        let a = CallContext::new(1u32);
        assert_eq!(a, a.clone());
        assert_ne!(a, CallContext::new(1u32));
        assert!(format!("{a:?}").starts_with("CallContext("));
    }
}
