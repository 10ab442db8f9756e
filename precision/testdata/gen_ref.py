#!/usr/bin/python3
"""Writes ref.txt.gz: float32 inputs and their FP16 and BF16 roundings, made
by implementations independent of package precision: numpy's float16 cast
(round to nearest even) and torch's bfloat16 cast (round to nearest even).

Run with Debian's python3 and packages (python3-numpy, python3-torch):
    /usr/bin/python3 precision/testdata/gen_ref.py
Each line: float32 bits, FP16 bits, BF16 bits, in hex.
"""
import gzip, os, struct
import numpy as np
import torch

rng = np.random.default_rng(20261125)
bits = []
# Every binade's edges and the halfway patterns of both formats.
for e in range(256):
    for m in (0, 1, 2, 0xfff, 0x1000, 0x1001, 0x2000, 0x3000, 0x7fff, 0x8000,
              0x8001, 0x18000, 0x7fffff, 0x7ff000, 0x7fefff, 0x400000):
        for s in (0, 1 << 31):
            bits.append(s | e << 23 | m)
# Random patterns over the whole range, and values near FP16's range.
bits += [int(b) for b in rng.integers(0, 1 << 32, 6000, dtype=np.uint64)]
near = (rng.standard_normal(6000) * np.exp2(rng.integers(-26, 17, 6000))).astype(np.float32)
bits += [int(b) for b in near.view(np.uint32)]

x = np.array(bits, dtype=np.uint64).astype(np.uint32).view(np.float32)
keep = ~np.isnan(x)  # NaN payloads differ between libraries; tested apart
x = x[keep]
with np.errstate(over="ignore"):
    h = x.astype(np.float16).view(np.uint16)
b = torch.from_numpy(x.copy()).to(torch.bfloat16).view(torch.int16).numpy().view(np.uint16)
out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ref.txt.gz")
with gzip.GzipFile(out, "wb", mtime=0) as f:
    f.write(b"# numpy %s float16, torch %s bfloat16\n" % (np.__version__.encode(), torch.__version__.encode()))
    for xi, hi, bi in zip(x.view(np.uint32), h, b):
        f.write(b"%08x %04x %04x\n" % (xi, hi, bi))
print("wrote", out, len(x), "values")
