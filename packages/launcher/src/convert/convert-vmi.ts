import { defaultVolumeDisks, findUnsupportedFields } from '@podvirt/api';
import { InvalidVmiError } from '../errors.js';
import type { Vmi } from '../vmi.js';
import { convertChannels } from './channels.js';
import { convertClock } from './clock.js';
import { convertConsole } from './console.js';
import type { ConverterContext } from './context.js';
import { convertCpu } from './cpu.js';
import { convertDisks } from './disks.js';
import { domainName } from './domain-name.js';
import { convertFeatures } from './features.js';
import { convertGraphics } from './graphics.js';
import { convertMemballoon } from './memballoon.js';
import { convertMemory } from './memory.js';
import { convertOs } from './os.js';
import type { PrepareStep } from './prepare-step.js';
import { convertRng } from './rng.js';
import { convertSysinfo } from './sysinfo.js';
import { convertWatchdog } from './watchdog.js';
import { el, renderXml, type XmlElement } from './xml.js';

export const KUBEVIRT_XMLNS = 'http://kubevirt.io';

export interface ConvertedDomain {
  readonly name: string;
  readonly domain: XmlElement;
  readonly xml: string;
  /** Files to create before the domain can start, in disk order. */
  readonly prepare: readonly PrepareStep[];
}

/** The allow-list of @podvirt/api: a KubeVirt field podvirt lacks is refused by its path, never dropped. */
export function refuseUnsupported(vmi: Vmi): void {
  const first = findUnsupportedFields(vmi)[0];
  if (first !== undefined) throw new InvalidVmiError(first.field, first.message);
}

/** A volume no disk shows gets one, as KubeVirt's defaulting gives it (on a copy). */
function withVolumeDisks(vmi: Vmi): Vmi {
  const copy = structuredClone(vmi);
  if (copy.spec) defaultVolumeDisks(copy.spec as Parameters<typeof defaultVolumeDisks>[0]);
  return copy;
}

function identity(vmi: Vmi): { namespace: string; name: string; uid: string } {
  const m = vmi.metadata;
  for (const key of ['name', 'namespace', 'uid'] as const) {
    const v = m?.[key];
    if (typeof v !== 'string' || v === '') throw new InvalidVmiError(`metadata.${key}`, 'required');
  }
  return { namespace: m?.namespace ?? '', name: m?.name ?? '', uid: m?.uid ?? '' };
}

/**
 * VMI → libvirt domain XML. Pure: it reads only the VMI and the context, and lists the file
 * side effects (overlays, ISOs, empty disks) for the prepare step instead of doing them. The
 * first field it cannot honour is thrown as an InvalidVmiError naming its path.
 */
export function convertVmi(given: Vmi, ctx: ConverterContext): ConvertedDomain {
  refuseUnsupported(given);
  const vmi = withVolumeDisks(given);
  if (vmi.spec?.architecture !== undefined && vmi.spec.architecture !== 'amd64') {
    throw new InvalidVmiError('spec.architecture', `only amd64 is supported, not ${JSON.stringify(vmi.spec.architecture)}`);
  }
  if (vmi.spec?.domain === undefined) throw new InvalidVmiError('spec.domain', 'required');
  const { namespace, name, uid } = identity(vmi);
  const sysinfo = convertSysinfo(vmi);
  const { vcpu, cpu } = convertCpu(vmi, ctx.domainType);
  const disks = convertDisks(vmi, ctx);
  const domain = el(
    'domain',
    { type: ctx.domainType },
    el('name', {}, domainName(namespace, name)),
    el('metadata', {}, el('kubevirt', { xmlns: KUBEVIRT_XMLNS }, el('uid', {}, uid))),
    convertMemory(vmi),
    vcpu,
    sysinfo,
    convertOs(vmi, ctx, sysinfo !== undefined),
    convertFeatures(vmi),
    cpu,
    convertClock(vmi),
    el('on_poweroff', {}, 'destroy'),
    el('on_reboot', {}, 'restart'),
    el('on_crash', {}, 'destroy'),
    el(
      'devices',
      {},
      el('emulator', {}, ctx.emulator),
      ...disks.disks,
      ...disks.controllers,
      ...convertChannels(),
      ...convertConsole(vmi, ctx),
      ...convertGraphics(vmi, ctx),
      ...convertRng(vmi),
      ...convertWatchdog(vmi),
      convertMemballoon(vmi),
    ),
  );
  return { name: domainName(namespace, name), domain, xml: `${renderXml(domain)}\n`, prepare: disks.prepare };
}
