#!/usr/bin/env python3
"""key_audit --url against fake_platform.py (a paged list call of 250 keys that
checks every request's headers and parameters), and the failure paths of
key_audit --url and webhook_deliver. Every wait is on a condition with a
bound (waits.py); a time limit that a check asserts is far from what a loaded
machine takes and far from what the fault it guards against would take.

    platform_interop.py PATH/TO/key_audit PATH/TO/webhook_deliver"""
import json, os, subprocess, sys, tempfile, threading, time, urllib.request
from http.server import ThreadingHTTPServer, BaseHTTPRequestHandler
from waits import BOUND, stop, wait_until

KEY_AUDIT, DELIVER = sys.argv[1], sys.argv[2]
HERE = os.path.dirname(os.path.abspath(__file__))
TOKEN = "interop-token-0123456789"
NOW = "2026-11-22T12:00:00Z"
failures = 0


def check(ok, what):
    global failures
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    failures += 0 if ok else 1


class Platform:
    """fake_platform.py in a child process, on a free port."""

    def __init__(self, *args):
        self.dir = tempfile.mkdtemp()
        port_file = os.path.join(self.dir, "port")
        self.proc = subprocess.Popen([sys.executable, os.path.join(HERE, "fake_platform.py"), *args, port_file],
                                     stderr=subprocess.PIPE, text=True)
        # The port file appears (renamed into place, whole) once the server listens.
        wait_until(lambda: os.path.exists(port_file) or self.proc.poll() is not None)
        if not os.path.exists(port_file):
            status = stop(self.proc, 0)
            sys.exit(f"fake_platform.py {' '.join(args)} did not start within {BOUND:.0f} s "
                     f"(exit {status}): {self.proc.stderr.read()}")
        self.url = "http://127.0.0.1:" + open(port_file).read()

    def stop(self):
        stop(self.proc)
        return self.proc.stderr.read()


class Ended:
    """What a run that did not end within its bound gives instead of a result."""
    def __init__(self, program):
        self.returncode, self.stdout, self.stderr = None, "", f"{program} still running after {BOUND:.0f} s, killed"


def key_audit(*args, token=TOKEN, stdin=None):
    env = dict(os.environ, KEYHOOK_TOKEN=token) if token else {k: v for k, v in os.environ.items()
                                                               if k != "KEYHOOK_TOKEN"}
    started = time.monotonic()
    try:
        r = subprocess.run([KEY_AUDIT, *args], env=env, input=stdin, capture_output=True, text=True, timeout=BOUND)
    except subprocess.TimeoutExpired:
        r = Ended(KEY_AUDIT)
    return r, time.monotonic() - started


# --- key_audit --url: 250 keys over 3 pages, page 2 answered 503 first -------
p = Platform("--keys", "250", "--fail-page", "2")
r, _ = key_audit("--url", p.url, "--tenant", "acme lending", "--now", NOW, "--format", "json", "--status", "all")
bad_requests = p.stop()
check(r.returncode == 0, f"key_audit --url exits 0 (got {r.returncode}: {r.stderr.strip()})")
check(bad_requests == "", f"every request had the right path, token and parameters ({bad_requests.strip()})")
doc = json.loads(r.stdout) if r.returncode == 0 else {}
check(doc.get("count") == 250 and doc.get("records") == 250 and len(doc.get("keys", [])) == 250,
      "all 250 keys audited (count 250, records 250)")
check(TOKEN not in r.stdout + r.stderr, "the token is never printed")

# The same keys from a file give the same document (file mode, one page).
p = Platform("--keys", "250")
req = urllib.request.Request(p.url + "/acme%20lending/api/v1/key/apikeys?_page=1&_size=250&type=synthetic",
                             headers={"Authorization": "Bearer " + TOKEN})
whole = urllib.request.urlopen(req, timeout=BOUND).read().decode()
r_url, _ = key_audit("--url", p.url, "--tenant", "acme lending", "--page-size", "100", "--now", NOW,
                     "--format", "json", "--status", "all")
r_file, _ = key_audit("--now", NOW, "--format", "json", "--status", "all", "-", stdin=whole)
p.stop()
check(r_url.returncode == 0 and r_url.stdout == r_file.stdout, "--url prints what the same keys give from a file")

# A page that repeats a record of the page before: merged by id.
p = Platform("--keys", "250", "--mode", "overlap")
r, _ = key_audit("--url", p.url, "--tenant", "acme lending", "--now", NOW, "--format", "json", "--status", "all")
p.stop()
check(r.returncode == 0 and json.loads(r.stdout)["records"] == 250, "a record seen on two pages counts once")

# L2: a service whose paging does not advance ends the run (exit 3)
# instead of being asked again forever; a message echoing the token hides it.
p = Platform("--keys", "250", "--mode", "stuck")
r, _ = key_audit("--url", p.url, "--tenant", "acme lending", "--now", NOW, "--format", "json")
p.stop()
check(r.returncode == 3 and "does not advance" in r.stderr, f"[L2] paging that does not advance: exit 3 ({r.stderr.strip()})")
p = Platform("--mode", "echo")
r, _ = key_audit("--url", p.url, "--tenant", "acme lending")
p.stop()
check(r.returncode == 3 and TOKEN[:8] not in r.stdout + r.stderr and "[redacted]" in r.stderr,
      f"[L2] a message echoing the bearer token: the token is not printed ({r.stderr.strip()})")

# B7: exit 0 only when every key counted was audited;
# the pages and counts seen are named; the requests are bounded.
def pages_asked(stderr):
    return stderr.count("fake_platform: page ")


p = Platform("--mode", "inventing")  # count 10^12, one new key a page
r, _ = key_audit("--url", p.url, "--tenant", "acme lending", "--now", NOW)
asked = pages_asked(p.stop())
check(r.returncode == 3 and "count 1000000000000" in r.stderr and "more than the 10000 requests" in r.stderr
      and asked == 1, f"[B7] count 10^12: exit 3 after {asked} request(s) ({r.stderr.strip()})")
p = Platform("--mode", "inventing", "--claim", "20")  # 10 pages of 2 needed, one new key a page
r, _ = key_audit("--url", p.url, "--tenant", "acme lending", "--page-size", "2", "--now", NOW)
asked = pages_asked(p.stop())
check(r.returncode == 3 and "after 12 requests (pages 1 to 12) only 13 of the 20 keys" in r.stderr and asked == 12,
      f"[B7] one new key a page: exit 3 after the 10 pages count needs + 2 ({asked} requests; {r.stderr.strip()})")
p = Platform("--keys", "2", "--mode", "growing")  # count 2 on page 1, 4 on page 2
r, _ = key_audit("--url", p.url, "--tenant", "acme lending", "--page-size", "1", "--now", NOW)
p.stop()
check(r.returncode == 3 and "page 1 said count 2, pageSize 1; page 2 said count 4, pageSize 1" in r.stderr,
      f"[B7] count growing between pages: exit 3, both pages named ({r.stderr.strip()})")
p = Platform("--keys", "4", "--mode", "larger_page")  # asked 1 a page, answered 2
r, _ = key_audit("--url", p.url, "--tenant", "acme lending", "--page-size", "1", "--now", NOW, "--format", "json",
                 "--status", "all")
asked = p.stop()
check(r.returncode == 0 and json.loads(r.stdout)["records"] == 4 and "page 2 size 2" in asked,
      f"[B7] pageSize larger than asked: pages numbered by it, all 4 keys audited ({r.stderr.strip()})")
p = Platform("--keys", "4", "--mode", "shifting_size")  # pageSize 2 when asked 1, 3 when asked 2
r, _ = key_audit("--url", p.url, "--tenant", "acme lending", "--page-size", "1", "--now", NOW)
p.stop()
check(r.returncode == 3 and "page 1 said count 4, pageSize 2; page 2 said count 4, pageSize 3" in r.stderr,
      f"[B7] pageSize changing between pages: exit 3, both pages named ({r.stderr.strip()})")
p = Platform("--keys", "250", "--mode", "overcount")  # count 300, 250 keys there
r, _ = key_audit("--url", p.url, "--tenant", "acme lending", "--now", NOW)
asked = pages_asked(p.stop())
check(r.returncode == 3 and "the pages ended at page 3 (50 keys) but 250 of the 300 keys counted" in r.stderr
      and asked == 3, f"[B7] pages ending before count is covered: exit 3 ({r.stderr.strip()})")
p = Platform("--keys", "200")  # the other side: a count covered exactly by full pages
r, _ = key_audit("--url", p.url, "--tenant", "acme lending", "--now", NOW, "--format", "json", "--status", "all")
p.stop()
check(r.returncode == 0 and json.loads(r.stdout)["records"] == 200, f"[B7] 200 keys on 2 full pages: exit 0")

# Failure paths: exit 3, a clear message, quickly.
p = Platform("--mode", "unauthorized")
r, _ = key_audit("--url", p.url, "--tenant", "acme lending")
p.stop()
check(r.returncode == 3 and '"acme lending"' in r.stderr and "401" in r.stderr, "401: exit 3, the tenant named")
# The retries are counted by the platform (one line each on its standard
# error), and the backoff (0.25 + 0.5 + 1 s) is a lower bound of the time taken.
p = Platform("--mode", "always_503")
r, took = key_audit("--url", p.url, "--tenant", "acme lending")
requests = p.stop().count("fake_platform: answered 503")
check(r.returncode == 3 and "503" in r.stderr and requests == 4 and took >= 1.75,
      f"503 every time: 4 requests 0.25, 0.5 and 1 s apart, then exit 3 ({requests} requests in {took:.1f} s)")
p = Platform("--mode", "not_json")
r, _ = key_audit("--url", p.url, "--tenant", "acme lending")
p.stop()
check(r.returncode == 3 and "syntax" in r.stderr, "an HTML answer: exit 3, a syntax error")
# The platform answers after 60 s: --timeout 0.5 ends the run long before
# (5 s is 10 times the limit, and no loaded machine takes that long to start).
p = Platform("--mode", "slow")
r, took = key_audit("--url", p.url, "--tenant", "acme lending", "--timeout", "0.5")
p.stop()
check(r.returncode == 3 and took < 5, f"no answer in --timeout 0.5: exit 3 ({took:.1f} s; {r.stderr.strip()})")
# Refused before any connection: a connection to this address would wait for
# the connect limit (10 s).
r, took = key_audit("--url", "http://10.255.255.1:9", "--tenant", "acme lending")
check(r.returncode == 3 and "loopback" in r.stderr and took < 5,
      f"plain http to a non-loopback address: refused ({took:.1f} s)")
r, _ = key_audit("--url", "http://127.0.0.1:9", "--tenant", "acme lending", token=None)
check(r.returncode == 2 and "KEYHOOK_TOKEN" in r.stderr, "no KEYHOOK_TOKEN: exit 2")


# --- webhook_deliver failure paths -------------------------------------------
class Hooks(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    hits = {}

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        route = self.path.split("?")[0]
        Hooks.hits[route] = Hooks.hits.get(route, 0) + 1
        if route == "/slow":
            time.sleep(1)
        status = {"/redirect": 302, "/error": 500, "/slow": 200}.get(route, 200)
        self.send_response(status)
        if status == 302:
            self.send_header("Location", "http://127.0.0.1:%d/ok" % self.server.server_address[1])
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *a):
        pass


server = ThreadingHTTPServer(("127.0.0.1", 0), Hooks)
threading.Thread(target=server.serve_forever, daemon=True).start()
port = server.server_address[1]


def deliver(webhooks, *args):
    doc = {"tenant": {"name": "t", "webhooksEnabled": True}, "webhooks": webhooks,
           "event": {"UserAction": "PublishEngine"}}
    started = time.monotonic()
    deliver.summary = None
    try:
        r = subprocess.run([DELIVER, *args, "-"], input=json.dumps(doc), capture_output=True, text=True,
                           timeout=BOUND)
    except subprocess.TimeoutExpired:
        r = Ended(DELIVER)
    # The attempt lines; H10's notice lines are checked in deliver_over_time.py,
    # the summary line (O5), the last, in deliver.summary.
    every = [json.loads(l) for l in r.stdout.splitlines() if l.strip()]
    deliver.summary = every[-1].get("summary") if every else None
    lines = [l for l in every if "deliveryId" in l]
    return r, lines, time.monotonic() - started


hook = lambda name, path: {"name": name, "endpoint": "http://127.0.0.1:%d%s" % (port, path), "saved": True}
r, lines, took = deliver([hook("redirect", "/redirect"), hook("error", "/error")], "--allow-local", "--time-scale", "0")
check(r.returncode == 4, f"[O1] webhook_deliver exits 4 once every delivery ended, some given up ({r.returncode}: {r.stderr.strip()})")
redirect = [l for l in lines if l["webhook"] == "redirect"]
check(len(redirect) == 8 and all(l["status"] == 302 for l in redirect) and Hooks.hits.get("/ok") is None,
      "[B4] [B2] 302: never followed, retried, given up after attempt 8")
error = [l for l in lines if l["webhook"] == "error"]
check(len(error) == 8 and error[-1]["outcome"] == "gave_up" and [l["attempt"] for l in error] == list(range(1, 9)),
      "500 every time: attempts 1 to 8, then gave_up")
check(deliver.summary == {"delivered": 0, "gaveUp": 2, "disabled": 0, "pending": 0},
      f"[O5] [O1] the run's last line is its summary: both gave up ({deliver.summary})")
# /slow answers after 1 s: an attempt that waited for it would print status
# 200, so the statuses, not the clock, show the limit held. The time only
# bounds the run: 8 attempts of 0.2 s take 1.6 s, 15 s leaves a loaded machine room.
r, lines, took = deliver([hook("slow", "/slow")], "--allow-local", "--time-scale", "0", "--timeout", "0.2")
check(len(lines) == 8 and all(l["status"] is None and "timed out" in (l["error"] or "").lower() for l in lines)
      and took < 15, f"no answer within --timeout 0.2: a transport error each attempt ({took:.1f} s)")
r, lines, took = deliver([{"name": "rebind", "endpoint": "https://hooks.example.com/x", "saved": True}],
                         "--time-scale", "0", "--resolve", "hooks.example.com:443:127.0.0.1")
check(len(lines) == 8 and all("loopback" in (l["error"] or "") for l in lines),
      f"[B4] [H1] a host name resolving to a loopback address: refused before connecting ({took:.1f} s)")
r, lines, _ = deliver([hook("local", "/ok")], "--time-scale", "0")
check(r.returncode == 1 and "http" in r.stderr and not lines, "[B4] plain http without --allow-local: exit 1")
r, _, _ = deliver([hook("x", "/ok")], "--time-scale", "-1")
check(r.returncode == 2, "a negative --time-scale: exit 2")
# H4: the tenant's switch off: nothing is sent, and standard error says why.
r = subprocess.run([DELIVER, "--allow-local", "-"], capture_output=True, text=True, timeout=BOUND,
                   input=json.dumps({"tenant": {"name": "t", "webhooksEnabled": False}, "webhooks": [hook("x", "/ok")],
                                     "event": {"UserAction": "PublishEngine"}}))
check(r.returncode == 0 and "webhooksEnabled false" in r.stderr and Hooks.hits.get("/ok") is None
      and r.stdout.strip() == '{"summary":{"delivered":0,"gaveUp":0,"disabled":0,"pending":0}}',
      f"[H4] [O5] webhooksEnabled false: nothing sent, said on stderr, a summary of nothing ({r.stderr.strip()})")
# B6's options: what each needs, said before anything is sent.
for argv, what in ((["--work"], "need --store"), (["--lease", "5", "-"], "need --store"), (["--store", "s.db", "--until-empty"], "goes with --work"),
                   (["--store", "s.db", "--lease", "0"], "--lease"), (["--store", "s.db", "--work", "f.json"],
                                                                     "no input file")):
    r = subprocess.run([DELIVER, *argv], capture_output=True, text=True, timeout=BOUND)
    check(r.returncode == 2 and what in r.stderr, f"[B6] webhook_deliver {' '.join(argv)}: exit 2, says {what!r}")
bad_key = "0123456789abcdefXYZ-not-a-key"
with tempfile.TemporaryDirectory() as store_dir:
    doc = {"tenant": {"name": "t", "webhooksEnabled": False}, "webhooks": [], "event": {"UserAction": "PublishEngine"}}
    r = subprocess.run([DELIVER, "--store", "sqlite:" + os.path.join(store_dir, "s.db"), "-"], input=json.dumps(doc),
                       capture_output=True, text=True, timeout=BOUND,
                       env={**os.environ, "KEYHOOK_DELIVERY_ID_KEY": bad_key})
# Exit 2 as any bad setting; 2 also when this build has no SQLite (then the key is never read).
check(r.returncode == 2 and bad_key not in r.stderr and ("KEYHOOK_DELIVERY_ID_KEY" in r.stderr or
                                                         "needs SQLite" in r.stderr),
      f"[B6] [H12] a bad KEYHOOK_DELIVERY_ID_KEY: exit 2, named, not echoed ({r.returncode}: {r.stderr.strip()})")
r = subprocess.run([DELIVER, "--store", "postgresql://nobody:hunter2-secret@127.0.0.1:9/none", "--work"],
                   capture_output=True, text=True, timeout=BOUND)
# A build without libpq says what --store needs (exit 2); with it, the connection fails (exit 3).
check(((r.returncode == 3 and "cannot connect to the PostgreSQL store" in r.stderr) or
       (r.returncode == 2 and "needs libpq" in r.stderr)) and "hunter2" not in r.stderr,
      f"[B6] a store that cannot be reached: exit 3, the password not shown ({r.returncode})")
server.shutdown()

print("all checks passed" if failures == 0 else f"{failures} check(s) failed")
sys.exit(1 if failures else 0)
