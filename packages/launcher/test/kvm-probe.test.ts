// The KVM probe's decision from injected facts, and the probe firmware really running under
// TCG (it must exit qemu with code 99 — which is what the KVM run checks for).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { presentDeviceNodes } from '../src/host/device-nodes.js';
import { probeFirmware, probeKvm } from '../src/host/kvm-probe.js';

const deps = (over: Partial<Parameters<typeof probeKvm>[0]> = {}) => ({
  deviceAccessible: () => Promise.resolve(true),
  cpuinfo: () => Promise.resolve('processor\t: 0\nflags\t\t: fpu vme svm lm\n'),
  runGuest: () => Promise.resolve(99),
  ...over,
});

test('KVM is usable only when device, CPU flags and a real guest run all agree', async () => {
  assert.equal((await probeKvm(deps())).usable, true);
  assert.match((await probeKvm(deps({ deviceAccessible: () => Promise.resolve(false) }))).reason, /dev\/kvm/);
  assert.match((await probeKvm(deps({ cpuinfo: () => Promise.resolve('flags\t: fpu vme lm\n') }))).reason, /vmx nor svm/);
  assert.match((await probeKvm(deps({ runGuest: () => Promise.resolve(134) }))).reason, /exit 134/);
  assert.equal((await probeKvm(deps({ runGuest: () => Promise.resolve(null) }))).usable, false);
});

test('the probe firmware runs to its exit port under TCG', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'podvirt-fw-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const bios = join(dir, 'probe.bin');
  await writeFile(bios, probeFirmware());
  const code = await new Promise<number | null>((resolve) =>
    execFile('qemu-system-x86_64', ['-machine', 'pc,accel=tcg', '-nodefaults', '-display', 'none', '-bios', bios, '-device', 'isa-debug-exit,iobase=0xf4,iosize=0x04'], { timeout: 10_000 },
      (err) => resolve(err === null ? 0 : typeof err.code === 'number' ? err.code : null)),
  );
  assert.equal(code, 99);
});

test('presentDeviceNodes names the plugin device nodes that exist, in a fixed order', async () => {
  const have = new Set(['/dev/vhost-net', '/dev/kvm']);
  assert.deepEqual(await presentDeviceNodes(async (p) => have.has(p)), ['/dev/kvm', '/dev/vhost-net']);
  assert.deepEqual(await presentDeviceNodes(async () => false), []);
});
