#!/usr/bin/python3
"""dashboard_check.py's and tsdb_relabel.py's pure parts (no Prometheus,
no cluster), and the shape of contrib/grafana/jobmon-job.json that the live
check relies on: every query is filtered by the job and host variables and
names no variable the check does not fill in."""

import json
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import dashboard_check as dc  # noqa: E402
import tsdb_relabel  # noqa: E402

DASHBOARD = os.path.join(HERE, "..", "..", "contrib", "grafana", "jobmon-job.json")

SMALL = {
    "templating": {"list": [
        {"name": "DS_PROMETHEUS", "type": "datasource", "query": "prometheus"},
        {"name": "host", "type": "query", "allValue": ".*"},
        {"name": "hostname", "type": "query", "allValue": "n.*"},
        {"name": "job", "type": "query"},
        {"name": "k", "type": "constant", "query": "7"},
    ]},
    "panels": [
        {"id": 1, "title": "a", "targets": [{"refId": "A", "expr": "up"}, {"refId": "B"}]},
        {"id": 2, "type": "row", "title": "collapsed", "panels": [
            {"id": 3, "title": "inner", "targets": [{"refId": "A", "expr": "x{host=~\"$host\"}"}]}]},
        {"id": 4, "title": "text panel"},
    ],
}


class Extraction(unittest.TestCase):
    def test_targets_include_collapsed_rows_and_skip_empty_exprs(self):
        self.assertEqual(dc.targets_of(SMALL), [("a", "A", "up"), ("inner", "A", 'x{host=~"$host"}')])

    def test_variable_values_all_and_overrides(self):
        values = dc.variable_values(SMALL, {"job": "12"})
        self.assertEqual(values, {"host": ".*", "hostname": "n.*", "job": "12", "k": "7"})
        self.assertEqual(dc.variable_values(SMALL, {})["job"], ".*")  # no allValue: Grafana's regex for All

    def test_substitute_forms_and_longest_name_first(self):
        values = {"host": "H", "hostname": "N", "__rate_interval": "30s"}
        self.assertEqual(dc.substitute('a{h=~"$host",n=~"$hostname"}[$__rate_interval]', values),
                         'a{h=~"H",n=~"N"}[30s]')
        self.assertEqual(dc.substitute('${host} ${host:regex} [[host]] $host_x', values), 'H H H $host_x')

    def test_leftovers(self):
        self.assertEqual(dc.leftover_variables('rate(x{h="$host"}[${__interval}])'), ["__interval", "host"])
        self.assertEqual(dc.leftover_variables('rate(x[1m])'), [])

    def test_label_values(self):
        self.assertEqual(dc.label_values_query('label_values(up{job="j", a=~".*"}, host)'),
                         ('up{job="j", a=~".*"}', "host"))
        self.assertEqual(dc.label_values_query("label_values(host)"), (None, "host"))
        self.assertIsNone(dc.label_values_query("query_result(up)"))


class TheDashboard(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with open(DASHBOARD) as f:
            cls.d = json.load(f)

    def test_schema_and_variables(self):
        self.assertGreaterEqual(self.d["schemaVersion"], 36)
        names = {v["name"]: v for v in self.d["templating"]["list"]}
        self.assertEqual(names["DS_PROMETHEUS"]["type"], "datasource")
        self.assertEqual(names["DS_PROMETHEUS"]["query"], "prometheus")
        for var in ("cluster", "slurm_job_id", "host"):
            self.assertEqual(names[var]["type"], "query")
            self.assertEqual(names[var]["datasource"]["uid"], "${DS_PROMETHEUS}")

    def test_every_query_filters_by_job_and_host_and_substitutes_fully(self):
        targets = dc.targets_of(self.d)
        self.assertGreater(len(targets), 30)
        values = dc.variable_values(self.d, {})
        values.update({"__rate_interval": "30s", "__interval": "5s", "__range": "60s"})
        for title, ref, expr in targets:
            with self.subTest(panel=title, ref=ref):
                # every selector of the expression: count the job/host matchers per metric
                selectors = expr.count("{")
                for matcher in ('slurm_job_id=~"$slurm_job_id"', 'cluster=~"$cluster"', 'host=~"$host"'):
                    self.assertEqual(expr.count(matcher), selectors, matcher)
                self.assertEqual(dc.leftover_variables(dc.substitute(expr, values)), [])

    def test_panels_use_the_datasource_variable_and_unique_ids(self):
        panels = dc.panels_of(self.d)
        ids = [p["id"] for p in panels]
        self.assertEqual(len(ids), len(set(ids)))
        for p in panels:
            if p.get("type") == "row":
                continue
            with self.subTest(panel=p["title"]):
                self.assertEqual(p["datasource"], {"type": "prometheus", "uid": "${DS_PROMETHEUS}"})
                self.assertTrue(all(t["datasource"] == p["datasource"] for t in p["targets"]))

    def test_panels_do_not_overlap(self):
        cells = set()
        for p in dc.panels_of(self.d):
            g = p["gridPos"]
            mine = {(x, y) for x in range(g["x"], g["x"] + g["w"]) for y in range(g["y"], g["y"] + g["h"])}
            self.assertFalse(cells & mine, p["title"])
            self.assertLessEqual(g["x"] + g["w"], 24, p["title"])
            cells |= mine


class Relabel(unittest.TestCase):
    def test_dump_line(self):
        self.assertEqual(tsdb_relabel.parse_dump_line('{__name__="up", host="n\\"1"} 1 1795425256500\n'),
                         ({"__name__": "up", "host": 'n\\"1'}, "1", 1795425256500))
        self.assertIsNone(tsdb_relabel.parse_dump_line("level=info msg=x"))

    def test_labels_added_nan_dropped_families_grouped(self):
        a = ['{__name__="up", host="node1"} 1 1000\n', '{__name__="x_total", host="node1"} 5 2000\n',
             '{__name__="x_total", host="node1"} NaN 3000\n']
        b = ['{__name__="up", host="node1"} 0 1500\n']
        text, span = tsdb_relabel.relabel([(a, {"slurm_job_id": "1"}), (b, {"slurm_job_id": "2"})])
        self.assertEqual(text.splitlines(), [
            'up{host="node1",slurm_job_id="1"} 1 1.000',
            'up{host="node1",slurm_job_id="2"} 0 1.500',
            'x_total{host="node1",slurm_job_id="1"} 5 2.000',
            "# EOF"])
        self.assertEqual(span, (1000, 2000))
        self.assertEqual(tsdb_relabel.relabel([([], {})]), ("# EOF\n", None))


if __name__ == "__main__":
    unittest.main()
