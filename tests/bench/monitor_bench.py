#!/usr/bin/python3
"""slurm_job_monitor at scale: one daemon following 10,000 jobs.

A generator appends MaxText step lines to 10,000 logs at a realistic rate
(one step per job every --step-seconds, jobs staggered); Slurm's answer is
replayed from `squeue --json` output recorded on the dev cluster
(tests/fixtures/slurm), multiplied to 10,000 jobs, by a stand-in squeue.
Some jobs hang: half go silent, half keep printing noise lines (the case
the log-mtime rule of the reference never catches).

Printed, not asserted: CPU seconds per poll cycle and peak RSS of the
daemon, and detection latency of the hangs against the mtime rule
(alert when the log has not changed for 1800 s), as a ratio.
"""

import argparse
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

MTIME_RULE_SECONDS = 1800


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks  # utime + stime


def memory_kib(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def metric(port, name):
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    m = re.search(rf"^{name} ([0-9.e+]+)$", text, re.M)
    return float(m.group(1)) if m else 0.0


def step_line(step, seconds):
    return (f"0: completed step: {step}, seconds: {seconds:.3f}, TFLOP/s/device: 450.000, "
            f"MFU: 34.42%, Tokens/s/device: 1638.400, loss: {2 + 8 / (1 + step):.3f}\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--monitor", required=True, help="slurm_job_monitor binary")
    ap.add_argument("--fixtures", required=True, help="tests/fixtures")
    ap.add_argument("--jobs", type=int, default=10000)
    ap.add_argument("--step-seconds", type=float, default=10.0)
    ap.add_argument("--poll-interval", type=float, default=10.0)
    ap.add_argument("--hang-jobs", type=int, default=20, help="half silent, half with noise lines")
    ap.add_argument("--history-steps", type=int, default=30, help="steps already in each log")
    ap.add_argument("--hang-after", type=float, default=30.0, help="seconds into the run")
    ap.add_argument("--min-stall", type=float, default=60.0)
    ap.add_argument("--timeout", type=float, default=400.0)
    args = ap.parse_args()

    work = tempfile.mkdtemp(prefix="jobmon-monitor-bench-")
    daemon = None
    try:
        logs = os.path.join(work, "logs")
        os.mkdir(logs)
        with open(os.path.join(args.fixtures, "slurm", "squeue-json.json")) as f:
            recorded = json.load(f)
        template = recorded["jobs"][0]
        # One recorded job per job, with its id, name and log swapped in.
        jobs = []
        paths = []
        for i in range(args.jobs):
            job_id = 100000 + i
            path = os.path.join(logs, f"run-{job_id}.out")
            paths.append(path)
            job = dict(template)
            job.update(job_id=job_id, name=f"train-{i}", standard_output=path,
                       standard_error=path)
            jobs.append(job)
            with open(path, "w") as f:
                f.write("0: Config param steps: 100000\n")
                for s in range(args.history_steps):
                    f.write(step_line(s, args.step_seconds))
        answer = os.path.join(work, "squeue-answer.json")
        with open(answer, "w") as f:
            json.dump(dict(recorded, jobs=jobs), f)
        squeue = os.path.join(work, "squeue")
        with open(squeue, "w") as f:
            f.write(f"#!/bin/sh\nexec cat '{answer}'\n")
        os.chmod(squeue, 0o755)
        port = free_port()
        config = os.path.join(work, "jobmon.toml")
        alerts = os.path.join(work, "alerts.jsonl")
        with open(config, "w") as f:
            f.write(f"""[monitor]
state_db = "{work}/state.db"
poll_interval = "{args.poll_interval}s"
slurm_poll_interval = "30s"
squeue = "{squeue}"
metrics_listen = "127.0.0.1:{port}"
notify_file = "{alerts}"
[monitor.select]
partitions = ["debug"]
[monitor.stall]
k = 5
min_stall = "{args.min_stall}s"
""")
        print(f"# {args.jobs} logs with {args.history_steps} steps each; one step per job every "
              f"{args.step_seconds:g}s from now on; poll every {args.poll_interval:g}s", flush=True)
        log = open(os.path.join(work, "monitor.log"), "w")
        daemon = subprocess.Popen([args.monitor, "--config", config], stdout=log, stderr=log)
        start = time.time()

        hang = set(range(0, args.jobs, max(1, args.jobs // args.hang_jobs)))
        hang = set(sorted(hang)[: args.hang_jobs])
        noisy = set(sorted(hang)[::2])  # every other hung job keeps its log's mtime fresh
        next_step = {i: start + (i % int(args.step_seconds * 10)) / 10.0 for i in range(args.jobs)}
        step_no = {i: args.history_steps for i in range(args.jobs)}
        last_step_write = {}
        next_noise = {i: 0.0 for i in noisy}
        detected = {}
        cpu_start = cycles_start = None
        measure_from = start + 2.5 * args.poll_interval  # after the first catch-up cycles
        last_report = start
        while time.time() - start < args.timeout:
            now = time.time()
            for i in range(args.jobs):
                if i in hang and now - start > args.hang_after:
                    if i in noisy and now >= next_noise[i]:
                        with open(paths[i], "a") as f:
                            f.write("0: W1122 12:00:00.000000 77 topology.cc:212] Cannot read CPU core 57\n")
                        next_noise[i] = now + 5
                    continue
                if now >= next_step[i]:
                    with open(paths[i], "a") as f:
                        f.write(step_line(step_no[i], args.step_seconds))
                    step_no[i] += 1
                    last_step_write[i] = now
                    next_step[i] += args.step_seconds
            if cpu_start is None and now >= measure_from:
                cpu_start = (now, cpu_seconds(daemon.pid), metric(port, "jobmon_monitor_polls_total"))
            if os.path.exists(alerts):
                with open(alerts) as f:
                    for line in f:
                        a = json.loads(line)
                        i = a["job_id"] - 100000
                        if a["status"] == "firing" and i not in detected:
                            detected[i] = (a["at"], a["class"])
            if hang and all(i in detected for i in hang) and cpu_start and now - cpu_start[0] > 3 * args.poll_interval:
                break
            if now - last_report > 30:
                print(f"# {now - start:.0f}s: {len([i for i in hang if i in detected])}/{len(hang)} hangs "
                      f"detected, RSS {memory_kib(daemon.pid, 'VmRSS') / 1024:.0f} MiB", flush=True)
                last_report = now
            time.sleep(0.05)
        end = time.time()
        cpu_end = cpu_seconds(daemon.pid)
        cycles_end = metric(port, "jobmon_monitor_polls_total")
        poll_sum = metric(port, "jobmon_monitor_poll_duration_seconds_sum")
        poll_count = metric(port, "jobmon_monitor_poll_duration_seconds_count")
        tracked = metric(port, "jobmon_monitor_jobs_tracked")
        peak = memory_kib(daemon.pid, "VmHWM") / 1024

        cycles = cycles_end - cpu_start[2] if cpu_start else 0
        cpu_per_cycle = (cpu_end - cpu_start[1]) / cycles if cycles else float("nan")
        print(f"jobs tracked: {tracked:.0f}")
        print(f"CPU per poll cycle: {cpu_per_cycle:.3f} s (over {cycles:.0f} cycles; goal < 1 s)")
        print(f"wall time per cycle (daemon's own histogram): {poll_sum / max(poll_count, 1):.3f} s")
        print(f"peak RSS: {peak:.0f} MiB (goal < 300 MB)")
        false_alarms = [i for i in detected if i not in hang]
        print(f"incidents on healthy jobs: {len(false_alarms)}")
        for kind, members in (("silent", sorted(hang - noisy)), ("noisy", sorted(noisy))):
            latencies = [detected[i][0] - last_step_write[i] for i in members if i in detected]
            missed = [i for i in members if i not in detected]
            if not latencies:
                print(f"{kind} hangs: none detected ({len(missed)} missed)")
                continue
            med = statistics.median(latencies)
            if kind == "silent":
                rule = f"mtime rule {MTIME_RULE_SECONDS}s: {MTIME_RULE_SECONDS / med:.1f}x sooner"
            else:
                rule = "mtime rule: never (the noise keeps the log's mtime fresh)"
            print(f"{kind} hangs: {len(latencies)}/{len(members)} detected, latency after the last "
                  f"step median {med:.1f}s max {max(latencies):.1f}s; {rule}")
        print(f"# classes: {sorted(set(c for _, c in detected.values()))}; run took {end - start:.0f}s")
    finally:
        if daemon and daemon.poll() is None:
            daemon.send_signal(signal.SIGTERM)
            try:
                daemon.wait(10)
            except subprocess.TimeoutExpired:
                daemon.kill()
                daemon.wait()
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
