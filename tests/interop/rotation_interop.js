// B5 interop: deliveries keyhook signs during a key rotation's grace verify
// with a receiver that holds only the old key and with one that holds only
// the new key: v1 with the npm standardwebhooks package (pinned), v1a with
// Node's built-in Ed25519 (that package checks v1 only). After the grace only
// the new keys verify.
//   node rotation_interop.js path/to/keyhook_rotation_interop
'use strict';
const assert = require('node:assert/strict');
const { execFileSync } = require('node:child_process');
const crypto = require('node:crypto');
const { Webhook } = require('standardwebhooks');

const driver = process.argv[2];
const now = Math.floor(Date.now() / 1000);
const out = JSON.parse(execFileSync(driver, [String(now)], { encoding: 'utf8' }));

const headersOf = (d) => ({
  'webhook-id': d['webhook-id'],
  'webhook-timestamp': d['webhook-timestamp'],
  'webhook-signature': d['webhook-signature'],
});

function v1Verifies(secret, d) {
  try {
    new Webhook(secret).verify(d.body, headersOf(d));
    return true;
  } catch (e) {
    return false;
  }
}

function v1aVerifies(whpk, d) {
  const raw = Buffer.from(whpk.slice('whpk_'.length), 'base64');
  const key = crypto.createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: raw.toString('base64url') }, format: 'jwk' });
  const content = Buffer.from(`${d['webhook-id']}.${d['webhook-timestamp']}.${d.body}`, 'utf8');
  return d['webhook-signature']
    .split(' ')
    .some((entry) => {
      const [version, sig] = entry.split(',');
      return version === 'v1a' && crypto.verify(null, content, key, Buffer.from(sig, 'base64'));
    });
}

const count = (d) => d['webhook-signature'].split(' ').length;

// During the grace: two v1 and two v1a entries; each receiver verifies.
assert.equal(count(out.during), 4, 'during the grace: one entry per valid key');
assert.ok(v1Verifies(out.old_secret, out.during), 'old whsec_ during the grace');
assert.ok(v1Verifies(out.new_secret, out.during), 'new whsec_ during the grace');
assert.ok(v1aVerifies(out.old_public, out.during), 'old whpk_ during the grace');
assert.ok(v1aVerifies(out.new_public, out.during), 'new whpk_ during the grace');

// After it: only the new keys sign.
assert.equal(count(out.after), 2, 'after the grace: the current keys only');
assert.ok(!v1Verifies(out.old_secret, out.after), 'old whsec_ after the grace');
assert.ok(v1Verifies(out.new_secret, out.after), 'new whsec_ after the grace');
assert.ok(!v1aVerifies(out.old_public, out.after), 'old whpk_ after the grace');
assert.ok(v1aVerifies(out.new_public, out.after), 'new whpk_ after the grace');
console.log('rotation interop: old-key and new-key receivers verify during the grace; only new keys after it');
