#!/usr/bin/env python3
"""The receiver's speed rows, as ratios measured in one run, PASS or FAIL:

--row bare (the default; rule H13):

  receiver, N connections   webhook_receiver --listen answers unsigned
                            deliveries at no less than 0.8 of the requests per
                            second of a bare server of the same code (examples/
                            shared/http_server with a handler answering 200,
                            no keyhook), at 1 and at 64 keep-alive connections

    scripts/bench-receiver.py [--build-dir DIR] [--seconds S] [--repetitions N] [--no-pin] [--no-metrics] [--no-log]

The receiver runs with its metrics on (--metrics-listen, rule O4: every
answer counted) and its request log on (--log json, rule O3: one JSON line
per answer, standard error a regular file): after each of its runs its
/metrics must count exactly the requests the generator had answered, and the
log hold a line for each, or the row fails. --no-metrics and --no-log run it
without them, to see what they cost.

--row log (rule O3):

  log, 64 connections       webhook_receiver --log json (standard error a
                            regular file) answers at no less than 0.9 of the
                            requests per second of webhook_receiver --log none,
                            both with --metrics-listen, at 64 connections

    scripts/bench-receiver.py --row log [--build-dir DIR] [--seconds S] [--repetitions N] [--no-pin]

Unsigned: the replay table holds 65,536 signed ids and answers 503 past them
by design, so a signed run would measure the table filling up. Each server is
run afresh per measurement, the two interleaved, and the medians compared.
The load generator (webhook_receiver_load, C++ on one thread) sends the same
request bytes to both; every answer must be 200, or the row fails. With
taskset (util-linux) the server runs on CPU 0 and the generator on CPU 1, and
the generator's CPU use is printed: well under one core means it was not
what limited the bare server. The servers' CPU time per answered request
(from /proc) is printed too: other processes on the machine change the
throughput of a run far more than the CPU each request takes, so the ratio
of those times is the steadier view of keyhook's cost. Builds the three programs in Release in
build-perf-receiver unless --build-dir names a build that has them. Not run
in CI (speed is a property of the machine). Exit status 1 if a row fails."""
import argparse
import fcntl
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "interop"))
from waits import stop, wait_until  # noqa: E402  (the interop tests' condition waits)

API_KEY = "bench-receiver-key-0123456789"
TARGET = 0.8
LOG_TARGET = 0.9
PROGRAMS = ("webhook_receiver", "webhook_receiver_bare", "webhook_receiver_load")


def build(build_dir):
    subprocess.run(["cmake", "-S", ROOT, "-B", build_dir, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
                    "-DKEYHOOK_BUILD_TESTS=OFF", "-DKEYHOOK_BUILD_EXAMPLES=ON"], check=True, stdout=subprocess.DEVNULL)
    jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 2))
    subprocess.run(["cmake", "--build", build_dir, "--parallel", jobs, "--target", *PROGRAMS], check=True)


def program(build_dir, name):
    path = os.path.join(build_dir, "examples", "webhook_receiver", name)
    if not os.access(path, os.X_OK):
        sys.exit(f"bench-receiver: {path} is missing")
    return path


def request_bytes():
    body = json.dumps({"FolderName": "Loan Calculators", "ServiceName": "Quote", "EntityId": "5c3e8a2f",
                       "UserAction": "PublishEngine", "AuditType": "ProductEngine",
                       "Data": {"ProductName": "Loan Calculators", "EngineName": "Quote", "FileName": "quote.xlsx",
                                "ProductId": "5c3e8a2f", "ServiceVersionId": "v17"},
                       "Tenant": "acme-lending", "RequestTimeStamp": "2026-03-14T09:26:53.589Z",
                       "RevisionId": None}, separators=(",", ":")).encode()
    head = (f"POST /hook HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"X-Api-Key: {API_KEY}\r\nContent-Length: {len(body)}\r\n\r\n").encode()
    return head + body


def pinned(cpu, argv, pin):
    return ["taskset", "-c", str(cpu), *argv] if pin else argv


def cpu_seconds(pid):
    """User + system CPU time of a running process (Linux /proc)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def counted_accepted(metrics_port):
    """keyhook_receiver_requests_total{result="accepted"} on the receiver's /metrics."""
    with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=30) as r:
        for line in r.read().decode().splitlines():
            if line.startswith('keyhook_receiver_requests_total{result="accepted"} '):
                return float(line.split()[1])
    return None


def measure(server_argv, load, request_file, connections, seconds, pin):
    """One run: the server started, loaded for `seconds`, stopped. Returns
    (requests per second, statuses, generator CPU seconds per wall second,
    server CPU microseconds per answered request). A server with
    --metrics-listen must have counted every answer as accepted; a receiver
    logging (no --log none) must have written a line for each."""
    env = {**os.environ, "KEYHOOK_RECEIVER_KEY": API_KEY}
    env.pop("KEYHOOK_SIGNING_SECRET", None)
    # A regular file, as a service manager's log file would be; opened O_APPEND (io.open's "a" does not set
    # it on a descriptor), so reading it here, which moves the offset the server shares, never makes the
    # server write over its own lines.
    log = tempfile.TemporaryFile(mode="w+")
    fcntl.fcntl(log.fileno(), fcntl.F_SETFL, fcntl.fcntl(log.fileno(), fcntl.F_GETFL) | os.O_APPEND)
    server = subprocess.Popen(pinned(0, server_argv, pin), stdout=subprocess.DEVNULL, stderr=log, env=env, text=True)
    logging = os.path.basename(server_argv[0]) == "webhook_receiver" and "none" not in server_argv

    def head():
        """The program's first lines (where the ports are), not the request lines after them."""
        log.seek(0)
        return log.read(8192)
    try:
        def port():
            text = head()
            at = text.find("listening on 127.0.0.1:")
            return int(text[at + 23:].split()[0]) if at >= 0 and "\n" in text[at:] else None
        p = wait_until(port)
        if p is None:
            log.seek(0)
            sys.exit(f"bench-receiver: {server_argv[0]} did not start: {log.read()}")
        server_cpu = cpu_seconds(server.pid)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        r = subprocess.run(pinned(1, [load, "--connect", f"127.0.0.1:{p}", "--request", request_file, "--connections",
                                      str(connections), "--seconds", str(seconds)], pin),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        server_cpu = cpu_seconds(server.pid) - server_cpu
        if r.returncode != 0:
            sys.exit(f"bench-receiver: the load generator failed: {r.stdout} {r.stderr}")
        result = json.loads(r.stdout)
        if "--metrics-listen" in server_argv:
            text = head()
            at = text.find("metrics on 127.0.0.1:")
            counted = counted_accepted(int(text[at + 21:].split()[0]))
            # Answers the generator stopped reading at its deadline are counted too: at least, at most that many more.
            if counted is None or not result["answered"] <= counted <= result["answered"] + connections:
                sys.exit(f"bench-receiver: /metrics counted {counted} accepted for {result['answered']} answered")
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        stop(server)  # its log written whole
        if logging:
            # Every answer has its line, or is counted in a notice of lines dropped (standard error did not
            # keep up: the writer thread starved of CPU on a loaded machine).
            log.seek(0)
            lines, dropped = 0, 0
            for line in log:
                if line.startswith('{"time":'):
                    lines += 1
                elif "log lines dropped" in line:
                    dropped += int(line.split()[1])
            if not result["answered"] <= lines + dropped <= result["answered"] + connections:
                sys.exit(f"bench-receiver: {lines} log lines and {dropped} dropped for {result['answered']} answered")
            if dropped:
                print(f"      ({dropped} of {lines + dropped} log lines dropped: the writer did not keep up)")
        return (result["rps"], result["statuses"], cpu / (seconds + 0.5),
                1e6 * server_cpu / max(result["answered"], 1))
    finally:
        stop(server)
        log.close()


def log_row(args, receiver, load, request_file, pin):
    """--row log: requests per second with --log json over --log none, both with --metrics-listen, 64 connections."""
    connections = 64
    print(f"receiver log row: --log json (standard error a file) against --log none, both with --metrics-listen, "
          f"{connections} connections, {args.repetitions} interleaved runs of {args.seconds:g} s, medians; "
          f"{'server on CPU 0, generator on CPU 1' if pin else 'not pinned'}; load average "
          f"{open('/proc/loadavg').read().split()[0]}", flush=True)
    rps, cpu = {"json": [], "none": []}, {"json": [], "none": []}
    for rep in range(args.repetitions):
        for kind in (("none", "json") if rep % 2 == 0 else ("json", "none")):
            argv = [receiver, "--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0", "--log", kind]
            r, statuses, _, us = measure(argv, load, request_file, connections, args.seconds, pin)
            if set(statuses) != {"200"}:
                sys.exit(f"bench-receiver: answers not all 200: {statuses}")
            rps[kind].append(r)
            cpu[kind].append(us)
            print(f"  {rep + 1} {kind:4}  {r:8.0f} req/s  {us:5.1f} us CPU a request", flush=True)
    json_rps, none_rps = statistics.median(rps["json"]), statistics.median(rps["none"])
    ratio = json_rps / none_rps
    ok = ratio >= LOG_TARGET
    print(f"{'PASS' if ok else 'FAIL'}  log, {connections} connections: {json_rps:.0f} req/s with --log json / "
          f"{none_rps:.0f} req/s with --log none = {ratio:.2f} (target >= {LOG_TARGET:g}); CPU a request "
          f"{statistics.median(cpu['json']):.1f} / {statistics.median(cpu['none']):.1f} us; load average "
          f"{open('/proc/loadavg').read().split()[0]}", flush=True)
    return 0 if ok else 1


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build-dir", default=os.environ.get("KEYHOOK_BENCH_RECEIVER_BUILD_DIR",
                                                              os.path.join(ROOT, "build-perf-receiver")))
    parser.add_argument("--row", choices=("bare", "log"), default="bare")
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--repetitions", type=int, help="default 5 (bare) or 7 (log)")
    parser.add_argument("--no-pin", action="store_true", help="do not pin the server and the generator to CPUs")
    parser.add_argument("--no-metrics", action="store_true", help="run the receiver without --metrics-listen (O4)")
    parser.add_argument("--no-log", action="store_true", help="run the receiver with --log none (O3)")
    args = parser.parse_args()
    args.repetitions = args.repetitions or (7 if args.row == "log" else 5)
    pin = not args.no_pin and shutil.which("taskset") is not None and (os.cpu_count() or 1) >= 2
    if not all(os.access(os.path.join(args.build_dir, "examples", "webhook_receiver", n), os.X_OK)
               for n in PROGRAMS):
        build(args.build_dir)
    receiver, bare, load = (program(args.build_dir, n) for n in PROGRAMS)

    with tempfile.NamedTemporaryFile(suffix=".http", delete=False) as f:
        f.write(request_bytes())
        request_file = f.name
    if args.row == "log":
        try:
            return log_row(args, receiver, load, request_file, pin)
        finally:
            os.unlink(request_file)
    receiver_argv = [receiver, "--listen", "127.0.0.1:0"]
    if not args.no_metrics:
        receiver_argv += ["--metrics-listen", "127.0.0.1:0"]
    if args.no_log:
        receiver_argv += ["--log", "none"]
    print(f"receiver speed rows: {args.repetitions} interleaved runs of {args.seconds} s each, medians; "
          f"{'server on CPU 0, generator on CPU 1' if pin else 'not pinned'}; "
          f"receiver metrics {'off' if args.no_metrics else 'on (--metrics-listen)'}, request log "
          f"{'off (--log none)' if args.no_log else 'on (--log json, standard error a file)'}; load average "
          f"{open('/proc/loadavg').read().split()[0]}")
    failed = False
    try:
        for connections in (1, 64):
            runs = {"bare": [], "receiver": []}
            statuses = {"bare": {}, "receiver": {}}
            load_cpu = {"bare": [], "receiver": []}
            server_us = {"bare": [], "receiver": []}
            for _ in range(args.repetitions):
                for name, argv in (("bare", [bare, "--listen", "127.0.0.1:0"]),
                                   ("receiver", receiver_argv)):
                    rps, st, cpu, us = measure(argv, load, request_file, connections, args.seconds, pin)
                    runs[name].append(rps)
                    load_cpu[name].append(cpu)
                    server_us[name].append(us)
                    for k, v in st.items():
                        statuses[name][k] = statuses[name].get(k, 0) + v
            bare_rps, receiver_rps = statistics.median(runs["bare"]), statistics.median(runs["receiver"])
            ratio = receiver_rps / bare_rps
            only_200 = all(set(s) == {"200"} for s in statuses.values())
            ok = ratio >= TARGET and only_200
            failed |= not ok
            print(f"{'PASS' if ok else 'FAIL'}  receiver, {connections:>2} connection{'s' if connections > 1 else ' '}: "
                  f"{receiver_rps:9.0f} req/s vs bare {bare_rps:9.0f} req/s, ratio {ratio:.2f} (target >= {TARGET})"
                  + ("" if only_200 else f"; answers not all 200: {statuses}"))
            print(f"      runs: bare {[round(x) for x in runs['bare']]}, receiver {[round(x) for x in runs['receiver']]}"
                  f"; generator CPU {statistics.median(load_cpu['bare']):.2f} of a core against bare, "
                  f"{statistics.median(load_cpu['receiver']):.2f} against the receiver")
            bare_us, receiver_us = statistics.median(server_us["bare"]), statistics.median(server_us["receiver"])
            print(f"      server CPU per request: bare {bare_us:.1f} us, receiver {receiver_us:.1f} us, ratio "
                  f"{bare_us / receiver_us:.2f} (what the throughput ratio tends to when the server is CPU-bound; "
                  f"steadier on a shared machine)")
    finally:
        os.unlink(request_file)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
