// What the launcher pod needs on top of guest RAM. KubeVirt adds a measured per-process
// figure plus per-device terms to the compute container's request; podvirt does the same with
// its own processes, whose fixed part differs (the monitor and the launcher are Node.js).
//
// overhead = fixed processes
//          + guest memory / 512              (page tables, as KubeVirt counts them)
//          + 8 MiB × vCPUs                   (qemu's per-vCPU thread and state)
//          + 32 MiB if a graphics device is auto-attached (video RAM)
//          + 64 MiB when emulation is allowed (TCG's translation-block cache, which KVM never fills)

const MI = 1024n * 1024n;

export const OVERHEAD_MI = {
  /** Node.js PID 1 reaper: the V8 heap floor of an idle process. */
  monitor: 50n,
  /** Node.js launcher: gRPC server, libvirt client, converter. */
  launcher: 120n,
  /** KubeVirt's measured figure for the same daemon. */
  virtqemud: 40n,
  /** qemu itself, without guest RAM, as KubeVirt measures it. */
  qemu: 50n,
  perVcpu: 8n,
  video: 32n,
  emulation: 64n,
} as const;

export const FIXED_OVERHEAD_BYTES =
  (OVERHEAD_MI.monitor + OVERHEAD_MI.launcher + OVERHEAD_MI.virtqemud + OVERHEAD_MI.qemu) * MI;

export interface OverheadInput {
  readonly guestMemoryBytes: bigint;
  readonly vcpus: number;
  readonly graphics: boolean;
  readonly allowEmulation: boolean;
}

export function memoryOverheadBytes(input: OverheadInput): bigint {
  let total = FIXED_OVERHEAD_BYTES;
  total += (input.guestMemoryBytes + 511n) / 512n;
  total += BigInt(Math.max(1, input.vcpus)) * OVERHEAD_MI.perVcpu * MI;
  if (input.graphics) total += OVERHEAD_MI.video * MI;
  if (input.allowEmulation) total += OVERHEAD_MI.emulation * MI;
  return total;
}
