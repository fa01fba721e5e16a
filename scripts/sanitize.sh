#!/usr/bin/env bash
# Builds tagflow with a sanitizer in a build dir of its own and runs the
# whole ctest suite under it (docs/testing.md):
#   bash scripts/sanitize.sh asan   # AddressSanitizer + UndefinedBehaviorSanitizer, build-asan/
#   bash scripts/sanitize.sh tsan   # ThreadSanitizer, build-tsan/ (needs clang)
# Extra arguments go to ctest (e.g. -R actors). The first report ends the
# test that made it (halt_on_error); ThreadSanitizer reads the suppressions
# in scripts/sanitizers/, each with its reason. clang is used when
# installed (ASan falls back to g++); ccache when installed.
set -euo pipefail
cd "$(dirname "$0")/.."

kind="${1:-}"
case "$kind" in
  asan) build="${TAGFLOW_BUILD_DIR:-build-asan}"; option=-DTAGFLOW_SANITIZE=ON ;;
  tsan) build="${TAGFLOW_BUILD_DIR:-build-tsan}"; option=-DTAGFLOW_TSAN=ON ;;
  *) echo "usage: bash scripts/sanitize.sh asan|tsan [ctest arguments]" >&2; exit 2 ;;
esac
shift

args=("$option" -DTAGFLOW_BUILD_BENCH=OFF)
if command -v clang++ > /dev/null; then
  args+=(-DCMAKE_CXX_COMPILER=clang++)
elif [ "$kind" = tsan ]; then
  echo "tagflow: ThreadSanitizer builds need clang (apt-get install clang)" >&2
  exit 1
fi
command -v ccache > /dev/null && args+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)

start=$(date +%s)
TAGFLOW_BUILD_DIR="$build" bash scripts/setup.sh "${args[@]}"
built=$(date +%s)

supp="$PWD/scripts/sanitizers"
export ASAN_OPTIONS="halt_on_error=1:abort_on_error=1:detect_leaks=1:strict_init_order=1:detect_stack_use_after_return=1:suppressions=$supp/asan.supp"
export LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:suppressions=$supp/ubsan.supp"
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:history_size=4:suppressions=$supp/tsan.supp"
status=0
ctest --test-dir "$build" --output-on-failure "$@" || status=$?
end=$(date +%s)
echo "tagflow: $kind: build $((built - start)) s, ctest $((end - built)) s"
exit "$status"
