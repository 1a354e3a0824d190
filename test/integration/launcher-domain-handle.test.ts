// The launcher's libvirt connection keeps each domain's handle instead of looking it up on every
// call; a handle that went stale (the domain undefined, or defined again under a new UUID
// behind the launcher's back) must be looked up again, never fail a call or hit another domain.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LauncherError, LibvirtDomainConnection } from '@podvirt/launcher';
import { LibvirtClient } from '@podvirt/libvirt';
import { guestXml, libvirtFixture } from './libvirt-fixture.js';

const uuidOf = (xml: string): string | undefined => /<uuid>([^<]+)<\/uuid>/.exec(xml)?.[1];

void test('a kept domain handle that went stale is looked up again', async (t) => {
  const { dir, daemon, client: raw } = await libvirtFixture(t);
  const conn = new LibvirtDomainConnection(await LibvirtClient.connect({ socketPath: daemon.socketPath, timeoutMs: 30_000 }));
  t.after(() => conn.close());
  const { xml } = await guestXml(dir, 'lv-handle');

  await conn.define(xml);
  assert.deepEqual(await conn.getState('lv-handle'), { state: 'SHUTOFF', reason: 'UNKNOWN' });
  const first = uuidOf(await conn.getXml('lv-handle'));

  // Undefined and defined again by someone else: the same name, a new UUID.
  await raw.domainUndefine(await raw.domainLookupByName('lv-handle'));
  await raw.domainDefineXml(xml);
  const second = uuidOf(await conn.getXml('lv-handle'));
  assert.ok(first !== undefined && second !== undefined && first !== second, `UUIDs ${first} then ${second}`);
  assert.equal((await conn.getState('lv-handle'))?.state, 'SHUTOFF');

  // Gone: the state says so and an operation names the missing domain.
  await raw.domainUndefine(await raw.domainLookupByName('lv-handle'));
  assert.equal(await conn.getState('lv-handle'), undefined);
  await assert.rejects(conn.control('lv-handle', 'create'), (err: unknown) => err instanceof LauncherError && err.code === 'LAUNCHER_ERR_NO_DOMAIN');

  // Its own define and undefine keep the handle in step.
  await conn.define(xml);
  assert.equal((await conn.getState('lv-handle'))?.state, 'SHUTOFF');
  await conn.control('lv-handle', 'undefine');
  assert.equal(await conn.getState('lv-handle'), undefined);
});
