#!/usr/bin/env python3
"""README.md's webhook pipeline, run as the README shows it: the ```sh block
after the line "<!-- tested: tests/cli/readme_pipeline.py -->" is run by
bash, word for word, in a directory holding a hooks.json whose one webhook
points at a webhook_receiver --listen this script starts (rule O1's exit
statuses: 0 when done).

  - webhook_dispatch --allow-local hooks.json prints the requests it makes;
  - webhook_deliver reads the same hooks.json (webhook_dispatch's INPUT) and
    delivers it: exit 0, one attempt line, "delivered", the receiver got it;
  - webhook_dispatch's OUTPUT is no input of webhook_deliver: piped into it,
    it is refused as bad input (exit 1), nothing sent.

Every check prints "ok" or "FAIL"; the exit status is the number of failures
(capped). Waits are on conditions, never on sleeps.
    readme_pipeline.py README.md WEBHOOK_DISPATCH WEBHOOK_DELIVER WEBHOOK_RECEIVER"""
import json, os, re, shutil, subprocess, sys, tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "interop"))
from waits import BOUND, stop  # noqa: E402

README, DISPATCH, DELIVER, RECEIVER = sys.argv[1:5]
MARKER = "<!-- tested: tests/cli/readme_pipeline.py -->\n```sh\n"
KEY = "5b0f3c9e-2d7a-4f61-8e4b-9c2a1d0e7f36"
failures = 0


def check(ok, what, detail=""):
    global failures
    failures += not ok
    print(("ok   " if ok else "FAIL ") + f"[O1] {what}" + ("" if ok else f": {detail!r}"), flush=True)
    return ok


text = open(README, encoding="utf-8").read()
start = text.find(MARKER)
if not check(start >= 0, "README.md has the tested pipeline block", MARKER):
    sys.exit(1)
block = text[start + len(MARKER):text.index("```", start + len(MARKER))]

# The programs under their own names, as an installed copy would be found.
bin_dir = tempfile.mkdtemp(prefix="keyhook-readme-bin-")
for program in (DISPATCH, DELIVER):
    os.symlink(os.path.abspath(program), os.path.join(bin_dir, os.path.basename(program)))
env = {k: v for k, v in os.environ.items() if not k.startswith("KEYHOOK_")}
env["PATH"] = bin_dir + os.pathsep + env.get("PATH", "")

receiver = subprocess.Popen([RECEIVER, "--listen", "127.0.0.1:0"], stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**env, "KEYHOOK_RECEIVER_KEY": KEY})
work = tempfile.mkdtemp(prefix="keyhook-readme-")
try:
    line = receiver.stderr.readline()  # returns once the receiver listens, or has exited
    port = re.search(r"listening on 127\.0\.0\.1:(\d+)", line)
    if not check(port is not None, "the receiver listens", line):
        sys.exit(1)
    hooks = {
        "tenant": {"name": "acme-lending", "webhooksEnabled": True},
        "webhooks": [{"name": "crm-sync", "endpoint": f"http://127.0.0.1:{port.group(1)}/hooks/keyhook",
                      "saved": True, "events": ["PublishEngine"],
                      "auth": [{"in": "header", "name": "x-api-key", "value": KEY}]}],
        "event": {"UserAction": "PublishEngine", "FolderName": "Loan Calculators", "ServiceName": "Mortgage quote",
                  "EntityId": "5c3e8a2f-9d41-4b7e-a1c6-2f8d9e0b7a13", "AuditType": "ProductEngine"},
    }
    with open(os.path.join(work, "hooks.json"), "w") as f:
        json.dump(hooks, f)

    r = subprocess.run(["bash", "-euo", "pipefail", "-c", block], cwd=work, env=env, capture_output=True,
                       text=True, timeout=BOUND, stdin=subprocess.DEVNULL)
    check(r.returncode == 0, "the README's pipeline runs: exit 0", (r.returncode, r.stderr))
    with open(os.path.join(work, "requests.json")) as f:
        requests = json.load(f)["requests"]
    check(len(requests) == 1 and requests[0]["webhook"] == "crm-sync",
          "webhook_dispatch hooks.json: the one request hooks.json makes", requests)
    with open(os.path.join(work, "attempts.jsonl")) as f:
        lines = [json.loads(l) for l in f if l.strip()]
    attempts = [l for l in lines if "deliveryId" in l]
    check(lines and lines[-1] == {"summary": {"delivered": 1, "gaveUp": 0, "disabled": 0, "pending": 0}},
          "webhook_deliver's last line is its summary", lines[-1:])
    check(len(attempts) == 1 and attempts[0].get("outcome") == "delivered" and attempts[0].get("status") == 200,
          "webhook_deliver hooks.json: the same input delivered in one attempt", attempts)
    check(attempts and requests and attempts[0].get("deliveryId") is not None,
          "the attempt line names its delivery", attempts)

    # webhook_dispatch's output is not webhook_deliver's input: refused, nothing sent.
    r = subprocess.run(["bash", "-o", "pipefail", "-c",
                        "webhook_dispatch --allow-local hooks.json | webhook_deliver --allow-local -"],
                       cwd=work, env=env, capture_output=True, text=True, timeout=BOUND, stdin=subprocess.DEVNULL)
    check(r.returncode == 1, "webhook_dispatch's output piped into webhook_deliver: bad input, exit 1",
          (r.returncode, r.stderr))
    check(r.stdout == "", "and nothing is sent", r.stdout)
finally:
    stop(receiver)
    shutil.rmtree(work, ignore_errors=True)
    shutil.rmtree(bin_dir, ignore_errors=True)

sys.exit(min(failures, 100))
