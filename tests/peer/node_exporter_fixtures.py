#!/usr/bin/python3
"""jobmon-exporter on prometheus/node_exporter's fixture trees, against its
golden output.

node_exporter's end-to-end test runs its collectors on collector/fixtures/
(proc/ as files, sys/ packed in sys.ttar) and keeps the expected scrape in
collector/fixtures/e2e-output.txt. This script fetches that tree (never
copied into this repository: `git clone --depth 1`, or --node-exporter DIR
for a checkout you have), unpacks sys.ttar, runs jobmon-exporter with
--procfs/--sysfs on it and compares every value the two export under a
known mapping (MAPPING below). Exit 0 when every shared value matches and
at least --min-shared were compared; 1 otherwise, listing the mismatches.

Not part of the unit run (ctest label `manual`): it needs GitHub, which the
test machines cannot reach. Run it by hand:

  tests/peer/node_exporter_fixtures.py --exporter build/h/exporter/jobmon-exporter
  tests/peer/node_exporter_fixtures.py --exporter ... --node-exporter ~/src/node_exporter
"""
import argparse
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

REPO = "https://github.com/prometheus/node_exporter"

# jobmon name -> node_exporter name, for series whose meaning is the same.
# Labels other than `host` must match as they are (device, port).
MAPPING = {
    "hw_procs_running": "node_procs_running",
    "hw_procs_blocked": "node_procs_blocked",
    "hw_context_switches_total": "node_context_switches_total",
    "hw_oom_kills_total": "node_vmstat_oom_kill",
    "hw_mem_dirty_bytes": "node_memory_Dirty_bytes",
    "hw_mem_writeback_bytes": "node_memory_Writeback_bytes",
    "hw_mem_available_bytes": "node_memory_MemAvailable_bytes",
    "hw_io_pressure_some_stall_seconds_total": "node_pressure_io_waiting_seconds_total",
    "hw_io_pressure_full_stall_seconds_total": "node_pressure_io_stalled_seconds_total",
    "hw_tcp_retransmits_total": "node_netstat_Tcp_RetransSegs",
    "hw_tcp_listen_overflows_total": "node_netstat_TcpExt_ListenOverflows",
    "hw_tcp_listen_drops_total": "node_netstat_TcpExt_ListenDrops",
    "hw_net_rx_bytes_total": "node_network_receive_bytes_total",
    "hw_net_tx_bytes_total": "node_network_transmit_bytes_total",
    "hw_net_rx_errors_total": "node_network_receive_errs_total",
    "hw_net_tx_errors_total": "node_network_transmit_errs_total",
    "hw_net_rx_drop_total": "node_network_receive_drop_total",
    "hw_net_tx_drop_total": "node_network_transmit_drop_total",
    "hw_rdma_rx_bytes_total": "node_infiniband_port_data_received_bytes_total",
    "hw_rdma_tx_bytes_total": "node_infiniband_port_data_transmitted_bytes_total",
    "hw_rdma_rx_pkts_total": "node_infiniband_port_packets_received_total",
    "hw_rdma_tx_pkts_total": "node_infiniband_port_packets_transmitted_total",
    "hw_rdma_port_rcv_errors_total": "node_infiniband_port_errors_received_total",
    "hw_rdma_symbol_errors_total": "node_infiniband_symbol_error_total",
    "hw_rdma_link_downed_total": "node_infiniband_link_downed_total",
    # state_id is the number of "4: ACTIVE"; ours is 1 for 4 only.
    "hw_rdma_port_state": ("node_infiniband_state_id", lambda v: 1.0 if v == 4 else 0.0),
}

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def parse(text):
    """Exposition text -> {(name, frozenset(labels without host)): value}."""
    out = {}
    for line in text.splitlines():
        m = SAMPLE.match(line)
        if not m or line.startswith("#"):
            continue
        labels = frozenset((k, v) for k, v in LABEL.findall(m.group(2) or "") if k != "host")
        out[(m.group(1), labels)] = float(m.group(3))
    return out


def untar(ttar_path, dest):
    """Unpacks a ttar archive (node_exporter's ttar script: Directory:,
    Path: + Lines: N + N lines, SymlinkTo:, Mode:)."""
    with open(ttar_path, encoding="utf-8", errors="surrogateescape") as f:
        lines = f.read().split("\n")
    i, path = 0, None
    while i < len(lines):
        line = lines[i]
        i += 1
        if line.startswith("Directory: "):
            os.makedirs(os.path.join(dest, line[len("Directory: "):]), exist_ok=True)
        elif line.startswith("Path: "):
            path = os.path.join(dest, line[len("Path: "):])
        elif line.startswith("Lines: "):
            fields = line.split()
            n = int(fields[1])
            body = lines[i:i + n]
            i += n
            text = "\n".join(body) + ("" if "NOBREAK" in fields or n == 0 else "\n")
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8", errors="surrogateescape") as out:
                out.write(text)
        elif line.startswith("SymlinkTo: "):
            os.makedirs(os.path.dirname(path), exist_ok=True)
            if not os.path.lexists(path):
                os.symlink(line[len("SymlinkTo: "):], path)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def scrape(exporter, procfs, sysfs):
    port = free_port()
    proc = subprocess.Popen(
        [exporter, "--listen", f"127.0.0.1:{port}", "--host", "peer", "--procfs", procfs,
         "--sysfs", sysfs, "--collectors", "host,net,tcp,rdma", "--interval", "0"],
        stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(100):
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
                    return r.read().decode()
            except OSError:
                time.sleep(0.1)
        raise SystemExit("jobmon-exporter did not serve /metrics")
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=10)
        if err.strip():
            print("jobmon-exporter said:\n" + err.strip())


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--exporter", required=True)
    ap.add_argument("--node-exporter", help="a node_exporter checkout (default: clone it)")
    ap.add_argument("--min-shared", type=int, default=20)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="jobmon-peer-") as tmp:
        repo = args.node_exporter
        if not repo:
            repo = os.path.join(tmp, "node_exporter")
            subprocess.run(["git", "clone", "--quiet", "--depth", "1", REPO, repo], check=True)
        fixtures = os.path.join(repo, "collector", "fixtures")
        untar(os.path.join(fixtures, "sys.ttar"), tmp)
        with open(os.path.join(fixtures, "e2e-output.txt")) as f:
            golden = parse(f.read())
        ours = parse(scrape(args.exporter, os.path.join(fixtures, "proc"),
                            os.path.join(tmp, "sys")))
    compared, bad = 0, []
    for (name, labels), value in sorted(ours.items(), key=lambda kv: (kv[0][0], sorted(kv[0][1]))):
        if name not in MAPPING:
            continue
        peer, convert = MAPPING[name] if isinstance(MAPPING[name], tuple) else (MAPPING[name], None)
        if (peer, labels) not in golden:
            continue
        expected = golden[(peer, labels)]
        if convert:
            expected = convert(expected)
        compared += 1
        shown = ",".join(f"{k}={v}" for k, v in sorted(labels))
        ok = abs(value - expected) <= 1e-9 * max(1.0, abs(expected))
        print(f"{'ok  ' if ok else 'DIFF'} {name}{{{shown}}} {value:g}  {peer} {expected:g}")
        if not ok:
            bad.append(name)
    print(f"{compared} shared values compared, {len(bad)} differ")
    if bad or compared < args.min_shared:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
