#!/usr/bin/env bash
# Checks that an object of ops/cpu/isa/eigen_kernels.cpp compiled for one
# instruction-set level defines no global or weak symbol outside its level's
# namespaces (tagflow::ops::cpu::isa_<level>, eigen_<level>): the linker
# keeps one copy of each weak symbol, so a shared inline function compiled
# with AVX-512 in one variant could be what a baseline caller runs.
# Usage: isa_symbols_test.sh <level> <object>...
set -euo pipefail
level="$1"
shift
[ $# -gt 0 ] || { echo "no objects for level $level"; exit 1; }
status=0
for obj in "$@"; do
  defined="$(nm -C --defined-only "$obj")"
  [ -n "$defined" ] || { echo "$obj: no symbols"; exit 1; }
  echo "$defined" | grep -q "tagflow::ops::cpu::isa_${level}::kKernels" \
    || { echo "$obj: does not define tagflow::ops::cpu::isa_${level}::kKernels"; status=1; }
  # Global (upper-case types), weak (W, V) and unique (u) symbols, except
  # the personality routine's data reference every C++ object shares.
  stray="$(echo "$defined" | awk '$2 ~ /^[A-Zu]$/' | grep -v -e "eigen_${level}::" -e "isa_${level}::" \
             -e "DW.ref.__gxx_personality_v0" || true)"
  if [ -n "$stray" ]; then
    echo "$obj defines symbols another variant or translation unit may share:"
    echo "$stray" | head -20
    status=1
  fi
done
[ $status -eq 0 ] && echo "$level: $# object(s), every symbol in its own namespaces"
exit $status
