#!/usr/bin/env python3
"""webhook_receiver --listen's request log (rule O3), run as users run it:

  lines     with --log json (the default) each answer is one JSON line on
            standard error, its members in order (time, tenant, keyId,
            method, path, code, latencyMs), tenant and keyId null, code one
            of the result words metrics.hpp counts (receiver_result_names,
            read from the source) and the one the answer stands for; method
            and path null for the server's own refusals (H13); the program's
            other lines plain text, none JSON. With --metrics the counts on
            /metrics (O4) equal the lines, result by result.
  secrets   the receiver's key, its signing key (whole and after whsec_) and
            a request's signatures (whole, each entry, each entry's value),
            put by the client in the path, the query and the headers, are
            found in no line; the query is never logged.
  text      client text (P1): a path over 256 bytes cut to 256, control
            characters, DEL, C1 and bidirectional controls escaped, bytes that
            are not UTF-8 replaced: no raw one reaches standard error.
  none      --log none (any case) writes no request line, the program's own
            lines still.
  store     with --sqlite: a replay store that fails is reported at most once
            a second, a later report counting the repeats, and once it
            answers again a line says so with the count of failed operations;
            every request still has its line (code "unavailable").

Every check prints "ok" or "FAIL" with its rule; the exit status is the number
of failures (capped). Waits are on conditions (tests/interop/waits.py).
    receiver_log.py WEBHOOK_RECEIVER METRICS_HPP [--metrics] [--sqlite]"""
import base64, hashlib, hmac, http.client, json, os, re, shutil, socket, sqlite3, subprocess, sys, tempfile, time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "interop"))
from waits import BOUND, stop, wait_until  # noqa: E402

RECEIVER, METRICS_HPP = sys.argv[1:3]
WITH_METRICS = "--metrics" in sys.argv[3:]
WITH_SQLITE = "--sqlite" in sys.argv[3:]
KEY = "the-receiver-key-a8f3c2d1e0"
SIGNING_KEY = b"receiver-log-signing-key-32bytes"
SECRET = "whsec_" + base64.b64encode(SIGNING_KEY).decode()
BODY = json.dumps({"FolderName": "Loans", "ServiceName": "Pricing", "EntityId": "e-1", "UserAction": "PublishEngine",
                   "AuditType": "ProductEngine",
                   "Data": {"ProductName": "Loans", "EngineName": "Pricing", "FileName": "pricing.xlsx",
                            "ProductId": "e-1", "ServiceVersionId": "v-1"},
                   "Tenant": "acme", "RequestTimeStamp": "2026-03-04T05:06:07.123Z", "RevisionId": None})
MEMBERS = ["time", "tenant", "keyId", "method", "path", "code", "latencyMs"]
with open(METRICS_HPP) as f:
    RESULTS = re.findall(r'"(\w+)"', re.search(r"receiver_result_names\{([^}]*)\}", f.read()).group(1))
failures = 0
work = tempfile.mkdtemp(prefix="keyhook-receiver-log-")


def check(ok, rule, what, detail=""):
    global failures
    failures += not ok
    print(("ok   " if ok else "FAIL ") + f"[{rule}] {what}" + ("" if ok else f": {detail}"), flush=True)
    return ok


class Receiver:
    def __init__(self, name, *extra):
        self.log = os.path.join(work, name + ".log")
        env = {**os.environ, "KEYHOOK_RECEIVER_KEY": KEY, "KEYHOOK_SIGNING_SECRET": SECRET}
        metrics = ["--metrics-listen", "127.0.0.1:0"] if WITH_METRICS else []
        with open(self.log, "w") as log:  # a regular file, as a service manager's would be
            self.proc = subprocess.Popen([RECEIVER, "--listen", "127.0.0.1:0", *metrics, *extra], env=env,
                                         stdout=subprocess.DEVNULL, stderr=log)
        self.port = wait_until(lambda: self.port_of("listening on"))
        self.metrics = self.port_of("metrics on") if WITH_METRICS else None
        if not self.port:
            sys.exit(f"webhook_receiver did not start (exit {stop(self.proc)}): {self.text()}")

    def text(self):
        with open(self.log, "rb") as f:
            return f.read().decode("utf-8", errors="replace")

    def raw(self):
        with open(self.log, "rb") as f:
            return f.read()

    def port_of(self, what):
        m = re.search(rf"^webhook_receiver: {what} 127\.0\.0\.1:(\d+)\n", self.text(), re.M)
        return int(m.group(1)) if m else None

    def lines(self):
        """(request lines as parsed JSON, plain lines, lines that are neither)."""
        requests, plain, odd = [], [], []
        for line in self.text().splitlines():
            if line.startswith("webhook_receiver: "):
                plain.append(line)
                continue
            try:
                entry = json.loads(line)
            except ValueError:
                odd.append(line)
                continue
            (requests if isinstance(entry, dict) else odd).append(entry)
        return requests, plain, odd

    def post(self, path, body=BODY, headers=None):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=BOUND)
        c.request("POST", path, body=body, headers=headers or {})
        r = c.getresponse()
        r.read()
        c.close()
        return r.status

    def send(self, data):
        """Raw bytes; the answer's status (None without one)."""
        s = socket.create_connection(("127.0.0.1", self.port), timeout=BOUND)
        s.sendall(data)
        answer = b""
        while b"\r\n" not in answer:
            chunk = s.recv(4096)
            if not chunk:
                break
            answer += chunk
        s.close()
        return int(answer.split()[1]) if answer.startswith(b"HTTP/") else None

    def counted(self):
        with urllib.request.urlopen(f"http://127.0.0.1:{self.metrics}/metrics", timeout=BOUND) as r:
            text = r.read().decode()
        return {m.group(1): int(float(m.group(2)))
                for m in re.finditer(r'^keyhook_receiver_requests_total\{result="(\w+)"\} (\S+)$', text, re.M)}


def signed(msg_id, body=BODY, key=SIGNING_KEY, ts=None):
    ts = str(int(time.time()) if ts is None else ts)
    mac = base64.b64encode(hmac.new(key, f"{msg_id}.{ts}.{body}".encode(), hashlib.sha256).digest()).decode()
    return {"x-api-key": KEY, "content-type": "application/json", "webhook-id": msg_id, "webhook-timestamp": ts,
            "webhook-signature": "v1," + mac}, mac


# ------------------------------------------------------------------ lines, secrets, text
rx = Receiver("lines")
sent = []  # (code, what) in the order sent: the lines come in that order


def expect(code, what, status, want):
    sent.append(code)
    check(status == want, "O3", f"{what}: answered {want}", status)


headers, mac = signed("msg_1")
expect("accepted", "a signed delivery", rx.post("/hook", headers=headers), 200)
expect("replay", "the same delivery again", rx.post("/hook", headers=headers), 200)
# A stale signature (10 minutes old), its whole header and its value in the path, the signing key too.
stale, stale_mac = signed("msg_2", ts=int(time.time()) - 600)
secret_path = (f"/hook/{SECRET}/{SECRET[6:]}/{stale['webhook-signature']}/{stale_mac}"
               f"?sig={stale_mac}&api_key={KEY}")
expect("bad_signature", "a stale signature, with signatures and the signing key in the path",
       rx.post(secret_path, headers=stale), 401)
# The key in the path and the query, a wrong one in the header: 400 (they differ).
expect("bad_key", "the key in the path and the query, another in x-api-key",
       rx.post(f"/hook/{KEY}/x{KEY}x?api_key={KEY}", headers={**signed("msg_3")[0], "x-api-key": "wrong-key-123456"}),
       400)
expect("bad_key", "no key at all", rx.post(f"/{KEY[:20]}/hook", headers={"content-type": "application/json"}), 401)
expect("bad_body", "a body that is not a notification",
       rx.post("/hook", body="[1, 2]", headers=signed("msg_4", body="[1, 2]")[0]), 400)
expect("method", "a GET, with the key in the path and the query",
       rx.send(f"GET /{KEY}?api_key={KEY} HTTP/1.1\r\nHost: x\r\nx-api-key: {KEY}\r\n\r\n".encode()), 405)
expect("encoding", "a compressed body", rx.post("/hook", headers={**signed("msg_5")[0], "content-encoding": "gzip"}),
       415)
expect("length", "a POST without Content-Length", rx.send(b"POST /hook HTTP/1.1\r\nHost: x\r\n\r\n"), 411)
# Text from the client: control characters as bytes the server lets through (obs-text, DEL is refused in a target),
# a right-to-left override, a C1 control, bytes that are not UTF-8, and a long path.
hostile = b"/h\xe2\x80\xaeook\xc2\x9b31m\xff\xfe"
expect("method", "a path with a bidirectional override, a C1 control and bytes that are not UTF-8",
       rx.send(b"GET " + hostile + b" HTTP/1.1\r\nHost: x\r\n\r\n"), 405)
long_path = "/" + "a" * 254 + "\u00e9" * 10  # byte 256 is inside a character
expect("method", "a path of 275 bytes", rx.send(f"GET {long_path} HTTP/1.1\r\nHost: x\r\n\r\n".encode()), 405)
expect("method", "a method of 300 letters", rx.send(b"PATCH" + b"X" * 295 + b" /hook HTTP/1.1\r\nHost: x\r\n\r\n"), 405)
expect("framing", "two Content-Length fields (the server's refusal)",
       rx.send(b"POST /hook HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\n{}"), 400)
expect("too_large", "101 header fields (the server's refusal)",
       rx.send(b"POST /hook HTTP/1.1\r\nHost: x\r\n" + b"".join(b"h%d: v\r\n" % i for i in range(101)) +
               b"Content-Length: 0\r\n\r\n"), 431)

check(bool(wait_until(lambda: len(rx.lines()[0]) >= len(sent))), "O3", "one line per answer, written while serving",
      f"{len(rx.lines()[0])} lines for {len(sent)} answers")
if WITH_METRICS:
    counted = rx.counted()
    want = {r: sent.count(r) for r in RESULTS}
    check(counted == want, "O3", "/metrics counts each result as many times as the log names it", f"{counted} {want}")
check(stop(rx.proc) == 0, "O3", "the receiver stops cleanly (0)")
lines, plain, odd = rx.lines()
raw = rx.raw()
check(odd == [], "O3", "every line is a request's JSON object or a plain program line", odd)
check(len(lines) == len(sent), "O3", f"exactly one line per answer ({len(sent)})", len(lines))
check(all(list(e) == MEMBERS for e in lines), "O3", "every line has time, tenant, keyId, method, path, code, "
      "latencyMs in that order", [list(e) for e in lines if list(e) != MEMBERS])
check([e.get("code") for e in lines] == sent, "O3", "each line's code is the result word of its answer",
      [e.get("code") for e in lines])
check(set(e.get("code") for e in lines) <= set(RESULTS) and len(RESULTS) == 17, "O3",
      "codes come from the closed set metrics.hpp counts (receiver_result_names)")
check(all(e["tenant"] is None and e["keyId"] is None for e in lines), "O3", "tenant and keyId are null")
check(all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", e["time"]) and
          isinstance(e["latencyMs"], (int, float)) and e["latencyMs"] >= 0 for e in lines), "O3",
      "time in RFC 3339 UTC with milliseconds, latencyMs a number")
server_made = [e for e in lines if e["code"] in ("framing", "too_large")]
check(len(server_made) == 2 and all(e["method"] is None and e["path"] is None for e in server_made), "O3",
      "the server's own refusals: method and path null", server_made)
check(not any(line.lstrip().startswith("{") or '"code"' in line for line in plain), "O3",
      "no program line is JSON or has a code member", plain)
# No secret anywhere in standard error.
secrets = {"the receiver's key": KEY, "the signing key": SECRET, "the signing key after whsec_": SECRET[6:],
           "a signature header": stale["webhook-signature"], "a signature's value": stale_mac}
for what, value in secrets.items():
    check(value.encode() not in raw, "O3", f"{what} is in no line, though the client sent it in the path")
check(b"?" not in b"".join(line for line in raw.splitlines() if line.startswith(b"{")), "O3",
      "no query is logged")
by_code = [e for e in lines if e["code"] == "bad_key"]
check(by_code and by_code[0]["path"] == "/hook/[redacted]/x[redacted]x", "O3",
      "the key in the path is replaced by [redacted]", by_code[:1])
# P1: no raw control, DEL, C1 or bidirectional control reaches standard error, and the cut.
controls = [b for b in raw if b < 0x20 and b != 0x0A] + ([0x7F] if b"\x7f" in raw else [])
check(not controls and b"\xc2\x9b" not in raw and b"\xe2\x80\xae" not in raw and b"\xff" not in raw, "P1",
      "control characters, C1, bidirectional overrides and bytes that are not UTF-8 are escaped", controls)
paths = [e["path"] for e in lines if e["code"] == "method"]
check("\u202e" in paths[1] and "\u009b" in paths[1] and "\ufffd" in paths[1], "P1",
      "escaped, not dropped: the override and the C1 control as \\u escapes, the bad bytes as U+FFFD", paths[1:2])
check(paths[2] == long_path.encode()[:255].decode(), "O3",
      "a path over 256 bytes is cut to 256, never inside a character (here 255)", len(paths[2].encode()))
methods = [e["method"] for e in lines if e["code"] == "method"]
check(methods[3] == "PATCH" + "X" * 251, "O3", "a method over 256 bytes is cut to 256", methods[3:4])

# ------------------------------------------------------------------ --log none
rx = Receiver("none", "--log", "NONE")
check(rx.post("/hook", headers=signed("msg_n")[0]) == 200, "O3", "--log NONE (any case): a delivery is accepted")
check(stop(rx.proc) == 0, "O3", "and the receiver stops cleanly")
lines, plain, odd = rx.lines()
check(lines == [] and odd == [] and any("listening on" in line for line in plain), "O3",
      "--log none writes no request line, the program's own lines still", rx.text())

# ------------------------------------------------------------------ a failing replay store
if WITH_SQLITE:
    store = os.path.join(work, "replay.db")
    rx = Receiver("store", "--store", "sqlite:" + store)
    check(rx.post("/hook", headers=signed("stored_0")[0]) == 200, "O3", "a receiver on SQLite accepts a delivery")
    db = sqlite3.connect(store, timeout=BOUND)
    schema = db.execute("SELECT sql FROM sqlite_master WHERE name = 'keyhook_replay_ids'").fetchone()[0]
    index = db.execute("SELECT sql FROM sqlite_master WHERE name = 'keyhook_replay_ids_expiry'").fetchone()[0]
    db.execute("DROP TABLE keyhook_replay_ids")
    db.commit()

    def reports():
        return [line for line in rx.lines()[1] if "the replay store failed" in line]

    started = time.monotonic()
    unavailable = 0

    def counted_repeat():
        global unavailable
        unavailable += rx.post("/hook", headers=signed(f"stored_x{unavailable}")[0]) == 503
        return any("more since the last report" in line for line in reports())
    check(bool(wait_until(counted_repeat)), "O3", "a failing replay store: a later report counts the repeats")
    elapsed = time.monotonic() - started
    found = reports()
    check(1 <= len(found) <= int(elapsed) + 1 and unavailable > len(found), "O3",
          f"reported at most once a second: {len(found)} reports for {unavailable} failed requests in "
          f"{elapsed:.1f} s", found)
    db.execute(schema)
    db.execute(index)
    db.commit()
    db.close()
    check(rx.post("/hook", headers=signed("stored_y")[0]) == 200, "O3", "the table back: a delivery is accepted")
    check(bool(wait_until(lambda: any(re.search(r"the replay store answers again \(after \d+ failed operations\)", l)
                                      for l in rx.lines()[1]))), "O3",
          "a line says the store answers again, with the count of failed operations")
    check(stop(rx.proc) == 0, "O3", "the receiver stops cleanly")
    lines = rx.lines()[0]
    check([e["code"] for e in lines] == ["accepted"] + ["unavailable"] * unavailable + ["accepted"], "O3",
          f"every request has its line, the failed ones 'unavailable' ({unavailable})",
          [e["code"] for e in lines])

if failures == 0:
    shutil.rmtree(work, ignore_errors=True)
else:
    print(f"kept for a look: {work}")
print("all checks passed" if failures == 0 else f"{failures} check(s) failed", flush=True)
sys.exit(min(failures, 100))
