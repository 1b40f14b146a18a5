#!/usr/bin/python3
"""jobmon-exporter as a process: wildcard binds refused, a scrape over
loopback of a fixture procfs passes Debian's `promtool check metrics`, every
hw_* series has the host label, the socket is bound to the given address
only, and SIGTERM ends it promptly with exit 0."""
import argparse
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

checks = []


def check(what, ok, detail=""):
    checks.append(ok)
    print(f"{'ok  ' if ok else 'FAIL'} - {what}" + ("" if ok else f": {detail}"))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def listening_addresses(port):
    """Local addresses listening on `port`, from /proc/net/tcp{,6}."""
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = open(table).read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            local, state = line.split()[1], line.split()[3]
            address, hex_port = local.split(":")
            if int(hex_port, 16) == port and state == "0A":
                found.append(address)
    return found


def scrape_values(port):
    values = {}
    try:
        body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2).read().decode()
    except OSError:
        return values
    for line in body.splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            values[name] = float(value)
    return values


def with_fake_trainer(args):
    """The exporter reading what a (fake) training rank writes: GPU sysfs and
    TensorBoard events, through a training phase and a busy-wait hang."""
    with tempfile.TemporaryDirectory() as tmp:
        port = free_port()
        exporter = subprocess.Popen([args.exporter, "--listen", f"127.0.0.1:{port}", "--host", "node1",
                                     "--procfs", args.procfs, "--sysfs", f"{tmp}/sys", "--tfevents", f"{tmp}/tb",
                                     "--collectors", "gpu_amd,training"], stderr=subprocess.DEVNULL)
        os.makedirs(f"{tmp}/tb")
        time.sleep(1.1)  # the event file must be newer than the exporter's start (1 s ctime granularity)
        trainer = subprocess.Popen([args.fake_trainer, "--steps", "1000", "--step-seconds", "0.05", "--hang-at",
                                    "40", "--gpu-sysfs", f"{tmp}/sys", "--gpu-interval", "0.05",
                                    "--tensorboard-dir", f"{tmp}/tb", "--host", "node1", "--seed", "4"],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            training = {}
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                training = scrape_values(port)
                if training.get('tb_step{host="node1"}', -1) >= 10:
                    break
                time.sleep(0.1)
            power = training.get('hw_gpu_power_watts{gpu="0",host="node1"}', 0)
            check("while training: tb_step advances from the event file",
                  training.get('tb_step{host="node1"}', -1) >= 10, training.get('tb_step{host="node1"}'))
            check("while training: training-level GPU power (> 500 W)", power > 500, power)
            catalog_tb = ["tb_step", "tb_learning_loss", "tb_learning_grad_norm", "tb_learning_raw_grad_norm",
                          "tb_learning_param_norm", "tb_learning_current_learning_rate",
                          "tb_learning_total_weights", "tb_perf_step_time_seconds", "tb_perf_per_device_tflops",
                          "tb_perf_per_device_tokens_per_sec"]
            missing = [name for name in catalog_tb if f'{name}{{host="node1"}}' not in training]
            check("while training: the documented tb_* names (MaxText tags) are all there", not missing, missing)
            hung = {}
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                hung = scrape_values(port)
                if hung.get('tb_step{host="node1"}') == 39:
                    break
                time.sleep(0.1)
            time.sleep(0.5)
            hung = scrape_values(port)
            check("hang: tb_step stops at 39", hung.get('tb_step{host="node1"}') == 39, hung.get('tb_step{host="node1"}'))
            check("hang: busy-wait signature, 100% utilization at idle-level power",
                  hung.get('hw_gpu_utilization_percent{gpu="0",host="node1"}') == 100
                  and hung.get('hw_gpu_power_watts{gpu="0",host="node1"}', 999) < 320,
                  (hung.get('hw_gpu_utilization_percent{gpu="0",host="node1"}'),
                   hung.get('hw_gpu_power_watts{gpu="0",host="node1"}')))
        finally:
            for proc in (trainer, exporter):
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()


def start_exporter(args, extra, env=None):
    port = free_port()
    proc = subprocess.Popen([args.exporter, "--listen", f"127.0.0.1:{port}", "--host", "node7",
                             "--procfs", args.procfs, "--interval", "0"] + extra,
                            stderr=subprocess.PIPE, text=True, env=env)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2).read()
            return proc, port
        except OSError:
            time.sleep(0.1)
    return proc, port


def stop(proc):
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    return proc.stderr.read()


def with_nvml(args):
    """gpu_nvml through the fake libnvidia-ml.so.1, found by dlopen's own
    search (LD_LIBRARY_PATH) under the default soname."""
    absent = "/nonexistent/libnvidia-ml.so.1"
    r = subprocess.run([args.exporter, "--list-collectors", "--nvml-library", absent],
                       capture_output=True, text=True)
    check("--list-collectors says gpu_nvml is off and why", r.returncode == 0 and
          f"gpu_nvml\toff: cannot load {absent}" in r.stdout and "host\ton" in r.stdout, r.stdout + r.stderr)

    proc, port = start_exporter(args, ["--nvml-library", absent])
    for _ in range(3):
        scrape_values(port)
    stderr = stop(proc)
    check("no NVML library: one 'gpu_nvml off' line, not one per scrape",
          stderr.count("gpu_nvml off: cannot load") == 1, stderr)

    with tempfile.TemporaryDirectory() as tmp:
        state = os.path.join(tmp, "nvml-state")
        with open(state, "w") as f:
            f.write("gpu util=97 mem_util=41 power_mw=352500 temp=71 sm_mhz=1980 mem_mhz=2619 "
                    "mem_total=85899345920 mem_used=79456894976 pcie_replay=3 throttle=0x4 "
                    "sm_max_mhz=1980 mem_reserved=503316480 pids=4242:1610612736\n")
        env = dict(os.environ, LD_LIBRARY_PATH=args.fake_nvml_dir, JOBMON_FAKE_NVML_STATE=state)
        r = subprocess.run([args.exporter, "--list-collectors"], capture_output=True, text=True, env=env)
        check("--list-collectors: gpu_nvml on with the library on the search path",
              "gpu_nvml\ton" in r.stdout, r.stdout + r.stderr)
        proc, port = start_exporter(args, [], env)
        try:
            first = scrape_values(port)
            check("gpu_nvml: power from NVML's milliwatts",
                  first.get('hw_gpu_power_watts{gpu="0",host="node7"}') == 352.5, first)
            check("gpu_nvml: SM clock under type=\"sclk\" like gpu_amd",
                  first.get('hw_gpu_clock_mhz{gpu="0",type="sclk",host="node7"}') == 1980)
            check("gpu_nvml: collector success 1",
                  first.get('hw_collector_success{collector="gpu_nvml",host="node7"}') == 1)
            body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2).read().decode()
            lint = subprocess.run([args.promtool, "check", "metrics"], input=body, capture_output=True, text=True)
            check("promtool accepts a scrape with every collector on", lint.returncode == 0,
                  lint.stdout + lint.stderr)
            with open(state, "w") as f:
                f.write("gpu util=100 mem_util=41 power_mw=90000 temp=71\n")
            second = scrape_values(port)
            check("gpu_nvml: the next scrape has the new value (busy-wait: 100% at 90 W)",
                  second.get('hw_gpu_power_watts{gpu="0",host="node7"}') == 90 and
                  second.get('hw_gpu_utilization_percent{gpu="0",host="node7"}') == 100, second)
            check("gpu_nvml: values NVML stops reporting vanish (no ghost clocks)",
                  'hw_gpu_clock_mhz{gpu="0",type="sclk",host="node7"}' not in second)
        finally:
            stop(proc)

    r = subprocess.run([args.exporter, "--listen", "127.0.0.1:1", "--host", "n", "--interval", "5x"],
                       capture_output=True, text=True)
    check("a bad --interval is refused with exit 2", r.returncode == 2 and "invalid duration '5x'" in r.stderr,
          r.stderr)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--exporter", required=True)
    parser.add_argument("--procfs", required=True)
    parser.add_argument("--promtool", default="/usr/bin/promtool")
    parser.add_argument("--fake-trainer", required=True)
    parser.add_argument("--fake-nvml-dir", required=True)
    args = parser.parse_args()

    for wildcard in ("0.0.0.0:9400", "[::]:9400"):
        r = subprocess.run([args.exporter, "--listen", wildcard, "--host", "n"], capture_output=True, text=True)
        check(f"--listen {wildcard} is refused with exit 2", r.returncode == 2 and "refusing a wildcard" in r.stderr,
              r.stderr)
    r = subprocess.run([args.exporter, "--listen", "127.0.0.1:1", "--host", "n", "--collectors", "host,bogus"],
                       capture_output=True, text=True)
    check("an unknown collector is refused, naming the known ones",
          r.returncode == 2 and "unknown collector 'bogus'" in r.stderr and "host" in r.stderr, r.stderr)

    port = free_port()
    proc = subprocess.Popen([args.exporter, "--listen", f"127.0.0.1:{port}", "--host", "node7",
                             "--procfs", args.procfs], stderr=subprocess.PIPE, text=True)
    body = None
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and body is None:
            try:
                body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2).read().decode()
            except OSError:
                time.sleep(0.1)
        check("serves /metrics on the given address", body is not None)
        body = body or ""
        check("fixture values come through", 'hw_procs_running{host="node7"} 3' in body)
        unlabelled = [l for l in body.splitlines() if l.startswith("hw_") and 'host="node7"' not in l]
        check("every hw_* series carries host=\"node7\"", not unlabelled, unlabelled[:3])
        lint = subprocess.run([args.promtool, "check", "metrics"], input=body, capture_output=True, text=True)
        check("promtool check metrics accepts the scrape", lint.returncode == 0, lint.stdout + lint.stderr)
        check("bound to 127.0.0.1 only (not a wildcard)", listening_addresses(port) == ["0100007F"],
              listening_addresses(port))
        start = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=10)
        check("SIGTERM: exit 0", code == 0, code)
        check("SIGTERM: stops within 2 s", time.monotonic() - start < 2, time.monotonic() - start)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    with_fake_trainer(args)
    with_nvml(args)
    print(f"{sum(checks)} passed, {len(checks) - sum(checks)} failed")
    return 0 if all(checks) else 1


if __name__ == "__main__":
    sys.exit(main())
