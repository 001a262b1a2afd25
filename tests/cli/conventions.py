#!/usr/bin/env python3
"""Rule O1, run against one program as users run it: the command-line
conventions every program under examples/ keeps (examples/shared/cli.hpp).

  --help         standard output, exit 0, nothing on standard error; it starts
                 with the usage line and names every option the program has
                 (the lists below, kept by hand from each program's header
                 comment and docs), with "(default ...)" for those that have
                 one; key_admin: each command's own --help as well
  --version      exactly "keyhook X.Y.Z\\n", X.Y.Z from include/keyhook/version.hpp
  unknown option exit 2, the option named on standard error, nothing on
                 standard output; also after a command (key_admin)
  any case       word-valued options take their words in any case
                 (key_admin --format, --refill; key_gateway --proxy, --log;
                 webhook_receiver --log)

Every check prints "ok" or "FAIL" with its rule; the exit status is the
number of failures (capped). Each run of a program is bounded by BOUND.
    conventions.py PROGRAM_NAME PATH/TO/PROGRAM PATH/TO/version.hpp"""
import base64, json, os, re, subprocess, sys, tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "interop"))
from waits import BOUND  # noqa: E402

NAME, PROGRAM, VERSION_HPP = sys.argv[1:4]
failures = 0
PEPPERS = "p1:" + base64.b64encode(b"a" * 32).decode()

# Every option of each program, as its documentation lists them; True where
# --help must show a default.
OPTIONS = {
    "key_audit": {"--now": True, "--since": False, "--status": True, "--format": True, "--url": False,
                  "--tenant": False, "--page-size": True, "--timeout": True},
    "webhook_dispatch": {"--now": True, "--delivery-id-key": True, "--allow-local": False},
    "webhook_deliver": {"--allow-local": False, "--time-scale": True, "--timeout": True, "--resolve": False,
                        "--store": True, "--work": False, "--until-empty": False, "--lease": True, "--list": False,
                        "--status": True, "--tenant": True, "--webhook": True, "--since": True, "--resend": False,
                        "--recover": False, "--to-current-endpoint": False, "--enable": False, "--metrics-listen": True,
                        "--purge-before": False},
    "webhook_receiver": {"--key-env": True, "--listen": False, "--request-timeout": True, "--read-timeout": False,
                         "--max-connections": True, "--threads": True, "--store": True, "--replay-scope": True,
                         "--pending-bound": True, "--metrics-listen": True, "--log": True},
    "key_admin": {"--store": False},
    "key_gateway": {"--listen": False, "--store": False, "--routes": False, "--proxy": False,
                    "--trusted-proxy": False, "--stale-for": True, "--log": True, "--metrics-listen": True,
                    "--limits": True},
    "expiry_poll": {},
    "key_lifecycle": {},
    "signing": {},
}
# key_admin's commands and their options (True: --help shows a default).
POLICY = {"--allow": True, "--rate": True, "--burst": True, "--credits": True, "--refill": True}
COMMANDS = {
    "create": {"--tenant": False, "--name": False, "--from": False, "--until": False, "--description": True,
               "--group": True, "--shared": True, "--own-key-env": True, **POLICY},
    "deactivate": {"--id": False},
    "update": {"--id": False, "--reactivate": True, "--name": True, "--description": True, "--from": True,
               "--until": True, "--group": True, **POLICY},
    "rotate": {"--id": False, "--handover": True},
    "delete": {"--id": False, "--confirm": False},
    "list": {"--tenant": True, "--format": True},
    "show": {"--id": False, "--format": True},
}


def check(ok, what, detail=""):
    global failures
    failures += not ok
    print(("ok   " if ok else "FAIL ") + f"[O1] {NAME}: {what}" + ("" if ok else f": {detail!r}"), flush=True)
    return ok


def run(*args, env=None):
    e = {k: v for k, v in os.environ.items() if not k.startswith("KEYHOOK_")}
    e.update(env or {})
    return subprocess.run([PROGRAM, *args], capture_output=True, text=True, timeout=BOUND, env=e,
                          stdin=subprocess.DEVNULL)


def option_line(help_text, option):
    """The help line that lists `option` (its first, at the start of an entry)."""
    for line in help_text.splitlines():
        if re.match(r"\s*" + re.escape(option) + r"(\s|$)", line):
            return line
    return None


def check_help(args, usage_start, options, what):
    r = run(*args)
    check(r.returncode == 0, f"{what}: exit 0", (r.returncode, r.stderr))
    check(r.stderr == "", f"{what}: nothing on standard error", r.stderr)
    check(re.match(usage_start, r.stdout) is not None, f"{what}: starts with the usage line", r.stdout[:200])
    for option, has_default in options.items():
        line = option_line(r.stdout, option)
        if not check(line is not None, f"{what} lists {option}", r.stdout):
            continue
        if has_default:
            check("(default " in line, f"{what}: {option} with its default", line)
    return r.stdout


def version():
    text = open(VERSION_HPP).read()
    parts = [re.search(rf"#define KEYHOOK_VERSION_{p} (\d+)", text).group(1) for p in ("MAJOR", "MINOR", "PATCH")]
    return "keyhook " + ".".join(parts)


# --help
# The usage line names the program (webhook_receiver's after the variable it reads).
help_text = check_help(["--help"], rf"usage: (\S+=\S+ )?{NAME}\b", OPTIONS[NAME], "--help")
if NAME == "key_admin":
    for command, options in COMMANDS.items():
        # The whole program's help names every command's options too.
        check(re.search(rf"^\s*{command}\b", help_text, re.M) is not None, f"--help names the command {command}",
              help_text)
        for option in options:
            check(option in help_text, f"--help names {command}'s {option}")
        check_help([command, "--help"], rf"usage: key_admin --store STORE {command} ", options, f"{command} --help")

# --version
r = run("--version")
check(r.returncode == 0 and r.stdout == version() + "\n" and r.stderr == "",
      f"--version prints exactly {version()!r}, exit 0", (r.returncode, r.stdout, r.stderr))

# An unknown option.
unknown = [["--no-such-option"], ["--no-such-option=secret-value"]]
if NAME == "key_admin":
    unknown.append(["--store", "x.jsonl", "list", "--no-such-option"])
for args in unknown:
    r = run(*args)
    check(r.returncode == 2, f"{' '.join(args)}: exit 2", (r.returncode, r.stderr))
    check(r.stdout == "", f"{' '.join(args)}: nothing on standard output", r.stdout)
    check(f'unknown option "--no-such-option"' in r.stderr, f"{' '.join(args)}: names the option", r.stderr)
    check("secret-value" not in r.stderr, f"{' '.join(args)}: does not echo the value", r.stderr)
    check(re.search(rf"\nusage: (\S+=\S+ )?{NAME}\b", r.stderr) is not None,
          f"{' '.join(args)}: the usage line on standard error", r.stderr)

# Usage errors name flags, never C++ names.
if NAME == "key_admin":
    with tempfile.TemporaryDirectory() as work:
        store = os.path.join(work, "keys.jsonl")
        open(store, "w").close()  # an empty store (a missing one is refused: tests/cli/store_addresses.py)
        r = run("--store", store, "delete", "--id", "7d07d425-8c75-4e14-99ea-db7ed05a30e2")
        check(r.returncode == 2 and "delete: --confirm is required" in r.stderr and "::" not in r.stderr,
              "delete without --confirm: a usage error naming --confirm", (r.returncode, r.stderr))
        r = run("--store", store, "create", "--tenant", "acme", "--name", "n", "--from", "2026-01-01T00:00:00Z",
                env={"KEYHOOK_PEPPERS": PEPPERS})
        check(r.returncode == 2 and "create: --until TIME is required" in r.stderr,
              "create without --until: names the flag and its value", (r.returncode, r.stderr))
        r = run("list", "--format", "json")
        check(r.returncode == 2 and "--store STORE is required" in r.stderr, "no --store: names it", r.stderr)
        r = run("--store", store)
        check(r.returncode == 2 and "a command is required" in r.stderr, "no command: says so", r.stderr)
        r = run("--store", store, "show", "--id", "7d07d425-8c75-4e14-99ea-db7ed05a30e2")
        check(r.returncode == 1 and '--id: no key in the store has the id "7d07d425' in r.stderr,
              "show of an --id no key has: exit 1, naming it", (r.returncode, r.stderr))
        r = run("--store", store, "create", "--tenant", "acme", "--name", "n", "--from", "2026-01-01", "--until",
                "+0d", env={"KEYHOOK_PEPPERS": PEPPERS})
        check(r.returncode == 2 and '--until: "+0d": the amount must be at least 1' in r.stderr,
              "--until +0d: a usage error naming the flag and the text", (r.returncode, r.stderr))
        r = run("--store", store, "frobnicate-0123456789")
        check(r.returncode == 2 and "unknown command at position 3" in r.stderr and "frobnicate" not in r.stderr,
              "an unknown command: by its position, not quoted", r.stderr)
        r = run("--store", store, "list", "--format", "json", "--format", "table")
        check(r.returncode == 2 and "--format: given more than once" in r.stderr, "an option given twice",
              r.stderr)

        # Any case: --format JSON, --refill DAILY and Monthly:3.
        r = run("--store", store, "list", "--format", "JSON")
        check(r.returncode == 0 and json.loads(r.stdout or "{}") == [],
              "list --format JSON: taken in any case", (r.returncode, r.stdout, r.stderr))
        r = run("--store", store, "list", "--format", "Table")
        check(r.returncode == 0 and r.stdout.startswith("ID  "), "list --format Table: taken in any case",
              (r.returncode, r.stdout, r.stderr))
        r = run("--store", store, "list", "--format", "yaml")
        check(r.returncode == 2 and "--format: expected table or json" in r.stderr, "--format yaml: refused",
              r.stderr)
        for refill in ("DAILY", "Monthly:3"):
            r = run("--store", store, "create", "--tenant", "acme", "--name", f"refill {refill}", "--from",
                    "2026-01-01T00:00:00Z", "--until", "2099-01-01T00:00:00Z", "--group", "user:pf", "--credits",
                    "5", "--refill", refill, env={"KEYHOOK_PEPPERS": PEPPERS})
            check(r.returncode == 0, f"create --refill {refill}: taken in any case", (r.returncode, r.stderr))
        r = run("--store", store, "list", "--format", "json")
        refills = sorted(json.dumps(k["policy"]["credits"]["refill"], sort_keys=True)
                         for k in json.loads(r.stdout or "[]"))
        check(r.returncode == 0 and refills == ['{"amount": 5, "day": 3, "interval": "monthly"}',
                                                '{"amount": 5, "interval": "daily"}'],
              "both keys stored with their refills", (r.returncode, refills, r.stderr))
        # O1's exit statuses: the store's file system failing is 3, its content 1.
        os.mkdir(os.path.join(work, "dir.jsonl"))
        r = run("--store", os.path.join(work, "dir.jsonl"), "list")
        check(r.returncode == 3, "a store that cannot be read (a directory): exit 3", (r.returncode, r.stderr))
        bad = os.path.join(work, "bad.jsonl")
        with open(bad, "w") as f:
            f.write("{not json\n")
        r = run("--store", bad, "list")
        check(r.returncode == 1, "a store whose content does not read: exit 1", (r.returncode, r.stderr))
        r = run("--store", store, "deactivate", "--id", "7d07d425-8c75-4e14-99ea-db7ed05a30e2")
        check(r.returncode == 1 and "--id" in r.stderr, "an --id no key has: exit 1", (r.returncode, r.stderr))

if NAME == "webhook_deliver":
    with tempfile.TemporaryDirectory() as work:
        store = "sqlite:" + os.path.join(work, "deliveries.db")
        run("--store", store, "--work", "--until-empty")  # makes the (empty) store --list reads
        probe = run("--store", store, "--list")
        if probe.returncode == 2 and "made without" in probe.stderr:
            print("skip webhook_deliver's store options: " + probe.stderr.strip())
        else:
            # O5: --status in any case, "gave_up" also as "gaveUp".
            for status in ("GAVE_UP", "gaveUp", "Delivered", "pending"):
                r = run("--store", store, "--list", "--status", status)
                check(r.returncode == 0 and r.stdout.startswith('{"summary":'),
                      f"--list --status {status}: taken in any case", (r.returncode, r.stdout, r.stderr))
            id_ = "msg_" + "0" * 32
            for args, said in (
                    (["--list", "--status", "lost"], "--status: expected pending, delivered, gave_up or disabled"),
                    (["--recover", "--tenant", "a/b", "--webhook", "w"], "--recover needs --since T0"),
                    (["--enable", "--tenant", "a"], "--enable needs --tenant T and --webhook W"),
                    (["--list", "--webhook", "w"], "--webhook needs --tenant"),
                    (["--list", "--resend", id_], "--list and --resend do not go together"),
                    (["--resend", "msg_secret-looking-value"], "--resend: expected a delivery id"),
                    (["--list", "--since", "2026-02-30T00:00:00Z"], "--since: "),
                    (["--purge-before", "yesterday"], "--purge-before: "),
                    (["--resend", id_, "--status", "pending"], "--status goes with --list"),
                    (["--enable", "--tenant", "a", "--webhook", "w", "--to-current-endpoint"],
                     "--to-current-endpoint goes with --resend, --recover"),
                    (["--resend", id_, "--work"], "--resend takes no input file, --work")):
                r = run("--store", store, *args)
                check(r.returncode == 2 and said in r.stderr and r.stdout == "", f"{' '.join(args)}: usage error",
                      (r.returncode, r.stderr))
            r = run("--resend", id_)
            check(r.returncode == 2 and "--resend needs --store" in r.stderr, "--resend without --store: exit 2",
                  (r.returncode, r.stderr))
            r = run("--store", store, "--enable", "--tenant", "a", "--webhook", "w")
            check(r.returncode == 1 and "has no webhook" in r.stderr, "--enable of an unknown webhook: exit 1",
                  (r.returncode, r.stderr))
            # O5: --since and --purge-before take key_admin's time forms (now, a date, a timestamp).
            for args in (["--list", "--since", "now"], ["--list", "--since", "2026-01-01"],
                         ["--list", "--since", "2026-01-01T00:00:00Z"], ["--purge-before", "NOW"],
                         ["--purge-before", "2020-02-29"]):
                r = run("--store", store, *args)
                check(r.returncode == 0 and '{"summary":' in r.stdout, f"{' '.join(args)}: taken",
                      (r.returncode, r.stdout, r.stderr))
            r = run("--store", store, "--purge-before", "2025-02-29")
            check(r.returncode == 2 and "--purge-before" in r.stderr and "not a day of the calendar" in r.stderr,
                  "--purge-before 2025-02-29: a usage error naming the flag", (r.returncode, r.stderr))
            # O5: a refused action prints no summary (nothing was done to count).
            check(r.stdout == "", "--enable of an unknown webhook: no summary line", r.stdout)
            r = run("--store", store, "--resend", id_)
            check(r.returncode == 1 and r.stdout == "", "--resend of an unknown id: exit 1, no summary line",
                  (r.returncode, r.stdout, r.stderr))
            r = run("--store", store, "--recover", "--tenant", "a", "--webhook", "w", "--since", "2020-01-01T00:00:00Z")
            check(r.returncode in (0, 1) and (r.returncode == 1) == (r.stdout == ""),
                  "--recover: a summary line exactly when not refused", (r.returncode, r.stdout, r.stderr))
    # H12, O1: a malformed KEYHOOK_DELIVERY_ID_KEY is a usage error without --store too, never ignored.
    sample = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "webhook_dispatch",
                          "sample.json")
    with open(sample) as f:
        document = json.load(f)
    document["tenant"]["webhooksEnabled"] = False  # H4: nothing is sent
    with tempfile.TemporaryDirectory() as work:
        quiet = os.path.join(work, "quiet.json")
        with open(quiet, "w") as f:
            json.dump(document, f)
        for bad in ("zz", "0" * 31, "g" * 32):
            r = run("--allow-local", quiet, env={"KEYHOOK_DELIVERY_ID_KEY": bad})
            check(r.returncode == 2 and "KEYHOOK_DELIVERY_ID_KEY" in r.stderr and r.stdout == "" and
                  (len(bad) < 4 or bad not in r.stderr),
                  f"KEYHOOK_DELIVERY_ID_KEY {bad[:8]!r} without --store: exit 2, named, not echoed",
                  (r.returncode, r.stdout, r.stderr))
        r = run("--allow-local", quiet, env={"KEYHOOK_DELIVERY_ID_KEY": "0123456789abcdef" * 2})
        check(r.returncode == 0 and r.stdout.startswith('{"summary":'),
              "a well-formed KEYHOOK_DELIVERY_ID_KEY without --store: taken", (r.returncode, r.stdout, r.stderr))

if NAME == "key_gateway":
    with tempfile.TemporaryDirectory() as work:
        base = ["--listen", "127.0.0.1:0", "--store", os.path.join(work, "keys.jsonl"), "--routes",
                os.path.join(work, "no-routes.json"), "--trusted-proxy", "127.0.0.1/32"]
        env = {"KEYHOOK_PEPPERS": PEPPERS}
        # --proxy in any case: taken, so the program goes on to the routes file (missing: bad input, 1).
        for proxy in ("NGINX", "Traefik"):
            r = run(*base, "--proxy", proxy, env=env)
            check(r.returncode == 1 and "no-routes.json" in r.stderr,
                  f"--proxy {proxy}: taken in any case (then the missing routes file: exit 1)",
                  (r.returncode, r.stderr))
        # --log in any case (O3), and a word it does not know refused, naming it.
        r = run(*base, "--proxy", "nginx", "--log", "JSON", env=env)
        check(r.returncode == 1 and "no-routes.json" in r.stderr, "--log JSON: taken in any case",
              (r.returncode, r.stderr))
        r = run(*base, "--proxy", "nginx", "--log", "text", env=env)
        check(r.returncode == 2 and "--log: expected json or none" in r.stderr, "--log text: refused, naming --log",
              (r.returncode, r.stderr))
        # --limits in any case (K17); an empty or unknown word refused, naming --limits.
        r = run(*base, "--proxy", "nginx", "--limits", "LOCAL", env=env)
        check(r.returncode == 1 and "no-routes.json" in r.stderr, "--limits LOCAL: taken in any case",
              (r.returncode, r.stderr))
        for word in ("", "both"):
            r = run(*base, "--proxy", "nginx", "--limits", word, env=env)
            check(r.returncode == 2 and "--limits: expected shared or local" in r.stderr,
                  f"--limits {word!r}: refused, naming --limits", (r.returncode, r.stderr))
        r = run(*base, "--proxy", "haproxy", env=env)
        check(r.returncode == 2 and "--proxy: expected nginx or traefik" in r.stderr, "--proxy haproxy: refused",
              (r.returncode, r.stderr))
        r = run(*base, "--proxy", "nginx")
        check(r.returncode == 2 and "KEYHOOK_PEPPERS" in r.stderr, "no KEYHOOK_PEPPERS: a usage error (2)",
              (r.returncode, r.stderr))
        r = run("--store", "keys.jsonl", "--routes", "r.json", "--proxy", "nginx", "--trusted-proxy", "::1/128")
        check(r.returncode == 2 and "--listen HOST:PORT is required" in r.stderr, "no --listen: names it",
              (r.returncode, r.stderr))

if NAME == "webhook_receiver":
    # --log in any case (O3): taken, so the program goes on to its key (not set: a usage error naming it);
    # a word it does not know refused, naming --log; without --listen, named as going with it.
    r = run("--listen", "127.0.0.1:0", "--log", "NONE")
    check(r.returncode == 2 and "KEYHOOK_RECEIVER_KEY" in r.stderr and "--log" not in r.stderr.splitlines()[0],
          "--log NONE: taken in any case (then no key: exit 2)", (r.returncode, r.stderr))
    r = run("--listen", "127.0.0.1:0", "--log", "text")
    check(r.returncode == 2 and "--log: expected json or none, got \"text\"" in r.stderr,
          "--log text: refused, naming --log", (r.returncode, r.stderr))
    r = run("--log", "json", env={"KEYHOOK_RECEIVER_KEY": "a-key-of-some-length"})
    check(r.returncode == 2 and "--log goes with --listen" in r.stderr, "--log without --listen: refused",
          (r.returncode, r.stderr))
    env = {"KEYHOOK_RECEIVER_KEY": "the-receiver-key-1234567890"}
    # O1: a malformed KEYHOOK_SIGNING_SECRET is named by the variable, never by a C++ identifier.
    for secrets in ("bad", "whsec_" + base64.b64encode(b"k" * 32).decode() + " bad"):
        r = run("--listen", "127.0.0.1:0", env={**env, "KEYHOOK_SIGNING_SECRET": secrets})
        check(r.returncode == 2 and r.stderr.startswith("webhook_receiver: KEYHOOK_SIGNING_SECRET") and
              "signing_keys" not in r.stderr and "[" not in r.stderr.splitlines()[0],
              f"KEYHOOK_SIGNING_SECRET {secrets[-3:]!r}: a usage error naming the variable only",
              (r.returncode, r.stderr))
    # O1, O4: --metrics-listen on --listen's own address is a usage error (2), before anything listens.
    r = run("--listen", "127.0.0.1:47211", "--metrics-listen", "127.0.0.1:47211", env=env)
    check(r.returncode == 2 and "--metrics-listen" in r.stderr and r.stdout == "",
          "--metrics-listen on --listen's address: exit 2 naming it", (r.returncode, r.stderr))

# O1: a directory named as an input file is a file that cannot be read: exit 1,
# said so with the system's reason, never a parse of nothing or a library's exception.
with tempfile.TemporaryDirectory() as work:
    adir = os.path.join(work, "adir")
    os.mkdir(adir)
    routes = os.path.join(work, "routes")
    os.mkdir(routes)
    directory_runs = {
        "key_audit": ([adir], {}),
        "webhook_dispatch": ([adir], {}),
        "webhook_deliver": (["--allow-local", adir], {}),
        "webhook_receiver": ([adir], {"KEYHOOK_RECEIVER_KEY": "the-receiver-key-1234567890"}),
        "key_gateway": (["--listen", "127.0.0.1:0", "--store", os.path.join(work, "keys.jsonl"), "--routes", routes,
                         "--proxy", "nginx", "--trusted-proxy", "127.0.0.1/32"], {"KEYHOOK_PEPPERS": PEPPERS}),
    }
    if NAME in directory_runs:
        args, env = directory_runs[NAME]
        r = run(*args, env=env)
        check(r.returncode == 1 and r.stdout == "" and "Is a directory" in r.stderr and "cannot read" in r.stderr and
              "syntax error" not in r.stderr and "basic_filebuf" not in r.stderr,
              "a directory as the input file: exit 1, cannot read it (Is a directory)", (r.returncode, r.stderr))
    if NAME == "key_gateway":
        r = run("--listen", "127.0.0.1:0", "--store", os.path.join(work, "keys.jsonl"), "--routes",
                os.path.join(work, "no-routes.json"), "--proxy", "nginx", "--trusted-proxy", "127.0.0.1/32",
                env={"KEYHOOK_PEPPERS": PEPPERS})
        check(r.returncode == 1 and "no-routes.json" in r.stderr and "No such file or directory" in r.stderr,
              "a missing routes file: exit 1, with the system's reason", (r.returncode, r.stderr))

sys.exit(min(failures, 100))
