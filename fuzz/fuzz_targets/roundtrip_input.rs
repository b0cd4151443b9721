//! The `roundtrip` target's input and the compression parameters it makes,
//! shared (with `#[path]`) by the target and by `fuzz/c-diff`, which
//! compresses the target's corpus with the same parameters and has
//! C-Blosc2 decode the chunks.

use arbitrary::Arbitrary;
use oxiblosc::{CParams, ChunkFormat, Codec, Filter, SplitMode};

#[derive(Arbitrary, Debug)]
pub struct Input {
    pub codec: u8,
    pub clevel: u8,
    pub typesize: u8,
    pub filters: [u8; 3],
    pub filter_meta: u8,
    pub blocksize: u16,
    pub splitmode: u8,
    pub nthreads: u8,
    pub blosc1: bool,
    pub use_dict: bool,
    pub container: u8,
    pub chunk: u16,
    /// With `use_dict`, the data tiled to at least [`TILED`] bytes (since
    /// session 44).
    pub tile: bool,
    pub data: Vec<u8>,
}

/// What `tile` grows the data to: chunks this large train a dictionary
/// (`use_dict`, over 20 x 256 bytes), which the few-KB inputs libFuzzer
/// makes never reached (source coverage of the corpus, session 44: no
/// ZSTD or LZ4 dictionary was ever trained by this target).
pub const TILED: usize = 6 << 10;

impl Input {
    /// The data tiled when `tile` and `use_dict` ask for it.
    pub fn tile_data(&mut self) {
        if self.tile && self.use_dict && !self.data.is_empty() && self.data.len() < TILED {
            let rounds = TILED.div_ceil(self.data.len());
            self.data = self.data.repeat(rounds);
        }
    }

    /// The filters the input picks (up to three).
    pub fn filters(&self) -> Vec<Filter> {
        self.filters
            .iter()
            .filter_map(|&f| match f % 8 {
                1 => Some(Filter::Shuffle),
                2 => Some(Filter::BitShuffle),
                3 => Some(Filter::Delta),
                4 => Some(Filter::ByteDelta),
                5 => Some(Filter::TruncPrec(self.filter_meta % 24)),
                _ => None,
            })
            .collect()
    }

    /// Whether the filters lose precision (the data then comes back with
    /// its length only).
    pub fn lossy(&self) -> bool {
        self.filters()
            .iter()
            .any(|f| matches!(f, Filter::TruncPrec(_)))
    }

    /// The compression parameters the input picks.
    pub fn params(&self) -> CParams {
        let codec = [
            Codec::BloscLz,
            Codec::Lz4,
            Codec::Lz4Hc,
            Codec::Zlib,
            Codec::Zstd,
        ][usize::from(self.codec) % 5];
        let split = [
            SplitMode::Always,
            SplitMode::Never,
            SplitMode::Auto,
            SplitMode::ForwardCompat,
        ][usize::from(self.splitmode) % 4];
        let p = CParams::default()
            .codec(codec)
            .clevel(self.clevel % 10)
            .typesize(usize::from(self.typesize).max(1))
            .filters(&self.filters())
            .blocksize(usize::from(self.blocksize))
            .splitmode(split)
            .nthreads(usize::from(self.nthreads % 3) + 1)
            .use_dict(self.use_dict);
        if self.blosc1 {
            p.format(ChunkFormat::Blosc1)
        } else {
            p
        }
    }
}
