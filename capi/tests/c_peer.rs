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

mod common;
use common::*;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

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

/// python-blosc2 4.14.1's `blosc2.h`, `b2nd.h` and `blosc2/` beside our
/// internal headers for C-Blosc2's tests.
fn c_blosc2_include() -> PathBuf {
    let real = blosc2_include();
    composed_include(
        "c-blosc2",
        &[
            ("blosc2.h", real.join("blosc2.h")),
            ("b2nd.h", real.join("b2nd.h")),
            ("blosc2", real.join("blosc2")),
        ],
    )
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

/// Run the peer runner (on `tests`, or its default: every `tests/test_*.c`)
/// and check its PASS list against `expected_file`.
fn run_suite(
    suite: Option<&str>,
    include: &Path,
    libname: &str,
    expected_file: &str,
    tests: &[String],
) {
    need("gcc", "compiles the C test programs");
    let peer = peer_dir();
    let libdir = lib_dir();
    let out = tempdir(&format!(
        "{}{}",
        suite.unwrap_or("c-blosc2"),
        if tests.is_empty() { "" } else { "-named" }
    ));
    // The runner writes `OUT/NAME.log`: a name in a subdirectory
    // (`b2nd/test_...`) needs that directory.
    for t in tests {
        if let Some((dir, _)) = t.rsplit_once('/') {
            std::fs::create_dir_all(out.join(dir)).expect("create the log directory");
        }
    }
    let mut cmd = Command::new("bash");
    cmd.arg(peer.join("run-c-blosc2-tests.sh"))
        .arg(include)
        .arg(&libdir)
        .arg(libname)
        .arg(&out)
        .args(tests)
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
        &[],
    );
}

/// C-Blosc2 3.3.2's own tests, against python-blosc2 4.14.1's `blosc2.h`
/// and our `libblosc2.so`.
#[test]
fn c_blosc2_suite_on_libblosc2_so() {
    let _serial = serial();
    let include = c_blosc2_include();
    run_suite(None, &include, "blosc2", "expected-c-blosc2.txt", &[]);
}

/// C-Blosc2 3.3.2's own NDArray tests (`tests/b2nd/`, which the runner's
/// default of `tests/test_*.c` leaves out), against python-blosc2 4.14.1's
/// `b2nd.h` and our `libblosc2.so`.
#[test]
fn c_blosc2_b2nd_suite_on_libblosc2_so() {
    let _serial = serial();
    let include = c_blosc2_include();
    let dir = peer_dir().join("c-blosc2-3.3.2/tests/b2nd");
    let mut tests: Vec<String> = std::fs::read_dir(&dir)
        .expect("the peer suite's tests/b2nd")
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            let stem = name.strip_suffix(".c")?;
            stem.starts_with("test_").then(|| format!("b2nd/{stem}"))
        })
        .collect();
    tests.sort();
    assert!(
        tests.len() >= 30,
        "{} programs in {}",
        tests.len(),
        dir.display()
    );
    run_suite(
        None,
        &include,
        "blosc2",
        "expected-c-blosc2-b2nd.txt",
        &tests,
    );
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
