//! The C-Blosc2 the main job is timed against: the `libblosc2.so` (3.3.5)
//! inside python-blosc2 4.14.1's wheel, installed into `<repo>/target/pydeps`
//! exactly as the differential tests install it (`tests/support/mod.rs`):
//! `python3 -m pip install --target target/pydeps blosc2==4.14.1`, one
//! process at a time under an exclusive lock on `target/pydeps.lock`, into a
//! private directory renamed into place when complete. `$OXIBLOSC_PYTHON`
//! picks another interpreter, as for the tests.

use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

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
/// into `target/pydeps` first when it is not there.
///
/// # Errors
/// pip cannot be run or fails (no network), or the wheel has no library.
pub fn libblosc2() -> Result<PathBuf, String> {
    if let Some(lib) = installed(&pydeps()) {
        return Ok(lib);
    }
    let python = std::env::var("OXIBLOSC_PYTHON").unwrap_or_else(|_| "python3".to_owned());
    let how = format!(
        "install it by hand with\n    {python} -m pip install --target {} blosc2=={PYTHON_BLOSC2}\n\
         or give the library with --c-lib PATH",
        pydeps().display()
    );
    let target = target_dir();
    fs::create_dir_all(&target).map_err(|e| format!("cannot create {}: {e}", target.display()))?;
    let lock = File::create(target.join("pydeps.lock"))
        .map_err(|e| format!("cannot create target/pydeps.lock: {e}"))?;
    lock.lock()
        .map_err(|e| format!("cannot lock target/pydeps.lock: {e}"))?;
    if let Some(lib) = installed(&pydeps()) {
        return Ok(lib); // another process installed it while we waited
    }
    let tmp = target.join(format!("pydeps.tmp-{}", std::process::id()));
    let _ = fs::remove_dir_all(&tmp);
    eprintln!(
        "installing python-blosc2 {PYTHON_BLOSC2} (C-Blosc2 {C_BLOSC2}) into {} (one time, \
         about 130 MB) ...",
        pydeps().display()
    );
    let t0 = Instant::now();
    let out = Command::new(&python)
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--no-input",
            "--retries",
            "2",
            "--timeout",
            "30",
            "--target",
        ])
        .arg(&tmp)
        .arg(format!("blosc2=={PYTHON_BLOSC2}"))
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run `{python} -m pip`: {e}\n{how}"))?;
    if !out.status.success() {
        let _ = fs::remove_dir_all(&tmp);
        let err = String::from_utf8_lossy(&out.stderr);
        let tail: Vec<&str> = err.lines().rev().take(12).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        return Err(format!(
            "installing python-blosc2 {PYTHON_BLOSC2} failed ({}):\n{}\n\n{how}",
            out.status,
            tail.join("\n")
        ));
    }
    let dest = pydeps();
    if dest.exists() {
        let old = target.join(format!("pydeps.old-{}", std::process::id()));
        fs::rename(&dest, &old).map_err(|e| format!("cannot move {}: {e}", dest.display()))?;
        let _ = fs::remove_dir_all(&old);
    }
    fs::rename(&tmp, &dest).map_err(|e| format!("cannot rename {}: {e}", tmp.display()))?;
    eprintln!(
        "installed python-blosc2 {PYTHON_BLOSC2} in {:.1} s",
        t0.elapsed().as_secs_f64()
    );
    installed(&dest).ok_or_else(|| {
        format!(
            "python-blosc2 {PYTHON_BLOSC2} was installed into {} but has no \
             blosc2/lib/libblosc2.so*\n{how}",
            dest.display()
        )
    })
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
