#!/usr/bin/env bash
# Sets up (missing packages, build) and runs the whole test suite with ctest;
# then, where clang and libFuzzer are installed, each fuzzer of fuzz/ for a
# few seconds on its corpus (build-fuzz/; TAGFLOW_FUZZ_SECONDS=0 skips them).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh "$@"
ctest --test-dir "${TAGFLOW_BUILD_DIR:-build}" --output-on-failure

seconds="${TAGFLOW_FUZZ_SECONDS:-5}"
if [ "$seconds" = 0 ]; then
  echo "tagflow: fuzzers skipped (TAGFLOW_FUZZ_SECONDS=0)"
elif ! command -v clang++ > /dev/null; then
  echo "tagflow: fuzzers skipped: clang is not installed"
else
  for target in import_text import_binary saved_model config run gradients messages; do
    status=0
    TAGFLOW_FUZZ_SMOKE=1 bash scripts/fuzz.sh "$target" "$seconds" || status=$?
    if [ "$status" -eq 3 ]; then
      echo "tagflow: fuzzers skipped: no libFuzzer"
      break
    fi
    [ "$status" -eq 0 ] || exit "$status"
  done
fi
