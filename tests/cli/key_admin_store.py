#!/usr/bin/env python3
"""key_admin run as users run it, several steps each, on a store of its own.

  k6   [K6]  reactivation is explicit: an update of a Revoked key is refused
             without --reactivate (naming it, the store unchanged), applied
             with it; --reactivate on a key that is not Revoked is refused;
             update reports the status before and after.

Every check prints "ok" or "FAIL" with its rule; the exit status is the
number of failures (capped). Waits are on conditions, never on sleeps.
    key_admin_store.py KEY_ADMIN SECTION..."""
import base64, datetime, json, os, shutil, subprocess, sys, tempfile

KEY_ADMIN = sys.argv[1]
SECTIONS = sys.argv[2:] or ["k6"]
PEPPER_1 = "p1:" + base64.b64encode(b"a" * 32).decode()
PEPPER_2 = "p2:" + base64.b64encode(b"b" * 32).decode()
failures = 0


def check(ok, rule, what, detail=""):
    global failures
    failures += not ok
    print(("ok   " if ok else "FAIL ") + f"[{rule}] {what}" + ("" if ok else f": {detail}"), flush=True)
    return ok


def iso(days):
    t = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=days)
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


class Store:
    def __init__(self, name):
        self.dir = tempfile.mkdtemp(prefix=f"keyhook-{name}-")
        self.path = os.path.join(self.dir, "keys.jsonl")
        self.peppers = PEPPER_1

    def run(self, *args, env=None):
        e = {k: v for k, v in os.environ.items() if k != "KEYHOOK_PEPPERS"}
        e["KEYHOOK_PEPPERS"] = self.peppers
        e.update(env or {})
        return subprocess.run([KEY_ADMIN, "--store", self.path, *args], env=e, capture_output=True, text=True)

    def create(self, tenant, *extra, env=None, valid=(-1, 30)):
        return self.run("create", "--tenant", tenant, "--name", f"key of {tenant}", "--from", iso(valid[0]),
                        "--until", iso(valid[1]), "--group", "user:pf", *extra, env=env)

    def bytes(self):
        with open(self.path, "rb") as f:
            return f.read()

    def records(self):
        r = self.run("list", "--format", "json")
        if r.returncode != 0:
            return None
        return {k["id"]: k for k in json.loads(r.stdout)["data"]["result"]}

    def done(self):
        shutil.rmtree(self.dir, ignore_errors=True)


def section_k6():
    s = Store("k6")
    a = s.create("acme")
    b = s.create("acme")
    if not check(a.returncode == 0 and b.returncode == 0, "K6", "two keys created", a.stderr + b.stderr):
        return
    revoked, live = json.loads(a.stdout)["id"], json.loads(b.stdout)["id"]
    check(s.run("deactivate", "--id", revoked).returncode == 0, "K6", "deactivate exits 0")
    before = s.bytes()

    r = s.run("update", "--id", revoked, "--description", "revoked: leaked")
    check(r.returncode == 1, "K6", "an update of a Revoked key without --reactivate exits 1", r.returncode)
    check("--reactivate" in r.stderr and "Revoked" in r.stderr, "K6", "the refusal names --reactivate", r.stderr)
    check(r.stdout == "", "K6", "nothing on standard output when refused", r.stdout)
    check(s.bytes() == before, "K6", "the store is unchanged by the refused update")
    check(s.records()[revoked]["status"] == "Revoked", "K6", "the key is still Revoked")

    r = s.run("update", "--id", live, "--reactivate", "--description", "x")
    check(r.returncode == 1, "K6", "--reactivate on an Active key exits 1", r.returncode)
    check("--reactivate" in r.stderr and "not Revoked" in r.stderr, "K6", "the refusal says it is not Revoked",
          r.stderr)
    check(s.bytes() == before, "K6", "the store is unchanged by the refused --reactivate")

    r = s.run("update", "--id", live, "--description", "renamed")
    check(r.returncode == 0 and json.loads(r.stdout or "{}") == {"id": live, "before": "Active", "after": "Active"},
          "K6", "an update of an Active key reports Active before and after", (r.returncode, r.stdout, r.stderr))

    # Reactivated, but the new period lies ahead: K6 keeps it Revoked.
    r = s.run("update", "--id", revoked, "--reactivate", "--from", iso(2), "--until", iso(30))
    check(r.returncode == 0 and json.loads(r.stdout or "{}") == {"id": revoked, "before": "Revoked",
                                                                  "after": "Revoked"},
          "K6", "--reactivate with a period ahead: Revoked before and after", (r.returncode, r.stdout, r.stderr))
    r = s.run("update", "--id", revoked, "--reactivate", "--from", iso(-1), "--until", iso(30))
    check(r.returncode == 0 and json.loads(r.stdout or "{}") == {"id": revoked, "before": "Revoked",
                                                                  "after": "Active"},
          "K6", "--reactivate with now in the period: Revoked before, Active after", (r.returncode, r.stdout, r.stderr))
    check(s.records()[revoked]["status"] == "Active", "K6", "the store holds the reactivated key as Active")
    s.done()


for name in SECTIONS:
    globals()["section_" + name]()
print(f"{failures} failure(s)")
sys.exit(min(failures, 100))
