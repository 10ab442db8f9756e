#!/usr/bin/env python3
"""Times each tuning run's best Xgemm config again, all configs in turn,
ROUNDS rounds of sgemm_peers -n 256 -r 20 (the median of 20 launches, timed
by profiling events, in a process of its own), and prints per tuner the
mean and spread over its runs of each run's median over the rounds.

Usage: retime.py ROUNDS RUN.json...
  RUN.json: a quasimctl bench live --json file (its best_key), a run_kt.py
  record (its best_config), or {"tuner": NAME, "best_config": {...},
  "wall_time_s": S} for a config from elsewhere (CLBlast's tuner).
  A run under a folder named live4 is labelled "(live4)", to keep sessions
  apart.
env: SGEMM_PEERS (default /tmp/sgemm_peers, built from
  examples/opencl-xgemm/sgemm_peers.c), XGEMM_SOURCE (the hub's
  gemm_milo/common.opencl, default /work/bench/xgemm/gemm_milo/common.opencl)."""
import collections
import json
import os
import re
import statistics as st
import subprocess
import sys

NAMES = ['GEMMK', 'MWG', 'NWG', 'KWG', 'MDIMC', 'NDIMC', 'MDIMA', 'NDIMB', 'KWI', 'VWM', 'VWN',
         'STRM', 'STRN', 'SA', 'SB', 'KREG', 'PRECISION']
SGEMM = os.environ.get('SGEMM_PEERS', '/tmp/sgemm_peers')
SOURCE = os.environ.get('XGEMM_SOURCE', '/work/bench/xgemm/gemm_milo/common.opencl')


def run_of(path):
    r = json.load(open(path))
    r = r[0] if isinstance(r, list) else r
    if 'best_key' in r:  # quasimctl bench live (its key lists NAMES' values in order)
        tuner = 'quasim' if 'finalists' in r else 'quasim, before finalists'
        vals, wall = r['best_key'].split(','), r['wall_s']
    elif 'tuner' in r:
        tuner, vals, wall = r['tuner'], [str(r['best_config'][n]) for n in NAMES], r['wall_time_s']
    else:  # run_kt.py
        tuner, vals, wall = 'kernel_tuner ' + r['strategy'], [str(r['best_config'][n]) for n in NAMES], r['wall_time_s']
    if '/live4/' in path:
        tuner += ' (live4)'
    return path, tuner, ' '.join(f'-D{n}={v}' for n, v in zip(NAMES, vals)), wall, []


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    rounds = int(sys.argv[1])
    runs = [run_of(f) for f in sys.argv[2:]]
    for k in range(rounds):
        for path, _, defs, _, times in runs:
            out = subprocess.run([SGEMM, '-n', '256', '-r', '20', '-k', SOURCE, '-D', defs],
                                 capture_output=True, text=True).stdout
            m = re.search(r'^\s*256\s+xgemm\s+([0-9.]+)', out, re.M)
            times.append(float(m.group(1)) if m else float('nan'))
            print(f'== {k + 1} {path} {times[-1]}', flush=True)
    by = collections.defaultdict(list)
    for path, tuner, _, wall, times in runs:
        by[tuner].append((st.median(times), wall))
    for tuner, rs in sorted(by.items()):
        med = [x[0] for x in rs]
        walls = [x[1] for x in rs]
        sd = st.stdev(med) if len(med) > 1 else 0
        print(f'{tuner:28s} runs {len(rs)} best Xgemm timed again {st.mean(med):.3f} ± {sd:.3f} ms '
              f'({", ".join(f"{m:.3f}" for m in med)})  wall {st.mean(walls):.1f} s ({", ".join(f"{w:.1f}" for w in walls)})')


if __name__ == '__main__':
    main()
