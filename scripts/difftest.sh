#!/usr/bin/env bash
# The long randomized split-versus-one-device run (docs/testing.md): N
# programs (default 10000) in each of the four forms — TF 1 GraphDefs with
# and without TensorFlow's pivot edges, GraphBuilder's TF 1 and TF 2 forms —
# each run on one device and under four other configurations (2-5 devices,
# random and round-robin placements, the deterministic scheduler or 1, 2
# and 4 threads, with and without iteration actors, TF 2 as written and
# lowered), compared bit for bit; and N/100 small programs of each GraphDef
# form explored in every order of their messages (at most one overtaking).
# Disagreements are printed, shrunk and saved to $build/difftest-failures/
# as regression cases (copy them to tests/data/difftest/). Extra arguments
# go to difftest (--seed S, --jobs J, --configs K, --forms LIST).
# Exit status 1 if anything disagreed.
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-10000}"
shift || true
bash scripts/setup.sh
build="${TAGFLOW_BUILD_DIR:-build}"
exec "$build/tests/difftest/difftest" --graphs "$n" --explore $((n / 100)) --jobs "$(nproc)" \
  --save "$build/difftest-failures" "$@"
