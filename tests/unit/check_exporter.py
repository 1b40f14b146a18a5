#!/usr/bin/python3
"""jobmon-exporter as a process: wildcard binds refused, a scrape over
loopback of a fixture procfs passes Debian's `promtool check metrics`, every
hw_* series has the host label, the socket is bound to the given address
only, and SIGTERM ends it promptly with exit 0."""
import argparse
import signal
import socket
import subprocess
import sys
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


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--exporter", required=True)
    parser.add_argument("--procfs", required=True)
    parser.add_argument("--promtool", default="/usr/bin/promtool")
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
    print(f"{sum(checks)} passed, {len(checks) - sum(checks)} failed")
    return 0 if all(checks) else 1


if __name__ == "__main__":
    sys.exit(main())
