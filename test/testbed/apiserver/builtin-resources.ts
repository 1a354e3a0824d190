import { validatingAdmissionPolicyBindingStrategy, validatingAdmissionPolicyStrategy } from './admission/policy-configuration.js';
import { mutatingWebhookConfigurationStrategy, validatingWebhookConfigurationStrategy } from './admission/webhook-configuration.js';
import type { ResourceType, Strategy, Subresource } from './resource-type.js';
import { bindingStrategy } from './strategies/binding.js';
import { eventStrategy, eventsV1Strategy } from './strategies/event.js';
import { leaseStrategy } from './strategies/lease.js';
import { namespaceStrategy } from './strategies/namespace.js';
import { nodeStrategy } from './strategies/node.js';
import { podStrategy } from './strategies/pod.js';
import { podDisruptionBudgetStrategy } from './strategies/pod-disruption-budget.js';
import { checkBinding, checkRules } from './strategies/rbac-checks.js';
import { storedObjectStrategy } from './strategies/stored-object.js';
import { persistentVolumeClaimStrategy, persistentVolumeStrategy, secretStrategy, storageClassStrategy } from './strategies/storage.js';
import { workloadStrategy } from './strategies/workload.js';

interface Spec {
  group: string;
  resource: string;
  kind: string;
  namespaced: boolean;
  shortNames?: string[];
  categories?: string[];
  subresources?: Subresource[];
  storageKey?: string;
  verbs?: string[];
  strategy: Strategy;
}

const rbac = 'rbac.authorization.k8s.io';
const admission = 'admissionregistration.k8s.io';

const specs: Spec[] = [
  { group: '', resource: 'namespaces', kind: 'Namespace', namespaced: false, shortNames: ['ns'], subresources: ['status'], strategy: namespaceStrategy },
  { group: '', resource: 'nodes', kind: 'Node', namespaced: false, shortNames: ['no'], subresources: ['status'], strategy: nodeStrategy },
  {
    group: '',
    resource: 'pods',
    kind: 'Pod',
    namespaced: true,
    shortNames: ['po'],
    categories: ['all'],
    subresources: ['status', 'binding', 'log', 'eviction'],
    strategy: podStrategy,
  },
  // Only POST is served (the handler turns it into pods/binding), as in Kubernetes.
  { group: '', resource: 'bindings', kind: 'Binding', namespaced: true, verbs: ['create'], strategy: bindingStrategy },
  { group: '', resource: 'persistentvolumes', kind: 'PersistentVolume', namespaced: false, shortNames: ['pv'], subresources: ['status'], strategy: persistentVolumeStrategy },
  { group: '', resource: 'persistentvolumeclaims', kind: 'PersistentVolumeClaim', namespaced: true, shortNames: ['pvc'], subresources: ['status'], strategy: persistentVolumeClaimStrategy },
  { group: '', resource: 'secrets', kind: 'Secret', namespaced: true, strategy: secretStrategy },
  { group: 'storage.k8s.io', resource: 'storageclasses', kind: 'StorageClass', namespaced: false, shortNames: ['sc'], strategy: storageClassStrategy },
  { group: '', resource: 'events', kind: 'Event', namespaced: true, shortNames: ['ev'], strategy: eventStrategy },
  { group: 'events.k8s.io', resource: 'events', kind: 'Event', namespaced: true, shortNames: ['ev'], storageKey: 'events', strategy: eventsV1Strategy },
  { group: 'policy', resource: 'poddisruptionbudgets', kind: 'PodDisruptionBudget', namespaced: true, shortNames: ['pdb'], subresources: ['status'], strategy: podDisruptionBudgetStrategy },
  { group: 'coordination.k8s.io', resource: 'leases', kind: 'Lease', namespaced: true, strategy: leaseStrategy },
  // Stored only, so that podvirt's install manifests apply here (dry-run included).
  { group: '', resource: 'services', kind: 'Service', namespaced: true, shortNames: ['svc'], categories: ['all'], strategy: storedObjectStrategy('label') },
  { group: '', resource: 'endpoints', kind: 'Endpoints', namespaced: true, shortNames: ['ep'], strategy: storedObjectStrategy('subdomain') },
  { group: '', resource: 'configmaps', kind: 'ConfigMap', namespaced: true, shortNames: ['cm'], strategy: storedObjectStrategy('subdomain') },
  { group: '', resource: 'serviceaccounts', kind: 'ServiceAccount', namespaced: true, shortNames: ['sa'], strategy: storedObjectStrategy('subdomain') },
  { group: 'apps', resource: 'daemonsets', kind: 'DaemonSet', namespaced: true, shortNames: ['ds'], categories: ['all'], subresources: ['status'], strategy: workloadStrategy },
  { group: 'apps', resource: 'deployments', kind: 'Deployment', namespaced: true, shortNames: ['deploy'], categories: ['all'], subresources: ['status'], strategy: workloadStrategy },
  { group: rbac, resource: 'clusterroles', kind: 'ClusterRole', namespaced: false, strategy: storedObjectStrategy('path-segment', checkRules) },
  { group: rbac, resource: 'clusterrolebindings', kind: 'ClusterRoleBinding', namespaced: false, strategy: storedObjectStrategy('path-segment', checkBinding) },
  { group: rbac, resource: 'roles', kind: 'Role', namespaced: true, strategy: storedObjectStrategy('path-segment', checkRules) },
  { group: rbac, resource: 'rolebindings', kind: 'RoleBinding', namespaced: true, strategy: storedObjectStrategy('path-segment', checkBinding) },
  { group: 'apiextensions.k8s.io', resource: 'customresourcedefinitions', kind: 'CustomResourceDefinition', namespaced: false, shortNames: ['crd', 'crds'], subresources: ['status'], strategy: storedObjectStrategy('subdomain') },
  { group: admission, resource: 'validatingadmissionpolicies', kind: 'ValidatingAdmissionPolicy', namespaced: false, subresources: ['status'], strategy: validatingAdmissionPolicyStrategy },
  { group: admission, resource: 'validatingwebhookconfigurations', kind: 'ValidatingWebhookConfiguration', namespaced: false, strategy: validatingWebhookConfigurationStrategy },
  { group: admission, resource: 'mutatingwebhookconfigurations', kind: 'MutatingWebhookConfiguration', namespaced: false, strategy: mutatingWebhookConfigurationStrategy },
  { group: admission, resource: 'validatingadmissionpolicybindings', kind: 'ValidatingAdmissionPolicyBinding', namespaced: false, strategy: validatingAdmissionPolicyBindingStrategy },
  { group: 'apiregistration.k8s.io', resource: 'apiservices', kind: 'APIService', namespaced: false, subresources: ['status'], strategy: storedObjectStrategy('subdomain') },
];

/** The built-in kinds the testbed serves (what the podvirt components and kubectl use). */
export function builtinResourceTypes(): ResourceType[] {
  return specs.map((s) => ({
    group: s.group,
    version: 'v1',
    resource: s.resource,
    singular: s.kind.toLowerCase(),
    kind: s.kind,
    listKind: `${s.kind}List`,
    namespaced: s.namespaced,
    shortNames: s.shortNames ?? [],
    categories: s.categories ?? [],
    subresources: s.subresources ?? [],
    storageKey: s.storageKey ?? s.resource,
    strategicMerge: true,
    ...(s.verbs === undefined ? {} : { verbs: s.verbs }),
    strategy: s.strategy,
  }));
}
