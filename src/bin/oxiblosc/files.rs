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

/// Why the input could not be read.
#[derive(Debug)]
pub enum ReadError {
    /// The input is larger than the limit. `size` is its size when known
    /// (files), `head` its first bytes (at most 16).
    TooLarge {
        /// The input's size, when known.
        size: Option<u64>,
        /// Its first bytes.
        head: Vec<u8>,
    },
    /// An I/O error (the message says what was being done).
    Io(String),
}

/// Read the whole of `place`, failing without reading it all when it holds
/// more than `limit` bytes.
pub fn read_all(place: &Place, limit: usize) -> Result<Vec<u8>, ReadError> {
    let limit64 = limit as u64;
    match place {
        Place::Std => {
            let mut data = Vec::new();
            io::stdin()
                .lock()
                .take(limit64 + 1)
                .read_to_end(&mut data)
                .map_err(|e| ReadError::Io(format!("cannot read stdin: {e}")))?;
            if data.len() > limit {
                data.truncate(16);
                return Err(ReadError::TooLarge {
                    size: None,
                    head: data,
                });
            }
            data.shrink_to_fit();
            Ok(data)
        }
        Place::File(path) => {
            let what = || format!("'{}'", path.display());
            let mut file = File::open(path)
                .map_err(|e| ReadError::Io(format!("cannot open {}: {e}", what())))?;
            let meta = file
                .metadata()
                .map_err(|e| ReadError::Io(format!("cannot read {}: {e}", what())))?;
            if meta.is_dir() {
                return Err(ReadError::Io(format!("{} is a directory", what())));
            }
            // Regular files tell their size: refuse an oversized one before
            // reading it. Pipes and devices are read up to the limit.
            let size = meta.is_file().then_some(meta.len());
            let read_err = |e: io::Error| ReadError::Io(format!("cannot read {}: {e}", what()));
            if let Some(size) = size.filter(|&s| s > limit64) {
                let mut head = Vec::new();
                (&mut file)
                    .take(16)
                    .read_to_end(&mut head)
                    .map_err(read_err)?;
                return Err(ReadError::TooLarge {
                    size: Some(size),
                    head,
                });
            }
            let mut data = Vec::with_capacity(size.map_or(0, |s| s as usize));
            file.take(limit64 + 1)
                .read_to_end(&mut data)
                .map_err(read_err)?;
            if data.len() > limit {
                data.truncate(16);
                return Err(ReadError::TooLarge { size, head: data });
            }
            data.shrink_to_fit();
            Ok(data)
        }
    }
}

/// Write `data` to `place`. A file is written to a temporary file in the
/// same directory, flushed to disk and renamed over the target, so the
/// target is either untouched or complete. An existing target keeps its
/// permissions; a symbolic link is followed (the file it points to is
/// replaced, not the link). Non-regular targets (`/dev/null`, a FIFO) are
/// written in place.
pub fn write_all(place: &Place, data: &[u8]) -> Result<(), String> {
    let path = match place {
        Place::Std => {
            let mut out = io::stdout().lock();
            return out
                .write_all(data)
                .and_then(|()| out.flush())
                .map_err(|e| format!("cannot write stdout: {e}"));
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
            // A device or FIFO: there is nothing to rename over.
            let mut f = OpenOptions::new()
                .write(true)
                .open(path)
                .map_err(|e| format!("cannot open {what}: {e}"))?;
            return f
                .write_all(data)
                .and_then(|()| f.flush())
                .map_err(|e| format!("cannot write {what}: {e}"));
        }
        Some(_) => fs::canonicalize(path).unwrap_or_else(|_| path.clone()),
        None => path.clone(),
    };
    let mut tmp = TempFile::create(&target)
        .map_err(|e| format!("cannot create a temporary file next to {what}: {e}"))?;
    let file = tmp.file.as_mut().expect("open until persisted");
    file.write_all(data)
        .and_then(|()| file.sync_all())
        .map_err(|e| format!("cannot write {what}: {e}"))?;
    if let Some(m) = &existing {
        // Best effort, like `cp`: a file we may replace but not chmod keeps
        // the default mode.
        let _ = file.set_permissions(m.permissions());
    }
    tmp.persist(&target)
        .map_err(|e| format!("cannot replace {what}: {e}"))
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
        self.path = PathBuf::new();
        Ok(())
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        drop(self.file.take());
        if !self.path.as_os_str().is_empty() {
            let _ = fs::remove_file(&self.path);
        }
    }
}
