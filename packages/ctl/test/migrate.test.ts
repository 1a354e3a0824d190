import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { VirtualMachineInstance, VirtualMachineInstanceMigration } from '@podvirt/api';
import { KubeApiError } from '@podvirt/kube-runtime';
import { runCli } from '../src/cli.js';
import type { MigrationApi } from '../src/migration-api.js';

class FakeMigrationApi implements MigrationApi {
  readonly vmis = new Map<string, VirtualMachineInstance>();
  readonly migrations: VirtualMachineInstanceMigration[] = [];
  readonly deleted: string[] = [];
  createRefusal: Error | undefined;
  closed = 0;

  runningVmi(name: string, migratable: 'True' | 'False' = 'True'): void {
    this.vmis.set(`default/${name}`, {
      apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', metadata: { name, namespace: 'default' }, spec: { domain: { devices: {} } },
      status: { phase: 'Running', conditions: [{ type: 'LiveMigratable', status: migratable, ...(migratable === 'False' ? { reason: 'InterfaceNotLiveMigratable', message: 'a bridge interface on the pod network' } : {}), lastProbeTime: null, lastTransitionTime: null }] },
    } as VirtualMachineInstance);
  }

  async readVmi(namespace: string, name: string): Promise<VirtualMachineInstance | undefined> {
    await Promise.resolve();
    return this.vmis.get(`${namespace}/${name}`);
  }

  async createMigration(vmim: VirtualMachineInstanceMigration): Promise<VirtualMachineInstanceMigration> {
    await Promise.resolve();
    if (this.createRefusal !== undefined) throw this.createRefusal;
    const created = { ...vmim, metadata: { ...vmim.metadata, name: `${vmim.metadata.generateName ?? ''}x7k2p` } };
    this.migrations.push(created);
    return created;
  }

  async listMigrations(): Promise<VirtualMachineInstanceMigration[]> {
    await Promise.resolve();
    return [...this.migrations];
  }

  async deleteMigration(_namespace: string, name: string): Promise<boolean> {
    await Promise.resolve();
    this.deleted.push(name);
    return true;
  }
}

async function ctl(api: FakeMigrationApi, argv: string[]): Promise<{ code: number; stdout: string; stderr: string; kubeconfig: string | undefined }> {
  let stdout = '';
  let stderr = '';
  let kubeconfig: string | undefined;
  const code = await runCli({
    argv, env: { socket: undefined }, version: 'test', signal: new AbortController().signal,
    stdout: { write: (c: string) => (stdout += c) }, stderr: { write: (c: string) => (stderr += c) },
    openMigrationApi: async (k) => {
      await Promise.resolve();
      kubeconfig = k;
      return { api, close: async () => void (api.closed += 1) };
    },
  });
  return { code, stdout, stderr, kubeconfig };
}

describe('podvirtctl migrate', () => {
  test('creates a migration of the VMI and prints its name; -o json gives the object', async () => {
    const api = new FakeMigrationApi();
    api.runningVmi('testvm');
    const run = await ctl(api, ['migrate', 'vmi', 'testvm', '--kubeconfig', '/tmp/kc']);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, 'kubevirt-migrate-vm-x7k2p\n');
    assert.match(run.stderr, /kubectl get vmim kubevirt-migrate-vm-x7k2p -n default -w/);
    assert.equal(run.kubeconfig, '/tmp/kc');
    assert.deepEqual(api.migrations[0], {
      apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstanceMigration',
      metadata: { generateName: 'kubevirt-migrate-vm-', namespace: 'default', name: 'kubevirt-migrate-vm-x7k2p' }, spec: { vmiName: 'testvm' },
    });
    assert.equal(api.closed, 1);
    const other = new FakeMigrationApi();
    other.runningVmi('testvm');
    const json = await ctl(other, ['migrate', 'default/testvm', '-o', 'json']);
    assert.deepEqual(JSON.parse(json.stdout), { name: 'kubevirt-migrate-vm-x7k2p', namespace: 'default', vmiName: 'testvm' });
  });

  test('errors name the problem: a missing VMI, one not running, one not migratable, one already migrating, the API\'s refusal', async () => {
    const api = new FakeMigrationApi();
    let run = await ctl(api, ['migrate', 'vmi', 'nope']);
    assert.deepEqual([run.code, run.stderr], [1, 'error: VMI default/nope not found\n']);
    api.vmis.set('default/stopped', { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', metadata: { name: 'stopped' }, spec: { domain: { devices: {} } }, status: { phase: 'Succeeded' } } as VirtualMachineInstance);
    run = await ctl(api, ['migrate', 'vmi', 'stopped']);
    assert.match(run.stderr, /^error: VMI default\/stopped is Succeeded, not Running/);
    api.runningVmi('bridged', 'False');
    run = await ctl(api, ['migrate', 'vmi', 'bridged']);
    assert.equal(run.stderr, 'error: VMI default/bridged is not live migratable: InterfaceNotLiveMigratable: a bridge interface on the pod network\n');
    api.runningVmi('testvm');
    assert.equal((await ctl(api, ['migrate', 'vmi', 'testvm'])).code, 0);
    run = await ctl(api, ['migrate', 'vmi', 'testvm']);
    assert.match(run.stderr, /^error: VMI default\/testvm is already migrating \(kubevirt-migrate-vm-x7k2p, Pending\); cancel it with "podvirtctl migrate-cancel vmi testvm -n default"/);
    api.runningVmi('quota');
    api.createRefusal = new KubeApiError(403, 'Forbidden', 'virtualmachineinstancemigrations.kubevirt.io is forbidden: User "bob" cannot create resource');
    run = await ctl(api, ['migrate', 'vmi', 'quota']);
    assert.match(run.stderr, /^error: virtualmachineinstancemigrations.kubevirt.io is forbidden: User "bob"/);
    assert.equal((await ctl(api, ['migrate', 'vmi', 'testvm', '--socket', '/x'])).code, 2, 'node API flags are refused');
    assert.equal((await ctl(api, ['migrate'])).code, 2);
  });

  test('migrate-cancel deletes the VMI\'s unfinished migration, and says when there is none', async () => {
    const api = new FakeMigrationApi();
    api.runningVmi('testvm');
    let run = await ctl(api, ['migrate-cancel', 'vmi', 'testvm']);
    assert.deepEqual([run.code, run.stderr], [1, 'error: VMI default/testvm has no migration in progress\n']);
    api.migrations.push({ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstanceMigration', metadata: { name: 'old', namespace: 'default' }, spec: { vmiName: 'testvm' }, status: { phase: 'Succeeded' } });
    await ctl(api, ['migrate', 'vmi', 'testvm']);
    run = await ctl(api, ['migrate-cancel', 'vmi', 'testvm']);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, 'kubevirt-migrate-vm-x7k2p\n');
    assert.deepEqual(api.deleted, ['kubevirt-migrate-vm-x7k2p']);
  });
});
