"""Ask quasimd which config to launch a kernel with.

Standard library only (http.client over an AF_UNIX socket). The calls are
those of the Go package github.com/quasim/quasim/runtime:

    from quasim_client import Client
    rt = Client()                       # finds the socket: see sockets()
    res = rt.lookup("sgemm", [1024, 1024, 1024], defaults={"tile": 16})
    launch(**res.config)                # res.reason says why, if these are the defaults

A repeat lookup is answered from an in-process cache; a miss asks the daemon
within the timeout, and when the daemon is down or does not know the kernel
the caller's defaults come back with the reason: a launch is never blocked.
watch() long-polls the daemon and swaps the cached config when a new one is
promoted.

Each lookup answered with the caller's defaults because quasimd could not
answer is counted (Client.fallbacks, Client.last_reason), and the first of
each outage is logged once as a warning on the "quasim" logger (which
Python prints on stderr when the application configured no logging);
pass on_fallback to do something else.
"""

import http.client
import json
import logging
import os
import socket
import threading
import time
import urllib.parse

__all__ = ["Client", "Result", "default_socket", "sockets", "SYSTEM_SOCKET"]

HOST = "quasimd"  # the Host the daemon accepts

# The socket of quasimd run as a system service (systemd RuntimeDirectory=quasim).
SYSTEM_SOCKET = "/run/quasim/quasimd.sock"

_log = logging.getLogger("quasim")


def sockets():
    """The sockets a Client with no socket_path tries, in order:
    $QUASIM_SOCKET alone when set; else the user's own daemon's socket
    ($XDG_RUNTIME_DIR/quasim/quasimd.sock, else /tmp/quasim-<uid>/quasimd.sock)
    when a daemon answers there, then the system service's SYSTEM_SOCKET.
    For root only SYSTEM_SOCKET."""
    env = os.environ.get("QUASIM_SOCKET")
    if env:
        return [env]
    uid = os.getuid()
    if uid == 0:
        return [SYSTEM_SOCKET]
    run = os.environ.get("XDG_RUNTIME_DIR")
    if run:
        return [os.path.join(run, "quasim", "quasimd.sock"), SYSTEM_SOCKET]
    tmp = os.environ.get("TMPDIR") or "/tmp"
    return [os.path.join(tmp, "quasim-%d" % uid, "quasimd.sock"), SYSTEM_SOCKET]


def default_socket():
    """The first of sockets()."""
    return sockets()[0]


class _UnixConnection(http.client.HTTPConnection):
    def __init__(self, paths, timeout):
        super().__init__(HOST, timeout=timeout)
        self._paths = paths

    def connect(self):
        errs = []
        for path in self._paths:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.settimeout(self.timeout)
            try:
                s.connect(path)
            except socket.timeout:
                s.close()
                raise
            except OSError as e:
                s.close()
                errs.append("%s: %s" % (path, e.strerror or e))
                continue
            self.sock = s
            return
        raise ConnectionError("cannot reach quasimd at " + "; nor at ".join(errs))


class Result:
    """The config to launch with.

    config: parameter name -> value (the daemon's answer, or the caller's
    defaults); key: its canonical key ("" for defaults); match: "exact",
    "nearest", "default", or "" for the caller's defaults; certificate: the
    certificate id behind it; from_problem: for a nearest match, the tuned
    problem used; reason: why these are the defaults, or why a cached answer
    could not be refreshed ("" otherwise); certified_for: the problem the
    certificate was issued for (a nearest match's is from_problem's until
    the daemon has verified the config at the problem asked for).
    """

    __slots__ = ("config", "key", "match", "certificate", "from_problem", "reason", "certified_for")

    def __init__(self, config, key="", match="", certificate="", from_problem="", reason="", certified_for=""):
        self.config = config
        self.key = key
        self.match = match
        self.certificate = certificate
        self.from_problem = from_problem
        self.reason = reason
        self.certified_for = certified_for

    @classmethod
    def _from_answer(cls, a):
        return cls(a.get("config") or {}, a.get("key", ""), a.get("match", ""),
                   a.get("certificate", ""), a.get("from_problem", ""),
                   certified_for=a.get("certified_for", ""))

    def __repr__(self):
        return "Result(key=%r, match=%r, certificate=%r, reason=%r)" % (
            self.key, self.match, self.certificate, self.reason)


class DaemonError(Exception):
    """quasimd answered with an error: status, code and message."""

    def __init__(self, status, code, message):
        super().__init__(message)
        self.status = status
        self.code = code


class _Entry:
    __slots__ = ("result", "etag", "at", "failed")

    def __init__(self, result, etag, at, failed=False):
        self.result = result
        self.etag = etag
        self.at = at
        self.failed = failed


def _problem(problem):
    if problem is None:
        return ""
    if isinstance(problem, str):
        return problem
    return ",".join(str(int(d)) for d in problem)


class Client:
    """Looks configs up. Safe to share between threads."""

    RETRY_FAILED = 1.0  # seconds a failed first lookup is remembered

    def __init__(self, socket_path=None, timeout=0.05, ttl=10.0, device=None, on_fallback=None):
        """socket_path None tries sockets() in order on each request.
        on_fallback(reason), if given, replaces the warning logged at the
        start of each outage."""
        self.sockets = [socket_path] if socket_path else sockets()
        self.socket_path = self.sockets[0]
        self.timeout = timeout
        self.ttl = ttl
        self.device = device
        self.on_fallback = on_fallback
        self.fallbacks = 0  # lookups answered with the defaults
        self.last_reason = ""  # why the last of them was
        self._down = False
        self._lock = threading.Lock()
        self._cache = {}

    def config(self, kernel, problem=None, etag=None, wait=None, timeout=None):
        """GET /v1/configs/KERNEL once. Returns (answer dict or None, etag);
        None when etag still matches (HTTP 304). Raises DaemonError or
        OSError."""
        query = {}
        p = _problem(problem)
        if p:
            query["problem"] = p
        if self.device:
            query["device"] = self.device
        headers = {"Accept": "application/json"}
        if etag:
            headers["If-None-Match"] = etag
            if wait:
                query["wait"] = "%gs" % wait
        path = "/v1/configs/" + urllib.parse.quote(kernel, safe="")
        if query:
            path += "?" + urllib.parse.urlencode(query)
        t = self.timeout if timeout is None else timeout
        if wait:
            t += wait
        conn = _UnixConnection(self.sockets, t)
        try:
            conn.request("GET", path, headers=headers)
            resp = conn.getresponse()
            body = resp.read()
            tag = resp.getheader("ETag", "")
        finally:
            conn.close()
        if resp.status == 304:
            return None, etag
        if resp.status != 200:
            try:
                e = json.loads(body)
                raise DaemonError(resp.status, e.get("code", ""), e.get("error", ""))
            except ValueError:
                raise DaemonError(resp.status, "", body.decode("utf-8", "replace"))
        return json.loads(body), tag

    def lookup(self, kernel, problem, defaults):
        """The config to launch kernel with at problem (a list of ints)."""
        key = kernel + "|" + _problem(problem)
        now = time.monotonic()
        with self._lock:
            e = self._cache.get(key)
        if e is not None:
            if e.failed:
                if now - e.at < min(self.ttl, self.RETRY_FAILED):
                    return self._fallback(defaults, e.result.reason)
            elif now - e.at < self.ttl:
                return e.result
        try:
            answer, etag = self.config(kernel, problem)
        except Exception as err:  # the launch must go on: say why instead
            why = _reason(err)
            if e is not None and not e.failed:
                r = e.result
                stale = Result(r.config, r.key, r.match, r.certificate, r.from_problem, "stale: " + why, r.certified_for)
                self._store(key, _Entry(stale, e.etag, time.monotonic()))
                return stale
            self._store(key, _Entry(Result(None, reason=why), "", time.monotonic(), failed=True))
            return self._fallback(defaults, why)
        res = Result._from_answer(answer)
        self._store(key, _Entry(res, etag, time.monotonic()))
        self._down = False
        return res

    def _fallback(self, defaults, why):
        """Count a lookup answered with the defaults; tell at the start of
        an outage."""
        with self._lock:
            self.fallbacks += 1
            self.last_reason = why
            first = not self._down
            self._down = True
        if first:
            if self.on_fallback is not None:
                self.on_fallback(why)
            else:
                _log.warning("quasimd could not answer; using the caller's defaults: %s", why)
        return Result(defaults, reason=why)

    def watch(self, kernel, problem, callback=None, stop=None, wait=30.0):
        """Long-poll until stop (a threading.Event) is set, keeping the cache
        fresh and calling callback(Result) with each new answer, the first
        one included. Errors are retried with backoff."""
        key = kernel + "|" + _problem(problem)
        etag = None
        backoff = 0.1
        while stop is None or not stop.is_set():
            try:
                answer, tag = self.config(kernel, problem, etag=etag, wait=wait)
            except Exception:
                if stop is not None and stop.wait(backoff):
                    return
                if stop is None:
                    time.sleep(backoff)
                backoff = min(2 * backoff, 30.0)
                continue
            backoff = 0.1
            with self._lock:
                e = self._cache.get(key)
            if answer is None:
                if e is not None and not e.failed:
                    self._store(key, _Entry(e.result, e.etag, time.monotonic()))
                continue
            etag = tag
            res = Result._from_answer(answer)
            self._store(key, _Entry(res, tag, time.monotonic()))
            if callback is not None:
                callback(res)

    def observe(self, kernel, problem, key, latencies_ms, source="python"):
        """Report latencies (ms) a launch with config key measured, so that
        quasimd can see drift. Any local user may, for jobs that exist, at a
        rate quasimd limits per uid (DaemonError with status 429 past it).
        Returns the daemon's answer: {"stored": n, "drift": [jobs]}. Raises
        DaemonError or OSError."""
        body = json.dumps({"observations": [{
            "kernel": kernel, "problem": _problem(problem), "device": self.device or "",
            "key": key, "latencies_ms": list(latencies_ms), "source": source}]})
        conn = _UnixConnection(self.sockets, max(self.timeout, 1.0))
        try:
            conn.request("POST", "/v1/observations", body=body, headers={"Content-Type": "application/json"})
            resp = conn.getresponse()
            data = resp.read()
        finally:
            conn.close()
        if resp.status != 200:
            try:
                e = json.loads(data)
                raise DaemonError(resp.status, e.get("code", ""), e.get("error", ""))
            except ValueError:
                raise DaemonError(resp.status, "", data.decode("utf-8", "replace"))
        return json.loads(data)

    def _store(self, key, entry):
        with self._lock:
            self._cache[key] = entry


def _reason(err):
    if isinstance(err, DaemonError):
        return str(err)
    if isinstance(err, socket.timeout):
        return "quasimd did not answer within the deadline"
    if isinstance(err, OSError):
        return "quasimd unavailable: %s" % err
    return "%s: %s" % (type(err).__name__, err)
