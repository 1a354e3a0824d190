import { InvalidVmiError } from '../errors.js';
import type { Vmi } from '../vmi.js';
import { el, type XmlElement } from './xml.js';

// KubeVirt's timer names → libvirt's (`kvm` is libvirt's kvmclock, `hyperv` its hypervclock).
const TIMERS: Record<string, string> = { rtc: 'rtc', pit: 'pit', kvm: 'kvmclock', hpet: 'hpet', hyperv: 'hypervclock' };
const TICK_POLICIES = new Set(['delay', 'catchup', 'merge', 'discard']);

/** `<clock>`: UTC (with an optional offset) or a named timezone, plus the timers asked for. */
export function convertClock(vmi: Vmi): XmlElement {
  const clock = vmi.spec?.domain?.clock;
  const base = 'spec.domain.clock';
  if (clock?.utc !== undefined && clock.timezone !== undefined) {
    throw new InvalidVmiError(base, 'set either utc or timezone, not both');
  }
  const offset = clock?.utc?.offsetSeconds;
  if (offset !== undefined && !Number.isInteger(offset)) throw new InvalidVmiError(`${base}.utc.offsetSeconds`, 'must be an integer');
  const attrs =
    clock?.timezone !== undefined
      ? { offset: 'timezone', timezone: clock.timezone }
      : { offset: 'utc', adjustment: offset !== undefined ? String(offset) : undefined };
  const timers = Object.entries(clock?.timer ?? {}).map(([name, t]) => {
    const field = `${base}.timer.${name}`;
    const libvirtName = TIMERS[name];
    if (libvirtName === undefined) throw new InvalidVmiError(field, `unknown timer (supported: ${Object.keys(TIMERS).join(', ')})`);
    if (t.tickPolicy !== undefined && !TICK_POLICIES.has(t.tickPolicy)) {
      throw new InvalidVmiError(`${field}.tickPolicy`, `unsupported value ${JSON.stringify(t.tickPolicy)}`);
    }
    const present = t.present === undefined ? undefined : t.present ? 'yes' : 'no';
    return el('timer', { name: libvirtName, present, tickpolicy: t.tickPolicy, track: t.track });
  });
  return el('clock', attrs, ...timers);
}
