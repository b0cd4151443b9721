#!/usr/bin/env python3
"""oxiblosc against numcodecs' Blosc and python-blosc2, from Python.

    python python/bench.py            # the full table (about 2-4 minutes)
    python python/bench.py --quick    # 64 KiB and 1 MiB only

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


def fmt_rate(nbytes, t):
    return f"{nbytes / t / 1e9:6.2f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="64 KiB and 1 MiB only")
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
    print("\ntwo Python threads compressing at once vs one (4 MiB f8, lz4, 1 thread per call):")
    a = arrays(4 * MiB)["f8 field"]
    calls = 12
    for label, fn in (
        ("oxiblosc.compress2", lambda: oxiblosc.compress2(a, codec="lz4", nthreads=1)),
        ("oxiblosc.numcodecs", lambda: ob.compress(a, b"lz4", 5, 1)),
        ("numcodecs.blosc", lambda: nb.compress(a, b"lz4", 5, 1)),
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


if __name__ == "__main__":
    main()
