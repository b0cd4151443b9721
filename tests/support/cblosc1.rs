//! The C-Blosc 1.x oracle: python-blosc 1.11.4, which bundles C-Blosc
//! 1.21.7 (BloscLZ 2.5.1), for scripts run once per test.
//!
//! Finding it works as for python-blosc2 (see the parent module):
//! `$OXIBLOSC_PYTHON` (default `python3`) is asked for `blosc.__version__`;
//! if that is not 1.11.4, the copy in `<repo>/target/pydeps-c1` is tried;
//! if there is none it is installed there with
//! `python3 -m pip install --target <repo>/target/pydeps-c1 blosc==1.11.4`
//! (a few seconds, about 5 MB), one test binary at a time through a lock on
//! `target/pydeps-c1.lock`, into a private directory renamed into place.

use std::fs::{self, File};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::OnceLock;

/// The python-blosc release the oracle must be.
pub const PYTHON_BLOSC: &str = "1.11.4";

fn pydeps_c1() -> PathBuf {
    super::repo().join("target").join("pydeps-c1")
}

/// A command for `python` with `dir` (if any) first on `PYTHONPATH`.
fn python(python: &str, dir: Option<&PathBuf>) -> Command {
    let mut cmd = Command::new(python);
    if let Some(dir) = dir {
        let mut paths = vec![dir.clone()];
        if let Some(old) = std::env::var_os("PYTHONPATH") {
            paths.extend(std::env::split_paths(&old));
        }
        cmd.env("PYTHONPATH", std::env::join_paths(paths).unwrap());
    }
    cmd.env("PYTHONDONTWRITEBYTECODE", "1");
    cmd
}

fn blosc_version(py: &str, dir: Option<&PathBuf>) -> Option<String> {
    let out = python(py, dir)
        .args([
            "-c",
            "import sys, blosc; sys.stdout.write(blosc.__version__)",
        ])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// `(python, extra PYTHONPATH entry)` importing python-blosc 1.11.4.
fn find_or_install() -> Result<(String, Option<PathBuf>), String> {
    let py = std::env::var("OXIBLOSC_PYTHON").unwrap_or_else(|_| "python3".to_string());
    let want = Some(PYTHON_BLOSC.to_string());
    if blosc_version(&py, None) == want {
        return Ok((py, None));
    }
    let dest = pydeps_c1();
    if blosc_version(&py, Some(&dest)) == want {
        return Ok((py, Some(dest)));
    }
    let target = super::repo().join("target");
    fs::create_dir_all(&target).map_err(|e| format!("cannot create {}: {e}", target.display()))?;
    let lock = File::create(target.join("pydeps-c1.lock"))
        .map_err(|e| format!("cannot create target/pydeps-c1.lock: {e}"))?;
    lock.lock()
        .map_err(|e| format!("cannot lock target/pydeps-c1.lock: {e}"))?;
    if blosc_version(&py, Some(&dest)) == want {
        return Ok((py, Some(dest))); // installed while we waited
    }
    let tmp = target.join(format!("pydeps-c1.tmp-{}", std::process::id()));
    let _ = fs::remove_dir_all(&tmp);
    eprintln!(
        "installing python-blosc {PYTHON_BLOSC} into {} (one time) ...",
        dest.display()
    );
    let fix = format!(
        "install it with\n    {py} -m pip install --target {} blosc=={PYTHON_BLOSC}",
        dest.display()
    );
    let out = Command::new(&py)
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
        .arg(format!("blosc=={PYTHON_BLOSC}"))
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run `{py} -m pip`: {e}\n{fix}"))?;
    if !out.status.success() {
        let _ = fs::remove_dir_all(&tmp);
        return Err(format!(
            "installing python-blosc {PYTHON_BLOSC} failed ({}):\n{}\n{fix}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    if dest.exists() {
        let old = target.join(format!("pydeps-c1.old-{}", std::process::id()));
        fs::rename(&dest, &old).map_err(|e| format!("cannot move {}: {e}", dest.display()))?;
        let _ = fs::remove_dir_all(&old);
    }
    fs::rename(&tmp, &dest).map_err(|e| format!("cannot rename {}: {e}", tmp.display()))?;
    match blosc_version(&py, Some(&dest)) {
        v if v == want => Ok((py, Some(dest))),
        other => Err(format!(
            "after installing, {} imports blosc {other:?}, not {PYTHON_BLOSC}\n{fix}",
            dest.display()
        )),
    }
}

/// Run `tests/support/<script>` with python-blosc 1.11.4 importable
/// (installed on first use) and `args`; its stdout, or its stderr as the
/// error. Panics with what to run when the oracle cannot be had.
pub fn run_script(script: &str, args: &[&str]) -> Result<String, String> {
    static ENV: OnceLock<Result<(String, Option<PathBuf>), String>> = OnceLock::new();
    let (py, dir) = match ENV.get_or_init(find_or_install) {
        Ok(env) => env,
        Err(msg) => panic!("{msg}"),
    };
    let out = python(py, dir.as_ref())
        .arg(super::repo().join("tests/support").join(script))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {script}: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}
