import { kubeTime } from '@podvirt/api';
import type { cmd } from '@podvirt/proto';
import { renderTable } from './table.js';

const HEADERS = ['USER', 'DOMAIN', 'LOGIN TIME'];

// `podvirtctl userlist`. The agent reports login time as fractional seconds since the epoch;
// it is shown in UTC to the second.
export function renderUserList(list: cmd.GuestUserList): string {
  if (list.users.length === 0) return 'No users are logged in to the guest.\n';
  const rows = list.users.map((user) => [user.userName, user.domain === '' ? '<none>' : user.domain, loginTime(user.loginTime)]);
  return renderTable(HEADERS, rows);
}

function loginTime(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds <= 0) return '<unknown>';
  return kubeTime(Math.floor(seconds) * 1000);
}
