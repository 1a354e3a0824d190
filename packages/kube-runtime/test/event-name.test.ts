// Event names stay valid DNS subdomains within 253 characters whatever the object's name.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { eventName, eventNamePrefix } from '../src/event-name.js';

const SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

test('short names are kept; long ones are cut so that name, dot and suffix fit 253 characters', () => {
  assert.equal(eventName('vm1', '17f0a'), 'vm1.17f0a');
  const long = `${'a'.repeat(120)}.${'b'.repeat(120)}.${'c'.repeat(11)}`;
  const suffix = (2n ** 63n).toString(16);
  for (const name of [long, `${'x'.repeat(236)}-${'y'.repeat(16)}`, `${'x'.repeat(236)}.${'y'.repeat(16)}`, 'z'.repeat(253)]) {
    const full = eventName(name, suffix);
    assert.ok(full.length <= 253, `${full.length}`);
    assert.match(full, SUBDOMAIN);
    const generated = `${eventNamePrefix(name, 5)}abcde`;
    assert.ok(generated.length <= 253);
    assert.match(generated, SUBDOMAIN);
  }
});
