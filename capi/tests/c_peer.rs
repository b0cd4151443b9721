//! The drop-in proof: C-Blosc's and C-Blosc2's own test programs, compiled
//! unmodified against the real headers and linked to our libraries
//! (`../shared/peer/run-c-blosc2-tests.sh`), Debian's numcodecs running its
//! own `test_blosc.py` on our `libblosc.so.1`, and the C example of
//! capi/README.md.
//!
//! Nothing here is skipped: a missing prerequisite (gcc, `libblosc-dev`'s
//! `blosc.h`, python3-numcodecs, python3-pytest, the peer directory) fails
//! the test with what to install; `capi/ci.sh` installs them and runs this.
//!
//! The expected results are kept in `capi/tests/expected-*.txt`: `PASS NAME`
//! must pass; `XFAIL NAME reason` is a known gap, listed with its reason. Every
//! program of a suite must be in one of the two lists, and an XFAIL that
//! starts passing fails the test until it is moved to PASS (the list only
//! shrinks).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The suites run one at a time: their programs have C-Blosc2's 60 s
/// limit each, which two suites competing for two cores could exceed.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// `<target>/<profile>`, where Cargo put our cdylib and build.rs the
/// `libblosc.so.1` link.
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    // <target>/<profile>/deps/c_peer-<hash>
    exe.parent()
        .and_then(Path::parent)
        .expect("profile dir")
        .to_path_buf()
}

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Our libraries, as `cargo build --release -p oxiblosc-capi` makes them
/// (run every time: a no-op when they are fresh; a test build does not
/// build the cdylib, and a library left in another profile's directory may
/// be stale or unoptimised).
fn lib_dir() -> PathBuf {
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

/// The shared peer directory (C-Blosc's and C-Blosc2's tests, the runner,
/// numcodecs' fixtures): `$OXIBLOSC_PEER`, else `../shared/peer` beside the
/// checkout (or beside its parent).
fn peer_dir() -> PathBuf {
    if let Some(p) = std::env::var_os("OXIBLOSC_PEER") {
        return PathBuf::from(p);
    }
    let ws = workspace().canonicalize().expect("workspace");
    for base in ws.ancestors().skip(1).take(3) {
        let p = base.join("shared/peer");
        if p.join("run-c-blosc2-tests.sh").exists() {
            return p;
        }
    }
    panic!(
        "the peer directory (run-c-blosc2-tests.sh, C-Blosc's tests) is not at ../shared/peer; \
         set OXIBLOSC_PEER"
    );
}

/// python-blosc2 4.14.1's `blosc2/include` (the `blosc2.h` of the ABI):
/// `target/pydeps` (installed by the crate's own tests) or, when missing,
/// installed with pip into `target/pydeps-capi`.
fn blosc2_include() -> PathBuf {
    let target = profile_dir().parent().expect("target").to_path_buf();
    for d in ["pydeps", "pydeps-capi"] {
        let inc = target.join(d).join("blosc2/include");
        if inc.join("blosc2.h").exists() {
            return inc;
        }
    }
    let dir = target.join("pydeps-capi");
    let st = Command::new("python3")
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
        ])
        .args(["--no-deps", "--target"])
        .arg(&dir)
        .arg("blosc2==4.14.1")
        .status()
        .expect("run pip");
    assert!(
        st.success(),
        "pip install --target {} blosc2==4.14.1 failed",
        dir.display()
    );
    dir.join("blosc2/include")
}

/// The include directory handed to the peer runner: the real header(s)
/// (`real_headers`, linked by name) and our own internal headers from
/// `capi/peer-include/<suite>/` (the declarations C-Blosc's and C-Blosc2's
/// internal-header tests include, such as `frame.h` or `../blosc/shuffle.h`,
/// written for our library), side by side in a directory named `blosc`, so
/// that both `"frame.h"` and `"../blosc/frame.h"` resolve in it. The real
/// header is never replaced: our directory may not hold a file of the same
/// name.
fn composed_include(suite: &str, real_headers: &[(&str, PathBuf)]) -> PathBuf {
    let ours = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("peer-include")
        .join(suite);
    let dir = tempdir(&format!("include-{suite}")).join("blosc");
    std::fs::create_dir_all(&dir).expect("create include dir");
    for (name, target) in real_headers {
        assert!(target.exists(), "{} is missing", target.display());
        std::os::unix::fs::symlink(target, dir.join(name)).expect("link a real header");
    }
    if let Ok(entries) = std::fs::read_dir(&ours) {
        for e in entries {
            let path = e.expect("read peer-include").path();
            if path.file_name().is_some_and(|n| n == ".keep") {
                continue;
            }
            let name = path.file_name().expect("file name").to_owned();
            assert!(
                !real_headers
                    .iter()
                    .any(|(n, _)| std::ffi::OsStr::new(n) == name),
                "{} would shadow the real header",
                path.display()
            );
            std::os::unix::fs::symlink(&path, dir.join(&name)).expect("link our header");
        }
    }
    dir
}

/// `PASS`/`XFAIL` lists of an expected-results file.
fn expected(name: &str) -> (BTreeSet<String>, BTreeMap<String, String>) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join(name);
    let text = std::fs::read_to_string(&path).expect("expected-results file");
    let (mut pass, mut xfail) = (BTreeSet::new(), BTreeMap::new());
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut it = line.splitn(3, char::is_whitespace);
        match (it.next(), it.next(), it.next()) {
            (Some("PASS"), Some(t), _) => {
                pass.insert(t.to_string());
            }
            (Some("XFAIL"), Some(t), Some(reason)) if !reason.trim().is_empty() => {
                xfail.insert(t.to_string(), reason.trim().to_string());
            }
            _ => panic!(
                "{}: bad line {line:?} (PASS NAME | XFAIL NAME REASON)",
                path.display()
            ),
        }
    }
    (pass, xfail)
}

fn need(cmd: &str, what: &str) {
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

/// Run the peer runner and check its PASS list against `expected_file`.
fn run_suite(suite: Option<&str>, include: &Path, libname: &str, expected_file: &str) {
    need("gcc", "compiles the C test programs");
    let peer = peer_dir();
    let libdir = lib_dir();
    let out = tempdir(suite.unwrap_or("c-blosc2"));
    let mut cmd = Command::new("bash");
    cmd.arg(peer.join("run-c-blosc2-tests.sh"))
        .arg(include)
        .arg(&libdir)
        .arg(libname)
        .arg(&out)
        // cargo test puts target/<profile> (which may hold a dev-profile
        // libblosc2.so) first on LD_LIBRARY_PATH, and that beats the
        // programs' rpath: name the library directory under test instead.
        .env("LD_LIBRARY_PATH", &libdir);
    if let Some(s) = suite {
        cmd.env("SUITE", s);
    }
    // The C programs read these; keep the runs independent of the caller.
    for v in [
        "BLOSC_CLEVEL",
        "BLOSC_SHUFFLE",
        "BLOSC_TYPESIZE",
        "BLOSC_COMPRESSOR",
        "BLOSC_BLOCKSIZE",
        "BLOSC_NTHREADS",
        "BLOSC_SPLITMODE",
        "BLOSC_NOLOCK",
        "BLOSC_DELTA",
    ] {
        cmd.env_remove(v);
    }
    let res = cmd.output().expect("run run-c-blosc2-tests.sh");
    let text = String::from_utf8_lossy(&res.stdout).into_owned();
    eprintln!("{text}");
    let mut passed = BTreeSet::new();
    let mut all = BTreeSet::new();
    for line in text.lines() {
        let mut it = line.split_whitespace();
        match (it.next(), it.next()) {
            (Some("PASS"), Some(t)) => {
                passed.insert(t.to_string());
                all.insert(t.to_string());
            }
            (Some("FAIL" | "NOBUILD"), Some(t)) => {
                all.insert(t.to_string());
            }
            _ => {}
        }
    }
    assert!(!all.is_empty(), "the runner ran nothing:\n{text}");
    let (want, xfail) = expected(expected_file);
    let mut problems = Vec::new();
    for t in &want {
        if !passed.contains(t) {
            problems.push(format!(
                "{t} is expected to pass but did not (logs: {})",
                out.display()
            ));
        }
    }
    for t in &all {
        if !want.contains(t) && !xfail.contains_key(t) {
            problems.push(format!("{t} is in neither list of {expected_file}"));
        }
    }
    for t in xfail.keys() {
        if passed.contains(t) {
            problems.push(format!(
                "{t} now passes: move it from XFAIL to PASS in {expected_file}"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    eprintln!(
        "{} of {} programs pass ({} expected failures, listed with reasons in {expected_file})",
        passed.len(),
        all.len(),
        xfail.len()
    );
}

fn tempdir(tag: &str) -> PathBuf {
    let d = profile_dir()
        .join("capi-tests")
        .join(format!("{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("create temp dir");
    d
}

/// C-Blosc 1.21.6's own tests, against Debian's `blosc.h` and our
/// `libblosc.so.1`.
#[test]
fn c_blosc1_suite_on_libblosc_so_1() {
    let _serial = serial();
    let real = PathBuf::from("/usr/include/blosc.h");
    assert!(
        real.exists(),
        "/usr/include/blosc.h is missing: install libblosc-dev (capi/ci.sh does)"
    );
    let include = composed_include("c-blosc", &[("blosc.h", real)]);
    run_suite(
        Some("c-blosc-1.21.6"),
        &include,
        ":libblosc.so.1",
        "expected-c-blosc.txt",
    );
}

/// C-Blosc2 3.3.2's own tests, against python-blosc2 4.14.1's `blosc2.h`
/// and our `libblosc2.so`.
#[test]
fn c_blosc2_suite_on_libblosc2_so() {
    let _serial = serial();
    let real = blosc2_include();
    let include = composed_include(
        "c-blosc2",
        &[
            ("blosc2.h", real.join("blosc2.h")),
            ("b2nd.h", real.join("b2nd.h")),
            ("blosc2", real.join("blosc2")),
        ],
    );
    run_suite(None, &include, "blosc2", "expected-c-blosc2.txt");
}

/// Debian's python3-numcodecs runs its own test_blosc.py with our
/// `libblosc.so.1` first on LD_LIBRARY_PATH: the same counts as on the real
/// C-Blosc 1.21.3.
#[test]
fn numcodecs_test_blosc_on_libblosc_so_1() {
    let _serial = serial();
    let python = "/usr/bin/python3";
    let libdir = lib_dir().canonicalize().expect("lib dir");
    let probe = Command::new(python)
        .args(["-c", "import numcodecs.blosc, pytest; import numcodecs.tests, os; print(os.path.dirname(numcodecs.tests.__file__)); print(''.join(l for l in open('/proc/self/maps') if 'blosc' in l))"])
        .env("LD_LIBRARY_PATH", &libdir)
        .output()
        .expect("run /usr/bin/python3");
    assert!(
        probe.status.success(),
        "numcodecs or pytest missing for /usr/bin/python3: install python3-numcodecs \
         python3-pytest (capi/ci.sh does):\n{}",
        String::from_utf8_lossy(&probe.stderr)
    );
    let text = String::from_utf8_lossy(&probe.stdout).into_owned();
    let tests_dir = PathBuf::from(text.lines().next().unwrap_or_default());
    // The blosc extension must have loaded our library, not the system's.
    let maps: Vec<&str> = text
        .lines()
        .skip(1)
        .filter(|l| l.contains("libblosc"))
        .collect();
    assert!(!maps.is_empty(), "no libblosc mapped:\n{text}");
    for l in &maps {
        assert!(
            l.contains(libdir.to_str().unwrap()),
            "a libblosc other than ours is loaded: {l}"
        );
    }
    let work = tempdir("numcodecs");
    std::fs::copy(tests_dir.join("test_blosc.py"), work.join("test_blosc.py"))
        .expect("copy test_blosc.py");
    let fixture = peer_dir().join("numcodecs/fixture");
    assert!(fixture.exists(), "{} is missing", fixture.display());
    std::os::unix::fs::symlink(&fixture, work.join("fixture")).expect("link fixture");
    let out = Command::new(python)
        .args([
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "test_blosc.py",
        ])
        .current_dir(&work)
        .env("LD_LIBRARY_PATH", &libdir)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .expect("run pytest");
    let report = String::from_utf8_lossy(&out.stdout).into_owned();
    let summary = report.lines().last().unwrap_or_default().to_string();
    eprintln!("numcodecs test_blosc.py on our libblosc.so.1: {summary}");
    let want = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/expected-numcodecs.txt"),
    )
    .expect("expected-numcodecs.txt");
    let want = want
        .lines()
        .find(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .expect("expected counts line")
        .trim()
        .to_string();
    let counts = summary
        .split(" in ")
        .next()
        .unwrap_or_default()
        .trim()
        .to_string();
    assert_eq!(counts, want, "pytest output:\n{report}");
}

/// The C example of capi/README.md, compiled against `blosc2.h` and our
/// `libblosc2.so`, prints what the README says.
#[test]
fn readme_c_example() {
    let _serial = serial();
    need("gcc", "compiles the README example");
    let readme =
        std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("README.md"))
            .expect("capi/README.md");
    let start = readme
        .find("```c\n")
        .expect("a ```c block in capi/README.md")
        + 5;
    let len = readme[start..].find("```").expect("end of the C block");
    let source = &readme[start..start + len];
    let lines = source.lines().count();
    assert!(lines <= 25, "the README example has {lines} lines");
    let work = tempdir("readme");
    std::fs::write(work.join("example.c"), source).unwrap();
    let libdir = lib_dir();
    let st = Command::new("gcc")
        .arg("example.c")
        .arg("-I")
        .arg(blosc2_include())
        .arg("-L")
        .arg(&libdir)
        .arg("-lblosc2")
        .arg(format!("-Wl,-rpath,{}", libdir.display()))
        .args(["-o", "example"])
        .current_dir(&work)
        .status()
        .expect("run gcc");
    assert!(st.success(), "compiling the README example failed");
    let out = Command::new(work.join("example"))
        .env("LD_LIBRARY_PATH", lib_dir())
        .output()
        .expect("run example");
    assert!(out.status.success(), "the example failed");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("roundtrip ok"), "example printed: {stdout}");
}

/// Our own C programs (`capi/tests/c/*.c`: the calls the peer suites do
/// not reach, e.g. the stdio and mmap backends on real files), each
/// compiled against `blosc2.h` and our `libblosc2.so`; each must print OK.
#[test]
fn own_c_programs() {
    let _serial = serial();
    need("gcc", "compiles capi/tests/c/*.c");
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/c");
    let mut sources: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("capi/tests/c")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "c"))
        .collect();
    sources.sort();
    assert!(!sources.is_empty());
    let libdir = lib_dir();
    let inc = blosc2_include();
    for src in sources {
        let name = src.file_stem().unwrap().to_string_lossy().into_owned();
        let work = tempdir(&name);
        let out = Command::new("gcc")
            .arg(&src)
            .arg("-Wall")
            .arg("-I")
            .arg(&inc)
            .arg("-L")
            .arg(&libdir)
            .arg("-lblosc2")
            .arg(format!("-Wl,-rpath,{}", libdir.display()))
            .arg("-o")
            .arg(&name)
            .current_dir(&work)
            .output()
            .expect("run gcc");
        assert!(
            out.status.success(),
            "compiling {name}.c failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let run = Command::new(work.join(&name))
            .current_dir(&work)
            // Not a stale dev-profile library cargo test put first.
            .env("LD_LIBRARY_PATH", &libdir)
            .output()
            .expect("run the program");
        let stdout = String::from_utf8_lossy(&run.stdout);
        assert!(
            run.status.success() && stdout.contains("OK"),
            "{name}: {stdout}{}",
            String::from_utf8_lossy(&run.stderr)
        );
    }
}

/// Compiles `tests/c-interop/NAME.c` against `blosc2.h` and the library in
/// `libdir` (`-l<lib>`) into `work/<out>`.
fn compile_interop(name: &str, libdir: &Path, lib: &str, work: &Path, out: &str) {
    compile_with(
        name,
        &["-I", &blosc2_include().to_string_lossy()],
        libdir,
        lib,
        work,
        out,
    );
}

fn run_ok(work: &Path, prog: &str, args: &[&str]) {
    let o = Command::new(work.join(prog))
        .args(args)
        .current_dir(work)
        // Not a stale dev-profile libblosc2.so that cargo test put first on
        // LD_LIBRARY_PATH: our programs get the release library they were
        // linked against (C's, `libblosc2.so.9`, is not in that directory).
        .env("LD_LIBRARY_PATH", lib_dir())
        .output()
        .expect("run the program");
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success() && stdout.contains("OK"),
        "{prog} {args:?}: {stdout}{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Each of `ours` and `c` (the same interop program built against our
/// library and C-Blosc2's) writes `name` with `write` + args, reads what the
/// other wrote with `read` + args; returns (our bytes, C's bytes).
fn cross_write_read(
    work: &Path,
    (ours, c): (&str, &str),
    name: &str,
    args: &[&str],
) -> (Vec<u8>, Vec<u8>) {
    let (o_file, c_file) = (format!("ours-{name}"), format!("c-{name}"));
    // `VERB CODEC FILE REST...`: write takes the level and the data kind,
    // read only the data kind.
    let run = |prog: &str, verb: &str, file: &str, rest: &[&str]| {
        let v: Vec<&str> = [verb, args[0], file]
            .into_iter()
            .chain(rest.iter().copied())
            .collect();
        run_ok(work, prog, &v);
    };
    let read_rest = args.get(2..).unwrap_or_default();
    run(ours, "write", &o_file, &args[1..]);
    run(c, "write", &c_file, &args[1..]);
    run(c, "read", &o_file, read_rest);
    run(ours, "read", &c_file, read_rest);
    (
        std::fs::read(work.join(&o_file)).unwrap(),
        std::fs::read(work.join(&c_file)).unwrap(),
    )
}

/// VL-block chunks (`blosc2_vlcompress_ctx`) across libraries: ours and
/// C-Blosc2 3.3.5 (python-blosc2's `libblosc2.so.9`) each decode what the
/// other wrote, and write the same bytes.
#[test]
fn vl_blocks_interop_with_c_blosc2() {
    let _serial = serial();
    need("gcc", "compiles capi/tests/c-interop/vl_blocks.c");
    let real = blosc2_include().join("../lib");
    assert!(
        real.join("libblosc2.so.9").exists(),
        "python-blosc2's libblosc2.so.9 is not in {}",
        real.display()
    );
    let work = tempdir("vl-interop");
    compile_interop("vl_blocks", &lib_dir(), "blosc2", &work, "vl_ours");
    compile_interop("vl_blocks", &real, ":libblosc2.so.9", &work, "vl_c");
    run_ok(&work, "vl_ours", &["write", "ours.bin"]);
    run_ok(&work, "vl_c", &["write", "c.bin"]);
    run_ok(&work, "vl_c", &["read", "ours.bin"]);
    run_ok(&work, "vl_ours", &["read", "c.bin"]);
    run_ok(&work, "vl_ours", &["read", "ours.bin"]);
    let (a, b) = (
        std::fs::read(work.join("ours.bin")).unwrap(),
        std::fs::read(work.join("c.bin")).unwrap(),
    );
    assert_eq!(a, b, "our VL-block chunk differs from C-Blosc2's");
}

/// VL-block chunks at level 0 (capi/tests/c-interop/vl_dict.c's `ramp`
/// blocks): C-Blosc2
/// runs the codec on VL blocks at any level (LZ4 at acceleration 10, LZ4HC
/// at liblz4's default level, ZSTD at -1, zlib's stored blocks), so on
/// compressible blocks its chunk is not the blocks stored raw; ours is the
/// same bytes, and each library decodes the other's. BloscLZ is not run
/// (C-Blosc2 3.3.5 stops with SIGBUS there).
#[test]
fn vl_blocks_at_level_0_are_c_blosc2s() {
    let _serial = serial();
    need("gcc", "compiles capi/tests/c-interop/vl_dict.c");
    let real = blosc2_include().join("../lib");
    assert!(
        real.join("libblosc2.so.9").exists(),
        "python-blosc2's libblosc2.so.9 is not in {}",
        real.display()
    );
    let work = tempdir("vl-level0");
    compile_interop("vl_dict", &lib_dir(), "blosc2", &work, "vd_ours");
    compile_interop("vl_dict", &real, ":libblosc2.so.9", &work, "vd_c");
    let mut compressed = 0;
    for codec in ["1", "2", "4", "5"] {
        let (a, b) = cross_write_read(&work, ("vd_ours", "vd_c"), codec, &[codec, "0", "ramp"]);
        assert_eq!(
            a, b,
            "codec {codec}: our level-0 VL-block chunk differs from C-Blosc2's"
        );
        // 64 blocks of 4 KiB: shorter means the codec ran.
        if a.len() < 64 * 4096 {
            compressed += 1;
        }
    }
    // LZ4, LZ4HC and ZSTD shrink these blocks at level 0; zlib's level 0
    // stores them.
    assert_eq!(compressed, 3);
}

/// VL-block chunks with a dictionary: our `libblosc2.so` and C-Blosc2
/// 3.3.5 each decode what the other wrote, and write the same bytes
/// (capi/tests/c-interop/vl_dict.c). LZ4, LZ4HC and ZSTD compress with the
/// dictionary; BloscLZ and ZLIB store the one ZSTD trains, unused, as C
/// does. At level 0 neither library makes one. Not run at level 0:
/// BloscLZ (C-Blosc2 3.3.5 crashes, SIGBUS).
#[test]
fn vl_dict_blocks_interop_with_c_blosc2() {
    let _serial = serial();
    need("gcc", "compiles capi/tests/c-interop/vl_dict.c");
    let real = blosc2_include().join("../lib");
    assert!(
        real.join("libblosc2.so.9").exists(),
        "python-blosc2's libblosc2.so.9 is not in {}",
        real.display()
    );
    let work = tempdir("vl-dict-interop");
    compile_interop("vl_dict", &lib_dir(), "blosc2", &work, "vd_ours");
    compile_interop("vl_dict", &real, ":libblosc2.so.9", &work, "vd_c");
    let runs = [
        ("0", "5"),
        ("1", "5"),
        ("2", "5"),
        ("4", "5"),
        ("5", "5"),
        ("1", "0"),
        ("2", "0"),
        ("4", "0"),
        ("5", "0"),
    ];
    for (codec, clevel) in runs {
        let (a, b) = cross_write_read(
            &work,
            ("vd_ours", "vd_c"),
            &format!("{codec}-{clevel}"),
            &[codec, clevel],
        );
        assert_eq!(
            a, b,
            "codec {codec} clevel {clevel}: our VL-block chunk differs from C-Blosc2's"
        );
    }
}

/// The records of a `dest_room` file: (codec index, level, chunk).
fn room_records(path: &Path) -> Vec<(u8, u8, Vec<u8>)> {
    let b = std::fs::read(path).unwrap();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let n = i32::from_le_bytes(b[i + 4..i + 8].try_into().unwrap()) as usize;
        out.push((b[i], b[i + 1], b[i + 8..i + 8 + n].to_vec()));
        i += 8 + n;
    }
    out
}

/// Runs `work/prog args`, with `ld_path` (or nothing) as LD_LIBRARY_PATH;
/// its stdout, which must hold "OK".
fn run_ok_with(work: &Path, prog: &str, args: &[&str], ld_path: Option<&Path>) -> String {
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
fn compile_with(name: &str, flags: &[&str], libdir: &Path, lib: &str, work: &Path, out: &str) {
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

/// Both files' chunks, record by record: the same codec and level, and the
/// same bytes where `same(codec, level)`; the number of chunks compared.
fn compare_rooms(ours: &Path, c: &Path, same: impl Fn(u8, u8) -> bool) -> usize {
    let (a, b) = (room_records(ours), room_records(c));
    assert_eq!(a.len(), b.len());
    let mut compared = 0;
    for (i, (x, y)) in a.iter().zip(&b).enumerate() {
        assert_eq!((x.0, x.1), (y.0, y.1), "record {i}");
        if same(x.0, x.1) {
            assert!(
                x.2 == y.2,
                "record {i} (codec {}, level {}): our chunk of {} bytes differs from C's of {}",
                x.0,
                x.1,
                x.2.len(),
                y.2.len()
            );
            compared += 1;
        }
    }
    compared
}

/// `blosc2_compress_ctx` uses all of `destsize`, as C-Blosc2 does: with
/// more room than nbytes + 32, blocks that do not compress become raw
/// streams instead of a memcpyed chunk (capi/tests/c-interop/dest_room.c;
/// 2,400 chunks, our bytes against C-Blosc2 3.3.5's, each library decoding
/// the other's). ZLIB is compared when a clang build of zlib-ng compresses
/// it (`oxiblosc_zng::DEFLATE_BUILT_BY_CLANG`; zlib-rs otherwise, whose
/// streams are not promised to be zlib-ng's).
#[test]
fn compress_ctx_uses_all_of_destsize_as_c_blosc2() {
    let _serial = serial();
    need("gcc", "compiles capi/tests/c-interop/dest_room.c");
    let real = blosc2_include().join("../lib");
    assert!(
        real.join("libblosc2.so.9").exists(),
        "python-blosc2's libblosc2.so.9 is not in {}",
        real.display()
    );
    let work = tempdir("dest-room");
    compile_interop("dest_room", &lib_dir(), "blosc2", &work, "dr_ours");
    compile_interop("dest_room", &real, ":libblosc2.so.9", &work, "dr_c");
    let ours = Some(lib_dir());
    run_ok_with(&work, "dr_ours", &["write", "ours.bin"], ours.as_deref());
    run_ok_with(&work, "dr_c", &["write", "c.bin"], None);
    run_ok_with(&work, "dr_c", &["read", "ours.bin"], None);
    run_ok_with(&work, "dr_ours", &["read", "c.bin"], ours.as_deref());
    // Codec index 3 is ZLIB.
    let zlib_ng = oxiblosc_zng::DEFLATE_BUILT_BY_CLANG;
    let n = compare_rooms(&work.join("ours.bin"), &work.join("c.bin"), |codec, _| {
        codec != 3 || zlib_ng
    });
    assert_eq!(n, if zlib_ng { 2400 } else { 1920 });
}

/// The same for C-Blosc 1.x's `blosc_compress` with its global settings
/// (capi/tests/c-interop/dest_room.c built with `-DBLOSC1`): our `libblosc.so.1` against
/// Debian's (C-Blosc 1.21.3). Compared: BloscLZ, LZ4, and LZ4HC from level
/// 3 (Debian's liblz4 1.9.4 codes levels 1-2 otherwise than liblz4 1.10's
/// LZ4MID, which ours and C-Blosc 1.21.6 bundle); not ZLIB (C-Blosc 1.x's
/// bytes need the `zlib-classic` feature) nor ZSTD (Debian's libzstd 1.5.4
/// against our 1.5.7).
#[test]
fn blosc_compress_uses_all_of_destsize_as_c_blosc() {
    let _serial = serial();
    need("gcc", "compiles capi/tests/c-interop/dest_room.c");
    let sys = Path::new("/usr/lib/x86_64-linux-gnu");
    assert!(
        Path::new("/usr/include/blosc.h").exists() && sys.join("libblosc.so.1").exists(),
        "C-Blosc 1.x is missing: install libblosc-dev (capi/ci.sh does)"
    );
    let work = tempdir("dest-room1");
    let blosc1 = ["-DBLOSC1"];
    compile_with(
        "dest_room",
        &blosc1,
        &lib_dir(),
        ":libblosc.so.1",
        &work,
        "dr1_ours",
    );
    compile_with("dest_room", &blosc1, sys, ":libblosc.so.1", &work, "dr1_c");
    let ours = Some(lib_dir());
    let o = run_ok_with(&work, "dr1_ours", &["write", "ours.bin"], ours.as_deref());
    let c = run_ok_with(&work, "dr1_c", &["write", "c.bin"], None);
    // Each program ran on the library it was meant to.
    assert!(o.contains("(1.21.6)") && c.contains("(1.21.3)"), "{o}{c}");
    run_ok_with(&work, "dr1_c", &["read", "ours.bin"], None);
    run_ok_with(&work, "dr1_ours", &["read", "c.bin"], ours.as_deref());
    // Codec indices: 0 BloscLZ, 1 LZ4, 2 LZ4HC.
    let n = compare_rooms(
        &work.join("ours.bin"),
        &work.join("c.bin"),
        |codec, level| codec < 2 || (codec == 2 && level >= 3),
    );
    assert_eq!(n, 1280);
}
