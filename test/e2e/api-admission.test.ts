// podvirt-api's admission webhooks on both control planes: kube-apiserver and the in-repo API
// server call them (the testbed points the manifests' webhook configurations at the host's
// pod-network address, podvirt-api-process.ts), so `kubectl apply` of a bad VMI or VM is refused
// naming the field with the same text on both, the stored VMI carries its defaults, and with
// podvirt-api down nothing gets in unchecked.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, test } from 'node:test';
import { guestVmi, NS, VmiSuite } from './vmi-stack.js';

const skip = process.env['PODVIRT_SKIP_REAL_CONTROL_PLANE'] === '1' ? 'PODVIRT_SKIP_REAL_CONTROL_PLANE=1' : false;

/** Sum and count of a histogram in Prometheus text, summed over its label sets (matching `labels`). */
function histogram(text: string, name: string, labels: string): { sum: number; count: number } {
  const total = (suffix: string): number => text.split('\n')
    .filter((l) => l.startsWith(`${name}_${suffix}{`) && l.includes(labels))
    .reduce((acc, l) => acc + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
  return { sum: total('sum'), count: total('count') };
}

for (const lane of ['in-repo', 'real'] as const) describe(`podvirt-api admission on the ${lane} control plane`, { skip: lane === 'real' ? skip : false }, () => {
  const suite = VmiSuite.setUp({ stack: lane === 'real' ? { controlPlane: 'real' } : {} });

  test('kubectl apply of a VMI with a bad field is refused naming the field; nothing is stored', async () => {
    const vmi = guestVmi(suite.guest, 'bad-bus') as { spec: { domain: { devices: { disks: Array<Record<string, unknown>> } } } };
    vmi.spec.domain.devices.disks[0] = { name: 'data', disk: { bus: 'floppy' } };
    const out = await suite.kubectl(['apply', '-f', '-'], JSON.stringify(vmi));
    assert.notEqual(out.code, 0);
    assert.match(out.stderr, /The VirtualMachineInstance "bad-bus" is invalid: spec\.domain\.devices\.disks\[0\]\.disk\.bus: Unsupported value: "floppy" is not supported/);
    assert.equal(await suite.vmi('bad-bus'), undefined);
    // Refused by podvirt-api's webhook (the CRD's schema has no enum for the bus).
    assert.ok(suite.stack.api.lines.some((l) => l.msg === 'admission refused' && l['webhook'] === 'virtualmachineinstances-validate'));
  });

  test('the stored VMI shows its defaults; on the real lane, the admission latency kube-apiserver measured is reported', async () => {
    // It never needs to run: a node selector no node matches keeps its launcher pod from starting,
    // so its deletion below completes at once. A guest left booting would hold the stack's close
    // for the pod's whole grace period (about 50 s on the in-repo lane).
    const vmi = guestVmi(suite.guest, 'defaulted');
    await suite.apply({ ...vmi, spec: { ...(vmi['spec'] as object), nodeSelector: { 'podvirt.io/no-such-node': 'x' } } });
    const got = await suite.kubectl(['get', 'vmi', 'defaulted', '-n', NS, '-o', 'json']);
    assert.equal(got.code, 0, got.stderr);
    const spec = (JSON.parse(got.stdout) as { spec: { domain: { machine?: { type?: string }; cpu?: Record<string, number>; devices: { watchdog?: unknown; autoattachSerialConsole?: boolean } } } }).spec;
    assert.equal(spec.domain.machine?.type, 'q35');
    assert.deepEqual({ sockets: spec.domain.cpu?.['sockets'], cores: spec.domain.cpu?.['cores'], threads: spec.domain.cpu?.['threads'] }, { sockets: 1, cores: 1, threads: 1 });
    assert.equal(spec.domain.devices.autoattachSerialConsole, true);
    const del = await suite.kubectl(['delete', 'vmi', 'defaulted', '-n', NS, '--wait=false']);
    assert.equal(del.code, 0, del.stderr);
    // kube-apiserver's own metrics: several MiB, more than the kubectl helper buffers.
    const cp = suite.stack.testbed.controlPlane;
    if (cp === undefined) return;
    const metrics = await promisify(execFile)(cp.binaries.kubectl, ['--kubeconfig', suite.stack.kubeconfigPath, 'get', '--raw', '/metrics'], { maxBuffer: 64 << 20 });
    for (const name of ['virtualmachineinstances-mutator.podvirt.io', 'virtualmachineinstances-validator.podvirt.io']) {
      // kube-apiserver's histogram of the time each webhook call added to a request.
      const h = histogram(metrics.stdout, 'apiserver_admission_webhook_admission_duration_seconds', `name="${name}"`);
      assert.ok(h.count >= 1, `${name}: ${JSON.stringify(h)}`);
      process.stdout.write(`# admission latency ${name}: ${h.count} calls, mean ${(1000 * h.sum / h.count).toFixed(1)} ms\n`);
    }
  });

  test('a VirtualMachine whose template is invalid is refused naming the template field', async () => {
    const vm = {
      apiVersion: 'kubevirt.io/v1',
      kind: 'VirtualMachine',
      metadata: { name: 'bad-vm', namespace: NS },
      spec: { runStrategy: 'Halted', template: { spec: { domain: { devices: {} } } } },
    };
    const out = await suite.kubectl(['apply', '-f', '-'], JSON.stringify(vm));
    assert.notEqual(out.code, 0);
    assert.match(out.stderr, /The VirtualMachine "bad-vm" is invalid: spec\.template\.spec\.domain\.resources\.requests\.memory: .*guest memory/);
    assert.ok(suite.stack.api.lines.some((l) => l.msg === 'admission refused' && l['webhook'] === 'virtualmachines-validate'));
  });

  test('with podvirt-api down, a VMI is refused with a clear message, never stored unchecked', async () => {
    await suite.stack.api.stop();
    const out = await suite.kubectl(['apply', '-f', '-'], JSON.stringify(guestVmi(suite.guest, 'while-down')));
    assert.notEqual(out.code, 0);
    assert.match(out.stderr, /failed calling webhook "virtualmachineinstances-mutator\.podvirt\.io"/);
    assert.match(out.stderr, /connection refused/);
    assert.equal(await suite.vmi('while-down'), undefined);
  });
});
