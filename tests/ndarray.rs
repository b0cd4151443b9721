//! NDArrays (`b2nd`) and `.npy` files: the vectors python-blosc2 wrote
//! (no Python needed), arrays python-blosc2 writes now in 0 to 4
//! dimensions with padded edge chunks and blocks in several dtypes, arrays
//! we write opened by python-blosc2, `.npy` files against NumPy's, the CLI
//! round trip, and hostile metalayers.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use oxiblosc::ndarray::{self, NdArray, NdMeta, npy};
use oxiblosc::schunk::SChunk;
use oxiblosc::{CParams, Codec};
use serde_json::{Value, json};
use support::corpus;

const BIN: &str = env!("CARGO_BIN_EXE_oxiblosc");

/// The NDArray vectors of `tests/data` (frames and a sparse frame written
/// by python-blosc2 4.14.1) and the manifest entry of each.
fn b2nd_vectors() -> Vec<Value> {
    let v: Vec<Value> = corpus::vectors(&["frame", "sframe"])
        .into_iter()
        .filter(|v| !v["frame"]["b2nd"].is_null())
        .collect();
    assert!(v.len() >= 6, "the b2nd vectors are in tests/data");
    v
}

fn open_vector(v: &Value) -> SChunk {
    SChunk::open(corpus::data_dir().join(v["path"].as_str().unwrap())).unwrap()
}

fn dims(v: &Value) -> Vec<u64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_u64().unwrap())
        .collect()
}

#[test]
fn vectors_written_by_python_blosc2_decode_to_the_c_order_array() {
    for v in b2nd_vectors() {
        let name = v["name"].as_str().unwrap();
        let want = &v["frame"]["b2nd"];
        let mut a = NdArray::open(open_vector(&v)).unwrap();
        let m = a.meta().clone();
        assert_eq!(m.shape, dims(&want["shape"]), "{name}");
        assert_eq!(m.chunkshape, dims(&want["chunks"]), "{name}");
        assert_eq!(m.blockshape, dims(&want["blocks"]), "{name}");
        assert_eq!(m.dtype, want["dtype"].as_str().unwrap(), "{name}");
        let data = a.to_vec().unwrap();
        assert_eq!(data.len() as u64, want["array_nbytes"].as_u64().unwrap());
        assert_eq!(
            corpus::sha256_hex(&data),
            want["array_sha256"].as_str().unwrap(),
            "{name}"
        );
        // The padded chunks are larger than the array wherever an edge is
        // padded: the old behaviour (the chunks' bytes) was wrong.
        if let Some(f) = want["array_file"].as_str() {
            let f = Path::new(f).file_name().unwrap();
            let exp = std::fs::read(corpus::data_dir().join("expected").join(f)).unwrap();
            assert_eq!(data, exp, "{name}");
        }
        // write_to (slab by slab) gives the same bytes as to_vec.
        let mut streamed = Vec::new();
        let mut a = NdArray::open(open_vector(&v)).unwrap();
        a.write_to(&mut streamed).unwrap();
        assert_eq!(streamed, data, "{name}");
    }
}

#[test]
fn the_cli_decompresses_a_b2nd_vector_to_its_array_not_its_padded_chunks() {
    let dir = support::tempdir("nd-cli-vec");
    for v in b2nd_vectors() {
        let name = v["name"].as_str().unwrap();
        let input = corpus::data_dir().join(v["path"].as_str().unwrap());
        let raw = dir.join(format!("{name}.raw"));
        let out = Command::new(BIN)
            .arg("decompress")
            .arg(&input)
            .arg(&raw)
            .output()
            .unwrap();
        assert!(out.status.success(), "{name}: {out:?}");
        let data = std::fs::read(&raw).unwrap();
        let want = &v["frame"]["b2nd"];
        assert_eq!(
            data.len() as u64,
            want["array_nbytes"].as_u64().unwrap(),
            "{name}"
        );
        assert_eq!(
            corpus::sha256_hex(&data),
            want["array_sha256"].as_str().unwrap()
        );
        // As .npy: our header, then the same bytes.
        let npy_path = dir.join(format!("{name}.npy"));
        let out = Command::new(BIN)
            .arg("decompress")
            .arg(&input)
            .arg(&npy_path)
            .output()
            .unwrap();
        assert!(out.status.success(), "{name}: {out:?}");
        let file = std::fs::read(&npy_path).unwrap();
        let (h, start) = npy::read_header(&file).unwrap();
        assert_eq!(h.shape, dims(&want["shape"]));
        assert_eq!(h.dtype, want["dtype"].as_str().unwrap());
        assert_eq!(&file[start..], &data[..]);
        // `verify` decodes it the same way.
        let out = Command::new(BIN)
            .arg("verify")
            .arg(&input)
            .output()
            .unwrap();
        assert!(out.status.success(), "{name}: {out:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn info_shows_the_array_and_decodes_msgpack_metalayers() {
    let v = b2nd_vectors()
        .into_iter()
        .find(|v| v["name"] == "f21_b2nd_asarray_2d_i4")
        .unwrap();
    let input = corpus::data_dir().join(v["path"].as_str().unwrap());
    let out = Command::new(BIN).arg("info").arg(&input).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    for line in [
        "[0, 2, [100, 130], [32, 64], [8, 16], 0, \"<i4\"]",
        "shape       (100, 130)",
        "chunks      (32, 64)",
        "blocks      (8, 16)",
        "dtype       <i4",
        "52000 bytes in 12 padded chunks of 8192 bytes",
        "\"m/s\"",
    ] {
        assert!(text.contains(line), "{line:?} missing in:\n{text}");
    }
    let out = Command::new(BIN)
        .args(["info", "--json"])
        .arg(&input)
        .output()
        .unwrap();
    let j: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        j["ndarray"],
        json!({"metalayer": "b2nd", "shape": [100, 130], "chunks": [32, 64],
               "blocks": [8, 16], "dtype": "<i4"})
    );
    assert_eq!(
        j["metalayers"][0]["value"],
        "[0, 2, [100, 130], [32, 64], [8, 16], 0, \"<i4\"]"
    );
}

/// The f21 vector with its `b2nd` metalayer's bytes changed by `edit`.
fn patched_f21(edit: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
    let mut frame =
        std::fs::read(corpus::data_dir().join("frames/f21_b2nd_asarray_2d_i4.b2nd")).unwrap();
    let meta = NdMeta::new(&[100, 130], &[32, 64], &[8, 16], "<i4")
        .encode()
        .unwrap();
    let at = frame
        .windows(meta.len())
        .position(|w| w == meta.as_slice())
        .expect("the metalayer is in the frame");
    let mut m = meta.clone();
    edit(&mut m);
    assert_eq!(m.len(), meta.len(), "edits keep the length");
    frame[at..at + m.len()].copy_from_slice(&m);
    frame
}

fn open_bytes(frame: Vec<u8>) -> oxiblosc::Result<Vec<u8>> {
    let sc = SChunk::from_cframe(frame)?;
    NdArray::open(sc)?.to_vec()
}

#[test]
fn hostile_metalayers_are_errors() {
    let with = |m: NdMeta| {
        patched_f21(|b| {
            let new = m.encode().unwrap();
            b.copy_from_slice(&new);
        })
    };
    assert!(open_bytes(patched_f21(|_| ())).is_ok());
    let cases: Vec<(&str, Vec<u8>)> = vec![
        // ndim 3 with two-entry lists.
        ("wrong ndim", patched_f21(|b| b[2] = 3)),
        ("ndim 0", patched_f21(|b| b[2] = 0)),
        // Shapes that disagree with the number of chunks or their size.
        (
            "more chunks",
            with(NdMeta::new(&[100, 200], &[32, 64], &[8, 16], "<i4")),
        ),
        (
            "fewer chunks",
            with(NdMeta::new(&[10, 130], &[32, 64], &[8, 16], "<i4")),
        ),
        (
            "smaller chunks",
            with(NdMeta::new(&[100, 130], &[32, 32], &[8, 16], "<i4")),
        ),
        (
            "other blocks",
            with(NdMeta::new(&[100, 130], &[32, 64], &[8, 32], "<i4")),
        ),
        (
            "block over chunk",
            with(NdMeta::new(&[100, 130], &[32, 64], &[64, 16], "<i4")),
        ),
        // Overflow: the array's size, and a chunk over 2 GiB.
        (
            "shape overflow",
            with(NdMeta::new(
                &[i64::MAX as u64, 130],
                &[32, 64],
                &[8, 16],
                "<i4",
            )),
        ),
        (
            "chunk overflow",
            with(NdMeta::new(
                &[100, 130],
                &[i32::MAX as u64, 64],
                &[8, 16],
                "<i4",
            )),
        ),
        (
            "zero chunk",
            with(NdMeta::new(&[100, 130], &[0, 64], &[0, 16], "<i4")),
        ),
        (
            "dtype size",
            with(NdMeta::new(&[100, 130], &[32, 64], &[8, 16], "<f8")),
        ),
        ("not msgpack", patched_f21(|b| b[0] = 0xc1)),
    ];
    for (what, frame) in cases {
        let r = open_bytes(frame);
        assert!(r.is_err(), "{what}: {r:?}");
    }
    // A block shape other than the one the chunks were written with: the
    // slice readers refuse it too (before session 18, `get_slice` decoded
    // the chunks whole and read them with the wrong layout).
    let m = NdMeta::new(&[100, 130], &[32, 64], &[8, 32], "<i4");
    let mut sc = SChunk::from_cframe(with(m.clone())).unwrap();
    let mut box_ = vec![0u8; 10 * 10 * 4];
    let r = ndarray::get_slice(&mut sc, &m, &[3, 3], &[13, 13], &mut box_, &[10, 10]);
    assert!(r.is_err(), "other blocks, get_slice: {r:?}");
    // Every bit of the metalayer flipped: an Err or the right-sized array,
    // never a panic.
    let n = NdMeta::new(&[100, 130], &[32, 64], &[8, 16], "<i4")
        .encode()
        .unwrap()
        .len();
    for i in 0..n {
        for bit in 0..8 {
            if let Ok(v) = open_bytes(patched_f21(|b| b[i] ^= 1 << bit)) {
                assert!(v.len() <= 100 * 130 * 4 * 2, "byte {i} bit {bit}");
            }
        }
    }
}

#[test]
fn the_cli_refuses_a_hostile_b2nd_with_one_line_and_no_output() {
    let dir = support::tempdir("nd-cli-hostile");
    let bad = dir.join("bad.b2nd");
    std::fs::write(
        &bad,
        patched_f21(|b| {
            b.copy_from_slice(
                &NdMeta::new(&[100, 200], &[32, 64], &[8, 16], "<i4")
                    .encode()
                    .unwrap(),
            )
        }),
    )
    .unwrap();
    let out_path = dir.join("out.npy");
    let out = Command::new(BIN)
        .arg("decompress")
        .arg(&bad)
        .arg(&out_path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("NDArray") && err.contains("chunks"), "{err}");
    assert!(!out_path.exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn caterva_metalayers_are_read_with_a_default_dtype() {
    // [0, 2, [6, 10], [4, 5], [2, 5]]: the five-entry caterva layout (no
    // dtype), in compact msgpack integers.
    let raw = [0x95, 0, 2, 0x92, 6, 10, 0x92, 4, 5, 0x92, 2, 5];
    let data: Vec<u8> = (0..60u8).collect();
    let meta = NdMeta::new(&[6, 10], &[4, 5], &[2, 5], "|u1");
    let mut sc = SChunk::builder()
        .cparams(CParams::default().typesize(1).blocksize(10))
        .chunksize(40)
        .meta("caterva", &raw)
        .build_memory()
        .unwrap();
    // The same geometry as the b2nd writer's.
    ndarray::fill(&mut sc, &meta, &data).unwrap();
    let mut a = NdArray::open(sc).unwrap();
    assert_eq!(a.meta_name(), "caterva");
    assert!(!a.meta().has_dtype);
    assert_eq!(a.meta().dtype, "|u1");
    assert_eq!(a.to_vec().unwrap(), data);
}

/// Real `caterva` files (the five-entry metalayer, no dtype) written by
/// python-caterva 0.7.3 (C-Blosc2 2.x) with padded edge chunks and blocks,
/// each beside the `.npy` NumPy saved of the same array:
/// `cat.asarray(np.arange(117, dtype='<u2').reshape(9, 13), chunks=(4, 5),
/// blocks=(3, 2), urlpath=..., contiguous=True)` and a 5×7×6 float64 array
/// of normal noise in chunks (2, 4, 6), blocks (2, 3, 3), ZSTD level 5.
#[test]
fn caterva_files_decode_to_numpys_bytes() {
    for (name, shape, chunks, blocks, itemsize) in [
        ("caterva_2d_u2", vec![9, 13], vec![4, 5], vec![3, 2], 2),
        (
            "caterva_3d_f8",
            vec![5, 7, 6],
            vec![2, 4, 6],
            vec![2, 3, 3],
            8,
        ),
    ] {
        let dir = corpus::data_dir();
        let npy_file = std::fs::read(dir.join(format!("{name}.npy"))).unwrap();
        let (h, start) = npy::read_header(&npy_file).unwrap();
        assert_eq!(h.shape, shape);
        let mut a = NdArray::open(SChunk::open(dir.join(format!("{name}.b2nd"))).unwrap()).unwrap();
        assert_eq!(a.meta_name(), "caterva", "{name}");
        assert_eq!(
            (&a.meta().shape, &a.meta().chunkshape, &a.meta().blockshape),
            (&shape, &chunks, &blocks)
        );
        assert!(!a.meta().has_dtype);
        assert_eq!(a.meta().dtype, NdMeta::default_dtype(itemsize));
        assert_eq!(a.to_vec().unwrap(), &npy_file[start..], "{name}");
    }
}

/// An array of 16 dimensions (`B2ND_MAX_DIM`) written by python-blosc2
/// 4.14.1 (C-Blosc2 3.3.5) beside the `.npy` NumPy saved of it:
/// `blosc2.asarray((np.arange(384, dtype=np.uint16) * 7).reshape(2, 3, 1,
/// 1, 1, 1, 8, 1, 2, 2, 1, 1, 1, 1, 1, 2), chunks=(1, 2, 1, 1, 1, 2, 1, 2,
/// 1, 1, 1, 1, 1, 1, 1, 1), blocks=(1,) * 16, urlpath=...,
/// contiguous=True)`. Its metalayer marks each shape list `0xa0` (C's
/// `0x90 + ndim`), which is no msgpack array of 16: until session 33 it
/// did not open ("279 bytes after its value").
#[test]
fn a_sixteen_dimension_array_of_python_blosc2_decodes() {
    let dir = corpus::data_dir();
    let npy_file = std::fs::read(dir.join("b2nd_16d_u2.npy")).unwrap();
    let (h, start) = npy::read_header(&npy_file).unwrap();
    let path = dir.join("b2nd_16d_u2.b2nd");
    let mut a = NdArray::open(SChunk::open(&path).unwrap()).unwrap();
    assert_eq!(a.meta().shape, h.shape);
    assert_eq!(a.meta().chunkshape[..8], [1, 2, 1, 1, 1, 2, 1, 2]);
    assert_eq!(a.to_vec().unwrap(), &npy_file[start..]);
    // Its metalayer is the one encode writes, byte for byte.
    let raw = a.schunk().meta_get("b2nd").unwrap().to_vec();
    assert_eq!(a.meta().encode().unwrap(), raw);
}

/// An array whose blocks are longer than its chunks in two dimensions
/// (the chunk is then one block, padded), written by C-Blosc2 3.3.5's
/// `b2nd_from_cbuffer` (typesize 2, `nthreads` 1, contiguous, dtype
/// `<i2`, shape 5x5x5x5, chunks (2, 5, 10, 5), blocks (5, 2, 5, 2), item
/// `i` = `i * 7 - 300`); python-blosc2 refuses to make one, C-Blosc2's
/// own test `b2nd/test_b2nd_concatenate` does. Until session 34 both the
/// metalayer decoder and the layout refused it. Read whole, in boxes, and
/// made again by ours to the same items.
#[test]
fn blocks_longer_than_chunks_as_c_blosc2_writes_them() {
    let want: Vec<u8> = (0..625i32)
        .flat_map(|i| ((i * 7 - 300) as i16).to_le_bytes())
        .collect();
    let path = corpus::data_dir().join("b2nd_block_over_chunk_i2.b2nd");
    let mut a = NdArray::open(SChunk::open(&path).unwrap()).unwrap();
    assert_eq!(a.meta().blockshape, [5, 2, 5, 2]);
    assert_eq!(a.layout().chunk_nbytes(), 3600);
    assert_eq!(a.to_vec().unwrap(), want);
    let meta = a.meta().clone();
    let mut sc = a.into_schunk();
    let (lo, hi) = ([1u64, 2, 0, 3], [4u64, 5, 5, 5]);
    let shape: Vec<u64> = (0..4).map(|d| hi[d] - lo[d]).collect();
    let mut got = vec![0u8; 2 * shape.iter().product::<u64>() as usize];
    ndarray::get_slice(&mut sc, &meta, &lo, &hi, &mut got, &shape).unwrap();
    let mut naive = Vec::new();
    for i in lo[0]..hi[0] {
        for j in lo[1]..hi[1] {
            for k in lo[2]..hi[2] {
                for l in lo[3]..hi[3] {
                    let at = (((i * 5 + j) * 5 + k) * 5 + l) as usize * 2;
                    naive.extend_from_slice(&want[at..at + 2]);
                }
            }
        }
    }
    assert_eq!(got, naive);
    let mut ours = ndarray::create(&meta, CParams::default(), &want).unwrap();
    assert_eq!(ours.nchunks(), 3);
    let back = SChunk::from_cframe(ours.to_cframe().unwrap()).unwrap();
    assert_eq!(NdArray::open(back).unwrap().to_vec().unwrap(), want);
}

/// The differential cases: shape, dtype, chunks and blocks (None: the
/// writer's defaults). Padded edge chunks and blocks in 1 to 4 dimensions,
/// a 0-dimensional and an empty array.
fn cases() -> Vec<Value> {
    let mut all = fixed_cases();
    // Plus seeded random geometries in 1 to 4 dimensions.
    let mut rng = support::Rng(0x0b2d_ca5e);
    // (Not `|V3`: python-blosc2 records a void dtype as `[('f0', 'V3')]`.)
    let dtypes = ["|u1", "<i2", ">u4", "<f8", "<c16", "|S3"];
    for _ in 0..12 {
        let ndim = 1 + rng.below(4) as usize;
        let (mut shape, mut chunks, mut blocks) = (vec![], vec![], vec![]);
        for _ in 0..ndim {
            let s = 1 + rng.below(if ndim > 2 { 12 } else { 40 });
            let c = 1 + rng.below(s + 3);
            shape.push(s);
            chunks.push(c);
            blocks.push(1 + rng.below(c));
        }
        let dtype = dtypes[rng.below(dtypes.len() as u64) as usize];
        all.push(json!({"shape": shape, "dtype": dtype, "chunks": chunks, "blocks": blocks}));
    }
    all
}

fn fixed_cases() -> Vec<Value> {
    json!([
        {"shape": [1000], "dtype": "<f8", "chunks": [300], "blocks": [64]},
        {"shape": [37], "dtype": "|u1", "chunks": [10], "blocks": [4]},
        {"shape": [7, 5], "dtype": "<i2", "chunks": [3, 4], "blocks": [2, 3]},
        {"shape": [100, 130], "dtype": ">i4", "chunks": [32, 64], "blocks": [8, 16]},
        {"shape": [33, 17], "dtype": "<c8", "chunks": [16, 8], "blocks": [5, 3]},
        {"shape": [10, 21, 17], "dtype": "<f4", "chunks": [5, 10, 10], "blocks": [2, 5, 5]},
        {"shape": [9, 8, 7], "dtype": "|b1", "chunks": [4, 3, 5], "blocks": [3, 2, 2]},
        {"shape": [5, 6, 7], "dtype": "<u2", "chunks": [5, 6, 7], "blocks": [5, 6, 7]},
        {"shape": [13, 11, 9], "dtype": ">f8", "chunks": [6, 6, 6], "blocks": [4, 3, 5]},
        {"shape": [3, 4, 5, 6], "dtype": "<i4", "chunks": [2, 3, 4, 5], "blocks": [1, 2, 3, 2]},
        {"shape": [6, 4], "dtype": "<U3", "chunks": [4, 3], "blocks": [2, 2]},
        {"shape": [200, 50], "dtype": "<i8", "chunks": null, "blocks": null},
        {"shape": [], "dtype": "<f8", "chunks": null, "blocks": null},
        {"shape": [0, 5], "dtype": "<f4", "chunks": null, "blocks": null},
    ])
    .as_array()
    .unwrap()
    .clone()
}

/// The oracle script, run by python-blosc2 4.14.1 (C-Blosc2 3.3.5).
const SCRIPT: &str = r#"
import sys, json, os
import numpy as np, blosc2
mode, d = sys.argv[1], sys.argv[2]
cases = json.load(open(os.path.join(d, "cases.json")))
rng = np.random.default_rng(20261124)
out = []
for i, c in enumerate(cases):
    dt = np.dtype(c["dtype"])
    shape = tuple(c["shape"])
    if mode == "write":
        n = int(np.prod(shape, dtype=np.int64))
        raw = rng.integers(0, 256, n * dt.itemsize, dtype=np.uint8)
        if dt.kind == "b":
            raw %= 2
        if dt.kind == "U":
            raw = rng.integers(0x41, 0x5b, n * 3, dtype=np.uint32).view(np.uint8)
        a = np.frombuffer(raw.tobytes(), dtype=dt).reshape(shape)
        kw = {}
        if c["chunks"] is not None:
            kw = dict(chunks=tuple(c["chunks"]), blocks=tuple(c["blocks"]))
        path = os.path.join(d, "py%d.b2nd" % i)
        b = blosc2.asarray(a, urlpath=path, mode="w", **kw)
        np.save(os.path.join(d, "py%d.npy" % i), a)
        out.append({"chunks": list(b.chunks), "blocks": list(b.blocks)})
    else:
        a = blosc2.open(os.path.join(d, "ours%d.b2nd" % i))
        want = np.load(os.path.join(d, "ours%d.npy" % i))
        got = a[()]
        out.append({
            "type": type(a).__name__,
            "shape": list(a.shape),
            "dtype": a.dtype.str,
            "chunks": list(a.chunks),
            "blocks": list(a.blocks),
            "npy_shape": list(want.shape),
            "npy_dtype": want.dtype.str,
            "equal": bool(np.asarray(got).tobytes() == want.tobytes()),
        })
if mode == "write":
    # A structured dtype: carried as its description, sized by the typesize.
    a = np.zeros((5, 3), dtype=[("a", "<i4"), ("b", "<f8")])
    a["a"] = np.arange(15).reshape(5, 3)
    a["b"] = 1.5
    blosc2.asarray(a, urlpath=os.path.join(d, "pystruct.b2nd"), mode="w", chunks=(2, 2), blocks=(1, 2))
    np.save(os.path.join(d, "pystruct.npy"), a)
print(json.dumps(out))
"#;

fn oracle(mode: &str, dir: &Path) -> Vec<Value> {
    let script = dir.join("nd_oracle.py");
    std::fs::write(&script, SCRIPT).unwrap();
    // An absolute script path: `run_script` joins it onto tests/support.
    let out =
        support::cblosc2::run_script(script.to_str().unwrap(), &[mode, dir.to_str().unwrap()])
            .unwrap_or_else(|e| panic!("the python-blosc2 oracle failed: {e}"));
    serde_json::from_str::<Value>(out.trim())
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

fn write_cases(dir: &Path) -> Vec<Value> {
    let cases = cases();
    std::fs::write(
        dir.join("cases.json"),
        Value::Array(cases.clone()).to_string(),
    )
    .unwrap();
    cases
}

#[test]
fn arrays_python_blosc2_writes_decode_to_numpys_bytes() {
    let dir = support::tempdir("nd-from-python");
    let cases = write_cases(&dir);
    let written = oracle("write", &dir);
    for (i, c) in cases.iter().enumerate() {
        let npy_file = std::fs::read(dir.join(format!("py{i}.npy"))).unwrap();
        // Our .npy reader on NumPy's file.
        let (h, start) = npy::read_header(&npy_file).unwrap();
        assert_eq!(h.shape, dims(&c["shape"]), "case {i}");
        assert_eq!(h.dtype, c["dtype"].as_str().unwrap(), "case {i}");
        let want = &npy_file[start..];
        let mut a = NdArray::open(SChunk::open(dir.join(format!("py{i}.b2nd"))).unwrap())
            .unwrap_or_else(|e| panic!("case {i} {c}: {e}"));
        assert_eq!(a.meta().shape, dims(&c["shape"]), "case {i}");
        assert_eq!(a.meta().chunkshape, dims(&written[i]["chunks"]), "case {i}");
        assert_eq!(a.meta().blockshape, dims(&written[i]["blocks"]), "case {i}");
        assert_eq!(a.to_vec().unwrap(), want, "case {i} {c}");
        // Our .npy of it is byte for byte NumPy's np.save.
        let mut ours = Vec::new();
        a.write_npy(&mut ours).unwrap();
        assert_eq!(ours.len(), npy_file.len(), "case {i} {c}");
        assert!(
            ours == npy_file,
            "case {i} {c}: .npy bytes differ from np.save's"
        );
    }
    // The structured array: its .npy is np.save's too.
    let mut a = NdArray::open(SChunk::open(dir.join("pystruct.b2nd")).unwrap()).unwrap();
    assert_eq!(a.meta().dtype, "[('a', '<i4'), ('b', '<f8')]");
    let mut ours = Vec::new();
    a.write_npy(&mut ours).unwrap();
    assert_eq!(ours, std::fs::read(dir.join("pystruct.npy")).unwrap());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn arrays_we_write_open_in_python_blosc2_as_ndarrays() {
    let dir = support::tempdir("nd-to-python");
    let cases = write_cases(&dir);
    let mut rng = support::Rng(0x5eed_0b2d);
    let mut expect = Vec::new();
    for (i, c) in cases.iter().enumerate() {
        let shape = dims(&c["shape"]);
        let dtype = c["dtype"].as_str().unwrap();
        let is = ndarray::dtype_itemsize(dtype).unwrap();
        let (chunks, blocks) = if c["chunks"].is_null() {
            ndarray::default_shapes(&shape, is)
        } else {
            (dims(&c["chunks"]), dims(&c["blocks"]))
        };
        let n = shape.iter().product::<u64>() as usize * is;
        let mut data: Vec<u8> = (0..n).map(|_| rng.next() as u8).collect();
        if dtype == "|b1" {
            data.iter_mut().for_each(|b| *b &= 1);
        }
        if dtype == "<U3" {
            // UCS-4 code points 'A'..'Z'.
            for (k, b) in data.iter_mut().enumerate() {
                *b = if k % 4 == 0 { b'A' + *b % 26 } else { 0 };
            }
        }
        let meta = NdMeta::new(&shape, &chunks, &blocks, dtype);
        let codec = [Codec::Zstd, Codec::Lz4, Codec::BloscLz][i % 3];
        let sc = ndarray::create(&meta, CParams::default().codec(codec), &data).unwrap();
        let mut sc = sc;
        std::fs::write(dir.join(format!("ours{i}.b2nd")), sc.to_cframe().unwrap()).unwrap();
        let mut f = npy::NpyHeader {
            dtype: dtype.to_string(),
            shape: shape.clone(),
        }
        .encode();
        f.extend_from_slice(&data);
        std::fs::write(dir.join(format!("ours{i}.npy")), &f).unwrap();
        // And we read back what we wrote.
        let mut a = NdArray::open(SChunk::from_cframe(sc.to_cframe().unwrap()).unwrap()).unwrap();
        assert_eq!(a.to_vec().unwrap(), data, "case {i}");
        expect.push((shape, chunks, blocks, dtype.to_string()));
    }
    let got = oracle("check", &dir);
    for (i, (shape, chunks, blocks, dtype)) in expect.iter().enumerate() {
        let g = &got[i];
        assert_eq!(g["type"], "NDArray", "case {i}: {g}");
        assert_eq!(&dims(&g["shape"]), shape, "case {i}: {g}");
        assert_eq!(
            &dims(&g["npy_shape"]),
            shape,
            "case {i}: np.load reads our .npy"
        );
        assert_eq!(g["dtype"].as_str().unwrap(), dtype, "case {i}: {g}");
        assert_eq!(g["npy_dtype"].as_str().unwrap(), dtype, "case {i}: {g}");
        if !shape.contains(&0) {
            assert_eq!(&dims(&g["chunks"]), chunks, "case {i}: {g}");
            assert_eq!(&dims(&g["blocks"]), blocks, "case {i}: {g}");
        }
        assert_eq!(g["equal"], true, "case {i}: values differ: {g}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

fn npy_of(shape: &[u64], dtype: &str, data: &[u8]) -> Vec<u8> {
    let mut f = npy::NpyHeader {
        dtype: dtype.to_string(),
        shape: shape.to_vec(),
    }
    .encode();
    f.extend_from_slice(data);
    f
}

/// Run the CLI with `args` (strings or paths).
fn run<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> std::process::Output {
    Command::new(BIN).args(args).output().unwrap()
}

/// A `.npy` compressed to stdout (or another output that is not a regular
/// file) is built in memory and its frame streamed out
/// (`SChunk::write_cframe`, since session 39): the bytes are the array's
/// frame, and an output that fails every write (`/dev/full`) is an error
/// that names it.
#[test]
fn cli_npy_to_stdout_streams_the_frame() {
    let dir = support::tempdir("nd-cli-stdout");
    let data = support::data(3000 * 8, 5);
    let input = npy_of(&[300, 10], "<f8", &data);
    let npy = dir.join("a.npy");
    std::fs::write(&npy, &input).unwrap();
    let out = run(&[
        PathBuf::from("compress"),
        "--format".into(),
        "frame".into(),
        "--chunkshape".into(),
        "64,10".into(),
        npy.clone(),
        "-".into(),
    ]);
    assert!(out.status.success(), "{out:?}");
    let sc = SChunk::from_cframe(out.stdout).unwrap();
    let mut a = NdArray::open(sc).unwrap();
    assert_eq!(a.meta().shape, [300, 10]);
    assert_eq!(a.meta().chunkshape, [64, 10]);
    assert!(a.to_vec().unwrap() == data);
    if std::path::Path::new("/dev/full").exists() {
        let out = run(&[
            PathBuf::from("compress"),
            "-f".into(),
            npy.clone(),
            "/dev/full".into(),
        ]);
        assert!(!out.status.success(), "{out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("cannot write") && err.contains("/dev/full"),
            "{err}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn cli_round_trip_npy_to_b2nd_to_npy() {
    let dir = support::tempdir("nd-cli-rt");
    let p = |n: &str| -> PathBuf { dir.join(n) };
    let data = support::data(3080 * 4, 3);
    /// Shape, dtype, and `--chunkshape` / `--blockshape` (None: defaults).
    type Case<'a> = (&'a [u64], &'a str, Option<(&'a str, &'a str)>);
    let shapes: [Case; 4] = [
        (&[7, 11, 5], ">i8", Some(("3,4,5", "2,3,2"))),
        (&[7, 11, 5], ">i8", None),
        (&[385, 8], "|u1", Some(("100,3", "7,2"))),
        (&[3080], "<f4", Some(("1000", "64"))),
    ];
    for (k, (shape, dtype, opts)) in shapes.iter().enumerate() {
        let is = ndarray::dtype_itemsize(dtype).unwrap();
        let n = shape.iter().product::<u64>() as usize * is;
        let input = npy_of(shape, dtype, &data[..n]);
        std::fs::write(p("a.npy"), &input).unwrap();
        let mut args: Vec<PathBuf> = vec!["compress".into(), "-f".into()];
        if let Some((c, b)) = opts {
            args.extend([
                "--chunkshape".into(),
                c.into(),
                "--blockshape".into(),
                b.into(),
            ]);
        }
        args.extend([p("a.npy"), p("a.b2nd")]);
        let out = run(&args);
        assert!(out.status.success(), "case {k}: {out:?}");
        let out = run(&[
            PathBuf::from("decompress"),
            PathBuf::from("-f"),
            p("a.b2nd"),
            p("b.npy"),
        ]);
        assert!(out.status.success(), "case {k}: {out:?}");
        assert_eq!(std::fs::read(p("b.npy")).unwrap(), input, "case {k}");
        let out = run(&[
            PathBuf::from("decompress"),
            PathBuf::from("-f"),
            p("a.b2nd"),
            p("b.raw"),
        ]);
        assert!(out.status.success(), "case {k}: {out:?}");
        assert_eq!(std::fs::read(p("b.raw")).unwrap(), &data[..n], "case {k}");
        let a = NdArray::open(SChunk::open(p("a.b2nd")).unwrap()).unwrap();
        assert_eq!(a.meta().shape, *shape);
        if let Some((c, _)) = opts {
            let want: Vec<u64> = c.split(',').map(|x| x.parse().unwrap()).collect();
            assert_eq!(a.meta().chunkshape, want);
        }
    }
    // A Fortran-ordered .npy and an object .npy are clear errors.
    for (dict, what) in [
        (
            "{'descr': '<f8', 'fortran_order': True, 'shape': (2, 2), }",
            "Fortran",
        ),
        (
            "{'descr': '|O', 'fortran_order': False, 'shape': (2,), }",
            "object",
        ),
    ] {
        let mut f = b"\x93NUMPY\x01\x00".to_vec();
        f.extend((dict.len() as u16).to_le_bytes());
        f.extend(dict.as_bytes());
        f.extend([0u8; 32]);
        std::fs::write(p("bad.npy"), &f).unwrap();
        let out = run(&[
            PathBuf::from("compress"),
            PathBuf::from("-f"),
            p("bad.npy"),
            p("bad.b2nd"),
        ]);
        assert_eq!(out.status.code(), Some(1), "{what}: {out:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(what),
            "{out:?}"
        );
        assert!(!p("bad.b2nd").exists());
    }
    // A sparse frame (directory) NDArray round trips too.
    let input = npy_of(&[7, 11, 5], ">i8", &data[..3080]);
    std::fs::write(p("a.npy"), &input).unwrap();
    let out = run(&[
        PathBuf::from("compress"),
        "--format".into(),
        "sframe".into(),
        "--chunkshape".into(),
        "3,4,5".into(),
        p("a.npy"),
        p("a.sframe"),
    ]);
    assert!(out.status.success(), "{out:?}");
    assert!(p("a.sframe").is_dir());
    let out = run(&[
        PathBuf::from("decompress"),
        "-f".into(),
        p("a.sframe"),
        p("c.npy"),
    ]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(std::fs::read(p("c.npy")).unwrap(), input);
    // Data shorter or longer than the header gives: clear errors, no OUT.
    let whole = npy_of(&[40, 4], "<i4", &data[..640]);
    for (what, f) in [
        ("ends before", whole[..whole.len() - 1].to_vec()),
        ("more than", [&whole[..], &[0u8]].concat()),
    ] {
        std::fs::write(p("odd.npy"), &f).unwrap();
        let out = run(&[PathBuf::from("compress"), p("odd.npy"), p("odd.b2nd")]);
        assert_eq!(out.status.code(), Some(1), "{what}: {out:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(what),
            "{out:?}"
        );
        assert!(!p("odd.b2nd").exists());
    }
    // --chunkshape of the wrong rank.
    std::fs::write(p("a.npy"), npy_of(&[4, 4], "|u1", &[1; 16])).unwrap();
    let out = run(&[
        PathBuf::from("compress"),
        PathBuf::from("-f"),
        PathBuf::from("--chunkshape"),
        PathBuf::from("2"),
        p("a.npy"),
        p("c.b2nd"),
    ]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let _ = std::fs::remove_dir_all(&dir);
}
