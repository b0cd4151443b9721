//! ZLIB (RFC 1950 streams) through C libdeflate. Its levels 1..=9 take the
//! Blosc clevel directly; the streams differ from zlib's bytes but any
//! inflater reads them.

use libdeflater::{CompressionLvl, Compressor, Decompressor};

use crate::error::{Error, Result};

#[derive(Default)]
pub(crate) struct Zlib {
    compressor: Option<(u8, Compressor)>,
    decompressor: Option<Decompressor>,
}

impl Zlib {
    pub(crate) fn compress(&mut self, clevel: u8, src: &[u8], dst: &mut [u8]) -> Result<usize> {
        let c = match &mut self.compressor {
            Some((l, c)) if *l == clevel => c,
            slot => {
                let lvl = CompressionLvl::new(i32::from(clevel)).map_err(|_| Error::Codec {
                    codec: "zlib",
                    message: format!("level {clevel} rejected"),
                })?;
                &mut slot.insert((clevel, Compressor::new(lvl))).1
            }
        };
        // libdeflate stops with InsufficientSpace as soon as it overflows: our 0.
        Ok(c.zlib_compress(src, dst).unwrap_or(0))
    }

    pub(crate) fn decompress(&mut self, src: &[u8], dst: &mut [u8]) -> Result<usize> {
        let d = self.decompressor.get_or_insert_with(Decompressor::new);
        d.zlib_decompress(src, dst)
            .map_err(|e| Error::Corrupt(format!("zlib stream: {e}")))
    }
}
