"""Tests of quasim_client against a real quasimd.

QUASIM_TEST_SOCKET names the socket of a daemon that serves a certified
config of kernel "reduce" at problem 65536 (the Go test TestPythonClient in
cmd/quasimd starts one and runs these). Without it the tests are skipped.
"""

import http.client
import json
import os
import tempfile
import threading
import time
import unittest

import quasim_client
from quasim_client import Client

SOCKET = os.environ.get("QUASIM_TEST_SOCKET")
DEFAULTS = {"block": 1024}


@unittest.skipUnless(SOCKET, "QUASIM_TEST_SOCKET is not set: no daemon to test against")
class AgainstDaemon(unittest.TestCase):
    def test_lookup_returns_served_config(self):
        rt = Client(SOCKET, timeout=2.0)
        res = rt.lookup("reduce", [65536], DEFAULTS)
        self.assertEqual(res.reason, "")
        self.assertEqual(res.match, "exact")
        self.assertTrue(res.certificate)
        answer, _ = rt.config("reduce", [65536])
        self.assertEqual(res.key, answer["key"])
        self.assertEqual(res.config, answer["config"])
        self.assertIs(rt.lookup("reduce", [65536], DEFAULTS), res, "repeat lookup not from the cache")

    def test_nearest(self):
        res = Client(SOCKET, timeout=2.0).lookup("reduce", [70000], DEFAULTS)
        self.assertEqual(res.match, "nearest")
        self.assertEqual(res.from_problem, "65536")

    def test_unknown_kernel_gives_defaults(self):
        res = Client(SOCKET, timeout=2.0).lookup("no-such-kernel", [1], DEFAULTS)
        self.assertIs(res.config, DEFAULTS)
        self.assertEqual(res.match, "")
        self.assertIn("no-such-kernel", res.reason)

    def test_observe(self):
        rt = Client(SOCKET, timeout=2.0)
        res = rt.lookup("reduce", [65536], DEFAULTS)
        got = rt.observe("reduce", [65536], res.key, [0.001, 0.002])
        self.assertEqual(got["stored"], 2)
        with self.assertRaises(quasim_client.DaemonError) as cm:
            rt.observe("reduce", [65536], res.key, [-1])
        self.assertIn("latencies_ms[0]", str(cm.exception))

    def test_etag_not_modified(self):
        rt = Client(SOCKET, timeout=2.0)
        answer, tag = rt.config("reduce", [65536])
        self.assertTrue(tag)
        again, tag2 = rt.config("reduce", [65536], etag=tag)
        self.assertIsNone(again)
        self.assertEqual(tag2, tag)

    def test_watch_hot_swaps_on_revocation(self):
        rt = Client(SOCKET, timeout=2.0)
        got = []
        cond = threading.Condition()

        def seen(res):
            with cond:
                got.append(res)
                cond.notify_all()

        stop = threading.Event()
        t = threading.Thread(target=rt.watch, args=("reduce", [65536], seen, stop, 5.0), daemon=True)
        t.start()
        try:
            with cond:
                self.assertTrue(cond.wait_for(lambda: len(got) >= 1, timeout=10), "no first answer")
            first = got[0]
            revoke(first.certificate)
            with cond:
                self.assertTrue(cond.wait_for(lambda: len(got) >= 2, timeout=30), "no swap after revocation")
            self.assertNotEqual(got[1].certificate, first.certificate)
            self.assertEqual(rt.lookup("reduce", [65536], DEFAULTS).certificate, got[1].certificate)
        finally:
            stop.set()
            t.join(timeout=40)


def revoke(cert):
    conn = quasim_client._UnixConnection(SOCKET, 5.0)
    try:
        body = json.dumps({"reason": "python client test: hot swap"})
        conn.request("POST", "/v1/certs/%s/revoke" % cert, body=body, headers={"Content-Type": "application/json"})
        resp = conn.getresponse()
        data = resp.read()
        if resp.status != 200:
            raise AssertionError("revoke: %d %s" % (resp.status, data))
    finally:
        conn.close()


class WithoutDaemon(unittest.TestCase):
    def test_defaults_within_timeout(self):
        path = os.path.join(tempfile.mkdtemp(), "none.sock")
        rt = Client(path, timeout=0.02)
        for _ in range(3):
            start = time.monotonic()
            res = rt.lookup("reduce", [65536], DEFAULTS)
            self.assertLess(time.monotonic() - start, 0.5)
            self.assertIs(res.config, DEFAULTS)
            self.assertIn("unavailable", res.reason)

    def test_default_socket_honours_env(self):
        old = os.environ.get("QUASIM_SOCKET")
        os.environ["QUASIM_SOCKET"] = "/x/y.sock"
        try:
            self.assertEqual(quasim_client.default_socket(), "/x/y.sock")
        finally:
            if old is None:
                del os.environ["QUASIM_SOCKET"]
            else:
                os.environ["QUASIM_SOCKET"] = old


if __name__ == "__main__":
    unittest.main()
