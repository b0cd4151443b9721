//! User-registered filters: a process-wide registry of trait objects the
//! filter pipeline calls for filter ids 160..=255 (C-Blosc2's
//! `BLOSC2_USER_REGISTERED_FILTERS_START..=STOP`), as C-Blosc2's
//! `blosc2_register_filter` does. A chunk records the id (and the slot's
//! meta byte) in its extended header like any filter, so it decodes
//! wherever a filter of that id is registered.
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

use std::collections::BTreeMap;
use std::ops::RangeInclusive;
use std::sync::{Arc, RwLock};

use crate::error::{Result, invalid_param};

/// The filter ids users may register (C-Blosc2's user range).
pub const USER_FILTER_IDS: RangeInclusive<u8> = 160..=255;

/// What a user filter is told about the block it transforms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct FilterCall {
    /// The filter id the chunk records.
    pub id: u8,
    /// The slot's meta byte (`filters_meta`).
    pub meta: u8,
    /// The chunk's (stored) type size.
    pub typesize: usize,
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
}
