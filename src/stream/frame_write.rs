//! [`FrameEncoder`]: an `io::Write` that writes one contiguous frame.
//!
//! A frame's header (first in the frame) holds its final sizes, and the
//! offsets index and the trailer come after the chunks. Into a seekable
//! writer ([`FrameEncoder::new_seekable`]) the chunks go straight out after
//! a placeholder header (`frame_len` 0, which every reader rejects), and
//! `finish` writes the index and the trailer and then patches the header in
//! place. Into any writer ([`FrameEncoder::new`], e.g. a pipe) there is no
//! format-legal way to write the header first without the sizes, so the
//! compressed chunks wait in a spool (memory up to 8 MiB, then an unnamed
//! temporary file in [`std::env::temp_dir`] or [`FrameEncoder::spool_dir`])
//! and `finish` writes header, chunks, index and trailer in one go: memory
//! stays bounded, the disk holds the compressed size for a while.

use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::PathBuf;

use super::core::{EncoderCore, Framing, check_chunksize};
use super::spool::Spool;
use crate::CParams;
use crate::error::{Result, invalid_param};
use crate::frame::raw::{GFLAG_OFFSETS_64, encode_header, encode_index, encode_trailer};
use crate::frame::{
    FrameHeader, FrameKind, HEADER_FIXED_LEN, MAX_METALAYERS, MAX_NCHUNKS, MAX_VLMETALAYERS,
    Metalayer, VlMetalayer, check_name,
};

type Patch<W> = fn(&mut W, u64, &[u8]) -> io::Result<()>;

#[derive(Debug)]
enum Dest<W> {
    /// Chunks written straight out; the header patched at `start`.
    Seek {
        w: W,
        start: u64,
        patch: Patch<W>,
        header_written: bool,
    },
    /// Chunks spooled until `finish`.
    Spool { w: W, spool: Spool },
}

#[derive(Debug)]
pub(crate) struct FrameSink<W> {
    dest: Dest<W>,
    header: FrameHeader,
    metalayers: Vec<Metalayer>,
    vlmetalayers: Vec<VlMetalayer>,
    offsets: Vec<i64>,
    cbytes: u64,
    nbytes: u64,
}

impl<W: Write> Framing for FrameSink<W> {
    fn put(&mut self, chunk: &[u8], nbytes: usize) -> io::Result<()> {
        if self.offsets.len() >= MAX_NCHUNKS {
            return Err(invalid_param("more than 268435455 chunks in a frame").into());
        }
        // A Blosc1 chunk of a few bytes is shorter than frame readers take
        // (a 32-byte header's worth): stored as the Blosc2 chunk of its
        // bytes, as super-chunks store it.
        let chunk = &*crate::frame::raw::widen_short_chunk(chunk)?;
        match &mut self.dest {
            Dest::Seek {
                w, header_written, ..
            } => {
                if !*header_written {
                    let hbytes = encode_header(&mut self.header.clone(), &self.metalayers)?;
                    w.write_all(&hbytes)?;
                    *header_written = true;
                }
                w.write_all(chunk)?;
            }
            Dest::Spool { spool, .. } => spool.write_all(chunk)?,
        }
        self.offsets.push(self.cbytes as i64);
        self.cbytes += chunk.len() as u64;
        self.nbytes += nbytes as u64;
        Ok(())
    }
}

fn patch_seek<W: Write + Seek>(w: &mut W, start: u64, fixed: &[u8]) -> io::Result<()> {
    let end = w.stream_position()?;
    w.seek(SeekFrom::Start(start))?;
    w.write_all(fixed)?;
    w.seek(SeekFrom::Start(end))?;
    Ok(())
}

/// Writes one contiguous frame (`b2frame`) from the bytes written to it:
/// chunks of `chunksize` bytes (the last one shorter), compressed with
/// `params`.
///
/// Every chunk is written whole, zeros, NaN and uninit chunks too, where a
/// super-chunk (and C-Blosc2) makes them codes in the offsets index: so
/// that [`super::FrameDecoder`], which meets the index after the chunks,
/// decodes the frame as a stream. Its frames are otherwise
/// [`crate::SChunk::to_cframe`]'s of the same chunks.
///
/// A frame's header (first in the frame) holds its final sizes, and the
/// offsets index and the trailer come after the chunks. Into a seekable
/// writer ([`FrameEncoder::new_seekable`]) the chunks go straight out after
/// a placeholder header (`frame_len` 0, which every reader rejects), and
/// `finish` writes the index and the trailer and then patches the header in
/// place. Into any writer ([`FrameEncoder::new`], e.g. a pipe) there is no
/// format-legal way to write the header first without the sizes, so the
/// compressed chunks wait in a spool (memory up to 8 MiB, then an unnamed
/// temporary file in [`std::env::temp_dir`] or [`FrameEncoder::spool_dir`])
/// and `finish` writes header, chunks, index and trailer in one go: memory
/// stays bounded, the disk holds the compressed size for a while. Both ways
/// give the same bytes.
///
/// End it with [`FrameEncoder::finish`]: **an encoder dropped without
/// `finish()` leaves an incomplete stream** (a placeholder header and the
/// chunks, or nothing at all when spooling).
#[derive(Debug)]
pub struct FrameEncoder<W: Write> {
    core: EncoderCore<FrameSink<W>>,
}

impl<W: Write> FrameEncoder<W> {
    fn with_dest(dest: Dest<W>, params: CParams, chunksize: usize) -> Result<Self> {
        let chunksize = check_chunksize(&params, chunksize)?;
        let params = crate::frame::raw::frame_cparams(params);
        let header = FrameHeader::new(FrameKind::Contiguous, &params, 1, chunksize as i32);
        let sink = FrameSink {
            dest,
            header,
            metalayers: Vec::new(),
            vlmetalayers: Vec::new(),
            offsets: Vec::new(),
            cbytes: 0,
            nbytes: 0,
        };
        Ok(FrameEncoder {
            core: EncoderCore::new(sink, params, chunksize),
        })
    }

    /// An encoder into any writer (a pipe too): the compressed chunks are
    /// spooled until [`FrameEncoder::finish`] writes the whole frame.
    /// `chunksize` is rounded down to whole items.
    ///
    /// # Errors
    /// [`Error::InvalidParam`](crate::Error::InvalidParam) for bad `params`
    /// or a chunk size out of `1..=MAX_BUFFERSIZE`. The chunks are Blosc2
    /// chunks, whatever `params.format` says (as in a super-chunk:
    /// [`crate::schunk::SChunkBuilder::cparams`]).
    pub fn new(inner: W, params: CParams, chunksize: usize) -> Result<Self> {
        let spool = Spool::new(std::env::temp_dir());
        Self::with_dest(Dest::Spool { w: inner, spool }, params, chunksize)
    }

    /// Where a spooling encoder keeps chunks past 8 MiB (default
    /// [`std::env::temp_dir`]). No effect on a seekable encoder.
    pub fn spool_dir(&mut self, dir: impl Into<PathBuf>) {
        if let Dest::Spool { spool, .. } = &mut self.core.framing.dest {
            spool.set_dir(dir.into());
        }
    }

    /// The chunk size in use (rounded down to whole items).
    pub fn chunksize(&self) -> usize {
        self.core.chunksize()
    }

    /// The compression parameters.
    pub fn cparams(&self) -> &CParams {
        self.core.params()
    }

    /// Chunks compressed so far.
    pub fn nchunks(&self) -> usize {
        self.core.framing.offsets.len()
    }

    /// Add metalayer `name` (stored as given; python-blosc2 stores msgpack).
    /// Only before the first chunk is compressed.
    ///
    /// # Errors
    /// [`Error::InvalidParam`](crate::Error::InvalidParam) after the first
    /// chunk, for a name in use, a bad name, or more than 16 metalayers.
    pub fn meta(&mut self, name: &str, content: &[u8]) -> Result<()> {
        let s = &mut self.core.framing;
        if !s.offsets.is_empty() {
            return Err(invalid_param(
                "metalayers must be added before the first chunk",
            ));
        }
        check_name(name)?;
        if s.metalayers.iter().any(|m| m.name == name) {
            return Err(invalid_param(format!("metalayer {name:?} exists")));
        }
        if s.metalayers.len() >= MAX_METALAYERS {
            return Err(invalid_param("more than 16 metalayers"));
        }
        s.metalayers.push(Metalayer {
            name: name.to_string(),
            content: content.to_vec(),
        });
        Ok(())
    }

    /// Set vlmetalayer `name` to `value` (stored compressed in the trailer,
    /// with C-Blosc2's default parameters); any time before `finish`.
    ///
    /// # Errors
    /// [`Error::InvalidParam`](crate::Error::InvalidParam) for a bad name or
    /// more than 8192 vlmetalayers.
    pub fn vlmeta_set(&mut self, name: &str, value: &[u8]) -> Result<()> {
        check_name(name)?;
        let p = CParams::default().nthreads(self.core.params().nthreads);
        let chunk = crate::compress(value, &p)?;
        let vl = &mut self.core.framing.vlmetalayers;
        if let Some(m) = vl.iter_mut().find(|m| m.name == name) {
            m.chunk = chunk;
        } else if vl.len() >= MAX_VLMETALAYERS {
            return Err(invalid_param("more than 8192 vlmetalayers"));
        } else {
            vl.push(VlMetalayer {
                name: name.to_string(),
                chunk,
            });
        }
        Ok(())
    }

    /// The inner writer.
    pub fn get_ref(&self) -> &W {
        match &self.core.framing.dest {
            Dest::Seek { w, .. } | Dest::Spool { w, .. } => w,
        }
    }

    /// The inner writer, mutably (writing to it breaks the frame).
    pub fn get_mut(&mut self) -> &mut W {
        match &mut self.core.framing.dest {
            Dest::Seek { w, .. } | Dest::Spool { w, .. } => w,
        }
    }

    /// The inner writer, **without finishing the frame** (what was written
    /// so far is an incomplete stream). Use [`FrameEncoder::finish`] to end
    /// the frame.
    pub fn into_inner(self) -> W {
        match self.core.framing.dest {
            Dest::Seek { w, .. } | Dest::Spool { w, .. } => w,
        }
    }

    /// Compress the last (short) chunk, write the offsets index and the
    /// trailer, put the final header in place, flush, and return the inner
    /// writer.
    ///
    /// # Errors
    /// The inner writer's errors, the compressor's, or an earlier failure
    /// of this encoder.
    pub fn finish(mut self) -> io::Result<W> {
        self.core.finish_chunks(false)?;
        let s = self.core.framing;
        let mut header = s.header;
        header.general_flags = GFLAG_OFFSETS_64 | 2;
        header.nbytes = i64::try_from(s.nbytes).map_err(|_| invalid_param("frame too large"))?;
        header.cbytes = s.cbytes as i64;
        header.has_vlmeta = !s.vlmetalayers.is_empty();
        let index = if s.nbytes > 0 {
            encode_index(&s.offsets)?
        } else {
            Vec::new()
        };
        let trailer = encode_trailer(&s.vlmetalayers)?;
        let hbytes = encode_header(&mut header, &s.metalayers)?;
        header.frame_len =
            u64::from(header.header_len) + s.cbytes + index.len() as u64 + trailer.len() as u64;
        let hbytes = {
            let mut h = hbytes;
            h[..HEADER_FIXED_LEN].copy_from_slice(&header.encode_fixed());
            h
        };
        match s.dest {
            Dest::Seek {
                mut w,
                start,
                patch,
                header_written,
            } => {
                if header_written {
                    w.write_all(&index)?;
                    w.write_all(&trailer)?;
                    patch(&mut w, start, &hbytes[..HEADER_FIXED_LEN])?;
                } else {
                    w.write_all(&hbytes)?;
                    w.write_all(&index)?;
                    w.write_all(&trailer)?;
                }
                w.flush()?;
                Ok(w)
            }
            Dest::Spool { mut w, mut spool } => {
                debug_assert_eq!(spool.len(), s.cbytes);
                w.write_all(&hbytes)?;
                spool.copy_to(&mut w)?;
                w.write_all(&index)?;
                w.write_all(&trailer)?;
                w.flush()?;
                Ok(w)
            }
        }
    }
}

impl<W: Write + Seek> FrameEncoder<W> {
    /// An encoder into a seekable writer: chunks go straight out after a
    /// placeholder header, which [`FrameEncoder::finish`] patches. The frame
    /// starts at the writer's current position.
    ///
    /// # Errors
    /// As [`FrameEncoder::new`], plus the writer's position error.
    pub fn new_seekable(mut inner: W, params: CParams, chunksize: usize) -> Result<Self> {
        let start = inner.stream_position()?;
        let dest = Dest::Seek {
            w: inner,
            start,
            patch: patch_seek::<W>,
            header_written: false,
        };
        Self::with_dest(dest, params, chunksize)
    }
}

impl<W: Write + Send> FrameEncoder<W> {
    /// Compress everything `reader` yields through a bounded pipeline: a
    /// reader thread, the block-parallel compressor (`nthreads` of the
    /// parameters) on this thread, and the writing on another thread, with
    /// at most [`IN_FLIGHT`](super::IN_FLIGHT) chunks queued between
    /// stages. A short last piece stays pending until more is written or
    /// [`FrameEncoder::finish`]. Returns the bytes read.
    ///
    /// # Errors
    /// The reader's, the compressor's or the writer's first error; the
    /// encoder is then unusable.
    pub fn copy_from<R: Read + Send>(&mut self, reader: R) -> io::Result<u64> {
        self.core.copy_from(reader)
    }
}

impl<W: Write> Write for FrameEncoder<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.core.write(buf)
    }

    /// Flushes the inner writer. Bytes of an unfinished chunk stay pending
    /// (every chunk but the last holds exactly `chunksize` bytes).
    fn flush(&mut self) -> io::Result<()> {
        match &mut self.core.framing.dest {
            Dest::Seek { w, .. } => w.flush(),
            Dest::Spool { .. } => Ok(()),
        }
    }
}
