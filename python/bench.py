#!/usr/bin/env python3
"""oxiblosc against numcodecs' Blosc and python-blosc2, from Python.

    python python/bench.py            # the full table (about 2-4 minutes)
    python python/bench.py --quick    # 64 KiB and 1 MiB only
    python python/bench.py --cli target/release/oxiblosc   # plus large buffers against the Rust API

Per call, one thread inside each call (numcodecs ``use_threads = False``,
``blosc2.set_nthreads(1)``, ``nthreads=1`` for ours), on a few realistic arrays
of 64 KiB to 64 MiB:

* Blosc1 chunks: ``numcodecs.blosc.compress/decompress`` vs
  ``oxiblosc.numcodecs.compress/decompress``;
* Blosc2 chunks: ``blosc2.compress2/decompress2`` vs ``oxiblosc.compress2/decompress2``.

Times are the median of repeated calls (at least 5, at least 0.25 s); GB/s is
uncompressed bytes per second.  Then: the per-call overhead of a 64 KiB
``Blosc.encode`` + ``Blosc.decode`` (ours vs numcodecs), and two Python threads
compressing at once against one (the GIL is released during the call).
"""

import argparse
import statistics
import threading
import time

import numpy as np

MiB = 1 << 20


def arrays(nbytes, seed=0):
    """Realistic data: a smooth float64 field, int32 counts, uint16 image noise."""
    rng = np.random.default_rng(seed)
    n8 = nbytes // 8
    x = np.linspace(0, 40 * np.pi, n8)
    field = (20 + 5 * np.sin(x) + np.cumsum(rng.normal(0, 0.01, n8))).astype("f8")
    n4 = nbytes // 4
    counts = np.cumsum(rng.poisson(3, n4)).astype("i4")
    n2 = nbytes // 2
    image = (1000 + rng.normal(0, 20, n2)).astype("u2")
    return {"f8 field": field, "i4 counts": counts, "u2 image": image}


def timeit(fn, min_time=0.25, min_calls=5):
    """Median seconds per call."""
    fn()  # warm up
    times = []
    t_end = time.perf_counter() + min_time
    while len(times) < min_calls or time.perf_counter() < t_end:
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
        if len(times) >= 200:
            break
    return statistics.median(times)


def timebest(fn, min_time=0.5, min_calls=5):
    """Fastest seconds per call (as `oxiblosc bench` reports the Rust API's)."""
    fn()
    best, calls = float("inf"), 0
    t_end = time.perf_counter() + min_time
    while calls < min_calls or time.perf_counter() < t_end:
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
        calls += 1
        if calls >= 200:
            break
    return best


def fmt_rate(nbytes, t):
    return f"{nbytes / t / 1e9:6.2f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="64 KiB and 1 MiB only")
    ap.add_argument("--cli", metavar="OXIBLOSC",
                    help="the oxiblosc command-line tool (e.g. target/release/oxiblosc): "
                         "adds a table of large buffers through Python against the Rust API "
                         "(`oxiblosc bench` on the same bytes)")
    args = ap.parse_args()

    import blosc2
    import numcodecs
    from numcodecs import blosc as nb

    import oxiblosc
    from oxiblosc import numcodecs as ob

    nb.use_threads = False
    ob.use_threads = False
    blosc2.set_nthreads(1)
    print(f"numcodecs {numcodecs.__version__} (C-Blosc {nb.VERSION_STRING}), "
          f"python-blosc2 {blosc2.__version__} (C-Blosc2 {blosc2.blosclib_version}), "
          f"oxiblosc {oxiblosc.__version__}; one thread per call\n")

    sizes = [64 * 1024, MiB] if args.quick else [64 * 1024, MiB, 16 * MiB, 64 * MiB]
    codecs = [("lz4", 5), ("zstd", 3), ("blosclz", 5)]
    b2codec = {"lz4": blosc2.Codec.LZ4, "zstd": blosc2.Codec.ZSTD,
               "blosclz": blosc2.Codec.BLOSCLZ}
    head = (f"{'size':>7} {'array':<10} {'codec':<8} {'ratio':>6} | "
            f"{'Blosc1 GB/s: numcodecs enc/dec':>31} {'ours enc/dec':>15} | "
            f"{'Blosc2 GB/s: blosc2 enc/dec':>28} {'ours enc/dec':>15}")
    print(head)
    print("-" * len(head))
    for size in sizes:
        for name, a in arrays(size).items():
            for cname, clevel in codecs:
                n = a.nbytes
                c_nc = nb.compress(a, cname.encode(), clevel, nb.SHUFFLE)
                c_ob = ob.compress(a, cname.encode(), clevel, ob.SHUFFLE)
                t_nc_e = timeit(lambda: nb.compress(a, cname.encode(), clevel, nb.SHUFFLE))
                t_ob_e = timeit(lambda: ob.compress(a, cname.encode(), clevel, ob.SHUFFLE))
                t_nc_d = timeit(lambda: nb.decompress(c_nc))
                t_ob_d = timeit(lambda: ob.decompress(c_ob))
                kw2 = dict(codec=b2codec[cname], clevel=clevel, typesize=a.itemsize,
                           filters=[blosc2.Filter.SHUFFLE])
                c_b2 = blosc2.compress2(a, **kw2)
                c_o2 = oxiblosc.compress2(a, codec=cname, clevel=clevel, filters=["shuffle"],
                                          nthreads=1)
                t_b2_e = timeit(lambda: blosc2.compress2(a, **kw2))
                t_o2_e = timeit(lambda: oxiblosc.compress2(a, codec=cname, clevel=clevel,
                                                           filters=["shuffle"], nthreads=1))
                t_b2_d = timeit(lambda: blosc2.decompress2(c_b2))
                t_o2_d = timeit(lambda: oxiblosc.decompress2(c_o2, nthreads=1))
                label = f"{size // 1024}K" if size < MiB else f"{size // MiB}M"
                print(f"{label:>7} {name:<10} {cname:<8} {n / len(c_ob):6.1f} | "
                      f"{fmt_rate(n, t_nc_e):>23} {fmt_rate(n, t_nc_d):>7} "
                      f"{fmt_rate(n, t_ob_e):>7} {fmt_rate(n, t_ob_d):>7} | "
                      f"{fmt_rate(n, t_b2_e):>20} {fmt_rate(n, t_b2_d):>7} "
                      f"{fmt_rate(n, t_o2_e):>7} {fmt_rate(n, t_o2_d):>7}")

    # per-call overhead: 64 KiB through the codec objects
    print("\nper call, 64 KiB f8 through the numcodecs codec object (encode + decode):")
    a = arrays(64 * 1024)["f8 field"]
    for label, codec in (("numcodecs.Blosc", numcodecs.Blosc(cname="lz4", clevel=5)),
                         ("oxiblosc.numcodecs.Blosc", ob.Blosc(cname="lz4", clevel=5))):
        enc = codec.encode(a)
        out = np.empty_like(a)
        t_e = timeit(lambda: codec.encode(a), min_time=0.5, min_calls=200)
        t_d = timeit(lambda: codec.decode(enc, out), min_time=0.5, min_calls=200)
        print(f"  {label:<26} encode {t_e * 1e6:7.1f} us  decode {t_d * 1e6:7.1f} us  "
              f"total {(t_e + t_d) * 1e6:7.1f} us")

    # two Python threads at once vs one
    def compress_into(a):
        local = threading.local()

        def call():
            if not hasattr(local, "dst"):
                local.dst = bytearray(a.nbytes + 64)
            return oxiblosc.compress2(a, local.dst, codec="lz4", nthreads=1)
        return call

    def decompress_into(a):
        c = oxiblosc.compress2(a, codec="lz4", nthreads=1)
        local = threading.local()

        def call():
            if not hasattr(local, "dst"):
                local.dst = bytearray(a.nbytes)
            return oxiblosc.decompress2(c, local.dst, nthreads=1)
        return call

    print("\ntwo Python threads at once vs one (4 MiB f8, lz4, 1 thread per call):")
    a = arrays(4 * MiB)["f8 field"]
    calls = 12
    for label, fn in (
        ("oxiblosc.compress2", lambda: oxiblosc.compress2(a, codec="lz4", nthreads=1)),
        ("oxiblosc.numcodecs", lambda: ob.compress(a, b"lz4", 5, 1)),
        ("numcodecs.blosc", lambda: nb.compress(a, b"lz4", 5, 1)),
        # into a caller's buffer: no fresh 4 MiB result to page in per call,
        # so the kernel's page-fault path is not shared by the two threads
        ("compress2 into dst", compress_into(a)),
        ("decompress2 into dst", decompress_into(a)),
    ):
        def worker():
            for _ in range(calls):
                fn()

        fn()
        best1, best2, busy = float("inf"), float("inf"), 0.0
        for _ in range(5):
            t0 = time.perf_counter()
            worker()
            best1 = min(best1, time.perf_counter() - t0)
            ts = [threading.Thread(target=worker) for _ in range(2)]
            t0, c0 = time.perf_counter(), time.process_time()
            for t in ts:
                t.start()
            for t in ts:
                t.join()
            wall = time.perf_counter() - t0
            busy = max(busy, (time.process_time() - c0) / wall)
            best2 = min(best2, wall)
        one = calls * a.nbytes / best1 / 1e9
        two = 2 * calls * a.nbytes / best2 / 1e9
        # busy = CPU seconds per wall second of the two-thread run: about 2 when
        # both threads compress at once, at most about 1 if the GIL serialised them
        print(f"  {label:<20} 1 thread {one:6.2f} GB/s   2 threads {two:6.2f} GB/s   "
              f"x{two / one:.2f}   (CPU/wall {busy:.2f})")

    if args.cli:
        large_vs_rust(args.cli, arrays, oxiblosc)


def large_vs_rust(cli, arrays, oxiblosc):
    """Large buffers: Python calls against the Rust API on the same bytes.

    `oxiblosc bench` times `Compressor::compress_into` / `Decompressor::
    decompress_into` on one chunk of the whole file into reused buffers: the
    Rust API's speed. The Python calls run once into a caller's `dst` (the
    same work plus the call) and once returning a new `bytes` (plus the
    pages of a fresh object, which numcodecs pays too). Both sides report
    their fastest call."""
    import os
    import re
    import subprocess
    import tempfile

    print("\nlarge buffers: Python calls against the Rust API (lz4 5 shuffle, f8 field, one chunk, "
          "1 thread; GB/s of the fastest call)")
    print(f"  {'size':>5}  {'Rust API enc/dec':>16}  {'compress2 dst/bytes':>20}  "
          f"{'decompress2 dst/bytes':>22}")
    for size in (4 * MiB, 16 * MiB, 64 * MiB):
        a = arrays(size)["f8 field"]
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "field.f8")
            a.tofile(path)
            out = subprocess.run(
                [cli, "bench", path, "--codecs", "lz4", "--levels", "5", "--filters", "shuffle",
                 "-t", "8", "-n", "1", "--chunksize", str(a.nbytes), "--time-budget", "4"],
                check=True, capture_output=True, text=True).stdout
        m = re.search(r"^lz4\s+5\s+shuffle\s+\S+\s+(\S+)\s+(\S+)", out, re.M)
        r_enc, r_dec = float(m.group(1)), float(m.group(2))
        c = oxiblosc.compress2(a, codec="lz4", clevel=5, typesize=8, nthreads=1)
        cdst = bytearray(len(c) + 1024)
        ddst = bytearray(a.nbytes)
        t_cd = timebest(lambda: oxiblosc.compress2(a, cdst, codec="lz4", clevel=5, typesize=8,
                                                 nthreads=1))
        t_cb = timebest(lambda: oxiblosc.compress2(a, codec="lz4", clevel=5, typesize=8,
                                                 nthreads=1))
        t_dd = timebest(lambda: oxiblosc.decompress2(c, ddst, nthreads=1))
        t_db = timebest(lambda: oxiblosc.decompress2(c, nthreads=1))
        n = a.nbytes
        print(f"  {size // MiB:>4}M  {r_enc:7.2f} {r_dec:7.2f}  "
              f"{fmt_rate(n, t_cd)} {fmt_rate(n, t_cb)}       {fmt_rate(n, t_dd)} {fmt_rate(n, t_db)}")


if __name__ == "__main__":
    main()
