//! Bloscpack files: open, every read, and the writes on an opened file
//! (append, metadata rewrite), which must give a file that reopens. The
//! streaming `Decoder` (since session 31) must take exactly the files
//! `unpack` takes, and give the same data.
#![no_main]
use std::io::Read;

use libfuzzer_sys::fuzz_target;
use oxiblosc::bloscpack::{self, Decoder, MetadataOptions, Reader};

fuzz_target!(|data: &[u8]| {
    let whole = bloscpack::unpack(data);
    let streamed = Decoder::new(data)
        .map_err(|e| e.to_string())
        .and_then(|mut d| {
            let mut v = Vec::new();
            d.read_to_end(&mut v).map(|_| v).map_err(|e| e.to_string())
        });
    match (&whole, &streamed) {
        (Ok(a), Ok(b)) => assert!(a == b, "the stream gave other data"),
        (Err(_), Err(_)) => {}
        (Ok(_), Err(e)) => panic!("only the stream failed: {e}"),
        (Err(e), Ok(_)) => panic!("only the stream took it (unpack: {e})"),
    }
    let Ok(r) = Reader::new(data) else { return };
    let _ = r.header();
    let _ = r.metadata();
    let _ = r.metadata_header();
    let _ = r.offsets();
    let n = r.nchunks().min(16);
    let mut total = 0usize;
    for i in 0..n {
        let _ = r.chunk_range(i);
        if let Ok(v) = r.decompress_chunk(i) {
            total += v.len();
        }
    }
    if let Ok(all) = r.decompress_all()
        && r.nchunks() <= 16
    {
        assert_eq!(all.len(), total, "decompress_all against the chunks");
    }
    // Appending to a file that reads must give a file that reads again,
    // holding the old data followed by the new.
    if let Ok(old) = bloscpack::unpack(data) {
        let mut f = data.to_vec();
        if bloscpack::append(&mut f, &[1, 2, 3, 4, 5, 6, 7, 8], None).is_ok() {
            let new = bloscpack::unpack(&f).expect("a file append accepted must reopen");
            assert_eq!(&new[..old.len()], &old[..], "append kept the old data");
        }
        let mut f = data.to_vec();
        let v = serde_json::json!({"fuzz": [1, 2, 3]});
        if bloscpack::rewrite_metadata(&mut f, &v, &MetadataOptions::default()).is_ok() {
            let again = bloscpack::unpack(&f).expect("a metadata rewrite accepted must reopen");
            assert_eq!(again, old, "a metadata rewrite changed the data");
        }
    }
});
