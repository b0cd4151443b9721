"""Compare two runs of perf/diag/sweep.c: C's file first, ours second.

Prints C's time over ours (above 1: ours faster) per codec, filter and
operation (geometric mean and minimum), then the slowest rows for us.
Rows where either library returned wrong items are left out and counted.
"""
import collections
import math
import sys


def load(path):
    rows = {}
    for line in open(path):
        f = line.rstrip("\n").split("\t")
        if len(f) >= 4 and f[2] not in ("ERR", "MISMATCH"):
            rows[(f[0], f[1])] = (float(f[2]), int(f[3]), "wrong" in f[4:])
    return rows


c, o = load(sys.argv[1]), load(sys.argv[2])
keys = [k for k in c if k in o]
wrong = [k for k in keys if c[k][2] or o[k][2]]
keys = [k for k in keys if k not in wrong]
ratio = {k: c[k][0] / o[k][0] for k in keys}
groups = collections.defaultdict(list)
for k in keys:
    codec, filt = k[0].split("/")[:2]
    groups[(codec, filt, k[1])].append(ratio[k])
print(f"{len(keys)} rows, {sum(r < 1 for r in ratio.values())} below 1, "
      f"{sum(r < 0.9 for r in ratio.values())} below 0.9; left out (wrong items): "
      + ", ".join(f"{k[0]} {k[1]} ({'C' if c[k][2] else 'ours'})" for k in wrong))
for g in sorted(groups):
    v = groups[g]
    geo = math.exp(sum(map(math.log, v)) / len(v))
    print(f"{g[0]:8s} {g[1]:14s} {g[2]:10s} geomean {geo:5.2f}  min {min(v):5.2f}  n {len(v)}")
print("slowest for us:")
for k in sorted(keys, key=ratio.get)[: int(sys.argv[3]) if len(sys.argv) > 3 else 30]:
    print(f"{ratio[k]:5.2f} {k[0]:32s} {k[1]:10s} C {c[k][0]:9.2f} us  ours {o[k][0]:9.2f} us  "
          f"chunk {c[k][1]} / {o[k][1]} bytes")
