#!/usr/bin/env python3
"""Scores live runs (live.sh) by a brute force's truth: each run's best
config visited, by its brute-forced time (optimum / that time), the wall
time of the whole run, and the evaluations and seconds (from the run's
start to the end of that evaluation) until one within 95% of the optimum.  Usage: score.py BRUTE_FORCE_CACHE RUN.json...
(quasimctl bench live --json files and run_kt.py outputs.)"""
import collections, datetime, json, statistics as st, sys

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
        name, wall = "quasim " + r["strategy"] + ("" if r.get("raced", True) else " (no race)"), r["wall_s"]
        ok = [i for i, t in enumerate(r["trace"]) if t["status"] == "ok"]
        visited = [r["trace"][i]["key"] for i in ok]
        done = [r["done_s"][i] for i in ok] if "done_s" in r else [None] * len(ok)
    else:  # run_kt.py
        if r.get("error"):
            print(f"{f}: {r['error'][:200]}", file=sys.stderr)
            continue
        name, wall = "kernel_tuner " + r["strategy"], r["wall_time_s"]
        good = [e for e in r["evaluations"] if e["status"] == "ok"]
        visited = [",".join(str(e["config"][p]) for p in keys) for e in good]
        t0 = datetime.datetime.fromisoformat(r["started_at"]) if r.get("started_at") else None
        done = [(datetime.datetime.fromisoformat(e["timestamp"]) - t0).total_seconds() if t0 else None for e in good]
    best, to95, to95s = float("inf"), None, None
    for i, k in enumerate(visited):
        best = min(best, truth.get(k, float("inf")))
        if to95 is None and opt / best >= 0.95:
            to95, to95s = i + 1, done[i]
    runs[name].append((opt / best, wall, to95, to95s))
sd = lambda x: st.stdev(x) if len(x) > 1 else 0.0
print(f"optimum {opt:.4f} ms over {len(truth)} valid configs")
print(f"{'strategy':34s} {'runs':>4s} {'fraction':>15s} {'wall s':>13s} {'reached 95%':>11s} {'median s to 95%':>15s}")
for name, rs in sorted(runs.items()):
    fr, w = [x[0] for x in rs], [x[1] for x in rs]
    # a run that never got within 95% counts as its whole wall time and more
    s95 = sorted(x[3] if x[3] is not None else float("inf") for x in rs)
    med = st.median(s95)
    print(f"{name:34s} {len(rs):4d} {st.mean(fr):7.3f} ± {sd(fr):5.3f} {st.mean(w):6.1f} ± {sd(w):4.1f} "
          f"{sum(1 for x in rs if x[2]):>6d}/{len(rs)} {'never' if med == float('inf') else f'{med:.1f}':>15s}")
