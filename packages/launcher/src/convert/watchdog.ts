import { InvalidVmiError } from '../errors.js';
import type { Vmi } from '../vmi.js';
import { el, type XmlElement } from './xml.js';

const ACTIONS = new Set(['poweroff', 'reset', 'shutdown']);

/** An i6300esb watchdog; `reset` is KubeVirt's default action. */
export function convertWatchdog(vmi: Vmi): XmlElement[] {
  const wd = vmi.spec?.domain?.devices?.watchdog;
  if (wd === undefined) return [];
  const field = 'spec.domain.devices.watchdog';
  if (typeof wd.name !== 'string' || wd.name === '') throw new InvalidVmiError(`${field}.name`, 'required');
  if (wd.i6300esb === undefined) throw new InvalidVmiError(field, 'a watchdog model is required (supported: i6300esb)');
  const action = wd.i6300esb.action ?? 'reset';
  if (!ACTIONS.has(action)) throw new InvalidVmiError(`${field}.i6300esb.action`, `unsupported action ${JSON.stringify(action)} (supported: ${[...ACTIONS].join(', ')})`);
  return [el('watchdog', { model: 'i6300esb', action }, el('alias', { name: `ua-${wd.name}` }))];
}
