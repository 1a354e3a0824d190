import type { cmd } from '@podvirt/proto';
import type { GuestInfoParams } from './domain-connection.js';

const str = (p: GuestInfoParams, key: string): string => (p[key] === undefined ? '' : String(p[key]));
const num = (p: GuestInfoParams, key: string): number => (p[key] === undefined ? 0 : Number(p[key]));
const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i);

/** libvirt's guest-info typed parameters (`os.*`, `user.N.*`, `fs.N.*`, `if.N.*`) in the proto's shapes. */
export function parseOsInfo(p: GuestInfoParams): cmd.GuestOsInfo {
  return {
    name: str(p, 'os.name'), kernelRelease: str(p, 'os.kernel-release'), version: str(p, 'os.version'),
    prettyName: str(p, 'os.pretty-name'), versionId: str(p, 'os.version-id'), kernelVersion: str(p, 'os.kernel-version'),
    machine: str(p, 'os.machine'), id: str(p, 'os.id'),
  };
}

export function parseUsers(p: GuestInfoParams): cmd.GuestUser[] {
  return range(num(p, 'user.count')).map((i) => ({
    userName: str(p, `user.${i}.name`), domain: str(p, `user.${i}.domain`),
    // libvirt reports milliseconds since the epoch; KubeVirt's loginTime is seconds.
    loginTime: num(p, `user.${i}.login-time`) / 1000,
  }));
}

export function parseFilesystems(p: GuestInfoParams): cmd.GuestFilesystem[] {
  return range(num(p, 'fs.count')).map((i) => ({
    diskName: str(p, `fs.${i}.name`), mountPoint: str(p, `fs.${i}.mountpoint`), fileSystemType: str(p, `fs.${i}.fstype`),
    usedBytes: num(p, `fs.${i}.used-bytes`), totalBytes: num(p, `fs.${i}.total-bytes`),
    disks: range(num(p, `fs.${i}.disk.count`)).map((d) => str(p, `fs.${i}.disk.${d}.alias`)).filter((a) => a !== ''),
  }));
}

export function parseInterfaces(p: GuestInfoParams): cmd.GuestInterface[] {
  return range(num(p, 'if.count')).map((i) => ({
    name: str(p, `if.${i}.name`), mac: str(p, `if.${i}.hwaddr`),
    ipAddresses: range(num(p, `if.${i}.addr.count`)).map((a) => str(p, `if.${i}.addr.${a}.addr`)),
  }));
}

/** The agent's own `guest-info` answer: its version and the commands it offers. */
export function parseAgentInfo(json: string): { version: string; commands: cmd.GuestAgentCommand[] } {
  const parsed = JSON.parse(json) as { return?: { version?: string; supported_commands?: { name?: string; enabled?: boolean }[] } };
  const ret = parsed.return ?? {};
  return {
    version: ret.version ?? '',
    commands: (ret.supported_commands ?? []).map((c) => ({ name: c.name ?? '', enabled: c.enabled === true })),
  };
}

export function buildGuestInfo(p: GuestInfoParams, agent: { version: string; commands: cmd.GuestAgentCommand[] }, fsFreezeStatus: string): cmd.GuestInfo {
  return {
    guestAgentVersion: agent.version,
    supportedCommands: agent.commands,
    hostname: str(p, 'hostname'),
    os: parseOsInfo(p),
    timezone: p['timezone.name'] === undefined ? '' : `${str(p, 'timezone.name')}, ${num(p, 'timezone.offset')}`,
    users: parseUsers(p),
    filesystems: parseFilesystems(p),
    fsFreezeStatus,
  };
}
