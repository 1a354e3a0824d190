// Stats name devices as libvirt does (vda, tap0); metrics name them as the VMI does. The live
// domain XML maps one to the other through the converter's `ua-` aliases.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { deviceAliases, withDeviceAliases } from '../src/domain/device-aliases.js';

const XML = `<domain type='kvm'><devices>
  <disk type='file' device='disk'><driver name='qemu' type='qcow2'/><source file='/var/run/kubevirt/disk.qcow2'/>
    <target dev='vda' bus='virtio'/><alias name='ua-rootdisk'/></disk>
  <disk type='file' device='cdrom'><target dev="sda" bus="sata"/><alias name="ua-cloudinit"/></disk>
  <disk type='file' device='disk'><target dev='vdb' bus='virtio'/><alias name='virtio-disk1'/></disk>
  <interface type='ethernet'><mac address='02:00:00:00:00:01'/><target dev='tap0' managed='no'/><model type='virtio'/>
    <alias name='ua-default'/></interface>
  <serial type='unix'><target port='0'/><alias name='serial0'/></serial>
</devices></domain>`;

test('target devices map to the VMI names of their ua- aliases', () => {
  assert.deepEqual(deviceAliases(XML), { vda: 'rootdisk', sda: 'cloudinit', tap0: 'default' });
  assert.deepEqual(deviceAliases('<domain/>'), {});
});

test('stats labels gain an alias next to each net and block name that has one', () => {
  const labels = { 'net.0.name': 'tap0', 'block.0.name': 'vda', 'block.0.path': '/x', 'block.1.name': 'vdb' };
  assert.deepEqual(withDeviceAliases(labels, deviceAliases(XML)), {
    ...labels, 'net.0.alias': 'default', 'block.0.alias': 'rootdisk',
  });
});
