#!/usr/bin/python3
"""The integration scripts' assertions and probes, one tested module.

The scripts call `python3 checks.py COMMAND ARGS...`; a predicate exits 0
when it holds and 1 when not, a query prints its answer. Nothing here
evaluates text as Python: a condition is "PATH OP VALUE", where PATH is a
dotted path into a JSON record (`progress.last_step`, `headers.Idempotency-Key`,
a list index as a number) and VALUE is read as JSON when it parses, else as
a string. Tested by checks_test.py (the `integration_checks` unit test).
"""

import json
import os
import sys

# socket, sqlite3 and urllib are imported where used: every check is a
# process of its own, and the scripts time some of them against a deadline.

MISSING = object()


def get_path(record, path):
    """The value at a dotted path, or MISSING."""
    value = record
    for part in path.split(".") if path else []:
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.lstrip("-").isdigit() and -len(value) <= int(part) < len(value):
            value = value[int(part)]
        else:
            return MISSING
    return value


def parse_value(text):
    try:
        return json.loads(text)
    except ValueError:
        return text


def equal(actual, text):
    # 7 and "7" are one value to a shell script; a JSON true is neither 1 nor "True".
    expected = parse_value(text)
    if isinstance(actual, bool) or isinstance(expected, bool):
        if actual is expected:
            return True
    elif actual == expected:
        return True
    return isinstance(actual, str) and actual == text


def number(value):
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ValueError(f"not a number: {value!r}")
    return float(value)


def compare(actual, op, text):
    """actual OP text, as a condition of this module defines it."""
    if op == "present":
        return actual is not MISSING
    if op == "absent":
        return actual is MISSING
    if actual is MISSING:
        return False
    if op == "==":
        return equal(actual, text)
    if op == "!=":
        return not equal(actual, text)
    if op in ("<", "<=", ">", ">="):
        try:
            a, b = number(actual), number(parse_value(text))
        except ValueError:
            return False
        return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]
    if op == "in":
        return any(equal(actual, choice) for choice in text.split("|"))
    if not isinstance(actual, str):
        return False
    if op == "contains":
        return text in actual
    if op == "contains-any":
        return any(choice in actual for choice in text.split("|"))
    if op == "startswith":
        return actual.startswith(text)
    raise ValueError(f"unknown operator {op!r}")


def parse_condition(condition):
    """'PATH OP VALUE' (VALUE may hold spaces; present/absent take none)."""
    parts = condition.split(" ", 2)
    if len(parts) == 2 and parts[1] in ("present", "absent"):
        return parts[0], parts[1], ""
    if len(parts) != 3:
        raise ValueError(f"condition {condition!r}: want 'PATH OP VALUE'")
    return parts[0], parts[1], parts[2]


def holds(record, conditions):
    for condition in conditions:
        path, op, text = parse_condition(condition)
        if not compare(get_path(record, path), op, text):
            return False
    return True


def render(value):
    """A value as a shell script compares it: strings bare, the rest JSON."""
    if value is MISSING:
        return ""
    return value if isinstance(value, str) else json.dumps(value)


def load_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def load_jsonl(path):
    """Records of a JSON-lines file; a file not yet written has none."""
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def split_at_dashes(args):
    if "--" in args:
        i = args.index("--")
        return args[:i], args[i + 1:]
    return args, []


def sum_per_key(records, key_path, value_path):
    sums = {}
    for r in records:
        key = render(get_path(r, key_path))
        value = get_path(r, value_path)
        sums[key] = sums.get(key, 0) + (0 if value is MISSING else value)
    return sums


def am_alert_lines(alerts, job_id):
    """Alertmanager's active alerts of a job as 'alertname class severity cluster summary'."""
    lines = []
    for a in alerts:
        labels = a["labels"]
        if labels.get("job_id") == str(job_id) and a["status"]["state"] == "active":
            summary = a["annotations"].get("summary", "")[:60].replace(" ", "_")
            lines.append(" ".join([labels["alertname"], labels["class"], labels["severity"],
                                   labels["cluster"], summary]))
    return lines


def local_addresses(ss_lines, pids=(), names=()):
    """Local addresses of `ss -ltnpH` lines whose users are one of pids or names."""
    out = []
    for line in ss_lines:
        fields = line.split()
        if len(fields) < 4:
            continue
        users = " ".join(fields[5:])
        if any(f"pid={p}," in users for p in pids) or any(f'"{n}' in users for n in names):
            out.append(fields[3])
    return out


def metric_value(exposition, name):
    """The value of the unlabelled sample `name` in a Prometheus text exposition, or None."""
    for line in exposition.splitlines():
        fields = line.split()
        if len(fields) >= 2 and fields[0] == name:
            return float(fields[1])
    return None


def labelled_samples(exposition, name):
    """(labels dict, value) of every sample `name{...}` in a Prometheus text exposition."""
    import re
    out = []
    for line in exposition.splitlines():
        if line.startswith(name + "{"):
            labels, _, value = line.rpartition(" ")
            out.append((dict(re.findall(r'(\w+)="([^"]*)"', labels)), float(value)))
    return out


def metric_sum(exposition, name, wanted):
    """The sum of every sample of `name` (unlabelled or labelled) whose labels
    include each key=value of `wanted`; None when none matches."""
    samples = labelled_samples(exposition, name)
    plain = metric_value(exposition, name)
    if plain is not None:
        samples.append(({}, plain))
    values = [v for labels, v in samples if all(labels.get(k) == w for k, w in wanted.items())]
    return sum(values) if values else None


def histogram_cover(exposition, name):
    """The smallest bucket bound of histogram `name` that holds all its
    observations (inf when only +Inf does); None without observations."""
    buckets = [(float("inf") if labels.get("le") == "+Inf" else float(labels["le"]), count)
               for labels, count in labelled_samples(exposition, name + "_bucket") if "le" in labels]
    total = max((count for _, count in buckets), default=0)
    if not total:
        return None
    return min(le for le, count in buckets if count >= total)


def stated_threshold(summary):
    """The stall threshold an incident's summary states ("(threshold 13.1s: ...)"), or None."""
    import re
    found = re.search(r"\(threshold ([0-9.]+)s", summary)
    return float(found.group(1)) if found else None


def http_get(url, timeout=3):
    import urllib.request
    return urllib.request.urlopen(url, timeout=timeout).read().decode()


# ----------------------------------------------------------------- commands

def cmd_field(args):
    """field FILE PATH...: the values, space-separated (as `print(a, b)`)."""
    record = load_json(args[0])
    values = [get_path(record, p) for p in args[1:]]
    if any(v is MISSING for v in values):
        return 1
    print(" ".join(render(v) for v in values))
    return 0


def cmd_lines(args):
    """lines FILE PATH: a list's items, one per line."""
    items = get_path(load_json(args[0]), args[1])
    if not isinstance(items, list):
        return 1
    for item in items:
        print(render(item))
    return 0


def cmd_expect(args):
    """expect FILE COND...: every condition holds of the JSON document."""
    return 0 if holds(load_json(args[0]), args[1:]) else 1


def cmd_any(args):
    """any FILE PATH COND...: some item of the list at PATH meets every condition."""
    items = get_path(load_json(args[0]), args[1])
    return 0 if isinstance(items, list) and any(holds(i, args[2:]) for i in items) else 1


def playbook_result(report, name):
    """The result of playbook NAME in a `jobmon diagnose --json` report
    (schema jobmon.diagnose/v1: playbooks[].playbook), or MISSING."""
    for result in report.get("playbooks", []) if isinstance(report, dict) else []:
        if isinstance(result, dict) and result.get("playbook") == name:
            return result
    return MISSING


def playbook_items(args):
    """(items of LIST in playbook NAME's result, conditions) from FILE NAME LIST COND..."""
    result = playbook_result(load_json(args[0]), args[1])
    if result is MISSING:
        raise ValueError(f"no playbook {args[1]!r} in {args[0]}")
    items = get_path(result, args[2])
    if not isinstance(items, list):
        raise ValueError(f"{args[1]}: {args[2]} is not a list")
    return items, args[3:]


def cmd_playbooks(args):
    """playbooks FILE: the playbooks a diagnose JSON report ran, one per line, in its order
    (what `jobmon diagnose` without --playbook picked from the triage class)."""
    report = load_json(args[0])
    results = report.get("playbooks", []) if isinstance(report, dict) else []
    for result in results:
        if isinstance(result, dict) and isinstance(result.get("playbook"), str):
            print(result["playbook"])
    return 0


def cmd_playbook(args):
    """playbook FILE NAME COND...: diagnose JSON: playbook NAME ran and its result meets every condition.
    When it does not, what the playbook said (its verdict and anomalies) goes to stderr, so that a
    failure under load can be read from the test's log."""
    result = playbook_result(load_json(args[0]), args[1])
    if result is not MISSING and holds(result, args[2:]):
        return 0
    if result is MISSING:
        print(f"# playbook {args[1]!r}: not in {args[0]}", file=sys.stderr)
    else:
        explain_playbook(args[1], result)
    return 1


def explain_playbook(name, result):
    """What playbook NAME said (its verdict, anomalies and evidence rows), to stderr: a failed
    check's context in the test's log."""
    anomalies = result.get("anomalies", []) if isinstance(result, dict) else []
    said = [{k: a.get(k) for k in ("code", "host", "gpu", "device", "summary") if k in a}
            for a in anomalies if isinstance(a, dict)]
    print(f"# playbook {name!r}: verdict {result.get('verdict')!r}; anomalies {json.dumps(said)[:2000]}",
          file=sys.stderr)
    for table in result.get("evidence", []) if isinstance(result, dict) else []:
        for row in table.get("rows", []) if isinstance(table, dict) else []:
            if isinstance(row, dict):
                print(f"#   {table.get('title')}: {json.dumps(row)[:300]}", file=sys.stderr)


def cmd_playbook_any(args):
    """playbook-any FILE NAME LIST COND...: some item of playbook NAME's LIST (anomalies, chain) meets every
    condition; when none does, what the playbook said goes to stderr (as `playbook`)."""
    items, conditions = playbook_items(args)
    if any(holds(i, conditions) for i in items):
        return 0
    explain_playbook(args[1], playbook_result(load_json(args[0]), args[1]))
    return 1


def cmd_playbook_none(args):
    """playbook-none FILE NAME LIST COND...: playbook NAME ran and no item of its LIST meets every condition."""
    items, conditions = playbook_items(args)
    return 1 if any(holds(i, conditions) for i in items) else 0


def cmd_count(args):
    """count JSONL COND...: how many records meet every condition (no file: 0)."""
    print(sum(1 for r in load_jsonl(args[0]) if holds(r, args[1:])))
    return 0


def cmd_first(args):
    """first JSONL SELECT... -- COND...: the first selected record meets every COND."""
    select, conditions = split_at_dashes(args[1:])
    for r in load_jsonl(args[0]):
        if holds(r, select):
            return 0 if holds(r, conditions) else 1
    return 1


def cmd_select(args):
    """select JSONL PATH COND...: PATH of each record meeting every condition."""
    for r in load_jsonl(args[0]):
        if holds(r, args[2:]):
            print(render(get_path(r, args[1])))
    return 0


def cmd_first_value(args):
    """first-value JSONL PATH COND...: PATH of the first record meeting every condition."""
    for r in load_jsonl(args[0]):
        if holds(r, args[2:]):
            print(render(get_path(r, args[1])))
            return 0
    return 1


def cmd_sums_equal(args):
    """sums-equal JSONL KEY_PATH VALUE_PATH N: per KEY, VALUEs add up to N."""
    sums = sum_per_key(load_jsonl(args[0]), args[1], args[2])
    return 0 if all(v == float(args[3]) for v in sums.values()) else 1


def cmd_mapping(args):
    """mapping FILE LIST_PATH KEY_PATH VALUE_PATH: sorted 'key=value' lines."""
    items = get_path(load_json(args[0]), args[1])
    if not isinstance(items, list):
        return 1
    for key, value in sorted((render(get_path(i, args[2])), render(get_path(i, args[3]))) for i in items):
        print(f"{key}={value}")
    return 0


def cmd_compare(args):
    """compare A OP B: numbers (or strings for ==, !=)."""
    return 0 if compare(parse_value(args[0]), args[1], args[2]) else 1


def cmd_between(args):
    """between LOW VALUE HIGH: LOW <= VALUE <= HIGH, as numbers."""
    try:
        low, value, high = (number(parse_value(a)) for a in args[:3])
    except ValueError:
        return 1
    return 0 if low <= value <= high else 1


def cmd_sql(args):
    """sql DB QUERY: rows, '|' separated (read-only)."""
    import sqlite3
    db = sqlite3.connect("file:" + args[0] + "?mode=ro", uri=True, timeout=5)
    for row in db.execute(args[1]):
        print("|".join("" if v is None else str(v) for v in row))
    return 0


def cmd_free_port(_args):
    """free-port: a TCP port free on 127.0.0.1 right now."""
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    print(s.getsockname()[1])
    return 0


def cmd_http_get(args):
    """http-get URL: the body."""
    print(http_get(args[0], timeout=2))
    return 0


def cmd_push_text(args):
    """push-text URL USER PASSWORD_FILE TEXT: POSTs TEXT (Prometheus text format) to
    URL with basic auth, the password read from PASSWORD_FILE; prints the HTTP status."""
    import base64
    import urllib.error
    import urllib.request
    with open(args[2]) as f:
        password = f.read().strip()
    token = base64.b64encode(f"{args[1]}:{password}".encode()).decode()
    request = urllib.request.Request(args[0], data=args[3].encode(), method="POST",
                                     headers={"Authorization": "Basic " + token})
    try:
        status = urllib.request.urlopen(request, timeout=3).status
    except urllib.error.HTTPError as e:
        status = e.code
    print(status)
    return 0 if 200 <= status < 300 else 1


def cmd_metric_value(args):
    """metric-value URL NAME: an unlabelled sample's value from /metrics (absent: fails)."""
    value = metric_value(http_get(args[0], timeout=2), args[1])
    if value is None:
        return 1
    print(render(value))
    return 0


def cmd_metric_sum(args):
    """metric-sum URL NAME [LABEL=VALUE]...: the sum of NAME's samples with those labels (none: fails)."""
    wanted = dict(a.split("=", 1) for a in args[2:])
    value = metric_sum(http_get(args[0], timeout=2), args[1], wanted)
    if value is None:
        return 1
    print(render(value))
    return 0


def tsdb_max_seconds(status):
    """The newest sample's time (Unix seconds) from /api/v1/status/tsdb's
    answer: an archived TSDB is all head (the WAL replayed) for jobs under
    the 2 h block range; None when the head is empty."""
    head = status.get("data", {}).get("headStats", {})
    if not head.get("numSeries"):
        return None
    return head["maxTime"] / 1000


def cmd_tsdb_max_time(args):
    """tsdb-max-time URL: the TSDB's newest sample time, Unix seconds (instant
    queries on an archive are asked at it: after the end, series are stale)."""
    value = tsdb_max_seconds(json.loads(http_get(args[0].rstrip("/") + "/api/v1/status/tsdb")))
    if value is None:
        return 1
    print(f"{value:.3f}")
    return 0


def cmd_served_gpus(args):
    """served-gpus TARGET_FILE: "gpu source" per hw_gpu_served sample of the exporter the
    Prometheus file_sd target file names, then "shared N" per hw_gpu_node_shared."""
    address = load_json(args[0])[0]["targets"][0]
    text = http_get(f"http://{address}/metrics", timeout=2)
    for labels, _ in labelled_samples(text, "hw_gpu_served"):
        print(labels["gpu"], labels["source"])
    for _, value in labelled_samples(text, "hw_gpu_node_shared"):
        print("shared", f"{value:g}")
    return 0


def cmd_am_alerts(args):
    """am-alerts URL JOB: Alertmanager's active alerts of the job."""
    for line in am_alert_lines(json.loads(http_get(args[0] + "/api/v2/alerts")), args[1]):
        print(line)
    return 0


def cmd_tg_probe(args):
    """tg-probe PORT TOKEN CASE: a request the real Bot API rejects; 0 if the stub does too."""
    import time
    import urllib.error
    import urllib.parse
    import urllib.request
    port, token, case = args[:3]

    def post(method, data, ctype, tok=None):
        request = urllib.request.Request(f"http://127.0.0.1:{port}/bot{tok or token}/{method}",
                                         data=data, headers={"Content-Type": ctype})
        try:
            return urllib.request.urlopen(request, timeout=5).read().decode()
        except urllib.error.HTTPError as e:
            return e.read().decode()

    form = "application/x-www-form-urlencoded"
    time.sleep(0.4)  # outside the stub's flood window
    if case == "long":
        out, want = post("sendMessage", json.dumps({"chat_id": "9", "text": "x" * 4097}).encode(),
                         "application/json"), "message is too long"
    elif case == "entity":
        out, want = post("sendMessage", urllib.parse.urlencode(
            {"chat_id": "8", "parse_mode": "HTML", "text": "a & b"}).encode(), form), "can't parse entities"
    elif case == "nodoc":
        out, want = post("sendDocument", urllib.parse.urlencode(
            {"chat_id": "7", "document": "report"}).encode(), form), "there is no document"
    elif case == "reply":
        out, want = post("sendMessage", json.dumps({"chat_id": "6", "text": "x", "reply_parameters": {
            "message_id": 999}}).encode(), "application/json"), "message to be replied not found"
    else:
        out, want = post("sendMessage", b"chat_id=1&text=x", form, tok="1:wrong"), "Unauthorized"
    return 0 if want in out else 1


def cmd_listen_addresses(args):
    """listen-addresses [--pid P]... [--name N]... < `ss -ltnpH`: their local addresses."""
    pids, names = [], []
    for flag, value in zip(args[::2], args[1::2]):
        (pids if flag == "--pid" else names).append(value)
    for address in local_addresses(sys.stdin.read().splitlines(), pids, names):
        print(address)
    return 0


def cmd_stall_bound(args):
    """stall-bound SUMMARY POLL METRICS_URL [K P99 MIN_STALL]: the threshold a
    stall incident's summary states, and the latest its opening may come after
    the last step: that threshold, one poll interval, and two of the daemon's
    longest cycles (from jobmon_monitor_poll_duration_seconds: the cycle under
    way when the threshold passed, and the one that finds it; the loop is
    serial, so another job's end or incident lengthens both). Printed as
    "STATED BOUND". With K P99 MIN_STALL it fails unless the stated threshold
    is max(K x P99, MIN_STALL), to the summary's 0.1 s."""
    stated = stated_threshold(args[0])
    longest = histogram_cover(http_get(args[2], timeout=2), "jobmon_monitor_poll_duration_seconds")
    if stated is None or longest is None:
        return 1
    if len(args) >= 6:
        expected = max(float(args[3]) * float(args[4]), float(args[5]))
        if abs(stated - expected) > 0.051:
            print(f"stated threshold {stated}s, expected max(k x p99, min_stall) = {expected:.2f}s",
                  file=sys.stderr)
            return 1
    print(f"{stated:g} {stated + float(args[1]) + 2 * longest:.3f}")
    return 0


COMMANDS = {
    "field": cmd_field,
    "lines": cmd_lines,
    "expect": cmd_expect,
    "any": cmd_any,
    "count": cmd_count,
    "first": cmd_first,
    "select": cmd_select,
    "first-value": cmd_first_value,
    "sums-equal": cmd_sums_equal,
    "mapping": cmd_mapping,
    "compare": cmd_compare,
    "playbook": cmd_playbook,
    "playbook-any": cmd_playbook_any,
    "playbook-none": cmd_playbook_none,
    "playbooks": cmd_playbooks,
    "between": cmd_between,
    "sql": cmd_sql,
    "free-port": cmd_free_port,
    "http-get": cmd_http_get,
    "push-text": cmd_push_text,
    "metric-value": cmd_metric_value,
    "metric-sum": cmd_metric_sum,
    "stall-bound": cmd_stall_bound,
    "tsdb-max-time": cmd_tsdb_max_time,
    "served-gpus": cmd_served_gpus,
    "am-alerts": cmd_am_alerts,
    "listen-addresses": cmd_listen_addresses,
    "tg-probe": cmd_tg_probe,
}


def main(argv):
    if len(argv) < 2 or argv[1] not in COMMANDS:
        print("usage: checks.py {" + ",".join(COMMANDS) + "} ARGS...", file=sys.stderr)
        return 2
    try:
        return COMMANDS[argv[1]](argv[2:])
    except Exception as e:  # noqa: BLE001 -- a check that cannot run has failed (sqlite3, HTTP, JSON errors)
        print(f"checks.py {argv[1]}: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
