// Rules B5 and B6, the store worker's clock and leases: webhook_deliver
// --store ... --work on a SQLite file or a PostgreSQL server started here
// (postgres.js), against a loopback receiver in this process.
//
//   node store_worker.js sqlite|postgresql PATH/TO/webhook_deliver
//
// clock   (B6, B5) a worker idle for a few seconds delivers a delivery due
//         in 1 s on time, by its own output: its sentAt is the wall clock
//         (its signature's webhook-timestamp) and within a bound of the due
//         time; an old key is never in a signature made after its expiresAt.
//         --time-scale 0 is refused with a store.
// leases  (B6) two workers with --lease 1 and a batch holding slow
//         endpoints (3 s, slower than the lease) and fast ones: every
//         endpoint receives each delivery exactly once (a worker renews a
//         delivery's lease before its attempt and skips it when another
//         worker holds it by then).
"use strict";
const { spawn, spawnSync } = require("child_process");
const crypto = require("crypto");
const fs = require("fs");
const os = require("os");
const path = require("path");
const { BOUND_MS, check, closing, done, jsonLines, need, serve, within } = require("./common");
const { startPostgres, waitUntil } = require("./postgres");

const mode = need(process.argv[2], "sqlite|postgresql PATH/TO/webhook_deliver");
const deliver = need(process.argv[3], "sqlite|postgresql PATH/TO/webhook_deliver");
const oldKey = Buffer.alloc(32, 3), newKey = Buffer.alloc(32, 4);
const secretOf = (k) => "whsec_" + k.toString("base64");

// The receiver: every request kept (route, headers, arrival); /slow/ answers after SLOW_MS.
const SLOW_MS = 3000;
function receiver() {
  const seen = [];
  return serve((req, body, res) => {
    seen.push({ route: req.url.split("/")[1], hook: req.url.split("/")[2], headers: req.headers, body,
                at: Date.now() });
    const answer = () => {
      res.writeHead(200);
      res.end();
    };
    if (req.url.startsWith("/slow/")) setTimeout(answer, SLOW_MS);
    else answer();
  }).then((s) => ({ ...s, seen }));
}

// Whether `key` signed the request (one of its v1 entries).
function signedBy(key, r) {
  const mac = crypto.createHmac("sha256", key)
    .update(`${r.headers["webhook-id"]}.${r.headers["webhook-timestamp"]}.${r.body}`).digest("base64");
  return String(r.headers["webhook-signature"] || "").split(" ").includes("v1," + mac);
}

function start(args) {
  const child = spawn(deliver, args);
  const out = { stdout: "", stderr: "" };
  child.stdout.on("data", (d) => (out.stdout += d));
  child.stderr.on("data", (d) => (out.stderr += d));
  return { child, out, closed: closing(child) };
}

async function stopWorker(w) {
  w.child.kill("SIGTERM");
  if ((await within(w.closed, BOUND_MS, "hung")) === "hung") w.child.kill("SIGKILL");
}

const iso = (ms) => new Date(ms).toISOString();
const tenant = { name: "acme-lending", webhooksEnabled: true };

async function clock(store, dir) {
  const { server, port, seen } = await receiver();
  // B6: scale 0 has no timeline to share.
  const zero = spawnSync(deliver, ["--allow-local", "--time-scale", "0", "--store", store, "--work"],
                         { encoding: "utf8", timeout: BOUND_MS });
  check(zero.status === 2 && /--time-scale 0/.test(zero.stderr),
        `[B6] --time-scale 0 with a store: exit 2 (${zero.status}; ${String(zero.stderr).trim().split("\n")[0]})`);

  // Worker A idles on the empty store (it polls), then a delivery due in 1 s arrives.
  const a = start(["--allow-local", "--store", store, "--work"]);
  const IDLE_MS = 4000;
  const idleSince = Date.now();
  check(await waitUntil(() => Date.now() - idleSince >= IDLE_MS && a.child.exitCode === null, 2 * IDLE_MS),
        `[B6] worker A idles ${IDLE_MS} ms on the empty store`);
  // B6: one timeline per store: worker A (scale 1) kept the scale; another is refused.
  const other = spawnSync(deliver, ["--allow-local", "--time-scale", "0.5", "--store", store, "--work"],
                          { encoding: "utf8", timeout: BOUND_MS });
  check(other.status === 2 && /run at 1 /.test(other.stderr),
        `[B6] a worker at another --time-scale than the store's is refused, exit 2 ` +
        `(${other.status}; ${String(other.stderr).trim().split("\n")[0]})`);
  // The old key expires 1.5 s after the enqueue, half a second after the delivery is due.
  const enqueuedFrom = Date.now();
  const expiresAt = enqueuedFrom + 1500;
  const file = path.join(dir, "clock.json");
  fs.writeFileSync(file, JSON.stringify({
    tenant, webhooks: [{ name: "rotated", endpoint: `http://127.0.0.1:${port}/ok/rotated`, saved: true,
                         signingKeys: { current: [secretOf(newKey)],
                                        oldKeys: [{ key: secretOf(oldKey), expiresAt: iso(expiresAt) }] } }],
    events: [{ after: 1, event: { UserAction: "PublishEngine", EntityId: "due-in-1s" } }] }));
  // Enqueued by another process, stopped once it has stored it (before it is due).
  const e = start(["--allow-local", "--store", store, file]);
  const added = await waitUntil(() => /1 of 1 deliveries added/.test(e.out.stderr));
  const enqueuedBy = Date.now();
  e.child.kill("SIGKILL");
  await within(e.closed, BOUND_MS, null);
  check(added, `the delivery is enqueued (${e.out.stderr.trim().slice(0, 200)})`);
  const line = await waitUntil(() => jsonLines(a.out.stdout).find((l) => l.webhook === "rotated"));
  await stopWorker(a);
  check(line && line.outcome === "delivered" && seen.length === 1,
        `[B6] worker A delivered it (${JSON.stringify(line)}; ${seen.length} requests; ${a.out.stderr.trim()})`);
  if (line && seen.length === 1) {
    const sent = Date.parse(line.sentAt), signedAt = Number(seen[0].headers["webhook-timestamp"]) * 1000;
    // Due between enqueuedFrom + 1 s and enqueuedBy + 1 s (the enqueuer's clock, which is the wall clock).
    const late = sent - (enqueuedBy + 1000), early = enqueuedFrom + 1000 - sent;
    check(late <= 1500 && early <= 50,
          `[B6] sentAt is within 1.5 s of the due time, not before it (${late} ms after the latest due time)`);
    check(Math.abs(sent - signedAt) <= 1500,
          `[B6] the worker's timeline is the wall clock: sentAt ${line.sentAt} against its signature's ` +
          `timestamp ${iso(signedAt)}`);
    const withOld = signedBy(oldKey, seen[0]);
    check(signedBy(newKey, seen[0]) && (!withOld || signedAt <= expiresAt),
          `[B5] signed with the current key, and with the old key only before its expiresAt ` +
          `(old key: ${withOld}, signed ${signedAt - expiresAt} ms after it expired)`);
  }
  server.close();
}

async function leases(store, dir) {
  const { server, port, seen } = await receiver();
  const routes = ["slow", "fast", "fast", "slow", "fast", "fast", "slow", "fast", "fast"];
  const webhooks = routes.map((r, i) => ({ name: `${r}-${i}`, endpoint: `http://127.0.0.1:${port}/${r}/${i}`,
                                           saved: true, signingSecret: secretOf(newKey) }));
  const file = path.join(dir, "leases.json");
  fs.writeFileSync(file, JSON.stringify({ tenant, webhooks, event: { UserAction: "PublishEngine", EntityId: "x" } }));
  // --lease 1 < the slow endpoints' 3 s < --timeout 10.
  const common = ["--allow-local", "--store", store, "--lease", "1", "--timeout", "10"];
  const b = start([...common, "--work"]);
  const a = start([...common, file]); // enqueues, then works until nothing is pending
  const code = await within(a.closed, 4 * BOUND_MS, "hung");
  await stopWorker(b);
  check(code === 0, `[B6] worker A ends with 0 once nothing is pending (${code}; ${a.out.stderr.trim().slice(0, 300)})`);
  const byHook = new Map();
  for (const r of seen) byHook.set(r.hook, [...(byHook.get(r.hook) || []), r.headers["webhook-id"]]);
  const counts = routes.map((r, i) => (byHook.get(String(i)) || []).length);
  const fast = routes.map((r, i) => i).filter((i) => routes[i] === "fast");
  check(fast.every((i) => counts[i] === 1), `[B6] every fast endpoint received its delivery exactly once ` +
        `(requests per endpoint ${JSON.stringify(counts)}, routes ${JSON.stringify(routes)})`);
  check(counts.every((n) => n === 1), `[B6] every slow endpoint too, though slower than the lease ` +
        `(${JSON.stringify(counts)})`);
  const attempts = [a, b].flatMap((w) => jsonLines(w.out.stdout).filter((l) => l.attempt !== undefined));
  check(attempts.length === routes.length && attempts.every((l) => l.outcome === "delivered"),
        `[B6] one attempt line per delivery in all, each delivered (${attempts.length})`);
  const skipped = (a.out.stderr + b.out.stderr).match(/skipped: its lease ran out/g) || [];
  console.log(`report: ${seen.length} requests; ${skipped.length} deliveries skipped by a worker that no longer ` +
              `held them; attempts: A ${jsonLines(a.out.stdout).length}, B ${jsonLines(b.out.stdout).length}`);
  server.close();
}

(async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "keyhook-worker-"));
  try {
    if (mode === "sqlite") {
      await clock("sqlite:" + path.join(dir, "clock.db"), dir);
      await leases("sqlite:" + path.join(dir, "leases.db"), dir);
    } else if (mode === "postgresql") {
      const pg = await startPostgres(); // throws when the server does not come up
      try {
        // One database per scenario, on the one server.
        const port = /port=(\d+)/.exec(pg.uri)[1];
        const db = (name) => {
          spawnSync("/usr/lib/postgresql/15/bin/createdb", ["-h", pg.dir, "-p", port, "-U", "keyhook", name],
                    { timeout: BOUND_MS });
          return pg.uri.replace("/postgres?", `/${name}?`);
        };
        await clock(db("clock"), dir);
        await leases(db("leases"), dir);
      } finally {
        await pg.stop();
      }
    } else {
      need(null, "sqlite|postgresql PATH/TO/webhook_deliver");
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  done();
})();
