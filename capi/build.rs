//! Puts `libblosc.so.1` (the C-Blosc 1.x library name) beside the cdylib
//! Cargo writes as `libblosc2.so`: one library exports both ABIs, and this
//! symlink gives programs and loaders that look for `libblosc.so.1` the same
//! file. The cdylib has no DT_SONAME, so a program linked with
//! `-l:libblosc.so.1` records `libblosc.so.1` and one linked with `-lblosc2`
//! records `libblosc2.so` (see capi/README.md).

use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let Some(out) = std::env::var_os("OUT_DIR") else {
        return;
    };
    // OUT_DIR is <target>/<profile>/build/<pkg>-<hash>/out.
    let Some(profile_dir) = PathBuf::from(out).ancestors().nth(3).map(PathBuf::from) else {
        return;
    };
    let link = profile_dir.join("libblosc.so.1");
    #[cfg(unix)]
    {
        if std::fs::read_link(&link).ok().as_deref() != Some("libblosc2.so".as_ref()) {
            let _ = std::fs::remove_file(&link);
            if let Err(e) = std::os::unix::fs::symlink("libblosc2.so", &link) {
                println!("cargo:warning=could not create {}: {e}", link.display());
            }
        }
    }
}
