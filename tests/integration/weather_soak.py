#!/usr/bin/python3
"""The weather soak's two helpers (weather_soak_test.sh drives the run):

    weather_soak.py watch SPECS
    weather_soak.py report --schedule FILE --webhook FILE --notify FILE [--slack S]

watch: follows job logs and, for each line "OUT<TAB>LOG<TAB>REGEX" of SPECS
(re-read every round, so the driver adds lines as it submits jobs), writes
time.time() to OUT when a line of LOG first matches REGEX (polled every
0.2 s): the moment a hang was injected where the hanging program writes no
side file of its own (the fake trainer stops stepping right after the step
before --hang-at). Runs until killed.

report: the detector's table. Reads the driver's schedule (JSON lines:
"run", "job", "times", "weather" records), the webhook receiver's log (every
request: status, body = the alert, received_at) and the monitor's notify
file (the same alerts, written by the daemon), and prints:
  - healthy job-hours watched (healthy jobs start to end; hang jobs start
    to the injection);
  - false firing alerts per class: any firing of a job while it was healthy
    (opened before the job's injection, or at any time for a healthy job);
  - hangs injected / caught, detection delay (the alert's opened_at minus
    the injection) p50/p95/max, each against the job's bound (the threshold
    the alert's own summary states, "threshold Ns"; else max(k*p99, min_stall)
    from the job's known step time and log interval);
  - class accuracy (the first firing after the injection against the class
    the hang gets without weather);
  - every alert of the notify file delivered to the webhook (the receiver's
    outage is bridged by the durable outbox).
Exit 1 when a done-criterion fails: a false firing, a hang not injected,
not caught, caught later than bound + poll (+ --slack for scheduling), or
with another class, an alert never delivered. Exit 2 on unreadable input.
"""
import argparse
import json
import math
import os
import re
import sys
import time

THRESHOLD = re.compile(r"threshold (\d+(?:\.\d+)?)s")


def watch(specs_path):
    done, offsets, pending = set(), {}, {}
    while True:
        try:
            with open(specs_path) as f:
                for line in f:
                    parts = line.rstrip("\n").split("\t")
                    if len(parts) == 3 and parts[0] not in done:
                        pending[parts[0]] = (parts[1], re.compile(parts[2], re.M))
        except OSError:
            pass
        for out, (log, rx) in list(pending.items()):
            try:
                with open(log, "rb") as f:
                    f.seek(offsets.get(out, 0))
                    data = f.read()
            except OSError:
                continue
            # Only whole lines; keep the tail of a partial line for the next round.
            cut = data.rfind(b"\n") + 1
            offsets[out] = offsets.get(out, 0) + cut
            if rx.search(data[:cut].decode("utf-8", "replace")):
                now = time.time()
                with open(out + ".tmp", "w") as g:
                    g.write(f"{now:.6f}\n")
                os.replace(out + ".tmp", out)
                done.add(out)
                del pending[out]
        time.sleep(0.2)


def read_jsonl(path):
    out = []
    try:
        with open(path) as f:
            for line in f:
                line = line.strip()
                if line:
                    try:
                        out.append(json.loads(line))
                    except json.JSONDecodeError:
                        pass
    except FileNotFoundError:
        pass
    return out


def read_time(path):
    try:
        with open(path) as f:
            return float(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def pct(values, p):
    """Nearest-rank percentile."""
    if not values:
        return None
    v = sorted(values)
    return v[max(0, math.ceil(p / 100 * len(v)) - 1)]


def fmt_s(x):
    return "-" if x is None else f"{x:.1f}"


def report(args):
    sched = read_jsonl(args.schedule)
    runs = [r for r in sched if r.get("type") == "run"]
    if not runs:
        print(f"weather_soak.py: no run record in {args.schedule}", file=sys.stderr)
        return 2
    run = runs[0]
    poll, k, min_stall = float(run["poll"]), float(run["k"]), float(run["min_stall"])
    jobs = {j["job_id"]: j for j in sched if j.get("type") == "job"}
    times = {t["job_id"]: t for t in sched if t.get("type") == "times"}
    # Healthy jobs the driver had to cancel at the wave's end (they ran
    # late): their end-of-job alert is the driver's doing, not a false one.
    cut = {c["job_id"]: c["at"] for c in sched if c.get("type") == "cut"}
    weather = [w for w in sched if w.get("type") == "weather"]
    restarts = [w["at"] for w in weather
                if w.get("what") == "monitor-sigkill" and w.get("phase") == "end" and "at" in w]

    # The alerts as the receiver got them (HTTP 200), one per job, incident and status.
    got = {}
    for rec in read_jsonl(args.webhook):
        b = rec.get("body")
        if rec.get("status") != 200 or not isinstance(b, dict):
            continue
        key = (b.get("job_id"), b.get("incident_id"), b.get("status"))
        if key not in got or rec.get("received_at", 0) < got[key]["received_at"]:
            got[key] = dict(b, received_at=rec.get("received_at", 0))
    notified = {}
    for a in read_jsonl(args.notify):
        notified.setdefault((a.get("job_id"), a.get("incident_id"), a.get("status")), a)
    firings = sorted((a for a in got.values() if a.get("status") == "firing"), key=lambda a: a.get("opened_at", 0))

    failures = []
    false_alerts, hang_rows, extra = [], [], []
    healthy_seconds = 0.0
    now = time.time()
    for jid, j in sorted(jobs.items()):
        t = times.get(jid, {})
        start = t.get("start") if (t.get("start") or 0) > 0 else None
        end = t.get("end") if (t.get("end") or 0) > 0 else now
        hang = j.get("hang")
        inject = read_time(hang["inject_file"]) if hang else None
        mine = [a for a in firings if a.get("job_id") == jid]
        if hang and inject is None:
            failures.append(f"job {jid} ({j['label']}): the {hang['kind']} hang was not injected")
        healthy_until = inject if hang else end
        if start is not None and healthy_until is not None:
            healthy_seconds += max(0.0, min(healthy_until, end) - start)
        for a in mine:
            if jid in cut and a.get("opened_at", 0) >= cut[jid] and str(a.get("class")).startswith("ended/"):
                continue
            if not hang or inject is None or a.get("opened_at", 0) < inject:
                false_alerts.append((j, a))
        if not hang or inject is None:
            continue
        after = [a for a in mine if a.get("opened_at", 0) >= inject]
        first = after[0] if after else None
        extra += [(j, a) for a in after[1:]]
        bound_src = "computed"
        p99 = j["step_seconds"] * 1.1 * max(1, j.get("log_interval", 1))
        bound = max(k * p99, min_stall)
        if first and (m := THRESHOLD.search(first.get("summary", ""))):
            bound, bound_src = float(m.group(1)), "alert"
        delay = first["opened_at"] - inject if first else None
        # The monitor never counts time it did not watch (docs/monitor.md,
        # "Weather"): a daemon restarted after the injection starts the
        # clock again once it has read the log, its first cycle after the
        # restart. And its clock starts when it read the last progress line,
        # up to one poll after the line was written (the injection): the
        # bound + one poll is counted from there.
        watched_from = inject
        for r in restarts:
            if inject < r and (not first or r < first["opened_at"]):
                watched_from = max(watched_from, r + poll)
        allowed = (watched_from - inject) + poll + bound + poll + args.slack
        row = {"job": j, "inject": inject, "first": first, "delay": delay, "bound": bound,
               "bound_src": bound_src, "class_ok": bool(first) and first.get("class") == hang["expect"],
               "unwatched": watched_from - inject}
        row["in_bound"] = delay is not None and delay <= allowed
        hang_rows.append(row)
        if not first:
            failures.append(f"job {jid} ({j['label']}): the {hang['kind']} hang was not caught")
        else:
            if not row["in_bound"]:
                failures.append(f"job {jid} ({j['label']}): caught after {delay:.1f}s, bound {bound:.0f}s + poll {poll:.0f}s "
                                f"after the last progress was read (+{row['unwatched']:.1f}s unwatched, +{args.slack:.0f}s)")
            if not row["class_ok"]:
                failures.append(f"job {jid} ({j['label']}): class {first.get('class')}, expected {hang['expect']}")
    for j, a in false_alerts:
        failures.append(f"job {a.get('job_id')} ({j['label']}): false firing {a.get('class')}")
    undelivered = [k_ for k_ in notified if k_ not in got]
    for k_ in undelivered:
        failures.append(f"alert {k_} is in the notify file, never reached the webhook")

    # The table.
    mode = run.get("mode", "?")
    wall = (max((w.get("at", 0) for w in sched if "at" in w), default=run["started"]) - run["started"])
    print(f"== weather soak: seed {run['seed']}, {mode} mode, {run.get('waves', 1)} wave(s), "
          f"{len(jobs)} jobs, {wall:.0f}s; monitor {run.get('monitor', '?')} ==")
    print(f"   config: poll {poll:g}s, k {k:g}, min_stall {min_stall:g}s; delays from the alert's opened_at")
    print("   weather injected:")
    for w in weather:
        rel = w["at"] - run["started"]
        print(f"     {rel:7.1f}s  {w['what']:<22} {w.get('phase', ''):<6} {w.get('detail', '')}")
    by_class = {}
    for _, a in false_alerts:
        by_class[a.get("class")] = by_class.get(a.get("class"), 0) + 1
    caught = [r for r in hang_rows if r["first"]]
    delays = [r["delay"] for r in caught]
    # Past the bound, counted from when the monitor could watch again.
    excess = [r["delay"] - r["unwatched"] - r["bound"] for r in caught]
    print()
    print(f"| {'measure':<44} | {'value':<40} |")
    print(f"|{'-' * 46}|{'-' * 42}|")

    def row_(name, value):
        print(f"| {name:<44} | {value:<40} |")
    row_("healthy job-hours watched", f"{healthy_seconds / 3600:.3f} ({healthy_seconds:.0f} job-s)")
    row_("false firing alerts (healthy jobs/windows)", str(len(false_alerts)))
    for c, n in sorted(by_class.items()):
        row_(f"  of class {c}", str(n))
    injected = [r for r in hang_rows if r["inject"] is not None]
    planned = sum(1 for j in jobs.values() if j.get("hang"))
    row_("hangs planned / injected / caught", f"{planned} / {len(injected)} / {len(caught)}")
    row_("caught within bound + poll (from last read)", f"{sum(r['in_bound'] for r in hang_rows)} / {len(injected)}")
    row_("detection delay p50 / p95 / max (s)", f"{fmt_s(pct(delays, 50))} / {fmt_s(pct(delays, 95))} / {fmt_s(max(delays) if delays else None)}")
    row_("delay - unwatched - bound p50/p95/max (s)", f"{fmt_s(pct(excess, 50))} / {fmt_s(pct(excess, 95))} / {fmt_s(max(excess) if excess else None)}")
    row_("class accuracy", f"{sum(r['class_ok'] for r in hang_rows)} / {len(injected)}")
    row_("firings after the first, on hung jobs", str(len(extra)))
    row_("alerts of the notify file delivered", f"{len(notified) - len(undelivered)} / {len(notified)}")
    print()
    print("   hangs:  job    label                kind          expected        got             delay  unwatched  bound(src)   ok")
    for r in hang_rows:
        j, f = r["job"], r["first"]
        ok = "yes" if r["in_bound"] and r["class_ok"] else "NO"
        print(f"          {j['job_id']:<6} {j['label']:<20} {j['hang']['kind']:<13} {j['hang']['expect']:<15} "
              f"{(f or {}).get('class', 'none'):<15} {fmt_s(r['delay']):>6} {r['unwatched']:9.1f}  "
              f"{r['bound']:5.0f}({r['bound_src']:<8}) {ok}")
    if false_alerts:
        print("   false firing alerts:")
        for j, a in false_alerts:
            rel = a.get("opened_at", 0) - run["started"]
            print(f"     job {a.get('job_id')} {j['label']} at {rel:.1f}s: {a.get('class')}: {a.get('summary', '')[:300]}")
    if extra:
        print("   later firings on hung jobs (after the first):")
        for j, a in extra:
            print(f"     job {a.get('job_id')} {j['label']}: {a.get('class')}: {a.get('summary', '')[:200]}")
    others = [a for a in firings if a.get("job_id") not in jobs]
    if others:
        print("   other firings (not of a soak job):")
        for a in others:
            print(f"     job {a.get('job_id')}: {a.get('class')}: {a.get('summary', '')[:200]}")
    print()
    if failures:
        print(f"weather soak: FAILED ({len(failures)}):")
        for f in failures:
            print(f"  - {f}")
        return 1
    print("weather soak: passed (0 false firings, every hang caught in its bound with its class, every alert delivered)")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("watch")
    w.add_argument("specs")
    r = sub.add_parser("report")
    r.add_argument("--schedule", required=True)
    r.add_argument("--webhook", required=True)
    r.add_argument("--notify", required=True)
    r.add_argument("--slack", type=float, default=1.0, help="seconds of scheduling allowed past bound + poll")
    args = ap.parse_args()
    if args.cmd == "watch":
        watch(args.specs)
        return 0
    return report(args)


if __name__ == "__main__":
    sys.exit(main())
