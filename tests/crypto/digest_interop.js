// K11 cross-check: Node.js's built-in crypto (no package) and keyhook compute
// and verify the same stored digests, both ways.
//   node digest_interop.js path/to/keyhook_digest_interop
// kh1.<id>.<base64url(HMAC-SHA-256(pepper, key))> for 100 keys, and legacy
// sha256.<hex> / sha256.<padded base64> of plain SHA-256 for 20 more.
'use strict';
const assert = require('node:assert/strict');
const { execFileSync } = require('node:child_process');
const crypto = require('node:crypto');

const driver = process.argv[2];
const current = { id: 'pep-2026', bytes: crypto.randomBytes(32) };
const older = { id: 'pep_2025', bytes: crypto.randomBytes(48) };
const peppers = [current, older].map((p) => ({ id: p.id, base64: p.bytes.toString('base64') }));

const kh1 = (p, key) => `kh1.${p.id}.${crypto.createHmac('sha256', p.bytes).update(key, 'utf8').digest('base64url')}`;
const sha = (key) => crypto.createHash('sha256').update(key, 'utf8').digest();
// Keys of varied length and alphabet, some non-ASCII.
const keys = Array.from({ length: 100 }, (_, i) =>
  `sk_${i}_${crypto.randomBytes(8 + (i % 40)).toString(i % 2 ? 'base64url' : 'hex')}${i % 10 === 0 ? 'é✓' : ''}`);
const legacy = Array.from({ length: 20 }, (_, i) => `legacy_${i}_${crypto.randomBytes(16).toString('hex')}`);

const run = (input) => {
  const out = execFileSync(driver, [], { input: JSON.stringify(input), encoding: 'utf8' });
  return JSON.parse(out);
};

// 1. keyhook computes, Node agrees.
const computed = run({ peppers, compute: keys }).computed;
assert.equal(computed.length, keys.length);
keys.forEach((k, i) => {
  assert.equal(computed[i], kh1(current, k), `kh1 digest of key ${i}`);
  assert.equal(computed[i].length, 4 + current.id.length + 1 + 43);
});

// 2. Node computes, keyhook verifies: current pepper, older pepper (rehash
//    to the current one), legacy hex and base64 (rehash), and wrong keys.
const verify = [];
keys.forEach((k, i) => {
  const p = i % 2 ? older : current;
  verify.push({ key: k, stored: kh1(p, k), expect: true, rehash: p === older ? kh1(current, k) : null });
  if (i % 10 === 0) verify.push({ key: k + 'x', stored: kh1(p, k), expect: false, rehash: null });
});
legacy.forEach((k, i) => {
  const hex = `sha256.${sha(k).toString('hex')}`;
  const b64 = `sha256.${sha(k).toString('base64')}`;
  verify.push({ key: k, stored: hex, expect: true, rehash: kh1(current, k) });
  verify.push({ key: k, stored: b64, expect: true, rehash: kh1(current, k) });
  if (i % 5 === 0) verify.push({ key: k.toUpperCase(), stored: hex, expect: false, rehash: null });
});
const verified = run({ peppers, verify: verify.map(({ key, stored, expect }) => ({ key, stored, expect })) }).verified;
assert.equal(verified.length, verify.length);
verify.forEach((c, i) => {
  assert.equal(verified[i].matched, c.expect, `case ${i} (${c.stored.slice(0, 10)}...)`);
  assert.equal(verified[i].rehash, c.rehash, `rehash of case ${i}`);
});
console.log(`keyhook and Node agree: ${keys.length} kh1 digests computed by keyhook, ` +
  `${verify.length} verifications of Node's digests (${legacy.length} legacy keys, hex and base64)`);
