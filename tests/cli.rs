//! The `oxiblosc` command-line tool, run as a process: round trips of files
//! of several sizes for every codec and a few filter sets, stdin/stdout
//! piping, and failures (bad input, bad arguments) that exit non-zero with
//! one line on stderr and leave OUT untouched.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

const BIN: &str = env!("CARGO_BIN_EXE_oxiblosc");

/// Every codec.
const CODECS: [&str; 5] = ["blosclz", "lz4", "lz4hc", "zlib", "zstd"];

/// A directory of its own under the system temp dir, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        static N: AtomicUsize = AtomicUsize::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let p = std::env::temp_dir().join(format!("oxiblosc-cli-{}-{n}-{tag}", std::process::id()));
        let _ = fs::remove_dir_all(&p);
        fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
    fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
    /// The names of the files in the directory, sorted.
    fn listing(&self) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(&self.0)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// Run the tool with `args`, feeding `stdin` (empty when `None`).
/// Run the tool; `compress` and `decompress` get `-f` (the tests write
/// their outputs over and over; `run_exact` runs the arguments as given).
fn run<S: AsRef<std::ffi::OsStr>>(args: &[S], stdin: Option<&[u8]>) -> Output {
    let mut all: Vec<&std::ffi::OsStr> = args.iter().map(AsRef::as_ref).collect();
    if matches!(
        all.first().and_then(|a| a.to_str()),
        Some("compress" | "decompress")
    ) {
        all.insert(1, "-f".as_ref());
    }
    run_exact(&all, stdin)
}

fn run_exact<S: AsRef<std::ffi::OsStr>>(args: &[S], stdin: Option<&[u8]>) -> Output {
    let mut child = Command::new(BIN)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn oxiblosc");
    let input = stdin.map(<[u8]>::to_vec);
    let mut pipe = child.stdin.take().unwrap();
    // Feed stdin from a thread so a large input cannot deadlock against a
    // full stdout pipe.
    let feeder = std::thread::spawn(move || {
        if let Some(data) = input {
            // The tool may exit early (errors) and close its end.
            let _ = pipe.write_all(&data);
        }
    });
    let out = child.wait_with_output().unwrap();
    feeder.join().unwrap();
    out
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Success with nothing on stderr.
fn assert_ok(o: &Output, what: &str) {
    assert!(
        o.status.success(),
        "{what}: exit {:?}, stderr: {}",
        o.status.code(),
        stderr(o)
    );
    assert!(o.stderr.is_empty(), "{what}: stderr: {}", stderr(o));
}

/// Exit 1 with exactly one line `oxiblosc: ...` on stderr containing `needle`.
fn assert_fails(o: &Output, needle: &str, what: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(1), "{what}: stderr: {err}");
    assert!(
        err.starts_with("oxiblosc: ") && err.ends_with('\n') && err.lines().count() == 1,
        "{what}: not one `oxiblosc:` line: {err:?}"
    );
    assert!(
        err.contains(needle),
        "{what}: {err:?} does not mention {needle:?}"
    );
    assert!(o.stdout.is_empty(), "{what}: wrote to stdout");
}

/// Exit 2 (clap's usage error).
fn assert_usage(o: &Output, what: &str) {
    assert_eq!(o.status.code(), Some(2), "{what}: stderr: {}", stderr(o));
    assert!(!o.stderr.is_empty(), "{what}: no message");
}

/// Deterministic test data of `n` bytes: a smooth f64 series with a little
/// noise, interleaved with runs of text, so every filter has some work.
fn data(n: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(n + 64);
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut i = 0u64;
    while out.len() < n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        if i % 4096 < 3000 {
            // Whole numbers: f64s with mostly-zero mantissas, plus a little
            // noise in the low integer bits.
            let v = ((i as f64 * 0.001).sin() * 1000.0).round() + (x % 4) as f64;
            out.extend_from_slice(&v.to_le_bytes());
        } else {
            out.extend_from_slice(b"oxiblosc");
        }
        i += 1;
    }
    out.truncate(n);
    out
}

/// Compress `input` with `extra` arguments and decompress it again through
/// files in `dir`, as a chunk (`--format chunk`, file `in.b2`) and as a
/// frame (the default for files, `in.b2frame`); returns the chunk size.
fn file_round_trip(dir: &TempDir, input: &[u8], extra: &[&str], what: &str) -> usize {
    let n = file_round_trip_as(dir, input, extra, what, "chunk");
    file_round_trip_as(dir, input, extra, what, "frame");
    n
}

fn file_round_trip_as(
    dir: &TempDir,
    input: &[u8],
    extra: &[&str],
    what: &str,
    format: &str,
) -> usize {
    let what = &format!("{what} as a {format}");
    let src = dir.path("in.bin");
    let chunk = dir.path(if format == "chunk" {
        "in.b2"
    } else {
        "in.b2frame"
    });
    let back = dir.path("back.bin");
    fs::write(&src, input).unwrap();
    let mut args: Vec<&std::ffi::OsStr> = vec!["compress".as_ref()];
    if format == "chunk" {
        args.extend([
            std::ffi::OsStr::new("--format"),
            std::ffi::OsStr::new("chunk"),
        ]);
    }
    args.extend(extra.iter().map(std::ffi::OsStr::new));
    args.push(src.as_os_str());
    args.push(chunk.as_os_str());
    assert_ok(&run(&args, None), what);
    let o = run(
        &[
            "decompress".as_ref(),
            "-n".as_ref(),
            "2".as_ref(),
            chunk.as_os_str(),
            back.as_os_str(),
        ],
        None,
    );
    assert_ok(&o, what);
    let got = fs::read(&back).unwrap();
    assert!(got == input, "{what}: round trip differs");
    let n = fs::metadata(&chunk).unwrap().len() as usize;
    if format == "chunk" {
        assert!(n <= input.len() + 32, "{what}: chunk {n} > input + 32");
    } else {
        // The frame is read by the library too, chunk by chunk.
        let mut sc = oxiblosc::schunk::SChunk::open(&chunk).unwrap();
        let mut all = Vec::new();
        for i in 0..sc.nchunks() {
            all.extend(sc.decompress_chunk_vec(i).unwrap());
        }
        assert!(all == input, "{what}: the library reads other data");
    }
    n
}

#[test]
fn round_trips_small_and_medium_files() {
    let dir = TempDir::new("rt");
    let filter_sets: [&[&str]; 5] = [
        &[],
        &["--filter", "none"],
        &["--filter", "bitshuffle"],
        &["--filter", "delta", "--filter", "shuffle"],
        &["--filter", "shuffle", "--filter", "bytedelta"],
    ];
    let mut k = 0usize;
    for size in [0usize, 1, 31, 1_000_000] {
        let input = data(size);
        for codec in CODECS {
            for filters in filter_sets {
                // Vary the other parameters along the way.
                let clevel = ["1", "5", "9", "0", "3"][k % 5];
                let typesize = ["8", "4", "2", "1", "16", "3"][k % 6];
                let mut extra = vec!["-c", codec, "-l", clevel, "-t", typesize];
                extra.extend_from_slice(filters);
                if k.is_multiple_of(3) {
                    extra.extend_from_slice(&["-n", "2"]);
                }
                if k.is_multiple_of(7) {
                    extra.extend_from_slice(&["-b", "16K"]);
                }
                if k % 4 == 1 {
                    extra.extend_from_slice(&["--split", ["always", "never", "auto"][k % 3]]);
                }
                k += 1;
                let what = format!("{size} bytes {extra:?}");
                let n = file_round_trip(&dir, &input, &extra, &what);
                if size == 1_000_000 && clevel != "0" {
                    assert!(n < size / 2, "{what}: chunk of {n} bytes");
                }
            }
        }
    }
    // A dictionary, for the codecs that take one.
    let input = data(1_000_000);
    for codec in ["lz4", "lz4hc", "zstd"] {
        let what = format!("{codec} --dict");
        file_round_trip(&dir, &input, &["-c", codec, "--dict", "-b", "32K"], &what);
    }
    // Only the files the round trips wrote: no temporary files left behind.
    assert_eq!(dir.listing(), ["back.bin", "in.b2", "in.b2frame", "in.bin"]);
}

#[test]
fn round_trips_40_mb() {
    let dir = TempDir::new("big");
    let input = data(40_000_000 + 7);
    for (codec, clevel) in [
        ("blosclz", "5"),
        ("lz4", "5"),
        ("lz4hc", "3"),
        ("zlib", "3"),
        ("zstd", "3"),
    ] {
        let what = format!("40 MB {codec}");
        let n = file_round_trip(&dir, &input, &["-c", codec, "-l", clevel, "-n", "2"], &what);
        assert!(n < input.len() / 2, "{what}: chunk of {n} bytes");
    }
}

#[test]
fn defaults_are_the_library_defaults() {
    let dir = TempDir::new("default");
    file_round_trip(&dir, &data(100_000), &[], "defaults");
    let chunk = fs::read(dir.path("in.b2")).unwrap();
    let h = oxiblosc::ChunkHeader::parse(&chunk).unwrap();
    assert_eq!(h.udcodec, oxiblosc::Codec::BloscLz.id());
    assert!(!h.is_memcpyed());
    assert_eq!(h.typesize, 8);
    assert_eq!(h.filters, [0, 0, 0, 0, 0, 1], "shuffle in slot 5");
    assert_eq!(oxiblosc::decompress(&chunk).unwrap(), data(100_000));
}

#[test]
fn decompresses_reference_blosclz_chunk() {
    let data_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let name = "c005_blosclz_shuffle_ts2_cl9_lowent_int8_4099";
    let chunk = data_dir.join(format!("chunks/{name}.cdata"));
    let expected = fs::read(data_dir.join(format!("expected/{name}.bin"))).unwrap();
    let o = run(
        &["decompress".as_ref(), chunk.as_os_str(), "-".as_ref()],
        None,
    );
    assert_ok(&o, "reference chunk");
    assert_eq!(o.stdout, expected);
}

#[test]
fn stdin_and_stdout() {
    let dir = TempDir::new("pipe");
    let input = data(3_000_001);
    // stdin -> stdout both ways.
    let c = run(
        &["compress", "-c", "lz4", "-t", "4", "-", "-"],
        Some(&input),
    );
    assert_ok(&c, "compress - -");
    assert!(c.stdout.len() < input.len());
    let d = run(&["decompress", "-", "-"], Some(&c.stdout));
    assert_ok(&d, "decompress - -");
    assert!(d.stdout == input, "pipe round trip differs");
    // Empty stdin.
    let c0 = run(&["compress", "-", "-"], Some(b""));
    assert_ok(&c0, "compress empty stdin");
    let d0 = run(&["decompress", "-", "-"], Some(&c0.stdout));
    assert_ok(&d0, "decompress empty chunk");
    assert!(d0.stdout.is_empty());
    // file -> stdout, stdin -> file.
    let src = dir.path("in.bin");
    let back = dir.path("back.bin");
    fs::write(&src, &input).unwrap();
    let c = run(
        &[
            "compress".as_ref(),
            "-c".as_ref(),
            "zstd".as_ref(),
            src.as_os_str(),
            "-".as_ref(),
        ],
        None,
    );
    assert_ok(&c, "compress file -");
    let d = run(
        &["decompress".as_ref(), "-".as_ref(), back.as_os_str()],
        Some(&c.stdout),
    );
    assert_ok(&d, "decompress - file");
    assert!(d.stdout.is_empty());
    assert!(fs::read(&back).unwrap() == input);
}

#[test]
fn lossy_trunc_prec() {
    let dir = TempDir::new("trunc");
    let floats: Vec<f32> = (0..250_000)
        .map(|i| (i as f32 * 0.01).sin() * 3.7)
        .collect();
    let input: Vec<u8> = floats.iter().flat_map(|f| f.to_le_bytes()).collect();
    let src = dir.path("in.bin");
    let chunk = dir.path("in.b2");
    let back = dir.path("back.bin");
    fs::write(&src, &input).unwrap();
    // 10 mantissa bits kept: the low 23 - 10 = 13 bits are cleared.
    let expected: Vec<u8> = floats
        .iter()
        .flat_map(|f| (f.to_bits() & !((1u32 << 13) - 1)).to_le_bytes())
        .collect();
    assert!(expected != input);
    for (codec, extra) in [("zstd", None), ("lz4", Some("shuffle")), ("blosclz", None)] {
        let mut args: Vec<&std::ffi::OsStr> = vec![
            "compress".as_ref(),
            "-c".as_ref(),
            codec.as_ref(),
            "--filter".as_ref(),
            "trunc_prec:10".as_ref(),
            "-t".as_ref(),
            "4".as_ref(),
        ];
        if let Some(f) = extra {
            args.extend([std::ffi::OsStr::new("--filter"), std::ffi::OsStr::new(f)]);
        }
        args.extend([src.as_os_str(), chunk.as_os_str()]);
        assert_ok(&run(&args, None), "trunc_prec compress");
        let o = run(
            &["decompress".as_ref(), chunk.as_os_str(), back.as_os_str()],
            None,
        );
        assert_ok(&o, "trunc_prec decompress");
        assert!(
            fs::read(&back).unwrap() == expected,
            "{codec}: not the truncated data"
        );
    }
}

/// Run a failing command whose OUT (`out`) holds known content beforehand;
/// it must stay as it was, with no temporary file left beside it.
fn check_fails_untouched(
    dir: &TempDir,
    args: &[&std::ffi::OsStr],
    stdin: Option<&[u8]>,
    needle: &str,
    what: &str,
) {
    let before = dir.listing();
    let out = dir.path("out");
    let o = run(args, stdin);
    assert_fails(&o, needle, what);
    assert_eq!(fs::read(&out).unwrap(), b"precious", "{what}: OUT changed");
    assert_eq!(dir.listing(), before, "{what}: files left behind");
}

#[test]
fn bad_input_fails_cleanly() {
    let dir = TempDir::new("bad");
    let out = dir.path("out");
    fs::write(&out, b"precious").unwrap();
    let garbage = dir.path("garbage");
    fs::write(
        &garbage,
        "this is a text file, certainly not a Blosc chunk\n".repeat(20),
    )
    .unwrap();
    check_fails_untouched(
        &dir,
        &["decompress".as_ref(), garbage.as_os_str(), out.as_os_str()],
        None,
        "is not a Blosc chunk",
        "garbage",
    );

    // Garbage on stdin.
    check_fails_untouched(
        &dir,
        &["decompress".as_ref(), "-".as_ref(), out.as_os_str()],
        Some(b"garbage garbage garbage garbage garbage"),
        "stdin is not a Blosc chunk",
        "garbage stdin",
    );

    // A real chunk, truncated at many points, and with bytes appended.
    let input = data(200_000);
    let c = run(
        &["compress", "-c", "zstd", "-b", "16K", "-", "-"],
        Some(&input),
    );
    assert_ok(&c, "compress");
    let chunk = c.stdout;
    let cut = dir.path("cut");
    for len in [0, 1, 15, 16, 31, 32, 100, chunk.len() / 2, chunk.len() - 1] {
        fs::write(&cut, &chunk[..len]).unwrap();
        let what = format!("truncated to {len}");
        check_fails_untouched(
            &dir,
            &["decompress".as_ref(), cut.as_os_str(), out.as_os_str()],
            None,
            "not a Blosc chunk",
            &what,
        );
    }
    let mut long = chunk.clone();
    long.extend_from_slice(b"trailing");
    fs::write(&cut, &long).unwrap();
    check_fails_untouched(
        &dir,
        &["decompress".as_ref(), cut.as_os_str(), out.as_os_str()],
        None,
        "not a Blosc chunk",
        "trailing bytes",
    );
    // A block-start table pointing outside the chunk.
    let mut bad = chunk.clone();
    bad[32..36].copy_from_slice(&0x7fff_fff0_i32.to_le_bytes());
    fs::write(&cut, &bad).unwrap();
    check_fails_untouched(
        &dir,
        &["decompress".as_ref(), cut.as_os_str(), out.as_os_str()],
        None,
        "cannot decompress",
        "corrupt block-start table",
    );
    // Damaged block data may go unnoticed (zstd frames carry no checksum
    // here) but must never crash the tool.
    for (i, at) in [40, 100, chunk.len() / 3, chunk.len() - 150]
        .into_iter()
        .enumerate()
    {
        let mut bad = chunk.clone();
        for b in &mut bad[at..at + 50] {
            *b ^= 0x5a ^ i as u8;
        }
        let o = run(&["decompress", "-", "-"], Some(&bad));
        let code = o.status.code();
        assert!(
            code == Some(0) || code == Some(1),
            "damage at {at}: {code:?} {}",
            stderr(&o)
        );
        if code == Some(1) {
            assert_fails(&o, "", "damaged block");
        }
    }
    // A damaged frame fails the same way.
    let frame = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/frames/f02_lz4hc_5chunks_ragged.b2frame");
    let bytes = fs::read(&frame).unwrap();
    for len in [20, 100, bytes.len() / 2, bytes.len() - 1] {
        fs::write(&cut, &bytes[..len]).unwrap();
        check_fails_untouched(
            &dir,
            &["decompress".as_ref(), cut.as_os_str(), out.as_os_str()],
            None,
            "frame",
            &format!("frame truncated to {len}"),
        );
    }
    // Missing input, a directory as input or output.
    let missing = dir.path("missing");
    check_fails_untouched(
        &dir,
        &["decompress".as_ref(), missing.as_os_str(), out.as_os_str()],
        None,
        "missing",
        "missing input",
    );
    check_fails_untouched(
        &dir,
        &["compress".as_ref(), missing.as_os_str(), out.as_os_str()],
        None,
        "missing",
        "missing input (compress)",
    );
    check_fails_untouched(
        &dir,
        &["compress".as_ref(), dir.0.as_os_str(), out.as_os_str()],
        None,
        "is a directory",
        "directory input",
    );
    let o = run(
        &["compress".as_ref(), out.as_os_str(), dir.0.as_os_str()],
        None,
    );
    assert_fails(&o, "is a directory", "directory output");
}

#[test]
fn input_over_one_chunk_round_trips() {
    use std::io::Read;
    let dir = TempDir::new("huge");
    // A sparse file one byte over what one chunk holds: two chunks.
    let huge = dir.path("huge");
    let f = fs::File::create(&huge).unwrap();
    let len = oxiblosc::MAX_BUFFERSIZE as u64 + 1;
    f.set_len(len).unwrap();
    drop(f);
    let packed = dir.path("packed");
    assert_ok(
        &run(
            &[
                "compress".as_ref(),
                "--format".as_ref(),
                "chunk".as_ref(),
                "-t".as_ref(),
                "1".as_ref(),
                huge.as_os_str(),
                packed.as_os_str(),
            ],
            None,
        ),
        "compress over one chunk",
    );
    // Self-delimiting chunks of at most the stream chunk size (memory stays
    // bounded), each readable on its own.
    let bytes = fs::read(&packed).unwrap();
    let (mut at, mut nbytes, mut n) = (0, 0u64, 0);
    while at < bytes.len() {
        let h = oxiblosc::ChunkHeader::parse(&bytes[at..]).unwrap();
        assert!(h.nbytes <= oxiblosc::stream::DEFAULT_CHUNKSIZE);
        at += h.cbytes;
        nbytes += h.nbytes as u64;
        n += 1;
    }
    assert_eq!(at, bytes.len());
    assert_eq!(nbytes, len);
    assert!(n > 1);
    // Decode to stdout and check the stream as it comes: 2 GiB of output
    // need not fit on the test machine's disk.
    let mut child = Command::new(BIN)
        .args(["decompress".as_ref(), packed.as_os_str(), "-".as_ref()])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn oxiblosc");
    let mut out = child.stdout.take().unwrap();
    let mut buf = vec![0u8; 1 << 20];
    let mut total = 0u64;
    loop {
        let n = out.read(&mut buf).unwrap();
        if n == 0 {
            break;
        }
        assert!(buf[..n].iter().all(|&b| b == 0), "decoded data differs");
        total += n as u64;
    }
    let o = child.wait_with_output().unwrap();
    assert_ok(&o, "decompress over one chunk");
    assert_eq!(total, len);
}

#[test]
fn bad_arguments_exit_2() {
    let dir = TempDir::new("args");
    let src = dir.path("in.bin");
    let out = dir.path("out");
    fs::write(&src, data(1000)).unwrap();
    fs::write(&out, b"precious").unwrap();
    let (s, o) = (src.to_str().unwrap(), out.to_str().unwrap());
    let cases: &[&[&str]] = &[
        &[],
        &["frobnicate", s, o],
        &["compress"],
        &["compress", s, o, "extra"],
        &["compress", "-c", "snappy", s, o],
        &["compress", "-l", "10", s, o],
        &["compress", "-l", "-1", s, o],
        &["compress", "-t", "0", s, o],
        &["compress", "-t", "four", s, o],
        &["compress", "--filter", "bogus", s, o],
        &["compress", "--filter", "shuffle:3", s, o],
        &["compress", "--filter", "trunc_prec", "-t", "4", s, o],
        &["compress", "--filter", "trunc_prec:40", "-t", "4", s, o],
        &["compress", "--filter", "trunc_prec:10", "-t", "2", s, o],
        &["compress", "--filter", "none", "--filter", "shuffle", s, o],
        &[
            "compress", "--filter", "delta", "--filter", "delta", "--filter", "delta", "--filter",
            "delta", "--filter", "delta", "--filter", "delta", "--filter", "delta", s, o,
        ],
        &["compress", "--format", "chunk", "--chunksize", "1M", s, o],
        &["compress", "--format", "chunk", "--meta", "a=b", s, o],
        &["compress", "--format", "sframe", s, "-"],
        &["compress", "--chunksize", "0", s, o],
        &["compress", "--chunksize", "3G", s, o],
        &["compress", "--meta", "novalue", s, o],
        &["compress", "--meta", "=value", s, o],
        &["compress", "--meta", &"n".repeat(32), s, o],
        &["info"],
        &["info", "--bogus", s],
        &["compress", "--format", "zip", s, o],
        &["compress", "--split", "sideways", s, o],
        &["compress", "-b", "12X", s, o],
        &["compress", "-b", "1G", s, o],
        &["compress", "-n", "0", s, o],
        &["compress", "-c", "zlib", "--dict", s, o],
        &["decompress", "-n", "0", s, o],
        &["decompress", "--codec", "zstd", s, o],
    ];
    for args in cases {
        let what = format!("{args:?}");
        assert_usage(&run(args, None), &what);
        assert_eq!(fs::read(&out).unwrap(), b"precious", "{what}: OUT changed");
    }
    assert_eq!(dir.listing(), ["in.bin", "out"]);
    // --help and --version succeed.
    for args in [&["--help"][..], &["--version"], &["compress", "--help"]] {
        let r = run(args, None);
        assert!(r.status.success(), "{args:?}");
        assert!(!r.stdout.is_empty());
    }
    let help = String::from_utf8(run(&["compress", "--help"], None).stdout).unwrap();
    assert!(help.contains("[default: blosclz]"), "{help}");
}

#[cfg(unix)]
#[test]
fn replaced_out_keeps_mode_and_special_files_work() {
    use std::os::unix::fs::PermissionsExt;
    let dir = TempDir::new("mode");
    let src = dir.path("in.bin");
    let out = dir.path("out");
    fs::write(&src, data(5000)).unwrap();
    fs::write(&out, b"old").unwrap();
    fs::set_permissions(&out, fs::Permissions::from_mode(0o640)).unwrap();
    let o = run(
        &[
            "compress".as_ref(),
            "--format".as_ref(),
            "chunk".as_ref(),
            src.as_os_str(),
            out.as_os_str(),
        ],
        None,
    );
    assert_ok(&o, "compress over existing OUT");
    assert_eq!(
        fs::metadata(&out).unwrap().permissions().mode() & 0o777,
        0o640
    );
    assert_eq!(
        oxiblosc::decompress(&fs::read(&out).unwrap()).unwrap(),
        data(5000)
    );
    // A symlink OUT: the file it points to is replaced, the link stays.
    let link = dir.path("link");
    std::os::unix::fs::symlink("out", &link).unwrap();
    // (Not from `out` itself: that would write over the input.)
    let copy = dir.path("copy.b2");
    fs::copy(&out, &copy).unwrap();
    let o = run(
        &["decompress".as_ref(), copy.as_os_str(), link.as_os_str()],
        None,
    );
    assert_ok(&o, "decompress through a symlink");
    assert!(
        fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(fs::read(&out).unwrap(), data(5000));
    // Character devices are written in place.
    let o = run(
        &["compress".as_ref(), src.as_os_str(), "/dev/null".as_ref()],
        None,
    );
    assert_ok(&o, "compress to /dev/null");
    assert_eq!(dir.listing(), ["copy.b2", "in.bin", "link", "out"]);
}

/// Frames and sparse frames from the command line: metalayers, chunk size,
/// replacing an existing OUT, C-written vectors, `info` in text and JSON,
/// and the real C-Blosc2 reading what the tool wrote.
#[test]
fn frames_sframes_and_info() {
    let dir = TempDir::new("frames");
    let input = data(2_500_003);
    let src = dir.path("in.bin");
    fs::write(&src, &input).unwrap();
    let frame = dir.path("out.b2frame");
    let sframe = dir.path("out.sframe");
    let back = dir.path("back.bin");
    let o = run(
        &[
            "compress".as_ref(),
            "-c".as_ref(),
            "zstd".as_ref(),
            "-t".as_ref(),
            "8".as_ref(),
            "--chunksize".as_ref(),
            "1M".as_ref(),
            "--meta".as_ref(),
            "author=oxiblosc".as_ref(),
            "--meta".as_ref(),
            "note=a = b".as_ref(),
            src.as_os_str(),
            frame.as_os_str(),
        ],
        None,
    );
    assert_ok(&o, "compress to a frame");
    let mut sc = oxiblosc::schunk::SChunk::open(&frame).unwrap();
    assert_eq!(sc.nchunks(), 3, "2.5 MB in 1 MiB chunks");
    // No reserve left after the last chunk: at most the empty frame's
    // trailer remains as a hole.
    assert!(sc.dead_bytes() <= 64, "{} dead bytes", sc.dead_bytes());
    assert_eq!(sc.chunksize(), Some(1 << 20));
    assert_eq!(sc.typesize(), 8);
    assert_eq!(sc.nbytes(), input.len() as u64);
    assert_eq!(sc.meta_get("author"), Some(&b"\xa8oxiblosc"[..]));
    assert_eq!(sc.meta_get("note"), Some(&b"\xa5a = b"[..]));
    assert_eq!(
        sc.get_slice(0, input.len() as u64).unwrap(),
        input,
        "frame content"
    );
    drop(sc);
    // A sparse frame, written twice: the second replaces the first.
    for codec in ["lz4", "blosclz"] {
        let o = run(
            &[
                "compress".as_ref(),
                "--format".as_ref(),
                "sframe".as_ref(),
                "-c".as_ref(),
                codec.as_ref(),
                "--chunksize".as_ref(),
                "700K".as_ref(),
                src.as_os_str(),
                sframe.as_os_str(),
            ],
            None,
        );
        assert_ok(&o, "compress to an sframe");
    }
    let mut files: Vec<String> = fs::read_dir(&sframe)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(
        files,
        [
            "00000000.chunk",
            "00000001.chunk",
            "00000002.chunk",
            "00000003.chunk",
            "chunks.b2frame"
        ]
    );
    let sc = oxiblosc::schunk::SChunk::open(&sframe).unwrap();
    assert_eq!(sc.frame_header().compcode(), oxiblosc::Codec::BloscLz.id());
    drop(sc);
    for (what, path) in [("frame", &frame), ("sframe", &sframe)] {
        let o = run(
            &["decompress".as_ref(), path.as_os_str(), back.as_os_str()],
            None,
        );
        assert_ok(&o, what);
        assert!(fs::read(&back).unwrap() == input, "{what}: round trip");
    }
    // A frame through stdout and stdin.
    let c = run(
        &["compress", "--format", "frame", "-t", "4", "-", "-"],
        Some(&input),
    );
    assert_ok(&c, "frame to stdout");
    assert_eq!(&c.stdout[2..10], b"b2frame\0");
    let d = run(&["decompress", "-", "-"], Some(&c.stdout));
    assert_ok(&d, "frame from stdin");
    assert!(d.stdout == input);
    // An empty input is a frame without chunks.
    let empty = dir.path("empty");
    fs::write(&empty, b"").unwrap();
    let ef = dir.path("empty.b2frame");
    assert_ok(
        &run(
            &["compress".as_ref(), empty.as_os_str(), ef.as_os_str()],
            None,
        ),
        "empty",
    );
    assert_eq!(
        oxiblosc::schunk::SChunk::open(&ef).unwrap().nchunks(),
        0,
        "empty frame"
    );
    let d = run(&["decompress".as_ref(), ef.as_os_str(), "-".as_ref()], None);
    assert_ok(&d, "empty frame decompress");
    assert!(d.stdout.is_empty());

    // C-written frames and sparse frames decompress to what the library reads.
    let data_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    for name in [
        "frames/f06_meta_vlmeta.b2frame",
        "frames/f10_special_updates_reordered.b2frame",
        "frames/f11_fill_special_zero.b2frame",
        "frames/f15_varlen_chunks.b2frame",
        "frames/f18_zstd_use_dict.b2frame",
        "sframes/s01_edited_with_zero_chunk",
    ] {
        let path = data_dir.join(name);
        let mut sc = oxiblosc::schunk::SChunk::open(&path).unwrap();
        let mut want = Vec::new();
        for i in 0..sc.nchunks() {
            want.extend(sc.decompress_chunk_vec(i).unwrap());
        }
        let o = run(
            &["decompress".as_ref(), path.as_os_str(), "-".as_ref()],
            None,
        );
        assert_ok(&o, name);
        assert!(o.stdout == want, "{name}: other bytes than the library's");

        // info: text names every chunk and metalayer; JSON parses and agrees.
        let t = run(&["info".as_ref(), path.as_os_str()], None);
        assert_ok(&t, name);
        let text = String::from_utf8(t.stdout).unwrap();
        for m in sc.metalayers() {
            assert!(text.contains(&m.name), "{name}: info misses {}", m.name);
        }
        for m in sc.vlmeta_names() {
            assert!(text.contains(m), "{name}: info misses vlmeta {m}");
        }
        let j = run(
            &["info".as_ref(), "--json".as_ref(), path.as_os_str()],
            None,
        );
        assert_ok(&j, name);
        let v: serde_json::Value = serde_json::from_slice(&j.stdout)
            .unwrap_or_else(|e| panic!("{name}: info --json is not JSON: {e}"));
        assert_eq!(v["nchunks"], sc.nchunks() as u64, "{name}");
        assert_eq!(v["nbytes"], sc.nbytes(), "{name}");
        // Each member stands for `count` chunks from `index` on: together
        // they are every chunk, in order, each as the library reads it.
        let mut i = 0;
        for c in v["chunks"].as_array().unwrap() {
            assert_eq!(c["index"], i as u64, "{name}");
            let count = c["count"].as_u64().unwrap() as usize;
            assert!(count >= 1, "{name} chunk {i}");
            for k in i..i + count {
                let info = sc.chunk_info(k).unwrap();
                assert_eq!(c["nbytes"], info.nbytes as u64, "{name} chunk {k}");
                assert_eq!(c["cbytes"], info.cbytes as u64, "{name} chunk {k}");
                assert_eq!(c["special"].is_null(), info.special.is_none(), "{name} {k}");
            }
            i += count;
        }
        assert_eq!(i, sc.nchunks(), "{name}");
        assert_eq!(
            v["metalayers"].as_array().unwrap().len(),
            sc.metalayers().len()
        );
        assert_eq!(
            v["vlmetalayers"].as_array().unwrap().len(),
            sc.vlmeta_names().len()
        );
    }
    // f10 has special chunks: info says which.
    let j = run(
        &[
            "info".as_ref(),
            "--json".as_ref(),
            data_dir
                .join("frames/f10_special_updates_reordered.b2frame")
                .as_os_str(),
        ],
        None,
    );
    let v: serde_json::Value = serde_json::from_slice(&j.stdout).unwrap();
    assert!(
        v["chunks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| !c["special"].is_null()),
        "f10 has special chunks"
    );
    // C-Blosc2's fill_special writes 11 zero chunks as a one-value index:
    // info lists the 10 whole chunks as one run and the shorter last one on
    // its own row.
    let f11 = data_dir.join("frames/f11_fill_special_zero.b2frame");
    let t = run(&["info".as_ref(), f11.as_os_str()], None);
    assert_ok(&t, "f11");
    let text = String::from_utf8(t.stdout).unwrap();
    let rows: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("chunk "))
        .skip(1)
        .collect();
    assert_eq!(
        rows,
        [
            "         0        40000            0     0.00  zeros",
            "       ...  chunks 0 to 9 (10) share this index entry",
            "        10           12            0     0.00  zeros",
        ],
        "{text}"
    );
    let j = run(&["info".as_ref(), "--json".as_ref(), f11.as_os_str()], None);
    let v: serde_json::Value = serde_json::from_slice(&j.stdout).unwrap();
    let runs: Vec<(u64, u64, u64)> = v["chunks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["index"].as_u64().unwrap(),
                c["count"].as_u64().unwrap(),
                c["nbytes"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(runs, [(0, 10, 40000), (10, 1, 12)]);
    // info on a chunk file lists its chunks.
    let chunk = dir.path("in.b2");
    assert_ok(
        &run(
            &[
                "compress".as_ref(),
                "--format".as_ref(),
                "chunk".as_ref(),
                src.as_os_str(),
                chunk.as_os_str(),
            ],
            None,
        ),
        "chunk",
    );
    let j = run(
        &["info".as_ref(), "--json".as_ref(), chunk.as_os_str()],
        None,
    );
    assert_ok(&j, "info chunk");
    let v: serde_json::Value = serde_json::from_slice(&j.stdout).unwrap();
    assert_eq!(v["kind"], "chunks");
    assert_eq!(v["chunks"][0]["nbytes"], input.len() as u64);
    // info on anything else fails cleanly.
    let o = run(&["info".as_ref(), src.as_os_str()], None);
    assert_fails(&o, "neither a frame nor a Blosc chunk", "info on raw data");

    // A frame over an existing file keeps the file's mode; a directory as
    // OUT for a frame, or a file as OUT for an sframe, is refused untouched.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&frame, fs::Permissions::from_mode(0o600)).unwrap();
        assert_ok(
            &run(
                &["compress".as_ref(), src.as_os_str(), frame.as_os_str()],
                None,
            ),
            "replace a frame",
        );
        assert_eq!(
            fs::metadata(&frame).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }
    let o = run(
        &["compress".as_ref(), src.as_os_str(), sframe.as_os_str()],
        None,
    );
    assert_fails(&o, "is a directory", "frame onto a directory");
    let before = fs::read(&frame).unwrap();
    let o = run(
        &[
            "compress".as_ref(),
            "--format".as_ref(),
            "sframe".as_ref(),
            src.as_os_str(),
            frame.as_os_str(),
        ],
        None,
    );
    assert_fails(&o, "is a file", "sframe onto a file");
    assert!(fs::read(&frame).unwrap() == before, "OUT changed");
    // No temporary files left behind.
    let mut left: Vec<String> = dir.listing();
    left.retain(|n| n.contains("oxiblosc-"));
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn blosc1_chunks() {
    use oxiblosc::{CParams, ChunkFormat, Codec, Filter};
    let dir = TempDir::new("blosc1");
    let input = data(300_001);
    let src = dir.path("in.bin");
    fs::write(&src, &input).unwrap();
    /// CLI arguments, then the parameters they stand for.
    type Case<'a> = (&'a [&'a str], Codec, u8, usize, &'a [Filter]);
    let cases: [Case; 4] = [
        (&[], CParams::default().codec, 5, 8, &[Filter::Shuffle]),
        (
            &["-c", "lz4", "-l", "9", "-t", "4", "--filter", "bitshuffle"],
            Codec::Lz4,
            9,
            4,
            &[Filter::BitShuffle],
        ),
        (
            &["-c", "zstd", "-l", "3", "-t", "2", "--filter", "none"],
            Codec::Zstd,
            3,
            2,
            &[],
        ),
        (
            &["-c", "lz4hc", "-t", "300", "-b", "64K", "-n", "2"],
            Codec::Lz4Hc,
            5,
            300,
            &[Filter::Shuffle],
        ),
    ];
    for (extra, codec, clevel, ts, filters) in cases {
        let what = format!("compress --format blosc1 {extra:?}");
        let out = dir.path("out.b1");
        let _ = fs::remove_file(&out);
        let mut args = vec!["compress", "--format", "blosc1"];
        args.extend_from_slice(extra);
        let (s, o) = (src.to_str().unwrap(), out.to_str().unwrap());
        args.extend([s, o]);
        assert_ok(&run(&args, None), &what);
        let chunk = fs::read(&out).unwrap();
        assert_eq!(chunk[0], 2, "{what}: format version 2");
        let mut p = CParams::default()
            .format(ChunkFormat::Blosc1)
            .codec(codec)
            .clevel(clevel)
            .typesize(ts)
            .filters(filters);
        if extra.contains(&"-b") {
            p = p.blocksize(64 * 1024);
        }
        assert_eq!(
            chunk,
            oxiblosc::compress(&input, &p).unwrap(),
            "{what}: the library's chunk"
        );
        let back = dir.path("back.bin");
        assert_ok(
            &run(&["decompress", o, back.to_str().unwrap()], None),
            &what,
        );
        assert!(fs::read(&back).unwrap() == input, "{what}: round trip");
    }
    // Filters Blosc1 cannot store are usage errors.
    let o = run(
        &[
            "compress",
            "--format",
            "blosc1",
            "--filter",
            "delta",
            src.to_str().unwrap(),
            dir.path("x").to_str().unwrap(),
        ],
        None,
    );
    assert_usage(&o, "blosc1 with delta");
    assert!(stderr(&o).contains("Blosc1"), "{}", stderr(&o));
}

#[test]
fn bloscpack_and_packed_files() {
    let dir = TempDir::new("blp");
    let input = data(2_500_003);
    let src = dir.path("in.bin");
    fs::write(&src, &input).unwrap();
    let s = src.to_str().unwrap();
    for checksum in [
        "none", "adler32", "crc32", "md5", "sha1", "sha224", "sha256", "sha384", "sha512",
    ] {
        let what = format!("blp with {checksum}");
        let out = dir.path(&format!("{checksum}.blp"));
        let o = out.to_str().unwrap();
        let args = [
            "compress",
            "--format",
            "blp",
            "--checksum",
            checksum,
            "--chunksize",
            "1M",
            "-c",
            "lz4",
            s,
            o,
        ];
        assert_ok(&run(&args, None), &what);
        let blp = fs::read(&out).unwrap();
        let r = oxiblosc::bloscpack::Reader::new(&blp[..]).unwrap();
        assert!(
            r.header().checksum.name().eq_ignore_ascii_case(checksum),
            "{what}"
        );
        assert_eq!(r.nchunks(), 3, "{what}");
        assert_eq!(r.decompress_all().unwrap(), input, "{what}");
        let back = dir.path("back.bin");
        let b = back.to_str().unwrap();
        assert_ok(&run(&["decompress", o, b], None), &what);
        assert!(fs::read(&back).unwrap() == input, "{what}: round trip");
        let info = run(&["info", o], None);
        assert_ok(&info, &what);
        let text = String::from_utf8_lossy(&info.stdout);
        assert!(text.contains("Bloscpack file, format version 3"), "{text}");
        assert!(text.contains(&format!("checksum {checksum}")), "{text}");
        assert!(text.contains("offsets: ["), "{text}");
    }
    // A flipped byte inside a chunk is caught by the checksum.
    let out = dir.path("sha256.blp");
    let mut blp = fs::read(&out).unwrap();
    let n = blp.len();
    blp[n / 2] ^= 0x40;
    let bad = dir.path("bad.blp");
    fs::write(&bad, &blp).unwrap();
    let o = run(
        &[
            "decompress",
            bad.to_str().unwrap(),
            dir.path("x").to_str().unwrap(),
        ],
        None,
    );
    assert_fails(&o, "checksum", "corrupt .blp");

    // Packed super-chunks: the format is named for every command.
    let pk = dir.path("in.packed");
    let p = pk.to_str().unwrap();
    let args = [
        "compress",
        "--format",
        "packed",
        "-c",
        "zstd",
        "-t",
        "4",
        "--chunksize",
        "512K",
        s,
        p,
    ];
    assert_ok(&run(&args, None), "packed");
    let bytes = fs::read(&pk).unwrap();
    assert_eq!(oxiblosc::packed::unpack(&bytes).unwrap(), input);
    assert_eq!(
        oxiblosc::packed::PackedHeader::parse(&bytes)
            .unwrap()
            .nchunks,
        5
    );
    let back = dir.path("back.bin");
    let b = back.to_str().unwrap();
    assert_ok(
        &run(&["decompress", "--format", "packed", p, b], None),
        "packed",
    );
    assert!(fs::read(&back).unwrap() == input, "packed round trip");
    let info = run(&["info", "--format", "packed", p], None);
    assert_ok(&info, "packed info");
    let text = String::from_utf8_lossy(&info.stdout);
    assert!(
        text.contains("packed super-chunk") && text.contains("5 chunks"),
        "{text}"
    );
    // Without --format packed it is not recognised (it has no magic).
    assert!(!run(&["decompress", p, b], None).status.success());
}

#[test]
fn a_bad_kernel_choice_is_an_error_not_a_panic() {
    let dir = TempDir::new("isa");
    let src = dir.path("in.bin");
    fs::write(&src, data(100_000)).unwrap();
    let out = Command::new(BIN)
        .env("OXIBLOSC_KERNELS", "no-such-isa")
        .args(["compress", "--format", "chunk"])
        .arg(&src)
        .arg(dir.path("out.b2"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("no-such-isa") && !stderr(&out).contains("panicked"),
        "{}",
        stderr(&out)
    );
    assert!(!dir.path("out.b2").exists());
}

#[test]
fn conventions_default_out_no_overwrite_never_the_input() {
    let dir = TempDir::new("conv");
    let input = data(200_000);
    let src = dir.path("data.bin");
    fs::write(&src, &input).unwrap();
    let s = src.to_str().unwrap();
    // No OUT: IN.b2frame, and decompress strips the extension again.
    assert_ok(&run_exact(&["compress", s], None), "default OUT");
    let frame = dir.path("data.bin.b2frame");
    assert!(frame.exists(), "{:?}", dir.listing());
    // An existing OUT is refused without -f, and left untouched.
    let before = fs::read(&frame).unwrap();
    let o = run_exact(&["compress", "-l", "9", s], None);
    assert_fails(&o, "already exists; use -f", "existing OUT");
    assert_eq!(fs::read(&frame).unwrap(), before);
    // With -f it is replaced.
    assert_ok(&run_exact(&["compress", "-f", "-l", "9", s], None), "-f");
    fs::remove_file(&src).unwrap();
    assert_ok(
        &run_exact(&["decompress", frame.to_str().unwrap()], None),
        "default decompress OUT",
    );
    assert!(
        fs::read(&src).unwrap() == input,
        "round trip through defaults"
    );
    // Other formats get their own extension.
    for (fmt, ext) in [
        ("chunk", "b2"),
        ("blosc1", "b1"),
        ("blp", "blp"),
        ("packed", "packed"),
    ] {
        assert_ok(&run_exact(&["compress", "--format", fmt, s], None), fmt);
        assert!(dir.path(&format!("data.bin.{ext}")).exists(), "{fmt}");
    }
    // Never over the input, not even with -f (also through a link).
    let o = run_exact(&["compress", "-f", s, s], None);
    assert_fails(&o, "is the input", "compress x x");
    assert!(fs::read(&src).unwrap() == input, "input intact");
    let link = dir.path("alias");
    std::os::unix::fs::symlink("data.bin", &link).unwrap();
    let o = run_exact(
        &[
            "compress",
            "-f",
            "--format",
            "chunk",
            s,
            link.to_str().unwrap(),
        ],
        None,
    );
    assert_fails(&o, "is the input", "compress x link-to-x");
    assert!(fs::read(&src).unwrap() == input, "input intact");
    // -v prints one summary line; -q and the default (not a terminal) print nothing.
    let o = run_exact(&["compress", "-f", "-v", s], None);
    assert!(o.status.success());
    let err = stderr(&o);
    assert!(
        err.lines().count() == 1 && err.contains("->") && err.contains("(ratio "),
        "{err:?}"
    );
    assert_ok(&run_exact(&["compress", "-f", "-q", s], None), "-q");
    // --dtype sets the type size; a conflicting -t is a usage error.
    let out = dir.path("typed.b2");
    let o = run_exact(
        &[
            "compress",
            "--format",
            "chunk",
            "--dtype",
            "<f4",
            s,
            out.to_str().unwrap(),
        ],
        None,
    );
    assert_ok(&o, "--dtype");
    assert_eq!(fs::read(&out).unwrap()[3], 4, "typesize from <f4");
    let o = run_exact(
        &[
            "compress",
            "-f",
            "--dtype",
            "<c16",
            "-t",
            "4",
            s,
            out.to_str().unwrap(),
        ],
        None,
    );
    assert_usage(&o, "--dtype vs -t");
    assert_usage(
        &run_exact(
            &["compress", "--dtype", "q9", s, out.to_str().unwrap()],
            None,
        ),
        "bad dtype",
    );
    // No temporary file is left anywhere.
    assert!(
        dir.listing().iter().all(|n| !n.contains(".tmp")),
        "{:?}",
        dir.listing()
    );
}

/// SIGTERM in the middle of a run leaves no temporary file behind.
#[test]
fn an_interrupted_run_leaves_no_temporary_file() {
    let dir = TempDir::new("sig");
    let fifo = dir.path("in.fifo");
    let st = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(st.success());
    let out = dir.path("out.b2frame");
    let mut child = Command::new(BIN)
        .arg("compress")
        .arg(&fifo)
        .arg(&out)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Feed a little, keep the writer open: the tool is mid-run, its
    // temporary frame exists.
    let mut w = fs::OpenOptions::new().write(true).open(&fifo).unwrap();
    w.write_all(&data(100_000)).unwrap();
    let t0 = std::time::Instant::now();
    while !dir.listing().iter().any(|n| n.contains(".tmp")) {
        assert!(t0.elapsed().as_secs() < 20, "no temporary file appeared");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let st = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(st.success());
    let status = child.wait().unwrap();
    drop(w);
    assert_eq!(status.code(), Some(128 + 15), "exit status after SIGTERM");
    assert!(!out.exists());
    assert!(
        dir.listing().iter().all(|n| !n.contains(".tmp")),
        "left behind: {:?}",
        dir.listing()
    );
}

/// `verify` and frame checksums: flipped bytes inside chunk data that the
/// codec still decodes are caught by the digests.
#[test]
fn verify_and_frame_checksums() {
    let dir = TempDir::new("verify");
    // Incompressible data: chunks are stored raw, so a flipped byte decodes
    // fine and only a checksum can notice it.
    let mut x = 0x1234_5678_9abc_def0_u64;
    let input: Vec<u8> = (0..3_000_000)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    let src = dir.path("in.bin");
    fs::write(&src, &input).unwrap();
    let s = src.to_str().unwrap();
    for (fmt, extra) in [("frame", "in.b2frame"), ("sframe", "in.sframe")] {
        let out = dir.path(extra);
        let o = out.to_str().unwrap();
        let args = [
            "compress",
            "--format",
            fmt,
            "--checksum",
            "sha256",
            "--chunksize",
            "1M",
            s,
            o,
        ];
        assert_ok(&run(&args, None), fmt);
        assert_ok(&run_exact(&["verify", o], None), "verify intact");
        let v = run_exact(&["verify", "-v", o], None);
        assert!(
            v.status.success() && stderr(&v).contains("ok"),
            "{}",
            stderr(&v)
        );
        let back = dir.path("back.bin");
        assert_ok(&run(&["decompress", o, back.to_str().unwrap()], None), fmt);
        assert!(fs::read(&back).unwrap() == input);
        // The frame still opens in the library, with the vlmetalayer.
        let mut sc = oxiblosc::schunk::SChunk::open(&out).unwrap();
        assert!(sc.vlmeta_get("oxiblosc.checksums").unwrap().is_some());
    }
    // Flip three bytes in the middle of the frame file's chunk data.
    let frame = dir.path("in.b2frame");
    let mut bytes = fs::read(&frame).unwrap();
    let mid = bytes.len() / 2;
    for k in [0, 1000, 200_000] {
        bytes[mid + k] ^= 0x5a;
    }
    let bad = dir.path("bad.b2frame");
    fs::write(&bad, &bytes).unwrap();
    let b = bad.to_str().unwrap();
    let o = run_exact(&["verify", b], None);
    assert_fails(&o, "checksum mismatch", "verify corrupt");
    let o = run(
        &["decompress", b, dir.path("x.bin").to_str().unwrap()],
        None,
    );
    assert_fails(&o, "checksum mismatch", "decompress corrupt");
    assert!(!dir.path("x.bin").exists());
    // Without checksums the same damage passes unnoticed (as in C).
    let plain = dir.path("plain.b2frame");
    let p = plain.to_str().unwrap();
    assert_ok(
        &run(&["compress", "--chunksize", "1M", s, p], None),
        "plain",
    );
    let mut bytes = fs::read(&plain).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x5a;
    fs::write(&plain, &bytes).unwrap();
    assert_ok(&run_exact(&["verify", p], None), "no checksum to fail");
    // verify on other formats, and a truncated chunk file.
    let chunk = dir.path("in.b2");
    let c = chunk.to_str().unwrap();
    assert_ok(
        &run(&["compress", "--format", "chunk", s, c], None),
        "chunk",
    );
    assert_ok(&run_exact(&["verify", c], None), "verify chunk");
    let mut cut = fs::read(&chunk).unwrap();
    cut.truncate(1000);
    fs::write(&chunk, &cut).unwrap();
    assert_fails(
        &run_exact(&["verify", c], None),
        "ends after 1000 bytes",
        "truncated",
    );
}
