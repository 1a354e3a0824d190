// Five VMIs applied at once on the testbed all reach Running with their guests up, and are all
// deleted cleanly: Succeeded, pods gone, no qemu left.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { guestVmi, VmiSuite } from './vmi-stack.js';

const COUNT = 5;

describe('several VMIs at once on the testbed', () => {
  const suite = VmiSuite.setUp();

  test(`${COUNT} VMIs reach Running together and are all deleted cleanly`, async () => {
    const names = Array.from({ length: COUNT }, (_, i) => `vm-many-${i}`);
    await suite.apply(...names.map((name) => guestVmi(suite.guest, name, { gracePeriodSeconds: 30 })));
    // Five TCG boots queue on two cores: allow for it.
    const running = await Promise.all(names.map((name) => suite.waitForPhase(name, 'Running', 240_000)));
    await Promise.all(running.map((vmi) => suite.waitForGuestReady(vmi)));
    const table = await suite.kubectl(['get', 'vmi', '--no-headers']);
    assert.equal(table.stdout.trim().split('\n').filter((l) => /\bRunning\b/.test(l)).length, COUNT, table.stdout);
    const qemus = (await Promise.all(names.map((name) => suite.qemuPids(name)))).map((p) => p.length);
    assert.deepEqual(qemus, names.map(() => 1), 'one qemu per VMI');
    const pods = new Set(running.flatMap((vmi) => Object.keys(vmi.status?.activePods ?? {})));
    assert.equal(pods.size, COUNT, 'one launcher pod per VMI');

    assert.equal((await suite.kubectl(['delete', 'vmi', ...names, '--wait=false'])).code, 0);
    await Promise.all(names.map((name) => suite.waitForPhase(name, 'Succeeded', 180_000)));
    await Promise.all(names.map((name) => suite.waitForGone(name, 120_000)));
    await Promise.all(running.map((vmi) => suite.waitForPodsGone(vmi)));
    for (const name of names) assert.deepEqual(await suite.qemuPids(name), [], `no qemu of ${name}`);
  });
});
