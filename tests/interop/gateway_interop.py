#!/usr/bin/env python3
"""key_gateway behind Debian's nginx (K11 to K16, O2, O3): nginx runs
examples/key_gateway/nginx.conf unchanged but for its three addresses, asks
key_gateway about every request (auth_request) and passes the allowed ones
to a small upstream that echoes the headers it received. Keys are made by
key_admin; the store is checked never to hold a key key_admin printed.
O2: every code reaches the client with its status, x-keyhook-code and the
gateway's JSON body byte for byte (UNAVAILABLE too: a stale gateway's 503,
and nginx's own when the gateway cannot be reached), and the upstream sees
the key's id, name, tenant and figures as the gateway gave them, whatever
the client sent under those names. O3: the gateway's log holds one JSON
line per decision and no key, also where the client put one in the tenant
header, the path or the query.
    gateway_interop.py NGINX KEY_ADMIN KEY_GATEWAY"""
import base64, datetime, fcntl, hashlib, http.client, http.server, json, os, re, socket
import shutil, subprocess, sys, tempfile, threading, uuid
from waits import BOUND, stop, wait_until

NGINX, KEY_ADMIN, KEY_GATEWAY = sys.argv[1:4]
HERE = os.path.dirname(os.path.abspath(__file__))
CONF = os.path.join(HERE, "..", "..", "examples", "key_gateway", "nginx.conf")
work = tempfile.mkdtemp(prefix="keyhook-gateway-")
store = os.path.join(work, "keys.jsonl")
env = {**os.environ, "KEYHOOK_PEPPERS": "p2:" + base64.b64encode(os.urandom(32)).decode() + " p1:" +
       base64.b64encode(os.urandom(48)).decode()}
failures = 0
printed_keys = []


def check(got, want, what, rule="K16"):
    global failures
    ok = got == want
    failures += not ok
    print(("ok   " if ok else "FAIL ") + f"[{rule}] {what}: {got!r} (expected {want!r})", flush=True)
    return ok


def admin(*args, expect=0):
    p = subprocess.run([KEY_ADMIN, "--store", store, *args], env=env, capture_output=True, text=True)
    if p.returncode != expect:
        sys.exit(f"key_admin {' '.join(args)}: exit {p.returncode}: {p.stderr}")
    return p.stdout


def iso(days):
    t = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=days)
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def create(tenant, *extra, valid=(-1, 30), name=None):
    out = json.loads(admin("create", "--tenant", tenant, "--name", name or f"key {len(printed_keys)}", "--from",
                           iso(valid[0]), "--until", iso(valid[1]), "--group", "user:pf", *extra))
    printed_keys.append(out["key"])
    return out


def store_lines():
    with open(store) as f:
        return [json.loads(line) for line in f if line.strip()]


def store_holds_no_printed_key(when):
    with open(store) as f:
        text = f.read()
    check([k for k in printed_keys if k in text], [], f"the store holds no key key_admin printed ({when})", "K11")


# The upstream: counts the requests nginx passes on, and keeps the headers of each.
reached = []
UPSTREAM_BODY = b"upstream\n"


class Upstream(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        reached.append((self.command, self.path, [(k.lower(), v) for k, v in self.headers.items()]))
        body = UPSTREAM_BODY
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_POST = do_GET

    def log_message(self, *args):
        pass


upstream = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Upstream)
threading.Thread(target=upstream.serve_forever, daemon=True).start()

routes = os.path.join(work, "routes.json")
with open(routes, "w") as f:
    json.dump({"routes": [
        {"method": "*", "prefix": "/api/", "family": "Execute", "access": "read"},
        {"method": "POST", "prefix": "/api/finance/", "family": "Execute", "access": "write", "folder": "Finance"},
        {"method": "GET", "prefix": "/api/reports/", "family": "Reports", "access": "read"}],
        "groups": {"user:pf": {"access": [{"level": "read"}]},
                   "user:finance": {"access": [{"folder": "Finance", "level": "write"}]}}}, f)

# The keys.
valid = create("acme", name="Café \"batch\" #1")
finance = create("acme", "--group", "user:finance")
foreign = create("globex")
revoked = create("acme")
admin("deactivate", "--id", revoked["id"])
expired = create("acme", valid=(-30, -1))
future = create("acme", valid=(30, 60))
elsewhere = create("acme", "--allow", "10.0.0.0/8", "--allow", "2001:db8::/32")
here = create("acme", "--allow", "127.0.0.1")
dropped = create("acme")
deleted = create("acme")
env["OWN_KEY"] = "own-key-" + uuid.uuid4().hex
own = create("acme", "--own-key-env", "OWN_KEY")
check(own["key"], env["OWN_KEY"], "an own key from the environment is the key", "K2")
rated = create("acme", "--rate", "1/3600")
credited = create("acme", "--credits", "2")
figures = create("acme", "--rate", "100/60", "--credits", "10")
store_holds_no_printed_key("after key_admin")

gateway = None
gateway_port = None


def start_gateway():
    global gateway, gateway_port
    listen = f"127.0.0.1:{gateway_port or 0}"
    log = open(os.path.join(work, "gateway.log"), "a")
    gateway = subprocess.Popen([KEY_GATEWAY, "--listen", listen, "--store", store, "--routes", routes, "--proxy",
                                "nginx", "--trusted-proxy", "127.0.0.1/32", "--stale-for", "1"], env=env,
                               stdout=subprocess.PIPE, stderr=log, text=True)
    m = re.search(r":(\d+)\s*$", gateway.stdout.readline())
    if not m:
        sys.exit(f"key_gateway did not start (exit {stop(gateway)}); see {work}/gateway.log")
    gateway_port = int(m.group(1))


start_gateway()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# nginx: the documented file with its addresses replaced, in a prefix of its own.
nginx_port = free_port()
with open(CONF) as f:
    documented = f.read()
with open(os.path.join(HERE, "..", "..", "docs", "embedding.md")) as f:
    check(documented in f.read(), True, "docs/embedding.md quotes examples/key_gateway/nginx.conf as it is")
site = (documented.replace("127.0.0.1:9000", f"127.0.0.1:{gateway_port}")
        .replace("127.0.0.1:8080", f"127.0.0.1:{upstream.server_address[1]}")
        .replace("127.0.0.1:8000", f"127.0.0.1:{nginx_port}"))
assert all(site.count(f"127.0.0.1:{p}") == 1 for p in (gateway_port, nginx_port, upstream.server_address[1]))
with open(os.path.join(work, "site.conf"), "w") as f:
    f.write(site)
temp_paths = "".join(f"{name}_temp_path {work}/{name};\n" for name in ("client_body", "proxy", "fastcgi", "uwsgi",
                                                                        "scgi"))
with open(os.path.join(work, "nginx.conf"), "w") as f:
    f.write(f"daemon off;\nmaster_process off;\npid {work}/nginx.pid;\nerror_log {work}/nginx-error.log;\n"
            f"events {{ worker_connections 64; }}\n"
            f"http {{\naccess_log off;\n{temp_paths}include {work}/site.conf;\n}}\n")
nginx = subprocess.Popen([NGINX, "-p", work, "-c", os.path.join(work, "nginx.conf"), "-e",
                          os.path.join(work, "nginx-error.log")], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def nginx_up():
    try:
        socket.create_connection(("127.0.0.1", nginx_port), timeout=1).close()
        return True
    except OSError:
        return nginx.poll() is not None  # exited: stop waiting


if not wait_until(nginx_up) or nginx.poll() is not None:
    sys.exit(f"nginx did not start: {nginx.stderr.read().decode(errors='replace')}")


def call(key=None, tenant="acme", method="GET", path="/api/things", headers=None, port=None, extra=()):
    h = dict(headers or {})
    if key is not None:
        h["x-synthetic-key"] = key
    if tenant is not None:
        h["x-tenant-name"] = tenant
    c = http.client.HTTPConnection("127.0.0.1", port or nginx_port, timeout=BOUND)
    c.putrequest(method, path, skip_accept_encoding=True)
    for k, v in list(h.items()) + list(extra):
        c.putheader(k, v)
    c.endheaders()
    r = c.getresponse()
    body = r.read()
    c.close()
    return r.status, {k.lower(): v for k, v in r.getheaders()}, body


def direct(key=None, tenant="acme", method="GET", path="/api/things", extra=()):
    """The gateway's own answer to what nginx would ask about this call."""
    return call(key, tenant, "GET", "/.key_gateway", port=gateway_port, extra=extra,
                headers={"X-Original-Method": method, "X-Original-URI": path, "X-Real-IP": "127.0.0.1"})


STATUS_OF = {"VALID": 200, "NOT_FOUND": 401, "REVOKED": 403, "EXPIRED": 403, "NOT_YET_ACTIVE": 403,
             "ADDRESS_NOT_ALLOWED": 403, "FORBIDDEN": 403, "RATE_LIMITED": 429, "USAGE_EXCEEDED": 429,
             "UNAVAILABLE": 503}
codes_seen = set()


def coded(code, what, key=None, **kwargs):
    """The call through nginx gets `code`: its status, one x-keyhook-code, and
    (but for VALID, whose body is the service's) the gateway's JSON body byte
    for byte. Returns the answer."""
    s, h, body = call(key, **kwargs)
    want_body = UPSTREAM_BODY
    if code != "VALID":
        ds, dh, dbody = direct(key, kwargs.get("tenant", "acme"), kwargs.get("method", "GET"),
                               kwargs.get("path", "/api/things"), kwargs.get("extra", ()))
        check((ds, dh.get("x-keyhook-code")), (STATUS_OF[code], code), f"{what}: the gateway answers {code}", "O2")
        want_body = dbody
    ok = check((s, h.get("x-keyhook-code"), body), (STATUS_OF[code], code, want_body),
               f"{what}: the client gets {STATUS_OF[code]}, x-keyhook-code {code} and the gateway's body", "O2")
    if ok:
        codes_seen.add(code)
    return s, h, body


def status(*args, **kwargs):
    return call(*args, **kwargs)[0]


def answers(phase):
    """The answers that stay the same across a reload and a restart."""
    before = len(reached)
    s, h, body = coded("VALID", f"{phase}: a valid key", valid["key"])
    check((s, body), (200, b"upstream\n"), f"{phase}: a valid key reaches the upstream", "K10")
    check(len(reached), before + 1, f"{phase}: the upstream saw it once")
    coded("NOT_FOUND", f"{phase}: no key header")
    coded("NOT_FOUND", f"{phase}: no tenant header", valid["key"], tenant=None)
    coded("NOT_FOUND", f"{phase}: an unknown key", "00000000-0000-4000-8000-000000000000")
    coded("NOT_FOUND", f"{phase}: a key of another tenant", foreign["key"])
    coded("NOT_FOUND", f"{phase}: the key header twice, with different values", valid["key"],
          extra=[("x-synthetic-key", foreign["key"])])
    coded("REVOKED", f"{phase}: a revoked key", revoked["key"])
    coded("EXPIRED", f"{phase}: an expired key", expired["key"])
    coded("NOT_YET_ACTIVE", f"{phase}: a key not yet active", future["key"])
    coded("ADDRESS_NOT_ALLOWED", f"{phase}: a caller outside the key's ranges", elsewhere["key"])
    coded("VALID", f"{phase}: a caller inside the key's ranges", here["key"])
    coded("FORBIDDEN", f"{phase}: a family not granted", valid["key"], path="/api/reports/daily")
    coded("FORBIDDEN", f"{phase}: write access not granted", valid["key"], method="POST", path="/api/finance/pay")
    coded("VALID", f"{phase}: write access granted", finance["key"], method="POST", path="/api/finance/pay")
    coded("FORBIDDEN", f"{phase}: a path no route covers", valid["key"], path="/elsewhere")
    coded("NOT_FOUND", f"{phase}: no key before any route", None, path="/elsewhere")
    # Forged proxy headers from the client change nothing.
    forged = {"X-Real-IP": "10.1.2.3", "X-Forwarded-For": "10.1.2.3", "X-Original-URI": "/api/things",
              "X-Original-Method": "GET", "X-Forwarded-Uri": "/api/things", "X-Forwarded-Method": "GET"}
    check(status(elsewhere["key"], headers=forged), 403, f"{phase}: a forged client address", "K12")
    check(status(valid["key"], method="POST", path="/api/finance/pay", headers=forged), 403,
          f"{phase}: a forged original method and path")
    check(status(valid["key"], path="/api/reports/x", headers=forged), 403, f"{phase}: a forged original path")
    s, h, _ = coded("USAGE_EXCEEDED", f"{phase}: exhausted credits", credited["key"])
    check((s, h.get("retry-after")), (429, None), f"{phase}: exhausted credits (no refill: no Retry-After)", "K14")


# First run: spend the credits and the rate.
s, h, _ = call(rated["key"])
check((s, h.get("ratelimit-remaining")), (200, "0"), "the rate-limited key's first call", "K13")
s, h, _ = coded("RATE_LIMITED", "the second call within the period", rated["key"])
check(s, 429, "the second call within the period", "K13")
check(h.get("retry-after") is not None and 3590 <= int(h["retry-after"]) <= 3600, True,
      f"Retry-After in whole seconds ({h.get('retry-after')})", "K13")
for left in ("1", "0"):
    s, h, _ = call(credited["key"])
    check((s, h.get("x-credits-remaining")), (200, left), "a call spending a credit", "K14")
answers("first run")

# O2: who called, for the service. The client sends a forged value under each
# name (one twice, in another case); the upstream sees the gateway's alone.
FORGED = [("x-key-id", "forged-id"), ("X-Key-Name", "forged name"), ("x-tenant", "forged-tenant"),
          ("X-Credits-Remaining", "999"), ("ratelimit-remaining", "999"), ("RateLimit-Reset", "999"),
          ("X-KEY-ID", "second-forged-id")]
IDENTITY = ("x-key-id", "x-key-name", "x-tenant", "x-credits-remaining", "ratelimit-remaining", "ratelimit-reset")


def upstream_saw(key):
    """The identity headers the upstream received for one allowed call, and the client's answer headers."""
    before = len(reached)
    s, h, _ = call(key, extra=FORGED)
    if s != 200 or len(reached) != before + 1:
        return {"status": s}, h
    seen = {}
    for k, v in reached[-1][2]:
        if k in IDENTITY:
            seen.setdefault(k, []).append(v)
    return seen, h


seen, _ = upstream_saw(valid["key"])
check(seen, {"x-key-id": [valid["id"]], "x-key-name": ["Caf%C3%A9%20%22batch%22%20%231"], "x-tenant": ["acme"]},
      "a key without credits or rate limit: the upstream sees its id, name (percent-encoded) and tenant, no forged "
      "value and no figures", "O2")
seen, h = upstream_saw(figures["key"])
check((seen.get("x-key-id"), seen.get("x-tenant"), seen.get("x-credits-remaining"), seen.get("ratelimit-remaining")),
      ([figures["id"]], ["acme"], ["9"], ["99"]),
      "a key with credits and a rate limit: the upstream sees the gateway's figures, not the forged ones", "O2")
check((seen.get("ratelimit-reset"), h.get("ratelimit-reset"), h.get("x-credits-remaining")), ([h.get("ratelimit-reset")],
      "1", "9"), "and the client gets the same figures (RateLimit-Reset: 0.6 s, rounded up)", "O2")
before = len(reached)
coded("NOT_FOUND", "forged identity headers with an unknown key", "00000000-0000-4000-8000-000000000000",
      extra=FORGED)
check(len(reached), before, "and the upstream sees nothing", "O2")

# SIGHUP: the store is read again; rate states stay in memory.
log_path = os.path.join(work, "gateway.log")
reads = open(log_path).read().count("store read")
gateway.send_signal(1)
wait_until(lambda: open(log_path).read().count("store read") > reads)
check(open(log_path).read().count("store read") > reads, True, "SIGHUP reads the store again")
answers("after SIGHUP")
check(status(rated["key"]), 429, "after SIGHUP: the rate state is kept", "K13")

# A change made by key_admin is seen within a second, without a signal.
check(status(dropped["key"]), 200, "a key used before key_admin deactivates it")
admin("deactivate", "--id", dropped["id"])
check(wait_until(lambda: status(dropped["key"]) == 403), True, "a key deactivated while the gateway runs is refused")
check(status(dropped["key"]), 403, "and stays refused (the gateway's write-back does not undo it)")

# key_admin's other changes, seen while the gateway runs.
check(status(own["key"]), 200, "an own key authorizes")
check(status(deleted["key"]), 200, "a key used before key_admin deletes it")
admin("delete", "--id", deleted["id"], expect=2)  # O1: a usage error naming --confirm
check(status(deleted["key"]), 200, "delete without --confirm changes nothing", "K8")
admin("delete", "--id", deleted["id"], "--confirm")
check(wait_until(lambda: status(deleted["key"]) == 401), True, "a deleted key is unknown", "K8")
rotated = json.loads(admin("rotate", "--id", valid["id"]))
printed_keys.append(rotated["key"])
check(wait_until(lambda: status(rotated["key"]) == 200), True, "a rotated key's successor authorizes", "K7")
check(status(valid["key"]), 200, "and the old key still does", "K7")
admin("update", "--id", credited["id"], "--credits", "1")
check(wait_until(lambda: status(credited["key"]) == 200), True, "credits key_admin sets win over the gateway's", "K14")
check(status(credited["key"]), 429, "and are spent", "K14")

# A restart: credits were written back on shutdown; rate states start afresh.
check(stop(gateway), 0, "SIGTERM stops key_gateway cleanly")
by_id = {line["id"]: line for line in store_lines()}
check(by_id[credited["id"]]["usage"]["creditsRemaining"], 0, "the spent credits are in the store", "K14")
check(by_id[valid["id"]]["lastUsedAt"] is not None, True, "lastUsedAt is in the store", "K15")
check(by_id[dropped["id"]]["status"], "Revoked", "the deactivation survived the write-back")
check(deleted["id"] in by_id, False, "the deletion survived the write-back", "K8")
start_gateway()
answers("after a restart")
check(status(rated["key"]), 200, "after a restart: the rate state starts afresh (kept in memory only)", "K13")

# A legacy entry (plain SHA-256, as another store kept it), written by the test
# under the store's lock: it authorizes and is rewritten under the current pepper.
for form in ("hex", "base64"):
    legacy_key = "legacy-key-" + uuid.uuid4().hex
    legacy_id = str(uuid.uuid4())
    printed_keys.append(legacy_key)
    digest = hashlib.sha256(legacy_key.encode()).digest()
    stored = "sha256." + (digest.hex() if form == "hex" else base64.b64encode(digest).decode())
    line = {"id": legacy_id, "name": "migrated key", "status": "Active", "activeFrom": iso(-1),
            "expireAt": iso(30), "groups": ["user:pf"], "tenant": "acme", "storedKey": stored}
    with open(store + ".lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        kept = [json.dumps(entry) for entry in store_lines() if entry["id"] != legacy_id]
        with open(store + ".new", "w") as f:
            f.write("\n".join(kept + [json.dumps(line)]) + "\n")
        os.replace(store + ".new", store)
    check(wait_until(lambda: status(legacy_key) == 200), True, f"a legacy sha256 entry ({form}) authorizes", "K11")

    def rewritten():
        status(legacy_key)  # the rewrite follows a use
        entry = {e["id"]: e for e in store_lines()}.get(legacy_id, {})
        return entry.get("storedKey", "").startswith("kh1.p2.")
    check(wait_until(rewritten), True, f"and is rewritten as kh1 under the current pepper ({form})", "K11")
    check(wait_until(lambda: status(legacy_key) == 200), True, f"the rewritten entry authorizes ({form})", "K11")
store_holds_no_printed_key("at the end")

# O3: a real key in the tenant header, the path and the query is in no log line.
other = here["key"]
coded("NOT_FOUND", "a key in the tenant header, the path and the query", valid["key"], tenant=other,
      path=f"/api/{valid['key']}/x?key={other}&again={valid['key']}")

# O2, K17: a store that cannot be read makes the gateway stale (--stale-for 1):
# its 503 reaches the client as UNAVAILABLE, with Retry-After.
good = open(store, "rb").read()


def put_store(text):
    with open(store + ".lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        fd = os.open(store + ".new", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(text)
        os.replace(store + ".new", store)


put_store(b"not a stored key\n")
check(wait_until(lambda: status(valid["key"]) == 503), True, "a store that cannot be read: the gateway goes stale", "K17")
s, h, _ = coded("UNAVAILABLE", "a stale gateway", valid["key"])
check(h.get("retry-after"), "1", "UNAVAILABLE with Retry-After: 1", "O2")
put_store(good)
check(wait_until(lambda: status(valid["key"]) == 200), True, "the store put back: calls are allowed again", "K17")

check(stop(gateway), 0, "key_gateway stops cleanly")

# O2: the gateway cannot be reached: nginx fails closed with UNAVAILABLE itself.
s, h, body = call(valid["key"])
check((s, h.get("x-keyhook-code"), json.loads(body) if body.startswith(b"{") else body),
      (503, "UNAVAILABLE", {"code": "UNAVAILABLE", "message": "the key gateway cannot be reached; retry later"}),
      "the gateway stopped: nginx answers 503 UNAVAILABLE", "O2")
stop(nginx)
check(sorted(codes_seen), sorted(STATUS_OF), "every code reached the client through nginx", "O2")

# O3: the log. Each line is the program's own (plain text) or one decision's
# JSON line; no line holds a key key_admin printed.
MEMBERS = ["time", "tenant", "keyId", "method", "path", "code", "latencyMs"]
with open(os.path.join(work, "gateway.log"), encoding="utf-8", errors="replace") as f:
    log_lines = f.read().splitlines()
decisions, odd = [], []
for line in log_lines:
    if line.startswith("key_gateway: "):
        continue
    try:
        entry = json.loads(line)
    except ValueError:
        odd.append(line)
        continue
    members = [m for m in entry if m != "tenantLength"]
    if members != MEMBERS or entry["code"] not in STATUS_OF:
        odd.append(line)
    decisions.append(entry)
check(odd, [], "every log line is plain text or a decision's JSON line with its members in order", "O3")
check(len(decisions) > 50, True, f"one JSON line per decision ({len(decisions)})", "O3")
check([line for line in log_lines if any(k in line for k in printed_keys)], [], "no log line holds a key", "O3")
check([d for d in decisions if d["code"] == "NOT_FOUND" and d["keyId"] is not None], [],
      "no NOT_FOUND line names a key id (a key of another tenant looks unknown)", "O3")
check(any(d["code"] == "VALID" and d["keyId"] == valid["id"] and d["tenant"] == "acme" for d in decisions), True,
      "a VALID line names the key's id and its tenant", "O3")
check(any(d["tenant"] is None and d.get("tenantLength") == len(other) and
          d["path"] == "/api/[redacted]/x" and d["code"] == "NOT_FOUND" for d in decisions), True,
      "a tenant the store does not know is logged as null with its length; the presented key is redacted from the "
      "path and the query is not logged", "O3")
upstream.shutdown()
if failures == 0:
    shutil.rmtree(work)  # kept for a look when a check failed
else:
    print(f"logs and store kept in {work}")
print("all checks passed" if failures == 0 else f"{failures} check(s) failed", flush=True)
sys.exit(1 if failures else 0)
