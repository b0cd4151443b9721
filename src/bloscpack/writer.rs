//! Writing: whole files ([`pack`]), appends within the reserved offset
//! slots ([`append`]) and metadata rewrites within the reserved room
//! ([`rewrite_metadata`]).

use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;

use serde_json::Value;

use super::checksum::Checksum;
use super::header::{HEADER_LEN, Header};
use super::metadata::{self, MetadataOptions};
use super::offsets;
use super::reader::Reader;
use crate::error::{Error, Result};
use crate::{CParams, ChunkFormat, Compressor, MAX_BUFFERSIZE};

/// bloscpack's default chunk size: 1 MiB.
pub const DEFAULT_CHUNK_SIZE: usize = 1 << 20;
/// bloscpack's default clevel.
pub const DEFAULT_CLEVEL: u8 = 7;

/// How [`pack`] writes a file. The defaults are bloscpack 0.16.0's: 1 MiB
/// chunks of Blosc1 BloscLZ at clevel 7 with byte shuffle and typesize 8,
/// an Adler-32 after each chunk, offsets on with room for 10 × nchunks
/// appended chunks, no metadata.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Options {
    /// Chunk compression parameters (codec, clevel, filter, typesize,
    /// threads). The chunks are always written as Blosc1 chunks
    /// ([`ChunkFormat::Blosc1`]), whatever `format` says; typesize must be
    /// 1..=255.
    pub cparams: CParams,
    /// Uncompressed bytes per chunk (1..=[`MAX_BUFFERSIZE`]).
    pub chunk_size: usize,
    /// The checksum after each chunk.
    pub checksum: Checksum,
    /// Whether to write the offsets section (needed by [`append`]).
    pub offsets: bool,
    /// Offset slots reserved for appends; `None` = 10 × nchunks. Ignored
    /// (0) without offsets.
    pub max_app_chunks: Option<u64>,
    /// The metadata to store as JSON, if any.
    pub metadata: Option<Value>,
    /// How the metadata is stored.
    pub metadata_options: MetadataOptions,
}

/// bloscpack's default chunk parameters: Blosc1 BloscLZ, clevel 7, byte
/// shuffle, typesize 8.
pub fn default_cparams() -> CParams {
    CParams::default()
        .format(ChunkFormat::Blosc1)
        .clevel(DEFAULT_CLEVEL)
}

impl Default for Options {
    fn default() -> Self {
        Options {
            cparams: default_cparams(),
            chunk_size: DEFAULT_CHUNK_SIZE,
            checksum: Checksum::Adler32,
            offsets: true,
            max_app_chunks: None,
            metadata: None,
            metadata_options: MetadataOptions::default(),
        }
    }
}

impl Options {
    /// Set the chunk compression parameters.
    pub fn cparams(mut self, cparams: CParams) -> Self {
        self.cparams = cparams;
        self
    }
    /// Set the type size (1..=255).
    pub fn typesize(mut self, typesize: usize) -> Self {
        self.cparams = self.cparams.typesize(typesize);
        self
    }
    /// Set the uncompressed bytes per chunk.
    pub fn chunk_size(mut self, chunk_size: usize) -> Self {
        self.chunk_size = chunk_size;
        self
    }
    /// Set the checksum after each chunk.
    pub fn checksum(mut self, checksum: Checksum) -> Self {
        self.checksum = checksum;
        self
    }
    /// Write the offsets section or not.
    pub fn offsets(mut self, offsets: bool) -> Self {
        self.offsets = offsets;
        self
    }
    /// Reserve `n` offset slots for appends.
    pub fn max_app_chunks(mut self, n: u64) -> Self {
        self.max_app_chunks = Some(n);
        self
    }
    /// Store `metadata` (JSON) in a metadata section.
    pub fn metadata(mut self, metadata: Value) -> Self {
        self.metadata = Some(metadata);
        self
    }
    /// Set how the metadata is stored.
    pub fn metadata_options(mut self, metadata_options: MetadataOptions) -> Self {
        self.metadata_options = metadata_options;
        self
    }
}

pub(super) fn chunk_cparams(cparams: &CParams) -> Result<CParams> {
    let p = cparams.clone().format(ChunkFormat::Blosc1);
    if p.typesize > 255 {
        return Err(Error::InvalidParam(format!(
            "bloscpack: typesize {} does not fit the header's byte",
            p.typesize
        )));
    }
    p.validate()?;
    Ok(p)
}

/// Compress one chunk and append it and its digest to `out`.
fn put_chunk(c: &mut Compressor, cs: Checksum, data: &[u8], out: &mut Vec<u8>) -> Result<()> {
    let chunk = c.compress(data)?;
    out.extend_from_slice(&chunk);
    out.extend_from_slice(&cs.digest(&chunk));
    Ok(())
}

/// The chunking of `len` bytes: (nchunks, chunk_size, last_chunk), as
/// bloscpack's `calculate_nchunks` (empty input is one empty chunk).
fn chunking(len: usize, chunk_size: usize) -> (usize, usize, usize) {
    if len <= chunk_size {
        (1, len, len)
    } else {
        let n = len.div_ceil(chunk_size);
        let last = len - (n - 1) * chunk_size;
        (n, chunk_size, last)
    }
}

/// What precedes a file's chunks: header, metadata section, and the offsets
/// section with every slot −1 (the caller writes the used ones at
/// `offsets_pos` once the chunks are placed).
pub(super) struct FileHead {
    pub(super) bytes: Vec<u8>,
    pub(super) offsets_pos: usize,
}

/// What `pack` and the streaming `Encoder` check and prepare before they
/// compress anything: the chunks' parameters and the encoded metadata
/// section (so metadata that does not fit its room fails at once).
pub(super) struct Prepared {
    pub(super) params: CParams,
    pub(super) metadata: Option<Vec<u8>>,
}

/// Check `opts` and encode its metadata.
///
/// # Errors
/// [`Error::InvalidParam`] for a chunk size out of 1..=[`MAX_BUFFERSIZE`],
/// a typesize over 255, bad compression parameters or metadata that does
/// not fit its room; [`Error::Unsupported`] for a codec this build lacks.
pub(super) fn prepare(opts: &Options) -> Result<Prepared> {
    let params = chunk_cparams(&opts.cparams)?;
    if opts.chunk_size == 0 || opts.chunk_size > MAX_BUFFERSIZE {
        return Err(Error::InvalidParam(format!(
            "bloscpack: chunk size {} is not in 1..={MAX_BUFFERSIZE}",
            opts.chunk_size
        )));
    }
    let metadata = match &opts.metadata {
        Some(meta) => Some(metadata::encode(meta, &opts.metadata_options)?.1),
        None => None,
    };
    Ok(Prepared { params, metadata })
}

/// The [`FileHead`] of a file of `nchunks` chunks (every one but the last
/// of `chunk_size` bytes), written with `opts` and the metadata section
/// [`prepare`] encoded.
///
/// # Errors
/// [`Error::InvalidParam`] for offset slots that overflow.
pub(super) fn file_head(
    opts: &Options,
    metadata: Option<&[u8]>,
    typesize: u8,
    nchunks: usize,
    chunk_size: usize,
    last_chunk: usize,
) -> Result<FileHead> {
    let max_app_chunks = if opts.offsets {
        opts.max_app_chunks.unwrap_or(10 * nchunks as u64)
    } else {
        0
    };
    let header = Header {
        offsets: opts.offsets,
        metadata: metadata.is_some(),
        checksum: opts.checksum,
        typesize,
        chunk_size: Some(chunk_size as u32),
        last_chunk: Some(last_chunk as u32),
        nchunks: Some(nchunks as u64),
        max_app_chunks,
    };
    let slots = usize::try_from(nchunks as u64 + max_app_chunks)
        .ok()
        .filter(|s| s.checked_mul(offsets::SLOT_LEN).is_some())
        .ok_or_else(|| Error::InvalidParam("bloscpack: max_app_chunks too large".into()))?;
    let mut bytes = header.to_bytes()?.to_vec();
    if let Some(section) = metadata {
        bytes.extend_from_slice(section);
    }
    let offsets_pos = bytes.len();
    if opts.offsets {
        bytes.extend_from_slice(&offsets::encode(&[], slots));
    }
    Ok(FileHead { bytes, offsets_pos })
}

/// Pack `data` into a Bloscpack file in memory.
///
/// ```
/// use oxiblosc::bloscpack::{self, Checksum, Options};
/// let data = vec![42u8; 3 << 20];
/// let blp = bloscpack::pack(&data, &Options::default().checksum(Checksum::Sha256))?;
/// assert_eq!(&blp[..4], b"blpk");
/// assert_eq!(bloscpack::unpack(&blp)?, data);
/// # Ok::<(), oxiblosc::Error>(())
/// ```
///
/// # Errors
/// [`Error::InvalidParam`] for a chunk size out of 1..=[`MAX_BUFFERSIZE`],
/// a typesize over 255, bad compression parameters, or metadata that does
/// not fit its room; [`Error::Unsupported`] for a codec this build lacks.
pub fn pack(data: &[u8], opts: &Options) -> Result<Vec<u8>> {
    let Prepared {
        params: p,
        metadata,
    } = prepare(opts)?;
    let (nchunks, chunk_size, last_chunk) = chunking(data.len(), opts.chunk_size);
    let head = file_head(
        opts,
        metadata.as_deref(),
        p.typesize as u8,
        nchunks,
        chunk_size,
        last_chunk,
    )?;
    let offsets_pos = head.offsets_pos;
    let mut out = head.bytes;
    out.reserve(data.len() / 4 + 4096);
    let mut c = Compressor::new(p);
    let mut starts = Vec::with_capacity(nchunks);
    if data.is_empty() {
        starts.push(out.len() as u64);
        put_chunk(&mut c, opts.checksum, data, &mut out)?;
    }
    for piece in data.chunks(chunk_size.max(1)) {
        starts.push(out.len() as u64);
        put_chunk(&mut c, opts.checksum, piece, &mut out)?;
    }
    if opts.offsets {
        let o = offsets::encode(&starts, nchunks);
        out[offsets_pos..offsets_pos + o.len()].copy_from_slice(&o);
    }
    Ok(out)
}

/// Pack `data` into a Bloscpack file written to `w`.
///
/// # Errors
/// As [`pack`], plus [`Error::Io`].
pub fn pack_to_writer<W: Write>(data: &[u8], mut w: W, opts: &Options) -> Result<()> {
    w.write_all(&pack(data, opts)?)?;
    w.flush()?;
    Ok(())
}

/// Pack `data` into a Bloscpack file at `path` (created or truncated).
///
/// # Errors
/// As [`pack`], plus [`Error::Io`].
pub fn pack_to_file(data: &[u8], path: impl AsRef<Path>, opts: &Options) -> Result<()> {
    let blp = pack(data, opts)?;
    std::fs::write(path, blp)?;
    Ok(())
}

/// Decode a whole Bloscpack file in memory.
///
/// # Errors
/// As [`Reader::new`] and [`Reader::decompress_all`].
pub fn unpack(blp: &[u8]) -> Result<Vec<u8>> {
    Reader::new(blp)?.decompress_all()
}

/// Decode the Bloscpack file at `path`.
///
/// # Errors
/// As [`unpack`], plus [`Error::Io`].
pub fn unpack_file(path: impl AsRef<Path>) -> Result<Vec<u8>> {
    Reader::open(path)?.decompress_all()
}

/// Append `data` to the Bloscpack file in `blp`, as bloscpack's `append`
/// does: the last chunk is filled up to the chunk size and recompressed,
/// the rest goes into new chunks that take reserved offset slots
/// (`max_app_chunks` goes down by their number). `cparams` compresses the
/// chunks written (`None`: bloscpack's defaults with the header's
/// typesize). Returns the number of new chunks. On error `blp` is
/// unchanged.
///
/// # Errors
/// [`Error::InvalidParam`] when the file has no offsets, no known chunk
/// size, or too few reserved slots for the new chunks; as [`Reader::new`]
/// and [`Reader::decompress_chunk`] for a damaged file.
pub fn append(blp: &mut Vec<u8>, data: &[u8], cparams: Option<&CParams>) -> Result<usize> {
    let r = Reader::new(&blp[..])?;
    let mut header = *r.header();
    if !header.offsets {
        return Err(Error::InvalidParam(
            "bloscpack append: the file has no offsets section".into(),
        ));
    }
    let chunk_size = match header.chunk_size {
        Some(c) if c > 0 => c as usize,
        _ => {
            return Err(Error::InvalidParam(
                "bloscpack append: the file's chunk size is unknown or 0".into(),
            ));
        }
    };
    let n = r.nchunks();
    if n == 0 {
        return Err(Error::InvalidParam(
            "bloscpack append: the file has no chunk to append to".into(),
        ));
    }
    let p = match cparams {
        Some(p) => chunk_cparams(p)?,
        None => chunk_cparams(&default_cparams().typesize(usize::from(header.typesize).max(1)))?,
    };
    let mut last = r.decompress_chunk(n - 1)?;
    if last.len() > chunk_size {
        return Err(Error::Corrupt(format!(
            "bloscpack chunk {}: holds {} bytes, more than the chunk size {chunk_size}",
            n - 1,
            last.len()
        )));
    }
    let room = chunk_size - last.len();
    let (fill, rest) = data.split_at(data.len().min(room));
    let (new_chunks, last_chunk) = if rest.is_empty() {
        (0, last.len() + fill.len())
    } else {
        let (k, _, l) = chunking(rest.len(), chunk_size);
        (k, l)
    };
    if new_chunks as u64 > header.max_app_chunks {
        return Err(Error::InvalidParam(format!(
            "bloscpack append: {new_chunks} new chunks needed, only {} offset slots reserved",
            header.max_app_chunks
        )));
    }
    // Build the new tail (from the old last chunk on) before touching blp.
    let last_start = r.chunk_range(n - 1).map_or(0, |s| s.start);
    let offsets_pos = r.offsets_position();
    drop(r);
    let cs = header.checksum;
    let mut c = Compressor::new(p);
    let mut tail = Vec::new();
    // `last` is exactly the chunk's size: grown by amortised doubling, a
    // 64 MiB chunk took 128 MiB to add a few bytes.
    last.reserve_exact(fill.len());
    last.extend_from_slice(fill);
    put_chunk(&mut c, cs, &last, &mut tail)?;
    let mut new_starts = Vec::with_capacity(new_chunks);
    for piece in rest.chunks(chunk_size) {
        new_starts.push((last_start + tail.len()) as u64);
        put_chunk(&mut c, cs, piece, &mut tail)?;
    }
    header.last_chunk = Some(last_chunk as u32);
    header.nchunks = Some(n as u64 + new_chunks as u64);
    header.max_app_chunks -= new_chunks as u64;
    let header_bytes = header.to_bytes()?;
    // Commit.
    blp.truncate(last_start);
    blp.extend_from_slice(&tail);
    blp[..HEADER_LEN].copy_from_slice(&header_bytes);
    let slots_at = offsets_pos + n * offsets::SLOT_LEN;
    for (k, s) in new_starts.iter().enumerate() {
        let at = slots_at + k * offsets::SLOT_LEN;
        blp[at..at + offsets::SLOT_LEN].copy_from_slice(&(*s as i64).to_le_bytes());
    }
    Ok(new_chunks)
}

/// [`append`] to the file at `path` (rewritten through a temporary file in
/// the same directory, renamed into place).
///
/// # Errors
/// As [`append`], plus [`Error::Io`].
pub fn append_file(
    path: impl AsRef<Path>,
    data: &[u8],
    cparams: Option<&CParams>,
) -> Result<usize> {
    let path = path.as_ref();
    let mut blp = std::fs::read(path)?;
    let n = append(&mut blp, data, cparams)?;
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".tmp-{}", std::process::id()));
    std::fs::write(&tmp, &blp)?;
    std::fs::rename(&tmp, path)?;
    Ok(n)
}

/// Replace the metadata of the Bloscpack file in `blp` by `value`, within
/// the room its metadata section reserved (`max_meta_size`), keeping its
/// checksum; codec and level come from `opts`.
///
/// # Errors
/// [`Error::InvalidParam`] when the file has no metadata section or the new
/// metadata does not fit; as [`Reader::new`] for a damaged header or
/// metadata section.
pub fn rewrite_metadata(blp: &mut [u8], value: &Value, opts: &MetadataOptions) -> Result<()> {
    let header = Header::parse(blp)?;
    if !header.metadata {
        return Err(Error::InvalidParam(
            "bloscpack: the file has no metadata section to rewrite".into(),
        ));
    }
    let (old, _, len) = metadata::decode(&blp[HEADER_LEN..])?;
    let (_, section) = metadata::reencode(&old, value, opts)?;
    debug_assert_eq!(section.len(), len);
    blp[HEADER_LEN..HEADER_LEN + len].copy_from_slice(&section);
    Ok(())
}

/// [`rewrite_metadata`] in the file at `path`, in place (only the metadata
/// section is written).
///
/// # Errors
/// As [`rewrite_metadata`], plus [`Error::Io`].
pub fn rewrite_metadata_file(
    path: impl AsRef<Path>,
    value: &Value,
    opts: &MetadataOptions,
) -> Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)?;
    let mut head = [0u8; HEADER_LEN + metadata::METADATA_HEADER_LEN];
    f.read_exact(&mut head).map_err(|e| match e.kind() {
        std::io::ErrorKind::UnexpectedEof => Error::Truncated {
            what: "bloscpack header and metadata header",
            needed: head.len(),
            available: 0,
        },
        _ => Error::Io(e),
    })?;
    let header = Header::parse(&head)?;
    if !header.metadata {
        return Err(Error::InvalidParam(
            "bloscpack: the file has no metadata section to rewrite".into(),
        ));
    }
    let mh = metadata::MetadataHeader::parse(&head[HEADER_LEN..])?;
    let len = mh.section_len();
    let file_len = f.metadata()?.len();
    if HEADER_LEN as u64 + len > file_len {
        return Err(Error::Truncated {
            what: "bloscpack metadata section",
            needed: usize::try_from(len).unwrap_or(usize::MAX),
            available: usize::try_from(file_len).unwrap_or(usize::MAX) - HEADER_LEN,
        });
    }
    let mut section = vec![0u8; len as usize];
    f.seek(SeekFrom::Start(HEADER_LEN as u64))?;
    f.read_exact(&mut section)?;
    let mut whole = head[..HEADER_LEN].to_vec();
    whole.extend_from_slice(&section);
    rewrite_metadata(&mut whole, value, opts)?;
    f.seek(SeekFrom::Start(HEADER_LEN as u64))?;
    f.write_all(&whole[HEADER_LEN..])?;
    f.flush()?;
    Ok(())
}
