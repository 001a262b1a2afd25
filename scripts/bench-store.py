#!/usr/bin/env python3
"""The speed and memory rows of durable delivery (rule B6), as
ratios measured in one run, PASS or FAIL:

  store speed   2,000 deliveries to a local receiver with --store sqlite: at
                no less than 0.5 of the deliveries per second of the same run
                in memory (medians of --repetitions runs of each, interleaved)
  store memory  the worker's peak resident memory over its first 1,000
                attempts with 100,000 deliveries pending is within 10 % of
                that with 1,000 pending (it reads due deliveries in batches)

    scripts/bench-store.py [--deliver PATH] [--repetitions N]

Without --deliver it builds webhook_deliver in Release in build-perf-store
(KEYHOOK_BENCH_STORE_BUILD_DIR overrides). The receiver is Python's HTTP server
on loopback answering 204. The memory row fills the SQLite store directly with
the schema of examples/shared/delivery_store.hpp, so that the worker, not an
enqueueing run, is what is measured. Exit status 1 if a row fails."""
import argparse
import json
import os
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "interop"))
from waits import wait_until  # noqa: E402  (the interop tests' condition waits)


class Receiver(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(204)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *a):
        pass


class QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass  # the memory row kills the worker mid-request


def build():
    build_dir = os.environ.get("KEYHOOK_BENCH_STORE_BUILD_DIR", os.path.join(ROOT, "build-perf-store"))
    subprocess.run(["cmake", "-S", ROOT, "-B", build_dir, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
                    "-DKEYHOOK_BUILD_TESTS=OFF", "-DKEYHOOK_BUILD_EXAMPLES=ON"], check=True, stdout=subprocess.DEVNULL)
    jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 2))
    subprocess.run(["cmake", "--build", build_dir, "--parallel", jobs, "--target", "webhook_deliver"], check=True)
    return os.path.join(build_dir, "examples", "webhook_deliver", "webhook_deliver")


def event_file(directory, port, count):
    doc = {"tenant": {"name": "bench", "webhooksEnabled": True},
           "webhooks": [{"name": f"hook-{i}", "endpoint": f"http://127.0.0.1:{port}/in/{i}", "saved": True}
                        for i in range(count)],
           "event": {"UserAction": "PublishEngine", "FolderName": "Loans", "RequestTimeStamp": "2026-03-14T09:26:53Z"}}
    path = os.path.join(directory, f"event-{count}.json")
    with open(path, "w") as f:
        json.dump(doc, f)
    return path


def timed(argv):
    started = time.monotonic()
    r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    took = time.monotonic() - started
    if r.returncode != 0:
        sys.exit(f"bench-store: {' '.join(argv)} failed: {r.stderr.strip()}")
    lines = r.stdout.count("\n")
    return lines / took


def fill_store(path, port, count):
    """`count` pending deliveries, all due now, to one webhook of tenant "t",
    in the store's layout of schema version 2 (examples/shared/delivery_store.hpp)."""
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE keyhook_schema (version BIGINT NOT NULL)")
    db.execute("INSERT INTO keyhook_schema (version) VALUES (2)")
    db.execute("CREATE TABLE keyhook_webhooks (tenant TEXT NOT NULL, name TEXT NOT NULL, settings TEXT NOT NULL, "
               "disabled INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (tenant, name))")
    db.execute("CREATE TABLE keyhook_deliveries (id TEXT PRIMARY KEY, tenant TEXT NOT NULL, webhook TEXT NOT NULL, "
               "due_at BIGINT, lease_owner TEXT, lease_until BIGINT NOT NULL DEFAULT 0, state TEXT NOT NULL)")
    db.execute("CREATE INDEX keyhook_deliveries_due ON keyhook_deliveries (due_at) WHERE due_at IS NOT NULL")
    db.execute("CREATE TABLE keyhook_settings (name TEXT PRIMARY KEY, value TEXT NOT NULL)")
    db.execute("CREATE TABLE keyhook_endpoints (tenant TEXT NOT NULL, name TEXT NOT NULL, state TEXT NOT NULL, "
               "version BIGINT NOT NULL, PRIMARY KEY (tenant, name))")
    db.execute("INSERT INTO keyhook_webhooks (tenant, name, settings) VALUES (?, ?, ?)",
               ("t", "hook", json.dumps({"name": "hook", "endpoint": f"http://127.0.0.1:{port}/in", "saved": True})))
    due = "2026-01-01T00:00:00Z"
    due_us = 1767225600 * 1000000
    body = json.dumps({"UserAction": "PublishEngine", "FolderName": "Loans"})

    def rows():
        for i in range(count):
            ident = "msg_%032x" % (i + 1)
            state = {"id": ident, "webhook": "hook", "body": body, "status": "pending", "nextDue": due,
                     "attempts": []}
            yield ident, "t", "hook", due_us, json.dumps(state)

    db.executemany("INSERT INTO keyhook_deliveries (id, tenant, webhook, due_at, state) VALUES (?, ?, ?, ?, ?)",
                   rows())
    db.commit()
    db.close()


def peak_rss_kib(deliver, store, attempts):
    """The worker's peak resident memory (KiB) over its first `attempts` attempts."""
    p = subprocess.Popen([deliver, "--allow-local", "--time-scale", "0.000001", "--store", "sqlite:" + store, "--work"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    lines = [0]

    def count():
        for _ in p.stdout:
            lines[0] += 1
    reader = threading.Thread(target=count, daemon=True)
    reader.start()
    ok = wait_until(lambda: lines[0] >= attempts, bound=120)
    p.send_signal(signal.SIGKILL)
    _, _, usage = os.wait4(p.pid, 0)
    reader.join()
    if not ok:
        sys.exit("bench-store: the worker did not make its attempts in time")
    return usage.ru_maxrss


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--deliver")
    parser.add_argument("--repetitions", type=int, default=3)
    args = parser.parse_args()
    deliver = args.deliver or build()

    server = QuietServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        path = event_file(tmp, port, 2000)
        memory, stored = [], []
        for i in range(args.repetitions):
            memory.append(timed([deliver, "--allow-local", "--time-scale", "0", path]))
            store = os.path.join(tmp, f"speed-{i}.db")
            stored.append(timed([deliver, "--allow-local", "--time-scale", "0.000001", "--store", "sqlite:" + store, path]))
        m, s = statistics.median(memory), statistics.median(stored)
        ratio = s / m
        ok = ratio >= 0.5
        failed |= not ok
        print(f"store speed   in memory {m:8.0f}/s  sqlite {s:8.0f}/s  ratio {ratio:.2f} (>= 0.50)  "
              f"{'PASS' if ok else 'FAIL'}")

        rss = {}
        for count in (1000, 100000):
            store = os.path.join(tmp, f"memory-{count}.db")
            fill_store(store, port, count)
            rss[count] = peak_rss_kib(deliver, store, 1000)
        ratio = rss[100000] / rss[1000]
        ok = ratio <= 1.10
        failed |= not ok
        print(f"store memory  peak RSS 1,000 pending {rss[1000]} KiB  100,000 pending {rss[100000]} KiB  "
              f"ratio {ratio:.2f} (<= 1.10)  {'PASS' if ok else 'FAIL'}")
    server.shutdown()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
