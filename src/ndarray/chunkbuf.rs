//! A chunk's bytes built from zeros and items, knowing which of its blocks
//! were written: only those are zeroed again for the next chunk, and the
//! encoder skips the others (they are zero runs) instead of filtering and
//! scanning them. A chunk of 4 MiB holding a few items cost a 4 MiB
//! memset and a 4 MiB scan (the fuzz target `ndarray_args`' slow inputs).

use crate::chunk::encode::ZeroMap;

/// See the [module docs](self).
#[derive(Default)]
pub(super) struct ChunkBuf {
    bytes: Vec<u8>,
    /// Bytes per granule (the array's block).
    granule: usize,
    /// Granules that may hold non-zero bytes.
    dirty: Vec<bool>,
}

impl ChunkBuf {
    /// Make the buffer `len` zero bytes in granules of `granule` bytes:
    /// the granules written since the last call are zeroed again (all of
    /// them after a new `len` or `granule`).
    pub fn zero(&mut self, len: usize, granule: usize) {
        let granule = granule.max(1);
        if self.bytes.len() != len || self.granule != granule {
            // Zeroed by the allocator: pages of blocks never written are
            // never touched.
            self.bytes = vec![0; len];
            self.granule = granule;
            self.dirty.clear();
            self.dirty.resize(len.div_ceil(granule), false);
            return;
        }
        for (g, d) in self.dirty.iter_mut().enumerate() {
            if std::mem::take(d) {
                let r = g * granule..((g + 1) * granule).min(len);
                self.bytes[r].fill(0);
            }
        }
    }

    /// Copy `data` to byte `at`.
    #[inline]
    pub fn write(&mut self, at: usize, data: &[u8]) {
        self.bytes[at..at + data.len()].copy_from_slice(data);
        self.mark(at, at + data.len());
    }

    /// Bytes `from..to` may be non-zero.
    #[inline]
    pub fn mark(&mut self, from: usize, to: usize) {
        if from < to {
            for d in &mut self.dirty[from / self.granule..=(to - 1) / self.granule] {
                *d = true;
            }
        }
    }

    /// The whole buffer, to be written by the caller: every granule is
    /// then taken as written.
    pub fn all_mut(&mut self) -> &mut [u8] {
        self.dirty.fill(true);
        &mut self.bytes
    }

    /// The bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Which bytes are known to be zero, for the encoder.
    pub fn zeros(&self) -> ZeroMap<'_> {
        ZeroMap {
            granule: self.granule,
            dirty: &self.dirty,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::ChunkBuf;

    /// Zeroing again clears exactly what was written, in every granule a
    /// write touched (across granule edges too), and the map tells the
    /// written granules.
    #[test]
    fn zeroing_clears_what_was_written() {
        let mut b = ChunkBuf::default();
        b.zero(100, 16);
        b.write(14, &[1, 2, 3, 4]);
        b.write(99, &[9]);
        assert_eq!(&b.bytes()[14..18], &[1, 2, 3, 4]);
        let z = b.zeros();
        let dirty: Vec<usize> = (0..z.dirty.len()).filter(|&g| z.dirty[g]).collect();
        assert_eq!(dirty, [0, 1, 6]);
        b.zero(100, 16);
        assert!(b.bytes().iter().all(|&x| x == 0));
        assert!(b.zeros().dirty.iter().all(|&d| !d));
        b.all_mut()[50] = 7;
        b.zero(100, 16);
        assert!(b.bytes().iter().all(|&x| x == 0));
        // A new size or granule starts over.
        b.write(3, &[5]);
        b.zero(40, 8);
        assert_eq!((b.bytes().len(), b.zeros().dirty.len()), (40, 5));
        assert!(b.bytes().iter().all(|&x| x == 0));
    }
}
