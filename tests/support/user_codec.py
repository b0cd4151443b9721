"""python-blosc2 (C-Blosc2) with a user codec, for tests/user_plugins.rs.

Codec 199 ("arange7", codec meta 7) stores an int32 arange block as its
first value and step (8 bytes); any other block is stored raw (returns 0).
`write`: print a contiguous frame of 3 chunks holding arange(30000)*3+11
(int32). `read`: decode the frame on stdin with the same codec and check it
holds that data; print "ok <nchunks>".
Made tests/data/user_codec/arange7.b2frame: python user_codec.py write
"""
import sys

import numpy as np
import blosc2


def enc(inp, out, meta, schunk):
    assert meta == 7, meta
    x = inp.view(np.int32)
    d = np.diff(x)
    if len(x) < 2 or d.min() != d.max():
        return 0
    out[0:4] = inp[0:4]
    out[4:8] = np.frombuffer(np.int32(d[0]).tobytes(), np.uint8)
    return 8


def dec(inp, out, meta, schunk):
    assert meta == 7, meta
    start, step = np.frombuffer(bytes(inp[:8]), np.int32)
    n = len(out) // 4
    out[:] = (start + step * np.arange(n, dtype=np.int32)).view(np.uint8)
    return len(out)


blosc2.register_codec("arange7", 199, enc, dec)
data = np.arange(30000, dtype=np.int32) * 3 + 11
if sys.argv[1] == "write":
    cp = {"codec": 199, "codec_meta": 7, "typesize": 4,
          "filters": [blosc2.Filter.NOFILTER], "nthreads": 1, "clevel": 5}
    sc = blosc2.SChunk(chunksize=40000, cparams=cp, dparams={"nthreads": 1})
    for a in range(0, 30000, 10000):
        sc.append_data(data[a:a + 10000])
    sys.stdout.buffer.write(sc.to_cframe())
else:
    sc = blosc2.schunk_from_cframe(sys.stdin.buffer.read(), copy=True)
    got = np.concatenate([np.frombuffer(sc.decompress_chunk(i), np.int32)
                          for i in range(sc.nchunks)])
    assert (got == data).all(), "decoded data differ"
    print("ok", sc.nchunks)
