"""Tests of quasim_client against a real quasimd.

QUASIM_TEST_SOCKET names the socket of a daemon that serves a certified
config of kernel "reduce" at problem 65536 (the Go test TestPythonClient in
cmd/quasimd starts one and runs these). Without it the tests are skipped.
QUASIM_TEST_SYSTEM_SOCKET, set by TestRuntimesFindSystemSocket, which runs
the AsUser tests as an ordinary user, names a daemon to be found as the
system service.
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
SPANS = os.environ.get("QUASIM_TEST_SPANS_SOCKET")
SYSTEM = os.environ.get("QUASIM_TEST_SYSTEM_SOCKET")
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
        self.assertEqual(res.certified_for, "65536")

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
        with self.assertRaises(quasim_client.DaemonError) as cm:
            rt.observe("reduce", [65536], res.key, [0.001], error=-1)
        self.assertIn("observations[0].error", str(cm.exception))
        # This job has no error budget: no bound to exceed, nothing revoked.
        got = rt.observe("reduce", [65536], res.key, [0.001], error=0.5)
        self.assertEqual((got["stored"], got["revoked"]), (1, []))

    def test_fallbacks_counted(self):
        calls = []
        rt = Client(SOCKET, timeout=2.0, on_fallback=calls.append)
        rt.lookup("no-such-kernel", [1], DEFAULTS)
        rt.lookup("no-such-kernel", [2], DEFAULTS)
        self.assertEqual(rt.fallbacks, 2)
        self.assertIn("no-such-kernel", rt.last_reason)
        self.assertEqual(len(calls), 1, "one call per outage")
        self.assertEqual(rt.lookup("reduce", [65536], DEFAULTS).match, "exact")
        rt.lookup("no-such-kernel", [3], DEFAULTS)
        self.assertEqual((rt.fallbacks, len(calls)), (3, 2))

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
    conn = quasim_client._UnixConnection([SOCKET], 5.0)
    try:
        body = json.dumps({"reason": "python client test: hot swap"})
        conn.request("POST", "/v1/certs/%s/revoke" % cert, body=body, headers={"Content-Type": "application/json"})
        resp = conn.getresponse()
        data = resp.read()
        if resp.status != 200:
            raise AssertionError("revoke: %d %s" % (resp.status, data))
    finally:
        conn.close()


class Defines(unittest.TestCase):
    def test_defines(self):
        cfg = json.loads('{"block_size_x": 16, "use_local": true, "scale": 0.5, "T": "float", "tiny": 1e-7}')
        self.assertEqual(quasim_client.defines(cfg),
                         "-Dblock_size_x=16 -Duse_local=1 -Dscale=0.5 -DT=float -Dtiny=1e-7")
        self.assertEqual(quasim_client.Result(cfg).defines(), quasim_client.defines(cfg))


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

    def test_fallback_logged_once(self):
        rt = Client(os.path.join(tempfile.mkdtemp(), "none.sock"), timeout=0.02)
        with self.assertLogs("quasim", "WARNING") as logs:
            rt.lookup("reduce", [65536], DEFAULTS)
            rt.lookup("sgemm", [1], DEFAULTS)
        self.assertEqual(len(logs.output), 1, logs.output)
        self.assertIn("none.sock", logs.output[0])
        self.assertEqual(rt.fallbacks, 2)

    def test_spans_without_daemon(self):
        rec = Client(os.path.join(tempfile.mkdtemp(), "none.sock")).spans("p", interval=0.01)
        for _ in range(3):
            rec.end(rec.start("k", "", "s0"))
        start = time.monotonic()
        self.assertFalse(rec.close(timeout=0.2))
        self.assertLess(time.monotonic() - start, 1.0)
        st = rec.stats()
        self.assertEqual((st["ended"], st["sent"], st["unsent"]), (3, 0, 3), st)
        self.assertIn("none.sock", st["last_error"])

    def test_spans_iteration_waits_for_its_spans(self):
        # Driven by hand (no thread): iteration 0 is held while a span of
        # it is open, then goes whole.
        rec = quasim_client.SpanRecorder("p", os.path.join(tempfile.mkdtemp(), "none.sock"), thread=False, interval=3600)
        late = rec.start("late", "", "s9")
        rec.end(rec.start("a", "", "s0"))
        rec.next_iteration()
        rec.end(rec.start("b", "", "s0"))
        sent = []
        rec._post = lambda recs, timeout: sent.append([r[2] for r in recs])
        rec._step(send_all=False, deadline=None)
        self.assertEqual(sent, [], "iteration 0 went with a span open")
        rec.end(late)
        rec.next_iteration()
        rec._step(send_all=False, deadline=None)
        self.assertEqual(sent, [["late", "a", "b"]])

    def test_sockets_order(self):
        env = {k: os.environ.pop(k) for k in ("QUASIM_SOCKET", "XDG_RUNTIME_DIR") if k in os.environ}
        try:
            os.environ["XDG_RUNTIME_DIR"] = "/run/user/7"
            want = ["/run/user/7/quasim/quasimd.sock", quasim_client.SYSTEM_SOCKET]
            if os.getuid() == 0:
                want = [quasim_client.SYSTEM_SOCKET]
            self.assertEqual(quasim_client.sockets(), want)
            os.environ["QUASIM_SOCKET"] = "/x/y.sock"
            self.assertEqual(quasim_client.sockets(), ["/x/y.sock"])
        finally:
            for k in ("QUASIM_SOCKET", "XDG_RUNTIME_DIR"):
                os.environ.pop(k, None)
            os.environ.update(env)

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


def fork_join(rec):
    """One iteration: a; b and c after it on two streams; d after both."""
    a = rec.start("a", "64", "s0")
    rec.end(a)
    b = rec.start("b", "64", "s0", deps=[a.id])
    c = rec.start("c", "64", "s1", deps=[a.id])
    rec.end(c)
    rec.end(b)
    rec.end(rec.start("d", "64", "s0", deps=[b.id, c.id]))


@unittest.skipUnless(SPANS, "QUASIM_TEST_SPANS_SOCKET is not set: no spans server to test against")
class Spans(unittest.TestCase):
    """Against a server of POST /v1/spans that knows pipelines py-fj,
    py-cap, py-threads and py-429, the last answered 429 twice (the Go test
    TestPythonSpans in runtime/ runs one, and checks what it received)."""

    def test_fork_join(self):
        rec = Client(SPANS).spans("py-fj", device="cpu0", interval=60.0)
        fork_join(rec)
        self.assertEqual(rec.next_iteration(), 1)
        fork_join(rec)
        self.assertTrue(rec.close(timeout=5.0), rec.stats())
        st = rec.stats()
        self.assertEqual((st["ended"], st["sent"], st["deps_dropped"]), (8, 8, 0), st)

    def test_small_buffer_no_thread(self):
        rec = quasim_client.SpanRecorder("py-cap", SPANS, capacity=4, thread=False)
        rec.end(rec.start("k", "", "s0", deps=[0] * (rec.MAX_DEPS + 2)))
        for _ in range(5):
            rec.end(rec.start("k", "", "s0"))
        st = rec.stats()
        self.assertEqual((st["ended"], st["dropped_full"], st["sent"]), (6, 2, 0), st)
        self.assertTrue(rec.flush())
        st = rec.stats()
        # 2 past the limit, and the 8 kept name span 0, not in the batch.
        self.assertEqual((st["sent"], st["batches"], st["deps_dropped"]), (4, 1, rec.MAX_DEPS + 2), st)
        rec.close()

    def test_unknown_pipeline(self):
        rec = quasim_client.SpanRecorder("nope", SPANS, thread=False)
        rec.end(rec.start("k", "", "s0"))
        self.assertFalse(rec.close(timeout=2.0))
        st = rec.stats()
        self.assertEqual(st["rejected"], 1, st)
        self.assertIn("404", st["last_error"])
        self.assertIn("nope", st["last_error"])

    def test_rate_limited(self):
        # py-429 answers 429 twice (no Retry-After): the batch is kept and
        # sent again after a backoff of interval, then 2 x interval.
        rec = Client(SPANS).spans("py-429", interval=0.02)
        fork_join(rec)
        rec.next_iteration()
        deadline = time.monotonic() + 10
        while rec.stats()["sent"] < 4 and time.monotonic() < deadline:
            time.sleep(0.001)
        st = rec.stats()
        self.assertEqual(st["sent"], 4, st)
        self.assertIn("429", st["last_error"])
        rec.close()

    def test_threads(self):
        rec = Client(SPANS).spans("py-threads", batch=500, interval=0.01)

        def work(stream):
            for _ in range(500):
                rec.end(rec.start("k", "", stream))

        ts = [threading.Thread(target=work, args=("t%d" % i,)) for i in range(4)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        self.assertTrue(rec.close(timeout=5.0), rec.stats())
        self.assertEqual(rec.stats()["sent"], 2000)


@unittest.skipUnless(SYSTEM, "QUASIM_TEST_SYSTEM_SOCKET is not set")
class AsUser(unittest.TestCase):
    """Run as an ordinary user with no daemon of their own."""

    def setUp(self):
        self.assertNotEqual(os.getuid(), 0, "run these as an ordinary user")
        self.assertNotIn("QUASIM_SOCKET", os.environ)
        quasim_client.SYSTEM_SOCKET = SYSTEM

    def test_finds_system_socket(self):
        rt = Client(timeout=2.0)
        self.assertEqual(rt.sockets[1], SYSTEM)
        res = rt.lookup("reduce", [65536], DEFAULTS)
        self.assertEqual((res.match, res.reason, rt.fallbacks), ("exact", "", 0))

    def test_observe_as_user(self):
        rt = Client(timeout=2.0)
        res = rt.lookup("reduce", [65536], DEFAULTS)
        self.assertEqual(rt.observe("reduce", [65536], res.key, [0.001])["stored"], 1)
        with self.assertRaises(quasim_client.DaemonError) as cm:
            rt.observe("reduce", [99], res.key, [0.001])
        self.assertEqual(cm.exception.status, 404)
        self.assertIn("99", str(cm.exception))


if __name__ == "__main__":
    unittest.main()
