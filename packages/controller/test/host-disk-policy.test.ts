// The HostDisk gate and the allowed directories, checked before any pod: a table of paths
// against a policy, each refusal named by field; decideVmi turns a refusal into no pod, the
// Synchronized=False condition and one Warning SyncFailed Event, as for every invalid VMI.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { VirtualMachineInstance } from '@podvirt/api';
import { decideVmi } from '../src/decide/decide-vmi.js';
import { allowedDirOf, checkHostDisks, HOST_DISK_OFF, type HostDiskPolicy } from '../src/decide/host-disk-policy.js';
import { vmiFixture } from './fixtures.js';

const now = new Date('2025-01-01T00:05:00Z');
const on: HostDiskPolicy = { enabled: true, allowedDirs: ['/var/data', '/srv/vm/disks'] };

function hostDiskVmi(path: string, type = 'DiskOrCreate'): VirtualMachineInstance {
  const vmi = vmiFixture();
  vmi.spec.domain.devices.disks = [{ name: 'containerdisk' }, { name: 'host-disk' }];
  vmi.spec.volumes = [...(vmi.spec.volumes ?? []), { name: 'host-disk', hostDisk: { path, type: type as 'Disk', capacity: '1Gi' } }];
  return vmi;
}

describe('checkHostDisks', () => {
  const cases: Array<{ name: string; path: string; policy: HostDiskPolicy; want?: RegExp }> = [
    { name: 'gate off: refused naming the gate, whatever the path', path: '/var/data/disk.img', policy: HOST_DISK_OFF, want: /^spec\.volumes\[1\]\.hostDisk Forbidden HostDisk feature gate is not enabled \(podvirt-controller --feature-gates=HostDisk\)/ },
    { name: 'gate off, even with the directory listed', path: '/var/data/disk.img', policy: { enabled: false, allowedDirs: ['/var/data'] }, want: /HostDisk feature gate is not enabled/ },
    { name: 'gate on, nothing listed', path: '/var/data/disk.img', policy: { enabled: true, allowedDirs: [] }, want: /^spec\.volumes\[1\]\.hostDisk\.path Forbidden "\/var\/data\/disk\.img" is not inside a directory allowed for host disks; none is allowed \(podvirt-controller has no --host-disk-allowed-dir\)/ },
    { name: 'a file in a listed directory', path: '/var/data/disk.img', policy: on },
    { name: 'a file in a subdirectory of a listed one', path: '/srv/vm/disks/team-a/vm1.img', policy: on },
    { name: 'outside every listed directory', path: '/etc/shadow', policy: on, want: /"\/etc\/shadow" is not inside a directory allowed for host disks; allowed: \/var\/data, \/srv\/vm\/disks/ },
    { name: 'a parent of a listed directory', path: '/srv/vm/x.img', policy: on, want: /is not inside a directory allowed/ },
    { name: 'a sibling sharing the prefix', path: '/var/data-evil/disk.img', policy: on, want: /is not inside a directory allowed/ },
    { name: 'a listed directory itself', path: '/var/data', policy: on, want: /^spec\.volumes\[1\]\.hostDisk\.path Forbidden "\/var\/data" is an allowed directory itself; name a disk image file inside it/ },
    { name: 'a listed directory with a trailing slash', path: '/var/data/', policy: on, want: /is not in normal form .* write it as "\/var\/data"/ },
    { name: 'a "." component', path: '/var/data/./disk.img', policy: on, want: /Invalid "\/var\/data\/\.\/disk\.img" is not in normal form .* write it as "\/var\/data\/disk\.img"/ },
    { name: 'a "//"', path: '/var//data/disk.img', policy: on, want: /is not in normal form/ },
    // Left to the VMI's own validation, which names them once (checkVmi: "absolute path without ..").
    { name: '".." (checkVmi names it)', path: '/var/data/../../etc/shadow', policy: on },
    { name: 'relative (checkVmi names it)', path: 'var/data/disk.img', policy: on },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const errors = checkHostDisks(hostDiskVmi(c.path), c.policy).map((e) => `${e.field} ${e.type} ${e.message}`);
      if (c.want === undefined) assert.deepEqual(errors, []);
      else {
        assert.equal(errors.length, 1, errors.join('\n'));
        assert.match(errors[0] ?? '', c.want);
      }
    });
  }

  test('a VMI without hostDisk is never refused, gate or not', () => {
    assert.deepEqual(checkHostDisks(vmiFixture(), HOST_DISK_OFF), []);
  });

  test('the mount is the deepest listed directory holding the path', () => {
    const nested = { enabled: true, allowedDirs: ['/srv', '/srv/vm/disks', '/srv/vm'] };
    assert.equal(allowedDirOf('/srv/vm/disks/a/b.img', nested), '/srv/vm/disks');
    assert.equal(allowedDirOf('/srv/vm/b.img', nested), '/srv/vm');
    assert.equal(allowedDirOf('/srv/vm', nested), '/srv');
    assert.equal(allowedDirOf('/srvx/b.img', nested), undefined);
  });
});

describe('decideVmi with a hostDisk', () => {
  test('gate off: no pod, Synchronized=False FailedCreate naming the gate, one Warning SyncFailed', () => {
    const d = decideVmi({ vmi: hostDiskVmi('/var/data/disk.img'), pods: [], now });
    assert.equal(d.createPod, false);
    assert.equal(d.status.phase, 'Pending');
    const sync = d.status.conditions?.find((c) => c.type === 'Synchronized');
    assert.equal(sync?.status, 'False');
    assert.equal(sync?.reason, 'FailedCreate');
    assert.match(sync?.message ?? '', /spec\.volumes\[1\]\.hostDisk: Forbidden: HostDisk feature gate is not enabled/);
    assert.deepEqual(d.events.map((e) => `${e.type} ${e.reason}`), ['Warning SyncFailed']);
    const again = decideVmi({ vmi: { ...hostDiskVmi('/var/data/disk.img'), status: d.status }, pods: [], now });
    assert.deepEqual(again.events, [], 'the Warning is not repeated');
    assert.equal(again.statusChanged, false);
  });

  test('gate on: an allowed path gets its pod, one outside does not', () => {
    assert.equal(decideVmi({ vmi: hostDiskVmi('/var/data/disk.img'), pods: [], now, hostDisk: on }).createPod, true);
    const outside = decideVmi({ vmi: hostDiskVmi('/var/lib/kubelet/pki/x.img', 'Disk'), pods: [], now, hostDisk: on });
    assert.equal(outside.createPod, false);
    assert.match(outside.status.conditions?.find((c) => c.type === 'Synchronized')?.message ?? '', /hostDisk\.path: Forbidden: "\/var\/lib\/kubelet\/pki\/x\.img" is not inside a directory allowed/);
  });
});
