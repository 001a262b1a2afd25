#!/usr/bin/env python3
"""Rule O4 through a real Prometheus server (Debian's prometheus, with
promtool): webhook_receiver --listen --metrics-listen is scraped every second
by a Prometheus this script starts (its own configuration, a temporary
--storage.tsdb.path, a free port; never the packaged service) while requests
are sent, and Prometheus's query API must show keyhook_receiver_requests_total
moved by exactly the requests sent, result by result. With --sqlite, a second
receiver keeps its replay ids in SQLite: its table is dropped under it, its
/healthz turns 503 once the store has failed for more than the stale period
(5 s), keyhook_store_errors_total{store="replay"} counts the failures, and
once the table is back /healthz is 200 again without a request (its probe).
Each program's scrape must pass `promtool check metrics` (lint included).
Every wait is on a condition (tests/interop/waits.py).

    metrics_prometheus.py PROMETHEUS PROMTOOL WEBHOOK_RECEIVER [--sqlite]"""
import base64, hashlib, hmac, http.client, json, os, re, shutil, socket, sqlite3, subprocess, sys, tempfile, time
import urllib.parse, urllib.request
from waits import BOUND, stop, wait_until

prometheus_bin, promtool, receiver_bin = sys.argv[1:4]
with_sqlite = "--sqlite" in sys.argv[4:]
started = time.monotonic()
KEY = "the-receiver-key-1234567890"
SIGNING_KEY = b"metrics-test-signing-key-32bytes"
RESULTS = ["accepted", "replay", "pending", "full", "unavailable", "unwritten", "bad_key", "bad_signature",
           "bad_body", "method", "encoding", "length", "framing", "too_large", "timeout", "overloaded", "error"]
BODY = json.dumps({"FolderName": "Loans", "ServiceName": "Pricing", "EntityId": "e-1", "UserAction": "PublishEngine",
                   "AuditType": "ProductEngine",
                   "Data": {"ProductName": "Loans", "EngineName": "Pricing", "FileName": "pricing.xlsx",
                            "ProductId": "e-1", "ServiceVersionId": "v-1"},
                   "Tenant": "acme-secret-tenant", "RequestTimeStamp": "2026-03-04T05:06:07.123Z",
                   "RevisionId": None})
failures = 0
work = tempfile.mkdtemp(prefix="keyhook-metrics-")
processes = []


def check(ok, what):
    global failures
    failures += not ok
    print(("ok   " if ok else "FAIL ") + "[O4] " + what, flush=True)
    return ok


def finish():
    for p in reversed(processes):
        stop(p, 10)
    shutil.rmtree(work, ignore_errors=True)
    print(f"metrics_prometheus: {time.monotonic() - started:.1f} s")
    print("all checks passed" if failures == 0 else f"{failures} check(s) failed")
    sys.exit(1 if failures else 0)


def start_receiver(*extra):
    env = {**os.environ, "KEYHOOK_RECEIVER_KEY": KEY,
           "KEYHOOK_SIGNING_SECRET": "whsec_" + base64.b64encode(SIGNING_KEY).decode()}
    p = subprocess.Popen([receiver_bin, "--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0", *extra],
                         env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    processes.append(p)
    ports = {}
    # "metrics on H:P" then "listening on H:P", each flushed once its socket listens.
    while len(ports) < 2:
        line = p.stderr.readline()
        if not line:
            check(False, f"webhook_receiver {' '.join(extra)} started (exit {stop(p)})")
            finish()
        m = re.search(r"(metrics on|listening on) 127\.0\.0\.1:(\d+)\s*$", line)
        if m:
            ports[m.group(1)] = int(m.group(2))
    return p, ports["listening on"], ports["metrics on"]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def request(port, method, path, body=None, headers=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=BOUND)
    c.request(method, path, body=body, headers=headers or {})
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, data


def signed(msg_id, body=BODY, key=SIGNING_KEY):
    ts = str(int(time.time()))
    mac = base64.b64encode(hmac.new(key, f"{msg_id}.{ts}.{body}".encode(), hashlib.sha256).digest()).decode()
    return {"x-api-key": KEY, "content-type": "application/json", "webhook-id": msg_id, "webhook-timestamp": ts,
            "webhook-signature": "v1," + mac}


def raw(port, data):
    """Sends bytes as they are; the status code of the answer."""
    s = socket.create_connection(("127.0.0.1", port), timeout=BOUND)
    s.sendall(data)
    answer = b""
    while b"\r\n" not in answer:
        chunk = s.recv(4096)
        if not chunk:
            break
        answer += chunk
    s.close()
    return int(answer.split()[1]) if answer.startswith(b"HTTP/") else None


def query(expression):
    """Prometheus's instant query: {frozenset(labels): value}, or None when it cannot answer."""
    url = f"http://127.0.0.1:{prom_port}/api/v1/query?" + urllib.parse.urlencode({"query": expression})
    try:
        with urllib.request.urlopen(url, timeout=BOUND) as r:
            answer = json.load(r)
    except OSError:
        return None
    if answer.get("status") != "success":
        return None
    return {frozenset((k, v) for k, v in s["metric"].items() if k not in ("__name__", "instance")): float(s["value"][1])
            for s in answer["data"]["result"]}


def by_result(job):
    values = query(f'keyhook_receiver_requests_total{{job="{job}"}}') or {}
    return {dict(labels).get("result"): v for labels, v in values.items()}


def prometheus_shows(job, expected, what):
    """Waits until Prometheus's latest sample of every result is what was sent."""
    want = {r: float(expected.get(r, 0)) for r in RESULTS}
    seen = wait_until(lambda: by_result(job) == want and by_result(job), BOUND, 0.1)
    got = by_result(job)
    return check(got == want, f"{job}: Prometheus shows {what}: "
                 + (f"{sum(want.values()):.0f} requests, by result" if got == want else f"{got} != {want}"))


def promtool_passes(job, metrics_port):
    status, text = request(metrics_port, "GET", "/metrics")
    run = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True)
    return check(status == 200 and run.returncode == 0 and not run.stdout.strip() and not run.stderr.strip(),
                 f"{job}: promtool check metrics passes on its scrape (exit {run.returncode}"
                 f"{': ' + (run.stdout + run.stderr).decode(errors='replace').strip() if run.returncode else ''})")


# ------------------------------------------------------------------ the programs and the server
rx, rx_port, rx_metrics = start_receiver()
jobs = {"receiver": rx_metrics}
if with_sqlite:
    store_path = os.path.join(work, "replay.db")
    rs, rs_port, rs_metrics = start_receiver("--store", "sqlite:" + store_path)
    jobs["receiver_sqlite"] = rs_metrics

prom_port = free_port()
config = os.path.join(work, "prometheus.yml")
with open(config, "w") as f:
    f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\nscrape_configs:\n")
    for job, port in jobs.items():
        f.write(f"  - job_name: {job}\n    static_configs:\n      - targets: ['127.0.0.1:{port}']\n")
prom = subprocess.Popen([prometheus_bin, f"--config.file={config}", f"--storage.tsdb.path={work}/tsdb",
                         f"--web.listen-address=127.0.0.1:{prom_port}", "--log.level=warn"],
                        stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, "prometheus.log"), "w"))
processes.append(prom)
up = wait_until(lambda: query("up") and all(query(f'up{{job="{j}"}}') == {frozenset({("job", j)}): 1.0}
                                            for j in jobs), BOUND, 0.1)
if not check(bool(up), f"Prometheus on port {prom_port} scrapes {', '.join(jobs)} (up == 1)"):
    with open(os.path.join(work, "prometheus.log")) as f:
        print(f.read()[-4000:])
    finish()
prometheus_shows("receiver", {}, "every result at 0 before any request")

# ------------------------------------------------------------------ traffic, two batches
sent = {}


def sent_one(result, status, want_status):
    sent[result] = sent.get(result, 0) + 1
    if status != want_status:
        check(False, f"a request meant to be '{result}' was answered {status} (expected {want_status})")


for i in range(5):
    sent_one("accepted", request(rx_port, "POST", "/hook", BODY, signed(f"msg_{i}"))[0], 200)
for _ in range(2):
    sent_one("bad_key", request(rx_port, "POST", "/hook", BODY, {**signed("msg_k"), "x-api-key": "wrong-key-123456"})[0],
             401)
sent_one("method", request(rx_port, "GET", "/hook")[0], 405)
prometheus_shows("receiver", sent, "the first batch")

for i in range(3):
    sent_one("replay", request(rx_port, "POST", "/hook", BODY, signed(f"msg_{i}"))[0], 200)
for _ in range(2):
    sent_one("bad_signature", request(rx_port, "POST", "/hook", BODY, signed("msg_s", key=b"another-key-of-32-bytes-........"))[0],
             401)
sent_one("bad_body", request(rx_port, "POST", "/hook", "[1, 2]", signed("msg_b", body="[1, 2]"))[0], 400)
sent_one("encoding", request(rx_port, "POST", "/hook", BODY, {**signed("msg_e"), "content-encoding": "gzip"})[0], 415)
sent_one("length", raw(rx_port, b"POST /hook HTTP/1.1\r\nHost: x\r\n\r\n"), 411)
sent_one("framing", raw(rx_port, b"POST /hook HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\n{}"),
         400)
sent_one("too_large", raw(rx_port, b"POST /hook HTTP/1.1\r\nHost: x\r\n" +
                              b"".join(b"h%d: v\r\n" % i for i in range(101)) + b"Content-Length: 0\r\n\r\n"), 431)
prometheus_shows("receiver", sent, "the second batch added to the first")
total = query('sum(keyhook_receiver_requests_total{job="receiver"})')
check(total == {frozenset(): float(sum(sent.values()))},
      f"receiver: the sum over results is every request sent ({sum(sent.values())}): {total}")
check(query('keyhook_store_errors_total{job="receiver"}') == {frozenset({("job", "receiver"), ("store", "replay")}): 0.0},
      "receiver: keyhook_store_errors_total{store=\"replay\"} is 0 in memory")

# ------------------------------------------------------------------ labels, health, lint
values = query('count by (result) (keyhook_receiver_requests_total)') or {}
check(sorted(dict(k)["result"] for k in values) == sorted(RESULTS), "the result label takes its closed set of values")
names = set()
for job in jobs:
    for labels in (query(f'{{job="{job}",__name__=~"keyhook_.*"}}') or {}):
        names.update(k for k, _ in labels)
check(names <= {"job", "result", "store"}, f"no label but job, result and store on keyhook's series: {sorted(names)}")
status, body = request(rx_metrics, "GET", "/healthz")
check((status, body) == (200, b'{"status":"ok"}\n'), f"receiver: /healthz answers {status} {body!r}")
check(request(rx_metrics, "GET", "/")[0] == 404 and request(rx_metrics, "GET", "/metricsx")[0] == 404,
      "receiver: any other path on the metrics address is 404")
for job, port in jobs.items():
    promtool_passes(job, port)

# ------------------------------------------------------------------ a store that fails, and recovers
if with_sqlite:
    stored = {}

    def sent_stored(result, status, want_status):
        stored[result] = stored.get(result, 0) + 1
        if status != want_status:
            check(False, f"receiver_sqlite: a request meant to be '{result}' was answered {status} "
                         f"(expected {want_status})")

    for i in range(2):
        sent_stored("accepted", request(rs_port, "POST", "/hook", BODY, signed(f"stored_{i}"))[0], 200)
    db = sqlite3.connect(store_path, timeout=BOUND)
    schema = db.execute("SELECT sql FROM sqlite_master WHERE name = 'keyhook_replay_ids'").fetchone()[0]
    index = db.execute("SELECT sql FROM sqlite_master WHERE name = 'keyhook_replay_ids_expiry'").fetchone()[0]
    db.execute("DROP TABLE keyhook_replay_ids")
    db.commit()
    failed_at = time.monotonic()
    sent_stored("unavailable", request(rs_port, "POST", "/hook", BODY, signed("stored_x"))[0], 503)
    status, body = request(rs_metrics, "GET", "/healthz")
    check(status == 200 or time.monotonic() - failed_at > 5,
          f"receiver_sqlite: /healthz is still {status} within the stale period")
    wait_until(lambda: request(rs_metrics, "GET", "/healthz")[0] == 503, BOUND, 0.1)
    waited = time.monotonic() - failed_at
    status, body = request(rs_metrics, "GET", "/healthz")
    text = body.decode(errors="replace")
    check(status == 503 and waited >= 5.0, f"receiver_sqlite: /healthz is 503 once the store has failed for "
                                           f"more than 5 s (after {waited:.1f} s): {text.strip()}")
    reason = json.loads(text).get("reason", "") if status == 503 else ""
    check(text.count("\n") == 1 and reason and store_path not in text and "sqlite" not in text
          and KEY not in text and "acme" not in text,
          "receiver_sqlite: its reason is one line of JSON naming no store address, key or tenant")
    # The store back: the probe sees it with no request sent.
    db.execute(schema)
    db.execute(index)
    db.commit()
    db.close()
    check(bool(wait_until(lambda: request(rs_metrics, "GET", "/healthz")[0] == 200, BOUND, 0.1)),
          "receiver_sqlite: /healthz is 200 again once the store answers (no request needed)")
    sent_stored("accepted", request(rs_port, "POST", "/hook", BODY, signed("stored_y"))[0], 200)
    prometheus_shows("receiver_sqlite", stored, "the requests to the failing store")
    # Its own scrape and Prometheus's latest sample agree once both are still.
    own = lambda: float(re.search(rb'\nkeyhook_store_errors_total\{store="replay"\} (\S+)\n',
                                  request(rs_metrics, "GET", "/metrics")[1]).group(1))
    key = frozenset({("job", "receiver_sqlite"), ("store", "replay")})
    agreed = wait_until(lambda: (query('keyhook_store_errors_total{job="receiver_sqlite"}') or {}).get(key) == own(),
                        BOUND, 0.1)
    errors = own()
    check(bool(agreed) and errors >= 2, f"receiver_sqlite: keyhook_store_errors_total{{store=\"replay\"}} counts the "
                                        f"failed request and probes ({errors:.0f}), in Prometheus as scraped")
    promtool_passes("receiver_sqlite", rs_metrics)

finish()
