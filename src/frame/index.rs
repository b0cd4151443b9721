//! The offsets index: where each chunk is ([`ChunkEntry`], [`Offsets`]),
//! read from the index chunk and checked entry by entry, and the checks a
//! stored chunk must pass against the frame.

use super::{Frame, FrameHeader, FrameIo, FrameKind, MAX_NCHUNKS, decode_limit, read_vec};
use crate::chunk::ChunkHeader;
use crate::error::{Result, corrupt, invalid_param};
use crate::params::CParams;
use crate::{SpecialValue, special_chunk};

/// Special offset codes (bit 63 set, kind in the top byte).
pub(super) const SPECIAL_ZEROS: i64 = 0x81u64.wrapping_shl(56) as i64;
pub(super) const SPECIAL_NAN: i64 = 0x82u64.wrapping_shl(56) as i64;
pub(super) const SPECIAL_UNINIT: i64 = 0x84u64.wrapping_shl(56) as i64;
/// Where chunk *i* is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ChunkEntry {
    /// Stored: offset from `header_len` (cframe) or chunk file id (sframe).
    Stored(u64),
    /// Not stored: a zeros, NaN or uninit chunk.
    Special(SpecialValue),
}

impl ChunkEntry {
    /// Decode an index entry.
    ///
    /// # Errors
    /// [`Error::Corrupt`](crate::Error::Corrupt) for a negative value that is not a special code.
    #[inline]
    pub fn from_raw(v: i64) -> Result<ChunkEntry> {
        if v >= 0 {
            return Ok(ChunkEntry::Stored(v as u64));
        }
        match v {
            SPECIAL_ZEROS => Ok(ChunkEntry::Special(SpecialValue::Zeros)),
            SPECIAL_NAN => Ok(ChunkEntry::Special(SpecialValue::Nan)),
            SPECIAL_UNINIT => Ok(ChunkEntry::Special(SpecialValue::Uninit)),
            _ => Err(corrupt(format!(
                "offsets index entry {v:#x} is not a special code"
            ))),
        }
    }
    /// The index entry value.
    ///
    /// # Errors
    /// [`Error::InvalidParam`](crate::Error::InvalidParam) for a repeated-value kind (never an offset) or
    /// an offset over `i64::MAX`.
    pub fn to_raw(self) -> Result<i64> {
        match self {
            ChunkEntry::Stored(o) => {
                i64::try_from(o).map_err(|_| invalid_param("chunk offset over i64::MAX"))
            }
            ChunkEntry::Special(SpecialValue::Zeros) => Ok(SPECIAL_ZEROS),
            ChunkEntry::Special(SpecialValue::Nan) => Ok(SPECIAL_NAN),
            ChunkEntry::Special(SpecialValue::Uninit) => Ok(SPECIAL_UNINIT),
            ChunkEntry::Special(SpecialValue::Value) => Err(invalid_param(
                "repeated-value chunks are stored, not index codes",
            )),
        }
    }
}

/// The decoded offsets index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Offsets {
    /// One entry per chunk.
    Explicit(Vec<i64>),
    /// Every entry the same (the repeated-value index C writes for
    /// `fill_special`); kept unexpanded.
    Repeated {
        /// The entry.
        value: i64,
        /// Number of entries.
        len: usize,
    },
}

impl Offsets {
    /// Where chunk `i` is.
    ///
    /// # Errors
    /// [`crate::Error::InvalidParam`] for `i` out of range;
    /// [`crate::Error::Corrupt`] for a bad entry.
    #[inline]
    pub(crate) fn entry(&self, i: usize) -> Result<ChunkEntry> {
        let v = self
            .get(i)
            .ok_or_else(|| invalid_param(format!("chunk {i} of {}", self.len())))?;
        ChunkEntry::from_raw(v)
    }
    /// Number of entries.
    pub fn len(&self) -> usize {
        match self {
            Offsets::Explicit(v) => v.len(),
            Offsets::Repeated { len, .. } => *len,
        }
    }
    /// No entries.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Entry `i`.
    #[inline]
    pub fn get(&self, i: usize) -> Option<i64> {
        match self {
            Offsets::Explicit(v) => v.get(i).copied(),
            Offsets::Repeated { value, len } => (i < *len).then_some(*value),
        }
    }
    /// How many entries from `i` on are equal to entry `i` (0 past the
    /// end): for a repeated-value index, without looking at them.
    pub(crate) fn run_len(&self, i: usize) -> usize {
        match self {
            Offsets::Explicit(v) => v
                .get(i)
                .map_or(0, |&e| v[i..].iter().take_while(|&&x| x == e).count()),
            Offsets::Repeated { len, .. } => len.saturating_sub(i),
        }
    }
    /// All entries, expanded (bounded by [`MAX_NCHUNKS`]).
    pub fn to_vec(&self) -> Vec<i64> {
        match self {
            Offsets::Explicit(v) => v.clone(),
            Offsets::Repeated { value, len } => vec![*value; *len],
        }
    }
}

/// Where the offsets index chunk sits and what it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IndexInfo {
    /// Position from the frame start.
    pub pos: u64,
    /// Its compressed size.
    pub cbytes: u64,
    /// Special kind, when the index itself is a special chunk.
    pub special: Option<SpecialValue>,
}

impl Frame {
    pub(super) fn read_index(&mut self, io: &mut dyn FrameIo, tstart: u64) -> Result<()> {
        let h = &self.header;
        let hlen = u64::from(h.header_len);
        let cbytes = h.cbytes as u64;
        // The chunks section lies between the header and the trailer, with
        // or without chunks: writers append at its end.
        let ipos = match h.kind {
            FrameKind::Contiguous => hlen
                .checked_add(cbytes)
                .filter(|&p| p <= tstart)
                .ok_or_else(|| corrupt("cbytes runs past the trailer"))?,
            FrameKind::Sparse => hlen,
        };
        if h.nbytes == 0 {
            return Ok(());
        }
        let span = tstart - ipos;
        if span < 32 {
            return Err(corrupt(format!(
                "offsets index: {span} bytes, less than a chunk header"
            )));
        }
        let ibytes = read_vec(io, ipos, span, "offsets index")?;
        let ih = ChunkHeader::parse(&ibytes)?;
        if ih.is_lazy() {
            return Err(corrupt("offsets index is a lazy chunk"));
        }
        let nchunks = match h.chunksize {
            cs if cs > 0 => {
                let n = (h.nbytes as u64).div_ceil(cs as u64);
                usize::try_from(n)
                    .ok()
                    .filter(|&n| n <= MAX_NCHUNKS)
                    .ok_or_else(|| corrupt(format!("{n} chunks")))?
            }
            0 => {
                if ih.nbytes % 8 != 0 {
                    return Err(corrupt("offsets index size is not a multiple of 8"));
                }
                ih.nbytes / 8
            }
            _ => return Err(corrupt("chunksize −1 with nbytes > 0")),
        };
        if nchunks > MAX_NCHUNKS {
            return Err(corrupt(format!("{nchunks} chunks")));
        }
        // Bytes in no chunk (variable-size chunks and an empty index): an
        // edit would write the frame back with its nbytes and no index,
        // which does not reopen (found by `sframe_read`, session 26).
        if nchunks == 0 {
            return Err(corrupt(format!(
                "the header says {} bytes and the offsets index lists no chunk",
                h.nbytes
            )));
        }
        if ih.nbytes != nchunks * 8 {
            return Err(corrupt(format!(
                "offsets index holds {} bytes, {nchunks} chunks need {}",
                ih.nbytes,
                nchunks * 8
            )));
        }
        let special = ih.special();
        let offsets = match special {
            Some(SpecialValue::Value) => {
                if ih.cbytes != 40 || ih.typesize != 8 {
                    return Err(corrupt("repeated-value offsets index is not 8-byte"));
                }
                let mut v = [0u8; 8];
                v.copy_from_slice(&ibytes[32..40]);
                Offsets::Repeated {
                    value: i64::from_le_bytes(v),
                    len: nchunks,
                }
            }
            Some(SpecialValue::Zeros) => Offsets::Repeated {
                value: 0,
                len: nchunks,
            },
            Some(k) => return Err(corrupt(format!("offsets index is a {k:?} chunk"))),
            None => {
                let limit = decode_limit(h.frame_len);
                if ih.nbytes > limit {
                    return Err(corrupt(format!(
                        "offsets index of {} bytes exceeds the decode limit {limit}",
                        ih.nbytes
                    )));
                }
                let raw = crate::decompress(&ibytes[..ih.cbytes])?;
                if raw.len() != nchunks * 8 {
                    return Err(corrupt("offsets index decodes to the wrong size"));
                }
                Offsets::Explicit(
                    raw.chunks_exact(8)
                        .map(|c| {
                            let mut v = [0u8; 8];
                            v.copy_from_slice(c);
                            i64::from_le_bytes(v)
                        })
                        .collect(),
                )
            }
        };
        // Check every distinct entry.
        let check = |v: i64| -> Result<()> {
            match ChunkEntry::from_raw(v)? {
                ChunkEntry::Special(_) if h.chunksize <= 0 => {
                    Err(corrupt("special offset in a frame of variable-size chunks"))
                }
                ChunkEntry::Special(_) => Ok(()),
                ChunkEntry::Stored(o) => match h.kind {
                    FrameKind::Contiguous if cbytes < 32 || o > cbytes - 32 => {
                        Err(corrupt(format!("chunk offset {o} outside cbytes {cbytes}")))
                    }
                    FrameKind::Sparse if o > u64::from(u32::MAX) => {
                        Err(corrupt(format!("chunk id {o} over 0xFFFFFFFF")))
                    }
                    _ => Ok(()),
                },
            }
        };
        match &offsets {
            Offsets::Explicit(v) => v.iter().try_for_each(|&o| check(o))?,
            Offsets::Repeated { value, len } if *len > 0 => check(*value)?,
            Offsets::Repeated { .. } => {}
        }
        self.offsets = offsets;
        self.index = Some(IndexInfo {
            pos: ipos,
            cbytes: ih.cbytes as u64,
            special,
        });
        Ok(())
    }
}

/// Check a stored chunk of slot `i` of a frame of `nchunks` chunks against
/// its header: whole (`cbytes` is the stored length), not lazy, no larger
/// than the frame, and of the size a fixed `chunksize` implies.
///
/// # Errors
/// [`Error::Corrupt`](crate::Error::Corrupt) on mismatch; the chunk header's errors.
pub(crate) fn check_stored_chunk(
    h: &FrameHeader,
    nchunks: usize,
    bytes: &[u8],
    i: usize,
) -> Result<()> {
    // Inlined: out of line, the header came back through memory and was
    // read at once, a store-forwarding stall on every chunk read
    // (perf/README.md, session 22).
    let ch = ChunkHeader::parse_inline(bytes)?;
    check_stored_fields(
        h,
        nchunks,
        bytes.len(),
        (ch.nbytes, ch.cbytes, ch.is_lazy()),
        i,
    )
}

/// [`check_stored_chunk`] for a reader that decodes the chunk next: the
/// same checks against the frame, on the header's size words and lazy flag
/// alone, for the decoder parses and checks the whole header anyway (a
/// second parse was ~150 instructions of a 4 KiB chunk's read through a
/// super-chunk; perf/README.md, session 23).
///
/// # Errors
/// As [`check_stored_chunk`], for a chunk shorter than a header or with
/// negative sizes too.
// `#[inline]` alone left it a call, its `Result` through memory.
#[inline(always)]
pub(crate) fn check_stored_sizes(
    h: &FrameHeader,
    nchunks: usize,
    bytes: &[u8],
    i: usize,
) -> Result<()> {
    use crate::chunk::header::{bflags, flags};
    let word = |o: usize| {
        bytes
            .get(o..o + 4)
            .and_then(|b| usize::try_from(i32::from_le_bytes(b.try_into().unwrap())).ok())
    };
    let (Some(nbytes), Some(cbytes)) = (word(4), word(12)) else {
        return Err(corrupt(format!(
            "chunk {i}: no chunk header in its {} bytes, or negative sizes",
            bytes.len()
        )));
    };
    let lazy = bytes.len() >= 32
        && bytes[2] & flags::EXTENDED == flags::EXTENDED
        && bytes[31] & bflags::LAZY != 0;
    check_stored_fields(h, nchunks, bytes.len(), (nbytes, cbytes, lazy), i)
}

/// The checks of [`check_stored_chunk`] on the header's `nbytes`, `cbytes`
/// and lazy flag, for a chunk of `stored` bytes.
#[inline(always)]
pub(crate) fn check_stored_fields(
    h: &FrameHeader,
    nchunks: usize,
    stored: usize,
    (nbytes, cbytes, lazy): (usize, usize, bool),
    i: usize,
) -> Result<()> {
    if cbytes != stored {
        return Err(corrupt(format!(
            "chunk {i}: header cbytes {cbytes} but {stored} bytes stored"
        )));
    }
    if lazy {
        return Err(corrupt(format!("chunk {i} is a lazy chunk")));
    }
    if nbytes as u64 > h.nbytes as u64 {
        return Err(corrupt(format!("chunk {i} is larger than the frame")));
    }
    if let Some(n) = expected_nbytes(h.nbytes, h.chunksize, nchunks, i)
        && nbytes != n
    {
        return Err(corrupt(format!(
            "chunk {i} holds {nbytes} bytes, the frame expects {n}"
        )));
    }
    Ok(())
}

/// Size chunk `i` of `nchunks` must have for a fixed `chunksize`.
pub(crate) fn expected_nbytes(
    nbytes: i64,
    chunksize: i32,
    nchunks: usize,
    i: usize,
) -> Option<usize> {
    if chunksize <= 0 || i >= nchunks {
        return None;
    }
    let cs = chunksize as u64;
    let nb = nbytes as u64;
    if i + 1 < nchunks {
        Some(cs as usize)
    } else {
        let r = nb - cs * (nchunks as u64 - 1);
        usize::try_from(r).ok()
    }
}

/// A header-only special chunk of `n` bytes with the frame's type size
/// and block size.
pub(crate) fn materialize_special(
    h: &FrameHeader,
    n: usize,
    kind: SpecialValue,
) -> Result<Vec<u8>> {
    let mut p = CParams {
        typesize: usize::try_from(h.typesize).unwrap_or(1).clamp(1, 255),
        ..CParams::default()
    };
    if h.typesize > 255 {
        p.typesize = 1;
    }
    if kind == SpecialValue::Nan && !n.is_multiple_of(p.typesize) {
        return Err(corrupt("NaN chunk size is not a whole number of items"));
    }
    if kind == SpecialValue::Uninit && !n.is_multiple_of(p.typesize) {
        p.typesize = 1;
    }
    p.blocksize = usize::try_from(h.blocksize).unwrap_or(0).min(n);
    special_chunk(&p, n, kind, &[]).map_err(|e| corrupt(format!("special chunk: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `check_stored_sizes` (what a reader that decodes next checks) agrees
    /// with `check_stored_chunk` on every chunk whose header parses: the
    /// same verdict for right and wrong `nbytes`, `cbytes` and lazy flags,
    /// in every slot of a frame of fixed-size chunks.
    #[test]
    fn the_size_check_agrees_with_the_whole_one() {
        let p = CParams::default().typesize(4);
        let data: Vec<u8> = (0..4000u32).flat_map(|i| (i / 3).to_le_bytes()).collect();
        let chunk = crate::compress(&data, &p).unwrap();
        let mut h = FrameHeader::new(FrameKind::Contiguous, &p, 1, 16_000);
        h.nbytes = 3 * 16_000 + 8_000;
        let mut verdicts = [0usize; 2];
        for nbytes in [16_000i32, 8_000, 16_004, 15_996, 0, 1 << 30] {
            for cbytes_delta in [0i32, 1, -1] {
                for lazy in [false, true] {
                    let mut c = chunk.clone();
                    c[4..8].copy_from_slice(&nbytes.to_le_bytes());
                    let cb = c.len() as i32 + cbytes_delta;
                    c[12..16].copy_from_slice(&cb.to_le_bytes());
                    if lazy {
                        c[31] |= crate::chunk::header::bflags::LAZY;
                    }
                    if ChunkHeader::parse_inline(&c).is_err() {
                        continue;
                    }
                    for (i, n) in [(0, 4), (3, 4), (2, 3)] {
                        let whole = check_stored_chunk(&h, n, &c, i).is_ok();
                        let sizes = check_stored_sizes(&h, n, &c, i).is_ok();
                        assert_eq!(
                            whole, sizes,
                            "nbytes {nbytes} cbytes {cb} lazy {lazy} {i}/{n}"
                        );
                        verdicts[usize::from(whole)] += 1;
                    }
                }
            }
        }
        // Both verdicts were reached.
        assert!(verdicts[0] > 0 && verdicts[1] > 0, "{verdicts:?}");
        // Too short for a header, and negative sizes: refused.
        assert!(check_stored_sizes(&h, 4, &chunk[..10], 0).is_err());
        let mut c = chunk.clone();
        c[4..8].copy_from_slice(&(-4i32).to_le_bytes());
        assert!(check_stored_sizes(&h, 4, &c, 0).is_err());
    }
}
