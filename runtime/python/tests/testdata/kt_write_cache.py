"""Kernel Tuner (real, not quasim) tunes vector_add over the block sizes
given and writes its cache file: how kt_vector_add_cache.json here was
made, and what test_kt_cache.py runs when Kernel Tuner can be imported.

  PYTHONPATH=$KT_ENV python3 kt_write_cache.py CACHE.json 32,64,128,8192
"""
import json
import sys

import numpy
from kernel_tuner import tune_kernel

SOURCE = """
__kernel void vector_add(__global float *c, __global const float *a, __global const float *b, int n) {
    int i = get_global_id(0);
    if (i<n) {
        c[i] = a[i] + b[i];
    }
}
"""

size = 10000
a = numpy.random.rand(size).astype(numpy.float32)
b = numpy.random.rand(size).astype(numpy.float32)
c = numpy.zeros_like(a)
blocks = [int(x) for x in sys.argv[2].split(",")]
results, env = tune_kernel("vector_add", SOURCE, size, [c, a, b, numpy.int32(size)], {"block_size_x": blocks},
                           answer=[a + b, None, None, None], cache=sys.argv[1], quiet=True)
print(json.dumps({"results": [{"block_size_x": r["block_size_x"], "time": r["time"]} for r in results],
                  "device_name": env["device_name"]}))
