"""A kernel tuned with tune_kernel, exported as a spec, tuned and served
by a real quasimd ($QUASIMD: its path), and built with the served config
by quasim.build_kernel in a PyOpenCL program that checks its answer."""

import os
import shutil
import subprocess
import tempfile
import time
import unittest

import numpy

import quasim
import quasim.build
from quasim.client import Client
from test_interface import DEVICE, VECTOR_ADD, WHY

QUASIMD = os.environ.get("QUASIMD")


@unittest.skipUnless(DEVICE, WHY)
@unittest.skipUnless(QUASIMD, "QUASIMD is not set: no quasimd to serve the exported spec")
class Served(unittest.TestCase):
    def setUp(self):
        try:
            import pyopencl  # noqa: F401
        except ImportError:
            self.skipTest("no PyOpenCL (python3-pyopencl)")
        self.dir = tempfile.mkdtemp(prefix="qs", dir="/tmp")  # a short socket path
        self.addCleanup(shutil.rmtree, self.dir)

    def test_export_serve_build(self):
        import pyopencl as cl

        size = 1 << 16
        a = numpy.random.rand(size).astype(numpy.float32)
        b = numpy.random.rand(size).astype(numpy.float32)
        args = [numpy.zeros_like(a), a, b, numpy.int32(size)]
        tune_params = {"block_size_x": [32, 64, 128, 256]}
        answer = [a + b, None, None, None]
        results, env = quasim.tune_kernel("vector_add", VECTOR_ADD, size, args, tune_params, answer=answer, quiet=True)
        self.assertEqual(len(results), 4)
        kernels = os.path.join(self.dir, "kernels")
        path = quasim.export_spec(kernels, "vector_add", VECTOR_ADD, size, args, tune_params, answer=answer,
                                  name="vadd", budget=4)
        self.assertEqual(sorted(os.listdir(kernels)), ["vadd.answer0.npy", "vadd.arg1.npy", "vadd.arg2.npy",
                                                       "vadd.cl", "vadd.yaml"])
        sock = os.path.join(self.dir, "q.sock")
        log = open(os.path.join(self.dir, "quasimd.log"), "w+")
        self.addCleanup(log.close)
        d = subprocess.Popen([QUASIMD, "--socket", sock, "--state-dir", os.path.join(self.dir, "state"),
                              "--kernels", kernels, "--lock-dir", os.path.join(self.dir, "locks"), "--idle-cpu", "0"],
                             stdout=log, stderr=subprocess.STDOUT)
        self.addCleanup(d.wait, 30)
        self.addCleanup(d.terminate)
        rt = Client(sock, timeout=2.0, ttl=0)
        deadline = time.monotonic() + 300
        served = None
        while time.monotonic() < deadline and d.poll() is None:
            try:
                served, _ = rt.config("vadd", [size])
            except Exception:
                served = None
            if served and served.get("certificate"):
                break
            time.sleep(1)
        log.seek(0)
        self.assertTrue(served and served.get("certificate"), "vadd not certified in time; %s; log:\n%s"
                        % (path, log.read()[-3000:]))
        ctx = cl.Context([quasim.build._device(cl, 0)])
        q = cl.CommandQueue(ctx)
        built = quasim.build_kernel(ctx, VECTOR_ADD, "vector_add", [size], {"block_size_x": 32}, name="vadd",
                                    client=rt)
        self.assertEqual(built.result.reason, "")
        self.assertEqual(built.config, served["config"])
        mf = cl.mem_flags
        c = numpy.zeros_like(a)
        bufs = [cl.Buffer(ctx, mf.WRITE_ONLY, c.nbytes), cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a),
                cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=b)]
        built.kernel(q, built.global_size, built.local_size, *bufs, numpy.int32(size))
        cl.enqueue_copy(q, c, bufs[0])
        q.finish()
        numpy.testing.assert_allclose(c, a + b)


if __name__ == "__main__":
    unittest.main()
