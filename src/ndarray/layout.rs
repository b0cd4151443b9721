//! The geometry of an NDArray's super-chunk: how many chunks, how large,
//! and where each item of a chunk lives in the logical C-order array.
//!
//! Chunks tile the array in C order of the chunk grid (`ceil(shape /
//! chunkshape)` chunks per dimension). A chunk holds `extchunkshape =
//! ceil(chunkshape / blockshape) × blockshape` items per dimension: its
//! blocks, in C order of the block grid, each block `blockshape` items in
//! C order. Items of a block outside its chunk's `chunkshape` or outside
//! the array are padding. Every chunk, edge chunks too, has the same size.

use super::meta::{MAX_DIM, NdMeta};
use crate::error::{Error, Result};
use crate::params::MAX_BUFFERSIZE;

/// The checked geometry of an NDArray (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    pub(super) shape: Vec<u64>,
    pub(super) chunkshape: Vec<u64>,
    pub(super) blockshape: Vec<u64>,
    pub(super) itemsize: usize,
    /// Chunks per dimension.
    pub(super) grid: Vec<u64>,
    /// Blocks per chunk per dimension.
    pub(super) blocks: Vec<u64>,
    /// Items after one step of each dimension in the array.
    pub(super) array_strides: Vec<u64>,
    /// Items after one step of each dimension in a block.
    pub(super) block_strides: Vec<u64>,
    pub(super) nchunks: u64,
    pub(super) chunk_items: usize,
    pub(super) block_items: usize,
    pub(super) nitems: u64,
}

fn overflow(what: &str) -> Error {
    Error::Corrupt(format!("b2nd metalayer: {what} overflows"))
}

impl Layout {
    /// The geometry of `meta` with items of `itemsize` bytes.
    ///
    /// # Errors
    /// [`Error::Corrupt`] when the shapes differ in length, have more than
    /// [`MAX_DIM`] dimensions, a non-empty dimension has a zero chunk or
    /// block shape, or a product overflows: the array's bytes beyond `u64`, a chunk beyond
    /// [`MAX_BUFFERSIZE`] bytes. [`Error::InvalidParam`] for `itemsize` 0.
    pub fn new(meta: &NdMeta, itemsize: usize) -> Result<Layout> {
        let n = meta.ndim();
        if meta.chunkshape.len() != n || meta.blockshape.len() != n || n > MAX_DIM {
            return Err(Error::Corrupt(format!(
                "b2nd metalayer: shapes of {}, {} and {} dimensions",
                n,
                meta.chunkshape.len(),
                meta.blockshape.len()
            )));
        }
        if itemsize == 0 {
            return Err(Error::InvalidParam("item size 0".into()));
        }
        let mut grid = Vec::with_capacity(n);
        let mut blocks = Vec::with_capacity(n);
        let mut empty = false;
        let mut chunk_items: u64 = 1;
        let mut block_items: u64 = 1;
        for d in 0..n {
            let (s, c, b) = (meta.shape[d], meta.chunkshape[d], meta.blockshape[d]);
            if s > i64::MAX as u64 || c > i32::MAX as u64 {
                return Err(Error::Corrupt(format!(
                    "b2nd metalayer: dimension {d} has shape {s}, chunkshape {c}, blockshape {b}"
                )));
            }
            if s == 0 {
                empty = true;
            } else if c == 0 || b == 0 {
                return Err(Error::Corrupt(format!(
                    "b2nd metalayer: dimension {d} has shape {s} but chunkshape {c}, \
                     blockshape {b}"
                )));
            }
            let (g, nb) = if c == 0 || b == 0 {
                (0, 0)
            } else {
                (s.div_ceil(c), c.div_ceil(b))
            };
            grid.push(g);
            blocks.push(nb);
            chunk_items = chunk_items
                .checked_mul(nb * b)
                .ok_or_else(|| overflow("the chunk size"))?;
            block_items = block_items
                .checked_mul(b)
                .ok_or_else(|| overflow("the block size"))?;
        }
        chunk_items
            .checked_mul(itemsize as u64)
            .filter(|&v| v <= MAX_BUFFERSIZE as u64)
            .ok_or_else(|| {
                Error::Corrupt(format!(
                    "b2nd metalayer: a chunk of {chunk_items} items of {itemsize} bytes \
                     exceeds {MAX_BUFFERSIZE} bytes"
                ))
            })?;
        let nitems = meta.nitems().ok_or_else(|| overflow("the array size"))?;
        nitems
            .checked_mul(itemsize as u64)
            .ok_or_else(|| overflow("the array's bytes"))?;
        let nchunks = if empty {
            0
        } else {
            grid.iter()
                .try_fold(1u64, |a, &g| a.checked_mul(g))
                .ok_or_else(|| overflow("the number of chunks"))?
        };
        let mut array_strides = vec![1u64; n];
        let mut block_strides = vec![1u64; n];
        for d in (0..n.saturating_sub(1)).rev() {
            // The array strides are bounded by the checked array size (for
            // an empty array they may be 0, never overflowing). The block
            // strides are bounded by the checked block size when no block
            // length is 0; where one is (an empty dimension's, as
            // `default_shapes` gives it, as C-Blosc2 accepts it) the others'
            // product may overflow (`[0, 2^24, 2^28, 2^28]`, a panic found by
            // `ndarray_args`), but a block of 0 items is never addressed:
            // 0 then, as for the array strides.
            array_strides[d] = array_strides[d + 1]
                .checked_mul(meta.shape[d + 1])
                .unwrap_or(0);
            block_strides[d] = block_strides[d + 1]
                .checked_mul(meta.blockshape[d + 1])
                .unwrap_or(0);
        }
        Ok(Layout {
            shape: meta.shape.clone(),
            chunkshape: meta.chunkshape.clone(),
            blockshape: meta.blockshape.clone(),
            itemsize,
            grid,
            blocks,
            array_strides,
            block_strides,
            nchunks,
            chunk_items: chunk_items as usize,
            block_items: block_items as usize,
            nitems,
        })
    }

    /// Number of dimensions.
    pub fn ndim(&self) -> usize {
        self.shape.len()
    }
    /// Bytes per item.
    pub fn itemsize(&self) -> usize {
        self.itemsize
    }
    /// Chunks in the super-chunk.
    pub fn nchunks(&self) -> u64 {
        self.nchunks
    }
    /// Chunks per dimension.
    pub fn grid(&self) -> &[u64] {
        &self.grid
    }
    /// Bytes of every chunk (padding included).
    pub fn chunk_nbytes(&self) -> usize {
        self.chunk_items * self.itemsize
    }
    /// Bytes of every block.
    pub fn block_nbytes(&self) -> usize {
        self.block_items * self.itemsize
    }
    /// Items in the logical array.
    pub fn nitems(&self) -> u64 {
        self.nitems
    }
    /// Bytes of the logical array.
    pub fn nbytes(&self) -> u64 {
        self.nitems * self.itemsize as u64
    }
    /// Items in one step of the first dimension (the whole array for
    /// `ndim` 0).
    pub fn row_items(&self) -> u64 {
        match self.array_strides.first() {
            Some(&s) => s,
            None => 1,
        }
    }

    /// What coordinate `x` (in bounds) of dimension `d` adds to an item's
    /// offset inside its decoded chunk ([`Layout::locate`]'s second value
    /// is the sum over the dimensions): the place of its block in the
    /// chunk's block grid, and its place in the block.
    pub(crate) fn chunk_offset_part(&self, d: usize, x: u64) -> u64 {
        let p = x % self.chunkshape[d];
        let grid_stride: u64 = self.blocks[d + 1..].iter().product();
        p / self.blockshape[d] * grid_stride * self.block_items as u64
            + p % self.blockshape[d] * self.block_strides[d]
    }

    /// The first item, in a C-order buffer of shape `bshape` holding the
    /// box `start..stop` at its origin (checked by the caller, as for
    /// [`Layout::for_each_box_span`]), of chunk `ci` when the box holds the
    /// chunk whole and the decoded chunk is, byte for byte, one run of the
    /// buffer: no padding (the chunk inside the array, its blocks tiling
    /// it), its blocks one after the other in its C order (each block rows
    /// of the chunk), and the chunk one run of the buffer. Then the chunk
    /// decodes straight into the buffer. `None` otherwise.
    pub(crate) fn whole_chunk_run(
        &self,
        ci: u64,
        start: &[u64],
        stop: &[u64],
        bshape: &[u64],
    ) -> Option<u64> {
        let n = self.ndim();
        let (cs, bs) = (&self.chunkshape, &self.blockshape);
        // The chunk's coordinates, from its C-order index.
        let mut cc = [0u64; MAX_DIM];
        let mut rest = ci;
        for d in (0..n).rev() {
            cc[d] = rest % self.grid[d];
            rest /= self.grid[d];
        }
        for d in 0..n {
            let lo = cc[d] * cs[d];
            if lo < start[d] || lo + cs[d] > stop[d] || self.blocks[d] * bs[d] != cs[d] {
                return None;
            }
        }
        // Blocks: rows of the chunk from the last dimension they split on.
        if let Some(k) = (0..n).rev().find(|&d| bs[d] < cs[d])
            && bs[..k].iter().any(|&b| b != 1)
        {
            return None;
        }
        // The chunk: rows of the buffer from the last dimension it is
        // shorter in.
        if let Some(j) = (0..n).rev().find(|&d| cs[d] < bshape[d])
            && cs[..j].iter().any(|&c| c != 1)
        {
            return None;
        }
        let mut at = 0u64;
        for d in 0..n {
            at = at * bshape[d] + (cc[d] * cs[d] - start[d]);
        }
        Some(at)
    }

    /// Where the item at logical coordinate `coord` lives: the chunk (its
    /// index in C order of the grid) and the item's offset in the decoded
    /// chunk (its block's index in C order of the block grid times the
    /// block's items, plus its C-order place in the block). `None` for a
    /// coordinate of another length or outside the array.
    pub fn locate(&self, coord: &[u64]) -> Option<(u64, usize)> {
        if coord.len() != self.ndim() {
            return None;
        }
        let (mut ci, mut block, mut within) = (0u64, 0u64, 0u64);
        for (d, &x) in coord.iter().enumerate() {
            if x >= self.shape[d] {
                return None;
            }
            // In bounds, so every shape here is at least 1 and the sums
            // stay below the chunk count and the chunk's items.
            let (c, p) = (x / self.chunkshape[d], x % self.chunkshape[d]);
            ci = ci * self.grid[d] + c;
            block = block * self.blocks[d] + p / self.blockshape[d];
            within += p % self.blockshape[d] * self.block_strides[d];
        }
        Some((ci, (block * self.block_items as u64 + within) as usize))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The naive answer: walk every item of every chunk.
    fn naive(meta: &NdMeta, ci: u64, itemsize: usize) -> Vec<Option<u64>> {
        let l = Layout::new(meta, itemsize).unwrap();
        let n = meta.ndim();
        let ext: Vec<u64> = (0..n)
            .map(|d| meta.chunkshape[d].div_ceil(meta.blockshape[d]) * meta.blockshape[d])
            .collect();
        let mut cc = vec![0; n];
        let mut rem = ci;
        for d in (0..n).rev() {
            cc[d] = rem % l.grid[d];
            rem /= l.grid[d];
        }
        let nb: Vec<u64> = (0..n).map(|d| ext[d] / meta.blockshape[d]).collect();
        let bi: u64 = meta.blockshape.iter().product();
        let mut out = vec![None; l.chunk_items];
        for (k, slot) in out.iter_mut().enumerate() {
            let (b, mut within) = (k as u64 / bi, k as u64 % bi);
            let mut brem = b;
            let mut pos = vec![0; n];
            for d in (0..n).rev() {
                let bc = brem % nb[d];
                brem /= nb[d];
                let p = within % meta.blockshape[d];
                within /= meta.blockshape[d];
                pos[d] = bc * meta.blockshape[d] + p;
            }
            let inside = (0..n).all(|d| {
                pos[d] < meta.chunkshape[d] && cc[d] * meta.chunkshape[d] + pos[d] < meta.shape[d]
            });
            if inside {
                let mut a = 0;
                for d in 0..n {
                    a = a * meta.shape[d] + cc[d] * meta.chunkshape[d] + pos[d];
                }
                *slot = Some(a);
            }
        }
        out
    }

    #[test]
    fn runs_match_the_naive_walk() {
        let cases: &[(&[u64], &[u64], &[u64])] = &[
            (&[10], &[4], &[3]),
            (&[7, 5], &[3, 4], &[2, 3]),
            (&[6, 10], &[4, 5], &[2, 5]),
            (&[5, 7, 3], &[2, 3, 3], &[2, 2, 1]),
            (&[3, 4, 5, 6], &[2, 3, 4, 5], &[1, 2, 3, 2]),
            (&[9, 9], &[9, 9], &[9, 9]),
        ];
        for &(s, c, b) in cases {
            let m = NdMeta::new(s, c, b, "|u1");
            let l = Layout::new(&m, 1).unwrap();
            let mut seen = vec![0u32; l.nitems() as usize];
            for ci in 0..l.nchunks() {
                let want = naive(&m, ci, 1);
                let mut got = vec![None; l.chunk_items];
                l.for_each_run(ci, |c, a, k| {
                    for j in 0..k {
                        assert!(got[c + j].is_none());
                        got[c + j] = Some(a + j as u64);
                    }
                });
                assert_eq!(got, want, "{s:?} {c:?} {b:?} chunk {ci}");
                for a in got.into_iter().flatten() {
                    seen[a as usize] += 1;
                }
            }
            assert!(seen.iter().all(|&k| k == 1), "{s:?}: every item once");
        }
    }

    #[test]
    fn locate_agrees_with_the_runs() {
        // Padded edge chunks and blocks (shapes not multiples of chunks,
        // chunks not of blocks), whole ones, a scalar.
        let cases: &[(&[u64], &[u64], &[u64])] = &[
            (&[10], &[4], &[3]),
            (&[7, 5], &[3, 4], &[2, 3]),
            (&[6, 10], &[4, 5], &[2, 5]),
            (&[5, 7, 3], &[2, 3, 3], &[2, 2, 1]),
            (&[3, 4, 5, 6], &[2, 3, 4, 5], &[1, 2, 3, 2]),
            (&[9, 9], &[9, 9], &[9, 9]),
            // Blocks longer than chunks: a chunk is one block, padded.
            (&[5, 7], &[2, 5], &[3, 2]),
            (&[], &[], &[]),
        ];
        for &(s, c, b) in cases {
            let l = Layout::new(&NdMeta::new(s, c, b, "<i4"), 4).unwrap();
            let mut seen = 0u64;
            for ci in 0..l.nchunks() {
                l.for_each_run(ci, |c, a, k| {
                    for j in 0..k {
                        let mut rem = a + j as u64;
                        let mut x = vec![0u64; s.len()];
                        for d in (0..s.len()).rev() {
                            x[d] = rem % s[d];
                            rem /= s[d];
                        }
                        assert_eq!(l.locate(&x), Some((ci, c + j)), "{s:?} {c:?} {b:?} {x:?}");
                        // The offset is the sum of the dimensions' parts.
                        let sum: u64 = (0..s.len()).map(|d| l.chunk_offset_part(d, x[d])).sum();
                        assert_eq!(sum as usize, c + j, "parts of {x:?}");
                        seen += 1;
                    }
                });
            }
            assert_eq!(seen, l.nitems(), "{s:?}");
            // Outside the array, or of another length.
            if let Some(&last) = s.last() {
                let mut x = vec![0u64; s.len()];
                x[s.len() - 1] = last;
                assert_eq!(l.locate(&x), None);
                assert_eq!(l.locate(&x[1..]), None);
            }
            assert_eq!(l.locate(&[0; 5]), None);
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(200))]
        /// Random shapes of 1 to 4 dimensions, chunks and blocks: the runs
        /// are the naive walk's, and cover every item exactly once.
        #[test]
        fn random_geometries_match_the_naive_walk(
            dims in proptest::collection::vec((1u64..12, 1u64..12, 1u64..12), 1..5)
        ) {
            let shape: Vec<u64> = dims.iter().map(|d| d.0).collect();
            let chunks: Vec<u64> = dims.iter().map(|d| d.1).collect();
            let blocks: Vec<u64> = dims.iter().map(|d| d.2.min(d.1)).collect();
            let m = NdMeta::new(&shape, &chunks, &blocks, "|u1");
            let l = Layout::new(&m, 1).unwrap();
            let mut seen = vec![0u32; l.nitems() as usize];
            for ci in 0..l.nchunks() {
                let want = naive(&m, ci, 1);
                let mut got = vec![None; l.chunk_items];
                l.for_each_run(ci, |c, a, k| {
                    for j in 0..k {
                        got[c + j] = Some(a + j as u64);
                    }
                });
                proptest::prop_assert_eq!(&got, &want);
                for a in got.into_iter().flatten() {
                    seen[a as usize] += 1;
                }
            }
            proptest::prop_assert!(seen.iter().all(|&k| k == 1));
        }
    }

    /// The walk behind `for_each_span`, unmerged.
    fn walk_whole(l: &Layout, ci: u64, f: impl FnMut(usize, u64, usize)) {
        let zeros = [0u64; MAX_DIM];
        l.walk(ci, &zeros[..l.ndim()], &l.shape, &l.shape, true, f);
    }

    /// The spans of chunk `ci`: `(chunk_item, array_item, nitems)`.
    fn spans(l: &Layout, ci: u64) -> Vec<(usize, u64, usize)> {
        let mut v = Vec::new();
        l.for_each_span(ci, |c, a, k| v.push((c, a, k)));
        v
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(200))]
        /// Spans map every item as the naive walk does, and none could be
        /// merged with the next (each is as long as it can be). A dimension
        /// is whole (chunk and block of the array's length) half the time,
        /// so the walk's collapsing of whole trailing dimensions is met.
        #[test]
        fn spans_match_the_naive_walk_and_are_maximal(
            dims in proptest::collection::vec(
                (1u64..12, 1u64..12, 1u64..12, proptest::bool::ANY),
                1..5,
            )
        ) {
            let shape: Vec<u64> = dims.iter().map(|d| d.0).collect();
            let whole = |d: &(u64, u64, u64, bool), v: u64| if d.3 { d.0 } else { v };
            let chunks: Vec<u64> = dims.iter().map(|d| whole(d, d.1)).collect();
            let blocks: Vec<u64> = dims.iter().map(|d| whole(d, d.2.min(d.1))).collect();
            let m = NdMeta::new(&shape, &chunks, &blocks, "|u1");
            let l = Layout::new(&m, 1).unwrap();
            for ci in 0..l.nchunks() {
                let s = spans(&l, ci);
                let mut got = vec![None; l.chunk_items];
                for &(c, a, k) in &s {
                    proptest::prop_assert!(k > 0);
                    for j in 0..k {
                        proptest::prop_assert!(got[c + j].is_none());
                        got[c + j] = Some(a + j as u64);
                    }
                }
                proptest::prop_assert_eq!(&got, &naive(&m, ci, 1));
                for w in s.windows(2) {
                    let ((c0, a0, k0), (c1, a1, _)) = (w[0], w[1]);
                    proptest::prop_assert!(c0 + k0 != c1 || a0 + k0 as u64 != a1);
                }
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]
        /// Box spans: each chunk item inside the box goes to its C-order
        /// place in a buffer of shape `bshape` (the box at its origin),
        /// every box item exactly once over all chunks, and no span could
        /// be merged with the next.
        #[test]
        fn box_spans_match_the_naive_walk(
            dims in proptest::collection::vec(
                (1u64..10, 1u64..10, 1u64..10, proptest::bool::ANY, 0u64..10, 0u64..10, 0u64..3),
                1..5,
            )
        ) {
            let shape: Vec<u64> = dims.iter().map(|d| d.0).collect();
            let whole = |d: &(u64, u64, u64, bool, u64, u64, u64), v: u64| if d.3 { d.0 } else { v };
            let chunks: Vec<u64> = dims.iter().map(|d| whole(d, d.1)).collect();
            let blocks: Vec<u64> = dims.iter().map(|d| whole(d, d.2.min(d.1))).collect();
            // A box inside the array (the whole dimension when its flag
            // is set), its buffer wider by 0-2 items per dimension.
            let (start, stop): (Vec<u64>, Vec<u64>) = dims
                .iter()
                .map(|d| {
                    if d.3 {
                        (0, d.0)
                    } else {
                        let (a, b) = (d.4 % (d.0 + 1), d.5 % (d.0 + 1));
                        (a.min(b), a.max(b))
                    }
                })
                .unzip();
            let bshape: Vec<u64> = (0..dims.len()).map(|d| stop[d] - start[d] + dims[d].6).collect();
            let m = NdMeta::new(&shape, &chunks, &blocks, "|u1");
            let l = Layout::new(&m, 1).unwrap();
            let n = shape.len();
            let bitems: u64 = bshape.iter().product();
            let mut seen = vec![0u32; bitems as usize];
            for ci in 0..l.nchunks() {
                let mut want = vec![None; l.chunk_items];
                for (c, a) in naive(&m, ci, 1).into_iter().enumerate() {
                    let Some(mut a) = a else { continue };
                    let mut x = vec![0; n];
                    for d in (0..n).rev() {
                        x[d] = a % shape[d];
                        a /= shape[d];
                    }
                    if (0..n).all(|d| x[d] >= start[d] && x[d] < stop[d]) {
                        want[c] = Some((0..n).fold(0, |t, d| t * bshape[d] + x[d] - start[d]) as usize);
                    }
                }
                let mut got = vec![None; l.chunk_items];
                let mut spans = Vec::new();
                l.for_each_box_span(ci, &start, &stop, &bshape, |c, b, k| spans.push((c, b, k)));
                for &(c, b, k) in &spans {
                    proptest::prop_assert!(k > 0);
                    for j in 0..k {
                        proptest::prop_assert!(got[c + j].is_none());
                        got[c + j] = Some(b + j);
                        seen[b + j] += 1;
                    }
                }
                proptest::prop_assert_eq!(&got, &want, "chunk {}", ci);
                for w in spans.windows(2) {
                    let ((c0, b0, k0), (c1, b1, _)) = (w[0], w[1]);
                    proptest::prop_assert!(c0 + k0 != c1 || b0 + k0 != b1);
                }
                // The decoded chunk is one run of the buffer exactly when
                // every item of it lands in the box, each after the one
                // before.
                let run = match want.first() {
                    Some(&Some(b0)) if want.iter().enumerate().all(|(c, w)| *w == Some(b0 + c)) => {
                        Some(b0 as u64)
                    }
                    _ => None,
                };
                proptest::prop_assert_eq!(
                    l.whole_chunk_run(ci, &start, &stop, &bshape),
                    run,
                    "chunk {}",
                    ci
                );
            }
            let mut x = vec![0u64; n];
            for (t, &k) in seen.iter().enumerate() {
                let mut r = t as u64;
                for d in (0..n).rev() {
                    x[d] = r % bshape[d];
                    r /= bshape[d];
                }
                let inside = (0..n).all(|d| x[d] < stop[d] - start[d]);
                proptest::prop_assert_eq!(k, u32::from(inside), "buffer item {}", t);
            }
        }
    }

    #[test]
    fn a_box_walk_visits_only_the_blocks_and_rows_it_meets() {
        // Rows 500..510 of a 100,000 x 3 array in one chunk of blocks of
        // 100 x 3: one block met, one step (its rows whole in the block
        // and in a buffer of the box's shape), 10 steps in a wider one.
        let l = Layout::new(
            &NdMeta::new(&[100_000, 3], &[100_000, 3], &[100, 3], "|u1"),
            1,
        )
        .unwrap();
        let mut steps = Vec::new();
        l.walk(0, &[500, 0], &[510, 3], &[10, 3], true, |c, b, k| {
            steps.push((c, b, k))
        });
        assert_eq!(steps, [(1500, 0, 30)]);
        steps.clear();
        l.walk(0, &[500, 0], &[510, 3], &[10, 4], true, |c, b, k| {
            steps.push((c, b, k))
        });
        assert_eq!(steps.len(), 10);
        assert_eq!(steps[9], (1527, 36, 3));
        // Across two blocks: a step in each, merged into one span.
        steps.clear();
        l.walk(0, &[150, 0], &[250, 3], &[100, 3], true, |c, b, k| {
            steps.push((c, b, k))
        });
        assert_eq!(steps, [(450, 0, 150), (600, 150, 150)]);
        let mut spans = Vec::new();
        l.for_each_box_span(0, &[150, 0], &[250, 3], &[100, 3], |c, b, k| {
            spans.push((c, b, k))
        });
        assert_eq!(spans, [(450, 0, 300)]);
    }

    #[test]
    fn whole_rows_are_one_span_per_chunk() {
        // Blocks of whole rows, stacked: each chunk is one span (a run is
        // one row of 3 items), the last chunk's padding left out.
        let l = Layout::new(&NdMeta::new(&[10, 3], &[4, 3], &[2, 3], "|u1"), 1).unwrap();
        assert_eq!(spans(&l, 0), [(0, 0, 12)]);
        assert_eq!(spans(&l, 2), [(0, 24, 6)]);
        let mut runs = 0;
        l.for_each_run(0, |_, _, k| {
            assert_eq!(k, 3);
            runs += 1;
        });
        assert_eq!(runs, 4);
        // Rows split across chunks: a span per row still.
        let l = Layout::new(&NdMeta::new(&[4, 6], &[2, 3], &[1, 3], "|u1"), 1).unwrap();
        assert_eq!(spans(&l, 1), [(0, 3, 3), (3, 9, 3)]);
    }

    #[test]
    fn the_span_walk_skips_the_dimensions_a_block_covers_whole() {
        /// Shape, chunks, blocks, walk steps in chunk 0, spans in chunk 0.
        type Case = (&'static [u64], &'static [u64], &'static [u64], usize, usize);
        let cases: &[Case] = &[
            // All but the first dimension whole: a step per block, and the
            // two blocks of chunk 0 follow on.
            (&[5, 2, 3, 4], &[2, 2, 3, 4], &[1, 2, 3, 4], 2, 1),
            // The last two whole, the second not: a step (of 2 x 12 items)
            // per row of the first dimension in each of the chunk's two
            // blocks; none follows on from the one before in the array.
            (&[5, 6, 3, 4], &[2, 4, 3, 4], &[2, 2, 3, 4], 4, 4),
            // The last dimension's block narrower than the array's: a step
            // per row, as for_each_run; only the second block's last row
            // (items 9..12) and the third's first (12..15) follow on.
            (&[4, 6], &[4, 6], &[2, 3], 8, 7),
            // Rows of the array's length, but padded in their block (the
            // chunk and block are wider than the array): nothing follows
            // on in the chunk, a step and a span per row.
            (&[4, 3], &[4, 5], &[2, 5], 4, 4),
            // Every dimension whole (one chunk, one block): one step.
            (&[3, 2, 5], &[3, 2, 5], &[3, 2, 5], 1, 1),
        ];
        for &(s, c, b, steps, nspans) in cases {
            let m = NdMeta::new(s, c, b, "|u1");
            let l = Layout::new(&m, 1).unwrap();
            let mut walked = Vec::new();
            walk_whole(&l, 0, |c, a, k| walked.push((c, a, k)));
            assert_eq!(walked.len(), steps, "{s:?} {c:?} {b:?}: walk steps");
            assert_eq!(spans(&l, 0).len(), nspans, "{s:?} {c:?} {b:?}: spans");
            for ci in 0..l.nchunks() {
                let mut got = vec![None; l.chunk_items];
                walk_whole(&l, ci, |c, a, k| {
                    for j in 0..k {
                        assert!(got[c + j].is_none());
                        got[c + j] = Some(a + j as u64);
                    }
                });
                assert_eq!(got, naive(&m, ci, 1), "{s:?} {c:?} {b:?} chunk {ci}");
            }
        }
    }

    #[test]
    fn sizes_and_overflow() {
        // CONTAINER-NOTES §9: chunks 3×5, blocks 2×5 of a 6×10 float64
        // array → 160-byte chunks, 640 bytes stored for 480 of data.
        let l = Layout::new(&NdMeta::new(&[6, 10], &[3, 5], &[2, 5], "<f8"), 8).unwrap();
        assert_eq!((l.chunk_nbytes(), l.nchunks(), l.nbytes()), (160, 4, 480));
        let huge = i32::MAX as u64;
        let m = NdMeta::new(&[huge, huge], &[huge, huge], &[1, 1], "|u1");
        assert!(Layout::new(&m, 1).is_err());
        let m = NdMeta::new(&[i64::MAX as u64, 4], &[1, 1], &[1, 1], "|u1");
        assert!(Layout::new(&m, 1).is_err());
        let m = NdMeta::new(&[4], &[0], &[0], "|u1");
        assert!(Layout::new(&m, 1).is_err());
        // Blocks longer than chunks (C-Blosc2 makes them: its test
        // b2nd/test_b2nd_concatenate): a chunk is then one block, padded.
        let m = NdMeta::new(&[40, 0, 12], &[20, 0, 12], &[25, 0, 6], "|u1");
        assert_eq!(Layout::new(&m, 1).unwrap().nchunks(), 0);
        assert_eq!(NdMeta::decode(&m.encode().unwrap()).unwrap(), m);
        let m = NdMeta::new(&[40, 3, 12], &[20, 3, 12], &[25, 3, 6], "|u1");
        let l = Layout::new(&m, 1).unwrap();
        assert_eq!(
            (l.nchunks(), l.chunk_nbytes(), l.block_nbytes()),
            (2, 900, 450)
        );
        assert_eq!(NdMeta::decode(&m.encode().unwrap()).unwrap(), m);
        let empty = Layout::new(&NdMeta::new(&[0, 5], &[0, 5], &[0, 5], "<f4"), 4).unwrap();
        assert_eq!((empty.nchunks(), empty.nbytes()), (0, 0));
        let scalar = Layout::new(&NdMeta::new(&[], &[], &[], "<f8"), 8).unwrap();
        assert_eq!((scalar.nchunks(), scalar.chunk_nbytes()), (1, 8));
    }
}
