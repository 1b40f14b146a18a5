#!/usr/bin/python3
"""A webhook receiver for the alerts test, on loopback: it records every
request (headers and JSON body) as one JSON line, and shows an event once
per Idempotency-Key, as a receiver that honours the key would.

    webhook_receiver.py --port P --log FILE [--delay SECONDS] [--fail-until UNIX_TIME]

--delay holds each answer that long (so a test can kill the sender while
the request is in flight); --fail-until answers HTTP 500 (recorded with
"status": 500, not shown) until that time, as a receiver in an outage.
"""
import argparse
import http.server
import json
import threading
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--delay", type=float, default=0.0)
    ap.add_argument("--print", action="store_true", help="also print each alert (the demo)")
    ap.add_argument("--fail-until", type=float, default=0.0)
    args = ap.parse_args()
    lock = threading.Lock()
    shown = set()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            length = int(self.headers.get("Content-Length", "0"))
            body = self.rfile.read(length)
            key = self.headers.get("Idempotency-Key", "")
            if time.time() < args.fail_until:
                with lock, open(args.log, "a") as f:
                    f.write(json.dumps({"path": self.path, "status": 500, "shown": False,
                                        "headers": dict(self.headers.items()),
                                        "received_at": time.time()}) + "\n")
                self.send_response(500)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            with lock:
                first = key not in shown
                shown.add(key)
                record = {"path": self.path, "status": 200, "headers": dict(self.headers.items()),
                          "body": json.loads(body or b"null"), "shown": first,
                          "received_at": time.time()}
                with open(args.log, "a") as f:
                    f.write(json.dumps(record) + "\n")
                b = record["body"] or {}
                if args.print and first:
                    print(f"[webhook receiver] {b.get('status', '?').upper()} {b.get('title', '')}\n"
                          f"  {b.get('summary', '')}", flush=True)
                    for line in b.get("evidence", [])[:6]:
                        print(f"  - {line}", flush=True)
            time.sleep(args.delay)
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"{}")

        def log_message(self, *a):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.serve_forever()


if __name__ == "__main__":
    main()
