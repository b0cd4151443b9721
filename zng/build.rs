//! Tells the crate whether libz-ng-sys compiled zlib-ng with clang: its
//! cmake build leaves the compiler's id in `CMakeCCompiler.cmake` under the
//! build directory of `DEP_Z_NG_ROOT` (libz-ng-sys's `links = "z-ng"`). The
//! result becomes `oxiblosc_zng::DEFLATE_BUILT_BY_CLANG`.

use std::env;
use std::fs;
use std::path::Path;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(zng_clang)");
    println!("cargo::rerun-if-env-changed=DEP_Z_NG_ROOT");
    let Some(root) = env::var_os("DEP_Z_NG_ROOT") else {
        return;
    };
    let files = Path::new(&root).join("build").join("CMakeFiles");
    let Ok(dirs) = fs::read_dir(&files) else {
        return;
    };
    for dir in dirs.flatten() {
        let info = dir.path().join("CMakeCCompiler.cmake");
        if let Ok(text) = fs::read_to_string(&info) {
            println!("cargo::rerun-if-changed={}", info.display());
            if text.contains("set(CMAKE_C_COMPILER_ID \"Clang\")") {
                println!("cargo::rustc-cfg=zng_clang");
            }
            return;
        }
    }
}
