#!/usr/bin/env python3
"""Benchmark: `jobmon diagnose --health` on a cluster-sized TSDB.

Generates a cluster-sized job's TSDB (default 64 nodes x 8 GPUs x
24 h at 15 s) as OpenMetrics text with the exporter's metric names, turns it
into TSDB blocks with Debian's `promtool tsdb create-blocks-from openmetrics`
(one input file per 2 h, so promtool never holds more than one window), then
runs, in this one process,

  jobmon diagnose <tsdb-dir> --health --json

which starts a read-only Prometheus over the blocks, runs the health sweep
and stops it. It prints the wall time (Prometheus start included) and the
peak RSS (os.wait4's rusage of jobmon: the largest of jobmon and the
Prometheus it started and reaped). One fault is planted (an uncorrectable
ECC count rising on one GPU of one node, RDMA retransmits on one port) and
the bench says whether the sweep named it. Nothing is asserted: the figures
are the result. The generated TSDB is kept under --dir and reused when its
parameters match (generation takes minutes; use --regenerate to redo it).
"""

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import time

GPU_GAUGES = [
    # name, base, amplitude
    ("hw_gpu_power_watts", 650.0, 40.0),
    ("hw_gpu_temperature_celsius", 72.0, 3.0),
    ("hw_gpu_utilization_percent", 96.0, 3.0),
    ("hw_gpu_vram_used_bytes", 150e9, 1e9),
    ("hw_gpu_vram_total_bytes", 192e9, 0.0),
]
GPU_COUNTERS = ["hw_gpu_ras_umc_ue_total", "hw_gpu_ras_umc_ce_total",
                "hw_gpu_pcie_correctable_total", "hw_gpu_pcie_fatal_total"]
HOST_GAUGES = [
    ("hw_procs_running", 40.0, 4.0),
    ("hw_procs_blocked", 1.0, 1.0),
    ("hw_io_pressure_some_pct", 2.0, 2.0),
    ("hw_io_pressure_full_pct", 0.5, 0.5),
    ("hw_mem_available_bytes", 1.2e12, 5e10),
    ("hw_mem_dirty_bytes", 2e8, 1e8),
    ("hw_mem_writeback_bytes", 1e7, 5e6),
    ("hw_scrape_duration_seconds", 0.12, 0.03),
]
HOST_COUNTERS = [("hw_tcp_retransmits_total", 2.0), ("hw_tcp_abort_on_timeout_total", 0.0),
                 ("hw_context_switches_total", 4e5), ("hw_oom_kills_total", 0.0),
                 ("hw_dmesg_gpu_errors_total", 0.0)]
RDMA_COUNTERS = [("hw_rdma_tx_retx_pkts_total", 0.0), ("hw_rdma_tx_ack_timeout_total", 0.0),
                 ("hw_rdma_rx_cnp_pkts_total", 0.0), ("hw_rdma_req_tx_retry_excd_err_total", 0.0),
                 ("hw_rdma_tx_pkts_total", 2e6)]
COLLECTORS = ["gpu_amd", "host", "net", "rdma", "dmesg", "training"]
NICS = 8

FAULT_HOST = 37
FAULT_GPU = 5
FAULT_NIC = 3


def wobble(i, t, amplitude):
    """Deterministic noise: cheap, varied per series and time."""
    return amplitude * math.sin(0.013 * t + 1.7 * i) * math.cos(0.0007 * t + 0.3 * i)


def host_name(h):
    return f"gpu-node-{h:03d}"


def write_window(path, start, end, args, t0):
    """One OpenMetrics file for [start, end): every family, every series."""
    times = [t for t in range(start, end, args.interval)]
    fault_from = t0 + args.hours * 3600 * 0.6  # the fault starts 60% in
    with open(path, "w", buffering=1 << 22) as out:
        w = out.write
        for name, base, amplitude in GPU_GAUGES:
            w(f"# TYPE {name} gauge\n")
            for h in range(args.nodes):
                for g in range(args.gpus):
                    i = h * args.gpus + g
                    labels = f'{name}{{host="{host_name(h)}",gpu="{g}"}}'
                    w("".join(f"{labels} {base + wobble(i, t, amplitude):.6g} {t}\n"
                              for t in times))
        for name in GPU_COUNTERS:
            w(f"# TYPE {name} gauge\n")
            for h in range(args.nodes):
                for g in range(args.gpus):
                    labels = f'{name}{{host="{host_name(h)}",gpu="{g}"}}'
                    # Counters from boot: a constant offset, never read as is.
                    base = 3 if name.endswith("ce_total") else 0
                    faulty = (name == "hw_gpu_ras_umc_ue_total" and h == FAULT_HOST
                              and g == FAULT_GPU)
                    w("".join(
                        f"{labels} {base + (int((t - fault_from) // 600) + 1 if faulty and t >= fault_from else 0)} {t}\n"
                        for t in times))
        for name, base, amplitude in HOST_GAUGES:
            w(f"# TYPE {name} gauge\n")
            for h in range(args.nodes):
                labels = f'{name}{{host="{host_name(h)}"}}'
                w("".join(f"{labels} {max(0.0, base + wobble(h, t, amplitude)):.6g} {t}\n"
                          for t in times))
        for name, per_second in HOST_COUNTERS:
            w(f"# TYPE {name} gauge\n")
            for h in range(args.nodes):
                labels = f'{name}{{host="{host_name(h)}"}}'
                w("".join(f"{labels} {1000 + per_second * (t - t0):.10g} {t}\n" for t in times))
        for name, per_second in RDMA_COUNTERS:
            w(f"# TYPE {name} gauge\n")
            for h in range(args.nodes):
                for n in range(NICS):
                    labels = f'{name}{{host="{host_name(h)}",device="mlx5_{n}",port="1"}}'
                    extra = 50.0 if (name == "hw_rdma_tx_retx_pkts_total" and h == FAULT_HOST
                                     and n == FAULT_NIC) else 0.0
                    w("".join(
                        f"{labels} {9e7 + per_second * (t - t0) + extra * max(0, t - fault_from):.10g} {t}\n"
                        for t in times))
        w("# TYPE hw_rdma_port_state gauge\n")
        for h in range(args.nodes):
            for n in range(NICS):
                labels = f'hw_rdma_port_state{{host="{host_name(h)}",device="mlx5_{n}",port="1"}}'
                w("".join(f"{labels} 1 {t}\n" for t in times))
        w("# TYPE hw_collector_success gauge\n")
        for h in range(args.nodes):
            for c in COLLECTORS:
                labels = f'hw_collector_success{{host="{host_name(h)}",collector="{c}"}}'
                w("".join(f"{labels} 1 {t}\n" for t in times))
        w("# TYPE up gauge\n")
        for h in range(args.nodes):
            labels = f'up{{host="{host_name(h)}",job="jobmon",instance="10.0.{h // 250}.{h % 250 + 1}:9400"}}'
            w("".join(f"{labels} 1 {t}\n" for t in times))
        step_seconds = 4.0
        w("# TYPE tb_step gauge\n")
        labels = f'tb_step{{host="{host_name(0)}"}}'
        w("".join(f"{labels} {int((t - t0) // step_seconds)} {t}\n" for t in times))
        w("# TYPE tb_perf_step_time_seconds gauge\n")
        labels = f'tb_perf_step_time_seconds{{host="{host_name(0)}"}}'
        w("".join(f"{labels} {step_seconds + wobble(0, t, 0.05):.6g} {t}\n" for t in times))
        w("# TYPE tb_learning_loss gauge\n")
        labels = f'tb_learning_loss{{host="{host_name(0)}"}}'
        w("".join(f"{labels} {2.0 + 8.0 / (1 + (t - t0) / 3600):.6g} {t}\n" for t in times))
        w("# EOF\n")


def generate(args, tsdb):
    """OpenMetrics per 2 h window -> promtool -> blocks in `tsdb`."""
    promtool = shutil.which("promtool")
    if not promtool:
        sys.exit("promtool not found (Debian package prometheus)")
    os.makedirs(tsdb)
    # A fixed, 2 h-aligned start, so windows match Prometheus's block ranges.
    t0 = 1_700_006_400
    window = 7200
    total = args.hours * 3600
    started = time.monotonic()
    for k, start in enumerate(range(t0, t0 + total, window)):
        end = min(start + window, t0 + total)
        om = os.path.join(args.dir, "window.om")
        write_window(om, start, end, args, t0)
        size = os.path.getsize(om)
        subprocess.run([promtool, "tsdb", "create-blocks-from", "openmetrics", om, tsdb],
                       check=True, stdout=subprocess.DEVNULL)
        os.remove(om)
        print(f"generated window {k + 1}/{math.ceil(total / window)} "
              f"({size / 2**20:.0f} MiB of OpenMetrics) "
              f"{time.monotonic() - started:.0f} s", file=sys.stderr, flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobmon", required=True)
    parser.add_argument("--dir", default="/var/tmp/jobmon-diagnose-bench")
    parser.add_argument("--nodes", type=int, default=64)
    parser.add_argument("--gpus", type=int, default=8)
    parser.add_argument("--hours", type=int, default=24)
    parser.add_argument("--interval", type=int, default=15)
    parser.add_argument("--regenerate", action="store_true")
    args = parser.parse_args()
    global FAULT_HOST, FAULT_GPU  # small runs plant the fault on their last host and GPU
    FAULT_HOST, FAULT_GPU = min(FAULT_HOST, args.nodes - 1), min(FAULT_GPU, args.gpus - 1)

    os.makedirs(args.dir, exist_ok=True)
    key = f"{args.nodes}n-{args.gpus}g-{args.hours}h-{args.interval}s"
    tsdb = os.path.join(args.dir, f"tsdb-{key}")
    if args.regenerate and os.path.isdir(tsdb):
        shutil.rmtree(tsdb)
    if not os.path.isdir(tsdb):
        generate(args, tsdb)
    du = sum(os.path.getsize(os.path.join(root, f))
             for root, _, files in os.walk(tsdb) for f in files)
    samples_per_series = args.hours * 3600 // args.interval
    series = (args.nodes * args.gpus * (len(GPU_GAUGES) + len(GPU_COUNTERS))
              + args.nodes * (len(HOST_GAUGES) + len(HOST_COUNTERS) + len(COLLECTORS) + 1)
              + args.nodes * NICS * (len(RDMA_COUNTERS) + 1) + 3)
    print(f"TSDB: {key}, {series} series, {series * samples_per_series / 1e6:.1f} M samples, "
          f"{du / 2**20:.0f} MiB on disk")

    started = time.monotonic()
    out_path = os.path.join(args.dir, "diagnosis.json")
    with open(out_path, "wb") as out_file:
        # Progress lines go to our stderr; wait4 (not Popen.wait) keeps the rusage.
        child = subprocess.Popen([args.jobmon, "diagnose", tsdb, "--health", "--json"],
                                 stdout=out_file)
        _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    wall = time.monotonic() - started
    print(f"jobmon diagnose --health: {wall:.1f} s wall (read-only Prometheus start included), "
          f"peak RSS {usage.ru_maxrss / 1024:.0f} MiB (largest of jobmon and its Prometheus), "
          f"exit {child.returncode}; goal < 60 s")
    with open(out_path) as f:
        out = f.read()
    if child.returncode != 0:
        print(out[-3000:])
        return
    report = json.loads(out)
    named = []
    for playbook in report.get("playbooks", []):
        for finding in playbook.get("anomalies", []):
            if finding.get("host") == host_name(FAULT_HOST):
                named.append(f"{playbook.get('playbook')}: {finding.get('code')} "
                             f"gpu={finding.get('gpu', '')} device={finding.get('device', '')}")
    print("planted faults named:" if named else "planted faults NOT named",
          *sorted(set(named)), sep="\n  ")


if __name__ == "__main__":
    main()
