# Runs HTA's critical path analysis (hta/analyzers/critical_path_analysis.py)
# on one trace folder and annotation instance (argument 4 "last": with
# HTA's include_last_profiler_step, which keeps the last ProfilerStep and
# the GPU work it launched; by default HTA drops them as incomplete), and
# prints one JSON line: the
# analysed window (the annotation instance's start and end, µs as in the
# trace), the GPU events HTA puts on the critical path (edges of type
# critical_path_operator on a GPU stream) and where the path ends.
import json, os, sys, traceback
os.environ.setdefault("CRITICAL_PATH_ADD_ZERO_WEIGHT_LAUNCH_EDGE", "1")
from hta.trace_analysis import TraceAnalysis
trace_dir, annotation, inst = sys.argv[1], sys.argv[2], sys.argv[3]
inst = None if inst == "none" else int(inst)
last = len(sys.argv) > 4 and sys.argv[4] == "last"
out = {"trace": trace_dir, "annotation": annotation, "instance": inst, "include_last_step": last}
try:
    ta = TraceAnalysis(trace_dir=trace_dir, include_last_profiler_step=last)
    rank = list(ta.t.traces.keys())[0]
    df0 = ta.t.get_trace(rank)
    sym = ta.t.symbol_table.get_sym_id_map()
    if annotation:
        # the instance HTA picks: the inst-th event (in trace order) whose
        # name holds the annotation, GPU-side copies included
        ids = [v for k, v in sym.items() if annotation in k]
        ann = df0[df0.name.isin(ids)]
        if inst is not None and inst < len(ann):
            a = ann.iloc[inst]
            out["window"] = [float(a["ts"] + ta.t.min_ts), float(a["ts"] + a["dur"] + ta.t.min_ts)]
            out["window_name"] = ta.t.symbol_table.sym_table[int(a["name"])]
            out["window_stream"] = int(a["stream"])
        out["instances"] = [[ta.t.symbol_table.sym_table[int(r.name)], int(r.stream), float(r.ts + ta.t.min_ts)] for r in ann.itertuples()]
    else:
        out["window"] = [float(df0.ts.min() + ta.t.min_ts), float((df0.ts + df0.dur).max() + ta.t.min_ts)]
    res = ta.critical_path_analysis(rank=rank, annotation=annotation, instance_id=inst)
    if res is None:
        out["error"] = "HTA returned no graph (annotation not found)"
    else:
        cp, ok = res
        if not ok:
            out["error"] = "critical path analysis failed"
        else:
            df = cp.get_critical_path_breakdown()
            tdf = ta.t.get_trace(rank).set_index("index")
            crit = []
            for _, r in df.iterrows():
                if r["type"] != "critical_path_operator" or not (r["stream"] >= 0):
                    continue
                ev = tdf.loc[int(r["event_idx"])]
                crit.append({"name": str(r["s_name"]), "ts": float(ev["ts"] + ta.t.min_ts), "dur": float(ev["dur"]),
                             "weight": float(r["duration"]), "stream": int(ev["stream"])})
            out["gpu_critical"] = crit
            last = cp.node_list[cp.critical_path_nodes[-1]]
            first = cp.node_list[cp.critical_path_nodes[0]]
            out["path_start"] = float(first.ts + ta.t.min_ts)
            out["path_end"] = float(last.ts + ta.t.min_ts)
            out["path_weight"] = float(sum(cp.edges[u, v]["weight"] for u, v in zip(cp.critical_path_nodes, cp.critical_path_nodes[1:])))
            out["bound_by"] = {k: float(v) for k, v in df.groupby("bound_by")["duration"].sum().items()}
except Exception as e:  # say why, in the line
    out["error"] = "%s: %s" % (type(e).__name__, e)
    out["traceback"] = traceback.format_exc()[-1500:]
print(json.dumps(out))
