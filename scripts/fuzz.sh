#!/usr/bin/env bash
# Builds (if needed) and runs one libFuzzer harness of fuzz/ (docs/testing.md):
#   bash scripts/fuzz.sh TARGET SECONDS [libFuzzer flags]
#   TARGET: import_text, import_binary, saved_model, config, run, gradients or messages
# The fuzzer starts from a copy of its seed corpus (fuzz/corpus/TARGET) in
# build-fuzz/work/TARGET/corpus, which keeps the new entries it finds from
# run to run; crashes, hangs, leaks and out-of-memory inputs go to
# build-fuzz/work/TARGET/findings/ (with TAGFLOW_FUZZ_SMOKE=1, as
# scripts/test.sh runs it: a fresh copy of the seeds in build-fuzz/smoke/).
# Exits non-zero on a finding, 3 if clang or libFuzzer is missing. Reproduce one with
#   build-fuzz/fuzz/fuzz_TARGET build-fuzz/work/TARGET/findings/crash-...
set -euo pipefail
cd "$(dirname "$0")/.."

if [ $# -lt 2 ]; then
  echo "usage: bash scripts/fuzz.sh import_text|import_binary|saved_model|config|run|gradients|messages SECONDS [libFuzzer flags]" >&2
  exit 2
fi
target="$1"
seconds="$2"
shift 2
[ -d "fuzz/corpus/$target" ] || { echo "tagflow: no fuzz target '$target'" >&2; exit 2; }

if ! command -v clang++ > /dev/null; then
  echo "tagflow: clang is not installed; fuzzing needs it (apt-get install clang)" >&2
  exit 3
fi
probe="$(mktemp -d)"
trap 'rm -rf "$probe"' EXIT
printf 'extern "C" int LLVMFuzzerTestOneInput(const char*, unsigned long) { return 0; }\n' > "$probe/p.cpp"
if ! clang++ -fsanitize=fuzzer "$probe/p.cpp" -o "$probe/p" 2> /dev/null; then
  echo "tagflow: clang has no libFuzzer (bash scripts/setup.sh installs libclang-rt-*-dev)" >&2
  exit 3
fi

build="${TAGFLOW_FUZZ_BUILD_DIR:-build-fuzz}"
args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ -DTAGFLOW_FUZZ=ON
      -DTAGFLOW_BUILD_TESTS=OFF -DTAGFLOW_BUILD_BENCH=OFF)
command -v ccache > /dev/null && args+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S . -B "$build" "${args[@]}" > "$build.configure.log" 2>&1 \
    || { cat "$build.configure.log"; exit 1; }
fi
cmake --build "$build" --target "fuzz_$target" -j2 > "$build.build.log" 2>&1 \
  || { tail -50 "$build.build.log"; exit 1; }

work="$build/work/$target"
if [ -n "${TAGFLOW_FUZZ_SMOKE:-}" ]; then
  # scripts/test.sh: the seed corpus alone, not what earlier runs found
  work="$build/smoke/$target"
  rm -rf "$work"
fi
mkdir -p "$work/corpus" "$work/findings"
cp -n "fuzz/corpus/$target"/* "$work/corpus/" 2> /dev/null || true
flags=(-max_total_time="$seconds" -print_final_stats=1 -artifact_prefix="$work/findings/")
case "$target" in
  run|gradients) flags+=(-timeout=60 -rss_limit_mb=4096) ;;  # a Session per input, several threads
  # The largest seeds (up to 96 KB) slow every run down, and the pipeline's
  # paths are all reached by graphs of a few KB. With ~45000 features the
  # entropic schedule's bookkeeping took 64% of the time (perf): off.
  import_*) flags+=(-timeout=20 -rss_limit_mb=2048 -max_len=16384 -entropic=0) ;;
  *) flags+=(-timeout=20 -rss_limit_mb=2048) ;;
esac
[ -f "fuzz/$target.dict" ] && flags+=(-dict="fuzz/$target.dict")

# Sanitizer reports end the run (libFuzzer turns them into a finding).
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"
echo "tagflow: fuzzing $target for $seconds s (log $work/last.log)"
status=0
"$build/fuzz/fuzz_$target" "${flags[@]}" "$@" "$work/corpus" > "$work/last.log" 2>&1 || status=$?
grep -E '^(INFO: seed corpus|#[0-9]+ *(INITED|DONE))|^stat::(number_of_executed_units|peak_rss)|^Done ' \
  "$work/last.log" || true
if [ "$status" -ne 0 ]; then
  echo "tagflow: fuzz $target: FINDING (exit $status); see $work/last.log and $work/findings/" >&2
  grep -E 'ERROR|SUMMARY|invariant|tagflow fuzz|Test unit written' "$work/last.log" | head -20 >&2 || true
fi
exit "$status"
