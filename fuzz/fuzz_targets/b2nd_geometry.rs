//! The geometry of an array as C reads it from a `b2nd_array_t`, and as
//! it must be for an `NdMeta`: `ndim`, then per dimension the shape, chunk
//! and block lengths, then `nitems`. Shared by `capi_frame` and
//! `ndarray_args` (since session 45).
use blosc2::b2nd::b2nd_array_t;
use oxiblosc::ndarray::NdMeta;

/// The geometry in the struct of the live array `a`.
pub fn of_array(a: *const b2nd_array_t) -> Vec<i64> {
    // SAFETY: a live array (the caller's).
    let c = unsafe { &*a };
    let n = c.ndim.clamp(0, 8) as usize;
    let mut g = vec![i64::from(c.ndim)];
    for d in 0..n {
        g.extend([
            c.shape[d],
            i64::from(c.chunkshape[d]),
            i64::from(c.blockshape[d]),
        ]);
    }
    g.push(c.nitems);
    g
}

/// What [`of_array`] must give for an array of `meta` (`nitems` -1 when
/// the shape's product overflows, which no array's does).
pub fn of_meta(meta: &NdMeta) -> Vec<i64> {
    let mut g = vec![meta.ndim() as i64];
    for d in 0..meta.ndim() {
        g.extend([meta.shape[d], meta.chunkshape[d], meta.blockshape[d]].map(|x| x as i64));
    }
    let items = meta.shape.iter().try_fold(1u64, |a, &d| a.checked_mul(d));
    g.push(items.and_then(|p| i64::try_from(p).ok()).unwrap_or(-1));
    g
}
