//! Where a frame's compressed chunks wait when the output cannot seek: the
//! frame's header (first in the frame) needs the final sizes, so the chunks
//! are held until `finish`, in memory up to a limit and then in an unnamed
//! temporary file, and copied out after the header.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

/// Bytes a spool keeps in memory before it moves to a temporary file.
pub(crate) const SPOOL_MEMORY: usize = 8 << 20;

/// Write-then-read-once storage.
#[derive(Debug)]
pub(crate) struct Spool {
    mem: Vec<u8>,
    file: Option<(File, Option<PathBuf>)>,
    dir: PathBuf,
    len: u64,
}

impl Spool {
    pub(crate) fn new(dir: PathBuf) -> Spool {
        Spool {
            mem: Vec::new(),
            file: None,
            dir,
            len: 0,
        }
    }

    pub(crate) fn set_dir(&mut self, dir: PathBuf) {
        self.dir = dir;
    }

    /// Bytes held so far.
    pub(crate) fn len(&self) -> u64 {
        self.len
    }

    pub(crate) fn write_all(&mut self, data: &[u8]) -> io::Result<()> {
        if self.file.is_none() && self.mem.len() + data.len() <= SPOOL_MEMORY {
            self.mem.extend_from_slice(data);
        } else {
            if self.file.is_none() {
                let mut f = create_temp(&self.dir)?;
                f.0.write_all(&self.mem)?;
                self.mem = Vec::new();
                self.file = Some(f);
            }
            let (f, _) = self.file.as_mut().expect("just made");
            f.write_all(data)?;
        }
        self.len += data.len() as u64;
        Ok(())
    }

    /// Copy everything held into `w`.
    pub(crate) fn copy_to<W: Write + ?Sized>(&mut self, w: &mut W) -> io::Result<()> {
        match &mut self.file {
            None => w.write_all(&self.mem),
            Some((f, _)) => {
                f.seek(SeekFrom::Start(0))?;
                let mut buf = vec![0u8; 1 << 20];
                let mut left = self.len;
                while left > 0 {
                    let n = (buf.len() as u64).min(left) as usize;
                    f.read_exact(&mut buf[..n])?;
                    w.write_all(&buf[..n])?;
                    left -= n as u64;
                }
                Ok(())
            }
        }
    }
}

impl Drop for Spool {
    fn drop(&mut self) {
        if let Some((_, Some(path))) = &self.file {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// A new temporary file in `dir`, unlinked at once where the system allows
/// it (else removed on drop).
fn create_temp(dir: &std::path::Path) -> io::Result<(File, Option<PathBuf>)> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    for _ in 0..16 {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let path = dir.join(format!(
            ".oxiblosc-spool-{}-{nanos:x}-{n}",
            std::process::id()
        ));
        match OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(f) => {
                return Ok(match std::fs::remove_file(&path) {
                    Ok(()) => (f, None),
                    Err(_) => (f, Some(path)),
                });
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::other("cannot make a temporary spool file"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spools_to_a_file_past_the_limit_and_copies_back() {
        let mut s = Spool::new(std::env::temp_dir());
        let piece: Vec<u8> = (0..1_000_003u32).map(|v| (v % 251) as u8).collect();
        let mut want = Vec::new();
        for _ in 0..10 {
            s.write_all(&piece).unwrap();
            want.extend_from_slice(&piece);
        }
        assert!(s.file.is_some());
        assert_eq!(s.len(), want.len() as u64);
        let mut got = Vec::new();
        s.copy_to(&mut got).unwrap();
        assert_eq!(got, want);
    }
}
