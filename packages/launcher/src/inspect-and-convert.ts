import type { DefaultedVmi } from '@podvirt/api';
import type { LauncherFlags } from './flags.js';
import type { KvmProbeResult } from './host/kvm-probe.js';
import { fileExists, inspectImages } from './prepare/container-disk-layout.js';
import type { PersistentDisks } from './prepare/persistent-disks.js';
import type { NetworkedVmi, PodNetworkSetup } from './network/pod-network-setup.js';
import { runTool } from './prepare/run-tool.js';
import type { ConverterContext } from './convert/context.js';
import type { NodeFacts } from './host/node-facts.js';
import { convertVmi, type ConvertedDomain } from './convert/convert-vmi.js';
import { decideDomainType, type DomainType } from './convert/hypervisor.js';
import { checkAgainstNode } from './convert/node-check.js';

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
    // The images are looked at (a qemu-img run each, no side effect) while the node's facts are
    // read, as the first Sync may come before the launcher's early read of them is done; what the
    // node lacks is still named first, and before anything is made or defined.
    const inspecting = inspectImages(vmi, flags.containerDiskDir, { exists: fileExists, format: imageFormat });
    inspecting.catch(() => undefined);
    const facts = await nodeFacts?.(domainType, vmi.spec.domain.machine.type);
    if (facts !== undefined) checkAgainstNode(vmi, facts, domainType);
    const images = await inspecting;
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
