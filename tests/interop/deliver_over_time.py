#!/usr/bin/env python3
"""webhook_deliver over virtual days (H10, H11, B5): timed events, endpoint
health (H10), throttling (H11) and rotating signing keys (B5), against a
loopback receiver in this process. --time-scale compresses every wait, so
six virtual days take a few seconds; times are checked on the run's timeline
(the printed sentAt), never on the wall clock.

    deliver_over_time.py PATH/TO/webhook_deliver [--postgresql]

With --postgresql the --store runs use Debian's PostgreSQL 15 started here
(initdb and postgres in a temporary directory, socket only, as user postgres
when run as root) instead of SQLite files."""
import base64, datetime, hashlib, hmac, json, os, shutil, subprocess, sys, tempfile, threading
from http.server import ThreadingHTTPServer, BaseHTTPRequestHandler
from waits import BOUND, stop, wait_until

DELIVER = sys.argv[1]
POSTGRESQL = sys.argv[2:] == ["--postgresql"]
PG_BIN = "/usr/lib/postgresql/15/bin"
DAY = 86400.0
failures = 0


def check(*args):
    global failures
    ok, what = args[-2], "".join(args[:-2]) + args[-1]
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    failures += 0 if ok else 1


def when(text):
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))


class Receiver(BaseHTTPRequestHandler):
    """/dead answers 500; /blip 200 on every 5th request, else 500; the rest 200.
    The first request to /hold is answered only once a second one has arrived
    (or after BOUND s): a worker that sends it waits inside its attempt until
    another worker sends the next, so two workers on one store both attempt
    whatever the machine's load. Every request is kept (path, headers, body)."""
    protocol_version = "HTTP/1.1"
    seen = []
    lock = threading.Lock()
    second_hold = threading.Event()

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        route = self.path.split("?")[0]
        with Receiver.lock:
            Receiver.seen.append((route, dict(self.headers), body))
            blips = sum(1 for r, _, _ in Receiver.seen if r == "/blip")
            holds = sum(1 for r, _, _ in Receiver.seen if r == "/hold")
        if route == "/hold":
            if holds == 1:
                Receiver.second_hold.wait(BOUND)
            else:
                Receiver.second_hold.set()
        status = 500 if route == "/dead" or (route == "/blip" and blips % 5 != 0) else 200
        self.send_response(status)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *a):
        pass


server = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
threading.Thread(target=server.serve_forever, daemon=True).start()
port = server.server_address[1]


def hook(name, **extra):
    return {"name": name, "endpoint": "http://127.0.0.1:%d/%s" % (port, name), "saved": True, **extra}


def event(after, entity):
    return {"after": after, "event": {"UserAction": "PublishEngine", "EntityId": entity}}


def deliver(webhooks, events, scale, store=()):
    """One run: its exit status, stderr, attempt lines and notices (in order)."""
    Receiver.seen = []
    deliver.unsent, deliver.summary = [], None
    doc = {"tenant": {"name": "t", "webhooksEnabled": True}, "webhooks": webhooks, "events": events}
    try:
        r = subprocess.run([DELIVER, "--allow-local", "--time-scale", str(scale), *store, "-"], input=json.dumps(doc),
                           capture_output=True, text=True, timeout=BOUND * 2)
    except subprocess.TimeoutExpired:
        return None, "still running, killed", [], []
    lines = [json.loads(l) for l in r.stdout.splitlines() if l.strip()]
    # O5: a delivery ended without an attempt (its webhook disabled) has a
    # line too (sentAt null), and the run ends with its summary line.
    deliver.unsent = [l for l in lines if "deliveryId" in l and l["sentAt"] is None]
    deliver.summary = lines[-1].get("summary") if lines else None
    return (r.returncode, r.stderr, [l for l in lines if "deliveryId" in l and l["sentAt"] is not None],
            [l["operational"] for l in lines if "operational" in l])


def health_and_throttle(mode, store=(), throttle_store=()):
    """The H10 and H11 runs, in memory or with stores (mode names the checks).
    With stores, each run has its own: a store keeps one time scale (B6)."""
    # --- H10: an endpoint failing for 6 virtual days ------------------------------
    # Events every 1.5 days to a dead endpoint and to one that fails often but
    # answers 200 now and then. 5e-6: 7.5 virtual days in under 4 s.
    status, err, attempts, notices = deliver([hook("dead"), hook("blip")],
                                             [event(i * 1.5 * DAY, "e%d" % i) for i in range(5)], 0.000005, store)
    check(mode, status == 4, f"[H10] [O1] webhook_deliver exits 4 once every delivery ended, the dead endpoint's "
          f"undelivered ({status}: {err.strip()})")
    dead = [a for a in attempts if a["webhook"] == "dead"]
    disabled = [n for n in notices if n["type"] == "endpoint.disabled"]
    check(mode, len(disabled) == 1 and disabled[0]["data"]["endpointId"] == "dead",
          f"[H10] exactly one endpoint.disabled, for the dead endpoint ({len(disabled)})")
    if dead and len(disabled) == 1:
        start = when(dead[0]["sentAt"])
        n = disabled[0]
        check(mode, when(n["data"]["failSince"]) == start and "msgId" not in n["data"],
              "[H10] endpoint.disabled names the failing period's start (the first attempt), no msgId")
        last = [a for a in dead if a["outcome"] == "disabled"]
        check(mode, len(last) == 1 and last[0] is dead[-1] and when(last[0]["sentAt"]) - start >= datetime.timedelta(days=5)
              and n["data"]["lastAttempt"]["timestamp"] == last[0]["sentAt"]
              and n["data"]["lastAttempt"]["responseStatusCode"] == 500,
              "[H10] the attempt that disabled it came 5 days or more into the period, and is the last one sent")
        check(mode, all(when(a["sentAt"]) - start < datetime.timedelta(days=5) for a in dead[:-1]),
              "[H10] every failed attempt before it came less than 5 days into the period (not disabled then)")
        check(mode, when(n["timestamp"]) >= when(last[0]["sentAt"]), "[H10] the notice is stamped after that attempt")
    ids = {a["deliveryId"] for a in dead}
    check(mode, len(ids) == 4, f"[H10] the event after the disable (day 6) gave the disabled webhook no attempt ({len(ids)} of 5)")
    unsent = [l for l in deliver.unsent if l["webhook"] == "dead"]
    check(mode, len(unsent) >= 1 and all(l["outcome"] == "disabled" and l["status"] is None for l in unsent)
          and len(ids | {l["deliveryId"] for l in unsent}) == 5,
          f"[H10] [O5] the delivery ended by the disabled webhook without an attempt has its line ({unsent})")
    summary = deliver.summary or {}
    check(mode, summary.get("delivered") == 5 and summary.get("gaveUp", 0) + summary.get("disabled", 0) == 5
          and summary.get("pending") == 0,
          f"[O5] the summary: the blip endpoint's 5 delivered, the dead one's 5 given up or disabled ({summary})")
    hits = sum(1 for r, _, _ in Receiver.seen if r == "/dead")
    check(mode, hits == len(dead), f"[H10] no request went to the disabled endpoint unreported ({hits} requests, {len(dead)} lines)")
    check(mode, len(dead) < 5 * 8, "[H10] the dead endpoint was not retried for ever (fewer than 5 deliveries x 8 attempts)")
    failing = [n for n in notices if n["type"] == "message.attempt.failing"]
    fourth = {a["deliveryId"] for a in attempts if a["attempt"] == 4}
    check(mode, {n["data"]["msgId"] for n in failing} == fourth and len(failing) == len(fourth),
          "[H10] message.attempt.failing once for each delivery whose 4th attempt failed, and for no other")
    exhausted = [n for n in notices if n["type"] == "message.attempt.exhausted"]
    gave_up = {a["deliveryId"] for a in attempts if a["outcome"] == "gave_up"}
    check(mode, gave_up and {n["data"]["msgId"] for n in exhausted} == gave_up,
          f"[H10] message.attempt.exhausted for each delivery that gave up ({len(gave_up)})")
    blip = [a for a in attempts if a["webhook"] == "blip"]
    check(mode, len({a["deliveryId"] for a in blip}) == 5 and sum(a["outcome"] == "delivered" for a in blip) == 5,
          "[H10] the endpoint with a success in between is never disabled: its 5 deliveries all delivered")

    # --- H11: a throttle of 2 a second --------------------------------------------
    # 10 events at once to a webhook throttled at 2 a second, and to one without a throttle.
    # With a store the timeline is the wall clock's, scaled (B6): the worker's
    # own time (store transactions, sending) counts, scaled too, so the run
    # is less compressed there, and a gap is 0.5 s plus that time.
    status, err, attempts, notices = deliver([hook("slowed", maxPerSecond=2), hook("free")],
                                             [event(0, "t%d" % i) for i in range(10)], 0.5 if store else 0.01,
                                             throttle_store)
    check(mode, status == 0, f"[H11] exits 0 ({status}: {err.strip()})")
    slowed = [when(a["sentAt"]) for a in attempts if a["webhook"] == "slowed"]
    gaps = [(b - a).total_seconds() for a, b in zip(slowed, slowed[1:])]
    check(mode, len(slowed) == 10 and all(a["attempt"] == 1 and a["outcome"] == "delivered"
                                    for a in attempts if a["webhook"] == "slowed"),
          "[H11] 10 deliveries, each in one attempt: a deferral is neither a failure nor an attempt")
    # A transfer's own time moves the timeline too, so a gap may exceed 0.5 s a
    # little on a loaded machine; never by half a second (that would be 1 a second).
    # With a store the timeline is the real clock's: the throttle decides
    # 0.5 s apart, and each attempt's sentAt is read when it is sent, after its
    # store work, so two sentAt may come closer by that work's jitter (tens of
    # milliseconds under the sanitizers); over the nine gaps the rate holds.
    low = 0.45 if store else 0.5
    check(mode, len(gaps) == 9 and all(low <= g < 1.0 for g in gaps) and sum(gaps) >= 9 * 0.5 - 0.1,
          f"[H11] spaced 0.5 s apart on the run's timeline ({gaps})")
    if not store:
        check(mode, sum(g == 0.5 for g in gaps) >= 5, f"[H11] most gaps exactly 0.5 s, the time K13 gives ({gaps})")
    free = [when(a["sentAt"]) for a in attempts if a["webhook"] == "free"]
    check(mode, len(free) == 10 and (free[-1] - free[0]).total_seconds() < 0.5,
          "[H11] without maxPerSecond the same 10 go out at once (other side)")
    check(mode, not notices, "[H11] no notice: nothing failed")


class Stores:
    """Fresh stores, one per run: SQLite files, or databases of one PostgreSQL
    server (stop() ends it)."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="keyhook-over-time-")
        self.server = None
        self.count = 0
        if not POSTGRESQL:
            return
        as_pg = []
        if os.geteuid() == 0:
            import pwd
            pw = pwd.getpwnam("postgres")
            os.chown(self.dir, pw.pw_uid, pw.pw_gid)
            as_pg = ["runuser", "-u", "postgres", "--"]
        data = os.path.join(self.dir, "data")
        subprocess.run([*as_pg, PG_BIN + "/initdb", "-D", data, "-U", "keyhook", "--auth=trust", "-E", "UTF8",
                        "--no-sync"], check=True, capture_output=True, timeout=BOUND * 4)
        self.port = str(50000 + os.getpid() % 10000)  # names the socket only (no TCP)
        self.server = subprocess.Popen([*as_pg, PG_BIN + "/postgres", "-D", data, "-k", self.dir, "-p", self.port,
                                        "-c", "listen_addresses=", "-c", "fsync=off"],
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.data = data
        ready = lambda: subprocess.run([PG_BIN + "/pg_isready", "-h", self.dir, "-p", self.port],
                                       capture_output=True).returncode == 0
        if not wait_until(ready):
            self.stop()
            sys.exit("postgres did not accept connections")

    def new(self):
        self.count += 1
        name = "s%d" % self.count
        if not self.server:
            return "sqlite:" + os.path.join(self.dir, name + ".db")
        subprocess.run([PG_BIN + "/createdb", "-h", self.dir, "-p", self.port, "-U", "keyhook", name], check=True,
                       capture_output=True, timeout=BOUND)
        return "postgresql://keyhook@/%s?host=%s&port=%s" % (name, self.dir, self.port)

    def endpoint_rows(self, store):
        """keyhook_endpoints as {name: state JSON}."""
        if self.server:
            r = subprocess.run([PG_BIN + "/psql", "-h", self.dir, "-p", self.port, "-U", "keyhook", "-At", "-F", "\t",
                                "-c", "SELECT name, state FROM keyhook_endpoints", store.split("?")[0].rsplit("/", 1)[1]],
                               capture_output=True, text=True, timeout=BOUND)
            return dict(l.split("\t", 1) for l in r.stdout.splitlines() if l)
        import sqlite3
        return dict(sqlite3.connect(store[len("sqlite:"):]).execute("SELECT name, state FROM keyhook_endpoints"))

    def stop(self):
        if self.server:
            # Fast shutdown: SIGINT to the postmaster itself (runuser does not pass signals on).
            with open(os.path.join(self.data, "postmaster.pid")) as f:
                os.kill(int(f.readline()), 2)
            stop(self.server)
        shutil.rmtree(self.dir, ignore_errors=True)


if not POSTGRESQL:
    health_and_throttle("")
stores = Stores()
KIND = "--store postgresql: " if POSTGRESQL else "--store sqlite: "
probe = subprocess.run([DELIVER, "--store", stores.new(), "--list"], capture_output=True, text=True, timeout=BOUND)
no_store = probe.returncode == 2 and "this build was made without" in probe.stderr
if no_store:
    print("skip the --store runs: " + probe.stderr.strip())
else:
    # With a store (rule B6), the health, the throttle state and the disabled
    # flag are the webhook's one row in keyhook_endpoints.
    store = stores.new()
    health_and_throttle(KIND, ("--store", store), ("--store", stores.new()))
    rows = stores.endpoint_rows(store)
    dead_row = json.loads(rows.get("dead", "{}"))
    check(KIND, set(rows) <= {"dead", "blip", "slowed", "free"} and dead_row.get("disabled") is True
          and dead_row.get("failSince") is not None,
          f"[H10] the dead webhook's one row says disabled, with its failing period ({dead_row})")


# --- B5: a rotation set in the input ------------------------------------------
old_key, new_key = bytes(range(1, 33)), bytes(range(101, 133))
secret = lambda k: "whsec_" + base64.b64encode(k).decode()
# The old key expires 1 hour into the run (the run starts within a second of now).
grace_end = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=1)
keys = {"current": [secret(new_key)],
        "oldKeys": [{"key": secret(old_key), "expiresAt": grace_end.strftime("%Y-%m-%dT%H:%M:%S.000Z")}]}


def verifies(key, headers, body):
    """The v1 entries of webhook-signature that verify under key (Standard Webhooks)."""
    signed = ("%s.%s." % (headers["webhook-id"], headers["webhook-timestamp"])).encode() + body
    mac = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    entries = headers.get("webhook-signature", "").split(" ")
    return sum(hmac.compare_digest(e, "v1," + mac) for e in entries), len(entries)


def rotation(mode, store=()):
    """The B5 run: a key set whose old key expires between two events."""
    status, err, attempts, _ = deliver([hook("rotated", signingKeys=keys)], [event(0, "r0"), event(7200, "r1")],
                                       0.0001, store)
    check(mode, status == 0 and len(attempts) == 2, f"[B5] exits 0, two deliveries ({status}: {err.strip()})")
    got = [(dict((k.lower(), v) for k, v in h.items()), b) for r, h, b in Receiver.seen if r == "/rotated"]
    if len(got) == 2:
        (h0, b0), (h1, b1) = got
        check(mode, verifies(old_key, h0, b0) == (1, 2) and verifies(new_key, h0, b0) == (1, 2),
              "[B5] during the grace: two signatures, one under the old key and one under the new")
        check(mode, verifies(new_key, h1, b1) == (1, 1) and verifies(old_key, h1, b1) == (0, 1),
              "[B5] after the old key expired (2 virtual hours later): the new key's signature only")
    else:
        check(mode, False, f"[B5] the receiver got 2 requests ({len(got)})")
    out = json.dumps(attempts)
    check(mode, secret(old_key)[6:20] not in out and secret(new_key)[6:20] not in out, "[B5] no key printed")


if not POSTGRESQL:
    rotation("")
if not no_store:
    rotation(KIND, ("--store", stores.new()))

# --- H10 with two workers on one store ---------------------------------------------
# One enqueues and works, the other joins once the deliveries are stored: the
# dead webhook's one row is shared, so it is disabled and announced once in all.
def two_workers(store):
    Receiver.seen = []
    Receiver.second_hold.clear()
    doc = {"tenant": {"name": "t", "webhooksEnabled": True}, "webhooks": [hook("dead"), hook("blip"), hook("hold")],
           "events": [event(i * 1.5 * DAY, "w%d" % i) for i in range(5)]}
    common = [DELIVER, "--allow-local", "--time-scale", "0.000005", "--store", store]
    first = subprocess.Popen([*common, "-"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
    first.stdin.write(json.dumps(doc))
    first.stdin.close()
    first.stdin = None  # so communicate() does not write to it
    added = first.stderr.readline()  # "N of N deliveries added": stored, so --until-empty finds them
    second = subprocess.Popen([*common, "--work", "--until-empty"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True)
    outs = []
    for p in (first, second):
        try:
            out, err = p.communicate(timeout=BOUND * 2)
        except subprocess.TimeoutExpired:
            stop(p)
            out, err = "", "still running, killed"
        outs.append((p.returncode, out, err))
    check(all(c in (0, 4) for c, _, _ in outs) and any(c == 4 for c, _, _ in outs) and "15 of 15" in added,
          f"[H10] [O1] two workers: both end, 4 for one that saw a delivery end undelivered "
          f"({[(c, e.strip()) for c, _, e in outs]}; {added.strip()})")
    lines = [json.loads(l) for _, out, _ in outs for l in out.splitlines() if l.strip()]
    notices = [l["operational"] for l in lines if "operational" in l]
    disabled = [n for n in notices if n["type"] == "endpoint.disabled"]
    check(len(disabled) == 1 and disabled[0]["data"]["endpointId"] == "dead",
          f"[H10] two workers: one endpoint.disabled in all ({len(disabled)}): one state, not one per worker")
    workers = [sum(1 for l in out.splitlines() if '"attempt"' in l) for _, out, _ in outs]
    check(all(w > 0 for w in workers), f"[H10] two workers: both made attempts ({workers})")
    rows = subprocess.run([DELIVER, "--store", store, "--list"], capture_output=True, text=True, timeout=BOUND)
    states = [s for s in (json.loads(l) for l in rows.stdout.splitlines() if l.strip()) if "id" in s]
    check(len(states) == 15 and all(s["status"] == "delivered" for s in states if s["webhook"] in ("blip", "hold"))
          and all(s["status"] in ("disabled", "gave_up") for s in states if s["webhook"] == "dead")
          and sum(s["status"] == "disabled" for s in states if s["webhook"] == "dead") >= 1,
          "[H10] two workers: every blip and hold delivery delivered; every dead one ended, given up or disabled")


if not no_store:
    two_workers(stores.new())
stores.stop()

# --- the input's errors ---------------------------------------------------------
def refused(webhooks, events, what):
    doc = {"tenant": {"name": "t", "webhooksEnabled": True}, "webhooks": webhooks, "events": events}
    r = subprocess.run([DELIVER, "--allow-local", "-"], input=json.dumps(doc), capture_output=True, text=True,
                       timeout=BOUND)
    check(r.returncode == 1 and what in r.stderr and not r.stdout, f"refused with {what!r} ({r.stderr.strip()})")
    return r


refused([hook("a")], [{"after": -1, "event": {"UserAction": "PublishEngine"}}], "events[0].after")
refused([hook("a")], [], "events: holds no event")
refused([hook("a", maxPerSecond=1000001)], [event(0, "x")], "webhooks[0].maxPerSecond")
bad = {"current": [secret(new_key)], "oldKeys": [{"key": secret(old_key), "expiresAt": "yesterday"}]}
r = refused([hook("a", signingKeys=bad)], [event(0, "x")], "webhooks[0].signingKeys.oldKeys[0].expiresAt")
check(secret(new_key)[6:20] not in r.stderr, "[B5] a bad key set's error shows no key")
refused([hook("a", signingKeys=keys, signingSecret=secret(new_key))], [event(0, "x")], "not both")

server.shutdown()
print("all checks passed" if failures == 0 else f"{failures} check(s) failed")
sys.exit(1 if failures else 0)
