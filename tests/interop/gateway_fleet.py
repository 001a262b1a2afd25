"""Several key_gateway processes on one PostgreSQL key store, nginx in front:
the pieces the interop tests that run them share (gateway_postgres.py,
gateway_shared_limits.py; K17).

    checks = Checks()                      checks.check(ok, what, rule, detail); checks.finish(work)
    fleet = Fleet(KEY_ADMIN, KEY_GATEWAY, uri, env, work)
    fleet.create("acme", "--credits", "10")   key_admin create: {"id", "key", ...}; keys printed are kept
    fleet.admin("show", "--id", ID)        key_admin --store uri ...; exit 0 expected unless told
    port = fleet.start_gateway(extra)      key_gateway --store uri on a free port (its log in work)
    fleet.start_nginx(NGINX)               examples/key_gateway/nginx.conf, its one upstream gateway
                                           replaced by every gateway started, its port fleet.nginx_port
    ask(port, key)                         one gateway, as nginx's subrequest asks it: (status, code)
    Caller(port, via_nginx=False)          a keep-alive connection; caller(key) is an Answer
    fleet.stop_all()                       SIGTERM to each gateway and nginx

Every wait is on a condition with a deadline (waits.py), never a sleep."""
import datetime
import http.client
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections import namedtuple

from waits import BOUND, stop, wait_until

HERE = os.path.dirname(os.path.abspath(__file__))
NGINX_CONF = os.path.join(HERE, "..", "..", "examples", "key_gateway", "nginx.conf")
ROUTES = {"routes": [{"method": "*", "prefix": "/api/", "family": "Execute", "access": "read"}],
          "groups": {"user:pf": {"access": [{"level": "read"}]}}}


class Checks:
    """Check lines ("ok   [K17] what" or "FAIL [K17] what: detail") and their count of failures."""

    def __init__(self):
        self.failures = 0
        self.started_at = time.monotonic()

    def check(self, ok, what, rule="K17", detail=""):
        self.failures += not ok
        print(("ok   " if ok else "FAIL ") + f"[{rule}] {what}" + ("" if ok else f": {detail}"), flush=True)
        return ok

    def finish(self, work):
        """Prints the duration and the verdict; removes `work` when every check passed. Exits."""
        print(f"took {time.monotonic() - self.started_at:.1f} s", flush=True)
        if self.failures == 0:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"logs kept in {work}")
        print("all checks passed" if self.failures == 0 else f"{self.failures} check(s) failed", flush=True)
        sys.exit(1 if self.failures else 0)


def iso(days):
    t = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=days)
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def write_routes(work):
    path = os.path.join(work, "routes.json")
    with open(path, "w") as f:
        json.dump(ROUTES, f)
    return path


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


Answer = namedtuple("Answer", "status code headers")  # status None: no answer (code holds the error)


class Caller:
    """One keep-alive connection: to a gateway, asking as nginx's subrequest
    does about GET /api/things, or to nginx, as its client. caller(key) is an
    Answer; after a failure (no answer) the next call connects afresh."""

    def __init__(self, port, via_nginx=False, tenant="acme"):
        self.port, self.via_nginx, self.tenant = port, via_nginx, tenant
        self.conn = None

    def connect(self):
        self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=BOUND)
        self.conn.connect()

    def __call__(self, key):
        if self.via_nginx:
            path, headers = "/api/things", {"x-synthetic-key": key, "x-tenant-name": self.tenant}
        else:
            path, headers = "/.key_gateway", {"x-synthetic-key": key, "x-tenant-name": self.tenant,
                                              "X-Original-Method": "GET", "X-Original-URI": "/api/things",
                                              "X-Real-IP": "127.0.0.1"}
        try:
            if self.conn is None:
                self.connect()
            self.conn.request("GET", path, headers=headers)
            r = self.conn.getresponse()
            r.read()
            return Answer(r.status, r.getheader("x-keyhook-code"), {k.lower(): v for k, v in r.getheaders()})
        except (OSError, http.client.HTTPException) as e:
            self.close()
            return Answer(None, str(e) or type(e).__name__, {})

    def close(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None


def ask(port, key, tenant="acme", via_nginx=False):
    """One call on a connection of its own: (status, code)."""
    caller = Caller(port, via_nginx, tenant)
    try:
        answer = caller(key)
    finally:
        caller.close()
    return answer.status, answer.code


class Upstream(threading.Thread):
    """The service behind nginx: 200 to every request it is passed."""

    def __init__(self):
        super().__init__(daemon=True)
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(128)
        self.port = self.sock.getsockname()[1]

    def run(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self.serve, args=(conn,), daemon=True).start()

    @staticmethod
    def serve(conn):
        with conn:
            data = b""
            while True:
                while b"\r\n\r\n" not in data:
                    chunk = conn.recv(4096)
                    if not chunk:
                        return
                    data += chunk
                data = data.split(b"\r\n\r\n", 1)[1]
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nupstream\n")


class Fleet:
    """key_admin and key_gateways on the store `uri`, nginx in front; files in `work`."""

    def __init__(self, key_admin, key_gateway, uri, env, work, name="gateway"):
        self.key_admin, self.key_gateway, self.uri, self.env, self.work = key_admin, key_gateway, uri, env, work
        self.name = name  # the gateways' logs are work/NAME0.log, NAME1.log, ...
        self.routes = write_routes(work)
        self.printed_keys = []
        self.gateways, self.ports, self.logs = [], [], []
        self.nginx = None
        self.nginx_port = None

    def admin(self, *args, expect=0, peppers=None):
        env = dict(self.env)
        if peppers:
            env["KEYHOOK_PEPPERS"] = peppers
        p = subprocess.run([self.key_admin, "--store", self.uri, *args], env=env, capture_output=True, text=True,
                           timeout=BOUND)
        if expect is not None and p.returncode != expect:
            raise SystemExit(f"key_admin {args[0]}: exit {p.returncode}: {p.stderr}")
        return p

    def create(self, tenant="acme", *extra):
        out = json.loads(self.admin("create", "--tenant", tenant, "--name", f"key {len(self.printed_keys)}", "--from",
                                    iso(-1), "--until", iso(30), "--group", "user:pf", *extra).stdout)
        self.printed_keys.append(out["key"])
        return out

    def show(self, key_id):
        """key_admin show --format json, parsed."""
        return json.loads(self.admin("show", "--id", key_id, "--format", "json").stdout)

    def start_gateway(self, extra=(), slot=None, env=None):
        """A key_gateway with --proxy nginx on a free port; returns the port. `slot`
        replaces the gateway of that index (nginx keeps its old port list);
        `env` adds to the fleet's environment."""
        n = len(self.gateways) if slot is None else slot
        log = open(os.path.join(self.work, f"{self.name}{n}.log"), "a")
        g = subprocess.Popen([self.key_gateway, "--listen", "127.0.0.1:0", "--store", self.uri, "--routes",
                              self.routes, "--proxy", "nginx", "--trusted-proxy", "127.0.0.1/32", *extra],
                             env={**self.env, **(env or {})}, stdout=subprocess.PIPE, stderr=log, text=True)
        log.close()
        m = re.search(r"listening on 127\.0\.0\.1:(\d+)\s*$", g.stdout.readline())
        if not m:
            raise SystemExit(f"key_gateway {n} did not start (exit {stop(g)}); see {log.name}")
        if slot is None:
            self.gateways.append(g)
            self.ports.append(int(m.group(1)))
            self.logs.append(log.name)
        else:
            self.gateways[slot], self.ports[slot] = g, int(m.group(1))
        return int(m.group(1))

    def start_nginx(self, nginx):
        """nginx with examples/key_gateway/nginx.conf, its upstream gateway replaced by every gateway started."""
        upstream = Upstream()
        upstream.start()
        self.nginx_port = free_port()
        with open(NGINX_CONF) as f:
            documented = f.read()
        balanced = " ".join(f"server 127.0.0.1:{p};" for p in self.ports)
        site = (documented.replace("server 127.0.0.1:9000;", balanced)
                .replace("127.0.0.1:8080", f"127.0.0.1:{upstream.port}")
                .replace("127.0.0.1:8000", f"127.0.0.1:{self.nginx_port}"))
        assert balanced in site and site.count(f"127.0.0.1:{self.nginx_port}") == 1
        work = self.work
        with open(os.path.join(work, "site.conf"), "w") as f:
            f.write(site)
        temp_paths = "".join(f"{name}_temp_path {work}/{name};\n"
                             for name in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
        with open(os.path.join(work, "nginx.conf"), "w") as f:
            f.write(f"daemon off;\nmaster_process off;\npid {work}/nginx.pid;\nerror_log {work}/nginx-error.log;\n"
                    f"events {{ worker_connections 512; }}\n"
                    f"http {{\naccess_log off;\n{temp_paths}include {work}/site.conf;\n}}\n")
        self.nginx = subprocess.Popen([nginx, "-p", work, "-c", os.path.join(work, "nginx.conf"), "-e",
                                       os.path.join(work, "nginx-error.log")], stdout=subprocess.DEVNULL,
                                      stderr=subprocess.PIPE)

        def up():
            try:
                socket.create_connection(("127.0.0.1", self.nginx_port), timeout=1).close()
                return True
            except OSError:
                return self.nginx.poll() is not None

        if not wait_until(up) or self.nginx.poll() is not None:
            raise SystemExit(f"nginx did not start: {self.nginx.stderr.read().decode(errors='replace')}")
        return self.nginx_port

    def all_answer(self, key, want):
        return all(ask(port, key) == want for port in self.ports)

    def stop_all(self):
        for g in self.gateways:
            if g.poll() is None:
                stop(g)
        if self.nginx:
            stop(self.nginx)

    def check_logs_hold_no_key(self, checks):
        for path in self.logs:
            with open(path, encoding="utf-8", errors="replace") as f:
                checks.check(not any(any(k in line for k in self.printed_keys) for line in f),
                             f"{os.path.basename(path)}: no log line holds a key", "K11")
