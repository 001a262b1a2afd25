#!/usr/bin/env python3
"""webhook_receiver --listen refuses, before reading a byte of the body, what it
cannot read within its size limit (H13): a compressed body (415), a
chunked or unsized body (411), more than 100 header fields (431).
A plain request of the right shape is still answered 200.
    receiver_framing.py WEBHOOK_RECEIVER"""
import os, re, socket, subprocess, sys, time
from waits import BOUND, exit_status, read_http_status_line, stop

KEY = "the-receiver-key-1234567890"
rx = subprocess.Popen([sys.argv[1], "--listen", "127.0.0.1:0", "--request-timeout", "1"],
                      env={**os.environ, "KEYHOOK_RECEIVER_KEY": KEY}, stdout=subprocess.PIPE,
                      stderr=subprocess.PIPE, text=True)
# The line is flushed (std::endl) once the socket listens; readline waits for it.
listening = re.search(r":(\d+)\s*$", rx.stderr.readline())
if not listening:
    sys.exit(f"webhook_receiver did not start (exit {stop(rx)}): {rx.stderr.read()}")
port = int(listening.group(1))
failures = 0


def status(head, body=b""):
    s = socket.create_connection(("127.0.0.1", port), timeout=BOUND)
    s.sendall(head)
    try:
        s.sendall(body)
    except OSError:
        pass  # the receiver may close before the body is sent: that is the point
    line = read_http_status_line(s)  # one recv() may hold part of the line
    s.close()
    return int(line.split()[1]) if line.startswith(b"HTTP/") else None


def check(got, want, what):
    global failures
    ok = got == want
    failures += not ok
    print(("ok   " if ok else "FAIL ") + f"[H9] [J3] {what}: {got} (expected {want})")


check(status(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Encoding: gzip\r\nContent-Length: 2000\r\n\r\n",
             b"\x1f\x8b" * 1000), 415, "a gzip body")
check(status(b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n", b"186a0\r\n" + b"a" * 100000),
      411, "a chunked body")
check(status(b"POST / HTTP/1.1\r\nHost: x\r\n\r\n", b"a" * 100000), 411, "a body without Content-Length")
fields = b"".join(b"h%d: v\r\n" % i for i in range(101))
check(status(b"POST / HTTP/1.1\r\nHost: x\r\n" + fields + b"Content-Length: 0\r\n\r\n"), 431, "101 header fields")
fields = b"".join(b"h%d: v\r\n" % i for i in range(90))
check(status(b"POST / HTTP/1.1\r\nHost: x\r\nx-api-key: " + KEY.encode() + b"\r\n" + fields +
             b"Content-Length: 2\r\n\r\n{}"), 200, "90 header fields and a sized body")
check(status(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Encoding: identity\r\nx-api-key: " + KEY.encode() +
             b"\r\nContent-Length: 2\r\n\r\n{}"), 200, "Content-Encoding: identity")
# A client that keeps trickling header bytes does not hold the process after
# SIGTERM for ever: past the grace period (2 s) it ends anyway. The receiver
# may also close the trickling connection while it stops, before its process
# has exited: a send that fails ends the trickle, not the wait. The wait is on
# the process's exit, up to BOUND (a process held by the client would never
# end); how long it took is printed, not judged, as a loaded machine stretches it.
slow = socket.create_connection(("127.0.0.1", port), timeout=BOUND)
slow.sendall(b"POST / HTTP/1.1\r\n")
rx.terminate()
start = time.monotonic()
trickling = True
while trickling and rx.poll() is None and time.monotonic() - start < BOUND:
    try:
        slow.sendall(b"x")
    except OSError:
        trickling = False  # closed by the receiver: now wait for the exit alone
    exit_status(rx, 0.2)  # a byte every 0.2 s, or sooner out of the loop once it exited
code = exit_status(rx, BOUND - (time.monotonic() - start))
took = time.monotonic() - start
check(code, 0, f"SIGTERM while a client trickles bytes: exit status after {took:.1f} s "
               f"(None: still running after {BOUND:.0f} s)")
slow.close()
if code is None:
    stop(rx, 0)
print("all checks passed" if failures == 0 else f"{failures} check(s) failed")
sys.exit(1 if failures else 0)
