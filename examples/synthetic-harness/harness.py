#!/usr/bin/env python3
"""A synthetic exec harness (docs/kernel-authors/harness-protocol.md) over a FAIR T1 space.

Usage (in a spec): evaluator: exec:/path/harness.py /path/space.T1.json [SEED]

It declares the T1 file's parameters and conditions, and answers each run
with a synthetic time of known optimum, measuring nothing: 1 ms at the
target config $SYNTH_TARGET (a comma-separated key; without it, each
parameter's first value) plus a weighted distance on
relaxed value indices with one pairwise term, so every other config is
slower. It exists to run quasimd on spaces too large to list (README
"Search spaces"); its times are labelled synthetic and are not kernel times.
"""
import json
import os
import sys


def values(p):
    v = p["Values"]
    if isinstance(v, list):
        return v
    return list(eval(v, {"__builtins__": {"range": range, "list": list}}))


def main():
    with open(sys.argv[1]) as f:
        doc = json.load(f)
    cs = doc["ConfigurationSpace"]
    params = [(p["Name"], values(p)) for p in cs["TuningParameters"]]
    target = os.environ.get("SYNTH_TARGET", "").split(",")
    tgt = {}
    for i, (name, vals) in enumerate(params):
        if len(target) == len(params):
            tgt[name] = [str(v) for v in vals].index(target[i])
        else:
            tgt[name] = 0
    hello = {"type": "hello", "protocol": 1, "name": "synthetic", "version": "1",
             "device": "exec/synthetic",
             "params": [{"name": n, "values": v} for n, v in params],
             "constraints": [c["Expression"] for c in cs.get("Conditions", [])]}
    print(json.dumps(hello), flush=True)

    def rel(name, j):
        n = len(dict(params)[name])
        return j / (n - 1) if n > 1 else 0.0

    index = {n: {json.dumps(v): j for j, v in enumerate(vals)} for n, vals in params}
    names = [n for n, _ in params]
    for line in sys.stdin:
        req = json.loads(line)
        if req.get("type") == "shutdown":
            return
        if req.get("type") != "run":
            continue
        c = req["config"]
        t = 1.0
        d = []
        for i, n in enumerate(names):
            j = index[n][json.dumps(c[n])]
            d.append(rel(n, j) - rel(n, tgt[n]))
            t += (1 + i % 3) * abs(d[-1])
        t += 2 * abs(d[0] * d[1]) if len(d) > 1 else 0
        reps = max(1, req.get("repetitions", 3))
        print(json.dumps({"type": "result", "id": req["id"], "times_ms": [t] * reps, "checksum": 1.0}), flush=True)


if __name__ == "__main__":
    main()
