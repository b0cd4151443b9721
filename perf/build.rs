//! The static C-Blosc2 2.15 (blosc2-sys, feature `prefer-external-zlib`) calls
//! the system's zlib; its CMake project links it, Cargo does not: link it here.
fn main() {
    println!("cargo:rustc-link-lib=z");
}
