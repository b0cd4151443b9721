//! Streaming writes: a Bloscpack file made from a byte stream of any
//! length, in memory bounded by a few chunks. The file's header and
//! offsets come first but depend on the chunk count, so the compressed
//! chunks wait in a spool (memory up to 8 MiB, then an unnamed temporary
//! file) until [`Encoder::finish`] writes the header, the metadata, the
//! offsets and then the chunks: the same bytes as [`pack`](super::pack).

use std::io::{self, Read, Write};
use std::path::PathBuf;

use super::checksum::Checksum;
use super::offsets;
use super::writer::{Options, Prepared, file_head, prepare};
use crate::error::Result;
use crate::stream::core::{EncoderCore, Framing};
use crate::stream::spool::Spool;

/// Writes a Bloscpack file to any writer from the bytes it is given (an
/// [`io::Write`]): they are cut into chunks of `opts.chunk_size`,
/// compressed as [`pack`](super::pack) compresses them, and the file is
/// written by [`Encoder::finish`], byte for byte the one `pack` makes of
/// the same bytes. Memory stays at a few chunks plus 8 MiB whatever the
/// input's length; the compressed chunks past that wait in a temporary
/// file ([`std::env::temp_dir`], or [`Encoder::spool_dir`]).
///
/// **An encoder dropped without `finish()` writes nothing.**
///
/// ```
/// use std::io::Write;
/// use oxiblosc::bloscpack::{self, Encoder, Options};
///
/// let data: Vec<u8> = (0u32..100_000).flat_map(|v| v.to_le_bytes()).collect();
/// let opts = Options::default().chunk_size(65_536);
/// let mut enc = Encoder::new(Vec::new(), &opts)?;
/// enc.write_all(&data)?;
/// let blp = enc.finish()?;
/// assert_eq!(blp, bloscpack::pack(&data, &opts)?);
/// assert_eq!(bloscpack::unpack(&blp)?, data);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Encoder<W: Write> {
    core: EncoderCore<BlpFraming>,
    inner: W,
    opts: Options,
    /// The metadata section `new` encoded (and so checked).
    metadata: Option<Vec<u8>>,
}

impl<W: Write> std::fmt::Debug for Encoder<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Encoder")
            .field("opts", &self.opts)
            .field("nchunks", &self.core.nchunks)
            .finish_non_exhaustive()
    }
}

/// Where the compressed chunks wait, with what the header and the offsets
/// need.
#[derive(Debug)]
struct BlpFraming {
    spool: Spool,
    checksum: Checksum,
    /// Where each chunk starts, from the first chunk's start.
    starts: Vec<u64>,
    /// The last chunk's uncompressed size.
    last: usize,
}

impl Framing for BlpFraming {
    fn put(&mut self, chunk: &[u8], nbytes: usize) -> io::Result<()> {
        self.starts.push(self.spool.len());
        self.spool.write_all(chunk)?;
        self.spool.write_all(&self.checksum.digest(chunk))?;
        self.last = nbytes;
        Ok(())
    }
}

impl<W: Write> Encoder<W> {
    /// An encoder writing to `inner` with `opts`.
    ///
    /// # Errors
    /// As [`pack`](super::pack): [`Error::InvalidParam`](crate::Error::InvalidParam)
    /// for a chunk size out of 1..=[`MAX_BUFFERSIZE`](crate::MAX_BUFFERSIZE), a typesize over 255, bad compression
    /// parameters or metadata that does not fit its room;
    /// [`Error::Unsupported`](crate::Error::Unsupported) for a codec this build lacks.
    pub fn new(inner: W, opts: &Options) -> Result<Self> {
        // Metadata that does not fit its room fails now, as in `pack`, not
        // after the whole stream was compressed; its section is kept for
        // `finish`.
        let Prepared { params, metadata } = prepare(opts)?;
        let framing = BlpFraming {
            spool: Spool::new(std::env::temp_dir()),
            checksum: opts.checksum,
            starts: Vec::new(),
            last: 0,
        };
        Ok(Encoder {
            core: EncoderCore::new(framing, params, opts.chunk_size),
            inner,
            opts: opts.clone(),
            metadata,
        })
    }

    /// Where the chunks past the first 8 MiB wait (default
    /// [`std::env::temp_dir`]).
    pub fn spool_dir(&mut self, dir: impl Into<PathBuf>) {
        self.core.framing.spool.set_dir(dir.into());
    }

    /// Chunks compressed so far.
    pub fn nchunks(&self) -> u64 {
        self.core.nchunks
    }

    /// The inner writer (nothing is written to it before `finish`).
    pub fn get_ref(&self) -> &W {
        &self.inner
    }

    /// Compress what is pending, then write the whole file to the inner
    /// writer, which is flushed and returned.
    ///
    /// # Errors
    /// The compressor's, the spool's or the writer's error; an
    /// [`Error::InvalidParam`](crate::Error::InvalidParam) (as an
    /// `io::Error`) for offset slots that overflow (metadata was checked by
    /// [`Encoder::new`]).
    pub fn finish(mut self) -> io::Result<W> {
        // An empty input is one empty chunk, as in `pack`.
        self.core.finish_chunks(true)?;
        let core_chunksize = self.core.chunksize();
        let typesize = self.core.params().typesize as u8;
        let f = &mut self.core.framing;
        let nchunks = f.starts.len();
        let chunk_size = if nchunks == 1 { f.last } else { core_chunksize };
        let head = file_head(
            &self.opts,
            self.metadata.as_deref(),
            typesize,
            nchunks,
            chunk_size,
            f.last,
        )?;
        let base = head.bytes.len() as u64;
        let mut head_bytes = head.bytes;
        if self.opts.offsets {
            let starts: Vec<u64> = f.starts.iter().map(|s| base + s).collect();
            let o = offsets::encode(&starts, nchunks);
            head_bytes[head.offsets_pos..head.offsets_pos + o.len()].copy_from_slice(&o);
        }
        self.inner.write_all(&head_bytes)?;
        f.spool.copy_to(&mut self.inner)?;
        self.inner.flush()?;
        Ok(self.inner)
    }
}

impl<W: Write> Encoder<W> {
    /// Read `reader` to its end and compress it through the bounded
    /// pipeline of [`stream`](crate::stream) (a reader thread, the
    /// compressor on this thread, the spool on a writer thread); returns
    /// the bytes read. [`Encoder::finish`] still writes the file.
    ///
    /// # Errors
    /// The first error of the reader, the compressor or the spool.
    pub fn copy_from<R: Read + Send>(&mut self, reader: R) -> io::Result<u64> {
        self.core.copy_from(reader)
    }
}

impl<W: Write> Write for Encoder<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.core.write(buf)
    }

    /// Nothing reaches the inner writer before `finish`: a no-op.
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
