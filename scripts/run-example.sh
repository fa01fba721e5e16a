#!/usr/bin/env bash
# Sets up (missing packages, build) and runs the main job: the bundled
# example loop graph on the embedded single-node default.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
build="${TAGFLOW_BUILD_DIR:-build}"
"$build/tools/tagflow" inspect examples/while_loop.pbtxt
