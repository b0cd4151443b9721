//! `files`: compressing and decompressing a file through the CLI against
//! python-blosc2 doing the same with a file-backed `SChunk` (issue #14
//! item 1: "at least as fast as python-blosc2 ... measure on 512 MiB").
//!
//! Ours: `oxiblosc compress -q -f -c CODEC -t 4 -n N IN OUT.b2frame` and
//! `oxiblosc decompress -q -f OUT.b2frame BACK` (the release binary, built
//! first when missing), timed by the wall clock of the whole process.
//! Theirs: python-blosc2 4.14.1 (C-Blosc2 3.3.5, from `target/pydeps`)
//! reading IN in 4 MiB pieces (the CLI's default chunk size) into
//! `blosc2.SChunk(urlpath=..., contiguous=True, ...)` with `append_data`,
//! and reading it back with `decompress_chunk` into a buffer written to a
//! file; timed inside Python, so its interpreter start and imports are
//! *not* counted (in its favour), up to and including an `fsync` of what
//! it wrote (the CLI syncs its output before renaming it into place; the
//! time without that `fsync` is shown too). The CPU time (user + system,
//! all threads) of each side is shown beside: ours of the whole process
//! (`/proc/self/stat`'s children times), theirs of the timed span
//! (`time.process_time`); on a loaded machine it tells a slower wall time
//! that comes from the scheduler from one that comes from more work. Same codec, clevel 5, shuffle, type size
//! 4 and thread count on both sides; rounds interleaved, medians
//! reported. Every output is checked: both frames decompress to IN.
//!
//! The input is realistic float32 samples (a slow sine with noise,
//! rounded to one decimal, as sensor data is) in `target/perf/files/`.
//! All files stay in the page cache on a machine with enough memory, so
//! this measures the libraries and the file paths, not the disk.

use std::fs;
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use oxiblosc::Codec;

use crate::pydeps;
use crate::table::Table;

/// Options of `files`.
#[derive(Debug, Clone)]
pub struct Options {
    /// Bytes of input.
    pub size: usize,
    /// Codecs compared.
    pub codecs: Vec<Codec>,
    /// Thread counts compared.
    pub nthreads: Vec<usize>,
    /// Rounds per contestant (median reported).
    pub rounds: usize,
    /// Where the CSV goes, if anywhere.
    pub csv: Option<PathBuf>,
}

const PY: &str = r#"
import os, sys, time, blosc2, numpy as np
mode, src, dst, codec, nthreads, chunksize = sys.argv[1:7]
nthreads, chunksize = int(nthreads), int(chunksize)
t0 = time.perf_counter()
c0 = time.process_time()
if mode == "compress":
    cp = {"codec": getattr(blosc2.Codec, codec), "clevel": 5, "typesize": 4,
          "nthreads": nthreads,
          "filters": [blosc2.Filter.NOFILTER] * 5 + [blosc2.Filter.SHUFFLE]}
    sc = blosc2.SChunk(chunksize=chunksize, urlpath=dst, contiguous=True, cparams=cp,
                       dparams={"nthreads": nthreads}, mode="w")
    buf = bytearray(chunksize)
    with open(src, "rb", buffering=0) as f:
        while True:
            n = f.readinto(buf)
            if not n:
                break
            sc.append_data(memoryview(buf)[:n])
            if n < chunksize:
                break
    del sc
    t1 = time.perf_counter()
    fd = os.open(dst, os.O_RDONLY)
    os.fsync(fd)
    os.close(fd)
else:
    sc = blosc2.open(src, dparams={"nthreads": nthreads})
    out = np.empty(sc.chunksize, dtype=np.uint8)
    with open(dst, "wb", buffering=0) as f:
        for i in range(sc.nchunks):
            n = sc.decompress_chunk(i, out)
            f.write(memoryview(out)[:n])
        t1 = time.perf_counter()
        os.fsync(f.fileno())
print(t1 - t0, time.perf_counter() - t0, time.process_time() - c0)
"#;

/// The release `oxiblosc` binary, built when missing.
fn cli_binary() -> Result<PathBuf, String> {
    let bin = pydeps::target_dir().join("release").join("oxiblosc");
    eprintln!("building the release CLI (cargo build --release --bin oxiblosc) ...");
    let st = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(["build", "--release", "-p", "oxiblosc", "--bin", "oxiblosc"])
        .current_dir(pydeps::repo())
        .status()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !st.success() || !bin.is_file() {
        return Err(format!("cannot build {}", bin.display()));
    }
    Ok(bin)
}

/// Realistic float32 samples, `size` bytes, written to `path` (kept when it
/// already has that size).
fn make_input(path: &Path, size: usize) -> Result<(), String> {
    if fs::metadata(path).is_ok_and(|m| m.len() == size as u64) {
        return Ok(());
    }
    let f = fs::File::create(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut w = BufWriter::with_capacity(1 << 20, f);
    let mut s: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut noise = || {
        s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = s;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64 - 0.5
    };
    let n = size / 4;
    for i in 0..n {
        let v = (i as f64 / 5000.0).sin() * 1000.0 + noise() * 2.0;
        let v = ((v * 10.0).round() / 10.0) as f32;
        w.write_all(&v.to_le_bytes())
            .map_err(|e| format!("{}: {e}", path.display()))?;
    }
    w.write_all(&vec![0u8; size - n * 4])
        .and_then(|()| w.flush())
        .map_err(|e| format!("{}: {e}", path.display()))
}

fn same_files(a: &Path, b: &Path) -> Result<bool, String> {
    let open = |p: &Path| fs::File::open(p).map_err(|e| format!("{}: {e}", p.display()));
    let (mut fa, mut fb) = (open(a)?, open(b)?);
    let (mut ba, mut bb) = (vec![0u8; 1 << 20], vec![0u8; 1 << 20]);
    loop {
        let na = read_full(&mut fa, &mut ba)?;
        let nb = read_full(&mut fb, &mut bb)?;
        if na != nb || ba[..na] != bb[..nb] {
            return Ok(false);
        }
        if na == 0 {
            return Ok(true);
        }
    }
}

fn read_full(f: &mut fs::File, buf: &mut [u8]) -> Result<usize, String> {
    let mut n = 0;
    while n < buf.len() {
        match f.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) => return Err(e.to_string()),
        }
    }
    Ok(n)
}

/// CPU seconds (user + system) of this process's waited-for children,
/// from `/proc/self/stat` (`cutime` + `cstime`, in 1/100 s).
fn children_cpu() -> f64 {
    let Ok(stat) = fs::read_to_string("/proc/self/stat") else {
        return f64::NAN;
    };
    // The fields after the command name: state is field 3, cutime 16.
    let after = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<&str> = after.split_whitespace().collect();
    let tick = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok());
    match (tick(16 - 3), tick(17 - 3)) {
        (Some(u), Some(s)) => (u + s) / 100.0,
        _ => f64::NAN,
    }
}

/// Seconds of one run of our CLI: wall time and CPU time (all threads).
fn run_ours(bin: &Path, args: &[&str]) -> Result<(f64, f64), String> {
    let cpu = children_cpu();
    let t = Instant::now();
    let out = Command::new(bin)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", bin.display()))?;
    let secs = t.elapsed().as_secs_f64();
    let cpu = children_cpu() - cpu;
    if !out.status.success() {
        return Err(format!(
            "oxiblosc {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok((secs, cpu))
}

/// Seconds python-blosc2 reports for one run of [`PY`]: without and with
/// the final `fsync` of what it wrote (the CLI syncs its output), and the
/// CPU time of the same span (all threads).
fn run_theirs(script: &Path, args: &[&str]) -> Result<(f64, f64, f64), String> {
    let python = std::env::var("OXIBLOSC_PYTHON").unwrap_or_else(|_| "python3".to_owned());
    let out = Command::new(&python)
        .arg(script)
        .args(args)
        .env("PYTHONPATH", pydeps::pydeps())
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {python}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "python-blosc2 {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let t: Vec<f64> = text
        .split_whitespace()
        .map(str::parse::<f64>)
        .collect::<Result<_, _>>()
        .map_err(|e| format!("python-blosc2 printed no times: {e}"))?;
    match t[..] {
        [a, b, c] => Ok((a, b, c)),
        _ => Err(format!("python-blosc2 printed {text:?}")),
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn py_codec(c: Codec) -> Result<&'static str, String> {
    Ok(match c {
        Codec::BloscLz => "BLOSCLZ",
        Codec::Lz4 => "LZ4",
        Codec::Lz4Hc => "LZ4HC",
        Codec::Zlib => "ZLIB",
        Codec::Zstd => "ZSTD",
        #[allow(unreachable_patterns)]
        other => return Err(format!("no python-blosc2 name for {other}")),
    })
}

/// Runs the comparison and prints the table; `Ok(false)` when an output
/// did not decompress to the input.
pub fn run(o: &Options) -> Result<bool, String> {
    pydeps::libblosc2()?; // installs python-blosc2 into target/pydeps if missing
    let bin = cli_binary()?;
    let dir = pydeps::target_dir().join("perf").join("files");
    fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let input = dir.join(format!("input-{}.bin", o.size));
    eprintln!(
        "input: {} ({} MiB of float32 samples)",
        input.display(),
        o.size >> 20
    );
    make_input(&input, o.size)?;
    let script = dir.join("pyfile.py");
    fs::write(&script, PY).map_err(|e| format!("{}: {e}", script.display()))?;
    let s = |p: &Path| p.to_string_lossy().into_owned();
    let (ours_f, theirs_f) = (dir.join("ours.b2frame"), dir.join("theirs.b2frame"));
    let (ours_b, theirs_b) = (dir.join("ours.back"), dir.join("theirs.back"));
    let mb = o.size as f64 / 1e6;
    let mut table = Table::new([
        "codec",
        "threads",
        "compress ours s",
        "compress py s",
        "ours/py",
        "py no fsync s",
        "CPU ours / py s",
        "decompress ours s",
        "decompress py s",
        "ours/py",
        "py no fsync s",
        "CPU ours / py s",
        "frame ours B",
        "frame py B",
        "size diff",
    ]);
    let mut ok = true;
    let chunksize = (4usize << 20).to_string();
    for &codec in &o.codecs {
        for &n in &o.nthreads {
            let name = codec.to_string();
            let nt = n.to_string();
            let pc = py_codec(codec)?;
            let (mut oc, mut pcs, mut od, mut pd) = (vec![], vec![], vec![], vec![]);
            let (mut pcs_ns, mut pd_ns) = (vec![], vec![]);
            let (mut occ, mut pcc, mut odc, mut pdc) = (vec![], vec![], vec![], vec![]);
            for r in 0..o.rounds {
                eprintln!("{name} nthreads {n}: round {}/{}", r + 1, o.rounds);
                let cargs = ["compress", "-q", "-f", "-c", &name, "-t", "4", "-n", &nt];
                let mut a: Vec<String> = cargs.iter().map(|s| s.to_string()).collect();
                a.push(s(&input));
                a.push(s(&ours_f));
                let a: Vec<&str> = a.iter().map(String::as_str).collect();
                // A new file on both sides (see below): replacing the
                // previous round's frame cost the CLI about 0.35-0.8 s more
                // (the old file's pages and blocks freed, the mount's
                // `discard`) than writing a new one.
                let _ = fs::remove_file(&ours_f);
                let (t, cpu) = run_ours(&bin, &a)?;
                oc.push(t);
                occ.push(cpu);
                let _ = fs::remove_file(&theirs_f);
                let (ns, t, cpu) = run_theirs(
                    &script,
                    &["compress", &s(&input), &s(&theirs_f), pc, &nt, &chunksize],
                )?;
                pcs_ns.push(ns);
                pcs.push(t);
                pcc.push(cpu);
                let d = [
                    "decompress".to_string(),
                    "-q".into(),
                    "-f".into(),
                    "-n".into(),
                    nt.clone(),
                    s(&ours_f),
                    s(&ours_b),
                ];
                let d: Vec<&str> = d.iter().map(String::as_str).collect();
                // Both sides write a new output file: replacing one costs
                // the kernel more (here about 0.5 s more system time per
                // 256 MiB, with `dd` too) while the old file's pages live,
                // which the CLI's temp-and-rename keeps until it succeeds.
                let _ = fs::remove_file(&ours_b);
                let (t, cpu) = run_ours(&bin, &d)?;
                od.push(t);
                odc.push(cpu);
                let _ = fs::remove_file(&theirs_b);
                let (ns, t, cpu) = run_theirs(
                    &script,
                    &[
                        "decompress",
                        &s(&theirs_f),
                        &s(&theirs_b),
                        pc,
                        &nt,
                        &chunksize,
                    ],
                )?;
                pd_ns.push(ns);
                pd.push(t);
                pdc.push(cpu);
            }
            let good = same_files(&input, &ours_b)? && same_files(&input, &theirs_b)?;
            if !good {
                eprintln!("MISMATCH: {name} nthreads {n}: an output differs from the input");
                ok = false;
            }
            let fo = fs::metadata(&ours_f).map(|m| m.len()).unwrap_or(0);
            let ft = fs::metadata(&theirs_f).map(|m| m.len()).unwrap_or(0);
            let (oc, pcs, od, pd) = (median(oc), median(pcs), median(od), median(pd));
            let (pcs_ns, pd_ns) = (median(pcs_ns), median(pd_ns));
            let cpus = |a: Vec<f64>, b: Vec<f64>| format!("{:.2} / {:.2}", median(a), median(b));
            let cell = |t: f64| format!("{t:.3} ({:.0} MB/s)", mb / t);
            table.push(vec![
                name.clone(),
                nt.clone(),
                cell(oc),
                cell(pcs),
                format!("{:.2}", oc / pcs),
                cell(pcs_ns),
                cpus(occ, pcc),
                cell(od),
                cell(pd),
                format!("{:.2}", od / pd),
                cell(pd_ns),
                cpus(odc, pdc),
                fo.to_string(),
                ft.to_string(),
                format!(
                    "{:+.4} %",
                    (fo as f64 - ft as f64) / ft.max(1) as f64 * 100.0
                ) + if good { "" } else { " MISMATCH" },
            ]);
        }
    }
    for p in [&ours_f, &theirs_f, &ours_b, &theirs_b] {
        let _ = fs::remove_file(p);
    }
    println!(
        "## Files: `oxiblosc compress/decompress` (process wall time) vs python-blosc2 {} \
         file-backed SChunk (time inside Python, including an fsync of what it wrote, as \
         the CLI syncs its output; also shown without), {} MiB of float32 samples, \
         clevel 5, shuffle, 4 MiB chunks, median of {} rounds; ours/py < 1 means ours is \
         faster; CPU: user + system seconds of all threads (ours: the whole process; \
         python: the timed span)\n",
        pydeps::PYTHON_BLOSC2,
        o.size >> 20,
        o.rounds
    );
    println!("{}", table.markdown());
    if let Some(p) = &o.csv {
        table
            .write_csv(p)
            .map_err(|e| format!("{}: {e}", p.display()))?;
        eprintln!("wrote {}", p.display());
    }
    Ok(ok)
}
