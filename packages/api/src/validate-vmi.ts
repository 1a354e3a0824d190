// validateVmi: every problem in a raw VMI object, as Kubernetes-style field errors. Pure: no
// I/O, no clock. It checks the fields podvirt supports; findUnsupportedFields names the rest.

import { EVICTION_STRATEGIES } from './eviction-strategy.js';
import type { FieldError } from './field-error.js';
import { VMI_ACCEPTED_API_VERSIONS, VMI_KIND } from './group-version.js';
import { VMI_PHASES } from './phases.js';
import { describe, fieldPath, indexPath, isRawObject, Validation } from './validate-context.js';
import { validateAnnotations } from './validate-annotations.js';
import { validateDevices } from './validate-devices.js';
import { validateHotplugDisks } from './hotplug-volume.js';
import { validateDomainCore } from './validate-domain.js';
import { validateClock, validateFeatures } from './validate-features.js';
import { validateMetadata } from './validate-metadata.js';
import { validateNetworks } from './validate-network.js';
import { resolveValidateOptions, type ValidateOptions } from './validate-options.js';
import { validateReferences } from './validate-references.js';
import { validateSpecText } from './validate-text.js';
import { validateVolumes } from './validate-volumes.js';

// Grace periods become timers in the handler, the launcher and the kubelet; Node.js keeps a
// timer of at most 2^31-1 ms (24.8 days) and fires a longer one at once. 2,000,000 s (23 days)
// leaves room for the pod's own margin on top.
export const MAX_GRACE_PERIOD_SECONDS = 2_000_000;

function validateTypeMeta(v: Validation, raw: Record<string, unknown>): void {
  const apiVersion = v.string('apiVersion', raw['apiVersion'], true);
  if (apiVersion !== undefined && !VMI_ACCEPTED_API_VERSIONS.includes(apiVersion)) {
    v.add('apiVersion', 'NotSupported', `${JSON.stringify(apiVersion)} is not supported; accepted: ${VMI_ACCEPTED_API_VERSIONS.join(', ')}`);
  }
  const kind = v.string('kind', raw['kind'], true);
  if (kind !== undefined && kind !== VMI_KIND) {
    v.add('kind', 'Invalid', `${JSON.stringify(kind)} is not ${VMI_KIND}`);
  }
}

function validateSpec(v: Validation, spec: Record<string, unknown>): void {
  const domain = v.object('spec.domain', spec['domain'], true);
  if (domain) {
    validateDomainCore(v, 'spec.domain', domain);
    validateFeatures(v, 'spec.domain.features', domain['features']);
    validateClock(v, 'spec.domain.clock', domain['clock']);
    const devices = v.object('spec.domain.devices', domain['devices'], true);
    if (devices) validateDevices(v, 'spec.domain.devices', devices);
  }
  validateVolumes(v, 'spec.volumes', spec['volumes']);
  validateNetworks(v, 'spec.networks', spec['networks']);
  // KubeVirt's defaulting writes the node architecture; podvirt runs x86-64 guests only.
  v.oneOf('spec.architecture', spec['architecture'], ['amd64']);
  v.integer('spec.terminationGracePeriodSeconds', spec['terminationGracePeriodSeconds'], 0, MAX_GRACE_PERIOD_SECONDS);
  v.stringMap('spec.nodeSelector', spec['nodeSelector']);
  v.oneOf('spec.evictionStrategy', spec['evictionStrategy'], EVICTION_STRATEGIES);
  validateReferences(v, spec);
  validateHotplugDisks(v, spec);
}

// Status is written by podvirt itself; only its shape is checked, so a corrupt status cannot
// crash a reader further down.
function validateStatus(v: Validation, value: unknown): void {
  const status = v.object('status', value);
  if (!status) return;
  // An empty phase is what a VMI has before anyone processed it.
  if (status['phase'] !== '') v.oneOf('status.phase', status['phase'], VMI_PHASES.filter((phase) => phase !== ''));
  v.string('status.nodeName', status['nodeName']);
  v.string('status.evacuationNodeName', status['evacuationNodeName']);
  v.array('status.conditions', status['conditions'])?.forEach((item, i) => {
    const at = indexPath('status.conditions', i);
    const condition = v.object(at, item, true);
    if (!condition) return;
    v.string(fieldPath(at, 'type'), condition['type'], true);
    v.oneOf(fieldPath(at, 'status'), condition['status'], ['True', 'False', 'Unknown']);
  });
}

export function validateVmi(raw: unknown, options?: ValidateOptions): FieldError[] {
  const v = new Validation(resolveValidateOptions(options));
  if (!isRawObject(raw)) {
    v.add('', 'TypeInvalid', `a VirtualMachineInstance must be a JSON object, got ${describe(raw)}`);
    return v.errors;
  }
  validateTypeMeta(v, raw);
  const metadata = v.object('metadata', raw['metadata'], true);
  if (metadata) {
    validateMetadata(v, metadata);
    validateAnnotations(v, metadata);
  }
  const spec = v.object('spec', raw['spec'], true);
  if (spec) validateSpec(v, spec);
  validateStatus(v, raw['status']);
  validateSpecText(v, raw);
  return v.errors;
}
