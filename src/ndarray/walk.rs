//! The walks over a chunk's items ([`Layout::for_each_span`],
//! [`Layout::for_each_run`], [`Layout::for_each_box_span`]): for each block
//! of a chunk that a box meets, its rows inside the box, in C order, runs
//! that follow on in both the chunk and the target merged into spans.
//! `layout.rs` holds the geometry they walk.

use super::layout::Layout;
use super::meta::MAX_DIM;

impl Layout {
    /// As [`Layout::for_each_run`], with runs that follow on from each other
    /// in both the chunk and the array merged into one: fewer, longer
    /// copies. A block whose rows are whole rows of the array is one span
    /// (an `N x 3` array read through runs of one row copies 3 items at a
    /// time), and so are consecutive such blocks. Unlike a run, a span may
    /// cross rows of the array. The walk itself visits each span once: the
    /// trailing dimensions a block covers whole are not iterated.
    pub fn for_each_span(&self, ci: u64, f: impl FnMut(usize, u64, usize)) {
        let zeros = [0u64; MAX_DIM];
        let mut m = Merged::new(f);
        self.walk(
            ci,
            &zeros[..self.ndim()],
            &self.shape,
            &self.shape,
            true,
            |c, a, k| m.push(c, a, k),
        );
        m.finish();
    }

    /// Calls `f(chunk_item, array_item, nitems)` for each run of items of
    /// chunk `ci` that are contiguous in both the chunk and the array (item
    /// offsets from the chunk's and the array's start), skipping padding.
    /// A run never crosses a row of the array (the last dimension):
    /// [`Layout::for_each_span`] merges them.
    pub fn for_each_run(&self, ci: u64, f: impl FnMut(usize, u64, usize)) {
        let zeros = [0u64; MAX_DIM];
        self.walk(
            ci,
            &zeros[..self.ndim()],
            &self.shape,
            &self.shape,
            false,
            f,
        );
    }

    /// The spans of chunk `ci` inside the box `start..stop` (checked by the
    /// caller: `start <= stop <= shape`, the product of `bshape` in
    /// `usize`): `f(chunk_item, buffer_item, nitems)`, the buffer being a
    /// C-order array of shape `bshape` (at least the box's, per dimension)
    /// with the box at its origin. Only the blocks the box touches are
    /// visited, and in each only its rows inside the box (C-Blosc2 reads a
    /// slice in time of the slice, not of its chunks).
    pub fn for_each_box_span(
        &self,
        ci: u64,
        start: &[u64],
        stop: &[u64],
        bshape: &[u64],
        f: impl FnMut(usize, usize, usize),
    ) {
        let mut f = f;
        let mut m = Merged::new(|c, b: u64, k| f(c, b as usize, k));
        self.walk(ci, start, stop, bshape, true, |c, b, k| m.push(c, b, k));
        m.finish();
    }

    /// The walk behind the runs and spans: for each block of chunk `ci`
    /// meeting the box `start..stop`, in C order of the chunk's blocks,
    /// each row of the box inside it: `f(chunk_item, target_item, nitems)`,
    /// the target a C-order buffer of shape `tshape` with the box at its
    /// origin. With `whole`, the trailing dimensions that a row covers
    /// whole in both the block and the target (so its rows follow on in
    /// both) are taken as part of one row.
    pub(super) fn walk(
        &self,
        ci: u64,
        start: &[u64],
        stop: &[u64],
        tshape: &[u64],
        whole: bool,
        mut f: impl FnMut(usize, u64, usize),
    ) {
        let n = self.ndim();
        if n == 0 {
            if ci == 0 {
                f(0, 0, 1);
            }
            return;
        }
        if ci >= self.nchunks {
            return;
        }
        // The chunk's origin, and the box's block coordinates in it.
        let mut co = [0u64; MAX_DIM];
        let (mut blo, mut bhi) = ([0u64; MAX_DIM], [0u64; MAX_DIM]);
        let mut rem = ci;
        for d in (0..n).rev() {
            co[d] = (rem % self.grid[d]) * self.chunkshape[d];
            rem /= self.grid[d];
            let lo = start[d].saturating_sub(co[d]);
            let hi = stop[d].saturating_sub(co[d]).min(self.chunkshape[d]);
            if lo >= hi {
                return;
            }
            blo[d] = lo / self.blockshape[d];
            bhi[d] = (hi - 1) / self.blockshape[d];
        }
        // The box is not empty, so no dimension of the target is 0 and
        // these products are at most its size.
        let mut tstr = [1u64; MAX_DIM];
        for d in (0..n - 1).rev() {
            tstr[d] = tstr[d + 1] * tshape[d + 1];
        }
        let mut bc = blo;
        let (mut org, mut lo, mut ext) = ([0u64; MAX_DIM], [0u64; MAX_DIM], [0u64; MAX_DIM]);
        loop {
            // Block `bc`: its origin in the array and its rows in the box.
            let mut b = 0u64;
            let mut skip = false;
            for d in 0..n {
                b = b * self.blocks[d] + bc[d];
                let in_chunk = bc[d] * self.blockshape[d];
                org[d] = co[d] + in_chunk;
                let end = (org[d] + self.blockshape[d])
                    .min(co[d] + self.chunkshape[d])
                    .min(stop[d]);
                lo[d] = org[d].max(start[d]);
                ext[d] = end.saturating_sub(lo[d]);
                skip |= ext[d] == 0;
            }
            if !skip {
                // The row's dimension `k`: the last, or the first of the
                // trailing ones after which every one is whole; a row is
                // then `len` items.
                let mut k = n - 1;
                let mut len = ext[k];
                while whole && k > 0 && ext[k] == self.blockshape[k] && ext[k] == tshape[k] {
                    k -= 1;
                    len *= ext[k];
                }
                let base = b * self.block_items as u64;
                let mut idx = [0u64; MAX_DIM];
                loop {
                    let (mut c, mut t) = (base, 0u64);
                    for d in 0..n {
                        c += (lo[d] - org[d] + idx[d]) * self.block_strides[d];
                        t += (lo[d] - start[d] + idx[d]) * tstr[d];
                    }
                    f(c as usize, t, len as usize);
                    // The next row: an odometer over the outer dimensions.
                    if !step(&mut idx[..k], &ext[..k]) {
                        break;
                    }
                }
            }
            if !step_from(&mut bc[..n], &blo[..n], &bhi[..n]) {
                return;
            }
        }
    }
}

/// `walk`'s steps passed on to `f`, each that follows on from the one
/// before in both offsets merged into it.
struct Merged<F: FnMut(usize, u64, usize)> {
    f: F,
    open: Option<(usize, u64, usize)>,
}

impl<F: FnMut(usize, u64, usize)> Merged<F> {
    fn new(f: F) -> Self {
        Merged { f, open: None }
    }

    fn push(&mut self, c: usize, t: u64, k: usize) {
        if let Some((oc, ot, on)) = &mut self.open {
            if *oc + *on == c && *ot + *on as u64 == t {
                *on += k;
                return;
            }
            (self.f)(*oc, *ot, *on);
        }
        self.open = Some((c, t, k));
    }

    fn finish(mut self) {
        if let Some((c, t, k)) = self.open.take() {
            (self.f)(c, t, k);
        }
    }
}

/// Advance the C-order odometer `idx` (each digit below `ext`); false when
/// it wraps to all zeros.
fn step(idx: &mut [u64], ext: &[u64]) -> bool {
    for d in (0..idx.len()).rev() {
        idx[d] += 1;
        if idx[d] < ext[d] {
            return true;
        }
        idx[d] = 0;
    }
    false
}

/// Advance the C-order odometer `bc` over `lo..=hi` per digit; false when
/// it wraps.
fn step_from(bc: &mut [u64], lo: &[u64], hi: &[u64]) -> bool {
    for d in (0..bc.len()).rev() {
        bc[d] += 1;
        if bc[d] <= hi[d] {
            return true;
        }
        bc[d] = lo[d];
    }
    false
}
