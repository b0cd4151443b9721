//! The C-Blosc 1.x oracle for scripts run once per test: python-blosc
//! 1.11.4, which bundles C-Blosc 1.21.7 (BloscLZ 2.5.1), from the private
//! `target/pydeps-c1` that [`super::pyenv::blosc1`] installs on first use.

use std::process::Stdio;

/// The python-blosc release the oracle must be.
pub const PYTHON_BLOSC: &str = "1.11.4";

/// Run `tests/support/SCRIPT ARGS` with python-blosc importable; its stdout,
/// or its stderr when it fails.
pub fn run_script(script: &str, args: &[&str]) -> Result<String, String> {
    let py = super::pyenv::blosc1();
    let out = py
        .command()
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
