//! NDArray selections of items (`ndarray::{get_items, get_orthogonal,
//! set_orthogonal}`): checked against the whole array indexed by hand in 0
//! to 4 dimensions with padded edge chunks and blocks, repeated, unsorted
//! and empty selections, arrays of zero chunks, and bad input refused with
//! errors (a refused write leaving the array as it was).

mod support;
use support::Rng;

use oxiblosc::ndarray::{self, Layout, NdArray, NdMeta};
use oxiblosc::schunk::{Fill, SChunk};
use oxiblosc::{CParams, DParams, Error};

/// The reference: a C-order array of `shape` with items of `is` bytes.
#[derive(Clone, Debug, PartialEq)]
struct Model {
    shape: Vec<u64>,
    is: usize,
    data: Vec<u8>,
}

/// Every index of a box of shape `ext` from the origin, in C order.
fn indices(ext: &[u64]) -> Vec<Vec<u64>> {
    let mut out = vec![Vec::new()];
    for &e in ext {
        let mut next = Vec::new();
        for p in &out {
            for x in 0..e {
                let mut q = p.clone();
                q.push(x);
                next.push(q);
            }
        }
        out = next;
    }
    out
}

/// The C-order offset of `idx` in an array of `shape`.
fn ravel(idx: &[u64], shape: &[u64]) -> usize {
    idx.iter().zip(shape).fold(0, |a, (&x, &s)| a * s + x) as usize
}

impl Model {
    fn item(&self, at: usize) -> &[u8] {
        &self.data[at * self.is..(at + 1) * self.is]
    }

    fn items(&self, coords: &[u64]) -> Vec<u8> {
        coords
            .iter()
            .flat_map(|&f| self.item(f as usize).to_vec())
            .collect()
    }

    /// `buf` (of shape `bshape`) with the orthogonal selection read into it.
    fn get_orthogonal(&self, sel: &[Vec<u64>], bshape: &[u64], mut buf: Vec<u8>) -> Vec<u8> {
        let sizes: Vec<u64> = sel.iter().map(|s| s.len() as u64).collect();
        for p in indices(&sizes) {
            let x: Vec<u64> = p
                .iter()
                .enumerate()
                .map(|(d, &i)| sel[d][i as usize])
                .collect();
            let b = ravel(&p, bshape) * self.is;
            buf[b..b + self.is].copy_from_slice(self.item(ravel(&x, &self.shape)));
        }
        buf
    }

    /// The selection written from `src`, in C order of the buffer (a
    /// repeated index's later place written last).
    fn set_orthogonal(&mut self, sel: &[Vec<u64>], bshape: &[u64], src: &[u8]) {
        let sizes: Vec<u64> = sel.iter().map(|s| s.len() as u64).collect();
        let is = self.is;
        for p in indices(&sizes) {
            let x: Vec<u64> = p
                .iter()
                .enumerate()
                .map(|(d, &i)| sel[d][i as usize])
                .collect();
            let (a, b) = (ravel(&x, &self.shape) * is, ravel(&p, bshape) * is);
            self.data[a..a + is].copy_from_slice(&src[b..b + is]);
        }
    }
}

/// Shape, chunks, blocks and dtype of an array.
type Geometry = (Vec<u64>, Vec<u64>, Vec<u64>, &'static str);

/// Geometries whose edge chunks are padded (shapes not multiples of
/// chunks) and whose chunks are padded (not multiples of blocks).
fn cases() -> Vec<Geometry> {
    let c = |s: &[u64], ch: &[u64], b: &[u64], dt| (s.to_vec(), ch.to_vec(), b.to_vec(), dt);
    vec![
        c(&[], &[], &[], "<i4"),
        c(&[23], &[7], &[3], "|u1"),
        c(&[100], &[44], &[33], "|V8"),
        c(&[10, 7], &[4, 3], &[3, 2], "<i4"),
        c(&[9, 6], &[9, 6], &[4, 6], "<f8"),
        c(&[5, 4, 7], &[2, 3, 4], &[2, 2, 3], "<u2"),
        c(&[3, 4, 5, 6], &[2, 3, 4, 5], &[2, 2, 3, 4], "<i4"),
        c(&[3, 4, 2, 5], &[2, 3, 2, 2], &[1, 2, 1, 2], "|i1"),
        // Blocks longer than chunks (C-Blosc2 makes them): a chunk is one
        // block, padded.
        c(&[5, 7], &[2, 5], &[3, 2], "<i4"),
    ]
}

/// An array of `meta` holding random items, and its model.
fn random_array(meta: &NdMeta, rng: &mut Rng) -> (SChunk, Model) {
    let is = ndarray::dtype_itemsize(&meta.dtype).unwrap();
    let n: u64 = meta.shape.iter().product();
    let data = rng.bytes(n as usize * is);
    let sc = ndarray::create(meta, CParams::default(), &data).unwrap();
    let model = Model {
        shape: meta.shape.clone(),
        is,
        data,
    };
    (sc, model)
}

/// An array of `meta` whose chunks are zeros by their index entries (as
/// `b2nd_zeros` makes one).
fn zeros_array(meta: &NdMeta) -> SChunk {
    let is = ndarray::dtype_itemsize(&meta.dtype).unwrap();
    let l = Layout::new(meta, is).unwrap();
    let mut sc = ndarray::builder(meta, CParams::default())
        .unwrap()
        .build_memory()
        .unwrap();
    let per = (l.chunk_nbytes() / is) as u64;
    sc.fill_special(per * l.nchunks(), Fill::Zeros, l.chunk_nbytes())
        .unwrap();
    sc
}

/// The whole array through our reader (not through the selections).
fn whole(sc: &mut SChunk) -> Vec<u8> {
    let frame = sc.to_cframe().unwrap();
    NdArray::open(SChunk::from_cframe(frame).unwrap())
        .unwrap()
        .to_vec()
        .unwrap()
}

/// Random flat coordinates (repeated, unsorted; none for an empty array).
fn random_coords(nitems: u64, rng: &mut Rng) -> Vec<u64> {
    if nitems == 0 {
        return Vec::new();
    }
    let k = rng.below(2 * nitems + 3);
    (0..k).map(|_| rng.below(nitems)).collect()
}

/// A random orthogonal selection: per dimension 0 to twice its length
/// indices (empty a tenth of the time), repeated and unsorted.
fn random_selection(shape: &[u64], rng: &mut Rng) -> Vec<Vec<u64>> {
    shape
        .iter()
        .map(|&s| {
            if rng.below(10) == 0 {
                return Vec::new();
            }
            let k = 1 + rng.below(2 * s);
            (0..k).map(|_| rng.below(s)).collect()
        })
        .collect()
}

fn refs(sel: &[Vec<u64>]) -> Vec<&[u64]> {
    sel.iter().map(|s| s.as_slice()).collect()
}

/// The buffer shape of `sel`, wider by `extra` in every dimension.
fn buffer_shape(sel: &[Vec<u64>], extra: u64) -> Vec<u64> {
    sel.iter().map(|s| s.len() as u64 + extra).collect()
}

fn nbytes(bshape: &[u64], is: usize) -> usize {
    bshape.iter().product::<u64>() as usize * is
}

#[test]
fn get_items_matches_the_model() {
    let mut rng = Rng(1);
    for (s, c, b, dt) in cases() {
        let meta = NdMeta::new(&s, &c, &b, dt);
        let (mut sc, model) = random_array(&meta, &mut rng);
        let nitems: u64 = s.iter().product();
        // Every item in order and in reverse, then random ones.
        let all: Vec<u64> = (0..nitems).collect();
        let rev: Vec<u64> = (0..nitems).rev().collect();
        let mut sets = vec![Vec::new(), all, rev];
        for _ in 0..20 {
            sets.push(random_coords(nitems, &mut rng));
        }
        for coords in sets {
            let mut got = vec![0xAAu8; coords.len() * model.is];
            ndarray::get_items(&mut sc, &meta, &coords, &mut got).unwrap();
            assert_eq!(got, model.items(&coords), "{s:?} {coords:?}");
        }
    }
}

#[test]
fn get_orthogonal_matches_the_model_in_larger_buffers_too() {
    let mut rng = Rng(2);
    for (s, c, b, dt) in cases() {
        let meta = NdMeta::new(&s, &c, &b, dt);
        let (mut sc, model) = random_array(&meta, &mut rng);
        for round in 0..30 {
            let sel = random_selection(&s, &mut rng);
            let bshape = buffer_shape(&sel, round % 3);
            let mut got = vec![0xAAu8; nbytes(&bshape, model.is)];
            ndarray::get_orthogonal(&mut sc, &meta, &refs(&sel), &mut got, &bshape).unwrap();
            let want = model.get_orthogonal(&sel, &bshape, vec![0xAAu8; got.len()]);
            assert_eq!(got, want, "{s:?} {sel:?} in {bshape:?}");
        }
    }
}

#[test]
fn set_orthogonal_matches_the_model_and_reads_back() {
    let mut rng = Rng(3);
    for (s, c, b, dt) in cases() {
        let meta = NdMeta::new(&s, &c, &b, dt);
        let (mut sc, mut model) = random_array(&meta, &mut rng);
        for round in 0..15 {
            let sel = random_selection(&s, &mut rng);
            let bshape = buffer_shape(&sel, round % 2);
            let src = rng.bytes(nbytes(&bshape, model.is));
            ndarray::set_orthogonal(&mut sc, &meta, &refs(&sel), &src, &bshape).unwrap();
            model.set_orthogonal(&sel, &bshape, &src);
            assert_eq!(whole(&mut sc), model.data, "{s:?} {sel:?}");
            // The same selection read back: where an index repeats, the
            // later place's item is the one every place reads.
            let mut got = vec![0u8; src.len()];
            ndarray::get_orthogonal(&mut sc, &meta, &refs(&sel), &mut got, &bshape).unwrap();
            assert_eq!(
                got,
                model.get_orthogonal(&sel, &bshape, vec![0u8; src.len()])
            );
        }
    }
}

#[test]
fn the_later_of_repeated_indices_wins() {
    // C-Blosc2's test_b2nd_orthogonal_selection: items i * 100 + j * 10 + k.
    let meta = NdMeta::new(&[10, 10, 10], &[10, 10, 10], &[10, 10, 10], "<i4");
    let data: Vec<u8> = (0..1000i32).flat_map(|v| v.to_le_bytes()).collect();
    let mut sc = ndarray::create(&meta, CParams::default(), &data).unwrap();
    let sel: [&[u64]; 3] = [&[3, 1, 2], &[2, 5], &[3, 3, 3, 9, 3, 1, 0]];
    let mut out = vec![0u8; 42 * 4];
    ndarray::get_orthogonal(&mut sc, &meta, &sel, &mut out, &[3, 2, 7]).unwrap();
    let got: Vec<i32> = out
        .chunks(4)
        .map(|b| i32::from_le_bytes(b.try_into().unwrap()))
        .collect();
    let mut want = Vec::new();
    for i in sel[0] {
        for j in sel[1] {
            for k in sel[2] {
                want.push((i * 100 + j * 10 + k) as i32);
            }
        }
    }
    assert_eq!(got, want);
    // Index 3 of the last dimension four times: its last place (4) wins.
    let src: Vec<u8> = (0..42i32).flat_map(|v| (1000 + v).to_le_bytes()).collect();
    ndarray::set_orthogonal(&mut sc, &meta, &sel, &src, &[3, 2, 7]).unwrap();
    let mut one = [0u8; 4];
    ndarray::get_items(&mut sc, &meta, &[3 * 100 + 2 * 10 + 3], &mut one).unwrap();
    assert_eq!(i32::from_le_bytes(one), 1004);
}

#[test]
fn zero_chunks_read_as_zeros_and_take_writes() {
    let mut rng = Rng(4);
    for (s, c, b, dt) in cases() {
        let meta = NdMeta::new(&s, &c, &b, dt);
        let mut sc = zeros_array(&meta);
        let is = ndarray::dtype_itemsize(dt).unwrap();
        let nitems: u64 = s.iter().product();
        let mut model = Model {
            shape: s.clone(),
            is,
            data: vec![0u8; nitems as usize * is],
        };
        let coords = random_coords(nitems, &mut rng);
        let mut got = vec![0xAAu8; coords.len() * is];
        ndarray::get_items(&mut sc, &meta, &coords, &mut got).unwrap();
        assert!(got.iter().all(|&v| v == 0), "{s:?}");
        let sel = random_selection(&s, &mut rng);
        let bshape = buffer_shape(&sel, 0);
        let mut got = vec![0xAAu8; nbytes(&bshape, is)];
        ndarray::get_orthogonal(&mut sc, &meta, &refs(&sel), &mut got, &bshape).unwrap();
        assert!(got.iter().all(|&v| v == 0), "{s:?}");
        // A write into some of the chunks; the others stay zeros.
        let src = rng.bytes(got.len());
        ndarray::set_orthogonal(&mut sc, &meta, &refs(&sel), &src, &bshape).unwrap();
        model.set_orthogonal(&sel, &bshape, &src);
        let all: Vec<u64> = (0..nitems).collect();
        let mut got = vec![0xAAu8; all.len() * is];
        ndarray::get_items(&mut sc, &meta, &all, &mut got).unwrap();
        assert_eq!(got, model.data, "{s:?} {sel:?}");
    }
}

#[test]
fn empty_selections_and_arrays() {
    let meta = NdMeta::new(&[6, 5], &[4, 3], &[2, 2], "<u2");
    let mut sc = ndarray::create(&meta, CParams::default(), &[7u8; 60]).unwrap();
    let before = sc.to_cframe().unwrap();
    ndarray::get_items(&mut sc, &meta, &[], &mut []).unwrap();
    // A dimension of no indices: nothing read or written, whatever the
    // other dimensions list; the buffer left as is.
    let mut buf = [0xAAu8; 12];
    ndarray::get_orthogonal(&mut sc, &meta, &[&[], &[1, 2, 3]], &mut buf, &[2, 3]).unwrap();
    assert_eq!(buf, [0xAA; 12]);
    ndarray::set_orthogonal(&mut sc, &meta, &[&[5], &[]], &[], &[1, 0]).unwrap();
    assert!(sc.to_cframe().unwrap() == before);
    // An array of no items: only empty selections.
    let meta = NdMeta::new(&[0, 5], &[0, 5], &[0, 5], "<u2");
    let mut sc = ndarray::create(&meta, CParams::default(), &[]).unwrap();
    ndarray::get_items(&mut sc, &meta, &[], &mut []).unwrap();
    ndarray::get_orthogonal(&mut sc, &meta, &[&[], &[4]], &mut [], &[0, 1]).unwrap();
    ndarray::set_orthogonal(&mut sc, &meta, &[&[], &[4]], &[], &[0, 1]).unwrap();
    assert!(ndarray::get_items(&mut sc, &meta, &[0], &mut [0u8; 2]).is_err());
    let e = ndarray::get_orthogonal(&mut sc, &meta, &[&[0], &[4]], &mut [0u8; 2], &[1, 1]);
    assert!(matches!(e, Err(Error::InvalidParam(_))));
}

#[test]
fn bad_selections_and_buffers_are_errors_and_leave_the_array_alone() {
    let meta = NdMeta::new(&[10, 7], &[4, 3], &[3, 2], "<i4");
    let mut rng = Rng(5);
    let (mut sc, model) = random_array(&meta, &mut rng);
    let before = sc.to_cframe().unwrap();
    let bad_param = |r: oxiblosc::Result<()>| matches!(r, Err(Error::InvalidParam(_)));
    // Sparse: a coordinate at the item count or far past it; a buffer
    // shorter or longer than the coordinates' items.
    let mut four = [0u8; 4];
    assert!(bad_param(ndarray::get_items(
        &mut sc,
        &meta,
        &[70],
        &mut four
    )));
    assert!(bad_param(ndarray::get_items(
        &mut sc,
        &meta,
        &[u64::MAX],
        &mut four
    )));
    assert!(bad_param(ndarray::get_items(
        &mut sc,
        &meta,
        &[1, 2],
        &mut four
    )));
    assert!(bad_param(ndarray::get_items(
        &mut sc,
        &meta,
        &[1],
        &mut [0u8; 5]
    )));
    // Orthogonal, read and write: an index at the dimension's length (C
    // accepts it), another number of dimensions, a buffer shape smaller
    // than the selection, of another length, overflowing, a buffer of
    // another size than its shape's.
    let mut buf = [0u8; 64];
    type Bad<'a> = (&'a [&'a [u64]], &'a [u64], usize);
    let cases: &[Bad] = &[
        (&[&[10], &[0]], &[1, 1], 4),
        (&[&[0], &[7]], &[1, 1], 4),
        (&[&[0], &[u64::MAX]], &[1, 1], 4),
        (&[&[0]], &[1], 4),
        (&[&[0], &[0], &[0]], &[1, 1, 1], 4),
        (&[&[0, 1], &[0]], &[1, 1], 4),
        (&[&[0], &[0]], &[1], 4),
        (&[&[0], &[0]], &[u64::MAX / 2, 4], 4),
        (&[&[0], &[0]], &[1, 1 << 62], 4),
        (&[&[0], &[0]], &[1, 1], 8),
        (&[&[0], &[0]], &[1, 2], 4),
    ];
    for &(sel, bshape, n) in cases {
        let r = ndarray::get_orthogonal(&mut sc, &meta, sel, &mut buf[..n], bshape);
        assert!(bad_param(r), "get {sel:?} {bshape:?} {n}");
        let r = ndarray::set_orthogonal(&mut sc, &meta, sel, &buf[..n], bshape);
        assert!(bad_param(r), "set {sel:?} {bshape:?} {n}");
    }
    assert!(
        sc.to_cframe().unwrap() == before,
        "a refused set changed the frame"
    );
    // Another array's metalayer: the super-chunk disagrees (another chunk
    // count, or as many chunks of another size).
    for other in [
        NdMeta::new(&[20, 7], &[4, 3], &[3, 2], "<i4"),
        NdMeta::new(&[9, 7], &[4, 3], &[2, 3], "<i4"),
    ] {
        let e = ndarray::get_items(&mut sc, &other, &[0], &mut four);
        assert!(
            matches!(e, Err(Error::Corrupt(_))),
            "{:?}: {e:?}",
            other.shape
        );
        let e = ndarray::get_orthogonal(&mut sc, &other, &[&[0], &[0]], &mut four, &[1, 1]);
        assert!(
            matches!(e, Err(Error::Corrupt(_))),
            "{:?}: {e:?}",
            other.shape
        );
        let e = ndarray::set_orthogonal(&mut sc, &other, &[&[0], &[0]], &four, &[1, 1]);
        assert!(
            matches!(e, Err(Error::Corrupt(_))),
            "{:?}: {e:?}",
            other.shape
        );
    }
    assert!(
        sc.to_cframe().unwrap() == before,
        "a refused set changed the frame"
    );
    // Chunks past the decoder's output limit: refused, not decoded.
    sc.set_dparams(DParams::default().max_output(16));
    assert!(bad_param(ndarray::get_items(
        &mut sc,
        &meta,
        &[0],
        &mut four
    )));
    let r = ndarray::get_orthogonal(&mut sc, &meta, &[&[0], &[0]], &mut four, &[1, 1]);
    assert!(bad_param(r));
    sc.set_dparams(DParams::default());
    assert_eq!(whole(&mut sc), model.data);
}

/// Breaks the streams of block 5 (rows 16..32, columns 16..32) of chunk
/// `ci` of a 64 x 128 array of two 64 x 64 chunks of 16 x 16 u32 blocks.
fn broken_block_array(ci: usize) -> (SChunk, NdMeta, Vec<u8>) {
    use oxiblosc::{ChunkHeader, Codec};
    let meta = NdMeta::new(&[64, 128], &[64, 64], &[16, 16], "<u4");
    let data: Vec<u8> = (0..64 * 128u32)
        .flat_map(|v| (v / 3).to_le_bytes())
        .collect();
    let p = CParams::default().codec(Codec::Lz4).typesize(4);
    let mut sc = ndarray::create(&meta, p, &data).unwrap();
    let mut chunk = sc.get_chunk(ci).unwrap().into_owned();
    let h = ChunkHeader::parse(&chunk).unwrap();
    assert_eq!((h.nblocks(), h.is_memcpyed()), (16, false));
    let bstart = |c: &[u8], i: usize| {
        let at = h.header_len() + 4 * i;
        u32::from_le_bytes(c[at..at + 4].try_into().unwrap()) as usize
    };
    let (s5, s6) = (bstart(&chunk, 5), bstart(&chunk, 6));
    chunk[s5 + 8..s6].fill(0xFF);
    sc.update_chunk(ci, &chunk).unwrap();
    (sc, meta, data)
}

/// Reads decode only the blocks holding selected items: with one block's
/// streams broken, selections away from it read right and selections
/// meeting it fail.
#[test]
fn reads_decode_only_the_blocks_they_touch() {
    let (mut sc, meta, data) = broken_block_array(0);
    let model = Model {
        shape: vec![64, 128],
        is: 4,
        data,
    };
    let flat = |r: u64, c: u64| r * 128 + c;
    // Around block 5 of chunk 0, and in chunk 1.
    let good = [
        flat(0, 0),
        flat(15, 31),
        flat(16, 15),
        flat(32, 16),
        flat(20, 100),
    ];
    let mut got = vec![0u8; good.len() * 4];
    ndarray::get_items(&mut sc, &meta, &good, &mut got).unwrap();
    assert_eq!(got, model.items(&good));
    assert!(
        ndarray::get_items(&mut sc, &meta, &[flat(0, 0), flat(20, 20)], &mut [0u8; 8]).is_err()
    );
    let sel = vec![vec![40, 3, 15, 63], vec![100, 0, 15, 32, 127]];
    let bshape = buffer_shape(&sel, 0);
    let mut got = vec![0u8; nbytes(&bshape, 4)];
    ndarray::get_orthogonal(&mut sc, &meta, &refs(&sel), &mut got, &bshape).unwrap();
    assert_eq!(
        got,
        model.get_orthogonal(&sel, &bshape, vec![0u8; got.len()])
    );
    let sel = vec![vec![40, 17], vec![100, 20]];
    let mut got = vec![0u8; 16];
    assert!(ndarray::get_orthogonal(&mut sc, &meta, &refs(&sel), &mut got, &[2, 2]).is_err());
    // Not touched: chunk 1's broken block.
    let (mut sc, meta, _) = broken_block_array(1);
    ndarray::get_orthogonal(&mut sc, &meta, &[&[0, 20], &[0, 20]], &mut got, &[2, 2]).unwrap();
}

/// A write whose last chunk does not decode changes nothing, not even the
/// chunks before it.
#[test]
fn a_failed_write_leaves_the_array_as_it_was() {
    let (mut sc, meta, _) = broken_block_array(1);
    let before = sc.to_cframe().unwrap();
    let sel: [&[u64]; 2] = [&[0, 20], &[0, 80]];
    let e = ndarray::set_orthogonal(&mut sc, &meta, &sel, &[1u8; 16], &[2, 2]);
    assert!(e.is_err());
    assert!(
        sc.to_cframe().unwrap() == before,
        "a failed set changed the frame"
    );
}

/// A stored chunk whose header gives another type size (its blocks not
/// whole items of it): decoded whole, read right.
#[test]
fn chunks_of_another_type_size_are_read_whole() {
    let meta = NdMeta::new(&[64, 64], &[64, 64], &[4, 64], "<u4");
    let data: Vec<u8> = (0..64 * 64u32)
        .flat_map(|v| v.wrapping_mul(2_654_435_761).to_le_bytes())
        .collect();
    let model = Model {
        shape: vec![64, 64],
        is: 4,
        data: data.clone(),
    };
    for ts in [1, 3, 8] {
        let mut sc = ndarray::create(&meta, CParams::default(), &data).unwrap();
        let content = sc.decompress_chunk_vec(0).unwrap();
        let p = CParams::default()
            .typesize(if ts == 3 { 4 } else { ts })
            .filters(&[])
            .blocksize(1024);
        let mut chunk = oxiblosc::compress(&content, &p).unwrap();
        chunk[3] = ts as u8;
        sc.update_chunk(0, &chunk).unwrap();
        let coords = [4000, 3, 64, 65, 3];
        let mut got = vec![0u8; 20];
        ndarray::get_items(&mut sc, &meta, &coords, &mut got).unwrap();
        assert_eq!(got, model.items(&coords), "type size {ts}");
        let sel = vec![vec![63, 5], vec![7, 1, 7]];
        let mut got = vec![0u8; 24];
        ndarray::get_orthogonal(&mut sc, &meta, &refs(&sel), &mut got, &[2, 3]).unwrap();
        assert_eq!(got, model.get_orthogonal(&sel, &[2, 3], vec![0u8; 24]));
    }
}

/// A special chunk of a repeated value whose header records blocks of
/// another size than the block shape's: decoded whole, read as its value.
#[test]
fn repeated_value_chunks_are_read() {
    use oxiblosc::SpecialValue;
    let meta = NdMeta::new(&[64, 70], &[64, 64], &[16, 16], "<u4");
    let data = vec![0u8; 64 * 70 * 4];
    let p = CParams::default().typesize(4);
    let mut sc = ndarray::create(&meta, p.clone(), &data).unwrap();
    let value = 7u32.to_le_bytes();
    let special =
        oxiblosc::special_chunk(&p.blocksize(1028), 64 * 64 * 4, SpecialValue::Value, &value)
            .unwrap();
    sc.update_chunk(0, &special).unwrap();
    let mut got = [0u8; 12];
    ndarray::get_items(&mut sc, &meta, &[71, 69, 134], &mut got).unwrap();
    assert_eq!(got[..4], value);
    assert_eq!(got[4..], [0; 8]);
    let mut got = [0u8; 16];
    ndarray::get_orthogonal(&mut sc, &meta, &[&[1], &[65, 3, 63, 1]], &mut got, &[1, 4]).unwrap();
    assert_eq!(got, [0, 0, 0, 0, 7, 0, 0, 0, 7, 0, 0, 0, 7, 0, 0, 0]);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(100))]
    /// Random geometries of 1 to 4 dimensions, item sizes and selections:
    /// every call agrees with the model.
    #[test]
    fn random_selections_match_the_model(
        dims in proptest::collection::vec((1u64..9, 1u64..9, 1u64..9), 1..5),
        itemsize in 1usize..9,
        seed in proptest::prelude::any::<u64>(),
    ) {
        let shape: Vec<u64> = dims.iter().map(|d| d.0).collect();
        let chunks: Vec<u64> = dims.iter().map(|d| d.1).collect();
        let blocks: Vec<u64> = dims.iter().map(|d| d.2.min(d.1)).collect();
        let meta = NdMeta::new(&shape, &chunks, &blocks, &format!("|V{itemsize}"));
        let mut rng = Rng(seed);
        let (mut sc, mut model) = random_array(&meta, &mut rng);
        let coords = random_coords(shape.iter().product(), &mut rng);
        let mut got = vec![0u8; coords.len() * itemsize];
        ndarray::get_items(&mut sc, &meta, &coords, &mut got).unwrap();
        proptest::prop_assert_eq!(&got, &model.items(&coords));
        let sel = random_selection(&shape, &mut rng);
        let bshape = buffer_shape(&sel, rng.below(2));
        let mut got = vec![0x55u8; nbytes(&bshape, itemsize)];
        ndarray::get_orthogonal(&mut sc, &meta, &refs(&sel), &mut got, &bshape).unwrap();
        let want = model.get_orthogonal(&sel, &bshape, vec![0x55u8; got.len()]);
        proptest::prop_assert_eq!(&got, &want);
        let src = rng.bytes(got.len());
        ndarray::set_orthogonal(&mut sc, &meta, &refs(&sel), &src, &bshape).unwrap();
        model.set_orthogonal(&sel, &bshape, &src);
        proptest::prop_assert_eq!(whole(&mut sc), model.data);
    }
}

/// Fuzz finding (session 37, `ndarray_args`,
/// `crash-9f8b6c8fcf086a1b0af19d7229cec7b6f9b010cb`): a buffer shape with a
/// 0 (so no item, and a product that does not overflow) and a huge later
/// length: the buffer strides saturate, and a selection place times its
/// stride overflowed (a panic) in a dimension with more than one index.
/// Nothing is selected: the calls do nothing and succeed.
#[test]
fn a_buffer_of_no_items_with_huge_strides_selects_nothing() {
    let meta = NdMeta::new(&[4, 4, 4], &[2, 2, 2], &[1, 2, 2], "|u1");
    let data: Vec<u8> = (0..64).collect();
    let mut sc = ndarray::create(&meta, CParams::default(), &data).unwrap();
    let sel: [&[u64]; 3] = [&[], &[0, 1, 2], &[0]];
    let bshape = [0, 3, u64::MAX];
    ndarray::get_orthogonal(&mut sc, &meta, &sel, &mut [], &bshape).unwrap();
    ndarray::set_orthogonal(&mut sc, &meta, &sel, &[], &bshape).unwrap();
    let mut back = vec![0u8; 64];
    ndarray::get_slice(
        &mut sc,
        &meta,
        &[0, 0, 0],
        &[4, 4, 4],
        &mut back,
        &[4, 4, 4],
    )
    .unwrap();
    assert_eq!(back, data);
}
