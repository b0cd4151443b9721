//! Reading slices: byte ranges of the flat uncompressed content, decoding
//! only the chunks and blocks they touch.

use super::SChunk;
use crate::SpecialValue;
use crate::chunk::ChunkHeader;
use crate::error::{Error, Result, corrupt, invalid_param};
use crate::frame::{self, ChunkEntry};

impl SChunk {
    /// The chunk to start a scan for byte `start` at, and its position.
    pub(super) fn first_chunk_at(&self, start: u64) -> (usize, u64) {
        match self.chunksize() {
            Some(cs) if self.nchunks() > 0 => {
                let i = ((start / cs as u64) as usize).min(self.nchunks() - 1);
                (i, i as u64 * cs as u64)
            }
            _ => (0, 0),
        }
    }

    /// Bytes `[start, stop)` of the flat uncompressed content. Only the
    /// chunks the range touches are read, and of a chunk it covers in part
    /// only the blocks it lies in are decoded.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] for a range outside `0..nbytes` or over
    /// [`DParams::max_output`](crate::DParams::max_output); as [`SChunk::decompress_chunk_into`].
    pub fn get_slice(&mut self, start: u64, stop: u64) -> Result<Vec<u8>> {
        let len = self.check_slice(start, stop)?;
        // The range is checked against the header's nbytes only: the
        // buffer grows as chunks actually decode, never sized by a header,
        // and a failed allocation is an error, not an abort.
        let mut out = Vec::with_capacity(len.min(1 << 20));
        self.slice_to(start, stop, &mut SliceOut::Grow(&mut out))?;
        Ok(out)
    }

    /// Bytes `[start, stop)` of the flat uncompressed content into `dst` (at
    /// least `stop - start` long); returns the bytes written. The `_into`
    /// form of [`SChunk::get_slice`].
    ///
    /// # Errors
    /// As [`SChunk::get_slice`], plus [`Error::DstTooSmall`].
    pub fn get_slice_into(&mut self, start: u64, stop: u64, dst: &mut [u8]) -> Result<usize> {
        let len = self.check_slice(start, stop)?;
        if dst.len() < len {
            return Err(Error::DstTooSmall {
                needed: len,
                available: dst.len(),
            });
        }
        self.slice_to(start, stop, &mut SliceOut::Into(&mut dst[..len], 0))?;
        Ok(len)
    }

    /// The length of the slice `[start, stop)`, if it is one.
    fn check_slice(&self, start: u64, stop: u64) -> Result<usize> {
        if start > stop || stop > self.nbytes() {
            return Err(invalid_param(format!(
                "slice {start}..{stop} outside 0..{}",
                self.nbytes()
            )));
        }
        let len = stop - start;
        if let Some(limit) = self.dparams.max_output
            && len > limit as u64
        {
            return Err(invalid_param(format!(
                "slice of {len} bytes is over the output limit of {limit}"
            )));
        }
        usize::try_from(len).map_err(|_| invalid_param(format!("slice of {len} bytes")))
    }

    /// Writes bytes `[start, stop)` (a checked range) to `out`, chunk by chunk.
    pub(super) fn slice_to(&mut self, start: u64, stop: u64, out: &mut SliceOut<'_>) -> Result<()> {
        let (mut i, mut pos) = self.first_chunk_at(start);
        // The size of the last chunk read, by its index entry: entries
        // that repeat it (an index of one repeated value lists millions of
        // chunks in a few bytes) name the same chunk, and in a frame of
        // chunks of any size a chunk's size is its header's, read from
        // disk for a directory frame. A 2 KiB sparse frame of 14.7 million
        // entries naming one chunk file took 156 s (a file read each) to
        // slice past them (fuzz-sframe_read-6).
        // (With a fixed chunk size the size comes from the header, and the
        // last chunk's differs from the others': nothing is kept, and
        // `first_chunk_at` already skipped the chunks before `start`.)
        let sizes_vary = self.chunksize().is_none();
        let mut last: Option<(ChunkEntry, u64)> = None;
        while i < self.nchunks() && pos < stop {
            let entry = self.entry(i)?;
            let n = match last {
                Some((e, n)) if e == entry => n,
                _ => {
                    let n = self.chunk_nbytes(i)? as u64;
                    if sizes_vary {
                        last = Some((entry, n));
                    }
                    n
                }
            };
            if n == 0 || pos + n <= start {
                // Nothing of this chunk is in the slice: it and the
                // entries after it that repeat it and lie before `start`
                // too (all of them, for an empty chunk) are passed over at
                // once, not one by one (up to `MAX_NCHUNKS` of them).
                let run = if sizes_vary {
                    self.offsets.run_len(i)
                } else {
                    1
                };
                let before = (start.saturating_sub(pos))
                    .checked_div(n)
                    .map_or(usize::MAX, |k| usize::try_from(k).unwrap_or(usize::MAX));
                let k = run.min(before);
                i += k;
                pos += k as u64 * n;
                continue;
            }
            let a = (start.max(pos) - pos) as usize;
            let b = (stop.min(pos + n) - pos) as usize;
            if let ChunkEntry::Special(kind) = entry {
                // An index code: the pattern, without materialising the
                // whole chunk (a header may declare 2 GiB chunks).
                let ts = match kind {
                    SpecialValue::Nan => usize::try_from(self.header.typesize).unwrap_or(1),
                    _ => 1,
                };
                let one = frame::materialize_special(&self.header, ts, kind)?;
                let item = self.decompressor.decompress(&one)?;
                for (k, o) in (a..b).zip(out.next(b - a)?) {
                    *o = item[k % ts];
                }
            } else {
                self.slice_of_chunk(i, n as usize, a, b, out)?;
            }
            pos += n;
            i += 1;
        }
        if pos < stop {
            // The header's nbytes promised more than the chunks hold.
            return Err(corrupt(format!(
                "slice {start}..{stop}: the chunks end at byte {pos}"
            )));
        }
        Ok(())
    }

    /// Writes bytes `[a, b)` of stored chunk `i` (of `n` bytes) to `out`:
    /// the whole chunk decodes straight into it; part of one decodes only
    /// the blocks it lies in (a getitem of the items covering it).
    fn slice_of_chunk(
        &mut self,
        i: usize,
        n: usize,
        a: usize,
        b: usize,
        out: &mut SliceOut<'_>,
    ) -> Result<()> {
        let (chunk, decompressor) = self.chunk_and_decompressor(i)?;
        let h = ChunkHeader::parse(&chunk)?;
        if h.nbytes != n {
            return Err(corrupt(format!(
                "chunk {i} holds {} bytes, not {n}",
                h.nbytes
            )));
        }
        let ts = usize::from(h.typesize).max(1);
        // getitem reaches whole items only: bytes after the last whole item
        // (a chunk size not a multiple of the type size) need the chunk.
        let (first, last) = (a / ts, b.div_ceil(ts));
        let whole = a == 0 && b == n || last * ts > n;
        if whole {
            // Sized by the header: only once the streams are known to back it.
            crate::chunk::validate(&chunk)?;
        }
        let dst = out.next(b - a)?;
        let got = if a == 0 && b == n {
            decompressor.decompress_into(&chunk, dst)?
        } else if whole {
            let all = decompressor.decompress(&chunk)?;
            copy_part(dst, &all, a, i)?
        } else if a.is_multiple_of(ts) && b.is_multiple_of(ts) {
            decompressor.getitem_into(&chunk, first, last - first, dst)?
        } else {
            let items = decompressor.getitem(&chunk, first, last - first)?;
            copy_part(dst, &items, a - first * ts, i)?
        };
        if got != b - a {
            return Err(corrupt(format!("chunk {i} gave {got} of {} bytes", b - a)));
        }
        Ok(())
    }
}

/// Fills `dst` from `src[at..]`; returns its length, or an error when
/// chunk `i` decoded to less.
fn copy_part(dst: &mut [u8], src: &[u8], at: usize, i: usize) -> Result<usize> {
    let part = src
        .get(at..at + dst.len())
        .ok_or_else(|| corrupt(format!("chunk {i} decoded to {} bytes", src.len())))?;
    dst.copy_from_slice(part);
    Ok(dst.len())
}

/// Where a slice goes: a vector that grows as the chunks decode, or the
/// caller's buffer (of the slice's length) and the bytes written so far.
pub(super) enum SliceOut<'a> {
    Grow(&'a mut Vec<u8>),
    Into(&'a mut [u8], usize),
}

impl SliceOut<'_> {
    /// The next `n` bytes of the output.
    fn next(&mut self, n: usize) -> Result<&mut [u8]> {
        match self {
            SliceOut::Grow(v) => {
                v.try_reserve(n)
                    .map_err(|_| invalid_param(format!("slice: {n} bytes: out of memory")))?;
                let old = v.len();
                v.resize(old + n, 0);
                Ok(&mut v[old..])
            }
            SliceOut::Into(d, pos) => {
                let at = *pos;
                *pos += n;
                d.get_mut(at..at + n)
                    .ok_or_else(|| corrupt("slice: the chunks hold more than the range"))
            }
        }
    }
}
