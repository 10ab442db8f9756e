"""Kernel Tuner's tune_kernel and run_kernel for OpenCL kernels.

tune_kernel writes the kernel as a quasim spec directory (a temporary one)
and tunes it on this machine's OpenCL device with `quasimctl bench live`:
quasim's search, racing, finalists measured again in fresh processes, and
the output checks, in a worker process of its own; no daemon. Results come
back in Kernel Tuner's format. Set $QUASIMCTL to the quasimctl to run
(default: quasimctl on $PATH).
"""

import json
import logging
import numbers
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime

from quasim import _spec, cache as ktcache, util

# Kernel Tuner's arguments quasim does not take: each fails at once, naming it.
_UNSUPPORTED = {
    "smem_args": "shared-memory arguments are CUDA's",
    "cmem_args": "constant-memory arguments are CUDA's",
    "texmem_args": "texture arguments are CUDA's",
    "compiler": "quasim compiles with the OpenCL driver",
    "observers": "quasim measures time with OpenCL profiling events; observers are not run",
    "simulation_mode": "replay a cache file with `quasimctl bench --space FILE` instead",
    "parallel": "quasim measures one config at a time on the device",
    "objectives": "quasim tunes for time",
}
_STRATEGY_OPTIONS = {"max_fevals", "time_limit"}
DEFAULT_FEVALS = 100
# How long one measurement of a config (its compile included) may take
# before the worker is restarted and the config failed.
CONFIG_TIMEOUT = "10m"
# The search's best configs are measured again in fresh worker processes
# before one is crowned (on pocl a config's time moves with the process
# that measures it), those whose search time is within this factor of the
# best. A finalist's time moved by up to 1.8x from process to process here
# (pocl, 2 cores at load 15), so one over 2x slower is left out: measuring
# it again costs as much as evaluating a new config.
FINALISTS_WITHIN = 2.0
# Measuring the finalists again costs a fresh worker a round (its start:
# the device, the arguments read from their files) and a measurement a
# finalist, so a small budget would spend more on them than on its search
# (Kernel Tuner's vector_add.py at 8 evaluations: 62 of 134 s). They get at
# most a quarter of the budget in measurements; below 2, none. In seconds
# too: a fresh worker's start is paid whatever the budget, so where it and
# the finalists' measurements would take more than a quarter of the
# search's wall time (a cheap kernel over large arguments), the search's
# best stands (quasimctl bench live --confirm-share).
CONFIRM_SHARE = 0.25
FINALISTS, CONFIRM_ROUNDS = 3, 3


def confirmation(budget):
    """(finalists, rounds) for a search of budget evaluations: 3 and 3
    from 36 evaluations, fewer below, so that finalists x rounds is at
    most a quarter of the budget; (0, 0) below 8: the search's best
    stands, measured once."""
    m = int(budget * CONFIRM_SHARE)
    if m < 2:
        return 0, 0
    rounds = min(CONFIRM_ROUNDS, max(1, m // FINALISTS))
    return min(FINALISTS, m // rounds), rounds


def _iterations(n):
    """Kernel Tuner's iterations as the spec's bound on timed runs."""
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or not 1 <= int(n) <= 1000:
        raise ValueError("iterations: %r; want a whole number of runs from 1 to 1000" % (n,))
    return int(n)


def quasimctl():
    path = os.environ.get("QUASIMCTL") or shutil.which("quasimctl")
    if not path:
        raise FileNotFoundError("quasimctl not found: install quasim, or set QUASIMCTL to its path")
    return path


def _check_unsupported(given):
    for name, why in _UNSUPPORTED.items():
        if given.get(name):
            raise ValueError("%s: not supported by quasim (%s)" % (name, why))
    obj = given.get("objective")
    if obj not in (None, "time"):
        raise ValueError("objective: %r; quasim tunes for time" % (obj,))
    if given.get("objective_higher_is_better"):
        raise ValueError("objective_higher_is_better: quasim minimises time")


def _budget(strategy, strategy_options):
    """quasimctl's strategy, evaluations and time limit (seconds, or None)
    for Kernel Tuner's strategy and strategy_options."""
    opts = dict(strategy_options or {})
    for k in opts:
        if k not in _STRATEGY_OPTIONS:
            raise ValueError("strategy_options[%r]: quasim takes only max_fevals and time_limit (its own search "
                             "replaces the strategy's other options)" % k)
    limit = opts.get("time_limit")
    if limit is not None:
        if isinstance(limit, bool) or not isinstance(limit, numbers.Real) or not limit > 0:
            raise ValueError("strategy_options['time_limit']: %r; want seconds, more than 0" % (limit,))
        limit = float(limit)
    if strategy in (None, "brute_force"):
        if "max_fevals" in opts:
            raise ValueError("strategy_options['max_fevals']: brute_force measures every config; name a strategy to limit it")
        return "random", 1 << 30, limit  # every valid config (until time_limit), in random order, raced
    n = opts.get("max_fevals", DEFAULT_FEVALS)
    if isinstance(n, float) and n.is_integer():
        n = int(n)
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1:
        raise ValueError("strategy_options['max_fevals']: %r; want an integer, 1 or more" % (n,))
    return "portfolio", int(n), limit


def _cap():
    """$QUASIM_MAX_FEVALS: at most this many configs measured by any
    tune_kernel call, brute force included, to check a tuning script
    quickly (CI runs Kernel Tuner's examples so)."""
    v = os.environ.get("QUASIM_MAX_FEVALS", "")
    if not v:
        return 1 << 30
    if not v.isdigit() or int(v) < 1:
        raise ValueError("$QUASIM_MAX_FEVALS: %r; want a number of evaluations, 1 or more" % v)
    return int(v)


class _VerifyServer:
    """Serves a Kernel Tuner verify function on a Unix socket to quasim's
    worker, which sends each config's outputs as .npy files."""

    def __init__(self, path, fn, answer, arguments, atol):
        self.fn, self.answer, self.arguments, self.atol = fn, answer, arguments, atol
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(path)
        self.sock.listen(4)
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                f = conn.makefile("rwb")
                line = f.readline()
                try:
                    ans = self._judge(json.loads(line))
                except Exception as e:  # the user's function failed: the config is not right
                    ans = {"ok": False, "error": "verify function: %s: %s" % (type(e).__name__, e)}
                f.write(json.dumps(ans).encode() + b"\n")
                f.flush()

    def _judge(self, req):
        np = _spec.numpy()
        result = list(self.arguments)
        for i, path in req["outputs"].items():
            result[int(i)] = np.load(path).reshape(self.arguments[int(i)].shape)
        ok = self.fn(self.answer, result, atol=self.atol)
        return {"ok": bool(ok), "error": "" if ok else "the verify function rejected the output of %s"
                % util.get_config_string(req["config"])}

    def close(self):
        self.sock.close()


def tune_kernel(kernel_name, kernel_source, problem_size, arguments, tune_params, grid_div_x=None, grid_div_y=None,
                grid_div_z=None, restrictions=None, answer=None, atol=1e-6, verify=None, verbose=False, lang=None,
                device=0, platform=0, smem_args=None, cmem_args=None, texmem_args=None, compiler=None,
                compiler_options=None, defines=None, log=None, iterations=7, block_size_names=None, quiet=False,
                strategy=None, strategy_options=None, cache=None, metrics=None, simulation_mode=None, parallel=None,
                observers=None, objective=None, objective_higher_is_better=None, objectives=None, seed=None):
    """Tune an OpenCL kernel with quasim: Kernel Tuner's tune_kernel.

    Returns (results, env) as Kernel Tuner does: a dict per config measured
    (its parameters, "time" in ms, "times", compile_time, ...; a failed
    config's time an InvalidConfig, CompilationFailedConfig or
    RuntimeFailedConfig) and the environment (device, platform,
    best_config). "time" is quasim's measurement: the median of its
    repetitions (until the median is known within 3%, at least 3, at most
    50; `iterations` does not change that rule).
    """
    started = time.monotonic()
    _check_unsupported(locals())
    if log:
        logging.basicConfig(filename=kernel_name + datetime.now().strftime("%Y%m%d-%H:%M:%S") + ".log", level=log)
    strat, budget, time_limit = _budget(strategy, strategy_options)
    budget = min(budget, _cap())
    iterations = _iterations(iterations)
    # The device list (a process that loads the OpenCL driver) is made
    # while the arguments are written as files, not after.
    listing = _list_devices()
    tmp = tempfile.mkdtemp(prefix="quasim-tune-")
    server = None
    try:
        d = os.path.join(tmp, "spec")
        spec = _spec.write(d, kernel_name, kernel_source, problem_size, arguments, tune_params, grid_div_x,
                           grid_div_y, grid_div_z, restrictions, None if verify else answer, atol, verify, lang,
                           device, platform, compiler_options, block_size_names, defines=defines)
        # Kernel Tuner gives a config as long as it takes: on a busy machine
        # a compile alone took over quasim's default minute a measurement.
        spec["timeout"] = CONFIG_TIMEOUT
        spec["opencl"]["iterations"] = iterations
        if verify is not None:
            sock = os.path.join(tmp, "verify.sock")
            server = _VerifyServer(sock, verify, answer, arguments, atol)
            spec["opencl"]["check"] = {"verify": sock}
        _spec.rewrite(d, spec)
        # The device listing is waited for here only when a cache file
        # needs its name; otherwise after the run, off its critical path.
        env, old = None, {}
        if cache:
            env = environment(compiler_options, iterations, listing)
            old = ktcache.read(cache, kernel_name, spec, env.get("device_name"))
        if old:
            _spec.exclude(d, spec, old)
        out = os.path.join(tmp, "runs.json")
        cmd = [quasimctl(), "bench", "live", os.path.join(d, "kernel.yaml"), "--strategy", strat,
               "--budget", str(budget), "--seed", str(1 if seed is None else int(seed)), "--json", out,
               "--finalists-within", str(FINALISTS_WITHIN), "--confirm-share", str(CONFIRM_SHARE)]
        # The evaluations the search makes: its budget, or fewer in a
        # smaller space (the product of the values, restrictions aside).
        product = 1
        for vs in spec["opencl"]["tune_params"].values():
            product *= len(vs)
        finalists, rounds = confirmation(min(budget, product))
        cmd += ["--finalists", str(finalists), "--confirm-rounds", str(max(rounds, 1))]
        if time_limit is not None:
            # Kernel Tuner's limit counts from the call: so does this one.
            left = time_limit - (time.monotonic() - started)
            if left <= 0:
                raise RuntimeError("strategy_options['time_limit']: %g s spent before tuning started (writing "
                                   "the spec, reading the cache); give more" % time_limit)
            cmd += ["--time-limit", "%.3fs" % left]
        if quiet or not verbose:
            cmd.append("--quiet")
        else:
            cmd.append("--verbose")
        rc, errtail = _run(cmd, verbose and not quiet)
        if rc != 0:
            raise _failure(rc, errtail)
        with open(out) as fh:
            run = json.load(fh)[0]
        env = env or environment(compiler_options, iterations, listing)
        results, bykey = _results(run, spec, metrics, verbose and not quiet)
        best = _best(results, bykey, run)
        if old:
            results = list(old.values()) + results
            ok = [r for r in results if not isinstance(r["time"], util.ErrorConfig)]
            if ok and (not best or min(r["time"] for r in ok) < best["time"]):
                best = min(ok, key=lambda r: r["time"])
        env["best_config"] = best
        env["quasim"] = {"strategy": strat, "evals": run["evals"], "wall_s": run["wall_s"],
                         "time_limited": bool(run.get("time_limited")),
                         "best_key": run["best_key"], "finalists": run.get("finalists", []),
                         "confirm_s": run.get("confirm_s", 0), "compile_s": run.get("compile_s", 0),
                         "confirmation": {"finalists": finalists, "rounds": rounds,
                                          "skipped": run.get("confirm_skipped", "")}}
        for k, col in (("framework", "framework_time"), ("strategy", "strategy_time"), ("compile", "compile_time"),
                       ("verification", "verification_time"), ("benchmark", "benchmark_time")):
            env["total_%s_time" % k] = sum(x.get(col, 0) for x in results)
        if cache:
            ktcache.write(cache, kernel_name, spec, env, results)
        if not quiet and env["best_config"]:
            keys = list(tune_params) + ["time"] + list(metrics or {})
            print("\nBEST PERFORMING CONFIGURATION FOR OBJECTIVE time:")
            print(util.get_config_string(env["best_config"], keys))
        return results, env
    finally:
        if listing.returncode is None:
            listing.kill()
            listing.communicate()
        if server:
            server.close()
        shutil.rmtree(tmp, ignore_errors=True)


def _run(cmd, echo):
    """Runs quasimctl, its progress on stderr shown when echo; returns its
    exit status and the last line of its stderr."""
    last = ""
    with subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) as p:
        for line in p.stderr:
            if echo:
                sys.stderr.write(line)
            if line.strip():
                last = line.strip()
    return p.returncode, last


def _failure(rc, last):
    msg = last or "quasimctl exited %d" % rc
    msg = msg.replace("quasimctl: invalid argument: ", "")
    # Name Kernel Tuner's arguments, not the spec's fields.
    for a, b in (("opencl.tune_params.", "tune_params."), ("opencl.args[", "arguments["),
                 ("constraints[", "restrictions["), ("opencl.grid_div_", "grid_div_"),
                 ("opencl.problem_size", "problem_size"), ("opencl.kernel", "kernel_name")):
        msg = msg.replace(a, b)
    if rc == 2:
        return ValueError(msg)
    return RuntimeError(msg)


def _list_devices():
    """Starts `quasimctl opencl-worker --list`, for environment."""
    return subprocess.Popen([quasimctl(), "opencl-worker", "--list"], stdout=subprocess.PIPE, text=True)


def environment(compiler_options=None, iterations=7, listing=None):
    """Kernel Tuner's env: the device and platform quasim measures on
    (from listing, a _list_devices() started earlier, or a new one)."""
    out, _ = (listing or _list_devices()).communicate()
    devs = json.loads(out or "{}").get("devices") or []
    env = {"iterations": iterations, "compiler_options": compiler_options}
    if devs:
        d = devs[0]
        env.update(platform_name=d["platform"], platform_version=d["platform_version"], device_name=d["name"],
                   device_version=d["version"], driver_version=d["driver"], quasim_device_class=d["class"])
    return env


_FAILED = {"invalid": util.InvalidConfig, "constraints": util.InvalidConfig, "compile": util.CompilationFailedConfig}


def _results(run, spec, metrics, verbose=False):
    """Kernel Tuner's results of the run's trials, and them by config key."""
    out, bykey = [], {}
    for tr in run.get("trace") or []:
        r = params_of(tr["key"], spec["opencl"]["tune_params"])
        ph = tr.get("phases_ms") or {}
        if tr["status"] == "ok":
            r["time"] = tr["time_ms"]
            r["times"] = tr.get("times_ms") or []
        else:
            r["time"] = _FAILED.get(tr["status"], util.RuntimeFailedConfig)()
        r["compile_time"] = ph.get("compilation", 0)
        r["verification_time"] = ph.get("validation", 0)
        r["benchmark_time"] = ph.get("benchmark", 0)
        r["strategy_time"] = 0
        r["framework_time"] = ph.get("framework", 0)
        r["timestamp"] = tr.get("at", "")
        if tr["status"] == "ok" and metrics:
            for name, f in metrics.items():
                r[name] = f(r) if callable(f) else f
        if tr["status"] != "ok" and verbose:
            print("%s: %s: %s" % (util.get_config_string(params_of(tr["key"], spec["opencl"]["tune_params"])),
                                  tr["status"], tr.get("error", "")), file=sys.stderr)
        out.append(r)
        bykey[tr["key"]] = r
    return out, bykey


def params_of(key, tune_params):
    """A config key (values joined by commas) as a dict of the values given."""
    parts = key.split(",")
    out = {}
    for (name, values), s in zip(tune_params.items(), parts):
        out[name] = s
        for v in values:
            if s in (str(v), repr(v)) or (isinstance(v, bool) and s in ("true", "false")):
                out[name] = v
                break
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                try:
                    if float(s) == v:
                        out[name] = v
                        break
                except ValueError:
                    pass
    return out


def _best(results, bykey, run):
    """The run's best: the config quasim crowned (its finalists measured
    again in fresh processes), with the time it crowned it by."""
    r = bykey.get(run.get("best_key") or "")
    if r is None or isinstance(r["time"], util.ErrorConfig):
        ok = [r for r in results if not isinstance(r["time"], util.ErrorConfig)]
        return min(ok, key=lambda r: r["time"]) if ok else {}
    best = dict(r)
    best["time"] = run.get("best_ms") or r["time"]
    return best


def run_kernel(kernel_name, kernel_source, problem_size, arguments, params, grid_div_x=None, grid_div_y=None,
               grid_div_z=None, lang=None, device=0, platform=0, smem_args=None, cmem_args=None, texmem_args=None,
               compiler=None, compiler_options=None, defines=None, block_size_names=None, quiet=False, log=None):
    """Run one config of an OpenCL kernel once and return its arguments
    after the run (Kernel Tuner's run_kernel), through PyOpenCL."""
    _check_unsupported(locals())
    from quasim import build

    tune_params = {k: [v] for k, v in params.items()}
    src, extra = _spec.read_source(kernel_source, tune_params)
    lang = lang or _spec.detect_lang(src)
    if str(lang).lower() != "opencl":
        raise ValueError("lang: %r; quasim runs OpenCL kernels" % (lang,))
    return build.run_once(kernel_name, src, problem_size, arguments, params, (grid_div_x, grid_div_y, grid_div_z),
                          block_size_names, compiler_options, device, defines)


def export_spec(directory, kernel_name, kernel_source, problem_size, arguments, tune_params, grid_div_x=None,
                grid_div_y=None, grid_div_z=None, restrictions=None, answer=None, atol=1e-6, verify=None, lang=None,
                device=0, platform=0, compiler_options=None, block_size_names=None, name=None,
                schedule="@every 24h", budget=100, defines=None):
    """Writes the kernel, as tune_kernel takes it, as a quasimd spec: NAME.yaml
    with NAME.cl and the arguments (and answers) as NAME.*.npy, in directory,
    for an operator to copy into quasimd's kernels directory. quasimd then
    tunes it per device on its schedule and serves it (build_kernel).
    Returns the spec file's path."""
    if verify is not None:
        raise ValueError("verify: a Python function cannot go into a spec; give answer (and atol) instead")
    name = name or kernel_name
    if not _spec.re.fullmatch(r"[A-Za-z0-9_.-]+", name):
        raise ValueError("name: %r; a spec's name is [A-Za-z0-9_.-]+" % (name,))
    spec = _spec.write(directory, kernel_name, kernel_source, problem_size, arguments, tune_params, grid_div_x,
                       grid_div_y, grid_div_z, restrictions, answer, atol, None, lang, device, platform,
                       compiler_options, block_size_names, name=name, base=name, defines=defines)
    spec["schedule"] = schedule
    spec["budget"] = {"evals": int(budget)}
    _spec.rewrite(directory, spec, name)
    return os.path.join(directory, name + ".yaml")
