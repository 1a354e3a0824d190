// KubeVirt's own example manifests (its repository's examples/ directory; VirtualMachine and
// ReplicaSet examples by their VMI template), images swapped for podvirt's test guest. Each is
// accepted and converted to a domain libvirt's schema accepts, as KubeVirt would run it after
// its defaulting — or refused naming the field podvirt does not implement.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { checkVmi, decodeVmi } from '@podvirt/api';
import { convertVmi } from '../src/convert/convert-vmi.js';
import { assertSchemaValid } from './fuzz/libvirt-schema.js';
import { context } from './vmi-fixture.js';

const GUEST = 'podvirt/test-guest:latest';
type Json = Record<string, unknown>;

function vmi(name: string, spec: Json, metadata: Json = {}): Json {
  return { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', metadata: { name, namespace: 'default', uid: `uid-${name}`, ...metadata }, spec };
}

const virtio = (name: string): Json => ({ name, disk: { bus: 'virtio' } });
const containerDisk = (name = 'containerdisk'): Json => ({ name, containerDisk: { image: GUEST } });
const cloudInit: Json = { name: 'cloudinitdisk', cloudInitNoCloud: { userData: "echo 'printed from cloud-init userdata'\n" } };
const emptyDisk: Json = { name: 'emptydisk', emptyDisk: { capacity: '2Gi' } };
const small = (devices: Json, volumes: Json[], extra: Json = {}): Json => ({
  domain: { devices, memory: { guest: '128Mi' }, resources: {}, ...extra },
  terminationGracePeriodSeconds: 0,
  volumes,
});
const podNetwork = (binding: string): Json => ({ interfaces: [{ name: 'default', [binding]: {} }] });
const networks = [{ name: 'default', pod: {} }];

/** [example file, the VMI, undefined when accepted, else the first field named]. */
const EXAMPLES: [string, Json, string | undefined][] = [
  ['vmi-ephemeral.yaml', vmi('vmi-ephemeral', small({ disks: [virtio('containerdisk')] }, [containerDisk()])), undefined],
  ['vmi-nocloud.yaml', vmi('vmi-nocloud', small({ disks: ['containerdisk', 'cloudinitdisk', 'emptydisk'].map(virtio) }, [containerDisk(), cloudInit, emptyDisk])), undefined],
  // No disk at all: KubeVirt's defaulting gives the volume one, and so does podvirt.
  ['vmi-sata.yaml', vmi('vmi-sata', small({}, [containerDisk()])), undefined],
  ['vm-cirros-sata.yaml (template)', vmi('vm-cirros-sata', small({}, [containerDisk(), cloudInit])), undefined],
  ['vmi-replicaset-cirros.yaml (template)', vmi('vmi-replicaset-cirros', small({ disks: [virtio('containerdisk')] }, [containerDisk()])), undefined],
  ['vmi-host-disk.yaml', vmi('vmi-host-disk', small({ disks: [virtio('h')] }, [{ name: 'h', hostDisk: { capacity: '1Gi', path: '/var/lib/podvirt/host-disks/disk.img', type: 'DiskOrCreate' } }])), undefined],
  [
    'vmi-kernel-boot.yaml',
    vmi('vmi-kernel-boot', {
      domain: {
        devices: {},
        firmware: { kernelBoot: { container: { image: GUEST, initrdPath: '/boot/initrd.img', kernelPath: '/boot/vmlinuz' }, kernelArgs: 'console=ttyS0' } },
        memory: { guest: '1Gi' },
        resources: {},
      },
      terminationGracePeriodSeconds: 0,
    }),
    undefined,
  ],
  ['vmi-with-sidecar-hook.yaml', vmi('vmi-with-sidecar-hook', small({ disks: [virtio('containerdisk')] }, [containerDisk()]), {
    annotations: { 'hooks.kubevirt.io/hookSidecars': '[{"args": ["--version", "v1alpha2"], "image": "sidecar-shim"}]', 'smbios.vm.kubevirt.io/baseBoardManufacturer': 'Radical Edward' },
  }), 'metadata.annotations[hooks.kubevirt.io/hookSidecars]'],
  ['vmi-with-sidecar-hook-configmap.yaml', vmi('vmi-with-sidecar-hook-configmap', small({ disks: [virtio('containerdisk')] }, [containerDisk()]), {
    annotations: { 'hooks.kubevirt.io/hookSidecars': '[{"args": ["--version", "v1alpha2"], "configMap": {"name": "my-config-map", "key": "my_script.sh", "hookPath": "/usr/bin/onDefineDomain"}}]' },
  }), 'metadata.annotations[hooks.kubevirt.io/hookSidecars]'],
  ['vmi-masquerade.yaml', vmi('vmi-masquerade', { ...small({ disks: [virtio('containerdisk')], ...podNetwork('masquerade') }, [containerDisk()]), networks }), undefined],
  ['vmi-fedora.yaml', vmi('vmi-fedora', { ...small({ disks: [virtio('containerdisk'), virtio('cloudinitdisk')], ...podNetwork('masquerade'), rng: {} }, [containerDisk(), cloudInit], { memory: { guest: '1024M' } }), networks }), undefined],
  ['vmi-pvc.yaml', vmi('vmi-pvc', small({ disks: [virtio('pvcdisk')] }, [{ name: 'pvcdisk', persistentVolumeClaim: { claimName: 'disk-alpine' } }])), undefined],
  ['vmi-gpu.yaml', vmi('vmi-gpu', small({ disks: [virtio('containerdisk')], gpus: [{ deviceName: 'nvidia.com/GP102GL_Tesla_P40', name: 'gpu1' }] }, [containerDisk()])), 'spec.domain.devices.gpus[0]'],
  ['vmi-usb.yaml', vmi('vmi-usb', small({ disks: [virtio('containerdisk')], hostDevices: [{ deviceName: 'kubevirt.io/storage', name: 'usb-storage' }] }, [containerDisk()])), 'spec.domain.devices.hostDevices[0]'],
  ['vmi-alpine-efi.yaml', vmi('vmi-alpine-efi', small({ disks: [virtio('containerdisk')] }, [containerDisk()], { firmware: { bootloader: { efi: { secureBoot: false } } } })), 'spec.domain.firmware.bootloader'],
  ['vmi-secureboot.yaml', vmi('vmi-secureboot', small({ disks: [virtio('containerdisk')] }, [containerDisk()], { features: { smm: { enabled: true } }, firmware: { bootloader: { efi: { secureBoot: true } } } })), 'spec.domain.firmware.bootloader'],
  ['vmi-fedora-isolated.yaml', vmi('vmi-fedora-isolated', small({ disks: [virtio('containerdisk')] }, [containerDisk()], { cpu: { dedicatedCpuPlacement: true, isolateEmulatorThread: true } })), 'spec.domain.cpu.dedicatedCpuPlacement'],
];

const CTX = context({
  containerDisks: new Map(['containerdisk'].map((name) => [name, { path: `/var/run/kubevirt/container-disks/${name}/disk.img`, format: 'raw' as const }])),
  // The host disk and vmi-pvc.yaml's filesystem claim as the inspect step opened them in the pod's mounts.
  persistentDisks: new Map(['h', 'pvcdisk'].map((name, i) => [name, { path: `/proc/42/fd/${7 + i}`, block: false, io: { directIo: true, preallocated: false } }])),
  // What the pod network set-up would have wired for the `default` interface.
  interfaces: new Map([['default', { ifaceName: 'default', binding: 'masquerade' as const, tap: 'tap0', mac: '52:54:00:00:00:01', mtu: 1500, guestIP: '10.0.2.2', reportedIPs: [], podInterfaceName: 'eth0' }]]),
});

describe("KubeVirt's example manifests", () => {
  for (const [file, manifest, refusedField] of EXAMPLES) {
    test(`${file}: ${refusedField === undefined ? 'accepted and converted' : `refused at ${refusedField}`}`, () => {
      const errors = checkVmi(manifest);
      if (refusedField !== undefined) {
        assert.equal(errors[0]?.field, refusedField, JSON.stringify(errors));
        return;
      }
      assert.deepEqual(errors, []);
      const { xml, domain } = convertVmi(decodeVmi(manifest), CTX);
      const disks = domain.children.filter((c) => typeof c !== 'string' && c.name === 'devices').flatMap((d) => (typeof d === 'string' ? [] : d.children)).filter((c) => typeof c !== 'string' && c.name === 'disk');
      const volumes = (manifest['spec'] as { volumes?: unknown[] }).volumes ?? [];
      assert.equal(disks.length, volumes.length, 'every volume is shown as a disk');
      assertSchemaValid([xml]);
    });
  }
});
