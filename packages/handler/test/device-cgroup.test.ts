// A hotplugged block volume's device in the launcher container's device cgroup: found through
// the launcher's process (its --uid and its socket), `b MAJOR:MINOR rwm` written to the v1
// hierarchy's devices.allow / devices.deny of its cgroup; nothing written when the launcher
// shares the handler's own cgroup; cgroup v2 and a launcher that is not running are refused by
// name. A scratch /proc and cgroup root.
import assert from 'node:assert/strict';
import { link, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { DeviceCgroups, devicesCgroupOf } from '../src/hotplug/device-cgroup.js';

const VMI_UID = 'vmi-uid-1';
const DEVICE = { major: 7, minor: 12 };

async function scratch(t: { after: (fn: () => Promise<void>) => void }, cgroups: { launcher: string; self: string }) {
  const dir = await mkdtemp(join(tmpdir(), 'device-cgroup-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const proc = join(dir, 'proc');
  const socket = join(dir, 'pods', 'p1', 'launcher-sock');
  await mkdir(join(dir, 'pods', 'p1'), { recursive: true });
  await writeFile(socket, '');
  // pid 300: the launcher, its socket the same file in its own root.
  await mkdir(join(proc, '300', 'root', 'var', 'run', 'kubevirt', 'sockets'), { recursive: true });
  await link(socket, join(proc, '300', 'root', 'var', 'run', 'kubevirt', 'sockets', 'launcher-sock'));
  await writeFile(join(proc, '300', 'cmdline'), ['node', '/app/podvirt-launcher.js', '--uid', VMI_UID].join('\0'));
  await writeFile(join(proc, '300', 'cgroup'), cgroups.launcher);
  await mkdir(join(proc, 'self'));
  await writeFile(join(proc, 'self', 'cgroup'), cgroups.self);
  const cgroupRoot = join(dir, 'cgroup');
  const devices = new DeviceCgroups({ procRoot: proc, cgroupRoot });
  return { socket, cgroupRoot, devices };
}

const v1 = (devices: string) => `12:memory:/x\n5:devices:${devices}\n0::/init.scope\n`;

test('the devices line of /proc/<pid>/cgroup; v2 when there is only the unified one', () => {
  assert.equal(devicesCgroupOf(v1('/kubepods/pod1/c1')), '/kubepods/pod1/c1');
  assert.equal(devicesCgroupOf('3:cpu,devices:/a\n'), '/a');
  assert.equal(devicesCgroupOf('0::/kubepods.slice/x\n'), 'v2');
  assert.equal(devicesCgroupOf(''), undefined);
});

test('allow and deny write the block rule to the launcher\'s own device cgroup', async (t) => {
  const { socket, cgroupRoot, devices } = await scratch(t, { launcher: v1('/kubepods/pod1/c1'), self: v1('/kubepods/handler') });
  const dir = join(cgroupRoot, 'devices', 'kubepods', 'pod1', 'c1');
  await mkdir(dir, { recursive: true });
  await devices.allow(VMI_UID, socket, DEVICE);
  assert.equal(await readFile(join(dir, 'devices.allow'), 'utf8'), 'b 7:12 rwm');
  await devices.deny(VMI_UID, socket, DEVICE);
  assert.equal(await readFile(join(dir, 'devices.deny'), 'utf8'), 'b 7:12 rwm');
});

test('a launcher in the handler\'s own device cgroup: nothing to write', async (t) => {
  const { socket, cgroupRoot, devices } = await scratch(t, { launcher: v1('/'), self: v1('/') });
  await devices.allow(VMI_UID, socket, DEVICE);
  await assert.rejects(readFile(join(cgroupRoot, 'devices', 'devices.allow')), { code: 'ENOENT' });
});

test('cgroup v2, no launcher process, or a cgroup that cannot be written: refused by name', async (t) => {
  const onV2 = await scratch(t, { launcher: '0::/kubepods.slice/c1\n', self: '0::/handler\n' });
  await assert.rejects(onV2.devices.allow(VMI_UID, onV2.socket, DEVICE), { code: 'HANDLER_ERR_HOTPLUG', message: /no cgroup v1 devices controller; podvirt hotplugs block volumes on cgroup v1 only/ });
  await assert.rejects(onV2.devices.allow('other-vmi', onV2.socket, DEVICE), { code: 'HANDLER_ERR_HOTPLUG', message: /no launcher process of VMI other-vmi/ });
  const missing = await scratch(t, { launcher: v1('/kubepods/gone'), self: v1('/') });
  await assert.rejects(missing.devices.allow(VMI_UID, missing.socket, DEVICE), { code: 'HANDLER_ERR_HOTPLUG', message: /devices\.allow of the launcher's device cgroup \/kubepods\/gone/ });
});
