#!/usr/bin/env python3
"""Kernel Tuner's strategies in its own simulation mode on a brute-forced cache file.

Usage: $PEERS/venv/bin/python sim_kt.py CACHE.json --strategies random_sample,... --seeds 20
         --budgets 50,100,200 --out OUT.json

Every config in the cache is valid (brute force recorded all of them), so the search space is exactly
the cache's keys: the restriction is "the key is in the cache". Each (strategy, budget, seed) is a
separate tune_kernel call with strategy_options max_fevals=budget, so budget-aware strategies (simulated
annealing's schedule, bayes_opt's initial sample) see the budget they would see live.
Output: per run the best time, the fraction optimum/best, evaluations (unique) to 95%.

With --noise, each seed's run reads a copy of the cache in which every valid config's time is one of its
recorded repetitions ("times"), drawn by the seed and the key exactly as `quasimctl bench --noise` draws
them (evolve's noiseDraw, pinned by TestNoiseDrawVectors): both tuners see the same noise. A run is then
scored by the recorded mean time of the config it found best by what it was shown. CACHE may be gzipped.
"""
import argparse, gzip, json, random, sys, tempfile, time, os
import numpy
import kernel_tuner

ap = argparse.ArgumentParser()
ap.add_argument("cache")
ap.add_argument("--strategies", default="random_sample,simulated_annealing,genetic_algorithm,bayes_opt")
ap.add_argument("--seeds", type=int, default=20)
ap.add_argument("--budgets", default="50,100,200")
ap.add_argument("--out", required=True)
ap.add_argument("--noise", action="store_true", help="show one recorded repetition per config (see above)")
a = ap.parse_args()

d = json.load(gzip.open(a.cache) if a.cache.endswith(".gz") else open(a.cache))
M = (1 << 64) - 1


def draw(seed, key, n):
    """quasim's noiseDraw: FNV-1a of the key, mixed with the seed by splitmix64's finaliser."""
    h = 14695981039346656037
    for b in key.encode():
        h = ((h ^ b) * 1099511628211) & M
    h ^= (seed + 0x9e3779b97f4a7c15) & M
    h = ((h ^ (h >> 30)) * 0xbf58476d1ce4e5b9) & M
    h = ((h ^ (h >> 27)) * 0x94d049bb133111eb) & M
    h ^= h >> 31
    return h % n


def cache_file(seed):
    """A plain copy of the cache for Kernel Tuner, noisy for seed under --noise; None: the cache itself."""
    if not a.noise and not a.cache.endswith(".gz"):
        return None
    c = json.loads(json.dumps(d))
    if a.noise:
        for k, v in c["cache"].items():
            if isinstance(v.get("time"), (int, float)) and v.get("times"):
                v["time"] = v["times"][draw(seed, k, len(v["times"]))]
    f = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
    json.dump(c, f)
    f.close()
    return f.name
keys = d["tune_params_keys"]
tp = {k: d["tune_params"][k] for k in keys}
cache = d["cache"]
valid = {k: v["time"] for k, v in cache.items() if isinstance(v.get("time"), (int, float))}
opt = min(valid.values())
space = set(cache)

def key(p):
    return ",".join(str(p[k]) for k in keys)

def restrict(p):
    return key(p) in space

out = {"cache": os.path.abspath(a.cache), "optimum_ms": opt, "configs": len(cache), "noise": a.noise,
       "kernel_tuner": kernel_tuner.__version__, "runs": []}
for strat in a.strategies.split(","):
    for budget in [int(b) for b in a.budgets.split(",")]:
        for seed in range(1, a.seeds + 1):
            random.seed(seed); numpy.random.seed(seed)
            tmp = cache_file(seed)
            shown = json.load(open(tmp))["cache"] if tmp else cache
            t0 = time.time()
            res, env = kernel_tuner.tune_kernel(
                d["kernel_name"], "/* simulated */", d["problem_size"], [], tp,
                restrictions=restrict, cache=tmp or a.cache, simulation_mode=True,
                strategy=strat, strategy_options={"max_fevals": budget},
                block_size_names=[k for k in keys if k.startswith("block_size_")], quiet=True)
            wall = time.time() - t0
            if tmp:
                os.unlink(tmp)
            # best: the best time shown so far; trace: the recorded mean of that config.
            seen, trace, best, truth = set(), [], float("inf"), float("inf")
            for r in res:
                k = key(r)
                if k in seen:
                    continue
                seen.add(k)
                t = shown[k]["time"] if k in valid else float("inf")
                if t < best:
                    best, truth = t, valid[k]
                trace.append(truth)
            trace = trace[:budget]
            to95 = next((i + 1 for i, b in enumerate(trace) if opt / b >= 0.95), None)
            run = {"strategy": strat, "budget": budget, "seed": seed, "unique": len(trace),
                   "best_ms": trace[-1] if trace else None,
                   "fraction": opt / trace[-1] if trace else 0, "to95": to95, "wall_s": wall,
                   # fraction after k unique evaluations (the final best carried forward)
                   "at": {k: opt / trace[min(k, len(trace)) - 1] for k in (25, 50, 100, 200, 400)
                          if k <= budget and trace}}
            out["runs"].append(run)
            print(json.dumps(run), flush=True)
json.dump(out, open(a.out, "w"), indent=1)
