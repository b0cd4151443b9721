//! `.cargo/cc-wrapper.sh`, the C compiler of this repository's `cc` crate
//! builds on x86_64 Linux: it hands libzstd's compressor sources and
//! liblz4's `lz4.c` to clang 19+ when one is installed, and every other
//! file to the usual compiler. Checked by preprocessing a file at each kind
//! of path (as the `cc` crate passes them, relative to the -sys crate's
//! directory) and reading whether `__clang__` is defined; and which
//! compiler really built this build's libzstd compressor (the root
//! `build.rs` reads it from `zstd_lazy.o`).
#![cfg(all(target_arch = "x86_64", target_os = "linux"))]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

fn clang_installed() -> bool {
    ["clang-21", "clang-20", "clang-19"].iter().any(|c| {
        Command::new(c)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

/// Runs the wrapper from `crate_dir` (as the `cc` crate does) on a small
/// source file it writes at `crate_dir/rel`, with `-E -dM` after `flags`:
/// its predefined macros.
fn preprocess(crate_dir: &Path, rel: &str, flags: &[&str]) -> String {
    let src = crate_dir.join(rel);
    fs::create_dir_all(src.parent().unwrap()).unwrap();
    fs::write(&src, "int x;\n").unwrap();
    let wrapper = Path::new(env!("CARGO_MANIFEST_DIR")).join(".cargo/cc-wrapper.sh");
    let out = Command::new(&wrapper)
        .args(flags)
        .args(["-E", "-dM", rel])
        .current_dir(crate_dir)
        .env_remove("CC")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{rel}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Whether clang preprocessed `crate_dir/rel` through the wrapper.
fn clang_compiled(crate_dir: &Path, rel: &str) -> bool {
    preprocess(crate_dir, rel, &[]).contains("#define __clang__ ")
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("oxiblosc-ccwrap-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    dir
}

#[test]
fn the_wrapper_sends_the_zstd_compressor_and_lz4_c_to_clang_and_the_rest_to_cc() {
    let clang = clang_installed();
    let root = scratch("routes");
    let zstd = root.join("zstd-sys-2.1.2+zstd.1.5.7");
    let lzzzz = root.join("lzzzz-2.0.0");
    let other = root.join("libdeflate-sys-1.25.0");
    let cases = [
        (&zstd, "zstd/lib/compress/zstd_lazy.c", clang),
        (&zstd, "zstd/lib/compress/zstd_compress.c", clang),
        (&zstd, "zstd/lib/decompress/zstd_decompress.c", false),
        (&zstd, "zstd/lib/common/entropy_common.c", false),
        (&lzzzz, "vendor/liblz4/lz4.c", clang),
        (&lzzzz, "vendor/liblz4/lz4hc.c", false),
        (&lzzzz, "vendor/liblz4/lz4frame.c", false),
        (&other, "libdeflate/lib/deflate_compress.c", false),
        // A file named like the compressor's outside zstd-sys stays with cc.
        (&other, "zstd/lib/compress/zstd_lazy.c", false),
    ];
    for (dir, rel, want) in cases {
        assert_eq!(
            clang_compiled(dir, rel),
            want,
            "{}/{rel} (clang installed: {clang})",
            dir.display()
        );
    }
    let _ = fs::remove_dir_all(&root);
}

#[test]
fn the_wrapper_falls_back_to_cc_when_clang_refuses_the_flags() {
    let root = scratch("fallback");
    let dir = root.join("zstd-sys-2.1.2+zstd.1.5.7");
    // A gcc-only option: clang rejects it, gcc takes it.
    let text = preprocess(
        &dir,
        "zstd/lib/compress/zstd_lazy.c",
        &["-fno-ipa-icf-variables"],
    );
    assert!(text.contains("#define __GNUC__ "));
    assert!(!text.contains("#define __clang__ "));
    let _ = fs::remove_dir_all(&root);
}

/// This build's libzstd compressor was compiled by clang exactly when one
/// is installed (CI installs it, `.ci/prereqs.sh`). Fails when the wrapper
/// stops matching zstd-sys' sources as the `cc` crate really passes them.
#[test]
#[cfg(feature = "zstd")]
fn this_build_compiled_the_zstd_compressor_with_clang_when_installed() {
    assert_eq!(
        cfg!(zstd_compressor_clang),
        clang_installed(),
        "libzstd was built before clang was installed (or removed), with a \
         CC_x86_64_unknown_linux_gnu of your own, or is the system's \
         (ZSTD_SYS_USE_PKG_CONFIG): `cargo clean -p zstd-sys` builds it again"
    );
}
