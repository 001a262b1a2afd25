"""How the interop scripts wait (docs/testing.md, "How keyhook's own tests
wait"): on a condition, polled until it holds or a generous bound has passed,
never on a fixed sleep and never by looking once at an instant. The bounds are
for a loaded 2-core machine: a test that passes never waits for them, so they
cost nothing when all is well.

    wait_until(condition, bound)   condition() polled until true; its last value
    exit_status(proc, bound)       proc's exit status, or None if still running
    stop(proc, bound)              SIGTERM, then SIGKILL past the bound; the status
    read_http_status_line(sock)    the status line, read until its CRLF or EOF"""
import subprocess
import time

# Seconds. Long enough for anything a loaded machine makes slow (process
# start, a scheduler that runs the other side late), short enough that a
# test that really hangs still fails well within its CTest TIMEOUT.
BOUND = 30.0


def wait_until(condition, bound=BOUND, pause=0.02):
    """Polls condition() until it returns something true or `bound` seconds
    have passed; returns its last value (false: the bound passed)."""
    deadline = time.monotonic() + bound
    while True:
        value = condition()
        if value or time.monotonic() >= deadline:
            return value
        time.sleep(pause)


def exit_status(proc, bound=BOUND):
    """proc's exit status once it has exited, or None if it is still running
    after `bound` seconds (it is left running: the caller decides)."""
    try:
        return proc.wait(timeout=max(bound, 0))
    except subprocess.TimeoutExpired:
        return None


def stop(proc, bound=BOUND):
    """Ends proc: SIGTERM, its exit awaited up to `bound` s, then SIGKILL.
    Returns the exit status (negative: the signal that ended it)."""
    if proc.poll() is None:
        proc.terminate()
    status = exit_status(proc, bound)
    if status is None:
        proc.kill()
        status = proc.wait()
    return status


def read_http_status_line(sock, limit=8192):
    """The bytes of an HTTP answer up to its first CRLF (or what came before
    EOF): one recv() may return part of a line, so read until it is whole.
    The socket's own timeout bounds each read."""
    data = b""
    while b"\r\n" not in data and len(data) < limit:
        try:
            chunk = sock.recv(4096)
        except ConnectionResetError:
            break  # the answer was sent and the connection reset after it: keep what came
        if not chunk:
            break
        data += chunk
    return data.split(b"\r\n")[0]
