// spec.volumes: names and the source of each volume.

import { PULL_POLICIES, validatePath } from './validate-domain.js';
import { utf8Length } from './validate-text.js';
import { DNS_LABEL_RULE, fieldPath, indexPath, isDnsLabel, type RawObject, type Validation } from './validate-context.js';

/** Every volume source KubeVirt knows, so that "exactly one" counts unsupported ones too. */
const ALL_VOLUME_SOURCES = [
  'containerDisk',
  'emptyDisk',
  'cloudInitNoCloud',
  'hostDisk',
  'persistentVolumeClaim',
  'dataVolume',
  'ephemeral',
  'cloudInitConfigDrive',
  'sysprep',
  'configMap',
  'secret',
  'downwardAPI',
  'serviceAccount',
  'downwardMetrics',
  'memoryDump',
];
const SUPPORTED_SOURCES = 'containerDisk, emptyDisk, cloudInitNoCloud, hostDisk, persistentVolumeClaim';
const BASE64_RE = /^[A-Za-z0-9+/]*={0,2}$/;

function validateContainerDisk(v: Validation, path: string, source: RawObject): void {
  v.string(fieldPath(path, 'image'), source['image'], true);
  validatePath(v, fieldPath(path, 'path'), source['path']);
  v.oneOf(fieldPath(path, 'imagePullPolicy'), source['imagePullPolicy'], PULL_POLICIES);
}

function validateEmptyDisk(v: Validation, path: string, source: RawObject): void {
  if (source['capacity'] === undefined || source['capacity'] === null) {
    v.required(fieldPath(path, 'capacity'), 'a capacity such as "1Gi"');
  } else {
    v.quantity(fieldPath(path, 'capacity'), source['capacity']);
  }
}

function validateBase64(v: Validation, path: string, value: unknown): number | undefined {
  const text = v.string(path, value);
  if (text === undefined) return undefined;
  const compact = text.replace(/\s+/g, '');
  if (compact.length % 4 !== 0 || !BASE64_RE.test(compact)) {
    v.add(path, 'Invalid', 'is not valid base64; put plain text in the field without the Base64 suffix instead');
    return undefined;
  }
  const padding = compact.endsWith('==') ? 2 : compact.endsWith('=') ? 1 : 0;
  return (compact.length / 4) * 3 - padding;
}

// KubeVirt's limit: the VMI travels whole to every watcher on each change, so larger data
// belongs in a Secret (secretRef / networkDataSecretRef).
export const CLOUD_INIT_MAX_BYTES = 2048;

function checkCloudInitSize(v: Validation, path: string, bytes: number | undefined, what: string, ref: string): void {
  if (bytes === undefined || bytes <= CLOUD_INIT_MAX_BYTES) return;
  v.add(path, 'TooLong', `${what} is ${bytes} bytes, over the ${CLOUD_INIT_MAX_BYTES}-byte limit; put larger data in a Secret and name it in ${ref}`);
}

function validateSecretRef(v: Validation, path: string, value: unknown): void {
  const ref = v.object(path, value);
  if (ref) v.string(fieldPath(path, 'name'), ref['name'], true);
}

function validateCloudInit(v: Validation, path: string, source: RawObject): void {
  const plain = (key: string): number | undefined => {
    const text = v.string(fieldPath(path, key), source[key]);
    return text === undefined ? undefined : utf8Length(text);
  };
  checkCloudInitSize(v, fieldPath(path, 'userData'), plain('userData'), 'user data', 'secretRef');
  checkCloudInitSize(v, fieldPath(path, 'networkData'), plain('networkData'), 'network data', 'networkDataSecretRef');
  const userData64 = validateBase64(v, fieldPath(path, 'userDataBase64'), source['userDataBase64']);
  checkCloudInitSize(v, fieldPath(path, 'userDataBase64'), userData64, 'decoded user data', 'secretRef');
  const networkData64 = validateBase64(v, fieldPath(path, 'networkDataBase64'), source['networkDataBase64']);
  checkCloudInitSize(v, fieldPath(path, 'networkDataBase64'), networkData64, 'decoded network data', 'networkDataSecretRef');
  validateSecretRef(v, fieldPath(path, 'secretRef'), source['secretRef']);
  validateSecretRef(v, fieldPath(path, 'networkDataSecretRef'), source['networkDataSecretRef']);
  const groups = [
    ['userData', 'userDataBase64', 'secretRef'],
    ['networkData', 'networkDataBase64', 'networkDataSecretRef'],
  ];
  const given = groups.map((keys) => v.presentKeys(source, keys).filter((key) => source[key] !== ''));
  given.forEach((keys) => {
    if (keys.length > 1) v.add(path, 'Invalid', `set at most one of ${keys.join(', ')}`);
  });
  if (given.every((keys) => keys.length === 0)) {
    v.required(path, `user data or network data (one of ${groups.flat().join(', ')})`);
  }
}

function validateHostDisk(v: Validation, path: string, source: RawObject): void {
  const hostPath = v.string(fieldPath(path, 'path'), source['path'], true);
  if (hostPath !== undefined) validatePath(v, fieldPath(path, 'path'), hostPath);
  const type = source['type'];
  if (type === undefined || type === null || type === '') v.required(fieldPath(path, 'type'), 'a type (Disk or DiskOrCreate)');
  else v.oneOf(fieldPath(path, 'type'), type, ['Disk', 'DiskOrCreate']);
  const capacity = v.quantity(fieldPath(path, 'capacity'), source['capacity']);
  if (type === 'DiskOrCreate' && !capacity && (source['capacity'] === undefined || source['capacity'] === null)) {
    v.required(fieldPath(path, 'capacity'), 'a capacity, to create the disk with, when type is DiskOrCreate');
  }
  v.boolean(fieldPath(path, 'shared'), source['shared']);
}

function validatePersistentVolumeClaim(v: Validation, path: string, source: RawObject): void {
  const claim = v.string(fieldPath(path, 'claimName'), source['claimName'], true);
  // A claim is named like any object: a DNS subdomain, and always in the VMI's own namespace.
  if (claim !== undefined && claim !== '' && !/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/.test(claim)) {
    v.add(fieldPath(path, 'claimName'), 'Invalid', `${JSON.stringify(claim)} is not a valid claim name (a claim in another namespace cannot be used)`);
  }
  v.boolean(fieldPath(path, 'readOnly'), source['readOnly']);
  v.boolean(fieldPath(path, 'hotpluggable'), source['hotpluggable']);
}

const SOURCE_VALIDATORS: Readonly<Record<string, (v: Validation, path: string, source: RawObject) => void>> = {
  containerDisk: validateContainerDisk,
  emptyDisk: validateEmptyDisk,
  cloudInitNoCloud: validateCloudInit,
  hostDisk: validateHostDisk,
  persistentVolumeClaim: validatePersistentVolumeClaim,
};

function validateVolume(v: Validation, path: string, volume: RawObject): void {
  const name = v.string(fieldPath(path, 'name'), volume['name'], true);
  if (name !== undefined && !isDnsLabel(name)) {
    v.add(fieldPath(path, 'name'), 'Invalid', `${JSON.stringify(name)} must be ${DNS_LABEL_RULE}`);
  }
  const sources = v.presentKeys(volume, ALL_VOLUME_SOURCES);
  if (sources.length === 0) v.required(path, `a volume source (podvirt supports ${SUPPORTED_SOURCES})`);
  if (sources.length > 1) v.add(path, 'Invalid', `set exactly one volume source; found ${sources.join(' and ')}`);
  for (const [key, validate] of Object.entries(SOURCE_VALIDATORS)) {
    const source = v.object(fieldPath(path, key), volume[key]);
    if (source) validate(v, fieldPath(path, key), source);
  }
}

export function validateVolumes(v: Validation, path: string, value: unknown): void {
  const seen = new Map<string, number>();
  v.array(path, value)?.forEach((item, i) => {
    const at = indexPath(path, i);
    const volume = v.object(at, item, true);
    if (!volume) return;
    validateVolume(v, at, volume);
    const name = volume['name'];
    if (typeof name !== 'string' || name === '') return;
    const first = seen.get(name);
    if (first === undefined) seen.set(name, i);
    else v.add(fieldPath(at, 'name'), 'Duplicate', `${JSON.stringify(name)} is already the name of ${indexPath(path, first)}`);
  });
}
