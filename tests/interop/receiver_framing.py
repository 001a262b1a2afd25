#!/usr/bin/env python3
"""webhook_receiver --listen refuses, before reading a byte of the body, what
cpp-httplib would read without its size limit (outside review): a compressed
body (415), a chunked or unsized body (411), more than 100 header fields (431).
A plain request of the right shape is still answered 200.
    receiver_framing.py WEBHOOK_RECEIVER"""
import os, re, socket, subprocess, sys, time

KEY = "the-receiver-key-1234567890"
rx = subprocess.Popen([sys.argv[1], "--listen", "127.0.0.1:0", "--read-timeout", "1"],
                      env={**os.environ, "KEYHOOK_RECEIVER_KEY": KEY}, stdout=subprocess.PIPE,
                      stderr=subprocess.PIPE, text=True)
port = int(re.search(r":(\d+)\s*$", rx.stderr.readline()).group(1))
failures = 0


def status(head, body=b""):
    s = socket.create_connection(("127.0.0.1", port), timeout=3)
    s.sendall(head)
    try:
        s.sendall(body)
    except OSError:
        pass  # the receiver may close before the body is sent: that is the point
    line = s.recv(200).split(b"\r\n")[0]
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
# SIGTERM for longer than the grace period (2 s).
slow = socket.create_connection(("127.0.0.1", port))
slow.sendall(b"POST / HTTP/1.1\r\n")
rx.terminate()
start = time.monotonic()
while rx.poll() is None and time.monotonic() - start < 6:
    try:
        slow.sendall(b"x")
    except OSError:
        break
    time.sleep(0.2)
took = time.monotonic() - start
check(rx.poll() is not None and took < 4, True, f"SIGTERM while a client trickles bytes: stopped in {took:.1f} s")
if rx.poll() is None:
    rx.kill()
rx.wait(timeout=5)
print("all checks passed" if failures == 0 else f"{failures} check(s) failed")
sys.exit(1 if failures else 0)
