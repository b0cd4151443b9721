//! Any valid parameters and data compress, and decompress back equal
//! (serially and in parallel); getitem agrees. The same data cut into
//! VL blocks (`chunk::vl_compress`) comes back block by block.
#![no_main]
use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use oxiblosc::{CParams, ChunkFormat, Codec, DParams, Decompressor, Filter, SplitMode};

#[derive(Arbitrary, Debug)]
struct Input {
    codec: u8,
    clevel: u8,
    typesize: u8,
    filters: [u8; 3],
    filter_meta: u8,
    blocksize: u16,
    splitmode: u8,
    nthreads: u8,
    blosc1: bool,
    use_dict: bool,
    data: Vec<u8>,
}

fuzz_target!(|inp: Input| {
    let codec = [
        Codec::BloscLz,
        Codec::Lz4,
        Codec::Lz4Hc,
        Codec::Zlib,
        Codec::Zstd,
    ][usize::from(inp.codec) % 5];
    let filters: Vec<Filter> = inp
        .filters
        .iter()
        .filter_map(|&f| match f % 8 {
            1 => Some(Filter::Shuffle),
            2 => Some(Filter::BitShuffle),
            3 => Some(Filter::Delta),
            4 => Some(Filter::ByteDelta),
            5 => Some(Filter::TruncPrec(inp.filter_meta % 24)),
            _ => None,
        })
        .collect();
    let split = [
        SplitMode::Always,
        SplitMode::Never,
        SplitMode::Auto,
        SplitMode::ForwardCompat,
    ][usize::from(inp.splitmode) % 4];
    let mut p = CParams::default()
        .codec(codec)
        .clevel(inp.clevel % 10)
        .typesize(usize::from(inp.typesize).max(1))
        .filters(&filters)
        .blocksize(usize::from(inp.blocksize))
        .splitmode(split)
        .nthreads(usize::from(inp.nthreads % 3) + 1)
        .use_dict(inp.use_dict);
    if inp.blosc1 {
        p = p.format(ChunkFormat::Blosc1);
    }
    let lossy = filters.iter().any(|f| matches!(f, Filter::TruncPrec(_)));
    let chunk = match oxiblosc::compress(&inp.data, &p) {
        Ok(c) => c,
        Err(oxiblosc::Error::InvalidParam(_) | oxiblosc::Error::Unsupported(_)) => return,
        Err(e) => panic!("{p:?}: {e}"),
    };
    assert!(chunk.len() <= inp.data.len() + oxiblosc::MAX_OVERHEAD);
    let back = oxiblosc::decompress(&chunk).unwrap_or_else(|e| panic!("{p:?}: {e}"));
    assert_eq!(back.len(), inp.data.len());
    if !lossy {
        assert_eq!(back, inp.data, "{p:?}");
    }
    let mut d = Decompressor::new(DParams::default().nthreads(2));
    assert_eq!(d.decompress(&chunk).unwrap(), back);
    let h = oxiblosc::ChunkHeader::parse(&chunk).unwrap();
    let ts = usize::from(h.typesize);
    let items = back.len() / ts;
    if items > 1 {
        let got = oxiblosc::getitem(&chunk, 1, items - 1).unwrap();
        assert_eq!(got, back[ts..items * ts]);
    }
    if !inp.blosc1 && !inp.data.is_empty() {
        let cut = usize::from(inp.blocksize) % 1000 + 1;
        let blocks: Vec<&[u8]> = inp.data.chunks(cut).collect();
        let vl = match oxiblosc::chunk::vl_compress(&blocks, &p) {
            Ok(c) => c,
            Err(oxiblosc::Error::InvalidParam(_) | oxiblosc::Error::Unsupported(_)) => return,
            Err(e) => panic!("VL {p:?}: {e}"),
        };
        let got = d.vl_blocks(&vl).unwrap_or_else(|e| panic!("VL {p:?}: {e}"));
        assert_eq!(got.len(), blocks.len());
        for (g, b) in got.iter().zip(&blocks) {
            assert_eq!(g.len(), b.len());
            if !lossy {
                assert_eq!(g, b, "VL {p:?}");
            }
        }
        assert_eq!(d.decompress(&vl).unwrap(), got.concat());
    }
});
