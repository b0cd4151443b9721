//! [`ChunkEncoder`] / [`ChunkDecoder`]: a plain sequence of chunks, one
//! after the other. Each chunk carries its compressed size (header bytes
//! 12..16), so the sequence is self-delimiting and every chunk decodes on
//! its own (in C-Blosc2 and C-Blosc too, for `ChunkFormat::Blosc1`). An
//! empty input is one empty chunk.

use std::io::{self, Read, Write};

use super::core::{DecoderCore, EncoderCore, Framing, Source, check_chunksize};
use crate::chunk::header::ChunkPrefix;
use crate::{CParams, ChunkHeader, DParams, Result};

#[derive(Debug)]
pub(crate) struct ChunkSink<W>(W);

impl<W: Write> Framing for ChunkSink<W> {
    fn put(&mut self, chunk: &[u8], _nbytes: usize) -> io::Result<()> {
        self.0.write_all(chunk)
    }
}

/// Writes the bytes written to it as a sequence of chunks of `chunksize`
/// bytes (the last one shorter; at least one chunk, empty for an empty
/// input). End it with [`ChunkEncoder::finish`]: **an encoder dropped
/// without `finish()` leaves an incomplete stream** (the last chunk
/// missing).
///
/// ```
/// use std::io::{Read, Write};
/// use oxiblosc::stream::{ChunkDecoder, ChunkEncoder};
///
/// let mut enc = ChunkEncoder::new(Vec::new(), oxiblosc::CParams::default(), 1000)?;
/// enc.write_all(&[5u8; 2500])?;
/// let bytes = enc.finish()?;
/// let mut back = Vec::new();
/// ChunkDecoder::new(&bytes[..]).read_to_end(&mut back)?;
/// assert_eq!(back, vec![5u8; 2500]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct ChunkEncoder<W: Write> {
    core: EncoderCore<ChunkSink<W>>,
}

impl<W: Write> ChunkEncoder<W> {
    /// An encoder into `inner`; `chunksize` is rounded down to whole items.
    ///
    /// # Errors
    /// [`Error::InvalidParam`](crate::Error::InvalidParam) for bad `params`
    /// or a chunk size out of `1..=MAX_BUFFERSIZE`.
    pub fn new(inner: W, params: CParams, chunksize: usize) -> Result<Self> {
        let chunksize = check_chunksize(&params, chunksize)?;
        Ok(ChunkEncoder {
            core: EncoderCore::new(ChunkSink(inner), params, chunksize),
        })
    }

    /// The chunk size in use.
    pub fn chunksize(&self) -> usize {
        self.core.chunksize()
    }

    /// Chunks written so far.
    pub fn nchunks(&self) -> u64 {
        self.core.nchunks
    }

    /// The inner writer.
    pub fn get_ref(&self) -> &W {
        &self.core.framing.0
    }

    /// The inner writer, mutably (writing to it breaks the sequence).
    pub fn get_mut(&mut self) -> &mut W {
        &mut self.core.framing.0
    }

    /// The inner writer, **without writing the pending last chunk**.
    pub fn into_inner(self) -> W {
        self.core.framing.0
    }

    /// Write the last (short, or the one empty) chunk, flush, and return
    /// the inner writer.
    ///
    /// # Errors
    /// The writer's or the compressor's errors, or an earlier failure.
    pub fn finish(mut self) -> io::Result<W> {
        self.core.finish_chunks(true)?;
        let mut w = self.core.framing.0;
        w.flush()?;
        Ok(w)
    }
}

impl<W: Write + Send> ChunkEncoder<W> {
    /// Compress everything `reader` yields through the bounded pipeline (see
    /// [`FrameEncoder::copy_from`](super::FrameEncoder::copy_from)); returns
    /// the bytes read.
    ///
    /// # Errors
    /// The first error of the reader, the compressor or the writer.
    pub fn copy_from<R: Read + Send>(&mut self, reader: R) -> io::Result<u64> {
        self.core.copy_from(reader)
    }
}

impl<W: Write> Write for ChunkEncoder<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.core.write(buf)
    }

    /// Flushes the inner writer; bytes of an unfinished chunk stay pending.
    fn flush(&mut self) -> io::Result<()> {
        self.core.framing.0.flush()
    }
}

#[derive(Debug)]
pub(crate) struct ChunkSource<R> {
    r: R,
    index: usize,
    ended: bool,
}

fn bad(i: usize, msg: String) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("not a Blosc chunk (chunk {i}): {msg}"),
    )
}

impl<R: Read> Source for ChunkSource<R> {
    fn next_chunk(&mut self, buf: &mut Vec<u8>) -> io::Result<bool> {
        if self.ended {
            return Ok(false);
        }
        buf.clear();
        let i = self.index;
        let got = (&mut self.r).take(16).read_to_end(buf)?;
        if got == 0 && i > 0 {
            self.ended = true;
            return Ok(false);
        }
        if got < 16 {
            return Err(bad(
                i,
                format!("{got} bytes, shorter than any chunk header"),
            ));
        }
        let prefix = ChunkPrefix::read(buf).expect("16 bytes were read");
        let cbytes = prefix
            .chunk_len()
            .ok_or_else(|| bad(i, format!("chunk size {}", prefix.cbytes)))?;
        let more = (&mut self.r).take(cbytes as u64 - 16).read_to_end(buf)?;
        if more < cbytes - 16 {
            return Err(bad(
                i,
                format!(
                    "its header gives a {cbytes}-byte chunk but the input ends after {} bytes",
                    16 + more
                ),
            ));
        }
        ChunkHeader::parse(buf).map_err(|e| bad(i, e.to_string()))?;
        self.index += 1;
        Ok(true)
    }
}

/// Reads a sequence of chunks (as [`ChunkEncoder`], `oxiblosc compress - -`
/// or C-Blosc's `blosc_compress` calls one after the other write) and yields
/// the decompressed bytes, one chunk in memory at a time. An empty input,
/// a cut chunk or trailing bytes are an `Err`.
#[derive(Debug)]
pub struct ChunkDecoder<R: Read> {
    core: DecoderCore<ChunkSource<R>>,
}

impl<R: Read> ChunkDecoder<R> {
    /// A decoder over `reader`, one decompression thread.
    pub fn new(reader: R) -> Self {
        Self::with_params(reader, DParams::default())
    }

    /// A decoder over `reader`, decompressing with `params`.
    pub fn with_params(reader: R, params: DParams) -> Self {
        let source = ChunkSource {
            r: reader,
            index: 0,
            ended: false,
        };
        ChunkDecoder {
            core: DecoderCore::new(source, params),
        }
    }

    /// Chunks read so far.
    pub fn nchunks(&self) -> usize {
        self.core.source.index
    }

    /// The inner reader.
    pub fn get_ref(&self) -> &R {
        &self.core.source.r
    }

    /// The inner reader, mutably (reading from it breaks the stream).
    pub fn get_mut(&mut self) -> &mut R {
        &mut self.core.source.r
    }

    /// The inner reader.
    pub fn into_inner(self) -> R {
        self.core.source.r
    }
}

impl<R: Read + Send> ChunkDecoder<R> {
    /// Decompress the rest into `writer` through the bounded pipeline (see
    /// [`FrameDecoder::copy_to`](super::FrameDecoder::copy_to)); returns the
    /// bytes written.
    ///
    /// # Errors
    /// The first error of the reader, the decompressor or the writer.
    pub fn copy_to<W: Write + Send>(&mut self, writer: W) -> io::Result<u64> {
        self.core.copy_to(writer)
    }
}

impl<R: Read> Read for ChunkDecoder<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.core.read(buf)
    }
}
