//! The low-level pieces a frame writer is built from: the header with its
//! metalayers, the trailer with its vlmetalayers, the offsets index chunk,
//! and the `general_flags` bits. [`crate::schunk::SChunk`] writes frames with
//! these; most users want it (or [`super::Frame`] to read) instead.
//!
//! They are also re-exported at their old paths in [`crate::frame`].

use super::meta::{encode_meta_section, meta_section_spans, parse_meta_section};
use super::{
    FrameHeader, HEADER_FIXED_LEN, MAX_METALAYERS, MAX_NCHUNKS, MAX_VLMETALAYERS, Metalayer,
    VlMetalayer, check_stored_name,
};
use std::borrow::Cow;

use crate::error::{Result, corrupt, invalid_param};
use crate::params::{CParams, Codec, SplitMode};
use crate::{SpecialValue, special_chunk};

/// general_flags: 64-bit offsets.
pub const GFLAG_OFFSETS_64: u8 = 0x10;
/// general_flags: variable-size chunks (chunksize 0).
pub const GFLAG_VARIABLE_CHUNKS: u8 = 0x40;
/// general_flags: VL-block chunks.
pub const GFLAG_VLBLOCKS: u8 = 0x80;
/// Encode a current-edition header with its metalayers; sets `header_len`
/// (the caller's `frame_len` etc. are kept).
///
/// # Errors
/// [`Error::InvalidParam`](crate::Error::InvalidParam) for more than 16 metalayers, names of
/// over 31 bytes or with a NUL (an empty one is written, as frames may hold
/// one), or a header over `i32::MAX` bytes.
pub fn encode_header(h: &mut FrameHeader, metalayers: &[Metalayer]) -> Result<Vec<u8>> {
    if metalayers.len() > MAX_METALAYERS {
        return Err(invalid_param("more than 16 metalayers"));
    }
    for m in metalayers {
        check_stored_name(&m.name)?;
    }
    let entries: Vec<(&str, &[u8])> = metalayers
        .iter()
        .map(|m| (m.name.as_str(), m.content.as_slice()))
        .collect();
    let mut sec = Vec::new();
    encode_meta_section(&mut sec, &entries, HEADER_FIXED_LEN, 0);
    let total = HEADER_FIXED_LEN + sec.len();
    h.header_len = u32::try_from(total)
        .ok()
        .filter(|&l| l <= i32::MAX as u32)
        .ok_or_else(|| invalid_param("metalayers too large"))?;
    let mut out = h.encode_fixed().to_vec();
    out.extend_from_slice(&sec);
    Ok(out)
}

/// `stored`, a frame's header as it is stored (`h` its parsed fixed part),
/// with the content of its first metalayer named `name` overwritten in
/// place by `content` (not longer than it), as C-Blosc2's
/// `blosc2_meta_update` writes it: for a header [`encode_header`] would not
/// write at the same length (another encoding of the same layers, bytes
/// after them). `want` is what the metalayers must then read as.
///
/// # Errors
/// [`Error::Corrupt`](crate::Error::Corrupt) when the stored layers do not
/// parse, hold no `name`, or do not then read as `want` (a content shared
/// with another layer).
pub(crate) fn patch_meta_content(
    stored: &[u8],
    h: &FrameHeader,
    name: &str,
    content: &[u8],
    want: &[Metalayer],
) -> Result<Vec<u8>> {
    let fixed = h.fixed_len();
    let spans = meta_section_spans(stored, fixed, MAX_METALAYERS, "metalayers")?;
    let (_, at, len) = spans
        .into_iter()
        .find(|(n, _, _)| n == name)
        .ok_or_else(|| corrupt(format!("stored header has no metalayer {name:?}")))?;
    if content.len() > len {
        return Err(corrupt(format!(
            "metalayer {name:?} is {len} bytes as stored"
        )));
    }
    let mut out = stored.to_vec();
    out[at..at + content.len()].copy_from_slice(content);
    let again = parse_meta_section(&out, fixed, MAX_METALAYERS, "metalayers")?;
    let same = again.len() == want.len()
        && again
            .iter()
            .zip(want)
            .all(|((n, c), m)| *n == m.name && *c == m.content);
    if !same {
        return Err(corrupt(format!(
            "metalayer {name:?} shares its stored bytes with another"
        )));
    }
    Ok(out)
}

/// Encode a current-edition trailer with `vlmetalayers`, fingerprint type 0.
///
/// # Errors
/// [`Error::InvalidParam`](crate::Error::InvalidParam) for too many vlmetalayers or names of
/// over 31 bytes or with a NUL (an empty one is written, as frames may hold
/// one).
pub fn encode_trailer(vlmetalayers: &[VlMetalayer]) -> Result<Vec<u8>> {
    if vlmetalayers.len() > MAX_VLMETALAYERS {
        return Err(invalid_param("more than 8192 vlmetalayers"));
    }
    for m in vlmetalayers {
        check_stored_name(&m.name)?;
    }
    let entries: Vec<(&str, &[u8])> = vlmetalayers
        .iter()
        .map(|m| (m.name.as_str(), m.chunk.as_slice()))
        .collect();
    let mut out = vec![0x94, 0x01];
    encode_meta_section(&mut out, &entries, 0, 1);
    let len = out.len() + 5 + 2 + 16;
    let len32 = u32::try_from(len)
        .ok()
        .filter(|&l| l <= i32::MAX as u32)
        .ok_or_else(|| invalid_param("vlmetalayers too large"))?;
    out.push(0xce);
    out.extend_from_slice(&len32.to_be_bytes());
    out.push(0xd8);
    out.push(0);
    out.extend_from_slice(&[0; 16]);
    Ok(out)
}

/// The parameters C-Blosc2 compresses the offsets index with on every
/// change (blosclz 5, shuffle, never split, 16 KiB blocks, typesize 8).
pub fn index_cparams() -> CParams {
    CParams::default()
        .codec(Codec::BloscLz)
        .clevel(5)
        .typesize(8)
        .splitmode(SplitMode::Never)
        .blocksize(16 * 1024)
        .nthreads(1)
}

/// Encode an offsets index chunk for `offsets`.
///
/// # Errors
/// The chunk encoder's errors (more than [`MAX_NCHUNKS`] entries).
pub fn encode_index(offsets: &[i64]) -> Result<Vec<u8>> {
    if offsets.len() > MAX_NCHUNKS {
        return Err(invalid_param("more than 268435455 chunks"));
    }
    let raw: Vec<u8> = offsets.iter().flat_map(|o| o.to_le_bytes()).collect();
    crate::compress(&raw, &index_cparams())
}

/// The repeated-value index chunk C writes for `fill_special`: `n` copies
/// of one special entry in a 40-byte chunk.
///
/// # Errors
/// [`Error::InvalidParam`](crate::Error::InvalidParam) for `n` over [`MAX_NCHUNKS`].
pub fn encode_repeated_index(entry: i64, n: usize) -> Result<Vec<u8>> {
    if n > MAX_NCHUNKS {
        return Err(invalid_param("more than 268435455 chunks"));
    }
    special_chunk(
        &CParams::default().typesize(8),
        n * 8,
        SpecialValue::Value,
        &entry.to_le_bytes(),
    )
}

/// `p` as a frame writer (super-chunks, the streaming frame encoder)
/// compresses with it: Blosc2 chunks, whatever `p.format` says, as
/// C-Blosc2's super-chunks compress them. C-Blosc2 cannot open, by path (a
/// file or a sparse frame), a frame whose first chunk is a Blosc1 chunk,
/// and no C-Blosc 1.x reader reads frames.
pub(crate) fn frame_cparams(mut p: CParams) -> CParams {
    p.format = crate::params::ChunkFormat::Blosc2;
    p
}

/// A valid chunk shorter than a 32-byte Blosc2 header (a 16-byte header
/// and at most 15 bytes, e.g. one holding 0 bytes, which C-Blosc2 takes) as
/// the Blosc2 chunk of the same bytes and typesize: frames store chunks of
/// at least 32 bytes (C-Blosc2's frame reader requires it too). Longer
/// chunks are stored as given. Every frame writer (super-chunks, the
/// streaming encoder) stores chunks through it.
pub(crate) fn widen_short_chunk(chunk: &[u8]) -> Result<std::borrow::Cow<'_, [u8]>> {
    if chunk.len() >= 32 {
        return Ok(std::borrow::Cow::Borrowed(chunk));
    }
    let h = crate::chunk::ChunkHeader::parse(chunk)?;
    let data = crate::decompress(chunk)?;
    let p = CParams::default()
        .clevel(0)
        .typesize(usize::from(h.typesize).max(1));
    Ok(std::borrow::Cow::Owned(crate::compress(&data, &p)?))
}

/// Chunk `chunk` as a super-chunk of type size `typesize` decodes it: a
/// BYTEDELTA slot whose meta is 0 stands for the super-chunk's type size
/// (CHUNK-NOTES §4.6; C-Blosc2 reads it from the super-chunk, and refuses
/// such a chunk outside one), while the chunk decoder, which sees the chunk
/// alone, takes the chunk's own. Where the two differ (a vlmetalayer's
/// chunk, a chunk of another type size than its frame's), the copy decoded
/// names the super-chunk's type size in that meta. Every other chunk is
/// borrowed as it is: our encoder and C-Blosc2's write the type size
/// itself. A super-chunk type size over 255 fits no meta byte and is left
/// to the chunk's.
pub(crate) fn as_in_schunk(chunk: Cow<'_, [u8]>, typesize: i32) -> Cow<'_, [u8]> {
    const BYTEDELTA: u8 = 35;
    let Ok(ts) = u8::try_from(typesize) else {
        return chunk;
    };
    let extended = chunk.len() >= 32 && chunk[2] & 0x05 == 0x05;
    if !extended || ts == 0 || chunk[3] == ts {
        return chunk;
    }
    let meta_0 = |c: &[u8], s: usize| c[16 + s] == BYTEDELTA && c[24 + s] == 0;
    if !(0..6).any(|s| meta_0(&chunk, s)) {
        return chunk;
    }
    let mut c = chunk.into_owned();
    for s in 0..6 {
        if meta_0(&c, s) {
            c[24 + s] = ts;
        }
    }
    Cow::Owned(c)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::FrameKind;

    fn layer(name: &str, content: &[u8]) -> Metalayer {
        Metalayer {
            name: name.into(),
            content: content.to_vec(),
        }
    }

    /// A header stored with bytes after its layers (as `fuzz-cframe_edit-3`
    /// was): the content is overwritten in place and nothing else changes.
    #[test]
    fn patch_meta_content_overwrites_in_place() {
        let mut h = FrameHeader::new(FrameKind::Contiguous, &CParams::default(), 1, 100);
        let metas = [layer("a", b"0123"), layer("b", b"4567")];
        let mut stored = encode_header(&mut h, &metas).unwrap();
        stored.extend_from_slice(&[0xdb, 0, 0, 0, 3]);
        let want = [layer("a", b"xy23"), layer("b", b"4567")];
        let out = patch_meta_content(&stored, &h, "a", b"xy", &want).unwrap();
        assert_eq!(out.len(), stored.len());
        let diff: Vec<usize> = (0..out.len()).filter(|&i| out[i] != stored[i]).collect();
        assert_eq!(diff.len(), 2, "{diff:?}");
        assert_eq!(&out[diff[0]..=diff[1]], b"xy");
        // No such layer, or a content longer than stored: refused.
        assert!(patch_meta_content(&stored, &h, "c", b"xy", &want).is_err());
        assert!(patch_meta_content(&stored, &h, "a", b"01234", &want).is_err());
    }

    /// Two names whose offsets point at one content: overwriting one would
    /// change the other, which `want` does not say: refused.
    #[test]
    fn patch_meta_content_refuses_a_shared_content() {
        let mut h = FrameHeader::new(FrameKind::Contiguous, &CParams::default(), 1, 100);
        let metas = [layer("a", b"0123"), layer("b", b"4567")];
        let mut stored = encode_header(&mut h, &metas).unwrap();
        // b's offset (after "\xa1b\xd2") made a's.
        let slot =
            |s: &[u8], name: u8| s.windows(3).position(|w| w == [0xa1, name, 0xd2]).unwrap() + 3;
        let (sa, sb) = (slot(&stored, b'a'), slot(&stored, b'b'));
        let a_off: [u8; 4] = stored[sa..sa + 4].try_into().unwrap();
        stored[sb..sb + 4].copy_from_slice(&a_off);
        let want = [layer("a", b"xy23"), layer("b", b"0123")];
        let e = patch_meta_content(&stored, &h, "a", b"xy", &want).unwrap_err();
        assert!(e.to_string().contains("shares"), "{e}");
    }
}
