//! Frame locking, refresh, and the bridge the b2nd API uses to reach a
//! handle's super-chunk.
//!
//! Locking is opt-in, as in C-Blosc2: the `BLOSC_LOCKING` environment
//! variable (non-empty, not `0`) turns it on for super-chunks on disk. A
//! lock is an advisory `flock` on a sidecar file (`PATH.b2lock` beside a
//! frame file, `DIR/.b2lock` in a sparse frame's directory) holding, at
//! byte 8, a generation counter each exclusive holder bumps: a handle that
//! finds another generation than its own last one reopens its frame. Locks
//! nest per handle (`blosc2_schunk_lock` brackets several operations).
//! As in C-Blosc2, calls that only read (chunks, slices, metalayers,
//! parameters, serialising) take the lock shared, so readers in several
//! handles or processes run at once; calls that change the frame take it
//! exclusively and wait for the readers.

use std::collections::HashMap;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::Mutex;

use super::*;

const SEQ_OFFSET: u64 = 8;
/// `BLOSC2_ERROR_LOCK`.
const ERR_LOCK: c_int = -37;

struct LockState {
    /// The path the state belongs to (a handle freed and another made at
    /// the same address starts afresh).
    path: std::path::PathBuf,
    file: File,
    depth: u32,
    seq: u64,
    /// Whether the lock held (`depth > 0`) is the exclusive one.
    exclusive: bool,
}

/// Lock states by handle address.
static LOCKS: std::sync::LazyLock<Mutex<HashMap<usize, LockState>>> =
    std::sync::LazyLock::new(|| Mutex::new(HashMap::new()));

fn locks() -> std::sync::MutexGuard<'static, HashMap<usize, LockState>> {
    LOCKS.lock().unwrap_or_else(|e| e.into_inner())
}

fn locking_enabled() -> bool {
    std::env::var_os("BLOSC_LOCKING").is_some_and(|v| !v.is_empty() && v != "0")
}

/// Whether `BLOSC_LOCKING` turns locking on.
pub(crate) fn locking_on_env() -> bool {
    locking_enabled()
}

/// Handles (by address) whose I/O asked for locking
/// (`blosc2_stdio_params.locking` of the file-system backend).
static REQUESTED: std::sync::LazyLock<Mutex<std::collections::HashSet<usize>>> =
    std::sync::LazyLock::new(|| Mutex::new(std::collections::HashSet::new()));

/// Whether `io` (the file-system backend, id 0) asks for locking through
/// its `blosc2_stdio_params` (whose first field is `bool locking`).
pub(crate) fn io_requests_locking(io: Option<&blosc2_io>) -> bool {
    match io {
        // SAFETY: the params of the file-system backend are null or a
        // blosc2_stdio_params (C's contract), whose first field is a bool.
        Some(io) if io.id == 0 && !io.params.is_null() => unsafe { *(io.params as *const bool) },
        _ => false,
    }
}

/// Lock the frame behind `s` from now on (its I/O asked for it).
pub(crate) fn request_locking(s: *mut blosc2_schunk) {
    if !s.is_null() {
        REQUESTED
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(s as usize);
    }
}

/// Whether calls on `h` lock its frame: `BLOSC_LOCKING`, or its I/O's
/// `locking`.
pub(crate) fn locking_on(h: &Handle) -> bool {
    locking_enabled()
        || REQUESTED
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains(&(h as *const Handle as usize))
}

/// The sidecar lock file of a handle on disk, when locking is on.
fn lock_path(h: &Handle) -> Option<std::path::PathBuf> {
    use oxiblosc::schunk::Storage;
    // The storage first: a super-chunk in memory never locks, and its calls
    // skip the environment look-up (a `getenv` per call) and the copy of
    // the storage description.
    if !h.sc.is_on_disk() {
        return None;
    }
    let path = match h.sc.storage() {
        Storage::File { path, .. } => {
            let mut p = path.into_os_string();
            p.push(".b2lock");
            p.into()
        }
        Storage::Directory(dir) => dir.join(".b2lock"),
        _ => return None,
    };
    locking_on(h).then_some(path)
}

/// Take (or nest in) the handle's lock. `Ok(true)` when the frame was
/// reopened because another holder changed it.
fn lock_in(h: &mut Handle, exclusive: bool) -> Result<bool, c_int> {
    lock_in_as(h, exclusive, exclusive, true)
}

/// [`lock_in`], bumping the generation (telling other handles to reopen)
/// only when `bump`.
fn lock_in_as(h: &mut Handle, exclusive: bool, bump: bool, wait: bool) -> Result<bool, c_int> {
    let Some(path) = lock_path(h) else {
        return Ok(false);
    };
    let key = h as *mut Handle as usize;
    let mut map = locks();
    if map.get(&key).is_some_and(|s| s.path != path) {
        map.remove(&key);
    }
    if let Some(s) = map.get_mut(&key)
        && s.depth > 0
    {
        s.depth += 1;
        return Ok(false);
    }
    let s = match map.entry(key) {
        std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
        std::collections::hash_map::Entry::Vacant(v) => {
            let file = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&path)
                .map_err(|_| ERR_LOCK)?;
            v.insert(LockState {
                path,
                file,
                depth: 0,
                seq: 0,
                exclusive: false,
            })
        }
    };
    let taken = match (exclusive, wait) {
        (true, true) => s.file.lock(),
        (false, true) => s.file.lock_shared(),
        (true, false) => s.file.try_lock().map_err(std::io::Error::from),
        (false, false) => s.file.try_lock_shared().map_err(std::io::Error::from),
    };
    taken.map_err(|_| ERR_LOCK)?;
    let mut b = [0u8; 8];
    let seq = match s.file.read_at(&mut b, SEQ_OFFSET) {
        Ok(8) => u64::from_le_bytes(b),
        Ok(_) => 0,
        Err(_) => {
            let _ = s.file.unlock();
            return Err(ERR_LOCK);
        }
    };
    if bump
        && s.file
            .write_at(&(seq + 1).to_le_bytes(), SEQ_OFFSET)
            .is_err()
    {
        let _ = s.file.unlock();
        return Err(ERR_LOCK);
    }
    let changed = seq != s.seq;
    s.seq = if bump { seq + 1 } else { seq };
    s.depth = 1;
    s.exclusive = exclusive;
    drop(map);
    Ok(changed && h.reopen())
}

fn unlock_in(h: &mut Handle) -> c_int {
    let key = h as *mut Handle as usize;
    let mut map = locks();
    match map.get_mut(&key) {
        Some(s) if s.depth > 0 => {
            s.depth -= 1;
            if s.depth == 0 && s.file.unlock().is_err() {
                return ERR_LOCK;
            }
            0
        }
        _ => 0,
    }
}

/// Around one call on a handle (`with`): the lock of its frame when
/// locking is on (`Ok(None)`: off), exclusive for a call that may change
/// the frame, shared for a read-only one, following another holder's
/// changes first (`Ok(Some(true))`: the frame was re-read); the generation
/// is bumped by [`end_call`] only when an exclusive call changed the frame.
#[inline(always)]
pub(crate) fn begin_call(h: &mut Handle, exclusive: bool) -> Result<Option<bool>, c_int> {
    // In memory: no lock, and no call (its `None` came back through memory).
    if !h.sc.is_on_disk() {
        return Ok(None);
    }
    begin_call_on_disk(h, exclusive)
}

/// [`begin_call`] for a super-chunk on disk.
#[inline(never)]
fn begin_call_on_disk(h: &mut Handle, exclusive: bool) -> Result<Option<bool>, c_int> {
    if lock_path(h).is_none() {
        return Ok(None);
    }
    lock_in_as(h, exclusive, false, true).map(Some)
}

/// [`begin_call`] of an exclusive call that must not wait: `Err` when
/// another handle or process holds the frame's lock now. Freeing a handle
/// tidies its frame only so (C-Blosc2's free never waits for a lock: a
/// program holding `blosc2_schunk_lock` while another process frees a
/// handle must not deadlock).
pub(crate) fn try_begin_exclusive(h: &mut Handle) -> Result<Option<bool>, c_int> {
    if !h.sc.is_on_disk() || lock_path(h).is_none() {
        return Ok(None);
    }
    lock_in_as(h, true, false, false).map(Some)
}

/// The end of a call [`begin_call`] locked: bump the generation when the
/// frame `changed` (only under the exclusive lock: a shared holder never
/// writes the sidecar, other readers may hold it too), then release the
/// lock.
pub(crate) fn end_call(h: &mut Handle, changed: bool) {
    let key = h as *mut Handle as usize;
    let mut map = locks();
    if changed
        && let Some(s) = map.get_mut(&key)
        && s.depth > 0
        && s.exclusive
    {
        let mut b = [0u8; 8];
        // A new sidecar is empty: generation 0.
        if let Ok(n) = s.file.read_at(&mut b, SEQ_OFFSET) {
            let seq = if n == 8 { u64::from_le_bytes(b) } else { 0 } + 1;
            if s.file.write_at(&seq.to_le_bytes(), SEQ_OFFSET).is_ok() {
                s.seq = seq;
            }
        }
    }
    drop(map);
    unlock_in(h);
}

/// After a locked open of `s`: take the shared lock and, when the frame's
/// generation is not the one the new handle knows (none: a frame written
/// under locking), read the frame again under it (C-Blosc2 guards the
/// first read the same way). False when that read fails (the open fails).
pub(crate) fn guard_first_read(s: *mut blosc2_schunk) -> bool {
    // SAFETY: s is null or a handle just made, not yet shared.
    let Some((h, _claim)) = (unsafe { handle(s) }) else {
        return false;
    };
    if lock_path(h).is_none() {
        return true;
    }
    let key = h as *mut Handle as usize;
    locks().remove(&key);
    let r = lock_in_as(h, false, false, true);
    let seq = locks().get(&key).map_or(0, |s| s.seq);
    let ok = match r {
        Ok(true) => {
            h.sync(true);
            true
        }
        Ok(false) => seq == 0,
        Err(_) => false,
    };
    unlock_in(h);
    ok
}

/// Read the frame at `offset` of `path` (an open or a reopen). With
/// `locking`, a frame that does not read is retried (50 times, 1 ms apart,
/// as C-Blosc2 does), absorbing a writer caught half-way; each read is
/// announced to the open-race test hook
/// (`crate::internal::ctx::open_race`).
pub(crate) fn read_frame(path: &str, offset: u64, locking: bool) -> oxiblosc::Result<SChunk> {
    let tries = if locking { 50 } else { 1 };
    let mut n = 0;
    loop {
        crate::internal::ctx::open_race::before_frame_read(Path::new(path), offset);
        let r = open_options().offset(offset).open(path);
        n += 1;
        if r.is_ok() || n >= tries {
            return r;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

/// Run `f` (opening the frame at `path`) under a shared lock of its
/// sidecar when locking is on, so that no locked writer is half-way
/// through changing the frame meanwhile.
pub(crate) fn open_locked<T>(path: &str, f: impl FnOnce() -> T) -> T {
    open_locked_if(false, path, f)
}

/// [`open_locked`], locking also when `requested` (the I/O asked for it).
pub(crate) fn open_locked_if<T>(requested: bool, path: &str, f: impl FnOnce() -> T) -> T {
    let p = Path::new(path);
    if !(requested || locking_enabled()) || !p.exists() {
        return f();
    }
    let side: std::path::PathBuf = if p.is_dir() {
        p.join(".b2lock")
    } else {
        let mut s = p.as_os_str().to_os_string();
        s.push(".b2lock");
        s.into()
    };
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&side);
    match file {
        Ok(file) if file.lock_shared().is_ok() => {
            let r = f();
            let _ = file.unlock();
            r
        }
        _ => f(),
    }
}

/// Forget the lock state of a handle about to be freed (releasing its
/// lock if held).
pub(crate) fn forget_lock(schunk: *mut blosc2_schunk) {
    locks().remove(&(schunk as usize));
    REQUESTED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(&(schunk as usize));
}

/// Run `f` on the super-chunk behind `schunk` under its lock (exclusive
/// when `write`), after following changes other handles made on disk; the
/// C view is refreshed after. `Err(code)` for a null handle or a lock
/// failure.
pub(crate) fn with_locked<T>(
    schunk: *mut blosc2_schunk,
    write: bool,
    f: impl FnOnce(&mut SChunk) -> T,
) -> Result<T, c_int> {
    // SAFETY: schunk is null or a live super-chunk from this library.
    let Some((h, _claim)) = (unsafe { handle(schunk) }) else {
        return Err(err::NULL_POINTER);
    };
    let forced = lock_in(h, write)?;
    if !forced {
        h.refresh_if_stale();
    }
    // A panic inside still releases the lock (then goes on to the guard).
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(&mut h.sc)));
    h.stamp = disk_stamp(&h.sc);
    if write {
        // Any chunks may have changed: C's `data` array (when the handle
        // keeps one) keeps the copies still current, by chunk stamp.
        h.data_edit.note(super::DataEdit::All);
    }
    h.sync(true);
    let u = unlock_in(h);
    let r = r.unwrap_or_else(|p| std::panic::resume_unwind(p));
    if u < 0 {
        return Err(u);
    }
    Ok(r)
}

/// Wrap a super-chunk made by the b2nd API in a new handle. One in memory
/// is `contiguous` as asked (C's storage flag: without it, C sees the
/// chunks through its `data` array, pointers into the frame, and no
/// frame).
pub(crate) fn handle_of(
    sc: SChunk,
    cparams: blosc2_cparams,
    dparams: blosc2_dparams,
    urlpath: Option<&str>,
    contiguous: bool,
) -> *mut blosc2_schunk {
    let (contiguous, in_frame) = match sc.storage() {
        oxiblosc::schunk::Storage::Directory(_) => (false, false),
        oxiblosc::schunk::Storage::Memory => (contiguous, !contiguous),
        _ => (true, false),
    };
    Handle::boxed(sc, cparams, dparams, urlpath, contiguous, in_frame)
}

/// Wrap an opened super-chunk (parameters from the super-chunk).
pub(crate) fn handle_of_opened(sc: SChunk, urlpath: Option<&str>) -> *mut blosc2_schunk {
    lifecycle::wrap_opened(Ok(sc), urlpath)
}

/// `blosc2_schunk_lock`: take the exclusive frame lock and hold it across
/// several operations (they nest on it). A no-op (0) without locking
/// (`BLOSC_LOCKING`) or for a super-chunk not on disk.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_schunk_lock(schunk: *mut blosc2_schunk) -> c_int {
    guard(err::FAILURE, || {
        // SAFETY: schunk is null or a live super-chunk from this library.
        let Some((h, _claim)) = (unsafe { handle(schunk) }) else {
            return err::NULL_POINTER;
        };
        match lock_in(h, true) {
            Ok(reopened) => {
                if reopened {
                    h.sync(true);
                }
                0
            }
            Err(e) => e,
        }
    })
}

/// `blosc2_schunk_unlock`: release a lock taken by [`blosc2_schunk_lock`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_schunk_unlock(schunk: *mut blosc2_schunk) -> c_int {
    guard(err::FAILURE, || {
        // SAFETY: schunk is null or a live super-chunk from this library.
        match unsafe { handle(schunk) } {
            Some((h, _claim)) => unlock_in(h),
            None => err::NULL_POINTER,
        }
    })
}

/// `blosc2_schunk_refresh`: follow changes other handles made to the
/// frame on disk. 1 when the counters were re-synced, 0 when current.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn blosc2_schunk_refresh(schunk: *mut blosc2_schunk) -> c_int {
    guard(err::FAILURE, || {
        // SAFETY: schunk is null or a live super-chunk from this library.
        let Some((h, _claim)) = (unsafe { handle(schunk) }) else {
            return err::NULL_POINTER;
        };
        let forced = match lock_in(h, false) {
            Ok(f) => f,
            Err(e) => return e,
        };
        let reopened = forced || h.refresh_if_stale();
        if reopened {
            h.sync(true);
        }
        let u = unlock_in(h);
        if u < 0 {
            return u;
        }
        c_int::from(reopened)
    })
}
