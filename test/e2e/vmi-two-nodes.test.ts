// podvirt on the two-node testbed: each node has its own kubelet and handler (own pods dir,
// node API socket, ghost records). A VMI pinned to the second node runs there, its handler
// owns it and writes LiveMigratable (what `kubectl get vmi -o wide` shows), the first node's
// handler never touches it, and deleting it leaves nothing on either node.
import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { guestVmi, VmiSuite } from './vmi-stack.js';

describe('VMIs on the two-node testbed', () => {
  const suite = VmiSuite.setUp({ stack: { nodes: 2 } });

  test('a VMI pinned to node 2 runs there, under node 2\'s handler, and is LiveMigratable', async () => {
    const [a, b] = suite.stack.nodes;
    assert.ok(a !== undefined && b !== undefined);
    assert.notEqual(a.nodeApiSocket, b.nodeApiSocket);
    const name = 'twonode-vm';
    const manifest = guestVmi(suite.guest, name);
    ((manifest['spec'] as Record<string, unknown>)['nodeSelector']) = { 'kubernetes.io/hostname': b.nodeName };
    await suite.apply(manifest);
    const running = await suite.waitForPhase(name, 'Running');
    assert.equal(running.status?.nodeName, b.nodeName);
    await suite.waitForGuestReady(running);
    const vmi = await suite.eventually('LiveMigratable written', async () => {
      const v = await suite.vmi(name);
      return v?.status?.conditions?.some((c) => c.type === 'LiveMigratable') === true ? v : undefined;
    });
    assert.equal(vmi.status?.migrationMethod, 'BlockMigration');
    const wide = await suite.kubectl(['get', 'vmi', name, '-o', 'wide']);
    assert.match(wide.stdout, /LIVE-MIGRATABLE/);
    assert.match(wide.stdout, new RegExp(`${name}\\s+\\S+\\s+Running\\s+\\S*\\s*${b.nodeName}\\s+True\\s+True`));
    const ghosts = async (dir: string): Promise<string[]> => readdir(join(dir, 'ghost-records')).catch(() => []);
    assert.equal((await ghosts(b.handlerDir)).length, 1, 'node 2\'s handler keeps the ghost record');
    assert.deepEqual(await ghosts(a.handlerDir), [], 'node 1\'s handler knows nothing of it');
    assert.equal(a.handler.lines.some((l) => JSON.stringify(l).includes(name)), false, 'node 1\'s handler never acted on it');

    await suite.kubectl(['delete', 'vmi', name, '--wait=false']);
    await suite.waitForGone(name);
    await suite.waitForPodsGone(vmi);
    assert.deepEqual(await suite.qemuPids(name), []);
    assert.deepEqual(await ghosts(b.handlerDir), []);
  });
});
