#!/usr/bin/env bash
# Installs the Debian packages tagflow needs that are not installed yet, then
# configures and builds into build/ (or $TAGFLOW_BUILD_DIR).
# Extra CMake arguments may be given, e.g. -DTAGFLOW_SANITIZE=ON.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(cmake g++ make libcaf-dev libprotobuf-dev protobuf-compiler
          libboost-test-dev libeigen3-dev libfmt-dev libcli11-dev nlohmann-json3-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "tagflow: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

build="${TAGFLOW_BUILD_DIR:-build}"
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" > "$build.configure.log" 2>&1 \
  || { cat "$build.configure.log"; exit 1; }
cmake --build "$build" -j"$(nproc)"
