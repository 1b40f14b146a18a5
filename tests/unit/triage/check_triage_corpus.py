#!/usr/bin/python3
"""Runs `jobmon triage --json` on every log of the fixture corpus and checks
the hand-written expectation beside it (X.log <-> X.expected.json):

- every key of the expectation must be in the report with the same value
  (objects: recursively, a subset; lists: same length, element by element);
- the process exit code must be the report's documented exit code.
"""
import argparse
import glob
import json
import os
import subprocess
import sys

from chain_check import chain_problems


def mismatches(expected, actual, path="$"):
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return [f"{path}: expected an object, got {json.dumps(actual)[:200]}"]
        out = []
        for key, value in expected.items():
            if key.startswith("_"):
                continue
            if key not in actual:
                out.append(f"{path}.{key}: missing")
            else:
                out += mismatches(value, actual[key], f"{path}.{key}")
        return out
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            got = [a.get("class", a) if isinstance(a, dict) else a for a in actual] if isinstance(actual, list) else actual
            return [f"{path}: expected {len(expected)} items, got {json.dumps(got)[:300]}"]
        out = []
        for i, (e, a) in enumerate(zip(expected, actual)):
            out += mismatches(e, a, f"{path}[{i}]")
        return out
    if isinstance(expected, float) and isinstance(actual, (int, float)):
        return [] if abs(expected - actual) <= 1e-6 * max(1.0, abs(expected)) else [f"{path}: expected {expected}, got {actual}"]
    return [] if expected == actual else [f"{path}: expected {json.dumps(expected)}, got {json.dumps(actual)[:200]}"]


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--jobmon", required=True)
    parser.add_argument("--corpus", required=True)
    args = parser.parse_args()
    logs = sorted(glob.glob(os.path.join(args.corpus, "*.log")))
    if not logs:
        print(f"FAIL no fixture logs in {args.corpus}")
        print("0 passed, 1 failed")
        return 1
    results = []
    for log in logs:
        name = os.path.basename(log)[:-4]
        with open(os.path.join(args.corpus, name + ".expected.json")) as f:
            expected = json.load(f)
        run = subprocess.run([args.jobmon, "triage", "--json", "--no-slurm", log, *expected.get("_args", [])],
                             capture_output=True, text=True, timeout=60)
        problems = []
        try:
            report = json.loads(run.stdout)
        except json.JSONDecodeError:
            report = None
            problems.append(f"no JSON (exit {run.returncode}): {run.stderr.strip()[:300]}")
        if report is not None:
            problems += mismatches(expected, report)
            problems += chain_problems(report)
            if run.returncode != report.get("exit_code"):
                problems.append(f"process exit {run.returncode} != report exit_code {report.get('exit_code')}")
            if report.get("schema") != "jobmon.triage/v1":
                problems.append(f"schema {report.get('schema')}")
        results.append((name, problems, f": {report['status']}, {report['primary_failure']}" if report else ""))
    results += [(name, problems, "") for name, problems in cli_checks(args.jobmon, args.corpus)]
    passed = failed = 0
    for name, problems, detail in results:
        if problems:
            failed += 1
            print(f"FAIL {name}")
            for p in problems:
                print(f"     {p}")
        else:
            passed += 1
            print(f"ok   {name}{detail}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed or not logs else 0


def cli_checks(jobmon, corpus):
    """The command line around the engine: report layout, config, errors, --all."""
    def run(*argv, **kw):
        return subprocess.run([jobmon, *argv], capture_output=True, text=True, timeout=60, **kw)

    headings = ["## Job triage:", "**Status:**", "**Primary failure:**", "**Stage:**", "### What happened",
                "### Evidence", "### Training progress projection", "### Additional findings",
                "### Live dashboards", "### Recommended next steps"]
    md = run("triage", "--no-slurm", os.path.join(corpus, "oom-host-cascade.log")).stdout
    explained = run("triage", "--no-slurm", "--explain", os.path.join(corpus, "oom-host-cascade.log")).stdout
    yield "--explain adds the causal chain after the report, and only then", (
        [] if "## Causal chain" not in md and explained.startswith(md)
        and "**primary**" in explained[len(md):] and "Rules used:" in explained else
        [f"chain missing or misplaced: {explained[len(md):][:300]!r}"])
    positions = [md.find(h) for h in headings]
    yield "markdown has the documented sections in order", (
        [] if -1 not in positions and positions == sorted(positions) else [f"positions {positions}"])
    yield "markdown quotes evidence with line numbers", (
        [] if "Out of memory: Killed process 4242" in md and "| Last periodic ckpt this run | step 100 |" in md
        else ["evidence or projection row missing"])

    # Slurm's view given on the command line, on real logs (tests/fixtures/real/pytorch):
    # state and exit code from the `scontrol show job` text recorded beside each.
    real = os.path.join(os.path.dirname(os.path.abspath(corpus)), "real", "pytorch")
    for name, status in (("srun-healthy", "completed"), ("srun-sigkill", "failed"),
                         ("srun-scancel", "cancelled"), ("srun-timelimit", "cancelled"),
                         ("srun-node-fail", "failed"), ("srun-usr1-checkpoint", "cancelled")):
        with open(os.path.join(real, name + ".slurm.txt")) as f:
            fields = dict(tok.split("=", 1) for tok in f.read().split() if "=" in tok)
        r = run("triage", "--json", "--slurm-state", fields["JobState"], "--slurm-exit-code",
                fields["ExitCode"], os.path.join(real, name + ".log"))
        report = json.loads(r.stdout) if r.stdout else {}
        yield f"real {name} with Slurm {fields['JobState']} {fields['ExitCode']} is {status}", (
            [] if report.get("status") == status and report.get("slurm_exit_code") == fields["ExitCode"]
            and r.returncode == report.get("exit_code")
            else [r.stderr.strip(), str(report.get("status")), str(report.get("status_basis"))])
    r = run("triage", "--slurm-state", "FAILED", "--slurm-exit-code", "nine",
            os.path.join(real, "srun-sigkill.log"))
    yield "a malformed --slurm-exit-code is a usage error", (
        [] if r.returncode == 2 and "--slurm-exit-code" in r.stderr else [r.stderr])

    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        config = os.path.join(tmp, "jobmon.toml")
        with open(config, "w") as f:
            f.write('[triage]\nstep_regex = \'step=(?P<step>\\d+) took (?P<seconds>[0-9.]+)s\'\n')
        r = run("triage", "--json", "--no-slurm", "--config", config, os.path.join(corpus, "custom-regex-profile.log"))
        report = json.loads(r.stdout) if r.stdout else {}
        yield "step regex from jobmon.toml", (
            [] if report.get("progress", {}).get("last_step") == 30 else [f"{r.stderr.strip()} {report.get('progress')}"])
        with open(config, "w") as f:
            f.write("[triage]\nstep_regexp = 'x'\n")
        r = run("triage", "--no-slurm", "--config", config, os.path.join(corpus, "oom-gpu.log"))
        yield "unknown config key is a clear error", (
            [] if r.returncode == 2 and "jobmon.toml:2: unknown key 'step_regexp' in [triage]" in r.stderr else [r.stderr])
        r = run("triage", os.path.join(tmp, "missing.log"))
        yield "missing input is a clear error", (
            [] if r.returncode == 2 and "no such file or directory" in r.stderr else [r.stderr])
        r = run("triage")
        yield "no input is a usage error", ([] if r.returncode == 2 and "exactly one of" in r.stderr else [r.stderr])
        r = run("triage", "--bogus-flag", "x.log")
        yield "an unknown flag is a usage error (2)", ([] if r.returncode == 2 else [f"exit {r.returncode}", r.stderr])
        r = run()
        yield "no subcommand is a usage error (2)", ([] if r.returncode == 2 else [f"exit {r.returncode}", r.stderr])
        r = run("triage", "--help")
        yield "--help succeeds and documents the exit codes", (
            [] if r.returncode == 0 and "Exit codes:" in r.stdout else [f"exit {r.returncode}"])
        r = run("triage", "--profile", "fortran", os.path.join(corpus, "oom-gpu.log"))
        yield "unknown profile is a clear error", ([] if r.returncode == 2 and "unknown --profile" in r.stderr else [r.stderr])

        outputs = os.path.join(tmp, "outputs")
        os.mkdir(outputs)
        for job_id, fixture in (("100", "healthy-with-noise"), ("101", "oom-host-cascade"), ("102", "cancelled-clean")):
            name = f"{job_id}-{fixture}"
            with open(os.path.join(corpus, fixture + ".log")) as src, open(os.path.join(outputs, name + ".log"), "w") as dst:
                dst.write(src.read())
            os.mkdir(os.path.join(outputs, name))
            os.symlink(f"../{name}.log", os.path.join(outputs, name, "log"))
        os.mkdir(os.path.join(outputs, "shared-checkpoints"))
        r = run("triage", "--all", outputs, "--no-slurm")
        lines = r.stdout.splitlines()
        order = [l.split()[0] for l in lines[1:]]
        yield "--all: worst first, shared dir skipped, worst exit code", (
            [] if order == ["failed", "cancelled", "completed"] and r.returncode == 5 else [r.stdout, r.stderr])
        r = run("triage", "101", "--outputs", outputs, "--json", "--no-slurm")
        report = json.loads(r.stdout) if r.stdout else {}
        yield "job id resolves to its job dir", (
            [] if report.get("job_dir", "").endswith("101-oom-host-cascade") and report.get("job_id") == "101"
            else [r.stderr, str(report.get("job_dir"))])


if __name__ == "__main__":
    sys.exit(main())
