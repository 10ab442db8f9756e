#!/usr/bin/env python3
"""quasim.tune_kernel beside Kernel Tuner's tune_kernel on Kernel Tuner's
own OpenCL example scripts, at the same evaluation budget and seeds.

Each run is a fresh Python process that runs the example script as it is
written (from a copy of Kernel Tuner's examples/opencl, sizes reduced where
this machine needs it, the same copy for both tools) until its first
tune_kernel call, and makes that call with the tool's real tune_kernel,
adding only strategy=, strategy_options={"max_fevals": BUDGET} and the
seed. For quasim the script's "kernel_tuner" is replaced by "quasim", as a
user moving does. Both start with an empty pocl kernel cache of their own
(PyOpenCL's cache off), so every config is compiled once a run.

Then every run's best config is timed again by one harness (PyOpenCL,
profiling events, all configs of a script in turn for --rounds rounds of
--reps launches), so that neither tool's measurement counts for or
against it. The table gives, per script and tool, the re-timed best of
each seed and their median, each tool's own reported best, and the wall
time of the tune_kernel call.

  examples/kt-side-by-side/setup.sh            # Kernel Tuner on Debian's python3
  QUASIMCTL=bin/quasimctl examples/kt-side-by-side/run.py --out /tmp/sbs
  (several at once with the same --out share the runs out)
  examples/kt-side-by-side/run.py --out /tmp/sbs --table    # the table again

Needs $QUASIMCTL (or quasimctl on PATH), the quasim package importable
(PYTHONPATH=runtime/python), Kernel Tuner importable from --kt-env, and
Kernel Tuner's examples at --examples.
"""

import argparse
import glob
import json
import os
import random
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

# Sizes this 2-core pocl machine cannot run in reasonable time, made smaller
# in both tools' copies: (file, pattern, replacement).
# (4096 x 4096 become SQUARE x SQUARE, --square.)
REDUCE = [
    ("matmul.py", r"\(4096, 4096\)", "(SQUARE, SQUARE)"),
    ("matmul.cl", r"(?m)^#define WIDTH 4096$", "#define WIDTH SQUARE"),
    ("convolution.py", r"\(4096, 4096\)", "(SQUARE, SQUARE)"),
    ("convolution_correct.py", r"\(4096, 4096\)", "(SQUARE, SQUARE)"),
    ("convolution.cl", r"(?m)^#define image_height 4096$", "#define image_height SQUARE"),
    ("convolution.cl", r"(?m)^#define image_width 4096$", "#define image_width SQUARE"),
    ("reduction.py", r"size = 800000000", "size = 16777216"),
]
SCRIPTS = {"vector_add": 8, "matmul": 20, "convolution": 20, "reduction": 20}  # default budgets


def prepare(examples, out, square):
    """Copies of the examples for each tool: kt/ as written (sizes
    reduced), quasim/ with the import changed too."""
    for tool in ("kt", "quasim"):
        d = os.path.join(out, "scripts", tool)
        os.makedirs(d, exist_ok=True)
        for f in glob.glob(os.path.join(examples, "*.py")) + glob.glob(os.path.join(examples, "*.cl")):
            with open(f) as fh:
                text = fh.read()
            name = os.path.basename(f)
            for fname, pat, rep in REDUCE:
                if fname == name:
                    text, n = re.subn(pat, rep.replace("SQUARE", str(square)), text)
                    if n == 0:
                        sys.exit("run.py: %s: %r not found; the examples changed" % (name, pat))
            if tool == "quasim" and name.endswith(".py"):
                text = text.replace("kernel_tuner", "quasim")
            with open(os.path.join(d, name), "w") as fh:
                fh.write(text)


class _Captured(Exception):
    pass


def one(a):
    """One run in this process: the script until its first tune_kernel
    call, then that call with the tool's tune_kernel and the budget."""
    import numpy
    import runpy

    os.chdir(a.dir)
    mod = __import__("kernel_tuner" if a.tool == "kt" else "quasim")
    real = mod.tune_kernel
    call = {}

    def capture(*args, **kwargs):
        call.update(args=args, kwargs=kwargs)
        raise _Captured()

    mod.tune_kernel = capture
    numpy.random.seed(0)  # the same data for both tools
    try:
        runpy.run_path(a.script + ".py", run_name="__main__")
    except _Captured:
        pass
    mod.tune_kernel = real
    if not call:
        sys.exit("run.py: %s.py made no tune_kernel call" % a.script)
    kw = dict(call["kwargs"])
    kw.update(strategy=a.strategy, strategy_options={"max_fevals": a.budget}, quiet=True, verbose=False)
    if a.tool == "quasim":
        kw["seed"] = a.seed
    random.seed(a.seed)
    numpy.random.seed(a.seed)
    t0 = time.perf_counter()
    results, env = real(*call["args"], **kw)
    wall = time.perf_counter() - t0
    tune_params = call["args"][4]
    ok = [r for r in results if isinstance(r["time"], float)]
    best = env.get("best_config") or {}
    out = {"tool": a.tool, "strategy": a.strategy, "seed": a.seed, "budget": a.budget, "script": a.script,
           "wall_s": wall, "evals": len(results), "valid": len(ok),
           "best_key": ",".join(str(best[k]) for k in tune_params) if best else "",
           "best_ms": best.get("time") if best else None,
           "env": {k: v for k, v in env.items() if k != "best_config"},
           "results": [{"key": ",".join(str(r[k]) for k in tune_params), "time": r["time"] if isinstance(
               r["time"], float) else str(r["time"])} for r in results],
           "call": {"kernel_name": call["args"][0], "problem_size": call["args"][2],
                    "tune_params": {k: list(v) for k, v in tune_params.items()},
                    "kwargs": sorted(call["kwargs"])}}
    with open(a.json, "w") as f:
        json.dump(out, f, default=str)


def spawn(args, env, log):
    def limits():
        # pocl keeps work-items' private data on its threads' stacks: the
        # larger work-groups crash a process with the default 8 MiB.
        resource.setrlimit(resource.RLIMIT_STACK, (256 << 20, 256 << 20))

    with open(log, "a") as lf:
        return subprocess.run(args, env=env, stdout=lf, stderr=subprocess.STDOUT, preexec_fn=limits).returncode


def drive(a):
    prepare(a.examples, a.out, a.square)
    runs = os.path.join(a.out, "runs")
    os.makedirs(runs, exist_ok=True)
    tools = [("quasim", "portfolio")] + [("kt", s) for s in a.kt_strategies.split(",")]
    budgets, own = dict(SCRIPTS), {}
    for arg, into in ((a.budget, budgets), (a.quasim_budget, own)):
        for kv in (arg or "").split(","):
            if kv:
                k, v = kv.split("=")
                into[k] = int(v)
    for script in a.scripts.split(","):
        for seed in range(1, a.seeds + 1):
            for tool, strat in tools:  # interleaved: the machine's load falls on every tool alike
                path = os.path.join(runs, "%s.%s.%s.%d.json" % (script, tool, strat, seed))
                try:  # several drivers may share --out: each run is taken by one
                    os.close(os.open(path + ".taken", os.O_CREAT | os.O_EXCL))
                except FileExistsError:
                    continue
                cache = tempfile.mkdtemp(prefix="sbs-pocl-")
                env = dict(os.environ, POCL_CACHE_DIR=cache, PYOPENCL_NO_CACHE="1")
                pp = [os.path.dirname(os.path.abspath(__file__))]
                pp.append(a.kt_env if tool == "kt" else a.quasim_path)
                env["PYTHONPATH"] = os.pathsep.join(pp + [env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
                t0 = time.time()
                rc = spawn([sys.executable, os.path.abspath(__file__), "one", "--tool", tool, "--strategy",
                            strat, "--seed", str(seed), "--budget",
                            str(own.get(script, budgets[script]) if tool == "quasim" else budgets[script]),
                            "--script", script, "--dir",
                            os.path.join(a.out, "scripts", tool), "--json", path],
                           env, os.path.join(a.out, "log.txt"))
                shutil.rmtree(cache, ignore_errors=True)
                if rc != 0:
                    os.remove(path + ".taken")  # a later driver tries it again
                print("%s %s %s seed %d: exit %d, %.1f s, load %s" % (script, tool, strat, seed, rc, time.time() - t0,
                      " ".join(open("/proc/loadavg").read().split()[:3])), flush=True)
    retime(a)
    table(a)


def retime(a):
    """Times every run's best config again with one harness."""
    import numpy
    import pyopencl as cl

    sys.path.insert(0, a.quasim_path)
    from quasim import build

    byscript = {}
    for f in sorted(glob.glob(os.path.join(a.out, "runs", "*.json"))):
        with open(f) as fh:
            r = json.load(fh)
        byscript.setdefault(r["script"], []).append(r)
    out = {}
    path = os.path.join(a.out, "retimed.json")
    if os.path.exists(path):
        with open(path) as fh:
            out = json.load(fh)
    dev = [d for p in cl.get_platforms() for d in p.get_devices()][0]
    ctx = cl.Context([dev])
    q = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
    for script, rs in byscript.items():
        keys = sorted({r["best_key"] for r in rs if r["best_key"]} - set(out.get(script, {})))
        if not keys:
            continue
        call = _capture_call(a, script)
        args, kw = call["args"], call["kwargs"]
        name, src, ps, arguments, tp = args[:5]
        src = open(os.path.join(a.out, "scripts", "kt", src)).read() if os.path.isfile(
            os.path.join(a.out, "scripts", "kt", str(src))) else src
        bufs = []
        for x in arguments:
            if isinstance(x, numpy.ndarray):
                bufs.append(cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=x))
            else:
                bufs.append(x)
        kernels = {}
        for k in keys:
            params = {n: _parse(v, tp[n]) for n, v in zip(tp, k.split(","))}
            groups, block = build.geometry(ps, params, (kw.get("grid_div_x"), kw.get("grid_div_y"),
                                                        kw.get("grid_div_z")), kw.get("block_size_names"))
            prg = cl.Program(ctx, build.prefix(params, groups, block, kw.get("block_size_names")) + src).build()
            kern = getattr(prg, name)
            kern.set_args(*bufs)
            kernels[k] = (kern, [g * b for g, b in zip(groups, block)], block)
        rounds = {k: [] for k in keys}
        for _ in range(a.rounds):
            for k in keys:
                kern, gs, ls = kernels[k]
                t = []
                for _ in range(a.reps):
                    ev = cl.enqueue_nd_range_kernel(q, kern, gs, ls)
                    ev.wait()
                    t.append((ev.profile.end - ev.profile.start) / 1e6)
                rounds[k].append(statistics.median(t))
        # A config's time is the median of its rounds' medians; the rounds
        # are kept for the intervals of the table's ratios.
        out.setdefault(script, {}).update({k: statistics.median(v) for k, v in rounds.items()})
        out.setdefault("rounds", {}).setdefault(script, {}).update(rounds)
        with open(path, "w") as fh:
            json.dump(out, fh, indent=1)


def _parse(s, values):
    for v in values:
        if str(v) == s:
            return v
    return s


def _capture_call(a, script):
    """The script's first tune_kernel call (Kernel Tuner's copy), run here."""
    import numpy
    import runpy

    sys.path.insert(0, a.kt_env)
    import kernel_tuner

    cwd = os.getcwd()
    os.chdir(os.path.join(a.out, "scripts", "kt"))
    real, call = kernel_tuner.tune_kernel, {}

    def capture(*args, **kwargs):
        call.update(args=args, kwargs=kwargs)
        raise _Captured()

    kernel_tuner.tune_kernel = capture
    numpy.random.seed(0)
    try:
        runpy.run_path(script + ".py", run_name="__main__")
    except _Captured:
        pass
    finally:
        kernel_tuner.tune_kernel = real
        os.chdir(cwd)
    return call


def table(a):
    retimed = {}
    if os.path.exists(os.path.join(a.out, "retimed.json")):
        with open(os.path.join(a.out, "retimed.json")) as fh:
            retimed = json.load(fh)
    rows = {}
    for f in sorted(glob.glob(os.path.join(a.out, "runs", "*.json"))):
        with open(f) as fh:
            r = json.load(fh)
        rows.setdefault((r["script"], r["tool"], r["strategy"]), []).append(r)
    print("| script (budget) | tool | re-timed best per seed, ms | median | own best, median ms | wall, median s (range) |")
    print("| --- | --- | --- | --- | --- | --- |")
    summary = {}
    for (script, tool, strat), rs in sorted(rows.items(), key=lambda kv: (kv[0][0], kv[0][1] != "quasim", kv[0][2])):
        rs.sort(key=lambda r: r["seed"])
        t = [retimed.get(script, {}).get(r["best_key"], float("nan")) for r in rs]
        for r, x in zip(rs, t):
            r["_t"] = x
        walls = [r["wall_s"] for r in rs]
        own = [r["best_ms"] for r in rs if r["best_ms"] is not None]
        name = "quasim" if tool == "quasim" else "Kernel Tuner %s" % strat
        med = statistics.median(t)
        summary.setdefault(script, []).append((name, med, statistics.median(walls), rs))
        print("| %s (%d) | %s | %s | %.4f | %.4f | %.1f (%.1f-%.1f) |" % (
            script, rs[0]["budget"], name, " ".join("%.4f" % x for x in t), med,
            statistics.median(own) if own else float("nan"), statistics.median(walls), min(walls), max(walls)))
    print()
    for script, s in summary.items():
        q = [x for x in s if x[0] == "quasim"]
        kt = [x for x in s if x[0] != "quasim"]
        if q and kt:
            b = min(kt, key=lambda x: x[1])
            print("%s: quasim %.4f ms in %.1f s; Kernel Tuner's best strategy %s %.4f ms in %.1f s" % (
                script, q[0][1], q[0][2], b[0], b[1], b[2]))
            for k in kt:
                print("  quasim / %s: %s" % (k[0], ratios(k[3], q[0][3], retimed.get("rounds", {}).get(script, {}))))


def ratios(kt, qs, rounds, n=4000):
    """quasim's median re-timed best and median wall over Kernel Tuner's,
    each with a 95% bootstrap interval: the seeds resampled, and each
    best's time resampled from its re-timing rounds (where kept)."""
    import random as rnd

    g = rnd.Random(1)

    def med_best(rs):
        ts = []
        for r in (g.choice(rs) for _ in rs):
            rr = rounds.get(r["best_key"])
            ts.append(statistics.median(g.choice(rr) for _ in rr) if rr else r["_t"])
        return statistics.median(ts)

    def med_wall(rs):
        return statistics.median(g.choice(rs)["wall_s"] for _ in rs)

    best = sorted(med_best(qs) / med_best(kt) for _ in range(n))
    wall = sorted(med_wall(qs) / med_wall(kt) for _ in range(n))
    point_b = statistics.median(r["_t"] for r in qs) / statistics.median(r["_t"] for r in kt)
    point_w = statistics.median(r["wall_s"] for r in qs) / statistics.median(r["wall_s"] for r in kt)
    lo, hi = int(0.025 * n), int(0.975 * n) - 1
    return "best time %.3f (%.3f-%.3f), wall %.2f (%.2f-%.2f); below 1: quasim's lower" % (
        point_b, best[lo], best[hi], point_w, wall[lo], wall[hi])


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd")
    o = sub.add_parser("one")
    for f in ("tool", "strategy", "script", "dir", "json"):
        o.add_argument("--" + f, required=True)
    o.add_argument("--seed", type=int, required=True)
    o.add_argument("--budget", type=int, required=True)
    p.add_argument("--examples", default=os.environ.get("KT_SRC", "/work/kt") + "/examples/opencl")
    p.add_argument("--kt-env", default=os.environ.get("KT_ENV", "/work/kt-env"))
    p.add_argument("--quasim-path", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                                         "runtime", "python"))
    p.add_argument("--scripts", default="vector_add,matmul,convolution,reduction")
    p.add_argument("--budget", default="", help="per script, e.g. matmul=20,convolution=40 (defaults %s)" % SCRIPTS)
    p.add_argument("--quasim-budget", default="", help="per script, quasim's budget where it is not --budget's "
                   "(e.g. the distinct configs a Kernel Tuner strategy measured)")
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("--square", type=int, help="matmul's and convolution's 4096 x 4096 made this (default 512; "
                   "with --table, the size --out's runs were made with)")
    p.add_argument("--kt-strategies", default="random_sample,genetic_algorithm,bayes_opt")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--reps", type=int, default=10)
    p.add_argument("--out")
    p.add_argument("--table", action="store_true", help="print the table of the runs in --out, and re-time what is not")
    a = p.parse_args()
    if a.cmd == "one":
        return one(a)
    if not a.out:
        p.error("--out DIR is required")
    a.quasim_path = os.path.abspath(a.quasim_path)
    # The runs of --out and their re-timing are of one size.
    made = os.path.join(a.out, "square")
    if os.path.exists(made):
        with open(made) as f:
            was = int(f.read())
        if a.square is not None and a.square != was:
            p.error("--square %d: the runs in %s are at %d" % (a.square, a.out, was))
        a.square = was
    elif a.square is None:
        a.square = 512
    os.makedirs(a.out, exist_ok=True)
    with open(made, "w") as f:
        f.write("%d\n" % a.square)
    if a.table:
        prepare(a.examples, a.out, a.square)
        retime(a)
        return table(a)
    drive(a)


if __name__ == "__main__":
    main()
