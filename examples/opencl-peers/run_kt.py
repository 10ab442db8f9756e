#!/usr/bin/env python3
"""Run Kernel Tuner (OpenCL) on a kernel described in JSON and write a per-run JSON record.

Peer runner for the quasim side-by-side benchmark. Kernel Tuner is used as shipped (run, not vendored):
it is imported from $PEERS/src/kernel_tuner through the venv $PEERS/venv (setup.sh).

Usage:
  $PEERS/venv/bin/python run_kt.py KERNEL.json --strategy random_sample \
      --max-fevals 20 --seed 1 --out result.json [--iterations 7] [--cache FILE]
      [--strategy-options '{"popsize": 10}'] [--time-limit SEC] [--platform 0 --device 0]
      [--on-verify-fail abort|record] [--stack-mb 256] [--compile-cache fresh|cold|off|keep] [--quiet]

pocl note: pocl 3.1's pthread device keeps every work-item's private variables on the worker thread's
stack; large work-groups (e.g. matmul 64x32 threads with tile 8x2) overflow glibc's default thread stack
(= RLIMIT_STACK, 8 MiB) and SEGFAULT the whole process. run_kt.py therefore re-executes itself with the
soft stack limit raised to --stack-mb (default 256 MiB; 0 leaves it).
Compile caches: pyopencl caches program binaries (~/.cache/pyopencl) and pocl caches the compiled
work-group functions (~/.cache/pocl/kcache); a config seen in an earlier run then "compiles" in ~5 ms.
--compile-cache fresh (default: PYOPENCL_NO_CACHE=1 and an empty POCL_CACHE_DIR for this run),
cold (pyopencl's cache on but empty (XDG_CACHE_HOME) and an empty POCL_CACHE_DIR: Kernel Tuner's default code
path on a first run; pyopencl then also fetches the program binary, which makes pocl generate code at build
time, so compile_time is much larger), off (PYOPENCL_NO_CACHE=1, POCL_KERNEL_CACHE=0), keep (caches as they are).
Note that on pocl clBuildProgram only makes LLVM bitcode; the machine code for a work-group size is made at
the first launch, which Kernel Tuner books as verification_time (or benchmark_time without verification).

Kernel description (JSON; relative paths are relative to the JSON file):
{
  "kernel_source": "matmul.cl",                  # path (or list of paths, first one is compiled)
  "kernel_name": "matmul_kernel",
  "problem_size": [512, 512],
  "tune_params": {"block_size_x": [16, 32, 64], ...},   # order is kept (JSON object order)
  "restrictions": ["block_size_x==block_size_y*tile_size_y"],
  "grid_div_x": ["block_size_x", "tile_size_x"],        # optional
  "grid_div_y": ["block_size_y", "tile_size_y"],        # optional
  "grid_div_z": [],                                     # optional
  "block_size_names": ["block_size_x", ...],            # optional
  "compiler_options": ["-DWIDTH=512"],                  # optional
  "defines": {"NAME": value},                           # optional, Kernel Tuner `defines`
  "iterations": 7,                                      # optional, overridden by --iterations
  "args": [                                             # kernel arguments, in order
    {"name": "C", "type": "float", "size": 262144, "fill": "zero"},
    {"name": "A", "type": "float", "size": 262144, "fill": "random", "seed": 1},
    {"name": "n", "type": "int", "scalar": true, "value": 512},
    {"name": "x", "type": "float", "size": 16, "fill": "constant", "value": 1.5}
  ],
  # type: float (float32) | double (float64) | int (int32) | uint (uint32) | half (float16);
  # fill: zero | random (uniform [0,1) for floats, numpy seed per arg) | randn (normal) | constant;
  # an arg with "scalar": true (or no "size") is passed as a numpy scalar with "value".
  "verify": {                                           # optional: check output of one arg
    "index": 0,                                         # the output argument (answer index)
    "atol": 1e-3,
    "reference_expr": "numpy.dot(A.reshape(512,512), B.reshape(512,512)).ravel()",
    #   (evaluated with numpy and every array arg by name)  -- or --
    "reference_config": {"block_size_x": 16, ...},      # run once with kernel_tuner.run_kernel
    #   -- or --
    "reference_npy": "ref.npy",
    "compare": "sum", "rtol": 1e-4                      # optional: compare sums (partial reductions)
  }
}

Output JSON: kernel_tuner version and git commit, strategy/options/seed, every configuration Kernel Tuner
evaluated in order ("evaluations": config, time_ms (mean of the repetitions), times_ms, status, repeat,
compile/verification/benchmark ms), best_time_ms/best_config over status "ok", wall_time_s of the
tune_kernel call (device set-up, compilation, verification, benchmarking, strategy), Kernel Tuner's
own total_* timings from env, and "error" if the run aborted (partial evaluations are then read back
from the cache file).
"""
import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
import traceback
from collections import OrderedDict

import numpy

# kernel_tuner (and through it pyopencl, which reads PYOPENCL_NO_CACHE on import) is imported in main(),
# after the cache environment variables are set.
kernel_tuner = None

DTYPES = {"float": numpy.float32, "float32": numpy.float32, "double": numpy.float64,
          "float64": numpy.float64, "int": numpy.int32, "int32": numpy.int32,
          "uint": numpy.uint32, "uint32": numpy.uint32, "half": numpy.float16}



def kt_src():
    return os.path.dirname(os.path.dirname(os.path.abspath(kernel_tuner.__file__)))


def kt_git_commit():
    """Commit of the fetched Kernel Tuner source, from $PEERS/VERSIONS.json (setup.sh) or git if available."""
    vfile = os.path.join(os.environ.get("PEERS", "/work/peers"), "VERSIONS.json")
    try:
        with open(vfile) as f:
            return json.load(f).get("kernel_tuner_commit")
    except (OSError, ValueError):
        pass
    try:
        return subprocess.run(["git", "-C", kt_src(), "rev-parse", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
    except Exception:
        return None


def make_args(desc):
    args, by_name = [], {}
    for a in desc["args"]:
        dt = DTYPES[a.get("type", "float")]
        if a.get("scalar") or "size" not in a:
            v = dt(a.get("value", 0))
        else:
            n = int(a["size"])
            fill = a.get("fill", "zero")
            if fill in ("zero", "zeros"):
                v = numpy.zeros(n, dtype=dt)
            elif fill == "constant":
                v = numpy.full(n, a.get("value", 0), dtype=dt)
            elif fill in ("random", "randn"):
                rng = numpy.random.default_rng(a.get("seed", 0))
                if fill == "randn":
                    v = rng.standard_normal(n).astype(dt)
                elif numpy.issubdtype(dt, numpy.integer):
                    v = rng.integers(a.get("low", 0), a.get("high", 100), n).astype(dt)
                else:
                    v = rng.random(n).astype(dt)
            else:
                raise ValueError(f"unknown fill {fill!r} for arg {a.get('name')}")
        args.append(v)
        by_name[a.get("name", f"arg{len(args) - 1}")] = v
    return args, by_name


def make_verify_recorder():
    """Observer adding 'verified' (1/0) to each benchmarked result; set by the verify wrapper just before."""
    from kernel_tuner.observers.observer import BenchmarkObserver

    class VerifyRecorder(BenchmarkObserver):
        def __init__(self):
            self.last = None

        def get_results(self):
            v, self.last = self.last, None
            return {"verified": v}

    return VerifyRecorder()


def build_answer(vdesc, args, by_name, desc, base, kt_kwargs):
    idx = int(vdesc["index"])
    if "reference_expr" in vdesc:
        ns = {"numpy": numpy, "np": numpy}
        ns.update(by_name)
        ref = numpy.asarray(eval(vdesc["reference_expr"], ns)).astype(args[idx].dtype).ravel()
    elif "reference_npy" in vdesc:
        ref = numpy.load(os.path.join(base, vdesc["reference_npy"])).ravel()
    elif "reference_config" in vdesc:
        rk = {k: kt_kwargs[k] for k in ("grid_div_x", "grid_div_y", "grid_div_z", "block_size_names",
                                         "compiler_options", "defines", "lang", "platform", "device")
              if kt_kwargs.get(k) is not None}
        rk["quiet"] = True
        if rk.get("block_size_names"):  # run_kernel (unlike tune_kernel) needs all three names
            names = list(rk["block_size_names"])
            rk["block_size_names"] = names + ["block_size_x", "block_size_y", "block_size_z"][len(names):]
        out = kernel_tuner.run_kernel(kt_kwargs["kernel_name"], kt_kwargs["kernel_source"],
                                      kt_kwargs["problem_size"], [numpy.copy(a) if isinstance(a, numpy.ndarray) else a for a in args],
                                      vdesc["reference_config"], **rk)
        ref = numpy.asarray(out[idx]).ravel()
    else:
        raise ValueError("verify needs reference_expr, reference_npy or reference_config")
    answer = [None] * len(args)
    answer[idx] = ref
    return answer


def make_unique_budget_strategy(name, safety_factor=50):
    """Wrap a Kernel Tuner strategy so that max_fevals counts unique measured configs only.

    Kernel Tuner 1.4.0's SequentialRunner charges every proposal, repeats of configs already measured in
    this run included (served from its in-memory cache), to max_fevals, while its SimulationRunner charges
    only first visits. This wrapper swaps tuning_options.budget for one whose num_fevals is the number of
    configs newly added to Kernel Tuner's cache, i.e. first visits only (failed configs count). A cap of
    safety_factor * max_fevals proposals in all stops strategies that keep proposing repeats.
    """
    from kernel_tuner.interface import strategy_map
    from kernel_tuner.util import StopCriterionReached, TuningBudget
    inner = strategy_map[name]

    class UniqueBudget(TuningBudget):
        def __init__(self, old, cache):
            self.__dict__.update(old.__dict__)
            self._cache, self._base = cache, len(cache)
            self.proposals = 0
            self._cap = None if old.max_fevals is None else safety_factor * old.max_fevals

        @property
        def num_fevals(self):
            return len(self._cache) - self._base

        @num_fevals.setter
        def num_fevals(self, v):
            pass

        def add_evaluations(self, n=1):
            self.proposals += n

        def is_done(self):
            if self._cap is not None and self.proposals >= self._cap:
                return True
            return TuningBudget.is_done(self)

        def raise_exception_if_done(self):
            if self._cap is not None and self.proposals >= self._cap:
                raise StopCriterionReached(f"proposal cap ({self._cap}) reached")
            TuningBudget.raise_exception_if_done(self)

    class UniqueBudgetStrategy:
        def tune(self, searchspace, runner, tuning_options):
            tuning_options["budget"] = UniqueBudget(tuning_options.budget, tuning_options.cache)
            return inner.tune(searchspace, runner, tuning_options)

    return UniqueBudgetStrategy()


def status_of(r):
    if "__error__" in r:
        e = r["__error__"]
        return e if type(e) is str else type(e).__name__  # ErrorConfig subclasses: InvalidConfig, ...
    t = r.get("time")
    if isinstance(t, str):
        return t
    if r.get("verified") == 0:
        return "verify_failed"
    return "ok"


def num(x):
    try:
        return float(x)
    except (TypeError, ValueError):
        return None


def ensure_stack(mb):
    """Re-exec with a larger soft RLIMIT_STACK (glibc takes the default thread stack size from it)."""
    if mb <= 0 or os.environ.get("RUN_KT_STACK_SET"):
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_STACK)
    want = mb * 1024 * 1024
    if soft == resource.RLIM_INFINITY or soft >= want:
        return
    if hard != resource.RLIM_INFINITY and hard < want:
        want = hard
    resource.setrlimit(resource.RLIMIT_STACK, (want, hard))
    os.environ["RUN_KT_STACK_SET"] = "1"
    os.execv(sys.executable, [sys.executable] + sys.argv)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("kernel", help="kernel description JSON")
    ap.add_argument("--strategy", default="random_sample")
    ap.add_argument("--max-fevals", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", required=True)
    ap.add_argument("--iterations", type=int, default=None, help="repetitions per config (KT default 7)")
    ap.add_argument("--cache", default=None, help="Kernel Tuner cache file (default: a fresh temp file)")
    ap.add_argument("--strategy-options", default="{}", help="extra strategy_options as JSON")
    ap.add_argument("--time-limit", type=float, default=None, help="strategy_options time_limit (s)")
    ap.add_argument("--platform", type=int, default=0)
    ap.add_argument("--device", type=int, default=0)
    ap.add_argument("--on-verify-fail", choices=["abort", "record"], default="abort",
                    help="abort: Kernel Tuner's own behaviour (RuntimeError ends the run); record: keep "
                         "tuning, mark the config status verify_failed (Kernel Tuner still scores its time)")
    ap.add_argument("--budget", choices=["kt", "unique"], default="kt",
                    help="kt: max_fevals as Kernel Tuner 1.4.0 counts it live (every proposal, repeats "
                         "included); unique: only first visits count (as in its simulation mode)")
    ap.add_argument("--stack-mb", type=int, default=256, help="soft stack limit for pocl threads (MiB)")
    ap.add_argument("--compile-cache", choices=["fresh", "cold", "off", "keep"], default="fresh",
                    help="fresh: PYOPENCL_NO_CACHE=1 and an empty POCL_CACHE_DIR for this run; cold: pyopencl "
                         "cache on but empty + empty POCL_CACHE_DIR (Kernel Tuner's first-run path); off: "
                         "PYOPENCL_NO_CACHE=1 and POCL_KERNEL_CACHE=0; keep: leave both caches")
    ap.add_argument("--quiet", action="store_true")
    a = ap.parse_args()
    ensure_stack(a.stack_mb)
    pocl_tmp = None
    if a.compile_cache in ("fresh", "off"):
        os.environ["PYOPENCL_NO_CACHE"] = "1"  # read when pyopencl is imported (below, via kernel_tuner)
    if a.compile_cache in ("fresh", "cold"):
        pocl_tmp = tempfile.mkdtemp(prefix="run_kt_cc_")
        os.environ["POCL_CACHE_DIR"] = os.path.join(pocl_tmp, "pocl")
        os.makedirs(os.environ["POCL_CACHE_DIR"])
        if a.compile_cache == "cold":  # pyopencl's cache dir is platformdirs' user_cache_dir
            os.environ["XDG_CACHE_HOME"] = os.path.join(pocl_tmp, "xdg")
    elif a.compile_cache == "off":
        os.environ["POCL_KERNEL_CACHE"] = "0"
    global kernel_tuner
    import kernel_tuner as _kt
    kernel_tuner = _kt

    t_proc = time.perf_counter()
    with open(a.kernel) as f:
        desc = json.load(f, object_pairs_hook=OrderedDict)
    base = os.path.dirname(os.path.abspath(a.kernel))

    random.seed(a.seed)
    numpy.random.seed(a.seed)

    src = desc["kernel_source"]
    src = [os.path.join(base, s) for s in src] if isinstance(src, list) else os.path.join(base, src)
    tune_params = OrderedDict((k, list(v)) for k, v in desc["tune_params"].items())
    args, by_name = make_args(desc)

    # brute_force accepts no strategy options (it rejects max_fevals) and measures the whole space
    strategy_options = {} if a.strategy == "brute_force" else {"max_fevals": a.max_fevals}
    strategy_options.update(json.loads(a.strategy_options))
    if a.time_limit is not None:
        strategy_options["time_limit"] = a.time_limit

    cache = a.cache
    tmpdir = None
    if cache is None:
        tmpdir = tempfile.mkdtemp(prefix="run_kt_")
        cache = os.path.join(tmpdir, "cache.json")

    kw = OrderedDict(
        kernel_name=desc["kernel_name"], kernel_source=src,
        problem_size=desc["problem_size"] if isinstance(desc["problem_size"], str) else list(desc["problem_size"]),
        arguments=args, tune_params=tune_params,
        grid_div_x=desc.get("grid_div_x"), grid_div_y=desc.get("grid_div_y"),
        grid_div_z=desc.get("grid_div_z"),
        restrictions=desc.get("restrictions") or None,
        block_size_names=desc.get("block_size_names"),
        compiler_options=desc.get("compiler_options"), defines=desc.get("defines"),
        lang="OpenCL", platform=a.platform, device=a.device,
        iterations=a.iterations or desc.get("iterations", 7),
        strategy=a.strategy, strategy_options=strategy_options, seed=a.seed,
        cache=cache, verbose=not a.quiet, quiet=a.quiet)

    if a.budget == "unique":
        kw["strategy"] = make_unique_budget_strategy(a.strategy)

    observers = []
    vdesc = desc.get("verify")
    if vdesc:
        kw["answer"] = build_answer(vdesc, args, by_name, desc, base, kw)
        kw["atol"] = vdesc.get("atol", 1e-6)
        if vdesc.get("compare") == "sum":
            # Kernel Tuner's reduction example: the output holds partial sums whose layout depends on the
            # config, so their sum is compared with the reference's (its verify_partial_reduce).
            rtol = vdesc.get("rtol", 1e-5)

            def verify_sum(ref, ans, atol=None):
                return all(r is None or bool(numpy.isclose(numpy.sum(r, dtype=numpy.float64),
                                                           numpy.sum(numpy.asarray(x), dtype=numpy.float64),
                                                           rtol=rtol, atol=atol or 0))
                           for r, x in zip(ref, ans))
            kw["verify"] = verify_sum
        elif a.on_verify_fail == "record":
            rec = make_verify_recorder()
            observers.append(rec)

            def verify(ref, ans, atol=None):
                ok = True
                for r, x in zip(ref, ans):
                    if r is not None:
                        ok = ok and bool(numpy.allclose(r.ravel(), numpy.asarray(x).ravel(), atol=atol))
                rec.last = int(ok)
                return True
            kw["verify"] = verify
    if observers:
        kw["observers"] = observers

    out = OrderedDict(
        peer="kernel_tuner", kernel_tuner_version=kernel_tuner.__version__,
        kernel_tuner_commit=kt_git_commit(), kernel_tuner_path=kt_src(),
        kernel=os.path.abspath(a.kernel), kernel_name=desc["kernel_name"], strategy=a.strategy, budget_mode=a.budget,
        strategy_options=strategy_options, max_fevals=a.max_fevals, seed=a.seed,
        iterations=kw["iterations"], cache_file=cache if a.cache else None,
        compile_cache=a.compile_cache, stack_limit_bytes=resource.getrlimit(resource.RLIMIT_STACK)[0],
        cache_env={k: v for k, v in os.environ.items() if k.startswith(("POCL_", "PYOPENCL_", "XDG_CACHE"))})

    error = None
    results, env = None, {}
    started_at = datetime.now(timezone.utc)  # evaluations' timestamps are taken as each ends
    t0 = time.perf_counter()
    try:
        results, env = kernel_tuner.tune_kernel(**kw)
    except Exception as e:  # record the failure, keep what the cache holds
        error = f"{type(e).__name__}: {e}"
        if not a.quiet:
            traceback.print_exc()
    wall = time.perf_counter() - t0

    if results is None:  # partial: the cache file lists each new config as it was measured
        results = []
        try:
            from kernel_tuner.util import read_cache
            c = read_cache(cache, open_cache=False)
            for r in c.get("cache", {}).values():
                results.append(dict(r))  # read_cache sets __error__ for failed configs
        except Exception:
            pass

    keys = list(tune_params)
    seen = set()
    evals = []
    for i, r in enumerate(results):
        cfg = OrderedDict((k, r.get(k)) for k in keys)
        key = tuple(cfg.values())
        st = status_of(r)
        ok = st == "ok"
        evals.append(OrderedDict(
            index=i, config=cfg, status=st, repeat=key in seen, verified=r.get("verified"),
            time_ms=num(r.get("time")) if ok or st == "verify_failed" else None,
            times_ms=[float(t) for t in r.get("times", [])] if isinstance(r.get("times"), list) else None,
            compile_time_ms=num(r.get("compile_time")), verification_time_ms=num(r.get("verification_time")),
            benchmark_time_ms=num(r.get("benchmark_time")), framework_time_ms=num(r.get("framework_time")),
            strategy_time_ms=num(r.get("strategy_time")), timestamp=r.get("timestamp")))
        seen.add(key)

    good = [e for e in evals if e["status"] == "ok" and e["time_ms"] is not None]
    best = min(good, key=lambda e: e["time_ms"]) if good else None
    best_so_far, trace = float("inf"), []
    for e in evals:
        if e["status"] == "ok" and e["time_ms"] is not None:
            best_so_far = min(best_so_far, e["time_ms"])
        trace.append(None if best_so_far == float("inf") else best_so_far)

    out.update(
        device_name=env.get("device_name"),
        num_evaluations=len(evals), num_unique=len(seen),
        num_ok=len(good), num_failed=sum(e["status"] not in ("ok",) for e in evals),
        best_time_ms=best["time_ms"] if best else None,
        best_config=best["config"] if best else None,
        best_so_far_ms=trace,
        wall_time_s=wall,
        started_at=started_at.isoformat(),
        process_time_s=time.perf_counter() - t_proc,
        kt_timings_ms={k: env.get(k) for k in ("total_framework_time", "total_strategy_time",
                                               "total_compile_time", "total_verification_time",
                                               "total_benchmark_time", "overhead_time") if k in env},
        error=error,
        evaluations=evals)
    with open(a.out, "w") as f:
        json.dump(out, f, indent=1, default=str)
    if not a.quiet:
        print(f"run_kt: {a.strategy} seed={a.seed}: {len(evals)} evaluations ({len(good)} ok), "
              f"best {out['best_time_ms']} ms, wall {wall:.2f} s -> {a.out}"
              + (f"  ERROR {error}" if error else ""))
    import shutil
    for d in (pocl_tmp, tmpdir):
        if d:
            shutil.rmtree(d, ignore_errors=True)
    return 1 if error else 0


if __name__ == "__main__":
    sys.exit(main())
