// Rules B6 and H9, a replay table shared through a store: two webhook_receiver --listen
// sharing one store answer a replayed webhook-id 200 without processing it
// twice, also after one of them is SIGKILLed and started again. The requests
// are signed by the npm package standardwebhooks; a receiver processes a
// delivery by printing one JSON line, so the lines of all receivers together
// must hold each id exactly once.
//
//   node receiver_store.js sqlite PATH/TO/webhook_receiver       (a SQLite file)
//   node receiver_store.js postgresql PATH/TO/webhook_receiver   (a PostgreSQL
//     server started here, as store_crash.js does: postgres.js); then the
//     server is stopped (a delivery is answered 503 and not processed) and
//     started again (the receivers connect again)
// Both: a receiver killed between its claim of an id and its line (it stops
// itself there, test-only hook) leaves the id pending: the retry at another
// receiver is answered 503 with Retry-After, then taken over past the bound.
"use strict";
const { spawn } = require("child_process");
const fs = require("fs");
const os = require("os");
const path = require("path");
const { Webhook } = require("standardwebhooks");
const { BOUND_MS, check, closing, done, jsonLines, need, run, within } = require("./common");
const { startPostgres, waitUntil } = require("./postgres");

const mode = need(process.argv[2], "sqlite|postgresql PATH/TO/webhook_receiver");
const program = need(process.argv[3], "sqlite|postgresql PATH/TO/webhook_receiver");
const secret = "whsec_" + Buffer.alloc(32, 7).toString("base64");
const apiKey = "interop-store-key-24";
const IDS = 40;

function body(i) {
  return JSON.stringify({ FolderName: "Loans", ServiceName: "Quote", EntityId: `e${i}`, UserAction: "PublishEngine",
    AuditType: "ProductEngine", Data: { ProductName: "Loans", EngineName: "Quote", FileName: "q.xlsx",
      ProductId: `e${i}`, ServiceVersionId: "v1" }, Tenant: "acme", RequestTimeStamp: "2026-03-14T09:26:53.589Z",
    RevisionId: null });
}

// A delivery of id `msg_store_<i>`: signed now, as a sender's retry is. Its status and Retry-After.
async function deliverFull(port, i) {
  const id = `msg_store_${i}`, text = body(i), when = new Date();
  const res = await fetch(`http://127.0.0.1:${port}/hook`, { method: "POST", body: text, headers: {
    "content-type": "application/json", "x-api-key": apiKey, "webhook-id": id,
    "webhook-timestamp": String(Math.floor(when.getTime() / 1000)),
    "webhook-signature": new Webhook(secret).sign(id, when, text) } });
  await res.text();
  return { status: res.status, retryAfter: res.headers.get("retry-after") };
}
const deliver = async (port, i) => (await deliverFull(port, i)).status;

// A receiver on the store; resolves once it says where it listens. `stdout`:
// a file descriptor for its standard output instead of a pipe read here.
async function startReceiver(store, stdout = "pipe", extra = [], extraEnv = {}) {
  const child = spawn(program, ["--listen", "127.0.0.1:0", "--store", store, ...extra], {
    env: { ...process.env, KEYHOOK_RECEIVER_KEY: apiKey, KEYHOOK_SIGNING_SECRET: secret, ...extraEnv },
    stdio: ["ignore", stdout, "pipe"] });
  const r = { child, stdout: "", stderr: "", closed: closing(child) };
  if (child.stdout) child.stdout.on("data", (d) => (r.stdout += d));
  r.port = await within(new Promise((resolve, reject) => {
    child.stderr.on("data", (d) => {
      r.stderr += d;
      const m = /listening on 127\.0\.0\.1:(\d+)/.exec(r.stderr);
      if (m) resolve(Number(m[1]));
    });
    r.closed.then(() => reject(new Error(`webhook_receiver stopped: ${r.stderr}`)));
  }), BOUND_MS, null);
  if (r.port === null) {
    child.kill("SIGKILL");
    throw new Error(`webhook_receiver did not say where it listens within ${BOUND_MS} ms: ${r.stderr}`);
  }
  return r;
}

async function stopReceiver(r, signal) {
  r.child.kill(signal);
  const code = await within(r.closed, BOUND_MS, undefined);
  if (code === undefined) r.child.kill("SIGKILL");
  return code;
}

// The state letter of /proc/PID/stat ("T": stopped).
function procState(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0];
  } catch (e) {
    return null;
  }
}

// B6, H9: a receiver killed between its claim of an id and its line. It
// stops itself there (the test-only hook), is seen stopped, and SIGKILLed.
// The sender's retry at another receiver gets 503 with Retry-After while the
// claim is pending (never 200 "already accepted"), and once the claim is
// older than the killed receiver's --pending-bound it is taken over: 200 and
// the line written, once.
async function killedBeforeWrite(store, other, all) {
  const BOUND_S = 2;
  const victim = await startReceiver(store, "pipe", ["--pending-bound", String(BOUND_S)],
                                     { KEYHOOK_RECEIVER_TEST_STOP_BEFORE_WRITE: "1" });
  const lost = IDS + 7, id = `msg_store_${lost}`;
  const sentAt = Date.now();
  const first = deliver(victim.port, lost).catch(() => "connection lost");
  const stopped = await waitUntil(() => procState(victim.child.pid) === "T");
  check(stopped, `[B6] [H9] the receiver stopped itself between its claim and its line (state ${
    procState(victim.child.pid)})`);
  check((await stopReceiver(victim, "SIGKILL")) === "SIGKILL", "[B6] the stopped receiver is SIGKILLed");
  check((await first) === "connection lost" && !victim.stdout.includes(id),
        `[B6] [H9] the killed receiver answered nothing and wrote no line`);
  const answers = [];
  let retryAfter = [];
  const accepted = await waitUntil(async () => {
    const r = await deliverFull(other.port, lost);
    answers.push(r.status);
    if (r.status === 503) retryAfter.push(r.retryAfter);
    return r.status === 200 ? Date.now() : null;
  });
  const pendingAnswers = answers.slice(0, -1);
  check(pendingAnswers.length > 0 && pendingAnswers.every((s) => s === 503) &&
        retryAfter.every((v) => /^\d+$/.test(v) && Number(v) >= 1 && Number(v) <= BOUND_S),
        `[B6] [H9] the retry while the claim is pending: 503 with Retry-After of 1 to ${BOUND_S} s, never 200 ` +
        `(${JSON.stringify([...new Set(pendingAnswers)])}, Retry-After ${JSON.stringify([...new Set(retryAfter)])})`);
  check(accepted && accepted - sentAt >= BOUND_S * 1000 - 50,
        `[B6] [H9] taken over after the ${BOUND_S} s bound: 200 (after ${accepted && accepted - sentAt} ms)`);
  check(processed(all).filter((x) => x === id).length === 1,
        `[B6] [H9] the taken-over delivery's line written once (${processed(all).filter((x) => x === id).length})`);
  check((await deliver(other.port, lost)) === 200 && processed(all).filter((x) => x === id).length === 1,
        "[H9] then a replay: 200, not processed again");
}

const processed = (receivers) => receivers.flatMap((r) => jsonLines(r.stdout).map((l) => l.id));

async function sharing(store, outage) {
  let a = await startReceiver(store);
  const b = await startReceiver(store);
  const all = [a, b];
  // Each id at both receivers at the same moment: one of them processes it;
  // the other answers 200 once it is accepted, or 503 while it is pending
  // (B6: never "already accepted" before the line is written), and the
  // sender's retry of a 503 then gets 200.
  const raced = await Promise.all([...Array(IDS).keys()].flatMap((i) => [deliver(a.port, i), deliver(b.port, i)]));
  const pairs = [...Array(IDS).keys()].map((i) => [raced[2 * i], raced[2 * i + 1]]);
  check(pairs.every(([x, y]) => (x === 200 || x === 503) && (y === 200 || y === 503) && (x === 200 || y === 200)),
        `[B6] [H9] ${IDS} ids sent to both receivers at once: one 200 each, the other 200 or 503 ` +
        `(${JSON.stringify([...new Set(raced)])})`);
  const retried = await Promise.all(pairs.map(([x, y], i) => (x === 503 ? deliver(a.port, i) : y === 503 ?
                                                             deliver(b.port, i) : 200)));
  check(retried.every((s) => s === 200), `[B6] [H9] a copy answered 503 while pending: 200 on its retry ` +
        `(${raced.filter((s) => s === 503).length} retried)`);
  let ids = processed(all);
  check(ids.length === IDS && new Set(ids).size === IDS,
        `[B6] [H9] each id processed once across the two receivers (${ids.length} lines, ${new Set(ids).size} ids)`);

  // Replayed one after the other, to each receiver: answered, not processed.
  const replayed = [];
  for (let i = 0; i < IDS; i += 4) replayed.push(await deliver(a.port, i), await deliver(b.port, i));
  check(replayed.every((s) => s === 200) && processed(all).length === IDS,
        `[B6] [H9] replays to either receiver: 200, nothing processed again (${processed(all).length} lines)`);

  // A crash: the in-memory table would be lost with the process; the store's is not.
  check((await stopReceiver(a, "SIGKILL")) === "SIGKILL", "receiver A is SIGKILLed");
  a = await startReceiver(store);
  all.push(a);
  const afterRestart = await Promise.all([...Array(IDS).keys()].map((i) => deliver(a.port, i)));
  check(afterRestart.every((s) => s === 200) && processed(all).length === IDS,
        `[B6] [H9] after the restart, every id again at the new receiver: 200, nothing processed again ` +
        `(${processed(all).length} lines)`);
  // The other side of the boundary: a new id is processed, once, then replays.
  check((await deliver(a.port, IDS)) === 200 && (await deliver(b.port, IDS)) === 200, "a new id: 200 at both");
  ids = processed(all);
  check(ids.length === IDS + 1 && ids.filter((id) => id === `msg_store_${IDS}`).length === 1,
        `[B6] [H9] the new id processed once (${ids.length} lines)`);

  if (outage) await outage(a, b, all);

  // A receiver that cannot write its line (standard output on /dev/full)
  // answers 503 and gives the id back to the store: the sender's retry is
  // answered 503 again, not taken for a replay, and at a receiver that can
  // write it is processed, once.
  const full = fs.openSync("/dev/full", "w");
  const c = await startReceiver(store, full);
  const lost = IDS + 5, before = processed(all).length;
  const first = await deliver(c.port, lost), retry = await deliver(c.port, lost);
  check(first === 503 && retry === 503, `[H9] [B6] the line cannot be written: 503, and 503 again on the retry ` +
        `(${first}, ${retry})`);
  check((await deliver(b.port, lost)) === 200 && processed(all).length === before + 1 &&
        processed(all).includes(`msg_store_${lost}`),
        `[H9] [B6] the retry at a receiver that can write: processed once (${processed(all).length - before} line)`);
  check((await stopReceiver(c, "SIGTERM")) === 0, "the receiver on /dev/full: SIGTERM, exit 0");
  fs.closeSync(full);

  await killedBeforeWrite(store, b, all);

  for (const r of [a, b]) check((await stopReceiver(r, "SIGTERM")) === 0, "SIGTERM: a clean stop, exit 0");
  const logs = all.map((r) => r.stdout + r.stderr).join("");
  check(!logs.includes(apiKey) && !logs.includes(secret.slice(6)), "no key printed");
  console.log(`report: ${all.length} receivers on one ${mode} store, ${processed(all).length} deliveries processed`);
}

// A --store it cannot use: exit 2 before listening, saying why, no password shown.
async function refusals() {
  const env = { KEYHOOK_RECEIVER_KEY: apiKey };
  const scheme = await run(program, ["--listen", "127.0.0.1:0", "--store", "mysql://db/x"], { env });
  check(scheme.code === 2 && /expected sqlite:PATH or postgresql:\/\//.test(scheme.stderr),
        `[B6] --store mysql://...: exit 2 naming the forms (${scheme.code}; ${scheme.stderr.trim().split("\n").pop()})`);
  const closed = await run(program, ["--listen", "127.0.0.1:0", "--store", "postgresql://u:pw-4f9a@127.0.0.1:1/x"],
                           { env });
  check(closed.code === 3 && /cannot connect to the PostgreSQL store/.test(closed.stderr) &&
        !closed.stderr.includes("pw-4f9a"),
        `[B6] [O1] a PostgreSQL store that refuses: exit 3 (a store failure), the password not shown ` +
        `(${closed.code})`);
}

(async () => {
  await refusals();
  if (mode === "sqlite") {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "keyhook-replay-"));
    try {
      await sharing("sqlite:" + path.join(dir, "replay.db"));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  } else if (mode === "postgresql") {
    const pg = await startPostgres(); // throws when the server does not come up
    try {
      // The server stopped under the receivers: 503, nothing processed; back:
      // they connect again and the id is processed once.
      await sharing(pg.uri, async (a, b, all) => {
        const fresh = IDS + 1;
        await pg.halt();
        check((await deliver(b.port, fresh)) === 503 && processed(all).length === IDS + 1,
              `[B6] the store down: 503, nothing processed (${processed(all).length} lines)`);
        check(await pg.restart(), "postgres started again on the same data");
        check((await deliver(b.port, fresh)) === 200 && (await deliver(a.port, fresh)) === 200 &&
              processed(all).length === IDS + 2 && processed(all).includes(`msg_store_${fresh}`),
              `[B6] [H9] the store back: the receivers connect again, the id processed once ` +
              `(${processed(all).length} lines)`);
      });
    } finally {
      await pg.stop();
    }
  } else {
    need(null, "sqlite|postgresql PATH/TO/webhook_receiver");
  }
  done();
})();
