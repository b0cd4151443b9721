//! Boxes copied between C-order buffers of items ([`copy_box`]), as
//! C-Blosc2's `b2nd_copy_buffer2` copies them, every bound checked.

use crate::error::{Error, Result};

/// The bytes of a C-order box of `shape` items of `itemsize` bytes: 0 when
/// a dimension is 0, whatever the others are, else their product times
/// `itemsize`, `None` when that overflows `u64`.
///
/// Products taken in order overflow on the dimensions before a 0 (8 ×
/// 2^62 × 0); this one does not, so a box of no items is never refused as
/// too large.
///
/// ```
/// use oxiblosc::ndarray::box_bytes;
/// assert_eq!(box_bytes(&[3, 4], 2), Some(24));
/// assert_eq!(box_bytes(&[1 << 62, 0], 8), Some(0));
/// assert_eq!(box_bytes(&[1 << 62, 1], 8), None);
/// assert_eq!(box_bytes(&[], 8), Some(8)); // 0 dimensions: one item
/// ```
pub fn box_bytes(shape: &[u64], itemsize: usize) -> Option<u64> {
    if shape.contains(&0) {
        return Some(0);
    }
    shape
        .iter()
        .try_fold(itemsize as u64, |a, &d| a.checked_mul(d))
}

/// [`box_bytes`] as a `usize`.
fn nbytes(shape: &[u64], itemsize: usize) -> Option<usize> {
    box_bytes(shape, itemsize).and_then(|n| usize::try_from(n).ok())
}

/// Copy the box `src_start..src_stop` of `src`, a C-order array of
/// `src_shape` items of `itemsize` bytes, into `dst`, a C-order array of
/// `dst_shape`, at `dst_start`. Both arrays have as many dimensions (0: one
/// item); each buffer holds at least its shape's bytes.
///
/// ```
/// use oxiblosc::ndarray::copy_box;
/// let src: Vec<u8> = (0..12).collect(); // 3 x 4
/// let mut dst = [0u8; 6]; // 2 x 3
/// copy_box(1, &src, &[3, 4], &[1, 1], &[3, 3], &mut dst, &[2, 3], &[0, 1]).unwrap();
/// assert_eq!(dst, [0, 5, 6, 0, 9, 10]);
/// ```
///
/// # Errors
/// [`Error::InvalidParam`] for shapes or coordinates of other lengths, a
/// box outside `src` or not fitting `dst` at `dst_start`, a buffer shorter
/// than its shape's bytes (or their count overflowing), or `itemsize` 0.
#[allow(clippy::too_many_arguments)]
pub fn copy_box(
    itemsize: usize,
    src: &[u8],
    src_shape: &[u64],
    src_start: &[u64],
    src_stop: &[u64],
    dst: &mut [u8],
    dst_shape: &[u64],
    dst_start: &[u64],
) -> Result<()> {
    let n = src_shape.len();
    if [
        src_start.len(),
        src_stop.len(),
        dst_shape.len(),
        dst_start.len(),
    ]
    .iter()
    .any(|&l| l != n)
    {
        return Err(Error::InvalidParam(format!(
            "a box copy of {n} dimensions needs every shape and coordinate of {n}"
        )));
    }
    if itemsize == 0 {
        return Err(Error::InvalidParam("item size 0".into()));
    }
    for d in 0..n {
        let len = src_stop[d].checked_sub(src_start[d]);
        let fits = len.is_some_and(|len| {
            src_stop[d] <= src_shape[d]
                && dst_start[d]
                    .checked_add(len)
                    .is_some_and(|e| e <= dst_shape[d])
        });
        if !fits {
            return Err(Error::InvalidParam(format!(
                "box {}..{} of dimension {d} (length {}) to {} of a dimension of {}",
                src_start[d], src_stop[d], src_shape[d], dst_start[d], dst_shape[d]
            )));
        }
    }
    let (sn, dn) = (nbytes(src_shape, itemsize), nbytes(dst_shape, itemsize));
    if sn.is_none_or(|b| b > src.len()) || dn.is_none_or(|b| b > dst.len()) {
        return Err(Error::InvalidParam(format!(
            "buffers of {} and {} bytes for shapes {src_shape:?} and {dst_shape:?} of \
             {itemsize}-byte items",
            src.len(),
            dst.len()
        )));
    }
    let ext: Vec<u64> = (0..n).map(|d| src_stop[d] - src_start[d]).collect();
    if ext.contains(&0) {
        return Ok(());
    }
    // Trailing dimensions the box covers whole in both arrays make one
    // run with the dimension before them.
    let mut k = n;
    let mut run = itemsize;
    while k > 0 {
        k -= 1;
        run *= ext[k] as usize;
        if k == 0 || ext[k] != src_shape[k] || ext[k] != dst_shape[k] {
            break;
        }
    }
    // C-order strides in bytes (the buffers' sizes bound them).
    let strides = |shape: &[u64]| -> Vec<usize> {
        let mut s = vec![itemsize; n];
        for d in (0..n.saturating_sub(1)).rev() {
            s[d] = s[d + 1] * shape[d + 1] as usize;
        }
        s
    };
    let (ss, ds) = (strides(src_shape), strides(dst_shape));
    // Every row: the dimensions before `k` iterated, `k` and after one run.
    let mut idx = vec![0u64; k];
    loop {
        let mut so = 0;
        let mut dof = 0;
        for d in 0..n.min(k + 1) {
            let i = if d < k { idx[d] } else { 0 };
            so += (src_start[d] + i) as usize * ss[d];
            dof += (dst_start[d] + i) as usize * ds[d];
        }
        dst[dof..dof + run].copy_from_slice(&src[so..so + run]);
        let mut d = k;
        loop {
            if d == 0 {
                return Ok(());
            }
            d -= 1;
            idx[d] += 1;
            if idx[d] < ext[d] {
                break;
            }
            idx[d] = 0;
        }
    }
}
