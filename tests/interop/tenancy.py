#!/usr/bin/env python3
"""Two tenants, one webhook name (rules B6 and H10): webhook_deliver --store
keys every row of a webhook (settings, health, throttle, deliveries) by
(tenant, webhook name), so tenant acme's queued delivery reaches acme's
endpoint, signed with acme's secret, after tenant globex enqueued its own
webhook of the same name; and a 410 from globex's endpoint disables globex's
webhook only. Also: every attempt and notice line names the tenant, and a
store of the version 1 layout (tables keyed by webhook name alone) is refused
with a message naming the version found and the one expected.

    tenancy.py PATH/TO/webhook_deliver [--postgresql]

With --postgresql the stores are databases of Debian's PostgreSQL 15 started
here (initdb and postgres in a temporary directory, socket only, as user
postgres when run as root), else SQLite files. Every wait is on a condition
(waits.py), never a fixed sleep."""
import base64, hashlib, hmac, json, os, shutil, sqlite3, subprocess, sys, tempfile, threading
from http.server import ThreadingHTTPServer, BaseHTTPRequestHandler
from waits import BOUND, stop, wait_until

DELIVER = sys.argv[1]
POSTGRESQL = sys.argv[2:] == ["--postgresql"]
PG_BIN = "/usr/lib/postgresql/15/bin"
KIND = "[postgresql] " if POSTGRESQL else "[sqlite] "
failures = 0


def check(ok, what):
    global failures
    print(("ok   " if ok else "FAIL ") + KIND + what, flush=True)
    failures += 0 if ok else 1


class Receiver(BaseHTTPRequestHandler):
    """/gone answers 410, every other path 200. Every request is kept (path, headers, body)."""
    protocol_version = "HTTP/1.1"
    seen = []
    lock = threading.Lock()

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        route = self.path.split("?")[0]
        with Receiver.lock:
            Receiver.seen.append((route, dict((k.lower(), v) for k, v in self.headers.items()), body))
        self.send_response(410 if route == "/gone" else 200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *a):
        pass


server = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
threading.Thread(target=server.serve_forever, daemon=True).start()
port = server.server_address[1]

ACME_KEY, GLOBEX_KEY = bytes(range(1, 33)), bytes(range(201, 233))
secret = lambda k: "whsec_" + base64.b64encode(k).decode()


def doc(tenant, route, key, events):
    hook = {"name": "crm-sync", "endpoint": "http://127.0.0.1:%d/%s" % (port, route), "saved": True,
            "signingSecret": secret(key)}
    return {"tenant": {"name": tenant, "webhooksEnabled": True}, "webhooks": [hook],
            "events": [{"after": after, "event": {"UserAction": "PublishEngine", "EntityId": entity}}
                       for after, entity in events]}


def signed_by(key, headers, body):
    """True when webhook-signature has a v1 entry that verifies under key (Standard Webhooks)."""
    signed = ("%s.%s." % (headers.get("webhook-id"), headers.get("webhook-timestamp"))).encode() + body
    mac = "v1," + base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    return any(hmac.compare_digest(e, mac) for e in headers.get("webhook-signature", "").split(" "))


def lines_of(text):
    """The attempts made (a delivery ended without one, its webhook disabled,
    kept in lines_of.unsent) and the notices."""
    out = [json.loads(l) for l in text.splitlines() if l.strip()]
    lines_of.unsent = [l for l in out if "deliveryId" in l and l["sentAt"] is None]
    return ([l for l in out if "deliveryId" in l and l["sentAt"] is not None],
            [l["operational"] for l in out if "operational" in l])


lines_of.unsent = []


def run(store, document, scale="0.0001"):
    """One enqueue-and-work run to its end: exit status, stderr, attempt lines, notices."""
    try:
        r = subprocess.run([DELIVER, "--allow-local", "--time-scale", scale, "--store", store, "-"],
                           input=json.dumps(document), capture_output=True, text=True, timeout=BOUND * 2)
    except subprocess.TimeoutExpired:
        return None, "still running, killed", [], []
    return (r.returncode, r.stderr, *lines_of(r.stdout))


def enqueue_only(store, document):
    """Enqueues the document's deliveries (due later) and stops the worker once
    they are stored, before any is due: they wait in the store."""
    p = subprocess.Popen([DELIVER, "--allow-local", "--time-scale", "0.0001", "--store", store, "-"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    p.stdin.write(json.dumps(document))
    p.stdin.close()
    err = []
    reader = threading.Thread(target=lambda: err.extend(p.stderr), daemon=True)
    reader.start()
    added = wait_until(lambda: any("added to the store" in l for l in err))
    stop(p)
    reader.join(BOUND)
    return added, "".join(err)


def listed(store):
    r = subprocess.run([DELIVER, "--store", store, "--list"], capture_output=True, text=True, timeout=BOUND)
    return r.returncode, [s for s in (json.loads(l) for l in r.stdout.splitlines() if l.strip()) if "id" in s]


class Stores:
    """Fresh stores, one per scenario: SQLite files, or databases of one
    PostgreSQL server (stop() ends it)."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="keyhook-tenancy-")
        self.server = None
        self.count = 0
        if not POSTGRESQL:
            return
        self.as_pg = []
        if os.geteuid() == 0:
            import pwd
            pw = pwd.getpwnam("postgres")
            os.chown(self.dir, pw.pw_uid, pw.pw_gid)
            self.as_pg = ["runuser", "-u", "postgres", "--"]
        self.data = os.path.join(self.dir, "data")
        subprocess.run([*self.as_pg, PG_BIN + "/initdb", "-D", self.data, "-U", "keyhook", "--auth=trust", "-E",
                        "UTF8", "--no-sync"], check=True, capture_output=True, timeout=BOUND * 4)
        self.port = str(40000 + os.getpid() % 10000)  # names the socket only (no TCP)
        self.server = subprocess.Popen([*self.as_pg, PG_BIN + "/postgres", "-D", self.data, "-k", self.dir, "-p",
                                        self.port, "-c", "listen_addresses=", "-c", "fsync=off"],
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
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

    def sql(self, store, text):
        """Runs SQL on the store directly; the rows as tuples of strings."""
        if self.server:
            r = subprocess.run([PG_BIN + "/psql", "-h", self.dir, "-p", self.port, "-U", "keyhook", "-qAt", "-F", "\t",
                                "-v", "ON_ERROR_STOP=1", "-c", text, store.split("?")[0].rsplit("/", 1)[1]],
                               capture_output=True, text=True, timeout=BOUND, check=True)
            return [tuple(l.split("\t")) for l in r.stdout.splitlines() if l]
        db = sqlite3.connect(store[len("sqlite:"):])
        rows = [tuple(str(v) for v in row) for row in db.execute(text)]
        db.commit()
        db.close()
        return rows

    def stop(self):
        if self.server:
            # Fast shutdown: SIGINT to the postmaster itself (runuser does not pass signals on).
            with open(os.path.join(self.data, "postmaster.pid")) as f:
                os.kill(int(f.readline()), 2)
            stop(self.server)
        shutil.rmtree(self.dir, ignore_errors=True)


stores = Stores()
probe = subprocess.run([DELIVER, "--store", stores.new(), "--list"], capture_output=True, text=True, timeout=BOUND)
if probe.returncode == 2 and "this build was made without" in probe.stderr:
    print("skip: " + probe.stderr.strip())
    stores.stop()
    sys.exit(0)

def scenarios():
    # --- 1. acme's queued delivery, then globex's webhook of the same name ---------------
    # acme enqueues an event for its crm-sync (due in 40,000 s of the store's
    # timeline, 4 s of real time at its scale) and its worker stops;
    # globex enqueues its own crm-sync, pointing elsewhere, and works the store to the end.
    Receiver.seen = []
    store = stores.new()
    added, err = enqueue_only(store, doc("acme", "acme", ACME_KEY, [(40000, "acme-private")]))
    check(added, f"[B6] acme's delivery is stored before its worker stops ({err.strip()})")
    status, err, attempts, notices = run(store, doc("globex", "globex", GLOBEX_KEY, [(0, "globex-own")]))
    check(status == 0 and len(attempts) == 2, f"[B6] globex's run works both deliveries to the end ({status}: {err.strip()})")
    by_route = {}
    for route, headers, body in Receiver.seen:
        by_route.setdefault(route, []).append((headers, json.loads(body), body))
    acme_got, globex_got = by_route.get("/acme", []), by_route.get("/globex", [])
    check(len(acme_got) == 1 and acme_got[0][1]["Tenant"] == "acme" and acme_got[0][1]["EntityId"] == "acme-private",
          f"[B6] acme's endpoint received acme's delivery, and only it ({[b for _, b, _ in acme_got]})")
    check(len(globex_got) == 1 and globex_got[0][1]["Tenant"] == "globex"
          and globex_got[0][1]["EntityId"] == "globex-own",
          f"[B6] globex's endpoint received globex's delivery, and only it ({[b for _, b, _ in globex_got]})")
    check(all(b"acme-private" not in body for route, _, body in Receiver.seen if route != "/acme"),
          "[B6] acme's private entity reached no other endpoint")
    check(len(acme_got) == 1 and signed_by(ACME_KEY, acme_got[0][0], acme_got[0][2])
          and not signed_by(GLOBEX_KEY, acme_got[0][0], acme_got[0][2]),
          "[B6] acme's delivery is signed with acme's secret, not globex's")
    check(len(globex_got) == 1 and signed_by(GLOBEX_KEY, globex_got[0][0], globex_got[0][2])
          and not signed_by(ACME_KEY, globex_got[0][0], globex_got[0][2]),
          "[B6] globex's delivery is signed with globex's secret")
    check(sorted((a.get("tenant"), a["webhook"], a["outcome"]) for a in attempts)
          == [("acme", "crm-sync", "delivered"), ("globex", "crm-sync", "delivered")],
          f"[B6] each attempt line names its tenant and webhook ({[(a.get('tenant'), a['webhook']) for a in attempts]})")
    code, states = listed(store)
    check(code == 0 and sorted((s.get("tenant"), s["webhook"], s["status"]) for s in states)
          == [("acme", "crm-sync", "delivered"), ("globex", "crm-sync", "delivered")],
          f"[B6] --list names each delivery's tenant ({[(s.get('tenant'), s['status']) for s in states]})")

    # --- 2. a 410 from globex's endpoint disables globex's crm-sync only -------------------------
    Receiver.seen = []
    store = stores.new()
    status, err, attempts, notices = run(store, doc("globex", "gone", GLOBEX_KEY, [(0, "globex-1")]))
    check(status == 4 and [(a.get("tenant"), a["status"], a["outcome"]) for a in attempts] == [("globex", 410, "disabled")],
          f"[H10] globex's endpoint answers 410: its delivery ends, disabled ({status}: {err.strip()}; {attempts})")
    disabled = [n for n in notices if n["type"] == "endpoint.disabled"]
    check(len(disabled) == 1 and disabled[0]["data"].get("tenant") == "globex"
          and disabled[0]["data"]["endpointId"] == "crm-sync" and list(disabled[0]["data"])[0] == "tenant",
          f"[H10] endpoint.disabled names the tenant (first in data) and the webhook ({notices})")
    status, err, attempts, notices = run(store, doc("acme", "acme", ACME_KEY, [(0, "acme-1")]))
    check(status == 0 and [(a.get("tenant"), a["status"], a["outcome"]) for a in attempts] == [("acme", 200, "delivered")]
          and not notices,
          f"[B6][H10] acme's crm-sync is not disabled by globex's 410: delivered ({status}: {err.strip()}; {attempts})")
    check([r for r, _, _ in Receiver.seen] == ["/gone", "/acme"], f"[B6] requests: {[r for r, _, _ in Receiver.seen]}")
    status, err, attempts, notices = run(store, doc("globex", "gone", GLOBEX_KEY, [(0, "globex-2")]))
    check(status == 4 and not attempts and [r for r, _, _ in Receiver.seen].count("/gone") == 1,
          f"[H10] globex's crm-sync stays disabled: its next delivery gets no attempt ({status}: {err.strip()}; {attempts})")
    check([(l["tenant"], l["webhook"], l["outcome"]) for l in lines_of.unsent] == [("globex", "crm-sync", "disabled")],
          f"[H10] [O5] and says so in its line ({lines_of.unsent})")
    rows = {(t, n): json.loads(s) for t, n, s in stores.sql(store, "SELECT tenant, name, state FROM keyhook_endpoints")}
    check(rows.get(("globex", "crm-sync"), {}).get("disabled") is True
          and rows.get(("acme", "crm-sync"), {}).get("disabled", False) is False,
          f"[H10] keyhook_endpoints: one row per tenant's crm-sync, globex's disabled, acme's not ({rows})")
    flags = dict(((t, n), d) for t, n, d in stores.sql(store, "SELECT tenant, name, disabled FROM keyhook_webhooks"))
    check(flags == {("acme", "crm-sync"): "0", ("globex", "crm-sync"): "1"},
          f"[B6] keyhook_webhooks: one row per tenant's crm-sync, only globex's disabled ({flags})")
    code, states = listed(store)
    check(code == 0 and sorted((s.get("tenant"), s["status"]) for s in states)
          == [("acme", "delivered"), ("globex", "disabled"), ("globex", "disabled")],
          f"[B6] the store's deliveries: acme's delivered, globex's two disabled ({states})")

    # --- 3. a store of the version 1 layout is refused, and left as it was -----------------------
    store = stores.new()
    stores.sql(store, "CREATE TABLE keyhook_webhooks (name TEXT PRIMARY KEY, settings TEXT NOT NULL, "
                      "disabled INTEGER NOT NULL DEFAULT 0)")
    stores.sql(store, "INSERT INTO keyhook_webhooks (name, settings) VALUES ('crm-sync', '{}')")
    for argv in (["--list"], ["--work", "--until-empty"]):
        r = subprocess.run([DELIVER, "--store", store, *argv], capture_output=True, text=True, timeout=BOUND)
        check(r.returncode == 3 and "the store has schema version 1" in r.stderr
              and "this program needs schema version 3" in r.stderr and not r.stdout,
              f"[B6] {' '.join(argv)} on a version 1 store: exit 3, naming both versions ({r.returncode}: {r.stderr.strip()})")
    tables = stores.sql(store, "SELECT COUNT(*) FROM keyhook_webhooks")
    check(tables == [("1",)], f"[B6] the version 1 store is left as it was ({tables})")


try:
    scenarios()
except Exception as e:  # a failed step counts, and the server is still stopped
    check(False, "a step raised %s: %s" % (type(e).__name__, e))
finally:
    stores.stop()

server.shutdown()
print("all checks passed" if failures == 0 else f"{failures} check(s) failed")
sys.exit(1 if failures else 0)
