#!/usr/bin/python3
"""Benchmark: `jobmon triage` against ripgrep's `rg -c` (and, with --grep, `grep -E -c`) with the same signature set.

Generates a log of --gigabytes (default 2): four tasks' MaxText step lines,
timestamped INFO noise and known-harmless lines, with an OOM -> NCCL ->
heartbeat cascade near the end. Then, in this one run, it times

  rg -c -f <jobmon's own patterns, translated to ERE> LOG   (Debian's ripgrep; skipped, and said, without it)
  grep -E -c -f <the same patterns> LOG   (--grep only: minutes on a large log)
  jobmon triage --json --no-slurm LOG

and prints wall time and peak RSS of each (os.wait4 rusage of that child
alone) and the ratios. Nothing is asserted: the figures are the result.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time


def generate(path, size):
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
                chunk.append(f"{task}: completed step: {step}, seconds: 1.021, TFLOP/s/device: 451.200, "
                             f"MFU: 34.51%, Tokens/s/device: 8104.330, loss: 2.{step % 1000:03d}\n")
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


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobmon", required=True)
    parser.add_argument("--gigabytes", type=float, default=2.0)
    parser.add_argument("--dir", default=tempfile.gettempdir(), help="where the generated log goes")
    parser.add_argument("--baseline", help="another jobmon (an earlier build) timed on the same log")
    parser.add_argument("--grep", action="store_true", help="time grep -E too (about 80 s per 0.5 GiB here)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        log = os.path.join(tmp, "bench.log")
        steps = generate(log, int(args.gigabytes * 2**30))
        size = os.path.getsize(log)
        listing = subprocess.run([args.jobmon, "triage", "--list-signatures"], capture_output=True, text=True,
                                 check=True).stdout
        patterns = os.path.join(tmp, "signatures.ere")
        expressions = [line.split("\t")[2] for line in listing.splitlines()]  # then weight, source
        with open(patterns, "w") as f:
            f.write("\n".join(ere(e) for e in expressions) + "\n")
        subprocess.run(["cat", log], stdout=subprocess.DEVNULL, check=True)  # same page-cache state for both
        if args.grep:
            grep_wall, grep_rss, grep = measure(["grep", "-E", "-c", "-f", patterns, log], subprocess.PIPE)
            grep_count = grep.stdout.decode().strip()
        rg = shutil.which("rg")
        if rg:
            subprocess.run(["cat", log], stdout=subprocess.DEVNULL, check=True)
            rg_wall, rg_rss, rg_run = measure([rg, "-c", "-f", patterns, log], subprocess.PIPE)
            rg_count = rg_run.stdout.decode().strip()
        with open(os.path.join(tmp, "report.json"), "w") as out:
            jm_wall, jm_rss, jm = measure([args.jobmon, "triage", "--json", "--no-slurm", log], out)
        with open(os.path.join(tmp, "report.json")) as f:
            report = json.load(f)
        if args.baseline:
            base_wall, base_rss, _ = measure([args.baseline, "triage", "--json", "--no-slurm", log],
                                             subprocess.DEVNULL)
    mib = size / 2**20
    print(f"log: {size / 2**30:.2f} GiB, {steps} steps x 4 tasks + noise, {len(expressions)} patterns")
    if args.grep:
        print(f"grep -E -c -f sigs : {grep_wall:7.2f} s  {mib / grep_wall:7.1f} MiB/s  peak RSS {grep_rss:6.1f} MiB"
              f"  ({grep_count} matching lines)")
    if rg:
        print(f"rg -c -f sigs      : {rg_wall:7.2f} s  {mib / rg_wall:7.1f} MiB/s  peak RSS {rg_rss:6.1f} MiB"
              f"  ({rg_count} matching lines)")
    else:
        print("rg -c -f sigs      : skipped (ripgrep is not installed: apt-get install ripgrep)")
    print(f"jobmon triage      : {jm_wall:7.2f} s  {mib / jm_wall:7.1f} MiB/s  peak RSS {jm_rss:6.1f} MiB"
          f"  (status {report['status']}, primary {report['primary_failure']}, exit {jm.returncode})")
    if args.grep:
        print(f"ratio: jobmon is {grep_wall / jm_wall:.1f}x the speed of grep")
    print(f"peak RSS: jobmon {jm_rss:.1f} MiB (goal < 64 MiB)")
    if rg:
        print(f"ratio: jobmon is {rg_wall / jm_wall:.2f}x the speed of ripgrep (goal 1x)")
    if args.baseline:
        print(f"baseline jobmon    : {base_wall:7.2f} s  {mib / base_wall:7.1f} MiB/s  peak RSS {base_rss:6.1f} MiB")
        print(f"ratio: this jobmon takes {jm_wall / base_wall:.2f}x the baseline's time")
    return 0


if __name__ == "__main__":
    sys.exit(main())
