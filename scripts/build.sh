#!/usr/bin/env bash
# Configures and builds one flavour of jobmon: release (default), asan, fuzz.
#   scripts/build.sh [release|asan|fuzz] [extra cmake -D options]
set -euo pipefail
flavour=${1:-release}
root=$(cd "$(dirname "$0")/.." && pwd)
case "$flavour" in
  # Prefix /usr: the Debian package (scripts/package.sh) is this build,
  # and the binaries carry their install paths. Options given after the
  # flavour override these (a later -D wins).
  release) options=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX=/usr
                    -DJOBMON_BUILD_UNIT_TESTS=ON) ;;
  # The sanitizer build leaves the SPANK plugin out: an ASan runtime cannot
  # be loaded into slurmd/slurmstepd, which are not built with it.
  asan) options=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DJOBMON_SANITIZE=ON -DJOBMON_BUILD_SPANK=OFF) ;;
  # libFuzzer targets: clang, every library instrumented.
  fuzz) options=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DJOBMON_FUZZ=ON -DJOBMON_BUILD_TESTS=OFF
                 -DJOBMON_BUILD_SPANK=OFF -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14) ;;
  *) echo "usage: $0 [release|asan|fuzz] [-DOPTION=VALUE ...]" >&2; exit 2 ;;
esac
if [[ $# -gt 0 ]]; then shift; fi
options+=("$@")
# Configure quietly, but show everything when it fails.
mkdir -p "$root/build"
if ! cmake -S "$root" -B "$root/build/$flavour" -DJOBMON_WERROR=ON "${options[@]}" \
  >"$root/build/configure-$flavour.log" 2>&1; then
  echo "build.sh: cmake configure failed; $root/build/configure-$flavour.log says:" >&2
  tail -n 60 "$root/build/configure-$flavour.log" >&2
  exit 1
fi
cmake --build "$root/build/$flavour" -j "${JOBMON_BUILD_JOBS:-2}"
