//! The C-Blosc2 the main job is timed against: the `libblosc2.so` (3.3.5)
//! inside python-blosc2 4.14.1's wheel, installed into `<repo>/target/pydeps`
//! exactly as the differential tests install it (`tests/support/mod.rs`):
//! `python3 -m pip install --target target/pydeps blosc2==4.14.1` by the
//! tests' own installer (`tests/support/pip.rs`, included here): one
//! process at a time under an exclusive lock on `target/pydeps.lock`, into a
//! private directory renamed into place when complete. `$OXIBLOSC_PYTHON`
//! picks another interpreter, as for the tests.

use std::fs;
use std::path::{Path, PathBuf};

#[path = "../../tests/support/pip.rs"]
mod pip;

/// The python-blosc2 release whose library is used.
pub const PYTHON_BLOSC2: &str = "4.14.1";
/// The C-Blosc2 release python-blosc2 4.14.1 bundles.
pub const C_BLOSC2: &str = "3.3.5";

/// The repository (the workspace root).
pub fn repo() -> PathBuf {
    let perf = Path::new(env!("CARGO_MANIFEST_DIR"));
    perf.parent().unwrap_or(perf).to_path_buf()
}

/// `<repo>/target`: where the tests' `pydeps` and our scratch outputs live.
pub fn target_dir() -> PathBuf {
    repo().join("target")
}

/// `<repo>/target/pydeps`.
pub fn pydeps() -> PathBuf {
    target_dir().join("pydeps")
}

/// The first `libblosc2.so*` in `<dir>/blosc2/lib`.
fn find_lib(dir: &Path) -> Option<PathBuf> {
    let lib = dir.join("blosc2").join("lib");
    let mut names: Vec<PathBuf> = fs::read_dir(&lib)
        .ok()?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("libblosc2.so"))
        })
        .collect();
    names.sort(); // `libblosc2.so` before `libblosc2.so.5`
    names.into_iter().next()
}

/// The library of a complete install of the right release, if there is one.
fn installed(dir: &Path) -> Option<PathBuf> {
    let dist_info = dir.join(format!("blosc2-{PYTHON_BLOSC2}.dist-info"));
    if dist_info.is_dir() {
        find_lib(dir)
    } else {
        None
    }
}

/// The path of python-blosc2 4.14.1's `libblosc2.so`, installing the wheel
/// into `target/pydeps` first when it is not there (the tests' installer,
/// `tests/support/pip.rs`).
///
/// # Errors
/// pip cannot be run or fails (no network), or the wheel has no library.
pub fn libblosc2() -> Result<PathBuf, String> {
    let spec = format!("blosc2=={PYTHON_BLOSC2}");
    let dest = pip::install_into(&target_dir(), "pydeps", &[spec.as_str()], &|d| {
        installed(d).is_some()
    })
    .map_err(|e| {
        format!("python-blosc2 {PYTHON_BLOSC2} (C-Blosc2 {C_BLOSC2}): {e}\nor give the library with --c-lib PATH")
    })?;
    installed(&dest).ok_or_else(|| format!("{} has no blosc2/lib/libblosc2.so*", dest.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_library_of_a_complete_install_only() {
        let dir = target_dir().join(format!("perf-pydeps-test-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(dir.join("blosc2/lib")).unwrap();
        fs::write(dir.join("blosc2/lib/libblosc2.so.5"), b"").unwrap();
        assert_eq!(installed(&dir), None, "no dist-info: not complete");
        fs::create_dir_all(dir.join(format!("blosc2-{PYTHON_BLOSC2}.dist-info"))).unwrap();
        assert_eq!(installed(&dir), Some(dir.join("blosc2/lib/libblosc2.so.5")));
        fs::write(dir.join("blosc2/lib/libblosc2.so"), b"").unwrap();
        assert_eq!(installed(&dir), Some(dir.join("blosc2/lib/libblosc2.so")));
        fs::remove_dir_all(&dir).unwrap();
    }
}
