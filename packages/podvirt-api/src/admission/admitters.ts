// What each webhook decides, through @podvirt/api's one decode path: the VMI through checkVmi /
// applyDefaults (what decodeVmi does in the controller and the handler, with the same options),
// the VM through validateVm, the migration through validateMigration. So a VMI the controller
// would refuse is refused here, with the same field paths.

import { applyDefaults, checkVmi, isHotplugEdit, jsonEqual, validateMigration, validateVm, type FieldError, type VirtualMachineInstance } from '@podvirt/api';
import { ALLOWED, invalid, type AdmissionRequest, type AdmissionResult } from './admission-review.js';

export type Admitter = (request: AdmissionRequest) => AdmissionResult;

/** What a webhook path serves: the eviction webhook reads the API server, so it answers a promise. */
export type WebhookAdmitter = (request: AdmissionRequest) => AdmissionResult | Promise<AdmissionResult>;

const VMI = 'VirtualMachineInstance';

function nameOf(request: AdmissionRequest): string | undefined {
  const meta = (request.object as { metadata?: { name?: unknown } } | undefined)?.metadata;
  return typeof meta?.name === 'string' && meta.name !== '' ? meta.name : request.name;
}

function specOf(object: unknown): unknown {
  return (object as { spec?: unknown } | undefined)?.spec;
}

/**
 * Only `spec.terminationGracePeriodSeconds` changed, and not upwards: what a forced stop writes
 * before the VMI is deleted (`podvirtctl stop vm --force --grace-period N`, as KubeVirt's stop
 * subresource does with its gracePeriod).
 */
function isGracePeriodShortening(oldSpec: unknown, newSpec: unknown): boolean {
  if (typeof oldSpec !== 'object' || oldSpec === null || typeof newSpec !== 'object' || newSpec === null) return false;
  const { terminationGracePeriodSeconds: before, ...oldRest } = oldSpec as Record<string, unknown>;
  const { terminationGracePeriodSeconds: after, ...newRest } = newSpec as Record<string, unknown>;
  return typeof after === 'number' && (typeof before !== 'number' || after <= before) && jsonEqual(oldRest, newRest);
}

/**
 * A VMI on CREATE is checked whole; on UPDATE its spec may not change (KubeVirt's rule: a
 * running VMI changes through its VM or its subresources, not by editing the spec), except by
 * hot-plugging a volume (podvirtctl addvolume / removevolume) or by shortening its grace period
 * for a forced stop: then the new spec is checked whole.
 */
export const validateVmiAdmission: Admitter = (request) => {
  if (request.operation === 'CREATE') {
    const errors = checkVmi(request.object);
    return errors.length === 0 ? ALLOWED : invalid(VMI, nameOf(request), errors);
  }
  if (request.operation === 'UPDATE' && !jsonEqual(specOf(request.object), specOf(request.oldObject))) {
    if (isHotplugEdit(specOf(request.oldObject), specOf(request.object)) || isGracePeriodShortening(specOf(request.oldObject), specOf(request.object))) {
      const errors = checkVmi(request.object);
      return errors.length === 0 ? ALLOWED : invalid(VMI, nameOf(request), errors);
    }
    return invalid(VMI, nameOf(request), [{ field: 'spec', type: 'Forbidden', message: 'the spec of a VirtualMachineInstance cannot change after creation, except by hot-plugging a volume (podvirtctl addvolume / removevolume) or shortening terminationGracePeriodSeconds for a forced stop (podvirtctl stop vm --force)' }]);
  }
  return ALLOWED;
};

/**
 * The defaults written into the stored VMI on CREATE. A VMI that would not decode is let through
 * unchanged: the validating webhook, which runs after, refuses it naming every field. A VMI
 * named by generateName has no name yet here (the API server makes it later), and the firmware
 * UUID derives from the name: it is left to the controller's decode.
 */
export const mutateVmiAdmission: Admitter = (request) => {
  if (request.operation !== 'CREATE' || nameOf(request) === undefined) return ALLOWED;
  if (checkVmi(request.object).length > 0) return ALLOWED;
  const defaulted = applyDefaults(request.object as VirtualMachineInstance);
  if (jsonEqual(defaulted.spec, specOf(request.object))) return ALLOWED;
  return { allowed: true, patch: [{ op: 'replace', path: '/spec', value: defaulted.spec }] };
};

export const validateVmAdmission: Admitter = (request) => {
  if (request.operation !== 'CREATE' && request.operation !== 'UPDATE') return ALLOWED;
  const errors: FieldError[] = validateVm(request.object);
  return errors.length === 0 ? ALLOWED : invalid('VirtualMachine', nameOf(request), errors);
};

export const validateMigrationAdmission: Admitter = (request) => {
  if (request.operation !== 'CREATE') return ALLOWED;
  const errors = validateMigration(request.object);
  return errors.length === 0 ? ALLOWED : invalid('VirtualMachineInstanceMigration', nameOf(request), errors);
};

/** KubeVirt's path of the eviction webhook (its admitter needs the API server: `podEvictionAdmitter`). */
export const POD_EVICTION_PATH = '/pod-eviction-validate';

/** The webhook paths (KubeVirt's virt-api names) and what each decides, but the eviction webhook. */
export const ADMISSION_PATHS: Readonly<Record<string, Admitter>> = {
  '/virtualmachineinstances-validate': validateVmiAdmission,
  '/virtualmachineinstances-mutate': mutateVmiAdmission,
  '/virtualmachines-validate': validateVmAdmission,
  '/migration-validate': validateMigrationAdmission,
};
