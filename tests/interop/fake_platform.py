#!/usr/bin/env python3
"""A fake platform for key_audit --url (spec 4.1, L1, L2): serves a paged list
call of N keys on 127.0.0.1 and checks every request's headers and parameters.

    fake_platform.py [--keys N] [--fail-page P] [--mode MODE] PORT_FILE

Writes the port it listens on to PORT_FILE, then serves until killed.
--fail-page P answers page P with 503 the first time (retried by key_audit).
--mode: normal | unauthorized (401) | not_json | always_503 (each logged to stderr)
| slow (answers after 60 s)
| overlap (each page repeats the last record of the page before it)
| stuck (every answer is page 1, whatever page was asked for)
| echo (not success, its message quoting the Authorization header)
B7 (reading every page), each request logged to stderr as "fake_platform: page P size S":
| inventing (count --claim, default 10^12; each page one new key, the rest of it
  key 0 again) | growing (count N on page 1, 2N after) | larger_page (pageSize
  at least 2, whatever is asked) | shifting_size (pageSize one more than asked)
| overcount (count 50 more than the keys there are).
A request that breaks L1 is answered 400 and logged to stderr."""
import argparse, json, sys, time, threading
from http.server import ThreadingHTTPServer, BaseHTTPRequestHandler
from urllib.parse import urlsplit, parse_qs

TOKEN = "interop-token-0123456789"
TENANT = "acme lending"

ap = argparse.ArgumentParser()
ap.add_argument("--keys", type=int, default=250)
ap.add_argument("--fail-page", type=int, default=0)
ap.add_argument("--mode", default="normal")
ap.add_argument("--claim", type=int, default=10**12)
ap.add_argument("port_file")
args = ap.parse_args()

def key(i):
    return {"id": f"00000000-0000-4000-8000-{i:012d}", "userId": None, "name": f"key {i:03d}",
            "description": "", "masked": "abc" + "*" * 30 + f"{i % 1000:03d}", "status": "Active",
            "type": "Synthetic", "groups": ["user:pf"], "createdAt": "2026-01-01T00:00:00.000Z",
            "createdBy": "admin", "updatedAt": "2026-01-01T00:00:00.000Z",
            "activeFrom": "2026-01-01T00:00:00Z",
            "expireAt": f"2027-{1 + i % 12:02d}-{1 + i % 28:02d}T00:00:00Z", "lastUsedAt": None}

KEYS = [key(i) for i in range(args.keys)]
failed = set()
lock = threading.Lock()

class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def send(self, status, body, ctype="application/json"):
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def refuse(self, why):
        sys.stderr.write(f"fake_platform: bad request: {why}\n")
        self.send(400, json.dumps({"status": "error", "message": why}))

    def do_GET(self):
        url = urlsplit(self.path)
        if url.path != "/acme%20lending/api/v1/key/apikeys":
            return self.refuse(f"path {url.path}")
        if self.headers.get("Authorization") != f"Bearer {TOKEN}" or args.mode == "unauthorized":
            return self.send(401, json.dumps({"status": "error", "message": "invalid token"}))
        q = parse_qs(url.query, keep_blank_values=True)
        if sorted(q) != ["_page", "_size", "type"] or q["type"] != ["synthetic"]:
            return self.refuse(f"parameters {q}")
        page, size = int(q["_page"][0]), int(q["_size"][0])
        if page < 1 or size < 1:
            return self.refuse(f"page {page} size {size}")
        if args.mode == "slow":
            time.sleep(60)
        if args.mode == "always_503":
            sys.stderr.write(f"fake_platform: answered 503 to page {page}\n")
            sys.stderr.flush()
            return self.send(503, "{}")
        with lock:
            if page == args.fail_page and page not in failed:
                failed.add(page)
                return self.send(503, json.dumps({"status": "error", "message": "try again"}))
        if args.mode == "not_json":
            return self.send(200, "<html>maintenance</html>", "text/html")
        if args.mode == "echo":
            return self.send(200, json.dumps({"status": "error", "message": "bad " + self.headers["Authorization"]}))
        if args.mode == "stuck":
            page = 1
        count = len(KEYS)
        if args.mode in ("inventing", "growing", "larger_page", "shifting_size", "overcount"):
            sys.stderr.write(f"fake_platform: page {page} size {size}\n")
            sys.stderr.flush()
        if args.mode == "larger_page":
            size = max(size, 2)
        elif args.mode == "shifting_size":
            size += 1
        elif args.mode == "growing" and page > 1:
            count *= 2
        elif args.mode == "overcount":
            count += 50
        start = (page - 1) * size
        records = KEYS[start:start + size]
        if args.mode == "overlap" and page > 1:
            records = [KEYS[start - 1]] + records
        if args.mode == "inventing":
            count, records = args.claim, [key(0)] * (size - 1) + [key(page)]
        body = {"status": "success", "data": {"count": count, "page": page, "pageSize": size,
                                              "result": records}}
        self.send(200, json.dumps(body))

    def log_message(self, *a):
        pass

server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(args.port_file + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
import os
os.replace(args.port_file + ".tmp", args.port_file)
server.serve_forever()
