//! Reading: header, metadata, offsets, then the chunks found by walking
//! them (each Blosc header gives its chunk's length at byte 12), checked
//! against the offsets, each chunk's digest verified before it is decoded.

use std::path::Path;
use std::sync::{Mutex, PoisonError};

use serde_json::Value;

use super::header::{HEADER_LEN, Header};
use super::metadata::{self, MetadataHeader};
use super::offsets;
use crate::error::{Error, Result};
use crate::{DParams, Decompressor};

/// Bytes of a Blosc1 chunk header, the least a chunk can take.
pub(super) const BLOSC1_HEADER_LEN: usize = 16;

pub(crate) fn chunk_err(i: usize, msg: impl std::fmt::Display) -> Error {
    Error::Corrupt(format!("bloscpack chunk {i}: {msg}"))
}

/// Where one chunk lies: its bytes are `start..end`, its digest follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Span {
    start: usize,
    end: usize,
}

/// A parsed Bloscpack file over its bytes (`B` is `Vec<u8>`, `&[u8]`, ...):
/// header, metadata and offsets are read and checked by [`Reader::new`],
/// chunks are verified and decoded on demand.
///
/// ```
/// use oxiblosc::bloscpack::{self, Options, Reader};
/// let data: Vec<u8> = (0u32..100_000).flat_map(|v| v.to_le_bytes()).collect();
/// let blp = bloscpack::pack(&data, &Options::default().chunk_size(65_536))?;
/// let r = Reader::new(&blp[..])?;
/// assert_eq!(r.nchunks(), 7);
/// assert_eq!(r.decompress_chunk(1)?, data[65_536..131_072]);
/// assert_eq!(r.decompress_all()?, data);
/// # Ok::<(), oxiblosc::Error>(())
/// ```
#[derive(Debug)]
pub struct Reader<B> {
    data: B,
    header: Header,
    metadata: Option<(MetadataHeader, Value)>,
    offsets_pos: usize,
    offsets: Option<Vec<Option<u64>>>,
    chunks: Vec<Span>,
    /// One decompressor for every chunk decoded (its codec contexts and
    /// scratch made once); a lock so that `&self` readers stay `Sync`.
    decompressor: Mutex<Decompressor>,
}

impl Reader<Vec<u8>> {
    /// Read a whole file and parse it.
    ///
    /// # Errors
    /// [`Error::Io`], or as [`Reader::new`].
    pub fn open(path: impl AsRef<Path>) -> Result<Reader<Vec<u8>>> {
        Reader::new(std::fs::read(path)?)
    }
}

impl<B: AsRef<[u8]>> Reader<B> {
    /// Parse the header, the metadata section and the offsets, and find
    /// every chunk. Nothing is allocated by a size field before that field
    /// is checked against the length of `data`.
    ///
    /// # Errors
    /// [`Error::Truncated`] / [`Error::InvalidHeader`] for the header,
    /// metadata and offsets sections (messages start with `bloscpack
    /// header:`, `bloscpack metadata:` or `bloscpack offsets:`),
    /// [`Error::Corrupt`] naming the chunk for a chunk that does not fit
    /// the file or an offset that does not point at its chunk,
    /// [`Error::Unsupported`] for zlib metadata without the `zlib` feature.
    pub fn new(data: B) -> Result<Reader<B>> {
        let src = data.as_ref();
        let header = Header::parse(src)?;
        let mut pos = HEADER_LEN;
        let metadata = if header.metadata {
            let (mh, value, len) = metadata::decode(&src[pos..])?;
            pos += len;
            Some((mh, value))
        } else {
            None
        };
        let offsets_pos = pos;
        let offsets = if header.offsets {
            let slots = header.offset_slots().ok_or_else(|| {
                Error::InvalidHeader("bloscpack header: nchunks + max_app_chunks overflows".into())
            })?;
            let used = header.nchunks.unwrap_or(0);
            let o = offsets::parse(&src[pos..], slots, used)?;
            pos += slots as usize * offsets::SLOT_LEN;
            Some(o)
        } else {
            None
        };
        let chunks = walk(src, pos, &header)?;
        if let Some(offs) = &offsets {
            for (i, (o, span)) in offs.iter().zip(&chunks).enumerate() {
                if let Some(o) = *o
                    && o != span.start as u64
                {
                    return Err(Error::Corrupt(format!(
                        "bloscpack offsets: slot {i} says {o}, chunk {i} starts at {}",
                        span.start
                    )));
                }
            }
        }
        Ok(Reader {
            data,
            header,
            metadata,
            offsets_pos,
            offsets,
            chunks,
            decompressor: Mutex::new(Decompressor::new(DParams::default())),
        })
    }

    /// The Bloscpack header.
    pub fn header(&self) -> &Header {
        &self.header
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
        self.offsets.as_deref()
    }

    /// Where the offsets section starts (after header and metadata).
    pub fn offsets_position(&self) -> usize {
        self.offsets_pos
    }

    /// Number of chunks.
    pub fn nchunks(&self) -> usize {
        self.chunks.len()
    }

    /// The file's bytes.
    pub fn as_bytes(&self) -> &[u8] {
        self.data.as_ref()
    }

    /// Give back the file's bytes.
    pub fn into_inner(self) -> B {
        self.data
    }

    /// Byte range of chunk `i` in the file (its digest follows it).
    pub fn chunk_range(&self, i: usize) -> Option<std::ops::Range<usize>> {
        self.chunks.get(i).map(|s| s.start..s.end)
    }

    /// The compressed bytes of chunk `i` (a Blosc chunk), after checking
    /// its digest.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] for `i` out of range, [`Error::Corrupt`]
    /// (`bloscpack chunk i: checksum mismatch`) for a wrong digest.
    pub fn chunk(&self, i: usize) -> Result<&[u8]> {
        let span = *self.chunks.get(i).ok_or_else(|| {
            Error::InvalidParam(format!(
                "bloscpack chunk {i} does not exist ({} chunks)",
                self.chunks.len()
            ))
        })?;
        let src = self.data.as_ref();
        let chunk = &src[span.start..span.end];
        let cs = self.header.checksum;
        let digest = &src[span.end..span.end + cs.size()];
        if !cs.verify(chunk, digest) {
            return Err(chunk_err(i, format_args!("checksum mismatch ({cs})")));
        }
        Ok(chunk)
    }

    /// Decode chunk `i` (digest verified first) and append it to `out`;
    /// returns its length.
    ///
    /// # Errors
    /// As [`Reader::chunk`], plus [`Error::Corrupt`] naming the chunk when
    /// it does not decode or its size is not the one the header gives.
    pub fn decompress_chunk_into(&self, i: usize, out: &mut Vec<u8>) -> Result<usize> {
        let chunk = self.chunk(i)?;
        // The block structure must back `nbytes` before `out` grows by it.
        let h = self.backed_header(i, chunk)?;
        let old = out.len();
        out.resize(old + h.nbytes, 0);
        let n = self
            .decompressor
            .lock()
            // Its state is scratch, rebuilt by each call: usable after a panic.
            .unwrap_or_else(PoisonError::into_inner)
            .decompress_into(chunk, &mut out[old..])
            .map_err(|e| chunk_err(i, e));
        match n {
            Ok(n) if n == h.nbytes => Ok(n),
            Ok(n) => {
                out.truncate(old);
                Err(chunk_err(
                    i,
                    format_args!("decoded {n} bytes, expected {}", h.nbytes),
                ))
            }
            Err(e) => {
                out.truncate(old);
                Err(e)
            }
        }
    }

    /// Decode chunk `i` (digest verified first).
    ///
    /// # Errors
    /// As [`Reader::decompress_chunk_into`].
    pub fn decompress_chunk(&self, i: usize) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        self.decompress_chunk_into(i, &mut out)?;
        Ok(out)
    }

    /// Decode every chunk, in order, into one buffer.
    ///
    /// # Errors
    /// As [`Reader::decompress_chunk_into`], for the first chunk that fails.
    pub fn decompress_all(&self) -> Result<Vec<u8>> {
        // Room for every chunk at once, advised onto huge pages before the
        // decodes write it (growing chunk by chunk copied the output
        // again at each doubling and faulted in 4 KiB pages: `perf/README.md`,
        // session 42). Only the sizes whose chunks' structure backs them
        // (`chunk::validate`) are reserved before they are decoded; a
        // failed reservation leaves the growth to the decodes, which report
        // the first chunk that fails.
        let mut out = Vec::new();
        if out.try_reserve_exact(self.backed_nbytes()).is_ok() {
            oxiblosc_kernels::advise_huge_pages(&mut out);
        }
        for i in 0..self.chunks.len() {
            self.decompress_chunk_into(i, &mut out)?;
        }
        Ok(out)
    }

    /// The header of chunk `i` (its bytes `chunk`), once its block
    /// structure backs its size ([`crate::chunk::validate`]) and the file
    /// header's sizes agree with it.
    fn backed_header(&self, i: usize, chunk: &[u8]) -> Result<crate::chunk::ChunkHeader> {
        let h = crate::chunk::validate(chunk).map_err(|e| chunk_err(i, e))?;
        if let Some(want) = self.header.expected_chunk_len(i as u64)
            && want as usize != h.nbytes
        {
            return Err(chunk_err(
                i,
                format_args!("holds {} bytes, the header says {want}", h.nbytes),
            ));
        }
        Ok(h)
    }

    /// The bytes the chunks decode to, summed up to the first chunk whose
    /// structure does not back its size ([`crate::chunk::validate`]) or
    /// that the header sizes otherwise.
    fn backed_nbytes(&self) -> usize {
        let src = self.data.as_ref();
        let mut total = 0usize;
        for (i, span) in self.chunks.iter().enumerate() {
            let Ok(h) = self.backed_header(i, &src[span.start..span.end]) else {
                break;
            };
            let Some(t) = total.checked_add(h.nbytes) else {
                break;
            };
            total = t;
        }
        total
    }
}

/// Find the chunks from `pos` on: each is a Blosc chunk whose length is the
/// u32 at its byte 12, followed by the digest.
fn walk(src: &[u8], mut pos: usize, header: &Header) -> Result<Vec<Span>> {
    let dsize = header.checksum.size();
    let mut chunks = Vec::new();
    if let Some(n) = header.nchunks {
        // Every chunk takes at least its 16-byte header and its digest:
        // check the count against the bytes left before reserving room.
        let least = n.saturating_mul((BLOSC1_HEADER_LEN + dsize) as u64);
        let left = (src.len() - pos) as u64;
        if least > left {
            return Err(Error::Corrupt(format!(
                "bloscpack header: {n} chunks need at least {least} bytes, {left} left in the file"
            )));
        }
        chunks.reserve_exact(n as usize);
    }
    let mut i = 0usize;
    loop {
        match header.nchunks {
            Some(n) if i as u64 == n => break,
            None if pos == src.len() => break,
            _ => {}
        }
        let Some(h) = src.get(pos..pos + BLOSC1_HEADER_LEN) else {
            return Err(chunk_err(
                i,
                format_args!(
                    "truncated: its header at {pos} runs past the end of the file ({} bytes)",
                    src.len()
                ),
            ));
        };
        let cbytes = u32::from_le_bytes(h[12..16].try_into().unwrap()) as usize;
        if cbytes < BLOSC1_HEADER_LEN {
            return Err(chunk_err(
                i,
                format_args!("compressed size {cbytes} is below the 16-byte header"),
            ));
        }
        let end = pos.checked_add(cbytes).filter(|&e| e <= src.len());
        let Some(end) = end.filter(|&e| e + dsize <= src.len()) else {
            return Err(chunk_err(
                i,
                format_args!(
                    "truncated: {cbytes} bytes at {pos} plus a {dsize}-byte digest run past the end \
                     of the file ({} bytes)",
                    src.len()
                ),
            ));
        };
        chunks.push(Span { start: pos, end });
        pos = end + dsize;
        i += 1;
    }
    // Only an append (which needs offsets) can leave bytes after the last
    // chunk; without offsets they mean the header's nchunks is wrong.
    if !header.offsets && pos != src.len() {
        return Err(Error::Corrupt(format!(
            "bloscpack: {} bytes after the last of {i} chunks",
            src.len() - pos
        )));
    }
    Ok(chunks)
}
