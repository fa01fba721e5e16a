#!/usr/bin/env bash
# Installs the Debian packages tagflow needs that are not installed yet, then
# configures and builds into build/ (or $TAGFLOW_BUILD_DIR).
# Extra CMake arguments may be given, e.g. -DTAGFLOW_SANITIZE=ON.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(cmake g++ make libcaf-dev libprotobuf-dev protobuf-compiler
          libboost-test-dev libeigen3-dev libfmt-dev libcli11-dev nlohmann-json3-dev
          libssl-dev openssl libleveldb-dev libre2-dev libjpeg62-turbo-dev libpng-dev
          libzip-dev libsnappy-dev libdnnl-dev python3-numpy)
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

# Where clang is installed, libFuzzer too (scripts/fuzz.sh; Debian ships it
# in libclang-rt-N-dev, which clang-N only recommends, through
# libclang-common-N-dev, so --no-install-recommends leaves it out).
if command -v clang++ > /dev/null; then
  probe="$(mktemp -d)"
  printf 'extern "C" int LLVMFuzzerTestOneInput(const char*, unsigned long) { return 0; }\n' > "$probe/p.cpp"
  if ! clang++ -fsanitize=fuzzer "$probe/p.cpp" -o "$probe/p" 2> /dev/null; then
    major="$(clang++ -dumpversion | cut -d. -f1)"
    echo "tagflow: installing libclang-rt-$major-dev (libFuzzer)"
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "libclang-rt-$major-dev"
  fi
  rm -rf "$probe"
fi

build="${TAGFLOW_BUILD_DIR:-build}"
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" > "$build.configure.log" 2>&1 \
  || { cat "$build.configure.log"; exit 1; }
cmake --build "$build" -j"$(nproc)"
