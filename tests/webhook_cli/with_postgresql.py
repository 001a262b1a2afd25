#!/usr/bin/env python3
"""Runs a program with a throwaway PostgreSQL server (rules B6 and O5): the
delivery store's Catch2 cases on PostgreSQL (delivery_store_test.cpp's
[postgresql] cases) get the server's database in KEYHOOK_TEST_POSTGRESQL.

    with_postgresql.py PROGRAM [ARGS...]

The server is Debian's PostgreSQL 15 (initdb and postgres from
/usr/lib/postgresql/15/bin), its cluster in a temporary directory, its socket
there and no TCP, as user postgres when run as root (the server refuses
root); it is stopped and the directory removed at the end. The exit status is
the program's. Every wait is on a condition (waits.py), never a fixed sleep."""
import os, shutil, subprocess, sys, tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "interop"))
from waits import BOUND, stop, wait_until  # noqa: E402

PG_BIN = "/usr/lib/postgresql/15/bin"


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: with_postgresql.py PROGRAM [ARGS...]")
    root = tempfile.mkdtemp(prefix="keyhook-pg-")
    as_pg = []
    if os.geteuid() == 0:
        import pwd
        pw = pwd.getpwnam("postgres")
        os.chown(root, pw.pw_uid, pw.pw_gid)
        as_pg = ["runuser", "-u", "postgres", "--"]
    server = None
    try:
        data = os.path.join(root, "data")
        subprocess.run([*as_pg, PG_BIN + "/initdb", "-D", data, "-U", "keyhook", "--auth=trust", "-E", "UTF8",
                        "--no-sync"], check=True, capture_output=True, timeout=BOUND * 4)
        port = str(40000 + os.getpid() % 10000)  # names the socket only (no TCP)
        server = subprocess.Popen([*as_pg, PG_BIN + "/postgres", "-D", data, "-k", root, "-p", port, "-c",
                                   "listen_addresses=", "-c", "fsync=off"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        ready = lambda: subprocess.run([PG_BIN + "/pg_isready", "-h", root, "-p", port],
                                       capture_output=True).returncode == 0
        if not wait_until(ready):
            print("postgres did not accept connections", flush=True)
            return 1
        env = dict(os.environ, KEYHOOK_TEST_POSTGRESQL="postgresql://keyhook@/postgres?host=%s&port=%s" % (root, port))
        return subprocess.run(sys.argv[1:], env=env).returncode
    finally:
        if server:
            # Fast shutdown: SIGINT to the postmaster itself (runuser does not pass signals on).
            try:
                with open(os.path.join(root, "data", "postmaster.pid")) as f:
                    os.kill(int(f.readline()), 2)
            except (OSError, ValueError):
                server.kill()
            stop(server)
        shutil.rmtree(root, ignore_errors=True)


sys.exit(main())
