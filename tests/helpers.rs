//! The small public helpers the CLI reads files with (issue #16: "the CLI
//! uses the library's helpers"): frame probing, the 16-byte chunk prefix,
//! a header's codec, special-value and packed filter names, and msgpack
//! through `rmpv`.

use oxiblosc::chunk::header::ChunkPrefix;
use oxiblosc::frame::{MsgpackValue, decode_msgpack, encode_msgpack, is_frame, msgpack_preview};
use oxiblosc::{CParams, ChunkHeader, Codec, Filter, SChunk, SpecialValue, special_chunk};

fn chunk(codec: Codec) -> Vec<u8> {
    let data: Vec<u8> = (0..20_000u32).flat_map(|i| (i / 3).to_le_bytes()).collect();
    oxiblosc::compress(&data, &CParams::default().codec(codec).typesize(4)).unwrap()
}

#[test]
fn is_frame_knows_a_frame_by_its_magic_alone() {
    let mut sc = SChunk::builder().build_memory().unwrap();
    sc.append_buffer(&[1u8; 4000]).unwrap();
    let frame = sc.to_cframe().unwrap();
    assert!(is_frame(&frame));
    assert!(is_frame(&frame[..10]), "ten bytes are enough");
    assert!(!is_frame(&frame[..9]));
    assert!(!is_frame(&[]));
    // Any byte of the marker or the magic changed: no frame.
    for i in 1..10 {
        let mut f = frame[..10].to_vec();
        f[i] ^= 0x20;
        assert!(!is_frame(&f), "byte {i}");
    }
    // Byte 0 (the array length) is not part of the probe.
    let mut f = frame.clone();
    f[0] = 0x9d;
    assert!(is_frame(&f));
    assert!(!is_frame(&chunk(Codec::Lz4)));
    assert!(!is_frame(b"blpk\x03\x00\x00\x00\x00\x00\x00\x00"));
}

#[test]
fn chunk_prefix_reads_the_length_from_the_first_16_bytes() {
    for codec in Codec::ALL.into_iter().filter(|c| c.is_available()) {
        let c = chunk(codec);
        let h = ChunkHeader::parse(&c).unwrap();
        for cut in 16..=c.len().min(64) {
            let p = ChunkPrefix::read(&c[..cut]).unwrap();
            assert_eq!(p.chunk_len(), Some(c.len()), "{codec:?}");
            assert_eq!(p.cbytes as usize, h.cbytes);
            assert_eq!(p.nbytes as usize, h.nbytes);
            assert_eq!(p.blocksize as usize, h.blocksize);
            assert_eq!((p.version, p.typesize), (h.version, h.typesize));
            assert!(p.is_plausible());
        }
        for cut in 0..16 {
            assert_eq!(ChunkPrefix::read(&c[..cut]), None, "{cut} bytes");
        }
    }
    // Special chunks (header only) too.
    let z = special_chunk(
        &CParams::default().typesize(4),
        1000,
        SpecialValue::Zeros,
        &[],
    )
    .unwrap();
    assert_eq!(ChunkPrefix::read(&z).unwrap().chunk_len(), Some(z.len()));
}

#[test]
fn chunk_prefix_says_no_chunk_for_impossible_lengths_and_headers() {
    let mut c = chunk(Codec::BloscLz);
    let set_i32 =
        |c: &mut Vec<u8>, at: usize, v: i32| c[at..at + 4].copy_from_slice(&v.to_le_bytes());
    for bad in [-1, i32::MIN, 0, 15] {
        set_i32(&mut c, 12, bad);
        let p = ChunkPrefix::read(&c).unwrap();
        assert_eq!(p.cbytes, bad);
        assert_eq!(p.chunk_len(), None, "cbytes {bad}");
    }
    set_i32(&mut c, 12, 16);
    assert_eq!(ChunkPrefix::read(&c).unwrap().chunk_len(), Some(16));
    let good = chunk(Codec::BloscLz);
    let plausible = |f: &dyn Fn(&mut Vec<u8>)| {
        let mut c = good.clone();
        f(&mut c);
        ChunkPrefix::read(&c).unwrap().is_plausible()
    };
    assert!(plausible(&|_| {}));
    assert!(!plausible(&|c| c[0] = 0), "version 0");
    assert!(!plausible(&|c| c[0] = 7), "version 7");
    assert!(!plausible(&|c| c[3] = 0), "typesize 0");
    assert!(!plausible(&|c| set_i32(c, 4, -1)), "negative nbytes");
    assert!(!plausible(&|c| set_i32(c, 8, 0)), "blocksize 0");
    assert!(plausible(&|c| set_i32(c, 4, 0)), "an empty chunk");
}

#[test]
fn a_headers_codec_is_the_one_that_wrote_it() {
    for codec in Codec::ALL.into_iter().filter(|c| c.is_available()) {
        let h = ChunkHeader::parse(&chunk(codec)).unwrap();
        let want = if codec == Codec::Lz4Hc {
            Codec::Lz4
        } else {
            codec
        };
        assert_eq!(h.codec(), Some(want), "{codec:?}");
    }
    // Format 6: the codec id is in the extended header.
    let mut h = ChunkHeader::parse(&chunk(Codec::Zstd)).unwrap();
    h.flags = (h.flags & 0x1f) | (6 << 5);
    h.udcodec = Codec::Zlib.id();
    assert_eq!(h.codec(), Some(Codec::Zlib));
    h.udcodec = 200;
    assert_eq!(h.codec(), None);
    h.flags = (h.flags & 0x1f) | (5 << 5);
    assert_eq!(h.codec(), None, "format 5 is no codec of ours");
}

#[test]
fn names_of_special_values_and_packed_filters() {
    let names: Vec<&str> = [
        SpecialValue::Zeros,
        SpecialValue::Nan,
        SpecialValue::Value,
        SpecialValue::Uninit,
    ]
    .map(SpecialValue::name)
    .into();
    assert_eq!(names, ["zeros", "nan", "value", "uninit"]);
    // Each name is what a special chunk of that kind reads back as.
    let z = special_chunk(&CParams::default().typesize(4), 64, SpecialValue::Nan, &[]).unwrap();
    assert_eq!(
        ChunkHeader::parse(&z)
            .unwrap()
            .special()
            .map(SpecialValue::name),
        Some("nan")
    );

    use oxiblosc::packed::{
        FILTER_BITSHUFFLE, FILTER_DELTA, FILTER_NONE, FILTER_SHUFFLE, filter_name,
    };
    assert_eq!(filter_name(FILTER_SHUFFLE), Some(Filter::Shuffle.name()));
    assert_eq!(
        filter_name(FILTER_BITSHUFFLE),
        Some(Filter::BitShuffle.name())
    );
    assert_eq!(filter_name(FILTER_DELTA), Some(Filter::Delta.name()));
    assert_eq!(filter_name(FILTER_NONE), None);
    assert_eq!(filter_name(4), None);
    assert_eq!(filter_name(255), None);
}

#[test]
fn msgpack_strings_take_their_shortest_encoding_and_read_back() {
    for (len, marker) in [
        (0, vec![0xa0]),
        (31, vec![0xbf]),
        (32, vec![0xd9, 32]),
        (255, vec![0xd9, 255]),
        (256, vec![0xda, 1, 0]),
        (65_535, vec![0xda, 0xff, 0xff]),
        (65_536, vec![0xdb, 0, 1, 0, 0]),
    ] {
        let s = "x".repeat(len);
        let bytes = encode_msgpack(&MsgpackValue::from(s.as_str()));
        assert_eq!(bytes[..marker.len()], marker[..], "{len}");
        assert_eq!(bytes.len(), marker.len() + len);
        assert_eq!(
            decode_msgpack(&bytes).unwrap(),
            MsgpackValue::from(s.as_str())
        );
    }
    // A map of a string and an array of bins (the CLI's checksums value).
    let v = MsgpackValue::Map(vec![
        ("algorithm".into(), "crc32".into()),
        (
            "digests".into(),
            MsgpackValue::Array(vec![MsgpackValue::Binary(vec![1, 2, 3, 4]); 20]),
        ),
    ]);
    let bytes = encode_msgpack(&v);
    assert_eq!(decode_msgpack(&bytes).unwrap(), v);
    // Every cut of it is an error, never a panic; so is a trailing byte.
    for cut in 0..bytes.len() {
        assert!(decode_msgpack(&bytes[..cut]).is_err(), "cut at {cut}");
    }
    let mut more = bytes.clone();
    more.push(0xc0);
    let e = decode_msgpack(&more).unwrap_err().to_string();
    assert!(e.contains("1 bytes after its msgpack value"), "{e}");
    // A huge declared length with nothing behind it: an error, no allocation.
    assert!(decode_msgpack(&[0xdb, 0xff, 0xff, 0xff, 0xff]).is_err());
    assert!(decode_msgpack(&[0xdd, 0xff, 0xff, 0xff, 0xff]).is_err());
}

#[test]
fn msgpack_preview_shows_strings_as_text_and_the_rest_as_hex() {
    let enc = |s: &str| encode_msgpack(&MsgpackValue::from(s));
    assert_eq!(msgpack_preview(&enc("float32"), 32), "\"float32\"");
    assert_eq!(msgpack_preview(&enc("a \"q\"\n"), 32), "\"a \\\"q\\\"\\n\"");
    let long = "y".repeat(200);
    assert_eq!(msgpack_preview(&enc(&long), 32), format!("{long:?}"));
    // Not a string, not valid UTF-8, or more than one value: hex.
    assert_eq!(msgpack_preview(&[0x93, 1, 2, 3], 32), "93010203");
    assert_eq!(msgpack_preview(&[0xa2, 0xff, 0xfe], 32), "a2fffe");
    assert_eq!(msgpack_preview(&[0xa1, b'a', 0x01], 32), "a16101");
    assert_eq!(msgpack_preview(&[], 32), "");
    // Cut after `max` bytes.
    let bytes: Vec<u8> = (0..40).collect();
    let p = msgpack_preview(&bytes, 32);
    assert_eq!(p.len(), 64 + 3);
    assert!(p.starts_with("000102") && p.ends_with("1f..."), "{p}");
    assert_eq!(msgpack_preview(&bytes[..32], 32).len(), 64);
}

#[test]
fn a_filter_displays_as_the_spelling_it_parses_from() {
    let mut all = vec![
        Filter::Shuffle,
        Filter::BitShuffle,
        Filter::Delta,
        Filter::ByteDelta,
    ];
    all.extend((-128i16..=127).map(|p| Filter::TruncPrec(p as i8 as u8)));
    for f in all {
        let s = f.to_string();
        assert_eq!(s.parse::<Filter>().unwrap(), f, "{s}");
        assert!(s.starts_with(f.name()), "{s}");
    }
    assert_eq!(Filter::TruncPrec(0xfd).to_string(), "trunc_prec:-3");
    assert_eq!(Filter::TruncPrec(10).to_string(), "trunc_prec:10");
}
