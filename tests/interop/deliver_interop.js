// webhook_deliver against a receiver built on the npm package standardwebhooks:
// every request it sends must verify there, a 503 with Retry-After is retried
// and then delivered with the same webhook-id, and a 410 disables the webhook.
//
//   node deliver_interop.js PATH/TO/webhook_deliver
"use strict";
const { Webhook } = require("standardwebhooks");
const { check, done, run, jsonLines, serve, need } = require("./common");

const deliver = need(process.argv[2], "PATH/TO/webhook_deliver");
const secret = "whsec_" + Buffer.alloc(32, 7).toString("base64");
const apiKey = "interop-receiver-key-42";

(async () => {
  const wh = new Webhook(secret);
  const seen = { flaky: [], gone: [], plain: [] };
  const { server, port } = await serve((req, body, res) => {
    const route = req.url.split("?")[0].slice(1);
    let verified = null;
    try {
      verified = wh.verify(body, req.headers);
    } catch (e) {
      verified = null;
    }
    (seen[route] || []).push({ headers: req.headers, body, verified, url: req.url });
    if (route === "flaky" && seen.flaky.length === 1) {
      res.writeHead(503, { "Retry-After": "60" });
      return res.end();
    }
    if (route === "gone") {
      res.writeHead(410);
      return res.end();
    }
    res.writeHead(verified || route === "plain" ? 200 : 400);
    res.end();
  });

  const input = {
    tenant: { name: "acme-lending", webhooksEnabled: true },
    webhooks: [
      { name: "flaky", endpoint: `http://127.0.0.1:${port}/flaky`, saved: true, signingSecret: secret,
        auth: [{ in: "header", name: "x-api-key", value: apiKey }] },
      { name: "gone", endpoint: `http://127.0.0.1:${port}/gone`, saved: true, signingSecret: secret },
      { name: "plain", endpoint: `http://127.0.0.1:${port}/plain?team=a%20b`, saved: true,
        auth: [{ in: "query", name: "api_key", value: apiKey }] },
    ],
    event: { UserAction: "PublishEngine", FolderName: "Loan Calculators", ServiceName: "Mortgage \"Quote\"",
             EntityId: "5c3e8a2f", AuditType: "ProductEngine" },
  };
  const r = await run(deliver, ["--allow-local", "--time-scale", "0.001", "-"], { input: JSON.stringify(input) });
  server.close();
  // O1: exit 4, the "gone" webhook's delivery ended undelivered (disabled by its 410).
  check(r.code === 4, `webhook_deliver exits 4 (got ${r.code}; stderr ${r.stderr.trim()})`);
  const lines = jsonLines(r.stdout);
  const of = (name) => lines.filter((l) => l.webhook === name);

  // The signed delivery: 503 then 200, both verified by standardwebhooks.
  check(seen.flaky.length === 2, `flaky: two requests (got ${seen.flaky.length})`);
  check(seen.flaky.every((s) => s.verified !== null), "flaky: every request verifies with standardwebhooks");
  check(seen.flaky.every((s) => s.headers["x-api-key"] === apiKey), "flaky: x-api-key sent");
  check(seen.flaky.length === 2 && seen.flaky[0].headers["webhook-id"] === seen.flaky[1].headers["webhook-id"],
        "flaky: the retry keeps the webhook-id");
  const body = seen.flaky.length ? seen.flaky[0].verified : null;
  check(body && body.UserAction === "PublishEngine" && body.Tenant === "acme-lending" && body.RevisionId === null &&
        body.Data && body.Data.ProductName === "Loan Calculators",
        "flaky: the body is the spec 6.2 notification");
  const flaky = of("flaky");
  check(flaky.length === 2 && flaky[0].attempt === 1 && flaky[0].status === 503 && flaky[0].error === null &&
        flaky[0].outcome === "retry", "flaky: attempt 1 printed as 503, retry");
  check(flaky.length === 2 && flaky[1].attempt === 2 && flaky[1].status === 200 && flaky[1].outcome === "delivered",
        "flaky: attempt 2 printed as 200, delivered");
  check(flaky.length > 0 && seen.flaky.length > 0 && flaky[0].deliveryId === seen.flaky[0].headers["webhook-id"],
        "flaky: deliveryId is the webhook-id");
  // B2: Retry-After (60 s) on a 503 outweighs the schedule's 5 s (+20 % jitter at most).
  const waited = flaky.length ? (Date.parse(flaky[0].retryAt) - Date.parse(flaky[0].sentAt)) / 1000 : 0;
  check(waited >= 60 && waited < 61, `flaky: the retry is planned 60 s after attempt 1 (got ${waited} s)`);

  // 410: one request, the webhook disabled.
  check(seen.gone.length === 1, `gone: exactly one request (got ${seen.gone.length})`);
  check(seen.gone.length === 1 && seen.gone[0].verified !== null, "gone: the request verifies");
  const gone = of("gone");
  check(gone.length === 1 && gone[0].status === 410 && gone[0].outcome === "disabled", "gone: printed as disabled");

  // Unsigned, key in the query: no signature headers, the query encoded.
  check(seen.plain.length === 1 && !("webhook-signature" in seen.plain[0].headers), "plain: sent unsigned");
  check(seen.plain.length === 1 && new URL(seen.plain[0].url, "http://x").searchParams.get("api_key") === apiKey &&
        new URL(seen.plain[0].url, "http://x").searchParams.get("team") === "a b", "plain: api_key and team in the query");

  // Nothing of a secret on standard output.
  check(!r.stdout.includes(apiKey) && !r.stdout.includes(secret.slice(6, 20)), "no key or secret printed");
  done();
})();
