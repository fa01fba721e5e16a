#!/usr/bin/env bash
# Sets up (missing packages, build) and runs the main job: the bundled
# example loop graph (while i < 10: i += 1) on the embedded single-node
# default, printing the loop's result and the graph's frames.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
build="${TAGFLOW_BUILD_DIR:-build}"
"$build/tools/tagflow" run examples/while_loop.pbtxt --fetch while/Exit
"$build/tools/tagflow" inspect examples/while_loop.pbtxt
