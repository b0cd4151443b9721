#!/usr/bin/env python3
"""Summarise a `perf/run chunks` CSV (default perf/results/chunks.csv):
geometric means and ranges of ours/C per codec and thread count, per codec
and filter at nthreads 1, and the rows under the targets of issue 5
(decompress >= 1.0x everywhere; compress >= 1.0x for blosclz, zstd, zlib;
ratio within 1 % of C for blosclz, zstd, lz4hc and 3 % for lz4).

    python3 perf/summarize.py [CSV] [--under]
"""
import csv
import math
import sys
from collections import defaultdict


def gm(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def fmt(xs):
    return f"{gm(xs):.2f} ({min(xs):.2f}-{max(xs):.2f})"


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    path = args[0] if args else "perf/results/chunks.csv"
    rows = list(csv.DictReader(open(path)))
    f = lambda r, k: float(r[k])
    by = defaultdict(list)
    for r in rows:
        by[(r["codec"], r["nthreads"])].append(r)
    print("| codec | threads | rows | comp ours/C (geomean, min-max) | dec ours/C (geomean, min-max) "
          "| ratio ours/C (geomean, min-max) | same bytes | check ok |")
    print("| --- | --: | --: | --: | --: | --: | --: | --: |")
    for (codec, nt), rs in sorted(by.items()):
        comp = [f(r, "comp_ours_over_c") for r in rs]
        dec = [f(r, "dec_ours_over_c") for r in rs]
        ratio = [f(r, "ratio_ours") / f(r, "ratio_c") for r in rs]
        same = sum(r["same_bytes"] == "true" for r in rs)
        ok = sum(r["check"] == "ok" for r in rs)
        print(f"| {codec} | {nt} | {len(rs)} | {fmt(comp)} | {fmt(dec)} | {fmt(ratio)} | {same}/{len(rs)} | {ok}/{len(rs)} |")
    print()
    byf = defaultdict(list)
    for r in rows:
        if r["nthreads"] == "1":
            byf[(r["codec"], r["filter"])].append(r)
    print("| codec | filter | comp ours/C | dec ours/C | ratio ours/C |")
    print("| --- | --- | --: | --: | --: |")
    for (codec, filt), rs in sorted(byf.items()):
        comp = gm([f(r, "comp_ours_over_c") for r in rs])
        dec = gm([f(r, "dec_ours_over_c") for r in rs])
        ratio = gm([f(r, "ratio_ours") / f(r, "ratio_c") for r in rs])
        print(f"| {codec} | {filt} | {comp:.2f} | {dec:.2f} | {ratio:.2f} |")
    print()
    under = defaultdict(list)
    for r in rows:
        c = r["codec"]
        ratio = f(r, "ratio_ours") / f(r, "ratio_c")
        if f(r, "dec_ours_over_c") < 1.0:
            under["dec < 1.0"].append(r)
        if c in ("blosclz", "zstd", "zlib") and f(r, "comp_ours_over_c") < 1.0:
            under["comp < 1.0"].append(r)
        tol = {"blosclz": 0.01, "zstd": 0.01, "lz4hc": 0.01, "lz4": 0.03}.get(c)
        if tol is not None and ratio < 1 - tol:
            under["ratio under"].append(r)
    for k in ("dec < 1.0", "comp < 1.0", "ratio under"):
        rs = under[k]
        cnt = defaultdict(int)
        for r in rs:
            cnt[(r["codec"], r["nthreads"])] += 1
        key = "dec_ours_over_c" if k.startswith("dec") else "comp_ours_over_c"
        vals = [f(r, key) for r in rs] if not k.startswith("ratio") else [
            f(r, "ratio_ours") / f(r, "ratio_c") for r in rs]
        span = f"{min(vals):.2f}-{max(vals):.2f}" if vals else "-"
        print(f"{k}: {len(rs)} of {len(rows)} rows ({span}); by codec/threads: "
              + ", ".join(f"{c}/{n}: {v}" for (c, n), v in sorted(cnt.items())))
        if "--under" in sys.argv:
            for r in rs:
                print("   ", r["codec"], r["filter"], r["workload"], "clevel", r["clevel"],
                      "nthreads", r["nthreads"], int(r["chunk_bytes"]) >> 20, "MiB",
                      "comp", r["comp_ours_over_c"], "dec", r["dec_ours_over_c"],
                      "ratio", f"{f(r, 'ratio_ours') / f(r, 'ratio_c'):.3f}", "spread", r["spread_pct"])


if __name__ == "__main__":
    main()
