#!/usr/bin/python3
"""Benchmark: jobmon-exporter against Debian's prometheus-node-exporter.

Both read the same fixture procfs/sysfs tree (the test fixtures, completed
with the files node_exporter's collectors also read: pressure/cpu and
memory, net/snmp6, board_id/fw_ver/hca_type, the ports' phys_state/rate/
link_layer and a counters/ directory where a port has only hw_counters/), with equivalent
collectors:

  node_exporter: stat vmstat meminfo pressure netdev(/proc/net/dev) netstat infiniband
  jobmon:        host net tcp rdma

In one run, for each: --warmup scrapes, then --scrapes sequential scrapes
over loopback; CPU time per scrape from /proc/<pid>/stat (utime+stime of
the exporter alone), peak RSS (VmHWM), scrape latency p50/p99. Then
jobmon-exporter again with one collector stuck (a FIFO nobody writes in
place of an RDMA counter file): latency p50/p99 with and without.

Nothing is asserted: the figures and their ratios are the result. Every
node_exporter collector is checked to have succeeded, so the comparison is
not against a collector that gave up early.
"""
import argparse
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

TICKS = os.sysconf("SC_CLK_TCK")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_seconds(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime


def peak_rss_kib(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def build_tree(fixtures, root):
    procfs = os.path.join(root, "proc")
    sysfs = os.path.join(root, "sys")
    shutil.copytree(os.path.join(fixtures, "procfs/basic"), procfs)
    shutil.copytree(os.path.join(fixtures, "sysfs/rdma"), sysfs)
    # Documented formats (Documentation/accounting/psi.rst, /proc/net/snmp6).
    with open(os.path.join(procfs, "pressure/cpu"), "w") as f:
        f.write("some avg10=2.04 avg60=1.80 avg300=1.51 total=91234567\n"
                "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n")
    with open(os.path.join(procfs, "pressure/memory"), "w") as f:
        f.write("some avg10=0.00 avg60=0.00 avg300=0.00 total=1234\n"
                "full avg10=0.00 avg60=0.00 avg300=0.00 total=1000\n")
    with open(os.path.join(procfs, "net/snmp6"), "w") as f:
        for name, value in [("Ip6InReceives", 91234), ("Ip6OutRequests", 88123), ("Icmp6InMsgs", 12),
                            ("Udp6InDatagrams", 301), ("Udp6OutDatagrams", 299), ("UdpLite6InDatagrams", 0)]:
            f.write(f"{name:<32}{value}\n")
    ib = os.path.join(sysfs, "class/infiniband")
    for device in os.listdir(ib):
        for name, value in [("board_id", "MT_0000000223"), ("fw_ver", "28.39.1002"), ("hca_type", "MT4129")]:
            with open(os.path.join(ib, device, name), "w") as f:
                f.write(value + "\n")
        ports = os.path.join(ib, device, "ports")
        for port in os.listdir(ports):
            for name, value in [("phys_state", "5: LinkUp"), ("rate", "200 Gb/sec (4X HDR)"),
                                ("link_layer", "Ethernet")]:
                path = os.path.join(ports, port, name)
                if not os.path.exists(path):
                    with open(path, "w") as f:
                        f.write(value + "\n")
            # node_exporter gives up on the whole class when a port lacks the
            # standard counters/ directory.
            counters = os.path.join(ports, port, "counters")
            if not os.path.isdir(counters):
                os.makedirs(counters)
                for name in ("port_rcv_data", "port_xmit_data", "port_rcv_packets", "port_xmit_packets"):
                    with open(os.path.join(counters, name), "w") as f:
                        f.write("1000\n")
    return procfs, sysfs


def wait_ready(url, proc):
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"exporter exited early: {proc.args}")
        try:
            start = time.perf_counter()
            body = urllib.request.urlopen(url, timeout=5).read().decode()
            return body, (time.perf_counter() - start) * 1000
        except OSError:
            time.sleep(0.1)
    raise SystemExit(f"exporter not ready: {proc.args}")


def run(name, argv, url, warmup, scrapes):
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        body, first_ms = wait_ready(url, proc)
        for _ in range(warmup):
            urllib.request.urlopen(url, timeout=30).read()
        before = cpu_seconds(proc.pid)
        latencies = []
        for i in range(scrapes):
            start = time.perf_counter()
            body = urllib.request.urlopen(url, timeout=30).read().decode()
            latencies.append(time.perf_counter() - start)
            if (i + 1) % max(1, scrapes // 4) == 0:
                print(f"  {name}: {i + 1}/{scrapes} scrapes", file=sys.stderr)
        cpu = cpu_seconds(proc.pid) - before
        rss = peak_rss_kib(proc.pid)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    latencies.sort()
    return {
        "cpu_ms_per_scrape": cpu * 1000 / scrapes,
        "rss_mib": rss / 1024,
        "p50_ms": statistics.median(latencies) * 1000,
        "p99_ms": latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))] * 1000,
        "first_ms": first_ms,
        "max_ms": latencies[-1] * 1000,
        "series": sum(1 for line in body.splitlines() if line and not line.startswith("#")),
        "body": body,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--exporter", required=True, help="jobmon-exporter binary")
    parser.add_argument("--node-exporter", default="/usr/bin/prometheus-node-exporter")
    parser.add_argument("--fixtures", required=True, help="tests/fixtures")
    parser.add_argument("--scrapes", type=int, default=500)
    parser.add_argument("--warmup", type=int, default=20)
    args = parser.parse_args()
    if not os.path.exists(args.node_exporter):
        raise SystemExit(f"{args.node_exporter} not found (apt-get install prometheus-node-exporter)")

    with tempfile.TemporaryDirectory(prefix="jobmon-bench-") as root:
        procfs, sysfs = build_tree(args.fixtures, root)
        results = {}
        port = free_port()
        url = f"http://127.0.0.1:{port}/metrics"
        print("node_exporter ...", file=sys.stderr)
        results["node_exporter"] = run("node_exporter", [
            args.node_exporter, f"--web.listen-address=127.0.0.1:{port}", f"--path.procfs={procfs}",
            f"--path.sysfs={sysfs}", "--collector.disable-defaults", "--collector.stat", "--collector.vmstat",
            "--collector.meminfo", "--collector.pressure", "--collector.netdev", "--no-collector.netdev.netlink",
            "--collector.netstat", "--collector.infiniband"], url, args.warmup, args.scrapes)
        failed = [line for line in results["node_exporter"]["body"].splitlines()
                  if line.startswith("node_scrape_collector_success") and line.endswith(" 0")]
        if failed:
            raise SystemExit(f"node_exporter collectors failed on the tree: {failed}")

        jobmon_argv = lambda port, sysfs: [
            args.exporter, "--listen", f"127.0.0.1:{port}", "--host", "bench", "--procfs", procfs,
            "--sysfs", sysfs, "--collectors", "host,net,tcp,rdma", "--interval", "0"]
        port = free_port()
        print("jobmon-exporter ...", file=sys.stderr)
        results["jobmon"] = run("jobmon-exporter", jobmon_argv(port, sysfs),
                                f"http://127.0.0.1:{port}/metrics", args.warmup, args.scrapes)

        stuck_sysfs = os.path.join(root, "sys-stuck")
        shutil.copytree(sysfs, stuck_sysfs)
        stuck_file = os.path.join(stuck_sysfs, "class/infiniband/mlx5_0/ports/1/counters/port_rcv_data")
        os.remove(stuck_file)
        os.mkfifo(stuck_file)
        port = free_port()
        print("jobmon-exporter with the rdma collector stuck ...", file=sys.stderr)
        results["jobmon_stuck"] = run("jobmon-exporter (stuck)", jobmon_argv(port, stuck_sysfs),
                                      f"http://127.0.0.1:{port}/metrics", args.warmup, args.scrapes)
        stuck_ok = 'hw_collector_success{collector="rdma",host="bench"} 0' in results["jobmon_stuck"]["body"]
        # Release the abandoned readers (they are in the exporter, now gone).
        try:
            os.close(os.open(stuck_file, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:
            pass

    n, j, s = results["node_exporter"], results["jobmon"], results["jobmon_stuck"]
    print(f"\n{args.scrapes} scrapes each (after {args.warmup} warm-up), same fixture tree, same machine\n")
    print(f"{'':26}{'CPU ms/scrape':>14}{'peak RSS MiB':>14}{'p50 ms':>9}{'p99 ms':>9}{'series':>8}")
    for label, r in [("node_exporter 1.5.0", n), ("jobmon-exporter", j), ("jobmon-exporter, 1 stuck", s)]:
        print(f"{label:26}{r['cpu_ms_per_scrape']:>14.3f}{r['rss_mib']:>14.1f}{r['p50_ms']:>9.2f}"
              f"{r['p99_ms']:>9.2f}{r['series']:>8}")
    print()
    print(f"CPU per scrape, jobmon / node_exporter:  {j['cpu_ms_per_scrape'] / n['cpu_ms_per_scrape']:.2f}x (goal <= 0.5x)")
    print(f"peak RSS, jobmon / node_exporter:        {j['rss_mib'] / n['rss_mib']:.2f}x (goal <= 0.5x)")
    print(f"p99 latency, stuck / not stuck:          {s['p99_ms'] / j['p99_ms']:.2f}x (goal <= 2x; "
          f"the stuck collector reported as failed: {'yes' if stuck_ok else 'NO'})")
    print(f"p50 latency, stuck / not stuck:          {s['p50_ms'] / j['p50_ms']:.2f}x")
    print(f"with the stuck collector: the first scrape waited {s['first_ms']:.0f} ms (the 2 s deadline); "
          f"later ones no longer wait for it (max {s['max_ms']:.1f} ms)")
    print("node_exporter's figures include its own go_*/process_* series, part of what it serves on every scrape")
    return 0


if __name__ == "__main__":
    sys.exit(main())
