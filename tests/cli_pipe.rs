//! `oxiblosc compress - -` and `decompress - -` pipe 1 GiB in bounded
//! memory: the data is made here and fed to stdin from a thread, the two
//! processes are chained by a pipe, the output is counted and hashed (never
//! stored), and each process's peak RSS (`VmHWM` from `/proc/PID/status`,
//! polled until it exits) stays under 256 MiB. A `.blp` decompresses from a
//! file or stdin in a few MiB.
#![cfg(target_os = "linux")]

use std::io::{Read, Write};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

const GIB: u64 = 1 << 30;
const BLOCK: usize = 1 << 20;
const RSS_LIMIT_KIB: u64 = 256 * 1024;

/// Block `i` of the input: a ramp of u32 items with noise in the low bits
/// (compresses about 3:1, like real numeric data, not like zeros).
fn block(i: u64, out: &mut [u8]) {
    let mut s = i.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    for (k, w) in out.chunks_exact_mut(4).enumerate() {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        let v = ((i as u32) << 18 | (k as u32) >> 2) ^ (s as u32 & 0xff);
        w.copy_from_slice(&v.to_le_bytes());
    }
}

/// A 64-bit hash of a byte stream, fed in pieces of any size.
struct Hash {
    h: u64,
    carry: Vec<u8>,
    len: u64,
}

impl Hash {
    fn new() -> Hash {
        Hash {
            h: 0xcbf2_9ce4_8422_2325,
            carry: Vec::new(),
            len: 0,
        }
    }
    fn word(&mut self, w: u64) {
        self.h = (self.h ^ w)
            .wrapping_mul(0x0000_0100_0000_01b3)
            .rotate_left(29);
    }
    fn add(&mut self, mut data: &[u8]) {
        self.len += data.len() as u64;
        if !self.carry.is_empty() {
            let k = (8 - self.carry.len()).min(data.len());
            self.carry.extend_from_slice(&data[..k]);
            data = &data[k..];
            if self.carry.len() == 8 {
                let w = u64::from_le_bytes(self.carry[..].try_into().unwrap());
                self.word(w);
                self.carry.clear();
            }
        }
        let mut words = data.chunks_exact(8);
        for w in &mut words {
            self.word(u64::from_le_bytes(w.try_into().unwrap()));
        }
        self.carry.extend_from_slice(words.remainder());
    }
    /// The hash and length of everything `r` gives until its end.
    fn of_reader(r: &mut impl Read) -> (u64, u64) {
        let mut h = Hash::new();
        let mut buf = vec![0u8; BLOCK];
        loop {
            let n = r.read(&mut buf).unwrap();
            if n == 0 {
                break;
            }
            h.add(&buf[..n]);
        }
        h.finish()
    }
    fn finish(mut self) -> (u64, u64) {
        let mut last = [0u8; 8];
        last[..self.carry.len()].copy_from_slice(&self.carry);
        let n = self.carry.len() as u64;
        self.word(u64::from_le_bytes(last) ^ n << 56);
        (self.h, self.len)
    }
}

/// Poll `pid`'s peak RSS (KiB) until `stop`; the largest value seen.
fn watch(pid: u32, stop: Arc<AtomicBool>, peak: Arc<AtomicU64>) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let path = format!("/proc/{pid}/status");
        while !stop.load(Ordering::Relaxed) {
            if let Ok(s) = std::fs::read_to_string(&path) {
                for line in s.lines() {
                    if let Some(v) = line.strip_prefix("VmHWM:") {
                        let kib: u64 = v.trim().trim_end_matches("kB").trim().parse().unwrap_or(0);
                        peak.fetch_max(kib, Ordering::Relaxed);
                    }
                }
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    })
}

struct Watched {
    child: Child,
    stop: Arc<AtomicBool>,
    peak: Arc<AtomicU64>,
    watcher: std::thread::JoinHandle<()>,
}

impl Watched {
    fn new(child: Child) -> Watched {
        let stop = Arc::new(AtomicBool::new(false));
        let peak = Arc::new(AtomicU64::new(0));
        let watcher = watch(child.id(), stop.clone(), peak.clone());
        Watched {
            child,
            stop,
            peak,
            watcher,
        }
    }

    /// Wait for the exit; (success, peak RSS in KiB, stderr).
    fn wait(mut self) -> (bool, u64, String) {
        let mut err = String::new();
        if let Some(mut e) = self.child.stderr.take() {
            let _ = e.read_to_string(&mut err);
        }
        // The last VmHWM read before the process is reaped is its peak.
        loop {
            if let Ok(Some(_)) = self.child.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        self.stop.store(true, Ordering::Relaxed);
        self.watcher.join().unwrap();
        let ok = self.child.wait().unwrap().success();
        (ok, self.peak.load(Ordering::Relaxed), err)
    }
}

/// Pipe `total` bytes through `compress ARGS - -` and `decompress - -`;
/// asserts the bytes come back and both peaks stay under the limit.
fn pipe(total: u64, compress_args: &[&str]) {
    let exe = env!("CARGO_BIN_EXE_oxiblosc");
    let t0 = Instant::now();
    let mut c = Command::new(exe)
        .arg("compress")
        .args(compress_args)
        .args(["-", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let c_out = c.stdout.take().unwrap();
    let mut c_in = c.stdin.take().unwrap();
    let mut d = Command::new(exe)
        .args(["decompress", "-", "-"])
        .stdin(Stdio::from(c_out))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut d_out = d.stdout.take().unwrap();
    let c = Watched::new(c);
    let d = Watched::new(d);
    let feeder = std::thread::spawn(move || {
        let mut h = Hash::new();
        let mut buf = vec![0u8; BLOCK];
        let mut left = total;
        let mut i = 0;
        while left > 0 {
            block(i, &mut buf);
            // A short last block so the stream ends off a chunk boundary.
            let n = (left as usize).min(BLOCK);
            h.add(&buf[..n]);
            c_in.write_all(&buf[..n]).unwrap();
            left -= n as u64;
            i += 1;
        }
        drop(c_in);
        h.finish()
    });
    let got = Hash::of_reader(&mut d_out);
    let want = feeder.join().unwrap();
    let (c_ok, c_peak, c_err) = c.wait();
    let (d_ok, d_peak, d_err) = d.wait();
    let secs = t0.elapsed().as_secs_f64();
    eprintln!(
        "{total} bytes through compress {compress_args:?} | decompress: {secs:.1} s, \
         peak RSS {} MiB / {} MiB",
        c_peak / 1024,
        d_peak / 1024
    );
    assert!(c_ok, "compress failed: {c_err}");
    assert!(d_ok, "decompress failed: {d_err}");
    assert_eq!(got.1, total, "decompressed byte count");
    assert_eq!(got, want, "decompressed bytes differ (hash)");
    assert!(c_peak > 0 && d_peak > 0, "no VmHWM read");
    assert!(
        c_peak < RSS_LIMIT_KIB,
        "compress peak RSS {} MiB over 256 MiB",
        c_peak / 1024
    );
    assert!(
        d_peak < RSS_LIMIT_KIB,
        "decompress peak RSS {} MiB over 256 MiB",
        d_peak / 1024
    );
}

#[test]
fn one_gib_of_chunks_through_a_pipe_in_bounded_memory() {
    pipe(GIB + 12_345, &["-c", "lz4", "-t", "4", "-n", "2"]);
}

#[test]
fn one_gib_frame_through_a_pipe_in_bounded_memory() {
    pipe(
        GIB + 777,
        &["--format", "frame", "-c", "lz4", "-t", "4", "-n", "2"],
    );
}

/// `compress --format blp` and `decompress` of a `.blp` stream: 512 MiB
/// from stdin make a Bloscpack file of about 130 MiB with a peak RSS under
/// 48 MiB (the input and the file were both held in memory), which then
/// decodes from the file and from stdin with a peak RSS under 32 MiB (it
/// was read whole first); the bytes come back, and a flipped byte in the
/// last chunk fails with its checksum and leaves no output file.
#[test]
fn a_bloscpack_file_compresses_and_decompresses_in_bounded_memory() {
    const TOTAL: u64 = 512 << 20;
    const LIMIT_KIB: u64 = 32 * 1024;
    const COMPRESS_LIMIT_KIB: u64 = 48 * 1024;
    let exe = env!("CARGO_BIN_EXE_oxiblosc");
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("cli-pipe-blp-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("big.blp");
    let mut c = Command::new(exe)
        .args(["compress", "--format", "blp", "-c", "lz4", "-t", "4", "-"])
        .arg(&path)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut c_in = c.stdin.take().unwrap();
    let c = Watched::new(c);
    let mut h = Hash::new();
    let mut buf = vec![0u8; BLOCK];
    for i in 0..TOTAL / BLOCK as u64 {
        block(i, &mut buf);
        h.add(&buf);
        c_in.write_all(&buf).unwrap();
    }
    drop(c_in);
    let want = h.finish();
    let (ok, peak, err) = c.wait();
    eprintln!(
        "compress --format blp of {TOTAL} bytes: peak RSS {} MiB",
        peak / 1024
    );
    assert!(ok, "compress failed: {err}");
    assert!(peak > 0, "no VmHWM read");
    assert!(
        peak < COMPRESS_LIMIT_KIB,
        "compress peak RSS {} MiB",
        peak / 1024
    );
    let file_len = std::fs::metadata(&path).unwrap().len();
    // Read whole, the file alone would pass the limit.
    assert!(
        file_len > (LIMIT_KIB + 32 * 1024) * 1024,
        "{file_len}-byte file"
    );
    for from_stdin in [false, true] {
        let mut cmd = Command::new(exe);
        cmd.arg("decompress");
        if from_stdin {
            cmd.arg("-")
                .stdin(Stdio::from(std::fs::File::open(&path).unwrap()));
        } else {
            cmd.arg(&path).stdin(Stdio::null());
        }
        let mut child = cmd
            .arg("-")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut out = child.stdout.take().unwrap();
        let w = Watched::new(child);
        let got = Hash::of_reader(&mut out);
        let (ok, peak, err) = w.wait();
        eprintln!(
            "{file_len}-byte .blp (stdin {from_stdin}): peak RSS {} MiB",
            peak / 1024
        );
        assert!(ok, "decompress failed: {err}");
        assert_eq!(got, want, "stdin {from_stdin}: other bytes");
        assert!(peak > 0, "no VmHWM read");
        assert!(
            peak < LIMIT_KIB,
            "stdin {from_stdin}: peak RSS {} MiB",
            peak / 1024
        );
    }
    // A flipped byte near the end: the last chunk's checksum fails after the
    // others were decoded, and the output file is not left behind.
    let mut f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    use std::io::{Seek, SeekFrom};
    f.seek(SeekFrom::Start(file_len - 100)).unwrap();
    f.write_all(&[0x5A]).unwrap();
    drop(f);
    let target = dir.join("out.bin");
    let o = Command::new(exe)
        .arg("decompress")
        .arg(&path)
        .arg(&target)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "a flipped byte decoded");
    assert!(err.contains("checksum mismatch"), "{err}");
    assert!(!target.exists(), "output left behind");
    let _ = std::fs::remove_dir_all(&dir);
}

fn run(args: &[&std::ffi::OsStr], stdin: &[u8]) -> std::process::Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_oxiblosc"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut i = child.stdin.take().unwrap();
    let data = stdin.to_vec();
    let feeder = std::thread::spawn(move || {
        let _ = i.write_all(&data);
    });
    let out = child.wait_with_output().unwrap();
    feeder.join().unwrap();
    out
}

/// A frame to stdout (spooled) is byte for byte the frame written to a file
/// (seekable, header patched), checksums and metalayers included; a frame
/// from stdin decodes as from its file, whatever order its chunks are
/// stored in, and its checksums are checked.
#[test]
fn frames_to_stdout_match_files_and_any_stdin_frame_decodes_and_is_checked() {
    let dir = std::env::temp_dir().join(format!("oxiblosc-cli-pipe-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut input = vec![0u8; 9 << 20];
    for (i, b) in input.chunks_mut(BLOCK).enumerate() {
        block(i as u64, b);
    }
    let src = dir.join("in.bin");
    let file = dir.join("out.b2frame");
    std::fs::write(&src, &input).unwrap();
    let common = [
        "--format",
        "frame",
        "--chunksize",
        "1M",
        "-c",
        "zstd",
        "--checksum",
        "sha256",
        "--meta",
        "m=x",
    ];
    let mut args: Vec<&std::ffi::OsStr> = vec!["compress".as_ref()];
    args.extend(common.iter().map(std::ffi::OsStr::new));
    let mut to_file = args.clone();
    to_file.extend([src.as_os_str(), file.as_os_str()]);
    let o = run(&to_file, b"");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut to_stdout = args.clone();
    to_stdout.extend([std::ffi::OsStr::new("-"), std::ffi::OsStr::new("-")]);
    let o = run(&to_stdout, &input);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        o.stdout == std::fs::read(&file).unwrap(),
        "stdout and file frames differ"
    );
    let d = run(
        &["decompress".as_ref(), "-".as_ref(), "-".as_ref()],
        &o.stdout,
    );
    assert!(d.status.success());
    assert!(d.stdout == input);
    // From a pipe the frame's checksums are checked as from a file: a byte
    // flipped inside a chunk's data is caught.
    let mut bad = o.stdout.clone();
    let at = bad.len() / 3;
    bad[at] ^= 0x40;
    let d = run(&["decompress".as_ref(), "-".as_ref(), "-".as_ref()], &bad);
    let err = String::from_utf8_lossy(&d.stderr);
    assert_eq!(
        d.status.code(),
        Some(1),
        "a corrupt frame from a pipe decoded"
    );
    assert!(err.contains("checksum mismatch"), "{err}");

    // C-Blosc2's frame with updated, reordered and special chunks: from a
    // pipe, the same data as from its file.
    let reordered = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/frames/f10_special_updates_reordered.b2frame");
    let bytes = std::fs::read(&reordered).unwrap();
    let piped = run(&["decompress".as_ref(), "-".as_ref(), "-".as_ref()], &bytes);
    let err = String::from_utf8_lossy(&piped.stderr);
    assert!(piped.status.success(), "{err}");
    let from_file = run(
        &["decompress".as_ref(), reordered.as_os_str(), "-".as_ref()],
        b"",
    );
    assert!(from_file.status.success());
    let mut sc = oxiblosc::SChunk::open(&reordered).unwrap();
    let want: Vec<u8> = sc
        .iter_chunks()
        .map(|c| c.unwrap())
        .collect::<Vec<_>>()
        .concat();
    assert!(from_file.stdout == want);
    assert!(
        piped.stdout == want,
        "a reordered frame from a pipe decoded differently"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Where `needle` starts in `hay` (it must be there once).
fn find_once(hay: &[u8], needle: &[u8]) -> usize {
    let hits: Vec<usize> = hay
        .windows(needle.len())
        .enumerate()
        .filter(|(_, w)| *w == needle)
        .map(|(i, _)| i)
        .collect();
    assert_eq!(hits.len(), 1, "the chunk's bytes are not unique");
    hits[0]
}

/// Run the CLI with `args`, `stdin` fed from a file (or nothing), and
/// `TMPDIR` set to `tmp` (where a frame from stdin is copied).
fn run_in(
    tmp: &std::path::Path,
    args: &[&std::ffi::OsStr],
    stdin: Option<&std::path::Path>,
) -> std::process::Output {
    let input = match stdin {
        Some(p) => Stdio::from(std::fs::File::open(p).unwrap()),
        None => Stdio::null(),
    };
    Command::new(env!("CARGO_BIN_EXE_oxiblosc"))
        .args(args)
        .env("TMPDIR", tmp)
        .stdin(input)
        .output()
        .unwrap()
}

/// The pipelined decompress (chunks decoded on one thread while a writer
/// thread writes the earlier ones) stops at a chunk that fails in the
/// middle of the input, after earlier chunks were already written: the
/// error names the input and the chunk, exit code 1, no output file (an
/// existing one is left as it was) and no temporary file, whether the
/// frame comes from its file or from stdin (through its temporary copy),
/// and for a Blosc1 chunk sequence too. A writer that fails (`/dev/full`)
/// stops the decoding thread instead of leaving it waiting.
#[test]
fn a_chunk_failing_mid_pipeline_leaves_no_output_and_names_the_chunk() {
    let dir = std::env::temp_dir().join(format!("oxiblosc-cli-midfail-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut input = vec![0u8; 8 << 20];
    for (i, b) in input.chunks_mut(BLOCK).enumerate() {
        block(i as u64, b);
    }
    let src = dir.join("in.bin");
    std::fs::write(&src, &input).unwrap();
    let os = std::ffi::OsStr::new;
    let no_temps = |what: &str| {
        let left: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains(".tmp"))
            .collect();
        assert!(left.is_empty(), "{what}: temporary files left: {left:?}");
    };
    let failed = |o: &std::process::Output, name: &str, chunk: &str, what: &str| {
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{what}: {err}");
        assert!(err.starts_with("oxiblosc: "), "{what}: {err:?}");
        assert!(err.contains(name), "{what}: {err:?} does not name {name}");
        assert!(err.contains(chunk), "{what}: {err:?} does not name {chunk}");
    };
    // Chunk `k` of `chunks` overwritten with 0xFF from its middle on for
    // 64 bytes (an LZ4 literal run longer than its block), header intact.
    let spoil = |good: &std::path::Path, chunk: &[u8], bad: &std::path::Path| {
        let mut bytes = std::fs::read(good).unwrap();
        let at = find_once(&bytes, chunk);
        let h = oxiblosc::ChunkHeader::parse(chunk).unwrap();
        assert!(h.cbytes > 1000, "chunk 6 is not a compressed chunk");
        for b in &mut bytes[at + h.cbytes / 2..at + h.cbytes / 2 + 64] {
            *b = 0xFF;
        }
        std::fs::write(bad, &bytes).unwrap();
    };

    // A frame of 8 chunks of 1 MiB, chunk 6 spoiled.
    let good = dir.join("good.b2frame");
    let o = run_in(
        &dir,
        &[
            os("compress"),
            os("--chunksize"),
            os("1M"),
            os("-c"),
            os("lz4"),
            os("-t"),
            os("4"),
            src.as_os_str(),
            good.as_os_str(),
        ],
        None,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut sc = oxiblosc::SChunk::open(&good).unwrap();
    assert_eq!(sc.nchunks(), 8);
    let chunk6 = sc.get_chunk(6).unwrap().into_owned();
    drop(sc);
    let bad = dir.join("bad.b2frame");
    spoil(&good, &chunk6, &bad);

    let out = dir.join("out.bin");
    for n in ["1", "2"] {
        // From the file, to a new output.
        let o = run_in(
            &dir,
            &[
                os("decompress"),
                os("-n"),
                os(n),
                bad.as_os_str(),
                out.as_os_str(),
            ],
            None,
        );
        failed(&o, "bad.b2frame", "(chunk 6)", "frame file");
        assert!(!out.exists(), "a partial output was left");
        no_temps("frame file");
        // Over an existing output (-f): left as it was.
        std::fs::write(&out, b"old contents").unwrap();
        let o = run_in(
            &dir,
            &[
                os("decompress"),
                os("-f"),
                os("-n"),
                os(n),
                bad.as_os_str(),
                out.as_os_str(),
            ],
            None,
        );
        failed(&o, "bad.b2frame", "(chunk 6)", "frame file over a file");
        assert_eq!(std::fs::read(&out).unwrap(), b"old contents");
        std::fs::remove_file(&out).unwrap();
        no_temps("frame file over a file");
        // From stdin: the temporary copy (in TMPDIR = dir) goes too.
        let o = run_in(
            &dir,
            &[os("decompress"), os("-n"), os(n), os("-"), out.as_os_str()],
            Some(&bad),
        );
        failed(&o, "stdin", "(chunk 6)", "frame from stdin");
        assert!(!out.exists(), "a partial output was left (stdin)");
        no_temps("frame from stdin");
    }
    // The good frame still decodes through the same path, to the input.
    let o = run_in(
        &dir,
        &[os("decompress"), good.as_os_str(), out.as_os_str()],
        None,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(std::fs::read(&out).unwrap() == input);
    std::fs::remove_file(&out).unwrap();

    // A Blosc1 chunk sequence (4 MiB chunks: 2 of them), chunk 1 spoiled.
    let seq = dir.join("good.b1");
    let o = run_in(
        &dir,
        &[
            os("compress"),
            os("--format"),
            os("blosc1"),
            os("-c"),
            os("lz4"),
            os("-t"),
            os("4"),
            src.as_os_str(),
            seq.as_os_str(),
        ],
        None,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let bytes = std::fs::read(&seq).unwrap();
    let first = oxiblosc::ChunkHeader::parse(&bytes).unwrap().cbytes;
    let bad_seq = dir.join("bad.b1");
    spoil(&seq, &bytes[first..], &bad_seq);
    let o = run_in(
        &dir,
        &[os("decompress"), bad_seq.as_os_str(), out.as_os_str()],
        None,
    );
    failed(&o, "bad.b1", "chunk 1", "Blosc1 chunk sequence");
    assert!(!out.exists(), "a partial output was left (chunk sequence)");
    no_temps("chunk sequence");

    // A writer that fails stops the pipeline: the error names the output.
    let o = run_in(
        &dir,
        &[
            os("decompress"),
            os("-f"),
            good.as_os_str(),
            os("/dev/full"),
        ],
        None,
    );
    failed(&o, "/dev/full", "No space left", "a failing writer");
    no_temps("a failing writer");
    let _ = std::fs::remove_dir_all(&dir);
}
