// The discovery documents the aggregator reads from an APIService's backend: the group, and the
// version's resource list. KubeVirt lists its subresources by name only; the verbs are added here
// so `kubectl api-resources` and RBAC tooling see what each one takes.

import { SUBRESOURCE_GROUP, SUBRESOURCE_VERSION, VM_SUBRESOURCES, VMI_SUBRESOURCES, rbacVerb, type VmiSubresource } from './subresource-routes.js';

const GROUP_VERSION = `${SUBRESOURCE_GROUP}/${SUBRESOURCE_VERSION}`;

export function apiGroupDocument(): object {
  const version = { groupVersion: GROUP_VERSION, version: SUBRESOURCE_VERSION };
  return { kind: 'APIGroup', apiVersion: 'v1', name: SUBRESOURCE_GROUP, versions: [version], preferredVersion: version };
}

export function apiResourceListDocument(): object {
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: GROUP_VERSION,
    resources: [
      ...(Object.keys(VMI_SUBRESOURCES) as VmiSubresource[]).map((sub) => resource(`virtualmachineinstances/${sub}`, rbacVerb(sub))),
      ...VM_SUBRESOURCES.map((sub) => resource(`virtualmachines/${sub}`, 'update')),
    ],
  };
}

function resource(name: string, verb: string): object {
  return { name, singularName: '', namespaced: true, kind: '', verbs: [verb] };
}
