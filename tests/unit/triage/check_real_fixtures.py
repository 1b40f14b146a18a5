#!/usr/bin/python3
"""Runs `jobmon triage --json --no-slurm` over every real-program log in a
fixture folder, compares each primary class with the folder's
expected-primary.json (taken from the folder's README table), prints a
per-class table (fixtures, correct primary, precision, recall) and fails
when a primary is wrong. A log without an expectation fails too, so a new
fixture cannot be skipped silently. Entries marked `pending` (an answer that
depends on work outside the classifier) are counted in the table but only
reported, not failed.

A log with a `<name>.dmesg.txt` beside it (the kernel's OOM-killer report
for the job) is triaged with `--kernel-log <name>.dmesg.txt`: its `primary`
is the answer with that evidence, and its `log_alone` (when given) the
answer from the log alone, which is checked too. So is a log with a
`<name>.ray-logs/` folder beside it (a Ray session's worker logs), with
`--ray-logs`.
"""
import argparse
import collections
import concurrent.futures
import glob
import json
import os
import subprocess
import sys

from chain_check import chain_problems


# Every fixture is judged as a user reads it long after the job ended: a
# fixed --now (the log's end is then its last timestamp, not the file's
# mtime, which is a checkout's time and would make a just-checked-out log
# look "still written").
NOW = "2100-01-01T00:00:00Z"


def triage(jobmon, log, extra):
    """(primary class, None) or (None, what went wrong)."""
    run = subprocess.run([jobmon, "triage", "--json", "--no-slurm", "--now", NOW, log, *extra],
                         capture_output=True, text=True, timeout=240)  # ASan, beside other tests
    try:
        report = json.loads(run.stdout)
        problems = chain_problems(report)
        return (report["primary_failure"], None) if not problems else (None, "; ".join(problems))
    except (ValueError, KeyError):
        return None, f"no JSON report (exit {run.returncode}): {run.stderr[:300]}"


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--jobmon", required=True)
    parser.add_argument("--fixtures", required=True)
    args = parser.parse_args()
    with open(os.path.join(args.fixtures, "expected-primary.json")) as f:
        expected = {k: v for k, v in json.load(f).items() if not k.startswith("_")}
    logs = sorted(glob.glob(os.path.join(args.fixtures, "*.log")))
    if not logs:
        print(f"FAIL no logs in {args.fixtures}")
        return 1
    failures, pending = [], []
    truth, said = collections.Counter(), collections.Counter()
    correct = collections.Counter()

    # Every run up front, in parallel (each is a process of its own).
    def dmesg_args(log):
        # Evidence beside the log: the kernel's report (<name>.dmesg.txt),
        # a Ray session's worker logs (<name>.ray-logs/).
        dmesg, ray = log[:-4] + ".dmesg.txt", log[:-4] + ".ray-logs"
        extra = ["--kernel-log", dmesg] if os.path.exists(dmesg) else []
        return extra + (["--ray-logs", ray] if os.path.isdir(ray) else [])

    runs = [(log, tuple(dmesg_args(log))) for log in logs]
    runs += [(log, ()) for log in logs if dmesg_args(log)]
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        answers = dict(zip(runs, pool.map(lambda run: triage(args.jobmon, run[0], list(run[1])),
                                          runs)))
    for log in logs:
        name = os.path.basename(log)[:-4]
        if name not in expected:
            failures.append(f"{name}: no expectation in expected-primary.json")
            continue
        want = expected[name]["primary"]
        kernel = dmesg_args(log)
        got, error = answers[(log, tuple(kernel))]
        if error:
            failures.append(f"{name}: {error}")
            continue
        if "log_alone" in expected[name]:
            alone, error = answers.get((log, ()), (None, "not run without --kernel-log"))
            ok = alone == expected[name]["log_alone"]
            print(f"{'ok  ' if ok else 'FAIL'} {name + ' (log alone)':28} expected "
                  f"{expected[name]['log_alone']:18} got {alone}")
            if not ok:
                failures.append(f"{name} (log alone): expected {expected[name]['log_alone']}, "
                                f"got {alone or error}")
        truth[want] += 1
        said[got] += 1
        ok = got == want
        correct[want] += ok
        mark = "ok  " if ok else ("PEND" if "pending" in expected[name] else "FAIL")
        print(f"{mark} {name:28} expected {want:18} got {got}")
        if not ok:
            line = f"{name}: expected {want}, got {got}"
            (pending if "pending" in expected[name] else failures).append(
                line + (f" (pending: {expected[name]['pending']})" if "pending" in expected[name] else ""))
    missing = sorted(set(expected) - {os.path.basename(l)[:-4] for l in logs})
    failures += [f"{name}: expectation without a log" for name in missing]

    print()
    print(f"{'class':20} {'fixtures':>8} {'correct':>8} {'precision':>10} {'recall':>8}")
    for cls in sorted(set(truth) | set(said)):
        precision = f"{correct[cls] / said[cls]:.2f}" if said[cls] else "-"
        recall = f"{correct[cls] / truth[cls]:.2f}" if truth[cls] else "-"
        print(f"{cls:20} {truth[cls]:8} {correct[cls]:8} {precision:>10} {recall:>8}")
    total = sum(truth.values())
    print(f"{'all':20} {total:8} {sum(correct.values()):8}")
    for line in pending:
        print(f"PENDING {line}")
    for line in failures:
        print(f"FAIL {line}")
    print(f"{sum(correct.values())} correct, {len(failures)} wrong, {len(pending)} pending")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
