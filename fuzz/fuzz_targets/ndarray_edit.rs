//! NDArray edits against a model (since session 19): an array of any
//! geometry (1-4 dimensions, item size, chunk and block shapes, lossless
//! compression parameters), in memory, in a file or in a directory, takes
//! a sequence of `get_slice`, `set_slice`, `resize`, `insert` and `append`
//! calls with arguments from the input, valid or not. The same calls run
//! on a plain C-order buffer (the model). Each call must work exactly when
//! its arguments are valid by the documented rules; one that works leaves
//! the array equal to the model, one that fails leaves it as it was (and
//! `meta` unchanged). After each call the array reads whole as the model,
//! its `b2nd` metalayer reopens with the model's shape, and its frame
//! written by `to_cframe` reopens; at the end a file or directory array
//! reopens from disk with the model's items. For one input in two the
//! `b2nd` metalayer sits past the header's first 512 bytes.
#![no_main]
use libfuzzer_sys::fuzz_target;
use oxiblosc::ndarray::{self, Layout, NdArray, NdMeta};
use oxiblosc::schunk::{OpenOptions, SChunk};
use oxiblosc::{CParams, Codec, Filter};

#[path = "common.rs"]
mod common;
#[path = "ndmodel.rs"]
mod ndmodel;
use ndmodel::{Call, Input, Model};

fn dir() -> std::path::PathBuf {
    std::env::temp_dir().join(format!("oxiblosc-fuzz-ndedit-{}", std::process::id()))
}

fuzz_target!(|inp: Input| {
    let g = &inp.geometry;
    let (shape, chunks, blocks, is) = g.shapes();
    let dtype = NdMeta::default_dtype(is);
    let mut meta = NdMeta::new(&shape, &chunks, &blocks, &dtype);
    let codec = [
        Codec::BloscLz,
        Codec::Lz4,
        Codec::Lz4Hc,
        Codec::Zlib,
        Codec::Zstd,
    ][usize::from(g.codec) % 5];
    let filters: Vec<Filter> = g
        .filter_codes()
        .into_iter()
        .map(|c| match c {
            1 => Filter::Shuffle,
            2 => Filter::BitShuffle,
            3 => Filter::Delta,
            _ => Filter::ByteDelta,
        })
        .collect();
    let cparams = CParams::default()
        .codec(codec)
        .clevel(g.clevel % 10)
        .filters(&filters)
        .nthreads(1);
    let mut model = Model::new(shape, chunks, is, g.init);
    // For one input in two, a 600-byte metalayer before `b2nd` puts it
    // past the header's first 512 bytes (an edit then writes it apart from
    // the chunk list: two old-or-new changes).
    let b = if g.backend & 4 != 0 {
        let layout = Layout::new(&meta, is).expect("a valid geometry lays out");
        let blocksize = if layout.nchunks() == 0 {
            0
        } else {
            layout.block_nbytes()
        };
        let b = SChunk::builder()
            .cparams(cparams.typesize(is).blocksize(blocksize))
            .meta("pad", &[0x5A; 600])
            .meta("b2nd", &meta.encode().expect("a valid metalayer encodes"));
        if layout.nchunks() > 0 {
            b.chunksize(layout.chunk_nbytes())
        } else {
            b
        }
    } else {
        ndarray::builder(&meta, cparams).expect("a valid geometry builds")
    }
    .fsync(false);
    let base = dir();
    let backend = g.backend % 4;
    let path = base.join(if backend == 2 { "a.b2nd" } else { "a.dir" });
    if backend >= 2 {
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir_all(&base).unwrap();
    }
    let built = match backend {
        2 => b.create_file(&path),
        3 => b.create_dir(&path),
        _ => b.build_memory(),
    };
    let mut sc = built.expect("a valid array builds");
    sc.set_dparams(common::dparams(1));
    ndarray::fill(&mut sc, &meta, &model.data).expect("a valid array fills");
    check(&mut sc, &meta, &model, "fill");
    for (k, op) in inp.ops.iter().take(12).enumerate() {
        let what = format!("op {k} {op:?}");
        let before = meta.clone();
        let p = model.plan(op);
        if Model::too_large(&p) {
            continue;
        }
        let r = run(&mut sc, &mut meta, &p.call, p.got.as_deref());
        match (&r, p.valid) {
            (Ok(()), true) => model.commit(p),
            (Err(e), false) => {
                assert!(
                    matches!(e, oxiblosc::Error::InvalidParam(_)),
                    "{what}: refused with {e}"
                );
                assert_eq!(
                    meta.shape, before.shape,
                    "{what}: a refused call changed meta"
                );
            }
            (Ok(()), false) => panic!("{what}: invalid arguments accepted"),
            (Err(e), true) => panic!("{what}: valid arguments refused: {e}"),
        }
        assert_eq!(meta.shape, model.shape, "{what}: meta");
        check(&mut sc, &meta, &model, &what);
    }
    if backend >= 2 {
        drop(sc);
        let sc = OpenOptions::new()
            .read_only(true)
            .open(&path)
            .expect("the array reopens from disk");
        let mut a = NdArray::open(sc).expect("the array reopens as an NDArray");
        assert_eq!(a.meta().shape, model.shape, "shape on disk");
        let v = a.to_vec().expect("the array on disk reads");
        assert!(v == model.data, "the array on disk differs from the model");
        let _ = std::fs::remove_dir_all(&base);
    }
});

/// Run `call` on the array; a `Get` that works must give `got` (when the
/// model has it).
fn run(
    sc: &mut SChunk,
    meta: &mut NdMeta,
    call: &Call,
    got: Option<&[u8]>,
) -> oxiblosc::Result<()> {
    match call {
        Call::Get {
            start,
            stop,
            bshape,
        } => {
            let len = ndmodel::nitems(bshape) as usize * sc.typesize();
            let mut dst = vec![0xEEu8; len];
            ndarray::get_slice(sc, meta, start, stop, &mut dst, bshape)?;
            if let Some(want) = got {
                assert!(
                    dst == want,
                    "get_slice {start:?}..{stop:?} differs from the model"
                );
            }
            Ok(())
        }
        Call::Set {
            start,
            stop,
            bshape,
            src,
        } => ndarray::set_slice(sc, meta, start, stop, src, bshape),
        Call::Resize { shape, start } => ndarray::resize(sc, meta, shape, start.as_deref()),
        Call::Insert {
            axis,
            pos,
            src,
            append,
        } => {
            if *append {
                ndarray::append(sc, meta, src, *axis)
            } else {
                ndarray::insert(sc, meta, src, *axis, *pos)
            }
        }
    }
}

/// The array equals the model: read whole through `get_slice`, and as an
/// `NdArray` opened from the frame `to_cframe` writes (its metalayer gives
/// the model's shape).
fn check(sc: &mut SChunk, meta: &NdMeta, m: &Model, what: &str) {
    let n = m.shape.len();
    let len = m.data.len();
    let mut all = vec![0xEEu8; len];
    ndarray::get_slice(sc, meta, &vec![0; n], &m.shape, &mut all, &m.shape)
        .unwrap_or_else(|e| panic!("{what}: the whole array does not read: {e}"));
    assert!(all == m.data, "{what}: the array differs from the model");
    common::must_reopen(sc, what);
    let frame = sc.to_cframe().expect("to_cframe");
    let again = SChunk::from_cframe(frame).expect("the frame reopens");
    let mut a = NdArray::open(again)
        .unwrap_or_else(|e| panic!("{what}: the frame does not open as an NDArray: {e}"));
    assert_eq!(a.meta().shape, m.shape, "{what}: the metalayer's shape");
    let v = a
        .to_vec()
        .unwrap_or_else(|e| panic!("{what}: the frame's array does not read: {e}"));
    assert!(
        v == m.data,
        "{what}: the frame's array differs from the model"
    );
}
