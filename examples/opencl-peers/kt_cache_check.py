#!/usr/bin/env python3
"""Writes a Kernel Tuner cache file with quasim.tune_kernel, then reads it
with Kernel Tuner's own read_cache, as a resumed Kernel Tuner run reads it.
read_cache and the ErrorConfig classes are taken from the fetched Kernel
Tuner's util.py alone (the package imports modules not installed here).

    QUASIMCTL=bin/quasimctl python3 kt_cache_check.py $PEERS/src/kernel_tuner/kernel_tuner/util.py va.json
"""
import ast
import json
import sys

import numpy

from quasim import tune_kernel

util_py, path = sys.argv[1], sys.argv[2]
src = """__kernel void vector_add(__global float *c, __global const float *a, __global const float *b, int n) {
    int i = get_global_id(0);
    if (i<n) c[i] = a[i] + b[i];
}"""
size = 100000
a = numpy.random.rand(size).astype(numpy.float32)
tune_kernel("vector_add", src, size, [numpy.zeros_like(a), a, a, numpy.int32(size)],
            {"block_size_x": [64, 128, 8192]}, cache=path, quiet=True)

keep = {"ErrorConfig", "InvalidConfig", "CompilationFailedConfig", "RuntimeFailedConfig", "correct_open_cache", "read_cache"}
tree = ast.parse(open(util_py).read())
ns = {"json": json}
exec(compile(ast.Module(body=[n for n in tree.body if getattr(n, "name", None) in keep], type_ignores=[]),
             util_py, "exec"), ns)
c = ns["read_cache"](path, open_cache=False)
print(c["device_name"], c["kernel_name"], c["problem_size"], c["tune_params_keys"], len(c["cache"]), "entries")
for k, e in c["cache"].items():
    print(k, {n: v for n, v in e.items() if n in c["tune_params_keys"] + ["time", "__error__"]})
