//! The VL-block chunk writer (format version 6, CHUNK-NOTES §13): blocks of
//! individually given sizes in one chunk, as C-Blosc2's
//! `blosc2_vlcompress_ctx` writes them. The decoder is
//! [`crate::Decompressor::vl_blocks`] (and `decompress`, which concatenates
//! the blocks).
//!
//! Layout: the 32-byte header (version 6, flags `0x15 | format << 5` plus
//! the delta bit, `blocksize` = the number of blocks, flags2 = 0x01), one
//! `i32` block start per block, then per block `i32 uncompressed size |
//! payload`, the payload stored raw when the codec does not shrink it (at
//! level 0 too: C-Blosc2 compresses VL blocks at any level). Each
//! block runs through the filters as a block 0 of its own; there are no
//! run streams and no memcpyed or special form.
//!
//! Dictionaries (`CParams::use_dict`), as C-Blosc2 3.3 makes them: only
//! for a compression level above 0 and 8 blocks or more, with a dictionary
//! of at most min(32 KiB, nbytes / 20) bytes (256 at least) and nbytes /
//! nblocks / 16 > 0; LZ4/LZ4HC take the first bytes of the filtered blocks,
//! every other codec gets one trained by ZSTD on them (one sample per
//! block). It is stored after the block starts (`i32 size | bytes`) and
//! `blosc2_flags` gets the dictionary bit; ZSTD and LZ4/LZ4HC compress every
//! block with it, codecs without dictionary support (BloscLZ, zlib, user
//! codecs) store it unused, as C-Blosc2 does (its VL-block writer takes
//! `use_dict` with any codec, unlike its regular chunks and
//! [`CParams::validate`]). Otherwise (or when ZSTD training fails, or in a
//! build without ZSTD for codecs other than LZ4/LZ4HC) the chunk is made
//! without one.

use oxiblosc_kernels::Kernels;

use super::encode::{layout, lz4_dict};
use super::header::{EXTENDED_HEADER_LEN, bflags, flags};
use crate::codecs::EncDict;
use crate::error::{Error, Result};
use crate::parallel::Scratch;
use crate::params::{CParams, ChunkFormat, Codec, MAX_BUFFERSIZE};

/// The version byte of VL-block chunks.
const VERSION_VL_BLOCKS: u8 = 6;
/// `blosc2_flags2` bit of VL-block chunks.
const FLAGS2_VL_BLOCKS: u8 = 0x01;

/// The largest chunk [`vl_compress_into`] can write for blocks totalling
/// `nbytes` bytes in `nblocks` blocks (every block stored raw) without a
/// dictionary; a dictionary adds at most [`VL_MAX_DICT_OVERHEAD`] bytes.
pub fn vl_max_len(nbytes: usize, nblocks: usize) -> usize {
    EXTENDED_HEADER_LEN + 8 * nblocks + nbytes
}

/// The most a dictionary adds to a VL-block chunk (its size field and a
/// 32 KiB dictionary).
pub const VL_MAX_DICT_OVERHEAD: usize = 4 + MAX_DICT;
/// `BLOSC2_MAXDICTSIZE`.
const MAX_DICT: usize = 32 * 1024;
/// `BLOSC2_MINUSEFULDICT`.
const MIN_USEFUL_DICT: usize = 256;

/// Compress `blocks` into one VL-block chunk with `p` (codec, level,
/// filters, typesize), serially.
///
/// ```
/// use oxiblosc::{CParams, Codec, Decompressor, DParams};
/// let blocks: [&[u8]; 3] = [b"first block", &[7u8; 500], b"third"];
/// let chunk = oxiblosc::chunk::vl_compress(&blocks, &CParams::default().codec(Codec::Lz4)).unwrap();
/// let back = Decompressor::new(DParams::default()).vl_blocks(&chunk).unwrap();
/// assert_eq!(back, blocks.map(|b| b.to_vec()));
/// ```
///
/// # Errors
/// As [`vl_compress_into`].
pub fn vl_compress(blocks: &[&[u8]], p: &CParams) -> Result<Vec<u8>> {
    let nbytes = blocks.iter().map(|b| b.len()).sum();
    let room = if p.use_dict { VL_MAX_DICT_OVERHEAD } else { 0 };
    let mut out = vec![0u8; vl_max_len(nbytes, blocks.len()) + room];
    let n = vl_compress_into(blocks, &mut out, p)?;
    out.truncate(n);
    // Its capacity about its length (the bound is for incompressible data).
    if n < out.capacity() / 2 {
        out.shrink_to_fit();
    }
    Ok(out)
}

/// Compress `blocks` into one VL-block chunk in `dst`; returns its length.
///
/// # Errors
/// [`Error::InvalidParam`] for no blocks, an empty block, more than
/// `i32::MAX` blocks, a total beyond the chunk maximum or the Blosc1
/// format (VL-block chunks are Blosc2 chunks); [`Error::DstTooSmall`] when
/// the chunk does not fit in `dst`
/// (a VL-block chunk has no memcpyed fallback); the parameter checks of
/// [`CParams::validate`].
pub fn vl_compress_into(blocks: &[&[u8]], dst: &mut [u8], p: &CParams) -> Result<usize> {
    if blocks.is_empty() || i32::try_from(blocks.len()).is_err() {
        return Err(Error::InvalidParam(format!(
            "a VL-block chunk holds 1 to {} blocks, not {}",
            i32::MAX,
            blocks.len()
        )));
    }
    if let Some(i) = blocks.iter().position(|b| b.is_empty()) {
        return Err(Error::InvalidParam(format!("VL block {i} is empty")));
    }
    let nbytes = blocks
        .iter()
        .try_fold(0usize, |t, b| t.checked_add(b.len()))
        .filter(|&t| t <= MAX_BUFFERSIZE)
        .ok_or_else(|| {
            Error::InvalidParam(format!(
                "VL blocks exceed the chunk maximum of {MAX_BUFFERSIZE} bytes"
            ))
        })?;
    if p.format == ChunkFormat::Blosc1 {
        return Err(Error::InvalidParam(
            "VL-block chunks are Blosc2 chunks (not ChunkFormat::Blosc1)".into(),
        ));
    }
    // The header and filter slots of a regular chunk of these bytes, then
    // what makes it a VL-block chunk. Regular chunks take dictionaries only
    // with codecs that use them; VL-block chunks with any (module docs).
    let plain;
    let checked = if p.use_dict && !p.codec.uses_dict() {
        plain = p.clone().use_dict(false);
        &plain
    } else {
        p
    };
    let lay = layout(checked, nbytes)?;
    let mut h = lay.header.clone();
    h.version = VERSION_VL_BLOCKS;
    h.flags =
        flags::EXTENDED | flags::DONT_SPLIT | (h.flags & flags::DELTA) | (p.codec.format() << 5);
    h.blocksize = blocks.len();
    h.blosc2_flags2 = FLAGS2_VL_BLOCKS;
    h.blosc2_flags = 0;
    let hlen = EXTENDED_HEADER_LEN;
    let mut pos = hlen + 4 * blocks.len();
    if pos > dst.len() {
        return Err(Error::DstTooSmall {
            needed: pos,
            available: dst.len(),
        });
    }
    let k = Kernels::selected()?;
    let mut scratch = Scratch::default();
    scratch.codecs.warm_compress(p.codec, p.clevel)?;
    // C-Blosc2 drops the dictionary at level 0 (nothing is compressed).
    let dict = if p.use_dict && p.clevel > 0 {
        vl_dict(&lay, p, blocks, nbytes, k, &mut scratch)?
    } else {
        None
    };
    if let Some((raw, _)) = &dict {
        let end = pos + 4 + raw.len();
        if end > dst.len() {
            return Err(Error::DstTooSmall {
                needed: end,
                available: dst.len(),
            });
        }
        dst[pos..pos + 4].copy_from_slice(&(raw.len() as i32).to_le_bytes());
        dst[pos + 4..end].copy_from_slice(raw);
        pos = end;
        h.blosc2_flags = bflags::USE_DICT;
    }
    let enc_dict = dict.as_ref().and_then(|(_, d)| d.as_ref());
    for (i, block) in blocks.iter().enumerate() {
        let size = block.len();
        let need = pos + 4;
        if need > dst.len() {
            return Err(Error::DstTooSmall {
                needed: need + size,
                available: dst.len(),
            });
        }
        dst[hlen + 4 * i..hlen + 4 * i + 4].copy_from_slice(&(pos as i32).to_le_bytes());
        dst[pos..need].copy_from_slice(&(size as i32).to_le_bytes());
        scratch.reserve(size);
        let Scratch { a, b, codecs, .. } = &mut scratch;
        let filtered = lay.pipeline.forward(k, block, None, a, b)?;
        let room = (dst.len() - need).min(size);
        // At level 0 C-Blosc2 still runs the codec on every block (LZ4 at
        // acceleration 10, LZ4HC at liblz4's default level 9, ZSTD at -1,
        // zlib's stored blocks, which never fit); BloscLZ at level 0 stops
        // C-Blosc2 3.3.5 with SIGBUS: ours stores its blocks raw.
        let blosclz_level_0 = p.clevel == 0 && p.codec == Codec::BloscLz;
        let c = if blosclz_level_0 || room == 0 {
            0
        } else {
            codecs.compress(
                p.codec,
                p.clevel,
                filtered,
                &mut dst[need..need + room],
                enc_dict,
            )?
        };
        let end = if c == 0 || c >= size {
            // Stored raw: the payload is as long as the block.
            if need + size > dst.len() {
                return Err(Error::DstTooSmall {
                    needed: need + size,
                    available: dst.len(),
                });
            }
            dst[need..need + size].copy_from_slice(filtered);
            need + size
        } else {
            need + c
        };
        pos = end;
    }
    h.cbytes = pos;
    h.write(dst);
    Ok(pos)
}

/// The dictionary of a VL-block chunk of `blocks` (`nbytes` in all):
/// `(bytes stored in the chunk, digested form for the codec)` (no digested
/// form for a codec that compresses without it), or `None` when C-Blosc2
/// makes the chunk without one (see the module docs).
fn vl_dict(
    lay: &super::encode::Layout,
    p: &CParams,
    blocks: &[&[u8]],
    nbytes: usize,
    k: &Kernels,
    scratch: &mut Scratch,
) -> Result<Option<(Vec<u8>, Option<EncDict>)>> {
    let nblocks = blocks.len();
    let maxsize = MAX_DICT.min(nbytes / 20);
    if maxsize < MIN_USEFUL_DICT || nblocks < 8 || nbytes / nblocks / 16 == 0 {
        return Ok(None);
    }
    if !matches!(p.codec, Codec::Lz4 | Codec::Lz4Hc) && !cfg!(feature = "zstd") {
        return Ok(None);
    }
    // The filtered blocks, concatenated (C's training pass).
    let mut samples = Vec::with_capacity(nbytes);
    for block in blocks {
        scratch.reserve(block.len());
        let Scratch { a, b, .. } = scratch;
        samples.extend_from_slice(lay.pipeline.forward(k, block, None, a, b)?);
    }
    match p.codec {
        Codec::Lz4 | Codec::Lz4Hc => {
            let len = nbytes.min(maxsize);
            let raw = lz4_dict(&samples[..len], nblocks);
            let d = EncDict::Lz4(raw.clone());
            Ok(Some((raw, Some(d))))
        }
        // ZSTD, and (as C-Blosc2 does) every codec without dictionaries.
        #[cfg(feature = "zstd")]
        codec => {
            let sizes: Vec<usize> = blocks.iter().map(|b| b.len()).collect();
            match crate::codecs::zstd::train(&samples, &sizes, maxsize) {
                Some(raw) if !raw.is_empty() => {
                    let d = if codec == Codec::Zstd {
                        Some(EncDict::Zstd(crate::codecs::zstd::CDict::new(&raw)?))
                    } else {
                        None
                    };
                    Ok(Some((raw, d)))
                }
                _ => Ok(None),
            }
        }
        #[cfg(not(feature = "zstd"))]
        _ => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::{Codec, DParams, Filter};
    use crate::{ChunkHeader, Decompressor};

    fn data(n: usize, seed: u32) -> Vec<u8> {
        (0..n as u32)
            .map(|i| ((i / 3).wrapping_mul(seed) >> 2) as u8)
            .collect()
    }

    #[test]
    fn round_trips_every_codec_and_filter() {
        let sizes = [1usize, 5, 120, 768, 3000, 70_000];
        let owned: Vec<Vec<u8>> = sizes.iter().map(|&n| data(n, n as u32 + 7)).collect();
        let blocks: Vec<&[u8]> = owned.iter().map(|b| &b[..]).collect();
        let whole: Vec<u8> = owned.concat();
        for codec in [
            Codec::BloscLz,
            Codec::Lz4,
            Codec::Lz4Hc,
            Codec::Zlib,
            Codec::Zstd,
        ] {
            for filters in [
                &[][..],
                &[Filter::Shuffle],
                &[Filter::BitShuffle],
                &[Filter::Delta, Filter::Shuffle],
            ] {
                for clevel in [0, 5, 9] {
                    let p = CParams::default()
                        .codec(codec)
                        .clevel(clevel)
                        .typesize(4)
                        .filters(filters);
                    let chunk = vl_compress(&blocks, &p).unwrap();
                    let h = ChunkHeader::parse(&chunk).unwrap();
                    assert!(h.is_vlblocks() && h.nbytes == whole.len());
                    assert_eq!((chunk[0], chunk[30], h.blocksize), (6, 1, sizes.len()));
                    crate::chunk::validate(&chunk).unwrap();
                    let mut d = Decompressor::new(DParams::default());
                    assert_eq!(d.vl_blocks(&chunk).unwrap(), owned, "{codec:?} {filters:?}");
                    assert_eq!(d.decompress(&chunk).unwrap(), whole);
                    if clevel > 0 && filters.is_empty() {
                        assert!(chunk.len() < whole.len(), "{codec:?} compresses");
                    }
                }
            }
        }
    }

    /// 64 JSON-like records (C-Blosc2's test_vlblocks dictionary inputs).
    fn records(n: usize) -> Vec<Vec<u8>> {
        (0..n)
            .map(|i| {
                format!(
                    "{{\"id\":\"en:ingredient-{i:03}\",\"vegan\":\"{}\",\"text\":\"INGREDIENT \
                     NUMBER {i:03}\",\"from_palm_oil\":null,\"processing\":null,\"labels\":null}}",
                    if i % 3 == 0 { "maybe" } else { "yes" }
                )
                .into_bytes()
            })
            .collect()
    }

    #[test]
    fn dictionaries_for_eight_blocks_or_more() {
        for codec in [Codec::Zstd, Codec::Lz4, Codec::Lz4Hc] {
            for n in [64usize, 8, 7, 1] {
                let owned = records(n);
                let blocks: Vec<&[u8]> = owned.iter().map(|b| &b[..]).collect();
                let p = CParams::default().codec(codec).typesize(1).use_dict(true);
                let chunk = vl_compress(&blocks, &p).unwrap();
                let h = ChunkHeader::parse(&chunk).unwrap();
                let nbytes: usize = owned.iter().map(|b| b.len()).sum();
                // C's rule: 8 blocks or more, and a dictionary of 256 bytes
                // at least (nbytes / 20).
                let expect = n >= 8 && nbytes / 20 >= MIN_USEFUL_DICT;
                assert_eq!(h.use_dict(), expect, "{codec:?} {n} blocks");
                crate::chunk::validate(&chunk).unwrap();
                let mut d = Decompressor::new(DParams::default());
                assert_eq!(d.vl_blocks(&chunk).unwrap(), owned, "{codec:?} {n}");
                assert_eq!(d.decompress(&chunk).unwrap(), owned.concat());
                if expect {
                    let plain = vl_compress(&blocks, &p.clone().use_dict(false)).unwrap();
                    assert!(chunk.len() < plain.len(), "{codec:?}: the dictionary pays");
                }
            }
        }
    }

    /// The dictionary a chunk stores (after the block starts), if any.
    fn stored_dict(chunk: &[u8]) -> Option<&[u8]> {
        let h = ChunkHeader::parse(chunk).unwrap();
        if !h.use_dict() {
            return None;
        }
        let at = EXTENDED_HEADER_LEN + 4 * h.blocksize;
        let n = i32::from_le_bytes(chunk[at..at + 4].try_into().unwrap()) as usize;
        Some(&chunk[at + 4..at + 4 + n])
    }

    /// C-Blosc2 3.3 writes VL-block chunks of codecs without dictionaries
    /// with `use_dict`: the dictionary ZSTD trains is stored and flagged,
    /// and the blocks are compressed without it.
    #[cfg(all(feature = "zstd", feature = "zlib"))]
    #[test]
    fn codecs_without_dictionaries_store_an_unused_one() {
        let owned = records(64);
        let blocks: Vec<&[u8]> = owned.iter().map(|b| &b[..]).collect();
        let zstd = CParams::default()
            .codec(Codec::Zstd)
            .typesize(1)
            .use_dict(true);
        let zstd_chunk = vl_compress(&blocks, &zstd).unwrap();
        let trained = stored_dict(&zstd_chunk).expect("zstd trains one").to_vec();
        assert!(trained.len() >= MIN_USEFUL_DICT);
        for codec in [Codec::BloscLz, Codec::Zlib] {
            let p = zstd.clone().codec(codec);
            // Regular chunks still refuse it (as C-Blosc2's do).
            assert!(p.validate().is_err(), "{codec:?}");
            let chunk = vl_compress(&blocks, &p).unwrap();
            assert_eq!(stored_dict(&chunk), Some(&trained[..]), "{codec:?}");
            crate::chunk::validate(&chunk).unwrap();
            let mut d = Decompressor::new(DParams::default());
            assert_eq!(d.vl_blocks(&chunk).unwrap(), owned, "{codec:?}");
            assert_eq!(d.decompress(&chunk).unwrap(), owned.concat());
            // The blocks are the ones of the chunk without a dictionary,
            // moved past it.
            let plain = vl_compress(&blocks, &p.clone().use_dict(false)).unwrap();
            let shift = 4 + trained.len();
            assert_eq!(chunk.len(), plain.len() + shift, "{codec:?}");
            let body = EXTENDED_HEADER_LEN + 4 * 64;
            assert_eq!(chunk[body + shift..], plain[body..], "{codec:?}");
            // Too few blocks: none, as for the other codecs.
            let few = vl_compress(&blocks[..7], &p).unwrap();
            assert_eq!(stored_dict(&few), None, "{codec:?}");
        }
    }

    /// At level 0 C-Blosc2 makes no dictionary, whatever the codec.
    #[test]
    fn no_dictionary_at_level_0() {
        let owned = records(64);
        let blocks: Vec<&[u8]> = owned.iter().map(|b| &b[..]).collect();
        for codec in Codec::ALL.into_iter().filter(|c| c.is_available()) {
            let p = CParams::default()
                .codec(codec)
                .typesize(1)
                .clevel(0)
                .use_dict(true);
            let chunk = vl_compress(&blocks, &p).unwrap();
            assert_eq!(stored_dict(&chunk), None, "{codec:?}");
            let plain = vl_compress(&blocks, &p.clone().use_dict(false)).unwrap();
            assert_eq!(chunk, plain, "{codec:?}");
        }
    }

    #[test]
    fn the_documented_layout() {
        // CHUNK-NOTES §13: 4 blocks of 120/5/768/3000 bytes, bstarts 48, ...
        let owned: Vec<Vec<u8>> = [120usize, 5, 768, 3000]
            .iter()
            .map(|&n| data(n, 11))
            .collect();
        let blocks: Vec<&[u8]> = owned.iter().map(|b| &b[..]).collect();
        let p = CParams::default()
            .codec(Codec::Lz4)
            .typesize(1)
            .filters(&[]);
        let chunk = vl_compress(&blocks, &p).unwrap();
        assert_eq!(&chunk[..4], &[6, 1, 0x35, 1]);
        assert_eq!(&chunk[4..12], &[0x35, 0x0f, 0, 0, 4, 0, 0, 0]);
        let bstart =
            |i: usize| i32::from_le_bytes(chunk[32 + 4 * i..36 + 4 * i].try_into().unwrap());
        assert_eq!(bstart(0), 48);
        for (i, block) in owned.iter().enumerate() {
            let at = bstart(i) as usize;
            let size = i32::from_le_bytes(chunk[at..at + 4].try_into().unwrap());
            assert_eq!(size as usize, block.len());
            if i > 0 {
                assert!(bstart(i) > bstart(i - 1));
            }
        }
        // The 5-byte block does not shrink: stored raw.
        let b1 = bstart(1) as usize;
        assert_eq!(bstart(2) as usize - b1 - 4, 5);
        assert_eq!(&chunk[b1 + 4..b1 + 9], &owned[1][..]);
    }

    #[test]
    fn bad_input_is_an_error() {
        let p = CParams::default();
        assert!(vl_compress(&[], &p).is_err());
        assert!(vl_compress(&[b"x", b""], &p).is_err());
        assert!(vl_compress(&[b"abc"], &p.clone().use_dict(true).clevel(10)).is_err());
        assert!(vl_compress(&[b"abc"], &p.clone().format(ChunkFormat::Blosc1)).is_err());
        let block = vec![1u8; 1000];
        let mut small = vec![0u8; 40];
        assert!(matches!(
            vl_compress_into(&[&block], &mut small, &CParams::default().clevel(0)),
            Err(Error::DstTooSmall { .. })
        ));
        let mut tiny = vec![0u8; 10];
        assert!(vl_compress_into(&[&block], &mut tiny, &p).is_err());
    }
}
