import { execFile } from 'node:child_process';
import { constants } from 'node:fs';
import { access, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface KvmProbeResult {
  readonly usable: boolean;
  readonly reason: string;
}

export interface KvmProbeDeps {
  readonly deviceAccessible: () => Promise<boolean>;
  readonly cpuinfo: () => Promise<string>;
  /** Runs the probe firmware under KVM; resolves qemu's exit code (null when killed). */
  readonly runGuest: (firmware: Buffer) => Promise<number | null>;
}

// A 64 KiB "BIOS" whose reset vector (the last 16 bytes) writes 0x31 to the isa-debug-exit
// port and halts; qemu then exits with (0x31 << 1) | 1 = 99. Only a guest that really executed
// produces that code.
const EXIT_CODE = 99;
export function probeFirmware(): Buffer {
  const rom = Buffer.alloc(65536, 0xf4);
  Buffer.from([0xb0, 0x31, 0xe6, 0xf4, 0xf4, 0xeb, 0xfd]).copy(rom, 65536 - 16);
  return rom;
}

/**
 * Does KVM really run a guest here? `/dev/kvm` existing proves nothing: a paravirtual KVM
 * backend without VMX/SVM exposes the device, yet ordinary guests abort or hang on it. So:
 * the device must be usable, the CPU must advertise VMX or SVM, and a tiny guest must run to
 * its exit under `-accel kvm`.
 */
export async function probeKvm(deps: KvmProbeDeps = realKvmProbeDeps()): Promise<KvmProbeResult> {
  if (!(await deps.deviceAccessible())) return { usable: false, reason: '/dev/kvm is missing or not accessible' };
  if (!/^flags\s*:.*\b(vmx|svm)\b/m.test(await deps.cpuinfo())) return { usable: false, reason: 'the CPU advertises neither vmx nor svm' };
  const code = await deps.runGuest(probeFirmware());
  if (code !== EXIT_CODE) return { usable: false, reason: `a probe guest under KVM did not run to completion (exit ${String(code)})` };
  return { usable: true, reason: 'a probe guest ran under KVM' };
}

export function realKvmProbeDeps(qemu = '/usr/bin/qemu-system-x86_64'): KvmProbeDeps {
  return {
    deviceAccessible: () => access('/dev/kvm', constants.R_OK | constants.W_OK).then(() => true, () => false),
    cpuinfo: () => readFile('/proc/cpuinfo', 'utf8').catch(() => ''),
    runGuest: async (firmware) => {
      const dir = await mkdtemp(join(tmpdir(), 'podvirt-kvm-probe-'));
      try {
        const bios = join(dir, 'probe.bin');
        await writeFile(bios, firmware);
        const args = ['-machine', 'pc,accel=kvm', '-cpu', 'host', '-nodefaults', '-display', 'none', '-bios', bios, '-device', 'isa-debug-exit,iobase=0xf4,iosize=0x04'];
        return await new Promise<number | null>((resolve) => {
          execFile(qemu, args, { timeout: 5_000 }, (err) => {
            const code = err === null ? 0 : typeof err.code === 'number' ? err.code : null;
            resolve(code);
          });
        });
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
  };
}
