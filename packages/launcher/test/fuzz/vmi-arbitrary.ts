// VMIs generated from podvirt's own field tree (SUPPORTED_VMI_FIELDS): every supported field
// may be absent, hold a value that should be accepted, or hold a hostile one (wrong JSON type,
// control characters, huge or unsafe numbers, nested junk). Names come from a small pool so
// that disks and volumes often match and many generated VMIs pass validation and reach the
// converter.

import { checkVmi, SUPPORTED_VMI_FIELDS, type FieldTree } from '@podvirt/api';
import fc from 'fast-check';

type Arb = fc.Arbitrary<unknown>;

export const NAME_POOL = ['a', 'b', 'cdisk', 'h'];
const ARRAY_KEYS = new Set(['disks', 'volumes', 'interfaces', 'networks', 'ports']);

const hostileString = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.string({ unit: 'binary', maxLength: 12 }),
  fc.constantFrom('\r', 'a\rb', 'a\nb', '\t', '\u0000', '\u007f', '\u0085', '\ud800', '\ufffe', ']]>', '<x>', '&amp;', "'\"", '../..', '/../etc/passwd', ''),
  fc.integer({ min: 2049, max: 9000 }).map((n) => 'x'.repeat(n)),
);

const hostileNumber = fc.oneof(
  fc.integer(),
  // JSON has no Infinity or NaN: they cannot reach podvirt.
  fc.double({ noDefaultInfinity: true, noNaN: true }),
  fc.constantFrom(0, -1, 1.5, 2 ** 31, 2 ** 32, 2 ** 53 + 2, 2 ** 63, -(2 ** 63), Number.MAX_VALUE, 1e21),
);

export const hostile: Arb = fc.oneof(
  { weight: 3, arbitrary: hostileString },
  { weight: 3, arbitrary: hostileNumber },
  { weight: 1, arbitrary: fc.constantFrom(null, true, false, [], {}, [null], ['x'], { x: 1 }) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
);

const quantity = fc.constantFrom('72Mi', '128Mi', '1Gi', '100M', '0.5Gi', '1e9', '64Gi', '1Ei', '1', 134217728);
const count = fc.oneof(fc.integer({ min: 1, max: 4 }), fc.constantFrom(288, 289, 4096, 4097, 65536, 4294967295));

/** A value that should be accepted for a leaf, by its key; undefined means "no idea". */
function goodLeaf(key: string, path: string): Arb | undefined {
  switch (key) {
    case 'name':
      return fc.constantFrom(...NAME_POOL);
    case 'apiVersion':
      return fc.constant(path.includes('ownerReferences') ? 'v1' : 'kubevirt.io/v1');
    case 'kind':
      return fc.constant('VirtualMachineInstance');
    case 'memory':
    case 'guest':
    case 'capacity':
      return quantity;
    case 'cpu':
      return fc.constantFrom('1', '500m', 2);
    case 'cores':
    case 'sockets':
    case 'threads':
      return count;
    case 'model':
      return fc.constantFrom('qemu64', 'host-model', 'Skylake-Client', 'virtio', 'e1000');
    case 'type':
      return fc.constantFrom('q35', 'pc-q35-7.2', 'Disk', 'DiskOrCreate', 'pc');
    case 'bus':
      return fc.constantFrom('virtio', 'sata', 'scsi', 'usb');
    case 'readonly':
    case 'enabled':
    case 'present':
    case 'shared':
    case 'endOfInterrupt':
      return fc.boolean();
    case 'image':
      return fc.constantFrom('registry:5000/guest:1', 'guest');
    case 'path':
    case 'kernelPath':
    case 'initrdPath':
      return fc.constantFrom('/disk.img', '/boot/vmlinuz', '/var/lib/podvirt/host-disks/d.img');
    case 'imagePullPolicy':
      return fc.constantFrom('Always', 'IfNotPresent', 'Never');
    case 'serial':
      return fc.constantFrom('SERIAL-1', 'a b.c_d+e');
    case 'uuid':
      return fc.uuid();
    case 'kernelArgs':
      return fc.constantFrom('console=ttyS0', 'console=ttyS0 quiet', 'a'.repeat(2047));
    case 'userData':
    case 'networkData':
      return fc.constantFrom('#cloud-config\n', '#cloud-config\r\npassword: x\r\n', 'version: 2\n');
    case 'userDataBase64':
    case 'networkDataBase64':
      return fc.constantFrom('I2Nsb3VkLWNvbmZpZwo=', 'dmVyc2lvbjogMgo=');
    case 'bootOrder':
      return fc.integer({ min: 1, max: 5 });
    case 'cache':
      return fc.constantFrom('none', 'writethrough', 'writeback');
    case 'tray':
      return fc.constantFrom('open', 'closed');
    case 'action':
      return fc.constantFrom('poweroff', 'reset', 'shutdown');
    case 'tickPolicy':
      return fc.constantFrom('delay', 'catchup', 'discard');
    case 'track':
      return fc.constantFrom('guest', 'wall');
    case 'offsetSeconds':
      return fc.integer({ min: -3600, max: 3600 });
    case 'timezone':
      return fc.constantFrom('Europe/Berlin', 'UTC');
    case 'architecture':
      return fc.constant('amd64');
    case 'terminationGracePeriodSeconds':
      return fc.oneof(fc.integer({ min: 0, max: 30 }), fc.constantFrom(2_000_000, 2_000_001));
    case 'autoattachSerialConsole':
    case 'autoattachMemBalloon':
    case 'autoattachGraphicsDevice':
      return fc.boolean();
    default:
      return undefined;
  }
}

function leaf(key: string, path: string, hostileWeight: number): Arb {
  const good = goodLeaf(key, path);
  if (good === undefined) return hostileWeight === 0 ? fc.constant(undefined) : hostile;
  return hostileWeight === 0 ? good : fc.oneof({ weight: 8, arbitrary: good }, { weight: hostileWeight, arbitrary: hostile });
}

// Keys of which KubeVirt allows one at a time; a clean VMI keeps the first present.
const EXCLUSIVE = [
  ['containerDisk', 'emptyDisk', 'cloudInitNoCloud', 'hostDisk'],
  ['disk', 'cdrom'],
  ['userData', 'userDataBase64', 'secretRef'],
  ['networkData', 'networkDataBase64', 'networkDataSecretRef'],
  ['utc', 'timezone'],
];

function pruneExclusive(value: Record<string, unknown>): Record<string, unknown> {
  const out = { ...value };
  for (const group of EXCLUSIVE) {
    const present = group.filter((key) => out[key] !== undefined);
    for (const key of present.slice(1)) delete out[key];
  }
  return out;
}

/** An object for `tree`: each key absent or set, good or (with hostileWeight > 0) hostile. */
function objectFor(tree: FieldTree, path: string, depth: number, hostileWeight: number): Arb {
  if (tree === true) return leaf(path.split('.').at(-1) ?? '', path, hostileWeight);
  if (tree === 'any' || depth > 6) return fc.oneof(fc.constant({}), fc.dictionary(fc.constantFrom('k', 'app', 'x.io/y'), fc.string({ maxLength: 5 }), { maxKeys: 2 }));
  const maybeHostile = (arb: Arb): Arb => (hostileWeight === 0 ? arb : fc.oneof({ weight: 8, arbitrary: arb }, { weight: hostileWeight, arbitrary: hostile }));
  const entries: Record<string, Arb> = {};
  for (const [key, child] of Object.entries(tree)) {
    const childPath = `${path}.${key}`;
    entries[key] = ARRAY_KEYS.has(key)
      ? maybeHostile(fc.array(objectFor(child, childPath, depth + 1, hostileWeight), { maxLength: 3 }))
      : typeof child === 'object'
        ? maybeHostile(objectFor(child, childPath, depth + 1, hostileWeight))
        : objectFor(child, childPath, depth + 1, hostileWeight);
  }
  const record = fc.record(entries, { requiredKeys: [] }).map((value) => {
    const defined = Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined));
    return hostileWeight === 0 ? pruneExclusive(defined) : defined;
  });
  return record;
}

const specTree = (SUPPORTED_VMI_FIELDS as Record<string, FieldTree>)['spec'] ?? {};

/** A whole VMI: identity fixed (the launcher serves one), spec generated, sometimes an unknown field. */
/** Removes the value at a field path such as `spec.volumes[1].cloudInitNoCloud` (list items spliced out). */
function removePath(root: Record<string, unknown>, field: string): boolean {
  const keys = [...field.matchAll(/([^.[\]]+)|\[([^\]]+)\]/g)].map((m) => m[1] ?? m[2] ?? '');
  let node: unknown = root;
  for (const key of keys.slice(0, -1)) {
    if (typeof node !== 'object' || node === null) return false;
    node = (node as Record<string, unknown>)[key];
  }
  const last = keys.at(-1);
  if (last === undefined || typeof node !== 'object' || node === null) return false;
  if (Array.isArray(node) && /^\d+$/.test(last)) node.splice(Number(last), 1);
  else delete (node as Record<string, unknown>)[last];
  return true;
}

/**
 * Makes a generated VMI valid by dropping what validation names, a few rounds over: the VMIs
 * that come out are varied and accepted, so the converter sees many shapes.
 */
function repaired(vmi: Record<string, unknown>): Record<string, unknown> {
  for (let round = 0; round < 8; round += 1) {
    const errors = checkVmi(vmi);
    if (errors.length === 0) return vmi;
    // From the last error backwards so that splicing keeps the earlier indices right.
    for (const error of [...errors].reverse()) {
      const parent = error.field.replace(/(\.[^.[\]]+|\[[^\]]+\])$/, '');
      if (!removePath(vmi, error.field) && parent !== error.field) removePath(vmi, parent);
      if (error.type === 'Required' || error.type === 'NotFound') removePath(vmi, parent);
    }
  }
  return vmi;
}

const cleanSpec = objectFor(specTree, 'spec', 0, 0);
const dirtySpec = objectFor(specTree, 'spec', 0, 1);

const rawVmi = (spec: Arb): fc.Arbitrary<Record<string, unknown>> => fc
  .record({
    spec,
    memory: quantity,
    extra: fc.option(fc.record({ key: fc.constantFrom('gpus', 'filesystems', 'hostDevices'), value: hostile }), { freq: 5 }),
    annotations: fc.option(fc.dictionary(fc.constantFrom('note', 'hooks.kubevirt.io/hookSidecars', 'smbios.vm.kubevirt.io/x'), fc.string({ maxLength: 4 }), { maxKeys: 2 }), { freq: 4 }),
  })
  .map(({ spec, memory, extra, annotations }) => {
    // Constant objects of the generators are shared between cases: work on a copy.
    const s = structuredClone(spec) as Record<string, unknown>;
    // Most VMIs keep a domain with devices and memory, so that validation has something to pass.
    const domain = typeof s['domain'] === 'object' && s['domain'] !== null && !Array.isArray(s['domain']) ? (s['domain'] as Record<string, unknown>) : {};
    domain['devices'] ??= {};
    domain['resources'] ??= { requests: { memory } };
    const devices = domain['devices'];
    if (extra && typeof devices === 'object' && devices !== null && !Array.isArray(devices)) (devices as Record<string, unknown>)[extra.key] = extra.value;
    return {
      apiVersion: 'kubevirt.io/v1',
      kind: 'VirtualMachineInstance',
      metadata: { name: 'testvmi', namespace: 'mynamespace', uid: 'test-uid', ...(annotations ? { annotations } : {}) },
      spec: { ...s, domain },
    };
  });

export const vmiArbitrary: fc.Arbitrary<Record<string, unknown>> = fc.oneof(
  rawVmi(dirtySpec),
  rawVmi(cleanSpec),
  rawVmi(cleanSpec).map((vmi) => repaired(structuredClone(vmi))),
);

/** Bytes for a Cmd request's vmi_json: mostly generated VMIs, sometimes not JSON or not an object. */
export const vmiJsonArbitrary: fc.Arbitrary<Buffer> = fc.oneof(
  { weight: 8, arbitrary: vmiArbitrary.map((vmi) => Buffer.from(JSON.stringify(vmi))) },
  { weight: 1, arbitrary: fc.jsonValue().map((v) => Buffer.from(JSON.stringify(v))) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }).map((a) => Buffer.from(a)) },
);
