// The kinds podvirt-api reads and writes besides KubeVirt's own: its Secret, the webhook
// configurations and the APIService whose caBundle it keeps.

import type { KubeObject, KubeResource } from '@podvirt/kube-runtime';

export const SECRETS: KubeResource = { group: '', version: 'v1', plural: 'secrets', namespaced: true };
export const VALIDATING_WEBHOOK_CONFIGURATIONS: KubeResource = { group: 'admissionregistration.k8s.io', version: 'v1', plural: 'validatingwebhookconfigurations', namespaced: false };
export const MUTATING_WEBHOOK_CONFIGURATIONS: KubeResource = { group: 'admissionregistration.k8s.io', version: 'v1', plural: 'mutatingwebhookconfigurations', namespaced: false };

export const API_SERVICES: KubeResource = { group: 'apiregistration.k8s.io', version: 'v1', plural: 'apiservices', namespaced: false };

export interface ApiService extends KubeObject {
  spec?: { caBundle?: string } & Record<string, unknown>;
}

export interface Secret extends KubeObject {
  apiVersion?: string;
  kind?: string;
  type?: string;
  data?: Record<string, string>;
}

export interface WebhookConfiguration extends KubeObject {
  webhooks?: Array<{ name: string; clientConfig?: { caBundle?: string; url?: string; service?: unknown } } & Record<string, unknown>>;
}
