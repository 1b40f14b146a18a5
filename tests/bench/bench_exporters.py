#!/usr/bin/python3
"""The nodes' exporters for monitor_bench.py's scrape mode: one process per
range of jobs (as many as the open-file limit asks for), run by the bench
inside its network namespace (ip netns exec), listening on one port per job
of its range on each node address (never a wildcard address) and
answering GET /metrics with the families the store mode's generator imports
(monitor_bench.host_exposition), so both modes carry identical evidence.

Bodies are precomputed once per scrape interval as whole HTTP responses
(16 of them: hosts x training/busy-wait x 4 value variants); a request costs
a lookup and a write. A hung job's GPUs busy-wait from the time the bench
writes to the hang-at file (utilization 100%, power at idle).

Usage: bench_exporters.py CONFIG.json; prints "ready" once every port listens.
"""

import asyncio
import json
import resource
import sys
import time

from monitor_bench import host_exposition


def responses(config, tick):
    """(host index, training, variant) -> the whole HTTP response at tick."""
    out = {}
    for h, host in enumerate(config["hosts"]):
        for training in (True, False):
            for variant in range(4):
                body = (host_exposition(config["gpus"], training, variant)
                        .replace("@H", host).replace("@C", str(tick * 3)).encode())
                head = (f"HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\n"
                        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode()
                out[(h, training, variant)] = head + body
    return out


class State:
    def __init__(self, config):
        self.config = config
        self.hang = set(config["hang"])
        self.hang_at = float("inf")
        self.tick = None
        self.bodies = {}
        self.served = 0
        self.refresh()

    def refresh(self):
        interval = self.config["interval"]
        tick = int(time.time() // interval)
        if tick != self.tick:
            self.tick, self.bodies = tick, responses(self.config, tick)
        if self.hang_at == float("inf"):
            try:
                with open(self.config["hang_at_file"]) as f:
                    self.hang_at = float(f.read())
            except (OSError, ValueError):
                pass

    def response(self, job, h):
        training = job not in self.hang or time.time() <= self.hang_at
        # The variant as the store's generator picks it for this job and host.
        return self.bodies[(h, training, (self.tick + job + h) % 4)]


class Exporter(asyncio.Protocol):
    def __init__(self, state, job, h):
        self.state, self.job, self.h = state, job, h
        self.buffer = b""

    def connection_made(self, transport):
        self.transport = transport

    def data_received(self, data):
        self.buffer += data
        if b"\r\n\r\n" not in self.buffer:
            if len(self.buffer) > 8192:
                self.transport.close()
            return
        if self.buffer.startswith(b"GET /metrics "):
            self.transport.write(self.state.response(self.job, self.h))
        else:
            self.transport.write(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n"
                                 b"Connection: close\r\n\r\n")
        self.state.served += 1
        self.transport.close()


async def serve(config):
    state = State(config)
    loop = asyncio.get_running_loop()
    servers = []
    first, end = config["job_range"]
    for h, ip in enumerate(config["ips"]):
        for job in range(first, end):
            servers.append(await loop.create_server(
                lambda job=job, h=h: Exporter(state, job, h), ip, config["first_port"] + job,
                backlog=64, reuse_address=True))
    print("ready", flush=True)
    while True:
        await asyncio.sleep(0.5)
        state.refresh()


def main():
    with open(sys.argv[1]) as f:
        config = json.load(f)
    # One socket per job and node listening, plus the connections in flight.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    first, end = config["job_range"]
    if len(config["ips"]) * (end - first) + config["fd_slack"] > hard:
        print(f"bench_exporters: {len(config['ips'])} x {end - first} ports need more than "
              f"the open-file limit ({hard})", file=sys.stderr)
        return 2
    try:
        asyncio.run(serve(config))
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
