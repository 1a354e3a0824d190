// VMI manifests shaped like KubeVirt's own examples, as raw JSON, for the table tests.

export type Json = Record<string, unknown>;

/** Like KubeVirt's vmi-ephemeral example: one containerDisk, 128Mi, no grace period. */
export function ephemeralVmi(): Json {
  return {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachineInstance',
    metadata: { name: 'vmi-ephemeral', namespace: 'default', labels: { special: 'vmi-ephemeral' } },
    spec: {
      domain: {
        devices: { disks: [{ name: 'containerdisk', disk: { bus: 'virtio' } }] },
        resources: { requests: { memory: '128Mi' } },
      },
      terminationGracePeriodSeconds: 0,
      volumes: [{ name: 'containerdisk', containerDisk: { image: 'registry:5000/kubevirt/cirros-container-disk-demo:devel' } }],
    },
  };
}

/** Like KubeVirt's vmi-nocloud example, plus most fields podvirt supports. */
export function fullVmi(): Json {
  return {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachineInstance',
    metadata: {
      name: 'testvmi',
      namespace: 'mynamespace',
      uid: 'f4686d2c-6e8d-4335-b8fd-81bee22f4814',
      labels: { app: 'demo' },
      annotations: { note: 'x' },
      finalizers: ['foregroundDeleteVirtualMachine'],
      ownerReferences: [{ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', name: 'testvm', uid: 'u-1', controller: true }],
      generation: 1,
    },
    spec: {
      nodeSelector: { 'kubernetes.io/hostname': 'node01' },
      terminationGracePeriodSeconds: 5,
      domain: {
        resources: { requests: { memory: '256Mi', cpu: '500m' }, limits: { memory: '256Mi', cpu: '1' } },
        memory: { guest: '200Mi' },
        cpu: { cores: 2, sockets: 1, threads: 1, model: 'qemu64' },
        machine: { type: 'q35' },
        firmware: {
          uuid: '5d307ca9-b3ef-428c-8861-06e72d69f223',
          serial: 'e4686d2c-6e8d-4335-b8fd-81bee22f4815',
          kernelBoot: {
            kernelArgs: 'console=ttyS0',
            container: { image: 'guest-kernel:1', kernelPath: '/boot/vmlinuz', initrdPath: '/boot/initrd.img' },
          },
        },
        features: { acpi: {}, apic: { enabled: true }, smm: { enabled: false } },
        clock: { utc: { offsetSeconds: 10 }, timer: { rtc: { tickPolicy: 'catchup', track: 'guest' }, pit: { present: false } } },
        devices: {
          disks: [
            { name: 'containerdisk', disk: { bus: 'virtio' }, bootOrder: 1 },
            { name: 'cloudinitdisk', disk: { bus: 'virtio' }, serial: 'CI-1' },
            { name: 'emptydisk', disk: { bus: 'sata', readonly: false }, cache: 'writethrough' },
            { name: 'hostdisk', cdrom: { bus: 'sata' } },
          ],
          rng: {},
          watchdog: { name: 'wd', i6300esb: { action: 'poweroff' } },
          autoattachSerialConsole: true,
          autoattachMemBalloon: false,
          autoattachGraphicsDevice: false,
        },
      },
      volumes: [
        { name: 'containerdisk', containerDisk: { image: 'quay.io/kubevirt/cirros-container-disk-demo:latest', path: '/disk/cirros.img' } },
        { name: 'cloudinitdisk', cloudInitNoCloud: { userData: '#cloud-config\npassword: fedora\n', networkDataBase64: 'dmVyc2lvbjogMgo=' } },
        { name: 'emptydisk', emptyDisk: { capacity: '2Gi' } },
        { name: 'hostdisk', hostDisk: { path: '/var/lib/podvirt/disk.img', type: 'DiskOrCreate', capacity: '1Gi' } },
      ],
    },
  };
}

/** Like KubeVirt's vmi-masquerade example: a pod network with a masquerade binding. */
export function masqueradeVmi(): Json {
  const vmi = ephemeralVmi();
  const spec = vmi['spec'] as Json;
  const domain = spec['domain'] as Json;
  const devices = domain['devices'] as Json;
  devices['interfaces'] = [{ name: 'default', masquerade: {}, ports: [{ name: 'http', port: 80 }] }];
  spec['networks'] = [{ name: 'default', pod: {} }];
  return vmi;
}

/** Sets `value` at a dotted path (`spec.domain.devices.disks.0.name`), creating objects on the way. */
export function setPath(target: Json, path: string, value: unknown): Json {
  const keys = path.split('.');
  let node: Record<string, unknown> = target;
  for (const key of keys.slice(0, -1)) {
    const next = node[key];
    if (typeof next !== 'object' || next === null) node[key] = {};
    node = node[key] as Record<string, unknown>;
  }
  const last = keys[keys.length - 1] ?? '';
  if (value === undefined) delete node[last];
  else node[last] = value;
  return target;
}

export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}
