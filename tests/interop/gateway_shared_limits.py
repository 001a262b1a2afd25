#!/usr/bin/env python3
"""Shared limits (K17 with K13 and K14): three key_gateway processes on one
PostgreSQL key store (the default --limits shared there), nginx in front
(examples/key_gateway/nginx.conf, its upstream the three), all of them real
(gateway_fleet.py, postgres_server.py). Clients call the gateways directly,
as nginx's subrequest does, and through nginx. Checked, each on both sides:

  a. credits: 90 concurrent calls on a key with 30 credits, spread over
     nginx and the three gateways: exactly 30 allowed, each with its own
     x-credits-remaining (29 down to 0), the other 60 429 USAGE_EXCEEDED;
     key_admin show then reads 0 credits left;
  b. a rate limit of 20 calls per 10 s (burst 20, T = 0.5 s): a burst of 60
     concurrent calls allows at least 10 and at most 20 + floor(t / T), t
     from the first call sent to the last answer received (three gateways
     each counting alone would allow about 60); clients calling on until 4
     more are allowed, the total stays within the bound over the whole time,
     every refusal 429 RATE_LIMITED with a Retry-After;
  d. PostgreSQL stopped while clients spend a key of 200 credits: once it is
     down every call on the key gets 503 UNAVAILABLE at once, while a key
     without limits is still served from what the gateways hold; started
     again, spending resumes and the clients' allowed calls add up to exactly
     200, the store's count to 0;
  c. one gateway SIGKILLed while nine clients (three a gateway) spend a key
     of 300 credits: the allowed answers the clients saw are at most 300, the
     store's spending is at least that and at most 3 more (the calls in
     flight at the killed gateway: one a client), and the survivors spend
     the rest (0 left);
  e. --limits shared with a file store: exit 2, the message naming --limits;
     --limits local with a file store and --limits shared with PostgreSQL
     start;
  f. a gateway stalled inside its batch's transaction (stopped with the
     key's row locked and written, not committed: the test hook
     KEY_STORE_TEST_STOP_BEFORE_COMMIT) holds the row at most its session's
     1 s idle-in-transaction timeout: the other gateways allow the key's
     calls again within 3 s, the stalled batch is rolled back (the store's
     credits count only the calls allowed elsewhere), and the stalled
     gateway answers none of its calls VALID;
  and every VALID answer names the key (x-key-id), as on one machine.

Every wait is on a condition with a deadline (waits.py), never a sleep. The
whole run takes about 15 s (CTest TIMEOUT 120, meant to stay within 60).

    gateway_shared_limits.py NGINX KEY_ADMIN KEY_GATEWAY"""
import base64
import math
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time

import postgres_server
from gateway_fleet import Caller, Checks, Fleet, ask
from waits import BOUND, exit_status, stop, wait_until

NGINX, KEY_ADMIN, KEY_GATEWAY = sys.argv[1:4]
VALID, UNAVAILABLE = (200, "VALID"), (503, "UNAVAILABLE")
RATE_LIMITED, USAGE_EXCEEDED = (429, "RATE_LIMITED"), (429, "USAGE_EXCEEDED")
RATE, PERIOD = 20, 10  # b: 20 calls per 10 s, burst 20
T = math.ceil(PERIOD * 1_000_000 / RATE) / 1_000_000  # K13's emission interval, whole microseconds rounded up
# The database decides on its wall clock, the span t is read on this
# process's monotonic one: 5 ms more than t covers their rates' difference
# (NTP slews at most 500 ppm) many times over. Three gateways each counting
# alone would be 40 calls over the bound, not one.
CLOCK_SLACK = 0.005
checks = Checks()
check = checks.check


class Hammer:
    """Clients calling one key back to back, each on its own keep-alive
    connection to its target ((port, via nginx)). A client stops at an answer
    in `until`, at a failed call (no answer), or when stopped. Each answer is
    kept as (sent, received, client, Answer), times from time.monotonic()."""

    def __init__(self, key, targets, until=(USAGE_EXCEEDED,)):
        self.key, self.targets, self.until = key, targets, until
        self.answers = []
        self.lock = threading.Lock()
        self.halt = threading.Event()
        self.threads = [threading.Thread(target=self.run, args=(i,), daemon=True) for i in range(len(targets))]
        for t in self.threads:
            t.start()

    def run(self, i):
        caller = Caller(*self.targets[i])
        while not self.halt.is_set():
            sent = time.monotonic()
            a = caller(self.key)
            with self.lock:
                self.answers.append((sent, time.monotonic(), i, a))
            if a.status is None or (a.status, a.code) in self.until:
                break
        caller.close()

    def seen(self):
        with self.lock:
            return list(self.answers)

    def allowed(self, after=None):
        return sum(1 for sent, _, _, a in self.seen() if (a.status, a.code) == VALID and (after is None or sent > after))

    def done(self):
        return not any(t.is_alive() for t in self.threads)

    def stop(self):
        self.halt.set()
        for t in self.threads:
            t.join(BOUND)
        return self.seen()


def burst(key, targets, n):
    """n calls at once, client i on its own connection to targets[i % len]:
    [(sent, received, client, Answer)]."""
    callers = [Caller(*targets[i % len(targets)]) for i in range(n)]
    for c in callers:
        c.connect()
    ready = threading.Barrier(n)
    results = [None] * n

    def one(i):
        ready.wait(BOUND)
        sent = time.monotonic()
        a = callers[i](key)
        results[i] = (sent, time.monotonic(), i, a)
    threads = [threading.Thread(target=one, args=(i,), daemon=True) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(BOUND)
    for c in callers:
        c.close()
    return [r for r in results if r is not None]


def pairs(answers):
    return [(a.status, a.code) for _, _, _, a in answers]


def tally(answers):
    counts = {}
    for p in pairs(answers):
        counts[p] = counts.get(p, 0) + 1
    return counts


if not postgres_server.available():
    print("skip: the PostgreSQL server is not installed")
    sys.exit(0)

work = tempfile.mkdtemp(prefix="keyhook-shared-limits-")
env = {**os.environ, "KEYHOOK_PEPPERS": "p1:" + base64.b64encode(os.urandom(32)).decode()}
env.pop("PGPASSWORD", None)
pg = postgres_server.PostgresServer(prefix="keyhook-shared-limits-db-")
uri = pg.new_database()
fleet = Fleet(KEY_ADMIN, KEY_GATEWAY, uri, env, work)
file_fleet = Fleet(KEY_ADMIN, KEY_GATEWAY, os.path.join(work, "keys.jsonl"), env, work, name="file-gateway")

try:
    # --- e. --limits and the store: shared needs PostgreSQL.
    plain = file_fleet.create()
    p = subprocess.run([KEY_GATEWAY, "--listen", "127.0.0.1:0", "--store", file_fleet.uri, "--routes",
                        file_fleet.routes, "--proxy", "nginx", "--trusted-proxy", "127.0.0.1/32", "--limits", "shared"],
                       env=env, capture_output=True, text=True, timeout=BOUND)
    check(p.returncode == 2 and "--limits" in p.stderr, "--limits shared with a file store: a usage error (exit 2) "
          "naming --limits", "K17", f"exit {p.returncode}: {p.stderr.strip()[:300]}")
    for label, f, extra in (("--limits local with a file store", file_fleet, ["--limits", "local"]),
                            ("--limits shared with a PostgreSQL store", fleet, ["--limits", "shared"])):
        try:
            port = f.start_gateway(extra)
            answer = ask(port, plain["key"]) if f is file_fleet else None
            status = stop(f.gateways[-1])
            check(status == 0 and answer in (None, VALID), f"{label}: the gateway starts, serves and stops", "K17",
                  f"answer {answer}, exit {status}")
        except SystemExit as e:
            check(False, f"{label}: the gateway starts", "K17", str(e))
    # One gateway counting alone beside shared ones breaks their exactness: it says so at start.
    try:
        fleet.start_gateway(["--limits", "local"])
        status = stop(fleet.gateways[-1])
        with open(fleet.logs[-1]) as f:
            logged = f.read()
        check(status == 0 and "warning: --limits local on a shared store" in logged, "--limits local with a "
              "PostgreSQL store: starts, warning that the keys' limits are not exact across gateways", "K17",
              logged[-300:])
    except SystemExit as e:
        check(False, "--limits local with a PostgreSQL store: the gateway starts", "K17", str(e))
    for started in (fleet.gateways, fleet.ports, fleet.logs):
        started.clear()  # the three below start afresh (gateway0.log gets the next lines)

    # --- The keys, made before the gateways start (so each holds every one),
    # then three gateways on the store (the default: --limits shared on
    # postgresql://) and nginx in front: the targets the clients call.
    unlimited = fleet.create()
    credited = fleet.create("acme", "--credits", "30")
    rated = fleet.create("acme", "--rate", f"{RATE}/{PERIOD}")
    restarted_key = fleet.create("acme", "--credits", "200")
    killed_key = fleet.create("acme", "--credits", "300")
    for _ in range(3):
        fleet.start_gateway()
    fleet.start_nginx(NGINX)
    targets = [(fleet.nginx_port, True)] + [(p, False) for p in fleet.ports]
    check(fleet.all_answer(unlimited["key"], VALID), "a key without limits: every gateway allows it")

    # --- a. 90 concurrent calls, 30 credits: exactly 30 allowed.
    answers = burst(credited["key"], targets, 90)
    counts = tally(answers)
    allowed = counts.get(VALID, 0)
    check(len(answers) == 90 and allowed == 30 and counts.get(USAGE_EXCEEDED, 0) == 60, "90 calls at once on a key "
          "with 30 credits, over nginx and three gateways: exactly 30 allowed, 60 429 USAGE_EXCEEDED", "K14",
          str(counts))
    remaining = sorted(int(a.headers.get("x-credits-remaining", -1)) for _, _, _, a in answers
                       if (a.status, a.code) == VALID)
    check(remaining == list(range(30)), "each allowed call's x-credits-remaining is its own, 29 down to 0", "K16",
          str(remaining))
    left = wait_until(lambda: fleet.show(credited["id"])["usage"]["creditsLeft"] == 0, 5.0)
    check(left, "key_admin show: 0 credits left", "K14", str(fleet.show(credited["id"])["usage"]))
    # The gateways' own answers (nginx passes x-key-id to the service, not back to its client).
    ids = [a.headers.get("x-key-id") for _, _, i, a in answers if (a.status, a.code) == VALID and not targets[i % len(
        targets)][1]]
    check(ids and set(ids) == {credited["id"]}, f"every allowed call a gateway answered names the key (x-key-id, "
          f"{len(ids)} answers)", "K16", str(set(ids)))

    # --- b. A rate limit of RATE per PERIOD s: one gateway's bound over all three.
    answers = burst(rated["key"], targets, 3 * RATE)
    counts = tally(answers)
    first_sent = min(a[0] for a in answers)
    t = max(a[1] for a in answers) - first_sent
    bound = RATE + math.floor((t + CLOCK_SLACK) / T)
    allowed = counts.get(VALID, 0)
    check(allowed >= RATE // 2, f"a burst of {3 * RATE} calls at once on a key of {RATE} per {PERIOD} s: at least "
          f"{RATE // 2} allowed ({allowed})", "K13", str(counts))
    check(allowed <= bound, f"and at most burst + floor(t / T) = {bound} (t = {t:.3f} s; three gateways each "
          f"counting alone would allow about {3 * RATE})", "K13", str(counts))
    hammer = Hammer(rated["key"], targets, until=())
    wait_until(lambda: hammer.allowed() >= 4, 10 * T + BOUND / 3)
    later = hammer.stop()
    everything = answers + later
    t = max(a[1] for a in everything) - first_sent
    bound = RATE + math.floor((t + CLOCK_SLACK) / T)
    total = tally(everything).get(VALID, 0)
    check(hammer.allowed() >= 4, f"clients calling on: more calls allowed as time passes ({hammer.allowed()} in "
          f"{max(a[1] for a in later) - min(a[0] for a in later):.2f} s)", "K13", str(tally(later)))
    check(total <= bound, f"over the whole {t:.2f} s: {total} allowed of {len(everything)}, at most burst + "
          f"floor(t / T) = {bound}", "K13", str(tally(everything)))
    refused = [a for _, _, _, a in everything if (a.status, a.code) != VALID]
    check(all((a.status, a.code) == RATE_LIMITED and a.headers.get("retry-after", "").isdigit() for a in refused),
          f"every refusal 429 RATE_LIMITED with a Retry-After ({len(refused)})", "K16",
          str(tally([x for x in everything if (x[3].status, x[3].code) != VALID])))

    # --- d. PostgreSQL stopped and started while clients spend a key of 200 credits.
    CREDITS, spent_key = 200, restarted_key
    hammer = Hammer(spent_key["key"], targets + [(p, False) for p in fleet.ports])
    check(wait_until(lambda: hammer.allowed() >= 50, BOUND), "clients spending a key of 200 credits through nginx "
          "and the three gateways", "K17", str(tally(hammer.seen())))
    halting = time.monotonic()
    pg.halt()
    down = time.monotonic()
    check(wait_until(lambda: hammer.done() or sum(1 for x in hammer.seen() if x[0] > down) >= 20, BOUND) and
          not hammer.done(), "PostgreSQL stopped: the clients' calls answered meanwhile", "K17",
          str(tally(hammer.seen())))
    if time.monotonic() - halting < 3.0:  # well inside the stale period (5 s)
        held = [ask(p, unlimited["key"]) for p in fleet.ports]
        check(held == [VALID] * 3, "a key without limits: served from what each gateway holds meanwhile", "K17",
              str(held))
    restarting = time.monotonic()
    while_down = [x for x in hammer.seen() if x[0] > down and x[1] < restarting]
    slowest = max((x[1] - x[0] for x in while_down), default=0.0)
    check(while_down and all(p == UNAVAILABLE for p in pairs(while_down)) and slowest <= 2.0, f"while it is down "
          f"every call on the limited key gets 503 UNAVAILABLE at once ({len(while_down)} calls, the slowest "
          f"answered in {slowest:.3f} s)", "K17", str(tally(while_down)))
    check(pg.start(), "PostgreSQL started again on the same data", "K17")
    back = time.monotonic()
    wait_until(hammer.done, BOUND)
    seen = hammer.stop()
    total = tally(seen).get(VALID, 0)
    check(hammer.allowed(after=back) > 0, f"spending resumes after the restart ({hammer.allowed(after=back)} allowed)",
          "K17", str(tally([x for x in seen if x[0] > back])))
    check(total == CREDITS, f"the clients' allowed calls add up to exactly the {CREDITS} credits ({total}), never "
          "more", "K14", str(tally(seen)))
    shown = fleet.show(spent_key["id"])["usage"]["creditsLeft"]
    check(shown == 0, "key_admin show: 0 credits left", "K14", str(shown))

    # --- c. One gateway SIGKILLed while clients spend a key of 300 credits.
    # Each gateway's store connection is back once a key made now reaches it
    # (NOTIFY): then a stop can write its usage back.
    fresh = fleet.create()
    check(wait_until(lambda: fleet.all_answer(fresh["key"], VALID), BOUND), "every gateway back on the database "
          "(a key made after the restart reaches each)", "K17")
    CREDITS, spent_key = 300, killed_key
    hammer = Hammer(spent_key["key"], [(p, False) for p in fleet.ports] * 3)
    victim = fleet.gateways[0]
    check(wait_until(lambda: hammer.allowed() >= 100, BOUND), "nine clients spending a key of 300 credits, three "
          "on each gateway", "K17", str(tally(hammer.seen())))
    victim.kill()
    killed = time.monotonic()
    exit_status(victim)
    wait_until(hammer.done, BOUND)
    seen = hammer.stop()
    on_victim = [x for x in seen if x[2] % 3 == 0]  # clients 0, 3 and 6 call gateway 0
    lost_connection = sum(1 for x in on_victim if x[3].status is None)
    check(lost_connection == 3 and any(p == VALID for p in pairs(on_victim)), "the killed gateway had allowed calls, "
          "and each of its three clients lost its connection", "K17", f"{lost_connection}, {tally(on_victim)}")
    total = tally(seen).get(VALID, 0)
    left = fleet.show(spent_key["id"])["usage"]["creditsLeft"]
    spent = CREDITS - left
    check(total <= CREDITS, f"allowed answers the clients saw: {total}, at most the {CREDITS} credits", "K14",
          str(tally(seen)))
    check(total <= spent <= total + 3, f"the store's spending ({spent}) is at least the allowed answers ({total}) and "
          "at most 3 more (the calls in flight at the killed gateway)", "K17", f"{left} left")
    check(hammer.allowed(after=killed) > 0 and left == 0, f"the surviving gateways spent the rest "
          f"({hammer.allowed(after=killed)} allowed after the kill, {left} left)", "K17")
    for n, g in enumerate(fleet.gateways[1:], 1):
        status = stop(g)
        check(status == 0, f"gateway {n} stops cleanly", "K17", f"exit {status}")

    # --- f. A gateway stalled inside its batch's transaction.
    stalled_key = fleet.create("acme", "--credits", "50")
    healthy = fleet.start_gateway()
    stalled_port = fleet.start_gateway(env={"KEY_STORE_TEST_STOP_BEFORE_COMMIT": "1"})
    stalled = fleet.gateways[-1]
    stalled_answers = []
    asker = threading.Thread(target=lambda: stalled_answers.append(ask(stalled_port, stalled_key["key"])),
                             daemon=True)
    asker.start()  # its batch locks and writes the key's row, then the gateway stops itself
    check(wait_until(lambda: open(f"/proc/{stalled.pid}/stat").read().split(") ")[1][0] == "T", BOUND),
          "a gateway stopped inside its batch's transaction (the key's row locked)", "K17")
    asked = time.monotonic()
    first = ask(healthy, stalled_key["key"])
    waited = time.monotonic() - asked
    check(first == VALID and waited < 3.0, f"another gateway allows the key within 3 s ({waited:.2f} s): the stalled "
          "session's transaction ended after 1 s idle", "K17", str(first))
    left = fleet.show(stalled_key["id"])["usage"]["creditsLeft"]
    check(left == 49, f"the stalled batch was rolled back: the store counts only the call allowed elsewhere "
          f"({50 - left} spent)", "K14", f"{left} left")
    stalled.send_signal(signal.SIGCONT)
    asker.join(BOUND)
    check(stalled_answers and stalled_answers[0] != VALID, "the stalled gateway does not answer its rolled-back "
          "call VALID", "K17", str(stalled_answers))
    stop(stalled)
finally:
    fleet.stop_all()
    file_fleet.stop_all()
    pg.stop()

fleet.check_logs_hold_no_key(checks)
checks.finish(work)
