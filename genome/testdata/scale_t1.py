#!/usr/bin/env python3
"""Scale a FAIR T1 file's value lists up to a target raw size.

Usage: scale_t1.py IN.T1.json OUT.T1.json [--raw 1e12]

The large-space test spaces of quasim (docs/kernel-authors/search-spaces.md) are made by
this script from the shipped kernels, read by path from ../shared/spaces/kernels,
never copied:

    for k in gemm convolution dedispersion hotspot; do
        python3 genome/testdata/scale_t1.py ../shared/spaces/kernels/${k}_milo.T1.json \
            /tmp/large/${k}_x.T1.json
    done

The rule: every numeric parameter with at least two values that is not a
0/1 flag is extended by continuing its progression, geometric when the last
two values have an integer ratio above 1 (16, 32, 64 -> 128, 256), else
arithmetic by the last step (1, 2, 3, 4 -> 5, 6); one value at a time,
always to the parameter with the fewest values (ties: first in file order),
each to at most --grow times its own length, until the product of the list
lengths reaches --raw or nothing may grow. Single-valued parameters
(problem sizes, fixed settings), flags, strings, booleans and the
conditions stay as they are, so the constraint structure is the kernel's
own. It prints the raw size reached; genome's TestScaledT1 counts the valid
configs of the files (QUASIM_LARGE_T1=/tmp/large go test ./genome -run
TestScaledT1 -v).
"""
import argparse
import json
import math


def values(p):
    v = p["Values"]
    if isinstance(v, list):
        return v
    # T1 Values strings: list literals, range() and comprehensions; the
    # shipped kernels' are Python expressions of ints.
    return list(eval(v, {"__builtins__": {"range": range, "list": list}}))


def extend(vals):
    a, b = vals[-2], vals[-1]
    if a > 0 and b > a and b % a == 0 and b // a > 1:
        return b * (b // a)
    return b + (b - a)


def scale(doc, raw, grow):
    params = doc["ConfigurationSpace"]["TuningParameters"]
    lists = []
    for p in params:
        vs = values(p)
        numeric = p.get("Type", "int") in ("int", "float") and all(
            isinstance(x, (int, float)) and not isinstance(x, bool) for x in vs)
        flag = set(vs) <= {0, 1}
        lists.append((vs, numeric and len(vs) >= 2 and not flag))

    def size():
        return math.prod(len(vs) for vs, _ in lists)

    cap = [grow * len(vs) for vs, _ in lists]
    while size() < raw:
        can = [i for i, (vs, ok) in enumerate(lists) if ok and len(vs) < cap[i]]
        if not can:
            break
        i = min(can, key=lambda i: (len(lists[i][0]), i))
        lists[i][0].append(extend(lists[i][0]))
    for p, (vs, _) in zip(params, lists):
        p["Values"] = json.dumps(vs)
    doc["General"]["BenchmarkName"] = doc["General"].get("BenchmarkName", "kernel") + "_x"
    return doc, size()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("src")
    ap.add_argument("dst")
    ap.add_argument("--raw", type=float, default=1e12)
    ap.add_argument("--grow", type=int, default=4)
    a = ap.parse_args()
    with open(a.src) as f:
        doc = json.load(f)
    doc, n = scale(doc, a.raw, a.grow)
    with open(a.dst, "w") as f:
        json.dump(doc, f, indent=1)
    print(f"{a.dst}: {n:.4g} raw combinations")


if __name__ == "__main__":
    main()
