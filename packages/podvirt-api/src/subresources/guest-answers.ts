// The handler's guest-agent answers in KubeVirt's JSON, so virtctl and scripts written against
// KubeVirt read them: VirtualMachineInstanceGuestAgentInfo, …GuestOSUserList, …FileSystemList.

import type { cmd } from '@podvirt/proto';

const TYPE = { apiVersion: 'kubevirt.io/v1' } as const;

function user(u: cmd.GuestUser): object {
  return { userName: u.userName, domain: u.domain, loginTime: u.loginTime };
}

// KubeVirt's `disk` entries carry serial and bus, which the handler does not report: left out
// (the field is optional there).
function filesystem(f: cmd.GuestFilesystem): object {
  return { diskName: f.diskName, mountPoint: f.mountPoint, fileSystemType: f.fileSystemType, usedBytes: f.usedBytes, totalBytes: f.totalBytes };
}

export function guestAgentInfo(g: cmd.GuestInfo): object {
  const os = g.os;
  return {
    ...TYPE,
    kind: 'VirtualMachineInstanceGuestAgentInfo',
    guestAgentVersion: g.guestAgentVersion,
    supportedCommands: g.supportedCommands.map((c) => ({ name: c.name, enabled: c.enabled })),
    hostname: g.hostname,
    os: os === undefined ? {} : {
      name: os.name, kernelRelease: os.kernelRelease, version: os.version, prettyName: os.prettyName,
      versionId: os.versionId, kernelVersion: os.kernelVersion, machine: os.machine, id: os.id,
    },
    timezone: g.timezone,
    userList: g.users.map(user),
    fsInfo: { disks: g.filesystems.map(filesystem) },
    fsFreezeStatus: g.fsFreezeStatus,
  };
}

export function guestUserList(l: cmd.GuestUserList): object {
  return { ...TYPE, kind: 'VirtualMachineInstanceGuestOSUserList', metadata: {}, items: l.users.map(user) };
}

export function guestFilesystemList(l: cmd.GuestFilesystemList): object {
  return { ...TYPE, kind: 'VirtualMachineInstanceFileSystemList', metadata: {}, items: l.filesystems.map(filesystem) };
}
