#!/usr/bin/python3
"""Fault injector for the diagnose integration test: per-node fake
procfs and sysfs trees that jobmon-exporter reads (--procfs, --sysfs), evolved
by a bounded schedule: baseline noise everywhere, one scenario's fault on one
node / GPU / port from a chosen training step on.

    fault_tree.py run ROOT --nodes node1,node2 --scenario NAME --log JOBLOG
                      [--fault-at-step N] [--checkpoint-every N] [--seconds S]
                      [--interval S] [--ready FILE] [--seed N]

ROOT/<node>/proc is a copy of tests/fixtures/procfs/basic with the lines the
exporter reads rewritten (stat, vmstat, meminfo, pressure/io, net/snmp,
net/netstat); ROOT/<node>/sys holds an amdgpu tree as the fake trainer lays it
out (plus ras/, aer_dev_*, pp_dpm_sclk) and an RDMA tree per the kernel's
Documentation/ABI/stable/sysfs-class-infiniband (bnxt_re hw_counters). The job
log (srun -l: "R: completed step: S, ...") tells the phase: compiling before
the first step, checkpoint windows (between step S-1 and "Saved a checkpoint
at step S"), the fault from --fault-at-step on, idle after the last step or
once the rank exited (NODE_EXIT, or its OOM-kill lines), and busy-wait (util
high, power near idle: NCCL spinning in a collective) when a rank that is
still alive logged no step for --stall-seconds (a hung job).
Files are replaced atomically (rename), so the exporter never reads a torn one.

Scenarios and what they change (the node, GPU and port named here are what
diagnose_live_test.sh asserts):
  baseline        nothing
  ecc             node2 GPU 1: ras/umc_err_count ue rises by 1 every ~2 s
  rdma            node2 bnxt_re1 port 1: state 1: DOWN, tx_retx_pkts +400/s,
                  tx_ack_timeout +5/s
  tcp-checkpoint  every node: Tcp RetransSegs +300/s inside checkpoint windows
  io-pressure     node1: PSI io some avg10 ~45%, full ~25%; procs_blocked ~6
  thermal         node1 GPU 0: temperature +3 C/s up to ~104 C; above 92 C
                  sclk 2100 -> 1400 MHz and power -30%
  ghost           node2: the whole tree stops changing (a frozen exporter)
  procs-high      every node: procs_running ~24 instead of ~4
  oom             node2: MemAvailable falls ~8 GB/s toward ~1.5% of its start,
                  where /proc/vmstat oom_kill rises by 1 (the kernel's kill,
                  before the trainer's log says so); back once the rank died
Hang and heartbeat jobs need no scenario of their own (baseline): their
phases (busy-wait while hung, idle after the accusation) come from the log.
"""
import argparse
import os
import random
import re
import shutil
import sys
import time

FIXTURE_PROCFS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "procfs", "basic")
SCENARIOS = ("baseline", "ecc", "rdma", "tcp-checkpoint", "io-pressure", "thermal", "ghost", "procs-high", "oom")
GPUS = 2
RDMA_DEVICES = ("bnxt_re0", "bnxt_re1")
# Where each scenario's fault lands (the test asserts these).
TARGET = {
    "ecc": {"node": "node2", "gpu": 1},
    "rdma": {"node": "node2", "device": "bnxt_re1", "port": "1"},
    "io-pressure": {"node": "node1"},
    "thermal": {"node": "node1", "gpu": 0},
    "ghost": {"node": "node2"},
    "oom": {"node": "node2"},
}
MEM_AVAILABLE_KB = 24145260
OOM_FALL_KB_PER_S = 8_000_000
OOM_FLOOR_FRACTION = 0.015
RDMA_COUNTERS = ("port_rcv_data", "port_xmit_data", "port_rcv_packets", "port_xmit_packets", "port_rcv_errors",
                 "symbol_error", "link_downed")
RDMA_HW_COUNTERS = ("rx_bytes", "tx_bytes", "rx_pkts", "tx_pkts", "tx_retx_pkts", "tx_retx_bytes", "tx_ack_timeout",
                    "rx_cnp_pkts", "tx_cnp_pkts", "req_rx_cqe_err", "req_tx_retry_excd_err")


# ---- the job log: phase of each rank ------------------------------------

STEP_LINE = re.compile(r"^(?:(\d+): )?completed step: (\d+),")
SAVED_LINE = re.compile(r"^(?:(\d+): )?Saved a checkpoint at step (\d+)\.")
# The fake trainer's exit line (any non-zero exit) and its OOM-kill line
# (the killed rank prints it, then dies of SIGKILL without NODE_EXIT).
EXIT_LINE = re.compile(r"^(?:(\d+): )?(?:NODE_EXIT host=|Out of memory: Killed process )")


class LogState:
    """What the job log said so far, per rank: last completed step and when
    it was read, last saved checkpoint, ranks that exited. Fed line by line
    with the time it was read (pure; no I/O)."""

    def __init__(self):
        self.last_step = {}
        self.last_step_at = {}
        self.last_saved = {}
        self.exited = set()

    def feed(self, line, now=0.0):
        for pattern, table in ((STEP_LINE, self.last_step), (SAVED_LINE, self.last_saved)):
            m = pattern.match(line)
            if m:
                table[int(m.group(1) or 0)] = int(m.group(2))
                if table is self.last_step:
                    self.last_step_at[int(m.group(1) or 0)] = now
        m = EXIT_LINE.match(line)
        if m:
            self.exited.add(int(m.group(1) or 0))

    def stalled(self, rank, now, seconds):
        """rank logged steps, then none for `seconds` (and did not exit)."""
        return (bool(seconds) and rank in self.last_step_at and rank not in self.exited
                and now - self.last_step_at[rank] > seconds)

    def max_step(self):
        return max(self.last_step.values(), default=-1)

    def in_checkpoint(self, rank, every):
        """Between 'completed step S-1' and 'Saved a checkpoint at step S'
        for S a multiple of every (the fake trainer saves inside step S)."""
        if not every or rank not in self.last_step:
            return False
        upcoming = self.last_step[rank] + 1
        return upcoming > 0 and upcoming % every == 0 and self.last_saved.get(rank, -1) < upcoming


# ---- one node's state and how a tick evolves it ---------------------------


def new_node_state():
    return {
        "ctxt": 38014093, "procs_running": 4, "procs_blocked": 0, "oom_kill": 2,
        "mem_available_kb": 24145260, "dirty_kb": 26008, "writeback_kb": 512,
        "psi_some": [1.25, 0.80, 0.41, 26584435], "psi_full": [0.75, 0.50, 0.38, 23732638],
        "tcp_retrans": 1234, "tcp_aborts": 4, "tcp_resets": 17,
        "gpus": [{"busy": 0, "power_uw": 140_000_000, "temp_mc": 38_000, "sclk": 2100, "vram": 512 << 20,
                  "umc_ue": 0, "umc_ce": 0} for _ in range(GPUS)],
        "rdma": {d: {"state": "4: ACTIVE", **{c: 1000 for c in RDMA_COUNTERS + RDMA_HW_COUNTERS},
                     "port_rcv_errors": 0, "symbol_error": 0, "link_downed": 0, "tx_retx_pkts": 0,
                     "tx_retx_bytes": 0, "tx_ack_timeout": 0, "req_rx_cqe_err": 0, "req_tx_retry_excd_err": 0}
                 for d in RDMA_DEVICES},
        "thermal_c": None,
    }


def phase_of(log, rank, every, trainer_done, now=0.0, stall_seconds=0):
    if trainer_done or rank in log.exited:
        return "idle"
    if rank not in log.last_step:
        return "compiling"
    if log.in_checkpoint(rank, every):
        return "checkpoint"  # a save is a pause of its own, not a hang
    return "busy-wait" if log.stalled(rank, now, stall_seconds) else "training"


GPU_PHASE = {  # centre and spread of busy %, power W, temperature C (the fake trainer's ReadingFor)
    "idle": ((0, 0), (140, 5), (38, 1)),
    "compiling": ((15, 10), (190, 15), (45, 2)),
    "training": ((97, 3), (660, 40), (74, 3)),
    "checkpoint": ((35, 15), (330, 30), (65, 3)),
    # Spinning in a collective: "busy" to the driver, near idle power (the
    # reference's Playbook 1 busy-wait signature; the trainer's kBusyWait).
    "busy-wait": ((98, 2), (165, 10), (52, 2)),
}


def tick(state, node, scenario, phase, fault, dt, rng):
    """One step of dt seconds of node's state in place: baseline noise for
    the phase, plus the scenario's fault where fault is true and node is
    its target. Returns nothing; deterministic for a seeded rng."""
    target = TARGET.get(scenario, {})
    on_target = fault and target.get("node") == node
    state["ctxt"] += int(rng.uniform(8000, 12000) * dt)
    state["procs_running"] = (24 if scenario == "procs-high" else 4) + rng.randint(-1, 1)
    state["procs_blocked"] = rng.randint(0, 1)
    if scenario == "oom" and on_target and phase != "idle":
        # Falling toward zero; the kernel kills at the floor (once).
        floor = int(MEM_AVAILABLE_KB * OOM_FLOOR_FRACTION)
        state["mem_available_kb"] = max(floor, state["mem_available_kb"] - int(OOM_FALL_KB_PER_S * dt))
        if state["mem_available_kb"] == floor and not state.get("oom_killed"):
            state["oom_killed"] = True
            state["oom_kill"] += 1
    else:  # the killed rank's memory is back
        state["mem_available_kb"] = MEM_AVAILABLE_KB - rng.randint(0, 20000)
    some, full = [rng.uniform(0.5, 2.0), 0], [rng.uniform(0.1, 0.8), 0]
    if scenario == "io-pressure" and on_target:
        some[0], full[0] = rng.uniform(40, 50), rng.uniform(20, 30)
        state["procs_blocked"] = rng.randint(5, 7)
        state["dirty_kb"] = 2_000_000 + rng.randint(0, 200_000)
    for psi, now in ((state["psi_some"], some[0]), (state["psi_full"], full[0])):
        psi[0] = round(now, 2)
        psi[1] = round(psi[1] + (now - psi[1]) * min(1.0, dt / 60), 2)
        psi[2] = round(psi[2] + (now - psi[2]) * min(1.0, dt / 300), 2)
        psi[3] += int(now / 100 * dt * 1e6)  # microseconds stalled
    retrans = rng.uniform(0, 1.0)
    if scenario == "tcp-checkpoint" and phase == "checkpoint":
        retrans = rng.uniform(250, 350)
    state["tcp_retrans"] += int(retrans * dt + 0.5)

    for index, gpu in enumerate(state["gpus"]):
        (busy_c, busy_s), (power_c, power_s), (temp_c, temp_s) = GPU_PHASE[phase]
        gpu["busy"] = max(0, min(100, int(busy_c + busy_s * rng.uniform(-1, 1))))
        power_w = power_c + power_s * rng.uniform(-1, 1)
        temp = temp_c + temp_s * rng.uniform(-1, 1)
        gpu["sclk"] = 2100 if phase in ("training", "checkpoint", "busy-wait") else 500
        gpu["vram"] = (150 << 30) if phase in ("training", "checkpoint", "busy-wait") else (8 << 30)
        if scenario == "thermal" and on_target and index == target["gpu"]:
            state["thermal_c"] = min(104.0, (state["thermal_c"] or temp) + 3.0 * dt)
            temp = state["thermal_c"] + rng.uniform(-0.5, 0.5)
            if temp > 92:
                gpu["sclk"] = 1400
                power_w *= 0.7
        if scenario == "ecc" and on_target and index == target["gpu"] and rng.random() < dt / 2:
            gpu["umc_ue"] += 1
        gpu["power_uw"] = int(power_w * 1e6)
        gpu["temp_mc"] = int(temp * 1000)

    for device, port in state["rdma"].items():
        traffic = 1e9 if phase in ("training", "checkpoint") else 1e6
        for name, per_s in (("rx_bytes", traffic), ("tx_bytes", traffic), ("rx_pkts", traffic / 4096),
                            ("tx_pkts", traffic / 4096), ("port_rcv_data", traffic / 4),
                            ("port_xmit_data", traffic / 4), ("port_rcv_packets", traffic / 4096),
                            ("port_xmit_packets", traffic / 4096)):
            port[name] += int(per_s * dt * rng.uniform(0.9, 1.1))
        if scenario == "rdma" and on_target and device == target["device"]:
            port["state"] = "1: DOWN"
            port["tx_retx_pkts"] += int(400 * dt * rng.uniform(0.8, 1.2))
            port["tx_retx_bytes"] += int(400 * 4096 * dt)
            port["tx_ack_timeout"] += int(5 * dt * rng.uniform(0.5, 1.5) + 0.5)


# ---- rendering: the files and their text ---------------------------------


def replace_field(text, pattern, value):
    """text with the first match of pattern's group 1 replaced by value."""
    m = re.search(pattern, text, re.M)
    if not m:
        raise ValueError(f"no {pattern!r} in the fixture")
    return text[:m.start(1)] + str(value) + text[m.end(1):]


def set_table_value(text, prefix, key, value):
    """/proc/net/snmp and netstat: 'Prefix: names' then 'Prefix: values'."""
    lines = text.splitlines()
    for i in range(len(lines) - 1):
        if lines[i].startswith(prefix + ":") and lines[i + 1].startswith(prefix + ":"):
            names, values = lines[i].split()[1:], lines[i + 1].split()
            values[1 + names.index(key)] = str(value)
            lines[i + 1] = " ".join(values)
            return "\n".join(lines) + "\n"
    raise ValueError(f"no {prefix}:{key} in the fixture")


def render_procfs(fixture, s):
    """relative path -> text of the procfs files, fixture text with s's values."""
    out = dict(fixture)
    stat = replace_field(fixture["stat"], r"^ctxt (\d+)", s["ctxt"])
    stat = replace_field(stat, r"^procs_running (\d+)", s["procs_running"])
    out["stat"] = replace_field(stat, r"^procs_blocked (\d+)", s["procs_blocked"])
    out["vmstat"] = replace_field(fixture["vmstat"], r"^oom_kill (\d+)", s["oom_kill"])
    meminfo = replace_field(fixture["meminfo"], r"^MemAvailable:\s+(\d+) kB", s["mem_available_kb"])
    meminfo = replace_field(meminfo, r"^Dirty:\s+(\d+) kB", s["dirty_kb"])
    out["meminfo"] = replace_field(meminfo, r"^Writeback:\s+(\d+) kB", s["writeback_kb"])
    out["pressure/io"] = "".join(
        f"{kind} avg10={v[0]:.2f} avg60={v[1]:.2f} avg300={v[2]:.2f} total={v[3]}\n"
        for kind, v in (("some", s["psi_some"]), ("full", s["psi_full"])))
    snmp = set_table_value(fixture["net/snmp"], "Tcp", "RetransSegs", s["tcp_retrans"])
    out["net/snmp"] = set_table_value(snmp, "Tcp", "EstabResets", s["tcp_resets"])
    out["net/netstat"] = set_table_value(fixture["net/netstat"], "TcpExt", "TCPAbortOnTimeout", s["tcp_aborts"])
    return out


def gpu_device_dir(gpu):
    return f"devices/pci0000:00/0000:{0x11 + gpu:02x}:00.0"  # the fake trainer's layout


def render_sysfs(s):
    """relative path -> text of the GPU and RDMA files that change."""
    out = {}
    for index, gpu in enumerate(s["gpus"]):
        d = gpu_device_dir(index)
        out[f"{d}/gpu_busy_percent"] = f"{gpu['busy']}\n"
        out[f"{d}/mem_info_vram_used"] = f"{gpu['vram']}\n"
        out[f"{d}/hwmon/hwmon{index}/power1_average"] = f"{gpu['power_uw']}\n"
        out[f"{d}/hwmon/hwmon{index}/temp1_input"] = f"{gpu['temp_mc']}\n"
        levels = [500, 1400, 2100]
        out[f"{d}/pp_dpm_sclk"] = "".join(
            f"{i}: {mhz}Mhz{' *' if mhz == gpu['sclk'] else ''}\n" for i, mhz in enumerate(levels))
        out[f"{d}/ras/umc_err_count"] = f"ue: {gpu['umc_ue']}\nce: {gpu['umc_ce']}\n"
    for device, port in s["rdma"].items():
        p = f"class/infiniband/{device}/ports/1"
        out[f"{p}/state"] = port["state"] + "\n"
        for name in RDMA_COUNTERS:
            out[f"{p}/counters/{name}"] = f"{port[name]}\n"
        for name in RDMA_HW_COUNTERS:
            out[f"{p}/hw_counters/{name}"] = f"{port[name]}\n"
    return out


def static_sysfs():
    """Files written once: identity, totals, AER (zero), links as amdgpu has them."""
    files, links = {}, {}
    for index in range(GPUS):
        d = gpu_device_dir(index)
        files[f"{d}/vendor"] = "0x1002\n"
        files[f"{d}/device"] = "0x74a1\n"
        files[f"{d}/mem_info_vram_total"] = f"{192 << 30}\n"
        files[f"{d}/hwmon/hwmon{index}/name"] = "amdgpu\n"
        files[f"{d}/pp_dpm_mclk"] = "0: 900Mhz\n1: 1300Mhz *\n"
        files[f"{d}/aer_dev_correctable"] = "RxErr 0\nBadTLP 0\nBadDLLP 0\nTOTAL_ERR_COR 0\n"
        files[f"{d}/aer_dev_nonfatal"] = "Undefined 0\nDLP 0\nTOTAL_ERR_NONFATAL 0\n"
        files[f"{d}/aer_dev_fatal"] = "Undefined 0\nDLP 0\nTOTAL_ERR_FATAL 0\n"
        links[f"{d}/drm/card{index}/device"] = "../.."
        links[f"class/drm/card{index}"] = f"../../{d}/drm/card{index}"
    for device in RDMA_DEVICES:
        files[f"class/infiniband/{device}/ports/1/link_layer"] = "Ethernet\n"
        files[f"class/infiniband/{device}/ports/1/phys_state"] = "5: LinkUp\n"
    return files, links


# ---- I/O -------------------------------------------------------------------


def write_atomically(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def write_tree(root, files):
    for rel, text in files.items():
        write_atomically(os.path.join(root, rel), text)


def read_fixture():
    fixture = {}
    for dirpath, _, names in os.walk(FIXTURE_PROCFS):
        for name in names:
            path = os.path.join(dirpath, name)
            with open(path) as f:
                fixture[os.path.relpath(path, FIXTURE_PROCFS)] = f.read()
    return fixture


def build(root, nodes):
    files, links = static_sysfs()
    for node in nodes:
        shutil.copytree(FIXTURE_PROCFS, os.path.join(root, node, "proc"), dirs_exist_ok=True)
        sys_root = os.path.join(root, node, "sys")
        write_tree(sys_root, files)
        for rel, target in links.items():
            path = os.path.join(sys_root, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            if not os.path.islink(path):
                os.symlink(target, path)


class LogFollower:
    """Reads what was appended to the job log since the last call."""

    def __init__(self, path, log_state):
        self.path, self.state, self.offset, self.partial = path, log_state, 0, ""

    def poll(self, now=0.0):
        if not self.path or not os.path.exists(self.path):
            return
        with open(self.path, errors="replace") as f:
            f.seek(self.offset)
            text = f.read()
            self.offset = f.tell()
        lines = (self.partial + text).split("\n")
        self.partial = lines.pop()
        for line in lines:
            self.state.feed(line, now)


def run(args):
    nodes = args.nodes.split(",")
    os.makedirs(args.root, exist_ok=True)
    build(args.root, nodes)
    fixture = read_fixture()
    rng = random.Random(args.seed)
    states = {node: new_node_state() for node in nodes}
    log = LogState()
    follower = LogFollower(args.log, log)
    frozen = set()
    deadline = time.monotonic() + args.seconds
    last = time.monotonic()
    first = True
    while time.monotonic() < deadline:
        now = time.monotonic()
        follower.poll(now)
        dt, last = (now - last) if not first else args.interval, now
        fault = args.fault_at_step is not None and log.max_step() >= args.fault_at_step
        done = args.steps is not None and log.max_step() >= args.steps - 1
        for rank, node in enumerate(nodes):
            if node in frozen:
                continue
            phase = phase_of(log, rank, args.checkpoint_every, done, now, args.stall_seconds)
            tick(states[node], node, args.scenario, phase, fault, dt, rng)
            write_tree(os.path.join(args.root, node, "proc"), render_procfs(fixture, states[node]))
            write_tree(os.path.join(args.root, node, "sys"), render_sysfs(states[node]))
            if args.scenario == "ghost" and fault and TARGET["ghost"]["node"] == node:
                frozen.add(node)  # written once more with the fault's values, then never again
        if first and args.ready:
            write_atomically(args.ready, "ready\n")
        first = False
        time.sleep(args.interval)
    return 0


def main(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="build ROOT/<node>/{proc,sys} and evolve them")
    r.add_argument("root")
    r.add_argument("--nodes", default="node1,node2", help="in rank order (srun -l rank R runs on the R-th)")
    r.add_argument("--scenario", choices=SCENARIOS, required=True)
    r.add_argument("--log", help="the job's output (srun -l lines)")
    r.add_argument("--fault-at-step", type=int, help="the fault starts once a rank completed this step")
    r.add_argument("--checkpoint-every", type=int, default=0, help="the trainer's --checkpoint-every")
    r.add_argument("--steps", type=int, help="the trainer's --steps: idle after the last one")
    r.add_argument("--seconds", type=float, default=240, help="bound on the run")
    r.add_argument("--interval", type=float, default=0.5)
    r.add_argument("--stall-seconds", type=float, default=3,
                   help="no step for this long on a live rank: busy-wait (0: never)")
    r.add_argument("--ready", help="written after the first full tree")
    r.add_argument("--seed", type=int, default=14)
    args = p.parse_args(argv)
    return run(args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
