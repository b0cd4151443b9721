//! Packing data into a packed super-chunk, and appending to one.

use super::*;

/// The filters field for `params`, and whether it includes delta.
pub(super) fn filters_field(params: &CParams) -> Result<(u16, bool)> {
    let mut codes = [FILTER_NONE; FILTER_SLOTS];
    let mut delta = false;
    for (n, f) in params.filters.iter().flatten().enumerate() {
        let code = match f {
            Filter::Shuffle => FILTER_SHUFFLE,
            Filter::BitShuffle => FILTER_BITSHUFFLE,
            Filter::Delta => FILTER_DELTA,
            other => {
                return Err(Error::Unsupported(format!(
                    "filter {} has no code in the packed super-chunk format \
                     (shuffle, bitshuffle, delta only)",
                    other.name()
                )));
            }
        };
        if n == FILTER_SLOTS {
            return Err(invalid_param(format!(
                "the packed super-chunk header holds at most {FILTER_SLOTS} filters"
            )));
        }
        delta |= code == FILTER_DELTA;
        codes[n] = code;
    }
    Ok((PackedHeader::pack_filter_codes(codes), delta))
}

/// The parameters the chunks are compressed with: Blosc1 chunks, delta
/// (done at the super-chunk level) removed.
pub(super) fn chunk_params(params: &CParams) -> CParams {
    let mut p = params.clone().format(ChunkFormat::Blosc1);
    for slot in 0..p.filters.len() {
        if p.filters[slot] == Some(Filter::Delta) {
            p.filters[slot] = None;
            p.filters_meta[slot] = 0;
        }
    }
    p
}

/// `src - reference` bytewise (wrapping) over the common length.
pub(super) fn delta_encode(src: &[u8], reference: &[u8]) -> Vec<u8> {
    let mut out = src.to_vec();
    for (o, r) in out.iter_mut().zip(reference) {
        *o = o.wrapping_sub(*r);
    }
    out
}

/// Add `reference` back (bytewise, wrapping) over the common length.
pub(super) fn delta_decode(dst: &mut [u8], reference: &[u8]) {
    for (o, r) in dst.iter_mut().zip(reference) {
        *o = o.wrapping_add(*r);
    }
}

pub(super) fn to_i64(v: usize) -> Result<i64> {
    i64::try_from(v).map_err(|_| invalid_param("packed super-chunk larger than i64::MAX bytes"))
}

pub(super) fn overflow() -> Error {
    invalid_param("packed super-chunk size overflows")
}

/// Lay out header, ancillary chunk and data chunks; fills in the sizes and
/// offsets of `header`.
pub(super) fn assemble(
    mut header: PackedHeader,
    ancillary: [Option<&[u8]>; 4],
    chunks: &[&[u8]],
) -> Result<Vec<u8>> {
    let mut total = HEADER_LEN;
    let mut nbytes = HEADER_LEN;
    for c in ancillary.iter().flatten().chain(chunks) {
        let h = ChunkHeader::parse(c)?;
        total = total.checked_add(c.len()).ok_or_else(overflow)?;
        nbytes = nbytes.checked_add(h.nbytes).ok_or_else(overflow)?;
    }
    let starts_len = chunks.len().checked_mul(8).ok_or_else(overflow)?;
    total = total.checked_add(starts_len).ok_or_else(overflow)?;
    nbytes = nbytes.checked_add(starts_len).ok_or_else(overflow)?;
    header.nchunks = to_i64(chunks.len())?;
    header.nbytes = to_i64(nbytes)?;
    header.cbytes = to_i64(total)?;
    header.data_starts = to_i64(total - starts_len)?;
    let mut offsets = [0i64; 4];
    let mut at = HEADER_LEN;
    for (k, c) in ancillary.iter().enumerate() {
        if let Some(c) = c {
            offsets[k] = to_i64(at)?;
            at += c.len();
        }
    }
    [
        header.filters_chunk,
        header.codec_chunk,
        header.metadata_chunk,
        header.userdata_chunk,
    ] = offsets;

    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(&header.to_bytes());
    for c in ancillary.iter().flatten() {
        out.extend_from_slice(c);
    }
    let mut starts = Vec::with_capacity(starts_len);
    for c in chunks {
        starts.extend_from_slice(&to_i64(out.len())?.to_le_bytes());
        out.extend_from_slice(c);
    }
    out.extend_from_slice(&starts);
    debug_assert_eq!(out.len(), total);
    Ok(out)
}

/// Pack `data` into a packed super-chunk of `chunksize`-byte chunks (the
/// last one may be shorter; empty data gives no chunks), compressed with
/// `params` as Blosc1 chunks (see the module docs for delta).
///
/// # Errors
/// [`Error::InvalidParam`] for a `chunksize` of 0 or over
/// [`MAX_BUFFERSIZE`], or bad `params`; [`Error::Unsupported`] for filters
/// the format cannot name (trunc_prec, bytedelta) or a codec this build
/// lacks.
pub fn pack(data: &[u8], params: &CParams, chunksize: usize) -> Result<Vec<u8>> {
    if chunksize == 0 || chunksize > MAX_BUFFERSIZE {
        return Err(invalid_param(format!(
            "chunksize {chunksize} is not in 1..={MAX_BUFFERSIZE}"
        )));
    }
    let (filters, delta) = filters_field(params)?;
    let cp = chunk_params(params);
    cp.validate()?;
    let header = PackedHeader {
        version: VERSION,
        compressor: u16::from(params.codec.id()),
        clevel: u16::from(params.clevel),
        filters,
        chunksize: u32::try_from(chunksize).unwrap_or(0),
        ..PackedHeader::default()
    };
    let mut comp = Compressor::new(cp.clone());
    let reference = if delta && !data.is_empty() {
        Some(&data[..chunksize.min(data.len())])
    } else {
        None
    };
    let filters_chunk = match reference {
        Some(r) => Some(Compressor::new(cp.clone().clevel(0)).compress(r)?),
        None => None,
    };
    let mut chunks = Vec::with_capacity(data.len().div_ceil(chunksize));
    for piece in data.chunks(chunksize) {
        chunks.push(match reference {
            Some(r) => comp.compress(&delta_encode(piece, r))?,
            None => comp.compress(piece)?,
        });
    }
    let refs: Vec<&[u8]> = chunks.iter().map(Vec::as_slice).collect();
    assemble(header, [filters_chunk.as_deref(), None, None, None], &refs)
}

/// All the data of a packed super-chunk, chunk after chunk.
///
/// # Errors
/// As [`PackedReader::new`] and [`PackedReader::decompress_chunk`].
pub fn unpack(packed: &[u8]) -> Result<Vec<u8>> {
    PackedReader::new(packed)?.unpack()
}

/// A new packed buffer: `packed` with `data` appended as one more chunk,
/// compressed with the super-chunk's own codec, clevel and filters
/// ([`PackedHeader::cparams`]) and `typesize` (which the header does not
/// record). As C did, the starts array moves to the end and `nchunks`,
/// `nbytes`, `cbytes` and the starts offset are updated; appending to an
/// empty delta super-chunk makes `data` the delta reference.
///
/// # Errors
/// As [`PackedReader::new`] for `packed`, as [`PackedHeader::cparams`],
/// and as [`crate::compress`].
pub fn append(packed: &[u8], data: &[u8], typesize: usize) -> Result<Vec<u8>> {
    let reader = PackedReader::new(packed)?;
    let h = *reader.header();
    let params = h.cparams(typesize)?;
    let cp = chunk_params(&params);
    cp.validate()?;
    let mut new_filters_chunk = None;
    let chunk = if h.has_delta() {
        let reference = match &reader.reference {
            Some(r) => r.as_slice(),
            None => {
                new_filters_chunk = Some(compress_with(&cp.clone().clevel(0), data)?);
                data
            }
        };
        compress_with(&cp, &delta_encode(data, reference))?
    } else {
        compress_with(&cp, data)?
    };
    add_chunk(&reader, &chunk, data.len(), new_filters_chunk.as_deref())
}

/// A new packed buffer: `packed` with `chunk`, an already compressed Blosc
/// chunk, appended verbatim. With the delta filter the chunk must hold the
/// data minus the reference (the filters chunk), so appending to an empty
/// delta super-chunk this way is refused: use [`append`].
///
/// # Errors
/// As [`PackedReader::new`] for `packed`; the chunk header's errors, and
/// [`Error::InvalidParam`] for a lazy chunk, a chunk whose `cbytes` is not
/// its length, or a delta super-chunk without a reference.
pub fn append_chunk(packed: &[u8], chunk: &[u8]) -> Result<Vec<u8>> {
    let reader = PackedReader::new(packed)?;
    let h = ChunkHeader::parse(chunk)?;
    if h.is_lazy() || h.cbytes != chunk.len() {
        return Err(invalid_param(format!(
            "not a whole chunk: {} bytes, its header says {}{}",
            chunk.len(),
            h.cbytes,
            if h.is_lazy() { " (lazy)" } else { "" }
        )));
    }
    if reader.header.has_delta() && reader.reference.is_none() {
        return Err(invalid_param(
            "a delta super-chunk without chunks has no reference yet: append data, not a chunk",
        ));
    }
    add_chunk(&reader, chunk, h.nbytes, None)
}

/// `reader`'s buffer plus `chunk` (of `nbytes` data bytes), and the filters
/// chunk `new_filters_chunk` when it is the first delta reference.
pub(super) fn add_chunk(
    reader: &PackedReader<'_>,
    chunk: &[u8],
    nbytes: usize,
    new_filters_chunk: Option<&[u8]>,
) -> Result<Vec<u8>> {
    let mut header = reader.header;
    if header.chunksize != 0 {
        let last_full = match reader.nchunks() {
            0 => true,
            n => reader.chunk_nbytes(n - 1)? == header.chunksize as usize,
        };
        if !last_full || nbytes > header.chunksize as usize {
            header.chunksize = 0;
        }
    }
    let mut chunks: Vec<&[u8]> = Vec::with_capacity(reader.nchunks() + 1);
    for i in 0..reader.nchunks() {
        chunks.push(reader.chunk(i)?);
    }
    chunks.push(chunk);
    let filters_chunk = new_filters_chunk.or(reader.filters_chunk());
    assemble(
        header,
        [
            filters_chunk,
            reader.codec_chunk(),
            reader.metadata_chunk(),
            reader.userdata_chunk(),
        ],
        &chunks,
    )
}

pub(super) fn compress_with(params: &CParams, data: &[u8]) -> Result<Vec<u8>> {
    Compressor::new(params.clone()).compress(data)
}
