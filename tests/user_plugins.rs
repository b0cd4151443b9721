//! User codecs against C-Blosc2: a frame python-blosc2 (C-Blosc2 3.3.5)
//! wrote with a Python user codec decodes through the same codec
//! registered here (`oxiblosc::plugins`), and a frame we write with it
//! decodes in python-blosc2. The codec is told the chunk's codec meta and
//! type size.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use oxiblosc::plugins::{CodecCall, UserCodec, register_codec};
use oxiblosc::schunk::SChunk;
use oxiblosc::{CParams, Codec, Result};

const ID: u8 = 199;

/// `tests/support/user_codec.py`'s codec 199: an int32 arange block as
/// (start, step); anything else stored raw. Counts its calls.
struct Arange7 {
    encoded: AtomicUsize,
    decoded: AtomicUsize,
}

fn i32s(b: &[u8]) -> Vec<i32> {
    b.chunks_exact(4)
        .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

impl UserCodec for Arange7 {
    fn compress(&self, src: &[u8], dst: &mut [u8], call: &CodecCall) -> Result<usize> {
        assert_eq!((call.id, call.meta, call.typesize), (ID, 7, 4));
        self.encoded.fetch_add(1, Ordering::Relaxed);
        let v = i32s(src);
        if !src.len().is_multiple_of(4) || v.len() < 2 || dst.len() < 8 {
            return Ok(0);
        }
        let step = v[1].wrapping_sub(v[0]);
        if v.windows(2).any(|w| w[1].wrapping_sub(w[0]) != step) {
            return Ok(0);
        }
        dst[..4].copy_from_slice(&v[0].to_le_bytes());
        dst[4..8].copy_from_slice(&step.to_le_bytes());
        Ok(8)
    }

    fn decompress(&self, src: &[u8], dst: &mut [u8], call: &CodecCall) -> Result<usize> {
        assert_eq!((call.id, call.meta, call.typesize), (ID, 7, 4));
        self.decoded.fetch_add(1, Ordering::Relaxed);
        if src.len() != 8 || !dst.len().is_multiple_of(4) {
            return Err(oxiblosc::Error::Corrupt("not an arange stream".into()));
        }
        let (start, step) = (i32s(&src[..4])[0], i32s(&src[4..])[0]);
        for (i, d) in dst.chunks_exact_mut(4).enumerate() {
            d.copy_from_slice(
                &start
                    .wrapping_add(step.wrapping_mul(i as i32))
                    .to_le_bytes(),
            );
        }
        Ok(dst.len())
    }
}

fn codec() -> &'static Arange7 {
    static C: std::sync::OnceLock<Arc<Arange7>> = std::sync::OnceLock::new();
    C.get_or_init(|| {
        let c = Arc::new(Arange7 {
            encoded: AtomicUsize::new(0),
            decoded: AtomicUsize::new(0),
        });
        register_codec(ID, c.clone()).unwrap();
        c
    })
}

/// What the script's frames hold: `arange(30000, int32) * 3 + 11`.
fn expected() -> Vec<u8> {
    (0..30000i32)
        .flat_map(|i| (i * 3 + 11).to_le_bytes())
        .collect()
}

fn decode_all(frame: Vec<u8>) -> Vec<u8> {
    let mut sc = SChunk::from_cframe(frame).unwrap();
    assert_eq!(sc.nchunks(), 3);
    let mut out = Vec::new();
    for i in 0..sc.nchunks() {
        let chunk = sc.get_chunk(i).unwrap().into_owned();
        // Codec format 6, the user id in byte 22 and its meta in byte 23.
        assert_eq!((chunk[2] >> 5, chunk[22], chunk[23]), (6, ID, 7));
        assert!(chunk.len() < 100, "chunk {i}: {} bytes", chunk.len());
        out.extend(sc.decompress_chunk_vec(i).unwrap());
    }
    out
}

#[test]
fn a_frame_c_blosc2_wrote_with_a_user_codec_decodes() {
    let c = codec();
    let before = c.decoded.load(Ordering::Relaxed);
    let frame =
        std::fs::read(support::repo().join("tests/data/user_codec/arange7.b2frame")).unwrap();
    assert_eq!(decode_all(frame), expected());
    assert!(c.decoded.load(Ordering::Relaxed) >= before + 3);
}

#[test]
fn python_blosc2_and_we_read_each_others_user_codec_frames() {
    let c = codec();
    let py = support::pyenv::python_with(
        "pydeps",
        &["blosc2==4.14.1"],
        "import blosc2; assert blosc2.__version__ == '4.14.1'",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    // Theirs, made now, decodes here.
    let out = py
        .command()
        .arg(support::repo().join("tests/support/user_codec.py"))
        .arg("write")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(decode_all(out.stdout), expected());
    // Ours decodes there.
    let before = c.encoded.load(Ordering::Relaxed);
    let mut p = CParams::default()
        .codec(Codec::User(ID))
        .typesize(4)
        .filters(&[]);
    p.codec_meta = 7;
    let mut sc = SChunk::new(p).unwrap();
    let data = expected();
    for part in data.chunks(40000) {
        sc.append_buffer(part).unwrap();
    }
    assert!(c.encoded.load(Ordering::Relaxed) >= before + 3);
    let ours = sc.to_cframe().unwrap();
    assert_eq!(decode_all(ours.clone()), data);
    let mut child = py
        .command()
        .arg(support::repo().join("tests/support/user_codec.py"))
        .arg("read")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child.stdin.take().unwrap().write_all(&ours).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "ok 3");
}
