import type { LauncherFlags } from '../flags.js';
import type { KvmProbeResult } from '../host/kvm-probe.js';
import { fileExists, inspectImages } from '../prepare/container-disk-layout.js';
import type { HostDisks } from '../prepare/host-disks.js';
import { runTool } from '../prepare/run-tool.js';
import type { Vmi } from '../vmi.js';
import type { ConverterContext } from './context.js';
import { convertVmi, refuseUnsupported, type ConvertedDomain } from './convert-vmi.js';
import { decideDomainType } from './hypervisor.js';

async function imageFormat(path: string): Promise<string> {
  const out = await runTool('qemu-img', ['info', '--output=json', path]);
  return String((JSON.parse(out) as { format?: string }).format ?? '');
}

/**
 * The impure half in front of the pure converter: refuse unsupported fields first (so a
 * missing image never hides them), find the image files, open the host disks confined to
 * their directories, decide the domain type, convert.
 */
export function inspectAndConvert(
  flags: LauncherFlags,
  kvm: KvmProbeResult,
  libvirtRunDir: string,
  emulator: string,
  hostDisks: HostDisks,
): (vmi: Vmi) => Promise<ConvertedDomain> {
  return async (vmi) => {
    refuseUnsupported(vmi);
    const images = await inspectImages(vmi, flags.containerDiskDir, { exists: fileExists, format: imageFormat });
    const ctx: ConverterContext = {
      domainType: decideDomainType(kvm.usable, flags.allowEmulation),
      privateDir: flags.privateDir,
      ephemeralDiskDir: flags.ephemeralDiskDir,
      libvirtRunDir,
      containerDisks: images.containerDisks,
      ...(images.kernelBoot ? { kernelBoot: images.kernelBoot } : {}),
      hostDiskPrefixes: flags.hostDiskDirs,
      hostDisks: await hostDisks.resolve(vmi),
      emulator,
    };
    return convertVmi(vmi, ctx);
  };
}
