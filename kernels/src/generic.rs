//! Scalar reference kernels: the oracle every SIMD path is tested against.
//!
//! Portable Rust only (no intrinsics, no `unsafe`). The code is written so the
//! compiler can keep it fast on any target (fixed-size inner loops for the
//! common type sizes, 8-byte SWAR words), but clarity comes first: when a SIMD
//! kernel disagrees with one of these functions, the SIMD kernel is wrong.
//!
//! Every function here assumes what the public wrappers in `lib.rs` check:
//! `src.len() == dst.len()`, `typesize >= 1`, and a reference block at least
//! as long as `src`. They never touch memory out of bounds whatever they are
//! given (safe Rust), they may only panic if those preconditions are broken.

/// Byte shuffle: byte `j` of element `i` goes to `dst[j * n + i]`, with
/// `n = src.len() / typesize`; the trailing `src.len() % typesize` bytes are
/// copied unchanged.
pub(crate) fn shuffle(typesize: usize, src: &[u8], dst: &mut [u8]) {
    let n = src.len() / typesize;
    let body = n * typesize;
    match typesize {
        1 => dst[..body].copy_from_slice(&src[..body]),
        2 => shuffle_fixed::<2>(&src[..body], &mut dst[..body], n),
        3 => shuffle_fixed::<3>(&src[..body], &mut dst[..body], n),
        4 => shuffle_fixed::<4>(&src[..body], &mut dst[..body], n),
        8 => shuffle_fixed::<8>(&src[..body], &mut dst[..body], n),
        16 => shuffle_fixed::<16>(&src[..body], &mut dst[..body], n),
        _ => shuffle_any(typesize, &src[..body], &mut dst[..body], n),
    }
    dst[body..].copy_from_slice(&src[body..]);
}

/// Inverse of [`shuffle`].
pub(crate) fn unshuffle(typesize: usize, src: &[u8], dst: &mut [u8]) {
    let n = src.len() / typesize;
    let body = n * typesize;
    match typesize {
        1 => dst[..body].copy_from_slice(&src[..body]),
        2 => unshuffle_fixed::<2>(&src[..body], &mut dst[..body], n),
        3 => unshuffle_fixed::<3>(&src[..body], &mut dst[..body], n),
        4 => unshuffle_fixed::<4>(&src[..body], &mut dst[..body], n),
        8 => unshuffle_fixed::<8>(&src[..body], &mut dst[..body], n),
        16 => unshuffle_fixed::<16>(&src[..body], &mut dst[..body], n),
        _ => unshuffle_any(typesize, &src[..body], &mut dst[..body], n),
    }
    dst[body..].copy_from_slice(&src[body..]);
}

/// Shuffle of `n` whole elements of `T` bytes, in tiles of 64 elements: for
/// each stream the tile's 64 bytes are gathered 8 at a time into a word and
/// stored, so every stream receives whole cache lines (streams `n` bytes
/// apart would otherwise evict each other a byte at a time).
#[inline(always)]
fn shuffle_fixed<const T: usize>(src: &[u8], dst: &mut [u8], n: usize) {
    const E: usize = 64;
    let ne = n - n % E;
    for (t, elems) in src[..ne * T].chunks_exact(E * T).enumerate() {
        let i0 = t * E;
        for j in 0..T {
            let out = &mut dst[j * n + i0..j * n + i0 + E];
            for (g, word) in out.chunks_exact_mut(8).enumerate() {
                let mut w = [0u8; 8];
                for (k, b) in w.iter_mut().enumerate() {
                    *b = elems[(g * 8 + k) * T + j];
                }
                word.copy_from_slice(&w);
            }
        }
    }
    for i in ne..n {
        for j in 0..T {
            dst[j * n + i] = src[i * T + j];
        }
    }
}

#[inline(always)]
fn unshuffle_fixed<const T: usize>(src: &[u8], dst: &mut [u8], n: usize) {
    const E: usize = 64;
    let ne = n - n % E;
    for (t, elems) in dst[..ne * T].chunks_exact_mut(E * T).enumerate() {
        let i0 = t * E;
        for j in 0..T {
            let inp = &src[j * n + i0..j * n + i0 + E];
            for (g, word) in inp.chunks_exact(8).enumerate() {
                for (k, b) in word.iter().enumerate() {
                    elems[(g * 8 + k) * T + j] = *b;
                }
            }
        }
    }
    for i in ne..n {
        for j in 0..T {
            dst[i * T + j] = src[j * n + i];
        }
    }
}

/// Any element size: walk the output stream by stream in tiles of elements,
/// so the strided reads of one tile stay in L1 while every stream is written.
fn shuffle_any(ts: usize, src: &[u8], dst: &mut [u8], n: usize) {
    const TILE: usize = 256;
    let mut i0 = 0;
    while i0 < n {
        let i1 = (i0 + TILE).min(n);
        for j in 0..ts {
            let out = &mut dst[j * n + i0..j * n + i1];
            for (o, e) in out.iter_mut().zip(src[i0 * ts + j..].iter().step_by(ts)) {
                *o = *e;
            }
        }
        i0 = i1;
    }
}

fn unshuffle_any(ts: usize, src: &[u8], dst: &mut [u8], n: usize) {
    const TILE: usize = 256;
    let mut i0 = 0;
    while i0 < n {
        let i1 = (i0 + TILE).min(n);
        for j in 0..ts {
            let inp = &src[j * n + i0..j * n + i1];
            for (e, o) in inp.iter().zip(dst[i0 * ts + j..].iter_mut().step_by(ts)) {
                *o = *e;
            }
        }
        i0 = i1;
    }
}

/// Transpose an 8x8 bit matrix held in a little-endian word: bit `b` of byte
/// `k` moves to bit `k` of byte `b`. Self-inverse.
#[inline(always)]
pub(crate) fn transpose8x8(mut x: u64) -> u64 {
    let t = (x ^ (x >> 7)) & 0x00AA_00AA_00AA_00AA;
    x ^= t ^ (t << 7);
    let t = (x ^ (x >> 14)) & 0x0000_CCCC_0000_CCCC;
    x ^= t ^ (t << 14);
    let t = (x ^ (x >> 28)) & 0x0000_0000_F0F0_F0F0;
    x ^ t ^ (t << 28)
}

/// Number of elements that take part in the bit transpose of a buffer of
/// `len` bytes: the largest multiple of 8 whole elements.
#[inline]
pub(crate) fn bit_elements(typesize: usize, len: usize) -> usize {
    let n = len / typesize;
    n - n % 8
}

/// Bit shuffle (C-Blosc2 >= 3 layout): for the first `m` elements (`m` the
/// largest multiple of 8 that fits), bit `b` of byte `j` of every element is
/// packed LSB-first into row `8 * j + b` of `m / 8` bytes; rows are stored in
/// order. The remaining bytes are copied unchanged.
pub(crate) fn bitshuffle(typesize: usize, src: &[u8], dst: &mut [u8]) {
    let m = bit_elements(typesize, src.len());
    let body = m * typesize;
    let rowlen = m / 8;
    match typesize {
        1 => bitshuffle_fixed::<1>(&src[..body], &mut dst[..body], rowlen),
        2 => bitshuffle_fixed::<2>(&src[..body], &mut dst[..body], rowlen),
        4 => bitshuffle_fixed::<4>(&src[..body], &mut dst[..body], rowlen),
        8 => bitshuffle_fixed::<8>(&src[..body], &mut dst[..body], rowlen),
        16 => bitshuffle_fixed::<16>(&src[..body], &mut dst[..body], rowlen),
        _ => bitshuffle_any(typesize, &src[..body], &mut dst[..body], rowlen),
    }
    dst[body..].copy_from_slice(&src[body..]);
}

/// Inverse of [`bitshuffle`].
pub(crate) fn bitunshuffle(typesize: usize, src: &[u8], dst: &mut [u8]) {
    let m = bit_elements(typesize, src.len());
    let body = m * typesize;
    let rowlen = m / 8;
    match typesize {
        1 => bitunshuffle_fixed::<1>(&src[..body], &mut dst[..body], rowlen),
        2 => bitunshuffle_fixed::<2>(&src[..body], &mut dst[..body], rowlen),
        4 => bitunshuffle_fixed::<4>(&src[..body], &mut dst[..body], rowlen),
        8 => bitunshuffle_fixed::<8>(&src[..body], &mut dst[..body], rowlen),
        16 => bitunshuffle_fixed::<16>(&src[..body], &mut dst[..body], rowlen),
        _ => bitunshuffle_any(typesize, &src[..body], &mut dst[..body], rowlen),
    }
    dst[body..].copy_from_slice(&src[body..]);
}

/// Columns (bytes of each output row) handled per tile. One tile reads
/// `8 * TILE_Q` whole elements and writes `TILE_Q` contiguous bytes to each
/// of the `8 * typesize` rows, so neither side strides through memory a byte
/// at a time (row-at-a-time writes 16 KiB apart thrash L1).
const TILE_Q: usize = 64;

/// Elements per tile of the fixed-typesize bit transposes: 512 elements, so a
/// tile's byte planes (at most 16 x 512 bytes) stay in L1 and every row
/// receives 64 contiguous bytes (one cache line) per tile.
const PLANE_E: usize = 8 * TILE_Q;

/// Bit shuffle of whole groups of 8 elements of `T` bytes, tile by tile: the
/// tile is first byte-shuffled into `T` contiguous planes (the fast byte
/// shuffle), then each plane is bit-transposed 64 elements at a time: eight
/// words loaded, each an 8x8 bit transpose, then one 8x8 byte transpose across
/// the eight words yields one 8-byte word for each of the 8 output rows.
#[inline(always)]
fn bitshuffle_fixed<const T: usize>(src: &[u8], dst: &mut [u8], rowlen: usize) {
    let mut planes = [0u8; 16 * PLANE_E];
    let mut q0 = 0;
    while q0 < rowlen {
        let qn = TILE_Q.min(rowlen - q0);
        let e = 8 * qn;
        let tile = &src[q0 * 8 * T..(q0 + qn) * 8 * T];
        let planes = &mut planes[..T * e];
        if T == 1 {
            planes.copy_from_slice(tile);
        } else {
            shuffle_fixed::<T>(tile, planes, e);
        }
        for j in 0..T {
            let plane = &planes[j * e..(j + 1) * e];
            let rows = &mut dst[8 * j * rowlen..8 * (j + 1) * rowlen];
            let full = qn - qn % 8;
            for (g, block) in plane[..8 * full].chunks_exact(64).enumerate() {
                let mut w = [0u64; 8];
                for (k, word) in w.iter_mut().enumerate() {
                    *word = transpose8x8(load_u64(&block[8 * k..]));
                }
                transpose_bytes8x8(&mut w);
                let at = q0 + 8 * g;
                for (b, word) in w.iter().enumerate() {
                    rows[b * rowlen + at..b * rowlen + at + 8].copy_from_slice(&word.to_le_bytes());
                }
            }
            for qi in full..qn {
                let y = transpose8x8(load_u64(&plane[8 * qi..])).to_le_bytes();
                for (b, byte) in y.iter().enumerate() {
                    rows[b * rowlen + q0 + qi] = *byte;
                }
            }
        }
        q0 += qn;
    }
}

/// Inverse of [`bitshuffle_fixed`]: rows -> planes (byte then bit
/// transposes, both self-inverse) -> byte unshuffle of the tile.
#[inline(always)]
fn bitunshuffle_fixed<const T: usize>(src: &[u8], dst: &mut [u8], rowlen: usize) {
    let mut planes = [0u8; 16 * PLANE_E];
    let mut q0 = 0;
    while q0 < rowlen {
        let qn = TILE_Q.min(rowlen - q0);
        let e = 8 * qn;
        let planes = &mut planes[..T * e];
        for j in 0..T {
            let plane = &mut planes[j * e..(j + 1) * e];
            let rows = &src[8 * j * rowlen..8 * (j + 1) * rowlen];
            let full = qn - qn % 8;
            for (g, block) in plane[..8 * full].chunks_exact_mut(64).enumerate() {
                let at = q0 + 8 * g;
                let mut w = [0u64; 8];
                for (b, word) in w.iter_mut().enumerate() {
                    *word = load_u64(&rows[b * rowlen + at..]);
                }
                transpose_bytes8x8(&mut w);
                for (k, word) in w.iter().enumerate() {
                    block[8 * k..8 * k + 8].copy_from_slice(&transpose8x8(*word).to_le_bytes());
                }
            }
            for qi in full..qn {
                let mut x = [0u8; 8];
                for (b, byte) in x.iter_mut().enumerate() {
                    *byte = rows[b * rowlen + q0 + qi];
                }
                let y = transpose8x8(u64::from_le_bytes(x));
                plane[8 * qi..8 * qi + 8].copy_from_slice(&y.to_le_bytes());
            }
        }
        let tile = &mut dst[q0 * 8 * T..(q0 + qn) * 8 * T];
        if T == 1 {
            tile.copy_from_slice(planes);
        } else {
            unshuffle_fixed::<T>(planes, tile, e);
        }
        q0 += qn;
    }
}

/// The first 8 bytes of `b` as a little-endian word.
#[inline(always)]
fn load_u64(b: &[u8]) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[..8]);
    u64::from_le_bytes(w)
}

/// Transpose the 8x8 byte matrix held in eight little-endian words: byte `b`
/// of word `w` moves to byte `w` of word `b`. Self-inverse.
#[inline(always)]
pub(crate) fn transpose_bytes8x8(w: &mut [u64; 8]) {
    const M32: u64 = 0x0000_0000_FFFF_FFFF;
    const M16: u64 = 0x0000_FFFF_0000_FFFF;
    const M8: u64 = 0x00FF_00FF_00FF_00FF;
    for i in 0..4 {
        let t = ((w[i] >> 32) ^ w[i + 4]) & M32;
        w[i + 4] ^= t;
        w[i] ^= t << 32;
    }
    for i in [0, 1, 4, 5] {
        let t = ((w[i] >> 16) ^ w[i + 2]) & M16;
        w[i + 2] ^= t;
        w[i] ^= t << 16;
    }
    for i in [0, 2, 4, 6] {
        let t = ((w[i] >> 8) ^ w[i + 1]) & M8;
        w[i + 1] ^= t;
        w[i] ^= t << 8;
    }
}

fn bitshuffle_any(ts: usize, src: &[u8], dst: &mut [u8], rowlen: usize) {
    bitshuffle_tiled(ts, src, dst, rowlen);
}

fn bitunshuffle_any(ts: usize, src: &[u8], dst: &mut [u8], rowlen: usize) {
    bitunshuffle_tiled(ts, src, dst, rowlen);
}

#[inline(always)]
fn bitshuffle_tiled(ts: usize, src: &[u8], dst: &mut [u8], rowlen: usize) {
    let mut tile = [[0u8; TILE_Q]; 8];
    let mut q0 = 0;
    while q0 < rowlen {
        let qn = TILE_Q.min(rowlen - q0);
        let elems = &src[q0 * 8 * ts..(q0 + qn) * 8 * ts];
        for j in 0..ts {
            for (qi, group) in elems.chunks_exact(8 * ts).enumerate() {
                let mut x = 0u64;
                for k in 0..8 {
                    x |= (group[k * ts + j] as u64) << (8 * k);
                }
                let y = transpose8x8(x).to_le_bytes();
                for b in 0..8 {
                    tile[b][qi] = y[b];
                }
            }
            for (b, row) in tile.iter().enumerate() {
                let r = 8 * j + b;
                dst[r * rowlen + q0..r * rowlen + q0 + qn].copy_from_slice(&row[..qn]);
            }
        }
        q0 += qn;
    }
}

#[inline(always)]
fn bitunshuffle_tiled(ts: usize, src: &[u8], dst: &mut [u8], rowlen: usize) {
    let mut tile = [[0u8; TILE_Q]; 8];
    let mut q0 = 0;
    while q0 < rowlen {
        let qn = TILE_Q.min(rowlen - q0);
        let elems = &mut dst[q0 * 8 * ts..(q0 + qn) * 8 * ts];
        for j in 0..ts {
            for (b, row) in tile.iter_mut().enumerate() {
                let r = 8 * j + b;
                row[..qn].copy_from_slice(&src[r * rowlen + q0..r * rowlen + q0 + qn]);
            }
            for (qi, group) in elems.chunks_exact_mut(8 * ts).enumerate() {
                let mut x = 0u64;
                for (b, row) in tile.iter().enumerate() {
                    x |= (row[qi] as u64) << (8 * b);
                }
                let y = transpose8x8(x).to_le_bytes();
                for k in 0..8 {
                    group[k * ts + j] = y[k];
                }
            }
        }
        q0 += qn;
    }
}

/// Word width of the DELTA filter for a type size: the type size itself for
/// 1, 2, 4 and 8; 8 for other multiples of 8; 1 otherwise.
#[inline]
pub(crate) fn delta_width(typesize: usize) -> usize {
    match typesize {
        1 | 2 | 4 | 8 => typesize,
        t if t % 8 == 0 => 8,
        _ => 1,
    }
}

/// DELTA forward. With no reference (block 0) each word but the first is
/// XORed with the word before it; with a reference each word is XORed with
/// the reference word at the same offset. Trailing bytes that do not form a
/// whole word are copied unchanged.
pub(crate) fn delta_encode(typesize: usize, reference: Option<&[u8]>, src: &[u8], dst: &mut [u8]) {
    let w = delta_width(typesize);
    let body = src.len() - src.len() % w;
    match reference {
        Some(r) => {
            for ((d, s), r) in dst[..body].iter_mut().zip(&src[..body]).zip(&r[..body]) {
                *d = s ^ r;
            }
        }
        None => {
            let head = w.min(body);
            dst[..head].copy_from_slice(&src[..head]);
            if body > w {
                for ((d, s), p) in dst[w..body]
                    .iter_mut()
                    .zip(&src[w..body])
                    .zip(&src[..body - w])
                {
                    *d = s ^ p;
                }
            }
        }
    }
    dst[body..].copy_from_slice(&src[body..]);
}

/// DELTA backward: the inverse of [`delta_encode`] with the same reference.
pub(crate) fn delta_decode(typesize: usize, reference: Option<&[u8]>, src: &[u8], dst: &mut [u8]) {
    let w = delta_width(typesize);
    let body = src.len() - src.len() % w;
    match reference {
        Some(r) => {
            for ((d, s), r) in dst[..body].iter_mut().zip(&src[..body]).zip(&r[..body]) {
                *d = s ^ r;
            }
        }
        None => prefix_xor(w, &src[..body], &mut dst[..body]),
    }
    dst[body..].copy_from_slice(&src[body..]);
}

/// Running XOR of `w`-byte words (`w` in 1, 2, 4, 8): `y[i] = x[i] ^ y[i-1]`.
/// Eight bytes at a time: a prefix XOR inside the word, then the last word
/// of the previous step broadcast over it.
fn prefix_xor(w: usize, src: &[u8], dst: &mut [u8]) {
    let (shifts, spread): (&[u32], u64) = match w {
        1 => (&[8, 16, 32], 0x0101_0101_0101_0101),
        2 => (&[16, 32], 0x0001_0001_0001_0001),
        4 => (&[32], 0x0000_0001_0000_0001),
        _ => (&[], 1),
    };
    let top = 64 - 8 * w as u32;
    let mut carry = 0u64;
    let mut chunks_out = dst.chunks_exact_mut(8);
    let mut chunks_in = src.chunks_exact(8);
    for (o, i) in (&mut chunks_out).zip(&mut chunks_in) {
        let mut v = u64::from_le_bytes(i.try_into().unwrap());
        for &s in shifts {
            v ^= v << s;
        }
        v ^= carry;
        o.copy_from_slice(&v.to_le_bytes());
        carry = (v >> top).wrapping_mul(spread);
    }
    // The remainder is a whole number of words (len is a multiple of w).
    let rest_in = chunks_in.remainder();
    let rest_out = chunks_out.into_remainder();
    let mut prev = carry.to_le_bytes();
    for (o, i) in rest_out.chunks_exact_mut(w).zip(rest_in.chunks_exact(w)) {
        for k in 0..w {
            o[k] = i[k] ^ prev[k];
        }
        prev[..w].copy_from_slice(o);
    }
}

/// TRUNC_PREC on `typesize` 4 (f32) or 8 (f64) elements: clear the low
/// `zeroed` mantissa bits of every whole element; trailing bytes copied.
/// The caller has validated `typesize` and `zeroed`.
pub(crate) fn trunc_prec(typesize: usize, zeroed: u32, src: &[u8], dst: &mut [u8]) {
    let body = src.len() - src.len() % typesize;
    if typesize == 4 {
        let mask = !((1u32 << zeroed) - 1);
        for (d, s) in dst[..body]
            .chunks_exact_mut(4)
            .zip(src[..body].chunks_exact(4))
        {
            let v = u32::from_le_bytes(s.try_into().unwrap()) & mask;
            d.copy_from_slice(&v.to_le_bytes());
        }
    } else {
        let mask = !((1u64 << zeroed) - 1);
        for (d, s) in dst[..body]
            .chunks_exact_mut(8)
            .zip(src[..body].chunks_exact(8))
        {
            let v = u64::from_le_bytes(s.try_into().unwrap()) & mask;
            d.copy_from_slice(&v.to_le_bytes());
        }
    }
    dst[body..].copy_from_slice(&src[body..]);
}

/// BYTEDELTA (filter 35) forward: the buffer is `typesize` streams of
/// `len / typesize` bytes; inside each stream every byte becomes its
/// difference (mod 256) from the byte before it (the first from 0). The
/// last `len % typesize` bytes are copied unchanged.
pub(crate) fn bytedelta_encode(typesize: usize, src: &[u8], dst: &mut [u8]) {
    let l = src.len() / typesize;
    let body = l * typesize;
    if l > 0 {
        for (d, s) in dst[..body]
            .chunks_exact_mut(l)
            .zip(src[..body].chunks_exact(l))
        {
            d[0] = s[0];
            for ((o, x), p) in d[1..].iter_mut().zip(&s[1..]).zip(&s[..l - 1]) {
                *o = x.wrapping_sub(*p);
            }
        }
    }
    dst[body..].copy_from_slice(&src[body..]);
}

/// BYTEDELTA backward: running sum (mod 256) inside each stream.
pub(crate) fn bytedelta_decode(typesize: usize, src: &[u8], dst: &mut [u8]) {
    let l = src.len() / typesize;
    let body = l * typesize;
    if l > 0 {
        for (d, s) in dst[..body]
            .chunks_exact_mut(l)
            .zip(src[..body].chunks_exact(l))
        {
            prefix_sum_bytes(s, d);
        }
    }
    dst[body..].copy_from_slice(&src[body..]);
}

/// Running byte sum, eight bytes per step with a SWAR prefix sum.
fn prefix_sum_bytes(src: &[u8], dst: &mut [u8]) {
    let mut carry = 0u8;
    let mut out = dst.chunks_exact_mut(8);
    let mut inp = src.chunks_exact(8);
    for (o, i) in (&mut out).zip(&mut inp) {
        let mut b: [u8; 8] = i.try_into().unwrap();
        b[0] = b[0].wrapping_add(carry);
        for k in 1..8 {
            b[k] = b[k].wrapping_add(b[k - 1]);
        }
        carry = b[7];
        o.copy_from_slice(&b);
    }
    for (o, i) in out.into_remainder().iter_mut().zip(inp.remainder()) {
        carry = carry.wrapping_add(*i);
        *o = carry;
    }
}
