"""Cache files written by Kernel Tuner itself, read by quasim.

testdata/kt_vector_add_cache.json was written by Kernel Tuner 1.4.0 (its
repository at 96a6abc, Debian 12's python3 and pocl) running
testdata/kt_write_cache.py; it is Kernel Tuner's output, kept as it wrote
it. KernelTunerLive runs Kernel Tuner here when it can be imported from
$KT_ENV (default /work/kt-env, made by examples/kt-side-by-side/setup.sh
from a fetched copy of its repository) and skips, saying so, when not."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import numpy

import quasim.cache
import quasim.interface
from quasim import tune_kernel
from quasim.util import ErrorConfig

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE = os.path.join(HERE, "testdata", "kt_vector_add_cache.json")
WRITER = os.path.join(HERE, "testdata", "kt_write_cache.py")
KT_ENV = os.environ.get("KT_ENV", "/work/kt-env")

SOURCE = """
__kernel void vector_add(__global float *c, __global const float *a, __global const float *b, int n) {
    int i = get_global_id(0);
    if (i<n) {
        c[i] = a[i] + b[i];
    }
}
"""


def spec(blocks, size=10000):
    return {"problem_dims": ["problem_size_x"], "problems": [str(size)],
            "opencl": {"tune_params": {"block_size_x": blocks}, "problem_size": ["problem_size_x"]}}


class Fixture(unittest.TestCase):
    """Kernel Tuner's file as it wrote it: its header (objective as a list,
    as 1.4 writes it), an entry a line, its timings."""

    def test_read(self):
        got = quasim.cache.read(FIXTURE, "vector_add", spec([32, 64, 128, 8192]))
        self.assertEqual(sorted(got), ["128", "32", "64"])  # 8192: over pocl's work-group limit, never an entry
        with open(FIXTURE) as f:
            kt = json.load(f)["cache"]
        for k, e in got.items():
            self.assertEqual(e["block_size_x"], int(k))
            self.assertIsInstance(e["time"], float)
            self.assertEqual(e["time"], kt[k]["time"])
            self.assertEqual(len(e["times"]), 7)  # Kernel Tuner's 7 iterations
            self.assertFalse(isinstance(e["time"], ErrorConfig))

    def test_other_kernel_refused(self):
        with self.assertRaises(ValueError) as cm:
            quasim.cache.read(FIXTURE, "vector_add", spec([32, 64, 128, 8192], size=20000))
        self.assertIn("problem_size", str(cm.exception))
        with self.assertRaises(ValueError) as cm:
            quasim.cache.read(FIXTURE, "vector_add", spec([32, 64]), device_name="another device")
        self.assertIn("device_name", str(cm.exception))


def kernel_tuner_python():
    """A command that runs Kernel Tuner, or None and why not."""
    env = dict(os.environ, PYTHONPATH=KT_ENV)
    try:
        r = subprocess.run(["/usr/bin/python3", "-c", "import kernel_tuner"], env=env, stderr=subprocess.PIPE,
                           text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, "Kernel Tuner not runnable: %s" % e
    if r.returncode != 0:
        return None, ("Kernel Tuner cannot be imported from KT_ENV=%s (examples/kt-side-by-side/setup.sh makes it "
                      "from a fetched copy of its repository): %s" % (KT_ENV, r.stderr.strip().splitlines()[-1:]))
    return env, ""


def have_device():
    try:
        return "device_name" in quasim.interface.environment()
    except (FileNotFoundError, ValueError):
        return False


KT, WHY = kernel_tuner_python() if have_device() else (None, "no OpenCL device, or no quasimctl ($QUASIMCTL)")


@unittest.skipUnless(KT, WHY)
class KernelTunerLive(unittest.TestCase):
    """Kernel Tuner writes, quasim resumes from its file (measuring only
    what it lacks) and writes it, and Kernel Tuner resumes from that."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="quasim-ktcache-")
        self.addCleanup(shutil.rmtree, self.dir)

    def kt(self, cache, blocks):
        def stack():
            import resource
            resource.setrlimit(resource.RLIMIT_STACK, (256 << 20, 256 << 20))

        r = subprocess.run(["/usr/bin/python3", WRITER, cache, blocks], env=dict(KT, PYOPENCL_NO_CACHE="1"),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=600, preexec_fn=stack)
        self.assertEqual(r.returncode, 0, r.stderr[-2000:])
        return json.loads(r.stdout.strip().splitlines()[-1])

    def test_round_trip(self):
        cache = os.path.join(self.dir, "va.json")
        first = self.kt(cache, "32,64")
        with open(cache) as f:
            by_kt = json.load(f)["cache"]
        self.assertEqual(sorted(by_kt), ["32", "64"])
        size = 10000
        a = numpy.random.rand(size).astype(numpy.float32)
        results, env = tune_kernel("vector_add", SOURCE, size, [numpy.zeros_like(a), a, a, numpy.int32(size)],
                                   {"block_size_x": [32, 64, 128]}, answer=[2 * a, None, None, None], cache=cache,
                                   quiet=True)
        self.assertEqual(env["device_name"], first["device_name"])
        self.assertEqual(env["quasim"]["evals"], 1)  # 128 alone: Kernel Tuner's two were not measured again
        times = {r["block_size_x"]: r["time"] for r in results}
        self.assertEqual(times[32], by_kt["32"]["time"])
        self.assertEqual(times[64], by_kt["64"]["time"])
        with open(cache) as f:
            by_quasim = json.load(f)["cache"]
        self.assertEqual(sorted(by_quasim), ["128", "32", "64"])
        # Kernel Tuner resumes from quasim's file: 128's time is quasim's,
        # read, not measured again.
        again = self.kt(cache, "32,64,128")
        self.assertEqual({r["block_size_x"]: r["time"] for r in again["results"]},
                         {int(k): e["time"] for k, e in by_quasim.items()})


if __name__ == "__main__":
    unittest.main()
