#!/bin/sh
# ONNX Runtime and tagflow on the same computations, in one go, one
# benchmark process at a time, interleaved case by case; prints the table.
#
#   TAGFLOW=path/to/build/tools/tagflow ./side_by_side.sh
#   CASES=rnn,lstm,cnn ROUNDS=1 TAGFLOW=... ./side_by_side.sh
#
# Environment (defaults in brackets):
#   TAGFLOW        the tagflow CLI binary (required)
#   ROUNDS         rounds over all cases; the table takes the median per figure [1]
#   CASES          ids or families of cases.json: rnn (every RNN size),
#                  rnn_h256_b32, lstm, lstm_b1, cnn, cnn_b32, ... [all of them]
#   ORT_THREADS    intra-op thread counts for ONNX Runtime [1,2]
#   TF_THREADS     --threads for tagflow [1,2]
#   ORT_REPS, TF_REPS   timed runs per n [9, 5]
#   EXECUTOR_BENCH tagflow's in-process bench, run once at the end as a
#                  cross-check of the whole-process slope [next to TAGFLOW:
#                  ../bench/executor_bench if present; "none" to skip]
#   PYTHON         a python3 with protobuf, to write the models if missing
#   OUT            results folder [build/results/UTC-TIMESTAMP]
#   ORT_NODE_MODULES  a node_modules folder with onnxruntime-node 1.30.0
#                  [./node_modules, from `npm ci --ignore-scripts`]
set -eu
cd "$(dirname "$0")"
: "${TAGFLOW:?set TAGFLOW to the tagflow CLI binary}"
ROUNDS=${ROUNDS:-1}
CASES=${CASES:-$(node -e "console.log(require('./cases.json').cases.map((c) => c.id).join(','))")}
ORT_THREADS=${ORT_THREADS:-1,2}
TF_THREADS=${TF_THREADS:-1,2}
ORT_REPS=${ORT_REPS:-9}
TF_REPS=${TF_REPS:-5}
OUT=${OUT:-build/results/$(date -u +%Y%m%dT%H%M%SZ)}
if [ -z "${PYTHON:-}" ]; then
  PYTHON=python3
  python3 -c 'import google.protobuf' 2>/dev/null || PYTHON=/usr/bin/python3
fi
mkdir -p "$OUT"

# (Re)write the models and graphs when missing or older than their generator.
stale() { [ ! -f "$1" ] || [ "$2" -nt "$1" ] || [ weights.py -nt "$1" ]; }
if stale build/models/weights.json make_models.py; then "$PYTHON" make_models.py; fi
if stale graphs/cnn_b32.pbtxt make_graphs.py; then "$PYTHON" make_graphs.py; fi

{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "host: $(uname -srm), $(nproc) cores; load before: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "node: $(node --version); onnxruntime-node from: ${ORT_NODE_MODULES:-./node_modules}; tagflow: $TAGFLOW"
  echo "tagflow --version: $("$TAGFLOW" --version 2>&1 | tr '\n' ' ')"
  echo "rounds: $ROUNDS; cases: $CASES; ORT threads: $ORT_THREADS; tagflow threads: $TF_THREADS"
} > "$OUT/env.txt"
cat "$OUT/env.txt"

# Values first: both runtimes at tagflow's two n (one run each).
node bench.mjs --case "$CASES" --check '' --values "$OUT/values" > "$OUT/check.jsonl"
node tagflow_bench.mjs --tagflow "$TAGFLOW" --case "$CASES" --check '' --values "$OUT/values" >> "$OUT/check.jsonl"

r=1
while [ "$r" -le "$ROUNDS" ]; do
  for c in $(echo "$CASES" | tr ',' ' '); do
    echo "round $r: $c" >&2
    node bench.mjs --case "$c" --threads "$ORT_THREADS" --reps "$ORT_REPS" >> "$OUT/results.jsonl"
    node tagflow_bench.mjs --tagflow "$TAGFLOW" --case "$c" --threads "$TF_THREADS" --reps "$TF_REPS" >> "$OUT/results.jsonl"
  done
  r=$((r + 1))
done

EB=${EXECUTOR_BENCH:-$(dirname "$TAGFLOW")/../bench/executor_bench}
if [ "$EB" != none ] && [ -x "$EB" ]; then
  for th in $(echo "$TF_THREADS" | tr ',' ' '); do
    echo "TAGFLOW_BENCH_THREADS=$th $EB loop 10000 100000; matmul 2000" >> "$OUT/executor_bench.txt"
    TAGFLOW_BENCH_THREADS=$th "$EB" loop 10000 100000 >> "$OUT/executor_bench.txt" 2>&1 || true
    TAGFLOW_BENCH_THREADS=$th "$EB" matmul 2000 >> "$OUT/executor_bench.txt" 2>&1 || true
  done
fi
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$OUT/env.txt"

node table.mjs "$OUT" | tee "$OUT/table.md"
if [ -f "$OUT/executor_bench.txt" ]; then
  echo
  echo "tagflow's own in-process bench (executor_bench), same session:"
  sed 's/^/    /' "$OUT/executor_bench.txt"
fi
echo
echo "raw: $OUT/results.jsonl, $OUT/check.jsonl, $OUT/env.txt"
