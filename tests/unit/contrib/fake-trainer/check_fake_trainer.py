#!/usr/bin/python3
"""Every fake-trainer scenario, run as two real ranks (no Slurm needed).

Checks what the triage engine and the monitor will rely on: step lines,
header, JOB SUMMARY, the fault signatures and exit codes, and the fake GPU
sysfs values per phase (training, busy-wait hang, death).
"""
import argparse
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import unittest

TRAINER = None
STEP = re.compile(r"^completed step: (\d+), seconds: ([0-9.]+),")


class Rank:
    def __init__(self, rank, args, tmp, world=2, collective_timeout="0.3"):
        self.gpu = os.path.join(tmp, f"gpu-{rank}")
        self.proc = subprocess.Popen(
            [TRAINER, "--rank", str(rank), "--world-size", str(world), "--host", f"node{rank + 1}",
             "--gpu-sysfs", self.gpu, "--gpu-interval", "0.05", "--seed", "11",
             "--collective-timeout", collective_timeout, *args],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    def finish(self, timeout=30):
        out, _ = self.proc.communicate(timeout=timeout)
        self.out = out
        self.lines = out.splitlines()
        self.steps = [(int(m.group(1)), float(m.group(2)))
                      for m in map(STEP.match, self.lines) if m]
        return self.proc.returncode

    def gpu_file(self, name, gpu=0):
        base = os.path.join(self.gpu, "class", "drm", f"card{gpu}", "device")
        path = os.path.join(base, name) if not name.startswith("hwmon") else \
            os.path.join(base, "hwmon", f"hwmon{gpu}", name[len("hwmon/"):])
        with open(path) as f:
            return int(f.read())


def run_pair(testcase, args, timeout=30):
    ranks = [Rank(r, args, testcase.tmp) for r in range(2)]
    codes = [r.finish(timeout) for r in ranks]
    return ranks, codes


class Scenarios(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.tmp = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()

    def test_success(self):
        ranks, codes = run_pair(self, ["--steps", "8", "--step-seconds", "0.02"])
        self.assertEqual(codes, [0, 0])
        for r in ranks:
            self.assertEqual([s for s, _ in r.steps], list(range(8)))
        self.assertIn("Status: SUCCESS (exit 0)", ranks[0].lines)
        self.assertNotIn("JOB SUMMARY", ranks[1].out, "only rank 0 writes the summary")
        self.assertIn("NNODES=2", ranks[0].lines)
        self.assertIn("[fake-trainer] task 1 on host node2 (process 1 of 2)", ranks[1].lines)
        self.assertEqual(ranks[0].gpu_file("gpu_busy_percent"), 0, "idle after a clean exit")

    def test_checkpoint_and_restore(self):
        ranks, codes = run_pair(self, ["--steps", "10", "--step-seconds", "0.02",
                                       "--checkpoint-every", "4", "--checkpoint-seconds", "0.2",
                                       "--restore-from", "3"])
        self.assertEqual(codes, [0, 0])
        r = ranks[0]
        self.assertIn("Config param checkpoint_period: 4", r.lines)
        self.assertTrue(any("enable_checkpointing=true" in l for l in r.lines))
        self.assertIn("restoring from this run's directory step 3", r.lines)
        self.assertEqual(r.steps[0][0], 4, "restored from 3: first step is 4")
        self.assertIn("Saved a checkpoint at step 4.", r.lines)
        self.assertIn("Saved a checkpoint at step 8.", r.lines)
        seconds = dict(r.steps)
        self.assertGreater(seconds[8], seconds[7] + 0.15, "checkpoint time is part of its step")

    def test_hang_busy_wait_until_sigterm(self):
        ranks = [Rank(r, ["--steps", "50", "--step-seconds", "0.02", "--hang-at", "3"], self.tmp)
                 for r in range(2)]
        time.sleep(1.5)
        for r in ranks:
            self.assertIsNone(r.proc.poll(), "a hung rank stays alive")
            self.assertEqual(r.gpu_file("gpu_busy_percent"), 100)
            self.assertLess(r.gpu_file("hwmon/power1_average"), 320_000_000, "idle-level power")
            r.proc.send_signal(signal.SIGTERM)
        codes = [r.finish() for r in ranks]
        self.assertEqual(codes, [143, 143])
        self.assertEqual([s for s, _ in ranks[0].steps], [0, 1, 2])
        self.assertIn("Status: FAILED (exit 143)", ranks[0].lines)
        self.assertIn("Last completed step: 2 of steps=50", ranks[0].lines)

    def test_sync_dir_ranks_wait_for_each_other(self):
        sync = os.path.join(self.tmp, "sync")
        ranks = [Rank(r, ["--steps", "400", "--step-seconds", "0.02", "--sync-dir", sync,
                          "--heartbeat-timeout-seconds", "1.5"],
                      self.tmp, collective_timeout="60") for r in range(2)]
        time.sleep(1.0)
        ranks[1].proc.kill()  # a node dies
        ranks[1].finish()
        killed_at = time.time()
        code = ranks[0].finish(timeout=20)
        waited = time.time() - killed_at
        self.assertEqual(code, 1, ranks[0].out[-600:])
        last = ranks[1].steps[-1][0]
        self.assertLessEqual(ranks[0].steps[-1][0], last + 1, "rank 0 blocked at the barrier")
        text = "\n".join(ranks[0].lines)
        self.assertIn("The following tasks are unhealthy (stopped sending heartbeats):", text)
        self.assertIn("/job:jax_worker/replica:0/task:1", text)
        self.assertIn("jax_distributed_heartbeat_timeout_seconds=1.5", text)
        self.assertGreater(waited, 1.0, "accused only after the heartbeat timeout")
        self.assertLess(waited, 10)

    def test_sync_dir_healthy_pair_completes_in_lockstep(self):
        sync = os.path.join(self.tmp, "sync")
        ranks, codes = run_pair(self, ["--steps", "30", "--step-seconds", "0.01", "--sync-dir", sync])
        self.assertEqual(codes, [0, 0])
        self.assertEqual([s for s, _ in ranks[0].steps], list(range(30)))
        self.assertEqual([s for s, _ in ranks[1].steps], list(range(30)))

    def test_die_by_signal_and_peers_time_out(self):
        ranks, codes = run_pair(self, ["--steps", "20", "--step-seconds", "0.02",
                                       "--die-at", "5", "--signal", "SEGV"])
        self.assertEqual(codes[1], -signal.SIGSEGV, "the last rank dies of the signal")
        self.assertEqual(codes[0], 1)
        self.assertEqual(ranks[1].steps[-1][0], 4)
        self.assertTrue(any("NCCL WARN Timeout" in l for l in ranks[0].lines))
        self.assertIn("Status: FAILED (exit 1)", ranks[0].lines)
        self.assertIn("NODE_EXIT host=node1 exit=1", ranks[0].lines)
        dead = os.path.join(ranks[1].gpu, "class/drm/card0/device/gpu_busy_percent")
        before = os.stat(dead).st_mtime_ns
        time.sleep(0.3)
        self.assertEqual(os.stat(dead).st_mtime_ns, before, "a dead rank's GPU files stop updating")

    def test_oom(self):
        ranks, codes = run_pair(self, ["--steps", "20", "--step-seconds", "0.02", "--oom-at", "4"])
        self.assertEqual(codes, [1, -signal.SIGKILL])
        self.assertTrue(any("Out of memory: Killed process" in l for l in ranks[1].lines))
        self.assertTrue(any("oom-kill" in l for l in ranks[1].lines))

    def test_nccl_timeout(self):
        ranks, codes = run_pair(self, ["--steps", "20", "--step-seconds", "0.02",
                                       "--nccl-timeout-at", "6"])
        self.assertEqual(codes, [1, 1])
        for r in ranks:
            self.assertTrue(any("NCCL WARN Timeout" in l for l in r.lines))
            self.assertEqual(r.steps[-1][0], 5)

    def test_heartbeat_false_positive(self):
        ranks, codes = run_pair(self, ["--steps", "20", "--step-seconds", "0.02",
                                       "--heartbeat-timeout-at", "7"])
        self.assertEqual(codes, [1, 1])
        coordinator = ranks[0].out
        self.assertIn("The following tasks are unhealthy (stopped sending heartbeats)", coordinator)
        self.assertIn("/job:jax_worker/replica:0/task:1\n", coordinator)
        self.assertIn("The tasks have crashed", coordinator)
        self.assertIn("Polled error from coordination service", ranks[1].out)
        self.assertIn("Terminating process because the JAX distributed service detected fatal errors",
                      ranks[1].out)
        self.assertEqual(ranks[1].steps[-1][0], 6, "the accused task was training until then")

    def test_slow_and_compile(self):
        ranks, codes = run_pair(self, ["--steps", "14", "--step-seconds", "0.03", "--jitter", "0",
                                       "--slow-from", "8", "--slow-factor", "3",
                                       "--compile-seconds", "0.4"])
        self.assertEqual(codes, [0, 0])
        seconds = dict(ranks[0].steps)
        self.assertGreaterEqual(seconds[0], 0.4, "compilation is part of the first step")
        before = statistics.median(seconds[s] for s in range(2, 8))
        after = statistics.median(seconds[s] for s in range(8, 14))
        self.assertGreater(after / before, 2.2)

    def test_deterministic_with_seed(self):
        a, _ = run_pair(self, ["--steps", "5", "--step-seconds", "0.01"])
        b, _ = run_pair(self, ["--steps", "5", "--step-seconds", "0.01"])
        losses = lambda r: [l.split("loss: ")[1] for l in r.lines if l.startswith("completed step")]
        self.assertEqual(losses(a[0]), losses(b[0]))

    def test_bad_options_are_refused(self):
        for args, message in ((["--steps", "10", "--hang-at", "10"], "hang step must be in [0, 10)"),
                              (["--restore-from", "3"], "needs --checkpoint-every"),
                              (["--signal", "BOGUS", "--die-at", "1"], "unknown signal"),
                              (["--hang-at", "2", "--die-at", "3"], "excludes")):
            run = subprocess.run([TRAINER, *args], capture_output=True, text=True, timeout=30)
            self.assertNotEqual(run.returncode, 0, args)
            self.assertIn(message, run.stdout + run.stderr, args)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--fake-trainer", required=True)
    known, rest = parser.parse_known_args()
    TRAINER = known.fake_trainer
    unittest.main(argv=[sys.argv[0], "-v", *rest])
