#!/bin/sh
# HTA's critical path analysis of the steps compared in
# docs/evidence/causal-hta.md, one JSON line per (trace folder, annotation
# instance):
#   HTA=/path/to/HolisticTraceAnalysis sh hta_critical_path.sh > hta_cp.jsonl
# HTA is a copy of github.com/facebookresearch/HolisticTraceAnalysis (not
# vendored here); Debian's python3-pandas, -networkx, -plotly, -psutil and
# -yaml run it (PYTHON, default /usr/bin/python3: a pyenv python3 earlier
# on PATH lacks them). HTA's log of each run goes to $LOGS (default
# /tmp/hta_cp_logs). Then:
#   QUASIM_HTA_DATA=$HTA/tests/data QUASIM_HTA_CP=hta_cp.jsonl go test ./causal -run TestHTACriticalPath -v
set -e
here=$(cd "$(dirname "$0")" && pwd)
py=${PYTHON:-/usr/bin/python3}
logs=${LOGS:-/tmp/hta_cp_logs}
mkdir -p "$logs"
cd "${HTA:?set HTA to a copy of HolisticTraceAnalysis}"
# folder;annotation;instance (none: the whole trace)[;last]. HTA's own
# tests take simple_add and alexnet by their forward annotation, the
# multi-stream event sync trace whole. HTA drops a trace's last
# ProfilerStep unless told to keep it (last): a two-step trace has no
# instance 1 without it.
fwd='[param|pytorch.model.alex_net|0|0|0|measure|forward]'
while IFS=';' read -r dir ann inst last; do
  [ -n "$dir" ] || continue
  s=$(date +%s.%N)
  log="$logs/$(echo "$dir-$inst$last" | tr '/' '_').log"
  line=$(PYTHONPATH=. "$py" "$here/hta_critical_path.py" "tests/data/$dir" "$ann" "$inst" "$last" 2>"$log" | tail -1)
  e=$(date +%s.%N)
  printf '%s\n' "$line" | DIR="$dir" INST="$inst" LOG="$log" T0="$s" T1="$e" "$py" -c '
import json, os, sys
env = os.environ
d = json.loads(sys.stdin.read() or "{}") or {"error": "no output (see %s)" % env["LOG"]}
d["seconds"] = round(float(env["T1"]) - float(env["T0"]), 1)
d["dir"], d["instance"] = env["DIR"], None if env["INST"] == "none" else int(env["INST"])
print(json.dumps(d))'
done <<LIST
critical_path/cuda_event_sync;ProfilerStep;0
critical_path/cuda_event_sync_multi_stream;;none
critical_path/simple_add;$fwd;1
critical_path/alexnet;$fwd;1
amd_trace;ProfilerStep;0
trace_compare/base;ProfilerStep;0
trace_compare/base;ProfilerStep;1
trace_compare/base;ProfilerStep;1;last
timeline_analysis;ProfilerStep;0
timeline_analysis;ProfilerStep;1
timeline_analysis;ProfilerStep;1;last
ns_resolution_trace;ProfilerStep;2
ns_resolution_trace;ProfilerStep;3
nccl_parser_config;ProfilerStep;1
trace_diff/control;ProfilerStep;2
trace_diff/control;ProfilerStep;3
negative_queue_length_values_check;ProfilerStep;2
df_index_resolver;ProfilerStep;2
trace_diff/test;ProfilerStep;2
LIST
