//! Any valid parameters and data compress, and decompress back equal
//! (serially and in parallel); getitem agrees. The same data cut into
//! VL blocks (`chunk::vl_compress`) comes back block by block. Since
//! session 18 the data also goes, with the same parameters and a chunk
//! size from the input, through one container picked by the input: a
//! super-chunk in memory (then its frame reopened), the streaming frame
//! encoder and decoder, a packed super-chunk, or a Bloscpack file (`pack`,
//! and since session 31 the streaming `Encoder`, which must write the same
//! bytes, and `Decoder`); each must give the data back.
#![no_main]
use libfuzzer_sys::fuzz_target;
use oxiblosc::{CParams, DParams, Decompressor};

#[path = "roundtrip_input.rs"]
mod roundtrip_input;
use roundtrip_input::Input;

fuzz_target!(
    init: {
        // Every chunk of two blocks or more goes to the pool when nthreads
        // > 1 (the library runs chunks under 128 KiB inline, and inputs
        // here are a few KB): the parallel encoder and decoder are fuzzed
        // on every input that asks for threads. Set before any thread runs.
        // SAFETY: no other thread exists yet to read the environment.
        unsafe { std::env::set_var("OXIBLOSC_INLINE_BELOW", "0") }
    },
    |inp: Input| {
        let mut inp = inp;
        inp.tile_data();
        let p = inp.params();
        let lossy = inp.lossy();
        let chunksize = p.typesize * (usize::from(inp.chunk) % 512 + 1);
        containers(&inp.data, &p, chunksize, inp.container, lossy);
        let chunk = match oxiblosc::compress(&inp.data, &p) {
            Ok(c) => c,
            Err(oxiblosc::Error::InvalidParam(_) | oxiblosc::Error::Unsupported(_)) => return,
            Err(e) => panic!("{p:?}: {e}"),
        };
        assert!(chunk.len() <= inp.data.len() + oxiblosc::MAX_OVERHEAD);
        if p.nthreads > 1 {
            same_as_serial(&inp.data, &p, &chunk, usize::from(inp.chunk));
        }
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
    }
);

/// The chunk `p` (more than one thread) made of `data` is the one thread's
/// chunk byte for byte, and so is the result with `room` (any size up to
/// the input's plus the most a chunk adds) of the caller's room, bounded
/// (`compress_into`) and all of it (`compress_into_all_room`): the same
/// bytes, or the same error.
fn same_as_serial(data: &[u8], p: &CParams, chunk: &[u8], room: usize) {
    let serial = p.clone().nthreads(1);
    assert!(
        oxiblosc::compress(data, &serial).unwrap() == chunk,
        "{p:?}: not the serial chunk"
    );
    let room = room % (data.len() + oxiblosc::MAX_OVERHEAD + 64 + 1);
    let run = |p: &CParams, all: bool| {
        let mut c = oxiblosc::Compressor::new(p.clone());
        let mut out = vec![0u8; room];
        let r = if all {
            c.compress_into_all_room(data, &mut out)
        } else {
            c.compress_into(data, &mut out)
        };
        r.map(|n| out[..n].to_vec()).map_err(|e| e.to_string())
    };
    for all in [false, true] {
        assert_eq!(
            run(p, all),
            run(&serial, all),
            "{p:?} room {room} all {all}: not the serial result"
        );
    }
}

/// The data through the container `which` picks, with `p` and chunks of
/// `chunksize` bytes: it must come back (its length only when `lossy`).
/// Parameters a container refuses (`InvalidParam`, `Unsupported`) end the
/// check.
fn containers(data: &[u8], p: &CParams, chunksize: usize, which: u8, lossy: bool) {
    use oxiblosc::Error::{InvalidParam, Unsupported};
    use std::io::{Read, Write};
    let same = |what: &str, got: &[u8]| {
        assert_eq!(got.len(), data.len(), "{what} {p:?} chunksize {chunksize}");
        if !lossy {
            assert!(got == data, "{what} {p:?} chunksize {chunksize}");
        }
    };
    match which % 4 {
        0 => {
            let built = oxiblosc::SChunk::builder()
                .cparams(p.clone())
                .chunksize(chunksize)
                .build_memory();
            let mut sc = match built {
                Ok(sc) => sc,
                Err(InvalidParam(_) | Unsupported(_)) => return,
                Err(e) => panic!("SChunk {p:?}: {e}"),
            };
            for part in data.chunks(chunksize) {
                match sc.append_buffer(part) {
                    Ok(_) => {}
                    Err(InvalidParam(_) | Unsupported(_)) => return,
                    Err(e) => panic!("append {p:?}: {e}"),
                }
            }
            assert_eq!(sc.nbytes(), data.len() as u64);
            same("get_slice", &sc.get_slice(0, data.len() as u64).unwrap());
            if !lossy && data.len() > 2 {
                // A range across chunk edges, read block-masked.
                let (a, b) = (chunksize / 3 % data.len(), data.len() - 1);
                if a < b {
                    let got = sc.get_slice(a as u64, b as u64).unwrap();
                    assert!(
                        got == data[a..b],
                        "get_slice {a}..{b} {p:?} chunksize {chunksize}"
                    );
                }
            }
            let frame = sc.to_cframe().unwrap();
            let mut back = oxiblosc::SChunk::from_cframe(frame).unwrap();
            assert_eq!(back.nchunks(), sc.nchunks());
            let mut all = Vec::new();
            for i in 0..back.nchunks() {
                all.extend(back.decompress_chunk_vec(i).unwrap());
            }
            same("reopened frame", &all);
        }
        1 => {
            let mut enc =
                match oxiblosc::stream::FrameEncoder::new(Vec::new(), p.clone(), chunksize) {
                    Ok(e) => e,
                    Err(InvalidParam(_) | Unsupported(_)) => return,
                    Err(e) => panic!("FrameEncoder {p:?}: {e}"),
                };
            enc.write_all(data)
                .unwrap_or_else(|e| panic!("FrameEncoder {p:?}: {e}"));
            let frame = enc
                .finish()
                .unwrap_or_else(|e| panic!("FrameEncoder {p:?}: {e}"));
            let mut got = Vec::new();
            oxiblosc::stream::FrameDecoder::new(&frame[..])
                .unwrap()
                .read_to_end(&mut got)
                .unwrap();
            same("FrameDecoder", &got);
            let mut sc = oxiblosc::SChunk::from_cframe(frame).unwrap();
            let mut all = Vec::new();
            for i in 0..sc.nchunks() {
                all.extend(sc.decompress_chunk_vec(i).unwrap());
            }
            same("streamed frame", &all);
        }
        2 => {
            let packed = match oxiblosc::packed::pack(data, p, chunksize) {
                Ok(b) => b,
                Err(InvalidParam(_) | Unsupported(_)) => return,
                Err(e) => panic!("packed {p:?}: {e}"),
            };
            same("packed", &oxiblosc::packed::unpack(&packed).unwrap());
        }
        _ => {
            use oxiblosc::bloscpack::{self, Checksum, Options};
            let opts = Options::default()
                .cparams(p.clone())
                .chunk_size(chunksize)
                .checksum(if chunksize.is_multiple_of(2) {
                    Checksum::Adler32
                } else {
                    Checksum::None
                });
            let blp = match bloscpack::pack(data, &opts) {
                Ok(b) => b,
                Err(InvalidParam(_) | Unsupported(_)) => return,
                Err(e) => panic!("bloscpack {p:?}: {e}"),
            };
            same("bloscpack", &bloscpack::unpack(&blp).unwrap());
            // The streaming encoder writes pack's bytes, and the streaming
            // decoder reads them back.
            let mut enc = bloscpack::Encoder::new(Vec::new(), &opts).unwrap();
            enc.write_all(data).unwrap();
            let streamed = enc.finish().unwrap();
            assert!(streamed == blp, "bloscpack::Encoder {p:?}: other bytes");
            let mut got = Vec::new();
            bloscpack::Decoder::new(&blp[..])
                .unwrap()
                .read_to_end(&mut got)
                .unwrap();
            same("bloscpack::Decoder", &got);
        }
    }
}
