//! Side-by-side benchmarks against C-Blosc2 (work in progress).
fn main() {}
