#!/usr/bin/python3
"""checks.py against records shaped as the scripts see them (the jobmon
status/triage JSON, the webhook receiver's and the Telegram stub's JSON
lines, Alertmanager's /api/v2/alerts, `ss -ltnpH`)."""

import io
import json
import os
import sqlite3
import sys
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import checks  # noqa: E402

STATUS = {
    "source": "daemon", "state": "incident", "class": "hang/busy-wait", "stall_seconds": 12.5,
    "progress": {"last_step": 29, "expected_step_now": 41, "last_step_time": None},
    "prometheus": {"tunnel_command": "ssh -N -L 9190:127.0.0.1:9190 node1"},
    "projection": {"last_step": 29},
    "findings": ["All 2 tasks stopped at the same step 19", "second"],
    "jobs": [{"job_id": 3, "ended": False}, {"job_id": 4, "ended": True}],
    "results": [{"receiver": "tg", "delivered": True}, {"receiver": "am", "delivered": False}],
    "nodes": ["node1", "node2"], "degraded": [],
}


class Run:
    """checks.main on argv; (exit code, stdout)."""

    def __init__(self, tmp):
        self.tmp = tmp

    def __call__(self, *argv):
        out = io.StringIO()
        with redirect_stdout(out):
            code = checks.main(["checks.py", *[str(a) for a in argv]])
        return code, out.getvalue()


POLL_HISTOGRAM = """# TYPE jobmon_monitor_poll_duration_seconds histogram
jobmon_monitor_poll_duration_seconds_count 40
jobmon_monitor_poll_duration_seconds_sum 21.5
jobmon_monitor_poll_duration_seconds_bucket{le="0.5"} 31
jobmon_monitor_poll_duration_seconds_bucket{le="1"} 38
jobmon_monitor_poll_duration_seconds_bucket{le="2.5"} 39
jobmon_monitor_poll_duration_seconds_bucket{le="5"} 40
jobmon_monitor_poll_duration_seconds_bucket{le="10"} 40
jobmon_monitor_poll_duration_seconds_bucket{le="+Inf"} 40
"""


class ChecksTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.status = os.path.join(self.dir.name, "status.json")
        with open(self.status, "w") as f:
            json.dump(STATUS, f)
        self.run = Run(self.dir.name)

    def tearDown(self):
        self.dir.cleanup()

    def jsonl(self, records):
        path = os.path.join(self.dir.name, "records.jsonl")
        with open(path, "w") as f:
            for r in records:
                f.write(json.dumps(r) + "\n")
        return path

    def test_field_prints_values_space_separated_and_fails_on_a_missing_path(self):
        self.assertEqual(self.run("field", self.status, "source", "state", "class"),
                         (0, "daemon incident hang/busy-wait\n"))
        self.assertEqual(self.run("field", self.status, "progress.last_step"), (0, "29\n"))
        self.assertEqual(self.run("field", self.status, "nodes", "degraded"),
                         (0, '["node1", "node2"] []\n'))
        self.assertEqual(self.run("field", self.status, "jobs.1.job_id"), (0, "4\n"))
        self.assertEqual(self.run("field", self.status, "progress.nope")[0], 1)
        self.assertEqual(self.run("field", os.path.join(self.dir.name, "none.json"), "x")[0], 1)

    def test_lines_prints_a_list_one_item_per_line(self):
        self.assertEqual(self.run("lines", self.status, "findings"),
                         (0, "All 2 tasks stopped at the same step 19\nsecond\n"))
        self.assertEqual(self.run("lines", self.status, "source")[0], 1)

    def test_expect_holds_only_when_every_condition_does(self):
        ok = ["progress.last_step == 29", "progress.expected_step_now > 29", "stall_seconds > 0",
              "prometheus.tunnel_command startswith ssh -N -L", "projection.last_step == 29"]
        self.assertEqual(self.run("expect", self.status, *ok)[0], 0)
        for wrong in ["progress.last_step == 30", "progress.expected_step_now > 41",
                      "stall_seconds <= 0", "prometheus.tunnel_command startswith ssh -L",
                      "progress.missing == 1", "progress.last_step_time > 0",
                      "source > 1"]:
            self.assertEqual(self.run("expect", self.status, *ok, wrong)[0], 1, wrong)

    def test_equality_across_json_types(self):
        self.assertTrue(checks.compare(7, "==", "7"))
        self.assertTrue(checks.compare("7", "==", "7"))
        self.assertTrue(checks.compare("-1001", "==", "-1001"))
        self.assertTrue(checks.compare(True, "==", "true"))
        self.assertFalse(checks.compare(1, "==", "true"))
        self.assertFalse(checks.compare(True, "==", "1"))
        self.assertTrue(checks.compare(None, "==", "null"))
        self.assertTrue(checks.compare(2.0, "==", "2"))
        self.assertTrue(checks.compare("4242", "in", "-1001|4242"))
        self.assertFalse(checks.compare("9", "in", "-1001|4242"))
        self.assertTrue(checks.compare(checks.MISSING, "absent", ""))
        self.assertFalse(checks.compare("x", "absent", ""))
        self.assertTrue(checks.compare("a jobmon-alert-test b", "contains-any", "evidence line|jobmon-alert-test"))
        with self.assertRaises(ValueError):
            checks.compare("x", "~=", "y")

    def test_any_finds_an_item_meeting_every_condition(self):
        self.assertEqual(self.run("any", self.status, "jobs", "job_id == 4", "ended == true")[0], 0)
        self.assertEqual(self.run("any", self.status, "jobs", "job_id == 3", "ended == true")[0], 1)

    def test_count_over_json_lines_and_a_file_not_yet_written(self):
        hook = self.jsonl([
            {"body": {"job_id": 5, "status": "firing"}, "headers": {}, "shown": 1},
            {"body": {"job_id": 5, "status": "resolved"}, "headers": {}, "shown": 1},
            {"body": None, "headers": {}, "shown": 0},
            {"body": {"job_id": 6, "status": "firing"}, "headers": {}, "shown": 1},
        ])
        self.assertEqual(self.run("count", hook, "body.job_id == 5", "body.status == firing"), (0, "1\n"))
        self.assertEqual(self.run("count", hook, "body.status == firing"), (0, "2\n"))
        self.assertEqual(self.run("count", os.path.join(self.dir.name, "later.jsonl"), "x == 1"),
                         (0, "0\n"))

    def test_telegram_conditions(self):
        tg = self.jsonl([
            {"method": "sendMessage", "chat_id": "-1001", "text": "FIRING Job 5 x", "message_thread_id": 7},
            {"method": "sendMessage", "chat_id": "4242", "text": "FIRING Job 5 x", "message_thread_id": "7"},
            {"method": "sendMessage", "chat_id": "4242", "text": "FIRING Job 5 x", "rejected": "Too Many Requests: retry after 1"},
            {"method": "sendDocument", "chat_id": "4242",
             "document": {"filename": "triage-9.md", "content_type": "text/markdown", "head": "# Triage"}},
        ])
        fired = ["method == sendMessage", "rejected absent", "text contains FIRING Job 5",
                 "message_thread_id == 7"]
        self.assertEqual(self.run("count", tg, *fired), (0, "2\n"))
        self.assertEqual(self.run("count", tg, "rejected startswith Too Many Requests"), (0, "1\n"))
        self.assertEqual(self.run("count", tg, "rejected startswith Bad Request", "chat_id in -1001|4242"),
                         (0, "0\n"))
        self.assertEqual(self.run("count", tg, "method == sendDocument", "document.filename == triage-9.md",
                                  "document.content_type == text/markdown", "document.head contains #"),
                         (0, "1\n"))

    def test_first_checks_the_first_selected_record(self):
        hook = self.jsonl([
            {"body": {"job_id": 4}, "headers": {"Authorization": "Bearer other"}},
            {"body": {"job_id": 5, "idempotency_key": "dev/5/hang/1/firing"},
             "headers": {"Authorization": "Bearer tok", "Idempotency-Key": "dev/5/hang/1/firing"}},
            {"body": {"job_id": 5}, "headers": {"Authorization": "Bearer wrong"}},
        ])
        good = ["headers.Authorization == Bearer tok", "headers.Idempotency-Key == dev/5/hang/1/firing",
                "body.idempotency_key == dev/5/hang/1/firing"]
        self.assertEqual(self.run("first", hook, "body.job_id == 5", "--", *good)[0], 0)
        self.assertEqual(self.run("first", hook, "body.job_id == 5", "--", "headers.Authorization == Bearer x")[0], 1)
        self.assertEqual(self.run("first", hook, "body.job_id == 7", "--", *good)[0], 1)

    def test_select_and_sums_per_key(self):
        hook = self.jsonl([
            {"headers": {"Idempotency-Key": "a"}, "shown": 1, "c": "hang"},
            {"headers": {"Idempotency-Key": "a"}, "shown": 0, "c": "x"},
            {"headers": {"Idempotency-Key": "b"}, "shown": 1, "c": "hang/busy-wait"},
        ])
        self.assertEqual(self.run("sums-equal", hook, "headers.Idempotency-Key", "shown", 1)[0], 0)
        self.assertEqual(self.run("select", hook, "c", "shown == 1"), (0, "hang\nhang/busy-wait\n"))
        self.assertEqual(self.run("first-value", hook, "c", "c startswith hang"), (0, "hang\n"))
        self.assertEqual(self.run("first-value", hook, "report", "c startswith hang"), (0, "\n"))
        self.assertEqual(self.run("first-value", hook, "c", "c == none")[0], 1)
        shown_twice = self.jsonl([{"k": "a", "shown": 1}, {"k": "a", "shown": 1}])
        self.assertEqual(self.run("sums-equal", shown_twice, "k", "shown", 1)[0], 1)

    def test_mapping_is_sorted_key_value_lines(self):
        self.assertEqual(self.run("mapping", self.status, "results", "receiver", "delivered"),
                         (0, "am=false\ntg=true\n"))

    def test_numbers(self):
        self.assertEqual(self.run("compare", "3.5", ">", "2")[0], 0)
        self.assertEqual(self.run("compare", "2", ">", "2")[0], 1)
        self.assertEqual(self.run("compare", "", ">", "2")[0], 1)
        self.assertEqual(self.run("between", 8, "8.9", 10)[0], 0)
        self.assertEqual(self.run("between", 8, "7.9", 10)[0], 1)
        self.assertEqual(self.run("between", 8, "10.1", 10)[0], 1)
        self.assertEqual(self.run("between", 8, "nan?", 10)[0], 1)

    def test_sql_reads_rows_pipe_separated(self):
        db = os.path.join(self.dir.name, "m.db")
        c = sqlite3.connect(db)
        c.execute("CREATE TABLE t (a INTEGER, b TEXT)")
        c.executemany("INSERT INTO t VALUES (?, ?)", [(1, "x"), (2, None)])
        c.commit()
        c.close()
        self.assertEqual(self.run("sql", db, "SELECT a, b FROM t ORDER BY a"), (0, "1|x\n2|\n"))
        self.assertEqual(self.run("sql", db, "INSERT INTO t VALUES (3, 'y')")[0], 1)  # read-only

    def test_push_text_sends_basic_auth_and_the_body(self):
        import http.server
        import threading
        seen = {}

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                seen["auth"] = self.headers.get("Authorization")
                seen["body"] = self.rfile.read(int(self.headers["Content-Length"])).decode()
                self.send_response(204 if seen["auth"] == "Basic bWFsbG9yeTpzM2NyZXQ=" else 401)
                self.end_headers()

            def log_message(self, *args):
                pass

        server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=server.handle_request, daemon=True).start()
        password = os.path.join(self.dir.name, "pass")
        with open(password, "w") as f:
            f.write("s3cret\n")
        url = f"http://127.0.0.1:{server.server_address[1]}/api/v1/import/prometheus"
        self.assertEqual(self.run("push-text", url, "mallory", password, "x 1\n"), (0, "204\n"))
        self.assertEqual(seen["body"], "x 1\n")
        server.server_close()

    def test_free_port_can_be_bound(self):
        code, out = self.run("free-port")
        self.assertEqual(code, 0)
        self.assertTrue(1024 <= int(out) <= 65535)

    def test_alertmanager_lines(self):
        alerts = [
            {"labels": {"job_id": "5", "alertname": "TrainingJobHang", "class": "hang", "severity": "critical",
                        "cluster": "dev"}, "status": {"state": "active"},
             "annotations": {"summary": "Job 5 (pausable) hangs"}},
            {"labels": {"job_id": "5", "alertname": "X", "class": "y", "severity": "z", "cluster": "dev"},
             "status": {"state": "suppressed"}, "annotations": {}},
            {"labels": {"job_id": "6", "alertname": "X", "class": "y", "severity": "z", "cluster": "dev"},
             "status": {"state": "active"}, "annotations": {}},
        ]
        self.assertEqual(checks.am_alert_lines(alerts, 5),
                         ["TrainingJobHang hang critical dev Job_5_(pausable)_hangs"])

    def test_listen_addresses_of_a_pid_or_a_program(self):
        ss = [
            'LISTEN 0 4096 127.0.0.1:9093 0.0.0.0:* users:(("prometheus-aler",pid=101,fd=3))',
            'LISTEN 0 4096 0.0.0.0:9100 0.0.0.0:* users:(("jobmon-exporter",pid=202,fd=3))',
            'LISTEN 0 4096 10.0.0.11:9400 0.0.0.0:* users:(("jobmon-exporter",pid=303,fd=3))',
        ]
        self.assertEqual(checks.local_addresses(ss, pids=["101"]), ["127.0.0.1:9093"])
        self.assertEqual(checks.local_addresses(ss, pids=["10"]), [])  # pid=10, is not pid=101,
        self.assertEqual(checks.local_addresses(ss, names=["jobmon-export"]),
                         ["0.0.0.0:9100", "10.0.0.11:9400"])

    def test_metric_value_of_an_unlabelled_sample(self):
        text = ("# HELP jobmon_monitor_slurm_poll_failures_total x\n"
                "# TYPE jobmon_monitor_slurm_poll_failures_total counter\n"
                "jobmon_monitor_slurm_poll_failures_total_created 1.7e9\n"
                "jobmon_monitor_slurm_poll_failures_total 3\n"
                'jobmon_monitor_jobs_tracked{state="x"} 2\n')
        self.assertEqual(checks.metric_value(text, "jobmon_monitor_slurm_poll_failures_total"), 3.0)
        self.assertIsNone(checks.metric_value(text, "jobmon_monitor_jobs_tracked"))
        self.assertIsNone(checks.metric_value(text, "absent"))

    def test_metric_sum_over_the_samples_with_given_labels(self):
        text = ("# TYPE alertmanager_alerts_received_total counter\n"
                'alertmanager_alerts_received_total{status="firing",version="v2"} 4\n'
                'alertmanager_alerts_received_total{status="resolved",version="v2"} 1\n'
                'alertmanager_alerts_received_total{status="firing",version="v1"} 2\n'
                "jobmon_monitor_polls_total 7\n")
        self.assertEqual(checks.metric_sum(text, "alertmanager_alerts_received_total", {"status": "firing"}), 6.0)
        self.assertEqual(checks.metric_sum(text, "alertmanager_alerts_received_total", {}), 7.0)
        self.assertIsNone(checks.metric_sum(text, "alertmanager_alerts_received_total", {"status": "x"}))
        self.assertEqual(checks.metric_sum(text, "jobmon_monitor_polls_total", {}), 7.0)
        self.assertIsNone(checks.metric_sum(text, "jobmon_monitor_polls_total", {"status": "firing"}))
        self.assertIsNone(checks.metric_sum(text, "absent", {}))

    def test_labelled_samples_of_one_family(self):
        text = ('# TYPE hw_gpu_served gauge\n'
                'hw_gpu_served{gpu="4",source="slurm",vendor="amd"} 1\n'
                'hw_gpu_served_total 9\n'
                'hw_gpu_node_shared{vendor="amd"} 1\n')
        self.assertEqual(checks.labelled_samples(text, "hw_gpu_served"),
                         [({"gpu": "4", "source": "slurm", "vendor": "amd"}, 1.0)])
        self.assertEqual(checks.labelled_samples(text, "hw_gpu_node_shared"), [({"vendor": "amd"}, 1.0)])
        self.assertEqual(checks.labelled_samples(text, "absent"), [])

    def test_playbook_conditions_on_a_diagnose_report(self):
        report = os.path.join(self.dir.name, "diagnose.json")
        with open(report, "w") as f:
            json.dump({"schema": "jobmon.diagnose/v1", "playbooks": [
                {"playbook": "gpu", "verdict": "healthy", "anomalies": []},
                {"playbook": "training", "verdict": "step-time-increase",
                 "root_cause": {"code": "thermal-high", "host": "node1", "gpu": "0"},
                 "chain": [{"code": "clock-drop"}, {"code": "step-time-increase"}],
                 "anomalies": [{"code": "io-pressure", "host": "node1", "device": "", "gpu": 0}],
                 "evidence": [{"title": "Step time", "rows": [{"host": "node1", "value": "1.6x"}]}]}]}, f)
        self.assertEqual(self.run("playbook", report, "training", "verdict == step-time-increase",
                                  "root_cause.code == thermal-high")[0], 0)
        said = io.StringIO()
        with redirect_stderr(said):
            self.assertEqual(self.run("playbook", report, "gpu", "verdict == anomalous")[0], 1)
            self.assertEqual(self.run("playbook", report, "training", "verdict == healthy")[0], 1)
            self.assertEqual(self.run("playbook", report, "hang", "verdict present")[0], 1)  # did not run
        # What the playbook said instead, for the test's log.
        self.assertIn("playbook 'gpu': verdict 'healthy'; anomalies []", said.getvalue())
        self.assertIn('"code": "io-pressure", "host": "node1"', said.getvalue())
        self.assertIn("playbook 'hang': not in", said.getvalue())
        self.assertEqual(self.run("playbook-any", report, "training", "anomalies", "code == io-pressure",
                                  "host == node1", "gpu == 0")[0], 0)
        said = io.StringIO()
        with redirect_stderr(said):
            self.assertEqual(self.run("playbook-any", report, "training", "anomalies", "code == io-pressure",
                                      "host == node2")[0], 1)
        self.assertIn("playbook 'training': verdict", said.getvalue())
        self.assertIn('Step time: {"host": "node1", "value": "1.6x"}', said.getvalue())
        self.assertEqual(self.run("playbook-any", report, "training", "chain", "code == clock-drop")[0], 0)
        self.assertEqual(self.run("playbook-none", report, "training", "anomalies", "host == node2")[0], 0)
        self.assertEqual(self.run("playbook-none", report, "training", "anomalies", "code == io-pressure")[0], 1)
        # A playbook that did not run, or a list it lacks, is no evidence of absence.
        with redirect_stderr(io.StringIO()):
            self.assertEqual(self.run("playbook-none", report, "network", "anomalies", "code == x")[0], 1)
            self.assertEqual(self.run("playbook-none", report, "gpu", "chain", "code == x")[0], 1)

    def test_playbooks_a_report_ran_in_order(self):
        report = os.path.join(self.dir.name, "auto.json")
        with open(report, "w") as f:
            json.dump({"schema": "jobmon.diagnose/v1", "playbooks": [
                {"playbook": "hang", "verdict": "busy-wait-hang"}, {"verdict": "no name"},
                {"playbook": "network", "verdict": "healthy"}]}, f)
        self.assertEqual(self.run("playbooks", report), (0, "hang\nnetwork\n"))
        with open(report, "w") as f:
            json.dump({"schema": "jobmon.diagnose/v1"}, f)
        self.assertEqual(self.run("playbooks", report), (0, ""))

    def test_tsdb_max_time_from_the_head_stats(self):
        status = {"status": "success", "data": {"headStats": {
            "numSeries": 286, "chunkCount": 286, "minTime": 1795424209400, "maxTime": 1795424252400}}}
        self.assertEqual(checks.tsdb_max_seconds(status), 1795424252.4)
        empty = {"status": "success", "data": {"headStats": {
            "numSeries": 0, "minTime": 9223372036854775807, "maxTime": -9223372036854775808}}}
        self.assertIsNone(checks.tsdb_max_seconds(empty))

    def test_unknown_command_is_a_usage_error(self):
        self.assertEqual(checks.main(["checks.py", "eval", "1"]), 2)

    def test_histogram_cover_is_the_smallest_bucket_holding_every_observation(self):
        self.assertEqual(checks.histogram_cover(POLL_HISTOGRAM, "jobmon_monitor_poll_duration_seconds"), 5.0)
        beyond = POLL_HISTOGRAM.replace('{le="10"} 40', '{le="10"} 39').replace('{le="5"} 40', '{le="5"} 39')
        self.assertEqual(checks.histogram_cover(beyond, "jobmon_monitor_poll_duration_seconds"), float("inf"))
        self.assertIsNone(checks.histogram_cover("", "jobmon_monitor_poll_duration_seconds"))

    def test_stall_bound_from_the_stated_threshold_and_the_longest_cycles(self):
        summary = ("GPUs busy at idle-level power on 2 of 2 hosts: a collective busy-wait (RCCL/NCCL); "
                   "no step for 15.7s (threshold 13.1s: k x p99 step interval); last step 29")
        real_get = checks.http_get
        checks.http_get = lambda url, timeout=3: POLL_HISTOGRAM
        try:
            self.assertEqual(self.run("stall-bound", summary, 1, "http://x/metrics"), (0, "13.1 24.100\n"))
            # The threshold the daemon states is max(k x p99, min_stall).
            self.assertEqual(self.run("stall-bound", summary, 1, "http://x/metrics", 5, 2.6207, 8)[0], 0)
            with redirect_stderr(io.StringIO()):
                self.assertEqual(self.run("stall-bound", summary, 1, "http://x/metrics", 5, 1.0, 8)[0], 1)
                self.assertEqual(self.run("stall-bound", "training stopped", 1, "http://x/metrics")[0], 1)
        finally:
            checks.http_get = real_get


if __name__ == "__main__":
    unittest.main()
