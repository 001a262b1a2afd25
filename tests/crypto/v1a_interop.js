// B3 cross-check: Node.js's built-in crypto (no package) and keyhook sign and
// verify each other's Standard Webhooks v1a signatures, keys exchanged as
// whsk_ (base64 of seed || public key) and whpk_ (base64 of public key).
//   node v1a_interop.js path/to/keyhook_v1a_interop
// Exit status 0 when every case comes out as expected on both sides.
'use strict';
const assert = require('node:assert/strict');
const { execFileSync } = require('node:child_process');
const crypto = require('node:crypto');

const driver = process.argv[2];
const N = 100;
const TOLERANCE = 300; // seconds either way, as keyhook's default (B1)
const now = Math.floor(Date.now() / 1000);

const jwk = (raw) => raw.toString('base64url');

function publicKeyOf(whpk) {
  assert.ok(whpk.startsWith('whpk_'), 'whpk_ prefix');
  const raw = Buffer.from(whpk.slice(5), 'base64');
  assert.equal(raw.length, 32, 'whpk_ holds 32 bytes');
  return crypto.createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: jwk(raw) }, format: 'jwk' });
}

// Node derives the public key from the seed alone, then checks the second half.
function checkSigningKey(whsk, whpk) {
  assert.ok(whsk.startsWith('whsk_'), 'whsk_ prefix');
  const raw = Buffer.from(whsk.slice(5), 'base64');
  assert.equal(raw.length, 64, 'whsk_ holds seed || public key');
  const seedOnly = crypto.createPrivateKey({
    key: Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), raw.subarray(0, 32)]),
    format: 'der',
    type: 'pkcs8',
  });
  const derived = Buffer.from(crypto.createPublicKey(seedOnly).export({ format: 'jwk' }).x, 'base64url');
  assert.deepEqual(derived, raw.subarray(32), 'the public half is derived from the seed');
  assert.equal('whpk_' + derived.toString('base64'), whpk);
}

// Standard Webhooks verification, written from the specification.
function verify(publicKey, c) {
  const ts = Number(c.timestamp);
  if (!/^[0-9]+$/.test(c.timestamp) || Math.abs(now - ts) > TOLERANCE) return false;
  const content = Buffer.from(`${c.id}.${c.timestamp}.${c.body}`, 'utf8');
  return c.signature.split(' ').some((entry) => {
    const [version, sig] = entry.split(',');
    return version === 'v1a' && crypto.verify(null, content, publicKey, Buffer.from(sig, 'base64'));
  });
}

// 1. keyhook signs, Node verifies.
const fromKeyhook = JSON.parse(execFileSync(driver, ['sign', String(N), String(now)], { encoding: 'utf8' }));
checkSigningKey(fromKeyhook.signing_key, fromKeyhook.public_key);
const keyhookPublic = publicKeyOf(fromKeyhook.public_key);
let accepted = 0;
for (const c of fromKeyhook.cases) {
  const ok = verify(keyhookPublic, c);
  assert.equal(ok, c.expect, `Node on keyhook's ${c.id} (${c.kind})`);
  if (ok) accepted += 1;
}
assert.equal(accepted, N);
const refusedByNode = fromKeyhook.cases.length - accepted;
assert.ok(['tampered-body', 'wrong-key', 'stale'].every((k) => fromKeyhook.cases.some((c) => c.kind === k)));

// 2. Node signs, keyhook verifies.
const pair = crypto.generateKeyPairSync('ed25519');
const other = crypto.generateKeyPairSync('ed25519');
const priv = pair.privateKey.export({ format: 'jwk' });
const seed = Buffer.from(priv.d, 'base64url');
const pub = Buffer.from(priv.x, 'base64url');
const sign = (key, id, ts, body) =>
  'v1a,' + crypto.sign(null, Buffer.from(`${id}.${ts}.${body}`, 'utf8'), key).toString('base64');
const cases = [];
for (let i = 0; i < N; i++) {
  const id = `msg_node_${i}`;
  const ts = String(now - (i % 60));
  const body = JSON.stringify({ n: i, text: 'caf\u00e9 \u2713 ' + 'y'.repeat(i * 5) });
  // Every tenth header mixes in a v1 entry first, as a sender rotating schemes would.
  const v1a = sign(pair.privateKey, id, ts, body);
  const signature = i % 10 === 0 ? `v1,${crypto.randomBytes(32).toString('base64')} ${v1a}` : v1a;
  cases.push({ id, timestamp: ts, body, signature, kind: 'valid', expect: true });
}
for (let i = 0; i < 3; i++) {
  const ts = String(now);
  const body = JSON.stringify({ n: i });
  cases.push({ id: `msg_t${i}`, timestamp: ts, body: body + ' ', signature: sign(pair.privateKey, `msg_t${i}`, ts, body),
    kind: 'tampered-body', expect: false });
  cases.push({ id: `msg_w${i}`, timestamp: ts, body, signature: sign(other.privateKey, `msg_w${i}`, ts, body),
    kind: 'wrong-key', expect: false });
  const stale = String(now - 301 - i * 1000);
  cases.push({ id: `msg_s${i}`, timestamp: stale, body, signature: sign(pair.privateKey, `msg_s${i}`, stale, body),
    kind: 'stale', expect: false });
}
const input = JSON.stringify({
  signing_key: 'whsk_' + Buffer.concat([seed, pub]).toString('base64'),
  public_key: 'whpk_' + pub.toString('base64'),
  now,
  cases,
});
const fromDriver = JSON.parse(execFileSync(driver, ['verify'], { input, encoding: 'utf8' }));
assert.deepEqual(fromDriver, { accepted: N, refused: cases.length - N, unexpected: 0 });

console.log(`Node verified ${N} keyhook v1a signatures and refused ${refusedByNode} bad cases; ` +
  `keyhook verified ${N} Node signatures and refused ${fromDriver.refused} bad cases`);
