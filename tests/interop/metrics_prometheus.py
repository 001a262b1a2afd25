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
With --gateway, key_gateway --metrics-listen over keys key_admin made
(--stale-for 1) is scraped as well while it answers calls of every code of
O2 (a stale store's UNAVAILABLE included): keyhook_gateway_decisions_total
must show each code moved by exactly the calls answered with it (VALID: the
allowed calls), keyhook_gateway_decision_seconds_count every decision, and
keyhook_store_errors_total{store="key"} the failed reads; its /healthz is
503 while the calls are refused as stale, with a one-line reason naming no
store, key or tenant, and 200 once the store reads again.
With --deliver (and --sqlite), webhook_deliver --store sqlite:... --work
--metrics-listen is scraped while it sends deliveries a file run enqueued to
an endpoint here that answers 200, one that answers 500 (every retry, then
gave_up) and one that answers 410 (disabled): keyhook_delivery_attempts_total
must show each outcome moved by exactly the attempt lines the worker printed
with it, keyhook_delivery_attempt_seconds_count all of them, and the two
store-wide gauges what the store holds (pending deliveries, disabled
webhooks). Its store's deliveries table is renamed away while the replay
store above fails: the worker rides it out, /healthz is 503 past 5 s, the
failures are counted, and all is well once the table is back.
Each program's scrape must pass `promtool check metrics` (lint included).
Every wait is on a condition (tests/interop/waits.py).

    metrics_prometheus.py PROMETHEUS PROMTOOL WEBHOOK_RECEIVER [--sqlite] [--gateway KEY_ADMIN KEY_GATEWAY]
                          [--deliver WEBHOOK_DELIVER]"""
import base64, datetime, fcntl, hashlib, hmac, http.client, json, os, re, shutil, socket, sqlite3, subprocess, sys, tempfile
import time, urllib.parse, urllib.request
from waits import BOUND, stop, wait_until

prometheus_bin, promtool, receiver_bin = sys.argv[1:4]
with_sqlite = "--sqlite" in sys.argv[4:]
gateway_bins = sys.argv[sys.argv.index("--gateway") + 1:sys.argv.index("--gateway") + 3] if "--gateway" in sys.argv else None
deliver_bin = sys.argv[sys.argv.index("--deliver") + 1] if "--deliver" in sys.argv and with_sqlite else None
OUTCOMES = ["delivered", "retry", "gave_up", "disabled"]
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


CODES = ["VALID", "NOT_FOUND", "REVOKED", "EXPIRED", "NOT_YET_ACTIVE", "ADDRESS_NOT_ALLOWED", "FORBIDDEN",
         "RATE_LIMITED", "USAGE_EXCEEDED", "UNAVAILABLE"]


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

if gateway_bins:
    admin_bin, gateway_bin = gateway_bins
    gw_store = os.path.join(work, "keys.jsonl")
    gw_env = {**os.environ, "KEYHOOK_PEPPERS": "p1:" + base64.b64encode(os.urandom(32)).decode()}

    def admin(*args):
        p = subprocess.run([admin_bin, "--store", gw_store, *args], env=gw_env, capture_output=True, text=True)
        if p.returncode != 0:
            check(False, f"key_admin {args[0]}: exit {p.returncode}: {p.stderr.strip()}")
            finish()
        return p.stdout

    def iso(days):
        t = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=days)
        return t.strftime("%Y-%m-%dT%H:%M:%SZ")

    def create(*extra, valid=(-1, 30)):
        return json.loads(admin("create", "--tenant", "acme-secret-tenant", "--name", "a key", "--from",
                                iso(valid[0]), "--until", iso(valid[1]), "--group", "user:pf", *extra))

    gw_keys = {"valid": create(), "revoked": create(), "expired": create(valid=(-30, -1)),
               "future": create(valid=(30, 60)), "elsewhere": create("--allow", "10.0.0.0/8"),
               "rated": create("--rate", "1/3600"), "credited": create("--credits", "1")}
    admin("deactivate", "--id", gw_keys["revoked"]["id"])
    gw_routes = os.path.join(work, "routes.json")
    with open(gw_routes, "w") as f:
        json.dump({"routes": [{"method": "*", "prefix": "/api/", "family": "Execute", "access": "read"}],
                   "groups": {"user:pf": {"access": [{"level": "read"}]}}}, f)
    gw = subprocess.Popen([gateway_bin, "--listen", "127.0.0.1:0", "--store", gw_store, "--routes", gw_routes,
                           "--proxy", "traefik", "--trusted-proxy", "127.0.0.1/32", "--stale-for", "1",
                           "--metrics-listen", "127.0.0.1:0", "--log", "none"],
                          env=gw_env, stdout=subprocess.PIPE, stderr=open(os.path.join(work, "gateway.log"), "w"),
                          text=True)
    processes.append(gw)
    gw_ports = {}
    while len(gw_ports) < 2:  # "metrics on H:P" then "listening on H:P", on standard output
        line = gw.stdout.readline()
        if not line:
            check(False, f"key_gateway started (exit {stop(gw)})")
            finish()
        m = re.search(r"(metrics on|listening on) 127\.0\.0\.1:(\d+)\s*$", line)
        if m:
            gw_ports[m.group(1)] = int(m.group(2))
    gw_port, gw_metrics = gw_ports["listening on"], gw_ports["metrics on"]
    jobs["gateway"] = gw_metrics

if deliver_bin:
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Endpoint(BaseHTTPRequestHandler):
        """/ok answers 200, /flaky 500, /gone 410."""
        protocol_version = "HTTP/1.1"

        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            self.send_response({"/ok": 200, "/flaky": 500, "/gone": 410}.get(self.path.split("?")[0], 404))
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *a):
            pass

    endpoint = ThreadingHTTPServer(("127.0.0.1", 0), Endpoint)
    threading.Thread(target=endpoint.serve_forever, daemon=True).start()
    dl_db = os.path.join(work, "deliveries.db")
    # A million times faster than real time: the 8 attempts of B2's 27.6 hours in a tenth of a second.
    dl_common = [deliver_bin, "--allow-local", "--time-scale", "0.000001", "--store", "sqlite:" + dl_db]
    hooks = [{"name": n, "endpoint": f"http://127.0.0.1:{endpoint.server_address[1]}/{n}", "saved": True}
             for n in ("ok", "flaky", "gone")]
    # Two events due 2 s (real) from now, one far later: its deliveries stay pending.
    doc = {"tenant": {"name": "acme-secret-tenant", "webhooksEnabled": True}, "webhooks": hooks,
           "events": [{"after": 2e6, "event": {"UserAction": "PublishEngine", "EntityId": f"e{i}"}} for i in range(2)]
           + [{"after": 3e8, "event": {"UserAction": "PublishEngine", "EntityId": "later"}}]}
    # Enqueued by a file run stopped before anything is due; the worker below sends them.
    enqueuer = subprocess.Popen([*dl_common, "-"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True)
    enqueuer.stdin.write(json.dumps(doc))
    enqueuer.stdin.close()
    added = enqueuer.stderr.readline()
    enqueuer_status = stop(enqueuer)
    if not check("9 of 9 deliveries added" in added and enqueuer_status == 0,
                 f"deliver: a file run enqueued 9 deliveries and stopped ({added.strip()}, exit {enqueuer_status})"):
        finish()
    dl = subprocess.Popen([*dl_common, "--work", "--metrics-listen", "127.0.0.1:0"], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True)
    processes.append(dl)
    dl_lines, dl_errors = [], []
    line = dl.stderr.readline()
    m = re.search(r"^webhook_deliver: metrics on 127\.0\.0\.1:(\d+)$", line.strip())
    if not check(bool(m), f"deliver: webhook_deliver --work --metrics-listen started ({line.strip()})"):
        finish()
    dl_metrics = int(m.group(1))
    jobs["deliver"] = dl_metrics
    threading.Thread(target=lambda: [dl_lines.append(json.loads(x)) for x in dl.stdout], daemon=True).start()
    threading.Thread(target=lambda: [dl_errors.append(x) for x in dl.stderr], daemon=True).start()

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
check(names <= {"job", "result", "store", "code", "outcome", "le"},
      f"no label but job, result, store, code, outcome and le (a histogram's) on keyhook's series: {sorted(names)}")
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
    if deliver_bin:
        # The worker's store fails at the same time: its deliveries table renamed away (kept, to come back).
        check(bool(wait_until(lambda: sum(1 for l in dl_lines if l.get("sentAt")) == 19, BOUND, 0.05)),
              "deliver: the worker made its 19 attempts before its store fails")
        dl_conn = sqlite3.connect(dl_db, timeout=BOUND)
        dl_conn.execute("ALTER TABLE keyhook_deliveries RENAME TO keyhook_deliveries_away")
        dl_conn.commit()
        dl_failed_at = time.monotonic()
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
    if deliver_bin:
        wait_until(lambda: request(dl_metrics, "GET", "/healthz")[0] == 503, BOUND, 0.1)
        waited = time.monotonic() - dl_failed_at
        status, body = request(dl_metrics, "GET", "/healthz")
        text = body.decode(errors="replace")
        check(status == 503 and waited >= 5.0 and text.count("\n") == 1 and dl_db not in text and "acme" not in text,
              f"deliver: /healthz is 503 once its store has failed for more than 5 s (after {waited:.1f} s), one "
              f"line naming no store or tenant: {text.strip()}")
        check(dl.poll() is None, "deliver: the worker rides out its failing store (still running)")
        dl_conn.execute("ALTER TABLE keyhook_deliveries_away RENAME TO keyhook_deliveries")
        dl_conn.commit()
        check(bool(wait_until(lambda: request(dl_metrics, "GET", "/healthz")[0] == 200, BOUND, 0.1)),
              "deliver: /healthz is 200 again once the store answers")
        reports = [l for l in dl_errors if "the store failed" in l]
        check(1 <= len(reports) <= int(time.monotonic() - dl_failed_at) + 1
              and any("more since the last report" in l for l in reports)
              and bool(wait_until(lambda: any("the store answers again (after" in l for l in dl_errors))),
              f"deliver: the failure reported at most once a second with its count, and its end ({len(reports)} "
              f"reports)")
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

# ------------------------------------------------------------------ key_gateway: every code, a stale store
if gateway_bins:
    answered = {}  # code: the calls the gateway answered with it
    allowed = []   # the calls answered 200

    def gw_call(key, uri="/api/things"):
        c = http.client.HTTPConnection("127.0.0.1", gw_port, timeout=BOUND)
        headers = {"x-tenant-name": "acme-secret-tenant", "X-Forwarded-Method": "GET", "X-Forwarded-Uri": uri,
                   "X-Forwarded-For": "127.0.0.1"}
        if key is not None:
            headers["x-synthetic-key"] = key
        c.request("GET", "/.auth", headers=headers)
        r = c.getresponse()
        r.read()
        c.close()
        code = r.getheader("x-keyhook-code")
        answered[code] = answered.get(code, 0) + 1
        allowed.extend([code] if r.status == 200 else [])
        return code

    def gw_codes():
        values = query('keyhook_gateway_decisions_total{job="gateway"}') or {}
        return {dict(labels).get("code"): v for labels, v in values.items()}

    def gateway_shows(what):
        want = {c: float(answered.get(c, 0)) for c in CODES}
        seen = wait_until(lambda: gw_codes() == want, BOUND, 0.1)
        got = gw_codes()
        check(bool(seen), f"gateway: Prometheus shows {what}: "
              + (f"{sum(want.values()):.0f} decisions, by code" if got == want else f"{got} != {want}"))

    gateway_shows("every code at 0 before any call")
    k = {name: key["key"] for name, key in gw_keys.items()}
    expected = ([(k["valid"], "/api/things", "VALID")] * 5 + [("unknown-key-00000000", "/api/x", "NOT_FOUND")] * 3 +
                [(None, "/api/x", "NOT_FOUND"), (k["revoked"], "/api/x", "REVOKED"), (k["revoked"], "/api/y", "REVOKED"),
                 (k["expired"], "/api/x", "EXPIRED"), (k["future"], "/api/x", "NOT_YET_ACTIVE")] +
                [(k["elsewhere"], "/api/x", "ADDRESS_NOT_ALLOWED")] * 2 + [(k["valid"], "/other", "FORBIDDEN")] * 2 +
                [(k["rated"], "/api/x", "VALID")] + [(k["rated"], "/api/x", "RATE_LIMITED")] * 3 +
                [(k["credited"], "/api/x", "VALID")] + [(k["credited"], "/api/x", "USAGE_EXCEEDED")] * 2)
    got = [gw_call(key, uri) for key, uri, _ in expected]
    check(got == [code for _, _, code in expected], "gateway: each call answered with the code meant for it "
          f"({len(expected)} calls, nine codes)")
    status, body = request(gw_metrics, "GET", "/healthz")
    check((status, body) == (200, b'{"status":"ok"}\n'), f"gateway: /healthz answers {status} {body!r} while serving")
    gateway_shows("the first batch, code by code")

    # A store that cannot be read: answered from memory for 1 s (--stale-for 1), then UNAVAILABLE and /healthz 503.
    # Written as a writer of the store writes, under its lock: a write-back of the gateway's usage (the calls
    # above) that had read the store before an unlocked replace would write the good keys back over it.
    def put_gw_store(text):
        with open(gw_store + ".lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            with open(gw_store + ".new", "w") as f:
                f.write(text)
            os.replace(gw_store + ".new", gw_store)

    with open(gw_store) as f:
        good = f.read()
    put_gw_store("not a stored key\n")
    broke_at = time.monotonic()
    check(bool(wait_until(lambda: gw_call(k["valid"]) == "UNAVAILABLE", BOUND, 0.05)),
          "gateway: a store that does not read: calls refused UNAVAILABLE past the stale period")
    stale_after = time.monotonic() - broke_at
    status, body = request(gw_metrics, "GET", "/healthz")
    text = body.decode(errors="replace")
    # The same condition as the calls' (the stale period from when the store was last heard from): no wait.
    check(status == 503, f"gateway: /healthz is 503 as soon as calls are refused as stale "
                         f"({stale_after:.1f} s after the store broke): {text.strip()}")
    reason = json.loads(text).get("reason", "") if status == 503 else ""
    check(text.count("\n") == 1 and reason == "the store has been unreadable or unwritable for more than 1 s"
          and gw_store not in text and "acme" not in text and k["valid"] not in text,
          "gateway: its reason is one line of JSON with the gateway's stale period, naming no store, key or tenant")
    for _ in range(2):
        gw_call(k["valid"])
    put_gw_store(good)
    check(bool(wait_until(lambda: gw_call(k["valid"]) == "VALID", BOUND, 0.05)),
          "gateway: the store put back, calls are allowed again")
    check(bool(wait_until(lambda: request(gw_metrics, "GET", "/healthz")[0] == 200, BOUND, 0.05)),
          "gateway: and /healthz is 200 again")
    gateway_shows("every decision by its code, UNAVAILABLE included")
    decisions = sum(answered.values())
    count = query('keyhook_gateway_decision_seconds_count{job="gateway"}')
    check(count == {frozenset({("job", "gateway")}): float(decisions)},
          f"gateway: keyhook_gateway_decision_seconds_count is every decision ({decisions}): {count}")
    check(answered.get("VALID") == len(allowed) and set(allowed) == {"VALID"},
          f"gateway: VALID counts exactly the allowed calls ({len(allowed)}, each answered 200)")
    own = lambda: float(re.search(rb'\nkeyhook_store_errors_total\{store="key"\} (\S+)\n',
                                  request(gw_metrics, "GET", "/metrics")[1]).group(1))
    key = frozenset({("job", "gateway"), ("store", "key")})
    agreed = wait_until(lambda: (query('keyhook_store_errors_total{job="gateway"}') or {}).get(key) == own(),
                        BOUND, 0.1)
    errors = own()
    check(bool(agreed) and errors >= 4, f"gateway: keyhook_store_errors_total{{store=\"key\"}} counts the failed "
                                        f"reads (four a second: {errors:.0f}), in Prometheus as scraped")
    promtool_passes("gateway", gw_metrics)

# ------------------------------------------------------------------ webhook_deliver: attempts, gauges, errors
if deliver_bin:
    attempts = [l for l in dl_lines if l.get("sentAt")]
    printed = {o: float(sum(1 for l in attempts if l["outcome"] == o)) for o in OUTCOMES}
    check(printed == {"delivered": 2.0, "retry": 14.0, "gave_up": 2.0, "disabled": 1.0},
          f"deliver: the worker's attempt lines: 2 delivered, 14 retry, 2 gave_up, 1 disabled ({printed})")

    def by_outcome():
        values = query('keyhook_delivery_attempts_total{job="deliver"}') or {}
        return {dict(labels).get("outcome"): v for labels, v in values.items()}
    wait_until(lambda: by_outcome() == printed, BOUND, 0.1)
    check(by_outcome() == printed, f"deliver: Prometheus shows each outcome moved by exactly the attempt lines "
                                   f"printed with it: {by_outcome()}")
    count = query('keyhook_delivery_attempt_seconds_count{job="deliver"}')
    check(count == {frozenset({("job", "deliver")}): float(len(attempts))},
          f"deliver: keyhook_delivery_attempt_seconds_count is every attempt ({len(attempts)}): {count}")
    with sqlite3.connect(dl_db, timeout=BOUND) as conn:
        pending = conn.execute("SELECT COUNT(*) FROM keyhook_deliveries WHERE due_at IS NOT NULL").fetchone()[0]
        disabled = conn.execute("SELECT COUNT(*) FROM keyhook_webhooks WHERE disabled <> 0").fetchone()[0]
    gauges = lambda: (query('max(keyhook_deliveries_pending{job="deliver"})'),
                      query('max(keyhook_endpoints_disabled{job="deliver"})'))
    want = ({frozenset(): float(pending)}, {frozenset(): float(disabled)})
    wait_until(lambda: gauges() == want, BOUND, 0.1)
    check(gauges() == want and pending == 3 and disabled == 1,
          f"deliver: the store-wide gauges, aggregated with max, are what the store holds: {pending} pending "
          f"(the later event's, no worker touched), {disabled} disabled webhook: {gauges()}")
    own = lambda: float(re.search(rb'\nkeyhook_store_errors_total\{store="delivery"\} (\S+)\n',
                                  request(dl_metrics, "GET", "/metrics")[1]).group(1))
    key = frozenset({("job", "deliver"), ("store", "delivery")})
    agreed = wait_until(lambda: (query('keyhook_store_errors_total{job="deliver"}') or {}).get(key) == own(),
                        BOUND, 0.1)
    errors = own()
    check(bool(agreed) and errors >= 5, f"deliver: keyhook_store_errors_total{{store=\"delivery\"}} counts the "
                                        f"failed operations (tried four times a second: {errors:.0f}), in Prometheus as scraped")
    promtool_passes("deliver", dl_metrics)
    check(stop(dl) == 4, "deliver: the worker stops on SIGTERM, exit 4 (deliveries it worked gave up, O1)")

finish()
