// Debian's PostgreSQL server for one test: initdb and postgres from
// /usr/lib/postgresql/15/bin (as user postgres when run as root: the server
// refuses root), a cluster in a temporary directory, the socket there and no
// TCP, a free port. Used by store_crash.js and receiver_store.js.
//
//   const pg = await startPostgres();   // {dir, uri} or throws
//   ... pg.uri ...                      // postgresql://keyhook@/postgres?host=...
//   await pg.halt();                    // stopped, data kept (clients see errors)
//   await pg.restart();                 // stopped and started again on the same data
//   await pg.stop();                    // fast shutdown, directory removed
"use strict";
const { spawn, spawnSync } = require("child_process");
const fs = require("fs");
const net = require("net");
const os = require("os");
const path = require("path");
const { BOUND_MS, closing, within } = require("./common");

const PG_BIN = "/usr/lib/postgresql/15/bin";

function asPostgres(cmd, args, opts = {}) {
  const root = process.getuid && process.getuid() === 0;
  return root ? spawn("runuser", ["-u", "postgres", "--", cmd, ...args], opts) : spawn(cmd, args, opts);
}

function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, "127.0.0.1", () => {
      const p = s.address().port;
      s.close(() => resolve(p));
    });
  });
}

// Polls condition() until it holds or `ms` passed; its last value (waits.py's wait_until).
async function waitUntil(condition, ms = BOUND_MS) {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await condition();
    if (v || Date.now() >= deadline) return v;
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function startPostgres() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "keyhook-pg-"));
  if (process.getuid() === 0) {
    const uid = spawnSync("id", ["-u", "postgres"], { encoding: "utf8" });
    const gid = spawnSync("id", ["-g", "postgres"], { encoding: "utf8" });
    fs.chownSync(dir, Number(uid.stdout), Number(gid.stdout));
  }
  const data = path.join(dir, "data");
  const init = asPostgres(path.join(PG_BIN, "initdb"), ["-D", data, "-U", "keyhook", "--auth=trust", "-E", "UTF8",
                                                          "--no-sync", "--no-instructions"], { stdio: "ignore" });
  if ((await within(closing(init), 4 * BOUND_MS, "hung")) !== 0) throw new Error("initdb did not make a cluster");
  const port = await freePort();
  let pg = null, pgClosed = null;
  const launch = () => {
    pg = asPostgres(path.join(PG_BIN, "postgres"), ["-D", data, "-k", dir, "-p", String(port), "-c",
                                                    "listen_addresses=", "-c", "fsync=off"], { stdio: "ignore" });
    pgClosed = closing(pg);
  };
  const ready = () => waitUntil(() => spawnSync(path.join(PG_BIN, "pg_isready"), ["-h", dir, "-p", String(port)])
                                        .status === 0);
  const halt = async () => {
    // Fast shutdown: SIGINT to the postmaster itself (runuser does not pass signals on).
    try {
      process.kill(Number(fs.readFileSync(path.join(data, "postmaster.pid"), "utf8").split("\n")[0]), "SIGINT");
    } catch (e) {
      pg.kill("SIGKILL");
    }
    if ((await within(pgClosed, BOUND_MS, "hung")) === "hung") pg.kill("SIGKILL");
  };
  const stop = async () => {
    await halt();
    fs.rmSync(dir, { recursive: true, force: true });
  };
  // The server stopped (its clients' connections broken) and started again
  // on the same data; true once it accepts connections.
  const restart = async () => {
    await halt();
    launch();
    return ready();
  };
  launch();
  if (!(await ready())) {
    await stop();
    throw new Error("postgres did not accept connections");
  }
  return { dir, uri: `postgresql://keyhook@/postgres?host=${encodeURIComponent(dir)}&port=${port}`, stop, restart,
           halt };
}

module.exports = { startPostgres, waitUntil };
