// libvirt state+reason → KubeVirt's vocabulary, and libvirt's guest-info parameters → the proto.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseAgentInfo, parseFilesystems, parseInterfaces, parseOsInfo, parseUsers } from '../src/domain/guest-info.js';
import { isDown, toKubevirtState } from '../src/domain/state-map.js';

test('state and reason mapping', () => {
  const cases: [string, string, string][] = [
    ['RUNNING', 'BOOTED', 'Running/Booted'], ['RUNNING', 'UNPAUSED', 'Running/Unpaused'], ['RUNNING', 'MIGRATED', 'Running/Migrated'],
    ['PAUSED', 'USER', 'Paused/User'], ['PAUSED', 'IOERROR', 'Paused/IOError'], ['PAUSED', 'STARTING_UP', 'Paused/StartingUp'],
    ['SHUTDOWN', 'USER', 'ShuttingDown/User'], ['SHUTOFF', 'SHUTDOWN', 'Shutoff/Shutdown'], ['SHUTOFF', 'DESTROYED', 'Shutoff/Destroyed'],
    ['SHUTOFF', 'CRASHED', 'Shutoff/Crashed'], ['SHUTOFF', 'FAILED', 'Shutoff/Failed'], ['SHUTOFF', 'SAVED', 'Shutoff/Saved'],
    ['SHUTOFF', 'DAEMON', 'Shutoff/Unknown'], ['CRASHED', 'PANICKED', 'Crashed/Panicked'], ['PMSUSPENDED', 'UNKNOWN', 'PMSuspended/Unknown'],
    ['BLOCKED', 'UNKNOWN', 'Blocked/Unknown'], ['NOSTATE', 'UNKNOWN', 'NoState/Unknown'], ['WEIRD', 'X', 'NoState/Unknown'],
  ];
  for (const [state, reason, want] of cases) {
    const k = toKubevirtState({ state, reason });
    assert.equal(`${k.state}/${k.reason}`, want, `${state}/${reason}`);
  }
  assert.deepEqual(toKubevirtState(undefined), { state: 'NoState', reason: 'NonExistent' });
  assert.equal(isDown({ state: 'SHUTOFF', reason: 'SHUTDOWN' }), true);
  assert.equal(isDown({ state: 'CRASHED', reason: 'PANICKED' }), true);
  assert.equal(isDown({ state: 'PAUSED', reason: 'USER' }), false);
});

test('guest info parameters', () => {
  const p = {
    'os.id': 'debian', 'os.name': 'Debian', 'os.pretty-name': 'Debian 12', 'os.version-id': '12', 'os.kernel-release': '6.1.0', 'os.machine': 'x86_64',
    'user.count': 1, 'user.0.name': 'root', 'user.0.login-time': 1700000000000n,
    'fs.count': 2, 'fs.0.mountpoint': '/mnt', 'fs.0.name': 'vda', 'fs.0.fstype': 'ext4', 'fs.0.total-bytes': 100n, 'fs.0.used-bytes': 7n, 'fs.0.disk.count': 1, 'fs.0.disk.0.alias': 'vda',
    'fs.1.mountpoint': '/', 'fs.1.fstype': 'rootfs',
    'if.count': 1, 'if.0.name': 'eth0', 'if.0.hwaddr': '52:54:00:00:00:01', 'if.0.addr.count': 2, 'if.0.addr.0.addr': '10.0.2.2', 'if.0.addr.1.addr': 'fe80::1',
  };
  assert.equal(parseOsInfo(p).prettyName, 'Debian 12');
  assert.deepEqual(parseUsers(p), [{ userName: 'root', domain: '', loginTime: 1700000000 }]);
  assert.deepEqual(parseFilesystems(p).map((f) => [f.mountPoint, f.usedBytes, f.totalBytes, f.disks]), [['/mnt', 7, 100, ['vda']], ['/', 0, 0, []]]);
  assert.deepEqual(parseInterfaces(p), [{ name: 'eth0', mac: '52:54:00:00:00:01', ipAddresses: ['10.0.2.2', 'fe80::1'] }]);
  assert.deepEqual(parseAgentInfo('{"return":{"version":"7.2.22","supported_commands":[{"name":"guest-ping","enabled":true}]}}'),
    { version: '7.2.22', commands: [{ name: 'guest-ping', enabled: true }] });
});
