#!/usr/bin/python3
"""Runs a Grafana dashboard's queries against a Prometheus, without Grafana.

    dashboard_check.py DASHBOARD.json URL [--start UNIX --end UNIX]
                       [--step SECONDS] [--rate-interval DURATION]
                       [--var NAME=VALUE]... [--optional-var NAME]...
                       [--rules RULES.yml]

Every panel's every target `expr` (rows' nested panels included) has the
dashboard's template variables substituted the way Grafana would for "All"
(a query variable becomes its allValue, `.*` by default; --var overrides
one), the built-ins $__rate_interval, $__interval and $__range filled in,
and is run as a range query over [start, end] (default: the TSDB's head,
from /api/v1/status/tsdb: an archived job's TSDB is all head). A target
whose query errors or returns no series fails, named by panel and refId.
Each query variable's label_values(...) query is checked too (it must name
values, unless --optional-var: the job labels a job's own Prometheus lacks).
--rules also runs every rule's expr of a Prometheus rules file as an instant
query at the end time (parse/evaluation errors fail; no series is fine: an
alert that does not fire). One line per check, then "N passed, N failed";
exit 1 when any failed.
"""
import argparse
import json
import re
import sys
import urllib.error
import urllib.parse
import urllib.request

BUILTIN_RANGES = ("__rate_interval", "__interval", "__range")


def panels_of(dashboard):
    """Every panel, rows' collapsed children included, in dashboard order."""
    out = []
    for panel in dashboard.get("panels", []):
        out.append(panel)
        out.extend(panels_of(panel))
    return out


def targets_of(dashboard):
    """(panel title, refId, expr) for every target with an expr."""
    found = []
    for panel in panels_of(dashboard):
        for target in panel.get("targets", []):
            if target.get("expr"):
                found.append((panel.get("title", f"panel {panel.get('id')}"), target.get("refId", "?"),
                              target["expr"]))
    return found


def variable_values(dashboard, overrides):
    """NAME -> text Grafana puts in a query for the dashboard's variables:
    allValue (or `.*`) for query variables, constants' and custom ones'
    first value, --var overrides on top."""
    values = {}
    for var in dashboard.get("templating", {}).get("list", []):
        kind, name = var.get("type"), var["name"]
        if kind == "query":
            values[name] = var.get("allValue") or ".*"
        elif kind in ("constant", "textbox", "custom"):
            values[name] = str(var.get("query", "")).split(",")[0]
    values.update(overrides)
    return values


def substitute(expr, values):
    """expr with $name, ${name}, ${name:format} and [[name]] replaced from
    values (longest name first, so $host does not eat $hostname)."""
    for name in sorted(values, key=len, reverse=True):
        value = values[name]
        expr = re.sub(r"\$\{" + re.escape(name) + r"(?::[a-z]+)?\}", lambda _m, v=value: v, expr)
        expr = expr.replace(f"[[{name}]]", value)
        expr = re.sub(r"\$" + re.escape(name) + r"(?![A-Za-z0-9_])", lambda _m, v=value: v, expr)
    return expr


def leftover_variables(expr):
    """The $variables still in expr after substitution (a dashboard variable
    the check does not know would reach Prometheus as text)."""
    return sorted(set(re.findall(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)", expr)))


def label_values_query(definition):
    """label_values(SELECTOR, LABEL) -> (SELECTOR, LABEL); label_values(LABEL)
    -> (None, LABEL); None for other variable queries."""
    m = re.fullmatch(r"\s*label_values\(\s*(?:(.*),\s*)?([A-Za-z_][A-Za-z0-9_]*)\s*\)\s*", definition, re.S)
    return (m.group(1), m.group(2)) if m else None


def api(url, path, params, timeout=10):
    """GET URL/api/v1/PATH?params -> the decoded `data`; raises RuntimeError
    with Prometheus's error text on a failed query."""
    query = urllib.parse.urlencode(params, doseq=True)
    try:
        with urllib.request.urlopen(f"{url.rstrip('/')}/api/v1/{path}?{query}", timeout=timeout) as r:
            reply = json.load(r)
    except urllib.error.HTTPError as e:  # 400/422: a bad query, with its error in the body
        try:
            reply = json.load(e)
        except ValueError:
            raise RuntimeError(f"HTTP {e.code}") from None
    except OSError as e:
        raise RuntimeError(str(e)) from None
    if reply.get("status") != "success":
        raise RuntimeError(f"{reply.get('errorType', 'error')}: {reply.get('error', reply)}")
    return reply["data"]


def head_range(url):
    """(min, max) sample time of the TSDB's head, Unix seconds."""
    head = api(url, "status/tsdb", {}).get("headStats", {})
    if not head.get("numSeries"):
        raise RuntimeError("the TSDB's head is empty: give --start and --end")
    return head["minTime"] / 1000, head["maxTime"] / 1000


def duration(seconds):
    return f"{max(1, int(round(seconds)))}s"


class Report:
    def __init__(self):
        self.passed = self.failed = 0

    def check(self, ok, what):
        print(("ok   - " if ok else "FAIL - ") + what)
        if ok:
            self.passed += 1
        else:
            self.failed += 1


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dashboard")
    parser.add_argument("url")
    parser.add_argument("--start", type=float)
    parser.add_argument("--end", type=float)
    parser.add_argument("--step", type=float, default=5)
    parser.add_argument("--rate-interval", default="30s")
    parser.add_argument("--var", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument("--optional-var", action="append", default=[], metavar="NAME")
    parser.add_argument("--rules")
    args = parser.parse_args(argv[1:])

    with open(args.dashboard) as f:
        dashboard = json.load(f)
    report = Report()
    try:
        start, end = (args.start, args.end) if args.start and args.end else head_range(args.url)
    except RuntimeError as e:
        print(f"dashboard_check: {e}", file=sys.stderr)
        return 2
    print(f"# {args.dashboard} against {args.url}, {start:.0f}..{end:.0f} ({end - start:.0f} s)")
    overrides = dict(v.split("=", 1) for v in args.var)
    values = variable_values(dashboard, overrides)
    values.update({"__rate_interval": args.rate_interval, "__interval": duration(args.step),
                   "__range": duration(end - start)})

    for var in dashboard.get("templating", {}).get("list", []):
        if var.get("type") != "query":
            continue
        definition = var.get("definition") or (var.get("query") or {}).get("query", "")
        parsed = label_values_query(substitute(definition, values))
        if parsed is None:
            report.check(False, f"variable {var['name']}: not a label_values() query: {definition}")
            continue
        selector, label = parsed
        try:
            params = {"start": start, "end": end}
            if selector:
                params["match[]"] = selector
            names = api(args.url, f"label/{label}/values", params)
        except RuntimeError as e:
            report.check(False, f"variable {var['name']}: {e}")
            continue
        optional = var["name"] in args.optional_var
        report.check(bool(names) or optional,
                     f"variable {var['name']}: {len(names)} values {names[:8]}" + (" (optional)" if optional else ""))

    for title, ref, expr in targets_of(dashboard):
        query = substitute(expr, values)
        left = leftover_variables(query)
        if left:
            report.check(False, f"panel '{title}' {ref}: unknown variables {left} in {expr}")
            continue
        try:
            result = api(args.url, "query_range", {"query": query, "start": start, "end": end, "step": args.step})
        except RuntimeError as e:
            report.check(False, f"panel '{title}' {ref}: {e}: {query}")
            continue
        series = result.get("result", [])
        report.check(bool(series), f"panel '{title}' {ref}: {len(series)} series" +
                     ("" if series else f" (none): {query}"))

    if args.rules:
        import yaml  # Debian's python3-yaml; only the rules check needs it
        with open(args.rules) as f:
            groups = yaml.safe_load(f).get("groups", [])
        for group in groups:
            for rule in group.get("rules", []):
                name = rule.get("alert") or rule.get("record")
                try:
                    result = api(args.url, "query", {"query": rule["expr"], "time": end})
                    report.check(True, f"rule {name}: evaluates ({len(result.get('result', []))} series at the end)")
                except RuntimeError as e:
                    report.check(False, f"rule {name}: {e}")

    print(f"{report.passed} passed, {report.failed} failed")
    return 1 if report.failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
