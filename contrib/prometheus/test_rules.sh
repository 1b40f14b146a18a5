#!/bin/sh
# Checks jobmon-rules.yml with Prometheus's promtool: the rules parse and
# pass jobmon-rules.test.yml (each alert fires on its fault, not on the
# healthy twin). Usage: test_rules.sh [PROMTOOL]. Exit 77 (skipped) when
# promtool is missing (Debian: apt install prometheus).
set -eu
promtool=${1:-promtool}
command -v "$promtool" >/dev/null 2>&1 || { echo "skipped: no promtool (apt install prometheus)"; exit 77; }
dir=$(dirname "$0")
"$promtool" check rules "$dir/jobmon-rules.yml"
"$promtool" test rules "$dir/jobmon-rules.test.yml"
