import assert from 'node:assert/strict';
import { test } from 'node:test';
import { domainName } from '../src/convert/domain-name.js';

test('a domain is named <namespace>_<name> while that fits libvirt', () => {
  assert.equal(domainName('default', 'testvm'), 'default_testvm');
});

test('a name too long for libvirt is cut and keeps a hash of the whole, so two long names stay apart', () => {
  const ns = 'n'.repeat(63);
  const a = domainName(ns, `${'a'.repeat(240)}.x`);
  const b = domainName(ns, `${'a'.repeat(240)}.y`);
  assert.ok(a.length <= 200, `length ${a.length}`);
  assert.ok(a.startsWith(`${ns}_aaaa`));
  assert.notEqual(a, b);
  assert.equal(domainName(ns, `${'a'.repeat(240)}.x`), a);
});
