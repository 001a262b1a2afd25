#!/usr/bin/env python3
"""Every program's --store, read by one opener (examples/shared/store_opener.hpp),
run as users run them (rules B6, K18):

  - an unknown scheme (mysql://, file:) is a usage error (exit 2) that names
    the accepted forms and prints of the address only its scheme;
  - a form the program cannot use (jsonl: for deliveries and replay ids,
    sqlite: for keys) is a usage error saying what it can use;
  - a password in a PostgreSQL address never appears on standard error, and a
    store that cannot be reached is named by its address without the password,
    in clean text (no literal \\x0a from libpq's trailing newline);
  - a plain path keeps its meaning: SQLite for webhook_receiver's replay ids
    (listening), JSON lines for key_admin;
  - a file store that is not there is refused by the commands that read one
    (key_admin list, webhook_deliver --list and its actions), exit 1, and
    no file is made: a mistyped path never looks like an empty store.

    store_addresses.py PROGRAM_NAME PATH/TO/PROGRAM [PATH/TO/key_admin]

Every check prints "ok" or "FAIL" with its rule; the exit status is the
number of failures (capped). Waits are on conditions, never on sleeps."""
import base64, os, subprocess, sys, tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "interop"))
from waits import BOUND, stop, wait_until  # noqa: E402

NAME, PROGRAM = sys.argv[1:3]
failures = 0
ENV = {**os.environ, "KEYHOOK_PEPPERS": "p1:" + base64.b64encode(b"a" * 32).decode(), "RECEIVER_KEY": "k" * 24}
ENV.pop("PGPASSWORD", None)
SQL_FORMS = "expected sqlite:PATH or postgresql://... (also postgres://...), or a plain PATH (SQLite)"
KEY_FORMS = ("expected jsonl:PATH or a plain PATH (a JSON-lines key file), or postgresql://... "
             "(also postgres://...)")
PASSWORD = "hunter2-Secret"


def check(ok, rule, what, detail=""):
    global failures
    failures += not ok
    print(("ok   " if ok else "FAIL ") + f"[{rule}] {what}" + ("" if ok else f": {detail}"), flush=True)


def argv(store, work):
    """The program's command line around --store STORE (work: a directory of the test's)."""
    if NAME == "webhook_deliver":
        return [PROGRAM, "--store", store, "--work", "--until-empty"]
    if NAME == "webhook_receiver":
        return [PROGRAM, "--listen", "127.0.0.1:0", "--key-env", "RECEIVER_KEY", "--store", store]
    if NAME == "key_admin":
        return [PROGRAM, "--store", store, "list"]
    routes = os.path.join(work, "routes.json")
    return [PROGRAM, "--listen", "127.0.0.1:0", "--store", store, "--routes", routes, "--proxy", "nginx",
            "--trusted-proxy", "127.0.0.1/32"]


def run(store, work):
    r = subprocess.run(argv(store, work), capture_output=True, text=True, timeout=BOUND, env=ENV,
                       stdin=subprocess.DEVNULL)
    return r.returncode, r.stderr


keys = NAME in ("key_admin", "key_gateway")
forms = KEY_FORMS if keys else SQL_FORMS
with tempfile.TemporaryDirectory() as work:
    with open(os.path.join(work, "routes.json"), "w") as f:
        f.write('{"routes": [{"method": "*", "prefix": "/", "family": "Execute", "access": "read"}]}')
    for store in ("mysql://root:" + PASSWORD + "@db.internal/hooks", "file:" + PASSWORD + ".db",
                  "redis:" + PASSWORD):
        code, err = run(store, work)
        check(code == 2, "B6", f"{NAME} --store {store.split(':')[0]}:...: usage error (exit 2)", f"{code} {err!r}")
        check("unknown scheme" in err and forms in err, "B6",
              f"{NAME}: the refusal names the accepted forms", repr(err))
        check(PASSWORD not in err, "K18", f"{NAME}: the refused address is not echoed", repr(err))

    unusable = ["sqlite:" + os.path.join(work, "k.db")] if keys else ["jsonl:" + os.path.join(work, "keys.jsonl")]
    for store in unusable:
        code, err = run(store, work)
        check(code == 2 and forms in err, "B6", f"{NAME} --store {store.split(':')[0]}:...: refused, naming "
              "what it can use (exit 2)", f"{code} {err!r}")
        check(PASSWORD not in err, "K18", f"{NAME}: no password in the refusal", repr(err))

    # Nothing listens on port 9: the store cannot be reached (exit 3 for
    # webhook_deliver, key_admin and key_gateway, 2 for webhook_receiver; 2
    # in a build without libpq).
    for scheme in ("postgresql", "postgres"):
        store = f"{scheme}://nobody:{PASSWORD}@127.0.0.1:9/none?connect_timeout=5&password={PASSWORD}x"
        code, err = run(store, work)
        check(code in (2, 3), "B6", f"{NAME} --store {scheme}://...: an unreachable store fails", f"{code}")
        check(PASSWORD not in err, "K18", f"{NAME}: the password is on no line of standard error", repr(err))
        if "libpq" not in err:  # built with libpq: the address as shown, the reason in clean text
            check(f"{scheme}://nobody@127.0.0.1:9/none?connect_timeout=5&password=..." in err, "K18",
                  f"{NAME}: the store is named without its password", repr(err))
            lines = [l for l in err.splitlines() if not l.startswith(NAME + ": note:")]
            check("\\x0a" not in err and len(lines) == 1, "B6",
                  f"{NAME}: one clean line, no literal \\x0a", repr(err))

    if NAME == "webhook_receiver":
        # A plain path is SQLite for the replay table, as for webhook_deliver.
        db = os.path.join(work, "replay.db")
        proc = subprocess.Popen(argv(db, work), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True, env=ENV)
        line = proc.stderr.readline()
        while line.startswith("webhook_receiver: note:"):
            line = proc.stderr.readline()
        check("listening on 127.0.0.1:" in line, "B6", "webhook_receiver --store PATH: a plain path is SQLite",
              repr(line))
        stop(proc)
        proc.stderr.close()
        check(wait_until(lambda: os.path.exists(db)), "B6", "webhook_receiver: the SQLite file is made")
    if NAME == "key_admin":
        path = os.path.join(work, "keys.jsonl")
        # A path with no file is a mistyped path, not an empty store: refused,
        # naming it, and nothing is made there (not even the lock file).
        for store in (path, "jsonl:" + path):
            code, err = run(store, work)
            check(code == 1 and "no key store here" in err and path in err, "K18",
                  f"key_admin --store {'jsonl:' if store != path else ''}MISSING list: refused (exit 1)",
                  f"{code} {err!r}")
        check(not any(n.startswith("keys.jsonl") for n in os.listdir(work)), "K18",
              "key_admin list on a missing store leaves no file behind", repr(os.listdir(work)))
        open(path, "w").close()
        for store in (path, "jsonl:" + path):
            code, err = run(store, work)
            check(code == 0, "K18", f"key_admin --store {'jsonl:' if store != path else ''}PATH: a JSON-lines "
                  "store (empty, listed)", f"{code} {err!r}")
    if NAME == "webhook_deliver":
        db = os.path.join(work, "typo.db")
        for args in (["--list"], ["--resend", "00000000-0000-0000-0000-000000000000"]):
            r = subprocess.run([PROGRAM, "--store", "sqlite:" + db] + args, capture_output=True, text=True,
                               timeout=BOUND, env=ENV, stdin=subprocess.DEVNULL)
            check(r.returncode == 1 and "no delivery store here" in r.stderr and r.stdout == "", "B6",
                  f"webhook_deliver --store MISSING {args[0]}: refused (exit 1), no summary",
                  f"{r.returncode} {r.stderr!r} {r.stdout!r}")
        check(not os.path.exists(db), "B6", "webhook_deliver --list on a missing store makes no file")

sys.exit(min(failures, 100))
