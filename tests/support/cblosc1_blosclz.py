"""C-Blosc 1.21 BloscLZ chunks for tests/blosclz_blosc1.rs.

Usage: cblosc1_blosclz.py IN OUT

IN holds cases, each: u32 data length, u8 typesize, u8 clevel, u8 shuffle
(0 none, 1 shuffle, 2 bitshuffle), u32 forced blocksize (0: automatic),
then the data (all little-endian). OUT gets, per case, u32 chunk length and
the chunk `blosc.compress(data, typesize, clevel, shuffle, 'blosclz')`
made with one thread. Prints the python-blosc and C-Blosc versions.
"""

import struct
import sys

import blosc

SHUFFLES = [blosc.NOSHUFFLE, blosc.SHUFFLE, blosc.BITSHUFFLE]


def main():
    src, dst = sys.argv[1], sys.argv[2]
    blosc.set_nthreads(1)
    with open(src, "rb") as f:
        raw = f.read()
    out = []
    pos = 0
    while pos < len(raw):
        n, typesize, clevel, shuffle, blocksize = struct.unpack_from("<IBBBI", raw, pos)
        pos += 11
        data = raw[pos : pos + n]
        pos += n
        blosc.set_blocksize(blocksize)
        chunk = blosc.compress(
            data,
            typesize=typesize,
            clevel=clevel,
            shuffle=SHUFFLES[shuffle],
            cname="blosclz",
        )
        out.append(struct.pack("<I", len(chunk)))
        out.append(chunk)
    blosc.set_blocksize(0)
    with open(dst, "wb") as f:
        f.write(b"".join(out))
    sys.stdout.write("%s %s\n" % (blosc.__version__, blosc.VERSION_STRING))


if __name__ == "__main__":
    main()
