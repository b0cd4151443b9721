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
    /// Make the compressor for `clevel` (or the decompressor, for `None`)
    /// now.
    pub(crate) fn warm(&mut self, clevel: Option<u8>) -> Result<()> {
        match clevel {
            Some(l) => {
                self.compressor(l)?;
            }
            None => {
                self.decompressor.get_or_insert_with(Decompressor::new);
            }
        }
        Ok(())
    }

    fn compressor(&mut self, clevel: u8) -> Result<&mut Compressor> {
        let c = match self.compressor.take() {
            Some((l, c)) if l == clevel => c,
            _ => {
                let lvl = CompressionLvl::new(i32::from(clevel)).map_err(|_| Error::Codec {
                    codec: "zlib",
                    message: format!("level {clevel} rejected"),
                })?;
                Compressor::new(lvl)
            }
        };
        Ok(&mut self.compressor.insert((clevel, c)).1)
    }

    pub(crate) fn compress(&mut self, clevel: u8, src: &[u8], dst: &mut [u8]) -> Result<usize> {
        let c = self.compressor(clevel)?;
        // libdeflate stops with InsufficientSpace as soon as it overflows: our 0.
        Ok(c.zlib_compress(src, dst).unwrap_or(0))
    }

    pub(crate) fn decompress(&mut self, src: &[u8], dst: &mut [u8]) -> Result<usize> {
        let d = self.decompressor.get_or_insert_with(Decompressor::new);
        d.zlib_decompress(src, dst)
            .map_err(|e| Error::Corrupt(format!("zlib stream: {e}")))
    }
}
