// Why the compute container has each capability: the launcher image (monitor as PID 1, as in
// its pod) boots the test guest from a STANDALONE_VMI under podman + runc, first with the nine
// capabilities the controller used to add, then with each one of them taken away in turn, then
// with exactly what the controller renders now; then what the controller renders under the
// runtime's default seccomp profile (the pod's seccompProfile RuntimeDefault: podman's default
// filter instead of Unconfined), and as a non-root user (uid 107, KubeVirt's qemu user, as its
// non-root launcher runs) with those capabilities and with none. The launcher's own start-up check is off
// (PODVIRT_CAPABILITY_CHECK=off) so that what really fails shows. Each row: did the guest boot
// (its ready marker on the serial console), the launcher's exit code after SIGTERM, and the
// first error the launcher or libvirt logged. NET_BIND_SERVICE matters only with a pod NIC,
// which needs the handler: for it, the launcher's DHCP port is bound in the same container.
//
// Run under the machine's VM lock, after scripts/images:
//   flock /tmp/podvirt-vm.lock node test/dist/bench/compute-capabilities.js [--run-as-only]
// (--run-as-only: the seccomp and non-root rows alone)
import { chmod, chown, copyFile, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { COMPUTE_CAPABILITIES } from '@podvirt/controller';
import { guestVmi, UID } from '../e2e/launcher-run.js';
import { podman } from '../testbed/container/podman.js';
import { guestImage, type GuestImage } from '../testbed/index.js';

const IMAGE = 'localhost/podvirt/launcher:0.1.0';
const BEFORE = ['NET_BIND_SERVICE', 'SYS_NICE', 'CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'SETUID', 'SETGID', 'SETPCAP', 'KILL'];
const BOOT_DEADLINE_MS = 90_000;
// What libvirt always says in a container without D-Bus, udev, dmidecode's /dev/mem or KVM.
const NOISE = /system bus|dmi|dmidecode|\/dev\/kvm|dnsmasq|End of file|cgroup controller|DBus|Failed to terminate process/;

interface Row { readonly caps: string; readonly booted: boolean; readonly exit: string; readonly error: string }

/** How the container runs besides its capabilities. */
interface RunAs {
  /** `unconfined` (the kubelet's default without a seccompProfile) or the runtime's `default` filter. */
  readonly seccomp: 'unconfined' | 'default';
  /** `uid:gid` for a non-root run; the directories the pod would give it are made its own. */
  readonly user?: string;
}

const UNCONFINED: RunAs = { seccomp: 'unconfined' };
/** KubeVirt's non-root launcher runs as the qemu user, 107. */
const NON_ROOT_USER = '107:107';

async function containerDisks(guest: GuestImage, dir: string): Promise<string> {
  const cdisks = join(dir, 'container-disks');
  await mkdir(join(cdisks, 'kernel-boot', 'boot'), { recursive: true });
  await mkdir(join(cdisks, 'data'), { recursive: true });
  await copyFile(guest.kernel, join(cdisks, 'kernel-boot', 'boot', 'vmlinuz'));
  await copyFile(guest.initrd, join(cdisks, 'kernel-boot', 'boot', 'initrd.img'));
  await copyFile(guest.dataDisk, join(cdisks, 'data', 'disk.img'));
  return cdisks;
}

function firstError(logs: string): string {
  for (const line of logs.split('\n')) {
    if (!line.startsWith('{')) continue;
    const l = JSON.parse(line) as { level?: number; msg?: string; err?: { message?: string } };
    const text = l.err?.message ?? l.msg ?? '';
    if ((l.level ?? 0) >= 50 && !NOISE.test(text)) return text.replace(/\s+/g, ' ').slice(0, 160);
  }
  return '';
}

async function bootWith(caps: readonly string[], guest: GuestImage, cdisks: string, dir: string, label: string, how: RunAs = UNCONFINED): Promise<Row> {
  const run = await mkdtemp(join(dir, 'run-'));
  const mounts = { share: '/var/run/kubevirt', private: '/var/run/kubevirt-private', ephemeral: '/var/run/kubevirt-ephemeral-disks', libvirt: '/var/run/libvirt' };
  for (const name of Object.keys(mounts)) await mkdir(join(run, name));
  if (how.user !== undefined) {
    // The emptyDirs a pod's fsGroup would give the user; the run dir itself must be passable.
    const [uid = 0, gid = 0] = how.user.split(':').map(Number);
    await chmod(run, 0o755);
    for (const name of Object.keys(mounts)) await chown(join(run, name), uid, gid);
  }
  const vmi = guestVmi(guest);
  const id = (await podman([
    'run', '--detach', '--network', 'none', '--cap-drop', 'ALL', ...caps.flatMap((c) => ['--cap-add', c]),
    ...(how.seccomp === 'unconfined' ? ['--security-opt', 'seccomp=unconfined'] : []),
    ...(how.user === undefined ? [] : ['--user', how.user]),
    ...Object.entries(mounts).flatMap(([name, path]) => ['--volume', `${join(run, name)}:${path}`]),
    '--volume', `${cdisks}:${mounts.share}/container-disks:ro`,
    '--env', `STANDALONE_VMI=${JSON.stringify(vmi)}`, '--env', 'PODVIRT_CAPABILITY_CHECK=off',
    IMAGE, '--qemu-timeout', '60s', '--name', 'guest', '--namespace', 'e2e', '--uid', UID, '--allow-emulation', '--grace-period-seconds', '10',
  ])).trim();
  try {
    const serial = join(run, 'private', UID, 'virt-serial0-log');
    const deadline = Date.now() + BOOT_DEADLINE_MS;
    let booted = false;
    while (Date.now() < deadline) {
      if ((await readFile(serial, 'utf8').catch(() => '')).includes(guest.readyMarker)) {
        booted = true;
        break;
      }
      if ((await podman(['inspect', '--format', '{{.State.Running}}', id])).trim() !== 'true') break;
      await delay(500);
    }
    await podman(['stop', '--time', '30', id], 'PODVIRT_CONTAINER_LEFTOVERS', 120_000);
    const exit = (await podman(['inspect', '--format', '{{.State.ExitCode}}', id])).trim();
    return { caps: label, booted, exit, error: firstError(await podman(['logs', id])) };
  } finally {
    await podman(['rm', '--force', '--time', '0', id]).catch(() => undefined);
  }
}

/** The launcher's DHCP server binds UDP port 67 in the pod's network namespace. */
async function bindPort67(caps: readonly string[], label: string): Promise<Row> {
  const script = "require('dgram').createSocket('udp4').on('error',(e)=>{console.error(e.code);process.exit(1)}).bind(67,'0.0.0.0',function(){console.log('bound');this.close()})";
  const out = await podman(['run', '--rm', '--network', 'none', '--cap-drop', 'ALL', ...caps.flatMap((c) => ['--cap-add', c]),
    '--entrypoint', '/usr/local/bin/node', IMAGE, '-e', script]).then((o) => o.trim(), (e: Error) => e.message.trim());
  return { caps: label, booted: out === 'bound', exit: out === 'bound' ? '0' : '1', error: out === 'bound' ? '' : `bind UDP 67: ${out}` };
}

async function main(runAsOnly: boolean): Promise<void> {
  const guest = guestImage();
  const dir = await mkdtemp(join(tmpdir(), 'podvirt-caps-bench-'));
  try {
    const cdisks = await containerDisks(guest, dir);
    const rows: Row[] = [];
    if (!runAsOnly) {
      rows.push(await bootWith(BEFORE, guest, cdisks, dir, 'all nine'));
      for (const cap of BEFORE) {
        rows.push(await bootWith(BEFORE.filter((c) => c !== cap), guest, cdisks, dir, `without ${cap}`));
        process.stderr.write(`${JSON.stringify(rows.at(-1))}\n`);
      }
    }
    rows.push(await bootWith(COMPUTE_CAPABILITIES, guest, cdisks, dir, `rendered (${COMPUTE_CAPABILITIES.join(' ')})`));
    rows.push(await bootWith(COMPUTE_CAPABILITIES, guest, cdisks, dir, 'rendered, seccomp RuntimeDefault', { seccomp: 'default' }));
    rows.push(await bootWith(COMPUTE_CAPABILITIES, guest, cdisks, dir, `rendered, non-root ${NON_ROOT_USER}, RuntimeDefault`, { seccomp: 'default', user: NON_ROOT_USER }));
    rows.push(await bootWith([], guest, cdisks, dir, `none, non-root ${NON_ROOT_USER}, RuntimeDefault`, { seccomp: 'default', user: NON_ROOT_USER }));
    if (!runAsOnly) {
      rows.push(await bindPort67(COMPUTE_CAPABILITIES, 'rendered: DHCP port'));
      rows.push(await bindPort67(COMPUTE_CAPABILITIES.filter((c) => c !== 'NET_BIND_SERVICE'), 'without NET_BIND_SERVICE: DHCP port'));
    }
    console.log('| capabilities | guest booted (port bound) | exit | first error |');
    console.log('|---|---|---|---|');
    for (const r of rows) console.log(`| ${r.caps} | ${r.booted ? 'yes' : 'no'} | ${r.exit} | ${r.error.replace(/\|/g, '\\|')} |`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

await main(process.argv.includes('--run-as-only'));
