//! User-registered filters and codecs (`blosc2_register_filter`,
//! `blosc2_register_codec`) on the engine's registries
//! (`oxiblosc::plugins`): the C callbacks are wrapped in a `UserFilter` /
//! `UserCodec`, called once per block (filters) or stream (codecs), with a
//! `blosc2_cparams` / `blosc2_dparams`: the calling super-chunk's, with
//! `schunk` pointing to it, when a super-chunk call runs them (its handle
//! travels in the parameters' `CallContext`; see `schunk/mod.rs` for what
//! callbacks may do with it), else the defaults with `schunk` NULL.
//! Filters get the chunk's `typesize` and their slot's meta byte; codecs
//! get `compcode`, `clevel`, `typesize` and the codec meta byte
//! (`compcode_meta`, from the chunk's header when decompressing).

use std::sync::Arc;

use oxiblosc::plugins::{
    CodecCall, FilterCall, USER_CODEC_IDS, USER_FILTER_IDS, UserCodec, UserFilter, register_codec,
    register_filter,
};

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
        let mut cp = crate::schunk::callback_params(call.context.as_ref())
            .map_or(CPARAMS_DEFAULTS, |(c, _)| c);
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
        let mut dp = crate::schunk::callback_params(call.context.as_ref())
            .map_or(DPARAMS_DEFAULTS, |(_, d)| d);
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

type EncoderCb = unsafe extern "C" fn(
    *const u8,
    i32,
    *mut u8,
    i32,
    u8,
    *mut blosc2_cparams,
    *const c_void,
) -> c_int;
type DecoderCb = unsafe extern "C" fn(
    *const u8,
    i32,
    *mut u8,
    i32,
    u8,
    *mut blosc2_dparams,
    *const c_void,
) -> c_int;

/// `blosc2_codec`.
#[repr(C)]
pub struct blosc2_codec {
    /// The codec id (160..=255).
    pub compcode: u8,
    /// Its name.
    pub compname: *mut c_char,
    /// Its library's format number.
    pub complib: u8,
    /// Its version.
    pub version: u8,
    /// Compression side.
    pub encoder: Option<EncoderCb>,
    /// Decompression side.
    pub decoder: Option<DecoderCb>,
}

const _: () = assert!(std::mem::size_of::<blosc2_codec>() == 40);

/// The C callbacks of one registered codec.
struct CCodec {
    encoder: EncoderCb,
    decoder: DecoderCb,
}

fn len_i32(n: usize) -> oxiblosc::Result<i32> {
    i32::try_from(n).map_err(|_| oxiblosc::Error::InvalidParam("stream too large".into()))
}

impl UserCodec for CCodec {
    fn compress(&self, src: &[u8], dst: &mut [u8], call: &CodecCall) -> oxiblosc::Result<usize> {
        let (n, m) = (len_i32(src.len())?, len_i32(dst.len())?);
        let mut cp = crate::schunk::callback_params(call.context.as_ref())
            .map_or(CPARAMS_DEFAULTS, |(c, _)| c);
        cp.compcode = call.id;
        cp.compcode_meta = call.meta;
        cp.clevel = call.clevel;
        cp.typesize = i32::try_from(call.typesize).unwrap_or(i32::MAX);
        // SAFETY: the registered callback's prototype; src has n readable
        // bytes, dst m writable ones; cp lives for the call; no chunk.
        let rc = unsafe {
            (self.encoder)(
                src.as_ptr(),
                n,
                dst.as_mut_ptr(),
                m,
                call.meta,
                &mut cp,
                std::ptr::null(),
            )
        };
        match usize::try_from(rc) {
            Ok(c) => Ok(c),
            Err(_) => Err(oxiblosc::Error::InvalidParam(format!(
                "user codec {} encoder returned {rc}",
                call.id
            ))),
        }
    }

    fn decompress(&self, src: &[u8], dst: &mut [u8], call: &CodecCall) -> oxiblosc::Result<usize> {
        let (n, m) = (len_i32(src.len())?, len_i32(dst.len())?);
        let mut dp = crate::schunk::callback_params(call.context.as_ref())
            .map_or(DPARAMS_DEFAULTS, |(_, d)| d);
        dp.typesize = i32::try_from(call.typesize).unwrap_or(i32::MAX);
        // SAFETY: as in `compress`.
        let rc = unsafe {
            (self.decoder)(
                src.as_ptr(),
                n,
                dst.as_mut_ptr(),
                m,
                call.meta,
                &mut dp,
                std::ptr::null(),
            )
        };
        match usize::try_from(rc) {
            Ok(c) if c <= dst.len() => Ok(c),
            _ => Err(oxiblosc::Error::Corrupt(format!(
                "user codec {} decoder returned {rc}",
                call.id
            ))),
        }
    }
}

/// `blosc2_register_codec`: registers the codec's callbacks under its id
/// (160..=255; registering an id again replaces it). 0, or a negative code.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_register_codec(codec: *mut blosc2_codec) -> c_int {
    guard(err::FAILURE, || {
        // SAFETY: codec is null or a blosc2_codec.
        let Some(c) = (unsafe { codec.as_ref() }) else {
            return err::NULL_POINTER;
        };
        let (Some(encoder), Some(decoder)) = (c.encoder, c.decoder) else {
            return err::NULL_POINTER;
        };
        if !USER_CODEC_IDS.contains(&c.compcode) {
            return err::FAILURE;
        }
        match register_codec(c.compcode, Arc::new(CCodec { encoder, decoder })) {
            Ok(()) => 0,
            Err(e) => code_of(&e),
        }
    })
}
