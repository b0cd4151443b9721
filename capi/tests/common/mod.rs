//! Helpers the C test binaries share: our libraries (built release),
//! python-blosc2's `blosc2.h`, temporary directories, compiling and running
//! the programs of `tests/c-interop/`.
#![allow(dead_code)] // each test binary uses its own part

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The suites run one at a time: their programs have C-Blosc2's 60 s
/// limit each, which two suites competing for two cores could exceed.
pub static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

pub fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// `<target>/<profile>`, where Cargo put our cdylib and build.rs the
/// `libblosc.so.1` link.
pub fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    // <target>/<profile>/deps/c_peer-<hash>
    exe.parent()
        .and_then(Path::parent)
        .expect("profile dir")
        .to_path_buf()
}

pub fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Our libraries, as `cargo build --release -p oxiblosc-capi` makes them
/// (run every time: a no-op when they are fresh; a test build does not
/// build the cdylib, and a library left in another profile's directory may
/// be stale or unoptimised).
pub fn lib_dir() -> PathBuf {
    static BUILT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BUILT
        .get_or_init(|| {
            let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
            let st = Command::new(cargo)
                .args(["build", "--release", "-p", "oxiblosc-capi"])
                .current_dir(workspace())
                .status()
                .expect("run cargo build");
            assert!(
                st.success(),
                "cargo build --release -p oxiblosc-capi failed"
            );
            let dir = profile_dir().parent().expect("target dir").join("release");
            assert!(dir.join("libblosc2.so").exists() && dir.join("libblosc.so.1").exists());
            dir
        })
        .clone()
}

#[path = "../../../tests/support/pip.rs"]
mod pip;

/// python-blosc2 4.14.1's `blosc2/include` (the `blosc2.h` of the ABI):
/// `target/pydeps` (installed by the crate's own tests) or, when missing,
/// installed with pip into `target/pydeps-capi` (the root tests' installer,
/// `tests/support/pip.rs`).
pub fn blosc2_include() -> PathBuf {
    let target = profile_dir().parent().expect("target").to_path_buf();
    let inc = |d: &Path| d.join("blosc2/include");
    let has_header = |d: &Path| inc(d).join("blosc2.h").exists();
    let theirs = target.join("pydeps");
    if has_header(&theirs) {
        return inc(&theirs);
    }
    let ours = pip::install_into(
        &target,
        "pydeps-capi",
        &["--no-deps", "blosc2==4.14.1"],
        &has_header,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    inc(&ours)
}

/// Fails with what to install when `cmd` is missing.
pub fn need(cmd: &str, what: &str) {
    let ok = Command::new("sh")
        .args(["-c", &format!("command -v {cmd}")])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        ok,
        "{cmd} is missing ({what}); capi/ci.sh installs the prerequisites"
    );
}

pub fn tempdir(tag: &str) -> PathBuf {
    let d = profile_dir()
        .join("capi-tests")
        .join(format!("{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("create temp dir");
    d
}

/// Compiles `tests/c-interop/NAME.c` against `blosc2.h` and the library in
/// `libdir` (`-l<lib>`) into `work/<out>`.
pub fn compile_interop(name: &str, libdir: &Path, lib: &str, work: &Path, out: &str) {
    compile_with(
        name,
        &["-I", &blosc2_include().to_string_lossy()],
        libdir,
        lib,
        work,
        out,
    );
}

pub fn run_ok(work: &Path, prog: &str, args: &[&str]) {
    // Not a stale dev-profile libblosc2.so that cargo test put first on
    // LD_LIBRARY_PATH: our programs get the release library they were
    // linked against (C's, `libblosc2.so.9`, is not in that directory).
    run_ok_with(work, prog, args, Some(&lib_dir()));
}

/// Runs `work/prog args`, with `ld_path` (or nothing) as LD_LIBRARY_PATH;
/// its stdout, which must hold "OK".
pub fn run_ok_with(work: &Path, prog: &str, args: &[&str], ld_path: Option<&Path>) -> String {
    let mut cmd = Command::new(work.join(prog));
    cmd.args(args)
        .current_dir(work)
        .env_remove("LD_LIBRARY_PATH");
    if let Some(p) = ld_path {
        cmd.env("LD_LIBRARY_PATH", p);
    }
    let o = cmd.output().expect("run the program");
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        o.status.success() && stdout.contains("OK"),
        "{prog} {args:?}: {stdout}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    stdout
}

/// Compiles `tests/c-interop/NAME.c` with the extra gcc arguments `flags`
/// (an include directory, a macro) against `-L libdir -l<lib>` into
/// `work/out`.
pub fn compile_with(name: &str, flags: &[&str], libdir: &Path, lib: &str, work: &Path, out: &str) {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/c-interop")
        .join(format!("{name}.c"));
    let o = Command::new("gcc")
        .arg(&src)
        .arg("-Wall")
        .args(flags)
        .arg("-L")
        .arg(libdir)
        .arg(format!("-l{lib}"))
        .arg(format!("-Wl,-rpath,{}", libdir.display()))
        .arg("-o")
        .arg(out)
        .current_dir(work)
        .output()
        .expect("run gcc");
    assert!(
        o.status.success(),
        "compiling {name}.c {flags:?} failed:\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// A `b2nd_create_ctx` for an in-memory `|u1` array of these shapes
/// (asserted made).
pub fn new_ctx(shape: &[i64], chunks: &[i32], blocks: &[i32]) -> *mut blosc2::b2nd::b2nd_context_t {
    new_ctx_of("|u1", shape, chunks, blocks)
}

/// As [`new_ctx`], for items of `dtype`.
pub fn new_ctx_of(
    dtype: &str,
    shape: &[i64],
    chunks: &[i32],
    blocks: &[i32],
) -> *mut blosc2::b2nd::b2nd_context_t {
    let dtype = std::ffi::CString::new(dtype).unwrap();
    // SAFETY: the shapes hold ndim values, the dtype is NUL-terminated;
    // NULL storage and metalayers are allowed.
    let ctx = unsafe {
        blosc2::b2nd::b2nd_create_ctx(
            std::ptr::null(),
            shape.len() as i8,
            shape.as_ptr(),
            chunks.as_ptr(),
            blocks.as_ptr(),
            dtype.as_ptr(),
            0,
            std::ptr::null(),
            0,
        )
    };
    assert!(!ctx.is_null(), "b2nd_create_ctx");
    ctx
}
