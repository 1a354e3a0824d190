// PersistentVolumes, PersistentVolumeClaims, StorageClasses and Secrets with kube-apiserver's
// defaulting, the validation a manifest author trips on, and `kubectl get`'s columns. Binding
// is not done here: the testbed's PV controller (test/testbed/storage) does it through the API.
import type { StatusCause } from '../errors.js';
import { ageOf } from '../human-duration.js';
import { arr, meta, obj, str, type JsonObject } from '../json.js';
import { validateObjectMeta } from '../object-meta.js';
import type { Strategy } from '../resource-type.js';
import { column } from './columns.js';

const ACCESS_MODES: Record<string, string> = { ReadWriteOnce: 'RWO', ReadOnlyMany: 'ROX', ReadWriteMany: 'RWX', ReadWriteOncePod: 'RWOP' };
const PV_SOURCES = ['hostPath', 'local', 'csi', 'nfs', 'iscsi', 'fc', 'rbd'];

function required(field: string): StatusCause {
  return { reason: 'FieldValueRequired', message: 'Required value', field };
}

function invalid(field: string, message: string): StatusCause {
  return { reason: 'FieldValueInvalid', message, field };
}

function accessModes(obj2: JsonObject | undefined): string {
  const modes = arr(obj2?.['accessModes']).map((m) => ACCESS_MODES[String(m as string)] ?? String(m as string));
  return modes.join(',');
}

function checkAccessModes(spec: JsonObject, causes: StatusCause[]): void {
  const modes = arr(spec['accessModes']);
  if (modes.length === 0) causes.push(required('spec.accessModes'));
  modes.forEach((m, i) => {
    if (typeof m !== 'string' || ACCESS_MODES[m] === undefined) causes.push({ reason: 'FieldValueNotSupported', message: `Unsupported value: ${JSON.stringify(m)}`, field: `spec.accessModes[${i}]` });
  });
  const volumeMode = spec['volumeMode'];
  if (volumeMode !== 'Filesystem' && volumeMode !== 'Block') causes.push({ reason: 'FieldValueNotSupported', message: `Unsupported value: ${JSON.stringify(volumeMode)}: supported values: "Block", "Filesystem"`, field: 'spec.volumeMode' });
}

function validatePv(pv: JsonObject): StatusCause[] {
  const causes = validateObjectMeta(pv, 'subdomain');
  const spec = obj(pv['spec']) ?? {};
  if (str(obj(spec['capacity'])?.['storage']) === undefined && typeof obj(spec['capacity'])?.['storage'] !== 'number') causes.push(required('spec.capacity.storage'));
  checkAccessModes(spec, causes);
  const sources = PV_SOURCES.filter((k) => spec[k] !== undefined);
  if (sources.length !== 1) causes.push(invalid('spec', `must specify exactly one volume source (found ${sources.length})`));
  if (spec['local'] !== undefined && spec['nodeAffinity'] === undefined) causes.push({ reason: 'FieldValueRequired', message: 'Required value: Local volume requires node affinity', field: 'spec.nodeAffinity' });
  const policy = spec['persistentVolumeReclaimPolicy'];
  if (policy !== 'Retain' && policy !== 'Delete' && policy !== 'Recycle') causes.push({ reason: 'FieldValueNotSupported', message: `Unsupported value: ${JSON.stringify(policy)}`, field: 'spec.persistentVolumeReclaimPolicy' });
  return causes;
}

function validatePvc(pvc: JsonObject, old: JsonObject | undefined): StatusCause[] {
  const causes = validateObjectMeta(pvc, 'subdomain');
  const spec = obj(pvc['spec']) ?? {};
  checkAccessModes(spec, causes);
  const storage = obj(obj(spec['resources'])?.['requests'])?.['storage'];
  if (storage === undefined) causes.push(required('spec.resources.requests.storage'));
  if (old !== undefined) {
    // Everything but the requested size (and the binding the PV controller writes) is immutable.
    const before = obj(old['spec']) ?? {};
    for (const key of ['accessModes', 'volumeMode', 'storageClassName', 'selector']) {
      if (JSON.stringify(before[key]) !== JSON.stringify(spec[key]) && !(key === 'storageClassName' && before[key] === undefined)) {
        causes.push({ reason: 'FieldValueForbidden', message: 'spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims', field: 'spec' });
        break;
      }
    }
  }
  return causes;
}

export const persistentVolumeStrategy: Strategy = {
  defaults(pv) {
    const spec = obj(pv['spec']);
    if (spec === undefined) return;
    spec['volumeMode'] ??= 'Filesystem';
    spec['persistentVolumeReclaimPolicy'] ??= 'Retain';
  },
  prepareForCreate(pv) {
    pv['status'] = { phase: 'Pending' };
  },
  validate: (pv) => validatePv(pv),
  fields: (pv) => ({ 'status.phase': str(obj(pv['status'])?.['phase']) ?? '' }),
  table: {
    columns: [
      column('Name', 0, 'string', 'name'), column('Capacity'), column('Access Modes'), column('Reclaim Policy'), column('Status'),
      column('Claim'), column('StorageClass'), column('VolumeAttributesClass'), column('Reason'), column('Age'), column('VolumeMode', 1),
    ],
    cells(pv, now) {
      const spec = obj(pv['spec']) ?? {};
      const status = obj(pv['status']) ?? {};
      const ref = obj(spec['claimRef']);
      return [
        str(meta(pv)['name']) ?? '',
        String(obj(spec['capacity'])?.['storage'] ?? ''),
        accessModes(spec),
        str(spec['persistentVolumeReclaimPolicy']) ?? '',
        str(status['phase']) ?? '',
        ref === undefined ? '' : `${str(ref['namespace']) ?? ''}/${str(ref['name']) ?? ''}`,
        str(spec['storageClassName']) ?? '',
        '<unset>',
        str(status['reason']) ?? '',
        ageOf(meta(pv)['creationTimestamp'], now),
        str(spec['volumeMode']) ?? '',
      ];
    },
  },
};

export const persistentVolumeClaimStrategy: Strategy = {
  defaults(pvc) {
    const spec = obj(pvc['spec']);
    if (spec !== undefined) spec['volumeMode'] ??= 'Filesystem';
  },
  prepareForCreate(pvc) {
    pvc['status'] = { phase: 'Pending' };
  },
  validate: (pvc, old) => validatePvc(pvc, old),
  fields: (pvc) => ({ 'status.phase': str(obj(pvc['status'])?.['phase']) ?? '' }),
  table: {
    columns: [
      column('Name', 0, 'string', 'name'), column('Status'), column('Volume'), column('Capacity'), column('Access Modes'),
      column('StorageClass'), column('VolumeAttributesClass'), column('Age'), column('VolumeMode', 1),
    ],
    cells(pvc, now) {
      const spec = obj(pvc['spec']) ?? {};
      const status = obj(pvc['status']) ?? {};
      return [
        str(meta(pvc)['name']) ?? '',
        str(status['phase']) ?? '',
        str(spec['volumeName']) ?? '',
        String(obj(status['capacity'])?.['storage'] ?? ''),
        accessModes(status),
        str(spec['storageClassName']) ?? '',
        '<unset>',
        ageOf(meta(pvc)['creationTimestamp'], now),
        str(spec['volumeMode']) ?? '',
      ];
    },
  },
};

export const storageClassStrategy: Strategy = {
  defaults(sc) {
    sc['reclaimPolicy'] ??= 'Delete';
    sc['volumeBindingMode'] ??= 'Immediate';
  },
  prepareForCreate() {},
  validate: (sc) => {
    const causes = validateObjectMeta(sc, 'subdomain');
    if (str(sc['provisioner']) === undefined) causes.push(required('provisioner'));
    return causes;
  },
  fields: () => ({}),
  table: {
    columns: [column('Name', 0, 'string', 'name'), column('Provisioner'), column('ReclaimPolicy'), column('VolumeBindingMode'), column('AllowVolumeExpansion'), column('Age')],
    cells(sc, now) {
      const isDefault = obj(meta(sc)['annotations'])?.['storageclass.kubernetes.io/is-default-class'] === 'true';
      return [
        `${str(meta(sc)['name']) ?? ''}${isDefault ? ' (default)' : ''}`,
        str(sc['provisioner']) ?? '',
        str(sc['reclaimPolicy']) ?? '',
        str(sc['volumeBindingMode']) ?? '',
        String(sc['allowVolumeExpansion'] === true),
        ageOf(meta(sc)['creationTimestamp'], now),
      ];
    },
  },
};

const BASE64_RE = /^[A-Za-z0-9+/]*={0,2}$/;

export const secretStrategy: Strategy = {
  defaults(secret) {
    // stringData is write-only: merged into data (base64) as kube-apiserver does.
    const stringData = obj(secret['stringData']);
    if (stringData !== undefined) {
      const data = obj(secret['data']) ?? {};
      for (const [k, v] of Object.entries(stringData)) data[k] = Buffer.from(String(v as string)).toString('base64');
      secret['data'] = data;
      delete secret['stringData'];
    }
    secret['type'] ??= 'Opaque';
  },
  prepareForCreate() {},
  validate: (secret) => {
    const causes = validateObjectMeta(secret, 'subdomain');
    for (const [k, v] of Object.entries(obj(secret['data']) ?? {})) {
      if (typeof v !== 'string' || v.length % 4 !== 0 || !BASE64_RE.test(v)) causes.push(invalid(`data[${k}]`, 'must be base64'));
    }
    return causes;
  },
  fields: (secret) => ({ type: str(secret['type']) ?? '' }),
  table: {
    columns: [column('Name', 0, 'string', 'name'), column('Type'), column('Data'), column('Age')],
    cells: (secret, now) => [str(meta(secret)['name']) ?? '', str(secret['type']) ?? '', Object.keys(obj(secret['data']) ?? {}).length, ageOf(meta(secret)['creationTimestamp'], now)],
  },
};
