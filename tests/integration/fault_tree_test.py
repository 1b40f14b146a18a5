#!/usr/bin/python3
"""fault_tree.py's pure parts: the job log's phases, a tick's effect per
scenario (the fault on its target only), the files rendered in the kernel's
formats from the procfs fixture."""

import os
import random
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fault_tree  # noqa: E402


def run_ticks(scenario, node, phase="training", fault=True, ticks=60, dt=0.5):
    state, rng = fault_tree.new_node_state(), random.Random(1)
    for _ in range(ticks):
        fault_tree.tick(state, node, scenario, phase, fault, dt, rng)
    return state


class LogStateTest(unittest.TestCase):
    def test_steps_and_checkpoint_windows_per_rank(self):
        log = fault_tree.LogState()
        self.assertEqual(log.max_step(), -1)
        self.assertFalse(log.in_checkpoint(0, 50))
        for line in ["0: completed step: 48, seconds: 0.2", "1: completed step: 49, seconds: 0.2",
                     "0: Saved a checkpoint at step 0."]:
            log.feed(line)
        self.assertEqual(log.max_step(), 49)
        self.assertFalse(log.in_checkpoint(0, 50))  # step 49 still to run
        self.assertTrue(log.in_checkpoint(1, 50))  # saving inside step 50
        log.feed("1: Saved a checkpoint at step 50.")
        self.assertFalse(log.in_checkpoint(1, 50))
        self.assertFalse(log.in_checkpoint(1, 0))  # no checkpointing
        log.feed("completed step: 7, seconds: 0.2")  # without srun -l: rank 0
        self.assertEqual(log.last_step[0], 7)

    def test_phase(self):
        log = fault_tree.LogState()
        self.assertEqual(fault_tree.phase_of(log, 0, 0, False), "compiling")
        log.feed("0: completed step: 3, seconds: 0.2")
        self.assertEqual(fault_tree.phase_of(log, 0, 0, False), "training")
        self.assertEqual(fault_tree.phase_of(log, 0, 4, False), "checkpoint")
        self.assertEqual(fault_tree.phase_of(log, 0, 0, True), "idle")

    def test_a_live_rank_without_steps_busy_waits(self):
        log = fault_tree.LogState()
        log.feed("0: completed step: 99, seconds: 0.2", now=100.0)
        log.feed("1: completed step: 99, seconds: 0.2", now=100.0)
        self.assertEqual(fault_tree.phase_of(log, 0, 0, False, now=102.0, stall_seconds=3), "training")
        self.assertEqual(fault_tree.phase_of(log, 0, 0, False, now=104.0, stall_seconds=3), "busy-wait")
        self.assertEqual(fault_tree.phase_of(log, 0, 0, False, now=104.0, stall_seconds=0), "training")
        # A checkpoint save is a pause of its own, however long.
        self.assertEqual(fault_tree.phase_of(log, 0, 100, False, now=104.0, stall_seconds=3), "checkpoint")
        log.feed("0: W1123 10:00:00.000000      77 topology.cc:212] Cannot read CPU core 57", now=105.0)
        self.assertEqual(fault_tree.phase_of(log, 0, 0, False, now=106.0, stall_seconds=3), "busy-wait")
        log.feed("0: NODE_EXIT host=node1 exit=143", now=107.0)  # scancel: the rank is gone
        self.assertEqual(fault_tree.phase_of(log, 0, 0, False, now=108.0, stall_seconds=3), "idle")
        self.assertEqual(fault_tree.phase_of(log, 1, 0, False, now=108.0, stall_seconds=3), "busy-wait")

    def test_the_oom_killed_rank_is_gone(self):
        log = fault_tree.LogState()
        log.feed("1: completed step: 149, seconds: 0.2", now=10.0)
        log.feed("1: oom-kill:constraint=CONSTRAINT_NONE,task=python3,pid=4242", now=10.1)
        self.assertNotIn(1, log.exited)
        log.feed("1: Out of memory: Killed process 4242 (python3) total-vm:812345678kB", now=10.1)
        self.assertEqual(log.exited, {1})
        self.assertEqual(fault_tree.phase_of(log, 1, 0, False, now=20.0, stall_seconds=3), "idle")


class TickTest(unittest.TestCase):
    def test_ecc_rises_on_the_target_gpu_only(self):
        hit = run_ticks("ecc", "node2")
        self.assertGreater(hit["gpus"][1]["umc_ue"], 3)
        self.assertEqual(hit["gpus"][0]["umc_ue"], 0)
        self.assertEqual(run_ticks("ecc", "node1")["gpus"][1]["umc_ue"], 0)
        self.assertEqual(run_ticks("ecc", "node2", fault=False)["gpus"][1]["umc_ue"], 0)

    def test_rdma_port_down_and_retransmits_on_one_port(self):
        hit = run_ticks("rdma", "node2")["rdma"]
        self.assertEqual(hit["bnxt_re1"]["state"], "1: DOWN")
        self.assertGreater(hit["bnxt_re1"]["tx_retx_pkts"], 1000)
        self.assertGreater(hit["bnxt_re1"]["tx_ack_timeout"], 0)
        self.assertEqual((hit["bnxt_re0"]["state"], hit["bnxt_re0"]["tx_retx_pkts"]), ("4: ACTIVE", 0))
        self.assertEqual(run_ticks("rdma", "node1")["rdma"]["bnxt_re1"]["state"], "4: ACTIVE")

    def test_tcp_retransmits_only_in_checkpoints(self):
        start = fault_tree.new_node_state()["tcp_retrans"]
        training = run_ticks("tcp-checkpoint", "node1", phase="training")["tcp_retrans"] - start
        checkpoint = run_ticks("tcp-checkpoint", "node1", phase="checkpoint")["tcp_retrans"] - start
        self.assertLess(training, 60)  # under 2/s over 30 s
        self.assertGreater(checkpoint, 100 * 30)

    def test_io_pressure_on_the_target_node(self):
        hit, other = run_ticks("io-pressure", "node1"), run_ticks("io-pressure", "node2")
        self.assertGreater(hit["psi_some"][0], 30)
        self.assertGreater(hit["psi_full"][0], 15)
        self.assertGreaterEqual(hit["procs_blocked"], 5)
        self.assertLess(other["psi_some"][0], 5)
        self.assertGreater(hit["psi_some"][3], other["psi_some"][3])  # total stall time grows faster

    def test_thermal_ramp_drops_clock_and_power_of_one_gpu(self):
        hit = run_ticks("thermal", "node1")
        gpu, other = hit["gpus"][0], hit["gpus"][1]
        self.assertGreater(gpu["temp_mc"], 100_000)
        self.assertEqual((gpu["sclk"], other["sclk"]), (1400, 2100))
        self.assertLess(gpu["power_uw"], 0.75 * 700e6)
        self.assertLess(other["temp_mc"], 80_000)
        self.assertEqual(run_ticks("thermal", "node1", fault=False)["gpus"][0]["sclk"], 2100)

    def test_procs_high_everywhere_and_baseline_low(self):
        self.assertGreaterEqual(run_ticks("procs-high", "node1")["procs_running"], 23)
        self.assertGreaterEqual(run_ticks("procs-high", "node2", fault=False)["procs_running"], 23)
        self.assertLessEqual(run_ticks("baseline", "node1")["procs_running"], 5)

    def test_busy_wait_is_busy_at_near_idle_power(self):
        spin, train = run_ticks("baseline", "node1", phase="busy-wait"), run_ticks("baseline", "node1")
        idle = run_ticks("baseline", "node1", phase="idle")
        for gpu, trained in zip(spin["gpus"], train["gpus"]):
            self.assertGreaterEqual(gpu["busy"], 90)
            self.assertLess(gpu["power_uw"], 0.5 * trained["power_uw"])  # the playbooks' idle line
        self.assertLess(spin["gpus"][0]["power_uw"], 1.5 * idle["gpus"][0]["power_uw"])

    def test_oom_memory_falls_to_the_floor_then_one_kill(self):
        start = fault_tree.new_node_state()
        falling = run_ticks("oom", "node2", ticks=4)  # 2 s: on the way down
        self.assertLess(falling["mem_available_kb"], 0.5 * start["mem_available_kb"])
        self.assertEqual(falling["oom_kill"], start["oom_kill"])
        hit = run_ticks("oom", "node2", ticks=20)
        self.assertLess(hit["mem_available_kb"], 0.02 * start["mem_available_kb"])
        self.assertEqual(hit["oom_kill"], start["oom_kill"] + 1)  # once, however long at the floor
        for other in (run_ticks("oom", "node1"), run_ticks("oom", "node2", fault=False)):
            self.assertGreater(other["mem_available_kb"], 0.99 * start["mem_available_kb"])
            self.assertEqual(other["oom_kill"], start["oom_kill"])
        # The killed rank (idle) has its memory back; the count stays.
        state, rng = hit, random.Random(2)
        fault_tree.tick(state, "node2", "oom", "idle", True, 0.5, rng)
        self.assertGreater(state["mem_available_kb"], 0.99 * start["mem_available_kb"])
        self.assertEqual(state["oom_kill"], start["oom_kill"] + 1)

    def test_counters_never_go_back(self):
        state, rng = fault_tree.new_node_state(), random.Random(3)
        before = None
        for i in range(40):
            fault_tree.tick(state, "node2", "rdma", "checkpoint" if i % 7 == 0 else "training", i > 20, 0.5, rng)
            now = (state["ctxt"], state["tcp_retrans"], state["psi_some"][3],
                   *(state["rdma"][d][c] for d in fault_tree.RDMA_DEVICES
                     for c in fault_tree.RDMA_COUNTERS + fault_tree.RDMA_HW_COUNTERS))
            if before:
                self.assertTrue(all(a >= b for a, b in zip(now, before)))
            before = now


class RenderTest(unittest.TestCase):
    def test_procfs_lines_rewritten_in_the_fixture_format(self):
        fixture = fault_tree.read_fixture()
        state = fault_tree.new_node_state()
        state.update(procs_running=24, procs_blocked=6, tcp_retrans=99999, mem_available_kb=123)
        out = fault_tree.render_procfs(fixture, state)
        self.assertIn("\nprocs_running 24\n", out["stat"])
        self.assertIn("\nprocs_blocked 6\n", out["stat"])
        self.assertIn("MemAvailable:   123 kB", out["meminfo"])
        snmp = [line.split() for line in out["net/snmp"].splitlines() if line.startswith("Tcp:")]
        self.assertEqual(snmp[1][snmp[0].index("RetransSegs")], "99999")
        self.assertEqual(len(snmp[0]), len(snmp[1]))
        self.assertRegex(out["pressure/io"], r"^some avg10=\d+\.\d\d avg60=\S+ avg300=\S+ total=\d+\n"
                                             r"full avg10=\S+ avg60=\S+ avg300=\S+ total=\d+\n$")
        self.assertEqual(set(out), set(fixture))  # every fixture file, nothing else

    def test_sysfs_files_as_the_drivers_write_them(self):
        state = fault_tree.new_node_state()
        state["gpus"][1].update(umc_ue=3, sclk=1400)
        out = fault_tree.render_sysfs(state)
        d = fault_tree.gpu_device_dir(1)
        self.assertEqual(out[f"{d}/ras/umc_err_count"], "ue: 3\nce: 0\n")
        self.assertEqual(out[f"{d}/pp_dpm_sclk"], "0: 500Mhz\n1: 1400Mhz *\n2: 2100Mhz\n")
        self.assertEqual(out["class/infiniband/bnxt_re0/ports/1/state"], "4: ACTIVE\n")
        self.assertIn("class/infiniband/bnxt_re1/ports/1/hw_counters/tx_retx_pkts", out)

    def test_build_lays_out_the_trees(self):
        with tempfile.TemporaryDirectory() as root:
            fault_tree.build(root, ["node1"])
            fault_tree.build(root, ["node1"])  # again: links kept
            sys_root = os.path.join(root, "node1", "sys")
            card = os.path.join(sys_root, "class/drm/card1/device")
            self.assertEqual(os.path.realpath(card),
                             os.path.realpath(os.path.join(sys_root, fault_tree.gpu_device_dir(1))))
            with open(os.path.join(card, "vendor")) as f:
                self.assertEqual(f.read(), "0x1002\n")
            self.assertTrue(os.path.exists(os.path.join(root, "node1", "proc", "pressure", "io")))


if __name__ == "__main__":
    unittest.main()
