// Rule O5, an operator's actions on webhook_deliver's store, with a worker
// running, against a receiver built on the npm package standardwebhooks
// (every request verified; ids processed are counted per route).
//
//   node recovery.js sqlite|postgresql PATH/TO/webhook_deliver
//
// On a SQLite file, or on Debian's PostgreSQL started here (postgres.js):
//   - a run whose deliveries give up (500) or are ended by a 410's disabling
//     exits 4 with its summary line, and prints a line for each delivery
//     ended without an attempt; --list shows each attempt with its status,
//     duration and response, the webhook's x-api-key and query token
//     replaced (the endpoint echoes them), and filters by status, tenant,
//     webhook and creation time;
//   - --resend queues one delivery that gave up: a new attempt sequence, the
//     same webhook-id, signed again, its history kept; two racing --resend of
//     one delivery queue it once; a pending one is refused;
//   - --recover (two at once) queues every other delivery that gave up,
//     once; a second --recover queues nothing;
//   - a disabled webhook is refused (enable it first); two racing --enable
//     print one endpoint.enabled notice; then --recover sends its deliveries;
//   - a changed endpoint URL is refused until --to-current-endpoint, and
//     the delivery then goes to the new URL, printed without query values;
//   - --purge-before leaves tombstones: --list shows nothing, the same file
//     enqueued again adds nothing, --resend of a purged id is refused;
//   - the worker, stopped with SIGTERM, ends with its summary.
// Tenant and webhook names hold '/'. Every wait is on a condition.
"use strict";
const { spawn } = require("child_process");
const crypto = require("crypto");
const fs = require("fs");
const os = require("os");
const path = require("path");
const { Webhook } = require("standardwebhooks");
const { BOUND_MS, check, closing, done, jsonLines, need, run, serve, within } = require("./common");
const { startPostgres, waitUntil } = require("./postgres");

const mode = need(process.argv[2], "sqlite|postgresql PATH/TO/webhook_deliver");
const deliver = need(process.argv[3], "sqlite|postgresql PATH/TO/webhook_deliver");
const secret = "whsec_" + Buffer.alloc(32, 7).toString("base64");
const API_KEY = "key-" + crypto.randomBytes(12).toString("hex");
const TOKEN = "tok/" + crypto.randomBytes(8).toString("hex") + "+=";
const TENANT = "acme/eu", CRM = "crm/sync", ARCHIVE = "archive";
const SCALE = "0.00001"; // a day of the retry plan in under a second
const EVENTS = 4;

// The receiver: /down answers 500 while `down`, echoing the x-api-key header
// and the URL (its query holds the token); /gone 410 while `gone`; the rest
// 200. Every request verified; the ids processed (2xx) counted per route.
function receiver() {
  const wh = new Webhook(secret);
  const state = { down: true, gone: true, unverified: 0, arrivals: [], processed: new Map() };
  return serve((req, body, res) => {
    const route = req.url.split("?")[0];
    let id;
    try {
      wh.verify(body, req.headers);
      id = req.headers["webhook-id"];
    } catch (e) {
      state.unverified++;
      res.writeHead(400);
      return res.end();
    }
    state.arrivals.push({ id, route });
    if (route === "/down" && state.down) {
      res.writeHead(500, { "Content-Type": "text/plain" });
      return res.end(`no: key=${req.headers["x-api-key"]} url=${req.url}\n\u001b[2J`);
    }
    if (route === "/gone" && state.gone) {
      res.writeHead(410);
      return res.end();
    }
    const key = `${route} ${id}`;
    state.processed.set(key, (state.processed.get(key) || 0) + 1);
    res.writeHead(200);
    res.end("thanks");
  }).then((s) => ({ ...s, state }));
}

function input(port, crmEndpoint) {
  const events = [];
  for (let i = 1; i <= EVENTS; i++)
    events.push({ after: 0, event: { UserAction: "PublishEngine", EntityId: String(i),
                                     RequestTimeStamp: `2026-03-14T09:00:0${i}.000Z` } });
  return {
    tenant: { name: TENANT, webhooksEnabled: true },
    webhooks: [
      { name: CRM, endpoint: crmEndpoint || `http://127.0.0.1:${port}/down?region=eu`, saved: true,
        auth: [{ in: "header", name: "x-api-key", value: API_KEY }, { in: "query", name: "token", value: TOKEN }],
        signingSecret: secret },
      { name: ARCHIVE, endpoint: `http://127.0.0.1:${port}/gone`, saved: true, signingSecret: secret },
    ],
    events,
  };
}

const lines = (text) => jsonLines(text);
const summaryOf = (text) => (lines(text).find((l) => l.summary) || {}).summary;
const queuedOf = (text) => lines(text).filter((l) => l.queued).map((l) => l.queued);

async function scenario(store) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "keyhook-recovery-"));
  const { server, port, state } = await receiver();
  const file = path.join(dir, "event.json");
  fs.writeFileSync(file, JSON.stringify(input(port)));
  const S = ["--store", store];
  const act = (...args) => run(deliver, [...S, ...args]);
  const list = async (...filters) => {
    const r = await act("--list", ...filters);
    if (r.code !== 0) check(false, `--list ${filters.join(" ")} exits 0 (${r.code}; ${r.stderr.trim()})`);
    return { rows: lines(r.stdout).filter((l) => l.id), summary: summaryOf(r.stdout) };
  };
  const crmRows = async () => (await list("--tenant", TENANT, "--webhook", CRM)).rows;
  const processed = (route, id) => state.processed.get(`${route} ${id}`) || 0;

  // 1. A run whose deliveries give up or are ended by a disabled webhook.
  const first = await run(deliver, ["--allow-local", "--time-scale", SCALE, ...S, file], { limitMs: 4 * BOUND_MS });
  const out = lines(first.stdout);
  check(first.code === 4, `the run exits 4: deliveries gave up or were disabled (${first.code}; ${first.stderr.trim()})`);
  const sum = summaryOf(first.stdout);
  check(sum && sum.delivered === 0 && sum.gaveUp === EVENTS && sum.disabled === EVENTS && sum.pending === 0 &&
          JSON.stringify(out[out.length - 1]) === JSON.stringify({ summary: sum }),
        `its last line is the summary (${JSON.stringify(sum)})`);
  const unsent = out.filter((l) => l.webhook === ARCHIVE && l.outcome === "disabled" && l.sentAt === null);
  check(unsent.length === EVENTS - 1 && unsent.every((l) => l.tenant === TENANT && /disabled/.test(l.error)),
        `each delivery ended without an attempt by its disabled webhook has its line (${unsent.length})`);
  check(!first.stdout.includes(API_KEY) && !first.stdout.includes(TOKEN), "no secret in the run's output");

  // 2. --list: the history with its details, the secrets replaced; filters.
  let { rows, summary } = await list();
  check(rows.length === 2 * EVENTS && summary.gaveUp === EVENTS && summary.disabled === EVENTS,
        `--list shows every delivery and counts them (${rows.length}; ${JSON.stringify(summary)})`);
  const gaveUp = (await list("--status", "gave_up", "--tenant", TENANT, "--webhook", CRM)).rows;
  check(gaveUp.length === EVENTS && gaveUp.every((r) => r.status === "gave_up" && r.sequence === 1),
        `--status gave_up --tenant --webhook: the ${EVENTS} that gave up`);
  const a = gaveUp[0].attempts;
  check(a.length === 8 && a.every((x) => x.status === 500 && x.sequence === 1 && typeof x.durationMs === "number" &&
                                         x.error === null && x.result === (x.attempt === 8 ? "gave_up" : "retry")),
        `each attempt: its status, duration, result (${JSON.stringify(a[0])})`);
  const text = JSON.stringify(rows);
  check(a[0].response.startsWith("no: key=[redacted] url=/down?region=eu&token=[redacted]") &&
          a[0].response.includes("\\x1b[2J") && !text.includes(API_KEY) && !text.includes(TOKEN) &&
          !text.includes(encodeURIComponent(TOKEN)),
        `the response is kept with the webhook's secrets replaced and escaped (${JSON.stringify(a[0].response)})`);
  check(gaveUp[0].endpoint === `http://127.0.0.1:${port}/down?region=[redacted]`,
        `the endpoint is listed without query values (${gaveUp[0].endpoint})`);
  const created = gaveUp[0].createdAt;
  const later = new Date(Date.parse(created) + 1).toISOString(); // a millisecond after every creation
  check((await list("--since", created)).rows.length === 2 * EVENTS && (await list("--since", later)).rows.length === 0,
        "--since takes deliveries created at or after its time");

  // 3. --resend one that gave up; a pending one is refused; two racing
  // --resend of another queue it once. (Before the worker starts, so that
  // no delivery ends again during a race.)
  const ids = gaveUp.map((r) => r.id);
  let r = await act("--resend", ids[0]);
  let q = queuedOf(r.stdout);
  check(r.code === 0 && q.length === 1 && q[0].deliveryId === ids[0] && q[0].sequence === 2 && q[0].was === "gave_up" &&
          q[0].endpoint === `http://127.0.0.1:${port}/down?region=[redacted]` && summaryOf(r.stdout).pending === 1,
        `--resend queues it again, naming the endpoint without query values (${r.stdout.trim()})`);
  r = await act("--resend", ids[0]);
  check(r.code === 1 && /is pending/.test(r.stderr) && queuedOf(r.stdout).length === 0,
        `--resend of a pending delivery is refused (${r.stderr.trim()})`);
  r = await act("--resend", ids[0].replace(/.$/, (c) => (c === "0" ? "1" : "0")));
  check(r.code === 1 && /has no delivery/.test(r.stderr), `an unknown id is refused (${r.stderr.trim()})`);
  let [x, y] = await Promise.all([act("--resend", ids[1]), act("--resend", ids[1])]);
  check(queuedOf(x.stdout).length + queuedOf(y.stdout).length === 1 && [x.code, y.code].sort().join() === "0,1",
        `two racing --resend queue it once (${x.code}, ${y.code}; ${x.stderr.trim()} ${y.stderr.trim()})`);

  // 4. Two racing --recover, then a third: the others once, then nothing.
  const since = ["--tenant", TENANT, "--webhook", CRM, "--since", created];
  [x, y] = await Promise.all([act("--recover", ...since), act("--recover", ...since)]);
  const recovered = [...queuedOf(x.stdout), ...queuedOf(y.stdout)].map((e) => e.deliveryId).sort();
  check(x.code === 0 && y.code === 0 && JSON.stringify(recovered) === JSON.stringify(ids.slice(2).sort()),
        `two racing --recover queue each of the others once (${JSON.stringify(recovered)})`);
  r = await act("--recover", ...since);
  check(r.code === 0 && queuedOf(r.stdout).length === 0 && /0 of 0/.test(r.stderr),
        `a second --recover queues nothing (${r.stderr.trim()})`);

  // A worker on the store from now on (the actions only queue; it sends).
  state.down = false;
  const worker = spawn(deliver, ["--allow-local", "--time-scale", SCALE, ...S, "--work", "--lease", "2"]);
  const wout = { stdout: "", stderr: "" };
  worker.stdout.on("data", (d) => (wout.stdout += d));
  worker.stderr.on("data", (d) => (wout.stderr += d));
  const workerClosed = closing(worker);
  check(await waitUntil(() => ids.every((id) => processed("/down", id) === 1)),
        "the worker sends each queued delivery: the receiver verifies and processes each webhook-id once");
  const arrivalsOf0 = state.arrivals.filter((e) => e.id === ids[0]).length;
  check(arrivalsOf0 === 9, `the 8 failed attempts and the 9th came with one webhook-id (${arrivalsOf0})`);
  const resent = await waitUntil(async () => {
    const row = (await crmRows()).find((e) => e.id === ids[0]);
    return row && row.status === "delivered" ? row : null;
  });
  check(resent && resent.sequence === 2 && resent.attempts.length === 9 &&
          resent.attempts[8].sequence === 2 && resent.attempts[8].attempt === 1 && resent.attempts[8].status === 200,
        "its history keeps the first sequence and adds the second");

  // 5. A disabled webhook: refused until enabled; two racing --enable, one notice.
  const archive = (await list("--tenant", TENANT, "--webhook", ARCHIVE)).rows;
  r = await act("--recover", "--tenant", TENANT, "--webhook", ARCHIVE, "--since", created);
  check(r.code === 1 && /is disabled: enable it first/.test(r.stderr) && queuedOf(r.stdout).length === 0,
        `--recover of a disabled webhook is refused (${r.stderr.trim()})`);
  r = await act("--resend", archive[0].id);
  check(r.code === 1 && /enable it first/.test(r.stderr), "--resend to a disabled webhook is refused");
  [x, y] = await Promise.all([act("--enable", "--tenant", TENANT, "--webhook", ARCHIVE),
                              act("--enable", "--tenant", TENANT, "--webhook", ARCHIVE)]);
  const notices = [...lines(x.stdout), ...lines(y.stdout)].filter((l) => l.operational).map((l) => l.operational);
  check(x.code === 0 && y.code === 0 && notices.length === 1 && notices[0].type === "endpoint.enabled" &&
          notices[0].data.tenant === TENANT && notices[0].data.endpointId === ARCHIVE &&
          notices[0].data.lastAttempt.responseStatusCode === 410,
        `two racing --enable: one endpoint.enabled notice (${JSON.stringify(notices)})`);
  state.gone = false;
  r = await act("--recover", "--tenant", TENANT, "--webhook", ARCHIVE, "--since", created);
  check(r.code === 0 && queuedOf(r.stdout).length === EVENTS, `then --recover queues its ${EVENTS} deliveries`);
  check(await waitUntil(() => archive.every((d) => processed("/gone", d.id) === 1)),
        "and the worker delivers them to the enabled webhook");

  // 6. A changed endpoint URL: refused, then sent to the current one when asked.
  const moved = path.join(dir, "moved.json");
  fs.writeFileSync(moved, JSON.stringify(input(port, `http://127.0.0.1:${port}/moved?region=us`)));
  r = await run(deliver, ["--allow-local", "--time-scale", SCALE, ...S, moved]);
  check(r.code === 0 && /0 of 8 deliveries added/.test(r.stderr), `the new configuration stored (${r.stderr.trim()})`);
  r = await act("--resend", ids[0]);
  check(r.code === 1 && /--to-current-endpoint/.test(r.stderr) && queuedOf(r.stdout).length === 0 &&
          !r.stderr.includes(TOKEN),
        `a delivery enqueued for another endpoint URL is refused (${r.stderr.trim()})`);
  r = await act("--recover", ...since);
  check(r.code === 0 && queuedOf(r.stdout).length === 0, "(nothing of the webhook has ended undelivered)");
  r = await act("--resend", ids[0], "--to-current-endpoint");
  q = queuedOf(r.stdout);
  check(r.code === 0 && q.length === 1 && q[0].endpoint === `http://127.0.0.1:${port}/moved?region=[redacted]`,
        `--to-current-endpoint queues it for the current URL (${r.stdout.trim()})`);
  check(await waitUntil(() => processed("/moved", ids[0]) === 1), "the worker sends it to the new URL");

  // 7. Purge: tombstones.
  check(await waitUntil(async () => (await list("--status", "pending")).rows.length === 0), "nothing is pending");
  r = await act("--purge-before", "9999-12-31T23:59:59Z");
  const purged = lines(r.stdout).find((l) => "purged" in l);
  check(r.code === 0 && purged && purged.purged === 2 * EVENTS, `--purge-before purges every ended delivery (${r.stdout.trim()})`);
  ({ rows } = await list());
  check(rows.length === 0, "--list shows none of them");
  const arrivals = state.arrivals.length;
  r = await run(deliver, ["--allow-local", "--time-scale", SCALE, ...S, file]);
  check(r.code === 0 && /0 of 8 deliveries added/.test(r.stderr) && state.arrivals.length === arrivals,
        `the same file enqueued again adds nothing, sends nothing (${r.stderr.trim()})`);
  r = await act("--resend", ids[0]);
  check(r.code === 1 && /was purged/.test(r.stderr), `--resend of a purged id is refused (${r.stderr.trim()})`);

  // 8. The worker stopped: its summary.
  worker.kill("SIGTERM");
  const code = await within(workerClosed, BOUND_MS, "hung");
  const ws = summaryOf(wout.stdout);
  check(code === 0 && ws && ws.delivered === 2 * EVENTS + 1 && ws.gaveUp === 0 && ws.pending === 0,
        `the worker stops on SIGTERM with its summary (${code}; ${JSON.stringify(ws)}; ${wout.stderr.trim()})`);
  check(state.unverified === 0, `every request verified (unverified: ${state.unverified})`);
  server.close();
  fs.rmSync(dir, { recursive: true, force: true });
}

(async () => {
  if (mode === "sqlite") {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "keyhook-recovery-store-"));
    try {
      await scenario("sqlite:" + path.join(dir, "deliveries.db"));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  } else if (mode === "postgresql") {
    const pg = await startPostgres();
    try {
      await scenario(pg.uri);
    } finally {
      await pg.stop();
    }
  } else {
    need(null, "sqlite|postgresql PATH/TO/webhook_deliver");
  }
  done();
})();
