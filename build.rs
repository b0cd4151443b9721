//! Tells the crate whether clang compiled libzstd's compressor: zstd-sys
//! (`links = "zstd"`) leaves its object files under `DEP_ZSTD_ROOT`, and
//! each carries its compiler's name in its `.comment` section. This
//! repository's builds on x86_64 Linux take clang 19+ for those files when
//! one is installed (`.cargo/cc-wrapper.sh`); the cfg lets a test check
//! that they did (`tests/cc_wrapper.rs`).

use std::env;
use std::fs;
use std::path::Path;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(zstd_compressor_clang)");
    println!("cargo::rerun-if-env-changed=DEP_ZSTD_ROOT");
    let Some(root) = env::var_os("DEP_ZSTD_ROOT") else {
        return;
    };
    let Ok(entries) = fs::read_dir(Path::new(&root)) else {
        return;
    };
    // The cc crate names objects `<hash>-<source stem>.o`; zstd_lazy.c is
    // the compressor's largest file, and its hot loop at levels 5-15.
    for entry in entries.flatten() {
        let path = entry.path();
        let is_lazy = path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.ends_with("-zstd_lazy.o") || n == "zstd_lazy.o");
        if !is_lazy {
            continue;
        }
        println!("cargo::rerun-if-changed={}", path.display());
        if let Ok(bytes) = fs::read(&path)
            && bytes.windows(14).any(|w| w == b"clang version ")
        {
            println!("cargo::rustc-cfg=zstd_compressor_clang");
        }
        return;
    }
}
