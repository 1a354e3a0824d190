import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { VirtualMachineInstance } from '@podvirt/api';
import { interfaceStatus } from '../src/reconcile/interface-status.js';

const vmi = (binding: 'masquerade' | 'bridge'): VirtualMachineInstance =>
  ({
    metadata: { name: 'v', namespace: 'default', uid: 'u' },
    spec: { networks: [{ name: 'default', pod: {} }], domain: { devices: { interfaces: [{ name: 'default', [binding]: {} }] } } },
  }) as unknown as VirtualMachineInstance;
const nic = { name: 'default', mac: '52:54:00:aa:bb:cc', ipAddresses: ['10.200.1.5'], podInterfaceName: 'eth0', queueCount: 1 };

describe('status.interfaces', () => {
  test('from the domain alone: the pod IP, source domain', () => {
    assert.deepEqual(interfaceStatus(vmi('masquerade'), [nic], []), [
      { name: 'default', mac: '52:54:00:aa:bb:cc', ipAddress: '10.200.1.5', ipAddresses: ['10.200.1.5'], infoSource: 'domain', queueCount: 1, podInterfaceName: 'eth0' },
    ]);
  });

  test('masquerade: the agent adds the guest name and IPv6 but the pod IPv4 stays; link-local is dropped', () => {
    const [s] = interfaceStatus(vmi('masquerade'), [nic], [{ name: 'eth0', mac: '52:54:00:AA:BB:CC', ipAddresses: ['10.0.2.2', 'fe80::1', 'fd10:0:2::2'] }]);
    assert.equal(s?.interfaceName, 'eth0');
    assert.equal(s?.infoSource, 'domain, guest-agent');
    assert.deepEqual(s?.ipAddresses, ['10.200.1.5', 'fd10:0:2::2']);
    assert.equal(s?.ipAddress, '10.200.1.5');
  });

  test('guest-only interfaces follow, lo never; the pod network comes first', () => {
    const out = interfaceStatus(vmi('bridge'), [nic], [
      { name: 'lo', mac: '00:00:00:00:00:00', ipAddresses: ['127.0.0.1'] },
      { name: 'docker0', mac: '02:42:00:00:00:01', ipAddresses: ['172.17.0.1'] },
    ]);
    assert.deepEqual(out.map((s) => [s.name, s.interfaceName, s.infoSource]), [['default', undefined, 'domain'], [undefined, 'docker0', 'guest-agent']]);
  });

  test('at most ten guest-only interfaces', () => {
    const many = Array.from({ length: 15 }, (_, i) => ({ name: `x${i}`, mac: `02:00:00:00:00:${i.toString(16).padStart(2, '0')}`, ipAddresses: [] }));
    assert.equal(interfaceStatus(vmi('bridge'), [], many).length, 10);
  });
});
