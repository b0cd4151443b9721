//! Round trips through our own encoder and decoder over the parameter
//! space, the output bound, and the special-chunk constructors.

use oxiblosc::{
    CParams, ChunkHeader, Codec, Error, Filter, SpecialValue, SplitMode, compress, compress_into,
    decompress, getitem, max_compressed_len, special_chunk,
};
use proptest::prelude::*;

/// Data shapes Blosc meets: ramps, noisy floats, runs, text, random, zeros.
fn data(shape: u8, len: usize, seed: u64) -> Vec<u8> {
    let mut s = seed | 1;
    let mut rnd = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    match shape % 7 {
        0 => (0..len).map(|i| (i / 4) as u8).collect(),
        1 => (0..len.div_ceil(8))
            .flat_map(|i| ((i as f64 * 0.01).sin() + (rnd() % 100) as f64 * 1e-6).to_le_bytes())
            .take(len)
            .collect(),
        2 => (0..len)
            .map(|i| if (i / 500) % 2 == 0 { 7 } else { (i % 3) as u8 })
            .collect(),
        3 => b"Blosc is a high performance compressor optimized for binary data. "
            .iter()
            .cycle()
            .take(len)
            .copied()
            .collect(),
        4 => (0..len).map(|_| rnd() as u8).collect(),
        5 => vec![0; len],
        _ => (0..len).map(|_| (rnd() % 4) as u8 * 60).collect(),
    }
}

fn pipeline() -> impl Strategy<Value = Vec<Filter>> {
    prop_oneof![
        Just(vec![]),
        Just(vec![Filter::Shuffle]),
        Just(vec![Filter::BitShuffle]),
        Just(vec![Filter::Delta]),
        Just(vec![Filter::Delta, Filter::Shuffle]),
        Just(vec![Filter::Shuffle, Filter::Delta]),
        Just(vec![Filter::Shuffle, Filter::ByteDelta]),
        Just(vec![Filter::Delta, Filter::BitShuffle, Filter::Shuffle]),
    ]
}

fn codec() -> impl Strategy<Value = Codec> {
    prop::sample::select(Codec::ALL.to_vec())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn compress_decompress_round_trip(
        shape in 0u8..7,
        len in prop_oneof![0usize..200, 0usize..70_000, 60_000usize..400_000],
        seed: u64,
        codec in codec(),
        clevel in prop_oneof![4 => 0u8..=6, 1 => 7u8..=9],
        typesize in prop_oneof![3 => prop::sample::select(vec![1usize, 2, 4, 8, 16]), 1 => 1usize..=40, 1 => Just(300usize)],
        filters in pipeline(),
        split in prop::sample::select(vec![SplitMode::Always, SplitMode::Never, SplitMode::Auto, SplitMode::ForwardCompat]),
        blocksize in prop_oneof![4 => Just(0usize), 1 => 1usize..70_000],
        use_dict: bool,
    ) {
        // Slow combinations (zstd 22, lz4hc/zlib 9 on big inputs) are kept small.
        let len = if clevel >= 8 && codec != Codec::BloscLz && codec != Codec::Lz4 { len.min(60_000) } else { len };
        let src = data(shape, len, seed);
        let use_dict = use_dict && matches!(codec, Codec::Zstd | Codec::Lz4 | Codec::Lz4Hc);
        let p = CParams::default().codec(codec).clevel(clevel).typesize(typesize).filters(&filters)
            .splitmode(split).blocksize(blocksize).use_dict(use_dict);
        let chunk = compress(&src, &p).unwrap();
        prop_assert!(chunk.len() <= max_compressed_len(len));
        let h = ChunkHeader::parse(&chunk).unwrap();
        prop_assert_eq!(h.nbytes, len);
        prop_assert_eq!(h.cbytes, chunk.len());
        prop_assert_eq!(h.udcodec, codec.id());
        let out = decompress(&chunk).unwrap();
        prop_assert!(out == src, "round trip failed: {:?}", p);
        // A few item ranges through getitem.
        let ts = usize::from(h.typesize);
        let items = len / ts;
        if items > 0 {
            for (start, n) in [(0, 1), (items / 3, items / 2), (items - 1, 1)] {
                let n = n.min(items - start);
                let got = getitem(&chunk, start, n).unwrap();
                prop_assert!(got == src[start * ts..(start + n) * ts], "getitem {} {} of {:?}", start, n, p);
            }
        }
    }
}

#[test]
fn destination_size_rules() {
    let src: Vec<u8> = (0..100_000u32)
        .flat_map(|v| (v * 7919).to_le_bytes())
        .collect();
    let p = CParams::default().codec(Codec::Lz4).typesize(4);
    // Exactly nbytes + 32 always suffices.
    let mut dst = vec![0u8; max_compressed_len(src.len())];
    let n = compress_into(&src, &mut dst, &p).unwrap();
    assert_eq!(decompress(&dst[..n]).unwrap(), src);
    // More room than nbytes + 32 is not used: incompressible data with many
    // blocks still gives at most nbytes + 32 (a raw chunk).
    let noise = data(4, 300_000, 9);
    let p_small_blocks = p.clone().blocksize(4096).filters(&[]);
    let mut big = vec![0u8; 2 * noise.len()];
    let n = compress_into(&noise, &mut big, &p_small_blocks).unwrap();
    assert!(
        n <= max_compressed_len(noise.len()),
        "{n} bytes for {}",
        noise.len()
    );
    assert_eq!(decompress(&big[..n]).unwrap(), noise);
    // All the room, as C's destsize: every block a raw stream (a block start
    // and a size word each), the same bytes with one thread or two.
    let all_room = |threads: usize| {
        let mut out = vec![0u8; 2 * noise.len()];
        let mut c = oxiblosc::Compressor::new(p_small_blocks.clone().nthreads(threads));
        let n = c.compress_into_all_room(&noise, &mut out).unwrap();
        out.truncate(n);
        out
    };
    let raw_streams = all_room(1);
    let nblocks = noise.len().div_ceil(4096);
    assert_eq!(raw_streams.len(), noise.len() + 32 + 8 * nblocks);
    assert!(!ChunkHeader::parse(&raw_streams).unwrap().is_memcpyed());
    assert_eq!(decompress(&raw_streams).unwrap(), noise);
    assert_eq!(all_room(2), raw_streams);
    // Too small for even a raw copy: an error, nothing claimed written.
    let mut tiny = vec![0u8; 100];
    let random = data(4, 10_000, 42);
    assert!(matches!(
        compress_into(&random, &mut tiny, &p),
        Err(Error::DstTooSmall { .. })
    ));
    // Incompressible input falls back to a raw (memcpyed) chunk of nbytes + 32.
    let chunk = compress(&random, &p.clone().filters(&[])).unwrap();
    let h = ChunkHeader::parse(&chunk).unwrap();
    assert!(h.is_memcpyed());
    assert_eq!(chunk.len(), random.len() + 32);
    assert_eq!(decompress(&chunk).unwrap(), random);
}

#[test]
fn zeros_become_a_special_chunk() {
    let chunk = compress(
        &vec![0u8; 1 << 20],
        &CParams::default().codec(Codec::Zstd).typesize(4),
    )
    .unwrap();
    let h = ChunkHeader::parse(&chunk).unwrap();
    assert_eq!(chunk.len(), 32);
    assert_eq!(h.special(), Some(SpecialValue::Zeros));
    assert_eq!(decompress(&chunk).unwrap(), vec![0u8; 1 << 20]);
}

#[test]
fn special_chunk_constructors() {
    let p = CParams::default().typesize(8);
    let z = special_chunk(&p, 800, SpecialValue::Zeros, &[]).unwrap();
    assert_eq!(decompress(&z).unwrap(), vec![0u8; 800]);
    let nan = special_chunk(&p, 800, SpecialValue::Nan, &[]).unwrap();
    let vals: Vec<f64> = oxiblosc::decompress_typed(&nan).unwrap();
    assert!(vals.len() == 100 && vals.iter().all(|v| v.is_nan()));
    let v = special_chunk(&p, 800, SpecialValue::Value, &3.5f64.to_le_bytes()).unwrap();
    // Same bytes as C-Blosc2's blosc2_chunk_repeatval (CHUNK-NOTES §1.3).
    assert_eq!(
        &v[..16],
        &[5, 1, 5, 8, 0x20, 3, 0, 0, 0x20, 3, 0, 0, 0x28, 0, 0, 0]
    );
    assert_eq!(v[31], 0x30);
    let vals: Vec<f64> = oxiblosc::decompress_typed(&v).unwrap();
    assert_eq!(vals, vec![3.5; 100]);
    assert_eq!(
        getitem(&v, 10, 2).unwrap(),
        [3.5f64.to_le_bytes(), 3.5f64.to_le_bytes()].concat()
    );
    let u = special_chunk(&p, 800, SpecialValue::Uninit, &[]).unwrap();
    assert_eq!(decompress(&u).unwrap().len(), 800);
    assert!(special_chunk(&p, 801, SpecialValue::Nan, &[]).is_err());
    assert!(special_chunk(&p.clone().typesize(2), 800, SpecialValue::Nan, &[]).is_err());
}

#[test]
fn bad_parameters_are_clear_errors() {
    let src = vec![1u8; 1000];
    for (p, needle) in [
        (CParams::default().clevel(10), "clevel"),
        (CParams::default().typesize(0), "typesize"),
        (CParams::default().nthreads(0), "nthreads"),
        (
            CParams::default().codec(Codec::Zlib).use_dict(true),
            "dictionar",
        ),
        (
            CParams::default()
                .typesize(2)
                .filters(&[Filter::TruncPrec(3)]),
            "trunc_prec",
        ),
    ] {
        let e = compress(&src, &p).unwrap_err().to_string();
        assert!(e.contains(needle), "{e}");
    }
}

#[test]
fn typed_round_trip() {
    let v: Vec<f32> = (0..50_000).map(|i| (i as f32 * 0.001).cos()).collect();
    let chunk = oxiblosc::compress_typed(&v, &CParams::default()).unwrap();
    assert_eq!(ChunkHeader::parse(&chunk).unwrap().typesize, 4);
    let back: Vec<f32> = oxiblosc::decompress_typed(&chunk).unwrap();
    assert_eq!(back, v);
}

/// Blosc1 chunks compress a constant byte plane once per compressor and
/// copy it afterwards, and decoders fill a stream seen decoding to a
/// constant (Blosc1 chunks have no run streams): a warm compressor, a
/// fresh one and a two-thread one must still write the same bytes, which
/// decode to the data.
#[test]
fn blosc1_constant_planes_give_the_same_bytes_warm_fresh_and_parallel() {
    use oxiblosc::{ChunkFormat, Compressor, Filter};
    // int64 counters with a tag in the top byte: their high byte planes are
    // constant in every block, zeros and one other byte
    let data: Vec<u8> = (0..(3 << 20) / 8 + 77)
        .flat_map(|i: u64| (0x2a << 56 | (1_000 + i * 3 + (i * 2_654_435_761) % 5)).to_le_bytes())
        .collect();
    for codec in oxiblosc::Codec::ALL
        .iter()
        .copied()
        .filter(|c| c.is_available())
    {
        for clevel in [1u8, 5, 9] {
            for filter in [Filter::Shuffle, Filter::BitShuffle] {
                let p = oxiblosc::CParams::default()
                    .format(ChunkFormat::Blosc1)
                    .codec(codec)
                    .clevel(clevel)
                    .typesize(8)
                    .filters(&[filter]);
                let fresh = Compressor::new(p.clone()).compress(&data).unwrap();
                let mut warm = Compressor::new(p.clone());
                warm.compress(&data).unwrap();
                let again = warm.compress(&data).unwrap();
                let par = Compressor::new(p.clone().nthreads(2))
                    .compress(&data)
                    .unwrap();
                let what = format!("{codec} clevel {clevel} {}", filter.name());
                assert!(
                    fresh == again,
                    "{what}: a warm compressor wrote other bytes"
                );
                assert!(fresh == par, "{what}: two threads wrote other bytes");
                let back = oxiblosc::decompress(&fresh).unwrap();
                assert!(back == data, "{what}: decoded to other data");
            }
        }
    }
}
