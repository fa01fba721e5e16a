#!/usr/bin/env bash
# Profiles a command with perf (sampling at PROFILE_FREQ Hz, default 999, with
# DWARF call graphs) and draws its flame graph into docs/flamegraphs/NAME.svg
# with scripts/flamegraph.py; prints the SVG's path. Example:
#   bash scripts/profile.sh loop -- env TAGFLOW_BENCH_THREADS=1 build/bench/executor_bench loop 300000
set -euo pipefail

die() { echo "profile.sh: $*" >&2; exit 1; }

[ $# -ge 3 ] && [ "$2" = "--" ] || die "usage: profile.sh NAME -- COMMAND..."
name=$1
shift 2
case "$name" in */* | .* | "") die "NAME must be a plain file name, not '$name'" ;; esac
command -v perf > /dev/null || die "perf is not installed (Debian: apt-get install linux-perf)"

root="$(cd "$(dirname "$0")/.." && pwd)"
data="/tmp/tagflow-profile-$name.data"
out="$root/docs/flamegraphs/$name.svg"
trap 'rm -f "$data" "$data.old" "$out.tmp"' EXIT

perf record -F "${PROFILE_FREQ:-999}" --call-graph dwarf,16384 -o "$data" -- "$@" \
  || die "perf record or the command failed (exit $?): $*"
mkdir -p "$(dirname "$out")"
perf script -i "$data" --no-inline \
  | python3 "$root/scripts/flamegraph.py" --title "$name: $*" -o "$out.tmp"
mv "$out.tmp" "$out"
echo "$out"
