#!/usr/bin/env python3
"""C's side of fuzz/c-diff.sh: the same reports as oxiblosc-c-diff (see
src/main.rs), made by the real C-Blosc2 3.3.5 (libblosc2.so from
python-blosc2's wheel, through ctypes) or, for `encode1` and `same1`,
C-Blosc 1.21 (python-blosc). Each input runs in a forked child: C crashes (reported as
`CRASH <signal>`) and hangs (20 s) end that input only.

    oracle.py chunk|frame|nd  < paths       one line per input (frame, nd: by
                                            path for directories and *.f)
    oracle.py encode DIR                    C-Blosc2 decodes DIR/*.chunk
    oracle.py encode1 DIR                   C-Blosc 1.21 decodes the Blosc1 ones
    oracle.py encodef DIR                   C-Blosc2 reads DIR's frames (encode-frame)
    oracle.py same DIR                      C-Blosc2 compresses encode's inputs: its chunks against ours
    oracle.py same1 DIR                     C-Blosc 1.21 likewise, for the Blosc1 ones
    oracle.py capi1 DIR                     our C ABI's blosc_compress (ORACLE_LIB) of
                                            the Blosc1 ones: against our Rust chunks
    oracle.py samef DIR                     C-Blosc2 makes encode-frame's frames: against ours
    oracle.py append DIR SRC                C-Blosc2 appends to copies of SRC's (encode-frame)

An `encode` line is `<name> ok`, or `<name> RET <code>` / `DIFF <n> ...`
with the parameters, when C's result is not our decompression (`.back`).
"""

import ctypes
import glob
import hashlib
import os
import signal
import sys
import tempfile

CAP = 16 << 20


LIBC = ctypes.CDLL(None)
LIBC.free.argtypes = [ctypes.c_void_p]


def h(b):
    return hashlib.sha256(b).hexdigest()[:16]


def load():
    """C-Blosc2's libblosc2.so from python-blosc2's wheel, or the library
    ORACLE_LIB names (our C ABI, `capi/`: `c-diff.sh`'s capi modes)."""
    path = os.environ.get("ORACLE_LIB")
    if not path:
        import blosc2

        here = os.path.dirname(blosc2.__file__)
        path = sorted(glob.glob(os.path.join(here, "lib/libblosc2.so*")))[0]
    lib = ctypes.CDLL(path)
    lib.blosc2_init()
    return lib


class Meta(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("content", ctypes.POINTER(ctypes.c_uint8)),
                ("content_len", ctypes.c_int32)]


class SChunk(ctypes.Structure):
    """The head of blosc2_schunk (blosc2.h, C-Blosc2 3.3)."""

    _fields_ = [
        ("version", ctypes.c_uint8), ("compcode", ctypes.c_uint8), ("compcode_meta", ctypes.c_uint8),
        ("clevel", ctypes.c_uint8), ("splitmode", ctypes.c_uint8), ("typesize", ctypes.c_int32),
        ("blocksize", ctypes.c_int32), ("chunksize", ctypes.c_int32), ("flags2", ctypes.c_uint8),
        ("use_dict", ctypes.c_uint8), ("filters", ctypes.c_uint8 * 6), ("filters_meta", ctypes.c_uint8 * 6),
        ("nchunks", ctypes.c_int64), ("current_nchunk", ctypes.c_int64), ("nbytes", ctypes.c_int64),
        ("cbytes", ctypes.c_int64), ("data", ctypes.c_void_p), ("data_len", ctypes.c_size_t),
        ("storage", ctypes.c_void_p), ("frame", ctypes.c_void_p), ("cctx", ctypes.c_void_p),
        ("dctx", ctypes.c_void_p), ("metalayers", ctypes.POINTER(Meta) * 16),
        ("nmetalayers", ctypes.c_uint16), ("vlmetalayers", ctypes.POINTER(Meta) * 8192),
        ("nvlmetalayers", ctypes.c_int16),
    ]


class NdHead(ctypes.Structure):
    """The head of b2nd_array_t (b2nd.h, B2ND_MAX_DIM 16)."""

    _fields_ = [
        ("sc", ctypes.POINTER(SChunk)), ("shape", ctypes.c_int64 * 16), ("chunkshape", ctypes.c_int32 * 16),
        ("extshape", ctypes.c_int64 * 16), ("blockshape", ctypes.c_int32 * 16),
        ("extchunkshape", ctypes.c_int64 * 16), ("nitems", ctypes.c_int64), ("chunknitems", ctypes.c_int32),
        ("extnitems", ctypes.c_int64), ("blocknitems", ctypes.c_int32), ("extchunknitems", ctypes.c_int64),
        ("ndim", ctypes.c_int8),
    ]


def declare(lib):
    i32p = ctypes.POINTER(ctypes.c_int32)
    sc = ctypes.POINTER(SChunk)
    lib.blosc2_cbuffer_sizes.argtypes = [ctypes.c_void_p, i32p, i32p, i32p]
    lib.blosc2_decompress.argtypes = [ctypes.c_char_p, ctypes.c_int32, ctypes.c_void_p, ctypes.c_int32]
    lib.blosc2_schunk_from_buffer.restype = sc
    lib.blosc2_schunk_from_buffer.argtypes = [ctypes.c_char_p, ctypes.c_int64, ctypes.c_bool]
    lib.blosc2_schunk_append_buffer.restype = ctypes.c_int64
    lib.blosc2_schunk_append_buffer.argtypes = [sc, ctypes.c_void_p, ctypes.c_int32]
    lib.blosc2_schunk_free.argtypes = [sc]
    lib.blosc2_schunk_delete_chunk.restype = ctypes.c_int64
    lib.blosc2_schunk_delete_chunk.argtypes = [sc, ctypes.c_int64]
    lib.blosc2_schunk_open.restype = sc
    lib.blosc2_schunk_open.argtypes = [ctypes.c_char_p]
    lib.blosc2_schunk_get_chunk.argtypes = [sc, ctypes.c_int64, ctypes.POINTER(ctypes.c_void_p),
                                            ctypes.POINTER(ctypes.c_bool)]
    lib.blosc2_schunk_decompress_chunk.argtypes = [sc, ctypes.c_int64, ctypes.c_void_p, ctypes.c_int32]
    lib.blosc2_vlmeta_get.argtypes = [sc, ctypes.c_char_p, ctypes.POINTER(ctypes.POINTER(ctypes.c_uint8)), i32p]
    lib.b2nd_from_cframe.argtypes = [ctypes.c_char_p, ctypes.c_int64, ctypes.c_bool,
                                     ctypes.POINTER(ctypes.POINTER(NdHead))]
    lib.blosc2_schunk_to_buffer.restype = ctypes.c_int64
    lib.blosc2_schunk_to_buffer.argtypes = [sc, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_bool)]
    lib.b2nd_open.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.POINTER(NdHead))]
    lib.b2nd_to_cbuffer.argtypes = [ctypes.POINTER(NdHead), ctypes.c_void_p, ctypes.c_int64]
    lib.blosc2_schunk_new.restype = sc
    lib.blosc2_schunk_new.argtypes = [ctypes.POINTER(Storage)]
    lib.blosc2_create_cctx.restype = ctypes.c_void_p
    lib.blosc2_create_cctx.argtypes = [c_params_type()]
    lib.blosc2_compress_ctx.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int32, ctypes.c_void_p,
                                        ctypes.c_int32]
    lib.blosc2_free_ctx.argtypes = [ctypes.c_void_p]
    lib.blosc2_vldecompress_ctx.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int32,
                                            ctypes.POINTER(ctypes.c_void_p), i32p, ctypes.c_int32]


def sizes(lib, p):
    nb, cb, bs = ctypes.c_int32(), ctypes.c_int32(), ctypes.c_int32()
    rc = lib.blosc2_cbuffer_sizes(p, ctypes.byref(nb), ctypes.byref(cb), ctypes.byref(bs))
    return rc, nb.value


def chunk(lib, data):
    n = 0
    if len(data) >= 16:
        rc, nb = sizes(lib, data)
        if rc >= 0 and nb > CAP:
            return "SKIP"
        n = max(nb, 0)
    dest = ctypes.create_string_buffer(n + 1)
    r = lib.blosc2_decompress(data, len(data), dest, n)
    return f"ERR\t{r}" if r < 0 else f"OK\t{r}\t{h(dest.raw[:r])}"


def by_path(path):
    """Opened by its path, as oxiblosc-c-diff does: a directory (a sparse
    frame) or a file whose name ends in `.f` (a file frame)."""
    return os.path.isdir(path) or path.endswith(".f")


def frame(lib, path):
    if by_path(path):
        sc = lib.blosc2_schunk_open(path.encode())
    else:
        data = open(path, "rb").read()
        sc = lib.blosc2_schunk_from_buffer(data, len(data), True)
    if not sc:
        return "ERR\tNULL"
    s = sc.contents
    metas = []
    for i in range(min(s.nmetalayers, 16)):
        m = s.metalayers[i].contents
        metas.append(f"{m.name.decode('latin1')}={h(ctypes.string_at(m.content, m.content_len))}")
    vls = []
    for i in range(min(max(s.nvlmetalayers, 0), 8192)):
        name = s.vlmetalayers[i].contents.name
        p, n = ctypes.POINTER(ctypes.c_uint8)(), ctypes.c_int32()
        rc = lib.blosc2_vlmeta_get(sc, name, ctypes.byref(p), ctypes.byref(n))
        vls.append(f"{name.decode('latin1')}=" + (h(ctypes.string_at(p, n.value)) if rc >= 0 else f"E({rc})"))
    out = f"OK\t{s.nchunks}\tmeta[{','.join(metas)}]\tvlmeta[{','.join(vls)}]"
    for i in range(min(s.nchunks, 64)):
        p, needs_free = ctypes.c_void_p(), ctypes.c_bool()
        if lib.blosc2_schunk_get_chunk(sc, i, ctypes.byref(p), ctypes.byref(needs_free)) < 0:
            out += "\tE(get_chunk)"
            continue
        rc, nb = sizes(lib, p)
        if rc < 0:
            out += f"\tE({rc})"
            continue
        if nb > CAP:
            out += "\tSKIP"
            continue
        hdr = ctypes.string_at(p, 32)
        if vl_delta(hdr):
            out += "\t" + vl_blocks(lib, s.dctx, p, hdr, nb)
            continue
        dest = ctypes.create_string_buffer(nb + 1)
        r = lib.blosc2_schunk_decompress_chunk(sc, i, dest, nb)
        out += f"\tE({r})" if r < 0 else f"\t{r}:{h(dest.raw[:r])}"
    return out


def vl_delta(hdr):
    """Whether the chunk of 32-byte header `hdr` is a VL-block chunk
    (extended header, flags2 bit 0) with a DELTA
    filter. C-Blosc2 3.3.5's blosc2_decompress_ctx (and so
    blosc2_schunk_decompress_chunk) XORs its blocks after the first with
    the first, as for regular chunks, while its encoder and
    blosc2_vldecompress_ctx take each block's delta from itself: its own
    VL-block chunks with DELTA decode wrong through decompress_ctx from
    block 1 on (fuzz/README.md, session 51). Such chunks are read here
    through blosc2_vldecompress_ctx, C's right path."""
    return hdr[2] & 0x05 == 0x05 and hdr[30] & 0x01 and 3 in hdr[16:22]


def vl_blocks(lib, dctx, p, hdr, nbytes):
    """The blocks of the VL-block chunk at `p` (header `hdr`), decoded by
    blosc2_vldecompress_ctx and joined, as a report value (`<len>:<hash>`
    or `E(rc)`)."""
    nblocks = int.from_bytes(hdr[8:12], "little")
    cbytes = int.from_bytes(hdr[12:16], "little")
    if not 0 < nblocks <= 1 << 16:
        return "E(nblocks)"
    dests = (ctypes.c_void_p * nblocks)()
    lens = (ctypes.c_int32 * nblocks)()
    r = lib.blosc2_vldecompress_ctx(dctx, p, cbytes, dests, lens, nblocks)
    if r < 0:
        return f"E({r})"
    parts = [ctypes.string_at(dests[k], lens[k]) for k in range(r)]
    for k in range(r):
        LIBC.free(dests[k])
    out = b"".join(parts)
    return f"{len(out)}:{h(out)}" if len(out) == nbytes else f"E(vl {len(out)} of {nbytes})"


def items(lib, arr):
    """An open array's items (C order) as `<len>:<hash>`, `E(rc)` or
    `SKIP`."""
    a = arr.contents
    nbytes = a.nitems * a.sc.contents.typesize
    if nbytes > CAP:
        return "SKIP"
    buf = ctypes.create_string_buffer(max(nbytes, 1))
    rc = lib.b2nd_to_cbuffer(arr, buf, nbytes)
    return f"E({rc})" if rc < 0 else f"{nbytes}:{h(buf.raw[:nbytes])}"


def nd(lib, path):
    """`OK <shape> <chunkshape> <blockshape> <items>`; opened by its path
    (`by_path`), one more field: `mem=<items>`, the same array read from
    the contiguous frame C-Blosc2 makes of it in memory. C-Blosc2 3.3.5
    reads some arrays by path otherwise than from memory (DELTA chunks,
    blocks outside the array masked out: its own files too), so
    `compare.py` can tell its by-path reads from ours."""
    arr = ctypes.POINTER(NdHead)()
    if by_path(path):
        rc = lib.b2nd_open(path.encode(), ctypes.byref(arr))
    else:
        data = open(path, "rb").read()
        rc = lib.b2nd_from_cframe(data, len(data), True, ctypes.byref(arr))
    if rc < 0 or not arr:
        return f"ERR\t{rc}"
    a = arr.contents
    n = a.ndim
    out = f"OK\t{list(a.shape[:n])}\t{list(a.chunkshape[:n])}\t{list(a.blockshape[:n])}".replace(", ", ",")
    out += "\t" + items(lib, arr)
    if by_path(path):
        ptr, needs_free = ctypes.c_void_p(), ctypes.c_bool()
        size = lib.blosc2_schunk_to_buffer(a.sc, ctypes.byref(ptr), ctypes.byref(needs_free))
        mem = ctypes.POINTER(NdHead)()
        if size < 0:
            out += f"\tmem=E({size})"
        else:
            frame = ctypes.string_at(ptr, size)
            rc = lib.b2nd_from_cframe(frame, size, True, ctypes.byref(mem))
            out += f"\tmem=E({rc})" if rc < 0 or not mem else "\tmem=" + items(lib, mem)
    return out


def split_deltas(c):
    """Whether a Blosc2 chunk's pipeline (its extended header's filters,
    no-filter slots left out) has two DELTAs with another filter between
    them, which C-Blosc2's decoder misreads, on its own chunks too
    (tests/differential.rs `c_bugs_the_harness_tolerates`)."""
    if len(c) < 32 or c[2] & 0x05 != 0x05 or c[2] & 0x02:
        return False
    active = [f for f in c[16:22] if f != 0]
    at = [i for i, f in enumerate(active) if f == 3]
    return any(b > a + 1 for a, b in zip(at, at[1:]))


def encode(lib, base):
    chunk_ = open(base + ".chunk", "rb").read()
    back = open(base + ".back", "rb").read()
    dest = ctypes.create_string_buffer(len(back) + 1)
    r = lib.blosc2_decompress(chunk_, len(chunk_), dest, len(back))
    if r != len(back):
        return f"RET {r}"
    if dest.raw[: len(back)] != back:
        diffs = [i for i in range(len(back)) if dest.raw[i] != back[i]]
        tails = forgotten_bitshuffle_tails(chunk_)
        if all(any(a <= i < b for a, b in tails) for i in diffs):
            return "known: C-Blosc2 leaves the tails of version-2 bit-shuffled blocks"
        # Only where ours gives the data back (no TRUNC_PREC, id 4, to
        # make it lossy).
        lossy = 4 in chunk_[16:22]
        if split_deltas(chunk_) and (lossy or back == open(base + ".data", "rb").read()):
            return "known: C-Blosc2 misreads two DELTAs apart"
        return f"DIFF {len(diffs)} bytes, the first at {diffs[0]} of {len(back)}"
    return "ok"


def forgotten_bitshuffle_tails(c):
    """The bytes C-Blosc2 does not write when it decodes a Blosc1 (version
    2) bit-shuffled chunk: in a block of a multiple of 8 whole items (none
    included), those after the items (CHUNK-NOTES §14 item 9; C-Blosc 1.x
    writes them, as we do: tests/differential.rs
    `c_forgotten_bitshuffle_tails`)."""
    if len(c) < 16 or c[0] > 2 or c[2] & 0x04 == 0 or c[2] & 0x02:
        return []
    ts = max(c[3], 1)
    nbytes = int.from_bytes(c[4:8], "little")
    bs = int.from_bytes(c[8:12], "little")
    if bs == 0:
        return []
    out = []
    for start in range(0, nbytes, bs):
        size = min(bs, nbytes - start)
        items = size // ts
        if items % 8 == 0 and size % ts:
            out.append((start + items * ts, start + size))
    return out


def encodef(lib, base):
    """The frame `encode-frame` wrote (`base.frame`, from memory, or the
    sparse frame `base.d`, by path): every chunk decompressed by
    C-Blosc2, concatenated, must be `base.back`."""
    if os.path.isdir(base + ".d"):
        sc = lib.blosc2_schunk_open((base + ".d").encode())
    else:
        data = open(base + ".frame", "rb").read()
        sc = lib.blosc2_schunk_from_buffer(data, len(data), True)
    if not sc:
        return "does not open"
    back = open(base + ".back", "rb").read()
    got = bytearray()
    for i in range(sc.contents.nchunks):
        p, needs_free = ctypes.c_void_p(), ctypes.c_bool()
        clen = lib.blosc2_schunk_get_chunk(sc, i, ctypes.byref(p), ctypes.byref(needs_free))
        if clen < 0:
            return f"chunk {i}: get_chunk fails"
        rc, nb = sizes(lib, p)
        if rc < 0:
            return f"chunk {i}: sizes {rc}"
        dest = ctypes.create_string_buffer(nb + 1)
        r = lib.blosc2_schunk_decompress_chunk(sc, i, dest, nb)
        if r < 0:
            return f"chunk {i}: decompress {r}"
        if split_deltas(ctypes.string_at(p, min(clen, 32))) and \
                dest.raw[:r] != back[len(got):len(got) + r]:
            # encode-frame checked that ours gives the data back (but
            # through TRUNC_PREC).
            return f"known: chunk {i}: C-Blosc2 misreads two DELTAs apart"
        got += dest.raw[:r]
    if bytes(got) != back:
        if len(got) != len(back):
            return f"DIFF {len(got)} bytes, {len(back)} expected"
        first = next(i for i in range(len(back)) if got[i] != back[i])
        return f"DIFF at byte {first} of {len(back)}"
    return "ok"


def append(lib, path):
    """C-Blosc2 appends a chunk to the frame at `path` (a file or a
    directory, by path), after deleting a short last chunk: one chunk of
    the frame's chunk size (or 1,000 items) of a pattern, with the frame's
    own parameters; then reads it back. `ok`, `skip: <why>` where C-Blosc2's own bugs or rules are met
    (its own frames fail the same way), or `FAIL: <what>`."""
    sc = lib.blosc2_schunk_open(path.encode())
    if not sc:
        return "skip: does not open (the frame reports say why)"
    s = sc.contents
    n, cs, ts = s.nchunks, s.chunksize, max(s.typesize, 1)
    active = [f for f in s.filters if f != 0]
    if len(active) >= 3 or active.count(3) >= 2:
        # Its encoder writes a third filter's output into its input, and
        # its decoder misreads two DELTAs (tests/differential.rs
        # c_bugs_the_harness_tolerates).
        return "skip: three filters or two DELTAs"
    if cs > 0 and s.nbytes % cs:
        # After a short last chunk it refuses to append, or appends and
        # leaves a frame of variable-size chunks whose index codes it can no
        # longer read (its own frames too): tests/frame_interop.rs
        # c_appends_after_our_short_last_zeros_chunk. So it deletes that
        # chunk first.
        rc = lib.blosc2_schunk_delete_chunk(sc, n - 1)
        if rc < 0:
            return f"FAIL: delete of the short last chunk fails ({rc})"
        n -= 1
    size = cs if 0 < cs <= CAP else 1000 * ts
    data = bytes((i * 7 + i // ts) & 0xFF for i in range(size))
    rc = lib.blosc2_schunk_append_buffer(sc, data, size)
    if rc < 0:
        return f"FAIL: append fails ({rc})"
    dest = ctypes.create_string_buffer(size + 1)
    r = lib.blosc2_schunk_decompress_chunk(sc, n, dest, size)
    if r == -9 and s.use_dict:
        # BLOSC2_ERROR_CODEC_DICT: its own super-chunks of these
        # parameters fail so too.
        return "skip: its dictionary chunk does not decode"
    lossy = 4 in active  # TRUNC_PREC: the length only
    if r != size or (not lossy and dest.raw[:size] != data):
        return f"FAIL: C misreads the chunk it appended ({r})"
    lib.blosc2_schunk_free(sc)
    return "ok"


class Storage(ctypes.Structure):
    """C-Blosc2's blosc2_storage."""

    _fields_ = [
        ("contiguous", ctypes.c_bool),
        ("urlpath", ctypes.c_char_p),
        ("cparams", ctypes.c_void_p),
        ("dparams", ctypes.c_void_p),
        ("io", ctypes.c_void_p),
    ]


_CPARAMS = []


def c_params_type():
    """blosc2_cparams as ctypes: the differential tests' (tests/support/
    cblosc2.py, which imports blosc2: not at this module's import, which
    `encode1` makes beside python-blosc 1.x alone), imported once."""
    if not _CPARAMS:
        here = os.path.dirname(os.path.abspath(__file__))
        sys.path.insert(0, os.path.join(here, "..", "..", "tests", "support"))
        from cblosc2 import CParams

        _CPARAMS.append(CParams)
    return _CPARAMS[0]


def c_cparams(f):
    """blosc2_cparams from a `.cp` file's fields (one thread), or why the
    parameters are skipped."""
    CParams = c_params_type()
    compcode, clevel, typesize, blocksize, split, use_dict, blosc1 = map(int, f[:7])
    if blosc1:
        return None, "skip: Blosc1"
    cp = CParams()
    cp.compcode, cp.clevel, cp.typesize = compcode, clevel, typesize
    cp.blocksize, cp.splitmode, cp.use_dict, cp.nthreads = blocksize, split, use_dict, 1
    active = 0
    for i, (fid, meta) in enumerate(zip(f[7].split(","), f[8].split(","))):
        fid, meta = int(fid), int(meta)
        # BYTEDELTA's meta 0 stands for the typesize, which C-Blosc2's
        # encoder wants given (python-blosc2 gives it): ours writes it.
        if fid == 35 and meta == 0:
            meta = typesize
        cp.filters[i], cp.filters_meta[i] = fid, meta
        active += fid != 0
    if active >= 3 and not os.environ.get("ORACLE_LIB"):
        # CHUNK-NOTES §8: C's pipeline of three filters or more writes into
        # its input buffer, and its chunks decode wrong (ours does not).
        return None, "skip: three filters"
    return cp, None


def samef(lib, base):
    """The frame `encode-frame` wrote in memory (`base.frame`) against
    C-Blosc2's of the same data, parameters, chunk size and threads
    (blosc2_schunk_new, append_buffer per chunk, to_buffer): `same`, or
    where they part."""
    if not os.path.exists(base + ".cp"):
        return ""
    f = open(base + ".cp").read().split()
    cp, skip = c_cparams(f)
    if skip:
        return skip
    chunksize, nthreads = int(f[9]), int(f[10])
    cp.nthreads = nthreads
    data = open(base + ".data", "rb").read()
    ours = open(base + ".frame", "rb").read()
    st = Storage(True, None, ctypes.cast(ctypes.pointer(cp), ctypes.c_void_p), None, None)
    sc = lib.blosc2_schunk_new(ctypes.byref(st))
    if not sc:
        return "C ERR\tschunk_new"
    # The chunk size set before the first append, as python-blosc2's
    # SChunk(chunksize=...) sets it (C's own API takes the first chunk's).
    sc.contents.chunksize = chunksize
    for at in range(0, len(data), chunksize):
        part = data[at:at + chunksize]
        r = lib.blosc2_schunk_append_buffer(sc, part, len(part))
        if r < 0:
            lib.blosc2_schunk_free(sc)
            return f"C ERR\tappend {r}"
    p, needs_free = ctypes.c_void_p(), ctypes.c_bool()
    n = lib.blosc2_schunk_to_buffer(sc, ctypes.byref(p), ctypes.byref(needs_free))
    theirs = ctypes.string_at(p, n) if n > 0 else b""
    lib.blosc2_schunk_free(sc)
    if n <= 0:
        return f"C ERR\tto_buffer {n}"
    if theirs == ours:
        return "same"
    if len(data) == 0:
        # No chunk: C's header keeps the chunk size -1 (it takes the size
        # of its first append), ours the one asked for.
        return "known: no chunk"
    # C's frame must open in C (with some dictionary parameters it does
    # not: C's bug, counted apart).
    sc = lib.blosc2_schunk_from_buffer(theirs, len(theirs), True)
    if not sc:
        return "C's own frame does not open"
    lib.blosc2_schunk_free(sc)
    # The chunks first, each against C's as `same` compares them.
    back = open(base + ".back", "rb").read()
    found = None
    o_chunks, t_chunks = frame_chunks(lib, ours), frame_chunks(lib, theirs)
    for i, (o, t) in enumerate(zip(o_chunks, t_chunks)):
        if o == t:
            continue
        at = i * chunksize
        part = data[at:at + chunksize]
        # Where ours stores a special chunk whole and C codes it in the
        # index (C's get_chunk then makes a chunk of its own header), before
        # the chunks' own comparison, whose known classes are of chunks
        # compressed.
        if o and len(o) >= 32 and o[31] & 0x70 and i == len(o_chunks) - 1 and len(part) < chunksize:
            # b89e05b6: a short last special chunk is stored whole (C codes
            # it in the index, and a chunk it appends then loses the frame).
            res = "known: a short last special chunk, stored whole"
        elif f[11] == "1" and o and len(o) == 32 and o[31] & 0x70 \
                and frame_chunk_stored(lib, theirs, i) is False:
            # The streaming encoder writes every chunk whole (so that
            # FrameDecoder streams its frames); C codes a zeros chunk in the
            # index and makes another one for get_chunk.
            res = "known: the streaming encoder writes a special chunk whole"
        else:
            res = compare_chunks(lib, f, o or b"", t or b"", part, back[at:at + chunksize])
        if res.startswith("DIFF") and o:
            # C's super-chunk compresses a chunk otherwise than C alone:
            # its context keeps the block size of the chunk before as a
            # forced one (a last chunk shorter than a block, or than an
            # item, differs), and with a dictionary and DELTA its first
            # chunk differs too. Ours is C's chunk compressed alone.
            alone = c_compress(lib, f, part)
            if isinstance(alone, bytes) and compare_chunks(lib, f, o, alone, part, back[at:at + chunksize]) in (
                    "same", "same but the forced block size"):
                res = "known: C's super-chunk compresses it otherwise than C alone"
        if res.startswith("DIFF"):
            return f"DIFF\tchunk {i}: {res[5:]}"
        found = found or f"chunk {i}: {res}"
    if found:
        return found
    # The header: C writes a forced block size as given, ours rounded down
    # to whole items (385a3310: C appends chunks no one reads with it); and
    # BYTEDELTA's meta 0 as the typesize it was given here (python-blosc2's
    # way), ours as 0 (the frame's typesize to C too).
    hlen = int.from_bytes(ours[11:15], "big") if len(ours) > 15 else 0
    t = bytearray(theirs)
    typesize, blocksize = int(f[2]), int(f[3])
    known = []
    if len(t) > 86 and len(ours) > 86:
        o_bs, t_bs = int.from_bytes(ours[53:57], "big"), int.from_bytes(t[53:57], "big")
        if o_bs != t_bs and t_bs == blocksize and o_bs == blocksize // typesize * typesize:
            t[53:57] = ours[53:57]
            known.append("the forced block size")
        metas = f[8].split(",")
        for i, fid in enumerate(f[7].split(",")):
            if fid == "35" and metas[i] == "0" and t[79 + i] == typesize and ours[79 + i] == 0:
                t[79 + i] = 0
                known.append("BYTEDELTA's meta")
    if bytes(t) == ours:
        return "same but " + ", ".join(dict.fromkeys(known))
    # The offsets index: the same chunk but for the order of its blocks.
    at = hlen + int.from_bytes(ours[39:47], "big") if len(ours) > 47 else len(ours)
    ci = int.from_bytes(ours[at + 12:at + 16], "little") if len(ours) >= at + 16 else 0
    if len(t) == len(ours) and ci and t[:at] == ours[:at] and t[at + ci:] == ours[at + ci:] \
            and blocks_reordered(ours[at:at + ci], bytes(t[at:at + ci])):
        return "known: C's threads wrote the offsets index's blocks in another order" + \
            "".join(", " + k for k in dict.fromkeys(known))
    m = min(len(ours), len(t))
    first = next((i for i in range(m) if ours[i] != t[i]), m)
    where = "header" if first < hlen else "index or trailer (the chunks are the same)"
    return f"DIFF\t{where}: byte {first} (header {hlen}), ours {len(ours)} bytes, C {len(t)}"


def c_compress(lib, f, data):
    """`data` compressed alone by C-Blosc2 with the `.cp` fields `f` (one
    thread, a room of its size + 32, python-blosc2's): the chunk, or C's
    error (a string: its return code, or why it did not compress)."""
    cp, skip = c_cparams(f)
    if skip:
        return skip
    ctx = lib.blosc2_create_cctx(cp)
    if not ctx:
        return "no context"
    dest = ctypes.create_string_buffer(len(data) + 32)
    r = lib.blosc2_compress_ctx(ctx, data, len(data), dest, len(data) + 32)
    lib.blosc2_free_ctx(ctx)
    return dest.raw[:r] if r > 0 else str(r)


def blocks_reordered(o, t):
    """Whether chunks `o` and `t` are the same blocks stored in another
    order: one header, one dictionary, and each block's streams the same
    bytes, where only the block starts differ. C-Blosc2's threads write a
    chunk's blocks in the order they finish (the test vectors' README says
    so of its chunks); it compresses a frame's offsets index with 4 threads
    whatever the frame's (CONTAINER-NOTES), and an index of 4 blocks of
    16 KiB came out in another order 2 times in 120 runs (session 49)."""
    if len(o) != len(t) or len(o) < 32 or o[:32] != t[:32]:
        return False
    nbytes, bs, cbytes = (int.from_bytes(o[a:a + 4], "little") for a in (4, 8, 12))
    if bs <= 0 or cbytes != len(o) or o[2] & 0x02 or o[31] & 0x70:
        return False
    n = -(-nbytes // bs)
    end = 32 + 4 * n
    if len(o) < end:
        return False

    def blocks(c):
        starts = [int.from_bytes(c[32 + 4 * i:36 + 4 * i], "little") for i in range(n)]
        if not all(end <= x <= len(c) for x in starts):
            return None
        after = sorted(set(starts)) + [len(c)]
        ends = [after[after.index(x) + 1] for x in starts]
        return starts, [c[x:e] for x, e in zip(starts, ends)]

    bo, bt = blocks(o), blocks(t)
    if bo is None or bt is None or bo[0] == bt[0]:
        return False
    lo, lt = min(bo[0], default=end), min(bt[0], default=end)
    return lo == lt and o[end:lo] == t[end:lt] and bo[1] == bt[1]


def frame_chunk_stored(lib, frame, i):
    """Whether chunk `i` of a frame in memory is stored (its offsets index
    entry not a special code), or None when that cannot be told."""
    hlen = int.from_bytes(frame[11:15], "big")
    cbytes = int.from_bytes(frame[39:47], "big")
    at = hlen + cbytes
    index = frame[at:]
    if len(index) < 32:
        return None
    nb = int.from_bytes(index[4:8], "little")
    out = ctypes.create_string_buffer(nb + 1)
    r = lib.blosc2_decompress(index, int.from_bytes(index[12:16], "little"), out, nb)
    if r < 0 or r < 8 * (i + 1):
        return None
    return int.from_bytes(out.raw[8 * i:8 * i + 8], "little", signed=True) >= 0


def frame_chunks(lib, frame):
    """The compressed chunks of a frame in memory, as C-Blosc2 gives them
    (None for one it cannot get)."""
    sc = lib.blosc2_schunk_from_buffer(frame, len(frame), True)
    if not sc:
        return []
    out = []
    for i in range(sc.contents.nchunks):
        p, needs_free = ctypes.c_void_p(), ctypes.c_bool()
        if lib.blosc2_schunk_get_chunk(sc, i, ctypes.byref(p), ctypes.byref(needs_free)) < 0:
            out.append(None)
            continue
        nb, cb, bs = ctypes.c_int32(), ctypes.c_int32(), ctypes.c_int32()
        if lib.blosc2_cbuffer_sizes(p, ctypes.byref(nb), ctypes.byref(cb), ctypes.byref(bs)) < 0:
            out.append(None)
            continue
        out.append(ctypes.string_at(p, cb.value))
    lib.blosc2_schunk_free(sc)
    return out


def same(lib, base):
    """The chunk `encode` wrote (`base.chunk`) against C-Blosc2's of the
    same data (`base.data`) with the same parameters (`base.cp`), one
    thread, a destination of the data's size + 32 (python-blosc2's): `same`,
    or where they part."""
    f = open(base + ".cp").read().split()
    _, skip = c_cparams(f)
    if skip:
        return skip
    data = open(base + ".data", "rb").read()
    theirs = c_compress(lib, f, data)
    if isinstance(theirs, str):
        return f"C ERR\t{theirs}"
    ours = open(base + ".chunk", "rb").read()
    back = open(base + ".back", "rb").read()
    return compare_chunks(lib, f, ours, theirs, data, back)


def compare_chunks(lib, f, ours, theirs, data, back):
    """Our chunk of `data` against C's (parameters: the `.cp` fields `f`;
    `back`: what ours decodes to): `same`, a known difference, or DIFF."""
    typesize, blocksize, use_dict = int(f[2]), int(f[3]), int(f[5])
    if theirs == ours:
        return "same"
    if blocks_reordered(ours, theirs):
        return "known: C's threads wrote the blocks in another order"
    # CHUNK-NOTES §2: C writes a forced block size in the header (at most
    # the data's size) where it compressed with it rounded down to whole
    # items; ours writes the size it used.
    n = len(data)
    if blocksize > 0 and len(ours) >= 32 and len(theirs) >= 32:
        used = min(blocksize, n)
        used = used // typesize * typesize if used > typesize else used
        used = 1 if n < typesize else used
        head = min(blocksize, n) if n > 0 else blocksize
        if (int.from_bytes(theirs[8:12], "little") == head and
                int.from_bytes(ours[8:12], "little") == used and
                theirs[:8] + ours[8:12] + theirs[12:] == ours):
            return "same but the forced block size"
    # C's own chunk, decoded by C: when it does not give the data back
    # (lossless) or what ours decodes to (TRUNC_PREC), C's encoder is wrong.
    out = ctypes.create_string_buffer(n + 1)
    rc = lib.blosc2_decompress(theirs, len(theirs), out, n)
    if rc != n:
        return f"C's own chunk fails ({rc})"
    if out.raw[:n] != back:
        return "C's own chunk decodes to other bytes"
    # Known and kept (tests/differential.rs): a dictionary asked for on an
    # input under 32 bytes, where C keeps the bits of its discarded attempt
    # (`c_dict_tiny`); a dictionary with a forced block of part items, which
    # C samples as if split and ours never splits (CHUNK-NOTES §2).
    used = min(blocksize, n) if blocksize > 0 else 0
    if use_dict and n < 32:
        return "known: a dictionary on an input under 32 bytes"
    if use_dict and used > 0 and (used < typesize or used % typesize):
        return "known: a dictionary with a forced block of part items"
    fields = [("flags", 2, 3), ("typesize", 3, 4), ("nbytes", 4, 8), ("blocksize", 8, 12),
              ("cbytes", 12, 16), ("filters", 16, 22), ("udcodec", 22, 23), ("codec_meta", 23, 24),
              ("filters_meta", 24, 30), ("byte30", 30, 31), ("blosc2_flags", 31, 32)]
    parts = []
    for name, a, b in fields:
        o, t = ours[a:b], theirs[a:b]
        if o != t:
            v = (lambda x: int.from_bytes(x, "little")) if b - a == 4 else (lambda x: x.hex())
            parts.append(f"{name} {v(o)}/{v(t)}")
    if not parts:
        n = min(len(ours), len(theirs))
        first = next((i for i in range(n) if ours[i] != theirs[i]), n)
        parts.append(f"body at byte {first}")
    return "DIFF\t" + ", ".join(parts) + f" (ours/C; ours {len(ours)} bytes, C {len(theirs)})"


def encode1(_lib, base):
    import blosc

    chunk_ = open(base + ".chunk", "rb").read()
    if len(chunk_) < 16 or chunk_[0] != 2:
        return None
    back = open(base + ".back", "rb").read()
    got = blosc.decompress(chunk_)
    return "ok" if got == back else f"DIFF ({len(got)} bytes, {len(back)} expected)"


def blosc1_args(base):
    """A Blosc1 input's C-Blosc 1.x parameters from its `.cp` fields:
    (compcode, clevel, typesize, shuffle, cname, blocksize), its split mode
    set in BLOSC_SPLITMODE (C-Blosc 1.21 reads it at each call; python-blosc
    has no setter); None for a Blosc2 input. The roundtrip target's type
    sizes are bytes, within python-blosc's MAX_TYPESIZE."""
    f = open(base + ".cp").read().split()
    compcode, clevel, typesize, blocksize, split, _, blosc1 = map(int, f[:7])
    if not blosc1:
        return None
    ids = f[7].split(",")
    shuffle = 1 if "1" in ids else 2 if "2" in ids else 0
    cname = {0: "blosclz", 1: "lz4", 2: "lz4hc", 4: "zlib", 5: "zstd"}[compcode]
    os.environ["BLOSC_SPLITMODE"] = {1: "ALWAYS", 2: "NEVER", 3: "AUTO", 4: "FORWARD_COMPAT"}[split]
    return compcode, clevel, typesize, shuffle, cname, blocksize

def same1(_lib, base):
    """The Blosc1 chunk `encode` wrote (`base.chunk`) against C-Blosc 1.21's
    (python-blosc 1.11.4) of the same data with the same parameters, one
    thread: `same`, a known difference, or DIFF (as tests/blosc1_interop.rs
    compares them)."""
    import blosc

    args = blosc1_args(base)
    if args is None:
        return None
    compcode, clevel, typesize, shuffle, cname, blocksize = args
    blosc.set_blocksize(blocksize)
    blosc.set_nthreads(1)
    data = open(base + ".data", "rb").read()
    theirs = blosc.compress(data, typesize=typesize, clevel=clevel, shuffle=shuffle, cname=cname)
    ours = open(base + ".chunk", "rb").read()
    if theirs == ours:
        return "same"
    if len(ours) < 16 or len(theirs) < 16:
        return f"DIFF\tours {len(ours)} bytes, C {len(theirs)}"
    # C-Blosc 1.21 in ALWAYS split mode splits blocks its own reader reads
    # as one stream (items over 16 bytes, or under 128 of them) and cannot
    # decode the chunk: ours write one stream there and set the "not split"
    # flag (0x10), or store the chunk raw (0x02) when that stream does not
    # fit where C's split ones did.
    ts, bs = theirs[3], int.from_bytes(theirs[8:12], "little")
    c_unreadable = theirs[2] & 0x12 == 0 and not (ts <= 16 and bs // ts >= 128) and bs <= len(data)
    if c_unreadable:
        try:
            c_unreadable = blosc.decompress(theirs) != data
        except Exception:  # noqa: BLE001 - C's own chunk refused: the class
            c_unreadable = True
    # zlib and zstd are other library versions on the two sides: their
    # streams, so the memcpy bit (0x02, stored raw) and the size, may differ.
    same_lib = compcode in (0, 1, 2)

    def head(h, mask):
        h = bytearray(h[:12])
        h[2] &= ~mask
        return bytes(h)

    mask = 0x00 if same_lib else 0x02
    if c_unreadable and ours[2] & 0x12 in (0x10, 0x02):
        mask = 0x12
    if head(ours, mask) != head(theirs, mask):
        return f"DIFF\theader {ours[:16].hex()}/{theirs[:16].hex()} (ours/C)"
    if c_unreadable:
        return "known: C-Blosc 1.21 splits streams it cannot decode (ALWAYS)"
    if not same_lib:
        return f"known: another {cname} library (the same header)"
    n = min(len(ours), len(theirs))
    first = next((i for i in range(n) if ours[i] != theirs[i]), n)
    return f"DIFF\tbody at byte {first} (ours {len(ours)} bytes, C {len(theirs)})"


def capi1(lib, base):
    """Our C ABI's `blosc_compress` (the C-Blosc 1.x one, libblosc.so.1 of
    capi/; `lib`, from ORACLE_LIB) of a Blosc1 input of `encode`, with its
    parameters through `blosc_set_*` and BLOSC_SPLITMODE: `same` when it is
    the chunk our Rust encoder wrote (`base.chunk`), or where they part."""
    args = blosc1_args(base)
    if args is None:
        return None
    _, clevel, typesize, shuffle, cname, blocksize = args
    lib.blosc_set_compressor.argtypes = [ctypes.c_char_p]
    lib.blosc_set_blocksize.argtypes = [ctypes.c_size_t]
    lib.blosc_set_nthreads.argtypes = [ctypes.c_int]
    lib.blosc_compress.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_size_t, ctypes.c_size_t,
                                   ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t]
    if lib.blosc_set_compressor(cname.encode()) < 0:
        return f"ERR\tset_compressor {cname}"
    lib.blosc_set_blocksize(blocksize)
    lib.blosc_set_nthreads(1)
    data = open(base + ".data", "rb").read()
    room = len(data) + 16
    dest = ctypes.create_string_buffer(room)
    r = lib.blosc_compress(clevel, shuffle, typesize, len(data), data, dest, room)
    if r <= 0:
        return f"ERR\tblosc_compress {r}"
    theirs, ours = dest.raw[:r], open(base + ".chunk", "rb").read()
    if theirs == ours:
        return "same"
    n = min(len(ours), len(theirs))
    first = next((i for i in range(n) if ours[i] != theirs[i]), n)
    return f"DIFF\tbyte {first} (Rust {len(ours)} bytes, C ABI {len(theirs)})"


def errors(f):
    """C-Blosc2's `[error] - <message> (<source>)` lines in file f (its
    stderr with BLOSC_TRACE set), as `<message> | <message> ..`."""
    f.seek(0)
    msgs = []
    for line in f.read().decode("utf-8", "replace").splitlines():
        if line.startswith("[error] - "):
            msgs.append(line[len("[error] - "):].rsplit(" (", 1)[0].replace("\t", " "))
    return " | ".join(msgs[:4])


def in_child(fn, *args):
    """fn(*args) in a forked child: its string, or CRASH/TIMEOUT/EXC. An
    `ERR` gets C's traced errors as one more field."""
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(rfd)
        signal.alarm(20)
        # C-Blosc2 prints why it fails on stderr when BLOSC_TRACE is set
        # (read at each error).
        os.environ["BLOSC_TRACE"] = "1"
        null = os.open(os.devnull, os.O_WRONLY)
        err = tempfile.TemporaryFile()
        os.dup2(null, 1)
        os.dup2(err.fileno(), 2)
        try:
            res = fn(*args)
            if res is not None and res.startswith("ERR"):
                res += "\t" + errors(err)
        except Exception as e:  # noqa: BLE001 - reported, not raised
            res = f"EXC\t{type(e).__name__}: {e}"
        os.write(wfd, ("" if res is None else res).replace("\n", " ").encode())
        os._exit(0)
    os.close(wfd)
    chunks = []
    while True:
        b = os.read(rfd, 65536)
        if not b:
            break
        chunks.append(b)
    os.close(rfd)
    _, st = os.waitpid(pid, 0)
    if os.WIFSIGNALED(st):
        return "TIMEOUT" if os.WTERMSIG(st) == signal.SIGALRM else f"CRASH\t{os.WTERMSIG(st)}"
    return b"".join(chunks).decode()


def main():
    mode = sys.argv[1]
    if mode in ("encode", "encode1", "encodef", "same", "same1", "samef", "capi1"):
        lib = None
        if mode not in ("encode1", "same1"):
            lib = load()
            declare(lib)
        else:
            # python-blosc imported once, not in each input's child.
            import blosc  # noqa: F401
        fn = {"encode": encode, "encode1": encode1, "encodef": encodef, "same": same, "same1": same1,
              "samef": samef, "capi1": capi1}[mode]
        ext = ".back" if mode in ("encodef", "samef") else ".chunk"
        for f in sorted(glob.glob(os.path.join(sys.argv[2], "*" + ext))):
            base = f[: -len(ext)]
            res = in_child(fn, lib, base)
            if res == "":
                continue
            params = "" if res == "ok" else "\t" + open(base + ".params").read()
            print(f"{os.path.basename(base)}\t{res}{params}", flush=True)
        return
    lib = load()
    declare(lib)
    if mode == "append":
        # Copies of encode-frame's files and directories (SRC), appended to
        # by C in DIR.
        import shutil

        dest, src = sys.argv[2], sys.argv[3]
        for f in sorted(glob.glob(os.path.join(src, "*.back"))):
            base = f[: -len(".back")]
            name = os.path.basename(base)
            if os.path.isdir(base + ".d"):
                path = os.path.join(dest, name + ".s")
                shutil.copytree(base + ".d", path)
            else:
                path = os.path.join(dest, name + ".f")
                shutil.copyfile(base + ".frame", path)
            print(f"{name}\t{in_child(append, lib, path)}", flush=True)
        return
    fn = {"chunk": chunk, "frame": frame, "nd": nd}[mode]
    for path in sys.stdin.read().split("\n"):
        if path:
            arg = open(path, "rb").read() if mode == "chunk" else path
            print(f"{os.path.basename(path)}\t{in_child(fn, lib, arg)}", flush=True)


if __name__ == "__main__":
    main()
