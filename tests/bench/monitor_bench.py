#!/usr/bin/python3
"""slurm_job_monitor at scale: one daemon following 10,000 jobs, in both
evidence modes ([monitor] evidence = "scrape" and "store"), side by side.

A generator appends MaxText step lines to 10,000 logs at a realistic rate
(one step per job every --step-seconds, jobs staggered); Slurm's answer is
replayed from `squeue --json` output recorded on the dev cluster
(tests/fixtures/slurm), multiplied to 10,000 jobs, by a stand-in squeue.
Some jobs hang: half go silent, half keep printing noise lines (the case
the log-mtime rule of the reference never catches).

Both modes: every job is a --diag job (a manifest in its diag dir, as the
plugin writes it) and the evidence of both carries the same families, labels
and values (host_series): the hung jobs' GPUs busy-wait (utilization 100%,
power at idle), so the stall classification is exercised from the evidence.

scrape mode (root and iproute2; skipped with a message otherwise): the
monitor scrapes the exporters itself over HTTP. It scrapes only a literal
IP:port inside cluster_cidrs, at the NodeAddr Slurm has for one of the job's
nodes, never loopback or its own addresses, so the bench creates a network
namespace and a veth pair of its own (10.203.<x>.0/24, the host end .1, the
nodes .11, .12, ...), answers `sinfo --json` with the recorded output at
those addresses, and runs ONE fake-exporter process in the namespace
(bench_exporters.py) listening on one port per job on each node address;
each job's targets/<node>.json names its port. The exporters' bodies are
precomputed per --scrape-interval; their CPU is printed apart (the nodes'
stand-in, not the monitor). Namespace, veth and processes are removed on
every path (SIGTERM included).

store mode: the evidence lives in a real VictoriaMetrics (Debian's
/usr/bin/victoria-metrics on 127.0.0.1:<free port>, data in the temp dir),
fed by a generator process at the rate a job's Prometheus would remote_write
it: one sample per series per --scrape-interval, the families the monitor's
window reads only, with the labels the plugin's Prometheus gives (external
labels slurm_job_id, cluster, user; job and instance of the scrape; host,
gpu, ... of the exporter), through /api/v1/import/prometheus with
timestamps, batched. --store-history seconds of training are imported
before the monitor starts (the job ran before the monitor saw it).

The bench fails (exit 1) when a mode gathered no evidence (no scrape, no
store query) or the two modes class the hangs differently. Otherwise
printed, not asserted: CPU seconds per poll cycle twice, steady (the
--steady seconds after the --warmup, before any job hangs) and from then
through the hangs' incidents, wall seconds per poll cycle, peak RSS of the
daemon, detection latency of the hangs (and against the mtime rule:
alert when the log has not changed for 1800 s), incidents on healthy jobs,
exporter scrapes per cycle and the fake exporters' CPU (scrape), store
queries per cycle and VictoriaMetrics' CPU (store); then a side-by-side table, the store/scrape CPU
ratio (goal within 2x) and whether detection latency is unchanged. Figures
depend on the machine and on what else runs on it.
"""

import argparse
import json
import multiprocessing
import os
import re
import resource
import select
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
FIRST_JOB_ID = 100000
CLUSTER = "benchcluster"
VICTORIA_METRICS = "/usr/bin/victoria-metrics"
SKIPPED = 77  # ctest's SKIP_RETURN_CODE
EXPORTER_FIRST_PORT = 20000  # in the bench's own namespace: every port is free


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


def expand_nodes(nodes):
    """node[1-2] or node1,node2 -> [node1, node2] (the recorded job's forms)."""
    m = re.fullmatch(r"([^\[]*)\[(\d+)-(\d+)\]", nodes)
    if m:
        return [f"{m.group(1)}{i}" for i in range(int(m.group(2)), int(m.group(3)) + 1)]
    return nodes.split(",")


def stop(proc):
    if proc is None or proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


# --- the store's feed ---------------------------------------------------------

def host_series(gpus, training, variant):
    """One host's exporter families the monitor's window reads, as
    (name, the exporter's own labels, value): @C stands for a counter.
    Both modes carry exactly these; hung jobs' GPUs busy-wait (utilization
    100%, power at idle)."""
    power = (548, 561, 553, 540)[variant] if training else (85, 86, 84, 85)[variant]
    util = (97, 98, 96, 99)[variant] if training else 100
    memory = 40 if training else 1
    series = []
    for g in range(gpus):
        gpu = f'gpu="{g}"'
        series += [
            ("hw_gpu_utilization_percent", gpu, util),
            ("hw_gpu_power_watts", gpu, power + g),
            ("hw_gpu_clock_mhz", f'{gpu},type="sclk"', 1980),
            ("hw_gpu_clock_mhz", f'{gpu},type="mclk"', 2619),
            ("hw_gpu_clock_max_mhz", f'{gpu},type="sclk"', 1980),
            ("hw_gpu_clock_max_mhz", f'{gpu},type="mclk"', 2619),
            ("hw_gpu_power_capped", gpu, 0),
            ("hw_gpu_memory_utilization_percent", gpu, memory),
            ("hw_gpu_compute_processes", gpu, 1),
            ("hw_gpu_served", f'{gpu},source="all",vendor="nvidia"', 1),
        ]
    rdma = 'device="mlx5_0",port="1"'
    series += [
        ("hw_gpu_node_gpus", 'vendor="nvidia"', gpus),
        ("hw_gpu_node_shared", "", 0),
        ("hw_tcp_retransmits_total", "", "@C"),
        ("hw_rdma_tx_retx_pkts_total", rdma, 0),
        ("hw_rdma_tx_ack_timeout_total", rdma, 0),
        ("hw_rdma_port_state", rdma, 1),
        ("hw_io_pressure_some_pct", "", 0.5),
        ("hw_io_pressure_full_pct", "", 0.1),
        ("hw_procs_blocked", "", 0),
        ("hw_dmesg_gpu_errors_total", "", 0),
    ]
    return series


def render(series, common, suffix=""):
    return "".join(f"{name}{{{common}{',' + labels if labels else ''}}} {value}{suffix}\n"
                   for name, labels, value in series)


def host_template(gpus, training, variant):
    """One host's scrape as Prometheus remote_writes it, in the import format:
    @J job id, @H host, @I instance, @C a counter, @T the timestamp (ms).
    Prometheus adds up and the labels of the scrape and its external labels."""
    common = f'cluster="{CLUSTER}",slurm_job_id="@J",user="root",job="jobmon-exporter",instance="@I",host="@H"'
    return f"up{{{common}}} 1 @T\n" + render(host_series(gpus, training, variant), common, " @T")


def host_exposition(gpus, training, variant):
    """The same host as its exporter serves it on /metrics (@H host, @C a
    counter): the exporter's labels only, no timestamps."""
    return render(host_series(gpus, training, variant), 'host="@H"')


def series_per_host(gpus):
    return host_template(gpus, True, 0).count("\n")


class Feed:
    """What every job's Prometheus would send, scrape by scrape."""

    def __init__(self, args, hosts, hang, hang_at):
        self.args, self.hosts, self.hang, self.hang_at = args, hosts, hang, hang_at
        self.templates = {(training, v): host_template(args.gpus, training, v)
                          for training in (True, False) for v in range(4)}
        self.url = f"http://127.0.0.1:{args.store_port}/api/v1/import/prometheus"
        self.buffer = []
        self.buffered = 0

    def scrape(self, i, t):
        """Job i's scrape of all its hosts at time t (s)."""
        training = i not in self.hang or t <= self.hang_at.value
        tick = int(t // self.args.scrape_interval)
        ts = str(int(t * 1000))
        job = str(FIRST_JOB_ID + i)
        for h, host in enumerate(self.hosts):
            text = self.templates[(training, (tick + i + h) % 4)]
            text = (text.replace("@J", job).replace("@H", host).replace("@I", f"192.0.2.{h + 1}:9400")
                    .replace("@C", str(tick * 3)).replace("@T", ts))
            self.buffer.append(text)
            self.buffered += len(text)
        if self.buffered > 8 << 20:
            self.flush()

    def flush(self):
        if not self.buffer:
            return
        body = "".join(self.buffer).encode()
        self.buffer, self.buffered = [], 0
        request = urllib.request.Request(self.url, data=body, method="POST")
        urllib.request.urlopen(request, timeout=60).read()

    def offset(self, i):
        # Prometheus spreads its scrapes over the interval; one job's hosts together.
        return (i * 0.37) % self.args.scrape_interval


def feed_store(args, hosts, hang, hang_at, ready, done):
    """The generator process: history first, then one scrape per interval.
    The hung jobs' GPUs busy-wait from hang_at (set once the logs move)."""
    feed = Feed(args, hosts, hang, hang_at)
    start = time.time()
    interval = args.scrape_interval
    history_from = start - args.store_history
    next_at = []
    for i in range(args.jobs):
        t = history_from + feed.offset(i)
        while t < start:
            feed.scrape(i, t)
            t += interval
        next_at.append(t)
    feed.flush()
    ready.set()
    while not done.is_set():
        now = time.time()
        for i in range(args.jobs):
            while next_at[i] <= now:
                feed.scrape(i, next_at[i])
                next_at[i] += interval
        feed.flush()
        done.wait(1.0)


def start_store(work, port):
    log = open(os.path.join(work, "victoria-metrics.log"), "w")
    vm = subprocess.Popen([VICTORIA_METRICS, "-httpListenAddr", f"127.0.0.1:{port}",
                           "-storageDataPath", os.path.join(work, "vm"), "-retentionPeriod", "1d"],
                          stdout=log, stderr=log)
    for _ in range(200):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1).read()
            return vm
        except OSError:
            if vm.poll() is not None:
                raise RuntimeError(f"victoria-metrics exited: see {work}/victoria-metrics.log")
            time.sleep(0.1)
    stop(vm)
    raise RuntimeError("victoria-metrics did not answer in 20 s")


# --- the nodes, for scrape mode ------------------------------------------------

class NodeNetwork:
    """A network namespace and a veth pair, both the bench's own: the host end
    holds 10.203.<x>.1/24, the namespace end one address per node (.11, .12,
    ...), where the fake exporters listen. The monitor scrapes only a node's
    NodeAddr inside cluster_cidrs, never loopback or its own addresses, so
    the nodes must be somewhere else than the daemon's host."""

    def __init__(self, nodes):
        tag = os.getpid() % 10000000
        self.name, self.host_end, self.node_end = f"jmbench{tag}", f"jmb{tag}h", f"jmb{tag}n"
        taken = subprocess.run(["ip", "-br", "-4", "addr"], capture_output=True, text=True,
                               check=True).stdout + subprocess.run(
            ["ip", "-4", "route"], capture_output=True, text=True, check=True).stdout
        free = [x for x in range(1, 255) if f"10.203.{x}." not in taken]
        if not free:
            raise RuntimeError("no free 10.203.<x>.0/24 for the bench's nodes")
        x = free[os.getpid() % len(free)]
        self.subnet = f"10.203.{x}.0/24"
        self.gateway = f"10.203.{x}.1"
        self.ips = [f"10.203.{x}.{11 + n}" for n in range(nodes)]
        self.created = []

    def ip(self, *args):
        subprocess.run(["ip", *args], check=True, capture_output=True)

    def __enter__(self):
        try:
            self.ip("netns", "add", self.name)
            self.created.append(("netns", "del", self.name))
            self.ip("link", "add", self.host_end, "type", "veth", "peer", "name", self.node_end)
            self.created.append(("link", "del", self.host_end))  # takes its peer along
            self.ip("link", "set", self.node_end, "netns", self.name)
            self.ip("addr", "add", f"{self.gateway}/24", "dev", self.host_end)
            self.ip("link", "set", self.host_end, "up")
            for address in self.ips:
                self.ip("-n", self.name, "addr", "add", f"{address}/24", "dev", self.node_end)
            self.ip("-n", self.name, "link", "set", self.node_end, "up")
            self.ip("-n", self.name, "link", "set", "lo", "up")
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *_):
        for args in reversed(self.created):
            subprocess.run(["ip", *args], capture_output=True)
        self.created = []


# Descriptors a fake-exporter process keeps beside its listeners: the
# connections in flight (the monitor's scrape_concurrency, 1000) and slack.
EXPORTER_FD_SLACK = 1500


def start_exporters(work, args, network, hosts, hang):
    """The processes in the namespace serving every job's exporter on each
    node: as few as the open-file limit allows (one listening socket per job
    and node each), each for its own range of jobs."""
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    per_process = max(1, (hard - EXPORTER_FD_SLACK) // len(network.ips)) if hard != resource.RLIM_INFINITY \
        else args.jobs
    log = open(os.path.join(work, "exporters.log"), "w")
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bench_exporters.py")
    procs = []
    try:
        for first_job in range(0, args.jobs, per_process):
            config = os.path.join(work, f"exporters-{len(procs)}.json")
            with open(config, "w") as f:
                json.dump({"ips": network.ips, "hosts": hosts, "jobs": args.jobs,
                           "job_range": [first_job, min(args.jobs, first_job + per_process)],
                           "fd_slack": EXPORTER_FD_SLACK,
                           "first_port": EXPORTER_FIRST_PORT, "hang": sorted(hang), "gpus": args.gpus,
                           "interval": args.scrape_interval,
                           "hang_at_file": os.path.join(work, "hang-at")}, f)
            procs.append(subprocess.Popen(["ip", "netns", "exec", network.name, sys.executable, script, config],
                                          stdout=subprocess.PIPE, stderr=log, text=True))
        for proc in procs:
            ready = select.select([proc.stdout], [], [], 300)[0]
            if not ready or proc.stdout.readline().strip() != "ready":
                raise RuntimeError(f"the fake exporters did not start: see {work}/exporters.log")
    except BaseException:
        for proc in procs:
            stop(proc)
        raise
    return procs


def write_targets(diag_dir, hosts, node_ips, port):
    """targets/<node>.json as the plugin's prolog writes it (file_sd)."""
    for host in hosts:
        with open(os.path.join(diag_dir, "targets", f"{host}.json"), "w") as f:
            json.dump([{"targets": [f"{node_ips[host]}:{port}"], "labels": {"host": host}}], f)


def write_scontrol(work, fixtures):
    """`scontrol --version` as the recorded Slurm's (the monitor reads the
    series to choose `sinfo --json` before 23.02); the real scontrol has no
    slurm.conf here and fails, and the monitor then knows no node address
    and scrapes nothing. Anything else fails as scontrol does without a
    controller."""
    with open(os.path.join(fixtures, "slurm", "sinfo-json.json")) as f:
        release = json.load(f)["meta"]["Slurm"]["release"]
    scontrol = os.path.join(work, "scontrol")
    with open(scontrol, "w") as f:
        f.write(f'#!/bin/sh\n[ "$1" = --version ] && exec echo "slurm {release}"\n'
                'echo "scontrol: error: the bench has no controller" >&2\nexit 1\n')
    os.chmod(scontrol, 0o755)
    return scontrol


def write_sinfo(work, fixtures, node_ips):
    """Recorded `sinfo --json` with the job's nodes at the namespace's
    addresses (the other recorded nodes left out: nothing runs there)."""
    with open(os.path.join(fixtures, "slurm", "sinfo-json.json")) as f:
        recorded = json.load(f)
    nodes = [dict(n, address=node_ips[n["name"]]) for n in recorded["nodes"] if n["name"] in node_ips]
    answer = os.path.join(work, "sinfo-answer.json")
    with open(answer, "w") as f:
        json.dump(dict(recorded, nodes=nodes), f)
    sinfo = os.path.join(work, "sinfo")
    with open(sinfo, "w") as f:
        f.write(f"#!/bin/sh\nexec cat '{answer}'\n")
    os.chmod(sinfo, 0o755)
    return sinfo


# --- one run -------------------------------------------------------------------

def write_manifest(diag_dir, job_id, hosts, log_path, store_url):
    os.makedirs(os.path.join(diag_dir, "targets"))
    manifest = {
        "schema": "jobmon.manifest/v1", "job_id": job_id, "user": "root", "uid": 0,
        "nodes": hosts, "head_node": hosts[0], "diag_dir": diag_dir,
        "prometheus": {"address": "127.0.0.1", "port": 9090, "url": "http://127.0.0.1:9090"},
        "tunnel_command": f"ssh -N -L 9090:127.0.0.1:9090 {hosts[0]}",
        "tsdb_dir": f"/tmp/jobmon-tsdb-{job_id}", "targets_dir": os.path.join(diag_dir, "targets"),
        "job_log": log_path, "versions": {"jobmon": "bench", "prometheus": "2.42.0"},
        "remote_write": f"{store_url}/api/v1/write", "state": "running", "degraded": [],
        "started_at": "2024-01-01T00:00:00Z", "ended_at": "", "archive_error": "",
    }
    with open(os.path.join(diag_dir, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=2)


def run(args, mode, monitor=None, label=None):
    work = tempfile.mkdtemp(prefix=f"jobmon-monitor-bench-{mode}-")
    daemon = vm = feeder = exporters = network = None
    done = multiprocessing.Event()
    hang_at = multiprocessing.Value("d", float("inf"))
    result = {"mode": mode, "label": label or mode}
    try:
        logs = os.path.join(work, "logs")
        os.mkdir(logs)
        with open(os.path.join(args.fixtures, "slurm", "squeue-json.json")) as f:
            recorded = json.load(f)
        template = recorded["jobs"][0]
        hosts = expand_nodes(template["nodes"])
        store_url = ""
        if mode == "store":
            args.store_port = free_port()
            store_url = f"http://127.0.0.1:{args.store_port}"
        else:
            network = NodeNetwork(len(hosts)).__enter__()
            node_ips = dict(zip(hosts, network.ips))
        # One recorded job per job, with its id, name and log swapped in.
        jobs = []
        paths = []
        for i in range(args.jobs):
            job_id = FIRST_JOB_ID + i
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
            # Every job a --diag job (the default diag_dir pattern, %o/jobmon-diag-%j).
            diag_dir = os.path.join(logs, f"jobmon-diag-{job_id}")
            write_manifest(diag_dir, job_id, hosts, path, store_url)
            if mode == "scrape":
                write_targets(diag_dir, hosts, node_ips, EXPORTER_FIRST_PORT + i)
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
        if mode == "scrape":
            # The exporters at the nodes' NodeAddr, inside cluster_cidrs.
            store_keys = f"""evidence = "scrape"
sinfo = "{write_sinfo(work, args.fixtures, node_ips)}"
cluster_cidrs = ["{network.subnet}"]
"""
        else:
            # No exporter is in cluster_cidrs: evidence from the store only.
            store_keys = f"""evidence = "store"
store_url = "{store_url}"
store_cluster = "{CLUSTER}"
cluster_cidrs = ["192.0.2.0/24"]
"""
        with open(config, "w") as f:
            f.write(f"""[monitor]
state_db = "{work}/state.db"
poll_interval = "{args.poll_interval}s"
slurm_poll_interval = "30s"
squeue = "{squeue}"
scontrol = "{write_scontrol(work, args.fixtures)}"
metrics_listen = "127.0.0.1:{port}"
notify_file = "{alerts}"
api_socket = ""
diagnose_at_end = false
{store_keys}[monitor.select]
partitions = ["debug"]
[stall]
k = 5
min_stall = "{args.min_stall}s"
""")

        hang = set(range(0, args.jobs, max(1, args.jobs // args.hang_jobs)))
        hang = set(sorted(hang)[: args.hang_jobs])
        noisy = set(sorted(hang)[::2])  # every other hung job keeps its log's mtime fresh
        if mode == "scrape":
            exporters = start_exporters(work, args, network, hosts, hang)
            print(f"# [scrape] {args.jobs} jobs x {len(hosts)} nodes = {args.jobs * len(hosts)} exporters "
                  f"({len(exporters)} process(es) in netns {network.name}, nodes at {', '.join(network.ips)}) serving "
                  f"{series_per_host(args.gpus) - 1} series each ({args.gpus} GPUs)", flush=True)
        if mode == "store":
            vm = start_store(work, args.store_port)
            per_host = series_per_host(args.gpus)
            print(f"# [store] victoria-metrics on {store_url}; {args.jobs} jobs x {len(hosts)} hosts x "
                  f"{per_host} series ({args.gpus} GPUs) = {args.jobs * len(hosts) * per_host} series, "
                  f"one sample each per {args.scrape_interval:g}s; importing {args.store_history:g}s "
                  f"of history", flush=True)
            ready = multiprocessing.Event()
            feed_start = time.time()
            feeder = multiprocessing.Process(target=feed_store,
                                             args=(args, hosts, hang, hang_at, ready, done))
            feeder.start()
            while not ready.wait(1):
                if not feeder.is_alive():
                    raise RuntimeError("the store's feed failed")
            print(f"# [store] history imported in {time.time() - feed_start:.0f}s", flush=True)
        print(f"# [{mode}] {args.jobs} logs with {args.history_steps} steps each; one step per job every "
              f"{args.step_seconds:g}s from now on; poll every {args.poll_interval:g}s", flush=True)
        log = open(os.path.join(work, "monitor.log"), "w")
        daemon = subprocess.Popen([monitor or args.monitor, "--config", config], stdout=log, stderr=log)
        start = time.time()
        hang_after = args.hang_after if args.hang_after is not None else args.warmup + args.steady + 5
        hang_at.value = start + hang_after
        with open(os.path.join(work, "hang-at"), "w") as f:
            f.write(f"{hang_at.value}")

        next_step = {i: time.time() + (i % int(args.step_seconds * 10)) / 10.0 for i in range(args.jobs)}
        step_no = {i: args.history_steps for i in range(args.jobs)}
        last_step_write = {}
        next_noise = {i: 0.0 for i in noisy}
        detected = {}
        cpu_start = None
        steady = None  # (CPU, polls) when the hangs begin: the steady span's end
        # After the first catch-up cycles and, in scrape mode, the scrapes each
        # job's power baseline is learned from before its healthy interval
        # applies (monitor/include/jobmon/monitor/scrape_cadence.h).
        measure_from = time.time() + args.warmup
        next_check = 0.0
        last_report = time.time()
        while time.time() - start < args.timeout:
            now = time.time()
            if daemon.poll() is not None:
                raise RuntimeError(f"slurm_job_monitor exited ({daemon.returncode}): see {work}/monitor.log")
            for i in range(args.jobs):
                if i in hang and now - start > hang_after:
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
            # Steady state: after the first cycles, which read the logs' history
            # and (store mode) back-fill every job's window.
            if cpu_start is None and now >= measure_from and now >= next_check:
                next_check = now + 1
                if metric(port, "jobmon_monitor_polls_total") >= 3:
                    cpu_start = (now, cpu_seconds(daemon.pid), metric(port, "jobmon_monitor_polls_total"),
                                 metric(port, "jobmon_monitor_store_queries_total"),
                                 metric(port, "jobmon_monitor_poll_duration_seconds_sum"),
                                 metric(port, "jobmon_monitor_poll_duration_seconds_count"),
                                 cpu_seconds(vm.pid) if vm else 0.0,
                                 sum(cpu_seconds(p.pid) for p in exporters) if exporters else 0.0,
                                 metric(port, "jobmon_monitor_scrapes_total"),
                                 metric(port, "jobmon_monitor_scrape_failures_total"))
            if cpu_start is not None and steady is None and now - start >= hang_after:
                steady = (cpu_seconds(daemon.pid), metric(port, "jobmon_monitor_polls_total"))
            if os.path.exists(alerts):
                with open(alerts) as f:
                    for line in f:
                        if not line.endswith("\n"):
                            break  # the daemon is writing it: read next time
                        a = json.loads(line)
                        i = a["job_id"] - FIRST_JOB_ID
                        if a["status"] == "firing" and i not in detected:
                            detected[i] = (a["at"], a["class"])
            # Done once every hang is detected and three cycles were measured
            # (a cycle can outlast the poll interval at scale).
            if hang and all(i in detected for i in hang) and cpu_start and now - cpu_start[0] > 3 * args.poll_interval \
                    and now >= next_check:
                next_check = now + 1
                if metric(port, "jobmon_monitor_polls_total") - cpu_start[2] >= 3:
                    break
            if now - last_report > 30:
                print(f"# [{mode}] {now - start:.0f}s: {len([i for i in hang if i in detected])}/{len(hang)} "
                      f"hangs detected, RSS {memory_kib(daemon.pid, 'VmRSS') / 1024:.0f} MiB", flush=True)
                last_report = now
            time.sleep(0.05)
        end = time.time()
        if cpu_start is None:
            raise RuntimeError("the run ended before the measurement began (--timeout)")
        cpu_end = cpu_seconds(daemon.pid)
        cycles = metric(port, "jobmon_monitor_polls_total") - cpu_start[2]
        queries = metric(port, "jobmon_monitor_store_queries_total") - cpu_start[3]
        poll_sum = metric(port, "jobmon_monitor_poll_duration_seconds_sum") - cpu_start[4]
        poll_count = metric(port, "jobmon_monitor_poll_duration_seconds_count") - cpu_start[5]
        result.update(
            tracked=metric(port, "jobmon_monitor_jobs_tracked"),
            diag_jobs=metric(port, "jobmon_monitor_diag_jobs"),
            logs_kept=metric(port, "jobmon_monitor_logs_kept_open"),
            store_failures=metric(port, "jobmon_monitor_store_failures_total"),
            cycles=cycles,
            cpu=(cpu_end - cpu_start[1]) / cycles if cycles else float("nan"),
            # The cycles between the warm-up and the first hang: no incident
            # in them, the daemon's everyday cost.
            steady_cycles=steady[1] - cpu_start[2] if steady else 0,
            steady_cpu=(steady[0] - cpu_start[1]) / (steady[1] - cpu_start[2])
            if steady and steady[1] > cpu_start[2] else None,
            # Cores: CPU per second of monitoring. A cycle that outlasts the
            # poll interval (the store answering slowly) covers more time and
            # costs more per cycle; per second the modes compare like for like.
            cores=(cpu_end - cpu_start[1]) / (end - cpu_start[0]),
            wall=poll_sum / poll_count if poll_count else float("nan"),
            queries=queries / cycles if cycles else float("nan"),
            store_cpu=(cpu_seconds(vm.pid) - cpu_start[6]) / cycles if vm and cycles else None,
            exporter_cpu=(sum(cpu_seconds(p.pid) for p in exporters) - cpu_start[7]) / cycles
            if exporters and cycles else None,
            scrapes=(metric(port, "jobmon_monitor_scrapes_total") - cpu_start[8]) / cycles
            if cycles else float("nan"),
            scrape_failures=metric(port, "jobmon_monitor_scrape_failures_total") - cpu_start[9],
            peak=memory_kib(daemon.pid, "VmHWM") / 1024,
            false_alarms=len([i for i in detected if i not in hang]),
            classes=sorted(set(c for i, (_, c) in detected.items() if i in hang)),
            took=end - start)
        for kind, members in (("silent", sorted(hang - noisy)), ("noisy", sorted(noisy))):
            latencies = [detected[i][0] - last_step_write[i] for i in members if i in detected]
            result[kind] = (latencies, len(members))
        print_run(result)
    finally:
        stop(daemon)
        done.set()
        if feeder is not None:
            feeder.join(30)
            if feeder.is_alive():
                feeder.terminate()
                feeder.join()
        stop(vm)
        for proc in exporters or []:
            stop(proc)
        if network is not None:
            network.__exit__()
        if args.keep:
            print(f"# [{mode}] kept {work} (the daemon's log: {work}/monitor.log)")
        else:
            shutil.rmtree(work, ignore_errors=True)
    return result


# --- output --------------------------------------------------------------------

def latency_text(latencies, members):
    if not latencies:
        return f"0/{members}"
    return f"{len(latencies)}/{members}, median {statistics.median(latencies):.1f}s max {max(latencies):.1f}s"


def print_run(r):
    m = r["label"]
    print(f"[{m}] jobs tracked: {r['tracked']:.0f} ({r['diag_jobs']:.0f} with --diag evidence, "
          f"{r['logs_kept']:.0f} logs kept open between polls)")
    goal = 1 if r["mode"] == "scrape" else 0.3
    if r["steady_cpu"] is not None:
        print(f"[{m}] CPU per poll cycle, steady (before the hangs): {r['steady_cpu']:.3f} s (over "
              f"{r['steady_cycles']:.0f} cycles; goal < {goal} s)")
    print(f"[{m}] CPU per poll cycle, steady and the hangs' incidents: {r['cpu']:.3f} s (over "
          f"{r['cycles']:.0f} cycles; goal < {goal} s)")
    print(f"[{m}] wall time per cycle (daemon's own histogram): {r['wall']:.3f} s")
    print(f"[{m}] peak RSS: {r['peak']:.0f} MiB (goal < 512 MiB)")
    print(f"[{m}] incidents on healthy jobs: {r['false_alarms']}")
    if r["mode"] == "scrape":
        print(f"[{m}] scrapes per cycle: {r['scrapes']:.0f} ({r['scrape_failures']:.0f} failed while "
              f"measured); fake exporters' CPU per cycle (the nodes' stand-in, not the monitor): "
              f"{r['exporter_cpu']:.3f} s")
    if r["mode"] == "store":
        print(f"[{m}] store queries per cycle: {r['queries']:.1f} ({r['store_failures']:.0f} failed); "
              f"victoria-metrics CPU per cycle (ingest and queries): "
              f"{'-' if r['store_cpu'] is None else format(r['store_cpu'], '.3f')} s")
    for kind in ("silent", "noisy"):
        latencies, members = r[kind]
        if not latencies:
            print(f"[{m}] {kind} hangs: none detected ({members} missed)")
            continue
        med = statistics.median(latencies)
        if kind == "silent":
            rule = f"mtime rule {MTIME_RULE_SECONDS}s: {MTIME_RULE_SECONDS / med:.1f}x sooner"
        else:
            rule = "mtime rule: never (the noise keeps the log's mtime fresh)"
        print(f"[{m}] {kind} hangs: {latency_text(latencies, members)} after the last step; {rule}")
    print(f"# [{m}] classes of the hangs: {r['classes']}; run took {r['took']:.0f}s", flush=True)


def print_table(results, args):
    labels = [r["label"] for r in results]
    rows = [
        ("CPU per cycle, steady (s)",
         lambda r: f"{r['steady_cpu']:.3f} ({r['steady_cycles']:.0f})" if r["steady_cpu"] is not None else "-"),
        ("CPU per cycle, with the hangs (s)", lambda r: f"{r['cpu']:.3f} ({r['cycles']:.0f})"),
        ("wall per cycle (s)", lambda r: f"{r['wall']:.3f}"),
        ("daemon CPU per second (cores)", lambda r: f"{r['cores']:.3f}"),
        ("peak RSS (MiB)", lambda r: f"{r['peak']:.0f}"),
        ("silent hangs detected, latency", lambda r: latency_text(*r["silent"])),
        ("noisy hangs detected, latency", lambda r: latency_text(*r["noisy"])),
        ("hang classes", lambda r: ",".join(r["classes"]) or "-"),
        ("incidents on healthy jobs", lambda r: str(r["false_alarms"])),
        ("exporter scrapes per cycle (failed)",
         lambda r: f"{r['scrapes']:.0f} ({r['scrape_failures']:.0f})" if r["mode"] == "scrape" else "-"),
        ("fake exporters' CPU per cycle (s)",
         lambda r: f"{r['exporter_cpu']:.3f}" if r.get("exporter_cpu") is not None else "-"),
        ("store queries per cycle", lambda r: f"{r['queries']:.1f}" if r["mode"] == "store" else "-"),
        ("store CPU per cycle (s)", lambda r: f"{r['store_cpu']:.3f}" if r["store_cpu"] is not None else "-"),
    ]
    width = max(len(name) for name, _ in rows)
    cells = [[fn(r) for r in results] for _, fn in rows]
    col = [max(len(m), *(len(c[k]) for c in cells)) for k, m in enumerate(labels)]
    print(f"\n{args.jobs} jobs ({args.hang_jobs} hang), poll every {args.poll_interval:g}s; "
          f"{args.gpus} GPUs per host, exporter values move every {args.scrape_interval:g}s "
          f"(store: one sample per series per {args.scrape_interval:g}s)")
    print("  ".join([" " * width] + [m.ljust(col[k]) for k, m in enumerate(labels)]))
    for (name, _), row in zip(rows, cells):
        print("  ".join([name.ljust(width)] + [c.ljust(col[k]) for k, c in enumerate(row)]))
    by = {r["mode"]: r for r in results if r["label"] == r["mode"]}
    for base in (r for r in results if r["label"] != r["mode"]):
        this = by.get(base["mode"])
        if this and base["cpu"]:
            steady = ""
            if this["steady_cpu"] is not None and base["steady_cpu"]:
                steady = f"{this['steady_cpu'] / base['steady_cpu']:.2f}x the baseline's steady CPU per cycle, "
            print(f"{base['mode']}: this monitor takes {steady}{this['cpu'] / base['cpu']:.2f}x its CPU "
                  f"per cycle with the hangs and {this['peak'] / base['peak']:.2f}x its peak RSS")
    if "scrape" in by and "store" in by:
        scrape, store = by["scrape"], by["store"]
        ratio = store["cpu"] / scrape["cpu"] if scrape["cpu"] else float("inf")
        print(f"store/scrape CPU per cycle of the daemon: {ratio:.1f}x (goal within 2x)")
        print(f"store/scrape CPU per second of the daemon: {store['cores'] / scrape['cores']:.1f}x "
              f"(cycles of {store['wall']:.1f}s vs {scrape['wall']:.1f}s wall)")
        verdicts = []
        for kind in ("silent", "noisy"):
            a, b = scrape[kind][0], store[kind][0]
            if len(a) != scrape[kind][1] or len(b) != store[kind][1]:
                verdicts.append(f"{kind}: not all detected in both modes")
                continue
            delta = statistics.median(b) - statistics.median(a)
            # Within one poll interval: the cycle a stall falls into decides.
            verdict = "unchanged (within one poll interval)" if abs(delta) <= args.poll_interval else "CHANGED"
            verdicts.append(f"{kind}: median {delta:+.1f}s, {verdict}")
        print("detection latency store vs scrape: " + "; ".join(verdicts))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--monitor", required=True, help="slurm_job_monitor binary")
    ap.add_argument("--baseline", help="another slurm_job_monitor (an earlier build), run after it on "
                    "the same workload in each mode; the table shows both and their ratios")
    ap.add_argument("--fixtures", required=True, help="tests/fixtures")
    ap.add_argument("--mode", choices=("scrape", "store", "both"), default="both")
    ap.add_argument("--keep", action="store_true", help="keep each mode's work dir (logs, state)")
    ap.add_argument("--jobs", type=int, default=10000)
    ap.add_argument("--step-seconds", type=float, default=10.0)
    ap.add_argument("--poll-interval", type=float, default=10.0)
    ap.add_argument("--hang-jobs", type=int, default=20, help="half silent, half with noise lines")
    ap.add_argument("--history-steps", type=int, default=30, help="steps already in each log")
    ap.add_argument("--warmup", type=float, default=125.0,
                    help="seconds into the run before the CPU is measured (catch-up cycles; in scrape "
                         "mode the every-cycle scrapes of each job's first training)")
    ap.add_argument("--steady", type=float, default=60.0,
                    help="seconds measured after the warm-up before the hangs begin: the steady figure")
    ap.add_argument("--hang-after", type=float,
                    help="seconds into the run (default: --warmup + --steady + 5)")
    ap.add_argument("--min-stall", type=float, default=60.0)
    ap.add_argument("--timeout", type=float, default=400.0, help="seconds per mode")
    ap.add_argument("--gpus", type=int, default=4, help="GPUs per host (both modes)")
    ap.add_argument("--scrape-interval", type=float, default=10.0,
                    help="seconds between a job's samples: the store's feed, the exporters' values (the plugin's scrape_interval)")
    ap.add_argument("--store-history", type=float, default=120.0,
                    help="store mode: seconds of training evidence imported before the monitor starts")
    args = ap.parse_args()
    # SIGTERM unwinds like ^C, so the namespace and the processes are cleaned up.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    modes = ["scrape", "store"] if args.mode == "both" else [args.mode]
    if "scrape" in modes and (os.geteuid() != 0 or not shutil.which("ip")):
        print("scrape mode skipped: it needs root and ip(8) (iproute2) for the network namespace "
              "where the nodes' exporters listen", file=sys.stderr)
        modes.remove("scrape")
        if not modes:
            return SKIPPED
    if "store" in modes and not os.access(VICTORIA_METRICS, os.X_OK):
        print(f"no {VICTORIA_METRICS} (apt-get install victoria-metrics; scripts/install-deps.sh)",
              file=sys.stderr)
        return 2
    results = [run(args, mode) for mode in modes]
    baselines = [run(args, mode, args.baseline, f"{mode}, baseline") for mode in modes] if args.baseline else []
    print_table(results + baselines, args)
    problems = evidence_problems(results)
    for problem in problems:
        print(f"FAILED: {problem}", file=sys.stderr)
    return 1 if problems else 0


def evidence_problems(results):
    """A mode that gathered no evidence measures log following alone, and a
    hang classed differently by the two modes means one of them misreads its
    evidence: either makes the figures meaningless, so the bench fails."""
    problems = []
    for r in results:
        if r["mode"] == "scrape" and not r["scrapes"] > 0:
            problems.append("scrape mode scraped no exporter (see --keep and the daemon's log)")
        if r["mode"] == "store" and not r["queries"] > 0:
            problems.append("store mode queried no store (see --keep and the daemon's log)")
    classes = {r["mode"]: r["classes"] for r in results}
    if len(classes) == 2 and classes["scrape"] != classes["store"]:
        problems.append(f"the modes class the hangs differently: scrape {classes['scrape']}, "
                        f"store {classes['store']}")
    return problems


if __name__ == "__main__":
    sys.exit(main())
