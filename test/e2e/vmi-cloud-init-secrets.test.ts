// cloudInitNoCloud user data and network data from Secrets, through the controller (the launcher
// pod mounts the Secrets' keys at KubeVirt's paths), the launcher (the cidata ISO) and a real
// guest: the test guest's podvirt.cidata switch mounts the ISO and prints every line it finds.
// A Secret that does not exist keeps the VMI Scheduling with Synchronized=False (FailedMount) and
// a Warning Event naming it, until it is created; a Secret without the `userdata` key fails the
// VMI (VolumePreparationFailed) with a Warning Event naming the Secret and the key.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { describe, test } from 'node:test';
import type { VirtualMachineInstance } from '@podvirt/api';
import { BOOT_TIMEOUT_MS, guestVmi, NS, VmiSuite } from './vmi-stack.js';

const VMI_API = { group: 'kubevirt.io', version: 'v1', namespace: NS, plural: 'virtualmachineinstances' };

function cloudInitVmi(suite: VmiSuite, name: string, source: Record<string, unknown>): Record<string, unknown> {
  const vmi = guestVmi(suite.guest, name, { extraKernelArgs: 'podvirt.cidata=vdb' });
  const spec = vmi['spec'] as { domain: { devices: { disks: unknown[] } }; volumes: unknown[] };
  spec.domain.devices.disks.push({ name: 'cloudinitdisk', disk: { bus: 'virtio' } });
  spec.volumes.push({ name: 'cloudinitdisk', cloudInitNoCloud: source });
  return vmi;
}

function secret(name: string, stringData: Record<string, string>): Record<string, unknown> {
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: NS }, type: 'Opaque', stringData };
}

/** The guest's PODVIRT-GUEST-CIDATA lines, once it printed their end. */
async function cidataLines(suite: VmiSuite, vmi: VirtualMachineInstance): Promise<string[]> {
  const log = suite.serialLog(vmi, Object.keys(vmi.status?.activePods ?? {})[0] ?? '');
  return suite.eventually(`cloud-init seed printed by ${vmi.metadata.name ?? ''}`, async () => {
    const lines = (await readFile(log, 'utf8').catch(() => '')).split('\n').map((l) => l.replace(/\r$/, ''));
    const seed = lines.filter((l) => l.startsWith('PODVIRT-GUEST-CIDATA '));
    return seed.some((l) => l === 'PODVIRT-GUEST-CIDATA end' || l.includes('mount-failed')) ? seed : undefined;
  }, BOOT_TIMEOUT_MS);
}

describe('cloud-init data from Secrets', () => {
  const suite = VmiSuite.setUp();

  test('the guest reads user data and network data that came from Secrets', async () => {
    await suite.apply(
      secret('vm-userdata', { userdata: '#cloud-config\n# podvirt user data from a Secret\nhostname: from-secret\n' }),
      secret('vm-netdata', { networkdata: 'version: 2\n# podvirt network data from a Secret\n' }),
      cloudInitVmi(suite, 'vm-ci', { secretRef: { name: 'vm-userdata' }, networkDataSecretRef: { name: 'vm-netdata' } }),
    );
    const running = await suite.waitForPhase('vm-ci', 'Running');
    assert.deepEqual(await cidataLines(suite, running), [
      'PODVIRT-GUEST-CIDATA user-data: #cloud-config',
      'PODVIRT-GUEST-CIDATA user-data: # podvirt user data from a Secret',
      'PODVIRT-GUEST-CIDATA user-data: hostname: from-secret',
      'PODVIRT-GUEST-CIDATA network-config: version: 2',
      'PODVIRT-GUEST-CIDATA network-config: # podvirt network data from a Secret',
      'PODVIRT-GUEST-CIDATA end',
    ]);
    await suite.custom.deleteNamespacedCustomObject({ ...VMI_API, name: 'vm-ci' });
    await suite.waitForGone('vm-ci');
  });

  test('a missing Secret is named on the VMI (FailedMount) until it is created; then the VMI starts', async () => {
    await suite.apply(cloudInitVmi(suite, 'vm-late', { secretRef: { name: 'vm-late-userdata' } }));
    const waiting = await suite.eventually('Synchronized=False FailedMount', async () => {
      const c = (await suite.vmi('vm-late'))?.status?.conditions?.find((x) => x.type === 'Synchronized');
      return c?.reason === 'FailedMount' ? c : undefined;
    });
    assert.match(waiting.message ?? '', /secret "vm-late-userdata" not found/);
    assert.equal((await suite.vmi('vm-late'))?.status?.phase, 'Scheduling');
    const event = await suite.eventually('FailedMount Event', async () =>
      (await suite.events('vm-late')).find((e) => e.type === 'Warning' && e.reason === 'FailedMount'));
    assert.match(event.message ?? '', /vm-late-userdata/);
    await suite.apply(secret('vm-late-userdata', { userdata: '#cloud-config\n# arrived late\n' }));
    const running = await suite.waitForPhase('vm-late', 'Running');
    assert.ok((await cidataLines(suite, running)).includes('PODVIRT-GUEST-CIDATA user-data: # arrived late'));
    assert.equal(running.status?.conditions?.find((x) => x.type === 'Synchronized' && x.reason === 'FailedMount'), undefined);
    await suite.custom.deleteNamespacedCustomObject({ ...VMI_API, name: 'vm-late' });
    await suite.waitForGone('vm-late');
  });

  test('a Secret without the userdata key fails the VMI, naming the Secret and the key', async () => {
    await suite.apply(
      secret('vm-nokey', { 'user-data': '#cloud-config\n' }),
      cloudInitVmi(suite, 'vm-nokey', { secretRef: { name: 'vm-nokey' } }),
    );
    const failed = await suite.eventually('vm-nokey Failed', async () => {
      const vmi = await suite.vmi('vm-nokey');
      return vmi?.status?.phase === 'Failed' ? vmi : undefined;
    }, BOOT_TIMEOUT_MS);
    assert.equal(failed.status?.reason, 'VolumePreparationFailed');
    const event = await suite.eventually('SyncFailed Event', async () =>
      (await suite.events('vm-nokey')).find((e) => e.type === 'Warning' && e.reason === 'SyncFailed'));
    assert.match(event.message ?? '', /secret vm-nokey has no key userdata or userData/);
    await suite.custom.deleteNamespacedCustomObject({ ...VMI_API, name: 'vm-nokey' });
    await suite.waitForGone('vm-nokey');
  });
});
