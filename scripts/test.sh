#!/usr/bin/env bash
# The whole test suite, from a fresh Debian 12 machine, as root:
# dependencies, lint, unit tests under ASan/UBSan, integration tests on the
# real dev cluster, bounded fuzzing.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
# shellcheck source=scripts/lib.sh
source "$root/scripts/lib.sh"
on_error_say_where
step() { echo; echo "=== [$1/7] $2 ($(date +%T))"; }

step 1 "install dependencies"
scripts/install-deps.sh

step 2 "lint: clang-format (.clang-format), shellcheck"
mapfile -t sources < <(git ls-files '*.cc' '*.h')
clang-format --dry-run -Werror "${sources[@]}"
echo "${#sources[@]} C++ files formatted"
mapfile -t shell_scripts < <(git ls-files '*.sh' contrib/devcluster/devcluster .ci/run)
shellcheck -x "${shell_scripts[@]}"
echo "${#shell_scripts[@]} shell scripts clean"

step 3 "build with ASan/UBSan"
scripts/build.sh asan

step 4 "unit tests under ASan/UBSan"
(cd build/asan && ctest -L unit -j2 --output-on-failure --timeout 300)

step 5 "release build (SPANK plugin, fake trainer; no unit tests: they ran in step 4)"
scripts/build.sh release -DJOBMON_BUILD_UNIT_TESTS=OFF

step 6 "integration tests on the dev cluster"
(cd build/release && ctest -L integration --output-on-failure --verbose --timeout 600)

step 7 "bounded fuzzing of the untrusted-input parsers (clang, libFuzzer)"
scripts/fuzz.sh --ci
echo
echo "all tests passed"
