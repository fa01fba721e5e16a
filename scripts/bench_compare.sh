#!/usr/bin/env bash
# Runs the executor and functional benchmarks of two builds alternately on
# the same machine and prints the median of each measure for both, and
# their ratio (docs/performance.md):
#   bash scripts/bench_compare.sh BEFORE_BUILD_DIR AFTER_BUILD_DIR [ROUNDS]
# Each round runs every measure once with the "before" build, then once
# with the "after" build, so that drifts of a noisy machine hit both.
set -euo pipefail
before="$1"; after="$2"; rounds="${3:-5}"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
run() {  # label build command...
  local label="$1" build="$2"; shift 2
  echo "## $label" >> "$log"
  "$@" 2>&1 | sed "s|^|$build |" >> "$log"
}
for ((r = 1; r <= rounds; ++r)); do
  for side in before after; do
    dir=${!side}
    run step "$side" "$dir/bench/executor_bench" step 20000
    run loop "$side" "$dir/bench/executor_bench" loop 100000
    run loop1 "$side" env TAGFLOW_BENCH_THREADS=1 "$dir/bench/executor_bench" loop 100000
    run split "$side" "$dir/bench/executor_bench" split 20000
    run matmul "$side" "$dir/bench/executor_bench" matmul 500
    run functional "$side" "$dir/bench/functional_bench" 100000 500
  done
done
python3 - "$log" <<'PY'
import re, statistics, sys
label = None
values = {}
patterns = {
    "step": [("step overhead, one-node graph (µs)", r"through Session::run: ([\d.]+)")],
    "loop": [("counting loop, µs an iteration, 2 threads", r"n = +\d+: ([\d.]+) µs/iteration")],
    "loop1": [("counting loop, µs an iteration, 1 thread", r"n = +\d+: ([\d.]+) µs/iteration")],
    "split": [("counting loop, body on another device", r"body on another device than the pivot: ([\d.]+)"),
              ("64x64 MatMul loop, body on another device", r"MatMul loop, n = \d+, body on another device than the pivot: ([\d.]+)")],
    "matmul": [("64x64 MatMul loop, one device", r"with a 64x64 MatMul body: ([\d.]+)")],
    "functional": [("functional While, trivial, as written", r"trivial While.*as written ([\d.]+)"),
                   ("functional While, trivial, lowered", r"trivial While.*lowered ([\d.]+)"),
                   ("64x64 MatMul While, lowered", r"MatMul While.*lowered ([\d.]+)"),
                   ("tanh RNN fwd+bwd, TF 2 as written (µs)", r"TF 2 as written ([\d.]+) us"),
                   ("tanh RNN fwd+bwd, TF 1 (µs)", r"TF 1 ([\d.]+) us")],
}
for line in open(sys.argv[1]):
    if line.startswith("## "):
        label = line[3:].strip()
        continue
    side, _, text = line.partition(" ")
    for name, pat in patterns.get(label, []):
        if label == "split" and "MatMul" in text and "MatMul" not in name:
            continue
        m = re.search(pat, text)
        if m:
            values.setdefault(name, {}).setdefault(side, []).append(float(m.group(1)))
print(f"| measure | before | after | after / before |\n|---|---|---|---|")
for name, sides in values.items():
    b = statistics.median(sides.get("before", [float("nan")]))
    a = statistics.median(sides.get("after", [float("nan")]))
    print(f"| {name} | {b:.3g} | {a:.3g} | {a / b:.2f} |")
PY
