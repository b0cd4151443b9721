//! User-registered filters (`blosc2_register_filter`) on the engine's
//! registry (`oxiblosc::plugins`): the C callbacks are wrapped in a
//! `UserFilter` and called once per block, with a `blosc2_cparams` /
//! `blosc2_dparams` whose `typesize` is the chunk's and whose `schunk` is
//! NULL (the calling super-chunk is not handed to callbacks: test_urfilters
//! reads `cparams->schunk->typesize`, so it stays an expected failure).

use std::sync::Arc;

use oxiblosc::plugins::{FilterCall, USER_FILTER_IDS, UserFilter, register_filter};

use super::*;

type ForwardCb =
    unsafe extern "C" fn(*const u8, *mut u8, i32, u8, *mut blosc2_cparams, u8) -> c_int;
type BackwardCb =
    unsafe extern "C" fn(*const u8, *mut u8, i32, u8, *mut blosc2_dparams, u8) -> c_int;

/// `blosc2_filter`.
#[repr(C)]
pub struct blosc2_filter {
    /// The filter id (160..=255).
    pub id: u8,
    /// Its name.
    pub name: *mut c_char,
    /// Its version.
    pub version: u8,
    /// Compression side.
    pub forward: Option<ForwardCb>,
    /// Decompression side.
    pub backward: Option<BackwardCb>,
}

const _: () = assert!(std::mem::size_of::<blosc2_filter>() == 40);

/// The C callbacks of one registered filter.
struct CFilter {
    forward: ForwardCb,
    backward: BackwardCb,
}

fn callback_result(rc: c_int, call: &FilterCall, side: &str) -> oxiblosc::Result<()> {
    if rc < 0 {
        Err(oxiblosc::Error::InvalidParam(format!(
            "user filter {} ({side}) returned {rc}",
            call.id
        )))
    } else {
        Ok(())
    }
}

impl UserFilter for CFilter {
    fn forward(&self, src: &[u8], dst: &mut [u8], call: &FilterCall) -> oxiblosc::Result<()> {
        let n = i32::try_from(src.len())
            .map_err(|_| oxiblosc::Error::InvalidParam("block too large".into()))?;
        let mut cp = CPARAMS_DEFAULTS;
        cp.typesize = call.typesize as i32;
        // SAFETY: the registered callback's prototype; src has n readable
        // bytes, dst n writable ones (the pipeline's blocks are equal in
        // size); cp lives for the call.
        let rc = unsafe {
            (self.forward)(
                src.as_ptr(),
                dst.as_mut_ptr(),
                n,
                call.meta,
                &mut cp,
                call.id,
            )
        };
        callback_result(rc, call, "forward")
    }

    fn backward(&self, src: &[u8], dst: &mut [u8], call: &FilterCall) -> oxiblosc::Result<()> {
        let n = i32::try_from(src.len())
            .map_err(|_| oxiblosc::Error::InvalidParam("block too large".into()))?;
        let mut dp = DPARAMS_DEFAULTS;
        dp.typesize = call.typesize as i32;
        // SAFETY: as in `forward`.
        let rc = unsafe {
            (self.backward)(
                src.as_ptr(),
                dst.as_mut_ptr(),
                n,
                call.meta,
                &mut dp,
                call.id,
            )
        };
        callback_result(rc, call, "backward")
    }
}

/// `blosc2_register_filter`: registers the filter's callbacks under its id
/// (160..=255; registering an id again replaces it). 0, or a negative code.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_register_filter(filter: *mut blosc2_filter) -> c_int {
    guard(err::FAILURE, || {
        // SAFETY: filter is null or a blosc2_filter.
        let Some(f) = (unsafe { filter.as_ref() }) else {
            return err::NULL_POINTER;
        };
        let (Some(forward), Some(backward)) = (f.forward, f.backward) else {
            return err::NULL_POINTER;
        };
        if !USER_FILTER_IDS.contains(&f.id) {
            return err::FAILURE;
        }
        match register_filter(f.id, Arc::new(CFilter { forward, backward })) {
            Ok(()) => 0,
            Err(e) => code_of(&e),
        }
    })
}
