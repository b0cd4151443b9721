//! numcodecs' own Blosc fixtures (`tests/data/numcodecs`, MIT licence, from
//! numcodecs' `fixture/blosc`): 13 configurations × 13 arrays written by
//! C-Blosc 1.x through numcodecs over the years, including Snappy chunks
//! (`codec.09`) that C-Blosc2 cannot decode. Every one must decode to the
//! bytes of its `array.NN.npy`.

mod support;
use std::fs;
use std::path::Path;

/// The data bytes of a `.npy` file (after its header), as numcodecs encodes
/// them (memory order).
fn npy_data(path: &Path) -> Vec<u8> {
    let b = fs::read(path).unwrap();
    assert_eq!(&b[..6], b"\x93NUMPY", "{}", path.display());
    let (hlen, start) = match b[6] {
        1 => (u16::from_le_bytes([b[8], b[9]]) as usize, 10),
        _ => (
            u32::from_le_bytes(b[8..12].try_into().unwrap()) as usize,
            12,
        ),
    };
    b[start + hlen..].to_vec()
}

#[test]
fn every_numcodecs_blosc_fixture_decodes() {
    let dir = support::corpus::data_dir().join("numcodecs/blosc");
    let mut decoded = 0;
    let mut snappy = 0;
    let mut configs: Vec<_> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    configs.sort();
    assert_eq!(configs.len(), 13, "fixture configurations");
    for cfg in &configs {
        let config: serde_json::Value =
            serde_json::from_slice(&fs::read(cfg.join("config.json")).unwrap()).unwrap();
        let mut encoded: Vec<_> = fs::read_dir(cfg)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "dat"))
            .collect();
        encoded.sort();
        for enc in encoded {
            let n = enc
                .file_stem()
                .unwrap()
                .to_str()
                .unwrap()
                .trim_start_matches("encoded.");
            let want = npy_data(&dir.join(format!("array.{n}.npy")));
            let chunk = fs::read(&enc).unwrap();
            let got = oxiblosc::decompress(&chunk)
                .unwrap_or_else(|e| panic!("{} ({config}): {e}", enc.display()));
            assert_eq!(got, want, "{} ({config})", enc.display());
            decoded += 1;
            if config["cname"] == "snappy" {
                assert_eq!(chunk[2] >> 5, 2, "a Snappy chunk");
                snappy += 1;
            }
        }
    }
    eprintln!("{decoded} fixture chunks decoded, {snappy} of them Snappy");
    assert_eq!(decoded, 169);
    assert!(snappy >= 7);
}
