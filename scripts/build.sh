#!/usr/bin/env bash
# Configures and builds one flavour of jobmon: release (default), asan, fuzz.
#   scripts/build.sh [release|asan|fuzz]
set -euo pipefail
flavour=${1:-release}
root=$(cd "$(dirname "$0")/.." && pwd)
case "$flavour" in
  release) options=(-DCMAKE_BUILD_TYPE=RelWithDebInfo) ;;
  # The sanitizer build leaves the SPANK plugin out: an ASan runtime cannot
  # be loaded into slurmd/slurmstepd, which are not built with it.
  asan) options=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DJOBMON_SANITIZE=ON -DJOBMON_BUILD_SPANK=OFF) ;;
  # libFuzzer targets: clang, every library instrumented.
  fuzz) options=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DJOBMON_FUZZ=ON -DJOBMON_BUILD_TESTS=OFF
                 -DJOBMON_BUILD_SPANK=OFF -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14) ;;
  *) echo "usage: $0 [release|asan|fuzz]" >&2; exit 2 ;;
esac
cmake -S "$root" -B "$root/build/$flavour" -DJOBMON_WERROR=ON "${options[@]}" >/dev/null
cmake --build "$root/build/$flavour" -j "${JOBMON_BUILD_JOBS:-2}"
