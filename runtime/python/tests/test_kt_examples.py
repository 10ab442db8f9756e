"""Kernel Tuner's own OpenCL example scripts, run with quasim: copied from
a fetched copy of its repository ($KT_EXAMPLES, default
/work/kt/examples/opencl; skipped, saying so, without one), "kernel_tuner"
replaced by "quasim" and nothing else changed but sizes, run to their end
as `python3 SCRIPT` in a folder of their own, and their output read as
Kernel Tuner's.

To fit CI's time, every tune_kernel call measures at most
$QUASIM_MAX_FEVALS configs (2 here; the scripts ask for brute force), the
data are smaller (below), and reduction.py runs with KT_EXAMPLES_ALL=1
only. docs/kernel-authors/from-kernel-tuner.md
has them run to the end with every config."""

import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

import quasim.interface

EXAMPLES = os.environ.get("KT_EXAMPLES", "/work/kt/examples/opencl")
FEVALS = "2"
# (file, pattern, replacement): the sizes made smaller for CI.
SIZES = [
    ("vector_add.py", r"size = 10000000", "size = 100000"),
    ("vector_add_codegen.py", r"size = 10000000", "size = 100000"),
    ("convolution_correct.py", r"\(4096, 4096\)", "(256, 256)"),
    ("convolution.cl", r"(?m)^#define image_height 4096$", "#define image_height 256"),
    ("convolution.cl", r"(?m)^#define image_width 4096$", "#define image_width 256"),
    ("reduction.py", r"size = 800000000", "size = 1048576"),
]


def have_device():
    try:
        return "device_name" in quasim.interface.environment()
    except (FileNotFoundError, ValueError):
        return False


WHY = ""
if not os.path.isdir(EXAMPLES):
    WHY = "no Kernel Tuner examples at KT_EXAMPLES=%s (a fetched copy of its repository's examples/opencl)" % EXAMPLES
elif not have_device():
    WHY = "no OpenCL device, or no quasimctl ($QUASIMCTL)"


@unittest.skipIf(WHY, WHY)
class KernelTunerExamples(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="quasim-kt-examples-")
        for f in glob.glob(os.path.join(EXAMPLES, "*.py")) + glob.glob(os.path.join(EXAMPLES, "*.cl")):
            with open(f) as fh:
                text = fh.read()
            name = os.path.basename(f)
            if name.endswith(".py"):
                text = text.replace("kernel_tuner", "quasim")
            for fname, pat, rep in SIZES:
                if fname == name:
                    text, n = re.subn(pat, rep, text)
                    assert n == 1, "%s: %r not found: Kernel Tuner's example changed" % (name, pat)
            with open(os.path.join(cls.dir, name), "w") as fh:
                fh.write(text)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def run_script(self, name):
        t0 = time.monotonic()
        r = subprocess.run([sys.executable, name], cwd=self.dir, env=dict(os.environ, QUASIM_MAX_FEVALS=FEVALS),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=900)
        self.assertEqual(r.returncode, 0, "%s exited %d:\n%s" % (name, r.returncode, r.stderr[-3000:]))
        print("%s: %.1f s" % (name, time.monotonic() - t0), file=sys.stderr)
        return r.stdout

    def check_t4(self, path, params):
        with open(path) as f:
            t4 = json.load(f)
        self.assertEqual(len(t4["results"]), int(FEVALS))
        for r in t4["results"]:
            self.assertEqual(sorted(r["configuration"]), sorted(params))
            self.assertGreater(r["times"]["runtimes"][0], 0)

    def test_vector_add(self):
        out = self.run_script("vector_add.py")
        self.assertIn("BEST PERFORMING CONFIGURATION FOR OBJECTIVE time", out)
        self.check_t4(os.path.join(self.dir, "vector_add.json"), ["block_size_x"])
        with open(os.path.join(self.dir, "vector_add-metadata.json")) as f:
            self.assertIn("environment", json.load(f)["metadata"])

    def test_vector_add_codegen(self):
        # The kernel's source from a function of the config; the script
        # dumps tune_kernel's (results, env) as JSON.
        out = self.run_script("vector_add_codegen.py")
        self.assertRegex(out, r"block_size_x=\d+, time=\d")
        with open(os.path.join(self.dir, "vector_add.json")) as f:
            results, env = json.load(f)
        self.assertEqual(len(results), int(FEVALS))
        self.assertTrue(all(isinstance(r["time"], float) and r["block_size_x"] % 64 == 0 for r in results), results)
        self.assertIn("device_name", env)

    def test_convolution_correct(self):
        # run_kernel computes the answer with the naive kernel; each config
        # is checked against it (answer=[output, None, None]).
        out = self.run_script("convolution_correct.py")
        self.assertRegex(out, r"block_size_x=\d+, block_size_y=\d+, tile_size_x=\d+, tile_size_y=\d+, time=\d")

    @unittest.skipUnless(os.environ.get("KT_EXAMPLES_ALL"), "reduction.py makes 7 tune_kernel calls: with "
                         "KT_EXAMPLES_ALL=1 only, to keep CI short")
    def test_reduction(self):
        # Seven tune_kernel calls: the first kernel with a verify function
        # over num_blocks partial sums, the second for each num_blocks.
        out = self.run_script("reduction.py")
        self.assertIn("uses the following config for the secondary kernel", out)
        with open(os.path.join(self.dir, "reduce.json")) as f:
            first = json.load(f)
        self.assertEqual(len(first), int(FEVALS))
        for r in first:
            self.assertIsInstance(r["time"], float)
            with open(os.path.join(self.dir, "reduce-kernel2-%d.json" % r["num_blocks"])) as f:
                second = json.load(f)
            self.assertEqual(len(second), int(FEVALS))
            self.assertAlmostEqual(r["total"], r["time"] + min(x["time"] for x in second))


if __name__ == "__main__":
    unittest.main()
