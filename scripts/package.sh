#!/usr/bin/env bash
# Builds the Debian package from the release build (the one the tests use):
#   scripts/package.sh        -> build/release/jobmon_<version>-<rev>_amd64.deb
# CPack's DEB generator packages that build's install() rules, stripped.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/build.sh" release
cd "$root/build/release"
cpack -G DEB
ls -1 "$root"/build/release/jobmon_*.deb
