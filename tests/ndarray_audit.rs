//! Regression tests from an audit of the NDArray code (`src/ndarray`): bad
//! shapes, positions and limits end in a clear `Err`, never a panic (a
//! division by zero, an arithmetic overflow) nor a buffer sized past the
//! caller's output limit.

mod support;
use support::counting;

use oxiblosc::ndarray::{self, NdArray, NdMeta};
use oxiblosc::schunk::{Fill, SChunk};
use oxiblosc::{CParams, DParams, Error};

#[global_allocator]
static GLOBAL: counting::Counting = counting::Counting;

/// An array of `meta` in memory, of `nitems` zeros in zero chunks of
/// `chunksize` bytes (a few bytes of index each, as `b2nd_zeros` makes).
fn zeros(meta: &NdMeta, nitems: u64, chunksize: usize) -> SChunk {
    let mut sc = ndarray::builder(meta, CParams::default())
        .unwrap()
        .build_memory()
        .unwrap();
    sc.fill_special(nitems, Fill::Zeros, chunksize).unwrap();
    sc
}

/// An empty array of `meta` (no chunks) in memory.
fn empty(meta: &NdMeta) -> SChunk {
    ndarray::create(meta, CParams::default(), &[]).unwrap()
}

/// An empty array gets its shape as chunk and block shapes by default, so
/// a chunk length of 0 in its empty dimension: resizing it divided by that
/// 0 (`DimMap::new`, `s / cs`) and panicked, whatever the new shape.
#[test]
fn resizing_an_empty_array_of_zero_chunk_lengths_works() {
    let (chunks, blocks) = ndarray::default_shapes(&[0, 5], 1);
    assert_eq!((&chunks[..], &blocks[..]), (&[0, 5][..], &[0, 5][..]));
    let mut meta = NdMeta::new(&[0, 5], &chunks, &blocks, "|u1");
    let mut sc = empty(&meta);
    ndarray::resize(&mut sc, &mut meta, &[0, 7], None).unwrap();
    assert_eq!(meta.shape, [0, 7]);
    ndarray::resize(&mut sc, &mut meta, &[0, 7], Some(&[0, 0])).unwrap();
    let a = NdArray::open(sc).unwrap();
    assert_eq!(a.meta().shape, [0, 7]);
    assert_eq!(a.nbytes(), 0);
    // Growing the empty dimension needs a chunk length: a clear error.
    let mut sc = a.into_schunk();
    let r = ndarray::resize(&mut sc, &mut meta, &[3, 7], None);
    assert!(
        matches!(&r, Err(Error::InvalidParam(m)) if m.contains("chunkshape 0")),
        "{r:?}"
    );
    assert_eq!(meta.shape, [0, 7]);
}

/// `insert` added the position to the inserted length before anything
/// checked the position: `u64::MAX` overflowed (a panic with overflow
/// checks; a wrapped box otherwise).
#[test]
fn insert_past_the_end_of_the_axis_is_an_error() {
    let mut meta = NdMeta::new(&[4], &[2], &[1], "|u1");
    let mut sc = ndarray::create(&meta, CParams::default(), &[1, 2, 3, 4]).unwrap();
    for pos in [5, u64::MAX / 2, u64::MAX] {
        let r = ndarray::insert(&mut sc, &mut meta, &[9], 0, pos);
        assert!(
            matches!(&r, Err(Error::InvalidParam(m)) if m.contains("past dimension 0")),
            "pos {pos}: {r:?}"
        );
    }
    assert_eq!(meta.shape, [4]);
    // At the end is an append.
    ndarray::insert(&mut sc, &mut meta, &[9], 0, 4).unwrap();
    assert_eq!(
        NdArray::open(sc).unwrap().to_vec().unwrap(),
        [1, 2, 3, 4, 9]
    );
}

/// An empty array may have dimensions whose product overflows (it holds
/// no items): `insert` multiplied them unchecked to size one slice along
/// the axis (a panic with overflow checks).
#[test]
fn insert_into_an_empty_array_of_huge_dimensions_is_an_error() {
    // 3 × 6148914691236517206 is 2^64 + 2: it wrapped to a 2-byte slice.
    let huge = 6_148_914_691_236_517_206u64;
    let mut meta = NdMeta::new(&[0, 3, huge], &[0, 1, 1], &[0, 1, 1], "|u1");
    let mut sc = empty(&meta);
    let r = ndarray::insert(&mut sc, &mut meta, &[9, 9], 0, 0);
    assert!(
        matches!(&r, Err(Error::InvalidParam(m)) if m.contains("overflows")),
        "{r:?}"
    );
    assert_eq!(meta.shape, [0, 3, huge]);
}

/// An array of `n` (64 Mi) `|u1` items in one zero chunk (a few bytes of
/// index), read with `DParams::max_output` 1 MiB.
fn one_limited_zero_chunk() -> (u64, NdMeta, SChunk) {
    let n = 1u64 << 26;
    let meta = NdMeta::new(&[n], &[n], &[1 << 16], "|u1");
    let mut sc = zeros(&meta, n, n as usize);
    sc.set_dparams(DParams::default().max_output(1 << 20));
    (n, meta, sc)
}

/// Whether `r` is the refusal of a chunk over the output limit.
fn limited(r: &oxiblosc::Result<()>) -> bool {
    matches!(r, Err(Error::InvalidParam(m)) if m.contains("output limit"))
}

/// A 64 MiB zero chunk (a few bytes in the index) read by a caller that
/// set `DParams::max_output` to 1 MiB: the NDArray reads sized their chunk
/// buffer (and `to_vec` the whole array) by the metalayer before the
/// decoder checked the limit, allocating 64 MiB to refuse the chunk.
#[test]
fn reads_keep_the_output_limit_before_sizing_a_buffer() {
    let (_, meta, mut sc) = one_limited_zero_chunk();
    let bound = 4 << 20;
    counting::reset_largest();
    let mut one = [7u8];
    let r = ndarray::get_slice(&mut sc, &meta, &[5], &[6], &mut one, &[1]);
    assert!(limited(&r), "get_slice: {r:?}");
    let r = ndarray::set_slice(&mut sc, &meta, &[5], &[6], &[1], &[1]);
    assert!(limited(&r), "set_slice: {r:?}");
    assert!(counting::largest() <= bound, "{}", counting::largest());
    let mut a = NdArray::open(sc).unwrap();
    let r = a.to_vec().map(drop);
    assert!(limited(&r), "to_vec: {r:?}");
    let r = a.write_to(&mut std::io::sink());
    assert!(limited(&r), "write_to: {r:?}");
    assert!(counting::largest() <= bound, "{}", counting::largest());
    // Without the limit the same array reads.
    a.schunk().set_dparams(DParams::default());
    let mut one = [7u8];
    let mut sc = a.into_schunk();
    ndarray::get_slice(&mut sc, &meta, &[5], &[6], &mut one, &[1]).unwrap();
    assert_eq!(one, [0]);
}

/// `resize` allocated a whole new chunk's buffer before looking at any
/// chunk, even when it only keeps chunks and adds zero ones (or the array
/// has no chunks at all): 256 MiB here, for chunks that are a few bytes of
/// index each. It is now sized only when a chunk is rebuilt from items.
#[test]
fn resizes_that_add_only_zero_chunks_allocate_no_chunk_buffer() {
    let n = 1u64 << 28;
    let bound = 4 << 20;
    let mut meta = NdMeta::new(&[n], &[n], &[1 << 16], "|u1");
    let mut sc = zeros(&meta, n, n as usize);
    counting::reset_largest();
    ndarray::resize(&mut sc, &mut meta, &[2 * n], None).unwrap();
    assert!(counting::largest() <= bound, "{}", counting::largest());
    assert_eq!(meta.shape, [2 * n]);
    let mut one = [7u8];
    ndarray::get_slice(&mut sc, &meta, &[2 * n - 1], &[2 * n], &mut one, &[1]).unwrap();
    assert_eq!(one, [0]);
    // No chunks at all: the same.
    let mut meta = NdMeta::new(&[0], &[n], &[1 << 16], "|u1");
    let mut sc = empty(&meta);
    counting::reset_largest();
    ndarray::resize(&mut sc, &mut meta, &[0], None).unwrap();
    assert!(counting::largest() <= bound, "{}", counting::largest());
    // A chunk rebuilt from items still is: the first chunk cut short.
    let mut meta = NdMeta::new(&[10], &[4], &[2], "|u1");
    let mut sc =
        ndarray::create(&meta, CParams::default(), &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]).unwrap();
    ndarray::resize(&mut sc, &mut meta, &[3], None).unwrap();
    ndarray::resize(&mut sc, &mut meta, &[9], None).unwrap();
    assert_eq!(
        NdArray::open(sc).unwrap().to_vec().unwrap(),
        [1, 2, 3, 0, 0, 0, 0, 0, 0]
    );
}

/// Found by the `ndarray_args` fuzz target in its first 10,000 runs: a 1-D
/// array of 2^32 - 1 one-byte items in zero chunks (a few bytes of index
/// each) read whole by `to_vec` with `DParams::max_output` at 4 MiB. Each
/// chunk is under the limit, so `to_vec` reserved the whole 4 GiB array;
/// the whole array is its output, and the limit now holds for it.
#[test]
fn to_vec_keeps_the_output_limit_for_the_whole_array() {
    let n = (1u64 << 32) - 1;
    let (chunks, blocks) = ndarray::default_shapes(&[n], 1);
    let meta = NdMeta::new(&[n], &chunks, &blocks, "|u1");
    let layout = ndarray::Layout::new(&meta, 1).unwrap();
    assert!(
        layout.chunk_nbytes() <= 4 << 20,
        "{}",
        layout.chunk_nbytes()
    );
    let mut sc = ndarray::builder(&meta, CParams::default())
        .unwrap()
        .build_memory()
        .unwrap();
    let per = layout.chunk_nbytes() as u64;
    sc.fill_special(per * layout.nchunks(), Fill::Zeros, layout.chunk_nbytes())
        .unwrap();
    sc.set_dparams(DParams::default().max_output(4 << 20));
    let mut a = NdArray::open(sc).unwrap();
    counting::reset_largest();
    let r = a.to_vec().map(|v| v.len());
    assert!(
        matches!(&r, Err(Error::InvalidParam(m)) if m.contains("the array is 4294967295 bytes, over the output limit of 4194304")),
        "{r:?}"
    );
    assert!(counting::largest() <= 8 << 20, "{}", counting::largest());
    // One chunk's worth of it still reads through get_slice.
    let mut sc = a.into_schunk();
    let mut out = vec![7u8; 1000];
    ndarray::get_slice(&mut sc, &meta, &[n - 1000], &[n], &mut out, &[1000]).unwrap();
    assert!(out.iter().all(|&b| b == 0));
}

/// An array of zeros (what `b2nd_zeros` and `fill_special` make: a few
/// bytes of index a chunk) of 64 chunks of 16 MiB, grown by 10 items at its
/// start: every chunk holds old items moved by 10, all zeros. Each was
/// decoded into a 16 MiB buffer and compressed again (1 GiB through the
/// codec; an insert into a 4 GiB array took 17 s under ASan in the fuzz
/// target `ndarray_args`). They are now zero chunks at once, found from the
/// index alone, and no chunk buffer is allocated; nor to read one item of a
/// zero chunk.
#[test]
fn edits_of_an_array_of_zeros_keep_zero_chunks_without_decoding_them() {
    let cs = 1u64 << 24;
    let n = 64 * cs;
    let mut meta = NdMeta::new(&[n], &[cs], &[1 << 16], "|u1");
    let mut sc = zeros(&meta, n, cs as usize);
    counting::reset_largest();
    let mut one = [7u8];
    ndarray::get_slice(&mut sc, &meta, &[n / 2], &[n / 2 + 1], &mut one, &[1]).unwrap();
    assert_eq!(one, [0]);
    assert!(counting::largest() < 1 << 20, "{}", counting::largest());

    // Ten zeros at the start: every chunk holds old items moved by 10.
    counting::reset_largest();
    ndarray::resize(&mut sc, &mut meta, &[n + 10], Some(&[0])).unwrap();
    assert!(counting::largest() < 1 << 20, "{}", counting::largest());
    assert_eq!(meta.shape, [n + 10]);
    assert_eq!(sc.nchunks(), 65);
    zero_chunks_by_index(&mut sc, 0..65);
    // Ten nines inserted there: the first chunk is built from them, the
    // others stay zero chunks.
    ndarray::insert(&mut sc, &mut meta, &[9; 10], 0, 0).unwrap();
    assert_eq!(meta.shape, [n + 20]);
    assert_eq!(sc.nchunks(), 65);
    zero_chunks_by_index(&mut sc, 1..65);
    let mut head = [7u8; 12];
    ndarray::get_slice(&mut sc, &meta, &[0], &[12], &mut head, &[12]).unwrap();
    assert_eq!(head, [9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 0, 0]);
    let mut tail = [7u8; 3];
    ndarray::get_slice(&mut sc, &meta, &[n + 17], &[n + 20], &mut tail, &[3]).unwrap();
    assert_eq!(tail, [0, 0, 0]);
    // Through the NDArray reader too, after the frame's round trip.
    let again = SChunk::from_cframe(sc.to_cframe().unwrap()).unwrap();
    let a = NdArray::open(again).unwrap();
    assert_eq!(a.meta().shape, [n + 20]);
}

/// Chunks `range` of `sc` are zero chunks coded in the index (no bytes).
fn zero_chunks_by_index(sc: &mut SChunk, range: std::ops::Range<usize>) {
    for i in range {
        let info = sc.chunk_info(i).unwrap();
        assert_eq!(
            (info.special, info.cbytes),
            (Some(oxiblosc::SpecialValue::Zeros), 0),
            "chunk {i}"
        );
    }
}

/// Found by `ndarray_args` (session 30): an empty array whose chunk and
/// block lengths are 0 in its empty dimension (as `default_shapes` gives
/// them) and 2^24, 2^28, 2^28 in the others. The block size is then 0 and
/// checked, but `Layout::new` multiplied the other block lengths for its
/// strides unchecked: a panic (overflow) where overflow checks are on.
/// Such an array is accepted (C-Blosc2 accepts it) and stays empty.
#[test]
fn an_empty_array_whose_other_block_lengths_overflow_lays_out() {
    let shape = [0, 1 << 24, 1 << 28, 1 << 28];
    let chunks = [0, 1 << 24, 1 << 28, 1 << 28];
    let meta = NdMeta::new(&shape, &chunks, &chunks, "|u1");
    let layout = ndarray::Layout::new(&meta, 4).unwrap();
    assert_eq!((layout.nchunks(), layout.nitems()), (0, 0));
    assert_eq!((layout.chunk_nbytes(), layout.block_nbytes()), (0, 0));
    let mut meta = meta;
    let mut sc = empty(&meta);
    let r = ndarray::insert(&mut sc, &mut meta, &[1; 4], 0, 0);
    assert!(matches!(r, Err(Error::InvalidParam(_))), "{r:?}");
    let mut a = NdArray::open(sc).unwrap();
    assert_eq!(a.meta().shape, shape);
    assert_eq!(a.to_vec().unwrap().len(), 0);
}

/// A box in a few blocks of a large chunk decodes those blocks into a
/// buffer of their size: one row of a 1 MiB chunk of 64 KiB blocks
/// allocates no buffer of the chunk's size (until session 33 each call
/// cleared a whole chunk's buffer: a row of a 6 MB chunk cost 127 us
/// against C-Blosc2's 20). A box over every block decodes the chunk whole.
#[test]
fn a_small_slice_allocates_its_blocks_not_the_chunk() {
    let meta = NdMeta::new(&[512, 512], &[512, 512], &[32, 512], "<u4");
    let data: Vec<u8> = (0..512 * 512u32)
        .flat_map(|v| (v / 7).to_le_bytes())
        .collect();
    let mut sc = ndarray::create(&meta, CParams::default(), &data).unwrap();
    let (block, chunk) = (32 * 512 * 4, 512 * 512 * 4);
    let row = |r: u64| data[r as usize * 2048..(r as usize + 1) * 2048].to_vec();
    for (lo, hi, bound) in [
        // One row: one block.
        (100u64, 101u64, block + block / 2),
        // Rows across two blocks: two.
        (60, 70, 2 * block + block / 2),
    ] {
        let mut out = vec![0u8; (hi - lo) as usize * 2048];
        counting::reset_largest();
        ndarray::get_slice(
            &mut sc,
            &meta,
            &[lo, 0],
            &[hi, 512],
            &mut out,
            &[hi - lo, 512],
        )
        .unwrap();
        assert!(
            counting::largest() <= bound,
            "{lo}..{hi}: {}",
            counting::largest()
        );
        let want: Vec<u8> = (lo..hi).flat_map(row).collect();
        assert!(out == want, "{lo}..{hi}");
    }
    // A column meets every block: the chunk decoded whole, once.
    let mut out = vec![0u8; 512 * 4];
    counting::reset_largest();
    ndarray::get_slice(&mut sc, &meta, &[0, 3], &[512, 4], &mut out, &[512, 1]).unwrap();
    assert!(counting::largest() >= chunk, "{}", counting::largest());
    let want: Vec<u8> = (0..512).flat_map(|r| row(r)[12..16].to_vec()).collect();
    assert!(out == want);
}

/// The whole array read (`to_vec`, `read_into`, `write_to`, `write_npy`)
/// decodes only the blocks of each chunk that hold its items, as
/// `get_slice` does: a 3 x 3 array in chunks of 1 x 1 Mi items (what the
/// default shapes of a large array leave after a resize down) allocates
/// no buffer of a chunk's size. Until session 39 each read decoded and
/// copied every chunk whole: an array of 20 KB in 6,942 such chunks of
/// 4 MB took 2.5 s to read (27 s under ASan, a fuzzer's slow unit).
#[test]
fn reading_the_whole_array_decodes_the_blocks_inside_it_not_the_chunks() {
    let meta = NdMeta::new(&[3, 3], &[1, 1 << 20], &[1, 1 << 16], "|u1");
    let data: Vec<u8> = (1..=9).collect();
    let mut sc = ndarray::create(&meta, CParams::default(), &data).unwrap();
    assert!(!sc.get_chunk(1).unwrap().is_empty());
    let mut a = NdArray::open(sc).unwrap();
    let bound = (1 << 16) + (1 << 15);
    counting::reset_largest();
    assert_eq!(a.to_vec().unwrap(), data);
    let mut out = [0u8; 9];
    a.read_into(&mut out).unwrap();
    assert_eq!(out, data[..]);
    let mut streamed = Vec::new();
    a.write_to(&mut streamed).unwrap();
    assert_eq!(streamed, data);
    let mut npy = Vec::new();
    a.write_npy(&mut npy).unwrap();
    assert!(npy.ends_with(&data), "{npy:?}");
    assert!(counting::largest() <= bound, "{}", counting::largest());
    // Chunks over the output limit: every reader refuses them, the whole
    // read included (through `get_slice`'s own check), before decoding.
    a.schunk()
        .set_dparams(DParams::default().max_output(64 << 10));
    let mut out = [7u8; 9];
    for r in [
        a.read_into(&mut out),
        a.to_vec().map(drop),
        a.write_to(&mut Vec::new()),
    ] {
        assert!(matches!(&r, Err(Error::InvalidParam(_))), "{r:?}");
    }
    assert_eq!(out, [7u8; 9]);
}

/// The session-34 calls on an array of one 64 MiB zero chunk (a few bytes
/// of index) read by a caller whose `DParams::max_output` is 1 MiB: each
/// is refused for the limit, or works without a chunk-sized buffer, never
/// allocating the chunk's 64 MiB. Before the check in `resize_with`, an
/// insert or concatenation into such an array sized its new chunk's
/// buffer by the metalayer whatever the limit.
#[test]
fn selections_views_and_concatenations_keep_the_output_limit() {
    let (n, meta, mut sc) = one_limited_zero_chunk();
    let bound = 4 << 20;
    counting::reset_largest();
    let mut two = [7u8; 2];
    let r = ndarray::get_items(&mut sc, &meta, &[5, n - 1], &mut two);
    assert!(limited(&r), "get_items: {r:?}");
    let sel: [&[u64]; 1] = [&[5, 9]];
    let r = ndarray::get_orthogonal(&mut sc, &meta, &sel, &mut two, &[2]);
    assert!(limited(&r), "get_orthogonal: {r:?}");
    let r = ndarray::set_orthogonal(&mut sc, &meta, &sel, &[1, 2], &[2]);
    assert!(limited(&r), "set_orthogonal: {r:?}");
    // A view: the same chunk, copied compressed (a few bytes).
    let wide = meta.expand_dims(&[true, false]).unwrap();
    let view = ndarray::with_dims(&mut sc, &meta, &wide).map(|v| v.nchunks());
    assert_eq!(view.unwrap(), 1);
    // Concatenations: another array's zero chunk copied as it is (aligned),
    // and items of an array of other chunks, refused for the limit.
    let mut m = meta.clone();
    let mut other = zeros(&meta, n, n as usize);
    ndarray::concatenate(&mut sc, &mut m, &mut other, &meta, 0).unwrap();
    assert_eq!(m.shape, [2 * n]);
    let small = NdMeta::new(&[3], &[3], &[3], "|u1");
    let mut s3 = ndarray::create(&small, CParams::default(), &[1, 2, 3]).unwrap();
    let before = m.clone();
    let r = ndarray::concatenate(&mut sc, &mut m, &mut s3, &small, 0);
    assert!(limited(&r), "concatenate: {r:?}");
    assert_eq!(m, before);
    let r = ndarray::append(&mut sc, &mut m, &[1, 2, 3], 0);
    assert!(limited(&r), "append: {r:?}");
    assert!(counting::largest() <= bound, "{}", counting::largest());
}

/// A concatenation of arrays of zero chunks whose chunks do not line up
/// (the fill read chunk by chunk): every new chunk is a zero chunk by the
/// index, nothing decoded or compressed (it compressed every chunk of
/// zeros: 75 s under ASan for a 2 GiB array in the fuzz target
/// `ndarray_args`, slow-unit-3216e78c of session 34).
#[test]
fn concatenations_of_zero_chunks_stay_zero_chunks() {
    let cs = 1u64 << 22;
    let mut meta = NdMeta::new(&[3 * cs + 5], &[cs], &[1 << 16], "|u1");
    let mut sc = zeros(&meta, 4 * cs, cs as usize);
    let other = NdMeta::new(&[8 * cs], &[cs], &[1 << 16], "|u1");
    let mut o = zeros(&other, 8 * cs, cs as usize);
    counting::reset_largest();
    ndarray::concatenate(&mut sc, &mut meta, &mut o, &other, 0).unwrap();
    assert!(counting::largest() < 1 << 20, "{}", counting::largest());
    assert_eq!(meta.shape, [11 * cs + 5]);
    assert_eq!(sc.nchunks(), 12);
    zero_chunks_by_index(&mut sc, 0..12);
    // Items that are not zeros are still written.
    let small = NdMeta::new(&[3], &[3], &[3], "|u1");
    let mut s3 = ndarray::create(&small, CParams::default(), &[1, 2, 3]).unwrap();
    ndarray::concatenate(&mut sc, &mut meta, &mut s3, &small, 0).unwrap();
    let mut tail = [0u8; 4];
    let end = 11 * cs + 8;
    ndarray::get_slice(&mut sc, &meta, &[end - 4], &[end], &mut tail, &[4]).unwrap();
    assert_eq!(tail, [0, 1, 2, 3]);
}

/// An array of two items whose `b2nd` metalayer says `dtype`, in a
/// super-chunk of `typesize` (any text: a frame's dtype is whatever its
/// writer put there).
fn two_items_of(dtype: &str, typesize: usize) -> NdArray {
    let meta = NdMeta::new(&[2], &[2], &[2], dtype);
    let mut sc = SChunk::builder()
        .cparams(
            CParams::default()
                .typesize(typesize)
                .blocksize(2 * typesize),
        )
        .chunksize(2 * typesize)
        .meta("b2nd", &meta.encode().unwrap())
        .build_memory()
        .unwrap();
    sc.append_buffer(&vec![7u8; 2 * typesize]).unwrap();
    NdArray::open(sc).unwrap()
}

/// `write_npy` (the CLI's `decompress X.b2nd OUT.npy`) puts the array's
/// dtype in the `.npy` header. It wrote any text there: a frame whose dtype
/// is `|O` became a `.npy` of Python objects, whose data numpy unpickles
/// (`np.load(allow_pickle=True)` would run the frame's bytes as a pickle),
/// and dtypes such as `<f[` or `''` became files numpy cannot load (found
/// by sending the `ndarray_read` corpus through the CLI and `np.load`,
/// session 45; also `<b4`, `<?4`, which `dtype_itemsize` sizes but numpy
/// has no such dtype). Now only a dtype numpy reads as items of the array's size,
/// with no object anywhere, is written, in the text numpy prints it as;
/// anything else is an error before a byte is written.
#[test]
fn npy_files_get_only_dtypes_numpy_reads_as_the_items() {
    for (dtype, ts) in [
        ("<f8", 8),
        ("|V3", 3),
        ("<M8[ms]", 8),
        ("<m8[10s]", 8),
        ("|b1", 1),
        ("?", 1),
        ("<c16", 16),
        ("[('a', '<i4'), ('b', '<f8')]", 12),
        ("[('f0', 'V300')]", 300),
        ("[('a', '<f4', (2,))]", 8),
        ("[('a', '<f4', (2, 3)), ('b', [('c', 'u1')])]", 25),
    ] {
        let mut a = two_items_of(dtype, ts);
        let mut npy = Vec::new();
        a.write_npy(&mut npy)
            .unwrap_or_else(|e| panic!("{dtype}: {e}"));
        assert!(npy.ends_with(&vec![7u8; 2 * ts]), "{dtype}");
    }
    for (dtype, ts) in [
        ("|O", 8),
        ("<f[", 8),
        ("", 8),
        ("<M8[']", 8),
        ("<M8[xs]", 8),
        ("<b4", 4),
        ("<?4", 4),
        ("<i3", 3),
        ("<f3", 3),
        ("[('a', 'O')]", 8),
        ("[('a', '<i4')]", 8),
        ("[('a', '<i4'), ('a', '<i4')]", 8),
        ("[('a', '<i4')] ", 4),
        ("[('a', '<i4'),]", 4),
        ("[('a\n', '<i4')]", 4),
        ("[('a', '<i4', ())]", 4),
        ("[('a', '<i4', 2)]", 8),
        ("[]", 4),
        ("{'names': ['a'], 'formats': ['<i4']}", 4),
    ] {
        let mut a = two_items_of(dtype, ts);
        let mut npy = Vec::new();
        let r = a.write_npy(&mut npy);
        assert!(matches!(r, Err(Error::Unsupported(_))), "{dtype:?}: {r:?}");
        assert!(npy.is_empty(), "{dtype:?}: wrote {} bytes", npy.len());
    }
}

/// A `b2nd` metalayer whose dtype holds a NUL (`"<f8\0x"`: C-Blosc2, and
/// since session 45 `NdMeta::decode`, read it as `"<f8"`) is rewritten in
/// place by a resize: the new metalayer, shorter by the bytes after the
/// NUL, left the old tail behind it, and the array no longer opened ("1
/// bytes after its value"; fuzz target `ndarray_read`). It is padded to the
/// stored length with NULs in its dtype, which C-Blosc2 and `decode` read
/// as the end of the dtype.
#[test]
fn a_resize_keeps_a_metalayer_whose_dtype_holds_a_nul_readable() {
    let meta = NdMeta::new(&[4], &[2], &[2], "<f8zz");
    let mut raw = meta.encode().unwrap();
    let at = raw.len() - 2;
    raw[at..].copy_from_slice(b"\0x");
    let mut sc = SChunk::builder()
        .cparams(CParams::default().typesize(8).blocksize(16))
        .chunksize(16)
        .meta("b2nd", &raw)
        .build_memory()
        .unwrap();
    let data: Vec<u8> = (0..32).collect();
    sc.append_buffer(&data[..16]).unwrap();
    sc.append_buffer(&data[16..]).unwrap();
    let a = NdArray::open(sc).unwrap();
    let mut meta = a.meta().clone();
    assert_eq!(meta.dtype, "<f8");
    let mut sc = a.into_schunk();
    ndarray::resize(&mut sc, &mut meta, &[6], None).unwrap();
    assert_eq!(sc.meta_get("b2nd").unwrap().len(), raw.len());
    let back = SChunk::from_cframe(sc.to_cframe().unwrap()).unwrap();
    let mut a = NdArray::open(back).unwrap();
    assert_eq!(
        (a.meta().shape.as_slice(), a.meta().dtype.as_str()),
        (&[6u64][..], "<f8")
    );
    let v = a.to_vec().unwrap();
    assert_eq!(&v[..32], &data[..]);
    assert!(v[32..].iter().all(|&b| b == 0));
}

/// An array of no items beside a dimension of 2^62, of 8-byte items. The
/// bytes of a box over it (or of a buffer shaped like it) were multiplied
/// in order from the item size: 8 × 2^62 overflowed before the 0, and
/// reads, selections and box copies of nothing were refused as
/// "overflows". A box with a 0 dimension holds no byte, whatever the other
/// dimensions; the same class as the C ABI's `b2nd_to_cbuffer` finding
/// (`fuzz-capi_frame-4.bin`).
#[test]
fn boxes_of_no_items_beside_a_huge_dimension_hold_no_bytes() {
    let shape = [1u64 << 62, 0];
    let meta = NdMeta::new(&shape, &[1, 1], &[1, 1], "<i8");
    let mut sc = empty(&meta);
    assert_eq!(sc.typesize(), 8);
    ndarray::get_slice(&mut sc, &meta, &[0, 0], &shape, &mut [], &shape).unwrap();
    ndarray::get_slice(&mut sc, &meta, &[5, 0], &[5, 0], &mut [], &shape).unwrap();
    ndarray::get_orthogonal(&mut sc, &meta, &[&[0, 1, 2], &[]], &mut [], &shape).unwrap();
    ndarray::copy_box(8, &[], &shape, &[0, 0], &shape, &mut [], &shape, &[0, 0]).unwrap();
    // A buffer shape whose other dimensions' product overflows, beside a
    // 0: no byte either (counted from 1, 2^40 × 2^40 overflowed first).
    let small = NdMeta::new(&[1, 1, 0], &[1, 1, 1], &[1, 1, 1], "|u1");
    let mut sc1 = empty(&small);
    let wide = [1u64 << 40, 1 << 40, 0];
    ndarray::get_slice(&mut sc1, &small, &[0, 0, 0], &[1, 1, 0], &mut [], &wide).unwrap();
    ndarray::get_orthogonal(&mut sc1, &small, &[&[0], &[0], &[]], &mut [], &wide).unwrap();
    // A box that does not fit stays refused: [0..2^62, 0..0] at [1, 0].
    assert!(matches!(
        ndarray::copy_box(8, &[], &shape, &[0, 0], &shape, &mut [], &shape, &[1, 0]),
        Err(Error::InvalidParam(_))
    ));
    // A buffer shape of items still needs its bytes, and gets them as
    // they were (the box is empty).
    let mut one = [7u8; 8];
    assert!(matches!(
        ndarray::get_slice(&mut sc, &meta, &[0, 0], &[0, 0], &mut one[..4], &[1, 1]),
        Err(Error::InvalidParam(_))
    ));
    ndarray::get_slice(&mut sc, &meta, &[0, 0], &[0, 0], &mut one, &[1, 1]).unwrap();
    assert_eq!(one, [7; 8]);
}
