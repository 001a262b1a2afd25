// Rule B6, proven by killing it: webhook_deliver --store against a receiver
// built on the npm package standardwebhooks, which processes each webhook-id
// once and answers a repeat 200 without processing it (H9).
//
//   node store_crash.js sqlite PATH/TO/webhook_deliver
//     200 deliveries (some endpoints answer 503 then 200, one 410); the worker
//     is SIGKILLed at 20 random moments (on a random request, before or just
//     after its answer) and restarted each time, alternately enqueueing the
//     file again and with --work --until-empty. At the end every delivery
//     ended as planned and the receiver processed each id exactly once.
//   node store_crash.js postgresql PATH/TO/webhook_deliver
//     Debian's PostgreSQL started here (initdb and postgres from
//     /usr/lib/postgresql/15/bin, as user postgres when run as root, in a
//     temporary directory, socket only), three workers on 500 deliveries, one
//     SIGKILLed mid-run; every delivery ended, and the ids the receiver got
//     twice are counted, reported, and only ones whose lease expired.
"use strict";
const { spawn, spawnSync } = require("child_process");
const crypto = require("crypto");
const fs = require("fs");
const os = require("os");
const path = require("path");
const { Webhook } = require("standardwebhooks");
const { BOUND_MS, check, closing, done, jsonLines, need, serve, within } = require("./common");
const { startPostgres } = require("./postgres");

const mode = need(process.argv[2], "sqlite|postgresql PATH/TO/webhook_deliver");
const deliver = need(process.argv[3], "sqlite|postgresql PATH/TO/webhook_deliver");
const secret = "whsec_" + Buffer.alloc(32, 9).toString("base64");
const LEASE = "1"; // seconds: a killed worker's deliveries are taken over about a second later
// Seconds: a delivery in flight when its worker is killed was renewed to
// now + timeout + one lease before its attempt (B6), so it is taken over
// that much later; the receiver is local and answers at once.

// Polls condition() until it holds or `ms` passed; its last value (waits.py's wait_until).
async function waitUntil(condition, ms = BOUND_MS) {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await condition();
    if (v || Date.now() >= deadline) return v;
    await new Promise((r) => setTimeout(r, 20));
  }
}

// The receiver: H9's replay rule by webhook-id. onArrival(n) may return
// "before" (do not answer) or "after" (answered, then the caller acts).
function receiver(hooks) {
  const wh = new Webhook(secret);
  const state = { arrivals: 0, processed: new Map(), repeats: new Map(), unverified: 0, answered503: new Set(),
                  gone: new Set(), log: [] };
  return serve((req, body, res) => {
    state.arrivals++;
    const n = state.arrivals;
    const route = req.url.split("/")[1];
    let id = null;
    try {
      wh.verify(body, req.headers);
      id = req.headers["webhook-id"];
    } catch (e) {
      state.unverified++;
      res.writeHead(400);
      return res.end();
    }
    const verdict = hooks.onArrival ? hooks.onArrival(n) : null;
    if (verdict === "before") return; // the worker dies waiting for this answer
    let status = 200;
    if (route === "gone") {
      status = 410;
      state.gone.add(id);
    } else if (route === "flaky" && !state.answered503.has(id)) {
      status = 503;
      state.answered503.add(id);
    } else if (state.processed.has(id)) {
      state.repeats.set(id, (state.repeats.get(id) || 0) + 1); // H9: answered, not processed again
    } else {
      state.processed.set(id, { at: Date.now(), n });
    }
    state.log.push({ id, n, status, at: Date.now() });
    res.writeHead(status);
    res.end();
    if (verdict === "after" && hooks.afterAnswer) setImmediate(hooks.afterAnswer);
  }).then((s) => ({ ...s, state }));
}

function input(port, count, classOf) {
  const webhooks = [];
  for (let i = 0; i < count; i++) {
    const route = classOf(i);
    webhooks.push({ name: `hook-${i}`, endpoint: `http://127.0.0.1:${port}/${route}/${i}`, saved: true,
                    signingSecret: secret });
  }
  return {
    tenant: { name: "acme-lending", webhooksEnabled: true },
    webhooks,
    event: { UserAction: "PublishEngine", FolderName: "Loan Calculators", EntityId: "5c3e8a2f",
             RequestTimeStamp: "2026-03-14T09:26:53.589Z" },
  };
}

function start(args) {
  const child = spawn(deliver, args);
  const out = { stdout: "", stderr: "" };
  child.stdout.on("data", (d) => (out.stdout += d));
  child.stderr.on("data", (d) => (out.stderr += d));
  return { child, out, closed: closing(child) };
}

function list(store) {
  const r = spawnSync(deliver, ["--store", store, "--list"], { encoding: "utf8", timeout: BOUND_MS });
  check(r.status === 0, `--list exits 0 (got ${r.status}; ${String(r.stderr).trim()})`);
  // One line per delivery, then the summary line (O5).
  return r.status === 0 ? jsonLines(r.stdout).filter((l) => !l.summary) : [];
}

const routeOf = (i) => (i === 7 ? "gone" : i % 3 === 0 ? "flaky" : "ok");

async function sqliteCrash() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "keyhook-store-"));
  const store = "sqlite:" + path.join(dir, "deliveries.db");
  const COUNT = 200, KILLS = 20;
  // 20 distinct random request numbers within the first 200 (a run makes at
  // least 200 + 67 requests, so the worker is still at work when its number
  // comes); half killed before their answer, half just after it. A number
  // that comes while the killed worker's last requests are still being read
  // waits for the next worker's first request, so each kill ends its own run.
  const picks = new Set();
  while (picks.size < KILLS) picks.add(1 + crypto.randomInt(200));
  const moments = [...picks].sort((a, b) => a - b).map((n) => ({ n, mode: crypto.randomInt(2) ? "before" : "after" }));
  let worker = null, kills = 0;
  const kill = () => {
    worker.child.kill("SIGKILL");
    kills++;
  };
  const hooks = {
    onArrival: (n) => {
      if (moments.length === 0 || n < moments[0].n || !worker || worker.doomed) return null;
      const { mode } = moments.shift();
      worker.doomed = true;
      if (mode === "before") kill();
      return mode;
    },
    afterAnswer: kill,
  };
  const { server, port, state } = await receiver(hooks);
  const file = path.join(dir, "event.json");
  fs.writeFileSync(file, JSON.stringify(input(port, COUNT, routeOf)));
  const common = ["--allow-local", "--time-scale", "0.001", "--store", store, "--lease", LEASE, "--timeout", "1"];
  let runs = 0, killed = 0, finished = null;
  const started = Date.now();
  while (runs < 4 * KILLS && Date.now() - started < 4 * BOUND_MS) {
    worker = start(runs % 2 === 0 ? [...common, file] : [...common, "--work", "--until-empty"]);
    runs++;
    const code = await within(worker.closed, 4 * BOUND_MS, "hung");
    if (code === "SIGKILL") {
      killed++;
      continue;
    }
    finished = { code, stderr: worker.out.stderr };
    break;
  }
  // O1: 4 when the run saw a delivery end undelivered (the 410 endpoint's, disabled).
  check(finished && [0, 4].includes(finished.code), `the last run ends with 0 or 4 (got ${finished && finished.code}; ${finished &&
    finished.stderr.trim().slice(0, 300)})`);
  check(kills === KILLS && killed === KILLS, `the worker was SIGKILLed ${KILLS} times and restarted each time ` +
        `(${killed} runs ended by SIGKILL, ${runs} runs)`);

  // Enqueueing the same file again adds nothing.
  const again = spawnSync(deliver, [...common, file], { encoding: "utf8", timeout: BOUND_MS });
  check(again.status === 0 && /0 of 200 deliveries added/.test(again.stderr),
        `enqueueing again adds nothing (${String(again.stderr).trim()})`);

  const rows = list(store);
  check(rows.length === COUNT, `the store holds ${COUNT} deliveries (got ${rows.length})`);
  const wrong = rows.filter((r) => {
    const route = routeOf(Number(r.webhook.split("-")[1]));
    return r.status !== (route === "gone" ? "disabled" : "delivered") || r.nextDue !== null;
  });
  check(wrong.length === 0, `every delivery ended as planned (wrong: ${JSON.stringify(wrong.slice(0, 3))})`);
  const expected = rows.filter((r) => r.status === "delivered").map((r) => r.id);
  const missing = expected.filter((id) => !state.processed.has(id));
  check(missing.length === 0 && state.processed.size === expected.length,
        `the receiver processed each of the ${expected.length} delivered ids exactly once (missing ${missing.length}, ` +
        `processed ${state.processed.size})`);
  check(state.unverified === 0, `every request verified (unverified: ${state.unverified})`);
  check(state.gone.size === 1, "the 410 endpoint saw its one delivery");
  const repeats = [...state.repeats.values()].reduce((a, b) => a + b, 0);
  console.log(`report: ${state.arrivals} requests, ${kills} kills, ${runs} runs, ${state.repeats.size} ids repeated ` +
              `(${repeats} repeats, answered 200 without processing)`);
  server.close();
  fs.rmSync(dir, { recursive: true, force: true });
}

// --- PostgreSQL ---------------------------------------------------------

async function postgresCrash() {
  const pg = await startPostgres(); // throws when the server does not come up
  const { dir, uri: store } = pg;
  try {
    const COUNT = 500, KILL_AT = 150;
    let victim = null, killedAt = null;
    const hooks = {
      onArrival: (n) => {
        return n === KILL_AT ? "after" : null;
      },
      // Just after an answer: if the killed worker sent it, it dies before recording it.
      afterAnswer: () => {
        victim.child.kill("SIGKILL");
        killedAt = Date.now();
      },
    };
    const { server, port: hport, state } = await receiver(hooks);
    const file = path.join(dir, "event.json");
    fs.writeFileSync(file, JSON.stringify(input(hport, COUNT, (i) => (i % 10 === 0 ? "flaky" : "ok"))));
    const common = ["--allow-local", "--time-scale", "0.001", "--store", store, "--lease", LEASE, "--timeout", "3"];
    const first = start([...common, file]);
    const enqueued = await waitUntil(() => /deliveries added to the store/.test(first.out.stderr));
    check(enqueued, `the first worker enqueued (${first.out.stderr.trim().slice(0, 200)})`);
    victim = start([...common, "--work", "--until-empty"]);
    const third = start([...common, "--work", "--until-empty"]);
    const codes = await within(Promise.all([first.closed, victim.closed, third.closed]), 4 * BOUND_MS, "hung");
    // O1: 4 for a worker that saw a delivery end undelivered.
    check(Array.isArray(codes) && [0, 4].includes(codes[0]) && [0, 4].includes(codes[2]) && codes[1] === "SIGKILL",
          `two workers end with 0 or 4 and one was killed (got ${JSON.stringify(codes)}; ${first.out.stderr.trim()
            .slice(0, 200)} ${third.out.stderr.trim().slice(0, 200)})`);
    const rows = list(store);
    check(rows.length === COUNT && rows.every((r) => r.status === "delivered"),
          `all ${COUNT} deliveries delivered (${rows.filter((r) => r.status === "delivered").length} of ${rows.length})`);
    const missing = rows.filter((r) => !state.processed.has(r.id));
    check(missing.length === 0 && state.processed.size === COUNT, `each id processed once, none missing (missing ` +
          `${missing.length})`);
    // The survivors never both delivered one id: SKIP LOCKED and the lease kept them apart.
    const delivered = new Map();
    for (const w of [first, third])
      for (const l of jsonLines(w.out.stdout).filter((l) => l.outcome === "delivered"))
        delivered.set(l.deliveryId, (delivered.get(l.deliveryId) || 0) + 1);
    const twice = [...delivered].filter(([, n]) => n > 1);
    check(twice.length === 0, `no id delivered by both surviving workers (${twice.length})`);
    // A repeat at the receiver is a delivery the killed worker had leased: it
    // came again after the kill, and the killed worker never recorded it delivered.
    const victimDone = new Set(jsonLines(victim.out.stdout.split("\n").slice(0, -1).join("\n"))
                                 .filter((l) => l.outcome === "delivered").map((l) => l.deliveryId));
    const repeated = [...state.repeats.keys()];
    // A live worker whose attempt outlasted its lease (a loaded machine) says so on stderr.
    const lastArrival = (id) => Math.max(...state.log.filter((l) => l.id === id).map((l) => l.at));
    const overran = new Set((first.out.stderr + third.out.stderr).match(/msg_[0-9a-f]{32}(?=: the lease ran out)/g));
    const unexplained = repeated.filter((id) => !overran.has(id) &&
                                                (victimDone.has(id) || lastArrival(id) < killedAt));
    check(killedAt !== null, "one worker was killed mid-run");
    // A worker attempts one delivery at a time, recording each before the next:
    // the killed one leaves at most the one it was sending.
    check(unexplained.length === 0 && repeated.length - overran.size <= 1,
          `repeats only for deliveries whose lease expired (${repeated.length} ids, at most 1 from the killed worker; ` +
          `unexplained: ${JSON.stringify(unexplained)})`);
    console.log(`report: ${state.arrivals} requests, ${repeated.length} ids received twice: ` +
                `${repeated.filter((id) => !overran.has(id)).length} leased by the killed worker and taken over after ` +
                `the ${LEASE} s lease, ${overran.size} whose live worker's attempt outlasted the lease`);
    server.close();
  } finally {
    await pg.stop();
  }
}

(async () => {
  if (mode === "sqlite") await sqliteCrash();
  else if (mode === "postgresql") await postgresCrash();
  else need(null, "sqlite|postgresql PATH/TO/webhook_deliver");
  done();
})();
