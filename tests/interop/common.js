// Helpers shared by the interop scripts: run a program, read its JSON lines,
// serve HTTP on a free loopback port, fail loudly.
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

// Runs a program to its end: {code, stdout, stderr}. Killed after `limitMs`.
function run(program, args, { input, env, limitMs = 20000 } = {}) {
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

module.exports = { check, done, run, jsonLines, serve, need };
