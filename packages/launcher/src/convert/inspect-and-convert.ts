import type { DefaultedVmi } from '@podvirt/api';
import type { LauncherFlags } from '../flags.js';
import type { KvmProbeResult } from '../host/kvm-probe.js';
import { fileExists, inspectImages } from '../prepare/container-disk-layout.js';
import type { PersistentDisks } from '../prepare/persistent-disks.js';
import type { NetworkedVmi, PodNetworkSetup } from '../network/pod-network-setup.js';
import { runTool } from '../prepare/run-tool.js';
import type { ConverterContext } from './context.js';
import type { NodeFacts } from '../host/node-facts.js';
import { convertVmi, type ConvertedDomain } from './convert-vmi.js';
import { decideDomainType, type DomainType } from './hypervisor.js';
import { checkAgainstNode } from './node-check.js';

async function imageFormat(path: string): Promise<string> {
  const out = await runTool('qemu-img', ['info', '--output=json', path]);
  return String((JSON.parse(out) as { format?: string }).format ?? '');
}

/**
 * The impure half in front of the pure converter: find the image files, open the host disks
 * (PVCs, host disks) confined to the pod's mounts, decide the domain type, convert. The VMI was decoded once,
 * by the Cmd server.
 */
export function inspectAndConvert(
  flags: LauncherFlags,
  kvm: KvmProbeResult,
  libvirtRunDir: string,
  emulator: string,
  persistentDisks: PersistentDisks,
  network: PodNetworkSetup,
  nodeFacts?: (domainType: DomainType, machine: string) => Promise<NodeFacts | undefined>,
): (vmi: DefaultedVmi) => Promise<ConvertedDomain> {
  return async (vmi) => {
    const domainType = decideDomainType(kvm.usable, flags.allowEmulation);
    // What the node lacks is named before images are looked at or anything is defined.
    const facts = await nodeFacts?.(domainType, vmi.spec.domain.machine.type);
    if (facts !== undefined) checkAgainstNode(vmi, facts, domainType);
    const images = await inspectImages(vmi, flags.containerDiskDir, { exists: fileExists, format: imageFormat });
    const ctx: ConverterContext = {
      domainType,
      privateDir: flags.privateDir,
      ephemeralDiskDir: flags.ephemeralDiskDir,
      libvirtRunDir,
      containerDisks: images.containerDisks,
      ...(images.kernelBoot ? { kernelBoot: images.kernelBoot } : {}),
      persistentDisks: await persistentDisks.resolve(vmi),
      emulator,
      interfaces: await network.resolve(vmi as NetworkedVmi),
    };
    return convertVmi(vmi, ctx);
  };
}
