#!/usr/bin/env python3
"""A stand-in for a Ray Train job's driver output, for what cannot run here
(Ray is not installable on the dev cluster; docs/ray.md).

Faithful to Ray 2.32.0 (ray-project/ray tag ray-2.32.0): every line Ray
itself would print is built from the format in Ray's source, named beside
it; the training lines are the job's own (`step N loss X`). It prints what
the driver's stdout/stderr would hold with RAY_DEDUP_LOGS=0 (every worker
line forwarded; --dedup folds them as Ray's default does) and colours on
(Ray forces ANSI codes; colorama.init(strip=False) in
python/ray/autoscaler/_private/cli_logger.py).

  fake_ray_driver.py --scenario NAME [--steps N] [--fault-at S] [--step-sleep SEC]
                     [--head-ip A --worker-ip B] [--dedup]

Scenarios: healthy, actor-died, node-died, memory-monitor-oom,
object-store-full, task-error, gcs-unreachable, actor-hang (the worker on
the second node stops at --fault-at; the driver waits until killed).
"""

import argparse
import os
import random
import re
import sys
import time

CYAN, YELLOW, GREEN, RESET = "\x1b[36m", "\x1b[33m", "\x1b[32m", "\x1b[0m"
HEAD_IP, WORKER_IP = "10.213.0.11", "10.213.0.12"


def prefix(name, pid, ip):
    # python/ray/_private/worker.py print_worker_logs: f"{color_pre}({prefix_for(data)}{pid}
    # {ip_prefix}){color_post} {message}", ip left out on the driver's own node.
    ip_part = "" if ip == HEAD_IP else f", ip={ip}"
    return f"{CYAN}({name} pid={pid}{ip_part}){RESET} "


class Deduplicator:
    """Ray's LogDeduplicator (python/ray/_private/ray_logging/__init__.py,
    Ray 2.32; on by default: RAY_DEDUP_LOGS, a 5 s window): a worker line
    whose words without digits were already seen from another (ip, pid) is
    held and counted; when a later line arrives and the oldest held pattern
    is older than the window, its latest line is printed with the latest
    source's prefix and " [repeated Nx across cluster]" in green (the
    first time with the notice of _warn_once). Held lines are printed at
    the driver's clean exit (worker.py disconnect's flush), never on a kill."""

    NUMBERS = re.compile(r"(\d+|0x[0-9a-fA-F]+)")
    NOTICE = (" (Ray deduplicates logs by default. Set RAY_DEDUP_LOGS=0 to disable log "
              "deduplication, or see https://docs.ray.io/en/master/ray-observability/user-guides/"
              "configure-logging.html#log-deduplication for more options.)")

    def __init__(self, window_s=5):
        self.window_s = window_s
        self.recent = {}  # key -> [timestamp, count, line, (name, pid, ip), sources]
        self.warned = False

    def formatted(self, state):
        notice = "" if self.warned else self.NOTICE
        self.warned = True
        return state[2] + f"{GREEN} [repeated {state[1]}x across cluster]{notice}{RESET}"

    def emit(self, name, pid, ip, line, err=False):
        now = time.time()
        printed = []
        key = " ".join(w for w in line.split() if not self.NUMBERS.search(w))
        if key == "":
            printed.append(((name, pid, ip), line))
        elif key in self.recent:
            state = self.recent[key]
            state[4].add((ip, pid))
            if len(state[4]) > 1:
                state[1] += 1
                state[2], state[3] = line, (name, pid, ip)
            else:
                printed.append(((name, pid, ip), line))
        else:
            self.recent[key] = [now, 0, line, (name, pid, ip), {(ip, pid)}]
            printed.append(((name, pid, ip), line))
        while self.recent:
            oldest = next(iter(self.recent))
            state = self.recent[oldest]
            if now - state[0] < self.window_s:
                break
            del self.recent[oldest]
            if state[1] > 1:
                printed.append((state[3], self.formatted(state)))
                state[0], state[1] = now, 0
                self.recent[oldest] = state
            elif state[1] > 0:
                printed.append((state[3], state[2]))
        for meta, text in printed:
            out(prefix(*meta) + text, err)

    def flush(self):
        for state in self.recent.values():
            if state[1] > 1:
                out(prefix(*state[3]) + self.formatted(state))
            elif state[1] > 0:
                out(prefix(*state[3]) + state[2])
        self.recent.clear()


DEDUP = None  # a Deduplicator with --dedup


def worker(name, pid, ip, line, err=False):
    # A worker's line as the driver prints it (print_to_stdstream).
    if DEDUP:
        DEDUP.emit(name, pid, ip, line, err)
    else:
        out(prefix(name, pid, ip) + line, err)


def raylet(line):
    # listen_error_messages: {"lines": [msg], "pid": "raylet"} -> "(raylet) msg", yellow.
    return f"{YELLOW}(raylet){RESET} {line}"


def out(line, err=False):
    print(line, file=sys.stderr if err else sys.stdout, flush=True)


def hexid(n):
    return "".join(random.choice("0123456789abcdef") for _ in range(n))


def traceback_to(frames, last):
    out("Traceback (most recent call last):", err=True)
    for path, line, func, code in frames:
        out(f'  File "{path}", line {line}, in {func}', err=True)
        out(f"    {code}", err=True)
    for piece in last.split("\n"):
        out(piece, err=True)


DRIVER_FRAMES = [
    ("/home/alice/train_ray.py", 88, "<module>", "result = trainer.fit()"),
    ("/usr/lib/python3/dist-packages/ray/train/base_trainer.py", 638, "fit", "raise result.error"),
]


def actor_died_message(pid, ip, cause):
    # python/ray/exceptions.py ActorDiedError: BASE_ERROR_MSG, then the
    # ActorDiedErrorContext fields, "\n"-joined, then the cause's message.
    return "\n".join([
        "ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.",
        "\tclass_name: RayTrainWorker",
        f"\tactor_id: {hexid(32)}",
        f"\tpid: {pid}",
        "\tname: ",
        f"\tnamespace: {hexid(8)}-{hexid(4)}",
        f"\tip: {ip}",
        cause,
    ])


def main():
    global HEAD_IP, WORKER_IP, DEDUP
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scenario", required=True,
                   choices=["healthy", "actor-died", "node-died", "memory-monitor-oom",
                            "object-store-full", "task-error", "gcs-unreachable", "actor-hang"])
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--fault-at", type=int, default=25)
    p.add_argument("--step-sleep", type=float, default=0.05)
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--head-ip", default=HEAD_IP, help="the driver's node (its workers' lines carry no ip)")
    p.add_argument("--worker-ip", default=WORKER_IP, help="the second worker's node")
    p.add_argument("--dedup", action="store_true",
                   help="fold the workers' repeated lines as Ray does by default (RAY_DEDUP_LOGS=1); "
                   "without it the driver prints every line, as with RAY_DEDUP_LOGS=0")
    p.add_argument("--session-logs", help="also write the workers' own log files here, as Ray's "
                   "session logs directory holds them (worker-<id>-<job id>-<pid>.out|.err)")
    args = p.parse_args()
    HEAD_IP, WORKER_IP = args.head_ip, args.worker_ip
    DEDUP = Deduplicator() if args.dedup else None
    random.seed(args.seed)
    s = args.scenario
    # ray.init's banner (python/ray/_private/worker.py init: "Connecting to existing Ray
    # cluster at address: {}..."; "Connected to Ray cluster."), as the driver logs it.
    out(f"{time.strftime('%Y-%m-%d %H:%M:%S')},000\tINFO worker.py:1586 -- Connecting to existing "
        f"Ray cluster at address: {HEAD_IP}:6379...", err=True)
    if s == "gcs-unreachable":
        for _ in range(3):
            # python/ray/_private/utils.py connect_error, logged on each retry.
            out(f"{time.strftime('%Y-%m-%d %H:%M:%S')},000\tWARNING utils.py:580 -- Unable to connect "
                f"to GCS (ray head) at {HEAD_IP}:6379. Check that (1) Ray with matching version "
                f"started successfully at the specified address, (2) this node can reach the "
                f"specified address, and (3) there is no firewall setting preventing access.", err=True)
            time.sleep(0.2)
        traceback_to([("/home/alice/train_ray.py", 12, "<module>", f'ray.init(address="{HEAD_IP}:6379")')],
                     "ConnectionError: Could not read 'session_name' from GCS. Did GCS start successfully?")
        sys.exit(1)
    out(f"{time.strftime('%Y-%m-%d %H:%M:%S')},000\tINFO worker.py:1762 -- Connected to Ray cluster.",
        err=True)
    trainer_pid, workers = 4100, [(4211, HEAD_IP), (3907, WORKER_IP)]
    logs = WorkerLogs(args.session_logs, workers)
    worker("TorchTrainer", trainer_pid, HEAD_IP, "Started distributed worker processes: ")
    for rank, (pid, ip) in enumerate(workers):
        worker("TorchTrainer", trainer_pid, HEAD_IP,
               f"- (node_id={hexid(56)}, ip={ip}, pid={pid}) world_rank={rank}, local_rank=0, node_rank={rank}")
    for step in range(1, args.steps + 1):
        for rank, (pid, ip) in enumerate(workers):
            faulty = rank == 1 and step == args.fault_at
            if faulty and s == "actor-hang":
                # The worker on the second node stops; its peer waits in the all-reduce.
                while True:
                    time.sleep(3600)
            if faulty and s in ("actor-died", "node-died", "memory-monitor-oom", "object-store-full",
                                "task-error"):
                if s == "actor-died":
                    # What only the worker's own stderr holds: faulthandler's
                    # report of the crash (cpython Python/faulthandler.c);
                    # the driver sees the death, not its cause.
                    logs.write(pid, "Fatal Python error: Segmentation fault\n\n"
                               f"Current thread 0x00007f3a2b4c5740 (most recent call first):\n"
                               f'  File "/home/alice/train_ray.py", line 52 in train_loop\n', err=True)
                fail(s, pid, ip, step)
                sys.exit(1)
            line = f"step {step} loss {1.0 / step:.4f}"
            logs.write(pid, line + "\n")
            worker("RayTrainWorker", pid, ip, line)
        time.sleep(args.step_sleep)
    worker("RayTrainWorker", workers[0][0], HEAD_IP, f"training finished after {args.steps} steps")
    if DEDUP:
        DEDUP.flush()
    out("Training finished.")


class WorkerLogs:
    """A worker's own stdout/stderr files in Ray's session logs directory
    (ray_logging get_worker_log_file_name: worker-<worker id>-<job id>-<pid>),
    each starting with the markers _raylet.pyx prints (":job_id:",
    ":actor_name:"); nothing when no directory was given."""

    def __init__(self, directory, workers):
        self.files = {}
        if not directory:
            return
        os.makedirs(directory, exist_ok=True)
        for pid, _ in workers:
            stem = os.path.join(directory, f"worker-{hexid(56)}-01000000-{pid}")
            for suffix in (".out", ".err"):
                with open(stem + suffix, "w") as f:
                    f.write(":job_id:01000000\n:actor_name:RayTrainWorker\n")
            self.files[pid] = stem

    def write(self, pid, text, err=False):
        if pid in self.files:
            with open(self.files[pid] + (".err" if err else ".out"), "a") as f:
                f.write(text)


def fail(s, pid, ip, step):
    node_id, worker_id = hexid(56), hexid(56)
    if s == "actor-died":
        # gcs_actor_manager.cc GenWorkerDiedCause; client_connection.cc's detail.
        traceback_to(DRIVER_FRAMES, actor_died_message(pid, ip,
            "The actor is dead because its worker process has died. Worker exit type: SYSTEM_ERROR "
            "Worker exit detail: Worker unexpectedly exits with a connection error code 2. End of "
            "file. There are some potential root causes. (1) The process is killed by SIGKILL by OOM "
            "killer due to high memory usage. (2) ray stop --force is called. (3) The worker is "
            "crashed unexpectedly due to SIGSEGV or other unexpected errors."))
    elif s == "node-died":
        # gcs_node_manager.cc RemoveNode (published as node_removed, printed as (raylet)).
        out(raylet(f"The node with node id: {node_id} and address: {ip} and node name: {ip} has been "
                   "marked dead because the detector has missed too many heartbeats from it. This "
                   "can happen when a \t(1) raylet crashes unexpectedly (OOM, etc.) "), err=True)
        out("\t(2) raylet has lagging heartbeats due to slow network or busy workload.", err=True)
        # gcs_actor_manager.cc GenNodeDiedCause.
        traceback_to(DRIVER_FRAMES, actor_died_message(pid, ip,
            f"The actor died because its node has died. Node Id: {node_id}\n"
            "\tthe actor's node was terminated unexpectedly: health check failed due to missing too "
            "many heartbeats"))
    elif s == "memory-monitor-oom":
        # node_manager.cc CreateMemoryUsageRefreshCallback / CreateOomKillMessageDetails.
        out(raylet(f"Task was killed due to the node running low on memory."), err=True)
        out(f"Memory on the node (IP: {ip}, ID: {node_id}) where the task (actor ID: {hexid(32)}, "
            f"name=RayTrainWorker.__init__, pid={pid}, memory used=27.31GB) was running was "
            f"29.12GB / 30.65GB (0.950072), which exceeds the memory usage threshold of 0.95. Ray "
            f"killed this worker (ID: {worker_id}) because it was the most recently scheduled task; "
            f"to see more information about memory usage on this node, use `ray logs raylet.out -ip "
            f"{ip}`. To see the logs of the worker, use `ray logs worker-{worker_id}*out -ip {ip}. "
            f"Top 10 memory users:", err=True)
        traceback_to(DRIVER_FRAMES, actor_died_message(pid, ip,
            "The actor is dead because its worker process has died. Worker exit type: "
            "NODE_OUT_OF_MEMORY Worker exit detail: Task was killed due to the node running low on "
            "memory."))
    elif s == "object-store-full":
        # plasma_store_provider.cc Create; exceptions.py ObjectStoreFullError.__str__.
        traceback_to(DRIVER_FRAMES[:1] + [("/usr/lib/python3/dist-packages/ray/_private/worker.py", 771,
                                           "put_object", "self.core_worker.put_serialized_object_and_increment_local_ref(")],
                     f"ray.exceptions.ObjectStoreFullError: Failed to put object {hexid(40)} in object "
                     f"store because it is full. Object size is 2147483648 bytes.\nPlasma store status:\n"
                     f"- objects_spillable: 0\n\nThe local object store is full of objects that are "
                     f"still in scope and cannot be evicted. Tip: Use the `ray memory` command to list "
                     f"active objects in the cluster.")
    elif s == "task-error":
        # exceptions.py RayTaskError: the dual type "RayTaskError(<Cause>)", the
        # proctitle "ray::<name>()" and (pid=, ip=, actor_id=, repr=).
        out("Traceback (most recent call last):", err=True)
        for path, line, func, code in DRIVER_FRAMES:
            out(f'  File "{path}", line {line}, in {func}', err=True)
            out(f"    {code}", err=True)
        out(f"ray.exceptions.RayTaskError(ValueError): {CYAN}ray::RayTrainWorker.train(){RESET} "
            f"(pid={pid}, ip={ip}, actor_id={hexid(32)}, repr=<RayTrainWorker object>)", err=True)
        out('  File "/home/alice/train_ray.py", line 41, in train_loop', err=True)
        out('    raise ValueError(f"bad batch at step {step}: expected 32 features, got 31")', err=True)
        out(f"ValueError: bad batch at step {step}: expected 32 features, got 31", err=True)


if __name__ == "__main__":
    main()
