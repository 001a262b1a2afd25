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
import base64, json, os, subprocess, sys, tempfile, threading, time
from waits import BOUND, stop, wait_until
import postgres_server
from gateway_fleet import Checks, Fleet, ask, iso

NGINX, KEY_ADMIN, KEY_GATEWAY = sys.argv[1:4]
STALE_FOR = 2.0
checks = Checks()
check = checks.check

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
fleet = Fleet(KEY_ADMIN, KEY_GATEWAY, uri, env, work)
admin, create, all_answer = fleet.admin, fleet.create, fleet.all_answer
ports, logs, printed_keys = fleet.ports, fleet.logs, fleet.printed_keys


def through_nginx(key, tenant="acme"):
    return ask(fleet.nginx_port, key, tenant, via_nginx=True)


try:
    first = create()  # the store's tables are made on first use
    for _ in range(3):
        fleet.start_gateway(["--stale-for", str(STALE_FOR)])
    fleet.start_nginx(NGINX)

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
    for n, g in enumerate(fleet.gateways):
        check(stop(g) == 0, f"gateway {n} stops cleanly, its usage written back", "K17")
finally:
    fleet.stop_all()
    pg.stop()

fleet.check_logs_hold_no_key(checks)
checks.finish(work)
