#!/usr/bin/env python3
"""The gateway's speed rows, as ratios measured in one run, PASS or FAIL.

--row write-back (the default; K14, K15): p99 authorization latency of
key_gateway over 20,000 keys while it writes usage back, against the same
gateway while it cannot (PASS when within 2x):

  write-back p99  key_gateway on a generated store of --keys keys (credits on
                  every key, so every allowed call changes usage), driven by
                  --clients client processes over loopback (keep-alive, a
                  random key per call). Two kinds of phase, interleaved, on
                  one gateway: "held" (this script holds the store's lock,
                  FILE.lock, so every write-back is deferred: the gateway's
                  request work without file I/O) and "writing" (the lock
                  free: the gateway writes the whole store back each second).
                  The row is the median p99 of the writing phases over the
                  median p99 of the held phases.

    scripts/bench-gateway.py [--gateway PATH] [--keys N] [--clients N] [--seconds S] [--repetitions N]

--row log (O3): requests per second of key_gateway --log json (one JSON
line per decision, standard error a regular file) against key_gateway --log
none, at 64 keep-alive connections (PASS when at least 0.9):

  log, 64 connections  the same request bytes (Traefik's headers, one key of
                  the store, every answer 200) sent by the receiver row's load
                  generator (webhook_receiver_load: C++, one thread, Asio) to a
                  gateway started afresh for each measurement, the two kinds
                  interleaved; medians of --repetitions (7). With taskset the
                  gateway runs on CPU 0 and the generator on CPU 1. The
                  gateway's CPU time per answered request (from /proc) is
                  printed too: the steadier view on a shared machine.

    scripts/bench-gateway.py --row log [--build-dir DIR] [--keys N] [--connections N] [--seconds S]
                             [--repetitions N] [--no-pin]

--row metrics (O4): requests per second of key_gateway --metrics-listen
(every decision counted and timed, /metrics scraped once a second as
Prometheus would) against key_gateway without it, both --log json to a
regular file, at 64 keep-alive connections (PASS when at least 0.9): the
same load, gateways and medians as the log row; after each run with metrics
its /metrics must count every answer as VALID, or the row fails.

    scripts/bench-gateway.py --row metrics [the log row's options]

--row postgresql (K17): requests per second of one key_gateway on a
PostgreSQL key store against one key_gateway on the JSON-lines file holding
the same keys, at 64 keep-alive connections (PASS when at least 0.8):

  postgresql, 64 connections  the log row's measurement (the same request
                  bytes, load generator, pinning and repetitions), both
                  gateways with --log none; the store on a PostgreSQL 15 server
                  this script starts (tests/interop/postgres_server.py: a
                  socket, fsync off, unpinned), its tables made by key_admin
                  and its rows loaded from the file with psql's COPY. Every
                  answer spends a credit, so both write usage back each second.

    scripts/bench-gateway.py --row postgresql [--build-dir DIR] [--keys N] [--connections N] [--seconds S]
                             [--repetitions N] [--no-pin]

Without --gateway (write-back) or --build-dir naming a build that has them
(log, postgresql) it builds key_gateway (and for those rows webhook_receiver_load, and key_admin) in
Release in build-perf-gateway (KEYHOOK_BENCH_GATEWAY_BUILD_DIR overrides). The store is written directly in
the layout of examples/shared/key_store.hpp (digests kh1.<pepper>.<HMAC>),
as 20,000 runs of key_admin would each rewrite it. Every answer must be 200,
or the run fails. Not a test: nothing here is run by CTest. Exit status 1 if
the row fails."""
import argparse
import base64
import calendar
import fcntl
import hashlib
import hmac
import http.client
import json
import multiprocessing
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import uuid

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "interop"))
from waits import stop  # noqa: E402  (the interop tests' condition waits)
import postgres_server  # noqa: E402  (the interop tests' PostgreSQL server)

PEPPER = b"k" * 32
TARGET = 2.0
LOG_TARGET = 0.9
METRICS_TARGET = 0.9
POSTGRESQL_TARGET = 0.8
DEFAULT_BUILD = os.environ.get("KEYHOOK_BENCH_GATEWAY_BUILD_DIR", os.path.join(ROOT, "build-perf-gateway"))


def build(build_dir=DEFAULT_BUILD, targets=("key_gateway",)):
    subprocess.run(["cmake", "-S", ROOT, "-B", build_dir, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
                    "-DKEYHOOK_BUILD_TESTS=OFF", "-DKEYHOOK_BUILD_EXAMPLES=ON"], check=True, stdout=subprocess.DEVNULL)
    jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 2))
    subprocess.run(["cmake", "--build", build_dir, "--parallel", jobs, "--target", *targets], check=True)
    return os.path.join(build_dir, "examples", "key_gateway", "key_gateway")


def write_store(path, count):
    """`count` Active keys of tenant "acme" with 10^9 credits each; returns the plaintext keys."""
    keys = []
    now = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())
    with open(path, "w") as f:
        for i in range(count):
            key = str(uuid.uuid4())
            digest = base64.urlsafe_b64encode(hmac.new(PEPPER, key.encode(), hashlib.sha256).digest()).rstrip(b"=")
            line = {"activeFrom": "2026-01-01T00:00:00.000Z", "createdAt": now, "createdBy": None,
                    "description": None, "expireAt": "2099-01-01T00:00:00.000Z", "groups": ["user:pf"],
                    "id": str(uuid.uuid4()), "lastUsedAt": None, "masked": key[:3] + "*" * 30 + key[-3:],
                    "name": f"bench key {i}", "policy": {"credits": {"initial": 1000000000}}, "status": "Active",
                    "storedKey": "kh1.p1." + digest.decode(), "tenant": "acme", "type": "Synthetic",
                    "updatedAt": now, "usage": {"creditsRemaining": 1000000000, "lastRefill": now}, "userId": None}
            f.write(json.dumps(line, separators=(",", ":")) + "\n")
            keys.append(key)
    os.chmod(path, 0o600)
    return keys


def client(port, keys, seconds, seed, out):
    """One keep-alive connection, calls back to back for `seconds`; puts (latencies in us, non-200 count)."""
    import random
    rnd = random.Random(seed)
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    latencies, bad = [], 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        headers = {"x-synthetic-key": rnd.choice(keys), "x-tenant-name": "acme", "X-Forwarded-Method": "GET",
                   "X-Forwarded-Uri": "/api/things", "X-Forwarded-For": "127.0.0.1"}
        t = time.perf_counter()
        conn.request("GET", "/.auth", headers=headers)
        r = conn.getresponse()
        r.read()
        latencies.append((time.perf_counter() - t) * 1e6)
        bad += r.status != 200
    conn.close()
    out.put((latencies, bad))


def p99(values):
    values = sorted(values)
    return values[min(len(values) - 1, int(0.99 * len(values)))]


def phase(port, keys, args, store):
    """Runs the clients once; returns (p99 us, max us, calls, write-backs seen)."""
    out = multiprocessing.Queue()
    procs = [multiprocessing.Process(target=client, args=(port, keys, args.seconds, i * 7919 + int(time.time()), out))
             for i in range(args.clients)]
    inodes, watching = set(), [True]

    def watch():  # each write-back renames a new file over the store
        while watching[0]:
            try:
                inodes.add(os.stat(store).st_ino)
            except OSError:
                pass
            time.sleep(0.05)
    watcher = threading.Thread(target=watch)
    watcher.start()
    for p in procs:
        p.start()
    results = [out.get() for _ in procs]
    for p in procs:
        p.join()
    watching[0] = False
    watcher.join()
    latencies = [x for r in results for x in r[0]]
    bad = sum(r[1] for r in results)
    if bad:
        sys.exit(f"bench-gateway: {bad} of {len(latencies)} answers were not 200")
    return p99(latencies), max(latencies), len(latencies), len(inodes) - 1


def cpu_seconds(pid):
    """CPU time of a running process's threads, in nanoseconds' resolution (Linux /proc/PID/task/*/schedstat)."""
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/schedstat") as f:
                total += int(f.read().split()[0])
        except OSError:
            pass  # a thread that just ended
    return total / 1e9


def paired_row(args, name, kinds, target):
    """--row log and --row metrics: requests per second of a gateway started
    with kinds[0]'s extra arguments over one started with kinds[1]'s, at
    --connections, interleaved; medians. kinds: [(label, extra argv)], the
    measured one first."""
    pin = not args.no_pin and shutil.which("taskset") is not None and (os.cpu_count() or 1) >= 2
    gateway_bin = os.path.join(args.build_dir, "examples", "key_gateway", "key_gateway")
    load = os.path.join(args.build_dir, "examples", "webhook_receiver", "webhook_receiver_load")
    if not (os.access(gateway_bin, os.X_OK) and os.access(load, os.X_OK)):
        build(args.build_dir, ("key_gateway", "webhook_receiver_load"))
    work = tempfile.mkdtemp(prefix="keyhook-bench-gateway-log-")
    store = os.path.join(work, "keys.jsonl")
    routes = os.path.join(work, "routes.json")
    with open(routes, "w") as f:
        json.dump({"routes": [{"method": "*", "prefix": "/api/", "family": "Execute", "access": "read"}],
                   "groups": {"user:pf": {"access": [{"level": "read"}]}}}, f)
    key = write_store(store, args.keys)[0]
    request_file = os.path.join(work, "request.http")
    with open(request_file, "wb") as f:
        f.write((f"GET /.auth HTTP/1.1\r\nHost: 127.0.0.1\r\nx-synthetic-key: {key}\r\nx-tenant-name: acme\r\n"
                 f"X-Forwarded-Method: GET\r\nX-Forwarded-Uri: /api/things/42?page=1\r\n"
                 f"X-Forwarded-For: 127.0.0.1\r\n\r\n").encode())
    env = {**os.environ, "KEYHOOK_PEPPERS": "p1:" + base64.b64encode(PEPPER).decode()}
    pinned = (lambda cpu, argv: ["taskset", "-c", str(cpu), *argv]) if pin else (lambda cpu, argv: argv)

    def measure(label, extra):
        log_path = os.path.join(work, f"gateway-{label}.log")
        with open(log_path, "w") as log:  # a regular file, as a service manager's log file would be
            gateway = subprocess.Popen(pinned(0, [gateway_bin, "--listen", "127.0.0.1:0", "--store", store, "--routes",
                                                  routes, "--proxy", "traefik", "--trusted-proxy", "127.0.0.1/32",
                                                  *extra]),
                                       env=env, stdout=subprocess.PIPE, stderr=log, text=True)
        scraping, scrapes = [True], [0]
        try:
            ports = {}
            while "listening on" not in ports:  # "metrics on H:P" first with --metrics-listen
                m = re.search(r"(metrics on|listening on) 127\.0\.0\.1:(\d+)\s*$", gateway.stdout.readline())
                if not m:
                    sys.exit(f"bench-gateway: key_gateway did not start; see {log_path}")
                ports[m.group(1)] = m.group(2)

            def scrape():  # as Prometheus would: /metrics once a second
                while scraping[0]:
                    metrics_text(ports["metrics on"])
                    scrapes[0] += 1
                    time.sleep(1)
            scraper = threading.Thread(target=scrape) if "metrics on" in ports else None
            if scraper:
                scraper.start()
            before = cpu_seconds(gateway.pid)
            r = subprocess.run(pinned(1, [load, "--connect", f"127.0.0.1:{ports['listening on']}", "--request",
                                          request_file, "--connections", str(args.connections), "--seconds",
                                          str(args.seconds)]),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            used = cpu_seconds(gateway.pid) - before
            scraping[0] = False
            if scraper:
                scraper.join()
            counted = None
            if "metrics on" in ports:
                m = re.search(r'^keyhook_gateway_decisions_total\{code="VALID"\} (\S+)$',
                              metrics_text(ports["metrics on"]), re.M)
                counted = float(m.group(1)) if m else None
        finally:
            scraping[0] = False
            status = stop(gateway)
        if r.returncode != 0 or status != 0:
            sys.exit(f"bench-gateway: load generator exit {r.returncode} ({r.stderr.strip()}), gateway exit {status}")
        result = json.loads(r.stdout)
        if set(result["statuses"]) != {"200"}:
            sys.exit(f"bench-gateway: answers not all 200: {result['statuses']}")
        lines = sum(1 for line in open(log_path) if line.startswith("{"))
        if "none" not in extra and lines < result["answered"]:
            sys.exit(f"bench-gateway: {lines} log lines for {result['answered']} answers")
        # Answers the generator stopped reading at its deadline are counted too: at most that many more.
        if "metrics on" in ports and not (counted is not None and
                                          result["answered"] <= counted <= result["answered"] + args.connections):
            sys.exit(f"bench-gateway: /metrics counted {counted} VALID for {result['answered']} answered")
        return result["rps"], 1e6 * used / max(result["answered"], 1), lines, scrapes[0]

    (measured, measured_argv), (base, base_argv) = kinds
    print(f"key_gateway {gateway_bin}: {measured} against {base}, "
          f"{args.connections} connections, {args.repetitions} interleaved runs of {args.seconds:g} s; "
          f"{'gateway on CPU 0, generator on CPU 1' if pin else 'not pinned'}; load average "
          f"{open('/proc/loadavg').read().split()[0]}", flush=True)
    rps = {measured: [], base: []}
    cpu = {measured: [], base: []}
    for rep in range(args.repetitions):
        for label, extra in (kinds[::-1] if rep % 2 == 0 else kinds):
            r, us, lines, scrapes = measure(label, extra)
            rps[label].append(r)
            cpu[label].append(us)
            print(f"  {rep + 1} {label:24}  {r:8.0f} req/s  {us:5.1f} us CPU a request  {lines} log lines"
                  + (f"  {scrapes} scrapes" if scrapes else ""), flush=True)
    top, bottom = statistics.median(rps[measured]), statistics.median(rps[base])
    ratio = top / bottom
    verdict = "PASS" if ratio >= target else "FAIL"
    print(f"{name}, {args.connections} connections: {top:.0f} req/s with {measured} / {bottom:.0f} req/s with "
          f"{base} = {ratio:.2f} (target >= {target:g}) {verdict}; CPU a request "
          f"{statistics.median(cpu[measured]):.1f} / {statistics.median(cpu[base]):.1f} us; load average "
          f"{open('/proc/loadavg').read().split()[0]}", flush=True)
    shutil.rmtree(work, ignore_errors=True)
    return 0 if verdict == "PASS" else 1


def metrics_text(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=30) as r:
        return r.read().decode()


def log_row(args):
    """--row log: requests per second with --log json (standard error a file) over --log none."""
    return paired_row(args, "log", [("--log json", ["--log", "json"]), ("--log none", ["--log", "none"])], LOG_TARGET)


def metrics_row(args):
    """--row metrics: requests per second with --metrics-listen (scraped once a second) over without, --log json."""
    return paired_row(args, "metrics", [("--metrics-listen", ["--metrics-listen", "127.0.0.1:0"]),
                                        ("no --metrics-listen", [])], METRICS_TARGET)


def load_postgresql(server, uri, jsonl, key_admin):
    """The file's keys as rows of the PostgreSQL key store at `uri` (tables made by key_admin)."""
    subprocess.run([key_admin, "--store", uri, "list"], check=True, stdout=subprocess.DEVNULL,
                   env={**os.environ, "KEYHOOK_PEPPERS": "p1:" + base64.b64encode(PEPPER).decode()})
    rows = []
    for line in open(jsonl):
        entry = json.loads(line)
        refill = entry["usage"]["lastRefill"]
        micros = calendar.timegm(time.strptime(refill[:19], "%Y-%m-%dT%H:%M:%S")) * 1000000
        record = {k: v for k, v in entry.items() if k not in ("tenant", "storedKey", "usage", "lastUsedAt")}
        fields = [entry["id"], entry["tenant"], entry["storedKey"], json.dumps(record, separators=(",", ":")),
                  str(entry["usage"]["creditsRemaining"]), str(micros)]
        rows.append("\t".join(f.replace("\\", "\\\\") for f in fields) + "\t\\N\n")
    name = uri.split("?")[0].rsplit("/", 1)[1]
    subprocess.run([postgres_server.PG_BIN + "/psql", "-h", server.dir, "-p", server.port, "-U", "keyhook", "-q",
                    "-v", "ON_ERROR_STOP=1", "-c", "COPY keyhook_keys (id, tenant, stored_key, record, "
                    "credits_remaining, credits_refill, last_used_at) FROM STDIN", name],
                   input="".join(rows), text=True, check=True)


def postgresql_row(args):
    """--row postgresql: requests per second on a PostgreSQL key store over the JSON-lines file."""
    pin = not args.no_pin and shutil.which("taskset") is not None and (os.cpu_count() or 1) >= 2
    gateway_bin = os.path.join(args.build_dir, "examples", "key_gateway", "key_gateway")
    key_admin = os.path.join(args.build_dir, "examples", "key_admin", "key_admin")
    load = os.path.join(args.build_dir, "examples", "webhook_receiver", "webhook_receiver_load")
    if not all(os.access(p, os.X_OK) for p in (gateway_bin, key_admin, load)):
        build(args.build_dir, ("key_gateway", "key_admin", "webhook_receiver_load"))
    if not postgres_server.available():
        sys.exit("bench-gateway: the PostgreSQL 15 server is not installed (scripts/install-deps.sh --interop)")
    work = tempfile.mkdtemp(prefix="keyhook-bench-gateway-pg-")
    jsonl = os.path.join(work, "keys.jsonl")
    routes = os.path.join(work, "routes.json")
    with open(routes, "w") as f:
        json.dump({"routes": [{"method": "*", "prefix": "/api/", "family": "Execute", "access": "read"}],
                   "groups": {"user:pf": {"access": [{"level": "read"}]}}}, f)
    key = write_store(jsonl, args.keys)[0]
    server = postgres_server.PostgresServer(prefix="keyhook-bench-pg-")
    try:
        uri = server.new_database()
        load_postgresql(server, uri, jsonl, key_admin)
        request_file = os.path.join(work, "request.http")
        with open(request_file, "wb") as f:
            f.write((f"GET /.auth HTTP/1.1\r\nHost: 127.0.0.1\r\nx-synthetic-key: {key}\r\nx-tenant-name: acme\r\n"
                     f"X-Forwarded-Method: GET\r\nX-Forwarded-Uri: /api/things/42?page=1\r\n"
                     f"X-Forwarded-For: 127.0.0.1\r\n\r\n").encode())
        env = {**os.environ, "KEYHOOK_PEPPERS": "p1:" + base64.b64encode(PEPPER).decode()}
        pinned = (lambda cpu, argv: ["taskset", "-c", str(cpu), *argv]) if pin else (lambda cpu, argv: argv)
        stores = {"jsonl": jsonl, "postgresql": uri}

        def measure(kind):
            log_path = os.path.join(work, f"gateway-{kind}.log")
            with open(log_path, "w") as log:
                gateway = subprocess.Popen(pinned(0, [gateway_bin, "--listen", "127.0.0.1:0", "--store", stores[kind],
                                                      "--routes", routes, "--proxy", "traefik", "--trusted-proxy",
                                                      "127.0.0.1/32", "--log", "none"]),
                                           env=env, stdout=subprocess.PIPE, stderr=log, text=True)
            try:
                m = re.search(r":(\d+)\s*$", gateway.stdout.readline())
                if not m:
                    sys.exit(f"bench-gateway: key_gateway did not start; see {log_path}")
                before = cpu_seconds(gateway.pid)
                r = subprocess.run(pinned(1, [load, "--connect", f"127.0.0.1:{m.group(1)}", "--request",
                                              request_file, "--connections", str(args.connections), "--seconds",
                                              str(args.seconds)]),
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                used = cpu_seconds(gateway.pid) - before
            finally:
                status = stop(gateway)
            if r.returncode != 0 or status != 0:
                sys.exit(f"bench-gateway: load generator exit {r.returncode} ({r.stderr.strip()}), gateway exit "
                         f"{status}; see {log_path}")
            result = json.loads(r.stdout)
            if set(result["statuses"]) != {"200"}:
                sys.exit(f"bench-gateway: answers not all 200: {result['statuses']}")
            return result["rps"], 1e6 * used / max(result["answered"], 1)

        print(f"key_gateway {gateway_bin}: --store postgresql://... against --store keys.jsonl, {args.keys} keys, "
              f"{args.connections} connections, {args.repetitions} interleaved runs of {args.seconds:g} s; "
              f"{'gateway on CPU 0, generator on CPU 1' if pin else 'not pinned'}, PostgreSQL unpinned; load average "
              f"{open('/proc/loadavg').read().split()[0]}", flush=True)
        rps = {"jsonl": [], "postgresql": []}
        cpu = {"jsonl": [], "postgresql": []}
        for rep in range(args.repetitions):
            for kind in (("jsonl", "postgresql") if rep % 2 == 0 else ("postgresql", "jsonl")):
                r, us = measure(kind)
                rps[kind].append(r)
                cpu[kind].append(us)
                print(f"  {rep + 1} {kind:10}  {r:8.0f} req/s  {us:5.1f} us CPU a request", flush=True)
    finally:
        server.stop()
    pg_rps, file_rps = statistics.median(rps["postgresql"]), statistics.median(rps["jsonl"])
    ratio = pg_rps / file_rps
    verdict = "PASS" if ratio >= POSTGRESQL_TARGET else "FAIL"
    print(f"postgresql, {args.connections} connections: {pg_rps:.0f} req/s on PostgreSQL / {file_rps:.0f} req/s on "
          f"the file = {ratio:.2f} (target >= {POSTGRESQL_TARGET:g}) {verdict}; CPU a request "
          f"{statistics.median(cpu['postgresql']):.1f} / {statistics.median(cpu['jsonl']):.1f} us; load average "
          f"{open('/proc/loadavg').read().split()[0]}", flush=True)
    shutil.rmtree(work, ignore_errors=True)
    return 0 if verdict == "PASS" else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--row", choices=("write-back", "log", "metrics", "postgresql"), default="write-back")
    ap.add_argument("--gateway")
    ap.add_argument("--build-dir", default=DEFAULT_BUILD, help="log row: a build with key_gateway and "
                    "webhook_receiver_load (built there when missing)")
    ap.add_argument("--keys", type=int)
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--connections", type=int, default=64)
    ap.add_argument("--seconds", type=float)
    ap.add_argument("--repetitions", type=int)
    ap.add_argument("--no-pin", action="store_true", help="log row: do not pin the gateway and the generator")
    args = ap.parse_args()
    if args.row in ("log", "metrics", "postgresql"):
        args.keys = args.keys or 1000
        args.seconds = args.seconds or 3.0
        args.repetitions = args.repetitions or 7
        if not (1 <= args.connections <= 200 and 0.5 <= args.seconds <= 60 and 1 <= args.repetitions <= 20):
            sys.exit("bench-gateway: --connections 1..200, --seconds 0.5..60, --repetitions 1..20")
        if args.row == "postgresql":
            return postgresql_row(args)
        return log_row(args) if args.row == "log" else metrics_row(args)
    args.keys = args.keys or 20000
    args.seconds = args.seconds or 6.0
    args.repetitions = args.repetitions or 3
    if not (1 <= args.clients <= 64 and 0.5 <= args.seconds <= 60 and 1 <= args.repetitions <= 20):
        sys.exit("bench-gateway: --clients 1..64, --seconds 0.5..60, --repetitions 1..20")
    gateway_bin = args.gateway or build()
    work = tempfile.mkdtemp(prefix="keyhook-bench-gateway-")
    store = os.path.join(work, "keys.jsonl")
    routes = os.path.join(work, "routes.json")
    with open(routes, "w") as f:
        json.dump({"routes": [{"method": "*", "prefix": "/api/", "family": "Execute", "access": "read"}],
                   "groups": {"user:pf": {"access": [{"level": "read"}]}}}, f)
    keys = write_store(store, args.keys)
    size = os.path.getsize(store)
    env = {**os.environ, "KEYHOOK_PEPPERS": "p1:" + base64.b64encode(PEPPER).decode()}
    log = open(os.path.join(work, "gateway.log"), "w")
    gateway = subprocess.Popen([gateway_bin, "--listen", "127.0.0.1:0", "--store", store, "--routes", routes,
                                "--proxy", "traefik", "--trusted-proxy", "127.0.0.1/32"], env=env,
                               stdout=subprocess.PIPE, stderr=log, text=True)
    m = re.search(r":(\d+)\s*$", gateway.stdout.readline())
    if not m:
        sys.exit(f"bench-gateway: key_gateway did not start; see {work}/gateway.log")
    port = int(m.group(1))
    print(f"key_gateway {gateway_bin}: {args.keys} keys, store {size / 1e6:.1f} MB; {args.clients} clients, "
          f"{args.seconds:g} s a phase, {args.repetitions} repetitions", flush=True)
    held, writing = [], []
    lock = open(store + ".lock", "a")
    try:
        for rep in range(args.repetitions):
            for kind in ("held", "writing"):
                if kind == "held":
                    fcntl.flock(lock, fcntl.LOCK_EX)  # waits for a write-back in progress to end
                else:
                    fcntl.flock(lock, fcntl.LOCK_UN)
                q, worst, calls, writes = phase(port, keys, args, store)
                (held if kind == "held" else writing).append(q)
                print(f"  {rep + 1} {kind:7}  p99 {q / 1000:7.2f} ms  max {worst / 1000:7.2f} ms  "
                      f"{calls:6} calls  {writes} write-backs", flush=True)
    finally:
        fcntl.flock(lock, fcntl.LOCK_UN)
        lock.close()
        status = stop(gateway)
    if status != 0:
        sys.exit(f"bench-gateway: key_gateway exited {status}; see {work}/gateway.log")
    base, during = statistics.median(held), statistics.median(writing)
    ratio = during / base
    verdict = "PASS" if ratio <= TARGET else "FAIL"
    print(f"write-back p99: {during / 1000:.2f} ms writing / {base / 1000:.2f} ms held = {ratio:.2f} "
          f"(target <= {TARGET:g}) {verdict}", flush=True)
    log.close()
    shutil.rmtree(work, ignore_errors=True)
    return 0 if verdict == "PASS" else 1


if __name__ == "__main__":
    sys.exit(main())
