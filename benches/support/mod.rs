//! What the benches share (a folder, so cargo does not take it for a bench
//! target of its own): `mod support;` in each bench that uses it.

/// A realistic input: float64 samples of a slow ramp with a little noise
/// (what a sensor or simulation would store), as little-endian bytes.
pub fn float_data(len: usize) -> Vec<u8> {
    let mut state = 0x9E37_79B9_7F4A_7C15_u64;
    let mut out = Vec::with_capacity(len + 8);
    let mut i = 0u64;
    while out.len() < len {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let noise = (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5;
        let v = 250.0 + i as f64 * 0.0125 + noise * 0.01;
        out.extend_from_slice(&v.to_le_bytes());
        i += 1;
    }
    out.truncate(len);
    out
}
