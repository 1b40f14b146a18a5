#!/usr/bin/python3
"""Benchmark: `jobmon triage` against ripgrep's `rg -c` (and, with --grep, `grep -E -c`) with the same signature set.

Generates a log of --gigabytes (default 2): four tasks' MaxText step lines,
timestamped INFO noise and known-harmless lines, with an OOM -> NCCL ->
heartbeat cascade near the end. The four tasks print the same step line
(srun -l labels it with each task's number), unless --distinct: then each
task's seconds and loss are its own, and no line repeats the one before it.
Then, in this one run, it times

  rg -c -f <jobmon's own patterns, translated to ERE> LOG   (Debian's ripgrep; skipped, and said, without it)
  grep -E -c -f <the same patterns> LOG   (--grep only: minutes on a large log)
  jobmon triage --json --no-slurm LOG

and prints wall time and peak RSS of each (GNU time's accounting of that
child alone) and the ratios. Each is timed --rounds times, in turn (rg,
jobmon, baseline, rg, ...), and the median is printed with the range, and
each ratio also as the median of the rounds' own ratios (a pair run back to
back drifts together): on a shared machine one run each can be 10% off
either way.

--costs also times jobmon with each kind of pattern left out
(--leave-out-pattern, by the kinds --list-signatures prints: class,
harmless, step, fact), each in turn with the whole set, so the share of
the scan each kind costs, matching and reading together, is measured
rather than guessed. Nothing is asserted: the figures are the result.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def generate(path, size, distinct=False):
    noise = [
        "0: 2026-11-20 10:00:00,000 INFO input_pipeline: prefetched 64 batches from shard 17 of 512\n",
        "1: NCCL WARN MSCCL++: Feature not enabled\n",
        "2: W1120 10:00:05.000000 77 topology.cc:212] Cannot read CPU core 57\n",
        "3: 2026-11-20 10:00:00,000 INFO checkpoint_manager: no checkpoint due (period 500)\n",
    ]
    written, step, chunk = 0, 0, []
    with open(path, "w") as f:
        f.write("Job start: 2026-11-20T10:00:00Z\nSLURM_JOB_ID=4242\nNNODES=4\nNODE_LIST=node[001-004]\n"
                "PASSTHROUGH_ARGS=steps=100000000 enable_checkpointing=true\n"
                "Config param checkpoint_period: 500\n")
        for task in range(4):
            f.write(f"{task}: [fake-trainer] task {task} on host node{task + 1:03d} (process {task} of 4)\n")
        while written < size:
            for task in range(4):
                seconds, loss = (f"1.0{(step * 7 + task * 3) % 100:02d}", (step + task) % 1000) if distinct \
                    else ("1.021", step % 1000)
                chunk.append(f"{task}: completed step: {step}, seconds: {seconds}, TFLOP/s/device: 451.200, "
                             f"MFU: 34.51%, Tokens/s/device: 8104.330, loss: 2.{loss:03d}\n")
            chunk.append(noise[step % 4])
            step += 1
            if len(chunk) >= 50000:
                text = "".join(chunk)
                f.write(text)
                written += len(text)
                chunk.clear()
                print(f"\rgenerating: {written / 2**30:.2f} / {size / 2**30:.2f} GiB", end="", file=sys.stderr)
        f.write("1: Out of memory: Killed process 4242 (python3) total-vm:812345678kB\n"
                "0: node001:4000:4100 [0] NCCL WARN Timeout waiting for peer in all-reduce\n"
                "0: UNAVAILABLE: The following tasks are unhealthy (stopped sending heartbeats):\n"
                "0: /job:jax_worker/replica:0/task:1\n"
                "NODE_EXIT host=node002 exit=137\n"
                "================ JOB SUMMARY ================\nEnd: 2026-11-21T10:00:00Z\n"
                "Status: FAILED (exit 1)\n")
    print(file=sys.stderr)
    return step


def ere(expression):
    return (expression.replace(r"\d", "[0-9]").replace(r"\S", "[^[:space:]]")
            .replace(r"[ \t]", "[[:blank:]]"))


def measure(argv, stdout):
    """Wall time and peak RSS of one command. GNU time forks it from a small
    process: rusage of a child forked from Python would include the pre-exec
    copy of the interpreter."""
    with tempfile.NamedTemporaryFile("r") as rss_file:
        start = time.monotonic()
        proc = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", rss_file.name, *argv], stdout=stdout,
                              stderr=subprocess.PIPE)
        wall = time.monotonic() - start
        rss_kib = int(rss_file.read().strip().splitlines()[-1])
    return wall, rss_kib / 1024.0, proc


def measure_costs(args, listing, triage):
    """(kind, patterns, median seconds without them, median seconds with all, median share) per kind."""
    kinds = {}
    for number, row in enumerate(listing.splitlines()):
        kinds.setdefault(row.split("\t")[0], []).append(number)
    costs = []
    for kind, numbers in kinds.items():
        without = [args.jobmon, "triage", *[f"--leave-out-pattern={n}" for n in numbers], *triage[1:]]
        subprocess.run(without, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # compiles its database
        times = {"without": [], "all": []}
        for round_number in range(args.rounds):
            print(f"\rcosts: {kind}, round {round_number + 1} of {args.rounds}", end="", file=sys.stderr,
                  flush=True)
            times["without"].append(measure(without, subprocess.DEVNULL)[0])
            times["all"].append(measure([args.jobmon, *triage], subprocess.DEVNULL)[0])
        # The share from each round's pair (taken back to back), then their
        # median: a machine whose speed drifts between rounds moves both alike.
        share = statistics.median((whole - without) / whole
                                  for without, whole in zip(times["without"], times["all"]))
        costs.append((kind, len(numbers), statistics.median(times["without"]), statistics.median(times["all"]),
                      share))
    print(file=sys.stderr)
    return costs


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobmon", required=True)
    parser.add_argument("--gigabytes", type=float, default=2.0)
    parser.add_argument("--dir", default=tempfile.gettempdir(), help="where the generated log goes")
    parser.add_argument("--baseline", help="another jobmon (an earlier build) timed on the same log")
    parser.add_argument("--distinct", action="store_true",
                        help="each task prints its own step line: no line repeats the one before it")
    parser.add_argument("--grep", action="store_true", help="time grep -E too (about 80 s per 0.5 GiB here)")
    parser.add_argument("--rounds", type=int, default=3, help="runs of each, in turn; medians are printed")
    parser.add_argument("--costs", action="store_true",
                        help="also time jobmon without each kind of pattern (class, harmless, step, fact)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        log = os.path.join(tmp, "bench.log")
        steps = generate(log, int(args.gigabytes * 2**30), args.distinct)
        size = os.path.getsize(log)
        listing = subprocess.run([args.jobmon, "triage", "--list-signatures"], capture_output=True, text=True,
                                 check=True).stdout
        patterns = os.path.join(tmp, "signatures.ere")
        expressions = [line.split("\t")[2] for line in listing.splitlines()]  # then weight, source
        with open(patterns, "w") as f:
            f.write("\n".join(ere(e) for e in expressions) + "\n")
        subprocess.run(["cat", log], stdout=subprocess.DEVNULL, check=True)  # same page-cache state for all
        if args.grep:
            grep_wall, grep_rss, grep = measure(["grep", "-E", "-c", "-f", patterns, log], subprocess.PIPE)
            grep_count = grep.stdout.decode().strip()
        rg = shutil.which("rg")
        triage = ["triage", "--json", "--no-slurm", log]
        runs = {"rg": [], "jobmon": [], "baseline": []}
        for round_number in range(args.rounds):
            print(f"\rround {round_number + 1} of {args.rounds}", end="", file=sys.stderr, flush=True)
            if rg:
                runs["rg"].append(measure([rg, "-c", "-f", patterns, log], subprocess.PIPE))
            with open(os.path.join(tmp, "report.json"), "w") as out:
                runs["jobmon"].append(measure([args.jobmon, *triage], out))
            if args.baseline:
                runs["baseline"].append(measure([args.baseline, *triage], subprocess.DEVNULL))
        print(file=sys.stderr)
        with open(os.path.join(tmp, "report.json")) as f:
            report = json.load(f)
        costs = measure_costs(args, listing, triage) if args.costs else []
    mib = size / 2**20

    def line(label, measured, extra=""):
        walls = [wall for wall, _, _ in measured]
        wall = statistics.median(walls)
        rss = max(rss for _, rss, _ in measured)
        print(f"{label:<19}: {wall:7.2f} s  ({min(walls):.2f}-{max(walls):.2f})  {mib / wall:7.1f} MiB/s"
              f"  peak RSS {rss:6.1f} MiB{extra}")
        return wall, rss

    def paired(a, b):
        """The median over rounds of a's wall time over b's, each round's pair run back to back."""
        return statistics.median(x[0] / y[0] for x, y in zip(a, b))

    print(f"log: {size / 2**30:.2f} GiB, {steps} steps x 4 tasks"
          f" ({'each its own line' if args.distinct else 'the same line'}) + noise, {len(expressions)} patterns; "
          f"medians of {args.rounds} rounds (range)")
    if args.grep:
        print(f"grep -E -c -f sigs : {grep_wall:7.2f} s  {mib / grep_wall:7.1f} MiB/s  peak RSS {grep_rss:6.1f} MiB"
              f"  ({grep_count} matching lines)")
    if rg:
        rg_wall, _ = line("rg -c -f sigs", runs["rg"], f"  ({runs['rg'][-1][2].stdout.decode().strip()} matching lines)")
    else:
        print("rg -c -f sigs      : skipped (ripgrep is not installed: apt-get install ripgrep)")
    jm = runs["jobmon"][-1][2]
    jm_wall, jm_rss = line("jobmon triage", runs["jobmon"], f"  (status {report['status']}, primary "
                           f"{report['primary_failure']}, exit {jm.returncode})")
    if args.grep:
        print(f"ratio: jobmon is {grep_wall / jm_wall:.1f}x the speed of grep")
    print(f"peak RSS: jobmon {jm_rss:.1f} MiB (goal < 64 MiB)")
    if rg:
        print(f"ratio: jobmon is {rg_wall / jm_wall:.2f}x the speed of ripgrep (goal 1x); "
              f"{paired(runs['rg'], runs['jobmon']):.2f}x by the rounds' pairs")
    if args.baseline:
        base_wall, _ = line("baseline jobmon", runs["baseline"])
        print(f"ratio: this jobmon takes {jm_wall / base_wall:.2f}x the baseline's time; "
              f"{paired(runs['jobmon'], runs['baseline']):.2f}x by the rounds' pairs")
    if costs:
        print("what each kind of pattern costs (jobmon with the kind left out, in turn with all of them):")
        for kind, count, without, whole, share in costs:
            print(f"  {kind:<9} {count:4d} patterns: {without:6.2f} s without them, {whole:6.2f} s with all:"
                  f" {100 * share:5.1f}% of the scan (median of the rounds' pairs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
