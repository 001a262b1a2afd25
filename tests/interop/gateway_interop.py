#!/usr/bin/env python3
"""key_gateway behind Debian's nginx (K11 to K16): nginx runs
examples/key_gateway/nginx.conf unchanged but for its three addresses, asks
key_gateway about every request (auth_request) and passes the allowed ones
to a small upstream. Keys are made by key_admin; the store is checked never
to hold a key key_admin printed.
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


def create(tenant, *extra, valid=(-1, 30)):
    out = json.loads(admin("create", "--tenant", tenant, "--name", f"key {len(printed_keys)}", "--from",
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


# The upstream: counts the requests nginx passes on.
reached = []


class Upstream(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        reached.append((self.command, self.path))
        body = b"upstream\n"
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
valid = create("acme")
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
store_holds_no_printed_key("after key_admin")

gateway = None
gateway_port = None


def start_gateway():
    global gateway, gateway_port
    listen = f"127.0.0.1:{gateway_port or 0}"
    log = open(os.path.join(work, "gateway.log"), "a")
    gateway = subprocess.Popen([KEY_GATEWAY, "--listen", listen, "--store", store, "--routes", routes, "--proxy",
                                "nginx", "--trusted-proxy", "127.0.0.1/32"], env=env, stdout=subprocess.PIPE,
                               stderr=log, text=True)
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


def call(key=None, tenant="acme", method="GET", path="/api/things", headers=None):
    h = dict(headers or {})
    if key is not None:
        h["x-synthetic-key"] = key
    if tenant is not None:
        h["x-tenant-name"] = tenant
    c = http.client.HTTPConnection("127.0.0.1", nginx_port, timeout=BOUND)
    c.request(method, path, headers=h)
    r = c.getresponse()
    body = r.read()
    c.close()
    return r.status, {k.lower(): v for k, v in r.getheaders()}, body


def status(*args, **kwargs):
    return call(*args, **kwargs)[0]


def answers(phase):
    """The answers that stay the same across a reload and a restart."""
    before = len(reached)
    s, h, body = call(valid["key"])
    check((s, body), (200, b"upstream\n"), f"{phase}: a valid key reaches the upstream", "K10")
    check(len(reached), before + 1, f"{phase}: the upstream saw it once")
    check(status(None), 401, f"{phase}: no key header")
    check(status(valid["key"], tenant=None), 401, f"{phase}: no tenant header")
    check(status("00000000-0000-4000-8000-000000000000"), 401, f"{phase}: an unknown key")
    check(status(foreign["key"]), 401, f"{phase}: a key of another tenant", "K10")
    check(status(revoked["key"]), 403, f"{phase}: a revoked key")
    check(status(expired["key"]), 403, f"{phase}: an expired key")
    check(status(future["key"]), 403, f"{phase}: a key not yet active")
    check(status(elsewhere["key"]), 403, f"{phase}: a caller outside the key's ranges", "K12")
    check(status(here["key"]), 200, f"{phase}: a caller inside the key's ranges", "K12")
    check(status(valid["key"], path="/api/reports/daily"), 403, f"{phase}: a family not granted", "K9")
    check(status(valid["key"], method="POST", path="/api/finance/pay"), 403, f"{phase}: write access not granted")
    check(status(finance["key"], method="POST", path="/api/finance/pay"), 200, f"{phase}: write access granted")
    check(status(valid["key"], path="/elsewhere"), 403, f"{phase}: a path no route covers")
    check(status(None, path="/elsewhere"), 401, f"{phase}: no key before any route", "K15")
    # Forged proxy headers from the client change nothing.
    forged = {"X-Real-IP": "10.1.2.3", "X-Forwarded-For": "10.1.2.3", "X-Original-URI": "/api/things",
              "X-Original-Method": "GET", "X-Forwarded-Uri": "/api/things", "X-Forwarded-Method": "GET"}
    check(status(elsewhere["key"], headers=forged), 403, f"{phase}: a forged client address", "K12")
    check(status(valid["key"], method="POST", path="/api/finance/pay", headers=forged), 403,
          f"{phase}: a forged original method and path")
    check(status(valid["key"], path="/api/reports/x", headers=forged), 403, f"{phase}: a forged original path")
    s, h, _ = call(credited["key"])
    check((s, h.get("retry-after")), (429, None), f"{phase}: exhausted credits (no refill: no Retry-After)", "K14")


# First run: spend the credits and the rate.
s, h, _ = call(rated["key"])
check((s, h.get("ratelimit-remaining")), (200, "0"), "the rate-limited key's first call", "K13")
s, h, _ = call(rated["key"])
check(s, 429, "the second call within the period", "K13")
check(h.get("retry-after") is not None and 3590 <= int(h["retry-after"]) <= 3600, True,
      f"Retry-After in whole seconds ({h.get('retry-after')})", "K13")
for left in ("1", "0"):
    s, h, _ = call(credited["key"])
    check((s, h.get("x-credits-remaining")), (200, left), "a call spending a credit", "K14")
answers("first run")

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

check(stop(gateway), 0, "key_gateway stops cleanly")
stop(nginx)
upstream.shutdown()
if failures == 0:
    shutil.rmtree(work)  # kept for a look when a check failed
else:
    print(f"logs and store kept in {work}")
print("all checks passed" if failures == 0 else f"{failures} check(s) failed", flush=True)
sys.exit(1 if failures else 0)
