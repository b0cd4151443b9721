//! Python packages for the interop tests, installed on first use into a
//! private directory under `target/` (never into the system Python).
//!
//! `python_with("pydeps-c1", &["blosc==1.11.4", ...], "import blosc")` returns
//! a [`Py`] whose commands see those packages. The directory is checked with
//! the probe statement; when that fails the packages are installed with
//! `python3 -m pip install --target` ([`super::pip`]: under an exclusive
//! lock, into a private directory renamed into place when complete).
//! `$OXIBLOSC_PYTHON` picks another interpreter.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A Python interpreter plus the private package directory it must see.
#[derive(Clone, Debug)]
pub struct Py {
    pub python: String,
    pub dir: PathBuf,
}

impl Py {
    /// `python3 ARGS` with the private directory first on `PYTHONPATH`.
    pub fn command(&self) -> Command {
        let mut cmd = Command::new(&self.python);
        let mut paths = vec![self.dir.clone()];
        if let Some(old) = std::env::var_os("PYTHONPATH") {
            paths.extend(std::env::split_paths(&old));
        }
        cmd.env("PYTHONPATH", std::env::join_paths(paths).unwrap());
        cmd.env("PYTHONDONTWRITEBYTECODE", "1");
        cmd
    }

    fn probe(&self, statement: &str) -> bool {
        self.command()
            .args(["-c", statement])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    }
}

fn target() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target")
}

/// A Python that imports `requirements` (pip specs) from `target/<dir>`,
/// installing them there ([`super::pip::install_into`]) when `probe` (a
/// Python statement) fails.
pub fn python_with(dir: &str, requirements: &[&str], probe: &str) -> Result<Py, String> {
    let python = super::pip::python();
    let with = |d: &Path| Py {
        python: python.clone(),
        dir: d.to_path_buf(),
    };
    let dir = super::pip::install_into(&target(), dir, requirements, &|d| with(d).probe(probe))
        .map_err(|e| format!("{e}\n(probe: `{probe}`)"))?;
    Ok(with(&dir))
}

/// The packages of the C-Blosc 1.x interop tests: python-blosc 1.11.4
/// (C-Blosc 1.21.7 with BloscLZ 2.5.1, LZ4 1.10.0, zlib 1.3.1, Zstd 1.5.6),
/// bloscpack 0.16.0 and NumPy.
pub fn blosc1() -> Py {
    static PY: std::sync::OnceLock<Result<Py, String>> = std::sync::OnceLock::new();
    PY.get_or_init(|| {
        python_with(
            "pydeps-c1",
            &["blosc==1.11.4", "bloscpack==0.16.0", "numpy"],
            "import blosc, numpy, importlib.util as u; assert blosc.__version__ == '1.11.4'; \
             assert u.find_spec('bloscpack')",
        )
    })
    .clone()
    .unwrap_or_else(|e| panic!("{e}"))
}

/// Run `script` (a file under tests/support) with `request` on stdin and
/// return its stdout; panics with its stderr when it fails.
pub fn run_script(py: &Py, script: &str, request: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/support")
        .join(script);
    let mut child = py
        .command()
        .arg(&path)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", path.display()));
    let mut stdin = child.stdin.take().unwrap();
    let req = request.to_vec();
    // Write from another thread: the script may answer while it reads.
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&req);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert!(
        out.status.success(),
        "{} failed ({}):\n{}",
        path.display(),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}
