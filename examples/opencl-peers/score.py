#!/usr/bin/env python3
"""Scores live runs (live.sh) by a brute force's truth: each run's best
config visited, by its brute-forced time (optimum / that time), the wall
time of the whole run, and the evaluations until one within 95% of the
optimum.  Usage: score.py BRUTE_FORCE_CACHE RUN.json...
(quasimctl bench live --json files and run_kt.py outputs.)"""
import collections, json, statistics as st, sys

d = json.load(open(sys.argv[1]))
keys = d["tune_params_keys"]
truth = {k: v["time"] for k, v in d["cache"].items() if isinstance(v.get("time"), (int, float))}
opt = min(truth.values())
runs = collections.defaultdict(list)
for f in sys.argv[2:]:
    r = json.load(open(f))
    if isinstance(r, list):
        r = r[0]
    if "trace" in r:  # quasimctl bench live
        name, wall = "quasim " + r["strategy"], r["wall_s"]
        visited = [t["key"] for t in r["trace"] if t["status"] == "ok"]
    else:  # run_kt.py
        if r.get("error"):
            print(f"{f}: {r['error'][:200]}", file=sys.stderr)
            continue
        name, wall = "kernel_tuner " + r["strategy"], r["wall_time_s"]
        visited = [",".join(str(e["config"][p]) for p in keys) for e in r["evaluations"] if e["status"] == "ok"]
    best, to95 = float("inf"), None
    for i, k in enumerate(visited):
        best = min(best, truth.get(k, float("inf")))
        if to95 is None and opt / best >= 0.95:
            to95 = i + 1
    runs[name].append((opt / best, wall, to95))
sd = lambda x: st.stdev(x) if len(x) > 1 else 0.0
print(f"optimum {opt:.4f} ms over {len(truth)} valid configs")
print(f"{'strategy':34s} {'runs':>4s} {'fraction':>15s} {'wall s':>13s} {'reached 95%':>11s}")
for name, rs in sorted(runs.items()):
    fr, w = [x[0] for x in rs], [x[1] for x in rs]
    print(f"{name:34s} {len(rs):4d} {st.mean(fr):7.3f} ± {sd(fr):5.3f} {st.mean(w):6.1f} ± {sd(w):4.1f} {sum(1 for x in rs if x[2]):>6d}/{len(rs)}")
