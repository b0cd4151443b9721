//! Reading a packed super-chunk: the layout checks and the chunks.

use std::sync::{Mutex, PoisonError};

use super::header::i64_at;
use super::write::delta_decode;
use super::*;

/// A parsed and checked packed super-chunk over borrowed bytes: the header,
/// the chunks (raw or decompressed) and the whole data.
///
/// ```
/// use oxiblosc::CParams;
/// use oxiblosc::packed::{PackedReader, pack};
///
/// let bytes = pack(&[7u8; 1000], &CParams::default().typesize(1), 300)?;
/// let r = PackedReader::new(&bytes)?;
/// assert_eq!((r.nchunks(), r.header().chunksize), (4, 300));
/// assert_eq!(r.decompress_chunk(3)?, [7u8; 100]);
/// # Ok::<(), oxiblosc::Error>(())
/// ```
#[derive(Debug)]
pub struct PackedReader<'a> {
    pub(super) bytes: &'a [u8],
    pub(super) header: PackedHeader,
    pub(super) nchunks: usize,
    /// Offset of the data-starts array.
    pub(super) starts_at: usize,
    /// Byte ranges of the filters, codec, metadata and userdata chunks.
    pub(super) ancillary: [Option<(usize, usize)>; 4],
    /// Sum of the data chunks' `nbytes`.
    pub(super) data_nbytes: usize,
    /// The decoded delta reference (the filters chunk), when delta is on.
    pub(super) reference: Option<Vec<u8>>,
    /// One engine for every chunk read (a new one per chunk cost as much
    /// as a 4 KiB chunk's decode); behind a lock so the reader stays `Sync`.
    decompressor: Mutex<Decompressor>,
}

pub(super) const ANCILLARY: [&str; 4] = ["filters", "codec", "metadata", "userdata"];

impl<'a> PackedReader<'a> {
    /// Parse the header and check the whole layout against `bytes` (see
    /// the module docs); decodes only the filters chunk (delta reference).
    ///
    /// # Errors
    /// [`Error::Truncated`] for a buffer shorter than its header or
    /// `cbytes` says; [`Error::InvalidHeader`] for impossible fields;
    /// [`Error::Corrupt`] when the chunks do not fit the offsets and sizes;
    /// chunk errors from the chunks' headers and the filters chunk.
    pub fn new(bytes: &'a [u8]) -> Result<PackedReader<'a>> {
        let header = PackedHeader::parse(bytes)?;
        let len = bytes.len();
        match usize::try_from(header.cbytes) {
            Ok(c) if c == len => {}
            Ok(c) if c > len => {
                return Err(Error::Truncated {
                    what: "packed super-chunk (cbytes)",
                    needed: c,
                    available: len,
                });
            }
            _ => {
                return Err(invalid_header(format!(
                    "packed super-chunk cbytes {} but the buffer holds {len} bytes",
                    header.cbytes
                )));
            }
        }
        let room = (len - HEADER_LEN) / 8;
        let nchunks = usize::try_from(header.nchunks)
            .ok()
            .filter(|&n| n <= room)
            .ok_or_else(|| {
                invalid_header(format!(
                    "nchunks {} does not fit a {len}-byte packed super-chunk",
                    header.nchunks
                ))
            })?;
        let starts_at = len - 8 * nchunks;
        if usize::try_from(header.data_starts).ok() != Some(starts_at) {
            return Err(invalid_header(format!(
                "data starts at {} but {nchunks} starts end a {len}-byte buffer at {starts_at}",
                header.data_starts
            )));
        }
        let codes = header.filter_codes();
        if let Some(slot) = codes.iter().position(|&c| c > FILTER_DELTA) {
            return Err(invalid_header(format!(
                "filter slot {slot} holds undefined code {}",
                codes[slot]
            )));
        }

        // Walk the chunks, which must lie back to back from byte 96.
        let body = &bytes[..starts_at];
        let mut pos = HEADER_LEN;
        let mut total_nbytes = HEADER_LEN + 8 * nchunks;
        let mut chunk_at = |start: usize, what: &dyn Fn() -> String| -> Result<(usize, usize)> {
            if start != pos {
                return Err(corrupt(format!(
                    "{} at offset {start}, but the previous one ends at {pos}",
                    what()
                )));
            }
            let h = ChunkHeader::parse(&body[pos..]).map_err(|e| match e {
                Error::Truncated { .. } => corrupt(format!(
                    "{} at {pos} runs past the data-starts array at {starts_at} ({e})",
                    what()
                )),
                e => e,
            })?;
            if h.is_lazy() {
                return Err(invalid_header(format!("{} is a lazy chunk", what())));
            }
            // The block structure must back the sizes before any reader
            // sizes a buffer by them.
            let end = pos
                .checked_add(h.cbytes)
                .filter(|&e| e <= body.len())
                .ok_or_else(|| {
                    corrupt(format!(
                        "{} at {pos} runs past the data-starts array at {starts_at}",
                        what()
                    ))
                })?;
            crate::chunk::validate(&body[pos..end])
                .map_err(|e| corrupt(format!("{}: {e}", what())))?;
            pos = end;
            total_nbytes = total_nbytes
                .checked_add(h.nbytes)
                .ok_or_else(|| corrupt("chunk sizes overflow"))?;
            Ok((h.nbytes, pos))
        };
        let offsets = [
            header.filters_chunk,
            header.codec_chunk,
            header.metadata_chunk,
            header.userdata_chunk,
        ];
        let mut ancillary = [None; 4];
        for (k, &off) in offsets.iter().enumerate() {
            if off == 0 {
                continue;
            }
            let start = usize::try_from(off).map_err(|_| {
                invalid_header(format!("{} chunk offset {off} is negative", ANCILLARY[k]))
            })?;
            let (_, end) = chunk_at(start, &|| format!("{} chunk", ANCILLARY[k]))?;
            ancillary[k] = Some((start, end));
        }
        let mut data_nbytes = 0usize;
        for i in 0..nchunks {
            let off = i64_at(bytes, starts_at + 8 * i);
            let start = usize::try_from(off).unwrap_or(usize::MAX);
            data_nbytes += chunk_at(start, &|| format!("data chunk {i}"))?.0;
        }
        if pos != starts_at {
            return Err(corrupt(format!(
                "{} bytes between the last chunk (ends at {pos}) and the data-starts array",
                starts_at - pos
            )));
        }
        if usize::try_from(header.nbytes).ok() != Some(total_nbytes) {
            return Err(corrupt(format!(
                "nbytes {} but the chunks' headers add up to {total_nbytes}",
                header.nbytes
            )));
        }
        let delta = codes.contains(&FILTER_DELTA);
        let reference = match (delta, ancillary[0]) {
            (true, Some((a, b))) => {
                if nchunks == 0 {
                    return Err(corrupt(
                        "filters chunk in a packed super-chunk without chunks",
                    ));
                }
                Some(crate::decompress(&bytes[a..b])?)
            }
            (true, None) if nchunks > 0 => {
                return Err(corrupt(
                    "delta filter without a filters chunk (its reference)",
                ));
            }
            (false, Some(_)) => {
                return Err(corrupt("filters chunk present but no delta filter"));
            }
            _ => None,
        };
        Ok(PackedReader {
            bytes,
            header,
            nchunks,
            starts_at,
            ancillary,
            data_nbytes,
            reference,
            decompressor: Mutex::new(Decompressor::new(DParams::default())),
        })
    }

    /// The header.
    pub fn header(&self) -> &PackedHeader {
        &self.header
    }

    /// The number of data chunks.
    pub fn nchunks(&self) -> usize {
        self.nchunks
    }

    /// The total size of the data (the chunks' `nbytes` added up).
    pub fn data_nbytes(&self) -> usize {
        self.data_nbytes
    }

    fn chunk_start(&self, i: usize) -> usize {
        // Checked in `new`: the starts are in range and back to back.
        i64_at(self.bytes, self.starts_at + 8 * i) as usize
    }

    fn check_index(&self, i: usize) -> Result<()> {
        if i >= self.nchunks {
            return Err(invalid_param(format!(
                "chunk {i} of a packed super-chunk with {} chunks",
                self.nchunks
            )));
        }
        Ok(())
    }

    /// The raw (compressed) data chunk `i`.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] when `i >= nchunks`.
    pub fn chunk(&self, i: usize) -> Result<&'a [u8]> {
        self.check_index(i)?;
        let end = if i + 1 < self.nchunks {
            self.chunk_start(i + 1)
        } else {
            self.starts_at
        };
        Ok(&self.bytes[self.chunk_start(i)..end])
    }

    /// The uncompressed size of chunk `i`, from its header.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] when `i >= nchunks`.
    pub fn chunk_nbytes(&self, i: usize) -> Result<usize> {
        Ok(ChunkHeader::parse(self.chunk(i)?)?.nbytes)
    }

    fn ancillary(&self, k: usize) -> Option<&'a [u8]> {
        self.ancillary[k].map(|(a, b)| &self.bytes[a..b])
    }

    /// The raw filters chunk (the delta reference), if present.
    pub fn filters_chunk(&self) -> Option<&'a [u8]> {
        self.ancillary(0)
    }

    /// The raw codec chunk, if present (C never wrote one).
    pub fn codec_chunk(&self) -> Option<&'a [u8]> {
        self.ancillary(1)
    }

    /// The raw metadata chunk, if present (C never wrote one).
    pub fn metadata_chunk(&self) -> Option<&'a [u8]> {
        self.ancillary(2)
    }

    /// The raw userdata chunk, if present (C never wrote one).
    pub fn userdata_chunk(&self) -> Option<&'a [u8]> {
        self.ancillary(3)
    }

    /// Decompress chunk `i` into `dst` (undoing delta); returns its size.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] when `i >= nchunks`; [`Error::DstTooSmall`];
    /// the chunk decoder's errors.
    pub fn decompress_chunk_into(&self, i: usize, dst: &mut [u8]) -> Result<usize> {
        self.decode_into(&mut self.engine(), i, dst)
    }

    /// The reader's engine. Its state is scratch, rebuilt by each call, so
    /// it is usable after a panic in another thread.
    fn engine(&self) -> std::sync::MutexGuard<'_, Decompressor> {
        self.decompressor
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn decode_into(&self, d: &mut Decompressor, i: usize, dst: &mut [u8]) -> Result<usize> {
        let chunk = self.chunk(i)?;
        let want = ChunkHeader::parse(chunk)?.nbytes;
        if dst.len() < want {
            return Err(Error::DstTooSmall {
                needed: want,
                available: dst.len(),
            });
        }
        let n = d.decompress_into(chunk, &mut dst[..want])?;
        if n != want {
            return Err(corrupt(format!(
                "chunk {i} decoded to {n} bytes, its header says {want}"
            )));
        }
        if let Some(r) = &self.reference {
            delta_decode(&mut dst[..n], r);
        }
        Ok(n)
    }

    /// Decompress chunk `i` (undoing delta).
    ///
    /// # Errors
    /// As [`PackedReader::decompress_chunk_into`].
    pub fn decompress_chunk(&self, i: usize) -> Result<Vec<u8>> {
        let n = self.chunk_nbytes(i)?;
        let mut out = vec![0u8; n];
        self.decompress_chunk_into(i, &mut out)?;
        Ok(out)
    }

    /// All the data, chunk after chunk.
    ///
    /// # Errors
    /// As [`PackedReader::decompress_chunk`].
    pub fn unpack(&self) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        out.try_reserve_exact(self.data_nbytes).map_err(|_| {
            Error::InvalidParam(format!(
                "cannot allocate the {} bytes the chunks declare",
                self.data_nbytes
            ))
        })?;
        // Fresh pages, advised onto huge pages before the decodes write
        // them (`perf/README.md`, session 41).
        oxiblosc_kernels::advise_huge_pages(&mut out);
        out.resize(self.data_nbytes, 0);
        let mut d = self.engine();
        let mut at = 0;
        for i in 0..self.nchunks {
            at += self.decode_into(&mut d, i, &mut out[at..])?;
        }
        Ok(out)
    }
}
