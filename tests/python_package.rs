//! The Python package (`python/`): builds it with `pip install ./python` into
//! a private virtualenv and runs its pytest suite (numcodecs' own Blosc
//! tests against `oxiblosc.numcodecs`, cross-decoding with stock numcodecs,
//! Zarr 3.1 both ways, a two-process Dask cluster, python-blosc2 interop,
//! bad input).
//!
//! The virtualenv is `target/pyenv-oxiblosc`: created with `python3 -m venv`
//! (`$OXIBLOSC_PYTHON` picks another interpreter) and given the test
//! requirements from PyPI on first use. The package is rebuilt only when a
//! source file under `python/`, `src/` or `kernels/` (or a manifest) changed
//! since the last install: a digest of them is kept in the virtualenv. The
//! extension is compiled in its own target directory, `target/pyext`, so it
//! never waits on the `cargo test` build lock.

use std::collections::hash_map::DefaultHasher;
use std::fs::{self, File};
use std::hash::Hasher;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

/// What the suite needs besides the package itself.
const REQUIREMENTS: &[&str] = &[
    "maturin>=1.7,<2",
    "numcodecs==0.16.6",
    "zarr>=3.1,<3.2",
    "dask[distributed]",
    "pytest",
    "numpy",
    "blosc2==4.14.1",
];

/// Succeeds when every requirement is importable at the right version.
const PROBE: &str = "import maturin, numcodecs, zarr, dask, distributed, pytest, numpy, blosc2; \
    assert numcodecs.__version__ == '0.16.6', numcodecs.__version__; \
    assert blosc2.__version__ == '4.14.1', blosc2.__version__; \
    assert zarr.__version__.startswith('3.1.'), zarr.__version__";

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn venv() -> PathBuf {
    repo().join("target").join("pyenv-oxiblosc")
}

fn venv_python() -> PathBuf {
    venv().join("bin").join("python")
}

/// A command with the environment cargo gave this test removed where it
/// would steer a nested build.
fn command(program: &Path) -> Command {
    let mut cmd = Command::new(program);
    for (k, _) in std::env::vars_os() {
        let k = k.to_string_lossy().into_owned();
        if k == "CARGO_TARGET_DIR" || k.starts_with("CARGO_PKG_") || k == "CARGO_MANIFEST_DIR" {
            cmd.env_remove(k);
        }
    }
    // The venv's scripts first: maturin's PEP 517 backend runs `maturin`.
    let mut paths = vec![venv().join("bin")];
    if let Some(old) = std::env::var_os("PATH") {
        paths.extend(std::env::split_paths(&old));
    }
    cmd.env("PATH", std::env::join_paths(paths).unwrap());
    cmd.env("PYTHONDONTWRITEBYTECODE", "1");
    cmd.env("PIP_DISABLE_PIP_VERSION_CHECK", "1");
    cmd.stdin(Stdio::null());
    cmd
}

fn run(mut cmd: Command, what: &str) {
    let t0 = Instant::now();
    let status = cmd
        .status()
        .unwrap_or_else(|e| panic!("{what}: cannot start: {e}"));
    assert!(status.success(), "{what} failed ({status})");
    eprintln!("{what}: {:.1} s", t0.elapsed().as_secs_f64());
}

fn probe(statement: &str) -> bool {
    venv_python().is_file()
        && command(&venv_python())
            .args(["-c", statement])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
}

/// A digest of every file the package is built from.
fn source_digest() -> String {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(rd) = fs::read_dir(dir) else { return };
        for e in rd.flatten() {
            let p = e.path();
            let name = e.file_name();
            let name = name.to_string_lossy();
            if name.starts_with('.') || name == "__pycache__" || name == "tests" {
                continue;
            }
            if p.is_dir() {
                walk(&p, out);
            } else {
                out.push(p);
            }
        }
    }
    let root = repo();
    let mut files = vec![
        root.join("Cargo.toml"),
        root.join("Cargo.lock"),
        root.join("kernels").join("Cargo.toml"),
    ];
    for d in ["src", "kernels/src", "python"] {
        walk(&root.join(d), &mut files);
    }
    files.sort();
    let mut h = DefaultHasher::new();
    for f in files {
        h.write(
            f.strip_prefix(&root)
                .unwrap_or(&f)
                .to_string_lossy()
                .as_bytes(),
        );
        h.write(&fs::read(&f).unwrap_or_default());
    }
    format!("{:016x}", h.finish())
}

#[test]
fn python_package_pytest_suite() {
    let root = repo();
    fs::create_dir_all(root.join("target")).unwrap();
    // Parallel `cargo test` runs take turns on the virtualenv.
    let lock = File::create(root.join("target").join("pyenv-oxiblosc.lock")).unwrap();
    lock.lock().unwrap();

    if !venv_python().is_file() {
        let python = std::env::var("OXIBLOSC_PYTHON").unwrap_or_else(|_| "python3".into());
        let mut cmd = command(Path::new(&python));
        cmd.args(["-m", "venv"]).arg(venv());
        run(cmd, "python3 -m venv target/pyenv-oxiblosc");
    }
    if !probe(PROBE) {
        let mut cmd = command(&venv_python());
        cmd.args(["-m", "pip", "install", "-q"]).args(REQUIREMENTS);
        run(cmd, "pip install the test requirements (one time)");
        assert!(
            probe(PROBE),
            "the test requirements do not import after pip install"
        );
    }

    let stamp = venv().join("oxiblosc-build-digest");
    let digest = source_digest();
    let up_to_date = fs::read_to_string(&stamp).is_ok_and(|s| s.trim() == digest)
        && probe("import oxiblosc, oxiblosc.numcodecs, oxiblosc.zarr");
    if !up_to_date {
        let mut cmd = command(&venv_python());
        cmd.args([
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "--force-reinstall",
        ])
        .arg(root.join("python"))
        .env("CARGO_TARGET_DIR", root.join("target").join("pyext"))
        // no debug info in the extension: a faster build, a smaller wheel
        .env("CARGO_PROFILE_RELEASE_DEBUG", "false");
        run(cmd, "pip install ./python (maturin build)");
        fs::write(&stamp, &digest).unwrap();
    }

    // pytest exits 0 when every test passed; 5 (no tests ran) is a failure too.
    let mut cmd = command(&venv_python());
    cmd.args([
        "-m",
        "pytest",
        "python/tests",
        "-q",
        "-p",
        "no:cacheprovider",
    ])
    .current_dir(&root);
    let t0 = Instant::now();
    let status = cmd.status().expect("cannot start pytest");
    eprintln!("pytest: {:.1} s", t0.elapsed().as_secs_f64());
    assert_eq!(
        status.code(),
        Some(0),
        "the Python suite failed (pytest exit {status}; 5 means no tests ran)"
    );
}
