import type { cmd } from '@podvirt/proto';

// `podvirtctl guestosinfo` as aligned "Key: value" lines.
export function renderGuestInfo(info: cmd.GuestInfo): string {
  const os = info.os;
  const enabled = info.supportedCommands.filter((command) => command.enabled).length;
  const pairs: [string, string][] = [
    ['Hostname', info.hostname],
    ['OS', os === undefined ? '' : os.prettyName || [os.name, os.version].filter((part) => part !== '').join(' ')],
    ['OS ID', os === undefined ? '' : [os.id, os.versionId].filter((part) => part !== '').join(' ')],
    ['Kernel', os === undefined ? '' : [os.kernelRelease, os.kernelVersion].filter((part) => part !== '').join(' ')],
    ['Machine', os?.machine ?? ''],
    ['Timezone', info.timezone],
    ['Agent version', info.guestAgentVersion],
    ['Agent commands', info.supportedCommands.length === 0 ? '' : `${enabled} enabled of ${info.supportedCommands.length}`],
    ['Filesystems', `${info.filesystems.length} mounted, ${info.fsFreezeStatus === 'frozen' ? 'frozen' : 'thawed'}`],
    ['Users', `${info.users.length} logged in`],
  ];
  const width = Math.max(...pairs.map(([key]) => key.length)) + 3;
  return pairs.map(([key, value]) => `${`${key}:`.padEnd(width)}${value === '' ? '<none>' : value}\n`).join('');
}
