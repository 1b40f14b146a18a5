#!/usr/bin/env bash
# scripts/lib.sh: a wait gives up at its deadline with a message, a failing
# logged step shows its output; and the scripts the README names wait only
# through wait_for (no loop without a deadline).
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
# shellcheck source=tests/unit/scripts/check_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/check_lib.sh"
work=$(mktemp -d /tmp/script-lib-test-XXXXXX)
trap 'rm -rf "$work"' EXIT

rc=0
start=$SECONDS
out=$(bash -c "source '$root/scripts/lib.sh'; wait_for 2 'a file that never comes' test -e '$work/never'" 2>&1) || rc=$?
check "wait_for gives up: non-zero" test "$rc" -ne 0
check "  within its deadline (2 s, allowed 5)" test $((SECONDS - start)) -le 5
check "  and names what it waited for" grep -q "gave up after 2s waiting for: a file that never comes" <<<"$out"
rc=0
(sleep 1 && touch "$work/soon") &
bash -c "source '$root/scripts/lib.sh'; wait_for 10 'a file' test -e '$work/soon'" || rc=$?
wait
check "wait_for returns 0 once the condition holds" test "$rc" -eq 0

rc=0
out=$(bash -c "source '$root/scripts/lib.sh'; run_logged '$work/step.log' bash -c 'echo compiling; echo \"x.cc:1: error: boom\" >&2; exit 3'" 2>&1) || rc=$?
check "run_logged passes the step's status on" test "$rc" -eq 3
check "  and shows the step's errors" grep -q "x.cc:1: error: boom" <<<"$out"

rc=0
out=$(bash -c "set -e; source '$root/scripts/lib.sh'; on_error_say_where; false; echo not-reached" 2>&1) || rc=$?
check "on_error_say_where names the failing command" grep -q "failed at line .*: false" <<<"$out"
check "  and the script stops" bash -c "! grep -q not-reached <<<'$out'"

# No polling loop without a deadline in the scripts a reader runs.
for script in scripts/demo.sh scripts/test.sh scripts/build.sh scripts/install-deps.sh scripts/fuzz.sh; do
  check "$script: no until/while-sleep loop (use wait_for)" \
    bash -c "! grep -nE '^[[:space:]]*(until|while) .*(sleep|do)' '$root/$script' | grep -v 'read -r'"
done

# The README is read from a clone, where ../shared does not exist.
check "README.md and docs/ point only inside the repository" \
  bash -c "! grep -rn '\.\./shared' '$root/README.md' '$root/docs'"

echo "$passed passed, $failed failed"
((failed == 0))
