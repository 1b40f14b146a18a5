#!/usr/bin/env python3
"""A stand-in for one Ray node's metrics, for what cannot run here (Ray is
not installable on the dev cluster; docs/ray.md).

Faithful to Ray 2.32.0: it serves, at any path (prometheus_client's
start_http_server answers every path), the node gauges Ray's reporter agent
exports (dashboard/modules/reporter/reporter_agent.py METRICS_GAUGES, the
"ray_" prefix of python/ray/_private/metrics_agent.py, labels ip, Version,
SessionName, and GpuIndex, GpuDeviceName for the GPU ones; gram in MiB as
Ray records it). With --discovery-file (the head) it also rewrites Ray's
Prometheus service-discovery file every 5 s, atomically, as
PrometheusServiceDiscoveryWriter does:
[{"labels": {"job": "ray"}, "targets": ["ip:port", ...]}].

  fake_ray_node.py --listen IP:PORT [--discovery-file PATH --targets IP:PORT,...]
                   [--gpus N] [--seconds S]
"""

import argparse
import http.server
import json
import os
import threading
import time

SESSION = "session_2026-11-28_12-00-00_000000_4100"


def metrics(ip, gpus, started):
    tags = f'ip="{ip}",SessionName="{SESSION}",Version="2.32.0"'
    t = time.time() - started
    lines = []

    def gauge(name, help_text, value, labels=tags):
        lines.append(f"# HELP ray_{name} {help_text}")
        lines.append(f"# TYPE ray_{name} gauge")
        lines.append(f"ray_{name}{{{labels}}} {value}")

    gauge("node_cpu_utilization", "Total CPU usage on a ray node", 40 + 10 * (int(t) % 3))
    gauge("node_cpu_count", "Total CPUs available on a ray node", 16)
    gauge("node_mem_used", "Memory usage on a ray node", 8 << 30)
    gauge("node_mem_available", "Memory available on a ray node", 120 << 30)
    gauge("node_mem_total", "Total memory on a ray node", 128 << 30)
    for index in range(gpus):
        gpu = f'{tags},GpuDeviceName="NVIDIA H100 80GB HBM3",GpuIndex="{index}"'
        gauge("node_gpus_utilization", "Total GPUs usage on a ray node", 97, gpu)
        gauge("node_gram_used", "Total GPU RAM usage on a ray node", 61440, gpu)
        gauge("node_gram_available", "Total GPU RAM available on a ray node", 81559 - 61440, gpu)
    return "\n".join(lines) + "\n"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--listen", required=True, help="IP:PORT for the metrics endpoint")
    p.add_argument("--discovery-file", help="write Ray's service-discovery file here (the head)")
    p.add_argument("--targets", default="", help="every node's IP:PORT for the discovery file")
    p.add_argument("--gpus", type=int, default=0)
    p.add_argument("--seconds", type=float, default=600, help="exit after this long")
    args = p.parse_args()
    ip, port = args.listen.rsplit(":", 1)
    started = time.time()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = metrics(ip, args.gpus, started).encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *unused):
            pass

    server = http.server.ThreadingHTTPServer((ip, int(port)), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    while time.time() - started < args.seconds:
        if args.discovery_file:
            targets = [t for t in args.targets.split(",") if t] or [args.listen]
            tmp = os.path.join(os.path.dirname(args.discovery_file),
                               "tmp_" + os.path.basename(args.discovery_file))
            with open(tmp, "w") as f:
                json.dump([{"labels": {"job": "ray"}, "targets": targets}], f)
            os.replace(tmp, args.discovery_file)
        time.sleep(5)
    server.shutdown()


if __name__ == "__main__":
    main()
