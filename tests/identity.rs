//! Our encoder against the chunks C-Blosc2 3.3.5 wrote (nthreads 1, python-
//! blosc2's destination of nbytes + 32): the original input is recovered by
//! decoding the C chunk (lossless vectors only), compressed again with the
//! same parameters, and compared.
//!
//! - BloscLZ is our own code and must give the same bytes, every time.
//! - ZSTD (libzstd 1.5.7), LZ4 and LZ4HC (liblz4 1.10.0, LZ4 at C's
//!   acceleration `10 - clevel`) are the same C libraries C-Blosc2 3.3.5
//!   bundles, called the same way, so the chunks must match too.
//! - ZLIB is C's zlib-ng 2.3.3 too when a clang build of it compresses
//!   (`support::zlib_ng_compresses`): identical, at every clevel. Otherwise
//!   (a gcc build: zlib-rs) another implementation of the format: the
//!   header must match wherever it does not depend on how well the codec
//!   did, and the chunk must decode to the input.

mod support;
use oxiblosc::{ChunkHeader, Codec, compress, decompress};
use support::corpus::*;

#[test]
fn chunks_match_c_blosc2() {
    let mut failures = Vec::new();
    let mut identical = 0;
    let mut checked = 0;
    let mut required = 0;
    for v in vectors(&["chunk"]) {
        let api = v["api"].as_str().unwrap();
        if !(api == "blosc2.compress2" || api == "blosc2.compress")
            || v["params"]["nthreads"] != 1
            || v["lossy"] == true
        {
            continue;
        }
        let name = v["name"].as_str().unwrap();
        let c_chunk = read(&v);
        let original = decompress(&c_chunk).unwrap();
        let p = cparams_of(&v);
        let ours = match compress(&original, &p) {
            Ok(c) => c,
            Err(e) => {
                failures.push(format!("{name}: {e}"));
                continue;
            }
        };
        checked += 1;
        assert_eq!(
            decompress(&ours).unwrap(),
            original,
            "{name}: no round trip"
        );
        let must_be_identical = matches!(p.codec, Codec::BloscLz | Codec::Zstd | Codec::Lz4Hc)
            || (p.codec == Codec::Lz4 && cfg!(feature = "lz4hc"))
            || (p.codec == Codec::Zlib && support::zlib_ng_compresses());
        required += usize::from(must_be_identical);
        if ours == c_chunk {
            identical += 1;
        } else if must_be_identical {
            let at = ours.iter().zip(&c_chunk).position(|(a, b)| a != b);
            failures.push(format!(
                "{name}: {} bytes vs C's {}, first difference at {at:?}",
                ours.len(),
                c_chunk.len()
            ));
        } else {
            let (a, b) = (
                ChunkHeader::parse(&ours).unwrap(),
                ChunkHeader::parse(&c_chunk).unwrap(),
            );
            // Whether a chunk ends up memcpyed or all-zero depends on the codec's output.
            if a.is_memcpyed() == b.is_memcpyed() && a.special() == b.special() {
                let same = a.version == b.version
                    && a.flags == b.flags
                    && a.typesize == b.typesize
                    && a.nbytes == b.nbytes
                    && a.blocksize == b.blocksize
                    && a.filters == b.filters
                    && a.filters_meta == b.filters_meta
                    && a.udcodec == b.udcodec;
                if !same {
                    failures.push(format!("{name}: header differs: ours {a:?} C {b:?}"));
                }
            }
        }
    }
    eprintln!(
        "{checked} chunks re-encoded, {identical} byte-identical to C-Blosc2 ({required} required)"
    );
    // 176 lossless nthreads-1 chunks in the corpus, 144 of them BloscLZ, ZSTD, LZ4 or LZ4HC,
    // the other 32 ZLIB (at clevels 1-9).
    let least = if support::zlib_ng_compresses() {
        176
    } else {
        140
    };
    assert!(
        checked >= 170 && required >= least,
        "only {checked} vectors ({required} required identical)"
    );
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
