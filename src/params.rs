//! Compression and decompression parameters: codecs, filters, split modes.

use std::fmt;
use std::str::FromStr;

use crate::error::{Error, Result, invalid_param};

/// The largest block size a chunk may declare (`BLOSC2_MAXBLOCKSIZE`).
pub const MAX_BLOCKSIZE: usize = 536_866_816;
/// The largest input one chunk can hold (`BLOSC2_MAX_BUFFERSIZE`).
pub const MAX_BUFFERSIZE: usize = i32::MAX as usize - MAX_OVERHEAD;
/// Bytes a chunk may add to its input: the header (`BLOSC2_MAX_OVERHEAD`).
pub const MAX_OVERHEAD: usize = 32;
/// The largest type size a chunk header can store; larger ones are stored as 1.
pub const MAX_TYPESIZE: usize = 255;

/// Stream format 6 in a chunk's flags (`flags >> 5`): the codec is named by
/// its id in the extended header (`udcodec`, byte 22) rather than by the
/// format number.
pub(crate) const FORMAT_UDCODEC: u8 = 6;

/// A compression codec. The numbers are C-Blosc2's codec ids.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Codec {
    /// BloscLZ (id 0), C-Blosc2's default: fast, tuned for shuffled data.
    BloscLz,
    /// LZ4 (id 1).
    Lz4,
    /// LZ4 high compression (id 2): LZ4 streams, slower to make, smaller.
    Lz4Hc,
    /// zlib (id 4).
    Zlib,
    /// Zstandard (id 5).
    Zstd,
    /// A user-registered codec (ids 160..=255, [`crate::plugins`]): chunks
    /// store format 6 and the id in header byte 22.
    User(u8),
}

impl Codec {
    /// Every codec, in id order.
    pub const ALL: [Codec; 5] = [
        Codec::BloscLz,
        Codec::Lz4,
        Codec::Lz4Hc,
        Codec::Zlib,
        Codec::Zstd,
    ];

    /// C-Blosc2's codec id (written to byte 22 of the header).
    pub fn id(self) -> u8 {
        match self {
            Codec::BloscLz => 0,
            Codec::Lz4 => 1,
            Codec::Lz4Hc => 2,
            Codec::Zlib => 4,
            Codec::Zstd => 5,
            Codec::User(id) => id,
        }
    }

    /// The codec with C-Blosc2 id `id` (user ids: when registered).
    pub fn from_id(id: u8) -> Option<Codec> {
        Codec::ALL
            .into_iter()
            .find(|c| c.id() == id)
            .or_else(|| crate::plugins::user_codec(id).map(|_| Codec::User(id)))
    }

    /// The stream format number stored in the header flags (`flags >> 5`):
    /// LZ4 and LZ4HC share format 1.
    pub fn format(self) -> u8 {
        match self {
            Codec::BloscLz => 0,
            Codec::Lz4 | Codec::Lz4Hc => 1,
            Codec::Zlib => 3,
            Codec::Zstd => 4,
            Codec::User(_) => FORMAT_UDCODEC,
        }
    }

    /// The name C-Blosc2 uses (`blosclz`, `lz4`, `lz4hc`, `zlib`, `zstd`).
    pub fn name(self) -> &'static str {
        match self {
            Codec::BloscLz => "blosclz",
            Codec::Lz4 => "lz4",
            Codec::Lz4Hc => "lz4hc",
            Codec::Zlib => "zlib",
            Codec::Zstd => "zstd",
            Codec::User(_) => "user",
        }
    }

    /// Whether this build can compress with the codec.
    pub fn is_available(self) -> bool {
        match self {
            Codec::BloscLz | Codec::Lz4 => true,
            Codec::Lz4Hc => cfg!(feature = "lz4hc"),
            Codec::Zlib => cfg!(feature = "zlib"),
            Codec::Zstd => cfg!(feature = "zstd"),
            Codec::User(id) => crate::plugins::user_codec(id).is_some(),
        }
    }

    /// Whether the codec compresses with a dictionary (`use_dict`): ZSTD,
    /// LZ4 and LZ4HC.
    pub(crate) fn uses_dict(self) -> bool {
        matches!(self, Codec::Zstd | Codec::Lz4 | Codec::Lz4Hc)
    }

    /// "High compression ratio" codecs get larger blocks from the tuner.
    pub(crate) fn is_hcr(self) -> bool {
        matches!(self, Codec::Lz4Hc | Codec::Zlib | Codec::Zstd)
    }
}

impl fmt::Display for Codec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Codec {
    type Err = Error;
    fn from_str(s: &str) -> Result<Codec> {
        Codec::ALL
            .into_iter()
            .find(|c| c.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| {
                invalid_param(format!(
                    "unknown codec {s:?} (known: blosclz, lz4, lz4hc, zlib, zstd)"
                ))
            })
    }
}

/// A filter of the pipeline run on each block before the codec.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Filter {
    /// Byte shuffle (id 1): groups the bytes of equal significance.
    Shuffle,
    /// Bit shuffle (id 2): groups the bits of equal significance.
    BitShuffle,
    /// XOR delta against the first block (id 3).
    Delta,
    /// Lossy float truncation (id 4). The value is the filter meta byte, read
    /// as `i8`: positive = mantissa bits kept, negative = bits cleared.
    TruncPrec(u8),
    /// Byte-wise delta of shuffled streams (id 35); best after [`Filter::Shuffle`].
    ByteDelta,
    /// A user-registered filter (ids 160..=255, [`crate::plugins`]).
    User(u8),
}

impl Filter {
    /// C-Blosc2's filter id.
    pub fn id(self) -> u8 {
        match self {
            Filter::Shuffle => 1,
            Filter::BitShuffle => 2,
            Filter::Delta => 3,
            Filter::TruncPrec(_) => 4,
            Filter::ByteDelta => 35,
            Filter::User(id) => id,
        }
    }

    /// The filter for id `id` with its meta byte; `None` for 0 (no filter)
    /// and ids this crate does not know (user ids: unless registered).
    pub fn from_id(id: u8, meta: u8) -> Option<Filter> {
        Some(match id {
            1 => Filter::Shuffle,
            2 => Filter::BitShuffle,
            3 => Filter::Delta,
            4 => Filter::TruncPrec(meta),
            35 => Filter::ByteDelta,
            id if crate::plugins::user_filter(id).is_some() => Filter::User(id),
            _ => return None,
        })
    }

    /// The name used on the command line (`shuffle`, `bitshuffle`, `delta`,
    /// `trunc_prec`, `bytedelta`).
    pub fn name(self) -> &'static str {
        match self {
            Filter::Shuffle => "shuffle",
            Filter::BitShuffle => "bitshuffle",
            Filter::Delta => "delta",
            Filter::TruncPrec(_) => "trunc_prec",
            Filter::ByteDelta => "bytedelta",
            Filter::User(_) => "user",
        }
    }
}

/// The spelling [`FromStr`] reads back: the name, and for `trunc_prec` its
/// precision as a signed number (`trunc_prec:-3`).
///
/// ```
/// use oxiblosc::Filter;
/// assert_eq!(Filter::BitShuffle.to_string(), "bitshuffle");
/// let f: Filter = "trunc_prec:-3".parse().unwrap();
/// assert_eq!(f.to_string(), "trunc_prec:-3");
/// ```
impl fmt::Display for Filter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Filter::TruncPrec(m) => write!(f, "trunc_prec:{}", *m as i8),
            other => f.write_str(other.name()),
        }
    }
}

impl FromStr for Filter {
    type Err = Error;
    /// `NAME` or `NAME:META` (META only for `trunc_prec`, may be negative).
    fn from_str(s: &str) -> Result<Filter> {
        let (name, meta) = match s.split_once(':') {
            Some((n, m)) => (n.trim(), Some(m.trim())),
            None => (s.trim(), None),
        };
        let f = match name.to_ascii_lowercase().as_str() {
            "shuffle" => Filter::Shuffle,
            "bitshuffle" => Filter::BitShuffle,
            "delta" => Filter::Delta,
            "bytedelta" => Filter::ByteDelta,
            "trunc_prec" | "truncprec" | "trunc" => {
                let m = meta.ok_or_else(|| {
                    invalid_param("trunc_prec needs a precision: trunc_prec:BITS")
                })?;
                let v: i16 = m
                    .parse()
                    .map_err(|_| invalid_param(format!("bad trunc_prec precision {m:?}")))?;
                if !(-128..=127).contains(&v) {
                    return Err(invalid_param(format!(
                        "trunc_prec precision {v} out of range"
                    )));
                }
                return Ok(Filter::TruncPrec(v as i8 as u8));
            }
            _ => {
                return Err(invalid_param(format!(
                    "unknown filter {name:?} (known: shuffle, bitshuffle, delta, trunc_prec:BITS, bytedelta)"
                )));
            }
        };
        if meta.is_some() {
            return Err(invalid_param(format!("filter {name} takes no meta value")));
        }
        Ok(f)
    }
}

/// When a block is split into one stream per byte of the type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SplitMode {
    /// Always split (id 1).
    Always,
    /// Never split (id 2).
    Never,
    /// Split when it usually pays: BloscLZ, LZ4 or ZSTD up to clevel 5, with
    /// byte shuffle, typesize <= 16 and at least 32 elements per block (id 3).
    Auto,
    /// C-Blosc2's default (id 4); the same rule as [`SplitMode::Auto`].
    ForwardCompat,
}

impl SplitMode {
    /// C-Blosc2's id for the mode.
    pub fn id(self) -> u8 {
        match self {
            SplitMode::Always => 1,
            SplitMode::Never => 2,
            SplitMode::Auto => 3,
            SplitMode::ForwardCompat => 4,
        }
    }
}

impl FromStr for SplitMode {
    type Err = Error;
    fn from_str(s: &str) -> Result<SplitMode> {
        match s.trim().to_ascii_lowercase().as_str() {
            "always" => Ok(SplitMode::Always),
            "never" => Ok(SplitMode::Never),
            "auto" => Ok(SplitMode::Auto),
            "forward" | "forward_compat" | "forwardcompat" => Ok(SplitMode::ForwardCompat),
            _ => Err(invalid_param(format!(
                "unknown split mode {s:?} (always, never, auto, forward)"
            ))),
        }
    }
}

/// Which chunk format the encoder writes.
///
/// Every reader in this crate takes both; the choice only matters for who
/// else must read the chunks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ChunkFormat {
    /// The Blosc2 chunk (32-byte header, format version 5) as C-Blosc2 3.x
    /// writes it: every filter and codec, run-length streams, special
    /// chunks, dictionaries. The default.
    #[default]
    Blosc2,
    /// The Blosc1 chunk (16-byte header, format version 2) as C-Blosc 1.21
    /// writes it, with its own block-size tuner and split rule: what
    /// C-Blosc 1.x readers (numcodecs, Zarr, HDF5's filter 32001,
    /// bloscpack) accept. Filters: none, or one of [`Filter::Shuffle`] /
    /// [`Filter::BitShuffle`]; no dictionaries.
    Blosc1,
}

impl ChunkFormat {
    /// The name used on the command line (`blosc2`, `blosc1`).
    pub fn name(self) -> &'static str {
        match self {
            ChunkFormat::Blosc2 => "blosc2",
            ChunkFormat::Blosc1 => "blosc1",
        }
    }
}

/// Compression parameters. Defaults are C-Blosc2's (`BLOSC2_CPARAMS_DEFAULTS`):
/// BloscLZ, clevel 5, typesize 8, byte shuffle in the last filter slot,
/// automatic block size, forward-compatible split, one thread, no dictionary.
///
/// ```
/// use oxiblosc::{CParams, Codec, Filter};
/// let p = CParams::default().codec(Codec::Zstd).clevel(3).typesize(4).filters(&[Filter::Shuffle]);
/// assert_eq!(p.filters[0], Some(Filter::Shuffle));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct CParams {
    /// The codec.
    pub codec: Codec,
    /// Codec parameter byte (header byte 23); 0 for the built-in codecs.
    pub codec_meta: u8,
    /// Compression level, 0 (store) to 9.
    pub clevel: u8,
    /// Size in bytes of the items being compressed.
    pub typesize: usize,
    /// The six filter slots, run from slot 0 to 5.
    pub filters: [Option<Filter>; 6],
    /// Meta byte per slot (for [`Filter::TruncPrec`] its own value wins).
    pub filters_meta: [u8; 6],
    /// Forced block size in bytes; 0 lets the tuner choose (as C-Blosc2 does).
    pub blocksize: usize,
    /// When blocks are split into per-byte streams.
    pub splitmode: SplitMode,
    /// Threads used to compress the blocks of one chunk.
    pub nthreads: usize,
    /// Train a dictionary per chunk (ZSTD, LZ4, LZ4HC only).
    pub use_dict: bool,
    /// The chunk format written: [`ChunkFormat::Blosc2`] (default) or
    /// [`ChunkFormat::Blosc1`] for C-Blosc 1.x readers.
    pub format: ChunkFormat,
    /// Handed to every user filter and codec call made while compressing
    /// (see [`crate::plugins::CallContext`]); never stored in a chunk.
    pub context: Option<crate::plugins::CallContext>,
}

impl Default for CParams {
    fn default() -> Self {
        CParams {
            codec: Codec::BloscLz,
            codec_meta: 0,
            clevel: 5,
            typesize: 8,
            filters: [None, None, None, None, None, Some(Filter::Shuffle)],
            filters_meta: [0; 6],
            blocksize: 0,
            splitmode: SplitMode::ForwardCompat,
            nthreads: 1,
            use_dict: false,
            format: ChunkFormat::Blosc2,
            context: None,
        }
    }
}

impl CParams {
    /// Set the codec.
    pub fn codec(mut self, codec: Codec) -> Self {
        self.codec = codec;
        self
    }
    /// Set the compression level (0..=9).
    pub fn clevel(mut self, clevel: u8) -> Self {
        self.clevel = clevel;
        self
    }
    /// Set the type size in bytes.
    pub fn typesize(mut self, typesize: usize) -> Self {
        self.typesize = typesize;
        self
    }
    /// Fill the filter slots from slot 0 in the order given (as python-blosc2
    /// does with a list); the remaining slots are emptied. At most 6.
    pub fn filters(mut self, filters: &[Filter]) -> Self {
        self.filters = [None; 6];
        self.filters_meta = [0; 6];
        for (slot, f) in filters.iter().take(6).enumerate() {
            self.filters[slot] = Some(*f);
            if let Filter::TruncPrec(m) = f {
                self.filters_meta[slot] = *m;
            }
        }
        self
    }
    /// Like [`CParams::filters`], with an explicit meta byte per filter.
    pub fn filters_with_meta(mut self, filters: &[(Filter, u8)]) -> Self {
        self = self.filters(&filters.iter().map(|(f, _)| *f).collect::<Vec<_>>());
        for (slot, (_, m)) in filters.iter().take(6).enumerate() {
            self.filters_meta[slot] = *m;
        }
        self
    }
    /// Force a block size in bytes (0 = automatic).
    pub fn blocksize(mut self, blocksize: usize) -> Self {
        self.blocksize = blocksize;
        self
    }
    /// Set the split mode.
    pub fn splitmode(mut self, splitmode: SplitMode) -> Self {
        self.splitmode = splitmode;
        self
    }
    /// Set the number of threads (at least 1).
    pub fn nthreads(mut self, nthreads: usize) -> Self {
        self.nthreads = nthreads;
        self
    }
    /// Train and use a dictionary per chunk (ZSTD, LZ4, LZ4HC; VL-block
    /// chunks of other codecs store one unused, as C-Blosc2's do:
    /// [`crate::chunk::vl_compress`]).
    pub fn use_dict(mut self, use_dict: bool) -> Self {
        self.use_dict = use_dict;
        self
    }

    /// Choose the chunk format written ([`ChunkFormat::Blosc1`] for C-Blosc
    /// 1.x readers such as numcodecs and Zarr).
    ///
    /// ```
    /// use oxiblosc::{CParams, ChunkFormat, Codec, Filter, compress, decompress};
    /// let data: Vec<u8> = (0u32..10_000).flat_map(|v| v.to_le_bytes()).collect();
    /// let p = CParams::default().format(ChunkFormat::Blosc1).codec(Codec::Lz4).typesize(4);
    /// let chunk = compress(&data, &p)?;
    /// assert_eq!(chunk[0], 2); // format version 2: what C-Blosc 1.x reads
    /// assert_eq!(decompress(&chunk)?, data);
    /// # Ok::<(), oxiblosc::Error>(())
    /// ```
    pub fn format(mut self, format: ChunkFormat) -> Self {
        self.format = format;
        self
    }

    /// The meta byte of slot `slot` as it is written to the header.
    pub(crate) fn slot_meta(&self, slot: usize) -> u8 {
        match self.filters[slot] {
            Some(Filter::TruncPrec(m)) => m,
            _ => self.filters_meta[slot],
        }
    }

    /// Check every parameter; the error says which one is wrong and why.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] or [`Error::Unsupported`].
    pub fn validate(&self) -> Result<()> {
        if self.clevel > 9 {
            return Err(invalid_param(format!(
                "clevel {} is not in 0..=9",
                self.clevel
            )));
        }
        if self.typesize == 0 || self.typesize > MAX_BLOCKSIZE {
            return Err(invalid_param(format!(
                "typesize {} is not in 1..={MAX_BLOCKSIZE}",
                self.typesize
            )));
        }
        if self.nthreads == 0 {
            return Err(invalid_param("nthreads must be at least 1"));
        }
        if self.blocksize > MAX_BLOCKSIZE {
            return Err(invalid_param(format!(
                "blocksize {} exceeds the maximum {MAX_BLOCKSIZE}",
                self.blocksize
            )));
        }
        if !self.codec.is_available() {
            return Err(Error::Unsupported(format!(
                "codec {} is not compiled into this build (enable its cargo feature)",
                self.codec
            )));
        }
        if self.use_dict && !self.codec.uses_dict() {
            return Err(invalid_param(format!(
                "dictionaries work with zstd, lz4 and lz4hc, not {}",
                self.codec
            )));
        }
        if self.format == ChunkFormat::Blosc1 {
            self.validate_blosc1()?;
        }
        for (slot, f) in self.filters.iter().enumerate() {
            if let Some(Filter::TruncPrec(m)) = f {
                let ts = if self.typesize > MAX_TYPESIZE {
                    1
                } else {
                    self.typesize
                };
                oxiblosc_kernels::trunc_prec_zeroed_bits(ts, *m as i8)
                    .map_err(|e| invalid_param(format!("filter slot {slot}: {e}")))?;
            }
        }
        Ok(())
    }
}

impl CParams {
    /// The Blosc1 flag byte's filter choice: `None`, or the one shuffle.
    pub(crate) fn blosc1_shuffle(&self) -> Option<Filter> {
        self.filters.iter().flatten().copied().next()
    }

    fn validate_blosc1(&self) -> Result<()> {
        if self.use_dict {
            return Err(invalid_param(
                "the Blosc1 chunk format has no dictionaries (use ChunkFormat::Blosc2)",
            ));
        }
        let active: Vec<Filter> = self.filters.iter().flatten().copied().collect();
        match active.as_slice() {
            [] | [Filter::Shuffle] | [Filter::BitShuffle] => Ok(()),
            _ => Err(invalid_param(format!(
                "the Blosc1 chunk format takes at most one filter, shuffle or bitshuffle \
                 (got {}); use ChunkFormat::Blosc2 for more",
                active
                    .iter()
                    .map(|f| f.name())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
        }
    }
}

/// Decompression parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct DParams {
    /// Threads used to decompress the blocks of one chunk.
    pub nthreads: usize,
    /// The largest decoded size accepted (`None`: any). A chunk declaring
    /// more fails with [`crate::Error::InvalidParam`] before anything is
    /// allocated or decoded. Run-length streams let a few bytes stand for
    /// up to 2 GiB legitimately: a caller decoding untrusted input sets a
    /// limit.
    pub max_output: Option<usize>,
    /// Handed to every user filter and codec call made while decompressing
    /// (see [`crate::plugins::CallContext`]).
    pub context: Option<crate::plugins::CallContext>,
}

impl Default for DParams {
    fn default() -> Self {
        DParams {
            nthreads: 1,
            max_output: None,
            context: None,
        }
    }
}

impl DParams {
    /// Set the number of threads (at least 1).
    pub fn nthreads(mut self, nthreads: usize) -> Self {
        self.nthreads = nthreads;
        self
    }

    /// Refuse chunks that decode to more than `limit` bytes (see
    /// [`DParams::max_output`](DParams#structfield.max_output)).
    pub fn max_output(mut self, limit: usize) -> Self {
        self.max_output = Some(limit);
        self
    }

    /// Check a chunk's declared size against the limit.
    pub(crate) fn check_output(&self, nbytes: usize) -> crate::Result<()> {
        match self.max_output {
            Some(limit) if nbytes > limit => Err(crate::Error::InvalidParam(format!(
                "chunk decodes to {nbytes} bytes, over the output limit of {limit}"
            ))),
            _ => Ok(()),
        }
    }
}
