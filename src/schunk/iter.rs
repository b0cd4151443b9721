//! Iterating over a super-chunk's chunks, and typed reads of its items.

use bytemuck::Pod;

use super::SChunk;
use super::slice::SliceOut;
use crate::error::{Result, corrupt, invalid_param};

/// An iterator over a super-chunk's chunks, in order: decompressed
/// ([`SChunk::iter_chunks`]) or as stored ([`SChunk::iter_compressed`]).
/// [`ChunkIter::next_into`] reuses one buffer for every chunk.
#[derive(Debug)]
pub struct ChunkIter<'a> {
    sc: &'a mut SChunk,
    next: usize,
    end: usize,
    compressed: bool,
}

impl ChunkIter<'_> {
    /// Decompress the next chunk into `buf` (resized to its size, growing
    /// only as the chunk is checked); `None` after the last chunk. Always
    /// decompresses, whichever kind of iterator this is.
    pub fn next_into(&mut self, buf: &mut Vec<u8>) -> Option<Result<usize>> {
        if self.next >= self.end {
            return None;
        }
        let i = self.next;
        self.next += 1;
        Some((|| {
            let n = self.sc.chunk_nbytes(i)?;
            // The size comes from the frame header: refused by the output
            // limit before the buffer grows to it.
            self.sc.dparams.check_output(n)?;
            buf.resize(n, 0);
            let got = self.sc.decompress_chunk_into(i, buf)?;
            if got != n {
                return Err(corrupt(format!(
                    "chunk {i} decompressed to {got} of {n} bytes"
                )));
            }
            Ok(got)
        })())
    }
}

impl ChunkIter<'_> {
    /// The next chunk as stored, borrowed from an in-memory frame (no
    /// copy) or read from its file; `None` after the last chunk. Special
    /// index entries come as header-only chunks.
    pub fn next_compressed(&mut self) -> Option<Result<std::borrow::Cow<'_, [u8]>>> {
        if self.next >= self.end {
            return None;
        }
        let i = self.next;
        self.next += 1;
        Some(self.sc.get_chunk(i))
    }
}

impl Iterator for ChunkIter<'_> {
    type Item = Result<Vec<u8>>;

    fn next(&mut self) -> Option<Result<Vec<u8>>> {
        if self.next >= self.end {
            return None;
        }
        let i = self.next;
        self.next += 1;
        Some(if self.compressed {
            self.sc.get_chunk(i).map(|c| c.into_owned())
        } else {
            self.sc.decompress_chunk_vec(i)
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.end - self.next;
        (n, Some(n))
    }
}

impl ExactSizeIterator for ChunkIter<'_> {}

impl SChunk {
    /// The chunks, decompressed, in order (an error item for a chunk that
    /// fails; iteration may go on).
    ///
    /// ```
    /// let mut sc = oxiblosc::SChunk::builder().chunksize(4).build_memory()?;
    /// sc.append_buffer(b"abcd")?;
    /// sc.append_buffer(b"ef")?;
    /// let chunks: Vec<Vec<u8>> = sc.iter_chunks().collect::<Result<_, _>>()?;
    /// assert_eq!(chunks, [b"abcd".to_vec(), b"ef".to_vec()]);
    /// # Ok::<(), oxiblosc::Error>(())
    /// ```
    pub fn iter_chunks(&mut self) -> ChunkIter<'_> {
        let end = self.nchunks();
        ChunkIter {
            sc: self,
            next: 0,
            end,
            compressed: false,
        }
    }

    /// The chunks as stored (compressed; special index entries as
    /// header-only chunks), in order.
    pub fn iter_compressed(&mut self) -> ChunkIter<'_> {
        let end = self.nchunks();
        ChunkIter {
            sc: self,
            next: 0,
            end,
            compressed: true,
        }
    }

    /// Read `out.len()` items from item `start` on into `out`, whose item
    /// type must have the super-chunk's type size.
    ///
    /// ```
    /// let mut sc = oxiblosc::SChunk::builder()
    ///     .cparams(oxiblosc::CParams::default().typesize(4))
    ///     .chunksize(40)
    ///     .build_memory()?;
    /// let data: Vec<u32> = (0..25).collect();
    /// sc.append_buffer(bytemuck::cast_slice(&data[..10]))?;
    /// sc.append_buffer(bytemuck::cast_slice(&data[10..20]))?;
    /// sc.append_buffer(bytemuck::cast_slice(&data[20..]))?;
    /// let mut got = [0u32; 12];
    /// sc.read_items(5, &mut got)?;
    /// assert_eq!(got[..], data[5..17]);
    /// # Ok::<(), oxiblosc::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::InvalidParam`](crate::Error::InvalidParam) for a type of
    /// another size or a range past the end; [`Error::Corrupt`] when the
    /// chunks end before the range the header's size allows; the chunks'
    /// errors.
    ///
    /// [`Error::Corrupt`]: crate::Error::Corrupt
    pub fn read_items<T: Pod>(&mut self, start: u64, out: &mut [T]) -> Result<()> {
        let ts = std::mem::size_of::<T>();
        if ts != self.typesize() {
            return Err(invalid_param(format!(
                "items of {ts} bytes, but the super-chunk's type size is {}",
                self.typesize()
            )));
        }
        let dst: &mut [u8] = bytemuck::cast_slice_mut(out);
        let a = start
            .checked_mul(ts as u64)
            .ok_or_else(|| invalid_param("start item out of range"))?;
        let b = a
            .checked_add(dst.len() as u64)
            .filter(|&b| b <= self.nbytes())
            .ok_or_else(|| {
                invalid_param(format!(
                    "items {start}..+{} past the end of {} bytes",
                    dst.len() / ts.max(1),
                    self.nbytes()
                ))
            })?;
        // Read as `get_slice_into` reads (without its output limit on the
        // whole range: `out` is the caller's): index entries that repeat one
        // chunk are passed over as a run, not each with a read of the chunk
        // (a file open each in a directory frame; fuzz-sframe_read-6), and
        // chunks that end before the range does are an error, not bytes of
        // `out` left as they were.
        self.slice_to(a, b, &mut SliceOut::Into(dst, 0))
    }
}
