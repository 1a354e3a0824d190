// The VMI against what this node offers, with the capabilities a real libvirt 9.0 / QEMU 7.2
// daemon reported under TCG (fixtures/*.xml): refused by field before anything is defined.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { status } from '@grpc/grpc-js';
import { ErrorNumber, LibvirtError } from '@podvirt/libvirt';
import { checkAgainstNode } from '../src/convert/node-check.js';
import { NodeLacksError } from '../src/errors.js';
import { parseCpu, parseMachines, readNodeFacts, type CapabilitiesSource, type NodeFacts } from '../src/host/node-facts.js';
import { toGrpcStatus } from '../src/server/grpc-status.js';
import { baseVmi } from './vmi-fixture.js';

const fixture = (name: string): string => readFileSync(fileURLToPath(new URL(`../../test/fixtures/${name}`, import.meta.url)), 'utf8');
const EMULATOR = '/usr/bin/qemu-system-x86_64';
const machines = parseMachines(fixture('capabilities-x86_64.xml'), EMULATOR);
const cpu = parseCpu(fixture('domcaps-q35-tcg.xml'));
const FACTS: NodeFacts = { machines, cpuModels: cpu.models, cpuModes: cpu.modes, memoryBytes: 4n * 2n ** 30n };

function refusal(domain: Record<string, unknown>): { field: string; message: string; code: status } | undefined {
  try {
    checkAgainstNode(baseVmi({}, domain), FACTS, 'qemu');
    return undefined;
  } catch (err) {
    assert.ok(err instanceof NodeLacksError, String(err));
    return { field: err.field, message: err.message, code: toGrpcStatus(err).code };
  }
}

test('reads machine types with their vCPU limits and the CPU models and modes', () => {
  assert.equal(machines.get('q35'), 288);
  assert.equal(machines.get('pc-q35-7.2'), 288);
  assert.ok(cpu.models.has('qemu64') && cpu.models.has('Skylake-Client'));
  assert.ok(cpu.modes.has('host-model') && cpu.modes.has('custom'));
  assert.ok(!cpu.modes.has('host-passthrough'), 'TCG has no host CPU to pass through');
});

test('a VMI the node can run passes', () => {
  assert.equal(refusal({ cpu: { cores: 2, model: 'Skylake-Client' }, machine: { type: 'pc-q35-7.1' } }), undefined);
  assert.equal(refusal({ cpu: { model: 'host-model', sockets: 255 } }), undefined);
});

const REFUSED: [title: string, domain: Record<string, unknown>, field: string, words: RegExp][] = [
  ['host-passthrough under TCG', { cpu: { model: 'host-passthrough' } }, 'spec.domain.cpu.model', /no host CPU to pass through/],
  ['an unknown CPU model', { cpu: { model: 'Quantum-9000' } }, 'spec.domain.cpu.model', /no CPU model "Quantum-9000"; it offers /],
  ['a machine type the emulator lacks', { machine: { type: 'pc-q35-99.0' } }, 'spec.domain.machine.type', /no machine type "pc-q35-99.0"; it offers .*q35/],
  ['more vCPUs than q35 takes here', { cpu: { sockets: 17, cores: 17 } }, 'spec.domain.cpu', /289 vCPUs .* exceed the 255/],
  ['more than 255 vCPUs without an IOMMU', { cpu: { cores: 256 } }, 'spec.domain.cpu', /256 vCPUs .* exceed the 255/],
  ['more memory than the node has', { resources: { requests: { memory: '64Gi' } } }, 'spec.domain.resources.requests.memory', /64\.0 GiB is more than this node has \(4\.0 GiB\)/],
];

for (const [title, domain, field, words] of REFUSED) {
  test(`refused as the node's lack: ${title}`, () => {
    const found = refusal(domain);
    assert.equal(found?.field, field);
    assert.match(found.message, words);
    assert.equal(found.code, status.FAILED_PRECONDITION);
  });
}

/** A daemon that has the fixtures' emulator: domain capabilities for its q35 machines only. */
function daemon(calls: string[]): CapabilitiesSource {
  const libvirtError = (code: number, message: string): LibvirtError =>
    new LibvirtError({ code, domain: 10, message, level: 2, str1: null, str2: null, str3: null, int1: 0, int2: 0 });
  return {
    getCapabilities: () => {
      calls.push('capabilities');
      return Promise.resolve(fixture('capabilities-x86_64.xml'));
    },
    getDomainCapabilities: ({ machine }) => {
      calls.push(`domcaps ${machine}`);
      if (machine === 'broken') return Promise.reject(libvirtError(ErrorNumber.INTERNAL_ERROR, 'internal error: probe failed'));
      if (!machines.has(machine)) return Promise.reject(libvirtError(ErrorNumber.INVALID_ARG, `invalid argument: the machine '${machine}' is not supported by emulator '${EMULATOR}'`));
      return Promise.resolve(fixture('domcaps-q35-tcg.xml'));
    },
  };
}

test('the facts of a machine type come from its domain capabilities alone (the host capabilities probe every emulator)', async () => {
  const calls: string[] = [];
  const facts = await readNodeFacts(daemon(calls), EMULATOR, 'qemu', 'q35');
  assert.deepEqual(calls, ['domcaps q35']);
  assert.deepEqual([...facts.machines], [['q35', 288], ['pc-q35-7.2', 288]]);
  assert.ok(facts.cpuModels.has('qemu64') && facts.cpuModes.has('host-model') && !facts.cpuModes.has('host-passthrough'));
  assert.equal(checkAgainstNode(baseVmi({}, { cpu: { model: 'Skylake-Client', cores: 2 } }), facts, 'qemu'), undefined);
  assert.throws(() => checkAgainstNode(baseVmi({}, { cpu: { model: 'host-passthrough' } }), facts, 'qemu'), /no host CPU to pass through/);
});

test('a machine type the emulator lacks is refused naming the ones it offers, read from the host capabilities', async () => {
  const calls: string[] = [];
  const facts = await readNodeFacts(daemon(calls), EMULATOR, 'qemu', 'pc-q35-99.0');
  assert.deepEqual(calls, ['domcaps pc-q35-99.0', 'capabilities']);
  assert.throws(
    () => checkAgainstNode(baseVmi({}, { machine: { type: 'pc-q35-99.0' } }), facts, 'qemu'),
    (err: unknown) => err instanceof NodeLacksError && err.field === 'spec.domain.machine.type' && /no machine type "pc-q35-99.0"; it offers pc-q35-.* \(25 in all\)$/.test(err.message),
  );
});

test('domain capabilities refused for another reason prove nothing: the error reaches the caller', async () => {
  await assert.rejects(readNodeFacts(daemon([]), EMULATOR, 'qemu', 'broken'), /probe failed/);
});
