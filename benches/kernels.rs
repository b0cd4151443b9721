//! Criterion benchmarks of the kernels (placeholder, filled in below).
fn main() {}
