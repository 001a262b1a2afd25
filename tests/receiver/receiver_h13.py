#!/usr/bin/env python3
"""webhook_receiver --listen holds under three attacks (rule H13), each a
check that failed on the receiver built on cpp-httplib 0.11:

  slow clients  more than the connection cap and more than cpp-httplib's
                8 threads, trickling header bytes: a probe is still
                answered, each slow client gets 408 (or 503 past the cap)
                and is closed, then a probe gets 200;
  header flood  a flood of header lines is refused 431 at field 101, before
                the flood is read, and the receiver's memory does not follow it;
  framing       what RFC 9112 refuses: 400 (or 411) and close, no smuggled
                second request; pipelined requests answered in order.

The receiver runs with small limits (--request-timeout 1, --max-connections 4)
so the test is short. Every wait is on a condition (waits.py).
    receiver_h13.py WEBHOOK_RECEIVER"""
import os, re, select, socket, subprocess, sys, threading, time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "interop"))
from waits import BOUND, stop, wait_until  # noqa: E402

KEY = "the-receiver-key-1234567890"
CAP = 4
rx = subprocess.Popen([sys.argv[1], "--listen", "127.0.0.1:0", "--request-timeout", "1", "--max-connections",
                       str(CAP), "--threads", "2"], env={**os.environ, "KEYHOOK_RECEIVER_KEY": KEY},
                      stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
listening = re.search(r":(\d+)\s*$", rx.stderr.readline())
if not listening:
    sys.exit(f"webhook_receiver did not start (exit {stop(rx)}): {rx.stderr.read()}")
port = int(listening.group(1))
failures = 0
BODY = b'{"UserAction":"PublishEngine"}'
GOOD = (b"POST /hook HTTP/1.1\r\nHost: x\r\nx-api-key: " + KEY.encode() + b"\r\nContent-Length: " +
        str(len(BODY)).encode() + b"\r\n\r\n" + BODY)


def check(ok, what):
    global failures
    failures += not ok
    print(("ok   " if ok else "FAIL ") + "[H13] " + what, flush=True)


def connect():
    return socket.create_connection(("127.0.0.1", port), timeout=BOUND)


def statuses(data):
    """The status of every answer in `data` (answers are JSON bodies: no status line inside)."""
    return [int(m) for m in re.findall(rb"(?:^|\n)HTTP/1\.1 (\d{3}) ", data)]


def read_to_eof(s):
    """All the receiver sends until it closes (or BOUND passes: None)."""
    data = b""
    deadline = time.monotonic() + BOUND
    while time.monotonic() < deadline:
        try:
            chunk = s.recv(65536)
        except ConnectionResetError:
            return data  # closed after its answer with bytes of ours unread
        except socket.timeout:
            return None
        if not chunk:
            return data
        data += chunk
    return None


def exchange(data):
    """Sends `data` in one write; the statuses of the answers, then whether the
    receiver closed the connection (it does, at the latest at the 1 s deadline)."""
    s = connect()
    try:
        s.sendall(data)
    except OSError:
        pass  # closed before all was sent: the answer is what counts
    got = read_to_eof(s)
    s.close()
    return (statuses(got), True) if got is not None else ([], False)


# --- framing -----------------------------------------------------------------
def head(*fields, body=b"{}"):
    return b"POST /hook HTTP/1.1\r\nHost: x\r\nx-api-key: " + KEY.encode() + b"\r\n" + b"".join(
        f + b"\r\n" for f in fields) + b"\r\n" + body


smuggled = b"GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n"
for fields, want, what in [
        ((b"Transfer-Encoding : chunked", b"Content-Length: 2"), 400, "white space before a colon"),
        ((b"Content-Length: 2", b"Content-Length: 41"), 400, "two different Content-Length values"),
        ((b"Content-Length: 2", b"Content-Length: 2"), 400, "the same Content-Length twice"),
        ((b"Content-Length: 2abc",), 400, "Content-Length: 2abc"),
        ((b"Content-Length: +2",), 400, "Content-Length: +2"),
        ((b"Content-Length: 2, 2",), 400, "Content-Length: 2, 2"),
        ((b"Content-Length: 2", b"a line without a colon"), 400, "a line without a colon"),
        ((b"Content-Length: 2", b"x-note: a", b" folded"), 400, "an obs-fold line"),
        ((b"Content-Length: 2", b"Transfer-Encoding: chunked"), 411, "Transfer-Encoding with Content-Length")]:
    got, closed = exchange(head(*fields) + smuggled)
    check(got == [want] and closed, f"{what}: {want} and close, the rest not read as a request (got {got})")
# The other side: what RFC 9112 allows is accepted.
got, _ = exchange(head(b"content-length:   2  ", b"Connection: close"))
check(got == [200], f"Content-Length in lower case with white space around the value: 200 (got {got})")
# Pipelined: three requests in one write, answered in order (405 does not end
# the connection: the GET has no body to skip).
got, _ = exchange(GOOD + b"GET /hook HTTP/1.1\r\nHost: x\r\n\r\n" + GOOD)
check(got == [200, 405, 200], f"three pipelined requests answered in order (got {got})")

# --- header flood: the header section is limited while it is read -----------
def rss_kib():
    with open(f"/proc/{rx.pid}/status") as f:
        return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))


fields = lambda n: b"".join(b"h%d: v\r\n" % i for i in range(n))
for n, want in [(97, 200), (98, 431)]:  # + Host, x-api-key, Content-Length: 100 and 101 fields
    got, _ = exchange(head(fields(n)[:-2], b"Content-Length: 2"))
    check(got == [want], f"{n + 3} header fields: {want} (got {got})")
base = len(head(b"Content-Length: 2", b"x-pad: ", body=b""))
for size, want in [(65536, 200), (65537, 431)]:
    got, _ = exchange(head(b"Content-Length: 2", b"x-pad: " + b"p" * (size - base)))
    check(got == [want], f"a header section of {size} bytes: {want} (got {got})")
before = rss_kib()
flood = connect()
sent = [0]
FLOOD_LINES = 2_000_000  # 22 MB: cpp-httplib kept every line (227 MB resident)


def send_flood():
    block = fields(10000)
    try:
        flood.sendall(b"POST /hook HTTP/1.1\r\nHost: x\r\n")
        for _ in range(FLOOD_LINES // 10000):
            flood.sendall(block)
            sent[0] += len(block)
    except OSError:
        pass  # closed by the receiver: the point


sender = threading.Thread(target=send_flood, daemon=True)
sender.start()
got = read_to_eof(flood)
sender.join(BOUND)
flood.close()
after = rss_kib()
total = len(fields(10000)) * (FLOOD_LINES // 10000)
check(got is not None and statuses(got) == [431] and not sender.is_alive() and sent[0] < total,
      f"2,000,000 header lines: 431 and closed after {sent[0]:,} of {total:,} bytes "
      f"(got {None if got is None else statuses(got)})")
check(after - before < 16 * 1024, f"resident memory grew {after - before} KiB (< 16 MiB) during the flood")

# --- slow clients do not starve the others ------------------------------------
slow = [connect() for _ in range(max(CAP, 8) + 1)]  # past the cap and past cpp-httplib's 8 threads
for s in slow:
    s.setblocking(False)
answers = {}


def trickle():
    """One header byte to each slow client still waiting; collects answers.
    True once every slow client has an answer and is closed."""
    for i, s in enumerate(slow):
        if i in answers and answers[i][1]:
            continue
        try:
            s.send(b"x")
        except OSError:
            pass  # closed: what it was sent is read below
        while select.select([s], [], [], 0)[0]:
            try:
                chunk = s.recv(65536)
            except OSError:
                chunk = b""
            data, _ = answers.get(i, (b"", False))
            answers[i] = (data + chunk, not chunk)
            if not chunk:
                break
    time.sleep(0.05)  # the trickle's pace: a byte per client every 50 ms or so
    return len(answers) == len(slow) and all(closed for _, closed in answers.values())


for s in slow:
    s.send(b"POST /hook HTTP/1.1\r\n")
# While they trickle, a probe is answered (503: every slot is held).
probe = {}
threading.Thread(target=lambda: probe.update(got=exchange(GOOD)), daemon=True).start()
all_closed = wait_until(lambda: trickle() and "got" in probe)
got = sorted(statuses(d)[0] if statuses(d) else None for d, _ in answers.values())
check("got" in probe and probe["got"][0] in ([503], [200]),
      f"a probe among {len(slow)} slow clients is answered (got {probe.get('got', (None,))[0]})")
check(all_closed and got == [408] * CAP + [503] * (len(slow) - CAP),
      f"{len(slow)} slow clients: {CAP} answered 408 at the deadline, the rest 503, all closed (got {got})")
for s in slow:
    s.close()
# The slots are free again: a probe is accepted.
check(wait_until(lambda: exchange(GOOD)[0] == [200]), "after them, a probe gets 200")

code = stop(rx)
check(code == 0, f"SIGTERM: exit 0 (got {code})")
print("all checks passed" if failures == 0 else f"{failures} check(s) failed")
sys.exit(1 if failures else 0)
