#!/usr/bin/python3
"""A central store's view of per-job TSDBs: `promtool tsdb dump` output of
one or more jobs, each with the labels the plugin's remote_write adds
(prometheus_config.cc's external labels: slurm_job_id, cluster, user), as
OpenMetrics for `promtool tsdb create-blocks-from openmetrics`.

    tsdb_relabel.py OUT.om DUMP:slurm_job_id=1,cluster=dev,user=root ...

prints "FIRST LAST": the samples' time range, Unix seconds (the store's
TSDB is all blocks, no head to ask).

Dump lines are `{__name__="x", a="b"} VALUE TIMESTAMP_MS`. Staleness
markers (NaN) are left out: imported, they would be plain NaN samples.
OpenMetrics wants each family's samples together, so lines are grouped by
metric name across the inputs (each series' samples stay in time order).
"""
import math
import re
import sys

LINE = re.compile(r'^\{(.*)\} (\S+) (-?\d+)$')
LABEL = re.compile(r'([A-Za-z_][A-Za-z0-9_]*)="((?:[^"\\]|\\.)*)"')


def parse_dump_line(line):
    """(labels dict with escapes kept, value text, timestamp ms) or None."""
    m = LINE.match(line.strip())
    if not m:
        return None
    return dict(LABEL.findall(m.group(1))), m.group(2), int(m.group(3))


def openmetrics_line(labels, value, ms, extra):
    """name{labels + extra} value seconds; extra wins over a same-named label
    (remote_write's external labels do not override the series' own, but the
    series here never carry these)."""
    merged = {k: v for k, v in labels.items() if k != "__name__"}
    merged.update(extra)
    body = ",".join(f'{k}="{v}"' for k, v in sorted(merged.items()))
    return f"{labels['__name__']}{{{body}}} {value} {ms / 1000:.3f}"


def relabel(inputs):
    """inputs: [(lines, extra labels)] -> (OpenMetrics text, families
    grouped; (first, last) sample time in ms or None)."""
    families = {}
    first = last = None
    for lines, extra in inputs:
        for line in lines:
            parsed = parse_dump_line(line)
            if parsed is None:
                continue
            labels, value, ms = parsed
            if math.isnan(float(value)) or "__name__" not in labels:
                continue
            families.setdefault(labels["__name__"], []).append(openmetrics_line(labels, value, ms, extra))
            first = ms if first is None else min(first, ms)
            last = ms if last is None else max(last, ms)
    out = []
    for name in sorted(families):
        out.extend(families[name])
    out.append("# EOF")
    return "\n".join(out) + "\n", (first, last) if first is not None else None


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    inputs = []
    for arg in argv[2:]:
        path, _, spec = arg.partition(":")
        extra = dict(kv.split("=", 1) for kv in spec.split(",") if kv)
        with open(path) as f:
            inputs.append((f.readlines(), extra))
    text, span = relabel(inputs)
    if span is None:
        print("tsdb_relabel: no samples", file=sys.stderr)
        return 1
    with open(argv[1], "w") as f:
        f.write(text)
    print(f"{span[0] / 1000:.3f} {span[1] / 1000:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
