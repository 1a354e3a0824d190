import type { cmd } from '@podvirt/proto';
import { formatBytes } from './bytes.js';
import { renderTable } from './table.js';

const HEADERS = ['DISK', 'MOUNTPOINT', 'TYPE', 'USED', 'TOTAL', 'USE%'];

// `podvirtctl fslist`: what the guest agent reports as mounted, in its order.
export function renderFilesystemList(list: cmd.GuestFilesystemList): string {
  if (list.filesystems.length === 0) return 'The guest agent reports no mounted filesystems.\n';
  const rows = list.filesystems.map((fs) => [
    fs.diskName === '' ? '<none>' : fs.diskName,
    fs.mountPoint,
    fs.fileSystemType,
    formatBytes(fs.usedBytes),
    formatBytes(fs.totalBytes),
    fs.totalBytes > 0 ? `${Math.round((fs.usedBytes / fs.totalBytes) * 100)}%` : '-',
  ]);
  return renderTable(HEADERS, rows);
}
