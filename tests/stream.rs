//! The stream adapters (`oxiblosc::stream`) and the super-chunk iterators:
//! round trips at the chunk-size edges, frames the encoder writes opened by
//! `SChunk` / `Frame` and by python-blosc2 (C-Blosc2 3.3.5), frames
//! python-blosc2 and C-Blosc2 wrote read by the decoder, the inner writer's
//! errors propagated, and cut or corrupt streams ending in an `Err`.

mod support;

use std::io::{self, Cursor, Read, Write};

use oxiblosc::stream::{ChunkDecoder, ChunkEncoder, FrameDecoder, FrameEncoder};
use oxiblosc::{CParams, Codec, DParams, Filter, Frame, SChunk};
use support::data;

const CS: usize = 1000;

/// The sizes that matter for a chunk size of `CS`.
fn sizes() -> Vec<usize> {
    vec![
        0,
        1,
        CS - 1,
        CS,
        CS + 1,
        2 * CS,
        3 * CS - 1,
        3 * CS + 7,
        10 * CS + 3,
    ]
}

fn params() -> CParams {
    CParams::default()
        .codec(Codec::Lz4)
        .typesize(4)
        .filters(&[Filter::Shuffle])
}

/// A reader that hands out at most `n` bytes per call (a pipe's short reads).
struct Trickle<R>(R, usize);

impl<R: Read> Read for Trickle<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = buf.len().min(self.1);
        self.0.read(&mut buf[..n])
    }
}

/// Write `input` in uneven pieces.
fn write_pieces(w: &mut impl Write, input: &[u8]) {
    let mut at = 0;
    let mut k = 1;
    while at < input.len() {
        let n = (k * 37 % 1500).min(input.len() - at);
        w.write_all(&input[at..at + n]).unwrap();
        at += n;
        k += 1;
    }
}

fn decode_frame_stream(frame: &[u8]) -> io::Result<Vec<u8>> {
    let mut dec = FrameDecoder::new(Trickle(frame, 333)).map_err(io::Error::from)?;
    let mut out = Vec::new();
    dec.read_to_end(&mut out)?;
    Ok(out)
}

fn check_frame(frame: &[u8], input: &[u8], what: &str) {
    let cs = CS / 4 * 4;
    // The frame layer and the super-chunk layer open it.
    let f = Frame::parse(frame).unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(f.nchunks(), input.len().div_ceil(cs), "{what}: nchunks");
    assert_eq!(f.header.nbytes, input.len() as i64, "{what}");
    let mut sc = SChunk::from_cframe(frame.to_vec()).unwrap();
    let all = sc.get_slice(0, input.len() as u64).unwrap();
    assert!(all == input, "{what}: SChunk content");
    // The decoder, through short reads, and through its pipeline.
    assert!(
        decode_frame_stream(frame).unwrap() == input,
        "{what}: decoder"
    );
    let mut dec = FrameDecoder::with_params(frame, DParams::default().nthreads(2)).unwrap();
    let mut piped = Vec::new();
    let n = dec.copy_to(&mut piped).unwrap();
    assert_eq!(n, input.len() as u64);
    assert!(piped == input, "{what}: decoder pipeline");
    assert_eq!(dec.frame().unwrap().nchunks(), f.nchunks());
}

#[test]
fn frame_round_trips_at_chunk_size_edges() {
    for n in sizes() {
        let input = data(n, n as u32);
        // Spooled into any writer, written in uneven pieces.
        let mut enc = FrameEncoder::new(Vec::new(), params(), CS).unwrap();
        assert_eq!(enc.chunksize(), CS / 4 * 4);
        write_pieces(&mut enc, &input);
        let spooled = enc.finish().unwrap();
        check_frame(&spooled, &input, &format!("spooled {n}"));
        // Seekable, after a prefix the frame must not touch, through the
        // pipeline.
        let mut cur = Cursor::new(b"prefix".to_vec());
        cur.set_position(6);
        let mut enc = FrameEncoder::new_seekable(cur, params(), CS).unwrap();
        assert_eq!(enc.copy_from(&input[..]).unwrap(), n as u64);
        let seek = enc.finish().unwrap().into_inner();
        assert_eq!(&seek[..6], b"prefix");
        check_frame(&seek[6..], &input, &format!("seekable {n}"));
        // Both ways give the same frame.
        assert!(seek[6..] == spooled[..], "{n}: seekable and spooled differ");
    }
}

/// Blosc1 parameters compress a few bytes into a chunk shorter than a
/// 32-byte header; frame readers (ours and C-Blosc2's) refuse such a
/// chunk at the end of the chunks section, so the encoder stores it as the
/// Blosc2 chunk of its bytes, as super-chunks do (found by the `roundtrip`
/// fuzz target's container round trip).
#[test]
fn blosc1_chunks_of_a_few_bytes_give_frames_that_reopen() {
    let p = CParams::default()
        .typesize(4)
        .filters(&[Filter::BitShuffle])
        .format(oxiblosc::ChunkFormat::Blosc1);
    for input in [
        vec![255, 255, 255, 255, 103, 103, 103, 255],
        vec![7u8; 3],
        data(13, 5),
    ] {
        assert!(oxiblosc::compress(&input, &p).unwrap().len() < 32);
        let mut enc = FrameEncoder::new(Vec::new(), p.clone(), 4096).unwrap();
        enc.write_all(&input).unwrap();
        let spooled = enc.finish().unwrap();
        let mut enc = FrameEncoder::new_seekable(Cursor::new(Vec::new()), p.clone(), 4096).unwrap();
        enc.write_all(&input).unwrap();
        let seek = enc.finish().unwrap().into_inner();
        assert!(seek == spooled);
        let mut sc = SChunk::from_cframe(spooled.clone()).unwrap();
        assert_eq!(sc.nchunks(), 1);
        assert_eq!(sc.decompress_chunk_vec(0).unwrap(), input);
        assert_eq!(decode_frame_stream(&spooled).unwrap(), input);
    }
}

#[test]
fn write_and_copy_from_mix_and_keep_fixed_chunks() {
    let input = data(7 * CS + 5, 9);
    let mut enc = FrameEncoder::new(Vec::new(), params(), CS).unwrap();
    enc.write_all(&input[..123]).unwrap();
    enc.copy_from(&input[123..4000]).unwrap();
    enc.write_all(&input[4000..4500]).unwrap();
    enc.copy_from(Trickle(&input[4500..], 17)).unwrap();
    enc.flush().unwrap();
    let frame = enc.finish().unwrap();
    check_frame(&frame, &input, "mixed");
}

#[test]
fn chunk_sequences_round_trip_at_chunk_size_edges() {
    for n in sizes() {
        let input = data(n, 7 + n as u32);
        let mut enc = ChunkEncoder::new(Vec::new(), params(), CS).unwrap();
        write_pieces(&mut enc, &input);
        let bytes = enc.finish().unwrap();
        let mut enc = ChunkEncoder::new(Vec::new(), params(), CS).unwrap();
        enc.copy_from(Trickle(&input[..], 999)).unwrap();
        // Whole chunks so far; the short last one waits for `finish`.
        assert_eq!(enc.nchunks() as usize, input.len() / (CS / 4 * 4));
        let piped = enc.finish().unwrap();
        assert!(bytes == piped, "{n}: write and copy_from differ");
        // Every chunk decodes on its own; an empty input is one empty chunk.
        let (mut at, mut count) = (0, 0);
        while at < bytes.len() {
            let h = oxiblosc::ChunkHeader::parse(&bytes[at..]).unwrap();
            at += h.cbytes;
            count += 1;
        }
        assert_eq!(count, input.len().div_ceil(CS / 4 * 4).max(1), "{n}");
        let mut out = Vec::new();
        let mut dec = ChunkDecoder::new(Trickle(&bytes[..], 100));
        dec.read_to_end(&mut out).unwrap();
        assert!(out == input, "{n}: chunk decoder");
        assert_eq!(dec.nchunks(), count);
        let mut out = Vec::new();
        ChunkDecoder::with_params(&bytes[..], DParams::default().nthreads(2))
            .copy_to(&mut out)
            .unwrap();
        assert!(out == input, "{n}: chunk decoder pipeline");
    }
}

#[test]
fn a_big_frame_spools_to_disk_and_leaves_no_file() {
    let dir = support::tempdir("stream-spool");
    // 24 MiB of barely compressible bytes: past the 8 MiB kept in memory.
    let mut rng = support::Rng(5);
    let input: Vec<u8> = (0..24 << 20).map(|_| rng.next() as u8).collect();
    let mut enc = FrameEncoder::new(Vec::new(), params(), 1 << 20).unwrap();
    enc.spool_dir(&dir);
    enc.copy_from(&input[..]).unwrap();
    let frame = enc.finish().unwrap();
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        0,
        "spool file left"
    );
    let mut sc = SChunk::from_cframe(frame.clone()).unwrap();
    assert_eq!(sc.nchunks(), 24);
    assert!(sc.get_slice(0, input.len() as u64).unwrap() == input);
    assert!(decode_frame_stream(&frame).unwrap() == input);
    // A spool directory that does not exist is an error, not a panic.
    let mut enc = FrameEncoder::new(Vec::new(), params(), 1 << 20).unwrap();
    enc.spool_dir(dir.join("missing"));
    let e = enc.copy_from(&input[..]).unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::NotFound);
}

#[test]
fn metalayers_and_vlmetalayers_are_written() {
    let input = data(5 * CS, 3);
    let mut enc = FrameEncoder::new(Vec::new(), params(), CS).unwrap();
    enc.meta("shape", b"\x93\x01\x02\x03").unwrap();
    assert!(enc.meta("shape", b"x").is_err(), "duplicate metalayer");
    enc.vlmeta_set("note", b"\xa3one").unwrap();
    enc.write_all(&input).unwrap();
    assert!(enc.meta("late", b"x").is_err(), "metalayer after a chunk");
    enc.vlmeta_set("note", b"\xa3two").unwrap();
    enc.vlmeta_set("more", b"\xc0").unwrap();
    let frame = enc.finish().unwrap();
    let mut sc = SChunk::from_cframe(frame.clone()).unwrap();
    assert_eq!(sc.meta_get("shape"), Some(&b"\x93\x01\x02\x03"[..]));
    assert_eq!(sc.vlmeta_get("note").unwrap().unwrap(), b"\xa3two");
    assert_eq!(sc.vlmeta_get("more").unwrap().unwrap(), b"\xc0");
    let mut dec = FrameDecoder::new(&frame[..]).unwrap();
    assert!(dec.frame().is_none());
    let mut out = Vec::new();
    dec.read_to_end(&mut out).unwrap();
    assert!(out == input);
    let f = dec.frame().unwrap();
    assert_eq!(f.metalayers[0].name, "shape");
    assert_eq!(f.vlmetalayers.len(), 2);
}

/// A writer that fails once `limit` bytes have been written.
#[derive(Debug)]
struct Failing {
    written: usize,
    limit: usize,
}

impl Write for Failing {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.written + buf.len() > self.limit {
            return Err(io::Error::new(
                io::ErrorKind::StorageFull,
                "disk full (test)",
            ));
        }
        self.written += buf.len();
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[test]
fn inner_writer_errors_are_propagated() {
    let input = data(20 * CS, 4);
    for limit in [0, 10, 500, 5000] {
        // Chunk sequences: through write and through the pipeline.
        let mut enc = ChunkEncoder::new(Failing { written: 0, limit }, params(), CS).unwrap();
        let e = enc.write_all(&input).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::StorageFull, "{limit}");
        assert!(enc.write_all(b"more").is_err(), "usable after a failure");
        assert!(enc.finish().is_err());
        let mut enc = ChunkEncoder::new(Failing { written: 0, limit }, params(), CS).unwrap();
        let e = enc.copy_from(&input[..]).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::StorageFull, "{limit}");
        assert!(enc.finish().is_err());
        // Frames: the spooled one fails in finish, the seekable one at once.
        let mut enc = FrameEncoder::new(Failing { written: 0, limit }, params(), CS).unwrap();
        enc.write_all(&input).unwrap();
        assert_eq!(enc.finish().unwrap_err().kind(), io::ErrorKind::StorageFull);
        let mut enc =
            FrameEncoder::new_seekable(FailingSeek(Failing { written: 0, limit }), params(), CS)
                .unwrap();
        let e = enc.copy_from(&input[..]).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::StorageFull, "{limit}");
        assert!(enc.finish().is_err());
    }
    // The decoders pass their writer's error on too.
    let frame = {
        let mut enc = FrameEncoder::new(Vec::new(), params(), CS).unwrap();
        enc.write_all(&input).unwrap();
        enc.finish().unwrap()
    };
    let e = FrameDecoder::new(&frame[..])
        .unwrap()
        .copy_to(Failing {
            written: 0,
            limit: 3000,
        })
        .unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::StorageFull);
}

#[derive(Debug)]
struct FailingSeek(Failing);

impl Write for FailingSeek {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl io::Seek for FailingSeek {
    fn seek(&mut self, _: io::SeekFrom) -> io::Result<u64> {
        Ok(self.0.written as u64)
    }
}

/// A reader that fails after `n` bytes.
struct BrokenReader<'a>(&'a [u8], usize);

impl Read for BrokenReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.1 == 0 {
            return Err(io::Error::new(
                io::ErrorKind::ConnectionReset,
                "reset (test)",
            ));
        }
        let n = buf.len().min(self.1).min(self.0.len());
        buf[..n].copy_from_slice(&self.0[..n]);
        self.0 = &self.0[n..];
        self.1 -= n;
        Ok(n)
    }
}

#[test]
fn reader_errors_are_propagated() {
    let input = data(20 * CS, 6);
    let mut enc = FrameEncoder::new(Vec::new(), params(), CS).unwrap();
    let e = enc.copy_from(BrokenReader(&input, 4321)).unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::ConnectionReset);
    assert!(
        enc.finish().is_err(),
        "a failed copy leaves the encoder broken"
    );
}

#[test]
fn cut_and_corrupt_streams_are_errors_not_hangs() {
    let input = data(6 * CS + 11, 8);
    let mut enc = FrameEncoder::new(Vec::new(), params(), CS).unwrap();
    enc.vlmeta_set("v", b"\x01").unwrap();
    enc.write_all(&input).unwrap();
    let frame = enc.finish().unwrap();
    for len in (0..frame.len()).step_by(7).chain([frame.len() - 1]) {
        let cut = &frame[..len];
        assert!(decode_frame_stream(cut).is_err(), "frame cut at {len}");
        let piped = FrameDecoder::new(cut)
            .map_err(io::Error::from)
            .and_then(|mut d| d.copy_to(io::sink()));
        assert!(piped.is_err(), "frame cut at {len} (pipeline)");
    }
    // Bytes changed anywhere: an error or the right data, never a panic or
    // other data without an error... except inside compressed streams,
    // which carry no checksum: there only "no panic".
    for at in (0..frame.len()).step_by(3) {
        let mut bad = frame.clone();
        bad[at] ^= 0x5a;
        let _ = decode_frame_stream(&bad);
    }
    let mut enc = ChunkEncoder::new(Vec::new(), params(), CS).unwrap();
    enc.write_all(&input).unwrap();
    let chunks = enc.finish().unwrap();
    for len in (0..chunks.len()).step_by(5).chain([chunks.len() - 1]) {
        let mut out = Vec::new();
        let r = ChunkDecoder::new(Trickle(&chunks[..len], 64)).read_to_end(&mut out);
        // A cut at a chunk boundary is a shorter valid sequence.
        let boundary = {
            let mut at = 0;
            while at < len {
                at += oxiblosc::ChunkHeader::parse(&chunks[at..])
                    .map_or(usize::MAX / 2, |h| h.cbytes);
            }
            at == len && len > 0
        };
        assert_eq!(r.is_ok(), boundary, "chunks cut at {len}");
    }
    let mut long = chunks.clone();
    long.extend_from_slice(b"trailing");
    assert!(
        ChunkDecoder::new(&long[..])
            .read_to_end(&mut Vec::new())
            .is_err()
    );
}

#[test]
fn c_written_frames_stream_or_fail_clearly() {
    // Frames written by appending decode as a stream; frames whose index is
    // not their stored order (inserts, updates, reorders, specials) end in
    // an Err, never in other data without one.
    let dir = support::repo().join("tests/data/frames");
    let mut streamed = Vec::new();
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "b2frame"))
        .collect();
    names.sort();
    for path in names {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let bytes = std::fs::read(&path).unwrap();
        let mut sc = SChunk::from_cframe(bytes.clone()).unwrap();
        let mut want = Vec::new();
        for c in sc.iter_chunks() {
            want.extend(c.unwrap());
        }
        match decode_frame_stream(&bytes) {
            Ok(got) => {
                assert!(got == want, "{name}: streamed other bytes");
                streamed.push(name);
            }
            Err(e) => assert!(!e.to_string().is_empty(), "{name}"),
        }
    }
    for must in [
        "f00_blosclz_5chunks.b2frame",
        "f01_lz4_5chunks_ragged.b2frame",
        "f04_zstd_5chunks.b2frame",
        "f05_zstd_3MB+17_ragged.b2frame",
        "f06_meta_vlmeta.b2frame",
        "f07_empty.b2frame",
        "f18_zstd_use_dict.b2frame",
    ] {
        assert!(
            streamed.iter().any(|n| n == must),
            "{must} did not stream: {streamed:?}"
        );
    }
    let reordered = std::fs::read(dir.join("f10_special_updates_reordered.b2frame")).unwrap();
    let e = decode_frame_stream(&reordered).unwrap_err();
    assert!(e.to_string().contains("in order"), "{e}");
}

#[test]
fn iter_chunks_and_read_items() {
    let mut sc = SChunk::builder()
        .cparams(CParams::default().typesize(4))
        .chunksize(4 * 1000)
        .build_memory()
        .unwrap();
    let items: Vec<u32> = (0..3500u32)
        .map(|v| v.wrapping_mul(2_654_435_761))
        .collect();
    sc.append_buffer(bytemuck::cast_slice(&items[..1000]))
        .unwrap();
    sc.append_buffer(bytemuck::cast_slice(&items[1000..2000]))
        .unwrap();
    sc.append_buffer(bytemuck::cast_slice(&items[2000..3000]))
        .unwrap();
    sc.append_buffer(bytemuck::cast_slice(&items[3000..]))
        .unwrap();
    let chunks: Vec<Vec<u8>> = sc.iter_chunks().collect::<Result<_, _>>().unwrap();
    assert_eq!(chunks.len(), 4);
    assert_eq!(chunks.concat(), bytemuck::cast_slice::<u32, u8>(&items));
    assert_eq!(sc.iter_chunks().len(), 4);
    let compressed: Vec<Vec<u8>> = sc.iter_compressed().collect::<Result<_, _>>().unwrap();
    for (c, d) in compressed.iter().zip(&chunks) {
        assert_eq!(&oxiblosc::decompress(c).unwrap(), d);
    }
    let mut it = sc.iter_compressed();
    let mut n = 0;
    while let Some(c) = it.next_compressed() {
        let c = c.unwrap();
        assert!(
            matches!(c, std::borrow::Cow::Borrowed(_)),
            "a copy from memory"
        );
        assert_eq!(c[..], compressed[n][..]);
        n += 1;
    }
    assert_eq!(n, 4);
    let mut it = sc.iter_chunks();
    let mut buf = Vec::new();
    let mut n = 0;
    while let Some(r) = it.next_into(&mut buf) {
        assert_eq!(buf[..r.unwrap()], chunks[n][..]);
        n += 1;
    }
    assert_eq!(n, 4);
    // Typed reads across chunk edges, whole chunks, the very end.
    for (start, len) in [
        (0, 3500),
        (5, 12),
        (990, 20),
        (1000, 1000),
        (999, 1002),
        (3499, 1),
        (0, 0),
    ] {
        let mut got = vec![0u32; len];
        sc.read_items(start as u64, &mut got).unwrap();
        assert_eq!(got[..], items[start..start + len], "{start}+{len}");
    }
    let mut got = vec![0u32; 2];
    assert!(sc.read_items(3499, &mut got).is_err(), "past the end");
    assert!(sc.read_items(u64::MAX / 2, &mut got).is_err(), "overflow");
    let mut wrong = vec![0u64; 2];
    assert!(sc.read_items(0, &mut wrong).is_err(), "wrong item size");
}

#[test]
fn bad_parameters_are_errors() {
    assert!(FrameEncoder::new(Vec::new(), params(), 0).is_err());
    assert!(FrameEncoder::new(Vec::new(), params(), oxiblosc::MAX_BUFFERSIZE + 1).is_err());
    assert!(ChunkEncoder::new(Vec::new(), CParams::default().clevel(10), 100).is_err());
    assert!(FrameDecoder::new(&b"not a frame at all, not at all, no"[..]).is_err());
    assert!(FrameDecoder::new(&[][..]).is_err());
    assert!(
        ChunkDecoder::new(&[][..])
            .read_to_end(&mut Vec::new())
            .is_err()
    );
}

/// python-blosc2 (C-Blosc2 3.3.5) opens the frames the encoder writes, to a
/// file and to memory, and the decoder reads the frames python-blosc2
/// writes.
#[test]
fn python_blosc2_reads_ours_and_we_read_its() {
    let py = support::pyenv::python_with(
        "pydeps",
        &["blosc2==4.14.1"],
        "import blosc2; assert blosc2.__version__ == '4.14.1'",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let dir = support::tempdir("stream-py");
    let input = data(25 * 4096 + 12, 21);
    let ours = dir.join("ours.b2frame");
    let file = std::fs::File::create(&ours).unwrap();
    let p = CParams::default().codec(Codec::Zstd).clevel(3).typesize(4);
    let mut enc = FrameEncoder::new_seekable(io::BufWriter::new(file), p.clone(), 4096).unwrap();
    enc.meta("m", b"\x07").unwrap();
    enc.copy_from(&input[..]).unwrap();
    enc.vlmeta_set("v", b"\xa2hi").unwrap();
    enc.finish().unwrap();
    let mut enc = FrameEncoder::new(Vec::new(), p, 4096).unwrap();
    enc.write_all(&input).unwrap();
    std::fs::write(dir.join("spooled.b2frame"), enc.finish().unwrap()).unwrap();
    std::fs::write(dir.join("input.bin"), &input).unwrap();
    let script = r#"
import sys, blosc2, numpy as np
d = sys.argv[1]
want = open(d + "/input.bin", "rb").read()
for name in ["ours.b2frame", "spooled.b2frame"]:
    sc = blosc2.open(d + "/" + name)
    got = b"".join(sc.decompress_chunk(i) for i in range(sc.nchunks))
    assert got == want, name
    assert sc.nchunks == 26 and sc.chunksize == 4096 and sc.typesize == 4, name
    sc2 = blosc2.schunk_from_cframe(open(d + "/" + name, "rb").read(), copy=True)
    assert sc2[:] == want, name
ours = blosc2.open(d + "/ours.b2frame")
assert ours.meta["m"] == 7, ours.meta["m"]
assert ours.vlmeta["v"] == "hi", ours.vlmeta["v"]
# Frames of C's own for our decoder: appended chunks, a short last one.
sc = blosc2.SChunk(chunksize=3000, contiguous=True, urlpath=d + "/theirs.b2frame", mode="w",
                   cparams={"codec": blosc2.Codec.LZ4, "typesize": 2})
sc.append_data(want[:3000]); sc.append_data(want[3000:6000]); sc.append_data(want[6000:7001])
sc.vlmeta["k"] = 5
print("ok")
"#;
    let out = py
        .command()
        .args(["-c", script, dir.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "python-blosc2: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "ok");
    let theirs = std::fs::read(dir.join("theirs.b2frame")).unwrap();
    let mut dec = FrameDecoder::new(Trickle(&theirs[..], 501)).unwrap();
    let mut got = Vec::new();
    dec.read_to_end(&mut got).unwrap();
    assert!(got == input[..7001], "C-written frame streamed");
    let f = dec.frame().unwrap();
    assert_eq!(f.nchunks(), 3);
    assert_eq!(f.vlmetalayers[0].name, "k");
}

#[test]
fn schunk_file_frames_stream_once_compacted() {
    // A file-backed SChunk appends crash-safely: chunks go to holes and
    // past the old index, so the stored order has gaps and old index
    // chunks between the live ones. Streamed as is: an Err (or the right
    // bytes), never other bytes without an Err; once compacted (chunks in
    // order, no holes): the right bytes.
    let dir = support::tempdir("stream-compact");
    let path = dir.join("f.b2frame");
    let input = data(5 * CS + 10, 12);
    let mut sc = SChunk::builder()
        .cparams(params())
        .chunksize(CS)
        .create_file(&path)
        .unwrap();
    for piece in input.chunks(CS) {
        sc.append_buffer(piece).unwrap();
    }
    let bytes = std::fs::read(&path).unwrap();
    if let Ok(got) = decode_frame_stream(&bytes) {
        assert!(got == input, "uncompacted frame streamed other bytes");
    }
    sc.compact().unwrap();
    drop(sc);
    let bytes = std::fs::read(&path).unwrap();
    assert!(
        decode_frame_stream(&bytes).unwrap() == input,
        "compacted frame"
    );
}
