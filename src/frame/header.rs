//! The fixed fields of a frame header: [`FrameHeader`], read and written at
//! fixed offsets (the msgpack markers are checked, not interpreted).

use super::raw::GFLAG_OFFSETS_64;
use super::{FrameIo, HEADER_FIXED_LEN, HEADER_FIXED_LEN_V1, MAGIC};
use crate::error::{Error, Result, corrupt, invalid_header};
use crate::params::{CParams, Codec, Filter, SplitMode};

/// Which layout the header has.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Edition {
    /// `0x9d`: C-Blosc2 2.0.0-beta.2 … beta.5 (no block size, usermeta trailer). Read only.
    First,
    /// `0x9e`: C-Blosc2 2.0.0-rc1 … 3.x.
    Current,
}

/// What the frame holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FrameKind {
    /// Chunks inside the frame (a cframe).
    Contiguous,
    /// The index file of a directory frame: chunks live in `%08X.chunk` files.
    Sparse,
}

/// The fixed fields of a frame header, as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FrameHeader {
    /// Header layout.
    pub edition: Edition,
    /// Bytes from the frame start to the end of the metalayers.
    pub header_len: u32,
    /// Bytes of the whole frame, trailer included.
    pub frame_len: u64,
    /// Frame format version (bits 0-3), offset width (4-5), variable chunks (6), VL blocks (7).
    pub general_flags: u8,
    /// Contiguous or sparse.
    pub kind: FrameKind,
    /// Codec (low nibble; 6 = see `udcodec`) and clevel (high nibble).
    pub codec_flags: u8,
    /// Split mode − 1 in bits 0-1.
    pub other_flags: u8,
    /// Uncompressed bytes of all chunks.
    pub nbytes: i64,
    /// Bytes of the chunks section (cframe) or of all chunk files (sframe).
    pub cbytes: i64,
    /// Item size.
    pub typesize: i32,
    /// Requested block size (0 = automatic).
    pub blocksize: i32,
    /// Bytes of every chunk but the last; 0 = variable; −1 = not set yet.
    pub chunksize: i32,
    /// Threads the writer compressed with.
    pub tcomp: i16,
    /// Threads the writer decompressed with.
    pub tdecomp: i16,
    /// The writer's "has vlmetalayers" (first edition: "has usermeta") flag.
    pub has_vlmeta: bool,
    /// Number of filter slots (6).
    pub nfilters: u8,
    /// Filter ids per slot.
    pub filters: [u8; 6],
    /// Codec id when the codec nibble is 6 (C writes the codec id always).
    pub udcodec: u8,
    /// Codec meta byte.
    pub compcode_meta: u8,
    /// Filter meta bytes per slot.
    pub filters_meta: [u8; 6],
    /// Bit 0: use a dictionary.
    pub other_flags2: u8,
}

/// The block size a frame header records for `p`: a forced size over one
/// item rounded down to whole items, as our compressor uses it. C-Blosc2
/// compresses the chunks it appends to a frame with the header's size
/// as it is, and a size that is not whole items gives it chunks it cannot
/// read (CHUNK-NOTES §2: it writes the unrounded size).
fn whole_items_blocksize(p: &CParams) -> usize {
    let ts = p.typesize.max(1);
    if p.blocksize > ts {
        p.blocksize / ts * ts
    } else {
        p.blocksize
    }
}

impl FrameHeader {
    /// A fresh current-edition header for `p` (no chunks; `chunksize` −1 if unknown).
    pub fn new(kind: FrameKind, p: &CParams, dnthreads: usize, chunksize: i32) -> FrameHeader {
        let compcode = p.codec.id();
        let mut filters = [0u8; 6];
        let mut filters_meta = p.filters_meta;
        for (i, f) in p.filters.iter().enumerate() {
            if let Some(f) = f {
                filters[i] = f.id();
                if let Filter::TruncPrec(m) = f {
                    filters_meta[i] = *m;
                }
            }
        }
        FrameHeader {
            edition: Edition::Current,
            header_len: 0,
            frame_len: 0,
            general_flags: GFLAG_OFFSETS_64 | 2,
            kind,
            codec_flags: (compcode.min(6)) | (p.clevel.min(9) << 4),
            other_flags: p.splitmode.id() - 1,
            nbytes: 0,
            cbytes: 0,
            typesize: i32::try_from(p.typesize).unwrap_or(i32::MAX),
            blocksize: i32::try_from(whole_items_blocksize(p)).unwrap_or(0),
            chunksize,
            tcomp: i16::try_from(p.nthreads).unwrap_or(i16::MAX),
            tdecomp: i16::try_from(dnthreads).unwrap_or(i16::MAX),
            has_vlmeta: false,
            nfilters: 6,
            filters,
            udcodec: compcode,
            compcode_meta: p.codec_meta,
            filters_meta,
            other_flags2: u8::from(p.use_dict),
        }
    }

    /// Position and length of the stored chunk at section offset `off`.
    ///
    /// # Errors
    /// [`Error::Corrupt`] when it does not lie inside the chunks section.
    pub fn chunk_span(&self, io: &mut dyn FrameIo, off: u64) -> Result<(u64, u64)> {
        let pos = self.chunk_pos(off)?;
        let mut hdr = [0u8; 16];
        io.read_exact_at(pos, &mut hdr)?;
        Ok((pos, self.chunk_len(off, &hdr)?))
    }

    /// The stored chunk at section offset `off` of a frame held in memory
    /// by `io` (whose [`FrameIo::slice`] answers): [`FrameHeader::chunk_span`]
    /// and the bytes, borrowed, with no copy of its header.
    ///
    /// # Errors
    /// As [`FrameHeader::chunk_span`]; an I/O error (unexpected end) when
    /// `io` does not hold it.
    // Inlined into the super-chunk's chunk read (its one caller): out of
    // line, its `Result` came back through memory.
    #[inline(always)]
    pub(crate) fn chunk_in<'a>(&self, io: &'a dyn FrameIo, off: u64) -> Result<&'a [u8]> {
        let pos = self.chunk_pos(off)?;
        let end = || std::io::Error::from(std::io::ErrorKind::UnexpectedEof);
        // All the bytes in one call when the storage gives them.
        let all = io.bytes();
        let at = |len: usize| match all {
            Some(all) => super::io::part(all, pos, len),
            None => io.slice(pos, len),
        };
        let hdr: &[u8; 16] = at(16).ok_or_else(end)?.try_into().unwrap();
        let len = self.chunk_len(off, hdr)?;
        Ok(at(len as usize).ok_or_else(end)?)
    }

    /// Where in the frame the chunk at section offset `off` starts.
    #[inline(always)]
    fn chunk_pos(&self, off: u64) -> Result<u64> {
        let cbytes = self.cbytes as u64;
        if cbytes < 32 || off > cbytes - 32 {
            return Err(corrupt(format!(
                "chunk offset {off} outside cbytes {cbytes}"
            )));
        }
        Ok(u64::from(self.header_len) + off)
    }

    /// The length of the chunk at section offset `off` whose header's
    /// first 16 bytes are `hdr`.
    #[inline(always)]
    fn chunk_len(&self, off: u64, hdr: &[u8; 16]) -> Result<u64> {
        let cbytes = self.cbytes as u64;
        let cb = u64::from(u32::from_le_bytes([hdr[12], hdr[13], hdr[14], hdr[15]]));
        if cb < 32 || cb > i32::MAX as u64 || off + cb > cbytes {
            return Err(corrupt(format!(
                "chunk at {off} of {cb} bytes runs outside the {cbytes}-byte section"
            )));
        }
        Ok(cb)
    }

    /// Frame format version (general_flags bits 0-3).
    pub fn version(&self) -> u8 {
        self.general_flags & 0x0f
    }
    /// Codec id (the nibble, or `udcodec` when it is 6).
    pub fn compcode(&self) -> u8 {
        let c = self.codec_flags & 0x0f;
        if c >= 6 { self.udcodec } else { c }
    }
    /// Compression level.
    pub fn clevel(&self) -> u8 {
        self.codec_flags >> 4
    }
    /// Split mode from `other_flags`.
    pub fn splitmode(&self) -> SplitMode {
        match self.other_flags & 3 {
            0 => SplitMode::Always,
            1 => SplitMode::Never,
            2 => SplitMode::Auto,
            _ => SplitMode::ForwardCompat,
        }
    }
    /// Whether the writer used a dictionary.
    pub fn use_dict(&self) -> bool {
        self.other_flags2 & 1 != 0
    }

    /// The compression parameters the header records (what later appends
    /// use by default). Unknown codecs and filters fall back to the
    /// defaults; `nthreads` comes from `tcomp` (at least 1).
    pub fn cparams(&self) -> CParams {
        let mut p = CParams::default();
        if let Some(c) = Codec::from_id(self.compcode()) {
            p.codec = c;
        }
        p.clevel = self.clevel().min(9);
        p.codec_meta = self.compcode_meta;
        // Over 255 too (chunk headers then record 1): the frame's own size.
        p.typesize = usize::try_from(self.typesize).unwrap_or(1).max(1);
        p.blocksize = usize::try_from(self.blocksize).unwrap_or(0);
        p.splitmode = self.splitmode();
        p.use_dict = self.use_dict();
        p.nthreads = usize::try_from(self.tcomp).unwrap_or(1).max(1);
        p.filters = [None; 6];
        p.filters_meta = self.filters_meta;
        for i in 0..6 {
            p.filters[i] = Filter::from_id(self.filters[i], self.filters_meta[i]);
        }
        p
    }

    /// Encode the fixed 87 bytes (current edition).
    pub fn encode_fixed(&self) -> [u8; HEADER_FIXED_LEN] {
        let mut b = [0u8; HEADER_FIXED_LEN];
        b[0] = 0x9e;
        b[1] = 0xa8;
        b[2..10].copy_from_slice(MAGIC);
        b[10] = 0xd2;
        b[11..15].copy_from_slice(&self.header_len.to_be_bytes());
        b[15] = 0xcf;
        b[16..24].copy_from_slice(&self.frame_len.to_be_bytes());
        b[24] = 0xa4;
        b[25] = self.general_flags;
        b[26] = match self.kind {
            FrameKind::Contiguous => 0,
            FrameKind::Sparse => 1,
        };
        b[27] = self.codec_flags;
        b[28] = self.other_flags;
        b[29] = 0xd3;
        b[30..38].copy_from_slice(&self.nbytes.to_be_bytes());
        b[38] = 0xd3;
        b[39..47].copy_from_slice(&self.cbytes.to_be_bytes());
        b[47] = 0xd2;
        b[48..52].copy_from_slice(&self.typesize.to_be_bytes());
        b[52] = 0xd2;
        b[53..57].copy_from_slice(&self.blocksize.to_be_bytes());
        b[57] = 0xd2;
        b[58..62].copy_from_slice(&self.chunksize.to_be_bytes());
        b[62] = 0xd1;
        b[63..65].copy_from_slice(&self.tcomp.to_be_bytes());
        b[65] = 0xd1;
        b[66..68].copy_from_slice(&self.tdecomp.to_be_bytes());
        b[68] = if self.has_vlmeta { 0xc3 } else { 0xc2 };
        b[69] = 0xd8;
        b[70] = self.nfilters;
        b[71..77].copy_from_slice(&self.filters);
        b[77] = self.udcodec;
        b[78] = self.compcode_meta;
        b[79..85].copy_from_slice(&self.filters_meta);
        b[85] = self.other_flags2;
        b[86] = 0;
        b
    }

    /// Parse and check the fixed part at the start of `b` (at least 82 or
    /// 87 bytes, per the edition byte).
    ///
    /// # Errors
    /// [`Error::Truncated`] or [`Error::InvalidHeader`].
    pub fn parse_fixed(b: &[u8]) -> Result<FrameHeader> {
        if b.len() < HEADER_FIXED_LEN_V1 {
            return Err(Error::Truncated {
                what: "frame header",
                needed: HEADER_FIXED_LEN_V1,
                available: b.len(),
            });
        }
        let edition = match b[0] {
            0x9e => Edition::Current,
            0x9d => Edition::First,
            x => {
                return Err(invalid_header(format!(
                    "frame header starts with {x:#04x}, not 0x9e"
                )));
            }
        };
        let need = match edition {
            Edition::Current => HEADER_FIXED_LEN,
            Edition::First => HEADER_FIXED_LEN_V1,
        };
        if b.len() < need {
            return Err(Error::Truncated {
                what: "frame header",
                needed: need,
                available: b.len(),
            });
        }
        if !is_frame(b) {
            return Err(invalid_header("frame magic is not b2frame"));
        }
        let marker = |o: usize, m: u8, what: &str| -> Result<()> {
            if b[o] == m {
                Ok(())
            } else {
                Err(invalid_header(format!(
                    "frame header: {what} marker at {o} is {:#04x}, not {m:#04x}",
                    b[o]
                )))
            }
        };
        marker(10, 0xd2, "header_len")?;
        marker(15, 0xcf, "frame_len")?;
        marker(24, 0xa4, "flags")?;
        marker(29, 0xd3, "nbytes")?;
        marker(38, 0xd3, "cbytes")?;
        marker(47, 0xd2, "typesize")?;
        let be32 = |o: usize| i32::from_be_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
        let be16 = |o: usize| i16::from_be_bytes([b[o], b[o + 1]]);
        let be64 = |o: usize| {
            let mut x = [0u8; 8];
            x.copy_from_slice(&b[o..o + 8]);
            x
        };
        let header_len = be32(11);
        let general_flags = b[25];
        let kind = match (edition, b[26]) {
            (Edition::First, _) | (_, 0) => FrameKind::Contiguous,
            (_, 1) => FrameKind::Sparse,
            (_, t) => return Err(invalid_header(format!("unknown frame type {t}"))),
        };
        let version = general_flags & 0x0f;
        match edition {
            Edition::Current if !(1..=3).contains(&version) => {
                return Err(Error::Unsupported(format!(
                    "frame format version {version}"
                )));
            }
            Edition::First if version != 1 => {
                return Err(Error::Unsupported(format!(
                    "first-edition frame with format version {version}"
                )));
            }
            _ => {}
        }
        if (general_flags >> 4) & 3 != 1 {
            return Err(Error::Unsupported(format!(
                "frame offsets of width code {} (only 64-bit exists)",
                (general_flags >> 4) & 3
            )));
        }
        // Offsets of the fields after typesize, per edition.
        let (o_bs, o_cs, o_tc, o_td, o_vl, o_ext) = match edition {
            Edition::Current => (Some(53), 58, 63, 66, 68, 69),
            Edition::First => (None, 53, 58, 61, 63, 64),
        };
        if let Some(o) = o_bs {
            marker(o - 1, 0xd2, "blocksize")?;
        }
        marker(o_cs - 1, 0xd2, "chunksize")?;
        marker(o_tc - 1, 0xd1, "tcomp")?;
        marker(o_td - 1, 0xd1, "tdecomp")?;
        marker(o_ext, 0xd8, "filter pipeline")?;
        let has_vlmeta = match b[o_vl] {
            0xc2 => false,
            0xc3 => true,
            x => {
                return Err(invalid_header(format!(
                    "frame header: bool marker {x:#04x}"
                )));
            }
        };
        let nfilters = b[o_ext + 1];
        if nfilters > 6 {
            return Err(invalid_header(format!(
                "{nfilters} filter slots (at most 6)"
            )));
        }
        let p = o_ext + 2;
        let mut filters = [0u8; 6];
        filters.copy_from_slice(&b[p..p + 6]);
        let mut filters_meta = [0u8; 6];
        filters_meta.copy_from_slice(&b[p + 8..p + 14]);
        let (udcodec, compcode_meta, other_flags2) = match edition {
            Edition::Current => (b[77], b[78], b[85]),
            Edition::First => (b[27] & 0x0f, 0, 0),
        };
        let h = FrameHeader {
            edition,
            header_len: u32::try_from(header_len)
                .map_err(|_| invalid_header(format!("negative header_len {header_len}")))?,
            frame_len: u64::from_be_bytes(be64(16)),
            general_flags,
            kind,
            codec_flags: b[27],
            other_flags: b[28],
            nbytes: i64::from_be_bytes(be64(30)),
            cbytes: i64::from_be_bytes(be64(39)),
            typesize: be32(48),
            blocksize: o_bs.map_or(0, be32),
            chunksize: be32(o_cs),
            tcomp: be16(o_tc),
            tdecomp: be16(o_td),
            has_vlmeta,
            nfilters,
            filters,
            udcodec,
            compcode_meta,
            filters_meta,
            other_flags2,
        };
        if (h.header_len as usize) < need {
            return Err(invalid_header(format!(
                "header_len {} < {need}",
                h.header_len
            )));
        }
        if h.frame_len < u64::from(h.header_len) {
            return Err(invalid_header(format!(
                "header_len {} > frame_len {}",
                h.header_len, h.frame_len
            )));
        }
        if h.typesize <= 0 {
            return Err(invalid_header(format!("typesize {}", h.typesize)));
        }
        if h.nbytes < 0 || h.cbytes < 0 {
            return Err(invalid_header("negative nbytes or cbytes"));
        }
        if h.blocksize < 0 {
            return Err(invalid_header(format!("blocksize {}", h.blocksize)));
        }
        if h.chunksize < -1 {
            return Err(invalid_header(format!("chunksize {}", h.chunksize)));
        }
        Ok(h)
    }

    pub(super) fn fixed_len(&self) -> usize {
        match self.edition {
            Edition::Current => HEADER_FIXED_LEN,
            Edition::First => HEADER_FIXED_LEN_V1,
        }
    }
}

/// Whether `data` starts like a Blosc2 contiguous frame: a msgpack array
/// marker, then the fixstr `"b2frame\0"` ([`MAGIC`]). Ten bytes are enough
/// to tell; fewer are no frame. Only the magic is looked at:
/// [`FrameHeader::parse`](crate::frame::FrameHeader) checks the rest.
///
/// ```
/// let frame = oxiblosc::SChunk::builder().build_memory().unwrap().to_cframe().unwrap();
/// assert!(oxiblosc::frame::is_frame(&frame));
/// assert!(!oxiblosc::frame::is_frame(b"blpk"));
/// ```
pub fn is_frame(data: &[u8]) -> bool {
    data.len() >= 10 && data[1] == 0xa8 && &data[2..10] == MAGIC
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::CParams;
    use crate::schunk::SChunk;
    use std::io;

    /// A frame in memory that lends its bytes only through
    /// [`FrameIo::slice`] (as an implementation outside this crate may):
    /// [`SliceIo`](crate::frame::io::SliceIo) without `bytes`.
    struct SliceOnly<'a>(crate::frame::io::SliceIo<'a>);

    impl FrameIo for SliceOnly<'_> {
        fn storage_len(&mut self) -> io::Result<u64> {
            self.0.storage_len()
        }
        fn read_exact_at(&mut self, pos: u64, buf: &mut [u8]) -> io::Result<()> {
            self.0.read_exact_at(pos, buf)
        }
        fn write_all_at(&mut self, pos: u64, data: &[u8]) -> io::Result<()> {
            self.0.write_all_at(pos, data)
        }
        fn set_len(&mut self, len: u64) -> io::Result<()> {
            self.0.set_len(len)
        }
        fn sync(&mut self) -> io::Result<()> {
            Ok(())
        }
        fn is_persistent(&self) -> bool {
            false
        }
        fn slice(&self, pos: u64, len: usize) -> Option<&[u8]> {
            self.0.slice(pos, len)
        }
    }

    /// A chunk read in place takes the same bytes whether the storage lends
    /// them all at once ([`FrameIo::bytes`]) or piece by piece, the bytes
    /// the super-chunk hands out; offsets outside the section fail alike.
    #[test]
    fn chunk_in_reads_the_same_bytes_through_bytes_and_slice() {
        let mut sc = SChunk::new(CParams::default().typesize(4)).unwrap();
        for k in 0..3u32 {
            let data: Vec<u8> = (0..1000u32)
                .flat_map(|i| (i * (k + 1)).to_le_bytes())
                .collect();
            sc.append_buffer(&data).unwrap();
        }
        let frame = sc.to_cframe().unwrap();
        let header = FrameHeader::parse_fixed(&frame).unwrap();
        let whole: &dyn FrameIo = &frame;
        assert!(whole.bytes().is_some());
        let pieces = SliceOnly(crate::frame::io::SliceIo(&frame));
        assert!(pieces.bytes().is_none());
        for i in 0..3 {
            let loc = sc.chunk_info(i).unwrap().location.unwrap();
            let a = header.chunk_in(whole, loc).unwrap();
            let b = header.chunk_in(&pieces, loc).unwrap();
            assert_eq!(a, b);
            assert_eq!(a, &*sc.get_chunk(i).unwrap());
        }
        for bad in [header.cbytes as u64, u64::MAX, header.cbytes as u64 - 31] {
            assert!(header.chunk_in(whole, bad).is_err());
            assert!(header.chunk_in(&pieces, bad).is_err());
        }
        // A storage that ends inside a chunk (its header there, its bytes
        // not): an error, not a panic.
        let loc = sc.chunk_info(2).unwrap().location.unwrap();
        let cut = &frame[..header.header_len as usize + loc as usize + 20];
        let short: &dyn FrameIo = &crate::frame::io::SliceIo(cut);
        assert!(header.chunk_in(short, loc).is_err());
        assert!(
            header
                .chunk_in(&SliceOnly(crate::frame::io::SliceIo(cut)), loc)
                .is_err()
        );
    }
}
