// Generated VMIs through the one decode path and the converter: decoding throws nothing but
// VmiInvalidError, every error names a field, and every VMI it accepts converts to XML that is
// well-formed and valid against libvirt's own domain schema, or is refused by field.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { decodeVmi, decodeVmiJson, VmiInvalidError } from '@podvirt/api';
import fc from 'fast-check';
import { convertVmi } from '../src/convert/convert-vmi.js';
import { LauncherError } from '../src/errors.js';
import { corpus, fuzzParameters } from './fuzz/fuzz-settings.js';
import { assertSchemaValid } from './fuzz/libvirt-schema.js';
import { NAME_POOL, vmiArbitrary } from './fuzz/vmi-arbitrary.js';
import { xmlProblem } from './fuzz/xml-well-formed.js';
import { context } from './vmi-fixture.js';

const REFUSALS = new Set(['LAUNCHER_ERR_INVALID_VMI', 'LAUNCHER_ERR_NODE_LACKS']);
const CTX = context({
  containerDisks: new Map(NAME_POOL.map((name) => [name, { path: `/var/run/kubevirt/container-disks/${name}/disk.img`, format: 'raw' as const }])),
  // What the pod network set-up would have wired for an interface of that name.
  interfaces: new Map([...NAME_POOL, 'default'].map((name) => [name, { ifaceName: name, binding: 'masquerade' as const, tap: 'tap0', mac: '52:54:00:00:00:01', mtu: 1500, guestIP: '10.0.2.2', reportedIPs: [], podInterfaceName: 'eth0' }])),
});

function decodeOutcome(decode: () => unknown): 'accepted' | string {
  try {
    decode();
    return 'accepted';
  } catch (err) {
    assert.ok(err instanceof VmiInvalidError, `decode threw ${String(err)}`);
    assert.ok(err.fieldErrors.length > 0);
    for (const e of err.fieldErrors) assert.ok(typeof e.field === 'string' && e.message.length > 0, JSON.stringify(e));
    return err.fieldErrors.map((e) => e.field).join(',');
  }
}

/** One case; returns the XML when the VMI was accepted and converted. */
function check(vmi: unknown): string | undefined {
  const direct = decodeOutcome(() => decodeVmi(vmi));
  const fromText = decodeOutcome(() => decodeVmiJson(JSON.stringify(vmi)));
  assert.equal(fromText, direct, 'the JSON text path decides as the object path does');
  if (direct !== 'accepted') return undefined;
  try {
    const out = convertVmi(decodeVmi(vmi), CTX);
    const problem = xmlProblem(out.xml);
    assert.equal(problem, undefined, `${problem ?? ''}\n${out.xml}`);
    return out.xml;
  } catch (err) {
    if (err instanceof assert.AssertionError) throw err;
    // A refusal by field: what the pod's context lacks (VmiInvalidError) or the node's (NodeLacksError).
    const byField = err instanceof VmiInvalidError || (err instanceof LauncherError && REFUSALS.has(err.code));
    assert.ok(byField, `converter threw ${String(err)}`);
    return undefined;
  }
}

describe('fuzz: VMI decode and conversion', () => {
  test('generated VMIs', () => {
    const accepted: string[] = [];
    let refused = 0;
    fc.assert(
      fc.property(vmiArbitrary, (vmi) => {
        const xml = check(vmi);
        if (xml === undefined) refused += 1;
        else accepted.push(xml);
      }),
      fuzzParameters(400),
    );
    // A generator that never reaches the converter would prove nothing about it.
    assert.ok(accepted.length >= 20, `only ${accepted.length} of ${accepted.length + refused} generated VMIs were accepted`);
    assertSchemaValid(accepted.slice(0, 60));
  });

  for (const entry of corpus('vmi')) {
    test(`corpus: ${entry.file} (${entry.note})`, () => {
      const xml = check(entry.vmi);
      if (xml !== undefined) assertSchemaValid([xml]);
      const outcome = decodeOutcome(() => decodeVmi(entry.vmi));
      assert.equal(outcome, entry.refusedFields?.join(',') ?? 'accepted');
    });
  }
});
