// The podvirt-controller binary as a process: flags, JSON logs on stdout, leader election, and
// a graceful exit 0 on SIGTERM that hands the Lease back.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, describe, test } from 'node:test';
import { CoordinationV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import type { VirtualMachineInstance } from '@podvirt/api';
import { eventually } from '@podvirt/test-support';
import { repoRoot } from '../testbed/guest/repo-root.js';
import { startTestApiServer, type TestApiServer } from './testbed-helpers.js';

interface LogLine {
  level: number;
  msg: string;
  component?: string;
  [key: string]: unknown;
}

describe('podvirt-controller process', () => {
  let tb: TestApiServer;
  let child: ChildProcess;
  const lines: LogLine[] = [];
  let exit: Promise<number | null>;

  before(async () => {
    tb = await startTestApiServer();
    const bin = join(repoRoot(import.meta.url), 'packages/controller/bin/podvirt-controller.js');
    child = spawn(process.execPath, [bin, '--kubeconfig', tb.kubeconfigPath, '--leader-elect', '--workers', '2', '--launcher-image', 'podvirt/launcher:proc'], {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, POD_NAME: 'controller-0' },
    });
    exit = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => lines.push(JSON.parse(line) as LogLine));
  });
  after(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exit;
    await tb.close();
  });

  test('starts, leads, reconciles a VMI, and exits 0 on SIGTERM releasing the Lease', async () => {
    await eventually(() => lines.find((l) => l.msg === 'controller started'), { what: 'controller started', deadlineMs: 10_000 });
    assert.ok(lines.every((l) => l.component === 'podvirt-controller'), 'JSON lines with the component binding');
    const custom = tb.kubeConfig.makeApiClient(CustomObjectsApi);
    const api = { group: 'kubevirt.io', version: 'v1', namespace: 'default', plural: 'virtualmachineinstances' };
    await custom.createNamespacedCustomObject({
      ...api,
      body: {
        apiVersion: 'kubevirt.io/v1',
        kind: 'VirtualMachineInstance',
        metadata: { name: 'proc-vm' },
        spec: { domain: { devices: {}, resources: { requests: { memory: '128Mi' } } } },
      },
    });
    await eventually(async () => {
      const vmi = (await custom.getNamespacedCustomObject({ ...api, name: 'proc-vm' })) as VirtualMachineInstance;
      return vmi.status?.phase === 'Scheduling' ? vmi : undefined;
    }, { what: 'Scheduling', deadlineMs: 10_000 });
    const created = lines.find((l) => l.msg === 'created launcher pod');
    assert.equal(created?.['name'], 'proc-vm', 'per-VMI child logger carries namespace/name/uid');
    assert.equal(created?.['namespace'], 'default');
    assert.equal(typeof created?.['uid'], 'string');

    child.kill('SIGTERM');
    assert.equal(await exit, 0);
    const lease = await tb.kubeConfig.makeApiClient(CoordinationV1Api).readNamespacedLease({ name: 'podvirt-controller', namespace: 'kube-system' });
    assert.equal(lease.spec?.holderIdentity ?? '', '');
    assert.ok(lines.some((l) => l.msg === 'leadership ended'));
  });
});
