// webhook_receiver --listen against a sender built on the npm package
// standardwebhooks: its signed requests are accepted, and a tampered body, a
// wrong key, a stale timestamp and a replayed id are treated as H9 says; then
// the failure paths (405, 413, 400 for depth, a slow client) and a clean stop.
//
//   node receiver_interop.js PATH/TO/webhook_receiver
"use strict";
const { spawn } = require("child_process");
const fs = require("fs");
const net = require("net");
const { Webhook } = require("standardwebhooks");
const { BOUND_MS, check, closing, done, jsonLines, need, within } = require("./common");

const receiver = need(process.argv[2], "PATH/TO/webhook_receiver");
// Svix's documented 18-byte example key (B1: any non-empty key verifies) and a 32-byte one.
const shortSecret = "whsec_plJ3nmyCDGBKInavdOK15jsl";
const longSecret = "whsec_" + Buffer.alloc(32, 9).toString("base64");
const otherSecret = "whsec_" + Buffer.alloc(32, 1).toString("base64");
const apiKey = "interop-receiver-key-42";

function notification(action) {
  return JSON.stringify({ FolderName: "Loans", ServiceName: "Quote", EntityId: "e1", UserAction: action,
    AuditType: "ProductEngine", Data: { ProductName: "Loans", EngineName: "Quote", FileName: "q.xlsx",
      ProductId: "e1", ServiceVersionId: "v1" }, Tenant: "acme", RequestTimeStamp: "2026-03-14T09:26:53.589Z",
    RevisionId: null });
}

function signed(secret, id, body, when = new Date(), prefix = "webhook") {
  return {
    [`${prefix}-id`]: id,
    [`${prefix}-timestamp`]: String(Math.floor(when.getTime() / 1000)),
    [`${prefix}-signature`]: new Webhook(secret).sign(id, when, body),
  };
}

async function post(port, path, body, headers, method = "POST") {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, { method, body: method === "GET" ? undefined : body,
    headers: { "content-type": "application/json", ...headers } });
  await res.text();
  return res.status;
}

(async () => {
  const child = spawn(receiver, ["--listen", "127.0.0.1:0", "--request-timeout", "1"], {
    env: { ...process.env, KEYHOOK_RECEIVER_KEY: apiKey, KEYHOOK_SIGNING_SECRET: `${shortSecret} ${longSecret}` },
  });
  const closed = closing(child);  // made now, so that the exit cannot pass unseen
  let stdout = "", stderr = "";
  child.stdout.on("data", (d) => (stdout += d));
  // The line is flushed (std::endl) once the socket listens.
  const port = await within(new Promise((resolve, reject) => {
    child.stderr.on("data", (d) => {
      stderr += d;
      const m = /listening on 127\.0\.0\.1:(\d+)/.exec(stderr);
      if (m) resolve(Number(m[1]));
    });
    closed.then(() => reject(new Error(`webhook_receiver stopped: ${stderr}`)));
  }), BOUND_MS, null);
  if (port === null) {
    child.kill("SIGKILL");
    throw new Error(`webhook_receiver did not say where it listens within ${BOUND_MS} ms: ${stderr}`);
  }
  const key = { "x-api-key": apiKey };

  const b1 = notification("PublishEngine");
  check(await post(port, "/hook", b1, { ...key, ...signed(longSecret, "msg_interop_1", b1) }) === 200,
        "a signed request (32-byte key) is accepted");
  check(await post(port, "/hook", b1, { ...key, ...signed(longSecret, "msg_interop_1", b1) }) === 200,
        "[H9] the same webhook-id again: 2xx");
  const b2 = notification("UpdateEngine");
  check(await post(port, "/hook?api_key=" + apiKey, b2, signed(shortSecret, "msg_interop_2", b2)) === 200,
        "Svix's 18-byte example key, key in the query: accepted");
  const b3 = notification("AddProduct");
  check(await post(port, "/hook", b3, { ...key, ...signed(longSecret, "msg_interop_3", b3, new Date(), "svix") })
        === 200, "svix-* header names: accepted");
  // P1: the printed line is ASCII whatever the body holds. Raw UTF-8 and DEL
  // (a body in the platform's own shape, read in one pass) and an escaped ESC
  // (read by the parser) both come back escaped.
  const raw = b1.replace('"FolderName":"Loans"', '"FolderName":"Lo\u00e9ans\u007f"');
  check(await post(port, "/hook", raw, { ...key, ...signed(longSecret, "msg_interop_13", raw) }) === 200,
        "raw UTF-8 and DEL in a value: accepted");
  const esc = b1.replace('"Tenant":"acme"', '"Tenant":"ac\\u001b[31mme"');
  check(await post(port, "/hook", esc, { ...key, ...signed(longSecret, "msg_interop_14", esc) }) === 200,
        "an escaped ESC in a value: accepted");
  const tampered = b1.replace("PublishEngine", "DeleteEngine");
  check(await post(port, "/hook", tampered, { ...key, ...signed(longSecret, "msg_interop_4", b1) }) === 401,
        "[H9] [B1] tampered body: 401");
  check(await post(port, "/hook", b1, { ...key, ...signed(otherSecret, "msg_interop_5", b1) }) === 401,
        "signed with another key: 401");
  const stale = new Date(Date.now() - 10 * 60 * 1000);
  check(await post(port, "/hook", b1, { ...key, ...signed(longSecret, "msg_interop_6", b1, stale) }) === 401,
        "timestamp 10 minutes old: 401");
  check(await post(port, "/hook", b1, { "x-api-key": "wrong-key", ...signed(longSecret, "msg_interop_7", b1) })
        === 401, "wrong API key: 401");
  check(await post(port, "/hook", b1, signed(longSecret, "msg_interop_8", b1)) === 401, "[H9] [H7] no API key: 401");
  check(await post(port, "/hook", b1, { ...key }) === 401, "no signature: 401");
  check(await post(port, "/hook", "", key, "GET") === 405, "[H9] GET: 405");
  const big = "x".repeat((1 << 20) + 1);
  check(await post(port, "/hook", big, { ...key, ...signed(longSecret, "msg_interop_9", big) }) === 413,
        "[H9] a body over 1 MiB: 413");
  const deep = "[".repeat(100000) + "]".repeat(100000);
  check(await post(port, "/hook", deep, { ...key, ...signed(longSecret, "msg_interop_10", deep) }) === 400,
        "[H9] [J3] a body nested 100,000 deep: 400");
  const broken = "{\"UserAction\":";
  check(await post(port, "/hook", broken, { ...key, ...signed(longSecret, "msg_interop_11", broken) }) === 400,
        "[H9] malformed JSON: 400");

  // A slow client (headers never finished) neither blocks others nor stays
  // connected past the request deadline (1 s here): it is answered 408 at 1 s
  // and closed (H13). Its close is awaited from the connect on (it may come
  // while the other request is still under way), up to BOUND_MS, and must come
  // within 5 s: room for a loaded machine, and short of what a limit per read
  // instead of per request would give a client that keeps sending.
  const slow = net.connect(port, "127.0.0.1");
  slow.on("error", () => {});
  const slowClosed = new Promise((r) => slow.once("close", () => r(Date.now())));
  await within(new Promise((r) => slow.once("connect", r)), BOUND_MS, null);
  slow.on("data", () => {});
  slow.write("POST /hook HTTP/1.1\r\nHost: x\r\n");
  const started = Date.now();
  const b4 = notification("DeleteProduct");
  check(await post(port, "/hook", b4, { ...key, ...signed(longSecret, "msg_interop_12", b4) }) === 200,
        "accepted while a slow client holds a connection");
  const closedAt = await within(slowClosed, BOUND_MS, null);
  const closedAfter = closedAt === null ? null : closedAt - started;
  check(closedAfter !== null && closedAfter < 5000,
        `the slow client is disconnected (after ${closedAfter === null ? `more than ${BOUND_MS}` : closedAfter} ms)`);
  slow.destroy();

  child.kill("SIGTERM");
  const code = await within(closed, BOUND_MS, undefined);
  if (code === undefined) child.kill("SIGKILL");
  check(code === 0, `SIGTERM: a clean stop, exit 0 (got ${code === undefined ? `no exit within ${BOUND_MS} ms` : code})`);
  const lines = jsonLines(stdout);
  const ids = lines.map((l) => l.id);
  check(JSON.stringify(ids) === JSON.stringify(["msg_interop_1", "msg_interop_2", "msg_interop_3", "msg_interop_13",
    "msg_interop_14", "msg_interop_12"]),
        `one line per accepted notification, the replay not processed again (got ${JSON.stringify(ids)})`);
  check(lines.length > 0 && lines[0].notification.UserAction === "PublishEngine" &&
        lines[0].notification.Data.ProductName === "Loans" && lines[0].notification.RevisionId === null,
        "the notification is printed with the members of spec 6.2");
  check(/^[\x20-\x7e\n]*$/.test(stdout), "[P1] every printed byte is printable ASCII");
  const byId = Object.fromEntries(lines.map((l) => [l.id, l.notification]));
  check(byId.msg_interop_13 !== undefined && byId.msg_interop_13.FolderName === "Lo\u00e9ans\u007f" &&
        byId.msg_interop_14 !== undefined && byId.msg_interop_14.Tenant === "ac\u001b[31mme",
        "[P1] escaped values read back as sent");
  check(!stdout.includes(apiKey) && !stderr.includes(apiKey), "the key is never printed");

  // Standard output that cannot be written (/dev/full): 503, and the id is
  // given back to the table, so the sender's retry is 503 again (the line
  // still not written), not 200 "already accepted" with the delivery lost.
  const full = fs.openSync("/dev/full", "w");
  const blocked = spawn(receiver, ["--listen", "127.0.0.1:0"], {
    env: { ...process.env, KEYHOOK_RECEIVER_KEY: apiKey, KEYHOOK_SIGNING_SECRET: longSecret },
    stdio: ["ignore", full, "pipe"] });
  const blockedClosed = closing(blocked);
  let blockedErr = "";
  const blockedPort = await within(new Promise((resolve) => blocked.stderr.on("data", (d) => {
    blockedErr += d;
    const m = /listening on 127\.0\.0\.1:(\d+)/.exec(blockedErr);
    if (m) resolve(Number(m[1]));
  })), BOUND_MS, null);
  check(blockedPort !== null, "a receiver with standard output on /dev/full listens");
  if (blockedPort !== null) {
    const b5 = notification("DeleteEngine");
    const first = await post(blockedPort, "/hook", b5, { ...key, ...signed(longSecret, "msg_interop_15", b5) });
    const retry = await post(blockedPort, "/hook", b5, { ...key, ...signed(longSecret, "msg_interop_15", b5) });
    check(first === 503 && retry === 503, `[H9] the line cannot be written: 503, and 503 again on the retry ` +
          `(${first}, ${retry})`);
  }
  blocked.kill("SIGTERM");
  if ((await within(blockedClosed, BOUND_MS, undefined)) === undefined) blocked.kill("SIGKILL");
  fs.closeSync(full);

  // Standard output a pipe whose reader has gone (EPIPE): the receiver is not
  // killed by SIGPIPE; the delivery is answered 503 with Retry-After and its
  // id given back, and the receiver keeps answering.
  const piped = spawn(receiver, ["--listen", "127.0.0.1:0"], {
    env: { ...process.env, KEYHOOK_RECEIVER_KEY: apiKey, KEYHOOK_SIGNING_SECRET: longSecret },
    stdio: ["ignore", "pipe", "pipe"] });
  const pipedClosed = closing(piped);
  let pipedErr = "";
  const pipedPort = await within(new Promise((resolve) => piped.stderr.on("data", (d) => {
    pipedErr += d;
    const m = /listening on 127\.0\.0\.1:(\d+)/.exec(pipedErr);
    if (m) resolve(Number(m[1]));
  })), BOUND_MS, null);
  check(pipedPort !== null, "a receiver with standard output on a pipe listens");
  if (pipedPort !== null) {
    piped.stdout.destroy();  // the reader goes away
    const b6 = notification("DeleteEngine");
    const first = await post(pipedPort, "/hook", b6, { ...key, ...signed(longSecret, "msg_interop_16", b6) });
    const again = await post(pipedPort, "/hook", b6, { ...key, ...signed(longSecret, "msg_interop_16", b6) });
    check(first === 503 && again === 503 && piped.exitCode === null && piped.signalCode === null,
          `[H9] standard output a pipe with no reader: 503 twice, and the receiver still runs ` +
          `(${first}, ${again}, exit ${piped.exitCode}, signal ${piped.signalCode})`);
  }
  piped.kill("SIGTERM");
  if ((await within(pipedClosed, BOUND_MS, undefined)) === undefined) piped.kill("SIGKILL");
  done();
})();
