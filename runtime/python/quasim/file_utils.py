"""Kernel Tuner's T4 output and metadata files (FAIR T4, schema 1.0.0)."""

import json
import os
import platform
import sys

from quasim import util

SCHEMA_VERSION = "1.0.0"
_TIMINGS = {"compilation": "compile_time", "benchmark": "benchmark_time", "framework": "framework_time",
            "search_algorithm": "strategy_time", "validation": "verification_time"}


def _json_name(name):
    return name if name.endswith(".json") else name + ".json"


def _validity(result):
    t = result.get("time")
    if not isinstance(t, util.ErrorConfig):
        return "correct"
    if isinstance(t, util.CompilationFailedConfig):
        return "compile"
    if isinstance(t, util.RuntimeFailedConfig):
        return "runtime"
    return "constraints"


def get_t4_results(results, tune_params, objective="time"):
    """The results of tune_kernel as a T4 results document."""
    skip = set(tune_params) | set(_TIMINGS.values()) | {"timestamp", "times"}
    out = []
    for r in results:
        e = {}
        if "timestamp" in r:
            e["timestamp"] = r["timestamp"]
        e["configuration"] = {k: v for k, v in r.items() if k in tune_params}
        e["times"] = {t4: r.get(col, 0) for t4, col in _TIMINGS.items()}
        e["times"]["runtimes"] = r.get("times", [])
        e["invalidity"] = _validity(r)
        e["correctness"] = 1
        e["measurements"] = [dict(name=k, value=v, unit="ms" if k.startswith("time") else "")
                             for k, v in r.items() if k not in skip]
        e["objectives"] = [objective]
        out.append(e)
    return dict(results=out, schema_version=SCHEMA_VERSION, metadata={"timeunit": "milliseconds"})


def store_output_file(output_filename, results, tune_params, objective="time"):
    """Write tune_kernel's results as a T4 output file."""
    path = _json_name(output_filename)
    d = os.path.dirname(path)
    if d:
        os.makedirs(d, exist_ok=True)
    with open(path, "w") as fh:
        json.dump(get_t4_results(results, tune_params, objective), fh, cls=util.NpEncoder)


def get_t4_metadata():
    """This machine and software as a T4 metadata document."""
    import importlib.metadata as md

    reqs = []
    for name in ("quasim", "numpy", "pyopencl"):
        try:
            reqs.append("%s==%s" % (name, md.version(name)))
        except md.PackageNotFoundError:
            pass
    metadata = {
        "operating_system": {"linux": "Linux", "darwin": "Mac", "win32": "Windows"}.get(sys.platform, "unidentified OS"),
        "hardware": {"hardware_description": [{"machine": platform.machine(), "processor": platform.processor(),
                                               "cpus": os.cpu_count()}]},
        "environment": {"device_query": {}, "requirements": reqs},
    }
    return dict(metadata=metadata, schema_version=SCHEMA_VERSION)


def store_metadata_file(metadata_filename):
    """Write this machine's T4 metadata file."""
    path = _json_name(metadata_filename)
    d = os.path.dirname(path)
    if d:
        os.makedirs(d, exist_ok=True)
    with open(path, "w") as fh:
        json.dump(get_t4_metadata(), fh, indent="  ")
