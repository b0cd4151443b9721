//! [`FrameDecoder`]: an `io::Read` over a contiguous frame read front to
//! back from any reader (a pipe too).
//!
//! A frame keeps its offsets index after the chunks, so a reader that
//! cannot seek meets the chunks before it knows their logical order. The
//! decoder yields the stored chunks in the order they are stored, keeping
//! one chunk at a time, then reads the index and the trailer and checks that
//! the index lists exactly those chunks in that order. That is how every
//! frame written by appending is laid out (this crate's writers,
//! C-Blosc2's and python-blosc2's appends). A frame whose index differs
//! (chunks inserted, reordered, deleted or updated in place, or zeros / NaN
//! chunks stored as index entries only) ends the stream with an `Err` after
//! the data: decode such a frame from memory or a file
//! ([`crate::SChunk`]), which reads the index first.

use std::io::{self, Read, Write};

use super::core::{DecoderCore, Source};
use crate::chunk::header::ChunkPrefix;
use crate::error::{corrupt, invalid_header};
use crate::frame::{
    ChunkEntry, Edition, Frame, FrameHeader, FrameIo, FrameKind, HEADER_FIXED_LEN, MAX_NCHUNKS,
    TRAILER_MIN_LEN, check_stored_chunk,
};
use crate::{DParams, Error, Result};

fn truncated(what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::UnexpectedEof,
        format!("the frame is truncated: the input ends inside {what}"),
    )
}

/// Append exactly `n` bytes of `r` to `buf` (growing with what arrives, not
/// sized by `n` up front).
fn read_more<R: Read>(r: &mut R, buf: &mut Vec<u8>, n: u64, what: &str) -> io::Result<()> {
    let got = r.take(n).read_to_end(buf)?;
    if (got as u64) < n {
        return Err(truncated(what));
    }
    Ok(())
}

/// The frame's header and tail (index and trailer) as a [`FrameIo`]; the
/// chunks section is not kept.
struct Kept<'a> {
    header: &'a [u8],
    tail: &'a [u8],
    tail_start: u64,
    len: u64,
}

impl FrameIo for Kept<'_> {
    fn storage_len(&mut self) -> io::Result<u64> {
        Ok(self.len)
    }
    fn read_exact_at(&mut self, pos: u64, buf: &mut [u8]) -> io::Result<()> {
        let end = pos.checked_add(buf.len() as u64);
        let src = match end {
            Some(end) if end <= self.header.len() as u64 => {
                &self.header[pos as usize..end as usize]
            }
            Some(end) if pos >= self.tail_start && end <= self.len => {
                &self.tail[(pos - self.tail_start) as usize..(end - self.tail_start) as usize]
            }
            _ => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    "the frame points into its chunks section for its index or trailer",
                ));
            }
        };
        buf.copy_from_slice(src);
        Ok(())
    }
    fn write_all_at(&mut self, _: u64, _: &[u8]) -> io::Result<()> {
        Err(io::Error::other("read only"))
    }
    fn set_len(&mut self, _: u64) -> io::Result<()> {
        Err(io::Error::other("read only"))
    }
    fn sync(&mut self) -> io::Result<()> {
        Ok(())
    }
    fn is_persistent(&self) -> bool {
        false
    }
}

#[derive(Debug)]
pub(crate) struct FrameSource<R> {
    r: R,
    header: FrameHeader,
    hbytes: Vec<u8>,
    /// Chunks the header's sizes give (chunksize > 0), else `MAX_NCHUNKS`.
    nchunks: usize,
    /// Position inside the chunks section.
    pos: u64,
    /// Section offsets of the chunks yielded.
    seen: Vec<i64>,
    nbytes_seen: u64,
    frame: Option<Frame>,
}

impl<R: Read> FrameSource<R> {
    fn new(mut r: R) -> Result<FrameSource<R>> {
        let mut hbytes = Vec::with_capacity(HEADER_FIXED_LEN);
        read_more(&mut r, &mut hbytes, HEADER_FIXED_LEN as u64, "its header")?;
        let header = FrameHeader::parse_fixed(&hbytes)?;
        if header.edition != Edition::Current {
            return Err(Error::Unsupported(
                "first-edition (2.0.0-beta) frames cannot be streamed; open them as a file".into(),
            ));
        }
        if header.kind != FrameKind::Contiguous {
            return Err(invalid_header(
                "a sparse frame's index file holds no chunks",
            ));
        }
        let hlen = u64::from(header.header_len);
        if hlen < HEADER_FIXED_LEN as u64 {
            return Err(invalid_header(format!("header_len {hlen}")));
        }
        if header.nbytes < 0 || header.cbytes < 0 {
            return Err(invalid_header("negative nbytes or cbytes"));
        }
        let min_len = hlen
            .checked_add(header.cbytes as u64)
            .and_then(|v| v.checked_add(TRAILER_MIN_LEN));
        if min_len.is_none_or(|m| header.frame_len < m) {
            return Err(invalid_header(format!(
                "frame_len {} leaves no room for the chunks and a trailer",
                header.frame_len
            )));
        }
        read_more(
            &mut r,
            &mut hbytes,
            hlen - HEADER_FIXED_LEN as u64,
            "its header",
        )?;
        let nchunks = match header.chunksize {
            cs if cs > 0 => {
                let n = (header.nbytes as u64).div_ceil(cs as u64);
                usize::try_from(n)
                    .ok()
                    .filter(|&n| n <= MAX_NCHUNKS)
                    .ok_or_else(|| corrupt(format!("{n} chunks")))?
            }
            _ => MAX_NCHUNKS,
        };
        Ok(FrameSource {
            r,
            header,
            hbytes,
            nchunks,
            pos: 0,
            seen: Vec::new(),
            nbytes_seen: 0,
            frame: None,
        })
    }

    /// Past the chunks: skip the dead bytes, read index and trailer, check
    /// that the index lists the chunks yielded, in order.
    fn end(&mut self) -> Result<()> {
        let h = &self.header;
        let cb = h.cbytes as u64;
        io::copy(&mut (&mut self.r).take(cb - self.pos), &mut io::sink()).and_then(|n| {
            if n < cb - self.pos {
                Err(truncated("its chunks"))
            } else {
                Ok(())
            }
        })?;
        self.pos = cb;
        let hlen = u64::from(h.header_len);
        let tail_start = hlen + cb;
        let mut tail = Vec::new();
        read_more(
            &mut self.r,
            &mut tail,
            h.frame_len - tail_start,
            "its index or trailer",
        )?;
        let frame = Frame::read(
            &mut Kept {
                header: &self.hbytes,
                tail: &tail,
                tail_start,
                len: h.frame_len,
            },
            Some(FrameKind::Contiguous),
        )?;
        let order_error = |i: usize| {
            corrupt(format!(
                "the frame's index does not list its stored chunks in order (from chunk {i}): \
                 chunks inserted, reordered, deleted or stored as index entries only; such a \
                 frame cannot be decoded as a stream, open it from memory or a file"
            ))
        };
        for i in 0..frame.nchunks().max(self.seen.len()) {
            match (frame.entry(i), self.seen.get(i)) {
                (Ok(ChunkEntry::Stored(off)), Some(&seen)) if off as i64 == seen => {}
                _ => return Err(order_error(i)),
            }
        }
        if self.nbytes_seen != h.nbytes as u64 {
            return Err(corrupt(format!(
                "the chunks hold {} bytes, the frame's header says {}",
                self.nbytes_seen, h.nbytes
            )));
        }
        self.frame = Some(frame);
        Ok(())
    }

    fn next(&mut self, buf: &mut Vec<u8>) -> Result<bool> {
        if self.frame.is_some() {
            return Ok(false);
        }
        buf.clear();
        let cb = self.header.cbytes as u64;
        let left = cb - self.pos;
        // Past the last chunk the header's sizes allow, the rest of the
        // section is dead space (e.g. a writer's reserve).
        let all = self.header.chunksize > 0 && self.seen.len() == self.nchunks;
        if self.header.nbytes == 0 || left < 32 || all {
            self.end()?;
            return Ok(false);
        }
        let i = self.seen.len();
        read_more(&mut self.r, buf, 32, "a chunk")?;
        let c = ChunkPrefix::read(buf).expect("32 bytes were read").cbytes;
        let c = u64::try_from(c)
            .ok()
            .filter(|&c| c >= 32 && c <= left)
            .ok_or_else(|| {
                corrupt(format!(
                    "chunk {i} at section offset {}: size {c} does not fit the {left} bytes \
                     left of the chunks section",
                    self.pos
                ))
            })?;
        read_more(&mut self.r, buf, c - 32, "a chunk")?;
        if i >= self.nchunks {
            return Err(corrupt(format!(
                "more chunks stored than the frame's {} bytes need",
                self.header.nbytes
            )));
        }
        check_stored_chunk(&self.header, self.nchunks, buf, i)?;
        let h = crate::ChunkHeader::parse(buf)?;
        self.nbytes_seen += h.nbytes as u64;
        if self.nbytes_seen > self.header.nbytes as u64 {
            return Err(corrupt(
                "the chunks hold more bytes than the frame's header says",
            ));
        }
        self.seen.push(self.pos as i64);
        self.pos += c;
        Ok(true)
    }
}

impl<R: Read> Source for FrameSource<R> {
    fn next_chunk(&mut self, buf: &mut Vec<u8>) -> io::Result<bool> {
        self.next(buf).map_err(io::Error::from)
    }
}

/// Reads one contiguous frame front to back from any reader and yields its
/// decompressed bytes (an [`io::Read`]), holding about one chunk (plus, at
/// the end, the offsets index and the trailer). A truncated or corrupt
/// stream is an `Err`, never a hang or a panic.
///
/// A frame keeps its offsets index after the chunks, so a reader that
/// cannot seek meets the chunks before it knows their logical order. The
/// decoder yields the stored chunks in the order they are stored, then
/// reads the index and the trailer and checks that the index lists exactly
/// those chunks in that order. That is how every frame written by appending
/// is laid out (this crate's writers, C-Blosc2's and python-blosc2's
/// appends). A frame whose index differs (chunks inserted, reordered,
/// deleted or updated in place, or zeros / NaN chunks stored as index
/// entries only, or holes between chunks, as the crash-safe appends of a
/// file-backed [`SChunk`](crate::SChunk) leave until
/// [`SChunk::compact`](crate::SChunk::compact)) ends the stream with an
/// `Err`, possibly after some data: decode such a frame from memory or a
/// file ([`SChunk`](crate::SChunk)), which reads the index first. Dead bytes
/// after the last chunk are skipped.
///
/// ```
/// use std::io::Read;
/// # let frame = {
/// #     let mut sc = oxiblosc::SChunk::builder().chunksize(1000).build_memory()?;
/// #     sc.append_buffer(&[7u8; 1000])?;
/// #     sc.append_buffer(&[9u8; 10])?;
/// #     sc.to_cframe()?
/// # };
/// let mut dec = oxiblosc::stream::FrameDecoder::new(&frame[..])?;
/// let mut data = Vec::new();
/// dec.read_to_end(&mut data)?;
/// assert_eq!(data.len(), 1010);
/// assert_eq!(dec.frame().unwrap().nchunks(), 2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct FrameDecoder<R: Read> {
    core: DecoderCore<FrameSource<R>>,
}

impl<R: Read> FrameDecoder<R> {
    /// Read the frame's header from `reader`; one decompression thread.
    ///
    /// # Errors
    /// [`Error::Truncated`] / [`Error::InvalidHeader`] / [`Error::Io`] for a
    /// bad or short header; [`Error::Unsupported`] for a first-edition or a
    /// sparse frame.
    pub fn new(reader: R) -> Result<Self> {
        Self::with_params(reader, DParams::default())
    }

    /// As [`FrameDecoder::new`], decompressing with `params` (e.g. threads).
    ///
    /// # Errors
    /// As [`FrameDecoder::new`].
    pub fn with_params(reader: R, params: DParams) -> Result<Self> {
        Ok(FrameDecoder {
            core: DecoderCore::new(FrameSource::new(reader)?, params),
        })
    }

    /// The frame's fixed header fields.
    pub fn header(&self) -> &FrameHeader {
        &self.core.source.header
    }

    /// The whole frame's description (metalayers, vlmetalayers, offsets),
    /// once the stream has been read to its end and checked; `None` before.
    pub fn frame(&self) -> Option<&Frame> {
        self.core.source.frame.as_ref()
    }

    /// The inner reader.
    pub fn get_ref(&self) -> &R {
        &self.core.source.r
    }

    /// The inner reader, mutably (reading from it breaks the stream).
    pub fn get_mut(&mut self) -> &mut R {
        &mut self.core.source.r
    }

    /// The inner reader, positioned after what was consumed (after the
    /// frame once the stream has been read to its end).
    pub fn into_inner(self) -> R {
        self.core.source.r
    }
}

impl<R: Read + Send> FrameDecoder<R> {
    /// Decompress the rest of the frame into `writer` through a bounded
    /// pipeline (a reader thread, the decompressor on this thread, a writer
    /// thread); returns the bytes written. [`FrameDecoder::frame`] is then
    /// available.
    ///
    /// # Errors
    /// The first error of the reader, the decompressor, the end-of-frame
    /// checks or the writer.
    pub fn copy_to<W: Write + Send>(&mut self, writer: W) -> io::Result<u64> {
        self.core.copy_to(writer)
    }
}

impl<R: Read> Read for FrameDecoder<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.core.read(buf)
    }
}
