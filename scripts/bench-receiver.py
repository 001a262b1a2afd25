#!/usr/bin/env python3
"""The receiver's speed row (rule H13), as ratios measured in one
run, PASS or FAIL:

  receiver, N connections   webhook_receiver --listen answers unsigned
                            deliveries at no less than 0.8 of the requests per
                            second of a bare server of the same code (examples/
                            shared/http_server with a handler answering 200,
                            no keyhook), at 1 and at 64 keep-alive connections

    scripts/bench-receiver.py [--build-dir DIR] [--seconds S] [--repetitions N] [--no-pin] [--no-metrics]

The receiver runs with its metrics on (--metrics-listen, rule O4: every
answer counted): after each of its runs its /metrics must count exactly the
requests the generator had answered, or the row fails. --no-metrics runs it
without them, to see what they cost.

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
    --metrics-listen must have counted every answer as accepted."""
    env = {**os.environ, "KEYHOOK_RECEIVER_KEY": API_KEY}
    env.pop("KEYHOOK_SIGNING_SECRET", None)
    log = tempfile.TemporaryFile(mode="w+")
    server = subprocess.Popen(pinned(0, server_argv, pin), stdout=subprocess.DEVNULL, stderr=log, env=env, text=True)
    try:
        def port():
            log.seek(0)
            text = log.read()
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
            log.seek(0)
            text = log.read()
            at = text.find("metrics on 127.0.0.1:")
            counted = counted_accepted(int(text[at + 21:].split()[0]))
            # Answers the generator stopped reading at its deadline are counted too: at least, at most that many more.
            if counted is None or not result["answered"] <= counted <= result["answered"] + connections:
                sys.exit(f"bench-receiver: /metrics counted {counted} accepted for {result['answered']} answered")
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        return (result["rps"], result["statuses"], cpu / (seconds + 0.5),
                1e6 * server_cpu / max(result["answered"], 1))
    finally:
        stop(server)
        log.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build-dir", default=os.environ.get("KEYHOOK_BENCH_RECEIVER_BUILD_DIR",
                                                              os.path.join(ROOT, "build-perf-receiver")))
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--repetitions", type=int, default=5)
    parser.add_argument("--no-pin", action="store_true", help="do not pin the server and the generator to CPUs")
    parser.add_argument("--no-metrics", action="store_true", help="run the receiver without --metrics-listen (O4)")
    args = parser.parse_args()
    pin = not args.no_pin and shutil.which("taskset") is not None and (os.cpu_count() or 1) >= 2
    if not all(os.access(os.path.join(args.build_dir, "examples", "webhook_receiver", n), os.X_OK)
               for n in PROGRAMS):
        build(args.build_dir)
    receiver, bare, load = (program(args.build_dir, n) for n in PROGRAMS)

    with tempfile.NamedTemporaryFile(suffix=".http", delete=False) as f:
        f.write(request_bytes())
        request_file = f.name
    receiver_argv = [receiver, "--listen", "127.0.0.1:0"]
    if not args.no_metrics:
        receiver_argv += ["--metrics-listen", "127.0.0.1:0"]
    print(f"receiver speed rows: {args.repetitions} interleaved runs of {args.seconds} s each, medians; "
          f"{'server on CPU 0, generator on CPU 1' if pin else 'not pinned'}; "
          f"receiver metrics {'off' if args.no_metrics else 'on (--metrics-listen)'}")
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
