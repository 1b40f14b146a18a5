#!/usr/bin/python3
"""Queries a Prometheus HTTP API (instant query) and prints one line per
series: `{label="value",...} value`, sorted. Exit 1 on an API error.
Usage: promq.py http://127.0.0.1:9190 'up'  [--time UNIX]"""
import json
import sys
import urllib.parse
import urllib.request


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    base, query = sys.argv[1], sys.argv[2]
    params = {"query": query}
    if len(sys.argv) == 5 and sys.argv[3] == "--time":
        params["time"] = sys.argv[4]
    url = f"{base}/api/v1/query?{urllib.parse.urlencode(params)}"
    try:
        reply = json.load(urllib.request.urlopen(url, timeout=5))
    except OSError as e:
        print(f"promq: {e}", file=sys.stderr)
        return 1
    if reply.get("status") != "success":
        print(f"promq: {reply}", file=sys.stderr)
        return 1
    lines = []
    for series in reply["data"]["result"]:
        labels = ",".join(f'{k}="{v}"' for k, v in sorted(series["metric"].items()))
        lines.append(f"{{{labels}}} {series['value'][1]}")
    print("\n".join(sorted(lines)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
