//! What the instruction-count benches share (a folder, so cargo does not
//! take it for a bench target of its own).

/// `len` bytes of float64 samples: two slow waves, plus noise (a xorshift's
/// top bits) in the low mantissa bits, as little-endian bytes: data that
/// compresses as measured data does.
pub fn float_data(len: usize) -> Vec<u8> {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut out = Vec::with_capacity(len + 8);
    let mut i = 0u64;
    while out.len() < len {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let x = i as f64;
        let v = 20.0 + 8.0 * (x / 700.0).sin() + 0.01 * x + (state >> 44) as f64 * 1e-9;
        out.extend_from_slice(&v.to_le_bytes());
        i += 1;
    }
    out.truncate(len);
    out
}
