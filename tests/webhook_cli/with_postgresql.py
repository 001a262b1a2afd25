#!/usr/bin/env python3
"""Runs a program with a throwaway PostgreSQL server (rules B6, O5, K17,
K18): the store cases on PostgreSQL (delivery_store_test.cpp's [postgresql]
cases, key_store_contract_test.cpp's [key_store_contract]) get the server's
database in KEYHOOK_TEST_POSTGRESQL.

    with_postgresql.py PROGRAM [ARGS...]

The server is Debian's PostgreSQL 15 as tests/interop/postgres_server.py
starts it: initdb and postgres from /usr/lib/postgresql/15/bin, its cluster
in a temporary directory, its socket there and no TCP, as user postgres when
run as root (the server refuses root); it is stopped and the directory
removed at the end. The exit status is the program's. Every wait is on a
condition (waits.py), never a fixed sleep."""
import os, subprocess, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "interop"))
from postgres_server import PostgresServer  # noqa: E402


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: with_postgresql.py PROGRAM [ARGS...]")
    server = PostgresServer()
    try:
        env = dict(os.environ, KEYHOOK_TEST_POSTGRESQL=server.uri("postgres"))
        return subprocess.run(sys.argv[1:], env=env).returncode
    finally:
        server.stop()


sys.exit(main())
