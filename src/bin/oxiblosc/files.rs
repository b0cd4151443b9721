//! Reading the whole input and writing the output without ever leaving a
//! half-written file behind.

use std::ffi::OsString;
use std::fmt;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

/// Where data comes from or goes to: a file, or stdin/stdout for `-`.
#[derive(Clone, Debug)]
pub enum Place {
    /// Standard input or output.
    Std,
    /// A file path.
    File(PathBuf),
}

impl Place {
    /// `-` is stdin/stdout, anything else a path.
    pub fn new(arg: &Path) -> Place {
        if arg.as_os_str() == "-" {
            Place::Std
        } else {
            Place::File(arg.to_path_buf())
        }
    }
}

/// How a [`Place`] is named in messages: `'path'`, or `stdin`.
pub struct Described<'a>(&'a Place, &'static str);

impl fmt::Display for Described<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Place::Std => f.write_str(self.1),
            Place::File(p) => write!(f, "'{}'", p.display()),
        }
    }
}

impl Place {
    /// The place as an input (`stdin` for `-`).
    pub fn as_input(&self) -> Described<'_> {
        Described(self, "stdin")
    }
}

/// Temporary files and directories being written: removed by
/// [`cleanup_on_signals`]'s handler when the process is interrupted.
static LIVE_TEMPS: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

fn track(path: &Path) {
    LIVE_TEMPS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(path.to_path_buf());
}

fn untrack(path: &Path) {
    LIVE_TEMPS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .retain(|p| p != path);
}

fn remove_path(path: &Path) {
    match fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => {
            let _ = fs::remove_dir_all(path);
        }
        Ok(_) => {
            let _ = fs::remove_file(path);
        }
        Err(_) => {}
    }
}

/// On SIGINT, SIGTERM or SIGHUP remove every temporary file or directory
/// being written and exit with 128 + the signal number, as a shell reports
/// a killed process; SIGXFSZ (a file size limit reached) is caught so that
/// the write fails with an error (EFBIG) instead of killing the process,
/// and the ordinary error path removes the temporary file.
pub fn cleanup_on_signals() {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM, SIGXFSZ};
    let xfsz = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let _ = signal_hook::flag::register(SIGXFSZ, xfsz);
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
        return;
    };
    std::thread::spawn(move || {
        if let Some(sig) = signals.forever().next() {
            let temps = std::mem::take(&mut *LIVE_TEMPS.lock().unwrap_or_else(|e| e.into_inner()));
            for t in temps {
                remove_path(&t);
            }
            eprintln!("oxiblosc: interrupted (signal {sig}); temporary files removed");
            std::process::exit(128 + sig);
        }
    });
}

/// A temporary file removed on drop unless persisted.
struct TempFile {
    path: PathBuf,
    file: Option<File>,
}

impl TempFile {
    /// A new file `.NAME.oxiblosc-PID-N.tmp` beside `target`.
    fn create(target: &Path) -> io::Result<TempFile> {
        let dir = match target.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let name = target.file_name().unwrap_or_else(|| "out".as_ref());
        let pid = std::process::id();
        let mut attempt = 0u32;
        loop {
            let mut tmp_name = OsString::from(".");
            tmp_name.push(name);
            tmp_name.push(format!(".oxiblosc-{pid}-{attempt}.tmp"));
            let path = dir.join(tmp_name);
            match OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(file) => {
                    track(&path);
                    return Ok(TempFile {
                        path,
                        file: Some(file),
                    });
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists && attempt < 1000 => {
                    attempt += 1;
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Close the file and rename it to `target`.
    fn persist(mut self, target: &Path) -> io::Result<()> {
        drop(self.file.take());
        fs::rename(&self.path, target)?;
        untrack(&self.path);
        self.path = PathBuf::new();
        Ok(())
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        drop(self.file.take());
        if !self.path.as_os_str().is_empty() {
            let _ = fs::remove_file(&self.path);
            untrack(&self.path);
        }
    }
}

/// A temporary copy of a stream in `$TMPDIR`, for input that needs random
/// access (a frame read from stdin: its index is at the end, and its
/// chunks may be stored in any order); removed on drop and on SIGINT /
/// SIGTERM like the other temporary files.
pub(crate) struct StreamCopy(TempFile);

impl StreamCopy {
    /// Copy all of `r` into a new temporary file (memory: one buffer).
    pub(crate) fn of(r: &mut dyn Read) -> io::Result<StreamCopy> {
        let mut t = TempFile::create(&std::env::temp_dir().join("stdin.b2frame"))?;
        let file = t.file.as_mut().expect("a new temporary file is open");
        let mut w = io::BufWriter::with_capacity(1 << 20, file);
        io::copy(r, &mut w)?;
        w.flush()?;
        drop(w);
        drop(t.file.take());
        Ok(StreamCopy(t))
    }

    /// Where the copy is.
    pub(crate) fn path(&self) -> &Path {
        &self.0.path
    }
}

/// Open `place` for reading (stdin for `-`); a directory is an error.
/// `Send`, for the reader thread of the stream pipelines.
pub fn open_input(place: &Place) -> Result<Box<dyn Read + Send>, String> {
    match place {
        Place::Std => Ok(Box::new(Counted(io::stdin()))),
        Place::File(path) => {
            let what = format!("'{}'", path.display());
            let file = File::open(path).map_err(|e| format!("cannot open {what}: {e}"))?;
            let meta = file
                .metadata()
                .map_err(|e| format!("cannot read {what}: {e}"))?;
            if meta.is_dir() {
                return Err(format!("{what} is a directory"));
            }
            progress::set_total(meta.len());
            Ok(Box::new(Counted(io::BufReader::with_capacity(
                1 << 20,
                file,
            ))))
        }
    }
}

/// A reader that reports what it reads to [`progress`].
struct Counted<R>(R);

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.0.read(buf)?;
        progress::read(n as u64);
        Ok(n)
    }
}

/// Bytes read and written by this run, a progress line on stderr while it
/// runs (only when stderr is a terminal and not `-q`), and the one-line
/// summary at the end.
pub mod progress {
    use std::io::{IsTerminal, Write};
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    use std::time::{Duration, Instant};

    static READ: AtomicU64 = AtomicU64::new(0);
    static WRITTEN: AtomicU64 = AtomicU64::new(0);
    static TOTAL: AtomicU64 = AtomicU64::new(0);
    static SHOW: AtomicBool = AtomicBool::new(false);
    static STATE: Mutex<Option<(Instant, Instant)>> = Mutex::new(None);

    /// Start the clock; show a progress line if `show` and stderr is a
    /// terminal.
    pub fn start(show: bool) {
        SHOW.store(show && std::io::stderr().is_terminal(), Ordering::Relaxed);
        let now = Instant::now();
        *STATE.lock().unwrap_or_else(|e| e.into_inner()) = Some((now, now));
    }

    /// The input's size, when known.
    pub fn set_total(n: u64) {
        TOTAL.store(n, Ordering::Relaxed);
    }

    /// `n` more bytes read.
    pub fn read(n: u64) {
        let done = READ.fetch_add(n, Ordering::Relaxed) + n;
        if !SHOW.load(Ordering::Relaxed) {
            return;
        }
        let mut st = STATE.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, last)) = st.as_mut()
            && last.elapsed() >= Duration::from_millis(200)
        {
            *last = Instant::now();
            let total = TOTAL.load(Ordering::Relaxed);
            let mut err = std::io::stderr().lock();
            if total > 0 {
                let pct = (done as f64 / total as f64 * 100.0).min(100.0);
                let _ = write!(err, "\r{pct:5.1}%  {} / {}   ", human(done), human(total));
            } else {
                let _ = write!(err, "\r{}   ", human(done));
            }
            let _ = err.flush();
        }
    }

    /// `n` more bytes written to the output.
    pub fn written(n: u64) {
        WRITTEN.fetch_add(n, Ordering::Relaxed);
    }

    /// Bytes read so far.
    pub fn bytes_read() -> u64 {
        READ.load(Ordering::Relaxed)
    }

    /// Bytes written so far through [`super::Output`].
    pub fn bytes_written() -> u64 {
        WRITTEN.load(Ordering::Relaxed)
    }

    /// Clear the progress line.
    pub fn clear() {
        if SHOW.load(Ordering::Relaxed) {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r{:40}\r", "");
            let _ = err.flush();
        }
    }

    /// Seconds since [`start`].
    pub fn elapsed() -> f64 {
        STATE
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .map_or(0.0, |(t, _)| t.elapsed().as_secs_f64())
    }

    /// `1.5 MiB`, `12 KiB`, `300 B`.
    pub fn human(n: u64) -> String {
        const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
        let mut v = n as f64;
        let mut u = 0;
        while v >= 1024.0 && u + 1 < UNITS.len() {
            v /= 1024.0;
            u += 1;
        }
        if u == 0 {
            format!("{n} B")
        } else {
            format!("{v:.1} {}", UNITS[u])
        }
    }
}

/// Fill `buf` with up to `max` bytes from `r` (fewer only at the end of the
/// input); returns how many.
pub fn read_piece(r: &mut dyn Read, buf: &mut Vec<u8>, max: usize) -> io::Result<usize> {
    buf.clear();
    read_piece_append(r, buf, max)
}

/// Append up to `max` bytes from `r` to `buf`; returns how many.
pub fn read_piece_append(r: &mut dyn Read, buf: &mut Vec<u8>, max: usize) -> io::Result<usize> {
    let start = buf.len();
    r.take(max as u64).read_to_end(buf)?;
    Ok(buf.len() - start)
}

/// An output written piece by piece: stdout directly; a file through a
/// temporary file in the same directory that replaces the target only when
/// [`Output::finish`] succeeds (dropped unfinished, it is removed and the
/// target is untouched). Devices and FIFOs are written in place.
pub struct Output {
    what: String,
    sink: Sink,
}

enum Sink {
    Stdout(io::BufWriter<io::Stdout>),
    InPlace(File),
    Temp {
        tmp: TempFile,
        writer: io::BufWriter<WritebackFile>,
        target: PathBuf,
        mode: Option<fs::Permissions>,
    },
}

/// Bytes of output between two writeback hints.
const WRITEBACK_STEP: u64 = 8 << 20;

/// A new output file that starts the kernel's writeback of what is written
/// to it as it goes (Linux: `posix_fadvise(DONTNEED)` on every
/// [`WRITEBACK_STEP`] bytes past the last hint, which starts writing the
/// dirty pages back without waiting and leaves them cached until they are
/// clean): the disk works while the next chunks are (de)compressed, and
/// the `fsync` before the rename waits for the last few MiB instead of the
/// whole file. Only a hint: its errors are ignored (the `fsync` reports a
/// failed write).
pub struct WritebackFile {
    file: File,
    /// The file position.
    pos: u64,
    /// The end of what was written.
    end: u64,
    /// Where the last hint ended.
    hinted: u64,
}

impl WritebackFile {
    /// Wrap `file`, positioned at its start.
    pub fn new(file: File) -> WritebackFile {
        WritebackFile {
            file,
            pos: 0,
            end: 0,
            hinted: 0,
        }
    }

    /// The file.
    pub fn into_file(self) -> File {
        self.file
    }

    #[cfg(target_os = "linux")]
    fn hint(&self) {
        let len = std::num::NonZeroU64::new(self.end - self.hinted);
        let _ = rustix::fs::fadvise(&self.file, self.hinted, len, rustix::fs::Advice::DontNeed);
    }

    #[cfg(not(target_os = "linux"))]
    fn hint(&self) {}
}

impl Write for WritebackFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.file.write(buf)?;
        self.pos += n as u64;
        self.end = self.end.max(self.pos);
        if self.end - self.hinted >= WRITEBACK_STEP {
            self.hint();
            self.hinted = self.end;
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

impl io::Seek for WritebackFile {
    fn seek(&mut self, to: io::SeekFrom) -> io::Result<u64> {
        self.pos = self.file.seek(to)?;
        Ok(self.pos)
    }
}

/// An [`Output`] as an `io::Write`, for writers that stream into one
/// (`SChunk::write_cframe`); the output's own error message is kept.
pub struct OutputWriter<'a> {
    out: &'a mut Output,
    error: Option<String>,
}

impl<'a> OutputWriter<'a> {
    /// Write into `out`.
    pub fn new(out: &'a mut Output) -> OutputWriter<'a> {
        OutputWriter { out, error: None }
    }

    /// The message of the output's write that failed, if one did.
    pub fn take_error(&mut self) -> Option<String> {
        self.error.take()
    }
}

impl Write for OutputWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self.out.write(buf) {
            Ok(()) => Ok(buf.len()),
            Err(e) => {
                self.error = Some(e.clone());
                Err(std::io::Error::other(e))
            }
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Output {
    /// Start writing `place`.
    pub fn begin(place: &Place) -> Result<Output, String> {
        let path = match place {
            Place::Std => {
                return Ok(Output {
                    what: "stdout".into(),
                    sink: Sink::Stdout(io::BufWriter::with_capacity(1 << 20, io::stdout())),
                });
            }
            Place::File(p) => p,
        };
        let what = format!("'{}'", path.display());
        let existing = match fs::metadata(path) {
            Ok(m) => Some(m),
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => return Err(format!("cannot write {what}: {e}")),
        };
        let target = match &existing {
            Some(m) if m.is_dir() => return Err(format!("{what} is a directory")),
            Some(m) if !m.is_file() => {
                let f = OpenOptions::new()
                    .write(true)
                    .open(path)
                    .map_err(|e| format!("cannot open {what}: {e}"))?;
                return Ok(Output {
                    what,
                    sink: Sink::InPlace(f),
                });
            }
            Some(_) => fs::canonicalize(path).unwrap_or_else(|_| path.clone()),
            None => path.clone(),
        };
        let mut tmp = TempFile::create(&target)
            .map_err(|e| format!("cannot create a temporary file next to {what}: {e}"))?;
        let file = tmp.file.take().expect("just created");
        let writer = io::BufWriter::with_capacity(1 << 20, WritebackFile::new(file));
        Ok(Output {
            what,
            sink: Sink::Temp {
                tmp,
                writer,
                target,
                mode: existing.map(|m| m.permissions()),
            },
        })
    }

    /// Append `data`.
    pub fn write(&mut self, data: &[u8]) -> Result<(), String> {
        progress::written(data.len() as u64);
        let r = match &mut self.sink {
            Sink::Stdout(w) => w.write_all(data),
            Sink::InPlace(f) => f.write_all(data),
            Sink::Temp { writer, .. } => writer.write_all(data),
        };
        r.map_err(|e| format!("cannot write {}: {e}", self.what))
    }

    /// Flush, sync and (for a file) rename the temporary file over the target.
    pub fn finish(self) -> Result<(), String> {
        let what = self.what;
        match self.sink {
            Sink::Stdout(mut w) => w.flush().map_err(|e| format!("cannot write {what}: {e}")),
            Sink::InPlace(mut f) => f.flush().map_err(|e| format!("cannot write {what}: {e}")),
            Sink::Temp {
                tmp,
                writer,
                target,
                mode,
            } => {
                let file = writer
                    .into_inner()
                    .map_err(|e| format!("cannot write {what}: {}", e.error()))?
                    .into_file();
                file.sync_all()
                    .map_err(|e| format!("cannot write {what}: {e}"))?;
                if let Some(m) = mode {
                    // Best effort, like `cp`.
                    let _ = file.set_permissions(m);
                }
                drop(file);
                tmp.persist(&target)
                    .map_err(|e| format!("cannot replace {what}: {e}"))
            }
        }
    }
}

/// A file or directory built at a fresh path beside its target and moved
/// over the target by [`TempTarget::persist`]; dropped unpersisted, the
/// temporary is removed and the target is untouched. For SChunk storages,
/// which want a path of their own.
pub struct TempTarget {
    tmp: PathBuf,
    target: PathBuf,
    what: String,
    mode: Option<fs::Permissions>,
    persisted: bool,
}

impl TempTarget {
    /// A fresh, not yet existing path `.NAME.oxiblosc-PID-N.tmp` beside
    /// `target` (which may exist: it is replaced at the end).
    pub fn new(target: &Path) -> Result<TempTarget, String> {
        let what = format!("'{}'", target.display());
        // Like `Output`: an existing file keeps its mode, and a symlink
        // stays one (the file it points to is replaced).
        let (target, mode) = match fs::metadata(target) {
            Ok(m) if m.is_file() => (
                fs::canonicalize(target).unwrap_or_else(|_| target.to_path_buf()),
                Some(m.permissions()),
            ),
            _ => (target.to_path_buf(), None),
        };
        let target = target.as_path();
        // Reserve the name with an empty file, then free it for the storage.
        let tmp = TempFile::create(target)
            .map_err(|e| format!("cannot create a temporary file next to {what}: {e}"))?;
        let path = tmp.path.clone();
        drop(tmp); // removes the reservation
        track(&path);
        Ok(TempTarget {
            tmp: path,
            target: target.to_path_buf(),
            what,
            mode,
            persisted: false,
        })
    }

    /// Where to build.
    pub fn path(&self) -> &Path {
        &self.tmp
    }

    /// Sync what was built and move it over the target. A directory target
    /// that exists is moved aside first and removed once the new one is in
    /// place (a directory cannot be renamed over a non-empty one).
    pub fn persist(mut self) -> Result<(), String> {
        let what = self.what.clone();
        sync_tree(&self.tmp).map_err(|e| format!("cannot write {what}: {e}"))?;
        let is_dir = fs::metadata(&self.tmp).map(|m| m.is_dir()).unwrap_or(false);
        if let (Some(mode), false) = (self.mode.take(), is_dir) {
            // Best effort, like `cp`.
            let _ = fs::set_permissions(&self.tmp, mode);
        }
        let old = match fs::metadata(&self.target) {
            Ok(m) if m.is_dir() && is_dir => {
                let mut aside = self.tmp.clone().into_os_string();
                aside.push(".old");
                let aside = PathBuf::from(aside);
                fs::rename(&self.target, &aside)
                    .map_err(|e| format!("cannot replace {what}: {e}"))?;
                Some(aside)
            }
            Ok(m) if m.is_dir() => return Err(format!("{what} is a directory")),
            Ok(_) if is_dir => {
                return Err(format!(
                    "{what} is a file; a sparse frame is a directory (remove it first)"
                ));
            }
            _ => None,
        };
        if let Err(e) = fs::rename(&self.tmp, &self.target) {
            if let Some(aside) = &old {
                let _ = fs::rename(aside, &self.target);
            }
            return Err(format!("cannot replace {what}: {e}"));
        }
        self.persisted = true;
        untrack(&self.tmp);
        if let Some(aside) = old {
            let _ = fs::remove_dir_all(aside);
        }
        Ok(())
    }
}

impl Drop for TempTarget {
    fn drop(&mut self) {
        if !self.persisted {
            remove_path(&self.tmp);
            untrack(&self.tmp);
        }
    }
}

/// fsync a file, or every file of a directory and the directory itself.
fn sync_tree(path: &Path) -> io::Result<()> {
    if fs::metadata(path)?.is_dir() {
        for entry in fs::read_dir(path)? {
            let entry = entry?;
            if entry.file_type()?.is_file() {
                File::open(entry.path())?.sync_all()?;
            }
        }
    }
    File::open(path)?.sync_all()
}

/// The file (or directory) `output` will be, checked before anything is
/// written: never the input itself (whatever `force` says: `compress x x`
/// would destroy the data), and not an existing path unless `force`.
pub fn check_output(input: &Place, output: &Place, force: bool) -> Result<(), String> {
    let Place::File(out) = output else {
        return Ok(());
    };
    let Ok(out_meta) = fs::metadata(out) else {
        return Ok(()); // does not exist (or cannot be seen: the write will say)
    };
    if let Place::File(inp) = input
        && let Ok(in_meta) = fs::metadata(inp)
        && same_file(&in_meta, &out_meta)
    {
        return Err(format!(
            "'{}' is the input; refusing to write the output over it",
            out.display()
        ));
    }
    if !force && (out_meta.is_file() || out_meta.is_dir()) {
        return Err(format!(
            "'{}' already exists; use -f/--force to replace it",
            out.display()
        ));
    }
    Ok(())
}

#[cfg(unix)]
fn same_file(a: &fs::Metadata, b: &fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    a.dev() == b.dev() && a.ino() == b.ino()
}

#[cfg(not(unix))]
fn same_file(_: &fs::Metadata, _: &fs::Metadata) -> bool {
    false
}

/// Extensions `compress` gives a default OUT, per container.
pub const EXTENSIONS: [&str; 6] = [".b2frame", ".b2sframe", ".b2", ".b1", ".blp", ".packed"];

/// The default OUT of `decompress IN`: IN without a known extension
/// (`.b2frame`, `.b2nd`, `.b2sframe`, `.b2`, `.b1`, `.blp`, `.packed`),
/// else IN plus `.out`.
pub fn decompressed_name(input: &Path) -> PathBuf {
    let name = input.as_os_str().to_string_lossy();
    for ext in EXTENSIONS.iter().chain(&[".b2nd"]) {
        if let Some(stem) = name.strip_suffix(ext)
            && !stem.is_empty()
            && !stem.ends_with('/')
        {
            return PathBuf::from(stem);
        }
    }
    let mut s = input.as_os_str().to_os_string();
    s.push(".out");
    PathBuf::from(s)
}

/// Bytes a file holds, or all the files of a directory (a sparse frame).
pub fn size_on_disk(path: &Path) -> u64 {
    match fs::metadata(path) {
        Ok(m) if m.is_dir() => fs::read_dir(path)
            .map(|d| {
                d.flatten()
                    .filter_map(|e| e.metadata().ok())
                    .filter(fs::Metadata::is_file)
                    .map(|m| m.len())
                    .sum()
            })
            .unwrap_or(0),
        Ok(m) => m.len(),
        Err(_) => 0,
    }
}
