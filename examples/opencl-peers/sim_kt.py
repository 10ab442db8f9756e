#!/usr/bin/env python3
"""Kernel Tuner's strategies in its own simulation mode on a brute-forced cache file.

Usage: $PEERS/venv/bin/python sim_kt.py CACHE.json --strategies random_sample,... --seeds 20
         --budgets 50,100,200 --out OUT.json

Every config in the cache is valid (brute force recorded all of them), so the search space is exactly
the cache's keys: the restriction is "the key is in the cache". Each (strategy, budget, seed) is a
separate tune_kernel call with strategy_options max_fevals=budget, so budget-aware strategies (simulated
annealing's schedule, bayes_opt's initial sample) see the budget they would see live.
Output: per run the best time, the fraction optimum/best, evaluations (unique) to 95%.
"""
import argparse, json, random, sys, time, os
import numpy
import kernel_tuner

ap = argparse.ArgumentParser()
ap.add_argument("cache")
ap.add_argument("--strategies", default="random_sample,simulated_annealing,genetic_algorithm,bayes_opt")
ap.add_argument("--seeds", type=int, default=20)
ap.add_argument("--budgets", default="50,100,200")
ap.add_argument("--out", required=True)
a = ap.parse_args()

d = json.load(open(a.cache))
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

out = {"cache": os.path.abspath(a.cache), "optimum_ms": opt, "configs": len(cache),
       "kernel_tuner": kernel_tuner.__version__, "runs": []}
for strat in a.strategies.split(","):
    for budget in [int(b) for b in a.budgets.split(",")]:
        for seed in range(1, a.seeds + 1):
            random.seed(seed); numpy.random.seed(seed)
            t0 = time.time()
            res, env = kernel_tuner.tune_kernel(
                d["kernel_name"], "/* simulated */", d["problem_size"], [], tp,
                restrictions=restrict, cache=a.cache, simulation_mode=True,
                strategy=strat, strategy_options={"max_fevals": budget},
                block_size_names=[k for k in keys if k.startswith("block_size_")], quiet=True)
            wall = time.time() - t0
            seen, trace, best = set(), [], float("inf")
            for r in res:
                k = key(r)
                if k in seen:
                    continue
                seen.add(k)
                t = valid.get(k, float("inf"))
                best = min(best, t)
                trace.append(best)
            trace = trace[:budget]
            to95 = next((i + 1 for i, b in enumerate(trace) if opt / b >= 0.95), None)
            run = {"strategy": strat, "budget": budget, "seed": seed, "unique": len(trace),
                   "best_ms": trace[-1] if trace else None,
                   "fraction": opt / trace[-1] if trace else 0, "to95": to95, "wall_s": wall}
            out["runs"].append(run)
            print(json.dumps(run), flush=True)
json.dump(out, open(a.out, "w"), indent=1)
