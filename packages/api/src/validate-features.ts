// spec.domain.features and spec.domain.clock.

import { fieldPath, type RawObject, type Validation } from './validate-context.js';

// TZ database names: letters, digits and `_+-`, in `/`-separated parts (`America/New_York`).
const TIMEZONE_RE = /^[A-Za-z0-9_+-]+(\/[A-Za-z0-9_+-]+)*$/;
// A guest clock may be offset by at most a century either way; more is certainly a mistake.
const MAX_CLOCK_OFFSET_SECONDS = 100 * 366 * 24 * 3600;

function validateFeatureState(v: Validation, path: string, value: unknown): RawObject | undefined {
  const feature = v.object(path, value);
  if (feature) v.boolean(fieldPath(path, 'enabled'), feature['enabled']);
  return feature;
}

export function validateFeatures(v: Validation, path: string, value: unknown): void {
  const features = v.object(path, value);
  if (!features) return;
  validateFeatureState(v, fieldPath(path, 'acpi'), features['acpi']);
  const apic = validateFeatureState(v, fieldPath(path, 'apic'), features['apic']);
  if (apic) v.boolean(fieldPath(path, 'apic.endOfInterrupt'), apic['endOfInterrupt']);
  validateFeatureState(v, fieldPath(path, 'smm'), features['smm']);
}

const TIMERS: Readonly<Record<string, readonly string[] | undefined>> = {
  hpet: ['delay', 'catchup', 'merge', 'discard'],
  pit: ['delay', 'catchup', 'discard'],
  rtc: ['delay', 'catchup'],
  kvm: undefined,
  hyperv: undefined,
};

function validateTimer(v: Validation, path: string, value: unknown): void {
  const timer = v.object(path, value);
  if (!timer) return;
  for (const [name, policies] of Object.entries(TIMERS)) {
    const at = fieldPath(path, name);
    const entry = v.object(at, timer[name]);
    if (!entry) continue;
    v.boolean(fieldPath(at, 'present'), entry['present']);
    if (policies) v.oneOf(fieldPath(at, 'tickPolicy'), entry['tickPolicy'], policies);
    if (name === 'rtc') v.oneOf(fieldPath(at, 'track'), entry['track'], ['guest', 'wall']);
  }
}

export function validateClock(v: Validation, path: string, value: unknown): void {
  const clock = v.object(path, value);
  if (!clock) return;
  const utc = v.object(fieldPath(path, 'utc'), clock['utc']);
  if (utc) {
    v.integer(fieldPath(path, 'utc.offsetSeconds'), utc['offsetSeconds'], -MAX_CLOCK_OFFSET_SECONDS, MAX_CLOCK_OFFSET_SECONDS);
  }
  const timezone = v.string(fieldPath(path, 'timezone'), clock['timezone']);
  if (timezone !== undefined && !TIMEZONE_RE.test(timezone)) {
    v.add(fieldPath(path, 'timezone'), 'Invalid', `${JSON.stringify(timezone)} is not a time zone name such as "Europe/Berlin"`);
  }
  if (utc && timezone !== undefined) {
    v.add(path, 'Invalid', 'set at most one of utc and timezone: the guest clock has one offset');
  }
  validateTimer(v, fieldPath(path, 'timer'), clock['timer']);
}
