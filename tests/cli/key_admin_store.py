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
  output [M1 P1 S3 K14]  list prints a table (one header row, one row per
             key: id, status as of now, tenant, name, masked key, period,
             rate limit, allowlist, credits left with refills due applied,
             last use) and --format json one array of objects (record,
             tenant, policy, usage; never a digest or a key); show prints
             one key as label: value lines or its object; text from the
             store (control, C1 and bidirectional characters, a full key
             stored as masked) comes out escaped and masked again; an
             unknown --id is exit 1 naming the id, escaped.
  changes [K6 K8 O1]  deactivate, update and delete print what changed on
             standard output ("deactivated key ID: status Active ->
             Revoked", update's status line and "  label: old -> new" per
             field changed, "deleted key ID (...)"), never a key or a
             digest; delete without --confirm is a usage error naming
             --confirm, the store unchanged.
  times [T1 O1]  --from takes now, YYYY-MM-DD (00:00:00Z) and T1
             timestamps; --until also +N d|h|m|s, after --from when given,
             else after now; both sides of each boundary (+0d refused, +1s
             taken; 2024-02-29 taken, 2025-02-29 and 2026-02-30 refused; the
             year 9999 reached, not passed; +999999999999d refused): exit 2,
             the flag and the text (escaped) named, the store unchanged.
  errors [O1 K8]  a battery of refused commands: each names its flag and
             no C++ or library name (::, api_key, std::, activeFrom,
             expireAt, limited_credits, deletion_confirmation).
  text_flags [P1 O1]  every text flag given bytes that are not UTF-8, a
             control character or nothing: exit 1 or 2 naming the flag,
             escaped, never 3 nor a library exception; --tenant is checked
             up front as --name is (empty, only spaces, control characters,
             over 128 characters: exit 1 naming --tenant, the store unread).

Every check prints "ok" or "FAIL" with its rule; the exit status is the
number of failures (capped). Waits are on conditions, never on sleeps.
    key_admin_store.py KEY_ADMIN SECTION..."""
import base64, datetime, glob, hashlib, json, os, re, shutil, signal, stat, subprocess, sys, tempfile

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
        return {k["id"]: k for k in json.loads(r.stdout)}

    def done(self):
        shutil.rmtree(self.dir, ignore_errors=True)


def report(stdout):
    """update's first line, "updated key ID: status BEFORE -> AFTER", as (id, before, after)."""
    m = re.match(r"updated key (\S+): status (.+) -> (.+)\n", stdout)
    return m.groups() if m else None


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
    check(r.returncode == 0 and report(r.stdout) == (live, "Active", "Active"),
          "K6", "an update of an Active key reports Active before and after", (r.returncode, r.stdout, r.stderr))

    # Reactivated, but the new period lies ahead: K6 keeps it Revoked.
    r = s.run("update", "--id", revoked, "--reactivate", "--from", iso(2), "--until", iso(30))
    check(r.returncode == 0 and report(r.stdout) == (revoked, "Revoked", "Revoked"),
          "K6", "--reactivate with a period ahead: Revoked before and after", (r.returncode, r.stdout, r.stderr))
    r = s.run("update", "--id", revoked, "--reactivate", "--from", iso(-1), "--until", iso(30))
    check(r.returncode == 0 and report(r.stdout) == (revoked, "Revoked", "Active"),
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


# ---- What list, show and the changes print.

FORBIDDEN = ("::", "api_key", "std::", "activeFrom", "expireAt", "limited_credits", "deletion_confirmation",
             "key_policy", "key_status")
# P1: what must never reach a terminal raw (C0 but newline, DEL, C1, bidirectional controls, U+2028/9).
UNSAFE = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")


def created(r, what):
    """create's or rotate's one JSON line, or None (a failed check)."""
    if not check(r.returncode == 0, "K1", f"{what}: exit 0", (r.returncode, r.stderr)):
        return None
    return json.loads(r.stdout)


def second(t):
    """A datetime as the table writes instants: to the second, Z."""
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def exact(text):
    """T4 text as a datetime."""
    return datetime.datetime.strptime(text.replace("Z", "+0000"), "%Y-%m-%dT%H:%M:%S.%f%z")


def line_of(s, key_id):
    """The stored line of a key, as a dict."""
    for line in s.bytes().decode().splitlines():
        if line.strip() and json.loads(line)["id"] == key_id:
            return json.loads(line)
    return None


def masked_ok(masked, key):
    """M1: as many characters as the key, its first and last 3, '*' between."""
    return len(masked) == len(key) and masked[:3] == key[:3] and masked[-3:] == key[-3:] and \
        set(masked[3:-3]) == {"*"}


def section_output():
    s = Store("output")
    # No file yet: a mistyped path, refused (exit 1) and nothing made there.
    r = s.run("list")
    check(r.returncode == 1 and "no key store here" in r.stderr and r.stdout == "", "K18",
          "list of a store that is not there: refused, not an empty list", (r.returncode, r.stdout, r.stderr))
    r = s.run("show", "--id", "7d07d425-8c75-4e14-99ea-db7ed05a30e2")
    check(r.returncode == 1 and "no key store here" in r.stderr, "K18", "show on a store that is not there: refused",
          (r.returncode, r.stderr))
    open(s.path, "w").close()  # an empty store, as after the last key was deleted
    r = s.run("list")
    check(r.returncode == 0 and r.stdout.splitlines() == [r.stdout.splitlines()[0]] and
          r.stdout.startswith("ID  "), "O1", "list of an empty store: the header row alone", (r.returncode, r.stdout))
    r = s.run("list", "--format", "json")
    check(r.returncode == 0 and json.loads(r.stdout or "null") == [], "O1", "list --format json of an empty store: []",
          r.stdout)

    active = created(s.run("create", "--tenant", "acme", "--name", "nightly batch", "--from", iso(-1), "--until",
                           iso(30), "--group", "user:pf", "--rate", "100/60", "--burst", "20", "--allow",
                           "10.20.0.0/16", "--allow", "2001:db8::/32", "--credits", "5", "--refill", "daily"),
                     "an Active key with a policy")
    future = created(s.run("create", "--tenant", "acme", "--name", "starts later", "--from", iso(2), "--until",
                           iso(30), "--group", "user:pf"), "a key Active in the future")
    expired = created(s.run("create", "--tenant", "globex", "--name", "ran out", "--from", iso(-30), "--until",
                            iso(-1), "--group", "user:pf"), "an Expired key")
    revoked = created(s.create("globex"), "a key to revoke")
    forever = created(s.run("create", "--tenant", "initech", "--name", "never ends", "--from", iso(-1), "--until",
                            "9999-12-31T23:59:59Z", "--group", "user:pf"), "a key that never expires")
    if None in (active, future, expired, revoked, forever):
        return
    check(s.run("deactivate", "--id", revoked["id"]).returncode == 0, "S3", "deactivate exits 0")
    plaintexts = [k["key"] for k in (active, future, expired, revoked, forever)]
    for k in (active, future, expired, revoked, forever):
        check(masked_ok(k["masked"], k["key"]), "M1", f"the masked form keeps 3 + 3 of {len(k['key'])} characters",
              k["masked"])

    # A line written by another tool: text no terminal should see raw, a full
    # key stored as `masked` (P2 masks it again), credits spent but a daily
    # refill due since (K14: shown refilled), a last use.
    hostile = dict(line_of(s, active["id"]))
    hostile_id = "7d07d425-8c75-4e14-99ea-db7ed05a30e2\x1b[2J"
    hostile.update({"id": hostile_id, "tenant": "ten\u202eant\x07", "name": "evil\r\nkey_admin: forged\u0085\x7f",
                    "description": "line\u2028break", "masked": "full-key-stored-as-masked-0123456789",
                    "storedKey": "kh1.p1." + "A" * 43, "lastUsedAt": "2026-11-01T12:00:00.250Z",
                    "usage": {"creditsRemaining": 0, "lastRefill": iso(-3)}})
    with open(s.path, "ab") as f:
        f.write((json.dumps(hostile) + "\n").encode())
    digests = [json.loads(line)["storedKey"] for line in s.bytes().decode().splitlines() if line.strip()]

    def clean(out, what):
        check(UNSAFE.search(out) is None, "P1", f"{what}: no control, C1 or bidirectional character raw",
              UNSAFE.findall(out))
        leaked = [x for x in plaintexts + digests + ["full-key-stored-as-masked"] if x in out]
        check(leaked == [], "M3", f"{what}: no key, no digest, no unmasked key", leaked)
        check("api_key{" not in out and "std::" not in out, "O1", f"{what}: no C++ debug output", out[:300])

    r = s.run("list")
    check(r.returncode == 0 and r.stderr == "", "O1", "list exits 0", (r.returncode, r.stderr))
    clean(r.stdout, "list")
    lines = r.stdout.splitlines()
    header = ["ID", "STATUS", "TENANT", "NAME", "MASKED KEY", "PERIOD (UTC)", "RATE LIMIT", "ALLOWLIST",
              "CREDITS LEFT", "LAST USED (UTC)"]
    check(re.split(r"  +", lines[0]) == header, "O1", "one header row with every column", lines[0])
    check(len(lines) == 1 + 6, "O1", "one row per key", len(lines))
    rows = {}
    for line in lines[1:]:
        rows[line.split("  ")[0]] = line
    row = rows.get(active["id"], "")
    stored = s.records()[active["id"]]
    expected = ["Active", "acme", "nightly batch", active["masked"],
                second(exact(stored["activeFrom"])) + "/" + second(exact(stored["expireAt"])),
                "100/60s (burst 20)", "10.20.0.0/16,2001:db8::/32", "5", "never"]
    check(re.split(r"  +", row)[1:] == expected, "S3", "the Active key's row: every column", (row, expected))
    check(re.split(r"  +", rows.get(future["id"], ""))[1] == "Active in the future", "S3",
          "the future key's status", rows.get(future["id"]))
    check(re.split(r"  +", rows.get(expired["id"], ""))[1] == "Expired", "S3", "the expired key's status",
          rows.get(expired["id"]))
    check(re.split(r"  +", rows.get(revoked["id"], ""))[1] == "Revoked", "S3", "the revoked key's status",
          rows.get(revoked["id"]))
    cells = re.split(r"  +", rows.get(forever["id"], ""))
    check(len(cells) > 8 and cells[5].endswith("/-") and cells[6:] == ["-", "-", "-", "never"], "O1",
          "no end, no limit, no allowlist, unlimited credits, never used: -, -, -, -, never", cells)
    hostile_rows = [line for line in lines if line.startswith("7d07d425")]
    check(len(hostile_rows) == 1, "P1", "the hostile line is one row, its newline escaped", hostile_rows)
    if hostile_rows:
        cells = re.split(r"  +", hostile_rows[0])
        check(cells[0] == "7d07d425-8c75-4e14-99ea-db7ed05a30e2\\x1b[2J", "P1", "its id escaped", cells[0])
        check(cells[2] == "ten\\u202eant\\x07", "P1", "its tenant escaped", cells[2])
        check(cells[4] == "ful" + "*" * 30 + "789", "M1", "a full key stored as masked is shown masked (P2)",
              cells[4])
        check(cells[8] == "5", "K14", "credits spent, a daily refill due since: 5 left", cells[8])
        check(cells[9] == "2026-11-01T12:00:00Z", "O1", "last used, to the second", cells[9])

    r = s.run("list", "--tenant", "globex")
    check(r.returncode == 0 and len(r.stdout.splitlines()) == 3, "O1", "list --tenant: that tenant's rows only",
          r.stdout)

    r = s.run("list", "--format", "json")
    check(r.returncode == 0, "O1", "list --format json exits 0", r.stderr)
    clean(r.stdout, "list --format json")
    keys = json.loads(r.stdout or "[]")
    check(isinstance(keys, list) and len(keys) == 6, "O1", "one JSON array, an object per key", type(keys))
    by_id = {k["id"]: k for k in keys}
    a = by_id.get(active["id"], {})
    check([k for k in keys if "storedKey" in k] == [], "K11", "no object carries the stored digest")
    check(a.get("tenant") == "acme" and a.get("status") == "Active" and a.get("masked") == active["masked"],
          "S3", "the record, its tenant and its status as of now", a)
    check(a.get("policy") == {"allowedAddresses": ["10.20.0.0/16", "2001:db8::/32"],
                              "rateLimit": {"limit": 100, "periodMicroseconds": 60000000, "burst": 20},
                              "credits": {"initial": 5, "refill": {"interval": "daily", "amount": 5}}},
          "K14", "its policy: allowlist, rate limit, credits", a.get("policy"))
    check(a.get("usage") == {"creditsLeft": 5, "lastUsedAt": None}, "K14", "its usage: credits left, never used",
          a.get("usage"))
    check(by_id.get(forever["id"], {}).get("usage") == {"creditsLeft": None, "lastUsedAt": None} and
          by_id.get(forever["id"], {}).get("policy") == {}, "K14", "no policy: {}, unlimited credits: null")
    check([by_id.get(k["id"], {}).get("status") for k in (future, expired, revoked)] ==
          ["Active in the future", "Expired", "Revoked"], "S3", "every status as of now")
    h = by_id.get(hostile_id, {})
    check(h.get("name") == hostile["name"] and h.get("tenant") == hostile["tenant"], "P1",
          "escaped JSON reads back to the store's text", h)
    check(h.get("masked") == "ful" + "*" * 30 + "789", "M1", "the JSON masks a full key stored as masked (P2)",
          h.get("masked"))
    check(h.get("usage") == {"creditsLeft": 5, "lastUsedAt": "2026-11-01T12:00:00.250Z"}, "K14",
          "refills due applied, the last use exact", h.get("usage"))

    r = s.run("show", "--id", active["id"])
    check(r.returncode == 0 and r.stderr == "", "O1", "show exits 0", (r.returncode, r.stderr))
    clean(r.stdout, "show")
    fields = dict(re.match(r"([^:]+): +(.*)", line).groups() for line in r.stdout.splitlines())
    record = s.records()[active["id"]]
    check(fields == {"id": active["id"], "tenant": "acme", "name": "nightly batch", "description": "-",
                     "status": "Active", "masked key": active["masked"], "groups": "user:pf",
                     "period": record["activeFrom"] + "/" + record["expireAt"], "rate limit": "100/60s (burst 20)",
                     "allowlist": "10.20.0.0/16,2001:db8::/32", "credits left": "5", "refill": "daily to 5",
                     "last used": "never", "created": record["createdAt"], "updated": record["updatedAt"]},
          "O1", "show: every field, instants exact", fields)
    r = s.run("show", "--id", hostile_id)
    check(r.returncode == 0, "P1", "show of the hostile line exits 0", r.stderr)
    clean(r.stdout, "show of the hostile line")
    check("name:         evil\\x0d\\x0akey_admin: forged\\u0085\\x7f\n" in r.stdout, "P1",
          "its name on one line, escaped", r.stdout)
    check("description:  line\\u2028break\n" in r.stdout, "P1", "its description escaped", r.stdout)
    r = s.run("show", "--id", active["id"], "--format", "JSON")
    check(r.returncode == 0 and json.loads(r.stdout or "null") == a, "O1",
          "show --format JSON (any case): the key's object, as list gives it", r.stdout)
    r = s.run("show", "--id", "no-such-id\x1b]0;x\x07")
    check(r.returncode == 1 and r.stdout == "", "O1", "show of an unknown id: exit 1, nothing on stdout",
          (r.returncode, r.stdout))
    check('--id: no key in the store has the id "no-such-id\\x1b]0;x\\x07"' in r.stderr and
          UNSAFE.search(r.stderr) is None, "P1", "the message names the id, escaped", r.stderr)
    r = s.run("show", "--id", active["id"], "--format", "yaml")
    check(r.returncode == 2 and '--format: expected table or json, got "yaml"' in r.stderr, "O1",
          "show --format yaml: a usage error", (r.returncode, r.stderr))
    check(s.records() is not None and s.records()[hostile_id]["name"] == hostile["name"], "P1",
          "reading changed nothing")
    s.done()


def section_changes():
    s = Store("changes")
    a = created(s.create("acme", "--description", "first"), "a key")
    b = created(s.create("acme"), "another key")
    if a is None or b is None:
        return
    digests = [json.loads(line)["storedKey"] for line in s.bytes().decode().splitlines() if line.strip()]

    def clean(r, what):
        leaked = [x for x in (a["key"], b["key"], *digests) if x in r.stdout + r.stderr]
        check(leaked == [], "M3", f"{what}: no key, no digest", leaked)

    r = s.run("deactivate", "--id", a["id"])
    check(r.returncode == 0 and r.stdout == f"deactivated key {a['id']}: status Active -> Revoked\n", "K6",
          "deactivate prints the change of status", (r.returncode, r.stdout, r.stderr))
    clean(r, "deactivate")
    before = s.bytes()
    r = s.run("deactivate", "--id", a["id"])
    check(r.returncode == 0 and r.stdout == f"key {a['id']} is already Revoked: nothing changed\n", "K6",
          "deactivating again says nothing changed", (r.returncode, r.stdout))
    check(s.bytes() == before, "K6", "and writes nothing")

    old = s.records()[b["id"]]
    r = s.run("update", "--id", b["id"], "--name", "renamed", "--from", "2026-01-01", "--until", "+400d",
              "--rate", "5/1", "--allow", "10.0.0.0/8", "--credits", "100", "--refill", "monthly:1")
    clean(r, "update")
    check(r.returncode == 0 and r.stderr == "", "K6", "update exits 0", (r.returncode, r.stderr))
    lines = r.stdout.splitlines()
    check(lines[:1] == [f"updated key {b['id']}: status Active -> Active"], "K6",
          "update's first line: the status before and after", lines[:1])
    check(sorted(lines[1:]) == sorted([
        '  name: "key of acme" -> "renamed"',
        f"  period: {old['activeFrom']}/{old['expireAt']} -> 2026-01-01T00:00:00.000Z/2027-02-05T00:00:00.000Z",
        "  rate limit: - -> 5/1s",
        "  allowlist: - -> 10.0.0.0/8",
        "  credits left: - -> 100",
        "  refill: - -> monthly on day 1 to 100"]), "O1", "then one line per field changed: label: old -> new",
        lines[1:])
    r = s.run("update", "--id", b["id"], "--name", "renamed")
    check(r.returncode == 0 and r.stdout == f"updated key {b['id']}: status Active -> Active\n  no other field "
          "changed\n", "O1", "an update that changes no field says so", r.stdout)
    r = s.run("update", "--id", a["id"], "--reactivate", "--description", "")
    check(r.returncode == 0 and r.stdout.splitlines() == [f"updated key {a['id']}: status Revoked -> Active",
                                                         '  description: "first" -> -'],
          "K6", "a reactivation: Revoked -> Active, the description removed", r.stdout)

    before = s.bytes()
    r = s.run("delete", "--id", b["id"])
    check(r.returncode == 2 and r.stdout == "" and "delete: --confirm is required" in r.stderr, "K8",
          "delete without --confirm: a usage error naming --confirm", (r.returncode, r.stderr))
    check([x for x in FORBIDDEN if x in r.stderr] == [], "O1", "no C++ name in the refusal", r.stderr)
    check(s.bytes() == before, "K8", "the store unchanged")
    r = s.run("delete", "--id", b["id"], "--confirm")
    check(r.returncode == 0 and r.stdout == f'deleted key {b["id"]} (tenant acme, name "renamed")\n', "K8",
          "delete --confirm prints what it deleted", (r.returncode, r.stdout, r.stderr))
    clean(r, "delete")
    r = s.run("show", "--id", b["id"])
    check(r.returncode == 1 and f'no key in the store has the id "{b["id"]}"' in r.stderr, "K8",
          "the deleted key is gone", (r.returncode, r.stderr))
    s.done()


def section_times():
    s = Store("times")

    def made(*args):
        r = s.run("create", "--tenant", "acme", "--name", "timed", "--group", "user:pf", *args)
        if not check(r.returncode == 0, "T1", f"create {' '.join(args)}: exit 0", (r.returncode, r.stderr)):
            return None
        return s.records()[json.loads(r.stdout)["id"]]

    def period(k):
        return (k["activeFrom"], k["expireAt"]) if k else None

    check(period(made("--from", "2026-01-01", "--until", "+30d")) ==
          ("2026-01-01T00:00:00.000Z", "2026-01-31T00:00:00.000Z"), "T1",
          "a date is 00:00:00Z; +30d counts from --from")
    check(period(made("--from", "2026-01-01T10:30:00+01:00", "--until", "2026-01-02t00:00:00z")) ==
          ("2026-01-01T09:30:00.000Z", "2026-01-02T00:00:00.000Z"), "T1", "T1 timestamps, the offset applied")
    check(period(made("--from", "2024-02-29", "--until", "+1s")) ==
          ("2024-02-29T00:00:00.000Z", "2024-02-29T00:00:01.000Z"), "T1", "29 February of a leap year; +1s taken")
    for until, delta in (("+12h", datetime.timedelta(hours=12)), ("+45m", datetime.timedelta(minutes=45)),
                         ("+90s", datetime.timedelta(seconds=90))):
        t0 = datetime.datetime.now(datetime.timezone.utc)
        k = made("--from", "NOW", "--until", until)
        t1 = datetime.datetime.now(datetime.timezone.utc)
        if k:
            start, end = exact(k["activeFrom"]), exact(k["expireAt"])
            check(t0 - datetime.timedelta(milliseconds=1) <= start <= t1 and end - start == delta, "T1",
                  f"--from NOW (any case) is the clock; {until} counts from it", (t0, start, end, t1))
    check(period(made("--from", "9999-12-30", "--until", "+1d")) ==
          ("9999-12-30T00:00:00.000Z", "9999-12-31T00:00:00.000Z"), "T1", "the year 9999 is reached")

    k = made("--from", "2026-01-01", "--until", "2026-01-02")
    if k:
        t0 = datetime.datetime.now(datetime.timezone.utc)
        r = s.run("update", "--id", k["id"], "--until", "+1d")
        t1 = datetime.datetime.now(datetime.timezone.utc)
        end = exact(s.records()[k["id"]]["expireAt"])
        check(r.returncode == 0 and t0 + datetime.timedelta(days=1) - datetime.timedelta(milliseconds=1) <= end <=
              t1 + datetime.timedelta(days=1), "T1", "update --until +1d without --from counts from now",
              (r.returncode, r.stderr, end))
        r = s.run("update", "--id", k["id"], "--from", "2026-02-01", "--until", "+1d")
        check(r.returncode == 0 and period(s.records()[k["id"]]) ==
              ("2026-02-01T00:00:00.000Z", "2026-02-02T00:00:00.000Z"), "T1",
              "update --until +1d with --from counts from --from", (r.returncode, r.stderr))

    before = s.bytes()
    for args, message in (
            (("--from", "2026-01-01", "--until", "+0d"),
             '--until: "+0d": the amount must be at least 1'),
            (("--from", "2026-01-01", "--until", "+0s"),
             '--until: "+0s": the amount must be at least 1'),
            (("--from", "2026-01-01", "--until", "+999999999999d"),
             '--until: "+999999999999d" ends after the year 9999'),
            (("--from", "9999-12-30", "--until", "+2d"),
             '--until: "+2d" ends after the year 9999'),
            (("--from", "2026-02-30", "--until", "+1d"),
             '--from: "2026-02-30" is not a day of the calendar'),
            (("--from", "2025-02-29", "--until", "+1d"),
             '--from: "2025-02-29" is not a day of the calendar'),
            (("--from", "2026-01-01", "--until", "+1w"),
             '--until: "+1w": expected +N followed by d (days), h (hours), m (minutes) or s (seconds)'),
            (("--from", "2026-01-01", "--until", "+1D"),
             '--until: "+1D": expected +N followed by d (days), h (hours), m (minutes) or s (seconds)'),
            (("--from", "+1d", "--until", "+2d"),
             '--from: "+1d": a relative time (+N) is not taken here'),
            (("--from", "2026-01-01", "--until", "tomorrow\x1b[2J\u202e"),
             '--until: expected now, YYYY-MM-DD (00:00:00Z) or a timestamp (T1), or +N with d, h, m or s '
             '(days, hours, minutes, seconds), got "tomorrow\\x1b[2J\\u202e"')):
        r = s.run("create", "--tenant", "acme", "--name", "refused", "--group", "user:pf", *args)
        check(r.returncode == 2 and r.stdout == "" and r.stderr.startswith("key_admin: " + message) and
              "\nusage: key_admin" in r.stderr and UNSAFE.search(r.stderr) is None, "T1",
              f"{' '.join(args)!r}: exit 2, naming the flag and the text", (r.returncode, r.stderr[:300]))
    check(s.bytes() == before, "T1", "nothing refused was written")
    s.done()


def section_errors():
    s = Store("errors")
    a = created(s.create("acme"), "a key")
    if a is None:
        return
    s.run("deactivate", "--id", a["id"])
    base = ("create", "--tenant", "acme", "--name", "n", "--from", iso(-1), "--until", iso(30))
    cases = [
        (("delete", "--id", a["id"]), 2, "--confirm"),
        (("create", "--tenant", "acme", "--name", " ", "--from", iso(-1), "--until", iso(30), "--group", "user:pf"),
         1, "--name:"),
        ((*base, "--group", "admin"), 1, "--group:"),
        ((*base, "--group", "user:pf", "--group", "user:pf"), 1, "--group: repeats an earlier --group"),
        ((*base,), 1, "--group: at least one group is required"),
        (("create", "--tenant", "acme", "--name", "n", "--from", iso(2), "--until", iso(1), "--group", "user:pf"),
         1, "--until: "),
        (("update", "--id", a["id"], "--reactivate", "--until", "2001-01-01"), 1, "--until: "),
        (("update", "--id", a["id"], "--reactivate", "--from", "9999-12-31T23:59:59.5Z"), 1, "--from: "),
        (("update", "--id", a["id"], "--description", "x"), 1, "--reactivate"),
        ((*base, "--group", "user:pf", "--rate", "0/5"), 2, "--rate: "),
        ((*base, "--group", "user:pf", "--rate", "5/0"), 2, "--rate: the period must be at least 1 second"),
        ((*base, "--group", "user:pf", "--burst", "3"), 2, "--burst needs --rate"),
        ((*base, "--group", "user:pf", "--refill", "daily"), 2, "--refill needs --credits"),
        ((*base, "--group", "user:pf", "--credits", "5", "--refill", "monthly:32"), 2, "--refill: "),
        ((*base, "--group", "user:pf", "--credits", "five"), 2, "--credits: "),
        ((*base, "--group", "user:pf", "--allow", "10.0.0.0/33"), 2, "--allow: "),
        ((*base, "--group", "user:pf", "--own-key-env", "SHORT_KEY"), 2, "--own-key-env: the key in SHORT_KEY: "),
        ((*base, "--group", "user:pf", "--own-key-env", "UNSET_KEY"), 2, "--own-key-env: "),
        (("list", "--format", "yaml"), 2, "--format: "),
        (("show", "--id", "nope"), 1, '--id: no key in the store has the id "nope"'),
        (("update", "--id", "nope", "--name", "x"), 1, '--id: no key in the store has the id "nope"'),
        (("deactivate", "--id", "nope"), 1, '--id: no key in the store has the id "nope"'),
        (("rotate", "--id", "nope"), 1, '--id: no key in the store has the id "nope"'),
        (("delete", "--id", "nope", "--confirm"), 1, '--id: no key in the store has the id "nope"'),
    ]
    before = s.bytes()
    for args, status, flag in cases:
        r = s.run(*args, env={"SHORT_KEY": "short-key"})
        check(r.returncode == status and r.stdout == "", "O1", f"{' '.join(args)}: exit {status}",
              (r.returncode, r.stdout, r.stderr))
        check(flag in r.stderr, "O1", f"{' '.join(args)}: names {flag!r}", r.stderr)
        check([x for x in FORBIDDEN if x in r.stderr] == [], "O1", f"{' '.join(args)}: no C++ or library name",
              r.stderr)
        check("short-key" not in r.stderr, "M3", f"{' '.join(args)}: no key shown")
    check(s.bytes() == before, "O1", "no refused command wrote anything")
    s.done()


def section_text_flags():
    """P1 O1: every text flag given bytes that are not UTF-8, a control
    character or nothing is refused with exit 1 or 2 naming the flag (escaped),
    never exit 3 or a library's exception; --tenant as --name (exit 1)."""
    s = Store("text-flags")
    a = created(s.create("acme"), "a key")
    if a is None:
        return
    before = s.bytes()

    def run(*args):
        return subprocess.run([KEY_ADMIN, "--store", s.path, *args], env=s.environment({}), capture_output=True,
                              text=True, errors="surrogateescape")

    # The tenant is checked before the store is touched, as K3's name is.
    for tenant, why in (("a\udcffb", "--tenant: is not valid UTF-8"), ("", "--tenant: must not be empty"),
                        ("  ", "--tenant: must not be empty"),
                        ("a\x1bb", "--tenant: must not contain control characters"),
                        ("a\u0085b", "--tenant: must not contain control characters"),
                        ("t" * 129, "--tenant: must be at most 128 characters")):
        for args in (("create", "--tenant", tenant, "--name", "ok", "--from", "now", "--until", "+1d", "--group",
                      "user:pf"), ("list", "--tenant", tenant)):
            r = run(*args)
            check(r.returncode == 1 and r.stdout == "" and r.stderr.startswith("key_admin: " + why), "P1",
                  f"{args[0]} --tenant {tenant[:12]!r}: exit 1 naming --tenant", (r.returncode, r.stderr[:200]))
            check("line:" not in r.stderr and "json.exception" not in r.stderr, "O1",
                  f"{args[0]} --tenant {tenant[:12]!r}: no store line, no library exception", r.stderr[:200])
    r = run("create", "--tenant", "t" * 128, "--name", "ok", "--from", "now", "--until", "+1d", "--group", "user:pf")
    check(r.returncode == 0, "P1", "--tenant of 128 characters is taken", (r.returncode, r.stderr[:200]))
    r = run("create", "--tenant", "caf\u00e9 \u2603", "--name", "ok", "--from", "now", "--until", "+1d", "--group",
            "user:pf")
    check(r.returncode == 0, "P1", "--tenant in UTF-8 beyond ASCII is taken", (r.returncode, r.stderr[:200]))
    after = s.bytes()

    base = ("create", "--tenant", "acme", "--name", "n", "--from", "now", "--until", "+1d", "--group", "user:pf")
    for bad in ("a\udcffb", "a\x1bb", ""):
        cases = [
            ("--name", ("create", "--tenant", "acme", "--name", bad, "--from", "now", "--until", "+1d", "--group",
                        "user:pf")),
            ("--description", (*base, "--description", bad)),
            ("--group", ("create", "--tenant", "acme", "--name", "n", "--from", "now", "--until", "+1d", "--group",
                         bad)),
            ("--from", ("create", "--tenant", "acme", "--name", "n", "--from", bad, "--until", "+1d", "--group",
                        "user:pf")),
            ("--until", ("create", "--tenant", "acme", "--name", "n", "--from", "now", "--until", bad, "--group",
                         "user:pf")),
            ("--allow", (*base, "--allow", bad)),
            ("--rate", (*base, "--rate", bad)),
            ("--burst", (*base, "--rate", "5/1", "--burst", bad)),
            ("--credits", (*base, "--credits", bad)),
            ("--refill", (*base, "--credits", "5", "--refill", bad)),
            ("--own-key-env", (*base, "--own-key-env", bad)),
            ("--id", ("show", "--id", bad)),
            ("--id", ("update", "--id", bad, "--name", "x")),
            ("--name", ("update", "--id", a["id"], "--name", bad)),
            ("--format", ("list", "--format", bad)),
        ]
        if bad == "":
            cases = [c for c in cases if c[0] not in ("--description",)]  # empty: no description, taken
        for flag, args in cases:
            r = run(*args)
            check(r.returncode in (1, 2) and r.stdout == "" and flag in r.stderr, "O1",
                  f"{flag} {bad!r}: exit 1 or 2 naming the flag", (r.returncode, r.stderr[:200]))
            check("json.exception" not in r.stderr and "\udcff" not in r.stderr and UNSAFE.search(r.stderr) is None,
                  "P1", f"{flag} {bad!r}: the text escaped, no library exception", r.stderr[:200])
    check(s.bytes() == after and after.startswith(before), "O1", "no refused command wrote anything")
    s.done()


for name in SECTIONS:
    globals()["section_" + name]()
print(f"{failures} failure(s)")
sys.exit(min(failures, 100))
