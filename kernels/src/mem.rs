//! Advice to the kernel for the large buffers the pipeline fills: a fresh
//! buffer of tens of megabytes otherwise takes a page fault per 4 KiB page
//! on its first write, which can cost more than the (de)compression that
//! writes it.

/// Buffers from this many bytes on are advised onto huge pages by
/// [`advise_huge_pages`] (smaller ones hold at most one 2 MiB page).
pub const HUGE_PAGES_FROM: usize = 4 << 20;

/// Ask Linux to back the 2 MiB-aligned part of `buf`'s allocation (all of
/// its capacity, written or not) with transparent huge pages, so that the
/// pages not yet written fault in 2 MiB at a time (where the system's THP
/// mode is `madvise`, as on this project's machine; with `always` they
/// already are, with `never` nothing changes). Advice only: the contents,
/// length and capacity stay as they are, and any failure is ignored. Does
/// nothing for allocations under [`HUGE_PAGES_FROM`], on other systems, and
/// under Miri.
///
/// ```
/// let mut v: Vec<u8> = Vec::with_capacity(8 << 20);
/// oxiblosc_kernels::advise_huge_pages(&mut v);
/// v.resize(8 << 20, 1);
/// assert!(v.iter().all(|&b| b == 1));
/// ```
pub fn advise_huge_pages(buf: &mut Vec<u8>) {
    let cap = buf.capacity();
    // SAFETY: the allocation's address (taken without a reference to its
    // bytes) and its `cap` bytes, live while `buf` is borrowed.
    unsafe { advise_huge_pages_at(buf.as_mut_ptr(), cap) }
}

/// [`advise_huge_pages`] for `len` bytes at `ptr` that are not a `Vec`'s
/// (a C allocation, a Python `bytes`).
///
/// # Safety
/// `ptr..ptr + len` lies inside one live allocation. Its bytes are neither
/// read nor written.
pub unsafe fn advise_huge_pages_at(ptr: *mut u8, len: usize) {
    #[cfg(all(target_os = "linux", not(miri)))]
    {
        const HUGE: usize = 2 << 20;
        if len < HUGE_PAGES_FROM {
            return;
        }
        let p = ptr as usize;
        let (Some(start), Some(end)) = (
            p.checked_next_multiple_of(HUGE),
            p.checked_add(len).map(|e| e & !(HUGE - 1)),
        ) else {
            return;
        };
        if end > start {
            // SAFETY: [start, end) lies inside the live allocation of `len`
            // bytes at `ptr` (the caller's contract), rounded inwards to
            // 2 MiB boundaries, so to page boundaries. MADV_HUGEPAGE changes
            // only how the kernel backs those pages, never their contents
            // or the mapping's validity; nothing reads or writes memory in
            // the call.
            unsafe {
                libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
            }
        }
    }
    #[cfg(not(all(target_os = "linux", not(miri))))]
    let _ = (ptr, len);
}

/// Ask the CPU to bring the cache lines of `buf` into its caches ahead of
/// the stores that will fill them. A hint, nothing more: the contents stay
/// as they are and nothing is waited for. The block decoder calls it for a
/// block's first output lines before it decodes the block's streams, so
/// that the lines arrive while the codec runs; kernels that fill a line in
/// several pieces (the bit unshuffle) otherwise wait on each line the
/// caches do not hold. Does nothing off x86-64 and under Miri.
///
/// ```
/// let out = vec![0u8; 8192];
/// oxiblosc_kernels::prefetch(&out);
/// ```
#[inline]
pub fn prefetch(buf: &[u8]) {
    #[cfg(target_arch = "x86_64")]
    crate::x86::prefetch(buf);
    #[cfg(not(target_arch = "x86_64"))]
    let _ = buf;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Advice leaves a buffer's bytes, length and capacity, whatever its
    /// size and fill, and the buffer grows and reads as before. (Not under
    /// Miri, where the advice is left out and megabytes take minutes.)
    #[test]
    #[cfg_attr(miri, ignore)]
    fn advice_changes_nothing_visible() {
        for (cap, len) in [
            (0, 0),
            (100, 10),
            (HUGE_PAGES_FROM - 1, 5),
            (HUGE_PAGES_FROM, 0),
        ] {
            let mut v: Vec<u8> = Vec::with_capacity(cap);
            v.extend((0..len).map(|i| i as u8));
            let (c, l) = (v.capacity(), v.len());
            advise_huge_pages(&mut v);
            assert_eq!((v.capacity(), v.len()), (c, l));
            assert!(v.iter().enumerate().all(|(i, &b)| b == i as u8));
        }
        let mut v = vec![7u8; 9 << 20];
        advise_huge_pages(&mut v);
        v.extend_from_slice(&[1, 2, 3]);
        assert!(v[..9 << 20].iter().all(|&b| b == 7));
        assert_eq!(&v[9 << 20..], &[1, 2, 3]);
    }
}
