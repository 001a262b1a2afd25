#!/usr/bin/env python3
"""key_admin run as users run it, several steps each, on a store of its own.

  k6   [K6]  reactivation is explicit: an update of a Revoked key is refused
             without --reactivate (naming it, the store unchanged), applied
             with it; --reactivate on a key that is not Revoked is refused;
             update reports the status before and after.
  files [K18]  under umask 022 the key store and its lock are 0600; a
             symlink planted at the old temporary name FILE.tmp is not
             followed; key_admin SIGKILLed between writing its temporary
             file and renaming it (stopped there by the test hook
             KEY_STORE_TEST_STOP_BEFORE_RENAME, waited for with waitpid)
             leaves the store as it was, and the next write succeeds.
  unique [K18]  one stored key is one key: create with an own key already
             stored for another tenant is refused (also after a pepper
             rotation, when the digest string differs, and against a legacy
             sha256 digest); the refusal names no other tenant or id and
             shows no key; the store stays as it was and readable.

Every check prints "ok" or "FAIL" with its rule; the exit status is the
number of failures (capped). Waits are on conditions, never on sleeps.
    key_admin_store.py KEY_ADMIN SECTION..."""
import base64, datetime, glob, hashlib, json, os, shutil, signal, stat, subprocess, sys, tempfile

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

    def environment(self, env):
        e = {k: v for k, v in os.environ.items() if k not in ("KEYHOOK_PEPPERS", "KEY_STORE_TEST_STOP_BEFORE_RENAME")}
        e["KEYHOOK_PEPPERS"] = self.peppers
        e.update(env or {})
        return e

    def run(self, *args, env=None):
        return subprocess.run([KEY_ADMIN, "--store", self.path, *args], env=self.environment(env),
                              capture_output=True, text=True)

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


def mode(path):
    return stat.S_IMODE(os.lstat(path).st_mode)


def section_files():
    os.umask(0o022)
    s = Store("files")
    r = s.create("acme")
    check(r.returncode == 0, "K18", "create exits 0", r.stderr)
    check(mode(s.path) == 0o600, "K18", "the key store is 0600 under umask 022", oct(mode(s.path)))
    check(mode(s.path + ".lock") == 0o600, "K18", "its lock file is 0600", oct(mode(s.path + ".lock")))
    check(glob.glob(s.path + ".tmp*") == [], "K18", "no temporary file is left after a write",
          glob.glob(s.path + ".tmp*"))

    # A symlink planted at the temporary name the store used to write.
    victim = os.path.join(s.dir, "victim")
    with open(victim, "w") as f:
        f.write("victim\n")
    os.chmod(victim, 0o644)
    os.symlink(victim, s.path + ".tmp")
    dangling = os.path.join(s.dir, "made-through-a-link")
    before = s.bytes()
    r = s.create("acme")
    check(r.returncode == 0, "K18", "create with a symlink at FILE.tmp exits 0", r.stderr)
    with open(victim) as f:
        check(f.read() == "victim\n", "K18", "the file the symlink names is untouched")
    check(mode(victim) == 0o644, "K18", "the file the symlink names keeps its mode", oct(mode(victim)))
    check(not os.path.islink(s.path) and mode(s.path) == 0o600, "K18", "the store is a regular file, 0600")
    check(os.path.islink(s.path + ".tmp"), "K18", "the planted symlink is left where it was")
    records = s.records()
    check(records is not None and len(records) == 2, "K18", "the store holds both keys", records)
    os.unlink(s.path + ".tmp")
    os.symlink(dangling, s.path + ".tmp")
    r = s.create("acme")
    check(r.returncode == 0 and not os.path.exists(dangling), "K18",
          "a dangling symlink at FILE.tmp creates nothing where it points", r.stderr)
    os.unlink(s.path + ".tmp")

    # Killed between the temporary file's fsync and the rename.
    before = s.bytes()
    p = subprocess.Popen([KEY_ADMIN, "--store", s.path, "create", "--tenant", "acme", "--name", "killed",
                          "--from", iso(-1), "--until", iso(30), "--group", "user:pf"],
                         env=s.environment({"KEY_STORE_TEST_STOP_BEFORE_RENAME": "1"}),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _, status = os.waitpid(p.pid, os.WUNTRACED)  # the condition: stopped at the hook, or ended
    stopped = os.WIFSTOPPED(status)
    if check(stopped, "K18", "key_admin stopped at the point between write and rename", status):
        left = glob.glob(s.path + ".tmp.*")
        check(len(left) == 1 and mode(left[0]) == 0o600, "K18", "its temporary file exists, 0600",
              [(x, oct(mode(x))) for x in left])
        check(s.bytes() == before, "K18", "the store is unchanged while the new file waits")
        os.kill(p.pid, signal.SIGKILL)
        _, status = os.waitpid(p.pid, 0)
        check(os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL, "K18", "SIGKILL ended it", status)
    p.returncode = 0  # reaped above
    p.stdout.close()
    p.stderr.close()
    check(s.bytes() == before, "K18", "after the kill the store is as it was")
    r = s.create("acme")
    check(r.returncode == 0, "K18", "the next write succeeds despite the leftover temporary file", r.stderr)
    records = s.records()
    check(records is not None and len(records) == 4, "K18", "the store reads back with the new key",
          None if records is None else len(records))
    check(mode(s.path) == 0o600, "K18", "and is still 0600")
    s.done()


def section_unique():
    s = Store("unique")
    own = {"OWN_KEY": "own-key-of-acme-0123456789"}
    r = s.create("acme", "--own-key-env", "OWN_KEY", env=own)
    if not check(r.returncode == 0, "K18", "create with an own key exits 0", r.stderr):
        return
    first = json.loads(r.stdout)["id"]
    before = s.bytes()

    def refused(what, *extra, env, tenant="globex"):
        r = s.create(tenant, *extra, env=env)
        check(r.returncode == 1, "K18", f"{what}: exit 1", (r.returncode, r.stderr))
        check("already stored" in r.stderr, "K18", f"{what}: says why", r.stderr)
        leaked = [x for x in ("acme", first, *env.values()) if x in r.stderr + r.stdout]
        check(leaked == [], "K18", f"{what}: names no other tenant or id, shows no key", leaked)
        check(s.bytes() == before, "K18", f"{what}: the store is unchanged")
        check(s.records() is not None, "K18", f"{what}: the store still reads")

    refused("the same own key for another tenant", "--own-key-env", "OWN_KEY", env=own)
    # The pepper rotated: p2 current, p1 kept for reading. The new digest string differs.
    s.peppers = PEPPER_2 + " " + PEPPER_1
    refused("the same own key after a pepper rotation", "--own-key-env", "OWN_KEY", env=own)
    # A line migrated from another store: plain SHA-256 of a key.
    legacy_key = "legacy-key-of-initech-0123456789"
    line = json.loads(before.decode().splitlines()[0])
    line.update({"id": "0b6f1c4e-8d7a-4d0e-9a51-3f2b7c9e1d20", "tenant": "initech", "name": "migrated",
                 "storedKey": "sha256." + hashlib.sha256(legacy_key.encode()).hexdigest()})
    with open(s.path, "ab") as f:
        f.write((json.dumps(line) + "\n").encode())
    before = s.bytes()
    first = line["id"]
    refused("an own key stored as a legacy sha256 digest", "--own-key-env", "LEGACY",
            env={"LEGACY": legacy_key})
    r = s.create("globex", "--own-key-env", "OTHER", env={"OTHER": "another-own-key-0123456789"})
    check(r.returncode == 0, "K18", "a different own key is stored", r.stderr)
    records = s.records()
    check(records is not None and len(records) == 3, "K18", "the store reads back with three keys",
          None if records is None else len(records))
    s.done()


for name in SECTIONS:
    globals()["section_" + name]()
print(f"{failures} failure(s)")
sys.exit(min(failures, 100))
