//! The chunk calls as the crate's tests make them: through a context, on
//! Rust buffers, returning C's code.

use super::*;

/// Compress `src` through `ctx`; the chunk, or the error code.
pub(super) fn compress(ctx: *mut blosc2_context, src: &[u8]) -> Result<Vec<u8>, c_int> {
    let mut chunk = vec![0u8; src.len() + 64];
    // SAFETY: ctx is a live compression context; the sizes are the buffers'.
    let n = unsafe {
        blosc2_compress_ctx(
            ctx,
            src.as_ptr().cast(),
            src.len() as i32,
            chunk.as_mut_ptr().cast(),
            chunk.len() as i32,
        )
    };
    if n <= 0 {
        return Err(n);
    }
    chunk.truncate(n as usize);
    Ok(chunk)
}

/// Decompress `chunk` through `ctx` into `out`; C's return code.
pub(super) fn decompress_into(ctx: *mut blosc2_context, chunk: &[u8], out: &mut [u8]) -> c_int {
    // SAFETY: ctx is a live context; the sizes are the buffers'.
    unsafe {
        blosc2_decompress_ctx(
            ctx,
            chunk.as_ptr().cast(),
            chunk.len() as i32,
            out.as_mut_ptr().cast(),
            out.len() as i32,
        )
    }
}
