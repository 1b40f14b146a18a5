#!/usr/bin/env bash
# Configures and builds one flavour of jobmon: release (default) or asan.
#   scripts/build.sh [release|asan]
set -euo pipefail
flavour=${1:-release}
root=$(cd "$(dirname "$0")/.." && pwd)
case "$flavour" in
  release) options=(-DCMAKE_BUILD_TYPE=RelWithDebInfo) ;;
  # The sanitizer build leaves the SPANK plugin out: an ASan runtime cannot
  # be loaded into slurmd/slurmstepd, which are not built with it.
  asan) options=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DJOBMON_SANITIZE=ON -DJOBMON_BUILD_SPANK=OFF) ;;
  *) echo "usage: $0 [release|asan]" >&2; exit 2 ;;
esac
cmake -S "$root" -B "$root/build/$flavour" -DJOBMON_WERROR=ON "${options[@]}" >/dev/null
cmake --build "$root/build/$flavour" -j "${JOBMON_BUILD_JOBS:-2}"
