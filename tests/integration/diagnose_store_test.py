#!/usr/bin/python3
"""diagnose_store: `jobmon diagnose --store` against a real central store,
Debian's VictoriaMetrics on 127.0.0.1 (a free port, a temp data dir,
stopped by pid on every path). The store is fed, through its
/api/v1/import/prometheus, three jobs' series in the same half hour with
the same metric names and hosts, as the plugin's remote_write labels them
(slurm_job_id, cluster, user):

  1001 on cluster "dev": an uncorrectable ECC error on n2's GPU 1
  1002 on cluster "dev": healthy
  1001 on cluster "other": an uncorrectable ECC error on n1's GPU 0

The hardware playbook must find n2/GPU 1 for 1001@dev and nothing else,
report 1002 clean, refuse 1001 without --cluster (two clusters hold it),
and, with [diagnose] store_url in a config and no diag dir anywhere, fall
back to the store for 1001 and say so on stderr and in the report.
1002's run also writes `--html`: one page with one PNG (the chart, drawn
by gnuplot) and the report's text, and nothing it would fetch. Run as
root, the page belongs to the user the diagnosis became (docs/diagnose.md,
"HTML report"): for a job Slurm does not list, nobody.

  diagnose_store_test.py --jobmon PATH [--victoria-metrics PATH]
"""
import argparse
import base64
import html
import json
import os
import pwd
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

HOSTS = ("n1", "n2")
GPUS = ("0", "1")
INTERVAL = 5


def fail(message):
    sys.exit(f"FAIL: {message}")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url, timeout=5):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.read().decode()


def job_lines(job, cluster, start, end, fault):
    """Prometheus text lines with ms timestamps, as remote_write stores them."""
    out = []
    for t in range(start, end + 1, INTERVAL):
        ms = t * 1000
        for host in HOSTS:
            ext = f'slurm_job_id="{job}",cluster="{cluster}",user="alice",host="{host}"'
            out.append(f'up{{{ext},job="jobmon-exporter",instance="{host}:9400"}} 1 {ms}')
            out.append(f'hw_collector_success{{{ext},collector="gpu"}} 1 {ms}')
            out.append(f'tb_step{{{ext}}} {(t - start) // 10} {ms}')
            for gpu in GPUS:
                g = f'{ext},gpu="{gpu}"'
                out.append(f'hw_gpu_power_watts{{{g}}} {650 + int(gpu)} {ms}')
                out.append(f'hw_gpu_utilization_percent{{{g}}} 97 {ms}')
                out.append(f'hw_gpu_temperature_celsius{{{g}}} 61 {ms}')
                errors = 0
                if fault == (host, gpu) and t >= start + (end - start) // 2:
                    errors = 2
                for kind, value in (("uncorrected", errors), ("corrected", 0)):
                    out.append(f'hw_gpu_ecc_errors_total{{{g},error="{kind}",'
                               f'counter="volatile"}} {value} {ms}')
    return out


def feed(url, lines):
    for i in range(0, len(lines), 20000):
        body = ("\n".join(lines[i:i + 20000]) + "\n").encode()
        request = urllib.request.Request(url + "/api/v1/import/prometheus", data=body,
                                         method="POST")
        with urllib.request.urlopen(request, timeout=30) as r:
            if r.status not in (200, 204):
                fail(f"import: HTTP {r.status}")
    get(url + "/internal/force_flush")


def diagnose(jobmon, args, cwd, env):
    p = subprocess.run([jobmon, "diagnose", *args], cwd=cwd, env=env, capture_output=True,
                       text=True, timeout=120)
    return p


def hardware(p, what):
    if p.returncode != 0:
        fail(f"{what}: exit {p.returncode}: {p.stderr.strip()[-2000:]}")
    report = json.loads(p.stdout)
    playbooks = [r for r in report["playbooks"] if r["playbook"] == "hardware"]
    if len(playbooks) != 1:
        fail(f"{what}: no hardware playbook in {list(r['playbook'] for r in report['playbooks'])}")
    return report, playbooks[0]


def ecc(playbook):
    return sorted((f["host"], f["gpu"]) for f in playbook["anomalies"]
                  if f["code"] == "ecc-uncorrectable")


def check_html(path, job, verdict, stderr):
    """The --html page: whole, one PNG inside, the report as text, no link out."""
    if "no chart" in stderr:
        fail(f"--html: {stderr.strip()[-1000:]} (scripts/install-deps.sh installs gnuplot-nox)")
    with open(path, encoding="utf-8") as f:
        page = f.read()
    if not page.startswith("<!DOCTYPE html>") or not page.rstrip().endswith("</html>"):
        fail(f"--html: not a whole HTML page: {page[:200]!r} ... {page[-100:]!r}")
    images = re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]*)"', page)
    if len(images) != 1 or page.count("data:image/png;base64,") != 1:
        fail(f"--html: {len(images)} PNG images, want 1")
    png = base64.b64decode(images[0], validate=True)
    if png[:8] != b"\x89PNG\r\n\x1a\n" or png[12:16] != b"IHDR":
        fail(f"--html: the image is not a PNG: {png[:16]!r}")
    width, height = struct.unpack(">II", png[16:24])
    if width == 0 or height == 0:
        fail(f"--html: a {width}x{height} PNG")
    # The report's text is the job's and may name the store's URL; outside it
    # (markup, attributes, style) nothing points anywhere.
    markup = re.sub(r"<pre>.*?</pre>", "", page, flags=re.S)
    for scheme in ("http://", "https://"):
        if scheme in markup:
            fail(f"--html: {scheme} in the page's markup")
    for attribute in re.findall(r'(?:src|href|action)="([^"]*)"', page):
        if not attribute.startswith("data:image/png;base64,"):
            fail(f"--html: a reference to {attribute[:100]!r}")
    texts = [html.unescape(t) for t in re.findall(r"<pre>(.*?)</pre>", page, flags=re.S)]
    if not any(f"## TSDB Diagnosis: {job}" in t and f"**Verdict:** `{verdict}`" in t
               for t in texts):
        fail(f"--html: the report's text is not in the page: {texts!r}"[:2000])
    if f"<title>Job {job}: hardware {verdict}</title>" not in page:
        fail(f"--html: title {re.findall(r'<title>.*?</title>', page)}")
    return width, height, len(png), len(page)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobmon", required=True)
    parser.add_argument("--victoria-metrics", default="/usr/bin/victoria-metrics")
    args = parser.parse_args()
    args.jobmon = os.path.abspath(args.jobmon)  # run from a directory of the test's own
    if not os.access(args.victoria_metrics, os.X_OK):
        fail(f"{args.victoria_metrics} missing: install victoria-metrics "
             "(scripts/install-deps.sh)")

    work = tempfile.mkdtemp(prefix="jobmon-store-test-")
    # The --html page's directory: as root the diagnosis writes as the job's
    # user (here nobody), who cannot enter `work` (0700).
    pages = tempfile.mkdtemp(prefix="jobmon-store-html-")
    os.chmod(pages, 0o1777)
    vm = None
    try:
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        with open(os.path.join(work, "vm.log"), "w") as log:
            vm = subprocess.Popen([args.victoria_metrics, f"-httpListenAddr=127.0.0.1:{port}",
                                   f"-storageDataPath={work}/data", "-retentionPeriod=1",
                                   "-search.latencyOffset=0s"],
                                  stdout=log, stderr=subprocess.STDOUT,
                                  stdin=subprocess.DEVNULL)
        for _ in range(100):
            if vm.poll() is not None:
                fail(f"victoria-metrics exited {vm.returncode}: "
                     f"{open(os.path.join(work, 'vm.log')).read()[-2000:]}")
            try:
                if get(url + "/health", 1).strip() == "OK":
                    break
            except OSError:
                time.sleep(0.1)
        else:
            fail("victoria-metrics did not answer /health")

        end = int(time.time()) - 600
        start = end - 1800
        lines = (job_lines(1001, "dev", start, end, ("n2", "1")) +
                 job_lines(1002, "dev", start, end, None) +
                 job_lines(1001, "other", start, end, ("n1", "0")))
        feed(url, lines)
        print(f"fed {len(lines)} samples to VictoriaMetrics at {url}")
        # The store mixes the jobs: unconfined, n2's GPU 1 has all three's.
        mixed = json.loads(get(url + "/api/v1/query?query=" + urllib.parse.quote(
            'count(hw_gpu_ecc_errors_total{host="n2",gpu="1",error="uncorrected"})') +
            f"&time={end}"))["data"]["result"]
        if not mixed or mixed[0]["value"][1] != "3":
            fail(f"the store should hold three jobs' series for n2/1: {mixed}")

        env = dict(os.environ)
        env.pop("JOBMON_CONFIG", None)
        env.pop("JOBMON_STORE_TOKEN", None)
        empty = os.path.join(work, "empty.toml")
        open(empty, "w").close()
        cwd = os.path.join(work, "cwd")  # no jobmon-diag-<id> here
        os.mkdir(cwd)
        common = ["--playbook", "hardware", "--json", "-c", empty]

        p = diagnose(args.jobmon, ["1001", "--store", url, "--cluster", "dev", *common], cwd, env)
        report, faulty = hardware(p, "1001@dev")
        if faulty["verdict"] != "hardware-fault" or ecc(faulty) != [("n2", "1")]:
            fail(f"1001@dev: verdict {faulty['verdict']}, ECC findings {ecc(faulty)}: want "
                 "hardware-fault on n2/1 only (n1/0 is the other cluster's job 1001)")
        store = report.get("central_store") or {}
        if store.get("url") != url or store.get("fallback") is not False or \
                'slurm_job_id="1001"' not in store.get("matchers", "") or \
                "central store" not in report["source"]:
            fail(f"1001@dev: source {report['source']!r}, central_store {store}")
        if sorted(report["context"]["hosts"]) != list(HOSTS):
            fail(f"1001@dev: hosts {report['context']['hosts']}")
        job_range = report["context"]["job_range"]
        if abs(job_range["start"] - start) > INTERVAL or abs(job_range["end"] - end) > INTERVAL:
            fail(f"1001@dev: job range {job_range}, fed {start}..{end}")
        print(f"1001@dev: {faulty['verdict']}, ECC on {ecc(faulty)}, "
              f"job range {job_range['end'] - job_range['start']:.0f}s")

        page = os.path.join(pages, "1002.html")
        p = diagnose(args.jobmon, ["1002", "--store", url, "--html", page, *common], cwd, env)
        _, healthy = hardware(p, "1002")
        if healthy["verdict"] != "clean" or ecc(healthy):
            fail(f"1002: verdict {healthy['verdict']}, ECC {ecc(healthy)}: want clean "
                 "(the same hosts' faults belong to job 1001)")
        width, height, png_bytes, page_bytes = check_html(page, 1002, "clean", p.stderr)
        owner = os.stat(page).st_uid
        writer = pwd.getpwnam("nobody").pw_uid if os.geteuid() == 0 else os.geteuid()
        if owner != writer:
            fail(f"--html: the page belongs to uid {owner}, want {writer} (the diagnosis' user)")
        print(f"1002: {healthy['verdict']}; --html: {page_bytes} bytes, one "
              f"{width}x{height} PNG of {png_bytes} bytes, the report inside, uid {owner}'s")

        p = diagnose(args.jobmon, ["1001", "--store", url, *common], cwd, env)
        if p.returncode == 0 or "clusters dev, other" not in p.stderr:
            fail(f"1001 without --cluster: exit {p.returncode}, stderr {p.stderr.strip()!r}")
        print("1001 without --cluster: refused, two clusters hold it")

        config = os.path.join(work, "jobmon.toml")
        with open(config, "w") as f:
            f.write(f'[diagnose]\nstore_url = "{url}"\ncluster = "dev"\n')
        fallback = ["--playbook", "hardware", "--json", "-c", config]
        p = diagnose(args.jobmon, ["1001", *fallback], cwd, env)
        report, faulty = hardware(p, "1001 by fallback")
        if "falling back to the central store " + url not in p.stderr:
            fail(f"fallback: stderr does not say so: {p.stderr.strip()!r}")
        if (report.get("central_store") or {}).get("fallback") is not True or \
                ecc(faulty) != [("n2", "1")]:
            fail(f"fallback: central_store {report.get('central_store')}, ECC {ecc(faulty)}")
        print("1001 by [diagnose] store_url: fell back, said so, same finding")
        print("PASS")
    finally:
        if vm is not None and vm.poll() is None:
            os.kill(vm.pid, signal.SIGTERM)
            try:
                vm.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.kill(vm.pid, signal.SIGKILL)
                vm.wait()
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(pages, ignore_errors=True)


if __name__ == "__main__":
    main()
