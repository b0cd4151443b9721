//! Super-chunks: a sequence of chunks with metalayers and vlmetalayers,
//! kept as a Blosc2 frame in one of three storages:
//!
//! * memory: a contiguous frame (cframe) in a `Vec<u8>`;
//! * one file: a cframe on disk, possibly at an offset inside a larger
//!   file (bytes after the frame are never truncated or overwritten: a
//!   frame followed by other bytes is opened read-only for changes unless
//!   [`OpenOptions::discard_trailing`] says those bytes are free, and
//!   bytes written after it once it is open, or a file cut under it, make
//!   every change fail before it writes);
//! * a directory: a sparse frame (sframe), `chunks.b2frame` plus one
//!   `%08X.chunk` file per stored chunk.
//!
//! ```
//! use oxiblosc::schunk::SChunk;
//! use oxiblosc::{CParams, Codec};
//!
//! let mut sc = SChunk::builder()
//!     .cparams(CParams::default().codec(Codec::Lz4).typesize(4))
//!     .chunksize(4000)
//!     .meta("shape", b"\x91\xcd\x07\xd0")
//!     .build_memory()?;
//! let data: Vec<u8> = (0u32..2000).flat_map(|v| v.to_le_bytes()).collect();
//! for part in data.chunks(4000) {
//!     sc.append_buffer(part)?;
//! }
//! sc.vlmeta_add("author", b"me")?;
//! assert_eq!(sc.nchunks(), 2);
//! assert_eq!(sc.get_slice(10, 20)?, &data[10..20]);
//!
//! // The same bytes C-Blosc2 would read.
//! let cframe = sc.to_cframe()?;
//! let mut back = SChunk::from_cframe(cframe)?;
//! assert_eq!(back.meta_get("shape"), Some(&b"\x91\xcd\x07\xd0"[..]));
//! assert_eq!(back.vlmeta_get("author")?, Some(b"me".to_vec()));
//! # Ok::<(), oxiblosc::Error>(())
//! ```
//!
//! # When data reaches the disk
//!
//! Every change to a file-backed frame (append, insert, update, delete,
//! reorder, vlmetalayer changes, fill) is written in this order:
//!
//! 1. the new chunk bytes, then the new offsets index and the new trailer,
//!    all in bytes the current frame does not use (see *Dead space*
//!    below): the old chunks, index and trailer stay untouched;
//! 2. `fsync` (when [`SChunkBuilder::fsync`] / [`OpenOptions::fsync`] is on,
//!    the default);
//! 3. the header's fixed fields (sizes, flags, frame length) in one write of
//!    at most 87 bytes, the commit point;
//! 4. `fsync` again, then the file is cut back to the frame's end when the
//!    frame owns the end of the file.
//!
//! A write cut at any byte before step 3 leaves the old frame intact (the
//! header still describes it); after step 3 the new frame is complete. The
//! header write is assumed not to tear (it is one small write at the start
//! of the frame, inside one disk sector when the frame starts at a sector
//! boundary). With `fsync` off nothing is synced: the order of writes is
//! the same, but the OS may reach the disk in another order, so only a
//! process crash (not a power cut) is covered. A cut between steps 3 and 4
//! leaves stray bytes after the frame: it opens with the new contents, read
//! only until reopened with [`OpenOptions::discard_trailing`].
//!
//! # Dead space
//!
//! Readers find the index at `header_len + cbytes`, so the chunks section
//! may hold bytes no index entry points at. Crash-safe changes create such
//! bytes (the old index and trailer, replaced chunks); to keep them bounded,
//! each change of a file-backed frame places
//!
//! * each new chunk first-fit in a hole between live chunks, else at the
//!   start of the gap between the last live chunk and the old index, else
//!   after the frame's end (only a chunk larger than every earlier one can
//!   get there, leaving the old gap and index as a hole for later chunks);
//! * the new index and trailer a *reserve* (the largest chunk stored so
//!   far) after the last live chunk when that fits before the old index
//!   (the frame then shrinks and the file is cut after the commit), else
//!   right after the old frame's end, and at least the reserve after the
//!   last chunk.
//!
//! So after every change the gap before the index is at least the reserve
//! (the next chunk fits there) and, for appends, at most the reserve plus
//! the old and the new index+trailer: the index only moves past the old one
//! when the gap left after the new chunks is smaller than the reserve plus
//! the new index. Appending thousands of chunks therefore wastes at most
//! about one chunk and two indexes (tests/frame_space.rs checks it after
//! each of 2000 appends), and every append writes its chunk, the index, the
//! trailer and up to 87 header bytes, nothing more. Holes come from
//! updates, deletes and the rare oversized chunk, and are reused by later
//! chunks that fit. [`SChunk::trim`] drops the reserve, [`SChunk::compact`]
//! every dead byte (e.g. before handing a file over); both are crash-safe.
//! Memory frames put new chunks over the old index, as C-Blosc2 does (no
//! reserve), but write the index and trailer only when the frame is read
//! whole ([`SChunk::to_cframe`], [`SChunk::flush`]): building a super-chunk
//! of `n` chunks writes one index, not `n`. A change that leaves a memory
//! frame more dead bytes than live ones (and over 1 MiB) compacts it
//! ([`SChunk::compact`]): updated over and over, it holds at most about
//! twice its chunks (`tests/compact.rs`). Directory frames have no dead
//! space.
//!
//! Directory frames write a new chunk to a fresh `%08X.chunk` file, `fsync`
//! it, then replace `chunks.b2frame` by writing a temporary file and
//! renaming it over the old one (atomic), then remove chunk files no longer
//! referenced. Metalayers live in the header, so adding one (allowed only
//! while there are no chunks) and updating one cannot follow the order
//! above; they are old-or-new too:
//!
//! * adding one to a frame in a file writes the new (empty) frame into a
//!   copy of the file beside it, syncs it and renames it over the file
//!   (atomic; the bytes before a frame at an offset are copied along);
//! * updating one writes only the header bytes that change: in place when
//!   they lie inside one 512-byte sector of the file (one small write, the
//!   assumption the commit point above already makes), else through the
//!   same copy and rename (a cost of one file copy);
//! * directory frames replace `chunks.b2frame` as for every change.
//!
//! A frame behind a caller's [`FrameIo`] gets these header writes in place.
//!
//! The NDArray edits (`ndarray::resize`, `insert`, `append`, `set_slice`)
//! replace every chunk they change in one change of the chunk list; resize,
//! insert and append update the `b2nd` metalayer in the same commit write
//! (step 3 writes the header bytes from the fixed fields to the
//! metalayer's, when they lie in one 512-byte sector; a header too large
//! for that gets the metalayer update first, then the chunk change).
//!
//! # Failed writes
//!
//! A change that fails (`ENOSPC`, `EFBIG`, `EIO`, ...) returns
//! [`Error::Io`](crate::Error::Io) naming the storage (a file's path, a
//! [`FrameIo::describe`]) and the cause, with the `io::ErrorKind` kept; by
//! the order above the file still holds the previous frame, and copies,
//! temporary index files and new chunk files of a directory frame are
//! removed (`tests/write_faults.rs`).
//!
//! # Sharing a file
//!
//! `SChunk` is neither `Send` nor `Sync` (it may hold a caller's
//! [`FrameIo`], which need not be): each thread opens its own handle.
//! One writer and any number of readers (other handles, threads or
//! processes) may share a file frame without locks:
//!
//! * **opening** reads the header, then the index and trailer it points
//!   at, then the header again, and starts over when a commit came in
//!   between (up to 1000 times), so every open sees a complete old or new
//!   frame, never an index a later change overwrote;
//! * **after opening**, a reader keeps its frame's index: appends,
//!   vlmetalayer changes and `trim` never write over live chunk bytes, so
//!   its chunks stay readable while the writer appends; updates, deletes,
//!   reorders and `compact` (also `close` / drop when it compacts) may
//!   reuse the bytes of chunks they replace, so a reader that must see
//!   such changes reopens (an old handle reading reused bytes gets an
//!   error from the chunk checks, or the newer bytes, never a panic);
//! * two writers are not supported (nothing locks the file).
//!
//! Directory frames replace `chunks.b2frame` by a rename, so an open sees
//! the old or the new index; chunk files that a change drops are removed
//! after the rename.
//!
//! # Closing
//!
//! A file frame changed through a handle is tidied when the handle is
//! dropped, or by [`SChunk::close`] (which reports errors): the reserve is
//! trimmed, and the frame compacted when its holes exceed 1 % of its chunk
//! bytes ([`SChunk::tidy`]). A frame written in one go then has C-Blosc2's
//! size (`tests/compact.rs`).

use std::path::PathBuf;

use crate::frame::{FrameHeader, FrameIo, Metalayer, Offsets, VlMetalayer};
use crate::params::{CParams, DParams};
use crate::{Compressor, Decompressor, SpecialValue};

mod builder;
mod cframe;
mod change;
mod commit;
mod iter;
mod maintain;
mod meta;
mod open;
mod read;
mod slice;
mod space;
mod storage;
mod write;

pub use iter::ChunkIter;

pub use builder::SChunkBuilder;
pub use cframe::{CFRAME_PIECE, CframeLayout};
pub use open::OpenOptions;
use space::Space;
pub(crate) use write::Rebuild;

/// Where a change puts the new index and trailer of a file-backed frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tail {
    /// After the last chunk plus the reserve (see the module docs).
    Auto,
    /// Right after the last chunk (no reserve).
    Trim,
    /// At this section offset (compaction; no new chunks).
    At(u64),
}

/// Name of the index file of a directory frame.
pub const SFRAME_INDEX: &str = "chunks.b2frame";

/// Where a super-chunk lives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Storage {
    /// A cframe in memory.
    Memory,
    /// A cframe in a file, starting at `offset`.
    File {
        /// The file.
        path: PathBuf,
        /// Where the frame starts.
        offset: u64,
    },
    /// A sparse frame in a directory.
    Directory(PathBuf),
    /// A cframe behind a caller-supplied [`FrameIo`].
    Custom,
}

/// What `fill_special` fills with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fill<'a> {
    /// Zero bytes.
    Zeros,
    /// NaN floats (type size 4 or 8).
    Nan,
    /// Undefined content (reads as zeros here).
    Uninit,
    /// One item repeated (its length must be the type size).
    Value(&'a [u8]),
}

/// What one chunk is, for listings (`oxiblosc info`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChunkInfo {
    /// Uncompressed bytes.
    pub nbytes: usize,
    /// Stored bytes (0 for chunks only the index records).
    pub cbytes: usize,
    /// Special kind (zeros, NaN, uninit as index codes; repeated value as
    /// a stored special chunk).
    pub special: Option<SpecialValue>,
    /// Offset in the chunks section (cframe) or chunk file id (sframe);
    /// `None` for chunks only the index records.
    pub location: Option<u64>,
}

/// Which stored version of a chunk a super-chunk in memory holds (see
/// [`SChunk::chunk_stamp`]): equal stamps of one super-chunk name the same
/// chunk bytes. Opaque; compare them, hash them, keep them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ChunkStamp {
    /// The super-chunk's [`SChunk::chunk_stamp`] epoch.
    epoch: u64,
    /// The chunk's raw index entry (its place in the chunks section, or a
    /// special code).
    entry: i64,
    /// Its uncompressed size as the frame gives it (a special code's
    /// chunk is made with it).
    nbytes: Option<usize>,
}

/// The state of a super-chunk's frame in memory (see
/// [`SChunk::frame_version`]): two equal versions of one super-chunk mean
/// no byte of its frame was written, and its buffer did not move, between
/// them. Opaque; compare them, keep them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FrameVersion {
    /// The super-chunk's [`ChunkStamp`] epoch (unique in the process).
    epoch: u64,
    /// The frame storage's [`FrameIo::writes`].
    writes: u64,
}

/// Epochs of [`ChunkStamp`]s, unique in the process: a super-chunk takes one
/// when made and a new one whenever its stored chunks move.
static STAMP_EPOCHS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// A new [`ChunkStamp`] epoch.
fn next_stamp_epoch() -> u64 {
    STAMP_EPOCHS.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

enum Backend {
    Frame {
        io: Box<dyn FrameIo>,
        storage: Storage,
    },
    Dir(storage::DirFrame),
}

/// A super-chunk. See the [module docs](self).
pub struct SChunk {
    backend: Backend,
    header: FrameHeader,
    metalayers: Vec<Metalayer>,
    vlmetalayers: Vec<VlMetalayer>,
    offsets: Offsets,
    /// Sum of the stored (live) chunk sizes.
    live_cbytes: u64,
    /// Live chunk spans and free space of a file-backed cframe.
    space: Space,
    cparams: CParams,
    dparams: DParams,
    compressor: Compressor,
    decompressor: Decompressor,
    fsync: bool,
    /// Changes allowed (current edition; the frame owns the end of its file).
    writable: std::result::Result<(), String>,
    /// Why a chunk was left out at the open (deferred chunk checks, see
    /// [`OpenOptions::defer_chunk_checks`](crate::OpenOptions::defer_chunk_checks)):
    /// no new frame is written from such a super-chunk, as it would not
    /// reopen ([`SChunk::cframe_layout`], [`SChunk::write_cframe`]).
    unfit_chunk: Option<String>,
    /// Bytes after a persistent frame's end are free (opened with
    /// [`OpenOptions::discard_trailing`]): changes may overwrite them. Else
    /// every change first checks that the storage still ends where the
    /// frame does ([`SChunk::check_editable`]).
    trailing_free: bool,
    /// A file-backed frame changed since it was opened or last tidied:
    /// [`SChunk::close`] (or dropping it) trims its free space.
    tidy_on_close: bool,
    /// Dropping the handle tidies (see [`SChunk::set_tidy_on_drop`]).
    tidy_on_drop: bool,
    /// A memory frame's index and trailer are not written yet (changes of
    /// chunks leave them to [`SChunk::to_cframe`]: rewriting the whole
    /// index per append made building a super-chunk quadratic). Its
    /// header, chunks and `cbytes` are current; its `frame_len` ends at
    /// the chunks section.
    tail_stale: bool,
    /// The epoch of this super-chunk's [`ChunkStamp`]s: new when made and
    /// at every compaction (the only change that moves stored chunks of a
    /// frame in memory, whose new chunks always go after the last).
    stamp_epoch: u64,
}

impl std::fmt::Debug for SChunk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SChunk")
            .field("storage", &self.storage())
            .field("nchunks", &self.nchunks())
            .field("nbytes", &self.nbytes())
            .field("header", &self.header)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::Frame;

    #[test]
    fn empty_memory_frame_is_132_bytes() {
        let mut sc = SChunk::builder()
            .cparams(CParams::default().typesize(4).codec(crate::Codec::Zstd))
            .build_memory()
            .unwrap();
        let b = sc.to_cframe().unwrap();
        assert_eq!(b.len(), 132);
        let f = Frame::parse(&b).unwrap();
        assert_eq!(f.header.chunksize, -1);
        assert_eq!(f.header.codec_flags, 0x55);
    }
}
