#!/usr/bin/python3
"""Leave-one-family-out evaluation of `jobmon triage`'s primary class.

The real-program fixtures (tests/fixtures/real/pytorch) are grouped into
families of situations (expected-primary.json's `family`: the same
situation under srun, torchrun and plain python is one family). For each
family F, triage reads F's logs as if its patterns and causal rules had
been written from the other fixtures alone:

1. needed(log): the patterns (`jobmon triage --list-signatures`, by line) and
   causal rules (docs/triage.md) without which the log's primary class
   changes: each pattern that matched one of its lines
   (`scan.matched_patterns`) and each rule its chain used is left out alone
   (`--leave-out-pattern`, `--leave-out-rule`) and the log triaged again.
2. The rest's needs: needed() of every log outside F, the hand-written
   corpus (tests/fixtures/logs) included.
3. F's logs are triaged without what only F needs (needed by F's logs, by
   no other log): a pattern or rule that no other situation called for
   would not have been written from them.

A log is right when its primary class is its expectation. The figure is the
share of all real fixtures right when their own family is held out, for
three depths of holding out (MODES below); the script prints each with a
per-family and a per-class table and fails when the `rules` figure is
below --min-accuracy (default 0.90).
"""
import argparse
import collections
import concurrent.futures
import glob
import json
import os
import subprocess
import sys
import time

# What is held out of a family's reading, from the narrowest: the causal
# rules (docs/triage.md), then also the patterns the reasoning reads (line
# facts, step-line prefilters, harmless lines), then also the failure
# classes' signatures. The signatures are collected from the emitting
# programs' sources (docs/signature-sources.md), not from the fixtures; the
# last figure says what triage makes of a failure whose wording it was
# never given.
MODES = {
    "rules": {"rule"},
    "reasoning": {"rule", "fact", "step", "harmless"},
    "everything": {"rule", "fact", "step", "harmless", "class"},
}
MODE_TEXT = {
    "rules": "the causal rules only the family needs held out",
    "reasoning": "also the fact, step and harmless patterns only the family needs",
    "everything": "also the class signatures only the family needs",
}
GATE = "rules"  # the figure --min-accuracy applies to: what the rules alone make of a family

NOW = "2100-01-01T00:00:00Z"  # the real fixtures, as tests/unit/triage/check_real_fixtures.py


class Case:
    def __init__(self, name, log, args, expected, family):
        self.name, self.log, self.args = name, log, args
        self.expected, self.family = expected, family
        self.baseline = None  # primary class with everything
        self.fired = []       # ("pattern", id) / ("rule", name) the full reading used
        self.needed = set()


def leave_out_args(items):
    out = []
    for kind, value in sorted(items, key=str):
        out += [f"--leave-out-{kind}", str(value)]
    return out


def triage(jobmon, case, items=()):
    command = [jobmon, "triage", "--json", "--no-slurm", case.log, *case.args,
               *leave_out_args(items)]
    run = subprocess.run(command, capture_output=True, text=True, timeout=300)
    try:
        return json.loads(run.stdout)
    except ValueError:
        sys.exit(f"FAIL {case.name}: no JSON report (exit {run.returncode}): {run.stderr[:300]}")


def real_cases(folder):
    with open(os.path.join(folder, "expected-primary.json")) as f:
        expected = {k: v for k, v in json.load(f).items() if not k.startswith("_")}
    cases = []
    for log in sorted(glob.glob(os.path.join(folder, "*.log"))):
        name = os.path.basename(log)[:-4]
        entry = expected.get(name)
        if entry is None or "family" not in entry:
            sys.exit(f"FAIL {name}: no family in expected-primary.json")
        dmesg = os.path.join(folder, name + ".dmesg.txt")
        args = ["--now", NOW] + (["--kernel-log", dmesg] if os.path.exists(dmesg) else [])
        cases.append(Case(name, log, args, entry["primary"], entry["family"]))
    return cases


def corpus_cases(folder):
    cases = []
    for log in sorted(glob.glob(os.path.join(folder, "*.log"))):
        name = os.path.basename(log)[:-4]
        with open(os.path.join(folder, name + ".expected.json")) as f:
            expected = json.load(f)
        # As tests/unit/triage/check_triage_corpus.py runs them. Never held
        # out: only the patterns and rules they need count.
        cases.append(Case("corpus/" + name, log, expected.get("_args", []),
                          expected.get("primary_failure"), None))
    return cases


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobmon", required=True)
    parser.add_argument("--fixtures", required=True, help="tests/fixtures/real/pytorch")
    parser.add_argument("--corpus", required=True, help="tests/fixtures/logs")
    parser.add_argument("--min-accuracy", type=float, default=0.90)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    start = time.monotonic()
    patterns = subprocess.run([args.jobmon, "triage", "--list-signatures"], capture_output=True,
                              text=True, check=True).stdout.splitlines()
    real = real_cases(args.fixtures)
    every = real + corpus_cases(args.corpus)
    pool = concurrent.futures.ThreadPoolExecutor(args.jobs)

    # 1. What each log's reading used, then what it needs.
    for case, report in zip(every, pool.map(lambda c: triage(args.jobmon, c), every)):
        case.baseline = report["primary_failure"]
        case.fired = [("pattern", i) for i in report["scan"]["matched_patterns"]]
        rules = {e["rule"] for e in report["chain"]["events"] if e.get("rule")}
        case.fired += [("rule", r) for r in sorted(rules)]
    trials = [(case, item) for case in every for item in case.fired]
    print(f"{len(every)} logs ({len(real)} real), {len(patterns)} patterns; "
          f"{len(trials)} single leave-outs", flush=True)
    done = 0
    for (case, item), report in zip(trials, pool.map(
            lambda t: triage(args.jobmon, t[0], [t[1]]), trials)):
        if report["primary_failure"] != case.baseline:
            case.needed.add(item)
        done += 1
        if done % 200 == 0:
            print(f"  {done}/{len(trials)} ({time.monotonic() - start:.0f} s)", flush=True)

    def kind_of(item):
        kind, value = item
        return "rule" if kind == "rule" else patterns[value].split("\t")[0]

    def describe(item):
        kind, value = item
        if kind == "rule":
            return f"rule {value}"
        fields = patterns[value].split("\t")
        return f"pattern {value} ({fields[0]} {fields[1]}: {fields[2][:60]})"

    families = collections.defaultdict(list)
    for case in real:
        families[case.family].append(case)
    figures = {}
    for mode, kinds in MODES.items():
        # 2-3. Each family without what only it needs, of these kinds.
        held_out_runs, left_out = [], {}
        for family, cases in families.items():
            rest = set().union(*(c.needed for c in every if c.family != family))
            own = set().union(*(c.needed for c in cases))
            left_out[family] = {i for i in own - rest if kind_of(i) in kinds}
            held_out_runs += [(case, left_out[family]) for case in cases]
        said = {}
        for (case, items), report in zip(held_out_runs, pool.map(
                lambda t: triage(args.jobmon, t[0], t[1]), held_out_runs)):
            said[case.name] = report["primary_failure"]

        print(f"\n=== {mode}: {MODE_TEXT[mode]}")
        print(f"{'family':28} {'logs':>4} {'right':>5}  left out (needed by this family only)")
        right_total = 0
        for family in sorted(families):
            cases = families[family]
            right = sum(said[c.name] == c.expected for c in cases)
            right_total += right
            items = "; ".join(describe(i) for i in sorted(left_out[family], key=str)) or "-"
            print(f"{family:28} {len(cases):4d} {right:5d}  {items}")
            for c in cases:
                if said[c.name] != c.expected:
                    print(f"{'':28} wrong: {c.name}: {said[c.name]} (expected {c.expected})")
        truth, guess, correct = collections.Counter(), collections.Counter(), collections.Counter()
        for c in real:
            truth[c.expected] += 1
            guess[said[c.name]] += 1
            correct[c.expected] += said[c.name] == c.expected
        print(f"\n{'class':20} {'logs':>4} {'right':>5} {'precision':>9} {'recall':>6}")
        for cls in sorted(set(truth) | set(guess)):
            precision = correct[cls] / guess[cls] if guess[cls] else float("nan")
            recall = correct[cls] / truth[cls] if truth[cls] else float("nan")
            print(f"{cls:20} {truth[cls]:4d} {correct[cls]:5d} {precision:9.2f} {recall:6.2f}")
        figures[mode] = (right_total, right_total / len(real))

    print(f"\nleave-one-family-out accuracy ({len(real)} real fixtures, {len(families)} "
          f"families; {time.monotonic() - start:.0f} s):")
    for mode, (right, share) in figures.items():
        print(f"  {mode:12} {right}/{len(real)} = {share:.3f}")
    accuracy = figures[GATE][1]
    if accuracy < args.min_accuracy:
        print(f"FAIL below {args.min_accuracy:.2f}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
