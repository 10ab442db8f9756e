#!/bin/sh
# HTA's critical path analysis of the steps compared in
# docs/evidence/causal-hta.md, one JSON line per (trace folder, step):
#   HTA=/path/to/HolisticTraceAnalysis sh hta_critical_path.sh > hta_cp.jsonl
# HTA is a copy of github.com/facebookresearch/HolisticTraceAnalysis (not
# vendored here); Debian's python3-pandas, -networkx, -plotly, -psutil and
# -yaml run it. Then:
#   QUASIM_HTA_DATA=$HTA/tests/data QUASIM_HTA_CP=hta_cp.jsonl go test ./causal -run TestHTACriticalPath -v
set -e
here=$(cd "$(dirname "$0")" && pwd)
cd "${HTA:?set HTA to a copy of HolisticTraceAnalysis}"
for spec in "critical_path/cuda_event_sync 0" "amd_trace 0" "trace_compare/base 0" "trace_compare/base 1" \
  "timeline_analysis 0" "timeline_analysis 1" "ns_resolution_trace 2" "ns_resolution_trace 3" "nccl_parser_config 1" \
  "trace_diff/control 2" "trace_diff/control 3" "negative_queue_length_values_check 2" "df_index_resolver 2" "trace_diff/test 2"; do
  set -- $spec
  s=$(date +%s.%N)
  line=$(PYTHONPATH=. python3 "$here/hta_critical_path.py" "tests/data/$1" ProfilerStep "$2" 2>/dev/null | tail -1)
  e=$(date +%s.%N)
  echo "$line" | python3 -c "import sys,json; d=json.loads(sys.stdin.read() or '{}'); d['seconds']=round($e-$s,1); d['dir']='$1'; d['instance']=$2; print(json.dumps(d))"
done
