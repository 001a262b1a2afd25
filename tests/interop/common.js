// Helpers shared by the interop scripts: run a program, read its JSON lines,
// serve HTTP on a free loopback port, fail loudly, and wait on a condition
// with a bound (docs/testing.md, "How keyhook's own tests wait"): never a
// fixed sleep, never a look at one instant.
"use strict";
const { spawn } = require("child_process");
const http = require("http");

let failures = 0;
function check(ok, what) {
  if (ok) {
    console.log(`ok   ${what}`);
  } else {
    failures++;
    console.log(`FAIL ${what}`);
  }
}
function done() {
  if (failures > 0) {
    console.log(`${failures} check(s) failed`);
    process.exit(1);
  }
  console.log("all checks passed");
  process.exit(0);
}

// Milliseconds: long enough for anything a loaded 2-core machine makes slow,
// short enough that a test that really hangs fails within its CTest TIMEOUT.
// A test that passes never waits for it.
const BOUND_MS = 30000;

// The event's value, or `timedOut` if it has not happened within `ms`:
// within(new Promise((r) => emitter.once("close", r)), BOUND_MS, null).
function within(promise, ms, timedOut) {
  let timer;
  const late = new Promise((resolve) => (timer = setTimeout(() => resolve(timedOut), ms)));
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

// A child's exit code (or the signal that ended it) once it has exited and
// its output is all read ("close"). Make it right after spawn, so that the
// event cannot pass unseen; wait on it with a bound: within(closing, BOUND_MS, undefined).
function closing(child) {
  return new Promise((resolve) => child.once("close", (code, signal) => resolve(code === null ? signal : code)));
}

// Runs a program to its end: {code, stdout, stderr}. Killed after `limitMs`.
function run(program, args, { input, env, limitMs = BOUND_MS } = {}) {
  return new Promise((resolve) => {
    const child = spawn(program, args, { env: { ...process.env, ...env } });
    let stdout = "", stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), limitMs);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
    if (input !== undefined) child.stdin.end(input);
    else child.stdin.end();
  });
}

function jsonLines(text) {
  return text.split("\n").filter((l) => l.trim() !== "").map((l) => JSON.parse(l));
}

// An HTTP server on 127.0.0.1 and a free port; handler(req, body, res).
function serve(handler) {
  return new Promise((resolve) => {
    const server = http.createServer((req, res) => {
      const chunks = [];
      req.on("data", (c) => chunks.push(c));
      req.on("end", () => handler(req, Buffer.concat(chunks).toString("utf8"), res));
    });
    server.listen(0, "127.0.0.1", () => resolve({ server, port: server.address().port }));
  });
}

function need(path, what) {
  if (!path) {
    console.error(`usage: node ${process.argv[1]} ${what}`);
    process.exit(2);
  }
  return path;
}

module.exports = { BOUND_MS, check, closing, done, jsonLines, need, run, serve, within };
