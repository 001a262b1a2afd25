#!/usr/bin/env python3
"""Many gateways on one PostgreSQL key store (K17, K18, O2), with real parts:
Debian's PostgreSQL started here (postgres_server.py), three key_gateway
processes on one --store postgresql://..., and nginx balancing across them
with auth_request (examples/key_gateway/nginx.conf unchanged but for its
addresses: the one gateway's upstream becomes three servers). Checked:

  - a key key_admin creates is allowed through every gateway, and through
    nginx (whose calls each gateway's log shows it judged);
  - a deactivation is refused by all three gateways within 1 s of
    key_admin's exit (NOTIFY in the change's transaction);
  - credits spent through several gateways add up in the store, and
    lastUsedAt is written back (key_admin show);
  - PostgreSQL stopped: every gateway refuses every call (503, UNAVAILABLE)
    within the stale period (--stale-for 2) plus 2 s, logging the failure at
    most once a second; started again: calls are allowed again within 10 s;
  - key_admins racing while the gateways run keep K18's invariants: two
    key_admins creating one key at once (under different current peppers,
    so the digests differ and only the in-transaction check can tell),
    exactly one succeeds, in every round; no two rows share an id or a
    stored key; the store reads back whole.

Every wait is on a condition with a deadline (waits.py), never a sleep.

    gateway_postgres.py NGINX KEY_ADMIN KEY_GATEWAY"""
import base64, datetime, json, os, re, shutil, socket, subprocess, sys, tempfile, threading, time, http.client
from waits import BOUND, stop, wait_until
import postgres_server

NGINX, KEY_ADMIN, KEY_GATEWAY = sys.argv[1:4]
HERE = os.path.dirname(os.path.abspath(__file__))
CONF = os.path.join(HERE, "..", "..", "examples", "key_gateway", "nginx.conf")
STALE_FOR = 2.0
started_at = time.monotonic()
failures = 0


def check(ok, what, rule="K17", detail=""):
    global failures
    failures += not ok
    print(("ok   " if ok else "FAIL ") + f"[{rule}] {what}" + ("" if ok else f": {detail}"), flush=True)
    return ok


if not postgres_server.available():
    print("skip: the PostgreSQL server is not installed")
    sys.exit(0)

work = tempfile.mkdtemp(prefix="keyhook-gateway-pg-")
pg = postgres_server.PostgresServer(prefix="keyhook-gateway-pg-db-")
uri = pg.new_database()
p1 = base64.b64encode(os.urandom(32)).decode()
p2 = base64.b64encode(os.urandom(48)).decode()
env = {**os.environ, "KEYHOOK_PEPPERS": f"p2:{p2} p1:{p1}"}
env.pop("PGPASSWORD", None)
printed_keys = []
gateways, ports, logs = [], [], []
nginx = None


def admin(*args, expect=0, peppers=None):
    e = dict(env)
    if peppers:
        e["KEYHOOK_PEPPERS"] = peppers
    p = subprocess.run([KEY_ADMIN, "--store", uri, *args], env=e, capture_output=True, text=True, timeout=BOUND)
    if expect is not None and p.returncode != expect:
        raise SystemExit(f"key_admin {args[0]}: exit {p.returncode}: {p.stderr}")
    return p


def iso(days):
    t = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=days)
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def create(tenant="acme", *extra):
    out = json.loads(admin("create", "--tenant", tenant, "--name", f"key {len(printed_keys)}", "--from", iso(-1),
                           "--until", iso(30), "--group", "user:pf", *extra).stdout)
    printed_keys.append(out["key"])
    return out


def ask(port, key, tenant="acme"):
    """What one gateway answers nginx's subrequest about GET /api/things: (status, code)."""
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=BOUND)
        c.request("GET", "/.key_gateway", headers={"x-synthetic-key": key, "x-tenant-name": tenant,
                                                    "X-Original-Method": "GET", "X-Original-URI": "/api/things",
                                                    "X-Real-IP": "127.0.0.1"})
        r = c.getresponse()
        r.read()
        c.close()
        return r.status, r.getheader("x-keyhook-code")
    except OSError as e:
        return None, str(e)


def through_nginx(key, tenant="acme"):
    c = http.client.HTTPConnection("127.0.0.1", nginx_port, timeout=BOUND)
    c.request("GET", "/api/things", headers={"x-synthetic-key": key, "x-tenant-name": tenant})
    r = c.getresponse()
    r.read()
    c.close()
    return r.status, r.getheader("x-keyhook-code")


def all_answer(key, want):
    return all(ask(port, key) == want for port in ports)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Upstream(threading.Thread):
    """The service behind nginx: 200 to every request it is passed."""

    def __init__(self):
        super().__init__(daemon=True)
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]

    def run(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self.serve, args=(conn,), daemon=True).start()

    @staticmethod
    def serve(conn):
        with conn:
            data = b""
            while True:
                while b"\r\n\r\n" not in data:
                    chunk = conn.recv(4096)
                    if not chunk:
                        return
                    data += chunk
                data = data.split(b"\r\n\r\n", 1)[1]
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nupstream\n")


try:
    routes = os.path.join(work, "routes.json")
    with open(routes, "w") as f:
        json.dump({"routes": [{"method": "*", "prefix": "/api/", "family": "Execute", "access": "read"}],
                   "groups": {"user:pf": {"access": [{"level": "read"}]}}}, f)

    first = create()  # the store's tables are made on first use
    for n in range(3):
        log = open(os.path.join(work, f"gateway{n}.log"), "w")
        logs.append(log.name)
        g = subprocess.Popen([KEY_GATEWAY, "--listen", "127.0.0.1:0", "--store", uri, "--routes", routes, "--proxy",
                              "nginx", "--trusted-proxy", "127.0.0.1/32", "--stale-for", str(STALE_FOR)], env=env,
                             stdout=subprocess.PIPE, stderr=log, text=True)
        gateways.append(g)
        m = re.search(r":(\d+)\s*$", g.stdout.readline())
        if not m:
            raise SystemExit(f"key_gateway {n} did not start (exit {stop(g)}); see {log.name}")
        ports.append(int(m.group(1)))

    upstream = Upstream()
    upstream.start()
    nginx_port = free_port()
    with open(CONF) as f:
        documented = f.read()
    balanced = " ".join(f"server 127.0.0.1:{p};" for p in ports)
    site = (documented.replace("server 127.0.0.1:9000;", balanced)
            .replace("127.0.0.1:8080", f"127.0.0.1:{upstream.port}")
            .replace("127.0.0.1:8000", f"127.0.0.1:{nginx_port}"))
    assert balanced in site and site.count(f"127.0.0.1:{nginx_port}") == 1
    with open(os.path.join(work, "site.conf"), "w") as f:
        f.write(site)
    temp_paths = "".join(f"{name}_temp_path {work}/{name};\n"
                         for name in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
    with open(os.path.join(work, "nginx.conf"), "w") as f:
        f.write(f"daemon off;\nmaster_process off;\npid {work}/nginx.pid;\nerror_log {work}/nginx-error.log;\n"
                f"events {{ worker_connections 256; }}\n"
                f"http {{\naccess_log off;\n{temp_paths}include {work}/site.conf;\n}}\n")
    nginx = subprocess.Popen([NGINX, "-p", work, "-c", os.path.join(work, "nginx.conf"), "-e",
                              os.path.join(work, "nginx-error.log")], stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE)

    def nginx_up():
        try:
            socket.create_connection(("127.0.0.1", nginx_port), timeout=1).close()
            return True
        except OSError:
            return nginx.poll() is not None

    if not wait_until(nginx_up) or nginx.poll() is not None:
        raise SystemExit(f"nginx did not start: {nginx.stderr.read().decode(errors='replace')}")

    # --- A key key_admin creates is allowed through every gateway.
    check(all_answer(first["key"], (200, "VALID")), "a key made before the gateways started: every gateway allows it")
    fresh = create()
    t = time.monotonic()
    check(wait_until(lambda: all_answer(fresh["key"], (200, "VALID")), BOUND), "a key key_admin creates while the "
          "gateways run: every gateway allows it", detail=str([ask(p, fresh["key"]) for p in ports]))
    print(f"     (seen by all three {time.monotonic() - t:.3f} s after key_admin exited)", flush=True)
    answers = [through_nginx(fresh["key"]) for _ in range(9)]
    check(answers == [(200, "VALID")] * 9, "through nginx, balanced over the three: every call allowed", "K16",
          str(answers))

    def judged(path, key_id):
        with open(path, encoding="utf-8", errors="replace") as f:
            return sum(1 for line in f if line.startswith("{") and json.loads(line).get("keyId") == key_id)
    check(wait_until(lambda: all(judged(p, fresh["id"]) >= 2 for p in logs)), "each gateway judged some of nginx's "
          "calls (its log's decision lines, O3)", "K17", str([judged(p, fresh["id"]) for p in logs]))

    # --- Usage written back: credits spent through several gateways add up.
    credited = create("acme", "--credits", "10")
    allowed = set()  # the gateways that allowed (and so spent) one call; each is asked until it does

    def one_call_each():
        for port in ports:
            if port not in allowed and ask(port, credited["key"]) == (200, "VALID"):
                allowed.add(port)
        return len(allowed) == len(ports)
    check(wait_until(one_call_each), "a key with 10 credits: one call allowed by each gateway", "K14")

    def credits_left():
        shown = json.loads(admin("show", "--id", credited["id"], "--format", "json").stdout)
        return shown["usage"]["creditsLeft"], shown["usage"]["lastUsedAt"] is not None
    check(wait_until(lambda: credits_left() == (7, True)), "the store holds 7 credits left and a lastUsedAt: the "
          "three gateways' spending added up, written back off the request path", "K14", str(credits_left()))

    # --- A deactivation reaches every gateway within 1 s of key_admin's exit.
    for n, target in enumerate((fresh, first)):
        command = ("deactivate", "--id", target["id"]) if n == 0 else ("delete", "--id", target["id"], "--confirm")
        admin(*command)
        done = time.monotonic()
        want = (403, "REVOKED") if n == 0 else (401, "NOT_FOUND")
        wait_until(lambda: all_answer(target["key"], want), 5.0, pause=0.01)
        took = time.monotonic() - done
        check(took <= 1.0 and all_answer(target["key"], want), f"{command[0]}: every gateway refuses the key within "
              f"1 s of key_admin's exit ({took:.3f} s)", "K17", str([ask(p, target["key"]) for p in ports]))
    check(through_nginx(fresh["key"]) == (403, "REVOKED"), "and nginx's client gets 403 REVOKED", "O2")

    # --- Two key_admins create one key at once: exactly one succeeds. Their
    # current peppers differ, so their digests do: no unique index can tell.
    both_peppers = (f"p2:{p2} p1:{p1}", f"p1:{p1} p2:{p2}")
    stop_churn = threading.Event()
    churn_errors = []

    def churn():  # another key_admin changing the store meanwhile
        target = create()
        n = 0
        while not stop_churn.is_set():
            p = admin("update", "--id", target["id"], "--name", f"churn {n}", expect=None)
            if p.returncode != 0:
                churn_errors.append(p.stderr)
            n += 1
    churner = threading.Thread(target=churn)
    churner.start()
    outcomes = []
    for round_ in range(5):
        own = "own-key-" + base64.b32encode(os.urandom(20)).decode().lower()
        procs = []
        for peppers in both_peppers:
            e = {**env, "KEYHOOK_PEPPERS": peppers, "OWN_KEY": own}
            procs.append(subprocess.Popen([KEY_ADMIN, "--store", uri, "create", "--tenant", "acme", "--name",
                                           f"race {round_}", "--from", iso(-1), "--until", iso(30), "--group",
                                           "user:pf", "--own-key-env", "OWN_KEY"], env=e, stdout=subprocess.PIPE,
                                          stderr=subprocess.PIPE, text=True))
        results = [(p.wait(timeout=BOUND), p.stderr.read()) for p in procs]
        for p in procs:
            p.stdout.close()
            p.stderr.close()
        codes = sorted(code for code, _ in results)
        outcomes.append(codes)
        refused = [err for code, err in results if code == 1]
        check(codes == [0, 1] and "already stored" in refused[0] and own not in refused[0],
              f"round {round_ + 1}: two key_admins create one key at once: exactly one succeeds, the other is "
              "refused naming no key", "K18", str(results))
    stop_churn.set()
    churner.join()
    check(churn_errors == [], "a third key_admin updating a key meanwhile: every update done", "K18",
          str(churn_errors[:2]))
    rows = pg.sql(uri, "SELECT count(*), count(DISTINCT id), count(DISTINCT stored_key) FROM keyhook_keys")[0]
    check(rows[0] == rows[1] == rows[2], f"no two rows share an id or a stored key ({rows[0]} rows)", "K18", str(rows))
    listed = json.loads(admin("list", "--format", "json").stdout)
    check(len(listed) == int(rows[0]), "the store reads back whole (key_admin list)", "K18", str(len(listed)))
    dump = "\n".join("\t".join(r) for r in pg.sql(uri, "SELECT * FROM keyhook_keys"))
    check(not any(k in dump for k in printed_keys), "the store holds no key key_admin printed", "K11")
    check(all_answer(credited["key"], (200, "VALID")), "the gateways served throughout", "K17")

    # --- PostgreSQL stopped: every gateway fails closed within the stale period plus 2 s.
    alive = create()
    check(wait_until(lambda: all_answer(alive["key"], (200, "VALID"))), "a key allowed by every gateway before the "
          "database stops")
    # The stop starts (fast shutdown: connections cut, new ones refused) and
    # takes its time; the gateways answer from what they hold meanwhile.
    halted = time.monotonic()
    halting = threading.Thread(target=pg.halt)
    halting.start()
    held = [ask(p, alive["key"]) for p in ports]
    if time.monotonic() - halted < 1.0:
        check(held == [(200, "VALID")] * 3, "within the stale period a stale gateway answers from what it holds",
              "K17", str(held))
    halting.join()
    wait_until(lambda: all_answer(alive["key"], (503, "UNAVAILABLE")), STALE_FOR + 10, pause=0.05)
    took = time.monotonic() - halted
    check(took <= STALE_FOR + 2 and all_answer(alive["key"], (503, "UNAVAILABLE")), f"PostgreSQL stopped: every "
          f"gateway refuses with 503 UNAVAILABLE within --stale-for {STALE_FOR:g} s plus 2 s of the stop ({took:.2f} s)")
    check(all(ask(p, "00000000-0000-4000-8000-000000000000") == (503, "UNAVAILABLE") for p in ports),
          "every call: an unknown key too gets 503 (fails closed)", "K17")
    check(through_nginx(alive["key"]) == (503, "UNAVAILABLE"), "nginx's client gets 503 UNAVAILABLE", "O2")
    outage = time.monotonic() - halted

    # --- Started again: allowed again within 10 s.
    check(pg.start(), "PostgreSQL started again on the same data", "K17")
    back = time.monotonic()
    wait_until(lambda: all_answer(alive["key"], (200, "VALID")), 20.0, pause=0.05)
    took = time.monotonic() - back
    check(took <= 10 and all_answer(alive["key"], (200, "VALID")), f"every gateway allows calls again within 10 s "
          f"of the database's return ({took:.2f} s)")
    outage += took
    for path in logs:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = [line for line in f if line.startswith("key_gateway: the store could not be read")]
        check(1 <= len(lines) <= outage + 2, f"{os.path.basename(path)}: the failure logged at most once a second "
              f"({len(lines)} lines in {outage:.1f} s)", "K17")
    again = create()
    check(wait_until(lambda: all_answer(again["key"], (200, "VALID")), BOUND), "a key created after the return "
          "reaches every gateway (each listens on its new connection)")
    for n, g in enumerate(gateways):
        check(stop(g) == 0, f"gateway {n} stops cleanly, its usage written back", "K17")
finally:
    for g in gateways:
        if g.poll() is None:
            stop(g)
    if nginx:
        stop(nginx)
    pg.stop()

for path in logs:
    with open(path, encoding="utf-8", errors="replace") as f:
        check(not any(any(k in line for k in printed_keys) for line in f),
              f"{os.path.basename(path)}: no log line holds a key", "K11")
print(f"took {time.monotonic() - started_at:.1f} s", flush=True)
if failures == 0:
    shutil.rmtree(work, ignore_errors=True)
else:
    print(f"logs kept in {work}")
print("all checks passed" if failures == 0 else f"{failures} check(s) failed", flush=True)
sys.exit(1 if failures else 0)
