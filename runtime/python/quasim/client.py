"""Ask quasimd which config to launch a kernel with.

Standard library only (http.client over an AF_UNIX socket). The calls are
those of the Go package github.com/quasim/quasim/runtime:

    from quasim.client import Client
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
import itertools
import json
import logging
import os
import socket
import threading
import time
import urllib.parse

__all__ = ["Client", "Result", "Span", "SpanRecorder", "default_socket", "sockets", "SYSTEM_SOCKET"]

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

    def defines(self):
        """The config as compiler options: see defines()."""
        return defines(self.config)

    def __repr__(self):
        return "Result(key=%r, match=%r, certificate=%r, reason=%r)" % (
            self.key, self.match, self.certificate, self.reason)


def defines(config):
    """config (name -> value) as compiler options, "-DNAME=VALUE" for each
    parameter, space-separated: the options quasimd's OpenCL worker compiled
    and verified the config with (numbers as JSON writes them, True and
    False as 1 and 0, strings as written)."""
    parts = []
    for name, v in config.items():
        if isinstance(v, bool):
            text = "1" if v else "0"
        elif isinstance(v, float):
            text = repr(v).replace("e-0", "e-").replace("e+0", "e+")
            if text.endswith(".0"):  # JSON from Go writes 2.0 as 2
                text = text[:-2]
        else:
            text = str(v)
        parts.append("-D%s=%s" % (name, text))
    return " ".join(parts)


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

    def observe(self, kernel, problem, key, latencies_ms, source="python", error=None):
        """Report latencies (ms) a launch with config key measured, so that
        quasimd can see drift. Any local user may, for jobs that exist, at a
        rate quasimd limits per uid (DaemonError with status 429 past it).
        error, when given, is the largest error the launch's output showed
        against a reference computed on a sample of its inputs, in the unit
        of the job's error budget (relative for rel); one above the bound
        of the config's certificate revokes it, and the cached answer for
        kernel at problem is dropped. Returns the daemon's answer:
        {"stored": n, "drift": [jobs], "revoked": [certificates]}. Raises
        DaemonError or OSError."""
        obs = {
            "kernel": kernel, "problem": _problem(problem), "device": self.device or "",
            "key": key, "latencies_ms": list(latencies_ms), "source": source}
        if error is not None:
            obs["error"] = error
        body = json.dumps({"observations": [obs]})
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
        got = json.loads(data)
        if got.get("revoked"):
            with self._lock:
                self._cache.pop(kernel + "|" + _problem(problem), None)
        return got

    def spans(self, pipeline, **options):
        """A SpanRecorder of pipeline's spans, sent to this client's
        daemon; options are SpanRecorder's."""
        options.setdefault("device", self.device or "")
        return SpanRecorder(pipeline, socket_paths=self.sockets, **options)

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


class Span:
    """A started span: pass it to SpanRecorder.end. id names it in later
    spans' deps."""

    __slots__ = ("id", "iteration", "kernel", "problem", "stream", "deps", "start_ns")

    def __init__(self, id, iteration, kernel, problem, stream, deps, start_ns):
        self.id = id
        self.iteration = iteration
        self.kernel = kernel
        self.problem = problem
        self.stream = stream
        self.deps = deps
        self.start_ns = start_ns


_RETRY = object()  # _post's answer when quasimd is away or rate-limiting


class SpanRecorder:
    """Records the spans of one pipeline's kernel launches and sends them
    to quasimd (POST /v1/spans) from a background thread, as the Go
    package's SpanRecorder does:

        rec = Client().spans("infer", device="gpu0")
        a = rec.start("conv2d", "224,224", "stream0")
        ...                                # launch, wait
        rec.end(a)
        b = rec.start("reduce", "65536", "stream1", deps=[a.id])
        ...
        rec.next_iteration()               # at the end of each pass
        rec.close(timeout=1.0)             # sends what is left

    start and end read the monotonic clock (times go out as Unix ns) and
    append under a lock; they never do I/O and never wait on the daemon.
    The spans of a finished iteration are sent together once all of them
    have ended, and iterations in order; the others once `interval` seconds
    have passed or `batch` of them are waiting; requests are at least interval/4 apart unless a full batch
    waits, so fast iterations share batches. With thread=False there is no thread: call flush() where
    waiting is fine.

    Nothing is lost silently: stats() counts spans dropped because the
    buffer (`capacity`) was full or the recorder closed, spans unsent
    because quasimd was away or rate-limiting for long, spans in batches
    quasimd refused (rejected: nothing of such a batch is stored, and
    last_error says why), and dependencies dropped because they name a span
    outside the batch (an iteration stays in one batch when it fits) or
    are past MAX_DEPS. Spans are not validated here beyond that: a batch
    with two spans overlapping on one stream is refused whole."""

    MAX_DEPS = 8
    _OPEN_SLOTS = 64  # recent iterations told apart by their open spans; an older one counts as ended

    def __init__(self, pipeline, socket_path=None, device="", capacity=4096, batch=1024,
                 interval=1.0, timeout=2.0, thread=True, socket_paths=None):
        if not pipeline:
            raise ValueError("spans: empty pipeline name")
        self.pipeline = pipeline
        self.device = device or ""
        self.sockets = [socket_path] if socket_path else (socket_paths or sockets())
        self.capacity = capacity
        self.batch = min(batch, capacity)
        self.interval = interval
        self.timeout = timeout
        self._offset = time.time_ns() - time.monotonic_ns()
        self._ids = itertools.count(1)
        self._iteration = 0
        self._open = [0] * self._OPEN_SLOTS  # spans started, not ended, of iteration i at i % _OPEN_SLOTS
        self._lock = threading.Lock()  # guards _buf, _iteration, _closing and the counts
        self._buf = []
        self._closing = False
        self._close_deadline = None
        self._stats = {"ended": 0, "sent": 0, "batches": 0, "dropped_full": 0, "unsent": 0,
                       "rejected": 0, "deps_dropped": 0, "last_error": ""}
        self._send_lock = threading.Lock()  # one sender at a time; guards what follows
        self._pending = []
        self._hold = 0.0
        self._backoff = 0.0
        self._last = float("-inf")  # when the last batch went
        self._released = 0  # the first iteration not yet sent whole
        self._wake = threading.Event()
        self._thread = None
        if thread:
            self._thread = threading.Thread(target=self._run, name="quasim-spans", daemon=True)
            self._thread.start()

    def start(self, kernel, problem="", stream="", deps=()):
        """Start a span of kernel at problem on stream, after the spans
        whose ids deps names."""
        deps = tuple(deps)
        with self._lock:
            it = self._iteration
            self._open[it % self._OPEN_SLOTS] += 1
            if len(deps) > self.MAX_DEPS:
                self._stats["deps_dropped"] += len(deps) - self.MAX_DEPS
                deps = deps[:self.MAX_DEPS]
        return Span(next(self._ids), it, kernel, problem, stream, deps, time.monotonic_ns() + self._offset)

    def end(self, span):
        """End span and queue it for sending; call it once per span."""
        end = time.monotonic_ns() + self._offset
        rec = (span.id, span.iteration, span.kernel, span.problem or "", span.stream or "", span.deps, span.start_ns, end)
        with self._lock:
            self._stats["ended"] += 1
            self._open[span.iteration % self._OPEN_SLOTS] -= 1
            if self._closing or len(self._buf) >= self.capacity:
                self._stats["dropped_full"] += 1
                return
            self._buf.append(rec)
            if len(self._buf) == self.batch:
                self._wake.set()

    def next_iteration(self):
        """End one pass of the pipeline; spans started from now on belong
        to the next, whose number it returns."""
        with self._lock:
            self._iteration += 1
            it = self._iteration
        self._wake.set()
        return it

    def stats(self):
        """What became of the spans so far (a dict of counts, and
        last_error)."""
        with self._lock:
            return dict(self._stats)

    def flush(self):
        """Send every span that has ended, on the caller's thread. True
        when none is left for a later try."""
        return self._step(send_all=True, deadline=None)

    def close(self, timeout=None):
        """Send what has ended within timeout seconds (None: the request
        timeout) and stop. True when every span ended was sent."""
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        with self._lock:
            self._close_deadline = deadline
            self._closing = True
        if self._thread is not None:
            self._wake.set()
            self._thread.join(max(0.0, deadline - time.monotonic()) + self.timeout)
        else:
            self._step(send_all=True, deadline=deadline)
        # The thread has stopped, or its last request ends by the deadline.
        if self._send_lock.acquire(timeout=max(0.0, deadline - time.monotonic()) + 0.1):
            try:
                left = len(self._pending)
                self._pending = []
            finally:
                self._send_lock.release()
        else:
            left = len(self._pending)
        with self._lock:
            self._stats["unsent"] += left + len(self._buf)
            self._buf = []
            return self._stats["sent"] == self._stats["ended"]

    def _run(self):
        while True:
            self._wake.wait(self.interval / 4)
            self._wake.clear()
            with self._lock:
                closing, deadline = self._closing, self._close_deadline
            if closing:
                self._step(send_all=True, deadline=deadline)
                return
            try:
                self._step(send_all=False, deadline=None)
            except Exception as err:  # the thread must go on: say why instead
                with self._lock:
                    self._stats["last_error"] = "%s: %s" % (type(err).__name__, err)

    def _step(self, send_all, deadline):
        with self._send_lock:
            with self._lock:
                got, self._buf = self._buf, []
                cur = self._iteration
                # rel: the first iteration from _released on, before cur,
                # with a span still open (cur when none): iterations go
                # whole and in order.
                rel = max(self._released, cur - self._OPEN_SLOTS + 1)
                while rel < cur and self._open[rel % self._OPEN_SLOTS] <= 0:
                    rel += 1
            room = self.capacity - len(self._pending)
            if len(got) > room:
                with self._lock:
                    self._stats["unsent"] += len(got) - room
                got = got[:room]
            self._pending.extend(got)
            p = self._pending
            if not p or (not send_all and time.monotonic() < self._hold):
                return not p
            p.sort(key=lambda r: (r[1], r[0]))
            k = 0
            while k < len(p) and p[k][1] < rel:
                k += 1
            if send_all:
                k, rel = len(p), cur
            elif k < len(p):
                oldest = min(r[7] for r in p[k:])
                if time.monotonic_ns() + self._offset - oldest >= self.interval * 1e9:
                    k, rel = len(p), cur
                elif len(p) - k >= self.batch:
                    k += (len(p) - k) // self.batch * self.batch
            # Requests at least interval/4 apart unless a full batch waits:
            # fast iterations share batches, under quasimd's per-uid rate.
            if not send_all and k < self.batch and time.monotonic() - self._last < self.interval / 4:
                k = 0
            if k:
                self._last = time.monotonic()
                self._released = max(self._released, rel)
            done = 0
            ok = True
            while done < k:
                n = _batch_len(p, done, k, self.batch)
                t = self.timeout
                if deadline is not None:
                    t = min(t, deadline - time.monotonic())
                if t <= 0 or self._post(p[done:done + n], t) is _RETRY:
                    ok = False
                    break
                done += n
            del p[:done]
            return ok

    def _post(self, recs, timeout):
        """Send recs as one batch; count what became of them, except after
        _RETRY (kept by the caller; _hold says when to try again)."""
        ids = {r[0] for r in recs}
        cut = 0
        spans = []
        for (sid, it, kernel, problem, stream, deps, start, end) in recs:
            keep = [d for d in deps if d in ids and d != sid]
            cut += len(deps) - len(keep)
            spans.append({"id": sid, "pipeline": self.pipeline, "iteration": it, "kernel": kernel,
                          "problem": problem, "device": self.device, "stream": stream,
                          "start_ns": start, "end_ns": end, "deps": keep})
        body = json.dumps(spans, separators=(",", ":"))
        status, why, retry_after = 0, "", ""
        conn = _UnixConnection(self.sockets, timeout)
        try:
            conn.request("POST", "/v1/spans", body=body,
                         headers={"Content-Type": "application/json", "Accept": "application/json"})
            resp = conn.getresponse()
            data = resp.read()
            status, retry_after = resp.status, resp.getheader("Retry-After", "")
        except Exception as err:
            why = _reason(err)
        finally:
            conn.close()
        if 200 <= status <= 299:
            self._backoff = 0.0
            with self._lock:
                self._stats["sent"] += len(recs)
                self._stats["batches"] += 1
                self._stats["deps_dropped"] += cut
            return None
        if status == 413 and len(recs) > 1:
            h = len(recs) // 2
            for part in (recs[:h], recs[h:]):
                if self._post(part, timeout) is _RETRY:
                    with self._lock:
                        self._stats["unsent"] += len(part)
            return None
        if status:
            try:
                msg = json.loads(data).get("error", "")
            except ValueError:
                msg = data.decode("utf-8", "replace")
            why = "quasimd: HTTP %d: %s" % (status, msg)
        if status == 429 or not status:
            try:
                wait = float(int(retry_after))
            except ValueError:
                wait = 0.0
            if wait <= 0:
                self._backoff = min(max(2 * self._backoff, self.interval), 30.0)
                wait = self._backoff
            self._hold = time.monotonic() + wait
            with self._lock:
                self._stats["last_error"] = why
            return _RETRY
        with self._lock:
            self._stats["rejected"] += len(recs)
            self._stats["deps_dropped"] += cut
            self._stats["last_error"] = why
        return None


def _batch_len(p, lo, hi, limit):
    """How many of p[lo:hi] go in the next batch: whole iterations while
    they fit in limit, else limit."""
    k = lo
    while k < hi:
        end = k + 1
        while end < hi and p[end][1] == p[k][1]:
            end += 1
        if end - lo > limit:
            return (k - lo) or limit
        k = end
    return k - lo
