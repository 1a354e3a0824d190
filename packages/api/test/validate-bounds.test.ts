// Text, sizes and numbers: what would reach libvirt's XML, QEMU's command line or the wire
// unrepresentable, changed or too large is refused by field, with the value as written.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { applyDefaults, checkVmi, decodeVmi, decodeVmiJson, unsafeIntegerLiterals, validateVmi, VmiInvalidError } from '../src/index.js';
import { ephemeralVmi, fullVmi, setPath, type Json } from './fixtures.js';

const D = 'spec.domain';
const CI = 'spec.volumes.1.cloudInitNoCloud';

function errors(vmi: Json): string[] {
  return validateVmi(vmi).map((error) => `${error.field} ${error.type}`);
}

function withChange(base: () => Json, path: string, value: unknown): Json {
  return setPath(base(), path, value);
}

type Row = [title: string, path: string, value: unknown, expected: string[]];

const TEXT_ROWS: Row[] = [
  ['carriage return in firmware.serial', `${D}.firmware.serial`, 'abc\rdef', [`${D}.firmware.serial Invalid`]],
  ['line feed in kernelArgs', `${D}.firmware.kernelBoot.kernelArgs`, 'console=ttyS0\ninit=/bin/sh', [`${D}.firmware.kernelBoot.kernelArgs Invalid`]],
  ['control character in cpu.model', `${D}.cpu.model`, 'qemu64\u0001', [`${D}.cpu.model Invalid`]],
  ['tab in watchdog.name', `${D}.devices.watchdog.name`, 'w\td', [`${D}.devices.watchdog.name Invalid`]],
  ['NUL in a containerDisk image', 'spec.volumes.0.containerDisk.image', 'img\u0000:1', ['spec.volumes[0].containerDisk.image Invalid']],
  ['C1 control in the serial', `${D}.firmware.serial`, 'a\u0085b', [`${D}.firmware.serial Invalid`]],
  ['lone surrogate in cpu.model', `${D}.cpu.model`, 'x\ud800y', [`${D}.cpu.model Invalid`]],
  ['non-ASCII letters are text', `${D}.firmware.serial`, 'série-ü-日本-😀', []],
  ['CRLF in userData is a document', `${CI}.userData`, '#cloud-config\r\npassword: x\r\n', []],
  ['NUL in userData', `${CI}.userData`, '#cloud-config\u0000', ['spec.volumes[1].cloudInitNoCloud.userData Invalid']],
  ['control character in a nodeSelector value', 'spec.nodeSelector', { 'kubernetes.io/hostname': 'a\rb' }, ['spec.nodeSelector[kubernetes.io/hostname] Invalid']],
  ['an overlong image reference', 'spec.volumes.0.containerDisk.image', `r/${'a'.repeat(4100)}`, ['spec.volumes[0].containerDisk.image TooLong']],
];

const SIZE_ROWS: Row[] = [
  ['kernelArgs at 2047 bytes', `${D}.firmware.kernelBoot.kernelArgs`, 'a'.repeat(2047), []],
  ['kernelArgs at 2048 bytes', `${D}.firmware.kernelBoot.kernelArgs`, 'a'.repeat(2048), [`${D}.firmware.kernelBoot.kernelArgs TooLong`]],
  ['kernelArgs of 200 KB', `${D}.firmware.kernelBoot.kernelArgs`, 'a '.repeat(100_000), [`${D}.firmware.kernelBoot.kernelArgs TooLong`]],
  ['userData at 2048 bytes', `${CI}.userData`, 'x'.repeat(2048), []],
  ['userData at 2049 bytes', `${CI}.userData`, 'x'.repeat(2049), ['spec.volumes[1].cloudInitNoCloud.userData TooLong']],
  ['userData of 5 MB', `${CI}.userData`, 'x'.repeat(5_000_000), ['spec.volumes[1].cloudInitNoCloud.userData TooLong']],
  ['networkDataBase64 decoding to 2049 bytes', `${CI}.networkDataBase64`, Buffer.alloc(2049, 1).toString('base64'), ['spec.volumes[1].cloudInitNoCloud.networkDataBase64 TooLong']],
  ['networkDataBase64 decoding to 2048 bytes', `${CI}.networkDataBase64`, Buffer.alloc(2048, 1).toString('base64'), []],
  ['cores at the vCPU limit', `${D}.cpu`, { cores: 4096 }, []],
  ['cores over the vCPU limit', `${D}.cpu`, { cores: 4097 }, [`${D}.cpu.cores Invalid`]],
  ['threads at 2^32-1', `${D}.cpu`, { threads: 4_294_967_295 }, [`${D}.cpu.threads Invalid`]],
  ['a topology whose product is too large', `${D}.cpu`, { sockets: 64, cores: 64, threads: 2 }, [`${D}.cpu Invalid`]],
  ['a topology whose product overflows 32 bits', `${D}.cpu`, { sockets: 4096, cores: 4096, threads: 4096 }, [`${D}.cpu Invalid`]],
  ['grace period at the limit', 'spec.terminationGracePeriodSeconds', 2_000_000, []],
  ['grace period past the longest timer', 'spec.terminationGracePeriodSeconds', 2_147_484, ['spec.terminationGracePeriodSeconds Invalid']],
];

describe('validateVmi: text', () => {
  for (const [title, path, value, expected] of TEXT_ROWS) {
    it(title, () => assert.deepEqual(errors(withChange(fullVmi, path, value)), expected));
  }

  it('says which character and where', () => {
    const [error] = validateVmi(withChange(fullVmi, `${D}.firmware.serial`, 'abc\rdef'));
    assert.equal(error?.message, 'contains the control character U+000D at character 3; this field takes one line of printable text');
  });
});

describe('validateVmi: sizes and counts', () => {
  for (const [title, path, value, expected] of SIZE_ROWS) {
    it(title, () => assert.deepEqual(errors(withChange(fullVmi, path, value)), expected));
  }

  it('names the product of the topology', () => {
    const found = validateVmi(withChange(fullVmi, `${D}.cpu`, { sockets: 64, cores: 64, threads: 2 })).find((e) => e.field === `${D}.cpu`);
    assert.equal(found?.message, 'sockets × cores × threads is 64 × 64 × 2 = 8192 vCPUs; at most 4096 are allowed');
  });
});

describe('validateVmi: numbers as written', () => {
  const textWith = (path: string, literal: string): string => {
    const vmi = withChange(ephemeralVmi, path, 424242);
    return JSON.stringify(vmi).replace('424242', literal);
  };
  const messageOf = (text: string, field: string): string | undefined => {
    try {
      decodeVmiJson(text);
    } catch (err) {
      assert.ok(err instanceof VmiInvalidError);
      return err.fieldErrors.find((e) => e.field === field)?.message;
    }
    assert.fail('expected VmiInvalidError');
  };

  it('terminationGracePeriodSeconds of 2^63-1 is shown exactly, with the bound it breaks', () => {
    const message = messageOf(textWith('spec.terminationGracePeriodSeconds', '9223372036854775807'), 'spec.terminationGracePeriodSeconds');
    assert.equal(message, 'must be at most 2000000, got 9223372036854775807');
  });

  it('cores of 2^53+1 is shown exactly', () => {
    const message = messageOf(textWith('spec.domain.cpu.cores', '9007199254740993'), `${D}.cpu.cores`);
    assert.equal(message, 'must be at most 4096, got 9007199254740993');
  });

  it('a negative value names the lower bound', () => {
    const message = messageOf(textWith('spec.terminationGracePeriodSeconds', '-9223372036854775808'), 'spec.terminationGracePeriodSeconds');
    assert.equal(message, 'must be at least 0, got -9223372036854775808');
  });

  it('without the text, a rounded value is marked as such rather than shown as exact', () => {
    const vmi = withChange(ephemeralVmi, 'spec.terminationGracePeriodSeconds', 2 ** 63);
    const message = validateVmi(vmi).find((e) => e.field === 'spec.terminationGracePeriodSeconds')?.message;
    assert.equal(message, 'must be at most 2000000, got about 9.223372036854776e+18 (beyond 2^53, where JSON numbers lose digits)');
  });

  it('reads literals outside strings only', () => {
    const found = unsafeIntegerLiterals('{"a":"9007199254740993","b":[9007199254740993],"c":"\\"12345678901234567890"}');
    assert.deepEqual([...found.values()], ['9007199254740993']);
  });

  it('refuses text that is not JSON as a VmiInvalidError', () => {
    assert.throws(() => decodeVmiJson('{"spec":'), (err: unknown) => err instanceof VmiInvalidError && /not valid JSON/.test(err.message));
  });
});

describe('KubeVirt-acted annotations', () => {
  for (const key of ['hooks.kubevirt.io/hookSidecars', 'smbios.vm.kubevirt.io/baseBoardManufacturer', 'kubevirt.io/ignitiondata']) {
    it(`refuses ${key} by name`, () => {
      const vmi = withChange(fullVmi, 'metadata.annotations', { [key]: 'x', note: 'kept' });
      assert.deepEqual(errors(vmi), [`metadata.annotations[${key}] NotSupported`]);
    });
  }
});

describe('a volume without a disk', () => {
  const vmi = (): Json => withChange(ephemeralVmi, 'spec.volumes.1', { name: 'scratch', emptyDisk: { capacity: '1Gi' } });

  it('is accepted and given a disk of its own name, as KubeVirt defaults it', () => {
    assert.deepEqual(checkVmi(vmi()), []);
    const defaulted = applyDefaults(decodeVmi(vmi()));
    assert.deepEqual(defaulted.spec.domain.devices.disks?.map((d) => [d.name, d.disk?.bus]), [
      ['containerdisk', 'virtio'],
      ['scratch', 'virtio'],
    ]);
  });
});
