#!/usr/bin/env python3
"""The generative hostile stage for the example programs, run as an attacker
runs them: hostile inputs derived from each program's own sample (every value
replaced by each class of attack, cuts, BOM, trailing bytes) given as a file,
on standard input, as arguments and in the environment, each run under an
address-space and CPU-time limit.

Each run must: exit with one of the program's documented codes (never a
signal, never a limit); write no raw control character but LF (C0, DEL, C1,
bidi controls, U+2028/9) and no line forged by the input; echo no secret of
the input (keys, authentication values, signing secrets; webhook_dispatch
prints authentication values on stdout by design, so only its stderr is
checked). A fixed seed picks the positions, so a failure replays.

  run_programs.py --bin-dir DIR --samples DIR [--sanitized] [--program NAME]
"""
import argparse
import json
import os
import random
import resource
import subprocess
import sys

FULL_KEY = "b1e7c2d4-5a6f-4b8c-9d0e-1f2a3b4c5d0d2"  # wrongly held in `masked` (P2)
RECEIVER_KEY = "5b0f3c9e-2d7a-4f61-8e4b-9c2a1d0e7f36"
SIGNING_SECRET = "whsec_S0VZS0VZS0VZS0VZS0VZS0VZS0VZS0VZS0VZS0VZS0U="

HOSTILE = [b"\xff", b"\xc0\xaf", b"\xed\xa0\x80", b"\x1b[31m", b"\r\nFORGED line", b"\x00x", b"\x7f",
           b"\xc2\x9b31m", b"\xc2\x85", b"\xe2\x80\xae", b"\xe2\x81\xa6", b"\xe2\x80\xa8",
           b"\\u001b[31m", b"\\r\\nFORGED line", b"\\u0000", b"\\u009b", b"\\u202e", b"\\ud800"]
NUMBERS = [b"1e400", b"-0", b"9223372036854775808", b"18446744073709551616", b"1.5", b'"1"', b"-1"]
WRONG = [b"null", b"true", b"{}", b"[]", b'""', b"0"]
DEEP = b"[" * 100000 + b"]" * 100000
LONG = b'"' + b"x" * (1 << 20) + b'"'

failures = []
runs = 0


def positions(doc, pointer=()):
    yield pointer, doc
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from positions(v, pointer + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from positions(v, pointer + (i,))


def splice(doc, pointer, raw):
    """The compact document with the value at `pointer` replaced by raw bytes."""
    hole = "@@hole@@"
    if not pointer:
        return raw
    copy = json.loads(json.dumps(doc))
    target = copy
    for step in pointer[:-1]:
        target = target[step]
    target[pointer[-1]] = hole
    text = json.dumps(copy, separators=(",", ":"), ensure_ascii=False).encode()
    return text.replace(b'"' + hole.encode() + b'"', raw, 1)


def attacks(sample, rng, count, keep=lambda p, raw: True):
    """(class, where, bytes) for a fixed-seed sample of positions and classes."""
    doc = json.loads(sample)
    ps = list(positions(doc))
    compact = json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode()
    out = []
    for pointer, value in rng.sample(ps, min(count, len(ps))):
        where = "/".join(map(str, pointer))
        classes = [("wrong type", w) for w in WRONG] + [("number", n) for n in NUMBERS]
        classes += [("deep nesting", DEEP), ("long string", LONG)]
        if isinstance(value, str):
            inner = json.dumps(value, ensure_ascii=False)[1:-1].encode()
            classes += [("string", b'"' + inner + h + b'"') for h in HOSTILE]
        if pointer and isinstance(pointer[-1], str):
            name = json.dumps(pointer[-1]).encode()
            original = json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()
            classes.append(("repeated member", original + b"," + name + b":null"))
        if isinstance(value, dict):
            for h in HOSTILE[:6]:
                member = b'"n' + h + b'"'
                rest = json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()[1:]
                classes.append(("hostile member name",
                                b"{" + member + b":1," + member + b":2" + (b"" if rest == b"}" else b",") + rest))
        for cls, raw in rng.sample(classes, min(4, len(classes))):
            if keep(pointer, raw):
                out.append((cls, where, splice(doc, pointer, raw)))
    for n in sorted(rng.sample(range(len(compact)), min(12, len(compact)))):
        out.append(("truncated", str(n), compact[:n]))
    for t in [b"\xef\xbb\xbf" + compact, compact + b" x", compact + b"\x00", compact + b"\n\x1b[2J", b"", b"\xff"]:
        out.append(("bom or trailing bytes", "", t))
    return out


def exe(args, name):
    """The program, in DIR/NAME/NAME (a build tree's examples) or DIR/NAME."""
    nested = os.path.join(args.bin_dir, name, name)
    return nested if os.path.isfile(nested) else os.path.join(args.bin_dir, name)


def limits(sanitized):
    def apply():
        resource.setrlimit(resource.RLIMIT_CPU, (20, 20))
        if not sanitized:  # AddressSanitizer reserves terabytes of address space
            resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
    return apply


def raw_control(data):
    for i, c in enumerate(data):
        if (c < 0x20 and c != 0x0A) or c == 0x7F:
            return i
        nxt = data[i + 1:i + 3]
        if c == 0xC2 and nxt[:1] and 0x80 <= nxt[0] <= 0x9F:
            return i
        if c == 0xD8 and nxt[:1] == b"\x9c":
            return i
        if c == 0xE2 and len(nxt) == 2 and ((nxt[0] == 0x80 and (nxt[1] in (0x8E, 0x8F) or 0xA8 <= nxt[1] <= 0xAE))
                                            or (nxt[0] == 0x81 and 0xA6 <= nxt[1] <= 0xA9)):
            return i
    return None


def run(args, name, argv, stdin=b"", env=None, codes=(0, 1, 2), secrets=(), stdout_secrets=True, what=""):
    global runs
    runs += 1
    full_env = {"PATH": os.environ.get("PATH", ""), "LANG": "C.UTF-8"}
    for k in ("ASAN_OPTIONS", "UBSAN_OPTIONS"):
        if k in os.environ:
            full_env[k] = os.environ[k]
    full_env.update(env or {})
    try:
        p = subprocess.run([exe(args, name)] + argv, input=stdin, env=full_env,
                           capture_output=True, timeout=60, preexec_fn=limits(args.sanitized))
    except subprocess.TimeoutExpired:
        failures.append(f"{name} {what}: did not end within 60 s")
        return None
    problems = []
    if p.returncode not in codes:
        problems.append(f"exit status {p.returncode} (a negative status is a signal), expected one of {codes}")
    for stream, data in (("stdout", p.stdout), ("stderr", p.stderr)):
        at = raw_control(data)
        if at is not None:
            problems.append(f"raw control byte {data[at:at + 3]!r} at {at} of {stream}")
        if b"\nFORGED" in data or data.startswith(b"FORGED"):
            problems.append(f"a line forged by the input in {stream}")
        for s in secrets:
            if (stream == "stderr" or stdout_secrets) and s.encode() in data:
                problems.append(f"the secret {s[:6]}... in {stream}")
    if problems:
        failures.append(f"{name} {what}: " + "; ".join(problems) + f"\n    stderr: {p.stderr[:300]!r}")
    return p


def write(args, tag, data):
    path = os.path.join(args.work, tag)
    with open(path, "wb") as f:
        f.write(data)
    return path


def key_audit(args, rng):
    sample = json.load(open(os.path.join(args.samples, "key_audit", "sample.json"), encoding="utf-8"))
    sample["data"]["result"][0]["masked"] = FULL_KEY
    text = json.dumps(sample)
    names = [r["name"] for r in sample["data"]["result"]]
    p = run(args, "key_audit", ["--now", "2026-11-22T12:00:00Z", "--status", "all", "-"], text.encode(),
            secrets=[FULL_KEY], what="(the sample)")
    if p is not None and p.returncode == 0:
        for n in names:  # every valid record is reported, the full key masked
            if n.encode() not in p.stdout and json.dumps(n)[1:-1].encode() not in p.stdout:
                failures.append(f"key_audit: the valid record {n!r} is missing from the report")
    for i, (cls, where, data) in enumerate(attacks(text, rng, 20)):
        mode = i % 3
        fmt = ["table", "json"][i % 2]
        base = ["--now", "2026-11-22T12:00:00Z", "--status", "all", "--format", fmt]
        if mode == 0:
            run(args, "key_audit", base + ["-"], data, secrets=[FULL_KEY], what=f"stdin {cls} at {where}")
        elif mode == 1:
            run(args, "key_audit", base + [write(args, "ka.json", data)], secrets=[FULL_KEY],
                what=f"file {cls} at {where}")
        else:
            run(args, "key_audit", base + ["--since", "2026-01-01T00:00:00Z", "-"], data, secrets=[FULL_KEY],
                what=f"--since {cls} at {where}")
    for h in rng.sample(HOSTILE, 5) + [b"x" * 100000, b"--now=", b""]:
        arg = h.replace(b"\x00", b"0").decode("utf-8", "surrogateescape")
        for argv in (["--now", arg], ["--status", arg], ["--format", arg], ["--since", arg, "--now",
                     "2026-11-22T12:00:00Z"], [arg], ["--" + arg]):
            run(args, "key_audit", argv, text.encode(), what=f"argument {argv!r:.60}")
        run(args, "key_audit", [write(args, "ka" + arg.replace("/", "_")[:50] + ".json", text.encode())],
            what="a file name with hostile bytes")


def webhook_dispatch(args, rng):
    sample = json.load(open(os.path.join(args.samples, "webhook_dispatch", "sample.json"), encoding="utf-8"))
    sample["webhooks"][0]["signingSecret"] = SIGNING_SECRET
    text = json.dumps(sample)
    secrets = [SIGNING_SECRET] + [a["value"] for w in sample["webhooks"] for a in w.get("auth", [])]
    run(args, "webhook_dispatch", ["--now", "2026-11-22T12:00:00Z", "-"], text.encode(), secrets=secrets,
        stdout_secrets=False, what="(the sample)")
    for i, (cls, where, data) in enumerate(attacks(text, rng, 20)):
        argv = ["--now", "2026-11-22T12:00:00Z", "-" if i % 2 else write(args, "wd.json", data)]
        run(args, "webhook_dispatch", argv, data, secrets=secrets, stdout_secrets=False, what=f"{cls} at {where}")
    for h in rng.sample(HOSTILE, 5) + [b"x" * 100000]:
        arg = h.replace(b"\x00", b"0").decode("utf-8", "surrogateescape")
        for argv in (["--now", arg, "-"], [arg], ["--" + arg]):
            run(args, "webhook_dispatch", argv, text.encode(), what=f"argument {argv!r:.60}")


def webhook_deliver(args, rng):
    sample = json.load(open(os.path.join(args.samples, "webhook_dispatch", "sample.json"), encoding="utf-8"))
    sample["webhooks"][0]["signingSecret"] = SIGNING_SECRET
    sample["tenant"]["webhooksEnabled"] = False  # nothing is sent: no network
    text = json.dumps(sample)
    secrets = [SIGNING_SECRET] + [a["value"] for w in sample["webhooks"] for a in w.get("auth", [])]
    switch = ("tenant", "webhooksEnabled")
    for i, (cls, where, data) in enumerate(attacks(text, rng, 12, keep=lambda p, raw: p[:2] != switch[:len(p[:2])]
                                                   or raw not in (b"true",))):
        if b'"webhooksEnabled":false' not in data and b'"webhooksEnabled": false' not in data:
            continue  # an attack that could switch sending on stays off the network
        run(args, "webhook_deliver", ["--timeout", "1", "-"], data, secrets=secrets, what=f"{cls} at {where}")
    for h in rng.sample(HOSTILE, 3):
        arg = h.replace(b"\x00", b"0").decode("utf-8", "surrogateescape")
        for argv in (["--time-scale", arg, "-"], ["--timeout", arg, "-"], ["--resolve", arg, "-"], [arg]):
            run(args, "webhook_deliver", argv, text.encode(), secrets=secrets, what=f"argument {argv!r:.60}")


def webhook_receiver(args, rng):
    sample = json.load(open(os.path.join(args.samples, "webhook_receiver", "sample_request.json"), encoding="utf-8"))
    text = json.dumps(sample)
    env = {"KEYHOOK_RECEIVER_KEY": RECEIVER_KEY}
    run(args, "webhook_receiver", ["-"], text.encode(), env=env, secrets=[RECEIVER_KEY], what="(the sample)")
    # The key is in the input too (the request carries it): the output may not echo it.
    for i, (cls, where, data) in enumerate(attacks(text, rng, 20)):
        argv = ["-"] if i % 2 else [write(args, "wr.json", data)]
        run(args, "webhook_receiver", argv, data, env=env, secrets=[RECEIVER_KEY], what=f"{cls} at {where}")
    for h in rng.sample(HOSTILE, 5) + [b"x" * 100000, b""]:
        value = h.replace(b"\x00", b"0").decode("utf-8", "surrogateescape")
        run(args, "webhook_receiver", ["-"], text.encode(), env={"KEYHOOK_RECEIVER_KEY": "k" + value + RECEIVER_KEY},
            secrets=[RECEIVER_KEY], what=f"a hostile expected key {value[:20]!r}")
        for argv in (["--key-env", value, "-"], [value], ["--" + value]):
            run(args, "webhook_receiver", argv, text.encode(), env=env, secrets=[RECEIVER_KEY],
                what=f"argument {argv!r:.60}")


def self_test():
    """The checks find what they look for."""
    assert raw_control(b"a\x1b") == 1 and raw_control(b"a\xc2\x9b") == 1 and raw_control(b"\xe2\x80\xae") == 0
    assert raw_control(b"a\n\xc2\xa0\xe2\x80\x8d") is None
    doc = {"a": [1, {"b": "c"}]}
    assert splice(doc, ("a", 1, "b"), b"1e400") == b'{"a":[1,{"b":1e400}]}'


def main():
    self_test()
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin-dir", required=True, help="directory holding the example programs")
    parser.add_argument("--samples", required=True, help="the examples' source directory")
    parser.add_argument("--work", default=None, help="where input files are written")
    parser.add_argument("--sanitized", action="store_true", help="no address-space limit (ASan)")
    parser.add_argument("--program", action="append", help="run only these programs")
    args = parser.parse_args()
    args.work = args.work or os.getcwd()
    programs = {"key_audit": key_audit, "webhook_dispatch": webhook_dispatch, "webhook_receiver": webhook_receiver,
                "webhook_deliver": webhook_deliver}
    for name, fn in programs.items():
        if args.program and name not in args.program:
            continue
        if not os.path.isfile(exe(args, name)):  # webhook_deliver needs libcurl
            print(f"{name}: not built, skipped")
            continue
        before = runs
        fn(args, random.Random(20261122))
        print(f"{name}: {runs - before} runs")
    for f in failures:
        print("FAILED:", f)
    print(f"{runs} runs, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
