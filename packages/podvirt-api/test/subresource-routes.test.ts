import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeOperationOptions } from '../src/subresources/operation-body.js';
import { routeSubresource } from '../src/subresources/subresource-routes.js';

const V1 = '/apis/subresources.kubevirt.io/v1';

test('KubeVirt\'s paths and verbs, as a table', () => {
  const rows: Array<[string, string, unknown]> = [
    ['GET', '/apis/subresources.kubevirt.io', { kind: 'discovery-group' }],
    ['GET', `${V1}/`, { kind: 'discovery-version' }],
    ['PUT', `${V1}/namespaces/a/virtualmachineinstances/vm1/pause`, { kind: 'vmi', namespace: 'a', name: 'vm1', subresource: 'pause' }],
    ['PUT', `${V1}/namespaces/a/virtualmachineinstances/vm1/softreboot`, { kind: 'vmi', namespace: 'a', name: 'vm1', subresource: 'softreboot' }],
    ['GET', `${V1}/namespaces/a/virtualmachineinstances/vm1/filesystemlist`, { kind: 'vmi', namespace: 'a', name: 'vm1', subresource: 'filesystemlist' }],
    ['GET', `${V1}/namespaces/a/virtualmachineinstances/vm1/vnc`, { kind: 'vmi', namespace: 'a', name: 'vm1', subresource: 'vnc' }],
    ['PUT', `${V1}/namespaces/a/virtualmachineinstances/vm1/console`, { kind: 'refused', status: 405, message: `PUT is not allowed on ${V1}/namespaces/a/virtualmachineinstances/vm1/console` }],
    ['PUT', `${V1}/namespaces/a/virtualmachineinstances/vm1/addvolume`, { kind: 'vmi', namespace: 'a', name: 'vm1', subresource: 'addvolume' }],
    ['PUT', `${V1}/namespaces/a/virtualmachines/vm1/addvolume`, { kind: 'vm', namespace: 'a', name: 'vm1', subresource: 'addvolume' }],
    ['PUT', `${V1}/namespaces/a/virtualmachines/vm1/removevolume`, { kind: 'vm', namespace: 'a', name: 'vm1', subresource: 'removevolume' }],
    ['GET', `${V1}/namespaces/a/virtualmachineinstances/vm1/removevolume`, { kind: 'refused', status: 405, message: `GET is not allowed on ${V1}/namespaces/a/virtualmachineinstances/vm1/removevolume` }],
    ['PUT', `${V1}/namespaces/a/virtualmachineinstances/vm1/portforward`, { kind: 'refused', status: 404, message: 'virtualmachineinstances/portforward is not a subresource podvirt serves' }],
    ['GET', `${V1}/namespaces/a/virtualmachineinstances/vm1`, { kind: 'refused', status: 404, message: `nothing at ${V1}/namespaces/a/virtualmachineinstances/vm1` }],
    ['POST', V1, { kind: 'refused', status: 405, message: `POST is not allowed on ${V1}` }],
    ['GET', '/apis/kubevirt.io/v1', { kind: 'not-ours' }],
    ['GET', '/apis/subresources.kubevirt.iox', { kind: 'not-ours' }],
  ];
  for (const [method, path, want] of rows) assert.deepEqual(routeSubresource(method, path), want, `${method} ${path}`);
});

test('options bodies: none, dry run, freeze\'s timeout; wrong ones name the field', () => {
  assert.deepEqual(decodeOperationOptions(undefined, 'pause'), { ok: true, options: { dryRun: false, unfreezeTimeoutSeconds: 0 } });
  assert.deepEqual(decodeOperationOptions({ dryRun: ['All'], kind: 'PauseOptions' }, 'pause'), { ok: true, options: { dryRun: true, unfreezeTimeoutSeconds: 0 } });
  assert.deepEqual(decodeOperationOptions({ unfreezeTimeout: '1h30m' }, 'freeze'), { ok: true, options: { dryRun: false, unfreezeTimeoutSeconds: 5400 } });
  const refused = (v: unknown, op: 'pause' | 'freeze') => {
    const r = decodeOperationOptions(v, op);
    return r.ok ? 'accepted' : r.status.message.split(':')[0];
  };
  assert.equal(refused([], 'pause'), 'body');
  assert.equal(refused({ dryRun: ['Some'] }, 'pause'), 'dryRun');
  assert.equal(refused({ unfreezeTimeout: 300 }, 'freeze'), 'unfreezeTimeout');
  assert.equal(refused({ unfreezeTimeout: '-5m' }, 'freeze'), 'unfreezeTimeout');
  assert.equal(refused({ unfreezeTimeout: '1000h' }, 'freeze'), 'unfreezeTimeout');
});
