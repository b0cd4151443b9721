//! Packed super-chunks: the first byte picks raw input (0) or a valid
//! packed buffer made from the input and then corrupted by the trailing
//! `(offset u16 LE, xor u8)` edits; then the reader, every read, unpack and
//! an append, whose result must read back.
#![no_main]
use libfuzzer_sys::fuzz_target;
use oxiblosc::packed::{self, PackedReader};
use oxiblosc::{CParams, Codec, Filter};

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let owned;
    let bytes: &[u8] = if mode & 1 == 0 {
        rest
    } else {
        // A valid buffer from the first part, then edits from the rest.
        let split = (rest.len() / 2).min(4096);
        let (payload, edits) = rest.split_at(split);
        let codec = [Codec::BloscLz, Codec::Lz4, Codec::Zstd][(mode as usize >> 1) % 3];
        let filters: &[Filter] = if mode & 8 != 0 {
            &[Filter::Delta, Filter::Shuffle]
        } else {
            &[Filter::Shuffle]
        };
        let p = CParams::default()
            .codec(codec)
            .typesize(1 + (mode as usize >> 4) % 4)
            .filters(filters);
        let Ok(mut b) = packed::pack(payload, &p, 64 + (mode as usize) * 3) else {
            return;
        };
        for e in edits.chunks_exact(3) {
            let at = u16::from_le_bytes([e[0], e[1]]) as usize;
            if at < b.len() {
                b[at] ^= e[2];
            }
        }
        owned = b;
        &owned
    };
    let Ok(r) = PackedReader::new(bytes) else {
        return;
    };
    let _ = r.header();
    let _ = r.data_nbytes();
    for f in [
        r.filters_chunk(),
        r.codec_chunk(),
        r.metadata_chunk(),
        r.userdata_chunk(),
    ] {
        let _ = f;
    }
    let n = r.nchunks().min(16);
    for i in 0..n {
        let _ = r.chunk(i);
        let _ = r.chunk_nbytes(i);
        let _ = r.decompress_chunk(i);
    }
    if let Ok(all) = r.unpack() {
        assert_eq!(
            all.len(),
            r.data_nbytes(),
            "unpack against the declared size"
        );
        if let Ok(b) = packed::append(bytes, &[9u8; 40], 1) {
            let again = packed::unpack(&b).expect("an accepted append must read back");
            assert_eq!(&again[..all.len()], &all[..], "append kept the old data");
        }
    }
});
