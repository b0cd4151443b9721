//! The C-Blosc2 oracle for the differential tests: python-blosc2 4.14.1
//! (which bundles C-Blosc2 3.3.5) behind the small server
//! `tests/support/cblosc2.py`, driven over a pipe.
//!
//! Finding python-blosc2: `$OXIBLOSC_PYTHON` (default `python3`) is asked
//! for `blosc2.__version__`; if that is not 4.14.1, the copy installed in
//! `<repo>/target/pydeps` is tried (with `PYTHONPATH`); if there is none, it
//! is installed there with
//! `python3 -m pip install --target <repo>/target/pydeps blosc2==4.14.1`
//! (about 40 s and 130 MB on the first run). Parallel test binaries take
//! turns through an exclusive lock on `target/pydeps.lock`; pip writes to a
//! private directory that is renamed into place when complete, so a half
//! installed tree is never used. When nothing works (no pip, no network) every
//! test that needs the oracle fails with one message that says what to run.
//!
//! Servers are started lazily, one per test thread that needs one at the
//! same time (so at most one per core with the default test harness), and
//! are reused by later tests of the same binary. They exit when their stdin
//! closes, i.e. when the test binary ends.
#![allow(dead_code)]

use std::io::{BufReader, BufWriter, Read, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Mutex, OnceLock};

use oxiblosc::{CParams, Filter};
use serde_json::{Value, json};

/// The python-blosc2 release the oracle must be.
pub const PYTHON_BLOSC2: &str = "4.14.1";
/// The C-Blosc2 release python-blosc2 4.14.1 bundles.
pub const C_BLOSC2: &str = "3.3.5";

use super::repo;

fn pydeps() -> PathBuf {
    repo().join("target").join("pydeps")
}

/// How to run a Python that imports the right python-blosc2.
#[derive(Clone, Debug)]
struct PyEnv {
    python: String,
    /// Extra `PYTHONPATH` entry (the private install), if needed.
    path: Option<PathBuf>,
}

impl PyEnv {
    fn command(&self) -> Command {
        let mut cmd = Command::new(&self.python);
        if let Some(dir) = &self.path {
            let mut paths = vec![dir.clone()];
            if let Some(old) = std::env::var_os("PYTHONPATH") {
                paths.extend(std::env::split_paths(&old));
            }
            cmd.env("PYTHONPATH", std::env::join_paths(paths).unwrap());
        }
        cmd.env("PYTHONDONTWRITEBYTECODE", "1");
        cmd
    }

    /// `Some(version)` when `import blosc2` works.
    fn blosc2_version(&self) -> Option<String> {
        let out = self
            .command()
            .args([
                "-c",
                "import sys, blosc2; sys.stdout.write(blosc2.__version__)",
            ])
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output()
            .ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
    }
}

fn how_to_fix(python: &str) -> String {
    format!(
        "The differential tests need python-blosc2 {PYTHON_BLOSC2} (C-Blosc2 {C_BLOSC2}) as their \
         oracle. Install it with\n    {python} -m pip install --target {} blosc2=={PYTHON_BLOSC2}\n\
         (or `{python} -m pip install blosc2=={PYTHON_BLOSC2}` into that Python; \
         OXIBLOSC_PYTHON picks another interpreter).",
        pydeps().display()
    )
}

/// python-blosc2 from the system's Python if it is the right version, else
/// from the private `target/pydeps` that [`super::pyenv::python_with`]
/// installs on first use.
fn find_or_install() -> Result<PyEnv, String> {
    let python = std::env::var("OXIBLOSC_PYTHON").unwrap_or_else(|_| "python3".to_string());
    let system = PyEnv {
        python: python.clone(),
        path: None,
    };
    if system.blosc2_version().as_deref() == Some(PYTHON_BLOSC2) {
        return Ok(system);
    }
    let probe = format!("import blosc2; assert blosc2.__version__ == '{PYTHON_BLOSC2}'");
    let spec = format!("blosc2=={PYTHON_BLOSC2}");
    super::pyenv::python_with("pydeps", &[spec.as_str()], &probe)
        .map(|py| PyEnv {
            python: py.python,
            path: Some(py.dir),
        })
        .map_err(|e| format!("{e}\n{}", how_to_fix(&python)))
}

fn py_env() -> &'static PyEnv {
    static ENV: OnceLock<Result<PyEnv, String>> = OnceLock::new();
    match ENV.get_or_init(find_or_install) {
        Ok(env) => env,
        Err(msg) => panic!("{msg}"),
    }
}

/// One running `cblosc2.py`.
struct Server {
    child: Child,
    stdin: BufWriter<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl Server {
    fn spawn() -> Server {
        let script = repo().join("tests/support/cblosc2.py");
        let mut child = py_env()
            .command()
            .arg(&script)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", script.display()));
        let stdin = BufWriter::new(child.stdin.take().unwrap());
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut s = Server {
            child,
            stdin,
            stdout,
        };
        let hello = s.call(&[Op::Hello]).remove(0);
        assert_eq!(
            hello.json["python_blosc2"], PYTHON_BLOSC2,
            "oracle: {}",
            hello.json
        );
        assert_eq!(hello.json["c_blosc2"], C_BLOSC2, "oracle: {}", hello.json);
        assert_eq!(
            hello.json["c_blosc2_so"], C_BLOSC2,
            "oracle: {}",
            hello.json
        );
        s
    }

    fn call(&mut self, ops: &[Op]) -> Vec<Reply> {
        let mut docs = Vec::with_capacity(ops.len());
        let mut blobs: Vec<&[u8]> = Vec::new();
        for op in ops {
            let (doc, bs) = op.encode();
            docs.push(doc);
            blobs.extend(bs);
        }
        let doc = serde_json::to_vec(&json!({ "ops": docs })).unwrap();
        let send = |w: &mut BufWriter<ChildStdin>| -> std::io::Result<()> {
            w.write_all(&(doc.len() as u32).to_le_bytes())?;
            w.write_all(&doc)?;
            for b in &blobs {
                w.write_all(b)?;
            }
            w.flush()
        };
        send(&mut self.stdin).expect("oracle server died (see its stderr above)");
        let mut len = [0u8; 4];
        self.stdout
            .read_exact(&mut len)
            .expect("oracle server died (see its stderr above)");
        let mut doc = vec![0u8; u32::from_le_bytes(len) as usize];
        self.stdout.read_exact(&mut doc).unwrap();
        let answer: Value = serde_json::from_slice(&doc).unwrap();
        let results = answer["results"].as_array().unwrap();
        assert_eq!(results.len(), ops.len());
        results
            .iter()
            .map(|r| {
                let blobs = r["blobs"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|n| {
                        let mut b = vec![0u8; n.as_u64().unwrap() as usize];
                        self.stdout.read_exact(&mut b).unwrap();
                        b
                    })
                    .collect();
                Reply {
                    json: r.clone(),
                    blobs,
                }
            })
            .collect()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.stdin.flush();
        // Closing stdin ends the server; do not leave a zombie behind.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

static IDLE: Mutex<Vec<Server>> = Mutex::new(Vec::new());

/// Run `ops` on an idle server (starting one if none is idle).
pub fn call(ops: &[Op]) -> Vec<Reply> {
    let idle = IDLE.lock().unwrap_or_else(|e| e.into_inner()).pop();
    let mut server = idle.unwrap_or_else(Server::spawn);
    let replies = server.call(ops);
    IDLE.lock().unwrap_or_else(|e| e.into_inner()).push(server);
    replies
}

/// Compression parameters as the server takes them.
pub fn params_json(p: &CParams) -> Value {
    let mut filters = Vec::new();
    let mut metas = Vec::new();
    // python-blosc2 fills slots from 0; keep the slots as they are in `p`
    // up to the last used one.
    let last = p
        .filters
        .iter()
        .rposition(Option::is_some)
        .map_or(0, |i| i + 1);
    for s in 0..last {
        filters.push(p.filters[s].map_or(0, Filter::id));
        let meta = match p.filters[s] {
            Some(Filter::TruncPrec(m)) => m,
            _ => p.filters_meta[s],
        };
        metas.push(meta);
    }
    json!({
        "codec": p.codec.id(),
        "clevel": p.clevel,
        "typesize": p.typesize,
        "filters": filters,
        "filters_meta": metas,
        "blocksize": p.blocksize,
        "splitmode": p.splitmode.id(),
        "use_dict": p.use_dict,
    })
}

/// A request to the oracle.
pub enum Op<'a> {
    Hello,
    /// `blosc2.compress2(data, ...)` with nthreads 1; with `roundtrip` C
    /// also decompresses its own chunk.
    Compress {
        params: &'a CParams,
        data: &'a [u8],
        roundtrip: bool,
    },
    /// `blosc2.decompress2(chunk, nthreads=1)`.
    Decompress(&'a [u8]),
    /// `blosc2_getitem(chunk, start, nitems)`.
    GetItem {
        chunk: &'a [u8],
        start: usize,
        nitems: usize,
    },
}

impl<'a> Op<'a> {
    fn encode(&self) -> (Value, Vec<&'a [u8]>) {
        match *self {
            Op::Hello => (json!({"op": "hello"}), vec![]),
            Op::Compress {
                params,
                data,
                roundtrip,
            } => (
                json!({"op": "compress", "params": params_json(params),
                       "roundtrip": roundtrip, "blobs": [data.len()]}),
                vec![data],
            ),
            Op::Decompress(chunk) => (
                json!({"op": "decompress", "blobs": [chunk.len()]}),
                vec![chunk],
            ),
            Op::GetItem {
                chunk,
                start,
                nitems,
            } => (
                json!({"op": "getitem", "start": start, "nitems": nitems,
                       "blobs": [chunk.len()]}),
                vec![chunk],
            ),
        }
    }
}

/// The oracle's answer to one [`Op`].
#[derive(Debug)]
pub struct Reply {
    pub json: Value,
    pub blobs: Vec<Vec<u8>>,
}

impl Reply {
    /// The first output blob, or C's error text.
    pub fn result(&self) -> Result<&[u8], String> {
        if self.json["ok"] == true {
            Ok(&self.blobs[0])
        } else {
            Err(self.json["error"].as_str().unwrap_or("?").to_string())
        }
    }
}

/// C-Blosc2 decompresses `chunk`.
pub fn decompress(chunk: &[u8]) -> Result<Vec<u8>, String> {
    call(&[Op::Decompress(chunk)])[0]
        .result()
        .map(<[u8]>::to_vec)
}

/// What C-Blosc2 did with one compression request.
#[derive(Debug)]
pub struct CCompressed {
    /// The chunk, or C's error text.
    pub chunk: Result<Vec<u8>, String>,
    /// C decompressing its own chunk (when asked for): bytes or error text.
    pub roundtrip: Option<Result<Vec<u8>, String>>,
}

/// C-Blosc2 compresses `data` with `p` (nthreads 1, destination nbytes + 32).
pub fn compress(p: &CParams, data: &[u8], roundtrip: bool) -> CCompressed {
    let mut r = call(&[Op::Compress {
        params: p,
        data,
        roundtrip,
    }]);
    let r = r.remove(0);
    match r.result() {
        Err(e) => CCompressed {
            chunk: Err(e),
            roundtrip: None,
        },
        Ok(chunk) => CCompressed {
            chunk: Ok(chunk.to_vec()),
            roundtrip: roundtrip.then(|| match r.json["rt_error"].as_str() {
                Some(e) => Err(e.to_string()),
                None => Ok(r.blobs[1].clone()),
            }),
        },
    }
}

/// `blosc2_getitem` on `chunk`.
pub fn getitem(chunk: &[u8], start: usize, nitems: usize) -> Result<Vec<u8>, String> {
    call(&[Op::GetItem {
        chunk,
        start,
        nitems,
    }])[0]
        .result()
        .map(<[u8]>::to_vec)
}

/// Run `tests/support/<script>` with python-blosc2 importable (installed on
/// first use like the oracle server's) and `args`; its stdout, or its stderr
/// as the error.
pub fn run_script(script: &str, args: &[&str]) -> Result<String, String> {
    let out = py_env()
        .command()
        .arg(repo().join("tests/support").join(script))
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
