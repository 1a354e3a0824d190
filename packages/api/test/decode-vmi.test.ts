import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  checkVmi,
  decodeVmi,
  decodeVmiJson,
  jsonDepthExcess,
  MAX_VMI_DEPTH,
  EventReason,
  formatFieldError,
  formatFieldErrors,
  isFinalPhase,
  isVmiPhase,
  VMI_API_VERSION,
  VMI_PHASES,
  VmiConditionType,
  VmiInvalidError,
  VmiPhase,
} from '../src/index.js';
import { ephemeralVmi, masqueradeVmi, setPath } from './fixtures.js';

describe('decodeVmi', () => {
  it('returns a defaulted copy of a valid, supported VMI', () => {
    const raw = ephemeralVmi();
    const before = structuredClone(raw);
    const vmi = decodeVmi(raw);
    assert.notEqual(vmi, raw);
    assert.deepEqual(raw, before, 'the input is left alone');
    assert.equal(vmi.spec.volumes?.[0]?.containerDisk?.image, 'registry:5000/kubevirt/cirros-container-disk-demo:devel');
    assert.equal(vmi.spec.domain.machine.type, 'q35');
    assert.deepEqual(vmi.spec.domain.cpu, { sockets: 1, cores: 1, threads: 1 });
    assert.equal(vmi.spec.domain.memory.guest, '128Mi');
    assert.equal(vmi.spec.domain.features.acpi.enabled, true);
    assert.deepEqual(decodeVmi(vmi), vmi, 'decoding a decoded VMI changes nothing');
  });

  it('a watchdog with a name alone is valid and gets the i6300esb model', () => {
    const vmi = decodeVmi(setPath(ephemeralVmi(), 'spec.domain.devices.watchdog', { name: 'w' }));
    assert.deepEqual(vmi.spec.domain.devices.watchdog, { name: 'w', i6300esb: { action: 'reset' } });
  });

  it('throws every problem at once, unsupported fields first', () => {
    const raw = setPath(ephemeralVmi(), 'spec.domain.devices.gpus', [{ name: 'g' }]);
    setPath(raw, 'spec.terminationGracePeriodSeconds', -5);
    assert.throws(
      () => decodeVmi(raw),
      (err: unknown) => {
        assert.ok(err instanceof VmiInvalidError);
        assert.equal(err.code, 'API_ERR_VMI_INVALID');
        assert.deepEqual(
          err.fieldErrors.map((e) => `${e.field} ${e.type}`),
          ['spec.domain.devices.gpus[0] NotSupported', 'spec.terminationGracePeriodSeconds Invalid'],
        );
        assert.match(err.message, /^invalid VirtualMachineInstance: spec\.domain\.devices\.gpus\[0\]: Unsupported value: .*; spec\.terminationGracePeriodSeconds: Invalid value: must be at least 0, got -5$/);
        return true;
      },
    );
  });

  it('throws on malformed input instead of returning it', () => {
    for (const raw of [null, [], { spec: null }]) assert.throws(() => decodeVmi(raw), VmiInvalidError);
  });

  it('accepts a pod network with a masquerade interface', () => {
    assert.deepEqual(checkVmi(masqueradeVmi()), []);
  });

  it('passes validation options through', () => {
    const raw = setPath(ephemeralVmi(), 'spec.domain.resources.requests.memory', '64Mi');
    assert.equal(checkVmi(raw).length, 1);
    assert.deepEqual(checkVmi(raw, { minGuestMemoryBytes: 1n }), []);
  });
});

describe('nesting depth', () => {
  const withX = (x: unknown): Record<string, unknown> => {
    const vmi = ephemeralVmi() as Record<string, Record<string, unknown>>;
    return { ...vmi, spec: { ...vmi['spec'], x } };
  };
  const nested = (depth: number, kind: 'array' | 'object'): string =>
    kind === 'array' ? `${'['.repeat(depth)}${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;

  it('jsonDepthExcess measures without recursion and names where the excess begins', () => {
    assert.equal(jsonDepthExcess({ a: [{ b: 1 }] }, 3), undefined);
    assert.deepEqual(jsonDepthExcess({ a: [{ b: {} }] }, 3), { path: 'a[0].b', limit: 3 });
    assert.equal(jsonDepthExcess('text', 0), undefined);
    assert.deepEqual(jsonDepthExcess(JSON.parse(nested(200_000, 'array')), 10), { path: '[0][0][0][0][0][0]…', limit: 10 });
  });

  for (const [depth, kind, field] of [[200_000, 'array', '[0][0][0][0][0][0]…'], [9_000, 'object', 'spec.x.a.a.a.a…'], [3_000, 'object', 'spec.x.a.a.a.a…']] as const) {
    it(`a ${depth}-deep ${kind} is refused by field, by object and by text (no stack overflow)`, () => {
      const text = kind === 'array' ? nested(depth, kind) : JSON.stringify(withX('<x>')).replace('"<x>"', nested(depth, kind));
      for (const decode of [() => decodeVmi(JSON.parse(text)), () => decodeVmiJson(text)]) {
        assert.throws(decode, (err: unknown) => {
          assert.ok(err instanceof VmiInvalidError, String(err));
          assert.deepEqual(err.fieldErrors, [{ field, type: 'Invalid', message: `nests more than ${MAX_VMI_DEPTH} levels deep; no VirtualMachineInstance field comes near that` }]);
          return true;
        });
      }
    });
  }

  it(`${MAX_VMI_DEPTH} levels are read as usual (an unsupported field, named)`, () => {
    const raw = withX(JSON.parse(nested(MAX_VMI_DEPTH - 2, 'object')));
    assert.deepEqual(checkVmi(raw).map((e) => `${e.field} ${e.type}`), ['spec.x NotSupported']);
  });
});

describe('formatFieldErrors', () => {
  const rows: [Parameters<typeof formatFieldError>[0], string][] = [
    [{ field: 'spec.domain.devices.disks[1].name', type: 'Required', message: 'a non-empty string is required' }, 'spec.domain.devices.disks[1].name: Required value: a non-empty string is required'],
    [{ field: 'spec.volumes[0].name', type: 'Duplicate', message: 'x' }, 'spec.volumes[0].name: Duplicate value: x'],
    [{ field: 'a', type: 'NotFound', message: 'x' }, 'a: Not found: x'],
    [{ field: 'a', type: 'TypeInvalid', message: 'x' }, 'a: Invalid value: x'],
    [{ field: 'a', type: 'TooMany', message: 'x' }, 'a: Too many: x'],
    [{ field: 'a', type: 'Forbidden', message: 'x' }, 'a: Forbidden: x'],
    [{ field: '', type: 'TypeInvalid', message: 'must be an object' }, 'Invalid value: must be an object'],
  ];
  for (const [error, text] of rows) {
    it(text, () => assert.equal(formatFieldError(error), text));
  }

  it('joins on one line', () => {
    assert.equal(formatFieldErrors([]), '');
    assert.equal(formatFieldErrors(rows.slice(0, 2).map(([error]) => error)), `${rows[0]?.[1]}; ${rows[1]?.[1]}`);
  });
});

describe('constants', () => {
  it('speak KubeVirt', () => {
    assert.equal(VMI_API_VERSION, 'kubevirt.io/v1');
    assert.deepEqual(VMI_PHASES, ['', 'Pending', 'Scheduling', 'Scheduled', 'Running', 'Succeeded', 'Failed', 'Unknown']);
    assert.equal(VmiConditionType.AgentConnected, 'AgentConnected');
    assert.equal(EventReason.IOerror, 'IOerror');
  });

  it('know which phases are final', () => {
    const final = VMI_PHASES.filter((phase) => isFinalPhase(phase));
    assert.deepEqual(final, [VmiPhase.Succeeded, VmiPhase.Failed]);
    assert.equal(isFinalPhase(undefined), false);
    assert.equal(isVmiPhase('Running'), true);
    assert.equal(isVmiPhase('running'), false);
    assert.equal(isVmiPhase(3), false);
  });
});
