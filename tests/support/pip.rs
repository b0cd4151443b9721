//! Pip packages installed into a private directory under `target/`, never
//! into the system Python: the one installer of the root crate's tests
//! (`pyenv.rs`), the C libraries' tests (`capi/tests/common`) and `perf/`
//! (`src/pydeps.rs`), which include this file with `#[path]`. Processes
//! that install into the same directory take turns under an exclusive lock
//! on `target/<dir>.lock`; pip writes into a private directory renamed into
//! place when complete, so a half-installed tree is never used.

use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

/// The interpreter: `$OXIBLOSC_PYTHON`, else `python3`.
pub fn python() -> String {
    std::env::var("OXIBLOSC_PYTHON").unwrap_or_else(|_| "python3".to_string())
}

/// `target/<dir>`, with `requirements` (pip arguments: specs, or flags such
/// as `--no-deps`) installed by `python -m pip install --target` unless
/// `ready` already holds for it (checked again under the lock: another
/// process may have installed them meanwhile).
///
/// # Errors
/// pip cannot be run or fails (no network), or `ready` still fails after
/// the install; the message says how to install by hand.
pub fn install_into(
    target: &Path,
    dir: &str,
    requirements: &[&str],
    ready: &dyn Fn(&Path) -> bool,
) -> Result<PathBuf, String> {
    let dest = target.join(dir);
    if ready(&dest) {
        return Ok(dest);
    }
    let python = python();
    let how = format!(
        "{python} -m pip install --target {} {}",
        dest.display(),
        requirements.join(" ")
    );
    fs::create_dir_all(target).map_err(|e| format!("cannot create {}: {e}", target.display()))?;
    let lock_path = target.join(format!("{dir}.lock"));
    let lock = File::create(&lock_path)
        .map_err(|e| format!("cannot create {}: {e}", lock_path.display()))?;
    lock.lock()
        .map_err(|e| format!("cannot lock {}: {e}", lock_path.display()))?;
    if ready(&dest) {
        return Ok(dest); // another process installed them while we waited
    }
    let tmp = target.join(format!("{dir}.tmp-{}", std::process::id()));
    let _ = fs::remove_dir_all(&tmp);
    eprintln!(
        "installing {requirements:?} into {} (one time) ...",
        dest.display()
    );
    let t0 = Instant::now();
    let out = Command::new(&python)
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
        ])
        .args([
            "--no-input",
            "--retries",
            "2",
            "--timeout",
            "30",
            "--target",
        ])
        .arg(&tmp)
        .args(requirements)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run `{python} -m pip`: {e}; run: {how}"))?;
    if !out.status.success() {
        let _ = fs::remove_dir_all(&tmp);
        let err = String::from_utf8_lossy(&out.stderr);
        let tail: Vec<&str> = err.lines().rev().take(20).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        return Err(format!(
            "installing {requirements:?} failed ({}):\n{}\nrun: {how}",
            out.status,
            tail.join("\n")
        ));
    }
    if dest.exists() {
        let old = target.join(format!("{dir}.old-{}", std::process::id()));
        fs::rename(&dest, &old).map_err(|e| format!("cannot move {}: {e}", dest.display()))?;
        let _ = fs::remove_dir_all(&old);
    }
    fs::rename(&tmp, &dest).map_err(|e| format!("cannot rename {}: {e}", tmp.display()))?;
    eprintln!("installed in {:.1} s", t0.elapsed().as_secs_f64());
    if ready(&dest) {
        Ok(dest)
    } else {
        Err(format!(
            "after installing {requirements:?}, {} is still not usable; run: {how}",
            dest.display()
        ))
    }
}
