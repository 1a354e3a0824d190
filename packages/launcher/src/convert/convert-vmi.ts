import { VmiInvalidError, type DefaultedVmi } from '@podvirt/api';
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
import { convertInterfaces } from './interfaces.js';
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

/** The API lets a VMI carry generateName alone; a launcher serves one named, placed VMI. */
function identity(vmi: DefaultedVmi): { namespace: string; name: string; uid: string } {
  const { namespace, name, uid } = vmi.metadata;
  if (!namespace) throw VmiInvalidError.at('metadata.namespace', 'Required', 'a launcher serves a VMI in a namespace');
  if (!name) throw VmiInvalidError.at('metadata.name', 'Required', 'a launcher serves a named VMI');
  if (!uid) throw VmiInvalidError.at('metadata.uid', 'Required', 'a launcher serves a VMI the API server has stored');
  return { namespace, name, uid };
}

/**
 * Decoded VMI → libvirt domain XML. Pure: it reads only the VMI and the context, and lists the
 * file side effects (overlays, ISOs, empty disks) for the prepare step instead of doing them.
 * It trusts decodeVmi for the VMI's validity and defaults; what it still refuses, as a
 * VmiInvalidError naming the field, is what only the launcher can know (its identity, the
 * files it found, the host directories it may open).
 */
export function convertVmi(vmi: DefaultedVmi, ctx: ConverterContext): ConvertedDomain {
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
      ...convertConsole(vmi, ctx, uid),
      ...convertGraphics(vmi, ctx, uid),
      ...convertInterfaces(vmi.spec.domain.devices?.interfaces, ctx.interfaces ?? new Map()),
      ...convertRng(vmi),
      ...convertWatchdog(vmi),
      convertMemballoon(vmi),
    ),
  );
  return { name: domainName(namespace, name), domain, xml: `${renderXml(domain)}\n`, prepare: disks.prepare };
}
