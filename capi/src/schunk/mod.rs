//! The C-Blosc2 super-chunk and frame ABI over [`oxiblosc::schunk::SChunk`].
//!
//! A `blosc2_schunk*` handed to C points to the first field of a [`Handle`]:
//! the C-layout struct C code reads directly (nchunks, nbytes, cbytes,
//! typesize, chunksize, storage, metalayers, vlmetalayers, cctx/dctx, ...),
//! refreshed after every call that changes the super-chunk (calls that only
//! decode or copy its chunks, `chunks::with_lookup`, skip the refresh
//! unless their start applied thread counts or re-read the frame), followed
//! by the Rust super-chunk and the memory the C struct points into.
//!
//! Re-entrancy (user filter and codec callbacks get `cparams->schunk` and
//! may read it, or call `blosc2_vlmeta_get` / `blosc2_meta_get` on it,
//! while the engine call that runs them is in progress, possibly on pool
//! threads): a handle is *claimed* (`claim::claim`, a state allocated after
//! the handle, outside every `&mut Handle`) by every call that uses it.
//! `with` claims it for the engine: it borrows `&mut` only the fields the
//! engine changes (`Engine`: the `SChunk` and `data_edit`), never the whole
//! `Handle`, and publishes the handle in the `SchunkSlot` the super-chunk's
//! `CParams::context` / `DParams::context` carry, so callbacks get it.
//! While so claimed, the C view (`c`, `cparams`, `dparams`, `metas`,
//! `vlmetas`) is only read: re-entrant calls read it through shared
//! references to those fields (`View`), and every other re-entrant call
//! (any that would need the `SChunk` or `&mut Handle`) is refused with an
//! error code, never aliased. Calls that take `&mut Handle` whole
//! (`claim::handle`) claim it exclusively and leave the slot empty
//! (callbacks they run get `schunk = NULL`).

#![allow(non_camel_case_types)]

use std::collections::HashMap;
use std::ffi::{CString, c_char, c_int, c_void};
use std::path::Path;
use std::sync::atomic::{AtomicPtr, Ordering};

use oxiblosc::plugins::CallContext;

use oxiblosc::schunk::{ChunkStamp, Fill, FrameVersion, SChunk};
use oxiblosc::{CParams, DParams};

use crate::common::{
    calloc_filled, guard, malloc_copy, malloc_value, slice_in, slice_out, str_arg,
};
use crate::v2::{
    CPARAMS_DEFAULTS, DPARAMS_DEFAULTS, blosc2_context, blosc2_cparams, blosc2_create_cctx,
    blosc2_create_dctx, blosc2_dparams, blosc2_free_ctx, code_of, err, to_cparams,
};

mod chunks;
mod claim;
mod data;
mod files;
mod lifecycle;
mod lock;
mod meta;
mod udio;

#[cfg(test)]
pub(crate) mod data_tests;
#[cfg(test)]
mod reentry_tests;
#[cfg(test)]
mod to_buffer_tests;
#[cfg(test)]
mod typesize_tests;

/// A new in-memory super-chunk for a test (`contiguous`: with a frame C
/// sees), from `cp` and `dp`; not null.
#[cfg(test)]
pub(crate) fn memory_schunk(
    contiguous: bool,
    cp: &mut crate::v2::blosc2_cparams,
    dp: &mut crate::v2::blosc2_dparams,
) -> *mut blosc2_schunk {
    let mut st = blosc2_storage {
        contiguous,
        urlpath: std::ptr::null_mut(),
        cparams: cp,
        dparams: dp,
        io: std::ptr::null_mut(),
    };
    // SAFETY: a valid storage (its parameters live through the call).
    let s = unsafe { blosc2_schunk_new(&mut st) };
    assert!(!s.is_null());
    s
}

pub use chunks::*;
use claim::{Boxed, handle, in_use};
pub(crate) use claim::{Use, claim};
pub(crate) use data::DataEdit;
pub use files::*;
pub use lifecycle::*;
pub use lock::*;
pub use meta::*;
pub use udio::*;

const MAX_METALAYERS: usize = 16;
const MAX_VLMETALAYERS: usize = 8 * 1024;
const METALAYER_NAME_MAXLEN: usize = 31;

/// `blosc2_io`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct blosc2_io {
    pub id: u8,
    pub name: *const c_char,
    pub params: *mut c_void,
}

/// `blosc2_storage`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct blosc2_storage {
    pub contiguous: bool,
    pub urlpath: *mut c_char,
    pub cparams: *mut blosc2_cparams,
    pub dparams: *mut blosc2_dparams,
    pub io: *mut blosc2_io,
}

/// `blosc2_metalayer`.
#[repr(C)]
pub struct blosc2_metalayer {
    pub name: *mut c_char,
    pub content: *mut u8,
    pub content_len: i32,
}

/// `blosc2_schunk`, laid out as `blosc2.h` declares it.
#[repr(C)]
pub struct blosc2_schunk {
    pub version: u8,
    pub compcode: u8,
    pub compcode_meta: u8,
    pub clevel: u8,
    pub splitmode: u8,
    pub typesize: i32,
    pub blocksize: i32,
    pub chunksize: i32,
    pub flags2: u8,
    pub use_dict: u8,
    pub filters: [u8; 6],
    pub filters_meta: [u8; 6],
    pub nchunks: i64,
    pub current_nchunk: i64,
    pub nbytes: i64,
    pub cbytes: i64,
    pub data: *mut *mut u8,
    pub data_len: usize,
    pub storage: *mut blosc2_storage,
    pub frame: *mut c_void,
    pub cctx: *mut blosc2_context,
    pub dctx: *mut blosc2_context,
    pub metalayers: [*mut blosc2_metalayer; MAX_METALAYERS],
    pub nmetalayers: u16,
    pub vlmetalayers: [*mut blosc2_metalayer; MAX_VLMETALAYERS],
    pub nvlmetalayers: i16,
    pub tuner_params: *mut c_void,
    pub tuner_id: c_int,
    pub ndim: i8,
    pub blockshape: *mut i64,
    pub view: bool,
    pub change_tick: i64,
}

const _: () = assert!(std::mem::size_of::<blosc2_schunk>() == 65840);
const _: () = assert!(std::mem::offset_of!(blosc2_schunk, nchunks) == 40);
const _: () = assert!(std::mem::offset_of!(blosc2_schunk, storage) == 88);
const _: () = assert!(std::mem::offset_of!(blosc2_schunk, metalayers) == 120);
const _: () = assert!(std::mem::offset_of!(blosc2_schunk, nmetalayers) == 248);
const _: () = assert!(std::mem::offset_of!(blosc2_schunk, nvlmetalayers) == 65792);
const _: () = assert!(std::mem::offset_of!(blosc2_schunk, change_tick) == 65832);
const _: () = assert!(std::mem::size_of::<blosc2_storage>() == 40);
const _: () = assert!(std::mem::size_of::<blosc2_io>() == 24);
const _: () = assert!(std::mem::size_of::<blosc2_metalayer>() == 24);

/// A metalayer as C sees it, with the memory its pointers point into.
pub(crate) struct MetaC {
    c: blosc2_metalayer,
    _name: CString,
    _content: Vec<u8>,
}

impl MetaC {
    /// The stored content (for a vlmetalayer, its compressed chunk).
    pub(crate) fn content(&self) -> &[u8] {
        &self._content
    }

    /// Whether this is the metalayer `name` holding `content`.
    fn is(&self, name: &str, content: &[u8]) -> bool {
        self._name.as_bytes() == name.as_bytes() && self._content == content
    }

    /// Whether `held` are the metalayers `now` (name, content), in order.
    fn hold<'a>(held: &[MetaC], now: impl ExactSizeIterator<Item = (&'a str, &'a [u8])>) -> bool {
        held.len() == now.len() && held.iter().zip(now).all(|(m, (n, c))| m.is(n, c))
    }

    fn new(name: &str, content: &[u8]) -> MetaC {
        // Names hold no NUL: the frame reader ends them at the first one and
        // `SChunk::meta_add`/`vlmeta_add` refuse them. Should one ever hold
        // a NUL, C gets an empty name rather than a panic.
        let name = CString::new(name).unwrap_or_default();
        let mut content = content.to_vec();
        let mut m = MetaC {
            c: blosc2_metalayer {
                name: std::ptr::null_mut(),
                content: std::ptr::null_mut(),
                content_len: content.len() as i32,
            },
            _name: name,
            _content: Vec::new(),
        };
        m.c.content = content.as_mut_ptr();
        m._content = content;
        m.c.name = m._name.as_ptr() as *mut c_char;
        m
    }
}

/// What a `blosc2_schunk*` points to (the C struct first).
#[repr(C)]
pub struct Handle {
    c: blosc2_schunk,
    sc: SChunk,
    storage: blosc2_storage,
    cparams: blosc2_cparams,
    dparams: blosc2_dparams,
    io: blosc2_io,
    urlpath: Option<CString>,
    metas: Vec<MetaC>,
    vlmetas: Vec<MetaC>,
    /// For an in-memory super-chunk without a frame (C's `data` array):
    /// a copy of each chunk, and the pointers C reads. `Vec`s, not
    /// `Box`es: moving a copy (an insert, [`Handle::rematch_data`]) must
    /// keep the pointers C holds to it (moving a `Box` asserts it is
    /// unique, which retires them).
    chunks: Vec<Vec<u8>>,
    /// Which version of its chunk each copy is (`SChunk::chunk_stamp`).
    stamps: Vec<Option<ChunkStamp>>,
    data_ptrs: Vec<*mut u8>,
    /// The change of chunks other than appends since `chunks` was last
    /// brought up to date.
    data_edit: DataEdit,
    /// C's `data` array points into the frame in memory instead of at
    /// copies (an NDArray's handle: see [`Handle::sync_data_in_frame`]).
    data_in_frame: bool,
    /// With `data_in_frame`: the special chunks the index alone records,
    /// made once per stamp, and the frame's version the pointers were
    /// made at (they point into the frame's bytes while it is the same).
    specials: HashMap<ChunkStamp, Vec<u8>>,
    data_version: Option<FrameVersion>,
    /// Identity and change time of the frame on disk when last seen.
    stamp: Option<DiskStamp>,
    /// The context `sc`'s parameters carry (a [`SchunkSlot`]).
    ctx: CallContext,
    /// What `c.frame` points to when the super-chunk has a frame.
    frame: crate::internal::frame::blosc2_frame_s,
    /// This handle's pointer as made with its allocation, which the C view
    /// hands out (`cparams.schunk`, `frame->schunk`): one made from a
    /// reference to the handle would reach the handle only, not the claim
    /// state after it (`claim::Boxed`).
    me: *mut blosc2_schunk,
}

/// The super-chunk handed to user filter and codec callbacks: this handle
/// while [`with`] runs the engine on it, else null.
pub(crate) struct SchunkSlot(AtomicPtr<blosc2_schunk>);

/// The fields of a [`Handle`] the engine borrows mutably while [`with`]
/// runs; everything else stays readable by callbacks.
pub(super) struct Engine<'a> {
    pub sc: &'a mut SChunk,
    pub data_edit: &'a mut DataEdit,
    pub c: &'a blosc2_schunk,
    pub cparams: &'a blosc2_cparams,
    pub dparams: &'a blosc2_dparams,
}

/// The C view of a handle, read while an engine call runs on it.
pub(super) struct View<'a> {
    pub cparams: &'a blosc2_cparams,
    pub dparams: &'a blosc2_dparams,
    pub vlmetas: &'a [MetaC],
}

impl View<'_> {
    /// The vlmetalayer `name`: its index and C view.
    pub(super) fn vlmeta(&self, name: &str) -> Option<(usize, &MetaC)> {
        self.vlmetas
            .iter()
            .enumerate()
            .find(|(_, m)| m._name.as_bytes() == name.as_bytes())
    }
}

/// The C view of the handle at `s` when an engine call ([`with`]) is using
/// it (a callback re-entering), `None` otherwise.
///
/// # Safety
/// `s` is null or a live super-chunk from this library.
pub(super) unsafe fn view_in_engine<'a>(s: *mut blosc2_schunk) -> Option<View<'a>> {
    // SAFETY: the caller's contract (checked for null first).
    if s.is_null() || unsafe { in_use(s) } != Some(Use::Engine) {
        return None;
    }
    let p = s as *mut Handle;
    // SAFETY: the handle is live and claimed by `with`, which borrows only
    // its `sc` and `data_edit` fields mutably (and the C view shared) and
    // writes none of these fields until the engine call (which waits for
    // its callbacks) returns: shared references to them alias nothing
    // mutable.
    unsafe {
        Some(View {
            cparams: &(*p).cparams,
            dparams: &(*p).dparams,
            vlmetas: &(*p).vlmetas,
        })
    }
}

/// The parameters C-Blosc2 hands a callback run for `context`: the calling
/// super-chunk's, with `schunk` set, when an engine call is running on it.
pub(crate) fn callback_params(
    context: Option<&CallContext>,
) -> Option<(blosc2_cparams, blosc2_dparams)> {
    let s = context?.get::<SchunkSlot>()?.0.load(Ordering::Acquire);
    // SAFETY: the slot holds a handle only while `with` runs the engine on
    // it (and the callbacks that read it return before it ends).
    let v = unsafe { view_in_engine(s) }?;
    let (mut cp, mut dp) = (*v.cparams, *v.dparams);
    cp.schunk = s as *mut c_void;
    dp.schunk = s as *mut c_void;
    Some((cp, dp))
}

/// Put `ctx` in the parameters of `sc` (callbacks then receive it),
/// keeping the thread counts it runs (a frame's `tcomp` / `tdecomp`
/// capped; `set_cparams(cparams().clone())` started them uncapped).
fn attach_context(sc: &mut SChunk, ctx: &CallContext) {
    sc.set_call_context(Some(ctx.clone()));
}

/// What tells that a frame on disk changed: device, inode, size and
/// modification time of the file (of a sparse frame's index file).
type DiskStamp = (u64, u64, u64, i64, i64);

// Inlined, the file's metadata asked out of line: every call asks, before
// and after, and out of line an in-memory super-chunk's `None` came back
// through memory as a narrow store that the caller's wide copy read at
// once, a store-forwarding stall (perf/README.md, session 23).
#[inline(always)]
fn disk_stamp(sc: &SChunk) -> Option<DiskStamp> {
    if !sc.is_on_disk() {
        // In memory: without copying the storage description.
        return None;
    }
    file_stamp(sc)
}

/// [`disk_stamp`] of a frame on disk.
#[inline(never)]
fn file_stamp(sc: &SChunk) -> Option<DiskStamp> {
    use oxiblosc::schunk::Storage;
    use std::os::unix::fs::MetadataExt;
    let path = match sc.storage() {
        Storage::File { path, .. } => path,
        Storage::Directory(dir) => dir.join(oxiblosc::schunk::SFRAME_INDEX),
        _ => return None,
    };
    let m = std::fs::metadata(path).ok()?;
    Some((m.dev(), m.ino(), m.size(), m.mtime(), m.mtime_nsec()))
}

impl Drop for Handle {
    fn drop(&mut self) {
        self.tidy_at_free();
        // The super-chunk's own drop never tidies: a stale view must not
        // write (see `tidy_at_free`).
        self.sc.set_tidy_on_drop(false);
        lock::forget_lock(self as *mut Handle as *mut blosc2_schunk);
        // SAFETY: the contexts were made by blosc2_create_cctx/dctx for this
        // handle and are freed only here.
        unsafe {
            blosc2_free_ctx(self.c.cctx);
            blosc2_free_ctx(self.c.dctx);
        }
    }
}

fn cparams_of_rust(p: &CParams) -> blosc2_cparams {
    let mut c = CPARAMS_DEFAULTS;
    c.compcode = p.codec.id();
    c.compcode_meta = p.codec_meta;
    c.clevel = p.clevel;
    c.use_dict = c_int::from(p.use_dict);
    c.typesize = p.typesize.min(i32::MAX as usize) as i32;
    c.nthreads = p.nthreads.min(i16::MAX as usize) as i16;
    c.blocksize = p.blocksize.min(i32::MAX as usize) as i32;
    c.splitmode = i32::from(p.splitmode.id());
    for s in 0..6 {
        c.filters[s] = p.filters[s].map_or(0, |f| f.id());
        c.filters_meta[s] = p.filters_meta[s];
        if let Some(oxiblosc::Filter::TruncPrec(m)) = p.filters[s] {
            c.filters_meta[s] = m;
        }
    }
    c
}

/// The chunk size the C view shows for `sc`: C-Blosc2's -1 before the
/// first chunk sets it, 0 for chunks of varying sizes.
fn shown_chunksize(sc: &SChunk) -> i32 {
    match sc.chunksize() {
        Some(n) => n.min(i32::MAX as usize) as i32,
        None if sc.nchunks() == 0 => -1,
        None => 0,
    }
}

impl Handle {
    /// Take a chunk size C code wrote into the view while the super-chunk
    /// has no chunks (`schunk->chunksize = n` after `blosc2_schunk_new`,
    /// as python-blosc2's `SChunk(chunksize=...)` does), as C-Blosc2 takes
    /// it: the chunks appended next are measured against it. True when it
    /// changed the super-chunk. Once there are chunks a write is not taken
    /// (the next refresh shows the super-chunk's own again), nor one the
    /// super-chunk refuses (opened read-only, a failed write).
    fn take_chunksize(&mut self) -> bool {
        let wrote = self.c.chunksize;
        if wrote == shown_chunksize(&self.sc) || self.sc.nchunks() != 0 || wrote < -1 {
            return false;
        }
        let n = usize::try_from(wrote).ok();
        self.sc.set_chunksize(n).is_ok()
    }

    fn boxed(
        sc: SChunk,
        cparams: blosc2_cparams,
        dparams: blosc2_dparams,
        urlpath: Option<&str>,
        contiguous: bool,
        data_in_frame: bool,
    ) -> *mut blosc2_schunk {
        let h = Box::new(Boxed::new(Handle {
            // SAFETY: every field of blosc2_schunk is an integer, a bool, a raw
            // pointer or an array of them: all-zero is a valid value.
            c: unsafe { std::mem::zeroed() },
            sc,
            storage: blosc2_storage {
                contiguous,
                urlpath: std::ptr::null_mut(),
                cparams: std::ptr::null_mut(),
                dparams: std::ptr::null_mut(),
                io: std::ptr::null_mut(),
            },
            cparams,
            dparams,
            io: blosc2_io {
                id: 0,
                name: c"filesystem".as_ptr(),
                params: std::ptr::null_mut(),
            },
            urlpath: urlpath.and_then(|u| CString::new(u).ok()),
            metas: Vec::new(),
            vlmetas: Vec::new(),
            chunks: Vec::new(),
            stamps: Vec::new(),
            data_ptrs: Vec::new(),
            data_edit: DataEdit::All,
            data_in_frame,
            specials: HashMap::new(),
            data_version: None,
            stamp: None,
            ctx: CallContext::new(SchunkSlot(AtomicPtr::new(std::ptr::null_mut()))),
            frame: crate::internal::frame::blosc2_frame_s::EMPTY,
            me: std::ptr::null_mut(),
        }));
        // The handle is the allocation's first field: its pointer is the
        // allocation's, and keeps its provenance (claims reach the state
        // after it through this pointer).
        let p = Box::into_raw(h) as *mut Handle;
        // SAFETY: p was just made by Box::into_raw and is uniquely owned here.
        let h = unsafe { &mut *p };
        h.me = p as *mut blosc2_schunk;
        let ctx = h.ctx.clone();
        attach_context(&mut h.sc, &ctx);
        let mut cp = h.cparams;
        cp.schunk = p as *mut c_void;
        let mut dp = h.dparams;
        dp.schunk = p as *mut c_void;
        h.c.cctx = blosc2_create_cctx(cp);
        h.c.dctx = blosc2_create_dctx(dp);
        h.c.current_nchunk = -1;
        h.stamp = disk_stamp(&h.sc);
        h.sync(true);
        p as *mut blosc2_schunk
    }

    /// When the handle is freed: C-Blosc2 updates chunks of a frame file in
    /// place and leaves it as compact as it was written; our crash-safe
    /// changes never overwrite a live chunk, so replaced chunks stay as
    /// holes and a free reserve stays before the index. A frame file this
    /// handle changed is tidied ([`SChunk::tidy`]: trimmed, or compacted
    /// when its holes pass 1 % of its chunks) under the frame's exclusive
    /// lock when locking is on (when another handle or process holds the
    /// lock, the free does not wait: the file stays as it is), and only
    /// while the frame on disk is the
    /// one this handle last wrote or read (a view another handle or
    /// process has overtaken never writes). C-Blosc2's
    /// `test_b2nd_resize` grows a file frame 100 times and wants it within
    /// 4 KiB of the frame written at once.
    fn tidy_at_free(&mut self) {
        // Nothing changed through this handle, or not a frame file: no
        // lock taken (a reader's free never waits for a writer).
        if !self.sc.tidy_pending()
            || !matches!(self.sc.storage(), oxiblosc::schunk::Storage::File { .. })
        {
            return;
        }
        let locked = match lock::try_begin_exclusive(self) {
            Ok(l) => l.is_some(),
            Err(_) => return,
        };
        let before = disk_stamp(&self.sc);
        if before.is_some() && before == self.stamp {
            let _ = self.sc.tidy();
        }
        if locked {
            let changed = disk_stamp(&self.sc) != before;
            lock::end_call(self, changed);
        }
    }

    /// C-Blosc2 reads a frame on disk through its path on every access, so
    /// a handle sees what other handles (or processes) wrote, or a frame
    /// moved over its path. Reopen when the frame on disk is not the one
    /// last seen; true when it did.
    fn refresh_if_stale(&mut self) -> bool {
        let now = disk_stamp(&self.sc);
        if now.is_none() || now == self.stamp {
            return false;
        }
        self.reopen()
    }

    /// Reopen the frame behind this handle (another handle or process
    /// changed it); false when it is not a file or directory, or does not
    /// open.
    fn reopen(&mut self) -> bool {
        use oxiblosc::schunk::Storage;
        let reopened = match &self.sc.storage() {
            Storage::File { path, offset } => match path.to_str() {
                Some(p) => lock::read_frame(p, *offset, lock::locking_on(self)),
                None => open_options().offset(*offset).open(path),
            },
            Storage::Directory(dir) => open_options().open(dir),
            _ => return false,
        };
        match reopened {
            Ok(mut sc) => {
                sc.set_dparams(self.sc.dparams().clone());
                attach_context(&mut sc, &self.ctx);
                // The replaced handle's view is stale: it must not tidy the file.
                self.sc.set_tidy_on_drop(false);
                self.sc = sc;
                self.data_edit = DataEdit::All;
                self.stamp = disk_stamp(&self.sc);
                true
            }
            Err(_) => false,
        }
    }

    fn sync(&mut self, metas: bool) {
        self.sync_data();
        let self_ptr = self.me;
        let p = self.sc.cparams().clone();
        self.cparams = cparams_of_rust(&p);
        self.cparams.schunk = self_ptr as *mut c_void;
        self.dparams.nthreads = self.sc.dparams().nthreads.min(i16::MAX as usize) as i16;
        self.dparams.schunk = self_ptr as *mut c_void;
        let c = &mut self.c;
        c.version = 3;
        c.compcode = p.codec.id();
        c.compcode_meta = p.codec_meta;
        c.clevel = p.clevel;
        c.splitmode = p.splitmode.id();
        // The frame's own typesize (any positive i32), as C-Blosc2 shows
        // it: the slice calls size C's buffers by it (`typesize_tests`).
        c.typesize = i32::try_from(self.sc.typesize()).unwrap_or(i32::MAX);
        c.blocksize = self.cparams.blocksize;
        c.use_dict = u8::from(p.use_dict);
        c.filters = self.cparams.filters;
        c.filters_meta = self.cparams.filters_meta;
        let nchunks = self.sc.nchunks();
        c.nchunks = nchunks as i64;
        c.chunksize = shown_chunksize(&self.sc);
        c.nbytes = self.sc.nbytes() as i64;
        c.cbytes = self.sc.cbytes() as i64;
        self.storage.urlpath = self
            .urlpath
            .as_ref()
            .map_or(std::ptr::null_mut(), |u| u.as_ptr() as *mut c_char);
        self.storage.cparams = &mut self.cparams;
        self.storage.dparams = &mut self.dparams;
        self.storage.io = &mut self.io;
        c.storage = &mut self.storage;
        c.frame = if self.urlpath.is_some() || self.storage.contiguous {
            self.frame
                .describe(&self.sc.storage(), self.sc.frame_header().frame_len);
            self.frame.urlpath = self.storage.urlpath;
            self.frame.schunk = self_ptr;
            &mut self.frame as *mut crate::internal::frame::blosc2_frame_s as *mut c_void
        } else {
            std::ptr::null_mut()
        };
        if metas {
            // Made anew only when they changed: C code may hold
            // `metalayers[i]` across calls (as C-Blosc2's stay put), and a
            // read should not pay for copies and 64 KiB of pointers.
            let metas_now = self.sc.metalayers();
            let metas_now = &metas_now[..metas_now.len().min(MAX_METALAYERS)];
            let same_metas = MetaC::hold(
                &self.metas,
                metas_now.iter().map(|l| (&l.name[..], &l.content[..])),
            );
            let vl_now = self.sc.vlmetalayers();
            let vl_now = &vl_now[..vl_now.len().min(MAX_VLMETALAYERS)];
            let same_vl = MetaC::hold(
                &self.vlmetas,
                vl_now.iter().map(|l| (&l.name[..], &l.chunk[..])),
            );
            if !same_metas {
                self.metas = metas_now
                    .iter()
                    .map(|m| MetaC::new(&m.name, &m.content))
                    .collect();
                let c = &mut self.c;
                c.metalayers = [std::ptr::null_mut(); MAX_METALAYERS];
                for (i, m) in self.metas.iter_mut().enumerate() {
                    c.metalayers[i] = &mut m.c;
                }
                c.nmetalayers = self.metas.len() as u16;
            }
            if !same_vl {
                let had = self.vlmetas.len();
                self.vlmetas = vl_now
                    .iter()
                    .map(|m| MetaC::new(&m.name, &m.chunk))
                    .collect();
                let c = &mut self.c;
                // The slots set before, cleared (not all 8192).
                for p in c.vlmetalayers.iter_mut().take(had) {
                    *p = std::ptr::null_mut();
                }
                for (i, m) in self.vlmetas.iter_mut().enumerate() {
                    c.vlmetalayers[i] = &mut m.c;
                }
                c.nvlmetalayers = self.vlmetas.len() as i16;
            }
            if !(same_metas && same_vl) {
                self.c.change_tick += 1;
            }
        }
    }
}

/// How frames on disk are opened: C-Blosc2 does not `fsync` after each
/// change, and neither do we (a super-chunk's files are as durable as C's).
/// As C-Blosc2 opens a frame by path without looking at its chunks past the
/// first, a frame with a damaged chunk (a sparse frame's chunk file gone, a
/// chunk that runs past the frame) opens, its other chunks readable
/// (`defer_chunk_checks`); it is read-only, where C-Blosc2 would change it
/// (capi/tests/c_interop.rs `damaged_frames_open_by_path_as_in_c_blosc2`).
pub(crate) fn open_options() -> oxiblosc::OpenOptions {
    oxiblosc::OpenOptions::new()
        .fsync(false)
        .defer_chunk_checks(true)
}

/// C-Blosc2 takes `file:///PATH` for `PATH`.
pub(crate) fn strip_file_scheme(u: &str) -> &str {
    u.strip_prefix("file:///").unwrap_or(u)
}

unsafe extern "C" {
    fn free(p: *mut c_void);
}

/// With `copy` false C-Blosc2 takes the chunk over: once stored (as a
/// copy here), free it, as C does.
fn take_over(chunk: *mut u8, copy: bool, stored: bool) {
    if !copy && stored && !chunk.is_null() {
        // SAFETY: with copy == false the caller hands us a malloc'ed chunk
        // it will not use again (C-Blosc2's contract).
        unsafe { free(chunk as *mut c_void) };
    }
}

fn params_of_storage(st: &blosc2_storage) -> Result<(blosc2_cparams, blosc2_dparams), c_int> {
    // SAFETY: the storage's pointers are null or point to C's params.
    let cp = unsafe { st.cparams.as_ref() }
        .copied()
        .unwrap_or(CPARAMS_DEFAULTS);
    // SAFETY: as above.
    let dp = unsafe { st.dparams.as_ref() }
        .copied()
        .unwrap_or(DPARAMS_DEFAULTS);
    Ok((cp, dp))
}

/// C-Blosc2 creates super-chunks that ask for a dictionary with a codec
/// that has none (the chunks are then made without one).
fn schunk_cparams(mut p: CParams) -> CParams {
    use oxiblosc::Codec;
    if p.use_dict && !matches!(p.codec, Codec::Zstd | Codec::Lz4 | Codec::Lz4Hc) {
        p.use_dict = false;
    }
    p
}
