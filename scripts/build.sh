#!/usr/bin/env bash
# Configures and builds one flavour of jobmon: release (default), asan, or
# demo (what scripts/demo.sh runs, nothing else).
#   scripts/build.sh [release|asan|demo] [extra cmake -D options]
# Ninja where it is installed (scripts/install-deps.sh installs it); a build
# dir made earlier by another generator keeps that one.
set -euo pipefail
flavour=${1:-release}
root=$(cd "$(dirname "$0")/.." && pwd)
targets=()  # none: every target
case "$flavour" in
  # Prefix /usr: the Debian package (scripts/package.sh) is this build,
  # and the binaries carry their install paths. Options given after the
  # flavour override these (a later -D wins).
  # The flags spelled out (CMake's defaults): a tree the test command built
  # at -O1 (scripts/test.sh) builds -O2 again here.
  release) options=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX=/usr
                    -DJOBMON_BUILD_UNIT_TESTS=ON
                    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g -DNDEBUG"
                    "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O2 -g -DNDEBUG") ;;
  # clang with ASan/UBSan and libFuzzer's coverage instrumentation: the unit
  # tests and the libFuzzer targets (tests/fuzz/) from one compile of every
  # library. No SPANK plugin: an ASan runtime cannot be loaded into
  # slurmd/slurmstepd, which are not built with it. -O0 (the libraries the
  # unit tests wait on keep -O1: CMakeLists.txt) and line tables only: what
  # sanitizer reports need, for half the compile time of -O1.
  asan) options=(-DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O0 -gline-tables-only -DNDEBUG"
                 "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O0 -gline-tables-only -DNDEBUG"
                 -DJOBMON_SANITIZE=ON -DJOBMON_FUZZ=ON -DJOBMON_BUILD_SPANK=OFF -DJOBMON_PCH=ON
                 -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14
                 # lld: ASan executables link in a fraction of GNU ld's time
                 -DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld -DCMAKE_SHARED_LINKER_FLAGS=-fuse-ld=lld) ;;
  # The demo's binaries only, in a tree of their own: -O1 without debug info,
  # in unity batches, no tests (nor GoogleTest: scripts/install-deps.sh --demo
  # has none). No precompiled headers: each target compiled its own (26 of
  # them, 9 s each), more than the few unity batches of a target saved by
  # it (the demo's targets: 4 min 51 s with them, 3 min 3 s without, one
  # after the other on the same machine).
  # Warnings stay warnings (gcc 12 at -O1 has seen array bounds that are not
  # there, -Warray-bounds): a new user's compiler must not stop the demo; the
  # tests build with -Werror.
  demo) options=(-DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -DNDEBUG"
                 "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -DNDEBUG" -DJOBMON_DEBUG_INFO=OFF
                 -DJOBMON_BUILD_TESTS=OFF -DJOBMON_PCH=OFF -DJOBMON_UNITY=ON -DJOBMON_WERROR=OFF)
        targets=(spank_diag jobmon-exporter jobmon-supervise jobmon-archive slurm_job_monitor jobmon
                 fake-trainer) ;;
  fuzz) echo "$0: the fuzz flavour is now part of asan (build/asan/tests/fuzz)" >&2; exit 2 ;;
  *) echo "usage: $0 [release|asan|demo] [-DOPTION=VALUE ...]" >&2; exit 2 ;;
esac
if [[ ! -f "$root/build/$flavour/CMakeCache.txt" ]] && command -v ninja >/dev/null; then
  options=(-G Ninja "${options[@]}")
fi
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
cmake --build "$root/build/$flavour" -j "${JOBMON_BUILD_JOBS:-2}" ${targets[@]:+--target "${targets[@]}"}
