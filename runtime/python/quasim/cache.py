"""Kernel Tuner's cache files (cache=): read to resume, written as Kernel
Tuner writes them, so either tool resumes the other's run and `quasimctl
import` reads them."""

import json
import os

from quasim import util

_ERRORS = {"InvalidConfig": util.InvalidConfig, "CompilationFailedConfig": util.CompilationFailedConfig,
           "RuntimeFailedConfig": util.RuntimeFailedConfig, "ErrorConfig": util.ErrorConfig}


def problem_size(spec):
    """The problem_size as Kernel Tuner stores it: sizes, or the expression."""
    ocl = spec["opencl"]
    sizes = dict(zip(spec["problem_dims"], map(int, spec["problems"][0].split(","))))
    out = [sizes.get(e, e) for e in ocl["problem_size"]]
    return out[0] if len(out) == 1 and isinstance(out[0], str) else out


def load(path):
    """A cache file's contents, closed if a run was cut short (as Kernel Tuner reads it)."""
    with open(path) as f:
        s = f.read().strip()
    if s and s[-3:] not in ("}\n}", "}}}"):
        s = (s[:-1] if s.endswith(",") else s) + "}\n}"
    try:
        return json.loads(s)
    except ValueError as e:
        raise ValueError("cache: %s is not a Kernel Tuner cache file: %s" % (path, e)) from e


def read(path, kernel_name, spec, device_name=None):
    """The results a cache file holds for this kernel ({} when there is no
    file); an error naming cache= when it was written for another one."""
    if not os.path.isfile(path):
        return {}
    c = load(path)
    tp = spec["opencl"]["tune_params"]
    for field, want in (("kernel_name", kernel_name), ("tune_params_keys", list(tp)),
                        ("device_name", device_name)):
        if want is not None and c.get(field) != want:
            raise ValueError("cache: %s holds results of %s %r, this run's is %r" % (path, field, c.get(field), want))
    if "problem_size" in c and _flat(c["problem_size"]) != _flat(problem_size(spec)):
        raise ValueError("cache: %s holds results of problem_size %r, this run's is %r"
                         % (path, c["problem_size"], problem_size(spec)))
    out = {}
    for key, e in c.get("cache", {}).items():
        e = dict(e)
        if isinstance(e.get("time"), str):
            e["time"] = _ERRORS.get(e["time"], util.ErrorConfig)()
        out[key] = e
    return out


def _flat(ps):
    """A problem_size as a list, as Kernel Tuner compares them (100 == [100])."""
    return list(ps) if isinstance(ps, (list, tuple)) else [ps]


def key(result, tune_params):
    """Kernel Tuner's cache key: the values' str joined by commas."""
    return ",".join(str(result[k]) for k in tune_params)


def write(path, kernel_name, spec, env, results):
    """Writes every result, in Kernel Tuner's layout: its header, an entry a
    line, closed by "}\\n}"."""
    tp = spec["opencl"]["tune_params"]
    head = {"device_name": env.get("device_name", ""), "kernel_name": kernel_name,
            "problem_size": problem_size(spec), "tune_params_keys": list(tp), "tune_params": tp,
            "objective": "time", "cache": {}}
    text = json.dumps(head, cls=util.NpEncoder, indent="")[:-3]
    seen = set()
    for r in results:
        k = key(r, tp)
        if k in seen:
            continue
        seen.add(k)
        entry = {n: (str(v) if isinstance(v, util.ErrorConfig) else v) for n, v in r.items()}
        text += "\n" + json.dumps({k: entry}, cls=util.NpEncoder)[1:-1] + ","
    text = text[:-1] + "}\n}" if text.endswith(",") else text + "}\n}"
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)
