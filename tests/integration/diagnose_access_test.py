#!/usr/bin/python3
"""diagnose_access_live: OpenTsdb against a real Prometheus (Debian's
/usr/bin/prometheus), no dev cluster. A tiny TSDB made with promtool is
opened raw and as a tsdb.tar.zst checked against a manifest; the instance
must bind only 127.0.0.1, skip a port this test holds, answer queries, and
be gone with its temp dir after the session ends, whether it ends normally
or the driver gets SIGTERM mid-session.

  diagnose_access_test.py --driver PATH
"""
import argparse
import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

START = 1700000000


def fail(message):
    sys.exit(f"FAIL: {message}")


def make_tsdb(work):
    lines = ["# TYPE hw_gpu_utilization_percent gauge"]
    for host, value in (("node001", 97), ("node002", 12)):
        for gpu in ("0", "1"):
            for i in range(60):
                lines.append(f'hw_gpu_utilization_percent{{gpu="{gpu}",host="{host}"}} '
                             f'{value} {START + 15 * i}')
    lines.append("# EOF")
    with open(os.path.join(work, "in.om"), "w") as f:
        f.write("\n".join(lines) + "\n")
    tsdb = os.path.join(work, "tsdb")
    subprocess.run(["promtool", "tsdb", "create-blocks-from", "openmetrics",
                    os.path.join(work, "in.om"), tsdb], check=True, stdout=subprocess.DEVNULL)
    return tsdb


def free_port_from(first):
    for port in range(first, first + 200):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
                return port
            except OSError:
                continue
    fail("no free port")


def prometheus_pids(tsdb_dir):
    """Processes whose command line names tsdb_dir (our read-only instance)."""
    pids = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                args = f.read().split(b"\0")
        except OSError:
            continue
        if any(a == f"--storage.tsdb.path={tsdb_dir}".encode() for a in args):
            pids.append(int(pid))
    return pids


def listening_sockets(pid):
    """(address hex, port) of every LISTEN socket the process holds."""
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            link = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if link.startswith("socket:["):
            inodes.add(link[8:-1])
    out = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as f:
            next(f)
            for line in f:
                fields = line.split()
                if fields[3] == "0A" and fields[9] in inodes:
                    address, port = fields[1].split(":")
                    out.append((address, int(port, 16)))
    return out


def start_driver(driver, target, first_port, temp_parent, stderr=None):
    proc = subprocess.Popen([driver, target, "--first-port", str(first_port),
                             "--temp-parent", temp_parent],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, text=True)
    facts = {"hosts": [], "series": {}}
    deadline = time.time() + 90
    for line in proc.stdout:
        words = line.split()
        if not words:
            continue
        if words[0] == "ready":
            return proc, facts
        if words[0] in ("url", "tsdb", "live"):
            facts[words[0]] = words[1] if len(words) > 1 else ""
        if words[0] == "range":
            facts["range"] = (float(words[1]), float(words[2]))
        if words[0] == "hosts":
            facts["hosts"] = words[1:]
        if words[0] == "series":
            facts["series"][words[1]] = (int(words[2]), float(words[3]))
        if time.time() > deadline:
            break
    proc.kill()
    fail(f"driver for {target} did not become ready (exit {proc.wait()})")


def wait_gone(pid, seconds=15):
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().split(")")[-1].split()[0] == "Z":
                    return True
        except OSError:
            return True
        time.sleep(0.1)
    return False


def check_session(driver, target, held_port, temp_parent, end_with, wal_only=False):
    """end_with: None (stdin says close) or the signal sent mid-session."""
    name = f"{os.path.basename(target)} ({end_with.name if end_with else 'close'})"
    proc, facts = start_driver(driver, target, held_port, temp_parent)
    url = facts.get("url", "")
    if not url.startswith("http://127.0.0.1:"):
        fail(f"{name}: url {url!r}")
    port = int(url.rsplit(":", 1)[1])
    if port == held_port:
        fail(f"{name}: took the port this test holds ({held_port})")
    if port < held_port:
        fail(f"{name}: port {port} below the scan's start {held_port}")
    lo, hi = facts.get("range", (0, 0))
    if wal_only:
        # No blocks: the range is the head's, which the instance replayed.
        if not (time.time() - 600 < lo <= hi <= time.time() + 60):
            fail(f"{name}: range {facts.get('range')} is not the replayed WAL's")
    else:
        if sorted(facts["hosts"]) != ["node001", "node002"]:
            fail(f"{name}: hosts {facts['hosts']}")
        series = facts["series"]
        if series.get("node001", (0, 0))[1] != 97 or series.get("node002", (0, 0))[1] != 12:
            fail(f"{name}: series {series}")
        if series["node001"][0] < 50:
            fail(f"{name}: only {series['node001'][0]} samples")
        if abs(lo - START) > 1 or abs(hi - (START + 59 * 15)) > 1:
            fail(f"{name}: range {facts.get('range')}")
    tsdb = facts["tsdb"]
    temp_dir = os.path.dirname(tsdb)
    if os.path.dirname(temp_dir) != temp_parent:
        fail(f"{name}: temp dir {temp_dir} not under {temp_parent}")
    if os.stat(temp_dir).st_mode & 0o777 != 0o700:
        fail(f"{name}: temp dir mode {oct(os.stat(temp_dir).st_mode)}")
    pids = prometheus_pids(tsdb)
    if len(pids) != 1:
        fail(f"{name}: prometheus processes over {tsdb}: {pids}")
    pid = pids[0]
    sockets = listening_sockets(pid)
    if sockets != [("0100007F", port)]:
        fail(f"{name}: prometheus listens on {sockets}, not only 127.0.0.1:{port}")
    if os.geteuid() == 0 and os.stat(f"/proc/{pid}").st_uid == 0:
        fail(f"{name}: prometheus runs as root")
    if end_with:
        proc.send_signal(end_with)
        code = proc.wait(timeout=30)
        if code != 128 + end_with:
            fail(f"{name}: driver exit {code} after {end_with.name}, not {128 + end_with}")
    else:
        out, _ = proc.communicate("close\n", timeout=30)
        if "closed" not in out or proc.returncode != 0:
            fail(f"{name}: driver exit {proc.returncode}, output {out!r}")
    if not wait_gone(pid):
        fail(f"{name}: prometheus {pid} still running")
    if os.path.exists(temp_dir):
        fail(f"{name}: temp dir {temp_dir} left behind")
    print(f"ok: {name}: 127.0.0.1:{port} (held {held_port}), pid {pid} gone, temp dir removed")


def run_own_prometheus(work, tsdb, scrape_self):
    """A Prometheus of this test's own over `tsdb` (as a job's live one)."""
    port = free_port_from(29190)
    run_own_prometheus.port = port
    config = os.path.join(work, f"own-{port}.yml")
    with open(config, "w") as f:
        if scrape_self:
            f.write("global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: self\n"
                    f"    static_configs:\n      - targets: ['127.0.0.1:{port}']\n")
    log = open(os.path.join(work, f"own-{port}.log"), "w")
    proc = subprocess.Popen(["/usr/bin/prometheus", f"--storage.tsdb.path={tsdb}",
                             f"--config.file={config}", f"--web.listen-address=127.0.0.1:{port}"],
                            stdout=log, stderr=log)
    log.close()
    for _ in range(300):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return proc
        except OSError:
            time.sleep(0.1)
    proc.kill()
    fail("this test's own Prometheus did not start")


def check_wal_only(driver, work, held_port, temp_parent):
    """A TSDB with only wal/: the read-only instance replays it."""
    tsdb = os.path.join(work, "wal_tsdb")
    proc = run_own_prometheus(work, tsdb, scrape_self=True)
    # Its first scrape comes a few seconds after the start; then two more.
    url = f"http://127.0.0.1:{run_own_prometheus.port}/api/v1/status/tsdb"
    for _ in range(300):
        try:
            with urllib.request.urlopen(url, timeout=5) as answer:
                if json.load(answer)["data"]["headStats"]["numSeries"] > 0:
                    break
        except OSError:
            pass
        time.sleep(0.1)
    else:
        fail("this test's own Prometheus scraped nothing")
    query = (f"http://127.0.0.1:{run_own_prometheus.port}/api/v1/query?"
             + urllib.parse.urlencode({"query": "count_over_time(up[1m])"}))
    for _ in range(100):
        try:
            with urllib.request.urlopen(query, timeout=5) as answer:
                result = json.load(answer)["data"]["result"]
                if result and float(result[0]["value"][1]) >= 3:
                    break
        except OSError:
            pass
        time.sleep(0.1)
    else:
        fail("this test's own Prometheus did not scrape three times in 10 s")
    proc.terminate()
    proc.wait(timeout=30)
    blocks = [d for d in os.listdir(tsdb) if len(d) == 26]
    if blocks or not os.listdir(os.path.join(tsdb, "wal")):
        fail(f"the WAL-only TSDB has blocks {blocks} or no WAL")
    check_session(driver, tsdb, held_port, temp_parent, None, wal_only=True)


def check_live(driver, work, tsdb, held_port, temp_parent):
    """A TSDB a Prometheus serves: copied (blocks only), never served twice."""
    live = os.path.join(work, "live_tsdb")
    shutil.copytree(tsdb, live)
    own = run_own_prometheus(work, live, scrape_self=False)
    try:
        proc, facts = start_driver(driver, live, held_port, temp_parent, stderr=subprocess.PIPE)
        served = prometheus_pids(live)
        if served != [own.pid]:
            fail(f"live TSDB served by {served}, not only by this test's {own.pid}")
        if facts["tsdb"].startswith(live) or sorted(facts["hosts"]) != ["node001", "node002"]:
            fail(f"live TSDB: session over {facts['tsdb']}, hosts {facts['hosts']}")
        _, progress = proc.communicate("close\n", timeout=30)
        if "is live" not in progress or "blocks only" not in progress:
            fail(f"live TSDB not recognised as live: {progress!r}")
        if own.poll() is not None:
            fail("the live Prometheus was stopped")
        if not os.path.isdir(os.path.join(live, "wal")):
            fail("the live TSDB lost its WAL")
        print(f"ok: live TSDB: a copy of its blocks served, its Prometheus {own.pid} untouched")
        check_running_job(driver, work, live, held_port, temp_parent, own)
    finally:
        own.terminate()
        own.wait(timeout=30)


def check_running_job(driver, work, live, held_port, temp_parent, own):
    """A running job's diag dir: its own Prometheus is queried, none started."""
    diag = os.path.join(work, "jobmon-diag-88")
    os.makedirs(diag)
    manifest = {"schema": "jobmon.manifest/v1", "job_id": 88, "state": "running",
                "diag_dir": diag, "head_node": socket.gethostname(), "tsdb_dir": live,
                "prometheus": {"address": "127.0.0.1", "port": run_own_prometheus.port,
                               "url": ""}}
    with open(os.path.join(diag, "manifest.json"), "w") as f:
        json.dump(manifest, f)
    proc, facts = start_driver(driver, diag, held_port, temp_parent)
    proc.communicate("close\n", timeout=30)
    if facts.get("url") != f"http://127.0.0.1:{run_own_prometheus.port}" or facts.get("live") != "1":
        fail(f"running job: session {facts}")
    if facts.get("tsdb") or os.listdir(temp_parent) or prometheus_pids(live) != [own.pid]:
        fail(f"running job: something was started ({facts}, {os.listdir(temp_parent)})")
    if sorted(facts["hosts"]) != ["node001", "node002"]:
        fail(f"running job: hosts {facts['hosts']}")
    # Its blocks are not ours to read: the range comes from its /metrics.
    lo, hi = facts.get("range", (0, 0))
    if abs(lo - START) > 1 or abs(hi - (START + 59 * 15)) > 1:
        fail(f"running job: range {facts.get('range')}")
    if facts["series"].get("node001", (0, 0))[1] != 97:
        fail(f"running job: series {facts['series']}")
    # Another Prometheus on the job's port (not serving its TSDB) is refused.
    manifest["tsdb_dir"] = "/elsewhere/prometheus"
    with open(os.path.join(diag, "manifest.json"), "w") as f:
        json.dump(manifest, f)
    run = subprocess.run([driver, diag, "--temp-parent", temp_parent], capture_output=True,
                         text=True, stdin=subprocess.DEVNULL)
    if run.returncode == 0 or "not job 88's TSDB" not in run.stderr:
        fail(f"another Prometheus on the job's port: exit {run.returncode}, {run.stderr!r}")
    print("ok: running job: its own Prometheus queried, a stranger on its port refused")


def make_archive(work, tsdb):
    diag = os.path.join(work, "jobmon-diag-77")
    os.makedirs(diag)
    archive = os.path.join(diag, "tsdb.tar.zst")
    subprocess.run(["tar", "--zstd", "-cf", archive, "-C", os.path.dirname(tsdb),
                    "--transform", "s,^tsdb,prometheus,", "tsdb"], check=True)
    with open(archive, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    manifest = {"schema": "jobmon.manifest/v1", "job_id": 77, "state": "archived",
                "diag_dir": diag, "head_node": "elsewhere",
                "archive": {"path": archive, "sha256": digest, "bytes": os.path.getsize(archive),
                            "compression_level": 3, "raw_tsdb_kept": False}}
    with open(os.path.join(diag, "manifest.json"), "w") as f:
        json.dump(manifest, f)
    return diag, manifest


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--driver", required=True)
    args = parser.parse_args()
    if not shutil.which("promtool") or not os.path.exists("/usr/bin/prometheus"):
        print("SKIP: no promtool or /usr/bin/prometheus")
        return 77
    work = tempfile.mkdtemp(prefix="diagnose_access_")
    os.chmod(work, 0o755)  # a Prometheus run as nobody reaches its temp dir in here
    temp_parent = os.path.join(work, "tmp")
    os.makedirs(temp_parent, mode=0o755)
    try:
        tsdb = make_tsdb(work)
        held_port = free_port_from(19190)
        holder = socket.socket()
        holder.bind(("127.0.0.1", held_port))
        holder.listen(1)
        try:
            for end_with in (None, signal.SIGTERM, signal.SIGINT):
                check_session(args.driver, tsdb, held_port, temp_parent, end_with)
            check_live(args.driver, work, tsdb, held_port, temp_parent)
            check_wal_only(args.driver, work, held_port, temp_parent)
            diag, manifest = make_archive(work, tsdb)
            shutil.rmtree(tsdb)  # only the archive is left to serve
            for end_with in (None, signal.SIGTERM):
                check_session(args.driver, diag, held_port, temp_parent, end_with)
            # A tampered archive is refused before anything starts.
            manifest["archive"]["sha256"] = "0" * 64
            with open(os.path.join(diag, "manifest.json"), "w") as f:
                json.dump(manifest, f)
            run = subprocess.run([args.driver, diag, "--temp-parent", temp_parent],
                                 capture_output=True, text=True, stdin=subprocess.DEVNULL)
            if run.returncode == 0 or "sha256" not in run.stderr:
                fail(f"tampered archive: exit {run.returncode}, {run.stderr!r}")
            if os.listdir(temp_parent):
                fail(f"tampered archive left {os.listdir(temp_parent)}")
            print("ok: tampered archive refused")
        finally:
            holder.close()
    finally:
        shutil.rmtree(work)
    return 0


if __name__ == "__main__":
    sys.exit(main())
