//! The reusable contexts: [`Compressor`] and [`Decompressor`], each a set of
//! parameters and its [`Workers`] (pool, per-worker scratch and codec
//! contexts), kept between chunks. The one-shot functions of the crate root
//! make one per call.

use crate::chunk::{self, ChunkHeader};
use crate::error::Result;
use crate::parallel::Workers;
use crate::params::{CParams, DParams, MAX_OVERHEAD};

/// A reusable compressor: keeps its scratch buffers and codec contexts
/// (one set per worker thread) between calls, so after the first chunk
/// [`compress_into`](Self::compress_into) allocates nothing per chunk or
/// per block, and [`compress`](Self::compress) only the chunk it returns.
///
/// With `params.nthreads > 1` the blocks of a chunk are compressed in
/// parallel on a rayon pool of that many threads, shared by every
/// compressor and decompressor with the same thread count; the chunk is
/// byte for byte the one `nthreads = 1` gives. Small chunks (under 128 KiB)
/// are compressed on the calling thread.
pub struct Compressor {
    params: CParams,
    workers: Workers,
    /// [`compress`](Self::compress)'s output buffer, kept between calls
    /// up to [`KEEP_OUT`] bytes.
    out: Vec<u8>,
}

/// The largest output buffer a [`Compressor`] keeps between
/// [`compress`](Compressor::compress) calls.
const KEEP_OUT: usize = 16 << 20;

/// Shows the parameters (the workers' scratch is not shown).
impl std::fmt::Debug for Compressor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Compressor")
            .field("params", &self.params)
            .finish_non_exhaustive()
    }
}

impl Compressor {
    /// A compressor for `params` (checked on first use).
    pub fn new(params: CParams) -> Self {
        Compressor {
            workers: Workers::new(params.nthreads),
            params,
            out: Vec::new(),
        }
    }

    /// The parameters in use.
    pub fn params(&self) -> &CParams {
        &self.params
    }

    /// Compress `src` into a new chunk. See [`compress`](crate::compress).
    ///
    /// # Errors
    /// As [`compress`](crate::compress).
    ///
    /// The chunk's capacity is about its length: a caller may keep many
    /// (an NDArray edit collects every chunk it rewrites before one
    /// commit). The chunk is written into a buffer the compressor keeps
    /// and copied out, unless it fills most of that buffer (data that does
    /// not compress): then the buffer itself is handed over.
    pub fn compress(&mut self, src: &[u8]) -> Result<Vec<u8>> {
        self.compress_hinted(src, None)
    }

    /// [`Compressor::compress`] of a `src` whose zero bytes `zeros` tells
    /// (the caller built it so): the same chunk, without the blocks known
    /// to be zeros filtered or scanned (see
    /// `chunk::encode::compress_into_hinted`).
    pub(crate) fn compress_hinted(
        &mut self,
        src: &[u8],
        zeros: Option<chunk::encode::ZeroMap<'_>>,
    ) -> Result<Vec<u8>> {
        let need = src.len() + MAX_OVERHEAD;
        let mut out = std::mem::take(&mut self.out);
        if out.len() < need {
            // Zeroed by the allocator (fresh pages untouched until written).
            out = vec![0u8; need];
        }
        let r = chunk::encode::compress_into_hinted(
            src,
            &mut out[..need],
            &self.params,
            &mut self.workers,
            chunk::encode::Room::Bounded,
            zeros,
        );
        let chunk = match r {
            Ok(n) if n >= out.capacity() / 2 => {
                out.truncate(n);
                return Ok(out);
            }
            Ok(n) => Ok(out[..n].to_vec()),
            Err(e) => Err(e),
        };
        if out.len() <= KEEP_OUT {
            self.out = out;
        }
        chunk
    }

    /// Compress `src` into `dst`. See [`compress_into`](crate::compress_into).
    ///
    /// # Errors
    /// As [`compress_into`](crate::compress_into).
    pub fn compress_into(&mut self, src: &[u8], dst: &mut [u8]) -> Result<usize> {
        chunk::encode::compress_into(
            src,
            dst,
            &self.params,
            &mut self.workers,
            chunk::encode::Room::Bounded,
        )
    }

    /// Compress `src` into `dst` using all of `dst`'s room, as C-Blosc2's
    /// `blosc2_compress_ctx` and C-Blosc's `blosc_compress` use their
    /// `destsize`: the chunk is the one those calls write into a buffer of
    /// `dst.len()` bytes. It differs from [`compress_into`](Self::compress_into)'s
    /// only when `dst` has more than `src.len()` plus the header's length
    /// and some block does not compress: then such blocks are written as
    /// raw streams (a 4-byte size word each) instead of storing the whole
    /// chunk raw, and the chunk may exceed
    /// [`max_compressed_len`](crate::max_compressed_len)`(src.len())`.
    ///
    /// ```
    /// use oxiblosc::{CParams, Codec, Compressor};
    ///
    /// // Bytes that do not compress (an xorshift generator), one block.
    /// let mut x = 0x9e37_79b9_u32;
    /// let noise: Vec<u8> = (0..4096)
    ///     .map(|_| {
    ///         x ^= x << 13;
    ///         x ^= x >> 17;
    ///         x ^= x << 5;
    ///         (x >> 24) as u8
    ///     })
    ///     .collect();
    /// let mut c = Compressor::new(CParams::default().codec(Codec::BloscLz).typesize(1).filters(&[]));
    /// let mut dst = vec![0u8; noise.len() + 64];
    /// // Bounded: stored raw, 32 bytes of header.
    /// assert_eq!(c.compress_into(&noise, &mut dst).unwrap(), noise.len() + 32);
    /// // All the room: one raw stream after its block start and size word.
    /// let n = c.compress_into_all_room(&noise, &mut dst).unwrap();
    /// assert_eq!(n, noise.len() + 32 + 4 + 4);
    /// assert_eq!(oxiblosc::decompress(&dst[..n]).unwrap(), noise);
    /// ```
    ///
    /// # Errors
    /// As [`compress_into`](crate::compress_into).
    pub fn compress_into_all_room(&mut self, src: &[u8], dst: &mut [u8]) -> Result<usize> {
        chunk::encode::compress_into(
            src,
            dst,
            &self.params,
            &mut self.workers,
            chunk::encode::Room::All,
        )
    }
}

/// A reusable decompressor: keeps scratch buffers and codec contexts (one
/// set per worker thread) between calls. With `params.nthreads > 1` the
/// blocks of a chunk are decoded in parallel, each straight into its place
/// in the caller's buffer; small chunks (under 128 KiB) are decoded on the
/// calling thread.
pub struct Decompressor {
    params: DParams,
    workers: Workers,
}

/// Shows the parameters (the workers' scratch is not shown).
impl std::fmt::Debug for Decompressor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Decompressor")
            .field("params", &self.params)
            .finish_non_exhaustive()
    }
}

impl Decompressor {
    /// A decompressor for `params`.
    pub fn new(params: DParams) -> Self {
        Decompressor {
            workers: Workers::new(params.nthreads),
            params,
        }
    }

    /// The parameters in use.
    pub fn params(&self) -> &DParams {
        &self.params
    }

    /// Decompress a chunk into a new buffer. See [`decompress`](crate::decompress).
    ///
    /// # Errors
    /// As [`decompress`](crate::decompress).
    pub fn decompress(&mut self, src: &[u8]) -> Result<Vec<u8>> {
        // The output is sized by the header: only once the chunk's streams
        // are known to back that size.
        let h = chunk::validate(src)?;
        self.params.check_output(h.nbytes)?;
        // Fresh pages (calloc), advised onto huge pages before the decode
        // writes them (`perf/README.md`, session 41).
        let mut out = vec![0u8; h.nbytes];
        oxiblosc_kernels::advise_huge_pages(&mut out);
        let n = self.decompress_into(src, &mut out)?;
        out.truncate(n);
        Ok(out)
    }

    /// Decompress a chunk into `dst`. See [`decompress_into`](crate::decompress_into).
    ///
    /// # Errors
    /// As [`decompress_into`](crate::decompress_into).
    #[inline]
    pub fn decompress_into(&mut self, src: &[u8], dst: &mut [u8]) -> Result<usize> {
        self.decode_into(src, None, dst)
    }

    /// Decompress a chunk into `dst`, skipping the blocks flagged in
    /// `maskout` (one flag per block, `true` = not decoded): their bytes of
    /// `dst` are left as they were, and their streams are not read. What
    /// C-Blosc2's `blosc2_set_maskout` does for the next decompression; an
    /// NDArray slice uses it to decode only the blocks a box touches.
    /// Returns the chunk's size, as [`Decompressor::decompress_into`].
    ///
    /// ```
    /// use oxiblosc::{CParams, DParams, Decompressor, compress};
    /// let data: Vec<u8> = (0..64u32 * 1024).map(|v| (v % 251) as u8).collect();
    /// let chunk = compress(&data, &CParams::default().blocksize(16 * 1024))?;
    /// let mut out = vec![0xFFu8; data.len()];
    /// let mut d = Decompressor::new(DParams::default());
    /// d.decompress_masked_into(&chunk, &[true, false, true, true], &mut out)?;
    /// assert_eq!(out[16384..32768], data[16384..32768]);
    /// assert!(out[..16384].iter().all(|&b| b == 0xFF));
    /// # Ok::<(), oxiblosc::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Decompressor::decompress_into`], plus [`Error::InvalidParam`]
    /// for a mask whose length is not the chunk's number of blocks, or a
    /// VL-block chunk.
    ///
    /// [`Error::InvalidParam`]: crate::Error::InvalidParam
    pub fn decompress_masked_into(
        &mut self,
        src: &[u8],
        maskout: &[bool],
        dst: &mut [u8],
    ) -> Result<usize> {
        self.decode_into(src, Some(maskout), dst)
    }

    /// Both `decompress_into` forms: the output limit, then the decoder.
    #[inline]
    fn decode_into(
        &mut self,
        src: &[u8],
        maskout: Option<&[bool]>,
        dst: &mut [u8],
    ) -> Result<usize> {
        if self.params.max_output.is_some() {
            self.params.check_output(ChunkHeader::parse(src)?.nbytes)?;
        }
        let context = self.params.context.as_ref();
        chunk::decode::decompress_into(src, dst, maskout, &mut self.workers, context)
    }

    /// Items of a chunk. See [`getitem`](crate::getitem).
    ///
    /// # Errors
    /// As [`getitem`](crate::getitem).
    pub fn getitem(&mut self, src: &[u8], start: usize, nitems: usize) -> Result<Vec<u8>> {
        let h = ChunkHeader::parse(src)?;
        let len = nitems.saturating_mul(usize::from(h.typesize)).min(h.nbytes);
        if len > 4096 {
            // The output is sized by the header: check the chunk backs it.
            chunk::validate(src)?;
        }
        let mut out = vec![0u8; len];
        let n = self.getitem_into(src, start, nitems, &mut out)?;
        out.truncate(n);
        Ok(out)
    }

    /// Items of a chunk into `dst`; returns the bytes written.
    ///
    /// # Errors
    /// As [`getitem`](crate::getitem), plus [`Error::DstTooSmall`](crate::Error::DstTooSmall).
    pub fn getitem_into(
        &mut self,
        src: &[u8],
        start: usize,
        nitems: usize,
        dst: &mut [u8],
    ) -> Result<usize> {
        if self.params.max_output.is_some() {
            // getitem decodes whole blocks.
            let h = ChunkHeader::parse(src)?;
            self.params.check_output(h.blocksize.min(h.nbytes))?;
        }
        chunk::decode::getitem_into(
            src,
            start,
            nitems,
            dst,
            self.workers.inline(),
            self.params.context.as_ref(),
        )
    }

    /// The blocks of a VL-block chunk (format version 6), one buffer each.
    ///
    /// # Errors
    /// As [`decompress`](crate::decompress), plus [`Error::InvalidParam`](crate::Error::InvalidParam) for other chunks.
    pub fn vl_blocks(&mut self, src: &[u8]) -> Result<Vec<Vec<u8>>> {
        if self.params.max_output.is_some() {
            self.params.check_output(ChunkHeader::parse(src)?.nbytes)?;
        }
        chunk::decode::vl_blocks(src, &mut self.workers, self.params.context.as_ref())
    }
}
