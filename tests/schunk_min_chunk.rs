//! Super-chunks store every valid chunk C-Blosc2 stores: one holding 0
//! bytes (16- or 32-byte header) and one with a 16-byte (Blosc1-style)
//! header, whose byte 30 is data, not flags2 (C-Blosc2 3.3.2's
//! test_schunk_min_header_chunk, run on our C library by capi/tests). And
//! a sparse frame C-Blosc2 wrote with such a chunk stored as it is, in a
//! 21-byte chunk file (`tests/data/cwritten/`), reads as C-Blosc2 reads it.

use oxiblosc::schunk::OpenOptions;
use oxiblosc::{CParams, SChunk, compress};

mod support;

fn le(v: i32) -> [u8; 4] {
    v.to_le_bytes()
}

/// A memcpyed chunk with a 16-byte header (no extended header) and
/// `payload` bytes after it; byte 30 (flags2 in a 32-byte header) set to
/// the VL-blocks bit when the payload reaches it.
fn blosc1_style(payload: usize) -> Vec<u8> {
    let mut c = vec![0u8; 16 + payload];
    c[0] = 5; // BLOSC2_VERSION_FORMAT
    c[1] = 1;
    c[2] = 0x02; // BLOSC_MEMCPYED, not shuffle+bitshuffle: 16-byte header
    c[3] = 1;
    c[4..8].copy_from_slice(&le(payload as i32));
    c[8..12].copy_from_slice(&le(payload.max(1) as i32));
    c[12..16].copy_from_slice(&le((16 + payload) as i32));
    if payload >= 16 {
        c[30] = 0x01; // BLOSC2_VL_BLOCKS, as data
    }
    c
}

fn reopened(sc: &mut SChunk) -> SChunk {
    SChunk::from_cframe(sc.to_cframe().unwrap()).unwrap()
}

#[test]
fn empty_chunks_append_insert_and_update_as_in_c() {
    let mut sc = SChunk::new(CParams::default()).unwrap();
    assert_eq!(sc.append_chunk(&blosc1_style(0)).unwrap(), 1);
    assert_eq!(sc.append_chunk(&blosc1_style(0)).unwrap(), 2);
    sc.update_chunk(0, &blosc1_style(0)).unwrap();
    sc.insert_chunk(1, &blosc1_style(0)).unwrap();
    // A 32-byte-header chunk of 0 bytes, as our compressor writes it.
    let empty32 = compress(&[], &CParams::default()).unwrap();
    assert_eq!(empty32.len(), 32);
    assert_eq!(sc.append_chunk(&empty32).unwrap(), 4);
    assert_eq!(sc.nchunks(), 4);
    assert_eq!(sc.nbytes(), 0);
    // A b2frame derives its chunk count from nbytes when nbytes is 0 (as
    // C-Blosc2's frame reader does): a frame of empty chunks would reopen
    // empty, so it is not written (C-Blosc2's `to_buffer` refuses it too;
    // until session 46 ours wrote it and the chunks were lost on reopen).
    assert!(matches!(
        sc.to_cframe(),
        Err(oxiblosc::Error::InvalidParam(_))
    ));
    assert_eq!(sc.nchunks(), 4);
    // With data beside them, every chunk survives a reopen.
    let data: Vec<u8> = (0..100u8).collect();
    let p = CParams::default().typesize(1);
    assert_eq!(sc.append_chunk(&compress(&data, &p).unwrap()).unwrap(), 5);
    assert_eq!(sc.nbytes(), 100);
    let mut back = reopened(&mut sc);
    for s in [&mut sc, &mut back] {
        assert_eq!(s.nchunks(), 5);
        for i in 0..4 {
            assert_eq!(s.decompress_chunk_vec(i).unwrap(), Vec::<u8>::new());
            assert_eq!(s.decompress_chunk(i, &mut []).unwrap(), 0);
        }
        assert_eq!(s.decompress_chunk_vec(4).unwrap(), data);
    }
    // The 16-byte chunk is stored as the 32-byte chunk of the same (no)
    // bytes: frames hold chunks of at least a Blosc2 header.
    assert_eq!(sc.get_chunk(0).unwrap().len(), 32);
}

#[test]
fn a_16_byte_header_never_contributes_flags2() {
    let decoy = blosc1_style(24);
    let mut sc = SChunk::new(CParams::default()).unwrap();
    assert_eq!(sc.append_chunk(&decoy).unwrap(), 1);
    // Not taken for a VL-block chunk, so a second regular chunk mixes fine.
    assert_eq!(sc.frame_header().general_flags & 0x80, 0);
    assert_eq!(sc.append_chunk(&decoy).unwrap(), 2);
    let mut payload = vec![0u8; 24];
    payload[30 - 16] = 0x01;
    let mut back = reopened(&mut sc);
    for s in [&mut sc, &mut back] {
        assert_eq!(s.nbytes(), 48);
        for i in 0..2 {
            assert_eq!(s.decompress_chunk_vec(i).unwrap(), payload);
        }
    }
}

#[test]
fn malformed_chunks_are_still_refused() {
    let mut sc = SChunk::new(CParams::default()).unwrap();
    let c = blosc1_style(0);
    // cbytes says 16, 15 given; 17 given.
    assert!(sc.append_chunk(&c[..15]).is_err());
    let mut long = c.clone();
    long.push(0);
    assert!(sc.append_chunk(&long).is_err());
    // A memcpyed chunk whose cbytes does not cover its nbytes.
    let mut short = blosc1_style(8);
    short[4..8].copy_from_slice(&le(9));
    assert!(sc.append_chunk(&short).is_err());
    assert_eq!(sc.nchunks(), 0);
}

/// The directory C-Blosc2 wrote: chunk 0 `world` (a Blosc2 chunk), chunk
/// 1 `hello` (C-Blosc 1.x's 21-byte chunk, stored as it is). We refused
/// chunk files under 32 bytes; C-Blosc2 reads this one.
#[test]
fn a_sparse_frame_c_wrote_with_a_blosc1_chunk_file_reads_edits_and_converts() {
    let src = support::repo().join("tests/data/cwritten/sframe-blosc1-chunk");
    assert_eq!(
        std::fs::metadata(src.join("00000001.chunk")).unwrap().len(),
        21
    );
    let mut sc = OpenOptions::new().read_only(true).open(&src).unwrap();
    assert_eq!(sc.nchunks(), 2);
    assert_eq!(sc.decompress_chunk_vec(0).unwrap(), b"world");
    assert_eq!(sc.decompress_chunk_vec(1).unwrap(), b"hello");
    assert_eq!(sc.get_slice(3, 7).unwrap(), b"ldhe");
    // As a contiguous frame: the short chunk is stored widened (frames
    // need 32 bytes after a chunk's offset), and the frame reopens.
    let mut again = reopened(&mut sc);
    assert_eq!(again.decompress_chunk_vec(1).unwrap(), b"hello");
    assert_eq!(again.get_slice(0, 10).unwrap(), b"worldhello");
    // A copy edited: the short chunk file stays readable beside new ones.
    let dir = support::tempdir("sframe-blosc1-chunk").join("a");
    std::fs::create_dir_all(&dir).unwrap();
    for f in std::fs::read_dir(&src).unwrap() {
        let f = f.unwrap();
        std::fs::copy(f.path(), dir.join(f.file_name())).unwrap();
    }
    let mut w = SChunk::open(&dir).unwrap();
    w.append_buffer(b"again").unwrap();
    w.update_chunk(
        0,
        &compress(b"WORLD", &CParams::default().typesize(1)).unwrap(),
    )
    .unwrap();
    drop(w);
    let mut r = OpenOptions::new().read_only(true).open(&dir).unwrap();
    assert_eq!(r.get_slice(0, 15).unwrap(), b"WORLDhelloagain");
    assert_eq!(
        reopened(&mut r).get_slice(0, 15).unwrap(),
        b"WORLDhelloagain"
    );
}
