"""quasim.tune_kernel and run_kernel against quasimctl on this machine's
OpenCL device, with scripts written as Kernel Tuner's examples are (only
the import is quasim's). Needs numpy, $QUASIMCTL (or quasimctl on PATH)
and an OpenCL device; tests that need them skip, saying so, without."""

import json
import os
import shutil
import tempfile
import unittest

import numpy

import quasim
import quasim.cache
import quasim.interface
from quasim import tune_kernel, run_kernel
from quasim.util import get_config_string, InvalidConfig, ErrorConfig
from quasim.file_utils import store_output_file, store_metadata_file

VECTOR_ADD = """
__kernel void vector_add(__global float *c, __global const float *a, __global const float *b, int n) {
    int i = get_global_id(0);
    if (i<n) {
        c[i] = a[i] + b[i];
    }
}
"""

SIGNBIT = """
__kernel void acc(__global float *c, __global const float *a, __global const float *b, int n) {
    int i = get_global_id(0);
    if (i<n) {
        c[i] += a[i] + (signbit(b[i]) ? 1.0f : 0.0f);
    }
}
"""


def have_device():
    try:
        env = quasim.interface.environment()
    except (FileNotFoundError, ValueError) as e:
        return False, str(e)
    return "device_name" in env, "no OpenCL device (install pocl-opencl-icd)"


DEVICE, WHY = have_device()
need_device = unittest.skipUnless(DEVICE, WHY)


class Case(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="quasim-test-")
        self.addCleanup(shutil.rmtree, self.dir)


@need_device
class VectorAdd(Case):
    """Kernel Tuner's vector_add.py, smaller, with an answer."""

    def test_results_as_kernel_tuner(self):
        size = 100000
        a = numpy.random.rand(size).astype(numpy.float32)
        b = numpy.random.rand(size).astype(numpy.float32)
        c = numpy.zeros_like(a)
        n = numpy.int32(size)
        tune_params = {"block_size_x": [64, 128, 256, 8192]}
        results, env = tune_kernel("vector_add", VECTOR_ADD, size, [c, a, b, n], tune_params,
                                   answer=[a + b, None, None, None], quiet=True)
        # 8192 is over pocl's work-group limit (4096): left out, not measured.
        self.assertEqual(sorted(r["block_size_x"] for r in results), [64, 128, 256])
        for r in results:
            self.assertIsInstance(r["time"], float)
            # Until the median is known within 3%: at least 3 runs, at
            # most Kernel Tuner's iterations (7 by default).
            self.assertGreaterEqual(len(r["times"]), 3)
            self.assertLessEqual(len(r["times"]), 7)
            for k in ("compile_time", "verification_time", "benchmark_time", "framework_time", "strategy_time"):
                self.assertIn(k, r)
        self.assertIn("device_name", env)
        self.assertIn("platform_name", env)
        self.assertIn(env["best_config"]["block_size_x"], [64, 128, 256])
        json.dumps(results)  # Kernel Tuner's results dump as JSON
        out = os.path.join(self.dir, "out")
        store_output_file(out, results, tune_params)
        store_metadata_file(os.path.join(self.dir, "meta"))
        with open(out + ".json") as f:
            t4 = json.load(f)
        self.assertEqual(len(t4["results"]), 3)
        self.assertEqual(t4["results"][0]["invalidity"], "correct")

    def test_wrong_answer_fails_every_config(self):
        size = 1000
        a = numpy.ones(size, dtype=numpy.float32)
        results, _ = tune_kernel("vector_add", VECTOR_ADD, size, [numpy.zeros_like(a), a, a, numpy.int32(size)],
                                 {"block_size_x": [32, 64]}, answer=[a * 3, None, None, None], quiet=True)
        self.assertEqual([str(r["time"]) for r in results], ["RuntimeFailedConfig"] * 2)
        self.assertIsInstance(results[0]["time"], ErrorConfig)
        self.assertIn('"time": "RuntimeFailedConfig"', json.dumps(results))


# A parameter named read_only, and no answer: unchecked, both configs run
# (with -D defines pocl's own headers fail on read_only).
READ_ONLY = """
__kernel void copy(__global float *dst, __global const float *src, int n) {
    int i = get_global_id(0);
#if read_only
    if (i < n) dst[i] = src[i];
#else
    if (i < n) dst[i] = 2.0f * src[i];
#endif
}
"""


@need_device
class ReadOnlyUnchecked(Case):
    def test_zero_arguments_need_no_file(self):
        # An all-zero array is written as fill: zero, a -0.0 one as data;
        # the kernel sees both as given (the answer fails otherwise).
        size = 4096
        a = numpy.random.rand(size).astype(numpy.float32)
        c, neg = numpy.zeros_like(a), numpy.full(size, -0.0, dtype=numpy.float32)
        args = [c, a, neg, numpy.int32(size)]
        path = quasim.export_spec(self.dir, "acc", SIGNBIT, size, args, {"block_size_x": [64]})
        with open(path) as fh:
            spec = json.load(fh)["opencl"]["args"]
        self.assertEqual((spec[0].get("fill"), "data" in spec[0], "data" in spec[2]), ("zero", False, True), spec)
        self.assertEqual(sorted(f for f in os.listdir(self.dir) if f.endswith(".npy")), ["acc.arg1.npy", "acc.arg2.npy"])
        results, _ = tune_kernel("acc", SIGNBIT, size, args, {"block_size_x": [64, 128]},
                                 answer=[a + 1, None, None, None], quiet=True)
        self.assertTrue(all(isinstance(r["time"], float) for r in results), results)

    def test_read_only_without_answer(self):
        size = 4096
        x = numpy.random.rand(size).astype(numpy.float32)
        results, env = tune_kernel("copy", READ_ONLY, size, [numpy.zeros_like(x), x, numpy.int32(size)],
                                   {"block_size_x": [64], "read_only": [0, 1]}, quiet=True)
        self.assertEqual(sorted(r["read_only"] for r in results), [0, 1])
        self.assertTrue(all(isinstance(r["time"], float) for r in results), results)
        # A restriction function of the config leaves configs out too.
        results, _ = tune_kernel("copy", READ_ONLY, size, [numpy.zeros_like(x), x, numpy.int32(size)],
                                 {"block_size_x": [32, 64], "read_only": [0, 1]},
                                 restrictions=[lambda p: p["block_size_x"] == 64 or p["read_only"] == 1], quiet=True)
        self.assertEqual(sorted((r["block_size_x"], r["read_only"]) for r in results), [(32, 1), (64, 0), (64, 1)])


MATMUL = """
__kernel void matmul(__global float *C, __global const float *A, __global const float *B, int n) {
    int x = get_group_id(0) * block_size_x * tile_size_x + get_local_id(0);
    int y = get_group_id(1) * block_size_y + get_local_id(1);
    for (int t = 0; t < tile_size_x; t++) {
        int col = x + t * block_size_x;
        float s = 0.0f;
        for (int k = 0; k < n; k++) s += A[y * n + k] * B[k * n + col];
        C[y * n + col] = s;
    }
}
"""


@need_device
class Matmul(Case):
    """matmul.py's shape: restrictions, grid divisors, answer with atol,
    metrics, a search strategy with max_fevals, a cache file."""

    def test_search_restrictions_metrics_cache(self):
        n = 64
        A = numpy.random.randn(n, n).astype(numpy.float32)
        B = numpy.random.randn(n, n).astype(numpy.float32)
        C = numpy.zeros_like(A)
        tune_params = {"block_size_x": [8, 16, 32], "block_size_y": [1, 2, 4, 8], "tile_size_x": [1, 2, 4]}
        restrict = ["block_size_x*tile_size_x <= 64", "block_size_x*block_size_y >= 16"]
        metrics = {"GFLOP/s": lambda p: (2 * n ** 3 / 1e9) / (p["time"] / 1e3)}
        cache = os.path.join(self.dir, "matmul.json")
        results, env = tune_kernel("matmul", MATMUL, (n, n), [C, A, B, numpy.int32(n)], tune_params,
                                   grid_div_x=["block_size_x", "tile_size_x"], grid_div_y=["block_size_y"],
                                   restrictions=restrict, answer=[numpy.dot(A, B), None, None, None], atol=1e-3,
                                   metrics=metrics, strategy="genetic_algorithm", strategy_options={"max_fevals": 6},
                                   cache=cache, quiet=True)
        self.assertEqual(len(results), 6)
        for r in results:
            self.assertLessEqual(r["block_size_x"] * r["tile_size_x"], 64)
            self.assertGreaterEqual(r["block_size_x"] * r["block_size_y"], 16)
            self.assertIsInstance(r["time"], float, r)
            self.assertAlmostEqual(r["GFLOP/s"], (2 * n ** 3 / 1e9) / (r["time"] / 1e3))
        # Kernel Tuner's cache layout: header, then the entries, closed by }\n}.
        with open(cache) as f:
            text = f.read()
        self.assertTrue(text.startswith('{\n"device_name": '), text[:40])
        self.assertTrue(text.endswith("}\n}"))
        c = json.loads(text)
        self.assertEqual(c["tune_params_keys"], list(tune_params))
        self.assertEqual(c["problem_size"], [n, n])
        self.assertEqual(len(c["cache"]), 6)
        key = get_config_string(results[0])  # and the key: values joined by commas
        k = ",".join(str(results[0][p]) for p in tune_params)
        self.assertIn(k, c["cache"], key)
        # Resumed: the cached configs are not measured again.
        more, _ = tune_kernel("matmul", MATMUL, (n, n), [C, A, B, numpy.int32(n)], tune_params,
                              grid_div_x=["block_size_x", "tile_size_x"], grid_div_y=["block_size_y"],
                              restrictions=restrict, answer=[numpy.dot(A, B), None, None, None], atol=1e-3,
                              strategy="random_sample", strategy_options={"max_fevals": 4}, cache=cache, quiet=True)
        self.assertEqual(len(more), 10)
        self.assertEqual(len({",".join(str(r[p]) for p in tune_params) for r in more}), 10)
        with open(cache) as f:
            self.assertEqual(len(json.load(f)["cache"]), 10)


REDUCE = """
__kernel void sum_floats(__global float *sums, __global const float *x, int n) {
    __local float part[block_size_x];
    int t = get_local_id(0);
    float s = 0.0f;
    for (int i = get_group_id(0) * block_size_x + t; i < n; i += num_blocks * block_size_x) s += x[i];
    part[t] = s;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = block_size_x / 2; k > 0; k /= 2) {
        if (t < k) part[t] += part[t + k];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (t == 0) sums[get_group_id(0)] = part[0];
}
"""


@need_device
class Reduction(Case):
    """reduction.py's shape: the problem in the parameters, grid_div_x=[],
    a verify function over the partial sums."""

    def test_verify_function(self):
        size = 1 << 16
        x = numpy.random.rand(size).astype(numpy.float32)
        sums = numpy.zeros(64, dtype=numpy.float32)
        calls = []

        def verify_partial_reduce(cpu_result, gpu_result, atol=None):
            calls.append(gpu_result[0].shape)
            return numpy.isclose(cpu_result[0], numpy.sum(gpu_result[0]), atol=atol)

        tune_params = {"block_size_x": [32, 64], "num_blocks": [16, 64]}
        results, env = tune_kernel("sum_floats", REDUCE, "num_blocks", [sums, x, numpy.int32(size)], tune_params,
                                   grid_div_x=[], answer=[numpy.sum(x), None, None], atol=1e-2,
                                   verify=verify_partial_reduce, quiet=True)
        self.assertEqual(len(results), 4)
        self.assertTrue(all(isinstance(r["time"], float) for r in results), results)
        self.assertGreaterEqual(len(calls), 4)  # and again for finalists in fresh workers
        self.assertEqual(calls[0], (64,))
        # A verify function that says no makes every config fail.
        results, _ = tune_kernel("sum_floats", REDUCE, "num_blocks", [sums, x, numpy.int32(size)], tune_params,
                                 grid_div_x=[], answer=[numpy.sum(x) + 100, None, None], atol=1e-2,
                                 verify=verify_partial_reduce, quiet=True)
        self.assertTrue(all(str(r["time"]) == "RuntimeFailedConfig" for r in results), results)


# With defines= Kernel Tuner defines the names given and nothing else: not
# the parameters, the block and grid sizes, nor kernel_tuner.
DEFINES = """
#if defined(block_size_x) || defined(kernel_tuner) || defined(grid_size_x) || defined(tile)
#error Kernel Tuner's defines are defined beside defines=
#endif
__kernel void scale(__global float *c, __global const float *a, int n) {
    int i = get_global_id(0);
    if (i < n) c[i] = a[i] * (TWICE / WG) + OFFSET;
}
"""


@need_device
class Defines(Case):
    """defines=: strings with the parameters' names replaced by their
    values, functions of the config, other values as they print."""

    def test_defines_replace_the_defaults(self):
        size = 4096
        a = numpy.random.rand(size).astype(numpy.float32)
        defines = {"TWICE": "2*block_size_x", "WG": lambda p: p["block_size_x"], "OFFSET": 1.5}
        tune_params = {"block_size_x": [32, 64, 128], "tile": [1, 2]}
        results, env = tune_kernel("scale", DEFINES, size, [numpy.zeros_like(a), a, numpy.int32(size)], tune_params,
                                   answer=[2 * a + 1.5, None, None], defines=defines, quiet=True)
        self.assertEqual(len(results), 6)
        self.assertTrue(all(isinstance(r["time"], float) for r in results), results)
        # And run_kernel the same way.
        try:
            import pyopencl  # noqa: F401
        except ImportError:
            return
        out = run_kernel("scale", DEFINES, size, [numpy.zeros_like(a), a, numpy.int32(size)],
                         {"block_size_x": 64, "tile": 1}, defines=defines)
        numpy.testing.assert_allclose(out[0], 2 * a + 1.5, rtol=1e-6)


@need_device
class TimeLimit(Case):
    def test_time_limit_ends_the_search(self):
        size = 1 << 16
        a = numpy.random.rand(size).astype(numpy.float32)
        tune_params = {"block_size_x": [16 * i for i in range(1, 65)]}  # 64 configs, each compiled
        # The limit counts from the call, the worker's start included: on a
        # busy machine (load above the cores) that start takes longer.
        limit = 3 * max(1.0, os.getloadavg()[0] / (os.cpu_count() or 1))
        results, env = tune_kernel("vector_add", VECTOR_ADD, size, [numpy.zeros_like(a), a, a, numpy.int32(size)],
                                   tune_params, strategy="random_sample", strategy_options={"time_limit": limit},
                                   quiet=True)
        self.assertTrue(env["quasim"]["time_limited"], env["quasim"])
        self.assertGreater(len(results), 0)
        self.assertLess(len(results), 64)


@need_device
class RunKernel(Case):
    def test_run_kernel(self):
        try:
            import pyopencl  # noqa: F401
        except ImportError:
            self.skipTest("no PyOpenCL (python3-pyopencl)")
        size = 1000
        a = numpy.random.rand(size).astype(numpy.float32)
        out = run_kernel("vector_add", VECTOR_ADD, size, [numpy.zeros_like(a), a, a, numpy.int32(size)],
                         {"block_size_x": 128})
        numpy.testing.assert_allclose(out[0], 2 * a)
        self.assertEqual(out[3], size)


class BadInput(Case):
    """Input that cannot work fails before any tuning, naming the argument."""

    def bad(self, exc, want, **kw):
        size = 100
        a = numpy.ones(size, dtype=numpy.float32)
        args = dict(kernel_name="vector_add", kernel_source=VECTOR_ADD, problem_size=size,
                    arguments=[numpy.zeros_like(a), a, a, numpy.int32(size)], tune_params={"block_size_x": [32]},
                    quiet=True)
        args.update(kw)
        with self.assertRaises(exc) as cm:
            tune_kernel(**args)
        self.assertIn(want, str(cm.exception))

    def test_dtype(self):
        a = numpy.ones(100, dtype=numpy.float32)
        h = numpy.ones(100, dtype=numpy.float16)
        self.bad(TypeError, "arguments[1]: dtype float16", arguments=[a, h, a, numpy.int32(100)])

    def test_iterations(self):
        self.bad(ValueError, "iterations: 0", iterations=0)
        self.bad(ValueError, "iterations: 2.5", iterations=2.5)

    def test_python_int(self):
        a = numpy.ones(100, dtype=numpy.float32)
        self.bad(TypeError, "arguments[3]: a int", arguments=[a, a, a, 100])

    def test_argument_count(self):
        a = numpy.ones(100, dtype=numpy.float32)
        self.bad(ValueError, "arguments: 3 given, but vector_add takes 4", arguments=[a, a, a])

    def test_answer_size(self):
        self.bad(ValueError, "answer[0]: 99 elements", answer=[numpy.ones(99, dtype=numpy.float32), None, None, None])

    def test_cuda(self):
        self.bad(ValueError, "lang: 'CUDA'", lang="CUDA")
        self.bad(ValueError, "lang: 'CUDA'", kernel_source="__global__ void vector_add(float *c) {}")

    def test_unsupported(self):
        self.bad(ValueError, "observers: not supported", observers=[object()])
        self.bad(ValueError, "strategy_options['time_limit']: 0", strategy="random_sample",
                 strategy_options={"time_limit": 0})
        self.bad(ValueError, "strategy_options['max_fevals']: 'ten'", strategy="random_sample",
                 strategy_options={"max_fevals": "ten"})
        self.bad(ValueError, "strategy_options['popsize']", strategy="genetic_algorithm",
                 strategy_options={"popsize": 10})
        self.bad(ValueError, "defines['2x']: not a valid identifier", defines={"2x": 1})
        self.bad(ValueError, "defines['N']: failed on {'block_size_x': 32}: ZeroDivisionError",
                 defines={"N": lambda p: 1 // 0})

    def test_max_fevals_environment(self):
        os.environ["QUASIM_MAX_FEVALS"] = "0"
        try:
            self.bad(ValueError, "$QUASIM_MAX_FEVALS: '0'")
        finally:
            del os.environ["QUASIM_MAX_FEVALS"]

    def test_missing_file(self):
        self.bad(ValueError, "kernel_source: no such file: 'vector_add.cl'", kernel_source="vector_add.cl")

    def test_restriction_function_fails(self):
        self.bad(ValueError, "restrictions[1]: failed on {'block_size_x': 32}: KeyError",
                 restrictions=["block_size_x > 0", lambda p: p["tile"] > 1])

    @need_device
    def test_restriction_does_not_parse(self):
        self.bad(ValueError, "restrictions[0]", restrictions=["block_size_x >>> 2"])


class Cache(Case):
    def test_reads_kernel_tuners_open_file(self):
        # As Kernel Tuner leaves a cache file when its run is cut short: the
        # header, entries each on a line, a trailing comma, no closing.
        path = os.path.join(self.dir, "kt.json")
        with open(path, "w") as f:
            f.write('{\n"device_name": "dev",\n"kernel_name": "vector_add",\n"problem_size": 100,\n'
                    '"tune_params_keys": [\n"block_size_x"\n],\n"tune_params": {\n"block_size_x": [\n32,\n64\n]\n},\n'
                    '"objective": "time",\n"cache": {\n"32": {"block_size_x": 32, "time": 0.5},'
                    '\n"64": {"block_size_x": 64, "time": "InvalidConfig"},')
        spec = {"problem_dims": ["problem_size_x"], "problems": ["100"],
                "opencl": {"tune_params": {"block_size_x": [32, 64]}, "problem_size": ["problem_size_x"]}}
        got = quasim.cache.read(path, "vector_add", spec, "dev")
        self.assertEqual(got["32"]["time"], 0.5)
        self.assertIsInstance(got["64"]["time"], InvalidConfig)
        with self.assertRaises(ValueError) as cm:
            quasim.cache.read(path, "vector_add", spec, "other device")
        self.assertIn("cache: %s holds results of device_name 'dev'" % path, str(cm.exception))


class Confirmation(unittest.TestCase):
    def test_finalists_scale_with_the_budget(self):
        # Measurements of finalists in fresh workers: at most a quarter of
        # the search's evaluations, none below 8, 3 in 3 rounds from 36.
        for budget, want in ((1, (0, 0)), (7, (0, 0)), (8, (2, 1)), (10, (2, 1)), (20, (3, 1)), (30, (3, 2)),
                             (36, (3, 3)), (100, (3, 3)), (1 << 30, (3, 3))):
            f, r = quasim.interface.confirmation(budget)
            self.assertEqual((f, r), want, "budget %d" % budget)
            self.assertLessEqual(f * r, budget / 4)


class Util(unittest.TestCase):
    def test_config_string(self):
        self.assertEqual(get_config_string({"block_size_x": 64, "time": 1.23456, "x": InvalidConfig()}),
                         "block_size_x=64, time=1.235, x=InvalidConfig")


if __name__ == "__main__":
    unittest.main()
