#!/usr/bin/env python3
"""Runs a command with a fresh PostgreSQL database, its URI in
KEYHOOK_TEST_POSTGRES (the server started and stopped here, as
postgres_server.py starts it). The exit status is the command's.

    with_postgres.py COMMAND [ARG]...

Used by interop.key_store_postgresql: the Catch2 contract of the key store
(tests/cli/key_store_contract_test.cpp) over its PostgreSQL backend."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from postgres_server import PostgresServer  # noqa: E402

if len(sys.argv) < 2:
    sys.exit("usage: with_postgres.py COMMAND [ARG]...")
server = PostgresServer(prefix="keyhook-with-pg-")
try:
    uri = server.new_database()
    status = subprocess.run(sys.argv[1:], env={**os.environ, "KEYHOOK_TEST_POSTGRES": uri}).returncode
finally:
    server.stop()
sys.exit(status)
