// The allow-list of VMI fields podvirt implements, as a tree mirroring the JSON. A field
// outside it is refused with its path rather than silently ignored: a VM that quietly lacks a
// GPU or a NIC is worse than one that does not start.
//
// `true` accepts a leaf value; `'any'` accepts whatever lies below (maps such as labels,
// metadata, status); an object lists the accepted keys. Arrays take the tree of their items.

export type FieldTree = true | 'any' | { readonly [key: string]: FieldTree };

const featureState = { enabled: true } as const;
const timer = { present: true } as const;
const tickingTimer = { present: true, tickPolicy: true } as const;
const secretRef = { name: true } as const;

export const SUPPORTED_VMI_FIELDS: FieldTree = {
  apiVersion: true,
  kind: true,
  metadata: 'any',
  status: 'any',
  spec: {
    domain: {
      resources: { requests: { memory: true, cpu: true }, limits: { memory: true, cpu: true } },
      memory: { guest: true },
      cpu: { cores: true, sockets: true, threads: true, model: true },
      machine: { type: true },
      firmware: {
        uuid: true,
        serial: true,
        kernelBoot: {
          kernelArgs: true,
          container: { image: true, kernelPath: true, initrdPath: true, imagePullPolicy: true },
        },
      },
      features: { acpi: featureState, apic: { enabled: true, endOfInterrupt: true }, smm: featureState },
      clock: {
        utc: { offsetSeconds: true },
        timezone: true,
        timer: { hpet: tickingTimer, kvm: timer, pit: tickingTimer, rtc: { ...tickingTimer, track: true }, hyperv: timer },
      },
      devices: {
        disks: {
          name: true,
          disk: { bus: true, readonly: true },
          cdrom: { bus: true, readonly: true, tray: true },
          bootOrder: true,
          serial: true,
          cache: true,
          io: true,
          shareable: true,
        },
        interfaces: {
          name: true,
          bridge: {},
          masquerade: {},
          model: true,
          macAddress: true,
          bootOrder: true,
          pciAddress: true,
          ports: { name: true, protocol: true, port: true },
        },
        autoattachPodInterface: true,
        rng: {},
        watchdog: { name: true, i6300esb: { action: true } },
        autoattachSerialConsole: true,
        autoattachMemBalloon: true,
        autoattachGraphicsDevice: true,
        logSerialConsole: true,
      },
    },
    networks: { name: true, pod: { vmNetworkCIDR: true } },
    volumes: {
      name: true,
      containerDisk: { image: true, path: true, imagePullPolicy: true },
      emptyDisk: { capacity: true },
      cloudInitNoCloud: {
        userData: true,
        userDataBase64: true,
        secretRef,
        networkData: true,
        networkDataBase64: true,
        networkDataSecretRef: secretRef,
      },
      hostDisk: { path: true, type: true, capacity: true, shared: true },
      persistentVolumeClaim: { claimName: true, readOnly: true, hotpluggable: true },
    },
    architecture: true,
    terminationGracePeriodSeconds: true,
    nodeSelector: 'any',
    evictionStrategy: true,
  },
};
