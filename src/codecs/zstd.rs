//! ZSTD through C libzstd (zstd-safe), one frame per stream.
//!
//! Level map (C-Blosc2's, CHUNK-NOTES §9.2): `2 * clevel - 1` for clevel
//! 1..=8 (so 8 gives 15), and 22 for clevel 9. With a dictionary C-Blosc2
//! digests it at level 1 whatever the clevel; so do we.

use zstd_safe::{CCtx, DCtx};

use super::{Backend, DecDict, EncDict, Warm};
use crate::error::{Error, Result};

/// The zstd level C-Blosc2 uses for `clevel`.
pub(crate) fn level(clevel: u8) -> i32 {
    if clevel >= 9 {
        22
    } else {
        2 * i32::from(clevel) - 1
    }
}

/// A digested compression dictionary.
pub(crate) struct CDict(zstd_safe::CDict<'static>);

impl CDict {
    pub(crate) fn new(raw: &[u8]) -> Result<CDict> {
        zstd_safe::CDict::try_create(raw, 1)
            .map(CDict)
            .ok_or_else(|| Error::Codec {
                codec: "zstd",
                message: "could not digest the dictionary".into(),
            })
    }
}

/// A digested decompression dictionary.
pub(crate) struct DDict(zstd_safe::DDict<'static>);

impl DDict {
    pub(crate) fn new(raw: &[u8]) -> Result<DDict> {
        zstd_safe::DDict::try_create(raw)
            .map(DDict)
            .ok_or_else(|| Error::Corrupt("zstd dictionary could not be loaded".into()))
    }
}

#[derive(Default)]
pub(crate) struct Zstd {
    cctx: Option<CCtx<'static>>,
    dctx: Option<DCtx<'static>>,
}

impl Zstd {
    /// Make the compression (`compress`) or decompression context now.
    fn prepare(&mut self, compress: bool) -> Result<()> {
        if compress {
            self.cctx()?;
        } else {
            self.dctx()?;
        }
        Ok(())
    }

    fn cctx(&mut self) -> Result<&mut CCtx<'static>> {
        made(&mut self.cctx, CCtx::try_create, "compression")
    }

    fn dctx(&mut self) -> Result<&mut DCtx<'static>> {
        made(&mut self.dctx, DCtx::try_create, "decompression")
    }

    fn compress_stream(
        &mut self,
        clevel: u8,
        src: &[u8],
        dst: &mut [u8],
        dict: Option<&CDict>,
    ) -> Result<usize> {
        let cctx = self.cctx()?;
        let r = match dict {
            Some(d) => cctx.compress_using_cdict(dst, src, &d.0),
            None => cctx.compress(dst, src, level(clevel)),
        };
        match r {
            Ok(n) => Ok(n),
            // "Destination buffer is too small" is the normal "does not fit".
            Err(code) if zstd_safe::get_error_name(code).contains("too small") => Ok(0),
            Err(code) => Err(Error::Codec {
                codec: "zstd",
                message: zstd_safe::get_error_name(code).into(),
            }),
        }
    }

    fn decompress_stream(
        &mut self,
        src: &[u8],
        dst: &mut [u8],
        dict: Option<&DDict>,
    ) -> Result<usize> {
        let dctx = self.dctx()?;
        let r = match dict {
            Some(d) => dctx.decompress_using_ddict(dst, src, &d.0),
            None => dctx.decompress(dst, src),
        };
        r.map_err(|code| {
            Error::Corrupt(format!("zstd stream: {}", zstd_safe::get_error_name(code)))
        })
    }
}

impl Backend for Zstd {
    /// A block writes at most 128 KiB and takes at least 4 bytes (its
    /// 3-byte header and one byte).
    const EXPANSION: (usize, usize) = (32 * 1024, 128 * 1024);

    fn warm(&mut self, w: Warm) -> Result<()> {
        self.prepare(matches!(w, Warm::Compress(_)))
    }

    fn compress(
        &mut self,
        clevel: u8,
        src: &[u8],
        dst: &mut [u8],
        dict: Option<&EncDict>,
    ) -> Result<usize> {
        let dict = match dict {
            Some(EncDict::Zstd(d)) => Some(d),
            _ => None,
        };
        self.compress_stream(clevel, src, dst, dict)
    }

    fn decompress(&mut self, src: &[u8], dst: &mut [u8], dict: Option<&DecDict>) -> Result<usize> {
        let dict = match dict {
            Some(DecDict::Zstd(d)) => Some(d),
            _ => None,
        };
        self.decompress_stream(src, dst, dict)
    }
}

/// The context in `slot`, made by `create` on first use.
fn made<'a, T>(
    slot: &'a mut Option<T>,
    create: impl FnOnce() -> Option<T>,
    what: &str,
) -> Result<&'a mut T> {
    match slot {
        Some(c) => Ok(c),
        None => {
            let c = create().ok_or_else(|| Error::Codec {
                codec: "zstd",
                message: format!("could not create a {what} context"),
            })?;
            Ok(slot.insert(c))
        }
    }
}

/// Train a dictionary of at most `max_size` bytes from `samples` (consecutive
/// pieces of `data` with the given sizes). `None` when zstd cannot train one.
pub(crate) fn train(data: &[u8], sample_sizes: &[usize], max_size: usize) -> Option<Vec<u8>> {
    let mut dict = Vec::with_capacity(max_size);
    zstd_safe::train_from_buffer(&mut dict, data, sample_sizes).ok()?;
    Some(dict)
}
