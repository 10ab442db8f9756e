# Runs HTA's critical path analysis (hta/analyzers/critical_path_analysis.py)
# on one trace folder and step, and prints the GPU events it puts on the
# critical path (edges of type critical_path_operator on a GPU stream).
import json, os, sys
os.environ.setdefault("CRITICAL_PATH_ADD_ZERO_WEIGHT_LAUNCH_EDGE", "1")
from hta.trace_analysis import TraceAnalysis
trace_dir, annotation, inst = sys.argv[1], sys.argv[2], sys.argv[3]
inst = None if inst == "none" else int(inst)
ta = TraceAnalysis(trace_dir=trace_dir)
rank = list(ta.t.traces.keys())[0]
cp, ok = ta.critical_path_analysis(rank=rank, annotation=annotation, instance_id=inst)
if not ok:
    print(json.dumps({"error": "critical path analysis failed"})); sys.exit(0)
df = cp.get_critical_path_breakdown()
tdf = ta.t.get_trace(rank).set_index("index")
out = []
for _, r in df.iterrows():
    if r["type"] != "critical_path_operator" or not (r["stream"] >= 0):
        continue
    ev = tdf.loc[int(r["event_idx"])]
    out.append({"name": str(r["s_name"]), "ts": float(ev["ts"] + ta.t.min_ts), "dur": float(ev["dur"]), "weight": float(r["duration"]), "stream": int(ev["stream"])})
print(json.dumps({"trace": trace_dir, "annotation": annotation, "instance": inst, "gpu_critical": out}))
