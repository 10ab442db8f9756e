#!/usr/bin/env python3
"""Writes CLBlast's Xgemm OpenCL source, as Debian's libclblast1 carries it
(common.opencl, then xgemm_part1..4.opencl, each embedded as a string in the
library), to OUT (default gemm_milo/common.opencl): the kernel file the FAIR
benchmark hub's gemm T1 names. Nothing of CLBlast is kept in quasim's
repository; this reads the installed library."""
import sys

LIB = "/usr/lib/x86_64-linux-gnu/libclblast.so.1"
# A marker of each embedded string, in the order the library compiles them.
MARKERS = [b"typedef float real;", b"#define MWG", b"void Xgemm("]


def strings(data):
    out = []
    for m in MARKERS:
        i = data.find(m)
        if i < 0:
            sys.exit("%s: no %r: not the CLBlast this script knows" % (LIB, m.decode()))
        start = data.rfind(b"\0", 0, i) + 1
        out.append(data[start:data.index(b"\0", i)].decode())
    return out


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "gemm_milo/common.opencl"
    with open(LIB, "rb") as f:
        parts = strings(f.read())
    import os
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    with open(out, "w") as f:
        f.write("\n".join(parts))
    print("%s: %d bytes from %s" % (out, sum(map(len, parts)), LIB))


if __name__ == "__main__":
    main()
