// The launcher's start-up capability check: which required capabilities a /proc status lacks
// (effective and bounding both count), and the error that names each with its reason.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { CapabilityError, checkCapabilities, missingCapabilities, REQUIRED_CAPABILITIES } from '../src/host/capabilities.js';

const status = (eff: string, bnd: string): string => `Name:\tnode\nCapInh:\t0000000000000000\nCapPrm:\t${eff}\nCapEff:\t${eff}\nCapBnd:\t${bnd}\nCapAmb:\t0000000000000000\n`;
// CHOWN(0) DAC_OVERRIDE(1) SETGID(6) SETUID(7) SETPCAP(8) NET_BIND_SERVICE(10): what the controller renders.
const RENDERED = '00000000000005c3';

describe('missingCapabilities', () => {
  test('the rendered set lacks nothing; a full root set lacks nothing', () => {
    assert.deepEqual(missingCapabilities(status(RENDERED, RENDERED)), []);
    assert.deepEqual(missingCapabilities(status('000001ffffffffff', '000001ffffffffff')), []);
  });

  test('one capability short: that one, from the effective or the bounding set', () => {
    const noSetpcap = (0x5c3 & ~(1 << 8)).toString(16).padStart(16, '0');
    assert.deepEqual(missingCapabilities(status(noSetpcap, RENDERED)).map((c) => c.name), ['CAP_SETPCAP']);
    assert.deepEqual(missingCapabilities(status(RENDERED, noSetpcap)).map((c) => c.name), ['CAP_SETPCAP']);
  });

  test('none at all (a non-root process): every required one, in order', () => {
    assert.deepEqual(missingCapabilities(status('0000000000000000', '000001ffffffffff')).map((c) => c.name), REQUIRED_CAPABILITIES.map((c) => c.name));
  });

  test('a status without the capability lines is an error, not a pass', () => {
    assert.throws(() => missingCapabilities('Name:\tnode\n'), { code: 'LAUNCHER_ERR_CAPABILITIES' });
  });
});

describe('checkCapabilities', () => {
  test('names each missing capability, why it is needed and what to add', async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'podvirt-caps-'));
    t.after(() => rm(dir, { recursive: true, force: true }));
    const path = join(dir, 'status');
    await writeFile(path, status('00000000000004c3', '00000000000004c3'));
    const err = await checkCapabilities(path).then(() => undefined, (e: unknown) => e);
    assert.ok(err instanceof CapabilityError);
    assert.equal(err.code, 'LAUNCHER_ERR_CAPABILITIES');
    assert.equal(err.message,
      'CAP_SETPCAP missing: the libvirt daemon drops capabilities before it starts qemu'
      + ' (add SETPCAP to the compute container\'s securityContext.capabilities)');
    await writeFile(path, status(RENDERED, RENDERED));
    await checkCapabilities(path);
  });
});
