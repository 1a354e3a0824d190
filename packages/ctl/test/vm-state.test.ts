import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { RunStrategy, VirtualMachine, VirtualMachineInstance, VmSpec, VmStateApi } from '@podvirt/api';
import { runCli } from '../src/cli.js';

class FakeVmApi implements VmStateApi {
  vm: VirtualMachine | undefined;
  vmi: VirtualMachineInstance | undefined;
  readonly writes: string[] = [];
  /** Conflicts to answer the next status writes with. */
  conflicts = 0;
  closed = 0;

  constructor(spec: Partial<Pick<VmSpec, 'running' | 'runStrategy'>>, vmiPhase?: string) {
    this.vm = { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', metadata: { name: 'testvm', namespace: 'default', resourceVersion: '5' }, spec: { ...spec, template: { spec: { domain: { devices: {} } } } } };
    if (vmiPhase !== undefined) {
      this.vmi = { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', metadata: { name: 'testvm', namespace: 'default', uid: 'vmi-uid' }, spec: { domain: { devices: {} } }, status: { phase: vmiPhase as 'Running' } };
    }
  }

  readVm(): Promise<VirtualMachine | undefined> {
    return Promise.resolve(this.vm);
  }

  readVmi(): Promise<VirtualMachineInstance | undefined> {
    return Promise.resolve(this.vmi);
  }

  replaceVmStatus(vm: VirtualMachine): Promise<'written' | 'stale'> {
    if (this.conflicts > 0) {
      this.conflicts -= 1;
      return Promise.resolve('stale');
    }
    this.writes.push(`status ${JSON.stringify(vm.status?.stateChangeRequests)}`);
    return Promise.resolve('written');
  }

  patchVmSpec(_ns: string, _name: string, spec: object, resourceVersion: string | undefined): Promise<'written' | 'stale'> {
    this.writes.push(`spec ${JSON.stringify(spec)} @${resourceVersion ?? ''}`);
    return Promise.resolve('written');
  }

  setVmiGracePeriod(_ns: string, _name: string, seconds: number): Promise<void> {
    this.writes.push(`grace ${seconds}`);
    return Promise.resolve();
  }
}

async function ctl(api: FakeVmApi, argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await runCli({
    argv, env: { socket: undefined }, version: 'test', signal: new AbortController().signal,
    stdout: { write: (c: string) => (stdout += c) }, stderr: { write: (c: string) => (stderr += c) },
    openVmApi: () => Promise.resolve({ api, close: async () => void (api.closed += 1) }),
  });
  return { code, stdout, stderr };
}

const strategy = (s: RunStrategy): Partial<Pick<VmSpec, 'runStrategy'>> => ({ runStrategy: s });

describe('podvirtctl start|stop|restart vm', () => {
  test('Halted: start sets runStrategy Always; running: false becomes running: true', async () => {
    const api = new FakeVmApi(strategy('Halted'));
    const run = await ctl(api, ['start', 'vm', 'testvm']);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, 'VM testvm was scheduled to start\n');
    assert.deepEqual(api.writes, ['spec {"runStrategy":"Always"} @5']);
    assert.equal(api.closed, 1);
    const old = new FakeVmApi({ running: false });
    assert.equal((await ctl(old, ['start', 'default/testvm'])).code, 0);
    assert.deepEqual(old.writes, ['spec {"running":true} @5']);
  });

  test('Always: stop sets runStrategy Halted; start is refused (running, or not: it starts by itself)', async () => {
    const api = new FakeVmApi(strategy('Always'), 'Running');
    assert.equal((await ctl(api, ['stop', 'vm', 'testvm'])).code, 0);
    assert.deepEqual(api.writes, ['spec {"runStrategy":"Halted"} @5']);
    const start = await ctl(api, ['start', 'vm', 'testvm']);
    assert.equal(start.code, 1);
    assert.match(start.stderr, /VM default\/testvm is already running/);
    api.vmi = undefined;
    assert.match((await ctl(api, ['start', 'vm', 'testvm'])).stderr, /runStrategy Always: it starts by itself/);
  });

  test('Manual: start and stop are state change requests; restart is Stop(uid) then Start', async () => {
    const stopped = new FakeVmApi(strategy('Manual'));
    assert.equal((await ctl(stopped, ['start', 'testvm'])).code, 0);
    assert.deepEqual(stopped.writes, ['status [{"action":"Start"}]']);
    const running = new FakeVmApi(strategy('Manual'), 'Running');
    assert.equal((await ctl(running, ['stop', 'testvm'])).code, 0);
    assert.equal((await ctl(running, ['restart', 'testvm'])).code, 0);
    assert.deepEqual(running.writes, ['status [{"action":"Stop","uid":"vmi-uid"}]', 'status [{"action":"Stop","uid":"vmi-uid"},{"action":"Start"}]']);
  });

  test('stop --force [--grace-period N] shortens the VMI grace period first; --grace-period alone is a usage error', async () => {
    const api = new FakeVmApi(strategy('RerunOnFailure'), 'Running');
    assert.equal((await ctl(api, ['stop', 'vm', 'testvm', '--force', '--grace-period', '5'])).code, 0);
    assert.equal((await ctl(api, ['stop', 'vm', 'testvm', '--force'])).code, 0);
    assert.deepEqual(api.writes, ['grace 5', 'status [{"action":"Stop","uid":"vmi-uid"}]', 'grace 0', 'status [{"action":"Stop","uid":"vmi-uid"}]']);
    const usage = await ctl(api, ['stop', 'vm', 'testvm', '--grace-period', '5']);
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /--grace-period goes with --force/);
  });

  test('a VM that changed between read and write is read again; a missing or stopped VM is named', async () => {
    const api = new FakeVmApi(strategy('Manual'));
    api.conflicts = 1;
    assert.equal((await ctl(api, ['start', 'vm', 'testvm'])).code, 0);
    assert.deepEqual(api.writes, ['status [{"action":"Start"}]']);
    const stopped = await ctl(new FakeVmApi(strategy('Manual')), ['stop', 'vm', 'testvm']);
    assert.match(stopped.stderr, /VM default\/testvm is not running/);
    const gone = new FakeVmApi(strategy('Manual'));
    gone.vm = undefined;
    assert.match((await ctl(gone, ['restart', 'vm', 'testvm'])).stderr, /VM default\/testvm not found/);
    assert.match((await ctl(gone, ['start', 'vmi', 'testvm'])).stderr, /acts on VirtualMachines: use "podvirtctl start vm NAME"/);
  });
});
