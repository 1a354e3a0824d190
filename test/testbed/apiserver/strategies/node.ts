import { ageOf } from '../human-duration.js';
import { arr, isObject, meta, obj, str, type JsonObject } from '../json.js';
import { validateObjectMeta } from '../object-meta.js';
import type { Strategy } from '../resource-type.js';
import { column } from './columns.js';

export const nodeStrategy: Strategy = {
  prepareForCreate(node) {
    const status = obj(node['status']) ?? {};
    node['status'] = status;
  },
  validate: (node) => validateObjectMeta(node, 'subdomain'),
  fields: (node) => ({ 'spec.unschedulable': String(obj(node['spec'])?.['unschedulable'] === true) }),
  table: {
    columns: [
      column('Name', 0, 'string', 'name'),
      column('Status'),
      column('Roles'),
      column('Age'),
      column('Version'),
      column('Internal-IP', 1),
      column('External-IP', 1),
      column('OS-Image', 1),
      column('Kernel-Version', 1),
      column('Container-Runtime', 1),
    ],
    cells(node, now) {
      const status = obj(node['status']) ?? {};
      const info = obj(status['nodeInfo']) ?? {};
      const labels = obj(meta(node)['labels']) ?? {};
      const roles = Object.keys(labels)
        .filter((k) => k.startsWith('node-role.kubernetes.io/'))
        .map((k) => k.slice('node-role.kubernetes.io/'.length));
      return [
        str(meta(node)['name']) ?? '',
        nodeStatus(node),
        roles.length === 0 ? '<none>' : roles.join(','),
        ageOf(meta(node)['creationTimestamp'], now),
        str(info['kubeletVersion']) ?? '',
        address(status, 'InternalIP'),
        address(status, 'ExternalIP'),
        str(info['osImage']) ?? '<unknown>',
        str(info['kernelVersion']) ?? '<unknown>',
        str(info['containerRuntimeVersion']) ?? '<unknown>',
      ];
    },
  },
};

function nodeStatus(node: JsonObject): string {
  const conditions = arr(obj(node['status'])?.['conditions']).filter(isObject);
  const ready = conditions.find((c) => c['type'] === 'Ready');
  let text = ready === undefined ? 'Unknown' : ready['status'] === 'True' ? 'Ready' : ready['status'] === 'False' ? 'NotReady' : 'Unknown';
  if (obj(node['spec'])?.['unschedulable'] === true) text += ',SchedulingDisabled';
  return text;
}

function address(status: JsonObject, type: string): string {
  const found = arr(status['addresses']).filter(isObject).find((a) => a['type'] === type);
  return str(found?.['address']) ?? '<none>';
}
