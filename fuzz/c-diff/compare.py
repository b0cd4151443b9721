#!/usr/bin/env python3
"""Compare oxiblosc's and C-Blosc2's reports of fuzz/c-diff.sh.

    compare.py MODE OURS THEIRS [ORIGINALS [RUST]]

Prints how many inputs fall in each category and lists the ones to look
at. Exit status 1 when a *finding* is listed (`capi-MODE`: OURS is our C
ABI's report, compared as MODE; RUST, the Rust side's report, gives the
arrays' uninit marks):

- `edit`: a frame we wrote that we cannot reopen; that C-Blosc2 cannot
  open though it opened the frame we read (ORIGINALS, C's `frame` report
  of the inputs); or that C reads with other chunks, metalayers or
  vlmetalayers than ours: other counts or names, or values both sides
  read and that differ;
- `nd-edit`: the same for arrays (ORIGINALS: C's `nd` report); not a
  finding: an array C-Blosc2 reads by path otherwise than the same frame
  from memory, where we read it as C does from memory (C's `mem=` field:
  its lazy reads of DELTA chunks with blocks masked out are wrong, on its
  own files too), or other items where some chunk is uninit (undefined),
  has three filters or two DELTAs (C-Blosc2's decoder misreads some: our
  `F` mark), or is a special value stored as an index code in a frame
  whose block size is not its data chunks' (C makes it with the frame's,
  then reads garbage: our `B` mark);
- `sframe` and `sframe-edit`: as `frame` and `edit`, for sparse frames
  (directories) and our edits of them in place; `c-append` as `edit`, the
  frames we wrote that C-Blosc2 appended to;
- not a finding: C-Blosc2 refusing to open by path (a file or a
  directory) a frame whose first chunk it cannot make a lazy chunk of,
  where that chunk is corrupt or a zeros, NaN or uninit chunk stored whole
  (see `no_first_chunk`); from memory it opens such frames;
- `frame` and `nd`: both read an input and see other counts, names or
  values (not: a vlmetalayer stored as an uninit chunk, our `U` mark,
  whose value is undefined; one side refuses what the other reads; C-Blosc2 is lax on
  corrupt input, we are strict; our `frame` reports of inputs open them
  with `defer_chunk_checks`, so that a chunk that does not fit fails alone,
  as in C);
- `encode-nd` (ORIGINALS: what `encode-nd` wrote): an array we made of
  valid data that we do not read back as written, or that C-Blosc2 does
  not open or reads otherwise (but for its by-path reads, as in
  `nd-edit`);
- `chunk`: never (both decoding to other bytes is listed: C-Blosc2
  leaves some tails unwritten, CHUNK-NOTES §14).

`encode` reports (oracle.py `encode`/`encode1`) are checked by c-diff.sh
itself: every line must say `ok`.
"""

import sys
from collections import Counter


def read(path):
    out = {}
    for line in open(path):
        name, _, rest = line.rstrip("\n").partition("\t")
        out[name] = rest.split("\t")
    return out


def status(fields):
    return fields[0] if fields and fields[0] else "EMPTY"


MARKS = "IUFB"


def plain(v):
    """A report without our marks: `I` on a chunk (a zeros, NaN or uninit
    chunk stored whole) or `F` (a data chunk with two DELTAs apart, which
    C-Blosc2 misreads); `U` on an array's items (some chunk uninit) or a
    vlmetalayer's value (stored as an uninit chunk); `F` and `B` on an
    array's items (C-Blosc2 misreads some chunk: three filters or two
    DELTAs; special chunks it makes with the frame's block size where the
    data chunks have another); C's reports have none."""
    return v.lstrip(MARKS)


def marks(v):
    """The marks of one of our report values (see `plain`)."""
    return v[: len(v) - len(plain(v))]


def is_err(v):
    v = plain(v)
    return v.startswith("E(") or v == "SKIP"


def field(report, key):
    """The value of a report's `key=value` field, or None."""
    for f in report:
        if f.startswith(key + "="):
            return f[len(key) + 1 :]
    return None


def no_first_chunk(c, r):
    """C-Blosc2 refused to open a frame by its path (a file or a
    directory) because it could not make a lazy chunk of its first chunk,
    and that chunk is one it makes none of: one we cannot read either
    (corrupt, or over the size both skip) or a zeros, NaN or uninit chunk
    stored whole (its lazy chunks take only stored data and value runs).
    Our frame reports give chunk 0 as their fifth field, our array reports
    as `c0=`."""
    if not (len(c) > 2 and "Cannot inspect the first chunk in frame." in c[2].split(" | ")):
        return False
    c0 = field(r, "c0")
    if c0 is not None:
        return c0 in ("E", "I")
    return len(r) > 4 and (is_err(r[4]) or r[4].startswith("I"))


def pairs(field):
    """`meta[a=h,b=h]` as [(name, value)]."""
    inner = field[field.index("[") + 1 : -1]
    out = []
    for part in inner.split(",") if inner else []:
        name, _, value = part.rpartition("=")
        out.append((name, value))
    return out


def differ(a, b):
    """Values both sides read (not errors, not skipped) that differ."""
    return not is_err(a) and not is_err(b) and plain(a) != plain(b)


def compare_frames(c, r):
    """What differs between two `OK` frame reports: [] when nothing that
    both sides read differs."""
    issues = []
    if c[1] != r[1]:
        issues.append(f"nchunks C {c[1]} ours {r[1]}")
    for k, what in ((2, "meta"), (3, "vlmeta")):
        pc, pr = pairs(c[k]), pairs(r[k])
        if [n for n, _ in pc] != [n for n, _ in pr]:
            issues.append(f"{what} names C {[n for n, _ in pc]} ours {[n for n, _ in pr]}")
        elif any(differ(a, b) and "U" not in marks(a) + marks(b) for (_, a), (_, b) in zip(pc, pr)):
            # A vlmetalayer stored as an uninit chunk has no defined value
            # (we read zeros, C-Blosc2 what its buffer held).
            issues.append(f"{what} values")
    for i, (a, b) in enumerate(zip(c[4:], r[4:])):
        if differ(a, b) and "F" not in marks(b):
            issues.append(f"chunk {i}")
    return issues


def misread_chunks(c, r):
    """How many chunks both sides read otherwise where ours are marked
    `F` (two DELTAs apart, which C-Blosc2's decoder misreads)."""
    return sum(differ(a, b) and "F" in marks(b) for a, b in zip(c[4:], r[4:]))


def main():
    label, ours_p, theirs_p = sys.argv[1:4]
    # sparse frames are compared as frames, their edits as edits; `capi-M`
    # (our C ABI's reports) as M
    base_label = label[len("capi-"):] if label.startswith("capi-") else label
    mode = {"sframe": "frame", "sframe-edit": "edit", "c-append": "edit"}.get(base_label, base_label)
    ours, theirs = read(ours_p), read(theirs_p)
    originals = read(sys.argv[4]) if len(sys.argv) > 4 and sys.argv[4] else {}
    if len(sys.argv) > 5:
        # Our C ABI's reports take the Rust reports' marks: a chunk's I (a
        # special chunk stored whole) or F (two DELTAs apart), an array's
        # marks (U, F, B) and c0.
        for name, rr in read(sys.argv[5]).items():
            o = ours.get(name)
            if not o or status(o) != "OK" or status(rr) != "OK":
                continue
            if mode in ("nd", "nd-edit", "encode-nd"):
                if len(o) > 4 and len(rr) > 4 and marks(rr[4]):
                    o[4] = marks(rr[4]) + o[4]
                if field(rr, "c0") is not None:
                    o.append("c0=" + field(rr, "c0"))
            else:
                for i in range(4, min(len(o), len(rr))):
                    if marks(rr[i]) and not marks(o[i]):
                        o[i] = marks(rr[i]) + o[i]
                # A vlmetalayer's U mark.
                if len(o) > 3 and len(rr) > 3:
                    um = {n for n, v in pairs(rr[3]) if "U" in marks(v)}
                    if um:
                        o[3] = "vlmeta[" + ",".join(
                            f"{n}={'U' if n in um else ''}{v}" for n, v in pairs(o[3])) + "]"
    cats = Counter()
    findings, notes = [], []
    for name in sorted(theirs):
        c, r = theirs[name], ours.get(name, ["MISSING"])
        sc, sr = status(c), status(r)
        if mode == "encode-nd":
            # Arrays we made of valid data: we and C must read them whole.
            want = originals.get(name.rsplit(".", 1)[0], [""])
            if sr != "OK":
                cats["we cannot reopen what we wrote"] += 1
                findings.append(f"{name}: ours {' '.join(r)[:160]}")
            elif r[1:4] != want[1:4] or (plain(r[4]) != want[4] and not want[4].startswith("L")):
                cats["we read back otherwise than we wrote"] += 1
                findings.append(f"{name}: wrote {want[1:5]} read {r[1:5]}")
            elif sc != "OK":
                cats[f"C {sc}"] += 1
                findings.append(f"{name}: C {' '.join(c)[:160]}")
            elif c[1:4] != r[1:4]:
                cats["both open, other geometry"] += 1
                findings.append(f"{name}: C {c[1:4]} ours {r[1:4]}")
            elif c[4] == plain(r[4]):
                cats["C reads them as we do"] += 1
            elif field(c, "mem") == plain(r[4]):
                cats["C by path otherwise than C from memory (= ours)"] += 1
            else:
                cats["C reads other items"] += 1
                findings.append(f"{name}: C {c[4]} ours {r[4]}")
            continue
        if sc == "OK" and sr == "OK":
            if mode == "chunk":
                if c[1:3] == r[1:3]:
                    cats["both decode, same bytes"] += 1
                else:
                    cats["both decode, other bytes"] += 1
                    notes.append(f"{name}: C {c[1:3]} ours {r[1:3]}")
            elif mode in ("nd", "nd-edit"):
                if c[1:4] != r[1:4]:
                    cats["both open, other geometry"] += 1
                    findings.append(f"{name}: C {c[1:4]} ours {r[1:4]}")
                elif differ(c[4], r[4]) and field(c, "mem") == plain(r[4]):
                    # C-Blosc2 3.3.5 reads some arrays by path otherwise
                    # than from memory, its own files too (DELTA chunks,
                    # blocks outside the array masked out): ours reads as
                    # C's reader of the same frame in memory.
                    cats["both read, C by path otherwise than C from memory (= ours)"] += 1
                elif differ(c[4], r[4]) and "U" in marks(r[4]):
                    # Some chunk is uninit: its items are undefined (we
                    # read zeros, C what its buffer held).
                    cats["both read, other items where chunks are uninit"] += 1
                elif differ(c[4], r[4]) and "F" in marks(r[4]):
                    # C-Blosc2 3.3.5 decodes some chunks with three filters
                    # or more, or two DELTAs, wrong, its own too
                    # (tests/differential.rs c_bugs_the_harness_tolerates;
                    # fuzz/README.md, session 51).
                    cats["both read, other items where a chunk has three filters or two DELTAs"] += 1
                elif differ(c[4], r[4]) and "B" in marks(r[4]):
                    # C-Blosc2 makes a special chunk stored as an index
                    # code with the frame's block size; where the data
                    # chunks have another, its array reads of it give
                    # what its buffer held (fuzz/README.md, session 51).
                    cats["both read, other items where C makes special chunks with the frame's block size"] += 1
                elif differ(c[4], r[4]):
                    cats["both read, other items"] += 1
                    findings.append(f"{name}: C {c[4]} ours {r[4]}")
                else:
                    cats["same (or one side's error)"] += 1
            else:
                issues = compare_frames(c, r)
                if issues:
                    cats["both open, differ"] += 1
                    findings.append(f"{name}: {'; '.join(issues)}")
                elif misread_chunks(c, r):
                    # C-Blosc2 3.3.5 decodes chunks with two DELTAs apart
                    # wrong, its own too (tests/differential.rs
                    # c_bugs_the_harness_tolerates; fuzz/README.md, session
                    # 52).
                    cats["both open, other bytes only in chunks with two DELTAs apart"] += 1
                else:
                    cats["same (or one side's error)"] += 1
        elif mode in ("edit", "nd-edit") and sr != "OK":
            cats[f"we cannot reopen what we wrote (C {sc})"] += 1
            findings.append(f"{name}: ours {' '.join(r)[:160]}")
        elif sc == "OK":
            cats["C reads, we refuse"] += 1
            line = f"{name}: ours {' '.join(r)[:160]}"
            base = name.rsplit(".", 1)[0]
            if mode in ("edit", "nd-edit") and status(originals.get(base, [""])) != "OK":
                cats["(of which the input did not open in C)"] += 1
            notes.append(line)
        elif sr == "OK" and no_first_chunk(c, r):
            cats["we read, C cannot inspect chunk 0 by path (one we cannot read, or special)"] += 1
        elif sr == "OK":
            key = f"we read, C {sc}"
            cats[key] += 1
            if label == "c-append":
                # Our fresh frames, C's chunk appended: C must read them.
                findings.append(f"{name}: C {' '.join(c)[:100]}")
            elif mode in ("edit", "nd-edit"):
                base = name.rsplit(".", 1)[0]
                if status(originals.get(base, [""])) == "OK":
                    findings.append(f"{name}: C {' '.join(c)[:100]}; it opened the input")
        else:
            cats[f"neither reads (C {sc})"] += 1
    print(f"{label}: {len(theirs)} inputs")
    for k, v in sorted(cats.items()):
        print(f"  {v:6d}  {k}")
    if notes:
        print(f"  to look at ({len(notes)}, the first 20):")
        for n in notes[:20]:
            print(f"    {n}")
    if findings:
        print(f"  FINDINGS ({len(findings)}):")
        for f in findings[:50]:
            print(f"    {f}")
        sys.exit(1)


if __name__ == "__main__":
    main()
