import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { podQosClass, type VirtualMachineInstance } from '@podvirt/api';
import { LAUNCHER_MONITOR_COMMAND, LAUNCHER_VOLUMES } from '../src/launcher-layout.js';
import { FIXED_OVERHEAD_BYTES, memoryOverheadBytes } from '../src/render/memory-overhead.js';
import { launcherPodPrefix, renderLauncherPod, vmNameLabelValue, type LauncherPodConfig } from '../src/render/render-launcher-pod.js';
import { vmiFixture } from './fixtures.js';

const config: LauncherPodConfig = { image: 'podvirt/launcher:0.1.0', allowEmulation: false, random: () => 0.5 };

function flag(args: readonly string[] | undefined, name: string): string | undefined {
  const i = args?.indexOf(name) ?? -1;
  return i >= 0 ? args?.[i + 1] : undefined;
}

function withSpec(change: (vmi: VirtualMachineInstance) => void): VirtualMachineInstance {
  const vmi = vmiFixture();
  change(vmi);
  return vmi;
}

const MI = 1024n * 1024n;

describe('renderLauncherPod', () => {
  test('a long VMI name is cut in the pod\'s generateName to what the name generator keeps (58), never ending in a dot', () => {
    const name = `${'a'.repeat(42)}.${'b'.repeat(120)}`;
    const prefix = launcherPodPrefix(name);
    assert.equal(prefix, `virt-launcher-${'a'.repeat(42)}-`);
    assert.ok(prefix.length <= 58);
    assert.equal(launcherPodPrefix('c'.repeat(253)), `virt-launcher-${'c'.repeat(43)}-`);
    assert.equal(launcherPodPrefix('short'), 'virt-launcher-short-');
  });

  test('the pod has KubeVirt shape: name, labels, owner, grace, restart policy, volumes', () => {
    const pod = renderLauncherPod(vmiFixture({ metadata: { labels: { app: 'demo', 'kubevirt.io/nodeName': 'old' } } }), config);
    assert.equal(pod.metadata?.generateName, 'virt-launcher-testvmi-');
    assert.equal(pod.metadata?.namespace, 'default');
    assert.deepEqual(pod.metadata?.labels, {
      app: 'demo',
      'kubevirt.io': 'virt-launcher',
      'kubevirt.io/created-by': 'vmi-uid',
      'vm.kubevirt.io/name': 'testvmi',
    });
    assert.deepEqual(pod.metadata?.annotations, { 'kubevirt.io/domain': 'testvmi' });
    assert.deepEqual(pod.metadata?.ownerReferences, [
      { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', name: 'testvmi', uid: 'vmi-uid', controller: true, blockOwnerDeletion: true },
    ]);
    assert.equal(pod.spec?.restartPolicy, 'Never');
    assert.equal(pod.spec?.terminationGracePeriodSeconds, 60, 'default VMI grace 30 + 30');
    assert.equal(pod.spec?.readinessGates, undefined);
    assert.deepEqual(pod.spec?.nodeSelector, { 'kubevirt.io/schedulable': 'true' });
    assert.deepEqual(pod.spec?.volumes?.map((v) => [v.name, v.emptyDir]), LAUNCHER_VOLUMES.map((v) => [v.name, {}]));
    const compute = pod.spec?.containers[0];
    assert.equal(pod.spec?.containers.length, 1);
    assert.equal(compute?.name, 'compute');
    assert.equal(compute?.image, 'podvirt/launcher:0.1.0');
    assert.deepEqual(compute?.command, [LAUNCHER_MONITOR_COMMAND]);
    assert.deepEqual(compute?.env, [{ name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }]);
    assert.deepEqual(compute?.volumeMounts?.map((m) => `${m.name}:${m.mountPath}`), [
      'private:/var/run/kubevirt-private',
      'public:/var/run/kubevirt',
      'sockets:/var/run/kubevirt/sockets',
      'libvirt-runtime:/var/run/libvirt',
      'ephemeral-disks:/var/run/kubevirt-ephemeral-disks',
      'container-disks:/var/run/kubevirt/container-disks',
      'hotplug-disks:/var/run/kubevirt/hotplug-disks',
    ]);
    // Disks the handler mounts on the node while the pod runs reach the container.
    assert.deepEqual(compute?.volumeMounts?.filter((m) => m.mountPropagation !== undefined).map((m) => [m.name, m.mountPropagation]), [['hotplug-disks', 'HostToContainer']]);
  });

  test('the monitor gets KubeVirt launcher flags in order', () => {
    const pod = renderLauncherPod(vmiFixture(), config);
    assert.deepEqual(pod.spec?.containers[0]?.args, [
      '--qemu-timeout', '300s',
      '--name', 'testvmi',
      '--uid', 'vmi-uid',
      '--namespace', 'default',
      '--kubevirt-share-dir', '/var/run/kubevirt',
      '--ephemeral-disk-dir', '/var/run/kubevirt-ephemeral-disks',
      '--container-disk-dir', '/var/run/kubevirt/container-disks',
      '--grace-period-seconds', '45',
      '--hook-sidecars', '0',
    ]);
  });

  const cases: Array<{ name: string; vmi: VirtualMachineInstance; config?: Partial<LauncherPodConfig>; check: (args: string[], pod: ReturnType<typeof renderLauncherPod>) => void }> = [
    {
      name: 'jitter 0 gives 240 s, jitter near 1 stays below 360 s',
      vmi: vmiFixture(),
      config: { random: () => 0.9999999 },
      check: (args) => assert.equal(flag(args, '--qemu-timeout'), '359s'),
    },
    {
      name: 'jitter 0 gives exactly 240 s',
      vmi: vmiFixture(),
      config: { random: () => 0 },
      check: (args) => assert.equal(flag(args, '--qemu-timeout'), '240s'),
    },
    {
      name: 'grace 0 → launcher 15, pod 30',
      vmi: withSpec((v) => (v.spec.terminationGracePeriodSeconds = 0)),
      check: (args, pod) => {
        assert.equal(flag(args, '--grace-period-seconds'), '15');
        assert.equal(pod.spec?.terminationGracePeriodSeconds, 30);
      },
    },
    {
      name: 'grace 120 → launcher 135, pod 150',
      vmi: withSpec((v) => (v.spec.terminationGracePeriodSeconds = 120)),
      check: (args, pod) => {
        assert.equal(flag(args, '--grace-period-seconds'), '135');
        assert.equal(pod.spec?.terminationGracePeriodSeconds, 150);
      },
    },
    {
      name: '--allow-emulation when configured',
      vmi: vmiFixture(),
      config: { allowEmulation: true },
      check: (args) => assert.equal(args.at(-1), '--allow-emulation'),
    },
    {
      name: '--keep-after-failure from the annotation "true" only',
      vmi: vmiFixture({ metadata: { annotations: { 'kubevirt.io/keep-launcher-alive-after-failure': 'true' } } }),
      check: (args) => assert.equal(args.at(-1), '--keep-after-failure'),
    },
    {
      name: 'annotation "false" adds nothing',
      vmi: vmiFixture({ metadata: { annotations: { 'kubevirt.io/keep-launcher-alive-after-failure': 'false' } } }),
      check: (args) => assert.equal(args.includes('--keep-after-failure'), false),
    },
    {
      name: 'the VMI node selector is kept next to the schedulable label',
      vmi: withSpec((v) => (v.spec.nodeSelector = { 'kubernetes.io/hostname': 'node01' })),
      check: (_args, pod) => assert.deepEqual(pod.spec?.nodeSelector, { 'kubernetes.io/hostname': 'node01', 'kubevirt.io/schedulable': 'true' }),
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const pod = renderLauncherPod(c.vmi, { ...config, ...c.config });
      c.check(pod.spec?.containers[0]?.args ?? [], pod);
    });
  }

  const noNic = (): VirtualMachineInstance => withSpec((v) => {
    v.spec.domain.devices.autoattachPodInterface = false;
  });

  test('resources: guest memory plus the documented overhead; default cpu request', () => {
    const pod = renderLauncherPod(noNic(), config);
    // 128Mi guest, 1 vCPU, graphics auto-attached, no emulation.
    const expected = 128n * MI + FIXED_OVERHEAD_BYTES + (128n * MI) / 512n + 8n * MI + 32n * MI;
    assert.equal(memoryOverheadBytes({ guestMemoryBytes: 128n * MI, vcpus: 1, graphics: true, allowEmulation: false }), expected - 128n * MI);
    const kvm = { 'devices.kubevirt.io/kvm': '1' };
    assert.deepEqual(pod.spec?.containers[0]?.resources, { requests: { memory: `${expected / 1024n}Ki`, cpu: '100m', ...kvm }, limits: kvm });
  });

  test('the pod runs under the runtime\'s default seccomp profile', () => {
    assert.deepEqual(renderLauncherPod(vmiFixture(), config).spec?.securityContext, { seccompProfile: { type: 'RuntimeDefault' } });
  });

  test('the compute container is never privileged: it drops every capability but the ones it uses, with or without a NIC', () => {
    const nic = withSpec((v) => {
      v.spec.networks = [{ name: 'default', pod: {} }];
      v.spec.domain.devices.interfaces = [{ name: 'default', masquerade: {} }];
    });
    for (const vmi of [vmiFixture(), nic]) {
      const compute = renderLauncherPod(vmi, config).spec?.containers.find((c) => c.name === 'compute');
      assert.deepEqual(compute?.securityContext, {
        capabilities: {
          drop: ['ALL'],
          add: ['NET_BIND_SERVICE', 'CHOWN', 'DAC_OVERRIDE', 'SETGID', 'SETUID', 'SETPCAP'],
        },
      });
    }
  });

  // KubeVirt's getRequiredResources: kvm unless emulation is allowed; tun for a NIC; vhost-net
  // for a virtio NIC unless emulation is allowed. Requests and limits alike.
  const withNic = (model?: string): VirtualMachineInstance => withSpec((v) => {
    v.spec.networks = [{ name: 'default', pod: {} }];
    v.spec.domain.devices.interfaces = [{ name: 'default', masquerade: {}, ...(model === undefined ? {} : { model }) }];
  });
  const deviceCases = [
    { name: 'no NIC, emulation not allowed', vmi: noNic(), allowEmulation: false, want: { kvm: '1' } },
    { name: 'no NIC, emulation allowed', vmi: noNic(), allowEmulation: true, want: {} },
    { name: 'no interface named: the default pod interface (virtio)', vmi: vmiFixture(), allowEmulation: false, want: { kvm: '1', tun: '1', 'vhost-net': '1' } },
    { name: 'virtio NIC (default model), no emulation', vmi: withNic(), allowEmulation: false, want: { kvm: '1', tun: '1', 'vhost-net': '1' } },
    { name: 'virtio NIC, emulation allowed', vmi: withNic('virtio'), allowEmulation: true, want: { tun: '1' } },
    { name: 'e1000 NIC, no emulation', vmi: withNic('e1000'), allowEmulation: false, want: { kvm: '1', tun: '1' } },
  ];
  for (const c of deviceCases) {
    test(`device plugin resources: ${c.name}`, () => {
      const resources = renderLauncherPod(c.vmi, { ...config, allowEmulation: c.allowEmulation }).spec?.containers[0]?.resources;
      const pick = (list: Record<string, string> | undefined): Record<string, string> => Object.fromEntries(
        Object.entries(list ?? {}).filter(([k]) => k.startsWith('devices.kubevirt.io/')).map(([k, v]) => [k.slice('devices.kubevirt.io/'.length), v]),
      );
      assert.deepEqual(pick(resources?.requests as Record<string, string>), c.want);
      assert.deepEqual(pick(resources?.limits as Record<string, string> | undefined), c.want);
    });
  }

  test('resources: vCPUs, no graphics, emulation, limits and cpu from the VMI', () => {
    const vmi = withSpec((v) => {
      v.spec.domain.devices.autoattachPodInterface = false;
      v.spec.domain.resources = { requests: { memory: '1Gi', cpu: '500m' }, limits: { memory: '1Gi', cpu: '2' } };
      v.spec.domain.cpu = { sockets: 1, cores: 2, threads: 1 };
      v.spec.domain.devices.autoattachGraphicsDevice = false;
    });
    const pod = renderLauncherPod(vmi, { ...config, allowEmulation: true });
    const overhead = FIXED_OVERHEAD_BYTES + (1024n * MI) / 512n + 16n * MI + 64n * MI;
    const memory = `${(1024n * MI + overhead) / MI}Mi`;
    assert.deepEqual(pod.spec?.containers[0]?.resources, { requests: { memory, cpu: '500m' }, limits: { memory, cpu: '2' } });
  });

  test('a VMI without memory or identity is refused with a stable code', () => {
    const noMemory = withSpec((v) => delete v.spec.domain.resources);
    assert.throws(() => renderLauncherPod(noMemory, config), { code: 'API_ERR_VMI_INVALID' });
    const noUid = vmiFixture({ metadata: { uid: '' } });
    assert.throws(() => renderLauncherPod(noUid, config), { code: 'CONTROLLER_ERR_INVALID_VMI' });
  });

  test('rendering does not touch the VMI', () => {
    const vmi = vmiFixture();
    const before = structuredClone(vmi);
    renderLauncherPod(vmi, config);
    assert.deepEqual(vmi, before);
  });

  test('guest images become init containers that fill the container-disks slots the launcher reads', () => {
    const vmi = withSpec((v) => {
      v.spec.domain.firmware = { kernelBoot: { kernelArgs: 'console=ttyS0', container: { image: 'guest:k', kernelPath: '/boot/vmlinuz', imagePullPolicy: 'Never' } } };
      v.spec.domain.devices.disks = [{ name: 'root', disk: { bus: 'virtio' } }, { name: 'data', disk: { bus: 'virtio' } }];
      v.spec.volumes = [{ name: 'root', containerDisk: { image: 'guest:root' } }, { name: 'data', emptyDisk: { capacity: '1Gi' } }];
    });
    const pod = renderLauncherPod(vmi, config);
    const init = (pod.spec?.initContainers ?? []).filter((c) => c.name !== 'guest-console-log');
    assert.deepEqual(init.map((c) => [c.name, c.image, c.args, c.imagePullPolicy]), [
      ['kernel-boot', 'guest:k', ['/var/run/kubevirt/container-disks/kernel-boot'], 'Never'],
      ['volumeroot', 'guest:root', ['/var/run/kubevirt/container-disks/root'], 'IfNotPresent'],
    ]);
    for (const c of init) {
      assert.equal(c.command, undefined, 'the image entrypoint does the copy');
      assert.deepEqual(c.volumeMounts, [{ name: 'container-disks', mountPath: '/var/run/kubevirt/container-disks' }]);
      // The compute container's CPU (no CFS quota of 10m on the copy); no CPU limit where it has none.
      assert.deepEqual(c.resources, { requests: { cpu: '100m', memory: '40Mi' }, limits: { memory: '40Mi' } });
    }
    const compute = pod.spec?.containers[0];
    assert.ok(compute?.volumeMounts?.some((m) => m.name === 'container-disks' && m.mountPath === '/var/run/kubevirt/container-disks'));
    const bare = withSpec((v) => { v.spec.volumes = []; v.spec.domain.devices.disks = []; v.spec.domain.devices.logSerialConsole = false; });
    assert.equal(renderLauncherPod(bare, config).spec?.initContainers, undefined);
  });

  test('a Guaranteed compute container keeps the guest image copies Guaranteed, at its CPU: the pod asks for no more', () => {
    const vmi = withSpec((v) => {
      v.spec.domain.resources = { requests: { cpu: '2', memory: '1Gi' }, limits: { cpu: '2', memory: '1Gi' } };
      v.spec.domain.devices.disks = [{ name: 'root', disk: { bus: 'virtio' } }];
      v.spec.volumes = [{ name: 'root', containerDisk: { image: 'guest:root' } }];
    });
    const pod = renderLauncherPod(vmi, config);
    const [copy] = (pod.spec?.initContainers ?? []).filter((c) => c.name === 'volumeroot');
    assert.deepEqual(copy?.resources, { requests: { cpu: '2', memory: '40Mi' }, limits: { cpu: '2', memory: '40Mi' } });
    const compute = pod.spec?.containers[0]?.resources;
    assert.equal(compute?.limits?.['cpu'], compute?.requests?.['cpu']);
    assert.equal(compute?.requests?.['cpu'], copy?.resources?.requests?.['cpu'], 'an init request above the containers\' would raise the pod\'s');
  });

  test('a VMI asking for Guaranteed QoS gets a Guaranteed pod: the guest-console-log sidecar requests its limits, as KubeVirt renders it', () => {
    const guaranteed = (resources: NonNullable<VirtualMachineInstance['spec']['domain']['resources']>): VirtualMachineInstance => withSpec((v) => {
      v.spec.domain.resources = resources;
      v.spec.domain.devices.disks = [{ name: 'root', disk: { bus: 'virtio' } }];
      v.spec.volumes = [{ name: 'root', containerDisk: { image: 'guest:root' } }];
    });
    const sidecar = (pod: ReturnType<typeof renderLauncherPod>) => pod.spec?.initContainers?.find((c) => c.name === 'guest-console-log');
    for (const resources of [
      { requests: { cpu: '2', memory: '1Gi' }, limits: { cpu: '2', memory: '1Gi' } },
      { requests: { cpu: '500m', memory: '1Gi' }, limits: { cpu: '0.5', memory: '1024Mi' } },
    ]) {
      const pod = renderLauncherPod(guaranteed(resources), config);
      assert.deepEqual(sidecar(pod)?.resources, { requests: { cpu: '15m', memory: '60M' }, limits: { cpu: '15m', memory: '60M' } });
      assert.equal(podQosClass(pod.spec ?? { containers: [] }), 'Guaranteed', JSON.stringify(resources));
    }
    // Anything else keeps KubeVirt's smaller requests: the pod is Burstable anyway.
    for (const resources of [{ requests: { cpu: '1', memory: '1Gi' }, limits: { cpu: '2', memory: '1Gi' } }, { requests: { memory: '1Gi' } }]) {
      const pod = renderLauncherPod(guaranteed(resources), config);
      assert.deepEqual(sidecar(pod)?.resources, { requests: { cpu: '5m', memory: '35M' }, limits: { cpu: '15m', memory: '60M' } });
      assert.equal(podQosClass(pod.spec ?? { containers: [] }), 'Burstable', JSON.stringify(resources));
    }
  });

  test('guest-console-log: a sidecar tailing the serial log, first of the init containers, unprivileged; off with logSerialConsole or without a serial console', () => {
    const pod = renderLauncherPod(withSpec(() => undefined), config);
    const [first] = pod.spec?.initContainers ?? [];
    const uid = pod.metadata?.ownerReferences?.[0]?.uid ?? '';
    assert.deepEqual(first, {
      name: 'guest-console-log',
      image: config.image,
      command: ['/usr/bin/podvirt-tail'],
      args: ['--logfile', `/var/run/kubevirt-private/${uid}/virt-serial0-log`],
      resources: { requests: { cpu: '5m', memory: '35M' }, limits: { cpu: '15m', memory: '60M' } },
      volumeMounts: [{ name: 'private', mountPath: '/var/run/kubevirt-private', readOnly: true }],
      securityContext: { runAsUser: 107, runAsNonRoot: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
      restartPolicy: 'Always',
    });
    const names = (p: ReturnType<typeof renderLauncherPod>): string[] => (p.spec?.initContainers ?? []).map((c) => c.name);
    assert.ok(!names(renderLauncherPod(withSpec((v) => { v.spec.domain.devices.logSerialConsole = false; }), config)).includes('guest-console-log'));
    assert.ok(!names(renderLauncherPod(withSpec((v) => { v.spec.domain.devices.autoattachSerialConsole = false; }), config)).includes('guest-console-log'));
    assert.ok(names(renderLauncherPod(withSpec((v) => { v.spec.domain.devices.logSerialConsole = true; }), config)).includes('guest-console-log'));
  });
});

test('vm.kubevirt.io/name is the first DNS label of the VMI name, at most 63 characters', () => {
  assert.equal(vmNameLabelValue('testvmi'), 'testvmi');
  assert.equal(vmNameLabelValue('web.prod'), 'web');
  assert.equal(vmNameLabelValue(`${'a'.repeat(120)}.${'b'.repeat(120)}`), 'a'.repeat(63));
  assert.equal(vmNameLabelValue(`${'a'.repeat(62)}-b`), `${'a'.repeat(62)}`);
});
