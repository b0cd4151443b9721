//! Free space in the chunks section of a file-backed frame.
//!
//! A crash-safe change may only write bytes the current frame does not
//! use: the holes between live chunks, the gap between the last live chunk
//! and the offsets index (which starts at `cbytes`), and anything after the
//! frame's end. [`Space`] keeps the live chunk spans and the holes (all
//! offsets relative to `header_len`), places new chunks first-fit in the
//! holes, then in the gap, then after the end, and says where the new
//! index goes (see [`Alloc::tail`] and the policy in the
//! [`schunk`](super) module docs).

use std::collections::BTreeMap;

/// Live chunk spans and free extents of a frame's chunks section.
#[derive(Clone, Debug, Default)]
pub(crate) struct Space {
    /// Live stored chunks: offset -> length.
    spans: BTreeMap<u64, u64>,
    /// Free extents below `live_end`: start -> length (merged).
    holes: BTreeMap<u64, u64>,
    /// End of the highest live chunk.
    live_end: u64,
    /// Bytes kept free after the last chunk for the next one: the largest
    /// chunk stored so far.
    reserve: u64,
    /// Some chunks overlap (a crafted frame): dead chunk bytes are never
    /// reused, as they may still belong to a live chunk.
    overlap: bool,
}

/// Where one change puts its new chunks (see [`Space::place`]).
#[derive(Debug)]
pub(crate) struct Alloc {
    /// Section offset of each new chunk.
    pub locs: Vec<u64>,
    holes: BTreeMap<u64, u64>,
    live_end: u64,
    /// Chunks went past the old frame's end: the old gap and index/trailer
    /// `[start, end)` become a hole once the change is committed.
    jumped: Option<(u64, u64)>,
    reserve: u64,
}

/// Add the free extent `[start, start + len)` to `holes`, merging.
fn add_free(holes: &mut BTreeMap<u64, u64>, start: u64, len: u64) {
    if len == 0 {
        return;
    }
    let (mut s, mut e) = (start, start + len);
    if let Some((&ps, &pl)) = holes.range(..=s).next_back()
        && ps + pl >= s
    {
        s = ps;
        e = e.max(ps + pl);
        holes.remove(&ps);
    }
    while let Some((&ns, &nl)) = holes.range(s..).next()
        && ns <= e
    {
        e = e.max(ns + nl);
        holes.remove(&ns);
    }
    holes.insert(s, e - s);
}

impl Space {
    /// The space of a frame whose live chunks are `spans` (offset, length).
    pub fn build(spans: impl IntoIterator<Item = (u64, u64)>) -> Space {
        let mut map = BTreeMap::new();
        for (o, l) in spans {
            let e = map.entry(o).or_insert(0);
            *e = l.max(*e);
        }
        let mut sp = Space::default();
        let mut end = 0;
        for (&o, &l) in &map {
            if o > end {
                sp.holes.insert(end, o - end);
            } else if o < end {
                sp.overlap = true;
            }
            end = end.max(o + l);
            sp.reserve = sp.reserve.max(l);
        }
        sp.live_end = end;
        sp.spans = map;
        sp
    }

    /// The length of the live chunk stored at `loc`, when it is one.
    pub fn span(&self, loc: u64) -> Option<u64> {
        self.spans.get(&loc).copied()
    }

    /// End of the highest live chunk.
    pub fn live_end(&self) -> u64 {
        self.live_end
    }

    /// Free bytes between live chunks (the gap before the index excluded).
    pub fn hole_bytes(&self) -> u64 {
        self.holes.values().sum()
    }

    /// Place chunks of `sizes` bytes in space the current frame (index at
    /// `cbytes`, end at `end`) does not use: first fit in a hole, else at
    /// the start of the gap before the index, else after the frame's end.
    pub fn place(&self, sizes: &[u64], cbytes: u64, end: u64) -> Alloc {
        let mut holes = self.holes.clone();
        let mut live_end = self.live_end;
        let mut jumped = None;
        let mut reserve = self.reserve;
        let mut locs = Vec::with_capacity(sizes.len());
        for &c in sizes {
            reserve = reserve.max(c);
            let hole = holes.iter().find(|&(_, &l)| l >= c).map(|(&s, &l)| (s, l));
            let loc = if let Some((s, l)) = hole {
                holes.remove(&s);
                if l > c {
                    holes.insert(s + c, l - c);
                }
                s
            } else if jumped.is_none() && live_end + c <= cbytes {
                live_end += c;
                live_end - c
            } else {
                if jumped.is_none() {
                    // The old gap and index/trailer are still in use until
                    // the commit: they become a hole only afterwards.
                    jumped = Some((live_end, end));
                    live_end = live_end.max(end);
                }
                live_end += c;
                live_end - c
            };
            locs.push(loc);
        }
        Alloc {
            locs,
            holes,
            live_end,
            jumped,
            reserve,
        }
    }

    /// Record a committed change: `alloc`'s chunks (of `sizes`) are live,
    /// the chunks at `dead` are not.
    pub fn commit(&mut self, alloc: Alloc, sizes: &[u64], dead: &[u64]) {
        self.holes = alloc.holes;
        self.live_end = alloc.live_end;
        self.reserve = alloc.reserve;
        if let Some((s, e)) = alloc.jumped {
            add_free(&mut self.holes, s, e - s);
        }
        for (&loc, &len) in alloc.locs.iter().zip(sizes) {
            self.spans.insert(loc, len);
        }
        for d in dead {
            if let Some(len) = self.spans.remove(d)
                && !self.overlap
            {
                add_free(&mut self.holes, *d, len);
            }
        }
        // Holes reaching the last live chunk's end are part of the gap.
        while let Some((&s, &l)) = self.holes.last_key_value()
            && s + l >= self.live_end
        {
            self.holes.remove(&s);
            self.live_end = s;
        }
    }
}

impl Alloc {
    /// The largest chunk stored so far, this change's chunks included.
    pub fn reserve(&self) -> u64 {
        self.reserve
    }

    /// Where the new index (`tail_len` bytes with the trailer) goes: `reserve`
    /// bytes after the last chunk when that space lies before the old index
    /// (at `cbytes`), else after the old frame's `end` (and at least
    /// `reserve` bytes after the last chunk). `reserve` is `None` for the
    /// largest chunk stored so far.
    pub fn tail(&self, tail_len: u64, reserve: Option<u64>, cbytes: u64, end: u64) -> u64 {
        let p = self.live_end + reserve.unwrap_or(self.reserve);
        if self.jumped.is_none() && p + tail_len <= cbytes {
            p
        } else {
            p.max(end)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holes_merge_and_feed_the_gap() {
        let mut sp = Space::build([(0, 10), (20, 10), (40, 10)]);
        assert_eq!(sp.hole_bytes(), 20);
        assert_eq!(sp.live_end(), 50);
        // The hole at 10 takes a chunk of 10, the gap (50..60) one of 8.
        let a = sp.place(&[10, 8], 60, 80);
        assert_eq!(a.locs, vec![10, 30]);
        sp.commit(a, &[10, 8], &[40]);
        // The chunk at 40 died: 38..50 joins the gap.
        assert_eq!(sp.hole_bytes(), 0);
        assert_eq!(sp.live_end(), 38);
        sp.commit(sp.place(&[], 60, 80), &[], &[10]);
        assert_eq!(sp.hole_bytes(), 10);
        let a = sp.place(&[4, 4, 4], 60, 80);
        assert_eq!(a.locs, vec![10, 14, 38]);
    }

    #[test]
    fn a_chunk_that_does_not_fit_goes_after_the_end() {
        let sp = Space::build([(0, 10)]);
        let a = sp.place(&[30, 5], 15, 40);
        assert_eq!(a.locs, vec![40, 70]);
        // The tail goes after the chunks, leaving room for the largest one.
        assert_eq!(a.tail(7, None, 15, 40), 75 + 30);
        let mut sp2 = sp.clone();
        sp2.commit(a, &[30, 5], &[]);
        assert_eq!(sp2.hole_bytes(), 30);
        // Overlapping spans: dead bytes are never reused.
        let mut o = Space::build([(0, 20), (10, 20)]);
        o.commit(o.place(&[], 30, 40), &[], &[0]);
        assert_eq!(o.hole_bytes(), 0);
        assert_eq!(o.live_end(), 30);
    }

    #[test]
    fn the_tail_moves_back_when_the_gap_allows() {
        let sp = Space::build([(0, 10)]);
        let a = sp.place(&[10], 100, 120);
        assert_eq!(a.locs, vec![10]);
        assert_eq!(a.tail(20, None, 100, 120), 30);
        assert_eq!(a.tail(80, None, 100, 120), 120);
        assert_eq!(a.tail(20, Some(0), 100, 120), 20);
    }
}
