//! Streaming: a Bloscpack file read front to back from any reader (a pipe
//! too) with one chunk in memory at a time, each chunk's digest checked
//! before it is decoded. What [`Reader`](super::Reader) checks on the whole
//! file is checked here as the bytes arrive.

use std::io::{self, Read, Write};

use serde_json::Value;

use super::header::{HEADER_LEN, Header};
use super::metadata::{self, METADATA_HEADER_LEN, MetadataHeader};
use super::offsets::{self, SLOT_LEN};
use super::reader::{BLOSC1_HEADER_LEN, chunk_err};
use crate::DParams;
use crate::error::{Error, Result};
use crate::stream::core::{DecoderCore, Source};

/// Reads a Bloscpack file from any reader and yields the decompressed
/// bytes (an [`io::Read`]), holding one chunk at a time: memory stays at a
/// few chunks whatever the file's size. The header, the metadata and the
/// offsets are read by [`Decoder::new`]; then every chunk is checked as
/// [`Reader`](super::Reader) checks it (its offset, its digest before it is
/// decoded, its size against the header's), and a file that ends early or
/// has bytes after its last chunk (without an offsets section) is an
/// `Err`. Unlike [`Reader`](super::Reader), which checks the whole file
/// before the first chunk is decoded, a fault in a later chunk is found
/// only when that chunk is reached, after the earlier ones were yielded.
///
/// ```
/// use std::io::Read;
/// use oxiblosc::bloscpack::{self, Decoder, Options};
///
/// let data: Vec<u8> = (0u32..100_000).flat_map(|v| v.to_le_bytes()).collect();
/// let blp = bloscpack::pack(&data, &Options::default().chunk_size(65_536))?;
/// let mut dec = Decoder::new(&blp[..])?;
/// assert_eq!(dec.header().nchunks, Some(7));
/// let mut back = Vec::new();
/// dec.read_to_end(&mut back)?;
/// assert_eq!(back, data);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Decoder<R: Read> {
    metadata: Option<(MetadataHeader, Value)>,
    core: DecoderCore<BlpSource<R>>,
}

/// The chunks of a Bloscpack file, one at a time, from just after its
/// offsets section.
#[derive(Debug)]
struct BlpSource<R> {
    r: R,
    header: Header,
    /// The used offset slots (`None` for −1), if the file has offsets.
    offsets: Option<Vec<Option<u64>>>,
    /// Where the next byte read lies in the file.
    pos: u64,
    /// The next chunk's index.
    index: u64,
    ended: bool,
    digest: Vec<u8>,
}

/// An `io::Error` carrying `e` (kind `InvalidData`, or the I/O error's own).
fn io_err(e: Error) -> io::Error {
    match e {
        Error::Io(e) => e,
        e => io::Error::new(io::ErrorKind::InvalidData, e),
    }
}

/// Read up to `n` bytes of `r` onto the end of `buf` (which grows with
/// what arrives, not by `n`); returns how many came.
fn read_up_to<R: Read>(r: &mut R, n: u64, buf: &mut Vec<u8>) -> io::Result<usize> {
    r.take(n).read_to_end(buf)
}

impl<R: Read> Decoder<R> {
    /// Read and check the header, the metadata section and the offsets
    /// from `reader`; one decompression thread.
    ///
    /// # Errors
    /// As [`Reader::new`](super::Reader::new) for those sections
    /// ([`Error::Truncated`] when the input ends inside one), and
    /// [`Error::Io`] from the reader.
    pub fn new(reader: R) -> Result<Self> {
        Self::with_params(reader, DParams::default())
    }

    /// As [`Decoder::new`], decompressing with `params`.
    ///
    /// # Errors
    /// As [`Decoder::new`].
    pub fn with_params(mut reader: R, params: DParams) -> Result<Self> {
        let mut buf = Vec::new();
        read_up_to(&mut reader, HEADER_LEN as u64, &mut buf)?;
        let header = Header::parse(&buf)?;
        let mut pos = HEADER_LEN as u64;
        let metadata = if header.metadata {
            buf.clear();
            read_up_to(&mut reader, METADATA_HEADER_LEN as u64, &mut buf)?;
            let len = MetadataHeader::parse(&buf)?.section_len();
            read_up_to(&mut reader, len - METADATA_HEADER_LEN as u64, &mut buf)?;
            // Checks the length read against the section's, the digest and
            // the JSON.
            let (mh, value, len) = metadata::decode(&buf)?;
            pos += len as u64;
            Some((mh, value))
        } else {
            None
        };
        let offsets = if header.offsets {
            let slots = header.offset_slots().ok_or_else(|| {
                Error::InvalidHeader("bloscpack header: nchunks + max_app_chunks overflows".into())
            })?;
            let used = header.nchunks.unwrap_or(0);
            let mut kept = Vec::new();
            // Read in batches of up to 4,096 slots (a file keeps 10 free
            // slots a chunk by default), each slot checked as it comes.
            let mut i = 0u64;
            while i < slots {
                let batch = (slots - i).min(4096);
                buf.clear();
                let got = read_up_to(&mut reader, batch * SLOT_LEN as u64, &mut buf)?;
                if (got as u64) < batch * SLOT_LEN as u64 {
                    return Err(Error::Truncated {
                        what: "bloscpack offsets",
                        needed: usize::try_from(slots.saturating_mul(SLOT_LEN as u64))
                            .unwrap_or(usize::MAX),
                        available: usize::try_from(i * SLOT_LEN as u64)
                            .unwrap_or(usize::MAX)
                            .saturating_add(got),
                    });
                }
                for b in buf.chunks_exact(SLOT_LEN) {
                    if let Some(o) = offsets::slot(i, b.try_into().unwrap(), used)? {
                        kept.push(o);
                    }
                    i += 1;
                }
            }
            pos += slots * SLOT_LEN as u64;
            Some(kept)
        } else {
            None
        };
        let source = BlpSource {
            r: reader,
            header,
            offsets,
            pos,
            index: 0,
            ended: false,
            digest: Vec::new(),
        };
        Ok(Decoder {
            metadata,
            core: DecoderCore::new(source, params),
        })
    }

    /// The Bloscpack header.
    pub fn header(&self) -> &Header {
        &self.core.source.header
    }

    /// The metadata, if the file has a metadata section.
    pub fn metadata(&self) -> Option<&Value> {
        self.metadata.as_ref().map(|(_, v)| v)
    }

    /// The metadata section's header, if there is one.
    pub fn metadata_header(&self) -> Option<&MetadataHeader> {
        self.metadata.as_ref().map(|(h, _)| h)
    }

    /// The offsets of the chunks in use (`None` for a slot holding −1), if
    /// the file has an offsets section.
    pub fn offsets(&self) -> Option<&[Option<u64>]> {
        self.core.source.offsets.as_deref()
    }

    /// Chunks read so far.
    pub fn nchunks(&self) -> u64 {
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

impl<R: Read + Send> Decoder<R> {
    /// Decompress the rest into `writer` through the bounded pipeline of
    /// [`stream`](crate::stream) (a reader thread, the decompressor on this
    /// thread, an ordered writer thread); returns the bytes written.
    ///
    /// # Errors
    /// The first error of the reader, the checks, the decompressor or the
    /// writer.
    pub fn copy_to<W: Write + Send>(&mut self, writer: W) -> io::Result<u64> {
        self.core.copy_to(writer)
    }
}

impl<R: Read> Read for Decoder<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.core.read(buf)
    }
}

impl<R: Read> BlpSource<R> {
    fn truncated(&self, what: std::fmt::Arguments<'_>) -> io::Error {
        io_err(chunk_err(
            self.index as usize,
            format_args!("truncated: the file ends {what}"),
        ))
    }
}

impl<R: Read> Source for BlpSource<R> {
    fn next_chunk(&mut self, buf: &mut Vec<u8>) -> io::Result<bool> {
        if self.ended {
            return Ok(false);
        }
        let i = self.index;
        buf.clear();
        if self.header.nchunks == Some(i) {
            self.ended = true;
            // Only an append (which needs offsets) can leave bytes after the
            // last chunk; without offsets they mean nchunks is wrong.
            if !self.header.offsets && read_up_to(&mut self.r, 1, buf)? > 0 {
                return Err(io_err(Error::Corrupt(format!(
                    "bloscpack: bytes after the last of {i} chunks"
                ))));
            }
            buf.clear();
            return Ok(false);
        }
        let got = read_up_to(&mut self.r, BLOSC1_HEADER_LEN as u64, buf)?;
        if got == 0 && self.header.nchunks.is_none() {
            self.ended = true;
            return Ok(false);
        }
        if got < BLOSC1_HEADER_LEN {
            return Err(self.truncated(format_args!(
                "{got} bytes into its 16-byte header, at {}",
                self.pos
            )));
        }
        if let Some(Some(o)) = self.offsets.as_ref().and_then(|o| o.get(i as usize))
            && *o != self.pos
        {
            return Err(io_err(Error::Corrupt(format!(
                "bloscpack offsets: slot {i} says {o}, chunk {i} starts at {}",
                self.pos
            ))));
        }
        let cbytes = u32::from_le_bytes(buf[12..16].try_into().unwrap()) as usize;
        if cbytes < BLOSC1_HEADER_LEN {
            return Err(io_err(chunk_err(
                i as usize,
                format_args!("compressed size {cbytes} is below the 16-byte header"),
            )));
        }
        let rest = (cbytes - BLOSC1_HEADER_LEN) as u64;
        if (read_up_to(&mut self.r, rest, buf)? as u64) < rest {
            return Err(self.truncated(format_args!("inside its {cbytes} bytes at {}", self.pos)));
        }
        let cs = self.header.checksum;
        self.digest.clear();
        if read_up_to(&mut self.r, cs.size() as u64, &mut self.digest)? < cs.size() {
            return Err(self.truncated(format_args!("inside its {}-byte digest", cs.size())));
        }
        if !cs.verify(buf, &self.digest) {
            return Err(io_err(chunk_err(
                i as usize,
                format_args!("checksum mismatch ({cs})"),
            )));
        }
        let nbytes = u32::from_le_bytes(buf[4..8].try_into().unwrap());
        if let Some(want) = self.header.expected_chunk_len(i)
            && want != nbytes
        {
            return Err(io_err(chunk_err(
                i as usize,
                format_args!("holds {nbytes} bytes, the header says {want}"),
            )));
        }
        self.pos += (cbytes + cs.size()) as u64;
        self.index += 1;
        Ok(true)
    }
}
