// libvirt's own RelaxNG schema (Debian's libvirt0) over rendered domain XML, in one xmllint run.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const DOMAIN_RNG = '/usr/share/libvirt/schemas/domain.rng';

export function assertSchemaValid(xmls: readonly string[]): void {
  assert.ok(existsSync(DOMAIN_RNG), `${DOMAIN_RNG} (Debian's libvirt0) is missing`);
  const dir = mkdtempSync(join(tmpdir(), 'podvirt-xml-'));
  try {
    const files = xmls.map((xml, i) => {
      const file = join(dir, `domain-${i}.xml`);
      writeFileSync(file, xml);
      return file;
    });
    const run = spawnSync('xmllint', ['--noout', '--relaxng', DOMAIN_RNG, ...files], { encoding: 'utf8' });
    assert.equal(run.status, 0, run.stderr);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
