import type { DefaultedVmi, Timer } from '@podvirt/api';
import { el, type XmlElement } from './xml.js';

// KubeVirt's timer names → libvirt's (`kvm` is libvirt's kvmclock, `hyperv` its hypervclock).
const TIMERS: Readonly<Record<keyof Timer, string>> = { rtc: 'rtc', pit: 'pit', kvm: 'kvmclock', hpet: 'hpet', hyperv: 'hypervclock' };

/** `<clock>`: UTC (with an optional offset) or a named timezone, plus the timers asked for. */
export function convertClock(vmi: DefaultedVmi): XmlElement {
  const clock = vmi.spec.domain.clock;
  const offset = clock?.utc?.offsetSeconds;
  const attrs =
    clock?.timezone !== undefined
      ? { offset: 'timezone', timezone: clock.timezone }
      : { offset: 'utc', adjustment: offset !== undefined ? String(offset) : undefined };
  const timers = Object.entries(clock?.timer ?? {}).map(([name, t]) => {
    const timer = t as { present?: boolean; tickPolicy?: string; track?: string };
    const present = timer.present === undefined ? undefined : timer.present ? 'yes' : 'no';
    return el('timer', { name: TIMERS[name as keyof Timer], present, tickpolicy: timer.tickPolicy, track: timer.track });
  });
  return el('clock', attrs, ...timers);
}
